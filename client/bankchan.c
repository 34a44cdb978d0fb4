// SPDX-License-Identifier: MIT
//
// bankchan.c — bank channels (proto/fftd.proto, StreamOpen's bank): the
// matched-filter bank's requests and replies over a SOCK_SEQPACKET socket
// of their own instead of NNG. A bank call's round trip through NNG wakes
// six or more threads of the two processes in turn (NNG's poller and task
// threads on each side); over a channel it wakes the daemon's channel
// thread and its device worker, then the calling thread. On the lent H200
// a 1,024-template call at 2^17 samples spent ~0.3 ms of its ~1.5 ms in
// NNG's hand-offs (bench/README.md, stop 21).
//
// The client keeps up to FFTD__MAX_BANK_CHANNELS channels, opened on first
// use, each carrying one request at a time, so that threads sharing a
// client each get one. Each channel has a shared buffer (fftd_buffer) that
// its requests name as their result_buffer: the daemon writes the peaks,
// triggers and series there and the reply is one small packet, whatever
// the results' size (a packet's size is bounded by the kernel's socket
// buffers; NNG would carry the results through two more copies). A call
// that finds no channel free, a client not on ipc://, a daemon without
// channels (refused once: not asked again) or no room for a result buffer
// goes through NNG as before, as does one whose results could take more
// than MAX_RESULTS. FFTD_BANK_CHANNEL=0 in the environment turns
// channels off (tests compare both paths).
//
// Threads: any; the pool is under c->bank_mtx, a channel is its caller's
// alone between fftd__bankch_take and fftd__bankch_release.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busypoll.h"
#include "client_impl.h"
#include "clock.h"

// A reply packet: a frame header and a reply without payload, whose
// message is at most 512 bytes (the daemon's), with room to spare; a
// longer packet is malformed.
#define REPLY_ROOM 4096
// A request whose results could take more goes through NNG, whose reply
// carries only what was found, rather than keep a buffer this large.
#define MAX_RESULTS ((size_t) 64 << 20)
// How long a channel goes without asking again for a result buffer that
// was refused (its calls meanwhile go through NNG).
#define RETRY_NS ((uint64_t) 1000000000)

// channels_setting reads FFTD_BANK_CHANNEL: "0" turns channels off.
static bool
channels_setting(void)
{
	const char *v = getenv("FFTD_BANK_CHANNEL");
	return v == NULL || strcmp(v, "0") != 0;
}

// busy_poll_setting reads FFTD_BUSY_POLL_US: how long a call polls its
// channel for the reply before it sleeps in recv (busypoll.h; unset or
// "auto": on where the host has CPUs to spare; 0: off).
static uint64_t
busy_poll_setting(void)
{
	const char *v  = getenv("FFTD_BUSY_POLL_US");
	int64_t     us = fftd__busy_poll_auto_us(1);
	if (v != NULL && strcmp(v, "auto") != 0) {
		char *end;
		long  x = strtol(v, &end, 10);
		us      = end != v && *end == '\0' && x >= 0
		         ? (x < FFTD__BUSY_POLL_MAX_US ? x : FFTD__BUSY_POLL_MAX_US)
		         : us;
	}
	return (uint64_t) us * 1000u;
}

// chan_open asks the daemon for a bank channel; ch gets its end and a
// receive buffer.
static int
chan_open(fftd_client *c, fftd__bankch *ch)
{
	ch->buf = malloc(REPLY_ROOM);
	if (ch->buf == NULL) {
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	Fftd__Wire__StreamOpen so = FFTD__WIRE__STREAM_OPEN__INIT;
	so.bank                   = true;
	ch->busy_ns               = busy_poll_setting();
	int rv                    = fftd__chan_open(c, &so, &ch->fd);
	if (rv != FFTD_OK) {
		free(ch->buf);
		ch->buf = NULL;
	}
	return rv;
}

// result_room makes channel ch's result buffer hold bytes bytes (a new,
// larger one if need be). After a refusal (the client's or its user's
// buffer limit, the daemon's memory) it is not asked for again before
// RETRY_NS has passed: each try is a round trip and a refused request.
static int
result_room(fftd_client *c, fftd__bankch *ch, size_t bytes)
{
	if (ch->res != NULL && fftd_buffer_size(ch->res) >= bytes) {
		return FFTD_OK;
	}
	uint64_t now = fftd__mono_ns();
	if (now < ch->res_retry_ns) {
		return FFTD_ELIMIT;
	}
	fftd_buffer_destroy(ch->res);
	ch->res = NULL;
	// Rounded up, so that slightly larger requests reuse it.
	size_t want      = bytes < 65536 ? 65536 : bytes + bytes / 4;
	int    rv        = fftd_buffer_create(c, want, &ch->res);
	ch->res_retry_ns = rv == FFTD_OK ? 0 : now + RETRY_NS;
	return rv;
}

// fftd__bankch_take lends the caller a bank channel for one request whose
// results take at most reply_max bytes: its index, or -1 when the request
// goes through NNG.
int
fftd__bankch_take(fftd_client *c, size_t reply_max)
{
	if (!c->ipc || reply_max > MAX_RESULTS || !channels_setting()) {
		return -1;
	}
	pthread_mutex_lock(&c->bank_mtx);
	int k = -1;
	for (int i = 0; i < c->nbank && k < 0; i++) {
		if (!c->bank[i].busy && c->bank[i].fd >= 0) {
			k = i;
		}
	}
	bool open = k < 0 && !c->bank_off && c->nbank < FFTD__MAX_BANK_CHANNELS;
	if (open) {
		k                       = c->nbank++;
		c->bank[k].fd           = -1;
		c->bank[k].buf          = NULL;
		c->bank[k].res          = NULL;
		c->bank[k].res_retry_ns = 0;
	}
	if (k >= 0) {
		c->bank[k].busy = true;
	}
	pthread_mutex_unlock(&c->bank_mtx);
	if (k < 0) {
		return -1;
	}
	// Opened and sized outside the lock: round trips and descriptor
	// hand-overs.
	int rv = open ? chan_open(c, &c->bank[k]) : FFTD_OK;
	if (rv != FFTD_OK) {
		pthread_mutex_lock(&c->bank_mtx);
		// Refused (an older daemon, no channel thread, the channel
		// limit) or failed: NNG from now on. The slot stays, closed.
		c->bank_off     = true;
		c->bank[k].busy = false;
		pthread_mutex_unlock(&c->bank_mtx);
		return -1;
	}
	if (result_room(c, &c->bank[k], reply_max) != FFTD_OK) {
		fftd__bankch_release(c, k, true); // no room now: NNG this time
		return -1;
	}
	return k;
}

// fftd__bankch_results is channel k's result buffer (the request's
// result_buffer) and its mapping here.
uint64_t
fftd__bankch_results(fftd_client *c, int k, void **addr)
{
	*addr = fftd_buffer_data(c->bank[k].res);
	return c->bank[k].res->id;
}

// fftd__bankch_release gives channel k back; broken (a transport failure
// or a timeout left it in an unknown state): closed, never lent again.
void
fftd__bankch_release(fftd_client *c, int k, bool ok)
{
	pthread_mutex_lock(&c->bank_mtx);
	if (!ok && c->bank[k].fd >= 0) {
		close(c->bank[k].fd);
		c->bank[k].fd = -1;
	}
	c->bank[k].busy = false;
	pthread_mutex_unlock(&c->bank_mtx);
}

// recv_reply waits up to the client's timeout for channel ch's reply,
// polling for it (MSG_DONTWAIT) for the first ch->busy_ns: a bank call's
// reply often comes within that, and the wake-up from recv costs more.
static int
recv_reply(fftd_client *c, fftd__bankch *ch, size_t *len)
{
	uint64_t t0      = fftd__mono_ns();
	bool     polling = ch->busy_ns > 0;
	for (;;) {
		ssize_t n = recv(
		    ch->fd, ch->buf, REPLY_ROOM, polling ? MSG_DONTWAIT : 0);
		if (n > 0) {
			if ((size_t) n >= REPLY_ROOM) {
				return fftd__set_error(FFTD_EPROTO,
				    "bank channel: a reply of %zd bytes or "
				    "more",
				    n);
			}
			*len = (size_t) n;
			return FFTD_OK;
		}
		if (n == 0) {
			return fftd__set_error(FFTD_ECLOSED,
			    "bank channel: the daemon closed it (session "
			    "ended)");
		}
		if (errno == EINTR) {
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			return fftd__set_error(FFTD_ESYSERR + errno,
			    "bank channel: recv: %s", strerror(errno));
		}
		if (polling) {
			polling = fftd__mono_ns() - t0 < ch->busy_ns;
			fftd__cpu_relax();
			continue;
		}
		// SO_RCVTIMEO expired: the client's timeout, measured here.
		uint64_t waited = (fftd__mono_ns() - t0) / 1000000u;
		if (c->timeout >= 0 && waited >= (uint64_t) c->timeout) {
			return fftd__set_error(FFTD_ETIMEDOUT,
			    "no answer from the daemon on the bank channel in "
			    "%d ms",
			    (int) c->timeout);
		}
	}
}

// fftd__bankch_call sends req on channel k and waits for its reply: on
// FFTD_OK *rp is the unpacked reply (status OK) and f its frame (no
// payload: the results are in the channel's result buffer). Else
// the transport, decoding or reply's own error (the last error says
// which); *unsent tells that the request never left (the caller then sends
// it through NNG), *broken that the channel must be closed.
int
fftd__bankch_call(fftd_client *c, int k, const Fftd__Wire__Request *req,
    Fftd__Wire__Reply **rp, fftd__frame *f, bool *unsent, bool *broken)
{
	fftd__bankch *ch = &c->bank[k];
	nng_msg      *m  = NULL;
	*rp              = NULL;
	*unsent          = false;
	*broken          = false;
	int rv           = fftd__msg_build(&m, &req->base, 0, NULL);
	if (rv != FFTD_OK) {
		*unsent = true;
		return fftd__set_error(rv, "cannot build the request");
	}
	if (c->timeout >= 0) {
		struct timeval tv = { .tv_sec = c->timeout / 1000,
			.tv_usec              = (c->timeout % 1000) * 1000 };
		(void) setsockopt(
		    ch->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	ssize_t n = send(ch->fd, nng_msg_body(m), nng_msg_len(m), MSG_NOSIGNAL);
	size_t  want = nng_msg_len(m);
	nng_msg_free(m);
	if (n != (ssize_t) want) {
		*unsent = true;
		*broken = true;
		return fftd__set_error(FFTD_ESYSERR + errno,
		    "bank channel: send: %s", strerror(errno));
	}
	size_t len = 0;
	if ((rv = recv_reply(c, ch, &len)) != FFTD_OK) {
		*broken = true;
		return rv;
	}
	if ((rv = fftd__decode_frame(ch->buf, len, rp, f)) != FFTD_OK
	    || f->payload_len != 0) {
		if (*rp != NULL) {
			fftd__wire__reply__free_unpacked(*rp, NULL);
			*rp = NULL;
			rv  = fftd__set_error(FFTD_EPROTO,
			     "bank channel: a reply with a payload");
		}
		*broken = true;
		return rv;
	}
	if ((*rp)->status != FFTD_OK) { // the last error holds its message
		rv = (*rp)->status;
		fftd__wire__reply__free_unpacked(*rp, NULL);
		*rp = NULL;
		return rv;
	}
	return FFTD_OK;
}

// fftd__bankch_close_all closes every channel and destroys its result
// buffer (fftd_client_close, no call in flight: each buffer holds a
// reference to the client).
void
fftd__bankch_close_all(fftd_client *c)
{
	for (int i = 0; i < c->nbank; i++) {
		if (c->bank[i].fd >= 0) {
			close(c->bank[i].fd);
		}
		free(c->bank[i].buf);
		c->bank[i].buf = NULL;
		fftd_buffer_destroy(c->bank[i].res); // its client reference too
		c->bank[i].res = NULL;
	}
	c->nbank = 0;
}

// SPDX-License-Identifier: MIT
//
// stream.c — streams (fftd_stream_*): one plan, up to 64 executions in flight
// through the slots of one shared buffer (buffer.c). Submissions and
// answers go over the stream's own channel, a SOCK_SEQPACKET socket handed
// to the daemon (packets: common/streamchan.h), or, where the daemon offers
// none, through NNG as any execution (exec.c).

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_impl.h"
#include "clock.h"
#include "streamchan.h"

#define MAX_DEPTH 64

struct fftd_stream {
	const fftd_plan *plan;
	fftd_buffer     *buf;
	int              depth;
	size_t           in_off, slot; // output at in_off past a slot's start
	int              head;         // next slot to submit
	int              tail;         // oldest slot in flight
	int              pending;
	int64_t          deadline_us;
	int64_t          spin_ns; // waits poll without sleeping this long
	fftd_request    *req[MAX_DEPTH];
	// Stream channel (chan >= 0): submissions and answers over a socket
	// of the stream's own, not NNG; per slot, the submission's tag and,
	// once answered, its status.
	int      chan;
	int      broken; // the channel failed: this status for the rest
	uint64_t tag[MAX_DEPTH];
	int      status[MAX_DEPTH];
	bool     answered[MAX_DEPTH];
	char     why[MAX_DEPTH][232];       // fftd__chan_reply.msg
	fftd_stream_times times[MAX_DEPTH]; // per slot, as answered
	fftd_stream_times last;             // of the last successful wait
	bool              have_last;
};

// stream_chan_setting reads FFTD_STREAM_CHANNEL: 0 never, 2 required
// (fftd_stream_open fails instead of using NNG; for tests), else 1: when
// the daemon offers it.
static int
stream_chan_setting(void)
{
	const char *v = getenv("FFTD_STREAM_CHANNEL");
	if (v != NULL && strcmp(v, "0") == 0) {
		return 0;
	}
	return v != NULL && strcmp(v, "2") == 0 ? 2 : 1;
}

// fftd__chan_open sends so (a StreamOpen: a stream's, or a bank
// channel's) to the first daemon and hands it one end of a socketpair;
// *fd gets the other.
int
fftd__chan_open(fftd_client *c, Fftd__Wire__StreamOpen *so, int *fd)
{
	Fftd__Wire__Request req  = FFTD__WIRE__REQUEST__INIT;
	req.body_case            = FFTD__WIRE__REQUEST__BODY_STREAM_OPEN;
	req.stream_open          = so;
	Fftd__Wire__Reply *r     = NULL;
	int                sv[2] = { -1, -1 };
	uint64_t           id    = 0;
	int                rv    = fftd__rpc(c, &req, &r);
	if (rv == FFTD_OK
	    && r->body_case != FFTD__WIRE__REPLY__BODY_STREAM_OPEN) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "no channel token in the reply");
	}
	if (rv == FFTD_OK
	    && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		rv = fftd__set_error(
		    FFTD_ESYSERR + errno, "socketpair: %s", strerror(errno));
	}
	if (rv == FFTD_OK) {
		rv = fftd__send_fd(r->stream_open->fd_socket,
		    r->stream_open->token.data, r->stream_open->token.len, 0,
		    sv[1], c->timeout, &id);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	if (sv[1] >= 0) {
		close(sv[1]); // the daemon has its own copy now
	}
	if (rv != FFTD_OK) {
		if (sv[0] >= 0) {
			close(sv[0]);
		}
		return rv;
	}
	*fd = sv[0];
	return FFTD_OK;
}

// stream_chan_open asks the daemon for the stream's channel; st->chan is
// its end.
static int
stream_chan_open(fftd_stream *st)
{
	Fftd__Wire__StreamOpen so = FFTD__WIRE__STREAM_OPEN__INIT;
	so.plan_id                = st->plan->id[0];
	so.buffer_id              = st->buf->id;
	so.depth                  = (uint32_t) st->depth;
	so.slot_bytes             = st->slot;
	so.out_offset             = st->in_off;
	return fftd__chan_open(st->plan->client, &so, &st->chan);
}

// align64 rounds n up to a multiple of 64 bytes (slot arrays).
static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

// fftd_stream_open makes a stream of depth slots on plan (fftd.h): its
// shared buffer, and its stream channel when the daemon offers one.
int
fftd_stream_open(const fftd_plan *plan, int depth, fftd_stream **streamp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (plan == NULL || streamp == NULL || depth < 1 || depth > MAX_DEPTH) {
		return fftd__set_error(FFTD_EINVAL,
		    "plan, streamp or depth (1..%d) bad", MAX_DEPTH);
	}
	if (plan->client->nep > 1) {
		return fftd__set_error(FFTD_EUNSUPPORTED,
		    "streams need a client of one daemon; this one was "
		    "opened on a list of %d",
		    plan->client->nep);
	}
	fftd_stream *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	st->plan   = plan;
	st->depth  = depth;
	st->in_off = align64((size_t) plan->shape.in.bytes);
	st->slot   = st->in_off + align64((size_t) plan->shape.out.bytes);
	if (st->slot > SIZE_MAX / (size_t) depth) {
		free(st);
		return fftd__set_error(
		    FFTD_EOVERFLOW, "stream buffer size overflows");
	}
	st->chan = -1;
	int rv   = fftd_buffer_create(
	      plan->client, st->slot * (size_t) depth, &st->buf);
	if (rv != FFTD_OK) {
		free(st);
		return rv;
	}
	// A stream channel if the daemon offers one; else NNG, as any
	// execution (a daemon of an older protocol answers FFTD_EPROTO).
	int want = stream_chan_setting();
	if (want > 0 && (rv = stream_chan_open(st)) != FFTD_OK && want == 2) {
		fftd_buffer_destroy(st->buf);
		free(st);
		return rv;
	}
	*streamp = st;
	return FFTD_OK;
}

// slot_at is the address of slot i.
static char *
slot_at(const fftd_stream *st, int i)
{
	return (char *) st->buf->addr + (size_t) i * st->slot;
}

// fftd_stream_input is the next slot's input array, NULL when full.
void *
fftd_stream_input(fftd_stream *st)
{
	// A forked child gets no slot: the ring is shared with the parent's
	// daemon session (fork.c).
	if (st == NULL || st->pending == st->depth || fftd__forked()) {
		return NULL;
	}
	return slot_at(st, st->head);
}

// fftd_stream_submit starts the next slot's execution, over the stream
// channel or NNG.
int
fftd_stream_submit(fftd_stream *st, const void *in)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (st == NULL) {
		return fftd__set_error(FFTD_EINVAL, "stream is NULL");
	}
	if (st->pending == st->depth) {
		return fftd__set_error(
		    FFTD_EBUSY, "%d executions in flight already", st->depth);
	}
	char *slot = slot_at(st, st->head);
	if (in != NULL && in != slot) {
		memcpy(slot, in, (size_t) st->plan->shape.in.bytes);
	}
	if (st->chan >= 0) {
		if (st->broken) {
			return fftd__set_error(
			    st->broken, "the stream's channel failed");
		}
		fftd__chan_submit sub = { 0 };
		sub.slot              = (uint32_t) st->head;
		sub.tag = atomic_fetch_add(&st->plan->client->next_tag, 1) + 1;
		sub.deadline_us                  = (uint64_t) st->deadline_us;
		st->times[st->head].submitted_ns = (int64_t) fftd__mono_ns();
		ssize_t n = send(st->chan, &sub, sizeof(sub), MSG_NOSIGNAL);
		if (n != (ssize_t) sizeof(sub)) {
			return fftd__set_error(FFTD_ECLOSED,
			    "stream channel: %s",
			    n < 0 ? strerror(errno) : "short send");
		}
		st->tag[st->head]      = sub.tag;
		st->answered[st->head] = false;
		st->head               = (st->head + 1) % st->depth;
		st->pending++;
		return FFTD_OK;
	}
	fftd_exec_options opts = { .deadline_us = st->deadline_us };
	int rv = fftd_execute_async_opts(st->plan, slot, slot + st->in_off,
	    &opts, NULL, NULL, &st->req[st->head]);
	if (rv != FFTD_OK) {
		return rv;
	}
	st->head = (st->head + 1) % st->depth;
	st->pending++;
	return FFTD_OK;
}

// chan_wait reads the channel's answers until slot i's has come (they may
// come out of order when the plan runs on several devices).
static int
chan_wait(fftd_stream *st, int i)
{
	int     timeout = st->plan->client->timeout == NNG_DURATION_INFINITE
	        ? -1
	        : (int) st->plan->client->timeout;
	int64_t spin_end
	    = st->spin_ns > 0 ? (int64_t) fftd__mono_ns() + st->spin_ns : 0;
	while (!st->answered[i] && !st->broken) {
		fftd__chan_reply r;
		ssize_t          k;
		if (spin_end != 0 && (int64_t) fftd__mono_ns() < spin_end) {
			k = recv(st->chan, &r, sizeof(r), MSG_DONTWAIT);
			if (k < 0
			    && (errno == EAGAIN || errno == EWOULDBLOCK
			        || errno == EINTR)) {
				continue;
			}
		} else {
			struct pollfd p = { st->chan, POLLIN, 0 };
			int           n = poll(&p, 1, timeout);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n == 0) {
				// Its answer may still come, into a slot
				// reused by then: the channel cannot be
				// trusted any more.
				st->broken = FFTD_ETIMEDOUT;
				break;
			}
			k = recv(st->chan, &r, sizeof(r), 0);
		}
		if (k < (ssize_t) offsetof(fftd__chan_reply, msg) + 1) {
			st->broken = k < 0 && errno == EINTR ? 0 : FFTD_ECLOSED;
			continue;
		}
		r.msg[sizeof(r.msg) - 1] = '\0';
		if (r.slot < (uint32_t) st->depth && !st->answered[r.slot]
		    && st->tag[r.slot] == r.tag) {
			fftd_stream_times *t = &st->times[r.slot];
			t->answered_ns       = (int64_t) fftd__mono_ns();
			t->received_ns       = (int64_t) r.received_ns;
			t->started_ns        = (int64_t) r.started_ns;
			t->finished_ns       = (int64_t) r.finished_ns;
			st->answered[r.slot] = true;
			st->status[r.slot]   = r.status;
			snprintf(st->why[r.slot], sizeof(st->why[r.slot]), "%s",
			    r.msg);
		} else if (r.status != FFTD_OK) {
			// Not one of ours (a malformed submission's answer).
			st->broken = r.status;
		}
	}
	if (!st->answered[i]) {
		return fftd__set_error(st->broken,
		    st->broken == FFTD_ETIMEDOUT
		        ? "no answer on the stream channel in time"
		        : "the stream's channel failed");
	}
	if (st->status[i] != FFTD_OK) {
		return fftd__set_error(st->status[i], "%s", st->why[i]);
	}
	st->last      = st->times[i];
	st->have_last = true;
	return FFTD_OK;
}

// fftd_stream_last_times_sized copies the last successful wait's times
// into the caller's fftd_stream_times of size bytes.
int
fftd_stream_last_times_sized(
    const fftd_stream *st, fftd_stream_times *times, size_t size)
{
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "fftd_stream_times size %zu is bad", size);
	}
	if (st == NULL || times == NULL) {
		return fftd__set_error(FFTD_EINVAL, "stream or times is NULL");
	}
	if (st->chan < 0) {
		return fftd__set_error(FFTD_EUNSUPPORTED,
		    "this stream has no stream channel: no daemon times");
	}
	if (!st->have_last) {
		return fftd__set_error(
		    FFTD_EINVAL, "no wait has succeeded yet");
	}
	fftd__abi_out(times, size, &st->last, sizeof(st->last));
	return FFTD_OK;
}

// fftd_stream_wait completes the oldest slot in flight.
int
fftd_stream_wait(fftd_stream *st, void *out, const void **outp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (st == NULL || st->pending == 0) {
		return fftd__set_error(FFTD_EINVAL, "nothing in flight");
	}
	int i = st->tail;
	int rv
	    = st->chan >= 0 ? chan_wait(st, i) : fftd_request_wait(st->req[i]);
	char *res  = slot_at(st, i) + st->in_off;
	st->req[i] = NULL;
	st->tail   = (st->tail + 1) % st->depth;
	st->pending--;
	if (rv == FFTD_OK && out != NULL) {
		const fftd__shape *s = &st->plan->shape;
		fftd__side_copy(out, res, &s->out, s->rank, s->batch);
	}
	if (rv == FFTD_OK && outp != NULL) {
		*outp = res;
	}
	return rv;
}

// fftd_stream_pending is the number of slots in flight.
int
fftd_stream_pending(const fftd_stream *st)
{
	return st ? st->pending : 0;
}

// fftd_stream_close waits for what is in flight and frees the stream.
void
fftd_stream_close(fftd_stream *st)
{
	if (fftd__forked()) {
		return; // the parent's: see fork.c
	}
	if (st == NULL) {
		return;
	}
	while (st->pending > 0) {
		(void) fftd_stream_wait(st, NULL, NULL);
	}
	if (st->chan >= 0) {
		close(st->chan);
	}
	fftd_buffer_destroy(st->buf);
	free(st);
}

// fftd_stream_set_deadline sets later submissions' deadline.
void
fftd_stream_set_deadline(fftd_stream *st, int64_t deadline_us)
{
	if (st != NULL) {
		st->deadline_us = deadline_us > 0 ? deadline_us : 0;
	}
}

// fftd_stream_set_spin sets how long waits poll before they sleep.
int
fftd_stream_set_spin(fftd_stream *st, uint32_t spin_us)
{
	if (st == NULL) {
		return fftd__set_error(FFTD_EINVAL, "stream is NULL");
	}
	if (spin_us > 1000000) {
		return fftd__set_error(
		    FFTD_EINVAL, "spin_us %u is over 10^6 (1 s)", spin_us);
	}
	if (st->chan < 0) {
		return fftd__set_error(FFTD_EUNSUPPORTED,
		    "this stream has no stream channel: its waits are NNG's");
	}
	st->spin_ns = (int64_t) spin_us * 1000;
	return FFTD_OK;
}

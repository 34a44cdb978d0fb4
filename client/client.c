// SPDX-License-Identifier: MIT
//
// client.c — libfftd's client object: fftd_client_open (URL list, endpoints,
// hello to each), fftd_client_close (drain, cancel, close each socket with
// a bound on NNG's teardown), fftd_client_info, fftd_ping. The rest of the
// library is split by job behind client_impl.h, which lists the files.

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>

#include "client_impl.h"
#include "clock.h"

#define DEFAULT_TIMEOUT_MS 60000

// How long fftd_client_close lets executions in flight finish before it
// cancels them, and how long it waits for NNG to tear the socket down.
#define CLOSE_DRAIN_MAX_MS 10000
#define CLOSE_SOCKET_MAX_MS 2000

typedef struct socket_closer socket_closer;
static socket_closer        *closer_start(nng_socket sock, ep_link *link);
static void closer_wait(socket_closer *sc, const struct timespec *until);
static struct timespec deadline_after(long ms);

// client_free frees a client whose sockets are closed (or never opened).
static void
client_free(fftd_client *c)
{
	for (int i = 0; i < c->nep; i++) {
		free(c->ep[i].url);
	}
	pthread_mutex_destroy(&c->bank_mtx);
	pthread_mutex_destroy(&c->mtx);
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->slot);
	free(c);
}

// stage_setting reads FFTD_INLINE_STAGING: unset or empty keeps *min
// (STAGE_MIN_BYTES), "0" turns staging off (false), a positive byte count
// replaces *min. Anything else is ignored, as a typo must not turn off a
// data path.
static bool
stage_setting(uint64_t *min)
{
	const char *v = getenv("FFTD_INLINE_STAGING");
	if (v == NULL || v[0] == '\0') {
		return true;
	}
	char              *end;
	unsigned long long n;
	errno = 0;
	n     = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || v[0] == '-') {
		return true;
	}
	if (n == 0) {
		return false;
	}
	*min = n;
	return true;
}

// fftd_client_open connects to the daemon(s) of url and says hello to
// each (fftd.h); on failure every socket opened is closed, bounded.
int
fftd_client_open(fftd_client **clientp, const char *url, int timeout_ms)
{
	char  defurl[4096]; // $FFTD_URL may be a list
	char *urls[FFTD_MAX_DAEMONS];
	int   n, rv;
	if (clientp == NULL) {
		return fftd__set_error(FFTD_EINVAL, "clientp is NULL");
	}
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	fftd__fork_watch(); // before this process's first NNG call
	if (url == NULL) {
		if ((rv = fftd_default_url(defurl, sizeof(defurl)))
		    != FFTD_OK) {
			return rv;
		}
		url = defurl;
	}
	if ((rv = fftd__parse_urls(url, urls, &n)) != FFTD_OK) {
		return rv;
	}
	fftd_client *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		while (n > 0) {
			free(urls[--n]);
		}
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&c->mtx, NULL);
	pthread_mutex_init(&c->bank_mtx, NULL);
	pthread_condattr_t ca; // fftd_client_close waits on it with a deadline
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->idle, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->slot, NULL);
	c->nep = n;
	for (int i = 0; i < n; i++) {
		c->ep[i].url = urls[i];
	}
	c->timeout = timeout_ms == 0 ? DEFAULT_TIMEOUT_MS
	    : timeout_ms < 0         ? NNG_DURATION_INFINITE
	                             : timeout_ms;
	// Shared memory (buffers, streams, inline staging) needs the one
	// daemon to be local.
	c->ipc         = n == 1 && strncmp(urls[0], "ipc://", 6) == 0;
	c->stage_min   = STAGE_MIN_BYTES;
	c->staging_off = !c->ipc || !stage_setting(&c->stage_min);
	for (int i = 0; i < n && rv == FFTD_OK; i++) {
		fftd_info info;
		rv = fftd__ep_open(c, i, i == 0 ? &c->info : &info);
		if (rv == FFTD_OK && i > 0) {
			fftd__merge_info(&c->info, &info);
		}
	}
	if (rv != FFTD_OK) {
		// A daemon that hung up during the hello (refused by its
		// allow-list, say) can leave NNG 1.5's close hanging as well:
		// bounded, as in fftd_client_close (socket_closer).
		socket_closer  *sc[FFTD_MAX_DAEMONS];
		struct timespec until = deadline_after(CLOSE_SOCKET_MAX_MS);
		for (int i = 0; i < n; i++) {
			sc[i] = NULL;
			if (c->ep[i].link != NULL) {
				pthread_mutex_lock(&c->ep[i].link->mtx);
				c->ep[i].link->client = NULL;
				pthread_mutex_unlock(&c->ep[i].link->mtx);
			}
			if (c->ep[i].open) {
				sc[i] = closer_start(
				    c->ep[i].sock, c->ep[i].link);
			} else {
				fftd__link_free(c->ep[i].link);
			}
			c->ep[i].link = NULL;
		}
		for (int i = 0; i < n; i++) {
			closer_wait(sc[i], &until);
		}
		client_free(c);
		return rv;
	}
	c->info.ndaemons = n;
	atomic_store(&c->refs, 1);
	*clientp = c;
	return FFTD_OK;
}

// fftd__client_unref drops one reference; the last frees the client.
void
fftd__client_unref(fftd_client *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		client_free(c);
	}
}

// deadline_after is CLOCK_MONOTONIC now plus ms, for the timed waits.
static struct timespec
deadline_after(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

// socket_closer runs nng_close on a thread of its own, so that the caller
// can stop waiting: NNG 1.5 (Debian 12's) can hang in nng_close when the
// socket is closed in the middle of a partial read or write of a large
// message on an ipc pipe (its transport resubmits the transfer on an aio
// that close has already stopped, and the pipe reaper then waits for it
// forever). fftd_client_close avoids that state by draining first; this is
// the bound for what it cannot avoid (a reply to a timed-out request still
// arriving). Freed by whichever side finishes last. It also frees the
// socket's ep_link once nng_close has returned (no pipe callback can run
// after that).
struct socket_closer {
	nng_socket      sock;
	ep_link        *link;
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	bool            done;
	int             refs;
};

// socket_closer_unref drops one of the closer's two references.
static void
socket_closer_unref(socket_closer *sc)
{
	pthread_mutex_lock(&sc->mtx);
	int left = --sc->refs;
	pthread_mutex_unlock(&sc->mtx);
	if (left == 0) {
		pthread_mutex_destroy(&sc->mtx);
		pthread_cond_destroy(&sc->cv);
		free(sc);
	}
}

// socket_closer_main closes the socket, frees its link and says so.
static void *
socket_closer_main(void *arg)
{
	socket_closer *sc = arg;
	nng_close(sc->sock);
	fftd__link_free(sc->link);
	pthread_mutex_lock(&sc->mtx);
	sc->done = true;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mtx);
	socket_closer_unref(sc);
	return NULL;
}

// closer_start starts closing sock (then freeing link) on a thread of its
// own; closer_wait waits for it until the deadline. NULL: closed already.
static socket_closer *
closer_start(nng_socket sock, ep_link *link)
{
	socket_closer *sc = calloc(1, sizeof(*sc));
	pthread_t      t;
	if (sc == NULL) {
		nng_close(sock);
		fftd__link_free(link);
		return NULL;
	}
	sc->sock = sock;
	sc->link = link;
	sc->refs = 2;
	pthread_mutex_init(&sc->mtx, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sc->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, socket_closer_main, sc) != 0) {
		sc->refs = 1;
		socket_closer_unref(sc);
		nng_close(sock);
		fftd__link_free(link);
		return NULL;
	}
	pthread_detach(t);
	return sc;
}

// closer_wait waits for a closer until the deadline (see closer_start).
static void
closer_wait(socket_closer *sc, const struct timespec *until)
{
	if (sc == NULL) {
		return;
	}
	pthread_mutex_lock(&sc->mtx);
	while (!sc->done
	    && pthread_cond_timedwait(&sc->cv, &sc->mtx, until) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&sc->mtx);
	socket_closer_unref(sc);
}

// fftd_client_close drains what is in flight (bounded), cancels the rest,
// releases the staging pool and closes every socket, each bounded.
void
fftd_client_close(fftd_client *client)
{
	if (fftd__forked()) {
		return; // the parent's: see fork.c
	}
	if (client == NULL) {
		return;
	}
	atomic_store(&client->closed, true); // new executions: FFTD_ECLOSED
	// Let what is in flight finish: cancelling leaves its request or reply
	// half-written on the pipe, the state in which nng_close can hang
	// (socket_closer). The daemon answers every request it took.
	long drain = client->timeout < 0 || client->timeout > CLOSE_DRAIN_MAX_MS
	    ? CLOSE_DRAIN_MAX_MS
	    : (long) client->timeout;
	struct timespec until = deadline_after(drain);
	pthread_mutex_lock(&client->mtx);
	pthread_cond_broadcast(&client->slot); // no one waits for a slot now
	while (client->ninflight > 0
	    && pthread_cond_timedwait(&client->idle, &client->mtx, &until)
	        != ETIMEDOUT) { }
	for (fftd_request *r = client->inflight; r != NULL;
	     r               = r->next_inflight) {
		nng_aio_cancel(r->aio); // completes it with FFTD_ECLOSED
	}
	while (client->ninflight > 0) {
		pthread_cond_wait(&client->idle, &client->mtx);
	}
	fftd_buffer *stage = client->staging;
	client->staging    = NULL;
	pthread_mutex_unlock(&client->mtx);
	fftd__bankch_close_all(client);
	while (stage != NULL) { // the daemon frees its side with the session
		fftd_buffer *next = stage->next;
		fftd__buffer_release(client, stage);
		stage = next;
	}
	// All the sockets at once, each bounded as one (socket_closer).
	socket_closer *sc[FFTD_MAX_DAEMONS];
	for (int i = 0; i < client->nep; i++) {
		pthread_mutex_lock(&client->ep[i].link->mtx);
		client->ep[i].link->client = NULL; // it is going
		pthread_mutex_unlock(&client->ep[i].link->mtx);
	}
	for (int i = 0; i < client->nep; i++) {
		sc[i] = closer_start(client->ep[i].sock, client->ep[i].link);
		client->ep[i].link = NULL;
	}
	until = deadline_after(CLOSE_SOCKET_MAX_MS);
	for (int i = 0; i < client->nep; i++) {
		closer_wait(sc[i], &until);
	}
	fftd__client_unref(client);
}

// fftd_client_info_sized copies the daemons' info taken at the hello into
// the caller's fftd_info of size bytes (devices of device_size bytes each:
// fftd__abi_info_out).
int
fftd_client_info_sized(
    fftd_client *client, fftd_info *info, size_t size, size_t device_size)
{
	if (!fftd__abi_size_ok(size) || !fftd__abi_size_ok(device_size)) {
		return fftd__set_error(FFTD_EINVAL,
		    "fftd_info size %zu or fftd_device_info size %zu is bad",
		    size, device_size);
	}
	if (client == NULL || info == NULL) {
		return fftd__set_error(FFTD_EINVAL, "client or info is NULL");
	}
	fftd__abi_info_out(info, size, device_size, &client->info);
	return FFTD_OK;
}

// fftd__ping_split times one Ping round trip to the first daemon, in
// microseconds: us[0] the whole trip, us[1] from the send to the daemon's
// handler, us[2] inside the daemon, us[3] from the daemon's answer back to
// this caller. The daemon's stamps share this host's CLOCK_MONOTONIC only
// over a local connection; an older daemon sends none (us[1..3] are then
// NAN). For fftd_ping and bench/soak.
int
fftd__ping_split(fftd_client *client, double us[4])
{
	if (client == NULL) {
		return fftd__set_error(FFTD_EINVAL, "client is NULL");
	}
	uint64_t            t0   = fftd__mono_ns();
	Fftd__Wire__Request req  = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    ping = FFTD__WIRE__PING__INIT;
	ping.token               = t0;
	req.body_case            = FFTD__WIRE__REQUEST__BODY_PING;
	req.ping                 = &ping;
	Fftd__Wire__Reply *r     = NULL;
	int                rv    = fftd__rpc(client, &req, &r);
	uint64_t           t1    = fftd__mono_ns();
	if (rv == FFTD_OK
	    && (r->body_case != FFTD__WIRE__REPLY__BODY_PING
	        || r->ping->token != ping.token)) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "ping answered with the wrong token");
	}
	if (rv == FFTD_OK) {
		const Fftd__Wire__Ping *a = r->ping;
		us[0]                     = (double) (t1 - t0) / 1e3;
		us[1] = us[2] = us[3] = NAN;
		if (a->daemon_recv_ns >= t0
		    && a->daemon_send_ns >= a->daemon_recv_ns
		    && t1 >= a->daemon_send_ns) {
			us[1] = (double) (a->daemon_recv_ns - t0) / 1e3;
			us[2] = (double) (a->daemon_send_ns - a->daemon_recv_ns)
			    / 1e3;
			us[3] = (double) (t1 - a->daemon_send_ns) / 1e3;
		}
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv;
}

// fftd_ping times one Ping round trip to the first daemon.
int
fftd_ping(fftd_client *client, double *rtt_us)
{
	double us[4];
	int    rv = fftd__ping_split(client, us);
	if (rv == FFTD_OK && rtt_us != NULL) {
		*rtt_us = us[0];
	}
	return rv;
}

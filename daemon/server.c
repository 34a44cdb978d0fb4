// SPDX-License-Identifier: MIT
//
// server.c — the top floor of the daemon's NNG server (server_impl.h): its
// lifecycle (create, start, drain, destroy, reload), the contexts' state
// machine and request dispatch. The objects a request works on have their
// own files below it: sessions (session.c), executions (exec.c), stream
// channels (stream.c), shared buffers (buffer.c), plans (plan.c),
// statistics (stats.c, algo_stats.c), and replies with lookups (reply.c).
//
// Each context runs a small state machine on NNG's aio callbacks:
// RECV → (validate) → WORK → SEND → RECV. Cheap requests (hello, ping,
// stats, plan destroy, and every rejection) are answered from the callback;
// plan creation goes to the device's planner thread and execution to its
// worker; both answer through the completion callback the context set
// (reply.c: fftd__ctx_exec_done for executions). Requests are validated
// completely before anything is allocated for them.
//
// Sessions are NNG pipes (one per client connection). When a pipe goes away
// its session is closed at once: its plan handles are dropped and queued
// work for it is skipped, so a dead client costs nothing.
//
// Threads: ctx_cb and handle_request run on NNG's task threads; the
// lifecycle calls on the main thread. Locks: a context's lock guards its
// state; the server lock guards the drain's wait (s->drained) and what a
// reload changes.

#include "server_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/protocol/reqrep0/rep.h>
#include <nng/transport/ipc/ipc.h>

#include "clock.h"
#include "log.h"
#include "remote.h"

// How long a stopping daemon keeps connections open after the last answer
// was handed to NNG, so that it is written out.
#define LINGER_MS 1000
// How long it then waits with no more receiving, so that the pipes fall
// quiet before the socket closes.
#define QUIET_MS 200

// handle_request decodes a request and dispatches it by kind (NNG task
// thread); refused connections are answered why.
static void
handle_request(fftd__ctx *c, nng_msg *m)
{
	fftd__frame f;
	uint32_t    pipe = (uint32_t) nng_pipe_id(nng_msg_get_pipe(m));
	c->pipe          = pipe;
	char why[160];
	bool hang_up;
	fftd__session_refused(c->srv, pipe, why, sizeof(why), &hang_up);
	if (why[0] != '\0') {
		if (hang_up) { // told already, and still asking
			nng_pipe_close(nng_msg_get_pipe(m));
		}
		nng_msg_free(m);
		fftd__ctx_reply_error(
		    c, FFTD_EREFUSED, "connection refused: %s", why);
		return;
	}
	int rv = fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &f);
	if (rv != FFTD_OK) {
		char refusal[96];
		fftd__frame_refusal(rv, &f, refusal, sizeof(refusal));
		nng_msg_free(m);
		fftd__ctx_reply_error(c, rv, "%s", refusal);
		return;
	}
	Fftd__Wire__Request *req
	    = fftd__wire__request__unpack(NULL, f.pb_len, f.pb);
	if (req == NULL) {
		nng_msg_free(m);
		fftd__ctx_reply_error(
		    c, FFTD_EPROTO, "request message does not decode");
		return;
	}
	if (f.payload_len != 0
	    && req->body_case != FFTD__WIRE__REQUEST__BODY_EXECUTE
	    && req->body_case != FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE) {
		fftd__wire__request__free_unpacked(req, NULL);
		nng_msg_free(m);
		fftd__ctx_reply_error(c, FFTD_EPROTO,
		    "only execute and array write requests carry a payload");
		return;
	}
	switch (req->body_case) {
	case FFTD__WIRE__REQUEST__BODY_HELLO:
		nng_msg_free(m);
		fftd__session_hello(c, pipe, req->hello);
		break;
	case FFTD__WIRE__REQUEST__BODY_PING: {
		nng_msg_free(m);
		Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
		Fftd__Wire__Ping  p = FFTD__WIRE__PING__INIT;
		p.token             = req->ping->token;
		p.daemon_recv_ns    = c->recv_ns;
		p.daemon_send_ns    = fftd__mono_ns();
		r.body_case         = FFTD__WIRE__REPLY__BODY_PING;
		r.ping              = &p;
		fftd__ctx_reply(c, &r, 0, NULL);
		break;
	}
	case FFTD__WIRE__REQUEST__BODY_STATS:
		nng_msg_free(m);
		fftd__stats_request(c, req->stats);
		break;
	case FFTD__WIRE__REQUEST__BODY_ALGO_STATS:
		nng_msg_free(m);
		fftd__algo_stats_request(c, req->algo_stats);
		break;
	case FFTD__WIRE__REQUEST__BODY_PLAN_CREATE:
		nng_msg_free(m);
		fftd__plan_create(c, pipe, req->plan_create);
		break;
	case FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY:
		nng_msg_free(m);
		fftd__plan_destroy(c, pipe, req->plan_destroy);
		break;
	case FFTD__WIRE__REQUEST__BODY_EXECUTE:
		fftd__exec_request(c, pipe, req->execute, m, &f); // takes m
		break;
	case FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER:
		nng_msg_free(m);
		fftd__buf_register(c, pipe, req->buffer_register);
		break;
	case FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE:
		nng_msg_free(m);
		fftd__buf_release(c, pipe, req->buffer_release);
		break;
	case FFTD__WIRE__REQUEST__BODY_CANCEL:
		nng_msg_free(m);
		fftd__exec_cancel(c, pipe, req->cancel);
		break;
	case FFTD__WIRE__REQUEST__BODY_STREAM_OPEN:
		nng_msg_free(m);
		fftd__stream_open(c, pipe, req->stream_open);
		break;
	case FFTD__WIRE__REQUEST__BODY_ARRAY_CREATE:
		nng_msg_free(m);
		fftd__array_create(c, pipe, req->array_create);
		break;
	case FFTD__WIRE__REQUEST__BODY_ARRAY_DESTROY:
		nng_msg_free(m);
		fftd__array_destroy(c, pipe, req->array_destroy);
		break;
	case FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE:
		fftd__array_write(c, pipe, req->array_write, m, &f); // takes m
		break;
	case FFTD__WIRE__REQUEST__BODY_ARRAY_READ:
		nng_msg_free(m);
		fftd__array_read(c, pipe, req->array_read);
		break;
	case FFTD__WIRE__REQUEST__BODY_ARRAY_OPEN_IPC:
		nng_msg_free(m);
		fftd__array_open_ipc(c, pipe, req->array_open_ipc);
		break;
	case FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER:
		nng_msg_free(m);
		fftd__mf_request(c, pipe, req->matched_filter);
		break;
	default:
		nng_msg_free(m);
		fftd__ctx_reply_error(
		    c, FFTD_EPROTO, "empty or unknown request");
		break;
	}
	fftd__wire__request__free_unpacked(req, NULL);
}

// ctx_cb is the context's aio callback (NNG task thread): the state
// machine's RECV → WORK and SEND → RECV steps.
static void
ctx_cb(void *arg)
{
	fftd__ctx    *c  = arg;
	fftd__server *s  = c->srv;
	int           rv = nng_aio_result(c->aio);
	pthread_mutex_lock(&c->mtx);
	if (c->state == CTX_SEND) {
		if (rv != 0) {
			// The client is gone; its answer goes with it.
			nng_msg_free(nng_aio_get_msg(c->aio));
		}
		if (!c->refusing) {
			atomic_fetch_sub(&s->busy, 1);
		}
		c->refusing = false;
		if (atomic_load(&s->stopping)) {
			pthread_mutex_lock(&s->mtx);
			pthread_cond_broadcast(&s->drained);
			pthread_mutex_unlock(&s->mtx);
			if (rv == NNG_ECLOSED
			    || atomic_load(&s->recv_stopped)) {
				c->state = CTX_DONE;
				pthread_mutex_unlock(&c->mtx);
				return;
			}
			// Still answering (FFTD_ESHUTDOWN) until the drain
			// and its linger are over.
		}
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	if (c->state != CTX_RECV) {
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	if (rv != 0) {
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED
		    || atomic_load(&s->stopping)) {
			c->state = CTX_DONE;
		} else {
			nng_ctx_recv(c->ctx, c->aio);
		}
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	nng_msg *m = nng_aio_get_msg(c->aio);
	c->state   = CTX_WORK;
	c->recv_ns = fftd__mono_ns();
	atomic_fetch_add(&s->busy, 1);
	pthread_mutex_unlock(&c->mtx);
	if (atomic_load(&s->stopping)) {
		// Draining: a request that arrives now is answered at once,
		// so its client does not wait out its timeout. It is not
		// accepted work: the drain does not wait for it.
		pthread_mutex_lock(&c->mtx);
		c->refusing = true;
		pthread_mutex_unlock(&c->mtx);
		atomic_fetch_sub(&s->busy, 1);
		c->pipe = (uint32_t) nng_pipe_id(nng_msg_get_pipe(m));
		nng_msg_free(m);
		fftd__ctx_reply_error(c, FFTD_ESHUTDOWN,
		    "the daemon is shutting down; request not run");
		return;
	}
	handle_request(c, m);
}

// chan_packet is the stream poller's on_packet (chan.h): a bank channel's
// request goes to mf_req.c, a stream channel's submission to exec.c.
static void
chan_packet(void *arg, void *chan, const void *pkt, size_t len)
{
	fftd__stream *ch = chan;
	if (ch->bank) {
		fftd__mf_chan_packet(arg, ch, pkt, len);
	} else {
		fftd__exec_stream_packet(arg, chan, pkt, len);
	}
}

// --- lifecycle ---------------------------------------------------------------

// fftd__server_create: see server.h.
int
fftd__server_create(fftd__server **sp, const fftd__config *cfg,
    fftd__worker **workers, fftd__worker **rt_workers, int nworkers,
    const char *backend_name)
{
	fftd__server *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return FFTD_ENOMEM;
	}
	s->cfg              = *cfg;
	s->workers          = workers;
	s->rt_workers       = rt_workers;
	s->nworkers         = nworkers;
	s->limits           = cfg->limits;
	s->max_plans        = cfg->max_plans_per_client;
	s->max_plan_bytes   = cfg->max_plan_bytes_per_client;
	s->max_buffer_bytes = cfg->max_buffer_bytes;
	atomic_store(&s->next_buf_id, 1);
	atomic_store(&s->next_array_id, 1);
	snprintf(s->backend, sizeof(s->backend), "%s", backend_name);
	atomic_store(&s->next_plan_id, 1);
	pthread_mutex_init(&s->mtx, NULL);
	pthread_cond_init(&s->drained, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	*sp = s;
	return FFTD_OK;
}

// fftd__server_start opens the socket, its listeners, the fd socket and
// the stream poller beside the first ipc listener, and the contexts.
int
fftd__server_start(fftd__server *s, char *err, size_t errlen)
{
	int rv;
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		snprintf(err, errlen, "cannot open the socket: %s",
		    nng_strerror(rv));
		return FFTD_ENNGERR + rv;
	}
	s->sock_open = true;
	// A request is a frame header, a small protobuf and the payload.
	size_t maxsz = s->limits.max_request_bytes > SIZE_MAX - (1u << 20)
	    ? 0
	    : (size_t) s->limits.max_request_bytes + FFTD__WIRE_MAX_PB + 128;
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, maxsz);
	nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_PRE, fftd__session_on_pipe, s);
	nng_pipe_notify(
	    s->sock, NNG_PIPE_EV_REM_POST, fftd__session_on_pipe, s);
	for (int i = 0; i < s->cfg.nlisten; i++) {
		const char   *url = s->cfg.listen[i];
		nng_listener *l   = &s->listeners[s->nlisteners];
		if ((rv = nng_listener_create(l, s->sock, url)) != 0) {
			snprintf(err, errlen, "%s: %s", url, nng_strerror(rv));
			return FFTD_ENNGERR + rv;
		}
		if (strncmp(url, "ipc://", 6) == 0) {
			nng_listener_set_int(
			    *l, NNG_OPT_IPC_PERMISSIONS, s->cfg.socket_mode);
		}
		if ((rv = fftd__remote_listener_setup(
		         *l, url, &s->cfg, err, errlen))
		    != FFTD_OK) {
			nng_listener_close(*l);
			return rv;
		}
		if ((rv = nng_listener_start(*l, 0)) != 0) {
			snprintf(err, errlen, "cannot listen on %s: %s", url,
			    nng_strerror(rv));
			nng_listener_close(*l);
			return FFTD_ENNGERR + rv;
		}
		s->nlisteners++;
		fftd__log(FFTD_LOG_INFO, "listening on %s", url);
		// Shared-memory buffers arrive beside the first ipc socket.
		if (strncmp(url, "ipc://", 6) == 0 && s->fdsock == NULL) {
			int n = snprintf(
			    s->fd_path, sizeof(s->fd_path), "%s.fd", url + 6);
			if (n < 0 || (size_t) n >= sizeof(s->fd_path)) {
				fftd__log(FFTD_LOG_WARN,
				    "%s: path too long for the "
				    "buffer socket; no shared memory",
				    url);
			} else if (fftd__fdsock_start(&s->fdsock, s->fd_path,
			               s->cfg.socket_mode,
			               (int) s->cfg.max_fd_connections_per_user,
			               fftd__buf_on_fd, s, err, errlen)
			    != FFTD_OK) {
				fftd__log(
				    FFTD_LOG_WARN, "no shared memory: %s", err);
				s->fdsock = NULL;
			} else {
				fftd__log(FFTD_LOG_INFO,
				    "shared-memory buffers via %s", s->fd_path);
				const fftd__chanpoll_ops ops
				    = { chan_packet, fftd__stream_hangup };
				if (fftd__chanpoll_start(&s->chanpoll, &ops, s,
				        fftd__config_busy_poll_ns(&s->cfg, 1),
				        err, errlen)
				    != FFTD_OK) {
					// Streams then use NNG.
					fftd__log(FFTD_LOG_WARN,
					    "no stream channels: %s", err);
					s->chanpoll = NULL;
				}
			}
		}
	}
	s->ctxs = calloc((size_t) s->cfg.contexts, sizeof(*s->ctxs));
	if (s->ctxs == NULL) {
		snprintf(err, errlen, "out of memory");
		return FFTD_ENOMEM;
	}
	for (int i = 0; i < s->cfg.contexts; i++) {
		fftd__ctx *c = &s->ctxs[i];
		c->srv       = s;
		pthread_mutex_init(&c->mtx, NULL);
		if ((rv = nng_aio_alloc(&c->aio, ctx_cb, c)) != 0
		    || (rv = nng_ctx_open(&c->ctx, s->sock)) != 0) {
			snprintf(err, errlen, "cannot open a context: %s",
			    nng_strerror(rv));
			return FFTD_ENNGERR + rv;
		}
		s->nctxs++;
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
	}
	return FFTD_OK;
}

// linger waits up to ms milliseconds while clients are connected.
static void
linger(fftd__server *s, int ms)
{
	for (int i = 0; i < ms && atomic_load(&s->n_sessions) > 0; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

// fftd__server_drain: see server.h.
int
fftd__server_drain(fftd__server *s, int timeout_ms)
{
	// Closing a listener would also close the connections it accepted,
	// answers still to be written included; new connections are refused
	// in fftd__session_on_pipe instead. Contexts keep receiving while the
	// accepted work finishes: what arrives is answered FFTD_ESHUTDOWN at
	// once, so its client need not time out.
	atomic_store(&s->stopping, true);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->mtx);
	while (atomic_load(&s->busy) > 0) {
		if (pthread_cond_timedwait(&s->drained, &s->mtx, &until) != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	// A completed send has only queued the reply on its pipe; closing the
	// socket now would drop replies still being written. Linger until
	// the clients hang up, or briefly: queued replies leave in well under
	// that even at a few GB. The contexts keep receiving meanwhile, so a
	// request that arrives now is still answered FFTD_ESHUTDOWN instead
	// of waiting out its client's timeout.
	linger(s, LINGER_MS);
	// Then no more receiving, so that the pipes fall quiet before the
	// socket closes (NNG 1.5 can hang closing a pipe in the middle of a
	// large message: see the client's socket_closer).
	atomic_store(&s->recv_stopped, true);
	for (int i = 0; i < s->nctxs; i++) {
		fftd__ctx *c = &s->ctxs[i];
		pthread_mutex_lock(&c->mtx);
		if (c->state == CTX_RECV) {
			nng_aio_cancel(c->aio);
		}
		pthread_mutex_unlock(&c->mtx);
	}
	linger(s, QUIET_MS);
	return atomic_load(&s->busy);
}

// fftd__server_destroy: see server.h.
void
fftd__server_destroy(fftd__server *s)
{
	if (s == NULL) {
		return;
	}
	atomic_store(&s->stopping, true);
	fftd__fdsock_stop(s->fdsock);
	fftd__chanpoll_stop(s->chanpoll);
	if (s->sock_open) {
		nng_close(s->sock); // aborts contexts and fires pipe removals
	}
	// Jobs still queued answer through contexts: let them finish (their
	// sends fail at once on the closed socket) before the contexts go.
	for (int i = 0; i < s->nworkers; i++) {
		fftd__worker_flush(s->workers[i]);
		if (s->rt_workers != NULL) {
			fftd__worker_flush(s->rt_workers[i]);
		}
	}
	for (int i = 0; i < s->nctxs; i++) {
		nng_aio_stop(s->ctxs[i].aio);
	}
	for (int i = 0; i < s->nctxs; i++) {
		nng_aio_free(s->ctxs[i].aio);
		pthread_mutex_destroy(&s->ctxs[i].mtx);
	}
	free(s->ctxs);
	// Channels the stopped poller did not see hang up: its references.
	fftd__stream_forget_all(s);
	while (s->sessions != NULL) {
		fftd__session_close(s, s->sessions->pipe);
	}
	fftd__session_free_refused(s);
	pthread_mutex_destroy(&s->mtx);
	pthread_cond_destroy(&s->drained);
	free(s);
}

// fftd__server_reload: see server.h.
void
fftd__server_reload(fftd__server *s, const fftd__config *fresh)
{
	pthread_mutex_lock(&s->mtx);
	s->limits                          = fresh->limits;
	s->max_plans                       = fresh->max_plans_per_client;
	s->max_plan_bytes                  = fresh->max_plan_bytes_per_client;
	s->cfg.max_inflight_per_client     = fresh->max_inflight_per_client;
	s->cfg.max_queued_bytes_per_client = fresh->max_queued_bytes_per_client;
	s->cfg.max_buffers_per_client      = fresh->max_buffers_per_client;
	s->cfg.max_buffers_per_user        = fresh->max_buffers_per_user;
	s->cfg.max_streams_per_client      = fresh->max_streams_per_client;
	s->cfg.max_streams_per_user        = fresh->max_streams_per_user;
	s->cfg.max_arrays_per_client       = fresh->max_arrays_per_client;
	s->cfg.max_array_bytes_per_client  = fresh->max_array_bytes_per_client;
	s->cfg.ipc_peers_any               = fresh->ipc_peers_any;
	fftd__fdsock_set_max_per_user(
	    s->fdsock, (int) fresh->max_fd_connections_per_user);
	s->cfg.max_connections_per_user = fresh->max_connections_per_user;
	memcpy(s->cfg.weights, fresh->weights, sizeof(s->cfg.weights));
	s->cfg.nweights = fresh->nweights;
	// New weights apply to the jobs clients send from now on.
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		ss->weight
		    = ss->ipc ? fftd__config_weight(&s->cfg, ss->uid) : 1.0;
	}
	pthread_mutex_unlock(&s->mtx);
}

// fftd__server_inflight: see server.h.
int
fftd__server_inflight(fftd__server *s)
{
	return atomic_load(&s->busy);
}

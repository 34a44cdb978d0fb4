// SPDX-License-Identifier: MIT
//
// session.c — floor 5 of the NNG server (server_impl.h): sessions, one per
// client connection (NNG pipe). A connection's arrival (the session made
// with its peer's credentials and weight, or the connection refused and
// kept open to be told why), Hello, and its departure, when the session's
// stream channels hang up, its queued work is dropped and its plans,
// buffers and arrays are released, each in its own file. Calls reply.c,
// plan.c, buffer.c, array.c, stream.c and exec.c.
//
// Threads: fftd__session_on_pipe and fftd__session_close run on NNG's pipe
// callback (and fftd__session_close on the main thread at destroy);
// fftd__session_hello and fftd__session_refused on NNG's task threads.
// Locks: the session and refused lists are under the server lock;
// nrefused is read without it.

#include "server_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/transport/ipc/ipc.h>

#include "log.h"
#include "remote.h"

#ifndef FFTD_VERSION_STRING
#define FFTD_VERSION_STRING "0.1.0"
#endif

// fftd__session_close ends pipe's session (pipe callback, or destroy):
// its stream channels hang up, its queued work is dropped and its plans
// and buffers are released.
void
fftd__session_close(fftd__server *s, uint32_t pipe)
{
	pthread_mutex_lock(&s->mtx);
	fftd__session **pp = &s->sessions;
	while (*pp != NULL && (*pp)->pipe != pipe) {
		pp = &(*pp)->next;
	}
	fftd__session *ss = *pp;
	if (ss != NULL) {
		*pp = ss->next;
	}
	pthread_mutex_unlock(&s->mtx);
	if (ss == NULL) {
		return;
	}
	// Its stream channels hang up (the poller then forgets them).
	fftd__stream_shutdown_pipe(s, pipe);
	// Queued work of a client that is gone is dropped, not run.
	int nq = fftd__exec_cancel_all(s, pipe, 0, FFTD_ECLOSED);
	int n = 0, nb = 0;
	for (fftd__handle *h = ss->plans, *next; h != NULL; h = next) {
		next = h->next;
		fftd__plan_unref(s, h);
		n++;
	}
	for (fftd__shbuf *b = ss->bufs, *next; b != NULL; b = next) {
		next = b->next;
		fftd__buf_unref(s, b);
		nb++;
	}
	int  na = fftd__array_release_all(s, ss);
	char f_client[32], f_pid[40];
	snprintf(f_client, sizeof(f_client), "FFTD_CLIENT=%u", pipe);
	snprintf(f_pid, sizeof(f_pid), "FFTD_CLIENT_PID=%" PRIu64, ss->pid);
	const char *const fields[]
	    = { f_client, f_pid, "FFTD_EVENT=disconnect", NULL };
	fftd__log_fields(FFTD_LOG_INFO, fields,
	    "client %u (pid %" PRIu64 ") disconnected; %d plan(s), %d "
	    "buffer(s), %d array(s) released, %d queued job(s) dropped",
	    pipe, ss->pid, n, nb, na, nq);
	free(ss);
	atomic_fetch_sub(&s->n_sessions, 1);
}

// refuse keeps pipe p open to answer its requests FFTD_EREFUSED, or hangs
// up on it when too many refused ones are open.
static void
refuse(fftd__server *s, nng_pipe p, const char *why)
{
	fftd__refused *r    = calloc(1, sizeof(*r));
	bool           kept = false;
	pthread_mutex_lock(&s->mtx);
	if (r != NULL && atomic_load(&s->nrefused) < MAX_REFUSED) {
		r->pipe = (uint32_t) nng_pipe_id(p);
		snprintf(r->why, sizeof(r->why), "%s", why);
		r->next    = s->refused;
		s->refused = r;
		atomic_fetch_add(&s->nrefused, 1);
		kept = true;
	}
	pthread_mutex_unlock(&s->mtx);
	if (!kept) {
		free(r);
		nng_pipe_close(p);
	}
}

// fftd__session_on_pipe runs on NNG's pipe callback: ADD_PRE makes the
// session (or refuses the connection), REM_POST closes it.
void
fftd__session_on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	fftd__server *s  = arg;
	uint32_t      id = (uint32_t) nng_pipe_id(p);
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		if (atomic_load(&s->stopping)) {
			nng_pipe_close(p); // shutting down: no new clients
			return;
		}
		char why[160];
		if (!fftd__remote_allowed(p, &s->cfg, why, sizeof(why))) {
			fftd__log(FFTD_LOG_WARN, "connection refused: %s", why);
			refuse(s, p, why);
			return;
		}
		// The session must exist before the pipe's first request: NNG
		// starts the protocol on a pipe (which may then receive and
		// answer requests) before it runs ADD_POST. REM_POST follows
		// ADD_PRE in every case, so the session is always closed.
		fftd__session *ss = calloc(1, sizeof(*ss));
		if (ss == NULL) {
			fftd__log(
			    FFTD_LOG_ERROR, "out of memory for a session");
			nng_pipe_close(p);
			return;
		}
		ss->pipe = id;
		// Peer credentials exist for ipc:// pipes only.
		ss->ipc = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &ss->pid)
		        == 0
		    && nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &ss->uid)
		        == 0;
		// One user's ipc connections are limited: each is a session
		// with NNG's buffers and descriptors, and a local user opening
		// them without end would exhaust the daemon's. Counted and
		// linked in one hold of the lock, so two connecting at once
		// cannot both pass. Remote peers have no uid; [remote] governs
		// them.
		pthread_mutex_lock(&s->mtx);
		uint32_t mine = 0;
		for (fftd__session *o = s->sessions; ss->ipc && o != NULL;
		     o                = o->next) {
			mine += o->ipc && o->uid == ss->uid;
		}
		uint32_t most = s->cfg.max_connections_per_user;
		if (ss->ipc && most > 0 && mine >= most) {
			pthread_mutex_unlock(&s->mtx);
			snprintf(why, sizeof(why),
			    "uid %" PRIu64 " holds %u connections, the limit "
			    "([limits] max_connections_per_user)",
			    ss->uid, mine);
			fftd__log(FFTD_LOG_WARN, "connection refused: %s", why);
			free(ss);
			refuse(s, p, why);
			return;
		}
		ss->weight
		    = ss->ipc ? fftd__config_weight(&s->cfg, ss->uid) : 1.0;
		ss->next    = s->sessions;
		s->sessions = ss;
		pthread_mutex_unlock(&s->mtx);
		atomic_fetch_add(&s->n_sessions, 1);
		char f_client[32], f_pid[40], f_uid[40];
		snprintf(f_client, sizeof(f_client), "FFTD_CLIENT=%u", id);
		snprintf(
		    f_pid, sizeof(f_pid), "FFTD_CLIENT_PID=%" PRIu64, ss->pid);
		snprintf(
		    f_uid, sizeof(f_uid), "FFTD_CLIENT_UID=%" PRIu64, ss->uid);
		const char *const fields[]
		    = { f_client, f_pid, f_uid, "FFTD_EVENT=connect", NULL };
		fftd__log_fields(FFTD_LOG_INFO, fields,
		    "client %u connected (pid %" PRIu64 ", uid %" PRIu64 ")",
		    id, ss->pid, ss->uid);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		pthread_mutex_lock(&s->mtx);
		for (fftd__refused **pp = &s->refused; *pp != NULL;
		     pp                 = &(*pp)->next) {
			if ((*pp)->pipe == id) {
				fftd__refused *r = *pp;
				*pp              = r->next;
				atomic_fetch_sub(&s->nrefused, 1);
				free(r);
				break;
			}
		}
		pthread_mutex_unlock(&s->mtx);
		fftd__session_close(s, id);
	}
}

// fftd__session_hello answers a Hello: protocol check, the devices, the
// algorithms, precisions and limits; it records the client's name.
void
fftd__session_hello(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Hello *hello)
{
	fftd__server *s = c->srv;
	if (hello->protocol_version != FFTD_PROTOCOL_VERSION) {
		fftd__ctx_reply_error(c, FFTD_EVERSION,
		    "client speaks protocol %u; this daemon speaks %u",
		    hello->protocol_version, FFTD_PROTOCOL_VERSION);
		return;
	}
	Fftd__Wire__Reply      r  = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__HelloReply hr = FFTD__WIRE__HELLO_REPLY__INIT;
	Fftd__Wire__Limits     lm = FFTD__WIRE__LIMITS__INIT;
	Fftd__Wire__Device     devs[FFTD_MAX_DEVICES];
	Fftd__Wire__Device    *pdevs[FFTD_MAX_DEVICES];
	const char            *algs[FFTD_MAX_ALGORITHMS];
	Fftd__Wire__Precision  precs[3] = { FFTD__WIRE__PRECISION__F64,
		 FFTD__WIRE__PRECISION__F32, FFTD__WIRE__PRECISION__F16 };
	size_t                 nd = 0, na = 0;
	bool                   f16 = false;
	for (int i = 0; i < s->nworkers && nd < FFTD_MAX_DEVICES; i++) {
		const fftd__device *dv = fftd__worker_device(s->workers[i]);
		Fftd__Wire__Device  d0 = FFTD__WIRE__DEVICE__INIT;
		devs[nd]               = d0;
		devs[nd].index         = (uint32_t) dv->index;
		devs[nd].name          = (char *) dv->name;
		devs[nd].backend       = (char *) dv->backend->name;
		devs[nd].memory_bytes  = dv->memory_bytes;
		pdevs[nd]              = &devs[nd];
		nd++;
		f16 |= strcmp(dv->backend->name, "fftw") != 0;
		for (const char *const *a = dv->backend->algorithms; *a; a++) {
			bool seen = false;
			for (size_t k = 0; k < na; k++) {
				seen |= strcmp(algs[k], *a) == 0;
			}
			if (!seen && na < FFTD_MAX_ALGORITHMS) {
				algs[na++] = *a;
			}
		}
	}
	pthread_mutex_lock(&s->mtx);
	lm.max_request_bytes           = s->limits.max_request_bytes;
	lm.max_rank                    = s->limits.max_rank;
	lm.max_batch                   = s->limits.max_batch;
	lm.max_plans_per_client        = s->max_plans;
	lm.max_inflight_per_client     = s->cfg.max_inflight_per_client;
	lm.max_queued_bytes_per_client = s->cfg.max_queued_bytes_per_client;
	fftd__session *ss              = fftd__session_find(s, pipe);
	if (ss != NULL && hello->client_name != NULL) {
		snprintf(
		    ss->st.name, sizeof(ss->st.name), "%s", hello->client_name);
	}
	pthread_mutex_unlock(&s->mtx);
	hr.protocol_version = FFTD_PROTOCOL_VERSION;
	hr.server_version   = FFTD_VERSION_STRING;
	hr.backend          = s->backend;
	hr.n_devices        = nd;
	hr.devices          = pdevs;
	hr.n_algorithms     = na;
	hr.algorithms       = (char **) algs;
	hr.n_precisions     = f16 ? 3 : 2;
	hr.precisions       = precs;
	hr.limits           = &lm;
	r.body_case         = FFTD__WIRE__REPLY__BODY_HELLO;
	r.hello             = &hr;
	fftd__ctx_reply(c, &r, 0, NULL);
}

// fftd__session_refused looks pipe up among the refused connections: why
// filled when it is one (else why[0] is '\0'), *hang_up when it was told
// already. A refused pipe is listed in ADD_PRE, before its first request
// can arrive; with none listed, this takes no lock.
void
fftd__session_refused(
    fftd__server *s, uint32_t pipe, char *why, size_t whylen, bool *hang_up)
{
	why[0]   = '\0';
	*hang_up = false;
	if (atomic_load(&s->nrefused) > 0) {
		pthread_mutex_lock(&s->mtx);
		for (fftd__refused *r = s->refused; r != NULL; r = r->next) {
			if (r->pipe == pipe) {
				snprintf(why, whylen, "%s", r->why);
				*hang_up = r->answered++ > 0;
				break;
			}
		}
		pthread_mutex_unlock(&s->mtx);
	}
}

// fftd__session_free_refused frees the list of refused connections
// (server destroy, main thread, once NNG is closed).
void
fftd__session_free_refused(fftd__server *s)
{
	while (s->refused != NULL) {
		fftd__refused *r = s->refused;
		s->refused       = r->next;
		free(r);
	}
}

// SPDX-License-Identifier: MIT
//
// reply.c — floor 0 of the NNG server (server_impl.h): answering a request
// on its NNG context, counting answers, the lookups every floor uses (a
// session by pipe, a plan or buffer by id, a lane's workers) and the end of
// a unit of the drain's accepted work. It calls no other file of the
// server. server.c keeps the rest of the context state machine (ctx_cb);
// fftd__ctx_send is its WORK → SEND step.
//
// Threads: any. Replies run on NNG's task threads (requests answered from
// their callback), on device workers and planners (plans and executions
// answered when done) and on the thread that drops an execution. Locks:
// fftd__ctx_send takes the context's lock, fftd__reply_count and
// fftd__busy_done the server lock; the lookups expect it held.

#include "server_impl.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

// fftd__ctx_send hands m to the context as its answer (WORK → SEND), or
// listens again when there is nothing to send.
void
fftd__ctx_send(fftd__ctx *c, nng_msg *m)
{
	pthread_mutex_lock(&c->mtx);
	if (m == NULL) {
		// Nothing could be built: drop the request and listen again.
		atomic_fetch_sub(&c->srv->busy, 1);
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
	} else {
		c->state = CTX_SEND;
		nng_aio_set_msg(c->aio, m);
		nng_ctx_send(c->ctx, c->aio);
	}
	pthread_mutex_unlock(&c->mtx);
}

// fftd__ctx_reply counts reply r and sends it on c; when even the reply
// cannot be built, a bodiless FFTD_ENOMEM goes instead.
void
fftd__ctx_reply(
    fftd__ctx *c, Fftd__Wire__Reply *r, uint64_t payload_len, void **payload)
{
	nng_msg *m;
	fftd__reply_count(c->srv, c->pipe, r->status);
	if (fftd__msg_build(&m, &r->base, payload_len, payload) != FFTD_OK) {
		// Out of memory even for the reply: answer without the body so
		// the client learns why instead of timing out.
		Fftd__Wire__Reply e = FFTD__WIRE__REPLY__INIT;
		e.status            = FFTD_ENOMEM;
		e.message           = "daemon out of memory for the reply";
		if (fftd__msg_build(&m, &e.base, 0, NULL) != FFTD_OK) {
			m = NULL;
		}
		if (payload) {
			*payload = NULL;
		}
	}
	fftd__ctx_send(c, m);
}

// fftd__ctx_reply_error answers c's request with status and a formatted
// message (logged at debug level).
void
fftd__ctx_reply_error(fftd__ctx *c, int status, const char *fmt, ...)
{
	char    msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fftd__log(FFTD_LOG_DEBUG, "request refused: %s: %s",
	    fftd_err_name(status), msg);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	r.status            = status;
	r.message           = msg;
	fftd__ctx_reply(c, &r, 0, NULL);
}

// fftd__ctx_exec_done answers an execution submitted on context arg:
// the reply it built, or the error (the completion exec.c calls).
void
fftd__ctx_exec_done(const fftd__exec_answer *a, int status, void *arg)
{
	fftd__ctx *c = arg;
	if (status != FFTD_OK) {
		fftd__ctx_reply_error(c, status, "%s", a->why);
		return;
	}
	fftd__reply_count(c->srv, a->pipe, FFTD_OK);
	fftd__ctx_send(c, a->msg);
}

// fftd__reply_count counts an answer in the daemon's and its client's totals.
void
fftd__reply_count(fftd__server *s, uint32_t pipe, int status)
{
	atomic_fetch_add(&s->n_requests, 1);
	if (status != FFTD_OK) {
		atomic_fetch_add(&s->n_errors, 1);
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	if (ss != NULL) {
		ss->st.requests++;
		ss->st.errors += status != FFTD_OK;
	}
	pthread_mutex_unlock(&s->mtx);
}

// fftd__session_find returns the open session of pipe id p (server lock held).
fftd__session *
fftd__session_find(fftd__server *s, uint32_t p)
{
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		if (ss->pipe == p) {
			return ss;
		}
	}
	return NULL;
}

// fftd__session_plan and fftd__session_buf look up session ss's (NULL: none)
// plan or buffer id, taking no reference (server lock held).
fftd__handle *
fftd__session_plan(fftd__session *ss, uint64_t id)
{
	fftd__handle *h = ss ? ss->plans : NULL;
	while (h != NULL && h->id != id) {
		h = h->next;
	}
	return h;
}

fftd__shbuf *
fftd__session_buf(fftd__session *ss, uint64_t id)
{
	fftd__shbuf *b = ss ? ss->bufs : NULL;
	while (b != NULL && b->id != id) {
		b = b->next;
	}
	return b;
}

// fftd__lane is the workers that serve plans of a priority class: realtime
// plans have the devices' realtime lanes when there are such.
fftd__worker **
fftd__lane(const fftd__server *s, int realtime)
{
	return realtime && s->rt_workers != NULL ? s->rt_workers : s->workers;
}

// fftd__busy_done ends one unit of accepted work; the drain waits for none
// left.
void
fftd__busy_done(fftd__server *s)
{
	atomic_fetch_sub(&s->busy, 1);
	if (atomic_load(&s->stopping)) {
		pthread_mutex_lock(&s->mtx);
		pthread_cond_broadcast(&s->drained);
		pthread_mutex_unlock(&s->mtx);
	}
}

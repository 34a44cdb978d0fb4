// SPDX-License-Identifier: MIT
//
// exec.c — executions: fftd_execute, fftd_execute_async(_opts), cancel, done,
// wait. Picks the endpoint (fewest in flight, waiting for a slot at the
// daemons' limits), sends the request with its payload inline, by
// reference into a shared buffer, or through a staging buffer (buffer.c),
// and completes it on NNG's callback: the output copied out, the callback
// run or the waiter woken. Streams (stream.c) use it when they have no
// stream channel.

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "client_impl.h"

// Set while a completion callback runs on a library I/O thread: such a
// thread must never wait for a free in-flight slot (the slot may need the
// very thread to complete).
static _Thread_local bool in_callback;

// request_free frees a completed request (its staging buffer back to the
// pool, its context and aio).
static void
request_free(fftd_request *req, bool from_callback)
{
	fftd__stage_release(req->client, req->stage);
	nng_ctx_close(req->ctx);
	if (from_callback) {
		nng_aio_reap(
		    req->aio); // cannot free an aio inside its callback
	} else {
		nng_aio_free(req->aio);
	}
	pthread_mutex_destroy(&req->mtx);
	pthread_cond_destroy(&req->cv);
	free(req);
}

// inflight_add lists a request whose slot pick_endpoint counted.
static void
inflight_add(fftd_client *c, fftd_request *req)
{
	pthread_mutex_lock(&c->mtx);
	req->prev_inflight = NULL;
	req->next_inflight = c->inflight;
	if (c->inflight != NULL) {
		c->inflight->prev_inflight = req;
	}
	c->inflight = req;
	pthread_mutex_unlock(&c->mtx);
}

// inflight_remove unlists a completed request.
static void
inflight_remove(fftd_client *c, fftd_request *req)
{
	pthread_mutex_lock(&c->mtx);
	if (req->prev_inflight != NULL) {
		req->prev_inflight->next_inflight = req->next_inflight;
	} else {
		c->inflight = req->next_inflight;
	}
	if (req->next_inflight != NULL) {
		req->next_inflight->prev_inflight = req->prev_inflight;
	}
	pthread_mutex_unlock(&c->mtx);
}

// inflight_done gives back the slot pick_endpoint counted on endpoint ep.
static void
inflight_done(fftd_client *c, int ep)
{
	pthread_mutex_lock(&c->mtx);
	c->ep[ep].ninflight--;
	if (--c->ninflight == 0) {
		pthread_cond_broadcast(&c->idle);
	}
	pthread_cond_broadcast(&c->slot);
	pthread_mutex_unlock(&c->mtx);
}

// request_finish completes a request: runs its callback and frees it, or
// wakes its waiter; then gives its in-flight slot back.
static void
request_finish(fftd_request *req, int status)
{
	fftd_client *c = req->client;
	inflight_remove(c, req);
	int ep = req->ep;
	if (status == FFTD_ECLOSED && atomic_load(&c->closed)) {
		snprintf(req->message, sizeof(req->message), "client closed");
	}
	if (status != FFTD_OK && c->nep > 1) { // say which daemon
		fftd__prefix_url(
		    req->message, sizeof(req->message), c->ep[ep].url);
	}
	if (req->cb != NULL) {
		// The caller's thread-local last error is not ours to set here;
		// the callback sees the status.
		in_callback = true;
		req->cb(req, status, req->data);
		in_callback = false;
		request_free(req, true);
		inflight_done(c, ep);
		return;
	}
	pthread_mutex_lock(&req->mtx);
	req->status = status;
	req->state  = REQ_DONE;
	pthread_cond_broadcast(&req->cv);
	pthread_mutex_unlock(&req->mtx);
	inflight_done(c, ep);
}

// conn_lost notes that the connection req went on dropped it (NNG's REQ
// fails a request whose pipe closes with NNG_ECONNRESET): the plans of
// that session are gone, and the pipe callback may come later than this
// completion, which lets the next submission in.
static void
conn_lost(fftd_request *req, int rv)
{
	if (rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT) {
		atomic_store(
		    &req->client->ep[req->ep].link->broken, req->epoch);
	}
}

// request_cb is the request's NNG callback: the send done, then the reply
// (checked, its output copied out) or the failure.
static void
request_cb(void *arg)
{
	fftd_request *req = arg;
	int           rv  = nng_aio_result(req->aio);
	if (req->state == REQ_SEND) {
		if (rv != 0) {
			conn_lost(req, rv);
			nng_msg_free(nng_aio_get_msg(req->aio));
			snprintf(req->message, sizeof(req->message),
			    "request not sent: %s",
			    rv == NNG_ECANCELED
			            && !atomic_load(&req->client->closed)
			        ? "the connection to the daemon dropped"
			        : nng_strerror(rv));
			request_finish(req, fftd__map_nng(rv));
			return;
		}
		atomic_store(&req->sent, true);
		// Under the mutex: fftd_request_wait and fftd_request_done
		// read the state on other threads.
		pthread_mutex_lock(&req->mtx);
		req->state = REQ_RECV; // also while closing: close drains
		pthread_mutex_unlock(&req->mtx);

		nng_ctx_recv(req->ctx, req->aio);
		return;
	}
	if (rv != 0) {
		conn_lost(req, rv);
		snprintf(req->message, sizeof(req->message),
		    "no answer from the daemon: %s", nng_strerror(rv));
		request_finish(req, fftd__map_nng(rv));
		return;
	}
	nng_msg           *m = nng_aio_get_msg(req->aio);
	fftd__frame        f;
	Fftd__Wire__Reply *r      = NULL;
	int                status = fftd__decode_reply(m, &r, &f);
	if (status == FFTD_OK && r->status != FFTD_OK) {
		status = r->status;
		snprintf(req->message, sizeof(req->message), "%s", r->message);
	} else if (status == FFTD_OK) {
		const fftd__shape *s    = &req->plan->shape;
		uint64_t           want = req->out_shared ? 0 : s->out.bytes;
		if (f.payload_len != want) {
			status = FFTD_EPROTO;
			snprintf(req->message, sizeof(req->message),
			    "reply carries %" PRIu64
			    " bytes; expected %" PRIu64,
			    f.payload_len, want);
		} else if (req->stage != NULL && s->out.dense) {
			fftd__par_memcpy(req->out,
			    (const uint8_t *) req->stage->addr + req->stage_out,
			    (size_t) s->out.bytes);
		} else if (req->stage != NULL) {
			fftd__side_copy(req->out,
			    (const uint8_t *) req->stage->addr + req->stage_out,
			    &s->out, s->rank, s->batch);
		} else if (!req->out_shared) {
			fftd__side_copy(
			    req->out, f.payload, &s->out, s->rank, s->batch);
		}
	} else {
		snprintf(
		    req->message, sizeof(req->message), "%s", fftd__last_error);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	nng_msg_free(m);
	request_finish(req, status);
}

// no_endpoint says why no endpoint is left for plan p (several daemons).
static int
no_endpoint(const fftd_client *c, const fftd_plan *p)
{
	for (int i = 0; i < c->nep; i++) {
		const ep_link *l = c->ep[i].link;
		if (p->epoch[i] != 0 && atomic_load(&l->pipe) != 0
		    && atomic_load(&l->epoch) != p->epoch[i]) {
			return fftd__set_error(FFTD_ENOPLAN,
			    "the plan's daemons are all gone; %s is back, on a "
			    "new connection without this plan (make it again)",
			    c->ep[i].url);
		}
	}
	return fftd__set_error(FFTD_ECLOSED,
	    "the plan's daemons are all disconnected (of %d; libfftd "
	    "reconnects by itself, but plans die with their connection)",
	    c->nep);
}

// pick_endpoint chooses the daemon of an execution of plan p and counts
// it in flight there: of the endpoints that may run p (fftd__ep_usable), the
// one with the fewest of this client's executions in flight, ties going round
// robin. While every one of them has its daemon's limit in flight the
// caller waits for a completion, so a deep pipeline waits instead of being
// refused (not on a callback thread: the slot may need that very thread).
static int
pick_endpoint(fftd_client *c, const fftd_plan *p, int *epp, uint64_t *epoch)
{
	pthread_mutex_lock(&c->mtx);
	for (;;) {
		if (atomic_load(&c->closed)) {
			pthread_mutex_unlock(&c->mtx);
			return fftd__set_error(
			    FFTD_ECLOSED, "the client is closed");
		}
		int best = -1, usable = 0;
		for (int k = 0; k < c->nep; k++) {
			int       i = (c->rr + k) % c->nep;
			endpoint *e = &c->ep[i];
			if (!fftd__ep_usable(c, p, i)) {
				continue;
			}
			usable++;
			if (e->limit != 0 && e->ninflight >= (int) e->limit
			    && !in_callback) {
				continue;
			}
			if (best < 0 || e->ninflight < c->ep[best].ninflight) {
				best = i;
			}
		}
		if (best >= 0) {
			c->ep[best].ninflight++;
			c->ninflight++;
			c->rr  = (best + 1) % c->nep;
			*epp   = best;
			*epoch = atomic_load(&c->ep[best].link->epoch);
			pthread_mutex_unlock(&c->mtx);
			return FFTD_OK;
		}
		if (usable == 0) {
			pthread_mutex_unlock(&c->mtx);
			return no_endpoint(c, p);
		}
		pthread_cond_wait(&c->slot, &c->mtx);
	}
}

// fftd_execute_async is fftd_execute_async_opts without options.
int
fftd_execute_async(const fftd_plan *plan, const void *in, void *out,
    fftd_callback cb, void *data, fftd_request **reqp)
{
	return fftd_execute_async_opts(plan, in, out, NULL, cb, data, reqp);
}

// fftd_execute_async_opts_sized starts an execution (fftd.h); opts, when
// not NULL, is the caller's fftd_exec_options of size bytes (fields it
// lacks are zero: none set).
int
fftd_execute_async_opts_sized(const fftd_plan *plan, const void *in, void *out,
    const fftd_exec_options *copts, size_t size, fftd_callback cb, void *data,
    fftd_request **reqp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	fftd_exec_options        full = { 0 };
	const fftd_exec_options *opts = NULL;
	if (copts != NULL) {
		if (!fftd__abi_size_ok(size)) {
			return fftd__set_error(FFTD_EINVAL,
			    "fftd_exec_options size %zu is bad", size);
		}
		fftd__abi_in(&full, sizeof(full), copts, size);
		opts = &full;
	}
	if (plan == NULL || in == NULL || out == NULL) {
		return fftd__set_error(FFTD_EINVAL, "plan, in or out is NULL");
	}
	if ((cb == NULL) == (reqp == NULL)) {
		return fftd__set_error(
		    FFTD_EINVAL, "give exactly one of cb and reqp");
	}
	if (opts != NULL && opts->deadline_us < 0) {
		return fftd__set_error(FFTD_EINVAL,
		    "deadline_us = %lld: must be >= 0",
		    (long long) opts->deadline_us);
	}
	int      ep    = 0;
	uint64_t epoch = 0;
	int      rv    = pick_endpoint(plan->client, plan, &ep, &epoch);
	if (rv != FFTD_OK) {
		return rv;
	}
	fftd_request *req = calloc(1, sizeof(*req));
	if (req == NULL) {
		inflight_done(plan->client, ep);
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	req->client = plan->client;
	req->ep     = ep;
	req->epoch  = epoch;
	req->plan   = plan;
	req->out    = out;
	req->cb     = cb;
	req->data   = data;
	pthread_mutex_init(&req->mtx, NULL);
	pthread_cond_init(&req->cv, NULL);

	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = plan->id[ep];
	req->tag       = atomic_fetch_add(&plan->client->next_tag, 1) + 1;
	ex.tag         = req->tag;
	ex.deadline_us = opts != NULL ? (uint64_t) opts->deadline_us : 0;
	wr.body_case   = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	wr.execute     = &ex;
	// Arrays inside this client's shared buffers go by reference.
	fftd__buffer_find(plan->client, in, plan->shape.in.bytes,
	    plan->shape.in.elem_size, &ex.in_buffer, &ex.in_offset);
	req->out_shared
	    = fftd__buffer_find(plan->client, out, plan->shape.out.bytes,
	        plan->shape.out.elem_size, &ex.out_buffer, &ex.out_offset);
	if (!ex.in_buffer && !req->out_shared
	    && plan->shape.in.bytes >= plan->client->stage_min) {
		uint64_t in_span
		    = (plan->shape.in.bytes + 4095) & ~(uint64_t) 4095;
		req->stage = fftd__stage_acquire(
		    plan->client, in_span + plan->shape.out.bytes);
		if (req->stage != NULL) {
			fftd__par_memcpy(req->stage->addr, in,
			    (size_t) plan->shape.in.bytes);
			ex.in_buffer    = req->stage->id;
			ex.in_offset    = 0;
			ex.out_buffer   = req->stage->id;
			ex.out_offset   = in_span;
			req->stage_out  = in_span;
			req->out_shared = true; // the reply carries no payload
		}
	}
	uint64_t inline_bytes = ex.in_buffer ? 0 : plan->shape.in.bytes;
	nng_msg *m;
	void    *payload;
	rv = fftd__msg_build(&m, &wr.base, inline_bytes, &payload);
	if (rv != FFTD_OK) {
		fftd__stage_release(plan->client, req->stage);
		pthread_mutex_destroy(&req->mtx);
		pthread_cond_destroy(&req->cv);
		free(req);
		inflight_done(plan->client, ep);
		return fftd__set_error(rv,
		    "cannot build a %" PRIu64 "-byte request",
		    plan->shape.in.bytes);
	}
	if (inline_bytes) {
		memcpy(payload, in, (size_t) inline_bytes);
	}
	if ((rv = nng_aio_alloc(&req->aio, request_cb, req)) != 0
	    || (rv = nng_ctx_open(&req->ctx, plan->client->ep[ep].sock)) != 0) {
		if (req->aio != NULL) {
			nng_aio_free(req->aio);
		}
		nng_msg_free(m);
		fftd__stage_release(plan->client, req->stage);
		pthread_mutex_destroy(&req->mtx);
		pthread_cond_destroy(&req->cv);
		free(req);
		inflight_done(plan->client, ep);
		return fftd__set_error(
		    fftd__map_nng(rv), "%s", nng_strerror(rv));
	}
	nng_aio_set_timeout(req->aio, plan->client->timeout);
	nng_aio_set_msg(req->aio, m);
	req->state = REQ_SEND;
	if (reqp != NULL) {
		*reqp = req; // before the send: the callback may finish at once
	}
	inflight_add(plan->client, req);
	nng_ctx_send(req->ctx, req->aio);
	return FFTD_OK;
}

// fftd_request_cancel asks the request's daemon to drop it (fftd.h).
int
fftd_request_cancel(fftd_request *req)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (req == NULL || req->cb != NULL) {
		return fftd__set_error(
		    FFTD_EINVAL, "req is NULL or completes through a callback");
	}
	if (fftd_request_done(req)) {
		return fftd__set_error(FFTD_EBUSY, "the request has completed");
	}
	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Cancel  cr = FFTD__WIRE__CANCEL__INIT;
	cr.tag                 = req->tag;
	wr.body_case           = FFTD__WIRE__REQUEST__BODY_CANCEL;
	wr.cancel              = &cr;
	Fftd__Wire__Reply *r   = NULL;
	// To the daemon the request went to: tags name requests per session.
	int rv = fftd__rpc_on(req->client, req->ep, &wr, &r);
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv == FFTD_OK ? rv : fftd__url_error(req->client, req->ep, rv);
}

// fftd_request_done says whether the request has completed.
int
fftd_request_done(fftd_request *req)
{
	if (req == NULL) {
		return 1;
	}
	if (fftd__forked()) {
		return 1; // it never completes here: fftd_request_wait says why
	}
	pthread_mutex_lock(&req->mtx);
	int done = req->state == REQ_DONE;
	pthread_mutex_unlock(&req->mtx);
	return done;
}

// fftd_request_wait waits for the request, frees it, returns its status.
int
fftd_request_wait(fftd_request *req)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (req == NULL) {
		return fftd__set_error(FFTD_EINVAL, "req is NULL");
	}
	pthread_mutex_lock(&req->mtx);
	while (req->state != REQ_DONE) {
		pthread_cond_wait(&req->cv, &req->mtx);
	}
	pthread_mutex_unlock(&req->mtx);
	int status = req->status;
	if (status != FFTD_OK) {
		fftd__set_error(status, "%s", req->message);
	}
	request_free(req, false);
	return status;
}

// fftd_execute is fftd_execute_async and fftd_request_wait.
int
fftd_execute(const fftd_plan *plan, const void *in, void *out)
{
	fftd_request *req;
	int           rv = fftd_execute_async(plan, in, out, NULL, NULL, &req);
	if (rv != FFTD_OK) {
		return rv;
	}
	return fftd_request_wait(req);
}

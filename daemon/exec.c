// SPDX-License-Identifier: MIT
//
// exec.c — floor 4 of the NNG server (server_impl.h): executions. Their two
// submitters (an Execute request on an NNG context, a packet on a stream
// channel), placement on a device, admission against the client's limits,
// the run on the device's worker (planning first where needed), settling
// the client's books, dropping and canceling. An execution does not know
// who asked: it answers through the completion callback its submitter set
// (fftd__ctx_exec_done in reply.c, fftd__stream_exec_done in stream.c),
// after releasing its plan, buffer and array references in their own
// files. An execution on resident arrays (Execute's in_array and
// out_array) runs on the arrays' device with no payload and no staging
// (the backend's execute_device). The worker (worker.h) calls this file's
// job functions, never server.c. Calls reply.c, plan.c, buffer.c, array.c
// and stream.c.
//
// Threads: fftd__exec_request and fftd__exec_cancel run on NNG's task
// threads; fftd__exec_stream_packet on the stream poller's thread;
// exec_job_run on the device's worker; exec_plan_run on its planner;
// exec_job_drop on the thread that drops the job (worker.h). Locks:
// admission and the post to the worker happen under the server lock, so a
// client that disconnects either finds the job queued or the job finds no
// session; settling takes it too. The running execution holds no lock.

#include "server_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

// An execution: one transform of a plan, from its submission to its
// answer. References: one to its plan, one per shared buffer it names (two
// when both arrays are in one buffer), one per resident array it names
// (two when both sides are in one), and, for a stream channel's, one to
// the channel (done_arg's); the plan's and buffers' go before the answer,
// the channel's with it.
typedef struct fftd__exec {
	fftd__job     job; // must be first
	fftd__server *srv;
	// Who answers, set by the submitter: done(answer, status, done_arg),
	// fftd__ctx_exec_done with its NNG context or
	// fftd__stream_exec_done with its stream channel.
	fftd__exec_done_fn done;
	void              *done_arg;
	bool               nng_answer;  // answered by an NNG message built here
	bool               own_work;    // in busy from admission (a channel's)
	uint32_t           slot;        // the channel's slot
	uint64_t           received_ns; // when the channel thread read it
	fftd__handle      *h;
	nng_msg           *req;
	void              *payload;    // inline input, or NULL
	fftd__shbuf       *inb, *outb; // shared buffers, or NULL
	fftd__array       *ina, *outa; // resident arrays (both), or NULL
	uint64_t           in_off, out_off;
	uint64_t inline_bytes; // counted in the session's queued_bytes
	uint64_t deadline_us;
	bool     moved; // re-posted to the plan's home device
	// Planned on this device's planner thread first (exec_plan_run):
	// how that went.
	bool planned;
	int  plan_rv;
	char plan_msg[200];
} fftd__exec;

// fftd__exec_cancel_all drops the queued jobs of pipe with tag (0: all) on
// every worker of every lane.
int
fftd__exec_cancel_all(fftd__server *s, uint32_t pipe, uint64_t tag, int status)
{
	int n = 0;
	for (int i = 0; i < s->nworkers; i++) {
		n += fftd__worker_cancel(s->workers[i], pipe, tag, status);
		if (s->rt_workers != NULL) {
			n += fftd__worker_cancel(
			    s->rt_workers[i], pipe, tag, status);
		}
	}
	return n;
}

// fftd__exec_cancel drops the queued execution with a tag; one already
// started runs to its end.
void
fftd__exec_cancel(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Cancel *cr)
{
	fftd__server *s = c->srv;
	if (cr->tag == 0) {
		fftd__ctx_reply_error(
		    c, FFTD_EINVAL, "cancel needs a request tag");
		return;
	}
	int n = fftd__exec_cancel_all(s, pipe, cr->tag, FFTD_ECANCELED);
	if (n == 0) {
		fftd__ctx_reply_error(c, FFTD_EBUSY,
		    "request %" PRIu64 " is not queued (started, answered or "
		    "unknown)",
		    cr->tag);
		return;
	}
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	fftd__ctx_reply(c, &r, 0, NULL);
}

// exec_cost_guess is the expected device time of one execution of h: its
// measured average, else a guess from its bytes (10 GB/s).
static uint64_t
exec_cost_guess(const fftd__handle *h)
{
	uint64_t est = atomic_load(&((fftd__handle *) h)->est_ns);
	if (est != 0) {
		return est;
	}
	return (h->shape.in.bytes + h->shape.out.bytes) / 10 + 1000;
}

// place picks the worker for an execution of h: its home when pinned, else
// the one whose queued work ends first, counting a planning cost where the
// plan is not made yet.
static int
place(fftd__server *s, const fftd__handle *h)
{
	if (h->pinned || s->nworkers == 1) {
		return h->home;
	}
	uint64_t       cost = exec_cost_guess(h);
	int            best = h->home;
	uint64_t       bval = UINT64_MAX;
	fftd__worker **ws   = fftd__lane(s, h->realtime);
	for (int i = 0; i < s->nworkers; i++) {
		uint64_t v = fftd__worker_backlog_ns(ws[i]) + cost;
		if (atomic_load(&((fftd__handle *) h)->entries[i]) == NULL) {
			v += 2000000 + cost; // planning there first
		}
		if (v < bval) {
			bval = v;
			best = i;
		}
	}
	return best;
}

// overlaps says whether two byte ranges share a byte.
static bool
overlaps(const void *a, uint64_t alen, const void *b, uint64_t blen)
{
	uintptr_t x = (uintptr_t) a, y = (uintptr_t) b;
	return x < y + blen && y < x + alen;
}

// exec_settle takes an execution off its client's books (in flight,
// queued bytes) and records how it went, before it is answered, so the
// client sees settled counts. status is FFTD_OK for an execution that ran.
static void
exec_settle(fftd__server *s, const fftd__exec *ej, int status,
    uint64_t queue_ns, uint64_t device_ns)
{
	const fftd__shape *sh = &ej->h->shape;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, ej->h->pipe);
	if (ss != NULL) {
		ss->st.inflight--;
		ss->queued_bytes -= ej->inline_bytes;
		if (status == FFTD_OK) {
			double q = (double) queue_ns * 1e-9;
			double d = (double) device_ns * 1e-9;
			ss->st.executes++;
			ss->st.bytes_in += sh->in.bytes;
			ss->st.bytes_out += sh->out.bytes;
			ss->st.queue_seconds += q;
			ss->st.device_seconds += d;
			ss->st.queue_hist[fftd__hist_bucket(q)]++;
			ss->st.device_hist[fftd__hist_bucket(d)]++;
		} else if (status == FFTD_ECANCELED || status == FFTD_ECLOSED) {
			ss->st.canceled++;
		} else if (status == FFTD_EDEADLINE) {
			ss->st.expired++;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (status == FFTD_ECANCELED || status == FFTD_ECLOSED) {
		atomic_fetch_add(&s->n_canceled, 1);
	} else if (status == FFTD_EDEADLINE) {
		atomic_fetch_add(&s->n_expired, 1);
	}
}

// exec_answer_error answers an execution that failed or did not run
// through the completion its submitter set (done with arg), with why.
static void exec_answer_error(fftd__exec_done_fn done, void *arg, uint32_t pipe,
    uint64_t tag, uint32_t slot, int status, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static void
exec_answer_error(fftd__exec_done_fn done, void *arg, uint32_t pipe,
    uint64_t tag, uint32_t slot, int status, const char *fmt, ...)
{
	char    msg[240];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fftd__exec_answer a = { 0 };
	a.pipe              = pipe;
	a.tag               = tag;
	a.slot              = slot;
	a.why               = msg;
	done(&a, status, arg);
}

// exec_job_drop answers an execution that will not run (worker.h).
static void
exec_job_drop(fftd__worker *w, fftd__job *job, int status)
{
	(void) w;
	fftd__exec        *ej     = (fftd__exec *) job;
	fftd__exec_done_fn answer = ej->done;
	void              *arg    = ej->done_arg;
	uint32_t           pipe   = ej->h->pipe;
	fftd__server      *s      = ej->srv;
	uint64_t           tag    = job->tag;
	uint32_t           slot   = ej->slot;
	uint64_t           waited = (fftd__mono_ns() - job->enqueue_ns) / 1000;
	exec_settle(s, ej, status, 0, 0);
	if (ej->req != NULL) {
		nng_msg_free(ej->req);
	}
	fftd__plan_unref(s, ej->h);
	fftd__buf_unref(s, ej->inb);
	fftd__buf_unref(s, ej->outb);
	fftd__array_unref(s, ej->ina);
	fftd__array_touch(ej->outa); // its write dropped
	fftd__array_unref(s, ej->outa);
	uint64_t deadline_us = ej->deadline_us;
	free(ej);
	switch (status) {
	case FFTD_EDEADLINE:
		exec_answer_error(answer, arg, pipe, tag, slot, status,
		    "deadline of %" PRIu64 " us passed before the transform "
		    "could start (queued %" PRIu64 " us behind earlier work)",
		    deadline_us, waited);
		break;
	case FFTD_ECANCELED:
		exec_answer_error(answer, arg, pipe, tag, slot, status,
		    "canceled by the client before it "
		    "started");
		break;
	case FFTD_ECLOSED:
		exec_answer_error(
		    answer, arg, pipe, tag, slot, status, "client went away");
		break;
	default:
		exec_answer_error(answer, arg, pipe, tag, slot, status,
		    "not run: %s", fftd_strerror(status));
		break;
	}
}

static void exec_job_run(fftd__worker *w, fftd__job *job);

// exec_plan_run plans an execution's plan on the planner thread of the
// device it was placed on, then hands the execution back to the device's
// worker (exec_job_run), which runs it or answers the planning error.
static void
exec_plan_run(fftd__worker *w, fftd__job *job)
{
	fftd__exec   *ej = (fftd__exec *) job;
	fftd__handle *h  = ej->h;
	int           wi = fftd__worker_device(w)->index;
	ej->plan_rv      = FFTD_OK;
	ej->plan_msg[0]  = '\0';
	// Only this thread sets entries[wi] (planning is serial here).
	if (atomic_load(&h->entries[wi]) == NULL) {
		fftd__cache_entry *e = NULL;
		ej->plan_rv
		    = fftd__cache_acquire(fftd__worker_cache(w), &h->shape,
		        h->algorithm, &e, ej->plan_msg, sizeof(ej->plan_msg));
		if (ej->plan_rv == FFTD_OK) {
			atomic_store(&h->entries[wi], e);
		}
	}
	job->fn = exec_job_run;
	fftd__worker_post(w, job);
}

// exec_job_run runs one execution on its device's worker: plans it there
// on first use, stages its input, executes, settles and answers it.
static void
exec_job_run(fftd__worker *w, fftd__job *job)
{
	fftd__exec         *ej          = (fftd__exec *) job;
	fftd__handle       *h           = ej->h;
	fftd__exec_done_fn  answer      = ej->done;
	void               *arg         = ej->done_arg;
	bool                nng_answer  = ej->nng_answer;
	fftd__server       *s           = ej->srv;
	uint64_t            tag         = job->tag;
	uint32_t            slot        = ej->slot;
	uint64_t            received_ns = ej->received_ns;
	fftd__shbuf        *inb = ej->inb, *outb = ej->outb;
	fftd__array        *ina = ej->ina, *outa = ej->outa;
	const fftd__shape  *sh  = &h->shape;
	const fftd__device *dev = fftd__worker_device(w);
	void    *in     = inb ? (char *) inb->addr + ej->in_off : ej->payload;
	void    *dst    = outb ? (char *) outb->addr + ej->out_off : NULL;
	void    *tmp_in = NULL, *tmp_out = NULL;
	nng_msg *m        = NULL;
	void    *out      = NULL;
	char     msg[512] = "";
	int      rv       = FFTD_OK;
	uint64_t t_start = fftd__mono_ns(), t_exec = 0;
	int      wi = dev->index; // its place in s->workers

	pthread_mutex_lock(&s->mtx);
	bool alive = fftd__session_find(s, h->pipe) != NULL;
	pthread_mutex_unlock(&s->mtx);
	if (!alive) {
		// Nobody will read the answer; skip the work.
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "client went away");
		goto done;
	}
	fftd__cache_entry *entry = atomic_load(&h->entries[wi]);
	if (entry == NULL && !ej->planned && fftd__worker_on_planner(w)) {
		// First execution of this plan on this device: it is planned
		// on the device's planner thread and comes back here.
		ej->planned = true;
		job->fn     = exec_plan_run;
		fftd__worker_post_plan(w, job);
		return;
	}
	if (entry == NULL && ej->planned) {
		rv = ej->plan_rv != FFTD_OK ? ej->plan_rv : FFTD_EINTERNAL;
		snprintf(msg, sizeof(msg), "%s", ej->plan_msg);
	}
	if (entry == NULL) {
		// First execution of this plan on this device: plan it here
		// (when the backend plans on the worker).
		if (!ej->planned) {
			rv = fftd__cache_acquire(fftd__worker_cache(w), sh,
			    h->algorithm, &entry, msg, sizeof(msg));
		}
		if (rv != FFTD_OK && !ej->moved && wi != h->home
		    && ina == NULL) {
			// This device cannot take it (memory): the plan's
			// home device can, as it planned it.
			fftd__log(FFTD_LOG_DEBUG,
			    "plan %" PRIu64 " cannot be made on %s (%s); "
			    "running it on its home device",
			    h->id, dev->name, msg);
			ej->moved = true;
			fftd__worker_post(
			    fftd__lane(s, h->realtime)[h->home], &ej->job);
			return;
		}
		if (rv != FFTD_OK) {
			goto done;
		}
		atomic_store(&h->entries[wi], entry);
	}
	if (ina != NULL) {
		// Resident arrays: no payload, no staging, no copy.
		in = (char *) ina->ptr + ej->in_off;
	} else if (inb != NULL
	    && (dev->backend->aligned_input
	        || (dst != NULL
	            && overlaps(in, sh->in.bytes, dst, sh->out.bytes)))) {
		// The client's input must survive: FFTW's C2R overwrites its
		// input, and an output that overlaps it would be written while
		// it is still read. One copy keeps both safe.
		tmp_in = aligned_alloc(FFTD__WIRE_ALIGN,
		    (sh->in.bytes + FFTD__WIRE_ALIGN - 1)
		        & ~(uint64_t) (FFTD__WIRE_ALIGN - 1));
		if (tmp_in == NULL) {
			rv = FFTD_ENOMEM;
			goto done;
		}
		memcpy(tmp_in, in, (size_t) sh->in.bytes);
		in = tmp_in;
	} else if (inb == NULL && dev->backend->aligned_input
	    && ((uintptr_t) in % FFTD__WIRE_ALIGN)) {
		// The frame keeps at least 64 bytes before the payload, so an
		// aligned place always exists in front of it.
		void *to = (void *) ((uintptr_t) in
		    & ~(uintptr_t) (FFTD__WIRE_ALIGN - 1));
		memmove(to, in, (size_t) sh->in.bytes);
		in = to;
	}
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	if (outa != NULL) {
		rv  = nng_answer ? fftd__msg_build(&m, &r.base, 0, NULL)
		                 : FFTD_OK;
		out = (char *) outa->ptr + ej->out_off;
	} else if (dst == NULL) {
		rv = fftd__msg_build(&m, &r.base, sh->out.bytes, &out);
	} else if (sh->out.dense) {
		// A stream channel's answer is no NNG message.
		rv  = nng_answer ? fftd__msg_build(&m, &r.base, 0, NULL)
		                 : FFTD_OK;
		out = dst; // straight into the client's pages
	} else {
		// Only the layout's elements may change in the client's buffer.
		rv  = nng_answer ? fftd__msg_build(&m, &r.base, 0, NULL)
		                 : FFTD_OK;
		out = tmp_out = aligned_alloc(FFTD__WIRE_ALIGN,
		    (sh->out.bytes + FFTD__WIRE_ALIGN - 1)
		        & ~(uint64_t) (FFTD__WIRE_ALIGN - 1));
	}
	if (rv != FFTD_OK || out == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg),
		    "daemon out of memory for a %" PRIu64 "-byte result",
		    sh->out.bytes);
		goto done;
	}
	uint64_t t0 = fftd__mono_ns();
	if (ina != NULL) {
		rv = dev->backend->execute_device((fftd__device *) dev,
		    fftd__cache_plan(entry), sh, in, out, msg, sizeof(msg));
	} else {
		rv = dev->backend->execute((fftd__device *) dev,
		    fftd__cache_plan(entry), sh, in, out, msg, sizeof(msg));
	}
	t_exec = fftd__mono_ns() - t0; // the transform's own, for est_ns
	if (rv == FFTD_OK && tmp_out != NULL) {
		fftd__side_copy(dst, tmp_out, &sh->out, sh->rank, sh->batch);
	}
	if (rv == FFTD_OK) {
		uint64_t est = atomic_load(&h->est_ns);
		atomic_store(&h->est_ns, est ? (3 * est + t_exec) / 4 : t_exec);
	} else {
		char f_dev[80], f_err[48];
		snprintf(f_dev, sizeof(f_dev), "FFTD_DEVICE=%s", dev->name);
		snprintf(
		    f_err, sizeof(f_err), "FFTD_ERROR=%s", fftd_err_name(rv));
		const char *const fields[]
		    = { f_dev, f_err, "FFTD_EVENT=execute_failed", NULL };
		fftd__log_fields(FFTD_LOG_WARN, fields,
		    "execute on %s failed: %s: %s", dev->name,
		    fftd_err_name(rv), msg);
	}
done:
	// Device time is the worker's time on this request, staging and reply
	// included: what the scheduler charges is what the statistics say.
	uint64_t t_end = fftd__mono_ns();
	t_exec         = t_end - t_start;
	fftd__worker_charge(w, t_exec);
	exec_settle(s, ej, rv, t_start - job->enqueue_ns, t_exec);
	if (ej->req != NULL) {
		nng_msg_free(ej->req);
	}
	free(ej);
	free(tmp_in);
	free(tmp_out);
	uint64_t out_bytes = sh->out.bytes;
	uint32_t pipe      = h->pipe;
	// References go before the answer, so the client sees settled counts.
	fftd__plan_unref(s, h);
	fftd__buf_unref(s, inb);
	fftd__buf_unref(s, outb);
	fftd__array_unref(s, ina);
	fftd__array_touch(outa); // its write done
	fftd__array_unref(s, outa);
	if (rv != FFTD_OK) {
		if (m != NULL) {
			nng_msg_free(m);
		}
		exec_answer_error(answer, arg, pipe, tag, slot, rv, "%s",
		    msg[0] ? msg : fftd_strerror(rv));
	} else {
		atomic_fetch_add(&s->n_executes, 1);
		atomic_fetch_add(&s->n_bytes_out, out_bytes);
		const uint64_t    times[3] = { received_ns, t_start, t_end };
		fftd__exec_answer a        = { 0 };
		a.pipe                     = pipe;
		a.tag                      = tag;
		a.slot                     = slot;
		a.times                    = times;
		a.msg                      = m; // NULL: a stream channel's
		answer(&a, FFTD_OK, arg);
	}
}

// check_range validates an array of `bytes` bytes at `off` in buffer b,
// for elements of elem_size bytes.
static int
check_range(const fftd__shbuf *b, uint64_t off, uint64_t bytes,
    size_t elem_size, const char *side, char *msg, size_t msglen)
{
	if (bytes > b->size || off > b->size - bytes) {
		snprintf(msg, msglen,
		    "%sput of %" PRIu64 " bytes at offset %" PRIu64
		    " does not fit buffer %" PRIu64 " (%zu bytes)",
		    side, bytes, off, b->id, b->size);
		return FFTD_EINVAL;
	}
	if (off % elem_size) {
		snprintf(msg, msglen,
		    "%sput offset %" PRIu64 " is not a multiple of the element "
		    "size %zu",
		    side, off, elem_size);
		return FFTD_EINVAL;
	}
	return FFTD_OK;
}

// check_arrays validates an Execute on resident arrays (both sides named,
// nothing else, on one device that the plan may run on, spans inside the
// arrays and apart from each other, a backend that executes on device
// memory), its arrays ina and outa found.
static int
check_arrays(fftd__server *s, const fftd__handle *h,
    const Fftd__Wire__Execute *ex, const fftd__frame *f, const fftd__array *ina,
    const fftd__array *outa, char *msg, size_t msglen)
{
	const fftd__shape *sh = &h->shape;
	if (ex->in_array == 0 || ex->out_array == 0) {
		snprintf(msg, msglen,
		    "an execution takes both its input and its output in "
		    "resident arrays, or neither");
		return FFTD_EUNSUPPORTED;
	}
	if (ex->in_buffer != 0 || ex->out_buffer != 0 || f->payload_len != 0) {
		snprintf(msg, msglen,
		    "an execution on arrays names no buffer and carries no "
		    "payload");
		return FFTD_EPROTO;
	}
	uint64_t id = ina == NULL ? ex->in_array : ex->out_array;
	if (ina == NULL || outa == NULL) {
		snprintf(msg, msglen,
		    "array %" PRIu64 " does not exist on this connection", id);
		return FFTD_EINVAL;
	}
	if (ina->wi != outa->wi) {
		snprintf(msg, msglen,
		    "input array %" PRIu64 " is on device %d, output array "
		    "%" PRIu64 " on device %d: both must be on one",
		    ina->id, ina->wi, outa->id, outa->wi);
		return FFTD_EINVAL;
	}
	if (h->pinned && h->home != ina->wi) {
		snprintf(msg, msglen,
		    "plan %" PRIu64 " is pinned to device %d; the arrays are "
		    "on device %d",
		    h->id, h->home, ina->wi);
		return FFTD_EINVAL;
	}
	const fftd__device *dev
	    = fftd__worker_device(fftd__lane(s, h->realtime)[ina->wi]);
	if (dev->backend->execute_device == NULL) {
		snprintf(msg, msglen, "the %s backend cannot execute on arrays",
		    dev->backend->name);
		return FFTD_EUNSUPPORTED;
	}
	int rv = fftd__array_span(ina, ex->in_offset, sh->in.bytes,
	    sh->in.elem_size, "input", msg, msglen);
	if (rv == FFTD_OK) {
		rv = fftd__array_span(outa, ex->out_offset, sh->out.bytes,
		    sh->out.elem_size, "output", msg, msglen);
	}
	if (rv == FFTD_OK && ina == outa
	    && ex->in_offset < ex->out_offset + sh->out.bytes
	    && ex->out_offset < ex->in_offset + sh->in.bytes) {
		snprintf(msg, msglen,
		    "input and output overlap in array %" PRIu64
		    ": executions on arrays are out of place",
		    ina->id);
		rv = FFTD_EINVAL;
	}
	return rv;
}

// exec_job_init fills the parts of an execution that do not depend on
// where its arrays are or where its answer goes.
static void
exec_job_init(fftd__exec *ej, fftd__server *s, fftd__handle *h, uint32_t pipe,
    uint64_t tag, uint64_t deadline_us)
{
	ej->job.fn          = exec_job_run;
	ej->job.drop        = exec_job_drop;
	ej->job.flow        = pipe;
	ej->job.realtime    = h->realtime;
	ej->job.tag         = tag;
	ej->job.cost_ns     = exec_cost_guess(h);
	ej->job.deadline_ns = deadline_us == 0 ? 0
	                                       : fftd__mono_ns()
	        + (deadline_us > UINT64_MAX / 4000 ? UINT64_MAX / 4
	                                           : deadline_us * 1000);
	ej->srv             = s;
	ej->h               = h;
	ej->deadline_us     = deadline_us;
}

// exec_admit checks an execution against its client's limits and posts it
// to a device of its lane. Admission and the post happen under the server
// lock, so a client that disconnects now either finds the job queued (and
// drops it) or the job finds no session. A stream channel's job counts as
// accepted work for the drain from here on.
static int
exec_admit(
    fftd__server *s, uint32_t pipe, fftd__exec *ej, char *msg, size_t msglen)
{
	fftd__handle *h  = ej->h;
	int           wi = ej->ina != NULL ? ej->ina->wi : place(s, h);
	int           rv = FFTD_OK;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, msglen, "client went away");
	} else if (ss->st.inflight >= s->cfg.max_inflight_per_client) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "this connection has %u executions in flight, the "
		    "limit (limits.max_inflight_per_client)",
		    ss->st.inflight);
	} else if (ss->st.inflight > 0
	    && ss->queued_bytes + ej->inline_bytes
	        > s->cfg.max_queued_bytes_per_client) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "this connection has %" PRIu64
		    " input bytes queued; %" PRIu64
		    " more exceed the limit %" PRIu64
		    " (limits.max_queued_bytes_per_client)",
		    ss->queued_bytes, ej->inline_bytes,
		    s->cfg.max_queued_bytes_per_client);
	} else {
		ss->st.inflight++;
		ss->queued_bytes += ej->inline_bytes;
		ej->job.weight = ss->weight;
		atomic_fetch_add(&s->n_bytes_in, h->shape.in.bytes);
		if (ej->own_work) {
			atomic_fetch_add(&s->busy, 1);
		}
		fftd__worker_post(fftd__lane(s, h->realtime)[wi], &ej->job);
	}
	pthread_mutex_unlock(&s->mtx);
	return rv;
}

// fftd__exec_request validates an Execute (plan, buffers, ranges,
// payload) and admits it; it takes req, which carries the inline input.
void
fftd__exec_request(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Execute *ex,
    nng_msg *req, const fftd__frame *f)
{
	fftd__server *s   = c->srv;
	fftd__shbuf  *inb = NULL, *outb = NULL;
	fftd__array  *ina = NULL, *outa = NULL;
	bool          arrays = ex->in_array != 0 || ex->out_array != 0;
	int           rv     = FFTD_OK;
	char          msg[512];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	fftd__handle  *h  = fftd__session_plan(ss, ex->plan_id);
	if (h != NULL && arrays) {
		atomic_fetch_add(&h->refs, 1);
		ina  = ex->in_array ? fftd__array_find(ss, ex->in_array) : NULL;
		outa = ex->out_array ? fftd__array_find(ss, ex->out_array)
		                     : NULL;
	} else if (h != NULL) {
		atomic_fetch_add(&h->refs, 1);
		if (ex->in_buffer != 0
		    && (inb = fftd__buf_find(ss, ex->in_buffer)) == NULL) {
			rv = FFTD_EINVAL;
			snprintf(msg, sizeof(msg),
			    "buffer %" PRIu64
			    " does not exist on this connection",
			    ex->in_buffer);
		}
		if (ex->out_buffer != 0
		    && (outb = fftd__buf_find(ss, ex->out_buffer)) == NULL) {
			rv = FFTD_EINVAL;
			snprintf(msg, sizeof(msg),
			    "buffer %" PRIu64
			    " does not exist on this connection",
			    ex->out_buffer);
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (h == NULL) {
		nng_msg_free(req);
		fftd__ctx_reply_error(c, FFTD_ENOPLAN,
		    "plan %" PRIu64 " does not exist on this connection",
		    ex->plan_id);
		return;
	}
	const fftd__shape *sh = &h->shape;
	if (arrays) {
		rv = check_arrays(s, h, ex, f, ina, outa, msg, sizeof(msg));
	} else if (rv == FFTD_OK && inb != NULL) {
		rv = f->payload_len != 0 ? FFTD_EPROTO : FFTD_OK;
		snprintf(msg, sizeof(msg), "input both in a buffer and inline");
		if (rv == FFTD_OK) {
			rv = check_range(inb, ex->in_offset, sh->in.bytes,
			    sh->in.elem_size, "in", msg, sizeof(msg));
		}
	} else if (rv == FFTD_OK && f->payload_len != sh->in.bytes) {
		rv = FFTD_ESIZE;
		snprintf(msg, sizeof(msg),
		    "payload is %" PRIu64
		    " bytes; the plan's input is %" PRIu64,
		    f->payload_len, sh->in.bytes);
	}
	if (rv == FFTD_OK && outb != NULL && !arrays) {
		rv = check_range(outb, ex->out_offset, sh->out.bytes,
		    sh->out.elem_size, "out", msg, sizeof(msg));
	}
	fftd__exec *ej = NULL;
	if (rv == FFTD_OK && (ej = calloc(1, sizeof(*ej))) == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg), "daemon out of memory");
	}
	if (rv == FFTD_OK) {
		exec_job_init(ej, s, h, pipe, ex->tag, ex->deadline_us);
		ej->done         = fftd__ctx_exec_done;
		ej->done_arg     = c;
		ej->nng_answer   = true;
		ej->req          = req;
		ej->payload      = f->payload;
		ej->inb          = inb;
		ej->outb         = outb;
		ej->ina          = ina;
		ej->outa         = outa;
		ej->in_off       = ex->in_offset;
		ej->out_off      = ex->out_offset;
		ej->inline_bytes = f->payload_len;
		fftd__array_touch(outa); // a write posted
		rv = exec_admit(s, pipe, ej, msg, sizeof(msg));
		if (rv == FFTD_OK) {
			return;
		}
		free(ej);
	}
	fftd__plan_unref(s, h);
	fftd__buf_unref(s, inb);
	fftd__buf_unref(s, outb);
	fftd__array_unref(s, ina);
	fftd__array_unref(s, outa);
	nng_msg_free(req);
	fftd__ctx_reply_error(c, rv, "%s", msg);
}

// fftd__exec_stream_packet runs one submission of a stream channel (poller
// thread).
void
fftd__exec_stream_packet(void *arg, void *chan, const void *pkt, size_t len)
{
	fftd__server     *s   = arg;
	fftd__stream     *ch  = chan;
	uint64_t          now = fftd__mono_ns();
	fftd__chan_submit sub;
	char              why[160];
	int               prv = fftd__chan_submit_parse(
	                  pkt, len, ch->depth, &sub, why, sizeof(why));
	if (prv == FFTD_EPROTO) {
		fftd__stream_answer(s, ch, 0, 0, NULL, prv, "%s", why);
		return;
	}
	if (atomic_load(&s->stopping)) {
		fftd__stream_answer(s, ch, sub.tag, sub.slot, NULL,
		    FFTD_ESHUTDOWN,
		    "the daemon is shutting down; request not run");
		return;
	}
	if (prv != FFTD_OK) {
		fftd__stream_answer(
		    s, ch, sub.tag, sub.slot, NULL, prv, "%s", why);
		return;
	}
	fftd__exec *ej = calloc(1, sizeof(*ej));
	if (ej == NULL) {
		fftd__stream_answer(s, ch, sub.tag, sub.slot, NULL, FFTD_ENOMEM,
		    "daemon out of memory");
		return;
	}
	atomic_fetch_add(&ch->h->refs, 1);
	atomic_fetch_add(&ch->b->refs, 2);
	atomic_fetch_add(&ch->refs, 1);
	exec_job_init(ej, s, ch->h, ch->pipe, sub.tag, sub.deadline_us);
	ej->done        = fftd__stream_exec_done;
	ej->done_arg    = ch; // the reference taken above
	ej->own_work    = true;
	ej->slot        = sub.slot;
	ej->received_ns = now;
	ej->inb         = ch->b;
	ej->outb        = ch->b;
	ej->in_off      = (uint64_t) sub.slot * ch->slot_bytes;
	ej->out_off     = ej->in_off + ch->out_off;
	char msg[240];
	int  rv = exec_admit(s, ch->pipe, ej, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		free(ej);
		fftd__plan_unref(s, ch->h);
		fftd__buf_unref(s, ch->b);
		fftd__buf_unref(s, ch->b);
		fftd__stream_answer(
		    s, ch, sub.tag, sub.slot, NULL, rv, "%s", msg);
		fftd__stream_unref(s, ch);
	}
}

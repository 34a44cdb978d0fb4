// SPDX-License-Identifier: MIT
//
// mf_req.c — floor 4 of the NNG server (server_impl.h): the MatchedFilter
// request (issue 16), FINDCHIRP's matched-filter bank over resident arrays
// (daemon/mf.h says what a backend computes). Every argument is checked
// here before a backend sees it: the description's ranges and the reply's
// size (fftd__mf_check, common/mf_wire.h, the client's checks too), the
// arrays (this connection's, one device), the spans of the data spectrum,
// the PSD and the count templates inside their arrays, their alignment.
// The bank then runs as client work on the arrays' device worker
// (backend->mf_bank), which answers with the peaks, triggers and series as
// the reply's payload, packed as mf_wire.h lays them out. A backend without
// the bank (mf_bank NULL) is answered FFTD_EUNSUPPORTED, after the checks.
// Calls reply.c and array.c.
//
// A bank channel's requests (fftd__mf_chan_packet, StreamOpen's bank) take
// the same path and are answered on the channel, one at a time.
//
// Threads: fftd__mf_request on NNG's task threads; fftd__mf_chan_packet on
// the stream poller's; mf_run on the device's worker; mf_drop on the
// thread that drops the job (worker.h). Locks: the
// lookups and the post happen under the server lock, as exec.c's
// admission does.

#include "server_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mf.h"
#include "mf_wire.h"

// A bank request on its way to the arrays' device: references to its
// three arrays, the arguments, where the answer goes.
typedef struct mf_job {
	fftd__job      job; // must be first
	fftd__server  *srv;
	fftd__ctx     *ctx; // answered here (NNG), or
	fftd__stream  *ch;  // on this bank channel (one reference)
	uint32_t       pipe;
	fftd__array   *data, *psd, *tpl;
	fftd__array   *sq; // sigma^2 (STORE, USE), or NULL
	uint64_t       data_off, psd_off, tpl_off, sq_off;
	fftd__shbuf   *rbuf; // result_buffer (a reference), or NULL
	uint64_t       roff;
	fftd__mf_sizes sz;
	fftd__mf_args  args; // pointers filled on the worker
	int64_t       *series_index;
	double         posted; // fftd__mono_s when posted to the worker
} mf_job;

// mf_job_free gives back what a finished or dropped job holds.
static void
mf_job_free(mf_job *mj)
{
	fftd__array_unref(mj->srv, mj->data);
	fftd__array_unref(mj->srv, mj->psd);
	fftd__array_unref(mj->srv, mj->tpl);
	if (mj->args.sigmasq_mode == FFTD_MF_SIGMASQ_STORE) {
		fftd__array_touch(mj->sq); // its write done, or dropped
	}
	fftd__array_unref(mj->srv, mj->sq); // NULL: none
	fftd__buf_unref(mj->srv, mj->rbuf);
	free(mj->series_index);
	free(mj);
}

// answer_msg sends reply m (status OK) on context c or, when ch is not
// NULL, on bank channel ch, whose reference it gives back after marking
// it free for the next request (before the reply leaves, so that the
// client's next request, which may follow at once, is taken).
static void
answer_msg(
    fftd__server *s, fftd__ctx *c, fftd__stream *ch, uint32_t pipe, nng_msg *m)
{
	if (ch == NULL) {
		fftd__reply_count(s, pipe, FFTD_OK);
		fftd__ctx_send(c, m);
		return;
	}
	atomic_store(&ch->busy, false);
	fftd__stream_send_frame(s, ch, FFTD_OK, m);
	fftd__stream_unref(s, ch);
}

// error_frame is a reply frame of status and msg, or NULL when not even
// that can be built (the answer is then counted, not sent: the client's
// wait times out).
static nng_msg *
error_frame(int status, const char *msg)
{
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	nng_msg          *m = NULL;
	r.status            = status;
	r.message           = (char *) msg;
	return fftd__msg_build(&m, &r.base, 0, NULL) == FFTD_OK ? m : NULL;
}

// answer_error answers with status and a formatted message, as answer_msg
// does.
static void __attribute__((format(printf, 4, 5)))
answer_error(fftd__ctx *c, fftd__stream *ch, int status, const char *fmt, ...)
{
	char    msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ch == NULL) {
		fftd__ctx_reply_error(c, status, "%s", msg);
		return;
	}
	fftd__log(FFTD_LOG_DEBUG, "bank channel request refused: %s: %s",
	    fftd_err_name(status), msg);
	nng_msg *m = error_frame(status, msg);
	atomic_store(&ch->busy, false);
	fftd__stream_send_frame(ch->srv, ch, status, m);
	fftd__stream_unref(ch->srv, ch);
}

// mf_drop answers a bank request that will not run (worker.h).
static void
mf_drop(fftd__worker *w, fftd__job *job, int status)
{
	(void) w;
	mf_job       *mj = (mf_job *) job;
	fftd__ctx    *c  = mj->ctx;
	fftd__stream *ch = mj->ch;
	fftd__server *s  = mj->srv;
	mf_job_free(mj);
	answer_error(c, ch, status, "%s",
	    status == FFTD_ECLOSED ? "client went away" : "not run: canceled");
	if (ch != NULL) {
		fftd__busy_done(s); // the channel's unit of accepted work
	}
}

_Static_assert(FFTD__MF_RECORDS_ARE(fftd__mf_peak, fftd__mf_trigger),
    "the wire's records are these structs' bytes (mf_wire.h)");

// mf_reply builds the reply of a bank that ran: the counts, then the
// payload of peak records, trigger records and series rows (mf_wire.h).
static int
mf_reply(const mf_job *mj, const void *series, nng_msg **mp)
{
	const fftd__mf_args           *a = &mj->args;
	Fftd__Wire__Reply              r = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__MatchedFilterReply mr
	    = FFTD__WIRE__MATCHED_FILTER_REPLY__INIT;
	mr.ntriggers      = a->ntriggers;
	mr.ntotal         = a->ntotal;
	r.body_case       = FFTD__WIRE__REPLY__BODY_MATCHED_FILTER;
	r.matched_filter  = &mr;
	uint64_t peaks    = (uint64_t) a->count * FFTD__MF_PEAK_BYTES;
	uint64_t triggers = (uint64_t) a->ntriggers * FFTD__MF_TRIGGER_BYTES;
	uint64_t len      = peaks + triggers + mj->sz.series_bytes;
	void    *payload  = NULL;
	// Into the result buffer (checked to hold reply_max from roff) when
	// the request named one; else the reply's own payload.
	int rv = fftd__msg_build(mp, &r.base, mj->rbuf ? 0 : len, &payload);
	if (rv != FFTD_OK) {
		return rv;
	}
	if (mj->rbuf != NULL) {
		payload = (uint8_t *) mj->rbuf->addr + mj->roff;
	}
	// The records are the backend's structs as they are
	// (FFTD__MF_RECORDS_ARE): one copy each, not a field at a time (~15
	// us for 1,024 peaks and ~870 triggers on the H200 host, written into
	// memory the client reads last).
	uint8_t *p = payload;
	memcpy(p, a->peaks, (size_t) peaks);
	p += peaks;
	if (triggers > 0) {
		memcpy(p, a->triggers, (size_t) triggers);
		p += triggers;
	}
	if (mj->sz.series_bytes != 0) {
		memcpy(p, series, (size_t) mj->sz.series_bytes);
	}
	return FFTD_OK;
}

// mf_run runs the bank on the arrays' device worker and answers it.
static void
mf_run(fftd__worker *w, fftd__job *job)
{
	mf_job        *mj       = (mf_job *) job;
	fftd__device  *dev      = (fftd__device *) fftd__worker_device(w);
	fftd__mf_args *a        = &mj->args;
	fftd__ctx     *c        = mj->ctx;
	nng_msg       *m        = NULL;
	char           msg[512] = "";
	int            rv       = FFTD_OK;
	double         t0       = fftd__mono_s();
	a->data                 = (const char *) mj->data->ptr + mj->data_off;
	a->psd                  = (const char *) mj->psd->ptr + mj->psd_off;
	a->templates            = (const char *) mj->tpl->ptr + mj->tpl_off;
	a->tpl_gen              = atomic_load(&mj->tpl->gen);
	a->psd_gen              = atomic_load(&mj->psd->gen);
	a->sigmasq              = mj->sq == NULL
	                 ? NULL
	                 : (double *) ((char *) mj->sq->ptr + mj->sq_off);
	a->peaks                = calloc((size_t) a->count, sizeof(*a->peaks));
	a->triggers             = a->max_triggers == 0
	                ? NULL
	                : calloc(a->max_triggers, sizeof(*a->triggers));
	void *series            = mj->sz.series_bytes == 0
	               ? NULL
	               : malloc((size_t) mj->sz.series_bytes);
	a->series               = series;
	if (a->peaks == NULL || (a->max_triggers != 0 && a->triggers == NULL)
	    || (mj->sz.series_bytes != 0 && series == NULL)) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg),
		    "daemon out of memory for the bank's results");
	}
	if (rv == FFTD_OK) {
		rv = dev->backend->mf_bank(dev, a, msg, sizeof(msg));
	}
	double t1 = fftd__mono_s();
	if (rv == FFTD_OK
	    && (a->ntriggers > a->max_triggers || a->ntriggers > a->ntotal)) {
		rv = FFTD_EINTERNAL;
		snprintf(msg, sizeof(msg),
		    "the bank reported %zu triggers kept of %zu found, room "
		    "for %zu",
		    a->ntriggers, a->ntotal, a->max_triggers);
	}
	if (rv == FFTD_OK && mf_reply(mj, series, &m) != FFTD_OK) {
		rv = FFTD_ENOMEM;
		snprintf(
		    msg, sizeof(msg), "daemon out of memory for the reply");
	}
	if (rv != FFTD_OK) {
		fftd__log(FFTD_LOG_WARN,
		    "matched-filter bank on %s failed: %s: %s", dev->name,
		    fftd_err_name(rv), msg);
	}
	free(a->peaks);
	free(a->triggers);
	free(series);
	fftd__server *s         = mj->srv;
	fftd__stream *ch        = mj->ch;
	uint32_t      pipe      = mj->pipe;
	double        mj_posted = mj->posted;
	size_t        len       = m == NULL ? 0 : nng_msg_len(m);
	mf_job_free(mj);
	if (rv != FFTD_OK) {
		answer_error(c, ch, rv, "%s", msg[0] ? msg : fftd_strerror(rv));
	} else {
		answer_msg(s, c, ch, pipe, m);
	}
	if (ch != NULL) {
		fftd__busy_done(s); // the channel's unit of accepted work
	}
	if (rv != FFTD_OK) {
		return;
	}
	// Where a bank request's time goes besides the bank (bench/pipelines'
	// per-call cost).
	fftd__log(FFTD_LOG_DEBUG,
	    "bank request: %.3f ms queued, %.3f ms in the bank, %.3f ms to "
	    "build and send its %zu-byte reply",
	    (t0 - mj_posted) * 1e3, (t1 - t0) * 1e3,
	    (fftd__mono_s() - t1) * 1e3, len);
}

// mf_check_sigmasq checks the sigma^2 array of a STORE or USE request: this
// connection's, on the data's device, count f64 inside it at an offset of
// whole f64; a STORE span must not overlap an input's (arr, offs, lens:
// the three inputs'), which the bank still reads while it writes.
static int
mf_check_sigmasq(const Fftd__Wire__MatchedFilter *rq, const mf_job *mj,
    const fftd__array *const *arr, const uint64_t *offs, const uint64_t *lens,
    const char *const *what, char *msg, size_t msglen)
{
	if (rq->sigmasq_mode == FFTD_MF_SIGMASQ_COMPUTE) {
		return FFTD_OK;
	}
	if (mj->sq == NULL) {
		snprintf(msg, msglen,
		    "sigmasq: array %" PRIu64
		    " does not exist on this connection",
		    rq->sigmasq_array);
		return FFTD_EINVAL;
	}
	if (mj->sq->wi != arr[0]->wi) {
		snprintf(msg, msglen,
		    "sigmasq array %" PRIu64 " is on device %d, the data "
		    "array on device %d: all must be on one",
		    mj->sq->id, mj->sq->wi, arr[0]->wi);
		return FFTD_EINVAL;
	}
	uint64_t off = rq->sigmasq_offset, len = mj->sz.sigmasq_bytes;
	int rv = fftd__array_span(mj->sq, off, len, 8, "sigmasq", msg, msglen);
	for (int i = 0; rv == FFTD_OK && i < 3; i++) {
		if (rq->sigmasq_mode == FFTD_MF_SIGMASQ_STORE
		    && arr[i] == mj->sq && off < offs[i] + lens[i]
		    && offs[i] < off + len) {
			snprintf(msg, msglen,
			    "sigmasq: bytes [%" PRIu64 ", %" PRIu64
			    ") of array %" PRIu64
			    " overlap the %s span [%" PRIu64 ", %" PRIu64
			    "), which STORE would write while the bank reads "
			    "it",
			    off, off + len, mj->sq->id, what[i], offs[i],
			    offs[i] + lens[i]);
			rv = FFTD_EINVAL;
		}
	}
	return rv;
}

// mf_check_arrays checks the job's three arrays: this connection's, on one
// device, each span inside its array at an offset of whole reals; then
// the sigma^2 array (mf_check_sigmasq).
static int
mf_check_arrays(const Fftd__Wire__MatchedFilter *rq, const mf_job *mj,
    char *msg, size_t msglen)
{
	const fftd__array *arr[3] = { mj->data, mj->psd, mj->tpl };
	const uint64_t     ids[3]
	    = { rq->data_array, rq->psd_array, rq->templates_array };
	const char    *what[3] = { "data", "psd", "templates" };
	const uint64_t offs[3]
	    = { rq->data_offset, rq->psd_offset, rq->templates_offset };
	const uint64_t lens[3]
	    = { mj->sz.data_bytes, mj->sz.psd_bytes, mj->sz.tpl_bytes };
	for (int i = 0; i < 3; i++) {
		if (arr[i] == NULL) {
			snprintf(msg, msglen,
			    "%s: array %" PRIu64
			    " does not exist on this connection",
			    what[i], ids[i]);
			return FFTD_EINVAL;
		}
	}
	for (int i = 0; i < 3; i++) {
		if (arr[i]->wi != arr[0]->wi) {
			snprintf(msg, msglen,
			    "%s array %" PRIu64 " is on device %d, the data "
			    "array on device %d: all must be on one",
			    what[i], arr[i]->id, arr[i]->wi, arr[0]->wi);
			return FFTD_EINVAL;
		}
		int rv = fftd__array_span(arr[i], offs[i], lens[i], mj->sz.real,
		    what[i], msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
	}
	return mf_check_sigmasq(rq, mj, arr, offs, lens, what, msg, msglen);
}

// mf_check_result checks the result buffer a request names (required on
// a bank channel, whose replies must stay one small packet): this
// connection's, holding the largest payload from its offset.
static int
mf_check_result(const Fftd__Wire__MatchedFilter *rq, const mf_job *mj,
    bool chan, char *msg, size_t msglen)
{
	if (rq->result_buffer == 0 && chan) {
		snprintf(msg, msglen,
		    "a bank channel's request must name a result_buffer");
		return FFTD_EINVAL;
	}
	if (rq->result_buffer == 0) {
		return FFTD_OK;
	}
	if (mj->rbuf == NULL) {
		snprintf(msg, msglen,
		    "result buffer %" PRIu64 " does not exist on this "
		    "connection",
		    rq->result_buffer);
		return FFTD_EINVAL;
	}
	if (mj->roff > mj->rbuf->size
	    || mj->sz.reply_max > mj->rbuf->size - mj->roff) {
		snprintf(msg, msglen,
		    "result buffer %" PRIu64 " (%zu bytes) cannot hold %" PRIu64
		    " result bytes from offset %" PRIu64,
		    rq->result_buffer, mj->rbuf->size, mj->sz.reply_max,
		    mj->roff);
		return FFTD_EINVAL;
	}
	return FFTD_OK;
}

// mf_fill copies the request's arguments into the job.
static void
mf_fill(mf_job *mj, const Fftd__Wire__MatchedFilter *rq)
{
	fftd__mf_args *a = &mj->args;
	a->n             = (int64_t) rq->n;
	a->precision
	    = rq->precision == FFTD__WIRE__PRECISION__F64 ? FFTD_F64 : FFTD_F32;
	a->delta_f      = rq->delta_f;
	a->kmin         = rq->kmin;
	a->kmax         = rq->kmax;
	a->t_begin      = rq->t_begin;
	a->t_end        = rq->t_end;
	a->threshold    = rq->threshold;
	a->cluster      = rq->cluster;
	a->count        = rq->count;
	a->max_triggers = (size_t) rq->max_triggers;
	a->series_index = mj->series_index;
	a->nseries      = (int) rq->n_series_index;
	a->sigmasq_mode = (int) rq->sigmasq_mode;
	mj->sq_off      = rq->sigmasq_offset;
	mj->data_off    = rq->data_offset;
	mj->psd_off     = rq->psd_offset;
	mj->tpl_off     = rq->templates_offset;
}

// mf_submit checks a MatchedFilter and posts the bank to its arrays'
// device, to be answered on c or, when ch is not NULL, on bank channel ch
// (whose reference the call takes over).
static void
mf_submit(fftd__server *s, fftd__ctx *c, fftd__stream *ch, uint32_t pipe,
    const Fftd__Wire__MatchedFilter *rq)
{
	char    msg[512];
	mf_job *mj = calloc(1, sizeof(*mj));
	if (mj == NULL) {
		answer_error(c, ch, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	mj->srv  = s;
	mj->ctx  = c;
	mj->ch   = ch;
	mj->pipe = pipe;
	pthread_mutex_lock(&s->mtx);
	uint64_t max_reply = s->limits.max_request_bytes;
	pthread_mutex_unlock(&s->mtx);
	int rv = fftd__mf_check(rq, max_reply, &mj->sz, msg, sizeof(msg));
	if (rv == FFTD_OK && rq->n_series_index != 0) {
		mj->series_index
		    = malloc(rq->n_series_index * sizeof(*mj->series_index));
		if (mj->series_index == NULL) {
			rv = FFTD_ENOMEM;
			snprintf(msg, sizeof(msg), "daemon out of memory");
		} else {
			memcpy(mj->series_index, rq->series_index,
			    rq->n_series_index * sizeof(*mj->series_index));
		}
	}
	if (rv == FFTD_OK) {
		pthread_mutex_lock(&s->mtx);
		fftd__session *ss = fftd__session_find(s, pipe);
		mj->data          = fftd__array_find(ss, rq->data_array);
		mj->psd           = fftd__array_find(ss, rq->psd_array);
		mj->tpl           = fftd__array_find(ss, rq->templates_array);
		mj->sq            = rq->sigmasq_mode == FFTD_MF_SIGMASQ_COMPUTE
		               ? NULL
		               : fftd__array_find(ss, rq->sigmasq_array);
		mj->rbuf          = rq->result_buffer == 0
		             ? NULL
		             : fftd__session_buf(ss, rq->result_buffer);
		if (mj->rbuf != NULL) {
			atomic_fetch_add(&mj->rbuf->refs, 1);
		}
		pthread_mutex_unlock(&s->mtx);
		mj->roff = rq->result_offset;
		rv       = mf_check_arrays(rq, mj, msg, sizeof(msg));
	}
	if (rv == FFTD_OK) {
		rv = mf_check_result(rq, mj, ch != NULL, msg, sizeof(msg));
	}
	fftd__worker *w = rv == FFTD_OK ? s->workers[mj->data->wi] : NULL;
	if (rv == FFTD_OK && fftd__worker_device(w)->backend->mf_bank == NULL) {
		rv = FFTD_EUNSUPPORTED;
		snprintf(msg, sizeof(msg),
		    "the %s backend has no matched-filter bank (yet)",
		    fftd__worker_device(w)->backend->name);
	}
	if (rv == FFTD_OK) {
		mf_fill(mj, rq);
		mj->job.fn      = mf_run;
		mj->job.drop    = mf_drop;
		mj->job.flow    = pipe;
		mj->job.cost_ns = mj->sz.tpl_bytes / 10 + 1000;
		pthread_mutex_lock(&s->mtx);
		fftd__session *ss = fftd__session_find(s, pipe);
		if (ss == NULL) {
			rv = FFTD_ECLOSED;
			snprintf(msg, sizeof(msg), "client went away");
		} else {
			mj->job.weight = ss->weight;
			mj->posted     = fftd__mono_s();
			if (mj->args.sigmasq_mode == FFTD_MF_SIGMASQ_STORE) {
				fftd__array_touch(mj->sq); // a write posted
			}
			if (ch != NULL) {
				// A unit of accepted work, as an NNG context's
				// request is one while it is served: the drain
				// waits for its answer.
				atomic_fetch_add(&s->busy, 1);
			}
			fftd__worker_post(w, &mj->job);
		}
		pthread_mutex_unlock(&s->mtx);
		if (rv == FFTD_OK) {
			return;
		}
	}
	mf_job_free(mj);
	answer_error(c, ch, rv, "%s", msg); // gives ch's reference back
}

// fftd__mf_request: see server_impl.h.
void
fftd__mf_request(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__MatchedFilter *rq)
{
	mf_submit(c->srv, c, NULL, pipe, rq);
}

// fftd__mf_chan_packet: see server_impl.h.
void
fftd__mf_chan_packet(
    fftd__server *s, fftd__stream *ch, const void *pkt, size_t len)
{
	atomic_fetch_add(&ch->refs, 1); // the answer's, whichever it is
	if (atomic_exchange(&ch->busy, true)) {
		// The client sent a request before reading the last one's
		// answer: refused, and the one in flight keeps the channel.
		fftd__log(FFTD_LOG_DEBUG,
		    "bank channel of client %u: a request while one is in "
		    "flight, refused",
		    ch->pipe);
		fftd__stream_send_frame(s, ch, FFTD_ELIMIT,
		    error_frame(FFTD_ELIMIT,
		        "one bank request at a time on a channel"));
		fftd__stream_unref(s, ch);
		return;
	}
	fftd__frame f;
	// The poller's buffer is writable; the parse only points into it.
	int rv = fftd__frame_parse((uint8_t *) (uintptr_t) pkt, len, &f);
	if (rv != FFTD_OK) {
		char why[96];
		fftd__frame_refusal(rv, &f, why, sizeof(why));
		answer_error(NULL, ch, rv, "%s", why);
		return;
	}
	Fftd__Wire__Request *req
	    = fftd__wire__request__unpack(NULL, f.pb_len, f.pb);
	if (req == NULL
	    || req->body_case != FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER
	    || f.payload_len != 0) {
		if (req != NULL) {
			fftd__wire__request__free_unpacked(req, NULL);
		}
		answer_error(NULL, ch, FFTD_EPROTO,
		    "a bank channel carries MatchedFilter requests only, "
		    "without payload");
		return;
	}
	if (atomic_load(&s->stopping)) {
		answer_error(NULL, ch, FFTD_ESHUTDOWN,
		    "the daemon is shutting down; request not run");
	} else {
		mf_submit(s, NULL, ch, ch->pipe, req->matched_filter);
	}
	fftd__wire__request__free_unpacked(req, NULL);
}

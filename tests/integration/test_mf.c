// SPDX-License-Identifier: MIT
//
// test_mf.c — the matched-filter bank (fftd_mf_bank, issue 16) through a
// real `fftd --backend fftw`, against the long double reference of
// tests/util/mf_ref.h on fresh random inputs (FFTD_TEST_SEED repeats a
// run), within its bounds: rho, z and the series within 1e-12 (f64) or
// 1e-5 (f32) of the template's peak rho, sigma within 1e-12 relative,
// trigger counts exact (thresholds lie in gaps of the windows' maxima),
// the loudest kept when max_triggers is smaller than found, results
// poisoned (NaN) before each call and trigger slots past the count still
// poisoned after it.
//   - random requests, f64 and f32, N of 1000, 4095, 4096 and 16384: a
//     resident bank of 20 templates searched in slices of K = 1, 17 and
//     a random K (templates_offset), random bins, samples, cluster window,
//     threshold, max_triggers and series rows; data and PSD in one array
//     at offsets that are whole reals but not 64-byte aligned; the inputs
//     written through a shared buffer (by reference), inline (libfftd's
//     staging off) and through the staging buffers;
//   - arrays of another client: refused with FFTD_EINVAL by libfftd, and
//     by the daemon when a raw session names another session's ids;
//   - arrays destroyed while a bank request on them is queued: the API
//     cannot do it (fftd_mf_bank blocks until its answer, and
//     fftd_array_destroy may not be called with a request in flight on
//     the array), the wire can: the daemon's bank job holds a reference on
//     each of its three arrays (mf_req.c takes them with fftd__array_find
//     when it checks the request, mf_job_free drops them), so ArrayDestroy
//     only takes the id off the connection and the memory is freed on the
//     device's worker when the last reference goes. A raw session with
//     two banks in flight (one running, one queued: the device's `queued`
//     count says so) destroys their arrays: both banks answer correctly,
//     the ids are gone at once, the memory comes back afterwards;
//   - a client SIGKILLed while three threads run banks leaves nothing
//     behind: the daemon's sessions, descriptors, memfd mappings and
//     memory in use come back to their levels, and it goes on serving;
//   - two clients running banks at once (one thread each, their own
//     arrays) each get their own correct results.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/mf_ref.h"
#include "../util/probe.h"
#include "../util/shm_raw.h"
#include "clock.h"
#include "fftd.h"
#include "mf_wire.h"
#include "wire.h"

#define TIMEOUT_MS 60000
#define NTEMPLATES 20 // templates of a resident bank

static fftd_test_daemon  D; // the shared daemon (fftw backend, defaults)
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
};

// --- a resident bank
// -----------------------------------------------------------

// How a resident bank's inputs reach the daemon.
enum { WRITE_SHARED, WRITE_HEAP };

// resident is a bank problem's inputs in arrays of one client: D and S
// in one array (dp) at data_off and psd_off, the templates in tpl from
// tpl_off; each offset a whole number of reals, none 64-byte aligned.
typedef struct resident {
	fftd_array *dp, *tpl;
	size_t      data_off, psd_off, tpl_off;
	size_t      tpl_bytes; // one template
} resident;

// put_span writes len bytes of src at off of a: through buf (a shared
// buffer of this client, by reference) when buf is not NULL, else from
// the heap.
static int
put_span(
    fftd_array *a, size_t off, const void *src, size_t len, fftd_buffer *buf)
{
	if (buf == NULL) {
		return fftd_array_write(a, off, src, len);
	}
	memcpy(fftd_buffer_data(buf), src, len);
	return fftd_array_write(a, off, fftd_buffer_data(buf), len);
}

// resident_new makes b's inputs resident in arrays of c, written as how
// says. Returns FFTD_OK or the first error (no cmocka: children use it).
static int
resident_new(fftd_client *c, resident *r, const fftd_test_mf *b, int how)
{
	size_t rs = fftd_test_mf_real_size(b->precision);
	size_t nb = (size_t) b->nbins;
	memset(r, 0, sizeof(*r));
	r->data_off  = 3 * rs;
	r->psd_off   = r->data_off + 2 * nb * rs + 5 * rs;
	r->tpl_off   = 11 * rs;
	r->tpl_bytes = 2 * nb * rs;
	size_t all   = (size_t) b->ntemplates * r->tpl_bytes;
	int rv = fftd_array_create(c, 0, r->psd_off + nb * rs + 7 * rs, &r->dp);
	if (rv == FFTD_OK) {
		rv = fftd_array_create(
		    c, 0, r->tpl_off + all + 3 * rs, &r->tpl);
	}
	fftd_buffer *buf = NULL;
	if (rv == FFTD_OK && how == WRITE_SHARED) {
		rv = fftd_buffer_create(c, all, &buf);
	}
	if (rv == FFTD_OK) {
		rv = put_span(r->dp, r->data_off, b->data, 2 * nb * rs, buf);
	}
	if (rv == FFTD_OK) {
		rv = put_span(r->dp, r->psd_off, b->psd, nb * rs, buf);
	}
	if (rv == FFTD_OK) {
		rv = put_span(r->tpl, r->tpl_off, b->templates, all, buf);
	}
	fftd_buffer_destroy(buf);
	return rv;
}

static void
resident_free(resident *r)
{
	fftd_array_destroy(r->dp);
	fftd_array_destroy(r->tpl);
	memset(r, 0, sizeof(*r));
}

// mf_call runs the bank of b's request (its slice of the resident bank r)
// on client c into o. Returns fftd_mf_bank's status (no cmocka: threads
// and children use it).
static int
mf_call(fftd_client *c, const resident *r, const fftd_test_mf *b,
    fftd_test_mf_out *o)
{
	fftd_mf_desc d;
	fftd_test_mf_desc(b, &d);
	return fftd_mf_bank(c, &d, r->dp, r->data_off, r->dp, r->psd_off,
	    r->tpl, r->tpl_off + (size_t) b->first * r->tpl_bytes, b->count,
	    o->peaks, o->triggers, o->max_triggers, &o->ntriggers, &o->ntotal,
	    o->series_index, o->nseries, o->series);
}

// run_checked draws a request on the slice [first, first + count) of b
// from *s, runs it on c and checks it against the reference.
static void
run_checked(fftd_client *c, const resident *r, fftd_test_mf *b, int64_t first,
    int64_t count, uint64_t *s, const char *label)
{
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	b->first = first;
	b->count = count;
	fftd_test_mf_draw(b, s, (int) count, &maxt, idx, &ns);
	fftd_test_mf_out o;
	fftd_test_mf_out_new(&o, b, maxt, ns, idx);
	ASSERT_OK(mf_call(c, r, b, &o));
	fftd_test_mf_describe(b, &o, label);
	fftd_test_mf_check(b, &o);
	fftd_test_mf_out_free(&o);
}

// memory_used is device 0's memory in use as the daemon reports it.
static uint64_t
memory_used(fftd_client *c)
{
	fftd_device_stats dv[FFTD_MAX_DEVICES];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(c, dv, FFTD_MAX_DEVICES, &n));
	assert_true(n >= 1);
	return dv[0].memory_used_bytes;
}

// device_queued is device 0's jobs queued or running now.
static uint32_t
device_queued(fftd_client *c)
{
	fftd_device_stats dv[FFTD_MAX_DEVICES];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(c, dv, FFTD_MAX_DEVICES, &n));
	assert_true(n >= 1);
	return dv[0].queued;
}

// wait_queued waits (at most ms) until device 0 has at least want jobs
// queued or running; returns 1 if it saw them, else 0.
static int
wait_queued(fftd_client *c, uint32_t want, int ms)
{
	long long until = fftd__mono_ms() + ms;
	while (fftd__mono_ms() < until) {
		if (device_queued(c) >= want) {
			return 1;
		}
		fftd_test_sleep_ms(1);
	}
	return 0;
}

// wait_memory waits (at most ms) until device 0's memory in use is want;
// returns 0, or -1 printing what it saw last.
static int
wait_memory(fftd_client *c, uint64_t want, int ms)
{
	long long until = fftd__mono_ms() + ms;
	uint64_t  got   = memory_used(c);
	while (got != want && fftd__mono_ms() < until) {
		fftd_test_sleep_ms(10);
		got = memory_used(c);
	}
	if (got != want) {
		print_error("memory in use %llu, want %llu\n",
		    (unsigned long long) got, (unsigned long long) want);
		return -1;
	}
	return 0;
}

// settle waits until the daemon holds what the earlier tests left it:
// C's session only, no array memory (an array's memory is freed on the
// device's worker after the destroy's answer, a closed client's session
// after the close), so that a test's baselines are not moving.
static void
settle(void)
{
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 10000), 0);
	assert_int_equal(wait_memory(C, 0, 10000), 0);
}

// --- random requests
// ----------------------------------------------------------

// test_random: for each N, a resident bank of NTEMPLATES written one way,
// searched in slices of 1, 17 and a random count of templates at random
// offsets, each with random parameters.
static void
test_random(void **state)
{
	fftd_precision p = (fftd_precision) (intptr_t) *state;
	fftd_test_need_daemon();
	// Heap writes with libfftd's staging off travel inline.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	fftd_client *ci;
	int          rv = fftd_client_open(&ci, D.url, TIMEOUT_MS);
	unsetenv("FFTD_INLINE_STAGING");
	ASSERT_OK(rv);
	static const int64_t sizes[] = { 4096, 1000, 4095, 16384 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t     s   = fftd_test_case_seed(1000 * (uint64_t) p + i);
		int          how = (int) (i % 3); // shared, inline, staging
		fftd_client *c   = how == 1 ? ci : C;
		static const char *const label[]
		    = { "shared", "inline", "staging" };
		fftd_test_mf b;
		resident     r;
		fftd_test_mf_new(
		    &b, sizes[i], p, NTEMPLATES, fftd_test_mf_rng_next(&s));
		ASSERT_OK(resident_new(
		    c, &r, &b, how == 0 ? WRITE_SHARED : WRITE_HEAP));
		int64_t k = fftd_test_mf_range(&s, 2, 16);
		run_checked(c, &r, &b,
		    fftd_test_mf_range(&s, 0, NTEMPLATES - 1), 1, &s,
		    label[how]);
		run_checked(c, &r, &b,
		    fftd_test_mf_range(&s, 0, NTEMPLATES - 17), 17, &s,
		    label[how]);
		run_checked(c, &r, &b,
		    fftd_test_mf_range(&s, 0, NTEMPLATES - k), k, &s,
		    label[how]);
		resident_free(&r);
		fftd_test_mf_free(&b);
	}
	fftd_client_close(ci);
}

// --- arrays of another client
// ---------------------------------------------------

// raw_array sends ArrayCreate{bytes} and ArrayWrite of src on session s;
// returns the array's id.
static uint64_t
raw_array(nng_socket s, const void *src, uint64_t bytes)
{
	Fftd__Wire__Request     rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayCreate ac = FFTD__WIRE__ARRAY_CREATE__INIT;
	ac.device                  = 0;
	ac.bytes                   = bytes;
	rq.body_case               = FFTD__WIRE__REQUEST__BODY_ARRAY_CREATE;
	rq.array_create            = &ac;
	Fftd__Wire__Reply *r       = NULL;
	assert_int_equal(fftd_test_raw_request(s, &rq, NULL, 0, &r), FFTD_OK);
	uint64_t id = r->array_create->array_id;
	fftd__wire__reply__free_unpacked(r, NULL);
	Fftd__Wire__Request    wq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayWrite aw = FFTD__WIRE__ARRAY_WRITE__INIT;
	aw.array_id               = id;
	aw.len                    = bytes;
	wq.body_case              = FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE;
	wq.array_write            = &aw;
	assert_int_equal(
	    fftd_test_raw_request(s, &wq, src, bytes, &r), FFTD_OK);
	fftd__wire__reply__free_unpacked(r, NULL);
	return id;
}

// raw_mf fills a MatchedFilter of b's request on arrays data (D at 0),
// psd (S at 0) and tpl (the slice's first template at 0).
static void
raw_mf(Fftd__Wire__MatchedFilter *mf, const fftd_test_mf *b, uint64_t data,
    uint64_t psd, uint64_t tpl, uint64_t max_triggers)
{
	fftd__wire__matched_filter__init(mf);
	mf->n          = (uint64_t) b->n;
	mf->precision  = b->precision == FFTD_F64 ? FFTD__WIRE__PRECISION__F64
	                                          : FFTD__WIRE__PRECISION__F32;
	mf->delta_f    = b->delta_f;
	mf->kmin       = b->kmin;
	mf->kmax       = b->kmax;
	mf->t_begin    = b->t_begin;
	mf->t_end      = b->t_end;
	mf->threshold  = b->threshold;
	mf->cluster    = b->cluster;
	mf->data_array = data;
	mf->psd_array  = psd;
	mf->templates_array = tpl;
	mf->count           = b->count;
	mf->max_triggers    = max_triggers;
}

// raw_status sends rq on s and returns the reply's status, checking that
// an error comes with a message containing want_msg (NULL: any).
static int
raw_status(nng_socket s, const Fftd__Wire__Request *rq, const char *want_msg)
{
	Fftd__Wire__Reply *r  = NULL;
	int                rv = fftd_test_raw_request(s, rq, NULL, 0, &r);
	assert_non_null(r);
	if (rv != FFTD_OK) {
		printf("  %s: %s\n", fftd_err_name(rv), r->message);
		assert_non_null(r->message);
		if (want_msg != NULL) {
			assert_non_null(strstr(r->message, want_msg));
		}
	}
	fftd__wire__reply__free_unpacked(r, NULL);
	return rv;
}

// test_other_client: a bank naming arrays of another client is refused
// (libfftd: the handles' client; the daemon: ids of another session; the
// sigma^2 array too, and the daemon's own checks of its mode), and the
// owner's arrays serve it after.
static void
test_other_client(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_client *c2;
	ASSERT_OK(fftd_client_open(&c2, D.url, TIMEOUT_MS));
	fftd_test_mf b;
	resident     mine, theirs;
	fftd_test_mf_new(&b, 256, FFTD_F64, 4, fftd_test_case_seed(2000));
	ASSERT_OK(resident_new(C, &mine, &b, WRITE_HEAP));
	ASSERT_OK(resident_new(c2, &theirs, &b, WRITE_HEAP));
	fftd_test_mf_reference(&b);
	fftd_test_mf_out o;
	fftd_test_mf_out_new(&o, &b, 4, 0, NULL);
	assert_int_equal(mf_call(C, &theirs, &b, &o), FFTD_EINVAL);
	assert_non_null(strstr(fftd_last_error(), "another client"));
	resident mixed = mine; // my data, their templates
	mixed.tpl      = theirs.tpl;
	assert_int_equal(mf_call(C, &mixed, &b, &o), FFTD_EINVAL);
	assert_non_null(strstr(fftd_last_error(), "another client"));
	fftd_mf_desc sd; // my arrays, their sigma^2 array
	fftd_test_mf_desc(&b, &sd);
	sd.sigmasq_mode = FFTD_MF_SIGMASQ_STORE;
	sd.sigmasq      = theirs.dp;
	assert_int_equal(
	    fftd_mf_bank(C, &sd, mine.dp, mine.data_off, mine.dp, mine.psd_off,
	        mine.tpl, mine.tpl_off, b.count, o.peaks, o.triggers,
	        o.max_triggers, &o.ntriggers, &o.ntotal, NULL, 0, NULL),
	    FFTD_EINVAL);
	assert_non_null(strstr(fftd_last_error(), "sigmasq array belongs"));
	// Nothing was written.
	assert_int_equal(o.ntriggers, 12345);
	assert_int_equal(((const unsigned char *) o.peaks)[0], 0xFF);
	// The owners' banks run.
	ASSERT_OK(mf_call(c2, &theirs, &b, &o));
	fftd_test_mf_check(&b, &o);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_out_new(&o, &b, 4, 0, NULL);
	ASSERT_OK(mf_call(C, &mine, &b, &o));
	fftd_test_mf_check(&b, &o);

	// Raw sessions: s2 names s1's arrays, whose ids it cannot have.
	nng_socket s1, s2;
	fftd_test_raw_connect(&s1, D.url);
	fftd_test_raw_connect(&s2, D.url);
	size_t              rs = sizeof(double), nb = (size_t) b.nbins;
	uint64_t            d1 = raw_array(s1, b.data, 2 * nb * rs);
	uint64_t            p1 = raw_array(s1, b.psd, nb * rs);
	uint64_t            t1 = raw_array(s1, b.templates, 4 * 2 * nb * rs);
	uint64_t            d2 = raw_array(s2, b.data, 2 * nb * rs);
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__MatchedFilter mf;
	raw_mf(&mf, &b, d1, p1, t1, 4);
	rq.body_case      = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	rq.matched_filter = &mf;
	assert_int_equal(
	    raw_status(s2, &rq, "does not exist on this connection"),
	    FFTD_EINVAL);
	mf.data_array = d2; // one of s2's own, two of s1's
	assert_int_equal(raw_status(s2, &rq, "psd: array"), FFTD_EINVAL);
	mf.data_array = d1;
	// sigma^2: another session's array, none, a mode past USE
	mf.sigmasq_mode  = FFTD_MF_SIGMASQ_USE;
	mf.sigmasq_array = d2;
	assert_int_equal(raw_status(s1, &rq, "sigmasq: array"), FFTD_EINVAL);
	mf.sigmasq_array = 0;
	assert_int_equal(
	    raw_status(s1, &rq, "needs a sigmasq array"), FFTD_EINVAL);
	mf.sigmasq_mode = 3;
	assert_int_equal(raw_status(s1, &rq, "sigmasq_mode"), FFTD_EINVAL);
	mf.sigmasq_mode = FFTD_MF_SIGMASQ_COMPUTE;
	assert_int_equal(raw_status(s1, &rq, NULL), FFTD_OK);
	nng_close(s2);
	nng_close(s1);
	fftd_test_mf_out_free(&o);
	resident_free(&mine);
	resident_free(&theirs);
	fftd_client_close(c2);
	fftd_test_mf_free(&b);
}

// --- arrays destroyed under queued banks (raw)
// ---------------------------------

// A request in flight on one context of a raw REQ socket.
typedef struct inflight {
	nng_ctx  ctx;
	nng_aio *aio;
} inflight;

// send_on sends rq (payload len bytes of src) on a new context.
static void
send_on(nng_socket s, inflight *f, const Fftd__Wire__Request *rq,
    const void *src, size_t len)
{
	nng_msg *m;
	void    *payload;
	assert_int_equal(fftd__msg_build(&m, &rq->base, len, &payload), 0);
	if (len != 0) {
		memcpy(payload, src, len);
	}
	assert_int_equal(nng_ctx_open(&f->ctx, s), 0);
	assert_int_equal(nng_aio_alloc(&f->aio, NULL, NULL), 0);
	nng_aio_set_timeout(f->aio, TIMEOUT_MS);
	nng_aio_set_msg(f->aio, m);
	nng_ctx_send(f->ctx, f->aio);
	nng_aio_wait(f->aio);
	assert_int_equal(nng_aio_result(f->aio), 0);
}

// recv_on waits for the answer on f's context and returns its status;
// a bank's results go into o (b's slice), which may be NULL otherwise.
static int
recv_on(inflight *f, const fftd_test_mf *b, fftd_test_mf_out *o)
{
	nng_ctx_recv(f->ctx, f->aio);
	nng_aio_wait(f->aio);
	assert_int_equal(nng_aio_result(f->aio), 0);
	nng_msg    *m = nng_aio_get_msg(f->aio);
	fftd__frame fr;
	assert_int_equal(
	    fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &fr), 0);
	Fftd__Wire__Reply *rp
	    = fftd__wire__reply__unpack(NULL, fr.pb_len, fr.pb);
	assert_non_null(rp);
	int rv = rp->status;
	if (rv != FFTD_OK) {
		printf("  %s: %s\n", fftd_err_name(rv), rp->message);
	} else if (o != NULL) {
		assert_int_equal(
		    rp->body_case, FFTD__WIRE__REPLY__BODY_MATCHED_FILTER);
		o->ntriggers = rp->matched_filter->ntriggers;
		o->ntotal    = rp->matched_filter->ntotal;
		assert_true(o->ntriggers <= o->max_triggers);
		size_t sb = (size_t) o->nseries * (size_t) b->width
		    * fftd_test_mf_real_size(b->precision);
		assert_int_equal(fr.payload_len,
		    (uint64_t) b->count * FFTD__MF_PEAK_BYTES
		        + o->ntriggers * FFTD__MF_TRIGGER_BYTES + sb);
		const uint8_t *q = fr.payload;
		for (int64_t j = 0; j < b->count;
		     j++, q += FFTD__MF_PEAK_BYTES) {
			fftd_mf_peak *k = &o->peaks[j];
			fftd__mf_peak_unpack(
			    q, &k->rho, &k->t, &k->sigma, &k->z_re, &k->z_im);
		}
		for (size_t i = 0; i < o->ntriggers;
		     i++, q += FFTD__MF_TRIGGER_BYTES) {
			fftd_mf_trigger *t = &o->triggers[i];
			fftd__mf_trigger_unpack(q, &t->template_index, &t->t,
			    &t->rho, &t->z_re, &t->z_im);
		}
		if (sb != 0) {
			memcpy(o->series, q, sb);
		}
	}
	fftd__wire__reply__free_unpacked(rp, NULL);
	nng_msg_free(m);
	nng_ctx_close(f->ctx);
	nng_aio_free(f->aio);
	return rv;
}

// test_destroy_queued: bank 1 (every template) runs, bank 2 (a slice,
// random parameters, series) waits behind it; then the session destroys
// the three arrays both use. The ids are gone at once (a second destroy,
// a third bank: FFTD_EINVAL), both banks answer correctly from the
// memory their references keep, and the memory comes back after.
static void
test_destroy_queued(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const int64_t n = 32768, nt = 16;
	uint64_t      seed = fftd_test_case_seed(3000), s = seed + 1;
	fftd_test_mf  b1, b2; // one bank, two requests
	fftd_test_mf_new(&b1, n, FFTD_F64, nt, seed);
	fftd_test_mf_new(&b2, n, FFTD_F64, nt, seed);
	settle();
	uint64_t   m0 = memory_used(C);
	size_t     rs = sizeof(double), nb = (size_t) b1.nbins;
	nng_socket raw;
	fftd_test_raw_connect(&raw, D.url);
	uint64_t d   = raw_array(raw, b1.data, 2 * nb * rs);
	uint64_t p   = raw_array(raw, b1.psd, nb * rs);
	uint64_t t   = raw_array(raw, b1.templates, (size_t) nt * 2 * nb * rs);
	uint64_t all = (3 + 2 * (uint64_t) nt) * nb * rs;
	assert_true(memory_used(C) >= m0 + all);

	// Bank 1: every template, the whole range, peaks only.
	fftd_test_mf_reference(&b1);
	fftd_test_mf_out o1, o2;
	fftd_test_mf_out_new(&o1, &b1, 0, 0, NULL);
	Fftd__Wire__Request       rq1 = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__MatchedFilter mf1;
	raw_mf(&mf1, &b1, d, p, t, 0);
	rq1.body_case      = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	rq1.matched_filter = &mf1;
	// Bank 2: templates 5 .. 9 (the slice as a byte offset), random.
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	b2.first = 5;
	b2.count = 5;
	fftd_test_mf_draw(&b2, &s, 3, &maxt, idx, &ns);
	fftd_test_mf_out_new(&o2, &b2, maxt, ns, idx);
	Fftd__Wire__Request       rq2 = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__MatchedFilter mf2;
	raw_mf(&mf2, &b2, d, p, t, maxt);
	mf2.templates_offset = 5 * 2 * nb * rs;
	mf2.n_series_index   = (size_t) ns;
	mf2.series_index     = idx;
	rq2.body_case        = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	rq2.matched_filter   = &mf2;

	inflight f1, f2, fd;
	send_on(raw, &f1, &rq1, NULL, 0);
	int seen1 = wait_queued(C, 1, 10000);
	send_on(raw, &f2, &rq2, NULL, 0);
	int seen2 = seen1 && wait_queued(C, 2, 10000);
	printf("bank 1 %s, bank 2 %s when the arrays were destroyed\n",
	    seen1 ? "seen in the device's queue" : "not seen",
	    seen2 ? "queued behind it" : "not seen queued");
	Fftd__Wire__Request      rd = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayDestroy ad = FFTD__WIRE__ARRAY_DESTROY__INIT;
	rd.body_case                = FFTD__WIRE__REQUEST__BODY_ARRAY_DESTROY;
	rd.array_destroy            = &ad;
	const uint64_t ids[3]       = { d, p, t };
	for (int i = 0; i < 3; i++) {
		ad.array_id = ids[i];
		send_on(raw, &fd, &rd, NULL, 0);
		assert_int_equal(recv_on(&fd, NULL, NULL), FFTD_OK);
	}
	// The ids are gone at once, whatever still runs on their memory.
	ad.array_id = t;
	send_on(raw, &fd, &rd, NULL, 0);
	assert_int_equal(recv_on(&fd, NULL, NULL), FFTD_EINVAL);
	send_on(raw, &fd, &rq1, NULL, 0);
	assert_int_equal(recv_on(&fd, NULL, NULL), FFTD_EINVAL);
	// Bank 2 was queued before the destroys (seen2): both banks hold
	// their arrays and answer correctly. Not seen (bank 1 ended first:
	// possible on a fast machine), bank 2 may have come after them and
	// then is refused as naming no array.
	int rv1 = recv_on(&f1, &b1, &o1), rv2 = recv_on(&f2, &b2, &o2);
	if (seen1) {
		assert_int_equal(rv1, FFTD_OK);
	}
	if (seen2) {
		assert_int_equal(rv2, FFTD_OK);
	}
	assert_true(rv1 == FFTD_OK || rv1 == FFTD_EINVAL);
	assert_true(rv2 == FFTD_OK || rv2 == FFTD_EINVAL);
	if (rv1 == FFTD_OK) {
		fftd_test_mf_check(&b1, &o1);
	}
	if (rv2 == FFTD_OK) {
		fftd_test_mf_describe(&b2, &o2, "queued");
		fftd_test_mf_check(&b2, &o2);
	}
	// The last reference freed the memory (on the device's worker).
	assert_int_equal(wait_memory(C, m0, 10000), 0);
	nng_close(raw);
	fftd_test_mf_out_free(&o1);
	fftd_test_mf_out_free(&o2);
	fftd_test_mf_free(&b1);
	fftd_test_mf_free(&b2);
}

// --- a client killed while its banks run
// ---------------------------------------

#define BANKER_THREADS 3
#define BANKER_N 16384

// banker_arg is one banker thread's client and bank.
typedef struct banker_arg {
	fftd_client        *c;
	const resident     *r;
	const fftd_test_mf *b;
} banker_arg;

// banker_loop runs the whole bank, peaks and every trigger above rho 3,
// until the process is killed.
static void *
banker_loop(void *p)
{
	const banker_arg *a = p;
	fftd_test_mf_out  o;
	fftd_test_mf_out_new(&o, a->b, 64, 0, NULL);
	for (;;) {
		(void) mf_call(a->c, a->r, a->b, &o);
	}
	return NULL;
}

// role_banker (a child role: URL FD) makes a resident bank of NTEMPLATES
// templates of BANKER_N samples, starts BANKER_THREADS threads running it,
// says 'R' on FD and waits to be killed.
static int
role_banker(int argc, char **argv)
{
	if (argc < 2) {
		return 100;
	}
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
		return 101;
	}
	static fftd_test_mf b;
	static resident     r;
	fftd_test_mf_new(&b, BANKER_N, FFTD_F64, NTEMPLATES, 77);
	b.threshold = 3;
	b.cluster   = 256;
	if (resident_new(c, &r, &b, WRITE_HEAP) != FFTD_OK) {
		return 102;
	}
	static banker_arg a = { NULL, &r, &b };
	a.c                 = c;
	for (int i = 0; i < BANKER_THREADS; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, banker_loop, &a) != 0) {
			return 103;
		}
	}
	if (write(atoi(argv[1]), "R", 1) != 1) {
		return 104;
	}
	for (;;) {
		pause();
	}
}

// test_killed_banker: a client SIGKILLed with banks running and queued
// leaves the daemon as it found it.
static void
test_killed_banker(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	settle();
	fftd_stats st;
	ASSERT_OK(fftd_get_stats(C, &st));
	uint64_t sessions0 = st.sessions, m0 = memory_used(C);
	int      fds0  = fftd_test_open_fds_steady(D.pid);
	int      maps0 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME);
	assert_true(fds0 > 0 && maps0 >= 0);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char fdarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	const char *args[] = { D.url, fdarg, NULL };
	pid_t       pid    = fftd_test_spawn("banker", args);
	assert_true(pid > 0);
	close(fds[1]);
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	char          ch  = 0;
	int ready = poll(&pfd, 1, TIMEOUT_MS) == 1 && read(fds[0], &ch, 1) == 1
	    && ch == 'R';
	close(fds[0]);
	// Its banks follow each other: kill it with one in the device.
	int      busy = ready && wait_queued(C, 1, 10000);
	uint64_t m1   = ready ? memory_used(C) : 0;
	kill(pid, SIGKILL);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(ready);
	assert_true(busy);
	size_t rs = sizeof(double), nb = BANKER_N / 2 + 1;
	printf("memory in use: %llu before the banker, %llu with its bank\n",
	    (unsigned long long) m0, (unsigned long long) m1);
	assert_true(m1 >= m0 + (2 + 1 + 2 * NTEMPLATES) * nb * rs);
	// Its session, descriptors, mappings and memory go.
	assert_int_equal(
	    fftd_test_daemon_settles(D.pid, maps0, fds0, C, sessions0, 10000),
	    0);
	assert_int_equal(wait_memory(C, m0, 10000), 0);
	// And the daemon serves on.
	fftd_test_mf b;
	resident     r;
	fftd_test_mf_new(&b, 1024, FFTD_F32, 3, fftd_test_case_seed(4000));
	ASSERT_OK(resident_new(C, &r, &b, WRITE_HEAP));
	uint64_t s = fftd_test_case_seed(4001);
	run_checked(C, &r, &b, 0, 3, &s, "after the kill");
	resident_free(&r);
	fftd_test_mf_free(&b);
}

// --- two clients at once
// -------------------------------------------------------

#define ROUNDS 4

// pair_arg is one of the two clients' work: ROUNDS requests on its own
// resident bank, their results and statuses.
typedef struct pair_arg {
	fftd_client     *c;
	resident         r;
	fftd_test_mf     b[ROUNDS]; // one problem, ROUNDS requests
	fftd_test_mf_out o[ROUNDS];
	int              rv[ROUNDS];
	char             msg[ROUNDS][256]; // fftd_last_error of a failure
} pair_arg;

// pair_run runs the client's requests one after the other.
static void *
pair_run(void *p)
{
	pair_arg *a = p;
	for (int i = 0; i < ROUNDS; i++) {
		a->rv[i] = mf_call(a->c, &a->r, &a->b[i], &a->o[i]);
		if (a->rv[i] != FFTD_OK) {
			snprintf(a->msg[i], sizeof(a->msg[i]), "%s",
			    fftd_last_error());
		}
	}
	return NULL;
}

// test_two_clients: two clients (f64 N 4096, f32 N 4095) each run ROUNDS
// random requests on their own bank at the same time; each result is
// checked against its own reference afterwards.
static void
test_two_clients(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static pair_arg      pa[2];
	const int64_t        n[2] = { 4096, 4095 };
	const fftd_precision p[2] = { FFTD_F64, FFTD_F32 };
	for (int c = 0; c < 2; c++) {
		pair_arg *a    = &pa[c];
		uint64_t  seed = fftd_test_case_seed(5000 + (uint64_t) c);
		uint64_t  s    = seed + 1;
		ASSERT_OK(fftd_client_open(&a->c, D.url, TIMEOUT_MS));
		for (int i = 0; i < ROUNDS; i++) {
			fftd_test_mf *b = &a->b[i];
			fftd_test_mf_new(b, n[c], p[c], NTEMPLATES, seed);
			b->count = fftd_test_mf_range(&s, 1, 17);
			b->first
			    = fftd_test_mf_range(&s, 0, NTEMPLATES - b->count);
			size_t  maxt;
			int64_t idx[3];
			int     ns;
			fftd_test_mf_draw(
			    b, &s, (int) b->count, &maxt, idx, &ns);
			fftd_test_mf_out_new(&a->o[i], b, maxt, ns, idx);
		}
		ASSERT_OK(resident_new(a->c, &a->r, &a->b[0], WRITE_HEAP));
	}
	pthread_t th[2];
	for (int c = 0; c < 2; c++) {
		assert_int_equal(
		    pthread_create(&th[c], NULL, pair_run, &pa[c]), 0);
	}
	for (int c = 0; c < 2; c++) {
		assert_int_equal(pthread_join(th[c], NULL), 0);
	}
	for (int c = 0; c < 2; c++) {
		pair_arg *a = &pa[c];
		for (int i = 0; i < ROUNDS; i++) {
			if (a->rv[i] != FFTD_OK) {
				fail_msg("client %d request %d: %s (%s)", c, i,
				    fftd_err_name(a->rv[i]), a->msg[i]);
			}
			fftd_test_mf_describe(&a->b[i], &a->o[i],
			    c == 0 ? "client 0" : "client 1");
			fftd_test_mf_check(&a->b[i], &a->o[i]);
			fftd_test_mf_out_free(&a->o[i]);
			fftd_test_mf_free(&a->b[i]);
		}
		resident_free(&a->r);
		fftd_client_close(a->c);
	}
}

// The shared daemon, after everything above, holds no array memory and
// exits 0 on SIGTERM (under ASan: no leaks).
static void
test_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_test_mf_print_worst("mf");
	assert_int_equal(wait_memory(C, 0, 10000), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

static const fftd_test_role roles[] = {
	{ "banker", role_banker },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	void                   *f64     = (void *) (intptr_t) FFTD_F64;
	void                   *f32     = (void *) (intptr_t) FFTD_F32;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_random, f64),
		cmocka_unit_test_prestate(test_random, f32),
		cmocka_unit_test(test_other_client),
		cmocka_unit_test(test_destroy_queued),
		cmocka_unit_test(test_killed_banker),
		cmocka_unit_test(test_two_clients),
		cmocka_unit_test(test_exits_cleanly),
	};
	return fftd_test_run_group("mf[fftw]", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// transform_suite.h — PRIVATE to fftd's tests. The end-to-end transform
// suite, run by tests/integration/test_transforms.c against `fftd --backend
// fftw` and by tests/gpu/test_cuda_transforms.c against `fftd --backend
// cuda`: every kind x rank x precision of the shared case table
// (cases.h, client_cases.h), a sanity test that the checker catches wrong
// results, asynchronous executions, one plan from several threads, refused
// plans, and the daemon's clean exit. Header-only (static functions, cmocka)
// for the same reason as client_cases.h; include it from one test program.

#ifndef FFTD_TESTS_TRANSFORM_SUITE_H
#define FFTD_TESTS_TRANSFORM_SUITE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "client_cases.h"
#include "../../bench/lib/daemon.h"
#include "fixture.h"
#include "clock.h"
#include "fftd.h"
#include "ref.h"

// fftd_suite_config says what to run.
typedef struct fftd_suite_config {
	const char *name;        // cmocka group name
	const char *backend;     // --backend argument and the expected backend
	const char *skip_reason; // non-NULL: every test reports SKIPPED
	int         f16;         // 1: f16 power-of-two cases run; 0: refused
} fftd_suite_config;

static struct {
	const fftd_suite_config *cfg;
	fftd_test_daemon         d;
	fftd_client             *c;
	fftd_info                info;
	int                      started;
} suite;

// Client calls wait at most this long (sanitizer builds on two cores).
#define SUITE_TIMEOUT_MS 60000

// suite_started takes the daemon's facts once it answers.
static int
suite_started(void)
{
	fftd_client_info(suite.c, &suite.info);
	suite.started = 1;
	return 0;
}

// suite_summary prints the cases' summary before the client closes.
static void
suite_summary(void)
{
	fftd_test_print_summary(suite.cfg->name);
}

// suite_args is the daemon's command line (fftd_suite_main fills in the
// backend).
static const char *suite_args[]
    = { "--backend", NULL, "--log-level", "info", NULL };

// suite_fixture: the daemon suite.d with the client suite.c.
static fftd_test_fixture suite_fixture = {
	.daemon      = { { &suite.d, &suite.c, NULL, suite_args } },
	.timeout_ms  = SUITE_TIMEOUT_MS,
	.after_start = suite_started,
	.before_stop = suite_summary,
};

static void
suite_skip_if_needed(void)
{
	if (suite.cfg->skip_reason != NULL) {
		print_message("skipped: %s\n", suite.cfg->skip_reason);
		skip();
	}
	assert_true(suite.started);
	assert_non_null(suite.c);
}

// --- daemon facts -------------------------------------------------------

static void
test_info(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_info *i = &suite.info;
	assert_int_equal(i->protocol_version, FFTD_PROTOCOL_VERSION);
	assert_string_equal(i->backend, suite.cfg->backend);
	assert_true(i->ndevices >= 1);
	assert_string_equal(i->devices[0].backend, suite.cfg->backend);
	assert_true(i->precisions & (1u << FFTD_F64));
	assert_true(i->precisions & (1u << FFTD_F32));
	assert_int_equal(!!(i->precisions & (1u << FFTD_F16)), suite.cfg->f16);
	assert_int_equal(i->max_rank, 3);
	assert_true(i->max_request_bytes >= (64u << 20));
	assert_true(i->max_batch >= 1024);
	double rtt = -1;
	assert_int_equal(fftd_ping(suite.c, &rtt), FFTD_OK);
	assert_true(rtt >= 0);
}

// --- the case table -----------------------------------------------------

typedef struct suite_group {
	fftd_kind      kind;
	int            rank;
	fftd_precision p;
	char           name[40];
} suite_group;

static void
test_cases(void **state)
{
	suite_group *g = *state;
	suite_skip_if_needed();
	int failed = fftd_test_run_cases(
	    suite.c, g->kind, g->rank, g->p, g->p == FFTD_F16);
	if (failed) {
		print_error("%s: %d case(s) failed (FFTD_TEST_SEED=%llu)\n",
		    g->name, failed, (unsigned long long) fftd_test_seed());
	}
	assert_int_equal(failed, 0);
}

// --- the checker catches wrong results ----------------------------------

// each_elem calls fn for every element index of side sd.
static void
each_elem(const fftd__shape *s, const fftd__side        *sd,
    void (*fn)(int64_t idx, int64_t b, void *arg), void *arg)
{
	int64_t n[3] = { 1, 1, 1 };
	int     off  = 3 - s->rank;
	for (int k = 0; k < s->rank; k++) {
		n[k + off] = sd->n[k];
	}
	for (int64_t b = 0; b < s->batch; b++) {
		for (int64_t a0 = 0; a0 < n[0]; a0++) {
			for (int64_t a1 = 0; a1 < n[1]; a1++) {
				for (int64_t a2 = 0; a2 < n[2]; a2++) {
					int64_t a[3] = { a0, a1, a2 }, j[3];
					for (int k = 0; k < s->rank; k++) {
						j[k] = a[k + off];
					}
					fn(fftd__side_index(sd, s->rank, b, j),
					    b, arg);
				}
			}
		}
	}
}

typedef struct mangle {
	const fftd__shape *s;
	const double      *good; // the correct output (f64 complex)
	double            *out;  // the buffer being mangled
	int                what;
	int64_t            count;
	fftd__side         other; // for the wrong-stride mangle
} mangle;

enum { M_CONJ, M_SHIFT, M_SCALE, M_SWAP_BATCH, M_STRIDE };

static void
mangle_one(int64_t idx, int64_t b, void *arg)
{
	mangle *m = arg;
	switch (m->what) {
	case M_CONJ: // the other sign convention
		m->out[2 * idx + 1] = -m->good[2 * idx + 1];
		break;
	case M_SHIFT: // off by one element
		m->out[2 * (idx + 1)]     = m->good[2 * idx];
		m->out[2 * (idx + 1) + 1] = m->good[2 * idx + 1];
		break;
	case M_SCALE: // the wrong norm
		m->out[2 * idx] = m->good[2 * idx] / (double) m->s->total;
		m->out[2 * idx + 1]
		    = m->good[2 * idx + 1] / (double) m->s->total;
		break;
	case M_SWAP_BATCH: { // transforms 0 and 1 exchanged
		int64_t other       = b == 0 ? idx + m->s->out.dist
		          : b == 1           ? idx - m->s->out.dist
		                             : idx;
		m->out[2 * idx]     = m->good[2 * other];
		m->out[2 * idx + 1] = m->good[2 * other + 1];
		break;
	}
	default:
		break;
	}
	m->count++;
}

// For M_STRIDE: element k of the layout goes where a stride one smaller
// would have put it.
typedef struct stride_walk {
	int64_t  k;
	int64_t *idx;
} stride_walk;

static void
collect(int64_t idx, int64_t b, void *arg)
{
	(void) b;
	stride_walk *w = arg;
	w->idx[w->k++] = idx;
}

static int
check_quiet(const fftd__shape *s, const void *in, const void *out,
    const void *before, size_t len, fftd_test_result *r)
{
	char why[512];
	return fftd_test_check(s, in, out, before, len, r, why, sizeof(why));
}

static void
test_checker_catches_errors(void **state)
{
	(void) state;
	suite_skip_if_needed();
	// c2c f64 17x12, batch 2, istride 2, ostride 3, ortho.
	fftd_plan_desc d;
	const int64_t  n[2] = { 17, 12 };
	assert_int_equal(fftd_plan_desc_init(&d, 2, n, FFTD_C2C, FFTD_F64), 0);
	d.batch   = 2;
	d.istride = 2;
	d.ostride = 3;
	d.norm    = FFTD_NORM_ORTHO;
	fftd_test_buffers b;
	assert_int_equal(
	    fftd_test_buffers_make(&b, &d, 0, fftd_test_case_seed(777)), 0);
	fftd_plan *p;
	assert_int_equal(fftd_plan_create(suite.c, &d, &p), FFTD_OK);
	assert_int_equal(fftd_execute(p, b.in, b.out), FFTD_OK);
	fftd_plan_destroy(p);
	fftd_test_result r;
	char             why[512];
	int              ok = fftd_test_buffers_check(&b, &r, why, sizeof(why));
	if (ok != 0) {
		print_error("the correct result fails: %s\n", why);
	}
	assert_int_equal(ok, 0);
	const fftd__shape *s   = &b.s;
	size_t             len = b.out_len;
	double            *bad = malloc(len);
	assert_non_null(bad);

	// The reference of the other direction: a sign error in the daemon.
	fftd__shape flipped = *s;
	flipped.direction   = FFTD_INVERSE;
	assert_int_equal(
	    check_quiet(&flipped, b.pristine, b.out, b.before, len, &r), -1);
	assert_true(r.err > 100 * r.bound);

	static const int kinds[] = { M_CONJ, M_SHIFT, M_SCALE, M_SWAP_BATCH };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		memcpy(bad, b.out, len);
		mangle m = { s, b.out, bad, kinds[i], 0, { 0 } };
		if (kinds[i] == M_SHIFT) {
			memcpy(bad, b.before, len); // shifted copy onto poison
		}
		each_elem(s, &s->out, mangle_one, &m);
		assert_true(m.count == s->total * s->batch);
		int rv = check_quiet(s, b.pristine, bad, b.before, len, &r);
		if (rv != -1) {
			print_error(
			    "mangle %d not caught: err %.3g bound %.3g\n",
			    kinds[i], r.err, r.bound);
		}
		assert_int_equal(rv, -1);
	}

	// Off by one stride: written with ostride 2 instead of 3.
	{
		int64_t *want
		    = malloc(sizeof(int64_t) * (size_t) (s->total * s->batch));
		int64_t *got
		    = malloc(sizeof(int64_t) * (size_t) (s->total * s->batch));
		stride_walk w1 = { 0, want }, w2 = { 0, got };
		fftd__side  narrow = s->out;
		narrow.stride      = s->out.stride - 1;
		each_elem(s, &s->out, collect, &w1);
		each_elem(s, &narrow, collect, &w2);
		memcpy(bad, b.before, len);
		const double *good = b.out;
		for (int64_t k = 0; k < w1.k; k++) {
			bad[2 * got[k]]     = good[2 * want[k]];
			bad[2 * got[k] + 1] = good[2 * want[k] + 1];
		}
		assert_int_equal(
		    check_quiet(s, b.pristine, bad, b.before, len, &r), -1);
		assert_true(r.unwritten > 0 || r.err > r.bound);
		assert_true(r.touched > 0);
		free(want);
		free(got);
	}

	// One element left unwritten.
	memcpy(bad, b.out, len);
	{
		int64_t *idx
		    = malloc(sizeof(int64_t) * (size_t) (s->total * s->batch));
		stride_walk w = { 0, idx };
		each_elem(s, &s->out, collect, &w);
		int64_t last = idx[w.k - 1];
		fftd_ref_poison(&bad[2 * last], 16);
		assert_int_equal(
		    check_quiet(s, b.pristine, bad, b.before, len, &r), -1);
		assert_int_equal(r.unwritten, 1);
		// One element wrong by a relative 1e-9 of the whole: f64 must
		// see it (bound ~1e-14).
		memcpy(bad, b.out, len);
		double norm2 = 0;
		for (int64_t k = 0; k < w.k; k++) {
			norm2 += bad[2 * idx[k]] * bad[2 * idx[k]]
			    + bad[2 * idx[k] + 1] * bad[2 * idx[k] + 1];
		}
		bad[2 * idx[w.k / 2]] += 1e-9 * sqrt(norm2);
		assert_int_equal(
		    check_quiet(s, b.pristine, bad, b.before, len, &r), -1);
		assert_true(r.err > r.bound);
		free(idx);
	}

	// One byte outside the layout (a gap between strided elements, and
	// the slack after the span) changed.
	memcpy(bad, b.out, len);
	((unsigned char *) bad)[16 + 3] ^= 1; // element 1: a stride-3 gap
	assert_int_equal(
	    check_quiet(s, b.pristine, bad, b.before, len, &r), -1);
	assert_int_equal(r.touched, 1);
	assert_int_equal(r.unwritten, 0);
	memcpy(bad, b.out, len);
	((unsigned char *) bad)[len - 1] ^= 0x40;
	assert_int_equal(
	    check_quiet(s, b.pristine, bad, b.before, len, &r), -1);
	assert_int_equal(r.touched, 1);

	// And the unmangled output still passes.
	memcpy(bad, b.out, len);
	assert_int_equal(check_quiet(s, b.pristine, bad, b.before, len, &r), 0);
	free(bad);
	fftd_test_buffers_free(&b);
}

// --- asynchronous executions ----------------------------------------------

#define ASYNC_N 8

typedef struct async_state {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	int             done;
	int             status[ASYNC_N];
	int             calls[ASYNC_N];
} async_state;

typedef struct async_ref {
	async_state *st;
	int          i;
} async_ref;

static void
async_cb(fftd_request *req, int status, void *data)
{
	(void) req;
	async_ref *r = data;
	pthread_mutex_lock(&r->st->mtx);
	r->st->status[r->i] = status;
	r->st->calls[r->i]++;
	r->st->done++;
	pthread_cond_broadcast(&r->st->cv);
	pthread_mutex_unlock(&r->st->mtx);
}

static void
test_async_in_flight(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_plan_desc d;
	const int64_t  n[1] = { 1009 };
	assert_int_equal(fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F32), 0);
	d.batch   = 3;
	d.ostride = 2;
	d.norm    = FFTD_NORM_BY_N;
	fftd_plan *p;
	assert_int_equal(fftd_plan_create(suite.c, &d, &p), FFTD_OK);

	fftd_test_buffers b[ASYNC_N];
	async_state       st;
	async_ref         ref[ASYNC_N];
	fftd_request     *req[ASYNC_N] = { NULL };
	memset(&st, 0, sizeof(st));
	pthread_mutex_init(&st.mtx, NULL);
	pthread_cond_init(&st.cv, NULL);
	for (int i = 0; i < ASYNC_N; i++) {
		assert_int_equal(fftd_test_buffers_make(&b[i], &d, 0,
		                     fftd_test_case_seed(5000 + (uint64_t) i)),
		    0);
	}
	int ncb = 0;
	for (int i = 0; i < ASYNC_N; i++) {
		ref[i].st = &st;
		ref[i].i  = i;
		if (i % 2 == 0) {
			assert_int_equal(fftd_execute_async(p, b[i].in,
			                     b[i].out, async_cb, &ref[i], NULL),
			    FFTD_OK);
			ncb++;
		} else {
			assert_int_equal(fftd_execute_async(p, b[i].in,
			                     b[i].out, NULL, NULL, &req[i]),
			    FFTD_OK);
			assert_non_null(req[i]);
		}
		// The input was copied before the call returned: scribble on it
		// (and restore it before the check compares it with pristine).
		memset(b[i].in, 0x5a, (size_t) b[i].s.in.bytes);
	}
	// Requests with reqp: poll, then wait.
	for (int i = 1; i < ASYNC_N; i += 2) {
		long long until = fftd__mono_ms() + SUITE_TIMEOUT_MS;
		while (!fftd_request_done(req[i]) && fftd__mono_ms() < until) {
			fftd_test_sleep_ms(1);
		}
		assert_int_equal(fftd_request_done(req[i]), 1);
		st.status[i] = fftd_request_wait(req[i]);
	}
	// Callbacks: all of them, once each.
	pthread_mutex_lock(&st.mtx);
	long long until = fftd__mono_ms() + SUITE_TIMEOUT_MS;
	while (st.done < ncb && fftd__mono_ms() < until) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&st.cv, &st.mtx, &ts);
	}
	pthread_mutex_unlock(&st.mtx);
	assert_int_equal(st.done, ncb);
	int failed = 0;
	for (int i = 0; i < ASYNC_N; i++) {
		if (i % 2 == 0) {
			assert_int_equal(st.calls[i], 1);
		}
		if (st.status[i] != FFTD_OK) {
			print_error(
			    "request %d: %s\n", i, fftd_err_name(st.status[i]));
			failed++;
			continue;
		}
		memcpy(b[i].in, b[i].pristine, (size_t) b[i].s.in.bytes);
		fftd_test_result r;
		char             why[512];
		if (fftd_test_buffers_check(&b[i], &r, why, sizeof(why)) != 0) {
			print_error("request %d: %s\n", i, why);
			failed++;
		}
	}
	for (int i = 0; i < ASYNC_N; i++) {
		fftd_test_buffers_free(&b[i]);
	}
	fftd_plan_destroy(p);
	pthread_mutex_destroy(&st.mtx);
	pthread_cond_destroy(&st.cv);
	assert_int_equal(failed, 0);
}

// A call that fails never runs its callback.
static void
test_async_errors(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_plan_desc d;
	const int64_t  n[1] = { 16 };
	assert_int_equal(fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F64), 0);
	fftd_plan *p;
	assert_int_equal(fftd_plan_create(suite.c, &d, &p), FFTD_OK);
	double        in[32] = { 0 }, out[32];
	async_state   st;
	async_ref     ref = { &st, 0 };
	fftd_request *req = (fftd_request *) &st;
	memset(&st, 0, sizeof(st));
	pthread_mutex_init(&st.mtx, NULL);
	pthread_cond_init(&st.cv, NULL);
	assert_int_equal(fftd_execute_async(p, NULL, out, async_cb, &ref, NULL),
	    FFTD_EINVAL);
	assert_int_equal(
	    fftd_execute_async(p, in, NULL, async_cb, &ref, NULL), FFTD_EINVAL);
	// Both or neither of cb and reqp.
	assert_int_equal(
	    fftd_execute_async(p, in, out, async_cb, &ref, &req), FFTD_EINVAL);
	assert_ptr_equal(req, (fftd_request *) &st); // *reqp not set
	assert_int_equal(
	    fftd_execute_async(p, in, out, NULL, NULL, NULL), FFTD_EINVAL);
	assert_int_equal(fftd_execute(p, NULL, out), FFTD_EINVAL);
	assert_int_equal(fftd_execute(p, in, NULL), FFTD_EINVAL);
	assert_int_equal(fftd_execute(NULL, in, out), FFTD_EINVAL);
	// Give a wrongly started callback time to show up.
	fftd_test_sleep_ms(100);
	assert_int_equal(st.done, 0);
	// The plan still works.
	assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	assert_true(out[0] == 0.0 && out[31] == 0.0);
	fftd_plan_destroy(p);
	pthread_mutex_destroy(&st.mtx);
	pthread_cond_destroy(&st.cv);
}

// --- one plan, several threads ----------------------------------------------

#define THREADS 4
#define PER_THREAD 6

typedef struct thread_job {
	fftd_plan         *p;
	fftd_test_buffers *b; // PER_THREAD buffers
	int                status[PER_THREAD];
} thread_job;

static void *
thread_main(void *arg)
{
	thread_job *j = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		j->status[i] = fftd_execute(j->p, j->b[i].in, j->b[i].out);
	}
	return NULL;
}

static void
test_same_plan_threads(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_plan_desc d;
	const int64_t  n[2] = { 64, 65 };
	assert_int_equal(fftd_plan_desc_init(&d, 2, n, FFTD_R2C, FFTD_F64), 0);
	d.batch = 2;
	fftd_plan *p;
	assert_int_equal(fftd_plan_create(suite.c, &d, &p), FFTD_OK);
	// Inputs and references are made on this thread (FFTW's planner,
	// which the reference uses, is not thread-safe).
	static fftd_test_buffers b[THREADS][PER_THREAD];
	thread_job               jobs[THREADS];
	pthread_t                t[THREADS];
	for (int k = 0; k < THREADS; k++) {
		for (int i = 0; i < PER_THREAD; i++) {
			assert_int_equal(fftd_test_buffers_make(&b[k][i], &d, 0,
			                     fftd_test_case_seed(9000
			                         + (uint64_t) (k * 100 + i))),
			    0);
		}
		jobs[k].p = p;
		jobs[k].b = b[k];
	}
	for (int k = 0; k < THREADS; k++) {
		assert_int_equal(
		    pthread_create(&t[k], NULL, thread_main, &jobs[k]), 0);
	}
	for (int k = 0; k < THREADS; k++) {
		pthread_join(t[k], NULL);
	}
	int failed = 0;
	for (int k = 0; k < THREADS; k++) {
		for (int i = 0; i < PER_THREAD; i++) {
			fftd_test_result r;
			char             why[512];
			if (jobs[k].status[i] != FFTD_OK) {
				print_error("thread %d execute %d: %s\n", k, i,
				    fftd_err_name(jobs[k].status[i]));
				failed++;
			} else if (fftd_test_buffers_check(
			               &b[k][i], &r, why, sizeof(why))) {
				print_error(
				    "thread %d execute %d: %s\n", k, i, why);
				failed++;
			}
			fftd_test_buffers_free(&b[k][i]);
		}
	}
	fftd_plan_destroy(p);
	assert_int_equal(failed, 0);
}

// --- refused plans
// ------------------------------------------------------------

static int
plan_status(const fftd_plan_desc *d)
{
	fftd_plan *p  = NULL;
	int        rv = fftd_plan_create(suite.c, d, &p);
	if (rv == FFTD_OK) {
		fftd_plan_destroy(p);
	} else {
		assert_null(p);
		assert_true(fftd_last_error()[0] != '\0');
	}
	return rv;
}

static void
test_refused(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_plan_desc d;
	const int64_t  n64[3] = { 64, 64, 64 }, n100[1] = { 100 };
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, n64, FFTD_C2C, FFTD_F16), 0);
	if (suite.cfg->f16) {
		assert_int_equal(plan_status(&d), FFTD_OK);
		// f16 needs power-of-two sizes.
		assert_int_equal(
		    fftd_plan_desc_init(&d, 1, n100, FFTD_C2C, FFTD_F16), 0);
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
		const int64_t n2[2] = { 64, 48 };
		assert_int_equal(
		    fftd_plan_desc_init(&d, 2, n2, FFTD_R2C, FFTD_F16), 0);
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
	} else {
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
		assert_int_equal(
		    fftd_plan_desc_init(&d, 3, n64, FFTD_R2C, FFTD_F16), 0);
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
		assert_int_equal(
		    fftd_plan_desc_init(&d, 1, n100, FFTD_C2R, FFTD_F16), 0);
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
	}
	// An algorithm the daemon does not serve.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, n64, FFTD_C2C, FFTD_F64), 0);
	d.algorithm = "no-such-algorithm";
	assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
	d.algorithm
	    = strcmp(suite.cfg->backend, "fftw") == 0 ? "cufft" : "fftw";
	if (strcmp(suite.cfg->backend, "fftw") == 0) {
		assert_int_equal(plan_status(&d), FFTD_EUNSUPPORTED);
	}
	// The backend's own name is fine, and so is "auto".
	d.algorithm
	    = strcmp(suite.cfg->backend, "fftw") == 0 ? "fftw" : "cufft";
	assert_int_equal(plan_status(&d), FFTD_OK);
	d.algorithm = "auto";
	assert_int_equal(plan_status(&d), FFTD_OK);
	// A device the daemon does not have.
	d.algorithm = NULL;
	d.device    = 99;
	assert_int_equal(plan_status(&d), FFTD_ENODEVICE);
	d.device = -1;
	// Bad descriptions get the exact status from the daemon too.
	d.n[0] = 0;
	assert_int_equal(plan_status(&d), FFTD_EINVAL);
	d.n[0]    = 64;
	d.istride = -1;
	assert_int_equal(plan_status(&d), FFTD_EINVAL);
	d.istride   = 0;
	d.kind      = FFTD_R2C;
	d.direction = FFTD_INVERSE;
	assert_int_equal(plan_status(&d), FFTD_EINVAL);
	const int64_t big[3] = { (int64_t) 1 << 40, (int64_t) 1 << 40, 4 };
	assert_int_equal(
	    fftd_plan_desc_init(&d, 3, big, FFTD_C2C, FFTD_F64), 0);
	assert_int_equal(plan_status(&d), FFTD_EOVERFLOW);
	const int64_t huge[1] = { (int64_t) 1 << 40 };
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, huge, FFTD_C2C, FFTD_F64), 0);
	assert_int_equal(plan_status(&d), FFTD_ELIMIT);
	// After all that, the client and daemon are fine.
	assert_int_equal(fftd_ping(suite.c, NULL), FFTD_OK);
}

// --- the daemon's exit
// -----------------------------------------------------------

static void
test_daemon_exits_cleanly(void **state)
{
	(void) state;
	suite_skip_if_needed();
	fftd_stats st;
	assert_int_equal(fftd_get_stats(suite.c, &st), FFTD_OK);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.plans, 0); // every test destroyed its plans
	assert_true(st.executes > 0);
	print_message(
	    "daemon: %llu requests, %llu errors, %llu executes, cache "
	    "%llu hits / %llu misses\n",
	    (unsigned long long) st.requests, (unsigned long long) st.errors,
	    (unsigned long long) st.executes,
	    (unsigned long long) st.cache_hits,
	    (unsigned long long) st.cache_misses);
	fftd_client_close(suite.c);
	suite.c = NULL;
	assert_int_equal(fftd_test_daemon_stop(&suite.d), 0);
}

// --- main
// -------------------------------------------------------------------------

static int
fftd_suite_main(const fftd_suite_config *cfg)
{
	static suite_group       groups[3 * 3 * 3];
	static struct CMUnitTest tests[64];
	int                      nt = 0, ng = 0;
	suite.cfg = cfg;
	setvbuf(stdout, NULL, _IOLBF, 0);
	(void) fftd_test_seed(); // print it first

	tests[nt++]
	    = (struct CMUnitTest) { "info", test_info, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest) { "checker_catches_errors",
		test_checker_catches_errors, NULL, NULL, NULL };
	static const fftd_kind   kinds[] = { FFTD_C2C, FFTD_R2C, FFTD_C2R };
	static const char *const kn[]    = { "c2c", "r2c", "c2r" };
	for (int p = 0; p < 3; p++) {
		if (p == FFTD_F16 && !cfg->f16) {
			continue;
		}
		for (int k = 0; k < 3; k++) {
			for (int rank = 1; rank <= 3; rank++) {
				suite_group *g = &groups[ng++];
				g->kind        = kinds[k];
				g->rank        = rank;
				g->p           = (fftd_precision) p;
				snprintf(g->name, sizeof(g->name),
				    "%s_rank%d_%s", kn[k], rank,
				    fftd_test_prec_name(g->p));
				tests[nt++] = (struct CMUnitTest) { g->name,
					test_cases, NULL, NULL, g };
			}
		}
	}
	tests[nt++] = (struct CMUnitTest) { "async_in_flight",
		test_async_in_flight, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest) { "async_errors", test_async_errors,
		NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest) { "same_plan_threads",
		test_same_plan_threads, NULL, NULL, NULL };
	tests[nt++]
	    = (struct CMUnitTest) { "refused", test_refused, NULL, NULL, NULL };
	tests[nt++]   = (struct CMUnitTest) { "daemon_exits_cleanly",
		  test_daemon_exits_cleanly, NULL, NULL, NULL };
	suite_args[1] = cfg->backend;
	suite_fixture.skip_reason = cfg->skip_reason;
	// FFTD_TEST_FILTER (e.g. "c2r_*") picks tests.
	return fftd_test_fixture_run(
	    cfg->name, tests, (size_t) nt, &suite_fixture);
}

#endif // FFTD_TESTS_TRANSFORM_SUITE_H

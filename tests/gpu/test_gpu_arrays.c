// SPDX-License-Identifier: MIT
//
// test_gpu_arrays.c — resident arrays (issue 16) on `fftd --backend cuda`,
// in device memory: the round trips, executions on arrays (C2C/R2C/C2R x
// f32/f64 against the long double FFTW reference within fftd_ref_bound,
// outputs poisoned) and the chain of tests/util/arrays_suite.h, an array
// past the 256 MiB device budget refused with FFTD_EDEVMEM beside a plan,
// and the device memory in use (fftd_device_stats) back to its level after
// fftd_client_close and after a client holding arrays is SIGKILLed; the
// matched-filter bank (cuda_mf.c) on device arrays against the long double
// reference of tests/util/mf_ref.h (f64 within 1e-12, f32 within 1e-5 of
// the peak rho; peaks, sigma, triggers, series; slices of a resident bank;
// outputs poisoned), a PSD bin of zero refused with FFTD_EINVAL; its sigma^2
// modes (STORE, USE: tests/util/mf_sigmasq.h) on every engine's sizes;
// the sigma^2 a call computed, kept for the next call of the same inputs
// and not after new values were written into them.
// Without FFTD_TEST_GPU=1 or a usable GPU every test reports SKIPPED.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/arrays_suite.h"
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "../util/mf_ref.h"
#include "../util/mf_sigmasq.h"
#include "fftd.h"

#define TIMEOUT_MS 120000

static const char      *skip_reason;
static fftd_test_daemon D;
static fftd_client     *C;

// FX: the daemon D (a 256 MiB device memory budget) with the client C;
// nothing starts without a GPU; the teardown fails unless D exits 0.
static fftd_test_fixture FX = FFTD_TEST_GPU_BUDGET_FIXTURE(&D, &C, TIMEOUT_MS);

static void
test_round_trips(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_round_trips(C, 0, fftd_test_case_seed(100));
}

static void
test_executions(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_exec_all(C, 0);
}

static void
test_chain(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_chain(C, 0, fftd_test_case_seed(400));
}

// test_budget: arrays count against the device budget: one past what is
// left is FFTD_EDEVMEM, and the daemon goes on serving.
static void
test_budget(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	fftd_array *a = NULL, *x = NULL;
	ASSERT_OK(fftd_array_create(C, 0, (size_t) 160 << 20, &a));
	int rv = fftd_array_create(C, 0, (size_t) 128 << 20, &x);
	printf("128 MiB beside 160 MiB under a 256 MiB budget: %s: %s\n",
	    fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EDEVMEM);
	assert_null(x);
	fftd_array_destroy(a);
	ASSERT_OK(fftd_array_create(C, 0, (size_t) 128 << 20, &x));
	fftd_array_destroy(x);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// test_freed: closing a client, and killing one, gives its arrays' device
// memory back.
static void
test_freed(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t     m0 = arrays_settled_memory(C, 0);
	fftd_client *c;
	fftd_array  *a[2];
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	for (int i = 0; i < 2; i++) {
		ASSERT_OK(fftd_array_create(c, 0, (size_t) 8 << 20, &a[i]));
	}
	assert_int_equal(arrays_wait_memory(C, 0, m0 + (16u << 20), 10000), 0);
	fftd_client_close(c);
	assert_int_equal(arrays_wait_memory(C, 0, m0, 10000), 0);
	fftd_array_destroy(a[0]);
	fftd_array_destroy(a[1]);
	arrays_killed_holder(C, D.url, 0);
	assert_true(arrays_memory_used(C, 0) <= FFTD_TEST_GPU_BUDGET);
}

// --- the matched-filter bank (cuda_mf.c)
// ------------------------------------------------------------------------

// mf_resident is a bank problem's inputs in device arrays: D and S in one
// array at offsets that are whole reals but not 64-byte aligned (as
// tests/integration/test_mf.c places them), the templates in another at an
// offset of 12 reals: 8-byte aligned, as the fourstep engine needs to run
// (float2 loads; daemon/backends/cuda_mf.c), not 64-byte aligned. (At 11
// f32 reals, before stop 20, every f32 request fell back to the cufft
// engine, and fourstep went untested here.)
typedef struct mf_resident {
	fftd_array *dp, *tpl;
	size_t      data_off, psd_off, tpl_off, tpl_bytes;
} mf_resident;

// mf_resident_new writes b's inputs into arrays of C.
static void
mf_resident_new(mf_resident *r, const fftd_test_mf *b)
{
	size_t rs    = fftd_test_mf_real_size(b->precision);
	size_t nb    = (size_t) b->nbins;
	r->data_off  = 3 * rs;
	r->psd_off   = r->data_off + 2 * nb * rs + 5 * rs;
	r->tpl_off   = 12 * rs;
	r->tpl_bytes = 2 * nb * rs;
	size_t all   = (size_t) b->ntemplates * r->tpl_bytes;
	ASSERT_OK(
	    fftd_array_create(C, 0, r->psd_off + nb * rs + 7 * rs, &r->dp));
	ASSERT_OK(fftd_array_create(C, 0, r->tpl_off + all + 3 * rs, &r->tpl));
	ASSERT_OK(fftd_array_write(r->dp, r->data_off, b->data, 2 * nb * rs));
	ASSERT_OK(fftd_array_write(r->dp, r->psd_off, b->psd, nb * rs));
	ASSERT_OK(fftd_array_write(r->tpl, r->tpl_off, b->templates, all));
}

// mf_call runs b's request (its slice of r) into o.
static int
mf_call(const mf_resident *r, const fftd_test_mf *b, fftd_test_mf_out *o)
{
	fftd_mf_desc d;
	fftd_test_mf_desc(b, &d);
	return fftd_mf_bank(C, &d, r->dp, r->data_off, r->dp, r->psd_off,
	    r->tpl, r->tpl_off + (size_t) b->first * r->tpl_bytes, b->count,
	    o->peaks, o->triggers, o->max_triggers, &o->ntriggers, &o->ntotal,
	    o->series_index, o->nseries, o->series);
}

// mf_checked draws a request on the slice [first, first + count) from *s,
// runs it on the cuda backend and checks it against the long double
// reference (tests/util/mf_ref.h: f64 within 1e-12, f32 within 1e-5 of the
// template's peak rho; sigma 1e-12 relative; trigger counts exact; the
// loudest kept; results poisoned first, spare trigger slots still
// poisoned after).
static void
mf_checked(const mf_resident *r, fftd_test_mf *b, int64_t first, int64_t count,
    uint64_t *s)
{
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	b->first = first;
	b->count = count;
	fftd_test_mf_draw(b, s, (int) count, &maxt, idx, &ns);
	fftd_test_mf_out o;
	fftd_test_mf_out_new(&o, b, maxt, ns, idx);
	ASSERT_OK(mf_call(r, b, &o));
	fftd_test_mf_describe(b, &o, "cuda");
	fftd_test_mf_check(b, &o);
	fftd_test_mf_out_free(&o);
}

// level_without_caches makes the daemon drop its device caches (request
// buffers, the bank's kept scratch: dropped when an array needs their
// room) by creating the largest array the budget allows, frees it, and
// returns device 0's memory in use once it holds still.
static uint64_t
level_without_caches(void)
{
	fftd_array *x = NULL;
	for (size_t big = FFTD_TEST_GPU_BUDGET; big > (1u << 20) && x == NULL;
	     big -= 1u << 20) {
		if (fftd_array_create(C, 0, big, &x) != FFTD_OK) {
			x = NULL;
		}
	}
	assert_non_null(x);
	fftd_array_destroy(x);
	return arrays_settled_memory(C, 0);
}

// test_mf_bank: the bank on device arrays against the reference, f64 and
// f32, N of 4096, 1000, 4095, 16384, 2^15 to 2^19, and 2^20 in f32
// only (f32: every fourstep shape class, 64 x 64 to 256 x 4096, and
// cuFFT's engine for the others; tests/run.sh runs it again with
// FFTD_MF_ENGINE=cufft, and with FFTD_MF_CLUSTER=1 for fourstep's one-pass
// kernel from 2^14 to 2^18), a resident bank of 20
// templates searched in slices of 1, 17 and a random count with random bins,
// samples, cluster window, threshold, max_triggers and series rows; then a
// PSD bin of zero (FFTD_EINVAL naming the bin, nothing written) and the
// device memory back to its level once the caches are dropped.
static void
test_mf_bank(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t             m0      = level_without_caches();
	static const int64_t sizes[] = { 4096, 1000, 4095, 16384, 32768, 65536,
		131072, 262144, 524288, 1048576 };
	for (int pi = 0; pi < 2; pi++) {
		fftd_precision p = pi == 0 ? FFTD_F64 : FFTD_F32;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			if (p == FFTD_F64 && sizes[i] > 524288) {
				continue; // the f64 engine is cuFFT's alone
			}
			uint64_t s
			    = fftd_test_case_seed(500 + 10 * (uint64_t) pi + i);
			fftd_test_mf b;
			mf_resident  r;
			fftd_test_mf_new(
			    &b, sizes[i], p, 20, fftd_test_mf_rng_next(&s));
			mf_resident_new(&r, &b);
			int64_t k = fftd_test_mf_range(&s, 2, 16);
			mf_checked(
			    &r, &b, fftd_test_mf_range(&s, 0, 19), 1, &s);
			mf_checked(
			    &r, &b, fftd_test_mf_range(&s, 0, 3), 17, &s);
			mf_checked(
			    &r, &b, fftd_test_mf_range(&s, 0, 20 - k), k, &s);
			if (i == 0) {
				// PSD bin kmin + 1 zero: refused, nothing
				// written.
				size_t rs       = fftd_test_mf_real_size(p);
				b.first         = 0;
				b.count         = 2;
				b.kmin          = 3;
				b.kmax          = b.nbins;
				uint8_t zero[8] = { 0 };
				ASSERT_OK(fftd_array_write(
				    r.dp, r.psd_off + 4 * rs, zero, rs));
				fftd_test_mf_out o;
				fftd_test_mf_out_new(&o, &b, 4, 0, NULL);
				int rv = mf_call(&r, &b, &o);
				printf("PSD bin 4 zero: %s: %s\n",
				    fftd_err_name(rv), fftd_last_error());
				assert_int_equal(rv, FFTD_EINVAL);
				assert_non_null(
				    strstr(fftd_last_error(), "psd[4]"));
				assert_int_equal(o.ntriggers, 12345);
				fftd_test_mf_out_free(&o);
			}
			fftd_array_destroy(r.dp);
			fftd_array_destroy(r.tpl);
			fftd_test_mf_free(&b);
		}
	}
	fftd_test_mf_print_worst("cuda");
	// The bank keeps its last scratch as a cache: once it is dropped the
	// memory is back to its level.
	printf("device 0: %llu bytes in use after the banks (cache kept), %llu "
	       "before\n",
	    (unsigned long long) arrays_memory_used(C, 0),
	    (unsigned long long) m0);
	assert_int_equal(level_without_caches(), m0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// test_mf_sigmasq: the bank's sigma^2 modes (tests/util/mf_sigmasq.h) on
// f64 4096 (the plain engine), f32 1000 (cuFFT's), f32 4096 and 2^17
// (fourstep's 64 x 64 and 256 x 512 passes; with FFTD_MF_CLUSTER=1, 2^17
// on its one-pass kernel; with FFTD_MF_ENGINE=cufft, all f32 on cuFFT's),
// a random slice of a resident bank of 20 and a random request each.
static void
test_mf_sigmasq(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	static const struct {
		int64_t        n;
		fftd_precision p;
	} cases[] = { { 4096, FFTD_F64 }, { 1000, FFTD_F32 },
		{ 4096, FFTD_F32 }, { 131072, FFTD_F32 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t     s = fftd_test_case_seed(700 + (uint64_t) i);
		fftd_test_mf b;
		mf_resident  r;
		fftd_test_mf_new(
		    &b, cases[i].n, cases[i].p, 20, fftd_test_mf_rng_next(&s));
		mf_resident_new(&r, &b);
		b.count = fftd_test_mf_range(&s, 2, 20);
		b.first = fftd_test_mf_range(&s, 0, 20 - b.count);
		size_t  maxt;
		int64_t idx[3];
		int     ns;
		fftd_test_mf_draw(&b, &s, (int) b.count, &maxt, idx, &ns);
		printf("%s N = %lld: templates [%lld, %lld)\n",
		    cases[i].p == FFTD_F64 ? "f64" : "f32", (long long) b.n,
		    (long long) b.first, (long long) (b.first + b.count));
		fftd_test_mf_span sp = { .c = C,
			.dev                = 0,
			.dp                 = r.dp,
			.tpl                = r.tpl,
			.data_off           = r.data_off,
			.psd_off            = r.psd_off,
			.tpl_off = r.tpl_off + (size_t) b.first * r.tpl_bytes };
		fftd_test_mf_sigmasq(&sp, &b, maxt, idx, ns);
		fftd_array_destroy(r.dp);
		fftd_array_destroy(r.tpl);
		fftd_test_mf_free(&b);
	}
	fftd_test_mf_print_worst("cuda");
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// scale_reals multiplies n reals of arr (p's type) each by a factor drawn
// from [lo, hi].
static void
scale_reals(void *arr, fftd_precision p, size_t n, uint64_t *s, long double lo,
    long double hi)
{
	for (size_t k = 0; k < n; k++) {
		long double f = lo + (hi - lo) * fftd_test_mf_unit(s);
		fftd_test_mf_put(arr, p, k, fftd_test_mf_get(arr, p, k) * f);
	}
}

// kept_call runs b's request with the PSD in array dp (at r's offsets)
// into o, after making psd b's PSD and the reference b's, and checks it.
static void
kept_call(const mf_resident *r, fftd_array *dp, fftd_test_mf *b,
    const void *psd, size_t maxt, int ns, const int64_t *idx,
    fftd_test_mf_out *o)
{
	size_t rs = fftd_test_mf_real_size(b->precision);
	memcpy(b->psd, psd, (size_t) b->nbins * rs);
	fftd_test_mf_reference(b);
	mf_resident rd = *r;
	rd.dp          = dp;
	fftd_test_mf_out_new(o, b, maxt, ns, idx);
	ASSERT_OK(mf_call(&rd, b, o));
	fftd_test_mf_check(b, o);
}

// same_peaks: two runs of one request returned the same bits.
static void
same_peaks(const fftd_test_mf_out *x, const fftd_test_mf_out *y, int64_t n)
{
	assert_memory_equal(x->peaks, y->peaks, (size_t) n * sizeof(*x->peaks));
	assert_int_equal(x->ntriggers, y->ntriggers);
}

// test_mf_sigma_kept: the device keeps the sigma^2 of the last calls that
// computed them and gives them to a later call of the same templates, PSD,
// band and arrays (cuda_mf_setup.c), on fourstep's (f32 2^17), cuFFT's
// (f32 1000) and the plain engine (f64 4096). Calls on PSD A, A, B (a
// second array), A, B, as a search alternating two detectors makes: each
// against the reference, a repeated call the same bits as the first on its
// PSD (with FFTD_TEST_DAEMON_LOG and a debug-level daemon, three "kept"
// lines a case show the second, fourth and fifth took kept values). Then
// new values written into A's PSD, and into one template of the bank: the
// next calls match the reference of the new inputs, not the kept sigma^2.
static void
test_mf_sigma_kept(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	static const struct {
		int64_t        n;
		fftd_precision p;
	} cases[]
	    = { { 131072, FFTD_F32 }, { 1000, FFTD_F32 }, { 4096, FFTD_F64 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t     s = fftd_test_case_seed(900 + (uint64_t) i);
		fftd_test_mf b;
		mf_resident  r;
		fftd_test_mf_new(
		    &b, cases[i].n, cases[i].p, 8, fftd_test_mf_rng_next(&s));
		mf_resident_new(&r, &b);
		size_t rs = fftd_test_mf_real_size(b.precision);
		size_t nb = (size_t) b.nbins, maxt;
		// PSD B: A's, each bin x [0.25, 4], in an array of its own.
		void *pa = malloc(nb * rs), *pb = malloc(nb * rs);
		assert_true(pa && pb);
		memcpy(pa, b.psd, nb * rs);
		memcpy(pb, b.psd, nb * rs);
		scale_reals(pb, b.precision, nb, &s, 0.25L, 4);
		fftd_array *db;
		ASSERT_OK(
		    fftd_array_create(C, 0, r.psd_off + nb * rs + 7 * rs, &db));
		ASSERT_OK(
		    fftd_array_write(db, r.data_off, b.data, 2 * nb * rs));
		ASSERT_OK(fftd_array_write(db, r.psd_off, pb, nb * rs));
		int64_t idx[3];
		int     ns;
		b.first = 1;
		b.count = 6;
		fftd_test_mf_draw(&b, &s, 6, &maxt, idx, &ns);
		printf("%s N = %lld: PSD A, A, B, A, B; new PSD A; a new "
		       "template\n",
		    cases[i].p == FFTD_F64 ? "f64" : "f32", (long long) b.n);
		fftd_test_mf_out o[7];
		kept_call(&r, r.dp, &b, pa, maxt, ns, idx, &o[0]);
		kept_call(&r, r.dp, &b, pa, maxt, ns, idx, &o[1]);
		kept_call(&r, db, &b, pb, maxt, ns, idx, &o[2]);
		kept_call(&r, r.dp, &b, pa, maxt, ns, idx, &o[3]);
		kept_call(&r, db, &b, pb, maxt, ns, idx, &o[4]);
		same_peaks(&o[0], &o[1], b.count);
		same_peaks(&o[0], &o[3], b.count);
		same_peaks(&o[2], &o[4], b.count);
		// New values in A's PSD, then in template first + 2.
		scale_reals(pa, b.precision, nb, &s, 0.25L, 4);
		ASSERT_OK(fftd_array_write(r.dp, r.psd_off, pa, nb * rs));
		kept_call(&r, r.dp, &b, pa, maxt, ns, idx, &o[5]);
		size_t j  = (size_t) b.first + 2;
		char  *hj = (char *) b.templates + j * r.tpl_bytes;
		scale_reals(hj, b.precision, 2 * nb, &s, 1, 3);
		ASSERT_OK(fftd_array_write(
		    r.tpl, r.tpl_off + j * r.tpl_bytes, hj, r.tpl_bytes));
		kept_call(&r, r.dp, &b, pa, maxt, ns, idx, &o[6]);
		for (int call = 0; call < 7; call++) {
			fftd_test_mf_out_free(&o[call]);
		}
		free(pa);
		free(pb);
		fftd_array_destroy(db);
		fftd_array_destroy(r.dp);
		fftd_array_destroy(r.tpl);
		fftd_test_mf_free(&b);
	}
	fftd_test_mf_print_worst("cuda");
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

static const fftd_test_role roles[] = {
	{ "holder", arrays_role_holder },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	skip_reason = fftd_test_gpu_start_roles(argc, argv, roles, &FX);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_executions),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_freed),
		cmocka_unit_test(test_mf_bank),
		cmocka_unit_test(test_mf_sigmasq),
		cmocka_unit_test(test_mf_sigma_kept),
	};
	return fftd_test_run_group("arrays[cuda]", tests, &FX);
}

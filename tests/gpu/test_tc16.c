// SPDX-License-Identifier: MIT
//
// test_tc16.c — GPU tests of the tensor-core FFT kernels (kernels/tc.h):
// every supported size class of tc16 and split16 (1D single-pass 256 ..
// 16384 and tc16's 32768 in place, 1D two-pass 2^15 (split16: 4096 x radix
// 8) or 2^16 .. 2^24, 1D three-pass 2^25 ..
// 2^27, 2D 256^2 .. 4096^2), forward and inverse, batched (with partial last
// blocks), in-place and out-of-place,
// against FFTW in double precision on random inputs uniform in [-1, 1]
// (rounded to the storage precision first, so the reference sees the same
// inputs). Outputs are poisoned with NaN before each run, so an element the
// kernels never write fails. Without a GPU (cudaGetDeviceCount fails or
// returns 0) every test is reported skipped, never passed.

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../util/gpu.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>
#include <fftw3.h>

#include "tc.h"

// Tolerances on the relative L2 error of each transform. tc16 stores fp16
// (about 2^-12 relative per rounding, a few roundings per transform);
// split16 should be within a small factor of fp32 (about 6e-8 per rounding).
#define TOL_TC16 4e-3
#define TOL_SPLIT16 2e-6

static uint64_t rng = 0x9e3779b97f4a7c15ull; // the inputs' xorshift state

// run_case runs one plan on fresh random data and returns the largest
// relative L2 error over the batch (or a huge value on any failure).
static double
run_case(fftd__tc_algo algo, int rank, const int64_t *dims, int64_t batch,
    int dir, int in_place)
{
	const int64_t per   = rank == 1 ? dims[0] : dims[0] * dims[1];
	const int64_t total = per * batch;
	const size_t  eb    = algo == FFTD__TC_TC16 ? 4 : 8;

	fftd__tc_plan *plan = NULL;
	int            rc   = fftd__tc_plan_create(
	                 &plan, algo, FFTD__TC_C2C, rank, dims, batch, dir);
	if (rc != FFTD__TC_OK) {
		print_message("plan_create: %s\n", fftd__tc_strerror(rc));
		return 1e30;
	}
	size_t wsb = 0;
	assert_int_equal(fftd__tc_workspace_size(plan, &wsb), FFTD__TC_OK);

	fftw_complex *ref = fftw_malloc(sizeof(fftw_complex) * (size_t) total);
	void         *hin = malloc(eb * (size_t) total),
	     *hout        = malloc(eb * (size_t) total);
	assert_non_null(ref);
	assert_non_null(hin);
	assert_non_null(hout);
	for (int64_t i = 0; i < total; i++) {
		double re = fftd_test_urand(&rng), im = fftd_test_urand(&rng);
		if (algo == FFTD__TC_TC16) {
			uint16_t *h = (uint16_t *) hin + 2 * i;
			h[0]        = fftd__tc_f16_from_f32((float) re);
			h[1]        = fftd__tc_f16_from_f32((float) im);
			ref[i][0]   = fftd__tc_f32_from_f16(h[0]);
			ref[i][1]   = fftd__tc_f32_from_f16(h[1]);
		} else {
			float *f  = (float *) hin + 2 * i;
			f[0]      = (float) re;
			f[1]      = (float) im;
			ref[i][0] = f[0];
			ref[i][1] = f[1];
		}
	}

	void *din = NULL, *dout = NULL, *dws = NULL;
	assert_int_equal(cudaMalloc(&din, eb * (size_t) total), cudaSuccess);
	if (!in_place)
		assert_int_equal(
		    cudaMalloc(&dout, eb * (size_t) total), cudaSuccess);
	else
		dout = din;
	if (wsb > 0)
		assert_int_equal(cudaMalloc(&dws, wsb), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(din, hin, eb * (size_t) total, cudaMemcpyHostToDevice),
	    cudaSuccess);
	if (!in_place) // poison: all-ones bits are NaN in fp16 and fp32
		assert_int_equal(
		    cudaMemset(dout, 0xff, eb * (size_t) total), cudaSuccess);
	if (dws != NULL)
		assert_int_equal(cudaMemset(dws, 0xff, wsb), cudaSuccess);

	rc = fftd__tc_execute(plan, din, dout, dws, NULL);
	assert_int_equal(rc, FFTD__TC_OK);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(hout, dout, eb * (size_t) total, cudaMemcpyDeviceToHost),
	    cudaSuccess);

	// reference, in place on ref
	int       n[2] = { (int) dims[0], rank > 1 ? (int) dims[1] : 1 };
	fftw_plan fp   = fftw_plan_many_dft(rank, n, (int) batch, ref, NULL, 1,
	      (int) per, ref, NULL, 1, (int) per,
            dir == FFTD__TC_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD,
	      FFTW_ESTIMATE);
	assert_non_null(fp);
	fftw_execute(fp);
	fftw_destroy_plan(fp);

	double worst = 0;
	int    bad = 0, shown = 0;
	for (int64_t b = 0; b < batch; b++) {
		double num = 0, den = 0;
		for (int64_t i = b * per; i < (b + 1) * per; i++) {
			double re, im;
			if (algo == FFTD__TC_TC16) {
				const uint16_t *h
				    = (const uint16_t *) hout + 2 * i;
				re = fftd__tc_f32_from_f16(h[0]);
				im = fftd__tc_f32_from_f16(h[1]);
			} else {
				const float *f = (const float *) hout + 2 * i;
				re             = f[0];
				im             = f[1];
			}
			if (!isfinite(re) || !isfinite(im)) {
				if (bad++ < 3)
					print_message("  non-finite output at "
					              "batch %lld index %lld\n",
					    (long long) b,
					    (long long) (i - b * per));
				worst = 1e30;
				continue;
			}
			double d2 = (re - ref[i][0]) * (re - ref[i][0])
			    + (im - ref[i][1]) * (im - ref[i][1]);
			// diagnostics for a broken kernel: the first elements
			// far off
			if (d2 > 1e-2 * (double) per && shown < 6) {
				print_message("    [%lld][%lld] got (%.4g, "
				              "%.4g) want (%.4g, %.4g)\n",
				    (long long) b, (long long) (i - b * per),
				    re, im, ref[i][0], ref[i][1]);
				shown++;
			}
			num += d2;
			den += ref[i][0] * ref[i][0] + ref[i][1] * ref[i][1];
		}
		double e = sqrt(num / den);
		if (!(e <= worst))
			worst = e;
	}
	char desc[512];
	fftd__tc_plan_describe(plan, desc, sizeof desc);
	print_message(
	    "  %-7s rank %d %lld%s%lld x %lld %s%s: rel L2 %.3e  [%s]\n",
	    algo == FFTD__TC_TC16 ? "tc16" : "split16", rank,
	    (long long) dims[0], rank > 1 ? "x" : "",
	    rank > 1 ? (long long) dims[1] : 0LL, (long long) batch,
	    dir == FFTD__TC_FORWARD ? "fwd" : "inv",
	    in_place ? " in-place" : "", worst, desc);

	fftd__tc_plan_destroy(plan);
	cudaFree(din);
	if (!in_place)
		cudaFree(dout);
	if (dws != NULL)
		cudaFree(dws);
	free(hin);
	free(hout);
	fftw_free(ref);
	return worst;
}

// Batch so that a case has about 2^20 points, plus one partial block.
static int64_t
batch_for(int64_t per)
{
	return per >= ((int64_t) 1 << 20) ? 1 : ((int64_t) 1 << 20) / per + 1;
}

static void
one_d(fftd__tc_algo algo, int lmin, int lmax, double tol)
{
	fftd_test_kernel_need_gpu();
	int fails = 0; // every size runs, so one GPU run shows all of them
	for (int l = lmin; l <= lmax; l++) {
		int64_t n = (int64_t) 1 << l;
		if (fftd__tc_plan_supported(algo, FFTD__TC_C2C, 1, &n, 1)
		    != FFTD__TC_OK) {
			print_message("  %lld: not supported\n", (long long) n);
			continue;
		}
		fails += !(
		    run_case(algo, 1, &n, batch_for(n), FFTD__TC_FORWARD, 0)
		    <= tol);
	}
	assert_int_equal(fails, 0);
}

static void
test_tc16_1d_single(void **s)
{
	(void) s;
	one_d(FFTD__TC_TC16, 8, 15, TOL_TC16);
}
static void
test_tc16_1d_fourstep(void **s)
{
	(void) s;
	one_d(FFTD__TC_TC16, 16, 24, TOL_TC16);
}
static void
test_split16_1d_single(void **s)
{
	(void) s;
	one_d(FFTD__TC_SPLIT16, 8, 14, TOL_SPLIT16);
}
static void
test_split16_1d_fourstep(void **s)
{
	(void) s;
	one_d(FFTD__TC_SPLIT16, 15, 24, TOL_SPLIT16);
}

// Three-pass sizes 2^25 .. 2^27 (up to 1 GiB a buffer for split16; the FFTW
// reference of 2^27 points takes seconds): 2^25 batch 2 forward, 2^26
// inverse in place, 2^27 forward, so that batching, direction and in-place
// runs of the three-pass chain are each seen once.
static void
long_1d(fftd__tc_algo algo, double tol)
{
	fftd_test_kernel_need_gpu();
	const int64_t n25 = (int64_t) 1 << 25, n26 = (int64_t) 1 << 26,
	              n27 = (int64_t) 1 << 27;
	int fails         = 0;
	fails += !(run_case(algo, 1, &n25, 2, FFTD__TC_FORWARD, 0) <= tol);
	fails += !(run_case(algo, 1, &n26, 1, FFTD__TC_INVERSE, 1) <= tol);
	fails += !(run_case(algo, 1, &n27, 1, FFTD__TC_FORWARD, 0) <= tol);
	assert_int_equal(fails, 0);
}

static void
test_tc16_1d_long(void **s)
{
	(void) s;
	long_1d(FFTD__TC_TC16, TOL_TC16);
}
static void
test_split16_1d_long(void **s)
{
	(void) s;
	long_1d(FFTD__TC_SPLIT16, TOL_SPLIT16);
}

static void
inverse_and_in_place(fftd__tc_algo algo, double tol)
{
	fftd_test_kernel_need_gpu();
	static const int64_t ns[] = { 256, 2048, 4096, 16384, (int64_t) 1 << 15,
		(int64_t) 1 << 18, (int64_t) 1 << 22 };
	int                  fails = 0;
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		fails += !(run_case(algo, 1, &ns[i], batch_for(ns[i]),
		               FFTD__TC_INVERSE, 0)
		    <= tol);
		fails += !(
		    run_case(algo, 1, &ns[i], 3, FFTD__TC_FORWARD, 1) <= tol);
	}
	int64_t d[2] = { 1024, 512 };
	fails += !(run_case(algo, 2, d, 3, FFTD__TC_INVERSE, 1) <= tol);
	// inverse 4096-point columns (the in-place form of both algorithms,
	// kernels/tc16_pass.cuh IP): without the four-step twiddle, in place;
	// 1D 2^23's and tc16's 2^24's, with it, then from contiguous rows
	// (s_in = 1); split16's 2^24 in three passes of 256
	int64_t d2[2] = { 4096, 256 }, n23 = (int64_t) 1 << 23,
	        n24 = (int64_t) 1 << 24;
	fails += !(run_case(algo, 2, d2, 2, FFTD__TC_INVERSE, 1) <= tol);
	fails += !(run_case(algo, 1, &n23, 1, FFTD__TC_INVERSE, 0) <= tol);
	fails += !(run_case(algo, 1, &n24, 1, FFTD__TC_INVERSE, 0) <= tol);
	// 2^15 with more FFTs than a GPU has blocks at once (tc16's in-place
	// pass: one block an SM), so every block loads a second one
	int64_t n15 = (int64_t) 1 << 15;
	fails += !(run_case(algo, 1, &n15, 300, FFTD__TC_FORWARD, 0) <= tol);
	fails += !(run_case(algo, 1, &n15, 300, FFTD__TC_INVERSE, 1) <= tol);
	assert_int_equal(fails, 0);
}

static void
test_tc16_inverse_inplace(void **s)
{
	(void) s;
	inverse_and_in_place(FFTD__TC_TC16, TOL_TC16);
}
static void
test_split16_inverse_inplace(void **s)
{
	(void) s;
	inverse_and_in_place(FFTD__TC_SPLIT16, TOL_SPLIT16);
}

static void
two_d(fftd__tc_algo algo, double tol)
{
	fftd_test_kernel_need_gpu();
	static const int64_t ds[][2] = { { 256, 256 }, { 512, 512 },
		{ 1024, 1024 }, { 2048, 2048 }, { 4096, 4096 }, { 256, 4096 },
		{ 4096, 256 }, { 512, 2048 }, { 2048, 1024 } };
	int                  fails   = 0;
	for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
		fails += !(
		    run_case(algo, 2, ds[i], batch_for(ds[i][0] * ds[i][1]),
		        FFTD__TC_FORWARD, 0)
		    <= tol);
	assert_int_equal(fails, 0);
}

static void
test_tc16_2d(void **s)
{
	(void) s;
	two_d(FFTD__TC_TC16, TOL_TC16);
}
static void
test_split16_2d(void **s)
{
	(void) s;
	two_d(FFTD__TC_SPLIT16, TOL_SPLIT16);
}

// A few small cases of every kind of pass, quick enough for
// compute-sanitizer (kernels/gpu-check.sh runs memcheck and racecheck on it).
static void
test_smoke(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	static const int64_t ns[]  = { 256, 512, 4096, 8192, 16384,
		 (int64_t) 1 << 15, (int64_t) 1 << 16, (int64_t) 1 << 20 };
	int                  fails = 0;
	for (int a = 0; a < 2; a++) {
		fftd__tc_algo algo = a == 0 ? FFTD__TC_TC16 : FFTD__TC_SPLIT16;
		double        tol  = a == 0 ? TOL_TC16 : TOL_SPLIT16;
		for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
			fails
			    += !(run_case(algo, 1, &ns[i],
			             ns[i] < 4096 ? 17 : 1, FFTD__TC_FORWARD, 0)
			        <= tol);
		int64_t d[2] = { 256, 512 };
		fails += !(run_case(algo, 2, d, 1, FFTD__TC_INVERSE, 0) <= tol);
	}
	assert_int_equal(fails, 0);
}

static void
test_errors(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	fftd__tc_plan *p = (fftd__tc_plan *) 1;
	int64_t        n = 1000;
	assert_int_equal(fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_C2C,
	                     1, &n, 1, FFTD__TC_FORWARD),
	    FFTD__TC_EUNSUPPORTED);
	assert_null(p);
	n = (int64_t) 1 << 28;
	assert_int_equal(fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_C2C,
	                     1, &n, 1, FFTD__TC_FORWARD),
	    FFTD__TC_EUNSUPPORTED);
	assert_null(p);
	// workspace: one copy of the batch beyond one pass (tc16: 32768
	// points, split16: 16384; 2^27 split16: 1 GiB)
	static const struct {
		fftd__tc_algo algo;
		int64_t       n, batch;
		size_t        ws;
	} wsc[] = { { FFTD__TC_TC16, 16384, 3, 0 },
		{ FFTD__TC_TC16, (int64_t) 1 << 15, 3, 0 },
		{ FFTD__TC_SPLIT16, (int64_t) 1 << 15, 3, (size_t) 3 << 18 },
		{ FFTD__TC_TC16, (int64_t) 1 << 16, 3, (size_t) 3 << 18 },
		{ FFTD__TC_TC16, (int64_t) 1 << 20, 2, (size_t) 8 << 20 },
		{ FFTD__TC_SPLIT16, (int64_t) 1 << 27, 1, (size_t) 1 << 30 },
		{ FFTD__TC_TC16, (int64_t) 1 << 27, 1, (size_t) 1 << 29 } };
	for (size_t i = 0; i < sizeof wsc / sizeof wsc[0]; i++) {
		size_t wsb = 1;
		assert_int_equal(
		    fftd__tc_plan_create(&p, wsc[i].algo, FFTD__TC_C2C, 1,
		        &wsc[i].n, wsc[i].batch, FFTD__TC_INVERSE),
		    FFTD__TC_OK);
		assert_int_equal(fftd__tc_workspace_size(p, &wsb), FFTD__TC_OK);
		assert_true(wsb == wsc[i].ws);
		fftd__tc_plan_destroy(p);
	}
	n = 4096;
	assert_int_equal(
	    fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_C2C, 1, &n, 1, 0),
	    FFTD__TC_EINVAL);
	assert_int_equal(fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_C2C,
	                     1, &n, 1, FFTD__TC_FORWARD),
	    FFTD__TC_OK);
	assert_int_equal(
	    fftd__tc_execute(p, NULL, NULL, NULL, NULL), FFTD__TC_EINVAL);
	fftd__tc_plan_destroy(p);
	fftd__tc_plan_destroy(NULL);
}

#else
// !FFTD_WITH_CUDA: built without CUDA, so every test is skipped.
FFTD_TEST_NO_CUDA(test_errors)
FFTD_TEST_NO_CUDA(test_smoke)
FFTD_TEST_NO_CUDA(test_tc16_1d_single)
FFTD_TEST_NO_CUDA(test_tc16_1d_fourstep)
FFTD_TEST_NO_CUDA(test_tc16_1d_long)
FFTD_TEST_NO_CUDA(test_tc16_2d)
FFTD_TEST_NO_CUDA(test_tc16_inverse_inplace)
FFTD_TEST_NO_CUDA(test_split16_1d_single)
FFTD_TEST_NO_CUDA(test_split16_1d_fourstep)
FFTD_TEST_NO_CUDA(test_split16_1d_long)
FFTD_TEST_NO_CUDA(test_split16_2d)
FFTD_TEST_NO_CUDA(test_split16_inverse_inplace)
#endif // FFTD_WITH_CUDA

// usage: test_tc16 [test-name-pattern]
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_smoke),
		cmocka_unit_test(test_tc16_1d_single),
		cmocka_unit_test(test_tc16_1d_fourstep),
		cmocka_unit_test(test_tc16_1d_long),
		cmocka_unit_test(test_tc16_2d),
		cmocka_unit_test(test_tc16_inverse_inplace),
		cmocka_unit_test(test_split16_1d_single),
		cmocka_unit_test(test_split16_1d_fourstep),
		cmocka_unit_test(test_split16_1d_long),
		cmocka_unit_test(test_split16_2d),
		cmocka_unit_test(test_split16_inverse_inplace),
	};
	return fftd_test_kernel_group(argc, argv, "tc16_gpu", tests);
}

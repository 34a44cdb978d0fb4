// SPDX-License-Identifier: MIT
//
// test_tc16_nd.c — GPU tests of the tensor-core kernels (kernels/tc.h) for
// 3D transforms and real ones (R2C, C2R), tc16 and split16, at the kernel
// level: every 3D side class (32^3, 64^3, 128^3, 256^3, 512^3 and the boxes
// 32x256x512, 512x64x32), both directions, batched, in place and not; R2C
// and C2R in 1D (one-, two- and three-pass half lengths; the half lengths
// up to FFTD__TC_MAX_FUSED_REAL, whose plans fuse the real step into the
// complex pass, out of place with partial last blocks and in place, which
// runs them unfused), 2D and 3D. Each
// case runs on fresh random input (uniform in [-1, 1], rounded to the
// storage precision first; C2R inputs are the half spectra of random real
// data, scaled by 1/sqrt(n) so that fp16 holds input and output), against
// FFTW in double on the same rounded input, with outputs and workspace
// poisoned (0xff: NaN in fp16 and fp32) before the run. The bounds, on the
// relative L2 error of the whole batch, come from cuFFT run in the same test
// on the same input:
//   tc16     <= cuFFT f16's error (cufftXtMakePlanMany, CUDA_C_16F);
//   split16  <= 2x cuFFT f32's error, and 3D <= 2e-6 (the split-fp16 3D
//            paper, Kang, Glaeser et al., reports ~1e-6).
// C2R must leave its input unchanged (checked out of place). Without a GPU
// every test reports itself skipped, never passed.

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
#include "../util/tc_ref.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>
#include <cufftXt.h>
#include <fftw3.h>

#include "tc.h"

static uint64_t rng = 0x2545f4914f6cdd1dull; // the inputs' xorshift state

// One case: kind, shape, batch, direction, in place.
typedef struct nd_case {
	fftd__tc_type type;
	int           rank;
	int64_t       dims[3];
	int64_t       batch;
	int           dir;
	int           in_place;
} nd_case;

// Scalars (reals; a complex point is two) of the input and the output of
// the whole batch.
static void
counts(const nd_case *c, int64_t *in_s, int64_t *out_s)
{
	int64_t pts = c->batch, n = c->dims[c->rank - 1];
	for (int i = 0; i < c->rank; i++)
		pts *= c->dims[i];
	int64_t half = 2 * (pts / n) * (n / 2 + 1);
	*in_s        = c->type == FFTD__TC_C2C ? 2 * pts
	           : c->type == FFTD__TC_R2C   ? pts
	                                       : half;
	*out_s       = c->type == FFTD__TC_C2C ? 2 * pts
	          : c->type == FFTD__TC_R2C    ? half
	                                       : pts;
}

// to_storage rounds x to the storage precision (fp16 or fp32).
static double
to_storage(int f16, double x)
{
	return f16 ? fftd__tc_f32_from_f16(fftd__tc_f16_from_f32((float) x))
	           : (double) (float) x;
}

// pack stores n scalars in the storage precision into dst.
static void
pack(int f16, const double *x, int64_t n, void *dst)
{
	for (int64_t i = 0; i < n; i++)
		if (f16)
			((uint16_t *) dst)[i]
			    = fftd__tc_f16_from_f32((float) x[i]);
		else
			((float *) dst)[i] = (float) x[i];
}

// unpack reads scalar i of src (storage precision) as a double.
static double
unpack(int f16, const void *src, int64_t i)
{
	return f16 ? fftd__tc_f32_from_f16(((const uint16_t *) src)[i])
	           : ((const float *) src)[i];
}

// make_input fills x (in_s scalars, already rounded to the storage) and ref
// (out_s scalars: FFTW in double of x) for case c.
static void
make_input(const nd_case *c, int f16, double *x, double *ref)
{
	int64_t in_s, out_s, pts = 1;
	counts(c, &in_s, &out_s);
	for (int i = 0; i < c->rank; i++)
		pts *= c->dims[i];
	if (c->type == FFTD__TC_C2R) {
		// a half spectrum of random reals, scaled by 1 / sqrt(n)
		fftd_test_tc_half_spectrum(c->rank, c->dims, c->batch, 1.0,
		    1.0 / sqrt((double) pts), &rng, x);
		for (int64_t i = 0; i < in_s; i++)
			x[i] = to_storage(f16, x[i]);
	} else {
		for (int64_t i = 0; i < in_s; i++)
			x[i] = to_storage(f16, fftd_test_urand(&rng));
	}
	fftd_test_tc_fftw(c->type, c->rank, c->dims, c->batch, c->dir, x, ref);
}

// rel_l2 is the relative L2 error of n output scalars against ref (huge on
// a non-finite one).
static double
rel_l2(int f16, const void *out, const double *ref, int64_t n)
{
	double *got = malloc(sizeof(double) * (size_t) n);
	assert_non_null(got);
	for (int64_t i = 0; i < n; i++)
		got[i] = unpack(f16, out, i);
	double e = fftd_test_rel_l2(got, ref, n);
	free(got);
	return e;
}

// cufft_error runs cuFFT (f16 or f32, same kind and shape, out of place) on
// the packed input and returns its error against ref.
static double
cufft_error(const nd_case *c, int f16, const void *hin, const double *ref)
{
	int64_t in_s, out_s;
	counts(c, &in_s, &out_s);
	size_t    eb = f16 ? 2 : 4;
	long long n[3];
	for (int i = 0; i < c->rank; i++)
		n[i] = c->dims[i];
	cudaDataType cx = f16 ? CUDA_C_16F : CUDA_C_32F,
	             rl = f16 ? CUDA_R_16F : CUDA_R_32F;
	cufftHandle h;
	size_t      ws = 0;
	assert_int_equal(cufftCreate(&h), CUFFT_SUCCESS);
	long long di = in_s / c->batch, dout = out_s / c->batch;
	if (c->type != FFTD__TC_R2C)
		di /= 2;
	if (c->type != FFTD__TC_C2R)
		dout /= 2;
	assert_int_equal(
	    cufftXtMakePlanMany(h, c->rank, n, NULL, 1, di,
	        c->type == FFTD__TC_R2C ? rl : cx, NULL, 1, dout,
	        c->type == FFTD__TC_C2R ? rl : cx, c->batch, &ws, cx),
	    CUFFT_SUCCESS);
	void *din = NULL, *dout_p = NULL;
	assert_int_equal(cudaMalloc(&din, eb * (size_t) in_s), cudaSuccess);
	assert_int_equal(cudaMalloc(&dout_p, eb * (size_t) out_s), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(din, hin, eb * (size_t) in_s, cudaMemcpyHostToDevice),
	    cudaSuccess);
	assert_int_equal(
	    cudaMemset(dout_p, 0xff, eb * (size_t) out_s), cudaSuccess);
	assert_int_equal(
	    cufftXtExec(h, din, dout_p,
	        c->dir == FFTD__TC_FORWARD ? CUFFT_FORWARD : CUFFT_INVERSE),
	    CUFFT_SUCCESS);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	void *hout = malloc(eb * (size_t) out_s);
	assert_non_null(hout);
	assert_int_equal(cudaMemcpy(hout, dout_p, eb * (size_t) out_s,
	                     cudaMemcpyDeviceToHost),
	    cudaSuccess);
	double e = rel_l2(f16, hout, ref, out_s);
	free(hout);
	cudaFree(din);
	cudaFree(dout_p);
	cufftDestroy(h);
	return e;
}

// run_nd runs case c with algo and checks it against its bound; returns 1
// when it fails.
static int
run_nd(fftd__tc_algo algo, const nd_case *c)
{
	static const char *const kind[3] = { "C2C", "R2C", "C2R" };
	const int                f16     = algo == FFTD__TC_TC16;
	const size_t             eb      = f16 ? 2 : 4;
	int64_t                  in_s, out_s;
	counts(c, &in_s, &out_s);
	fftd__tc_plan *plan = NULL;
	int            rc   = fftd__tc_plan_create(
	                 &plan, algo, c->type, c->rank, c->dims, c->batch, c->dir);
	if (rc != FFTD__TC_OK) {
		print_message("plan_create: %s\n", fftd__tc_strerror(rc));
		return 1;
	}
	char desc[640];
	fftd__tc_plan_describe(plan, desc, sizeof desc);
	// exactly the short 1D real plans carry the fused kernel
	const int fusable = c->rank == 1 && c->type != FFTD__TC_C2C
	    && c->dims[0] / 2 <= FFTD__TC_MAX_FUSED_REAL;
	int    fail = fusable != (strstr(desc, "fused") != NULL);
	size_t wsb  = 0;
	assert_int_equal(fftd__tc_workspace_size(plan, &wsb), FFTD__TC_OK);
	double *x   = fftw_malloc(sizeof(double) * (size_t) in_s);
	double *ref = fftw_malloc(sizeof(double) * (size_t) out_s);
	void   *hin = malloc(eb * (size_t) in_s),
	     *hout  = malloc(eb * (size_t) out_s);
	assert_true(x != NULL && ref != NULL && hin != NULL && hout != NULL);
	make_input(c, f16, x, ref);
	pack(f16, x, in_s, hin);

	size_t big = eb * (size_t) (in_s > out_s ? in_s : out_s);
	void  *din = NULL, *dout = NULL, *dws = NULL;
	assert_int_equal(
	    cudaMalloc(&din, c->in_place ? big : eb * (size_t) in_s),
	    cudaSuccess);
	if (c->in_place) {
		dout = din;
		assert_int_equal(cudaMemset(din, 0xff, big), cudaSuccess);
	} else {
		assert_int_equal(
		    cudaMalloc(&dout, eb * (size_t) out_s), cudaSuccess);
		assert_int_equal(
		    cudaMemset(dout, 0xff, eb * (size_t) out_s), cudaSuccess);
	}
	if (wsb > 0) {
		assert_int_equal(cudaMalloc(&dws, wsb), cudaSuccess);
		assert_int_equal(cudaMemset(dws, 0xff, wsb), cudaSuccess);
	}
	assert_int_equal(
	    cudaMemcpy(din, hin, eb * (size_t) in_s, cudaMemcpyHostToDevice),
	    cudaSuccess);
	assert_int_equal(
	    fftd__tc_execute(plan, din, dout, dws, NULL), FFTD__TC_OK);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(hout, dout, eb * (size_t) out_s, cudaMemcpyDeviceToHost),
	    cudaSuccess);
	if (c->type == FFTD__TC_C2R && !c->in_place) {
		void *back = malloc(eb * (size_t) in_s);
		assert_non_null(back);
		assert_int_equal(cudaMemcpy(back, din, eb * (size_t) in_s,
		                     cudaMemcpyDeviceToHost),
		    cudaSuccess);
		if (memcmp(back, hin, eb * (size_t) in_s) != 0) {
			print_message("  C2R changed its input\n");
			fail = 1;
		}
		free(back);
	}
	cudaFree(din);
	if (!c->in_place)
		cudaFree(dout);
	cudaFree(dws);

	double e     = rel_l2(f16, hout, ref, out_s);
	double cu    = cufft_error(c, f16, hin, ref);
	double bound = f16 ? cu : 2 * cu;
	if (!f16 && c->rank == 3 && bound > 2e-6)
		bound = 2e-6;
	fail |= !(e <= bound);
	print_message("  %-7s %s %lldx%lldx%lld b%lld %s%s: rel L2 %.3e, cuFFT "
	              "%s %.3e (%.2fx)%s  [%s]\n",
	    f16 ? "tc16" : "split16", kind[c->type], (long long) c->dims[0],
	    c->rank > 1 ? (long long) c->dims[1] : 0LL,
	    c->rank > 2 ? (long long) c->dims[2] : 0LL, (long long) c->batch,
	    c->dir == FFTD__TC_FORWARD ? "fwd" : "inv",
	    c->in_place ? " in-place" : "", e, f16 ? "f16" : "f32", cu, e / cu,
	    fail ? "  FAIL" : "", desc);
	fftd__tc_plan_destroy(plan);
	fftw_free(x);
	fftw_free(ref);
	free(hin);
	free(hout);
	return fail;
}

#define F FFTD__TC_FORWARD
#define I FFTD__TC_INVERSE

// Every 3D side class and the two boxes; both directions; batches with
// several transforms; in place and not.
static const nd_case cases_3d[] = {
	{ FFTD__TC_C2C, 3, { 32, 32, 32 }, 33, F, 0 },
	{ FFTD__TC_C2C, 3, { 32, 32, 32 }, 5, I, 1 },
	{ FFTD__TC_C2C, 3, { 64, 64, 64 }, 5, F, 0 },
	{ FFTD__TC_C2C, 3, { 64, 64, 64 }, 2, I, 0 },
	{ FFTD__TC_C2C, 3, { 128, 128, 128 }, 2, F, 1 },
	{ FFTD__TC_C2C, 3, { 128, 128, 128 }, 1, I, 0 },
	{ FFTD__TC_C2C, 3, { 256, 256, 256 }, 1, F, 0 },
	{ FFTD__TC_C2C, 3, { 256, 256, 256 }, 1, I, 1 },
	{ FFTD__TC_C2C, 3, { 512, 512, 512 }, 1, F, 0 },
	{ FFTD__TC_C2C, 3, { 32, 256, 512 }, 2, F, 0 },
	{ FFTD__TC_C2C, 3, { 32, 256, 512 }, 1, I, 1 },
	{ FFTD__TC_C2C, 3, { 512, 64, 32 }, 3, F, 0 },
	{ FFTD__TC_C2C, 3, { 512, 64, 32 }, 1, I, 0 },
};

// R2C and C2R: 1D one-pass (h = 256 .. 8192 fused, the last blocks
// partial: 16, 8, 4, 2 rows a block, or 1; in place unfused),
// h = 2^15 (tc16: one in-place pass, split16: two), two-pass (h = 2^21)
// and three-pass (h = 2^25) half lengths; 2D with
// a CUDA-core row pass (h = 128) and tensor-core ones; 3D with h = 32 .. 256.
static const nd_case cases_real[] = {
	{ FFTD__TC_R2C, 1, { 512 }, 1025, F, 0 },
	{ FFTD__TC_R2C, 1, { 1024 }, 13, F, 0 },
	{ FFTD__TC_R2C, 1, { 2048 }, 6, F, 0 },
	{ FFTD__TC_R2C, 1, { 4096 }, 7, F, 0 },
	{ FFTD__TC_R2C, 1, { 8192 }, 5, F, 0 },
	{ FFTD__TC_R2C, 1, { 8192 }, 2, F, 1 },
	{ FFTD__TC_R2C, 1, { 16384 }, 3, F, 0 },
	{ FFTD__TC_R2C, 1, { 16384 }, 2, F, 1 },
	{ FFTD__TC_R2C, 1, { 65536 }, 3, F, 1 },
	{ FFTD__TC_R2C, 1, { 1 << 22 }, 1, F, 0 },
	{ FFTD__TC_R2C, 1, { 1 << 26 }, 1, F, 0 },
	{ FFTD__TC_R2C, 2, { 256, 256 }, 3, F, 0 },
	{ FFTD__TC_R2C, 2, { 1024, 2048 }, 1, F, 1 },
	{ FFTD__TC_R2C, 3, { 64, 64, 64 }, 3, F, 0 },
	{ FFTD__TC_R2C, 3, { 32, 256, 512 }, 1, F, 0 },
	{ FFTD__TC_R2C, 3, { 512, 64, 64 }, 1, F, 1 },
	{ FFTD__TC_C2R, 1, { 512 }, 1025, I, 0 },
	{ FFTD__TC_C2R, 1, { 1024 }, 13, I, 0 },
	{ FFTD__TC_C2R, 1, { 2048 }, 6, I, 0 },
	{ FFTD__TC_C2R, 1, { 4096 }, 7, I, 0 },
	{ FFTD__TC_C2R, 1, { 8192 }, 5, I, 0 },
	{ FFTD__TC_C2R, 1, { 8192 }, 2, I, 1 },
	{ FFTD__TC_C2R, 1, { 16384 }, 3, I, 0 },
	{ FFTD__TC_C2R, 1, { 16384 }, 2, I, 1 },
	{ FFTD__TC_C2R, 1, { 65536 }, 3, I, 1 },
	{ FFTD__TC_C2R, 1, { 1 << 22 }, 1, I, 0 },
	{ FFTD__TC_C2R, 1, { 1 << 26 }, 1, I, 0 },
	{ FFTD__TC_C2R, 2, { 256, 256 }, 3, I, 0 },
	{ FFTD__TC_C2R, 2, { 1024, 2048 }, 1, I, 1 },
	{ FFTD__TC_C2R, 3, { 64, 64, 64 }, 3, I, 0 },
	{ FFTD__TC_C2R, 3, { 32, 256, 512 }, 1, I, 0 },
	{ FFTD__TC_C2R, 3, { 512, 64, 64 }, 1, I, 1 },
};

// A few small fused real passes of each row kind (8 or 2 rows a block,
// the 1024-point rows whose steps cross a quarter, the 8192-point rows with
// their output buffer), quick enough for compute-sanitizer: kernels/
// gpu-check.sh runs memcheck and racecheck on test_real_smoke.
static const nd_case cases_real_smoke[] = {
	{ FFTD__TC_R2C, 1, { 1024 }, 11, F, 0 },
	{ FFTD__TC_R2C, 1, { 2048 }, 6, F, 0 },
	{ FFTD__TC_R2C, 1, { 16384 }, 3, F, 0 },
	{ FFTD__TC_C2R, 1, { 1024 }, 11, I, 0 },
	{ FFTD__TC_C2R, 1, { 2048 }, 6, I, 0 },
	{ FFTD__TC_C2R, 1, { 16384 }, 3, I, 0 },
};

// run_all runs every case of a table with algo (skipped without a GPU) and
// fails once at the end, so that one run shows every case's figures.
static void
run_all(fftd__tc_algo algo, const nd_case *c, size_t n)
{
	fftd_test_kernel_need_gpu();
	int fails = 0; // every case runs, so one GPU run shows all of them
	for (size_t i = 0; i < n; i++)
		fails += run_nd(algo, &c[i]);
	assert_int_equal(fails, 0);
}

static void
test_tc16_3d(void **s)
{
	(void) s;
	run_all(FFTD__TC_TC16, cases_3d, sizeof cases_3d / sizeof cases_3d[0]);
}
static void
test_split16_3d(void **s)
{
	(void) s;
	run_all(
	    FFTD__TC_SPLIT16, cases_3d, sizeof cases_3d / sizeof cases_3d[0]);
}
static void
test_tc16_real(void **s)
{
	(void) s;
	run_all(FFTD__TC_TC16, cases_real,
	    sizeof cases_real / sizeof cases_real[0]);
}
static void
test_split16_real(void **s)
{
	(void) s;
	run_all(FFTD__TC_SPLIT16, cases_real,
	    sizeof cases_real / sizeof cases_real[0]);
}

static void
test_real_smoke(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	const size_t n = sizeof cases_real_smoke / sizeof cases_real_smoke[0];
	int          fails = 0;
	for (size_t i = 0; i < n; i++)
		fails += run_nd(FFTD__TC_TC16, &cases_real_smoke[i])
		    + run_nd(FFTD__TC_SPLIT16, &cases_real_smoke[i]);
	assert_int_equal(fails, 0);
}

// Kinds and directions that do not go together, shapes outside the ranges,
// and the workspace of real plans (the half-length complex batch).
static void
test_nd_errors(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	fftd__tc_plan *p = (fftd__tc_plan *) 1;
	int64_t n = 4096, d3[3] = { 64, 64, 64 }, bad[3] = { 64, 64, 1024 };
	assert_int_equal(
	    fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_R2C, 1, &n, 1, I),
	    FFTD__TC_EINVAL);
	assert_null(p);
	assert_int_equal(fftd__tc_plan_create(
	                     &p, FFTD__TC_SPLIT16, FFTD__TC_C2R, 3, d3, 1, F),
	    FFTD__TC_EINVAL);
	assert_int_equal(
	    fftd__tc_plan_create(&p, FFTD__TC_TC16, FFTD__TC_C2C, 3, bad, 1, F),
	    FFTD__TC_EUNSUPPORTED);
	assert_null(p);
	static const struct {
		fftd__tc_algo algo;
		fftd__tc_type type;
		int           rank;
		int64_t       dims[3], batch;
		size_t        ws;
	} w[] = {
		{ FFTD__TC_TC16, FFTD__TC_C2C, 3, { 64, 64, 64 }, 2, 0 },
		{ FFTD__TC_TC16, FFTD__TC_R2C, 1, { 4096 }, 3, 3 * 2048 * 4 },
		{ FFTD__TC_SPLIT16, FFTD__TC_C2R, 3, { 32, 64, 128 }, 2,
		    2 * 32 * 64 * 64 * 8 },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		size_t wsb = 1;
		assert_int_equal(fftd__tc_plan_create(&p, w[i].algo, w[i].type,
		                     w[i].rank, w[i].dims, w[i].batch,
		                     w[i].type == FFTD__TC_C2R ? I : F),
		    FFTD__TC_OK);
		assert_int_equal(fftd__tc_workspace_size(p, &wsb), FFTD__TC_OK);
		assert_true(wsb == w[i].ws);
		fftd__tc_plan_destroy(p);
	}
}

#else
// !FFTD_WITH_CUDA: built without CUDA, so every test is skipped.
FFTD_TEST_NO_CUDA(test_nd_errors)
FFTD_TEST_NO_CUDA(test_tc16_3d)
FFTD_TEST_NO_CUDA(test_split16_3d)
FFTD_TEST_NO_CUDA(test_tc16_real)
FFTD_TEST_NO_CUDA(test_split16_real)
FFTD_TEST_NO_CUDA(test_real_smoke)
#endif // FFTD_WITH_CUDA

// usage: test_tc16_nd [test-name-pattern]
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nd_errors),
		cmocka_unit_test(test_tc16_3d),
		cmocka_unit_test(test_split16_3d),
		cmocka_unit_test(test_tc16_real),
		cmocka_unit_test(test_split16_real),
		cmocka_unit_test(test_real_smoke),
	};
	return fftd_test_kernel_group(argc, argv, "tc16_nd_gpu", tests);
}

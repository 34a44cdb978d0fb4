// SPDX-License-Identifier: MIT
//
// test_tc16_io.c — GPU tests of tc16's fused conversion (kernels/tc.h,
// fftd__tc_plan_create_io / fftd__tc_execute_io; issue 18 item 4): f32 or
// int8 input converted to fp16 by the first pass as it loads it, f32 (or
// fp16, for f16 data with int8 input) output written by the last pass, with the
// per-transform exponents of fftd__conv_exponents (kernels/convert.h, fp16's
// target 2^15). One case per kind of first and last pass: 1D one-pass (each
// level-2 variant), two-pass (radix last; 256 .. 4096-point columns),
// three-pass; 2D; 3D with CUDA-core and tensor-core axes; R2C and C2R in 1D,
// 2D, 3D; int8 of full range and of two bits; forward and inverse; in place
// (f32 in and out).
//
// Each case runs on fresh random input, with the outputs and the workspace
// poisoned (0xff) first, and is checked three ways:
//   - against FFTW in double on the exact input values: relative L2 error
//     of the whole batch at most 2e-3 (tc16's own error is 3-8e-4 at these
//     sizes; the bound leaves room for the input's rounding to fp16);
//   - against the separate conversion that fused plans replace
//     (fftd__conv_in, the native tc16 plan, fftd__conv_out, on the same
//     input): the fused error may not exceed it (x 1.001). The two round at
//     the same places except that a last pass writing from registers skips
//     the final rounding to fp16, so the fused result is identical or better;
//   - out of place, the input is left unchanged.
// Without a GPU every test reports itself skipped, never passed.

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
#include <fftw3.h>

#include "convert.h"
#include "fftd_kernels.h"
#include "tc.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull; // the inputs' xorshift state

// One case: kind, shape, batch, direction, the input and output kinds,
// the input's amplitude (f32: uniform in [-amp, amp]; int8: integers in
// [-amp, amp]), in place.
typedef struct io_case {
	fftd__tc_type type;
	int           rank;
	int64_t       dims[3];
	int64_t       batch;
	int           dir;
	fftd__tc_io   in_io, out_io;
	double        amp;
	int           in_place;
} io_case;

#define F FFTD__TC_FORWARD
#define I FFTD__TC_INVERSE
#define F32 FFTD__TC_IO_F32
#define I8 FFTD__TC_IO_I8
#define NAT FFTD__TC_IO_NATIVE

static const io_case cases[] = {
	// 1D one pass: level 2 of R = 1, 2..8, 16, 32 and 64, and 128 (the
	// in-place 32768-point pass)
	{ FFTD__TC_C2C, 1, { 256 }, 4099, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 1, { 1024 }, 1024, I, F32, F32, 1e3, 1 },
	{ FFTD__TC_C2C, 1, { 4096 }, 256, F, F32, F32, 1e-6, 0 },
	{ FFTD__TC_C2C, 1, { 16384 }, 64, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 1, { 8192 }, 17, I, I8, F32, 127, 0 },
	{ FFTD__TC_C2C, 1, { 32768 }, 33, F, F32, F32, 1.0, 0 },
	// two passes: 256-, 1024- and 4096-point columns; three passes
	{ FFTD__TC_C2C, 1, { 65536 }, 16, I, F32, F32, 1.0, 1 },
	{ FFTD__TC_C2C, 1, { 1 << 20 }, 4, F, I8, F32, 3, 0 },
	{ FFTD__TC_C2C, 1, { 1 << 24 }, 1, F, F32, F32, 1.0, 0 },
	// int8 into the in-place 4096-point column pass (its own load
	// grouping, tc16_pass.cuh cv_copy_in)
	{ FFTD__TC_C2C, 1, { 1 << 24 }, 1, I, I8, F32, 127, 0 },
	{ FFTD__TC_C2C, 1, { 1 << 25 }, 1, I, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 1, { 65536 }, 8, F, I8, NAT, 20, 0 },
	// 2D and 3D
	{ FFTD__TC_C2C, 2, { 256, 256 }, 9, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 2, { 1024, 4096 }, 1, I, I8, F32, 127, 0 },
	{ FFTD__TC_C2C, 3, { 32, 32, 32 }, 33, F, F32, F32, 1.0, 1 },
	{ FFTD__TC_C2C, 3, { 64, 256, 128 }, 1, I, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 3, { 256, 256, 256 }, 1, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2C, 3, { 64, 64, 64 }, 4, F, I8, NAT, 10, 0 },
	// real transforms: the R2C post-process last, the C2R pre-process
	// first
	{ FFTD__TC_R2C, 1, { 4096 }, 513, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_R2C, 1, { 1 << 20 }, 3, F, I8, F32, 127, 0 },
	{ FFTD__TC_R2C, 2, { 1024, 1024 }, 2, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_R2C, 3, { 64, 64, 64 }, 3, F, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2R, 1, { 4096 }, 513, I, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2R, 1, { 1 << 20 }, 3, I, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2R, 2, { 256, 512 }, 5, I, F32, F32, 1.0, 0 },
	{ FFTD__TC_C2R, 3, { 32, 64, 128 }, 3, I, F32, F32, 1.0, 0 },
};

// Scalars (reals) of the input and output of the whole batch, and points
// (logical) of one transform.
static void
counts(const io_case *c, int64_t *in_s, int64_t *out_s, int64_t *pts)
{
	int64_t p = 1, n = c->dims[c->rank - 1];
	for (int i = 0; i < c->rank; i++)
		p *= c->dims[i];
	int64_t half = 2 * c->batch * (p / n) * (n / 2 + 1);
	*in_s        = c->type == FFTD__TC_C2C ? 2 * c->batch * p
	           : c->type == FFTD__TC_R2C   ? c->batch * p
	                                       : half;
	*out_s       = c->type == FFTD__TC_C2C ? 2 * c->batch * p
	          : c->type == FFTD__TC_R2C    ? half
	                                       : c->batch * p;
	*pts         = p;
}

static size_t
io_size(fftd__tc_io io)
{
	return io == F32 ? 4 : io == I8 ? 1 : 2; // one real
}

// make_input fills x (in_s reals, exactly the values stored) and hin (the
// input in its kind), then ref with FFTW in double of x.
static void
make_input(const io_case *c, double *x, void *hin, double *ref)
{
	int64_t in_s, out_s, pts;
	counts(c, &in_s, &out_s, &pts);
	if (c->type == FFTD__TC_C2R) {
		// a half spectrum of random reals (amplitude amp), in f32
		fftd_test_tc_half_spectrum(
		    c->rank, c->dims, c->batch, c->amp, 1.0, &rng, x);
		for (int64_t i = 0; i < in_s; i++)
			x[i] = (double) (float) x[i];
	} else {
		for (int64_t i = 0; i < in_s; i++) {
			double u = fftd_test_urand(&rng);
			x[i]     = c->in_io == I8
			        ? floor((2 * c->amp + 1) * (u + 1) / 2) - c->amp
			        : (double) (float) (c->amp * u);
			if (x[i] > c->amp)
				x[i] = c->amp;
		}
	}
	for (int64_t i = 0; i < in_s; i++)
		if (c->in_io == I8)
			((int8_t *) hin)[i] = (int8_t) x[i];
		else
			((float *) hin)[i] = (float) x[i];
	fftd_test_tc_fftw(c->type, c->rank, c->dims, c->batch, c->dir, x, ref);
}

// out_val reads output real i of kind io as a double.
static double
out_val(fftd__tc_io io, const void *out, int64_t i)
{
	return io == F32 ? ((const float *) out)[i]
	                 : fftd__tc_f32_from_f16(((const uint16_t *) out)[i]);
}

// rel_l2 is the relative L2 error of n output reals against ref (huge on a
// non-finite one).
static double
rel_l2(fftd__tc_io io, const void *out, const double *ref, int64_t n)
{
	double *got = malloc(sizeof(double) * (size_t) n);
	assert_non_null(got);
	for (int64_t i = 0; i < n; i++)
		got[i] = out_val(io, out, i);
	double e = fftd_test_rel_l2(got, ref, n);
	free(got);
	return e;
}

// dmalloc allocates n device bytes filled with 0xff (NaN in fp16 and
// fp32).
static void *
dmalloc(size_t n)
{
	void *p = NULL;
	assert_int_equal(cudaMalloc(&p, n > 0 ? n : 1), cudaSuccess);
	assert_int_equal(cudaMemset(p, 0xff, n > 0 ? n : 1), cudaSuccess);
	return p;
}

// separate runs the conversion that fused plans replace, into hout (the
// output's kind): fftd__conv_in, the native tc16 plan, fftd__conv_out.
static void
separate(const io_case *c, const void *hin, void *hout)
{
	int64_t in_s, out_s, pts;
	counts(c, &in_s, &out_s, &pts);
	fftd__tc_plan *plan = NULL;
	assert_int_equal(fftd__tc_plan_create(&plan, FFTD__TC_TC16, c->type,
	                     c->rank, c->dims, c->batch, c->dir),
	    FFTD__TC_OK);
	size_t wsb = 0;
	assert_int_equal(fftd__tc_workspace_size(plan, &wsb), FFTD__TC_OK);
	int   src  = c->in_io == I8 ? FFTD__KERN_I8 : FFTD__KERN_F32;
	int   dst  = c->out_io == F32 ? FFTD__KERN_F32 : FFTD__KERN_F16;
	void *din  = dmalloc(io_size(c->in_io) * (size_t) in_s);
	void *cin  = dmalloc(2 * (size_t) in_s);
	void *cout = dmalloc(2 * (size_t) out_s);
	void *dout = dmalloc(io_size(c->out_io) * (size_t) out_s);
	void *ws   = dmalloc(wsb);
	void *scr  = dmalloc(fftd__conv_scratch_bytes(c->batch));
	assert_int_equal(cudaMemcpy(din, hin, io_size(c->in_io) * (size_t) in_s,
	                     cudaMemcpyHostToDevice),
	    cudaSuccess);
	assert_int_equal(fftd__conv_in(din, src, cin, FFTD__KERN_F16, c->batch,
	                     in_s / c->batch, pts, 15, scr, NULL),
	    0);
	assert_int_equal(
	    fftd__tc_execute(plan, cin, cout, ws, NULL), FFTD__TC_OK);
	assert_int_equal(fftd__conv_out(cout, FFTD__KERN_F16, dout, dst,
	                     c->batch, out_s / c->batch, scr, NULL),
	    0);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(hout, dout, io_size(c->out_io) * (size_t) out_s,
	        cudaMemcpyDeviceToHost),
	    cudaSuccess);
	cudaFree(din);
	cudaFree(cin);
	cudaFree(cout);
	cudaFree(dout);
	cudaFree(ws);
	cudaFree(scr);
	fftd__tc_plan_destroy(plan);
}

// run_io runs case c fused and checks it (see the top of the file);
// returns 1 when it fails.
static int
run_io(const io_case *c)
{
	static const char *const kind[3] = { "C2C", "R2C", "C2R" };
	static const char *const ion[3]  = { "f16", "f32", "int8" };
	int64_t                  in_s, out_s, pts;
	counts(c, &in_s, &out_s, &pts);
	fftd__tc_plan *plan = NULL;
	int rc = fftd__tc_plan_create_io(&plan, FFTD__TC_TC16, c->type, c->rank,
	    c->dims, c->batch, c->dir, c->in_io, c->out_io);
	if (rc != FFTD__TC_OK) {
		print_message("plan_create_io: %s\n", fftd__tc_strerror(rc));
		return 1;
	}
	size_t wsb = 0;
	assert_int_equal(fftd__tc_workspace_size(plan, &wsb), FFTD__TC_OK);
	size_t ib   = io_size(c->in_io) * (size_t) in_s,
	       ob   = io_size(c->out_io) * (size_t) out_s;
	double *x   = fftw_malloc(sizeof(double) * (size_t) in_s);
	double *ref = fftw_malloc(sizeof(double) * (size_t) out_s);
	void   *hin = malloc(ib), *hout = malloc(ob), *hsep = malloc(ob),
	     *back = malloc(ib);
	assert_true(x != NULL && ref != NULL && hin != NULL && hout != NULL
	    && hsep != NULL && back != NULL);
	make_input(c, x, hin, ref);

	void *din  = dmalloc(c->in_place ? (ib > ob ? ib : ob) : ib);
	void *dout = c->in_place ? din : dmalloc(ob);
	void *ws   = dmalloc(wsb);
	void *scr  = dmalloc(fftd__conv_scratch_bytes(c->batch));
	assert_int_equal(
	    cudaMemcpy(din, hin, ib, cudaMemcpyHostToDevice), cudaSuccess);
	int src = c->in_io == I8 ? FFTD__KERN_I8 : FFTD__KERN_F32;
	assert_int_equal(fftd__conv_exponents(din, src, c->batch,
	                     in_s / c->batch, pts, 15, scr, NULL),
	    0);
	assert_int_equal(fftd__tc_execute_io(plan, din, dout, ws,
	                     fftd__conv_exps(scr, c->batch), NULL),
	    FFTD__TC_OK);
	assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
	assert_int_equal(
	    cudaMemcpy(hout, dout, ob, cudaMemcpyDeviceToHost), cudaSuccess);
	int fail = 0;
	if (!c->in_place) {
		assert_int_equal(
		    cudaMemcpy(back, din, ib, cudaMemcpyDeviceToHost),
		    cudaSuccess);
		if (memcmp(back, hin, ib) != 0) {
			print_message("  the input changed\n");
			fail = 1;
		}
	}
	cudaFree(din);
	if (!c->in_place)
		cudaFree(dout);
	cudaFree(ws);
	cudaFree(scr);

	separate(c, hin, hsep);
	double  e    = rel_l2(c->out_io, hout, ref, out_s);
	double  es   = rel_l2(c->out_io, hsep, ref, out_s);
	int64_t same = 0;
	for (int64_t i = 0; i < out_s; i++)
		same += out_val(c->out_io, hout, i)
		    == out_val(c->out_io, hsep, i);
	fail |= !(e <= 2e-3) || !(e <= es * 1.001);
	char desc[640];
	fftd__tc_plan_describe(plan, desc, sizeof desc);
	print_message("  %s %lldx%lldx%lld b%lld %s %s->%s amp %g%s: rel L2 "
	              "%.3e, separate %.3e (%.3fx), %.1f%% identical%s  [%s]\n",
	    kind[c->type], (long long) c->dims[0],
	    c->rank > 1 ? (long long) c->dims[1] : 0LL,
	    c->rank > 2 ? (long long) c->dims[2] : 0LL, (long long) c->batch,
	    c->dir == F ? "fwd" : "inv", ion[c->in_io], ion[c->out_io], c->amp,
	    c->in_place ? " in-place" : "", e, es, e / es,
	    100.0 * (double) same / (double) out_s, fail ? "  FAIL" : "", desc);
	fftd__tc_plan_destroy(plan);
	fftw_free(x);
	fftw_free(ref);
	free(hin);
	free(hout);
	free(hsep);
	free(back);
	return fail;
}

// Every case runs, so that one GPU run shows all the figures; one failure
// at the end.
static void
test_tc16_io_cases(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	int fails = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		fails += run_io(&cases[i]);
	assert_int_equal(fails, 0);
}

// Refusals and the workspace: split16 and int8 output are refused, kinds
// out of range are invalid; a one-pass plan needs no workspace, others one
// more fp16 copy of the batch.
static void
test_tc16_io_errors(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	fftd__tc_plan *p = (fftd__tc_plan *) 1;
	int64_t        n = 4096, d2[2] = { 256, 256 }, n1 = 1 << 20;
	assert_int_equal(fftd__tc_plan_create_io(&p, FFTD__TC_SPLIT16,
	                     FFTD__TC_C2C, 1, &n, 1, F, F32, F32),
	    FFTD__TC_EUNSUPPORTED);
	assert_null(p);
	assert_int_equal(fftd__tc_plan_create_io(&p, FFTD__TC_TC16,
	                     FFTD__TC_C2C, 1, &n, 1, F, F32, I8),
	    FFTD__TC_EUNSUPPORTED);
	assert_int_equal(fftd__tc_plan_create_io(&p, FFTD__TC_TC16,
	                     FFTD__TC_C2C, 1, &n, 1, F, (fftd__tc_io) 7, F32),
	    FFTD__TC_EINVAL);
	const struct {
		int            rank;
		const int64_t *dims;
		size_t         ws;
	} w[] = {
		{ 1, &n, 0 },
		{ 2, d2, 3 * 65536 * 4 },
		{ 1, &n1, 3 * (1 << 20) * 4 },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		size_t wsb = 1;
		assert_int_equal(
		    fftd__tc_plan_create_io(&p, FFTD__TC_TC16, FFTD__TC_C2C,
		        w[i].rank, w[i].dims, 3, F, F32, F32),
		    FFTD__TC_OK);
		assert_int_equal(fftd__tc_workspace_size(p, &wsb), FFTD__TC_OK);
		assert_true(wsb == w[i].ws);
		// a misaligned f32 input is refused before any launch
		assert_int_equal(fftd__tc_execute_io(p, (void *) (uintptr_t) 4,
		                     (void *) (uintptr_t) 64,
		                     (void *) (uintptr_t) 64, NULL, NULL),
		    FFTD__TC_EINVAL);
		fftd__tc_plan_destroy(p);
	}
}

#else
// !FFTD_WITH_CUDA: built without CUDA, so every test is skipped.
FFTD_TEST_NO_CUDA(test_tc16_io_errors)
FFTD_TEST_NO_CUDA(test_tc16_io_cases)
#endif // FFTD_WITH_CUDA

// usage: test_tc16_io [test-name-pattern]
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tc16_io_errors),
		cmocka_unit_test(test_tc16_io_cases),
	};
	return fftd_test_kernel_group(argc, argv, "tc16_io_gpu", tests);
}

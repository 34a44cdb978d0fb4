// SPDX-License-Identifier: MIT
//
// test_conv.c — GPU tests of the per-transform exponents of the precision
// conversions (kernels/convert.h, fftd__conv_exponents), which every
// converted plan scales by: tc16's fused conversion, the separate
// conversions of split16 and cuFFT, int8 input. Each case fills ntr
// transforms of reals_per values with fresh random data of a different
// magnitude per transform (and in some transforms a NaN, an infinity, only
// zeros, int8's -128 as the sole extreme), and checks every exponent
// against the same rule computed on the host in double: with m the
// transform's largest |value|, e = target - (em + ep) - 1 where m < 2^em
// and points <= 2^ep (frexp), e = 0 for a NaN, an infinity or only zeros.
// The data are drawn from fftd_test_seed (FFTD_TEST_SEED repeats a run).
// The cases cover both scans (4-element groups, 16-byte aligned, with
// vector loads; one element a thread, for other lengths, misaligned data
// and f64), transforms from 6 values to 32768, and batches of up to 1001
// transforms. Without a GPU every test reports itself skipped, never
// passed.

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../util/cases.h"
#include "../util/gpu.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>

#include "convert.h"
#include "fftd_kernels.h"
#include "tc.h"

static uint64_t rng; // xorshift state, from fftd_test_seed

static double
urand(void) // uniform in [-1, 1)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double) (rng >> 11) / 4503599627370496.0 - 1.0;
}

// One case: the data's precision, transforms, values a transform, the
// byte offset of the data from a 16-byte boundary.
typedef struct conv_case {
	int     prec;
	int64_t ntr, reals_per;
	size_t  offset;
} conv_case;

static size_t
elem_size(int prec)
{
	return prec == FFTD__KERN_F64 ? 8
	    : prec == FFTD__KERN_F32  ? 4
	    : prec == FFTD__KERN_I8   ? 1
	                              : 2;
}

// put stores v into element i of h (precision prec), returning the value
// stored, as a double.
static double
put(void *h, int prec, int64_t i, double v)
{
	switch (prec) {
	case FFTD__KERN_F64:
		((double *) h)[i] = v;
		return v;
	case FFTD__KERN_F32:
		((float *) h)[i] = (float) v;
		return (double) (float) v;
	case FFTD__KERN_I8: {
		double r = v < -128 ? -128 : v > 127 ? 127 : nearbyint(v);
		((int8_t *) h)[i] = (int8_t) r;
		return r;
	}
	default:
		((uint16_t *) h)[i] = fftd__tc_f16_from_f32((float) v);
		return (double) fftd__tc_f32_from_f16(((uint16_t *) h)[i]);
	}
}

// expected is the exponent rule of convert.h for largest |value| m.
static int
expected(double m, int64_t points, int target)
{
	if (!(m > 0) || !isfinite(m))
		return 0;
	int em, ep;
	(void) frexp(m, &em);
	(void) frexp((double) points, &ep);
	int x = target - (em + ep) - 1;
	return x < -1000 ? -1000 : x > 1000 ? 1000 : x;
}

// fill writes transform t of case c into h and returns its largest
// |value| (NaN if it holds one): a magnitude per transform, so that the
// exponents differ, and now and then a special transform.
static double
fill(const conv_case *c, void *h, int64_t t)
{
	const int i8 = c->prec == FFTD__KERN_I8;
	// magnitudes within the precision's range: int8 integers up to
	// 127, f16 from 2^-10 to 2^14, f32 and f64 wider
	static const double amp_f[]  = { 1e-30, 3e-7, 1.0, 5e3, 1e30 };
	static const double amp_h[]  = { 1e-3, 0.25, 1.0, 300.0, 16000.0 };
	static const double amp_i8[] = { 1.0, 3.0, 17.0, 100.0, 127.0 };
	const double       *amps     = i8         ? amp_i8
	              : c->prec == FFTD__KERN_F16 ? amp_h
	                                          : amp_f;
	const double        amp      = amps[t % 5];
	const int           kind     = (int) (t % 7); // 5: special, 6: all zero
	int64_t             base     = t * c->reals_per;
	double              m        = 0;
	for (int64_t i = 0; i < c->reals_per; i++) {
		double v = kind == 6 ? 0.0 : amp * urand();
		double a = fabs(put(h, c->prec, base + i, v));
		m        = a > m ? a : m;
	}
	if (kind == 5) {
		// one special value at a random position
		int64_t i = base + (int64_t) ((urand() + 1) / 2 * c->reals_per);
		if (i8) {
			// -128 alone: |x| = 128 needs one bit more than 127
			for (int64_t j = base; j < base + c->reals_per; j++)
				put(h, c->prec, j, 0.0);
			put(h, c->prec, i, -128.0);
			return 128.0;
		}
		put(h, c->prec, i, (t / 7) % 2 ? NAN : -INFINITY);
		return (t / 7) % 2 ? NAN : INFINITY;
	}
	return m;
}

static void
run_case(const conv_case *c)
{
	const size_t   es     = elem_size(c->prec);
	const size_t   bytes  = (size_t) (c->ntr * c->reals_per) * es;
	const int      target = 15;
	const int64_t  points = c->reals_per / 2 > 0 ? c->reals_per / 2 : 1;
	unsigned char *h      = malloc(bytes);
	double        *m      = malloc(sizeof(double) * (size_t) c->ntr);
	int           *got    = malloc(sizeof(int) * (size_t) c->ntr);
	assert_true(h != NULL && m != NULL && got != NULL);
	for (int64_t t = 0; t < c->ntr; t++)
		m[t] = fill(c, h, t);

	unsigned char *d   = NULL;
	void          *scr = NULL;
	size_t         sb  = fftd__conv_scratch_bytes(c->ntr);
	assert_int_equal(cudaMalloc((void **) &d, bytes + 16), cudaSuccess);
	assert_int_equal(cudaMalloc(&scr, sb), cudaSuccess);
	assert_int_equal(cudaMemset(scr, 0x5a, sb), cudaSuccess); // poison
	assert_int_equal(
	    cudaMemcpy(d + c->offset, h, bytes, cudaMemcpyHostToDevice),
	    cudaSuccess);
	assert_int_equal(fftd__conv_exponents(d + c->offset, c->prec, c->ntr,
	                     c->reals_per, points, target, scr, NULL),
	    0);
	assert_int_equal(
	    cudaMemcpy(got, fftd__conv_exps(scr, c->ntr),
	        sizeof(int) * (size_t) c->ntr, cudaMemcpyDeviceToHost),
	    cudaSuccess);
	int bad = 0;
	for (int64_t t = 0; t < c->ntr; t++) {
		int want = expected(m[t], points, target);
		if (got[t] != want && bad++ < 5)
			print_message("  transform %lld: exponent %d, want %d "
			              "(max |x| %g)\n",
			    (long long) t, got[t], want, m[t]);
	}
	if (bad)
		print_message("  prec %d, %lld x %lld values, offset %zu: "
		              "%d exponents wrong\n",
		    c->prec, (long long) c->ntr, (long long) c->reals_per,
		    c->offset, bad);
	cudaFree(d);
	cudaFree(scr);
	free(h);
	free(m);
	free(got);
	assert_int_equal(bad, 0);
}

static void
test_conv_exponents(void **s)
{
	(void) s;
	fftd_test_kernel_need_gpu();
	rng = fftd_test_seed() | 1;

	static const conv_case cases[] = {
		// 4-element groups: long and short transforms, many of them
		{ FFTD__KERN_F32, 29, 8192 * 2, 0 },
		{ FFTD__KERN_F32, 70, 512, 0 },
		{ FFTD__KERN_F32, 1001, 12, 0 },
		{ FFTD__KERN_F16, 37, 520, 0 },
		{ FFTD__KERN_F16, 64, 1 << 15, 0 },
		{ FFTD__KERN_F16, 50, 36, 0 },
		{ FFTD__KERN_I8, 9, 8192, 0 },
		{ FFTD__KERN_I8, 333, 48, 0 },
		{ FFTD__KERN_I8, 40, 2 * 4096 * 3, 0 },
		{ FFTD__KERN_I8, 77, 20, 0 },
		// one element a thread: other lengths, misaligned, f64
		{ FFTD__KERN_F32, 31, 6, 0 },
		{ FFTD__KERN_F32, 23, 4096, 4 },
		{ FFTD__KERN_I8, 19, 2048, 8 },
		{ FFTD__KERN_F64, 21, 4096, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
}

#else
// !FFTD_WITH_CUDA: built without CUDA, so every test is skipped.
FFTD_TEST_NO_CUDA(test_conv_exponents)
#endif // FFTD_WITH_CUDA

// usage: test_conv [test-name-pattern]
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_exponents),
	};
	return fftd_test_kernel_group(argc, argv, "conv_gpu", tests);
}

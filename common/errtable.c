// SPDX-License-Identifier: MIT
//
// errtable.c — the error table of accuracy-aware "auto" (errtable.h): one
// row per algorithm and computing precision, each a bound c * u * L^p of
// the relative L2 error of one transform of N points (u the unit roundoff,
// L = max(1, ceil(log2 N))), and the names a row runs and is reported
// under. The target is that "auto" with a tolerance never returns a result
// worse than it, so every constant is twice the largest ratio measured.
//
// Where the constants come from (relative L2 error against FFTW in double
// or long double on the same rounded input, random data):
//   tc16      bench/kernels on the H100 (lead's baseline run, 2^26 points a
//             launch, 1D 256 .. 2^27, 2D 256^2 .. 4096^2): 3.2e-4 at 256,
//             4.6e-4 at 8192, 5.6e-4 at 2^20, 6.1e-4 at 2^24, 7.1e-4 at
//             2^27: at most 0.28 u sqrt(L) (u = 2^-11)       -> c 0.6, p 1/2
//   split16   same run: 1.6e-7 .. 4.4e-7, at most 1.47 u sqrt(L) (4.3e-7
//             at 2^24 and 4096^2; u = 2^-24)                  -> c 3,   p 1/2
//   cufft f16 same run: 8.5e-4 .. 2.7e-3, at most 1.15 u sqrt(L) (2.74e-3
//             at 4096^2)                                      -> c 2.3, p 1/2
//   cufft f32 same run: 1.4e-7 .. 3.8e-7, at most 1.24 u sqrt(L) (2.85e-7
//             at 32768, 3.83e-7 at 2^27)                      -> c 2.5, p 1/2
//   cufft f64 no GPU figure in the tree: the f32 library's figure bounded
//             by 1.24 u L, doubled, in the linear form         -> c 2,   p 1
//             (tests/gpu/test_cuda_transforms checks 16 u L)
//   fftw      tests/util/ref.h: FFTW stays below 0.5 u L on every layout
//             of test_backend_fftw, primes and Bluestein sizes
//             included                                         -> c 1,   p 1
// tc16 and split16 keep the data's magnitude in range themselves (split16
// scales each fragment) or through the daemon's power-of-two scaling on
// conversion (daemon/backends/cuda_convert.c), which is exact. The
// linear-in-L rows cover sizes that are not powers of two.

#include "errtable.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const fftd__err_row fftd__err_rows[] = {
	{ "fftw", "fftw", FFTD_F64, 1.0, 1.0 },
	{ "fftw", "fftw", FFTD_F32, 1.0, 1.0 },
	{ "cufft", "cuda", FFTD_F64, 2.0, 1.0 },
	{ "cufft", "cuda", FFTD_F32, 2.5, 0.5 },
	{ "cufft", "cuda", FFTD_F16, 2.3, 0.5 },
	{ "split16", "cuda", FFTD_F32, 3.0, 0.5 },
	{ "tc16", "cuda", FFTD_F16, 0.6, 0.5 },
};
const int fftd__err_nrows
    = (int) (sizeof(fftd__err_rows) / sizeof(fftd__err_rows[0]));

// fftd__err_unit is the unit roundoff of precision p.
double
fftd__err_unit(fftd_precision p)
{
	switch (p) {
	case FFTD_F64:
		return ldexp(1.0, -53);
	case FFTD_F32:
		return ldexp(1.0, -24);
	case FFTD_F16:
		return ldexp(1.0, -11);
	default:
		return 1.0;
	}
}

// fftd__err_prec_rank orders precisions by accuracy.
int
fftd__err_prec_rank(fftd_precision p)
{
	return p == FFTD_F16 ? 0 : p == FFTD_F32 ? 1 : p == FFTD_F64 ? 2 : -1;
}

// fftd__err_bound is row r's bound for `points` points of `data`.
double
fftd__err_bound(const fftd__err_row *r, fftd_precision data, int64_t points)
{
	int rd = fftd__err_prec_rank(data),
	    rc = fftd__err_prec_rank(r->compute);
	if (rd < 0 || rc < 0 || rc > rd) {
		return 1.0;
	}
	int L = 1;
	while (L < 62 && ((int64_t) 1 << L) < points) {
		L++;
	}
	double uc = fftd__err_unit(r->compute), ud = fftd__err_unit(data);
	double b = r->c * uc * pow((double) L, r->p) + ud;
	if (rc < rd) {
		// The input's rounding to the computing precision, and one
		// more rounding there for a norm's scale pass.
		b += 2 * uc;
	}
	return b;
}

// fixed_precision says whether algorithm algo computes in one precision
// only, so that its name says it (tc16: fp16; split16: split fp32).
static int
fixed_precision(const char *algo)
{
	return strcmp(algo, "tc16") == 0 || strcmp(algo, "split16") == 0;
}

// fftd__err_name writes the name row r is reported under for `data`.
const char *
fftd__err_name(const fftd__err_row *r, fftd_precision data, char out[16])
{
	if (r->compute == data || fixed_precision(r->algo)) {
		snprintf(out, 16, "%s", r->algo);
	} else {
		snprintf(out, 16, "%s-%s", r->algo,
		    r->compute == FFTD_F32 ? "f32" : "f16");
	}
	return out;
}

// fftd__err_key writes the name the backend plans row r under for `data`.
const char *
fftd__err_key(const fftd__err_row *r, fftd_precision data, char out[16])
{
	if (fixed_precision(r->algo) && r->compute != data) {
		snprintf(out, 16, "%s-conv", r->algo);
		return out;
	}
	return fftd__err_name(r, data, out);
}

// SPDX-License-Identifier: MIT
//
// r2r.c — FFTW's halfcomplex order (FFTW_R2HC, FFTW_HC2R; FFTW manual
// 4.3.5 "The Halfcomplex-format DFT") against the n/2+1 complex outputs of
// an r2c transform. A halfcomplex array of n reals holds
//     r_0, r_1, ..., r_{n/2}, i_{(n+1)/2-1}, ..., i_1
// where r_k + i i_k is bin k of the r2c output: element k < n/2 + 1 is the
// real part of bin k, element n - k (0 < k < (n+1)/2) its imaginary part;
// i_0 and, for even n, i_{n/2} are zero and not stored. The daemon runs
// R2C or C2R with the complex side in a contiguous temporary array; these
// loops move it to or from the user's strided halfcomplex array.

#include "dropin_impl.h"

// TO_HC is fftd__dr_to_hc for one real type.
#define TO_HC(T)                                                               \
	do {                                                                   \
		const T *c = cplx;                                             \
		T       *o = out;                                              \
		int64_t  h = n / 2 + 1;                                        \
		for (int64_t b = 0; b < batch; b++) {                          \
			const T *cb = c + 2 * b * h;                           \
			T       *ob = o + b * dist;                            \
			for (int64_t k = 0; k < h; k++) {                      \
				ob[k * stride] = cb[2 * k];                    \
			}                                                      \
			for (int64_t k = 1; k < (n + 1) / 2; k++) {            \
				ob[(n - k) * stride] = cb[2 * k + 1];          \
			}                                                      \
		}                                                              \
	} while (0)

// FROM_HC is fftd__dr_from_hc for one real type.
#define FROM_HC(T)                                                             \
	do {                                                                   \
		const T *x = in;                                               \
		T       *c = cplx;                                             \
		int64_t  h = n / 2 + 1;                                        \
		for (int64_t b = 0; b < batch; b++) {                          \
			const T *xb = x + b * dist;                            \
			T       *cb = c + 2 * b * h;                           \
			for (int64_t k = 0; k < h; k++) {                      \
				cb[2 * k]     = xb[k * stride];                \
				cb[2 * k + 1] = 0;                             \
			}                                                      \
			for (int64_t k = 1; k < (n + 1) / 2; k++) {            \
				cb[2 * k + 1] = xb[(n - k) * stride];          \
			}                                                      \
		}                                                              \
	} while (0)

// fftd__dr_to_hc: see dropin_impl.h.
void
fftd__dr_to_hc(fftd__dr_prec prec, int64_t n, int64_t batch, const void *cplx,
    void *out, int64_t stride, int64_t dist)
{
	if (prec == FFTD__DR_F64) {
		TO_HC(double);
	} else {
		TO_HC(float);
	}
}

// fftd__dr_from_hc: see dropin_impl.h.
void
fftd__dr_from_hc(fftd__dr_prec prec, int64_t n, int64_t batch, const void *in,
    int64_t stride, int64_t dist, void *cplx)
{
	if (prec == FFTD__DR_F64) {
		FROM_HC(double);
	} else {
		FROM_HC(float);
	}
}

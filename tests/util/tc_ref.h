// SPDX-License-Identifier: MIT
//
// tc_ref.h — PRIVATE to fftd's tests. The reference of the kernel-level
// tests of the tensor-core FFTs (tests/gpu/test_tc16_nd.c, test_tc16_io.c):
// FFTW in double of a batch of C2C, R2C or C2R transforms as tc.h lays them
// out (dense, row-major, batches back to back; R2C/C2R half spectra of
// n/2 + 1 along the last axis), the half spectrum of random real data as a
// C2R input, and the relative L2 error of double arrays. Plain C and FFTW:
// it builds without CUDA.
#ifndef FFTD_TESTS_TC_REF_H
#define FFTD_TESTS_TC_REF_H

#include <stdint.h>

// Kinds, as tc.h's fftd__tc_type (kept apart so that no CUDA header is
// needed here).
enum { FFTD_TEST_TC_C2C = 0, FFTD_TEST_TC_R2C = 1, FFTD_TEST_TC_C2R = 2 };

// fftd_test_tc_fftw writes into ref the transform (FFTW in double,
// unnormalized; forward when dir < 0, else backward; R2C forward and C2R
// backward whatever dir) of x, batch transforms of dims[0..rank-1]
// (scalars: C2C 2 prod(dims), R2C prod(dims) reals in, the half spectrum
// out, C2R the reverse). x is not changed. Fails the calling cmocka test
// when FFTW cannot plan.
void fftd_test_tc_fftw(int type, int rank, const int64_t *dims, int64_t batch,
    int dir, const double *x, double *ref);

// fftd_test_tc_half_spectrum fills x with the half spectra (the R2C output)
// of batch arrays of dims of random reals uniform in [-amp, amp]
// (fftd_test_urand on *rng), each multiplied by scale.
void fftd_test_tc_half_spectrum(int rank, const int64_t *dims, int64_t batch,
    double amp, double scale, uint64_t *rng, double *x);

// fftd_test_rel_l2 is the relative L2 error sqrt(sum (got-ref)^2 / sum
// ref^2) of n doubles, 1e30 when got holds a NaN or an infinity.
double fftd_test_rel_l2(const double *got, const double *ref, int64_t n);

#endif // FFTD_TESTS_TC_REF_H

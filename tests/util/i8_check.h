// SPDX-License-Identifier: MIT
//
// i8_check.h — PRIVATE to fftd's tests. int8 input (fftd_plan_desc.input =
// FFTD_INPUT_I8) checked end to end on any daemon: a case's plan, fresh
// random int8 input over the full range, the long double FFTW reference of
// the same values widened exactly, poisoned outputs, and the three data
// paths (inline, a shared buffer at an odd offset, resident arrays). Used
// by tests/integration/test_int8.c (fftw) and tests/gpu/test_gpu_int8.c
// (cuda). Failures are cmocka assertions.

#ifndef FFTD_TESTS_I8_CHECK_H
#define FFTD_TESTS_I8_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"
#include "layout.h"

// fftd_test_i8_case is one shape: kind, rank, sizes, batch and the layout
// fields of fftd_plan_desc (0: default).
typedef struct fftd_test_i8_case {
	fftd_kind kind;
	int       rank;
	int64_t   n[FFTD_MAX_RANK];
	int64_t   batch;
	int64_t   istride, idist, inembed[FFTD_MAX_RANK];
	int64_t   ostride, odist, onembed[FFTD_MAX_RANK];
} fftd_test_i8_case;

// fftd_test_i8_dense are the dense cases every backend serves: C2C and
// R2C, rank 1 (powers of two and not) and 2, batched.
#define FFTD_TEST_I8_NDENSE 6
extern const fftd_test_i8_case fftd_test_i8_dense[FFTD_TEST_I8_NDENSE];

// fftd_test_i8_desc fills *d for case c at precision p with int8 input.
void fftd_test_i8_desc(
    fftd_plan_desc *d, const fftd_test_i8_case *c, fftd_precision p);

// fftd_test_i8_ref is the reference of int8 input in (laid out as s->in):
// the same shape with a native input (*sn; its output side is s's), the
// values widened exactly, transformed by FFTW in long double (malloc'd).
long double *fftd_test_i8_ref(
    const fftd__shape *s, const int8_t *in, fftd__shape *sn);

// fftd_test_i8_fill fills n int8 values from a xorshift generator seeded
// by seed, the extremes -128 and 127 at the first two places.
void fftd_test_i8_fill(int8_t *b, size_t n, uint64_t seed);

// fftd_test_i8_check_out checks out (laid out as sn->out) against ref:
// every layout element written, the relative L2 error within bound (<= 0:
// fftd_ref_bound of sn), and, when gaps_zeroed, the gaps zero. Returns the
// error.
double fftd_test_i8_check_out(const fftd__shape *sn, const void *out,
    const long double *ref, double bound, const char *what, bool gaps_zeroed);

// fftd_test_i8_run runs d (an int8 plan) on client c through the three
// paths, each on fresh input from seed, within bound (as above); tag names
// the case in messages. Returns the largest error seen.
double fftd_test_i8_run(fftd_client *c, const fftd_plan_desc *d, uint64_t seed,
    double bound, const char *tag);

#endif // FFTD_TESTS_I8_CHECK_H

// SPDX-License-Identifier: MIT
//
// cases.h — PRIVATE to fftd's tests. The table of transforms every backend
// is tested on (kinds x ranks x sizes x layouts x directions x norms) and the
// check of one execution's output, shared by the integration tests (fftw
// backend) and the GPU tests (cuda backend). Plain C over layout.h and ref.h:
// nothing here calls libfftd, so unit tests link it too; the client side
// (plan, execute, check) is in client_cases.h.

#ifndef FFTD_TESTS_CASES_H
#define FFTD_TESTS_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"
#include "layout.h"

// fftd_test_case is one plan description to execute and check.
typedef struct fftd_test_case {
	char           name[128]; // "c2c f64 n=17x12 b=2 stride fwd ortho"
	fftd_plan_desc desc;      // algorithm NULL (auto), device -1
	bool           in_place;  // execute with out == in
} fftd_test_case;

// FFTD_TEST_MAX_CASES bounds the cases of one kind x rank x precision.
#define FFTD_TEST_MAX_CASES 128

// fftd_test_cases writes the cases of kind x rank x precision into out (at
// most max) and returns how many. Sizes: rank 1: 1 2 7 17 64 100 101 1009
// 4096; rank 2: 17x12 64x65; rank 3: 5x6x7 16x16x16; f16 (pow2_only): 2 64
// 4096; 16x32 64x64; 4x8x2 16x16x16. Each size runs in every layout variant
// (contiguous batch 1 and batch 3, strided, embedded, interleaved, padded
// distances, in-place), covering both directions of C2C and every norm.
size_t fftd_test_cases(fftd_kind kind, int rank, fftd_precision p,
    bool pow2_only, fftd_test_case *out, size_t max);

// fftd_test_describe writes a short description of d into buf.
void fftd_test_describe(const fftd_plan_desc *d, char *buf, size_t len);

// fftd_test_prec_name returns "f64", "f32" or "f16".
const char *fftd_test_prec_name(fftd_precision p);

// fftd_test_seed returns this process's base seed: $FFTD_TEST_SEED if set,
// else one drawn from the clock and pid. Printed once, at the first call.
uint64_t fftd_test_seed(void);

// fftd_test_case_seed returns the seed of case number i.
uint64_t fftd_test_case_seed(uint64_t i);

// fftd_test_result is what fftd_test_check measured.
typedef struct fftd_test_result {
	double err;       // relative L2 error against the reference
	double bound;     // fftd_ref_bound
	size_t unwritten; // output-layout elements left NaN/poison
	size_t touched;   // bytes outside the output layout that changed
} fftd_test_result;

// fftd_test_check checks out, the caller's output buffer of len bytes after
// an execution of shape s on input in (laid out as s->in; for an in-place
// execution a copy of the input taken before): its layout elements must
// match the long double reference within fftd_ref_bound, none may be left
// unwritten, and every byte of [0, len) outside the output layout must
// equal the same byte of before (a copy of out taken before executing).
// Returns 0 if all holds, else -1 with the reasons in why. The worst error
// is recorded for fftd_test_print_summary.
int fftd_test_check(const fftd__shape *s, const void *in, const void *out,
    const void *before, size_t len, fftd_test_result *r, char *why,
    size_t whylen);

// fftd_test_layout_mask returns a malloc'd array of `bytes` flags, 1 for
// each byte inside an element of side sd's layout, else 0.
unsigned char *fftd_test_layout_mask(
    const fftd__side *sd, int rank, int64_t batch, size_t bytes);

// fftd_test_print_summary prints one line: the cases checked per precision
// and the worst relative error of each (with its bound).
void fftd_test_print_summary(const char *label);

#endif // FFTD_TESTS_CASES_H

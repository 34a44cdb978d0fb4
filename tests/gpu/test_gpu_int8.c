// SPDX-License-Identifier: MIT
//
// test_gpu_int8.c — int8 input (fftd_plan_desc.input = FFTD_INPUT_I8,
// issue 18 item 4) on `fftd --backend cuda`: forward C2C (interleaved int8
// re, im) and R2C (int8 reals), rank 1 and 2, batched, dense layouts, f64
// and f32 through "auto" (cuFFT, the int8 converted on the device: only
// int8 crosses PCIe), on fresh random int8 input over the full range,
// against FFTW in long double on the same values widened exactly, within
// fftd_ref_bound of the plan's precision, with poisoned outputs, through
// the three data paths (tests/util/i8_check.h); then "auto" with a
// tolerance of 1e-2 on f32 data, which may run through tc16 (int8 to fp16
// on the device), within the tolerance; and a strided int8 layout refused
// (FFTD_EUNSUPPORTED, "dense layouts only"; the fftw backend serves it).
// Without FFTD_TEST_GPU=1 or a usable GPU the test reports SKIPPED.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "../util/i8_check.h"
#include "fftd.h"

#define TIMEOUT_MS 120000

static const char       *skip_reason;
static fftd_test_daemon  D;
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "cuda", "--log-level", "info", NULL };
static fftd_test_fixture FX = {
	.daemon     = { { .d = &D, .c = &C, .args = DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

// After fftd_test_i8_dense (cases 0 .. FFTD_TEST_I8_NDENSE - 1):
static const fftd_test_i8_case CASES[] = {
	// a radio channeliser's shape: many short transforms
	{ FFTD_C2C, 1, { 256 }, 4096, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_C2C, 1, { 1 << 20 }, 2, 0, 0, { 0 }, 0, 0, { 0 } },
};
#define NCASES (FFTD_TEST_I8_NDENSE + sizeof(CASES) / sizeof(CASES[0]))

// case_at is case ci of the dense ones and then CASES.
static const fftd_test_i8_case *
case_at(size_t ci)
{
	return ci < FFTD_TEST_I8_NDENSE ? &fftd_test_i8_dense[ci]
	                                : &CASES[ci - FFTD_TEST_I8_NDENSE];
}

// run_all runs every case on data of precision p with the tolerance tol
// (0: none), case ci on seed + 16 ci; a case's tag ends in what (its
// precision and tolerance).
static void
run_all(fftd_precision p, double tol, uint64_t seed, const char *what)
{
	if (skip_reason != NULL) {
		skip();
	}
	fftd_test_need_daemon();
	for (size_t ci = 0; ci < NCASES; ci++) {
		fftd_plan_desc d;
		char           tag[64];
		fftd_test_i8_desc(&d, case_at(ci), p);
		if (tol > 0) {
			d.tolerance = tol;
		}
		snprintf(tag, sizeof(tag), "cuda case %zu %s", ci, what);
		double e = fftd_test_i8_run(C, &d, seed + 16 * ci, tol, tag);
		print_message("%s: worst error %.2e\n", tag, e);
	}
}

static void
test_int8_f64(void **state)
{
	(void) state;
	run_all(FFTD_F64, 0, 0x6a80, "f64");
}

static void
test_int8_f32(void **state)
{
	(void) state;
	run_all(FFTD_F32, 0, 0x6b90, "f32");
}

// test_int8_tolerance: f32 data with a tolerance of 1e-2, which tc16's
// error bound meets: whatever "auto" picks, the error is within it.
static void
test_int8_tolerance(void **state)
{
	(void) state;
	run_all(FFTD_F32, 1e-2, 0x6ca0, "f32 tol 1e-2");
}

static void
test_int8_strided_refused(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	fftd_test_need_daemon();
	static const fftd_test_i8_case c
	    = { FFTD_C2C, 1, { 256 }, 4, 4, 1, { 0 }, 1, 256, { 0 } };
	fftd_plan_desc d;
	fftd_plan     *plan = NULL;
	fftd_test_i8_desc(&d, &c, FFTD_F32);
	int rv = fftd_plan_create(C, &d, &plan);
	print_message(
	    "strided int8: %s (%s)\n", fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	assert_null(plan);
	assert_non_null(strstr(fftd_last_error(), "dense layouts only"));
}

int
main(void)
{
	skip_reason                     = fftd_test_gpu_skip(&FX, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int8_f64),
		cmocka_unit_test(test_int8_f32),
		cmocka_unit_test(test_int8_tolerance),
		cmocka_unit_test(test_int8_strided_refused),
	};
	return fftd_test_run_group("gpu_int8", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_int8.c — int8 input (fftd_plan_desc.input = FFTD_INPUT_I8, issue 18
// item 4) on the fftw backend: forward C2C (interleaved int8 re, im) and
// R2C (int8 reals), rank 1 and 2, batched, strided and embedded layouts,
// f64 and f32, on fresh random int8 input over the full range -128..127,
// against FFTW in long double on the same values widened exactly, within
// fftd_ref_bound of the plan's precision (the conversion is exact, so the
// bound of a native input holds), with poisoned outputs, through the three
// data paths: inline, shared buffers and resident arrays. Then the
// refusals (C2R, inverse C2C, an unknown input type) with their messages,
// "auto" with a tolerance running int8 through fftw-f32, and an older caller's
// struct, which ends before input, reading as a native input.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/i8_check.h"
#include "../util/ref.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 120000

static fftd_test_daemon  D;
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };
static fftd_test_fixture FX = {
	.daemon     = { { .d = &D, .c = &C, .args = DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

typedef fftd_test_i8_case i8_case;

// After fftd_test_i8_dense (cases 0 .. FFTD_TEST_I8_NDENSE - 1), the
// layouts the fftw backend serves besides.
static const i8_case CASES[] = {
	// Interleaved batch (stride = batch, distance 1), as a radio
	// recorder writes channels.
	{ FFTD_C2C, 1, { 256 }, 4, 4, 1, { 0 }, 1, 256, { 0 } },
	{ FFTD_R2C, 1, { 512 }, 3, 3, 1, { 0 }, 3, 1, { 0 } },
	// Embedded (padded) rows and a gap between transforms, both sides.
	{ FFTD_C2C, 2, { 16, 20 }, 2, 1, 16 * 24 + 7, { 16, 24 }, 2, 0,
	    { 18, 20 } },
	{ FFTD_R2C, 2, { 12, 30 }, 2, 2, 0, { 12, 33 }, 1, 0, { 14, 17 } },
};
#define NCASES (FFTD_TEST_I8_NDENSE + sizeof(CASES) / sizeof(CASES[0]))

// case_at is case ci of the dense ones and then CASES.
static const i8_case *
case_at(size_t ci)
{
	return ci < FFTD_TEST_I8_NDENSE ? &fftd_test_i8_dense[ci]
	                                : &CASES[ci - FFTD_TEST_I8_NDENSE];
}

// run_case runs case ci at precision p through the three data paths
// (tests/util/i8_check.h), within fftd_ref_bound of the precision.
static void
run_case(size_t ci, fftd_precision p, uint64_t seed)
{
	fftd_plan_desc d;
	char           tag[64];
	fftd_test_i8_desc(&d, case_at(ci), p);
	snprintf(
	    tag, sizeof(tag), "case %zu %s", ci, p == FFTD_F64 ? "f64" : "f32");
	(void) fftd_test_i8_run(C, &d, seed, 0, tag);
}

static void
test_int8_f64(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	for (size_t ci = 0; ci < NCASES; ci++) {
		run_case(ci, FFTD_F64, 0x18a0 + 16 * ci);
	}
}

static void
test_int8_f32(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	for (size_t ci = 0; ci < NCASES; ci++) {
		run_case(ci, FFTD_F32, 0x28b0 + 16 * ci);
	}
}

// test_int8_tolerance: "auto" with a tolerance treats int8 input like its
// precision's data: f64 with 1e-5 runs through fftw-f32 (the daemon
// prefers it where it fits, FFTD_AUTO_PREFER below), int8 widened to f64,
// then to f32, and the result is within the tolerance.
static void
test_int8_tolerance(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const i8_case tc[] = {
		{ FFTD_C2C, 1, { 4096 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
		{ FFTD_R2C, 2, { 64, 64 }, 2, 2, 0, { 0 }, 0, 0, { 0 } },
	};
	for (size_t i = 0; i < 2; i++) {
		fftd_plan_desc d;
		fftd__shape    s, sn;
		char           msg[256];
		fftd_test_i8_desc(&d, &tc[i], FFTD_F64);
		d.tolerance = 1e-5;
		assert_int_equal(
		    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)),
		    FFTD_OK);
		fftd_plan *plan;
		assert_int_equal(fftd_plan_create(C, &d, &plan), FFTD_OK);
		assert_string_equal(fftd_plan_algorithm(plan), "fftw-f32");
		int8_t *in  = malloc(s.in.bytes);
		void   *out = malloc(s.out.bytes);
		assert_non_null(in);
		assert_non_null(out);
		fftd_test_i8_fill(in, s.in.bytes, 0x3c0 + i);
		long double *ref = fftd_test_i8_ref(&s, in, &sn);
		fftd_ref_poison(out, s.out.bytes);
		assert_int_equal(fftd_execute(plan, in, out), FFTD_OK);
		assert_int_equal(fftd_ref_unwritten(&sn, out), 0);
		double e = fftd_ref_rel_l2(&sn, out, ref);
		print_message("int8 f64 tol 1e-5 case %zu: fftw-f32, error "
		              "%.2e\n",
		    i, e);
		assert_true(e <= 1e-5);
		assert_true(e > 1e-12); // it did run in f32
		free(ref);
		free(in);
		free(out);
		fftd_plan_destroy(plan);
	}
}

// refused asserts that d fails at fftd_plan_create with code and a
// message containing what.
static void
refused(const fftd_plan_desc *d, int code, const char *what)
{
	fftd_plan *p = NULL;
	assert_int_equal(fftd_plan_create(C, d, &p), code);
	assert_null(p);
	if (strstr(fftd_last_error(), what) == NULL) {
		print_error(
		    "message '%s' lacks '%s'\n", fftd_last_error(), what);
	}
	assert_non_null(strstr(fftd_last_error(), what));
}

static void
test_int8_refused(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_desc d;
	int64_t        n = 256;
	// C2R: the input is a spectrum.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2R, FFTD_F64), FFTD_OK);
	d.input = FFTD_INPUT_I8;
	refused(&d, FFTD_EINVAL, "int8 input is for forward C2C and R2C");
	// Inverse C2C.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), FFTD_OK);
	d.input     = FFTD_INPUT_I8;
	d.direction = FFTD_INVERSE;
	refused(&d, FFTD_EINVAL, "int8 input is for forward transforms");
	// An unknown input type.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), FFTD_OK);
	d.input = (fftd_input_type) 7;
	refused(&d, FFTD_EINVAL, "input = 7: unknown");
	// f16 on the CPU: refused as without int8.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F16), FFTD_OK);
	d.input = FFTD_INPUT_I8;
	refused(&d, FFTD_EUNSUPPORTED, "f16");
}

static void
test_int8_old_abi(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	// A caller built before input: its struct ends there, so the int8
	// asked for past its end is never read and the plan takes f64.
	fftd_plan_desc d;
	fftd_plan     *p;
	int64_t        n = 128;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_int_equal(d.input, FFTD_INPUT_NATIVE);
	d.input = FFTD_INPUT_I8;
	assert_int_equal(
	    fftd_plan_create_sized(C, &d, offsetof(fftd_plan_desc, input), &p),
	    FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(p), 128 * 16);
	fftd_plan_destroy(p);
	// The full struct: 2 bytes per complex int8 element.
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(p), 128 * 2);
	assert_int_equal(fftd_plan_output_bytes(p), 128 * 16);
	fftd_plan_destroy(p);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setenv("FFTD_AUTO_PREFER", "fftw-f32", 1); // the daemon inherits it
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int8_f64),
		cmocka_unit_test(test_int8_f32),
		cmocka_unit_test(test_int8_tolerance),
		cmocka_unit_test(test_int8_refused),
		cmocka_unit_test(test_int8_old_abi),
	};
	return fftd_test_run_group("int8", tests, &FX);
}

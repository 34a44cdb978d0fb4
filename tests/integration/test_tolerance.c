// SPDX-License-Identifier: MIT
//
// test_tolerance.c — fftd_plan_desc.tolerance on the fftw backend (issue
// 18 item 5): accepted and reported, results within the tolerance against
// FFTW in long double on fresh random inputs (f64 data may run through
// fftw-f32, scaled by powers of two: inputs scaled by 1e6, 1e-6 and 1e300
// too), a tolerance below what f32 can give keeps f64, bad tolerances are
// refused with FFTD_EINVAL naming the field, and an older caller's
// struct, which ends before tolerance, reads as tolerance 0. The daemon
// runs with FFTD_AUTO_PREFER=fftw-f32 (algo_pick.c), so that where
// fftw-f32 fits the tolerance it is chosen whatever the shared machine's
// timings, and its conversions are tested every time.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
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

// run_one plans d (a C2C of n points, batch 3) with tolerance tol, runs it
// on fresh random data scaled by scale with a poisoned output, and returns
// the relative L2 error against long double FFTW; *alg gets the algorithm
// reported.
static double
run_one(fftd_precision p, int64_t n, double tol, double scale, uint64_t seed,
    char alg[16])
{
	fftd_plan_desc d;
	fftd__shape    s;
	char           msg[256];
	assert_int_equal(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, p), FFTD_OK);
	d.batch     = 3;
	d.tolerance = tol;
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	fftd_plan *plan;
	assert_int_equal(fftd_plan_create(C, &d, &plan), FFTD_OK);
	snprintf(alg, 16, "%s", fftd_plan_algorithm(plan));
	void *in  = malloc(s.in.bytes);
	void *out = malloc(s.out.bytes);
	assert_non_null(in);
	assert_non_null(out);
	fftd_ref_fill_input(in, &s, seed);
	size_t nr = (size_t) s.in.elems * 2;
	for (size_t i = 0; i < nr; i++) {
		if (p == FFTD_F64) {
			((double *) in)[i] *= scale;
		} else {
			((float *) in)[i] *= (float) scale;
		}
	}
	fftd_ref_poison(out, s.out.bytes);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	assert_int_equal(fftd_execute(plan, in, out), FFTD_OK);
	assert_int_equal(fftd_ref_unwritten(&s, out), 0);
	double err = fftd_ref_rel_l2(&s, out, ref);
	free(ref);
	free(in);
	free(out);
	fftd_plan_destroy(plan);
	return err;
}

static void
test_within_tolerance(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const double scales[] = { 1, 1e6, 1e-6, 1e300, 1e-300 };
	char                alg[16];
	uint64_t            seed = 0x70135;
	for (int k = 0; k < 5; k++) {
		// f64 with 1e-5: fftw or fftw-f32, whichever was faster.
		double e
		    = run_one(FFTD_F64, 4096, 1e-5, scales[k], seed++, alg);
		print_message("f64 tol 1e-5 scale %g: %s, error %.2e\n",
		    scales[k], alg, e);
		assert_true(
		    strcmp(alg, "fftw") == 0 || strcmp(alg, "fftw-f32") == 0);
		assert_true(e <= 1e-5);
		// 1e-12 is below what f32 gives: f64 runs.
		e = run_one(FFTD_F64, 1000, 1e-12, scales[k], seed++, alg);
		assert_string_equal(alg, "fftw");
		assert_true(e <= 1e-12);
	}
	// f32 data: nothing lower on the CPU; fftw at f32, as without it.
	double e = run_one(FFTD_F32, 4096, 1e-3, 1, seed++, alg);
	assert_string_equal(alg, "fftw");
	assert_true(e <= 1e-3);
	// A tolerance nothing meets: the precision's usual accuracy.
	e = run_one(FFTD_F32, 4096, 1e-15, 1, seed++, alg);
	assert_string_equal(alg, "fftw");
	assert_true(e <= 1e-5);
}

static void
test_bad_tolerance(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const double bad[] = { -1e-3, -0.0 - 1e-300, NAN, INFINITY, -INFINITY };
	int64_t      n     = 64;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		fftd_plan_desc d;
		fftd_plan     *p = NULL;
		assert_int_equal(
		    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64),
		    FFTD_OK);
		d.tolerance = bad[k];
		assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_EINVAL);
		assert_null(p);
		assert_non_null(strstr(fftd_last_error(), "tolerance"));
	}
	// 0 is today's behaviour; a named algorithm ignores a tolerance.
	fftd_plan_desc d;
	fftd_plan     *p;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_true(d.tolerance == 0.0);
	d.algorithm = "fftw";
	d.tolerance = 0.5;
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	assert_string_equal(fftd_plan_algorithm(p), "fftw");
	fftd_plan_destroy(p);
}

static void
test_old_abi(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	// A caller built before tolerance: its struct ends there, so the
	// bytes after it (here a refused value) are never read.
	fftd_plan_desc d;
	fftd_plan     *p;
	int64_t        n = 256;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64), FFTD_OK);
	d.tolerance = -1.0;
	assert_int_equal(fftd_plan_create_sized(
	                     C, &d, offsetof(fftd_plan_desc, tolerance), &p),
	    FFTD_OK);
	assert_string_equal(fftd_plan_algorithm(p), "fftw");
	fftd_plan_destroy(p);
	// And fftd_plan_desc_init of an old size leaves the rest alone.
	memset(&d, 0x55, sizeof(d));
	assert_int_equal(
	    fftd_plan_desc_init_sized(&d, offsetof(fftd_plan_desc, tolerance),
	        1, &n, FFTD_C2C, FFTD_F64),
	    FFTD_OK);
	assert_int_equal(d.rank, 1);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setenv("FFTD_AUTO_PREFER", "fftw-f32", 1); // the daemon inherits it
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_tolerance),
		cmocka_unit_test(test_bad_tolerance),
		cmocka_unit_test(test_old_abi),
	};
	return fftd_test_run_group("tolerance", tests, &FX);
}

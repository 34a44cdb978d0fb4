// SPDX-License-Identifier: MIT
//
// test_gpu_int8.c — int8 input (fftd_plan_desc.input = FFTD_INPUT_I8,
// issue 18 item 4) on `fftd --backend cuda`: refused at fftd_plan_create
// with FFTD_EUNSUPPORTED and a message saying that the fftw backend serves
// it, for "auto", a named algorithm, and "auto" with a tolerance (whose
// candidates all refuse it), while a native plan of the same shape on the
// same daemon still plans. Without FFTD_TEST_GPU=1 or a usable GPU the
// test reports SKIPPED.

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
#include "fftd.h"

#define TIMEOUT_MS 120000

static const char       *skip_reason;
static fftd_test_daemon  L;
static fftd_test_fixture FX = { .local = &L };

// refused_i8 plans an int8 C2C of 4096 points at precision p with
// algorithm alg and tolerance tol, and asserts the cuda backend's refusal.
static void
refused_i8(fftd_client *c, fftd_precision p, const char *alg, double tol)
{
	fftd_plan_desc d;
	fftd_plan     *plan = NULL;
	int64_t        n    = 4096;
	assert_int_equal(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, p), FFTD_OK);
	d.input     = FFTD_INPUT_I8;
	d.algorithm = alg;
	d.tolerance = tol;
	int rv      = fftd_plan_create(c, &d, &plan);
	print_message("int8 %s tol %g: %s (%s)\n", alg ? alg : "auto", tol,
	    fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	assert_null(plan);
	assert_non_null(strstr(fftd_last_error(),
	    "int8 input is served by the fftw backend only so far"));
}

static void
test_cuda_refuses_int8(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	static const char *const args[]
	    = { "--backend", "cuda", "--log-level", "info", NULL };
	assert_int_equal(fftd_test_daemon_start(&L, NULL, args), 0);
	fftd_client *c;
	assert_int_equal(fftd_client_open(&c, L.url, TIMEOUT_MS), FFTD_OK);
	refused_i8(c, FFTD_F32, NULL, 0);
	refused_i8(c, FFTD_F64, "cufft", 0);
	refused_i8(c, FFTD_F16, "tc16", 0);
	refused_i8(c, FFTD_F32, NULL, 1e-3);
	// The same shape with native input plans.
	fftd_plan_desc d;
	fftd_plan     *plan;
	int64_t        n = 4096;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), FFTD_OK);
	assert_int_equal(fftd_plan_create(c, &d, &plan), FFTD_OK);
	fftd_plan_destroy(plan);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

int
main(void)
{
	skip_reason = fftd_test_why_no_gpu(1);
	if (skip_reason != NULL) {
		printf("GPU tests skipped: %s\n", skip_reason);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_cuda_refuses_int8, fftd_test_local_teardown),
	};
	return fftd_test_run_group("gpu_int8", tests, &FX);
}

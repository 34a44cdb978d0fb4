// SPDX-License-Identifier: MIT
//
// test_gpu_arrays.c — resident arrays (issue 16) on `fftd --backend cuda`,
// in device memory: the round trips, executions on arrays (C2C/R2C/C2R x
// f32/f64 against the long double FFTW reference within fftd_ref_bound,
// outputs poisoned) and the chain of tests/util/arrays_suite.h, an array
// past the 256 MiB device budget refused with FFTD_EDEVMEM beside a plan,
// and the device memory in use (fftd_device_stats) back to its level after
// fftd_client_close and after a client holding arrays is SIGKILLed.
// Without FFTD_TEST_GPU=1 or a usable GPU every test reports SKIPPED.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/arrays_suite.h"
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "fftd.h"

#define TIMEOUT_MS 120000
#define BUDGET (256ull << 20)

static const char      *skip_reason;
static fftd_test_daemon D;
static fftd_client     *C;

// DAEMON_ARGS: the daemon runs the cuda backend.
static const char *const DAEMON_ARGS[] = { "--backend", "cuda", NULL };

// FX: the daemon D (a 256 MiB device memory budget) with the client C;
// nothing starts without a GPU; the teardown fails unless D exits 0.
static fftd_test_fixture FX = {
	.daemon
	= { { &D, &C, "[backend]\ndevice_memory = 256M\n", DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

static void
test_round_trips(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_round_trips(C, 0, fftd_test_case_seed(100));
}

static void
test_executions(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_exec_all(C, 0);
}

static void
test_chain(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	arrays_chain(C, 0, fftd_test_case_seed(400));
}

// test_budget: arrays count against the device budget: one past what is
// left is FFTD_EDEVMEM, and the daemon goes on serving.
static void
test_budget(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	fftd_array *a = NULL, *x = NULL;
	ASSERT_OK(fftd_array_create(C, 0, (size_t) 160 << 20, &a));
	int rv = fftd_array_create(C, 0, (size_t) 128 << 20, &x);
	printf("128 MiB beside 160 MiB under a 256 MiB budget: %s: %s\n",
	    fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EDEVMEM);
	assert_null(x);
	fftd_array_destroy(a);
	ASSERT_OK(fftd_array_create(C, 0, (size_t) 128 << 20, &x));
	fftd_array_destroy(x);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// test_freed: closing a client, and killing one, gives its arrays' device
// memory back.
static void
test_freed(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t     m0 = arrays_memory_used(C, 0);
	fftd_client *c;
	fftd_array  *a[2];
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	for (int i = 0; i < 2; i++) {
		ASSERT_OK(fftd_array_create(c, 0, (size_t) 8 << 20, &a[i]));
	}
	assert_int_equal(arrays_wait_memory(C, 0, m0 + (16u << 20), 10000), 0);
	fftd_client_close(c);
	assert_int_equal(arrays_wait_memory(C, 0, m0, 10000), 0);
	fftd_array_destroy(a[0]);
	fftd_array_destroy(a[1]);
	arrays_killed_holder(C, D.url, 0);
	assert_true(arrays_memory_used(C, 0) <= BUDGET);
}

static const fftd_test_role roles[] = {
	{ "holder", arrays_role_holder },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	skip_reason = fftd_test_why_no_gpu(1);
	if (skip_reason != NULL) {
		printf("GPU tests skipped: %s\n", skip_reason);
	}
	(void) fftd_test_seed();
	FX.skip_reason                  = skip_reason;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_executions),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_freed),
	};
	return fftd_test_run_group("arrays[cuda]", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_gpu_arrays.c — resident arrays (issue 16) on `fftd --backend cuda`,
// in device memory: the round trips, executions on arrays (C2C/R2C/C2R x
// f32/f64 against the long double FFTW reference within fftd_ref_bound,
// outputs poisoned) and the chain of tests/util/arrays_suite.h, an array
// past the 256 MiB device budget refused with FFTD_EDEVMEM beside a plan,
// and the device memory in use (fftd_device_stats) back to its level after
// fftd_client_close and after a client holding arrays is SIGKILLed; the
// matched-filter bank, which the cuda backend does not have yet (its
// mf_bank is NULL): a well-formed bank request on device arrays is
// answered FFTD_EUNSUPPORTED naming the backend, after the daemon's own
// checks, and leaves the arrays as they were.
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
#include "../util/mf_ref.h"
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

// test_mf_unsupported: the cuda backend has no matched-filter bank yet, so
// the daemon answers a bank request (arguments and arrays good)
// FFTD_EUNSUPPORTED with a message naming the backend; one whose span
// passes its array still gets the checks' FFTD_ESIZE first. Nothing is
// written to the results, and the arrays keep their bytes and are freed
// as usual. (When the cuda bank lands, this test becomes its
// correctness test against tests/util/mf_ref.h.)
static void
test_mf_unsupported(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t     m0 = arrays_memory_used(C, 0);
	fftd_test_mf b;
	fftd_test_mf_new(&b, 1024, FFTD_F64, 2, fftd_test_case_seed(500));
	size_t      nb = (size_t) b.nbins;
	size_t      db = 2 * nb * sizeof(double), pb = nb * sizeof(double);
	size_t      tb   = 2 * db;
	fftd_array *data = NULL, *psd = NULL, *tpl = NULL;
	ASSERT_OK(fftd_array_create(C, 0, db, &data));
	ASSERT_OK(fftd_array_create(C, 0, pb, &psd));
	ASSERT_OK(fftd_array_create(C, 0, tb, &tpl));
	ASSERT_OK(fftd_array_write(data, 0, b.data, db));
	ASSERT_OK(fftd_array_write(psd, 0, b.psd, pb));
	ASSERT_OK(fftd_array_write(tpl, 0, b.templates, tb));
	fftd_mf_desc d;
	ASSERT_OK(fftd_mf_desc_init(&d));
	d.n       = b.n;
	d.delta_f = b.delta_f;
	fftd_mf_peak    peaks[3];
	fftd_mf_trigger trig[4];
	size_t          nt = 777, ntot = 888;
	memset(peaks, 0xFF, sizeof(peaks));
	int rv = fftd_mf_bank(C, &d, data, 0, psd, 0, tpl, 0, 2, peaks, trig, 4,
	    &nt, &ntot, NULL, 0, NULL);
	printf("bank on cuda: %s: %s\n", fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	assert_non_null(strstr(fftd_last_error(), "cuda"));
	assert_int_equal(nt, 777);
	assert_int_equal(ntot, 888);
	assert_int_equal(((const unsigned char *) peaks)[0], 0xFF);
	// Three templates do not fit the array: the span check answers.
	rv = fftd_mf_bank(C, &d, data, 0, psd, 0, tpl, 0, 3, peaks, trig, 4,
	    &nt, &ntot, NULL, 0, NULL);
	printf("3 templates in an array of 2: %s: %s\n", fftd_err_name(rv),
	    fftd_last_error());
	assert_int_equal(rv, FFTD_ESIZE);
	// The arrays are as written.
	uint8_t *got = malloc(tb);
	assert_non_null(got);
	ASSERT_OK(fftd_array_read(data, 0, got, db));
	assert_memory_equal(got, b.data, db);
	ASSERT_OK(fftd_array_read(psd, 0, got, pb));
	assert_memory_equal(got, b.psd, pb);
	ASSERT_OK(fftd_array_read(tpl, 0, got, tb));
	assert_memory_equal(got, b.templates, tb);
	free(got);
	fftd_array_destroy(data);
	fftd_array_destroy(psd);
	fftd_array_destroy(tpl);
	fftd_test_mf_free(&b);
	assert_int_equal(arrays_wait_memory(C, 0, m0, 10000), 0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
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
		cmocka_unit_test(test_mf_unsupported),
	};
	return fftd_test_run_group("arrays[cuda]", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_devices.c — placement over several devices, on a real `fftd --backend
// fftw` that serves the CPU as two devices (backend.cpu_devices = 2, one
// FFTW thread each), the same code path as several GPUs:
//   - the handshake lists both devices;
//   - executions of an unpinned plan, submitted many at once, run on both
//     devices (each device's executes counter grows), the plan being made
//     on the second device at its first use there, and every result is
//     right (checked against the FFTW long double reference);
//   - a plan pinned to device 1 runs only there; device 0's counter does
//     not move;
//   - a pin to a device that does not exist is FFTD_ENODEVICE.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cases.h"
#include "../util/check.h"
#include "../util/daemon.h"
#include "../util/ref.h"
#include "../util/session.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 60000

static fftd_test_daemon D;
static fftd_client     *C;

static const char CONFIG[] = "[backend]\ncpu_devices = 2\nfftw_threads = 1\n";
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static int
group_setup(void **state)
{
	(void) state;
	setenv("FFTD_INLINE_STAGING", "0", 1);
	return fftd_test_session_start(&D, CONFIG, DAEMON_ARGS, TIMEOUT_MS, &C);
}

static int
group_teardown(void **state)
{
	(void) state;
	return fftd_test_session_stop(&D, &C) == 0 ? 0 : -1;
}

static void
device_executes(uint64_t ex[2])
{
	fftd_device_stats dv[4];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(C, dv, 4, &n));
	assert_int_equal(n, 2);
	ex[0] = dv[0].executes;
	ex[1] = dv[1].executes;
}

// run_many submits k executions of plan p (shape sh) at once on fresh
// random inputs and checks every result against the reference.
static void
run_many(fftd_plan *p, const fftd__shape *sh, int k)
{
	void         *in[32], *out[32];
	fftd_request *r[32];
	assert_true(k <= 32);
	for (int i = 0; i < k; i++) {
		in[i]  = malloc(sh->in.bytes);
		out[i] = malloc(sh->out.bytes);
		assert_non_null(in[i]);
		assert_non_null(out[i]);
		fftd_ref_fill_input(
		    in[i], sh, fftd_test_case_seed((uint64_t) i));
		fftd_ref_poison(out[i], sh->out.bytes);
	}
	// All at once, so that work queues up and a second device pays off.
	for (int i = 0; i < k; i++) {
		ASSERT_OK(
		    fftd_execute_async(p, in[i], out[i], NULL, NULL, &r[i]));
	}
	for (int i = 0; i < k; i++) {
		ASSERT_OK(fftd_request_wait(r[i]));
		long double *ref = fftd_ref_transform(sh, in[i]);
		assert_non_null(ref);
		double e = fftd_ref_rel_l2(sh, out[i], ref);
		if (!(e <= fftd_ref_bound(sh))) {
			fail_msg("execution %d: relative error %.3g over %.3g",
			    i, e, fftd_ref_bound(sh));
		}
		assert_int_equal(fftd_ref_unwritten(sh, out[i]), 0);
		free(ref);
		free(in[i]);
		free(out[i]);
	}
}

static void
test_two_devices_listed(void **state)
{
	(void) state;
	fftd_info info;
	ASSERT_OK(fftd_client_info(C, &info));
	assert_int_equal(info.ndevices, 2);
	assert_int_equal(info.devices[0].index, 0);
	assert_int_equal(info.devices[1].index, 1);
}

static void
test_unpinned_spreads(void **state)
{
	(void) state;
	// A prime length: slow per byte sent, so that work queues up even
	// when submissions are slow (sanitizer builds) and a second device
	// pays off.
	int64_t        n = 65537;
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	d.batch = 8;
	ASSERT_OK(fftd_plan_create(C, &d, &p));
	fftd__shape sh;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &sh, msg, sizeof(msg)), 0);
	uint64_t before[2], after[2];
	device_executes(before);
	run_many(p, &sh, 24);
	device_executes(after);
	printf("unpinned: device 0 ran %llu, device 1 ran %llu of 24\n",
	    (unsigned long long) (after[0] - before[0]),
	    (unsigned long long) (after[1] - before[1]));
	assert_int_equal(after[0] - before[0] + after[1] - before[1], 24);
	assert_true(after[0] > before[0]);
	assert_true(after[1] > before[1]);
	fftd_plan_destroy(p);
}

static void
test_pinned_stays(void **state)
{
	(void) state;
	int64_t        n[2] = { 96, 80 };
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 2, n, FFTD_R2C, FFTD_F32));
	d.batch  = 4;
	d.device = 1;
	ASSERT_OK(fftd_plan_create(C, &d, &p));
	fftd__shape sh;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &sh, msg, sizeof(msg)), 0);
	uint64_t before[2], after[2];
	device_executes(before);
	run_many(p, &sh, 16);
	device_executes(after);
	assert_int_equal(after[0], before[0]);
	assert_int_equal(after[1] - before[1], 16);
	fftd_plan_destroy(p);
	d.device = 2;
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_ENODEVICE);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_devices_listed),
		cmocka_unit_test(test_unpinned_spreads),
		cmocka_unit_test(test_pinned_stays),
	};
	return cmocka_run_group_tests_name(
	    "devices", tests, group_setup, group_teardown);
}

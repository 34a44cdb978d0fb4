// SPDX-License-Identifier: MIT
//
// devices_suite.h — PRIVATE to fftd's tests. Placement over several
// devices, run by tests/integration/test_devices.c against `fftd --backend
// fftw` serving the CPU as two devices and by tests/gpu/test_gpu_devices.c
// against `fftd --backend cuda` on two GPUs (the same code path in the
// daemon):
//   - the handshake lists both devices;
//   - executions of an unpinned plan, submitted many at once, run on both
//     devices (each device's executes counter grows), the plan being made
//     on the second device at its first use there, and every result is
//     right (checked against the FFTW long double reference within
//     fftd_ref_bound, no element left unwritten);
//   - a plan pinned to device 1 runs only there; device 0's counter does
//     not move;
//   - a pin to a device that does not exist is FFTD_ENODEVICE.
// Header-only (static functions, cmocka), like transform_suite.h; include
// it from one test program, which fills devices_suite_config.

#ifndef FFTD_TESTS_DEVICES_SUITE_H
#define FFTD_TESTS_DEVICES_SUITE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "check.h"
#include "../../bench/lib/daemon.h"
#include "fftd.h"
#include "layout.h"
#include "ref.h"
#include "fixture.h"

#define DEVICES_TIMEOUT_MS 60000

// devices_suite_config says what to run against.
typedef struct devices_suite_config {
	const char        *name;        // cmocka group name
	const char        *config;      // the daemon's fftd.conf text
	const char *const *args;        // its command line
	const char        *skip_reason; // non-NULL: every test SKIPPED
	// use_buffers: inputs and outputs in one fftd_buffer, so that all
	// submissions reach the daemon before the first execution ends
	// (a GPU finishes an execution faster than libfftd copies the next
	// input into its staging buffer); else malloc'd (inline path)
	int use_buffers;
} devices_suite_config;

static struct {
	const devices_suite_config *cfg;
	fftd_test_daemon            d;
	fftd_client                *c;
} devs;

// devices_fixture: the daemon devs.d with the client devs.c, as the
// config says (devices_suite_run fills it); the teardown fails unless
// the daemon exits 0.
static fftd_test_fixture devices_fixture = {
	.daemon     = { { &devs.d, &devs.c, NULL, NULL } },
	.timeout_ms = DEVICES_TIMEOUT_MS,
	.check_exit = 1,
};

static void
devices_executes(uint64_t ex[2])
{
	fftd_device_stats dv[4];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(devs.c, dv, 4, &n));
	assert_int_equal(n, 2);
	ex[0] = dv[0].executes;
	ex[1] = dv[1].executes;
}

// devices_run_many submits k executions of plan p (shape sh) at once on
// fresh random inputs and checks every result against the reference.
static void
devices_run_many(fftd_plan *p, const fftd__shape *sh, int k)
{
	void         *in[32], *out[32];
	fftd_request *r[32];
	fftd_buffer  *buf  = NULL;
	size_t        span = 0;
	assert_true(k <= 32);
	if (devs.cfg->use_buffers) {
		span = (sh->in.bytes + sh->out.bytes + 4095) & ~(size_t) 4095;
		ASSERT_OK(fftd_buffer_create(devs.c, span * (size_t) k, &buf));
	}
	for (int i = 0; i < k; i++) {
		if (buf != NULL) {
			in[i] = (char *) fftd_buffer_data(buf)
			    + span * (size_t) i;
			out[i] = (char *) in[i] + sh->in.bytes;
		} else {
			in[i]  = malloc(sh->in.bytes);
			out[i] = malloc(sh->out.bytes);
			assert_non_null(in[i]);
			assert_non_null(out[i]);
		}
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
		if (buf == NULL) {
			free(in[i]);
			free(out[i]);
		}
	}
	if (buf != NULL) {
		fftd_buffer_destroy(buf);
	}
}

// devices_run_counted makes a plan of *d, runs k executions of it at once
// (devices_run_many) and destroys it; ran[i] is how many ran on device i.
static void
devices_run_counted(const fftd_plan_desc *d, int k, uint64_t ran[2])
{
	fftd_plan *p;
	ASSERT_OK(fftd_plan_create(devs.c, d, &p));
	fftd__shape sh;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(d, NULL, &sh, msg, sizeof(msg)), 0);
	uint64_t before[2], after[2];
	devices_executes(before);
	devices_run_many(p, &sh, k);
	devices_executes(after);
	ran[0] = after[0] - before[0];
	ran[1] = after[1] - before[1];
	fftd_plan_destroy(p);
}

static void
test_two_devices_listed(void **state)
{
	(void) state;
	if (devs.cfg->skip_reason != NULL) {
		skip();
	}
	fftd_info info;
	ASSERT_OK(fftd_client_info(devs.c, &info));
	assert_int_equal(info.ndevices, 2);
	assert_int_equal(info.devices[0].index, 0);
	assert_int_equal(info.devices[1].index, 1);
}

static void
test_unpinned_spreads(void **state)
{
	(void) state;
	if (devs.cfg->skip_reason != NULL) {
		skip();
	}
	// A prime length: slow per byte sent, so that work queues up even
	// when submissions are slow (sanitizer builds) and a second device
	// pays off.
	int64_t        n = 65537;
	fftd_plan_desc d;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	d.batch = 8;
	uint64_t ran[2];
	devices_run_counted(&d, 24, ran);
	printf("unpinned: device 0 ran %llu, device 1 ran %llu of 24\n",
	    (unsigned long long) ran[0], (unsigned long long) ran[1]);
	assert_int_equal(ran[0] + ran[1], 24);
	assert_true(ran[0] > 0);
	assert_true(ran[1] > 0);
}

static void
test_pinned_stays(void **state)
{
	(void) state;
	if (devs.cfg->skip_reason != NULL) {
		skip();
	}
	int64_t        n[2] = { 96, 80 };
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 2, n, FFTD_R2C, FFTD_F32));
	d.batch  = 4;
	d.device = 1;
	uint64_t ran[2];
	devices_run_counted(&d, 16, ran);
	assert_int_equal(ran[0], 0);
	assert_int_equal(ran[1], 16);
	d.device = 2;
	assert_int_equal(fftd_plan_create(devs.c, &d, &p), FFTD_ENODEVICE);
}

// devices_suite_run runs the suite with cfg; returns cmocka's result.
static int
devices_suite_run(const devices_suite_config *cfg)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	devs.cfg = cfg;
	if (cfg->skip_reason != NULL) {
		printf("%s: skipped: %s\n", cfg->name, cfg->skip_reason);
	} else {
		(void) fftd_test_seed(); // print it first
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_devices_listed),
		cmocka_unit_test(test_unpinned_spreads),
		cmocka_unit_test(test_pinned_stays),
	};
	devices_fixture.daemon[0].config = cfg->config;
	devices_fixture.daemon[0].args   = cfg->args;
	devices_fixture.skip_reason      = cfg->skip_reason;
	return fftd_test_run_group(cfg->name, tests, &devices_fixture);
}

#endif // FFTD_TESTS_DEVICES_SUITE_H

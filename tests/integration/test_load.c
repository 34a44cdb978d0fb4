// SPDX-License-Identifier: MIT
//
// test_load.c — a shortened bench/load against a real `fftd --backend
// fftw` (tests/util/load.h describes the load):
//   - mixed load: 16 client processes (2 realtime at 100 Hz, 14 batch of
//     16 .. 192 KiB per request, f32 C2C and R2C, 4 in flight each), a few
//     thousand requests: no result lost or wrong (each checked against
//     c_k X within 16 eps max(1, log2 n)), no error counted by the daemon,
//     and Jain's index over the batch clients' device time (the daemon's
//     per-client statistics, in a window where every batch client is
//     backlogged) at least 0.99. Latencies are printed, not asserted:
//     speed is shown by the benchmark, not by tests;
//   - SIGTERM under load: the same clients in full flight, SIGTERM to the
//     daemon; every request it had accepted is answered correctly, the
//     others correctly or with FFTD_ECLOSED / FFTD_ESHUTDOWN (or
//     FFTD_ETIMEDOUT for those it never read: load.h), and it exits
//     0 within 5 s.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/daemon.h"
#include "../util/load.h"
#include "fftd.h"

static fftd_test_daemon  L; // the test's own daemon
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static int
local_teardown(void **state)
{
	(void) state;
	if (L.pid != 0) {
		fftd_test_daemon_stop(&L);
	}
	return 0;
}

static void
config(fftd_load_config *cfg)
{
	fftd_load_defaults(cfg);
	cfg->url         = L.url;
	cfg->nclients    = 16;
	cfg->nrealtime   = 2;
	cfg->requests    = 10000;
	cfg->depth       = 8;
	cfg->sizes       = FFTD_LOAD_SIZES_SMALL;
	cfg->rt_rate_hz  = 100;
	cfg->rt_unloaded = 100;
	cfg->timeout_s   = 90;
}

static void
test_mixed_load(void **state)
{
	(void) state;
	assert_int_equal(fftd_test_daemon_start(&L, NULL, DAEMON_ARGS), 0);
	fftd_load_config cfg;
	config(&cfg);
	static fftd_load_result r;
	assert_int_equal(fftd_load_run(&cfg, &r), 0);
	fftd_load_print(&r, stdout);
	if (r.failures) {
		print_error("load: %s\n", r.failure);
	}
	assert_int_equal(r.failures, 0);
	assert_true(r.submitted >= (uint64_t) cfg.requests);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.wrong, 0);
	assert_true(r.stats_ok);
	assert_int_equal(r.daemon_errors, 0);
	if (!r.client_stats_ok) {
		print_error("per-client statistics: %s\n", r.client_stats_why);
	}
	assert_true(r.client_stats_ok);
	assert_int_equal(r.jain_n, cfg.nclients - cfg.nrealtime);
	if (!(r.jain >= FFTD_LOAD_JAIN_TARGET)) {
		print_error("Jain index %.4f < %.2f (device time shares "
		            "%.3f .. %.3f of the mean)\n",
		    r.jain, FFTD_LOAD_JAIN_TARGET, r.share_min, r.share_max);
	}
	assert_true(r.jain >= FFTD_LOAD_JAIN_TARGET);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

static void
test_sigterm_under_load(void **state)
{
	(void) state;
	assert_int_equal(fftd_test_daemon_start(&L, NULL, DAEMON_ARGS), 0);
	fftd_load_config cfg;
	config(&cfg);
	cfg.daemon          = &L;
	cfg.sigterm_after_s = 1.0;
	static fftd_load_result r;
	assert_int_equal(fftd_load_run(&cfg, &r), 0);
	fftd_load_print(&r, stdout);
	if (r.failures) {
		print_error("SIGTERM under load: %s\n", r.failure);
	}
	assert_int_equal(r.exit_code, 0);
	assert_true(r.exit_s <= FFTD_LOAD_EXIT_TARGET_S);
	assert_true(r.accepted > 0);
	assert_int_equal(r.accepted_bad, 0);
	assert_int_equal(r.late_bad, 0);
	assert_int_equal(r.wrong, 0);
	assert_int_equal(r.failures, 0);
}

static const fftd_test_role roles[] = {
	{ FFTD_LOAD_ROLE, fftd_load_role },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_mixed_load, local_teardown),
		cmocka_unit_test_teardown(
		    test_sigterm_under_load, local_teardown),
	};
	const char *filter = getenv("FFTD_TEST_FILTER");
	if (filter != NULL) {
		cmocka_set_test_filter(filter);
	}
	return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}

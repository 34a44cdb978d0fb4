// SPDX-License-Identifier: MIT
//
// test_load.c — a shortened bench/load against a real `fftd --backend
// fftw` (bench/lib/load.h describes the load):
//   - mixed load: 16 client processes (2 realtime at 100 Hz, 14 batch of
//     16 .. 192 KiB per request, f32 C2C and R2C, 4 in flight each), a few
//     thousand requests: no result lost or wrong (each checked against
//     c_k X within 16 eps max(1, log2 n)), no error counted by the daemon,
//     and Jain's index over the batch clients' device time (the daemon's
//     per-client statistics, in a window where every batch client is
//     backlogged) at least 0.99. Latencies are printed, not asserted:
//     speed is shown by the benchmark, not by tests;
//   - the max-min fairness figure (fftd_load_fairness) on hand-made
//     shares: equal backlogged shares give 1, a starved backlogged client
//     lowers it, a client that was not backlogged and took more than the
//     backlogged ones counts as over, one that took less does not;
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

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../../bench/lib/load.h"
#include "fftd.h"

static fftd_test_daemon L; // the test's own daemon

// FX: this program's tests start their own daemon, L (stopped by
// fftd_test_local_teardown if a failed assertion left it running).
static fftd_test_fixture FX = { .local = &L };
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

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
test_fairness_figure(void **state)
{
	(void) state;
	fftd_load_fair f;
	const double   one[] = { 1, 1, 1, 1 };
	// Four backlogged clients at equal shares (weight 2 halves both).
	const double dv0[] = { 2, 2, 2, 2 }, bl0[] = { 1, 0.95, 0.9, 1 };
	const double w2[] = { 2, 2, 2, 2 };
	fftd_load_fairness(dv0, w2, bl0, 4, &f);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.jain_bl_n, 4);
	assert_true(fabs(f.jain_bl - 1) < 1e-12);
	assert_true(fabs(f.mean_bl - 1) < 1e-12);
	assert_int_equal(f.over_n, 0);
	// One backlogged client with half the others' time: (3.5)^2 /
	// (4 (3 + 0.25)) = 0.9423.
	const double dv1[] = { 1, 1, 1, 0.5 };
	fftd_load_fairness(dv1, one, bl0, 4, &f);
	assert_true(fabs(f.jain_bl - 12.25 / 13.0) < 1e-12);
	assert_true(f.jain_bl < FFTD_LOAD_JAIN_TARGET);
	// Two clients asked less (not backlogged, NAN too): they do not
	// count, and got less, so nothing is over.
	const double dv2[] = { 1, 1, 0.3, 0.6 }, bl2[] = { 1, 1, 0.2, NAN };
	fftd_load_fairness(dv2, one, bl2, 4, &f);
	assert_int_equal(f.jain_bl_n, 2);
	assert_true(fabs(f.jain_bl - 1) < 1e-12);
	assert_int_equal(f.over_n, 0);
	// A client that was not backlogged yet took 10% more than the
	// backlogged ones: over; at 4% more: within the tolerance.
	const double dv3[] = { 1, 1, 1.1, 1.04 }, bl3[] = { 1, 1, 0.5, 0.5 };
	fftd_load_fairness(dv3, one, bl3, 4, &f);
	assert_int_equal(f.over_n, 1);
	// Fewer than two backlogged: nothing to share, not measured.
	const double bl4[] = { 1, 0.1, 0.2, 0.3 };
	fftd_load_fairness(dv2, one, bl4, 4, &f);
	assert_int_equal(f.jain_bl_n, 1);
	assert_true(isnan(f.jain_bl));
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
		cmocka_unit_test_teardown(
		    test_mixed_load, fftd_test_local_teardown),
		cmocka_unit_test(test_fairness_figure),
		cmocka_unit_test_teardown(
		    test_sigterm_under_load, fftd_test_local_teardown),
	};
	return fftd_test_run_group("load", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_robustness_daemon.c — the daemon's own edges: limits from a config
// file (connections per user among them), the cache budget reloaded by
// SIGHUP; SIGTERM with requests in flight,
// SIGINT idle; the command line. Each test starts a daemon of its own. Its
// sibling test_robustness_clients.c holds the abuse by clients (many at once,
// killed, closed, malformed frames).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../util/client_cases.h"
#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/ref.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "fftd.h"
#include "layout.h"
#include "wire.h"

#define TIMEOUT_MS 60000

static fftd_test_daemon
    L; // a test's own daemon (stopped by fftd_test_local_teardown)
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// FX: every test starts a daemon of its own, L.
static fftd_test_fixture FX = { .local = &L };

// desc_c2c describes a 1-D C2C plan of n points (as in
// test_robustness_clients.c).
static int
desc_c2c(fftd_plan_desc *d, int64_t n, fftd_precision p)
{
	return fftd_plan_desc_init(d, 1, &n, FFTD_C2C, p);
}

// --- limits from a config file
// --------------------------------------------------------------

static void
test_config_limits(void **state)
{
	(void) state;
	static const char conf[] = "# limits for test_robustness\n"
	                           "[limits]\n"
	                           "max_request_bytes = 1048576\n"
	                           "max_rank = 2\n"
	                           "max_batch = 16\n"
	                           "max_plans_per_client = 4\n"
	                           "[cache]\n"
	                           "budget_bytes = 12345678\n";
	fftd_test_daemon *d      = &L;
	assert_int_equal(fftd_test_daemon_start(d, conf, DAEMON_ARGS), 0);
	fftd_client *c;
	assert_int_equal(fftd_client_open(&c, d->url, TIMEOUT_MS), FFTD_OK);
	fftd_info info;
	assert_int_equal(fftd_client_info(c, &info), FFTD_OK);
	assert_int_equal(info.max_request_bytes, 1048576);
	assert_int_equal(info.max_rank, 2);
	assert_int_equal(info.max_batch, 16);
	fftd_stats st;
	assert_int_equal(fftd_get_stats(c, &st), FFTD_OK);
	assert_int_equal(st.cache_budget_bytes, 12345678);

	fftd_plan_desc dd;
	fftd_plan     *p = NULL;
	desc_c2c(&dd, 65536, FFTD_F64); // exactly 1 MiB
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_OK);
	fftd_plan_destroy(p);
	desc_c2c(&dd, 65537, FFTD_F64);
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_ELIMIT);
	int64_t nr = 131072; // real input 1 MiB, complex output 1 MiB + 16
	assert_int_equal(
	    fftd_plan_desc_init(&dd, 1, &nr, FFTD_R2C, FFTD_F64), 0);
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_ELIMIT);
	desc_c2c(&dd, 16, FFTD_F32);
	dd.batch = 16;
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_OK);
	fftd_plan_destroy(p);
	dd.batch = 17;
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_ELIMIT);
	int64_t n3[3] = { 4, 4, 4 };
	assert_int_equal(
	    fftd_plan_desc_init(&dd, 3, n3, FFTD_C2C, FFTD_F32), 0);
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_ELIMIT);

	// Four plans per client; the fifth is refused until one goes.
	fftd_plan *held[4];
	for (int i = 0; i < 4; i++) {
		desc_c2c(
		    &dd, 16, FFTD_F64); // the same description counts each time
		assert_int_equal(fftd_plan_create(c, &dd, &held[i]), FFTD_OK);
	}
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_ELIMIT);
	// Another client has its own four.
	fftd_client *c2;
	assert_int_equal(fftd_client_open(&c2, d->url, TIMEOUT_MS), FFTD_OK);
	assert_int_equal(fftd_plan_create(c2, &dd, &p), FFTD_OK);
	fftd_plan_destroy(p);
	fftd_client_close(c2);
	fftd_plan_destroy(held[3]);
	assert_int_equal(fftd_plan_create(c, &dd, &held[3]), FFTD_OK);
	// Refused plans left nothing behind, and with one plan released a
	// transform runs under the limits.
	assert_int_equal(fftd_test_wait_stats(c, 1, 4, 5000), 0);
	fftd_plan_destroy(held[0]);
	held[0] = NULL;
	fftd_test_case tc;
	memset(&tc, 0, sizeof(tc));
	snprintf(tc.name, sizeof(tc.name), "c2c f64 16 under limits");
	tc.desc = dd;
	assert_int_equal(
	    fftd_test_run_case(c, &tc, fftd_test_case_seed(11)), 0);
	for (int i = 0; i < 4; i++) {
		fftd_plan_destroy(held[i]);
	}
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
}

// test_connections_per_user: [limits] max_connections_per_user = 3 lets
// this user hold three connections; the fourth is refused with
// FFTD_EREFUSED naming the limit and leaves no session behind; once one of
// the three closes, a new one is admitted.
static void
test_connections_per_user(void **state)
{
	(void) state;
	static const char conf[] = "[limits]\nmax_connections_per_user = 3\n";
	fftd_test_daemon *d      = &L;
	assert_int_equal(fftd_test_daemon_start(d, conf, DAEMON_ARGS), 0);
	fftd_client *c[3];
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
		    fftd_client_open(&c[i], d->url, TIMEOUT_MS), FFTD_OK);
	}
	fftd_client *x = NULL;
	assert_int_equal(
	    fftd_client_open(&x, d->url, TIMEOUT_MS), FFTD_EREFUSED);
	assert_non_null(strstr(fftd_last_error(), "max_connections_per_user"));
	fftd_stats st;
	assert_int_equal(fftd_get_stats(c[0], &st), FFTD_OK);
	assert_int_equal(st.sessions, 3);
	fftd_client_close(c[2]);
	assert_int_equal(fftd_test_wait_stats(c[0], 2, 0, 5000), 0);
	assert_int_equal(fftd_client_open(&c[2], d->url, TIMEOUT_MS), FFTD_OK);
	assert_int_equal(fftd_ping(c[2], NULL), FFTD_OK);
	for (int i = 0; i < 3; i++) {
		fftd_client_close(c[i]);
	}
	assert_int_equal(fftd_test_daemon_stop(d), 0);
}

// test_reload_cache_budget: SIGHUP re-reads [cache] budget_bytes and the
// device's plan cache takes it (the Stats reply's cache budget follows).
static void
test_reload_cache_budget(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L;
	assert_int_equal(fftd_test_daemon_start(d,
	                     "[cache]\nbudget_bytes = 12345678\n", DAEMON_ARGS),
	    0);
	fftd_client *c;
	assert_int_equal(fftd_client_open(&c, d->url, TIMEOUT_MS), FFTD_OK);
	fftd_stats st;
	assert_int_equal(fftd_get_stats(c, &st), FFTD_OK);
	assert_int_equal(st.cache_budget_bytes, 12345678);
	FILE *f = fopen(d->conf, "w");
	assert_non_null(f);
	fputs("[cache]\nbudget_bytes = 23456789\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(fftd_test_daemon_signal(d, SIGHUP), 0);
	uint64_t seen = 0;
	for (int i = 0; i < 500 && seen != 23456789; i++) {
		assert_int_equal(fftd_get_stats(c, &st), FFTD_OK);
		seen = st.cache_budget_bytes;
		if (seen != 23456789) {
			struct timespec ts = { 0, 10000000 };
			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(seen, 23456789);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
}

// --- SIGTERM with requests in flight
// -------------------------------------------------------------

#define SHUTDOWN_N 6

// wait_admitted waits (at most timeout_ms) until the daemon counts n
// executions of this process's client c queued, running or done (in flight
// plus executed): from then on they are accepted work. Returns 0 or -1.
static int
wait_admitted(fftd_client *c, uint64_t n, int timeout_ms)
{
	fftd_client_stats cs = { 0 };
	for (int t = 0; t <= timeout_ms; t += 5) {
		if (fftd_test_my_client_stats(c, &cs) == 0
		    && cs.inflight + cs.executes >= n) {
			return 0;
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	print_error("admitted: %u in flight + %llu executed, not %llu\n",
	    cs.inflight, (unsigned long long) cs.executes,
	    (unsigned long long) n);
	return -1;
}

static void
test_sigterm_in_flight(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L;
	assert_int_equal(fftd_test_daemon_start(d, NULL, DAEMON_ARGS), 0);
	fftd_client *c;
	// A short timeout: the last call below must fail, not hang.
	assert_int_equal(fftd_client_open(&c, d->url, 3000), FFTD_OK);
	fftd_plan_desc dd;
	desc_c2c(&dd, (int64_t) 1 << 18, FFTD_F64); // 4 MiB each way
	dd.norm = FFTD_NORM_ORTHO;
	fftd_plan *p;
	assert_int_equal(fftd_plan_create(c, &dd, &p), FFTD_OK);
	fftd_test_buffers b[SHUTDOWN_N];
	fftd_request     *req[SHUTDOWN_N];
	for (int i = 0; i < SHUTDOWN_N; i++) {
		assert_int_equal(fftd_test_buffers_make(&b[i], &dd, 0,
		                     fftd_test_case_seed(300 + (uint64_t) i)),
		    0);
		assert_int_equal(fftd_execute_async(
		                     p, b[i].in, b[i].out, NULL, NULL, &req[i]),
		    FFTD_OK);
	}
	// A request is accepted work once the daemon has admitted it. A ping
	// answered after them is not proof of that: the daemon's contexts
	// take requests up on NNG's task threads in any order, and once (CI,
	// stop 48) request 5 was refused FFTD_ESHUTDOWN although the ping sent
	// after it had been answered before the signal.
	assert_int_equal(wait_admitted(c, SHUTDOWN_N, TIMEOUT_MS), 0);
	assert_int_equal(fftd_test_daemon_signal(d, SIGTERM), 0);
	int failed = 0;
	for (int i = 0; i < SHUTDOWN_N; i++) {
		int st = fftd_request_wait(req[i]);
		if (st != FFTD_OK) {
			print_error("request %d after SIGTERM: %s (%s)\n", i,
			    fftd_err_name(st), fftd_last_error());
			failed++;
			continue;
		}
		fftd_test_result r;
		char             why[512];
		if (fftd_test_buffers_check(&b[i], &r, why, sizeof(why))) {
			print_error("request %d after SIGTERM: %s\n", i, why);
			failed++;
		}
	}
	for (int i = 0; i < SHUTDOWN_N; i++) {
		fftd_test_buffers_free(&b[i]);
	}
	int code = fftd_test_daemon_wait(d, 20000);
	// The daemon is gone: calls fail rather than hang.
	int rv = fftd_ping(c, NULL);
	fftd_plan_destroy(p);
	fftd_client_close(c);
	assert_int_equal(failed, 0);
	assert_int_equal(code, 0);
	assert_int_not_equal(rv, FFTD_OK);
}

static void
test_sigint_idle(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L;
	assert_int_equal(fftd_test_daemon_start(d, NULL, DAEMON_ARGS), 0);
	assert_int_equal(fftd_test_daemon_signal(d, SIGINT), 0);
	assert_int_equal(fftd_test_daemon_wait(d, 10000), 0);
}

// --- the command line
// ----------------------------------------------------------------------------

// run_bin runs the daemon binary with args, output to /dev/null, and
// returns its exit status (128 + signal; -1 if still running after 5 s).
static int
run_bin(const char *const *args)
{
	return fftd_test_daemon_run(args, 5000, NULL, 0);
}

static void
test_command_line(void **state)
{
	(void) state;
	const char *version[] = { "--version", NULL };
	const char *help[]    = { "--help", NULL };
	const char *bogus[]   = { "--no-such-option", NULL };
	const char *backend[] = { "--backend", "abacus", "--listen",
		"ipc:///tmp/fftd-test-never.sock", NULL };
	const char *noconf[]  = { "--config", "/nonexistent/fftd.conf",
		 "--listen", "ipc:///tmp/fftd-test-never.sock", NULL };
	const char *level[]   = { "--log-level", "loud", "--listen",
		  "ipc:///tmp/fftd-test-never.sock", NULL };
	assert_int_equal(run_bin(version), 0);
	assert_int_equal(run_bin(help), 0);
	int c;
	c = run_bin(bogus);
	assert_true(c > 0 && c < 128);
	c = run_bin(backend);
	assert_true(c > 0 && c < 128);
	c = run_bin(noconf);
	assert_true(c > 0 && c < 128);
	c = run_bin(level);
	assert_true(c > 0 && c < 128);
	// A config file with a bad value stops the start-up with an error.
	static const char *const bad_confs[] = {
		"[limits]\nmax_batch = -5\n",
		"[limits]\nmax_rank = 7\n",
		"[limits]\nmax_request_bytes = 0\n",
		"[backend]\nbackend = abacus\n",
		"[nosuchsection]\nkey = 1\n",
		"[server]\ncontexts = zero\n",
		"[log]\nlevel = loud\n",
		"[backend]\nrealtime_lane = sometimes\n",
		"[backend]\nrealtime_memory = 1.5\n",
		"[backend]\nrealtime_memory = 0\n",
		"[server]\nslice_us = 50\n",
		"this is not an ini file\n",
	};
	char path[] = "/tmp/fftd-test-conf-XXXXXX";
	int  fd     = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	const char *withconf[] = { "--config", path, "--backend", "fftw",
		"--listen", "ipc:///tmp/fftd-test-never.sock", NULL };
	for (size_t i = 0; i < sizeof(bad_confs) / sizeof(bad_confs[0]); i++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(bad_confs[i], f);
		fclose(f);
		c = run_bin(withconf);
		if (!(c > 0 && c < 128)) {
			print_error(
			    "config %zu (%s): exit status %d, want an error\n",
			    i, bad_confs[i], c);
			unlink(path);
			fail();
		}
	}
	unlink(path);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_config_limits, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_connections_per_user, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_reload_cache_budget, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_sigterm_in_flight, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_sigint_idle, fftd_test_local_teardown),
		cmocka_unit_test(test_command_line),
	};
	return fftd_test_run_group("robustness_daemon", tests, &FX);
}

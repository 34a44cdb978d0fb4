// SPDX-License-Identifier: MIT
//
// test_fork.c — libfftd across fork (client/fork.c), with a real daemon
// (fftw backend). NNG 1.5.2 aborts the process ("nng is not fork-reentrant
// safe") on any call in a child forked after it started, which libfftd
// used to do on the child's first call. Now:
//   - a child forked before this process first used fftd opens its own
//     client and executes as any process does (the test runs first, before
//     anything here has touched NNG);
//   - a child forked after the parent opened a client, made a plan, a
//     buffer and a stream gets FFTD_EUNSUPPORTED, saying why, from
//     fftd_client_open, fftd_ping, fftd_execute, fftd_execute_async,
//     fftd_plan_create and fftd_stream_submit, and no slot from
//     fftd_stream_input; its destroy and close calls return without
//     touching the parent's connection; it exits normally (no abort, no
//     hang: at most 20 s);
//   - the parent's client and stream work on after the child exits: a
//     stream execution, and a fresh random
//     f64 C2C transform against FFTW in long double within fftd_ref_bound,
//     output poisoned.
// Each child reports through its exit status (the number of the failed
// check), which the parent asserts is 0.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../util/ref.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 20000
#define N 64

static const char *const DAEMON_ARGS[] = { "--backend", "fftw", NULL };

// seed is a fresh seed per run, printed so a failure can be repeated.
static uint64_t
seed(void)
{
	const char *s = getenv("FFTD_TEST_SEED");
	return s != NULL ? strtoull(s, NULL, 0)
	                 : (uint64_t) time(NULL) ^ (uint64_t) getpid() << 20;
}

// wait_child waits at most TIMEOUT_MS for pid and returns its exit code,
// or -1 (killed after the timeout, or ended by a signal: printed).
static int
wait_child(pid_t pid)
{
	int code = -1;
	fftd_test_wait_pids(&pid, 1, TIMEOUT_MS, &code);
	if (code != 0) {
		fprintf(stderr, "child %d: status %d\n", (int) pid, code);
	}
	return code;
}

// shape_of resolves d as the daemon does, for the reference.
static void
shape_of(const fftd_plan_desc *d, fftd__shape *sh)
{
	char msg[256];
	assert_int_equal(
	    fftd__shape_resolve(d, NULL, sh, msg, sizeof(msg)), FFTD_OK);
}

// assert_like_fftw asserts that out is the transform sh of in within
// fftd_ref_bound of FFTW in long double.
static void
assert_like_fftw(const fftd__shape *sh, const double *in, const double *out)
{
	long double *ref = fftd_ref_transform(sh, in);
	assert_non_null(ref);
	double err = fftd_ref_rel_l2(sh, out, ref);
	free(ref);
	assert_true(err <= fftd_ref_bound(sh));
}

// check_transform runs a fresh f64 C2C transform of N points on c and
// compares it with FFTW in long double.
static void
check_transform(fftd_client *c, uint64_t sd)
{
	int64_t        n[1] = { N };
	fftd_plan_desc d;
	fftd__shape    sh;
	fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F64);
	shape_of(&d, &sh);
	fftd_plan *p = NULL;
	assert_int_equal(fftd_plan_create(c, &d, &p), FFTD_OK);
	double in[2 * N], out[2 * N];
	fftd_ref_fill_input(in, &sh, sd);
	fftd_ref_poison(out, sizeof(out));
	assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	assert_like_fftw(&sh, in, out);
	fftd_plan_destroy(p);
}

// A child forked before this process used fftd opens its own client.
static void
test_fork_before_use(void **state)
{
	(void) state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	uint64_t sd  = seed();
	pid_t    pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		char    url[512];
		ssize_t k = read(fds[0], url, sizeof(url) - 1);
		if (k <= 0) {
			_exit(10);
		}
		url[k]         = '\0';
		fftd_client *c = NULL;
		if (fftd_client_open(&c, url, TIMEOUT_MS) != FFTD_OK) {
			fprintf(stderr, "child: open: %s\n", fftd_last_error());
			_exit(11);
		}
		if (fftd_ping(c, NULL) != FFTD_OK) {
			_exit(12);
		}
		fftd_client_close(c);
		_exit(0);
	}
	close(fds[0]);
	// The daemon starts after the fork: its start-up probe is this
	// process's first NNG call.
	fftd_test_daemon d;
	if (fftd_test_daemon_start(&d, NULL, DAEMON_ARGS) != 0) {
		kill(pid, SIGKILL);
		fail_msg("daemon did not start");
	}
	assert_true(
	    write(fds[1], d.url, strlen(d.url)) == (ssize_t) strlen(d.url));
	close(fds[1]);
	int          code = wait_child(pid);
	fftd_client *c    = NULL;
	assert_int_equal(fftd_client_open(&c, d.url, TIMEOUT_MS), FFTD_OK);
	check_transform(c, sd);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&d), 0);
	assert_int_equal(code, 0);
}

// refused is whether rv is FFTD_EUNSUPPORTED with the fork's message.
static int
refused(int rv)
{
	return rv == FFTD_EUNSUPPORTED
	    && strstr(fftd_last_error(), "forked") != NULL;
}

// A child forked after the parent used fftd is refused, cleanly.
static void
test_fork_after_use(void **state)
{
	(void) state;
	uint64_t         sd = seed();
	fftd_test_daemon d;
	assert_int_equal(fftd_test_daemon_start(&d, NULL, DAEMON_ARGS), 0);
	fftd_client *c = NULL;
	assert_int_equal(fftd_client_open(&c, d.url, TIMEOUT_MS), FFTD_OK);
	int64_t        n[1] = { N };
	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, 1, n, FFTD_C2C, FFTD_F64);
	fftd_plan *p = NULL;
	assert_int_equal(fftd_plan_create(c, &desc, &p), FFTD_OK);
	fftd_buffer *buf = NULL;
	assert_int_equal(fftd_buffer_create(c, 4096, &buf), FFTD_OK);
	fftd_stream *st = NULL;
	assert_int_equal(fftd_stream_open(p, 2, &st), FFTD_OK);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static double in[2 * N], out[2 * N];
		fftd_client  *c2 = NULL;
		fftd_plan    *p2 = NULL;
		fftd_request *rq = NULL;
		if (!refused(fftd_client_open(&c2, d.url, TIMEOUT_MS))) {
			_exit(20);
		}
		if (!refused(fftd_ping(c, NULL))) {
			_exit(21);
		}
		if (!refused(fftd_execute(p, in, out))) {
			_exit(22);
		}
		if (!refused(fftd_execute_async(p, in, out, NULL, NULL, &rq))
		    || rq != NULL) {
			_exit(23);
		}
		if (!refused(fftd_plan_create(c, &desc, &p2)) || p2 != NULL) {
			_exit(24);
		}
		// The stream's slots are shared with the parent's session.
		if (fftd_stream_input(st) != NULL) {
			_exit(25);
		}
		if (!refused(fftd_stream_submit(st, in))) {
			_exit(26);
		}
		// The parent's objects: left alone, no NNG call, no hang.
		fftd_stream_close(st);
		fftd_buffer_destroy(buf);
		fftd_plan_destroy(p);
		fftd_client_close(c);
		_exit(0);
	}
	int code = wait_child(pid);
	// The parent's client, plan and buffer are still its own.
	assert_int_equal(fftd_ping(c, NULL), FFTD_OK);
	assert_non_null(fftd_buffer_data(buf));
	// The stream too: one execution of fresh input through it, against
	// FFTW in long double.
	fftd__shape sh;
	shape_of(&desc, &sh);
	static double sin_[2 * N], sout[2 * N];
	fftd_ref_fill_input(sin_, &sh, sd + 1);
	fftd_ref_poison(sout, sizeof(sout));
	assert_non_null(fftd_stream_input(st));
	assert_int_equal(fftd_stream_submit(st, sin_), FFTD_OK);
	assert_int_equal(fftd_stream_wait(st, sout, NULL), FFTD_OK);
	assert_like_fftw(&sh, sin_, sout);
	fftd_stream_close(st);
	fftd_buffer_destroy(buf);
	fftd_plan_destroy(p);
	check_transform(c, sd);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&d), 0);
	assert_int_equal(code, 0);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("seed %llu (FFTD_TEST_SEED repeats it)\n",
	    (unsigned long long) seed());
	// In this order: the first must run before anything here uses NNG.
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_before_use),
		cmocka_unit_test(test_fork_after_use),
	};
	return cmocka_run_group_tests_name("fork", tests, NULL, NULL);
}

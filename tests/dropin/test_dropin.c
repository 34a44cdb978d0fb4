// SPDX-License-Identifier: MIT
//
// test_dropin.c — the FFTW3 drop-in library (libfftd-fftw3.so, issue 17
// item 4) end to end: tests/dropin/fftw_prog, an FFTW program built
// against the real fftw3.h and linked with -lfftw3 -lfftw3f only, runs
// plainly and then under LD_PRELOAD=libfftd-fftw3.so with a real
// `fftd --backend fftw` up, on the same fresh random inputs. fftw_prog
// checks each of its 54 transforms against the long double FFTW (stated
// bounds), the ESTIMATE planner against poisoned arrays, the output
// layout's gaps, and the preloaded run's outputs against the plain run's,
// and runs two plans in 4 threads at once. Here: that the preloaded run
// really went to the daemon (its debug log names 54 daemon plans, the DCT
// stays with FFTW, and the daemon's execution counter grows by exactly
// the 132 executions), that FFTD_FFTW3_MIN keeps small
// transforms in FFTW, that without a daemon everything runs in FFTW, and
// that a daemon killed between a plan and its execution costs nothing but
// the fallback to FFTW, and that a child forked between a plan and its
// execution runs its transforms in FFTW instead of aborting.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "fftd.h"

#define TIMEOUT_MS 30000
// DAEMON_PLANS is how many of fftw_prog's 2 x 27 + 2 plans the daemon can
// serve: all but the DCT (FFTW_REDFT10), in both precisions, and the two
// plans run in threads; DAEMON_EXECS their executions (those two: 4
// threads x 10 each).
#define DAEMON_PLANS 54
#define DAEMON_EXECS (52 + 80)

extern char **environ;

static fftd_test_daemon  D, L;
static fftd_client      *C;
static const char *const args[]
    = { "--backend", "fftw", "--log-level", "warn", NULL };
static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, args } },
	.timeout_ms = TIMEOUT_MS,
	.local      = &L,
};

static char     dir[512];    // the build folder (beside $FFTD_BIN)
static char     tmpdir[256]; // this run's files
static uint64_t seed;

// path_in writes dir/name into buf.
static const char *
path_in(char *buf, size_t len, const char *base, const char *name)
{
	snprintf(buf, len, "%s/%s", base, name);
	return buf;
}

// run_prog runs fftw_prog with args, the environment plus the NULL-
// terminated extra "NAME=value" strings (with preload: LD_PRELOAD of the
// drop-in), stdout and stderr to tmpdir/NAME.out and NAME.err. Returns its
// exit status (128 + signal).
static int
run_prog(const char *name, int preload, const char *const *extra,
    const char *const *pargs)
{
	char prog[600], lib[600], out[400], err[400];
	path_in(prog, sizeof(prog), dir, "tests/dropin/fftw_prog");
	path_in(lib, sizeof(lib), dir, "libfftd-fftw3.so");
	snprintf(out, sizeof(out), "%s/%s.out", tmpdir, name);
	snprintf(err, sizeof(err), "%s/%s.err", tmpdir, name);

	// The environment: ours less the drop-in's own variables, then
	// extra, then LD_PRELOAD. An ASan build's drop-in is instrumented:
	// its runtime need not come first (the program carries it too).
	static char preload_var[700], asan[1024];
	const char *env[256];
	int         ne = 0;
	for (char **e = environ; *e != NULL && ne < 200; e++) {
		if (strncmp(*e, "FFTD_FFTW3", 10) != 0
		    && strncmp(*e, "FFTD_URL=", 9) != 0
		    && strncmp(*e, "LD_PRELOAD=", 11) != 0
		    && strncmp(*e, "ASAN_OPTIONS=", 13) != 0) {
			env[ne++] = *e;
		}
	}
	for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
		env[ne++] = extra[i];
	}
	const char *ao = getenv("ASAN_OPTIONS");
	snprintf(asan, sizeof(asan),
	    "ASAN_OPTIONS=%s%sverify_asan_link_order=0", ao ? ao : "",
	    ao ? ":" : "");
	env[ne++] = asan;
	if (preload) {
		snprintf(
		    preload_var, sizeof(preload_var), "LD_PRELOAD=%s", lib);
		env[ne++] = preload_var;
	}
	env[ne] = NULL;

	const char *argv[16] = { prog };
	int         na       = 1;
	for (int i = 0; pargs[i] != NULL && na < 15; i++) {
		argv[na++] = pargs[i];
	}
	argv[na] = NULL;

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(
	    &fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(
	    &fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	int   rv = posix_spawn(
	      &pid, prog, &fa, NULL, (char *const *) argv, (char *const *) env);
	posix_spawn_file_actions_destroy(&fa);
	if (rv != 0) {
		fprintf(stderr, "posix_spawn %s: %s\n", prog, strerror(rv));
		return -1;
	}
	int st;
	if (waitpid(pid, &st, 0) != pid) {
		return -1;
	}
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (code != 0) {
		// Show what went wrong.
		char cmd[1000];
		snprintf(cmd, sizeof(cmd), "tail -n 40 %s %s >&2", out, err);
		if (system(cmd) != 0) {
			fprintf(stderr, "(could not show %s)\n", out);
		}
	}
	return code;
}

// count_lines counts the lines of tmpdir/name that contain needle.
static int
count_lines(const char *name, const char *needle)
{
	char path[400], line[2048];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	int n = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strstr(line, needle) != NULL;
	}
	fclose(f);
	return n;
}

// executes is the fixture daemon's execution counter.
static uint64_t
executes(void)
{
	fftd_stats st;
	assert_int_equal(fftd_get_stats(C, &st), FFTD_OK);
	return st.executes;
}

// plain runs fftw_prog without the drop-in (the reference outputs).
static void
plain(void)
{
	char s[32], out[400];
	snprintf(s, sizeof(s), "%llu", (unsigned long long) seed);
	snprintf(out, sizeof(out), "%s/plain.bin", tmpdir);
	const char *const a[] = { "--seed", s, "--out", out, NULL };
	assert_int_equal(run_prog("plain", 0, NULL, a), 0);
	assert_int_equal(count_lines("plain.out", "fftw_prog: 57 passed"), 1);
}

// preloaded runs fftw_prog under the drop-in with the extra variables,
// comparing with the plain run; more arguments may follow.
static int
preloaded(const char *name, const char *const *extra, const char *more,
    const char *more_arg)
{
	char s[32], cmp[400];
	snprintf(s, sizeof(s), "%llu", (unsigned long long) seed);
	snprintf(cmp, sizeof(cmp), "%s/plain.bin", tmpdir);
	const char *const a[]
	    = { "--seed", s, "--compare", cmp, more, more_arg, NULL };
	return run_prog(name, 1, extra, a);
}

// test_through_daemon: with FFTD_FFTW3_MIN=0 every plan the daemon can
// take goes there, and the results equal the plain run's.
static void
test_through_daemon(void **state)
{
	(void) state;
	plain();
	char url[400];
	snprintf(url, sizeof(url), "FFTD_URL=%s", D.url);
	const char *const env[]
	    = { url, "FFTD_FFTW3_MIN=0", "FFTD_FFTW3_LOG=debug", NULL };
	uint64_t before = executes();
	assert_int_equal(preloaded("daemon", env, NULL, NULL), 0);
	assert_int_equal(count_lines("daemon.out", "fftw_prog: 57 passed"), 1);
	assert_int_equal(count_lines("daemon.err", "-> daemon"), DAEMON_PLANS);
	assert_int_equal(count_lines("daemon.err", "(r2r other than"), 2);
	assert_int_equal(count_lines("daemon.err", "failed"), 0);
	assert_int_equal(executes() - before, DAEMON_EXECS);
}

// test_threshold: FFTD_FFTW3_MIN keeps transforms of fewer elements in
// FFTW (the default, 32768, keeps all of fftw_prog's there).
static void
test_threshold(void **state)
{
	(void) state;
	plain();
	char url[400];
	snprintf(url, sizeof(url), "FFTD_URL=%s", D.url);
	const char *const env[]
	    = { url, "FFTD_FFTW3_MIN=4096", "FFTD_FFTW3_LOG=debug", NULL };
	uint64_t before = executes();
	assert_int_equal(preloaded("min4096", env, NULL, NULL), 0);
	int daemon = count_lines("min4096.err", "-> daemon");
	// c2c_1d_fwd, r2c_1d, c2r_1d, newarray_c2c, newarray_r2c,
	// newarray_hc2r have 4096 elements or more; x 2 precisions.
	assert_int_equal(daemon, 14); // and the two threaded plans
	assert_int_equal(
	    count_lines("min4096.err", "below FFTD_FFTW3_MIN=4096"), 40);
	assert_int_equal(executes() - before, 12 + 80);

	const char *const env2[] = { url, "FFTD_FFTW3_LOG=debug", NULL };
	before                   = executes();
	assert_int_equal(preloaded("mindefault", env2, NULL, NULL), 0);
	assert_int_equal(count_lines("mindefault.err", "-> daemon"), 0);
	assert_int_equal(
	    count_lines("mindefault.err", "below FFTD_FFTW3_MIN=32768"),
	    DAEMON_PLANS);
	assert_int_equal(executes() - before, 0);
}

// test_no_daemon: no daemon at the address: everything runs in FFTW,
// with one connection attempt.
static void
test_no_daemon(void **state)
{
	(void) state;
	plain();
	char url[400];
	snprintf(url, sizeof(url), "FFTD_URL=ipc://%s/nobody.sock", tmpdir);
	const char *const env[]
	    = { url, "FFTD_FFTW3_MIN=0", "FFTD_FFTW3_LOG=debug", NULL };
	assert_int_equal(preloaded("nodaemon", env, NULL, NULL), 0);
	assert_int_equal(count_lines("nodaemon.err", "-> daemon"), 0);
	assert_int_equal(
	    count_lines("nodaemon.err", "-> fftw (no daemon at"), DAEMON_PLANS);
}

// test_daemon_killed: the daemon dies after the first plan is made and
// before it executes: that execution and every later plan run in FFTW,
// with the same results.
static void
test_daemon_killed(void **state)
{
	(void) state;
	plain();
	assert_int_equal(fftd_test_daemon_start(&L, NULL, args), 0);
	char url[400], pid[32];
	snprintf(url, sizeof(url), "FFTD_URL=%s", L.url);
	snprintf(pid, sizeof(pid), "%d", (int) L.pid);
	const char *const env[] = { url, "FFTD_FFTW3_MIN=0",
		"FFTD_FFTW3_LOG=debug", "FFTD_FFTW3_TIMEOUT_MS=2000", NULL };
	int               rv    = preloaded("killed", env, "--kill", pid);
	// The program killed the daemon: its socket files stay behind.
	char sock[400];
	snprintf(sock, sizeof(sock), "%s/fftd.sock", L.dir);
	unlink(sock);
	snprintf(sock, sizeof(sock), "%s/fftd.sock.fd", L.dir);
	unlink(sock);
	assert_int_equal(fftd_test_daemon_wait(&L, 5000), 128 + SIGKILL);
	assert_int_equal(rv, 0);
	assert_int_equal(count_lines("killed.out", "fftw_prog: 57 passed"), 1);
	assert_int_equal(count_lines("killed.err", "-> daemon"), 1);
	// "connection closed" or "timed out", as the kill and the send race.
	assert_int_equal(count_lines("killed.err", "the daemon failed ("), 1);
	assert_true(count_lines("killed.err", "the daemon was lost") > 0);
}

// test_forked_child: the program forks between its first plan (made by
// the daemon) and that plan's execution, and runs the rest in the child,
// where libfftd refuses every call (NNG is not fork-safe): the child's
// first execution falls back to FFTW, every later plan runs in FFTW, the
// results equal the plain run's, and nothing aborts.
static void
test_forked_child(void **state)
{
	(void) state;
#if defined(__SANITIZE_THREAD__)
	// fftw_prog starts threads in the forked child (threads_check), which
	// TSan refuses after a multi-threaded fork (its die_after_fork).
	skip();
#endif
	plain();
	char url[400];
	snprintf(url, sizeof(url), "FFTD_URL=%s", D.url);
	const char *const env[]
	    = { url, "FFTD_FFTW3_MIN=0", "FFTD_FFTW3_LOG=debug", NULL };
	uint64_t before = executes();
	assert_int_equal(preloaded("forked", env, "--fork", NULL), 0);
	assert_int_equal(count_lines("forked.out", "fftw_prog: 57 passed"), 1);
	// The parent's plan, and its execution in the child refused.
	assert_int_equal(count_lines("forked.err", "-> daemon"), 1);
	assert_int_equal(count_lines("forked.err", "the daemon failed ("), 1);
	// Every later plan the daemon could have served, refused saying why.
	assert_int_equal(count_lines("forked.err",
	                     "-> fftw (the daemon refused the plan: transform "
	                     "not supported by the chosen backend: libfftd "
	                     "cannot run in a process forked"),
	    DAEMON_PLANS - 1);
	assert_int_equal(executes() - before, 0);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "%s", fftd_test_daemon_bin());
	char *d = dirname(dir);
	memmove(dir, d, strlen(d) + 1);
	snprintf(tmpdir, sizeof(tmpdir), "%s/fftd-dropin.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	const char *s = getenv("FFTD_TEST_SEED");
	seed = s != NULL ? strtoull(s, NULL, 10) : (uint64_t) time(NULL);
	printf("test_dropin: seed %llu (FFTD_TEST_SEED), files in %s\n",
	    (unsigned long long) seed, tmpdir);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_through_daemon),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test(test_forked_child),
		cmocka_unit_test_teardown(
		    test_daemon_killed, fftd_test_local_teardown),
	};
	int rv = fftd_test_run_group("dropin", tests, &FX);
	if (rv == 0) {
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0) {
			fprintf(stderr, "could not remove %s\n", tmpdir);
		}
	}
	return rv;
}

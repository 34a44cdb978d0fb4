// SPDX-License-Identifier: MIT
//
// test_spawn.c — bench/lib/daemon.c's child processes (fftd_test_spawn)
// when the program's own file has been replaced on disk while it runs.
// bench/soak runs for hours and re-execs itself for every client it
// restarts; on the lent GPU machine a later device call copied the build
// folder again, the soak's file was replaced, and every restarted client
// failed to exec (the path read "PATH (deleted)"): the soak stalled. Here a
// copy of this test binary replaces its own file by a script that exits
// 99, then spawns a child that must still run this program's role.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"

#define ANSWER 42 // the exit code of role "answer"
#define WAIT_MS 60000

// role_answer exits ANSWER: proof that this program ran.
static int
role_answer(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	return ANSWER;
}

// role_replace_then_spawn replaces the file argv[0] (this process's own
// program) by a script that exits 99, as a copy of a new build would, then
// spawns role "answer" and returns 0 if that child exited ANSWER, else the
// child's status (127: the exec failed; 99: the new file ran).
static int
role_replace_then_spawn(int argc, char **argv)
{
	if (argc < 1 || unlink(argv[0]) != 0) {
		return 3;
	}
	FILE *f = fopen(argv[0], "w");
	if (f == NULL || fputs("#!/bin/sh\nexit 99\n", f) < 0 || fclose(f) != 0
	    || chmod(argv[0], 0755) != 0) {
		return 4;
	}
	pid_t pid  = fftd_test_spawn("answer", NULL);
	int   code = -1;
	if (pid <= 0) {
		return 5;
	}
	fftd_test_wait_pids(&pid, 1, WAIT_MS, &code);
	return code == ANSWER ? 0 : code;
}

static const fftd_test_role ROLES[] = {
	{ "answer", role_answer },
	{ "replace-then-spawn", role_replace_then_spawn },
	{ NULL, NULL },
};

// copy_file copies src to dst (mode 0755). Returns 0 or -1.
static int
copy_file(const char *src, const char *dst)
{
	int  in  = open(src, O_RDONLY | O_CLOEXEC);
	int  out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	int  rv  = in >= 0 && out >= 0 ? 0 : -1;
	char buf[1 << 16];
	while (rv == 0) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n == 0) {
			break;
		}
		if (n < 0 || write(out, buf, (size_t) n) != n) {
			rv = -1;
		}
	}
	if (in >= 0) {
		close(in);
	}
	if (out >= 0 && close(out) != 0) {
		rv = -1;
	}
	return rv;
}

// A child spawned after the program's file was replaced still runs this
// program (before the fix: exit 127, the exec of "PATH (deleted)" failed).
static void
test_spawn_after_replaced(void **state)
{
	(void) state;
	char    self[4096], dir[4096], copy[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	// Beside this binary (its rpath, if relative, still holds).
	snprintf(dir, sizeof(dir), "%s", self);
	snprintf(copy, sizeof(copy), "%s/.test_spawn-%d", dirname(dir),
	    (int) getpid());
	unlink(copy);
	assert_int_equal(copy_file(self, copy), 0);

	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[] = { copy, "--fftd-test-child",
			"replace-then-spawn", copy, NULL };
		execv(copy, (char *const *) argv);
		_exit(126);
	}
	int code = -1;
	fftd_test_wait_pids(&pid, 1, WAIT_MS, &code);
	unlink(copy);
	// 0: the grandchild ran role "answer"; 127: it could not exec.
	assert_int_equal(code, 0);
}

// A plain spawn runs the role and reports its exit code.
static void
test_spawn_plain(void **state)
{
	(void) state;
	pid_t pid  = fftd_test_spawn("answer", NULL);
	int   code = -1;
	assert_true(pid > 0);
	fftd_test_wait_pids(&pid, 1, WAIT_MS, &code);
	assert_int_equal(code, ANSWER);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_plain),
		cmocka_unit_test(test_spawn_after_replaced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

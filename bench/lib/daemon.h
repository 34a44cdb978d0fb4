// SPDX-License-Identifier: MIT
//
// daemon.h — PRIVATE to fftd's benchmarks and tests (bench/lib, the
// benchmark engine both link). Start the real fftd binary on a fresh ipc
// socket, wait until it answers, stop it and report how it exited; and run
// child processes of the calling program itself.
//
// The daemon binary is $FFTD_BIN (tests/run.sh sets it to the build folder
// under test), or build/fftd when unset. Each daemon gets its own mkdtemp
// folder under $TMPDIR (or /tmp) holding the socket, the config file and
// the daemon's log (stdout and stderr); the log is printed when the daemon
// fails to start or exits with a status other than 0.
//
// Child processes: NNG refuses to run in a process forked after NNG was
// initialised ("nng is not fork-reentrant safe"), so children are this test
// program itself, forked and exec'd again (/proc/self/exe) in a child role:
// main() calls fftd_test_child_dispatch() first.

#ifndef FFTD_BENCH_DAEMON_H
#define FFTD_BENCH_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

// fftd_test_daemon is one running daemon.
typedef struct fftd_test_daemon {
	pid_t pid;       // 0 when not running
	char  dir[256];  // the daemon's own temporary folder
	char  url[320];  // ipc://DIR/fftd.sock
	char  log[320];  // DIR/fftd.log
	char  conf[320]; // DIR/fftd.conf ("" when no config was given)
	int   reaped;    // status, once fftd_test_daemon_alive has reaped it
} fftd_test_daemon;

// FFTD_TEST_START_MS bounds how long fftd_test_daemon_start waits for the
// first answer.
#define FFTD_TEST_START_MS 15000

// fftd_test_daemon_bin returns the daemon binary to run.
const char *fftd_test_daemon_bin(void);

// fftd_test_fftctl_bin returns the fftctl of the build under test, the one
// beside fftd_test_daemon_bin() (a static buffer).
const char *fftd_test_fftctl_bin(void);

// fftd_test_run_capture runs cmd through the shell (under a 30 s timeout,
// stderr with stdout) and keeps its output, up to outlen - 1 bytes and
// NUL-terminated, in out. Returns its exit status (-1: none).
int fftd_test_run_capture(const char *cmd, char *out, size_t outlen);

// fftd_test_daemon_start starts the daemon with --listen on a fresh ipc
// socket, with --config FILE when config (the file's text) is not NULL, and
// the NULL-terminated extra arguments args (may be NULL), and waits (at
// most FFTD_TEST_START_MS) until a Hello on a raw REQ socket is answered
// with FFTD_OK. Returns 0, or -1 after printing why (and the daemon's log)
// with everything cleaned up.
int fftd_test_daemon_start(
    fftd_test_daemon *d, const char *config, const char *const *args);

// fftd_test_daemon_run runs the daemon binary with the NULL-terminated
// args (at most 30) to its end, stdin from /dev/null, and returns its exit
// status as fftd_test_daemon_wait does (-1: still running after timeout_ms,
// then killed). Its stdout and stderr go to out (NUL-terminated, cut to
// outlen) when out is not NULL, else to /dev/null. For start-up refusals.
int fftd_test_daemon_run(
    const char *const *args, int timeout_ms, char *out, size_t outlen);

// fftd_test_daemon_signal sends sig to the daemon.
int fftd_test_daemon_signal(fftd_test_daemon *d, int sig);

// fftd_test_daemon_wait waits at most timeout_ms for the daemon to exit,
// kills it with SIGKILL if it does not, removes its folder, and returns its
// status: the exit code (0..255), 128 + signal if a signal ended it, or -1
// if it had to be killed after the timeout. A status other than 0 prints
// the daemon's log.
int fftd_test_daemon_wait(fftd_test_daemon *d, int timeout_ms);

// fftd_test_daemon_stop is SIGTERM then fftd_test_daemon_wait (10 s).
int fftd_test_daemon_stop(fftd_test_daemon *d);

// fftd_test_daemon_alive returns 1 if the daemon has not exited, else 0
// (and reaps it; a later wait returns its status).
int fftd_test_daemon_alive(fftd_test_daemon *d);

// fftd_test_role is a child role: a name and the function that runs it
// with the arguments given to fftd_test_spawn; its return value is the
// child's exit code.
typedef struct fftd_test_role {
	const char *name;
	int (*fn)(int argc, char **argv);
} fftd_test_role;

// fftd_test_child_dispatch returns at once unless this process is a child
// started by fftd_test_spawn; a child runs its role from roles (terminated
// by a { NULL, NULL } entry) and exits with the role's return value (127
// for an unknown role). Call it first in main().
void fftd_test_child_dispatch(
    int argc, char **argv, const fftd_test_role *roles);

// fftd_test_spawn starts this program again as a child in the named role
// with the NULL-terminated arguments args. Returns the child's pid or -1.
// It execs the very file this process runs (/proc/self/exe), also after
// that file was removed or replaced on disk.
pid_t fftd_test_spawn(const char *role, const char *const *args);

// fftd_test_wait_pids waits at most timeout_ms for the n children, kills
// (SIGKILL) those still running then, and stores each child's status in
// codes[i] (as fftd_test_daemon_wait). Returns how many are not 0.
int fftd_test_wait_pids(const pid_t *pids, int n, int timeout_ms, int *codes);

// fftd_test_run_children runs n children of role at once, child i with
// args followed by its index i as a decimal string, and waits for all (at
// most timeout_ms). codes (may be NULL) receives the n statuses. Returns
// how many children did not exit with 0 (n if they could not be started).
int fftd_test_run_children(int n, const char *role, const char *const *args,
    int timeout_ms, int *codes);

// fftd_test_die_with_parent makes the calling process (a child just
// forked from parent, before exec) die with SIGKILL when the parent dies,
// so that a test that crashes leaves no daemon or child behind. Every
// process started here does it.
void fftd_test_die_with_parent(pid_t parent);

// fftd_test_sleep_ms sleeps ms milliseconds.
void fftd_test_sleep_ms(int ms);

#endif // FFTD_BENCH_DAEMON_H

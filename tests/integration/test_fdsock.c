// SPDX-License-Identifier: MIT
//
// test_fdsock.c — the descriptor hand-over socket and the limits that keep
// one client from exhausting the daemon's descriptors and mappings, against
// a real `fftd --backend fftw`:
//   - idle peers delay nobody: with three connections open on the fd socket
//     that never send, another client's fftd_buffer_create still completes
//     in well under the 2 s a connection may take (< 1 s);
//   - [limits] max_fd_connections_per_user: with that many connections of
//     this user open on the fd socket, one more is answered FFTD_ELIMIT at
//     once (raw reply) and fftd_buffer_create fails FFTD_ELIMIT with a
//     message naming the key; once they close, registration works again;
//   - out of descriptors: the daemon raises its soft RLIMIT_NOFILE to the
//     hard limit at start (started here with a soft limit of 256); then,
//     with its soft limit lowered (prlimit) to its lowest free descriptor
//     number so that accept() fails with EMFILE, and connections waiting
//     on the fd socket, its CPU time (/proc/PID/stat) grows by less than
//     0.3 s over 1.5 s (it used to spin at 100%), it logs the condition
//     once, and once the limit is back a client registers a buffer;
//   - the client's hand-over waits its timeout, not a fixed 10 s, for a
//     descriptor socket that never answers;
//   - start-up short of descriptors: run with soft and hard limits of n
//     for every n from 4 up to three that start, the daemon either exits
//     1 saying why or starts and stops with 0 on SIGTERM, never a signal
//     (libuv aborted when its loop, made after the sockets listened, found
//     no descriptor);
//   - then, with 0 to 3 descriptors left, a buffer registration, a stream
//     channel and a new connection each succeed or fail with a typed
//     error (a passed descriptor the kernel dropped for want of room is
//     FFTD_ESYSERR + EMFILE, not FFTD_EPROTO), the daemon stays up, and
//     with the limit back all three work;
//   - [limits] max_buffers_per_client and max_buffers_per_user: past
//     either, fftd_buffer_create is FFTD_ELIMIT naming the key; another
//     connection of the user gets its share up to the per-user limit, and a
//     destroyed buffer gives its place back.

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/check.h"
#include "client_impl.h"
#include "handover.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "clock.h"
#include "fftd.h"

#define TIMEOUT_MS 30000

static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_daemon D;

// FX: this program's tests start their own daemon, D (stopped by
// fftd_test_local_teardown if a failed assertion left it running).
static fftd_test_fixture FX = { .local = &D };

// fd_path writes the daemon's descriptor socket path (its ipc path + .fd).
static void
fd_path(const fftd_test_daemon *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s.fd", d->url + strlen("ipc://"));
}

// raw_connect opens a plain connection to the daemon's fd socket.
static int
raw_connect(const fftd_test_daemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	fd_path(d, sa.sun_path, sizeof(sa.sun_path));
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(connect(s, (struct sockaddr *) &sa, sizeof(sa)), 0);
	return s;
}

// raw_reply reads the daemon's 256-byte answer on s (at most timeout_ms)
// and returns its status, or -1 if none came.
static int
raw_reply(int s, int timeout_ms, char *msg, size_t msglen)
{
	uint8_t       rep[256];
	size_t        got = 0;
	long long     end = fftd__mono_ms() + timeout_ms;
	struct pollfd p   = { s, POLLIN, 0 };
	while (got < sizeof(rep)) {
		long long left = end - fftd__mono_ms();
		if (left <= 0 || poll(&p, 1, (int) left) <= 0) {
			return -1;
		}
		ssize_t n = recv(s, rep + got, sizeof(rep) - got, 0);
		if (n <= 0) {
			return -1;
		}
		got += (size_t) n;
	}
	rep[sizeof(rep) - 1] = '\0';
	snprintf(msg, msglen, "%s", (const char *) rep + 16);
	return (int32_t) ((uint32_t) rep[0] | (uint32_t) rep[1] << 8
	    | (uint32_t) rep[2] << 16 | (uint32_t) rep[3] << 24);
}

// cpu_ms is the CPU time (user + system) process pid has used, in ms.
static long long
cpu_ms(pid_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	// Fields after the command name (which may hold blanks): state is
	// field 3, utime 14, stime 15.
	const char        *p  = strrchr(line, ')');
	unsigned long long ut = 0, st = 0;
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2,
	                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	                     "%llu %llu",
	                     &ut, &st),
	    2);
	return (long long) (ut + st) * 1000 / sysconf(_SC_CLK_TCK);
}

// lowest_free_fd is the lowest descriptor number process pid has not open.
static int
lowest_free_fd(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	static char used[1 << 16];
	memset(used, 0, sizeof(used));
	DIR *dir = opendir(path);
	assert_non_null(dir);
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		int n = atoi(e->d_name);
		if (e->d_name[0] != '.' && n >= 0 && n < (int) sizeof(used)) {
			used[n] = 1;
		}
	}
	closedir(dir);
	int i = 0;
	while (i < (int) sizeof(used) && used[i]) {
		i++;
	}
	return i;
}

// fd_count is how many descriptors process pid has open.
static int
fd_count(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	DIR *dir = opendir(path);
	assert_non_null(dir);
	int            n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(dir);
	return n;
}

// wait_fd_count waits (at most 10 s) until process pid has at most n
// descriptors open: the daemon closes a hand-over's connection and
// descriptor after its reply, so a client that has the reply may look
// before they close; and a descriptor open for a moment when n was counted
// (a connection being set up) may be gone since.
static void
wait_fd_count(pid_t pid, int n)
{
	for (int k = 0; k < 1000 && fd_count(pid) > n; k++) {
		fftd_test_sleep_ms(10);
	}
	int got = fd_count(pid);
	if (got > n) {
		print_message(
		    "daemon descriptors: %d, want at most %d\n", got, n);
	}
	assert_true(got <= n);
}

// log_count counts the lines of the daemon's log that contain what.
static int
log_count(const fftd_test_daemon *d, const char *what)
{
	FILE *f = fopen(d->log, "r");
	assert_non_null(f);
	char line[1024];
	int  n = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strstr(line, what) != NULL;
	}
	fclose(f);
	return n;
}

// --- idle peers --------------------------------------------------------------

static void
test_idle_peers_delay_nobody(void **state)
{
	(void) state;
	assert_int_equal(fftd_test_daemon_start(&D, NULL, DAEMON_ARGS), 0);
	fftd_client *c;
	fftd_buffer *b;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	int idle[3];
	for (int i = 0; i < 3; i++) {
		idle[i] = raw_connect(&D);
	}
	long long t0 = fftd__mono_ms();
	ASSERT_OK(fftd_buffer_create(c, 4096, &b));
	long long took = fftd__mono_ms() - t0;
	print_message("buffer registered in %lld ms with 3 idle peers\n", took);
	assert_true(took < 1000);
	// The idle ones are answered when their 2 s are up.
	char msg[256];
	assert_int_equal(
	    raw_reply(idle[0], 10000, msg, sizeof(msg)), FFTD_EPROTO);
	for (int i = 0; i < 3; i++) {
		close(idle[i]);
	}
	fftd_buffer_destroy(b);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

// --- connections per user ----------------------------------------------------

static void
test_fd_connections_per_user(void **state)
{
	(void) state;
	static const char conf[]
	    = "[limits]\nmax_fd_connections_per_user = 2\n";
	assert_int_equal(fftd_test_daemon_start(&D, conf, DAEMON_ARGS), 0);
	fftd_client *c;
	fftd_buffer *b;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	int  idle[2] = { raw_connect(&D), raw_connect(&D) };
	int  extra   = raw_connect(&D); // accepted after those two
	char msg[256];
	assert_int_equal(raw_reply(extra, 1000, msg, sizeof(msg)), FFTD_ELIMIT);
	assert_non_null(strstr(msg, "max_fd_connections_per_user"));
	close(extra);
	assert_int_equal(fftd_buffer_create(c, 4096, &b), FFTD_ELIMIT);
	assert_non_null(
	    strstr(fftd_last_error(), "max_fd_connections_per_user"));
	close(idle[0]);
	close(idle[1]);
	// Once the daemon has seen them go, registration works again.
	int       rv;
	long long end = fftd__mono_ms() + 5000;
	while ((rv = fftd_buffer_create(c, 4096, &b)) == FFTD_ELIMIT
	    && fftd__mono_ms() < end) {
		fftd_test_sleep_ms(20);
	}
	ASSERT_OK(rv);
	fftd_buffer_destroy(b);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

// --- out of descriptors ------------------------------------------------------

static void
test_out_of_descriptors(void **state)
{
	(void) state;
	// Started with a low soft limit (inherited), the daemon raises it.
	struct rlimit mine, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &mine), 0);
	if (mine.rlim_max != RLIM_INFINITY && mine.rlim_max <= 256) {
		skip();
	}
	low          = mine;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int started = fftd_test_daemon_start(&D, NULL, DAEMON_ARGS);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &mine), 0);
	assert_int_equal(started, 0);
	struct rlimit dl;
	assert_int_equal(prlimit(D.pid, RLIMIT_NOFILE, NULL, &dl), 0);
	print_message("daemon's descriptor limit: soft %llu, hard %llu\n",
	    (unsigned long long) dl.rlim_cur, (unsigned long long) dl.rlim_max);
	assert_true(dl.rlim_cur > 256);
	assert_int_equal(
	    log_count(&D, "descriptor limit (RLIMIT_NOFILE) raised"), 1);

	fftd_client *c;
	fftd_buffer *b;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	int nfd = fd_count(D.pid);
	ASSERT_OK(fftd_buffer_create(c, 4096, &b));
	fftd_buffer_destroy(b);
	wait_fd_count(D.pid, nfd);
	// No descriptor number below the limit is free: accept() fails.
	struct rlimit at = dl;
	at.rlim_cur      = (rlim_t) lowest_free_fd(D.pid);
	assert_int_equal(prlimit(D.pid, RLIMIT_NOFILE, &at, NULL), 0);
	int waiting[4];
	for (int i = 0; i < 4; i++) {
		waiting[i] = raw_connect(&D); // queued in the backlog
	}
	fftd_test_sleep_ms(300);
	long long cpu0 = cpu_ms(D.pid), t0 = fftd__mono_ms();
	fftd_test_sleep_ms(1500);
	long long cpu = cpu_ms(D.pid) - cpu0, wall = fftd__mono_ms() - t0;
	print_message("at the limit: %lld ms of CPU in %lld ms\n", cpu, wall);
	assert_true(cpu < 300);
	// One warning per episode, not per retry (about 15 in 1.5 s): a
	// descriptor another of the daemon's threads frees for a moment lets
	// one accept through, which ends the episode ("accepting again"), and
	// the next accept starts another (CI saw 2 once, on a loaded machine).
	int starved = log_count(&D, "fd socket: cannot accept"),
	    resumed = log_count(&D, "fd socket: accepting again");
	print_message(
	    "at the limit: %d warnings, %d resumptions\n", starved, resumed);
	assert_int_equal(starved, resumed + 1);
	assert_true(starved <= 3);
	// Descriptors free again: service resumes.
	assert_int_equal(prlimit(D.pid, RLIMIT_NOFILE, &dl, NULL), 0);
	ASSERT_OK(fftd_buffer_create(c, 4096, &b));
	fftd_buffer_destroy(b);
	assert_true(log_count(&D, "fd socket: accepting again") >= 1);
	for (int i = 0; i < 4; i++) {
		close(waiting[i]);
	}
	// Requests that need descriptors in several of the daemon's threads
	// (the fd socket's accept and the descriptor it receives, the stream
	// channel's copy, NNG's accept of a new connection) while 0 to 3 are
	// left: each fails with a typed error or succeeds, and once the
	// limit is back everything works.
	fftd_plan_desc pd;
	int64_t        n = 256;
	fftd_plan     *p;
	fftd_client   *quick;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F32), 0);
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	ASSERT_OK(fftd_client_open(&quick, D.url, 500));
	setenv("FFTD_STREAM_CHANNEL", "2", 1);
	for (int k = 0; k < 4; k++) {
		at.rlim_cur = (rlim_t) lowest_free_fd(D.pid) + (rlim_t) k;
		assert_int_equal(prlimit(D.pid, RLIMIT_NOFILE, &at, NULL), 0);
		// With none free only a new connection is tried: the
		// hand-over's own 10 s time-out would make the others slow.
		int          rb = FFTD_ESYSERR, rs = FFTD_ESYSERR;
		fftd_stream *st = NULL;
		if (k > 0) {
			rb = fftd_buffer_create(quick, 4096, &b);
			rs = fftd_stream_open(p, 1, &st);
		}
		fftd_client *c2 = NULL;
		int          rc = fftd_client_open(&c2, D.url, 500);
		print_message("%d free: buffer %s, stream %s, connection %s\n",
		    k, fftd_err_name(rb), fftd_err_name(rs), fftd_err_name(rc));
		// A descriptor passed while none is free is dropped by the
		// kernel: the daemon says so, not that the request was bad.
		assert_int_not_equal(rb, FFTD_EPROTO);
		assert_int_not_equal(rs, FFTD_EPROTO);
		if (rb == FFTD_OK) {
			fftd_buffer_destroy(b);
		}
		fftd_stream_close(st);
		fftd_client_close(c2);
		assert_int_equal(prlimit(D.pid, RLIMIT_NOFILE, &dl, NULL), 0);
		assert_int_equal(fftd_test_daemon_alive(&D), 1);
		ASSERT_OK(fftd_buffer_create(c, 4096, &b));
		fftd_buffer_destroy(b);
		ASSERT_OK(fftd_stream_open(p, 1, &st));
		float in[512], out[512];
		memset(in, 0, sizeof(in));
		in[0] = 1;
		ASSERT_OK(fftd_stream_submit(st, in));
		ASSERT_OK(fftd_stream_wait(st, out, NULL));
		assert_true(out[0] == 1.0f && out[510] == 1.0f);
		fftd_stream_close(st);
		ASSERT_OK(fftd_client_open(&c2, D.url, TIMEOUT_MS));
		ASSERT_OK(fftd_ping(c2, NULL));
		fftd_client_close(c2);
	}
	unsetenv("FFTD_STREAM_CHANNEL");
	fftd_client_close(quick);
	fftd_plan_destroy(p);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

// --- start-up short of descriptors -------------------------------------------

// start_with_fds runs the daemon with its soft and hard descriptor limits
// both n (so that it cannot raise them) and returns how it ended: the exit
// code when it refused to start by itself; when it started ("ready" in its
// log), 1000 + the exit code after SIGTERM; -1 if it neither started nor
// exited within FFTD_TEST_START_MS, or did not stop within 10 s (killed);
// 128 + signal when a signal ended it.
static int
start_with_fds(int n)
{
	char dir[64], url[128], log[96], sock[96], fdsock[96];
	snprintf(dir, sizeof(dir), "/tmp/fftd-fds-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/s", dir);
	snprintf(fdsock, sizeof(fdsock), "%s/s.fd", dir);
	snprintf(url, sizeof(url), "ipc://%s", sock);
	snprintf(log, sizeof(log), "%s/log", dir);
	const char *bin    = fftd_test_daemon_bin();
	const char *argv[] = { bin, "--listen", url, "--backend", "fftw",
		"--log-level", "info", NULL };
	int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int nul   = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(logfd >= 0 && nul >= 0);
	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid();
	pid_t pid    = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		// Only async-signal-safe calls between fork and exec.
		fftd_test_die_with_parent(parent);
		dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		struct rlimit rl = { (rlim_t) n, (rlim_t) n };
		setrlimit(RLIMIT_NOFILE, &rl);
		execv(bin, (char *const *) argv);
		_exit(127);
	}
	close(logfd);
	close(nul);
	int       st = 0, code = -1;
	long long end = fftd__mono_ms() + FFTD_TEST_START_MS;
	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			code = WIFEXITED(st) ? WEXITSTATUS(st)
			                     : 128 + WTERMSIG(st);
			break;
		}
		char  line[1024];
		bool  ready = false;
		FILE *f     = fopen(log, "r");
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			ready = ready || strstr(line, " ready: ") != NULL;
		}
		if (f != NULL) {
			fclose(f);
		}
		if (ready || fftd__mono_ms() > end) {
			if (ready) {
				kill(pid, SIGTERM);
			}
			int codes[1];
			fftd_test_wait_pids(&pid, 1, ready ? 10000 : 0, codes);
			code = codes[0] < 0 ? -1 : ready ? 1000 + codes[0] : -1;
			break;
		}
		fftd_test_sleep_ms(10);
	}
	if (code != 1 && code != 1000) {
		print_message("descriptor limit %d: daemon ended with %d; "
		              "its log:\n",
		    n, code);
		FILE *f = fopen(log, "r");
		char  line[1024];
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			print_message("  %s", line);
		}
		if (f != NULL) {
			fclose(f);
		}
	}
	unlink(log);
	unlink(sock);
	unlink(fdsock);
	rmdir(dir);
	return code;
}

// test_handover_timeout: the client's descriptor hand-over waits at most
// the client's timeout, not a fixed 10 s, for a daemon that never answers:
// a socket here that listens and never accepts takes the connection and the
// request into its backlog; fftd__send_fd with 300 ms gives up with
// FFTD_ETIMEDOUT in well under 3 s.
static void
test_handover_timeout(void **state)
{
	(void) state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/fftd-silent-%d.sock",
	    (int) getpid());
	unlink(sa.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *) &sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 4), 0);
	uint8_t token[FFTD__FDSOCK_TOKEN] = { 1, 2, 3 };
	int     fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	uint64_t  id = 0;
	long long t0 = fftd__mono_ms();
	int       rv = fftd__send_fd(
	          sa.sun_path, token, sizeof(token), 4096, fd, 300, &id);
	long long took = fftd__mono_ms() - t0;
	print_message("silent descriptor socket: %s after %lld ms: %s\n",
	    fftd_err_name(rv), took, fftd_last_error());
	assert_int_equal(rv, FFTD_ETIMEDOUT);
	assert_true(took >= 250 && took < 3000);
	close(fd);
	close(l);
	unlink(sa.sun_path);
}

static void
test_startup_short_of_descriptors(void **state)
{
	(void) state;
	// Every limit from "not even the listening sockets" up to "all of
	// it": the daemon either refuses to start (exit 1, saying why) or
	// starts and stops cleanly on SIGTERM; never a crash. Its event loop
	// used to be made after the sockets listened, and libuv aborted
	// (SIGABRT) when no descriptor was left for it.
	int started = 0;
	for (int n = 4; n < 64 && started < 3; n++) {
		int code = start_with_fds(n);
		assert_true(code == 1 || code == 1000);
		started = code == 1000 ? started + 1 : 0;
	}
	assert_int_equal(started, 3);
}

// --- number of buffers ------------------------------------------------------

static void
test_buffer_count(void **state)
{
	(void) state;
	static const char conf[] = "[limits]\n"
	                           "max_buffers_per_client = 4\n"
	                           "max_buffers_per_user = 6\n";
	assert_int_equal(fftd_test_daemon_start(&D, conf, DAEMON_ARGS), 0);
	fftd_client *a, *b;
	fftd_buffer *ba[4], *bb[2], *x;
	ASSERT_OK(fftd_client_open(&a, D.url, TIMEOUT_MS));
	ASSERT_OK(fftd_client_open(&b, D.url, TIMEOUT_MS));
	for (int i = 0; i < 4; i++) {
		ASSERT_OK(fftd_buffer_create(a, 4096, &ba[i]));
	}
	assert_int_equal(fftd_buffer_create(a, 4096, &x), FFTD_ELIMIT);
	assert_non_null(strstr(fftd_last_error(), "max_buffers_per_client"));
	// The other connection of this user has the rest of the user's six.
	for (int i = 0; i < 2; i++) {
		ASSERT_OK(fftd_buffer_create(b, 4096, &bb[i]));
	}
	assert_int_equal(fftd_buffer_create(b, 4096, &x), FFTD_ELIMIT);
	assert_non_null(strstr(fftd_last_error(), "max_buffers_per_user"));
	// A destroyed buffer gives its place back.
	fftd_buffer_destroy(ba[0]);
	ASSERT_OK(fftd_buffer_create(b, 4096, &x));
	assert_int_equal(fftd_buffer_create(a, 4096, &ba[0]), FFTD_ELIMIT);
	fftd_buffer_destroy(x);
	ASSERT_OK(fftd_buffer_create(a, 4096, &ba[0]));
	for (int i = 0; i < 4; i++) {
		fftd_buffer_destroy(ba[i]);
	}
	for (int i = 0; i < 2; i++) {
		fftd_buffer_destroy(bb[i]);
	}
	fftd_client_close(a);
	fftd_client_close(b);
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_idle_peers_delay_nobody, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_fd_connections_per_user, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_out_of_descriptors, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_buffer_count, fftd_test_local_teardown),
		cmocka_unit_test(test_startup_short_of_descriptors),
		cmocka_unit_test(test_handover_timeout),
	};
	return fftd_test_run_group("fdsock", tests, &FX);
}

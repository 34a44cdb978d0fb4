// SPDX-License-Identifier: MIT
//
// daemon.c — start, probe and stop a real fftd for the benchmarks and
// tests; run child processes of the calling program (see daemon.h).

#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fftd.h"
#include "raw.h"

#define CHILD_FLAG "--fftd-test-child"

// fftd_test_sleep_ms sleeps ms milliseconds, resuming after signals.
void
fftd_test_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) { }
}

// fftd_test_daemon_bin is $FFTD_BIN, else build/fftd.
const char *
fftd_test_daemon_bin(void)
{
	const char *b = getenv("FFTD_BIN");
	return b != NULL && b[0] != '\0' ? b : "build/fftd";
}

// fftd_test_fftctl_bin is the fftctl beside the daemon binary (daemon.h).
const char *
fftd_test_fftctl_bin(void)
{
	static char path[1024];
	const char *bin   = fftd_test_daemon_bin();
	const char *slash = strrchr(bin, '/');
	if (slash == NULL) {
		snprintf(path, sizeof(path), "./fftctl");
	} else {
		snprintf(path, sizeof(path), "%.*s/fftctl", (int) (slash - bin),
		    bin);
	}
	return path;
}

// fftd_test_run_capture runs cmd through the shell and keeps its output
// (daemon.h).
int
fftd_test_run_capture(const char *cmd, char *out, size_t outlen)
{
	char full[2048];
	snprintf(full, sizeof(full), "timeout -k 5 30 %s 2>&1", cmd);
	fflush(stdout);
	fflush(stderr);
	FILE *p = popen(full, "r");
	if (p == NULL) {
		return -1;
	}
	size_t len = 0;
	while (len + 1 < outlen) {
		size_t r = fread(out + len, 1, outlen - 1 - len, p);
		if (r == 0) {
			break;
		}
		len += r;
	}
	out[len] = '\0';
	char sink[4096];
	while (fread(sink, 1, sizeof(sink), p) > 0) { }
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// status_code is a wait status as an exit code (128 + signal; -1).
static int
status_code(int st)
{
	if (WIFEXITED(st)) {
		return WEXITSTATUS(st);
	}
	if (WIFSIGNALED(st)) {
		return 128 + WTERMSIG(st);
	}
	return -1;
}

// print_log prints a daemon's log to stderr (a failed start or exit).
static void
print_log(const fftd_test_daemon *d)
{
	FILE *f = fopen(d->log, "r");
	if (f == NULL) {
		return;
	}
	fprintf(
	    stderr, "---- %s log (%s) ----\n", fftd_test_daemon_bin(), d->log);
	char line[1024];
	while (fgets(line, sizeof(line), f) != NULL) {
		fputs(line, stderr);
	}
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}

// remove_dir removes a daemon's temporary folder and what it holds.
static void
remove_dir(fftd_test_daemon *d)
{
	if (d->dir[0] == '\0') {
		return;
	}
	char p[400];
	snprintf(p, sizeof(p), "%s/fftd.sock", d->dir);
	unlink(p);
	unlink(d->log);
	if (d->conf[0] != '\0') {
		unlink(d->conf);
	}
	if (rmdir(d->dir) != 0) {
		fprintf(stderr, "daemon: cannot remove %s: %s\n", d->dir,
		    strerror(errno));
	}
	d->dir[0] = '\0';
}

// probe returns 0 once a Hello on s is answered FFTD_OK, 1 while nobody
// answers yet, -1 when the daemon answers with an error.
static int
probe(nng_socket s)
{
	int st = fftd_test_raw_hello(s, FFTD_PROTOCOL_VERSION, NULL);
	if (st == FFTD_OK) {
		return 0;
	}
	if (st > 0) {
		fprintf(stderr, "daemon: Hello answered status %d\n", st);
		return -1;
	}
	return 1;
}

// fftd_test_daemon_start starts a daemon and waits until a Hello
// is answered (daemon.h).
int
fftd_test_daemon_start(
    fftd_test_daemon *d, const char *config, const char *const *args)
{
	memset(d, 0, sizeof(*d));
	const char *tmp = getenv("TMPDIR");
	if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) > 64) {
		tmp = "/tmp";
	}
	snprintf(d->dir, sizeof(d->dir), "%s/fftd-test-XXXXXX", tmp);
	if (mkdtemp(d->dir) == NULL) {
		fprintf(stderr, "daemon: mkdtemp %s: %s\n", d->dir,
		    strerror(errno));
		d->dir[0] = '\0';
		return -1;
	}
	snprintf(d->url, sizeof(d->url), "ipc://%s/fftd.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/fftd.log", d->dir);
	if (config != NULL) {
		snprintf(d->conf, sizeof(d->conf), "%s/fftd.conf", d->dir);
		FILE *f = fopen(d->conf, "w");
		if (f == NULL || fputs(config, f) < 0 || fclose(f) != 0) {
			fprintf(stderr, "daemon: cannot write %s\n", d->conf);
			remove_dir(d);
			return -1;
		}
	}

	const char *bin = fftd_test_daemon_bin();
	const char *argv[64];
	int         argc = 0;
	argv[argc++]     = bin;
	argv[argc++]     = "--listen";
	argv[argc++]     = d->url;
	if (config != NULL) {
		argv[argc++] = "--config";
		argv[argc++] = d->conf;
	}
	for (int i = 0; args != NULL && args[i] != NULL && argc < 63; i++) {
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;

	int logfd
	    = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0) {
		fprintf(
		    stderr, "daemon: open %s: %s\n", d->log, strerror(errno));
		remove_dir(d);
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid();
	pid_t pid    = fork();
	if (pid < 0) {
		fprintf(stderr, "daemon: fork: %s\n", strerror(errno));
		close(logfd);
		remove_dir(d);
		return -1;
	}
	if (pid == 0) {
		// Only async-signal-safe calls between fork and exec.
		fftd_test_die_with_parent(parent);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0) {
			dup2(nul, 0);
		}
		dup2(logfd, 1);
		dup2(logfd, 2);
		execv(bin, (char *const *) argv);
		static const char m[] = "daemon: exec failed\n";
		(void) !write(2, m, sizeof(m) - 1);
		_exit(127);
	}
	close(logfd);
	d->pid = pid;

	long long  deadline = fftd__mono_ms() + FFTD_TEST_START_MS;
	nng_socket ps;
	if (fftd_test_raw_open_waiting(&ps, d->url, 250) != 0) {
		fprintf(stderr, "daemon: cannot open a socket to probe %s\n",
		    d->url);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		d->pid = 0;
		remove_dir(d);
		return -1;
	}
	for (;;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			nng_close(ps);
			d->pid = 0;
			fprintf(stderr,
			    "daemon: %s exited during start-up (status %d)\n",
			    bin, status_code(st));
			print_log(d);
			remove_dir(d);
			return -1;
		}
		int p = probe(ps);
		if (p == 0) {
			nng_close(ps);
			return 0;
		}
		if (p < 0 || fftd__mono_ms() > deadline) {
			nng_close(ps);
			fprintf(stderr,
			    "daemon: %s did not answer at %s within %d ms\n",
			    bin, d->url, FFTD_TEST_START_MS);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			d->pid = 0;
			print_log(d);
			remove_dir(d);
			return -1;
		}
		fftd_test_sleep_ms(20);
	}
}

// fftd_test_daemon_signal sends sig to a running daemon.
int
fftd_test_daemon_signal(fftd_test_daemon *d, int sig)
{
	if (d->pid <= 0) {
		return -1;
	}
	return kill(d->pid, sig);
}

// fftd_test_daemon_alive is whether the daemon still runs (reaps
// it when not).
int
fftd_test_daemon_alive(fftd_test_daemon *d)
{
	if (d->pid <= 0) {
		return 0;
	}
	int st;
	if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
		d->reaped = status_code(st);
		d->pid    = -d->pid; // reaped, status kept
		return 0;
	}
	return 1;
}

// fftd_test_daemon_wait waits for the daemon's exit, kills it
// after timeout_ms, removes its folder (daemon.h).
int
fftd_test_daemon_wait(fftd_test_daemon *d, int timeout_ms)
{
	int code;
	if (d->pid < 0) {
		code = d->reaped;
	} else if (d->pid == 0) {
		code = -1;
	} else {
		long long deadline = fftd__mono_ms() + timeout_ms;
		int       st;
		for (;;) {
			pid_t r = waitpid(d->pid, &st, WNOHANG);
			if (r == d->pid) {
				code = status_code(st);
				break;
			}
			if (r < 0 && errno != EINTR) {
				code = -1;
				break;
			}
			if (fftd__mono_ms() > deadline) {
				fprintf(stderr,
				    "daemon: still running %d ms after the "
				    "signal: "
				    "SIGKILL\n",
				    timeout_ms);
				kill(d->pid, SIGKILL);
				waitpid(d->pid, &st, 0);
				code = -1;
				break;
			}
			fftd_test_sleep_ms(10);
		}
	}
	d->pid = 0;
	if (code != 0) {
		fprintf(stderr, "daemon: exit status %d\n", code);
		print_log(d);
	} else if (getenv("FFTD_TEST_DAEMON_LOG") != NULL) {
		print_log(d);
	}
	remove_dir(d);
	return code;
}

// fftd_test_daemon_stop is SIGTERM, then a 10 s wait.
int
fftd_test_daemon_stop(fftd_test_daemon *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
	}
	return fftd_test_daemon_wait(d, 10000);
}

// fftd_test_die_with_parent makes a fresh child die with its
// parent (PR_SET_PDEATHSIG).
void
fftd_test_die_with_parent(pid_t parent)
{
	// Only async-signal-safe calls: this runs between fork and exec.
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) {
		_exit(126); // the parent is already gone
	}
}

// --- child processes ------------------------------------------------------

// fftd_test_child_dispatch runs a child's role and exits, or
// returns in the parent (daemon.h).
void
fftd_test_child_dispatch(int argc, char **argv, const fftd_test_role *roles)
{
	if (argc < 3 || strcmp(argv[1], CHILD_FLAG) != 0) {
		return;
	}
	for (int i = 0; roles != NULL && roles[i].name != NULL; i++) {
		if (strcmp(roles[i].name, argv[2]) == 0) {
			int rv = roles[i].fn(argc - 3, argv + 3);
			fflush(stdout);
			fflush(stderr);
			exit(rv);
		}
	}
	fprintf(stderr, "child: unknown role %s\n", argv[2]);
	exit(127);
}

// spawn runs the program exe (head[0] when NULL) with the arguments
// head[0..nhead) then args (NULL-terminated, or NULL), as a child that dies
// with this process; with outfd >= 0 its stdin is /dev/null and its stdout
// and stderr go to outfd.
static pid_t
spawn(const char *exe, const char *const *head, int nhead,
    const char *const *args, int outfd)
{
	const char *argv[64];
	int         argc = 0;
	for (int i = 0; i < nhead; i++) {
		argv[argc++] = head[i];
	}
	for (int i = 0; args != NULL && args[i] != NULL && argc < 63; i++) {
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid_t parent = getpid();
	pid_t pid    = fork();
	if (pid == 0) {
		fftd_test_die_with_parent(parent);
		if (outfd >= 0) {
			int nul = open("/dev/null", O_RDONLY);
			dup2(nul, 0);
			dup2(outfd, 1);
			dup2(outfd, 2);
		}
		execv(exe != NULL ? exe : argv[0], (char *const *) argv);
		_exit(127);
	}
	return pid;
}

// fftd_test_spawn execs /proc/self/exe, not the path it names: a program
// that runs for long (bench/soak, for hours) may see its file replaced or
// removed under it (a rebuild, a new copy of the build folder), and that
// path then reads "PATH (deleted)" and no longer execs, whereas
// /proc/self/exe still opens the very file this process runs. The path is
// only argv[0], for ps.
pid_t
fftd_test_spawn(const char *role, const char *const *args)
{
	char    self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		return -1;
	}
	self[n]                  = '\0';
	const char *const head[] = { self, CHILD_FLAG, role };
	return spawn("/proc/self/exe", head, 3, args, -1);
}

// fftd_test_wait_pids waits for n children, killing the late ones
// (daemon.h).
int
fftd_test_wait_pids(const pid_t *pids, int n, int timeout_ms, int *codes)
{
	long long deadline = fftd__mono_ms() + timeout_ms;
	int       left = 0, bad = 0;
	for (int i = 0; i < n; i++) {
		codes[i] = -2; // still running
		left += pids[i] > 0;
		if (pids[i] <= 0) {
			codes[i] = -1;
		}
	}
	while (left > 0) {
		for (int i = 0; i < n; i++) {
			int st;
			if (codes[i] == -2
			    && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				codes[i] = status_code(st);
				left--;
			}
		}
		if (left == 0) {
			break;
		}
		if (fftd__mono_ms() > deadline) {
			for (int i = 0; i < n; i++) {
				if (codes[i] == -2) {
					fprintf(stderr,
					    "child %d (pid %d) timed out: "
					    "SIGKILL\n",
					    i, (int) pids[i]);
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					codes[i] = -1;
				}
			}
			break;
		}
		fftd_test_sleep_ms(5);
	}
	for (int i = 0; i < n; i++) {
		bad += codes[i] != 0;
	}
	return bad;
}

// fftd_test_run_children runs n children of a role at once and
// waits for them (daemon.h).
int
fftd_test_run_children(int n, const char *role, const char *const *args,
    int timeout_ms, int *codes)
{
	pid_t *pids = calloc((size_t) n, sizeof(*pids));
	int   *c    = calloc((size_t) n, sizeof(*c));
	if (pids == NULL || c == NULL) {
		free(pids);
		free(c);
		return n;
	}
	for (int i = 0; i < n; i++) {
		const char *argv[62];
		char        idx[16];
		int         k = 0;
		for (; args != NULL && args[k] != NULL && k < 60; k++) {
			argv[k] = args[k];
		}
		snprintf(idx, sizeof(idx), "%d", i);
		argv[k++] = idx;
		argv[k]   = NULL;
		pids[i]   = fftd_test_spawn(role, argv);
	}
	int bad = fftd_test_wait_pids(pids, n, timeout_ms, c);
	for (int i = 0; i < n; i++) {
		if (c[i] != 0) {
			fprintf(
			    stderr, "child %s %d: status %d\n", role, i, c[i]);
		}
		if (codes != NULL) {
			codes[i] = c[i];
		}
	}
	free(pids);
	free(c);
	return bad;
}

// fftd_test_daemon_run runs the daemon binary to its end
// (start-up refusals; daemon.h).
int
fftd_test_daemon_run(
    const char *const *args, int timeout_ms, char *out, size_t outlen)
{
	char path[] = "/tmp/fftd-test-run-XXXXXX";
	int  fd     = out != NULL ? mkstemp(path) : open("/dev/null", O_RDWR);
	if (fd < 0) {
		return -1;
	}
	const char *const head[] = { fftd_test_daemon_bin() };
	pid_t             pid    = spawn(NULL, head, 1, args, fd);
	int               code   = -1;
	if (pid > 0) {
		fftd_test_wait_pids(&pid, 1, timeout_ms, &code);
	}
	if (out != NULL) {
		ssize_t n          = pread(fd, out, outlen - 1, 0);
		out[n > 0 ? n : 0] = '\0';
		unlink(path);
	}
	close(fd);
	return code;
}

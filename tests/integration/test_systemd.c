// SPDX-License-Identifier: MIT
//
// test_systemd.c — fftd as a systemd service, without systemd:
//  - the sd_notify protocol: the real daemon runs with NOTIFY_SOCKET set to a
//    datagram socket this test reads and WATCHDOG_USEC=600000; once its
//    socket answers a Hello, READY=1 must have been sent (the daemon sends
//    it after its listeners and devices are up), then WATCHDOG=1 pings at
//    least once per watchdog interval (systemd's rule; the daemon aims at
//    half of it), never before READY, with STATUS= lines, and after
//    SIGTERM STOPPING=1, and exit 0;
//  - the unit: `make install-files` lays out the unit, sysusers.d,
//    tmpfiles.d, config and README under DESTDIR with the given PREFIX, and
//    `systemd-analyze verify` accepts the unit (skipped, and reported so,
//    where systemd-analyze or make is missing).
// The repository root is found from FFTD_BIN (BUILD_DIR/fftd inside it).

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../bench/lib/daemon.h"
#include "clock.h"

// notify_open binds a datagram socket at path for the daemon's messages.
static int
notify_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		if (s >= 0) {
			close(s);
		}
		return -1;
	}
	return s;
}

// notify_recv waits at most timeout_ms for one message; returns its length
// (NUL-terminated in buf) or -1.
static int
notify_recv(int s, char *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { s, POLLIN, 0 };
	if (poll(&p, 1, timeout_ms) != 1) {
		return -1;
	}
	ssize_t n = recv(s, buf, len - 1, 0);
	if (n < 0) {
		return -1;
	}
	buf[n] = '\0';
	return (int) n;
}

// has_line says whether the message holds a line starting with key.
static int
has_line(const char *msg, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = msg; p != NULL && *p != '\0';) {
		if (strncmp(p, key, k) == 0) {
			return 1;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static void
test_notify_protocol(void **state)
{
	(void) state;
	char dir[] = "/tmp/fftd-notify-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/notify", dir);
	int s = notify_open(path);
	assert_true(s >= 0);

	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", "600000", 1);
	unsetenv("WATCHDOG_PID"); // any pid: the daemon is a child of ours
	fftd_test_daemon  d;
	const char *const args[]  = { "--backend", "fftw", NULL };
	int               started = fftd_test_daemon_start(&d, NULL, args);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(started, 0);

	// The daemon answered a Hello, so READY=1 must already be queued.
	char      msg[1024];
	int       ready = 0, pings = 0, status = 0;
	long long first_ping = 0, last_ping = 0, max_gap = 0;
	long long until = fftd__mono_ms() + 3000;
	while (fftd__mono_ms() < until) {
		if (notify_recv(s, msg, sizeof(msg), 500) < 0) {
			break;
		}
		ready |= has_line(msg, "READY=1");
		status |= has_line(msg, "STATUS=");
		if (has_line(msg, "WATCHDOG=1")) {
			long long now = fftd__mono_ms();
			if (pings > 0 && now - last_ping > max_gap) {
				max_gap = now - last_ping;
			}
			if (pings == 0) {
				first_ping = now;
			}
			last_ping = now;
			pings++;
			if (!ready) {
				print_error("WATCHDOG=1 came before READY=1\n");
			}
		}
	}
	print_message("notify: READY %d, STATUS %d, %d pings in %lld ms, "
	              "largest gap %lld ms\n",
	    ready, status, pings, last_ping - first_ping, max_gap);
	assert_true(ready);
	assert_true(status);
	// Interval 600 ms: pings every 300 ms, so about 10 in 3 s; systemd
	// would stop the service after a gap of 600 ms.
	assert_true(pings >= 5);
	assert_true(max_gap < 600);

	assert_int_equal(fftd_test_daemon_signal(&d, SIGTERM), 0);
	int stopping = 0;
	until        = fftd__mono_ms() + 5000;
	while (!stopping && fftd__mono_ms() < until) {
		if (notify_recv(s, msg, sizeof(msg), 500) >= 0) {
			stopping = has_line(msg, "STOPPING=1");
		}
	}
	assert_true(stopping);
	assert_int_equal(fftd_test_daemon_wait(&d, 10000), 0);
	close(s);
	unlink(path);
	rmdir(dir);
}

// repo_root derives the repository from FFTD_BIN (REPO/BUILD/fftd).
static int
repo_root(char *buf, size_t len)
{
	char        real[PATH_MAX];
	const char *bin = fftd_test_daemon_bin();
	if (realpath(bin, real) == NULL) {
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(real, '/');
		if (slash == NULL) {
			return -1;
		}
		*slash = '\0';
	}
	char mk[PATH_MAX + 16];
	snprintf(mk, sizeof(mk), "%s/Makefile", real);
	if (access(mk, R_OK) != 0 || strlen(real) >= len) {
		return -1;
	}
	snprintf(buf, len, "%s", real);
	return 0;
}

static int
have_program(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static int
file_mode(const char *dir, const char *rel, mode_t *mode)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s%s", dir, rel);
	struct stat st;
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
		print_error("missing: %s\n", p);
		return -1;
	}
	*mode = st.st_mode & 07777;
	return 0;
}

static void
test_install_layout(void **state)
{
	(void) state;
	char root[PATH_MAX];
	if (!have_program("make") || repo_root(root, sizeof(root)) != 0) {
		print_message("no make or no repository beside FFTD_BIN\n");
		skip();
	}
	char dest[] = "/tmp/fftd-destdir-XXXXXX";
	assert_non_null(mkdtemp(dest));
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	    "make -s -C '%s' install-files DESTDIR='%s' PREFIX=/usr/local",
	    root, dest);
	assert_int_equal(system(cmd), 0);
	static const char *const files[] = {
		"/usr/local/lib/systemd/system/fftd.service",
		"/usr/local/lib/sysusers.d/fftd.conf",
		"/usr/local/lib/tmpfiles.d/fftd.conf",
		"/etc/fftd/fftd.conf",
		"/usr/local/share/doc/fftd/README.md",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		mode_t m = 0;
		assert_int_equal(file_mode(dest, files[i], &m), 0);
		assert_int_equal(m, 0644);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dest);
	assert_int_equal(system(cmd), 0);
}

static void
test_unit_verifies(void **state)
{
	(void) state;
	char root[PATH_MAX];
	if (!have_program("systemd-analyze") || !have_program("make")
	    || repo_root(root, sizeof(root)) != 0) {
		print_message("systemd-analyze or make missing\n");
		skip();
	}
	// A prefix of our own, so that ExecStart names an executable that
	// exists (verify checks it) without installing anything.
	char pre[] = "/tmp/fftd-prefix-XXXXXX";
	assert_non_null(mkdtemp(pre));
	// The link lives elsewhere: it must name the daemon absolutely
	// (FFTD_BIN, or build/fftd from the repository root, may be relative).
	char bin[PATH_MAX];
	assert_non_null(realpath(fftd_test_daemon_bin(), bin));
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	    "make -s -C '%s' install-files PREFIX='%s/usr' SYSCONFDIR='%s/etc' "
	    "&& mkdir -p '%s/usr/bin' && ln -s '%s' '%s/usr/bin/fftd'",
	    root, pre, pre, pre, bin, pre);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
	    "systemd-analyze verify '%s/usr/lib/systemd/system/fftd.service' "
	    ">'%s/verify.log' 2>&1",
	    pre, pre);
	int rv = system(cmd);
	if (rv != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s/verify.log' >&2", pre);
		(void) !system(cmd);
	}
	assert_int_equal(rv, 0);
	// Verify is silent when the unit is clean: warnings fail too.
	char log[PATH_MAX];
	snprintf(log, sizeof(log), "%s/verify.log", pre);
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	if (st.st_size != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", log);
		(void) !system(cmd);
	}
	assert_int_equal(st.st_size, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pre);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_protocol),
		cmocka_unit_test(test_install_layout),
		cmocka_unit_test(test_unit_verifies),
	};
	return cmocka_run_group_tests_name("systemd", tests, NULL, NULL);
}

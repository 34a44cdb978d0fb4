// SPDX-License-Identifier: MIT
//
// test_peer_faults.c — what a local peer can do to the daemon's transport,
// and what it must not achieve: (1) a plain connect-and-close on the ipc
// path, a peer that hangs up half-way through NNG's header exchange, and a
// second daemon probing the same address ("address in use") must leave the
// listener accepting new clients; (2) clients killed (SIGKILL) while 4 MiB
// requests travel inline through the socket must all be released — their
// sessions, plans and descriptors — with no client left behind.
//
// Both failed with the NNG 1.5.2 that Debian 12 ships (nanomsg/nng#1518, and
// a transfer resubmitted after its pipe closed, which blocks NNG's reaper
// thread for good); deps/nng/patches fix them in the NNG that fftd builds.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "clock.h"
#include "fftd.h"

#define TIMEOUT_MS 30000
// Kill rounds and processes per round. The NNG defect is a race (a partial
// transfer finishing just as the other direction fails), so the test makes
// many chances: against NNG 1.5.2 this failed 6 of 7 runs here (2 cores),
// leaving 90-240 sessions behind; it takes about 12 s.
#define ROUNDS 30
#define PER_ROUND 4
// 4096-point f32 C2C, batch 128: 4 MiB each way, several partial socket
// transfers per message.
#define N 4096
#define BATCH 128
// Connections per killed process and requests in flight on each: enough
// that the daemon is often half-way through sending or receiving one when
// the kill lands.
#define CONNS 8
#define INFLIGHT 4

static fftd_test_daemon  D;
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// FX: each test has a daemon of its own, D with the client C (started and
// stopped around it): a wedged listener must not fail the tests after it.
static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.per_test   = 1,
};

// ipc_path returns the file system path of an ipc:// URL.
static const char *
ipc_path(const char *url)
{
	return strncmp(url, "ipc://", 6) == 0 ? url + 6 : url;
}

// raw_connect connects a plain Unix stream socket to the daemon's ipc path,
// writes len bytes of hello (may be 0), and closes it.
static int
raw_connect(const char *url, const void *hello, size_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -1;
	}
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family    = AF_UNIX;
	const char *path = ipc_path(url);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int rv = connect(fd, (struct sockaddr *) &sa, sizeof(sa));
	if (rv == 0 && len > 0 && write(fd, hello, len) != (ssize_t) len) {
		rv = -1;
	}
	close(fd);
	return rv;
}

// new_client_pings opens a new client (a new connection: the listener must
// accept it) and pings once; returns the first error or FFTD_OK.
static int
new_client_pings(void)
{
	fftd_client *c;
	int          rv = fftd_client_open(&c, D.url, 5000);
	if (rv != FFTD_OK) {
		print_error("open after the fault: %s (%s)\n",
		    fftd_err_name(rv), fftd_last_error());
		return rv;
	}
	rv = fftd_ping(c, NULL);
	fftd_client_close(c);
	return rv;
}

// hammer URL: CONNS client connections in one process, each sending 4 MiB
// executions inline, INFLIGHT at once, until the process is killed: one kill
// then cuts CONNS connections in the middle of their transfers. Exit codes:
// 101.. set-up failures.
static int
role_hammer(int argc, char **argv)
{
	if (argc < 1) {
		return 100;
	}
	// Through the socket, not libfftd's shared-memory staging: the kill
	// must land with NNG transfers half done.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	fftd_plan *p[CONNS];
	for (int k = 0; k < CONNS; k++) {
		fftd_client   *c;
		int64_t        n[1] = { N };
		fftd_plan_desc d;
		if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
			return 101;
		}
		fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F32);
		d.batch = BATCH;
		if (fftd_plan_create(c, &d, &p[k]) != FFTD_OK) {
			return 102;
		}
	}
	size_t bytes = fftd_plan_input_bytes(p[0]);
	float *in    = malloc(bytes);
	float *out   = malloc(bytes * CONNS * INFLIGHT);
	if (in == NULL || out == NULL) {
		return 103;
	}
	for (size_t i = 0; i < bytes / sizeof(float); i++) {
		in[i] = (float) (i % 17) - 8.0f;
	}
	for (;;) {
		fftd_request *r[CONNS * INFLIGHT];
		for (int i = 0; i < CONNS * INFLIGHT; i++) {
			if (fftd_execute_async(p[i % CONNS], in,
			        (char *) out + (size_t) i * bytes, NULL, NULL,
			        &r[i])
			    != FFTD_OK) {
				return 104;
			}
		}
		for (int i = 0; i < CONNS * INFLIGHT; i++) {
			fftd_request_wait(r[i]);
		}
	}
}

static const fftd_test_role roles[] = {
	{ "hammer", role_hammer },
	{ NULL, NULL },
};

// --- the listener
// ---------------------------------------------------------------

static void
test_connect_and_close(void **state)
{
	(void) state;
	for (int i = 0; i < 10; i++) {
		assert_int_equal(raw_connect(D.url, NULL, 0), 0);
		fftd_test_sleep_ms(50); // let the daemon see the hang-up
		assert_int_equal(new_client_pings(), FFTD_OK);
	}
}

static void
test_hang_up_mid_header(void **state)
{
	(void) state;
	// The first half of an SP header (REQ0 would send 00 'S' 'P' 00 ...).
	static const unsigned char half[] = { 0x00, 'S', 'P', 0x00 };
	for (int i = 0; i < 10; i++) {
		assert_int_equal(raw_connect(D.url, half, sizeof(half)), 0);
		fftd_test_sleep_ms(50);
		assert_int_equal(new_client_pings(), FFTD_OK);
	}
}

static void
test_second_daemon_probe(void **state)
{
	(void) state;
	// A second daemon on the same address refuses to start (its probe
	// connects and closes)...
	const char *args[] = { "--listen", D.url, "--backend", "fftw",
		"--log-level", "warn", NULL };
	char        out[4096];
	for (int i = 0; i < 6; i++) {
		int st = fftd_test_daemon_run(args, 20000, out, sizeof(out));
		assert_int_not_equal(st, 0);
		assert_int_not_equal(st, -1);
		if (strstr(out, "in use") == NULL) {
			fail_msg("second daemon: status %d, said: %s", st, out);
		}
		// ...and the first one still accepts clients.
		assert_int_equal(new_client_pings(), FFTD_OK);
	}
	assert_true(fftd_test_daemon_alive(&D));
}

// --- clients killed with large inline requests in flight
// ------------------------

static void
test_killed_clients_released(void **state)
{
	(void) state;
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 5000), 0);
	int fds0 = fftd_test_open_fds_steady(D.pid);
	assert_true(fds0 > 0);
	unsigned    seed   = (unsigned) fftd_test_seed();
	const char *args[] = { D.url, NULL };
	fftd_stats  st0, st1;
	assert_int_equal(fftd_get_stats(C, &st0), FFTD_OK);
	for (int r = 0; r < ROUNDS; r++) {
		pid_t pids[PER_ROUND];
		for (int i = 0; i < PER_ROUND; i++) {
			pids[i] = fftd_test_spawn("hammer", args);
			assert_true(pids[i] > 0);
		}
		// Let them connect, plan and get requests moving; kill at a
		// random point of the transfers.
		fftd_test_sleep_ms(150 + (int) (rand_r(&seed) % 150));
		for (int i = 0; i < PER_ROUND; i++) {
			int ws;
			kill(pids[i], SIGKILL);
			assert_int_equal(waitpid(pids[i], &ws, 0), pids[i]);
			// Killed, not failed on its own (a set-up failure would
			// make this test pass without testing anything).
			if (!(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL)) {
				fail_msg("hammer %d of round %d: status %d", i,
				    r, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
			}
		}
	}
	// The hammers did send inline requests before they died.
	assert_int_equal(fftd_get_stats(C, &st1), FFTD_OK);
	assert_true(
	    st1.bytes_in >= st0.bytes_in + (uint64_t) ROUNDS * N * BATCH * 8);
	// Every killed client's sessions and plans go; the daemon's
	// descriptors return to their level (the connections are closed).
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 15000), 0);
	int       fds   = fftd_test_open_fds(D.pid);
	long long until = fftd__mono_ms() + 5000;
	while (fds > fds0 && fftd__mono_ms() < until) {
		fftd_test_sleep_ms(20);
		fds = fftd_test_open_fds(D.pid);
	}
	// At most the level: a descriptor open for a moment when fds0 was
	// taken (a connection being set up) may be gone since.
	print_message("daemon descriptors: %d before, %d after\n", fds0, fds);
	assert_true(fds <= fds0);
	// New clients are still served.
	assert_int_equal(new_client_pings(), FFTD_OK);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_and_close,
		    fftd_test_setup, fftd_test_teardown),
		cmocka_unit_test_setup_teardown(test_hang_up_mid_header,
		    fftd_test_setup, fftd_test_teardown),
		cmocka_unit_test_setup_teardown(test_second_daemon_probe,
		    fftd_test_setup, fftd_test_teardown),
		cmocka_unit_test_setup_teardown(test_killed_clients_released,
		    fftd_test_setup, fftd_test_teardown),
	};
	return fftd_test_run_group("peer_faults", tests, &FX);
}

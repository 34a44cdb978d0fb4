// SPDX-License-Identifier: MIT
//
// test_shm_lifetime.c — the lifetime of shared buffers, the per-client
// limit and tcp://, against a real `fftd --backend fftw`:
//   - lifetime: a client SIGKILLed while holding three 8 MiB buffers and a
//     stream, a buffer destroyed, a client closed with buffers: within 10 s
//     the daemon maps none of those memfds, its descriptor count and
//     session count are back to where they were, and it still serves;
//   - [limits] max_buffer_bytes is enforced per connection (FFTD_ELIMIT),
//     and a destroyed or refused buffer gives its bytes back;
//   - fftd_buffer_create over tcp:// is FFTD_EUNSUPPORTED (and the daemon
//     refuses a BufferRegister on a tcp pipe itself).
//
// Each of the test_shm_* programs (bits, streams, raw, lifetime) runs
// against its own shared daemon and ends with its clean exit: it maps no
// buffer, holds one session, and exits 0 on SIGTERM (under ASan: no
// leaks). What they share is tests/util/shm_raw.c's (the raw protocol's
// buffer requests, the reference check).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../util/client_cases.h"
#include "../util/check.h"
#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/ref.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "fftd.h"
#include "layout.h"
#include "../util/shm_raw.h"
#include "wire.h"

#define TIMEOUT_MS 60000
#define SETTLE_MS 10000 // how long the daemon may take to let go

static fftd_test_daemon D; // the shared daemon (fftw backend, defaults)
static fftd_test_daemon
    L; // a test's own daemon (stopped by fftd_test_local_teardown)
static fftd_client      *C; // the tests' client of D
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// FX: the shared daemon D (fftw backend, defaults) with the client C; L is
// a test's own.
static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.local      = &L,
};

// --- 4. lifetime
// ------------------------------------------------------------------------------

#define HOLD_BYTES (8u << 20)

// holder URL FD: three 8 MiB buffers and a stream with two executions
// submitted; says 'R' on FD, then waits to be killed.
static int
role_holder(int argc, char **argv)
{
	if (argc < 2) {
		return 100;
	}
	int          fd = atoi(argv[1]);
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
		return 101;
	}
	fftd_buffer *b[3];
	for (int i = 0; i < 3; i++) {
		if (fftd_buffer_create(c, HOLD_BYTES, &b[i]) != FFTD_OK) {
			return 102;
		}
		memset(fftd_buffer_data(b[i]), i + 1, HOLD_BYTES);
	}
	fftd_plan_desc d;
	int64_t        n = 4096;
	fftd_plan     *p;
	fftd_stream   *st;
	fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32);
	d.batch = 16;
	if (fftd_plan_create(c, &d, &p) != FFTD_OK
	    || fftd_stream_open(p, 2, &st) != FFTD_OK) {
		return 103;
	}
	for (int i = 0; i < 2; i++) {
		memset(fftd_stream_input(st), 0, fftd_plan_input_bytes(p));
		if (fftd_stream_submit(st, NULL) != FFTD_OK) {
			return 104;
		}
	}
	if (write(fd, "R", 1) != 1) {
		return 105;
	}
	for (;;) {
		pause();
	}
}

// run_through_buffer checks that c's daemon still serves a transform
// through a fresh shared buffer.
static int
run_through_buffer(fftd_client *c)
{
	fftd_plan_desc d;
	int64_t        n = 100;
	fftd__shape    s;
	char           msg[256];
	fftd_plan     *p   = NULL;
	fftd_buffer   *b   = NULL;
	int            bad = 0;
	fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64);
	d.batch = 3;
	if (fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)) != FFTD_OK
	    || fftd_plan_create(c, &d, &p) != FFTD_OK
	    || fftd_buffer_create(c, 65536, &b) != FFTD_OK) {
		print_error("no plan or buffer: %s\n", fftd_last_error());
		fftd_plan_destroy(p);
		return 1;
	}
	uint8_t *in = fftd_buffer_data(b), *out = in + 32768;
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(4242));
	fftd_ref_poison(out, (size_t) s.out.bytes);
	int          st  = fftd_execute(p, in, out);
	long double *ref = fftd_ref_transform(&s, in);
	if (st != FFTD_OK || ref == NULL
	    || fftd_test_check_vs_ref(&s, out, ref, msg, sizeof(msg))) {
		print_error("transform through a buffer: %s %s\n",
		    fftd_err_name(st), msg);
		bad = 1;
	}
	free(ref);
	fftd_buffer_destroy(b);
	fftd_plan_destroy(p);
	return bad;
}

// wait_idle waits until the shared daemon holds only C's session and maps
// no buffer, the state every test of D starts from: a baseline taken
// earlier can count a connection that is still closing (the fixture's
// readiness probe, or an earlier test's client; CI's TSan build once saw
// 2 sessions where the test then counted 1 more than that baseline).
static void
wait_idle(void)
{
	assert_int_equal(
	    fftd_test_daemon_settles(D.pid, 0, -1, C, 1, SETTLE_MS), 0);
}

static void
test_killed_holder(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	wait_idle();
	fftd_stats s0;
	assert_int_equal(fftd_get_stats(C, &s0), FFTD_OK);
	int maps0 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME),
	    fds0  = fftd_test_open_fds_steady(D.pid);
	assert_true(maps0 >= 0);
	assert_true(fds0 > 0);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char fdarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	const char *args[] = { D.url, fdarg, NULL };
	pid_t       pid    = fftd_test_spawn("holder", args);
	assert_true(pid > 0);
	close(fds[1]);
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	char          ch  = 0;
	int ready = poll(&pfd, 1, 30000) == 1 && read(fds[0], &ch, 1) == 1
	    && ch == 'R';
	close(fds[0]);
	int        maps1 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME);
	int        alive = kill(pid, 0) == 0;
	fftd_stats s1;
	int        srv = fftd_get_stats(C, &s1);
	kill(pid, SIGKILL);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(ready);
	assert_true(alive);
	assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
	// While it lived the daemon mapped its three buffers and its stream's.
	if (maps1 != maps0 + 4) {
		print_error(
		    "daemon maps %d libfftd memfds with the holder alive, want "
		    "%d\n",
		    maps1, maps0 + 4);
	}
	assert_int_equal(maps1, maps0 + 4);
	assert_int_equal(srv, FFTD_OK);
	assert_int_equal(s1.sessions, s0.sessions + 1);
	// Then it lets go of all of it.
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(run_through_buffer(C), 0);
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
}

static void
test_destroy_and_close(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	wait_idle();
	fftd_stats s0;
	assert_int_equal(fftd_get_stats(C, &s0), FFTD_OK);
	int maps0 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME),
	    fds0  = fftd_test_open_fds_steady(D.pid);
	int own0  = fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME);
	assert_true(maps0 >= 0 && fds0 > 0 && own0 >= 0);
	fftd_client *c;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	fftd_buffer *b[3];
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_buffer_create(c, HOLD_BYTES, &b[i]));
		memset(fftd_buffer_data(b[i]), 0x33, HOLD_BYTES);
	}
	assert_int_equal(
	    fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME), maps0 + 3);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0 + 3);
	// A normal destroy unmaps it on both sides.
	fftd_buffer_destroy(b[1]);
	assert_int_equal(fftd_test_daemon_settles(D.pid, maps0 + 2, -1, C,
	                     s0.sessions + 1, SETTLE_MS),
	    0);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0 + 2);
	// Closing the client with two buffers still held releases them in
	// the daemon, and the connection's descriptor.
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
	// The handles are still released here, as plans are after a close.
	fftd_buffer_destroy(b[0]);
	fftd_buffer_destroy(b[2]);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(run_through_buffer(C), 0);
}

// --- 5. the per-client buffer limit
// ----------------------------------------------------------

static void
test_buffer_limit(void **state)
{
	(void) state;
	static const char conf[]
	    = "# test_shm: a 1 MiB shared-memory allowance\n"
	      "[limits]\n"
	      "max_buffer_bytes = 1M\n";
	fftd_test_daemon *d = &L;
	assert_int_equal(fftd_test_daemon_start(d, conf, DAEMON_ARGS), 0);
	fftd_client *c, *c2;
	ASSERT_OK(fftd_client_open(&c, d->url, TIMEOUT_MS));
	fftd_buffer *b1, *b2, *b3, *x;
	assert_int_equal(fftd_buffer_create(c, 2u << 20, &x), FFTD_ELIMIT);
	assert_true(fftd_last_error()[0] != '\0');
	assert_int_equal(
	    fftd_buffer_create(c, (1u << 20) + 1, &x), FFTD_ELIMIT);
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b1));
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b2)); // = limit
	assert_int_equal(fftd_buffer_create(c, 1, &x), FFTD_ELIMIT);
	fftd_plan_desc pd;
	int64_t        n = 1024;
	fftd_plan     *p;
	fftd_stream   *st;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F64), 0);
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	assert_int_equal(fftd_stream_open(p, 1, &st), FFTD_ELIMIT);
	// The allowance is per connection.
	ASSERT_OK(fftd_client_open(&c2, d->url, TIMEOUT_MS));
	ASSERT_OK(fftd_buffer_create(c2, 1u << 20, &x));
	fftd_buffer_destroy(x);
	fftd_client_close(c2);
	// Destroying gives the bytes back.
	fftd_buffer_destroy(b1);
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b3));
	assert_int_equal(fftd_buffer_create(c, 1, &x), FFTD_ELIMIT);
	fftd__shape s;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	uint8_t *in = fftd_buffer_data(b2), *out = fftd_buffer_data(b3);
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(31));
	fftd_ref_poison(out, (size_t) s.out.bytes);
	assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	int rc = fftd_test_check_vs_ref(&s, out, ref, msg, sizeof(msg));
	free(ref);
	assert_int_equal(rc, 0);
	fftd_buffer_destroy(b2);
	fftd_buffer_destroy(b3);
	ASSERT_OK(fftd_buffer_create(c, 1u << 20, &x));
	fftd_buffer_destroy(x);
	ASSERT_OK(fftd_stream_open(p, 4, &st)); // 4 x 32 KiB
	fftd_stream_close(st);

	// Over the raw protocol: a refused hand-over gives its bytes back.
	nng_socket rs;
	fftd_test_raw_connect(&rs, d->url);
	uint8_t tok[16], req[24];
	char    path[128];
	int     bad = 0;
	// A pending token's bytes are promised: nothing more fits.
	assert_int_equal(
	    fftd_test_raw_register(rs, 1u << 20, tok, path, sizeof(path)),
	    FFTD_OK);
	assert_int_equal(
	    fftd_test_raw_register(rs, 4096, tok, path, sizeof(path)),
	    FFTD_ELIMIT);
	nng_close(rs);
	fftd_test_raw_connect(&rs, d->url);
	assert_int_equal(
	    fftd_test_raw_register(rs, 1u << 20, tok, path, sizeof(path)),
	    FFTD_OK);
	int loose = fftd_test_make_memfd(FFTD_TEST_RAW_MEMFD, 1u << 20, 0);
	assert_true(loose >= 0);
	fftd_test_fd_request(req, tok, 1u << 20);
	fftd_test_fd_expect(
	    "unsealed memfd", path, req, 24, &loose, 1, 0, FFTD_EINVAL, &bad);
	close(loose);
	assert_int_equal(
	    fftd_test_raw_register(rs, 1u << 20, tok, path, sizeof(path)),
	    FFTD_OK);
	int sealed = fftd_test_make_memfd(
	    FFTD_TEST_RAW_MEMFD, 1u << 20, F_SEAL_SHRINK);
	assert_true(sealed >= 0);
	fftd_test_fd_request(req, tok, 1u << 20);
	uint64_t id = fftd_test_fd_expect(
	    "sealed memfd", path, req, 24, &sealed, 1, 0, FFTD_OK, &bad);
	close(sealed);
	assert_int_equal(
	    fftd_test_raw_register(rs, 4096, tok, path, sizeof(path)),
	    FFTD_ELIMIT);
	assert_int_equal(fftd_test_raw_release(rs, id), FFTD_OK);
	assert_int_equal(
	    fftd_test_raw_register(rs, 1u << 20, tok, path, sizeof(path)),
	    FFTD_OK);
	nng_close(rs);
	fftd_plan_destroy(p);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
	assert_int_equal(bad, 0);
}

// --- 6. tcp://
// --------------------------------------------------------------------------------

// free_port returns a TCP port on 127.0.0.1 that was free a moment ago.
static int
free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		return -1;
	}
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr    = htonl(INADDR_LOOPBACK);
	socklen_t len        = sizeof(a);
	int       port       = -1;
	if (bind(s, (struct sockaddr *) &a, sizeof(a)) == 0
	    && getsockname(s, (struct sockaddr *) &a, &len) == 0) {
		port = ntohs(a.sin_port);
	}
	close(s);
	return port;
}

static void
test_tcp_unsupported(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L;
	char              url[64];
	int               started = -1;
	for (int tries = 0; tries < 3 && started != 0; tries++) {
		int port = free_port();
		assert_true(port > 0);
		snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
		const char *args[] = { "--backend", "fftw", "--log-level",
			"info", "--listen", url, NULL };
		started            = fftd_test_daemon_start(
		               d, "[remote]\nallow_insecure = yes\n", args);
	}
	assert_int_equal(started, 0);
	fftd_client *c;
	ASSERT_OK(fftd_client_open(&c, url, TIMEOUT_MS));
	fftd_buffer *b = NULL;
	assert_int_equal(fftd_buffer_create(c, 4096, &b), FFTD_EUNSUPPORTED);
	assert_true(fftd_last_error()[0] != '\0');
	assert_null(b);
	fftd_plan_desc pd;
	int64_t        n = 64;
	fftd_plan     *p;
	fftd_stream   *st = NULL;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F32), 0);
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	assert_int_equal(fftd_stream_open(p, 2, &st), FFTD_EUNSUPPORTED);
	assert_null(st);
	fftd_plan_destroy(p);
	// Inline transforms over tcp:// still work.
	fftd_test_case tc;
	memset(&tc, 0, sizeof(tc));
	snprintf(tc.name, sizeof(tc.name), "c2c f32 64 over tcp");
	tc.desc = pd;
	assert_int_equal(
	    fftd_test_run_case(c, &tc, fftd_test_case_seed(64)), 0);
	// The daemon itself refuses shared memory on a tcp pipe.
	nng_socket rs;
	fftd_test_raw_connect(&rs, url);
	uint8_t tok[16];
	char    path[128];
	int     rv = fftd_test_raw_register(rs, 4096, tok, path, sizeof(path));
	nng_close(rs);
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	// The same daemon's ipc:// socket offers it.
	fftd_client *ci;
	ASSERT_OK(fftd_client_open(&ci, d->url, TIMEOUT_MS));
	ASSERT_OK(fftd_buffer_create(ci, 4096, &b));
	fftd_buffer_destroy(b);
	fftd_client_close(ci);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
}

// The shared daemon, after everything above, maps no buffer, holds one
// session, and exits 0 on SIGTERM (under ASan: no leaks).
static void
test_shared_daemon_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_int_equal(fftd_test_daemon_settles(D.pid, 0, -1, C, 1, 5000), 0);
	assert_int_equal(fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

static const fftd_test_role roles[] = {
	{ "holder", role_holder },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	// libfftd stages large inline arrays through shared buffers of its
	// own; keep the inline path inline, so that it is the reference.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_killed_holder),
		cmocka_unit_test(test_destroy_and_close),
		cmocka_unit_test_teardown(
		    test_buffer_limit, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_tcp_unsupported, fftd_test_local_teardown),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("shm_lifetime", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_shm_raw.c — shared buffers isolated between connections, their raw
// protocol and the descriptor socket, against a real `fftd --backend fftw`:
//   - isolation: another connection naming buffer ids 1..64 (three of them
//     another client's) in Execute or BufferRelease gets FFTD_EINVAL and
//     changes none of that client's bytes; over the raw protocol, offsets
//     and lengths out of range, misaligned offsets, input both in a buffer
//     and inline, and the descriptor socket's refusals (unsealed memfd,
//     wrong byte count, too small a file, not a file, unknown token,
//     another process's send, no fd, two fds, a short request) each get
//     their exact status, and the daemon leaks no descriptor.
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

// fdsend PATH TOKENHEX BYTES: hand a sealed memfd over with someone else's
// token; exits with 10 + the answer's status (2: no answer).
static int
role_fdsend(int argc, char **argv)
{
	if (argc < 3 || strlen(argv[1]) != 32) {
		return 100;
	}
	uint8_t token[16], req[24];
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(argv[1] + 2 * i, "%2x", &v) != 1) {
			return 101;
		}
		token[i] = (uint8_t) v;
	}
	uint64_t bytes = strtoull(argv[2], NULL, 0);
	int      fd    = fftd_test_make_memfd(
	            FFTD_TEST_RAW_MEMFD, (size_t) bytes, F_SEAL_SHRINK);
	if (fd < 0) {
		return 102;
	}
	fftd_test_fd_request(req, token, bytes);
	fftd_test_fd_reply rep;
	int                rv
	    = fftd_test_fd_handover(argv[0], req, sizeof(req), &fd, 1, 0, &rep);
	close(fd);
	if (rv != 0) {
		return 2;
	}
	return 10 + (rep.status >= 0 && rep.status < 100 ? rep.status : 99);
}

// --- 3. isolation between connections
// ------------------------------------------------------

static void
test_isolation(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L; // fresh: buffer ids start at 1
	assert_int_equal(fftd_test_daemon_start(d, NULL, DAEMON_ARGS), 0);
	fftd_client *c1;
	ASSERT_OK(fftd_client_open(&c1, d->url, TIMEOUT_MS));
	fftd_buffer *held[3];
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_buffer_create(c1, 65536, &held[i]));
		memset(fftd_buffer_data(held[i]), 0x5a + i, 65536);
	}
	nng_socket rs;
	fftd_test_raw_connect(&rs, d->url);
	fftd_plan_desc pd;
	int64_t        n16 = 16;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_C2C, FFTD_F64), 0);
	uint64_t ib, ob;
	uint64_t plan = fftd_test_raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 256);
	int bad = 0;
	for (uint64_t id = 1; id <= 64; id++) {
		char what[96];
		snprintf(what, sizeof(what),
		    "another connection's in_buffer %llu",
		    (unsigned long long) id);
		bad += fftd_test_exec_expect(
		    what, rs, plan, id, 0, 0, 0, 0, FFTD_EINVAL, 0);
		snprintf(what, sizeof(what),
		    "another connection's out_buffer %llu",
		    (unsigned long long) id);
		bad += fftd_test_exec_expect(
		    what, rs, plan, 0, 0, id, 0, 256, FFTD_EINVAL, 0);
		snprintf(what, sizeof(what),
		    "another connection's buffer %llu both "
		    "ways",
		    (unsigned long long) id);
		bad += fftd_test_exec_expect(
		    what, rs, plan, id, 0, id, 256, 0, FFTD_EINVAL, 0);
		int st = fftd_test_raw_release(rs, id);
		if (st != FFTD_EINVAL) {
			print_error("BufferRelease of buffer %llu of another "
			            "connection: "
			            "%d, want FFTD_EINVAL\n",
			    (unsigned long long) id, st);
			bad++;
		}
	}
	// Not a byte of the first client's buffers changed, and they are
	// still its own to use.
	for (int i = 0; i < 3; i++) {
		const uint8_t *p = fftd_buffer_data(held[i]);
		for (size_t k = 0; k < 65536; k++) {
			if (p[k] != (uint8_t) (0x5a + i)) {
				print_error(
				    "buffer %d changed at byte %zu\n", i, k);
				bad++;
				break;
			}
		}
	}
	fftd_plan  *p1;
	fftd__shape s;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	ASSERT_OK(fftd_plan_create(c1, &pd, &p1));
	uint8_t *in  = fftd_buffer_data(held[0]),
	        *out = fftd_buffer_data(held[2]);
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(77));
	fftd_ref_poison(out, 256);
	assert_int_equal(fftd_execute(p1, in, out), FFTD_OK);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	if (fftd_test_check_vs_ref(&s, out, ref, msg, sizeof(msg))) {
		print_error(
		    "the owner's execution through its buffers: %s\n", msg);
		bad++;
	}
	free(ref);
	// The raw connection's own first buffer gets id 4: ids 1..3 were
	// the other client's, and all of them were refused above.
	uint8_t tok[16], req[24];
	char    path[128];
	assert_int_equal(
	    fftd_test_raw_register(rs, 4096, tok, path, sizeof(path)), FFTD_OK);
	int fd = fftd_test_make_memfd(FFTD_TEST_RAW_MEMFD, 4096, F_SEAL_SHRINK);
	assert_true(fd >= 0);
	fftd_test_fd_request(req, tok, 4096);
	uint64_t own = fftd_test_fd_expect(
	    "own buffer", path, req, 24, &fd, 1, 0, FFTD_OK, &bad);
	close(fd);
	assert_int_equal(own, 4);
	bad += fftd_test_exec_expect(
	    "own buffer, both ways", rs, plan, own, 0, own, 256, 0, FFTD_OK, 0);
	nng_close(rs);
	fftd_plan_destroy(p1);
	for (int i = 0; i < 3; i++) {
		fftd_buffer_destroy(held[i]);
	}
	fftd_client_close(c1);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
	assert_int_equal(bad, 0);
}

// --- 3b. the raw protocol: ranges, alignment, the descriptor socket
// ------------------------

static void
test_raw_buffers(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const size_t SZ   = 65536;
	int          fds0 = fftd_test_open_fds_steady(D.pid);
	int rawmaps0      = fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD);
	assert_true(fds0 > 0);
	assert_int_equal(rawmaps0, 0);
	nng_socket rs;
	fftd_test_raw_connect(&rs, D.url);
	fftd_plan_desc pd;
	int64_t        n16 = 16, n8k = 8192;
	uint64_t       ib, ob;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_C2C, FFTD_F64), 0);
	uint64_t p16 = fftd_test_raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 256);
	assert_int_equal(ob, 256);
	fftd__shape s16;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s16, msg, sizeof(msg)), FFTD_OK);
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n8k, FFTD_C2C, FFTD_F64), 0);
	uint64_t pbig = fftd_test_raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 131072); // more than the whole buffer
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_R2C, FFTD_F32), 0);
	uint64_t pr2c = fftd_test_raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 64); // 16 f32 reals, 4 bytes each
	assert_int_equal(ob, 72); // 9 f32 complex, 8 bytes each

	int     bad = 0;
	uint8_t tok[16], req[24];
	char    path[128];
	// A well-formed registration, as libfftd does it.
	assert_int_equal(
	    fftd_test_raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	int fd = fftd_test_make_memfd(
	    FFTD_TEST_RAW_MEMFD, SZ, F_SEAL_SHRINK | F_SEAL_GROW);
	assert_true(fd >= 0);
	uint8_t *mem
	    = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	fftd_test_fd_request(req, tok, SZ);
	uint64_t A = fftd_test_fd_expect(
	    "sealed memfd", path, req, 24, &fd, 1, 0, FFTD_OK, &bad);
	assert_true(A != 0);
	assert_int_equal(fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD), 1);
	fftd_test_fd_expect("the same token again", path, req, 24, &fd, 1, 0,
	    FFTD_EINVAL, &bad);
	close(fd);

	// Executions on it: the daemon works in our pages.
	fftd_ref_fill_input(mem, &s16, fftd_test_case_seed(900));
	long double *ref = fftd_ref_transform(&s16, mem);
	assert_non_null(ref);
	fftd_ref_poison(mem + 256, SZ - 256);
	bad += fftd_test_exec_expect(
	    "in and out in the buffer", rs, p16, A, 0, A, 256, 0, FFTD_OK, 0);
	if (fftd_test_check_vs_ref(&s16, mem + 256, ref, msg, sizeof(msg))) {
		print_error("raw buffer result: %s\n", msg);
		bad++;
	}
	for (size_t k = 512; k < SZ; k++) {
		if (mem[k] != 0xFF) {
			print_error(
			    "raw buffer: byte %zu past the output changed\n",
			    k);
			bad++;
			break;
		}
	}
	bad += fftd_test_exec_expect(
	    "in place in the buffer", rs, p16, A, 0, A, 0, 0, FFTD_OK, 0);
	if (fftd_test_check_vs_ref(&s16, mem, ref, msg, sizeof(msg))) {
		print_error("raw buffer in place: %s\n", msg);
		bad++;
	}
	free(ref);
	// In and out overlapping, neither equal nor apart: the input is read
	// whole before the output is written.
	fftd_ref_fill_input(mem, &s16, fftd_test_case_seed(901));
	ref = fftd_ref_transform(&s16, mem);
	assert_non_null(ref);
	bad += fftd_test_exec_expect(
	    "in and out overlapping", rs, p16, A, 0, A, 128, 0, FFTD_OK, 0);
	if (fftd_test_check_vs_ref(&s16, mem + 128, ref, msg, sizeof(msg))) {
		print_error("raw buffer, overlapping in and out: %s\n", msg);
		bad++;
	}
	free(ref);
	// Ranges of the input (plan input 256 bytes, elements of 16).
	bad += fftd_test_exec_expect(
	    "in at the very end", rs, p16, A, SZ - 256, 0, 0, 0, FFTD_OK, 256);
	bad += fftd_test_exec_expect(
	    "in at an element offset", rs, p16, A, 16, 0, 0, 0, FFTD_OK, 256);
	bad += fftd_test_exec_expect("in 16 bytes past the end", rs, p16, A,
	    SZ - 240, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "in at the buffer's size", rs, p16, A, SZ, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("in far past the end", rs, p16, A,
	    (uint64_t) 1 << 40, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("in offset 2^64 - 256", rs, p16, A,
	    UINT64_MAX - 255, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("in offset 2^64 - 1", rs, p16, A,
	    UINT64_MAX, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("in offset 8 (half an element)", rs, p16,
	    A, 8, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "in offset 1", rs, p16, A, 1, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("input in the buffer and inline", rs, p16,
	    A, 0, 0, 0, 256, FFTD_EPROTO, 0);
	bad += fftd_test_exec_expect("input in the buffer and 100 bytes inline",
	    rs, p16, A, 0, 0, 0, 100, FFTD_EPROTO, 0);
	bad += fftd_test_exec_expect(
	    "input in the buffer and inline, out in it too", rs, p16, A, 0, A,
	    256, 256, FFTD_EPROTO, 0);
	// Ranges of the output.
	bad += fftd_test_exec_expect(
	    "out at the very end", rs, p16, 0, 0, A, SZ - 256, 256, FFTD_OK, 0);
	bad += fftd_test_exec_expect("out 128 bytes past the end", rs, p16, 0,
	    0, A, SZ - 128, 256, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "out offset 24", rs, p16, 0, 0, A, 24, 256, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("out offset 2^64 - 128", rs, p16, 0, 0, A,
	    UINT64_MAX - 127, 256, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("out in the buffer, 100-byte inline input",
	    rs, p16, 0, 0, A, 0, 100, FFTD_ESIZE, 0);
	bad += fftd_test_exec_expect("in in the buffer, out in no buffer", rs,
	    p16, A, 0, A + 1000, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "in in no buffer", rs, p16, A + 1000, 0, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("unknown plan on a good buffer", rs,
	    0xdeadbeef, A, 0, A, 256, 0, FFTD_ENOPLAN, 0);
	// An array longer than the whole buffer.
	bad += fftd_test_exec_expect("128 KiB input in a 64 KiB buffer", rs,
	    pbig, A, 0, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect("128 KiB output in a 64 KiB buffer", rs,
	    pbig, 0, 0, A, 0, 131072, FFTD_EINVAL, 0);
	// Element sizes per side: f32 reals in, f32 complex out.
	bad += fftd_test_exec_expect(
	    "r2c in offset 2", rs, pr2c, A, 2, 0, 0, 0, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "r2c in offset 4", rs, pr2c, A, 4, 0, 0, 0, FFTD_OK, 72);
	bad += fftd_test_exec_expect(
	    "r2c out offset 4", rs, pr2c, 0, 0, A, 4, 64, FFTD_EINVAL, 0);
	bad += fftd_test_exec_expect(
	    "r2c out offset 8", rs, pr2c, 0, 0, A, 8, 64, FFTD_OK, 0);
	bad += fftd_test_exec_expect(
	    "r2c in 4 + out 1000", rs, pr2c, A, 4, A, 1000, 0, FFTD_OK, 0);

	// The descriptor socket's refusals.
	uint8_t unknown[16];
	for (int i = 0; i < 16; i++) {
		unknown[i] = (uint8_t) (i * 37 + 11);
	}
	int sealed
	    = fftd_test_make_memfd(FFTD_TEST_RAW_MEMFD, SZ, F_SEAL_SHRINK);
	int half
	    = fftd_test_make_memfd(FFTD_TEST_RAW_MEMFD, SZ / 2, F_SEAL_SHRINK);
	int loose = fftd_test_make_memfd(FFTD_TEST_RAW_MEMFD, SZ, 0);
	int pp[2];
	assert_true(sealed >= 0 && half >= 0 && loose >= 0);
	assert_int_equal(pipe(pp), 0);
	fftd_test_fd_request(req, unknown, SZ);
	fftd_test_fd_expect(
	    "unknown token", path, req, 24, &sealed, 1, 0, FFTD_EINVAL, &bad);
	fftd_test_fd_expect(
	    "no descriptor", path, req, 24, NULL, 0, 0, FFTD_EPROTO, &bad);
	int two[2] = { sealed, half };
	fftd_test_fd_expect(
	    "two descriptors", path, req, 24, two, 2, 0, FFTD_EPROTO, &bad);
	fftd_test_fd_expect("a 10-byte request", path, req, 10, &sealed, 1, 1,
	    FFTD_EPROTO, &bad);
	assert_int_equal(
	    fftd_test_raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fftd_test_fd_request(req, tok, SZ);
	fftd_test_fd_expect("memfd without F_SEAL_SHRINK", path, req, 24,
	    &loose, 1, 0, FFTD_EINVAL, &bad);
	fftd_test_fd_expect("its token, spent by the refusal", path, req, 24,
	    &sealed, 1, 0, FFTD_EINVAL, &bad);
	assert_int_equal(
	    fftd_test_raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fftd_test_fd_request(req, tok, SZ / 2);
	fftd_test_fd_expect(
	    "wrong byte count", path, req, 24, &half, 1, 0, FFTD_EINVAL, &bad);
	// Another process with this connection's token and the right count.
	{
		char hex[33], bytes[32];
		for (int i = 0; i < 16; i++) {
			snprintf(hex + 2 * i, 3, "%02x", tok[i]);
		}
		snprintf(bytes, sizeof(bytes), "%zu", SZ);
		const char *args[] = { path, hex, bytes, NULL };
		pid_t       pid    = fftd_test_spawn("fdsend", args);
		assert_true(pid > 0);
		int code = -1;
		fftd_test_wait_pids(&pid, 1, 20000, &code);
		if (code != 10 + FFTD_EINVAL) {
			print_error(
			    "another process's send with our token: exit %d, "
			    "want %d (FFTD_EINVAL)\n",
			    code, 10 + FFTD_EINVAL);
			bad++;
		}
	}
	assert_int_equal(
	    fftd_test_raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fftd_test_fd_request(req, tok, SZ);
	fftd_test_fd_expect("a memfd smaller than the count", path, req, 24,
	    &half, 1, 0, FFTD_EINVAL, &bad);
	assert_int_equal(
	    fftd_test_raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fftd_test_fd_request(req, tok, SZ);
	fftd_test_fd_expect(
	    "a pipe", path, req, 24, &pp[0], 1, 0, FFTD_EINVAL, &bad);
	close(sealed);
	close(half);
	close(loose);
	close(pp[0]);
	close(pp[1]);
	int st = fftd_test_raw_register(rs, 0, tok, path, sizeof(path));
	if (st != FFTD_EINVAL) {
		print_error(
		    "BufferRegister of 0 bytes: %d, want FFTD_EINVAL\n", st);
		bad++;
	}
	st = fftd_test_raw_register(
	    rs, (uint64_t) 1 << 62, tok, path, sizeof(path));
	if (st != FFTD_ELIMIT) {
		print_error(
		    "BufferRegister of 2^62 bytes: %d, want FFTD_ELIMIT\n", st);
		bad++;
	}
	// None of the refused descriptors stayed mapped.
	if (fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD) != 1) {
		print_error("daemon maps %d of our memfds, want 1\n",
		    fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD));
		bad++;
	}

	// Release: then the id is gone.
	assert_int_equal(fftd_test_raw_release(rs, A), FFTD_OK);
	assert_int_equal(fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD), 0);
	bad += fftd_test_exec_expect(
	    "a released buffer", rs, p16, A, 0, 0, 0, 0, FFTD_EINVAL, 0);
	assert_int_equal(fftd_test_raw_release(rs, A), FFTD_EINVAL);
	assert_int_equal(fftd_test_raw_release(rs, 0), FFTD_EINVAL);
	bad += fftd_test_exec_expect(
	    "inline after it all", rs, p16, 0, 0, 0, 0, 256, FFTD_OK, 256);
	nng_close(rs);
	munmap(mem, SZ);
	// The daemon kept no descriptor of all this, and still serves.
	assert_int_equal(
	    fftd_test_daemon_settles(D.pid, 0, fds0, C, 1, SETTLE_MS), 0);
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(bad, 0);
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
	{ "fdsend", role_fdsend },
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
		cmocka_unit_test_teardown(
		    test_isolation, fftd_test_local_teardown),
		cmocka_unit_test(test_raw_buffers),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("shm_raw", tests, &FX);
}

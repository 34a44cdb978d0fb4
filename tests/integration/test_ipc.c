// SPDX-License-Identifier: MIT
//
// test_ipc.c — CUDA IPC inputs (fftd_array_open_ipc, issue 16 item 2)
// without a GPU, against a real `fftd --backend fftw`: the refusals that
// need no GPU, each with its typed error and a message naming what is
// wrong, and the daemon serving on afterwards:
//   - the fftw backend maps no CUDA memory: FFTD_EUNSUPPORTED, and the
//     connection's array count is untouched (max_arrays_per_client);
//   - bad arguments, in libfftd (NULLs, handle_len, bytes 0, offset +
//     bytes overflowing, device below -1) and in the daemon on a raw
//     session (the same checks, and a device it does not serve:
//     FFTD_ENODEVICE), before the backend is asked;
//   - a connection over tcp:// (no peer credentials) is FFTD_EREFUSED,
//     naming ipc://, even though the backend could not map anyway;
//   - the call on a closed client is FFTD_ECLOSED;
//   - the fuzzer's seeds for ArrayOpenIpc (tests/fuzz/seeds.c builds the
//     same messages) are answered, each with its typed error.
// The mappings themselves, the uid policy's effect on a mapping and a
// killed client's cleanup need a GPU: tests/gpu/test_gpu_ipc.c.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/shm_raw.h"
#include "fftd.h"
#include "wire.h"

#define TIMEOUT_MS 60000

static fftd_test_daemon  D; // the shared daemon (fftw backend, 3 arrays)
static fftd_test_daemon  L; // a test's own (fftd_test_local_teardown)
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_fixture FX = {
	.daemon
	= { { &D, &C, "[limits]\nmax_arrays_per_client = 3\n", DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.local      = &L,
	.check_exit = 1, // the daemon exits 0: no crash, no leak (ASan)
};

// HANDLE is a handle-sized block of bytes: no daemon here can map it.
static uint8_t HANDLE[FFTD_IPC_HANDLE_SIZE];

// expect checks that rv is want and that the last error names `what`.
static void
expect(int rv, int want, const char *what)
{
	printf("  %s: %s\n", fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, want);
	if (what != NULL) {
		assert_non_null(strstr(fftd_last_error(), what));
	}
}

// test_unsupported: the fftw backend answers FFTD_EUNSUPPORTED, nothing
// is made, and the connection may still create its 3 arrays.
static void
test_unsupported(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_array *x = (fftd_array *) (uintptr_t) 1; // poisoned
	for (int i = 0; i < 5; i++) {
		expect(fftd_array_open_ipc(
		           C, -1, HANDLE, sizeof(HANDLE), 64, 4096, &x),
		    FFTD_EUNSUPPORTED, "fftw backend");
	}
	assert_ptr_equal(x, (fftd_array *) (uintptr_t) 1);
	fftd_array *a[3];
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_array_create(C, 0, 64, &a[i]));
	}
	for (int i = 0; i < 3; i++) {
		fftd_array_destroy(a[i]);
	}
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// test_bad_arguments: libfftd's own checks, before anything is sent.
static void
test_bad_arguments(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_array *x = NULL;
	expect(fftd_array_open_ipc(NULL, 0, HANDLE, 64, 0, 8, &x), FFTD_EINVAL,
	    NULL);
	expect(fftd_array_open_ipc(C, 0, NULL, 64, 0, 8, &x), FFTD_EINVAL,
	    "handle");
	expect(fftd_array_open_ipc(C, 0, HANDLE, 64, 0, 8, NULL), FFTD_EINVAL,
	    "arrp");
	expect(fftd_array_open_ipc(C, 0, HANDLE, 63, 0, 8, &x), FFTD_EINVAL,
	    "handle_len 63");
	expect(fftd_array_open_ipc(C, 0, HANDLE, 65, 0, 8, &x), FFTD_EINVAL,
	    "handle_len 65");
	expect(fftd_array_open_ipc(C, 0, HANDLE, 64, 0, 0, &x), FFTD_EINVAL,
	    "bytes 0");
	expect(fftd_array_open_ipc(C, 0, HANDLE, 64, SIZE_MAX, 2, &x),
	    FFTD_EINVAL, "overflow");
	expect(fftd_array_open_ipc(C, -2, HANDLE, 64, 0, 8, &x), FFTD_EINVAL,
	    "device -2");
	assert_null(x);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// raw_open_ipc sends an ArrayOpenIpc on raw session s and returns the
// reply's status, printing its message; the message must name `what`.
static int
raw_open_ipc(nng_socket s, int device, size_t handle_len, uint64_t offset,
    uint64_t bytes, const char *what)
{
	Fftd__Wire__Request      rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayOpenIpc oi = FFTD__WIRE__ARRAY_OPEN_IPC__INIT;
	uint8_t                  h[2 * FFTD_IPC_HANDLE_SIZE] = { 0 };
	oi.device                                            = device;
	oi.handle.data                                       = h;
	oi.handle.len                                        = handle_len;
	oi.offset                                            = offset;
	oi.bytes                                             = bytes;
	rq.body_case          = FFTD__WIRE__REQUEST__BODY_ARRAY_OPEN_IPC;
	rq.array_open_ipc     = &oi;
	Fftd__Wire__Reply *r  = NULL;
	int                rv = fftd_test_raw_request(s, &rq, NULL, 0, &r);
	assert_non_null(r);
	printf("  %s: %s\n", fftd_err_name(rv), r->message);
	if (what != NULL) {
		assert_non_null(strstr(r->message, what));
	}
	fftd__wire__reply__free_unpacked(r, NULL);
	return rv;
}

// test_daemon_checks: the daemon's checks on a raw session (what libfftd
// would not send), including the fuzzer's seeds, each its typed error
// before the backend is asked; then a good one reaches the backend.
static void
test_daemon_checks(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	nng_socket s;
	fftd_test_raw_connect(&s, D.url);
	assert_int_equal(
	    raw_open_ipc(s, 0, 63, 4096, 1 << 20, "63 bytes"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, 0, 0, 4096, 1 << 20, "0 bytes"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, 0, 128, 4096, 1 << 20, "128 bytes"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, 0, 64, 4096, 0, "bytes = 0"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, 0, 64, UINT64_MAX, 2, "overflows"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, -7, 64, 0, 8, "device = -7"), FFTD_EINVAL);
	assert_int_equal(
	    raw_open_ipc(s, FFTD_MAX_DEVICES, 64, 0, 8, "no such device"),
	    FFTD_ENODEVICE);
	assert_int_equal(raw_open_ipc(s, 0, 64, 4096, 1 << 20, "fftw backend"),
	    FFTD_EUNSUPPORTED);
	nng_close(s);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// free_port returns a TCP port on 127.0.0.1 that nobody listens on now.
static int
free_port(void)
{
	int                fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa;
	socklen_t          len = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family      = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0
	    || getsockname(fd, (struct sockaddr *) &sa, &len) != 0) {
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	close(fd);
	return ntohs(sa.sin_port);
}

// test_tcp_refused: over a loopback tcp:// listener the daemon knows no
// peer: FFTD_EREFUSED naming ipc://, while arrays of its own still work
// there; over its ipc:// listener the same daemon gets to the backend.
static void
test_tcp_refused(void **state)
{
	(void) state;
	int port = free_port();
	assert_true(port > 0);
	char url[64];
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	const char *const args[] = { "--backend", "fftw", "--log-level", "info",
		"--listen", url, NULL };
	assert_int_equal(fftd_test_daemon_start(
	                     &L, "[remote]\nallow_insecure = yes\n", args),
	    0);
	fftd_client *t, *i;
	ASSERT_OK(fftd_client_open(&t, url, TIMEOUT_MS));
	fftd_array *x = NULL, *a = NULL;
	expect(fftd_array_open_ipc(t, 0, HANDLE, sizeof(HANDLE), 0, 8, &x),
	    FFTD_EREFUSED, "CUDA IPC needs a local ipc:// connection");
	assert_null(x);
	ASSERT_OK(fftd_array_create(t, 0, 64, &a));
	fftd_array_destroy(a);
	ASSERT_OK(fftd_client_open(&i, L.url, TIMEOUT_MS));
	expect(fftd_array_open_ipc(i, 0, HANDLE, sizeof(HANDLE), 0, 8, &x),
	    FFTD_EUNSUPPORTED, "fftw backend");
	fftd_client_close(i);
	fftd_client_close(t);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// test_closed_client: the call on a client already closed (kept alive by
// an array it made) is FFTD_ECLOSED, sending nothing.
static void
test_closed_client(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_client *c;
	fftd_array  *a, *x = NULL;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	ASSERT_OK(fftd_array_create(c, 0, 64, &a));
	fftd_client_close(c);
	expect(fftd_array_open_ipc(c, 0, HANDLE, sizeof(HANDLE), 0, 8, &x),
	    FFTD_ECLOSED, "closed");
	assert_null(x);
	fftd_array_destroy(a);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(HANDLE); i++) {
		HANDLE[i] = (uint8_t) (0xA5 ^ i);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_daemon_checks),
		cmocka_unit_test_teardown(
		    test_tcp_refused, fftd_test_local_teardown),
		cmocka_unit_test(test_closed_client),
	};
	return fftd_test_run_group("ipc[fftw]", tests, &FX);
}

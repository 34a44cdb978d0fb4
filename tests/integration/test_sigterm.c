// SPDX-License-Identifier: MIT
//
// test_sigterm.c — further SIGTERMs while the daemon stops are ignored: a
// real `fftd --backend fftw` with executions queued (drain_timeout_ms = 0,
// so that the teardown itself waits for them) gets a SIGTERM, then one
// every 20 ms until it exits; it exits with status 0, logs the repeats, and
// its socket files are gone. (The signal handles used to be closed before
// the server was torn down, so a second SIGTERM then killed it: exit 143,
// sockets left behind.)

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/check.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "clock.h"
#include "fftd.h"

#define TIMEOUT_MS 30000
#define NREQ 12
#define N (1 << 20) // complex doubles: 16 MiB a request

static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_daemon D;

// FX: this program's tests start their own daemon, D (stopped by
// fftd_test_local_teardown if a failed assertion left it running).
static fftd_test_fixture FX = { .local = &D };

static void
test_repeated_sigterm(void **state)
{
	(void) state;
	static const char conf[] = "[server]\ndrain_timeout_ms = 0\n"
	                           "[backend]\nfftw_threads = 1\n";
	assert_int_equal(fftd_test_daemon_start(&D, conf, DAEMON_ARGS), 0);
	char sock[sizeof(D.url)], fdsock[sizeof(D.url) + 4];
	assert_true(snprintf(sock, sizeof(sock), "%s", D.url + strlen("ipc://"))
	    < (int) sizeof(sock));
	assert_true(snprintf(fdsock, sizeof(fdsock), "%s.fd", sock)
	    < (int) sizeof(fdsock));
	fftd_client   *c;
	fftd_plan     *p;
	fftd_plan_desc pd;
	int64_t        n = N;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	ASSERT_OK(fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F64));
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	size_t bytes = (size_t) N * 16;
	char  *in    = calloc(1, bytes);
	char  *out[NREQ];
	assert_non_null(in);
	fftd_request *req[NREQ];
	int           nreq = 0;
	for (int i = 0; i < NREQ; i++) {
		out[i] = malloc(bytes);
		assert_non_null(out[i]);
		if (fftd_execute_async(p, in, out[i], NULL, NULL, &req[i])
		    == FFTD_OK) {
			nreq++;
		}
	}
	assert_int_equal(nreq, NREQ);
	fftd_test_sleep_ms(200); // some taken in, queued on the worker
	assert_int_equal(fftd_test_daemon_signal(&D, SIGTERM), 0);
	long long end  = fftd__mono_ms() + 20000;
	int       sent = 1;
	while (fftd_test_daemon_alive(&D) && fftd__mono_ms() < end) {
		fftd_test_sleep_ms(20);
		if (kill(D.pid, SIGTERM) == 0) {
			sent++;
		}
	}
	print_message("%d SIGTERMs sent\n", sent);
	assert_true(sent >= 2);
	// Exited (reaped), and cleanly: no socket file left.
	assert_int_equal(fftd_test_daemon_alive(&D), 0);
	assert_int_equal(access(sock, F_OK), -1);
	assert_int_equal(access(fdsock, F_OK), -1);
	for (int i = 0; i < NREQ; i++) {
		(void) fftd_request_wait(req[i]); // answered or failed
		free(out[i]);
	}
	free(in);
	fftd_plan_destroy(p);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_wait(&D, 10000), 0);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_repeated_sigterm, fftd_test_local_teardown),
	};
	return fftd_test_run_group("sigterm", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_linger.c — a stopping daemon keeps answering. After SIGTERM the
// daemon drains its accepted work and then lingers (up to a second) while
// clients are still connected, so that the last answers are written out.
// A request that arrives in that linger must be answered FFTD_ESHUTDOWN at
// once, not left unanswered until its client times out (issue 14, defect
// 11).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "clock.h"
#include "fftd.h"

// The client's timeout: a request nobody answers fails after this long.
#define TIMEOUT_MS 4000

static fftd_test_daemon L;

// FX: this program's tests start their own daemon, L (stopped by
// fftd_test_local_teardown if a failed assertion left it running).
static fftd_test_fixture FX = { .local = &L };

// Pings sent after SIGTERM, while this client stays connected (so that the
// daemon lingers), are answered FFTD_ESHUTDOWN: the first one the daemon
// does not serve, and one sent 300 ms later, well inside the linger.
static void
test_requests_in_linger_answered(void **state)
{
	(void) state;
	static const char *const args[]
	    = { "--backend", "fftw", "--log-level", "info", NULL };
	assert_int_equal(fftd_test_daemon_start(&L, NULL, args), 0);
	fftd_client *c;
	assert_int_equal(fftd_client_open(&c, L.url, TIMEOUT_MS), FFTD_OK);
	assert_int_equal(fftd_ping(c, NULL), FFTD_OK);
	assert_int_equal(fftd_test_daemon_signal(&L, SIGTERM), 0);

	// Until the daemon has seen the signal, pings are served.
	int    st    = FFTD_OK;
	double took  = 0;
	double until = fftd__mono_ms() + 3000;
	while (st == FFTD_OK && fftd__mono_ms() < until) {
		double t0 = fftd__mono_ms();
		st        = fftd_ping(c, NULL);
		took      = fftd__mono_ms() - t0;
		if (st == FFTD_OK) {
			fftd_test_sleep_ms(10);
		}
	}
	if (st != FFTD_ESHUTDOWN) {
		print_error("first ping not served: %s after %.0f ms (%s)\n",
		    fftd_err_name(st), took, fftd_last_error());
	}
	assert_int_equal(st, FFTD_ESHUTDOWN);

	// Well inside the linger (1 s while a client is connected).
	fftd_test_sleep_ms(300);
	double t0 = fftd__mono_ms();
	st        = fftd_ping(c, NULL);
	took      = fftd__mono_ms() - t0;
	if (st != FFTD_ESHUTDOWN) {
		print_error("ping in the linger: %s after %.0f ms (%s)\n",
		    fftd_err_name(st), took, fftd_last_error());
	}
	assert_int_equal(st, FFTD_ESHUTDOWN);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_wait(&L, 10000), 0);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_requests_in_linger_answered, fftd_test_local_teardown),
	};
	return fftd_test_run_group("linger", tests, &FX);
}

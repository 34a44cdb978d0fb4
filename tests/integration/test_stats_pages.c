// SPDX-License-Identifier: MIT
//
// test_stats_pages.c — statistics of many clients. One reply holds at most
// 64 KiB of protobuf, about 850 clients' statistics; past that the daemon
// answered "daemon out of memory for the reply" (issue 14, defect 7). The
// per-client list now comes in pages that fftd_get_client_stats fetches
// one after another: with 1,100 connections it returns every one of them,
// each once, and a raw Stats request shows the paging on the wire.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../../bench/lib/raw.h"
#include "fftd.h"
#include "wire.h"

#define TIMEOUT_MS 30000
// Connections besides the test's own client: well past one reply's worth.
#define NCONN 1100

static fftd_test_daemon L;

// FX: this program's tests start their own daemon, L (stopped by
// fftd_test_local_teardown if a failed assertion left it running).
static fftd_test_fixture FX = { .local = &L };

static int
by_id(const void *a, const void *b)
{
	uint32_t x = ((const fftd_client_stats *) a)->id;
	uint32_t y = ((const fftd_client_stats *) b)->id;
	return x < y ? -1 : x > y;
}

// raise_nofile lifts the soft descriptor limit to the hard one, for this
// process and the daemon it starts (each connection is a descriptor on
// both sides).
static void
raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
test_stats_of_many_clients(void **state)
{
	(void) state;
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * NCONN + 256) {
		skip(); // the host does not allow this many descriptors
	}
	static const char *const args[]
	    = { "--backend", "fftw", "--log-level", "warn", NULL };
	assert_int_equal(fftd_test_daemon_start(&L,
	                     "[server]\ncontexts = "
	                     "64\n[limits]\nmax_connections_per_user = 2000\n",
	                     args),
	    0);
	nng_socket *socks = calloc(NCONN, sizeof(*socks));
	assert_non_null(socks);
	for (int i = 0; i < NCONN; i++) {
		int rv = fftd_test_raw_open(&socks[i], L.url, TIMEOUT_MS);
		if (rv != 0) {
			fail_msg("connection %d: %s", i, nng_strerror(rv));
		}
	}
	fftd_client *c;
	assert_int_equal(fftd_client_open(&c, L.url, TIMEOUT_MS), FFTD_OK);

	// The daemon sees the connections a moment after the dials return.
	fftd_stats st;
	for (int tries = 0; tries < 1000; tries++) {
		assert_int_equal(fftd_get_stats(c, &st), FFTD_OK);
		if (st.sessions == NCONN + 1) {
			break;
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(st.sessions, NCONN + 1);

	int                max = NCONN + 64, n = -1;
	fftd_client_stats *cl = calloc((size_t) max, sizeof(*cl));
	assert_non_null(cl);
	int rv = fftd_get_client_stats(c, cl, max, &n);
	if (rv != FFTD_OK) {
		fail_msg("fftd_get_client_stats: %s (%s)", fftd_err_name(rv),
		    fftd_last_error());
	}
	assert_int_equal(n, NCONN + 1);
	qsort(cl, (size_t) n, sizeof(*cl), by_id);
	int named = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && cl[i].id == cl[i - 1].id) {
			fail_msg("client %u listed twice", cl[i].id);
		}
		named += cl[i].name[0] != '\0';
	}
	assert_int_equal(named, 1); // only our client said its name

	// On the wire: a Stats request without paging fields (as an older
	// client sends) is answered with the first page, under the limit,
	// saying that more follow and how many there are.
	Fftd__Wire__Request      rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__StatsRequest sr = FFTD__WIRE__STATS_REQUEST__INIT;
	rq.body_case                = FFTD__WIRE__REQUEST__BODY_STATS;
	rq.stats                    = &sr;
	Fftd__Wire__Reply *r        = NULL;
	assert_int_equal(fftd_test_raw_request(socks[0], &rq, NULL, 0, &r), 0);
	assert_non_null(r->stats);
	assert_true(r->stats->n_clients > 0);
	assert_true(r->stats->n_clients < NCONN + 1);
	assert_true(r->stats->clients_more);
	assert_int_equal(r->stats->clients_total, NCONN + 1);
	fftd__wire__reply__free_unpacked(r, NULL);
	// A page of at most 5 after a given id starts past that id.
	sr.clients_after = cl[9].id;
	sr.clients_limit = 5;
	assert_int_equal(fftd_test_raw_request(socks[0], &rq, NULL, 0, &r), 0);
	assert_int_equal(r->stats->n_clients, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r->stats->clients[i]->id, cl[10 + i].id);
	}
	assert_true(r->stats->clients_more);
	fftd__wire__reply__free_unpacked(r, NULL);

	free(cl);
	for (int i = 0; i < NCONN; i++) {
		nng_close(socks[i]);
	}
	free(socks);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
		    test_stats_of_many_clients, fftd_test_local_teardown),
	};
	return fftd_test_run_group("stats_pages", tests, &FX);
}

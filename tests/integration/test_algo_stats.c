// SPDX-License-Identifier: MIT
//
// test_algo_stats.c — what accuracy-aware auto reports (issue 18 item 5)
// on the fftw backend, whose speed table fills when a plan with a
// tolerance is made (both fftw and fftw-f32 timed): the plans made per
// algorithm rise by exactly one per plan under the name the plan reports
// and nowhere else (fftw-f32 too, on a second daemon that prefers it); the
// speed table lists the measured candidates of a shape with its text, device 0
// and positive times, once however often the shape is planned; max below the
// count fills max entries and leaves the rest of out alone (poisoned bytes
// checked) while *n says all; the pages on the wire (a raw AlgoStats with a
// limit) give the same entries; bad arguments are FFTD_EINVAL; callers built
// with older, smaller structs get the fields they have at their own stride,
// larger ones zeros after; `fftctl info` prints the speed table and `fftctl
// stats` the counts. The paging of a full table is test_algo_stats's (unit).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/fixture.h"
#include "fftd.h"

#define TIMEOUT_MS 60000
#define POISON 0xA5

static fftd_test_daemon  D;
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };
static fftd_test_daemon  L; // test_counts_other_name's own daemon
static fftd_test_fixture FX = {
	.daemon     = { { .d = &D, .c = &C, .args = DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
	.local      = &L,
};

// make_plan plans a C2C of n points, batch 2, at precision p with
// tolerance tol (algorithm NULL: the daemon's choice) and returns it.
static fftd_plan *
make_plan(fftd_precision p, int64_t n, double tol, const char *algorithm)
{
	fftd_plan_desc d;
	fftd_plan     *plan = NULL;
	assert_int_equal(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, p), FFTD_OK);
	d.batch     = 2;
	d.tolerance = tol;
	d.algorithm = algorithm;
	int rv      = fftd_plan_create(C, &d, &plan);
	if (rv != FFTD_OK) {
		fail_msg("plan: %s (%s)", fftd_err_name(rv), fftd_last_error());
	}
	return plan;
}

// count_of is the plans counted under name in a[0..n), 0 when absent.
static uint64_t
count_of(const fftd_algorithm_stats *a, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(a[i].algorithm, name) == 0) {
			return a[i].plans;
		}
	}
	return 0;
}

// untouched says whether bytes [from, to) of p still hold the poison.
static bool
untouched(const void *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		if (((const unsigned char *) p)[i] != POISON) {
			return false;
		}
	}
	return true;
}

static void
test_counts_rise_by_one(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const struct {
		fftd_precision p;
		int64_t        n;
		double         tol;
		const char    *algorithm;
	} plans[] = {
		{ FFTD_F64, 4096, 1e-5, NULL },    // fftw or fftw-f32
		{ FFTD_F64, 4096, 0, NULL },       // fftw
		{ FFTD_F32, 512, 1e-3, NULL },     // fftw: nothing lower
		{ FFTD_F64, 700, 0, "fftw" },      // named
		{ FFTD_F64, 1 << 14, 1e-5, NULL }, // a new shape
	};
	fftd_algorithm_stats before[16], after[16];
	for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++) {
		int nb = -1, na = -1;
		assert_int_equal(
		    fftd_get_algorithm_stats(C, before, 16, &nb), FFTD_OK);
		fftd_plan *p = make_plan(
		    plans[k].p, plans[k].n, plans[k].tol, plans[k].algorithm);
		char name[16];
		snprintf(name, sizeof(name), "%s", fftd_plan_algorithm(p));
		memset(after, POISON, sizeof(after));
		assert_int_equal(
		    fftd_get_algorithm_stats(C, after, 16, &na), FFTD_OK);
		assert_true(na >= 1 && na <= 16);
		assert_true(untouched(
		    after, (size_t) na * sizeof(after[0]), sizeof(after)));
		assert_int_equal(
		    count_of(after, na, name), count_of(before, nb, name) + 1);
		// Every other name kept its count, and none went away.
		for (int i = 0; i < nb; i++) {
			if (strcmp(before[i].algorithm, name) != 0) {
				assert_int_equal(
				    count_of(after, na, before[i].algorithm),
				    before[i].plans);
			}
		}
		assert_true(na >= nb);
		print_message("plan %zu: %s, %llu plans so far\n", k, name,
		    (unsigned long long) count_of(after, na, name));
		fftd_plan_destroy(p);
	}
}

// On a daemon that prefers fftw-f32 (FFTD_AUTO_PREFER, algo_pick.c), a
// plan with a tolerance is counted under "fftw-f32", one without under
// "fftw", each name from its first plan on.
static void
test_counts_other_name(void **state)
{
	(void) state;
	setenv("FFTD_AUTO_PREFER", "fftw-f32", 1);
	int rv = fftd_test_daemon_start(&L, NULL, DAEMON_ARGS);
	unsetenv("FFTD_AUTO_PREFER");
	assert_int_equal(rv, 0);
	fftd_client *keep = C;
	assert_int_equal(fftd_client_open(&C, L.url, TIMEOUT_MS), FFTD_OK);
	fftd_algorithm_stats a[16];
	int                  n = -1;
	assert_int_equal(fftd_get_algorithm_stats(C, a, 16, &n), FFTD_OK);
	assert_int_equal(n, 0);
	fftd_plan *p = make_plan(FFTD_F64, 4096, 1e-5, NULL);
	assert_string_equal(fftd_plan_algorithm(p), "fftw-f32");
	assert_int_equal(fftd_get_algorithm_stats(C, a, 16, &n), FFTD_OK);
	assert_int_equal(n, 1);
	assert_string_equal(a[0].algorithm, "fftw-f32");
	assert_int_equal(a[0].plans, 1);
	fftd_plan *q = make_plan(FFTD_F64, 4096, 0, NULL);
	assert_int_equal(fftd_get_algorithm_stats(C, a, 16, &n), FFTD_OK);
	assert_int_equal(n, 2);
	assert_int_equal(count_of(a, n, "fftw-f32"), 1);
	assert_int_equal(count_of(a, n, "fftw"), 1);
	fftd_plan_destroy(q);
	fftd_plan_destroy(p);
	fftd_client_close(C);
	C = keep;
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// find_entry returns the index of the entry of key and shape in e[0..n),
// or -1.
static int
find_entry(const fftd_speed_entry *e, int n, const char *key, const char *shape)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(e[i].key, key) == 0
		    && strcmp(e[i].shape, shape) == 0) {
			return i;
		}
	}
	return -1;
}

static void
test_speed_table_lists_candidates(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static fftd_speed_entry e[64];
	const char             *shape = "c2c fwd f64 1000 batch 2";
	fftd_plan              *p     = make_plan(FFTD_F64, 1000, 1e-5, NULL);
	int                     n = -1, n2 = -1;
	uint64_t                ev = 99;
	memset(e, POISON, sizeof(e));
	assert_int_equal(fftd_get_speed_table(C, e, 64, &n, &ev), FFTD_OK);
	assert_true(n >= 2 && n <= 64);
	assert_int_equal(ev, 0);
	assert_true(untouched(e, (size_t) n * sizeof(e[0]), sizeof(e)));
	// Both candidates of the shape, measured on device 0.
	static const char *const keys[] = { "fftw", "fftw-f32" };
	for (int k = 0; k < 2; k++) {
		int i = find_entry(e, n, keys[k], shape);
		if (i < 0) {
			fail_msg("no %s entry for %s", keys[k], shape);
		}
		assert_int_equal(e[i].device, 0);
		assert_string_equal(e[i].algorithm, keys[k]);
		assert_true(e[i].seconds > 0 && e[i].seconds < 10);
		print_message("%s %s: %.3g s\n", keys[k], shape, e[i].seconds);
	}
	for (int i = 0; i < n; i++) {
		assert_true(e[i].seconds > 0);
		assert_non_null(memchr(e[i].shape, '\0', sizeof(e[i].shape)));
	}
	// The same shape again is looked up, not measured again.
	fftd_plan *q = make_plan(FFTD_F64, 1000, 1e-5, NULL);
	assert_int_equal(fftd_get_speed_table(C, e, 64, &n2, NULL), FFTD_OK);
	assert_int_equal(n2, n);
	// max below the count: max entries written, *n all of them.
	memset(e, POISON, sizeof(e));
	assert_int_equal(fftd_get_speed_table(C, e, 1, &n2, NULL), FFTD_OK);
	assert_int_equal(n2, n);
	assert_true(e[0].seconds > 0);
	assert_true(untouched(e, sizeof(e[0]), sizeof(e)));
	// No room at all: only the count.
	assert_int_equal(fftd_get_speed_table(C, NULL, 0, &n2, NULL), FFTD_OK);
	assert_int_equal(n2, n);
	fftd_plan_destroy(q);
	fftd_plan_destroy(p);
}

static void
test_wire_pages(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_destroy(make_plan(FFTD_F64, 2000, 1e-5, NULL));
	static fftd_speed_entry e[64];
	int                     n = -1;
	assert_int_equal(fftd_get_speed_table(C, e, 64, &n, NULL), FFTD_OK);
	assert_true(n >= 2 && n <= 64);
	// Pages of one entry each: slot by slot, the same entries.
	nng_socket s;
	assert_int_equal(fftd_test_raw_open(&s, D.url, TIMEOUT_MS), 0);
	Fftd__Wire__Request          rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__AlgoStatsRequest ar = FFTD__WIRE__ALGO_STATS_REQUEST__INIT;
	rq.body_case                    = FFTD__WIRE__REQUEST__BODY_ALGO_STATS;
	rq.algo_stats                   = &ar;
	ar.speed_limit                  = 1;
	int got                         = 0;
	for (;;) {
		Fftd__Wire__Reply *r = NULL;
		assert_int_equal(fftd_test_raw_request(s, &rq, NULL, 0, &r), 0);
		assert_non_null(r->algo_stats);
		Fftd__Wire__AlgoStatsReply *w = r->algo_stats;
		assert_int_equal(w->speed_total, n);
		assert_true(w->n_plans >= 1);
		assert_int_equal(w->n_speeds, ar.speed_from < (uint32_t) n);
		if (w->n_speeds == 1) {
			assert_string_equal(w->speeds[0]->key, e[got].key);
			assert_string_equal(w->speeds[0]->shape, e[got].shape);
			assert_true(w->speeds[0]->seconds == e[got].seconds);
			got++;
		}
		assert_int_equal(w->speed_next, ar.speed_from + w->n_speeds);
		bool more     = w->speed_more;
		ar.speed_from = w->speed_next;
		fftd__wire__reply__free_unpacked(r, NULL);
		if (!more) {
			break;
		}
	}
	assert_int_equal(got, n);
	nng_close(s);
}

static void
test_bad_arguments(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_algorithm_stats a[4];
	fftd_speed_entry     e[4];
	int                  n = 77;
	assert_int_equal(fftd_get_algorithm_stats(NULL, a, 4, &n), FFTD_EINVAL);
	assert_int_equal(fftd_get_algorithm_stats(C, a, 4, NULL), FFTD_EINVAL);
	assert_int_equal(fftd_get_algorithm_stats(C, a, -1, &n), FFTD_EINVAL);
	assert_non_null(strstr(fftd_last_error(), "max"));
	assert_int_equal(fftd_get_algorithm_stats(C, NULL, 4, &n), FFTD_EINVAL);
	assert_int_equal(
	    fftd_get_speed_table(NULL, e, 4, &n, NULL), FFTD_EINVAL);
	assert_int_equal(
	    fftd_get_speed_table(C, e, 4, NULL, NULL), FFTD_EINVAL);
	assert_int_equal(fftd_get_speed_table(C, e, -3, &n, NULL), FFTD_EINVAL);
	assert_int_equal(
	    fftd_get_speed_table(C, NULL, 1, &n, NULL), FFTD_EINVAL);
	static const size_t sizes[] = { 0, 3, 102, (size_t) 1 << 20 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		assert_int_equal(
		    fftd_get_algorithm_stats_sized(C, a, sizes[k], 4, &n),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_get_speed_table_sized(C, e, sizes[k], 4, &n, NULL),
		    FFTD_EINVAL);
		assert_non_null(strstr(fftd_last_error(), "size"));
	}
	assert_int_equal(n, 77); // never written on an error
}

static void
test_old_and_new_abi(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_destroy(make_plan(FFTD_F64, 3000, 1e-5, NULL));
	static fftd_speed_entry full[64];
	int                     n = -1, m = -1;
	assert_int_equal(fftd_get_speed_table(C, full, 64, &n, NULL), FFTD_OK);
	assert_true(n >= 2 && n <= 64);
	// An older caller's entry ends before seconds (100 bytes): entries
	// at its own stride, nothing past each.
	const size_t old = offsetof(fftd_speed_entry, shape)
	    + sizeof(((fftd_speed_entry *) 0)->shape);
	static unsigned char buf[64 * (sizeof(fftd_speed_entry) + 16)];
	memset(buf, POISON, sizeof(buf));
	assert_int_equal(fftd_get_speed_table_sized(
	                     C, (fftd_speed_entry *) buf, old, 64, &m, NULL),
	    FFTD_OK);
	assert_int_equal(m, n);
	for (int i = 0; i < n; i++) {
		const unsigned char *at = buf + (size_t) i * old;
		assert_memory_equal(at, &full[i], old);
	}
	assert_true(untouched(buf, (size_t) n * old, sizeof(buf)));
	// A newer caller's entry is longer: its tail is zero.
	const size_t big = sizeof(fftd_speed_entry) + 16;
	memset(buf, POISON, sizeof(buf));
	assert_int_equal(fftd_get_speed_table_sized(
	                     C, (fftd_speed_entry *) buf, big, 64, &m, NULL),
	    FFTD_OK);
	assert_int_equal(m, n);
	static const unsigned char zero[16];
	for (int i = 0; i < n; i++) {
		const unsigned char *at = buf + (size_t) i * big;
		assert_memory_equal(at, &full[i], sizeof(fftd_speed_entry));
		assert_memory_equal(at + sizeof(fftd_speed_entry), zero, 16);
	}
	// fftd_algorithm_stats without plans: the names alone.
	fftd_algorithm_stats a[16];
	int                  na = -1;
	assert_int_equal(fftd_get_algorithm_stats(C, a, 16, &na), FFTD_OK);
	const size_t aold = offsetof(fftd_algorithm_stats, plans);
	memset(buf, POISON, sizeof(buf));
	assert_int_equal(fftd_get_algorithm_stats_sized(
	                     C, (fftd_algorithm_stats *) buf, aold, 16, &m),
	    FFTD_OK);
	assert_int_equal(m, na);
	for (int i = 0; i < na; i++) {
		assert_string_equal(
		    (const char *) buf + (size_t) i * aold, a[i].algorithm);
	}
	assert_true(untouched(buf, (size_t) na * aold, sizeof(buf)));
}

static void
test_fftctl_output(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan *p = make_plan(FFTD_F64, 1536, 1e-5, NULL);
	char       line[128];
	snprintf(line, sizeof(line), "%s ", fftd_plan_algorithm(p));
	static char out[1 << 17];
	char        cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s --url %s info", fftd_test_fftctl_bin(),
	    D.url);
	int rc = fftd_test_run_capture(cmd, out, sizeof(out));
	if (rc != 0 || strstr(out, "error table") == NULL
	    || strstr(out, "\nplans made       ") == NULL
	    || strstr(out, "\nspeed table      ") == NULL
	    || strstr(out, " evicted") == NULL
	    || strstr(out, "c2c fwd f64 1536 batch 2") == NULL
	    || strstr(out, "fftw-f32") == NULL
	    || strstr(out, "error table") > strstr(out, "speed table")) {
		fail_msg("%s: status %d:\n%s", cmd, rc, out);
	}
	snprintf(cmd, sizeof(cmd), "%s --url %s stats", fftd_test_fftctl_bin(),
	    D.url);
	rc            = fftd_test_run_capture(cmd, out, sizeof(out));
	const char *t = strstr(out, "\nplans by algorithm (");
	if (rc != 0 || t == NULL || strstr(t, line) == NULL) {
		fail_msg("%s: status %d:\n%s", cmd, rc, out);
	}
	snprintf(cmd, sizeof(cmd), "%s --url %s stats --json",
	    fftd_test_fftctl_bin(), D.url);
	rc = fftd_test_run_capture(cmd, out, sizeof(out));
	snprintf(line, sizeof(line),
	    "{\"algorithm\": \"%s\", \"plans\": ", fftd_plan_algorithm(p));
	if (rc != 0 || strstr(out, "\"algorithms\": [{") == NULL
	    || strstr(out, line) == NULL) {
		fail_msg("%s: status %d:\n%s", cmd, rc, out);
	}
	fftd_plan_destroy(p);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	unsetenv("FFTD_AUTO_PREFER"); // every candidate measured
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_rise_by_one),
		cmocka_unit_test_teardown(
		    test_counts_other_name, fftd_test_local_teardown),
		cmocka_unit_test(test_speed_table_lists_candidates),
		cmocka_unit_test(test_wire_pages),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_old_and_new_abi),
		cmocka_unit_test(test_fftctl_output),
	};
	return fftd_test_run_group("algo_stats", tests, &FX);
}

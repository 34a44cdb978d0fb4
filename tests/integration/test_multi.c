// SPDX-License-Identifier: MIT
//
// test_multi.c — one libfftd client spreading its work over several
// daemons (fftd_client_open with a URL list), against real
// `fftd --backend fftw` processes (one FFTW thread each):
//   - the list: blanks trimmed, an empty element or more than
//     FFTD_MAX_DAEMONS URLs is FFTD_EINVAL, an unreachable daemon fails the
//     open naming its URL; fftd_client_info says ndaemons and the smallest
//     limits;
//   - spreading: 32 executions of two plans (C2C f64 65536 x 8, R2C f32
//     2D) submitted at once, every result checked against the long double
//     FFTW reference, and both daemons' counters show that each ran some;
//   - a plan one daemon refuses (its max_batch is lower) fails with that
//     daemon's URL in the message, and the other daemon's copy is
//     destroyed;
//   - cancel goes to the request's own daemon;
//   - shared-memory buffers and streams are FFTD_EUNSUPPORTED;
//   - a daemon killed (SIGKILL) with executions in flight: those complete
//     with FFTD_ECLOSED (never resent elsewhere), the others succeed, later
//     executions and plans go to the survivor at once; with both daemons
//     gone, executions and plan creation fail at once with FFTD_ECLOSED;
//   - a daemon that comes back at the same URL: plans made before do not
//     use it (their session died), a plan made after does.
// "Long" is a C2C f64 transform of a prime 2000003 points, a few hundred
// ms on one FFTW thread: what is sent behind it on the same daemon waits.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../util/check.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/ref.h"
#include "clock.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 60000
#define LONG_N 2000003 // prime: slow per byte moved

static fftd_test_daemon A, B;
static fftd_client     *M;       // on "A, B"
static fftd_client     *CA, *CB; // on each alone
static char             LIST[700];

static const char CONFIG_A[] = "[backend]\nfftw_threads = 1\n";
// B takes smaller batches than A: the list's limits are the smaller.
static const char        CONFIG_B[] = "[backend]\nfftw_threads = 1\n"
                                      "[limits]\nmax_batch = 64\n";
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// open_list opens M on the list of both daemons' URLs, once A and B run.
static int
open_list(void)
{
	// Blanks around the URLs are allowed.
	snprintf(LIST, sizeof(LIST), " %s ,\t%s", A.url, B.url);
	if (fftd_client_open(&M, LIST, TIMEOUT_MS) != FFTD_OK) {
		fprintf(stderr, "fftd_client_open: %s\n", fftd_last_error());
		return -1;
	}
	return 0;
}

// close_list closes M before the daemons stop.
static void
close_list(void)
{
	fftd_client_close(M);
	M = NULL;
}

// FX: daemons A (CONFIG_A) and B (CONFIG_B), a client on each (CA, CB) and
// one on both (M); the teardown fails unless both exit 0.
static fftd_test_fixture FX = {
	.daemon      = { { &A, &CA, CONFIG_A, DAEMON_ARGS },
	         { &B, &CB, CONFIG_B, DAEMON_ARGS } },
	.timeout_ms  = TIMEOUT_MS,
	.check_exit  = 1,
	.after_start = open_list,
	.before_stop = close_list,
};

static uint64_t
executes(fftd_client *c)
{
	fftd_stats st;
	ASSERT_OK(fftd_get_stats(c, &st));
	return st.executes;
}

static uint64_t
plans(fftd_client *c)
{
	fftd_stats st;
	ASSERT_OK(fftd_get_stats(c, &st));
	return st.plans;
}

// queued is the daemon's executions queued or running now (its one
// device).
static uint32_t
queued(fftd_client *c)
{
	fftd_device_stats dv[4];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(c, dv, 4, &n));
	assert_int_equal(n, 1);
	return dv[0].queued;
}

static void
wait_queued(fftd_client *c, uint32_t n)
{
	long long until = fftd__mono_ms() + 20000;
	while (queued(c) < n) {
		if (fftd__mono_ms() > until) {
			fail_msg("never saw %u executions queued", n);
		}
		fftd_test_sleep_ms(2);
	}
}

static void
expect_open(const char *list, int want, const char *needle)
{
	fftd_client *c  = NULL;
	int          rv = fftd_client_open(&c, list, 5000);
	if (rv == FFTD_OK) {
		fftd_client_close(c);
	}
	if (rv != want) {
		fail_msg("open(\"%.80s\"): %s, want %s (%s)", list,
		    fftd_err_name(rv), fftd_err_name(want), fftd_last_error());
	}
	if (needle != NULL && strstr(fftd_last_error(), needle) == NULL) {
		fail_msg("open(\"%.80s\"): no '%s' in '%s'", list, needle,
		    fftd_last_error());
	}
	if (rv != FFTD_OK) {
		print_message(
		    "    %s: %.200s\n", fftd_err_name(rv), fftd_last_error());
	}
}

// kill9 kills d with SIGKILL and reaps it, removing what the daemon's own
// exit would have (its descriptor socket), so that its folder goes too.
static void
kill9(fftd_test_daemon *d)
{
	char fd[400];
	snprintf(fd, sizeof(fd), "%s/fftd.sock.fd", d->dir);
	assert_int_equal(fftd_test_daemon_signal(d, SIGKILL), 0);
	while (fftd_test_daemon_alive(d)) {
		fftd_test_sleep_ms(5);
	}
	unlink(fd);
	assert_int_equal(fftd_test_daemon_wait(d, 5000), 128 + SIGKILL);
}

static void
test_open_list(void **state)
{
	(void) state;
	fftd_info info, ia, ib;
	ASSERT_OK(fftd_client_info(M, &info));
	ASSERT_OK(fftd_client_info(CA, &ia));
	ASSERT_OK(fftd_client_info(CB, &ib));
	assert_int_equal(info.ndaemons, 2);
	assert_int_equal(ia.ndaemons, 1);
	assert_int_equal(ia.max_batch, 1ull << 30);
	assert_int_equal(ib.max_batch, 64);
	assert_int_equal(info.max_batch, 64); // the smaller
	assert_string_equal(info.backend, "fftw");
	assert_int_equal(info.precisions, ia.precisions & ib.precisions);
	assert_true(info.nalgorithms >= 1);

	char l[2048];
	snprintf(l, sizeof(l), "%s,,%s", A.url, B.url);
	expect_open(l, FFTD_EINVAL, "URL 2 of");
	snprintf(l, sizeof(l), "%s, ", A.url);
	expect_open(l, FFTD_EINVAL, "is empty");
	expect_open("", FFTD_EINVAL, "is empty");
	expect_open(" ,", FFTD_EINVAL, "is empty");
	l[0] = '\0';
	for (int i = 0; i <= FFTD_MAX_DAEMONS; i++) {
		snprintf(l + strlen(l), sizeof(l) - strlen(l), "%s%s",
		    i ? "," : "", A.url);
	}
	expect_open(l, FFTD_EINVAL, "more than 16 URLs");
	// An unreachable daemon fails the open, naming it.
	char gone[400];
	snprintf(gone, sizeof(gone), "ipc://%s/no-such.sock", A.dir);
	snprintf(l, sizeof(l), "%s,%s", A.url, gone);
	expect_open(l, FFTD_ECONNREFUSED, gone);
	// The same daemon twice is two connections: allowed.
	snprintf(l, sizeof(l), "%s,%s", A.url, A.url);
	expect_open(l, FFTD_OK, NULL);
}

// One batch of executions of a plan, with inputs filled beforehand and
// checked after.
typedef struct batch {
	fftd_plan   *plan;
	fftd__shape  sh;
	int          nin; // distinct inputs
	void        *in[4];
	long double *ref[4];
} batch;

static void
batch_make(
    batch *b, fftd_client *c, const fftd_plan_desc *d, int nin, uint64_t seed)
{
	char msg[256];
	memset(b, 0, sizeof(*b));
	assert_int_equal(
	    fftd__shape_resolve(d, NULL, &b->sh, msg, sizeof(msg)), FFTD_OK);
	ASSERT_OK(fftd_plan_create(c, d, &b->plan));
	b->nin = nin;
	for (int k = 0; k < nin; k++) {
		b->in[k] = malloc(b->sh.in.bytes);
		assert_non_null(b->in[k]);
		fftd_ref_fill_input(
		    b->in[k], &b->sh, fftd_test_case_seed(seed + (uint64_t) k));
		b->ref[k] = fftd_ref_transform(&b->sh, b->in[k]);
		assert_non_null(b->ref[k]);
	}
}

static void
batch_check(const batch *b, int k, const void *out)
{
	double e = fftd_ref_rel_l2(&b->sh, out, b->ref[k % b->nin]);
	if (!(e <= fftd_ref_bound(&b->sh))) {
		fail_msg("result %d: relative L2 error %.3g > bound %.3g", k, e,
		    fftd_ref_bound(&b->sh));
	}
	assert_int_equal(fftd_ref_unwritten(&b->sh, out), 0);
}

static void
batch_free(batch *b)
{
	for (int k = 0; k < b->nin; k++) {
		free(b->in[k]);
		free(b->ref[k]);
	}
	fftd_plan_destroy(b->plan);
}

static void
test_spread(void **state)
{
	(void) state;
	batch          c2c, r2c;
	fftd_plan_desc d;
	int64_t        n1 = 65536, n2[2] = { 96, 250 };
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n1, FFTD_C2C, FFTD_F64));
	d.batch = 8;
	batch_make(&c2c, M, &d, 4, 100);
	ASSERT_OK(fftd_plan_desc_init(&d, 2, n2, FFTD_R2C, FFTD_F32));
	d.batch = 4;
	batch_make(&r2c, M, &d, 4, 200);
	assert_string_equal(fftd_plan_algorithm(c2c.plan), "fftw");
	assert_int_equal(plans(CA), 2); // made on both
	assert_int_equal(plans(CB), 2);

	enum { K = 32 };
	void         *out[K];
	fftd_request *r[K];
	for (int k = 0; k < K; k++) {
		const batch *b = k % 2 ? &r2c : &c2c;
		out[k]         = malloc(b->sh.out.bytes);
		assert_non_null(out[k]);
		fftd_ref_poison(out[k], b->sh.out.bytes);
	}
	uint64_t a0 = executes(CA), b0 = executes(CB);
	for (int k = 0; k < K; k++) {
		const batch *b = k % 2 ? &r2c : &c2c;
		ASSERT_OK(fftd_execute_async(b->plan, b->in[(k / 2) % b->nin],
		    out[k], NULL, NULL, &r[k]));
	}
	for (int k = 0; k < K; k++) {
		ASSERT_OK(fftd_request_wait(r[k]));
	}
	for (int k = 0; k < K; k++) {
		batch_check(k % 2 ? &r2c : &c2c, k / 2, out[k]);
		free(out[k]);
	}
	uint64_t da = executes(CA) - a0, db = executes(CB) - b0;
	print_message("    %d executions: %llu on A, %llu on B\n", K,
	    (unsigned long long) da, (unsigned long long) db);
	assert_int_equal(da + db, K);
	// The fewest in flight, ties in turn: about half each.
	assert_true(da >= K / 4 && db >= K / 4);
	// Blocking executions too.
	void *o = malloc(c2c.sh.out.bytes);
	assert_non_null(o);
	for (int k = 0; k < 4; k++) {
		fftd_ref_poison(o, c2c.sh.out.bytes);
		ASSERT_OK(fftd_execute(c2c.plan, c2c.in[k], o));
		batch_check(&c2c, k, o);
	}
	free(o);
	batch_free(&c2c);
	batch_free(&r2c);
	assert_int_equal(plans(CA), 0); // destroyed on both
	assert_int_equal(plans(CB), 0);
}

// A plan B refuses (batch over its max_batch): the error names B, and the
// copy A made is destroyed.
static void
test_plan_refused_by_one(void **state)
{
	(void) state;
	int64_t        n = 64;
	fftd_plan_desc d;
	fftd_plan     *p = NULL;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	d.batch = 100;
	assert_int_equal(fftd_plan_create(M, &d, &p), FFTD_ELIMIT);
	print_message("    %s\n", fftd_last_error());
	assert_true(strncmp(fftd_last_error(), B.url, strlen(B.url)) == 0);
	assert_non_null(strstr(fftd_last_error(), "batch"));
	assert_int_equal(plans(CA), 0);
	assert_int_equal(plans(CB), 0);
	d.batch = 64;
	ASSERT_OK(fftd_plan_create(M, &d, &p));
	assert_int_equal(plans(CA), 1);
	fftd_plan_destroy(p);
	assert_int_equal(plans(CA), 0);
}

static fftd_plan *
long_plan(fftd_client *c)
{
	int64_t        n = LONG_N;
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	ASSERT_OK(fftd_plan_create(c, &d, &p));
	return p;
}

// impulse_ok: the FFT of a unit impulse is all ones.
static bool
impulse_ok(const double *out, int64_t n)
{
	for (int64_t k = 0; k < n; k++) {
		if (fabs(out[2 * k] - 1) > 1e-12
		    || fabs(out[2 * k + 1]) > 1e-12) {
			return false;
		}
	}
	return true;
}

// Two long executions go A, B, then two small ones A, B; the small one on
// each daemon waits behind the long one, and cancelling it reaches its own
// daemon.
static void
test_cancel_on_its_daemon(void **state)
{
	(void) state;
	fftd_plan *p  = long_plan(M);
	size_t     nb = fftd_plan_input_bytes(p);
	double    *in = calloc(1, nb);
	assert_non_null(in);
	in[0] = 1;
	// One long execution on each daemon, then two small ones, which
	// are queued behind them at once (a long one's 64 MB take a while to
	// send; under load the first long one could end before a third
	// arrived).
	int64_t        ns = 64;
	fftd_plan_desc ds;
	fftd_plan     *small;
	ASSERT_OK(fftd_plan_desc_init(&ds, 1, &ns, FFTD_C2C, FFTD_F64));
	ASSERT_OK(fftd_plan_create(M, &ds, &small));
	double        sin_[128] = { 1 }, sout[2][128];
	double       *out[2];
	fftd_request *r[4];
	fftd_stats    sa, sb;
	ASSERT_OK(fftd_get_stats(CA, &sa));
	ASSERT_OK(fftd_get_stats(CB, &sb));
	// Two at a time: a daemon handles one connection's requests on
	// several threads, so two sent to it back to back may be queued in
	// either order; the long one of each daemon must be running first.
	for (int k = 0; k < 2; k++) {
		out[k] = malloc(nb);
		assert_non_null(out[k]);
		ASSERT_OK(fftd_execute_async(p, in, out[k], NULL, NULL, &r[k]));
	}
	wait_queued(CA, 1);
	wait_queued(CB, 1);
	for (int k = 2; k < 4; k++) {
		ASSERT_OK(fftd_execute_async(
		    small, sin_, sout[k - 2], NULL, NULL, &r[k]));
	}
	wait_queued(CA, 2);
	wait_queued(CB, 2);
	ASSERT_OK(fftd_request_cancel(r[2]));
	ASSERT_OK(fftd_request_cancel(r[3]));
	assert_int_equal(fftd_request_wait(r[2]), FFTD_ECANCELED);
	assert_int_equal(fftd_request_wait(r[3]), FFTD_ECANCELED);
	ASSERT_OK(fftd_request_wait(r[0]));
	ASSERT_OK(fftd_request_wait(r[1]));
	assert_true(impulse_ok(out[0], LONG_N));
	assert_true(impulse_ok(out[1], LONG_N));
	fftd_stats sa2, sb2;
	ASSERT_OK(fftd_get_stats(CA, &sa2));
	ASSERT_OK(fftd_get_stats(CB, &sb2));
	assert_int_equal(sa2.canceled - sa.canceled, 1);
	assert_int_equal(sb2.canceled - sb.canceled, 1);
	for (int k = 0; k < 2; k++) {
		free(out[k]);
	}
	fftd_plan_destroy(small);
	free(in);
	fftd_plan_destroy(p);
}

static void
test_shared_memory_unsupported(void **state)
{
	(void) state;
	fftd_buffer *buf = NULL;
	assert_int_equal(fftd_buffer_create(M, 4096, &buf), FFTD_EUNSUPPORTED);
	assert_non_null(strstr(fftd_last_error(), "one daemon"));
	int64_t        n = 256;
	fftd_plan_desc d;
	fftd_plan     *p;
	fftd_stream   *st = NULL;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	ASSERT_OK(fftd_plan_create(M, &d, &p));
	assert_int_equal(fftd_stream_open(p, 2, &st), FFTD_EUNSUPPORTED);
	assert_non_null(strstr(fftd_last_error(), "one daemon"));
	fftd_plan_destroy(p);
	// A client of one of them still has them.
	ASSERT_OK(fftd_buffer_create(CA, 4096, &buf));
	fftd_buffer_destroy(buf);
}

// run_small runs k C2C executions of b's plan at once and checks them;
// returns how long that took in ms.
static long long
run_small(batch *b, int k)
{
	void         *out[16];
	fftd_request *r[16];
	long long     t0 = fftd__mono_ms();
	assert_true(k <= 16);
	for (int i = 0; i < k; i++) {
		out[i] = malloc(b->sh.out.bytes);
		assert_non_null(out[i]);
		fftd_ref_poison(out[i], b->sh.out.bytes);
		ASSERT_OK(fftd_execute_async(
		    b->plan, b->in[i % b->nin], out[i], NULL, NULL, &r[i]));
	}
	for (int i = 0; i < k; i++) {
		ASSERT_OK(fftd_request_wait(r[i]));
		batch_check(b, i, out[i]);
		free(out[i]);
	}
	return fftd__mono_ms() - t0;
}

// A daemon dies with work in flight.
static void
test_daemon_killed(void **state)
{
	(void) state;
	fftd_test_daemon d1, d2;
	assert_int_equal(fftd_test_daemon_start(&d1, CONFIG_A, DAEMON_ARGS), 0);
	assert_int_equal(fftd_test_daemon_start(&d2, CONFIG_A, DAEMON_ARGS), 0);
	char list[700];
	snprintf(list, sizeof(list), "%s,%s", d1.url, d2.url);
	fftd_client *k, *c1;
	// A timeout far above what any step below may take: a call that
	// waited for the dead daemon would show.
	ASSERT_OK(fftd_client_open(&k, list, 30000));
	ASSERT_OK(fftd_client_open(&c1, d1.url, 30000));
	fftd_plan     *lp = long_plan(k);
	batch          small;
	fftd_plan_desc d;
	int64_t        n1 = 65536;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n1, FFTD_C2C, FFTD_F64));
	d.batch = 2;
	batch_make(&small, k, &d, 2, 300);

	size_t  nb = fftd_plan_input_bytes(lp);
	double *in = calloc(1, nb);
	assert_non_null(in);
	in[0] = 1;
	double       *out[4];
	fftd_request *r[4];
	for (int i = 0; i < 4; i++) { // d1, d2, d1, d2
		out[i] = malloc(nb);
		assert_non_null(out[i]);
		ASSERT_OK(
		    fftd_execute_async(lp, in, out[i], NULL, NULL, &r[i]));
	}
	fftd_client *c2;
	ASSERT_OK(fftd_client_open(&c2, d2.url, 30000));
	wait_queued(c2, 2); // both of d2's are there
	fftd_client_close(c2);
	long long t0 = fftd__mono_ms();
	kill9(&d2);
	int st[4];
	for (int i = 0; i < 4; i++) {
		st[i] = fftd_request_wait(r[i]);
		print_message("    execution %d (%s): %s%s%s\n", i,
		    i % 2 ? "killed daemon" : "survivor", fftd_err_name(st[i]),
		    st[i] ? ": " : "", st[i] ? fftd_last_error() : "");
		if (st[i] != FFTD_OK) {
			assert_non_null(strstr(fftd_last_error(), d2.url));
		}
	}
	ASSERT_OK(st[0]);
	ASSERT_OK(st[2]);
	assert_true(impulse_ok(out[0], LONG_N) && impulse_ok(out[2], LONG_N));
	// What was in flight on the killed daemon fails; never resent.
	assert_int_equal(st[1], FFTD_ECLOSED);
	assert_int_equal(st[3], FFTD_ECLOSED);
	print_message("    in flight on the killed daemon failed %lld ms "
	              "after the kill was sent\n",
	    fftd__mono_ms() - t0);
	assert_true(fftd__mono_ms() - t0 < 20000);

	// Later executions go to the survivor, at once.
	uint64_t  e0 = executes(c1);
	long long ms = run_small(&small, 8);
	print_message("    8 executions after the kill: %lld ms\n", ms);
	assert_true(ms < 10000);
	assert_int_equal(executes(c1) - e0, 8);
	// A new plan is made on the survivor only, and runs there.
	batch fresh;
	d.batch = 3;
	batch_make(&fresh, k, &d, 1, 400);
	e0 = executes(c1);
	run_small(&fresh, 3);
	assert_int_equal(executes(c1) - e0, 3);
	batch_free(&fresh);

	// Both gone: no waiting for the timeout either.
	fftd_client_close(c1);
	kill9(&d1);
	// NNG sees the connection go at once (the kernel closes the socket);
	// give its pipe callback a moment.
	fftd_test_sleep_ms(300);
	void *o = malloc(small.sh.out.bytes);
	assert_non_null(o);
	t0     = fftd__mono_ms();
	int rv = fftd_execute(small.plan, small.in[0], o);
	print_message("    with both daemons gone: %s (%s), %lld ms\n",
	    fftd_err_name(rv), fftd_last_error(), fftd__mono_ms() - t0);
	assert_int_equal(rv, FFTD_ECLOSED);
	assert_true(fftd__mono_ms() - t0 < 1000);
	fftd_plan *p2 = NULL;
	t0            = fftd__mono_ms();
	assert_int_equal(fftd_plan_create(k, &d, &p2), FFTD_ECLOSED);
	print_message("    plan_create: %s\n", fftd_last_error());
	assert_true(fftd__mono_ms() - t0 < 1000);
	free(o);
	for (int i = 0; i < 4; i++) {
		free(out[i]);
	}
	free(in);
	batch_free(&small);
	fftd_plan_destroy(lp);
	long long tc = fftd__mono_ms();
	fftd_client_close(k);
	assert_true(fftd__mono_ms() - tc < 3000);
}

// A daemon killed while the client is still sending to it: large
// requests wait in NNG's queue for the connection, one message at a time;
// those not yet sent fail at once too ("request not sent"), instead of
// waiting for the timeout or a new connection.
static void
test_daemon_killed_while_sending(void **state)
{
	(void) state;
	fftd_test_daemon d1, d2;
	assert_int_equal(fftd_test_daemon_start(&d1, CONFIG_A, DAEMON_ARGS), 0);
	assert_int_equal(fftd_test_daemon_start(&d2, CONFIG_A, DAEMON_ARGS), 0);
	char list[700];
	snprintf(list, sizeof(list), "%s,%s", d1.url, d2.url);
	fftd_client *k;
	ASSERT_OK(fftd_client_open(&k, list, 30000));
	int64_t        n = (int64_t) 1 << 21; // 32 MiB a message
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	ASSERT_OK(fftd_plan_create(k, &d, &p));
	size_t  nb = fftd_plan_input_bytes(p);
	double *in = calloc(1, nb);
	assert_non_null(in);
	in[0] = 1;
	enum { K = 8 };
	double       *out[K];
	fftd_request *r[K];
	for (int i = 0; i < K; i++) {
		out[i] = malloc(nb);
		assert_non_null(out[i]);
	}
	for (int i = 0; i < K; i++) { // d1, d2, d1, d2, ...
		ASSERT_OK(fftd_execute_async(p, in, out[i], NULL, NULL, &r[i]));
	}
	long long t0 = fftd__mono_ms();
	kill9(&d2);
	int failed = 0;
	for (int i = 0; i < K; i++) {
		int rv = fftd_request_wait(r[i]);
		print_message("    execution %d (%s): %s%s%.200s\n", i,
		    i % 2 ? "killed daemon" : "survivor", fftd_err_name(rv),
		    rv ? ": " : "", rv ? fftd_last_error() : "");
		if (i % 2 == 0) {
			ASSERT_OK(rv);
			assert_true(impulse_ok(out[i], n));
		} else {
			assert_true(rv == FFTD_OK || rv == FFTD_ECLOSED);
			failed += rv != FFTD_OK;
		}
	}
	long long ms = fftd__mono_ms() - t0;
	print_message("    %d of the killed daemon's %d failed; all done %lld "
	              "ms after the kill was sent\n",
	    failed, K / 2, ms);
	assert_true(ms < 10000); // not the 30 s timeout
	for (int i = 0; i < K; i++) {
		free(out[i]);
	}
	free(in);
	fftd_plan_destroy(p);
	fftd_client_close(k);
	assert_int_equal(fftd_test_daemon_stop(&d1), 0);
}

// A daemon that comes back at the same URL (a restart): NNG reconnects,
// but the plans made before lived in the old session, so they keep to the
// other daemon; a plan made after the restart uses both again.
static void
test_daemon_restarted(void **state)
{
	(void) state;
	const char *tmp = getenv("TMPDIR");
	if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) > 64) {
		tmp = "/tmp";
	}
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/fftd-multi-XXXXXX", tmp);
	assert_non_null(mkdtemp(dir));
	char fixed[400];
	snprintf(fixed, sizeof(fixed), "ipc://%s/fixed.sock", dir);
	const char *args[] = { "--backend", "fftw", "--listen", fixed, NULL };
	fftd_test_daemon d1, d2;
	assert_int_equal(fftd_test_daemon_start(&d1, CONFIG_A, DAEMON_ARGS), 0);
	assert_int_equal(fftd_test_daemon_start(&d2, CONFIG_A, args), 0);
	char list[800];
	snprintf(list, sizeof(list), "%s,%s", d1.url, fixed);
	fftd_client *k;
	ASSERT_OK(fftd_client_open(&k, list, 30000));
	batch          old;
	fftd_plan_desc d;
	int64_t        n1 = 4096;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n1, FFTD_C2C, FFTD_F64));
	d.batch = 4;
	batch_make(&old, k, &d, 2, 500);
	run_small(&old, 4);

	// Restart d2 on the same socket (a fresh daemon folder, the same
	// extra --listen), and wait until the client has reconnected: a new
	// plan reaches it.
	kill9(&d2);
	unlink(fixed + strlen("ipc://"));
	assert_int_equal(fftd_test_daemon_start(&d2, CONFIG_A, args), 0);
	fftd_client *c1, *c2;
	ASSERT_OK(fftd_client_open(&c1, d1.url, 30000));
	ASSERT_OK(fftd_client_open(&c2, d2.url, 30000));
	batch     fresh;
	long long until = fftd__mono_ms() + 20000;
	for (;;) {
		batch_make(&fresh, k, &d, 2, 600);
		if (plans(c2) == 1) {
			break;
		}
		batch_free(&fresh);
		assert_true(fftd__mono_ms() < until);
		fftd_test_sleep_ms(50);
	}
	// The old plan: all on d1, none refused.
	uint64_t e1 = executes(c1), e2 = executes(c2);
	run_small(&old, 8);
	assert_int_equal(executes(c1) - e1, 8);
	assert_int_equal(executes(c2) - e2, 0);
	// The fresh plan: on both.
	e1 = executes(c1);
	e2 = executes(c2);
	run_small(&fresh, 8);
	print_message("    fresh plan after the restart: %llu on d1, %llu on "
	              "d2\n",
	    (unsigned long long) (executes(c1) - e1),
	    (unsigned long long) (executes(c2) - e2));
	assert_true(executes(c1) - e1 > 0 && executes(c2) - e2 > 0);
	batch_free(&fresh);
	batch_free(&old);
	fftd_client_close(k);
	fftd_client_close(c1);
	fftd_client_close(c2);
	assert_int_equal(fftd_test_daemon_stop(&d1), 0);
	assert_int_equal(fftd_test_daemon_stop(&d2), 0);
	unlink(fixed + strlen("ipc://"));
	rmdir(dir);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_list),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_plan_refused_by_one),
		cmocka_unit_test(test_cancel_on_its_daemon),
		cmocka_unit_test(test_shared_memory_unsupported),
		cmocka_unit_test(test_daemon_killed),
		cmocka_unit_test(test_daemon_killed_while_sending),
		cmocka_unit_test(test_daemon_restarted),
	};
	return fftd_test_run_group("multi", tests, &FX);
}

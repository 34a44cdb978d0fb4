// SPDX-License-Identifier: MIT
//
// test_sched.c — the device worker's scheduler (daemon/worker.c) driven
// with synthetic jobs on a mock device: each job spins for a set time (its
// "device time") and logs its flow, so the order the scheduler chose is
// checked exactly. A control job that blocks on a gate holds the worker
// while a test queues everything, so no run depends on thread timing.
//
// Checked: weighted shares of device time (start-time fair queueing on
// measured time), equal shares for unequal job sizes, realtime before
// batch, FIFO inside a flow, no credit for idle time, deadlines (dropped
// with FFTD_EDEADLINE, never run), cancellation by tag and of a whole flow,
// and that control jobs overtake client work. Also the time slice our
// threads ask the kernel for (daemon/cpu_slice.h).

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../util/mock_backend.h"
#include "backend.h"
#include "cpu_slice.h"
#include "worker.h"

static const char *const mock_algorithms[] = { "mock", NULL };

static const fftd__backend mock_backend = {
	.name       = "mock",
	.algorithms = mock_algorithms,
	.probe      = mock_probe,
	.open       = mock_open,
	.close      = mock_close,
};

// --- the log of what ran --------------------------------------------------

#define MAX_LOG 4096

static struct {
	pthread_mutex_t mtx;
	int             n;
	uint32_t        flow[MAX_LOG];
	uint64_t        tag[MAX_LOG];
	uint64_t        cost[MAX_LOG]; // measured: what the worker charges
	int             dropped;
	int             drop_status[MAX_LOG];
	uint64_t        drop_tag[MAX_LOG];
} run_log = { .mtx = PTHREAD_MUTEX_INITIALIZER };

typedef struct test_job {
	fftd__job job;
	uint64_t  spin_ns;
} test_job;

static void
spin(uint64_t ns)
{
	uint64_t t0 = fftd__mono_ns();
	while (fftd__mono_ns() - t0 < ns) { }
}

static void
test_job_run(fftd__worker *w, fftd__job *job)
{
	test_job *tj = (test_job *) job;
	uint64_t  t0 = fftd__mono_ns();
	spin(tj->spin_ns);
	// The wall time: a preemption in the middle is charged to this job.
	// The worker is told it (as backends tell their device time), so
	// that the shares it keeps are exactly the costs logged here.
	uint64_t dt = fftd__mono_ns() - t0;
	fftd__worker_charge(w, dt);
	pthread_mutex_lock(&run_log.mtx);
	if (run_log.n < MAX_LOG) {
		run_log.flow[run_log.n] = job->flow;
		run_log.tag[run_log.n]  = job->tag;
		run_log.cost[run_log.n] = dt;
		run_log.n++;
	}
	pthread_mutex_unlock(&run_log.mtx);
	free(tj);
}

static void
test_job_drop(fftd__worker *w, fftd__job *job, int status)
{
	(void) w;
	pthread_mutex_lock(&run_log.mtx);
	run_log.drop_status[run_log.dropped] = status;
	run_log.drop_tag[run_log.dropped]    = job->tag;
	run_log.dropped++;
	pthread_mutex_unlock(&run_log.mtx);
	free(job);
}

static void
post(fftd__worker *w, uint32_t flow, int realtime, double weight, uint64_t tag,
    uint64_t spin_ns, uint64_t deadline_ns)
{
	test_job *tj = calloc(1, sizeof(*tj));
	assert_non_null(tj);
	tj->job.fn          = test_job_run;
	tj->job.drop        = test_job_drop;
	tj->job.flow        = flow;
	tj->job.realtime    = realtime;
	tj->job.weight      = weight;
	tj->job.tag         = tag;
	tj->job.cost_ns     = spin_ns;
	tj->job.deadline_ns = deadline_ns;
	tj->spin_ns         = spin_ns;
	fftd__worker_post(w, &tj->job);
}

// --- the gate: a control job that holds the worker ------------------------

typedef struct gate {
	fftd__job       job;
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	bool            open, entered;
} gate;

static void
gate_run(fftd__worker *w, fftd__job *job)
{
	(void) w;
	gate *g = (gate *) job;
	pthread_mutex_lock(&g->mtx);
	g->entered = true;
	pthread_cond_broadcast(&g->cv);
	while (!g->open) {
		pthread_cond_wait(&g->cv, &g->mtx);
	}
	pthread_mutex_unlock(&g->mtx);
}

static void
gate_close(fftd__worker *w, gate *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->mtx, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->job.fn = gate_run;
	fftd__worker_post(w, &g->job);
	pthread_mutex_lock(&g->mtx);
	while (!g->entered) {
		pthread_cond_wait(&g->cv, &g->mtx);
	}
	pthread_mutex_unlock(&g->mtx);
}

static void
gate_open(fftd__worker *w, gate *g)
{
	pthread_mutex_lock(&g->mtx);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mtx);
	fftd__worker_flush(w);
	pthread_mutex_destroy(&g->mtx);
	pthread_cond_destroy(&g->cv);
}

static int
setup(void **state)
{
	fftd__worker        *w;
	fftd__backend_config cfg = { .fftw_threads = 1 };
	char                 err[256];
	pthread_mutex_lock(&run_log.mtx);
	run_log.n       = 0;
	run_log.dropped = 0;
	pthread_mutex_unlock(&run_log.mtx);
	assert_int_equal(fftd__worker_start(&w, &mock_backend, 0, 0, &cfg,
	                     1 << 20, err, sizeof(err)),
	    FFTD_OK);
	*state = w;
	return 0;
}

static int
teardown(void **state)
{
	fftd__worker_stop(*state);
	return 0;
}

// share_of sums the device time flow f got in executions [from, to).
static uint64_t
share_of(uint32_t f, int from, int to)
{
	uint64_t t = 0;
	for (int i = from; i < to && i < run_log.n; i++) {
		t += run_log.flow[i] == f ? run_log.cost[i] : 0;
	}
	return t;
}

// last_of is the index of flow f's last execution.
static int
last_of(uint32_t f)
{
	int k = -1;
	for (int i = 0; i < run_log.n; i++) {
		k = run_log.flow[i] == f ? i : k;
	}
	return k;
}

// both_backlogged is the end of the window in which flows 1 and 2 both
// had work: the first of their last executions.
static int
both_backlogged(void)
{
	int a = last_of(1), b = last_of(2);
	return a < b ? a : b;
}

// largest_of is flow f's largest logged cost in executions [from, to).
static uint64_t
largest_of(uint32_t f, int from, int to)
{
	uint64_t m = 0;
	for (int i = from; i < to && i < run_log.n; i++) {
		if (run_log.flow[i] == f && run_log.cost[i] > m) {
			m = run_log.cost[i];
		}
	}
	return m;
}

// assert_fair checks start-time fair queueing's fairness bound (Goyal,
// Vin and Cheng, "Start-time Fair Queuing", SIGCOMM 1996, Theorem 1) for
// flows 1 and 2 of weights w1 and w2 over executions [from, to), in which
// both were backlogged: their device times divided by their weights
// differ by at most l1/w1 + l2/w2, l the flow's largest job in the
// window (the jobs' measured costs, which the worker charges: a job
// stretched by a preemption is one large job, so a loaded machine cannot
// fail this). An unweighted, first-come-first-served or per-request order
// misses it by many jobs. Returns flow 2's time over flow 1's.
static double
assert_fair(double w1, double w2, int from, int to)
{
	double t1  = (double) share_of(1, from, to);
	double t2  = (double) share_of(2, from, to);
	double l1  = (double) largest_of(1, from, to);
	double l2  = (double) largest_of(2, from, to);
	double gap = fabs(t1 / w1 - t2 / w2), bound = l1 / w1 + l2 / w2;
	printf("flow 1 (weight %g) %.1f ms, flow 2 (weight %g) %.1f ms: "
	       "|t1/w1 - t2/w2| %.3f ms, bound %.3f ms\n",
	    w1, t1 * 1e-6, w2, t2 * 1e-6, gap * 1e-6, bound * 1e-6);
	assert_true(t1 > 0 && t2 > 0);
	assert_true(gap <= bound + 1000); // 1 us: the sums' rounding
	return t2 / t1;
}

// --- tests -------------------------------------------------------------

// Weight 2 gets twice the device time of weight 1 while both are
// backlogged.
static void
test_weights(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 0; i < 300; i++) {
		post(w, 1, 0, 1.0, 0, 100000, 0);
		post(w, 2, 0, 2.0, 0, 100000, 0);
	}
	gate_open(w, &g);
	assert_int_equal(run_log.n, 600);
	assert_fair(1.0, 2.0, 0, both_backlogged()); // unweighted: ratio 1
}

// Equal weights share device time, not request counts: a flow of 4x
// larger jobs runs a quarter as many of them.
static void
test_equal_time_unequal_sizes(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 0; i < 400; i++) {
		post(w, 1, 0, 1.0, 0, 100000, 0);
	}
	for (int i = 0; i < 100; i++) {
		post(w, 2, 0, 1.0, 0, 400000, 0);
	}
	gate_open(w, &g);
	// By request counts the 400 us jobs would get 4x the time.
	assert_fair(1.0, 1.0, 0, both_backlogged());
}

// Realtime work goes before every queued batch job; FIFO within a flow.
static void
test_realtime_first_fifo(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 1; i <= 10; i++) {
		post(w, 1, 0, 1.0, (uint64_t) i, 1000, 0);
	}
	post(w, 2, 1, 1.0, 100, 1000, 0);
	post(w, 2, 1, 1.0, 101, 1000, 0);
	gate_open(w, &g);
	assert_int_equal(run_log.n, 12);
	assert_int_equal(run_log.tag[0], 100);
	assert_int_equal(run_log.tag[1], 101);
	for (int i = 2; i < 12; i++) {
		assert_int_equal(run_log.tag[i], (uint64_t) (i - 1));
	}
}

// A flow that was idle starts at the class's virtual time: it is not
// owed the time others used meanwhile, so it does not take the device.
static void
test_no_credit_for_idle(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 0; i < 100; i++) {
		post(w, 1, 0, 1.0, 0, 100000, 0);
	}
	gate_open(w, &g);
	gate_close(w, &g);
	for (int i = 0; i < 150; i++) {
		post(w, 1, 0, 1.0, 0, 100000, 0);
		post(w, 2, 0, 1.0, 0, 100000, 0);
	}
	gate_open(w, &g);
	// Owed the incumbent's first 100 jobs, the newcomer (flow 2) would
	// run alone for 10 ms, far past the bound.
	assert_fair(1.0, 1.0, 100, both_backlogged());
}

// A job whose deadline passed while it waited is dropped, not run.
static void
test_deadline(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	uint64_t now = fftd__mono_ns();
	post(w, 1, 0, 1.0, 1, 1000, now + 1000000);        // 1 ms: will expire
	post(w, 1, 0, 1.0, 2, 1000, now + 60000000000ull); // 60 s: runs
	post(w, 1, 0, 1.0, 3, 1000, 0);                    // none: runs
	struct timespec ts = { 0, 5000000 };
	nanosleep(&ts, NULL);
	gate_open(w, &g);
	assert_int_equal(run_log.dropped, 1);
	assert_int_equal(run_log.drop_status[0], FFTD_EDEADLINE);
	assert_int_equal(run_log.drop_tag[0], 1);
	assert_int_equal(run_log.n, 2);
	assert_int_equal(run_log.tag[0], 2);
	assert_int_equal(run_log.tag[1], 3);
}

// Cancelling one tag drops that job only; cancelling a flow (tag 0) drops
// all of its jobs and no other flow's.
static void
test_cancel(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 1; i <= 5; i++) {
		post(w, 1, 0, 1.0, (uint64_t) i, 1000, 0);
		post(w, 2, i % 2, 1.0, (uint64_t) (10 + i), 1000, 0);
	}
	assert_int_equal(fftd__worker_cancel(w, 1, 3, FFTD_ECANCELED), 1);
	assert_int_equal(fftd__worker_cancel(w, 1, 3, FFTD_ECANCELED), 0);
	assert_int_equal(fftd__worker_cancel(w, 7, 0, FFTD_ECLOSED), 0);
	assert_int_equal(fftd__worker_cancel(w, 2, 0, FFTD_ECLOSED), 5);
	gate_open(w, &g);
	assert_int_equal(run_log.dropped, 6);
	assert_int_equal(run_log.drop_status[0], FFTD_ECANCELED);
	assert_int_equal(run_log.drop_tag[0], 3);
	for (int i = 1; i < 6; i++) {
		assert_int_equal(run_log.drop_status[i], FFTD_ECLOSED);
	}
	assert_int_equal(run_log.n, 4);
	const uint64_t want[] = { 1, 2, 4, 5 };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(run_log.flow[i], 1);
		assert_int_equal(run_log.tag[i], want[i]);
	}
	assert_int_equal(fftd__worker_load(w), 0);
	assert_int_equal(fftd__worker_backlog_ns(w), 0);
}

// Control jobs (planning, releases) overtake queued client work.
static int control_ran_at = -1;

static void
control_run(fftd__worker *w, fftd__job *job)
{
	(void) w;
	pthread_mutex_lock(&run_log.mtx);
	control_ran_at = run_log.n;
	pthread_mutex_unlock(&run_log.mtx);
	free(job);
}

static void
test_control_first(void **state)
{
	fftd__worker *w = *state;
	gate          g;
	gate_close(w, &g);
	for (int i = 0; i < 5; i++) {
		post(w, 1, 1, 1.0, 0, 1000, 0);
	}
	fftd__job *cj = calloc(1, sizeof(*cj));
	assert_non_null(cj);
	cj->fn = control_run;
	fftd__worker_post(w, cj);
	gate_open(w, &g);
	assert_int_equal(control_ran_at, 0);
	assert_int_equal(run_log.n, 5);
}

// fftd__set_slice_all (daemon/cpu_slice.h) sets the EEVDF slice of every
// thread of the process, as the kernel then reports it. Skipped where the
// kernel has no sched_setattr, refuses it (a seccomp filter), or does not
// show the slice (before Linux 6.12, where it is ignored).
static void
test_slice(void **state)
{
	(void) state;
	int n = fftd__set_slice_all(200000);
	if (n == -ENOSYS || n == -EPERM) {
		print_message("sched_setattr: %s\n", strerror(-n));
		skip();
	}
	assert_true(n >= 2); // this thread and the worker of setup, at least
	char path[64];
	snprintf(
	    path, sizeof(path), "/proc/self/task/%d/sched", (int) gettid());
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		skip();
	}
	char line[256];
	long slice = -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "se.slice", 8) == 0) {
			slice = atol(strchr(line, ':') + 1);
		}
	}
	fclose(f);
	if (slice < 0) {
		print_message("no se.slice in %s: kernel before 6.12\n", path);
		skip();
	}
	assert_int_equal(slice, 200000);
	// Back to the default for whatever runs next in this process.
	assert_int_equal(fftd__set_slice_all(0) > 0, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_weights, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_equal_time_unequal_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_realtime_first_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_no_credit_for_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_control_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slice, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

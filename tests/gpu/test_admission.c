// SPDX-License-Identifier: MIT
//
// test_admission.c — device memory admission on `fftd --backend cuda` with
// a 256 MiB device budget ([backend] device_memory = 256M):
//   - a single 2^26-point f32 C2C transform (512 MiB each way, cannot be
//     cut into chunks) is refused with FFTD_EDEVMEM and a message naming
//     the budget, at plan creation or at its first execution, and the
//     daemon goes on serving;
//   - a 1 GiB batch of 4096-point transforms (far over the budget as a
//     whole) runs through the split-batch pipeline within it: sampled
//     transforms of shifted unit impulses come back as the exact complex
//     exponentials (error bound 1e-5 relative, fp32);
//   - the device statistics report memory in use within the budget;
//   - realtime executions run beside that batch on the realtime lane
//     (answered correctly before it ends).
// Without FFTD_TEST_GPU=1 or a usable GPU every test reports SKIPPED.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cases.h"
#include "../util/check.h"
#include "../../bench/lib/daemon.h"
#include "../util/gpu.h"
#include "../util/ref.h"
#include "../util/fixture.h"
#include "clock.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 120000

static const char      *skip_reason;
static fftd_test_daemon D;
static fftd_client     *C;

// FX: the daemon D (a 256 MiB device memory budget) with the client C;
// nothing starts without a GPU; the teardown fails unless D exits 0.
static fftd_test_fixture FX = FFTD_TEST_GPU_BUDGET_FIXTURE(&D, &C, TIMEOUT_MS);

static void
test_too_big_refused(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	int64_t        n = 1ll << 26;
	fftd_plan_desc d;
	fftd_plan     *p = NULL;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	int rv = fftd_plan_create(C, &d, &p);
	if (rv == FFTD_OK) {
		// Planned (cuFFT's workspace fits): the buffers cannot.
		size_t nb  = fftd_plan_input_bytes(p);
		void  *buf = calloc(1, nb);
		assert_non_null(buf);
		rv = fftd_execute(p, buf, buf);
		free(buf);
		fftd_plan_destroy(p);
	}
	printf("2^26-point f32 under a 256 MiB budget: %s: %s\n",
	    fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, FFTD_EDEVMEM);
	assert_non_null(strstr(fftd_last_error(), "budget"));
	double rtt;
	ASSERT_OK(fftd_ping(C, &rtt));
}

static void
test_big_batch_pipelined(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	const int64_t  N = 4096, B = 32768; // 1 GiB of f32 complex input
	int64_t        n = N;
	fftd_plan_desc d;
	fftd_plan     *p;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	d.batch = B;
	ASSERT_OK(fftd_plan_create(C, &d, &p));
	size_t nb  = fftd_plan_input_bytes(p);
	float *in  = calloc(1, nb);
	float *out = malloc(nb);
	assert_non_null(in);
	assert_non_null(out);
	memset(out, 0xff, nb); // NaN: unwritten elements show
	for (int64_t b = 0; b < B; b++) {
		in[2 * (b * N + b % N)] = 1.0f; // impulse at b mod N
	}
	ASSERT_OK(fftd_execute(p, in, out));
	double worst = 0;
	for (int64_t b = 0; b < B; b += 997) {
		for (int64_t k = 0; k < N; k += 7) {
			double ph = -2 * M_PI * (double) ((k * (b % N)) % N)
			    / (double) N;
			double re = out[2 * (b * N + k)],
			       im = out[2 * (b * N + k) + 1];
			double e  = hypot(re - cos(ph), im - sin(ph));
			worst     = e > worst || isnan(e) ? e : worst;
			if (isnan(e)) {
				fail_msg(
				    "transform %lld element %lld unwritten",
				    (long long) b, (long long) k);
			}
		}
	}
	printf("1 GiB batch under a 256 MiB budget: worst error %.3g\n", worst);
	assert_true(worst < 1e-5);
	fftd_device_stats dv[4];
	int               nd = 0;
	ASSERT_OK(fftd_get_device_stats(C, dv, 4, &nd));
	printf("device memory in use %.1f MiB of a %.0f MiB budget\n",
	    (double) dv[0].memory_used_bytes / 1048576.0,
	    (double) FFTD_TEST_GPU_BUDGET / 1048576.0);
	assert_true(dv[0].memory_used_bytes > 0);
	assert_true(dv[0].memory_used_bytes <= FFTD_TEST_GPU_BUDGET);
	fftd_plan_destroy(p);
	free(in);
	free(out);
}

// The realtime lane on the GPU: while four 1 GiB batches run through the
// pipeline one after another (~25 ms of device time each on an H100),
// realtime executions sent one after another from another connection are
// answered before they end and, by the daemon's count, spend in all under
// a quarter of the batches' device time queued: they run beside them, on
// the lane's own high-priority streams, within the lane's share of the
// device budget. Measured on the H100: 0.56-0.61 ms queued in all, all 20
// answered before the batches ended, slowest 3-4 ms; the same against a
// daemon with realtime_lane = no fails here: 66 ms queued, 2-3 answered
// before the batches ended, slowest 25 ms. Each is correct (FFTW long
// double reference, its error bound, poisoned outputs).
static void
test_realtime_beside_batch(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	int64_t           n = 4096, N = 4096, B = 32768;
	fftd_plan_desc    d;
	fftd_plan        *rt, *big;
	fftd_client      *c2; // realtime on its own connection: its own stats
	fftd_client_stats one;
	int               n1 = 0;
	ASSERT_OK(fftd_get_client_stats(C, &one, 1, &n1));
	assert_int_equal(n1, 1);
	uint32_t b_id = one.id;
	ASSERT_OK(fftd_client_open(&c2, D.url, TIMEOUT_MS));
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	d.batch    = 16;
	d.priority = FFTD_PRIORITY_REALTIME;
	ASSERT_OK(fftd_plan_create(c2, &d, &rt));
	fftd__shape sh;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &sh, msg, sizeof(msg)), 0);
	void *x = malloc(sh.in.bytes), *y = malloc(sh.out.bytes);
	assert_true(x && y);
	fftd_ref_fill_input(x, &sh, 1);
	ASSERT_OK(fftd_execute(rt, x, y)); // planned on its lane first
	// The two connections in the daemon's statistics: C was the only one
	// before c2.
	fftd_client_stats cs[8];
	int               ncs    = 0;
	uint32_t          rt_id  = 0;
	double            b_dev0 = 0;
	ASSERT_OK(fftd_get_client_stats(C, cs, 8, &ncs));
	assert_int_equal(ncs, 2);
	for (int i = 0; i < 2; i++) {
		if (cs[i].id != b_id) {
			rt_id = cs[i].id;
		} else {
			b_dev0 = cs[i].device_seconds;
		}
	}
	assert_true(rt_id != 0);

	// Four 1 GiB batches queued back to back from a shared buffer (no
	// copies on the client's side, so the device is what takes time).
	n = N;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	d.batch = B;
	ASSERT_OK(fftd_plan_create(C, &d, &big));
	size_t       nb = fftd_plan_input_bytes(big);
	fftd_buffer *buf;
	ASSERT_OK(fftd_buffer_create(C, 2 * nb, &buf));
	char *in = fftd_buffer_data(buf), *out = in + nb;
	memset(in, 0, nb);
	enum { NB = 4 };
	fftd_request *rbs[NB], *rb;
	for (int k = 0; k < NB; k++) {
		ASSERT_OK(
		    fftd_execute_async(big, in, out, NULL, NULL, &rbs[k]));
	}
	rb = rbs[NB - 1];
	fftd_device_stats dv[4];
	int               nd    = 0;
	long long         until = fftd__mono_ms() + 20000;
	do { // at the daemon: queued or running
		ASSERT_OK(fftd_get_device_stats(C, dv, 4, &nd));
	} while (dv[0].queued == 0 && fftd__mono_ms() < until);
	assert_true(dv[0].queued > 0);

	// The references are computed afterwards, so that the executions
	// follow each other as fast as they can.
	enum { K = 20 };
	void  *xs[K], *ys[K];
	int    beside   = 0; // answered while the batch was still running
	double worst_ms = 0, worst_err = 0;
	for (int k = 0; k < K; k++) {
		xs[k] = malloc(sh.in.bytes);
		ys[k] = malloc(sh.out.bytes);
		assert_true(xs[k] && ys[k]);
		fftd_ref_fill_input(
		    xs[k], &sh, fftd_test_case_seed((uint64_t) k));
		fftd_ref_poison(ys[k], sh.out.bytes);
	}
	for (int k = 0; k < K; k++) {
		long long t0 = fftd__mono_ms();
		ASSERT_OK(fftd_execute(rt, xs[k], ys[k]));
		double ms = (double) (fftd__mono_ms() - t0);
		worst_ms  = ms > worst_ms ? ms : worst_ms;
		beside += !fftd_request_done(rb);
	}
	for (int k = 0; k < NB; k++) {
		ASSERT_OK(fftd_request_wait(rbs[k]));
	}
	for (int k = 0; k < K; k++) {
		long double *ref = fftd_ref_transform(&sh, xs[k]);
		double       e   = fftd_ref_rel_l2(&sh, ys[k], ref);
		free(ref);
		worst_err = e > worst_err ? e : worst_err;
		assert_true(e <= fftd_ref_bound(&sh));
		assert_int_equal(fftd_ref_unwritten(&sh, ys[k]), 0);
		free(xs[k]);
		free(ys[k]);
	}
	// The daemon's own account: the realtime connection's time queued in
	// all (without the lane, the first one waits for the batch's device
	// time) against the batch's device time.
	double rt_queue = 0, batch_dev = 0;
	ASSERT_OK(fftd_get_client_stats(C, cs, 8, &ncs));
	for (int i = 0; i < ncs && i < 8; i++) {
		if (cs[i].id == rt_id) {
			rt_queue = cs[i].queue_seconds;
		} else if (cs[i].id == b_id) {
			batch_dev = cs[i].device_seconds - b_dev0;
		}
	}
	printf("%d realtime executions beside four 1 GiB batches: %d answered "
	       "before they ended, slowest %.0f ms, worst error %.3g; queued "
	       "%.2f ms in all, the batch connection's device time %.1f ms\n",
	    K, beside, worst_ms, worst_err, rt_queue * 1e3, batch_dev * 1e3);
	assert_true(beside >= 1);
	assert_true(batch_dev > 0);
	assert_true(rt_queue < batch_dev / 4);
	fftd_client_close(c2);
	ASSERT_OK(fftd_get_device_stats(C, dv, 4, &nd));
	assert_true(dv[0].memory_used_bytes <= FFTD_TEST_GPU_BUDGET);
	fftd_plan_destroy(big);
	fftd_plan_destroy(rt);
	fftd_buffer_destroy(buf);
	free(x);
	free(y);
}

int
main(void)
{
	skip_reason                     = fftd_test_gpu_skip(&FX, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_too_big_refused),
		cmocka_unit_test(test_big_batch_pipelined),
		cmocka_unit_test(test_realtime_beside_batch),
	};
	return fftd_test_run_group("admission[cuda]", tests, &FX);
}

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
//   - the device statistics report memory in use within the budget.
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

#include "../util/check.h"
#include "../util/daemon.h"
#include "../util/session.h"
#include "fftd.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#define TIMEOUT_MS 120000
#define BUDGET (256ull << 20)

static const char      *skip_reason;
static fftd_test_daemon D;
static fftd_client     *C;

static const char *
why_no_gpu(void)
{
	const char *e = getenv("FFTD_TEST_GPU");
	if (e == NULL || strcmp(e, "1") != 0) {
		return "FFTD_TEST_GPU=1 is not set (make test-gpu sets it)";
	}
#ifdef FFTD_WITH_CUDA
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
		return "no GPU (cudaGetDeviceCount)";
	}
	return NULL;
#else
	return "built without CUDA (WITH_CUDA=0)";
#endif
}

static int
group_setup(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		return 0;
	}
	static const char *const args[] = { "--backend", "cuda", NULL };
	return fftd_test_session_start(
	    &D, "[backend]\ndevice_memory = 256M\n", args, TIMEOUT_MS, &C);
}

static int
group_teardown(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		return 0;
	}
	return fftd_test_session_stop(&D, &C) == 0 ? 0 : -1;
}

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
	    (double) BUDGET / 1048576.0);
	assert_true(dv[0].memory_used_bytes > 0);
	assert_true(dv[0].memory_used_bytes <= BUDGET);
	fftd_plan_destroy(p);
	free(in);
	free(out);
}

int
main(void)
{
	skip_reason = why_no_gpu();
	if (skip_reason != NULL) {
		printf("GPU tests skipped: %s\n", skip_reason);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_too_big_refused),
		cmocka_unit_test(test_big_batch_pipelined),
	};
	return cmocka_run_group_tests_name(
	    "admission[cuda]", tests, group_setup, group_teardown);
}

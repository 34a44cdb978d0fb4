// SPDX-License-Identifier: MIT
//
// gpu.c — see gpu.h.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpu.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

const char *
fftd_test_why_no_gpu(int min_gpus)
{
	static char why[200];
	const char *e = getenv("FFTD_TEST_GPU");
	if (e == NULL || strcmp(e, "1") != 0) {
		return "FFTD_TEST_GPU=1 is not set (make test-gpu sets it)";
	}
#ifdef FFTD_WITH_CUDA
	int         n  = 0;
	cudaError_t rv = cudaGetDeviceCount(&n);
	if (rv != cudaSuccess) {
		snprintf(why, sizeof(why), "no GPU: cudaGetDeviceCount: %s",
		    cudaGetErrorString(rv));
		return why;
	}
	if (n <= 0) {
		return "no GPU: cudaGetDeviceCount found none";
	}
	if (n < min_gpus) {
		snprintf(why, sizeof(why), "%d GPU(s) here, this test needs %d",
		    n, min_gpus);
		return why;
	}
	return NULL;
#else
	(void) min_gpus;
	snprintf(why, sizeof(why), "built without CUDA (WITH_CUDA=0)");
	return why;
#endif
}

const char *
fftd_test_gpu_skip(fftd_test_fixture *fx, int min_gpus)
{
	const char *why = fftd_test_why_no_gpu(min_gpus);
	if (why != NULL) {
		printf("GPU tests skipped: %s\n", why);
	}
	if (fx != NULL) {
		fx->skip_reason = why;
	}
	return why;
}

const char *
fftd_test_gpu_start(fftd_test_fixture *fx)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *why = fftd_test_gpu_skip(fx, 1);
	if (why == NULL) {
		(void) fftd_test_seed(); // print it first
	}
	return why;
}

const char *
fftd_test_gpu_start_roles(
    int argc, char **argv, const fftd_test_role *roles, fftd_test_fixture *fx)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const char *why = fftd_test_gpu_skip(fx, 1);
	(void) fftd_test_seed();
	return why;
}

void
fftd_test_gpu_skip_test(const char *skip_reason)
{
	if (skip_reason != NULL) {
		print_message("skipped: %s\n", skip_reason);
		skip();
	}
}

const char *const fftd_test_cuda_args[] = { "--backend", "cuda", NULL };

// kernel_gpu: whether the kernel tests' group setup found a GPU.
static int kernel_gpu;

// kernel_setup is the kernel tests' group setup: cudaGetDeviceCount, its
// error cleared when it fails so that it does not stick to later calls.
static int
kernel_setup(void **state)
{
	(void) state;
#ifdef FFTD_WITH_CUDA
	int n      = 0;
	kernel_gpu = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
	if (!kernel_gpu) {
		cudaGetLastError();
	}
#endif
	return 0;
}

int
fftd_test_kernel_run(int argc, char **argv, const char *name,
    const struct CMUnitTest *tests, size_t n)
{
	if (argc > 1) {
		cmocka_set_test_filter(argv[1]);
	}
	return _cmocka_run_group_tests(name, tests, n, kernel_setup, NULL);
}

void
fftd_test_kernel_need_gpu(void)
{
	if (!kernel_gpu) {
		skip();
	}
}

double
fftd_test_urand(uint64_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return (double) (*rng >> 11) * 0x1p-52 - 1.0;
}

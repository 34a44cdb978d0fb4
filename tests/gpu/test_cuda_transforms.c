// SPDX-License-Identifier: MIT
//
// test_cuda_transforms.c — the transform suite of test_transforms.c
// (tests/util/transform_suite.h) against `fftd --backend cuda`, with f16
// (power-of-two sizes) added. Without FFTD_TEST_GPU=1 in the environment,
// or without a usable GPU (cudaGetDeviceCount fails or finds none), every
// test reports SKIPPED, never passed.

#include "../util/transform_suite.h"

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

static const char *
why_no_gpu(void)
{
	static char why[160];
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
	return NULL;
#else
	snprintf(why, sizeof(why), "built without CUDA (WITH_CUDA=0)");
	return why;
#endif
}

int
main(void)
{
	fftd_suite_config cfg = {
		.name        = "transforms[cuda]",
		.backend     = "cuda",
		.skip_reason = why_no_gpu(),
		.f16         = 1,
	};
	if (cfg.skip_reason != NULL) {
		printf("GPU tests skipped: %s\n", cfg.skip_reason);
	}
	return fftd_suite_main(&cfg);
}

// SPDX-License-Identifier: MIT
//
// gpu.c — see gpu.h.

#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

// SPDX-License-Identifier: MIT
//
// test_cuda_transforms.c — the transform suite of test_transforms.c
// (tests/util/transform_suite.h) against `fftd --backend cuda`, with f16
// (power-of-two sizes) added. Without FFTD_TEST_GPU=1 in the environment,
// or without a usable GPU (cudaGetDeviceCount fails or finds none), every
// test reports SKIPPED, never passed.

#include "../util/gpu.h"
#include "../util/transform_suite.h"

int
main(void)
{
	fftd_suite_config cfg = {
		.name        = "transforms[cuda]",
		.backend     = "cuda",
		.skip_reason = fftd_test_gpu_skip(NULL, 1),
		.f16         = 1,
	};
	return fftd_suite_main(&cfg);
}

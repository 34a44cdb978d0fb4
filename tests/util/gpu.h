// SPDX-License-Identifier: MIT
//
// gpu.h — PRIVATE to fftd's tests. Whether a GPU test may run here; linked
// into the tests/gpu programs only (it calls the CUDA runtime).

#ifndef FFTD_TESTS_GPU_H
#define FFTD_TESTS_GPU_H

// fftd_test_why_no_gpu returns NULL when FFTD_TEST_GPU=1 is set (make
// test-gpu sets it), the build has CUDA and cudaGetDeviceCount finds at
// least min_gpus GPUs; else why not, for the test to print and report its
// tests SKIPPED (never passed). The text is static.
const char *fftd_test_why_no_gpu(int min_gpus);

#endif // FFTD_TESTS_GPU_H

// SPDX-License-Identifier: MIT
//
// gpu.h — PRIVATE to fftd's tests. What the tests/gpu programs share:
// whether a GPU test may run here, the start of their main()s, the fixture
// of one cuda daemon under a device memory budget, and the group runner of
// the kernel-level tests (test_tc16*.c, which call the kernels directly).
// Linked into the tests/gpu programs only (it calls the CUDA runtime).

#ifndef FFTD_TESTS_GPU_H
#define FFTD_TESTS_GPU_H

#include <stddef.h>
#include <stdint.h>

// cmocka's test type, so that this header (and fixture.h) may come before
// <cmocka.h>.
struct CMUnitTest;

#include "../../bench/lib/daemon.h"
#include "fixture.h"

// fftd_test_why_no_gpu returns NULL when FFTD_TEST_GPU=1 is set (make
// test-gpu sets it), the build has CUDA and cudaGetDeviceCount finds at
// least min_gpus GPUs; else why not, for the test to print and report its
// tests SKIPPED (never passed). The text is static.
const char *fftd_test_why_no_gpu(int min_gpus);

// fftd_test_gpu_skip is fftd_test_why_no_gpu(min_gpus), printed as "GPU
// tests skipped: WHY" when not NULL and set as fx's skip_reason (fx NULL:
// none), so that no daemon starts.
const char *fftd_test_gpu_skip(fftd_test_fixture *fx, int min_gpus);

// fftd_test_gpu_start begins the main() of a program of one-GPU tests
// against fx: stdout line-buffered, fftd_test_gpu_skip(fx, 1), and the
// seed printed first when the tests run. Returns the skip reason.
const char *fftd_test_gpu_start(fftd_test_fixture *fx);

// fftd_test_gpu_start_roles begins the main() of a program of one-GPU
// tests that spawns children of its own: a child runs its role from roles
// and exits (fftd_test_child_dispatch); else stdout line-buffered, SIGPIPE
// ignored (a killed child's socket), fftd_test_gpu_skip(fx, 1) and the
// seed printed. Returns the skip reason.
const char *fftd_test_gpu_start_roles(
    int argc, char **argv, const fftd_test_role *roles, fftd_test_fixture *fx);

// fftd_test_gpu_skip_test skips the calling test, printing why, when
// skip_reason is not NULL.
void fftd_test_gpu_skip_test(const char *skip_reason);

// FFTD_TEST_GPU_BUDGET is the device memory budget of
// FFTD_TEST_GPU_BUDGET_FIXTURE's daemon.
#define FFTD_TEST_GPU_BUDGET (256ull << 20)

// fftd_test_cuda_args: a daemon's arguments for the cuda backend.
extern const char *const fftd_test_cuda_args[];

// FFTD_TEST_GPU_BUDGET_FIXTURE(d, c, ms) initialises a fftd_test_fixture:
// the daemon d (the cuda backend, a device memory budget of
// FFTD_TEST_GPU_BUDGET) with its client c, client calls waiting at most ms;
// the teardown fails unless d exits 0.
#define FFTD_TEST_GPU_BUDGET_FIXTURE(d, c, ms)                                   \
	{                                                                        \
		.daemon     = { { (d), (c), "[backend]\ndevice_memory = 256M\n", \
			fftd_test_cuda_args } },                                 \
		.timeout_ms = (ms), .check_exit = 1,                             \
	}

// --- kernel-level tests ----------------------------------------------------

// fftd_test_kernel_run runs the n tests as the cmocka group name, argv[1]
// (if given) a test filter. Its group setup asks cudaGetDeviceCount whether
// this process has a GPU (fftd_test_kernel_need_gpu); FFTD_TEST_GPU plays
// no part, so that the kernels' own checks (kernels/gpu-check.sh) run them.
int fftd_test_kernel_run(int argc, char **argv, const char *name,
    const struct CMUnitTest *tests, size_t n);

// fftd_test_kernel_group is fftd_test_kernel_run for an array of tests.
#define fftd_test_kernel_group(argc, argv, name, tests)                        \
	fftd_test_kernel_run(                                                  \
	    argc, argv, name, tests, sizeof(tests) / sizeof((tests)[0]))

// fftd_test_kernel_need_gpu skips the calling test when the group setup
// found no GPU.
void fftd_test_kernel_need_gpu(void);

// fftd_test_urand steps the xorshift64 generator *rng and returns a
// uniform value in [-1, 1].
double fftd_test_urand(uint64_t *rng);

// FFTD_TEST_NO_CUDA(name) defines the test name, which reports itself
// skipped: the build has no CUDA.
#define FFTD_TEST_NO_CUDA(name)                                                \
	static void name(void **state)                                         \
	{                                                                      \
		(void) state;                                                  \
		skip();                                                        \
	}

#endif // FFTD_TESTS_GPU_H

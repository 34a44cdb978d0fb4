// SPDX-License-Identifier: MIT
//
// test_gpu_devices.c — placement over two GPUs (the suite in
// tests/util/devices_suite.h) on `fftd --backend cuda` with devices = all:
// unpinned executions run on both GPUs and are right, a plan pinned to GPU
// 1 runs only there, a pin past the last GPU is FFTD_ENODEVICE. Inputs
// and outputs are in a shared buffer, so that all submissions are queued
// before the first execution ends. Without FFTD_TEST_GPU=1, a usable GPU
// or a second one, every test reports SKIPPED.

#include "../util/devices_suite.h"
#include "../util/gpu.h"

int
main(void)
{
	static const char *const args[]
	    = { "--backend", "cuda", "--log-level", "info", NULL };
	const devices_suite_config cfg = {
		.name        = "devices[cuda]",
		.config      = "[backend]\ndevices = all\n",
		.args        = args,
		.skip_reason = fftd_test_why_no_gpu(2),
		.use_buffers = 1,
	};
	return devices_suite_run(&cfg);
}

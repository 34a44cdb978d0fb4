// SPDX-License-Identifier: MIT
//
// test_devices.c — placement over several devices (the suite in
// tests/util/devices_suite.h) on a real `fftd --backend fftw` that serves
// the CPU as two devices (backend.cpu_devices = 2, one FFTW thread each),
// the same code path as several GPUs, with inputs and outputs on the
// inline path (libfftd staging off, so the socket path is the one used).

#include "../util/devices_suite.h"

int
main(void)
{
	static const char *const args[]
	    = { "--backend", "fftw", "--log-level", "info", NULL };
	setenv("FFTD_INLINE_STAGING", "0", 1);
	const devices_suite_config cfg = {
		.name   = "devices",
		.config = "[backend]\ncpu_devices = 2\nfftw_threads = 1\n",
		.args   = args,
	};
	return devices_suite_run(&cfg);
}

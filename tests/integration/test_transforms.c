// SPDX-License-Identifier: MIT
//
// test_transforms.c — end-to-end transforms through a real `fftd --backend
// fftw` and libfftd: every kind x rank x precision of the shared case table
// (tests/util/cases.c) against the long double FFTW reference, plus the
// checker's own sanity test, asynchronous and multi-threaded executions and
// refused plans (f16 on the CPU). The suite itself is shared with the GPU
// test (tests/util/transform_suite.h).

#include "../util/transform_suite.h"

int
main(void)
{
	static const fftd_suite_config cfg = {
		.name        = "transforms[fftw]",
		.backend     = "fftw",
		.skip_reason = NULL,
		.f16         = 0,
	};
	return fftd_suite_main(&cfg);
}

// SPDX-License-Identifier: MIT
//
// clock.h — PRIVATE to fftd (daemon, library, tests, benchmarks). The one
// monotonic clock helper: every deadline, latency and rate in the tree is
// measured on CLOCK_MONOTONIC, which NTP steps and suspend do not move
// backwards (clock_gettime(2)).

#ifndef FFTD_COMMON_CLOCK_H
#define FFTD_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

// fftd__mono_ns is CLOCK_MONOTONIC in nanoseconds.
static inline uint64_t
fftd__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

// fftd__mono_ms is CLOCK_MONOTONIC in milliseconds.
static inline int64_t
fftd__mono_ms(void)
{
	return (int64_t) (fftd__mono_ns() / 1000000u);
}

// fftd__mono_s is CLOCK_MONOTONIC in seconds, for rates and reports.
static inline double
fftd__mono_s(void)
{
	return (double) fftd__mono_ns() * 1e-9;
}

#endif // FFTD_COMMON_CLOCK_H

// SPDX-License-Identifier: MIT
//
// connect.h — PRIVATE to fftd's benchmarks: the client of a benchmark's
// daemon, one given by URL or one started for it (bench/lib/daemon.h).

#ifndef FFTD_BENCH_CONNECT_H
#define FFTD_BENCH_CONNECT_H

#include "daemon.h"
#include "fftd.h"

// fftd_bench_connect opens *c, a client of url with timeout_ms, or, when
// url is NULL, of a daemon it starts into *d (spawn: the daemon binary,
// NULL for $FFTD_BIN's; d->pid is 0 when none was started). On failure it
// prints why, prefixed with who, stops the daemon it started and returns
// -1; else 0. The caller closes *c and stops *d (when d->pid is not 0).
int fftd_bench_connect(const char *who, const char *url, const char *spawn,
    int timeout_ms, fftd_test_daemon *d, fftd_client **c);

#endif // FFTD_BENCH_CONNECT_H

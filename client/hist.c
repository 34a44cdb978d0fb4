// SPDX-License-Identifier: MIT
//
// hist.c — the bucket bounds of the daemon's latency histograms, shared by
// the daemon (which fills them and links this object of the library) and
// libfftd (which reads them).

#include <math.h>

#include "fftd.h"
#include "wire.h"

// 1-2.5-5 steps from 10 µs to 10 s, as Prometheus client libraries use.
static const double bounds[FFTD_HIST_BUCKETS - 1]
    = { 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
	      2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };

// fftd_hist_bound is bucket i's upper bound in seconds (+Inf last).
double
fftd_hist_bound(int i)
{
	if (i < 0 || i >= FFTD_HIST_BUCKETS - 1) {
		return INFINITY;
	}
	return bounds[i];
}

// fftd__hist_bucket is the bucket of a duration (client_impl.h, wire.h).
int
fftd__hist_bucket(double seconds)
{
	int i = 0;
	while (i < FFTD_HIST_BUCKETS - 1 && seconds > bounds[i]) {
		i++;
	}
	return i;
}

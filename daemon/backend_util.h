// SPDX-License-Identifier: MIT
//
// backend_util.h — PRIVATE to fftd. Small helpers shared by the backends
// (daemon/backends/*.c): the normalisation factor lives in backend.h; here
// are the host-side steps every CPU path repeats around a transform.

#ifndef FFTD_DAEMON_BACKEND_UTIL_H
#define FFTD_DAEMON_BACKEND_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "layout.h"

// fftd__host_scale multiplies nreal reals of precision p (f64 or f32) in buf
// by factor. f16 is left alone (no CPU backend computes in f16).
void fftd__host_scale(void *buf, fftd_precision p, size_t nreal, double factor);

// fftd__side_has_gaps says whether side sd of a batch of rank-dimensional
// transforms has extent elements outside its layout, by counting: the
// layout's batch * prod(n) elements fill the extent exactly when there are
// none. (It does not rely on sd->dense alone, which is false-positive for
// embed[0] > n[0] with batch > 1.)
bool fftd__side_has_gaps(const fftd__side *sd, int rank, int64_t batch);

// fftd__host_prepare_out zeroes the whole output extent of s in out when
// the output layout has gaps, so that after the transform (which writes
// only layout elements) every gap element reads zero. Does nothing for a
// dense output.
void fftd__host_prepare_out(void *out, const fftd__shape *s);

// fftd__host_finish applies s->norm to the whole output extent of s in out
// (gap elements are zero, so scaling them too is harmless and keeps the
// loop a flat one).
void fftd__host_finish(void *out, const fftd__shape *s);

// fftd__out_reals is the number of reals in the output extent of s.
size_t fftd__out_reals(const fftd__shape *s);

#endif // FFTD_DAEMON_BACKEND_UTIL_H

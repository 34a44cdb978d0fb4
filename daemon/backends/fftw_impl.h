// SPDX-License-Identifier: MIT
//
// fftw_impl.h — PRIVATE to fftd's fftw backend. What its files share beyond
// the fftd__backend interface: FFTW's planner lock and the device's thread
// count (owned by fftw.c), and the matched-filter bank (fftw_mf.c), which
// fftw.c's vtable names as its mf_bank.

#ifndef FFTD_DAEMON_FFTW_IMPL_H
#define FFTD_DAEMON_FFTW_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

struct fftd__mf_args; // mf.h

// fftd__fftw_planner_lock is the lock every FFTW planner call (plan,
// destroy, plan_with_nthreads, both precisions) of the daemon holds: FFTW's
// planner is global to each precision's library and not thread-safe.
pthread_mutex_t *fftd__fftw_planner_lock(void);

// fftd__fftw_nthreads is the FFTW threads per execution of device dev
// ([devices] fftw_threads, set at open; 1 before open). Any thread.
int fftd__fftw_nthreads(const fftd__device *dev);

// fftd__fftw_mf_bank runs the matched-filter bank a (mf.h) on the CPU:
// the "device pointers" are the daemon's host memory. See fftw_mf.c.
int fftd__fftw_mf_bank(
    fftd__device *dev, struct fftd__mf_args *a, char *msg, size_t msglen);

// fftw_auto.c: accuracy-aware "auto" (fftd__fftw_measure is the vtable's
// measure; the conversions serve "fftw-f32", f64 data through FFTW's f32
// planner). Each says what it does above its definition.
int  fftd__fftw_to_f32(float *dst, const double *src, size_t n, int64_t points);
void fftd__fftw_from_f32(double *dst, const float *src, size_t n, int e);
// fftd__fftw_from_i8 converts n int8 values at src exactly to doubles
// (f64) or floats at dst (fftd_plan_desc.input = FFTD_INPUT_I8).
void fftd__fftw_from_i8(void *dst, bool f64, const void *src, uint64_t n);
int  fftd__fftw_measure(fftd__device *dev, void *plan, const fftd__shape *s,
     uint64_t *ns, char *msg, size_t msglen);

#endif // FFTD_DAEMON_FFTW_IMPL_H

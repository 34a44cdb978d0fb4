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

#endif // FFTD_DAEMON_FFTW_IMPL_H

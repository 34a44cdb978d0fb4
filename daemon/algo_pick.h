// SPDX-License-Identifier: MIT
//
// algo_pick.h — PRIVATE to fftd. Accuracy-aware "auto" on a device's
// planner thread: the candidates of a plan with a tolerance planned in the
// device's cache, timed once (speed table, algo_table.h), and the fastest
// one within the tolerance kept (fftd__algo_choose). plan.c and exec.c
// call it; it calls the plan cache and the backend.

#ifndef FFTD_DAEMON_ALGO_PICK_H
#define FFTD_DAEMON_ALGO_PICK_H

#include <stddef.h>

#include "backend.h"
#include "layout.h"
#include "plan_cache.h"

// fftd__algo_pick plans shape s with the fastest algorithm of dev's
// backend whose error bound (common/errtable.h) at this size is within
// tol (> 0), or the backend's default at the data's precision (which is
// also what it runs when nothing else fits). On success *e holds the
// chosen plan's cache entry (one reference), key the name the backend
// planned it under (what exec.c plans it under on other devices) and
// name what fftd_plan_algorithm reports. Runs on the device's planner
// thread (or its worker when the backend has no planner). Errors: the
// default's planning errors.
int fftd__algo_pick(fftd__cache *cache, fftd__device *dev, const fftd__shape *s,
    double tol, char key[16], char name[16], fftd__cache_entry **e, char *msg,
    size_t msglen);

#endif // FFTD_DAEMON_ALGO_PICK_H

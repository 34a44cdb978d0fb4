// SPDX-License-Identifier: MIT
//
// planner.h — PRIVATE to fftd. A device's planner thread: it runs the
// plan cache's slow work (making plans, and destroying them when entries
// are released or evicted) beside the device's worker, so that a plan that
// takes FFTW seconds to make holds up no client's executions. Jobs run one
// at a time in the order posted. Only for backends whose plan and destroy
// may run off the worker (backend.h: plan_any_thread); the worker starts
// and stops it (worker.h: fftd__worker_post_plan).

#ifndef FFTD_DAEMON_PLANNER_H
#define FFTD_DAEMON_PLANNER_H

#include <stddef.h>

#include "worker.h"

typedef struct fftd__planner fftd__planner;

// fftd__planner_start starts the planner thread of worker w; its jobs run
// as fn(w, job). Returns FFTD_OK, FFTD_ENOMEM or FFTD_ESYSERR.
int fftd__planner_start(fftd__planner **pp, fftd__worker *w);

// fftd__planner_post queues a job (never fails; the job's memory is the
// caller's to provide and the job function's to free).
void fftd__planner_post(fftd__planner *p, fftd__job *job);

// fftd__planner_load is the number of jobs queued or running.
size_t fftd__planner_load(const fftd__planner *p);

// fftd__planner_stop runs every job still queued, joins the thread and
// frees the planner. NULL is ignored.
void fftd__planner_stop(fftd__planner *p);

#endif // FFTD_DAEMON_PLANNER_H

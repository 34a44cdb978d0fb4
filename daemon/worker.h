// SPDX-License-Identifier: MIT
//
// worker.h — PRIVATE to fftd. One worker thread per device: it opens the
// device (and so owns its CUDA context, streams and FFTW planner use), owns
// the device's plan cache, and runs the jobs posted to it one at a time in
// order. Everything that touches a backend or a plan cache runs here.

#ifndef FFTD_DAEMON_WORKER_H
#define FFTD_DAEMON_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "plan_cache.h"

typedef struct fftd__worker fftd__worker;
typedef struct fftd__job    fftd__job;

// fftd__job_fn runs a job on the worker's thread; it owns the job then.
typedef void (*fftd__job_fn)(fftd__worker *w, fftd__job *job);

// fftd__job is embedded at the start of each kind of job.
struct fftd__job {
	fftd__job_fn fn;
	fftd__job   *next;
};

// fftd__worker_start starts the worker of device `local` of backend be,
// known to clients as device `index`, and waits until the device is open.
// Returns FFTD_OK, or an error with err filled (no thread is left).
int fftd__worker_start(fftd__worker **wp, const fftd__backend *be, int local,
    int index, const fftd__backend_config *cfg, uint64_t cache_budget,
    char *err, size_t errlen);

// fftd__worker_post queues a job (never fails; the job's memory is the
// caller's to provide and the job function's to free).
void fftd__worker_post(fftd__worker *w, fftd__job *job);

// fftd__worker_call runs fn(w, arg) on the worker's thread, after the jobs
// queued before it, and returns its result (blocking the caller).
int fftd__worker_call(
    fftd__worker *w, int (*fn)(fftd__worker *w, void *arg), void *arg);

// fftd__worker_flush waits until no job is queued or running.
void fftd__worker_flush(fftd__worker *w);

// fftd__worker_stop runs every job still queued, closes the plan cache and
// the device, joins the thread and frees the worker.
void fftd__worker_stop(fftd__worker *w);

// fftd__worker_device is the worker's device (name, index, backend).
const fftd__device *fftd__worker_device(const fftd__worker *w);

// fftd__worker_cache is the worker's plan cache (only for use on the
// worker's own thread, except fftd__cache_get_stats).
fftd__cache *fftd__worker_cache(fftd__worker *w);

// fftd__worker_load is the number of jobs queued or running, for placing
// new plans on the least-loaded device.
size_t fftd__worker_load(const fftd__worker *w);

#endif // FFTD_DAEMON_WORKER_H

// SPDX-License-Identifier: MIT
//
// worker.h — PRIVATE to fftd. One worker thread per device: it opens the
// device (and so owns its CUDA context, streams and FFTW planner use), owns
// the device's plan cache, and runs the jobs posted to it one at a time.
// Executions and a backend's open and close run here. Plans are made and
// destroyed on the device's planner thread (fftd__worker_post_plan) beside
// the worker where the backend allows it (both backends do), else here;
// host_register runs on the fd socket's thread, host_unregister and
// plan_estimate on whichever thread needs them (backend.h). With the
// realtime lane a device has two workers, which share its CUDA context.
//
// The worker is also the device's scheduler. Control jobs (planning, plan
// release) run first, in order. Client work is queued
// per flow (one client connection in one priority class): realtime flows
// are served before batch flows, and within a class the backlogged flow
// with the least virtual time goes next, a flow's virtual time advancing by
// the device time its jobs used divided by its weight. That is start-time
// fair queueing (Goyal, Vin, Cheng, SIGCOMM 1996) with the cost of each job
// charged after it ran, so flows share measured device time in proportion
// to their weights whatever their request sizes; a flow that empties and
// comes back starts at most 2 ms (weighted) behind the class's current
// virtual time, so idling earns no credit beyond what a round trip costs.
// Jobs past their deadline are dropped instead of started.

#ifndef FFTD_DAEMON_WORKER_H
#define FFTD_DAEMON_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "clock.h"
#include "plan_cache.h"

typedef struct fftd__worker fftd__worker;
typedef struct fftd__job    fftd__job;

// fftd__job_fn runs a job on the worker's thread; it owns the job then.
typedef void (*fftd__job_fn)(fftd__worker *w, fftd__job *job);

// fftd__job_drop_fn disposes of a job that will not run (canceled,
// expired, or its client gone): it must answer and free it. It runs on the
// thread that dropped the job, with no worker lock held.
typedef void (*fftd__job_drop_fn)(fftd__worker *w, fftd__job *job, int status);

// fftd__job is embedded at the start of each kind of job. Control jobs
// leave the scheduling fields zero.
struct fftd__job {
	fftd__job_fn fn;
	fftd__job   *next;
	// scheduling (client work): flow != 0
	fftd__job_drop_fn drop;
	uint32_t          flow;        // client connection id (NNG pipe)
	int               realtime;    // priority class
	double            weight;      // the flow's weight (> 0)
	uint64_t          tag;         // client's request tag, 0: none
	uint64_t          deadline_ns; // CLOCK_MONOTONIC start limit, 0: none
	uint64_t          enqueue_ns;  // when it was posted (set by post)
	uint64_t          cost_ns;     // expected device time (placement)
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

// fftd__worker_post_plan queues a job that makes or releases plans of w's
// cache: on the device's planner thread (planner.h) when the backend may
// plan off the worker, so that slow planning holds up no execution; else
// on the worker, as a control job. The job runs as fn(w, job) either way.
void fftd__worker_post_plan(fftd__worker *w, fftd__job *job);

// fftd__worker_on_planner says whether w's plans are made on a planner
// thread (then no job function on w's worker may plan).
bool fftd__worker_on_planner(const fftd__worker *w);

// fftd__worker_charge sets what the client job now running on w is
// charged for fair sharing, in ns, instead of the time the worker measures
// around it: the job's own device time, so that the shares the scheduler
// keeps are the shares the statistics report. Only from a job function.
void fftd__worker_charge(fftd__worker *w, uint64_t ns);

// fftd__worker_cancel drops the queued client jobs of flow whose tag is tag
// (every job of the flow when tag is 0), calling their drop functions with
// status on the caller's thread. Returns how many were dropped.
int fftd__worker_cancel(
    fftd__worker *w, uint32_t flow, uint64_t tag, int status);

// fftd__worker_flush waits until no job is queued or running (on the
// worker or its planner).
void fftd__worker_flush(fftd__worker *w);

// fftd__worker_stop runs every job still queued (the planner's first),
// closes the plan cache and the device, joins the threads and frees the
// worker.
void fftd__worker_stop(fftd__worker *w);

// fftd__worker_set_busy_poll makes the worker poll its queue for ns (0:
// never) after each job before it sleeps (busypoll.h). Any thread.
void fftd__worker_set_busy_poll(fftd__worker *w, uint64_t ns);

// fftd__worker_device is the worker's device (name, index, backend).
const fftd__device *fftd__worker_device(const fftd__worker *w);

// fftd__worker_cache is the worker's plan cache (locked: for the worker's
// and its planner's jobs).
fftd__cache *fftd__worker_cache(fftd__worker *w);

// fftd__worker_load is the number of jobs queued or running.
size_t fftd__worker_load(const fftd__worker *w);

// fftd__worker_backlog_ns is the expected device time of the client jobs
// queued or running (the sum of their cost_ns), for placing executions on
// the least-loaded device.
uint64_t fftd__worker_backlog_ns(const fftd__worker *w);

// fftd__worker_stats is what the worker measured.
typedef struct fftd__worker_stats {
	uint64_t busy_ns;      // device time of client jobs, total
	uint64_t executes;     // client jobs run
	uint64_t memory_used;  // bytes the backend holds (after the last job)
	uint64_t ipc_mappings; // CUDA IPC allocations mapped (likewise)
	size_t   queued;       // jobs queued or running
} fftd__worker_stats;

void fftd__worker_get_stats(const fftd__worker *w, fftd__worker_stats *st);

#endif // FFTD_DAEMON_WORKER_H

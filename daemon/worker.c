// SPDX-License-Identifier: MIT
//
// worker.c — the per-device worker thread and its scheduler (worker.h).

#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "busypoll.h"
#include "log.h"
#include "planner.h"

// LAG_NS is how far behind the class's virtual time a flow that went idle
// may come back (weighted device time, ns).
#define LAG_NS 2e6

// A flow: the queued client jobs of one connection in one class.
typedef struct flow flow;
struct flow {
	uint32_t   id;
	int        realtime;
	double     vt;   // virtual time, ns of device time / weight
	fftd__job *head; // NULL: idle
	flow      *next;
};

struct fftd__worker {
	fftd__device         dev;
	fftd__backend_config cfg;
	fftd__cache         *cache;
	uint64_t             cache_budget;
	fftd__planner       *planner; // NULL: plans are made here
	pthread_t            thread;
	pthread_mutex_t      mtx;
	pthread_cond_t       cv;
	fftd__job           *head, *tail; // control jobs
	flow                *flows;       // flows of live connections
	double               vtime[2];    // per class: virtual time now
	_Atomic size_t       load;
	_Atomic uint64_t     busy_poll_ns; // busypoll.h; 0 off
	_Atomic uint64_t     backlog_ns;
	_Atomic uint64_t     busy_ns, executes, memory_used, ipc_mappings;
	uint64_t           charge_ns; // set by the running job (worker thread)
	bool               charged;
	fftd__job *_Atomic running; // the client job running now
	bool               handed;  // it went to the planner: not an execution
	bool               stopping;
	// start-up handshake
	bool open_done;
	int  open_rv;
	char open_msg[256];
};

static double
job_weight(const fftd__job *job)
{
	return job->weight > 0 ? job->weight : 1.0;
}

// find_flow returns flow (id, realtime) or NULL (worker lock held).
static flow *
find_flow(fftd__worker *w, uint32_t id, int realtime)
{
	flow *f = w->flows;
	while (f != NULL && (f->id != id || f->realtime != realtime)) {
		f = f->next;
	}
	return f;
}

// next_job takes the next job to run (worker lock held): a control job,
// else the head of the backlogged realtime flow with the least virtual
// time, else the same among batch flows.
static fftd__job *
next_job(fftd__worker *w)
{
	if (w->head != NULL) {
		fftd__job *job = w->head;
		w->head        = job->next;
		if (w->head == NULL) {
			w->tail = NULL;
		}
		return job;
	}
	flow *best = NULL;
	for (flow *f = w->flows; f != NULL; f = f->next) {
		if (f->head != NULL
		    && (best == NULL || f->realtime > best->realtime
		        || (f->realtime == best->realtime
		            && f->vt < best->vt))) {
			best = f;
		}
	}
	if (best == NULL) {
		return NULL;
	}
	fftd__job *job           = best->head;
	best->head               = job->next;
	w->vtime[best->realtime] = best->vt; // the start tag in service
	return job;
}

// note_memory stores what the backend holds after a job (device memory,
// IPC mappings) for the statistics, which read it from any thread.
static void
note_memory(fftd__worker *w)
{
	if (w->dev.backend->memory_in_use != NULL) {
		atomic_store(
		    &w->memory_used, w->dev.backend->memory_in_use(&w->dev));
	}
	if (w->dev.backend->ipc_mappings != NULL) {
		atomic_store(
		    &w->ipc_mappings, w->dev.backend->ipc_mappings(&w->dev));
	}
}

static void *
worker_main(void *arg)
{
	fftd__worker *w        = arg;
	char          msg[256] = "";
	int rv = w->dev.backend->open(&w->dev, &w->cfg, msg, sizeof(msg));
	if (rv == FFTD_OK) {
		rv = fftd__cache_create(&w->cache, &w->dev, w->cache_budget);
		if (rv != FFTD_OK) {
			w->dev.backend->close(&w->dev);
			snprintf(
			    msg, sizeof(msg), "cannot create the plan cache");
		}
	}
	pthread_mutex_lock(&w->mtx);
	w->open_done = true;
	w->open_rv   = rv;
	snprintf(w->open_msg, sizeof(w->open_msg), "%s", msg);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	if (rv != FFTD_OK) {
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&w->mtx);
		fftd__job *job  = next_job(w);
		uint64_t   busy = atomic_load(&w->busy_poll_ns);
		if (job == NULL && !w->stopping && busy > 0) {
			// Poll for the next job a while before sleeping: a
			// client's next request usually follows its answer, and
			// a wake-up costs more (busypoll.h). load counts the
			// jobs posted and not yet run.
			pthread_mutex_unlock(&w->mtx);
			uint64_t until = fftd__mono_ns() + busy;
			while (atomic_load(&w->load) == 0
			    && fftd__mono_ns() < until) {
				fftd__cpu_relax();
			}
			pthread_mutex_lock(&w->mtx);
			job = next_job(w);
		}
		while (job == NULL && !w->stopping) {
			pthread_cond_wait(&w->cv, &w->mtx);
			job = next_job(w);
		}
		if (job == NULL) { // stopping and nothing left
			pthread_mutex_unlock(&w->mtx);
			break;
		}
		pthread_mutex_unlock(&w->mtx);
		job->next = NULL;
		if (job->flow == 0) {
			job->fn(w, job);
			// Control jobs free memory too (plan releases, arrays).
			note_memory(w);
			atomic_fetch_sub(&w->load, 1);
			continue;
		}
		uint64_t cost   = job->cost_ns;
		uint32_t id     = job->flow;
		int      rt     = job->realtime != 0;
		double   weight = job_weight(job);
		uint64_t t0     = fftd__mono_ns();
		bool     ran = job->deadline_ns == 0 || t0 <= job->deadline_ns;
		w->charged   = false;
		w->handed    = false;
		atomic_store(&w->running, job);
		if (ran) {
			job->fn(w, job);
		} else {
			job->drop(w, job, FFTD_EDEADLINE);
		}
		uint64_t dt = ran ? fftd__mono_ns() - t0 : 0;
		atomic_fetch_add(&w->busy_ns, dt);
		atomic_store(&w->running, NULL);
		atomic_fetch_add(&w->executes, ran && !w->handed);
		note_memory(w);
		// Charge the measured time to the flow, unless its connection
		// closed meanwhile (the job itself is freed by now: use the
		// copies taken before it ran).
		pthread_mutex_lock(&w->mtx);
		flow *f = find_flow(w, id, rt);
		if (f != NULL) {
			f->vt += (double) (w->charged ? w->charge_ns : dt)
			    / weight;
		}
		pthread_mutex_unlock(&w->mtx);
		atomic_fetch_sub(&w->backlog_ns, cost);
		atomic_fetch_sub(&w->load, 1);
	}
	while (w->flows != NULL) {
		flow *f  = w->flows;
		w->flows = f->next;
		free(f);
	}
	fftd__cache_destroy(w->cache);
	w->cache = NULL;
	w->dev.backend->close(&w->dev);
	return NULL;
}

int
fftd__worker_start(fftd__worker **wp, const fftd__backend *be, int local,
    int index, const fftd__backend_config *cfg, uint64_t cache_budget,
    char *err, size_t errlen)
{
	fftd__worker *w = calloc(1, sizeof(*w));
	if (w == NULL) {
		snprintf(err, errlen, "out of memory");
		return FFTD_ENOMEM;
	}
	w->dev.backend = be;
	w->dev.local   = local;
	w->dev.index   = index;
	snprintf(w->dev.name, sizeof(w->dev.name), "%s:%d", be->name, local);
	w->cfg          = *cfg;
	w->cache_budget = cache_budget;
	pthread_mutex_init(&w->mtx, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		snprintf(err, errlen, "cannot start a worker thread");
		pthread_mutex_destroy(&w->mtx);
		pthread_cond_destroy(&w->cv);
		free(w);
		return FFTD_ESYSERR;
	}
	pthread_mutex_lock(&w->mtx);
	while (!w->open_done) {
		pthread_cond_wait(&w->cv, &w->mtx);
	}
	pthread_mutex_unlock(&w->mtx);
	if (w->open_rv != FFTD_OK) {
		pthread_join(w->thread, NULL);
		snprintf(err, errlen, "%s device %d: %s", be->name, local,
		    w->open_msg[0] ? w->open_msg : fftd_strerror(w->open_rv));
		int rv = w->open_rv;
		pthread_mutex_destroy(&w->mtx);
		pthread_cond_destroy(&w->cv);
		free(w);
		return rv;
	}
	if (be->plan_any_thread
	    && fftd__planner_start(&w->planner, w) != FFTD_OK) {
		fftd__log(FFTD_LOG_WARN,
		    "%s: no planner thread; plans are made on the worker",
		    w->dev.name);
		w->planner = NULL;
	}
	*wp = w;
	return FFTD_OK;
}

// append_control queues a control job (worker lock held).
static void
append_control(fftd__worker *w, fftd__job *job)
{
	if (w->tail) {
		w->tail->next = job;
	} else {
		w->head = job;
	}
	w->tail = job;
}

void
fftd__worker_post(fftd__worker *w, fftd__job *job)
{
	job->next       = NULL;
	job->enqueue_ns = fftd__mono_ns();
	atomic_fetch_add(&w->load, 1);
	pthread_mutex_lock(&w->mtx);
	if (job->flow == 0) {
		append_control(w, job);
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mtx);
		return;
	}
	atomic_fetch_add(&w->backlog_ns, job->cost_ns);
	int   rt = job->realtime != 0;
	flow *f  = find_flow(w, job->flow, rt);
	if (f == NULL && (f = calloc(1, sizeof(*f))) != NULL) {
		f->id       = job->flow;
		f->realtime = rt;
		f->vt       = w->vtime[rt]; // a new client starts even
		f->next     = w->flows;
		w->flows    = f;
	}
	if (f == NULL) {
		// No memory for a flow: the job still runs, as control work.
		job->flow = 0;
		append_control(w, job);
	} else {
		if (f->head == NULL && f->vt < w->vtime[rt] - LAG_NS) {
			// Back from idle: no credit for the time away, but a
			// client that drained its queue for a moment (its next
			// requests in flight to us) keeps up to LAG_NS of what
			// it was owed, or clients of small requests and a short
			// pipeline would lose share at every round trip.
			f->vt = w->vtime[rt] - LAG_NS;
		}
		fftd__job **pp = &f->head; // FIFO within a flow
		while (*pp != NULL) {
			pp = &(*pp)->next;
		}
		*pp = job;
	}
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mtx);
}

void
fftd__worker_post_plan(fftd__worker *w, fftd__job *job)
{
	if (w->planner != NULL) {
		if (job == atomic_load(&w->running)) {
			w->handed = true; // only the worker's thread runs it
		}
		fftd__planner_post(w->planner, job);
	} else {
		job->flow = 0;
		fftd__worker_post(w, job);
	}
}

bool
fftd__worker_on_planner(const fftd__worker *w)
{
	return w->planner != NULL;
}

void
fftd__worker_charge(fftd__worker *w, uint64_t ns)
{
	w->charge_ns = ns;
	w->charged   = true;
}

int
fftd__worker_cancel(fftd__worker *w, uint32_t flow_id, uint64_t tag, int status)
{
	fftd__job *dropped = NULL, **dtail = &dropped;
	pthread_mutex_lock(&w->mtx);
	for (flow **fp = &w->flows; *fp != NULL;) {
		flow *f = *fp;
		if (f->id != flow_id) {
			fp = &f->next;
			continue;
		}
		for (fftd__job **pp = &f->head; *pp != NULL;) {
			fftd__job *j = *pp;
			if (tag == 0 || j->tag == tag) {
				*pp     = j->next;
				j->next = NULL;
				*dtail  = j;
				dtail   = &j->next;
			} else {
				pp = &j->next;
			}
		}
		if (tag == 0) { // the connection is gone: forget its flow
			*fp = f->next;
			free(f);
		} else {
			fp = &f->next;
		}
	}
	pthread_mutex_unlock(&w->mtx);
	int n = 0;
	for (fftd__job *j = dropped, *next; j != NULL; j = next) {
		next = j->next;
		atomic_fetch_sub(&w->backlog_ns, j->cost_ns);
		j->drop(w, j, status);
		atomic_fetch_sub(&w->load, 1);
		n++;
	}
	return n;
}

void
fftd__worker_flush(fftd__worker *w)
{
	// Only used at shutdown, so a short sleep loop is simpler than a
	// second condition variable on the hot path.
	while (atomic_load(&w->load) > 0
	    || (w->planner != NULL && fftd__planner_load(w->planner) > 0)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

void
fftd__worker_stop(fftd__worker *w)
{
	if (w == NULL) {
		return;
	}
	// The planner first: its last jobs use the cache (and may post
	// executions here), which the worker's thread destroys when it ends.
	fftd__planner_stop(w->planner);
	w->planner = NULL;
	pthread_mutex_lock(&w->mtx);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->mtx);
	pthread_cond_destroy(&w->cv);
	free(w);
}

void
fftd__worker_set_busy_poll(fftd__worker *w, uint64_t ns)
{
	atomic_store(&w->busy_poll_ns, ns);
}

const fftd__device *
fftd__worker_device(const fftd__worker *w)
{
	return &w->dev;
}

fftd__cache *
fftd__worker_cache(fftd__worker *w)
{
	return w->cache;
}

size_t
fftd__worker_load(const fftd__worker *w)
{
	return atomic_load(&((fftd__worker *) w)->load);
}

uint64_t
fftd__worker_backlog_ns(const fftd__worker *w)
{
	return atomic_load(&((fftd__worker *) w)->backlog_ns);
}

void
fftd__worker_get_stats(const fftd__worker *cw, fftd__worker_stats *st)
{
	fftd__worker *w  = (fftd__worker *) cw;
	st->busy_ns      = atomic_load(&w->busy_ns);
	st->executes     = atomic_load(&w->executes);
	st->memory_used  = atomic_load(&w->memory_used);
	st->ipc_mappings = atomic_load(&w->ipc_mappings);
	st->queued       = atomic_load(&w->load);
}

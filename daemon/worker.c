// SPDX-License-Identifier: MIT
//
// worker.c — the per-device worker thread and its FIFO job queue.

#include "worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

struct fftd__worker {
	fftd__device         dev;
	fftd__backend_config cfg;
	fftd__cache         *cache;
	uint64_t             cache_budget;
	pthread_t            thread;
	pthread_mutex_t      mtx;
	pthread_cond_t       cv;
	fftd__job           *head, *tail;
	_Atomic size_t       load;
	bool                 stopping;
	// start-up handshake
	bool open_done;
	int  open_rv;
	char open_msg[256];
};

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
		while (w->head == NULL && !w->stopping) {
			pthread_cond_wait(&w->cv, &w->mtx);
		}
		fftd__job *job = w->head;
		if (job == NULL) { // stopping and nothing left
			pthread_mutex_unlock(&w->mtx);
			break;
		}
		w->head = job->next;
		if (w->head == NULL) {
			w->tail = NULL;
		}
		pthread_mutex_unlock(&w->mtx);
		job->next = NULL;
		job->fn(w, job);
		atomic_fetch_sub(&w->load, 1);
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
	*wp = w;
	return FFTD_OK;
}

void
fftd__worker_post(fftd__worker *w, fftd__job *job)
{
	job->next = NULL;
	atomic_fetch_add(&w->load, 1);
	pthread_mutex_lock(&w->mtx);
	if (w->tail) {
		w->tail->next = job;
	} else {
		w->head = job;
	}
	w->tail = job;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mtx);
}

typedef struct call_job {
	fftd__job job;
	int (*fn)(fftd__worker *, void *);
	void           *arg;
	int             rv;
	bool            done;
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
} call_job;

static void
call_job_run(fftd__worker *w, fftd__job *job)
{
	call_job *cj = (call_job *) job;
	int       rv = cj->fn(w, cj->arg);
	pthread_mutex_lock(&cj->mtx);
	cj->rv   = rv;
	cj->done = true;
	pthread_cond_signal(&cj->cv);
	pthread_mutex_unlock(&cj->mtx);
}

int
fftd__worker_call(
    fftd__worker *w, int (*fn)(fftd__worker *w, void *arg), void *arg)
{
	call_job cj = { .fn = fn, .arg = arg };
	pthread_mutex_init(&cj.mtx, NULL);
	pthread_cond_init(&cj.cv, NULL);
	cj.job.fn = call_job_run;
	fftd__worker_post(w, &cj.job);
	pthread_mutex_lock(&cj.mtx);
	while (!cj.done) {
		pthread_cond_wait(&cj.cv, &cj.mtx);
	}
	pthread_mutex_unlock(&cj.mtx);
	pthread_mutex_destroy(&cj.mtx);
	pthread_cond_destroy(&cj.cv);
	return cj.rv;
}

void
fftd__worker_flush(fftd__worker *w)
{
	// Only used at shutdown, so a short sleep loop is simpler than a
	// second condition variable on the hot path.
	while (atomic_load(&w->load) > 0) {
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
	pthread_mutex_lock(&w->mtx);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->mtx);
	pthread_cond_destroy(&w->cv);
	free(w);
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

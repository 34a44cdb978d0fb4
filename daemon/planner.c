// SPDX-License-Identifier: MIT
//
// planner.c — a device's planner thread (planner.h): a FIFO of jobs, one
// thread, a condition variable.

#include "planner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct fftd__planner {
	fftd__worker   *w;
	pthread_t       thread;
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	fftd__job      *head, *tail;
	_Atomic size_t  load;
	bool            stopping;
};

// planner_main runs jobs until stopped and nothing is left.
static void *
planner_main(void *arg)
{
	fftd__planner *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mtx);
		while (p->head == NULL && !p->stopping) {
			pthread_cond_wait(&p->cv, &p->mtx);
		}
		fftd__job *job = p->head;
		if (job == NULL) { // stopping and nothing left
			pthread_mutex_unlock(&p->mtx);
			return NULL;
		}
		p->head = job->next;
		if (p->head == NULL) {
			p->tail = NULL;
		}
		pthread_mutex_unlock(&p->mtx);
		job->next = NULL;
		job->fn(p->w, job);
		atomic_fetch_sub(&p->load, 1);
	}
}

int
fftd__planner_start(fftd__planner **pp, fftd__worker *w)
{
	fftd__planner *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return FFTD_ENOMEM;
	}
	p->w = w;
	pthread_mutex_init(&p->mtx, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, planner_main, p) != 0) {
		pthread_mutex_destroy(&p->mtx);
		pthread_cond_destroy(&p->cv);
		free(p);
		return FFTD_ESYSERR;
	}
	*pp = p;
	return FFTD_OK;
}

void
fftd__planner_post(fftd__planner *p, fftd__job *job)
{
	job->next = NULL;
	atomic_fetch_add(&p->load, 1);
	pthread_mutex_lock(&p->mtx);
	if (p->tail != NULL) {
		p->tail->next = job;
	} else {
		p->head = job;
	}
	p->tail = job;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mtx);
}

size_t
fftd__planner_load(const fftd__planner *p)
{
	return atomic_load(&((fftd__planner *) p)->load);
}

void
fftd__planner_stop(fftd__planner *p)
{
	if (p == NULL) {
		return;
	}
	pthread_mutex_lock(&p->mtx);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mtx);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mtx);
	pthread_cond_destroy(&p->cv);
	free(p);
}

// SPDX-License-Identifier: MIT
//
// plan.c — floor 1 of the NNG server (server_impl.h): plan handles, what a
// client's plan id stands for. PlanCreate (validated, counted against the
// client's limits, planned on its home device), PlanDestroy, and the
// handle's references, whose last one gives the plan's cache entries back
// on their own devices. Executions of a plan (and their planning on other
// devices) are exec.c's. Calls reply.c only.
//
// Threads: fftd__plan_create and fftd__plan_destroy run on NNG's task
// threads; plan_job_run and release_job_run on the device's planner thread,
// or its worker when the backend plans there (fftd__worker_post_plan);
// fftd__plan_unref on any thread. Locks: the session's plan list and plan
// counts are under the server lock; refs, releases_left, entries and
// est_ns are atomics.

#include "server_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_pick.h"
#include "algo_table.h"
#include "log.h"

// A PlanCreate on its way to the home device's worker or planner.
typedef struct plan_job {
	fftd__job     job; // must be first
	fftd__ctx    *ctx;
	fftd__handle *h;
} plan_job;

// release_job_run gives one cache entry of a plan back (on the worker or
// planner of that entry's device); the last one frees the handle.
static void
release_job_run(fftd__worker *w, fftd__job *job)
{
	fftd__release_job *rj = (fftd__release_job *) job;
	fftd__handle      *h  = rj->h;
	fftd__cache_release(
	    fftd__worker_cache(w), atomic_load(&h->entries[rj->wi]));
	if (atomic_fetch_sub(&h->releases_left, 1) == 1) {
		free(h);
	}
}

// fftd__plan_unref drops one reference; the last one gives the plan's cache
// entries back, each on its own worker's thread.
void
fftd__plan_unref(fftd__server *s, fftd__handle *h)
{
	if (atomic_fetch_sub(&h->refs, 1) != 1) {
		return;
	}
	atomic_fetch_sub(&s->n_plans, 1);
	int n = 0;
	for (int i = 0; i < s->nworkers; i++) {
		n += atomic_load(&h->entries[i]) != NULL;
	}
	if (n == 0) {
		free(h);
		return;
	}
	atomic_store(&h->releases_left, n);
	// Once the n-th job is posted its worker may free h: the loop must
	// not read h again (posted < n is tested before h->entries).
	int posted = 0;
	for (int i = 0; i < s->nworkers && posted < n; i++) {
		if (atomic_load(&h->entries[i]) != NULL) {
			posted++;
			h->rel[i].job.fn = release_job_run;
			h->rel[i].h      = h;
			h->rel[i].wi     = i;
			fftd__worker_post_plan(
			    fftd__lane(s, h->realtime)[i], &h->rel[i].job);
		}
	}
}

// pick_algorithm resolves the algorithm a plan asks for (auto: the
// backend's first) against what backend be serves.
static int
pick_algorithm(const fftd__backend *be, const char *want, const fftd__shape *sh,
    char out[16], char *msg, size_t msglen)
{
	(void) sh;
	if (want == NULL || want[0] == '\0' || strcmp(want, "auto") == 0) {
		snprintf(out, 16, "%s", be->algorithms[0]);
		return FFTD_OK;
	}
	for (const char *const *a = be->algorithms; *a != NULL; a++) {
		if (strcmp(*a, want) == 0) {
			snprintf(out, 16, "%s", want);
			return FFTD_OK;
		}
	}
	int n = snprintf(msg, msglen,
	    "algorithm \"%.32s\" is not served by the %s "
	    "backend (served:",
	    want, be->name);
	for (const char *const *a = be->algorithms;
	     *a != NULL && n > 0 && (size_t) n < msglen; a++) {
		n += snprintf(msg + n, msglen - (size_t) n, " %s", *a);
	}
	if (n > 0 && (size_t) n < msglen) {
		snprintf(msg + n, msglen - (size_t) n, ")");
	}
	return FFTD_EUNSUPPORTED;
}

// plan_job_run makes a new plan in its home device's cache (worker or
// planner thread), lists it in its session and answers the PlanCreate.
static void
plan_job_run(fftd__worker *w, fftd__job *job)
{
	plan_job     *pj       = (plan_job *) job;
	fftd__handle *h        = pj->h;
	fftd__ctx    *c        = pj->ctx;
	fftd__server *s        = c->srv;
	char          msg[512] = "";
	free(pj);

	fftd__cache_entry *e = NULL;
	int                rv;
	if (h->tolerance > 0) {
		// auto with a tolerance: the fastest algorithm within it;
		// executions on other devices plan the same one.
		char key[16], name[16];
		rv = fftd__algo_pick(fftd__worker_cache(w),
		    (fftd__device *) fftd__worker_device(w), &h->shape,
		    h->tolerance, key, name, &e, msg, sizeof(msg));
		if (rv == FFTD_OK) {
			memcpy(h->algorithm, key, sizeof(key));
			memcpy(h->reported, name, sizeof(name));
		}
	} else {
		rv = fftd__cache_acquire(fftd__worker_cache(w), &h->shape,
		    h->algorithm, &e, msg, sizeof(msg));
	}
	if (rv == FFTD_OK) {
		fftd__algo_count_plan(h->reported);
		atomic_store(&h->entries[h->home], e);
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, h->pipe);
	if (rv == FFTD_OK && ss != NULL) {
		atomic_fetch_add(&h->refs, 1); // the session's reference
		h->next   = ss->plans;
		ss->plans = h;
	} else if (ss != NULL) {
		ss->nplans--;
		ss->plan_bytes -= h->est_bytes;
	}
	pthread_mutex_unlock(&s->mtx);

	// Drop the job's reference before answering, so that a client that
	// asks for stats right after the answer sees the plan count settled.
	uint64_t id = h->id, in_bytes = h->shape.in.bytes;
	uint64_t out_bytes = h->shape.out.bytes;
	char     alg[16];
	memcpy(alg, h->reported, sizeof(alg));
	fftd__plan_unref(s, h);
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(
		    c, rv, "%s", msg[0] ? msg : fftd_strerror(rv));
	} else if (ss == NULL) {
		fftd__ctx_reply_error(
		    c, FFTD_ECLOSED, "client went away while planning");
	} else {
		Fftd__Wire__Reply           r = FFTD__WIRE__REPLY__INIT;
		Fftd__Wire__PlanCreateReply pr
		    = FFTD__WIRE__PLAN_CREATE_REPLY__INIT;
		pr.plan_id      = id;
		pr.input_bytes  = in_bytes;
		pr.output_bytes = out_bytes;
		pr.algorithm    = alg;
		pr.device       = (uint32_t) fftd__worker_device(w)->index;
		r.body_case     = FFTD__WIRE__REPLY__BODY_PLAN_CREATE;
		r.plan_create   = &pr;
		fftd__ctx_reply(c, &r, 0, NULL);
	}
}

// fftd__plan_create validates a PlanCreate, picks the home device and
// the algorithm, counts the plan against its client's limits and posts
// the planning (plan_job_run).
void
fftd__plan_create(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanCreate *pc)
{
	fftd__server  *s = c->srv;
	fftd_plan_desc d;
	fftd__shape    sh;
	char           msg[512];
	int rv = fftd__desc_from_wire(pc->desc, &d, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	pthread_mutex_lock(&s->mtx);
	fftd__limits lim       = s->limits;
	uint32_t     max_plans = s->max_plans;
	pthread_mutex_unlock(&s->mtx);
	rv = fftd__shape_resolve(&d, &lim, &sh, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	if (d.priority != FFTD_PRIORITY_BATCH
	    && d.priority != FFTD_PRIORITY_REALTIME) {
		fftd__ctx_reply_error(c, FFTD_EINVAL,
		    "priority = %d: must be batch (0) or realtime (1)",
		    (int) d.priority);
		return;
	}
	// Device: the one asked for, else the least loaded (executions may
	// later run on other devices; this is where it is planned first).
	fftd__worker **ws = fftd__lane(s, d.priority == FFTD_PRIORITY_REALTIME);
	fftd__worker  *w  = NULL;
	int            home = 0;
	if (d.device >= 0) {
		for (int i = 0; i < s->nworkers; i++) {
			if (fftd__worker_device(ws[i])->index == d.device) {
				w    = ws[i];
				home = i;
			}
		}
		if (w == NULL) {
			fftd__ctx_reply_error(c, FFTD_ENODEVICE,
			    "device %d: no such device (this daemon serves %d)",
			    d.device, s->nworkers);
			return;
		}
	} else if (d.device != -1) {
		fftd__ctx_reply_error(c, FFTD_EINVAL,
		    "device = %d: must be a device index or -1", d.device);
		return;
	} else {
		w = ws[0];
		for (int i = 1; i < s->nworkers; i++) {
			if (fftd__worker_backlog_ns(ws[i])
			        < fftd__worker_backlog_ns(w)
			    || (fftd__worker_backlog_ns(ws[i])
			            == fftd__worker_backlog_ns(w)
			        && fftd__worker_load(ws[i])
			            < fftd__worker_load(w))) {
				w    = ws[i];
				home = i;
			}
		}
	}
	char alg[16];
	rv = pick_algorithm(fftd__worker_device(w)->backend, d.algorithm, &sh,
	    alg, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	fftd__handle *h  = calloc(1, sizeof(*h));
	plan_job     *pj = calloc(1, sizeof(*pj));
	if (h == NULL || pj == NULL) {
		free(h);
		free(pj);
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	fftd__device *dev = (fftd__device *) fftd__worker_device(w);
	uint64_t      est = dev->backend->plan_estimate != NULL
	         ? dev->backend->plan_estimate(dev, &sh, alg)
	         : 0;
	pthread_mutex_lock(&s->mtx);
	uint64_t       max_bytes = s->max_plan_bytes;
	fftd__session *ss        = fftd__session_find(s, pipe);
	bool           full      = ss != NULL && ss->nplans >= max_plans;
	bool           heavy
	    = ss != NULL && max_bytes != 0 && ss->plan_bytes + est > max_bytes;
	uint64_t held = ss != NULL ? ss->plan_bytes : 0;
	if (ss != NULL && !full && !heavy) {
		ss->nplans++;
		ss->plan_bytes += est;
	}
	pthread_mutex_unlock(&s->mtx);
	if (ss == NULL || full || heavy) {
		free(h);
		free(pj);
		if (ss == NULL) {
			fftd__ctx_reply_error(
			    c, FFTD_ECLOSED, "no session for this connection");
		} else if (full) {
			fftd__ctx_reply_error(c, FFTD_ELIMIT,
			    "this connection already holds %u plans, the limit",
			    max_plans);
		} else {
			fftd__ctx_reply_error(c, FFTD_ELIMIT,
			    "this plan needs about %.1f MiB; this connection's "
			    "plans hold %.1f MiB of its %.1f MiB "
			    "([limits] max_plan_bytes_per_client)",
			    (double) est / 1048576.0, (double) held / 1048576.0,
			    (double) max_bytes / 1048576.0);
		}
		return;
	}
	h->est_bytes = est;
	h->id        = atomic_fetch_add(&s->next_plan_id, 1);
	h->pipe      = pipe;
	h->home      = home;
	h->pinned    = d.device >= 0;
	h->realtime  = d.priority == FFTD_PRIORITY_REALTIME;
	h->shape     = sh;
	memcpy(h->algorithm, alg, sizeof(alg));
	memcpy(h->reported, alg, sizeof(alg));
	// A tolerance matters to "auto" only: a named algorithm runs as named.
	bool is_auto = d.algorithm == NULL || d.algorithm[0] == '\0'
	    || strcmp(d.algorithm, "auto") == 0;
	h->tolerance = is_auto ? d.tolerance : 0.0;
	atomic_store(&h->refs, 1); // the job's reference
	atomic_fetch_add(&s->n_plans, 1);
	pj->job.fn = plan_job_run;
	pj->ctx    = c;
	pj->h      = h;
	fftd__worker_post_plan(w, &pj->job);
}

// fftd__plan_destroy forgets a plan of the session; queued executions
// keep it until they end.
void
fftd__plan_destroy(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanDestroy *pd)
{
	fftd__server *s = c->srv;
	fftd__handle *h = NULL;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	for (fftd__handle **pp = ss ? &ss->plans : NULL; pp && *pp;
	     pp                = &(*pp)->next) {
		if ((*pp)->id == pd->plan_id) {
			h   = *pp;
			*pp = h->next;
			ss->nplans--;
			ss->plan_bytes -= h->est_bytes;
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (h == NULL) {
		fftd__ctx_reply_error(c, FFTD_ENOPLAN,
		    "plan %" PRIu64 " does not exist on this connection",
		    pd->plan_id);
		return;
	}
	fftd__plan_unref(s, h);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	fftd__ctx_reply(c, &r, 0, NULL);
}

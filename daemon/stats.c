// SPDX-License-Identifier: MIT
//
// stats.c — floor 1 of the NNG server (server_impl.h): statistics. The
// daemon's counters and its devices' (fftd__server_get_stats,
// fftd__server_snapshot, server.h) and the answer to a Stats request: one
// page of the clients, packed so that the protobuf part stays under
// FFTD__WIRE_MAX_PB however many clients are connected (a thousand clients
// do not fit in one 64 KiB reply). The clients are sorted by id and a page
// is cut by a cursor (the last id the client has) rather than an offset,
// so that clients connecting or leaving between two pages shift nothing:
// each client still connected is listed once. Calls reply.c only.
//
// Threads: fftd__server_get_stats from the main thread, fftd__server_snapshot
// from any (NNG's HTTP threads for /metrics, NNG's task threads for a Stats
// request). Locks: the sessions, the channel list and the busy-fraction windows
// are read under the server lock; counters are atomics.

#include "server_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// by_id orders client statistics by id (qsort).
static int
by_id(const void *a, const void *b)
{
	uint32_t x = ((const fftd_client_stats *) a)->id;
	uint32_t y = ((const fftd_client_stats *) b)->id;
	return x < y ? -1 : x > y;
}

// stats_reply builds in *mp the Stats reply to rq from a snapshot
// (fftd__server_snapshot): the counters st, the ndv devices dv, and the
// clients of cl (ncl of them; the array is sorted by id here) whose id is
// above rq->clients_after, in id order, at most rq->clients_limit (0: no
// limit) and as many as fit the protobuf limit, with clients_total and
// clients_more set. On success the caller owns *mp. Returns FFTD_OK or
// FFTD_ENOMEM.
static int
stats_reply(nng_msg **mp, const Fftd__Wire__StatsRequest *rq,
    const fftd_stats *st, fftd_client_stats *cl, int ncl, fftd_device_stats *dv,
    int ndv)
{
	uint32_t                  after = rq != NULL ? rq->clients_after : 0;
	uint32_t                  limit = rq != NULL ? rq->clients_limit : 0;
	int                       rv    = FFTD_ENOMEM;
	Fftd__Wire__Reply         r     = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__Stats         ws    = FFTD__WIRE__STATS__INIT;
	Fftd__Wire__ClientStats  *wc    = calloc((size_t) ncl + 1, sizeof(*wc));
	Fftd__Wire__ClientStats **pc    = calloc((size_t) ncl + 1, sizeof(*pc));
	Fftd__Wire__DeviceStats  *wd    = calloc((size_t) ndv + 1, sizeof(*wd));
	Fftd__Wire__DeviceStats **pd    = calloc((size_t) ndv + 1, sizeof(*pd));
	if (wc == NULL || pc == NULL || wd == NULL || pd == NULL) {
		goto out;
	}
	fftd__stats_to_wire(&ws, st);
	for (int i = 0; i < ndv; i++) {
		Fftd__Wire__DeviceStats w0 = FFTD__WIRE__DEVICE_STATS__INIT;
		wd[i]                      = w0;
		fftd__device_stats_to_wire(&wd[i], &dv[i]);
		pd[i] = &wd[i];
	}
	ws.n_devices     = (size_t) ndv;
	ws.devices       = pd;
	ws.clients_total = (uint64_t) ncl;
	size_t used      = FFTD__WIRE_PAGE_SLACK
	    + protobuf_c_message_get_packed_size(&ws.base);

	qsort(cl, (size_t) ncl, sizeof(*cl), by_id);
	int i = 0;
	while (i < ncl && cl[i].id <= after) {
		i++;
	}
	size_t k = 0;
	for (; i < ncl && (limit == 0 || k < limit); i++) {
		Fftd__Wire__ClientStats w0 = FFTD__WIRE__CLIENT_STATS__INIT;
		wc[k]                      = w0;
		fftd__client_stats_to_wire(&wc[k], &cl[i]);
		size_t b = fftd__wire_field_bytes(
		    protobuf_c_message_get_packed_size(&wc[k].base));
		if (used + b > FFTD__WIRE_MAX_PB) {
			break;
		}
		used += b;
		pc[k] = &wc[k];
		k++;
	}
	ws.n_clients    = k;
	ws.clients      = pc;
	ws.clients_more = i < ncl;
	r.body_case     = FFTD__WIRE__REPLY__BODY_STATS;
	r.stats         = &ws;
	rv              = fftd__msg_build(mp, &r.base, 0, NULL);
out:
	free(wc);
	free(pc);
	free(wd);
	free(pd);
	return rv;
}

// cache_stats_add adds one plan cache's counters to a sum.
static void
cache_stats_add(fftd__cache_stats *sum, const fftd__cache_stats *cs)
{
	sum->hits += cs->hits;
	sum->misses += cs->misses;
	sum->evictions += cs->evictions;
	sum->entries += cs->entries;
	sum->bytes += cs->bytes;
	sum->budget += cs->budget;
}

// device_cache_stats sums the plan caches of device i's lanes.
static void
device_cache_stats(fftd__server *s, int i, fftd__cache_stats *cs)
{
	fftd__cache_get_stats(fftd__worker_cache(s->workers[i]), cs);
	if (s->rt_workers != NULL) {
		fftd__cache_stats r;
		fftd__cache_get_stats(fftd__worker_cache(s->rt_workers[i]), &r);
		cache_stats_add(cs, &r);
	}
}

// device_worker_stats sums what device i's lanes measured.
static void
device_worker_stats(fftd__server *s, int i, fftd__worker_stats *ws)
{
	fftd__worker_get_stats(s->workers[i], ws);
	if (s->rt_workers != NULL) {
		fftd__worker_stats r;
		fftd__worker_get_stats(s->rt_workers[i], &r);
		ws->busy_ns += r.busy_ns;
		ws->executes += r.executes;
		ws->memory_used += r.memory_used;
		ws->ipc_mappings += r.ipc_mappings;
		ws->queued += r.queued;
	}
}

// fftd__server_get_stats: see server.h.
void
fftd__server_get_stats(fftd__server *s, fftd_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	st->uptime_ms = (uint64_t) (now.tv_sec - s->started.tv_sec) * 1000
	    + (uint64_t) ((now.tv_nsec - s->started.tv_nsec) / 1000000);
	st->sessions  = atomic_load(&s->n_sessions);
	st->plans     = atomic_load(&s->n_plans);
	st->requests  = atomic_load(&s->n_requests);
	st->errors    = atomic_load(&s->n_errors);
	st->bytes_in  = atomic_load(&s->n_bytes_in);
	st->bytes_out = atomic_load(&s->n_bytes_out);
	st->executes  = atomic_load(&s->n_executes);
	st->canceled  = atomic_load(&s->n_canceled);
	st->expired   = atomic_load(&s->n_expired);
	pthread_mutex_lock(&s->mtx);
	for (fftd__stream *ch = s->chans; ch != NULL; ch = ch->next) {
		st->stream_channels++;
	}
	pthread_mutex_unlock(&s->mtx);
	fftd__cache_stats sum = { 0 };
	for (int i = 0; i < s->nworkers; i++) {
		fftd__cache_stats cs;
		device_cache_stats(s, i, &cs);
		cache_stats_add(&sum, &cs);
	}
	st->cache_hits         = sum.hits;
	st->cache_misses       = sum.misses;
	st->cache_evictions    = sum.evictions;
	st->cache_entries      = sum.entries;
	st->cache_bytes        = sum.bytes;
	st->cache_budget_bytes = sum.budget;
}

// fftd__server_snapshot: see server.h (the busy-fraction windows move
// here, under the server lock).
int
fftd__server_snapshot(fftd__server *s, fftd_stats *st,
    fftd_client_stats **clients, int *nclients, fftd_device_stats **devices,
    int *ndevices)
{
	*clients  = NULL;
	*devices  = NULL;
	*nclients = 0;
	*ndevices = 0;
	fftd__server_get_stats(s, st);
	fftd_device_stats *dv = calloc((size_t) s->nworkers, sizeof(*dv));
	if (dv == NULL) {
		return FFTD_ENOMEM;
	}
	uint64_t now = fftd__mono_ns();
	pthread_mutex_lock(&s->mtx);
	for (int i = 0; i < s->nworkers; i++) {
		const fftd__device *d = fftd__worker_device(s->workers[i]);
		fftd__worker_stats  ws;
		fftd__cache_stats   cs;
		device_worker_stats(s, i, &ws);
		device_cache_stats(s, i, &cs);
		fftd_device_stats *x = &dv[i];
		x->index             = d->index;
		snprintf(x->name, sizeof(x->name), "%s", d->name);
		snprintf(
		    x->backend, sizeof(x->backend), "%s", d->backend->name);
		x->memory_bytes       = d->memory_bytes;
		x->memory_used_bytes  = ws.memory_used;
		x->busy_seconds       = (double) ws.busy_ns * 1e-9;
		x->queued             = (uint32_t) ws.queued;
		x->executes           = ws.executes;
		x->cache_hits         = cs.hits;
		x->cache_misses       = cs.misses;
		x->cache_evictions    = cs.evictions;
		x->cache_entries      = cs.entries;
		x->cache_bytes        = cs.bytes;
		x->cache_budget_bytes = cs.budget;
		x->ipc_mappings       = ws.ipc_mappings;
		// Busy share over a window of 1 to 10 s ending now.
		if (s->mark_ns[i] == 0) {
			s->mark_ns[i]   = fftd__mono_ns() - 1;
			s->mark_busy[i] = 0;
		}
		uint64_t span = now - s->mark_ns[i];
		if (span >= 1000000000u) {
			double f = (double) (ws.busy_ns - s->mark_busy[i])
			    / (double) span;
			s->busy_frac[i] = f > 1 ? 1 : f;
			if (span >= 10000000000u) {
				s->mark_ns[i]   = now;
				s->mark_busy[i] = ws.busy_ns;
			}
		}
		x->busy_fraction = s->busy_frac[i];
	}
	int n = 0;
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		n++;
	}
	fftd_client_stats *cl = n ? calloc((size_t) n, sizeof(*cl)) : NULL;
	if (n != 0 && cl == NULL) {
		pthread_mutex_unlock(&s->mtx);
		free(dv);
		return FFTD_ENOMEM;
	}
	int k = 0;
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		fftd_client_stats *x = &cl[k++];
		*x                   = ss->st;
		x->id                = ss->pipe;
		x->pid               = ss->pid;
		x->uid               = ss->uid;
		x->weight            = ss->weight;
		x->queued_bytes      = ss->queued_bytes;
	}
	pthread_mutex_unlock(&s->mtx);
	*clients  = cl;
	*nclients = n;
	*devices  = dv;
	*ndevices = s->nworkers;
	return FFTD_OK;
}

// fftd__stats_request answers with the counters, the devices and one page of
// the clients (stats_reply).
void
fftd__stats_request(fftd__ctx *c, const Fftd__Wire__StatsRequest *rq)
{
	fftd_stats         st;
	fftd_client_stats *cl  = NULL;
	fftd_device_stats *dv  = NULL;
	int                ncl = 0, ndv = 0;
	nng_msg           *m = NULL;
	if (fftd__server_snapshot(c->srv, &st, &cl, &ncl, &dv, &ndv) != FFTD_OK
	    || stats_reply(&m, rq, &st, cl, ncl, dv, ndv) != FFTD_OK) {
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
	} else {
		fftd__reply_count(c->srv, c->pipe, FFTD_OK);
		fftd__ctx_send(c, m);
	}
	free(cl);
	free(dv);
}

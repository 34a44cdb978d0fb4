// SPDX-License-Identifier: MIT
//
// plan_cache.h — PRIVATE to fftd. The per-device plan cache: backend plans
// keyed by (shape, layout, kind, precision, direction, norm, batch,
// algorithm), shared by every client of the device, kept in LRU order under
// a byte budget (plan workspace counts). Entries in use are never evicted;
// an entry whose last user releases it is evicted at once while the cache
// is over budget, and a new plan whose estimated bytes do not fit beside
// the entries in use is refused (FFTD_ELIMIT), so the cache exceeds its
// budget by one entry at most. The cache is locked: plans are made on the
// device's planner thread (planner.h) and released on its planner thread
// (plan.c's release job); fftd__cache_stats copies atomics and may be called
// from any thread.

#ifndef FFTD_DAEMON_PLAN_CACHE_H
#define FFTD_DAEMON_PLAN_CACHE_H

#include <stdint.h>

#include "backend.h"
#include "layout.h"

typedef struct fftd__cache       fftd__cache;
typedef struct fftd__cache_entry fftd__cache_entry;

// fftd__cache_stats is a snapshot of a cache's counters.
typedef struct fftd__cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions;
	uint64_t entries;
	uint64_t bytes;
	uint64_t budget;
} fftd__cache_stats;

// fftd__cache_create makes an empty cache for dev with a byte budget.
int fftd__cache_create(fftd__cache **cp, fftd__device *dev, uint64_t budget);

// fftd__cache_destroy destroys every plan (all must be released) and the
// cache.
void fftd__cache_destroy(fftd__cache *c);

// fftd__cache_acquire returns, with one more reference, the entry for
// (s, algorithm): a hit reuses it, a miss plans with the backend after
// evicting least-recently-used unreferenced entries until the new plan (its
// size estimated by the backend's plan_estimate) fits the budget. If the
// entries in use leave no room for it, it is refused with FFTD_ELIMIT and
// msg giving the figures, unless no other entry is held: plans in use are
// never taken away. The backend plans without the cache's lock held.
// Backend errors pass through with msg filled.
int fftd__cache_acquire(fftd__cache *c, const fftd__shape *s,
    const char *algorithm, fftd__cache_entry **ep, char *msg, size_t msglen);

// fftd__cache_release drops one reference; the entry stays cached (LRU)
// unless the cache is over budget, when unreferenced entries go at once.
// After large frees the heap's free memory goes back to the system.
void fftd__cache_release(fftd__cache *c, fftd__cache_entry *e);

// fftd__cache_plan is the backend plan of an entry.
void *fftd__cache_plan(const fftd__cache_entry *e);

// fftd__cache_set_budget changes the budget and evicts unreferenced entries
// until the cache is within it.
void fftd__cache_set_budget(fftd__cache *c, uint64_t budget);

// fftd__cache_get_stats copies the counters.
void fftd__cache_get_stats(const fftd__cache *c, fftd__cache_stats *st);

#endif // FFTD_DAEMON_PLAN_CACHE_H

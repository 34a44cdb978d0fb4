// SPDX-License-Identifier: MIT
//
// plan_cache.c — per-device LRU plan cache under a byte budget.
//
// Entries live on one list in recency order (head = most recent). A lookup
// compares a 64-bit hash first and then the whole key, so it stays cheap
// for the few hundred plans a device holds; the counters are atomics so the
// metrics path can read them from another thread. A mutex guards the list
// and the references, since plans are made on the device's planner thread
// and released on its planner thread; it is not held while the backend plans,
// so a slow plan holds up neither. A plan being made holds its estimated bytes
// as a reservation meanwhile, so two admissions cannot both count the
// same room.

#include "plan_cache.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

typedef struct cache_key {
	fftd__shape shape;
	char        algorithm[16];
} cache_key;

struct fftd__cache_entry {
	cache_key          key;
	uint64_t           hash;
	void              *plan;
	uint64_t           bytes;
	int                refs;
	fftd__cache_entry *prev, *next;
};

// A free of this many plan bytes or more gives the heap's free memory back
// to the system (malloc_trim): FFTW's tables are many small blocks that
// glibc otherwise keeps, so the daemon's RSS would stay at its peak.
#define TRIM_BYTES (64u << 20)

struct fftd__cache {
	fftd__device      *dev;
	pthread_mutex_t    mtx; // the list, refs, reserved
	fftd__cache_entry *head, *tail;
	uint64_t           reserved; // estimates of plans being made
	uint64_t           freed;    // plan bytes destroyed since a trim
	_Atomic uint64_t   budget;
	_Atomic uint64_t   bytes;
	_Atomic uint64_t   entries;
	_Atomic uint64_t   hits, misses, evictions;
};

static uint64_t
hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t             h = 1469598103934665603ull; // FNV-1a
	for (size_t i = 0; i < n; i++) {
		h = (h ^ b[i]) * 1099511628211ull;
	}
	return h;
}

static void
key_from_shape(cache_key *k, const fftd__shape *s, const char *algorithm)
{
	memset(k, 0, sizeof(*k));
	fftd__shape_key_copy(&k->shape, s);
	// Algorithm names are the backends' own short names (checked before
	// planning), so they fit.
	snprintf(k->algorithm, sizeof(k->algorithm), "%s", algorithm);
}

static void
unlink_entry(fftd__cache *c, fftd__cache_entry *e)
{
	if (e->prev) {
		e->prev->next = e->next;
	} else {
		c->head = e->next;
	}
	if (e->next) {
		e->next->prev = e->prev;
	} else {
		c->tail = e->prev;
	}
	e->prev = e->next = NULL;
}

static void
push_front(fftd__cache *c, fftd__cache_entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head) {
		c->head->prev = e;
	} else {
		c->tail = e;
	}
	c->head = e;
}

static void
drop_entry(fftd__cache *c, fftd__cache_entry *e)
{
	unlink_entry(c, e);
	c->dev->backend->destroy(c->dev, e->plan);
	atomic_fetch_sub(&c->bytes, e->bytes);
	atomic_fetch_sub(&c->entries, 1);
	c->freed += e->bytes;
	free(e);
}

// trim gives free heap memory back to the system after large frees (lock
// held).
static void
trim(fftd__cache *c)
{
	if (c->freed >= TRIM_BYTES) {
		c->freed = 0;
		malloc_trim(0);
	}
}

// evict_for drops least-recently-used unreferenced entries until `extra`
// more bytes fit the budget, or nothing unreferenced is left (lock held).
static void
evict_for(fftd__cache *c, uint64_t extra)
{
	fftd__cache_entry *e = c->tail;
	while (e != NULL
	    && atomic_load(&c->bytes) + extra > atomic_load(&c->budget)) {
		fftd__cache_entry *prev = e->prev;
		if (e->refs == 0) {
			fftd__log(FFTD_LOG_DEBUG,
			    "plan cache %s: evict %llu bytes", c->dev->name,
			    (unsigned long long) e->bytes);
			drop_entry(c, e);
			atomic_fetch_add(&c->evictions, 1);
		}
		e = prev;
	}
}

int
fftd__cache_create(fftd__cache **cp, fftd__device *dev, uint64_t budget)
{
	fftd__cache *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		return FFTD_ENOMEM;
	}
	c->dev = dev;
	atomic_store(&c->budget, budget);
	pthread_mutex_init(&c->mtx, NULL);
	*cp = c;
	return FFTD_OK;
}

void
fftd__cache_destroy(fftd__cache *c)
{
	if (c == NULL) {
		return;
	}
	while (c->head != NULL) {
		if (c->head->refs != 0) {
			fftd__log(FFTD_LOG_WARN,
			    "plan cache %s: destroying a plan still referenced",
			    c->dev->name);
		}
		drop_entry(c, c->head);
	}
	pthread_mutex_destroy(&c->mtx);
	free(c);
}

// admit makes room for a plan of est bytes and reserves them (lock held):
// unreferenced entries go first; if the entries in use still leave no
// room, the plan is refused with msg giving the figures, unless the cache
// holds nothing else (a plan bigger than the whole budget is made when it
// is alone, so the cache exceeds its budget by one entry at most).
static int
admit(fftd__cache *c, uint64_t est, char *msg, size_t msglen)
{
	evict_for(c, c->reserved + est);
	uint64_t held   = atomic_load(&c->bytes) + c->reserved;
	uint64_t budget = atomic_load(&c->budget);
	if (est > 0 && held > 0 && held + est > budget) {
		snprintf(msg, msglen,
		    "plan cache of %s full: this plan needs about %.1f MiB, "
		    "plans in use (or being made) hold %.1f MiB of the %.1f "
		    "MiB budget ([cache] budget_bytes); destroy plans or "
		    "retry later",
		    c->dev->name, (double) est / 1048576.0,
		    (double) held / 1048576.0, (double) budget / 1048576.0);
		return FFTD_ELIMIT;
	}
	c->reserved += est;
	return FFTD_OK;
}

int
fftd__cache_acquire(fftd__cache *c, const fftd__shape *s, const char *algorithm,
    fftd__cache_entry **ep, char *msg, size_t msglen)
{
	cache_key key;
	key_from_shape(&key, s, algorithm);
	uint64_t h = hash_bytes(&key, sizeof(key));

	pthread_mutex_lock(&c->mtx);
	for (fftd__cache_entry *e = c->head; e != NULL; e = e->next) {
		if (e->hash == h && memcmp(&e->key, &key, sizeof(key)) == 0) {
			e->refs++;
			unlink_entry(c, e);
			push_front(c, e);
			atomic_fetch_add(&c->hits, 1);
			pthread_mutex_unlock(&c->mtx);
			*ep = e;
			return FFTD_OK;
		}
	}
	atomic_fetch_add(&c->misses, 1);
	fftd__cache_entry *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		pthread_mutex_unlock(&c->mtx);
		return FFTD_ENOMEM;
	}
	// Admission before planning: a GPU plan allocates its work area at
	// once, and an FFTW plan may take seconds; plans nobody uses go first.
	uint64_t est = c->dev->backend->plan_estimate != NULL
	    ? c->dev->backend->plan_estimate(c->dev, s, algorithm)
	    : 0;
	int      rv  = admit(c, est, msg, msglen);
	trim(c);
	pthread_mutex_unlock(&c->mtx);
	if (rv != FFTD_OK) {
		free(e);
		return rv;
	}
	uint64_t bytes = 0;
	rv             = c->dev->backend->plan(
	                c->dev, s, algorithm, &e->plan, &bytes, msg, msglen);
	if (rv == FFTD_EDEVMEM) {
		// Device memory is short: drop every unused plan and try once
		// more.
		pthread_mutex_lock(&c->mtx);
		bool any = c->tail != NULL;
		if (any) {
			uint64_t budget = atomic_load(&c->budget);
			atomic_store(&c->budget, 0);
			evict_for(c, 0);
			atomic_store(&c->budget, budget);
		}
		pthread_mutex_unlock(&c->mtx);
		if (any) {
			rv = c->dev->backend->plan(c->dev, s, algorithm,
			    &e->plan, &bytes, msg, msglen);
		}
	}
	pthread_mutex_lock(&c->mtx);
	c->reserved -= est;
	if (rv != FFTD_OK) {
		pthread_mutex_unlock(&c->mtx);
		free(e);
		return rv;
	}
	evict_for(c, bytes);
	e->key   = key;
	e->hash  = h;
	e->bytes = bytes;
	e->refs  = 1;
	push_front(c, e);
	atomic_fetch_add(&c->bytes, bytes);
	atomic_fetch_add(&c->entries, 1);
	trim(c);
	pthread_mutex_unlock(&c->mtx);
	*ep = e;
	return FFTD_OK;
}

void
fftd__cache_release(fftd__cache *c, fftd__cache_entry *e)
{
	if (e == NULL) {
		return;
	}
	pthread_mutex_lock(&c->mtx);
	e->refs--;
	if (atomic_load(&c->bytes) + c->reserved > atomic_load(&c->budget)) {
		evict_for(c, c->reserved);
	}
	trim(c);
	pthread_mutex_unlock(&c->mtx);
}

void *
fftd__cache_plan(const fftd__cache_entry *e)
{
	return e->plan;
}

void
fftd__cache_set_budget(fftd__cache *c, uint64_t budget)
{
	pthread_mutex_lock(&c->mtx);
	atomic_store(&c->budget, budget);
	evict_for(c, c->reserved);
	trim(c);
	pthread_mutex_unlock(&c->mtx);
}

void
fftd__cache_get_stats(const fftd__cache *c, fftd__cache_stats *st)
{
	fftd__cache *m = (fftd__cache *) c; // atomics are read-only here
	st->hits       = atomic_load(&m->hits);
	st->misses     = atomic_load(&m->misses);
	st->evictions  = atomic_load(&m->evictions);
	st->entries    = atomic_load(&m->entries);
	st->bytes      = atomic_load(&m->bytes);
	st->budget     = atomic_load(&m->budget);
}

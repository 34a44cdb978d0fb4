// SPDX-License-Identifier: MIT
//
// algo_table.c — accuracy-aware "auto" (algo_table.h): the choice among
// candidates, a pure function of their error bounds (common/errtable.c)
// and measured times, and the speed table that keeps those times, per
// device, algorithm and shape, for the daemon's life within
// FFTD__SPEED_MAX entries (least recently used out).

#include "algo_table.h"

#include <stdlib.h>
#include <string.h>

#include "errtable.h"

// better says whether candidate a beats candidate b (both eligible):
// faster, or as fast and computing in a more accurate precision.
static bool
better(const fftd__algo_cand *a, const fftd__algo_cand *b)
{
	if (a->ns != b->ns) {
		return a->ns < b->ns;
	}
	return fftd__err_prec_rank(a->compute)
	    > fftd__err_prec_rank(b->compute);
}

// fftd__algo_choose picks the fastest eligible candidate (algo_table.h).
int
fftd__algo_choose(const fftd__algo_cand *c, int n, double tol)
{
	int best = -1;
	for (int i = 0; i < n; i++) {
		bool ok = c[i].fallback || (c[i].ns > 0 && c[i].bound <= tol);
		if (!ok) {
			continue;
		}
		// A fallback without a time (measuring failed) is still the
		// default; any measured candidate within tolerance beats it
		// only when it is measured faster, so treat it as infinitely
		// slow only against candidates that are measured.
		if (best < 0) {
			best = i;
		} else if (c[best].fallback && c[best].ns == 0) {
			// an unmeasured default stays: nothing is known to
			// beat it
		} else if (c[i].fallback && c[i].ns == 0) {
			best = i;
		} else if (better(&c[i], &c[best])) {
			best = i;
		}
	}
	return best;
}

// fftd__speed_global is the daemon's one table.
fftd__speed_table *
fftd__speed_global(void)
{
	static fftd__speed_table t = { .mtx = PTHREAD_MUTEX_INITIALIZER };
	return &t;
}

// fftd__speed_key_make fills *k with its padding zeroed.
void
fftd__speed_key_make(
    fftd__speed_key *k, int device, const char *algo, const fftd__shape *s)
{
	memset(k, 0, sizeof(*k));
	k->device = device;
	strncpy(k->algo, algo, sizeof(k->algo) - 1);
	fftd__shape_key_copy(&k->shape, s); // its padding zeroed too
}

// find returns k's index in t, or -1 (t->mtx held).
static int
find(const fftd__speed_table *t, const fftd__speed_key *k)
{
	for (int i = 0; i < t->n; i++) {
		if (memcmp(&t->e[i].key, k, sizeof(*k)) == 0) {
			return i;
		}
	}
	return -1;
}

// fftd__speed_get looks k up and marks it used.
bool
fftd__speed_get(fftd__speed_table *t, const fftd__speed_key *k, uint64_t *ns)
{
	pthread_mutex_lock(&t->mtx);
	int i = find(t, k);
	if (i >= 0) {
		t->e[i].used = ++t->clock;
		*ns          = t->e[i].ns;
	}
	pthread_mutex_unlock(&t->mtx);
	return i >= 0;
}

// fftd__speed_put stores (k, ns), evicting the least recently used entry
// of a full table.
void
fftd__speed_put(fftd__speed_table *t, const fftd__speed_key *k, uint64_t ns)
{
	pthread_mutex_lock(&t->mtx);
	int i = find(t, k);
	if (i < 0 && t->n < FFTD__SPEED_MAX) {
		i = t->n++;
	} else if (i < 0) {
		i = 0;
		for (int j = 1; j < t->n; j++) {
			if (t->e[j].used < t->e[i].used) {
				i = j;
			}
		}
		t->evictions++;
	}
	t->e[i].key  = *k;
	t->e[i].ns   = ns;
	t->e[i].used = ++t->clock;
	pthread_mutex_unlock(&t->mtx);
}

// fftd__speed_count is the table's size and eviction count.
int
fftd__speed_count(fftd__speed_table *t, uint64_t *evictions)
{
	pthread_mutex_lock(&t->mtx);
	int n = t->n;
	if (evictions != NULL) {
		*evictions = t->evictions;
	}
	pthread_mutex_unlock(&t->mtx);
	return n;
}

// fftd__speed_list copies slots [from, from + max) of t out.
int
fftd__speed_list(fftd__speed_table *t, int from, fftd__speed_entry *out,
    int max, int *total, uint64_t *evictions)
{
	pthread_mutex_lock(&t->mtx);
	int k = 0;
	for (int i = from < 0 ? 0 : from; i < t->n && k < max; i++) {
		out[k++] = t->e[i];
	}
	*total = t->n;
	if (evictions != NULL) {
		*evictions = t->evictions;
	}
	pthread_mutex_unlock(&t->mtx);
	return k;
}

// cmp_u64 orders uint64_t values for qsort.
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

// fftd__median_ns sorts v and returns its (lower) median.
uint64_t
fftd__median_ns(uint64_t *v, int n)
{
	if (n <= 0) {
		return 0;
	}
	qsort(v, (size_t) n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2];
}

// The plans made per algorithm name, for the metrics.
static struct {
	pthread_mutex_t mtx;
	int             n;
	char            name[FFTD__ALGO_NAMES][16];
	uint64_t        count[FFTD__ALGO_NAMES];
} plan_counts = { .mtx = PTHREAD_MUTEX_INITIALIZER };

// fftd__algo_count_plan counts one plan made with algorithm name.
void
fftd__algo_count_plan(const char *name)
{
	pthread_mutex_lock(&plan_counts.mtx);
	int i = 0;
	while (i < plan_counts.n && strcmp(plan_counts.name[i], name) != 0) {
		i++;
	}
	if (i == plan_counts.n && i < FFTD__ALGO_NAMES) {
		strncpy(plan_counts.name[i], name, 15);
		plan_counts.name[i][15] = '\0';
		plan_counts.n++;
	}
	if (i < plan_counts.n) {
		plan_counts.count[i]++;
	}
	pthread_mutex_unlock(&plan_counts.mtx);
}

// fftd__algo_plan_counts copies the counts out.
int
fftd__algo_plan_counts(char (*names)[16], uint64_t *counts, int max)
{
	pthread_mutex_lock(&plan_counts.mtx);
	int n = plan_counts.n < max ? plan_counts.n : max;
	for (int i = 0; i < n; i++) {
		memcpy(names[i], plan_counts.name[i], 16);
		counts[i] = plan_counts.count[i];
	}
	pthread_mutex_unlock(&plan_counts.mtx);
	return n;
}

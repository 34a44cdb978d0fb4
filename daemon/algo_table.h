// SPDX-License-Identifier: MIT
//
// algo_table.h — PRIVATE to fftd. Accuracy-aware "auto" (issue 18 item 5):
// the choice among candidate algorithms (a pure function over their error
// bounds and measured times) and the speed table, where the time of one
// execution per device, algorithm and shape is kept for the daemon's life.
// The error bounds are common/errtable.h's; plan.c runs the choice on the
// planner thread.
//
// Threads: fftd__algo_choose is pure. The speed table is guarded by its
// own mutex (any thread; planners of several devices and lanes share it).

#ifndef FFTD_DAEMON_ALGO_TABLE_H
#define FFTD_DAEMON_ALGO_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "fftd.h"
#include "layout.h"

// fftd__algo_cand is one candidate of a choice.
typedef struct fftd__algo_cand {
	double         bound;    // error bound at this size (errtable.h)
	uint64_t       ns;       // measured time of one execution; 0 unknown
	fftd_precision compute;  // precision it computes in
	bool           fallback; // the data's own precision, the default
} fftd__algo_cand;

// fftd__algo_choose picks among n candidates for tolerance tol (> 0): the
// fastest measured one whose bound is <= tol; the fallback candidate (the
// data's own precision on the backend's default algorithm, exactly what
// tolerance 0 runs) is always eligible, whatever its bound or time, so
// that the choice is never slower than it and a tolerance nothing meets
// gets the precision's usual accuracy. Ties (equal ns) go to the more
// accurate computing precision, then to the earlier candidate. A
// candidate other than the fallback with no measured time is never
// chosen. Returns the index chosen, or -1 when n is 0 or there is neither
// a fallback nor an eligible measured candidate.
int fftd__algo_choose(const fftd__algo_cand *c, int n, double tol);

// FFTD__SPEED_MAX bounds the speed table: at most this many (device,
// algorithm, shape) entries; the least recently used one makes room for a
// new one (64 bytes-odd each: about 100 KiB in all).
#define FFTD__SPEED_MAX 1024

// fftd__speed_key is what a time is kept for: the device (daemon index),
// the backend's algorithm key (errtable.h: fftd__err_key) and the shape
// (sizes, batch, kind, precision, direction, norm, layouts).
typedef struct fftd__speed_key {
	int         device;
	char        algo[16];
	fftd__shape shape;
} fftd__speed_key;

typedef struct fftd__speed_entry {
	fftd__speed_key key;
	uint64_t        ns;
	uint64_t        used; // the table's clock at the last lookup
} fftd__speed_entry;

// fftd__speed_table holds measured times; zero-initialised plus the mutex
// (FFTD__SPEED_TABLE_INIT), or fftd__speed_global().
typedef struct fftd__speed_table {
	pthread_mutex_t   mtx;
	int               n;
	uint64_t          clock;
	uint64_t          evictions;
	fftd__speed_entry e[FFTD__SPEED_MAX];
} fftd__speed_table;

// fftd__speed_global is the daemon's one table.
fftd__speed_table *fftd__speed_global(void);

// fftd__speed_key_make fills *k (zeroing padding, so keys compare as
// bytes).
void fftd__speed_key_make(
    fftd__speed_key *k, int device, const char *algo, const fftd__shape *s);

// fftd__speed_get looks k up: its time in *ns and true, or false.
bool fftd__speed_get(
    fftd__speed_table *t, const fftd__speed_key *k, uint64_t *ns);

// fftd__speed_put stores (k, ns), replacing k's entry or, in a full table,
// the least recently used one.
void fftd__speed_put(
    fftd__speed_table *t, const fftd__speed_key *k, uint64_t ns);

// fftd__speed_count is how many entries the table holds and, in
// *evictions, how many it has dropped.
int fftd__speed_count(fftd__speed_table *t, uint64_t *evictions);

// fftd__speed_list copies the entries in slots [from, from + max) of t
// into out (slot order; an entry keeps its slot for its life, a full
// table replacing its least recently used one in place) and returns how
// many it copied; *total gets the table's size and *evictions (may be
// NULL) its evictions. Marks nothing used.
int fftd__speed_list(fftd__speed_table *t, int from, fftd__speed_entry *out,
    int max, int *total, uint64_t *evictions);

// fftd__median_ns sorts v[0..n) and returns its median (the lower middle
// for even n; 0 for n 0).
uint64_t fftd__median_ns(uint64_t *v, int n);

// fftd__algo_count_plan counts one plan made with the algorithm named
// (the name the client is told) for the metrics and AlgoStats; up to
// FFTD__ALGO_NAMES names, later ones are not counted. Any thread.
#define FFTD__ALGO_NAMES 16
void fftd__algo_count_plan(const char *name);

// fftd__algo_plan_counts copies up to max (name, count) pairs of the
// plans made so far into names and counts and returns how many.
int fftd__algo_plan_counts(char (*names)[16], uint64_t *counts, int max);

#endif // FFTD_DAEMON_ALGO_TABLE_H

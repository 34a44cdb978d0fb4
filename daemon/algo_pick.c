// SPDX-License-Identifier: MIT
//
// algo_pick.c — accuracy-aware "auto" on the planner thread (algo_pick.h):
// the rows of the error table (common/errtable.c) that the device's
// backend runs and whose bound fits the tolerance become candidates; each
// is planned in the device's plan cache (a backend that does not serve the
// shape under that algorithm refuses it, and it drops out), timed once per
// device, algorithm and shape (the backend's measure, kept in the speed
// table, algo_table.c), and fftd__algo_choose keeps the fastest. The
// backend's default at the data's own precision is always a candidate, so
// the result is never slower than what tolerance 0 runs, and it is what
// runs when nothing else fits.

#include "algo_pick.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_table.h"
#include "errmsg.h"
#include "errtable.h"
#include "log.h"

#define MAX_CANDS 16

// One candidate being planned and timed.
typedef struct cand {
	char               key[16], name[16];
	fftd__cache_entry *e;
} cand;

// time_cand finds candidate k's time in the speed table or measures it
// (and keeps it); 0 when it cannot be measured.
static uint64_t
time_cand(fftd__device *dev, const fftd__shape *s, const cand *k)
{
	fftd__speed_key sk;
	uint64_t        ns = 0;
	// FFTD_AUTO_PREFER=KEY (read by the daemon, for tests and
	// experiments, not an interface) makes algorithm KEY the fastest
	// wherever it is a candidate, so that a test can make the choice and
	// its conversions deterministic.
	const char *prefer = getenv("FFTD_AUTO_PREFER");
	if (prefer != NULL && strcmp(prefer, k->key) == 0) {
		return 1;
	}
	fftd__speed_key_make(&sk, dev->index, k->key, s);
	if (fftd__speed_get(fftd__speed_global(), &sk, &ns)) {
		return ns;
	}
	if (dev->backend->measure == NULL) {
		return 0;
	}
	char msg[256] = "";
	int  rv       = dev->backend->measure(
	           dev, fftd__cache_plan(k->e), s, &ns, msg, sizeof(msg));
	if (rv != FFTD_OK || ns == 0) {
		fftd__log(FFTD_LOG_WARN,
		    "auto: could not time %s on device %d: %s", k->key,
		    dev->index, msg[0] ? msg : fftd_strerror(rv));
		return 0;
	}
	fftd__speed_put(fftd__speed_global(), &sk, ns);
	return ns;
}

// fftd__algo_pick plans s with the fastest algorithm within tol.
int
fftd__algo_pick(fftd__cache *cache, fftd__device *dev, const fftd__shape *s,
    double tol, char key[16], char name[16], fftd__cache_entry **e, char *msg,
    size_t msglen)
{
	const fftd__backend *be = dev->backend;
	cand                 c[MAX_CANDS];
	fftd__algo_cand      ac[MAX_CANDS];
	int                  n = 0, fb = -1;

	// The candidates: the default first, then the table's rows that fit.
	for (int i = 0; i < fftd__err_nrows && n < MAX_CANDS; i++) {
		const fftd__err_row *r = &fftd__err_rows[i];
		if (strcmp(r->backend, be->name) != 0
		    || fftd__err_prec_rank(r->compute)
		        > fftd__err_prec_rank(s->precision)) {
			continue;
		}
		memset(&c[n], 0, sizeof(c[n]));
		memset(&ac[n], 0, sizeof(ac[n]));
		fftd__err_key(r, s->precision, c[n].key);
		fftd__err_name(r, s->precision, c[n].name);
		ac[n].bound    = fftd__err_bound(r, s->precision, s->total);
		ac[n].compute  = r->compute;
		ac[n].fallback = r->compute == s->precision
		    && strcmp(c[n].key, be->algorithms[0]) == 0;
		if (ac[n].fallback) {
			fb = n;
		} else if (ac[n].bound > tol) {
			continue;
		}
		n++;
	}
	if (fb < 0) {
		// A precision the table has no default row for (f16 on the
		// CPU): plan the default as tolerance 0 would, and let it
		// refuse or serve.
		snprintf(key, 16, "%s", be->algorithms[0]);
		snprintf(name, 16, "%s", be->algorithms[0]);
		return fftd__cache_acquire(cache, s, key, e, msg, msglen);
	}

	// Plan each; one the backend does not serve drops out. The default's
	// error is the answer when it fails.
	int ok = 0, rv_fb = FFTD_OK;
	for (int i = 0; i < n; i++) {
		char m[256] = "";
		int  rv     = fftd__cache_acquire(
		         cache, s, c[i].key, &c[i].e, m, sizeof(m));
		if (rv != FFTD_OK) {
			c[i].e = NULL;
			if (i == fb) {
				rv_fb = rv;
				fftd__errmsg(rv, msg, msglen, "%s", m);
			}
			continue;
		}
		ok++;
	}
	if (rv_fb != FFTD_OK) {
		for (int i = 0; i < n; i++) {
			if (c[i].e != NULL) {
				fftd__cache_release(cache, c[i].e);
			}
		}
		return rv_fb;
	}

	// Time them, unless the default is the only one left.
	for (int i = 0; i < n; i++) {
		if (c[i].e == NULL) {
			ac[i].ns       = 0;
			ac[i].fallback = false;
			ac[i].bound    = 2.0; // never eligible
		} else if (ok > 1) {
			ac[i].ns = time_cand(dev, s, &c[i]);
		}
	}
	int pick = fftd__algo_choose(ac, n, tol);
	if (pick < 0) {
		pick = fb;
	}
	for (int i = 0; i < n; i++) {
		if (i != pick && c[i].e != NULL) {
			fftd__cache_release(cache, c[i].e);
		}
	}
	*e = c[pick].e;
	memcpy(key, c[pick].key, 16);
	memcpy(name, c[pick].name, 16);
	fftd__log(FFTD_LOG_DEBUG,
	    "auto: tolerance %g, %lld points: %s (bound %.2g, %.1f us) of %d "
	    "candidates",
	    tol, (long long) s->total, name, ac[pick].bound,
	    (double) ac[pick].ns / 1e3, ok);
	return FFTD_OK;
}

// SPDX-License-Identifier: MIT
//
// mf_triggers.c — what the matched-filter bank's engines share (mf.h;
// backends/fftw_mf.c, backends/cuda_mf.c): the check of their arguments
// and of each template's sigma^2, and the trigger list, where every
// trigger is
// counted, the loudest max_triggers are kept in the caller's array (a list
// until it is full, then a min-heap, weakest at the root), and the kept
// ones are written out in (template, sample) order. Runs on the device's
// worker, on the host.

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "errmsg.h"
#include "mf.h"

// stronger says whether trigger x outranks y when only the loudest are
// kept: louder, then the lower template, then the earlier sample.
static bool
stronger(const fftd__mf_trigger *x, const fftd__mf_trigger *y)
{
	if (x->rho != y->rho) {
		return x->rho > y->rho;
	}
	if (x->template_index != y->template_index) {
		return x->template_index < y->template_index;
	}
	return x->t < y->t;
}

// sift_down restores the min-heap (weakest at the root) below slot i.
static void
sift_down(fftd__mf_trigger *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && stronger(&h[m], &h[l])) {
			m = l;
		}
		if (l + 1 < n && stronger(&h[m], &h[l + 1])) {
			m = l + 1;
		}
		if (m == i) {
			return;
		}
		fftd__mf_trigger t = h[i];
		h[i]               = h[m];
		h[m]               = t;
		i                  = m;
	}
}

// The kept triggers are a plain list in arrival order until the room is
// full, and a min-heap from the first trigger that finds it full on (then
// a->ntotal = max_triggers + 1, every add counting first). Both engines add
// in (template, sample) order, so a list that never filled is already in
// the order triggers_finish writes, and neither the heap's sift-ups nor the
// sort are paid for it: 1,000 triggers took ~100 us that way on a
// development machine, where a 1,024-template call at 2^17 takes 1.6 ms on
// the H200. The kept set is the same (the loudest max_triggers by
// stronger, a strict total order).
void
fftd__mf_trigger_add(fftd__mf_args *a, size_t *nheap, const fftd__mf_trigger *t)
{
	fftd__mf_trigger *h = a->triggers;
	a->ntotal++;
	if (a->max_triggers == 0) {
		return;
	}
	if (*nheap < a->max_triggers) {
		h[(*nheap)++] = *t;
		return;
	}
	if (a->ntotal == a->max_triggers + 1) {
		for (size_t i = *nheap / 2; i-- > 0;) {
			sift_down(h, *nheap, i);
		}
	}
	if (stronger(t, &h[0])) {
		h[0] = *t;
		sift_down(h, *nheap, 0);
	}
}

// by_time orders kept triggers by template, then sample.
static int
by_time(const void *x, const void *y)
{
	const fftd__mf_trigger *p = x, *q = y;
	if (p->template_index != q->template_index) {
		return p->template_index < q->template_index ? -1 : 1;
	}
	return p->t < q->t ? -1 : p->t > q->t;
}

void
fftd__mf_triggers_finish(fftd__mf_args *a, size_t nheap)
{
	size_t i = 1;
	while (i < nheap && by_time(&a->triggers[i - 1], &a->triggers[i]) < 0) {
		i++;
	}
	if (i < nheap) {
		qsort(a->triggers, nheap, sizeof(*a->triggers), by_time);
	}
	a->ntriggers = nheap;
}

int
fftd__mf_check_sigmasq(
    const fftd__mf_args *a, int64_t j, double s2, char *msg, size_t msglen)
{
	if (a->sigmasq_mode == FFTD_MF_SIGMASQ_USE
	    && !(isfinite(s2) && s2 >= 0)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: sigmasq[%lld] = %g is given; it must be "
		    "finite and >= 0",
		    (long long) j, s2);
	}
	if (!isfinite(s2)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: template %lld is not finite over bins "
		    "[%lld, %lld) (sigma^2 = %g)",
		    (long long) j, (long long) a->kmin, (long long) a->kmax,
		    s2);
	}
	return FFTD_OK;
}

// fftd__mf_check_args repeats what the request handler (mf_req.c)
// guarantees, for both engines, so that a wrong caller gets a typed error
// rather than a wild write; backend names the engine's backend in the
// messages, max_count is the most templates it takes.
int
fftd__mf_check_args(const fftd__mf_args *a, const char *backend,
    int64_t max_count, char *msg, size_t msglen)
{
	if (a->precision != FFTD_F64 && a->precision != FFTD_F32) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "matched filter: the %s backend does f64 and f32, not "
		    "precision %d",
		    backend, (int) a->precision);
	}
	if (a->n < 1 || a->n > INT32_MAX) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: n = %lld (1 .. %d on the %s backend)",
		    (long long) a->n, INT32_MAX, backend);
	}
	int64_t nbins = a->n / 2 + 1;
	if (a->kmin < 0 || a->kmin >= a->kmax || a->kmax > nbins) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: bins [%lld, %lld) not inside [0, %lld)",
		    (long long) a->kmin, (long long) a->kmax,
		    (long long) nbins);
	}
	if (a->t_begin < 0 || a->t_begin >= a->t_end || a->t_end > a->n) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: samples [%lld, %lld) not inside [0, %lld)",
		    (long long) a->t_begin, (long long) a->t_end,
		    (long long) a->n);
	}
	if (!(a->delta_f > 0) || !isfinite(a->delta_f)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: delta_f = %g is not positive and finite",
		    a->delta_f);
	}
	if (a->cluster < 1 || isnan(a->threshold)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: cluster = %lld (>= 1), threshold = %g",
		    (long long) a->cluster, a->threshold);
	}
	if (a->count < 1 || a->count > max_count || a->data == NULL
	    || a->psd == NULL || a->templates == NULL || a->peaks == NULL
	    || (a->max_triggers > 0 && a->triggers == NULL)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: count = %lld, or a NULL array",
		    (long long) a->count);
	}
	if (a->nseries < 0
	    || (a->nseries > 0
	        && (a->series == NULL || a->series_index == NULL))) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: nseries = %d with series %s, "
		    "series_index %s",
		    a->nseries, a->series == NULL ? "NULL" : "given",
		    a->series_index == NULL ? "NULL" : "given");
	}
	for (int s = 0; s < a->nseries; s++) {
		int64_t j = a->series_index[s];
		if (j < 0 || j >= a->count) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "matched filter: series_index[%d] = %lld not in "
			    "[0, %lld)",
			    s, (long long) j, (long long) a->count);
		}
	}
	return FFTD_OK;
}

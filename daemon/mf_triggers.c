// SPDX-License-Identifier: MIT
//
// mf_triggers.c — the matched-filter bank's trigger list (mf.h), shared by
// both engines (backends/fftw_mf.c, backends/cuda_mf.c): every trigger is
// counted, the loudest max_triggers are kept in a min-heap in the caller's
// array (weakest at the root), and the kept ones are written out in
// (template, sample) order. Runs on the device's worker, on the host.

#include <stdbool.h>
#include <stdlib.h>

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

void
fftd__mf_trigger_add(fftd__mf_args *a, size_t *nheap, const fftd__mf_trigger *t)
{
	fftd__mf_trigger *h = a->triggers;
	a->ntotal++;
	if (a->max_triggers == 0) {
		return;
	}
	if (*nheap < a->max_triggers) {
		size_t i = (*nheap)++;
		h[i]     = *t;
		while (i > 0 && stronger(&h[(i - 1) / 2], &h[i])) {
			fftd__mf_trigger x = h[i];
			h[i]               = h[(i - 1) / 2];
			h[(i - 1) / 2]     = x;
			i                  = (i - 1) / 2;
		}
	} else if (stronger(t, &h[0])) {
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
	if (nheap > 1) {
		qsort(a->triggers, nheap, sizeof(*a->triggers), by_time);
	}
	a->ntriggers = nheap;
}

// SPDX-License-Identifier: MIT
//
// plan.c — from an FFTW problem (guru64 form, whatever planner the program
// called) to an fftd plan, or the reason the real FFTW must plan it. fftd's
// layout is FFTW's advanced one (fftd_plan_desc: rank 1..3, sizes, one
// batch dimension, per side a stride, a distance and embedded sizes), so a
// guru problem maps when, after dropping dimensions of size 1:
//   - the rank is 1..3, every size and stride positive;
//   - on each side the strides nest: stride[k] is a whole multiple E of
//     stride[k+1] with E at least that side's size of dimension k+1 (E is
//     the embedded size), the last stride is the element stride;
//   - the howmany dimensions collapse to one (each nests in the next);
//   - r2r: rank 1 and FFTW_R2HC or FFTW_HC2R (other kinds, and
//     multi-dimensional r2r, which is not a multi-dimensional r2c, stay
//     with FFTW);
//   - the flags do not say FFTW_WISDOM_ONLY (only FFTW's wisdom can answer).
// It then goes to the daemon when the elements per execution (product of
// the sizes times the batch) reach FFTD_FFTW3_MIN and a daemon is
// reachable and accepts the plan. Planning with the daemon never touches
// the arrays, whatever the flags.

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_impl.h"

// side_layout sets a side's stride and embedded sizes from its guru
// strides s[0..r-1] and its sizes m; 0 when they do not nest.
static int
side_layout(
    int r, const int64_t *m, const int64_t *s, int64_t *embed, int64_t *stride)
{
	if (s[r - 1] <= 0) {
		return 0;
	}
	*stride  = s[r - 1];
	embed[0] = m[0];
	for (int k = r - 2; k >= 0; k--) {
		if (s[k] <= 0 || s[k] % s[k + 1] != 0) {
			return 0;
		}
		int64_t e = s[k] / s[k + 1];
		if (e < m[k + 1]) {
			return 0;
		}
		embed[k + 1] = e;
	}
	return 1;
}

// map fills p (desc, hc, the dims kept) from the problem, or writes why it
// cannot and returns 0.
static int
map(const fftd__dr_problem *pb, fftd__dr_plan *p, char *why, size_t wl)
{
	int64_t n[FFTD_MAX_RANK], is[FFTD_MAX_RANK], os[FFTD_MAX_RANK];
	int     r        = 0;
	int     rdft     = pb->kind == FFTD__DR_R2C || pb->kind == FFTD__DR_C2R;
	fftw_r2r_kind rk = FFTW_R2HC;

	if (pb->rank < 0 || pb->howmany_rank < 0) {
		snprintf(why, wl, "rank %d, howmany rank %d", pb->rank,
		    pb->howmany_rank);
		return 0;
	}
	for (int k = 0; k < pb->rank; k++) {
		const fftw_iodim64 *d = &pb->dims[k];
		if (d->n <= 0) {
			snprintf(why, wl, "size %td", d->n);
			return 0;
		}
		if (d->n == 1 && !(rdft && k == pb->rank - 1)) {
			continue; // a size-1 dimension moves nothing
		}
		if (r == FFTD_MAX_RANK) {
			snprintf(why, wl, "rank above %d", FFTD_MAX_RANK);
			return 0;
		}
		if (pb->kind == FFTD__DR_R2R) {
			if (r > 0
			    || (pb->r2r_kinds[k] != FFTW_R2HC
			        && pb->r2r_kinds[k] != FFTW_HC2R)) {
				snprintf(why, wl,
				    "r2r other than one-dimensional "
				    "FFTW_R2HC/FFTW_HC2R");
				return 0;
			}
			rk = pb->r2r_kinds[k];
		}
		p->dims[r] = *d;
		n[r]       = d->n;
		is[r]      = d->is;
		os[r]      = d->os;
		r++;
	}
	if (r == 0) {
		snprintf(why, wl, "rank 0 (a copy)");
		return 0;
	}
	// The howmany dimensions, collapsed into one.
	int64_t batch = 1, idist = 0, odist = 0;
	int     have = 0;
	for (int k = pb->howmany_rank - 1; k >= 0; k--) {
		const fftw_iodim64 *h = &pb->howmany[k];
		if (h->n <= 0) {
			snprintf(why, wl, "howmany size %td", h->n);
			return 0;
		}
		if (h->n == 1) {
			continue;
		}
		if (!have) {
			batch = h->n;
			idist = h->is;
			odist = h->os;
			have  = 1;
		} else if (h->is == idist * batch && h->os == odist * batch) {
			batch *= h->n;
		} else {
			snprintf(
			    why, wl, "howmany dimensions that do not nest");
			return 0;
		}
	}
	if (have && (idist <= 0 || odist <= 0)) {
		snprintf(why, wl, "batch distances %" PRId64 ", %" PRId64,
		    idist, odist);
		return 0;
	}

	fftd_kind kind = FFTD_C2C;
	p->hc          = FFTD__DR_HC_NONE;
	if (pb->kind == FFTD__DR_R2C) {
		kind = FFTD_R2C;
	} else if (pb->kind == FFTD__DR_C2R) {
		kind = FFTD_C2R;
	} else if (pb->kind == FFTD__DR_R2R) {
		kind  = rk == FFTW_R2HC ? FFTD_R2C : FFTD_C2R;
		p->hc = rk == FFTW_R2HC ? FFTD__DR_HC_R2HC : FFTD__DR_HC_HC2R;
	}
	fftd_plan_desc *d = &p->desc;
	fftd_plan_desc_init(
	    d, r, n, kind, pb->prec == FFTD__DR_F64 ? FFTD_F64 : FFTD_F32);
	if (kind == FFTD_C2C) {
		d->direction
		    = pb->sign == FFTW_FORWARD ? FFTD_FORWARD : FFTD_INVERSE;
	}
	// Each side's sizes: the complex side of r2c/c2r is n/2+1 long in
	// its last dimension.
	int64_t min[FFTD_MAX_RANK], mout[FFTD_MAX_RANK];
	memcpy(min, n, sizeof(min));
	memcpy(mout, n, sizeof(mout));
	if (kind == FFTD_R2C) {
		mout[r - 1] = n[r - 1] / 2 + 1;
	} else if (kind == FFTD_C2R) {
		min[r - 1] = n[r - 1] / 2 + 1;
	}
	// The halfcomplex side stays the user's; the daemon's side there is
	// the contiguous temporary array (the default layout).
	if (p->hc == FFTD__DR_HC_HC2R) {
		if (is[0] <= 0) {
			snprintf(why, wl, "halfcomplex stride %" PRId64, is[0]);
			return 0;
		}
		p->hc_stride = is[0];
		p->hc_dist   = idist;
	} else if (!side_layout(r, min, is, d->inembed, &d->istride)) {
		snprintf(why, wl, "input strides that do not nest");
		return 0;
	}
	if (p->hc == FFTD__DR_HC_R2HC) {
		if (os[0] <= 0) {
			snprintf(why, wl, "halfcomplex stride %" PRId64, os[0]);
			return 0;
		}
		p->hc_stride = os[0];
		p->hc_dist   = odist;
	} else if (!side_layout(r, mout, os, d->onembed, &d->ostride)) {
		snprintf(why, wl, "output strides that do not nest");
		return 0;
	}
	d->batch = batch;
	if (have) {
		d->idist = p->hc == FFTD__DR_HC_HC2R ? 0 : idist;
		d->odist = p->hc == FFTD__DR_HC_R2HC ? 0 : odist;
	}
	p->rank       = r;
	p->howmany.n  = batch;
	p->howmany.is = have ? idist : 0;
	p->howmany.os = have ? odist : 0;
	p->r2r_kind   = rk;
	return 1;
}

// elements is the product of the sizes times the batch (saturating).
static int64_t
elements(const fftd_plan_desc *d)
{
	int64_t e = d->batch;
	for (int k = 0; k < d->rank; k++) {
		if (__builtin_mul_overflow(e, d->n[k], &e)) {
			return INT64_MAX;
		}
	}
	return e;
}

// fftd__dr_plan_make: see dropin_impl.h.
fftd__dr_plan *
fftd__dr_plan_make(const fftd__dr_problem *pb)
{
	const fftd__dr_config   *c       = fftd__dr_config_get();
	static const char *const kinds[] = { "c2c", "r2c", "c2r", "r2r" };
	const char *prec = pb->prec == FFTD__DR_F64 ? "f64" : "f32";
	char        why[400];

	if (c->disabled) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG,
		    "%s %s -> fftw (FFTD_FFTW3_DISABLE)", kinds[pb->kind],
		    prec);
		return NULL;
	}
	if (pb->flags & FFTW_WISDOM_ONLY) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG,
		    "%s %s -> fftw (FFTW_WISDOM_ONLY: FFTW's wisdom decides)",
		    kinds[pb->kind], prec);
		return NULL;
	}
	fftd__dr_plan t;
	memset(&t, 0, sizeof(t));
	if (!map(pb, &t, why, sizeof(why))) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG, "%s %s -> fftw (%s)",
		    kinds[pb->kind], prec, why);
		return NULL;
	}
	int64_t e = elements(&t.desc);
	if (e < c->min_elements) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG,
		    "%s %s rank %d, %" PRId64 " elements -> fftw (below "
		    "FFTD_FFTW3_MIN=%" PRId64 ")",
		    kinds[pb->kind], prec, t.desc.rank, e, c->min_elements);
		return NULL;
	}
	fftd_client *cl = fftd__dr_client(why, sizeof(why));
	if (cl == NULL) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG, "%s %s -> fftw (%s)",
		    kinds[pb->kind], prec, why);
		return NULL;
	}
	fftd__dr_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return NULL;
	}
	*p     = t;
	int rv = fftd_plan_create(cl, &p->desc, &p->fp);
	if (rv != FFTD_OK) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG,
		    "%s %s -> fftw (the daemon refused the plan: %s: %s)",
		    kinds[pb->kind], prec, fftd_strerror(rv),
		    fftd_last_error());
		free(p);
		if (fftd__dr_conn_error(rv)) {
			fftd__dr_client_lost(rv);
		}
		return NULL;
	}
	p->magic = FFTD__DR_MAGIC;
	p->prec  = pb->prec;
	p->kind  = pb->kind;
	p->sign  = pb->sign;
	p->flags = pb->flags;
	p->in    = pb->in;
	p->out   = pb->out;
	pthread_mutex_init(&p->tmp_lock, NULL);
	pthread_mutex_init(&p->fallback_lock, NULL);
	if (p->hc != FFTD__DR_HC_NONE) {
		size_t real  = p->prec == FFTD__DR_F64 ? 8 : 4;
		p->tmp_bytes = (size_t) p->desc.batch
		    * (size_t) (p->desc.n[0] / 2 + 1) * 2 * real;
		p->tmp = fftd__dr_malloc(p->tmp_bytes);
		if (p->tmp == NULL) {
			fftd_plan_destroy(p->fp);
			free(p);
			return NULL;
		}
	}
	char desc[256];
	fftd__dr_plan_describe(p, desc, sizeof(desc));
	fftd__dr_log(FFTD__DR_LOG_DEBUG, "%s -> daemon", desc);
	return p;
}

// fftd__dr_plan_destroy: see dropin_impl.h.
void
fftd__dr_plan_destroy(fftd__dr_plan *p)
{
	fftd_plan_destroy(p->fp);
	void *real = atomic_load(&p->real);
	if (real != NULL) {
		void (*destroy)(void *)
		    = (void (*)(void *)) fftd__dr_real_sym(p->prec,
		        p->prec == FFTD__DR_F64 ? "fftw_destroy_plan"
		                                : "fftwf_destroy_plan");
		if (destroy != NULL) {
			fftd__dr_real_lock();
			destroy(real);
			fftd__dr_real_unlock();
		}
	}
	fftd__dr_free(p->tmp);
	pthread_mutex_destroy(&p->tmp_lock);
	pthread_mutex_destroy(&p->fallback_lock);
	p->magic = 0;
	free(p);
}

// fftd__dr_plan_describe: see dropin_impl.h.
void
fftd__dr_plan_describe(const fftd__dr_plan *p, char *buf, size_t len)
{
	static const char *const kinds[] = { "c2c", "r2c", "c2r" };
	const char              *kind    = p->hc == FFTD__DR_HC_R2HC ? "r2hc"
	                    : p->hc == FFTD__DR_HC_HC2R              ? "hc2r"
	                                                : kinds[p->desc.kind];
	char                     n[96]   = "";
	for (int k = 0; k < p->desc.rank; k++) {
		size_t l = strlen(n);
		snprintf(n + l, sizeof(n) - l, "%s%" PRId64, k ? "x" : "",
		    p->desc.n[k]);
	}
	snprintf(buf, len,
	    "(fftd %s %s%s n=%s batch %" PRId64 " algorithm %s%s)", kind,
	    p->prec == FFTD__DR_F64 ? "f64" : "f32",
	    p->desc.kind == FFTD_C2C
	        ? (p->desc.direction == FFTD_FORWARD ? " forward" : " backward")
	        : "",
	    n, p->desc.batch, p->fp != NULL ? fftd_plan_algorithm(p->fp) : "?",
	    atomic_load(&p->real) != NULL ? ", now in FFTW after a failure"
	                                  : "");
}

// fftd__dr_plan_flops: see dropin_impl.h. FFTW counts its own codelets'
// operations; the daemon's are not visible here, so this is the usual
// estimate: 5 N log2 N per complex transform of N points (3 N log2 N
// additions, 2 N log2 N multiplications), half of that for r2c and c2r.
void
fftd__dr_plan_flops(
    const fftd__dr_plan *p, double *add, double *mul, double *fma)
{
	double n = 1;
	for (int k = 0; k < p->desc.rank; k++) {
		n *= (double) p->desc.n[k];
	}
	double f = (double) p->desc.batch * n * log2(n > 1 ? n : 2)
	    * (p->desc.kind == FFTD_C2C ? 1.0 : 0.5);
	*add = 3 * f;
	*mul = 2 * f;
	*fma = 0;
}

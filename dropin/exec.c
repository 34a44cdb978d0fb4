// SPDX-License-Identifier: MIT
//
// exec.c — executing a plan the daemon serves: fftd_execute on the
// program's arrays (those inside fftd shared buffers, from fftw_malloc, go
// by reference; others are staged or sent inline by libfftd), with the
// halfcomplex repacking of FFTW_R2HC and FFTW_HC2R around it. FFTW's
// execute calls cannot fail, so when the daemon does (it died, a timeout,
// a refusal) the execution runs in the real FFTW instead: a real plan is
// made once, on this execution's arrays with FFTW_ESTIMATE (which reads
// no array), and serves this and every later execution of the plan. The
// arrays of a new-array execute share the planner arrays' alignment and
// placement (FFTW's rule), so that plan fits them all.

#include <stdlib.h>

#include "dropin_impl.h"

// fallback runs the plan in the real FFTW, making the real plan first if
// it is not made yet.
static void
fallback(fftd__dr_plan *p, void *in, void *out)
{
	void *real = atomic_load(&p->real);
	if (real == NULL) {
		pthread_mutex_lock(&p->fallback_lock);
		real = atomic_load(&p->real);
		if (real == NULL) {
			fftd__dr_problem pb = {
				.prec         = p->prec,
				.kind         = p->kind,
				.rank         = p->rank,
				.dims         = p->dims,
				.howmany_rank = 1,
				.howmany      = &p->howmany,
				.r2r_kinds    = &p->r2r_kind,
				.sign         = p->sign,
				.flags        = FFTW_ESTIMATE
				    | (p->flags
				        & (FFTW_PRESERVE_INPUT
				            | FFTW_DESTROY_INPUT
				            | FFTW_UNALIGNED)),
				.in  = in,
				.out = out,
			};
			real = fftd__dr_real_plan(&pb);
			atomic_store(&p->real, real);
		}
		pthread_mutex_unlock(&p->fallback_lock);
	}
	if (real == NULL) {
		fftd__dr_log(FFTD__DR_LOG_WARN,
		    "the real FFTW cannot make the plan either: the output is "
		    "not written");
		return;
	}
	fftd__dr_real_execute(p->prec, p->kind, real, in, out);
}

// failed logs a daemon failure and falls back.
static void
failed(fftd__dr_plan *p, int rv, void *in, void *out)
{
	char desc[256];
	fftd__dr_plan_describe(p, desc, sizeof(desc));
	fftd__dr_log(FFTD__DR_LOG_WARN,
	    "%s: the daemon failed (%s: %s); this plan runs in FFTW from now "
	    "on",
	    desc, fftd_strerror(rv), fftd_last_error());
	if (fftd__dr_conn_error(rv)) {
		fftd__dr_client_lost(rv);
	}
	fallback(p, in, out);
}

// hc_execute runs an FFTW_R2HC or FFTW_HC2R plan through the temporary
// complex array: the plan's own when no other execution holds it, else
// one of this execution's.
static int
hc_execute(fftd__dr_plan *p, void *in, void *out)
{
	void *tmp   = p->tmp;
	int   owned = 0;
	if (pthread_mutex_trylock(&p->tmp_lock) != 0) {
		tmp = fftd__dr_malloc(p->tmp_bytes);
		if (tmp == NULL) {
			return FFTD_ENOMEM;
		}
		owned = 1;
	}
	int64_t n     = p->desc.n[0];
	int64_t batch = p->desc.batch;
	int     rv;
	if (p->hc == FFTD__DR_HC_R2HC) {
		rv = fftd_execute(p->fp, in, tmp);
		if (rv == FFTD_OK) {
			fftd__dr_to_hc(p->prec, n, batch, tmp, out,
			    p->hc_stride, p->hc_dist);
		}
	} else {
		fftd__dr_from_hc(
		    p->prec, n, batch, in, p->hc_stride, p->hc_dist, tmp);
		rv = fftd_execute(p->fp, tmp, out);
	}
	if (owned) {
		fftd__dr_free(tmp);
	} else {
		pthread_mutex_unlock(&p->tmp_lock);
	}
	return rv;
}

// fftd__dr_execute: see dropin_impl.h.
void
fftd__dr_execute(fftd__dr_plan *p, void *in, void *out)
{
	if (in == NULL && out == NULL) {
		in  = p->in;
		out = p->out;
	}
	if (atomic_load(&p->real) != NULL) {
		fallback(p, in, out);
		return;
	}
	int rv = p->hc != FFTD__DR_HC_NONE ? hc_execute(p, in, out)
	                                   : fftd_execute(p->fp, in, out);
	if (rv != FFTD_OK) {
		failed(p, rv, in, out);
	}
}

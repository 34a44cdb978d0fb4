// SPDX-License-Identifier: MIT
//
// fftw_mf.c — the matched-filter bank (daemon/mf.h) on the fftw backend:
// FINDCHIRP's filter (B. Allen et al., "FINDCHIRP: an algorithm for
// detection of gravitational waves from inspiraling compact binaries",
// Phys. Rev. D 85, 122006 (2012), sec. IV) as PyCBC's matched_filter_core
// computes it (pycbc/filter/matchedfilter.py), over a slice of a template
// bank in the daemon's host memory. For template j, bins k in [kmin, kmax):
//
//   q_j[k]   = D_k conj(h_jk) / S_k   (one-sided: zero outside [kmin, kmax),
//                                      negative frequencies included)
//   z_j(t)   = 4 df sum_k q_j[k] exp(+2 pi i k t / N)   (FFTW_BACKWARD,
//                                      unnormalised, length N complex)
//   sigma_j^2 = 4 df sum_k |h_jk|^2 / S_k   (double, whatever the precision;
//                                      or given: FFTD_MF_SIGMASQ_USE)
//   rho_j(t) = |z_j(t)| / sigma_j
//
// PyCBC computes the same q (its `qtilde`), the same backward transform
// into `_q`, and `snr = _q * 4 df / sqrt(sigmasq)`; the peak it reports is
// argmax |snr| over the window asked for. A template with sigma_j = 0 (zero
// over [kmin, kmax)) has rho_j(t) = 0 everywhere: no signal, no trigger.
//
// How: the weights w_k = D_k / S_k and 1 / S_k are made once per call in
// double; templates go through in batches of B (B x N complex of scratch,
// at most SCRATCH_BYTES unless one template needs more), each batch one
// in-place fftw_plan_many_dft (FFTW_BACKWARD) on the device's FFTW threads.
// Plans are made per call with FFTW_ESTIMATE on the scratch itself
// (ESTIMATE never touches the arrays) under the backend's planner lock and
// destroyed at the end: planning costs about a millisecond against the
// seconds a bank takes, and no per-device state needs a close hook. The
// products are formed in double and stored in the request's precision;
// |z|, sigma, rho, peaks and triggers are double. Only [t_begin, t_end)
// of each transform is read.
//
// Triggers: the windows [t_begin + w cluster, t_begin + (w + 1) cluster)
// (the last one cut at t_end), per template; a window whose loudest rho
// (its first sample on ties) is above threshold gives one trigger. All of
// them are counted in ntotal; the loudest max_triggers are kept (a min-heap
// in the caller's array; equal rho: the lower template, then the earlier
// sample, wins) and written in (template, t) order.

#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "fftw_impl.h"
#include "mf.h"

// Scratch per batch, bytes: 16 MiB holds 8 templates of 2^17 f64 samples.
#define SCRATCH_BYTES ((size_t) 16 << 20)
// More templates per FFTW call buys nothing measurable.
#define MAX_BATCH 16
#define ALIGN 64

typedef union mf_plan {
	fftw_plan  d;
	fftwf_plan f;
} mf_plan;

// mf_run is one call's state.
typedef struct mf_run {
	fftd__mf_args *a;
	int64_t        n, nb; // N; bins used (kmax - kmin)
	bool           f64;
	size_t         csize; // bytes of one complex element
	double        *w;     // nb complex: D_k / S_k
	double        *inv_s; // nb: 1 / S_k
	void          *buf;   // batch x N complex, in place
	int            batch; // templates per full batch
	mf_plan        plan;  // howmany = batch
	mf_plan        tail;  // howmany = count % batch (if not 0)
	bool           have_plan, have_tail;
	double        *sigma; // batch: sigma of the templates in buf
	size_t         nheap; // triggers held in a->triggers
} mf_run;

// make_weights fills w = D/S and inv_s = 1/S over [kmin, kmax), refusing a
// PSD that is not positive and finite there (rho would be meaningless) and
// data that is not finite.
static int
make_weights(mf_run *r, char *msg, size_t msglen)
{
	const fftd__mf_args *a = r->a;
	for (int64_t i = 0; i < r->nb; i++) {
		int64_t k = a->kmin + i;
		double  s, dre, dim;
		if (r->f64) {
			const double *d = a->data;
			s               = ((const double *) a->psd)[k];
			dre             = d[2 * k];
			dim             = d[2 * k + 1];
		} else {
			const float *d = a->data;
			s              = ((const float *) a->psd)[k];
			dre            = d[2 * k];
			dim            = d[2 * k + 1];
		}
		if (!(s > 0) || !isfinite(s)) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "matched filter: psd[%lld] = %g is not positive "
			    "and finite (f32: scale data and templates by "
			    "DYN_RANGE_FAC = 2^69 and the PSD by its square, "
			    "as PyCBC does)",
			    (long long) k, s);
		}
		if (!isfinite(dre) || !isfinite(dim)) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "matched filter: data[%lld] is not finite",
			    (long long) k);
		}
		r->inv_s[i]     = 1.0 / s;
		r->w[2 * i]     = dre / s;
		r->w[2 * i + 1] = dim / s;
	}
	return FFTD_OK;
}

// plan_batch plans howmany in-place backward transforms of length N on
// r->buf (FFTW_ESTIMATE: the scratch is not touched).
static bool
plan_batch(mf_run *r, int howmany, int nthreads, mf_plan *p)
{
	int              n    = (int) r->n;
	pthread_mutex_t *lock = fftd__fftw_planner_lock();
	bool             ok;
	pthread_mutex_lock(lock);
	if (r->f64) {
		fftw_plan_with_nthreads(nthreads);
		p->d = fftw_plan_many_dft(1, &n, howmany, r->buf, NULL, 1, n,
		    r->buf, NULL, 1, n, FFTW_BACKWARD, FFTW_ESTIMATE);
		ok   = p->d != NULL;
	} else {
		fftwf_plan_with_nthreads(nthreads);
		p->f = fftwf_plan_many_dft(1, &n, howmany, r->buf, NULL, 1, n,
		    r->buf, NULL, 1, n, FFTW_BACKWARD, FFTW_ESTIMATE);
		ok   = p->f != NULL;
	}
	pthread_mutex_unlock(lock);
	return ok;
}

static void
destroy_plan(mf_run *r, mf_plan *p)
{
	pthread_mutex_t *lock = fftd__fftw_planner_lock();
	pthread_mutex_lock(lock);
	if (r->f64) {
		fftw_destroy_plan(p->d);
	} else {
		fftwf_destroy_plan(p->f);
	}
	pthread_mutex_unlock(lock);
}

// fill_product writes q_j (zero outside [kmin, kmax)) into slot b of the
// scratch and returns sigma_j^2 / (4 df), both from template j.
static double
fill_product(mf_run *r, int64_t j, int b)
{
	const fftd__mf_args *a     = r->a;
	size_t               nbins = (size_t) (r->n / 2 + 1);
	const double        *w     = r->w;
	const double        *is    = r->inv_s;
	double               hh    = 0;
	size_t               kmin  = (size_t) a->kmin;
	size_t               kmax  = (size_t) a->kmax;
	size_t               n     = (size_t) r->n;
	if (r->f64) {
		double       *q = (double *) r->buf + 2 * n * (size_t) b;
		const double *h = (const double *) a->templates
		    + 2 * nbins * (size_t) j + 2 * kmin;
		memset(q, 0, 2 * kmin * sizeof(*q));
		memset(q + 2 * kmax, 0, 2 * (n - kmax) * sizeof(*q));
		q += 2 * kmin;
		for (size_t i = 0; i < kmax - kmin; i++) {
			double hr = h[2 * i], hi = h[2 * i + 1];
			double wr = w[2 * i], wi = w[2 * i + 1];
			q[2 * i]     = wr * hr + wi * hi;
			q[2 * i + 1] = wi * hr - wr * hi;
			hh += (hr * hr + hi * hi) * is[i];
		}
	} else {
		float       *q = (float *) r->buf + 2 * n * (size_t) b;
		const float *h = (const float *) a->templates
		    + 2 * nbins * (size_t) j + 2 * kmin;
		memset(q, 0, 2 * kmin * sizeof(*q));
		memset(q + 2 * kmax, 0, 2 * (n - kmax) * sizeof(*q));
		q += 2 * kmin;
		for (size_t i = 0; i < kmax - kmin; i++) {
			double hr = h[2 * i], hi = h[2 * i + 1];
			double wr = w[2 * i], wi = w[2 * i + 1];
			q[2 * i]     = (float) (wr * hr + wi * hi);
			q[2 * i + 1] = (float) (wi * hr - wr * hi);
			hh += (hr * hr + hi * hi) * is[i];
		}
	}
	return hh;
}

// scan reads rho_j over [t_begin, t_end) from slot b of the transformed
// scratch: the peak, the clustered triggers, and the series rows naming j.
// Returns false if a rho is not finite (an f32 product out of range).
static bool
scan(mf_run *r, int64_t j, int b, double sigma)
{
	fftd__mf_args *a     = r->a;
	double         scale = 4 * a->delta_f;
	double         norm  = sigma > 0 ? scale / sigma : 0;
	size_t         n     = (size_t) r->n;
	size_t         width = (size_t) (a->t_end - a->t_begin);
	const double  *qd    = (const double *) r->buf + 2 * n * (size_t) b;
	const float   *qf    = (const float *) r->buf + 2 * n * (size_t) b;
	bool           trig  = a->threshold > 0;

	int row = -1; // the first series row of template j
	for (int s = 0; s < a->nseries && row < 0; s++) {
		if (a->series_index[s] == j) {
			row = s;
		}
	}
	double *sd = NULL;
	float  *sf = NULL;
	if (row >= 0 && r->f64) {
		sd = (double *) a->series + (size_t) row * width;
	} else if (row >= 0) {
		sf = (float *) a->series + (size_t) row * width;
	}

	fftd__mf_trigger best
	    = { .template_index = j, .t = a->t_begin, .rho = -1 };
	fftd__mf_trigger win  = best;
	int64_t          left = 0; // samples left in the current window
	bool             fine = true;
	for (int64_t t = a->t_begin; t < a->t_end; t++) {
		if (left == 0) {
			left    = a->t_end - t < a->cluster ? a->t_end - t
			                                    : a->cluster;
			win.rho = -1;
		}
		double re, im;
		if (r->f64) {
			re = qd[2 * t];
			im = qd[2 * t + 1];
		} else {
			re = qf[2 * t];
			im = qf[2 * t + 1];
		}
		double rho = sqrt(re * re + im * im) * norm;
		fine &= rho <= DBL_MAX; // false for NaN and Inf
		if (rho > best.rho) {
			best = (fftd__mf_trigger) { j, t, rho, re, im };
		}
		if (rho > win.rho) {
			win = (fftd__mf_trigger) { j, t, rho, re, im };
		}
		if (--left == 0 && trig && win.rho > a->threshold) {
			win.z_re *= scale;
			win.z_im *= scale;
			fftd__mf_trigger_add(r->a, &r->nheap, &win);
		}
		if (sd != NULL) {
			sd[t - a->t_begin] = rho;
		} else if (sf != NULL) {
			sf[t - a->t_begin] = (float) rho;
		}
	}
	a->peaks[j] = (fftd__mf_peak) { .rho = best.rho,
		.t                           = best.t,
		.sigma                       = sigma,
		.z_re                        = best.z_re * scale,
		.z_im                        = best.z_im * scale };
	// Later rows naming j again get copies of the first.
	size_t esize = r->f64 ? sizeof(double) : sizeof(float);
	for (int s = row + 1; row >= 0 && s < a->nseries; s++) {
		if (a->series_index[s] == j) {
			memcpy((char *) a->series + (size_t) s * width * esize,
			    (char *) a->series + (size_t) row * width * esize,
			    width * esize);
		}
	}
	return fine;
}

// run_bank filters the slice batch by batch; r is set up by the caller.
static int
run_bank(mf_run *r, char *msg, size_t msglen)
{
	fftd__mf_args *a     = r->a;
	double         scale = 4 * a->delta_f;
	for (int64_t j0 = 0; j0 < a->count; j0 += r->batch) {
		int nb = a->count - j0 < r->batch ? (int) (a->count - j0)
		                                  : r->batch;
		for (int b = 0; b < nb; b++) {
			int64_t j  = j0 + b;
			double  s2 = scale * fill_product(r, j, b);
			// sigma^2 given (fftd_mf_sigmasq): taken as it is
			if (a->sigmasq_mode == FFTD_MF_SIGMASQ_USE) {
				s2 = a->sigmasq[j];
			} else if (a->sigmasq_mode == FFTD_MF_SIGMASQ_STORE) {
				a->sigmasq[j] = s2;
			}
			int rv = fftd__mf_check_sigmasq(a, j, s2, msg, msglen);
			if (rv != FFTD_OK) {
				return rv;
			}
			r->sigma[b] = sqrt(s2);
		}
		mf_plan p = nb == r->batch ? r->plan : r->tail;
		if (r->f64) {
			fftw_execute(p.d);
		} else {
			fftwf_execute(p.f);
		}
		for (int b = 0; b < nb; b++) {
			if (!scan(r, j0 + b, b, r->sigma[b])) {
				return fftd__errmsg(FFTD_EINVAL, msg, msglen,
				    "matched filter: rho of template %lld is "
				    "not finite (an f32 product D conj(h)/S "
				    "out of range? scale as PyCBC does, by "
				    "DYN_RANGE_FAC)",
				    (long long) (j0 + b));
			}
		}
	}
	fftd__mf_triggers_finish(a, r->nheap);
	return FFTD_OK;
}

// fftd__fftw_mf_bank runs the bank a on the CPU (see the top of this
// file), on the device's worker thread; results go to the host arrays a
// names. Scratch: B x N complex (B templates per FFTW call) plus 3 (kmax -
// kmin) doubles, freed before returning. Errors: FFTD_EINVAL (an argument
// out of range, a PSD bin not positive, data or a template not finite),
// FFTD_EUNSUPPORTED (f16), FFTD_ENOMEM, FFTD_EBACKEND (FFTW gave no plan).
int
fftd__fftw_mf_bank(
    fftd__device *dev, struct fftd__mf_args *a, char *msg, size_t msglen)
{
	int rv = fftd__mf_check_args(a, "fftw", INT64_MAX, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	a->ntriggers = 0;
	a->ntotal    = 0;

	mf_run r   = { .a = a, .n = a->n, .nb = a->kmax - a->kmin };
	r.f64      = a->precision == FFTD_F64;
	r.csize    = r.f64 ? 2 * sizeof(double) : 2 * sizeof(float);
	size_t one = (size_t) r.n * r.csize;
	size_t b   = SCRATCH_BYTES / one;
	b          = b < 1 ? 1 : b > MAX_BATCH ? MAX_BATCH : b;
	r.batch    = (int64_t) b > a->count ? (int) a->count : (int) b;

	size_t bytes = (one * (size_t) r.batch + ALIGN - 1) / ALIGN * ALIGN;
	r.buf        = aligned_alloc(ALIGN, bytes);
	r.w          = malloc(3 * (size_t) r.nb * sizeof(double));
	r.sigma      = malloc((size_t) r.batch * sizeof(double));
	if (r.buf == NULL || r.w == NULL || r.sigma == NULL) {
		rv = fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "matched filter: no memory for %zu bytes of scratch",
		    bytes + 3 * (size_t) r.nb * sizeof(double));
		goto out;
	}
	r.inv_s = r.w + 2 * r.nb;
	rv      = make_weights(&r, msg, msglen);
	if (rv != FFTD_OK) {
		goto out;
	}
	int nthreads = fftd__fftw_nthreads(dev);
	int tail     = (int) (a->count % r.batch);
	r.have_plan  = plan_batch(&r, r.batch, nthreads, &r.plan);
	r.have_tail  = tail != 0 && plan_batch(&r, tail, nthreads, &r.tail);
	if (!r.have_plan || (tail != 0 && !r.have_tail)) {
		rv = fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "matched filter: %s_plan_many_dft gave no plan (n = %lld)",
		    r.f64 ? "fftw" : "fftwf", (long long) r.n);
		goto out;
	}
	rv = run_bank(&r, msg, msglen);
out:
	if (r.have_plan) {
		destroy_plan(&r, &r.plan);
	}
	if (r.have_tail) {
		destroy_plan(&r, &r.tail);
	}
	free(r.buf);
	free(r.w);
	free(r.sigma);
	return rv;
}

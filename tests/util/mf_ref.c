// SPDX-License-Identifier: MIT
//
// mf_ref.c — the matched-filter bank's long double reference and the
// checks of a bank's results against it (mf_ref.h says what and within
// which bounds), shared by the engine's unit test and the daemon's
// integration test.

#include <fftw3.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cases.h"
#include "mf_ref.h"
#include "ref.h"

// worst[p] is the largest error / tol seen per precision (0 f64, 1 f32).
static double worst[2];

// fftd_test_mf_rng_next is splitmix64: fast, and the same on every
// machine, so FFTD_TEST_SEED repeats a run.
uint64_t
fftd_test_mf_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

// fftd_test_mf_unit is uniform in [0, 1) (53 bits).
double
fftd_test_mf_unit(uint64_t *s)
{
	return (double) (fftd_test_mf_rng_next(s) >> 11) * 0x1p-53;
}

// fftd_test_mf_range is uniform in [lo, hi] (integers).
int64_t
fftd_test_mf_range(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo
	    + (int64_t) (fftd_test_mf_rng_next(s) % (uint64_t) (hi - lo + 1));
}

// fftd_test_mf_real_size is one real's size in p.
size_t
fftd_test_mf_real_size(fftd_precision p)
{
	return p == FFTD_F64 ? sizeof(double) : sizeof(float);
}

// fftd_test_mf_put rounds v to p's real type into element i.
void
fftd_test_mf_put(void *arr, fftd_precision p, size_t i, long double v)
{
	if (p == FFTD_F64) {
		((double *) arr)[i] = (double) v;
	} else {
		((float *) arr)[i] = (float) v;
	}
}

// fftd_test_mf_get reads element i of p's real type.
long double
fftd_test_mf_get(const void *arr, fftd_precision p, size_t i)
{
	return p == FFTD_F64 ? ((const double *) arr)[i]
	                     : ((const float *) arr)[i];
}

// fftd_test_mf_new allocates and fills the inputs (mf_ref.h).
void
fftd_test_mf_new(fftd_test_mf *b, int64_t n, fftd_precision p,
    int64_t ntemplates, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->nbins      = n / 2 + 1;
	b->ntemplates = ntemplates;
	size_t r      = fftd_test_mf_real_size(p);
	size_t nb     = (size_t) b->nbins;
	size_t nt     = 2 * nb * (size_t) ntemplates;
	b->data       = malloc(2 * nb * r);
	b->psd        = malloc(nb * r);
	b->templates  = malloc(nt * r + 1); // + 1: ntemplates may be 0
	assert_non_null(b->data);
	assert_non_null(b->psd);
	assert_non_null(b->templates);
	uint64_t s = seed;
	for (size_t i = 0; i < 2 * nb; i++) {
		fftd_test_mf_put(b->data, p, i, 2 * fftd_test_mf_unit(&s) - 1);
	}
	for (size_t i = 0; i < nb; i++) {
		fftd_test_mf_put(
		    b->psd, p, i, 0.25 + 2 * fftd_test_mf_unit(&s));
	}
	for (size_t i = 0; i < nt; i++) {
		fftd_test_mf_put(
		    b->templates, p, i, 2 * fftd_test_mf_unit(&s) - 1);
	}
	b->n         = n;
	b->precision = p;
	b->delta_f   = 4096.0 / (double) n;
	b->kmin      = 0;
	b->kmax      = b->nbins;
	b->t_begin   = 0;
	b->t_end     = n;
	b->cluster   = 1;
	b->first     = 0;
	b->count     = ntemplates;
}

// ref_free frees the reference only.
static void
ref_free(fftd_test_mf *b)
{
	free(b->sigma);
	free(b->peak);
	free(b->rho);
	free(b->zre);
	free(b->zim);
	b->sigma = b->peak = b->rho = b->zre = b->zim = NULL;
}

// fftd_test_mf_free frees the inputs and the reference.
void
fftd_test_mf_free(fftd_test_mf *b)
{
	free(b->data);
	free(b->psd);
	free(b->templates);
	ref_free(b);
	memset(b, 0, sizeof(*b));
}

// fftd_test_mf_template is where template j of the slice starts.
void *
fftd_test_mf_template(const fftd_test_mf *b, int64_t j)
{
	return (char *) b->templates
	    + 2 * (size_t) ((b->first + j) * b->nbins)
	    * fftd_test_mf_real_size(b->precision);
}

// fftd_test_mf_reference computes the slice's reference (mf_ref.h).
void
fftd_test_mf_reference(fftd_test_mf *b)
{
	fftd_precision p = b->precision;
	int64_t        n = b->n;
	ref_free(b);
	b->width         = b->t_end - b->t_begin;
	size_t cells     = (size_t) (b->count * b->width) + 1;
	b->sigma         = malloc((size_t) b->count * sizeof(long double) + 1);
	b->peak          = malloc((size_t) b->count * sizeof(long double) + 1);
	b->rho           = malloc(cells * sizeof(long double));
	b->zre           = malloc(cells * sizeof(long double));
	b->zim           = malloc(cells * sizeof(long double));
	fftwl_complex *q = fftwl_malloc((size_t) n * sizeof(*q));
	fftwl_complex *z = fftwl_malloc((size_t) n * sizeof(*z));
	assert_true(
	    b->sigma && b->peak && b->rho && b->zre && b->zim && q && z);
	fftwl_plan pl
	    = fftwl_plan_dft_1d((int) n, q, z, FFTW_BACKWARD, FFTW_ESTIMATE);
	assert_non_null(pl);
	long double scale = 4.0L * b->delta_f;
	for (int64_t j = 0; j < b->count; j++) {
		const void *h  = fftd_test_mf_template(b, j);
		long double hh = 0;
		memset(q, 0, (size_t) n * sizeof(*q));
		for (int64_t k = b->kmin; k < b->kmax; k++) {
			long double dr = fftd_test_mf_get(b->data, p, 2 * k);
			long double di
			    = fftd_test_mf_get(b->data, p, 2 * k + 1);
			long double hr = fftd_test_mf_get(h, p, 2 * k);
			long double hi = fftd_test_mf_get(h, p, 2 * k + 1);
			long double s  = fftd_test_mf_get(b->psd, p, k);
			q[k][0]        = (dr * hr + di * hi) / s;
			q[k][1]        = (di * hr - dr * hi) / s;
			hh += (hr * hr + hi * hi) / s;
		}
		fftwl_execute(pl);
		long double sig = sqrtl(scale * hh);
		b->sigma[j]     = sig;
		b->peak[j]      = 0;
		for (int64_t t = b->t_begin; t < b->t_end; t++) {
			size_t c = (size_t) (j * b->width + t - b->t_begin);
			long double zr = scale * z[t][0], zi = scale * z[t][1];
			b->zre[c] = zr;
			b->zim[c] = zi;
			b->rho[c]
			    = sig > 0 ? sqrtl(zr * zr + zi * zi) / sig : 0;
			if (b->rho[c] > b->peak[j]) {
				b->peak[j] = b->rho[c];
			}
		}
	}
	fftwl_destroy_plan(pl);
	fftwl_free(q);
	fftwl_free(z);
}

// fftd_test_mf_rho is the reference's rho(t) of slice template j.
long double
fftd_test_mf_rho(const fftd_test_mf *b, int64_t j, int64_t t)
{
	return b->rho[j * b->width + t - b->t_begin];
}

// bound is B of mf_ref.h's bounds.
static double
bound(const fftd_test_mf *b)
{
	return b->precision == FFTD_F64 ? 1e-12 : 1e-5;
}

// tol is the absolute rho tolerance of template j.
static double
tol(const fftd_test_mf *b, int64_t j)
{
	double pk = (double) b->peak[j];
	return bound(b) * (pk > 0 ? pk : 1);
}

// note_err records err / tl for the log and fails above 1 (a NaN fails).
static void
note_err(const fftd_test_mf *b, const char *what, int64_t j, int64_t t,
    double err, double tl)
{
	double r = err / tl;
	int    i = b->precision == FFTD_F64 ? 0 : 1;
	if (!(r <= 1)) {
		fail_msg("%s: template %lld sample %lld: error %.3g > tol %.3g",
		    what, (long long) j, (long long) t, err, tl);
	}
	if (r > worst[i]) {
		worst[i] = r;
	}
}

// window_max is the reference's loudest sample of window w of template j
// (first on ties).
static int64_t
window_max(const fftd_test_mf *b, int64_t j, int64_t w)
{
	int64_t t0   = b->t_begin + w * b->cluster;
	int64_t t1   = b->t_end - t0 < b->cluster ? b->t_end : t0 + b->cluster;
	int64_t best = t0;
	for (int64_t t = t0 + 1; t < t1; t++) {
		if (fftd_test_mf_rho(b, j, t) > fftd_test_mf_rho(b, j, best)) {
			best = t;
		}
	}
	return best;
}

// nwindows is how many cluster windows the searched samples make.
static int64_t
nwindows(const fftd_test_mf *b)
{
	return (b->width + b->cluster - 1) / b->cluster;
}

// by_rho orders doubles up.
static int
by_rho(const void *x, const void *y)
{
	double p = *(const double *) x, q = *(const double *) y;
	return p < q ? -1 : p > q;
}

// fftd_test_mf_pick_threshold picks a threshold with a gap (mf_ref.h).
double
fftd_test_mf_pick_threshold(const fftd_test_mf *b, double frac)
{
	int64_t nw = nwindows(b), m = nw * b->count;
	double *v  = malloc((size_t) m * sizeof(double));
	double  hi = 0;
	assert_non_null(v);
	for (int64_t j = 0; j < b->count; j++) {
		for (int64_t w = 0; w < nw; w++) {
			v[j * nw + w] = (double) fftd_test_mf_rho(
			    b, j, window_max(b, j, w));
			hi = v[j * nw + w] > hi ? v[j * nw + w] : hi;
		}
	}
	qsort(v, (size_t) m, sizeof(double), by_rho);
	double  gap = 20 * bound(b) * hi, th = hi + 1;
	int64_t i = (int64_t) (frac * (double) (m - 1));
	for (; i + 1 < m; i++) {
		if (v[i + 1] - v[i] > gap) {
			th = (v[i] + v[i + 1]) / 2;
			break;
		}
	}
	free(v);
	return th;
}

// fftd_test_mf_found counts the reference's triggers.
size_t
fftd_test_mf_found(const fftd_test_mf *b)
{
	size_t found = 0;
	for (int64_t j = 0; j < b->count && b->threshold > 0; j++) {
		for (int64_t w = 0; w < nwindows(b); w++) {
			found += fftd_test_mf_rho(b, j, window_max(b, j, w))
			    > b->threshold;
		}
	}
	return found;
}

// fftd_test_mf_draw draws a random request (mf_ref.h).
void
fftd_test_mf_draw(fftd_test_mf *b, uint64_t *s, int max_series,
    size_t *max_triggers, int64_t *idx, int *nseries)
{
	int64_t n      = b->n;
	b->kmin        = fftd_test_mf_range(s, 0, b->nbins / 4);
	b->kmax        = fftd_test_mf_range(s, b->nbins / 2, b->nbins);
	b->t_begin     = fftd_test_mf_range(s, 0, n / 4);
	b->t_end       = fftd_test_mf_range(s, n / 2, n);
	int64_t w      = b->t_end - b->t_begin;
	int64_t clus[] = { 1, 7, 100, 1000, w / 3 + 1, w + 5 };
	b->cluster     = clus[fftd_test_mf_range(s, 0, 5)];
	if (n >= 65536 && b->cluster < 100) {
		b->cluster = 100; // keep the reference's windows few
	}
	b->threshold = 0;
	fftd_test_mf_reference(b);
	if (fftd_test_mf_range(s, 0, 4) != 0) {
		b->threshold = fftd_test_mf_pick_threshold(
		    b, 0.5 + 0.45 * fftd_test_mf_unit(s));
	}
	// Ask for fewer than found half the time.
	size_t found  = fftd_test_mf_found(b);
	*max_triggers = fftd_test_mf_range(s, 0, 1)
	    ? found + 3
	    : (size_t) fftd_test_mf_range(s, 0, (int64_t) found / 2);
	*nseries      = (int) fftd_test_mf_range(s, 0, 3);
	if (*nseries > max_series) {
		*nseries = max_series;
	}
	for (int i = 0; i < *nseries; i++) {
		idx[i] = fftd_test_mf_range(s, 0, b->count - 1);
	}
}

// fftd_test_mf_describe prints the request and its counts.
void
fftd_test_mf_describe(
    const fftd_test_mf *b, const fftd_test_mf_out *o, const char *label)
{
	print_message("%s n=%lld %s templates [%lld,+%lld) bins [%lld,%lld) "
	              "t [%lld,%lld) cluster %lld thr %.4g: %zu/%zu triggers "
	              "(room %zu), %d series\n",
	    label, (long long) b->n, fftd_test_prec_name(b->precision),
	    (long long) b->first, (long long) b->count, (long long) b->kmin,
	    (long long) b->kmax, (long long) b->t_begin, (long long) b->t_end,
	    (long long) b->cluster, b->threshold, o->ntriggers, o->ntotal,
	    o->max_triggers, o->nseries);
}

// fftd_test_mf_out_new allocates poisoned results (mf_ref.h).
void
fftd_test_mf_out_new(fftd_test_mf_out *o, const fftd_test_mf *b,
    size_t max_triggers, int nseries, const int64_t *series_index)
{
	memset(o, 0, sizeof(*o));
	size_t pb = (size_t) (b->count > 0 ? b->count : 0) * sizeof(*o->peaks);
	size_t tb = (max_triggers + 1) * sizeof(*o->triggers);
	o->peaks  = malloc(pb + 1);
	o->triggers = malloc(tb);
	assert_non_null(o->peaks);
	assert_non_null(o->triggers);
	fftd_ref_poison(o->peaks, pb);
	fftd_ref_poison(o->triggers, tb);
	o->max_triggers = max_triggers;
	o->ntriggers    = 12345;
	o->ntotal       = 67890;
	o->nseries      = nseries;
	if (nseries > 0) {
		size_t bytes = (size_t) nseries
		    * (size_t) (b->t_end - b->t_begin)
		    * fftd_test_mf_real_size(b->precision);
		o->series       = malloc(bytes);
		o->series_index = malloc((size_t) nseries * sizeof(int64_t));
		assert_non_null(o->series);
		assert_non_null(o->series_index);
		fftd_ref_poison(o->series, bytes);
		memcpy(o->series_index, series_index,
		    (size_t) nseries * sizeof(int64_t));
	}
}

// fftd_test_mf_out_free frees the results.
void
fftd_test_mf_out_free(fftd_test_mf_out *o)
{
	free(o->peaks);
	free(o->triggers);
	free(o->series);
	free(o->series_index);
	memset(o, 0, sizeof(*o));
}

// fftd_test_mf_check_peaks compares peaks and sigmas with the reference.
void
fftd_test_mf_check_peaks(const fftd_test_mf *b, const fftd_test_mf_out *o)
{
	for (int64_t j = 0; j < b->count; j++) {
		const fftd_mf_peak *pk = &o->peaks[j];
		double              tl = tol(b, j);
		double              sg = (double) b->sigma[j];
		assert_in_range(pk->t, b->t_begin, b->t_end - 1);
		note_err(b, "sigma", j, pk->t, fabs(pk->sigma - sg),
		    1e-12 * (sg > 0 ? sg : 1));
		note_err(b, "peak rho", j, pk->t,
		    fabs(pk->rho - (double) b->peak[j]), tl);
		// A near tie may put the peak elsewhere, never a weaker one.
		note_err(b, "peak rho at its sample", j, pk->t,
		    fabs(pk->rho - (double) fftd_test_mf_rho(b, j, pk->t)), tl);
		size_t c  = (size_t) (j * b->width + pk->t - b->t_begin);
		double dz = hypot(pk->z_re - (double) b->zre[c],
		    pk->z_im - (double) b->zim[c]);
		note_err(b, "peak z", j, pk->t, dz, tl * (sg > 0 ? sg : 1));
	}
}

// by_rho_desc orders doubles down (louder triggers first).
static int
by_rho_desc(const void *x, const void *y)
{
	double p = *(const double *) x, q = *(const double *) y;
	return p > q ? -1 : p < q;
}

// check_trigger checks trigger i (of keep, of nref found; loud holds the
// found rhos loudest first) against the reference.
static void
check_trigger(const fftd_test_mf *b, const fftd_test_mf_out *o, size_t i,
    size_t keep, size_t nref, const double *loud)
{
	const fftd_mf_trigger *tr = &o->triggers[i];
	int64_t                j  = tr->template_index;
	assert_in_range(j, 0, b->count - 1);
	assert_in_range(tr->t, b->t_begin, b->t_end - 1);
	if (i > 0) { // (template, t) order, one per window
		const fftd_mf_trigger *pv = &o->triggers[i - 1];
		assert_true(pv->template_index < j
		    || (pv->template_index == j
		        && (pv->t - b->t_begin) / b->cluster
		            < (tr->t - b->t_begin) / b->cluster));
	}
	double  tl = tol(b, j);
	int64_t w  = (tr->t - b->t_begin) / b->cluster;
	int64_t tm = window_max(b, j, w);
	double  rm = (double) fftd_test_mf_rho(b, j, tm);
	note_err(b, "trigger rho", j, tr->t, fabs(tr->rho - rm), tl);
	note_err(b, "trigger rho at its sample", j, tr->t,
	    fabs(tr->rho - (double) fftd_test_mf_rho(b, j, tr->t)), tl);
	assert_true(rm > b->threshold);
	size_t c  = (size_t) (j * b->width + tr->t - b->t_begin);
	double sg = (double) b->sigma[j];
	note_err(b, "trigger z", j, tr->t,
	    hypot(tr->z_re - (double) b->zre[c], tr->z_im - (double) b->zim[c]),
	    tl * (sg > 0 ? sg : 1));
	// Only the loudest are kept: none weaker than the keep-th.
	if (keep < nref) {
		assert_true(rm >= loud[keep - 1] - 2 * tl);
	}
}

// fftd_test_mf_check_triggers compares the triggers with the reference's
// (threshold chosen away from every window's maximum, so the count is
// exact).
void
fftd_test_mf_check_triggers(const fftd_test_mf *b, const fftd_test_mf_out *o)
{
	int64_t nw   = nwindows(b);
	size_t  nref = 0;
	double *loud = malloc(
	    (size_t) (nw * b->count) * sizeof(double) + sizeof(double));
	assert_non_null(loud);
	for (int64_t j = 0; j < b->count && b->threshold > 0; j++) {
		for (int64_t w = 0; w < nw; w++) {
			double r = (double) fftd_test_mf_rho(
			    b, j, window_max(b, j, w));
			if (r > b->threshold) {
				loud[nref++] = r;
			}
		}
	}
	assert_int_equal(o->ntotal, nref);
	size_t keep = nref < o->max_triggers ? nref : o->max_triggers;
	assert_int_equal(o->ntriggers, keep);
	qsort(loud, nref, sizeof(double), by_rho_desc);
	for (size_t i = 0; i < keep; i++) {
		check_trigger(b, o, i, keep, nref, loud);
	}
	// Slots past the count stay as poisoned.
	const unsigned char *rest
	    = (const unsigned char *) (o->triggers + keep);
	for (size_t i = 0;
	     i < (o->max_triggers + 1 - keep) * sizeof(*o->triggers); i++) {
		assert_int_equal(rest[i], 0xFF);
	}
	free(loud);
}

// fftd_test_mf_check_series compares the series rows with the reference.
void
fftd_test_mf_check_series(const fftd_test_mf *b, const fftd_test_mf_out *o)
{
	for (int s = 0; s < o->nseries; s++) {
		int64_t j = o->series_index[s];
		for (int64_t i = 0; i < b->width; i++) {
			double v = (double) fftd_test_mf_get(o->series,
			    b->precision, (size_t) (s * b->width + i));
			note_err(b, "series", j, b->t_begin + i,
			    fabs(v
			        - (double) fftd_test_mf_rho(
			            b, j, b->t_begin + i)),
			    tol(b, j));
		}
	}
}

// fftd_test_mf_check runs the three checks.
void
fftd_test_mf_check(const fftd_test_mf *b, const fftd_test_mf_out *o)
{
	fftd_test_mf_check_peaks(b, o);
	fftd_test_mf_check_triggers(b, o);
	fftd_test_mf_check_series(b, o);
}

// fftd_test_mf_print_worst prints the worst error / tol per precision.
void
fftd_test_mf_print_worst(const char *label)
{
	printf("%s: worst error / tol: f64 %.3g, f32 %.3g\n", label, worst[0],
	    worst[1]);
}

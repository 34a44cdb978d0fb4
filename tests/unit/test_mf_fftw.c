// SPDX-License-Identifier: MIT
//
// test_mf_fftw.c — the matched-filter bank of the fftw backend
// (daemon/backends/fftw_mf.c, fftd__fftw_mf_bank) against a reference
// computed here in long double: q = D conj(h) / S over [kmin, kmax), its
// length-N backward DFT with FFTW's long double library, sigma^2 = 4 df
// sum |h|^2 / S, rho = |z| / sigma, the peak (first on ties) and the
// clustered triggers as daemon/mf.h defines them. The inputs are fresh
// random values (FFTD_TEST_SEED repeats a run) stored in the request's
// precision; the reference reads the stored values, so only the bank's own
// arithmetic is measured.
//
// Bounds, with tol = B x (the template's reference peak rho):
//   f64: B = 1e-12 (FFTW's error is ~eps log2 N of the series' RMS, ~1e-15
//        here; a wrong bin, sign, scale or conjugate gives errors of order 1)
//   f32: B = 1e-5  (products and transform in f32: ~1e-7 measured)
// on every rho of the series, the peak's rho and z (z: tol x sigma), each
// trigger's; sigma (double in both precisions) within 1e-12 relative. A
// peak or trigger may sit on another sample than the reference's only if
// the reference's rho there is within tol of its maximum (a near tie), and
// thresholds are chosen at least 10 tol of the loudest rho away from every
// window's maximum (10 tol), so the count of triggers is exact. Outputs are
// poisoned (0xFF: NaN) first; trigger slots past the count must stay poisoned.

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

#include "backend.h"
#include "backends/fftw_impl.h"
#include "mf.h"
#include "../util/cases.h"
#include "../util/ref.h"

#define MSGLEN 256

// worst[p] is the largest error / tol seen per precision, for the log.
static double worst[2];

// --- inputs ----------------------------------------------------------------

static uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

// rng_unit is uniform in [0, 1).
static double
rng_unit(uint64_t *s)
{
	return (double) (rng_next(s) >> 11) * 0x1p-53;
}

// rng_range is uniform in [lo, hi] (integers).
static int64_t
rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t) (rng_next(s) % (uint64_t) (hi - lo + 1));
}

// bank is one request's inputs (in its precision) and outputs.
typedef struct bank {
	fftd__mf_args a;
	int64_t       nbins;
	void         *data, *psd, *templates, *series;
	int64_t      *series_index;
	// The result arrays (also in a, which tests may overwrite).
	fftd__mf_peak    *peaks;
	fftd__mf_trigger *triggers;
	// The reference, per template: sigma and z(t), rho(t) over the
	// searched samples (width of them).
	int64_t      width;
	long double *sigma, *rho, *zre, *zim;
	long double *peak; // max rho
} bank;

static size_t
real_size(fftd_precision p)
{
	return p == FFTD_F64 ? sizeof(double) : sizeof(float);
}

static void
put(void *arr, fftd_precision p, size_t i, long double v)
{
	if (p == FFTD_F64) {
		((double *) arr)[i] = (double) v;
	} else {
		((float *) arr)[i] = (float) v;
	}
}

static long double
get(const void *arr, fftd_precision p, size_t i)
{
	return p == FFTD_F64 ? ((const double *) arr)[i]
	                     : ((const float *) arr)[i];
}

// bank_new allocates the inputs of an N-sample, count-template bank and
// fills them with random values: D and h uniform in [-1, 1]^2, S in
// [0.25, 2.25].
static void
bank_new(bank *b, int64_t n, fftd_precision p, int64_t count, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->nbins     = n / 2 + 1;
	size_t r     = real_size(p);
	size_t nb    = (size_t) b->nbins;
	b->data      = malloc(2 * nb * r);
	b->psd       = malloc(nb * r);
	b->templates = malloc(2 * nb * (size_t) count * r);
	assert_non_null(b->data);
	assert_non_null(b->psd);
	assert_non_null(b->templates);
	uint64_t s = seed;
	for (size_t i = 0; i < 2 * nb; i++) {
		put(b->data, p, i, 2 * rng_unit(&s) - 1);
	}
	for (size_t i = 0; i < nb; i++) {
		put(b->psd, p, i, 0.25 + 2 * rng_unit(&s));
	}
	for (size_t i = 0; i < 2 * nb * (size_t) count; i++) {
		put(b->templates, p, i, 2 * rng_unit(&s) - 1);
	}
	fftd__mf_args *a = &b->a;
	a->n             = n;
	a->precision     = p;
	a->delta_f       = 4096.0 / (double) n;
	a->kmin          = 0;
	a->kmax          = b->nbins;
	a->t_begin       = 0;
	a->t_end         = n;
	a->cluster       = 1;
	a->count         = count;
	a->data          = b->data;
	a->psd           = b->psd;
	a->templates     = b->templates;
}

static void
bank_free(bank *b)
{
	free(b->data);
	free(b->psd);
	free(b->templates);
	free(b->series);
	free(b->series_index);
	free(b->peaks);
	free(b->triggers);
	free(b->sigma);
	free(b->rho);
	free(b->zre);
	free(b->zim);
	free(b->peak);
}

// --- the reference -----------------------------------------------------------

// reference computes sigma, z and rho of every template over [t_begin,
// t_end) in long double from the stored inputs (FFTW's long double
// backward DFT).
static void
reference(bank *b)
{
	const fftd__mf_args *a = &b->a;
	fftd_precision       p = a->precision;
	int64_t              n = a->n;
	b->width               = a->t_end - a->t_begin;
	size_t cells           = (size_t) (a->count * b->width);
	b->sigma         = malloc((size_t) a->count * sizeof(long double));
	b->peak          = malloc((size_t) a->count * sizeof(long double));
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
	long double scale = 4.0L * a->delta_f;
	for (int64_t j = 0; j < a->count; j++) {
		size_t      h0 = 2 * (size_t) (j * b->nbins);
		long double hh = 0;
		memset(q, 0, (size_t) n * sizeof(*q));
		for (int64_t k = a->kmin; k < a->kmax; k++) {
			long double dr = get(b->data, p, 2 * k);
			long double di = get(b->data, p, 2 * k + 1);
			long double hr = get(b->templates, p, h0 + 2 * k);
			long double hi = get(b->templates, p, h0 + 2 * k + 1);
			long double s  = get(b->psd, p, k);
			q[k][0]        = (dr * hr + di * hi) / s;
			q[k][1]        = (di * hr - dr * hi) / s;
			hh += (hr * hr + hi * hi) / s;
		}
		fftwl_execute(pl);
		long double sig = sqrtl(scale * hh);
		b->sigma[j]     = sig;
		b->peak[j]      = 0;
		for (int64_t t = a->t_begin; t < a->t_end; t++) {
			size_t c = (size_t) (j * b->width + t - a->t_begin);
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

static long double
ref_rho(const bank *b, int64_t j, int64_t t)
{
	return b->rho[j * b->width + t - b->a.t_begin];
}

static double
bound(const bank *b)
{
	return b->a.precision == FFTD_F64 ? 1e-12 : 1e-5;
}

// tol is the absolute rho tolerance of template j.
static double
tol(const bank *b, int64_t j)
{
	double pk = (double) b->peak[j];
	return bound(b) * (pk > 0 ? pk : 1);
}

// note_err records err / tol for the log and fails above 1.
static void
note_err(const bank *b, const char *what, int64_t j, int64_t t, double err,
    double tl)
{
	double r = err / tl;
	int    i = b->a.precision == FFTD_F64 ? 0 : 1;
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
window_max(const bank *b, int64_t j, int64_t w)
{
	const fftd__mf_args *a  = &b->a;
	int64_t              t0 = a->t_begin + w * a->cluster;
	int64_t t1   = a->t_end - t0 < a->cluster ? a->t_end : t0 + a->cluster;
	int64_t best = t0;
	for (int64_t t = t0 + 1; t < t1; t++) {
		if (ref_rho(b, j, t) > ref_rho(b, j, best)) {
			best = t;
		}
	}
	return best;
}

static int64_t
nwindows(const bank *b)
{
	return (b->width + b->a.cluster - 1) / b->a.cluster;
}

// by_rho orders doubles up.
static int
by_rho(const void *x, const void *y)
{
	double p = *(const double *) x, q = *(const double *) y;
	return p < q ? -1 : p > q;
}

// pick_threshold returns a threshold near the quantile `frac` of the
// windows' maxima, at least 10 tol of the loudest rho from all of them
// (above every window's maximum if there is no such gap).
static double
pick_threshold(const bank *b, double frac)
{
	int64_t nw = nwindows(b), m = nw * b->a.count;
	double *v  = malloc((size_t) m * sizeof(double));
	double  hi = 0;
	assert_non_null(v);
	for (int64_t j = 0; j < b->a.count; j++) {
		for (int64_t w = 0; w < nw; w++) {
			v[j * nw + w]
			    = (double) ref_rho(b, j, window_max(b, j, w));
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

// --- running and checking
// ------------------------------------------------------

// run allocates poisoned outputs for the request and runs the bank.
static int
run(fftd__device *dev, bank *b, size_t max_triggers, int nseries,
    const int64_t *series_index, char *msg)
{
	fftd__mf_args *a = &b->a;
	free(b->peaks);
	free(b->triggers);
	free(b->series);
	free(b->series_index);
	b->series       = NULL;
	b->series_index = NULL;
	a->peaks        = malloc((size_t) a->count * sizeof(*a->peaks));
	a->triggers     = malloc((max_triggers + 1) * sizeof(*a->triggers));
	assert_non_null(a->peaks);
	assert_non_null(a->triggers);
	b->peaks    = a->peaks;
	b->triggers = a->triggers;
	fftd_ref_poison(a->peaks, (size_t) a->count * sizeof(*a->peaks));
	fftd_ref_poison(a->triggers, (max_triggers + 1) * sizeof(*a->triggers));
	a->max_triggers = max_triggers;
	a->nseries      = nseries;
	if (nseries > 0) {
		size_t bytes = (size_t) nseries
		    * (size_t) (a->t_end - a->t_begin)
		    * real_size(a->precision);
		b->series       = malloc(bytes);
		b->series_index = malloc((size_t) nseries * sizeof(int64_t));
		assert_non_null(b->series);
		assert_non_null(b->series_index);
		fftd_ref_poison(b->series, bytes);
		memcpy(b->series_index, series_index,
		    (size_t) nseries * sizeof(int64_t));
	}
	a->series       = b->series;
	a->series_index = b->series_index;
	a->ntriggers    = 12345;
	a->ntotal       = 67890;
	msg[0]          = 0;
	return fftd__fftw_mf_bank(dev, a, msg, MSGLEN);
}

// check_peaks compares every template's peak and sigma with the reference.
static void
check_peaks(const bank *b)
{
	const fftd__mf_args *a = &b->a;
	for (int64_t j = 0; j < a->count; j++) {
		const fftd__mf_peak *pk = &a->peaks[j];
		double               tl = tol(b, j);
		double               sg = (double) b->sigma[j];
		assert_in_range(pk->t, a->t_begin, a->t_end - 1);
		note_err(b, "sigma", j, pk->t, fabs(pk->sigma - sg),
		    1e-12 * (sg > 0 ? sg : 1));
		note_err(b, "peak rho", j, pk->t,
		    fabs(pk->rho - (double) b->peak[j]), tl);
		// A near tie may put the peak elsewhere, never a weaker one.
		note_err(b, "peak rho at its sample", j, pk->t,
		    fabs(pk->rho - (double) ref_rho(b, j, pk->t)), tl);
		size_t c  = (size_t) (j * b->width + pk->t - a->t_begin);
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

// check_triggers compares the triggers with the reference's (threshold
// chosen away from every window's maximum, so the count is exact).
static void
check_triggers(const bank *b)
{
	const fftd__mf_args *a    = &b->a;
	int64_t              nw   = nwindows(b);
	size_t               nref = 0;
	double              *loud = malloc(
	                 (size_t) (nw * a->count) * sizeof(double) + sizeof(double));
	assert_non_null(loud);
	for (int64_t j = 0; j < a->count && a->threshold > 0; j++) {
		for (int64_t w = 0; w < nw; w++) {
			double r = (double) ref_rho(b, j, window_max(b, j, w));
			if (r > a->threshold) {
				loud[nref++] = r;
			}
		}
	}
	assert_int_equal(a->ntotal, nref);
	size_t keep = nref < a->max_triggers ? nref : a->max_triggers;
	assert_int_equal(a->ntriggers, keep);
	qsort(loud, nref, sizeof(double), by_rho_desc);
	for (size_t i = 0; i < keep; i++) {
		const fftd__mf_trigger *tr = &a->triggers[i];
		int64_t                 j  = tr->template_index;
		assert_in_range(j, 0, a->count - 1);
		assert_in_range(tr->t, a->t_begin, a->t_end - 1);
		if (i > 0) { // (template, t) order, one per window
			const fftd__mf_trigger *pv = &a->triggers[i - 1];
			assert_true(pv->template_index < j
			    || (pv->template_index == j
			        && (pv->t - a->t_begin) / a->cluster
			            < (tr->t - a->t_begin) / a->cluster));
		}
		double  tl = tol(b, j);
		int64_t w  = (tr->t - a->t_begin) / a->cluster;
		int64_t tm = window_max(b, j, w);
		double  rm = (double) ref_rho(b, j, tm);
		note_err(b, "trigger rho", j, tr->t, fabs(tr->rho - rm), tl);
		note_err(b, "trigger rho at its sample", j, tr->t,
		    fabs(tr->rho - (double) ref_rho(b, j, tr->t)), tl);
		assert_true(rm > a->threshold);
		size_t c  = (size_t) (j * b->width + tr->t - a->t_begin);
		double sg = (double) b->sigma[j];
		note_err(b, "trigger z", j, tr->t,
		    hypot(tr->z_re - (double) b->zre[c],
		        tr->z_im - (double) b->zim[c]),
		    tl * (sg > 0 ? sg : 1));
		// Only the loudest are kept: none weaker than the keep-th.
		if (keep < nref) {
			assert_true(rm >= loud[keep - 1] - 2 * tl);
		}
	}
	// Slots past the count stay as poisoned.
	const unsigned char *rest
	    = (const unsigned char *) (a->triggers + keep);
	for (size_t i = 0;
	     i < (a->max_triggers + 1 - keep) * sizeof(*a->triggers); i++) {
		assert_int_equal(rest[i], 0xFF);
	}
	free(loud);
}

// check_series compares the series rows with the reference.
static void
check_series(const bank *b)
{
	const fftd__mf_args *a = &b->a;
	for (int s = 0; s < a->nseries; s++) {
		int64_t j = a->series_index[s];
		for (int64_t i = 0; i < b->width; i++) {
			double v = (double) get(b->series, a->precision,
			    (size_t) (s * b->width + i));
			note_err(b, "series", j, a->t_begin + i,
			    fabs(v - (double) ref_rho(b, j, a->t_begin + i)),
			    tol(b, j));
		}
	}
}

static void
check_all(const bank *b)
{
	check_peaks(b);
	check_triggers(b);
	check_series(b);
}

// --- the device
// ------------------------------------------------------------------

static fftd__device dev1, dev2; // 1 and 2 FFTW threads

static void
open_dev(fftd__device *dev, int threads)
{
	fftd__backend_config cfg         = { .fftw_threads = threads };
	char                 msg[MSGLEN] = "";
	memset(dev, 0, sizeof(*dev));
	dev->backend = &fftd__backend_fftw;
	assert_int_equal(
	    fftd__backend_fftw.open(dev, &cfg, msg, sizeof(msg)), FFTD_OK);
	assert_int_equal(fftd__fftw_nthreads(dev), threads);
}

static int
group_setup(void **state)
{
	(void) state;
	open_dev(&dev1, 1);
	open_dev(&dev2, 2);
	return 0;
}

static int
group_teardown(void **state)
{
	(void) state;
	fftd__backend_fftw.close(&dev1);
	fftd__backend_fftw.close(&dev2);
	printf("worst error / tol: f64 %.3g, f32 %.3g\n", worst[0], worst[1]);
	return 0;
}

// --- random cases
// ---------------------------------------------------------------

// random_case: N and K given, everything else drawn: the bins, the searched
// samples, the cluster window, the threshold (or none), max_triggers (all,
// or fewer than found), series rows (duplicates allowed).
static void
random_case(int64_t n, fftd_precision p, int64_t count, uint64_t seed)
{
	uint64_t s = seed;
	bank     b;
	bank_new(&b, n, p, count, rng_next(&s));
	fftd__mf_args *a = &b.a;
	a->kmin          = rng_range(&s, 0, b.nbins / 4);
	a->kmax          = rng_range(&s, b.nbins / 2, b.nbins);
	a->t_begin       = rng_range(&s, 0, n / 4);
	a->t_end         = rng_range(&s, n / 2, n);
	int64_t w        = a->t_end - a->t_begin;
	int64_t clus[]   = { 1, 7, 100, 1000, w / 3 + 1, w + 5 };
	a->cluster       = clus[rng_range(&s, 0, 5)];
	if (n >= 65536 && a->cluster < 100) {
		a->cluster = 100; // keep the reference's windows few
	}
	reference(&b);
	a->threshold = rng_range(&s, 0, 4) == 0
	    ? 0
	    : pick_threshold(&b, 0.5 + 0.45 * rng_unit(&s));
	// How many the threshold gives, to ask for fewer half the time.
	size_t found = 0;
	for (int64_t j = 0; j < count && a->threshold > 0; j++) {
		for (int64_t i = 0; i < nwindows(&b); i++) {
			found += ref_rho(&b, j, window_max(&b, j, i))
			    > a->threshold;
		}
	}
	size_t  maxt = rng_range(&s, 0, 1)
	     ? found + 3
	     : (size_t) rng_range(&s, 0, found / 2);
	int64_t idx[4];
	int     ns = (int) rng_range(&s, 0, 3);
	for (int i = 0; i < ns; i++) {
		idx[i] = rng_range(&s, 0, count - 1);
	}
	char          msg[MSGLEN];
	fftd__device *dev = rng_range(&s, 0, 1) ? &dev2 : &dev1;
	int           rv  = run(dev, &b, maxt, ns, idx, msg);
	if (rv != FFTD_OK) {
		fail_msg("mf_bank: %s (%s)", fftd_err_name(rv), msg);
	}
	print_message("n=%lld %s K=%lld bins [%lld,%lld) t [%lld,%lld) "
	              "cluster %lld thr %.4g: %zu/%zu triggers, %d series\n",
	    (long long) n, fftd_test_prec_name(p), (long long) count,
	    (long long) a->kmin, (long long) a->kmax, (long long) a->t_begin,
	    (long long) a->t_end, (long long) a->cluster, a->threshold,
	    a->ntriggers, a->ntotal, ns);
	check_all(&b);
	bank_free(&b);
}

static void
test_random(void **state)
{
	fftd_precision p = (fftd_precision) (intptr_t) *state;
	// (N, K): odd sizes and K across the 16-template batch (17: a tail).
	static const int64_t sizes[][2]
	    = { { 4096, 1 }, { 4096, 17 }, { 4096, 5 }, { 4095, 3 },
		      { 1000, 16 }, { 65536, 3 }, { 4096, 9 } };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		random_case(sizes[i][0], p, sizes[i][1],
		    fftd_test_case_seed(100 * (uint64_t) p + i));
	}
}

// --- a planted signal
// -------------------------------------------------------------

// test_planted: data = a chirp-like template (a Gaussian-windowed sweep,
// made in the time domain and transformed forward) delayed by t0 samples.
// Then z(t) = 4 df sum |H_k|^2 / S_k exp(2 pi i k (t - t0) / N): the peak
// is at t0 with rho = sigma and z = sigma^2 (real), exactly.
static void
test_planted(void **state)
{
	fftd_precision p = (fftd_precision) (intptr_t) *state;
	int64_t        n = 8192, t0 = 5555;
	bank           b;
	bank_new(&b, n, p, 2, 7);
	double       *x  = fftw_malloc((size_t) n * sizeof(double));
	fftw_complex *hx = fftw_malloc((size_t) b.nbins * sizeof(*hx));
	assert_non_null(x);
	assert_non_null(hx);
	fftw_plan pl = fftw_plan_dft_r2c_1d((int) n, x, hx, FFTW_ESTIMATE);
	// Template 0: the chirp; template 1: the chirp moved by 100 samples
	// (its peak then lies at t0 - 100).
	for (int j = 0; j < 2; j++) {
		int64_t c = 1000 + 100 * j;
		for (int64_t t = 0; t < n; t++) {
			double u = (double) (t - c) / 400.0;
			x[t]     = exp(-u * u)
			    * sin(0.05 * (t - c) + 1e-4 * (t - c) * (t - c));
		}
		fftw_execute(pl);
		for (int64_t k = 0; k < b.nbins; k++) {
			put(b.templates, p, 2 * (size_t) (j * b.nbins + k),
			    hx[k][0]);
			put(b.templates, p, 2 * (size_t) (j * b.nbins + k) + 1,
			    hx[k][1]);
		}
	}
	// Data: template 0 delayed by t0 (exactly, as a phase ramp), S
	// random and positive (bank_new).
	for (int64_t k = 0; k < b.nbins; k++) {
		double ph = -2 * M_PI * (double) ((k * t0) % n) / (double) n;
		double hr = (double) get(b.templates, p, 2 * (size_t) k);
		double hi = (double) get(b.templates, p, 2 * (size_t) k + 1);
		put(b.data, p, 2 * (size_t) k, hr * cos(ph) - hi * sin(ph));
		put(b.data, p, 2 * (size_t) k + 1, hr * sin(ph) + hi * cos(ph));
	}
	fftw_destroy_plan(pl);
	fftw_free(x);
	fftw_free(hx);
	b.a.kmin      = 3;
	b.a.kmax      = b.nbins - 2;
	b.a.threshold = 0;
	reference(&b);
	char msg[MSGLEN];
	assert_int_equal(run(&dev1, &b, 4, 0, NULL, msg), FFTD_OK);
	check_all(&b);
	// The planted time and the known values (f32: the data's rounding
	// is not a pure delay of the stored template, hence 1e-5).
	double rel = p == FFTD_F64 ? 1e-12 : 1e-5;
	assert_int_equal(b.a.peaks[0].t, t0);
	assert_int_equal(b.a.peaks[1].t, t0 - 100);
	double sg = b.a.peaks[0].sigma;
	assert_true(fabs(b.a.peaks[0].rho - sg) <= rel * sg);
	assert_true(fabs(b.a.peaks[0].z_re - sg * sg) <= rel * sg * sg);
	assert_true(fabs(b.a.peaks[0].z_im) <= rel * sg * sg);
	bank_free(&b);
}

// --- edges
// ---------------------------------------------------------------------------

// test_edges: the whole spectrum and the whole series (kmin 0, kmax N/2+1,
// t_begin 0, t_end N), cluster 1 and cluster larger than the window, a
// threshold above everything, max_triggers 0 and fewer than found, series
// rows naming one template twice.
static void
test_edges(void **state)
{
	fftd_precision p = (fftd_precision) (intptr_t) *state;
	int64_t        n = 4096;
	bank           b;
	bank_new(&b, n, p, 4, fftd_test_case_seed(900 + (uint64_t) p));
	reference(&b);
	fftd__mf_args *a = &b.a;
	char           msg[MSGLEN];
	int64_t        idx[] = { 3, 0, 3 };

	// cluster 1: every sample its own window; fewer kept than found.
	a->cluster   = 1;
	a->threshold = pick_threshold(&b, 0.9);
	assert_int_equal(run(&dev1, &b, 50, 3, idx, msg), FFTD_OK);
	assert_true(a->ntotal > 50);
	check_all(&b);
	// All of them, and none kept (max_triggers 0: counted only).
	assert_int_equal(run(&dev2, &b, a->ntotal, 0, NULL, msg), FFTD_OK);
	check_all(&b);
	assert_int_equal(run(&dev1, &b, 0, 1, idx, msg), FFTD_OK);
	assert_int_equal(a->ntriggers, 0);
	assert_true(a->ntotal > 50);
	check_all(&b);

	// One window larger than the series: one trigger per template, at
	// its peak.
	a->cluster   = n + 1000;
	a->threshold = 0.5 * (double) b.peak[0];
	for (int j = 1; j < 4; j++) {
		if (0.5 * (double) b.peak[j] < a->threshold) {
			a->threshold = 0.5 * (double) b.peak[j];
		}
	}
	assert_int_equal(run(&dev1, &b, 10, 2, idx, msg), FFTD_OK);
	assert_int_equal(a->ntriggers, 4);
	for (int j = 0; j < 4; j++) {
		assert_int_equal(a->triggers[j].template_index, j);
		assert_int_equal(a->triggers[j].t, a->peaks[j].t);
		assert_true(a->triggers[j].rho == a->peaks[j].rho);
	}
	check_all(&b);

	// A threshold above every rho: no triggers, peaks all the same.
	a->cluster   = 64;
	a->threshold = 1e6;
	assert_int_equal(run(&dev1, &b, 10, 0, NULL, msg), FFTD_OK);
	assert_int_equal(a->ntriggers, 0);
	assert_int_equal(a->ntotal, 0);
	check_all(&b);
	bank_free(&b);
}

// test_ties: zero data makes every rho 0: the peak is the first sample
// (t_begin), z is 0, and a positive threshold gives no trigger. A template
// that is zero over [kmin, kmax) has sigma 0 and rho 0 everywhere.
static void
test_ties(void **state)
{
	fftd_precision p = (fftd_precision) (intptr_t) *state;
	bank           b;
	bank_new(&b, 1024, p, 3, 5);
	fftd__mf_args *a = &b.a;
	memset(b.data, 0, 2 * (size_t) b.nbins * real_size(p));
	a->t_begin   = 17;
	a->t_end     = 1000;
	a->cluster   = 10;
	a->threshold = 1e-300;
	char msg[MSGLEN];
	assert_int_equal(run(&dev1, &b, 10, 0, NULL, msg), FFTD_OK);
	for (int j = 0; j < 3; j++) {
		assert_int_equal(a->peaks[j].t, 17);
		assert_true(a->peaks[j].rho == 0);
		assert_true(a->peaks[j].z_re == 0 && a->peaks[j].z_im == 0);
		assert_true(a->peaks[j].sigma > 0);
	}
	assert_int_equal(a->ntotal, 0);

	// Only bin 0: z(t) = 4 df q_0 at every t, exactly (the transform
	// adds zeros), so every window ties: the first sample is the peak,
	// and of the equal triggers the earliest are kept.
	bank_free(&b);
	bank_new(&b, 1024, p, 1, 8);
	a            = &b.a;
	a->kmin      = 0;
	a->kmax      = 1;
	a->t_begin   = 100;
	a->t_end     = 900;
	a->cluster   = 1;
	a->threshold = 1e-300;
	reference(&b);
	assert_int_equal(run(&dev1, &b, 3, 0, NULL, msg), FFTD_OK);
	assert_int_equal(a->peaks[0].t, 100);
	assert_int_equal(a->ntotal, 800);
	assert_int_equal(a->ntriggers, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(a->triggers[i].t, 100 + i);
		assert_true(a->triggers[i].rho == a->peaks[0].rho);
	}
	check_peaks(&b);
	a->cluster = 50; // each window's trigger is its first sample
	assert_int_equal(run(&dev1, &b, 100, 0, NULL, msg), FFTD_OK);
	assert_int_equal(a->ntotal, 16);
	assert_int_equal(a->ntriggers, 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(a->triggers[i].t, 100 + 50 * i);
	}

	bank_free(&b);
	bank_new(&b, 1024, p, 3, 6);
	a       = &b.a;
	a->kmin = 10;
	a->kmax = 300;
	// Template 1 zero inside the band (not outside: it must not count).
	memset(
	    (char *) b.templates + 2 * (size_t) (b.nbins + 10) * real_size(p),
	    0, 2 * 290 * real_size(p));
	a->threshold = 1e-300;
	a->cluster   = 100;
	reference(&b);
	int64_t idx[] = { 1 };
	assert_int_equal(run(&dev1, &b, 100, 1, idx, msg), FFTD_OK);
	assert_true(a->peaks[1].sigma == 0 && a->peaks[1].rho == 0);
	assert_int_equal(a->peaks[1].t, 0);
	check_all(&b);
	bank_free(&b);
}

// --- errors
// ---------------------------------------------------------------------------

// expect_err runs the bank and wants code rv with a message.
static void
expect_err(bank *b, int want, const char *what)
{
	char msg[MSGLEN];
	int  rv = run(&dev1, b, 4, 0, NULL, msg);
	if (rv != want || msg[0] == 0) {
		fail_msg("%s: got %s (\"%s\"), want %s", what,
		    fftd_err_name(rv), msg, fftd_err_name(want));
	}
}

// test_errors: arguments out of range (the request handler checks them
// first; the backend repeats the checks) and data that make rho
// meaningless give typed errors, never a crash or a wild write.
static void
test_errors(void **state)
{
	(void) state;
	bank b;
	bank_new(&b, 256, FFTD_F64, 2, 3);
	fftd__mf_args *a  = &b.a;
	fftd__mf_args  ok = *a;

	a->precision = FFTD_F16;
	expect_err(&b, FFTD_EUNSUPPORTED, "f16");
	*a      = ok;
	a->kmax = 130;
	expect_err(&b, FFTD_EINVAL, "kmax > N/2+1");
	*a      = ok;
	a->kmin = a->kmax;
	expect_err(&b, FFTD_EINVAL, "kmin = kmax");
	*a       = ok;
	a->t_end = 257;
	expect_err(&b, FFTD_EINVAL, "t_end > N");
	*a         = ok;
	a->cluster = 0;
	expect_err(&b, FFTD_EINVAL, "cluster 0");
	*a         = ok;
	a->delta_f = 0;
	expect_err(&b, FFTD_EINVAL, "delta_f 0");
	*a       = ok;
	a->count = 0;
	expect_err(&b, FFTD_EINVAL, "count 0");

	// A series row naming a template outside the slice.
	char    msg[MSGLEN];
	int64_t idx[] = { 2 };
	*a            = ok;
	assert_int_equal(run(&dev1, &b, 4, 1, idx, msg), FFTD_EINVAL);
	idx[0] = 1; // and a series without its index array
	assert_int_equal(run(&dev1, &b, 4, 1, idx, msg), FFTD_OK);
	free(b.series_index);
	b.series_index  = NULL;
	a->series_index = NULL;
	assert_int_equal(
	    fftd__fftw_mf_bank(&dev1, a, msg, MSGLEN), FFTD_EINVAL);

	// A PSD bin of 0 inside the band (outside it is not read), a NaN
	// datum, an Inf in a template.
	*a                    = ok;
	a->kmin               = 5;
	((double *) b.psd)[0] = 0;
	((double *) b.psd)[4] = -1;
	assert_int_equal(run(&dev1, &b, 4, 0, NULL, msg), FFTD_OK);
	((double *) b.psd)[77] = 0;
	expect_err(&b, FFTD_EINVAL, "psd 0");
	((double *) b.psd)[77]         = 1;
	((double *) b.data)[2 * 9 + 1] = NAN;
	expect_err(&b, FFTD_EINVAL, "NaN data");
	((double *) b.data)[2 * 9 + 1]            = 0;
	((double *) b.templates)[2 * (129 + 100)] = INFINITY;
	expect_err(&b, FFTD_EINVAL, "Inf template");
	bank_free(&b);

	// f32 without PyCBC's scaling: strain-sized data and a PSD that
	// underflows to 0 in f32.
	bank_new(&b, 256, FFTD_F32, 1, 4);
	for (int64_t k = 0; k < b.nbins; k++) {
		((float *) b.psd)[k] = (float) 1e-46;
	}
	expect_err(&b, FFTD_EINVAL, "f32 PSD underflow");
	// A PSD that is tiny but normal: D conj(h) / S overflows f32.
	for (int64_t k = 0; k < b.nbins; k++) {
		((float *) b.psd)[k] = 1e-37f;
	}
	for (size_t i = 0; i < 2 * (size_t) b.nbins; i++) {
		((float *) b.data)[i] *= 1e19f;
		((float *) b.templates)[i] *= 1e19f;
	}
	expect_err(&b, FFTD_EINVAL, "f32 overflow");
	bank_free(&b);
}

int
main(void)
{
	void                   *f64     = (void *) (intptr_t) FFTD_F64;
	void                   *f32     = (void *) (intptr_t) FFTD_F32;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_random, f64),
		cmocka_unit_test_prestate(test_random, f32),
		cmocka_unit_test_prestate(test_planted, f64),
		cmocka_unit_test_prestate(test_planted, f32),
		cmocka_unit_test_prestate(test_edges, f64),
		cmocka_unit_test_prestate(test_edges, f32),
		cmocka_unit_test_prestate(test_ties, f64),
		cmocka_unit_test_prestate(test_ties, f32),
		cmocka_unit_test(test_errors),
	};
	fftd_test_seed();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

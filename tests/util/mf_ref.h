// SPDX-License-Identifier: MIT
//
// mf_ref.h — PRIVATE to fftd's tests. The matched-filter bank's reference
// (issue 16), shared by tests/unit/test_mf_fftw.c (the fftw backend's
// engine, called directly) and tests/integration/test_mf.c (fftd_mf_bank
// through the daemon): random inputs of one bank problem in the request's
// precision, the bank's result computed in long double from those stored
// values (q = D conj(h) / S over [kmin, kmax), its length-N backward DFT
// with FFTW's long double library, sigma^2 = 4 df sum |h|^2 / S,
// rho = |z| / sigma, per template the peak and per window the clustered
// trigger, as include/fftd.h and daemon/mf.h define them), random request
// parameters, poisoned results and the checks of a result against the
// reference. Plain C over cmocka and FFTW (no libfftd calls), so unit tests
// link it too.
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
// window's maximum, so the count of triggers is exact. Results are
// poisoned (0xFF: NaN) first; trigger slots past the count must stay
// poisoned.
//
// Include after <cmocka.h>.

#ifndef FFTD_TESTS_MF_REF_H
#define FFTD_TESTS_MF_REF_H

#include <stddef.h>
#include <stdint.h>

#include "fftd.h"

// fftd_test_mf is one bank problem: its inputs (host memory, in
// precision), the request's parameters and, after fftd_test_mf_reference,
// the long double result of the slice [first, first + count) of the
// templates.
typedef struct fftd_test_mf {
	int64_t        n;          // N, time samples
	int64_t        nbins;      // N/2 + 1
	fftd_precision precision;  // FFTD_F64 or FFTD_F32 (FFTD_F16: errors)
	double         delta_f;    // Hz (4096 / N)
	int64_t        kmin, kmax; // bins used (kmax explicit, not 0)
	int64_t        t_begin, t_end; // samples searched (t_end explicit)
	int64_t        cluster;
	double         threshold;
	// Inputs: D, nbins complex; S, nbins real; h, ntemplates x nbins
	// complex, contiguous.
	void   *data, *psd, *templates;
	int64_t ntemplates;
	// The slice searched: templates first .. first + count - 1.
	int64_t first, count;
	// The reference, per template of the slice: sigma, the peak rho, and
	// z(t), rho(t) over the width = t_end - t_begin searched samples.
	int64_t      width;
	long double *sigma, *peak, *rho, *zre, *zim;
} fftd_test_mf;

// fftd_test_mf_out is one request's results as fftd_mf_bank returns them,
// poisoned before it runs.
typedef struct fftd_test_mf_out {
	fftd_mf_peak    *peaks;    // count entries
	fftd_mf_trigger *triggers; // max_triggers + 1 (the last never written)
	size_t           max_triggers, ntriggers, ntotal;
	int64_t         *series_index; // nseries (indices into the slice)
	int              nseries;
	void            *series; // nseries x width reals of the precision
} fftd_test_mf_out;

// fftd_test_mf_rng_next steps a splitmix64 generator; fftd_test_mf_unit
// is uniform in [0, 1), fftd_test_mf_range uniform in [lo, hi] (integers).
uint64_t fftd_test_mf_rng_next(uint64_t *s);
double   fftd_test_mf_unit(uint64_t *s);
int64_t  fftd_test_mf_range(uint64_t *s, int64_t lo, int64_t hi);

// fftd_test_mf_real_size is the size of one real of p (f64: 8, else 4).
size_t fftd_test_mf_real_size(fftd_precision p);

// fftd_test_mf_put stores v as element i of arr (p's real type);
// fftd_test_mf_get reads it.
void fftd_test_mf_put(void *arr, fftd_precision p, size_t i, long double v);
long double fftd_test_mf_get(const void *arr, fftd_precision p, size_t i);

// fftd_test_mf_new allocates the inputs of an N-sample bank of ntemplates
// templates in precision p and fills them from seed: D and h uniform in
// [-1, 1]^2, S in [0.25, 2.25]. Parameters: delta_f 4096 / N, the whole
// spectrum and series, cluster 1, threshold 0, the slice all templates.
void fftd_test_mf_new(fftd_test_mf *b, int64_t n, fftd_precision p,
    int64_t ntemplates, uint64_t seed);

// fftd_test_mf_free frees the inputs and the reference.
void fftd_test_mf_free(fftd_test_mf *b);

// fftd_test_mf_template is template j of the slice (its first element).
void *fftd_test_mf_template(const fftd_test_mf *b, int64_t j);

// fftd_test_mf_reference computes sigma, z and rho of every template of
// the slice over [t_begin, t_end) in long double from the stored inputs
// (FFTW's long double backward DFT), replacing an earlier reference.
void fftd_test_mf_reference(fftd_test_mf *b);

// fftd_test_mf_rho is the reference's rho of slice template j at sample t.
long double fftd_test_mf_rho(const fftd_test_mf *b, int64_t j, int64_t t);

// fftd_test_mf_pick_threshold returns a threshold near the quantile frac
// of the windows' maxima, at least 10 tol of the loudest rho from all of
// them (above every window's maximum if there is no such gap).
double fftd_test_mf_pick_threshold(const fftd_test_mf *b, double frac);

// fftd_test_mf_found is how many triggers the reference finds (windows
// whose loudest rho is above the threshold; 0 when threshold <= 0).
size_t fftd_test_mf_found(const fftd_test_mf *b);

// fftd_test_mf_draw draws a random request on the current slice from
// *s: the bins ([0, nbins/4] to [nbins/2, nbins]), the samples searched
// ([0, N/4] to [N/2, N]), the cluster window (1, 7, 100, 1000, a third of
// the samples, more than all; at least 100 for N >= 65536), the
// threshold (none a fifth of the time, else fftd_test_mf_pick_threshold),
// computes the reference, and chooses max_triggers (all found and more,
// or at most half of them) and 0 to 3 series rows, at most max_series
// (duplicates allowed: the engine takes them; the daemon wants at most
// one row per template of the slice), into *max_triggers, idx (room for
// 3) and *nseries.
void fftd_test_mf_draw(fftd_test_mf *b, uint64_t *s, int max_series,
    size_t *max_triggers, int64_t *idx, int *nseries);

// fftd_test_mf_describe prints one line: the request and its counts.
void fftd_test_mf_describe(
    const fftd_test_mf *b, const fftd_test_mf_out *o, const char *label);

// fftd_test_mf_desc fills d (fftd_mf_desc_init first) with b's request:
// N, precision, delta_f, bins, samples, threshold, cluster. Inline: the
// unit tests link this file without libfftd.
static inline void
fftd_test_mf_desc(const fftd_test_mf *b, fftd_mf_desc *d)
{
	fftd_mf_desc_init(d);
	d->n         = b->n;
	d->precision = b->precision;
	d->delta_f   = b->delta_f;
	d->kmin      = b->kmin;
	d->kmax      = b->kmax;
	d->t_begin   = b->t_begin;
	d->t_end     = b->t_end;
	d->threshold = b->threshold;
	d->cluster   = b->cluster;
}

// fftd_test_mf_out_new allocates the results of a request on b's slice,
// poisoned, with room for max_triggers triggers (and one slot more that
// must stay poisoned) and the nseries rows of series_index; ntriggers and
// ntotal get values no run gives (12345, 67890).
void fftd_test_mf_out_new(fftd_test_mf_out *o, const fftd_test_mf *b,
    size_t max_triggers, int nseries, const int64_t *series_index);

// fftd_test_mf_out_free frees the results (o may be all zero).
void fftd_test_mf_out_free(fftd_test_mf_out *o);

// fftd_test_mf_check_peaks compares every template's peak and sigma with
// the reference; fftd_test_mf_check_triggers the triggers (count, total,
// order, each one's window and values, the loudest kept, the slots past
// the count still poisoned); fftd_test_mf_check_series the series rows;
// fftd_test_mf_check all three. A failure fails the cmocka test.
void fftd_test_mf_check_peaks(const fftd_test_mf *b, const fftd_test_mf_out *o);
void fftd_test_mf_check_triggers(
    const fftd_test_mf *b, const fftd_test_mf_out *o);
void fftd_test_mf_check_series(
    const fftd_test_mf *b, const fftd_test_mf_out *o);
void fftd_test_mf_check(const fftd_test_mf *b, const fftd_test_mf_out *o);

// fftd_test_mf_print_worst prints the largest error / tol seen by the
// checks so far, per precision.
void fftd_test_mf_print_worst(const char *label);

#endif // FFTD_TESTS_MF_REF_H

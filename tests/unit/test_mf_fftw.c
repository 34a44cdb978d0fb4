// SPDX-License-Identifier: MIT
//
// test_mf_fftw.c — the matched-filter bank of the fftw backend
// (daemon/backends/fftw_mf.c, fftd__fftw_mf_bank), called directly,
// against the long double reference of tests/util/mf_ref.h (computed from
// the stored inputs, so only the bank's own arithmetic is measured; the
// bounds are mf_ref.h's: rho, z and the series within 1e-12 (f64) or 1e-5
// (f32) of the template's peak rho, sigma within 1e-12 relative, trigger
// counts exact). The inputs are fresh random values (FFTD_TEST_SEED
// repeats a run) stored in the request's precision; results are poisoned
// (0xFF: NaN) first. Cases: random requests over N and K, a planted
// signal with known peak, the edges of every range, exact ties, the
// arguments and data the engine refuses with typed errors, and the trigger
// list both engines keep their triggers in (mf_triggers.c).

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
#include "../util/mf_ref.h"
#include "../util/ref.h"

#define MSGLEN 256

// The engine's result records are the public ones field for field, so
// that its results are copied into fftd_test_mf_out bytes and all
// (poison included).
_Static_assert(sizeof(fftd__mf_peak) == sizeof(fftd_mf_peak)
        && offsetof(fftd__mf_peak, t) == offsetof(fftd_mf_peak, t)
        && offsetof(fftd__mf_peak, sigma) == offsetof(fftd_mf_peak, sigma)
        && offsetof(fftd__mf_peak, z_im) == offsetof(fftd_mf_peak, z_im),
    "fftd__mf_peak and fftd_mf_peak differ");
_Static_assert(sizeof(fftd__mf_trigger) == sizeof(fftd_mf_trigger)
        && offsetof(fftd__mf_trigger, t) == offsetof(fftd_mf_trigger, t)
        && offsetof(fftd__mf_trigger, rho) == offsetof(fftd_mf_trigger, rho)
        && offsetof(fftd__mf_trigger, z_im) == offsetof(fftd_mf_trigger, z_im),
    "fftd__mf_trigger and fftd_mf_trigger differ");

// --- running
// ------------------------------------------------------------------

// args_of fills the engine's arguments from problem b and results o (the
// result pointers and counts are the caller's to set).
static void
args_of(const fftd_test_mf *b, const fftd_test_mf_out *o, fftd__mf_args *a)
{
	memset(a, 0, sizeof(*a));
	a->n            = b->n;
	a->precision    = b->precision;
	a->delta_f      = b->delta_f;
	a->kmin         = b->kmin;
	a->kmax         = b->kmax;
	a->t_begin      = b->t_begin;
	a->t_end        = b->t_end;
	a->threshold    = b->threshold;
	a->cluster      = b->cluster;
	a->data         = b->data;
	a->psd          = b->psd;
	a->templates    = fftd_test_mf_template(b, 0);
	a->count        = b->count;
	a->max_triggers = o->max_triggers;
	a->series_index = o->series_index;
	a->nseries      = o->nseries;
	a->series       = o->series;
	a->ntriggers    = 12345;
	a->ntotal       = 67890;
}

// run makes poisoned results o for the request and runs the bank on dev;
// the engine's records are copied into o as they are.
static int
run(fftd__device *dev, const fftd_test_mf *b, fftd_test_mf_out *o,
    size_t max_triggers, int nseries, const int64_t *series_index, char *msg)
{
	fftd_test_mf_out_free(o);
	fftd_test_mf_out_new(o, b, max_triggers, nseries, series_index);
	fftd__mf_args a;
	args_of(b, o, &a);
	size_t pb  = (size_t) (b->count > 0 ? b->count : 0) * sizeof(*a.peaks);
	size_t tb  = (max_triggers + 1) * sizeof(*a.triggers);
	a.peaks    = malloc(pb + 1);
	a.triggers = malloc(tb);
	assert_non_null(a.peaks);
	assert_non_null(a.triggers);
	fftd_ref_poison(a.peaks, pb);
	fftd_ref_poison(a.triggers, tb);
	msg[0] = 0;
	int rv = fftd__fftw_mf_bank(dev, &a, msg, MSGLEN);
	memcpy(o->peaks, a.peaks, pb);
	memcpy(o->triggers, a.triggers, tb);
	o->ntriggers = a.ntriggers;
	o->ntotal    = a.ntotal;
	free(a.peaks);
	free(a.triggers);
	return rv;
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
	fftd_test_mf_print_worst("mf_fftw");
	return 0;
}

// --- random cases
// ---------------------------------------------------------------

// random_case: N and K given, everything else drawn (fftd_test_mf_draw):
// the bins, the searched samples, the cluster window, the threshold (or
// none), max_triggers (all, or fewer than found), series rows
// (duplicates allowed), and the device (1 or 2 FFTW threads).
static void
random_case(int64_t n, fftd_precision p, int64_t count, uint64_t seed)
{
	uint64_t     s = seed;
	fftd_test_mf b;
	fftd_test_mf_new(&b, n, p, count, fftd_test_mf_rng_next(&s));
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	fftd_test_mf_draw(&b, &s, 3, &maxt, idx, &ns);
	char             msg[MSGLEN];
	fftd_test_mf_out o   = { 0 };
	fftd__device    *dev = fftd_test_mf_range(&s, 0, 1) ? &dev2 : &dev1;
	int              rv  = run(dev, &b, &o, maxt, ns, idx, msg);
	if (rv != FFTD_OK) {
		fail_msg("mf_bank: %s (%s)", fftd_err_name(rv), msg);
	}
	fftd_test_mf_describe(&b, &o, "engine");
	fftd_test_mf_check(&b, &o);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_free(&b);
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
	fftd_test_mf   b;
	fftd_test_mf_new(&b, n, p, 2, 7);
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
			size_t i = 2 * (size_t) (j * b.nbins + k);
			fftd_test_mf_put(b.templates, p, i, hx[k][0]);
			fftd_test_mf_put(b.templates, p, i + 1, hx[k][1]);
		}
	}
	// Data: template 0 delayed by t0 (exactly, as a phase ramp), S
	// random and positive (fftd_test_mf_new).
	for (int64_t k = 0; k < b.nbins; k++) {
		double ph = -2 * M_PI * (double) ((k * t0) % n) / (double) n;
		double hr = (double) fftd_test_mf_get(b.templates, p, 2 * k);
		double hi
		    = (double) fftd_test_mf_get(b.templates, p, 2 * k + 1);
		fftd_test_mf_put(b.data, p, 2 * k, hr * cos(ph) - hi * sin(ph));
		fftd_test_mf_put(
		    b.data, p, 2 * k + 1, hr * sin(ph) + hi * cos(ph));
	}
	fftw_destroy_plan(pl);
	fftw_free(x);
	fftw_free(hx);
	b.kmin      = 3;
	b.kmax      = b.nbins - 2;
	b.threshold = 0;
	fftd_test_mf_reference(&b);
	char             msg[MSGLEN];
	fftd_test_mf_out o = { 0 };
	assert_int_equal(run(&dev1, &b, &o, 4, 0, NULL, msg), FFTD_OK);
	fftd_test_mf_check(&b, &o);
	// The planted time and the known values (f32: the data's rounding
	// is not a pure delay of the stored template, hence 1e-5).
	double rel = p == FFTD_F64 ? 1e-12 : 1e-5;
	assert_int_equal(o.peaks[0].t, t0);
	assert_int_equal(o.peaks[1].t, t0 - 100);
	double sg = o.peaks[0].sigma;
	assert_true(fabs(o.peaks[0].rho - sg) <= rel * sg);
	assert_true(fabs(o.peaks[0].z_re - sg * sg) <= rel * sg * sg);
	assert_true(fabs(o.peaks[0].z_im) <= rel * sg * sg);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_free(&b);
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
	fftd_test_mf   b;
	fftd_test_mf_new(&b, n, p, 4, fftd_test_case_seed(900 + (uint64_t) p));
	fftd_test_mf_reference(&b);
	fftd_test_mf_out o = { 0 };
	char             msg[MSGLEN];
	int64_t          idx[] = { 3, 0, 3 };

	// cluster 1: every sample its own window; fewer kept than found.
	b.cluster   = 1;
	b.threshold = fftd_test_mf_pick_threshold(&b, 0.9);
	assert_int_equal(run(&dev1, &b, &o, 50, 3, idx, msg), FFTD_OK);
	assert_true(o.ntotal > 50);
	fftd_test_mf_check(&b, &o);
	// All of them, and none kept (max_triggers 0: counted only).
	assert_int_equal(run(&dev2, &b, &o, o.ntotal, 0, NULL, msg), FFTD_OK);
	fftd_test_mf_check(&b, &o);
	assert_int_equal(run(&dev1, &b, &o, 0, 1, idx, msg), FFTD_OK);
	assert_int_equal(o.ntriggers, 0);
	assert_true(o.ntotal > 50);
	fftd_test_mf_check(&b, &o);

	// One window larger than the series: one trigger per template, at
	// its peak.
	b.cluster   = n + 1000;
	b.threshold = 0.5 * (double) b.peak[0];
	for (int j = 1; j < 4; j++) {
		if (0.5 * (double) b.peak[j] < b.threshold) {
			b.threshold = 0.5 * (double) b.peak[j];
		}
	}
	assert_int_equal(run(&dev1, &b, &o, 10, 2, idx, msg), FFTD_OK);
	assert_int_equal(o.ntriggers, 4);
	for (int j = 0; j < 4; j++) {
		assert_int_equal(o.triggers[j].template_index, j);
		assert_int_equal(o.triggers[j].t, o.peaks[j].t);
		assert_true(o.triggers[j].rho == o.peaks[j].rho);
	}
	fftd_test_mf_check(&b, &o);

	// A threshold above every rho: no triggers, peaks all the same.
	b.cluster   = 64;
	b.threshold = 1e6;
	assert_int_equal(run(&dev1, &b, &o, 10, 0, NULL, msg), FFTD_OK);
	assert_int_equal(o.ntriggers, 0);
	assert_int_equal(o.ntotal, 0);
	fftd_test_mf_check(&b, &o);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_free(&b);
}

// test_ties: zero data makes every rho 0: the peak is the first sample
// (t_begin), z is 0, and a positive threshold gives no trigger. A template
// that is zero over [kmin, kmax) has sigma 0 and rho 0 everywhere.
static void
test_ties(void **state)
{
	fftd_precision   p = (fftd_precision) (intptr_t) *state;
	fftd_test_mf     b;
	fftd_test_mf_out o = { 0 };
	fftd_test_mf_new(&b, 1024, p, 3, 5);
	memset(b.data, 0, 2 * (size_t) b.nbins * fftd_test_mf_real_size(p));
	b.t_begin   = 17;
	b.t_end     = 1000;
	b.cluster   = 10;
	b.threshold = 1e-300;
	char msg[MSGLEN];
	assert_int_equal(run(&dev1, &b, &o, 10, 0, NULL, msg), FFTD_OK);
	for (int j = 0; j < 3; j++) {
		assert_int_equal(o.peaks[j].t, 17);
		assert_true(o.peaks[j].rho == 0);
		assert_true(o.peaks[j].z_re == 0 && o.peaks[j].z_im == 0);
		assert_true(o.peaks[j].sigma > 0);
	}
	assert_int_equal(o.ntotal, 0);

	// Only bin 0: z(t) = 4 df q_0 at every t, exactly (the transform
	// adds zeros), so every window ties: the first sample is the peak,
	// and of the equal triggers the earliest are kept.
	fftd_test_mf_free(&b);
	fftd_test_mf_new(&b, 1024, p, 1, 8);
	b.kmin      = 0;
	b.kmax      = 1;
	b.t_begin   = 100;
	b.t_end     = 900;
	b.cluster   = 1;
	b.threshold = 1e-300;
	fftd_test_mf_reference(&b);
	assert_int_equal(run(&dev1, &b, &o, 3, 0, NULL, msg), FFTD_OK);
	assert_int_equal(o.peaks[0].t, 100);
	assert_int_equal(o.ntotal, 800);
	assert_int_equal(o.ntriggers, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(o.triggers[i].t, 100 + i);
		assert_true(o.triggers[i].rho == o.peaks[0].rho);
	}
	fftd_test_mf_check_peaks(&b, &o);
	b.cluster = 50; // each window's trigger is its first sample
	assert_int_equal(run(&dev1, &b, &o, 100, 0, NULL, msg), FFTD_OK);
	assert_int_equal(o.ntotal, 16);
	assert_int_equal(o.ntriggers, 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(o.triggers[i].t, 100 + 50 * i);
	}

	fftd_test_mf_free(&b);
	fftd_test_mf_new(&b, 1024, p, 3, 6);
	b.kmin = 10;
	b.kmax = 300;
	// Template 1 zero inside the band (not outside: it must not count).
	size_t r = fftd_test_mf_real_size(p);
	memset(
	    (char *) fftd_test_mf_template(&b, 1) + 2 * 10 * r, 0, 2 * 290 * r);
	b.threshold = 1e-300;
	b.cluster   = 100;
	fftd_test_mf_reference(&b);
	int64_t idx[] = { 1 };
	assert_int_equal(run(&dev1, &b, &o, 100, 1, idx, msg), FFTD_OK);
	assert_true(o.peaks[1].sigma == 0 && o.peaks[1].rho == 0);
	assert_int_equal(o.peaks[1].t, 0);
	fftd_test_mf_check(&b, &o);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_free(&b);
}

// --- errors
// ---------------------------------------------------------------------------

// expect_err runs the bank and wants code rv with a message.
static void
expect_err(const fftd_test_mf *b, int want, const char *what)
{
	char             msg[MSGLEN];
	fftd_test_mf_out o  = { 0 };
	int              rv = run(&dev1, b, &o, 4, 0, NULL, msg);
	fftd_test_mf_out_free(&o);
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
	fftd_test_mf b;
	fftd_test_mf_new(&b, 256, FFTD_F64, 2, 3);
	fftd_test_mf ok = b;

	b.precision = FFTD_F16;
	expect_err(&b, FFTD_EUNSUPPORTED, "f16");
	b      = ok;
	b.kmax = 130;
	expect_err(&b, FFTD_EINVAL, "kmax > N/2+1");
	b      = ok;
	b.kmin = b.kmax;
	expect_err(&b, FFTD_EINVAL, "kmin = kmax");
	b       = ok;
	b.t_end = 257;
	expect_err(&b, FFTD_EINVAL, "t_end > N");
	b         = ok;
	b.cluster = 0;
	expect_err(&b, FFTD_EINVAL, "cluster 0");
	b         = ok;
	b.delta_f = 0;
	expect_err(&b, FFTD_EINVAL, "delta_f 0");
	b       = ok;
	b.count = 0;
	expect_err(&b, FFTD_EINVAL, "count 0");

	// A series row naming a template outside the slice.
	char             msg[MSGLEN];
	fftd_test_mf_out o     = { 0 };
	int64_t          idx[] = { 2 };
	b                      = ok;
	assert_int_equal(run(&dev1, &b, &o, 4, 1, idx, msg), FFTD_EINVAL);
	idx[0] = 1; // and a series without its index array
	assert_int_equal(run(&dev1, &b, &o, 4, 1, idx, msg), FFTD_OK);
	fftd__mf_args    a;
	fftd__mf_peak    pk[2];
	fftd__mf_trigger tr[4];
	args_of(&b, &o, &a);
	a.peaks        = pk;
	a.triggers     = tr;
	a.series_index = NULL;
	assert_int_equal(
	    fftd__fftw_mf_bank(&dev1, &a, msg, MSGLEN), FFTD_EINVAL);
	fftd_test_mf_out_free(&o);

	// A PSD bin of 0 inside the band (outside it is not read), a NaN
	// datum, an Inf in a template.
	b                     = ok;
	b.kmin                = 5;
	((double *) b.psd)[0] = 0;
	((double *) b.psd)[4] = -1;
	assert_int_equal(run(&dev1, &b, &o, 4, 0, NULL, msg), FFTD_OK);
	((double *) b.psd)[77] = 0;
	expect_err(&b, FFTD_EINVAL, "psd 0");
	((double *) b.psd)[77]         = 1;
	((double *) b.data)[2 * 9 + 1] = NAN;
	expect_err(&b, FFTD_EINVAL, "NaN data");
	((double *) b.data)[2 * 9 + 1]            = 0;
	((double *) b.templates)[2 * (129 + 100)] = INFINITY;
	expect_err(&b, FFTD_EINVAL, "Inf template");
	fftd_test_mf_out_free(&o);
	fftd_test_mf_free(&b);

	// f32 without PyCBC's scaling: strain-sized data and a PSD that
	// underflows to 0 in f32.
	fftd_test_mf_new(&b, 256, FFTD_F32, 1, 4);
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
	fftd_test_mf_free(&b);
}

// --- the trigger list (daemon/mf_triggers.c) ---------------------------

// by_strength orders triggers loudest first as mf_triggers.c's stronger
// does: louder, then the lower template, then the earlier sample.
static int
by_strength(const void *x, const void *y)
{
	const fftd__mf_trigger *p = x, *q = y;
	if (p->rho != q->rho) {
		return p->rho > q->rho ? -1 : 1;
	}
	if (p->template_index != q->template_index) {
		return p->template_index < q->template_index ? -1 : 1;
	}
	return p->t < q->t ? -1 : p->t > q->t;
}

// by_time orders triggers by template, then sample.
static int
by_time(const void *x, const void *y)
{
	const fftd__mf_trigger *p = x, *q = y;
	if (p->template_index != q->template_index) {
		return p->template_index < q->template_index ? -1 : 1;
	}
	return p->t < q->t ? -1 : p->t > q->t;
}

// test_trigger_list: fresh random triggers (rho from eight values, so that
// rho ties often) added in (template, sample) order, as the engines add
// them, and shuffled, into rooms of 0, 1, 5, n - 1, n and 2n (poisoned
// first): every trigger is counted, the kept ones are exactly the
// reference's (the loudest `room` by rho, template, sample, written in
// (template, sample) order) and the slot after them is untouched.
static void
test_trigger_list(void **state)
{
	(void) state;
	uint64_t s = fftd_test_case_seed(900);
	for (int iter = 0; iter < 20; iter++) {
		size_t            n = (size_t) fftd_test_mf_range(&s, 1, 3000);
		fftd__mf_trigger *all = calloc(n, sizeof(*all));
		fftd__mf_trigger *ref = calloc(n, sizeof(*ref));
		assert_non_null(all);
		assert_non_null(ref);
		int64_t tpl = 0, t = 0;
		for (size_t i = 0; i < n; i++) {
			if (fftd_test_mf_range(&s, 0, 3) == 0) {
				tpl += fftd_test_mf_range(&s, 1, 3);
				t = 0;
			}
			t += fftd_test_mf_range(&s, 1, 100);
			all[i] = (fftd__mf_trigger) { .template_index = tpl,
				.t                                    = t,
				.rho                                  = 6
				    + 0.25
				        * (double) fftd_test_mf_range(&s, 0, 7),
				.z_re = (double) i,
				.z_im = -(double) i };
		}
		for (int shuffled = 0; shuffled < 2; shuffled++) {
			for (size_t i = n; shuffled && i > 1; i--) {
				size_t j = (size_t) fftd_test_mf_range(
				    &s, 0, (int64_t) i - 1);
				fftd__mf_trigger x = all[i - 1];
				all[i - 1]         = all[j];
				all[j]             = x;
			}
			const size_t rooms[] = { 0, 1, 5, n - 1, n, 2 * n };
			for (size_t r = 0; r < sizeof(rooms) / sizeof(rooms[0]);
			     r++) {
				size_t        room = rooms[r];
				size_t        keep = room < n ? room : n;
				fftd__mf_args a;
				memset(&a, 0, sizeof(a));
				a.max_triggers = room;
				a.triggers
				    = malloc((room + 1) * sizeof(*a.triggers));
				assert_non_null(a.triggers);
				memset(a.triggers, 0xFF,
				    (room + 1) * sizeof(*a.triggers));
				size_t nheap = 0;
				for (size_t i = 0; i < n; i++) {
					fftd__mf_trigger_add(
					    &a, &nheap, &all[i]);
				}
				fftd__mf_triggers_finish(&a, nheap);
				memcpy(ref, all, n * sizeof(*ref));
				qsort(ref, n, sizeof(*ref), by_strength);
				qsort(ref, keep, sizeof(*ref), by_time);
				assert_int_equal(a.ntotal, n);
				assert_int_equal(a.ntriggers, keep);
				if (keep > 0) {
					assert_memory_equal(a.triggers, ref,
					    keep * sizeof(*ref));
				}
				const unsigned char *after
				    = (const unsigned char *) (a.triggers
				        + keep);
				for (size_t k = 0; k < sizeof(*a.triggers);
				     k++) {
					assert_int_equal(after[k], 0xFF);
				}
				free(a.triggers);
			}
		}
		free(all);
		free(ref);
	}
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
		cmocka_unit_test(test_trigger_list),
	};
	fftd_test_seed();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

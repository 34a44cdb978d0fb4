// SPDX-License-Identifier: MIT
//
// mf_sigmasq.c — the bank's sigma^2 modes checked on one problem
// (mf_sigmasq.h).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mf_sigmasq.h"

// SQ_OFF is where the sigma^2 span starts in its array: not at 0, so
// that an offset that is ignored shows.
#define SQ_OFF 8

// call runs b's request with sigma^2 as d says into o (poisoned fresh).
static int
call(const fftd_test_mf_span *sp, const fftd_test_mf *b, const fftd_mf_desc *d,
    fftd_test_mf_out *o, size_t max_triggers, const int64_t *idx, int nseries)
{
	fftd_test_mf_out_new(o, b, max_triggers, nseries, idx);
	return fftd_mf_bank(sp->c, d, sp->dp, sp->data_off, sp->dp, sp->psd_off,
	    sp->tpl, sp->tpl_off, b->count, o->peaks, o->triggers,
	    o->max_triggers, &o->ntriggers, &o->ntotal, o->series_index,
	    o->nseries, o->series);
}

// same_bits checks that two runs' results are the same bits.
static void
same_bits(
    const fftd_test_mf *b, const fftd_test_mf_out *x, const fftd_test_mf_out *y)
{
	assert_int_equal(x->ntriggers, y->ntriggers);
	assert_int_equal(x->ntotal, y->ntotal);
	assert_memory_equal(
	    x->peaks, y->peaks, (size_t) b->count * sizeof(*x->peaks));
	assert_memory_equal(
	    x->triggers, y->triggers, x->ntriggers * sizeof(*x->triggers));
	size_t rows = (size_t) x->nseries * (size_t) (b->t_end - b->t_begin);
	if (rows > 0) {
		assert_memory_equal(x->series, y->series,
		    rows * fftd_test_mf_real_size(b->precision));
	}
}

// halved checks that y's rho are exactly half of x's, y's sigma twice,
// all else the same.
static void
halved(
    const fftd_test_mf *b, const fftd_test_mf_out *x, const fftd_test_mf_out *y)
{
	assert_int_equal(x->ntriggers, y->ntriggers);
	assert_int_equal(x->ntotal, y->ntotal);
	for (int64_t j = 0; j < b->count; j++) {
		const fftd_mf_peak *p = &x->peaks[j], *q = &y->peaks[j];
		assert_true(q->rho == p->rho / 2);
		assert_true(q->sigma == p->sigma * 2);
		assert_int_equal(q->t, p->t);
		assert_true(q->z_re == p->z_re && q->z_im == p->z_im);
	}
	for (size_t i = 0; i < x->ntriggers; i++) {
		const fftd_mf_trigger *p = &x->triggers[i],
		                      *q = &y->triggers[i];
		assert_int_equal(q->template_index, p->template_index);
		assert_int_equal(q->t, p->t);
		assert_true(q->rho == p->rho / 2);
		assert_true(q->z_re == p->z_re && q->z_im == p->z_im);
	}
	size_t rows = (size_t) x->nseries * (size_t) (b->t_end - b->t_begin);
	for (size_t i = 0; i < rows; i++) {
		long double u = fftd_test_mf_get(x->series, b->precision, i);
		long double v = fftd_test_mf_get(y->series, b->precision, i);
		assert_true(v == u / 2);
	}
}

// refused runs b's request with d, wants status want (and, when it is
// not NULL, text in the message), and the results still poisoned.
static void
refused(const fftd_test_mf_span *sp, const fftd_test_mf *b,
    const fftd_mf_desc *d, int want, const char *text)
{
	fftd_test_mf_out o;
	int              rv = call(sp, b, d, &o, 2, NULL, 0);
	printf("  sigmasq mode %d: %s: %s\n", (int) d->sigmasq_mode,
	    fftd_err_name(rv), fftd_last_error());
	assert_int_equal(rv, want);
	if (text != NULL) {
		assert_non_null(strstr(fftd_last_error(), text));
	}
	assert_true(isnan(o.peaks[0].rho));
	assert_int_equal(o.ntriggers, 12345);
	fftd_test_mf_out_free(&o);
}

void
fftd_test_mf_sigmasq(const fftd_test_mf_span *sp, fftd_test_mf *b,
    size_t max_triggers, const int64_t *idx, int nseries)
{
	size_t      bytes = (size_t) b->count * 8;
	fftd_array *sq    = NULL;
	ASSERT_OK(fftd_array_create(sp->c, sp->dev, SQ_OFF + bytes, &sq));
	fftd_mf_desc d;
	fftd_test_mf_desc(b, &d);
	fftd_test_mf_out plain, stored, used, scaled;
	ASSERT_OK(call(sp, b, &d, &plain, max_triggers, idx, nseries));
	fftd_test_mf_check(b, &plain);

	// STORE: the same results, sigma^2 written
	d.sigmasq_mode   = FFTD_MF_SIGMASQ_STORE;
	d.sigmasq        = sq;
	d.sigmasq_offset = SQ_OFF;
	ASSERT_OK(call(sp, b, &d, &stored, max_triggers, idx, nseries));
	fftd_test_mf_check(b, &stored);
	same_bits(b, &plain, &stored);
	double *v = malloc(bytes);
	assert_non_null(v);
	ASSERT_OK(fftd_array_read(sq, SQ_OFF, v, bytes));
	for (int64_t j = 0; j < b->count; j++) {
		assert_true(sqrt(v[j]) == stored.peaks[j].sigma);
	}

	// USE of them: the same bits
	d.sigmasq_mode = FFTD_MF_SIGMASQ_USE;
	ASSERT_OK(call(sp, b, &d, &used, max_triggers, idx, nseries));
	same_bits(b, &plain, &used);

	// USE of four times them, the threshold halved: rho halved
	for (int64_t j = 0; j < b->count; j++) {
		v[j] *= 4;
	}
	ASSERT_OK(fftd_array_write(sq, SQ_OFF, v, bytes));
	d.threshold = b->threshold / 2;
	ASSERT_OK(call(sp, b, &d, &scaled, max_triggers, idx, nseries));
	halved(b, &plain, &scaled);
	printf("  sigmasq: STORE, USE and USE x4 agree (%lld templates, %zu "
	       "triggers, %d series)\n",
	    (long long) b->count, plain.ntriggers, nseries);
	d.threshold = b->threshold;

	// refused: bad values, spans, modes
	double bad[2] = { -1.0, NAN };
	for (int i = 0; i < 2; i++) {
		int64_t j = b->count - 1;
		ASSERT_OK(fftd_array_write(
		    sq, SQ_OFF + 8 * (size_t) j, &bad[i], sizeof(double)));
		char name[32];
		snprintf(name, sizeof(name), "sigmasq[%lld]", (long long) j);
		refused(sp, b, &d, FFTD_EINVAL, name);
	}
	d.sigmasq_offset = SQ_OFF + 8;
	refused(sp, b, &d, FFTD_ESIZE, "sigmasq");
	d.sigmasq_offset = 4;
	refused(sp, b, &d, FFTD_EINVAL, "multiple of the element size");
	d.sigmasq_offset = SQ_OFF;
	d.sigmasq_mode   = (fftd_mf_sigmasq) 3;
	refused(sp, b, &d, FFTD_EINVAL, "sigmasq_mode");
	d.sigmasq_mode = FFTD_MF_SIGMASQ_USE;
	d.sigmasq      = NULL;
	refused(sp, b, &d, FFTD_EINVAL, "sigmasq");
	// STORE into the templates it reads: the slice's first bytes
	d.sigmasq_mode   = FFTD_MF_SIGMASQ_STORE;
	d.sigmasq        = sp->tpl;
	d.sigmasq_offset = (sp->tpl_off + 7) / 8 * 8;
	refused(sp, b, &d, FFTD_EINVAL, "overlap");

	fftd_test_mf_out_free(&plain);
	fftd_test_mf_out_free(&stored);
	fftd_test_mf_out_free(&used);
	fftd_test_mf_out_free(&scaled);
	free(v);
	fftd_array_destroy(sq);
}

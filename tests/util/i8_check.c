// SPDX-License-Identifier: MIT
//
// i8_check.c — int8 input checked end to end (i8_check.h).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "i8_check.h"
#include "ref.h"

const fftd_test_i8_case fftd_test_i8_dense[FFTD_TEST_I8_NDENSE] = {
	{ FFTD_C2C, 1, { 1024 }, 1, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_C2C, 1, { 1000 }, 5, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 1, { 4096 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 1, { 999 }, 2, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_C2C, 2, { 64, 48 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 2, { 32, 64 }, 2, 0, 0, { 0 }, 0, 0, { 0 } },
};

void
fftd_test_i8_desc(
    fftd_plan_desc *d, const fftd_test_i8_case *c, fftd_precision p)
{
	assert_int_equal(
	    fftd_plan_desc_init(d, c->rank, c->n, c->kind, p), FFTD_OK);
	d->batch   = c->batch;
	d->istride = c->istride;
	d->idist   = c->idist;
	d->ostride = c->ostride;
	d->odist   = c->odist;
	for (int k = 0; k < c->rank; k++) {
		d->inembed[k] = c->inembed[k];
		d->onembed[k] = c->onembed[k];
	}
	d->input = FFTD_INPUT_I8;
}

long double *
fftd_test_i8_ref(const fftd__shape *s, const int8_t *in, fftd__shape *sn)
{
	*sn              = *s;
	sn->input        = FFTD_INPUT_NATIVE;
	sn->in.elem_size = fftd__elem_size(s->precision, s->in.complex);
	sn->in.bytes     = (uint64_t) sn->in.elems * sn->in.elem_size;
	size_t nr        = (size_t) fftd__in_reals(s);
	void  *w         = malloc(sn->in.bytes);
	assert_non_null(w);
	for (size_t i = 0; i < nr; i++) {
		if (s->precision == FFTD_F64) {
			((double *) w)[i] = in[i];
		} else {
			((float *) w)[i] = in[i];
		}
	}
	long double *ref = fftd_ref_transform(sn, w);
	assert_non_null(ref);
	free(w);
	return ref;
}

void
fftd_test_i8_fill(int8_t *b, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (int8_t) (uint8_t) (x >> 32);
	}
	if (n >= 2) {
		b[0] = -128;
		b[1] = 127;
	}
}

double
fftd_test_i8_check_out(const fftd__shape *sn, const void *out,
    const long double *ref, double bound, const char *what, bool gaps_zeroed)
{
	size_t unwritten = fftd_ref_unwritten(sn, out);
	size_t gaps      = gaps_zeroed ? fftd_ref_gaps_nonzero(sn, out) : 0;
	double err       = fftd_ref_rel_l2(sn, out, ref);
	double b         = bound > 0 ? bound : fftd_ref_bound(sn);
	if (unwritten != 0 || gaps != 0 || !(err <= b)) {
		print_error("%s: %zu unwritten, %zu gaps not zero, error %.3e "
		            "(bound %.3e)\n",
		    what, unwritten, gaps, err, b);
	}
	assert_int_equal(unwritten, 0);
	assert_int_equal(gaps, 0);
	assert_true(err <= b);
	return err;
}

double
fftd_test_i8_run(fftd_client *c, const fftd_plan_desc *d, uint64_t seed,
    double bound, const char *tag)
{
	fftd__shape s, sn;
	char        msg[256], what[160];
	double      worst = 0, e;
	assert_int_equal(
	    fftd__shape_resolve(d, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	assert_int_equal(s.in.elem_size, d->kind == FFTD_C2C ? 2 : 1);
	fftd_plan *plan;
	int        rv = fftd_plan_create(c, d, &plan);
	if (rv != FFTD_OK) {
		print_error("%s: %s\n", tag, fftd_last_error());
	}
	assert_int_equal(rv, FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(plan), s.in.bytes);
	assert_int_equal(fftd_plan_output_bytes(plan), s.out.bytes);
	size_t ib = (size_t) s.in.bytes, ob = (size_t) s.out.bytes;

	// Inline: the int8 bytes travel in the request.
	int8_t *in  = malloc(ib);
	void   *out = malloc(ob);
	assert_non_null(in);
	assert_non_null(out);
	fftd_test_i8_fill(in, ib, seed);
	long double *ref = fftd_test_i8_ref(&s, in, &sn);
	fftd_ref_poison(out, ob);
	assert_int_equal(fftd_execute(plan, in, out), FFTD_OK);
	snprintf(what, sizeof(what), "%s (%s) inline", tag,
	    fftd_plan_algorithm(plan));
	e     = fftd_test_i8_check_out(&sn, out, ref, bound, what, false);
	worst = e > worst ? e : worst;
	free(ref);

	// Shared buffer: input at an odd offset (int8 needs no alignment
	// beyond its element's), output after it, aligned to its reals.
	size_t       ioff = d->kind == FFTD_C2C ? 2 : 1;
	size_t       ooff = (ioff + ib + 63) / 64 * 64;
	fftd_buffer *buf;
	assert_int_equal(fftd_buffer_create(c, ooff + ob, &buf), FFTD_OK);
	unsigned char *bd = fftd_buffer_data(buf);
	fftd_test_i8_fill((int8_t *) bd + ioff, ib, seed + 1);
	memcpy(in, bd + ioff, ib);
	ref = fftd_test_i8_ref(&s, in, &sn);
	fftd_ref_poison(bd + ooff, ob);
	assert_int_equal(fftd_execute(plan, bd + ioff, bd + ooff), FFTD_OK);
	snprintf(what, sizeof(what), "%s shared buffer", tag);
	e     = fftd_test_i8_check_out(&sn, bd + ooff, ref, bound, what, false);
	worst = e > worst ? e : worst;
	assert_memory_equal(bd + ioff, in, ib); // the input is read only
	free(ref);
	fftd_buffer_destroy(buf);

	// Resident arrays: the array holds the int8 bytes.
	fftd_array *ai, *ao;
	assert_int_equal(fftd_array_create(c, -1, ib + ioff, &ai), FFTD_OK);
	assert_int_equal(fftd_array_create(c, -1, ob, &ao), FFTD_OK);
	fftd_test_i8_fill(in, ib, seed + 2);
	ref = fftd_test_i8_ref(&s, in, &sn);
	assert_int_equal(fftd_array_write(ai, ioff, in, ib), FFTD_OK);
	fftd_ref_poison(out, ob);
	assert_int_equal(fftd_array_write(ao, 0, out, ob), FFTD_OK);
	assert_int_equal(fftd_execute_arrays(plan, ai, ioff, ao, 0), FFTD_OK);
	assert_int_equal(fftd_array_read(ao, 0, out, ob), FFTD_OK);
	snprintf(what, sizeof(what), "%s arrays", tag);
	e     = fftd_test_i8_check_out(&sn, out, ref, bound, what, true);
	worst = e > worst ? e : worst;
	free(ref);
	fftd_array_destroy(ai);
	fftd_array_destroy(ao);

	free(in);
	free(out);
	fftd_plan_destroy(plan);
	return worst;
}

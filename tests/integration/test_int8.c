// SPDX-License-Identifier: MIT
//
// test_int8.c — int8 input (fftd_plan_desc.input = FFTD_INPUT_I8, issue 18
// item 4) on the fftw backend: forward C2C (interleaved int8 re, im) and
// R2C (int8 reals), rank 1 and 2, batched, strided and embedded layouts,
// f64 and f32, on fresh random int8 input over the full range -128..127,
// against FFTW in long double on the same values widened exactly, within
// fftd_ref_bound of the plan's precision (the conversion is exact, so the
// bound of a native input holds), with poisoned outputs, through the three
// data paths: inline, shared buffers and resident arrays. Then the
// refusals (C2R, inverse C2C, an unknown input type) with their messages,
// "auto" with a tolerance running int8 through fftw-f32, and an older caller's
// struct, which ends before input, reading as a native input.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/ref.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 120000

static fftd_test_daemon  D;
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };
static fftd_test_fixture FX = {
	.daemon     = { { .d = &D, .c = &C, .args = DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

// i8_case is one shape: kind, rank, sizes, batch and the layout fields of
// fftd_plan_desc (0: default).
typedef struct i8_case {
	fftd_kind kind;
	int       rank;
	int64_t   n[FFTD_MAX_RANK];
	int64_t   batch;
	int64_t   istride, idist, inembed[FFTD_MAX_RANK];
	int64_t   ostride, odist, onembed[FFTD_MAX_RANK];
} i8_case;

static const i8_case CASES[] = {
	{ FFTD_C2C, 1, { 1024 }, 1, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_C2C, 1, { 1000 }, 5, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 1, { 4096 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 1, { 999 }, 2, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_C2C, 2, { 64, 48 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
	{ FFTD_R2C, 2, { 32, 64 }, 2, 0, 0, { 0 }, 0, 0, { 0 } },
	// Interleaved batch (stride = batch, distance 1), as a radio
	// recorder writes channels.
	{ FFTD_C2C, 1, { 256 }, 4, 4, 1, { 0 }, 1, 256, { 0 } },
	{ FFTD_R2C, 1, { 512 }, 3, 3, 1, { 0 }, 3, 1, { 0 } },
	// Embedded (padded) rows and a gap between transforms, both sides.
	{ FFTD_C2C, 2, { 16, 20 }, 2, 1, 16 * 24 + 7, { 16, 24 }, 2, 0,
	    { 18, 20 } },
	{ FFTD_R2C, 2, { 12, 30 }, 2, 2, 0, { 12, 33 }, 1, 0, { 14, 17 } },
};
#define NCASES (sizeof(CASES) / sizeof(CASES[0]))

// desc_of fills *d for case c at precision p with int8 input.
static void
desc_of(fftd_plan_desc *d, const i8_case *c, fftd_precision p)
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

// i8_ref builds the reference of int8 input in (laid out as s->in): the
// same shape with a native input, the values widened exactly, transformed
// by FFTW in long double. *sn gets that shape (its output side is s's).
static long double *
i8_ref(const fftd__shape *s, const int8_t *in, fftd__shape *sn)
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

// fill_i8 fills n int8 values from a xorshift generator seeded by seed,
// the extremes -128 and 127 at the first two places.
static void
fill_i8(int8_t *b, size_t n, uint64_t seed)
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

// check_out checks out (laid out as sn->out) against ref: every layout
// element written, the error within the precision's bound and, where the
// path zeroes them (resident arrays; fftd_execute leaves a caller's gaps
// alone), the gaps zero.
static void
check_out(const fftd__shape *sn, const void *out, const long double *ref,
    const char *path, size_t ci, bool gaps_zeroed)
{
	size_t unwritten = fftd_ref_unwritten(sn, out);
	size_t gaps      = gaps_zeroed ? fftd_ref_gaps_nonzero(sn, out) : 0;
	double err       = fftd_ref_rel_l2(sn, out, ref);
	double bound     = fftd_ref_bound(sn);
	if (unwritten != 0 || gaps != 0 || !(err <= bound)) {
		print_error("case %zu %s %s: %zu unwritten, %zu gaps not "
		            "zero, error %.3e (bound %.3e)\n",
		    ci, sn->precision == FFTD_F64 ? "f64" : "f32", path,
		    unwritten, gaps, err, bound);
	}
	assert_int_equal(unwritten, 0);
	assert_int_equal(gaps, 0);
	assert_true(err <= bound);
}

// run_case runs case c at precision p through the inline path, a shared
// buffer and resident arrays, each on fresh int8 input.
static void
run_case(size_t ci, fftd_precision p, uint64_t seed)
{
	const i8_case *c = &CASES[ci];
	fftd_plan_desc d;
	fftd__shape    s, sn;
	char           msg[256];
	desc_of(&d, c, p);
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	assert_int_equal(s.in.elem_size, c->kind == FFTD_C2C ? 2 : 1);
	fftd_plan *plan;
	assert_int_equal(fftd_plan_create(C, &d, &plan), FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(plan), s.in.bytes);
	assert_int_equal(fftd_plan_output_bytes(plan), s.out.bytes);
	size_t ib = (size_t) s.in.bytes, ob = (size_t) s.out.bytes;

	// Inline: the int8 bytes travel in the request.
	int8_t *in  = malloc(ib);
	void   *out = malloc(ob);
	assert_non_null(in);
	assert_non_null(out);
	fill_i8(in, ib, seed);
	long double *ref = i8_ref(&s, in, &sn);
	fftd_ref_poison(out, ob);
	assert_int_equal(fftd_execute(plan, in, out), FFTD_OK);
	check_out(&sn, out, ref, "inline", ci, false);
	free(ref);

	// Shared buffer: input at an odd offset (int8 needs no alignment
	// beyond its element's), output after it, aligned to its reals.
	size_t       ioff = c->kind == FFTD_C2C ? 2 : 1;
	size_t       ooff = (ioff + ib + 63) / 64 * 64;
	fftd_buffer *buf;
	assert_int_equal(fftd_buffer_create(C, ooff + ob, &buf), FFTD_OK);
	unsigned char *bd = fftd_buffer_data(buf);
	fill_i8((int8_t *) bd + ioff, ib, seed + 1);
	memcpy(in, bd + ioff, ib);
	ref = i8_ref(&s, in, &sn);
	fftd_ref_poison(bd + ooff, ob);
	assert_int_equal(fftd_execute(plan, bd + ioff, bd + ooff), FFTD_OK);
	check_out(&sn, bd + ooff, ref, "shared buffer", ci, false);
	assert_memory_equal(bd + ioff, in, ib); // the input is read only
	free(ref);
	fftd_buffer_destroy(buf);

	// Resident arrays: the array holds the int8 bytes.
	fftd_array *ai, *ao;
	assert_int_equal(fftd_array_create(C, -1, ib + ioff, &ai), FFTD_OK);
	assert_int_equal(fftd_array_create(C, -1, ob, &ao), FFTD_OK);
	fill_i8(in, ib, seed + 2);
	ref = i8_ref(&s, in, &sn);
	assert_int_equal(fftd_array_write(ai, ioff, in, ib), FFTD_OK);
	fftd_ref_poison(out, ob);
	assert_int_equal(fftd_array_write(ao, 0, out, ob), FFTD_OK);
	assert_int_equal(fftd_execute_arrays(plan, ai, ioff, ao, 0), FFTD_OK);
	assert_int_equal(fftd_array_read(ao, 0, out, ob), FFTD_OK);
	check_out(&sn, out, ref, "arrays", ci, true);
	free(ref);
	fftd_array_destroy(ai);
	fftd_array_destroy(ao);

	free(in);
	free(out);
	fftd_plan_destroy(plan);
}

static void
test_int8_f64(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	for (size_t ci = 0; ci < NCASES; ci++) {
		run_case(ci, FFTD_F64, 0x18a0 + 16 * ci);
	}
}

static void
test_int8_f32(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	for (size_t ci = 0; ci < NCASES; ci++) {
		run_case(ci, FFTD_F32, 0x28b0 + 16 * ci);
	}
}

// test_int8_tolerance: "auto" with a tolerance treats int8 input like its
// precision's data: f64 with 1e-5 runs through fftw-f32 (the daemon
// prefers it where it fits, FFTD_AUTO_PREFER below), int8 widened to f64,
// then to f32, and the result is within the tolerance.
static void
test_int8_tolerance(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const i8_case tc[] = {
		{ FFTD_C2C, 1, { 4096 }, 3, 0, 0, { 0 }, 0, 0, { 0 } },
		{ FFTD_R2C, 2, { 64, 64 }, 2, 2, 0, { 0 }, 0, 0, { 0 } },
	};
	for (size_t i = 0; i < 2; i++) {
		fftd_plan_desc d;
		fftd__shape    s, sn;
		char           msg[256];
		desc_of(&d, &tc[i], FFTD_F64);
		d.tolerance = 1e-5;
		assert_int_equal(
		    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)),
		    FFTD_OK);
		fftd_plan *plan;
		assert_int_equal(fftd_plan_create(C, &d, &plan), FFTD_OK);
		assert_string_equal(fftd_plan_algorithm(plan), "fftw-f32");
		int8_t *in  = malloc(s.in.bytes);
		void   *out = malloc(s.out.bytes);
		assert_non_null(in);
		assert_non_null(out);
		fill_i8(in, s.in.bytes, 0x3c0 + i);
		long double *ref = i8_ref(&s, in, &sn);
		fftd_ref_poison(out, s.out.bytes);
		assert_int_equal(fftd_execute(plan, in, out), FFTD_OK);
		assert_int_equal(fftd_ref_unwritten(&sn, out), 0);
		double e = fftd_ref_rel_l2(&sn, out, ref);
		print_message("int8 f64 tol 1e-5 case %zu: fftw-f32, error "
		              "%.2e\n",
		    i, e);
		assert_true(e <= 1e-5);
		assert_true(e > 1e-12); // it did run in f32
		free(ref);
		free(in);
		free(out);
		fftd_plan_destroy(plan);
	}
}

// refused asserts that d fails at fftd_plan_create with code and a
// message containing what.
static void
refused(const fftd_plan_desc *d, int code, const char *what)
{
	fftd_plan *p = NULL;
	assert_int_equal(fftd_plan_create(C, d, &p), code);
	assert_null(p);
	if (strstr(fftd_last_error(), what) == NULL) {
		print_error(
		    "message '%s' lacks '%s'\n", fftd_last_error(), what);
	}
	assert_non_null(strstr(fftd_last_error(), what));
}

static void
test_int8_refused(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_desc d;
	int64_t        n = 256;
	// C2R: the input is a spectrum.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2R, FFTD_F64), FFTD_OK);
	d.input = FFTD_INPUT_I8;
	refused(&d, FFTD_EINVAL, "int8 input is for forward C2C and R2C");
	// Inverse C2C.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), FFTD_OK);
	d.input     = FFTD_INPUT_I8;
	d.direction = FFTD_INVERSE;
	refused(&d, FFTD_EINVAL, "int8 input is for forward transforms");
	// An unknown input type.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), FFTD_OK);
	d.input = (fftd_input_type) 7;
	refused(&d, FFTD_EINVAL, "input = 7: unknown");
	// f16 on the CPU: refused as without int8.
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F16), FFTD_OK);
	d.input = FFTD_INPUT_I8;
	refused(&d, FFTD_EUNSUPPORTED, "f16");
}

static void
test_int8_old_abi(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	// A caller built before input: its struct ends there, so the int8
	// asked for past its end is never read and the plan takes f64.
	fftd_plan_desc d;
	fftd_plan     *p;
	int64_t        n = 128;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_int_equal(d.input, FFTD_INPUT_NATIVE);
	d.input = FFTD_INPUT_I8;
	assert_int_equal(
	    fftd_plan_create_sized(C, &d, offsetof(fftd_plan_desc, input), &p),
	    FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(p), 128 * 16);
	fftd_plan_destroy(p);
	// The full struct: 2 bytes per complex int8 element.
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	assert_int_equal(fftd_plan_input_bytes(p), 128 * 2);
	assert_int_equal(fftd_plan_output_bytes(p), 128 * 16);
	fftd_plan_destroy(p);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setenv("FFTD_AUTO_PREFER", "fftw-f32", 1); // the daemon inherits it
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int8_f64),
		cmocka_unit_test(test_int8_f32),
		cmocka_unit_test(test_int8_tolerance),
		cmocka_unit_test(test_int8_refused),
		cmocka_unit_test(test_int8_old_abi),
	};
	return fftd_test_run_group("int8", tests, &FX);
}

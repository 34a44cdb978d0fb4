// SPDX-License-Identifier: MIT
//
// ref.c — the tests' reference transform (FFTW in long double, guru64
// interface, so any fftd layout maps onto one plan) and the comparison
// helpers. Plain C and FFTW only: no CUDA, so every test can link it.

#include "ref.h"

#include <fftw3.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// --- f16 -----------------------------------------------------------------

float
fftd_ref_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t) (h & 0x8000) << 16;
	uint32_t exp  = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff;
	uint32_t bits;
	if (exp == 0) {
		// Zero or subnormal: mant * 2^-24 is exact in float.
		float f = (float) mant * 0x1p-24f;
		return (h & 0x8000) ? -f : f;
	}
	if (exp == 31) {
		bits = sign | 0x7f800000 | (mant << 13);
	} else {
		bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	}
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t
fftd_ref_f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	uint16_t sign = (uint16_t) ((x >> 16) & 0x8000);
	uint32_t ax   = x & 0x7fffffff;
	if (ax >= 0x7f800000) { // Inf or NaN (kept quiet)
		return sign | (ax > 0x7f800000 ? 0x7e00 : 0x7c00);
	}
	if (ax >= 0x477ff000) { // >= 65520 rounds past 65504
		return sign | 0x7c00;
	}
	uint32_t h, rem, half;
	if (ax < 0x38800000) {          // below 2^-14: a subnormal result
		if (ax <= 0x33000000) { // <= 2^-25 rounds (ties even) to 0
			return sign;
		}
		uint32_t e     = ax >> 23;
		uint32_t m     = (ax & 0x7fffff) | 0x800000;
		uint32_t shift = 126 - e; // 14 .. 24
		h              = m >> shift;
		rem            = m & ((1u << shift) - 1);
		half           = 1u << (shift - 1);
	} else {
		h    = ((ax >> 23) - 127 + 15) << 10 | ((ax & 0x7fffff) >> 13);
		rem  = ax & 0x1fff;
		half = 0x1000;
	}
	// A carry out of the mantissa bumps the exponent, as it should.
	if (rem > half || (rem == half && (h & 1))) {
		h++;
	}
	return sign | (uint16_t) h;
}

// --- element access ------------------------------------------------------

// get reads real number i of buf (precision p).
static long double
get(const void *buf, fftd_precision p, int64_t i)
{
	switch (p) {
	case FFTD_F64:
		return ((const double *) buf)[i];
	case FFTD_F32:
		return ((const float *) buf)[i];
	default:
		return fftd_ref_f16_to_f32(((const uint16_t *) buf)[i]);
	}
}

// put writes real number i of buf (precision p), rounding once.
static void
put(void *buf, fftd_precision p, int64_t i, long double v)
{
	switch (p) {
	case FFTD_F64:
		((double *) buf)[i] = (double) v;
		break;
	case FFTD_F32:
		((float *) buf)[i] = (float) v;
		break;
	default:
		// Through float is double rounding, harmless here: test data
		// is generated in float or is a reference far from ties.
		((uint16_t *) buf)[i] = fftd_ref_f32_to_f16((float) v);
		break;
	}
}

// layout_it walks the element indices of one side's layout, batch by
// batch, in row-major order of the logical indices.
typedef struct layout_it {
	int64_t n[FFTD_MAX_RANK];     // sizes, padded to rank 3 in front
	int64_t pitch[FFTD_MAX_RANK]; // element pitch of each axis
	int64_t dist, batch;
	int64_t b, j[FFTD_MAX_RANK];
	bool    done;
} layout_it;

static void
it_init(layout_it *it, const fftd__side *sd, int rank, int64_t batch)
{
	int     off   = FFTD_MAX_RANK - rank;
	int64_t pitch = sd->stride;
	for (int k = 0; k < FFTD_MAX_RANK; k++) {
		it->n[k]     = 1;
		it->pitch[k] = 0;
		it->j[k]     = 0;
	}
	for (int k = rank - 1; k >= 0; k--) {
		it->n[k + off]     = sd->n[k];
		it->pitch[k + off] = pitch;
		pitch *= sd->embed[k];
	}
	it->dist  = sd->dist;
	it->batch = batch;
	it->b     = 0;
	it->done  = batch < 1;
}

// it_next stores the next element index in *idx; false when done.
static bool
it_next(layout_it *it, int64_t *idx)
{
	if (it->done) {
		return false;
	}
	*idx = it->b * it->dist;
	for (int k = 0; k < FFTD_MAX_RANK; k++) {
		*idx += it->j[k] * it->pitch[k];
	}
	for (int k = FFTD_MAX_RANK - 1; k >= 0; k--) {
		if (++it->j[k] < it->n[k]) {
			return true;
		}
		it->j[k] = 0;
	}
	it->done = ++it->b >= it->batch;
	return true;
}

static int
reals_per_elem(const fftd__side *sd)
{
	return sd->complex ? 2 : 1;
}

// --- input ---------------------------------------------------------------

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
fftd_ref_fill(void *buf, const fftd__side *sd, fftd_precision p, uint64_t seed)
{
	uint64_t x = seed;
	int64_t  n = sd->elems * reals_per_elem(sd);
	for (int64_t i = 0; i < n; i++) {
		// 24 random bits: exact in float, so f64 and f32 tests see
		// the same values, and f16 rounds them once.
		float v = (float) (splitmix64(&x) >> 40) * 0x1p-23f - 1.0f;
		put(buf, p, i, v);
	}
}

void
fftd_ref_hermitian(const fftd__shape *s, void *in)
{
	if (s->kind != FFTD_C2R) {
		return;
	}
	const fftd__side *sd   = &s->in;
	int               r    = s->rank;
	int64_t           nl   = s->n[r - 1];  // logical (real) last size
	int64_t           half = sd->n[r - 1]; // nl/2 + 1
	fftd_precision    p    = s->precision;

	// Element (b, k) of the half-spectrum at logical index k.
	int64_t k[FFTD_MAX_RANK], m[FFTD_MAX_RANK];
	for (int64_t b = 0; b < s->batch; b++) {
		for (int64_t lin = 0; lin < s->total / nl * half; lin++) {
			int64_t t = lin;
			for (int d = r - 1; d >= 0; d--) {
				k[d] = t % sd->n[d];
				t /= sd->n[d];
			}
			// Only planes whose last index is its own mirror hold
			// redundant values.
			if (k[r - 1] != 0 && 2 * k[r - 1] != nl) {
				continue;
			}
			int64_t mlin = 0;
			for (int d = 0; d < r; d++) {
				m[d] = (s->n[d] - k[d]) % s->n[d];
				mlin = mlin * sd->n[d] + m[d];
			}
			if (mlin < lin) {
				continue; // done as the partner's pair
			}
			int64_t     i  = 2 * fftd__side_index(sd, r, b, k);
			int64_t     j  = 2 * fftd__side_index(sd, r, b, m);
			long double re = (get(in, p, i) + get(in, p, j)) / 2;
			long double im
			    = (get(in, p, i + 1) - get(in, p, j + 1)) / 2;
			if (mlin == lin) {
				im = 0;
			}
			put(in, p, i, re);
			put(in, p, i + 1, im);
			// Rounding is symmetric in sign: the mirror gets
			// exactly the conjugate of what was stored.
			put(in, p, j, get(in, p, i));
			put(in, p, j + 1, -get(in, p, i + 1));
		}
	}
}

void
fftd_ref_fill_input(void *in, const fftd__shape *s, uint64_t seed)
{
	fftd_ref_fill(in, &s->in, s->precision, seed);
	fftd_ref_hermitian(s, in);
}

void
fftd_ref_poison(void *buf, size_t n)
{
	memset(buf, 0xff, n);
}

// --- reference -----------------------------------------------------------

static void
side_dims(const fftd__side *sd, int rank, const int64_t *n, fftwl_iodim64 *dims,
    bool is_in)
{
	int64_t pitch = sd->stride;
	for (int k = rank - 1; k >= 0; k--) {
		dims[k].n = n[k];
		if (is_in) {
			dims[k].is = pitch;
		} else {
			dims[k].os = pitch;
		}
		pitch *= sd->embed[k];
	}
}

long double *
fftd_ref_transform(const fftd__shape *s, const void *in)
{
	int64_t      ni   = s->in.elems * reals_per_elem(&s->in);
	int64_t      no   = s->out.elems * reals_per_elem(&s->out);
	long double *x    = malloc((size_t) ni * sizeof(long double));
	long double *y    = calloc((size_t) no, sizeof(long double));
	fftwl_plan   plan = NULL;
	if (x == NULL || y == NULL) {
		goto fail;
	}
	for (int64_t i = 0; i < ni; i++) {
		x[i] = get(in, s->precision, i);
	}

	// Logical sizes are the real ones for r2c/c2r, as FFTW wants.
	fftwl_iodim64 dims[FFTD_MAX_RANK];
	fftwl_iodim64 howmany
	    = { .n = s->batch, .is = s->in.dist, .os = s->out.dist };
	side_dims(&s->in, s->rank, s->n, dims, true);
	side_dims(&s->out, s->rank, s->n, dims, false);
	unsigned flags = FFTW_ESTIMATE | FFTW_DESTROY_INPUT;
	switch (s->kind) {
	case FFTD_C2C:
		plan = fftwl_plan_guru64_dft(s->rank, dims, 1, &howmany,
		    (fftwl_complex *) x, (fftwl_complex *) y,
		    s->direction == FFTD_INVERSE ? FFTW_BACKWARD : FFTW_FORWARD,
		    flags);
		break;
	case FFTD_R2C:
		plan = fftwl_plan_guru64_dft_r2c(
		    s->rank, dims, 1, &howmany, x, (fftwl_complex *) y, flags);
		break;
	default:
		plan = fftwl_plan_guru64_dft_c2r(
		    s->rank, dims, 1, &howmany, (fftwl_complex *) x, y, flags);
		break;
	}
	if (plan == NULL) {
		goto fail;
	}
	fftwl_execute(plan);
	fftwl_destroy_plan(plan);
	free(x);

	long double f = 1;
	if (s->norm == FFTD_NORM_BY_N) {
		f = 1.0L / (long double) s->total;
	} else if (s->norm == FFTD_NORM_ORTHO) {
		f = 1.0L / sqrtl((long double) s->total);
	}
	if (f != 1) {
		for (int64_t i = 0; i < no; i++) {
			y[i] *= f;
		}
	}
	return y;

fail:
	free(x);
	free(y);
	return NULL;
}

// --- comparison ----------------------------------------------------------

// rel_l2 compares out (precision p, or long double when p < 0).
static double
rel_l2(const fftd__shape *s, const void *out, int p, const long double *ref)
{
	layout_it   it;
	int64_t     idx;
	int         re  = reals_per_elem(&s->out);
	long double err = 0, nrm = 0;
	it_init(&it, &s->out, s->rank, s->batch);
	while (it_next(&it, &idx)) {
		for (int c = 0; c < re; c++) {
			int64_t     i = idx * re + c;
			long double v = p < 0 ? ((const long double *) out)[i]
			                      : get(out, (fftd_precision) p, i);
			long double d = v - ref[i];
			err += d * d;
			nrm += ref[i] * ref[i];
		}
	}
	if (nrm == 0) {
		return (double) sqrtl(err);
	}
	return (double) sqrtl(err / nrm);
}

double
fftd_ref_rel_l2(const fftd__shape *s, const void *out, const long double *ref)
{
	return rel_l2(s, out, (int) s->precision, ref);
}

double
fftd_ref_rel_l2_ld(
    const fftd__shape *s, const long double *x, const long double *ref)
{
	return rel_l2(s, x, -1, ref);
}

size_t
fftd_ref_unwritten(const fftd__shape *s, const void *out)
{
	layout_it it;
	int64_t   idx;
	int       re  = reals_per_elem(&s->out);
	size_t    bad = 0;
	it_init(&it, &s->out, s->rank, s->batch);
	while (it_next(&it, &idx)) {
		for (int c = 0; c < re; c++) {
			if (!isfinite(get(out, s->precision, idx * re + c))) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

size_t
fftd_ref_gaps_nonzero(const fftd__shape *s, const void *out)
{
	int64_t  n         = s->out.elems;
	uint8_t *in_layout = calloc((size_t) n, 1);
	if (in_layout == NULL) {
		return (size_t) n; // cannot check: fail loudly
	}
	layout_it it;
	int64_t   idx;
	it_init(&it, &s->out, s->rank, s->batch);
	while (it_next(&it, &idx)) {
		in_layout[idx] = 1;
	}
	size_t         es  = s->out.elem_size;
	const uint8_t *o   = out;
	size_t         bad = 0;
	for (int64_t i = 0; i < n; i++) {
		if (in_layout[i]) {
			continue;
		}
		for (size_t b = 0; b < es; b++) {
			if (o[(size_t) i * es + b] != 0) {
				bad++;
				break;
			}
		}
	}
	free(in_layout);
	return bad;
}

void
fftd_ref_store(
    void *dst, const fftd__side *sd, fftd_precision p, const long double *src)
{
	int64_t n = sd->elems * reals_per_elem(sd);
	for (int64_t i = 0; i < n; i++) {
		put(dst, p, i, src[i]);
	}
}

double
fftd_ref_bound(const fftd__shape *s)
{
	double l = log2((double) s->total);
	if (l < 1) {
		l = 1;
	}
	switch (s->precision) {
	case FFTD_F64:
		return 16 * 0x1p-53 * l;
	case FFTD_F32:
		return 16 * 0x1p-24 * l;
	default: {
		double b = 2 * 0x1p-11 * l;
		return b > 1e-2 ? b : 1e-2;
	}
	}
}

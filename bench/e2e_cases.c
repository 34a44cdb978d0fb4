// SPDX-License-Identifier: MIT
//
// e2e_cases.c — bench/e2e's cases and measurements (see e2e.h): the four
// transforms and their sizes, their random inputs (f32, and f16 drawn
// through a float to binary16 conversion), a figure's repetitions and
// median, and the small helpers every case family uses.

#include "e2e.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// e2e_cmp_double orders doubles for qsort.
int
e2e_cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

// median is the median of n values (n <= 4 MAX_REPS); NAN if none.
static double
median(const double *v, int n)
{
	double s[MAX_REPS * 4];
	if (n <= 0) {
		return NAN;
	}
	memcpy(s, v, sizeof(double) * (size_t) n);
	qsort(s, (size_t) n, sizeof(double), e2e_cmp_double);
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// e2e_xmalloc is malloc that exits the program when memory runs out.
void *
e2e_xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);
	if (p == NULL) {
		fprintf(stderr, "e2e: out of memory (%zu bytes)\n", n);
		exit(2);
	}
	return p;
}

// Pages of a fresh allocation are faulted in before anything is timed.
void *
e2e_xmalloc_touched(size_t n)
{
	void *p = e2e_xmalloc(n);
	memset(p, 0, n);
	return p;
}

// splitmix64, a fast PRNG with good statistics, for non-zero random input.
uint64_t
e2e_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// uniform in [-1, 1), never exactly 0
static float
unif(uint64_t *s)
{
	uint32_t r = (uint32_t) (e2e_splitmix(s) >> 40); // 24 bits
	float    f = ((float) r + 0.5f) * (2.0f / 16777216.0f) - 1.0f;
	return f;
}

// IEEE binary16 <-> float (round to nearest even; normal/subnormal/inf/nan).
static uint16_t
f2h(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t mant = x & 0x7fffffu;
	int      exp  = (int) ((x >> 23) & 0xff);
	if (exp == 0xff) {
		return (uint16_t) (sign | 0x7c00u | (mant ? 0x200u : 0));
	}
	int e = exp - 127 + 15;
	if (e >= 31) {
		return (uint16_t) (sign | 0x7c00u);
	}
	if (e <= 0) {
		if (e < -10) {
			return (uint16_t) sign;
		}
		mant |= 0x800000u;
		int      shift = 14 - e;
		uint32_t h     = mant >> shift;
		uint32_t rem   = mant & ((1u << shift) - 1);
		uint32_t half  = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1))) {
			h++;
		}
		return (uint16_t) (sign | h);
	}
	uint32_t h   = ((uint32_t) e << 10) | (mant >> 13);
	uint32_t rem = mant & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) {
		h++;
	}
	return (uint16_t) (sign | h);
}

// e2e_h2d converts IEEE binary16 to double (every value is exact).
double
e2e_h2d(uint16_t h)
{
	int    e = (h >> 10) & 0x1f;
	int    m = h & 0x3ff;
	double v;
	if (e == 0) {
		v = ldexp((double) m, -24);
	} else if (e == 31) {
		v = m ? NAN : INFINITY;
	} else {
		v = ldexp((double) (m | 0x400), e - 25);
	}
	return (h & 0x8000) ? -v : v;
}

// --- cases -------------------------------------------------------------------

const bcase e2e_cases[NCASES] = {
	{ "c2c4096", "f32 C2C N=4096", FFTD_C2C, FFTD_F32, 4096 },
	{ "c2c1m", "f32 C2C N=2^20", FFTD_C2C, FFTD_F32, 1 << 20 },
	{ "r2c16384", "f32 R2C N=16384", FFTD_R2C, FFTD_F32, 16384 },
	{ "f16c2c4096", "f16 C2C N=4096", FFTD_C2C, FFTD_F16, 4096 },
};

// e2e_real_bytes is the size of one real of precision p.
size_t
e2e_real_bytes(fftd_precision p)
{
	return p == FFTD_F64 ? 8 : p == FFTD_F32 ? 4 : 2;
}

// Per-transform input and output bytes of a 1-D contiguous case.
size_t
e2e_case_in_per(const bcase *c)
{
	size_t r = e2e_real_bytes(c->prec);
	return c->kind == FFTD_R2C ? r * (size_t) c->n : 2 * r * (size_t) c->n;
}

// e2e_case_out_per is one transform's output bytes.
size_t
e2e_case_out_per(const bcase *c)
{
	size_t r = e2e_real_bytes(c->prec);
	return c->kind == FFTD_R2C ? 2 * r * (size_t) (c->n / 2 + 1)
	                           : 2 * r * (size_t) c->n;
}

// batch making at least `target` bytes of input
int64_t
e2e_batch_for(const bcase *c, size_t target)
{
	size_t per = e2e_case_in_per(c);
	return (int64_t) ((target + per - 1) / per);
}

// e2e_fill_input fills batch transforms' inputs with random values,
// never exactly 0 (f16: redrawn until non-zero).
void
e2e_fill_input(const bcase *c, void *p, int64_t batch, uint64_t seed)
{
	size_t nreal
	    = e2e_case_in_per(c) / e2e_real_bytes(c->prec) * (size_t) batch;
	uint64_t s = seed * 0x2545f4914f6cdd1dull + 12345;
	if (c->prec == FFTD_F16) {
		uint16_t *h = p;
		for (size_t i = 0; i < nreal; i++) {
			uint16_t v;
			do {
				v = f2h(unif(&s));
			} while ((v & 0x7fff) == 0);
			h[i] = v;
		}
	} else {
		float *f = p;
		for (size_t i = 0; i < nreal; i++) {
			f[i] = unif(&s);
		}
	}
}

// e2e_desc_for describes the plan of batch transforms of a case.
void
e2e_desc_for(const bcase *c, int64_t batch, fftd_plan_desc *d)
{
	fftd_plan_desc_init(d, 1, &c->n, c->kind, c->prec);
	d->batch = batch;
}

// e2e_meas_set marks a figure not measured (-1: unavailable, -2:
// failed) and says why.
void
e2e_meas_set(meas *m, int state, const char *fmt, ...)
{
	m->state = state;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

// e2e_meas_finish takes the median of the repetitions of bytes.
void
e2e_meas_finish(meas *m, size_t bytes)
{
	m->state = 1;
	m->med   = median(m->s, m->nrep);
	m->gbps  = (double) bytes / m->med / 1e9;
}

// e2e_meas_print prints a figure's line (or why it is missing).
void
e2e_meas_print(const char *what, const meas *m)
{
	if (m->state == 1) {
		printf("  %-34s %8.2f GB/s  (median %.3f ms of %d)\n", what,
		    m->gbps, m->med * 1e3, m->nrep);
	} else if (m->state != 0) {
		printf("  %-34s %s\n", what, m->why);
	}
	fflush(stdout);
}

// e2e_ferr is rv's name and libfftd's last message, in a buffer of
// the calling thread's.
const char *
e2e_ferr(int rv)
{
	static _Thread_local char b[400];
	const char               *d = fftd_last_error();
	snprintf(b, sizeof(b), "%s%s%s", fftd_err_name(rv),
	    d != NULL && d[0] ? ": " : "", d != NULL ? d : "");
	return b;
}

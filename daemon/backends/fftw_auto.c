// SPDX-License-Identifier: MIT
//
// fftw_auto.c — the fftw backend's part of accuracy-aware "auto" (issue 18
// item 5; daemon/algo_pick.c): "fftw-f32", f64 data transformed by FFTW's
// f32 planner (converted on the way in and out), and measure, the time of
// one execution on scratch data for the speed table. fftw.c plans and
// executes; this file converts and times.
//
// The conversion scales by a power of two, 2^e, chosen from the largest
// magnitude m of the whole input extent, so that the worst-case output
// of any transform (N points of modulus at most sqrt(2) m, summed) stays
// below 2^64, far inside f32's range (2^128), while values 2^-160 times
// m or more stay normal f32 numbers; the output is multiplied by 2^-e on
// the way back. Powers of two are exact both ways, so the only errors are
// the two roundings of each element to f32 (in the error table,
// common/errtable.c).

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo_table.h"
#include "clock.h"
#include "errmsg.h"
#include "fftw_impl.h"

// fftd__fftw_to_f32 converts n doubles of src into dst, scaled by the power
// of two that keeps `points`-point transforms of them within f32 (see
// above), and returns its exponent e.
int
fftd__fftw_to_f32(float *dst, const double *src, size_t n, int64_t points)
{
	double m = 0;
	for (size_t i = 0; i < n; i++) {
		double a = fabs(src[i]);
		m        = a > m ? a : m; // NaN is skipped: it stays NaN
	}
	int e = 0;
	if (m > 0 && isfinite(m)) {
		// 2 m points 2^e <= 2^64: e = 63 - ceil(log2(m points)).
		int ex;
		(void) frexp(m * (double) points, &ex); // m points < 2^ex
		e = 63 - ex;
	}
	for (size_t i = 0; i < n; i++) {
		dst[i] = (float) ldexp(src[i], e);
	}
	return e;
}

// fftd__fftw_from_f32 converts n floats of src into dst, unscaled by 2^-e.
void
fftd__fftw_from_f32(double *dst, const float *src, size_t n, int e)
{
	for (size_t i = 0; i < n; i++) {
		dst[i] = ldexp((double) src[i], -e);
	}
}

// fftd__fftw_from_i8 widens int8 samples (fftw_impl.h); every int8 is
// exact in f32 and f64, so the conversion adds no error.
void
fftd__fftw_from_i8(void *dst, bool f64, const void *src, uint64_t n)
{
	const int8_t *b = src;
	if (f64) {
		double *d = dst;
		for (uint64_t i = 0; i < n; i++) {
			d[i] = (double) b[i];
		}
	} else {
		float *f = dst;
		for (uint64_t i = 0; i < n; i++) {
			f[i] = (float) b[i];
		}
	}
}

// fftd__fftw_measure times one execution of plan on 64-byte-aligned
// scratch data (aligned as the plans were made, so FFTW's new-array
// execute uses the plan as it is, safely beside the worker's executions):
// one run to warm up, then the median of 5 (backend.h: measure).
int
fftd__fftw_measure(fftd__device *dev, void *plan, const fftd__shape *s,
    uint64_t *ns, char *msg, size_t msglen)
{
	size_t ib  = ((size_t) s->in.bytes + 63) / 64 * 64;
	size_t ob  = ((size_t) s->out.bytes + 63) / 64 * 64;
	void  *in  = aligned_alloc(64, ib ? ib : 64);
	void  *out = aligned_alloc(64, ob ? ob : 64);
	void  *src = malloc(ib ? ib : 64);
	if (in == NULL || out == NULL || src == NULL) {
		free(in);
		free(out);
		free(src);
		return fftd__errmsg(
		    FFTD_ENOMEM, msg, msglen, "no memory to time a plan");
	}
	// Small values of the data's own type (the bits of 1/(i+2)): any
	// finite data runs at the same speed.
	size_t nreal = (size_t) fftd__in_reals(s);
	for (size_t i = 0; i < nreal; i++) {
		if (s->input == FFTD_INPUT_I8) {
			((int8_t *) src)[i] = (int8_t) (i % 255 - 127);
		} else if (s->precision == FFTD_F64) {
			((double *) src)[i] = 1.0 / (double) (i % 1000 + 2);
		} else {
			((float *) src)[i] = 1.0f / (float) (i % 1000 + 2);
		}
	}
	uint64_t t[6];
	int      rv = FFTD_OK;
	for (int k = 0; k < 6 && rv == FFTD_OK; k++) {
		memcpy(in, src, (size_t) s->in.bytes); // execute may overwrite
		uint64_t t0 = fftd__mono_ns();
		rv = dev->backend->execute(dev, plan, s, in, out, msg, msglen);
		t[k] = fftd__mono_ns() - t0;
	}
	free(in);
	free(out);
	free(src);
	if (rv != FFTD_OK) {
		return rv;
	}
	*ns = fftd__median_ns(t + 1, 5);
	if (*ns == 0) {
		*ns = 1;
	}
	return FFTD_OK;
}

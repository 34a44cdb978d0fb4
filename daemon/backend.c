// SPDX-License-Identifier: MIT
//
// backend.c — what the backends share: the normalisation factor of a shape
// and the host-side preparation and scaling of an output extent.

#include "backend.h"

#include <math.h>
#include <string.h>

#include "backend_util.h"

double
fftd__norm_factor(const fftd__shape *s)
{
	switch (s->norm) {
	case FFTD_NORM_BY_N:
		return 1.0 / (double) s->total;
	case FFTD_NORM_ORTHO:
		return 1.0 / sqrt((double) s->total);
	default:
		return 1.0;
	}
}

size_t
fftd__out_reals(const fftd__shape *s)
{
	return (size_t) s->out.elems * (s->out.complex ? 2 : 1);
}

void
fftd__host_scale(void *buf, fftd_precision p, size_t nreal, double factor)
{
	if (p == FFTD_F64) {
		double *d = buf;
		for (size_t i = 0; i < nreal; i++) {
			d[i] *= factor;
		}
	} else if (p == FFTD_F32) {
		// In double, so each result is rounded once: a float factor
		// would add a systematic 0.5 ulp scale error to every element.
		float *f = buf;
		for (size_t i = 0; i < nreal; i++) {
			f[i] = (float) (f[i] * factor);
		}
	}
}

bool
fftd__side_has_gaps(const fftd__side *sd, int rank, int64_t batch)
{
	if (!sd->dense) {
		return true;
	}
	// Overlapping layouts (a distance shorter than a transform) may count
	// more elements than fit in int64: call those gapped, harmlessly.
	int64_t used = batch;
	for (int k = 0; k < rank; k++) {
		if (__builtin_mul_overflow(used, sd->n[k], &used)) {
			return true;
		}
	}
	return used != sd->elems;
}

void
fftd__host_prepare_out(void *out, const fftd__shape *s)
{
	if (fftd__side_has_gaps(&s->out, s->rank, s->batch)) {
		memset(out, 0, (size_t) s->out.bytes);
	}
}

void
fftd__host_finish(void *out, const fftd__shape *s)
{
	double f = fftd__norm_factor(s);
	if (f != 1.0) {
		fftd__host_scale(out, s->precision, fftd__out_reals(s), f);
	}
}

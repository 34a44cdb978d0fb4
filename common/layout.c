// SPDX-License-Identifier: MIT
//
// layout.c — FFTW advanced-layout arithmetic with every product checked for
// overflow before it is used (requests come from untrusted clients).

#include "layout.h"

#include "errmsg.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

size_t
fftd__elem_size(fftd_precision p, bool complex)
{
	size_t r;
	switch (p) {
	case FFTD_F64:
		r = 8;
		break;
	case FFTD_F32:
		r = 4;
		break;
	case FFTD_F16:
		r = 2;
		break;
	default:
		return 0;
	}
	return complex ? 2 * r : r;
}

static int
resolve_side(fftd__side *sd, const char *name, int rank, const int64_t *embed,
    int64_t stride, int64_t dist, int64_t batch, const fftd__limits *lim,
    char *msg, size_t msglen)
{
	bool any_embed = false;
	for (int k = 0; k < rank; k++) {
		if (embed[k] < 0) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "%snembed[%d] = %lld: must not be negative", name,
			    k, (long long) embed[k]);
		}
		any_embed |= embed[k] != 0;
	}
	for (int k = 0; k < rank; k++) {
		sd->embed[k] = any_embed ? embed[k] : sd->n[k];
		// embed[0] only bounds the array; the others set the pitch.
		if (sd->embed[k] < sd->n[k]) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "%snembed[%d] = %lld is smaller than the size %lld "
			    "on that side",
			    name, k, (long long) sd->embed[k],
			    (long long) sd->n[k]);
		}
	}
	if (stride < 0 || dist < 0) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "%sstride and %sdist must not be negative", name, name);
	}
	sd->stride = stride ? stride : 1;
	// Extent of one transform, in elements: stride * pitch sum + 1, and
	// the default distance: stride * product of the embedded sizes.
	int64_t span = 0, pitch = 1, vol = 1;
	for (int k = rank - 1; k >= 0; k--) {
		int64_t t;
		if (__builtin_mul_overflow(sd->n[k] - 1, pitch, &t)
		    || __builtin_add_overflow(span, t, &span)
		    || __builtin_mul_overflow(pitch, sd->embed[k], &pitch)
		    || __builtin_mul_overflow(vol, sd->embed[k], &vol)) {
			return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
			    "%sput layout size overflows", name);
		}
	}
	int64_t one;
	if (__builtin_mul_overflow(span, sd->stride, &one)
	    || __builtin_mul_overflow(vol, sd->stride, &vol)) {
		return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
		    "%sput layout size overflows", name);
	}
	sd->dist = dist ? dist : vol;
	int64_t last;
	if (__builtin_mul_overflow(batch - 1, sd->dist, &last)
	    || __builtin_add_overflow(last, one, &sd->elems)
	    || __builtin_add_overflow(sd->elems, 1, &sd->elems)) {
		return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
		    "%sput layout size overflows", name);
	}
	if (__builtin_mul_overflow(
	        (uint64_t) sd->elems, (uint64_t) sd->elem_size, &sd->bytes)) {
		return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
		    "%sput byte count overflows", name);
	}
	if (lim != NULL && lim->max_request_bytes
	    && sd->bytes > lim->max_request_bytes) {
		return fftd__errmsg(FFTD_ELIMIT, msg, msglen,
		    "%sput is %llu bytes, over the limit of %llu", name,
		    (unsigned long long) sd->bytes,
		    (unsigned long long) lim->max_request_bytes);
	}
	bool packed = sd->stride == 1;
	for (int k = 1; k < rank; k++) {
		packed &= sd->embed[k] == sd->n[k];
	}
	// The default distance spans embed[0] rows: only embed[0] == n[0]
	// leaves no gap between transforms.
	sd->dense = packed
	    && (batch == 1 || (sd->dist == vol && sd->embed[0] == sd->n[0]));
	return FFTD_OK;
}

int
fftd__shape_resolve(const fftd_plan_desc *d, const fftd__limits *lim,
    fftd__shape *s, char *msg, size_t msglen)
{
	if (msg != NULL && msglen > 0) {
		msg[0] = '\0';
	}
	if (d == NULL || s == NULL) {
		return fftd__errmsg(
		    FFTD_EINVAL, msg, msglen, "no plan description");
	}
	memset(s, 0, sizeof(*s));
	if (d->rank < 1 || d->rank > FFTD_MAX_RANK) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "rank = %d: must be 1, 2 or 3", d->rank);
	}
	if (lim != NULL && lim->max_rank
	    && (uint32_t) d->rank > lim->max_rank) {
		return fftd__errmsg(FFTD_ELIMIT, msg, msglen,
		    "rank = %d: over the limit of %u", d->rank, lim->max_rank);
	}
	if (d->kind != FFTD_C2C && d->kind != FFTD_R2C && d->kind != FFTD_C2R) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "kind = %d: unknown", (int) d->kind);
	}
	if (fftd__elem_size(d->precision, false) == 0) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "precision = %d: unknown", (int) d->precision);
	}
	// tolerance: a relative L2 error, so 0 (the precision's usual
	// accuracy) or a finite positive number.
	if (!(d->tolerance >= 0.0) || isinf(d->tolerance)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "tolerance = %g: must be 0 (the precision's usual "
		    "accuracy) "
		    "or a finite positive relative L2 error",
		    d->tolerance);
	}
	if (d->input != FFTD_INPUT_NATIVE && d->input != FFTD_INPUT_I8) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "input = %d: unknown (0 native, 1 int8)", (int) d->input);
	}
	if (d->direction != FFTD_FORWARD && d->direction != FFTD_INVERSE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "direction = %d: must be -1 (forward) or +1 (inverse)",
		    (int) d->direction);
	}
	if (d->kind == FFTD_R2C && d->direction != FFTD_FORWARD) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "R2C transforms are forward only");
	}
	if (d->kind == FFTD_C2R && d->direction != FFTD_INVERSE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "C2R transforms are inverse only");
	}
	// int8 input is sampled data (radio voltages): forward C2C and R2C.
	if (d->input == FFTD_INPUT_I8 && d->kind == FFTD_C2R) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "int8 input is for forward C2C and R2C; a C2R input is a "
		    "spectrum, which int8 cannot hold");
	}
	if (d->input == FFTD_INPUT_I8 && d->direction != FFTD_FORWARD) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "int8 input is for forward transforms of sampled data; "
		    "an inverse C2C takes a spectrum in the plan's precision");
	}
	if (d->norm != FFTD_NORM_NONE && d->norm != FFTD_NORM_BY_N
	    && d->norm != FFTD_NORM_ORTHO) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "norm = %d: unknown", (int) d->norm);
	}
	if (d->batch < 1) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "batch = %lld: must be at least 1", (long long) d->batch);
	}
	if (lim != NULL && lim->max_batch
	    && (uint64_t) d->batch > lim->max_batch) {
		return fftd__errmsg(FFTD_ELIMIT, msg, msglen,
		    "batch = %lld: over the limit of %llu",
		    (long long) d->batch, (unsigned long long) lim->max_batch);
	}
	s->rank      = d->rank;
	s->batch     = d->batch;
	s->kind      = d->kind;
	s->precision = d->precision;
	s->input     = d->input;
	s->direction = d->direction;
	s->norm      = d->norm;
	s->total     = 1;
	for (int k = 0; k < d->rank; k++) {
		if (d->n[k] < 1) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "n[%d] = %lld: sizes must be positive", k,
			    (long long) d->n[k]);
		}
		s->n[k] = d->n[k];
		if (__builtin_mul_overflow(s->total, d->n[k], &s->total)) {
			return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
			    "product of the sizes overflows");
		}
	}
	s->in.complex    = d->kind != FFTD_R2C;
	s->out.complex   = d->kind != FFTD_C2R;
	s->in.elem_size  = d->input == FFTD_INPUT_I8
	     ? (s->in.complex ? 2 : 1)
	     : fftd__elem_size(d->precision, s->in.complex);
	s->out.elem_size = fftd__elem_size(d->precision, s->out.complex);
	for (int k = 0; k < d->rank; k++) {
		s->in.n[k] = s->out.n[k] = d->n[k];
	}
	// The complex side of a real transform holds n/2+1 along the last axis.
	int last = d->rank - 1;
	if (d->kind == FFTD_R2C) {
		s->out.n[last] = d->n[last] / 2 + 1;
	} else if (d->kind == FFTD_C2R) {
		s->in.n[last] = d->n[last] / 2 + 1;
	}
	int rv = resolve_side(&s->in, "in", d->rank, d->inembed, d->istride,
	    d->idist, d->batch, lim, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	return resolve_side(&s->out, "out", d->rank, d->onembed, d->ostride,
	    d->odist, d->batch, lim, msg, msglen);
}

// fftd__in_reals counts the input extent's reals (layout.h), what a
// conversion of the input (int8 to the plan's precision) walks.
uint64_t
fftd__in_reals(const fftd__shape *s)
{
	return (uint64_t) s->in.elems * (s->in.complex ? 2 : 1);
}

int64_t
fftd__side_index(const fftd__side *sd, int rank, int64_t b, const int64_t *j)
{
	int64_t idx = 0;
	for (int k = 0; k < rank; k++) {
		idx = idx * sd->embed[k] + j[k];
	}
	return b * sd->dist + idx * sd->stride;
}

void
fftd__side_copy(
    void *dst, const void *src, const fftd__side *sd, int rank, int64_t batch)
{
	if (sd->dense) {
		memcpy(dst, src, (size_t) sd->bytes);
		return;
	}
	size_t      es               = sd->elem_size;
	char       *d                = dst;
	const char *s                = src;
	int64_t     n[FFTD_MAX_RANK] = { 1, 1, 1 };
	int64_t     p[FFTD_MAX_RANK] = { 0, 0, 0 }; // pitch of each axis
	int         off              = FFTD_MAX_RANK - rank; // pad to rank 3
	int64_t     pitch            = sd->stride;
	for (int k = rank - 1; k >= 0; k--) {
		n[k + off] = sd->n[k];
		p[k + off] = pitch;
		pitch *= sd->embed[k];
	}
	for (int64_t b = 0; b < batch; b++) {
		for (int64_t i0 = 0; i0 < n[0]; i0++) {
			for (int64_t i1 = 0; i1 < n[1]; i1++) {
				int64_t base
				    = b * sd->dist + i0 * p[0] + i1 * p[1];
				if (p[2] == 1) {
					memcpy(d + base * es, s + base * es,
					    (size_t) n[2] * es);
					continue;
				}
				for (int64_t i2 = 0; i2 < n[2]; i2++) {
					int64_t e = base + i2 * p[2];
					memcpy(d + e * es, s + e * es, es);
				}
			}
		}
	}
}

// side_key_copy copies a side field by field (fftd__shape_key_copy).
static void
side_key_copy(fftd__side *d, const fftd__side *s)
{
	d->complex   = s->complex;
	d->elem_size = s->elem_size;
	for (int k = 0; k < FFTD_MAX_RANK; k++) {
		d->n[k]     = s->n[k];
		d->embed[k] = s->embed[k];
	}
	d->stride = s->stride;
	d->dist   = s->dist;
	d->elems  = s->elems;
	d->bytes  = s->bytes;
	d->dense  = s->dense;
}

// fftd__shape_key_copy: see layout.h.
void
fftd__shape_key_copy(fftd__shape *d, const fftd__shape *s)
{
	memset(d, 0, sizeof(*d));
	d->rank = s->rank;
	for (int i = 0; i < FFTD_MAX_RANK; i++) {
		d->n[i] = s->n[i];
	}
	d->batch     = s->batch;
	d->kind      = s->kind;
	d->precision = s->precision;
	d->input     = s->input;
	d->direction = s->direction;
	d->norm      = s->norm;
	d->total     = s->total;
	side_key_copy(&d->in, &s->in);
	side_key_copy(&d->out, &s->out);
}

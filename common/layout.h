// SPDX-License-Identifier: MIT
//
// layout.h — PRIVATE to fftd (not installed). Validation and arithmetic of
// a plan's shape and FFTW advanced layout, shared by client and daemon so
// both compute the same byte counts.

#ifndef FFTD_COMMON_LAYOUT_H
#define FFTD_COMMON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"

// fftd__limits are the daemon's configured request limits.
typedef struct fftd__limits {
	uint64_t max_request_bytes; // per side (input or output payload)
	uint32_t max_rank;
	uint64_t max_batch;
} fftd__limits;

// fftd__side is one side (input or output) of a resolved layout.
typedef struct fftd__side {
	bool     complex;              // complex or real elements
	size_t   elem_size;            // bytes per element
	int64_t  n[FFTD_MAX_RANK];     // logical sizes on this side
	int64_t  embed[FFTD_MAX_RANK]; // embedded sizes (defaults applied)
	int64_t  stride;               // >= 1
	int64_t  dist;                 // >= 0
	int64_t  elems;                // extent: largest index + 1
	uint64_t bytes;                // elems * elem_size
	bool     dense;                // every element of the extent is used
} fftd__side;

// fftd__shape is a validated plan description with defaults applied.
typedef struct fftd__shape {
	int             rank;
	int64_t         n[FFTD_MAX_RANK]; // logical sizes
	int64_t         batch;
	fftd_kind       kind;
	fftd_precision  precision;
	fftd_input_type input; // in.elem_size is this type's (int8: 1 or 2)
	fftd_direction  direction;
	fftd_norm       norm;
	int64_t         total; // product of n (the N of 1/N)
	fftd__side      in, out;
} fftd__shape;

// fftd__shape_resolve validates *d against lim (NULL: no limits) and fills
// *s. On failure it returns FFTD_EINVAL, FFTD_EOVERFLOW or FFTD_ELIMIT and
// writes a one-line reason into msg. Nothing is allocated.
int fftd__shape_resolve(const fftd_plan_desc *d, const fftd__limits *lim,
    fftd__shape *s, char *msg, size_t msglen);

// fftd__side_index returns the element index of logical element j (rank
// indices) of transform b on side sd.
int64_t fftd__side_index(
    const fftd__side *sd, int rank, int64_t b, const int64_t *j);

// fftd__side_copy copies, for every transform of the batch, the elements of
// side sd's layout from src to dst (both arrays laid out as sd); elements
// outside the layout in dst are left alone. A dense side is one memcpy.
void fftd__side_copy(
    void *dst, const void *src, const fftd__side *sd, int rank, int64_t batch);

// fftd__in_reals returns how many reals (int8 values for an int8 input)
// the input side's extent holds: elems, twice for a complex side.
uint64_t fftd__in_reals(const fftd__shape *s);

// fftd__elem_size returns the size of one real (complex = false) or complex
// element of precision p, or 0 for an unknown precision.
size_t fftd__elem_size(fftd_precision p, bool complex);

// fftd__shape_key_copy copies s field by field into *d after zeroing it, so
// that padding bytes are zero and two copies of equal shapes compare (and
// hash) equal as bytes: the plan cache's and the speed table's keys.
void fftd__shape_key_copy(fftd__shape *d, const fftd__shape *s);

#endif // FFTD_COMMON_LAYOUT_H

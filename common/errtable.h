// SPDX-License-Identifier: MIT
//
// errtable.h — PRIVATE to fftd (not installed). The error table of
// accuracy-aware "auto" (issue 18 item 5): for each algorithm the daemon
// serves, at each computing precision, an upper bound of the relative L2
// error of one transform as a function of its size. Pure arithmetic, in
// common/ so that the daemon chooses by it and fftctl info prints the same
// table. The daemon's choice and speed table are daemon/algo_table.c's.

#ifndef FFTD_COMMON_ERRTABLE_H
#define FFTD_COMMON_ERRTABLE_H

#include <stdint.h>

#include "fftd.h"

// fftd__err_row is one row of the error table: algorithm `algo` of
// backend `backend` computing at precision `compute`. Its bound for a
// transform of N points is c * u * L^p with u the unit roundoff of
// `compute` and L = max(1, ceil(log2 N)) (errtable.c says where each c
// and p come from), plus the conversions' roundings when the data's
// precision is higher (fftd__err_bound).
typedef struct fftd__err_row {
	const char    *algo;    // "fftw", "cufft", "tc16", "split16"
	const char    *backend; // "fftw" or "cuda"
	fftd_precision compute; // precision the algorithm computes in
	double         c;       // constant of the bound
	double         p;       // power of L in the bound (0.5 or 1)
} fftd__err_row;

// fftd__err_rows is the table; fftd__err_nrows its length.
extern const fftd__err_row fftd__err_rows[];
extern const int           fftd__err_nrows;

// fftd__err_unit is the unit roundoff of precision p (2^-53, 2^-24,
// 2^-11), or 1 for an unknown one.
double fftd__err_unit(fftd_precision p);

// fftd__err_prec_rank orders precisions by accuracy: f16 0, f32 1, f64 2
// (-1 unknown).
int fftd__err_prec_rank(fftd_precision p);

// fftd__err_bound is row r's bound of the relative L2 error of one
// transform of `points` points (the product of its sizes) of data stored
// in precision `data` (>= r->compute): the algorithm's own c * u * L^p,
// plus, when the data is converted to r->compute on the way in, that
// rounding (u of compute: each element's relative error is at most u, and
// the DFT is sqrt(N) times a unitary map, so the output's relative L2
// error from it is at most u) and one more u of compute for a norm's
// scale pass there, plus the output's rounding to `data` (u of data; the
// scale pass of unconverted data is one such rounding). Increasing in
// points. Returns 1 for a row that cannot serve `data` (compute above it).
double fftd__err_bound(
    const fftd__err_row *r, fftd_precision data, int64_t points);

// fftd__err_name writes into out the name the daemon reports for row r
// run on data of precision `data` (fftd_plan_algorithm): the algorithm's
// own name when it computes at the data's precision or is fixed to one
// (tc16, split16), else the name with the computing precision
// ("cufft-f32", "fftw-f32"). Returns out.
const char *fftd__err_name(
    const fftd__err_row *r, fftd_precision data, char out[16]);

// fftd__err_key writes into out the name the backend plans row r under
// for data of precision `data`: the reported name, except that tc16 and
// split16 on data wider than their own (f32 or f64 through tc16, f64
// through split16) are "tc16-conv" and "split16-conv", so that naming
// "tc16" for f32 data stays refused as before. Returns out.
const char *fftd__err_key(
    const fftd__err_row *r, fftd_precision data, char out[16]);

#endif // FFTD_COMMON_ERRTABLE_H

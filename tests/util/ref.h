// SPDX-License-Identifier: MIT
//
// ref.h — PRIVATE to fftd's tests. The reference transform and the
// comparison helpers every test uses (unit, integration, GPU, accuracy):
// deterministic input, poisoned output, a long double FFTW reference of the
// whole batch in any fftd layout, and the checks (relative L2 error against
// a documented bound, unwritten layout elements, non-zero gaps).
//
// Arrays are always laid out as one side of a shape (fftd__side): element
// indices follow fftd__side_index, complex elements are (re, im) pairs,
// f16 values are IEEE binary16 bit patterns (uint16_t).

#ifndef FFTD_TESTS_REF_H
#define FFTD_TESTS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

// fftd_ref_fill fills every element of side sd's extent (gaps included)
// with uniform [-1, 1] values of precision p (f16 as binary16 bits), the
// same values for the same seed on every machine.
void fftd_ref_fill(
    void *buf, const fftd__side *sd, fftd_precision p, uint64_t seed);

// fftd_ref_fill_input fills the input extent of s like fftd_ref_fill and,
// for C2R, makes it a valid Hermitian half-spectrum (fftd_ref_hermitian):
// use it for every test input, since C2R of a non-Hermitian input depends
// on the algorithm and no two implementations need agree on it.
void fftd_ref_fill_input(void *in, const fftd__shape *s, uint64_t seed);

// fftd_ref_hermitian makes the C2R input in (laid out as s->in, precision
// s->precision) the half-spectrum of a real signal: on the planes whose last
// index is its own mirror (0, and n/2 for even n) each element and its
// mirror (-k mod n in every dimension) become conjugates, and elements that
// are their own mirror become real. Does nothing for C2C and R2C.
void fftd_ref_hermitian(const fftd__shape *s, void *in);

// fftd_ref_poison fills n bytes with 0xFF, a NaN in every precision (f64,
// f32, f16), so that output elements a backend forgot to write show up in
// fftd_ref_unwritten and as a NaN error.
void fftd_ref_poison(void *buf, size_t n);

// fftd_ref_transform computes the whole batch of s on in (laid out as
// s->in, precision s->precision; in is not changed) in long double with
// FFTW (guru64 interface, FFTW_ESTIMATE) and applies s->norm. It returns a
// malloc'd array of s->out.elems elements laid out like s->out (complex as
// 2 long doubles, real as 1), gaps zero; the caller frees it. NULL on
// allocation or planning failure.
long double *fftd_ref_transform(const fftd__shape *s, const void *in);

// fftd_ref_rel_l2 is the relative L2 error sqrt(sum |out-ref|^2 / sum
// |ref|^2) over the output layout's elements only (out in s->precision). If
// the reference is all zero it returns the absolute L2 norm of out. A NaN
// or Inf in out makes it NaN or Inf (which fails any bound).
double fftd_ref_rel_l2(
    const fftd__shape *s, const void *out, const long double *ref);

// fftd_ref_rel_l2_ld is fftd_ref_rel_l2 with x in long double (laid out as
// fftd_ref_transform's result): for comparing two references.
double fftd_ref_rel_l2_ld(
    const fftd__shape *s, const long double *x, const long double *ref);

// fftd_ref_unwritten returns the number of output-layout elements of out
// that are NaN or Inf (the 0xFF poison is a NaN), 0 when all were written.
size_t fftd_ref_unwritten(const fftd__shape *s, const void *out);

// fftd_ref_gaps_nonzero returns the number of elements of the output
// extent that lie outside the output layout and are not all-zero bytes
// (a backend must zero them).
size_t fftd_ref_gaps_nonzero(const fftd__shape *s, const void *out);

// fftd_ref_store rounds a long double array laid out as side sd (as from
// fftd_ref_transform) to precision p into dst, every element of the extent.
void fftd_ref_store(
    void *dst, const fftd__side *sd, fftd_precision p, const long double *src);

// fftd_ref_bound is the largest relative L2 error a correct transform of s
// may show: c * eps * L, with L = max(1, log2 N), N = s->total, eps the
// unit roundoff of s->precision:
//   f64: eps 2^-53, c = 16  ->  1.8e-15 L  (1.8e-14 at N = 1024)
//   f32: eps 2^-24, c = 16  ->  9.5e-7 L   (9.5e-6 at N = 1024)
//   f16: eps 2^-11, c = 2   ->  9.8e-4 L, but at least 1e-2
//                               (1.2e-2 at N = 4096, 2e-2 at N = 2^20)
// Why: an FFT's error grows like eps * sqrt(L) on average and eps * L at
// worst; the input's rounding is not counted (the reference reads the same
// rounded input), the output's adds ~0.3 eps. FFTW stays below 0.5 eps L
// (3% of the bound) on every layout of test_backend_fftw, primes and
// Bluestein sizes included; c = 16 leaves room for GPU libraries and our
// own kernels (split16 must meet the f32 bound) without letting real bugs
// through: a wrong sign, scale or twiddle gives errors of order 1, and one
// wrong element in M outputs gives ~1/sqrt(M), above the f64 and f32 bounds
// for every size tested. f16 data is stored in binary16 and computed in
// fp16 (cuFFT) or fp16 products with fp32 sums (tc16): 1e-3..5e-3 is
// normal there, hence the 1e-2 floor; sizes are powers of two, so the
// constant can be smaller.
double fftd_ref_bound(const fftd__shape *s);

// fftd_ref_f16_to_f32 converts an IEEE binary16 bit pattern to float
// (exact; subnormals, Inf and NaN included).
float fftd_ref_f16_to_f32(uint16_t h);

// fftd_ref_f32_to_f16 converts a float to binary16 bits, rounding to
// nearest even; overflow gives Inf, NaN stays NaN (quiet).
uint16_t fftd_ref_f32_to_f16(float f);

#endif // FFTD_TESTS_REF_H

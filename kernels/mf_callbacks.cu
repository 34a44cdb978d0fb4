// SPDX-License-Identifier: MIT
//
// mf_callbacks.cu — the matched-filter bank's product and store as cuFFT
// LTO callbacks, measured by bench/cufft_lto.c and not used by the bank
// (mf_lto.h says why). Compiled to LTO-IR only
// (nvcc -dlto, see the Makefile; never into libfftd_kernels.a), embedded
// with bin2c and handed to cufftXtSetJITCallback, which links them into
// cuFFT's own kernels at plan time: the product conj(h) D / S is formed as
// cuFFT's first pass loads its input (from the templates, not from the
// in-place buffer), and the last pass stores only the
// searched samples. So the bank's only passes over memory are the
// template read, cuFFT's own intermediate passes, one store and one scan
// of the searched samples — no product array, no full-length output.
// (cuFFT LTO callbacks: cuFFT docs, "LTO load and store callback
// routines", CUDA 12.6+; the callbacks' layout: mf_kernels.h,
// fftd__mf_cb_params in mf_lto.h.) The callbacks are C++ functions, named to
// cuFFT by their unmangled names: cuFFT 12.0 (CUDA 13) finds no extern "C"
// callback (its plan fails with CUFFT_INTERNAL_ERROR), as seen on the lent
// H100.

#include <cufftXt.h>
#include <stdint.h>

#include "mf_lto.h"

// fftd__mf_cb_load returns input element offset = b n + k of the batch:
// conj(h_bk) w_k inside [kmin, kmax) for b < nb, else 0 (the negative
// frequencies and the bins outside the band, and a short last batch's
// missing templates). 32-bit index arithmetic: nb n < 2^31.
__device__ cufftComplex
fftd__mf_cb_load(void *in, unsigned long long offset, void *info, void *shared)
{
	(void) in; // in place: the input is the callback's, from p->tpl
	(void) shared;
	const fftd__mf_cb_params *p = (const fftd__mf_cb_params *) info;
	unsigned                  o = (unsigned) offset;
	unsigned                  b = o / p->n;
	unsigned                  k = o - b * p->n;
	cufftComplex              r = { 0.0f, 0.0f };
	if (b < p->nb && k >= p->kmin && k < p->kmax) {
		size_t e = (size_t) b * p->nbins + k;
		float2 h;
		if (p->aligned8) {
			h = ((const float2 *) p->tpl)[e];
		} else {
			h = make_float2(((const float *) p->tpl)[2 * e],
			    ((const float *) p->tpl)[2 * e + 1]);
		}
		float2 w = ((const float2 *) p->w)[k];
		r.x      = h.x * w.x + h.y * w.y;
		r.y      = h.x * w.y - h.y * w.x;
	}
	return r;
}

// fftd__mf_cb_store keeps output sample t of template b when t is searched
// (t_begin <= t < t_begin + width) and b < nb; the rest is dropped.
__device__ void
fftd__mf_cb_store(void *out, unsigned long long offset, cufftComplex e,
    void *info, void *shared)
{
	(void) out;
	(void) shared;
	const fftd__mf_cb_params *p = (const fftd__mf_cb_params *) info;
	unsigned                  o = (unsigned) offset;
	unsigned                  b = o / p->n;
	unsigned                  i = o - b * p->n - p->t_begin;
	if (b < p->nb && i < p->width) {
		((float2 *) p->win)[(size_t) b * p->width + i]
		    = make_float2(e.x, e.y);
	}
}

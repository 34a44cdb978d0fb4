// SPDX-License-Identifier: MIT
//
// mf_lto.h — PRIVATE to fftd. The matched-filter bank's product and
// searched-sample store as cuFFT LTO callbacks (kernels/mf_callbacks.cu),
// kept for bench/cufft_lto.c, which measures them against cuFFT without
// callbacks: on the lent H100 (cuFFT 12.0, CUDA 13) a plan with them runs
// at about half the speed of the plain plan, slower than a separate
// product pass, so the bank's fused engine (mf_fused.cu) does not use
// them.

#ifndef FFTD_KERNELS_MF_LTO_H
#define FFTD_KERNELS_MF_LTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// fftd__mf_cb_params is what the callbacks read (their callerInfo, in
// device memory): the batched inverse C2C of nb templates of n samples
// loads, at input offset b n + k, conj(h_bk) w_k for k in [kmin, kmax) and
// b < nb (h_b at tpl + b nbins complex; aligned8: whether tpl is 8-byte
// aligned), 0 elsewhere; it stores sample t of template b only for t in
// [t_begin, t_begin + width), to win + b width + (t - t_begin). 32-bit
// offsets: nb n < 2^31.
typedef struct fftd__mf_cb_params {
	const void *tpl; // the batch's first template, complex f32
	const void *w;   // w_k = D_k / S_k, nbins complex f32
	void       *win; // nb x width complex f32
	uint32_t    n, nbins, kmin, kmax, nb, t_begin, width, aligned8;
} fftd__mf_cb_params;

// The callbacks' LTO-IR (build/.../mf_callbacks_lto.c, made by bin2c from
// nvcc -dlto output; 64-bit words keep it aligned), its size in bytes, and
// their names for cufftXtSetJITCallback.
extern const unsigned long long fftd__mf_cb_lto[];
extern const size_t             fftd__mf_cb_lto_size;
#define FFTD__MF_CB_LOAD "fftd__mf_cb_load"
#define FFTD__MF_CB_STORE "fftd__mf_cb_store"

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_MF_LTO_H

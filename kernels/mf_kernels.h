// SPDX-License-Identifier: MIT
//
// mf_kernels.h — PRIVATE to fftd. The C ABI of the matched-filter bank's
// CUDA kernels (kernels/mf.cu), which the cuda backend's bank
// (daemon/backends/cuda_mf.c) runs around cuFFT's batched inverse
// transform; daemon/mf.h defines what the bank computes. Plain C: streams
// travel as void * (a cudaStream_t), errors as int (a cudaError_t: 0 on
// success, cudaErrorInvalidValue for an unknown precision; errors during
// execution show at the next sync). Every call is asynchronous on stream.
// Precisions are fftd_kernels.h's codes (f64 or f32). Inputs (D, S, h) are
// read one real at a time, so they need only be aligned to their real type;
// q, the scratch, is the caller's cudaMalloc memory.
// (Not named mf.h: daemon/mf.h comes first on the daemon's include path.)

#ifndef FFTD_KERNELS_MF_KERNELS_H
#define FFTD_KERNELS_MF_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// FFTD__MF_NONE is the "nothing yet" value of the u64 minimum cells below
// (the caller sets them with a 0xFF memset).
#define FFTD__MF_NONE UINT64_MAX

// fftd__mf_check_inputs looks at bins k in [kmin, kmax) of the PSD S and
// the data D (N/2+1 complex) and lowers *bad (device memory, FFTD__MF_NONE
// before) to 2k for the first k whose S_k is not positive and finite, or
// 2k+1 when S_k is fine but D_k is not finite (the fftw engine's order).
int fftd__mf_check_inputs(const void *data, const void *psd, int precision,
    int64_t kmin, int64_t kmax, uint64_t *bad, void *stream);

// fftd__mf_sigma2 writes hh[j] = sum over k in [kmin, kmax) of
// |h_jk|^2 (1 / S_k), in double, for the count templates from templates
// (nbins complex each, contiguous): one block per template, a block
// reduction. sigma_j^2 = 4 df hh[j]; a non-finite hh flags the template.
int fftd__mf_sigma2(const void *templates, const void *psd, int precision,
    int64_t nbins, int64_t kmin, int64_t kmax, int64_t count, double *hh,
    void *stream);

// fftd__mf_product fills q (nb x n complex of precision, template b at
// b n): q[b][k] = conj(h_bk) D_k / S_k for k in [kmin, kmax), formed in
// double as (D_k / S_k) conj(h_bk) and rounded once, and 0 for every other
// k in [0, n) (PyCBC's q: the negative frequencies are zero). templates is
// the batch's first template; templates are n/2+1 complex apart.
int fftd__mf_product(void *q, const void *data, const void *psd,
    const void *templates, int precision, int64_t n, int64_t kmin, int64_t kmax,
    int nb, void *stream);

// fftd__mf_scan_args describes one scan of a transformed batch: q holds
// z_b(t) / (4 df) (cuFFT's unnormalised inverse of the product); rho_b(t)
// = |q_b(t)| norm_b over t in [t_begin, t_end), with norm_b = 4 df /
// sigma_b (0 when sigma_b = 0), sigma_b = sqrt(4 df hh[b]), all in double
// as the fftw engine computes them. Per template b, slot 0 is its peak and
// slot 1 + w its window w, [t_begin + w cluster, t_begin + (w + 1)
// cluster) cut at t_end (nwin windows; 0: peaks only). For each slot, key
// holds the bits of its largest rho (non-negative doubles order as their
// bits; 0 before), t its first sample with that rho (FFTD__MF_NONE before)
// and z (2 doubles) q at that sample. A rho that is not finite lowers
// *nonfinite (FFTD__MF_NONE before) to b. Slots of b start at b (1 +
// nwin).
typedef struct fftd__mf_scan_args {
	const void   *q;
	int           precision;
	int64_t       n;
	int           nb;
	const double *hh;    // nb: this batch's sums (fftd__mf_sigma2)
	double        scale; // 4 df
	int64_t       t_begin, t_end, cluster, nwin;
	uint64_t     *key, *t; // nb (1 + nwin) each, set as said above
	double       *z;       // 2 nb (1 + nwin)
	uint64_t     *nonfinite;
} fftd__mf_scan_args;

// fftd__mf_scan runs the scan: a pass for the largest rho of every slot
// (warp maxima, one atomicMax per warp and slot), a pass for its first
// sample (rho recomputed bit for bit, atomicMin), and a pass reading z at
// the chosen samples.
int fftd__mf_scan(const fftd__mf_scan_args *a, void *stream);

// fftd__mf_series writes rho_b(t), t in [t_begin, t_end), of template b of
// the scan a into row (t_end - t_begin reals of a's precision: f32 rounds
// the double rho once).
int fftd__mf_series(
    const fftd__mf_scan_args *a, int b, void *row, void *stream);

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_MF_KERNELS_H

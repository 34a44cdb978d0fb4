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

// fftd__mf_sigma2 writes hh[j] = sigma_j^2 = scale (4 df) times the sum
// over k in [kmin, kmax) of |h_jk|^2 (1 / S_k), in double, for the count
// templates from templates (nbins complex each, contiguous): one block per
// template, a block reduction. A non-finite sigma^2 flags the template.
// Every engine keeps sigma^2 so (mf_rho.cuh, fftd__mf_sigmasq).
int fftd__mf_sigma2(const void *templates, const void *psd, int precision,
    int64_t nbins, int64_t kmin, int64_t kmax, int64_t count, double scale,
    double *hh, void *stream);

// fftd__mf_product fills q (nb x n complex of precision, template b at
// b n): q[b][k] = conj(h_bk) D_k / S_k for k in [kmin, kmax), formed in
// double as (D_k / S_k) conj(h_bk) and rounded once, and 0 for every other
// k in [0, n) (PyCBC's q: the negative frequencies are zero). templates is
// the batch's first template; templates are n/2+1 complex apart.
int fftd__mf_product(void *q, const void *data, const void *psd,
    const void *templates, int precision, int64_t n, int64_t kmin, int64_t kmax,
    int nb, void *stream);

// fftd__mf_scan_args describes one scan of a transformed batch: q holds
// z_b(t) / (4 df) (cuFFT's unnormalised inverse of the product), row b
// at q + b ld holding samples q0 .. q0 + ld - 1 (the plain engine: ld = n,
// q0 = 0; the fused one: the searched samples only); rho_b(t)
// = |q_b(t)| norm_b over t in [t_begin, t_end), with norm_b = 4 df /
// sigma_b (0 when sigma_b = 0), sigma_b = sqrt(4 df hh[b]), all in double
// as the fftw engine computes them. Per template b, slot 0 is its peak and
// slot 1 + w its window w, [t_begin + w cluster, t_begin + (w + 1)
// cluster) cut at t_end (nwin windows; 0: peaks only). For each slot, key
// holds the bits of its largest rho (non-negative doubles order as their
// bits; 0 before), t its first sample with that rho (FFTD__MF_NONE before)
// and z (2 doubles) q at that sample. A rho that is not finite lowers
// *nonfinite (FFTD__MF_NONE before) to b. Slots of b start at b (1 +
// nwin). With a threshold > 0, the fourstep engine's gather may leave a
// window's slot as before (key 0) when its rho is below threshold: it
// skips windows whose f32 key puts rho below 0.99 threshold (the f32
// |z|^2 is within ~1e-6 of the double one, so the margin is 1e4 times
// the error), the host keeping only windows above threshold.
typedef struct fftd__mf_scan_args {
	const void   *q;
	int64_t       ld; // complex samples per template row of q
	int64_t       q0; // the sample a row of q starts at
	int           precision;
	int64_t       n;
	int           nb;
	const double *hh;    // nb: this batch's sigma^2 (fftd__mf_sigma2)
	double        scale; // 4 df
	int64_t       t_begin, t_end, cluster, nwin;
	double        threshold; // the triggers' rho threshold; 0: none
	uint64_t     *key, *t;   // nb (1 + nwin) each, set as said above
	double       *z;         // 2 nb (1 + nwin)
	uint64_t     *nonfinite;
	// added to the template index the gathers lower *nonfinite to: the
	// first template's index in the batch when a is a part of one (the
	// fourstep engine's parts), else 0
	int64_t b0;
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

// --- The fused engine (f32; kernels/mf_fused.cu) -----------------------
// Around cuFFT's plain batched inverse (its LTO callbacks were measured
// and rejected: bench/cufft_lto.c): one kernel reads each template once,
// for both the product and sigma; one scan pass reads each searched
// sample once.

// fftd__mf_weight writes w_k = D_k / S_k (in double, rounded once to f32)
// and is_k = 1 / S_k (double) for k in [kmin, kmax) of the f32 data D and
// PSD S.
int fftd__mf_weight(void *w, double *is, const void *data, const void *psd,
    int64_t kmin, int64_t kmax, void *stream);

// fftd__mf_product_sigma writes, for the nb templates from tpl (f32, nbins
// complex apart, 4-byte aligned), q[b][k] = conj(h_bk) w_k (f32) for k in
// [kmin, kmax) of q's rows (n complex apart; the caller zeroed the rest of
// q once) and hh[b] = sigma_b^2, scale times the sum over the same k of
// |h_bk|^2 is_k (double, summed in a fixed order: partial holds nb x
// FFTD__MF_CHUNKS(kmax - kmin) doubles of scratch); hh NULL: not written
// (sigma^2 given).
#define FFTD__MF_CHUNK 2048
#define FFTD__MF_CHUNKS(bins) (((bins) + FFTD__MF_CHUNK - 1) / FFTD__MF_CHUNK)
int fftd__mf_product_sigma(void *q, int64_t n, const void *tpl, int64_t nbins,
    const void *w, const double *is, int64_t kmin, int64_t kmax, int nb,
    double *partial, double scale, double *hh, void *stream);

// fftd__mf_scan_fused is the fused engine's scan of a (f32; row b of q at
// q + b ld holds samples q0 ..): one pass reads each searched sample once
// and keeps, per slot, the largest key (|q|^2 rounded toward zero to f32
// in the high word, ~i in the low word, i the sample's index in the
// searched span: the loudest sample, the first on ties) in fkey (nb (1 +
// nwin), zeroed by the caller); a second, tiny kernel turns each slot into
// a's key (rho's double bits, rho computed as the plain engine does), t
// and z, and lowers *nonfinite to b for a non-finite sample or rho.
// Samples whose |q|^2 agree to f32 rounding count as ties, far below the
// f32 transform's own error.
int fftd__mf_scan_fused(
    const fftd__mf_scan_args *a, uint64_t *fkey, void *stream);

// fftd__mf_sum_partials sums partial (nb x chunks doubles, template b's at
// b chunks) in order and writes hh[b] = scale times the sum (sigma_b^2).
int fftd__mf_sum_partials(const double *partial, int chunks, int nb,
    double scale, double *hh, void *stream);

// fftd__mf_gather is scan_fused's second kernel alone: each slot's packed
// key in fkey turned into a's key, t and z (the fourstep engine's scan
// fills fkey itself).
int fftd__mf_gather(
    const fftd__mf_scan_args *a, const uint64_t *fkey, void *stream);

// --- The fourstep engine (f32; kernels/mf_fourstep.cu) ------------------
// Its own two-pass FFT: the product fused into the first pass, the scan
// into the second, for n = 2^12 .. 2^20.

// fftd__mf_fourstep_blocks is the number of sigma partials per template
// (first-pass blocks, or the one-pass kernel's cluster blocks, whichever
// is more) for n, or 0 when the engine has no shape for n.
int64_t fftd__mf_fourstep_blocks(int64_t n);

// fftd__mf_fourstep_table_bytes is the size of n's twiddle tables (0: no
// shape), which fftd__mf_fourstep_tables fills (device memory, 8-byte
// aligned).
size_t fftd__mf_fourstep_table_bytes(int64_t n);
int    fftd__mf_fourstep_tables(void *tab, int64_t n, void *stream);

// fftd__mf_fourstep_args is one batch: scan->nb templates from tpl (f32,
// nbins complex apart, 8-byte aligned), w and is as fftd__mf_weight made
// them, scratch nb x n complex (f32), partial nb x blocks doubles, hh the
// batch's nb sigma^2 (written, or with sigma 0 given: the first pass then
// sums none, the 1/S loads and f64 sums it would spend), fkey nb (1 +
// nwin) zeroed by the caller. The
// searched samples go to scan->q (row b at b ld, sample t at t - q0; q0 <=
// t_begin, 8-byte aligned) when it is not NULL (for fftd__mf_series);
// with NULL nothing is written but keys, and z at each winner is summed
// again from its row of the intermediate. The scan's results go to scan's
// key, t, z.
// FFTD__MF_MAX_PARTS bounds the parts of a fourstep batch
// (FFTD_MF_FOURSTEP_PARTS), so that the caller may keep an event a part.
#define FFTD__MF_MAX_PARTS 32

// FFTD__MF_SLOT_BYTES is one slot's share of the scan's region: its key,
// its sample and its z (two doubles).
#define FFTD__MF_SLOT_BYTES 32

// fftd__mf_part_slots gives where the templates [b0, b0 + nb) of a batch
// run in parts (part_done) keep their slots, `slots` (1 + nwin) a
// template, in the region from key (the device's, or its host copy): the
// part's FFTD__MF_SLOT_BYTES slots (b0) bytes in, laid out as a batch of
// nb of its own, its keys, then its samples, then its z.
static inline void
fftd__mf_part_slots(uint64_t *key, int64_t slots, int64_t b0, int64_t nb,
    uint64_t **pkey, uint64_t **pt, double **pz)
{
	uint64_t *k = key + FFTD__MF_SLOT_BYTES / 8 * slots * b0;
	*pkey       = k;
	*pt         = k + slots * nb;
	*pz         = (double *) (k + 2 * slots * nb);
}

typedef struct fftd__mf_fourstep_args {
	const fftd__mf_scan_args *scan;
	void                     *scratch;
	const void               *tpl;
	int64_t                   nbins;
	const void               *w;
	const double             *is;
	int64_t                   kmin, kmax;
	const void               *tab;
	double                   *partial, *hh;
	int                       sigma; // 1: sum sigma^2 into hh; 0: given
	uint64_t                 *fkey;
	// Two more streams (cudaStream_t) and events (cudaEvent_t, timing
	// disabled) of the caller's, or NULL: the batch then runs in parts,
	// their passes alternating between stream and stream2, each part's
	// sigma^2 and gather on stream3 once ev_part[p] marks its passes done;
	// forked from stream (ev_fork) and joined back into it (ev_join,
	// ev_join3).
	void *stream2, *stream3, *ev_fork, *ev_join, *ev_join3;
	void *ev_part[FFTD__MF_MAX_PARTS];
	// part_done, when not NULL, is called on the caller's thread once a
	// part's sigma^2 and gather are queued (its slots and hh final once
	// the stream reaches this point), parts in template order: b0 is its
	// first template within the batch, nb its count, stream its
	// cudaStream_t, on which the caller may queue the slots' copy. Returns
	// 0 or a cudaError_t, which ends the batch. The scan's key, t and z
	// must then be one region (t = key + S, z = t + S, S = nb (1 + nwin)
	// of the batch), and each part's slots are laid out as a batch's of
	// its own (fftd__mf_part_slots), so that one copy takes them; one
	// part is the whole batch laid out as usual.
	int (*part_done)(void *ctx, int b0, int nb, void *stream);
	void *ctx;
} fftd__mf_fourstep_args;

// fftd__mf_fourstep runs the batch in parts: for each, the first pass
// (product, sigma partials, column FFTs, four-step twiddle), the second
// pass (row FFTs, searched samples, keys), the partials' sum, the gather,
// then f->part_done; or, where n has a one-pass shape and
// FFTD_MF_CLUSTER=1 (read once; off by default, being slower on the H200:
// mf_cluster.cu), fftd__mf_cluster, then f->part_done for the whole batch.
int fftd__mf_fourstep(const fftd__mf_fourstep_args *f, void *stream);

// --- The fourstep engine's one-pass kernel (kernels/mf_cluster.cu) ------
// For the sizes where one thread-block cluster's shared memory holds a
// template's whole transform (2^14 .. 2^18): the product, the transform,
// the scan and the gather in one kernel, one cluster a template;
// fftd__mf_fourstep runs it in place of its two passes when asked
// (mf_fourstep.cu).

// fftd__mf_cluster_blocks is the blocks of a cluster (sigma partials per
// template) for n, or 0 when the kernel has no shape for n.
int fftd__mf_cluster_blocks(int64_t n);

// fftd__mf_cluster_table_bytes is the size of its twiddle table for n (0:
// no shape), which fftd__mf_cluster_tables fills (device memory, 8-byte
// aligned).
size_t fftd__mf_cluster_table_bytes(int64_t n);
int    fftd__mf_cluster_tables(void *tab, int64_t n, void *stream);

// fftd__mf_cluster runs f's batch as fftd__mf_fourstep does (the same
// arguments, checked there, and results; f->scratch, stream2 and the
// events unused; tab is
// the table fftd__mf_cluster_tables made): partial gets nb x
// fftd__mf_cluster_blocks(n) doubles, hh the sums, the scan's key, t and z
// the slots.
int fftd__mf_cluster(
    const fftd__mf_fourstep_args *f, const void *tab, void *stream);

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_MF_KERNELS_H

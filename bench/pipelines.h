// SPDX-License-Identifier: MIT
//
// pipelines.h — PRIVATE to bench/pipelines (issue 16, item 5): the
// matched-filter bank's templates per second through (a) fftd's bank on
// resident arrays, (b) fftd's plain FFT path driven from the host, (c)
// in-process cuFFT, (d) PyCBC on one CPU core, on the same synthetic
// inputs. This header is what the program's files share: the inputs, one
// case's figures, and the calls of each case family. pipelines_cuda.cu
// includes it too (C++), hence the extern "C" and plain C types only.
//
// Files: pipelines.c (options, the run, checks, table, JSON),
// pipelines_data.c (the synthetic inputs, byte counts, host helpers),
// pipelines_fftd.c (a, b), pipelines_cuda.cu (c, the device copy rate),
// pipelines_pycbc.c (d: runs bench/pycbc_mf.py).

#ifndef FFTD_BENCH_PIPELINES_H
#define FFTD_BENCH_PIPELINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// PL_SAMPLE_RATE is the synthetic series' sample rate, Hz (delta_f =
// PL_SAMPLE_RATE / N); PL_F_LOWER the low-frequency cutoff (kmin).
#define PL_SAMPLE_RATE 4096.0
#define PL_F_LOWER 20.0

// pl_inputs is one size's data, PSD and bank, f32, in PyCBC's scaled units
// (strain times 2^69, the PSD times 2^138: values near 1, no underflow).
// Spectra have nbins = N/2+1 bins, complex as (re, im) pairs.
typedef struct pl_inputs {
	int64_t  n, nbins;
	int64_t  kmin, kmax;     // bins used: [kmin, kmax)
	int64_t  t_begin, t_end; // samples searched: the middle half
	int64_t  cluster;        // trigger window, samples
	double   delta_f, threshold;
	int64_t  count;  // templates in the bank
	int64_t  inject; // the template whose signal is added to the data
	uint64_t seed;
	float   *data; // nbins complex: colored noise plus the injection
	float   *psd;  // nbins, > 0
	float   *bank; // count x nbins complex; zero below kmin and at N/2
} pl_inputs;

// pl_peak is one template's peak over [t_begin, t_end): rho and its sample.
typedef struct pl_peak {
	double  rho;
	int64_t t;
} pl_peak;

// pl_case is one case's figures for one size.
typedef struct pl_case {
	int      ran;       // 1: measured; 0: skipped or failed (see note)
	int      failed;    // 1: an error (not a skip)
	char     note[256]; // why it did not run, or what to know
	int64_t  templates; // per repetition
	int      reps;
	double   sec_median, sec_min, sec_max; // per repetition
	double   tps;                          // templates / s (median)
	double   bytes;                        // per template; 0: not counted
	int64_t  triggers;                     // (a): found per pass
	pl_peak *peaks;                        // templates' peaks, or NULL
	int64_t  npeaks;
} pl_case;

// pl_inputs_make fills *in for N = n with count templates from seed
// (fresh random inputs: the caller seeds from the clock and prints it).
// Returns 0, or -1 when memory runs out.
int pl_inputs_make(pl_inputs *in, int64_t n, int64_t count, uint64_t seed);

// pl_inputs_free frees the arrays of *in.
void pl_inputs_free(pl_inputs *in);

// pl_weights computes, once per size, what every template's product uses:
// w_k = D_k / S_k (nbins complex) and inv_k = 1 / S_k (nbins), zero
// outside [kmin, kmax). Returns 0 or -1 (memory).
int pl_weights(const pl_inputs *in, float **w, float **inv);

// bench_mf_design_bytes is the bytes one template costs the bank by its
// engine's design (FFTD_MF_ENGINE, as the daemon reads it): see
// pipelines_data.c.
double bench_mf_design_bytes(
    int64_t n, int64_t kmin, int64_t kmax, int64_t t_begin, int64_t t_end);

// pl_cuda_passes_bytes is what case (c) moves per template: the product
// (h read over [kmin, kmax), q written over N), cuFFT's two read+write
// passes, the peak kernel's read of [t_begin, t_end).
double pl_cuda_passes_bytes(const pl_inputs *in);

// (a) and (c) repeat until they have timed at least PL_MIN_SECONDS and
// at least reps repetitions, at most PL_MAX_REPS (pl_reps_done): a
// 1,024-template call at 2^17 takes ~1.5 ms, and five of them (the old
// rule) spanned less than the host's and the GPU's changes of state, so
// that (a)'s median swung +-20% between runs on the lent H200.
#define PL_MIN_SECONDS 0.5
#define PL_MAX_REPS 400

// pl_reps_done says whether a case that has timed r repetitions, total
// seconds in all, may stop (see PL_MIN_SECONDS).
int pl_reps_done(int r, int reps, double total);

// pl_case_times fills c's median, min, max and tps from reps times (s) of
// c->templates templates each.
void pl_case_times(pl_case *c, double *sec, int reps);

// pl_now is CLOCK_MONOTONIC in seconds.
double pl_now(void);

// --- case (c) and the copy rate: pipelines_cuda.cu (WITH_CUDA builds)

// pl_cuda_device writes the first CUDA device's name into name and returns
// 1, or returns 0 (no device or no driver) with the reason in name.
int pl_cuda_device(char *name, size_t len);

// pl_cuda_versions writes the CUDA runtime and cuFFT versions.
void pl_cuda_versions(int *runtime, int *cufft);

// pl_cuda_copy_rate measures cudaMemcpy device to device of `bytes`:
// bytes read + written per second, the median of reps after warm-up.
// Returns 0, or -1 with err filled.
int pl_cuda_copy_rate(
    size_t bytes, int reps, double *bps, char *err, size_t errlen);

// pl_cuda_bank runs case (c) on in: the bank resident on device 0, a
// product kernel (q = conj(h) w, sigma^2 summed on the way), batched cuFFT
// C2C inverse of `batch` templates in place, a peak kernel (max |z|^2 and
// its first sample per template, one pass, one atomic per block); the
// whole bank per repetition, CUDA events, one warm-up, then repetitions
// as PL_MIN_SECONDS says. c gets
// the times and every template's peak. Returns 0, or -1 with c->note.
int pl_cuda_bank(const pl_inputs *in, int batch, int reps, pl_case *c);

#ifdef __cplusplus
}
#endif

// --- cases (a), (b), (d): C only (libfftd)
#ifndef __cplusplus
#include "fftd.h"

// pl_fftd_bank runs case (a): data, PSD and bank in resident arrays of the
// client's daemon, fftd_mf_bank over the whole bank in slices of `slice`
// templates, `inflight` slices requested at a time (threads sharing the
// client, 1..8), one warm-up, then repetitions as PL_MIN_SECONDS says;
// c gets every template's peak. sigmasq_given: the warm-up stores sigma^2
// in an array (FFTD_MF_SIGMASQ_STORE) and the timed calls use it (_USE),
// as a search of many segments against one PSD does.
int pl_fftd_bank(fftd_client *cl, const pl_inputs *in, int64_t slice,
    int inflight, int reps, bool sigmasq_given, pl_case *c);

// pl_fftd_plain runs case (b) on the bank's first `count` templates: q
// formed on the host into an fftd_buffer, a C2C inverse plan of `batch`
// per fftd_execute, z read back from a second buffer, the peak found on
// the host.
int pl_fftd_plain(fftd_client *cl, const pl_inputs *in, int64_t count,
    int batch, int reps, pl_case *c);

// pl_pycbc runs case (d): writes the first `count` templates, the data and
// the PSD under a temporary folder, runs `taskset -c 0 python script`
// there and reads its figures and peaks. version gets PyCBC's version.
int pl_pycbc(const char *python, const char *script, const pl_inputs *in,
    int64_t count, pl_case *c, char *version, size_t vlen);
#endif

#endif // FFTD_BENCH_PIPELINES_H

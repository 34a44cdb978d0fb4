// SPDX-License-Identifier: MIT
//
// kernels_vkfft.h — PRIVATE to bench/kernels. A small C interface to VkFFT's
// CUDA backend (VKFFT_BACKEND=1, github.com/DTolm/VkFFT, header-only) so that
// bench/kernels can time it beside cuFFT and fftd's kernels in one run:
// plan a forward C2C or R2C transform of one shape and precision on given
// device buffers, time launches with CUDA events, run it once for the
// accuracy check. bench/kernels_vkfft.cu implements it; built without
// VKFFT_DIR (make bench-kernels VKFFT_DIR=/path/to/VkFFT) every call answers
// "not built" and bench_vk_version returns 0.
//
// Precisions: half = 1 is VkFFT's halfPrecision (fp16 storage, fp32
// arithmetic: __half2 complex, __half real); half = 0 is fp32 (float2,
// float). Layouts are cuFFT's: batches contiguous, dims row-major, R2C out of
// place from prod(dims) reals to prod(dims[0..rank-2]) * (dims[rank-1]/2 + 1)
// complex points per transform. Forward is exp(-2 pi i jk/n), unnormalized.
//
// Threads: one thread at a time; the plan runs on the CUDA context current
// on the calling thread (the runtime's primary context of the device).

#ifndef FFTD_BENCH_KERNELS_VKFFT_H
#define FFTD_BENCH_KERNELS_VKFFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_vk bench_vk;

// bench_vk_version returns VkFFT's version as X.XX.XX in one number (10304
// for 1.3.4), or 0 when bench/kernels was built without VkFFT.
int bench_vk_version(void);

// bench_vk_plan makes *plan for batch forward transforms of rank 1..3 with
// dims[0..rank-1] (row-major, the last contiguous), R2C when r2c is
// non-zero, else C2C, in fp16 storage (half) or fp32, reading in and writing
// out (device pointers, distinct, each at least the shape's bytes) on stream
// (a cudaStream_t; NULL: the default stream). VkFFT compiles its kernels
// with NVRTC here (seconds). Returns 0, or non-zero with the reason in
// msg[0..len) (VkFFT's error code, a CUDA error, "not built"); *plan is NULL
// then.
int bench_vk_plan(bench_vk **plan, int rank, const int64_t *dims, int64_t batch,
    int r2c, int half, const void *in, void *out, void *stream, char *msg,
    size_t len);

// bench_vk_time launches the transform 5 times (warm-up), then runs times,
// each between two CUDA events on the plan's stream, and stores the median
// in *ms (milliseconds per transform launch). Returns 0 or non-zero with
// msg filled (a launch or CUDA error).
int bench_vk_time(bench_vk *plan, int runs, double *ms, char *msg, size_t len);

// bench_vk_exec runs the transform once and waits for it (for the accuracy
// check: out then holds the result). Returns 0 or non-zero with msg filled.
int bench_vk_exec(bench_vk *plan, char *msg, size_t len);

// bench_vk_destroy frees the plan (VkFFT's application, its LUTs and
// temporary buffer); NULL is fine.
void bench_vk_destroy(bench_vk *plan);

#ifdef __cplusplus
}
#endif

#endif // FFTD_BENCH_KERNELS_VKFFT_H

// SPDX-License-Identifier: MIT
//
// fftd_kernels.h — PRIVATE to fftd. The C ABI of the small CUDA helper
// kernels the cuda backend runs around cuFFT (kernels/scale.cu). Usable
// from plain C: no CUDA types here, streams travel as void *
// (a cudaStream_t), errors as int (a cudaError_t). Our FFT kernels (tc16,
// split16) have their own header.

#ifndef FFTD_KERNELS_FFTD_KERNELS_H
#define FFTD_KERNELS_FFTD_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Precision codes, equal to fftd_precision's values (fftd.h is not
// included so that nvcc needs no client headers; cuda_impl.h checks they
// agree).
enum {
	FFTD__KERN_F64 = 0,
	FFTD__KERN_F32 = 1,
	FFTD__KERN_F16 = 2,
	// int8 reals: a conversion's source only (convert.h; fftd_plan_desc's
	// FFTD_INPUT_I8), not an fftd_precision
	FFTD__KERN_I8 = 3,
};

// fftd__kern_scale multiplies nreal reals of the given precision at device
// address data by factor, in place, on stream (NULL: the legacy default
// stream), asynchronously. f64 is computed in double; f32 in double with
// one rounding back to float; f16 in float. Returns the launch's
// cudaError_t as an int (0 on success, cudaErrorInvalidValue for an
// unknown precision); errors during execution show at the next sync.
int fftd__kern_scale(
    void *data, int precision, size_t nreal, double factor, void *stream);

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_FFTD_KERNELS_H

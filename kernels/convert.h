// SPDX-License-Identifier: MIT
//
// convert.h — PRIVATE to fftd. The C ABI of the precision conversions of
// accuracy-aware "auto" (kernels/convert.cu): data of one precision run
// through an algorithm of a lower one (f32 or f64 through tc16, f64
// through cuFFT f32 or split16) is converted on the device, on the
// execution's stream, on the way in and out. Plain C: streams travel as
// void * (a cudaStream_t), errors as int (a cudaError_t), precisions as
// fftd_kernels.h's codes (FFTD__KERN_F64, F32, F16; FFTD__KERN_I8 as
// fftd__conv_in's source: int8 input, fftd_plan_desc.input, converted the
// same way into the precision the plan computes in).
//
// Scaling. Each transform of the batch is scaled on the way in by its own
// power of two 2^e, chosen from its largest magnitude m (a reduction on
// the GPU) so that its worst-case output, `points` values of modulus at
// most sqrt(2) m summed, is at most 2^target_log2 (2 points m 2^e <=
// 2^target_log2): 15 for fp16, whose largest finite value is 65504, so no
// stage of the transform can overflow; and unscaled by 2^-e on the way
// out. Multiplying by a power of two is exact (barring underflow far below
// the values that matter), so the conversions cost only the roundings to
// the lower precision and back. A transform with a NaN, an infinity or
// only zeros is not scaled (e = 0).

#ifndef FFTD_KERNELS_CONVERT_H
#define FFTD_KERNELS_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// fftd__conv_scratch_bytes is the device scratch fftd__conv_in and
// fftd__conv_out need for ntr transforms (the maxima and the exponents).
size_t fftd__conv_scratch_bytes(int64_t ntr);

// fftd__conv_in converts ntr transforms of reals_per reals each (dense,
// back to back) from src (precision src_prec) into dst (dst_prec), each
// scaled as above for transforms of `points` points, and keeps the
// exponents in scratch (fftd__conv_scratch_bytes(ntr) bytes, which must
// stay untouched until fftd__conv_out). Enqueued on stream; returns the
// first launch error (0 on success).
int fftd__conv_in(const void *src, int src_prec, void *dst, int dst_prec,
    int64_t ntr, int64_t reals_per, int64_t points, int target_log2,
    void *scratch, void *stream);

// fftd__conv_exponents is the first half of fftd__conv_in: it computes the
// ntr exponents (same arguments) into scratch without converting; a tc16
// plan with fused conversion (kernels/tc.h, fftd__tc_execute_io) then reads
// them from fftd__conv_exps(scratch, ntr), a device pointer to ntr ints.
int        fftd__conv_exponents(const void *src, int src_prec, int64_t ntr,
           int64_t reals_per, int64_t points, int target_log2, void *scratch,
           void *stream);
const int *fftd__conv_exps(const void *scratch, int64_t ntr);

// fftd__conv_out converts ntr transforms of reals_per reals each from src
// (src_prec) into dst (dst_prec), unscaling each by the exponent
// fftd__conv_in kept in scratch. Enqueued on stream.
int fftd__conv_out(const void *src, int src_prec, void *dst, int dst_prec,
    int64_t ntr, int64_t reals_per, const void *scratch, void *stream);

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_CONVERT_H

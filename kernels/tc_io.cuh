// SPDX-License-Identifier: MIT
//
// tc_io.cuh — PRIVATE to kernels/: included by the tc16 kernel headers. The
// fused precision conversion of tc16 plans (tc.h fftd__tc_io, issue 18 item
// 4): a first pass reads f32 or int8 points and rounds them to fp16 as it
// loads them, a last pass writes f32 points, so the data crosses device
// memory no more often than a native plan's and no conversion kernel runs.
// Kernels compiled with CV = true call these for every element they read
// from args.in and write to args.out; with CV = false the helpers are the
// plain native accesses the kernels always made (same code).
//
// Scaling (convert.h): a converted transform t was given an exponent e[t]
// so that its worst-case output fits fp16; its input is multiplied by
// 2^e[t] before the one rounding to fp16 and its output by 2^-e[t]. ldexpf
// is exact in both directions for every value that can arise (fp16's range
// lies well inside fp32's normal range), so a fused plan rounds exactly
// where the separate kernels of convert.cu did, except that an output
// written from registers (contiguous last passes) skips the final fp16
// rounding.

#ifndef FFTD_KERNELS_TC_IO_CUH
#define FFTD_KERNELS_TC_IO_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tc.h"
#include "tc16_types.cuh"

namespace fftd_tc
{

// io_in_converted says whether a kernel's input needs converting.
template <bool CV>
FFTD_DEV bool
io_in_converted(const PassArgs &a)
{
	return CV && a.in_io != FFTD__TC_IO_NATIVE;
}

// io_load reads input point i (tc16 word): native, or converted and scaled
// by the exponent of transform key >> in_tlog2 (key: i, or a real step's
// row).
template <class P, bool CV>
FFTD_DEV typename P::Word
io_load(const PassArgs &a, long long i, long long key)
{
	if (!io_in_converted<CV>(a))
		return static_cast<const typename P::Word *>(a.in)[i];
	float2 v;
	if (a.in_io == FFTD__TC_IO_F32) {
		v = __ldg(static_cast<const float2 *>(a.in) + i);
	} else {
		const char2 c = __ldg(static_cast<const char2 *>(a.in) + i);
		v             = make_float2((float) c.x, (float) c.y);
	}
	if (a.exps_in != nullptr) {
		const int e = __ldg(a.exps_in + (key >> a.in_tlog2));
		v           = make_float2(ldexpf(v.x, e), ldexpf(v.y, e));
	}
	return P::store(v.x, v.y);
}

// io_store writes output point i from fp32 (re, im): native (rounded to
// the storage), or unscaled by transform key >> out_tlog2 and written as
// the output's kind.
template <class P, bool CV>
FFTD_DEV void
io_store(const PassArgs &a, long long i, long long key, float re, float im)
{
	if constexpr (CV) {
		if (a.exps_out != nullptr) {
			const int e = -__ldg(a.exps_out + (key >> a.out_tlog2));
			re          = ldexpf(re, e);
			im          = ldexpf(im, e);
		}
		if (a.out_io == FFTD__TC_IO_F32) {
			static_cast<float2 *>(a.out)[i] = make_float2(re, im);
			return;
		}
	}
	static_cast<typename P::Word *>(a.out)[i] = P::store(re, im);
}

// io_store_word writes output point i from a storage word (a column pass's
// result in shared memory).
template <class P, bool CV>
FFTD_DEV void
io_store_word(const PassArgs &a, long long i, typename P::Word w)
{
	if constexpr (CV) {
		const float2 v = P::load(w);
		io_store<P, true>(a, i, i, v.x, v.y);
	} else {
		static_cast<typename P::Word *>(a.out)[i] = w;
	}
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_IO_CUH

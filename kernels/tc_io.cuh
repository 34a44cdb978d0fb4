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
// 2^e[t] before the one rounding to fp16 and its output by 2^-e[t]. A
// product with a power of two is exact in fp32 for every value that can
// reach fp16 (whose range lies well inside fp32's normal range), so a fused
// plan rounds exactly where the separate kernels of convert.cu did, except
// that an output written from registers (contiguous last passes) skips the
// final fp16 rounding. (ldexpf, which handles every special case, made the
// fused passes a third slower on the H100.) Kernels compiled with CV take
// the scale once a block iteration where the iteration lies within one
// transform, once a point otherwise.

#ifndef FFTD_KERNELS_TC_IO_CUH
#define FFTD_KERNELS_TC_IO_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tc.h"
#include "tc16_types.cuh"

namespace fftd_tc
{

// pow2f is 2^e, exactly, for -126 <= e <= 127 (a normal float's bits).
FFTD_DEV float
pow2f(int e)
{
	return __int_as_float((e + 127) << 23);
}

// Scale is 2^e as exact float factors s1 s2 (s2 = 1 unless e lies outside
// [-126, 127]: f32 data of extreme magnitude, |e| < 254 by convert.h's
// construction). A product with it is exact while the result is a normal
// float.
struct Scale {
	float s1 = 1.f, s2 = 1.f;
};

FFTD_DEV Scale
scale_of(int e)
{
	Scale s;
	if (e >= -126 && e <= 127) {
		s.s1 = pow2f(e);
	} else {
		s.s1 = pow2f(e / 2);
		s.s2 = pow2f(e - e / 2);
	}
	return s;
}

FFTD_DEV float2
scaled(float2 v, Scale s)
{
	return make_float2(v.x * s.s1 * s.s2, v.y * s.s1 * s.s2);
}

// io_scale_in / io_scale_out: the scale of the input (2^e) and the output
// (2^-e) of transform key >> in_tlog2 / out_tlog2 (key: a point's index, or
// a real step's row); 1 when nothing is scaled. A kernel whose block
// iteration lies within one transform takes them once an iteration.
FFTD_DEV Scale
io_scale_in(const PassArgs &a, long long key)
{
	return a.exps_in == nullptr
	    ? Scale()
	    : scale_of(__ldg(a.exps_in + (key >> a.in_tlog2)));
}
FFTD_DEV Scale
io_scale_out(const PassArgs &a, long long key)
{
	return a.exps_out == nullptr
	    ? Scale()
	    : scale_of(-__ldg(a.exps_out + (key >> a.out_tlog2)));
}

// io_in_converted says whether a kernel's input needs converting.
template <bool CV>
FFTD_DEV bool
io_in_converted(const PassArgs &a)
{
	return CV && a.in_io != FFTD__TC_IO_NATIVE;
}

// io_load_s reads converted input point i, scaled by s, as a tc16 word.
template <class P>
FFTD_DEV typename P::Word
io_load_s(const PassArgs &a, long long i, Scale s)
{
	float2 v;
	if (a.in_io == FFTD__TC_IO_F32) {
		v = __ldg(static_cast<const float2 *>(a.in) + i);
	} else {
		const char2 c = __ldg(static_cast<const char2 *>(a.in) + i);
		v             = make_float2((float) c.x, (float) c.y);
	}
	v = scaled(v, s);
	return P::store(v.x, v.y);
}

// io_load reads input point i (tc16 word): native, or converted and scaled
// as transform key's.
template <class P, bool CV>
FFTD_DEV typename P::Word
io_load(const PassArgs &a, long long i, long long key)
{
	if (!io_in_converted<CV>(a))
		return static_cast<const typename P::Word *>(a.in)[i];
	return io_load_s<P>(a, i, io_scale_in(a, key));
}

// io_store_s writes output point i from fp32 (re, im) scaled by s, as the
// output's kind (native: rounded to the storage).
template <class P>
FFTD_DEV void
io_store_s(const PassArgs &a, long long i, Scale s, float re, float im)
{
	const float2 v = scaled(make_float2(re, im), s);
	if (a.out_io == FFTD__TC_IO_F32)
		static_cast<float2 *>(a.out)[i] = v;
	else
		static_cast<typename P::Word *>(a.out)[i] = P::store(v.x, v.y);
}

// io_store writes output point i of a converting pass (CV) from fp32 (re,
// im), unscaled as transform key's and written as the output's kind. (The
// native passes store P::Word directly.)
template <class P>
FFTD_DEV void
io_store(const PassArgs &a, long long i, long long key, float re, float im)
{
	io_store_s<P>(a, i, io_scale_out(a, key), re, im);
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_IO_CUH

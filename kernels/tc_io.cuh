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
#include "tc16_ptx.cuh"
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

// io_f2: a raw converted input element (f32 or int8 complex) as fp32.
FFTD_DEV float2
io_f2(float2 v)
{
	return v;
}
FFTD_DEV float2
io_f2(char2 c)
{
	return make_float2((float) c.x, (float) c.y);
}

// io_word: raw converted input element v scaled by s, as a word of P.
template <class P, class T>
FFTD_DEV typename P::Word
io_word(T v, Scale s)
{
	const float2 f = scaled(io_f2(v), s);
	return P::store(f.x, f.y);
}

// io_prefetch_l2 asks L2 for the 128-byte line holding p, without waiting
// and without a register for the result: the converted input of a block
// iteration is loaded into registers (it is rounded on the way into
// shared memory, which cp.async cannot do), so its latency is hidden only
// if the lines were asked for an iteration earlier.
FFTD_DEV void
io_prefetch_l2(const void *p)
{
	asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// io_copy_in loads the converted input of block iteration it of a pass
// kernel (tc16_pass.cuh) whose iteration is C FFTs of L points, NT threads
// of COPIES copy steps each: raw elements T (float2 or char2) loaded into
// registers, scaled, rounded to fp16 and handed to put(j, word) for copy
// step j to store in shared memory (cp.async copies bytes only). One body
// per kind, not a branch a point, and GM loads in flight a thread (the
// body that branched on the kind at every point kept one load in flight:
// the H200 ran the fused 1D 4096 pass at 549 us, against 200 us for the
// native one). rows: contiguous FFTs (point i of the iteration at it C L
// + i), which check the batch's end only in its last iteration, like the
// native copy; else C columns of stride args.s_in, which never run past
// it (q_total is a multiple of C). Thread: the calling thread tid's steps.
template <class P, class T, int L, int C, int NT, int COPIES, int GM, class Put>
FFTD_DEV void
io_copy_in(const PassArgs &args, long long it, int tid, bool rows, Put put)
{
	constexpr int G  = COPIES < GM ? COPIES : GM;
	const T      *in = static_cast<const T *>(args.in);
	const T      *src;
	long long     step, left = 0;
	bool          full = true;
	static_assert(COPIES % G == 0, "load groups");
	if (rows) {
		const long long base = it * C * (long long) L;
		src                  = in + base + tid;
		step                 = NT;
		full                 = (it + 1) * C <= args.q_total;
		left = args.q_total * (long long) L - base - tid;
	} else {
		const long long s = args.s_in;
		src = in + col_first(it * C, L, s, args.s_in_log2) + (tid % C)
		    + (long long) (tid / C) * s;
		step = (long long) opaque((uint32_t) (NT / C)) * s;
	}
	// one scale for the iteration when it lies within one transform
	// (columns always; rows when C L <= points)
	const bool  one = !rows || (long long) C * L <= (1LL << args.in_tlog2);
	const Scale sci = one ? io_scale_in(args, src - in) : Scale();
#pragma unroll 1
	for (int j0 = 0; j0 < COPIES; j0 += G) {
		T w[G];
#pragma unroll
		for (int g = 0; g < G; g++)
			if (full || (j0 + g) * (long long) NT < left)
				w[g] = __ldg(src + g * step);
#pragma unroll
		for (int g = 0; g < G; g++) {
			const int j = j0 + g;
			if (!full && j * (long long) NT >= left)
				continue;
			const Scale sc = one
			    ? sci
			    : io_scale_in(args, (src - in) + g * step);
			put(j, io_word<P>(w[g], sc));
		}
		src += G * step;
	}
}

// io_prefetch_in asks L2 for the input (elements T: a fused conversion's raw
// input, or native words for the short column passes, tc16_pass.cuh
// L2_AHEAD) of block iteration it of the pass io_copy_in describes, NT
// threads sharing the lines: rows, the iteration's C L contiguous elements
// (up to the batch's end); columns, L runs of C elements.
template <class T, int L, int C, int NT>
FFTD_DEV void
io_prefetch_in(const PassArgs &args, long long it, int tid, bool rows)
{
	const char *in = static_cast<const char *>(args.in);
	if (rows) {
		const long long p0  = it * C * (long long) L,
		                end = args.q_total * (long long) L,
		                p1  = p0 + C * (long long) L < end
		     ? p0 + C * (long long) L
		     : end;
		const uintptr_t a0
		    = ((uintptr_t) (in + p0 * sizeof(T))) & ~(uintptr_t) 127;
		const char *e = in + p1 * sizeof(T);
		for (const char *a = (const char *) a0 + 128 * tid; a < e;
		     a += 128 * NT)
			io_prefetch_l2(a);
	} else {
		constexpr int   RB = C * (int) sizeof(T); // bytes a run
		const long long s  = args.s_in;
		const char     *b
		    = in + col_first(it * C, L, s, args.s_in_log2) * sizeof(T);
		for (int r = tid; r < L; r += NT)
			for (int o = 0; o < RB; o += 128)
				io_prefetch_l2(
				    b + r * s * (long long) sizeof(T) + o);
	}
}

// io_load_s reads converted input point i, scaled by s, as a tc16 word.
template <class P>
FFTD_DEV typename P::Word
io_load_s(const PassArgs &a, long long i, Scale s)
{
	if (a.in_io == FFTD__TC_IO_F32)
		return io_word<P>(
		    __ldg(static_cast<const float2 *>(a.in) + i), s);
	return io_word<P>(__ldg(static_cast<const char2 *>(a.in) + i), s);
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

// SPDX-License-Identifier: MIT
//
// tc16_types.cuh — PRIVATE to kernels/: included by the other tc16_*.cuh
// headers and by tc16_plan.cu, nothing else. What every file of the
// tensor-core kernel family (tc16 and split16) shares: a pass's arguments as
// the kernels take them (PassArgs), the descriptor of one compiled pass kernel
// (KernelInfo), the lookups that tc16.cu and split16.cu define and
// tc16_plan.cu calls, FFTD_DEV, col_first (where a column pass's column
// starts in device memory), and the storage traits of the two precisions
// (Tc16: __half2 words; Split16: float2). The algorithm is described in
// tc16_pass.cuh; the kernels' C ABI is tc.h.

#ifndef FFTD_KERNELS_TC16_TYPES_CUH
#define FFTD_KERNELS_TC16_TYPES_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tc.h"

namespace fftd_tc
{

// PassArgs is one pass (tc.h, fftd__tc_pass) with device pointers.
struct PassArgs {
	const void   *in;
	void         *out;
	long long     q_total; // FFTs in this pass
	long long     s_in;    // 1: contiguous FFTs, else column stride
	long long     s_out;
	int           s_in_log2; // log2 of the strides
	int           s_out_log2;
	const float2 *tab; // W_L^j, j < L (forward sign)
	int tw_log2; // four-step twiddle W_N^(ql k): log2 N (tc.h tw_n), 0:
	             // none
	// real steps (tc_real.cuh): row length h = len = 2^len_log2, and the
	// log2 sizes of the nd leading axes, innermost first (the row index's
	// mirror)
	int len, len_log2;
	int nd;
	int dlog2[2];
	// fused conversion (tc_io.cuh; read only by the kernels compiled
	// with CV): the element kinds of in and out (tc.h fftd__tc_io), the
	// exponents that scale converted input (exps_in, 2^e) and the output
	// of a scaled transform (exps_out, 2^-e), NULL for none; the
	// transform of input point (or real-step row) i is i >> in_tlog2,
	// of output point (or row) i >> out_tlog2
	int        in_io, out_io;
	int        in_tlog2, out_tlog2;
	const int *exps_in;
	const int *exps_out;
};

// KernelInfo describes one compiled pass kernel.
struct KernelInfo {
	void (*fn)(PassArgs);
	int    len, ffts, warps;
	size_t smem;
};

// Lookups made by tc16.cu / split16.cu: the kernel for (len, strided,
// inverse, four-step twiddle kind tw: 0, 1 or 2, tc.h fftd__tc_tw_kind), or
// false when none is compiled.
bool tc16_kernel(
    int len, bool strided, bool inverse, int tw, bool wide, KernelInfo *k);
// The same with fused conversion (tc_io.cuh; tc16 only): the kernel reads
// and writes the kinds its PassArgs name.
bool tc16_io_kernel(int len, bool strided, bool inverse, int tw, KernelInfo *k);
bool split16_kernel(
    int len, bool strided, bool inverse, int tw, bool wide, KernelInfo *k);
// The plane kernels (tc.h FFTD__TC_OP_PLANE: planes of ly rows of lz
// points; tc_plane.cuh), or false; _io_ with fused conversion.
bool tc16_plane_kernel(int ly, int lz, bool inverse, KernelInfo *k);
bool tc16_plane_io_kernel(int ly, int lz, bool inverse, KernelInfo *k);
bool split16_plane_kernel(int ly, int lz, bool inverse, KernelInfo *k);
// The real-step kernels (tc.h FFTD__TC_OP_R2C_POST, _C2R_PRE) for q_total
// rows of len points (32- or 64-bit indices, tc_real.cuh), or false.
bool tc16_real_kernel(int op, long long q_total, long long len, KernelInfo *k);
bool tc16_real_io_kernel(
    int op, long long q_total, long long len, KernelInfo *k);
bool split16_real_kernel(
    int op, long long q_total, long long len, KernelInfo *k);
// A contiguous pass of len points (FFTD__TC_MIN_LEN ..
// FFTD__TC_MAX_FUSED_REAL) with the real step op (FFTD__TC_OP_R2C_POST or
// _C2R_PRE) of 1D rows fused in (tc16_pass.cuh), or false.
bool tc16_fused_real_kernel(int op, int len, KernelInfo *k);
bool split16_fused_real_kernel(int op, int len, KernelInfo *k);

#define FFTD_DEV __device__ __forceinline__

// col_first is the offset of point 0 of column q in a column pass over
// transforms of L points that hold s = 2^s_log2 columns each (the stride):
// column q = qh s + ql (ql < s) starts at qh L s + ql.
FFTD_DEV long long
col_first(long long q, int L, long long s, int s_log2)
{
	return (q >> s_log2) * (long long) L * s + (q & (s - 1));
}

// ---------------------------------------------------------------------------
// Precision traits.

struct Tc16 {
	static constexpr bool kSplit = false;
	using Word = uint32_t; // __half2 bits: re low, im high
	static constexpr int     kBytes = 4;
	static FFTD_DEV uint32_t swz(uint32_t p)
	{
		return fftd__tc_swz4(p);
	}
	static FFTD_DEV float2 load(Word w)
	{
		__half2 h = *reinterpret_cast<__half2 *>(&w);
		return __half22float2(h);
	}
	static FFTD_DEV Word store(float re, float im)
	{
		__half2 h = __floats2half2_rn(re, im);
		return *reinterpret_cast<uint32_t *>(&h);
	}
};

struct Split16 {
	static constexpr bool kSplit    = true;
	using Word                      = float2;
	static constexpr int     kBytes = 8;
	static FFTD_DEV uint32_t swz(uint32_t p)
	{
		return fftd__tc_swz8(p);
	}
	static FFTD_DEV float2 load(Word w)
	{
		return w;
	}
	static FFTD_DEV Word store(float re, float im)
	{
		return make_float2(re, im);
	}
};

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_TYPES_CUH

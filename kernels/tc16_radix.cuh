// SPDX-License-Identifier: MIT
//
// tc16_radix.cuh — PRIVATE to kernels/: included by split16.cu only. The
// radix pass kernel: batched 2-, 4- or 8-point DFTs on the CUDA cores in
// fp32, the last pass of a 1D transform whose length has a factor below 256
// (split16's 2^15 = 4096 * 8, tc_host.c; tc16 takes 2^15 in one pass and
// compiles no radix kernel), with its registration helpers
// (make_radix_info, radix_kernel_info). The tensor-core pass kernel is in
// tc16_pass.cuh.

#ifndef FFTD_KERNELS_TC16_RADIX_CUH
#define FFTD_KERNELS_TC16_RADIX_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tc16_dft.cuh"
#include "tc16_ptx.cuh"
#include "tc16_types.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// The radix pass kernel: batched R-point DFTs (R = 2, 4, 8) on the CUDA cores
// in fp32, one FFT per thread, no shared memory and no twiddle; the last pass
// of a 1D transform whose length has a factor below 256 (split16's 2^15 =
// 4096 * 8). FFT q reads element n at (q / s_in) R s_in + n s_in + q % s_in
// and writes element k likewise with s_out. Contiguous rows (s_in = 1) are
// read with 16-byte loads (8 for tc16 R = 2); the stores of a warp are
// coalesced for any s_out (neighbouring q, neighbouring addresses).

// A row of R points from device memory, vector loads; p aligned to 16
// bytes (8 for tc16 R = 2).
template <class P, int R>
FFTD_DEV void
load_row(const typename P::Word *p, float2 (&v)[R])
{
	constexpr int BYTES = R * P::kBytes;
	if constexpr (BYTES % 16 == 0) {
		const uint4 *u = reinterpret_cast<const uint4 *>(p);
#pragma unroll
		for (int i = 0; i < BYTES / 16; i++) {
			const uint4 x = u[i];
			if constexpr (P::kSplit) {
				v[2 * i] = make_float2(
				    __uint_as_float(x.x), __uint_as_float(x.y));
				v[2 * i + 1] = make_float2(
				    __uint_as_float(x.z), __uint_as_float(x.w));
			} else {
				v[4 * i]     = unpack_half2(x.x);
				v[4 * i + 1] = unpack_half2(x.y);
				v[4 * i + 2] = unpack_half2(x.z);
				v[4 * i + 3] = unpack_half2(x.w);
			}
		}
	} else {
		static_assert(
		    !P::kSplit && R == 2, "8-byte rows: tc16 R = 2 only");
		const uint2 x = *reinterpret_cast<const uint2 *>(p);
		v[0]          = unpack_half2(x.x);
		v[1]          = unpack_half2(x.y);
	}
}

template <class P, int R, bool INV>
__global__ void __launch_bounds__(256) radix_kernel(PassArgs a)
{
	using Word = typename P::Word;
	static_assert(R == 2 || R == 4 || R == 8, "radix");
	const Word *in  = static_cast<const Word *>(a.in);
	Word       *out = static_cast<Word *>(a.out);
	const bool  vec
	    = a.s_in == 1 && (reinterpret_cast<uintptr_t>(a.in) & 15) == 0;
	const long long step = (long long) gridDim.x * blockDim.x;
	for (long long q = (long long) blockIdx.x * blockDim.x + threadIdx.x;
	     q < a.q_total; q += step) {
		const long long qi = (((q >> a.s_in_log2) * R) << a.s_in_log2)
		    + (q & (a.s_in - 1));
		const long long qo = (((q >> a.s_out_log2) * R) << a.s_out_log2)
		    + (q & (a.s_out - 1));
		float2 v[R];
		if (vec) {
			load_row<P, R>(in + qi, v);
		} else {
#pragma unroll
			for (int n = 0; n < R; n++)
				v[n] = P::load(in[qi + n * a.s_in]);
		}
		SmallDft<R, INV>::run(v);
#pragma unroll
		for (int k = 0; k < R; k++) {
			out[qo + k * a.s_out] = P::store(v[k].x, v[k].y);
		}
	}
}

template <class P, int R, bool INV>
KernelInfo
make_radix_info()
{
	KernelInfo k;
	k.fn    = radix_kernel<P, R, INV>;
	k.len   = R;
	k.ffts  = 256; // one FFT per thread
	k.warps = 8;
	k.smem  = 0;
	return k;
}

// The radix kernel for len = 2, 4, 8 (no four-step twiddle), or false.
template <class P>
bool
radix_kernel_info(int len, bool inverse, int tw, KernelInfo *k)
{
	if (tw)
		return false;
	switch (len) {
	case 2:
		*k = inverse ? make_radix_info<P, 2, true>()
		             : make_radix_info<P, 2, false>();
		return true;
	case 4:
		*k = inverse ? make_radix_info<P, 4, true>()
		             : make_radix_info<P, 4, false>();
		return true;
	case 8:
		*k = inverse ? make_radix_info<P, 8, true>()
		             : make_radix_info<P, 8, false>();
		return true;
	default:
		return false;
	}
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_RADIX_CUH

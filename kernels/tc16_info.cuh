// SPDX-License-Identifier: MIT
//
// tc16_info.cuh — PRIVATE to kernels/: included by tc16.cu, tc16_io.cu and
// split16.cu only. The block shape of the tensor-core pass kernel
// (tc16_pass.cuh) for each pass length and kind, and the KernelInfo of each
// compiled instance, which the lookups of those files return to
// tc16_plan.cu.

#ifndef FFTD_KERNELS_TC16_INFO_CUH
#define FFTD_KERNELS_TC16_INFO_CUH

#include "tc16_pass.cuh"

namespace fftd_tc
{

// Block shape of a pass kernel: C FFTs per block iteration (tc.h,
// fftd__tc_block_ffts, which the host tests' models use too), W warps (two
// level-1 tiles per warp where possible).
constexpr int
block_warps(int cr)
{
	return cr >= 128
	    ? 32
	    : (cr / 2 < 4 ? (cr < 4 ? cr : 4) : (cr / 2 > 16 ? 16 : cr / 2));
}

// Registration helper used by tc16*.cu and split16*.cu.
template <class P, int L, bool STRIDED, bool INV, bool TW, bool WIDE = false,
    bool TWG = false, bool CV = false, int RSTEP = FFTD__TC_OP_FFT>
KernelInfo
make_kernel_info()
{
	constexpr int  C = fftd__tc_block_ffts(L, STRIDED, P::kBytes, WIDE);
	constexpr bool DIRECT = !STRIDED && RSTEP != FFTD__TC_OP_R2C_POST;
	constexpr bool SCR    = Smem<P, L, C, TW, DIRECT, false>::SCR;
	// in-place column passes: tc16 on 32 warps, 64 registers a thread
	// (with 16, an SM's one block hid too little latency: on the H200,
	// 1D 2^24's second pass took 318 us against 299 us now); split16 on
	// 16 with 128 registers (on 32, capped at 64, it spills 100 bytes)
	constexpr int W = STRIDED && !SCR ? (P::kSplit ? 16 : 32)
	                                  : block_warps(C * (L / 256));
	KernelInfo    k;
	static_assert(!TWG || (TW && STRIDED),
	    "the general twiddle is a column-pass twiddle");
	k.fn   = pass_kernel<P, L, C, W, STRIDED, INV, TW, SCR, TWG, CV, RSTEP>;
	k.len  = L;
	k.ffts = C;
	k.warps = W;
	k.smem  = Smem<P, L, C, TW, DIRECT, l1_tables(L, STRIDED)>::kBytes;
	return k;
}

// fused_real_kernel_info: the contiguous pass of len points with the real
// step op (FFTD__TC_OP_R2C_POST: forward; FFTD__TC_OP_C2R_PRE: inverse)
// fused in, for len FFTD__TC_MIN_LEN .. FFTD__TC_MAX_FUSED_REAL, or false.
template <class P>
bool
fused_real_kernel_info(int op, int len, KernelInfo *k)
{
	constexpr int R2C = FFTD__TC_OP_R2C_POST, C2R = FFTD__TC_OP_C2R_PRE;
	if (op != R2C && op != C2R)
		return false;
	const bool r2c = op == R2C;
#define FFTD_TC_FUSED_CASE(LEN)                                                \
	if (len == LEN) {                                                      \
		*k = r2c ? make_kernel_info<P, LEN, false, false, false,       \
		         false, false, false, R2C>()                           \
		         : make_kernel_info<P, LEN, false, true, false, false, \
		             false, false, C2R>();                             \
		return true;                                                   \
	}
	FFTD_TC_FUSED_CASE(256)
	FFTD_TC_FUSED_CASE(512)
	FFTD_TC_FUSED_CASE(1024)
	FFTD_TC_FUSED_CASE(2048)
	FFTD_TC_FUSED_CASE(4096)
	FFTD_TC_FUSED_CASE(8192)
#undef FFTD_TC_FUSED_CASE
	static_assert(FFTD__TC_MAX_FUSED_REAL == 8192, "the cases above");
	return false;
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_INFO_CUH

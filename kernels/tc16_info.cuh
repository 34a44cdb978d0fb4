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

// Registration helper used by tc16*.cu and split16*.cu: a pass kernel's
// KernelInfo. Its block shape, C FFTs per block iteration on W warps, comes
// from tc.h (fftd__tc_block_ffts, fftd__tc_block_warps), which the host
// tests' models use too.
template <class P, int L, bool STRIDED, bool INV, bool TW, bool WIDE = false,
    bool TWG = false, bool CV = false, int RSTEP = FFTD__TC_OP_FFT>
KernelInfo
make_kernel_info()
{
	constexpr int  C = fftd__tc_block_ffts(L, STRIDED, P::kBytes, WIDE);
	constexpr bool DIRECT = !STRIDED && RSTEP != FFTD__TC_OP_R2C_POST;
	constexpr bool SCR    = Smem<P, L, C, TW, DIRECT, false>::SCR;
	constexpr int  W      = fftd__tc_block_warps(L, STRIDED, P::kBytes, C);
	KernelInfo     k;
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

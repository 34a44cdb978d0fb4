// SPDX-License-Identifier: MIT
//
// tc16.cu — the compiled tc16 pass kernels (fp16 storage, fp16 tensor-core
// products with fp32 accumulation; the algorithm is in tc16_pass.cuh, after
// the tcFFT paper, Li et al., IEEE CLUSTER 2021, sec. III) and the lookup
// that tc16_plan.cu uses to pick one. Contiguous passes exist for every
// length 256 .. 32768 (32768 in place, one FFT a block), column passes
// (strided, optionally with the four-step twiddle) for 256 .. 4096: enough
// for 1D 256 .. 2^27 (tc.h) and 2D 256^2 .. 4096^2 (no radix-2/4/8 pass:
// tc16 takes 2^15 in one pass, and only split16's 2^15 needs one); axis
// passes of 32 ..
// 128 points on the CUDA cores (tc_axis.cuh) for 3D sides below 256, plane
// passes of the last two 3D sides (tc_plane.cuh); and the
// R2C / C2R real steps (tc_real.cuh). Their fused-conversion twins are in
// tc16_io.cu.

#include "tc16_info.cuh"
#include "tc_axis.cuh"
#include "tc_plane.cuh"
#include "tc_real.cuh"

namespace fftd_tc
{

// G: the general four-step twiddle (tc.h, fftd__tc_tw_kind 2), only for the
// column lengths of three-pass transforms (256, 512).
#define FFTD_TC16_CASE(LEN, S, I, T, G)                                        \
	if (len == LEN && strided == S && inverse == I && tw == T) {           \
		*k = wide                                                      \
		    ? make_kernel_info<Tc16, LEN, S, I, (T > 0), true, G>()    \
		    : make_kernel_info<Tc16, LEN, S, I, (T > 0), false, G>();  \
		return true;                                                   \
	}
#define FFTD_TC16_CONTIG(LEN)                                                  \
	FFTD_TC16_CASE(LEN, false, false, 0, false)                            \
	FFTD_TC16_CASE(LEN, false, true, 0, false)
#define FFTD_TC16_STRIDED(LEN)                                                 \
	FFTD_TC16_CASE(LEN, true, false, 0, false)                             \
	FFTD_TC16_CASE(LEN, true, true, 0, false)                              \
	FFTD_TC16_CASE(LEN, true, false, 1, false)                             \
	FFTD_TC16_CASE(LEN, true, true, 1, false)
#define FFTD_TC16_STRIDED_G(LEN)                                               \
	FFTD_TC16_CASE(LEN, true, false, 2, true)                              \
	FFTD_TC16_CASE(LEN, true, true, 2, true)

bool
tc16_kernel(
    int len, bool strided, bool inverse, int tw, bool wide, KernelInfo *k)
{
	if (len <= FFTD__TC_MAX_RADIX)
		return false; // no tc16 layout has a radix pass (tc_host.c)
	if (len >= FFTD__TC_AXIS_MIN && len <= FFTD__TC_AXIS_MAX)
		return axis_kernel_info<Tc16>(len, strided, inverse, tw, k);
	FFTD_TC16_CONTIG(256)
	FFTD_TC16_CONTIG(512)
	FFTD_TC16_CONTIG(1024)
	FFTD_TC16_CONTIG(2048)
	FFTD_TC16_CONTIG(4096)
	FFTD_TC16_CONTIG(8192)
	FFTD_TC16_CONTIG(16384)
	FFTD_TC16_CONTIG(32768)
	FFTD_TC16_STRIDED(256)
	FFTD_TC16_STRIDED(512)
	FFTD_TC16_STRIDED_G(256)
	FFTD_TC16_STRIDED_G(512)
	FFTD_TC16_STRIDED(1024)
	FFTD_TC16_STRIDED(2048)
	FFTD_TC16_STRIDED(4096)
	return false;
}

// tc16_plane_kernel: the plane pass of 3D transforms (tc_plane.cuh).
bool
tc16_plane_kernel(int ly, int lz, bool inverse, KernelInfo *k)
{
	return plane_kernel_info<Tc16>(ly, lz, inverse, k);
}

// tc16_real_kernel: the R2C post-process or C2R pre-process kernel of this
// precision (tc_real.cuh), for tc16_plan.cu.
bool
tc16_real_kernel(int op, long long q_total, long long len, KernelInfo *k)
{
	return real_kernel_info<Tc16>(op, q_total, len, k);
}

// tc16_fused_real_kernel: a contiguous pass with a 1D real step fused in
// (tc16_info.cuh, fused_real_kernel_info), for tc16_plan.cu.
bool
tc16_fused_real_kernel(int op, int len, KernelInfo *k)
{
	return fused_real_kernel_info<Tc16>(op, len, k);
}

} // namespace fftd_tc

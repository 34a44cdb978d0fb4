// SPDX-License-Identifier: MIT
//
// tc16_io.cu — the tc16 kernels of the first and last passes of plans with
// fused conversion (fftd__tc_plan_create_io, tc.h; the conversion is
// tc_io.cuh): the same set as tc16.cu, compiled with CV, with wide column
// blocks only, and their lookups for tc16_plan.cu. A translation unit of
// its own so that the two halves compile in parallel.

#include "tc16_info.cuh"
#include "tc_axis.cuh"
#include "tc_plane.cuh"
#include "tc_real.cuh"

namespace fftd_tc
{

// C2C passes: G is the general four-step twiddle, as in tc16.cu.
#define FFTD_TC16_IO_CASE(LEN, S, I, T, G)                                     \
	if (len == LEN && strided == S && inverse == I && tw == T) {           \
		*k = make_kernel_info<Tc16, LEN, S, I, (T > 0), true, G,       \
		    true>();                                                   \
		return true;                                                   \
	}
#define FFTD_TC16_IO_CONTIG(LEN)                                               \
	FFTD_TC16_IO_CASE(LEN, false, false, 0, false)                         \
	FFTD_TC16_IO_CASE(LEN, false, true, 0, false)
#define FFTD_TC16_IO_STRIDED(LEN)                                              \
	FFTD_TC16_IO_CASE(LEN, true, false, 0, false)                          \
	FFTD_TC16_IO_CASE(LEN, true, true, 0, false)                           \
	FFTD_TC16_IO_CASE(LEN, true, false, 1, false)                          \
	FFTD_TC16_IO_CASE(LEN, true, true, 1, false)
#define FFTD_TC16_IO_STRIDED_G(LEN)                                            \
	FFTD_TC16_IO_CASE(LEN, true, false, 2, true)                           \
	FFTD_TC16_IO_CASE(LEN, true, true, 2, true)

bool
tc16_io_kernel(int len, bool strided, bool inverse, int tw, KernelInfo *k)
{
	if (len <= FFTD__TC_MAX_RADIX)
		return false; // no tc16 layout has a radix pass (tc_host.c)
	if (len >= FFTD__TC_AXIS_MIN && len <= FFTD__TC_AXIS_MAX)
		return axis_kernel_info<Tc16, true>(
		    len, strided, inverse, tw, k);
	FFTD_TC16_IO_CONTIG(256)
	FFTD_TC16_IO_CONTIG(512)
	FFTD_TC16_IO_CONTIG(1024)
	FFTD_TC16_IO_CONTIG(2048)
	FFTD_TC16_IO_CONTIG(4096)
	FFTD_TC16_IO_CONTIG(8192)
	FFTD_TC16_IO_CONTIG(16384)
	FFTD_TC16_IO_CONTIG(32768)
	FFTD_TC16_IO_STRIDED(256)
	FFTD_TC16_IO_STRIDED(512)
	FFTD_TC16_IO_STRIDED_G(256)
	FFTD_TC16_IO_STRIDED_G(512)
	FFTD_TC16_IO_STRIDED(1024)
	FFTD_TC16_IO_STRIDED(2048)
	FFTD_TC16_IO_STRIDED(4096)
	return false;
}

bool
tc16_plane_io_kernel(int ly, int lz, bool inverse, KernelInfo *k)
{
	return plane_kernel_info<Tc16, true>(ly, lz, inverse, k);
}

bool
tc16_real_io_kernel(int op, long long q_total, long long len, KernelInfo *k)
{
	return real_kernel_info<Tc16, true>(op, q_total, len, k);
}

} // namespace fftd_tc

// SPDX-License-Identifier: MIT
//
// tc16.cu — the compiled tc16 pass kernels (fp16 storage, fp16 tensor-core
// products with fp32 accumulation; the algorithm is in tc16_fft.cuh, after the
// tcFFT paper, Li et al., IEEE CLUSTER 2021, sec. III) and the lookup
// that tc16_plan.cu uses to pick one. Contiguous passes exist for every
// length 256 .. 16384, column passes (strided, optionally with the four-step
// twiddle) for 256 .. 4096: enough for 1D 256 .. 2^24 and 2D 256^2 .. 4096^2.

#include "tc16_fft.cuh"

namespace fftd_tc {

#define FFTD_TC16_CASE(LEN, S, I, T)                                             \
	if (len == LEN && strided == S && inverse == I && tw == T) {             \
		*k = wide ? make_kernel_info<Tc16, LEN, S, I, T, true>()            \
		          : make_kernel_info<Tc16, LEN, S, I, T, false>();          \
		return true;                                                     \
	}
#define FFTD_TC16_CONTIG(LEN) FFTD_TC16_CASE(LEN, false, false, false) FFTD_TC16_CASE(LEN, false, true, false)
#define FFTD_TC16_STRIDED(LEN)                                                  \
	FFTD_TC16_CASE(LEN, true, false, false)                                 \
	FFTD_TC16_CASE(LEN, true, true, false)                                  \
	FFTD_TC16_CASE(LEN, true, false, true)                                  \
	FFTD_TC16_CASE(LEN, true, true, true)

bool tc16_kernel(int len, bool strided, bool inverse, bool tw, bool wide, KernelInfo *k)
{
	FFTD_TC16_CONTIG(256)
	FFTD_TC16_CONTIG(512)
	FFTD_TC16_CONTIG(1024)
	FFTD_TC16_CONTIG(2048)
	FFTD_TC16_CONTIG(4096)
	FFTD_TC16_CONTIG(8192)
	FFTD_TC16_CONTIG(16384)
	FFTD_TC16_STRIDED(256)
	FFTD_TC16_STRIDED(512)
	FFTD_TC16_STRIDED(1024)
	FFTD_TC16_STRIDED(2048)
	FFTD_TC16_STRIDED(4096)
	return false;
}

} // namespace fftd_tc

// SPDX-License-Identifier: MIT
//
// split16.cu — the compiled split16 pass kernels: fp32 storage, every
// radix-16 product on the fp16 tensor cores with operands split into scaled
// hi + lo fp16 parts and recombined in fp32 (tc16_fft.cuh; Markidis et al.,
// IPDPSW 2018, sec. V; Ootomo & Yokota, IJHPCA 2022), and the lookup that
// tc16_plan.cu uses to pick one. Contiguous passes: 256 .. 16384 (a 32768-point
// block would need 256 KiB of shared memory); column passes 256 .. 4096.

#include "tc16_fft.cuh"

namespace fftd_tc {

#define FFTD_SPLIT16_CASE(LEN, S, I, T)                                             \
	if (len == LEN && strided == S && inverse == I && tw == T) {             \
		*k = wide ? make_kernel_info<Split16, LEN, S, I, T, true>()            \
		          : make_kernel_info<Split16, LEN, S, I, T, false>();          \
		return true;                                                     \
	}
#define FFTD_SPLIT16_CONTIG(LEN) FFTD_SPLIT16_CASE(LEN, false, false, false) FFTD_SPLIT16_CASE(LEN, false, true, false)
#define FFTD_SPLIT16_STRIDED(LEN)                                               \
	FFTD_SPLIT16_CASE(LEN, true, false, false)                              \
	FFTD_SPLIT16_CASE(LEN, true, true, false)                               \
	FFTD_SPLIT16_CASE(LEN, true, false, true)                               \
	FFTD_SPLIT16_CASE(LEN, true, true, true)

bool split16_kernel(int len, bool strided, bool inverse, bool tw, bool wide, KernelInfo *k)
{
	FFTD_SPLIT16_CONTIG(256)
	FFTD_SPLIT16_CONTIG(512)
	FFTD_SPLIT16_CONTIG(1024)
	FFTD_SPLIT16_CONTIG(2048)
	FFTD_SPLIT16_CONTIG(4096)
	FFTD_SPLIT16_CONTIG(8192)
	FFTD_SPLIT16_CONTIG(16384)
	FFTD_SPLIT16_STRIDED(256)
	FFTD_SPLIT16_STRIDED(512)
	FFTD_SPLIT16_STRIDED(1024)
	FFTD_SPLIT16_STRIDED(2048)
	FFTD_SPLIT16_STRIDED(4096)
	return false;
}

} // namespace fftd_tc

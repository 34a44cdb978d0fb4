// SPDX-License-Identifier: MIT
//
// tc16_smem.cuh — PRIVATE to kernels/: included by tc16_pass.cuh only.
// Where a pass kernel's data sit in shared memory: the layout and size of a
// block's buffers and tables (Smem) and the register cap that follows from
// it (min_blocks), the offset of a fragment element within a tile of given
// row and column steps (elem_off), and the bitwise index maps of the work
// items of levels 1 and 2 (l1_in .. l2b_out), which with the
// linear swizzles of tc.h (fftd__tc_swz4/8, shared with the host tests) let a
// lane compute its part of every address once. The kernel that walks these
// maps is in tc16_pass.cuh.

#ifndef FFTD_KERNELS_TC16_SMEM_CUH
#define FFTD_KERNELS_TC16_SMEM_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "tc.h"
#include "tc16_types.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// Shared memory of a pass kernel: the input buffer, the scratch buffer
// level 1 writes into when it fits (SCR; not needed by 256-point passes
// that store from registers, DIRECT: contiguous ones without a fused R2C
// step), for the fused R2C step of L > 4096 (not DIRECT; column passes
// are at most 4096 points) an output buffer that level 2 writes into, so
// that the next block's input can stream into the input buffer while
// level 2 and the real step run (tc16_pass.cuh, R2C_BUF), the twiddle
// tables (W_256 per lane; W_R^m, m < R = L / 256, when
// R > 16; when TW the four-step table of each of the C columns, tc.h
// FFTD__TC_TW_COL; and when L1T the level-1 DIT
// twiddles W_L^(a kb) as two factors, fftd__tc_l1_twiddle_*).
template <class P, int L, int C, bool TW, bool DIRECT, bool L1T> struct Smem {
	static constexpr int    PTS   = C * L;
	static constexpr bool   SCR   = fftd__tc_block_scratch(L, C, P::kBytes);
	static constexpr int    NBUFS = !DIRECT && L > 4096 ? 3
	       : SCR && !(L == 256 && DIRECT)                ? 2
	                                                     : 1;
	static constexpr size_t kBytes = (size_t) NBUFS * PTS * P::kBytes
	    + (8 * 32 + (L > 4096 ? L / 256 : 0)
	          + (TW ? C * FFTD__TC_TW_COL(L) : 0)
	          + (L1T ? (L / 256) * (32 + 8) : 0))
	        * sizeof(float2);
};

// Whether a pass applies the level-1 DIT twiddles in level 1 from tables
// (tc.h, fftd__tc_l1_twiddle_lane/elem): every pass with R = L / 256 > 1 except
// the contiguous ones with R <= 8, which apply them in level 2 (MOVE_TW).
__host__ __device__ constexpr bool
l1_tables(int L, bool strided)
{
	return L > 256 && (strided || L > 8 * 256);
}

// Register cap: as many resident blocks as shared memory allows, up to 1024
// threads per SM, so that several blocks overlap their load, compute and
// store phases (228 KiB of shared memory per SM, 1 KiB reserved per block).
template <class P, int L, int C, int W, bool TW, bool DIRECT, bool L1T>
constexpr int
min_blocks()
{
	int by_smem = (int) ((228 * 1024)
	    / (Smem<P, L, C, TW, DIRECT, L1T>::kBytes + 1024));
	int by_thr  = (P::kSplit ? 768 : 1024)
	    / (W * 32); // split16 needs ~80 registers
	int b = by_smem < by_thr ? by_smem : by_thr;
	return b < 1 ? 1 : b;
}

// The level-1 DIT twiddles W_L^(a kb) come from two factor tables indexed by
// fftd__tc_l1_twiddle_lane and fftd__tc_l1_twiddle_elem (tc.h, where the host
// tests check the factorization).

// Offsets of A element e relative to element 0 in a tile whose rows are
// `rs` apart and columns `cs` apart: row + 8 (e bit 1), col + 1 (bit 0),
// col + 8 (bit 2).
FFTD_DEV constexpr uint32_t
elem_off(int e, uint32_t rs, uint32_t cs)
{
	return 8u * rs * ((e >> 1) & 1) + cs * (e & 1) + 8u * cs * (e >> 2);
}

// Index maps of the work items. Each is a bitwise map of its item number
// (powers of two everywhere), so map(x | y) = map(x) | map(y) for x, y with
// disjoint bits: with the linear swizzle, a lane's part is computed once and
// the unrolled loop's part is a compile-time constant.
template <int L, int R>
FFTD_DEV constexpr uint32_t
l1_in(uint32_t tau)
{
	return (tau / R) * L + tau % R;
} // (f, a) -> f L + a
template <int L, int R>
FFTD_DEV constexpr uint32_t
l1_out(uint32_t tau)
{
	return (tau / R) * L + 256 * (tau % R);
} // -> f L + 256 a
template <int L>
FFTD_DEV constexpr uint32_t
l2_pair(uint32_t p)
{
	return (p / 256) * L + p % 256;
} // (f, kb) -> f L + kb
template <int L>
FFTD_DEV constexpr uint32_t
l2_unit(uint32_t u)
{
	return (u / 16) * L + (u % 16) * 16;
} // (f, kb0) -> f L + kb0
// In-place column passes of L = 4096 (tc16_pass.cuh, IP): unit (f, kb0)
// at f L + 16 kb0, and point k = kb + 256 ka of an FFT at
// ip_pos(k) = ka + 16 kb (a bit rotation, so linear like the maps above).
template <int L>
FFTD_DEV constexpr uint32_t
l2_unit_ip(uint32_t u)
{
	return (u / 16) * L + (u % 16) * 256;
}
template <int L>
FFTD_DEV constexpr uint32_t
ip_pos(uint32_t k)
{
	return 16 * (k % 256) + k / 256;
}
template <int L>
FFTD_DEV constexpr uint32_t
l2a_item(uint32_t i)
{
	return (i / 4096) * L + i % 4096;
} // (f, al, kb)
template <int L, int RR>
FFTD_DEV constexpr uint32_t
l2b_in(uint32_t t) // (f, b, kb0) -> f L + kb0 + 4096 b
{
	return (t / (16 * RR)) * L + (t % 16) * 16 + 4096 * ((t / 16) % RR);
}
// In-place contiguous passes of L = 32768 (tc16_pass.cuh, IPC): level 1
// leaves element kb of tile a = alpha + 16 beta at a + R kb (where it read
// it), so level 2a's item (f, alpha, kb) reads its beta at + 16 beta, and
// level 2b's tile (f, kb0, b) has rows kb (step R) and columns alpha (step
// 1).
template <int L, int R>
FFTD_DEV constexpr uint32_t
l2a_item_ip(uint32_t i) // (f, kb, alpha) -> f L + alpha + R kb
{
	return (i / 4096) * L + i % 16 + R * ((i / 16) % 256);
}
template <int L, int R, int RR>
FFTD_DEV constexpr uint32_t
l2b_in_ip(uint32_t t) // (f, b, kb0) -> f L + 16 b + R kb0
{
	return (t / (16 * RR)) * L + (t % 16) * 16 * R + 16 * ((t / 16) % RR);
}
template <int L, int RR>
FFTD_DEV constexpr uint32_t
l2b_out(uint32_t t) // -> f L + kb0 + 256 b
{
	return (t / (16 * RR)) * L + (t % 16) * 16 + 256 * ((t / 16) % RR);
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_SMEM_CUH

// SPDX-License-Identifier: MIT
//
// tc16_ptx.cuh — PRIVATE to kernels/: included by the tc16_*.cuh headers and
// tc_io.cuh only. The inline-PTX and intrinsic wrappers of the kernel family:
// fp16 pair packing, the tensor-core product mma.sync m16n8k16 (register
// layouts as the PTX ISA documents them: never WMMA's unspecified fragment
// order, see tc16_pass.cuh), the movmatrix transpose of a tile, cp.async
// copies into shared memory, and the opaque register copy that keeps the
// compiler from hoisting addresses. No FFT arithmetic here: complex arithmetic
// and small DFTs are in tc16_dft.cuh, tensor-core tiles in tc16_frag.cuh.

#ifndef FFTD_KERNELS_TC16_PTX_CUH
#define FFTD_KERNELS_TC16_PTX_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "tc16_types.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// PTX and intrinsic wrappers.

FFTD_DEV uint32_t
pack_half2(float lo, float hi)
{
	__half2 h = __floats2half2_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&h);
}

FFTD_DEV float2
unpack_half2(uint32_t w)
{
	__half2 h = *reinterpret_cast<__half2 *>(&w);
	return __half22float2(h);
}

// D += A * B, m16n8k16, fp16 inputs, fp32 accumulators (PTX ISA layouts).
FFTD_DEV void
mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
	    "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Transpose of an 8x8 b16 matrix held one row-pair per thread.
FFTD_DEV uint32_t
movt(uint32_t x)
{
	uint32_t y;
	asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
	return y;
}

// A 16x16 A-operand: blocks (rows 0-7 | 8-15) x (cols 0-7 | 8-15) in
// registers 0, 1, 2, 3; its transpose swaps the off-diagonal blocks.
FFTD_DEV void
transpose(uint32_t (&a)[4])
{
	uint32_t t0 = movt(a[0]), t1 = movt(a[2]), t2 = movt(a[1]),
	         t3 = movt(a[3]);
	a[0]        = t0;
	a[1]        = t1;
	a[2]        = t2;
	a[3]        = t3;
}

// cp_async_n copies BYTES (4 or 8) from device memory g to shared memory
// saddr without waiting (cp.async.ca). LINE: with the hint that L2 fetch the
// whole 128-byte line from DRAM (.L2::128B), for column passes whose runs are
// shorter than a line (the rest of the line is other blocks' columns, which
// they read at about the same time).
template <int BYTES, bool LINE = false>
FFTD_DEV void
cp_async_n(uint32_t saddr, const void *g)
{
	static_assert(BYTES == 4 || BYTES == 8, "cp.async of 4 or 8 bytes");
	if (LINE)
		asm volatile(
		    "cp.async.ca.shared.global.L2::128B [%0], [%1], %2;" ::"r"(
		        saddr),
		    "l"(g), "n"(BYTES)
		    : "memory");
	else
		asm volatile(
		    "cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(saddr),
		    "l"(g), "n"(BYTES)
		    : "memory");
}

// A copy the compiler cannot see through: used once per block iteration on
// the per-lane index bases, so that the many addresses derived from them are
// recomputed (one LOP3 each) where they are used instead of being hoisted out
// of the iteration loop and held in registers (which spilled).
FFTD_DEV uint32_t
opaque(uint32_t x)
{
	asm volatile("mov.b32 %0, %0;" : "+r"(x));
	return x;
}

// Marks x as changed, with no instruction: a value the compiler sees change
// it cannot recompute from %tid, so a per-lane base pinned once per block
// iteration stays in its register. Without it the compiler rematerialized
// the bases (and their swizzles) at every use: ~45 extra instructions in a
// 4096-point iteration of ~685.
FFTD_DEV void
pin(uint32_t &x)
{
	asm volatile("" : "+r"(x));
}

FFTD_DEV void
cp_async_commit()
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
FFTD_DEV void
cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_PTX_CUH

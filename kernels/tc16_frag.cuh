// SPDX-License-Identifier: MIT
//
// tc16_frag.cuh — PRIVATE to kernels/: included by tc16_pass.cuh only.
// A 16x16 complex tile as tensor-core operands, and the radix-16 DFT of its
// rows: the fragment types (tc16: fp16 re and im; split16: scaled fp16 hi and
// lo parts and the scale to undo), F16 as B operands (load_dft), packing fp32
// values or shared-memory words into fragments (to_frag, words_to_frag),
// transposing a fragment, and row_dft, the DFT along every row as four
// (tc16) or twelve (split16) mma.sync products. Element order is the
// m16n8k16 one the PTX ISA documents (tc.h, fftd__tc_frag_row/col), never
// WMMA's. Where elements sit in shared memory is tc16_smem.cuh's.

#ifndef FFTD_KERNELS_TC16_FRAG_CUH
#define FFTD_KERNELS_TC16_FRAG_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "tc.h"
#include "tc16_dft.cuh"
#include "tc16_ptx.cuh"
#include "tc16_types.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// Radix-16 tile DFT on the tensor cores.

// Frag: a 16x16 complex tile as A operands; split16 keeps hi and lo parts and
// the scale to undo.
template <bool SPLIT> struct Frag;
template <> struct Frag<false> {
	uint32_t r[4], i[4];
};
template <> struct Frag<true> {
	uint32_t rh[4], rl[4], ih[4], il[4];
	float    inv; // 2^-e
};

// DftB: F16 (or its conjugate) as B operands of the two n8 halves.
template <bool SPLIT> struct DftB;
template <> struct DftB<false> {
	uint32_t r[2][2], i[2][2];
};
template <> struct DftB<true> {
	uint32_t rh[2][2], rl[2][2], ih[2][2], il[2][2];
};

// B fragment (PTX ISA, m16n8k16 .f16 B): register b, half h holds
// B[k = 2 t + h + 8 b][n = g]; for the n8 half j, n = 8 j + g. F16[k][n] =
// W_16^(k n) = tab[((k n) & 15) * L / 16].
template <bool INV, int L>
FFTD_DEV void
load_dft(const float2 *tab, int lane, DftB<false> &F)
{
	int g = lane >> 2, t = lane & 3;
	for (int j = 0; j < 2; j++)
		for (int b = 0; b < 2; b++) {
			float2 w[2];
			for (int h = 0; h < 2; h++) {
				int k = 2 * t + h + 8 * b, n = 8 * j + g;
				w[h] = twiddle<INV>(
				    tab, ((k * n) & 15) * (L / 16));
			}
			F.r[j][b] = pack_half2(w[0].x, w[1].x);
			F.i[j][b] = pack_half2(w[0].y, w[1].y);
		}
}

template <bool INV, int L>
FFTD_DEV void
load_dft(const float2 *tab, int lane, DftB<true> &F)
{
	int g = lane >> 2, t = lane & 3;
	for (int j = 0; j < 2; j++)
		for (int b = 0; b < 2; b++) {
			float2 w[2];
			for (int h = 0; h < 2; h++) {
				int k = 2 * t + h + 8 * b, n = 8 * j + g;
				w[h] = twiddle<INV>(
				    tab, ((k * n) & 15) * (L / 16));
			}
			F.rh[j][b] = pack_half2(w[0].x, w[1].x);
			F.ih[j][b] = pack_half2(w[0].y, w[1].y);
			float2 hr  = unpack_half2(F.rh[j][b]);
			float2 hi  = unpack_half2(F.ih[j][b]);
			F.rl[j][b] = pack_half2(w[0].x - hr.x, w[1].x - hr.y);
			F.il[j][b] = pack_half2(w[0].y - hi.x, w[1].y - hi.y);
		}
}

// Packs 8 complex fp32 values (A element order) into a fragment. split16
// scales by the power of two that brings the tile's largest magnitude into
// [2^13, 2^14) (the same for the whole warp: one scale per tile).
FFTD_DEV void
to_frag(const float (&re)[8], const float (&im)[8], Frag<false> &x)
{
	for (int k = 0; k < 4; k++) {
		x.r[k] = pack_half2(re[2 * k], re[2 * k + 1]);
		x.i[k] = pack_half2(im[2 * k], im[2 * k + 1]);
	}
}

FFTD_DEV void
to_frag(const float (&re)[8], const float (&im)[8], Frag<true> &x)
{
	uint32_t m = 0;
	for (int e = 0; e < 8; e++) {
		m = max(m, __float_as_uint(fabsf(re[e])));
		m = max(m, __float_as_uint(fabsf(im[e])));
	}
	m       = __reduce_max_sync(0xffffffffu, m);
	int   e = fftd__tc_scale_exp(m);
	float s = __uint_as_float((uint32_t) (127 + e) << 23);
	x.inv   = __uint_as_float((uint32_t) (127 - e) << 23);
	for (int k = 0; k < 4; k++) {
		float a = re[2 * k] * s, b = re[2 * k + 1] * s;
		x.rh[k]  = pack_half2(a, b);
		float2 h = unpack_half2(x.rh[k]);
		x.rl[k]  = pack_half2(a - h.x, b - h.y);
		a        = im[2 * k] * s;
		b        = im[2 * k + 1] * s;
		x.ih[k]  = pack_half2(a, b);
		h        = unpack_half2(x.ih[k]);
		x.il[k]  = pack_half2(a - h.x, b - h.y);
	}
}

FFTD_DEV void
transpose(Frag<false> &x)
{
	transpose(x.r);
	transpose(x.i);
}
FFTD_DEV void
transpose(Frag<true> &x)
{
	transpose(x.rh);
	transpose(x.rl);
	transpose(x.ih);
	transpose(x.il);
}

FFTD_DEV void
neg(const uint32_t (&a)[4], uint32_t (&n)[4])
{
	for (int k = 0; k < 4; k++)
		n[k] = a[k] ^ 0x80008000u;
}

// Y = X * F16 (a DFT along every row of the tile); y[4 j + c] is accumulator
// element c of n8 half j, which is A element 4 j + c.
FFTD_DEV void
row_dft(
    const Frag<false> &x, const DftB<false> &F, float (&yr)[8], float (&yi)[8])
{
	uint32_t ni[4];
	neg(x.i, ni);
	for (int j = 0; j < 2; j++) {
		float dr[4] = { 0.f, 0.f, 0.f, 0.f },
		      di[4] = { 0.f, 0.f, 0.f, 0.f };
		mma(dr, x.r, F.r[j][0], F.r[j][1]);
		mma(dr, ni, F.i[j][0], F.i[j][1]);
		mma(di, x.r, F.i[j][0], F.i[j][1]);
		mma(di, x.i, F.r[j][0], F.r[j][1]);
		for (int c = 0; c < 4; c++) {
			yr[4 * j + c] = dr[c];
			yi[4 * j + c] = di[c];
		}
	}
}

FFTD_DEV void
row_dft(
    const Frag<true> &x, const DftB<true> &F, float (&yr)[8], float (&yi)[8])
{
	uint32_t nih[4], nil[4];
	neg(x.ih, nih);
	neg(x.il, nil);
	for (int j = 0; j < 2; j++) {
		float dr[4] = { 0.f, 0.f, 0.f, 0.f },
		      di[4] = { 0.f, 0.f, 0.f, 0.f };
		// small terms first, the hi*hi products last
		mma(dr, x.rl, F.rh[j][0], F.rh[j][1]);
		mma(dr, x.rh, F.rl[j][0], F.rl[j][1]);
		mma(dr, nil, F.ih[j][0], F.ih[j][1]);
		mma(dr, nih, F.il[j][0], F.il[j][1]);
		mma(dr, x.rh, F.rh[j][0], F.rh[j][1]);
		mma(dr, nih, F.ih[j][0], F.ih[j][1]);
		mma(di, x.rl, F.ih[j][0], F.ih[j][1]);
		mma(di, x.rh, F.il[j][0], F.il[j][1]);
		mma(di, x.il, F.rh[j][0], F.rh[j][1]);
		mma(di, x.ih, F.rl[j][0], F.rl[j][1]);
		mma(di, x.rh, F.ih[j][0], F.ih[j][1]);
		mma(di, x.ih, F.rh[j][0], F.rh[j][1]);
		for (int c = 0; c < 4; c++) {
			yr[4 * j + c] = dr[c] * x.inv;
			yi[4 * j + c] = di[c] * x.inv;
		}
	}
}

// Fragment from 8 shared-memory words. tc16 regroups the (re, im) half pairs
// into re and im operands with two byte permutes per register, no cvt.
FFTD_DEV void
words_to_frag(const uint32_t (&w)[8], Frag<false> &x)
{
	for (int k = 0; k < 4; k++) {
		x.r[k] = __byte_perm(w[2 * k], w[2 * k + 1], 0x5410);
		x.i[k] = __byte_perm(w[2 * k], w[2 * k + 1], 0x7632);
	}
}
FFTD_DEV void
words_to_frag(const float2 (&w)[8], Frag<true> &x)
{
	float re[8], im[8];
	for (int e = 0; e < 8; e++) {
		re[e] = w[e].x;
		im[e] = w[e].y;
	}
	to_frag(re, im, x);
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_FRAG_CUH

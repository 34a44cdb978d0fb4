// SPDX-License-Identifier: MIT
//
// tc16_dft.cuh — PRIVATE to kernels/: included by the tc16_*.cuh headers
// only. Complex fp32 arithmetic on the CUDA cores: the complex product, the
// read of a twiddle table (conjugated for the inverse), a twiddle of a
// power-of-two N computed (twiddle_pow2), and the small
// natural-order DFTs of 1, 2, 4, 8 and 16 points (SmallDft) that level 2 of the
// pass kernel (tc16_pass.cuh) and the radix kernel (tc16_radix.cuh) run. The
// radix-16 DFTs on the tensor cores are in tc16_frag.cuh.

#ifndef FFTD_KERNELS_TC16_DFT_CUH
#define FFTD_KERNELS_TC16_DFT_CUH

#include <cuda_runtime.h>

#include "tc16_types.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// Complex arithmetic.

FFTD_DEV float2
cmul(float2 a, float2 b)
{
	return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

template <bool INV>
FFTD_DEV float2
twiddle(const float2 *tab, int j)
{
	float2 w = __ldg(tab + j);
	if (INV)
		w.y = -w.y;
	return w;
}

// W_N^m = exp(-2 pi i m / N) (conjugated when INV) for N = 2^n_log2, m < N:
// cos and sin of pi x, x = 2 m / N, by sincospi in double rounded to float
// (ROUNDED: split16, whose fp32 accuracy they bound), else by sincospif
// (within 1 ulp; enough for tc16's fp16 data, and it keeps tc16's column
// kernels free of spills); x is exact in both (m < 2^24 in float), and
// both are exact at the quarter points. For tables made at run time
// (four-step twiddles, tc16_pass.cuh), where a table in device memory would
// be a scattered load per point.
template <bool INV, bool ROUNDED>
FFTD_DEV float2
twiddle_pow2(long long m, int n_log2)
{
	if (ROUNDED || m >= (1LL << 24)) {
		double s, c;
		sincospi(ldexp((double) m, 1 - n_log2), &s, &c);
		return make_float2((float) c, (float) (INV ? s : -s));
	}
	float s, c;
	sincospif(ldexpf((float) m, 1 - n_log2), &s, &c);
	return make_float2(c, INV ? s : -s);
}

// ---------------------------------------------------------------------------
// Small DFTs on the CUDA cores, natural order in and out, fp32.

template <bool INV>
FFTD_DEV float2
mul_mi(float2 x) // x * (-i) forward, x * (+i) inverse
{
	return INV ? make_float2(-x.y, x.x) : make_float2(x.y, -x.x);
}
FFTD_DEV float2
add2(float2 a, float2 b)
{
	return make_float2(a.x + b.x, a.y + b.y);
}
FFTD_DEV float2
sub2(float2 a, float2 b)
{
	return make_float2(a.x - b.x, a.y - b.y);
}

template <int N, bool INV> struct SmallDft;

template <bool INV> struct SmallDft<1, INV> {
	static FFTD_DEV void run(float2 *)
	{
	}
};

template <bool INV> struct SmallDft<2, INV> {
	static FFTD_DEV void run(float2 *x)
	{
		float2 a = x[0], b = x[1];
		x[0] = add2(a, b);
		x[1] = sub2(a, b);
	}
};

template <bool INV> struct SmallDft<4, INV> {
	static FFTD_DEV void run(float2 *x)
	{
		float2 s02 = add2(x[0], x[2]), d02 = sub2(x[0], x[2]);
		float2 s13 = add2(x[1], x[3]),
		       d13 = mul_mi<INV>(sub2(x[1], x[3]));
		x[0]       = add2(s02, s13);
		x[2]       = sub2(s02, s13);
		x[1]       = add2(d02, d13);
		x[3]       = sub2(d02, d13);
	}
};

template <bool INV> struct SmallDft<8, INV> {
	static FFTD_DEV void run(float2 *x)
	{
		const float r    = 0.70710678118654752440f;
		float2      e[4] = { x[0], x[2], x[4], x[6] };
		float2      o[4] = { x[1], x[3], x[5], x[7] };
		SmallDft<4, INV>::run(e);
		SmallDft<4, INV>::run(o);
		// o[k] *= W_8^k
		float2 w1 = INV ? make_float2(r, r) : make_float2(r, -r);
		float2 w3 = INV ? make_float2(-r, r) : make_float2(-r, -r);
		o[1]      = cmul(o[1], w1);
		o[2]      = mul_mi<INV>(o[2]);
		o[3]      = cmul(o[3], w3);
		for (int k = 0; k < 4; k++) {
			x[k]     = add2(e[k], o[k]);
			x[k + 4] = sub2(e[k], o[k]);
		}
	}
};

// 16 points as 4 x 4 (n = 4 n1 + n2, k = k1 + 4 k2): four 4-point DFTs
// over n1, the twiddles W_16^(n2 k1), four 4-point DFTs over n2.
template <bool INV> struct SmallDft<16, INV> {
	static FFTD_DEV void run(float2 *x)
	{
		// cos and sin of 2 pi m / 16 for m = 1, 2, 3
		const float c1 = 0.92387953251128675613f,
		            s1 = 0.38268343236508977173f,
		            r  = 0.70710678118654752440f;
		const float sg = INV ? 1.0f : -1.0f;
		float2      y[4][4];
#pragma unroll
		for (int n2 = 0; n2 < 4; n2++) {
#pragma unroll
			for (int n1 = 0; n1 < 4; n1++)
				y[n2][n1] = x[4 * n1 + n2];
			SmallDft<4, INV>::run(y[n2]);
		}
		// W_16^m, m = n2 k1 in {1, 2, 3, 4, 6, 9}
		y[1][1] = cmul(y[1][1], make_float2(c1, sg * s1));
		y[1][2] = cmul(y[1][2], make_float2(r, sg * r));
		y[1][3] = cmul(y[1][3], make_float2(s1, sg * c1));
		y[2][1] = cmul(y[2][1], make_float2(r, sg * r));
		y[2][2] = mul_mi<INV>(y[2][2]);
		y[2][3] = cmul(y[2][3], make_float2(-r, sg * r));
		y[3][1] = cmul(y[3][1], make_float2(s1, sg * c1));
		y[3][2] = cmul(y[3][2], make_float2(-r, sg * r));
		y[3][3] = cmul(y[3][3], make_float2(-c1, -sg * s1));
#pragma unroll
		for (int k1 = 0; k1 < 4; k1++) {
			float2 v[4]
			    = { y[0][k1], y[1][k1], y[2][k1], y[3][k1] };
			SmallDft<4, INV>::run(v);
#pragma unroll
			for (int k2 = 0; k2 < 4; k2++)
				x[k1 + 4 * k2] = v[k2];
		}
	}
};

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_DFT_CUH

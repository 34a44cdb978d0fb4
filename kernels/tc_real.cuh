// SPDX-License-Identifier: MIT
//
// tc_real.cuh — PRIVATE to kernels/: included by tc16.cu and split16.cu
// only. The real-transform steps of tc16 and split16 R2C and C2R (tc.h,
// FFTD__TC_OP_*): the R2C post-process, which turns the complex transform Z
// of the real data read as n/2 complex points per row into the n/2 + 1
// non-redundant outputs of each row, and the C2R pre-process, its mirror,
// which builds from the half spectrum the Z whose inverse complex transform
// is the real output. The formulas and their source are at
// fftd__tc_plan_layout_type (kernels/tc_host.c): the standard "real FFT via
// a complex FFT of half the length" (Numerical Recipes, 3rd ed., 12.3.2),
// with the negation -K of the leading indices taken on every axis for rank >
// 1. Both are separate kernels (one read of two points and one write per
// point, fp32 arithmetic, twiddles W_n^k from sincospif of the exact
// fraction k / (n/2)); fusing them into the last (first) complex pass is
// left for later.

#ifndef FFTD_KERNELS_TC_REAL_CUH
#define FFTD_KERNELS_TC_REAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tc16_dft.cuh"
#include "tc16_types.cuh"
#include "tc_io.cuh"

namespace fftd_tc
{

// real_mirror returns the row of -K for row r = b P + K (K over the leading
// axes, a.nd of them, of log2 sizes a.dlog2[0 .. nd-1], innermost first):
// every axis's index negated modulo its size, b unchanged.
FFTD_DEV long long
real_mirror(const PassArgs &a, long long r)
{
	long long m     = r;
	int       shift = 0;
	// unrolled: a dynamic index into a.dlog2 would copy the kernel's
	// parameters to local memory
#pragma unroll
	for (int j = 0; j < 2; j++) {
		if (j < a.nd) {
			const int       l    = a.dlog2[j];
			const long long mask = (1LL << l) - 1;
			const long long f    = (r >> shift) & mask;
			m = (m & ~(mask << shift)) | (((-f) & mask) << shift);
			shift += l;
		}
	}
	return m;
}

// The R2C post-process: a.in holds Z (a.q_total rows of h = a.len complex
// points), a.out receives X (rows of h + 1): X[K][k] = E + W_n^k O with
// E = (A + conj B) / 2, O = -i (A - conj B) / 2, A = Z[K][k mod h],
// B = Z[-K][-k mod h], n = 2h. One output point per thread, grid-stride.
// CV: the last pass of a plan with fused conversion (tc_io.cuh; the
// transform of row r is r >> out_tlog2).
template <class P, bool CV>
__global__ void __launch_bounds__(256) r2c_post_kernel(PassArgs a)
{
	using Word        = typename P::Word;
	const Word     *z = static_cast<const Word *>(a.in);
	Word           *x = static_cast<Word *>(a.out);
	const long long h = a.len, w = h + 1;
	const long long tot  = a.q_total * w;
	const long long step = (long long) gridDim.x * blockDim.x;
	// output i of row r, point k (rows of w = h + 1: not a power of two)
	auto point = [&](long long i, long long r, long long k) {
		const long long rm = real_mirror(a, r);
		const float2    A  = P::load(z[r * h + (k & (h - 1))]);
		const float2    B  = P::load(z[rm * h + ((h - k) & (h - 1))]);
		// with conj B = (B.x, -B.y)
		const float2 e
		    = make_float2(0.5f * (A.x + B.x), 0.5f * (A.y - B.y));
		const float2 o = make_float2(0.5f * (A.y + B.y),
		    -0.5f * (A.x - B.x)); // -i (A - conj B)/2
		float        s, c;
		sincospif(-(float) k / (float) h, &s, &c); // W_n^k
		const float2 t = cmul(o, make_float2(c, s));
		if constexpr (CV)
			io_store<P>(a, i, r, e.x + t.x, e.y + t.y);
		else
			x[i] = P::store(e.x + t.x, e.y + t.y);
	};
	long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
	if (tot <= 0xffffffffLL) {
		// 32-bit division by w: the 64-bit one is a long software
		// routine per point
		for (; i < tot; i += step) {
			const uint32_t r = (uint32_t) i / (uint32_t) w;
			point(i, r, i - (long long) r * w);
		}
	} else {
		for (; i < tot; i += step) {
			const long long r = i / w;
			point(i, r, i - r * w);
		}
	}
}

// The C2R pre-process: a.in holds X (a.q_total rows of h + 1 complex
// points), a.out receives Z (rows of h = a.len): Z[K][m] = (A + conj B) +
// i W_n^-m (A - conj B), A = X[K][m], B = X[-K][h - m], n = 2h.
// CV: the first pass of a plan with fused conversion (tc_io.cuh; the
// transform of row r is r >> in_tlog2).
template <class P, bool CV>
__global__ void __launch_bounds__(256) c2r_pre_kernel(PassArgs a)
{
	using Word        = typename P::Word;
	const Word     *x = static_cast<const Word *>(a.in);
	Word           *z = static_cast<Word *>(a.out);
	const long long h = a.len, w = h + 1;
	const long long tot  = a.q_total * h;
	const long long step = (long long) gridDim.x * blockDim.x;
	for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
	     i < tot; i += step) {
		const long long r = i >> a.len_log2, m = i & (h - 1);
		const long long rm = real_mirror(a, r);
		float2          A, B;
		if constexpr (CV) {
			A = P::load(io_load<P, CV>(a, r * w + m, r));
			B = P::load(io_load<P, CV>(a, rm * w + (h - m), rm));
		} else {
			A = P::load(x[r * w + m]);
			B = P::load(x[rm * w + (h - m)]);
		}
		const float2 s2 = make_float2(A.x + B.x, A.y - B.y);
		const float2 d2 = make_float2(A.x - B.x, A.y + B.y);
		float        s, c;
		sincospif((float) m / (float) h, &s, &c); // W_n^-m
		const float2 t = cmul(d2, make_float2(c, s));
		z[i]           = P::store(s2.x - t.y, s2.y + t.x); // s2 + i t
	}
}

// The kernel of a real step (op FFTD__TC_OP_R2C_POST or _C2R_PRE), or false.
template <class P, bool CV = false>
bool
real_kernel_info(int op, KernelInfo *k)
{
	if (op == FFTD__TC_OP_R2C_POST)
		k->fn = r2c_post_kernel<P, CV>;
	else if (op == FFTD__TC_OP_C2R_PRE)
		k->fn = c2r_pre_kernel<P, CV>;
	else
		return false;
	k->len   = 0;
	k->ffts  = 1; // threads loop over points (grid: tc16_plan.cu)
	k->warps = 8;
	k->smem  = 0;
	return true;
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_REAL_CUH

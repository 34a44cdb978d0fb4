// SPDX-License-Identifier: MIT
//
// tc_real.cuh — PRIVATE to kernels/: included by tc16.cu, split16.cu,
// tc16_io.cu and tc16_pass.cuh only. The real-transform steps of tc16 and
// split16 R2C and C2R (tc.h, FFTD__TC_OP_*): the R2C post-process, which turns
// the complex transform Z of the real data read as n/2 complex points per row
// into the n/2 + 1 non-redundant outputs of each row, and the C2R pre-process,
// its mirror, which builds from the half spectrum the Z whose inverse complex
// transform is the real output. The formulas and their source are at
// fftd__tc_plan_layout_algo (kernels/tc_host.c): the standard "real FFT via
// a complex FFT of half the length" (Numerical Recipes, 3rd ed., 12.3.2),
// with the negation -K of the leading indices taken on every axis for rank >
// 1. Two forms: separate kernels (each point read once and written once, in
// pairs k, h - k, below; the R2C step with 16-byte loads), and, for 1D rows
// of h <= FFTD__TC_MAX_FUSED_REAL points out of place, block-level steps that
// the complex pass itself runs on the rows in its shared memory (r2c_rows,
// c2r_rows; tc16_pass.cuh, RSTEP): one kernel and one pass over device
// memory instead of two. fp32 arithmetic; twiddles W_n^k from the exact
// fraction k / (n/2) (real_twiddle).

#ifndef FFTD_KERNELS_TC_REAL_CUH
#define FFTD_KERNELS_TC_REAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tc16_dft.cuh"
#include "tc16_ptx.cuh"
#include "tc16_types.cuh"
#include "tc_io.cuh"

namespace fftd_tc
{

// Pairs a thread loads before it computes any (REAL_U: four loads in flight
// a thread, enough of device memory's latency hidden at full occupancy,
// which 32 registers allow: real_min_blocks blocks an SM; fewer
// where a conversion or 64-bit indices spilled at 32 or 40 registers).
constexpr int REAL_U       = 2;
constexpr int REAL_THREADS = 256; // a block

template <bool CV, class I, bool VEC = false>
constexpr int
real_min_blocks()
{
	return sizeof(I) > 4 ? 4 : CV || VEC ? 6 : 8;
}

// real_mirror returns the row of -K for row r = b P + K (K over the leading
// axes, a.nd of them, of log2 sizes a.dlog2[0 .. nd-1], innermost first):
// every axis's index negated modulo its size, b unchanged. I: the index
// type (32-bit where the step's points fit).
template <class I>
FFTD_DEV I
real_mirror(const PassArgs &a, I r)
{
	I   m     = r;
	int shift = 0;
	// unrolled: a dynamic index into a.dlog2 would copy the kernel's
	// parameters to local memory
#pragma unroll
	for (int j = 0; j < 2; j++) {
		if (j < a.nd) {
			const int l    = a.dlog2[j];
			const I   mask = (I(1) << l) - 1;
			const I   f    = (r >> shift) & mask;
			m              = (m & ~(mask << shift))
			    | (((I(0) - f) & mask) << shift);
			shift += l;
		}
	}
	return m;
}

// real_twiddle is W_n^k = exp(-i pi k / h) for x = k / h (n = 2h; x is
// exact for k < 2^24, h being a power of two, and within 2^-24 relative
// beyond, rows of 2^25 points and more). tc16 takes the hardware sine and
// cosine (absolute error about 2^-21 on [-pi, pi], far below fp16's 2^-11
// rounding), split16 sincospif (fp32-accurate).
template <class P>
FFTD_DEV float2
real_twiddle(float x)
{
	float s, c;
	if constexpr (P::kSplit)
		sincospif(-x, &s, &c);
	else
		__sincosf(-3.14159265358979f * x, &s, &c);
	return make_float2(c, s);
}

// r2c_pair_w gives the two outputs of the R2C pair (k, h - k) from A =
// Z[K][k mod h], B = Z[-K][-k mod h] and w = W_n^k (the formulas below): xl
// = X[K][k] = E + T and xh = X[-K][h - k] = conj(E - T), T = w O.
template <class P>
FFTD_DEV void
r2c_pair_w(float2 w, float2 A, float2 B, float2 &xl, float2 &xh)
{
	const float2 e = make_float2(0.5f * (A.x + B.x), 0.5f * (A.y - B.y));
	const float2 o = make_float2(
	    0.5f * (A.y + B.y), -0.5f * (A.x - B.x)); // -i (A - conj B)/2
	const float2 t = cmul(o, w);
	xl             = make_float2(e.x + t.x, e.y + t.y);
	xh             = make_float2(e.x - t.x, t.y - e.y);
}

// r2c_pair: r2c_pair_w with w = W_n^k (inv_h = 1 / h).
template <class P, class I>
FFTD_DEV void
r2c_pair(I k, float inv_h, float2 A, float2 B, float2 &xl, float2 &xh)
{
	r2c_pair_w<P>(real_twiddle<P>((float) k * inv_h), A, B, xl, xh);
}

// c2r_pair_w gives the two outputs of the C2R pair (m, h - m) from A =
// X[K][m], B = X[-K][h - m] and w = W_n^m (the formulas at c2r_pre): zl =
// Z[K][m] = s2 + i t and zh = Z[-K][h - m] = conj(s2 - i t), s2 = A + conj
// B, t = conj(w) (A - conj B).
template <class P>
FFTD_DEV void
c2r_pair_w(float2 w, float2 A, float2 B, float2 &zl, float2 &zh)
{
	const float2 s2 = make_float2(A.x + B.x, A.y - B.y);
	const float2 d2 = make_float2(A.x - B.x, A.y + B.y);
	w.y             = -w.y; // W_n^-m = conj(W_n^m)
	const float2 t  = cmul(d2, w);
	zl              = make_float2(s2.x - t.y, s2.y + t.x);
	zh              = make_float2(s2.x + t.y, t.x - s2.y);
}

// c2r_pair: c2r_pair_w with w = W_n^m (inv_h = 1 / h).
template <class P, class I>
FFTD_DEV void
c2r_pair(I m, float inv_h, float2 A, float2 B, float2 &zl, float2 &zh)
{
	c2r_pair_w<P>(real_twiddle<P>((float) m * inv_h), A, B, zl, zh);
}

// Both steps pair point k of row r with point h - k of the mirror row rm =
// -K (real_mirror): the two outputs read the same two inputs, so each
// thread reads the pair once and writes both (one read and one write per
// point, the least a separate step can move) and computes one twiddle for
// both, since W_n^(h-k) = -conj(W_n^k). A thread takes pairs k < h/2 of
// its row; the middle pair k = h/2 goes to the thread of k = 0 in the lower
// of r and rm, so every output is written once. Index arithmetic is 32-bit
// where the step's points fit (I = uint32_t, real_fits32): 64-bit shifts
// and masks cost two instructions each, and with the division by h that
// the twiddle's fraction used to take they were most of a thread's work.
//
// The R2C post-process: a.in holds Z (a.q_total rows of h = a.len complex
// points), a.out receives X (rows of h + 1): X[K][k] = E + W_n^k O with
// E = (A + conj B) / 2, O = -i (A - conj B) / 2, A = Z[K][k mod h],
// B = Z[-K][-k mod h], n = 2h. Swapping A and B conjugates E and O, so the
// pair's other output is X[-K][h - k] = conj(E - W_n^k O).
// CV: the last pass of a plan with fused conversion (tc_io.cuh; the
// transform of row r is r >> out_tlog2).
template <class P, bool CV, class I>
FFTD_DEV void
r2c_post(const PassArgs &a)
{
	using Word    = typename P::Word;
	const Word *z = static_cast<const Word *>(a.in);
	Word       *x = static_cast<Word *>(a.out);
	const I     h = (I) a.len, w = h + 1;
	const int   lgp   = a.len_log2 - 1; // h / 2 pairs a row
	const I     tot   = (I) a.q_total << lgp;
	const I     step  = (I) gridDim.x * blockDim.x;
	const float inv_h = 1.0f / (float) a.len; // exact: a power of two
	auto        put   = [&](I r, I i, float re, float im) {
                if constexpr (CV)
                        io_store<P>(a, i, r, re, im);
                else
                        x[i] = P::store(re, im);
	};
	// the outputs X[r][k] and, when two, X[rm][h - k] of one pair
	auto pair = [&](I r, I rm, I k, float2 A, float2 B, bool two) {
		float2 xl, xh;
		r2c_pair<P>(k, inv_h, A, B, xl, xh);
		put(r, r * w + k, xl.x, xl.y);
		if (two)
			put(rm, rm * w + (h - k), xh.x, xh.y);
	};
	for (I i0 = (I) blockIdx.x * blockDim.x + threadIdx.x; i0 < tot;
	     i0 += REAL_U * step) {
		Word A[REAL_U], B[REAL_U];
#pragma unroll
		for (int u = 0; u < REAL_U; u++) {
			const I i = i0 + u * step;
			const I r = i >> lgp, k = i & ((I(1) << lgp) - 1);
			const I rm = real_mirror<I>(a, r);
			if (i < tot) {
				A[u] = z[r * h + k];
				B[u] = z[rm * h + ((h - k) & (h - 1))];
			}
		}
#pragma unroll
		for (int u = 0; u < REAL_U; u++) {
			const I i = i0 + u * step;
			if (i >= tot)
				break;
			const I r = i >> lgp, k = i & ((I(1) << lgp) - 1);
			const I rm = real_mirror<I>(a, r);
			pair(r, rm, k, P::load(A[u]), P::load(B[u]), true);
			if (k == 0 && r <= rm)
				pair(r, rm, h / 2, P::load(z[r * h + h / 2]),
				    P::load(z[rm * h + h / 2]), r != rm);
		}
	}
}

// The R2C post-process with 16-byte loads (z 16-byte aligned; rows of at
// least 32 points, FFTD__TC_MIN_REAL_LAST, so four pairs never straddle a
// row or the middle): thread v takes the four pairs k = 4v' .. 4v' + 3 of
// its row, loading Z[r][k .. k+3] and Z[rm][h-k-4 .. h-k-1] as vectors and
// Z[rm][h-k] (a neighbour's vector, an L1 hit) alone. With one 4-byte load a
// thread the step ran at 45% of DRAM's bandwidth, stalled on L1TEX (ncu, H200);
// wider loads put four times the bytes behind each request. The outputs go
// through a per-warp staging area in shared memory so that each store
// instruction writes 32 consecutive points of a row: stored straight from
// registers (a stride of four points across the warp) the step was slower than
// with 4-byte loads (H200, R2C 1D 4096: 0.243 ms against 0.217, staged
// 0.178).
constexpr int REAL_STG = 128 + 4; // staged outputs a warp (128), padded

template <class P>
FFTD_DEV void
load4(const typename P::Word *p, typename P::Word (&v)[4])
{
	if constexpr (P::kSplit) {
		const float4 a = reinterpret_cast<const float4 *>(p)[0];
		const float4 b = reinterpret_cast<const float4 *>(p)[1];
		v[0]           = make_float2(a.x, a.y);
		v[1]           = make_float2(a.z, a.w);
		v[2]           = make_float2(b.x, b.y);
		v[3]           = make_float2(b.z, b.w);
	} else {
		const uint4 a = *reinterpret_cast<const uint4 *>(p);
		v[0]          = a.x;
		v[1]          = a.y;
		v[2]          = a.z;
		v[3]          = a.w;
	}
}

template <class P, bool CV, class I>
FFTD_DEV void
r2c_post_vec(const PassArgs &a, float2 *stg)
{
	using Word    = typename P::Word;
	const Word *z = static_cast<const Word *>(a.in);
	Word       *x = static_cast<Word *>(a.out);
	const I     h = (I) a.len, w = h + 1;
	const int   lgp   = a.len_log2 - 1; // h / 2 pairs a row
	const I     tot   = (I) a.q_total << lgp;
	const I     tot4  = tot >> 2;
	const I     step  = (I) gridDim.x * blockDim.x;
	const float inv_h = 1.0f / (float) a.len; // exact: a power of two
	const int   lane  = threadIdx.x & 31;
	float2     *lo    = stg + (threadIdx.x >> 5) * 2 * REAL_STG;
	float2     *hi    = lo + REAL_STG;
	auto        put   = [&](I r, I i, float2 v) {
                if constexpr (CV)
                        io_store<P>(a, i, r, v.x, v.y);
                else
                        x[i] = P::store(v.x, v.y);
	};
	// X[r][k] and X[rm][h - k]
	auto pair = [&](I k, float2 A, float2 B, float2 &xl, float2 &xh) {
		r2c_pair<P>(k, inv_h, A, B, xl, xh);
	};
	auto at = [](int e) { return e + (e >> 5); };
	// every lane runs the same iterations (the staging area is the
	// warp's): lanes past the end only skip their loads and stores
	const I v0 = (I) (blockIdx.x * blockDim.x + (threadIdx.x & ~31u));
	for (I vw = v0; vw < tot4; vw += step) {
		const I v = vw + lane;
		float2  xl[4], xh[4];
		I       r = 0, rm = 0, k = 0;
		if (v < tot4) {
			const I i = v << 2;
			r         = i >> lgp;
			k         = i & ((I(1) << lgp) - 1);
			rm        = real_mirror<I>(a, r);
			Word za[4], zm[4];
			load4<P>(z + r * h + k, za);
			load4<P>(z + rm * h + (h - k - 4), zm);
			const Word b0 = z[rm * h + ((h - k) & (h - 1))];
			pair(k, P::load(za[0]), P::load(b0), xl[0], xh[0]);
#pragma unroll
			for (int u = 1; u < 4; u++)
				pair(k + u, P::load(za[u]), P::load(zm[4 - u]),
				    xl[u], xh[u]);
			if (k == 0 && r <= rm) {
				// the middle pair k = h/2 (written once)
				float2 ml, mh;
				pair(h / 2, P::load(z[r * h + h / 2]),
				    P::load(z[rm * h + h / 2]), ml, mh);
				put(r, r * w + h / 2, ml);
				if (r != rm)
					put(rm, rm * w + h / 2, mh);
			}
		}
#pragma unroll
		for (int u = 0; u < 4; u++) {
			lo[at(4 * lane + u)] = xl[u];
			hi[at(4 * lane + u)] = xh[u];
		}
		__syncwarp();
		// element e of the warp's 128 pairs: 32 consecutive
		// ones a store
#pragma unroll
		for (int u = 0; u < 4; u++) {
			const int e = 32 * u + lane;
			const I   i = (vw << 2) + e;
			if (i < tot) {
				const I re  = i >> lgp;
				const I ke  = i & ((I(1) << lgp) - 1);
				const I rme = real_mirror<I>(a, re);
				put(re, re * w + ke, lo[at(e)]);
				put(rme, rme * w + (h - ke), hi[at(e)]);
			}
		}
		__syncwarp();
	}
}

// The C2R pre-process: a.in holds X (a.q_total rows of h + 1 complex
// points), a.out receives Z (rows of h = a.len): Z[K][m] = (A + conj B) +
// i W_n^-m (A - conj B), A = X[K][m], B = X[-K][h - m], n = 2h. Swapping A
// and B conjugates A + conj B and negates the conjugate of A - conj B, so
// the pair's other output is Z[-K][h - m] = conj((A + conj B) - i W_n^-m
// (A - conj B)) (none for m = 0: Z has no point h).
// CV: the first pass of a plan with fused conversion (tc_io.cuh; the
// transform of row r is r >> in_tlog2).
template <class P, bool CV, class I>
FFTD_DEV void
c2r_pre(const PassArgs &a)
{
	using Word    = typename P::Word;
	Word       *z = static_cast<Word *>(a.out);
	const I     h = (I) a.len, w = h + 1;
	const int   lgp   = a.len_log2 - 1;
	const I     tot   = (I) a.q_total << lgp;
	const I     step  = (I) gridDim.x * blockDim.x;
	const float inv_h = 1.0f / (float) a.len;
	auto        get   = [&](I r, I i) {
                if constexpr (CV)
                        return io_load<P, CV>(a, i, r);
                else
                        return static_cast<const Word *>(a.in)[i];
	};
	auto pair = [&](I r, I rm, I m, float2 A, float2 B, bool two) {
		float2 zl, zh;
		c2r_pair<P>(m, inv_h, A, B, zl, zh);
		z[r * h + m] = P::store(zl.x, zl.y);
		if (two)
			z[rm * h + (h - m)] = P::store(zh.x, zh.y);
	};
	for (I i0 = (I) blockIdx.x * blockDim.x + threadIdx.x; i0 < tot;
	     i0 += REAL_U * step) {
		Word A[REAL_U], B[REAL_U];
#pragma unroll
		for (int u = 0; u < REAL_U; u++) {
			const I i = i0 + u * step;
			const I r = i >> lgp, m = i & ((I(1) << lgp) - 1);
			const I rm = real_mirror<I>(a, r);
			if (i < tot) {
				A[u] = get(r, r * w + m);
				B[u] = get(rm, rm * w + (h - m));
			}
		}
#pragma unroll
		for (int u = 0; u < REAL_U; u++) {
			const I i = i0 + u * step;
			if (i >= tot)
				break;
			const I r = i >> lgp, m = i & ((I(1) << lgp) - 1);
			const I rm = real_mirror<I>(a, r);
			pair(r, rm, m, P::load(A[u]), P::load(B[u]), m > 0);
			if (m == 0 && r <= rm)
				pair(r, rm, h / 2,
				    P::load(get(r, r * w + h / 2)),
				    P::load(get(rm, rm * w + h / 2)), r != rm);
		}
	}
}

// The real steps fused into a contiguous 1D pass (tc16_pass.cuh, RSTEP):
// the block's C rows, transforms q = it C + f (f < C) of L = h points, sit
// in its shared memory at f L + k in natural order, at byte offset sb(f L +
// k) (the pass's swizzle, linear: sb(x ^ y) = sb(x) ^ sb(y)). Its NT
// threads take the C L / 2 pairs (k, h - k), k < h/2, in J steps, unrolled
// (RowSteps): in step j the lanes of a warp take the 32 pairs k = k0 + l of
// one row (k0 a multiple of 32). Lane l reads or writes point k0 + l (32
// consecutive points) and its partner h - k0 - l, which is
//   (h - 32) ^ k0 + (32 - l)    for l > 0 (the 32 points before h - k0,
//                               reversed and moved by one),
//   (h - 32) ^ (k0 - 32)        for l = 0 and k0 > 0,
//   0                           for l = k0 = 0 (point 0 pairs with itself),
// so both offsets are the thread's own (computed once) XOR a constant of
// the step, and the rows of L + 1 points in device memory are at the
// thread's own address plus a constant of the step (an immediate offset):
// no swizzle and no 64-bit index is computed in the loop. The middle points
// h/2 (X = conj(Z) for R2C, Z = 2 conj(X) for C2R, exact) take C threads
// once a block iteration. Rows past a.q_total are skipped (a warp's row is
// one, so whole warps skip). Taken in groups of four steps (a loop, whose
// swizzles were computed), with partners by shuffle and 64-bit row
// addresses, a warp's step of 32 pairs cost ~80 instructions and the step
// as many as the whole FFT (ncu, H200: the fused R2C 1D 1024 pass ran 86.5
// M warp instructions, the 1D 512 C2C pass 41.4 M for the same points);
// unrolled as here ~26, and that pass 58.4 M (0.138 -> 0.102 ms).

// RowSteps: step j of a thread whose warp's first item is w0 = F0 H + K0
// (F0 = 0 when NT <= H) takes row F0 + df(j) at k0 = K0 + dk(j): H and NT
// are powers of two, one a multiple of the other, so w0's and j NT's parts
// never carry into each other, and point (F0 + df(j)) L + k is the thread's
// base point XOR pos(j).
template <int L, int C, int NT> struct RowSteps {
	static constexpr uint32_t H = L / 2; // pairs a row
	static constexpr int      J = C * H / NT;
	static_assert(
	    J * NT == C * H && H % 32 == 0 && (H % NT == 0 || NT % H == 0),
	    "pairs");
	static FFTD_DEV constexpr uint32_t df(int j)
	{
		return (uint32_t) j * NT / H;
	}
	static FFTD_DEV constexpr uint32_t dk(int j)
	{
		return (uint32_t) j * NT % H;
	}
	static FFTD_DEV constexpr uint32_t pos(int j)
	{
		return df(j) * L + dk(j);
	}
	// step j's offsets in device memory (points, signed) from the
	// thread's row[k] and row[L - k] at step 0 (rows of L + 1 points)
	static FFTD_DEV constexpr int lo(int j)
	{
		return (int) (df(j) * (L + 1) + dk(j));
	}
	static FFTD_DEV constexpr int hi(int j)
	{
		return (int) (df(j) * (L + 1)) - (int) dk(j);
	}
	uint32_t F0, kl; // the thread's row and k0 + l at step 0
	uint32_t d0,
	    m0;    // byte offsets at step 0: the lane's point, its partner
	float klf; // kl as a float (exact)
	bool  kz;  // lane 0 of a warp of K0 = 0
	// all from an opaque copy of the thread index (tc16_ptx.cuh), computed
	// where the step runs: hoisted out of the pass's block loop, these
	// values held registers across the whole FFT, which then spilled
	template <class Sb> FFTD_DEV RowSteps(Sb sb)
	{
		const uint32_t tid  = opaque(threadIdx.x);
		const uint32_t lane = tid & 31, w0 = tid & ~31u;
		const uint32_t K0 = w0 % H;
		F0                = w0 / H;
		kl                = K0 + lane;
		klf               = (float) kl;
		kz                = kl == 0;
		const uint32_t pm = lane ? (((L - 32) ^ K0) | (32 - lane))
		    : K0                 ? ((L - 32) ^ (K0 - 32))
		                         : 0;
		d0                = sb(F0 * L + kl);
		m0                = sb(F0 * L + pm);
	}
	template <class Sb> FFTD_DEV uint32_t d(Sb sb, int j) const
	{
		return d0 ^ sb(pos(j));
	}
	template <class Sb> FFTD_DEV uint32_t m(Sb sb, int j) const
	{
		// k0 = dk(j) > 0 for lane 0 of K0 = 0 (then NT <= H, F0 = 0):
		// point df(j) L + h - dk(j), a constant
		if (dk(j) != 0 && kz)
			return sb(df(j) * L + L - dk(j));
		return m0 ^ sb(pos(j));
	}
	// W_n^k, k = kl + dk(j), as real_twiddle: split16 from the exact
	// fraction k / h, tc16 from -pi k / h formed by one fma
	template <class P> FFTD_DEV float2 twiddle(int j) const
	{
		if constexpr (P::kSplit)
			return real_twiddle<P>(
			    fmaf(klf, 1.0f / L, (float) dk(j) / L));
		float s, c;
		__sincosf(fmaf(klf, -3.14159265358979f / L,
		              -3.14159265358979f * (float) dk(j) / L),
		    &s, &c);
		return make_float2(c, s);
	}
};

// r2c_rows: Z in shared memory (z(offset) reads a word) -> X in a.out,
// rows of L + 1 (R2C output).
template <class P, int L, int C, int NT, class Sb, class Get>
FFTD_DEV void
r2c_rows(const PassArgs &a, long long it, Sb sb, Get z)
{
	using Word = typename P::Word;
	using S    = RowSteps<L, C, NT>;
	const S         s(sb);
	const long long left = a.q_total - it * C; // rows (>= 1)
	Word *const     row0 = static_cast<Word *>(a.out) + it * C * (L + 1);
	if (threadIdx.x < (unsigned) C && threadIdx.x < left) {
		const float2 v = P::load(z(sb(threadIdx.x * L + S::H)));
		row0[threadIdx.x * (L + 1) + S::H] = P::store(v.x, -v.y);
	}
	// the thread's rows from F0 on: nl of them
	const int   nl  = left - s.F0 < C ? (int) (left - s.F0) : C;
	Word *const plo = row0 + s.F0 * (L + 1) + s.kl; // row[k]
	Word *const phi = plo + (L - 2 * (int) s.kl);   // row[L - k]
#pragma unroll
	for (int j = 0; j < S::J; j++) {
		if ((int) S::df(j) >= nl)
			break;
		float2 xl, xh;
		r2c_pair_w<P>(s.template twiddle<P>(j), P::load(z(s.d(sb, j))),
		    P::load(z(s.m(sb, j))), xl, xh);
		// row[k] and row[L - k]
		plo[S::lo(j)] = P::store(xl.x, xl.y);
		phi[S::hi(j)] = P::store(xh.x, xh.y);
	}
}

// c2r_rows: X in a.in, rows of L + 1 (C2R input) -> Z in shared memory
// (put(offset, word) writes one). The loads of G steps are issued before
// their pairs are computed (2 G words in flight a thread).
template <class P, int L, int C, int NT, class Sb, class Put>
FFTD_DEV void
c2r_rows(const PassArgs &a, long long it, Sb sb, Put put)
{
	using Word = typename P::Word;
	using S    = RowSteps<L, C, NT>;
	const S           s(sb);
	const long long   left = a.q_total - it * C;
	const Word *const row0
	    = static_cast<const Word *>(a.in) + it * C * (L + 1);
	if (threadIdx.x < (unsigned) C && threadIdx.x < left) {
		const float2 v = P::load(row0[threadIdx.x * (L + 1) + S::H]);
		put(sb(threadIdx.x * L + S::H),
		    P::store(2.0f * v.x, -2.0f * v.y));
	}
	const int         nl  = left - s.F0 < C ? (int) (left - s.F0) : C;
	const Word *const plo = row0 + s.F0 * (L + 1) + s.kl;
	const Word *const phi = plo + (L - 2 * (int) s.kl);
	// groups of G steps, all loads of a group before its pairs: with all
	// J steps' loads first the 64 registers spilled 112-192 bytes
	constexpr int G = P::kSplit || NT > 256 ? 1 : S::J < 4 ? S::J : 4;
#pragma unroll
	for (int j0 = 0; j0 < S::J; j0 += G) {
		Word A[G], B[G];
#pragma unroll
		for (int g = 0; g < G; g++) {
			const int j = j0 + g;
			if ((int) S::df(j) < nl) {
				A[g] = plo[S::lo(j)];
				B[g] = phi[S::hi(j)];
			}
		}
#pragma unroll
		for (int g = 0; g < G; g++) {
			const int j = j0 + g;
			if ((int) S::df(j) >= nl)
				return;
			float2 zl, zh;
			c2r_pair_w<P>(s.template twiddle<P>(j), P::load(A[g]),
			    P::load(B[g]), zl, zh);
			// Z[h - k], then Z[k]: for k = 0 (lane 0 of K0 = 0,
			// dk(j) = 0) both offsets are point 0, which has no
			// partner (Z has no point h), and Z[0] is written last
			put(s.m(sb, j), P::store(zh.x, zh.y));
			put(s.d(sb, j), P::store(zl.x, zl.y));
		}
	}
}

// real_fits32 says whether a real step's indices fit 32 bits: every point
// of the wider side (q_total rows of len + 1) and the stride of any grid
// (at most 2^21 threads: 2048 an SM, fewer than 1024 SMs) past it. The
// planner picks the 32-bit kernels then: a kernel holding both paths
// takes the registers of the 64-bit one.
FFTD__TC_HD bool
real_fits32(long long q_total, long long len)
{
	return (unsigned long long) q_total * (unsigned long long) (len + 1)
	    + (1ULL << 21)
	    < (1ULL << 32);
}

template <class P, bool CV, class I>
__global__ void
__launch_bounds__(REAL_THREADS, (real_min_blocks<CV, I, true>()))
    r2c_post_kernel(PassArgs a)
{
	__shared__ float2 stg[REAL_THREADS / 32 * 2 * REAL_STG];
	if (((uintptr_t) a.in & 15) == 0)
		r2c_post_vec<P, CV, I>(a, stg);
	else
		r2c_post<P, CV, I>(a);
}

template <class P, bool CV, class I>
__global__ void
__launch_bounds__(REAL_THREADS, (real_min_blocks<CV, I>()))
    c2r_pre_kernel(PassArgs a)
{
	c2r_pre<P, CV, I>(a);
}

// The kernel of a real step (op FFTD__TC_OP_R2C_POST or _C2R_PRE) over
// q_total rows of len points, or false.
template <class P, bool CV = false>
bool
real_kernel_info(int op, long long q_total, long long len, KernelInfo *k)
{
	const bool n32 = real_fits32(q_total, len);
	if (op == FFTD__TC_OP_R2C_POST)
		k->fn = n32 ? r2c_post_kernel<P, CV, uint32_t>
		            : r2c_post_kernel<P, CV, unsigned long long>;
	else if (op == FFTD__TC_OP_C2R_PRE)
		k->fn = n32 ? c2r_pre_kernel<P, CV, uint32_t>
		            : c2r_pre_kernel<P, CV, unsigned long long>;
	else
		return false;
	k->len   = 0;
	k->ffts  = 1; // threads loop over pairs (grid: tc16_plan.cu)
	k->warps = REAL_THREADS / 32;
	k->smem  = 0;
	return true;
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_REAL_CUH

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

// r2c_pair gives the two outputs of the R2C pair (k, h - k) from A =
// Z[K][k mod h] and B = Z[-K][-k mod h] (the formulas below): xl =
// X[K][k] = E + T and xh = X[-K][h - k] = conj(E - T), T = W_n^k O; inv_h is
// 1 / h.
template <class P, class I>
FFTD_DEV void
r2c_pair(I k, float inv_h, float2 A, float2 B, float2 &xl, float2 &xh)
{
	const float2 e = make_float2(0.5f * (A.x + B.x), 0.5f * (A.y - B.y));
	const float2 o = make_float2(
	    0.5f * (A.y + B.y), -0.5f * (A.x - B.x)); // -i (A - conj B)/2
	const float2 t = cmul(o, real_twiddle<P>((float) k * inv_h));
	xl             = make_float2(e.x + t.x, e.y + t.y);
	xh             = make_float2(e.x - t.x, t.y - e.y);
}

// c2r_pair gives the two outputs of the C2R pair (m, h - m) from A =
// X[K][m] and B = X[-K][h - m] (the formulas at c2r_pre): zl = Z[K][m] = s2
// + i t and zh = Z[-K][h - m] = conj(s2 - i t), s2 = A + conj B, t = W_n^-m
// (A - conj B).
template <class P, class I>
FFTD_DEV void
c2r_pair(I m, float inv_h, float2 A, float2 B, float2 &zl, float2 &zh)
{
	const float2 s2 = make_float2(A.x + B.x, A.y - B.y);
	const float2 d2 = make_float2(A.x - B.x, A.y + B.y);
	float2       wm = real_twiddle<P>((float) m * inv_h);
	wm.y            = -wm.y; // W_n^-m = conj(W_n^m)
	const float2 t  = cmul(d2, wm);
	zl              = make_float2(s2.x - t.y, s2.y + t.x);
	zh              = make_float2(s2.x + t.y, t.x - s2.y);
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
// k) (the pass's swizzle, linear: sb(x ^ y) = sb(x) ^ sb(y)). Its NT threads
// take the C L / 2 pairs (k, h - k), k < h/2: the lanes of a warp the 32
// pairs k = k0 + l of one row (k0 a multiple of 32), whose points lie in
//   D = [k0, k0 + 32)            point k0 + l in lane l;
//   M = [h - k0 - 32, h - k0)    point h - k0 - 32 + l in lane l, the
//                                partner of lane 32 - l (a shuffle away);
//   h - k0                       lane 0's partner (for k0 > 0; for k0 = 0
//                                lane 0's pair is point 0 with itself, and
//                                it takes the middle point h/2 too).
// h - k0 - 32 = (h - 32) ^ k0 and h - k0 = (h - 32) ^ (k0 - 32), so every
// offset is the thread's own (computed once) XOR a constant of the unrolled
// loop: no swizzle is computed in the loop. Computing each mirrored offset
// took 139 instructions a pair and made the fused R2C pass slower than the
// pass and the separate step together (ncu, H200). Rows past a.q_total
// are skipped (a warp's row is one, so whole warps skip).

// shfl_word: w of lane src.
template <class P>
FFTD_DEV typename P::Word
shfl_word(typename P::Word w, int src)
{
	if constexpr (P::kSplit)
		return make_float2(__shfl_sync(0xffffffffu, w.x, src),
		    __shfl_sync(0xffffffffu, w.y, src));
	else
		return __shfl_sync(0xffffffffu, w, src);
}

// RowOffsets: the byte offsets of the three places for step j = j0 + g of
// a thread's loop over its pairs (item base i0 = warp base + j NT, k0 = i0
// mod h), taken in groups of G steps (j0 a multiple of G, g < G, so j NT =
// j0 NT ^ g NT): d (the lane's point in D), m (XOR it for the lane's
// point in M) and e (point h - k0, for k0 > 0). The thread's part is
// computed once a call, a group's part (sb of j0 NT) once a group.
template <int L, int C, int NT> struct RowOffsets {
	// H pairs a row; J steps a thread (in groups of G); inv_h = 1 / h
	static constexpr uint32_t H = L / 2;
	static constexpr int      J = C * H / NT, G = J < 4 ? J : 4;
	static_assert(J * NT == C * H && J % G == 0 && H % 32 == 0, "pairs");
	static constexpr float inv_h = 1.0f / (float) L;
	// item i = f H + k -> shared-memory point f L + k (a bit map)
	static FFTD_DEV constexpr uint32_t pos(uint32_t i)
	{
		return (i / H) * L + i % H;
	}
	uint32_t w0, d0, p0, m, gj, gprev;
	// opaque copies (tc16_ptx.cuh): hoisted out of the pass's block loop,
	// the offsets held too many registers
	template <class Sb> FFTD_DEV RowOffsets(Sb sb)
	{
		w0    = threadIdx.x & ~31u;
		d0    = opaque(sb(pos(threadIdx.x)));
		p0    = opaque(w0 >= 32 ? sb(pos(w0 - 32)) : 0);
		m     = sb(L - 32);
		gj    = 0;
		gprev = 0;
	}
	// the group of steps j0 .. j0 + G - 1 begins
	template <class Sb> FFTD_DEV void group(Sb sb, int j0)
	{
		gprev = gj;
		gj    = sb(pos((uint32_t) j0 * NT));
	}
	template <class Sb> FFTD_DEV uint32_t d(Sb sb, int g) const
	{
		return d0 ^ gj ^ sb(pos((uint32_t) g * NT));
	}
	template <class Sb> FFTD_DEV uint32_t e(Sb sb, int g) const
	{
		// point h - k0 = (h - 32) ^ (k0 - 32): item i0 - 32 mirrored
		if (w0 >= 32) // i0 - 32 = (w0 - 32) + j NT
			return m ^ p0 ^ gj ^ sb(pos((uint32_t) g * NT));
		return m // i0 - 32 = j NT - 32, j >= 1
		    ^ (g > 0 ? gj ^ sb(pos((uint32_t) g * NT - 32))
		             : gprev ^ sb(pos((uint32_t) G * NT - 32)));
	}
};

// r2c_rows: Z in shared memory (z(offset) reads a word) -> X in a.out,
// rows of L + 1 (R2C output).
template <class P, int L, int C, int NT, class Sb, class Get>
FFTD_DEV void
r2c_rows(const PassArgs &a, long long it, Sb sb, Get z)
{
	using Word        = typename P::Word;
	using O           = RowOffsets<L, C, NT>;
	constexpr int   H = O::H, J = O::J, G = O::G;
	constexpr float inv_h = O::inv_h;
	const uint32_t  lane  = threadIdx.x & 31;
	O               o(sb);
	Word *const     x = static_cast<Word *>(a.out);
#pragma unroll 1
	for (int j0 = 0; j0 < J; j0 += G) {
		o.group(sb, j0);
#pragma unroll
		for (int g = 0; g < G; g++) {
			const uint32_t  i0 = o.w0 + (j0 + g) * NT;
			const uint32_t  f = i0 / H, k0 = i0 % H, k = k0 + lane;
			const long long q = it * C + f;
			if (q >= a.q_total)
				return; // rows only grow with the step
			const uint32_t od = o.d(sb, g);
			const Word     d  = z(od);
			Word b = shfl_word<P>(z(od ^ o.m), (32 - lane) & 31);
			if (k0 != 0) {
				const Word e = z(o.e(sb, g)); // broadcast
				if (lane == 0)
					b = e;
			} else if (lane == 0) {
				b = d;
			}
			float2 xl, xh;
			r2c_pair<P>(k, inv_h, P::load(d), P::load(b), xl, xh);
			Word *const row = x + q * (L + 1);
			row[k]          = P::store(xl.x, xl.y);
			row[L - k]      = P::store(xh.x, xh.y);
			if (k == 0) { // the middle: X[h/2] = conj(Z[h/2])
				const float2 mid = P::load(z(od ^ sb(H)));
				r2c_pair<P>(
				    (uint32_t) H, inv_h, mid, mid, xl, xh);
				row[H] = P::store(xl.x, xl.y);
			}
		}
	}
}

// c2r_rows: X in a.in, rows of L + 1 (C2R input) -> Z in shared memory
// (put(offset, word) writes one). All loads of a group are issued before its
// pairs are computed (2 G words in flight a thread).
template <class P, int L, int C, int NT, class Sb, class Put>
FFTD_DEV void
c2r_rows(const PassArgs &a, long long it, Sb sb, Put put)
{
	using Word          = typename P::Word;
	using O             = RowOffsets<L, C, NT>;
	constexpr int     H = O::H, J = O::J, G = O::G;
	constexpr float   inv_h = O::inv_h;
	const uint32_t    lane  = threadIdx.x & 31;
	O                 o(sb);
	const Word *const x = static_cast<const Word *>(a.in);
#pragma unroll 1
	for (int j0 = 0; j0 < J; j0 += G) {
		o.group(sb, j0);
		Word A[G], B[G];
#pragma unroll
		for (int g = 0; g < G; g++) {
			const uint32_t  i0 = o.w0 + (j0 + g) * NT;
			const uint32_t  f = i0 / H, k = i0 % H + lane;
			const long long q = it * C + f;
			if (q < a.q_total) {
				const Word *const row = x + q * (L + 1);
				A[g]                  = row[k];
				B[g]                  = row[L - k];
			}
		}
#pragma unroll
		for (int g = 0; g < G; g++) {
			const uint32_t  i0 = o.w0 + (j0 + g) * NT;
			const uint32_t  f = i0 / H, k0 = i0 % H, k = k0 + lane;
			const long long q = it * C + f;
			if (q >= a.q_total)
				return; // rows only grow with the step
			float2 zl, zh;
			c2r_pair<P>(
			    k, inv_h, P::load(A[g]), P::load(B[g]), zl, zh);
			const uint32_t od = o.d(sb, g);
			put(od, P::store(zl.x, zl.y));
			// lane l of M takes the point h - k of lane 32 - l
			const Word s = shfl_word<P>(
			    P::store(zh.x, zh.y), (32 - lane) & 31);
			if (lane != 0) {
				put(od ^ o.m, s);
			} else if (k0 != 0) {
				put(o.e(sb, g), P::store(zh.x, zh.y));
			} else { // the middle: Z[h/2] = 2 conj(X[h/2])
				const float2 mid = P::load(x[q * (L + 1) + H]);
				c2r_pair<P>(
				    (uint32_t) H, inv_h, mid, mid, zl, zh);
				put(od ^ sb(H), P::store(zl.x, zl.y));
			}
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

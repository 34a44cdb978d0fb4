// SPDX-License-Identifier: MIT
//
// mf_stockham.cuh — PRIVATE to kernels/: included by mf_fourstep.cu and
// mf_cluster.cu only. The matched-filter bank's shared-memory FFT
// machinery, common to its two-pass (fourstep) and one-pass (cluster)
// kernels: a Stockham autosort FFT in shared memory (Govindaraju et al.,
// "High Performance Discrete Fourier Transforms on Graphics Processors",
// SC 2008, fig. 2) of radix-16 stages (then one of 2, 4 or 8), every
// thread holding 16 points, so a stage reads all its points into
// registers, synchronises and writes them back in place (one buffer, not
// two); the stages' twiddle tables (stage_off, stage_entry); the
// half-input first stage (half_dft16); and the scan of searched samples
// into packed keys (Scan), as mf_fused.cu's scan computes them.
// Inverse transforms only (W_M = exp(+2 pi i / M)).

#ifndef FFTD_KERNELS_MF_STOCKHAM_CUH
#define FFTD_KERNELS_MF_STOCKHAM_CUH

#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#include "mf_kernels.h"
#include "tc16_dft.cuh"

namespace fftd_mf
{

using fftd_tc::cmul;
using fftd_tc::SmallDft;
typedef unsigned long long u64;

constexpr int      kPts       = 16;   // points per thread in every stage
constexpr int      kWinShared = 1024; // windows a block keeps in shared
constexpr unsigned kFull      = 0xffffffffu;

// radix_at is the radix of the stage of span NS of an M-point FFT.
__host__ __device__ constexpr int
radix_at(int m, int ns)
{
	return m / ns >= 16 ? 16 : m / ns;
}

// last_span is the span of an M-point FFT's last stage.
__host__ __device__ constexpr int
last_span(int m)
{
	int ns = 1;
	while (ns * radix_at(m, ns) < m)
		ns *= radix_at(m, ns);
	return ns;
}

// stage_off is where the stage of span NS starts in an M-point FFT's stage
// twiddle table: the stages of span > 1 in turn, each (R - 1) x NS entries,
// entry (r - 1) NS + jm holding W_M^(jm r M / (NS R)), so that the
// butterflies of neighbouring threads (neighbouring jm) read neighbouring
// entries. stage_off(m, m) is the table's length.
__host__ __device__ constexpr int
stage_off(int m, int ns)
{
	int off = 0;
	for (int s = radix_at(m, 1); s < ns && s < m; s *= radix_at(m, s))
		off += (radix_at(m, s) - 1) * s;
	return off;
}

// Geo is a pass's block: NF FFTs of M points in shared memory, NF M / 16
// threads. Columns (pass 1): butterflies numbered column first, so
// neighbouring threads touch neighbouring columns, and point n of FFT f at
// n NF + f. Rows (pass 2): butterfly first, point n of FFT f at f PITCH +
// n + n / 16 (the pad after every 16 points spreads the span-1 stage's
// stores, stride 16 points, over the banks; PITCH = 2 mod 16 points does
// the same for the scan's reads, 8 rows by 2 runs of 16 points). With NF
// < 16 columns, a pad of NF points after every 16 rows spreads the 32 / NF
// rows that a warp's first-stage stores touch (16 points apart) over the
// banks: 2 wavefronts a store, the least for 32 points, instead of up to
// 8; 16 columns need none.
template <int M_, int NF, bool COLS> struct Geo {
	static_assert(!COLS || NF == 4 || NF == 8 || NF == 16, "columns");
	static constexpr int M     = M_;
	static constexpr int T     = NF * M / kPts;
	static constexpr int PITCH = M + M / 16 + 2;
	static constexpr int CPAD  = NF < 16 ? NF : 0;
	static constexpr int POINTS
	    = COLS ? NF * M + M / 16 * CPAD : NF * PITCH;
	static __device__ __forceinline__ int at(int f, int n)
	{
		return COLS ? n * NF + f + (n >> 4) * CPAD
		            : f * PITCH + n + (n >> 4);
	}
	// run<STEP>() is at(f, n + STEP) - at(f, n) for the runs the passes
	// make: STEP a multiple of 16 (every run's points then have the same
	// pads between them), or STEP 1 from an n that is a multiple of 16,
	// at most 16 points (no pad inside), so that a run's addresses are
	// one sum and constant offsets.
	template <int STEP> static __host__ __device__ constexpr int run()
	{
		static_assert(STEP == 1 || STEP % 16 == 0, "run step");
		return STEP == 1 ? (COLS ? NF : 1)
		    : COLS       ? STEP * NF + STEP / 16 * CPAD
		                 : STEP + STEP / 16;
	}
	// split numbers butterfly bi of a stage with b butterflies an FFT
	// (unsigned: b and NF are powers of two).
	static __device__ __forceinline__ void split(
	    int bi, int b, int &f, int &j)
	{
		const unsigned u = (unsigned) bi;
		if (COLS) {
			f = (int) (u % NF);
			j = (int) (u / NF);
		} else {
			j = (int) (u % (unsigned) b);
			f = (int) (u / (unsigned) b);
		}
	}
};

// load_run reads points n0 + r STEP (r < R) of FFT f into v, store_run
// writes them: by Geo::run's constant offsets where STEP allows.
template <class G, int R, int STEP>
__device__ __forceinline__ void
load_run(const float2 *s, int f, int n0, float2 *v)
{
	if constexpr (STEP % 16 == 0) {
		const float2 *p = s + G::at(f, n0);
#pragma unroll
		for (int r = 0; r < R; r++)
			v[r] = p[r * G::template run<STEP>()];
	} else {
#pragma unroll
		for (int r = 0; r < R; r++)
			v[r] = s[G::at(f, n0 + r * STEP)];
	}
}

template <class G, int R, int STEP>
__device__ __forceinline__ void
store_run(float2 *s, int f, int n0, const float2 *v)
{
	if constexpr (STEP % 16 == 0) {
		float2 *p = s + G::at(f, n0);
#pragma unroll
		for (int r = 0; r < R; r++)
			p[r * G::template run<STEP>()] = v[r];
	} else {
#pragma unroll
		for (int r = 0; r < R; r++)
			s[G::at(f, n0 + r * STEP)] = v[r];
	}
}

// store_run16 writes v[0..15] to points n0 .. n0 + 15 of FFT f, n0 a
// multiple of 16 (the first stage's outputs).
template <class G>
__device__ __forceinline__ void
store_run16(float2 *s, int f, int n0, const float2 *v)
{
	float2 *p = s + G::at(f, n0);
#pragma unroll
	for (int r = 0; r < 16; r++)
		p[r * G::template run<1>()] = v[r];
}

// twiddle multiplies butterfly v's point r by W_M^(jm r M / (NS R)), from
// the stage twiddle table tab (stage_off). (Read from a table of W_M^m by
// index jm r M / (NS R), a warp's reads scattered over many cache lines
// and made L1 the passes' bottleneck on the H100, 70-80% busy with DRAM at
// 46%; a shared-memory copy of that table had as many bank conflicts.)
template <int M, int R, int NS>
__device__ __forceinline__ void
twiddle(float2 *v, int jm, const float2 *tab)
{
	if (NS > 1) {
		constexpr int off = stage_off(M, NS);
#pragma unroll
		for (int r = 1; r < R; r++)
			v[r] = cmul(v[r], __ldg(tab + off + (r - 1) * NS + jm));
	}
}

// stage_mid runs the stage of radix R and span NS in place in s.
template <class G, int R, int NS>
__device__ __forceinline__ void
stage_mid(float2 *s, const float2 *tab)
{
	constexpr int B = G::M / R, U = kPts / R;
	float2        v[kPts];
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		load_run<G, R, B>(s, f, j, v + u * R);
	}
	__syncthreads();
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		const int jm = (int) ((unsigned) j % NS);
		twiddle<G::M, R, NS>(v + u * R, jm, tab);
		SmallDft<R, true>::run(v + u * R);
		const int d = (int) ((unsigned) j / NS) * NS * R + jm;
		store_run<G, R, NS>(s, f, d, v + u * R);
	}
	__syncthreads();
}

// mid_stages runs the stages from span NS up to, not including, the last.
template <class G, int NS>
__device__ __forceinline__ void
mid_stages(float2 *s, const float2 *tab)
{
	constexpr int R = radix_at(G::M, NS);
	if constexpr (NS * R < G::M) {
		stage_mid<G, R, NS>(s, tab);
		mid_stages<G, NS * R>(s, tab);
	}
}

// first_store does the first stage's DFTs (span 1: no twiddle) on the
// points v holds and stores them in s.
template <class G>
__device__ __forceinline__ void
first_store(float2 *v, float2 *s)
{
	constexpr int R = radix_at(G::M, 1), B = G::M / R, U = kPts / R;
	static_assert(R == 16, "the first stage is radix 16");
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		SmallDft<R, true>::run(v + u * R);
		store_run16<G>(s, f, j * R, v + u * R);
	}
	__syncthreads();
}

// last_load reads the last stage's points from s into v and runs its
// twiddles and DFTs; where point u R + r goes is out_index(u, r).
template <class G>
__device__ __forceinline__ void
last_dft(const float2 *s, float2 *v, const float2 *tab)
{
	constexpr int NS = last_span(G::M), R = G::M / NS, B = G::M / R;
	constexpr int U = kPts / R;
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		load_run<G, R, B>(s, f, j, v + u * R);
	}
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		twiddle<G::M, R, NS>(v + u * R, (int) ((unsigned) j % NS), tab);
		SmallDft<R, true>::run(v + u * R);
	}
}

// The FFT index (f, output point) of last_dft's point u R + r.
template <class G>
__device__ __forceinline__ void
last_out(int u, int r, int &f, int &n)
{
	constexpr int NS = last_span(G::M), R = G::M / NS, B = G::M / R;
	int           j;
	G::split(threadIdx.x + u * G::T, B, f, j);
	n = (int) ((unsigned) j / NS) * NS * R + (int) ((unsigned) j % NS)
	    + r * NS;
}

__device__ __forceinline__ u64
warp_max(u64 v)
{
	for (int o = 16; o > 0; o >>= 1) {
		u64 u = __shfl_down_sync(kFull, v, o);
		v     = u > v ? u : v;
	}
	return v;
}

__device__ __forceinline__ double
warp_sum(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(kFull, v, o);
	return v;
}

// half_dft16 is SmallDft<16, true> of x[0..7] and eight zeros (the upper
// half of a pass-1 column is past N/2, where q is zero): the 4 x 4 split of
// SmallDft<16> whose first 4-point DFTs have two zero inputs each.
__device__ __forceinline__ void
half_dft16(float2 *x)
{
	const float c1 = 0.92387953251128675613f, s1 = 0.38268343236508977173f,
	            r = 0.70710678118654752440f;
	float2 y[4][4];
#pragma unroll
	for (int n2 = 0; n2 < 4; n2++) {
		const float2 a = x[n2], b = x[4 + n2];
		const float2 ib = make_float2(-b.y, b.x); // +i b (inverse)
		y[n2][0]        = make_float2(a.x + b.x, a.y + b.y);
		y[n2][1]        = make_float2(a.x + ib.x, a.y + ib.y);
		y[n2][2]        = make_float2(a.x - b.x, a.y - b.y);
		y[n2][3]        = make_float2(a.x - ib.x, a.y - ib.y);
	}
	y[1][1] = cmul(y[1][1], make_float2(c1, s1));
	y[1][2] = cmul(y[1][2], make_float2(r, r));
	y[1][3] = cmul(y[1][3], make_float2(s1, c1));
	y[2][1] = cmul(y[2][1], make_float2(r, r));
	y[2][2] = make_float2(-y[2][2].y, y[2][2].x);
	y[2][3] = cmul(y[2][3], make_float2(-r, r));
	y[3][1] = cmul(y[3][1], make_float2(s1, c1));
	y[3][2] = cmul(y[3][2], make_float2(-r, r));
	y[3][3] = cmul(y[3][3], make_float2(-c1, -s1));
#pragma unroll
	for (int k1 = 0; k1 < 4; k1++) {
		float2 v[4] = { y[0][k1], y[1][k1], y[2][k1], y[3][k1] };
		SmallDft<4, true>::run(v);
#pragma unroll
		for (int k2 = 0; k2 < 4; k2++)
			x[k1 + 4 * k2] = v[k2];
	}
}

// fourstep_twiddle multiplies the last stage's outputs v (u R + r, as
// last_out numbers them) by the four-step twiddle W_N^(k1 t2) (Bailey
// 1990) and hands each to out(i, t2, x). A thread's outputs t2 = base_u +
// r NS take W_N^(k1 base_u) W_N^(k1 NS r): sincospif of an exact fraction
// for every fourth r and products by the step W_N^(k1 NS) in between (at
// most three deep, so within a few ulp of the exact value), instead of a
// sincospif per output (about a third of a pass's instructions); 2 k1 t2
// / N is exact in f32 (k1 t2 < N <= 2^24, N a power of two).
template <class G, class OUT>
__device__ __forceinline__ void
fourstep_twiddle(const float2 *v, int k1, int n, OUT out)
{
	constexpr int NS = last_span(G::M), R = G::M / NS, U = kPts / R;
	const float   sc = 2.0f / (float) n;
	float2        step;
	sincospif((float) (k1 * NS) * sc, &step.y, &step.x);
#pragma unroll
	for (int u = 0; u < U; u++) {
		float2 tw = make_float2(1.0f, 0.0f);
#pragma unroll
		for (int r = 0; r < R; r++) {
			int f, t2;
			last_out<G>(u, r, f, t2);
			if (r % 4 == 0)
				sincospif((float) (k1 * t2) * sc, &tw.y, &tw.x);
			else
				tw = cmul(tw, step);
			out(u * R + r, t2, cmul(v[u * R + r], tw));
		}
	}
}

// stage_entry is entry i of an M-point FFT's stage table: the angle / pi
// of W_M^(jm r M / (NS R)) (stage_off), computed in double.
__device__ inline double
stage_entry(int m, int i)
{
	for (int ns = radix_at(m, 1); ns < m; ns *= radix_at(m, ns)) {
		const int r = radix_at(m, ns), cnt = (r - 1) * ns;
		if (i < cnt)
			return 2.0 * (double) ((i % ns) * (i / ns + 1))
			    / (double) (ns * r);
		i -= cnt;
	}
	return 0;
}

// ScanArgs is what a scan of searched samples needs.
struct ScanArgs {
	float2  *zout;
	int64_t  ld, q0; // zout row b at b ld, sample t at t - q0
	int64_t  t_begin, width;
	unsigned cluster; // min(cluster, width)
	int64_t  nwin;
	u64     *fkey, *nonfinite;
	int      b0; // the part's first template in the batch
};

// scan_args is a's ScanArgs over the whole batch (width = t_end -
// t_begin); zout and fkey are the caller's to set, and b0 for a part.
inline ScanArgs
scan_args(const fftd__mf_scan_args *a, int64_t width)
{
	ScanArgs sa;
	sa.zout      = NULL;
	sa.ld        = a->ld;
	sa.q0        = a->q0;
	sa.t_begin   = a->t_begin;
	sa.width     = width;
	sa.cluster   = (unsigned) (a->cluster < width ? a->cluster : width);
	sa.nwin      = a->nwin;
	sa.fkey      = NULL;
	sa.nonfinite = (u64 *) a->nonfinite;
	sa.b0        = (int) a->b0;
	return sa;
}

// Scan keeps one thread's loudest samples as packed keys (mf_kernels.h,
// fftd__mf_scan_fused): |z|^2 rounded toward zero to f32 in the high word,
// the complemented index in the searched span in the low word, so that
// the larger key is the louder sample, the first on ties. The thread's
// samples come in increasing order, so it keeps the loudest of the
// clustering window it is in and merges it (atomicMax into the block's
// window keys in shared memory, wkey, or into the template's slots when
// there are more windows than kWinShared) only when it leaves; the peak
// is the loudest of those windows.
struct Scan {
	u64     *wkey; // the block's window keys (shw), else unused
	u64     *slot; // the template's slots: the peak, then the windows
	bool     shw, win;
	unsigned clus; // the window's length; no windows: one of all samples
	float    wbest = -1.0f, pbest = -1.0f; // no sample yet
	int      wbs = 0, pbs = 0, wcur = 0;
	int      wend = -1; // the window's last sample

	__device__ Scan(const ScanArgs &sa, u64 *wk, int b)
	    : wkey(wk)
	    , slot(sa.fkey + (u64) b * (u64) (1 + sa.nwin))
	    , shw(sa.nwin <= kWinShared)
	    , win(sa.nwin > 0)
	    , clus(sa.nwin > 0 ? sa.cluster : (unsigned) INT32_MAX)
	{
	}
	static __device__ __forceinline__ u64 pack(float fz, int s)
	{
		return ((u64) __float_as_uint(fz) << 32)
		    | (u64) (0xffffffffu - (unsigned) s);
	}
	// flush ends the current window: its loudest goes to the window's key
	// (when there are windows) and, if louder, becomes the peak.
	__device__ __forceinline__ void flush()
	{
		if (wbest >= 0.0f) {
			if (win) {
				const u64 key = pack(wbest, wbs);
				if (shw)
					atomicMax(&wkey[wcur], key);
				else
					atomicMax(&slot[1 + wcur], key);
			}
			if (wbest > pbest) {
				pbest = wbest;
				pbs   = wbs;
			}
		}
	}
	// sample runs the window logic on the sample s whose |z|^2 is fz.
	__device__ __forceinline__ void sample(int s, float fz)
	{
		if (s > wend) {
			flush();
			wcur              = (int) ((unsigned) s / clus);
			const long long e = ((long long) wcur + 1) * clus - 1;
			wend              = e < INT32_MAX ? (int) e : INT32_MAX;
			wbest             = -1.0f;
		}
		if (fz > wbest) {
			wbest = fz;
			wbs   = s;
		}
	}
	__device__ __forceinline__ u64 peak_key() const
	{
		return pbest >= 0.0f ? pack(pbest, pbs) : 0;
	}
};

// scan_samples runs sc over a thread's first cnt (at most P) samples:
// sample k is index s_of(k) of the searched span (increasing in k; those
// outside [0, width) are skipped) with z = z_of(k), written to zrow[s]
// when zrow is not NULL.
// |z|^2 is computed in f32 rounded toward zero (mf_fused.cu's scan rounds
// the double sum once: the two agree to an ulp, below the transform's own
// error). A sample where f32 overflows (or z is not finite) makes the
// thread scan again, in double as mf_fused.cu does, so that the first loop
// has no branch for it; the windows the first loop merged stay merged (the
// samples it dropped only made their keys smaller, and atomicMax keeps the
// larger). Returns whether a sample was not finite; flushes sc.
template <int P, class S, class Z>
__device__ __forceinline__ bool
scan_samples(Scan &sc, int width, float2 *zrow, S s_of, Z z_of, int cnt = P)
{
	bool ovf = false, bad = false;
#pragma unroll
	for (int k = 0; k < P; k++) {
		if (k >= cnt)
			break;
		const int s = s_of(k);
		if ((unsigned) s >= (unsigned) width)
			continue;
		const float2 z = z_of(k);
		if (zrow != NULL)
			zrow[s] = z;
		const float fz = __fmaf_rz(z.x, z.x, __fmul_rz(z.y, z.y));
		ovf            = ovf || !(fz <= FLT_MAX);
		sc.sample(s, fz <= FLT_MAX ? fz : -1.0f);
	}
	if (ovf) {
		sc.wbest = sc.pbest = -1.0f;
		sc.wend             = -1;
		for (int k = 0; k < cnt; k++) {
			const int s = s_of(k);
			if ((unsigned) s >= (unsigned) width)
				continue;
			const float2 z = z_of(k);
			const double m
			    = (double) z.x * z.x + (double) z.y * z.y;
			if (!(m <= DBL_MAX)) {
				bad = true;
				continue;
			}
			sc.sample(s, __double2float_rz(m));
		}
	}
	sc.flush();
	return bad;
}

// merge_block merges the block's T threads' scans into the template's
// slots: the loudest peak with one atomicMax, then every window the block
// holds a key for (wpeak: T / 32 words of shared memory).
template <int T>
__device__ __forceinline__ void
merge_block(const Scan &sc, u64 *wpeak, int64_t nwin)
{
	const u64 wp = warp_max(sc.peak_key());
	if ((threadIdx.x & 31) == 0)
		wpeak[threadIdx.x / 32] = wp;
	__syncthreads();
	if (threadIdx.x == 0) {
		u64 m = 0;
		for (int k = 0; k < T / 32; k++)
			m = wpeak[k] > m ? wpeak[k] : m;
		if (m != 0)
			atomicMax(&sc.slot[0], m);
	}
	for (int64_t k = threadIdx.x; sc.shw && k < nwin; k += T)
		if (sc.wkey[k] != 0)
			atomicMax(&sc.slot[1 + k], sc.wkey[k]);
}

} // namespace fftd_mf

#endif // FFTD_KERNELS_MF_STOCKHAM_CUH

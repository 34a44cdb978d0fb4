// SPDX-License-Identifier: MIT
//
// mf_fourstep.cu — the matched-filter bank's own FFT engine (f32; C ABI in
// mf_kernels.h; daemon/backends/cuda_mf.c runs it): the inverse transform
// of each template's product q = conj(h) D / S as a two-pass four-step FFT
// (Bailey, "FFTs in external or hierarchical memory", J. Supercomputing 4,
// 1990; N = N1 N2) with the product and sigma fused into the first pass
// and the scan into the second, so that per template the bank reads the
// template band once and writes and reads the N-point intermediate once;
// nothing else but keys (and, for series rows only, the searched
// samples). cuFFT's engine (mf_fused.cu around cuFFT) makes, besides
// cuFFT's own two passes, a product pass and writes and reads the samples.
//
// Index algebra (inverse, W_M = exp(+2 pi i / M)): bin k = k1 + N1 k2,
// sample t = t2 + N2 t1 (k1, t1 < N1; k2, t2 < N2).
//   pass 1, per column k1: Y[t2] = sum_k2 q[k1 + N1 k2] W_N2^(k2 t2), times
//           W_N^(k1 t2), stored as A[t2][k1] (rows of N1, so pass 2 reads
//           rows and pass 1 writes runs of C neighbouring columns);
//   pass 2, per row t2: z[t2 + N2 t1] = sum_k1 A[t2][k1] W_N1^(k1 t1).
// q is zero outside [kmin, kmax), so half of pass 1's input is never read
// (k > N/2 for k2 > N2/2).
//
// Each pass is a Stockham autosort FFT in shared memory (Govindaraju et
// al., "High Performance Discrete Fourier Transforms on Graphics
// Processors", SC 2008, fig. 2; the same stage as tc_axis.cuh): radix 16
// stages (then one of 2, 4 or 8), every thread holding 16 points, so a
// stage reads all its points into registers, synchronises and writes them
// back in place (one buffer, not two). The first stage reads device memory
// and the last writes it, so each pass touches device memory once each
// way. The stages' twiddles come from tables made once per call in double
// and rounded once, laid out so that neighbouring threads read
// neighbouring entries (stage_off); the four-step twiddle W_N^(k1 t2) is
// sincospif of an exact fraction for every fourth output and products by
// a step between (pass1_k). Pass 1 reads and transforms only the lower
// half of each column, the upper half being past N/2 (half_dft16), and
// every run of shared-memory points a thread touches is one address and
// constant offsets (Geo::run): on the H200 the integer arithmetic of
// generic indexing was ~40% of pass 2's instructions.
//
// The scan computes each searched sample's key as mf_fused.cu's scan does
// (|z|^2 rounded toward zero to f32 — here computed in f32 — above the
// complemented index in the searched span), keeps each thread's loudest
// key per clustering window and each block's in shared memory, and merges
// them with one global atomicMax per window and block. The gather then
// turns keys into rho, t and z: z at each winner is summed again in double
// from its row of the intermediate (gather_rows_k), or read from the
// written samples when series rows asked for them (mf_fused.cu's gather).
//
// A batch runs in parts alternating between two streams, so that one
// part's first pass (memory-bound) runs beside another's second
// (compute-bound). Figures: bench/pipelines and bench/README.md.

#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "mf_rho.cuh"
#include "tc16_dft.cuh"

namespace
{

using fftd_tc::cmul;
using fftd_tc::SmallDft;
typedef unsigned long long u64;

constexpr int      kPts           = 16;   // points per thread in every stage
constexpr int      kWinShared     = 1024; // windows a block keeps in shared
constexpr unsigned kFull          = 0xffffffffu;
constexpr int      kGatherThreads = 128;

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

// Pass 1: block (g, b) transforms columns k1 in [g C, g C + C) of template
// b's product (M2 = N2 points each) and writes them, twiddled, to A (rows
// of M1); its sum of |h|^2 / S goes to partial[b][g] (a fixed order).
//
// Point r of a first-stage butterfly is k2 = j + r M2 / 16, so r >= 8 is
// k >= N/2, where q is zero but for k = N/2 itself (k1 = 0, j = 0, r = 8:
// thread 0 of block 0): only the lower half is read and transformed
// (half_dft16), and that one point is added to thread 0's outputs, times
// W_16^(8 m) = (-1)^m. This halves the loads and the registers they hold,
// which bound the pass's occupancy.
//
// The four-step twiddle W_N^(k1 t2) of a thread's outputs t2 = base_u + r
// NS is W_N^(k1 base_u) W_N^(k1 NS r): sincospif of exact fractions for
// every fourth r, and products by the step W_N^(k1 NS) in between (at most
// three deep, so within a few ulp of the exact value), instead of a
// sincospif per output (about a third of the pass's instructions).
template <int M2, int M1, int C, int MINB>
__global__ void
__launch_bounds__(C *M2 / kPts, MINB) pass1_k(float2 *A, const float2 *tpl,
    int64_t nbins, const float2 *w, const double *is, int64_t kmin,
    int64_t kmax, const float2 *st2, double *partial)
{
	using G = Geo<M2, C, true>;
	extern __shared__ float2 smem[];
	__shared__ double        red[G::T / 32];
	const int                b = blockIdx.y, k10 = blockIdx.x * C;
	const float2            *h = tpl + nbins * b;
	constexpr int R0 = radix_at(M2, 1), B0 = M2 / R0, U0 = kPts / R0;
	static_assert(R0 == 16, "the first stage is radix 16");
	float2 v[kPts];
	double acc = 0;
#pragma unroll
	for (int u = 0; u < U0; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B0, f, j);
#pragma unroll
		for (int r = 0; r < R0 / 2; r++) {
			const int64_t k = k10 + f + (int64_t) M1 * (j + r * B0);
			float2        q = make_float2(0.0f, 0.0f);
			if (k >= kmin && k < kmax) {
				const float2 hv = h[k], wv = w[k];
				// as mf_fused.cu's product_sigma_k, op for op
				q = make_float2(hv.x * wv.x + hv.y * wv.y,
				    hv.x * wv.y - hv.y * wv.x);
				// |h|^2 rounded once to f32, summed in double
				acc += (double) fmaf(hv.x, hv.x, hv.y * hv.y)
				    * is[k];
			}
			v[u * R0 + r] = q;
		}
	}
	// the bin N/2, when it is in the band
	const int64_t kn = (int64_t) M1 * M2 / 2;
	float2        qn = make_float2(0.0f, 0.0f);
	const bool    nyq
	    = blockIdx.x == 0 && threadIdx.x == 0 && kn >= kmin && kn < kmax;
	if (nyq) {
		const float2 hv = h[kn], wv = w[kn];
		qn = make_float2(
		    hv.x * wv.x + hv.y * wv.y, hv.x * wv.y - hv.y * wv.x);
		acc += (double) fmaf(hv.x, hv.x, hv.y * hv.y) * is[kn];
	}
#pragma unroll
	for (int u = 0; u < U0; u++)
		half_dft16(v + u * R0);
	if (nyq) {
#pragma unroll
		for (int m = 0; m < R0; m++) {
			v[m].x += m % 2 == 0 ? qn.x : -qn.x;
			v[m].y += m % 2 == 0 ? qn.y : -qn.y;
		}
	}
	{
		constexpr int B = M2 / R0;
#pragma unroll
		for (int u = 0; u < U0; u++) {
			int f, j;
			G::split(threadIdx.x + u * G::T, B, f, j);
			store_run16<G>(smem, f, j * R0, v + u * R0);
		}
		__syncthreads();
	}
	mid_stages<G, R0>(smem, st2);
	last_dft<G>(smem, v, st2);
	constexpr int NS = last_span(M2), R = M2 / NS, U = kPts / R;
	float2       *a = A + (int64_t) b * M1 * M2;
	// k1 is the same for all of a thread's butterflies (T is a multiple
	// of C); 2 k1 t2 / N is exact in f32 (k1 t2 < N <= 2^24).
	int f0, t0;
	last_out<G>(0, 0, f0, t0);
	const int   k1 = k10 + f0;
	const float sc = 2.0f / (M1 * M2);
	float2      step;
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
			a[(int64_t) t2 * M1 + k1] = cmul(v[u * R + r], tw);
		}
	}
	acc = warp_sum(acc);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double s = 0;
		for (int i = 0; i < G::T / 32; i++)
			s += red[i];
		partial[(int64_t) b * gridDim.x + blockIdx.x] = s;
	}
}

// scan_args2 is what pass 2's scan needs.
struct ScanArgs {
	float2  *zout;
	int64_t  ld, q0; // zout row b at b ld, sample t at t - q0
	int64_t  t_begin, width;
	unsigned cluster; // min(cluster, width)
	int64_t  nwin;
	u64     *fkey, *nonfinite;
	int      b0; // the part's first template in the batch
};

// Pass 2: block (g, b) transforms rows t2 in [g RR, g RR + RR) of A (M1
// points each), giving z at t = t2 + M2 t1; writes the searched samples to
// zout and merges their keys into fkey (mf_kernels.h, scan_fused).
template <int M1, int M2, int RR>
__global__ void
__launch_bounds__(RR *M1 / kPts)
    pass2_k(const float2 *A, const float2 *st1, ScanArgs sa)
{
	using G = Geo<M1, RR, false>;
	extern __shared__ float2 smem[];
	// the windows' keys after the data (as many as there are windows, up
	// to kWinShared: a fixed 8 KB cut the blocks an SM holds)
	u64           *wkey = (u64 *) (smem + G::POINTS);
	__shared__ u64 wpeak[G::T / 32];
	const int      b = blockIdx.y, t20 = blockIdx.x * RR;
	const int      lane = threadIdx.x & 31;
	const float2  *a    = A + (int64_t) b * M1 * M2;
	const bool     shw  = sa.nwin <= kWinShared;
	for (int i = threadIdx.x; shw && i < sa.nwin; i += G::T)
		wkey[i] = 0;
	constexpr int R0 = radix_at(M1, 1), B0 = M1 / R0, U0 = kPts / R0;
	float2        v[kPts];
#pragma unroll
	for (int u = 0; u < U0; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B0, f, j);
#pragma unroll
		for (int r = 0; r < R0; r++)
			v[u * R0 + r]
			    = a[(int64_t) (t20 + f) * M1 + j + r * B0];
	}
	first_store<G>(v, smem);
	mid_stages<G, R0>(smem, st1);
	last_dft<G>(smem, v, st1);
	__syncthreads();
	constexpr int NS = last_span(M1), R = M1 / NS, U = kPts / R;
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, n0;
		last_out<G>(u, 0, f, n0);
		store_run<G, R, NS>(smem, f, n0, v + u * R);
	}
	__syncthreads();
	// The scan. Thread (f, g) takes row t20 + f's outputs t1 in [g P, g P
	// + P), P = 16: its samples, M2 apart, run in order through the
	// clustering windows, so it keeps the loudest |z|^2 of the window it
	// is in (f32 compares, the first on ties) and packs and merges it
	// only when it leaves (cluster >= M2: at most every cluster / M2
	// samples); the peak is the loudest of those windows. A warp writes
	// runs of RR samples.
	constexpr int P = RR * M1 / G::T;
	static_assert(P == kPts, "samples per thread");
	const int  f = (int) (threadIdx.x % RR), g = (int) (threadIdx.x / RR);
	u64       *slot = sa.fkey + (u64) b * (u64) (1 + sa.nwin);
	const bool wz   = sa.zout != NULL;
	const int  tb = (int) sa.t_begin, width = (int) sa.width;
	const int  s0  = t20 + f + M2 * g * P - tb; // sample k at s0 + k M2
	float2 *zrow   = wz ? sa.zout + (int64_t) b * sa.ld - sa.q0 + tb : NULL;
	const bool win = sa.nwin > 0;
	// no windows: one window that holds every sample
	const unsigned clus  = win ? sa.cluster : (unsigned) INT32_MAX;
	const float2  *zs    = smem + G::at(f, g * P);
	float          wbest = -1.0f, pbest = -1.0f; // no sample yet
	int            wbs = 0, pbs = 0, wcur = 0;
	int            wend = -1; // the window's last sample
	bool           ovf = false, bad = false;
	// flush ends the current window: its loudest goes to the window's
	// key (when there are windows) and, if louder, becomes the peak.
	auto flush = [&]() {
		if (wbest >= 0.0f) {
			if (win) {
				const u64 key
				    = ((u64) __float_as_uint(wbest) << 32)
				    | (u64) (0xffffffffu - (unsigned) wbs);
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
	};
	// sample runs the window logic on the sample s whose |z|^2 is fz.
	auto sample = [&](int s, float fz) {
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
	};
	if (s0 < width && s0 + (P - 1) * M2 >= 0) {
		// |z|^2 in f32 rounded toward zero (mf_fused.cu's scan rounds
		// the double sum once: the two agree to an ulp, below the
		// transform's own error). A sample where f32 overflows (or z
		// is not finite) makes the thread scan again below, in double
		// as mf_fused.cu does, so that this loop has no branch for it.
#pragma unroll
		for (int k = 0; k < P; k++) {
			const int s = s0 + k * M2; // in the searched span
			if ((unsigned) s >= (unsigned) width)
				continue;
			const float2 z = zs[k * G::template run<1>()];
			if (wz)
				zrow[s] = z;
			const float fz
			    = __fmaf_rz(z.x, z.x, __fmul_rz(z.y, z.y));
			ovf = ovf || !(fz <= FLT_MAX);
			sample(s, fz <= FLT_MAX ? fz : -1.0f);
		}
		if (ovf) {
			// The windows the first loop merged stay merged: the
			// samples it dropped only made their keys smaller,
			// and atomicMax keeps the larger.
			wbest = pbest = -1.0f;
			wend          = -1;
			for (int k = 0; k < P; k++) {
				const int s = s0 + k * M2;
				if ((unsigned) s >= (unsigned) width)
					continue;
				const float2 z = zs[k * G::template run<1>()];
				const double m
				    = (double) z.x * z.x + (double) z.y * z.y;
				if (!(m <= DBL_MAX)) {
					bad = true;
					continue;
				}
				sample(s, __double2float_rz(m));
			}
		}
		flush();
	}
	if (bad)
		atomicMin(sa.nonfinite, (u64) (sa.b0 + b));
	const u64 peak = pbest >= 0.0f ? ((u64) __float_as_uint(pbest) << 32)
	        | (u64) (0xffffffffu - (unsigned) pbs)
	                               : 0;
	u64       wp   = warp_max(peak);
	if (lane == 0)
		wpeak[threadIdx.x / 32] = wp;
	__syncthreads();
	if (threadIdx.x == 0) {
		u64 m = 0;
		for (int k = 0; k < G::T / 32; k++)
			m = wpeak[k] > m ? wpeak[k] : m;
		if (m != 0)
			atomicMax(&slot[0], m);
	}
	for (int k = threadIdx.x; shw && k < sa.nwin; k += G::T)
		if (wkey[k] != 0)
			atomicMax(&slot[1 + k], wkey[k]);
}

// gather_rows_k turns each slot's packed key into a's key, t and z, as
// mf_fused.cu's gather_k does, but without the written samples: z at the
// winner t = t2 + M2 t1 is the one output of row t2 of A that pass 2's FFT
// gave there, sum over k1 of A[t2][k1] W_M1^(k1 t1), summed again here in
// double (one block per slot, a fixed order), so pass 2 writes nothing
// but keys. It agrees with pass 2's own z to f32 rounding.
__global__ void
gather_rows_k(fftd__mf_scan_args a, const u64 *fkey, const float2 *A,
    const float2 *tab1, int m1, int m2)
{
	__shared__ double red[2][kGatherThreads / 32];
	const int64_t     slots = 1 + a.nwin;
	const int64_t     total = (int64_t) a.nb * slots;
	const int         lane = threadIdx.x & 31, warp = threadIdx.x / 32;
	for (int64_t s = blockIdx.x; s < total; s += gridDim.x) {
		const int64_t b   = s / slots;
		const u64     k   = fkey[s];
		u64           key = 0, t = ~0ull;
		double        re = 0, im = 0;
		if (k != 0) { // the whole block: k is the slot's
			const int64_t i
			    = (int64_t) (0xffffffffu - (unsigned) k);
			const int64_t tt = a.t_begin + i;
			const int t2 = (int) (tt % m2), t1 = (int) (tt / m2);
			const float2 *row = A + a.n * b + (int64_t) t2 * m1;
			for (int k1 = threadIdx.x; k1 < m1;
			     k1 += kGatherThreads) {
				const float2 x = row[k1];
				const float2 w
				    = tab1[(int) (((int64_t) k1 * t1) % m1)];
				re += (double) x.x * w.x - (double) x.y * w.y;
				im += (double) x.x * w.y + (double) x.y * w.x;
			}
			for (int o = 16; o > 0; o >>= 1) {
				re += __shfl_down_sync(kFull, re, o);
				im += __shfl_down_sync(kFull, im, o);
			}
			if (lane == 0) {
				red[0][warp] = re;
				red[1][warp] = im;
			}
			__syncthreads();
			re = im = 0;
			for (int w = 0; w < kGatherThreads / 32; w++) {
				re += red[0][w];
				im += red[1][w];
			}
			double rho = fftd__mf_rho(
			    re, im, fftd__mf_norm(a.hh[b], a.scale));
			if (rho <= DBL_MAX) {
				key = (u64) __double_as_longlong(rho);
				t   = (u64) tt;
			} else if (threadIdx.x == 0) {
				atomicMin((u64 *) a.nonfinite, (u64) b);
			}
		}
		if (threadIdx.x == 0) {
			((u64 *) a.key)[s] = key;
			((u64 *) a.t)[s]   = t;
			a.z[2 * s]         = re;
			a.z[2 * s + 1]     = im;
		}
		__syncthreads(); // red is reused
	}
}

// Tables is where each twiddle table of a shape sits in the one buffer:
// st2 and st1, the stage tables of the M2- and M1-point FFTs (stage_off);
// tab1, W_M1^m (m < M1, the gather).
struct Tables {
	int st2, st1, tab1, total;
};

__host__ __device__ inline Tables
tables_of(int m2, int m1)
{
	Tables t;
	t.st2   = 0;
	t.st1   = t.st2 + stage_off(m2, m2);
	t.tab1  = t.st1 + stage_off(m1, m1);
	t.total = t.tab1 + m1;
	return t;
}

// stage_entry is entry i of an M-point FFT's stage table.
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

// tables_k writes the tables (Tables), each entry computed in double and
// rounded once.
__global__ void
tables_k(float2 *tab, int m2, int m1)
{
	const Tables t = tables_of(m2, m1);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < t.total;
	     i += gridDim.x * blockDim.x) {
		double x; // the angle / pi
		if (i < t.st1)
			x = stage_entry(m2, i - t.st2);
		else if (i < t.tab1)
			x = stage_entry(m1, i - t.st1);
		else
			x = 2.0 * (i - t.tab1) / m1;
		double sn, cs;
		sincospi(x, &sn, &cs);
		tab[i] = make_float2((float) cs, (float) sn);
	}
}

// The shapes: N = M1 M2; C columns per pass-1 block (16: 128-byte runs of
// the template), RR rows per pass-2 block. From 2^16 on, columns of 256
// (pass 1 in two radix-16 stages, the 1,024-thread-per-SM blocks that
// hide its loads best) and rows as long as N needs: on the H200, 2^20 as
// 256 x 4096 ran 1.11x faster than as 1024 x 1024, whose columns took a
// third stage and 8-column blocks (64-byte runs, 1.5 sectors each).
struct Shape {
	int    log2n, m2, m1, c, rr;
	void  *p1, *p2;
	int    t1, t2;
	size_t s1, s2;
};

// MINB, pass 1's blocks an SM must hold (launch bounds): by default half
// the SM's threads, which caps the registers at 64 a thread.
template <int M2, int M1, int C, int RR, int MINB = 1024 / Geo<M2, C, true>::T>
Shape
shape()
{
	Shape s;
	s.log2n = __builtin_ctz(M1 * M2);
	s.m2    = M2;
	s.m1    = M1;
	s.c     = C;
	s.rr    = RR;
	s.p1    = (void *) pass1_k<M2, M1, C, MINB>;
	s.p2    = (void *) pass2_k<M1, M2, RR>;
	s.t1    = Geo<M2, C, true>::T;
	s.t2    = Geo<M1, RR, false>::T;
	s.s1    = sizeof(float2) * Geo<M2, C, true>::POINTS;
	s.s2    = sizeof(float2) * Geo<M1, RR, false>::POINTS;
	return s;
}

// The compiled shapes; the first for an N is its default, the others are
// measured against it (FFTD_MF_FOURSTEP_VARIANT=k takes the k-th shape for
// N, counting from 0, where there is one: a measurement knob for
// bench/pipelines, read once).
static const Shape *
shapes(int *count)
{
	static const Shape s[] = {
		shape<64, 64, 16, 16>(),
		shape<64, 128, 16, 16>(),
		shape<128, 128, 16, 16>(),
		shape<128, 256, 16, 16>(),
		shape<256, 256, 16, 8>(),
		shape<256, 512, 16, 4>(),
		shape<256, 1024, 16, 4>(),
		shape<256, 2048, 16, 2>(),
		shape<256, 4096, 16, 1>(),
		// variants, measured against the defaults on the H200
		// (bench/pipelines, 1,024 templates; see the shapes' comment)
		shape<512, 512, 16, 4>(),
		shape<512, 1024, 16, 4>(),
		shape<1024, 1024, 8, 4>(),
		shape<256, 4096, 16, 2>(),
	};
	*count = (int) (sizeof(s) / sizeof(s[0]));
	return s;
}

bool
find_shape(int64_t n, Shape *out)
{
	static const int variant = [] {
		const char *v = getenv("FFTD_MF_FOURSTEP_VARIANT");
		return v != NULL ? atoi(v) : 0;
	}();
	int          count, seen = 0;
	const Shape *s     = shapes(&count);
	const Shape *first = NULL, *pick = NULL;
	for (int i = 0; i < count; i++) {
		if ((int64_t) 1 << s[i].log2n != n)
			continue;
		if (first == NULL)
			first = &s[i];
		if (seen++ == variant)
			pick = &s[i];
	}
	if (first == NULL)
		return false;
	*out = pick != NULL ? *pick : *first;
	return true;
}

// parts_knob is how many parts a batch goes in over the two streams
// (FFTD_MF_FOURSTEP_PARTS, a measurement knob read once; default 8:
// on the H100 2^20 ran 1.03x faster than with 2, 2^17 the same).
int
parts_knob()
{
	static const int parts = [] {
		const char *v = getenv("FFTD_MF_FOURSTEP_PARTS");
		return v != NULL && atoi(v) > 0 ? atoi(v) : 8;
	}();
	return parts;
}

// carve_knob is pass 2's shared-memory carveout, percent
// (FFTD_MF_FOURSTEP_CARVEOUT, a measurement knob read once; default 100).
int
carve_knob()
{
	static const int c = [] {
		const char *v = getenv("FFTD_MF_FOURSTEP_CARVEOUT");
		return v != NULL ? atoi(v) : 100;
	}();
	return c;
}

} // namespace

extern "C" int64_t
fftd__mf_fourstep_blocks(int64_t n)
{
	Shape s;
	return find_shape(n, &s) ? s.m1 / s.c : 0;
}

extern "C" size_t
fftd__mf_fourstep_table_bytes(int64_t n)
{
	Shape s;
	return find_shape(n, &s)
	    ? sizeof(float2) * (size_t) tables_of(s.m2, s.m1).total
	    : 0;
}

extern "C" int
fftd__mf_fourstep_tables(void *tab, int64_t n, void *stream)
{
	Shape s;
	if (!find_shape(n, &s))
		return (int) cudaErrorInvalidValue;
	const int total = tables_of(s.m2, s.m1).total;
	tables_k<<<(total + 255) / 256, 256, 0,
	    static_cast<cudaStream_t>(stream)>>>((float2 *) tab, s.m2, s.m1);
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_fourstep(const fftd__mf_fourstep_args *f, void *stream)
{
	cudaStream_t              st = static_cast<cudaStream_t>(stream);
	const fftd__mf_scan_args *a  = f->scan;
	Shape                     s;
	int64_t                   width = a->t_end - a->t_begin;
	if (!find_shape(a->n, &s) || a->precision != FFTD__KERN_F32 || a->nb < 1
	    || a->nb > 65535 || width < 1 || width > INT32_MAX
	    || a->q0 > a->t_begin || a->t_end - a->q0 > a->ld || a->cluster < 1
	    || a->nwin < 0 || f->kmin < 0 || f->kmax <= f->kmin
	    || f->kmax > a->n / 2 + 1 || ((uintptr_t) f->tpl % 8) != 0
	    || ((uintptr_t) a->q % 8) != 0)
		return (int) cudaErrorInvalidValue;
	const float2 *tab  = (const float2 *) f->tab;
	const Tables  tt   = tables_of(s.m2, s.m1);
	const float2 *st2t = tab + tt.st2, *st1 = tab + tt.st1,
	             *tab1 = tab + tt.tab1;
	// The largest shared-memory carveout: the passes' blocks an SM holds
	// are bounded by their shared memory and registers, not by L1.
	cudaError_t e = cudaFuncSetAttribute(
	    s.p1, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) s.s1);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(
		    s.p1, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(s.p2,
		    cudaFuncAttributePreferredSharedMemoryCarveout,
		    carve_knob());
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(s.p2,
		    cudaFuncAttributeMaxDynamicSharedMemorySize,
		    (int) (s.s2 + kWinShared * sizeof(u64)));
	if (e != cudaSuccess)
		return (int) e;
	// The batch in parts, through both passes each, alternating between
	// two streams (f->stream2, when given): one part's first pass (more
	// memory-bound) runs beside another's second (more compute-bound),
	// and each fills the other's tail. (Parts through both passes in turn
	// on one stream, so that the intermediate would be read back from L2,
	// measured slower on the H100: 0.85x at 2^20 with a 25 MB budget.)
	const int blocks1 = s.m1 / s.c;
	int       parts   = f->stream2 == NULL ? 1 : parts_knob();
	parts             = parts > a->nb ? a->nb : parts < 1 ? 1 : parts;
	cudaStream_t st2  = static_cast<cudaStream_t>(f->stream2);
	cudaEvent_t  fork = static_cast<cudaEvent_t>(f->ev_fork),
	            join  = static_cast<cudaEvent_t>(f->ev_join);
	if (parts > 1
	    && ((e = cudaEventRecord(fork, st)) != cudaSuccess
	        || (e = cudaStreamWaitEvent(st2, fork, 0)) != cudaSuccess))
		return (int) e;
	ScanArgs sa;
	sa.ld           = a->ld;
	sa.q0           = a->q0;
	sa.t_begin      = a->t_begin;
	sa.width        = width;
	sa.cluster      = (unsigned) (a->cluster < width ? a->cluster : width);
	sa.nwin         = a->nwin;
	sa.nonfinite    = (u64 *) a->nonfinite;
	const float2 *A = (const float2 *) f->scratch;
	for (int p = 0; p < parts; p++) {
		const int b0 = (int) ((int64_t) a->nb * p / parts);
		const int nb = (int) ((int64_t) a->nb * (p + 1) / parts) - b0;
		cudaStream_t  sp      = p % 2 == 0 ? st : st2;
		float2       *Ap      = (float2 *) f->scratch + a->n * b0;
		const float2 *tpl     = (const float2 *) f->tpl + f->nbins * b0;
		double       *partial = f->partial + (int64_t) blocks1 * b0;
		void         *args1[] = { (void *) &Ap, (void *) &tpl,
			        (void *) &f->nbins, (void *) &f->w, (void *) &f->is,
			        (void *) &f->kmin, (void *) &f->kmax, (void *) &st2t,
			        (void *) &partial };
		e                     = cudaLaunchKernel(s.p1,
		                        dim3((unsigned) blocks1, (unsigned) nb),
		                        dim3((unsigned) s.t1), args1, s.s1, sp);
		if (e != cudaSuccess)
			break;
		sa.b0   = b0;
		sa.zout = a->q == NULL ? NULL : (float2 *) a->q + a->ld * b0;
		sa.fkey = (u64 *) f->fkey + (int64_t) (1 + a->nwin) * b0;
		const float2 *Ac = Ap;
		void *args2[] = { (void *) &Ac, (void *) &st1, (void *) &sa };
		e             = cudaLaunchKernel(s.p2,
		                dim3((unsigned) (s.m2 / s.rr), (unsigned) nb),
		                dim3((unsigned) s.t2), args2,
		                s.s2
		                    + (a->nwin <= kWinShared ? (size_t) a->nwin : 0)
		                        * sizeof(u64),
		                sp);
		if (e != cudaSuccess)
			break;
	}
	// Joined even after a failed launch: nothing may run on stream2 once
	// the caller's stream is synchronised.
	cudaError_t ej = cudaSuccess;
	if (parts > 1
	    && ((ej = cudaEventRecord(join, st2)) != cudaSuccess
	        || (ej = cudaStreamWaitEvent(st, join, 0)) != cudaSuccess))
		return (int) ej;
	if (e != cudaSuccess)
		return (int) e;
	int rc
	    = fftd__mf_sum_partials(f->partial, blocks1, a->nb, f->hh, stream);
	if (rc != 0)
		return rc;
	if (a->q != NULL)
		return fftd__mf_gather(a, f->fkey, stream);
	int64_t total = (int64_t) a->nb * (1 + a->nwin);
	int64_t g     = total < 65535 * 4 ? total : 65535 * 4;
	gather_rows_k<<<(unsigned) g, kGatherThreads, 0, st>>>(
	    *a, (const u64 *) f->fkey, A, tab1, s.m1, s.m2);
	return (int) cudaGetLastError();
}

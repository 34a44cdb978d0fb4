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
// sincospif of an exact fraction (tables for it are a measured variant).
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
// the same for the scan's reads, 8 rows by 2 runs of 16 points).
template <int M_, int NF, bool COLS> struct Geo {
	static constexpr int M      = M_;
	static constexpr int T      = NF * M / kPts;
	static constexpr int PITCH  = M + M / 16 + 2;
	static constexpr int POINTS = COLS ? NF * M : NF * PITCH;
	static __device__ __forceinline__ int at(int f, int n)
	{
		return COLS ? n * NF + f : f * PITCH + n + (n >> 4);
	}
	static __device__ __forceinline__ void split(
	    int bi, int b, int &f, int &j)
	{
		if (COLS) {
			f = bi % NF;
			j = bi / NF;
		} else {
			j = bi % b;
			f = bi / b;
		}
	}
};

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
#pragma unroll
		for (int r = 0; r < R; r++)
			v[u * R + r] = s[G::at(f, j + r * B)];
	}
	__syncthreads();
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		const int jm = j % NS;
		twiddle<G::M, R, NS>(v + u * R, jm, tab);
		SmallDft<R, true>::run(v + u * R);
		const int d = (j / NS) * NS * R + jm;
#pragma unroll
		for (int r = 0; r < R; r++)
			s[G::at(f, d + r * NS)] = v[u * R + r];
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
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		SmallDft<R, true>::run(v + u * R);
#pragma unroll
		for (int r = 0; r < R; r++)
			s[G::at(f, j * R + r)] = v[u * R + r];
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
#pragma unroll
		for (int r = 0; r < R; r++)
			v[u * R + r] = s[G::at(f, j + r * B)];
	}
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B, f, j);
		twiddle<G::M, R, NS>(v + u * R, j % NS, tab);
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
	n = (j / NS) * NS * R + j % NS + r * NS;
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

// Pass 1: block (g, b) transforms columns k1 in [g C, g C + C) of template
// b's product (M2 = N2 points each) and writes them, twiddled, to A (rows
// of M1); its sum of |h|^2 / S goes to partial[b][g] (a fixed order).
template <int M2, int M1, int C, bool SIN, int MINB>
__global__ void
__launch_bounds__(C *M2 / kPts, MINB) pass1_k(float2 *A, const float2 *tpl,
    int64_t nbins, const float2 *w, const double *is, int64_t kmin,
    int64_t kmax, const float2 *st2, const float2 *tab2, const float2 *tabl,
    const float2 *tabf, double *partial)
{
	using G = Geo<M2, C, true>;
	extern __shared__ float2 smem[];
	__shared__ double        red[G::T / 32];
	const int                b = blockIdx.y, k10 = blockIdx.x * C;
	const float2            *h = tpl + nbins * b;
	constexpr int R0 = radix_at(M2, 1), B0 = M2 / R0, U0 = kPts / R0;
	float2        v[kPts];
	double        acc = 0;
#pragma unroll
	for (int u = 0; u < U0; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B0, f, j);
#pragma unroll
		for (int r = 0; r < R0; r++) {
			const int64_t k = k10 + f + (int64_t) M1 * (j + r * B0);
			float2        q = make_float2(0.0f, 0.0f);
			if (k >= kmin && k < kmax) {
				const float2 hv = h[k], wv = w[k];
				// as mf_fused.cu's product_sigma_k, op for op
				q = make_float2(hv.x * wv.x + hv.y * wv.y,
				    hv.x * wv.y - hv.y * wv.x);
				const double hr = hv.x, hi = hv.y;
				acc += (hr * hr + hi * hi) * is[k];
			}
			v[u * R0 + r] = q;
		}
	}
	first_store<G>(v, smem);
	mid_stages<G, R0>(smem, st2);
	last_dft<G>(smem, v, st2);
	constexpr int NS = last_span(M2), R = M2 / NS, U = kPts / R;
	float2       *a = A + (int64_t) b * M1 * M2;
#pragma unroll
	for (int u = 0; u < U; u++) {
#pragma unroll
		for (int r = 0; r < R; r++) {
			int f, t2;
			last_out<G>(u, r, f, t2);
			// W_N^(k1 t2) = W_N^(k10 t2) W_N^(f t2): the first
			// the same for a half-warp (one t2), the second from
			// tabf[t2][f], neighbouring f neighbouring entries.
			const int k1 = k10 + f;
			float2    tw;
			if (SIN) {
				// k1 t2 < N <= 2^24: 2 k1 t2 / N is exact
				sincospif(
				    (float) (k1 * t2) * (2.0f / (M1 * M2)),
				    &tw.y, &tw.x);
			} else {
				const int m = k10 * t2; // m < N
				tw          = cmul(cmul(__ldg(tab2 + m / M1),
				                       __ldg(tabl + m % M1)),
				             __ldg(tabf + t2 * C + f));
			}
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
#pragma unroll
		for (int r = 0; r < R; r++) {
			int f, n;
			last_out<G>(u, r, f, n);
			smem[G::at(f, n)] = v[u * R + r];
		}
	}
	__syncthreads();
	// The scan. Thread (f, g) takes row t20 + f's outputs t1 in [g P, g P
	// + P), P = 16: its samples, M2 apart, run in order through the
	// clustering windows, so it keeps the loudest key of the window it is
	// in and merges it only when it leaves (cluster >= M2: at most every
	// cluster / M2 samples); a warp writes runs of RR samples.
	constexpr int P = RR * M1 / G::T;
	static_assert(P == kPts, "samples per thread");
	const int  f = threadIdx.x % RR, g = threadIdx.x / RR;
	u64       *slot = sa.fkey + (u64) b * (u64) (1 + sa.nwin);
	const bool wz   = sa.zout != NULL;
	float2    *zrow = wz ? sa.zout + (int64_t) b * sa.ld - sa.q0 : NULL;
	const int  tb = (int) sa.t_begin, width = (int) sa.width;
	u64        peak = 0, kcur = 0;
	bool       bad  = false;
	int        wcur = -1, wend = 0; // window, its first sample past
	auto       merge = [&]() {
                if (kcur != 0) {
                        if (shw)
                                atomicMax(&wkey[wcur], kcur);
                        else
                                atomicMax(&slot[1 + wcur], kcur);
                }
	};
#pragma unroll 4
	for (int k = 0; k < P; k++) {
		const int t1 = g * P + k;
		const int t  = t20 + f + M2 * t1;
		const int s  = t - tb; // in the searched span
		if (s < 0 || s >= width)
			continue;
		const float2 z = smem[G::at(f, t1)];
		if (wz)
			zrow[t] = z;
		// |z|^2 in f32 rounded toward zero (mf_fused.cu's scan rounds
		// the double sum once: the two agree to an ulp, below the
		// transform's own error); in double only where f32 overflows,
		// as there (conversions to and from double run at 1/8 the FMA
		// rate, and were 3 of pass 2's ~25 instructions a sample).
		float fz  = __fmaf_rz(z.x, z.x, __fmul_rz(z.y, z.y));
		u64   key = 0;
		if (!(fz <= FLT_MAX)) {
			const double m
			    = (double) z.x * z.x + (double) z.y * z.y;
			fz  = m <= DBL_MAX ? __double2float_rz(m) : fz;
			bad = bad || !(m <= DBL_MAX);
		}
		if (fz <= FLT_MAX)
			key = ((u64) __float_as_uint(fz) << 32)
			    | (u64) (0xffffffffu - (unsigned) s);
		peak = key > peak ? key : peak;
		if (sa.nwin > 0) {
			if (s >= wend) {
				merge();
				wcur = (int) ((unsigned) s / sa.cluster);
				wend = (wcur + 1) * (int) sa.cluster;
				wend = wend < 0 ? INT32_MAX : wend;
				kcur = 0;
			}
			kcur = key > kcur ? key : kcur;
		}
	}
	if (sa.nwin > 0 && wcur >= 0)
		merge();
	if (bad)
		atomicMin(sa.nonfinite, (u64) (sa.b0 + b));
	peak = warp_max(peak);
	if (lane == 0)
		wpeak[threadIdx.x / 32] = peak;
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
// tab2, W_M2^m (m < M2); tabl, W_N^m (m < M1) (their product W_N^m for any
// m < N); tab1, W_M1^m (m < M1, the gather); tabf, W_N^(f t2) at t2 C + f
// (f < C, t2 < M2).
struct Tables {
	int st2, st1, tab2, tabl, tab1, tabf, total;
};

__host__ __device__ inline Tables
tables_of(int m2, int m1, int c)
{
	Tables t;
	t.st2   = 0;
	t.st1   = t.st2 + stage_off(m2, m2);
	t.tab2  = t.st1 + stage_off(m1, m1);
	t.tabl  = t.tab2 + m2;
	t.tab1  = t.tabl + m1;
	t.tabf  = t.tab1 + m1;
	t.total = t.tabf + c * m2;
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
tables_k(float2 *tab, int m2, int m1, int c)
{
	const Tables t = tables_of(m2, m1, c);
	const double n = (double) m1 * m2;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < t.total;
	     i += gridDim.x * blockDim.x) {
		double x; // the angle / pi
		if (i < t.st1)
			x = stage_entry(m2, i - t.st2);
		else if (i < t.tab2)
			x = stage_entry(m1, i - t.st1);
		else if (i < t.tabl)
			x = 2.0 * (i - t.tab2) / m2;
		else if (i < t.tab1)
			x = 2.0 * (i - t.tabl) / n;
		else if (i < t.tabf)
			x = 2.0 * (i - t.tab1) / m1;
		else
			x = 2.0
			    * (double) (((i - t.tabf) % c) * ((i - t.tabf) / c))
			    / n;
		double sn, cs;
		sincospi(x, &sn, &cs);
		tab[i] = make_float2((float) cs, (float) sn);
	}
}

// The shapes: N = M1 M2, M1 = M2 or 2 M2; C columns per pass-1 block (16:
// 128-byte runs of the template), RR rows per pass-2 block.
struct Shape {
	int    log2n, m2, m1, c, rr;
	void  *p1, *p2;
	int    t1, t2;
	size_t s1, s2;
};

template <int M2, int M1, int C, int RR, bool SIN = false, int MINB = 1>
Shape
shape()
{
	Shape s;
	s.log2n = __builtin_ctz(M1 * M2);
	s.m2    = M2;
	s.m1    = M1;
	s.c     = C;
	s.rr    = RR;
	s.p1    = (void *) pass1_k<M2, M1, C, SIN, MINB>;
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
		shape<64, 64, 16, 16, true>(),
		shape<64, 128, 16, 16, true>(),
		shape<128, 128, 16, 16, true>(),
		shape<128, 256, 16, 16, true>(),
		shape<256, 256, 16, 8, true>(),
		shape<256, 512, 16, 4, true>(),
		shape<512, 512, 16, 4, true>(),
		shape<512, 1024, 16, 4, true>(),
		shape<1024, 1024, 8, 4, true>(),
		// variants, measured against the defaults on the H100
		// (bench/pipelines, 1,024 templates): four-step twiddles from
		// tables instead of sincospif, 0.95x at 2^17 and 0.97x at 2^20;
		// 2^20 as 512 x 2048, 0.96x
		shape<256, 512, 16, 4>(),
		shape<1024, 1024, 8, 4>(),
		shape<512, 2048, 16, 4, true>(),
		shape<256, 512, 16, 4, true, 5>(),
		shape<1024, 1024, 8, 4, true, 3>(),
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
	    ? sizeof(float2) * (size_t) tables_of(s.m2, s.m1, s.c).total
	    : 0;
}

extern "C" int
fftd__mf_fourstep_tables(void *tab, int64_t n, void *stream)
{
	Shape s;
	if (!find_shape(n, &s))
		return (int) cudaErrorInvalidValue;
	const int total = tables_of(s.m2, s.m1, s.c).total;
	tables_k<<<(total + 255) / 256, 256, 0,
	    static_cast<cudaStream_t>(stream)>>>(
	    (float2 *) tab, s.m2, s.m1, s.c);
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
	const Tables  tt   = tables_of(s.m2, s.m1, s.c);
	const float2 *st2t = tab + tt.st2, *st1 = tab + tt.st1,
	             *tab2 = tab + tt.tab2, *tabl = tab + tt.tabl,
	             *tab1 = tab + tt.tab1, *tabf = tab + tt.tabf;
	cudaError_t e = cudaFuncSetAttribute(
	    s.p1, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) s.s1);
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
			        (void *) &tab2, (void *) &tabl, (void *) &tabf,
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

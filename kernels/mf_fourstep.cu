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
// from its row of the intermediate (gather_rows_k; windows whose key is
// clearly below the threshold are skipped), or read from the written
// samples when series rows asked for them (mf_fused.cu's gather).
//
// A batch runs in parts alternating between two streams, so that one
// part's first pass (memory-bound) runs beside another's second
// (compute-bound); each part's sigma^2 and gather, and the caller's copy
// of its slots (part_done), run on a third stream of the highest priority
// beside the later parts' passes. Figures: bench/pipelines and
// bench/README.md.

#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "mf_rho.cuh"
#include "mf_stockham.cuh"

namespace
{

using namespace fftd_mf;

constexpr int kGatherThreads = 128;
constexpr int kGatherLoads   = 8; // gather_rows_k's loads in flight a lane

// Pass 1: block (g, b) transforms columns k1 in [g C, g C + C) of template
// b's product (M2 = N2 points each) and writes them, twiddled, to A (rows
// of M1); its sum of |h|^2 / S goes to partial[b][g] (a fixed order).
// SIG false (sigma^2 given, FFTD_MF_SIGMASQ_USE) sums nothing: no 1/S
// loads, no f64 products, no partial (on the H200 the pass then ran 5-10%
// faster; bench/README.md, stop 30).
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
template <int M2, int M1, int C, int MINB, bool SIG>
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
	static_assert((int64_t) M1 * M2 <= (1 << 30), "32-bit bin indices");
	// Bins in 32 bits, the band test one unsigned compare: 64-bit indices
	// and tests held registers that the loads in flight need (the pass
	// is bound by the latency of its loads, at 64 registers a thread).
	const unsigned kspan = (unsigned) (kmax - kmin);
	const int      kmn   = (int) kmin;
	float2         v[kPts];
	double         acc = 0;
#pragma unroll
	for (int u = 0; u < U0; u++) {
		int f, j;
		G::split(threadIdx.x + u * G::T, B0, f, j);
#pragma unroll
		for (int r = 0; r < R0 / 2; r++) {
			const int k = k10 + f + M1 * (j + r * B0);
			float2    q = make_float2(0.0f, 0.0f);
			if ((unsigned) (k - kmn) < kspan) {
				const float2 hv = h[k], wv = w[k];
				// as mf_fused.cu's product_sigma_k, op for op
				q = make_float2(hv.x * wv.x + hv.y * wv.y,
				    hv.x * wv.y - hv.y * wv.x);
				// |h|^2 in double, as mf_fused.cu's
				// product_sigma_k (an f32 |h|^2 put sigma
				// 3e-8 off, against 1e-12 in the tests)
				if constexpr (SIG) {
					const double hr = hv.x, hi = hv.y;
					acc += (hr * hr + hi * hi) * is[k];
				}
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
		if constexpr (SIG) {
			const double hr = hv.x, hi = hv.y;
			acc += (hr * hr + hi * hi) * is[kn];
		}
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
	float2 *a = A + (int64_t) b * M1 * M2;
	// k1 is the same for all of a thread's butterflies (T is a multiple
	// of C).
	int f0, t0;
	last_out<G>(0, 0, f0, t0);
	const int k1 = k10 + f0;
	fourstep_twiddle<G>(v, k1, M1 * M2,
	    [&](int, int t2, float2 x) { a[(int64_t) t2 * M1 + k1] = x; });
	if constexpr (!SIG)
		return;
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
	const float2  *a = A + (int64_t) b * M1 * M2;
	for (int i = threadIdx.x; sa.nwin <= kWinShared && i < sa.nwin;
	     i += G::T)
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
	// The scan (mf_stockham.cuh, Scan). Only outputs t1 in [lo, hi) can
	// be searched samples (t = t2 + M2 t1, t2 < M2, in [tb, tb + width)),
	// and the row's GR threads share them evenly: thread (f, g) takes row
	// t20 + f's outputs t1 in [n0, n0 + cnt), at most P = 16 of them. (A
	// run of 16 a thread over all M1 outputs left the threads outside the
	// searched span idle at the merge's barrier: with the middle half
	// searched, 19% of pass 2's stall samples on the H200 at 2^20.) Its
	// samples, M2 apart, run in order through the clustering windows
	// (cluster >= M2: a merge at most every cluster / M2 samples). A warp
	// writes runs of RR samples.
	constexpr int P = RR * M1 / G::T, GR = G::T / RR;
	static_assert(P == kPts, "samples per thread");
	const int f = (int) (threadIdx.x % RR), g = (int) (threadIdx.x / RR);
	const int tb = (int) sa.t_begin, width = (int) sa.width;
	const int lo = min(tb / M2, M1);
	const int hi
	    = (int) min(((int64_t) tb + width + M2 - 1) / M2, (int64_t) M1);
	const int     pd   = (hi - lo + GR - 1) / GR;
	const int     n0   = lo + g * pd;
	const int     cnt  = max(0, min(pd, hi - n0));
	const int     s0   = t20 + f + M2 * n0 - tb; // sample k at s0 + k M2
	float2       *zrow = sa.zout != NULL
	          ? sa.zout + (int64_t) b * sa.ld - sa.q0 + tb
	          : NULL;
	const float2 *zs   = smem + G::at(f, 0);
	Scan          sc(sa, wkey, b);
	bool          bad = false;
	if (cnt > 0)
		bad = scan_samples<P>(
		    sc, width, zrow, [&](int k) { return s0 + k * M2; },
		    [&](int k) {
			    const int n = n0 + k;
			    return zs[n + (n >> 4)];
		    },
		    cnt);
	if (bad)
		atomicMin(sa.nonfinite, (u64) (sa.b0 + b));
	merge_block<G::T>(sc, wpeak, sa.nwin);
}

// gather_rows_k turns each slot's packed key into a's key, t and z, as
// mf_fused.cu's gather_k does, but without the written samples: z at the
// winner t = t2 + M2 t1 is the one output of row t2 of A that pass 2's FFT
// gave there, sum over k1 of A[t2][k1] W_M1^(k1 t1), summed again here in
// double (one warp per slot, a fixed order), so pass 2 writes nothing but
// keys. It agrees with pass 2's own z to f32 rounding.
//
// A window whose key puts rho below 0.99 threshold is left as before (key
// 0; mf_kernels.h): the host keeps only windows above threshold, and the
// sums are a row of A each (at 2^20, 129 slots of 32 KB a template, a
// fifth of the intermediate's bytes again). A warp, not a block, per slot,
// and a grid of a few waves: most slots are such windows, which cost a
// key's read and four writes.
__global__ void
gather_rows_k(fftd__mf_scan_args a, const u64 *fkey, const float2 *A,
    const float2 *tab1, int m1, int m2)
{
	constexpr int W     = kGatherThreads / 32;
	const int64_t slots = 1 + a.nwin;
	const int64_t total = (int64_t) a.nb * slots;
	const int     lane  = threadIdx.x & 31;
	for (int64_t s = (int64_t) blockIdx.x * W + threadIdx.x / 32; s < total;
	     s += (int64_t) gridDim.x * W) {
		const int64_t b   = s / slots;
		u64           k   = fkey[s];
		u64           key = 0, t = ~0ull;
		double        re = 0, im = 0;
		const double  norm
		    = k != 0 ? fftd__mf_norm(a.hh[b], a.scale) : 0.0;
		if (k != 0 && s % slots != 0 && a.threshold > 0) {
			// NaN and infinity are never below: gathered, flagged
			const double fz = __uint_as_float((unsigned) (k >> 32));
			if (sqrt(fz) * norm < 0.99 * a.threshold)
				k = 0;
		}
		if (k != 0) { // the whole warp: k is the slot's
			const int64_t i
			    = (int64_t) (0xffffffffu - (unsigned) k);
			const int64_t tt = a.t_begin + i;
			const int t2 = (int) (tt % m2), t1 = (int) (tt / m2);
			const float2 *row = A + a.n * b + (int64_t) t2 * m1;
			// kGatherLoads loads in flight a lane (a row is up to
			// 4,096 points, 128 a lane: one at a time, the peaks'
			// sums were most of the gather's 57 us a batch at
			// 2^20); the same order of sums as one at a time.
			for (int k0 = 0; k0 < m1; k0 += 32 * kGatherLoads) {
				float2 x[kGatherLoads], w[kGatherLoads];
#pragma unroll
				for (int u = 0; u < kGatherLoads; u++) {
					const int k1 = k0 + 32 * u + lane;
					// m1 is a power of two
					x[u] = k1 < m1
					    ? row[k1]
					    : make_float2(0.0f, 0.0f);
					w[u] = tab1[((unsigned) k1
					                * (unsigned) t1)
					    & (unsigned) (m1 - 1)];
				}
#pragma unroll
				for (int u = 0; u < kGatherLoads; u++) {
					if (k0 + 32 * u + lane < m1) {
						re += (double) x[u].x * w[u].x
						    - (double) x[u].y * w[u].y;
						im += (double) x[u].x * w[u].y
						    + (double) x[u].y * w[u].x;
					}
				}
			}
			// every lane ends with the same sums, in the same order
			for (int o = 16; o > 0; o >>= 1) {
				re += __shfl_xor_sync(kFull, re, o);
				im += __shfl_xor_sync(kFull, im, o);
			}
			double rho = fftd__mf_rho(re, im, norm);
			if (rho <= DBL_MAX) {
				key = (u64) __double_as_longlong(rho);
				t   = (u64) tt;
			} else if (lane == 0) {
				atomicMin(
				    (u64 *) a.nonfinite, (u64) (a.b0 + b));
			}
		}
		if (lane == 0) {
			((u64 *) a.key)[s] = key;
			((u64 *) a.t)[s]   = t;
			a.z[2 * s]         = re;
			a.z[2 * s + 1]     = im;
		}
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
	void  *p1, *p1n, *p2; // p1n: pass 1 summing no sigma
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
	s.p1    = (void *) pass1_k<M2, M1, C, MINB, true>;
	s.p1n   = (void *) pass1_k<M2, M1, C, MINB, false>;
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
// (FFTD_MF_FOURSTEP_PARTS, a measurement knob read once, at most
// FFTD__MF_MAX_PARTS; default 8:
// on the H100 2^20 ran 1.03x faster than with 2, 2^17 the same; on the
// H200, stop 19, 1, 2, 4 and 8 parts stayed within the runs' noise at
// 2^20, +-1.5%, and at 2^17, +-10%).
int
parts_knob()
{
	static const int parts = [] {
		const char *v = getenv("FFTD_MF_FOURSTEP_PARTS");
		const int   k = v != NULL ? atoi(v) : 0;
		return k < 1                 ? 8
		    : k > FFTD__MF_MAX_PARTS ? FFTD__MF_MAX_PARTS
		                             : k;
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

// cluster_knob says whether the one-pass kernel (mf_cluster.cu) runs
// where it has a shape (FFTD_MF_CLUSTER=1, read once; default off: on the
// H200 it ran at 0.41-0.68x the two passes' templates per second, see
// mf_cluster.cu).
bool
cluster_knob()
{
	static const bool on = [] {
		const char *v = getenv("FFTD_MF_CLUSTER");
		return v != NULL && atoi(v) != 0;
	}();
	return on;
}

// finish_part queues the sigma^2 sums and the gather of templates [b0, b0
// + nb) of f's batch on stream sp, then f->part_done.
int
finish_part(const fftd__mf_fourstep_args *f, const Shape &s, const float2 *tab1,
    int b0, int nb, cudaStream_t sp)
{
	const fftd__mf_scan_args *a       = f->scan;
	const int                 blocks1 = s.m1 / s.c;
	const int64_t             sl      = 1 + a->nwin;
	const uint64_t           *fkey    = f->fkey + sl * b0;
	// the part as a batch of its own
	fftd__mf_scan_args pa = *a;
	pa.nb                 = nb;
	pa.b0                 = a->b0 + b0;
	pa.hh                 = a->hh + b0;
	fftd__mf_part_slots(a->key, sl, b0, nb, &pa.key, &pa.t, &pa.z);
	pa.q   = a->q == NULL ? NULL : (const float2 *) a->q + a->ld * b0;
	int rc = f->sigma
	    ? fftd__mf_sum_partials(f->partial + (int64_t) blocks1 * b0,
	        blocks1, nb, a->scale, f->hh + b0, sp)
	    : 0;
	if (rc == 0 && a->q != NULL) {
		rc = fftd__mf_gather(&pa, fkey, sp);
	} else if (rc == 0) {
		// A few waves of warps over the slots (the windows below
		// threshold are cheap; see gather_rows_k).
		const int64_t warps = kGatherThreads / 32;
		int64_t       g     = (nb * sl + warps - 1) / warps;
		g                   = g < 4096 ? g : 4096;
		gather_rows_k<<<(unsigned) g, kGatherThreads, 0, sp>>>(pa,
		    (const u64 *) fkey, (const float2 *) f->scratch + a->n * b0,
		    tab1, s.m1, s.m2);
		rc = (int) cudaGetLastError();
	}
	if (rc == 0 && f->part_done != NULL)
		rc = f->part_done(f->ctx, b0, nb, sp);
	return rc;
}

} // namespace

extern "C" int64_t
fftd__mf_fourstep_blocks(int64_t n)
{
	Shape         s;
	const int64_t c = fftd__mf_cluster_blocks(n);
	if (!find_shape(n, &s))
		return 0;
	return s.m1 / s.c > c ? s.m1 / s.c : c;
}

// The one-pass kernel's table follows the two passes' (Tables).
extern "C" size_t
fftd__mf_fourstep_table_bytes(int64_t n)
{
	Shape s;
	return find_shape(n, &s)
	    ? sizeof(float2) * (size_t) tables_of(s.m2, s.m1).total
	        + fftd__mf_cluster_table_bytes(n)
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
	int rc = (int) cudaGetLastError();
	// the one-pass kernel's only where it runs (3.5 us a call at 2^17)
	if (rc == 0 && cluster_knob() && fftd__mf_cluster_blocks(n) > 0)
		rc = fftd__mf_cluster_tables((float2 *) tab + total, n, stream);
	return rc;
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
	const float2 *tab = (const float2 *) f->tab;
	const Tables  tt  = tables_of(s.m2, s.m1);
	if (cluster_knob() && fftd__mf_cluster_blocks(a->n) > 0) {
		if (f->part_done == NULL)
			return fftd__mf_cluster(f, tab + tt.total, stream);
		// one part, laid out as part_done's are (mf_kernels.h)
		fftd__mf_scan_args     ca = *a;
		fftd__mf_fourstep_args cf = *f;
		fftd__mf_part_slots(
		    a->key, 1 + a->nwin, 0, a->nb, &ca.key, &ca.t, &ca.z);
		cf.scan = &ca;
		int rc  = fftd__mf_cluster(&cf, tab + tt.total, stream);
		return rc == 0 ? f->part_done(f->ctx, 0, a->nb, stream) : rc;
	}
	const float2 *st2t = tab + tt.st2, *st1 = tab + tt.st1,
	             *tab1 = tab + tt.tab1;
	void *const p1     = f->sigma ? s.p1 : s.p1n;
	// The largest shared-memory carveout: the passes' blocks an SM holds
	// are bounded by their shared memory and registers, not by L1.
	cudaError_t e = cudaFuncSetAttribute(
	    p1, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) s.s1);
	if (e == cudaSuccess)
		e = cudaFuncSetAttribute(
		    p1, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
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
	// The batch in parts, their passes alternating between two streams
	// (f->stream2, when given): one part's first pass (more memory-bound)
	// runs beside another's second (more compute-bound), and each fills
	// the other's tail. Each part's sigma^2, gather and the copy that
	// part_done queues run on a third stream beside the later parts'
	// passes, so that after the last pass only the last part's remain
	// (gathered and copied once a batch, they were 43 of a 1,024-template
	// call's 1,027 us of GPU time at 2^17 on the H200; on the passes'
	// streams they held up the next parts' passes: 1,088 us). Every pass
	// is queued before any part's rest: queued in between, the rest of
	// part 0 delayed the host's queuing of part 1 by ~35 us. (Parts through
	// both passes in turn on one stream, so that the intermediate would be
	// read back from L2, measured slower on the H100: 0.85x at 2^20 with a
	// 25 MB budget.)
	const int blocks1 = s.m1 / s.c;
	int parts = f->stream2 == NULL || f->stream3 == NULL ? 1 : parts_knob();
	parts     = parts > a->nb ? a->nb : parts < 1 ? 1 : parts;
	cudaStream_t st2  = static_cast<cudaStream_t>(f->stream2),
	             st3  = static_cast<cudaStream_t>(f->stream3);
	cudaEvent_t fork  = static_cast<cudaEvent_t>(f->ev_fork),
	            join  = static_cast<cudaEvent_t>(f->ev_join),
	            join3 = static_cast<cudaEvent_t>(f->ev_join3);
	if (parts > 1
	    && ((e = cudaEventRecord(fork, st)) != cudaSuccess
	        || (e = cudaStreamWaitEvent(st2, fork, 0)) != cudaSuccess
	        || (e = cudaStreamWaitEvent(st3, fork, 0)) != cudaSuccess))
		return (int) e;
	ScanArgs      sa = scan_args(a, width);
	const int64_t sl = 1 + a->nwin; // slots a template
	int           p  = 0;
	for (; p < parts; p++) {
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
		e                     = cudaLaunchKernel(p1,
		                        dim3((unsigned) blocks1, (unsigned) nb),
		                        dim3((unsigned) s.t1), args1, s.s1, sp);
		if (e != cudaSuccess)
			break;
		sa.b0   = a->b0 + b0;
		sa.zout = a->q == NULL ? NULL : (float2 *) a->q + a->ld * b0;
		sa.fkey = (u64 *) f->fkey + sl * b0;
		const float2 *Ac = Ap;
		void *args2[] = { (void *) &Ac, (void *) &st1, (void *) &sa };
		e             = cudaLaunchKernel(s.p2,
		                dim3((unsigned) (s.m2 / s.rr), (unsigned) nb),
		                dim3((unsigned) s.t2), args2,
		                s.s2
		                    + (a->nwin <= kWinShared ? (size_t) a->nwin : 0)
		                        * sizeof(u64),
		                sp);
		if (e == cudaSuccess && parts > 1)
			e = cudaEventRecord(
			    static_cast<cudaEvent_t>(f->ev_part[p]), sp);
		if (e != cudaSuccess)
			break;
	}
	int rc = 0;
	for (int q = 0; q < p && rc == 0; q++) {
		const int b0 = (int) ((int64_t) a->nb * q / parts);
		const int nb = (int) ((int64_t) a->nb * (q + 1) / parts) - b0;
		if (parts > 1) {
			rc = (int) cudaStreamWaitEvent(
			    st3, static_cast<cudaEvent_t>(f->ev_part[q]), 0);
		}
		if (rc == 0)
			rc = finish_part(
			    f, s, tab1, b0, nb, parts > 1 ? st3 : st);
	}
	// Joined even after a failed launch: nothing may run on stream2 or
	// stream3 once the caller's stream is synchronised.
	cudaError_t ej = cudaSuccess;
	if (parts > 1
	    && ((ej = cudaEventRecord(join, st2)) != cudaSuccess
	        || (ej = cudaStreamWaitEvent(st, join, 0)) != cudaSuccess
	        || (ej = cudaEventRecord(join3, st3)) != cudaSuccess
	        || (ej = cudaStreamWaitEvent(st, join3, 0)) != cudaSuccess))
		return (int) ej;
	return e != cudaSuccess ? (int) e : rc;
}

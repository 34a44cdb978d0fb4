// SPDX-License-Identifier: MIT
//
// mf_cluster.cu — the fourstep engine's one-pass kernel (f32; C ABI in
// mf_kernels.h; mf_fourstep.cu runs it for the sizes it has a shape for):
// the inverse transform of each template's product q = conj(h) D / S, the
// scan and the gather of one template in one thread-block cluster (CUDA
// programming guide, "Thread Block Clusters" and "Distributed Shared
// Memory"), whose CL blocks hold the whole N-point transform in their
// shared memory, so that per template the bank reads the template band
// once and nothing else leaves the chip but keys and the slots' results.
// The two-pass kernels (mf_fourstep.cu) write and read an N-point
// intermediate instead: twice the template band's bytes again.
//
// Index algebra (the four-step FFT, Bailey, "FFTs in external or
// hierarchical memory", J. Supercomputing 4, 1990, with N = CL M and the
// cluster's blocks as the outer factor; inverse, W_L = exp(+2 pi i / L)):
// bin k = k1 + CL k2, sample t = t2 + M t1 (k1, t1 < CL; k2, t2 < M).
//   1. block r forms q over bins [r M/2, r M/2 + M/2) (coalesced reads of
//      the template, D/S and 1/S; sigma's partial) into its staging area;
//   2. block k1 = r reads its column q[k1 + CL k2] from the blocks'
//      staging areas (distributed shared memory; k2 < M/2 only, q being
//      zero past N/2 but for the bin N/2 itself: half_dft16), transforms
//      it in M points (mf_stockham.cuh) and multiplies output t2 by
//      W_N^(k1 t2);
//   3. block r takes t2 in [r M/CL, r M/CL + M/CL): z[t2 + M t1] = sum
//      over k1 of W_CL^(k1 t1) Y_k1[t2], the k1 read from each block's
//      transform; scans them (Scan) and merges the keys into the
//      template's slots;
//   4. every block sums sigma's partials; the slots are spread over the
//      blocks, each slot's z summed again in double at its winner from the
//      CL transforms' values there, and rho, t and z written as
//      gather_rows_k (mf_fourstep.cu) writes them.
// Four cluster barriers a template: after 1 (staging written), 2 (the
// transforms written), 3 (the slots merged, the partials written) and 4
// (no block leaves while another reads its shared memory).
//
// Shapes: M points a block, M / 16 threads (16 points each, 64 registers:
// 1,024 threads an SM), CL blocks; shared memory (M + M/2) 17/16 points of
// 8 bytes and the windows' keys:
// 2^17 as 8 x 2^14 (212 KiB, one block an SM), 2^16 as 8 x 2^13 (two),
// 2^18 as 16 x 2^14 (a non-portable cluster size, allowed on sm_90).
//
// Not the default (FFTD_MF_CLUSTER=1 asks for it, mf_fourstep.cu): on the
// lent H200 (stop 19, bench/pipelines, 1,024 templates, one call each) it
// ran 1.23, 0.88, 0.52 and 0.26 M templates/s at 2^14 .. 2^17 against the
// two passes' 1.86, 1.30, 0.83 and 0.63 (0.41-0.68x), though it moves a
// fifth of their DRAM bytes (the band alone). Nsight Compute at 2^17: one
// 1,024-thread block an SM (registers and 209 KiB of shared memory), issue
// slots 19% busy, 0.82 of 7.9 warps a scheduler eligible, the top stall the LG
// queue (36%, the first step's 24 loads a thread and 16-byte spills), 15
// clusters resident; every step waits for the slowest block of the cluster, and
// nothing of another template overlaps it on the SM. At 2^14 (eight
// blocks an SM) it is still 0.66x. What it would need: several templates
// a cluster in flight (persistent clusters, the next template's band
// fetched by the bulk copy engine while this one transforms), fewer
// remote reads (vector DSMEM loads), no spills.
// Figures: bench/pipelines and bench/README.md.

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "mf_rho.cuh"
#include "mf_stockham.cuh"

namespace cg = cooperative_groups;

namespace
{

using namespace fftd_mf;

// Geometry of the M-point transform of a block (one row: point n at n +
// n / 16) and of its staging area (M/2 bins, the same padding: the column
// reads of step 2, CL bins apart, then hit every bank pair twice a warp).
template <int M, int CL> struct Shape1 {
	using G                        = Geo<M, 1, false>;
	static constexpr int N         = M * CL;
	static constexpr int T         = M / kPts;  // threads
	static constexpr int H         = M / 2;     // bins a block forms
	static constexpr int J         = H / T;     // bins a thread forms
	static constexpr int NT2       = kPts / CL; // t2 a thread scans
	static constexpr int STAGE_PTS = H + H / 16;
	static_assert(
	    J * T == H && NT2 * CL == kPts && NT2 * T * CL == M, "shape");
	static __device__ __forceinline__ int stg_at(int o)
	{
		return o + (o >> 4);
	}
	static constexpr size_t smem(int64_t nwin)
	{
		return sizeof(float2) * (size_t) (G::POINTS + STAGE_PTS)
		    + (nwin <= kWinShared ? (size_t) nwin : 0) * sizeof(u64);
	}
};

// one_pass_k: cluster (., b) runs template b of the batch (the top of this
// file). partial[b CL + r] gets block r's sum of |h|^2 / S over its bins,
// hh[b] sigma^2 from their sum in order (sum 0: hh[b] is given and read);
// the slots' results go to ga's key, t and z
// unless sa.zout is set (series rows: the samples are written there and
// fftd__mf_gather reads them).
template <int M, int CL>
__global__ void
__cluster_dims__(CL, 1, 1) __launch_bounds__(M / kPts, 1024 / (M / kPts))
    one_pass_k(const float2 *__restrict__ tpl, int64_t nbins,
        const float2 *__restrict__ w, const double *__restrict__ is,
        int64_t kmin, int64_t kmax, const float2 *st, double *partial,
        double *hh, int sum, ScanArgs sa, fftd__mf_scan_args ga)
{
	using S                    = Shape1<M, CL>;
	using G                    = typename S::G;
	constexpr int            T = S::T, H = S::H, J = S::J, NT2 = S::NT2;
	extern __shared__ float2 smem[];
	float2                  *buf  = smem;             // the transform
	float2                  *stg  = smem + G::POINTS; // this block's bins
	u64                     *wkey = (u64 *) (stg + S::STAGE_PTS);
	__shared__ double        red[T / 32];
	__shared__ u64           wpeak[T / 32];
	cg::cluster_group        cl = cg::this_cluster();
	const int                r  = (int) cl.block_rank();
	const int                b = blockIdx.y, tid = threadIdx.x;
	const float2            *h = tpl + nbins * b;

	// 1. The product over this block's bins, and sigma's partial (as
	// mf_fused.cu's product_sigma_k, op for op: |h|^2 rounded once to
	// f32, summed in double).
	double acc = 0;
	{
		float2 hv[J], wv[J];
		double iv[J];
#pragma unroll
		for (int j = 0; j < J; j++) {
			const int64_t k  = (int64_t) r * H + tid + T * j;
			const bool    in = k >= kmin && k < kmax;
			hv[j]            = in ? h[k] : make_float2(0.0f, 0.0f);
			wv[j]            = in ? w[k] : make_float2(0.0f, 0.0f);
			iv[j]            = in ? is[k] : 0.0;
		}
#pragma unroll
		for (int j = 0; j < J; j++) {
			const float2 x = hv[j], y = wv[j];
			stg[S::stg_at(tid + T * j)] = make_float2(
			    x.x * y.x + x.y * y.y, x.x * y.y - x.y * y.x);
			acc += ((double) x.x * x.x + (double) x.y * x.y)
			    * iv[j];
		}
	}
	// the bin N/2, when it is in the band: k1 = 0, k2 = M/2 (block 0,
	// thread 0's butterfly in step 2)
	const int64_t kn  = (int64_t) S::N / 2;
	float2        qn  = make_float2(0.0f, 0.0f);
	const bool    nyq = r == 0 && tid == 0 && kn >= kmin && kn < kmax;
	if (nyq) {
		const float2 x = h[kn], y = w[kn];
		qn = make_float2(x.x * y.x + x.y * y.y, x.x * y.y - x.y * y.x);
		acc += ((double) x.x * x.x + (double) x.y * x.y) * is[kn];
	}
	for (int i = tid; sa.nwin <= kWinShared && i < sa.nwin; i += T)
		wkey[i] = 0;
	cl.sync();

	// 2. Column k1 = r: point p of the first stage's butterfly tid is k2
	// = tid + p M/16 (p < 8; p >= 8 is past N/2), bin k1 + CL k2, in
	// block k / H's staging area.
	float2 v[kPts];
#pragma unroll
	for (int p = 0; p < kPts / 2; p++) {
		const int     k   = r + CL * (tid + T * p);
		const float2 *src = cl.map_shared_rank(stg, k / H);
		v[p]              = src[S::stg_at(k % H)];
	}
	half_dft16(v);
	if (nyq) {
#pragma unroll
		for (int m = 0; m < kPts; m++) {
			v[m].x += m % 2 == 0 ? qn.x : -qn.x;
			v[m].y += m % 2 == 0 ? qn.y : -qn.y;
		}
	}
	store_run16<G>(buf, 0, tid * kPts, v);
	__syncthreads();
	mid_stages<G, 16>(buf, st);
	last_dft<G>(buf, v, st);
	constexpr int NS = last_span(M), R = M / NS, U = kPts / R;
	if (r != 0) // W_N^(r t2)
		fourstep_twiddle<G>(
		    v, r, S::N, [&](int i, int, float2 x) { v[i] = x; });
	__syncthreads();
#pragma unroll
	for (int u = 0; u < U; u++) {
		int f, n0;
		last_out<G>(u, 0, f, n0);
		store_run<G, R, NS>(buf, f, n0, v + u * R);
	}
	cl.sync();

	// 3. Block r's outputs: t2 = t20 + tid + T a2 (a2 < NT2), every t1;
	// sample k of the thread is (a2, t1) = (k % NT2, k / NT2), in
	// increasing order.
	const int t20 = r * (M / CL);
	float2    z[kPts];
#pragma unroll
	for (int a2 = 0; a2 < NT2; a2++) {
		const int at = G::at(0, t20 + tid + T * a2);
#pragma unroll
		for (int p = 0; p < CL; p++)
			z[a2 * CL + p] = cl.map_shared_rank(buf, p)[at];
		SmallDft<CL, true>::run(z + a2 * CL);
	}
	const int  tb = (int) sa.t_begin, width = (int) sa.width;
	const int  s0   = t20 + tid - tb;
	float2    *zrow = sa.zout != NULL
	       ? sa.zout + (int64_t) b * sa.ld - sa.q0 + tb
	       : NULL;
	Scan       sc(sa, wkey, b);
	const bool bad = scan_samples<kPts>(
	    sc, width, zrow,
	    [&](int k) { return s0 + T * (k % NT2) + M * (k / NT2); },
	    [&](int k) { return z[(k % NT2) * CL + k / NT2]; });
	if (bad)
		atomicMin(sa.nonfinite, (u64) b);
	merge_block<T>(sc, wpeak, sa.nwin);
	acc = warp_sum(acc);
	if ((tid & 31) == 0)
		red[tid / 32] = acc;
	__syncthreads();
	if (tid == 0) {
		double s = 0;
		for (int i = 0; i < T / 32; i++)
			s += red[i];
		partial[(int64_t) b * CL + r] = s;
	}
	cl.sync();

	// 4. sigma's sum and the slots (written by this cluster's blocks
	// before the barrier: read from L2, not L1).
	// (sum 0: sigma^2 is given in hh, FFTD_MF_SIGMASQ_USE)
	double hhb = 0;
	if (sum) {
		for (int p = 0; p < CL; p++)
			hhb += __ldcg(partial + (int64_t) b * CL + p);
		hhb = fftd__mf_sigmasq(hhb, ga.scale);
		if (r == 0 && tid == 0)
			hh[b] = hhb;
	} else {
		hhb = __ldcg(hh + b);
	}
	if (sa.zout == NULL) {
		const int64_t slots = 1 + sa.nwin;
		const double  norm  = fftd__mf_norm(hhb, ga.scale);
		for (int64_t si = (int64_t) r * T + tid; si < slots;
		     si += (int64_t) CL * T) {
			const u64 k   = __ldcg(sc.slot + si);
			u64       key = 0, t = ~0ull;
			double    re = 0, im = 0;
			if (k != 0) {
				const int64_t tt = sa.t_begin
				    + (int64_t) (0xffffffffu - (unsigned) k);
				const int t2 = (int) (tt % M),
				          t1 = (int) (tt / M);
				const int at = G::at(0, t2);
				for (int p = 0; p < CL; p++) {
					const float2 y
					    = cl.map_shared_rank(buf, p)[at];
					double sn, cs;
					sincospi(2.0 * ((p * t1) % CL) / CL,
					    &sn, &cs);
					re += (double) y.x * cs
					    - (double) y.y * sn;
					im += (double) y.x * sn
					    + (double) y.y * cs;
				}
				const double rho = fftd__mf_rho(re, im, norm);
				if (rho <= DBL_MAX) {
					key = (u64) __double_as_longlong(rho);
					t   = (u64) tt;
				} else {
					atomicMin((u64 *) ga.nonfinite,
					    (u64) (ga.b0 + b));
				}
			}
			const int64_t o     = (int64_t) b * slots + si;
			((u64 *) ga.key)[o] = key;
			((u64 *) ga.t)[o]   = t;
			ga.z[2 * o]         = re;
			ga.z[2 * o + 1]     = im;
		}
	}
	cl.sync();
}

// A compiled shape: N = 2^log2n as CL blocks of M points.
struct Shape {
	int    log2n, m, cl;
	void  *k;
	int    threads;
	size_t smem_max;
};

template <int M, int CL>
Shape
shape()
{
	return Shape { __builtin_ctz(M * CL), M, CL, (void *) one_pass_k<M, CL>,
		M / kPts, Shape1<M, CL>::smem(kWinShared) };
}

bool
find_shape(int64_t n, Shape *out)
{
	static const Shape s[] = {
		shape<2048, 8>(),
		shape<4096, 8>(),
		shape<8192, 8>(),
		shape<16384, 8>(),
		shape<16384, 16>(),
	};
	for (const Shape &x : s) {
		if ((int64_t) 1 << x.log2n == n) {
			*out = x;
			return true;
		}
	}
	return false;
}

// stage_k writes an M-point FFT's stage table (stage_off), each entry in
// double and rounded once.
__global__ void
stage_k(float2 *tab, int m)
{
	const int total = stage_off(m, m);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += gridDim.x * blockDim.x) {
		double sn, cs;
		sincospi(stage_entry(m, i), &sn, &cs);
		tab[i] = make_float2((float) cs, (float) sn);
	}
}

} // namespace

extern "C" int
fftd__mf_cluster_blocks(int64_t n)
{
	Shape s;
	return find_shape(n, &s) ? s.cl : 0;
}

extern "C" size_t
fftd__mf_cluster_table_bytes(int64_t n)
{
	Shape s;
	return find_shape(n, &s) ? sizeof(float2) * (size_t) stage_off(s.m, s.m)
	                         : 0;
}

extern "C" int
fftd__mf_cluster_tables(void *tab, int64_t n, void *stream)
{
	Shape s;
	if (!find_shape(n, &s))
		return (int) cudaErrorInvalidValue;
	const int total = stage_off(s.m, s.m);
	stage_k<<<(total + 255) / 256, 256, 0,
	    static_cast<cudaStream_t>(stream)>>>((float2 *) tab, s.m);
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_cluster(const fftd__mf_fourstep_args *f, const void *tab, void *stream)
{
	// The arguments are fftd__mf_fourstep's, which checked them.
	const fftd__mf_scan_args *a = f->scan;
	Shape                     s;
	const int64_t             width = a->t_end - a->t_begin;
	if (!find_shape(a->n, &s))
		return (int) cudaErrorInvalidValue;
	cudaError_t e = cudaFuncSetAttribute(
	    s.k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) s.smem_max);
	if (e == cudaSuccess && s.cl > 8)
		e = cudaFuncSetAttribute(
		    s.k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
	if (e != cudaSuccess)
		return (int) e;
	ScanArgs sa       = scan_args(a, width);
	sa.zout           = a->q == NULL ? NULL : (float2 *) a->q;
	sa.fkey           = (u64 *) f->fkey;
	const size_t smem = s.smem_max
	    - (size_t) (kWinShared
	          - (a->nwin <= kWinShared ? (int) a->nwin : kWinShared))
	        * sizeof(u64);
	const float2 *tpl = (const float2 *) f->tpl, *w = (const float2 *) f->w,
	             *st         = (const float2 *) tab;
	int64_t            nbins = f->nbins, kmin = f->kmin, kmax = f->kmax;
	double            *partial = f->partial, *hh = f->hh;
	int                sum = f->sigma;
	fftd__mf_scan_args ga  = *a;
	void *args[]           = { (void *) &tpl, (void *) &nbins, (void *) &w,
		          (void *) &f->is, (void *) &kmin, (void *) &kmax, (void *) &st,
		          (void *) &partial, (void *) &hh, (void *) &sum, (void *) &sa,
		          (void *) &ga };
	e = cudaLaunchKernel(s.k, dim3((unsigned) s.cl, (unsigned) a->nb),
	    dim3((unsigned) s.threads), args, smem,
	    static_cast<cudaStream_t>(stream));
	if (e != cudaSuccess)
		return (int) e;
	return a->q != NULL ? fftd__mf_gather(a, f->fkey, stream) : 0;
}

// SPDX-License-Identifier: MIT
//
// mf_fused.cu — the kernels of the matched-filter bank's fused engine
// (f32; daemon/backends/cuda_mf.c runs them around cuFFT's plain batched
// inverse; C ABI in mf_kernels.h): w = D / S and 1 / S once per call; per
// batch, one kernel that reads each template once and writes both its
// product band and its sigma^2 partial sums (the plain engine reads the
// bank twice and writes whole rows), a fixed-order sum of the partials,
// and the one-pass scan of the searched samples. The plain engine's scan
// (mf.cu) reads the
// samples three times to find each slot's largest double rho and then its
// first sample; here one read finds both, because the key packs the
// ordering quantity |z|^2 (f32, rounded toward zero so the order is
// monotone) above the complemented sample index, and a tiny gather
// recomputes rho in double at the winners only, exactly as mf.cu does.

#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "mf_rho.cuh"

namespace
{

typedef unsigned long long u64;

constexpr int      kThreads = 256;
constexpr int      kIter    = 8; // samples per thread per block
constexpr int      kChunk   = kThreads * kIter;
constexpr int      kWinMax  = kChunk + 2; // windows one chunk can touch
constexpr unsigned kFull    = 0xffffffffu;

// weight_k: w_k = D_k / S_k in double, rounded once; is_k = 1 / S_k.
__global__ void
weight_k(float2 *w, double *is, const float *data, const float *psd,
    int64_t kmin, int64_t kmax)
{
	int64_t step = (int64_t) gridDim.x * blockDim.x;
	for (int64_t k = kmin + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     k < kmax; k += step) {
		double s = (double) psd[k];
		w[k]  = make_float2((float) __ddiv_rn((double) data[2 * k], s),
		     (float) __ddiv_rn((double) data[2 * k + 1], s));
		is[k] = __ddiv_rn(1.0, s);
	}
}

// product_sigma_k: block (c, b) covers bins kmin + [c, c + 1) CHUNK of
// template b: q = conj(h) w there, and the block's sum of |h|^2 is (double,
// a fixed tree) into partial[b][c].
template <bool kAligned>
__global__ void
product_sigma_k(float2 *q, int64_t n, const float *tpl, int64_t nbins,
    const float2 *w, const double *is, int64_t kmin, int64_t kmax,
    double *partial)
{
	__shared__ double part[kThreads];
	int               b  = blockIdx.y;
	int64_t           k0 = kmin + (int64_t) blockIdx.x * FFTD__MF_CHUNK;
	int64_t k1 = k0 + FFTD__MF_CHUNK < kmax ? k0 + FFTD__MF_CHUNK : kmax;
	const float *h   = tpl + 2 * nbins * (int64_t) b;
	float2      *qb  = q + n * (int64_t) b;
	double       acc = 0;
#pragma unroll 8
	for (int64_t k = k0 + threadIdx.x; k < k1; k += kThreads) {
		float2 hv = kAligned ? ((const float2 *) h)[k]
		                     : make_float2(h[2 * k], h[2 * k + 1]);
		float2 wv = w[k];
		qb[k]     = make_float2(
		        hv.x * wv.x + hv.y * wv.y, hv.x * wv.y - hv.y * wv.x);
		double hr = hv.x, hi = hv.y;
		acc += (hr * hr + hi * hi) * is[k];
	}
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int st = kThreads / 2; st > 0; st >>= 1) {
		if ((int) threadIdx.x < st) {
			part[threadIdx.x] += part[threadIdx.x + st];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		partial[(int64_t) b * gridDim.x + blockIdx.x] = part[0];
	}
}

// sum_k: hh[b] = sigma^2 of template b, from its partials summed in a
// fixed order (times scale, mf_rho.cuh): one
// warp per template, lane l summing partials l, l + 32, ... in turn, then a
// fixed shuffle tree (a thread per template, summing alone, took 8 us for
// 256 templates of 32 partials: a launch's worth per batch).
__global__ void
sum_k(const double *partial, int chunks, int nb, double scale, double *hh)
{
	int b    = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x & 31;
	if (b >= nb) {
		return; // the whole warp: b is the warp's
	}
	double s = 0;
	for (int c = lane; c < chunks; c += 32) {
		s += partial[(int64_t) b * chunks + c];
	}
	for (int o = 16; o > 0; o >>= 1) {
		s += __shfl_down_sync(kFull, s, o);
	}
	if (lane == 0) {
		hh[b] = fftd__mf_sigmasq(s, scale);
	}
}

__device__ inline u64
warp_max(u64 v)
{
	for (int o = 16; o > 0; o >>= 1) {
		u64 u = __shfl_down_sync(kFull, v, o);
		v     = u > v ? u : v;
	}
	return v;
}

// scan_k: block (x, b) reads samples [x kChunk, (x + 1) kChunk) of the
// searched span of row b (row at q + b ld + off), coalesced (iteration j:
// samples x kChunk + j kThreads + threadIdx.x; all loads issued before
// any use), keeping the block's loudest key per clustering window in
// shared memory (a warp inside one window reduces first and makes one
// shared atomic) and the block's loudest overall; then one global
// atomicMax per touched window and one for the peak.
__global__ void
scan_k(const float2 *q, int64_t ld, int64_t off, int64_t width, int64_t cluster,
    int64_t nwin, u64 *fkey, u64 *nonfinite)
{
	__shared__ u64 wkey[kWinMax];
	__shared__ u64 wpeak[kThreads / 32];
	int            b    = blockIdx.y;
	int64_t        c0   = (int64_t) blockIdx.x * kChunk;
	int64_t        w0   = nwin > 0 ? c0 / cluster : 0;
	int            lane = threadIdx.x & 31;
	for (int i = threadIdx.x; i < kWinMax; i += kThreads) {
		wkey[i] = 0;
	}
	const float2 *row = q + (int64_t) b * ld + off;
	float2        z[kIter];
#pragma unroll
	for (int j = 0; j < kIter; j++) {
		int64_t i = c0 + (int64_t) j * kThreads + threadIdx.x;
		z[j]      = i < width ? row[i] : make_float2(0.0f, 0.0f);
	}
	__syncthreads();
	// wide: a window is at least a chunk long, so this chunk touches two
	// windows at most (w0, w0 + 1): each thread keeps both maxima and a
	// warp reduces them once, with no division per sample.
	bool     wide  = nwin > 0 && cluster >= kChunk;
	int64_t  bound = (w0 + 1) * cluster - c0; // first index of w0 + 1
	unsigned cl    = (unsigned) (cluster < kChunk ? cluster : 1);
	u64      peak = 0, kw0 = 0, kw1 = 0;
	bool     bad = false;
#pragma unroll
	for (int j = 0; j < kIter; j++) {
		int     r   = j * kThreads + (int) threadIdx.x; // in the chunk
		int64_t i   = c0 + r;
		u64     key = 0;
		if (i < width) {
			double m = (double) z[j].x * z[j].x
			    + (double) z[j].y * z[j].y;
			if (m <= DBL_MAX) {
				float f = __double2float_rz(m);
				key     = ((u64) __float_as_uint(f) << 32)
				    | (u64) (0xffffffffu - (unsigned) i);
			} else {
				bad = true;
			}
		}
		peak = key > peak ? key : peak;
		if (wide) {
			if (r < bound) {
				kw0 = key > kw0 ? key : kw0;
			} else {
				kw1 = key > kw1 ? key : kw1;
			}
		} else if (nwin > 0) {
			int64_t i0 = i - lane;
			if (i0 >= width) {
				continue; // the whole warp is past the end
			}
			int64_t  last = i0 + 31 < width ? i0 + 31 : width - 1;
			unsigned wa   = (unsigned) i0 / cl,
			         wb   = (unsigned) last / cl;
			if (wa == wb) {
				u64 m = warp_max(key);
				if (lane == 0 && m != 0) {
					atomicMax(&wkey[wa - w0], m);
				}
			} else if (key != 0) {
				atomicMax(&wkey[(unsigned) i / cl - w0], key);
			}
		}
	}
	if (wide) {
		kw0 = warp_max(kw0);
		kw1 = warp_max(kw1);
		if (lane == 0 && kw0 != 0) {
			atomicMax(&wkey[0], kw0);
		}
		if (lane == 0 && kw1 != 0) {
			atomicMax(&wkey[1], kw1);
		}
	}
	if (bad) {
		atomicMin(nonfinite, (u64) b);
	}
	peak = warp_max(peak);
	if (lane == 0) {
		wpeak[threadIdx.x / 32] = peak;
	}
	__syncthreads();
	u64 *slot = fkey + (u64) b * (u64) (1 + nwin);
	if (threadIdx.x == 0) {
		u64 m = 0;
		for (int k = 0; k < kThreads / 32; k++) {
			m = wpeak[k] > m ? wpeak[k] : m;
		}
		if (m != 0) {
			atomicMax(&slot[0], m);
		}
	}
	if (nwin > 0) {
		int64_t last
		    = c0 + kChunk < width ? c0 + kChunk - 1 : width - 1;
		int nw = (int) (last / cluster - w0 + 1);
		for (int k = threadIdx.x; k < nw; k += kThreads) {
			if (wkey[k] != 0) {
				atomicMax(&slot[1 + w0 + k], wkey[k]);
			}
		}
	}
}

// gather_k turns each slot's key into a.key (rho's bits), a.t and a.z,
// rho computed as every engine computes it (mf_rho.cuh).
__global__ void
gather_k(fftd__mf_scan_args a, const u64 *fkey)
{
	int64_t slots = 1 + a.nwin;
	int64_t total = (int64_t) a.nb * slots;
	int64_t step  = (int64_t) gridDim.x * blockDim.x;
	for (int64_t s = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     s < total; s += step) {
		int64_t b   = s / slots;
		u64     k   = fkey[s];
		u64     key = 0, t = ~0ull;
		double  re = 0, im = 0;
		if (k != 0) {
			int64_t i = (int64_t) (0xffffffffu - (unsigned) k);
			const float2 *q = (const float2 *) a.q + a.ld * b
			    + (a.t_begin - a.q0);
			re         = (double) q[i].x;
			im         = (double) q[i].y;
			double rho = fftd__mf_rho(
			    re, im, fftd__mf_norm(a.hh[b], a.scale));
			if (rho <= DBL_MAX) {
				key = (u64) __double_as_longlong(rho);
				t   = (u64) (a.t_begin + i);
			} else {
				atomicMin(
				    (u64 *) a.nonfinite, (u64) (a.b0 + b));
			}
		}
		((u64 *) a.key)[s] = key;
		((u64 *) a.t)[s]   = t;
		a.z[2 * s]         = re;
		a.z[2 * s + 1]     = im;
	}
}

} // namespace

extern "C" int
fftd__mf_weight(void *w, double *is, const void *data, const void *psd,
    int64_t kmin, int64_t kmax, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	int64_t      g  = (kmax - kmin + kThreads - 1) / kThreads;
	g               = g < 1 ? 1 : g > 2048 ? 2048 : g;
	weight_k<<<(unsigned) g, kThreads, 0, st>>>((float2 *) w, is,
	    (const float *) data, (const float *) psd, kmin, kmax);
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_product_sigma(void *q, int64_t n, const void *tpl, int64_t nbins,
    const void *w, const double *is, int64_t kmin, int64_t kmax, int nb,
    double *partial, double scale, double *hh, void *stream)
{
	cudaStream_t st     = static_cast<cudaStream_t>(stream);
	int64_t      chunks = FFTD__MF_CHUNKS(kmax - kmin);
	if (nb < 1 || nb > 65535 || kmax <= kmin || chunks > 65535) {
		return (int) cudaErrorInvalidValue;
	}
	dim3 grid((unsigned) chunks, (unsigned) nb);
	if (((uintptr_t) tpl % 8) == 0) {
		product_sigma_k<true><<<grid, kThreads, 0, st>>>((float2 *) q,
		    n, (const float *) tpl, nbins, (const float2 *) w, is, kmin,
		    kmax, partial);
	} else {
		product_sigma_k<false><<<grid, kThreads, 0, st>>>((float2 *) q,
		    n, (const float *) tpl, nbins, (const float2 *) w, is, kmin,
		    kmax, partial);
	}
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		return (int) e;
	}
	// hh NULL: sigma^2 is given (FFTD_MF_SIGMASQ_USE), the partials unused
	return hh == NULL ? 0
	                  : fftd__mf_sum_partials(
	                      partial, (int) chunks, nb, scale, hh, stream);
}

extern "C" int
fftd__mf_sum_partials(const double *partial, int chunks, int nb, double scale,
    double *hh, void *stream)
{
	cudaStream_t st  = static_cast<cudaStream_t>(stream);
	int          per = kThreads / 32; // templates per block
	sum_k<<<(unsigned) ((nb + per - 1) / per), kThreads, 0, st>>>(
	    partial, chunks, nb, scale, hh);
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_scan_fused(const fftd__mf_scan_args *a, uint64_t *fkey, void *stream)
{
	cudaStream_t st    = static_cast<cudaStream_t>(stream);
	int64_t      width = a->t_end - a->t_begin;
	if (a->precision != FFTD__KERN_F32 || a->nb < 1 || a->nb > 65535
	    || width < 1 || width > INT32_MAX || a->q0 > a->t_begin
	    || a->t_end - a->q0 > a->ld || a->cluster < 1 || a->nwin < 0) {
		return (int) cudaErrorInvalidValue;
	}
	dim3 grid((unsigned) ((width + kChunk - 1) / kChunk), (unsigned) a->nb);
	scan_k<<<grid, kThreads, 0, st>>>((const float2 *) a->q, a->ld,
	    a->t_begin - a->q0, width, a->cluster, a->nwin, (u64 *) fkey,
	    (u64 *) a->nonfinite);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		return (int) e;
	}
	return fftd__mf_gather(a, fkey, stream);
}

extern "C" int
fftd__mf_gather(const fftd__mf_scan_args *a, const uint64_t *fkey, void *stream)
{
	cudaStream_t st    = static_cast<cudaStream_t>(stream);
	int64_t      total = (int64_t) a->nb * (1 + a->nwin);
	int64_t      g     = (total + kThreads - 1) / kThreads;
	g                  = g < 1 ? 1 : g > 4096 ? 4096 : g;
	gather_k<<<(unsigned) g, kThreads, 0, st>>>(*a, (const u64 *) fkey);
	return (int) cudaGetLastError();
}

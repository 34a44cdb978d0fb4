// SPDX-License-Identifier: MIT
//
// mf.cu — the matched-filter bank's kernels on the cuda backend
// (kernels/mf_kernels.h is their C ABI; daemon/mf.h defines the bank):
// the input checks, sigma^2 per template, the product q = conj(h) D / S
// that cuFFT's batched inverse transform turns into z / (4 df), and the
// scan of rho = |z| / sigma for the peak and each clustering window's
// loudest sample, plus rho series. The plain, unfused version: one pass
// per step, memory bound.
//
// Exactness: the products and rho are computed with explicitly rounded
// double operations (__dmul_rn and friends, never contracted into FMAs),
// in the fftw engine's order (daemon/backends/fftw_mf.c), so q is bit for
// bit the CPU's and rho is the same function of z. The scan finds the
// largest rho of a slot as the largest bit pattern (non-negative doubles
// order as unsigned integers) and then, recomputing rho bit for bit, the
// first sample holding it: the CPU's "first on ties", with no
// approximation of rho in a packed key.

#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "mf_rho.cuh"

namespace
{

typedef unsigned long long u64;
static_assert(sizeof(u64) == sizeof(uint64_t), "u64 is 64 bits");

constexpr int      kThreads = 256;
constexpr unsigned kFull    = 0xffffffffu;
constexpr u64      kNone    = ~0ull;

// grid_for gives the blocks covering n items, at most cap (grid-stride
// loops take the rest).
unsigned
grid_for(int64_t n, int64_t cap)
{
	int64_t g = (n + kThreads - 1) / kThreads;
	if (g < 1) {
		g = 1;
	}
	return (unsigned) (g < cap ? g : cap);
}

// norm_of is 4 df / sigma_b (mf_rho.cuh).
__device__ inline double
norm_of(const double *hh, int b, double scale)
{
	return fftd__mf_norm(hh[b], scale);
}

// rho_at is rho at sample t of q (|q_t| norm), the same bits in every
// pass; *re, *im get q_t.
template <typename T>
__device__ inline double
rho_at(const T *q, int64_t t, double norm, double *re, double *im)
{
	double r = (double) q[2 * t], i = (double) q[2 * t + 1];
	*re = r;
	*im = i;
	return fftd__mf_rho(r, i, norm);
}

// warp_max and warp_min reduce v over the 32 lanes (all must call); the
// result is lane 0's.
__device__ inline u64
warp_max(u64 v)
{
	for (int o = 16; o > 0; o >>= 1) {
		u64 u = __shfl_down_sync(kFull, v, o);
		v     = u > v ? u : v;
	}
	return v;
}

__device__ inline u64
warp_min(u64 v)
{
	for (int o = 16; o > 0; o >>= 1) {
		u64 u = __shfl_down_sync(kFull, v, o);
		v     = u < v ? u : v;
	}
	return v;
}

// check_k lowers *bad to 2k for a PSD bin not positive and finite, 2k+1
// for a data bin not finite (mf_kernels.h).
template <typename T>
__global__ void
check_k(const T *data, const T *psd, int64_t kmin, int64_t kmax, u64 *bad)
{
	int64_t step = (int64_t) gridDim.x * blockDim.x;
	for (int64_t k = kmin + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     k < kmax; k += step) {
		double s    = (double) psd[k];
		u64    code = kNone;
		if (!(s > 0) || !isfinite(s)) {
			code = 2 * (u64) k;
		} else if (!isfinite((double) data[2 * k])
		    || !isfinite((double) data[2 * k + 1])) {
			code = 2 * (u64) k + 1;
		}
		if (code != kNone) {
			atomicMin(bad, code);
		}
	}
}

// sigma2_k: block j sums |h_jk|^2 / S_k over [kmin, kmax) in double and
// writes sigma_j^2 (that sum times scale = 4 df, mf_rho.cuh).
template <typename T>
__global__ void
sigma2_k(const T *tpl, const T *psd, int64_t nbins, int64_t kmin, int64_t kmax,
    double scale, double *hh)
{
	__shared__ double part[kThreads];
	const T          *h   = tpl + 2 * nbins * (int64_t) blockIdx.x;
	double            acc = 0;
	for (int64_t k = kmin + threadIdx.x; k < kmax; k += blockDim.x) {
		double hr = (double) h[2 * k], hi = (double) h[2 * k + 1];
		double is = __ddiv_rn(1.0, (double) psd[k]);
		acc       = __dadd_rn(acc,
		          __dmul_rn(
		              __dadd_rn(__dmul_rn(hr, hr), __dmul_rn(hi, hi)), is));
	}
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int s = kThreads / 2; s > 0; s >>= 1) {
		if ((int) threadIdx.x < s) {
			part[threadIdx.x] += part[threadIdx.x + s];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		hh[blockIdx.x] = fftd__mf_sigmasq(part[0], scale);
	}
}

// product_k fills template blockIdx.y's q over [0, n) (mf_kernels.h).
template <typename T>
__global__ void
product_k(T *q, const T *data, const T *psd, const T *tpl, int64_t n,
    int64_t kmin, int64_t kmax)
{
	int64_t  nbins = n / 2 + 1;
	T       *qb    = q + 2 * n * (int64_t) blockIdx.y;
	const T *h     = tpl + 2 * nbins * (int64_t) blockIdx.y;
	int64_t  step  = (int64_t) gridDim.x * blockDim.x;
	for (int64_t k = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; k < n;
	     k += step) {
		T re = 0, im = 0;
		if (k >= kmin && k < kmax) {
			double s  = (double) psd[k];
			double wr = __ddiv_rn((double) data[2 * k], s);
			double wi = __ddiv_rn((double) data[2 * k + 1], s);
			double hr = (double) h[2 * k],
			       hi = (double) h[2 * k + 1];
			re        = (T) __dadd_rn(
			           __dmul_rn(wr, hr), __dmul_rn(wi, hi));
			im = (T) __dsub_rn(
			    __dmul_rn(wi, hr), __dmul_rn(wr, hi));
		}
		qb[2 * k]     = re;
		qb[2 * k + 1] = im;
	}
}

// scan_max: pass 1, the largest rho bits of each slot. One thread per
// sample i = t - t_begin of template blockIdx.y; a warp whose samples lie
// in one window makes one atomicMax for it, others one per lane.
template <typename T>
__global__ void
scan_max(fftd__mf_scan_args a)
{
	int     b     = blockIdx.y;
	int64_t width = a.t_end - a.t_begin;
	int     lane  = threadIdx.x & 31;
	int64_t i     = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t i0    = i - lane;
	if (i0 >= width) {
		return; // the whole warp is past the end
	}
	const T *q   = (const T *) a.q + 2 * a.ld * (int64_t) b - 2 * a.q0;
	bool     in  = i < width;
	u64      key = 0;
	if (in) {
		double re, im;
		double rho = rho_at(
		    q, a.t_begin + i, norm_of(a.hh, b, a.scale), &re, &im);
		if (rho <= DBL_MAX) {
			key = (u64) __double_as_longlong(rho);
		} else {
			atomicMin((u64 *) a.nonfinite, (u64) b);
		}
	}
	u64 *slot = (u64 *) a.key + (u64) b * (u64) (1 + a.nwin);
	u64  m    = warp_max(key);
	if (lane == 0 && m != 0) {
		atomicMax(&slot[0], m);
	}
	if (a.nwin > 0) {
		int64_t last = i0 + 31 < width ? i0 + 31 : width - 1;
		int64_t w0 = i0 / a.cluster, w1 = last / a.cluster;
		if (w0 == w1) {
			if (lane == 0 && m != 0) {
				atomicMax(&slot[1 + w0], m);
			}
		} else if (in && key != 0) {
			atomicMax(&slot[1 + i / a.cluster], key);
		}
	}
}

// scan_first: pass 2, the first sample of each slot whose rho has the
// slot's largest bits (rho recomputed exactly as in pass 1).
template <typename T>
__global__ void
scan_first(fftd__mf_scan_args a)
{
	int     b     = blockIdx.y;
	int64_t width = a.t_end - a.t_begin;
	int     lane  = threadIdx.x & 31;
	int64_t i     = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	int64_t i0    = i - lane;
	if (i0 >= width) {
		return;
	}
	const T   *q    = (const T *) a.q + 2 * a.ld * (int64_t) b - 2 * a.q0;
	u64        base = (u64) b * (u64) (1 + a.nwin);
	const u64 *key  = (const u64 *) a.key + base;
	u64       *ts   = (u64 *) a.t + base;
	bool       in   = i < width;
	u64        tp = kNone, tw = kNone;
	if (in) {
		double re, im;
		double rho = rho_at(
		    q, a.t_begin + i, norm_of(a.hh, b, a.scale), &re, &im);
		if (rho <= DBL_MAX) {
			u64 k = (u64) __double_as_longlong(rho);
			if (k == key[0]) {
				tp = (u64) (a.t_begin + i);
			}
			if (a.nwin > 0 && k == key[1 + i / a.cluster]) {
				tw = (u64) (a.t_begin + i);
			}
		}
	}
	u64 m = warp_min(tp);
	if (lane == 0 && m != kNone) {
		atomicMin(&ts[0], m);
	}
	if (a.nwin > 0) {
		int64_t last = i0 + 31 < width ? i0 + 31 : width - 1;
		int64_t w0 = i0 / a.cluster, w1 = last / a.cluster;
		if (w0 == w1) {
			u64 mw = warp_min(tw);
			if (lane == 0 && mw != kNone) {
				atomicMin(&ts[1 + w0], mw);
			}
		} else if (tw != kNone) {
			atomicMin(&ts[1 + i / a.cluster], tw);
		}
	}
}

// scan_z: pass 3, q at each slot's sample (0 where none was found, which
// only a non-finite rho causes).
template <typename T>
__global__ void
scan_z(fftd__mf_scan_args a)
{
	int64_t slots = 1 + a.nwin;
	int64_t total = (int64_t) a.nb * slots;
	int64_t step  = (int64_t) gridDim.x * blockDim.x;
	for (int64_t s = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     s < total; s += step) {
		int64_t  b  = s / slots;
		u64      t  = ((const u64 *) a.t)[s];
		double   re = 0, im = 0;
		const T *q = (const T *) a.q + 2 * a.ld * b;
		if (t >= (u64) a.q0 && t - (u64) a.q0 < (u64) a.ld) {
			re = (double) q[2 * (t - a.q0)];
			im = (double) q[2 * (t - a.q0) + 1];
		}
		a.z[2 * s]     = re;
		a.z[2 * s + 1] = im;
	}
}

// series_k writes rho of template b over the searched samples into row.
template <typename T>
__global__ void
series_k(fftd__mf_scan_args a, int b, T *row)
{
	int64_t  width = a.t_end - a.t_begin;
	const T *q     = (const T *) a.q + 2 * a.ld * (int64_t) b;
	double   norm  = norm_of(a.hh, b, a.scale);
	int64_t  step  = (int64_t) gridDim.x * blockDim.x;
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     i < width; i += step) {
		double re, im;
		row[i] = (T) rho_at(q, a.t_begin - a.q0 + i, norm, &re, &im);
	}
}

// scan_run launches the three scan passes for T.
template <typename T>
cudaError_t
scan_run(const fftd__mf_scan_args *a, cudaStream_t st)
{
	int64_t width = a->t_end - a->t_begin;
	dim3    grid(
	       (unsigned) ((width + kThreads - 1) / kThreads), (unsigned) a->nb);
	scan_max<T><<<grid, kThreads, 0, st>>>(*a);
	scan_first<T><<<grid, kThreads, 0, st>>>(*a);
	scan_z<T><<<grid_for((int64_t) a->nb * (1 + a->nwin), 4096), kThreads,
	    0, st>>>(*a);
	return cudaGetLastError();
}

} // namespace

extern "C" int
fftd__mf_check_inputs(const void *data, const void *psd, int precision,
    int64_t kmin, int64_t kmax, uint64_t *bad, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	unsigned     g  = grid_for(kmax - kmin, 1024);
	u64         *bd = reinterpret_cast<u64 *>(bad);
	if (precision == FFTD__KERN_F64) {
		check_k<double><<<g, kThreads, 0, st>>>((const double *) data,
		    (const double *) psd, kmin, kmax, bd);
	} else if (precision == FFTD__KERN_F32) {
		check_k<float><<<g, kThreads, 0, st>>>(
		    (const float *) data, (const float *) psd, kmin, kmax, bd);
	} else {
		return (int) cudaErrorInvalidValue;
	}
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_sigma2(const void *templates, const void *psd, int precision,
    int64_t nbins, int64_t kmin, int64_t kmax, int64_t count, double scale,
    double *hh, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	if (count < 1 || count > INT32_MAX) {
		return (int) cudaErrorInvalidValue;
	}
	if (precision == FFTD__KERN_F64) {
		sigma2_k<double><<<(unsigned) count, kThreads, 0, st>>>(
		    (const double *) templates, (const double *) psd, nbins,
		    kmin, kmax, scale, hh);
	} else if (precision == FFTD__KERN_F32) {
		sigma2_k<float><<<(unsigned) count, kThreads, 0, st>>>(
		    (const float *) templates, (const float *) psd, nbins, kmin,
		    kmax, scale, hh);
	} else {
		return (int) cudaErrorInvalidValue;
	}
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_product(void *q, const void *data, const void *psd,
    const void *templates, int precision, int64_t n, int64_t kmin, int64_t kmax,
    int nb, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	if (nb < 1 || nb > 65535) {
		return (int) cudaErrorInvalidValue;
	}
	dim3 grid(grid_for(n, 8192), (unsigned) nb);
	if (precision == FFTD__KERN_F64) {
		product_k<double><<<grid, kThreads, 0, st>>>((double *) q,
		    (const double *) data, (const double *) psd,
		    (const double *) templates, n, kmin, kmax);
	} else if (precision == FFTD__KERN_F32) {
		product_k<float><<<grid, kThreads, 0, st>>>((float *) q,
		    (const float *) data, (const float *) psd,
		    (const float *) templates, n, kmin, kmax);
	} else {
		return (int) cudaErrorInvalidValue;
	}
	return (int) cudaGetLastError();
}

extern "C" int
fftd__mf_scan(const fftd__mf_scan_args *a, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	if (a->nb < 1 || a->nb > 65535 || a->t_end <= a->t_begin
	    || a->cluster < 1 || a->nwin < 0) {
		return (int) cudaErrorInvalidValue;
	}
	if (a->precision == FFTD__KERN_F64) {
		return (int) scan_run<double>(a, st);
	}
	if (a->precision == FFTD__KERN_F32) {
		return (int) scan_run<float>(a, st);
	}
	return (int) cudaErrorInvalidValue;
}

extern "C" int
fftd__mf_series(const fftd__mf_scan_args *a, int b, void *row, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	unsigned     g  = grid_for(a->t_end - a->t_begin, 8192);
	if (b < 0 || b >= a->nb) {
		return (int) cudaErrorInvalidValue;
	}
	if (a->precision == FFTD__KERN_F64) {
		series_k<double><<<g, kThreads, 0, st>>>(*a, b, (double *) row);
	} else if (a->precision == FFTD__KERN_F32) {
		series_k<float><<<g, kThreads, 0, st>>>(*a, b, (float *) row);
	} else {
		return (int) cudaErrorInvalidValue;
	}
	return (int) cudaGetLastError();
}

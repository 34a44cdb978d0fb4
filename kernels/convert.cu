// SPDX-License-Identifier: MIT
//
// convert.cu — the precision conversions of accuracy-aware "auto"
// (convert.h says what and why): per-transform maxima (a grid-stride
// reduction per transform, atomicMax on the bits of non-negative
// doubles, which order as unsigned integers), one exponent per transform,
// and the scaled conversions in and out. Every value passes through
// double, so each conversion rounds once. tc16 plans fuse the conversion
// into their first and last pass (kernels/tc_io.cuh) and take only the
// exponents from here; split16 and cuFFT use the separate conversions.

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "convert.h"
#include "fftd_kernels.h"

namespace
{

// load reads element i of precision P as a double.
__device__ __forceinline__ double
load(const void *p, int prec, int64_t i)
{
	if (prec == FFTD__KERN_F64)
		return ((const double *) p)[i];
	if (prec == FFTD__KERN_F32)
		return (double) ((const float *) p)[i];
	if (prec == FFTD__KERN_I8)
		return (double) ((const int8_t *) p)[i];
	return (double) __half2float(((const __half *) p)[i]);
}

// store writes v into element i of precision prec, rounding once.
__device__ __forceinline__ void
store(void *p, int prec, int64_t i, double v)
{
	if (prec == FFTD__KERN_F64)
		((double *) p)[i] = v;
	else if (prec == FFTD__KERN_F32)
		((float *) p)[i] = (float) v;
	else
		((__half *) p)[i] = __double2half(v);
}

// fold_max folds the warp's values m (>= 0, or NaN) into *maxbits: the
// bits of a non-negative double order as unsigned integers, so a warp
// reduction, then one atomic per warp.
__device__ __forceinline__ void
fold_max(double m, unsigned long long *maxbits)
{
	unsigned long long b = (unsigned long long) __double_as_longlong(m);
	for (int off = 16; off > 0; off >>= 1) {
		unsigned long long o = __shfl_down_sync(0xffffffffu, b, off);
		b                    = o > b ? o : b;
	}
	if ((threadIdx.x & 31) == 0)
		atomicMax(maxbits, b);
}

// max_kernel: block (x, t) folds a stride of transform t's |values| into
// maxbits[t] (the bits of a non-negative double; NaN's bits exceed
// infinity's, so a NaN wins, and the exponent is then 0).
__global__ void
max_kernel(const void *src, int prec, int64_t ntr, int64_t reals_per,
    unsigned long long *maxbits)
{
	for (int64_t t = blockIdx.y; t < ntr; t += gridDim.y) {
		double  m    = 0;
		int64_t base = t * reals_per;
		for (int64_t i
		     = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		     i < reals_per; i += (int64_t) gridDim.x * blockDim.x) {
			double a = fabs(load(src, prec, base + i));
			m        = (a > m || a != a) ? a : m;
		}
		fold_max(m, &maxbits[t]);
	}
}

// abs4 is the largest |value| of 4 consecutive elements of precision
// prec (f32, f16, int8) at p, a NaN winning; p is aligned to 4 elements.
__device__ __forceinline__ float
abs4(const void *p, int prec)
{
	float v[4];
	if (prec == FFTD__KERN_F32) {
		const float4 x = __ldg((const float4 *) p);
		v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
	} else if (prec == FFTD__KERN_I8) {
		const char4 x = __ldg((const char4 *) p);
		v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
	} else {
		const uint2  x = __ldg((const uint2 *) p);
		const float2 a = __half22float2(*(const __half2 *) &x.x);
		const float2 b = __half22float2(*(const __half2 *) &x.y);
		v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
	}
	float m = 0;
	for (int k = 0; k < 4; k++) {
		const float a = fabsf(v[k]);
		m             = (a > m || a != a) ? a : m;
	}
	return m;
}

// max4_kernel is max_kernel for f32, f16 and int8 data whose transforms
// are whole groups of 4 aligned elements (reals_per % 4 == 0): vector
// loads, fp32 arithmetic (exact: |x| of these precisions is a float), and
// 4 groups a thread before one atomic per warp. max_kernel's one element
// per thread ran at a sixth of the memory's rate on many short transforms
// (H100: 1D 4096, 2^26 points).
__global__ void
max4_kernel(const void *src, int prec, int64_t ntr, int64_t reals_per,
    unsigned long long *maxbits)
{
	const int     es     = prec == FFTD__KERN_F32 ? 4
	            : prec == FFTD__KERN_I8           ? 1
	                                              : 2;
	const int64_t groups = reals_per / 4;
	for (int64_t t = blockIdx.y; t < ntr; t += gridDim.y) {
		const char *base = (const char *) src + t * reals_per * es;
		float       m    = 0;
		for (int64_t g
		     = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
		     g < groups; g += (int64_t) gridDim.x * blockDim.x) {
			const float a = abs4(base + g * 4 * es, prec);
			m             = (a > m || a != a) ? a : m;
		}
		fold_max((double) m, &maxbits[t]);
	}
}

// exp_kernel turns each transform's maximum into its exponent e:
// 2 points m 2^e <= 2^target (m points < 2^ex, so e = target - ex - 1).
__global__ void
exp_kernel(const unsigned long long *maxbits, int *e, int64_t ntr,
    int64_t points, int target)
{
	int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= ntr)
		return;
	double m = __longlong_as_double((long long) maxbits[t]);
	int    x = 0;
	if (m > 0 && isfinite(m)) {
		// m < 2^em and points <= 2^ep, so m points < 2^(em + ep),
		// without forming a product that could overflow.
		int em, ep;
		(void) frexp(m, &em);
		(void) frexp((double) points, &ep);
		x = target - (em + ep) - 1;
		x = x < -1000 ? -1000 : x > 1000 ? 1000 : x;
	}
	e[t] = x;
}

// scale_kernel writes dst[i] = src[i] * 2^(sign e[t]) for the transform t
// of element i, in the destination's precision.
__global__ void
scale_kernel(const void *src, int sp, void *dst, int dp, int64_t total,
    int64_t reals_per, const int *e, int sign)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     i < total; i += (int64_t) gridDim.x * blockDim.x) {
		int x = e[i / reals_per];
		store(dst, dp, i, ldexp(load(src, sp, i), sign * x));
	}
}

// grid_for is a grid of 256-thread blocks for n elements, capped.
unsigned
grid_for(int64_t n)
{
	int64_t b = (n + 255) / 256;
	return (unsigned) (b < 1 ? 1 : b > 65535 * 4 ? 65535 * 4 : b);
}

} // namespace

// The scratch: ntr maxima (8 bytes) then ntr exponents (4 bytes).
extern "C" size_t
fftd__conv_scratch_bytes(int64_t ntr)
{
	return (size_t) ntr * (sizeof(unsigned long long) + sizeof(int));
}

// fftd__conv_exponents: maxima, then exponents (convert.h).
extern "C" int
fftd__conv_exponents(const void *src, int src_prec, int64_t ntr,
    int64_t reals_per, int64_t points, int target_log2, void *scratch,
    void *stream)
{
	cudaStream_t        s  = (cudaStream_t) stream;
	unsigned long long *mb = (unsigned long long *) scratch;
	int                *e  = (int *) (mb + ntr);
	if (ntr <= 0 || reals_per <= 0)
		return (int) cudaErrorInvalidValue;
	cudaError_t r = cudaMemsetAsync(mb, 0, (size_t) ntr * sizeof(*mb), s);
	if (r != cudaSuccess)
		return (int) r;
	if (src_prec != FFTD__KERN_F64 && reals_per % 4 == 0
	    && ((uintptr_t) src & 15) == 0) {
		// 4 groups of 4 elements a thread
		int64_t bx = (reals_per / 4 + 1023) / 1024;
		dim3    g((unsigned) (bx > 1024 ? 1024 : bx),
		       (unsigned) (ntr > 65535 ? 65535 : ntr));
		max4_kernel<<<g, 256, 0, s>>>(
		    src, src_prec, ntr, reals_per, mb);
	} else {
		int64_t bx = (reals_per + 255) / 256;
		dim3    g((unsigned) (bx > 1024 ? 1024 : bx),
		       (unsigned) (ntr > 65535 ? 65535 : ntr));
		max_kernel<<<g, 256, 0, s>>>(src, src_prec, ntr, reals_per, mb);
	}
	exp_kernel<<<(unsigned) ((ntr + 255) / 256), 256, 0, s>>>(
	    mb, e, ntr, points, target_log2);
	return (int) cudaGetLastError();
}

// fftd__conv_exps is where fftd__conv_exponents leaves the exponents.
extern "C" const int *
fftd__conv_exps(const void *scratch, int64_t ntr)
{
	return (const int *) ((const unsigned long long *) scratch + ntr);
}

// fftd__conv_in: exponents, then the scaled conversion (convert.h).
extern "C" int
fftd__conv_in(const void *src, int src_prec, void *dst, int dst_prec,
    int64_t ntr, int64_t reals_per, int64_t points, int target_log2,
    void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t) stream;
	int rc = fftd__conv_exponents(src, src_prec, ntr, reals_per, points,
	    target_log2, scratch, stream);
	if (rc != 0)
		return rc;
	const int *e     = fftd__conv_exps(scratch, ntr);
	int64_t    total = ntr * reals_per;
	scale_kernel<<<grid_for(total), 256, 0, s>>>(
	    src, src_prec, dst, dst_prec, total, reals_per, e, 1);
	return (int) cudaGetLastError();
}

// fftd__conv_out: unscaled conversion back (convert.h).
extern "C" int
fftd__conv_out(const void *src, int src_prec, void *dst, int dst_prec,
    int64_t ntr, int64_t reals_per, const void *scratch, void *stream)
{
	const int *e = fftd__conv_exps(scratch, ntr);
	if (ntr <= 0 || reals_per <= 0)
		return (int) cudaErrorInvalidValue;
	int64_t total = ntr * reals_per;
	scale_kernel<<<grid_for(total), 256, 0, (cudaStream_t) stream>>>(
	    src, src_prec, dst, dst_prec, total, reals_per, e, -1);
	return (int) cudaGetLastError();
}

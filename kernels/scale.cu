// SPDX-License-Identifier: MIT
//
// scale.cu — the normalisation kernel of the cuda backend: multiply an
// output extent by 1/N or 1/sqrt(N) after cuFFT (which never scales). The
// pass is bound by memory bandwidth, so it moves 16 bytes per thread and
// iteration (double2, float4, 8 halves) wherever the pointer allows, with a
// scalar kernel for the unaligned case and the tail.

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "fftd_kernels.h"

namespace
{

constexpr int kThreads = 256;

// Each op scales one value of its type; T is the type moved per thread.

struct ScaleF64 {
	double            f;
	__device__ double operator()(double v) const
	{
		return v * f;
	}
	__device__ double2 operator()(double2 v) const
	{
		return make_double2(v.x * f, v.y * f);
	}
};

// f32 is scaled in double and rounded once, as the CPU backend does: a
// float factor would add a systematic half-ulp scale error.
struct ScaleF32 {
	double           f;
	__device__ float operator()(float v) const
	{
		return (float) (v * f);
	}
	__device__ float4 operator()(float4 v) const
	{
		return make_float4((float) (v.x * f), (float) (v.y * f),
		    (float) (v.z * f), (float) (v.w * f));
	}
};

// f16 is scaled in float: the factor's float rounding (2^-24) is far below
// binary16's 2^-11.
struct ScaleF16 {
	float             f;
	__device__ __half operator()(__half v) const
	{
		return __float2half_rn(__half2float(v) * f);
	}
	__device__ __half2 h2(__half2 v) const
	{
		float2 x = __half22float2(v);
		return __floats2half2_rn(x.x * f, x.y * f);
	}
	// 8 halves as a uint4.
	__device__ uint4 operator()(uint4 v) const
	{
		uint32_t w[4] = { v.x, v.y, v.z, v.w };
		for (int i = 0; i < 4; i++) {
			__half2 h;
			memcpy(&h, &w[i], sizeof(h)); // no aliasing games
			h = h2(h);
			memcpy(&w[i], &h, sizeof(h));
		}
		return make_uint4(w[0], w[1], w[2], w[3]);
	}
};

template <typename T, typename Op>
__global__ void
scale_kernel(T *p, size_t n, Op op)
{
	size_t step = (size_t) gridDim.x * blockDim.x;
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += step) {
		p[i] = op(p[i]);
	}
}

// launch runs scale_kernel over n values of T; the grid is capped at a
// few waves of the device and strides over the rest.
template <typename T, typename Op>
cudaError_t
launch(T *p, size_t n, Op op, cudaStream_t stream)
{
	if (n == 0) {
		return cudaSuccess;
	}
	int         dev = 0, sms = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e == cudaSuccess) {
		e = cudaDeviceGetAttribute(
		    &sms, cudaDevAttrMultiProcessorCount, dev);
	}
	if (e != cudaSuccess) {
		return e;
	}
	size_t   want = (n + kThreads - 1) / kThreads;
	size_t   cap  = (size_t) sms * 8;
	unsigned grid = (unsigned) (want < cap ? want : cap);
	scale_kernel<<<grid, kThreads, 0, stream>>>(p, n, op);
	return cudaGetLastError();
}

// scale_split runs the vector type V over the aligned bulk of n scalars S
// at p and the scalar kernel over the tail (or everything when p is not
// aligned to V).
template <typename V, typename S, typename Op>
cudaError_t
scale_split(S *p, size_t n, Op op, cudaStream_t stream)
{
	constexpr size_t w  = sizeof(V) / sizeof(S);
	size_t           nv = (uintptr_t) p % sizeof(V) == 0 ? n / w : 0;
	cudaError_t      e  = launch(reinterpret_cast<V *>(p), nv, op, stream);
	if (e != cudaSuccess) {
		return e;
	}
	return launch(p + nv * w, n - nv * w, op, stream);
}

} // namespace

extern "C" int
fftd__kern_scale(
    void *data, int precision, size_t nreal, double factor, void *stream)
{
	cudaStream_t st = static_cast<cudaStream_t>(stream);
	switch (precision) {
	case FFTD__KERN_F64:
		return (int) scale_split<double2>(static_cast<double *>(data),
		    nreal, ScaleF64 { factor }, st);
	case FFTD__KERN_F32:
		return (int) scale_split<float4>(
		    static_cast<float *>(data), nreal, ScaleF32 { factor }, st);
	case FFTD__KERN_F16:
		return (int) scale_split<uint4>(static_cast<__half *>(data),
		    nreal, ScaleF16 { (float) factor }, st);
	default:
		return (int) cudaErrorInvalidValue;
	}
}

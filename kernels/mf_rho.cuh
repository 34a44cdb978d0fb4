// SPDX-License-Identifier: MIT
//
// mf_rho.cuh — PRIVATE to kernels/: included by mf.cu, mf_fused.cu and
// mf_fourstep.cu only. The matched-filter bank's rho in double, in the
// fftw engine's arithmetic (explicitly rounded operations, never
// contracted into FMAs), so that every engine's scan and gather turn the
// same z into the same bits: rho = |z| norm, norm = 4 df / sigma, sigma =
// sqrt(sigma^2), sigma^2 = 4 df sum |h|^2 / S (daemon/mf.h), which the
// engines round once, as a product of 4 df and the sum (fftd__mf_sigmasq).

#ifndef FFTD_KERNELS_MF_RHO_CUH
#define FFTD_KERNELS_MF_RHO_CUH

#include <cuda_runtime.h>

// fftd__mf_sigmasq is sigma^2 = scale hh (scale = 4 df) of a template
// whose sum of |h|^2 / S is hh: what the engines keep per template (and
// what a bank given its sigma^2, FFTD_MF_SIGMASQ_USE, is given).
__device__ inline double
fftd__mf_sigmasq(double hh, double scale)
{
	return __dmul_rn(scale, hh);
}

// fftd__mf_norm is 4 df / sigma (scale = 4 df; 0 when sigma = 0) for a
// template of sigma^2 s2.
__device__ inline double
fftd__mf_norm(double s2, double scale)
{
	double sg = __dsqrt_rn(s2);
	return sg > 0 ? __ddiv_rn(scale, sg) : 0.0;
}

// fftd__mf_rho is |re + i im| norm.
__device__ inline double
fftd__mf_rho(double re, double im, double norm)
{
	return __dmul_rn(
	    __dsqrt_rn(__dadd_rn(__dmul_rn(re, re), __dmul_rn(im, im))), norm);
}

#endif // FFTD_KERNELS_MF_RHO_CUH

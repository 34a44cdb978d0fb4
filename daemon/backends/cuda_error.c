// SPDX-License-Identifier: MIT
//
// cuda_error.c — the cuda backend's errors: a CUDA runtime, cuFFT or
// tc-kernel error becomes an fftd code (FFTD_EDEVMEM for memory, else the
// tagged FFTD_ECUDAERR / FFTD_ECUFFTERR ranges, so no information is lost)
// with a message naming the call. The bottom floor of the backend
// (cuda_impl.h): it calls no other file of it.

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdint.h>

#include "cuda_impl.h"
#include "errmsg.h"

// fftd__cuda_fail maps a CUDA error of call to an fftd code, with a message.
int
fftd__cuda_fail(cudaError_t e, const char *call, char *msg, size_t msglen)
{
	(void) cudaGetLastError(); // clear it unless it is sticky
	int code = e == cudaErrorMemoryAllocation
	    ? FFTD_EDEVMEM
	    : FFTD_ECUDAERR + ((int) e & FFTD_ERR_CODE_MASK);
	return fftd__errmsg(code, msg, msglen, "%s: %s (%s)", call,
	    cudaGetErrorName(e), cudaGetErrorString(e));
}

// fftd__cufft_name returns the name of cuFFT result r, for messages.
const char *
fftd__cufft_name(cufftResult r)
{
	switch (r) {
	case CUFFT_SUCCESS:
		return "CUFFT_SUCCESS";
	case CUFFT_INVALID_PLAN:
		return "CUFFT_INVALID_PLAN";
	case CUFFT_ALLOC_FAILED:
		return "CUFFT_ALLOC_FAILED";
	case CUFFT_INVALID_TYPE:
		return "CUFFT_INVALID_TYPE";
	case CUFFT_INVALID_VALUE:
		return "CUFFT_INVALID_VALUE";
	case CUFFT_INTERNAL_ERROR:
		return "CUFFT_INTERNAL_ERROR";
	case CUFFT_EXEC_FAILED:
		return "CUFFT_EXEC_FAILED";
	case CUFFT_SETUP_FAILED:
		return "CUFFT_SETUP_FAILED";
	case CUFFT_INVALID_SIZE:
		return "CUFFT_INVALID_SIZE";
	case CUFFT_UNALIGNED_DATA:
		return "CUFFT_UNALIGNED_DATA";
	case CUFFT_INVALID_DEVICE:
		return "CUFFT_INVALID_DEVICE";
	case CUFFT_NO_WORKSPACE:
		return "CUFFT_NO_WORKSPACE";
	case CUFFT_NOT_IMPLEMENTED:
		return "CUFFT_NOT_IMPLEMENTED";
	case CUFFT_NOT_SUPPORTED:
		return "CUFFT_NOT_SUPPORTED";
	default:
		return "cuFFT error";
	}
}

// fftd__cufft_fail maps a cuFFT error of call to an fftd code, with a message.
int
fftd__cufft_fail(cufftResult r, const char *call, char *msg, size_t msglen)
{
	int code = r == CUFFT_ALLOC_FAILED
	    ? FFTD_EDEVMEM
	    : FFTD_ECUFFTERR + ((int) r & FFTD_ERR_CODE_MASK);
	return fftd__errmsg(code, msg, msglen, "%s: %s (%d)", call,
	    fftd__cufft_name(r), (int) r);
}

// fftd__cuda_tc_fail maps an error code of the tc kernels' call to an fftd
// code, with fftd__tc_strerror's words (and CUDA's, for a CUDA-tagged code).
int
fftd__cuda_tc_fail(int rc, const char *call, char *msg, size_t msglen)
{
	int ce = fftd__tc_cuda_error(rc);
	if (ce != 0) {
		cudaError_t e = (cudaError_t) ce;
		(void) cudaGetLastError(); // clear it unless it is sticky
		int code = e == cudaErrorMemoryAllocation
		    ? FFTD_EDEVMEM
		    : FFTD_ECUDAERR + (ce & FFTD_ERR_CODE_MASK);
		return fftd__errmsg(code, msg, msglen, "%s: %s: %s (%s)", call,
		    fftd__tc_strerror(rc), cudaGetErrorName(e),
		    cudaGetErrorString(e));
	}
	int code;
	switch (rc) {
	case FFTD__TC_EUNSUPPORTED:
		code = FFTD_EUNSUPPORTED;
		break;
	case FFTD__TC_ENOMEM:
		code = FFTD_ENOMEM;
		break;
	case FFTD__TC_EDEVMEM:
		code = FFTD_EDEVMEM;
		break;
	default:
		// EINVAL, ENODEV: the shape was checked and the device is
		// open, so these say the kernels refused what we checked.
		code = FFTD_EBACKEND;
		break;
	}
	return fftd__errmsg(code, msg, msglen, "%s: %s (tc code %d)", call,
	    fftd__tc_strerror(rc), rc);
}

// fftd__cuda_mib converts a byte count to MiB, for messages.
double
fftd__cuda_mib(uint64_t b)
{
	return (double) b / (1 << 20);
}

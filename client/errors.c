// SPDX-License-Identifier: MIT
//
// errors.c — fftd_strerror and fftd_err_name, generated from the one table
// in fftd.h (FFTD_ERRNO_MAP), plus the tagged ranges.

#include <stddef.h>

#include "fftd.h"

const char *
fftd_strerror(int err)
{
	switch (err) {
#define FFTD__MSG(name, value, msg)                                            \
	case FFTD_##name:                                                      \
		return msg;
		FFTD_ERRNO_MAP(FFTD__MSG)
#undef FFTD__MSG
	default:
		break;
	}
	switch (err & FFTD_ERR_RANGE_MASK) {
	case FFTD_ESYSERR:
		return "operating system error";
	case FFTD_ENNGERR:
		return "messaging (NNG) error";
	case FFTD_ECUDAERR:
		return "CUDA runtime error";
	case FFTD_ECUFFTERR:
		return "cuFFT error";
	default:
		return "unknown error";
	}
}

const char *
fftd_err_name(int err)
{
	switch (err) {
#define FFTD__NAME(name, value, msg)                                           \
	case FFTD_##name:                                                      \
		return "FFTD_" #name;
		FFTD_ERRNO_MAP(FFTD__NAME)
#undef FFTD__NAME
	default:
		break;
	}
	switch (err & FFTD_ERR_RANGE_MASK) {
	case FFTD_ESYSERR:
		return "FFTD_ESYSERR";
	case FFTD_ENNGERR:
		return "FFTD_ENNGERR";
	case FFTD_ECUDAERR:
		return "FFTD_ECUDAERR";
	case FFTD_ECUFFTERR:
		return "FFTD_ECUFFTERR";
	default:
		return "FFTD_EUNKNOWN";
	}
}

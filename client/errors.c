// SPDX-License-Identifier: MIT
//
// errors.c — libfftd's errors: fftd_strerror and fftd_err_name, generated
// from the one table in fftd.h (FFTD_ERRNO_MAP), plus the tagged ranges;
// the calling thread's last error (fftd_last_error) and the helpers that
// set it, name a daemon's URL in it, and map NNG's codes. The daemon links
// this file's object too, for fftd_strerror and fftd_err_name.

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nng/nng.h>

#include "client_impl.h"
#include "fftd.h"

_Thread_local char fftd__last_error[FFTD__LAST_ERROR_LEN];

// fftd_strerror names any code, tagged ones by their range.
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

// fftd_err_name is the code's symbolic name.
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

// fftd__set_error formats the calling thread's last error (what
// fftd_last_error returns) and returns code.
int
fftd__set_error(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fftd__last_error, sizeof(fftd__last_error), fmt, ap);
	va_end(ap);
	return code;
}

// fftd_last_error is the public face of fftd__last_error.
const char *
fftd_last_error(void)
{
	return fftd__last_error;
}

// fftd__prefix_url puts "url: " before the message in buf (len bytes), which
// keeps what fits.
void
fftd__prefix_url(char *buf, size_t len, const char *url)
{
	size_t u = strlen(url) + 2;
	if (u >= len) {
		return;
	}
	size_t m = strnlen(buf, len - 1);
	if (m > len - 1 - u) {
		m = len - 1 - u;
	}
	memmove(buf + u, buf, m);
	memcpy(buf, url, u - 2);
	buf[u - 2] = ':';
	buf[u - 1] = ' ';
	buf[u + m] = '\0';
}

// fftd__url_error puts endpoint i's URL before the calling thread's last error,
// on a client of several daemons, and returns code.
int
fftd__url_error(const fftd_client *c, int i, int code)
{
	if (c->nep > 1) {
		fftd__prefix_url(
		    fftd__last_error, sizeof(fftd__last_error), c->ep[i].url);
	}
	return code;
}

// --- client

// fftd__map_nng turns an NNG error into an fftd_error code: the
// connection's fates by name, the rest tagged FFTD_ENNGERR.
int
fftd__map_nng(int rv)
{
	switch (rv) {
	case 0:
		return FFTD_OK;
	case NNG_ETIMEDOUT:
		return FFTD_ETIMEDOUT;
	case NNG_ECLOSED:
	case NNG_ECONNRESET:
	case NNG_ECONNSHUT:
	case NNG_ECANCELED:
		return FFTD_ECLOSED;
	case NNG_ECONNREFUSED:
	case NNG_ENOENT:
	case NNG_EADDRINVAL:
		return FFTD_ECONNREFUSED;
	case NNG_ENOMEM:
		return FFTD_ENOMEM;
	default:
		return FFTD_ENNGERR + rv;
	}
}

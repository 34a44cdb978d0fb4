// SPDX-License-Identifier: MIT
//
// errmsg.h — PRIVATE to fftd. The one helper that fills a caller's message
// buffer and returns an error code, so that a failing check reads
// `return fftd__errmsg(FFTD_EINVAL, msg, msglen, "n[%d] = %lld", i, n);`.

#ifndef FFTD_COMMON_ERRMSG_H
#define FFTD_COMMON_ERRMSG_H

#include <stddef.h>

// fftd__errmsg formats fmt into msg (msglen bytes, always terminated; msg
// may be NULL or msglen 0 to discard the text) and returns code unchanged.
int fftd__errmsg(int code, char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif // FFTD_COMMON_ERRMSG_H

// SPDX-License-Identifier: MIT
//
// errmsg.c — fftd__errmsg (errmsg.h): an error code with its message.

#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

int
fftd__errmsg(int code, char *msg, size_t msglen, const char *fmt, ...)
{
	if (msg != NULL && msglen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}

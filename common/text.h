// SPDX-License-Identifier: MIT
//
// text.h — PRIVATE to fftd. Checking text that came from another process
// (client names) before it is shown or exported.

#ifndef FFTD_COMMON_TEXT_H
#define FFTD_COMMON_TEXT_H

#include <stddef.h>

// fftd__utf8_len returns the length of the valid UTF-8 sequence at s (n
// bytes left, n >= 1), or 0 if it is not one (overlong forms, surrogates
// and code points past U+10FFFF included).
size_t fftd__utf8_len(const unsigned char *s, size_t n);

#endif // FFTD_COMMON_TEXT_H

// SPDX-License-Identifier: MIT
//
// text.c — UTF-8 validation (text.h).

#include "text.h"

#include <stdint.h>

size_t
fftd__utf8_len(const unsigned char *s, size_t n)
{
	size_t   len;
	uint32_t cp, min;
	if (s[0] < 0x80) {
		return 1;
	} else if ((s[0] & 0xE0) == 0xC0) {
		len = 2, cp = s[0] & 0x1F, min = 0x80;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3, cp = s[0] & 0x0F, min = 0x800;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n) {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			return 0;
		}
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
		return 0;
	}
	return len;
}

// SPDX-License-Identifier: MIT
//
// json.c — JSON values for the benchmarks (json.h).

#include "json.h"

#include <math.h>

void
bench_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\') {
			fprintf(f, "\\%c", *s);
		} else if ((unsigned char) *s < 0x20) {
			fprintf(f, "\\u%04x", *s);
		} else {
			fputc(*s, f);
		}
	}
	fputc('"', f);
}

void
bench_json_num(FILE *f, double v)
{
	if (isfinite(v)) {
		fprintf(f, "%.6g", v);
	} else {
		fprintf(f, "null");
	}
}

void
bench_json_field(FILE *f, const char *key, double v)
{
	fprintf(f, ", \"%s\": ", key);
	bench_json_num(f, v);
}

// SPDX-License-Identifier: MIT
//
// json.h — the JSON values the benchmarks write (bench/e2e, bench/load,
// bench/kernels, ...); C and C++.

#ifndef FFTD_BENCH_JSON_H
#define FFTD_BENCH_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

// bench_json_str writes s as a JSON string (quotes, backslashes and control
// characters escaped).
void bench_json_str(FILE *f, const char *s);

// bench_json_num writes v with 6 significant digits, or null when it is
// not finite (JSON has no NaN or infinity).
void bench_json_num(FILE *f, double v);

// bench_json_field writes `, "key": v` (v as bench_json_num), the common
// shape of an object's later members.
void bench_json_field(FILE *f, const char *key, double v);

#ifdef __cplusplus
}
#endif

#endif // FFTD_BENCH_JSON_H

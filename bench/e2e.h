// SPDX-License-Identifier: MIT
//
// e2e.h — PRIVATE to bench/e2e*.c: what the end-to-end benchmark's files
// share (the program and its options are e2e.c's). The cases, a figure
// (meas) and a whole run (bench), and each file's entry points:
// e2e_cases.c (cases, inputs, figures, small helpers), e2e_cuda.c
// ((a)-(c), in-process CUDA), e2e_fftd.c ((d)-(f), through fftd),
// e2e_clients.c (4 client processes), e2e_latency.c (small requests),
// e2e_report.c (tables and JSON).

#ifndef FFTD_BENCH_E2E_H
#define FFTD_BENCH_E2E_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fftd.h"
#include "json.h"
#include "lib/daemon.h"

#define MIB (1024.0 * 1024.0)
#define MAX_REPS 64
#define NCLIENTS 4
#define STREAM_DEPTH 4
#define INPROC_STREAMS 16
#define LAT_WARMUP 200
#define LAT_ROUNDS 2000

// bcase is one transform the run measures.
typedef struct bcase {
	const char    *name;  // --cases name
	const char    *label; // table label
	fftd_kind      kind;
	fftd_precision prec;
	int64_t        n;
} bcase;

// e2e_cases are the cases, in table order (--cases names them).
#define NCASES 4
extern const bcase e2e_cases[NCASES];

// meas is one figure: its repetitions, their median and the rate.
typedef struct meas {
	int  state; // 0 not run, 1 measured, -1 skipped/unavailable, -2 failed
	char why[200];
	int  nrep;
	double s[MAX_REPS]; // seconds per repetition
	double med;         // median seconds
	double gbps;        // input bytes / median, 1e9 B/s
} meas;

// case_result is everything measured and checked for one case.
typedef struct case_result {
	const bcase *c;
	int          selected;
	int64_t      batch;
	size_t       in_bytes, out_bytes;
	int64_t      chunk_batch; // per submit of (f)
	int          nsub;
	char         algorithm[32];
	char         plan_why[200]; // why the daemon has no plan for this case
	char         stream_algorithm[32];
	meas a, a_h2d, a_d2h, b, c16, d, e, memcpy_, f, f_copy, f_sustained;
	meas cl_shm, cl_inline;
	int  c16_streams;
	// checks: -1 not done, 0 differs, 1 identical / ok
	int    de_same, f_sameplan, f_vs_d, outputs_finite;
	char   check_note[256];
	double ref_err;  // vs double-precision DFT (NAN: not done)
	int    ref_bins; // bins compared per transform
	double b_err;    // fftd output vs in-process cuFFT (b)
} case_result;

// lat_result is one small-request round-trip figure.
typedef struct lat_result {
	int    state;
	char   why[200];
	int    n;
	double p50, p99, min, max, mean;
} lat_result;

// bench is the whole run: options, the client, every case's results.
typedef struct bench {
	const char  *url;
	int          quick, reps, gpu;
	char         gpu_name[128];
	char         no_gpu_why[160];
	fftd_client *client;
	fftd_info    info;
	case_result  cr[NCASES];
	int          want_latency, want_clients;
	lat_result   lat_inline, lat_shm, lat_ping;
	int          shm_ok; // fftd_buffer_create works
	char         shm_why[200];
} bench;

// --- e2e_cases.c
// ---------------------------------------------------------------

// e2e_cmp_double orders doubles for qsort.
int e2e_cmp_double(const void *a, const void *b);

// e2e_xmalloc is malloc that exits the program when memory runs out.
void *e2e_xmalloc(size_t n);

// e2e_xmalloc_touched is e2e_xmalloc with the pages faulted in.
void *e2e_xmalloc_touched(size_t n);

// e2e_splitmix is splitmix64, a fast PRNG with good statistics.
uint64_t e2e_splitmix(uint64_t *s);

// e2e_h2d converts IEEE binary16 to double.
double e2e_h2d(uint16_t h);

// e2e_real_bytes is the size of one real of precision p.
size_t e2e_real_bytes(fftd_precision p);

// e2e_case_in_per and e2e_case_out_per are one transform's input and
// output bytes.
size_t e2e_case_in_per(const bcase *c);
size_t e2e_case_out_per(const bcase *c);

// e2e_batch_for is the batch making at least target bytes of input.
int64_t e2e_batch_for(const bcase *c, size_t target);

// e2e_fill_input fills batch transforms' inputs with random non-zero values.
void e2e_fill_input(const bcase *c, void *p, int64_t batch, uint64_t seed);

// e2e_desc_for describes a case's plan of batch transforms.
void e2e_desc_for(const bcase *c, int64_t batch, fftd_plan_desc *d);

// e2e_meas_set marks a figure not measured (state -1: unavailable, -2:
// failed) and says why.
void e2e_meas_set(meas *m, int state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// e2e_meas_finish takes the median of a figure's repetitions of bytes.
void e2e_meas_finish(meas *m, size_t bytes);

// e2e_meas_print prints a figure's line.
void e2e_meas_print(const char *what, const meas *m);

// e2e_ferr is rv's name and libfftd's last message (a thread's buffer).
const char *e2e_ferr(int rv);

// --- the case families
// -------------------------------------------------------------

// e2e_gpu_detect finds the GPU (e2e_cuda.c); 0 with B->no_gpu_why if none.
int e2e_gpu_detect(bench *B);

// e2e_run_inproc measures (a)-(c) of a case (e2e_cuda.c); (b)'s output is
// left in out_b.
void e2e_run_inproc(bench *B, case_result *R, const void *src, void *out_b);

// e2e_run_fftd measures and checks (d)-(f) of a case (e2e_fftd.c); out_b
// is (b)'s output or NULL.
void e2e_run_fftd(bench *B, case_result *R, const void *src, const void *out_b);

// e2e_ref_tol is the largest relative error accepted against the DFT.
double e2e_ref_tol(const bcase *c);

// e2e_role_client is the child role "client" (e2e_clients.c).
int e2e_role_client(int argc, char **argv);

// e2e_run_clients measures 4 client processes at once on a case, shared
// memory (shm) or inline (e2e_clients.c).
void e2e_run_clients(bench *B, case_result *R, int shm, meas *m);

// e2e_run_latency measures the small-request round trips (e2e_latency.c).
void e2e_run_latency(bench *B);

// e2e_lat_print prints a round-trip figure's line.
void e2e_lat_print(const char *what, const lat_result *L);

// e2e_print_tables prints the tables (e2e_report.c).
void e2e_print_tables(bench *B);

// e2e_write_json writes the JSON file; 0 or -1.
int e2e_write_json(bench *B, const char *path);

#endif // FFTD_BENCH_E2E_H

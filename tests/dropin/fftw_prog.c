// SPDX-License-Identifier: MIT
//
// fftw_prog.c — an ordinary FFTW program for the drop-in's tests: built
// against the real <fftw3.h> and linked with -lfftw3 -lfftw3f -lfftw3l,
// never with libfftd. test_dropin runs it plainly and under
// LD_PRELOAD=libfftd-fftw3.so. Every case of the table (complex, r2c and
// c2r of rank 1-3; the advanced layout with strides, distances and
// embedded sizes; r2hc and hc2r; guru and guru64; in-place; new-array
// execute; FFTW_MEASURE and FFTW_PRESERVE_INPUT; a DCT, which the daemon
// does not serve) runs in double and in single precision on fresh random
// inputs, and is checked three ways (and a c2c and an r2hc plan run in 4
// threads at once, 10 executions each, on arrays of their own):
//   - FFTW_ESTIMATE planning leaves both arrays (filled with a poison
//     value) untouched, and execution writes nothing outside the output
//     layout;
//   - the relative L2 error against the long double FFTW (fftwl_, which
//     the drop-in does not export) is within BOUND64 / BOUND32 times
//     (1 + log2 N);
//   - with --compare FILE, the outputs agree with those of an earlier run
//     (--out FILE, same --seed) within twice that bound.
// The last line is "fftw_prog: P passed, F failed"; the exit status is 1
// when a case failed.
//
//   fftw_prog [--seed S] [--out FILE] [--compare FILE] [--kill PID] [--fork]
//   (--kill: SIGKILL process PID, the daemon, after the first plan is
//   made and before it executes: the drop-in must fall back to FFTW;
//   --fork: fork then, and run the rest in the child, where libfftd
//   refuses every call: the drop-in must fall back to FFTW there too)
//   fftw_prog --bench     (median time per fftw_execute, c2c f64, n=2^k)

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define POISON 12345.0
#define BOUND64 1e-16
#define BOUND32 6e-8

enum { K_C2C, K_R2C, K_C2R, K_R2HC, K_HC2R, K_DCT };
enum { API_BASIC, API_MANY, API_GURU, API_GURU64, API_NEWARRAY };

// tcase is one case: the transform and its layout as FFTW's advanced
// interface describes it (0 for a default).
typedef struct tcase {
	const char *name;
	int         kind, api, rank, n[3], howmany;
	int         iemb[3], istride, idist, oemb[3], ostride, odist;
	int         inplace, sign;
	unsigned    flags;
} tcase;

#define F FFTW_FORWARD
#define B FFTW_BACKWARD
#define E FFTW_ESTIMATE
static const tcase cases[] = {
	{ "c2c_1d_fwd", K_C2C, API_BASIC, 1, { 4096 }, 1, .sign = F,
	    .flags = E },
	{ "c2c_1d_bwd_inplace", K_C2C, API_BASIC, 1, { 1000 }, 1, .inplace = 1,
	    .sign = B, .flags = E },
	{ "c2c_2d", K_C2C, API_BASIC, 2, { 64, 48 }, 1, .sign = F, .flags = E },
	{ "c2c_3d", K_C2C, API_BASIC, 3, { 16, 12, 10 }, 1, .sign = B,
	    .flags = E },
	{ "many_c2c_strided", K_C2C, API_MANY, 1, { 256 }, 5, .istride = 2,
	    .idist = 600, .ostride = 3, .odist = 800, .sign = F, .flags = E },
	{ "many_c2c_interleaved", K_C2C, API_MANY, 1, { 300 }, 4, .istride = 4,
	    .idist = 1, .ostride = 4, .odist = 1, .sign = B, .flags = E },
	{ "many_c2c_2d_embed", K_C2C, API_MANY, 2, { 20, 30 }, 3,
	    .iemb = { 20, 40 }, .istride = 1, .idist = 807, .oemb = { 22, 32 },
	    .ostride = 2, .odist = 1408, .sign = F, .flags = E },
	{ "r2c_1d", K_R2C, API_BASIC, 1, { 4096 }, 1, .flags = E },
	{ "c2r_1d", K_C2R, API_BASIC, 1, { 4096 }, 1, .flags = E },
	{ "r2c_2d_inplace", K_R2C, API_BASIC, 2, { 32, 30 }, 1, .inplace = 1,
	    .flags = E },
	{ "c2r_3d", K_C2R, API_BASIC, 3, { 8, 6, 10 }, 1, .flags = E },
	{ "many_r2c", K_R2C, API_MANY, 1, { 500 }, 3, .istride = 1,
	    .idist = 512, .ostride = 1, .odist = 260, .flags = E },
	{ "many_c2r_2d", K_C2R, API_MANY, 2, { 16, 18 }, 2, .flags = E },
	{ "r2hc_even", K_R2HC, API_BASIC, 1, { 1024 }, 1, .flags = E },
	{ "r2hc_odd", K_R2HC, API_BASIC, 1, { 1001 }, 1, .flags = E },
	{ "hc2r", K_HC2R, API_BASIC, 1, { 1024 }, 1, .flags = E },
	{ "many_r2hc", K_R2HC, API_MANY, 1, { 512 }, 4, .istride = 1,
	    .idist = 515, .ostride = 2, .odist = 1030, .flags = E },
	{ "guru64_c2c", K_C2C, API_GURU64, 2, { 24, 40 }, 3, .sign = F,
	    .flags = E },
	{ "guru64_r2c", K_R2C, API_GURU64, 1, { 1024 }, 2, .flags = E },
	{ "guru_c2r", K_C2R, API_GURU, 2, { 12, 16 }, 1, .flags = E },
	{ "guru64_hc2r", K_HC2R, API_GURU64, 1, { 800 }, 2, .flags = E },
	{ "newarray_c2c", K_C2C, API_NEWARRAY, 1, { 8192 }, 1, .sign = F,
	    .flags = E },
	{ "newarray_r2c", K_R2C, API_NEWARRAY, 1, { 16384 }, 1, .flags = E },
	{ "newarray_hc2r", K_HC2R, API_NEWARRAY, 1, { 2048 }, 2, .flags = E },
	{ "dct_fftw_only", K_DCT, API_BASIC, 1, { 64 }, 1, .flags = E },
	{ "measure_c2c", K_C2C, API_BASIC, 1, { 2048 }, 1, .sign = B,
	    .flags = FFTW_MEASURE },
	{ "preserve_c2r", K_C2R, API_MANY, 1, { 512 }, 2,
	    .flags = E | FFTW_PRESERVE_INPUT },
};
#undef F
#undef B
#undef E
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static pid_t kill_pid;        // --kill
static int   fork_after_plan; // --fork

// layout is a case's arrays: the advanced layout with defaults resolved,
// the array sizes, and where each logical real of each side lives.
typedef struct layout {
	int     iemb[3], oemb[3], istride, idist, ostride, odist;
	size_t  in_reals, out_reals; // array sizes in reals
	size_t  nlog_in, nlog_out;   // logical reals per side, all transforms
	size_t *in_index, *out_index;
	char   *out_mask; // out_reals flags: inside the output layout
	long    ntotal;   // N, the logical size of one transform
} layout;

// side_sizes sets the logical element counts of a side per dimension and
// says whether its elements are complex.
static int
side_sizes(const tcase *tc, int out, int *m)
{
	int cplx = tc->kind == K_C2C || (tc->kind == K_R2C && out)
	    || (tc->kind == K_C2R && !out);
	for (int k = 0; k < tc->rank; k++) {
		m[k] = tc->n[k];
	}
	if ((tc->kind == K_R2C && out) || (tc->kind == K_C2R && !out)) {
		m[tc->rank - 1] = tc->n[tc->rank - 1] / 2 + 1;
	}
	return cplx;
}

// side_index fills one side's index list: logical real i (transform,
// row-major element, re/im) -> array real.
static size_t *
side_index(const tcase *tc, int out, const int *emb, int stride, int dist,
    size_t *nlog, size_t *extent)
{
	int    m[3];
	int    cplx = side_sizes(tc, out, m);
	size_t per  = 1;
	for (int k = 0; k < tc->rank; k++) {
		per *= (size_t) m[k];
	}
	*nlog       = per * (size_t) tc->howmany * (cplx ? 2 : 1);
	size_t *idx = malloc(*nlog * sizeof(size_t));
	size_t  i = 0, max = 0;
	for (int b = 0; b < tc->howmany; b++) {
		for (size_t e = 0; e < per; e++) {
			size_t rest = e, off = 0, mul = 1;
			for (int k = tc->rank - 1; k >= 0; k--) {
				off += (rest % (size_t) m[k]) * mul;
				rest /= (size_t) m[k];
				mul *= (size_t) emb[k];
			}
			size_t el = (size_t) b * (size_t) dist
			    + (size_t) stride * off;
			for (int part = 0; part < (cplx ? 2 : 1); part++) {
				idx[i] = el * (cplx ? 2 : 1) + (size_t) part;
				if (idx[i] > max) {
					max = idx[i];
				}
				i++;
			}
		}
	}
	*extent = max + 1;
	return idx;
}

// make_layout resolves the case's defaults as FFTW does (embedded sizes:
// the side's sizes, an in-place real side padded to 2(n/2+1); stride 1;
// distance: the embedded product times the stride).
static void
make_layout(const tcase *tc, layout *L)
{
	memset(L, 0, sizeof(*L));
	int mi[3], mo[3];
	side_sizes(tc, 0, mi);
	side_sizes(tc, 1, mo);
	int r = tc->rank;
	for (int k = 0; k < r; k++) {
		L->iemb[k] = tc->iemb[k] ? tc->iemb[k] : mi[k];
		L->oemb[k] = tc->oemb[k] ? tc->oemb[k] : mo[k];
	}
	if (tc->inplace && tc->kind == K_R2C && !tc->iemb[0]) {
		L->iemb[r - 1] = 2 * (tc->n[r - 1] / 2 + 1);
	}
	if (tc->inplace && tc->kind == K_C2R && !tc->oemb[0]) {
		L->oemb[r - 1] = 2 * (tc->n[r - 1] / 2 + 1);
	}
	L->istride = tc->istride ? tc->istride : 1;
	L->ostride = tc->ostride ? tc->ostride : 1;
	int pi = 1, po = 1;
	for (int k = 0; k < r; k++) {
		pi *= L->iemb[k];
		po *= L->oemb[k];
	}
	L->idist  = tc->idist ? tc->idist : pi * L->istride;
	L->odist  = tc->odist ? tc->odist : po * L->ostride;
	L->ntotal = 1;
	for (int k = 0; k < r; k++) {
		L->ntotal *= tc->n[k];
	}
	L->in_index = side_index(
	    tc, 0, L->iemb, L->istride, L->idist, &L->nlog_in, &L->in_reals);
	L->out_index = side_index(
	    tc, 1, L->oemb, L->ostride, L->odist, &L->nlog_out, &L->out_reals);
	L->out_mask = calloc(L->out_reals, 1);
	for (size_t i = 0; i < L->nlog_out; i++) {
		L->out_mask[L->out_index[i]] = 1;
	}
}

// rng is splitmix64: the inputs of a seed are the same in every run.
static uint64_t
rng(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z          = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z          = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

// reference computes the case's logical output from its logical input
// (contiguous, long double) with the real long double FFTW.
static long double *
reference(const tcase *tc, const layout *L, const long double *lin)
{
	long double *in  = malloc(L->nlog_in * sizeof(long double));
	long double *out = malloc(L->nlog_out * sizeof(long double));
	memcpy(in, lin, L->nlog_in * sizeof(long double));
	int            r = tc->rank, h = tc->howmany;
	int            din  = (int) (L->nlog_in / (size_t) h);
	int            dout = (int) (L->nlog_out / (size_t) h);
	fftwl_plan     p;
	fftwl_r2r_kind kind = tc->kind == K_HC2R ? FFTW_HC2R
	    : tc->kind == K_DCT                  ? FFTW_REDFT10
	                                         : FFTW_R2HC;
	switch (tc->kind) {
	case K_C2C:
		p = fftwl_plan_many_dft(r, tc->n, h, (fftwl_complex *) in, NULL,
		    1, din / 2, (fftwl_complex *) out, NULL, 1, dout / 2,
		    tc->sign, FFTW_ESTIMATE);
		break;
	case K_R2C:
		p = fftwl_plan_many_dft_r2c(r, tc->n, h, in, NULL, 1, din,
		    (fftwl_complex *) out, NULL, 1, dout / 2, FFTW_ESTIMATE);
		break;
	case K_C2R:
		p = fftwl_plan_many_dft_c2r(r, tc->n, h, (fftwl_complex *) in,
		    NULL, 1, din / 2, out, NULL, 1, dout, FFTW_ESTIMATE);
		break;
	default:
		p = fftwl_plan_many_r2r(r, tc->n, h, in, NULL, 1, din, out,
		    NULL, 1, dout, &kind, FFTW_ESTIMATE);
		break;
	}
	fftwl_execute(p);
	fftwl_destroy_plan(p);
	free(in);
	return out;
}

// input_values makes the case's logical input: uniform in [-1, 1); for
// c2r, the r2c transform of such a real input (Hermitian, as c2r
// requires: otherwise each algorithm may read a different half).
static long double *
input_values(const tcase *tc, const layout *L, uint64_t seed)
{
	long double *v = malloc(L->nlog_in * sizeof(long double));
	if (tc->kind != K_C2R) {
		for (size_t i = 0; i < L->nlog_in; i++) {
			v[i] = (long double) (rng(&seed) >> 11) * 0x1p-52L - 1;
		}
		return v;
	}
	size_t       nreal = (size_t) L->ntotal * (size_t) tc->howmany;
	long double *x     = malloc(nreal * sizeof(long double));
	for (size_t i = 0; i < nreal; i++) {
		x[i] = (long double) (rng(&seed) >> 11) * 0x1p-52L - 1;
	}
	fftwl_plan p = fftwl_plan_many_dft_r2c(tc->rank, tc->n, tc->howmany, x,
	    NULL, 1, (int) L->ntotal, (fftwl_complex *) v, NULL, 1,
	    (int) (L->nlog_in / 2 / (size_t) tc->howmany), FFTW_ESTIMATE);
	fftwl_execute(p);
	fftwl_destroy_plan(p);
	free(x);
	return v;
}

// rel_l2 is ||a - b|| / ||b||.
static double
rel_l2(const long double *a, const long double *b, size_t n)
{
	long double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d += (a[i] - b[i]) * (a[i] - b[i]);
		s += b[i] * b[i];
	}
	return s > 0 ? (double) sqrtl(d / s) : (double) sqrtl(d);
}

#define X(name) fftw_##name
#define R double
#include "fftw_prog_cases.h"
#undef X
#undef R
#define X(name) fftwf_##name
#define R float
#include "fftw_prog_cases.h"
#undef X
#undef R

// record is one case's result in an --out file.
typedef struct record {
	char     name[48];
	int32_t  prec;
	uint64_t n;
} record;

// compare_prev finds the case in the earlier run's file and returns the
// relative L2 difference of the outputs (-1: not found).
static double
compare_prev(
    FILE *f, const char *name, int prec, const long double *got, size_t n)
{
	record r;
	rewind(f);
	while (fread(&r, sizeof(r), 1, f) == 1) {
		if (strcmp(r.name, name) == 0 && r.prec == prec && r.n == n) {
			long double *v = malloc(n * sizeof(long double));
			size_t       k = fread(v, sizeof(long double), n, f);
			double       d = k == n ? rel_l2(got, v, n) : -1;
			free(v);
			return d;
		}
		fseek(f, (long) (r.n * sizeof(long double)), SEEK_CUR);
	}
	return -1;
}

// THREADS executions of one plan run at once, REPS times each, on arrays
// of their own (FFTW: fftw_execute and the new-array calls are thread-safe).
#define THREADS 4
#define REPS 10

// worker is one thread of threads_check.
typedef struct worker {
	fftw_plan    p;
	int          r2hc, n;
	double      *in, *out;
	long double *ref; // the expected output (n reals or n complex)
	double       err; // the largest relative L2 error seen
} worker;

// worker_main executes the plan REPS times on the worker's arrays.
static void *
worker_main(void *arg)
{
	worker *w   = arg;
	size_t  len = (size_t) w->n * (w->r2hc ? 1 : 2);
	for (int r = 0; r < REPS; r++) {
		for (size_t i = 0; i < len; i++) {
			w->out[i] = POISON;
		}
		if (w->r2hc) {
			fftw_execute_r2r(w->p, w->in, w->out);
		} else {
			fftw_execute_dft(w->p, (fftw_complex *) w->in,
			    (fftw_complex *) w->out);
		}
		long double *got = malloc(len * sizeof(long double));
		for (size_t i = 0; i < len; i++) {
			got[i] = w->out[i];
		}
		double e = rel_l2(got, w->ref, len);
		free(got);
		if (!(e <= w->err)) {
			w->err = e;
		}
	}
	return NULL;
}

// threads_check runs a c2c and an r2hc plan (f64, n = 4096) in THREADS
// threads at once, each on its own arrays and inputs, against the long
// double references; prints one line per plan, returns the failures.
static int
threads_check(uint64_t seed)
{
	const int n     = 4096;
	int       fails = 0;
	for (int r2hc = 0; r2hc < 2; r2hc++) {
		size_t    len = (size_t) n * (r2hc ? 1 : 2);
		double   *a   = fftw_malloc(len * sizeof(double));
		double   *b   = fftw_malloc(len * sizeof(double));
		fftw_plan p   = r2hc
		      ? fftw_plan_r2r_1d(n, a, b, FFTW_R2HC, FFTW_ESTIMATE)
		      : fftw_plan_dft_1d(n, (fftw_complex *) a,
		          (fftw_complex *) b, FFTW_FORWARD, FFTW_ESTIMATE);
		worker    w[THREADS];
		pthread_t t[THREADS];
		for (int k = 0; k < THREADS; k++) {
			w[k]     = (worker) { .p = p, .r2hc = r2hc, .n = n };
			w[k].in  = fftw_malloc(len * sizeof(double));
			w[k].out = fftw_malloc(len * sizeof(double));
			long double *x = malloc(len * sizeof(long double));
			w[k].ref       = malloc(len * sizeof(long double));
			for (size_t i = 0; i < len; i++) {
				w[k].in[i]
				    = (double) (rng(&seed) >> 11) * 0x1p-52 - 1;
				x[i] = w[k].in[i];
			}
			fftwl_r2r_kind kind = FFTW_R2HC;
			fftwl_plan     q    = r2hc
			           ? fftwl_plan_r2r_1d(
			               n, x, w[k].ref, kind, FFTW_ESTIMATE)
			           : fftwl_plan_dft_1d(n, (fftwl_complex *) x,
			               (fftwl_complex *) w[k].ref, FFTW_FORWARD,
			               FFTW_ESTIMATE);
			fftwl_execute(q);
			fftwl_destroy_plan(q);
			free(x);
		}
		for (int k = 0; k < THREADS; k++) {
			pthread_create(&t[k], NULL, worker_main, &w[k]);
		}
		double err = 0;
		for (int k = 0; k < THREADS; k++) {
			pthread_join(t[k], NULL);
			if (!(w[k].err <= err)) {
				err = w[k].err;
			}
			fftw_free(w[k].in);
			fftw_free(w[k].out);
			free(w[k].ref);
		}
		double bound = BOUND64 * (1 + log2((double) n));
		int    ok    = err <= bound;
		printf(
		    "%-4s %-22s f64 err %.3g (bound %.3g), %d threads x %d\n",
		    ok ? "ok" : "FAIL", r2hc ? "threads_r2hc" : "threads_c2c",
		    err, bound, THREADS, REPS);
		fails += !ok;
		fftw_destroy_plan(p);
		fftw_free(a);
		fftw_free(b);
	}
	return fails;
}

// bad_args: planners given what FFTW refuses (a size 0, a negative rank,
// a negative howmany) return NULL, under the drop-in as in FFTW, and
// fftw_destroy_plan(NULL) does nothing. Returns the failures.
static int
bad_args(void)
{
	fftw_complex *a    = fftw_alloc_complex(64);
	int           n[2] = { 8, 0 };
	int           bad  = 0;
	bad += fftw_plan_dft_1d(0, a, a, FFTW_FORWARD, FFTW_ESTIMATE) != NULL;
	bad += fftw_plan_dft(2, n, a, a, FFTW_FORWARD, FFTW_ESTIMATE) != NULL;
	bad += fftw_plan_many_dft(-1, n, 1, a, NULL, 1, 0, a, NULL, 1, 0,
	           FFTW_FORWARD, FFTW_ESTIMATE)
	    != NULL;
	bad += fftwf_plan_many_dft_r2c(1, n, -2, (float *) a, NULL, 1, 8,
	           (fftwf_complex *) a, NULL, 1, 5, FFTW_ESTIMATE)
	    != NULL;
	fftw_destroy_plan(NULL);
	fftwf_destroy_plan(NULL);
	fftw_free(a);
	printf("%-4s %-22s planners refuse size 0, rank -1, howmany -2\n",
	    bad ? "FAIL" : "ok", "bad_args");
	return bad != 0;
}

// bench prints the median time of fftw_execute for c2c f64 1D transforms
// of 2^k points, k = 6..20, on fftw_malloc arrays (to set FFTD_FFTW3_MIN).
static int
bench(void)
{
	printf("%10s %12s\n", "n", "us/execute");
	for (int k = 6; k <= 20; k += 2) {
		int           n   = 1 << k;
		fftw_complex *in  = fftw_alloc_complex((size_t) n);
		fftw_complex *out = fftw_alloc_complex((size_t) n);
		fftw_plan     p
		    = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
		memset(in, 0, sizeof(fftw_complex) * (size_t) n);
		double t[15];
		int    reps = k < 16 ? 200 : 20;
		for (int s = 0; s < 15; s++) {
			struct timespec a, b;
			clock_gettime(CLOCK_MONOTONIC, &a);
			for (int i = 0; i < reps; i++) {
				fftw_execute(p);
			}
			clock_gettime(CLOCK_MONOTONIC, &b);
			t[s] = ((double) (b.tv_sec - a.tv_sec) * 1e6
			           + (double) (b.tv_nsec - a.tv_nsec) / 1e3)
			    / reps;
		}
		for (int i = 0; i < 15; i++) { // sort for the median
			for (int j = i + 1; j < 15; j++) {
				if (t[j] < t[i]) {
					double x = t[i];
					t[i]     = t[j];
					t[j]     = x;
				}
			}
		}
		printf("%10d %12.1f\n", n, t[7]);
		fftw_destroy_plan(p);
		fftw_free(in);
		fftw_free(out);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t    seed = (uint64_t) time(NULL);
	const char *outp = NULL, *cmpp = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bench") == 0) {
			return bench();
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--kill") == 0 && i + 1 < argc) {
			kill_pid = (pid_t) atol(argv[++i]);
		} else if (strcmp(argv[i], "--fork") == 0) {
			fork_after_plan = 1;
		} else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			outp = argv[++i];
		} else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc) {
			cmpp = argv[++i];
		} else {
			fprintf(stderr,
			    "usage: fftw_prog [--seed S] [--out FILE] "
			    "[--compare FILE] [--kill PID] [--fork] | "
			    "--bench\n");
			return 2;
		}
	}
	FILE *out = outp ? fopen(outp, "wb") : NULL;
	FILE *cmp = cmpp ? fopen(cmpp, "rb") : NULL;
	if ((outp && !out) || (cmpp && !cmp)) {
		perror("fftw_prog: open");
		return 2;
	}
	printf("fftw_prog: seed %llu\n", (unsigned long long) seed);
	int pass = 0, fail = 0;
	for (size_t c = 0; c < NCASES; c++) {
		const tcase *tc = &cases[c];
		layout       L;
		make_layout(tc, &L);
		for (int prec = 0; prec < 2; prec++) {
			long double *got = NULL;
			uint64_t     s   = seed * 131 + c * 2 + (uint64_t) prec;
			double       err = prec == 0
			          ? fftw_run_case(tc, &L, s, &got)
			          : fftwf_run_case(tc, &L, s, &got);
			double       bound = (prec == 0 ? BOUND64 : BOUND32)
			    * (1 + log2((double) L.ntotal));
			int    ok   = err >= 0 && err <= bound;
			double diff = 0;
			if (got != NULL && cmp != NULL) {
				diff = compare_prev(
				    cmp, tc->name, prec, got, L.nlog_out);
				ok = ok && diff >= 0 && diff <= 2 * bound;
			}
			printf("%-4s %-22s %s err %.3g (bound %.3g)",
			    ok ? "ok" : "FAIL", tc->name,
			    prec == 0 ? "f64" : "f32", err, bound);
			if (cmp != NULL) {
				printf(" vs earlier run %.3g", diff);
			}
			printf("\n");
			if (got != NULL && out != NULL) {
				record r = { .prec = prec, .n = L.nlog_out };
				snprintf(
				    r.name, sizeof(r.name), "%s", tc->name);
				fwrite(&r, sizeof(r), 1, out);
				fwrite(
				    got, sizeof(long double), L.nlog_out, out);
			}
			free(got);
			ok ? pass++ : fail++;
		}
		free(L.in_index);
		free(L.out_index);
		free(L.out_mask);
	}
	int tf = threads_check(seed * 131 + 7);
	pass += 2 - tf;
	fail += tf;
	tf = bad_args();
	pass += 1 - tf;
	fail += tf;
	if (out) {
		fclose(out);
	}
	if (cmp) {
		fclose(cmp);
	}
	printf("fftw_prog: %d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}

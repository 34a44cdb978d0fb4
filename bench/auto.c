// SPDX-License-Identifier: MIT
//
// auto.c — bench/auto: accuracy-aware "auto" (issue 18, item 5) against the
// backend's default algorithm at the data's own precision (cuFFT on the
// cuda backend, FFTW on the fftw backend), through one daemon, in one run.
// For each shape, data precision and tolerance it plans "auto" with that
// tolerance, names the algorithm the daemon chose (fftd_plan_algorithm),
// and times executions on resident arrays (fftd_execute_arrays: no data
// crosses the socket or PCIe, so the times are the transforms' and the
// request's round trip, the same for both) beside the default's; x is
// default ms / auto ms, so x >= 1 means auto is not slower. The issue's
// target is that auto is never slower than the default at the same
// precision: a row where auto chose another algorithm counts as slower
// when x < 1 - NOISE (5%); where it chose the default itself, x only shows
// the measurement's noise, whose range the summary prints. Each auto output is
// also compared with the default's output on the same input: the relative L2
// difference must stay within the tolerance plus the default's own error bound
// (ERR_SLACK).
//
//   auto [--spawn FFTD_BIN | --url URL] [--json FILE] [--reps R] [--quick]
//
// Shapes: 2^24 points per execution on a GPU (2^18 on the fftw backend or
// with --quick, leaving out the shapes larger than that), forward,
// unnormalized, dense; input uniform in [-1, 1).
// Times: the median of R (default 51) executions of each plan after one
// warm-up, auto's and the default's in alternation. The
// daemon is $FFTD_BIN (or build/fftd) started on a fresh socket unless
// --url is given. Exit status 1 when a case failed or a check did not
// pass; a slower row is reported as the target missed, not as a failure.

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fftd.h"
#include "json.h"
#include "lib/connect.h"
#include "tc.h" // the host's IEEE binary16 conversions

#define NOISE 0.05
#define MAX_ROWS 128
#define NTOL 4
#define NPREC 3

// The data precisions, in the order of the tables below.
static const fftd_precision PREC[NPREC]      = { FFTD_F64, FFTD_F32, FFTD_F16 };
static const char *const    PREC_NAME[NPREC] = { "f64", "f32", "f16" };
static const size_t         PREC_BYTES[NPREC] = { 8, 4, 2 };

// ERR_SLACK is the default algorithm's own error allowance in the output
// check (f64, f32, f16): above what cuFFT and FFTW measure in bench/kernels
// (f16: cuFFT's worst there is 2.7e-3) and below the tolerances asked.
static const double ERR_SLACK[NPREC] = { 1e-13, 2e-6, 5e-3 };

// A shape of the benchmark: kind, rank and sizes; the batch fills the
// points per execution.
typedef struct shape {
	const char *name;
	fftd_kind   kind;
	int         rank;
	int64_t     n[FFTD_MAX_RANK];
} shape;

static const shape SHAPES[] = {
	{ "C2C 1D 4096", FFTD_C2C, 1, { 4096 } },
	{ "C2C 1D 65536", FFTD_C2C, 1, { 65536 } },
	{ "C2C 1D 2^20", FFTD_C2C, 1, { 1 << 20 } },
	{ "C2C 1D 2^24", FFTD_C2C, 1, { 1 << 24 } },
	{ "C2C 2D 1024^2", FFTD_C2C, 2, { 1024, 1024 } },
	{ "C2C 3D 128^3", FFTD_C2C, 3, { 128, 128, 128 } },
	{ "R2C 1D 2^20", FFTD_R2C, 1, { 1 << 20 } },
	{ "R2C 2D 1024^2", FFTD_R2C, 2, { 1024, 1024 } },
};
#define NSHAPES ((int) (sizeof(SHAPES) / sizeof(SHAPES[0])))

// The tolerances per data precision (f64, f32, f16): 0 is auto's default
// behaviour (the default algorithm), the others let it convert (f64 data
// through f32 algorithms, f32 through tc16) or pick another algorithm at
// the same precision (f16 data through tc16).
static const double TOLS[NPREC][NTOL] = {
	{ 0, 1e-9, 1e-6, 1e-3 },
	{ 0, 1e-6, 1e-4, 1e-2 },
	{ 0, 5e-3, 1e-2, 5e-2 },
};

// row is one measured case.
typedef struct row {
	const char *shape;
	int         prec; // index into PREC
	double      tol;
	int64_t     batch;
	char        chosen[32];
	double      plan_ms; // auto's plan create, speed measurements included
	double      auto_ms, default_ms, x, diff;
	int         same; // auto chose the default algorithm itself
	int         slower, bad;
	char        err[160];
} row;

// opts are the command line's settings.
typedef struct opts {
	const char *url, *spawn, *json;
	int         reps;
	int         quick;
} opts;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

// urand is xorshift64, uniform in [-1, 1).
static double
urand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (double) (g_rng >> 11) * 0x1p-52 - 1.0;
}

// now_ms is CLOCK_MONOTONIC in milliseconds.
static double
now_ms(void)
{
	return (double) fftd__mono_ns() * 1e-6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

// time_pair times plans a and b on the arrays in alternation, reps times
// each after one warm-up of each, so that drift of the machine (other
// load, clocks) falls on both alike, and stores their medians.
static int
time_pair(const fftd_plan *a, const fftd_plan *b, fftd_array *in,
    fftd_array *out, int reps, double *ms_a, double *ms_b)
{
	double ta[256], tb[256];
	int    rv = fftd_execute_arrays(a, in, 0, out, 0);
	if (rv == FFTD_OK) {
		rv = fftd_execute_arrays(b, in, 0, out, 0);
	}
	for (int i = 0; rv == FFTD_OK && i < reps; i++) {
		double t0 = now_ms();
		rv        = fftd_execute_arrays(a, in, 0, out, 0);
		double t1 = now_ms();
		if (rv == FFTD_OK) {
			rv = fftd_execute_arrays(b, in, 0, out, 0);
		}
		ta[i] = t1 - t0;
		tb[i] = now_ms() - t1;
	}
	if (rv != FFTD_OK) {
		return rv;
	}
	qsort(ta, (size_t) reps, sizeof(double), cmp_double);
	qsort(tb, (size_t) reps, sizeof(double), cmp_double);
	*ms_a = ta[reps / 2];
	*ms_b = tb[reps / 2];
	return FFTD_OK;
}

// elem is real number i of an array of precision index p.
static double
elem(const void *a, size_t i, int p)
{
	if (p == 0) {
		return ((const double *) a)[i];
	}
	if (p == 1) {
		return ((const float *) a)[i];
	}
	return fftd__tc_f32_from_f16(((const uint16_t *) a)[i]);
}

// rel_l2 is ||a - b|| / ||b|| over count reals of precision index p.
static double
rel_l2(const void *a, const void *b, size_t count, int p)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < count; i++) {
		double x = elem(a, i, p), y = elem(b, i, p);
		num += (x - y) * (x - y);
		den += y * y;
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

// run_shape measures one shape at one data precision: the default plan,
// then auto at each tolerance, appending a row each to rows.
static int
run_shape(fftd_client *cl, const char *deflt, const shape *sh, int p,
    int64_t points, int reps, row *rows, int *nrows)
{
	int64_t total = 1;
	for (int k = 0; k < sh->rank; k++) {
		total *= sh->n[k];
	}
	int64_t        batch = points > total ? points / total : 1;
	fftd_plan_desc d;
	fftd_plan_desc_init(&d, sh->rank, sh->n, sh->kind, PREC[p]);
	d.batch       = batch;
	d.algorithm   = deflt;
	fftd_plan *dp = NULL;
	int        rv = fftd_plan_create(cl, &d, &dp);
	if (rv != FFTD_OK) {
		fprintf(stderr, "auto: %s %s: default plan: %s: %s\n", sh->name,
		    PREC_NAME[p], fftd_err_name(rv), fftd_last_error());
		return 1;
	}
	size_t ib = fftd_plan_input_bytes(dp), ob = fftd_plan_output_bytes(dp);
	size_t esz     = PREC_BYTES[p];
	void  *host    = malloc(ib > ob ? ib : ob);
	void  *ref     = malloc(ob);
	void  *got     = malloc(ob);
	fftd_array *in = NULL, *out = NULL;
	int         bad = 0;
	if (host == NULL || ref == NULL || got == NULL) {
		fprintf(stderr, "auto: out of host memory\n");
		bad = 1;
		goto done;
	}
	for (size_t i = 0; i < ib / esz; i++) {
		double v = urand();
		if (p == 0) {
			((double *) host)[i] = v;
		} else if (p == 1) {
			((float *) host)[i] = (float) v;
		} else {
			((uint16_t *) host)[i]
			    = fftd__tc_f16_from_f32((float) v);
		}
	}
	memset(ref, 0xff, ob); // poison: a short read shows
	if ((rv = fftd_array_create(cl, -1, ib, &in)) != FFTD_OK
	    || (rv = fftd_array_create(cl, -1, ob, &out)) != FFTD_OK
	    || (rv = fftd_array_write(in, 0, host, ib)) != FFTD_OK
	    || (rv = fftd_execute_arrays(dp, in, 0, out, 0)) != FFTD_OK
	    || (rv = fftd_array_read(out, 0, ref, ob)) != FFTD_OK) {
		fprintf(stderr, "auto: %s: default run: %s: %s\n", sh->name,
		    fftd_err_name(rv), fftd_last_error());
		bad = 1;
		goto done;
	}
	const double *tols = TOLS[p];
	for (int t = 0; t < NTOL && *nrows < MAX_ROWS; t++) {
		row *r = &rows[(*nrows)++];
		memset(r, 0, sizeof(*r));
		r->shape      = sh->name;
		r->prec       = p;
		r->tol        = tols[t];
		r->batch      = batch;
		d.algorithm   = "auto";
		d.tolerance   = tols[t];
		fftd_plan *ap = NULL;
		double     t0 = now_ms();
		rv            = fftd_plan_create(cl, &d, &ap);
		r->plan_ms    = now_ms() - t0;
		if (rv == FFTD_OK) {
			snprintf(r->chosen, sizeof(r->chosen), "%s",
			    fftd_plan_algorithm(ap));
			// No C2R shapes: no plan overwrites its input, so
			// every plan reads the same input.
			rv = fftd_execute_arrays(ap, in, 0, out, 0);
		}
		if (rv == FFTD_OK) {
			memset(got, 0xff, ob); // poison: a short read shows
			rv = fftd_array_read(out, 0, got, ob);
		}
		if (rv == FFTD_OK) {
			rv = time_pair(
			    ap, dp, in, out, reps, &r->auto_ms, &r->default_ms);
		}
		if (rv != FFTD_OK) {
			snprintf(r->err, sizeof(r->err), "%s: %s",
			    fftd_err_name(rv), fftd_last_error());
			r->bad = 1;
			bad    = 1;
		} else {
			r->x    = r->default_ms / r->auto_ms;
			r->same = strcmp(r->chosen, deflt) == 0;
			// The default itself is not slower than itself: its x
			// shows the noise of the measurement.
			r->slower  = !r->same && r->x < 1.0 - NOISE;
			r->diff    = rel_l2(got, ref, ob / esz, p);
			double lim = tols[t] + ERR_SLACK[p];
			if (!(r->diff <= lim)) {
				snprintf(r->err, sizeof(r->err),
				    "differs from %s by %.2e > %.2e", deflt,
				    r->diff, lim);
				r->bad = 1;
				bad    = 1;
			}
		}
		fftd_plan_destroy(ap);
	}
done:
	fftd_array_destroy(in);
	fftd_array_destroy(out);
	fftd_plan_destroy(dp);
	free(host);
	free(ref);
	free(got);
	return bad;
}

static void
print_table(const row *rows, int n, const char *deflt, const char *device)
{
	printf("\n=== fftd auto: accuracy-aware auto against %s at the data's "
	       "precision; %s\n",
	    deflt, device);
	printf("times: median per execution on resident arrays (request round "
	       "trip included, the same for both); x: %s ms / auto ms (>= 1: "
	       "auto not slower; '*' slower by more than %.0f%%); diff: "
	       "relative L2 of auto's output against %s's\n",
	    deflt, NOISE * 100, deflt);
	printf("%-15s %-4s %6s %9s %-12s %9s %9s %6s %9s %9s\n", "shape",
	    "prec", "tol", "batch", "auto chose", "auto ms", "dflt ms", "x",
	    "diff", "plan ms");
	int    slower = 0, bad = 0, other = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < n; i++) {
		const row *r = &rows[i];
		if (r->bad && r->err[0] && r->auto_ms == 0) {
			printf("%-15s %-4s %6.0e %9" PRId64 " failed: %s\n",
			    r->shape, PREC_NAME[r->prec], r->tol, r->batch,
			    r->err);
			bad++;
			continue;
		}
		printf("%-15s %-4s %6.0e %9" PRId64
		       " %-12s %9.3f %9.3f %5.2f%s %9.2e %9.1f%s%s\n",
		    r->shape, PREC_NAME[r->prec], r->tol, r->batch, r->chosen,
		    r->auto_ms, r->default_ms, r->x, r->slower ? "*" : " ",
		    r->diff, r->plan_ms, r->err[0] ? "  ! " : "", r->err);
		slower += r->slower;
		bad += r->bad;
		other += !r->same;
		if (r->same) {
			lo = r->x < lo ? r->x : lo;
			hi = r->x > hi ? r->x : hi;
		}
	}
	printf("auto chose another algorithm than %s in %d of %d rows; x of "
	       "the rows where it chose %s itself (noise): %.2f .. %.2f\n",
	    deflt, other, n, deflt, lo, hi);
	printf("target: auto never slower than %s at the same precision "
	       "(within %.0f%%): %s (%d of %d rows with another algorithm "
	       "slower)\n",
	    deflt, NOISE * 100,
	    slower      ? "MISSED"
	        : other ? "met"
	                : "not exercised (auto chose the default everywhere)",
	    slower, other);
	printf("check: auto's output within tolerance + the default's error "
	       "of %s's: %s (%d of %d rows not)\n",
	    deflt, bad ? "FAILED" : "passed", bad, n);
}

static int
write_json(const char *path, const row *rows, int n, const char *deflt,
    const char *backend, const char *device)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		return -1;
	}
	fprintf(f, "{\"bench\": \"auto\", \"default\": ");
	bench_json_str(f, deflt);
	fprintf(f, ", \"backend\": ");
	bench_json_str(f, backend);
	fprintf(f, ", \"device\": ");
	bench_json_str(f, device);
	bench_json_field(f, "noise", NOISE);
	fprintf(f, ", \"rows\": [");
	for (int i = 0; i < n; i++) {
		const row *r = &rows[i];
		fprintf(f, "%s\n  {\"shape\": ", i ? "," : "");
		bench_json_str(f, r->shape);
		fprintf(f, ", \"precision\": \"%s\"", PREC_NAME[r->prec]);
		bench_json_field(f, "tolerance", r->tol);
		bench_json_field(f, "batch", (double) r->batch);
		fprintf(f, ", \"chosen\": ");
		bench_json_str(f, r->chosen);
		bench_json_field(f, "auto_ms", r->auto_ms);
		bench_json_field(f, "default_ms", r->default_ms);
		bench_json_field(f, "x", r->x);
		bench_json_field(f, "diff", r->diff);
		bench_json_field(f, "plan_ms", r->plan_ms);
		fprintf(f,
		    ", \"same\": %s, \"slower\": %s, \"ok\": %s, "
		    "\"error\": ",
		    r->same ? "true" : "false", r->slower ? "true" : "false",
		    r->bad ? "false" : "true");
		bench_json_str(f, r->err);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
	return fclose(f) == 0 ? 0 : -1;
}

static int
parse(int argc, char **argv, opts *o)
{
	o->reps = 51;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--quick") == 0) {
			o->quick = 1;
			continue;
		}
		if (i + 1 >= argc) {
			return -1;
		}
		const char *v = argv[++i];
		if (strcmp(a, "--url") == 0) {
			o->url = v;
		} else if (strcmp(a, "--spawn") == 0) {
			o->spawn = v;
		} else if (strcmp(a, "--json") == 0) {
			o->json = v;
		} else if (strcmp(a, "--reps") == 0) {
			o->reps = atoi(v);
		} else {
			return -1;
		}
	}
	if (o->reps < 1 || o->reps > 256 || (o->url && o->spawn)) {
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	opts o = { 0 };
	if (parse(argc, argv, &o) != 0) {
		fprintf(stderr,
		    "usage: auto [--spawn FFTD_BIN | --url URL] [--json FILE] "
		    "[--reps R (1..256)] [--quick]\n");
		return 2;
	}
	fftd_test_daemon daemon;
	fftd_client     *cl = NULL;
	if (fftd_bench_connect("auto", o.url, o.spawn, 600000, &daemon, &cl)
	    != 0) {
		return 1;
	}
	fftd_info info;
	fftd_client_info(cl, &info);
	int         gpu    = strcmp(info.backend, "cuda") == 0;
	const char *deflt  = gpu ? "cufft" : "fftw";
	const char *device = info.ndevices > 0 ? info.devices[0].name : "?";
	int64_t     points
	    = gpu && !o.quick ? (int64_t) 1 << 24 : (int64_t) 1 << 18;
	printf("auto: daemon %s, backend %s, device %s, %" PRId64
	       " points per execution, %d repetitions\n",
	    info.server_version, info.backend, device, points, o.reps);

	static row rows[MAX_ROWS];
	int        nrows = 0, bad = 0;
	for (int s = 0; s < NSHAPES; s++) {
		int64_t total = 1;
		for (int k = 0; k < SHAPES[s].rank; k++) {
			total *= SHAPES[s].n[k];
		}
		if (total > points) {
			printf("auto: %s left out (over %" PRId64 " points)\n",
			    SHAPES[s].name, points);
			continue;
		}
		for (int p = 0; p < NPREC; p++) {
			// f16 where the daemon serves it (not on the fftw
			// backend).
			if (info.precisions & (1u << PREC[p])) {
				bad |= run_shape(cl, deflt, &SHAPES[s], p,
				    points, o.reps, rows, &nrows);
			}
		}
	}
	print_table(rows, nrows, deflt, device);
	fftd_client_close(cl);
	if (daemon.pid && fftd_test_daemon_stop(&daemon) != 0) {
		bad = 1;
	}
	if (o.json != NULL
	    && write_json(o.json, rows, nrows, deflt, info.backend, device)
	        != 0) {
		fprintf(stderr, "auto: cannot write %s\n", o.json);
		bad = 1;
	}
	printf("auto: %s\n", bad ? "FAILED (see above)" : "ok");
	return bad;
}

// SPDX-License-Identifier: MIT
//
// python_c.c — the C client baseline of bench/python.py: the same plan and
// fftd_execute calls the Python package makes, with no Python around them,
// so that the Python script can subtract the C client's time from its own
// (Python overhead) and divide its throughput by the C client's.
//
//   python_c --url URL --kind c2c|r2c --prec f32|f64 --n N --batch B
//            --mode inline|shm [--reps R] [--warmup W] [--json FILE]
//
// One plan (rank 1, forward, no normalization), input and output made
// once: `inline` in malloc'd memory (libfftd sends the payload inline or
// through its staging buffers, as it does for any caller), `shm` in two
// fftd_buffers (the shared-memory path). The input is uniform random in
// [-1, 1). W untimed executions, then R executions each timed alone on
// CLOCK_MONOTONIC. Writes one JSON object (to FILE, or stdout):
// {"mode", "kind", "prec", "n", "batch", "in_bytes", "out_bytes",
//  "algorithm", "samples_s": [R seconds]}; exit status 0, or 1 with a
// message on stderr when a call fails. Not run by bench/run.sh on its own.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fftd.h"
#include "json.h"

typedef struct opts {
	const char *url, *json, *mode;
	int         kind, prec;
	int64_t     n, batch;
	int         reps, warmup;
} opts;

// usage prints the synopsis and exits 2.
static void
usage(void)
{
	fprintf(stderr,
	    "usage: python_c --url URL --kind c2c|r2c --prec f32|f64 --n N "
	    "--batch B --mode inline|shm [--reps R] [--warmup W] "
	    "[--json FILE]\n");
	exit(2);
}

// parse reads the command line into o (usage() on anything wrong).
static void
parse(int argc, char **argv, opts *o)
{
	*o = (opts) { .kind = -1, .prec = -1, .reps = 7, .warmup = 2 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v == NULL) {
			usage();
		}
		i++;
		if (strcmp(a, "--url") == 0) {
			o->url = v;
		} else if (strcmp(a, "--json") == 0) {
			o->json = v;
		} else if (strcmp(a, "--mode") == 0) {
			o->mode = v;
		} else if (strcmp(a, "--kind") == 0) {
			o->kind = strcmp(v, "c2c") == 0 ? FFTD_C2C
			    : strcmp(v, "r2c") == 0     ? FFTD_R2C
			                                : -1;
		} else if (strcmp(a, "--prec") == 0) {
			o->prec = strcmp(v, "f32") == 0 ? FFTD_F32
			    : strcmp(v, "f64") == 0     ? FFTD_F64
			                                : -1;
		} else if (strcmp(a, "--n") == 0) {
			o->n = strtoll(v, NULL, 10);
		} else if (strcmp(a, "--batch") == 0) {
			o->batch = strtoll(v, NULL, 10);
		} else if (strcmp(a, "--reps") == 0) {
			o->reps = atoi(v);
		} else if (strcmp(a, "--warmup") == 0) {
			o->warmup = atoi(v);
		} else {
			usage();
		}
	}
	if (o->url == NULL || o->mode == NULL || o->kind < 0 || o->prec < 0
	    || o->n <= 0 || o->batch <= 0 || o->reps <= 0 || o->warmup < 0
	    || (strcmp(o->mode, "inline") != 0
	        && strcmp(o->mode, "shm") != 0)) {
		usage();
	}
}

// fail prints what failed with fftd's message and exits 1.
static void
fail(const char *what, int rv)
{
	fprintf(stderr, "python_c: %s: %s (%s)\n", what, fftd_strerror(rv),
	    fftd_last_error());
	exit(1);
}

// fill_random writes n uniform values in [-1, 1) of the plan's precision.
static void
fill_random(void *p, size_t bytes, int prec)
{
	uint64_t s = 0x9e3779b97f4a7c15u;
	size_t n = bytes / (prec == FFTD_F32 ? sizeof(float) : sizeof(double));
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13; // xorshift64
		s ^= s >> 7;
		s ^= s << 17;
		double v = (double) (s >> 11) * 0x1.0p-52 - 1.0;
		if (prec == FFTD_F32) {
			((float *) p)[i] = (float) v;
		} else {
			((double *) p)[i] = v;
		}
	}
}

// write_json writes the result object (see the file's comment).
static void
write_json(FILE *f, const opts *o, const fftd_plan *pl, const double *t)
{
	fprintf(f, "{\"mode\": ");
	bench_json_str(f, o->mode);
	fprintf(f, ", \"kind\": \"%s\", \"prec\": \"%s\"",
	    o->kind == FFTD_C2C ? "c2c" : "r2c",
	    o->prec == FFTD_F32 ? "f32" : "f64");
	bench_json_field(f, "n", (double) o->n);
	bench_json_field(f, "batch", (double) o->batch);
	bench_json_field(f, "in_bytes", (double) fftd_plan_input_bytes(pl));
	bench_json_field(f, "out_bytes", (double) fftd_plan_output_bytes(pl));
	fprintf(f, ", \"algorithm\": ");
	bench_json_str(f, fftd_plan_algorithm(pl));
	fprintf(f, ", \"samples_s\": [");
	for (int i = 0; i < o->reps; i++) {
		fprintf(f, "%s%.9g", i ? ", " : "", t[i]);
	}
	fprintf(f, "]}\n");
}

// main: one plan, its buffers, W + R executions, the JSON.
int
main(int argc, char **argv)
{
	opts o;
	parse(argc, argv, &o);
	fftd_client *c;
	int          rv = fftd_client_open(&c, o.url, 0);
	if (rv != FFTD_OK) {
		fail("fftd_client_open", rv);
	}
	fftd_plan_desc d;
	int64_t        n[1] = { o.n };
	fftd_plan_desc_init(&d, 1, n, o.kind, o.prec);
	d.batch     = o.batch;
	d.direction = FFTD_FORWARD;
	fftd_plan *pl;
	if ((rv = fftd_plan_create(c, &d, &pl)) != FFTD_OK) {
		fail("fftd_plan_create", rv);
	}
	size_t       inb  = fftd_plan_input_bytes(pl);
	size_t       outb = fftd_plan_output_bytes(pl);
	fftd_buffer *bi = NULL, *bo = NULL;
	void        *in, *out;
	if (strcmp(o.mode, "shm") == 0) {
		if ((rv = fftd_buffer_create(c, inb, &bi)) != FFTD_OK
		    || (rv = fftd_buffer_create(c, outb, &bo)) != FFTD_OK) {
			fail("fftd_buffer_create", rv);
		}
		in  = fftd_buffer_data(bi);
		out = fftd_buffer_data(bo);
	} else {
		in  = malloc(inb);
		out = malloc(outb);
		if (in == NULL || out == NULL) {
			fprintf(stderr, "python_c: out of memory\n");
			return 1;
		}
	}
	fill_random(in, inb, o.prec);
	memset(out, 0, outb); // fault the pages in, as numpy's would be
	double *t = calloc((size_t) o.reps, sizeof(double));
	if (t == NULL) {
		fprintf(stderr, "python_c: out of memory\n");
		return 1;
	}
	for (int i = 0; i < o.warmup + o.reps; i++) {
		uint64_t t0 = fftd__mono_ns();
		if ((rv = fftd_execute(pl, in, out)) != FFTD_OK) {
			fail("fftd_execute", rv);
		}
		if (i >= o.warmup) {
			t[i - o.warmup]
			    = (double) (fftd__mono_ns() - t0) * 1e-9;
		}
	}
	FILE *f = o.json != NULL ? fopen(o.json, "w") : stdout;
	if (f == NULL) {
		perror(o.json);
		return 1;
	}
	write_json(f, &o, pl, t);
	if (f != stdout) {
		fclose(f);
	}
	free(t);
	fftd_plan_destroy(pl);
	if (bi != NULL) {
		fftd_buffer_destroy(bi);
		fftd_buffer_destroy(bo);
	} else {
		free(in);
		free(out);
	}
	fftd_client_close(c);
	return 0;
}

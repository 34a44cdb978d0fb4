// SPDX-License-Identifier: MIT
//
// e2e_report.c — bench/e2e's output (see e2e.h): the tables on stdout and
// the JSON file (bench/README.md describes both).

#include "e2e.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

// cell is a figure's table cell (GB/s, or why not).
static void
cell(char *buf, size_t n, const meas *m)
{
	if (m->state == 1) {
		snprintf(buf, n, "%.2f", m->gbps);
	} else if (m->state == -1 || m->state == 0) {
		snprintf(buf, n, "-");
	} else {
		snprintf(buf, n, "FAIL");
	}
}

// ratio_cell is the cell of x / y against a target.
static void
ratio_cell(char *buf, size_t n, const meas *x, const meas *y, double target)
{
	if (x->state == 1 && y->state == 1) {
		double r = x->gbps / y->gbps;
		snprintf(buf, n, "%.3f%s", r, r >= target ? "" : "*");
	} else {
		snprintf(buf, n, "-");
	}
}

// e2e_print_tables prints the tables of every case run and the
// small requests.
void
e2e_print_tables(bench *B)
{
	printf("\n=== fftd e2e: GB/s of input bytes (1e9 B/s), median of %d; "
	       "GPU %s; daemon backend %s\n",
	    B->reps, B->gpu ? B->gpu_name : "none", B->info.backend);
	if (!B->gpu) {
		printf("(a)-(c): skipped (%s)\n", B->no_gpu_why);
	}
	printf("%-16s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "case",
	    "in MiB", "(a)dup", "(b)1st", "(c)16st", "(d)shm", "(e)inl",
	    "memcpy", "(f)strm", "(f)copy", "4cl-shm", "4cl-inl");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		char a[16], b[16], c[16], d[16], e[16], mc[16], f[16], fc[16],
		    k[16], ki[16];
		cell(a, 16, &R->a);
		cell(b, 16, &R->b);
		cell(c, 16, &R->c16);
		cell(d, 16, &R->d);
		cell(e, 16, &R->e);
		cell(mc, 16, &R->memcpy_);
		cell(f, 16, &R->f);
		cell(fc, 16, &R->f_copy);
		cell(k, 16, &R->cl_shm);
		cell(ki, 16, &R->cl_inline);
		printf("%-16s %7.0f %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n",
		    R->c->label, (double) R->in_bytes / MIB, a, b, c, d, e, mc,
		    f, fc, k, ki);
	}
	printf("\nratios (target; * = missed)\n");
	printf("%-16s %9s %9s %9s %9s %9s\n", "case", "d/a>=.95", "f/a>=.95",
	    "d/c>=1", "e/mc>=.5", "4cl/a>=.95");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		char r1[16], r2[16], r3[16], r4[16], r5[16];
		ratio_cell(r1, 16, &R->d, &R->a, 0.95);
		ratio_cell(r2, 16, &R->f, &R->a, 0.95);
		ratio_cell(r3, 16, &R->d, &R->c16, 1.0);
		ratio_cell(r4, 16, &R->e, &R->memcpy_, 0.5);
		ratio_cell(r5, 16, &R->cl_shm, &R->a, 0.95);
		printf("%-16s %9s %9s %9s %9s %9s\n", R->c->label, r1, r2, r3,
		    r4, r5);
	}
	printf("\nchecks\n");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		printf("%-16s %s", R->c->label, R->check_note);
		if (!isnan(R->ref_err)) {
			double tol = e2e_ref_tol(R->c);
			printf("; DFT rel err %.1e (%s %.0e)", R->ref_err,
			    R->ref_err < tol ? "ok <" : "BAD >=", tol);
		}
		if (!isnan(R->b_err)) {
			printf("; vs (b) %.1e", R->b_err);
		}
		printf("\n");
	}
	if (B->want_latency) {
		printf("\nsmall requests (f32 C2C N=1024 batch 1, %d round "
		       "trips after %d warm-up; target p50<=60 p99<=200 us)\n",
		    LAT_ROUNDS, LAT_WARMUP);
		e2e_lat_print("inline execute", &B->lat_inline);
		e2e_lat_print("shared-memory execute", &B->lat_shm);
		e2e_lat_print("ping", &B->lat_ping);
	}
	fflush(stdout);
}

// json_meas writes a figure as a JSON member.
static void
json_meas(FILE *f, const char *key, const meas *m)
{
	fprintf(f, "      \"%s\": {\"state\": \"%s\"", key,
	    m->state == 1        ? "ok"
	        : m->state == -1 ? "unavailable"
	        : m->state == -2 ? "failed"
	                         : "skipped");
	if (m->state == 1) {
		fprintf(f, ", \"gbps\": ");
		bench_json_num(f, m->gbps);
		fprintf(f, ", \"median_s\": ");
		bench_json_num(f, m->med);
		fprintf(f, ", \"samples_s\": [");
		for (int i = 0; i < m->nrep; i++) {
			fprintf(f, "%s", i ? ", " : "");
			bench_json_num(f, m->s[i]);
		}
		fprintf(f, "]");
	} else {
		fprintf(f, ", \"why\": ");
		bench_json_str(f, m->why[0] ? m->why : "not run");
	}
	fprintf(f, "},\n");
}

// json_ratio writes a ratio of two figures as a JSON member.
static void
json_ratio(
    FILE *f, const char *key, const meas *x, const meas *y, double target)
{
	fprintf(f, "        \"%s\": {\"value\": ", key);
	if (x->state == 1 && y->state == 1) {
		bench_json_num(f, x->gbps / y->gbps);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ", \"target\": %.2f},\n", target);
}

// json_lat writes a round-trip figure as a JSON member.
static void
json_lat(FILE *f, const char *key, const lat_result *L, int last)
{
	fprintf(f, "    \"%s\": {\"state\": \"%s\"", key,
	    L->state == 1        ? "ok"
	        : L->state == -1 ? "unavailable"
	        : L->state == -2 ? "failed"
	                         : "skipped");
	if (L->state == 1) {
		fprintf(f,
		    ", \"n\": %d, \"p50_us\": %.3f, \"p99_us\": %.3f, "
		    "\"min_us\": %.3f, \"mean_us\": %.3f, \"max_us\": %.3f",
		    L->n, L->p50, L->p99, L->min, L->mean, L->max);
	} else if (L->why[0]) {
		fprintf(f, ", \"why\": ");
		bench_json_str(f, L->why);
	}
	fprintf(f, "}%s\n", last ? "" : ",");
}

// tri is a check's JSON value: true, false or null (not done).
static const char *
tri(int v)
{
	return v < 0 ? "null" : v ? "true" : "false";
}

// e2e_write_json writes every figure and check to path; 0 or -1.
int
e2e_write_json(bench *B, const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "e2e: cannot write %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	fprintf(f,
	    "{\n  \"bench\": \"fftd e2e\",\n  \"units\": \"GB/s = 1e9 bytes of "
	    "input per second\",\n");
	fprintf(f, "  \"quick\": %s,\n  \"reps\": %d,\n  \"gpu\": ",
	    B->quick ? "true" : "false", B->reps);
	if (B->gpu) {
		bench_json_str(f, B->gpu_name);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"no_gpu_reason\": ");
	bench_json_str(f, B->gpu ? "" : B->no_gpu_why);
	fprintf(f, ",\n  \"daemon\": {\"url\": ");
	bench_json_str(f, B->url);
	fprintf(f, ", \"version\": ");
	bench_json_str(f, B->info.server_version);
	fprintf(f, ", \"backend\": ");
	bench_json_str(f, B->info.backend);
	fprintf(f, ", \"devices\": [");
	for (int i = 0; i < B->info.ndevices; i++) {
		fprintf(f, "%s", i ? ", " : "");
		bench_json_str(f, B->info.devices[i].name);
	}
	fprintf(f, "]},\n  \"cases\": [\n");
	int first = 1;
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		fprintf(f,
		    "%s    {\n      \"name\": \"%s\", \"label\": \"%s\",\n",
		    first ? "" : ",\n", R->c->name, R->c->label);
		first = 0;
		fprintf(f,
		    "      \"n\": %" PRId64 ", \"batch\": %" PRId64
		    ", \"input_bytes\": %zu, \"output_bytes\": %zu,\n",
		    R->c->n, R->batch, R->in_bytes, R->out_bytes);
		fprintf(f, "      \"algorithm\": ");
		bench_json_str(f, R->algorithm);
		fprintf(f,
		    ", \"stream_plan_batch\": %" PRId64
		    ", \"stream_submits\": %d, \"stream_depth\": %d, "
		    "\"inproc_streams\": %d,\n",
		    R->chunk_batch, R->nsub, STREAM_DEPTH, R->c16_streams);
		json_meas(f, "a_duplex", &R->a);
		json_meas(f, "a_h2d_only", &R->a_h2d);
		json_meas(f, "a_d2h_only_output_bytes", &R->a_d2h);
		json_meas(f, "b_cufft_1stream", &R->b);
		json_meas(f, "c_cufft_16streams", &R->c16);
		json_meas(f, "d_fftd_shm", &R->d);
		json_meas(f, "e_fftd_inline", &R->e);
		json_meas(f, "host_memcpy_1thread", &R->memcpy_);
		json_meas(f, "f_fftd_stream_inplace", &R->f);
		json_meas(f, "f_fftd_stream_sustained", &R->f_sustained);
		json_meas(f, "f_fftd_stream_copy", &R->f_copy);
		json_meas(f, "clients4_shm", &R->cl_shm);
		json_meas(f, "clients4_inline", &R->cl_inline);
		fprintf(f, "      \"ratios\": {\n");
		json_ratio(f, "d_over_a", &R->d, &R->a, 0.95);
		json_ratio(f, "f_over_a", &R->f, &R->a, 0.95);
		json_ratio(f, "d_over_c", &R->d, &R->c16, 1.0);
		json_ratio(f, "f_over_c", &R->f, &R->c16, 1.0);
		json_ratio(f, "e_over_memcpy", &R->e, &R->memcpy_, 0.5);
		json_ratio(f, "clients4_over_a", &R->cl_shm, &R->a, 0.95);
		fprintf(f, "        \"_\": null\n      },\n");
		fprintf(f,
		    "      \"checks\": {\"d_e_bit_identical\": %s, "
		    "\"f_d_bit_identical\": %s, \"f_same_plan_bit_identical\": "
		    "%s, \"outputs_finite\": %s, \"dft_rel_err\": ",
		    tri(R->de_same), tri(R->f_vs_d), tri(R->f_sameplan),
		    tri(R->outputs_finite));
		bench_json_num(f, R->ref_err);
		fprintf(f, ", \"dft_tolerance\": %.0e, \"dft_ok\": %s",
		    e2e_ref_tol(R->c),
		    isnan(R->ref_err)                    ? "null"
		        : R->ref_err < e2e_ref_tol(R->c) ? "true"
		                                         : "false");
		fprintf(f,
		    ", \"dft_bins_per_transform\": %d, \"rel_err_vs_b\": ",
		    R->ref_bins);
		bench_json_num(f, R->b_err);
		fprintf(f, "}\n    }");
	}
	fprintf(f,
	    "\n  ],\n  \"latency\": {\n    \"shape\": \"f32 C2C N=1024 batch "
	    "1\", \"warmup\": %d, \"rounds\": %d,\n",
	    LAT_WARMUP, LAT_ROUNDS);
	json_lat(f, "inline", &B->lat_inline, 0);
	json_lat(f, "shm", &B->lat_shm, 0);
	json_lat(f, "ping", &B->lat_ping, 1);
	fprintf(f, "  }\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}

// SPDX-License-Identifier: MIT
//
// pipelines.c — bench/pipelines (issue 16, item 5): templates per second of
// a matched-filter bank search (FINDCHIRP's filter, as fftd_mf_bank
// computes it) through four routes, on the same fresh random inputs in one
// run:
//   (a) fftd's bank: data, PSD and bank resident in a daemon's arrays,
//       fftd_mf_bank in slices (cuda backend on a GPU, fftw without);
//   (b) fftd's plain FFT path driven from the host: the client forms each
//       product, a batched C2C inverse plan transforms it through shared
//       buffers, the client finds the peak;
//   (c) in-process cuFFT with the bank resident and no fusion (GPU only);
//   (d) PyCBC's matched_filter on one CPU core (bench/pycbc_mf.py);
// plus the device copy rate, the bytes each template costs (a) and (c),
// and the targets as met/missed. Peaks of (b), (c) and (d) are
// checked against (a)'s: the same sample and rho within 1e-3.
//
//   pipelines [--spawn FFTD_BIN | --url URL] [--json FILE] [--sizes LIST]
//             [--templates K] [--slice S] [--inflight F] [--reps R]
//             [--plain M] [--sigmasq-given]
//             [--pycbc M] [--python PATH] [--pycbc-script PATH]
//             [--no-pycbc] [--seed S]
//
// Defaults: sizes 17,20 (N = 2^17, 2^20), K 1024 on a GPU and 64 without,
// the whole bank in one call (--slice S: calls of S templates; --inflight
// F: F calls at a time from F threads sharing the client, as a search
// keeping the daemon busy does), for (a) and (c) repetitions after a
// warm-up until 0.5 s are timed (at least R, default 5, at most 400;
// PL_MIN_SECONDS), for (b) R; the median is reported (--sigmasq-given:
// (a)'s calls take sigma^2 from an array its warm-up stored,
// FFTD_MF_SIGMASQ_USE; its note says so),
// (b) on min(256, K) templates, (d) on 32 with 3 repetitions. The daemon
// is $FFTD_BIN (or build/fftd) started on a fresh socket unless --url is
// given. PyCBC's Python is --python, else $FFTD_PYCBC_PYTHON, else the
// build folder's venv-gw; (d) is skipped with a note when none exists.
// Exit status 1 when a case failed or a check did not pass.

#include "pipelines.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "lib/connect.h"

#define NCASES 4
#define MAX_SIZES 4
static const char *const CASE_NAME[NCASES] = {
	"(a) fftd bank",
	"(b) fftd plain",
	"(c) cuFFT in-proc",
	"(d) PyCBC 1 core",
};
static const char *const CASE_KEY[NCASES] = { "a", "b", "c", "d" };
// The targets: (a)/(b), (a)/(c), (a)/(d), % of the copy rate.
static const double TARGET[4] = { 20.0, 1.5, 1000.0, 60.0 };

// g_pycbc_version is PyCBC's version as case (d) reported it.
static char g_pycbc_version[64];

// check is one comparison of a case's peaks with (a)'s.
typedef struct check {
	int64_t compared, mismatched, ties;
	double  max_rel;
	int     pass;
} check;

// size_run is everything measured for one N.
typedef struct size_run {
	pl_inputs in;
	pl_case   c[NCASES];
	check     chk[NCASES];
	double    ratio[3], pct_copy[NCASES];
	double    gen_s;
} size_run;

// opts are the command line's settings.
typedef struct opts {
	const char *url, *spawn, *json, *python, *script;
	int         sizes[MAX_SIZES], nsizes;
	int64_t     templates, slice, plain, pycbc;
	int         inflight;
	int         reps, no_pycbc, sigmasq_given;
	uint64_t    seed;
} opts;

// usage prints the command line and exits with status 2.
static void
usage(void)
{
	fprintf(stderr,
	    "usage: pipelines [--spawn FFTD_BIN | --url URL] [--json FILE]\n"
	    "                 [--sizes 17,20] [--templates K] [--slice S] "
	    "[--inflight F] [--reps R]\n"
	    "                 [--plain M] [--sigmasq-given] [--pycbc M] "
	    "[--python PATH] [--pycbc-script PATH]\n"
	    "                 [--no-pycbc] [--seed S]\n");
	exit(2);
}

// parse_sizes reads "17,20" (log2 N, 10..24) into o.
static void
parse_sizes(opts *o, const char *s)
{
	o->nsizes = 0;
	while (*s && o->nsizes < MAX_SIZES) {
		char *end;
		long  v = strtol(s, &end, 10);
		if (end == s || v < 10 || v > 24) {
			usage();
		}
		o->sizes[o->nsizes++] = (int) v;
		s                     = *end == ',' ? end + 1 : end;
	}
}

// exe_dir writes the folder of this program into buf ("" if unknown).
static void
exe_dir(char *buf, size_t len)
{
	ssize_t n          = readlink("/proc/self/exe", buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	char *slash        = strrchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
	}
}

// find_python picks PyCBC's Python and the script (see the header).
static void
find_python(opts *o, char *py, size_t plen, char *sc, size_t slen)
{
	char dir[400];
	exe_dir(dir, sizeof(dir));
	const char *env = getenv("FFTD_PYCBC_PYTHON");
	if (o->python == NULL && env != NULL && *env) {
		o->python = env;
	}
	if (o->python == NULL) {
		snprintf(py, plen, "%s/../venv-gw/bin/python", dir);
		if (access(py, X_OK) == 0) {
			o->python = py;
		}
	}
	if (o->script == NULL) {
		snprintf(sc, slen, "%s/../../bench/pycbc_mf.py", dir);
		o->script = access("bench/pycbc_mf.py", R_OK) == 0
		    ? "bench/pycbc_mf.py"
		    : sc;
	}
}

// compare checks case c's peaks against (a)'s over the templates both
// have: the same sample, or a tie (rho equal within 1e-5 relative, two
// samples as loud); rho within 1e-3 relative.
static void
compare(const pl_case *a, const pl_case *c, check *k)
{
	memset(k, 0, sizeof(*k));
	if (!a->ran || !c->ran || a->peaks == NULL || c->peaks == NULL) {
		return;
	}
	int64_t m = a->npeaks < c->npeaks ? a->npeaks : c->npeaks;
	for (int64_t j = 0; j < m; j++) {
		double ra = a->peaks[j].rho, rc = c->peaks[j].rho;
		double rel = fabs(ra - rc) / (fabs(ra) > 0 ? fabs(ra) : 1.0);
		if (!(rel <= k->max_rel)) { // NaN too
			k->max_rel = isnan(rel) ? INFINITY : rel;
		}
		if (a->peaks[j].t != c->peaks[j].t) {
			if (rel < 1e-5) {
				k->ties++;
			} else {
				k->mismatched++;
			}
		}
	}
	k->compared = m;
	k->pass     = m > 0 && k->mismatched == 0 && k->max_rel <= 1e-3;
}

// print_case prints one case's line as it finishes.
static void
print_case(const size_run *r, int i)
{
	const pl_case *c = &r->c[i];
	if (c->ran) {
		printf("  %-18s %10.1f templates/s  (%lld templates, median of "
		       "%d: %.4f s, min %.4f, max %.4f)  %s\n",
		    CASE_NAME[i], c->tps, (long long) c->templates, c->reps,
		    c->sec_median, c->sec_min, c->sec_max, c->note);
	} else {
		printf("  %-18s %s: %s\n", CASE_NAME[i],
		    c->failed ? "FAILED" : "skipped", c->note);
	}
	fflush(stdout);
}

// run_size runs every case for N = 2^log2n into r; returns 1 on a failure.
static int
run_size(const opts *o, fftd_client *cl, int gpu, double copy_bps, int log2n,
    uint64_t seed, size_run *r)
{
	int64_t n = (int64_t) 1 << log2n;
	double  t = pl_now();
	if (pl_inputs_make(&r->in, n, o->templates, seed) != 0) {
		fprintf(stderr, "pipelines: out of memory for N=%lld\n",
		    (long long) n);
		return 1;
	}
	r->gen_s = pl_now() - t;
	printf("\nN=%lld: %lld templates, bins [%lld, %lld), samples [%lld, "
	       "%lld), threshold %g, cluster %lld, injection in template "
	       "%lld (inputs made in %.1f s)\n",
	    (long long) n, (long long) r->in.count, (long long) r->in.kmin,
	    (long long) r->in.kmax, (long long) r->in.t_begin,
	    (long long) r->in.t_end, r->in.threshold, (long long) r->in.cluster,
	    (long long) r->in.inject, r->gen_s);
	pl_fftd_bank(cl, &r->in, o->slice, o->inflight, o->reps,
	    o->sigmasq_given != 0, &r->c[0]);
	print_case(r, 0);
	pl_fftd_plain(cl, &r->in, o->plain, 16, o->reps, &r->c[1]);
	print_case(r, 1);
#ifdef FFTD_WITH_CUDA
	if (gpu) {
		pl_cuda_bank(&r->in, 64, o->reps, &r->c[2]);
	} else
#endif
	{
		snprintf(r->c[2].note, sizeof(r->c[2].note), "%s",
		    gpu ? "" : "no GPU here");
	}
	print_case(r, 2);
	if (o->python != NULL && !o->no_pycbc) {
		pl_pycbc(o->python, o->script, &r->in, o->pycbc, &r->c[3],
		    g_pycbc_version, sizeof(g_pycbc_version));
	} else {
		snprintf(r->c[3].note, sizeof(r->c[3].note), "%s",
		    o->no_pycbc ? "--no-pycbc"
		                : "no PyCBC Python (--python or "
		                  "$FFTD_PYCBC_PYTHON)");
	}
	print_case(r, 3);
	int bad = 0;
	for (int i = 0; i < NCASES; i++) {
		bad |= r->c[i].failed;
		r->pct_copy[i]
		    = r->c[i].ran && r->c[i].bytes > 0 && copy_bps > 0
		    ? 100.0 * r->c[i].bytes * r->c[i].tps / copy_bps
		    : NAN;
		if (i > 0) {
			compare(&r->c[0], &r->c[i], &r->chk[i]);
			r->ratio[i - 1] = r->c[0].ran && r->c[i].ran
			    ? r->c[0].tps / r->c[i].tps
			    : NAN;
			if (r->chk[i].compared > 0) {
				const pl_peak *pa
				    = &r->c[0].peaks[r->in.inject];
				const pl_peak *pc
				    = &r->c[i].peaks[r->in.inject];
				printf(
				    "  check %s against (a): %lld templates, "
				    "%lld other samples, %lld ties, max rel "
				    "rho diff %.2e: %s (injected template: "
				    "rho %.4f at %lld / %.4f at %lld)\n",
				    CASE_KEY[i], (long long) r->chk[i].compared,
				    (long long) r->chk[i].mismatched,
				    (long long) r->chk[i].ties,
				    r->chk[i].max_rel,
				    r->chk[i].pass ? "PASS" : "FAIL", pa->rho,
				    (long long) pa->t, pc->rho,
				    (long long) pc->t);
				bad |= !r->chk[i].pass;
			}
		}
	}
	return bad;
}

// fmt_num writes v with fmt (one double conversion), or "-" when v is
// not finite.
static void
fmt_num(char *buf, size_t len, const char *fmt, double v)
{
	if (isfinite(v)) {
		snprintf(buf, len, fmt, v);
	} else {
		snprintf(buf, len, "-");
	}
}

// print_table prints the summary table and the targets.
static void
print_table(const opts *o, size_run *runs, double copy_bps)
{
	printf("\n=== fftd pipelines: matched-filter bank, f32\n");
	if (copy_bps > 0) {
		printf("device copy rate: %.1f GB/s (read + written)\n",
		    copy_bps / 1e9);
	} else {
		printf("device copy rate: n/a (no GPU)\n");
	}
	printf("%-8s %-18s %12s %12s %9s %9s %9s %14s %8s\n", "N", "case",
	    "templates/s", "us/template", "(a)/(b)", "(a)/(c)", "(a)/(d)",
	    "bytes/tmpl", "% copy");
	for (int s = 0; s < o->nsizes; s++) {
		size_run *r = &runs[s];
		for (int i = 0; i < NCASES; i++) {
			const pl_case *c = &r->c[i];
			char           rat[3][16], by[20], pc[12];
			for (int j = 0; j < 3; j++) {
				fmt_num(rat[j], sizeof(rat[j]), "%.2fx",
				    i == 0 ? r->ratio[j] : NAN);
			}
			fmt_num(by, sizeof(by), "%.0f",
			    c->bytes > 0 ? c->bytes : NAN);
			fmt_num(pc, sizeof(pc), "%.1f", r->pct_copy[i]);
			if (!c->ran) {
				printf("%-8lld %-18s %12s %12s %9s %9s %9s "
				       "%14s %8s\n",
				    (long long) r->in.n, CASE_NAME[i],
				    c->failed ? "FAILED" : "skipped", "-", "-",
				    "-", "-", "-", "-");
				continue;
			}
			printf(
			    "%-8lld %-18s %12.1f %12.3f %9s %9s %9s %14s %8s\n",
			    (long long) r->in.n, CASE_NAME[i], c->tps,
			    1e6 / c->tps, rat[0], rat[1], rat[2], by, pc);
		}
		const char *what[4]
		    = { "(a)/(b)", "(a)/(c)", "(a)/(d)", "(a) % of copy" };
		double got[4]
		    = { r->ratio[0], r->ratio[1], r->ratio[2], r->pct_copy[0] };
		printf("targets N=%lld:", (long long) r->in.n);
		for (int j = 0; j < 4; j++) {
			if (isfinite(got[j])) {
				printf("  %s %.2f >= %g %s", what[j], got[j],
				    TARGET[j],
				    got[j] >= TARGET[j] ? "met" : "MISSED");
			} else {
				printf("  %s n/a", what[j]);
			}
		}
		printf("\n");
	}
}

// json_case writes one case's object.
static void
json_case(FILE *f, const size_run *r, int i)
{
	const pl_case *c = &r->c[i];
	fprintf(f, "\"%s\": {\"name\": ", CASE_KEY[i]);
	bench_json_str(f, CASE_NAME[i]);
	fprintf(
	    f, ", \"ran\": %d, \"failed\": %d, \"note\": ", c->ran, c->failed);
	bench_json_str(f, c->note);
	bench_json_field(f, "templates", (double) c->templates);
	bench_json_field(f, "reps", c->reps);
	bench_json_field(f, "sec_median", c->ran ? c->sec_median : NAN);
	bench_json_field(f, "sec_min", c->ran ? c->sec_min : NAN);
	bench_json_field(f, "sec_max", c->ran ? c->sec_max : NAN);
	bench_json_field(f, "templates_per_s", c->ran ? c->tps : NAN);
	bench_json_field(f, "us_per_template", c->ran ? 1e6 / c->tps : NAN);
	bench_json_field(
	    f, "bytes_per_template", c->bytes > 0 ? c->bytes : NAN);
	bench_json_field(f, "pct_copy_rate", r->pct_copy[i]);
	if (i == 0) {
		bench_json_field(f, "triggers", (double) c->triggers);
	} else {
		const check *k = &r->chk[i];
		fprintf(f,
		    ", \"check\": {\"compared\": %lld, \"other_sample\": "
		    "%lld, \"ties\": %lld, \"pass\": %d",
		    (long long) k->compared, (long long) k->mismatched,
		    (long long) k->ties, k->pass);
		bench_json_field(
		    f, "max_rel_rho", k->compared ? k->max_rel : NAN);
		fprintf(f, "}");
	}
	fprintf(f, "}");
}

// write_json writes the whole run to path; 0 or -1.
static int
write_json(const char *path, const opts *o, size_run *runs, const char *device,
    const char *backend, const char *server, double copy_bps,
    const char *pycbc_version)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		return -1;
	}
	int rt = 0, cf = 0;
#ifdef FFTD_WITH_CUDA
	pl_cuda_versions(&rt, &cf);
#endif
	fprintf(f,
	    "{\"bench\": \"pipelines\", \"seed\": %" PRIu64 ", \"device\": ",
	    o->seed);
	bench_json_str(f, device);
	fprintf(f, ", \"backend\": ");
	bench_json_str(f, backend);
	fprintf(f, ", \"versions\": {\"libfftd\": ");
	bench_json_str(f, fftd_version());
	fprintf(f, ", \"fftd\": ");
	bench_json_str(f, server);
	fprintf(
	    f, ", \"cuda_runtime\": %d, \"cufft\": %d, \"pycbc\": ", rt, cf);
	bench_json_str(f, pycbc_version);
	fprintf(f, "}");
	bench_json_field(f, "copy_rate_Bps", copy_bps > 0 ? copy_bps : NAN);
	fprintf(f,
	    ", \"targets\": {\"a_over_b\": %g, \"a_over_c\": %g, "
	    "\"a_over_d\": %g, \"pct_copy\": %g}, \"sizes\": [",
	    TARGET[0], TARGET[1], TARGET[2], TARGET[3]);
	for (int s = 0; s < o->nsizes; s++) {
		size_run *r = &runs[s];
		fprintf(f,
		    "%s\n {\"n\": %lld, \"templates\": %lld, \"kmin\": "
		    "%lld, \"kmax\": %lld, \"t_begin\": %lld, \"t_end\": "
		    "%lld, \"cluster\": %lld, \"inject\": %lld",
		    s ? "," : "", (long long) r->in.n, (long long) r->in.count,
		    (long long) r->in.kmin, (long long) r->in.kmax,
		    (long long) r->in.t_begin, (long long) r->in.t_end,
		    (long long) r->in.cluster, (long long) r->in.inject);
		bench_json_field(f, "delta_f", r->in.delta_f);
		bench_json_field(f, "threshold", r->in.threshold);
		bench_json_field(f, "inputs_s", r->gen_s);
		bench_json_field(f, "a_over_b", r->ratio[0]);
		bench_json_field(f, "a_over_c", r->ratio[1]);
		bench_json_field(f, "a_over_d", r->ratio[2]);
		fprintf(f, ", \"cases\": {");
		for (int i = 0; i < NCASES; i++) {
			fprintf(f, "%s", i ? ", " : "");
			json_case(f, r, i);
		}
		fprintf(f, "}}");
	}
	fprintf(f, "\n]}\n");
	return fclose(f) == 0 ? 0 : -1;
}

// parse_args fills o from the command line.
static void
parse_args(opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--no-pycbc") == 0) {
			o->no_pycbc = 1;
			continue;
		}
		if (strcmp(a, "--sigmasq-given") == 0) {
			o->sigmasq_given = 1;
			continue;
		}
		if (v == NULL) {
			usage();
		}
		i++;
		if (strcmp(a, "--url") == 0) {
			o->url = v;
		} else if (strcmp(a, "--spawn") == 0) {
			o->spawn = v;
		} else if (strcmp(a, "--json") == 0) {
			o->json = v;
		} else if (strcmp(a, "--sizes") == 0) {
			parse_sizes(o, v);
		} else if (strcmp(a, "--templates") == 0) {
			o->templates = atoll(v);
		} else if (strcmp(a, "--slice") == 0) {
			o->slice = atoll(v);
		} else if (strcmp(a, "--inflight") == 0) {
			o->inflight = atoi(v);
		} else if (strcmp(a, "--reps") == 0) {
			o->reps = atoi(v);
		} else if (strcmp(a, "--plain") == 0) {
			o->plain = atoll(v);
		} else if (strcmp(a, "--pycbc") == 0) {
			o->pycbc = atoll(v);
		} else if (strcmp(a, "--python") == 0) {
			o->python = v;
		} else if (strcmp(a, "--pycbc-script") == 0) {
			o->script = v;
		} else if (strcmp(a, "--seed") == 0) {
			o->seed = strtoull(v, NULL, 0);
		} else {
			usage();
		}
	}
	if (o->url != NULL && o->spawn != NULL) {
		usage();
	}
}

// main: options, the daemon, the copy rate, each size, table, JSON.
int
main(int argc, char **argv)
{
	static opts o = { .sizes = { 17, 20 }, .nsizes = 2, .reps = 5 };
	parse_args(&o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	char device[128] = "cpu";
	int  gpu         = 0;
#ifdef FFTD_WITH_CUDA
	gpu = pl_cuda_device(device, sizeof(device));
#else
	snprintf(device, sizeof(device), "built without CUDA");
#endif
	if (o.seed == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		o.seed = (uint64_t) ts.tv_sec * 1000000000ull
		    + (uint64_t) ts.tv_nsec;
	}
	o.templates = o.templates > 0 ? o.templates : gpu ? 1024 : 64;
	o.slice     = o.slice > 0 ? o.slice : o.templates;
	o.inflight  = o.inflight > 0 ? o.inflight : 1;
	o.reps      = o.reps > 0 ? o.reps : 5;
	o.plain = o.plain > 0 ? o.plain : o.templates < 256 ? o.templates : 256;
	o.pycbc = o.pycbc > 0 ? o.pycbc : 32;
	char py[512], sc[512];
	find_python(&o, py, sizeof(py), sc, sizeof(sc));
	printf("pipelines: seed %" PRIu64 ", %s%s; python %s\n", o.seed, device,
	    gpu ? "" : ": no GPU, cases (c) and the copy rate skipped",
	    o.python != NULL ? o.python : "(none: case d skipped)");

	double copy_bps = 0;
#ifdef FFTD_WITH_CUDA
	if (gpu) {
		char err[128];
		if (pl_cuda_copy_rate(
		        (size_t) 1 << 30, 20, &copy_bps, err, sizeof(err))
		    != 0) {
			fprintf(stderr, "pipelines: copy rate: %s\n", err);
			copy_bps = 0;
		}
	}
#endif
	fftd_test_daemon daemon;
	fftd_client     *cl = NULL;
	if (fftd_bench_connect(
	        "pipelines", o.url, o.spawn, 600000, &daemon, &cl)
	    != 0) {
		return 1;
	}
	fftd_info info;
	fftd_client_info(cl, &info);
	printf("daemon %s, backend %s, device %s\n", info.server_version,
	    info.backend, info.ndevices > 0 ? info.devices[0].name : "?");

	static size_run runs[MAX_SIZES];
	int             bad = 0;
	for (int s = 0; s < o.nsizes; s++) {
		bad |= run_size(&o, cl, gpu, copy_bps, o.sizes[s],
		    o.seed + (uint64_t) s * 0x9e3779b97f4a7c15ull, &runs[s]);
	}
	print_table(&o, runs, copy_bps);
	fftd_client_close(cl);
	if (daemon.pid && fftd_test_daemon_stop(&daemon) != 0) {
		bad = 1;
	}
	if (o.json != NULL
	    && write_json(o.json, &o, runs,
	           gpu                     ? device
	               : info.ndevices > 0 ? info.devices[0].name
	                                   : "cpu",
	           info.backend, info.server_version, copy_bps, g_pycbc_version)
	        != 0) {
		fprintf(stderr, "pipelines: cannot write %s\n", o.json);
		bad = 1;
	}
	for (int s = 0; s < o.nsizes; s++) {
		for (int i = 0; i < NCASES; i++) {
			free(runs[s].c[i].peaks);
		}
		pl_inputs_free(&runs[s].in);
	}
	printf("pipelines: %s\n", bad ? "FAILED (see above)" : "ok");
	return bad;
}

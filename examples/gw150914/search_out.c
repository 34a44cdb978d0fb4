// SPDX-License-Identifier: MIT
//
// search_out.c — what the search leaves behind: the results file (JSON:
// the settings, and per detector the loudest template, every template's
// peak as columns, and the clustered triggers) and, per detector, the
// loudest template's rho(t) as a text file that gnuplot draws into a PNG
// when it is installed. Nothing here talks to the daemon. A plot is an
// extra: its failures are reported, never fatal.

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "search.h"

// put_num writes x as a JSON number (17 significant digits: a double
// reads back exactly), or null when it is not finite.
static void
put_num(FILE *f, double x)
{
	if (isfinite(x)) {
		fprintf(f, "%.17g", x);
	} else {
		fputs("null", f);
	}
}

// put_str writes s as a JSON string (quotes, backslashes and control
// characters escaped).
static void
put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char) *s;
		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

// series_path returns dir/search_<det>_<ext> in a new string, or NULL.
static char *
series_path(const char *dir, const char *det, const char *ext)
{
	char name[64];
	snprintf(name, sizeof(name), "search_%s_rho.%s", det, ext);
	return gw_join(dir, name);
}

// put_column writes "name": [v_0, ..., v_{n-1}] for one field of the
// peaks, picked by which (0 rho, 1 t, 2 sigma, 3 z_re, 4 z_im).
static void
put_column(
    FILE *f, const char *name, const fftd_mf_peak *p, int64_t n, int which)
{
	fprintf(f, "      \"%s\": [", name);
	for (int64_t j = 0; j < n; j++) {
		if (j > 0) {
			fputs(j % 8 == 0 ? ",\n        " : ", ", f);
		}
		switch (which) {
		case 0:
			put_num(f, p[j].rho);
			break;
		case 1:
			fprintf(f, "%lld", (long long) p[j].t);
			break;
		case 2:
			put_num(f, p[j].sigma);
			break;
		case 3:
			put_num(f, p[j].z_re);
			break;
		default:
			put_num(f, p[j].z_im);
			break;
		}
	}
	fputs("]", f);
}

// put_detector writes one detector's object.
static void
put_detector(FILE *f, const gs_options *opt, const gs_bank *bank,
    const gs_input *in, const gs_result *res, const char *input)
{
	const fftd_mf_peak *lp = &res->peaks[res->loudest];
	int64_t             j  = res->loudest;
	fputs("    {\"detector\": ", f);
	put_str(f, in->name);
	fputs(", \"input\": ", f);
	put_str(f, input);
	fprintf(f,
	    ",\n     \"n\": %lld, \"sample_rate\": %.17g, \"delta_f\": %.17g, "
	    "\"gps_start\": %.17g,\n     \"kmin\": %lld, \"kmax\": %lld, "
	    "\"t_begin\": %lld, \"t_end\": %lld,\n",
	    (long long) in->n, in->sample_rate, in->delta_f, in->gps_start,
	    (long long) in->kmin, (long long) in->kmax, (long long) in->t_begin,
	    (long long) in->t_end);
	fprintf(f,
	    "     \"wall_s\": %.6f, \"templates_per_s\": %.3f, \"requests\": "
	    "%d, \"triggers_found\": %zu, \"triggers_kept\": %zu,\n",
	    res->wall_s, res->rate, res->requests, res->ntotal, res->ntriggers);
	fprintf(f,
	    "     \"loudest\": {\"template\": %lld, \"mass1\": %.17g, "
	    "\"mass2\": %.17g, \"spin1z\": %.17g, \"spin2z\": %.17g,\n"
	    "                 \"rho\": ",
	    (long long) j, bank->mass1[j], bank->mass2[j], bank->spin1z[j],
	    bank->spin2z[j]);
	put_num(f, lp->rho);
	fprintf(f,
	    ", \"t\": %lld, \"gps\": %.17g, \"sigma\": ", (long long) lp->t,
	    in->gps_start + (double) lp->t / in->sample_rate);
	put_num(f, lp->sigma);
	fputs("},\n     \"series_file\": ", f);
	char *sp = series_path(opt->plot_dir, in->name, "dat");
	put_str(f, sp != NULL ? sp : "");
	free(sp);
	fputs(",\n     \"peaks\": {\n", f);
	static const char *const cols[]
	    = { "rho", "t", "sigma", "z_re", "z_im" };
	for (int c = 0; c < 5; c++) {
		put_column(f, cols[c], res->peaks, bank->count, c);
		fputs(c < 4 ? ",\n" : "},\n", f);
	}
	fputs("     \"triggers\": [", f);
	for (size_t i = 0; i < res->ntriggers; i++) {
		const fftd_mf_trigger *t = &res->triggers[i];
		fprintf(f, "%s[%lld, %lld, ", i ? ",\n       " : "",
		    (long long) t->template_index, (long long) t->t);
		put_num(f, t->rho);
		fputs(", ", f);
		put_num(f, t->z_re);
		fputs(", ", f);
		put_num(f, t->z_im);
		fputs("]", f);
	}
	fputs("]}", f);
}

// gs_write_json writes the results to path (through a temporary file
// renamed at the end, so a reader never sees half a file).
int
gs_write_json(const char *path, const gs_options *opt, const gs_bank *bank,
    const gs_input *in, const gs_result *res, int ndet, const char *server)
{
	size_t len = strlen(path) + 8;
	char  *tmp = malloc(len);
	if (tmp == NULL) {
		return -1;
	}
	snprintf(tmp, len, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f == NULL) {
		fprintf(stderr, "gw150914-search: cannot write %s: %s\n", tmp,
		    strerror(errno));
		free(tmp);
		return -1;
	}
	bool f32 = opt->precision == FFTD_F32;
	fputs("{\"program\": \"gw150914-search\", \"server\": ", f);
	put_str(f, server);
	fputs(", \"bank\": ", f);
	put_str(f, opt->bank);
	fputs(", \"approximant\": ", f);
	put_str(f, bank->approximant);
	fprintf(f,
	    ",\n \"templates\": %lld, \"precision\": \"%s\", \"scale\": "
	    "%.17g, \"slice\": %lld, \"threshold\": %.17g, \"cluster\": "
	    "%lld,\n",
	    (long long) bank->count, f32 ? "f32" : "f64",
	    f32 ? GS_DYN_RANGE_FAC : 1.0, (long long) opt->slice,
	    opt->threshold, (long long) opt->cluster);
	fputs(" \"triggers_columns\": [\"template\", \"t\", \"rho\", \"z_re\", "
	      "\"z_im\"],\n \"detectors\": [\n",
	    f);
	for (int d = 0; d < ndet; d++) {
		put_detector(f, opt, bank, &in[d], &res[d], opt->inputs[d]);
		fputs(d + 1 < ndet ? ",\n" : "\n", f);
	}
	fputs(" ]}\n", f);
	int rv = ferror(f) ? -1 : 0;
	if (fclose(f) != 0 || rv != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "gw150914-search: cannot write %s: %s\n", path,
		    strerror(errno));
		remove(tmp);
		rv = -1;
	}
	free(tmp);
	return rv;
}

// plot_series draws the .dat file dat into png with gnuplot: rho(t) of
// the loudest template over the whole search window.
static void
plot_series(const gs_bank *bank, const gs_input *in, const gs_result *res,
    const char *dat, const char *png)
{
	const fftd_mf_peak *p = &res->peaks[res->loudest];
	int64_t             j = res->loudest;
	// A gnuplot that dies early must not kill us with SIGPIPE.
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	FILE *g          = popen("gnuplot", "w");
	if (g == NULL) {
		fprintf(stderr, "gw150914-search: cannot run gnuplot: %s\n",
		    strerror(errno));
		signal(SIGPIPE, old);
		return;
	}
	fprintf(g,
	    "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	    "  set terminal pngcairo size 1000,450\n"
	    "} else {\n"
	    "  set terminal png size 1000,450\n"
	    "}\n"
	    "set output '%s'\n"
	    "set title \"GW150914 %s, template-bank search: rho(t) of the "
	    "loudest of %lld templates\\n(m1 %.1f, m2 %.1f Msun, chi1z %+.2f, "
	    "chi2z %+.2f): peak %.2f at GPS %.4f\"\n"
	    "set xlabel 'time - GPS %.2f (s)'\n"
	    "set ylabel 'rho'\n"
	    "set grid\n"
	    "plot '%s' using 1:2 with lines lw 1 title '%s'\n",
	    png, in->name, (long long) bank->count, bank->mass1[j],
	    bank->mass2[j], bank->spin1z[j], bank->spin2z[j], p->rho,
	    in->gps_start + (double) p->t / in->sample_rate, EVENT_GPS, dat,
	    in->name);
	int st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr,
		    "gw150914-search: gnuplot failed; no plot for %s\n",
		    in->name);
	} else {
		printf("%s: plot %s\n", in->name, png);
	}
	signal(SIGPIPE, old);
}

// gs_write_series writes the loudest template's rho(t) of one detector
// and plots it. Paths with a quote are not handed to gnuplot (its string
// syntax); the .dat file is still written.
void
gs_write_series(const char *dir, bool plot, const gs_bank *bank,
    const gs_input *in, const gs_result *res)
{
	char *dat = series_path(dir, in->name, "dat");
	char *png = series_path(dir, in->name, "png");
	FILE *f   = dat != NULL ? fopen(dat, "w") : NULL;
	if (f == NULL) {
		fprintf(stderr,
		    "gw150914-search: cannot write the series of %s\n",
		    in->name);
		goto out;
	}
	int64_t j = res->loudest;
	fprintf(f,
	    "# GW150914 %s: rho(t) of template #%lld (m1 %.4f, m2 %.4f, "
	    "chi1z %.4f, chi2z %.4f)\n# samples [%lld, %lld) at %g Hz from "
	    "GPS %.3f\n# time - GPS %.2f (s)   rho\n",
	    in->name, (long long) j, bank->mass1[j], bank->mass2[j],
	    bank->spin1z[j], bank->spin2z[j], (long long) in->t_begin,
	    (long long) in->t_end, in->sample_rate, in->gps_start, EVENT_GPS);
	for (int64_t i = 0; i < in->t_end - in->t_begin; i++) {
		double t = in->gps_start
		    + (double) (in->t_begin + i) / in->sample_rate - EVENT_GPS;
		fprintf(f, "%.6f %.7g\n", t, res->series[i]);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "gw150914-search: cannot write %s\n", dat);
		goto out;
	}
	if (plot && png != NULL && strchr(dat, '\'') == NULL
	    && strchr(png, '\'') == NULL) {
		plot_series(bank, in, res, dat, png);
	}
out:
	free(dat);
	free(png);
}

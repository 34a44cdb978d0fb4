// SPDX-License-Identifier: MIT
//
// plot.c — the example's plots: SNR against time around the event, one PNG
// per detector, drawn by gnuplot fed through a pipe (the data inline), and
// the checks gw150914.c makes before it asks for them (gnuplot in $PATH,
// the plot directory). A plot is an extra: nothing here fails the run.

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gw150914.h"

// gw_in_path says whether prog is an executable in a directory of $PATH.
bool
gw_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (path == NULL) {
		return false;
	}
	char buf[4096];
	for (const char *p = path; *p != '\0';) {
		const char *e   = strchr(p, ':');
		size_t      len = e != NULL ? (size_t) (e - p) : strlen(p);
		if (len > 0 && len + strlen(prog) + 2 <= sizeof(buf)) {
			snprintf(
			    buf, sizeof(buf), "%.*s/%s", (int) len, p, prog);
			if (access(buf, X_OK) == 0) {
				return true;
			}
		}
		p += len + (e != NULL);
	}
	return false;
}

// gw_make_dirs is mkdir -p.
int
gw_make_dirs(const char *dir)
{
	char *p = strdup(dir);
	if (p == NULL) {
		return -1;
	}
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s     = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				free(p);
				return -1;
			}
			*s = c;
			if (c == '\0') {
				break;
			}
		}
	}
	free(p);
	return 0;
}

// put_quoted writes s as a gnuplot single-quoted string ('' is a quote).
static void
put_quoted(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s != '\0'; s++) {
		if (*s == '\'') {
			fputc('\'', g);
		}
		fputc(*s, g);
	}
	fputc('\'', g);
}

// gw_plot_snr draws SNR against time around the event with gnuplot, the data
// inline. A plot is an extra: failures are reported, never fatal.
void
gw_plot_snr(const options *opt, const detector *det, const result *res,
    size_t n, double fs, double gps0)
{
	char name[64];
	snprintf(name, sizeof(name), "gw150914_%s_snr.png", det->name);
	char *out = gw_join(opt->plot_dir, name);
	if (out == NULL) {
		return;
	}
	// A gnuplot that dies early must not kill us with SIGPIPE.
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	FILE *g          = popen("gnuplot", "w");
	if (g == NULL) {
		fprintf(stderr, "gw150914: cannot run gnuplot: %s\n",
		    strerror(errno));
		goto out;
	}
	fprintf(g,
	    "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
	    "  set terminal pngcairo size 1000,450\n"
	    "} else {\n"
	    "  set terminal png size 1000,450\n"
	    "}\n"
	    "set output ");
	put_quoted(g, out);
	fprintf(g,
	    "\nset title 'GW150914 %s: matched-filter SNR (peak %.2f at GPS "
	    "%.4f)'\n"
	    "set xlabel 'time - GPS %.2f (s)'\n"
	    "set ylabel 'SNR'\n"
	    "set grid\n"
	    "plot '-' using 1:2 with lines lw 1.5 title '%s'\n",
	    det->name, res->snr, res->gps, EVENT_GPS, det->name);
	for (size_t i = 0; i < n; i++) {
		double t = gps0 + (double) i / fs - EVENT_GPS;
		if (fabs(t) <= PLOT_HALF_WIDTH) {
			fprintf(g, "%.6f %.6g\n", t, res->trace[i]);
		}
	}
	fprintf(g, "e\n");
	int st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "gw150914: gnuplot failed; no plot for %s\n",
		    det->name);
	} else {
		printf("%s: plot %s\n", det->name, out);
	}
out:
	signal(SIGPIPE, old);
	free(out);
}

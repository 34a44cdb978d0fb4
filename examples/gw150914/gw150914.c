// SPDX-License-Identifier: MIT
//
// gw150914.c — the matched filter of the GWOSC GW150914 tutorial
// (LOSC_Event_tutorial), run on the real LIGO strain of H1 and L1 with
// every FFT served by the fftd daemon through libfftd. Each transform is
// also computed in-process with FFTW in double on the same input, and the
// largest relative difference is reported, so the run is both a science
// result (SNR ≈ 18 in H1, ≈ 13 in L1 at GPS 1126259462.44) and an accuracy
// check of the service. See README.md beside this file for the formulas.
//
// This file holds the options, the run from end to end (main) and the
// report with its --check verdict. The jobs it calls are in their own
// files behind gw150914.h: data.c reads the GWOSC files, filter.c holds
// the windows, the PSD and the matched filter, transform.c the transforms
// through libfftd (each checked against FFTW), plot.c the plots.

#include <complex.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "gw150914.h"

// Exit codes, as --help states them.
enum {
	EXIT_OK    = 0,
	EXIT_ERROR = 1, // daemon, transform or file error
	EXIT_USAGE = 2, // bad arguments or missing data files
	EXIT_CHECK = 3, // --check: a figure is out of its expected range
};

// detectors are the two LIGO sites, in the order they are reported.
static const detector detectors[] = {
	{ "H1", "H-H1_LOSC_4_V2-1126259446-32.hdf5", 15, 21 },
	{ "L1", "L-L1_LOSC_4_V2-1126259446-32.hdf5", 10, 16 },
};
#define NDET (sizeof(detectors) / sizeof(detectors[0]))

// usage writes gw150914 --help to out.
static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: gw150914 [options]\n"
	    "\n"
	    "Matched-filter search for GW150914 in the LIGO H1 and L1 open "
	    "data\n"
	    "(the GWOSC tutorial's method), every FFT computed by the fftd "
	    "daemon\n"
	    "and checked against FFTW (double, in-process).\n"
	    "\n"
	    "options:\n"
	    "  --url URL         daemon address (default: $FFTD_URL, else the\n"
	    "                    standard socket)\n"
	    "  --timeout MS      per-call timeout in ms (default: 10 s)\n"
	    "  --data DIR        directory of the GWOSC files\n"
	    "                    (default: ../shared/data/gw150914)\n"
	    "  --plot-dir DIR    where gw150914_H1_snr.png and "
	    "gw150914_L1_snr.png\n"
	    "                    go (default: .; created if missing)\n"
	    "  --no-plot         do not run gnuplot\n"
	    "  --precision P     f64 (default) or f32: the daemon's precision\n"
	    "  --algorithm NAME  ask the daemon for one implementation (fftw,\n"
	    "                    cufft, ...)\n"
	    "  --check           exit 3 unless: the daemon's results differ "
	    "from\n"
	    "                    FFTW's by at most 1e-9 (f64) or 1e-5 (f32),\n"
	    "                    relative L2, in every transform; each peak "
	    "is\n"
	    "                    within 10 ms of GPS 1126259462.44; the peak "
	    "SNR\n"
	    "                    is in [15, 21] for H1 and in [10, 16] for L1\n"
	    "  -h, --help        this text\n"
	    "\n"
	    "exit status: 0 ok, 1 daemon, transform or file error, 2 usage "
	    "error\n"
	    "or missing data files, 3 check failed\n");
}

// parse_options fills opt from the command line; --help prints usage and
// exits. Returns EXIT_OK or EXIT_USAGE.
static int
parse_options(int argc, char **argv, options *opt)
{
	enum {
		O_URL = 256,
		O_TIMEOUT,
		O_DATA,
		O_PLOTDIR,
		O_NOPLOT,
		O_CHECK,
		O_PRECISION,
		O_ALGORITHM
	};
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, O_URL },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "data", required_argument, NULL, O_DATA },
		{ "plot-dir", required_argument, NULL, O_PLOTDIR },
		{ "no-plot", no_argument, NULL, O_NOPLOT },
		{ "check", no_argument, NULL, O_CHECK },
		{ "precision", required_argument, NULL, O_PRECISION },
		{ "algorithm", required_argument, NULL, O_ALGORITHM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int   c;
	char *end;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_URL:
			opt->url = optarg;
			break;
		case O_TIMEOUT: {
			errno  = 0;
			long v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg
			    || v < -1 || v > INT32_MAX) {
				fprintf(stderr,
				    "gw150914: --timeout: '%s' is not a "
				    "number of ms (-1: none)\n",
				    optarg);
				return EXIT_USAGE;
			}
			opt->timeout_ms = (int) v;
			break;
		}
		case O_DATA:
			opt->data_dir = optarg;
			break;
		case O_PLOTDIR:
			opt->plot_dir = optarg;
			break;
		case O_NOPLOT:
			opt->plot = false;
			break;
		case O_CHECK:
			opt->check = true;
			break;
		case O_PRECISION:
			if (strcmp(optarg, "f64") == 0) {
				opt->precision = FFTD_F64;
			} else if (strcmp(optarg, "f32") == 0) {
				opt->precision = FFTD_F32;
			} else {
				fprintf(stderr,
				    "gw150914: --precision: f64 or f32 "
				    "(strain of 1e-21 underflows f16)\n");
				return EXIT_USAGE;
			}
			break;
		case O_ALGORITHM:
			opt->algorithm = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "gw150914: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

// main reads the data, connects, transforms the template, runs the
// matched filter per detector, reports (and with --check judges) the
// peaks and the daemon-vs-FFTW difference, and plots.
int
main(int argc, char **argv)
{
	options opt = {
		.url        = NULL,
		.data_dir   = "../shared/data/gw150914",
		.plot_dir   = ".",
		.algorithm  = NULL,
		.plot       = true,
		.check      = false,
		.precision  = FFTD_F64,
		.timeout_ms = 0,
	};
	int ec = parse_options(argc, argv, &opt);
	if (ec != EXIT_OK) {
		return ec;
	}
	if (gw_missing_files(opt.data_dir) > 0) {
		return EXIT_USAGE;
	}
	// HDF5 prints its error stack by default; we say what failed.
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

	job             j       = { .opt = &opt };
	double         *x[NDET] = { NULL };
	double         *tpl = NULL, *dwin = NULL;
	double complex *buf = NULL, *tfft = NULL;
	result          res[NDET] = { { 0 } };
	size_t          n         = 0;
	double          fs = 0, gps0 = 0;
	ec = EXIT_ERROR;

	for (size_t d = 0; d < NDET; d++) {
		char  *p  = gw_join(opt.data_dir, detectors[d].file);
		size_t nd = 0;
		double dt = 0, g = 0;
		x[d] = p == NULL ? NULL : gw_read_strain(p, &nd, &dt, &g);
		free(p);
		if (x[d] == NULL) {
			goto out;
		}
		if (d == 0) {
			n    = nd;
			fs   = 1.0 / dt;
			gps0 = g;
		} else if (nd != n || fabs(1.0 / dt - fs) > 1e-9 || g != gps0) {
			fprintf(stderr,
			    "gw150914: %s and %s do not cover the "
			    "same samples\n",
			    detectors[0].file, detectors[d].file);
			goto out;
		}
	}
	// Welch needs at least one 4 s segment; the roll and the r2c need
	// an even length.
	if (fs != floor(fs) || n % 2 != 0 || (double) n < 4 * fs
	    || n > INT32_MAX) {
		fprintf(stderr,
		    "gw150914: unexpected data: %zu samples at "
		    "%g Hz\n",
		    n, fs);
		goto out;
	}
	tpl = gw_read_template(opt.data_dir, n);
	if (tpl == NULL) {
		goto out;
	}

	int rv = fftd_client_open(&j.client, opt.url, opt.timeout_ms);
	if (rv != FFTD_OK) {
		char url[256] = "";
		if (opt.url == NULL) {
			fftd_default_url(url, sizeof(url));
		}
		gw_fail_fftd(opt.url != NULL ? opt.url : url, rv);
		goto out;
	}
	fftd_info info;
	fftd_client_info(j.client, &info);
	printf("fftd %s (backend %s), %zu samples at %g Hz from GPS %.0f, "
	       "%s transforms\n",
	    info.server_version, info.backend, n, fs, gps0,
	    opt.precision == FFTD_F64 ? "f64" : "f32");

	// Template: complex plus + i cross, Tukey(1/8) window, FFT / fs.
	dwin = malloc(n * sizeof(double));
	buf  = malloc(n * sizeof(double complex));
	tfft = malloc(n * sizeof(double complex));
	if (dwin == NULL || buf == NULL || tfft == NULL) {
		fprintf(stderr, "gw150914: out of memory\n");
		goto out;
	}
	gw_tukey(dwin, n, 1.0 / 8);
	for (size_t i = 0; i < n; i++) {
		buf[i] = (tpl[i] + tpl[n + i] * I) * dwin[i];
	}
	if (gw_c2c(&j, buf, tfft, (int64_t) n, FFTD_FORWARD, FFTD_NORM_NONE,
	        "template (C2C forward)")
	    != FFTD_OK) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		tfft[i] /= fs;
	}

	for (size_t d = 0; d < NDET; d++) {
		if (gw_matched_filter(
		        &j, &detectors[d], x[d], n, fs, dwin, tfft, &res[d])
		    != FFTD_OK) {
			goto out;
		}
		res[d].gps = gps0 + (double) res[d].index / fs;
		printf("%s: peak SNR %.2f at GPS %.4f\n", detectors[d].name,
		    res[d].snr, res[d].gps);
	}
	double tol = opt.precision == FFTD_F64 ? 1e-9 : 1e-5;
	printf("daemon vs FFTW (double): largest relative L2 difference "
	       "%.2e over %d transforms (%s)\n",
	    j.max_rel, j.ntransforms, j.worst);

	if (opt.plot) {
		if (!gw_in_path("gnuplot")) {
			fprintf(stderr,
			    "gw150914: gnuplot not found in PATH; "
			    "no plots\n");
		} else if (gw_make_dirs(opt.plot_dir) != 0) {
			fprintf(stderr,
			    "gw150914: cannot create %s: %s; no "
			    "plots\n",
			    opt.plot_dir, strerror(errno));
		} else {
			for (size_t d = 0; d < NDET; d++) {
				gw_plot_snr(
				    &opt, &detectors[d], &res[d], n, fs, gps0);
			}
		}
	}

	ec = EXIT_OK;
	if (opt.check) {
		bool ok = j.max_rel <= tol;
		if (!ok) {
			fprintf(stderr,
			    "check FAILED: daemon vs FFTW difference %.2e > "
			    "%.0e\n",
			    j.max_rel, tol);
		}
		for (size_t d = 0; d < NDET; d++) {
			const detector *det = &detectors[d];
			if (fabs(res[d].gps - EVENT_GPS) > CHECK_DT
			    || res[d].snr < det->snr_min
			    || res[d].snr > det->snr_max) {
				fprintf(stderr,
				    "check FAILED: %s peak SNR %.2f at GPS "
				    "%.4f, expected SNR in [%g, %g] within "
				    "%g s of %.2f\n",
				    det->name, res[d].snr, res[d].gps,
				    det->snr_min, det->snr_max, CHECK_DT,
				    EVENT_GPS);
				ok = false;
			}
		}
		printf("check: %s\n", ok ? "ok" : "FAILED");
		ec = ok ? EXIT_OK : EXIT_CHECK;
	}
out:
	if (j.client != NULL) {
		fftd_client_close(j.client);
	}
	for (size_t d = 0; d < NDET; d++) {
		free(x[d]);
		free(res[d].trace);
	}
	free(tpl);
	free(dwin);
	free(buf);
	free(tfft);
	return ec;
}

// SPDX-License-Identifier: MIT
//
// search.c — gw150914-search: a template-bank search for GW150914 through
// the fftd daemon (issue 16, item 4). The inputs are one search input per
// detector (examples/gw150914/pycbc_reference.py `prepare`: the strain's
// spectrum D and PSD S, conditioned as PyCBC's tutorial does) and an
// aligned-spin IMRPhenomD bank (make_bank.py). The program puts D, S and
// the bank into resident arrays of the daemon — the bank once, shared by
// every detector — and runs the matched-filter bank (fftd_mf_bank:
// FINDCHIRP's filter, rho_j(t) = |z_j(t)| / sigma_j) over it in slices of
// --slice templates, so a bank of any size fits the daemon's request
// limits. Only peaks and triggers come back, and the loudest template's
// rho(t) for the plot.
//
// It prints, per detector, the loudest template (masses, spins), its peak
// rho and GPS time, the triggers above --threshold (clustered in windows
// of --cluster samples) and the templates searched per second (wall, the
// whole bank); then the template loudest over the network. It writes
// every template's peak and the triggers to --out (JSON) and the loudest
// template's rho(t) to PLOT_DIR/search_<det>_rho.dat (and .png through
// gnuplot when it is there). search_io.c reads the files, search_out.c
// writes the results and the plot.
//
// Precision (--precision): f32 (the default: what the GPU runs) scales
// data and templates by PyCBC's DYN_RANGE_FAC = 2^69 and the PSD by its
// square (fftd.h, fftd_mf_bank: D conj(h) / S would underflow a float);
// f64 sends the values as they are, the bank's complex64 promoted exactly.

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "search.h"

// Exit codes, as --help states them.
enum {
	EXIT_OK    = 0,
	EXIT_ERROR = 1, // daemon or file error
	EXIT_USAGE = 2, // bad arguments
	EXIT_CHECK = 3, // --check: a figure out of its expected range
};

// The --check windows: each detector's loudest peak within CHECK_DT_S of
// the event (the template's t = 0 is its amplitude peak, a few ms before
// GWOSC's tevent; a template far from the signal peaks further off),
// rho in [CHECK_RHO_MIN, CHECK_RHO_MAX].
#define CHECK_DT_S 0.05
#define CHECK_RHO_MIN 8.0
#define CHECK_RHO_MAX 30.0

// usage writes gw150914-search --help to out.
static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: gw150914-search --bank BANK.h5 --input INPUT.h5 "
	    "[--input ...] [options]\n"
	    "\n"
	    "Template-bank matched-filter search for GW150914 through the "
	    "fftd daemon:\n"
	    "data, PSD and bank resident in the daemon, fftd_mf_bank over "
	    "the bank in\n"
	    "slices, peaks and triggers back.\n"
	    "\n"
	    "  --bank FILE       bank (make_bank.py): templates [K, N/2+1] "
	    "complex64\n"
	    "  --input FILE      one detector's search input "
	    "(pycbc_reference.py\n"
	    "                    prepare); repeat per detector (at most %d)\n"
	    "  --url URL         daemon address (default: $FFTD_URL, else "
	    "the standard\n"
	    "                    socket)\n"
	    "  --timeout MS      per-call timeout (default 0: 60 s; -1 none)\n"
	    "  --precision P     f32 (default; DYN_RANGE_FAC scaling) or f64\n"
	    "  --slice K         templates per request (default 64)\n"
	    "  --count K         search the bank's first K templates "
	    "(default: all)\n"
	    "  --threshold X     rho above which triggers count (default "
	    "5.5)\n"
	    "  --cluster S       trigger window, samples (default 4096: 1 s "
	    "at 4096 Hz)\n"
	    "  --out FILE        write the results as JSON (every template's "
	    "peak, the\n"
	    "                    triggers, the settings)\n"
	    "  --plot-dir DIR    where search_<det>_rho.dat/.png go "
	    "(default .)\n"
	    "  --no-plot         write the .dat files, do not run gnuplot\n"
	    "  --check           exit 3 unless each detector's loudest peak "
	    "is within\n"
	    "                    %g s of GPS %.2f with rho in [%g, %g]\n"
	    "  --quiet           no progress lines (only on a terminal "
	    "anyway)\n"
	    "  -h, --help        this text\n"
	    "\n"
	    "exit status: 0 ok, 1 daemon or file error, 2 usage error, 3 "
	    "check failed\n",
	    GS_MAX_DET, CHECK_DT_S, EVENT_GPS, CHECK_RHO_MIN, CHECK_RHO_MAX);
}

// parse_i64 parses a whole number in [lo, hi] for option name; false
// after saying why.
static bool
parse_i64(const char *name, const char *s, int64_t lo, int64_t hi, int64_t *v)
{
	char *end;
	errno       = 0;
	long long x = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || x < lo || x > hi) {
		fprintf(stderr,
		    "gw150914-search: --%s: '%s' is not a number in [%lld, "
		    "%lld]\n",
		    name, s, (long long) lo, (long long) hi);
		return false;
	}
	*v = x;
	return true;
}

// parse_options fills opt from the command line; --help prints usage and
// exits. Returns EXIT_OK or EXIT_USAGE.
static int
parse_options(int argc, char **argv, gs_options *opt, bool *check)
{
	enum {
		O_URL = 256,
		O_TIMEOUT,
		O_BANK,
		O_INPUT,
		O_OUT,
		O_PLOTDIR,
		O_NOPLOT,
		O_PRECISION,
		O_SLICE,
		O_COUNT,
		O_THRESHOLD,
		O_CLUSTER,
		O_CHECK,
		O_QUIET,
	};
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, O_URL },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "bank", required_argument, NULL, O_BANK },
		{ "input", required_argument, NULL, O_INPUT },
		{ "out", required_argument, NULL, O_OUT },
		{ "plot-dir", required_argument, NULL, O_PLOTDIR },
		{ "no-plot", no_argument, NULL, O_NOPLOT },
		{ "precision", required_argument, NULL, O_PRECISION },
		{ "slice", required_argument, NULL, O_SLICE },
		{ "count", required_argument, NULL, O_COUNT },
		{ "threshold", required_argument, NULL, O_THRESHOLD },
		{ "cluster", required_argument, NULL, O_CLUSTER },
		{ "check", no_argument, NULL, O_CHECK },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int     c;
	int64_t v;
	char   *end;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_URL:
			opt->url = optarg;
			break;
		case O_TIMEOUT:
			if (!parse_i64("timeout", optarg, -1, INT32_MAX, &v)) {
				return EXIT_USAGE;
			}
			opt->timeout_ms = (int) v;
			break;
		case O_BANK:
			opt->bank = optarg;
			break;
		case O_INPUT:
			if (opt->ninputs == GS_MAX_DET) {
				fprintf(stderr,
				    "gw150914-search: at most %d inputs\n",
				    GS_MAX_DET);
				return EXIT_USAGE;
			}
			opt->inputs[opt->ninputs++] = optarg;
			break;
		case O_OUT:
			opt->out = optarg;
			break;
		case O_PLOTDIR:
			opt->plot_dir = optarg;
			break;
		case O_NOPLOT:
			opt->plot = false;
			break;
		case O_PRECISION:
			if (strcmp(optarg, "f32") == 0) {
				opt->precision = FFTD_F32;
			} else if (strcmp(optarg, "f64") == 0) {
				opt->precision = FFTD_F64;
			} else {
				fprintf(stderr,
				    "gw150914-search: --precision: f32 or "
				    "f64\n");
				return EXIT_USAGE;
			}
			break;
		case O_SLICE:
			if (!parse_i64(
			        "slice", optarg, 1, 1 << 20, &opt->slice)) {
				return EXIT_USAGE;
			}
			break;
		case O_COUNT:
			if (!parse_i64(
			        "count", optarg, 0, INT32_MAX, &opt->count)) {
				return EXIT_USAGE;
			}
			break;
		case O_THRESHOLD:
			errno          = 0;
			opt->threshold = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0'
			    || !isfinite(opt->threshold)) {
				fprintf(stderr,
				    "gw150914-search: --threshold: '%s' is "
				    "not a number\n",
				    optarg);
				return EXIT_USAGE;
			}
			break;
		case O_CLUSTER:
			if (!parse_i64("cluster", optarg, 1, INT32_MAX,
			        &opt->cluster)) {
				return EXIT_USAGE;
			}
			break;
		case O_CHECK:
			*check = true;
			break;
		case O_QUIET:
			opt->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || opt->bank == NULL || opt->ninputs == 0) {
		fprintf(stderr, "gw150914-search: %s\n",
		    optind != argc ? "unexpected argument"
		                   : "--bank and at least one --input are "
		                     "needed");
		usage(stderr);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

// now_s is the monotonic clock in seconds.
static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// fail_fftd says what failed: the code's name and message and the
// daemon's detail (fftd_last_error); returns rv.
static int
fail_fftd(const char *what, int rv)
{
	const char *detail = fftd_last_error();
	fprintf(stderr, "gw150914-search: %s: %s, %s%s%s\n", what,
	    fftd_err_name(rv), fftd_strerror(rv), *detail ? ": " : "", detail);
	return rv;
}

// search is the run's state: the connection, the resident bank and the
// sizes of one precision's elements.
typedef struct search {
	const gs_options *opt;
	fftd_client      *client;
	fftd_array       *bank_arr;
	size_t            real;   // bytes of a real (4 or 8)
	size_t            cplx;   // bytes of a complex
	size_t            tbytes; // bytes of one template in the array
	double            scale;  // DYN_RANGE_FAC (f32) or 1
} search;

// put_reals stores n doubles src, times scale, as s's reals at dst.
static void
put_reals(const search *s, void *dst, const double *src, size_t n, double scale)
{
	for (size_t i = 0; i < n; i++) {
		if (s->real == sizeof(float)) {
			((float *) dst)[i] = (float) (src[i] * scale);
		} else {
			((double *) dst)[i] = src[i] * scale;
		}
	}
}

// upload_bank creates the bank's array and writes the templates into it,
// read from the file in slices of opt->slice (scaled for f32, promoted
// for f64), so the host never holds more than one slice.
static int
upload_bank(search *s, int64_t file, const gs_bank *bank)
{
	const gs_options *opt   = s->opt;
	size_t            nvals = 2 * (size_t) bank->nbins; // per template
	if ((size_t) bank->count > SIZE_MAX / s->tbytes) {
		fprintf(stderr, "gw150914-search: the bank is too large\n");
		return FFTD_EOVERFLOW;
	}
	int rv = fftd_array_create(
	    s->client, -1, (size_t) bank->count * s->tbytes, &s->bank_arr);
	if (rv != FFTD_OK) {
		return fail_fftd("creating the bank's array", rv);
	}
	float *raw = malloc((size_t) opt->slice * nvals * sizeof(float));
	void  *buf = malloc((size_t) opt->slice * s->tbytes);
	double t0  = now_s();
	rv         = raw == NULL || buf == NULL ? FFTD_ENOMEM : FFTD_OK;
	for (int64_t first = 0; rv == FFTD_OK && first < bank->count;
	     first += opt->slice) {
		int64_t k = bank->count - first < opt->slice
		    ? bank->count - first
		    : opt->slice;
		if (gs_read_templates(file, bank, first, k, raw) != 0) {
			rv = FFTD_ESYSERR + EIO; // said why
			break;
		}
		size_t n = (size_t) k * nvals;
		for (size_t i = 0; i < n; i++) {
			if (s->real == sizeof(float)) {
				((float *) buf)[i]
				    = (float) (raw[i] * s->scale);
			} else {
				((double *) buf)[i] = (double) raw[i];
			}
		}
		rv = fftd_array_write(s->bank_arr, (size_t) first * s->tbytes,
		    buf, (size_t) k * s->tbytes);
		if (rv != FFTD_OK) {
			fail_fftd("writing the bank", rv);
		}
	}
	if (rv == FFTD_ENOMEM) {
		fprintf(stderr, "gw150914-search: out of memory\n");
	}
	if (rv == FFTD_OK && !opt->quiet) {
		double dt = now_s() - t0;
		printf("bank: %lld templates (%.1f MB resident), written in "
		       "%.2f s\n",
		    (long long) bank->count,
		    (double) bank->count * (double) s->tbytes / 1e6, dt);
	}
	free(raw);
	free(buf);
	return rv;
}

// add_triggers appends n triggers of the slice starting at template first
// to res (template_index made an index into the whole bank).
static int
add_triggers(gs_result *res, size_t *cap, const fftd_mf_trigger *t, size_t n,
    int64_t first)
{
	if (res->ntriggers + n > *cap) {
		size_t           c = (*cap == 0 ? 1024 : *cap * 2) + n;
		fftd_mf_trigger *p = realloc(res->triggers, c * sizeof(*p));
		if (p == NULL) {
			return FFTD_ENOMEM;
		}
		res->triggers = p;
		*cap          = c;
	}
	for (size_t i = 0; i < n; i++) {
		fftd_mf_trigger x = t[i];
		x.template_index += first;
		res->triggers[res->ntriggers++] = x;
	}
	return FFTD_OK;
}

// search_detector runs the bank against one detector: its data and PSD
// into arrays, fftd_mf_bank over the bank in slices, then the loudest
// template once more for its rho(t).
static int
search_detector(
    search *s, const gs_bank *bank, const gs_input *in, gs_result *res)
{
	const gs_options *opt  = s->opt;
	size_t            nb   = (size_t) in->nbins;
	int64_t           wid  = in->t_end - in->t_begin;
	fftd_array       *data = NULL, *psd = NULL;
	void             *buf = malloc(2 * nb * s->real);
	int64_t nwin = (wid + opt->cluster - 1) / opt->cluster; // windows
	size_t  maxt = (size_t) (opt->slice * nwin);
	if (maxt > ((size_t) 1 << 20)) {
		maxt = (size_t) 1 << 20; // the loudest are kept, all counted
	}
	fftd_mf_trigger *trig = malloc(maxt * sizeof(*trig));
	void            *ser  = malloc((size_t) wid * s->real);
	res->peaks  = calloc((size_t) bank->count, sizeof(*res->peaks));
	res->series = malloc((size_t) wid * sizeof(double));
	size_t cap  = 0;
	int    rv   = FFTD_ENOMEM;
	if (buf == NULL || trig == NULL || ser == NULL || res->peaks == NULL
	    || res->series == NULL) {
		fprintf(stderr, "gw150914-search: out of memory\n");
		goto out;
	}
	if ((rv = fftd_array_create(s->client, -1, nb * s->cplx, &data))
	        != FFTD_OK
	    || (rv = fftd_array_create(s->client, -1, nb * s->real, &psd))
	        != FFTD_OK) {
		fail_fftd("creating the data's arrays", rv);
		goto out;
	}
	put_reals(s, buf, in->data, 2 * nb, s->scale);
	if ((rv = fftd_array_write(data, 0, buf, nb * s->cplx)) != FFTD_OK) {
		fail_fftd("writing the data", rv);
		goto out;
	}
	put_reals(s, buf, in->psd, nb, s->scale * s->scale);
	if ((rv = fftd_array_write(psd, 0, buf, nb * s->real)) != FFTD_OK) {
		fail_fftd("writing the PSD", rv);
		goto out;
	}

	fftd_mf_desc d;
	fftd_mf_desc_init(&d);
	d.n         = in->n;
	d.precision = opt->precision;
	d.delta_f   = in->delta_f;
	d.kmin      = in->kmin;
	d.kmax      = in->kmax;
	d.t_begin   = in->t_begin;
	d.t_end     = in->t_end;
	d.threshold = opt->threshold;
	d.cluster   = opt->cluster;
	// Progress on a terminal only: logs get the summary lines.
	bool   progress = !opt->quiet && isatty(STDOUT_FILENO);
	double t0       = now_s();
	for (int64_t first = 0; first < bank->count; first += opt->slice) {
		int64_t k  = bank->count - first < opt->slice
		     ? bank->count - first
		     : opt->slice;
		size_t  nt = 0, ntot = 0;
		rv = fftd_mf_bank(s->client, &d, data, 0, psd, 0, s->bank_arr,
		    (size_t) first * s->tbytes, k, res->peaks + first, trig,
		    maxt, &nt, &ntot, NULL, 0, NULL);
		if (rv != FFTD_OK) {
			fail_fftd("fftd_mf_bank", rv);
			goto out;
		}
		res->requests++;
		res->ntotal += ntot;
		if ((rv = add_triggers(res, &cap, trig, nt, first))
		    != FFTD_OK) {
			fprintf(stderr, "gw150914-search: out of memory\n");
			goto out;
		}
		if (progress) {
			printf("\r%s: %lld/%lld templates", in->name,
			    (long long) (first + k), (long long) bank->count);
			fflush(stdout);
		}
	}
	res->wall_s = now_s() - t0;
	res->rate   = res->wall_s > 0 ? (double) bank->count / res->wall_s : 0;
	if (progress) {
		printf("\r%*s\r", 40, "");
	}
	res->loudest = 0;
	for (int64_t j = 1; j < bank->count; j++) {
		if (res->peaks[j].rho > res->peaks[res->loudest].rho) {
			res->loudest = j;
		}
	}
	// The loudest template's rho(t): the bank's series, a slice of one.
	int64_t      zero = 0;
	size_t       nt   = 0;
	fftd_mf_peak pk;
	d.threshold = 0;
	rv          = fftd_mf_bank(s->client, &d, data, 0, psd, 0, s->bank_arr,
	             (size_t) res->loudest * s->tbytes, 1, &pk, NULL, 0, &nt, NULL,
	             &zero, 1, ser);
	if (rv != FFTD_OK) {
		fail_fftd("fftd_mf_bank (the loudest template's series)", rv);
		goto out;
	}
	for (int64_t i = 0; i < wid; i++) {
		res->series[i] = s->real == sizeof(float)
		    ? (double) ((float *) ser)[i]
		    : ((double *) ser)[i];
	}
out:
	fftd_array_destroy(data);
	fftd_array_destroy(psd);
	free(buf);
	free(trig);
	free(ser);
	return rv;
}

// report prints one detector's figures.
static void
report(const search *s, const gs_bank *bank, const gs_input *in,
    const gs_result *res)
{
	const fftd_mf_peak *p = &res->peaks[res->loudest];
	int64_t             j = res->loudest;
	printf(
	    "%s: loudest template #%lld (m1 %.1f, m2 %.1f Msun, chi1z %+.2f, "
	    "chi2z %+.2f): rho %.3f at GPS %.4f (sample %lld)\n",
	    in->name, (long long) j, bank->mass1[j], bank->mass2[j],
	    bank->spin1z[j], bank->spin2z[j], p->rho,
	    in->gps_start + (double) p->t / in->sample_rate, (long long) p->t);
	printf("%s: %zu triggers above rho %g (%lld-sample clusters)%s; %lld "
	       "templates in %.2f s: %.0f templates/s (%d requests)\n",
	    in->name, res->ntotal, s->opt->threshold,
	    (long long) s->opt->cluster,
	    res->ntriggers < res->ntotal ? " (loudest kept)" : "",
	    (long long) bank->count, res->wall_s, res->rate, res->requests);
}

// report_network prints the template with the largest network rho (the
// root sum of squares of its peaks over the detectors) and how far apart
// its peaks are: a real signal's lie within the light travel time.
static void
report_network(
    const gs_bank *bank, const gs_input *in, const gs_result *res, int ndet)
{
	int64_t best = 0;
	double  bnet = -1;
	for (int64_t j = 0; j < bank->count; j++) {
		double sum = 0;
		for (int d = 0; d < ndet; d++) {
			sum += res[d].peaks[j].rho * res[d].peaks[j].rho;
		}
		if (sum > bnet) {
			bnet = sum;
			best = j;
		}
	}
	printf("network: template #%lld (m1 %.1f, m2 %.1f Msun), rho %.2f =",
	    (long long) best, bank->mass1[best], bank->mass2[best], sqrt(bnet));
	for (int d = 0; d < ndet; d++) {
		printf("%s %s %.2f", d ? " +" : "", in[d].name,
		    res[d].peaks[best].rho);
	}
	printf(" (root sum of squares); peaks %s to %s: %+.1f ms\n", in[0].name,
	    in[1].name,
	    1e3
	        * ((in[1].gps_start
	               + (double) res[1].peaks[best].t / in[1].sample_rate)
	            - (in[0].gps_start
	                + (double) res[0].peaks[best].t / in[0].sample_rate)));
}

// check_results judges the --check windows; true when all hold.
static bool
check_results(const gs_input *in, const gs_result *res, int ndet)
{
	bool ok = true;
	for (int d = 0; d < ndet; d++) {
		const fftd_mf_peak *p = &res[d].peaks[res[d].loudest];
		double              gps
		    = in[d].gps_start + (double) p->t / in[d].sample_rate;
		if (fabs(gps - EVENT_GPS) > CHECK_DT_S || p->rho < CHECK_RHO_MIN
		    || p->rho > CHECK_RHO_MAX) {
			fprintf(stderr,
			    "check FAILED: %s loudest rho %.2f at GPS %.4f\n",
			    in[d].name, p->rho, gps);
			ok = false;
		}
	}
	printf("check: %s\n", ok ? "ok" : "FAILED");
	return ok;
}

// main reads the inputs and the bank, connects, makes the bank resident,
// searches each detector, reports, writes the results and the plots.
int
main(int argc, char **argv)
{
	gs_options opt = {
		.plot_dir  = ".",
		.plot      = true,
		.precision = FFTD_F32,
		.slice     = 64,
		.threshold = 5.5,
		.cluster   = 4096,
	};
	bool check = false;
	int  ec    = parse_options(argc, argv, &opt, &check);
	if (ec != EXIT_OK) {
		return ec;
	}
	// HDF5 prints its error stack by default; we say what failed.
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

	gs_input  in[GS_MAX_DET]  = { { { 0 } } };
	gs_result res[GS_MAX_DET] = { { 0 } };
	gs_bank   bank            = { 0 };
	int64_t   file            = -1;
	search    s               = { .opt = &opt };
	int       ndet            = opt.ninputs;
	ec                        = EXIT_ERROR;
	for (int d = 0; d < ndet; d++) {
		if (gs_read_input(opt.inputs[d], &in[d]) != 0) {
			goto out;
		}
		if (in[d].n != in[0].n || in[d].delta_f != in[0].delta_f) {
			fprintf(stderr,
			    "gw150914-search: %s and %s differ in N or "
			    "delta_f\n",
			    opt.inputs[0], opt.inputs[d]);
			goto out;
		}
	}
	file = gs_open_bank(
	    opt.bank, opt.count, in[0].nbins, in[0].delta_f, &bank);
	if (file < 0) {
		goto out;
	}
	bool f32 = opt.precision == FFTD_F32;
	s.real   = f32 ? sizeof(float) : sizeof(double);
	s.cplx   = 2 * s.real;
	s.tbytes = (size_t) bank.nbins * s.cplx;
	s.scale  = f32 ? GS_DYN_RANGE_FAC : 1;

	int rv = fftd_client_open(&s.client, opt.url, opt.timeout_ms);
	if (rv != FFTD_OK) {
		fail_fftd(opt.url != NULL ? opt.url : "the default daemon", rv);
		goto out;
	}
	fftd_info info;
	fftd_client_info(s.client, &info);
	char server[160];
	snprintf(server, sizeof(server), "fftd %s (backend %s)",
	    info.server_version, info.backend);
	printf("%s; %s bank of %lld templates, %lld samples at %g Hz, %s "
	       "(%s), %lld templates per request\n",
	    server, bank.approximant[0] ? bank.approximant : "a",
	    (long long) bank.count, (long long) in[0].n, in[0].sample_rate,
	    f32 ? "f32" : "f64",
	    f32 ? "data and templates x 2^69, PSD x 2^138" : "unscaled",
	    (long long) opt.slice);
	if (upload_bank(&s, file, &bank) != FFTD_OK) {
		goto out;
	}
	for (int d = 0; d < ndet; d++) {
		if (search_detector(&s, &bank, &in[d], &res[d]) != FFTD_OK) {
			goto out;
		}
		report(&s, &bank, &in[d], &res[d]);
	}
	if (ndet >= 2) {
		report_network(&bank, in, res, ndet);
	}
	if (opt.out != NULL
	    && gs_write_json(opt.out, &opt, &bank, in, res, ndet, server)
	        != 0) {
		goto out;
	}
	if (gw_make_dirs(opt.plot_dir) != 0) {
		fprintf(stderr,
		    "gw150914-search: cannot create %s: %s; no "
		    "series written\n",
		    opt.plot_dir, strerror(errno));
	} else {
		bool plot = opt.plot && gw_in_path("gnuplot");
		if (opt.plot && !plot) {
			fprintf(stderr,
			    "gw150914-search: gnuplot not found in "
			    "PATH; no plots\n");
		}
		for (int d = 0; d < ndet; d++) {
			gs_write_series(
			    opt.plot_dir, plot, &bank, &in[d], &res[d]);
		}
	}
	ec = EXIT_OK;
	if (check && !check_results(in, res, ndet)) {
		ec = EXIT_CHECK;
	}
out:
	fftd_array_destroy(s.bank_arr);
	if (s.client != NULL) {
		fftd_client_close(s.client);
	}
	for (int d = 0; d < ndet; d++) {
		gs_free_input(&in[d]);
		free(res[d].peaks);
		free(res[d].triggers);
		free(res[d].series);
	}
	gs_close_bank(file, &bank);
	return ec;
}

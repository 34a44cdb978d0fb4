// SPDX-License-Identifier: MIT
//
// gw150914.c — the matched filter of the GWOSC GW150914 tutorial
// (LOSC_Event_tutorial), run on the real LIGO strain of H1 and L1 with
// every FFT served by the fftd daemon through libfftd. Each transform is
// also computed in-process with FFTW in double on the same input, and the
// largest relative difference is reported, so the run is both a science
// result (SNR ≈ 18 in H1, ≈ 13 in L1 at GPS 1126259462.44) and an accuracy
// check of the service. See README.md beside this file for the formulas.

#include <complex.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fftw3.h>
#include <hdf5.h>

#include "fftd.h"

// Exit codes, as --help states them.
enum {
	EXIT_OK    = 0,
	EXIT_ERROR = 1, // daemon, transform or file error
	EXIT_USAGE = 2, // bad arguments or missing data files
	EXIT_CHECK = 3, // --check: a figure is out of its expected range
};

// The event (GWOSC BBH_events_v3.json, "tevent") and the --check windows.
#define EVENT_GPS 1126259462.44
#define CHECK_DT 0.010
#define PLOT_HALF_WIDTH 0.2

static const char *const files[] = {
	"H-H1_LOSC_4_V2-1126259446-32.hdf5",
	"L-L1_LOSC_4_V2-1126259446-32.hdf5",
	"GW150914_4_template.hdf5",
};

typedef struct detector {
	const char *name;
	const char *file;
	double      snr_min, snr_max; // --check range
} detector;

static const detector detectors[] = {
	{ "H1", "H-H1_LOSC_4_V2-1126259446-32.hdf5", 15, 21 },
	{ "L1", "L-L1_LOSC_4_V2-1126259446-32.hdf5", 10, 16 },
};
#define NDET (sizeof(detectors) / sizeof(detectors[0]))

typedef struct options {
	const char    *url;
	const char    *data_dir;
	const char    *plot_dir;
	const char    *algorithm;
	bool           plot;
	bool           check;
	fftd_precision precision;
	int            timeout_ms;
} options;

// job is the connection plus the running tally of daemon-vs-FFTW
// differences.
typedef struct job {
	const options *opt;
	fftd_client   *client;
	int            ntransforms;
	double         max_rel;
	char           worst[64];
} job;

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

// --- data -------------------------------------------------------------------

static char *
join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + 1 + strlen(name) + 1;
	char  *p = malloc(n);
	if (p != NULL) {
		snprintf(p, n, "%s/%s", dir, name);
	}
	return p;
}

// missing_files lists the GWOSC files absent from dir and says where to get
// them; returns the number missing.
static int
missing_files(const char *dir)
{
	int missing = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = join(dir, files[i]);
		if (p == NULL || access(p, R_OK) != 0) {
			if (missing++ == 0) {
				fprintf(stderr,
				    "gw150914: data files missing in %s:\n",
				    dir);
			}
			fprintf(stderr, "  %s\n", files[i]);
		}
		free(p);
	}
	if (missing > 0) {
		fprintf(stderr,
		    "They are public (CC BY 4.0) from the Gravitational Wave "
		    "Open Science Center,\n"
		    "https://gwosc.org, event GW150914 (file names as in "
		    "BBH_events_v3.json), e.g.:\n");
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			fprintf(stderr,
			    "  curl -fLO "
			    "https://gwosc.org/s/events/GW150914/%s\n",
			    files[i]);
		}
		fprintf(
		    stderr, "Put them in %s, or point --data at them.\n", dir);
	}
	return missing;
}

// read_dataset reads the whole dataset name of file f, converted to double,
// into a new array of *n elements (the product of its dimensions); dims
// receives up to 2 dimensions and *rank the rank.
static double *
read_dataset(hid_t f, const char *path, const char *name, int *rank,
    hsize_t dims[2], size_t *n)
{
	double *buf = NULL;
	hid_t   d   = H5Dopen2(f, name, H5P_DEFAULT);
	if (d < 0) {
		fprintf(stderr, "gw150914: %s: no dataset %s\n", path, name);
		return NULL;
	}
	hid_t s = H5Dget_space(d);
	int   r = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
	if (r < 0 || r > 2) {
		fprintf(stderr, "gw150914: %s: %s has rank %d, expected <= 2\n",
		    path, name, r);
		goto out;
	}
	hsize_t dd[2] = { 1, 1 };
	H5Sget_simple_extent_dims(s, dd, NULL);
	size_t count = 1;
	for (int k = 0; k < r; k++) {
		count *= (size_t) dd[k];
	}
	buf = malloc(count * sizeof(double));
	if (buf == NULL
	    || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)
	        < 0) {
		fprintf(stderr, "gw150914: %s: cannot read %s\n", path, name);
		free(buf);
		buf = NULL;
		goto out;
	}
	*rank   = r;
	dims[0] = dd[0];
	dims[1] = dd[1];
	*n      = count;
out:
	if (s >= 0) {
		H5Sclose(s);
	}
	H5Dclose(d);
	return buf;
}

// read_strain reads strain/Strain, its Xspacing (sample period) and
// meta/GPSstart from a GWOSC file.
static double *
read_strain(const char *path, size_t *n, double *dt, double *gps)
{
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		fprintf(
		    stderr, "gw150914: %s: not a readable HDF5 file\n", path);
		return NULL;
	}
	int     rank;
	hsize_t dims[2];
	size_t  cnt;
	double *x  = read_dataset(f, path, "strain/Strain", &rank, dims, n);
	double *g  = x == NULL
	     ? NULL
	     : read_dataset(f, path, "meta/GPSstart", &rank, dims, &cnt);
	bool    ok = g != NULL && cnt == 1;
	if (ok) {
		*gps    = g[0];
		hid_t a = H5Aopen_by_name(
		    f, "strain/Strain", "Xspacing", H5P_DEFAULT, H5P_DEFAULT);
		ok = a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, dt) >= 0
		    && *dt > 0;
		if (a >= 0) {
			H5Aclose(a);
		}
		if (!ok) {
			fprintf(stderr,
			    "gw150914: %s: no valid strain/Strain Xspacing\n",
			    path);
		}
	}
	free(g);
	H5Fclose(f);
	if (!ok) {
		free(x);
		return NULL;
	}
	return x;
}

// --- windows and transforms -------------------------------------------------

// tukey fills w with scipy.signal.windows.tukey(m, alpha) (symmetric),
// written in scipy's order of operations so the windows agree to the bit.
static void
tukey(double *w, size_t m, double alpha)
{
	if (m == 1) {
		w[0] = 1;
		return;
	}
	double width = floor(alpha * (double) (m - 1) / 2.0);
	for (size_t i = 0; i < m; i++) {
		double x = (double) i;
		double r = 2.0 * x / alpha / (double) (m - 1);
		if (x <= width) {
			w[i] = 0.5 * (1 + cos(M_PI * (-1 + r)));
		} else if (x < (double) m - width - 1) {
			w[i] = 1;
		} else {
			w[i] = 0.5 * (1 + cos(M_PI * (-2.0 / alpha + 1 + r)));
		}
	}
}

static int
fail_fftd(const char *what, int rv)
{
	const char *detail = fftd_last_error();
	fprintf(stderr, "gw150914: %s: %s%s%s%s\n", what, fftd_strerror(rv),
	    *detail ? " (" : "", detail, *detail ? ")" : "");
	return rv;
}

// on_daemon plans *desc, executes it on in (nin doubles: the real numbers
// of the input, interleaved for complex), writes the nout output doubles
// to out, and destroys the plan. f32 plans get their buffers converted
// here, so the rest of the program stays in double.
static int
on_daemon(job *j, fftd_plan_desc *desc, const double *in, size_t nin,
    double *out, size_t nout, const char *what)
{
	fftd_plan *plan = NULL;
	void      *tin = NULL, *tout = NULL;
	desc->precision = j->opt->precision;
	desc->algorithm = j->opt->algorithm;
	int rv          = fftd_plan_create(j->client, desc, &plan);
	if (rv != FFTD_OK) {
		return fail_fftd(what, rv);
	}
	size_t esz
	    = desc->precision == FFTD_F64 ? sizeof(double) : sizeof(float);
	if (fftd_plan_input_bytes(plan) != nin * esz
	    || fftd_plan_output_bytes(plan) != nout * esz) {
		fprintf(stderr,
		    "gw150914: %s: plan sizes %zu/%zu bytes, "
		    "expected %zu/%zu\n",
		    what, fftd_plan_input_bytes(plan),
		    fftd_plan_output_bytes(plan), nin * esz, nout * esz);
		rv = FFTD_EINTERNAL;
		goto out;
	}
	if (desc->precision == FFTD_F64) {
		rv = fftd_execute(plan, in, out);
	} else {
		tin  = malloc(nin * sizeof(float));
		tout = malloc(nout * sizeof(float));
		if (tin == NULL || tout == NULL) {
			rv = FFTD_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nin; i++) {
			((float *) tin)[i] = (float) in[i];
		}
		rv = fftd_execute(plan, tin, tout);
		for (size_t i = 0; rv == FFTD_OK && i < nout; i++) {
			out[i] = ((float *) tout)[i];
		}
	}
	if (rv != FFTD_OK) {
		fail_fftd(what, rv);
	}
out:
	free(tin);
	free(tout);
	fftd_plan_destroy(plan);
	return rv;
}

// note_difference records ||got - ref|| / ||ref|| (2-norms over the n
// doubles) as one more transform compared.
static void
note_difference(
    job *j, const double *got, const double *ref, size_t n, const char *what)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = got[i] - ref[i];
		num += d * d;
		den += ref[i] * ref[i];
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	j->ntransforms++;
	if (rel > j->max_rel || j->ntransforms == 1) {
		j->max_rel = rel;
		snprintf(j->worst, sizeof(j->worst), "%s", what);
	}
}

// r2c_batch computes batch real-to-complex transforms of size n (contiguous)
// on the daemon into out (batch x (n/2+1) complex), and compares with FFTW.
static int
r2c_batch(job *j, const double *in, double complex *out, int64_t n,
    int64_t batch, const char *what)
{
	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, 1, &n, FFTD_R2C, FFTD_F64);
	desc.batch = batch;
	size_t nh  = (size_t) (n / 2 + 1);
	size_t nin = (size_t) (n * batch), nout = 2 * nh * (size_t) batch;
	int    rv = on_daemon(j, &desc, in, nin, (double *) out, nout, what);
	if (rv != FFTD_OK) {
		return rv;
	}

	double       *rin = fftw_alloc_real(nin);
	fftw_complex *ref = fftw_alloc_complex(nh * (size_t) batch);
	int           nn  = (int) n;
	fftw_plan p = fftw_plan_many_dft_r2c(1, &nn, (int) batch, rin, NULL, 1,
	    (int) n, ref, NULL, 1, (int) nh, FFTW_ESTIMATE);
	memcpy(rin, in, nin * sizeof(double));
	fftw_execute(p);
	note_difference(
	    j, (const double *) out, (const double *) ref, nout, what);
	fftw_destroy_plan(p);
	fftw_free(rin);
	fftw_free(ref);
	return FFTD_OK;
}

// c2c computes one complex transform of size n on the daemon, in direction
// dir with normalisation norm, and compares with FFTW.
static int
c2c(job *j, const double complex *in, double complex *out, int64_t n,
    fftd_direction dir, fftd_norm norm, const char *what)
{
	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, 1, &n, FFTD_C2C, FFTD_F64);
	desc.direction    = dir;
	desc.norm         = norm;
	size_t        nr  = 2 * (size_t) n;
	const double *din = (const double *) in;
	int rv = on_daemon(j, &desc, din, nr, (double *) out, nr, what);
	if (rv != FFTD_OK) {
		return rv;
	}

	int           sign = dir == FFTD_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD;
	fftw_complex *cin  = fftw_alloc_complex((size_t) n);
	fftw_complex *ref  = fftw_alloc_complex((size_t) n);
	fftw_plan p = fftw_plan_dft_1d((int) n, cin, ref, sign, FFTW_ESTIMATE);
	memcpy(cin, in, (size_t) n * sizeof(fftw_complex));
	fftw_execute(p);
	double scale = norm == FFTD_NORM_BY_N ? 1.0 / (double) n
	    : norm == FFTD_NORM_ORTHO         ? 1.0 / sqrt((double) n)
	                                      : 1.0;
	for (size_t i = 0; i < (size_t) n; i++) {
		ref[i] *= scale; // complex.h first: fftw_complex is C99's
	}
	note_difference(
	    j, (const double *) out, (const double *) ref, nr, what);
	fftw_destroy_plan(p);
	fftw_free(cin);
	fftw_free(ref);
	return FFTD_OK;
}

// --- the matched filter -----------------------------------------------------

// welch_psd is matplotlib.mlab.psd(x, Fs=fs, NFFT=nfft, window=tukey(nfft,
// 1/4), noverlap=nfft/2): one-sided density, DC and Nyquist not doubled,
// mean over segments. All segments go to the daemon as one batched R2C.
static int
welch_psd(job *j, const double *x, size_t n, double fs, size_t nfft,
    double *psd, const char *det)
{
	size_t          step = nfft / 2;
	size_t          nseg = (n - (nfft - step)) / step;
	size_t          nh   = nfft / 2 + 1;
	double         *w    = malloc(nfft * sizeof(double));
	double         *seg  = malloc(nseg * nfft * sizeof(double));
	double complex *spec = malloc(nseg * nh * sizeof(double complex));
	int             rv   = FFTD_ENOMEM;
	if (w == NULL || seg == NULL || spec == NULL) {
		goto out;
	}
	tukey(w, nfft, 0.25);
	double sumw2 = 0;
	for (size_t i = 0; i < nfft; i++) {
		sumw2 += w[i] * w[i];
	}
	for (size_t k = 0; k < nseg; k++) {
		for (size_t i = 0; i < nfft; i++) {
			seg[k * nfft + i] = x[k * step + i] * w[i];
		}
	}
	char what[64];
	snprintf(
	    what, sizeof(what), "%s Welch segments (R2C x %zu)", det, nseg);
	rv = r2c_batch(j, seg, spec, (int64_t) nfft, (int64_t) nseg, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	for (size_t f = 0; f < nh; f++) {
		double acc = 0;
		for (size_t k = 0; k < nseg; k++) {
			double complex v = spec[k * nh + f];
			acc += creal(v) * creal(v) + cimag(v) * cimag(v);
		}
		// One-sided: fold negative frequencies in, except at DC and
		// Nyquist which have no mirror image.
		double fold = (f == 0 || f == nh - 1) ? 1 : 2;
		psd[f]      = acc * fold / (double) nseg / fs / sumw2;
	}
out:
	free(w);
	free(seg);
	free(spec);
	return rv;
}

// interp_psd is np.interp(abs(np.fft.fftfreq(n) * fs), freqs, psd) with
// freqs = arange(nfft/2+1) * fs/nfft. Both grids are multiples of fs/n, so
// the bracketing bin and fraction are computed exactly in integers.
static void
interp_psd(double *pv, size_t n, const double *psd, size_t nfft)
{
	for (size_t k = 0; k < n; k++) {
		size_t m   = k <= n / 2 ? k : n - k; // |f| = m fs/n
		size_t pos = m * nfft;               // |f| in fs/(n nfft)
		size_t b   = pos / n;
		if (b >= nfft / 2) {
			pv[k] = psd[nfft / 2];
			continue;
		}
		double t = (double) (pos % n) / (double) n;
		pv[k]    = psd[b] + t * (psd[b + 1] - psd[b]);
	}
}

typedef struct result {
	double  snr;   // peak SNR
	size_t  index; // sample of the peak
	double  gps;   // GPS time of the peak
	double *trace; // SNR at every sample (n)
} result;

static int
matched_filter(job *j, const detector *det, const double *x, size_t n,
    double fs, const double *dwin, const double complex *tfft, result *res)
{
	size_t          nfft = (size_t) (4 * fs); // 4 s Welch segments
	double         *psd  = malloc((nfft / 2 + 1) * sizeof(double));
	double         *pv   = malloc(n * sizeof(double));
	double complex *buf  = malloc(n * sizeof(double complex));
	double complex *dfft = malloc(n * sizeof(double complex));
	double         *snr  = malloc(n * sizeof(double));
	char            what[64];
	int             rv = FFTD_ENOMEM;
	if (psd == NULL || pv == NULL || buf == NULL || dfft == NULL
	    || snr == NULL) {
		goto out;
	}
	rv = welch_psd(j, x, n, fs, nfft, psd, det->name);
	if (rv != FFTD_OK) {
		goto out;
	}
	interp_psd(pv, n, psd, nfft);

	// data_fft = fft(data * dwindow) / fs; the data is real, promoted
	// to complex for the C2C.
	for (size_t i = 0; i < n; i++) {
		buf[i] = x[i] * dwin[i];
	}
	snprintf(what, sizeof(what), "%s data (C2C forward)", det->name);
	rv = c2c(j, buf, dfft, (int64_t) n, FFTD_FORWARD, FFTD_NORM_NONE, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	// optimal = data_fft * conj(template_fft) / psd; sigma^2 is the
	// template's own weighted power.
	double sigmasq = 0;
	for (size_t i = 0; i < n; i++) {
		buf[i] = dfft[i] / fs * conj(tfft[i]) / pv[i];
		sigmasq += (creal(tfft[i]) * creal(tfft[i])
		               + cimag(tfft[i]) * cimag(tfft[i]))
		    / pv[i];
	}
	double sigma = sqrt(fabs(sigmasq * (fs / (double) n)));

	// optimal_time = 2 * ifft(optimal) * fs, ifft normalised by 1/N.
	snprintf(
	    what, sizeof(what), "%s filter output (C2C inverse)", det->name);
	rv = c2c(j, buf, dfft, (int64_t) n, FFTD_INVERSE, FFTD_NORM_BY_N, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	// SNR = |roll(optimal_time / sigma, n/2)|: the peak then marks the
	// end of the template, whose merger sits at its middle.
	res->snr = -1;
	for (size_t i = 0; i < n; i++) {
		double complex v = 2 * dfft[(i + n - n / 2) % n] * fs;
		snr[i]           = cabs(v / sigma);
		if (snr[i] > res->snr) {
			res->snr   = snr[i];
			res->index = i;
		}
	}
	res->trace = snr;
	snr        = NULL;
out:
	free(psd);
	free(pv);
	free(buf);
	free(dfft);
	free(snr);
	return rv;
}

// --- plots ------------------------------------------------------------------

static bool
in_path(const char *prog)
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

// make_dirs is mkdir -p.
static int
make_dirs(const char *dir)
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

// plot_snr draws SNR against time around the event with gnuplot, the data
// inline. A plot is an extra: failures are reported, never fatal.
static void
plot_snr(const options *opt, const detector *det, const result *res, size_t n,
    double fs, double gps0)
{
	char name[64];
	snprintf(name, sizeof(name), "gw150914_%s_snr.png", det->name);
	char *out = join(opt->plot_dir, name);
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

// --- main -------------------------------------------------------------------

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
	if (missing_files(opt.data_dir) > 0) {
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
		char  *p  = join(opt.data_dir, detectors[d].file);
		size_t nd = 0;
		double dt = 0, g = 0;
		x[d] = p == NULL ? NULL : read_strain(p, &nd, &dt, &g);
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
	{
		char *p = join(opt.data_dir, files[2]);
		hid_t f
		    = p == NULL ? -1 : H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
		int     rank    = 0;
		hsize_t dims[2] = { 0, 0 };
		size_t  cnt     = 0;
		if (f >= 0) {
			tpl = read_dataset(f, p, "template", &rank, dims, &cnt);
			H5Fclose(f);
		} else {
			fprintf(stderr,
			    "gw150914: %s: not a readable HDF5 "
			    "file\n",
			    p != NULL ? p : files[2]);
		}
		if (tpl != NULL
		    && (rank != 2 || dims[0] != 2 || dims[1] != n)) {
			fprintf(stderr,
			    "gw150914: %s: template is not 2 x %zu\n", p, n);
			free(tpl);
			tpl = NULL;
		}
		free(p);
		if (tpl == NULL) {
			goto out;
		}
	}

	int rv = fftd_client_open(&j.client, opt.url, opt.timeout_ms);
	if (rv != FFTD_OK) {
		char url[256] = "";
		if (opt.url == NULL) {
			fftd_default_url(url, sizeof(url));
		}
		fail_fftd(opt.url != NULL ? opt.url : url, rv);
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
	tukey(dwin, n, 1.0 / 8);
	for (size_t i = 0; i < n; i++) {
		buf[i] = (tpl[i] + tpl[n + i] * I) * dwin[i];
	}
	if (c2c(&j, buf, tfft, (int64_t) n, FFTD_FORWARD, FFTD_NORM_NONE,
	        "template (C2C forward)")
	    != FFTD_OK) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		tfft[i] /= fs;
	}

	for (size_t d = 0; d < NDET; d++) {
		if (matched_filter(
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
		if (!in_path("gnuplot")) {
			fprintf(stderr,
			    "gw150914: gnuplot not found in PATH; "
			    "no plots\n");
		} else if (make_dirs(opt.plot_dir) != 0) {
			fprintf(stderr,
			    "gw150914: cannot create %s: %s; no "
			    "plots\n",
			    opt.plot_dir, strerror(errno));
		} else {
			for (size_t d = 0; d < NDET; d++) {
				plot_snr(
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

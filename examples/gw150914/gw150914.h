// SPDX-License-Identifier: MIT
//
// gw150914.h — PRIVATE to the GW150914 example (examples/gw150914/*.c
// include it; nothing else may). What its files share: the event and the
// --check windows, the options, the job (connection and the running
// daemon-vs-FFTW tally), a detector's result, and each file's calls.
//
// The example is a client of libfftd like any other program, so its
// internal names take a prefix of its own, gw_, not the library's fftd__.

#ifndef FFTD_EXAMPLE_GW150914_H
#define FFTD_EXAMPLE_GW150914_H

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fftd.h"

// The event (GWOSC BBH_events_v3.json, "tevent") and the --check windows.
#define EVENT_GPS 1126259462.44
#define CHECK_DT 0.010
#define PLOT_HALF_WIDTH 0.2

// detector is one LIGO site: its name, its strain file, the SNR range
// --check accepts.
typedef struct detector {
	const char *name;
	const char *file;
	double      snr_min, snr_max; // --check range
} detector;

// options are the command line's (gw150914 --help).
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

// result is one detector's matched-filter output.
typedef struct result {
	double  snr;   // peak SNR
	size_t  index; // sample of the peak
	double  gps;   // GPS time of the peak
	double *trace; // SNR at every sample (n)
} result;

// --- data.c: the GWOSC files
// ---------------------------------------------------

// GW_NFILES is the number of GWOSC files: H1 strain, L1 strain, template.
#define GW_NFILES 3

// gw_files names them, the template last.
extern const char *const gw_files[GW_NFILES];

// gw_join returns dir/name in a new string (malloc), or NULL.
char *gw_join(const char *dir, const char *name);

// gw_missing_files lists the GWOSC files absent from dir and says where to
// get them; returns the number missing.
int gw_missing_files(const char *dir);

// gw_read_strain reads strain/Strain (into a new array of *n doubles), its
// Xspacing (sample period, *dt) and meta/GPSstart (*gps) from the GWOSC
// file at path; NULL after saying why.
double *gw_read_strain(const char *path, size_t *n, double *dt, double *gps);

// gw_read_template reads the dataset "template" of the template file in
// data_dir: 2 x n doubles, the plus then the cross polarisation. NULL,
// after saying why, when it is missing or not 2 x n.
double *gw_read_template(const char *data_dir, size_t n);

// --- transform.c: transforms on the daemon, checked against FFTW ------------

// gw_fail_fftd says what failed, with the library's message for rv and the
// daemon's detail, and returns rv.
int gw_fail_fftd(const char *what, int rv);

// gw_r2c_batch computes batch real-to-complex transforms of size n
// (contiguous) on the daemon into out (batch x (n/2+1) complex), and
// compares with FFTW. Returns an fftd error code.
int gw_r2c_batch(job *j, const double *in, double complex *out, int64_t n,
    int64_t batch, const char *what);

// gw_c2c computes one complex transform of size n on the daemon, in
// direction dir with normalisation norm, and compares with FFTW. Returns
// an fftd error code.
int gw_c2c(job *j, const double complex *in, double complex *out, int64_t n,
    fftd_direction dir, fftd_norm norm, const char *what);

// --- filter.c: windows, PSD, matched filter ----------------------------------

// gw_tukey fills w with scipy.signal.windows.tukey(m, alpha) (symmetric).
void gw_tukey(double *w, size_t m, double alpha);

// gw_matched_filter runs the matched filter on one detector's strain x (n
// samples at fs) against the template's FFT tfft, with dwin the data's
// window; res gets the SNR series and its peak. Returns an fftd error code.
int gw_matched_filter(job *j, const detector *det, const double *x, size_t n,
    double fs, const double *dwin, const double complex *tfft, result *res);

// --- plot.c: gnuplot
// ----------------------------------------------------------

// gw_in_path says whether prog is an executable in a directory of $PATH.
bool gw_in_path(const char *prog);

// gw_make_dirs is mkdir -p; 0 or -1 (errno set).
int gw_make_dirs(const char *dir);

// gw_plot_snr draws SNR against time around the event (res->trace, n
// samples at fs from GPS gps0) into opt->plot_dir; failures are reported,
// never fatal.
void gw_plot_snr(const options *opt, const detector *det, const result *res,
    size_t n, double fs, double gps0);

#endif // FFTD_EXAMPLE_GW150914_H

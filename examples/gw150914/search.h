// SPDX-License-Identifier: MIT
//
// search.h — PRIVATE to the GW150914 template-bank search
// (examples/gw150914/search*.c include it; nothing else may). What its
// files share: the options, one detector's search input, the bank, one
// detector's results, and each file's calls. The search reuses gw_join,
// gw_in_path and gw_make_dirs of the single-template example (data.c,
// plot.c), hence gw150914.h; its own names take the prefix gs_.

#ifndef FFTD_EXAMPLE_GW150914_SEARCH_H
#define FFTD_EXAMPLE_GW150914_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"
#include "gw150914.h"

// PyCBC's DYN_RANGE_FAC (pycbc/__init__.py): f32 searches scale the data
// and the templates by it and the PSD by its square (fftd.h, fftd_mf_bank),
// so that D conj(h) / S (~1e-42 unscaled) stays a normal float; rho and
// sigma's ratio do not change. A power of two: the scaling is exact.
#define GS_DYN_RANGE_FAC 0x1p69

// GS_MAX_DET is the most search inputs (detectors) one run takes.
#define GS_MAX_DET 8

// gs_options are the command line's (gw150914-search --help).
typedef struct gs_options {
	const char    *url;
	int            timeout_ms;
	const char    *bank;
	const char    *inputs[GS_MAX_DET];
	int            ninputs;
	const char    *out;      // results (JSON); NULL: none
	const char    *plot_dir; // ρ(t) of the loudest template: .dat, .png
	bool           plot;     // run gnuplot
	fftd_precision precision;
	int64_t        slice; // templates per fftd_mf_bank request
	int64_t        count; // templates of the bank used (0: all)
	double         threshold;
	int64_t        cluster; // samples
	bool           quiet;   // no progress lines
} gs_options;

// gs_input is one detector's search input (pycbc_reference.py prepare):
// D and S over N/2+1 bins, the bins and samples searched.
typedef struct gs_input {
	char    name[16]; // detector ("H1"), from the file's attribute
	int64_t n;        // samples
	int64_t nbins;    // n/2 + 1
	double  delta_f, sample_rate, gps_start;
	int64_t kmin, kmax;     // bins used
	int64_t t_begin, t_end; // samples searched ([valid_start, valid_end))
	double *data;           // nbins complex (re, im), strain/Hz
	double *psd;            // nbins, 1/Hz
} gs_input;

// gs_bank is the bank's description; the templates themselves are read in
// slices (gs_read_templates) and go straight to the daemon.
typedef struct gs_bank {
	int64_t count; // templates used (the file's, or --count)
	int64_t nbins;
	double  delta_f;
	double *mass1, *mass2, *spin1z, *spin2z; // count each
	char    approximant[64];
} gs_bank;

// gs_result is one detector's search: every template's peak, the
// triggers, the loudest template's ρ(t), timings.
typedef struct gs_result {
	fftd_mf_peak    *peaks;    // bank count
	fftd_mf_trigger *triggers; // template_index into the whole bank
	size_t           ntriggers, ntotal; // kept, found
	int64_t          loudest;           // template
	double          *series;            // t_end - t_begin values: ρ(t)
	double           wall_s;            // the bank's requests, wall
	double           rate;              // templates per second
	int              requests;
} gs_result;

// --- search_io.c: the HDF5 files
// ---------------------------------------------

// gs_read_input reads one search input file; -1 after saying why.
int gs_read_input(const char *path, gs_input *in);

// gs_free_input frees what gs_read_input allocated.
void gs_free_input(gs_input *in);

// gs_open_bank opens the bank file, checks its shape against nbins and
// delta_f, and reads its parameters (count templates, or all if count is
// 0 or more than the file has). Returns the HDF5 file id or -1 after
// saying why; close it with gs_close_bank.
int64_t gs_open_bank(const char *path, int64_t count, int64_t nbins,
    double delta_f, gs_bank *bank);

// gs_close_bank closes the file and frees the parameters.
void gs_close_bank(int64_t file, gs_bank *bank);

// gs_read_templates reads templates [first, first + count) of the bank as
// complex64 (re, im) into buf (count x nbins x 2 floats); -1 after saying
// why.
int gs_read_templates(int64_t file, const gs_bank *bank, int64_t first,
    int64_t count, float *buf);

// --- search_out.c: the results file and the plot
// ------------------------------

// gs_write_json writes the run's results (per detector: the settings,
// the loudest template, every template's peak, the triggers) to path; -1
// after saying why.
int gs_write_json(const char *path, const gs_options *opt, const gs_bank *bank,
    const gs_input *in, const gs_result *res, int ndet, const char *server);

// gs_write_series writes the loudest template's ρ(t) of one detector as
// text (GPS time relative to the event, ρ) to dir/search_<det>_rho.dat,
// and with plot draws it with gnuplot into dir/search_<det>_rho.png.
// Failures are reported, never fatal: a plot is an extra.
void gs_write_series(const char *dir, bool plot, const gs_bank *bank,
    const gs_input *in, const gs_result *res);

#endif // FFTD_EXAMPLE_GW150914_SEARCH_H

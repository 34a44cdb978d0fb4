// SPDX-License-Identifier: MIT
//
// mf_driver.c — runs the fftw backend's matched-filter bank
// (daemon/backends/fftw_mf.c, fftd__fftw_mf_bank) on a GW150914 search
// input and a template bank, for tests/pycbc/check_mf.py to compare with
// PyCBC's own matched_filter on the same data, PSD and templates. It links
// the daemon's internals as a unit test does: no daemon, no client.
//
// Inputs: the search input of examples/gw150914/pycbc_reference.py
// `prepare` (HDF5: data_fft [N/2+1] complex128 = D, psd [N/2+1] float64 = S,
// attributes n_time, delta_f, kmin, kmax, valid_start, valid_end) and a bank
// of make_bank.py (HDF5: templates [K, N/2+1] complex64, attribute
// delta_f). The bank runs over bins [kmin, kmax) and samples [valid_start,
// valid_end), in f64 (data and PSD as stored, templates promoted exactly)
// and in f32 (data and templates times PyCBC's DYN_RANGE_FAC = 2^69, the PSD
// times its square, as pycbc_reference.py's --precision single does; rho
// does not change).
//
// Output: a JSON file (--json) with, per precision, the peaks (rho, t,
// sigma, z), the clustered triggers (--threshold, --cluster), ntotal and
// the time the bank took (wall and CPU seconds, without series); and with
// --series-out PREFIX the rho series of every template over [valid_start,
// valid_end) as raw little-endian PREFIX.f64 (float64) and PREFIX.f32
// (float32), [count][valid_end - valid_start].
//
//   mf_driver --input input-H1.h5 --bank bank.h5 --json out.json
//             [--count K] [--threshold 5.5] [--cluster 2048] [--threads 1]
//             [--series-out PREFIX]

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "backends/fftw_impl.h"
#include "mf.h"

// PyCBC's DYN_RANGE_FAC (pycbc/__init__.py): 2^69.
#define DYN_RANGE_FAC 0x1p69

// opts is the command line.
typedef struct opts {
	const char *input, *bank, *json, *series_out;
	int64_t     count, cluster;
	double      threshold;
	int         threads;
} opts;

// input is what the driver reads.
typedef struct input {
	int64_t n, nbins, kmin, kmax, v0, v1, count;
	double  delta_f;
	double *data;      // nbins complex (re, im)
	double *psd;       // nbins
	float  *templates; // count x nbins complex
} input;

static int
die(const char *what)
{
	fprintf(stderr, "mf_driver: %s\n", what);
	return 1;
}

// read_attr reads a scalar attribute of the file's root as type t.
static int
read_attr(hid_t f, const char *name, hid_t t, void *out)
{
	hid_t a = H5Aopen_by_name(f, "/", name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0) {
		fprintf(stderr, "mf_driver: attribute %s missing\n", name);
		return -1;
	}
	int rv = H5Aread(a, t, out) < 0 ? -1 : 0;
	H5Aclose(a);
	return rv;
}

// complex_type is an HDF5 memory type for h5py's complex numbers: the
// compound {r, i} of base.
static hid_t
complex_type(hid_t base, size_t size)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, 2 * size);
	H5Tinsert(t, "r", 0, base);
	H5Tinsert(t, "i", size, base);
	return t;
}

// read_rows reads rows [0, rows) of dataset name (rank 1 or 2, row length
// cols) as type t into buf; checks the dataset's shape first.
static int
read_rows(
    hid_t f, const char *name, hid_t t, int64_t rows, int64_t cols, void *buf)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	if (d < 0) {
		fprintf(stderr, "mf_driver: dataset %s missing\n", name);
		return -1;
	}
	hid_t   s       = H5Dget_space(d);
	int     rank    = H5Sget_simple_extent_ndims(s);
	hsize_t dims[2] = { 0, 0 };
	H5Sget_simple_extent_dims(s, dims, NULL);
	int rv = -1;
	if (rank == 1 && rows == 1 && (int64_t) dims[0] == cols) {
		rv = H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1
		                                                           : 0;
	} else if (rank == 2 && (int64_t) dims[0] >= rows
	    && (int64_t) dims[1] == cols) {
		hsize_t start[2] = { 0, 0 },
		        count[2] = { (hsize_t) rows, (hsize_t) cols };
		hid_t m          = H5Screate_simple(2, count, NULL);
		H5Sselect_hyperslab(
		    s, H5S_SELECT_SET, start, NULL, count, NULL);
		rv = H5Dread(d, t, m, s, H5P_DEFAULT, buf) < 0 ? -1 : 0;
		H5Sclose(m);
	} else {
		fprintf(stderr,
		    "mf_driver: %s has shape %llu x %llu, want %lld x %lld\n",
		    name, (unsigned long long) dims[0],
		    (unsigned long long) (rank > 1 ? dims[1] : 1),
		    (long long) rows, (long long) cols);
	}
	H5Sclose(s);
	H5Dclose(d);
	return rv;
}

// bank_size returns the number of templates in the bank file (-1: error).
static int64_t
bank_size(hid_t f)
{
	hid_t d = H5Dopen2(f, "templates", H5P_DEFAULT);
	if (d < 0) {
		return -1;
	}
	hid_t   s       = H5Dget_space(d);
	hsize_t dims[2] = { 0, 0 };
	H5Sget_simple_extent_dims(s, dims, NULL);
	H5Sclose(s);
	H5Dclose(d);
	return (int64_t) dims[0];
}

// read_input reads the search input and the first count templates.
static int
read_input(const opts *o, input *in)
{
	hid_t f = H5Fopen(o->input, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		return die("cannot open the input");
	}
	int rv = read_attr(f, "n_time", H5T_NATIVE_INT64, &in->n)
	    | read_attr(f, "delta_f", H5T_NATIVE_DOUBLE, &in->delta_f)
	    | read_attr(f, "kmin", H5T_NATIVE_INT64, &in->kmin)
	    | read_attr(f, "kmax", H5T_NATIVE_INT64, &in->kmax)
	    | read_attr(f, "valid_start", H5T_NATIVE_INT64, &in->v0)
	    | read_attr(f, "valid_end", H5T_NATIVE_INT64, &in->v1);
	if (rv == 0) {
		in->nbins = in->n / 2 + 1;
		in->data  = malloc(2 * (size_t) in->nbins * sizeof(double));
		in->psd   = malloc((size_t) in->nbins * sizeof(double));
		hid_t ct  = complex_type(H5T_NATIVE_DOUBLE, sizeof(double));
		rv        = in->data == NULL || in->psd == NULL
		    || read_rows(f, "data_fft", ct, 1, in->nbins, in->data)
		    || read_rows(
		        f, "psd", H5T_NATIVE_DOUBLE, 1, in->nbins, in->psd);
		H5Tclose(ct);
	}
	H5Fclose(f);
	if (rv != 0) {
		return die("cannot read the input");
	}
	f = H5Fopen(o->bank, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		return die("cannot open the bank");
	}
	double  df = 0;
	int64_t k  = bank_size(f);
	rv         = read_attr(f, "delta_f", H5T_NATIVE_DOUBLE, &df);
	in->count  = o->count > 0 && o->count < k ? o->count : k;
	if (rv == 0 && (k < 1 || df != in->delta_f)) {
		fprintf(stderr,
		    "mf_driver: bank of %lld, delta_f %g; input %g\n",
		    (long long) k, df, in->delta_f);
		rv = -1;
	}
	if (rv == 0) {
		size_t bytes
		    = 2 * (size_t) (in->count * in->nbins) * sizeof(float);
		in->templates = malloc(bytes);
		hid_t ct      = complex_type(H5T_NATIVE_FLOAT, sizeof(float));
		rv            = in->templates == NULL
		    || read_rows(f, "templates", ct, in->count, in->nbins,
		        in->templates);
		H5Tclose(ct);
	}
	H5Fclose(f);
	return rv != 0 ? die("cannot read the bank") : 0;
}

static double
seconds(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// run_one runs the bank in precision p, writes its JSON object to js and,
// with a prefix, the series file. Returns 0 or 1.
static int
run_one(fftd__device *dev, const opts *o, const input *in, fftd_precision p,
    FILE *js)
{
	bool   f64   = p == FFTD_F64;
	size_t real  = f64 ? sizeof(double) : sizeof(float);
	size_t nb    = (size_t) in->nbins;
	double scale = f64 ? 1 : DYN_RANGE_FAC;
	void  *data  = malloc(2 * nb * real);
	void  *psd   = malloc(nb * real);
	void  *tmpl  = malloc(2 * nb * (size_t) in->count * real);
	if (data == NULL || psd == NULL || tmpl == NULL) {
		return die("no memory");
	}
	for (size_t i = 0; i < 2 * nb; i++) {
		if (f64) {
			((double *) data)[i] = in->data[i];
		} else {
			((float *) data)[i] = (float) (in->data[i] * scale);
		}
	}
	for (size_t i = 0; i < nb; i++) {
		if (f64) {
			((double *) psd)[i] = in->psd[i];
		} else {
			((float *) psd)[i]
			    = (float) (in->psd[i] * scale * scale);
		}
	}
	for (size_t i = 0; i < 2 * nb * (size_t) in->count; i++) {
		if (f64) {
			((double *) tmpl)[i] = in->templates[i];
		} else {
			((float *) tmpl)[i]
			    = (float) (in->templates[i] * scale);
		}
	}
	int64_t       width = in->v1 - in->v0;
	size_t        maxt  = (size_t) (in->count * (width / o->cluster + 1));
	fftd__mf_args a     = { .n = in->n,
		    .precision     = p,
		    .delta_f       = in->delta_f,
		    .kmin          = in->kmin,
		    .kmax          = in->kmax,
		    .t_begin       = in->v0,
		    .t_end         = in->v1,
		    .threshold     = o->threshold,
		    .cluster       = o->cluster,
		    .data          = data,
		    .psd           = psd,
		    .templates     = tmpl,
		    .count         = in->count,
		    .max_triggers  = maxt };
	a.peaks             = calloc((size_t) in->count, sizeof(*a.peaks));
	a.triggers          = calloc(maxt, sizeof(*a.triggers));
	int64_t *idx        = calloc((size_t) in->count, sizeof(*idx));
	void    *series     = o->series_out != NULL
	           ? malloc((size_t) (in->count * width) * real)
	           : NULL;
	if (a.peaks == NULL || a.triggers == NULL || idx == NULL
	    || (o->series_out != NULL && series == NULL)) {
		return die("no memory");
	}
	char   msg[256] = "";
	double w0       = seconds(CLOCK_MONOTONIC);
	double c0       = seconds(CLOCK_PROCESS_CPUTIME_ID);
	int    rv       = fftd__fftw_mf_bank(dev, &a, msg, sizeof(msg));
	double wall     = seconds(CLOCK_MONOTONIC) - w0;
	double cpu      = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (rv == FFTD_OK && series != NULL) { // again, with the series
		for (int64_t j = 0; j < in->count; j++) {
			idx[j] = j;
		}
		a.series_index = idx;
		a.nseries      = (int) in->count;
		a.series       = series;
		rv             = fftd__fftw_mf_bank(dev, &a, msg, sizeof(msg));
	}
	if (rv != FFTD_OK) {
		fprintf(stderr, "mf_driver: %s: %s (%s)\n", f64 ? "f64" : "f32",
		    fftd_err_name(rv), msg);
		return 1;
	}
	fprintf(js,
	    "{\"precision\": \"%s\", \"scale\": %.17g, \"wall_s\": %.6f, "
	    "\"cpu_s\": %.6f, \"ntotal\": %zu,\n  \"peaks\": [",
	    f64 ? "f64" : "f32", scale, wall, cpu, a.ntotal);
	for (int64_t j = 0; j < in->count; j++) {
		const fftd__mf_peak *pk = &a.peaks[j];
		fprintf(js,
		    "%s\n    {\"rho\": %.17g, \"t\": %lld, \"sigma\": %.17g, "
		    "\"z_re\": %.17g, \"z_im\": %.17g}",
		    j ? "," : "", pk->rho, (long long) pk->t, pk->sigma,
		    pk->z_re, pk->z_im);
	}
	fprintf(js, "],\n  \"triggers\": [");
	for (size_t i = 0; i < a.ntriggers; i++) {
		const fftd__mf_trigger *t = &a.triggers[i];
		fprintf(js, "%s\n    [%lld, %lld, %.17g, %.17g, %.17g]",
		    i ? "," : "", (long long) t->template_index,
		    (long long) t->t, t->rho, t->z_re, t->z_im);
	}
	fprintf(js, "]}");
	if (series != NULL) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%s", o->series_out,
		    f64 ? "f64" : "f32");
		FILE  *sf = fopen(path, "wb");
		size_t n  = (size_t) (in->count * width);
		if (sf == NULL || fwrite(series, real, n, sf) != n
		    || fclose(sf) != 0) {
			return die("cannot write the series");
		}
	}
	free(data);
	free(psd);
	free(tmpl);
	free(a.peaks);
	free(a.triggers);
	free(idx);
	free(series);
	return 0;
}

static int
parse(int argc, char **argv, opts *o)
{
	*o = (opts) {
		.count = 16, .cluster = 2048, .threshold = 5.5, .threads = 1
	};
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (strcmp(k, "--input") == 0) {
			o->input = v;
		} else if (strcmp(k, "--bank") == 0) {
			o->bank = v;
		} else if (strcmp(k, "--json") == 0) {
			o->json = v;
		} else if (strcmp(k, "--series-out") == 0) {
			o->series_out = v;
		} else if (strcmp(k, "--count") == 0) {
			o->count = atoll(v);
		} else if (strcmp(k, "--cluster") == 0) {
			o->cluster = atoll(v);
		} else if (strcmp(k, "--threshold") == 0) {
			o->threshold = atof(v);
		} else if (strcmp(k, "--threads") == 0) {
			o->threads = atoi(v);
		} else {
			return -1;
		}
	}
	return argc % 2 == 1 && o->input && o->bank && o->json
	        && o->cluster >= 1 && o->threads >= 1
	    ? 0
	    : -1;
}

int
main(int argc, char **argv)
{
	opts o;
	if (parse(argc, argv, &o) != 0) {
		fprintf(stderr,
		    "usage: mf_driver --input INPUT.h5 --bank BANK.h5 --json "
		    "OUT.json [--count K] [--threshold X] [--cluster S] "
		    "[--threads T] [--series-out PREFIX]\n");
		return 2;
	}
	input in = { 0 };
	if (read_input(&o, &in) != 0) {
		return 1;
	}
	fftd__backend_config cfg = { .fftw_threads = o.threads };
	fftd__device         dev = { .backend = &fftd__backend_fftw };
	char                 msg[256];
	if (fftd__backend_fftw.open(&dev, &cfg, msg, sizeof(msg)) != FFTD_OK) {
		return die(msg);
	}
	FILE *js = fopen(o.json, "w");
	if (js == NULL) {
		return die("cannot write the JSON");
	}
	fprintf(js,
	    "{\"n\": %lld, \"kmin\": %lld, \"kmax\": %lld, \"t_begin\": %lld, "
	    "\"t_end\": %lld, \"count\": %lld, \"threshold\": %.17g, "
	    "\"cluster\": %lld, \"threads\": %d,\n \"runs\": [",
	    (long long) in.n, (long long) in.kmin, (long long) in.kmax,
	    (long long) in.v0, (long long) in.v1, (long long) in.count,
	    o.threshold, (long long) o.cluster, o.threads);
	int rv = run_one(&dev, &o, &in, FFTD_F64, js);
	fprintf(js, ",\n ");
	rv = rv || run_one(&dev, &o, &in, FFTD_F32, js);
	fprintf(js, "]}\n");
	if (fclose(js) != 0) {
		rv = die("cannot write the JSON");
	}
	fftd__backend_fftw.close(&dev);
	free(in.data);
	free(in.psd);
	free(in.templates);
	return rv;
}

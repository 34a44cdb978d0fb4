// SPDX-License-Identifier: MIT
//
// search_io.c — the search's HDF5 inputs: one detector's search input
// (examples/gw150914/pycbc_reference.py `prepare`: data_fft, psd and the
// attributes naming N, delta_f, the bins and samples searched, the GPS
// start, the detector) and the template bank (make_bank.py: templates
// [K, N/2+1] complex64, mass1/mass2/spin1z/spin2z [K], attributes delta_f
// and approximant). The bank is read in slices of rows, so a bank larger
// than the host's memory still streams to the daemon. h5py stores complex
// numbers as the compound {r, i}; the memory types below say the same.

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

// complex_type is the HDF5 memory type of h5py's complex numbers of base
// (size bytes each part): the compound {r, i}.
static hid_t
complex_type(hid_t base, size_t size)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, 2 * size);
	H5Tinsert(t, "r", 0, base);
	H5Tinsert(t, "i", size, base);
	return t;
}

// read_attr reads the root's scalar attribute name as type t into out;
// -1 after saying which is missing.
static int
read_attr(hid_t f, const char *path, const char *name, hid_t t, void *out)
{
	hid_t a = H5Aopen_by_name(f, "/", name, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0) {
		fprintf(stderr, "gw150914-search: %s: attribute %s missing\n",
		    path, name);
		return -1;
	}
	int rv = H5Aread(a, t, out) < 0 ? -1 : 0;
	H5Aclose(a);
	if (rv != 0) {
		fprintf(stderr, "gw150914-search: %s: cannot read %s\n", path,
		    name);
	}
	return rv;
}

// read_string_attr copies the root's string attribute name (variable or
// fixed length, as h5py writes them) into buf; "" when it is absent.
static void
read_string_attr(hid_t f, const char *name, char *buf, size_t len)
{
	buf[0]  = '\0';
	hid_t a = H5Aexists(f, name) > 0 ? H5Aopen(f, name, H5P_DEFAULT) : -1;
	if (a < 0) {
		return;
	}
	hid_t ft = H5Aget_type(a);
	if (H5Tget_class(ft) == H5T_STRING) {
		hid_t mt = H5Tcopy(H5T_C_S1);
		H5Tset_cset(mt, H5Tget_cset(ft));
		if (H5Tis_variable_str(ft) > 0) {
			char *s = NULL;
			H5Tset_size(mt, H5T_VARIABLE);
			if (H5Aread(a, mt, &s) >= 0 && s != NULL) {
				snprintf(buf, len, "%s", s);
				H5free_memory(s);
			}
		} else {
			size_t n   = H5Tget_size(ft);
			char  *tmp = calloc(n + 1, 1);
			H5Tset_size(mt, n + 1);
			if (tmp != NULL && H5Aread(a, mt, tmp) >= 0) {
				snprintf(buf, len, "%s", tmp);
			}
			free(tmp);
		}
		H5Tclose(mt);
	}
	H5Tclose(ft);
	H5Aclose(a);
}

// read_vector reads the rank-1 dataset name, of at least n elements, as
// type t: its first n into buf. -1 after saying why.
static int
read_vector(
    hid_t f, const char *path, const char *name, hid_t t, int64_t n, void *buf)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	if (d < 0) {
		fprintf(stderr, "gw150914-search: %s: dataset %s missing\n",
		    path, name);
		return -1;
	}
	hid_t   s      = H5Dget_space(d);
	hsize_t dim[1] = { 0 };
	int     rank   = H5Sget_simple_extent_ndims(s);
	H5Sget_simple_extent_dims(s, dim, NULL);
	int rv = -1;
	if (rank == 1 && (int64_t) dim[0] >= n) {
		hsize_t start[1] = { 0 }, cnt[1] = { (hsize_t) n };
		hid_t   m = H5Screate_simple(1, cnt, NULL);
		H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, cnt, NULL);
		rv = H5Dread(d, t, m, s, H5P_DEFAULT, buf) < 0 ? -1 : 0;
		H5Sclose(m);
	}
	if (rv != 0) {
		fprintf(stderr,
		    "gw150914-search: %s: cannot read %lld values of %s\n",
		    path, (long long) n, name);
	}
	H5Sclose(s);
	H5Dclose(d);
	return rv;
}

// gs_read_input reads one search input file and checks that its figures
// describe a search the daemon can run (even N, bins and samples in
// range); -1 after saying why.
int
gs_read_input(const char *path, gs_input *in)
{
	memset(in, 0, sizeof(*in));
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		fprintf(stderr, "gw150914-search: cannot open %s\n", path);
		return -1;
	}
	int rv = read_attr(f, path, "n_time", H5T_NATIVE_INT64, &in->n)
	    || read_attr(f, path, "delta_f", H5T_NATIVE_DOUBLE, &in->delta_f)
	    || read_attr(
	        f, path, "sample_rate", H5T_NATIVE_DOUBLE, &in->sample_rate)
	    || read_attr(
	        f, path, "gps_start", H5T_NATIVE_DOUBLE, &in->gps_start)
	    || read_attr(f, path, "kmin", H5T_NATIVE_INT64, &in->kmin)
	    || read_attr(f, path, "kmax", H5T_NATIVE_INT64, &in->kmax)
	    || read_attr(f, path, "valid_start", H5T_NATIVE_INT64, &in->t_begin)
	    || read_attr(f, path, "valid_end", H5T_NATIVE_INT64, &in->t_end);
	if (rv == 0) {
		read_string_attr(f, "detector", in->name, sizeof(in->name));
		if (in->name[0] == '\0') {
			snprintf(in->name, sizeof(in->name), "?");
		}
		in->nbins = in->n / 2 + 1;
		if (in->n < 2 || in->n % 2 != 0 || in->n > INT32_MAX
		    || !(in->delta_f > 0) || !(in->sample_rate > 0)
		    || in->kmin < 0 || in->kmin >= in->kmax
		    || in->kmax > in->nbins || in->t_begin < 0
		    || in->t_begin >= in->t_end || in->t_end > in->n) {
			fprintf(stderr,
			    "gw150914-search: %s: unexpected figures (N %lld, "
			    "bins [%lld, %lld), samples [%lld, %lld))\n",
			    path, (long long) in->n, (long long) in->kmin,
			    (long long) in->kmax, (long long) in->t_begin,
			    (long long) in->t_end);
			rv = -1;
		}
	}
	if (rv == 0) {
		in->data = malloc(2 * (size_t) in->nbins * sizeof(double));
		in->psd  = malloc((size_t) in->nbins * sizeof(double));
		hid_t ct = complex_type(H5T_NATIVE_DOUBLE, sizeof(double));
		rv       = in->data == NULL || in->psd == NULL
		    || read_vector(f, path, "data_fft", ct, in->nbins, in->data)
		    || read_vector(
		        f, path, "psd", H5T_NATIVE_DOUBLE, in->nbins, in->psd);
		H5Tclose(ct);
	}
	H5Fclose(f);
	if (rv != 0) {
		gs_free_input(in);
		return -1;
	}
	return 0;
}

// gs_free_input frees what gs_read_input allocated.
void
gs_free_input(gs_input *in)
{
	free(in->data);
	free(in->psd);
	in->data = NULL;
	in->psd  = NULL;
}

// gs_open_bank opens the bank, checks the templates' shape and delta_f
// against the input's, and reads the parameters of the templates used.
int64_t
gs_open_bank(const char *path, int64_t count, int64_t nbins, double delta_f,
    gs_bank *bank)
{
	memset(bank, 0, sizeof(*bank));
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		fprintf(
		    stderr, "gw150914-search: cannot open the bank %s\n", path);
		return -1;
	}
	hsize_t dims[2] = { 0, 0 };
	int     rank    = -1;
	hid_t   d       = H5Dopen2(f, "templates", H5P_DEFAULT);
	if (d >= 0) {
		hid_t s = H5Dget_space(d);
		rank    = H5Sget_simple_extent_ndims(s);
		H5Sget_simple_extent_dims(s, dims, NULL);
		H5Sclose(s);
		H5Dclose(d);
	}
	double df = 0;
	int    rv = read_attr(f, path, "delta_f", H5T_NATIVE_DOUBLE, &df);
	if (rv == 0
	    && (rank != 2 || dims[0] < 1 || (int64_t) dims[1] != nbins
	        || fabs(df - delta_f) > 1e-12 * delta_f)) {
		fprintf(stderr,
		    "gw150914-search: %s: templates %llu x %llu with delta_f "
		    "%g; the input has %lld bins, delta_f %g\n",
		    path, (unsigned long long) dims[0],
		    (unsigned long long) dims[1], df, (long long) nbins,
		    delta_f);
		rv = -1;
	}
	if (rv == 0) {
		bank->count   = count > 0 && count < (int64_t) dims[0]
		      ? count
		      : (int64_t) dims[0];
		bank->nbins   = nbins;
		bank->delta_f = df;
		read_string_attr(f, "approximant", bank->approximant,
		    sizeof(bank->approximant));
		size_t bytes = (size_t) bank->count * sizeof(double);
		bank->mass1  = malloc(bytes);
		bank->mass2  = malloc(bytes);
		bank->spin1z = malloc(bytes);
		bank->spin2z = malloc(bytes);
		hid_t t      = H5T_NATIVE_DOUBLE;
		rv           = bank->mass1 == NULL || bank->mass2 == NULL
		    || bank->spin1z == NULL || bank->spin2z == NULL
		    || read_vector(
		        f, path, "mass1", t, bank->count, bank->mass1)
		    || read_vector(
		        f, path, "mass2", t, bank->count, bank->mass2)
		    || read_vector(
		        f, path, "spin1z", t, bank->count, bank->spin1z)
		    || read_vector(
		        f, path, "spin2z", t, bank->count, bank->spin2z);
	}
	if (rv != 0) {
		gs_close_bank(f, bank);
		return -1;
	}
	return f;
}

// gs_close_bank closes the bank file (if open) and frees the parameters.
void
gs_close_bank(int64_t file, gs_bank *bank)
{
	if (file >= 0) {
		H5Fclose((hid_t) file);
	}
	free(bank->mass1);
	free(bank->mass2);
	free(bank->spin1z);
	free(bank->spin2z);
	bank->mass1 = bank->mass2 = bank->spin1z = bank->spin2z = NULL;
}

// gs_read_templates reads rows [first, first + count) of the templates.
int
gs_read_templates(
    int64_t file, const gs_bank *bank, int64_t first, int64_t count, float *buf)
{
	hid_t d = H5Dopen2((hid_t) file, "templates", H5P_DEFAULT);
	if (d < 0) {
		fprintf(stderr, "gw150914-search: the bank has no templates\n");
		return -1;
	}
	hid_t   s        = H5Dget_space(d);
	hsize_t start[2] = { (hsize_t) first, 0 };
	hsize_t cnt[2]   = { (hsize_t) count, (hsize_t) bank->nbins };
	hid_t   m        = H5Screate_simple(2, cnt, NULL);
	hid_t   ct       = complex_type(H5T_NATIVE_FLOAT, sizeof(float));
	int     rv
	    = H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0
	        || H5Dread(d, ct, m, s, H5P_DEFAULT, buf) < 0
	    ? -1
	    : 0;
	if (rv != 0) {
		fprintf(stderr,
		    "gw150914-search: cannot read templates %lld to %lld\n",
		    (long long) first, (long long) (first + count - 1));
	}
	H5Tclose(ct);
	H5Sclose(m);
	H5Sclose(s);
	H5Dclose(d);
	return rv;
}

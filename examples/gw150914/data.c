// SPDX-License-Identifier: MIT
//
// data.c — the example's input: the three GWOSC HDF5 files (the H1 and L1
// strain with its sample period and start time, and the template's two
// polarisations), and what to say when they are missing. What is done with
// them is filter.c's and transform.c's; gw150914.c checks that both
// detectors cover the same samples.

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "gw150914.h"

// gw_files names the GWOSC files the example reads, the template last.
const char *const gw_files[GW_NFILES] = {
	"H-H1_LOSC_4_V2-1126259446-32.hdf5",
	"L-L1_LOSC_4_V2-1126259446-32.hdf5",
	"GW150914_4_template.hdf5",
};

// gw_join returns dir/name in a new string (malloc), or NULL.
char *
gw_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + 1 + strlen(name) + 1;
	char  *p = malloc(n);
	if (p != NULL) {
		snprintf(p, n, "%s/%s", dir, name);
	}
	return p;
}

// gw_missing_files lists the GWOSC files absent from dir and says where to get
// them; returns the number missing.
int
gw_missing_files(const char *dir)
{
	int missing = 0;
	for (size_t i = 0; i < sizeof(gw_files) / sizeof(gw_files[0]); i++) {
		char *p = gw_join(dir, gw_files[i]);
		if (p == NULL || access(p, R_OK) != 0) {
			if (missing++ == 0) {
				fprintf(stderr,
				    "gw150914: data files missing in %s:\n",
				    dir);
			}
			fprintf(stderr, "  %s\n", gw_files[i]);
		}
		free(p);
	}
	if (missing > 0) {
		fprintf(stderr,
		    "They are public (CC BY 4.0) from the Gravitational Wave "
		    "Open Science Center,\n"
		    "https://gwosc.org, event GW150914 (file names as in "
		    "BBH_events_v3.json), e.g.:\n");
		for (size_t i = 0; i < sizeof(gw_files) / sizeof(gw_files[0]);
		     i++) {
			fprintf(stderr,
			    "  curl -fLO "
			    "https://gwosc.org/s/events/GW150914/%s\n",
			    gw_files[i]);
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

// gw_read_strain reads strain/Strain, its Xspacing (sample period) and
// meta/GPSstart from a GWOSC file.
double *
gw_read_strain(const char *path, size_t *n, double *dt, double *gps)
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

// gw_read_template reads the dataset "template" of the template file in
// data_dir: 2 x n doubles, the plus then the cross polarisation. NULL,
// after saying why, when it is missing or not 2 x n.
double *
gw_read_template(const char *data_dir, size_t n)
{
	double *tpl  = NULL;
	char   *p    = gw_join(data_dir, gw_files[2]);
	hid_t   f    = p == NULL ? -1 : H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
	int     rank = 0;
	hsize_t dims[2] = { 0, 0 };
	size_t  cnt     = 0;
	if (f >= 0) {
		tpl = read_dataset(f, p, "template", &rank, dims, &cnt);
		H5Fclose(f);
	} else {
		fprintf(stderr,
		    "gw150914: %s: not a readable HDF5 "
		    "file\n",
		    p != NULL ? p : gw_files[2]);
	}
	if (tpl != NULL && (rank != 2 || dims[0] != 2 || dims[1] != n)) {
		fprintf(
		    stderr, "gw150914: %s: template is not 2 x %zu\n", p, n);
		free(tpl);
		tpl = NULL;
	}
	free(p);
	return tpl;
}

// SPDX-License-Identifier: MIT
//
// array.c — the arrays of fftctl fft: reading IN (numpy .npy through
// npy.c, or raw elements described by --shape, --precision, --complex),
// promoting real input to complex, and writing OUT (.npy or raw). The
// transform itself, and the checks of IN against the options, are fft.c's.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fftctl.h"

// fftd__ctl_elem_size is the size in bytes of one element.
size_t
fftd__ctl_elem_size(fftd_precision p, bool complex)
{
	size_t r = p == FFTD_F64 ? 8 : p == FFTD_F32 ? 4 : 2;
	return complex ? 2 * r : r;
}

// fftd__ctl_array_elem_size is the size of one of a's elements: an int8
// element is one byte, or an (re, im) pair of two.
size_t
fftd__ctl_array_elem_size(const array *a)
{
	if (a->i8) {
		return a->complex ? 2 : 1;
	}
	return fftd__ctl_elem_size(a->prec, a->complex);
}

// fftd__ctl_parse_shape parses --shape AxBx.. (or A,B,..) into a->shape
// and a->ndim: 1 to FFTD__NPY_MAX_NDIM positive sizes.
bool
fftd__ctl_parse_shape(const char *s, array *a)
{
	a->ndim = 0;
	for (const char *p = s;;) {
		char *end;
		errno       = 0;
		long long v = strtoll(p, &end, 10);
		if (errno != 0 || end == p || v < 1
		    || a->ndim == FFTD__NPY_MAX_NDIM) {
			return false;
		}
		a->shape[a->ndim++] = v;
		if (*end == '\0') {
			return true;
		}
		if (*end != 'x' && *end != ',') {
			return false;
		}
		p = end + 1;
	}
}

// fftd__ctl_count_elems sets a->nelems from the shape, refusing overflow.
bool
fftd__ctl_count_elems(array *a)
{
	size_t n = 1;
	for (int k = 0; k < a->ndim; k++) {
		if (a->shape[k] < 0
		    || __builtin_mul_overflow(n, (size_t) a->shape[k], &n)) {
			return false;
		}
	}
	size_t b;
	if (__builtin_mul_overflow(n, fftd__ctl_array_elem_size(a), &b)) {
		return false;
	}
	a->nelems = n;
	return true;
}

// fftd__ctl_load_raw reads a raw IN whose shape, precision and complexity
// a already holds; the file size must match them exactly.
int
fftd__ctl_load_raw(const char *path, array *a)
{
	if (!fftd__ctl_count_elems(a)) {
		fprintf(stderr, "fftctl fft: --shape is too large\n");
		return EXIT_USAGE;
	}
	size_t      want = a->nelems * fftd__ctl_array_elem_size(a);
	FILE       *f    = fopen(path, "rb");
	struct stat st;
	if (f == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, strerror(errno));
		if (f != NULL) {
			fclose(f);
		}
		return EXIT_ERROR;
	}
	// The shape must account for the whole file: a mismatch is almost
	// always a wrong --shape, --precision or --complex.
	if (S_ISREG(st.st_mode) && (uint64_t) st.st_size != want) {
		fprintf(stderr,
		    "fftctl fft: %s holds %lld bytes; --shape, --precision and "
		    "--complex say %zu\n",
		    path, (long long) st.st_size, want);
		fclose(f);
		return EXIT_ERROR;
	}
	a->data = malloc(want ? want : 1);
	if (a->data == NULL || fread(a->data, 1, want, f) != want) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path,
		    a->data == NULL ? "out of memory"
		                    : "file shorter than --shape says");
		fclose(f);
		return EXIT_ERROR;
	}
	fclose(f);
	return EXIT_OK;
}

// fftd__ctl_load_npy reads IN; an <f2 array is complex half when the
// transform takes complex input (c2c, c2r), its trailing axis of 2 then
// being (re, im).
int
fftd__ctl_load_npy(const char *path, fftd_kind kind, array *a)
{
	fftd__npy arr;
	char      msg[256];
	int       rv = fftd__npy_load(path, &arr, msg, sizeof(msg));
	if (rv != FFTD__NPY_OK) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, msg);
		return EXIT_ERROR;
	}
	a->ndim = arr.ndim;
	memcpy(a->shape, arr.shape, sizeof(a->shape));
	switch (arr.dtype) {
	case FFTD__NPY_C16:
		a->prec    = FFTD_F64;
		a->complex = true;
		break;
	case FFTD__NPY_C8:
		a->prec    = FFTD_F32;
		a->complex = true;
		break;
	case FFTD__NPY_F8:
		a->prec    = FFTD_F64;
		a->complex = false;
		break;
	case FFTD__NPY_F4:
		a->prec    = FFTD_F32;
		a->complex = false;
		break;
	case FFTD__NPY_I1:
		// int8: the plan's precision is --precision's (fft.c).
		a->i8      = true;
		a->complex = kind != FFTD_R2C;
		break;
	case FFTD__NPY_F2:
		a->prec    = FFTD_F16;
		a->complex = kind != FFTD_R2C;
		break;
	}
	// Complex int8 and f16 have no numpy dtype: a trailing axis of 2
	// holds (re, im).
	bool pairs = (arr.dtype == FFTD__NPY_I1 || arr.dtype == FFTD__NPY_F2)
	    && a->complex;
	if (pairs) {
		if (a->ndim < 2 || a->shape[a->ndim - 1] != 2) {
			fprintf(stderr,
			    "fftctl fft: %s: complex %s input is %s with a "
			    "trailing axis of 2 (re, im); this array's shape "
			    "does not end in 2\n",
			    path, a->i8 ? "int8" : "f16",
			    a->i8 ? "int8" : "<f2");
			fftd__npy_free(&arr);
			return EXIT_ERROR;
		}
		a->ndim--;
	}
	a->nelems = arr.nelems / (pairs ? 2 : 1);
	a->data   = arr.data; // ownership moves to a
	return EXIT_OK;
}

// fftd__ctl_promote turns real elements into complex ones with zero
// imaginary part.
bool
fftd__ctl_promote(array *a)
{
	size_t         r = fftd__ctl_elem_size(a->prec, false);
	unsigned char *c = calloc(a->nelems ? a->nelems : 1, 2 * r);
	if (c == NULL) {
		return false;
	}
	for (size_t i = 0; i < a->nelems; i++) {
		memcpy(c + 2 * r * i, (unsigned char *) a->data + r * i, r);
	}
	free(a->data);
	a->data    = c;
	a->complex = true;
	return true;
}

// fftd__ctl_save_output writes OUT: as .npy when path ends in .npy
// (complex f16 as <f2 with a trailing axis of 2), else raw elements.
int
fftd__ctl_save_output(const char *path, const array *o, bool verbose)
{
	size_t len = strlen(path);
	if (len >= 4 && strcmp(path + len - 4, ".npy") == 0) {
		fftd__npy_dtype dt;
		int64_t         shape[FFTD__NPY_MAX_NDIM + 1];
		int             nd = o->ndim;
		memcpy(shape, o->shape, sizeof(int64_t) * (size_t) nd);
		switch (o->prec) {
		case FFTD_F64:
			dt = o->complex ? FFTD__NPY_C16 : FFTD__NPY_F8;
			break;
		case FFTD_F32:
			dt = o->complex ? FFTD__NPY_C8 : FFTD__NPY_F4;
			break;
		default:
			dt = FFTD__NPY_F2;
			if (o->complex) {
				shape[nd++] = 2; // numpy has no complex half
			}
			break;
		}
		char msg[256];
		int  rv = fftd__npy_save(
		     path, dt, nd, shape, o->data, msg, sizeof(msg));
		if (rv != FFTD__NPY_OK) {
			fprintf(stderr, "fftctl fft: %s: %s\n", path, msg);
			return EXIT_ERROR;
		}
		return EXIT_OK;
	}
	size_t bytes = o->nelems * fftd__ctl_elem_size(o->prec, o->complex);
	FILE  *f     = fopen(path, "wb");
	bool   ok    = f != NULL && fwrite(o->data, 1, bytes, f) == bytes;
	if (f != NULL && fclose(f) != 0) {
		ok = false;
	}
	if (!ok) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, strerror(errno));
		return EXIT_ERROR;
	}
	if (verbose) {
		fprintf(stderr, "fftctl fft: %s: raw %s%s, shape", path,
		    fftd__ctl_prec_name[o->prec], o->complex ? " complex" : "");
		for (int k = 0; k < o->ndim; k++) {
			fprintf(
			    stderr, "%s%" PRId64, k ? "x" : " ", o->shape[k]);
		}
		fprintf(stderr, "\n");
	}
	return EXIT_OK;
}

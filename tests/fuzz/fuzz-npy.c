// SPDX-License-Identifier: MIT
//
// fuzz-npy.c — libFuzzer target for fftctl's .npy reader (fftctl/npy.c,
// fftd__npy_fread). The input is a whole file, read from a memfd as fftctl
// reads a file from disk (a regular file, so the reader can compare what
// a header promises with what the file holds). An array that reads must
// be what its header says (sizes that multiply out, no more data than the
// file holds), and must read back the same after fftd__npy_fwrite.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// memfd_file returns a read-write stream on a new memfd.
static FILE *
memfd_file(const char *name)
{
	int   fd = memfd_create(name, MFD_CLOEXEC);
	FILE *f  = fd >= 0 ? fdopen(fd, "w+b") : NULL;
	if (f == NULL) {
		abort();
	}
	return f;
}

// refill makes f hold exactly size bytes of data, positioned at the start.
static void
refill(FILE *f, const uint8_t *data, size_t size)
{
	rewind(f);
	if (ftruncate(fileno(f), 0) != 0
	    || (size > 0
	        && pwrite(fileno(f), data, size, 0) != (ssize_t) size)) {
		abort();
	}
	rewind(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *in, *out;
	if (in == NULL) {
		in  = memfd_file("fuzz-npy-in");
		out = memfd_file("fuzz-npy-out");
	}
	refill(in, data, size);
	fftd__npy a;
	char      msg[256] = "";
	int       rv       = fftd__npy_fread(in, &a, msg, sizeof(msg));
	if (memchr(msg, '\0', sizeof(msg)) == NULL) {
		abort();
	}
	if (rv != FFTD__NPY_OK) {
		if (a.data != NULL || a.nbytes != 0) {
			abort(); // "on failure *arr holds no memory"
		}
		return 0;
	}
	size_t n = 1;
	for (int k = 0; k < a.ndim; k++) {
		n *= (size_t) a.shape[k];
	}
	if (a.ndim < 0 || a.ndim > FFTD__NPY_MAX_NDIM || n != a.nelems
	    || a.nbytes != n * fftd__npy_dtype_size(a.dtype)
	    || a.nbytes > size) {
		abort();
	}
	// What was read writes and reads back the same.
	refill(out, NULL, 0);
	if (fftd__npy_fwrite(
	        out, a.dtype, a.ndim, a.shape, a.data, msg, sizeof(msg))
	        != FFTD__NPY_OK
	    || fflush(out) != 0) {
		abort();
	}
	rewind(out);
	fftd__npy b;
	if (fftd__npy_fread(out, &b, msg, sizeof(msg)) != FFTD__NPY_OK
	    || b.dtype != a.dtype || b.ndim != a.ndim || b.nbytes != a.nbytes
	    || memcmp(b.shape, a.shape, sizeof(a.shape)) != 0
	    || (a.nbytes > 0 && memcmp(b.data, a.data, a.nbytes) != 0)) {
		abort();
	}
	fftd__npy_free(&a);
	fftd__npy_free(&b);
	return 0;
}

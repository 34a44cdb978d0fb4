// SPDX-License-Identifier: MIT
//
// npy.h — PRIVATE to fftctl (not installed): fftctl/*.c include it, and so
// do the tests that link npy.c (tests/unit/test_npy.c,
// tests/gpu/test_tc_fftctl.c, tests/fuzz/). Reads and writes numpy .npy
// files so that fftctl's inputs and outputs are what numpy.load and
// numpy.save exchange. Only what an FFT needs is supported: little-endian
// C-order arrays of f8, f4, f2, c16 and c8, rank 0 to 4. Headers come from
// files we did not write, so parsing is bounded and every size is checked
// for overflow before anything is allocated.

#ifndef FFTD_FFTCTL_NPY_H
#define FFTD_FFTCTL_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// FFTD__NPY_MAX_NDIM is the largest rank read or written.
#define FFTD__NPY_MAX_NDIM 4

// FFTD__NPY_MAX_HEADER bounds the header length accepted on read (numpy
// itself refuses more than 10000 bytes by default; version 2.0 exists only
// for headers over 65535 bytes, so allow those, but not without limit).
#define FFTD__NPY_MAX_HEADER (1u << 20)

// FFTD__NPY_ERRNO_MAP is the table of npy error codes: X(name, value, msg).
#define FFTD__NPY_ERRNO_MAP(X)                                                 \
	X(OK, 0, "success")                                                    \
	X(EIO, 1, "read or write error")                                       \
	X(ENOMEM, 2, "out of memory")                                          \
	X(EMAGIC, 3, "not a .npy file")                                        \
	X(EVERSION, 4, "unsupported .npy format version")                      \
	X(EHEADER, 5, "malformed .npy header")                                 \
	X(EDTYPE, 6, "unsupported dtype")                                      \
	X(EOBJECT, 7, "object arrays are not supported")                       \
	X(EBYTEORDER, 8, "big-endian data is not supported")                   \
	X(EFORTRAN, 9, "Fortran-order arrays are not supported")               \
	X(ERANK, 10, "too many dimensions")                                    \
	X(EOVERFLOW, 11, "array size overflows")                               \
	X(ETRUNC, 12, "file is shorter than its header says")                  \
	X(EINVAL, 13, "invalid argument")

// fftd__npy_error lists the codes of FFTD__NPY_ERRNO_MAP.
typedef enum fftd__npy_error {
#define FFTD__NPY_ENUM(name, value, msg) FFTD__NPY_##name = value,
	FFTD__NPY_ERRNO_MAP(FFTD__NPY_ENUM)
#undef FFTD__NPY_ENUM
} fftd__npy_error;

// fftd__npy_dtype is an element type, named after numpy's descr.
typedef enum fftd__npy_dtype {
	FFTD__NPY_F8 = 0, // <f8 float64
	FFTD__NPY_F4,     // <f4 float32
	FFTD__NPY_F2,     // <f2 float16 (IEEE binary16 bits)
	FFTD__NPY_C16,    // <c16 complex128
	FFTD__NPY_C8,     // <c8 complex64
	FFTD__NPY_I1,     // |i1 int8 (fftctl fft --input i8)
} fftd__npy_dtype;

// fftd__npy is an array in memory: C order, little-endian host layout.
typedef struct fftd__npy {
	fftd__npy_dtype dtype;
	int             ndim;                      // 0 .. FFTD__NPY_MAX_NDIM
	int64_t         shape[FFTD__NPY_MAX_NDIM]; // shape[0] slowest varying
	size_t          nelems; // product of shape (1 for ndim 0)
	size_t          nbytes; // nelems * item size
	void           *data;   // nbytes bytes, owned (malloc)
} fftd__npy;

// fftd__npy_strerror returns a static message for a code. Never NULL.
const char *fftd__npy_strerror(int err);

// fftd__npy_dtype_size returns the item size in bytes of dtype (0 if
// unknown); fftd__npy_dtype_descr its numpy descr ("<f8"), or NULL.
size_t      fftd__npy_dtype_size(fftd__npy_dtype dtype);
const char *fftd__npy_dtype_descr(fftd__npy_dtype dtype);

// fftd__npy_fread reads a whole .npy array from f into *arr, which the
// caller later releases with fftd__npy_free. On failure *arr holds no
// memory, the code is returned and a one-line reason is written to msg
// (NULL allowed). Bytes after the array are ignored, as numpy does.
int fftd__npy_fread(FILE *f, fftd__npy *arr, char *msg, size_t msglen);

// fftd__npy_load opens path and calls fftd__npy_fread.
int fftd__npy_load(const char *path, fftd__npy *arr, char *msg, size_t msglen);

// fftd__npy_fwrite writes an array of dtype and shape (ndim sizes) whose
// elements are at data (C order) to f, as format version 1.0, or 2.0 when
// the header does not fit 1.0. data is not retained.
int fftd__npy_fwrite(FILE *f, fftd__npy_dtype dtype, int ndim,
    const int64_t *shape, const void *data, char *msg, size_t msglen);

// fftd__npy_save creates (or truncates) path and calls fftd__npy_fwrite;
// a failed write is reported (the flush at close included).
int fftd__npy_save(const char *path, fftd__npy_dtype dtype, int ndim,
    const int64_t *shape, const void *data, char *msg, size_t msglen);

// fftd__npy_free releases arr's data and clears it. NULL is ignored.
void fftd__npy_free(fftd__npy *arr);

#endif // FFTD_FFTCTL_NPY_H

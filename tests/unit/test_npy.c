// SPDX-License-Identifier: MIT
//
// test_npy.c — fftctl's .npy reader and writer: every dtype round-trips
// byte for byte through the exact layout numpy writes, and a table of
// malformed or unsupported files is refused with the exact error code.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

// npy.c is private to fftctl; the Makefile links its object into this
// test.
#include "npy.h"

static FILE *
file_of(const void *bytes, size_t len)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	rewind(f);
	return f;
}

// npy_bytes builds a file: magic, version major.0, header length (2 bytes
// for 1.x, else 4), the header text as given, then ndata zero bytes.
static size_t
npy_bytes(
    unsigned char *buf, size_t cap, int major, const char *hdr, size_t ndata)
{
	size_t hl = strlen(hdr);
	size_t lb = major == 1 ? 2 : 4;
	size_t n  = 8 + lb + hl + ndata;
	assert_true(n <= cap);
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char) major;
	buf[7] = 0;
	for (size_t i = 0; i < lb; i++) {
		buf[8 + i] = (unsigned char) (hl >> (8 * i));
	}
	memcpy(buf + 8 + lb, hdr, hl);
	memset(buf + 8 + lb + hl, 0, ndata);
	return n;
}

static int
read_bytes(const void *bytes, size_t len, fftd__npy *arr)
{
	char  msg[256] = "";
	FILE *f        = file_of(bytes, len);
	int   rv       = fftd__npy_fread(f, arr, msg, sizeof(msg));
	fclose(f);
	// Every failure explains itself.
	if (rv != FFTD__NPY_OK) {
		assert_true(strlen(msg) > 0);
		assert_null(arr->data);
	}
	return rv;
}

static void
test_roundtrip_every_dtype(void **state)
{
	(void) state;
	static const int64_t shapes[][FFTD__NPY_MAX_NDIM] = {
		{ 0 },
		{ 7 },
		{ 3, 5 },
		{ 2, 3, 4 },
		{ 2, 1, 3, 4 },
		{ 0, 3 },
	};
	static const int      ndims[] = { 0, 1, 2, 3, 4, 2 };
	const fftd__npy_dtype all[]   = { FFTD__NPY_F8, FFTD__NPY_F4,
		  FFTD__NPY_F2, FFTD__NPY_C16, FFTD__NPY_C8, FFTD__NPY_I1 };

	for (size_t d = 0; d < sizeof(all) / sizeof(all[0]); d++) {
		for (size_t s = 0; s < sizeof(ndims) / sizeof(ndims[0]); s++) {
			size_t n = 1;
			for (int k = 0; k < ndims[s]; k++) {
				n *= (size_t) shapes[s][k];
			}
			size_t         nb  = n * fftd__npy_dtype_size(all[d]);
			unsigned char *src = malloc(nb + 1);
			assert_non_null(src);
			for (size_t i = 0; i < nb; i++) {
				src[i] = (unsigned char) (i * 37 + d);
			}
			FILE *f = tmpfile();
			assert_non_null(f);
			assert_int_equal(fftd__npy_fwrite(f, all[d], ndims[s],
			                     shapes[s], src, NULL, 0),
			    FFTD__NPY_OK);
			long len = ftell(f);
			rewind(f);

			// The layout numpy writes: version 1.0, data
			// 64-byte aligned, header ending in a newline.
			unsigned char pre[10];
			assert_int_equal(fread(pre, 1, 10, f), 10);
			assert_memory_equal(pre, "\x93NUMPY\x01\x00", 8);
			size_t hl = pre[8] | (size_t) pre[9] << 8;
			assert_int_equal((10 + hl) % 64, 0);
			assert_int_equal((size_t) len, 10 + hl + nb);
			rewind(f);

			fftd__npy a;
			assert_int_equal(
			    fftd__npy_fread(f, &a, NULL, 0), FFTD__NPY_OK);
			fclose(f);
			assert_int_equal(a.dtype, all[d]);
			assert_int_equal(a.ndim, ndims[s]);
			for (int k = 0; k < ndims[s]; k++) {
				assert_int_equal(a.shape[k], shapes[s][k]);
			}
			assert_int_equal(a.nelems, n);
			assert_int_equal(a.nbytes, nb);
			assert_non_null(a.data);
			if (nb > 0) {
				assert_memory_equal(a.data, src, nb);
			}
			fftd__npy_free(&a);
			assert_null(a.data);
			free(src);
		}
	}
}

static void
test_header_text_is_numpys(void **state)
{
	(void) state;
	const int64_t shape[] = { 3 };
	double        v[3]    = { 1, 2, 3 };
	FILE         *f       = tmpfile();
	assert_non_null(f);
	assert_int_equal(
	    fftd__npy_fwrite(f, FFTD__NPY_F8, 1, shape, v, NULL, 0),
	    FFTD__NPY_OK);
	rewind(f);
	char buf[256];
	// 10 + 58 dict bytes + '\n' pad to 128; then 24 data bytes.
	assert_int_equal(fread(buf, 1, sizeof(buf), f), 128 + 24);
	fclose(f);
	const char *want = "{'descr': '<f8', 'fortran_order': False, "
	                   "'shape': (3,), }";
	assert_memory_equal(buf + 10, want, strlen(want));
	assert_int_equal(buf[127], '\n');
	assert_int_equal(buf[126], ' ');
}

// A header case: version, header text, data bytes present, expected code.
typedef struct hcase {
	const char *name;
	int         major;
	const char *hdr;
	size_t      ndata;
	int         want;
} hcase;

#define H(s) "{'descr': '<f8', 'fortran_order': False, 'shape': " s ", }"

static const hcase hcases[] = {
	{ "valid", 1, H("(3,)"), 24, FFTD__NPY_OK },
	{ "valid v2", 2, H("(3,)"), 24, FFTD__NPY_OK },
	{ "valid v3", 3, H("(3,)"), 24, FFTD__NPY_OK },
	{ "valid 0-d", 1, H("()"), 8, FFTD__NPY_OK },
	{ "valid no trailing comma", 1,
	    "{\"descr\":\"<f8\",\"fortran_order\":False,\"shape\":(2,3)}\n", 48,
	    FFTD__NPY_OK },
	{ "valid python2 longs", 1, H("(2L, 3L)"), 48, FFTD__NPY_OK },
	{ "version 1.1", 1, NULL, 0, FFTD__NPY_EVERSION },
	{ "version 4.0", 4, H("(3,)"), 24, FFTD__NPY_EVERSION },
	{ "empty header", 1, "", 0, FFTD__NPY_EHEADER },
	{ "not a dict", 1, "[1, 2]", 0, FFTD__NPY_EHEADER },
	{ "empty dict", 1, "{}", 0, FFTD__NPY_EHEADER },
	{ "missing shape", 1, "{'descr': '<f8', 'fortran_order': False}", 0,
	    FFTD__NPY_EHEADER },
	{ "duplicate key", 1,
	    "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
	    "'shape': (1,)}",
	    8, FFTD__NPY_EHEADER },
	{ "unknown key", 1,
	    "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), "
	    "'x': 1}",
	    8, FFTD__NPY_EHEADER },
	{ "int, not tuple", 1, H("(3)"), 24, FFTD__NPY_EHEADER },
	{ "negative dim", 1, H("(-3,)"), 24, FFTD__NPY_EHEADER },
	{ "string dim", 1, H("(3, 'a')"), 24, FFTD__NPY_EHEADER },
	{ "unclosed tuple", 1, H("(3, 4"), 0, FFTD__NPY_EHEADER },
	{ "unterminated string", 1, "{'descr': '<f8", 0, FFTD__NPY_EHEADER },
	{ "escape in string", 1,
	    "{'descr': '<f\\8', 'fortran_order': False, 'shape': (1,)}", 8,
	    FFTD__NPY_EHEADER },
	{ "bytes after dict", 1, H("(3,)") " x", 24, FFTD__NPY_EHEADER },
	{ "bad bool", 1,
	    "{'descr': '<f8', 'fortran_order': Truex, 'shape': (1,)}", 8,
	    FFTD__NPY_EHEADER },
	{ "unclosed structured", 1,
	    "{'descr': [('a', '<f8'), 'fortran_order': False, 'shape': (1,)}",
	    8, FFTD__NPY_EHEADER },
	{ "big-endian", 1,
	    "{'descr': '>f8', 'fortran_order': False, 'shape': (1,)}", 8,
	    FFTD__NPY_EBYTEORDER },
	{ "object", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
	    8, FFTD__NPY_EOBJECT },
	{ "int8 as numpy writes it", 1,
	    "{'descr': '|i1', 'fortran_order': False, 'shape': (3,)}", 3,
	    FFTD__NPY_OK },
	{ "int8 little-endian", 1,
	    "{'descr': '<i1', 'fortran_order': False, 'shape': (3,)}", 3,
	    FFTD__NPY_OK },
	{ "no byte order on f8", 1,
	    "{'descr': '|f8', 'fortran_order': False, 'shape': (1,)}", 8,
	    FFTD__NPY_EDTYPE },
	{ "uint8", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}",
	    1, FFTD__NPY_EDTYPE },
	{ "int32", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}",
	    8, FFTD__NPY_EDTYPE },
	{ "byte-order-less", 1,
	    "{'descr': 'f8', 'fortran_order': False, 'shape': (1,)}", 8,
	    FFTD__NPY_EDTYPE },
	{ "structured", 1,
	    "{'descr': [('a', '<f8')], 'fortran_order': False, "
	    "'shape': (1,)}",
	    8, FFTD__NPY_EDTYPE },
	{ "fortran order", 1,
	    "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2)}", 32,
	    FFTD__NPY_EFORTRAN },
	{ "rank 5", 1, H("(1, 1, 1, 1, 1)"), 8, FFTD__NPY_ERANK },
	{ "dim over int64", 1, H("(99999999999999999999,)"), 0,
	    FFTD__NPY_EOVERFLOW },
	{ "product overflows", 1, H("(4611686018427387904, 4)"), 0,
	    FFTD__NPY_EOVERFLOW },
	{ "bytes overflow", 1, H("(4611686018427387904,)"), 0,
	    FFTD__NPY_EOVERFLOW },
	{ "data missing, no allocation", 1, H("(1000000000000,)"), 0,
	    FFTD__NPY_ETRUNC },
	{ "data short", 1, H("(3,)"), 23, FFTD__NPY_ETRUNC },
};

static void
test_header_table(void **state)
{
	(void) state;
	static unsigned char buf[4096];
	for (size_t i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		const hcase *c = &hcases[i];
		size_t       n;
		if (c->hdr == NULL) {
			n      = npy_bytes(buf, sizeof(buf), 1, H("(3,)"), 24);
			buf[7] = 1; // minor version 1
		} else {
			n = npy_bytes(
			    buf, sizeof(buf), c->major, c->hdr, c->ndata);
		}
		fftd__npy a;
		int       rv = read_bytes(buf, n, &a);
		if (rv != c->want) {
			fail_msg("case '%s': got %d (%s), want %d (%s)",
			    c->name, rv, fftd__npy_strerror(rv), c->want,
			    fftd__npy_strerror(c->want));
		}
		fftd__npy_free(&a);
	}
}

static void
test_framing(void **state)
{
	(void) state;
	unsigned char buf[256];
	fftd__npy     a;

	assert_int_equal(read_bytes("", 0, &a), FFTD__NPY_EMAGIC);
	assert_int_equal(read_bytes("hello, world", 12, &a), FFTD__NPY_EMAGIC);
	assert_int_equal(read_bytes("\x93NUMPY", 6, &a), FFTD__NPY_EMAGIC);

	size_t n = npy_bytes(buf, sizeof(buf), 1, H("(3,)"), 24);
	// Cut inside the length field, then inside the header.
	assert_int_equal(read_bytes(buf, 9, &a), FFTD__NPY_ETRUNC);
	assert_int_equal(read_bytes(buf, 30, &a), FFTD__NPY_ETRUNC);
	assert_int_equal(read_bytes(buf, n, &a), FFTD__NPY_OK);
	fftd__npy_free(&a);

	// Header length one beyond the bound (version 2.0, 4-byte length).
	memcpy(buf, "\x93NUMPY\x02\x00\x01\x00\x10\x00", 12);
	assert_int_equal(read_bytes(buf, 12, &a), FFTD__NPY_EHEADER);
}

static void
test_write_refusals(void **state)
{
	(void) state;
	double        v[4]    = { 0 };
	const int64_t five[5] = { 1, 1, 1, 1, 1 };
	const int64_t neg[1]  = { -1 };
	const int64_t huge[2] = { INT64_MAX, INT64_MAX };
	FILE         *f       = tmpfile();
	assert_non_null(f);
	char msg[128];
	assert_int_equal(
	    fftd__npy_fwrite(f, FFTD__NPY_F8, 5, five, v, msg, sizeof(msg)),
	    FFTD__NPY_ERANK);
	assert_int_equal(
	    fftd__npy_fwrite(f, FFTD__NPY_F8, 1, neg, v, msg, sizeof(msg)),
	    FFTD__NPY_EINVAL);
	assert_int_equal(
	    fftd__npy_fwrite(f, FFTD__NPY_F8, 2, huge, v, msg, sizeof(msg)),
	    FFTD__NPY_EOVERFLOW);
	assert_int_equal(fftd__npy_fwrite(f, (fftd__npy_dtype) 99, 1, neg, v,
	                     msg, sizeof(msg)),
	    FFTD__NPY_EINVAL);
	assert_int_equal(ftell(f), 0); // nothing written on refusal
	fclose(f);

	assert_int_equal(fftd__npy_save("/nonexistent-dir/x.npy", FFTD__NPY_F8,
	                     0, NULL, v, msg, sizeof(msg)),
	    FFTD__NPY_EIO);
	fftd__npy a;
	assert_int_equal(
	    fftd__npy_load("/nonexistent-dir/x.npy", &a, msg, sizeof(msg)),
	    FFTD__NPY_EIO);
}

static void
test_strerror(void **state)
{
	(void) state;
	for (int e = FFTD__NPY_OK; e <= FFTD__NPY_EINVAL; e++) {
		assert_non_null(fftd__npy_strerror(e));
	}
	assert_string_equal(fftd__npy_strerror(-1), "unknown npy error");
	assert_string_equal(fftd__npy_dtype_descr(FFTD__NPY_C16), "<c16");
	assert_null(fftd__npy_dtype_descr((fftd__npy_dtype) 42));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_every_dtype),
		cmocka_unit_test(test_header_text_is_numpys),
		cmocka_unit_test(test_header_table),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_write_refusals),
		cmocka_unit_test(test_strerror),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

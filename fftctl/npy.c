// SPDX-License-Identifier: MIT
//
// npy.c — the .npy format (numpy's NEP 1): a magic string, a version, a
// header length, a Python dict literal naming dtype, order and shape, then
// the raw elements. The header parser accepts only that literal's grammar
// (strings, True/False, a tuple of integers), never reads past the bytes it
// was given, and checks every size product before it is used.

// fileno() is POSIX, not C11 (the Makefile defines _GNU_SOURCE anyway).
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "npy.h"

#include "errmsg.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// Data is copied to and from the file as is: .npy files here are
// little-endian, as is every host fftd runs on (x86-64, aarch64).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

static const char magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

// Writers align the data to this many bytes, as numpy >= 1.14 does.
#define NPY_ALIGN 64

const char *
fftd__npy_strerror(int err)
{
	switch (err) {
#define NPY_STR(name, value, text)                                             \
	case FFTD__NPY_##name:                                                 \
		return text;
		FFTD__NPY_ERRNO_MAP(NPY_STR)
#undef NPY_STR
	}
	return "unknown npy error";
}

static const struct {
	const char *name; // descr without its byte-order character
	size_t      size;
} dtypes[] = {
	[FFTD__NPY_F8]  = { "f8", 8 },
	[FFTD__NPY_F4]  = { "f4", 4 },
	[FFTD__NPY_F2]  = { "f2", 2 },
	[FFTD__NPY_C16] = { "c16", 16 },
	[FFTD__NPY_C8]  = { "c8", 8 },
	[FFTD__NPY_I1]  = { "i1", 1 },
};

#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

size_t
fftd__npy_dtype_size(fftd__npy_dtype dtype)
{
	if ((unsigned) dtype >= NDTYPES) {
		return 0;
	}
	return dtypes[dtype].size;
}

const char *
fftd__npy_dtype_descr(fftd__npy_dtype dtype)
{
	static const char *const descr[] = {
		[FFTD__NPY_F8]  = "<f8",
		[FFTD__NPY_F4]  = "<f4",
		[FFTD__NPY_F2]  = "<f2",
		[FFTD__NPY_C16] = "<c16",
		[FFTD__NPY_C8]  = "<c8",
		[FFTD__NPY_I1]  = "|i1",
	};
	if ((unsigned) dtype >= NDTYPES) {
		return NULL;
	}
	return descr[dtype];
}

void
fftd__npy_free(fftd__npy *arr)
{
	if (arr == NULL) {
		return;
	}
	free(arr->data);
	memset(arr, 0, sizeof(*arr));
}

// --- header parsing ---------------------------------------------------------

// parser walks the header bytes [p, end); nothing there is NUL-terminated.
typedef struct parser {
	const char *p;
	const char *end;
} parser;

// header is what the dict said; codes are kept so that a header that is
// malformed further on is reported as malformed, not as its first problem.
typedef struct header {
	int             seen; // bit per key: 1 descr, 2 fortran_order, 4 shape
	int             dtype_err; // FFTD__NPY_OK or why the descr is refused
	fftd__npy_dtype dtype;
	char            descr[24]; // for messages (truncated)
	bool            fortran;
	int             ndim; // as written, may exceed FFTD__NPY_MAX_NDIM
	bool            dim_overflow;
	int64_t         shape[FFTD__NPY_MAX_NDIM];
} header;

static void
skip_ws(parser *ps)
{
	while (ps->p < ps->end
	    && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n'
	        || *ps->p == '\r')) {
		ps->p++;
	}
}

static bool
accept(parser *ps, char c)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

static bool
accept_word(parser *ps, const char *w)
{
	size_t n = strlen(w);
	skip_ws(ps);
	if ((size_t) (ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0) {
		return false;
	}
	// "Truex" is not True.
	if ((size_t) (ps->end - ps->p) > n) {
		char c = ps->p[n];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		    || (c >= '0' && c <= '9') || c == '_') {
			return false;
		}
	}
	ps->p += n;
	return true;
}

// parse_string reads a quoted Python string without escapes into buf
// (truncated to cap - 1) and returns its full length, or -1 if malformed.
static long
parse_string(parser *ps, char *buf, size_t cap)
{
	skip_ws(ps);
	if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"')) {
		return -1;
	}
	char        q = *ps->p++;
	const char *s = ps->p;
	while (ps->p < ps->end && *ps->p != q) {
		// No dtype or key we accept needs escapes or control bytes.
		if (*ps->p == '\\' || (unsigned char) *ps->p < 0x20) {
			return -1;
		}
		ps->p++;
	}
	if (ps->p >= ps->end) {
		return -1;
	}
	size_t len = (size_t) (ps->p - s);
	ps->p++; // closing quote
	size_t n = len < cap - 1 ? len : cap - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return (long) len;
}

static void
classify_descr(header *h, const char *d, size_t len)
{
	h->dtype_err = FFTD__NPY_EDTYPE;
	if (len < 2 || len >= sizeof(h->descr) - 1) {
		return;
	}
	char        order = d[0];
	const char *t     = d + 1;
	if (t[0] == 'O') {
		h->dtype_err = FFTD__NPY_EOBJECT;
		return;
	}
	for (size_t i = 0; i < NDTYPES; i++) {
		if (strcmp(t, dtypes[i].name) != 0) {
			continue;
		}
		// numpy writes one-byte types as '|' (no byte order).
		if (order == '<' || order == '='
		    || (order == '|' && dtypes[i].size == 1)) {
			h->dtype     = (fftd__npy_dtype) i;
			h->dtype_err = FFTD__NPY_OK;
		} else if (order == '>') {
			h->dtype_err = FFTD__NPY_EBYTEORDER;
		}
		return;
	}
}

static int
parse_descr(parser *ps, header *h)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '[') {
		// A structured dtype: skip its list (bounded by the header),
		// balancing brackets, and refuse it once the header parsed.
		int depth = 0;
		do {
			if (*ps->p == '[' || *ps->p == '(') {
				depth++;
			} else if (*ps->p == ']' || *ps->p == ')') {
				depth--;
			}
			ps->p++;
		} while (ps->p < ps->end && depth > 0);
		if (depth != 0) {
			return FFTD__NPY_EHEADER;
		}
		snprintf(h->descr, sizeof(h->descr), "[...]");
		h->dtype_err = FFTD__NPY_EDTYPE;
		return FFTD__NPY_OK;
	}
	long len = parse_string(ps, h->descr, sizeof(h->descr));
	if (len < 0) {
		return FFTD__NPY_EHEADER;
	}
	classify_descr(h, h->descr, (size_t) len);
	return FFTD__NPY_OK;
}

static int
parse_shape(parser *ps, header *h)
{
	if (!accept(ps, '(')) {
		return FFTD__NPY_EHEADER;
	}
	h->ndim = 0;
	if (accept(ps, ')')) {
		return FFTD__NPY_OK;
	}
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') {
			return FFTD__NPY_EHEADER;
		}
		int64_t v    = 0;
		bool    over = false;
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
			int d = *ps->p++ - '0';
			if (v > (INT64_MAX - d) / 10) {
				over = true;
			} else {
				v = v * 10 + d;
			}
		}
		if (ps->p < ps->end && *ps->p == 'L') {
			ps->p++; // Python 2 long, in old files
		}
		if (over) {
			h->dim_overflow = true;
		}
		if (h->ndim < FFTD__NPY_MAX_NDIM) {
			h->shape[h->ndim] = v;
		}
		if (h->ndim < INT_MAX) {
			h->ndim++;
		}
		if (accept(ps, ')')) {
			// "(3)" is an int, not a tuple: numpy refuses it too.
			return h->ndim == 1 ? FFTD__NPY_EHEADER : FFTD__NPY_OK;
		}
		if (!accept(ps, ',')) {
			return FFTD__NPY_EHEADER;
		}
		if (accept(ps, ')')) {
			return FFTD__NPY_OK;
		}
	}
}

static int
parse_header(const char *buf, size_t len, header *h, char *msg, size_t msglen)
{
	parser ps = { buf, buf + len };
	memset(h, 0, sizeof(*h));

	if (!accept(&ps, '{')) {
		return fftd__errmsg(FFTD__NPY_EHEADER, msg, msglen,
		    "header is not a dict literal");
	}
	if (!accept(&ps, '}')) {
		for (;;) {
			char key[24];
			long klen = parse_string(&ps, key, sizeof(key));
			if (klen < 0 || !accept(&ps, ':')) {
				return fftd__errmsg(FFTD__NPY_EHEADER, msg,
				    msglen,
				    "header: expected 'key': value at byte %zu",
				    (size_t) (ps.p - buf));
			}
			int bit;
			int rv;
			if (strcmp(key, "descr") == 0) {
				bit = 1;
				rv  = parse_descr(&ps, h);
			} else if (strcmp(key, "fortran_order") == 0) {
				bit = 2;
				if (accept_word(&ps, "True")) {
					h->fortran = true;
					rv         = FFTD__NPY_OK;
				} else if (accept_word(&ps, "False")) {
					h->fortran = false;
					rv         = FFTD__NPY_OK;
				} else {
					rv = FFTD__NPY_EHEADER;
				}
			} else if (strcmp(key, "shape") == 0) {
				bit = 4;
				rv  = parse_shape(&ps, h);
			} else {
				return fftd__errmsg(FFTD__NPY_EHEADER, msg,
				    msglen, "header: unexpected key '%s'", key);
			}
			if (rv != FFTD__NPY_OK) {
				return fftd__errmsg(rv, msg, msglen,
				    "header: malformed value of '%s'", key);
			}
			if (h->seen & bit) {
				return fftd__errmsg(FFTD__NPY_EHEADER, msg,
				    msglen, "header: key '%s' given twice",
				    key);
			}
			h->seen |= bit;
			if (accept(&ps, '}')) {
				break;
			}
			if (!accept(&ps, ',')) {
				return fftd__errmsg(FFTD__NPY_EHEADER, msg,
				    msglen,
				    "header: expected ',' or '}' at byte %zu",
				    (size_t) (ps.p - buf));
			}
			if (accept(&ps, '}')) {
				break;
			}
		}
	}
	skip_ws(&ps);
	if (ps.p != ps.end) {
		return fftd__errmsg(FFTD__NPY_EHEADER, msg, msglen,
		    "header: unexpected bytes after the dict");
	}
	if (h->seen != 7) {
		return fftd__errmsg(FFTD__NPY_EHEADER, msg, msglen,
		    "header: missing key '%s'",
		    !(h->seen & 1)       ? "descr"
		        : !(h->seen & 2) ? "fortran_order"
		                         : "shape");
	}
	switch (h->dtype_err) {
	case FFTD__NPY_OK:
		break;
	case FFTD__NPY_EBYTEORDER:
		return fftd__errmsg(h->dtype_err, msg, msglen,
		    "dtype '%s' is big-endian; convert with "
		    "a.astype(a.dtype.newbyteorder('<'))",
		    h->descr);
	case FFTD__NPY_EOBJECT:
		return fftd__errmsg(h->dtype_err, msg, msglen,
		    "dtype '%s' holds Python objects; only numeric arrays "
		    "are supported",
		    h->descr);
	default:
		return fftd__errmsg(h->dtype_err, msg, msglen,
		    "dtype '%s' is not supported (use <f8, <f4, <f2, <c16 "
		    "or <c8)",
		    h->descr);
	}
	if (h->fortran) {
		return fftd__errmsg(FFTD__NPY_EFORTRAN, msg, msglen,
		    "array is in Fortran order; save np.ascontiguousarray(a)");
	}
	if (h->ndim > FFTD__NPY_MAX_NDIM) {
		return fftd__errmsg(FFTD__NPY_ERANK, msg, msglen,
		    "array has %d dimensions, at most %d are supported",
		    h->ndim, FFTD__NPY_MAX_NDIM);
	}
	if (h->dim_overflow) {
		return fftd__errmsg(FFTD__NPY_EOVERFLOW, msg, msglen,
		    "a dimension does not fit in 64 bits");
	}
	return FFTD__NPY_OK;
}

// array_bytes computes the element count and byte size of a shape, or
// returns FFTD__NPY_EOVERFLOW.
static int
array_bytes(fftd__npy_dtype dtype, int ndim, const int64_t *shape,
    size_t *nelems, size_t *nbytes)
{
	size_t n = 1;
	for (int k = 0; k < ndim; k++) {
		if (shape[k] < 0 || (uint64_t) shape[k] > SIZE_MAX
		    || __builtin_mul_overflow(n, (size_t) shape[k], &n)) {
			return FFTD__NPY_EOVERFLOW;
		}
	}
	size_t b;
	if (__builtin_mul_overflow(n, fftd__npy_dtype_size(dtype), &b)
	    || b > (size_t) PTRDIFF_MAX) {
		return FFTD__NPY_EOVERFLOW;
	}
	*nelems = n;
	*nbytes = b;
	return FFTD__NPY_OK;
}

// --- reading ----------------------------------------------------------------

static int
read_err(FILE *f, int code, const char *what, char *msg, size_t msglen)
{
	if (ferror(f)) {
		return fftd__errmsg(FFTD__NPY_EIO, msg, msglen,
		    "reading %s: %s", what, strerror(errno));
	}
	return fftd__errmsg(code, msg, msglen, "file ends inside the %s", what);
}

int
fftd__npy_fread(FILE *f, fftd__npy *arr, char *msg, size_t msglen)
{
	if (f == NULL || arr == NULL) {
		return fftd__errmsg(
		    FFTD__NPY_EINVAL, msg, msglen, "NULL argument");
	}
	memset(arr, 0, sizeof(*arr));

	unsigned char pre[12];
	size_t        got = fread(pre, 1, 8, f);
	if (got < 8 || memcmp(pre, magic, sizeof(magic)) != 0) {
		if (ferror(f)) {
			return read_err(f, 0, "magic", msg, msglen);
		}
		return fftd__errmsg(FFTD__NPY_EMAGIC, msg, msglen,
		    "no \\x93NUMPY magic string: not a .npy file");
	}
	unsigned major = pre[6], minor = pre[7];
	size_t   lenbytes;
	if (major == 1 && minor == 0) {
		lenbytes = 2;
	} else if ((major == 2 || major == 3) && minor == 0) {
		lenbytes = 4;
	} else {
		return fftd__errmsg(FFTD__NPY_EVERSION, msg, msglen,
		    "format version %u.%u (supported: 1.0, 2.0, 3.0)", major,
		    minor);
	}
	if (fread(pre + 8, 1, lenbytes, f) != lenbytes) {
		return read_err(
		    f, FFTD__NPY_ETRUNC, "header length", msg, msglen);
	}
	uint32_t hlen = (uint32_t) pre[8] | (uint32_t) pre[9] << 8;
	if (lenbytes == 4) {
		hlen |= (uint32_t) pre[10] << 16 | (uint32_t) pre[11] << 24;
	}
	if (hlen == 0 || hlen > FFTD__NPY_MAX_HEADER) {
		return fftd__errmsg(FFTD__NPY_EHEADER, msg, msglen,
		    "header length %u is out of range (1..%u)", hlen,
		    FFTD__NPY_MAX_HEADER);
	}
	char *hbuf = malloc(hlen);
	if (hbuf == NULL) {
		return fftd__errmsg(
		    FFTD__NPY_ENOMEM, msg, msglen, "out of memory");
	}
	if (fread(hbuf, 1, hlen, f) != hlen) {
		free(hbuf);
		return read_err(f, FFTD__NPY_ETRUNC, "header", msg, msglen);
	}
	header h;
	int    rv = parse_header(hbuf, hlen, &h, msg, msglen);
	free(hbuf);
	if (rv != FFTD__NPY_OK) {
		return rv;
	}

	size_t nelems, nbytes;
	if (array_bytes(h.dtype, h.ndim, h.shape, &nelems, &nbytes)
	    != FFTD__NPY_OK) {
		return fftd__errmsg(
		    FFTD__NPY_EOVERFLOW, msg, msglen, "array size overflows");
	}
	// A lying header must not make us allocate what the file lacks.
	struct stat st;
	long        pos = ftell(f);
	if (pos >= 0 && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)
	    && (st.st_size < pos || (uint64_t) (st.st_size - pos) < nbytes)) {
		return fftd__errmsg(FFTD__NPY_ETRUNC, msg, msglen,
		    "header says %zu data bytes, the file holds %lld", nbytes,
		    (long long) (st.st_size > pos ? st.st_size - pos : 0));
	}
	void *data = malloc(nbytes > 0 ? nbytes : 1);
	if (data == NULL) {
		return fftd__errmsg(FFTD__NPY_ENOMEM, msg, msglen,
		    "out of memory for %zu bytes", nbytes);
	}
	if (fread(data, 1, nbytes, f) != nbytes) {
		free(data);
		return read_err(f, FFTD__NPY_ETRUNC, "data", msg, msglen);
	}
	arr->dtype = h.dtype;
	arr->ndim  = h.ndim;
	for (int k = 0; k < h.ndim; k++) {
		arr->shape[k] = h.shape[k];
	}
	arr->nelems = nelems;
	arr->nbytes = nbytes;
	arr->data   = data;
	return FFTD__NPY_OK;
}

int
fftd__npy_load(const char *path, fftd__npy *arr, char *msg, size_t msglen)
{
	if (path == NULL || arr == NULL) {
		return fftd__errmsg(
		    FFTD__NPY_EINVAL, msg, msglen, "NULL argument");
	}
	memset(arr, 0, sizeof(*arr));
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		return fftd__errmsg(
		    FFTD__NPY_EIO, msg, msglen, "%s", strerror(errno));
	}
	int rv = fftd__npy_fread(f, arr, msg, msglen);
	fclose(f);
	return rv;
}

// --- writing ----------------------------------------------------------------

int
fftd__npy_fwrite(FILE *f, fftd__npy_dtype dtype, int ndim, const int64_t *shape,
    const void *data, char *msg, size_t msglen)
{
	if (f == NULL || (ndim > 0 && shape == NULL)
	    || fftd__npy_dtype_size(dtype) == 0) {
		return fftd__errmsg(
		    FFTD__NPY_EINVAL, msg, msglen, "invalid argument");
	}
	if (ndim < 0 || ndim > FFTD__NPY_MAX_NDIM) {
		return fftd__errmsg(FFTD__NPY_ERANK, msg, msglen,
		    "%d dimensions, at most %d are supported", ndim,
		    FFTD__NPY_MAX_NDIM);
	}
	for (int k = 0; k < ndim; k++) {
		if (shape[k] < 0) {
			return fftd__errmsg(FFTD__NPY_EINVAL, msg, msglen,
			    "shape[%d] = %lld is negative", k,
			    (long long) shape[k]);
		}
	}
	size_t nelems, nbytes;
	if (array_bytes(dtype, ndim, shape, &nelems, &nbytes) != FFTD__NPY_OK) {
		return fftd__errmsg(
		    FFTD__NPY_EOVERFLOW, msg, msglen, "array size overflows");
	}
	if (data == NULL && nbytes > 0) {
		return fftd__errmsg(FFTD__NPY_EINVAL, msg, msglen, "NULL data");
	}

	// The dict exactly as numpy writes it: shape is a Python tuple,
	// "(n,)" for one dimension.
	char   dict[256];
	size_t len = (size_t) snprintf(dict, sizeof(dict),
	    "{'descr': '%s', 'fortran_order': False, 'shape': (",
	    fftd__npy_dtype_descr(dtype));
	for (int k = 0; k < ndim; k++) {
		len += (size_t) snprintf(dict + len, sizeof(dict) - len,
		    "%s%lld", k > 0 ? ", " : "", (long long) shape[k]);
	}
	len += (size_t) snprintf(
	    dict + len, sizeof(dict) - len, "%s), }", ndim == 1 ? "," : "");

	// Pad with spaces and a newline so the data starts aligned.
	size_t pre   = sizeof(magic) + 2 + 2;
	int    major = 1;
	size_t total = (pre + len + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	if (total - pre > 0xffff) {
		major = 2;
		pre += 2;
		total = (pre + len + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	}
	size_t hlen = total - pre;

	unsigned char head[sizeof(magic) + 2 + 4];
	memcpy(head, magic, sizeof(magic));
	head[6]  = (unsigned char) major;
	head[7]  = 0;
	head[8]  = (unsigned char) (hlen & 0xff);
	head[9]  = (unsigned char) ((hlen >> 8) & 0xff);
	head[10] = (unsigned char) ((hlen >> 16) & 0xff);
	head[11] = (unsigned char) ((hlen >> 24) & 0xff);

	bool ok
	    = fwrite(head, 1, pre, f) == pre && fwrite(dict, 1, len, f) == len;
	for (size_t i = len; ok && i + 1 < hlen; i++) {
		ok = fputc(' ', f) != EOF;
	}
	ok = ok && fputc('\n', f) != EOF;
	ok = ok && (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
	if (!ok) {
		return fftd__errmsg(
		    FFTD__NPY_EIO, msg, msglen, "write: %s", strerror(errno));
	}
	return FFTD__NPY_OK;
}

int
fftd__npy_save(const char *path, fftd__npy_dtype dtype, int ndim,
    const int64_t *shape, const void *data, char *msg, size_t msglen)
{
	if (path == NULL) {
		return fftd__errmsg(FFTD__NPY_EINVAL, msg, msglen, "NULL path");
	}
	FILE *f = fopen(path, "wb");
	if (f == NULL) {
		return fftd__errmsg(
		    FFTD__NPY_EIO, msg, msglen, "%s", strerror(errno));
	}
	int rv = fftd__npy_fwrite(f, dtype, ndim, shape, data, msg, msglen);
	// A full disk often shows only when the buffer is flushed.
	if (fclose(f) != 0 && rv == FFTD__NPY_OK) {
		rv = fftd__errmsg(
		    FFTD__NPY_EIO, msg, msglen, "%s", strerror(errno));
	}
	return rv;
}

// SPDX-License-Identifier: MIT
//
// fftctl.h — PRIVATE to fftctl (fftctl/*.c include it; nothing else may).
// What fftctl's files share: the exit codes, the helpers every subcommand
// uses (main.c), one entry point and --help text per subcommand (ping.c,
// info.c, stats.c, fft.c), and the arrays that fftctl fft reads and writes
// (array.c).

#ifndef FFTD_FFTCTL_H
#define FFTD_FFTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"
#include "npy.h"

// Exit codes, as `fftctl --help` states them.
enum {
	EXIT_OK    = 0,
	EXIT_ERROR = 1, // the daemon, a transform or a file failed
	EXIT_USAGE = 2,
};

// --- main.c: what every subcommand shares -----------------------------------

// fftd__ctl_prec_name names the precisions, indexed by fftd_precision.
extern const char *const fftd__ctl_prec_name[3];

// fftd__ctl_usage_error reports a usage error of command cmd (NULL: of
// fftctl itself), points at the command's --help, and returns EXIT_USAGE.
int fftd__ctl_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// fftd__ctl_fail prints what failed with the library's message for err and
// the daemon's detail, and returns EXIT_ERROR.
int fftd__ctl_fail(const char *what, int err);

// fftd__ctl_url_name is the daemon address fftctl uses, for messages:
// --url, else the library's default address.
const char *fftd__ctl_url_name(void);

// fftd__ctl_connect opens a connection with the global --url and
// --timeout; on failure it says why and returns EXIT_ERROR.
int fftd__ctl_connect(fftd_client **c);

// fftd__ctl_parse_ll parses a whole decimal integer in [min, max].
bool fftd__ctl_parse_ll(
    const char *s, long long min, long long max, long long *v);

// fftd__ctl_human writes a byte count with a binary unit into buf.
const char *fftd__ctl_human(char *buf, size_t len, uint64_t bytes);

// --- the subcommands: argv from the command's name on; an exit code ---------

int fftd__ctl_ping(int argc, char **argv);  // ping.c
int fftd__ctl_info(int argc, char **argv);  // info.c
int fftd__ctl_stats(int argc, char **argv); // stats.c
int fftd__ctl_fft(int argc, char **argv);   // fft.c

// Their --help texts (also printed by `fftctl help COMMAND`).
extern const char fftd__ctl_ping_help[];
extern const char fftd__ctl_info_help[];
extern const char fftd__ctl_stats_help[];
extern const char fftd__ctl_fft_help[];

// --- array.c: the arrays of fftctl fft ---------------------------------------

// array is an input or output in memory: precision, real or complex, the
// logical shape (no axis for re/im), and the elements.
typedef struct array {
	fftd_precision prec;
	bool           complex;
	bool           i8; // int8 elements (--input i8); prec is the plan's
	int            ndim;
	int64_t        shape[FFTD__NPY_MAX_NDIM];
	size_t         nelems; // logical elements (complex counts once)
	void          *data;
} array;

// fftd__ctl_elem_size is the size in bytes of one element.
size_t fftd__ctl_elem_size(fftd_precision p, bool complex);

// fftd__ctl_array_elem_size is the size in bytes of one of a's elements
// (1 or 2 for int8, else fftd__ctl_elem_size).
size_t fftd__ctl_array_elem_size(const array *a);

// fftd__ctl_parse_shape parses --shape AxBx.. (or A,B,..) into a->shape
// and a->ndim: 1 to FFTD__NPY_MAX_NDIM positive sizes.
bool fftd__ctl_parse_shape(const char *s, array *a);

// fftd__ctl_count_elems sets a->nelems from the shape, refusing overflow.
bool fftd__ctl_count_elems(array *a);

// fftd__ctl_load_raw reads a raw IN whose shape, precision and complexity
// a already holds; the file size must match them exactly.
int fftd__ctl_load_raw(const char *path, array *a);

// fftd__ctl_load_npy reads a .npy IN; an <f2 array is complex half when
// the transform takes complex input (c2c, c2r), its trailing axis of 2 then
// being (re, im).
int fftd__ctl_load_npy(const char *path, fftd_kind kind, array *a);

// fftd__ctl_promote turns real elements into complex ones with zero
// imaginary part; false when out of memory.
bool fftd__ctl_promote(array *a);

// fftd__ctl_save_output writes OUT: as .npy when path ends in .npy
// (complex f16 as <f2 with a trailing axis of 2), else raw elements;
// verbose says so on stderr for a raw OUT.
int fftd__ctl_save_output(const char *path, const array *o, bool verbose);

#endif // FFTD_FFTCTL_H

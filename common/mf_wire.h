// SPDX-License-Identifier: MIT
//
// mf_wire.h — PRIVATE to fftd (not installed). The matched-filter bank on
// the wire, shared by libfftd (client/mf.c) and the daemon
// (daemon/mf_req.c): the packed records of a MatchedFilterReply's payload,
// and the checks of a MatchedFilter's own arguments (ranges, byte counts),
// which both sides and the request fuzzer make with the same code. The
// arrays' spans are the daemon's to check (it knows the arrays).
//
// The reply's payload, in this order, with no padding:
//   count peak records          FFTD__MF_PEAK_BYTES each
//   ntriggers trigger records   FFTD__MF_TRIGGER_BYTES each
//   the series: nseries rows of (t_end - t_begin) rho values, binary64
//   for an F64 request, binary32 for an F32 one
// Every field is little-endian; int64 two's complement, double IEEE 754
// binary64:
//   peak record     f64 rho | i64 t | f64 sigma | f64 z_re | f64 z_im
//   trigger record  i64 template_index | i64 t | f64 rho | f64 z_re |
//                   f64 z_im
// fftd runs on little-endian hosts only (payloads are native arrays), so
// the series rows are the backend's values as they are.

#ifndef FFTD_COMMON_MF_WIRE_H
#define FFTD_COMMON_MF_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "fftd.pb-c.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error                                                                         \
    "fftd's wire payloads are little-endian: a big-endian host is unsupported"
#endif

#define FFTD__MF_PEAK_BYTES 40
#define FFTD__MF_TRIGGER_BYTES 40

// FFTD__MF_RECORDS_ARE says that the peak and trigger records are the
// bytes of structs P and T (fields in the records' order, no padding), so
// that whole arrays of them are copied in and out as they are: the
// daemon's (mf.h) and the public ones (fftd.h) are asserted to be.
#define FFTD__MF_RECORDS_ARE(P, T)                                             \
	(sizeof(P) == FFTD__MF_PEAK_BYTES && offsetof(P, rho) == 0             \
	    && offsetof(P, t) == 8 && offsetof(P, sigma) == 16                 \
	    && offsetof(P, z_re) == 24 && offsetof(P, z_im) == 32              \
	    && sizeof(T) == FFTD__MF_TRIGGER_BYTES                             \
	    && offsetof(T, template_index) == 0 && offsetof(T, t) == 8         \
	    && offsetof(T, rho) == 16 && offsetof(T, z_re) == 24               \
	    && offsetof(T, z_im) == 32)

// fftd__mf_peak_unpack reads one peak record at p.
void fftd__mf_peak_unpack(const uint8_t *p, double *rho, int64_t *t,
    double *sigma, double *z_re, double *z_im);

// fftd__mf_trigger_unpack reads one trigger record at p.
void fftd__mf_trigger_unpack(const uint8_t *p, int64_t *template_index,
    int64_t *t, double *rho, double *z_re, double *z_im);

// fftd__mf_sizes is what a MatchedFilter's arguments imply, in bytes
// where not said otherwise.
typedef struct fftd__mf_sizes {
	uint64_t bins;          // N/2 + 1 (count)
	uint64_t real;          // one real of the precision: 4 or 8
	uint64_t data_bytes;    // D: bins complex
	uint64_t psd_bytes;     // S: bins real
	uint64_t tpl_bytes;     // count templates of bins complex
	uint64_t series_len;    // t_end - t_begin (count)
	uint64_t series_bytes;  // nseries rows of series_len reals
	uint64_t reply_max;     // the largest reply payload it can have
	uint64_t sigmasq_bytes; // count f64 sigma^2 (STORE, USE), else 0
} fftd__mf_sizes;

// fftd__mf_check checks a MatchedFilter's own arguments (fftd_mf_desc's
// ranges, count, series indices, sigmasq's mode and offset (the array is
// the daemon's to check), the reply's size against max_reply
// bytes) and fills *sz. Returns FFTD_OK, or FFTD_EINVAL (naming the
// argument), FFTD_EUNSUPPORTED (f16), FFTD_EOVERFLOW (a byte count past
// 64 bits) or FFTD_ELIMIT (reply over max_reply), with msg filled.
int fftd__mf_check(const Fftd__Wire__MatchedFilter *mf, uint64_t max_reply,
    fftd__mf_sizes *sz, char *msg, size_t msglen);

#endif // FFTD_COMMON_MF_WIRE_H

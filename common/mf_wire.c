// SPDX-License-Identifier: MIT
//
// mf_wire.c — the matched-filter bank's wire records and argument checks
// (see mf_wire.h for the layouts). Every argument comes from an untrusted
// peer on the daemon's side: products are checked for overflow before use.

#include "mf_wire.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "errmsg.h"
#include "fftd.h"

// get8 moves one 8-byte field (native = little-endian, mf_wire.h).
static void
get8(const uint8_t *p, void *v)
{
	memcpy(v, p, 8);
}

// fftd__mf_peak_unpack reads one peak record at p (the daemon writes
// whole arrays of fftd__mf_peak: FFTD__MF_RECORDS_ARE).
void
fftd__mf_peak_unpack(const uint8_t *p, double *rho, int64_t *t, double *sigma,
    double *z_re, double *z_im)
{
	get8(p, rho);
	get8(p + 8, t);
	get8(p + 16, sigma);
	get8(p + 24, z_re);
	get8(p + 32, z_im);
}

// fftd__mf_trigger_unpack reads one trigger record at p.
void
fftd__mf_trigger_unpack(const uint8_t *p, int64_t *template_index, int64_t *t,
    double *rho, double *z_re, double *z_im)
{
	get8(p, template_index);
	get8(p + 8, t);
	get8(p + 16, rho);
	get8(p + 24, z_re);
	get8(p + 32, z_im);
}

// check_ranges checks the description's scalars (mf_wire.h).
static int
check_ranges(const Fftd__Wire__MatchedFilter *mf, uint64_t bins, char *msg,
    size_t msglen)
{
	if (!(mf->delta_f > 0) || !isfinite(mf->delta_f)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "delta_f = %g: must be a finite frequency step > 0 Hz",
		    mf->delta_f);
	}
	if (mf->kmin < 0 || mf->kmin >= mf->kmax
	    || (uint64_t) mf->kmax > bins) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "kmin = %" PRId64 ", kmax = %" PRId64
		    ": need 0 <= kmin < kmax <= N/2+1 = %" PRIu64,
		    mf->kmin, mf->kmax, bins);
	}
	if (mf->t_begin < 0 || mf->t_begin >= mf->t_end
	    || (uint64_t) mf->t_end > mf->n) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "t_begin = %" PRId64 ", t_end = %" PRId64
		    ": need 0 <= t_begin < t_end <= N = %" PRIu64,
		    mf->t_begin, mf->t_end, mf->n);
	}
	if (isnan(mf->threshold)) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "threshold is NaN (<= 0: no triggers)");
	}
	if (mf->cluster < 1) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "cluster = %" PRId64 ": the window must be >= 1 sample",
		    mf->cluster);
	}
	if (mf->count < 1) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "count = %" PRId64 ": at least one template", mf->count);
	}
	if (mf->n_series_index > (size_t) mf->count
	    || mf->n_series_index > INT32_MAX) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "%zu series asked for; at most one per template (%" PRId64
		    ")",
		    mf->n_series_index, mf->count);
	}
	for (size_t i = 0; i < mf->n_series_index; i++) {
		if (mf->series_index[i] < 0
		    || mf->series_index[i] >= mf->count) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "series_index[%zu] = %" PRId64
			    ": not a template of the slice (0 .. %" PRId64 ")",
			    i, mf->series_index[i], mf->count - 1);
		}
	}
	return FFTD_OK;
}

// fftd__mf_check checks the arguments and computes the byte counts.
int
fftd__mf_check(const Fftd__Wire__MatchedFilter *mf, uint64_t max_reply,
    fftd__mf_sizes *sz, char *msg, size_t msglen)
{
	memset(sz, 0, sizeof(*sz));
	if (mf->precision == FFTD__WIRE__PRECISION__F16) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "the matched-filter bank takes f32 or f64 data, not f16");
	}
	if (mf->precision != FFTD__WIRE__PRECISION__F32
	    && mf->precision != FFTD__WIRE__PRECISION__F64) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "precision = %d: must be f32 or f64", (int) mf->precision);
	}
	if (mf->n < 2 || mf->n > (uint64_t) INT64_MAX / 4) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "n = %" PRIu64 ": need 2 <= N <= 2^61", mf->n);
	}
	sz->bins = mf->n / 2 + 1;
	sz->real = mf->precision == FFTD__WIRE__PRECISION__F64 ? 8 : 4;
	int rv   = check_ranges(mf, sz->bins, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	sz->series_len = (uint64_t) (mf->t_end - mf->t_begin);
	uint64_t peaks, trig, rows;
	if (__builtin_mul_overflow(sz->bins, 2 * sz->real, &sz->data_bytes)
	    || __builtin_mul_overflow(sz->bins, sz->real, &sz->psd_bytes)
	    || __builtin_mul_overflow(
	        (uint64_t) mf->count, sz->data_bytes, &sz->tpl_bytes)
	    || __builtin_mul_overflow(
	        (uint64_t) mf->count, (uint64_t) FFTD__MF_PEAK_BYTES, &peaks)
	    || __builtin_mul_overflow(
	        mf->max_triggers, (uint64_t) FFTD__MF_TRIGGER_BYTES, &trig)
	    || __builtin_mul_overflow(
	        (uint64_t) mf->n_series_index, sz->series_len, &rows)
	    || __builtin_mul_overflow(rows, sz->real, &sz->series_bytes)
	    || __builtin_add_overflow(peaks, trig, &sz->reply_max)
	    || __builtin_add_overflow(
	        sz->reply_max, sz->series_bytes, &sz->reply_max)) {
		return fftd__errmsg(FFTD_EOVERFLOW, msg, msglen,
		    "the bank's byte counts overflow (count %" PRId64
		    ", max_triggers %" PRIu64 ", %zu series)",
		    mf->count, mf->max_triggers, mf->n_series_index);
	}
	if (mf->sigmasq_mode > FFTD_MF_SIGMASQ_USE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "sigmasq_mode = %u: must be FFTD_MF_SIGMASQ_COMPUTE, "
		    "_STORE or _USE",
		    mf->sigmasq_mode);
	}
	if (mf->sigmasq_mode != FFTD_MF_SIGMASQ_COMPUTE) {
		if (mf->sigmasq_array == 0) {
			return fftd__errmsg(FFTD_EINVAL, msg, msglen,
			    "sigmasq_mode %s needs a sigmasq array",
			    mf->sigmasq_mode == FFTD_MF_SIGMASQ_USE ? "USE"
			                                            : "STORE");
		}
		sz->sigmasq_bytes = 8 * (uint64_t) mf->count;
	}
	if (sz->reply_max > max_reply) {
		return fftd__errmsg(FFTD_ELIMIT, msg, msglen,
		    "the reply could hold %" PRIu64
		    " bytes (peaks, max_triggers, series); the limit is "
		    "%" PRIu64 " ([limits] max_request_bytes)",
		    sz->reply_max, max_reply);
	}
	return FFTD_OK;
}

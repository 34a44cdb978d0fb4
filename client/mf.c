// SPDX-License-Identifier: MIT
//
// mf.c — the matched-filter bank (fftd.h: fftd_mf_desc_init,
// fftd_mf_bank): the description's defaults, the MatchedFilter request on
// the arrays' daemon, and its reply's payload (peak records, trigger
// records, series rows: common/mf_wire.h) copied into the caller's
// structs, sized by the caller's sizeof (fftd.h, "Binary compatibility").
// The arguments are checked here with the daemon's own checks
// (fftd__mf_check), so that a bad one is named before anything is sent;
// the daemon checks them again, and the arrays' spans.
//
// The request and its reply go over a bank channel where the client has
// one (bankchan.c: the results then come in the channel's shared buffer),
// else over NNG (the results in the reply's payload).
//
// Threads: fftd_mf_bank blocks its caller; any thread.

#include <inttypes.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <nng/nng.h>

#include "client_impl.h"
#include "mf_wire.h"

// fftd_mf_desc_init_sized fills the caller's description (size bytes)
// with the defaults.
int
fftd_mf_desc_init_sized(fftd_mf_desc *desc, size_t size)
{
	if (desc == NULL || !fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "desc is NULL or its size %zu is bad", size);
	}
	fftd_mf_desc d = { 0 };
	d.precision    = FFTD_F64;
	d.cluster      = 1;
	fftd__abi_out(desc, size, &d, sizeof(d));
	return FFTD_OK;
}

// mf_to_wire fills the request from the description (defaults applied:
// kmax 0 is N/2+1, t_end 0 is N) and the slice; a sigma^2 array must be
// client c's.
static int
mf_to_wire(fftd_client *c, Fftd__Wire__MatchedFilter *w, const fftd_mf_desc *d)
{
	if (d->n < 2) {
		return fftd__set_error(
		    FFTD_EINVAL, "n = %" PRId64 ": need N >= 2 samples", d->n);
	}
	if (d->precision != FFTD_F64 && d->precision != FFTD_F32
	    && d->precision != FFTD_F16) {
		return fftd__set_error(FFTD_EINVAL,
		    "precision = %d: must be FFTD_F32 or FFTD_F64",
		    (int) d->precision);
	}
	w->n         = (uint64_t) d->n;
	w->precision = (Fftd__Wire__Precision) d->precision;
	w->delta_f   = d->delta_f;
	w->kmin      = d->kmin;
	w->kmax      = d->kmax == 0 ? d->n / 2 + 1 : d->kmax;
	w->t_begin   = d->t_begin;
	w->t_end     = d->t_end == 0 ? d->n : d->t_end;
	w->threshold = d->threshold;
	w->cluster   = d->cluster;
	// sigma^2's array, for STORE and USE (a mode out of range is
	// fftd__mf_check's to name; the span is the daemon's to check)
	w->sigmasq_mode = (uint32_t) d->sigmasq_mode;
	if (d->sigmasq_mode == FFTD_MF_SIGMASQ_STORE
	    || d->sigmasq_mode == FFTD_MF_SIGMASQ_USE) {
		if (d->sigmasq == NULL) {
			return fftd__set_error(FFTD_EINVAL,
			    "sigmasq_mode = %d needs desc->sigmasq, an array",
			    (int) d->sigmasq_mode);
		}
		if (d->sigmasq->client != c) {
			return fftd__set_error(FFTD_EINVAL,
			    "the sigmasq array belongs to another client");
		}
		int rv = fftd__array_alive(d->sigmasq);
		if (rv != FFTD_OK) {
			return rv;
		}
		w->sigmasq_array  = d->sigmasq->id;
		w->sigmasq_offset = d->sigmasq_offset;
	}
	return FFTD_OK;
}

// mf_args_check checks the arrays and the result pointers.
static int
mf_args_check(fftd_client *c, fftd_array *data, fftd_array *psd,
    fftd_array *tpl, const fftd_mf_peak *peaks, size_t peak_size,
    const fftd_mf_trigger *triggers, size_t trigger_size, size_t max_triggers,
    const size_t *ntriggers, const int64_t *series_index, int nseries,
    const void *series)
{
	if (c == NULL || data == NULL || psd == NULL || tpl == NULL) {
		return fftd__set_error(
		    FFTD_EINVAL, "client, data, psd or templates is NULL");
	}
	if (data->client != c || psd->client != c || tpl->client != c) {
		return fftd__set_error(FFTD_EINVAL,
		    "an array (data, psd or templates) belongs to another "
		    "client");
	}
	if (peaks == NULL || ntriggers == NULL
	    || (max_triggers != 0 && triggers == NULL)) {
		return fftd__set_error(FFTD_EINVAL,
		    "peaks or ntriggers is NULL, or triggers is NULL with "
		    "max_triggers %zu",
		    max_triggers);
	}
	if (!fftd__abi_size_ok(peak_size) || !fftd__abi_size_ok(trigger_size)) {
		return fftd__set_error(FFTD_EINVAL,
		    "fftd_mf_peak size %zu or fftd_mf_trigger size %zu is bad",
		    peak_size, trigger_size);
	}
	if (nseries < 0
	    || (nseries > 0 && (series_index == NULL || series == NULL))) {
		return fftd__set_error(FFTD_EINVAL,
		    "nseries = %d: must be >= 0, with series_index and series "
		    "when > 0",
		    nseries);
	}
	int rv = fftd__array_alive(data);
	if (rv == FFTD_OK) {
		rv = fftd__array_alive(psd);
	}
	return rv == FFTD_OK ? fftd__array_alive(tpl) : rv;
}

// mf_payload_len is what the reply's payload takes: its peaks, triggers
// and series rows.
static uint64_t
mf_payload_len(const Fftd__Wire__MatchedFilterReply *mr,
    const fftd__mf_sizes *sz, int64_t count)
{
	return (uint64_t) count * FFTD__MF_PEAK_BYTES
	    + mr->ntriggers * FFTD__MF_TRIGGER_BYTES + sz->series_bytes;
}

_Static_assert(FFTD__MF_RECORDS_ARE(fftd_mf_peak, fftd_mf_trigger),
    "the wire's records are these structs' bytes (mf_wire.h)");

// mf_unpack copies the reply's payload into the caller's results.
static int
mf_unpack(const Fftd__Wire__MatchedFilterReply *mr, const fftd__frame *f,
    const fftd__mf_sizes *sz, int64_t count, fftd_mf_peak *peaks,
    size_t peak_size, fftd_mf_trigger *triggers, size_t trigger_size,
    size_t max_triggers, size_t *ntriggers, size_t *ntotal, void *series)
{
	uint64_t want = mf_payload_len(mr, sz, count);
	if (mr->ntriggers > max_triggers || mr->ntriggers > mr->ntotal
	    || f->payload_len != want) {
		return fftd__set_error(FFTD_EPROTO,
		    "bank reply: %" PRIu64 " triggers of %" PRIu64
		    " (room %zu), %" PRIu64 " payload bytes",
		    mr->ntriggers, mr->ntotal, max_triggers, f->payload_len);
	}
	const uint8_t *p  = f->payload;
	size_t         np = (size_t) count * FFTD__MF_PEAK_BYTES;
	size_t         nt = (size_t) mr->ntriggers * FFTD__MF_TRIGGER_BYTES;
	if (peak_size == sizeof(fftd_mf_peak)
	    && trigger_size == sizeof(fftd_mf_trigger)) {
		// The records are these structs' bytes (FFTD__MF_RECORDS_ARE):
		// one copy each, not a field at a time, which took ~30 us for
		// a 1,024-template call on the H200 host.
		memcpy(peaks, p, np);
		if (nt > 0) {
			memcpy(triggers, p + np, nt);
		}
		p += np + nt;
	} else { // another ABI's sizes (fftd__abi_out)
		for (int64_t j = 0; j < count; j++, p += FFTD__MF_PEAK_BYTES) {
			fftd_mf_peak k;
			fftd__mf_peak_unpack(
			    p, &k.rho, &k.t, &k.sigma, &k.z_re, &k.z_im);
			fftd__abi_out((char *) peaks + (size_t) j * peak_size,
			    peak_size, &k, sizeof(k));
		}
		for (uint64_t i = 0; i < mr->ntriggers;
		     i++, p += FFTD__MF_TRIGGER_BYTES) {
			fftd_mf_trigger t;
			fftd__mf_trigger_unpack(p, &t.template_index, &t.t,
			    &t.rho, &t.z_re, &t.z_im);
			fftd__abi_out(
			    (char *) triggers + (size_t) i * trigger_size,
			    trigger_size, &t, sizeof(t));
		}
	}
	if (sz->series_bytes != 0) {
		memcpy(series, p, (size_t) sz->series_bytes);
	}
	*ntriggers = (size_t) mr->ntriggers;
	if (ntotal != NULL) {
		*ntotal = (size_t) mr->ntotal;
	}
	return FFTD_OK;
}

// fftd_mf_bank_sized runs the bank on the arrays' daemon and waits.
int
fftd_mf_bank_sized(fftd_client *client, const fftd_mf_desc *cdesc,
    size_t desc_size, fftd_array *data, size_t data_offset, fftd_array *psd,
    size_t psd_offset, fftd_array *templates, size_t templates_offset,
    int64_t count, fftd_mf_peak *peaks, size_t peak_size,
    fftd_mf_trigger *triggers, size_t trigger_size, size_t max_triggers,
    size_t *ntriggers, size_t *ntotal, const int64_t *series_index, int nseries,
    void *series)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	fftd_mf_desc d;
	if (cdesc == NULL || !fftd__abi_size_ok(desc_size)) {
		return fftd__set_error(FFTD_EINVAL,
		    "desc is NULL or its size %zu is bad", desc_size);
	}
	fftd_mf_desc_init_sized(&d, sizeof(d));
	fftd__abi_in(&d, sizeof(d), cdesc, desc_size);
	int rv = mf_args_check(client, data, psd, templates, peaks, peak_size,
	    triggers, trigger_size, max_triggers, ntriggers, series_index,
	    nseries, series);
	Fftd__Wire__MatchedFilter mf = FFTD__WIRE__MATCHED_FILTER__INIT;
	if (rv == FFTD_OK) {
		rv = mf_to_wire(client, &mf, &d);
	}
	if (rv != FFTD_OK) {
		return rv;
	}
	mf.data_array       = data->id;
	mf.data_offset      = data_offset;
	mf.psd_array        = psd->id;
	mf.psd_offset       = psd_offset;
	mf.templates_array  = templates->id;
	mf.templates_offset = templates_offset;
	mf.count            = count;
	mf.max_triggers     = max_triggers;
	mf.n_series_index   = (size_t) nseries;
	mf.series_index     = (int64_t *) series_index;
	fftd__mf_sizes sz;
	char           msg[256];
	rv = fftd__mf_check(&mf, UINT64_MAX, &sz, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		return fftd__set_error(rv, "%s", msg);
	}
	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	wr.body_case           = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	wr.matched_filter      = &mf;
	Fftd__Wire__Reply *r   = NULL;
	nng_msg           *m   = NULL;
	fftd__frame        f;
	int                k      = sz.reply_max > SIZE_MAX
	                        ? -1
	                        : fftd__bankch_take(client, (size_t) sz.reply_max);
	bool               unsent = true, broken = false;
	void              *res = NULL;
	if (k >= 0) {
		mf.result_buffer = fftd__bankch_results(client, k, &res);
		mf.result_offset = 0;
		rv               = fftd__bankch_call(
		                  client, k, &wr, &r, &f, &unsent, &broken);
		if (unsent) {
			fftd__bankch_release(client, k, !broken);
			k = -1;
		} else if (rv != FFTD_OK) {
			fftd__bankch_release(client, k, !broken);
			return rv;
		}
	}
	if (k < 0) {
		mf.result_buffer = 0;
		rv = fftd__rpc_payload(client, 0, &wr, NULL, 0, &r, &m, &f);
		if (rv != FFTD_OK) {
			return fftd__url_error(client, 0, rv);
		}
	}
	if (r->body_case != FFTD__WIRE__REPLY__BODY_MATCHED_FILTER) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "bank reply without its counts");
	} else {
		if (k >= 0) { // the results are in the channel's buffer
			f.payload = res;
			f.payload_len
			    = mf_payload_len(r->matched_filter, &sz, count);
		}
		rv = mf_unpack(r->matched_filter, &f, &sz, count, peaks,
		    peak_size, triggers, trigger_size, max_triggers, ntriggers,
		    ntotal, series);
	}
	fftd__wire__reply__free_unpacked(r, NULL);
	if (k >= 0) {
		fftd__bankch_release(client, k, true);
	} else {
		nng_msg_free(m);
	}
	return rv;
}

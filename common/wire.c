// SPDX-License-Identifier: MIT
//
// wire.c — building and parsing fftd frames (see wire.h for the layout).

#include "wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fftd.h"

static void
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t) (v >> (8 * i));
	}
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t) (v >> (8 * i));
	}
}

static uint16_t
get_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

static uint32_t
get_u32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

size_t
fftd__wire_payload_offset(uint32_t pb_len)
{
	size_t end = FFTD__WIRE_HEADER_SIZE + (size_t) pb_len;
	return (end + FFTD__WIRE_ALIGN - 1) & ~(size_t) (FFTD__WIRE_ALIGN - 1);
}

int
fftd__frame_parse(uint8_t *buf, size_t len, fftd__frame *f)
{
	if (buf == NULL || len < FFTD__WIRE_HEADER_SIZE) {
		return FFTD_EPROTO;
	}
	if (get_u32(buf) != FFTD__WIRE_MAGIC) {
		return FFTD_EPROTO;
	}
	f->version     = get_u16(buf + 4);
	f->pb_len      = get_u32(buf + 8);
	f->payload_len = get_u64(buf + 16);
	if (get_u16(buf + 6) != 0 || get_u32(buf + 12) != 0) {
		return FFTD_EPROTO;
	}
	if (f->version != FFTD_PROTOCOL_VERSION) {
		return FFTD_EVERSION;
	}
	if (f->pb_len > FFTD__WIRE_MAX_PB
	    || FFTD__WIRE_HEADER_SIZE + (size_t) f->pb_len > len) {
		return FFTD_EPROTO;
	}
	f->pb = buf + FFTD__WIRE_HEADER_SIZE;
	if (f->payload_len == 0) {
		if (len != FFTD__WIRE_HEADER_SIZE + (size_t) f->pb_len) {
			return FFTD_EPROTO;
		}
		f->payload = NULL;
		return FFTD_OK;
	}
	size_t off = fftd__wire_payload_offset(f->pb_len);
	// Compare without adding, so a huge payload_len cannot wrap around.
	if (off > len || f->payload_len != (uint64_t) (len - off)) {
		return FFTD_EPROTO;
	}
	f->payload = buf + off;
	return FFTD_OK;
}

void
fftd__frame_refusal(int rv, const fftd__frame *f, char *msg, size_t len)
{
	if (rv == FFTD_EVERSION) {
		snprintf(msg, len,
		    "frame of protocol version %u; this daemon speaks %d",
		    (unsigned) f->version, FFTD_PROTOCOL_VERSION);
	} else {
		snprintf(msg, len, "malformed frame header (protocol %d)",
		    FFTD_PROTOCOL_VERSION);
	}
}

int
fftd__msg_build(nng_msg **msgp, const ProtobufCMessage *m, uint64_t payload_len,
    void **payload)
{
	size_t pb_len = protobuf_c_message_get_packed_size(m);
	if (pb_len > FFTD__WIRE_MAX_PB) {
		return FFTD_EPROTO;
	}
	size_t off   = fftd__wire_payload_offset((uint32_t) pb_len);
	size_t total = payload_len ? off : FFTD__WIRE_HEADER_SIZE + pb_len;
	if (payload_len > SIZE_MAX - total) {
		return FFTD_EOVERFLOW;
	}
	total += (size_t) payload_len;
	nng_msg *msg;
	int      rv = nng_msg_alloc(&msg, total);
	if (rv != 0) {
		return rv == NNG_ENOMEM ? FFTD_ENOMEM : FFTD_ENNGERR + rv;
	}
	uint8_t *b = nng_msg_body(msg);
	put_u32(b, FFTD__WIRE_MAGIC);
	put_u16(b + 4, FFTD_PROTOCOL_VERSION);
	put_u16(b + 6, 0);
	put_u32(b + 8, (uint32_t) pb_len);
	put_u32(b + 12, 0);
	put_u64(b + 16, payload_len);
	protobuf_c_message_pack(m, b + FFTD__WIRE_HEADER_SIZE);
	if (payload_len) {
		memset(b + FFTD__WIRE_HEADER_SIZE + pb_len, 0,
		    off - FFTD__WIRE_HEADER_SIZE - pb_len);
		*payload = b + off;
	} else if (payload != NULL) {
		*payload = NULL;
	}
	*msgp = msg;
	return FFTD_OK;
}

void
fftd__desc_to_wire(fftd__wire_desc *w, const fftd_plan_desc *d)
{
	Fftd__Wire__PlanDesc pd     = FFTD__WIRE__PLAN_DESC__INIT;
	Fftd__Wire__Layout   lin    = FFTD__WIRE__LAYOUT__INIT;
	Fftd__Wire__Layout   lou    = FFTD__WIRE__LAYOUT__INIT;
	int                  rank   = d->rank < 0        ? 0
	                       : d->rank > FFTD_MAX_RANK ? FFTD_MAX_RANK
	                                                 : d->rank;
	bool                 any_in = false, any_out = false;
	for (int k = 0; k < rank; k++) {
		w->n[k]       = d->n[k];
		w->inembed[k] = d->inembed[k];
		w->onembed[k] = d->onembed[k];
		any_in |= d->inembed[k] != 0;
		any_out |= d->onembed[k] != 0;
	}
	w->pd  = pd;
	w->in  = lin;
	w->out = lou;
	// The rank travels as given, so the daemon judges it, not the client.
	w->pd.rank       = (uint32_t) d->rank;
	w->pd.n_n        = (size_t) rank;
	w->pd.n          = w->n;
	w->pd.batch      = d->batch;
	w->pd.kind       = (Fftd__Wire__Kind) d->kind;
	w->pd.precision  = (Fftd__Wire__Precision) d->precision;
	w->pd.direction  = d->direction;
	w->pd.norm       = (Fftd__Wire__Norm) d->norm;
	w->in.n_embed    = any_in ? (size_t) rank : 0;
	w->in.embed      = w->inembed;
	w->in.stride     = d->istride;
	w->in.dist       = d->idist;
	w->out.n_embed   = any_out ? (size_t) rank : 0;
	w->out.embed     = w->onembed;
	w->out.stride    = d->ostride;
	w->out.dist      = d->odist;
	w->pd.input      = &w->in;
	w->pd.output     = &w->out;
	w->pd.algorithm  = (char *) (d->algorithm ? d->algorithm : "");
	w->pd.device     = d->device;
	w->pd.priority   = (Fftd__Wire__Priority) d->priority;
	w->pd.tolerance  = d->tolerance;
	w->pd.input_type = (Fftd__Wire__InputType) d->input;
}

int
fftd__desc_from_wire(
    const Fftd__Wire__PlanDesc *pd, fftd_plan_desc *d, char *msg, size_t msglen)
{
	memset(d, 0, sizeof(*d));
	if (pd == NULL) {
		snprintf(msg, msglen, "plan description missing");
		return FFTD_EINVAL;
	}
	if (pd->rank < 1 || pd->rank > FFTD_MAX_RANK) {
		snprintf(msg, msglen, "rank = %u: must be 1, 2 or 3", pd->rank);
		return FFTD_EINVAL;
	}
	int rank = (int) pd->rank;
	if (pd->n_n != (size_t) rank) {
		snprintf(
		    msg, msglen, "%zu sizes given for rank %d", pd->n_n, rank);
		return FFTD_EINVAL;
	}
	const Fftd__Wire__Layout *side[2] = { pd->input, pd->output };
	for (int i = 0; i < 2; i++) {
		if (side[i] != NULL && side[i]->n_embed != 0
		    && side[i]->n_embed != (size_t) rank) {
			snprintf(msg, msglen,
			    "%zu %s embedded sizes given for rank %d",
			    side[i]->n_embed, i ? "output" : "input", rank);
			return FFTD_EINVAL;
		}
	}
	d->rank = rank;
	for (int k = 0; k < rank; k++) {
		d->n[k] = pd->n[k];
		if (pd->input != NULL && pd->input->n_embed) {
			d->inembed[k] = pd->input->embed[k];
		}
		if (pd->output != NULL && pd->output->n_embed) {
			d->onembed[k] = pd->output->embed[k];
		}
	}
	d->batch     = pd->batch;
	d->kind      = (fftd_kind) pd->kind;
	d->precision = (fftd_precision) pd->precision;
	d->direction = (fftd_direction) pd->direction;
	d->norm      = (fftd_norm) pd->norm;
	if (pd->input != NULL) {
		d->istride = pd->input->stride;
		d->idist   = pd->input->dist;
	}
	if (pd->output != NULL) {
		d->ostride = pd->output->stride;
		d->odist   = pd->output->dist;
	}
	d->algorithm = pd->algorithm;
	d->device    = pd->device;
	d->priority  = (fftd_priority) pd->priority;
	d->tolerance = pd->tolerance;
	d->input     = (fftd_input_type) pd->input_type;
	return FFTD_OK;
}

// The totals: one list of fields for both directions.
#define FFTD__STATS_FIELDS(X)                                                  \
	X(uptime_ms)                                                           \
	X(sessions)                                                            \
	X(plans)                                                               \
	X(requests)                                                            \
	X(errors)                                                              \
	X(bytes_in)                                                            \
	X(bytes_out)                                                           \
	X(executes)                                                            \
	X(cache_hits)                                                          \
	X(cache_misses)                                                        \
	X(cache_evictions)                                                     \
	X(cache_entries)                                                       \
	X(cache_bytes)                                                         \
	X(cache_budget_bytes)                                                  \
	X(canceled)                                                            \
	X(expired)                                                             \
	X(stream_channels)

#define FFTD__CLIENT_STATS_FIELDS(X)                                           \
	X(id)                                                                  \
	X(pid)                                                                 \
	X(uid)                                                                 \
	X(weight)                                                              \
	X(requests)                                                            \
	X(errors)                                                              \
	X(executes)                                                            \
	X(bytes_in)                                                            \
	X(bytes_out)                                                           \
	X(canceled)                                                            \
	X(expired)                                                             \
	X(inflight)                                                            \
	X(queued_bytes)                                                        \
	X(queue_seconds)                                                       \
	X(device_seconds)

#define FFTD__DEVICE_STATS_FIELDS(X)                                           \
	X(memory_bytes)                                                        \
	X(memory_used_bytes)                                                   \
	X(busy_seconds)                                                        \
	X(busy_fraction)                                                       \
	X(queued)                                                              \
	X(executes)                                                            \
	X(cache_hits)                                                          \
	X(cache_misses)                                                        \
	X(cache_evictions)                                                     \
	X(cache_entries)                                                       \
	X(cache_bytes)                                                         \
	X(cache_budget_bytes)                                                  \
	X(ipc_mappings)

#define FFTD__TO_WIRE(f) w->f = x->f;
#define FFTD__FROM_WIRE(f) x->f = w->f;

static void
copy_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

static void
copy_hist(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < FFTD_HIST_BUCKETS; i++) {
		dst[i] = i < n ? src[i] : 0;
	}
}

void
fftd__stats_to_wire(Fftd__Wire__Stats *w, const fftd_stats *x)
{
	FFTD__STATS_FIELDS(FFTD__TO_WIRE)
}

void
fftd__stats_from_wire(fftd_stats *x, const Fftd__Wire__Stats *w)
{
	memset(x, 0, sizeof(*x));
	FFTD__STATS_FIELDS(FFTD__FROM_WIRE)
}

void
fftd__client_stats_to_wire(Fftd__Wire__ClientStats *w, fftd_client_stats *x)
{
	FFTD__CLIENT_STATS_FIELDS(FFTD__TO_WIRE)
	w->name          = x->name;
	w->n_queue_hist  = FFTD_HIST_BUCKETS;
	w->queue_hist    = x->queue_hist;
	w->n_device_hist = FFTD_HIST_BUCKETS;
	w->device_hist   = x->device_hist;
}

void
fftd__client_stats_from_wire(
    fftd_client_stats *x, const Fftd__Wire__ClientStats *w)
{
	memset(x, 0, sizeof(*x));
	FFTD__CLIENT_STATS_FIELDS(FFTD__FROM_WIRE)
	copy_name(x->name, sizeof(x->name), w->name);
	copy_hist(x->queue_hist, w->queue_hist, w->n_queue_hist);
	copy_hist(x->device_hist, w->device_hist, w->n_device_hist);
}

void
fftd__device_stats_to_wire(Fftd__Wire__DeviceStats *w, fftd_device_stats *x)
{
	FFTD__DEVICE_STATS_FIELDS(FFTD__TO_WIRE)
	w->index   = (uint32_t) x->index;
	w->name    = x->name;
	w->backend = x->backend;
}

void
fftd__device_stats_from_wire(
    fftd_device_stats *x, const Fftd__Wire__DeviceStats *w)
{
	memset(x, 0, sizeof(*x));
	FFTD__DEVICE_STATS_FIELDS(FFTD__FROM_WIRE)
	x->index = (int) w->index;
	copy_name(x->name, sizeof(x->name), w->name);
	copy_name(x->backend, sizeof(x->backend), w->backend);
}

// fftd__algo_plans_from_wire copies one algorithm's plan count.
void
fftd__algo_plans_from_wire(
    fftd_algorithm_stats *x, const Fftd__Wire__AlgoPlans *w)
{
	memset(x, 0, sizeof(*x));
	copy_name(x->algorithm, sizeof(x->algorithm), w->algorithm);
	x->plans = w->plans;
}

// fftd__speed_entry_to_wire points w's strings into x (x outlives w).
void
fftd__speed_entry_to_wire(Fftd__Wire__SpeedEntry *w, fftd_speed_entry *x)
{
	w->device    = (uint32_t) x->device;
	w->key       = x->key;
	w->algorithm = x->algorithm;
	w->shape     = x->shape;
	w->seconds   = x->seconds;
}

// fftd__speed_entry_from_wire copies a speed table entry, names cut.
void
fftd__speed_entry_from_wire(
    fftd_speed_entry *x, const Fftd__Wire__SpeedEntry *w)
{
	memset(x, 0, sizeof(*x));
	x->device = (int) w->device;
	copy_name(x->key, sizeof(x->key), w->key);
	copy_name(x->algorithm, sizeof(x->algorithm), w->algorithm);
	copy_name(x->shape, sizeof(x->shape), w->shape);
	x->seconds = w->seconds;
}

// fftd__wire_field_bytes: see wire.h.
size_t
fftd__wire_field_bytes(size_t len)
{
	size_t n = 1 + len;
	do {
		n++;
		len >>= 7;
	} while (len != 0);
	return n;
}

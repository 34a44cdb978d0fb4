// SPDX-License-Identifier: MIT
//
// test_wire.c — the frame header (common/wire.c): a table of hand-built
// frames with the exact status fftd__frame_parse must return, the payload
// offset rule, and fftd__msg_build round trips with packed Requests.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../bench/lib/raw.h"
#include "fftd.h"
#include "wire.h"

#define MAGIC FFTD__WIRE_MAGIC
#define V FFTD_PROTOCOL_VERSION

// A packed Ping request, the protobuf part of the good frames.
static uint8_t *
ping_pb(size_t *len, uint64_t token)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    pg = FFTD__WIRE__PING__INIT;
	pg.token               = token;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_PING;
	rq.ping                = &pg;
	return fftd_test_pack(&rq.base, len);
}

typedef struct frame_case {
	const char *name;
	uint32_t    magic;
	uint16_t    version, flags;
	int         pb_len_delta; // pb_len field = real pb length + delta
	uint32_t    reserved;
	uint64_t    payload_field; // payload_len field
	int payload_field_is_real; // field = payload bytes actually sent
	                           // (+delta)
	int64_t payload_delta;
	size_t  payload_bytes; // payload bytes actually present
	int     truncate;      // bytes cut off the end of the frame
	int     extra;         // zero bytes appended to the frame
	int     code;
} frame_case;

static const frame_case frames[] = {
	{ "good, no payload", MAGIC, V, 0, 0, 0, 0, 0, 0, 0, 0, 0, FFTD_OK },
	{ "good, 100-byte payload", MAGIC, V, 0, 0, 0, 0, 1, 0, 100, 0, 0,
	    FFTD_OK },
	{ "good, 1-byte payload", MAGIC, V, 0, 0, 0, 0, 1, 0, 1, 0, 0,
	    FFTD_OK },
	{ "bad magic", 0x44544647u, V, 0, 0, 0, 0, 0, 0, 0, 0, 0, FFTD_EPROTO },
	{ "magic byte-swapped", 0x46465444u, V, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    FFTD_EPROTO },
	{ "version 2", MAGIC, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, FFTD_EVERSION },
	{ "version 0", MAGIC, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, FFTD_EVERSION },
	{ "version 0xffff", MAGIC, 0xffff, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    FFTD_EVERSION },
	{ "nonzero flags", MAGIC, V, 1, 0, 0, 0, 0, 0, 0, 0, 0, FFTD_EPROTO },
	{ "nonzero reserved", MAGIC, V, 0, 0, 0x80000000u, 0, 0, 0, 0, 0, 0,
	    FFTD_EPROTO },
	{ "pb_len one past the end", MAGIC, V, 0, 1, 0, 0, 0, 0, 0, 0, 0,
	    FFTD_EPROTO },
	{ "pb_len far past the end", MAGIC, V, 0, 60000, 0, 0, 0, 0, 0, 0, 0,
	    FFTD_EPROTO },
	{ "pb_len short, no payload: trailing bytes", MAGIC, V, 0, -1, 0, 0, 0,
	    0, 0, 0, 0, FFTD_EPROTO },
	{ "no payload but trailing bytes", MAGIC, V, 0, 0, 0, 0, 0, 0, 0, 0, 3,
	    FFTD_EPROTO },
	{ "payload one byte more than announced", MAGIC, V, 0, 0, 0, 0, 1, 1,
	    100, 0, 0, FFTD_EPROTO },
	{ "payload one byte less than announced", MAGIC, V, 0, 0, 0, 0, 1, -1,
	    100, 0, 0, FFTD_EPROTO },
	{ "payload truncated", MAGIC, V, 0, 0, 0, 0, 1, 0, 256, 56, 0,
	    FFTD_EPROTO },
	{ "payload announced, none sent", MAGIC, V, 0, 0, 0, 64, 0, 0, 0, 0, 0,
	    FFTD_EPROTO },
	{ "payload_len 2^64-1", MAGIC, V, 0, 0, 0, UINT64_MAX, 0, 0, 100, 0, 0,
	    FFTD_EPROTO },
	{ "payload_len 2^63", MAGIC, V, 0, 0, 0, (uint64_t) 1 << 63, 0, 0, 100,
	    0, 0, FFTD_EPROTO },
};

#define NFRAMES (sizeof(frames) / sizeof(frames[0]))

static void
test_parse_table(void **state)
{
	(void) state;
	size_t   pbn;
	uint8_t *pb  = ping_pb(&pbn, 42);
	int      bad = 0;
	for (size_t i = 0; i < NFRAMES; i++) {
		const frame_case *c  = &frames[i];
		uint64_t          pl = c->payload_field;
		if (c->payload_field_is_real) {
			pl = (uint64_t) ((int64_t) c->payload_bytes
			    - c->payload_delta);
		}
		uint8_t *payload = malloc(c->payload_bytes + 1);
		for (size_t k = 0; k < c->payload_bytes; k++) {
			payload[k] = (uint8_t) (k * 13 + 5);
		}
		size_t   len;
		uint8_t *f = fftd_test_frame(&len, c->magic, c->version,
		    c->flags, (uint32_t) ((int) pbn + c->pb_len_delta),
		    c->reserved, pl, pb, pbn, payload, c->payload_bytes);
		len -= (size_t) c->truncate;
		if (c->extra) {
			f = realloc(f, len + (size_t) c->extra);
			memset(f + len, 0, (size_t) c->extra);
			len += (size_t) c->extra;
		}
		fftd__frame fr;
		memset(&fr, 0, sizeof(fr));
		int rv = fftd__frame_parse(f, len, &fr);
		if (rv != c->code) {
			print_error(
			    "%s: got %d, want %d\n", c->name, rv, c->code);
			bad++;
		} else if (rv == FFTD_OK) {
			size_t off = c->payload_bytes
			    ? fftd__wire_payload_offset((uint32_t) pbn)
			    : 0;
			if (fr.version != V || fr.pb_len != pbn
			    || fr.pb != f + FFTD__WIRE_HEADER_SIZE
			    || fr.payload_len != c->payload_bytes
			    || (c->payload_bytes ? fr.payload != f + off
			                         : fr.payload != NULL)
			    || (c->payload_bytes
			        && memcmp(
			            fr.payload, payload, c->payload_bytes))) {
				print_error(
				    "%s: parsed fields wrong\n", c->name);
				bad++;
			}
			Fftd__Wire__Request *rq = fftd__wire__request__unpack(
			    NULL, fr.pb_len, fr.pb);
			if (rq == NULL
			    || rq->body_case != FFTD__WIRE__REQUEST__BODY_PING
			    || rq->ping->token != 42) {
				print_error(
				    "%s: protobuf part does not unpack\n",
				    c->name);
				bad++;
			}
			if (rq != NULL) {
				fftd__wire__request__free_unpacked(rq, NULL);
			}
		}
		free(f);
		free(payload);
	}
	free(pb);
	assert_int_equal(bad, 0);
}

// The refusal of a frame of another version names both versions; of a
// malformed one, the protocol; both fit a short buffer, cut and ended.
static void
test_frame_refusal(void **state)
{
	(void) state;
	size_t      pbn, len;
	uint8_t    *pb = ping_pb(&pbn, 1);
	uint8_t    *f  = fftd_test_frame(&len, MAGIC, (uint16_t) (V + 6), 0,
	        (uint32_t) pbn, 0, 0, pb, pbn, NULL, 0);
	fftd__frame fr;
	char        msg[96], want[96];
	assert_int_equal(fftd__frame_parse(f, len, &fr), FFTD_EVERSION);
	fftd__frame_refusal(FFTD_EVERSION, &fr, msg, sizeof(msg));
	snprintf(want, sizeof(want),
	    "frame of protocol version %d; this daemon speaks %d", V + 6,
	    FFTD_PROTOCOL_VERSION);
	assert_string_equal(msg, want);
	f[0] ^= 0xFF; // bad magic
	assert_int_equal(fftd__frame_parse(f, len, &fr), FFTD_EPROTO);
	fftd__frame_refusal(FFTD_EPROTO, &fr, msg, sizeof(msg));
	snprintf(want, sizeof(want), "malformed frame header (protocol %d)",
	    FFTD_PROTOCOL_VERSION);
	assert_string_equal(msg, want);
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	fftd__frame_refusal(FFTD_EPROTO, &fr, tiny, sizeof(tiny));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	free(f);
	free(pb);
}

// Shorter than a header, at every length, and NULL.
static void
test_parse_short(void **state)
{
	(void) state;
	size_t   pbn, len, flen;
	uint8_t *pb = ping_pb(&pbn, 1);
	uint8_t *f  = fftd_test_frame(
	     &flen, MAGIC, V, 0, (uint32_t) pbn, 0, 0, pb, pbn, NULL, 0);
	fftd__frame fr;
	for (size_t n = 0; n < FFTD__WIRE_HEADER_SIZE; n++) {
		uint8_t *cut
		    = malloc(n ? n : 1); // exact size: ASan sees overreads
		memcpy(cut, f, n);
		assert_int_equal(fftd__frame_parse(cut, n, &fr), FFTD_EPROTO);
		free(cut);
	}
	// A header alone with pb_len 0 is a valid (empty) frame...
	uint8_t *h
	    = fftd_test_frame(&len, MAGIC, V, 0, 0, 0, 0, NULL, 0, NULL, 0);
	assert_int_equal(len, FFTD__WIRE_HEADER_SIZE);
	assert_int_equal(fftd__frame_parse(h, len, &fr), FFTD_OK);
	assert_int_equal(fr.pb_len, 0);
	assert_null(fr.payload);
	free(h);
	// ... but every cut of a real frame fails, never reading past it.
	assert_true(flen > FFTD__WIRE_HEADER_SIZE);
	for (size_t n = FFTD__WIRE_HEADER_SIZE; n < flen; n++) {
		uint8_t *cut = malloc(n);
		memcpy(cut, f, n);
		assert_int_equal(fftd__frame_parse(cut, n, &fr), FFTD_EPROTO);
		free(cut);
	}
	assert_int_equal(fftd__frame_parse(NULL, 100, &fr), FFTD_EPROTO);
	free(f);
	free(pb);
}

// pb_len above FFTD__WIRE_MAX_PB is refused even when the bytes are there.
static void
test_parse_pb_too_large(void **state)
{
	(void) state;
	size_t   n  = FFTD__WIRE_MAX_PB + 1, len;
	uint8_t *pb = calloc(1, n);
	uint8_t *f  = fftd_test_frame(
	     &len, MAGIC, V, 0, (uint32_t) n, 0, 0, pb, n, NULL, 0);
	fftd__frame fr;
	assert_int_equal(fftd__frame_parse(f, len, &fr), FFTD_EPROTO);
	free(f);
	f = fftd_test_frame(&len, MAGIC, V, 0, FFTD__WIRE_MAX_PB, 0, 0, pb,
	    FFTD__WIRE_MAX_PB, NULL, 0);
	assert_int_equal(fftd__frame_parse(f, len, &fr), FFTD_OK);
	free(f);
	free(pb);
}

// A payload_len chosen so that offset + payload_len wraps around to a
// length that would pass an unchecked addition.
static void
test_parse_no_wraparound(void **state)
{
	(void) state;
	size_t   pbn, len;
	uint8_t *pb      = ping_pb(&pbn, 7);
	size_t   off     = fftd__wire_payload_offset((uint32_t) pbn);
	uint64_t wraps[] = {
		(uint64_t) 0 - off,       // off + x == 0
		(uint64_t) 0 - off + 100, // off + x == 100 (mod 2^64)
		(uint64_t) 0 - off + 99,  // off + x < len (mod 2^64)
		UINT64_MAX - 63,
	};
	for (size_t i = 0; i < sizeof(wraps) / sizeof(wraps[0]); i++) {
		uint8_t *f = fftd_test_frame(&len, MAGIC, V, 0, (uint32_t) pbn,
		    0, wraps[i], pb, pbn, NULL, 100);
		fftd__frame fr;
		assert_int_equal(fftd__frame_parse(f, len, &fr), FFTD_EPROTO);
		free(f);
	}
	free(pb);
}

static void
test_payload_offset(void **state)
{
	(void) state;
	static const struct {
		uint32_t pb_len;
		size_t   off;
	} t[] = { { 0, 64 }, { 1, 64 }, { 40, 64 }, { 41, 128 }, { 104, 128 },
		{ 105, 192 }, { 1000, 1024 }, { FFTD__WIRE_MAX_PB, 65600 } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t off = fftd__wire_payload_offset(t[i].pb_len);
		assert_int_equal(off, t[i].off);
		assert_int_equal(off % FFTD__WIRE_ALIGN, 0);
		assert_true(off >= FFTD__WIRE_HEADER_SIZE + t[i].pb_len);
		assert_true(off
		    < FFTD__WIRE_HEADER_SIZE + t[i].pb_len + FFTD__WIRE_ALIGN);
	}
}

// fftd__msg_build and fftd__frame_parse agree: a PlanCreate request with
// every field set survives the trip, the payload sits at a 64-byte
// aligned offset after zero padding.
static void
test_msg_build_round_trip(void **state)
{
	(void) state;
	int64_t                n[3] = { 17, 12, 5 }, ie[3] = { 20, 14, 9 };
	Fftd__Wire__Layout     in  = FFTD__WIRE__LAYOUT__INIT;
	Fftd__Wire__Layout     out = FFTD__WIRE__LAYOUT__INIT;
	Fftd__Wire__PlanDesc   pd  = FFTD__WIRE__PLAN_DESC__INIT;
	Fftd__Wire__PlanCreate pc  = FFTD__WIRE__PLAN_CREATE__INIT;
	Fftd__Wire__Request    rq  = FFTD__WIRE__REQUEST__INIT;
	in.n_embed                 = 3;
	in.embed                   = ie;
	in.stride                  = 2;
	in.dist                    = 12345;
	out.stride                 = 3;
	out.dist                   = -7; // the wire carries what it is given
	pd.rank                    = 3;
	pd.n_n                     = 3;
	pd.n                       = n;
	pd.batch                   = 1ll << 40;
	pd.kind                    = FFTD__WIRE__KIND__R2C;
	pd.precision               = FFTD__WIRE__PRECISION__F16;
	pd.direction               = -1;
	pd.norm                    = FFTD__WIRE__NORM__NORM_ORTHO;
	pd.input                   = &in;
	pd.output                  = &out;
	pd.algorithm               = "split16";
	pd.device                  = -1;
	pc.desc                    = &pd;
	rq.body_case               = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	rq.plan_create             = &pc;

	size_t payloads[] = { 0, 1, 63, 64, 65, 4096 + 3 };
	for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		size_t   pl = payloads[i];
		nng_msg *m  = NULL;
		void    *p  = (void *) 1;
		assert_int_equal(
		    fftd__msg_build(&m, &rq.base, pl, &p), FFTD_OK);
		size_t   pbn  = protobuf_c_message_get_packed_size(&rq.base);
		uint8_t *body = nng_msg_body(m);
		size_t   len  = nng_msg_len(m);
		if (pl == 0) {
			assert_null(p);
			assert_int_equal(len, FFTD__WIRE_HEADER_SIZE + pbn);
		} else {
			size_t off = fftd__wire_payload_offset((uint32_t) pbn);
			assert_ptr_equal(p, body + off);
			assert_int_equal(
			    (size_t) ((uint8_t *) p - body) % 64, 0);
			assert_int_equal(len, off + pl);
			for (size_t k = FFTD__WIRE_HEADER_SIZE + pbn; k < off;
			     k++) {
				assert_int_equal(body[k], 0); // padding is zero
			}
			memset(p, 0xA5, pl);
		}
		// The header bytes, little-endian, as wire.h documents them.
		assert_int_equal(body[0], 'F');
		assert_int_equal(body[1], 'F');
		assert_int_equal(body[2], 'T');
		assert_int_equal(body[3], 'D');
		assert_int_equal(body[4] | body[5] << 8, V);
		assert_int_equal(body[6] | body[7] << 8, 0);
		assert_int_equal(body[8] | body[9] << 8 | body[10] << 16
		        | (uint32_t) body[11] << 24,
		    pbn);
		for (int k = 12; k < 16; k++) {
			assert_int_equal(body[k], 0);
		}
		uint64_t plf = 0;
		for (int k = 7; k >= 0; k--) {
			plf = plf << 8 | body[16 + k];
		}
		assert_int_equal(plf, pl);

		fftd__frame fr;
		assert_int_equal(fftd__frame_parse(body, len, &fr), FFTD_OK);
		assert_int_equal(fr.payload_len, pl);
		assert_int_equal(fr.pb_len, pbn);
		if (pl) {
			assert_ptr_equal(fr.payload, p);
			assert_int_equal(
			    ((uint8_t *) fr.payload)[pl - 1], 0xA5);
		}
		Fftd__Wire__Request *u
		    = fftd__wire__request__unpack(NULL, fr.pb_len, fr.pb);
		assert_non_null(u);
		assert_int_equal(
		    u->body_case, FFTD__WIRE__REQUEST__BODY_PLAN_CREATE);
		Fftd__Wire__PlanDesc *d = u->plan_create->desc;
		assert_non_null(d);
		assert_int_equal(d->rank, 3);
		assert_int_equal(d->n_n, 3);
		assert_memory_equal(d->n, n, sizeof(n));
		assert_int_equal(d->batch, 1ll << 40);
		assert_int_equal(d->kind, FFTD__WIRE__KIND__R2C);
		assert_int_equal(d->precision, FFTD__WIRE__PRECISION__F16);
		assert_int_equal(d->direction, -1);
		assert_int_equal(d->norm, FFTD__WIRE__NORM__NORM_ORTHO);
		assert_int_equal(d->input->n_embed, 3);
		assert_memory_equal(d->input->embed, ie, sizeof(ie));
		assert_int_equal(d->input->stride, 2);
		assert_int_equal(d->input->dist, 12345);
		assert_int_equal(d->output->n_embed, 0);
		assert_int_equal(d->output->stride, 3);
		assert_int_equal(d->output->dist, -7);
		assert_string_equal(d->algorithm, "split16");
		assert_int_equal(d->device, -1);
		fftd__wire__request__free_unpacked(u, NULL);
		nng_msg_free(m);
	}
}

// A payload length that cannot be a message size fails before allocating.
static void
test_msg_build_overflow(void **state)
{
	(void) state;
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    pg = FFTD__WIRE__PING__INIT;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_PING;
	rq.ping                = &pg;
	nng_msg *m             = NULL;
	void    *p             = NULL;
	assert_int_equal(
	    fftd__msg_build(&m, &rq.base, UINT64_MAX, &p), FFTD_EOVERFLOW);
	assert_int_equal(
	    fftd__msg_build(&m, &rq.base, SIZE_MAX - 10, &p), FFTD_EOVERFLOW);
	assert_null(m);
	// A Reply round trip too, with a message and an empty payload.
	Fftd__Wire__Reply rp = FFTD__WIRE__REPLY__INIT;
	rp.status            = FFTD_ENOPLAN;
	rp.message           = "plan 99 is not yours";
	assert_int_equal(fftd__msg_build(&m, &rp.base, 0, NULL), FFTD_OK);
	fftd__frame fr;
	assert_int_equal(
	    fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &fr), FFTD_OK);
	Fftd__Wire__Reply *u
	    = fftd__wire__reply__unpack(NULL, fr.pb_len, fr.pb);
	assert_non_null(u);
	assert_int_equal(u->status, FFTD_ENOPLAN);
	assert_string_equal(u->message, "plan 99 is not yours");
	fftd__wire__reply__free_unpacked(u, NULL);
	nng_msg_free(m);
}

// Statistics survive to_wire, pack, unpack and from_wire field for field:
// every field gets a value of its own, so a field left out or crossed with
// another shows; names are cut to fit and missing buckets read zero.
static void
test_stats_round_trip(void **state)
{
	(void) state;
	fftd_stats t, t2;
	memset(&t, 0, sizeof(t));
	uint64_t *tv = (uint64_t *) &t; // all uint64_t fields
	for (size_t i = 0; i < sizeof(t) / sizeof(uint64_t); i++) {
		tv[i] = 1000 + i;
	}
	fftd_client_stats c, c2;
	memset(&c, 0, sizeof(c));
	c.id = 1, c.pid = 2, c.uid = 3, c.weight = 4.5, c.requests = 5;
	c.errors = 6, c.executes = 7, c.bytes_in = 8, c.bytes_out = 9;
	c.canceled = 10, c.expired = 11, c.inflight = 12, c.queued_bytes = 13;
	c.queue_seconds = 14.25, c.device_seconds = 15.5;
	snprintf(c.name, sizeof(c.name), "pipeline \"x\"");
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		c.queue_hist[i]  = 100 + (uint64_t) i;
		c.device_hist[i] = 200 + (uint64_t) i;
	}
	fftd_device_stats d, d2;
	memset(&d, 0, sizeof(d));
	d.index = 3, d.memory_bytes = 21, d.memory_used_bytes = 22;
	d.busy_seconds = 23.5, d.busy_fraction = 0.75, d.queued = 24;
	d.executes = 25, d.cache_hits = 26, d.cache_misses = 27;
	d.cache_evictions = 28, d.cache_entries = 29, d.cache_bytes = 30;
	d.cache_budget_bytes = 31;
	snprintf(d.name, sizeof(d.name), "NVIDIA H200");
	snprintf(d.backend, sizeof(d.backend), "cuda");

	Fftd__Wire__Stats        ws = FFTD__WIRE__STATS__INIT;
	Fftd__Wire__ClientStats  wc = FFTD__WIRE__CLIENT_STATS__INIT;
	Fftd__Wire__DeviceStats  wd = FFTD__WIRE__DEVICE_STATS__INIT;
	Fftd__Wire__ClientStats *pc = &wc;
	Fftd__Wire__DeviceStats *pd = &wd;
	fftd__stats_to_wire(&ws, &t);
	fftd__client_stats_to_wire(&wc, &c);
	fftd__device_stats_to_wire(&wd, &d);
	ws.n_clients = 1, ws.clients = &pc, ws.n_devices = 1, ws.devices = &pd;
	size_t   len;
	uint8_t *buf = fftd_test_pack(&ws.base, &len);
	assert_non_null(buf);
	Fftd__Wire__Stats *u = fftd__wire__stats__unpack(NULL, len, buf);
	assert_non_null(u);
	fftd__stats_from_wire(&t2, u);
	fftd__client_stats_from_wire(&c2, u->clients[0]);
	fftd__device_stats_from_wire(&d2, u->devices[0]);
	assert_memory_equal(&t, &t2, sizeof(t));
	assert_memory_equal(&c, &c2, sizeof(c));
	assert_memory_equal(&d, &d2, sizeof(d));

	// Fewer buckets on the wire (an older daemon): the rest read zero.
	u->clients[0]->n_queue_hist = 3;
	fftd__client_stats_from_wire(&c2, u->clients[0]);
	assert_int_equal(c2.queue_hist[2], 102);
	assert_int_equal(c2.queue_hist[3], 0);
	fftd__wire__stats__free_unpacked(u, NULL);
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_short),
		cmocka_unit_test(test_frame_refusal),
		cmocka_unit_test(test_parse_pb_too_large),
		cmocka_unit_test(test_parse_no_wraparound),
		cmocka_unit_test(test_payload_offset),
		cmocka_unit_test(test_msg_build_round_trip),
		cmocka_unit_test(test_msg_build_overflow),
		cmocka_unit_test(test_stats_round_trip),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}

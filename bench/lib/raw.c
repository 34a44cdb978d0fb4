// SPDX-License-Identifier: MIT
//
// raw.c — a hand-driven NNG REQ socket for the benchmarks and tests (see
// raw.h).

#include "raw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/protocol/reqrep0/req.h>

#include "fftd.h"
#include "wire.h"

// raw_socket opens a REQ socket with send and receive timeouts of
// timeout_ms and no receive size limit.
static int
raw_socket(nng_socket *s, int timeout_ms)
{
	int rv = nng_req0_open(s);
	if (rv != 0) {
		return rv;
	}
	if ((rv = nng_setopt_ms(*s, NNG_OPT_SENDTIMEO, timeout_ms)) != 0
	    || (rv = nng_setopt_ms(*s, NNG_OPT_RECVTIMEO, timeout_ms)) != 0
	    || (rv = nng_setopt_size(*s, NNG_OPT_RECVMAXSZ, 0)) != 0) {
		nng_close(*s);
	}
	return rv;
}

// fftd_test_raw_open dials url synchronously (raw.h).
int
fftd_test_raw_open(nng_socket *s, const char *url, int timeout_ms)
{
	int rv = raw_socket(s, timeout_ms);
	if (rv == 0 && (rv = nng_dial(*s, url, NULL, 0)) != 0) {
		nng_close(*s);
	}
	return rv;
}

// fftd_test_raw_open_waiting dials url in the background (raw.h).
int
fftd_test_raw_open_waiting(nng_socket *s, const char *url, int timeout_ms)
{
	int rv = raw_socket(s, timeout_ms);
	if (rv != 0) {
		return rv;
	}
	if ((rv = nng_setopt_ms(*s, NNG_OPT_RECONNMINT, 10)) != 0
	    || (rv = nng_setopt_ms(*s, NNG_OPT_RECONNMAXT, 50)) != 0
	    || (rv = nng_dial(*s, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		nng_close(*s); // no dial was made: nothing to hang on
	}
	return rv;
}

// fftd_test_raw_send sends len bytes as one message.
int
fftd_test_raw_send(nng_socket s, const void *buf, size_t len)
{
	nng_msg *m;
	int      rv = nng_msg_alloc(&m, len);
	if (rv != 0) {
		return rv;
	}
	if (len) {
		memcpy(nng_msg_body(m), buf, len);
	}
	if ((rv = nng_sendmsg(s, m, 0)) != 0) {
		nng_msg_free(m);
	}
	return rv;
}

// fftd_test_raw_send_request sends a well-formed frame of rq
// and a payload.
int
fftd_test_raw_send_request(nng_socket s, const Fftd__Wire__Request *rq,
    const void *payload, size_t payload_len)
{
	nng_msg *m;
	void    *p  = NULL;
	int      rv = fftd__msg_build(&m, &rq->base, payload_len, &p);
	if (rv != FFTD_OK) {
		fprintf(stderr, "raw: fftd__msg_build: %d\n", rv);
		return -1;
	}
	if (payload_len) {
		if (payload != NULL) {
			memcpy(p, payload, payload_len);
		} else {
			memset(p, 0, payload_len);
		}
	}
	if ((rv = nng_sendmsg(s, m, 0)) != 0) {
		nng_msg_free(m);
	}
	return rv;
}

// fftd_test_raw_recv_reply receives and unpacks one reply
// (raw.h).
int
fftd_test_raw_recv_reply(
    nng_socket s, Fftd__Wire__Reply **rp, uint64_t *payload_len)
{
	nng_msg *m;
	int      rv = nng_recvmsg(s, &m, 0);
	if (rv != 0) {
		fprintf(stderr, "raw: no reply: %s\n", nng_strerror(rv));
		return -1;
	}
	fftd__frame f;
	rv = fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &f);
	if (rv != FFTD_OK) {
		fprintf(stderr,
		    "raw: reply frame does not parse: %d (%zu bytes)\n", rv,
		    nng_msg_len(m));
		nng_msg_free(m);
		return -1;
	}
	Fftd__Wire__Reply *r = fftd__wire__reply__unpack(NULL, f.pb_len, f.pb);
	if (payload_len != NULL) {
		*payload_len = f.payload_len;
	}
	nng_msg_free(m);
	if (r == NULL) {
		fprintf(stderr, "raw: Reply does not unpack\n");
		return -1;
	}
	*rp = r;
	return 0;
}

// finish receives a reply and returns its status, keeping the reply in *rp
// (when not NULL) or freeing it.
static int
finish(nng_socket s, Fftd__Wire__Reply **rp)
{
	Fftd__Wire__Reply *r;
	if (fftd_test_raw_recv_reply(s, &r, NULL) != 0) {
		return -1;
	}
	int status = r->status;
	if (rp != NULL) {
		*rp = r;
	} else {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return status;
}

// fftd_test_raw_call sends raw bytes and receives the reply.
int
fftd_test_raw_call(
    nng_socket s, const void *buf, size_t len, Fftd__Wire__Reply **rp)
{
	int rv = fftd_test_raw_send(s, buf, len);
	if (rv != 0) {
		fprintf(stderr, "raw: send: %s\n", nng_strerror(rv));
		return -1;
	}
	return finish(s, rp);
}

// fftd_test_raw_request sends rq and receives the reply.
int
fftd_test_raw_request(nng_socket s, const Fftd__Wire__Request *rq,
    const void *payload, size_t payload_len, Fftd__Wire__Reply **rp)
{
	int rv = fftd_test_raw_send_request(s, rq, payload, payload_len);
	if (rv != 0) {
		fprintf(stderr, "raw: send request: %d\n", rv);
		return -1;
	}
	return finish(s, rp);
}

// fftd_test_raw_hello sends a Hello of a protocol version.
int
fftd_test_raw_hello(nng_socket s, uint32_t version, Fftd__Wire__Reply **rp)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Hello   h  = FFTD__WIRE__HELLO__INIT;
	h.protocol_version     = version;
	h.client_name          = "fftd-tests-raw";
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_HELLO;
	rq.hello               = &h;
	return fftd_test_raw_request(s, &rq, NULL, 0, rp);
}

// put_le stores v little-endian in n bytes.
static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		p[i] = (uint8_t) (v >> (8 * i));
	}
}

// fftd_test_frame builds a frame by hand, field by field (raw.h).
uint8_t *
fftd_test_frame(size_t *len, uint32_t magic, uint16_t version, uint16_t flags,
    uint32_t pb_len, uint32_t reserved, uint64_t payload_len, const void *pb,
    size_t pb_bytes, const void *payload, size_t payload_bytes)
{
	size_t   end   = FFTD__WIRE_HEADER_SIZE + pb_bytes;
	size_t   off   = payload_bytes
	        ? (end + FFTD__WIRE_ALIGN - 1) & ~(size_t) (FFTD__WIRE_ALIGN - 1)
	        : end;
	size_t   total = off + payload_bytes;
	uint8_t *b     = calloc(1, total ? total : 1);
	if (b == NULL) {
		abort();
	}
	put_le(b, magic, 4);
	put_le(b + 4, version, 2);
	put_le(b + 6, flags, 2);
	put_le(b + 8, pb_len, 4);
	put_le(b + 12, reserved, 4);
	put_le(b + 16, payload_len, 8);
	if (pb_bytes) {
		memcpy(b + FFTD__WIRE_HEADER_SIZE, pb, pb_bytes);
	}
	if (payload_bytes && payload != NULL) {
		memcpy(b + off, payload, payload_bytes);
	}
	*len = total;
	return b;
}

// fftd_test_pack packs a protobuf-c message into a malloc'd buffer.
uint8_t *
fftd_test_pack(const ProtobufCMessage *m, size_t *len)
{
	size_t   n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(n ? n : 1);
	if (b == NULL) {
		abort();
	}
	*len = protobuf_c_message_pack(m, b);
	return b;
}

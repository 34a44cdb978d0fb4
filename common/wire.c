// SPDX-License-Identifier: MIT
//
// wire.c — building and parsing fftd frames (see wire.h for the layout).

#include "wire.h"

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
	f->version = get_u16(buf + 4);
	f->pb_len = get_u32(buf + 8);
	f->payload_len = get_u64(buf + 16);
	if (get_u16(buf + 6) != 0 || get_u32(buf + 12) != 0) {
		return FFTD_EPROTO;
	}
	if (f->version != FFTD_PROTOCOL_VERSION) {
		return FFTD_EVERSION;
	}
	if (f->pb_len > FFTD__WIRE_MAX_PB ||
	    FFTD__WIRE_HEADER_SIZE + (size_t) f->pb_len > len) {
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

int
fftd__msg_build(nng_msg **msgp, const ProtobufCMessage *m,
    uint64_t payload_len, void **payload)
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

// SPDX-License-Identifier: MIT
//
// wire.h — PRIVATE to fftd (not installed). The frame that carries every
// request and reply over NNG, shared by the client library and the daemon.
//
// Frame layout (all integers little-endian):
//   offset  0  u32  magic "FFTD" (0x44544646)
//   offset  4  u16  protocol version (FFTD_PROTOCOL_VERSION)
//   offset  6  u16  flags (0; reserved)
//   offset  8  u32  length of the protobuf-c message that follows
//   offset 12  u32  reserved (0)
//   offset 16  u64  payload length in bytes
//   offset 24       protobuf-c Request or Reply (proto/fftd.proto)
//   then zero bytes up to the next multiple of 64, then the payload.
// A frame without payload ends right after the protobuf message.

#ifndef FFTD_COMMON_WIRE_H
#define FFTD_COMMON_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "fftd.h"
#include "fftd.pb-c.h"

#define FFTD__WIRE_MAGIC 0x44544646u
#define FFTD__WIRE_HEADER_SIZE 24u
#define FFTD__WIRE_ALIGN 64u
// Protobuf parts are small (ids and shapes); anything bigger is malformed.
#define FFTD__WIRE_MAX_PB (64u * 1024u)
// Room a paged reply keeps below FFTD__WIRE_MAX_PB for its own fields,
// length prefixes and the frame's varints (daemon/stats.c, algo_stats.c).
#define FFTD__WIRE_PAGE_SLACK 256u

// fftd__wire_field_bytes is what one nested message of len packed bytes
// costs in its parent: a one-byte tag, the length varint, the message.
size_t fftd__wire_field_bytes(size_t len);

// fftd__frame is a parsed frame header.
typedef struct fftd__frame {
	uint16_t       version;
	uint32_t       pb_len;
	uint64_t       payload_len;
	const uint8_t *pb;      // protobuf bytes inside the message body
	uint8_t       *payload; // payload inside the message body, or NULL
} fftd__frame;

// fftd__wire_payload_offset returns where the payload of a frame whose
// protobuf part is pb_len bytes long starts.
size_t fftd__wire_payload_offset(uint32_t pb_len);

// fftd__frame_parse checks the frame header of buf[0..len) and fills *f.
// Returns FFTD_OK, FFTD_EVERSION (good magic, other version) or FFTD_EPROTO
// (short, bad magic, lengths that disagree with len, pb_len too large).
int fftd__frame_parse(uint8_t *buf, size_t len, fftd__frame *f);

// fftd__frame_refusal writes into msg (len bytes) the daemon's answer to a
// frame that fftd__frame_parse refused with rv (FFTD_EVERSION: f's
// version, which the parse set; else malformed), for every transport that
// reads frames (NNG requests, bank channels).
void fftd__frame_refusal(int rv, const fftd__frame *f, char *msg, size_t len);

// fftd__msg_build allocates an NNG message holding a frame with the packed
// protobuf message m and room for payload_len payload bytes, and stores the
// payload's address in *payload (NULL when payload_len is 0). The payload is
// left uninitialised. On success the caller owns *msgp.
int fftd__msg_build(nng_msg **msgp, const ProtobufCMessage *m,
    uint64_t payload_len, void **payload);

// fftd__hist_bucket is the latency histogram bucket of a duration in
// seconds (the first whose bound, fftd_hist_bound, is not below it):
// client/hist.c, which the daemon links too.
int fftd__hist_bucket(double seconds);

// Statistics between their public structs and the wire. The _to_wire
// forms point w's strings and histograms into x, which must outlive w's
// use; the _from_wire forms copy (names cut to fit, missing histogram
// buckets zero).
void fftd__stats_to_wire(Fftd__Wire__Stats *w, const fftd_stats *x);
void fftd__stats_from_wire(fftd_stats *x, const Fftd__Wire__Stats *w);
void fftd__client_stats_to_wire(
    Fftd__Wire__ClientStats *w, fftd_client_stats *x);
void fftd__client_stats_from_wire(
    fftd_client_stats *x, const Fftd__Wire__ClientStats *w);
void fftd__device_stats_to_wire(
    Fftd__Wire__DeviceStats *w, fftd_device_stats *x);
void fftd__device_stats_from_wire(
    fftd_device_stats *x, const Fftd__Wire__DeviceStats *w);
void fftd__algo_plans_from_wire(
    fftd_algorithm_stats *x, const Fftd__Wire__AlgoPlans *w);
void fftd__speed_entry_to_wire(Fftd__Wire__SpeedEntry *w, fftd_speed_entry *x);
void fftd__speed_entry_from_wire(
    fftd_speed_entry *x, const Fftd__Wire__SpeedEntry *w);

// fftd__wire_desc is the storage behind a packed PlanDesc (its repeated
// fields point into it), so building one needs no allocation.
typedef struct fftd__wire_desc {
	Fftd__Wire__PlanDesc pd;
	Fftd__Wire__Layout   in, out;
	int64_t              n[FFTD_MAX_RANK];
	int64_t              inembed[FFTD_MAX_RANK], onembed[FFTD_MAX_RANK];
} fftd__wire_desc;

// fftd__desc_to_wire fills w from d (which must outlive w's use).
void fftd__desc_to_wire(fftd__wire_desc *w, const fftd_plan_desc *d);

// fftd__desc_from_wire converts an unpacked PlanDesc into *d (algorithm
// points into pd). Returns FFTD_OK, or FFTD_EINVAL with msg filled when the
// repeated fields disagree with the rank or a field is missing.
int fftd__desc_from_wire(const Fftd__Wire__PlanDesc *pd, fftd_plan_desc *d,
    char *msg, size_t msglen);

#endif // FFTD_COMMON_WIRE_H

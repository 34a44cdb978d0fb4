// SPDX-License-Identifier: MIT
//
// raw.h — PRIVATE to fftd's benchmarks and tests (bench/lib). A raw NNG REQ
// socket that speaks the wire protocol by hand (common/wire.h framing,
// protobuf-c messages from build/gen/fftd.pb-c.h), for probing the daemon
// without libfftd and for sending it frames no correct client would send.

#ifndef FFTD_BENCH_RAW_H
#define FFTD_BENCH_RAW_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "fftd.pb-c.h"

// fftd_test_raw_open opens a REQ socket, dials url (synchronously: fails at
// once when nobody listens) and sets send and receive timeouts of
// timeout_ms. Returns 0 or an NNG error.
int fftd_test_raw_open(nng_socket *s, const char *url, int timeout_ms);

// fftd_test_raw_open_waiting is fftd_test_raw_open for a daemon that may
// not listen yet: the dial does not wait, NNG redials in the background
// every 10-50 ms, and requests wait for the connection (up to the
// timeouts). No refused dial is ever closed: NNG 1.5's nng_close after a
// refused synchronous dial can hang with its poller spinning (seen once
// in a CI run, in the test daemon's start-up probe).
int fftd_test_raw_open_waiting(nng_socket *s, const char *url, int timeout_ms);

// fftd_test_raw_send sends len arbitrary bytes as one message.
int fftd_test_raw_send(nng_socket s, const void *buf, size_t len);

// fftd_test_raw_send_request sends a well-formed frame holding request rq
// and payload_len bytes of payload (copied from payload, zeros if NULL).
int fftd_test_raw_send_request(nng_socket s, const Fftd__Wire__Request *rq,
    const void *payload, size_t payload_len);

// fftd_test_raw_recv_reply receives one message, checks its frame and
// unpacks the Reply into *rp (free it with fftd__wire__reply__free_unpacked
// (*rp, NULL)). If payload_len is not NULL it receives the reply's payload
// length. Returns 0, or -1 after printing why (no reply in time, bad frame,
// unparsable Reply).
int fftd_test_raw_recv_reply(
    nng_socket s, Fftd__Wire__Reply **rp, uint64_t *payload_len);

// fftd_test_raw_call sends len raw bytes and receives the reply
// (fftd_test_raw_recv_reply). Returns the reply's status, or -1 if there
// was no parsable reply. *rp (may be NULL) keeps the reply when 0 or a
// status is returned.
int fftd_test_raw_call(
    nng_socket s, const void *buf, size_t len, Fftd__Wire__Reply **rp);

// fftd_test_raw_request sends rq with payload (fftd_test_raw_send_request)
// and receives the reply like fftd_test_raw_call.
int fftd_test_raw_request(nng_socket s, const Fftd__Wire__Request *rq,
    const void *payload, size_t payload_len, Fftd__Wire__Reply **rp);

// fftd_test_raw_hello sends a Hello of protocol version `version` and
// returns the reply's status (-1: no reply), keeping the reply in *rp if rp
// is not NULL.
int fftd_test_raw_hello(nng_socket s, uint32_t version, Fftd__Wire__Reply **rp);

// fftd_test_frame builds a frame by hand: the 24-byte header with the given
// magic, version, flags, pb_len field, reserved field and payload_len
// field, then pb_bytes bytes of pb, zero padding up to the 64-byte aligned
// payload offset of pb_bytes (only if payload_bytes > 0), and payload_bytes
// bytes of payload (zeros if payload is NULL). Returns a malloc'd buffer
// and its length in *len.
uint8_t *fftd_test_frame(size_t *len, uint32_t magic, uint16_t version,
    uint16_t flags, uint32_t pb_len, uint32_t reserved, uint64_t payload_len,
    const void *pb, size_t pb_bytes, const void *payload, size_t payload_bytes);

// fftd_test_pack packs a protobuf-c message into a malloc'd buffer and
// stores its length in *len.
uint8_t *fftd_test_pack(const ProtobufCMessage *m, size_t *len);

#endif // FFTD_BENCH_RAW_H

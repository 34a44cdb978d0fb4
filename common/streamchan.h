// SPDX-License-Identifier: MIT
//
// streamchan.h — PRIVATE to fftd (libfftd and the daemon; not installed).
// The wire contract of a stream channel (StreamOpen in proto/fftd.proto):
// the packets that client/stream.c sends and reads and daemon/chan.c and
// the server read and send. Both ends run on one host (ipc:// only), so the
// structs travel in native layout; each is one SOCK_SEQPACKET packet.

#ifndef FFTD_COMMON_STREAMCHAN_H
#define FFTD_COMMON_STREAMCHAN_H

#include <stdint.h>

// Client to daemon: run the plan on slot `slot` (deadline_us as Execute's).
typedef struct fftd__chan_submit {
	uint32_t slot;
	uint32_t flags; // 0
	uint64_t tag;   // echoed in the answer
	uint64_t deadline_us;
} fftd__chan_submit;

// Daemon to client: the answer to submission `tag`; msg (NUL-terminated)
// says why when status is not FFTD_OK. Sent without the unused tail of
// msg: a packet is at least offsetof(fftd__chan_reply, msg) + 1 bytes.
typedef struct fftd__chan_reply {
	int32_t  status;
	uint32_t slot;
	uint64_t tag;
	// CLOCK_MONOTONIC ns (one clock on one host) when the daemon's channel
	// thread read the submission, and its worker started and finished it
	// (0 when it did not run): fftd_stream_last_times.
	uint64_t received_ns, started_ns, finished_ns;
	char     msg[232];
} fftd__chan_reply;

#endif // FFTD_COMMON_STREAMCHAN_H

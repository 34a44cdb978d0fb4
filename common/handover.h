// SPDX-License-Identifier: MIT
//
// handover.h — PRIVATE to fftd (libfftd and the daemon; not installed). The
// wire contract of the descriptor hand-over: the Unix socket over which a
// local client hands the daemon the file descriptor of a shared-memory
// buffer or a stream channel's socket (NNG's ipc transport cannot carry
// descriptors). client/buffer.c speaks the client's side, daemon/fdsock.c
// serves the daemon's. One short connection per descriptor (a reply of
// FFTD_ELIMIT may come before the request is read: the client reads the
// reply even if its send failed):
//   client → daemon: 16-byte token, u64 LE byte count; SCM_RIGHTS: one fd
//   daemon → client: i32 LE status, u32 0, u64 LE buffer id, 240-byte
//                    NUL-terminated message
// The token, obtained over NNG (BufferRegister, StreamOpen), ties the
// descriptor to one client connection; the sender's SO_PEERCRED must match
// that connection's.

#ifndef FFTD_COMMON_HANDOVER_H
#define FFTD_COMMON_HANDOVER_H

// The request: the token, then the byte count at FFTD__FDSOCK_TOKEN.
#define FFTD__FDSOCK_TOKEN 16
#define FFTD__FDSOCK_REQ 24
// The reply: status at 0, the buffer id at FFTD__FDSOCK_REPLY_ID, the
// message at FFTD__FDSOCK_REPLY_MSG up to the end.
#define FFTD__FDSOCK_REPLY 256
#define FFTD__FDSOCK_REPLY_ID 8
#define FFTD__FDSOCK_REPLY_MSG 16

#endif // FFTD_COMMON_HANDOVER_H

// SPDX-License-Identifier: MIT
//
// fdsock.h — PRIVATE to fftd. The Unix socket over which local clients
// hand the daemon the file descriptor of a shared-memory buffer (NNG's ipc
// transport cannot carry descriptors). One short connection per buffer:
//   client → daemon: 16-byte token, u64 LE byte count; SCM_RIGHTS: one fd
//   daemon → client: i32 LE status, u32 0, u64 LE buffer id, 240-byte
//                    NUL-terminated message
// The token, obtained over NNG (BufferRegister), ties the descriptor to one
// client connection; the sender's SO_PEERCRED must match that connection's.

#ifndef FFTD_DAEMON_FDSOCK_H
#define FFTD_DAEMON_FDSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define FFTD__FDSOCK_TOKEN 16
#define FFTD__FDSOCK_REQ 24
#define FFTD__FDSOCK_REPLY 256
#define FFTD__FDSOCK_MAX_FDS 4 // descriptors taken from one request

typedef struct fftd__fdsock fftd__fdsock;

// fftd__fdsock_cb handles one received descriptor (on the socket's own
// thread): returns an fftd_error, and on success the buffer id in *id. The
// descriptor stays the caller's: it is closed after the callback returns.
typedef int (*fftd__fdsock_cb)(void *arg, const uint8_t *token, uint64_t bytes,
    int fd, const struct ucred *peer, uint64_t *id, char *msg, size_t msglen);

// fftd__fdsock_start binds path (replacing a stale socket there), sets its
// mode, and serves it on a thread of its own.
int fftd__fdsock_start(fftd__fdsock **fp, const char *path, int mode,
    fftd__fdsock_cb cb, void *arg, char *err, size_t errlen);

// fftd__fdsock_stop stops the thread, closes and unlinks the socket.
void fftd__fdsock_stop(fftd__fdsock *f);

// fftd__fdsock_parse reads one received request: recvmsg returned n into
// mh, whose one iovec holds FFTD__FDSOCK_REQ bytes. The descriptors of its
// SCM_RIGHTS messages go into fds (at most FFTD__FDSOCK_MAX_FDS), their
// number into *nfds: the caller closes them, whatever the result (after a
// failed receive, n < 0, there are none, whatever mh's control part holds,
// since recvmsg wrote nothing there). Returns
// FFTD_OK with *bytes (the token is the data's first FFTD__FDSOCK_TOKEN
// bytes), or FFTD_EPROTO with msg saying why. No I/O, so that a fuzzer can
// call it (tests/fuzz).
int fftd__fdsock_parse(struct msghdr *mh, ssize_t n, int *fds, int *nfds,
    uint64_t *bytes, char *msg, size_t msglen);

#endif // FFTD_DAEMON_FDSOCK_H

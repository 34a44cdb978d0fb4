// SPDX-License-Identifier: MIT
//
// fdsock.h — PRIVATE to fftd. The Unix socket over which local clients
// hand the daemon the file descriptor of a shared-memory buffer or a stream
// channel's socket (NNG's ipc transport cannot carry descriptors). One short
// connection per descriptor (a reply of FFTD_ELIMIT may come before the
// request is read: the client reads the reply even if its send failed):
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
// mode, and serves it on a thread of its own: all connections at once,
// each with 2 s to send its request, at most max_per_user of one user open
// at a time (one more is answered FFTD_ELIMIT and closed).
int fftd__fdsock_start(fftd__fdsock **fp, const char *path, int mode,
    int max_per_user, fftd__fdsock_cb cb, void *arg, char *err, size_t errlen);

// fftd__fdsock_set_max_per_user changes that limit (config reload); f may
// be NULL.
void fftd__fdsock_set_max_per_user(fftd__fdsock *f, int max_per_user);

// fftd__fdsock_stop stops the thread, closes and unlinks the socket.
void fftd__fdsock_stop(fftd__fdsock *f);


#endif // FFTD_DAEMON_FDSOCK_H

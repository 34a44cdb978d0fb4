// SPDX-License-Identifier: MIT
//
// fdsock.h — PRIVATE to fftd. The Unix socket over which local clients
// hand the daemon the file descriptor of a shared-memory buffer or a stream
// channel's socket (NNG's ipc transport cannot carry descriptors). Its wire
// contract (request, reply, token) is common/handover.h, which libfftd
// includes too.

#ifndef FFTD_DAEMON_FDSOCK_H
#define FFTD_DAEMON_FDSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "handover.h"

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

// One connection's request, as the socket's thread serves it: a
// connection is read (fftd__fdsock_read, which calls fftd__fdsock_take)
// each time poll() says it is readable, until that says it is done or its
// 2 s are up; then fftd__fdsock_finish checks the request
// (fftd__fdsock_check), hands its descriptor to the callback, closes the
// descriptors (fftd__fdsock_release) and answers. These are declared here
// so that unit tests and tests/fuzz/fuzz-fdsock.c call what the daemon
// calls.

// fftd__fdsock_req is a request gathered over several receives. Zeroed,
// it is an empty one.
typedef struct fftd__fdsock_req {
	size_t  got;                       // bytes of buf received
	uint8_t buf[FFTD__FDSOCK_REQ];     // token, then u64 LE byte count
	int     fds[FFTD__FDSOCK_MAX_FDS]; // descriptors held (to close)
	int     nfds;   // descriptors received; past MAX_FDS, closed at once
	bool    ctrunc; // a receive's control data was cut (MSG_CTRUNC)
} fftd__fdsock_req;

// fftd__fdsock_take adds one recvmsg() result to r: n is what it returned
// (err its errno when n < 0), mh the msghdr it filled, whose one iovec was
// buf + got with room for the rest of the request. The descriptors of
// mh's SCM_RIGHTS messages become r's (past FFTD__FDSOCK_MAX_FDS they are
// closed and only counted); a receive that failed (n < 0) takes none,
// whatever mh's control buffer holds, since the kernel wrote nothing
// there. Returns true when the connection is done: the request is
// complete, the peer hung up (n == 0), or the receive failed other than
// EAGAIN/EWOULDBLOCK/EINTR. Closing surplus descriptors is its only I/O.
bool fftd__fdsock_take(
    fftd__fdsock_req *r, struct msghdr *mh, ssize_t n, int err);

// fftd__fdsock_read receives what connection cfd (non-blocking) has sent
// into r with one recvmsg() and takes it (fftd__fdsock_take, whose answer
// it returns).
bool fftd__fdsock_read(fftd__fdsock_req *r, int cfd);

// fftd__fdsock_check checks a request that is done (timed_out: its 2 s
// ran out): FFTD_OK with the byte count in *bytes when it has all
// FFTD__FDSOCK_REQ bytes, exactly one descriptor and no control data cut;
// FFTD_ESYSERR + EMFILE for a whole request whose control data was cut
// with no descriptor received (the kernel drops what it cannot install);
// otherwise FFTD_EPROTO with msg saying why. No I/O.
int fftd__fdsock_check(const fftd__fdsock_req *r, bool timed_out,
    uint64_t *bytes, char *msg, size_t msglen);

// fftd__fdsock_release closes the descriptors r holds and forgets them.
void fftd__fdsock_release(fftd__fdsock_req *r);

// fftd__fdsock_finish answers connection cfd, whose request r is done:
// FFTD_EPROTO without peer credentials or when fftd__fdsock_check refuses
// it, else what cb answers for its descriptor. r's descriptors are closed
// (fftd__fdsock_release), the reply is sent (a peer that hung up is not
// told), and its status is returned; cfd stays open (the caller's).
int fftd__fdsock_finish(fftd__fdsock_req *r, int cfd, bool timed_out,
    fftd__fdsock_cb cb, void *arg);
#endif // FFTD_DAEMON_FDSOCK_H

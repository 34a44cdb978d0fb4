// SPDX-License-Identifier: MIT
//
// fuzz-fdsock.c — libFuzzer target for the descriptor hand-over
// (daemon/fdsock.c). What a client controls is what it sends and when; the
// kernel shapes what the daemon receives. So each input is sent for real
// over a fresh AF_UNIX stream socket pair whose receiving end is as the
// daemon's accepted sockets are (non-blocking, close-on-exec), and served
// as the daemon's poll loop serves a connection: fftd__fdsock_read each
// time the socket is readable until it says the connection is done, or,
// when nothing more comes and the peer stays, the time-out; then
// fftd__fdsock_finish with a callback standing for the server's.
//
// Input: a mode byte, then up to 7 chunks, each a flags byte, a length
// byte and that many bytes of data (fewer if the input ends).
//   mode bits 0-1  after the chunks the peer 0: closes, 1: shuts its
//                  sending side (and reads the reply), 2-3: stays, silent
//                  (the daemon's 2 s run out)
//        bit  2    the peer's socket has SO_PASSCRED (credentials ride
//                  on every chunk; the daemon does not receive them)
//        bit  3    the daemon's end has SO_PASSCRED (not what the daemon
//                  sets: credentials then fill its control buffer and
//                  any descriptor is cut, MSG_CTRUNC)
//        bit  4    the callback refuses (FFTD_EINVAL)
//        bits 5-7  chunks (0: a peer that sends nothing)
//   flags bits 0-2 descriptors sent with the chunk (0 .. 6; 7 counts as 6)
//         bit  3   SCM_CREDENTIALS (the peer's own) with the chunk
//         bit  4   the daemon reads once right after this chunk
//         bit  5   the daemon reads once before it, without asking poll():
//                  EAGAIN when nothing is there (a receive that fails
//                  must take nothing from its control buffer)
//   length: 1 + byte % 32 bytes
//
// Checks, for every input: the status is exactly what the bytes and
// descriptors sent make it (the first 24 bytes, the descriptors of the
// chunks that begin inside them, at most 4 a receive, more is MSG_CTRUNC):
// FFTD_OK or the callback's answer only for 24 bytes and one descriptor,
// FFTD_ESYSERR + EMFILE for 24 bytes whose descriptors were all cut,
// else FFTD_EPROTO with the documented message, and the same status in
// the reply when the peer reads it; the callback gets the token and byte
// count as sent, a descriptor of the file sent that was not open before
// the input, and the peer's credentials; no descriptor is open after
// finish but the two sockets, and none after they close.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdsock.h"
#include "fftd.h"

#define MAX_CHUNK 32
#define MAX_SEND_FDS 6
#define FD_SCAN                                                                \
	64 // descriptors checked for leaks: 0 .. 63 (a new one
	   // gets the lowest free number: a leak shows there)

// CHECK aborts, saying which check failed, unless c holds.
#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(                                               \
			    stderr, "fuzz-fdsock.c:%d: %s\n", __LINE__, #c);   \
			abort();                                               \
		}                                                              \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// What the callback must see, and what it saw.
static struct {
	const uint8_t *req;    // the first 24 bytes sent
	struct stat    sent;   // the file whose descriptors were sent
	uint64_t       before; // descriptors open before the input
	int            answer; // what it answers
	int            calls;
} cb_state;

// on_fd stands for the server's callback: checks what it is handed.
static int
on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen)
{
	(void) arg;
	uint64_t want = 0;
	for (int k = 7; k >= 0; k--) {
		want = (want << 8) | cb_state.req[FFTD__FDSOCK_TOKEN + k];
	}
	struct stat st;
	CHECK(memcmp(token, cb_state.req, FFTD__FDSOCK_TOKEN) == 0);
	CHECK(bytes == want);
	CHECK(peer->pid == getpid() && peer->uid == getuid());
	// A descriptor of the file sent, received now: not one of ours.
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	CHECK(st.st_ino == cb_state.sent.st_ino
	    && st.st_dev == cb_state.sent.st_dev);
	CHECK(fd >= FD_SCAN || !(cb_state.before >> fd & 1));
	cb_state.calls++;
	*id = 0x0123456789abcdefull;
	if (cb_state.answer != FFTD_OK) {
		snprintf(msg, msglen, "refused");
	}
	return cb_state.answer;
}

// open_fds returns which of the descriptors 0 .. FD_SCAN - 1 are open.
static uint64_t
open_fds(void)
{
	uint64_t m = 0;
	for (int fd = 0; fd < FD_SCAN; fd++) {
		if (fcntl(fd, F_GETFD) >= 0) {
			m |= 1ull << fd;
		}
	}
	return m;
}

// send_chunk sends len bytes with nfds descriptors (all fd) and, when
// creds, the sender's credentials.
static void
send_chunk(int s, const uint8_t *p, size_t len, int fd, int nfds, bool creds)
{
	union {
		struct cmsghdr h;
		char           b[CMSG_SPACE(MAX_SEND_FDS * sizeof(int))
                    + CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec  iov  = { (void *) p, len };
	struct msghdr mh   = { 0 };
	size_t        clen = 0;
	mh.msg_iov         = &iov;
	mh.msg_iovlen      = 1;
	struct cmsghdr *c  = &ctl.h;
	if (nfds > 0) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type  = SCM_RIGHTS;
		c->cmsg_len   = CMSG_LEN(nfds * sizeof(int));
		for (int i = 0; i < nfds; i++) {
			memcpy(
			    CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
		}
		clen += CMSG_SPACE(nfds * sizeof(int));
		c = (struct cmsghdr *) (ctl.b + clen);
	}
	if (creds) {
		struct ucred u = { getpid(), getuid(), getgid() };
		c->cmsg_level  = SOL_SOCKET;
		c->cmsg_type   = SCM_CREDENTIALS;
		c->cmsg_len    = CMSG_LEN(sizeof(u));
		memcpy(CMSG_DATA(c), &u, sizeof(u));
		clen += CMSG_SPACE(sizeof(u));
	}
	mh.msg_control    = clen ? ctl.b : NULL;
	mh.msg_controllen = clen;
	// (A few hundred bytes fit any socket buffer: it does not block.)
	CHECK(sendmsg(s, &mh, MSG_NOSIGNAL) == (ssize_t) len);
}

// step is one turn of the daemon's loop for the connection: read it if
// poll() says it is readable. Returns 1 when done, 0 when it may go on,
// -1 when nothing was there to read (poll says so at once: everything
// the peer sends is sent before).
static int
step(fftd__fdsock_req *r, int cfd)
{
	struct pollfd p = { cfd, POLLIN, 0 };
	int           k;
	// A signal (libFuzzer's -timeout alarm) may interrupt it: the
	// daemon's loop then polls again.
	do {
		k = poll(&p, 1, 0);
	} while (k < 0 && errno == EINTR);
	if (k != 1 || p.revents == 0) {
		return -1;
	}
	return fftd__fdsock_read(r, cfd) ? 1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1; // what is sent: dups of it
	if (devnull < 0) {
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		CHECK(devnull >= 0 && fstat(devnull, &cb_state.sent) == 0);
	}
	if (size < 1) {
		return 0;
	}
	uint8_t mode = data[0];
	data++;
	size--;
	int  ending      = mode & 3;
	bool peer_pass   = mode & 4;
	bool daemon_pass = mode & 8;
	cb_state.answer  = (mode & 16) ? FFTD_EINVAL : FFTD_OK;
	cb_state.calls   = 0;
	int nchunks      = mode >> 5;

	uint64_t before = open_fds();
	cb_state.before = before;
	int sp[2], one = 1;
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	CHECK(sp[0] < FD_SCAN && sp[1] < FD_SCAN);
	CHECK(fcntl(sp[1], F_SETFL, O_NONBLOCK) == 0);
	if (peer_pass) {
		CHECK(setsockopt(
		          sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))
		    == 0);
	}
	if (daemon_pass) {
		CHECK(setsockopt(
		          sp[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))
		    == 0);
	}

	// Send, reading where the input says; and work out what the daemon
	// must receive: the first 24 bytes, the descriptors of each chunk
	// that begins inside them (one receive each, 4 at most).
	fftd__fdsock_req r;
	memset(&r, 0, sizeof(r));
	uint8_t req[FFTD__FDSOCK_REQ];
	size_t  total  = 0;
	int     expfds = 0;
	bool    ctrunc = false;
	int     done   = 0;
	memset(req, 0, sizeof(req));
	for (int i = 0; i < nchunks && size >= 2; i++) {
		uint8_t flags = data[0];
		size_t  len   = 1 + data[1] % MAX_CHUNK;
		data += 2;
		size -= 2;
		if (len > size) {
			len = size;
		}
		int nfds = flags & 7;
		if (nfds > MAX_SEND_FDS) {
			nfds = MAX_SEND_FDS;
		}
		if (len == 0) {
			break; // a stream socket sends nothing for nothing
		}
		if ((flags & 32) && !done) {
			done = fftd__fdsock_read(&r, sp[1]);
		}
		send_chunk(sp[0], data, len, devnull, nfds, flags & 8);
		if (total < sizeof(req)) {
			size_t k = sizeof(req) - total < len
			    ? sizeof(req) - total
			    : len;
			memcpy(req + total, data, k);
			if (nfds > 0 && daemon_pass) {
				ctrunc = true; // credentials took the room
			} else if (nfds > FFTD__FDSOCK_MAX_FDS) {
				ctrunc = true;
				expfds += FFTD__FDSOCK_MAX_FDS;
			} else {
				expfds += nfds;
			}
		}
		total += len;
		data += len;
		size -= len;
		if ((flags & 16) && !done) {
			done = step(&r, sp[1]) == 1;
		}
	}
	if (ending == 0) {
		close(sp[0]);
		sp[0] = -1;
	} else if (ending == 1) {
		shutdown(sp[0], SHUT_WR);
	}
	// The rest of the loop: read while there is something; the time-out
	// when the peer says nothing more and stays.
	bool timed_out = false;
	for (int turns = 0; !done; turns++) {
		int k = step(&r, sp[1]);
		if (k < 0) {
			timed_out = true;
			break;
		}
		done = k;
		CHECK(turns < 64); // each read takes a byte or ends it
	}
	cb_state.req = req;
	int status   = fftd__fdsock_finish(&r, sp[1], timed_out, on_fd, NULL);

	// The answer the input makes.
	size_t got = total < sizeof(req) ? total : sizeof(req);
	CHECK(timed_out == (ending >= 2 && total < sizeof(req)));
	char want_msg[240];
	int  want = FFTD_EPROTO;
	if (got == sizeof(req) && ctrunc && expfds == 0) {
		want = FFTD_ESYSERR + EMFILE; // as if the kernel had no room
		snprintf(want_msg, sizeof(want_msg),
		    "the daemon has no descriptor free to take the buffer's "
		    "(RLIMIT_NOFILE); try again later");
	} else if (got != sizeof(req) || ctrunc) {
		snprintf(want_msg, sizeof(want_msg),
		    "expected a %d-byte request and one fd%s", FFTD__FDSOCK_REQ,
		    timed_out ? " within 2 s" : "");
	} else if (expfds != 1) {
		snprintf(want_msg, sizeof(want_msg),
		    "expected exactly one fd, got %d", expfds);
	} else {
		want = cb_state.answer;
		snprintf(want_msg, sizeof(want_msg), "%s",
		    want == FFTD_OK ? "" : "refused");
	}
	bool called = got == sizeof(req) && !ctrunc && expfds == 1;
	CHECK(status == want);
	CHECK(cb_state.calls == called);
	CHECK(r.nfds == 0);
	// The reply, where the peer reads it.
	if (sp[0] >= 0) {
		uint8_t rep[FFTD__FDSOCK_REPLY + 1];
		CHECK(recv(sp[0], rep, sizeof(rep), MSG_DONTWAIT)
		    == FFTD__FDSOCK_REPLY);
		uint32_t st = (uint32_t) rep[0] | (uint32_t) rep[1] << 8
		    | (uint32_t) rep[2] << 16 | (uint32_t) rep[3] << 24;
		rep[FFTD__FDSOCK_REPLY - 1] = 0;
		CHECK((int32_t) st == status);
		CHECK(strcmp((const char *) rep + 16, want_msg) == 0);
	}
	// Nothing of the request stays open: only the two sockets (closed
	// now, so that what is left is what was open before).
	uint64_t after = open_fds();
	if (sp[0] >= 0) {
		close(sp[0]);
		after &= ~(1ull << sp[0]);
	}
	close(sp[1]);
	after &= ~(1ull << sp[1]);
	CHECK(after == before); // a descriptor leaked
	return 0;
}

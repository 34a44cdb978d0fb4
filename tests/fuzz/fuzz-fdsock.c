// SPDX-License-Identifier: MIT
//
// fuzz-fdsock.c — libFuzzer target for the descriptor hand-over request
// (daemon/fdsock.c, fftd__fdsock_parse, which serve calls on every
// connection). What a client controls is what it sends, and the kernel
// shapes what the daemon receives: so each input is sent for real over a
// fresh AF_UNIX stream socket pair and received exactly as serve receives
// it (a 24-byte buffer, a control part of room for 4 descriptors,
// MSG_CMSG_CLOEXEC | MSG_WAITALL), then parsed. The first byte picks:
//   bits 0-2  descriptors sent (0 .. 7, all of one /dev/null descriptor)
//   bit  3    the sender adds SCM_CREDENTIALS (its own)
//   bit  4    the receiver asks for credentials (SO_PASSCRED)
//   bit  5    the data goes in two sendmsg calls, descriptors with the second
//   bit  6    nothing is sent and the receive fails (EAGAIN), as when a
//             client says nothing until the 2-second timeout
//   bit  7    the sender's second byte picks the split point
// and the rest is the data. Checks: parse's answer is what the kernel
// delivered (OK only for 24 bytes and exactly one descriptor, bytes as
// sent), every descriptor it returns is one the kernel installed, and
// none leaks once they and what serve leaves unread are closed. The control
// buffer persists from one input to the next, as serve's stack frame does
// between connections.

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdsock.h"
#include "fftd.h"

#define MAX_SEND_FDS 7

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// send_part sends len bytes with nfds descriptors (all fd) and, when creds,
// the sender's credentials.
static void
send_part(int s, const uint8_t *p, size_t len, int fd, int nfds, bool creds)
{
	union {
		struct cmsghdr h;
		char           b[CMSG_SPACE(MAX_SEND_FDS * sizeof(int))
                    + CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	uint8_t       dummy  = 0;
	struct iovec  iov    = { len ? (void *) p : &dummy, len ? len : 1 };
	struct msghdr mh     = { 0 };
	mh.msg_iov           = &iov;
	mh.msg_iovlen        = 1;
	size_t          clen = 0;
	struct cmsghdr *c    = (struct cmsghdr *) ctl.b;
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
	// A zero-length part carries its descriptors on one byte (a stream
	// socket sends no empty message); that byte is then data too.
	if (len == 0 && clen == 0) {
		return;
	}
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		abort();
	}
}

// open_fds returns which of the descriptors 0 .. 63 are open.
static uint64_t
open_fds(void)
{
	uint64_t m = 0;
	for (int fd = 0; fd < 64; fd++) {
		if (fcntl(fd, F_GETFD) >= 0) {
			m |= 1ull << fd;
		}
	}
	return m;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	// serve's control buffer: what recvmsg does not fill keeps what the
	// previous connection left there.
	static union {
		struct cmsghdr h;
		char b[CMSG_SPACE(FFTD__FDSOCK_MAX_FDS * sizeof(int))];
	} ctl;
	static int devnull = -1; // what is sent: dups of it
	if (devnull < 0) {
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0) {
			abort();
		}
	}
	if (size < 1 || size > 64) {
		return 0;
	}
	uint8_t mode = data[0];
	data++;
	size--;
	int    nsend  = mode & 7;
	bool   creds  = mode & 8;
	bool   pass   = mode & 16;
	bool   split  = mode & 32;
	bool   silent = mode & 64;
	size_t cut    = size / 2;
	if ((mode & 128) && size > 0) {
		cut = data[0] % (size + 1);
	}

	uint64_t before = open_fds();
	int      sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
		abort();
	}
	int one = 1;
	if (pass) {
		setsockopt(sp[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	}
	// Descriptors the kernel installs for us are above this one.
	int floor = fcntl(sp[1], F_DUPFD_CLOEXEC, 0);
	if (floor < 0) {
		abort();
	}
	close(floor);
	int dev = devnull;
	if (!silent) {
		if (split) {
			send_part(sp[0], data, cut, dev, 0, creds);
			send_part(
			    sp[0], data + cut, size - cut, dev, nsend, false);
		} else {
			send_part(sp[0], data, size, dev, nsend, creds);
		}
		shutdown(sp[0], SHUT_WR);
	}

	uint8_t       buf[FFTD__FDSOCK_REQ];
	struct iovec  iov = { buf, sizeof(buf) };
	struct msghdr mh  = { 0 };
	mh.msg_iov        = &iov;
	mh.msg_iovlen     = 1;
	mh.msg_control    = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	ssize_t n         = recvmsg(sp[1], &mh,
	            MSG_CMSG_CLOEXEC | MSG_WAITALL | (silent ? MSG_DONTWAIT : 0));
	if (silent && n >= 0) {
		abort(); // nothing was sent
	}
	int      fds[FFTD__FDSOCK_MAX_FDS], nfds = -1;
	uint64_t bytes = 0;
	char     msg[240];
	int      rv
	    = fftd__fdsock_parse(&mh, n, fds, &nfds, &bytes, msg, sizeof(msg));
	if (nfds < 0 || nfds > FFTD__FDSOCK_MAX_FDS
	    || memchr(msg, '\0', sizeof(msg)) == NULL) {
		abort();
	}
	for (int i = 0; i < nfds; i++) {
		// Only descriptors this receive installed: never one of ours.
		if (n < 0 || fds[i] < floor || fcntl(fds[i], F_GETFD) < 0) {
			abort();
		}
	}
	if (rv == FFTD_OK) {
		uint64_t sent = 0;
		for (int i = 7; i >= 0; i--) {
			sent = (sent << 8) | buf[FFTD__FDSOCK_TOKEN + i];
		}
		if (n != FFTD__FDSOCK_REQ || nfds != 1 || bytes != sent
		    || (mh.msg_flags & MSG_CTRUNC)) {
			abort();
		}
	} else if (rv != FFTD_EPROTO) {
		abort();
	}
	for (int i = 0; i < nfds; i++) {
		close(fds[i]);
	}
	// Drain what serve would not read, closing descriptors it carries,
	// then check that nothing the kernel gave us is still open.
	close(sp[0]);
	for (;;) {
		uint8_t       junk[64];
		struct iovec  jv = { junk, sizeof(junk) };
		struct msghdr jh = { 0 };
		union {
			struct cmsghdr h;
			char           b[CMSG_SPACE(64 * sizeof(int))];
		} jc;
		jh.msg_iov        = &jv;
		jh.msg_iovlen     = 1;
		jh.msg_control    = jc.b;
		jh.msg_controllen = sizeof(jc.b);
		ssize_t k
		    = recvmsg(sp[1], &jh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (k <= 0) {
			break;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&jh); c != NULL;
		     c                 = CMSG_NXTHDR(&jh, c)) {
			if (c->cmsg_type == SCM_RIGHTS) {
				size_t m
				    = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < m; i++) {
					int x;
					memcpy(&x,
					    CMSG_DATA(c) + i * sizeof(int),
					    sizeof(int));
					close(x);
				}
			}
		}
	}
	close(sp[1]);
	if (open_fds() != before) {
		abort(); // a descriptor leaked
	}
	return 0;
}

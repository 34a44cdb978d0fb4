// SPDX-License-Identifier: MIT
//
// fdsock.c — the descriptor-passing socket (see fdsock.h). Connections are
// served one at a time with 2-second send and receive timeouts, so a client
// that connects and says nothing delays others by at most that long.

#include "fdsock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fftd.h"
#include "log.h"

struct fftd__fdsock {
	int             lfd;
	int             wake[2];
	pthread_t       thread;
	char            path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	fftd__fdsock_cb cb;
	void           *arg;
};

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		p[i] = (uint8_t) (v >> (8 * i));
	}
}

// fftd__fdsock_parse takes a request's descriptors and byte count out of
// what recvmsg returned (see fdsock.h); serve calls it on every request.
int
fftd__fdsock_parse(struct msghdr *mh, ssize_t n, int *fds, int *nfds,
    uint64_t *bytes, char *msg, size_t msglen)
{
	*nfds = 0;
	if (n < 0) {
		// A failed receive (a client silent until the timeout) fills
		// in nothing: the control buffer still holds the previous
		// connection's descriptor number, closed since and perhaps
		// another's now. Taking it would close that one.
		snprintf(msg, msglen, "expected a %d-byte request and one fd",
		    FFTD__FDSOCK_REQ);
		return FFTD_EPROTO;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c                 = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0;
			     i < k && *nfds < FFTD__FDSOCK_MAX_FDS; i++) {
				memcpy(&fds[(*nfds)++],
				    CMSG_DATA(c) + i * sizeof(int),
				    sizeof(int));
			}
		}
	}
	if (n != (ssize_t) FFTD__FDSOCK_REQ || (mh->msg_flags & MSG_CTRUNC)) {
		snprintf(msg, msglen, "expected a %d-byte request and one fd",
		    FFTD__FDSOCK_REQ);
		return FFTD_EPROTO;
	}
	if (*nfds != 1) {
		snprintf(msg, msglen, "expected exactly one fd, got %d", *nfds);
		return FFTD_EPROTO;
	}
	const uint8_t *buf = mh->msg_iov[0].iov_base;
	*bytes             = 0;
	for (int i = 7; i >= 0; i--) {
		*bytes = (*bytes << 8) | buf[FFTD__FDSOCK_TOKEN + i];
	}
	return FFTD_OK;
}

static void
serve(fftd__fdsock *f, int cfd)
{
	uint8_t        reply[FFTD__FDSOCK_REPLY];
	char           msg[240] = "";
	uint64_t       id       = 0;
	int            status   = FFTD_EPROTO;
	int            fds[FFTD__FDSOCK_MAX_FDS], nfds = 0;
	struct ucred   peer;
	socklen_t      plen = sizeof(peer);
	struct timeval tv   = { 2, 0 };
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	uint8_t buf[FFTD__FDSOCK_REQ];
	union {
		struct cmsghdr h;
		char           b[CMSG_SPACE(sizeof(fds))];
	} ctl;
	struct iovec  iov = { buf, sizeof(buf) };
	struct msghdr mh  = { 0 };
	mh.msg_iov        = &iov;
	mh.msg_iovlen     = 1;
	mh.msg_control    = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	ssize_t  n        = recvmsg(cfd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	uint64_t bytes    = 0;
	int      prv
	    = fftd__fdsock_parse(&mh, n, fds, &nfds, &bytes, msg, sizeof(msg));
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0) {
		snprintf(msg, sizeof(msg), "no peer credentials");
	} else if (prv == FFTD_OK) {
		status = f->cb(
		    f->arg, buf, bytes, fds[0], &peer, &id, msg, sizeof(msg));
	}
	for (int i = 0; i < nfds; i++) {
		close(fds[i]);
	}
	memset(reply, 0, sizeof(reply));
	put_le(reply, (uint32_t) status, 4);
	put_le(reply + 8, id, 8);
	snprintf((char *) reply + 16, sizeof(reply) - 16, "%s", msg);
	if (send(cfd, reply, sizeof(reply), MSG_NOSIGNAL)
	    != (ssize_t) sizeof(reply)) {
		fftd__log(FFTD_LOG_WARN, "fd socket: reply not delivered: %s",
		    strerror(errno));
	}
}

static void *
fdsock_main(void *arg)
{
	fftd__fdsock *f = arg;
	for (;;) {
		struct pollfd p[2]
		    = { { f->lfd, POLLIN, 0 }, { f->wake[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			break;
		}
		if (p[1].revents) {
			break;
		}
		int cfd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			continue;
		}
		serve(f, cfd);
		close(cfd);
	}
	return NULL;
}

int
fftd__fdsock_start(fftd__fdsock **fp, const char *path, int mode,
    fftd__fdsock_cb cb, void *arg, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(
		    err, errlen, "%s: path too long for a Unix socket", path);
		return FFTD_EINVAL;
	}
	fftd__fdsock *f = calloc(1, sizeof(*f));
	if (f == NULL) {
		snprintf(err, errlen, "out of memory");
		return FFTD_ENOMEM;
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	f->cb  = cb;
	f->arg = arg;
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		unlink(path); // stale, from a daemon that did not stop cleanly
	}
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *) &sa, sizeof(sa)) != 0
	    || chmod(path, (mode_t) mode) != 0 || listen(f->lfd, 64) != 0
	    || pipe2(f->wake, O_CLOEXEC) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		if (f->lfd >= 0) {
			close(f->lfd);
		}
		free(f);
		return FFTD_ESYSERR + e;
	}
	if (pthread_create(&f->thread, NULL, fdsock_main, f) != 0) {
		snprintf(err, errlen, "cannot start the fd socket thread");
		close(f->lfd);
		close(f->wake[0]);
		close(f->wake[1]);
		unlink(path);
		free(f);
		return FFTD_ESYSERR;
	}
	*fp = f;
	return FFTD_OK;
}

void
fftd__fdsock_stop(fftd__fdsock *f)
{
	if (f == NULL) {
		return;
	}
	if (write(f->wake[1], "x", 1) != 1) {
		fftd__log(FFTD_LOG_WARN, "fd socket: cannot wake its thread");
	}
	pthread_join(f->thread, NULL);
	close(f->lfd);
	close(f->wake[0]);
	close(f->wake[1]);
	unlink(f->path);
	free(f);
}

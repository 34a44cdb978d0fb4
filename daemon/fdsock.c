// SPDX-License-Identifier: MIT
//
// fdsock.c — the descriptor-passing socket (see fdsock.h). One thread
// serves every connection at once: accepted sockets are non-blocking and
// watched in the same poll() as the listening one, each with its own
// 2-second deadline, so a client that connects and says nothing delays
// nobody else. A user may hold max_per_user connections open at once (one
// more is answered FFTD_ELIMIT and closed); the table holds MAX_CONNS in
// all, and while it is full the listening socket is not watched. When
// accept() fails for want of descriptors (EMFILE, ENFILE), the listening
// socket is left alone for BACKOFF_MS instead of being retried at once
// (which would spin), and that is logged once per episode.

#include "fdsock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fftd.h"
#include "log.h"

#define MAX_CONNS 256        // connections served at once, all users
#define CONN_TIMEOUT_MS 2000 // a connection's time to send its request
#define BACKOFF_MS 100       // listening socket left alone after EMFILE

// A connection being served: its request so far and its descriptors.
typedef struct fdconn {
	int              fd;
	uid_t            uid;
	int64_t          deadline_ms;
	fftd__fdsock_req req;
} fdconn;

struct fftd__fdsock {
	int             lfd;
	int             wake[2];
	pthread_t       thread;
	char            path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	fftd__fdsock_cb cb;
	void           *arg;
	_Atomic int     max_per_user;
	fdconn          conns[MAX_CONNS];
	int             nconns;
	int64_t         backoff_until_ms; // 0: accepting
	bool            starved;          // in an EMFILE episode (logged)
};

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		p[i] = (uint8_t) (v >> (8 * i));
	}
}

// send_reply answers a connection (status, buffer id, message). The
// 256 bytes fit a fresh socket's buffer: a non-blocking send that does
// not take them all means the peer is gone or misbehaves.
static void
send_reply(int cfd, int status, uint64_t id, const char *msg)
{
	uint8_t reply[FFTD__FDSOCK_REPLY];
	memset(reply, 0, sizeof(reply));
	put_le(reply, (uint32_t) status, 4);
	put_le(reply + FFTD__FDSOCK_REPLY_ID, id, 8);
	snprintf((char *) reply + FFTD__FDSOCK_REPLY_MSG,
	    sizeof(reply) - FFTD__FDSOCK_REPLY_MSG, "%s", msg);
	// A peer that hung up (EPIPE, ECONNRESET) has nobody to tell.
	if (send(cfd, reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT)
	        != (ssize_t) sizeof(reply)
	    && errno != EPIPE && errno != ECONNRESET) {
		fftd__log(FFTD_LOG_WARN, "fd socket: reply not delivered: %s",
		    strerror(errno));
	}
}

bool
fftd__fdsock_take(fftd__fdsock_req *r, struct msghdr *mh, ssize_t n, int err)
{
	if (n < 0) {
		// Nothing was received: the control buffer holds whatever was
		// there before (an earlier receive's descriptor numbers, now
		// perhaps another's), never descriptors of ours.
		return err != EAGAIN && err != EWOULDBLOCK && err != EINTR;
	}
	for (struct cmsghdr *m = CMSG_FIRSTHDR(mh); m != NULL;
	     m                 = CMSG_NXTHDR(mh, m)) {
		if (m->cmsg_level != SOL_SOCKET || m->cmsg_type != SCM_RIGHTS) {
			continue;
		}
		// The kernel's lengths fit the control buffer; bound them to it
		// all the same, so that a bad one cannot make us read past it.
		const uint8_t *data = CMSG_DATA(m);
		size_t room = (size_t) ((const uint8_t *) mh->msg_control
		    + mh->msg_controllen - data);
		size_t len  = m->cmsg_len > CMSG_LEN(0)
		     ? (size_t) m->cmsg_len - CMSG_LEN(0)
		     : 0;
		if (len > room) {
			len = room;
		}
		for (size_t j = 0; j < len / sizeof(int); j++) {
			int fd;
			memcpy(&fd, data + j * sizeof(int), sizeof(int));
			if (r->nfds < FFTD__FDSOCK_MAX_FDS) {
				r->fds[r->nfds++] = fd;
			} else {
				close(fd);
				r->nfds++; // counted, and refused
			}
		}
	}
	if (mh->msg_flags & MSG_CTRUNC) {
		r->ctrunc = true;
	}
	r->got += (size_t) n;
	return n == 0 || r->got == sizeof(r->buf);
}

bool
fftd__fdsock_read(fftd__fdsock_req *r, int cfd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(FFTD__FDSOCK_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec  iov = { r->buf + r->got, sizeof(r->buf) - r->got };
	struct msghdr mh  = { 0 };
	mh.msg_iov        = &iov;
	mh.msg_iovlen     = 1;
	mh.msg_control    = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	ssize_t n         = recvmsg(cfd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	return fftd__fdsock_take(r, &mh, n, n < 0 ? errno : 0);
}

int
fftd__fdsock_check(const fftd__fdsock_req *r, bool timed_out, uint64_t *bytes,
    char *msg, size_t msglen)
{
	if (r->got == sizeof(r->buf) && r->ctrunc && r->nfds == 0) {
		// The kernel drops a passed descriptor it cannot install
		// (EMFILE) and says so only by MSG_CTRUNC: not the client's
		// fault.
		snprintf(msg, msglen,
		    "the daemon has no descriptor free to take the buffer's "
		    "(RLIMIT_NOFILE); try again later");
		return FFTD_ESYSERR + EMFILE;
	}
	if (r->got != sizeof(r->buf) || r->ctrunc) {
		snprintf(msg, msglen, "expected a %d-byte request and one fd%s",
		    FFTD__FDSOCK_REQ, timed_out ? " within 2 s" : "");
		return FFTD_EPROTO;
	}
	if (r->nfds != 1) {
		snprintf(
		    msg, msglen, "expected exactly one fd, got %d", r->nfds);
		return FFTD_EPROTO;
	}
	uint64_t v = 0;
	for (int k = 7; k >= 0; k--) {
		v = (v << 8) | r->buf[FFTD__FDSOCK_TOKEN + k];
	}
	*bytes = v;
	return FFTD_OK;
}

void
fftd__fdsock_release(fftd__fdsock_req *r)
{
	for (int k = 0; k < r->nfds && k < FFTD__FDSOCK_MAX_FDS; k++) {
		close(r->fds[k]);
	}
	r->nfds = 0;
}

int
fftd__fdsock_finish(
    fftd__fdsock_req *r, int cfd, bool timed_out, fftd__fdsock_cb cb, void *arg)
{
	char         msg[FFTD__FDSOCK_REPLY - FFTD__FDSOCK_REPLY_MSG] = "";
	uint64_t     id = 0, bytes = 0;
	int          status;
	struct ucred peer;
	socklen_t    plen = sizeof(peer);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0) {
		status = FFTD_EPROTO;
		snprintf(msg, sizeof(msg), "no peer credentials");
	} else {
		status = fftd__fdsock_check(
		    r, timed_out, &bytes, msg, sizeof(msg));
		if (status == FFTD_OK) {
			status = cb(arg, r->buf, bytes, r->fds[0], &peer, &id,
			    msg, sizeof(msg));
		}
	}
	fftd__fdsock_release(r);
	send_reply(cfd, status, id, msg);
	return status;
}

// conn_finish answers connection i (its request is complete, or it hung
// up, or its time ran out), closes it and its descriptors, and takes it
// out of the table.
static void
conn_finish(fftd__fdsock *f, int i, bool timed_out)
{
	fdconn *c = &f->conns[i];
	fftd__fdsock_finish(&c->req, c->fd, timed_out, f->cb, f->arg);
	close(c->fd);
	f->conns[i] = f->conns[--f->nconns];
}

// accept_one accepts a connection, refusing it at once (FFTD_ELIMIT) when
// its user has max_per_user open already. Returns false when accept()
// found nothing to take or failed (EMFILE: the back-off starts).
static bool
accept_one(fftd__fdsock *f)
{
	int cfd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		int e = errno;
		// Nothing there, or a connection gone before it was taken:
		// nothing to wait for. Anything else (EMFILE, ENFILE, ENOBUFS,
		// ENOMEM above all) would fail again at once: back off.
		if (e != EAGAIN && e != EWOULDBLOCK && e != EINTR
		    && e != ECONNABORTED) {
			f->backoff_until_ms = fftd__mono_ms() + BACKOFF_MS;
			if (!f->starved) {
				f->starved = true;
				fftd__log(FFTD_LOG_WARN,
				    "fd socket: cannot accept: %s; retrying "
				    "every %d ms until descriptors are free",
				    strerror(e), BACKOFF_MS);
			}
		}
		return false;
	}
	if (f->starved) {
		f->starved = false;
		fftd__log(FFTD_LOG_INFO, "fd socket: accepting again");
	}
	struct ucred peer;
	socklen_t    plen = sizeof(peer);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0) {
		send_reply(cfd, FFTD_EPROTO, 0, "no peer credentials");
		close(cfd);
		return true;
	}
	int mine = 0, max = atomic_load(&f->max_per_user);
	for (int i = 0; i < f->nconns; i++) {
		mine += f->conns[i].uid == peer.uid;
	}
	if (mine >= max) {
		char msg[160];
		snprintf(msg, sizeof(msg),
		    "user %u has %d connections open on the fd socket, the "
		    "limit ([limits] max_fd_connections_per_user)",
		    (unsigned) peer.uid, mine);
		send_reply(cfd, FFTD_ELIMIT, 0, msg);
		close(cfd);
		return true;
	}
	fdconn *c = &f->conns[f->nconns++];
	memset(c, 0, sizeof(*c));
	c->fd          = cfd;
	c->uid         = peer.uid;
	c->deadline_ms = fftd__mono_ms() + CONN_TIMEOUT_MS;
	return true;
}

// fdsock_main is the socket's thread: one poll() over the wake pipe, the
// listening socket (unless backing off or full) and every connection.
static void *
fdsock_main(void *arg)
{
	fftd__fdsock *f = arg;
	struct pollfd p[2 + MAX_CONNS];
	for (;;) {
		int64_t now    = fftd__mono_ms();
		int     listen = f->nconns < MAX_CONNS
		    && (f->backoff_until_ms == 0 || now >= f->backoff_until_ms);
		int64_t wait = -1;
		if (f->nconns < MAX_CONNS && !listen) {
			wait = f->backoff_until_ms - now;
		}
		p[0] = (struct pollfd) { f->wake[0], POLLIN, 0 };
		p[1] = (struct pollfd) { listen ? f->lfd : -1, POLLIN, 0 };
		for (int i = 0; i < f->nconns; i++) {
			p[2 + i]
			    = (struct pollfd) { f->conns[i].fd, POLLIN, 0 };
			int64_t left = f->conns[i].deadline_ms - now;
			if (wait < 0 || left < wait) {
				wait = left < 0 ? 0 : left;
			}
		}
		int n = f->nconns;
		if (poll(p, (nfds_t) (2 + n), (int) wait) < 0) {
			if (errno == EINTR) {
				continue;
			}
			fftd__log(FFTD_LOG_ERROR, "fd socket: poll: %s",
			    strerror(errno));
			break;
		}
		if (p[0].revents) {
			break;
		}
		// Connections first, from the end: conn_finish moves the last
		// entry into the slot it frees.
		now = fftd__mono_ms();
		for (int i = n - 1; i >= 0; i--) {
			fdconn *c = &f->conns[i];
			if (p[2 + i].revents
			    && fftd__fdsock_read(&c->req, c->fd)) {
				conn_finish(f, i, false);
			} else if (now >= c->deadline_ms) {
				conn_finish(f, i, true);
			}
		}
		if (p[1].revents) {
			f->backoff_until_ms = 0;
			for (int k = 0; k < 16 && f->nconns < MAX_CONNS; k++) {
				if (!accept_one(f)) {
					break;
				}
			}
		}
	}
	for (int i = f->nconns - 1; i >= 0; i--) {
		fftd__fdsock_release(&f->conns[i].req);
		close(f->conns[i].fd);
	}
	f->nconns = 0;
	return NULL;
}

int
fftd__fdsock_start(fftd__fdsock **fp, const char *path, int mode,
    int max_per_user, fftd__fdsock_cb cb, void *arg, char *err, size_t errlen)
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
	atomic_store(&f->max_per_user, max_per_user > 0 ? max_per_user : 1);
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		unlink(path); // stale, from a daemon that did not stop cleanly
	}
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
		// (The thread gets the caller's signal mask: see main.c.)
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

void
fftd__fdsock_set_max_per_user(fftd__fdsock *f, int max_per_user)
{
	if (f != NULL) {
		atomic_store(
		    &f->max_per_user, max_per_user > 0 ? max_per_user : 1);
	}
}

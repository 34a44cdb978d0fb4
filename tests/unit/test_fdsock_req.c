// SPDX-License-Identifier: MIT
//
// test_fdsock_req.c — one descriptor hand-over request as daemon/fdsock.c
// serves it, without a daemon: a table of recvmsg() results given to
// fftd__fdsock_take (byte counts, descriptor counts, other control
// messages, MSG_CTRUNC, failed receives) with the exact state it must
// leave; among them the case the first fuzzer found in the old reader: a
// receive that failed, or got bytes but no control data, must take no
// descriptor number from what an earlier receive left in the control
// buffer (taking it closed another's descriptor). Then a table of finished
// requests with fftd__fdsock_check's exact answer, and fftd__fdsock_read
// and fftd__fdsock_finish over a real socket pair.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdsock.h"
#include "fftd.h"

// Room for a credentials message and 8 descriptors, more than the daemon's.
typedef union ctl_buf {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(8 * sizeof(int))];
} ctl_buf;

// open_count counts the open descriptors below 256.
static int
open_count(void)
{
	int k = 0;
	for (int fd = 0; fd < 256; fd++) {
		k += fcntl(fd, F_GETFD) >= 0;
	}
	return k;
}

// is_open says whether fd is an open descriptor.
static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

// new_fd returns a fresh descriptor (of /dev/null).
static int
new_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

// What the control buffer holds and how msg_controllen says so.
enum ctl_kind {
	CTL_NONE,       // no control data (controllen 0, buffer zeroed)
	CTL_RIGHTS,     // one SCM_RIGHTS message of nrights descriptors
	CTL_CREDS,      // SCM_CREDENTIALS, then SCM_RIGHTS of nrights
	CTL_STALE_FULL, // SCM_RIGHTS of nrights left from an earlier receive;
	                // controllen still the whole buffer (a failed receive
	                // writes nothing back)
	CTL_STALE_ZERO, // the same left in the buffer, controllen 0 (a
	                // receive of bytes only)
	CTL_LONG_LEN,   // one SCM_RIGHTS whose cmsg_len claims more than the
	                // control data holds
};

typedef struct take_case {
	const char   *name;
	size_t        got0;  // bytes already received
	int           nfds0; // descriptors already received (real ones)
	ssize_t       n;     // recvmsg's result
	int           err;   // its errno when n < 0
	enum ctl_kind ctl;
	int           nrights; // descriptors in the SCM_RIGHTS message
	int           flags;   // msg_flags
	bool          done;
	size_t        got;    // bytes received after
	int           nfds;   // r->nfds after
	int           kept;   // of the message's descriptors, how many r holds
	bool          ctrunc; // r->ctrunc after
} take_case;

static const take_case takes[] = {
	{ "24 bytes at once, one fd", 0, 0, 24, 0, CTL_RIGHTS, 1, 0, true, 24,
	    1, 1, false },
	{ "first 10 bytes, no fd", 0, 0, 10, 0, CTL_NONE, 0, 0, false, 10, 0, 0,
	    false },
	{ "first 10 bytes with the fd", 0, 0, 10, 0, CTL_RIGHTS, 1, 0, false,
	    10, 1, 1, false },
	{ "last 14 bytes, fd came before", 10, 1, 14, 0, CTL_NONE, 0, 0, true,
	    24, 1, 0, false },
	{ "last byte with a second fd", 23, 1, 1, 0, CTL_RIGHTS, 1, 0, true, 24,
	    2, 1, false },
	{ "peer hung up at once", 0, 0, 0, 0, CTL_NONE, 0, 0, true, 0, 0, 0,
	    false },
	{ "peer hung up after 5 bytes and an fd", 5, 1, 0, 0, CTL_NONE, 0, 0,
	    true, 5, 1, 0, false },
	{ "4 fds in one message", 0, 0, 24, 0, CTL_RIGHTS, 4, 0, true, 24, 4, 4,
	    false },
	{ "control cut: 4 fds kept, MSG_CTRUNC", 0, 0, 24, 0, CTL_RIGHTS, 4,
	    MSG_CTRUNC, true, 24, 4, 4, true },
	{ "3 held, 3 more: one kept, two closed", 3, 3, 3, 0, CTL_RIGHTS, 3, 0,
	    false, 6, 6, 1, false },
	{ "4 held, 2 more: both closed, counted", 4, 4, 20, 0, CTL_RIGHTS, 2, 0,
	    true, 24, 6, 0, false },
	{ "credentials before the fd", 0, 0, 24, 0, CTL_CREDS, 1, 0, true, 24,
	    1, 1, false },
	{ "credentials only (fds cut)", 0, 0, 24, 0, CTL_CREDS, 0, MSG_CTRUNC,
	    true, 24, 0, 0, true },
	{ "cmsg_len past the control data", 0, 0, 24, 0, CTL_LONG_LEN, 1, 0,
	    true, 24, 1, 1, false },
	// A receive that failed wrote nothing: the buffer is an earlier one's.
	{ "EAGAIN, stale control buffer", 0, 0, -1, EAGAIN, CTL_STALE_FULL, 1,
	    0, false, 0, 0, 0, false },
	{ "EINTR after an fd, stale buffer", 8, 1, -1, EINTR, CTL_STALE_FULL, 2,
	    0, false, 8, 1, 0, false },
	{ "ECONNRESET, stale control buffer", 0, 0, -1, ECONNRESET,
	    CTL_STALE_FULL, 1, 0, true, 0, 0, 0, false },
	{ "bytes without control data, stale buffer", 0, 0, 5, 0,
	    CTL_STALE_ZERO, 1, 0, false, 5, 0, 0, false },
	{ "stale flags are not the receive's", 0, 0, -1, EAGAIN, CTL_STALE_FULL,
	    1, MSG_CTRUNC, false, 0, 0, 0, false },
};

// fill writes the control data of case tc into c (descriptors from
// rights[]) and points mh at it.
static void
fill(struct msghdr *mh, ctl_buf *c, const take_case *tc, const int *rights)
{
	memset(c, 0, sizeof(*c));
	mh->msg_control    = c->b;
	mh->msg_controllen = 0;
	if (tc->ctl == CTL_NONE) {
		return;
	}
	struct cmsghdr *m  = &c->h;
	size_t          at = 0;
	if (tc->ctl == CTL_CREDS) {
		struct ucred u = { getpid(), getuid(), getgid() };
		m->cmsg_level  = SOL_SOCKET;
		m->cmsg_type   = SCM_CREDENTIALS;
		m->cmsg_len    = CMSG_LEN(sizeof(u));
		memcpy(CMSG_DATA(m), &u, sizeof(u));
		at = CMSG_SPACE(sizeof(u));
		m  = (struct cmsghdr *) (c->b + at);
	}
	if (tc->nrights > 0) {
		size_t len    = tc->nrights * sizeof(int);
		m->cmsg_level = SOL_SOCKET;
		m->cmsg_type  = SCM_RIGHTS;
		m->cmsg_len   = CMSG_LEN(len);
		memcpy(CMSG_DATA(m), rights, len);
		at += CMSG_SPACE(len);
		if (tc->ctl == CTL_LONG_LEN) {
			m->cmsg_len = CMSG_LEN(len + 64); // past the data
			at          = CMSG_LEN(len);      // no padding after it
		}
	}
	switch (tc->ctl) {
	case CTL_STALE_FULL:
		mh->msg_controllen = sizeof(c->b);
		break;
	case CTL_STALE_ZERO:
		mh->msg_controllen = 0;
		break;
	default:
		mh->msg_controllen = at;
		break;
	}
}

static void
test_take_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(takes) / sizeof(takes[0]); i++) {
		const take_case *tc   = &takes[i];
		int              base = open_count();
		fftd__fdsock_req r;
		memset(&r, 0, sizeof(r));
		r.got = tc->got0;
		for (int k = 0; k < tc->nfds0; k++) {
			int fd = new_fd();
			if (k < FFTD__FDSOCK_MAX_FDS) {
				r.fds[k] = fd;
			} else {
				close(fd); // as take did: counted only
			}
			r.nfds++;
		}
		// The message's descriptors: real ones, so that a wrong close
		// or a wrong take shows. (A stale one is open here: it stands
		// for the descriptor that now has an old number.)
		int rights[8];
		for (int k = 0; k < tc->nrights; k++) {
			rights[k] = new_fd();
		}
		uint8_t       data[FFTD__FDSOCK_REQ];
		struct iovec  iov = { data, sizeof(data) };
		struct msghdr mh  = { 0 };
		ctl_buf       c;
		mh.msg_iov    = &iov;
		mh.msg_iovlen = 1;
		fill(&mh, &c, tc, rights);
		mh.msg_flags = tc->flags;
		bool done    = fftd__fdsock_take(&r, &mh, tc->n, tc->err);
		int  kept    = 0;
		for (int k = 0; k < tc->nrights; k++) {
			for (int j = 0; j < r.nfds && j < FFTD__FDSOCK_MAX_FDS;
			     j++) {
				kept += r.fds[j] == rights[k];
			}
		}
		if (done != tc->done || r.got != tc->got || r.nfds != tc->nfds
		    || kept != tc->kept || r.ctrunc != tc->ctrunc) {
			print_error(
			    "%s: done %d got %zu nfds %d kept %d ctrunc "
			    "%d (expected %d %zu %d %d %d)\n",
			    tc->name, done, r.got, r.nfds, kept, r.ctrunc,
			    tc->done, tc->got, tc->nfds, tc->kept, tc->ctrunc);
			fail();
		}
		// The message's descriptors not kept were closed, unless the
		// receive got none (stale: not ours to close).
		bool stale
		    = tc->ctl == CTL_STALE_FULL || tc->ctl == CTL_STALE_ZERO;
		for (int k = 0; k < tc->nrights; k++) {
			bool held = false;
			for (int j = 0; j < r.nfds && j < FFTD__FDSOCK_MAX_FDS;
			     j++) {
				held |= r.fds[j] == rights[k];
			}
			if (held || stale) {
				assert_true(is_open(rights[k]));
			} else {
				assert_false(is_open(rights[k]));
			}
		}
		fftd__fdsock_release(&r);
		assert_int_equal(r.nfds, 0);
		if (stale) {
			// Still open after release: it was never taken.
			for (int k = 0; k < tc->nrights; k++) {
				assert_true(is_open(rights[k]));
				close(rights[k]);
			}
		}
		assert_int_equal(open_count(), base);
	}
}

typedef struct check_case {
	const char *name;
	size_t      got;
	int         nfds;
	bool        ctrunc, timed_out;
	int         code;
	const char *msg; // expected message (FFTD_EPROTO)
} check_case;

static const check_case checks[] = {
	{ "whole request, one fd", 24, 1, false, false, FFTD_OK, "" },
	{ "23 bytes (hung up)", 23, 1, false, false, FFTD_EPROTO,
	    "expected a 24-byte request and one fd" },
	{ "10 bytes, time up", 10, 1, false, true, FFTD_EPROTO,
	    "expected a 24-byte request and one fd within 2 s" },
	{ "nothing, time up", 0, 0, false, true, FFTD_EPROTO,
	    "expected a 24-byte request and one fd within 2 s" },
	{ "whole request, no fd", 24, 0, false, false, FFTD_EPROTO,
	    "expected exactly one fd, got 0" },
	{ "whole request, two fds", 24, 2, false, false, FFTD_EPROTO,
	    "expected exactly one fd, got 2" },
	{ "whole request, six fds", 24, 6, false, false, FFTD_EPROTO,
	    "expected exactly one fd, got 6" },
	{ "one fd, control cut", 24, 1, true, false, FFTD_EPROTO,
	    "expected a 24-byte request and one fd" },
	{ "control cut, no fd (dropped: EMFILE)", 24, 0, true, false,
	    FFTD_ESYSERR + EMFILE,
	    "the daemon has no descriptor free to take the buffer's "
	    "(RLIMIT_NOFILE); try again later" },
	{ "10 bytes, control cut, no fd", 10, 0, true, false, FFTD_EPROTO,
	    "expected a 24-byte request and one fd" },
};

static void
test_check_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const check_case *cc = &checks[i];
		fftd__fdsock_req  r;
		memset(&r, 0, sizeof(r));
		memset(r.buf, 0xee, sizeof(r.buf));
		for (int k = 0; k < 8; k++) { // byte count 0x0102030405060708
			r.buf[FFTD__FDSOCK_TOKEN + k] = (uint8_t) (8 - k);
		}
		r.got             = cc->got;
		r.nfds            = cc->nfds;
		r.ctrunc          = cc->ctrunc;
		uint64_t bytes    = 0;
		char     msg[240] = "";
		int      rv       = fftd__fdsock_check(
		               &r, cc->timed_out, &bytes, msg, sizeof(msg));
		if (rv != cc->code || strcmp(msg, cc->msg) != 0) {
			print_error("%s: %d \"%s\" (expected %d \"%s\")\n",
			    cc->name, rv, msg, cc->code, cc->msg);
			fail();
		}
		if (rv == FFTD_OK) {
			assert_true(bytes == 0x0102030405060708ull);
		}
	}
}

// send_part sends len bytes of p over s with nfds descriptors (all fd).
static void
send_part(int s, const uint8_t *p, size_t len, int fd, int nfds)
{
	ctl_buf       c;
	struct iovec  iov = { (void *) p, len };
	struct msghdr mh  = { 0 };
	memset(&c, 0, sizeof(c));
	mh.msg_iov    = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		c.h.cmsg_level = SOL_SOCKET;
		c.h.cmsg_type  = SCM_RIGHTS;
		c.h.cmsg_len   = CMSG_LEN(nfds * sizeof(int));
		for (int i = 0; i < nfds; i++) {
			memcpy(CMSG_DATA(&c.h) + i * sizeof(int), &fd,
			    sizeof(int));
		}
		mh.msg_control    = c.b;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	}
	assert_int_equal(sendmsg(s, &mh, MSG_NOSIGNAL), (ssize_t) len);
}

// pair makes a socket pair whose sp[1] is as the daemon's accepted
// sockets are (non-blocking, close-on-exec).
static void
pair(int sp[2])
{
	assert_int_equal(socketpair(AF_UNIX,
	                     SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp),
	    0);
}

// A request in three pieces, the descriptor with the second; then a
// message of 5 descriptors, of which the daemon's control buffer holds 4.
static void
test_read_pieces(void **state)
{
	(void) state;
	int     base = open_count();
	int     sp[2], fd = new_fd();
	uint8_t req[FFTD__FDSOCK_REQ + 8];
	for (size_t i = 0; i < sizeof(req); i++) {
		req[i] = (uint8_t) i;
	}
	pair(sp);
	fftd__fdsock_req r;
	memset(&r, 0, sizeof(r));
	assert_false(fftd__fdsock_read(&r, sp[1])); // nothing yet: EAGAIN
	assert_int_equal(r.got, 0);
	send_part(sp[0], req, 5, fd, 0);
	assert_false(fftd__fdsock_read(&r, sp[1]));
	send_part(sp[0], req + 5, 10, fd, 1);
	assert_false(fftd__fdsock_read(&r, sp[1]));
	assert_int_equal(r.got, 15);
	assert_int_equal(r.nfds, 1);
	send_part(sp[0], req + 15, sizeof(req) - 15, fd, 0); // 8 too many
	assert_true(fftd__fdsock_read(&r, sp[1]));
	assert_int_equal(r.got, FFTD__FDSOCK_REQ);
	assert_memory_equal(r.buf, req, FFTD__FDSOCK_REQ);
	struct stat a, b;
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(r.fds[0], &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	uint64_t bytes = 0;
	char     msg[240];
	assert_int_equal(
	    fftd__fdsock_check(&r, false, &bytes, msg, sizeof(msg)), FFTD_OK);
	fftd__fdsock_release(&r);
	close(sp[0]);
	close(sp[1]);

	pair(sp);
	memset(&r, 0, sizeof(r));
	send_part(sp[0], req, FFTD__FDSOCK_REQ, fd, 5);
	assert_true(fftd__fdsock_read(&r, sp[1]));
	assert_int_equal(r.nfds, FFTD__FDSOCK_MAX_FDS);
	assert_true(r.ctrunc);
	assert_int_equal(
	    fftd__fdsock_check(&r, false, &bytes, msg, sizeof(msg)),
	    FFTD_EPROTO);
	fftd__fdsock_release(&r);
	close(sp[0]);
	close(sp[1]);
	close(fd);
	assert_int_equal(open_count(), base);
}

static int         cb_status; // what on_fd answers
static int         cb_calls;  // how often it ran
static struct stat cb_st;     // what its descriptor was

static int
on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen)
{
	(void) arg;
	(void) token;
	assert_true(bytes == 4096);
	assert_true(peer->pid == getpid());
	assert_int_equal(fstat(fd, &cb_st), 0);
	cb_calls++;
	*id = 77;
	if (cb_status != FFTD_OK) {
		snprintf(msg, msglen, "refused by the callback");
	}
	return cb_status;
}

// read_reply reads the daemon's 256-byte reply: its status and id.
static int
read_reply(int s, uint64_t *id)
{
	uint8_t r[FFTD__FDSOCK_REPLY];
	assert_int_equal(
	    recv(s, r, sizeof(r), MSG_WAITALL), (ssize_t) sizeof(r));
	int32_t status;
	memcpy(&status, r, 4); // little-endian host
	memcpy(id, r + 8, 8);
	return status;
}

// finish: the callback's answer is the reply's, its descriptor the one
// sent, and none stays open; a refused request never reaches it.
static void
test_finish(void **state)
{
	(void) state;
	int     base                  = open_count();
	int     fd                    = new_fd();
	uint8_t req[FFTD__FDSOCK_REQ] = { 0 };
	req[FFTD__FDSOCK_TOKEN + 1]   = 0x10; // 4096 bytes
	struct stat want;
	assert_int_equal(fstat(fd, &want), 0);
	static const struct {
		int nfds, cb, status;
	} runs[] = {
		{ 1, FFTD_OK, FFTD_OK },
		{ 1, FFTD_EINVAL, FFTD_EINVAL },
		{ 2, FFTD_OK, FFTD_EPROTO },
		{ 0, FFTD_OK, FFTD_EPROTO },
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int sp[2];
		pair(sp);
		cb_status = runs[i].cb;
		cb_calls  = 0;
		send_part(sp[0], req, sizeof(req), fd, runs[i].nfds);
		fftd__fdsock_req r;
		memset(&r, 0, sizeof(r));
		assert_true(fftd__fdsock_read(&r, sp[1]));
		int rv = fftd__fdsock_finish(&r, sp[1], false, on_fd, NULL);
		assert_int_equal(rv, runs[i].status);
		assert_int_equal(r.nfds, 0);
		uint64_t id = 0;
		assert_int_equal(read_reply(sp[0], &id), runs[i].status);
		assert_int_equal(cb_calls, runs[i].nfds == 1);
		if (runs[i].nfds == 1) {
			assert_true(cb_st.st_ino == want.st_ino);
			assert_true(id == 77);
		}
		close(sp[0]);
		close(sp[1]);
	}
	close(fd);
	assert_int_equal(open_count(), base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_table),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_read_pieces),
		cmocka_unit_test(test_finish),
	};
	return cmocka_run_group_tests_name("fdsock_req", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
//
// test_fdsock.c — the descriptor hand-over socket (daemon/fdsock.c)
// without a daemon: a table of received requests (byte counts, descriptor
// counts, truncated control data) with the exact answer of
// fftd__fdsock_parse, and the case tests/fuzz/fuzz-fdsock found: a receive
// that failed (a client that said nothing until the timeout) must take no
// descriptor from the control buffer, which then still holds what the
// previous connection left there. Served for real: a silent connection
// after a hand-over must not close the descriptor that now has the number
// the hand-over's descriptor had.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdsock.h"
#include "fftd.h"

typedef union ctl_buf {
	struct cmsghdr h;
	char           b[CMSG_SPACE(FFTD__FDSOCK_MAX_FDS * sizeof(int))];
} ctl_buf;

// fill_rights writes one SCM_RIGHTS message of nfds descriptors (numbers
// first, first + 1, ...) into c, as the kernel does, and points mh at it.
static void
fill_rights(struct msghdr *mh, ctl_buf *c, int nfds, int first)
{
	memset(c, 0, sizeof(*c));
	mh->msg_control    = c->b;
	mh->msg_controllen = nfds ? CMSG_SPACE(nfds * sizeof(int)) : 0;
	if (nfds == 0) {
		return;
	}
	c->h.cmsg_level = SOL_SOCKET;
	c->h.cmsg_type  = SCM_RIGHTS;
	c->h.cmsg_len   = CMSG_LEN(nfds * sizeof(int));
	for (int i = 0; i < nfds; i++) {
		int fd = first + i;
		memcpy(CMSG_DATA(&c->h) + i * sizeof(int), &fd, sizeof(int));
	}
}

typedef struct parse_case {
	const char *name;
	ssize_t     n;     // recvmsg's result
	int         nfds;  // descriptors in the control data
	int         flags; // msg_flags
	int         code;
	int         taken; // descriptors parse hands back for closing
} parse_case;

static const parse_case cases[] = {
	{ "24 bytes, one fd", 24, 1, 0, FFTD_OK, 1 },
	{ "23 bytes, one fd", 23, 1, 0, FFTD_EPROTO, 1 },
	{ "0 bytes (hung up)", 0, 0, 0, FFTD_EPROTO, 0 },
	{ "24 bytes, no fd", 24, 0, 0, FFTD_EPROTO, 0 },
	{ "24 bytes, two fds", 24, 2, 0, FFTD_EPROTO, 2 },
	{ "24 bytes, four fds", 24, 4, 0, FFTD_EPROTO, 4 },
	{ "24 bytes, one fd, control cut", 24, 1, MSG_CTRUNC, FFTD_EPROTO, 1 },
};

static void
test_parse_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const parse_case *pc = &cases[i];
		uint8_t           buf[FFTD__FDSOCK_REQ];
		memset(buf, 0xee, sizeof(buf));
		for (int k = 0; k < 8; k++) { // byte count 0x0102030405060708
			buf[FFTD__FDSOCK_TOKEN + k] = (uint8_t) (8 - k);
		}
		struct iovec  iov = { buf, sizeof(buf) };
		struct msghdr mh  = { 0 };
		ctl_buf       c;
		mh.msg_iov    = &iov;
		mh.msg_iovlen = 1;
		fill_rights(&mh, &c, pc->nfds, 100);
		mh.msg_flags = pc->flags;
		int      fds[FFTD__FDSOCK_MAX_FDS], nfds = -1;
		uint64_t bytes    = 0;
		char     msg[240] = "";
		int      rv       = fftd__fdsock_parse(
		               &mh, pc->n, fds, &nfds, &bytes, msg, sizeof(msg));
		if (rv != pc->code || nfds != pc->taken) {
			print_error(
			    "%s: code %d, %d fds (expected %d, %d): %s\n",
			    pc->name, rv, nfds, pc->code, pc->taken, msg);
		}
		assert_int_equal(rv, pc->code);
		assert_int_equal(nfds, pc->taken);
		for (int k = 0; k < nfds; k++) {
			assert_int_equal(fds[k], 100 + k);
		}
		if (rv == FFTD_OK) {
			assert_true(bytes == 0x0102030405060708ull);
		} else {
			assert_true(msg[0] != '\0');
		}
	}
}

// A failed receive fills in nothing: the control buffer still holds the
// previous connection's message, whose descriptor (closed since, its
// number perhaps another's now) must not be taken, or serve closes it.
static void
test_parse_failed_receive(void **state)
{
	(void) state;
	uint8_t       buf[FFTD__FDSOCK_REQ] = { 0 };
	struct iovec  iov                   = { buf, sizeof(buf) };
	struct msghdr mh                    = { 0 };
	ctl_buf       c;
	mh.msg_iov    = &iov;
	mh.msg_iovlen = 1;
	fill_rights(&mh, &c, 1, 7);
	mh.msg_controllen = sizeof(c.b); // what serve passes in
	int      fds[FFTD__FDSOCK_MAX_FDS], nfds = -1;
	uint64_t bytes    = 0;
	char     msg[240] = "";
	int      rv
	    = fftd__fdsock_parse(&mh, -1, fds, &nfds, &bytes, msg, sizeof(msg));
	assert_int_equal(rv, FFTD_EPROTO);
	assert_int_equal(nfds, 0);
}

static int last_fd = -1; // the descriptor the callback got

static int
on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen)
{
	(void) arg;
	(void) token;
	(void) bytes;
	(void) peer;
	(void) msg;
	(void) msglen;
	last_fd = fd;
	*id     = 1;
	return FFTD_OK;
}

// connect_to connects a stream socket to path.
static int
connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(connect(s, (struct sockaddr *) &sa, sizeof(sa)), 0);
	return s;
}

// read_reply waits (up to 20 s) for the daemon's whole reply and returns
// its status.
static int
read_reply(int s)
{
	uint8_t r[FFTD__FDSOCK_REPLY];
	size_t  got = 0;
	while (got < sizeof(r)) {
		struct pollfd p = { s, POLLIN, 0 };
		assert_int_equal(poll(&p, 1, 20000), 1);
		ssize_t k = recv(s, r + got, sizeof(r) - got, 0);
		assert_true(k > 0);
		got += (size_t) k;
	}
	int32_t status;
	memcpy(&status, r, 4); // little-endian host
	return status;
}

static void
test_silent_connection_closes_nothing(void **state)
{
	(void) state;
	char dir[] = "/tmp/fftd-fdsock-XXXXXX", path[128], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fd.sock", dir);
	fftd__fdsock *f = NULL;
	assert_int_equal(
	    fftd__fdsock_start(&f, path, 0600, on_fd, NULL, err, sizeof(err)),
	    FFTD_OK);

	// A hand-over as libfftd makes it.
	int mfd = memfd_create("test-fdsock", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	int     s = connect_to(path);
	uint8_t req[FFTD__FDSOCK_REQ];
	memset(req, 0x11, sizeof(req));
	struct iovec  iov = { req, sizeof(req) };
	struct msghdr mh  = { 0 };
	ctl_buf       c;
	mh.msg_iov    = &iov;
	mh.msg_iovlen = 1;
	fill_rights(&mh, &c, 1, mfd);
	assert_int_equal(sendmsg(s, &mh, 0), (ssize_t) sizeof(req));
	assert_int_equal(read_reply(s), FFTD_OK);
	close(s);
	assert_true(last_fd >= 0);

	// Its number now belongs to something else of ours.
	int sentinel = dup2(mfd, last_fd);
	assert_int_equal(sentinel, last_fd);

	// A client that connects and says nothing until the daemon gives up.
	s = connect_to(path);
	assert_int_equal(read_reply(s), FFTD_EPROTO);
	close(s);
	if (fcntl(sentinel, F_GETFD) < 0) {
		print_error("descriptor %d, not the daemon's, was closed: %s\n",
		    sentinel, strerror(errno));
		fail();
	}
	close(sentinel);
	close(mfd);
	fftd__fdsock_stop(f);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_failed_receive),
		cmocka_unit_test(test_silent_connection_closes_nothing),
	};
	return cmocka_run_group_tests_name("fdsock", tests, NULL, NULL);
}

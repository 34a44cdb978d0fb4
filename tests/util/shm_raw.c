// SPDX-License-Identifier: MIT
//
// shm_raw.c — the test_shm_* programs' shared helpers (see shm_raw.h).

//     refuses a BufferRegister on a tcp pipe itself).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "ref.h"
#include "fixture.h"
#include "probe.h"
#include "fftd.h"
#include "layout.h"
#include "shm_raw.h"
#include "wire.h"

// fftd_test_check_vs_ref checks out (laid out as s->out) against the reference.
int
fftd_test_check_vs_ref(const fftd__shape *s, const void *out,
    const long double *ref, char *why, size_t whylen)
{
	double err   = fftd_ref_rel_l2(s, out, ref);
	double bound = fftd_ref_bound(s);
	size_t unw   = fftd_ref_unwritten(s, out);
	if (!(err <= bound) || unw != 0) {
		snprintf(why, whylen,
		    "rel L2 error %.3g (bound %.3g), %zu unwritten", err, bound,
		    unw);
		return -1;
	}
	return 0;
}

// fftd_test_raw_connect opens a raw session on url with a Hello.
void
fftd_test_raw_connect(nng_socket *s, const char *url)
{
	assert_int_equal(fftd_test_raw_open(s, url, 10000), 0);
	assert_int_equal(
	    fftd_test_raw_hello(*s, FFTD_PROTOCOL_VERSION, NULL), FFTD_OK);
}

// fftd_test_raw_plan creates a plan of d on the raw session and returns its id;
// *in_bytes and *out_bytes receive its array sizes.
uint64_t
fftd_test_raw_plan(nng_socket s, const fftd_plan_desc *d, uint64_t *in_bytes,
    uint64_t *out_bytes)
{
	fftd__wire_desc        w;
	Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__PlanCreate pc = FFTD__WIRE__PLAN_CREATE__INIT;
	fftd__desc_to_wire(&w, d);
	pc.desc              = &w.pd;
	rq.body_case         = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	rq.plan_create       = &pc;
	Fftd__Wire__Reply *r = NULL;
	assert_int_equal(fftd_test_raw_request(s, &rq, NULL, 0, &r), FFTD_OK);
	assert_int_equal(r->body_case, FFTD__WIRE__REPLY__BODY_PLAN_CREATE);
	uint64_t id = r->plan_create->plan_id;
	*in_bytes   = r->plan_create->input_bytes;
	*out_bytes  = r->plan_create->output_bytes;
	fftd__wire__reply__free_unpacked(r, NULL);
	return id;
}

// fftd_test_raw_register sends BufferRegister{bytes}; on FFTD_OK the token and
// the descriptor socket's path are stored. Returns the status (-1: no reply).
int
fftd_test_raw_register(
    nng_socket s, uint64_t bytes, uint8_t token[16], char *path, size_t pathlen)
{
	Fftd__Wire__Request        rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__BufferRegister br = FFTD__WIRE__BUFFER_REGISTER__INIT;
	br.bytes                      = bytes;
	rq.body_case          = FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER;
	rq.buffer_register    = &br;
	Fftd__Wire__Reply *r  = NULL;
	int                st = fftd_test_raw_request(s, &rq, NULL, 0, &r);
	if (st == FFTD_OK) {
		if (r->body_case != FFTD__WIRE__REPLY__BODY_BUFFER_REGISTER
		    || r->buffer_register->token.len != 16
		    || r->buffer_register->fd_socket == NULL
		    || strlen(r->buffer_register->fd_socket) >= pathlen) {
			print_error("BufferRegister: malformed reply\n");
			st = -1;
		} else {
			memcpy(token, r->buffer_register->token.data, 16);
			snprintf(
			    path, pathlen, "%s", r->buffer_register->fd_socket);
		}
	} else if (st > 0
	    && (r == NULL || r->message == NULL || !r->message[0])) {
		print_error("BufferRegister: error %d without a message\n", st);
		st = -1;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return st;
}

// fftd_test_raw_release sends BufferRelease{id} and returns the status.
int
fftd_test_raw_release(nng_socket s, uint64_t id)
{
	Fftd__Wire__Request       rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__BufferRelease br = FFTD__WIRE__BUFFER_RELEASE__INIT;
	br.buffer_id                 = id;
	rq.body_case                 = FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE;
	rq.buffer_release            = &br;
	return fftd_test_raw_request(s, &rq, NULL, 0, NULL);
}

// fftd_test_make_memfd makes a memfd of `bytes` bytes with the given seals (0:
// none).
int
fftd_test_make_memfd(const char *name, size_t bytes, int seals)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		return -1;
	}
	if (ftruncate(fd, (off_t) bytes) != 0
	    || (seals && fcntl(fd, F_ADD_SEALS, seals) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

// fftd_test_fd_handover connects to the descriptor socket at path, sends req
// (len bytes; 24 for a well-formed request) with nfds descriptors attached
// (SCM_RIGHTS), half-closes when shut is set, and reads the 256-byte
// answer into *rep. Returns 0, or -1 (errno-style failure, printed) when
// no whole answer came.
int
fftd_test_fd_handover(const char *path, const uint8_t *req, size_t len,
    const int *fds, int nfds, int shut, fftd_test_fd_reply *rep)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		print_error("connect %s: %s\n", path, strerror(errno));
		if (s >= 0) {
			close(s);
		}
		return -1;
	}
	struct timeval tv = { 10, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	union {
		struct cmsghdr h;
		char           b[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec  iov = { (void *) req, len };
	struct msghdr mh  = { 0 };
	mh.msg_iov        = &iov;
	mh.msg_iovlen     = 1;
	if (nfds > 0) {
		mh.msg_control    = ctl.b;
		mh.msg_controllen = CMSG_SPACE((size_t) nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level     = SOL_SOCKET;
		c->cmsg_type      = SCM_RIGHTS;
		c->cmsg_len       = CMSG_LEN((size_t) nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t) nfds * sizeof(int));
	}
	uint8_t b[FFTD_TEST_FDREPLY + 1];
	ssize_t n = sendmsg(s, &mh, MSG_NOSIGNAL);
	if (n == (ssize_t) len && shut) {
		shutdown(s, SHUT_WR);
	}
	if (n == (ssize_t) len) {
		n = recv(s, b, FFTD_TEST_FDREPLY, MSG_WAITALL);
	}
	int     e   = errno;
	ssize_t eof = n == FFTD_TEST_FDREPLY
	    ? recv(s, b + FFTD_TEST_FDREPLY, 1, 0)
	    : -1;
	close(s);
	if (n != FFTD_TEST_FDREPLY) {
		print_error("descriptor socket: %zd bytes of answer (%s)\n", n,
		    strerror(e));
		return -1;
	}
	if (eof != 0) {
		print_error("descriptor socket: more than %d bytes of answer\n",
		    FFTD_TEST_FDREPLY);
		return -1;
	}
	rep->status = (int32_t) ((uint32_t) b[0] | (uint32_t) b[1] << 8
	    | (uint32_t) b[2] << 16 | (uint32_t) b[3] << 24);
	rep->zero   = (uint32_t) b[4] | (uint32_t) b[5] << 8
	    | (uint32_t) b[6] << 16 | (uint32_t) b[7] << 24;
	rep->id = 0;
	for (int i = 7; i >= 0; i--) {
		rep->id = (rep->id << 8) | b[8 + i];
	}
	memcpy(rep->msg, b + 16, 240);
	rep->msg[240] = '\0';
	return 0;
}

// fftd_test_fd_request builds the 24-byte request: token, u64 LE byte count.
void
fftd_test_fd_request(uint8_t req[24], const uint8_t token[16], uint64_t bytes)
{
	memcpy(req, token, 16);
	for (int i = 0; i < 8; i++) {
		req[16 + i] = (uint8_t) (bytes >> (8 * i));
	}
}

// fftd_test_fd_expect hands fds over with token and bytes and checks the
// answer's status (and, for errors, a message and id 0). Returns the buffer id
// on FFTD_OK, 0 otherwise; *bad counts failures.
uint64_t
fftd_test_fd_expect(const char *what, const char *path, const uint8_t *req,
    size_t len, const int *fds, int nfds, int shut, int want, int *bad)
{
	fftd_test_fd_reply rep;
	if (fftd_test_fd_handover(path, req, len, fds, nfds, shut, &rep) != 0) {
		fail_msg("%s: no answer on the descriptor socket", what);
	}
	if (rep.status != want || rep.zero != 0
	    || (want != FFTD_OK && (rep.id != 0 || rep.msg[0] == '\0'))
	    || (want == FFTD_OK && rep.id == 0)) {
		print_error("%s: status %d (%s), id %llu, \"%s\"; want %s\n",
		    what, rep.status, fftd_err_name(rep.status),
		    (unsigned long long) rep.id, rep.msg, fftd_err_name(want));
		(*bad)++;
		return 0;
	}
	return rep.id;
}

// fftd_test_raw_exec sends an Execute and returns the status (-1: no reply);
// *reply_payload receives the reply's payload length.
int
fftd_test_raw_exec(nng_socket s, uint64_t plan, uint64_t inb, uint64_t in_off,
    uint64_t outb, uint64_t out_off, const void *payload, size_t plen,
    uint64_t *reply_payload, char *msg, size_t msglen)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = plan;
	ex.in_buffer           = inb;
	ex.in_offset           = in_off;
	ex.out_buffer          = outb;
	ex.out_offset          = out_off;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	rq.execute             = &ex;
	msg[0]                 = '\0';
	if (fftd_test_raw_send_request(s, &rq, payload, plen) != 0) {
		return -1;
	}
	Fftd__Wire__Reply *r = NULL;
	if (fftd_test_raw_recv_reply(s, &r, reply_payload) != 0) {
		return -1;
	}
	int st = r->status;
	snprintf(msg, msglen, "%s", r->message ? r->message : "");
	fftd__wire__reply__free_unpacked(r, NULL);
	return st;
}

// fftd_test_exec_expect runs fftd_test_raw_exec and checks the status (and, on
// success, the reply payload's length; on error, that a message came). Returns
// 1 if the check failed.
int
fftd_test_exec_expect(const char *what, nng_socket s, uint64_t plan,
    uint64_t inb, uint64_t in_off, uint64_t outb, uint64_t out_off, size_t plen,
    int want, uint64_t want_payload)
{
	char     msg[512];
	uint64_t rp      = 0;
	void    *payload = plen ? calloc(1, plen) : NULL;
	int      st = fftd_test_raw_exec(s, plan, inb, in_off, outb, out_off,
	         payload, plen, &rp, msg, sizeof(msg));
	free(payload);
	if (st < 0) {
		fail_msg(
		    "%s: no reply from the daemon", what); // dead: stop here
	}
	if (st != want || (want == FFTD_OK && rp != want_payload)
	    || (want != FFTD_OK && msg[0] == '\0')) {
		print_error(
		    "%s: status %d (%s), reply payload %llu, \"%s\"; want "
		    "%s\n",
		    what, st, st >= 0 ? fftd_err_name(st) : "no reply",
		    (unsigned long long) rp, msg, fftd_err_name(want));
		return 1;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
//
// shm_raw.h — PRIVATE to the test_shm_* programs (tests/integration): what
// they share. Shared-buffer requests spoken by hand over the raw protocol
// (a session with a Hello, plans, BufferRegister, BufferRelease, Execute
// naming buffers) and over the daemon's descriptor socket (a memfd handed
// over with a token), each checked for its exact status; and the check of
// an output against the long double reference. Include after <cmocka.h>.

#ifndef FFTD_TESTS_SHM_RAW_H
#define FFTD_TESTS_SHM_RAW_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "fftd.h"
#include "layout.h"

// FFTD_TEST_RAW_MEMFD names the memfds the programs hand over by hand.
#define FFTD_TEST_RAW_MEMFD "fftd-test-raw"
// FFTD_TEST_FDREPLY is the size of the descriptor socket's answer
// (fdsock.h).
#define FFTD_TEST_FDREPLY 256

// fftd_test_fd_reply is the descriptor socket's 256-byte answer.
typedef struct fftd_test_fd_reply {
	int32_t  status;
	uint32_t zero;
	uint64_t id;
	char     msg[241];
} fftd_test_fd_reply;

// fftd_test_check_vs_ref checks out (laid out as s->out) against the reference.
int fftd_test_check_vs_ref(const fftd__shape *s, const void *out,
    const long double *ref, char *why, size_t whylen);

// fftd_test_raw_connect opens a raw session on url with a Hello.
void fftd_test_raw_connect(nng_socket *s, const char *url);

// fftd_test_raw_plan creates a plan of d on the raw session and returns its id;
// *in_bytes and *out_bytes receive its array sizes.
uint64_t fftd_test_raw_plan(nng_socket s, const fftd_plan_desc *d,
    uint64_t *in_bytes, uint64_t *out_bytes);

// fftd_test_raw_register sends BufferRegister{bytes}; on FFTD_OK the token and
// the descriptor socket's path are stored. Returns the status (-1: no reply).
int fftd_test_raw_register(nng_socket s, uint64_t bytes, uint8_t token[16],
    char *path, size_t pathlen);

// fftd_test_raw_release sends BufferRelease{id} and returns the status.
int fftd_test_raw_release(nng_socket s, uint64_t id);

// fftd_test_make_memfd makes a memfd of `bytes` bytes with the given seals (0:
// none).
int fftd_test_make_memfd(const char *name, size_t bytes, int seals);

// fftd_test_fd_handover connects to the descriptor socket at path, sends req
// (len bytes; 24 for a well-formed request) with nfds descriptors attached
// (SCM_RIGHTS), half-closes when shut is set, and reads the 256-byte
// answer into *rep. Returns 0, or -1 (errno-style failure, printed) when
// no whole answer came.
int fftd_test_fd_handover(const char *path, const uint8_t *req, size_t len,
    const int *fds, int nfds, int shut, fftd_test_fd_reply *rep);

// fftd_test_fd_request builds the 24-byte request: token, u64 LE byte count.
void fftd_test_fd_request(
    uint8_t req[24], const uint8_t token[16], uint64_t bytes);

// fftd_test_fd_expect hands fds over with token and bytes and checks the
// answer's status (and, for errors, a message and id 0). Returns the buffer id
// on FFTD_OK, 0 otherwise; *bad counts failures.
uint64_t fftd_test_fd_expect(const char *what, const char *path,
    const uint8_t *req, size_t len, const int *fds, int nfds, int shut,
    int want, int *bad);

// fftd_test_raw_exec sends an Execute and returns the status (-1: no reply);
// *reply_payload receives the reply's payload length.
int fftd_test_raw_exec(nng_socket s, uint64_t plan, uint64_t inb,
    uint64_t in_off, uint64_t outb, uint64_t out_off, const void *payload,
    size_t plen, uint64_t *reply_payload, char *msg, size_t msglen);

// fftd_test_exec_expect runs fftd_test_raw_exec and checks the status (and, on
// success, the reply payload's length; on error, that a message came). Returns
// 1 if the check failed.
int fftd_test_exec_expect(const char *what, nng_socket s, uint64_t plan,
    uint64_t inb, uint64_t in_off, uint64_t outb, uint64_t out_off, size_t plen,
    int want, uint64_t want_payload);

#endif // FFTD_TESTS_SHM_RAW_H

// SPDX-License-Identifier: MIT
//
// test_shm_streams.c — streaming sessions and their stream channels, against
// a real `fftd --backend fftw`:
//   - streams of depth 1, 2 and 4 over 3 * depth + 1 distinct inputs give
//     each the inline result bit for bit; with depth in flight
//     fftd_stream_input is NULL and fftd_stream_submit FFTD_EBUSY; a wait
//     with nothing in flight is FFTD_EINVAL; all of it over a stream
//     channel (FFTD_STREAM_CHANNEL=2: required) and again over NNG (0);
//   - stream channels: on the channel's socket, a short and a long packet
//     get FFTD_EPROTO, a slot past the depth and unknown flags
//     FFTD_EINVAL, each answered with its tag and a message, counted as
//     four daemon errors, and the stream still gives exact results after;
//     the client hanging up its channel with an execution in flight gets
//     FFTD_ECLOSED and leaves no channel behind, and a new stream works;
//     StreamOpen of a plan the connection does not have is FFTD_ENOPLAN;
//     fftd_stream_last_times gives submitted <= received <= started <
//     finished <= answered, FFTD_EINVAL before a wait, FFTD_EUNSUPPORTED
//     over NNG; waits that spin (fftd_stream_set_spin) give the same
//     results with two in flight and see the hang-up (FFTD_ECLOSED);
//     spin over 10^6 us is FFTD_EINVAL, over NNG FFTD_EUNSUPPORTED.
//
// Each of the test_shm_* programs (bits, streams, raw, lifetime) runs
// against its own shared daemon and ends with its clean exit: it maps no
// buffer, holds one session, and exits 0 on SIGTERM (under ASan: no
// leaks). What they share is tests/util/shm_raw.c's (the raw protocol's
// buffer requests, the reference check).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
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

#include "../util/cases.h"
#include "../util/client_cases.h"
#include "../util/check.h"
#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/ref.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "fftd.h"
#include "layout.h"
#include "../util/shm_raw.h"
#include "streamchan.h"
#include "wire.h"

#define TIMEOUT_MS 60000

static fftd_test_daemon D; // the shared daemon (fftw backend, defaults)
static fftd_test_daemon
    L; // a test's own daemon (stopped by fftd_test_local_teardown)
static fftd_client      *C; // the tests' client of D
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// FX: the shared daemon D (fftw backend, defaults) with the client C; L is
// a test's own.
static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.local      = &L,
};

// --- 2. streams
// -------------------------------------------------------------------------

// stream_run streams 3 * depth + 1 distinct inputs through plan p (shape
// s) at the given depth and returns how many checks failed.
static int
stream_run(fftd_plan *p, const fftd__shape *s, int depth, uint64_t seed)
{
	int      bad   = 0;
	int      total = 3 * depth + 1;
	size_t   inb = (size_t) s->in.bytes, outl = (size_t) s->out.bytes + 256;
	void   **in  = calloc((size_t) total, sizeof(void *));
	void   **exp = calloc((size_t) total, sizeof(void *));
	uint8_t *got = malloc(outl), *got2 = malloc(outl);
	char     why[256];
	assert_non_null(in);
	assert_non_null(exp);
	assert_non_null(got);
	assert_non_null(got2);
	// The expected results, inline, checked against the reference.
	for (int k = 0; k < total; k++) {
		in[k]  = malloc(inb);
		exp[k] = malloc(outl);
		assert_non_null(in[k]);
		assert_non_null(exp[k]);
		fftd_ref_fill_input(in[k], s, seed + (uint64_t) k);
		if (k > 0 && memcmp(in[k], in[k - 1], inb) == 0) {
			print_error(
			    "stream depth %d: inputs %d and %d are equal\n",
			    depth, k - 1, k);
			bad++;
		}
		fftd_ref_poison(exp[k], outl);
		int          st  = fftd_execute(p, in[k], exp[k]);
		long double *ref = fftd_ref_transform(s, in[k]);
		assert_non_null(ref);
		if (st != FFTD_OK
		    || fftd_test_check_vs_ref(
		        s, exp[k], ref, why, sizeof(why))) {
			print_error("stream depth %d: inline %d: %s\n", depth,
			    k, st != FFTD_OK ? fftd_err_name(st) : why);
			bad++;
		}
		free(ref);
	}
	fftd_stream *str = NULL;
	int          rv  = fftd_stream_open(p, depth, &str);
	if (rv != FFTD_OK) {
		print_error("fftd_stream_open depth %d: %s (%s)\n", depth,
		    fftd_err_name(rv), fftd_last_error());
		bad++;
		goto out;
	}
	if (fftd_stream_pending(str) != 0
	    || fftd_stream_wait(str, got, NULL) != FFTD_EINVAL) {
		print_error("depth %d: a fresh stream waits on nothing: want "
		            "FFTD_EINVAL\n",
		    depth);
		bad++;
	}
	int next_wait = 0, full = 0;
	for (int k = 0; k <= total; k++) {
		// Full (or done submitting): wait for the oldest.
		while (fftd_stream_pending(str) == depth
		    || (k == total && fftd_stream_pending(str) > 0)) {
			if (fftd_stream_pending(str) == depth) {
				full++;
				if (fftd_stream_input(str) != NULL) {
					print_error(
					    "depth %d: fftd_stream_input with "
					    "%d in "
					    "flight is not NULL\n",
					    depth, depth);
					bad++;
				}
				int e = fftd_stream_submit(
				    str, in[k < total ? k : 0]);
				if (e != FFTD_EBUSY
				    || fftd_stream_pending(str) != depth) {
					print_error(
					    "depth %d: submit with %d in "
					    "flight: %s, "
					    "pending %d; want FFTD_EBUSY\n",
					    depth, depth, fftd_err_name(e),
					    fftd_stream_pending(str));
					bad++;
				}
			}
			const void *outp = NULL;
			fftd_ref_poison(got, outl);
			int e = fftd_stream_wait(str, got, &outp);
			if (e != FFTD_OK || outp == NULL) {
				print_error("depth %d: wait for %d: %s (%s)\n",
				    depth, next_wait, fftd_err_name(e),
				    fftd_last_error());
				bad++;
			} else {
				fftd_ref_poison(got2, outl);
				fftd__side_copy(
				    got2, outp, &s->out, s->rank, s->batch);
				if (memcmp(got, exp[next_wait], outl) != 0
				    || memcmp(got2, exp[next_wait], outl)
				        != 0) {
					print_error("depth %d: result %d "
					            "differs from the "
					            "inline one\n",
					    depth, next_wait);
					bad++;
				}
			}
			next_wait++;
		}
		if (k == total) {
			break;
		}
		// Three ways in: filled in place and submitted with NULL, with
		// the slot itself, or copied from the caller's array.
		void *slot = fftd_stream_input(str);
		if (slot == NULL) {
			print_error(
			    "depth %d: no input slot with %d in flight\n",
			    depth, fftd_stream_pending(str));
			bad++;
			break;
		}
		int e;
		if (k % 3 == 0) {
			memcpy(slot, in[k], inb);
			e = fftd_stream_submit(str, NULL);
		} else if (k % 3 == 1) {
			memcpy(slot, in[k], inb);
			e = fftd_stream_submit(str, slot);
		} else {
			e = fftd_stream_submit(str, in[k]);
		}
		if (e != FFTD_OK) {
			print_error("depth %d: submit %d: %s (%s)\n", depth, k,
			    fftd_err_name(e), fftd_last_error());
			bad++;
			break;
		}
	}
	// Full before each submission past the first depth, and after the last.
	if (next_wait != total || full != total - depth + 1) {
		print_error(
		    "depth %d: %d results of %d, full %d times (want %d)\n",
		    depth, next_wait, total, full, total - depth + 1);
		bad++;
	}
	if (fftd_stream_pending(str) != 0
	    || fftd_stream_wait(str, got, NULL) != FFTD_EINVAL) {
		print_error("depth %d: a drained stream waits on nothing: want "
		            "FFTD_EINVAL\n",
		    depth);
		bad++;
	}
	// Closing with executions in flight waits for them.
	for (int k = 0; k < depth; k++) {
		int e = fftd_stream_submit(str, in[k]);
		if (e != FFTD_OK) {
			print_error("depth %d: submit before close: %s\n",
			    depth, fftd_err_name(e));
			bad++;
		}
	}
	fftd_stream_close(str);
	if (bad) {
		print_error("  (stream depth %d, FFTD_TEST_SEED=%llu)\n", depth,
		    (unsigned long long) fftd_test_seed());
	}
out:
	for (int k = 0; k < total; k++) {
		free(in[k]);
		free(exp[k]);
	}
	free(in);
	free(exp);
	free(got);
	free(got2);
	return bad;
}

static void
test_streams(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_desc d[2];
	int64_t        n1 = 1009, n2[2] = { 17, 12 };
	assert_int_equal(
	    fftd_plan_desc_init(&d[0], 1, &n1, FFTD_C2C, FFTD_F64), 0);
	d[0].batch     = 2;
	d[0].direction = FFTD_INVERSE;
	d[0].norm      = FFTD_NORM_ORTHO;
	// R2C f32, padded on both sides: the output is not dense, so only its
	// layout's elements may reach the caller.
	assert_int_equal(
	    fftd_plan_desc_init(&d[1], 2, n2, FFTD_R2C, FFTD_F32), 0);
	d[1].batch      = 3;
	d[1].inembed[0] = 18;
	d[1].inembed[1] = 14;
	d[1].onembed[0] = 19;
	d[1].onembed[1] = 8;
	int bad         = 0;
	for (int i = 0; i < 2; i++) {
		fftd__shape s;
		char        msg[256];
		assert_int_equal(
		    fftd__shape_resolve(&d[i], NULL, &s, msg, sizeof(msg)),
		    FFTD_OK);
		fftd_plan *p = NULL;
		ASSERT_OK(fftd_plan_create(C, &d[i], &p));
		static const int depths[] = { 1, 2, 4 };
		// Over a stream channel (2: required, so a stream that fell
		// back to NNG fails here) and over NNG (0).
		static const char *const paths[] = { "2", "0" };
		for (int m = 0; m < 2; m++) {
			setenv("FFTD_STREAM_CHANNEL", paths[m], 1);
			for (int k = 0; k < 3; k++) {
				bad += stream_run(p, &s, depths[k],
				    fftd_test_case_seed(
				        5000 + (uint64_t) (i * 10 + k))
				        << 8);
			}
		}
		unsetenv("FFTD_STREAM_CHANNEL");
		fftd_stream *st = NULL;
		assert_int_equal(fftd_stream_open(p, 0, &st), FFTD_EINVAL);
		assert_int_equal(fftd_stream_open(p, 65, &st), FFTD_EINVAL);
		assert_int_equal(fftd_stream_submit(NULL, NULL), FFTD_EINVAL);
		assert_null(fftd_stream_input(NULL));
		fftd_plan_destroy(p);
	}
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(bad, 0);
}

// wait_stopped waits until process pid is stopped (state T in
// /proc/PID/stat): kill(SIGSTOP) returns before the stop takes effect.
static void
wait_stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	for (int k = 0; k < 10000; k++) {
		char  line[512] = "";
		FILE *f         = fopen(path, "r");
		assert_non_null(f);
		char       *ok = fgets(line, sizeof(line), f);
		const char *p  = strrchr(line, ')');
		fclose(f);
		if (ok != NULL && p != NULL && p[1] == ' ' && p[2] == 'T') {
			return;
		}
		usleep(1000);
	}
	fail_msg("process %d did not stop", (int) pid);
}

// chan_answer_of sends pkt (len bytes) on a stream channel and returns
// the status of the answer, which must carry tag.
static int
chan_answer_of(int fd, const void *pkt, size_t len, uint64_t tag)
{
	assert_int_equal(send(fd, pkt, len, MSG_NOSIGNAL), (ssize_t) len);
	struct pollfd p = { fd, POLLIN, 0 };
	assert_int_equal(poll(&p, 1, TIMEOUT_MS), 1);
	fftd__chan_reply r;
	ssize_t          n = recv(fd, &r, sizeof(r), 0);
	assert_true(n > (ssize_t) offsetof(fftd__chan_reply, msg));
	assert_int_equal(r.tag, tag);
	r.msg[sizeof(r.msg) - 1] = '\0';
	assert_true(r.status == FFTD_OK || r.msg[0] != '\0'); // says why
	return r.status;
}

// A stream channel refuses what is not a submission of its own slots with
// a typed answer and keeps serving; a client that hangs up its channel
// leaves the daemon serving; StreamOpen checks what it is given.
static void
test_stream_channel(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_plan_desc d;
	int64_t        n = 256;
	assert_int_equal(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32), 0);
	d.priority   = FFTD_PRIORITY_REALTIME;
	fftd_plan *p = NULL;
	ASSERT_OK(fftd_plan_create(C, &d, &p));
	fftd_stats before;
	ASSERT_OK(fftd_get_stats(C, &before));
	setenv("FFTD_STREAM_CHANNEL", "2", 1);
	fftd_stream *st = NULL;
	ASSERT_OK(fftd_stream_open(p, 2, &st));
	int fds[4];
	assert_int_equal(fftd_test_seqpacket_fds(fds, 4), 1);
	int               fd  = fds[0];
	fftd__chan_submit sub = { .slot = 0, .flags = 0, .tag = 0 };
	uint8_t           big[sizeof(sub) + 8];
	memset(big, 0, sizeof(big));
	assert_int_equal(chan_answer_of(fd, &sub, 3, 0), FFTD_EPROTO);
	assert_int_equal(chan_answer_of(fd, big, sizeof(big), 0), FFTD_EPROTO);
	sub.slot = 2; // depth 2: slots 0 and 1
	sub.tag  = 77;
	assert_int_equal(
	    chan_answer_of(fd, &sub, sizeof(sub), 77), FFTD_EINVAL);
	sub.slot  = 0;
	sub.flags = 1;
	sub.tag   = 78;
	assert_int_equal(
	    chan_answer_of(fd, &sub, sizeof(sub), 78), FFTD_EINVAL);
	sub.flags = 0;
	sub.tag   = 79;
	assert_int_equal(chan_answer_of(fd, &sub, sizeof(sub), 79), FFTD_OK);
	// Still a working stream: an impulse gives all ones.
	float in[512], out[512];
	memset(in, 0, sizeof(in));
	in[0] = 1;
	fftd_stream_times t;
	assert_int_equal(fftd_stream_last_times(st, &t), FFTD_EINVAL);
	for (int k = 0; k < 3; k++) {
		fftd_ref_poison(out, sizeof(out));
		ASSERT_OK(fftd_stream_submit(st, in));
		ASSERT_OK(fftd_stream_wait(st, out, NULL));
		for (int j = 0; j < 256; j++) {
			assert_true(
			    out[2 * j] == 1.0f && out[2 * j + 1] == 0.0f);
		}
		// Where its time went: one clock, in order.
		ASSERT_OK(fftd_stream_last_times(st, &t));
		assert_true(t.submitted_ns > 0);
		assert_true(t.submitted_ns <= t.received_ns);
		assert_true(t.received_ns <= t.started_ns);
		assert_true(t.started_ns < t.finished_ns);
		assert_true(t.finished_ns <= t.answered_ns);
	}
	// Waits that spin before sleeping (fftd_stream_set_spin): the same
	// results, two in flight answered in order; 200 ms of spin is more
	// than any of these waits, so the hang-up below is seen spinning.
	assert_int_equal(fftd_stream_set_spin(NULL, 10), FFTD_EINVAL);
	assert_int_equal(fftd_stream_set_spin(st, 1000001), FFTD_EINVAL);
	ASSERT_OK(fftd_stream_set_spin(st, 200000));
	float in2[512], out2[512];
	memset(in2, 0, sizeof(in2));
	in2[2] = 2; // 2 x the impulse one sample on: 2 e^{-2 pi i j / 256}
	for (int k = 0; k < 3; k++) {
		fftd_ref_poison(out, sizeof(out));
		fftd_ref_poison(out2, sizeof(out2));
		ASSERT_OK(fftd_stream_submit(st, in));
		ASSERT_OK(fftd_stream_submit(st, in2));
		ASSERT_OK(fftd_stream_wait(st, out, NULL));
		ASSERT_OK(fftd_stream_wait(st, out2, NULL));
		for (int j = 0; j < 256; j++) {
			double a = -2 * M_PI * j / 256;
			assert_true(
			    out[2 * j] == 1.0f && out[2 * j + 1] == 0.0f);
			assert_true(fabs(out2[2 * j] - 2 * cos(a)) < 1e-5
			    && fabs(out2[2 * j + 1] - 2 * sin(a)) < 1e-5);
		}
	}
	fftd_stats after;
	ASSERT_OK(fftd_get_stats(C, &after));
	assert_int_equal(after.errors - before.errors, 4);
	assert_int_equal(after.stream_channels, before.stream_channels + 1);
	// The client side hangs up with an execution in flight: the wait
	// ends with FFTD_ECLOSED, the daemon drops the channel and serves.
	// The daemon is stopped (SIGSTOP) from the submission to the hang-up:
	// else it may run the execution and answer first (a loaded machine
	// leaves it time to), and the wait then rightly returns FFTD_OK. It
	// sees the submission and the hang-up together when it resumes.
	assert_int_equal(fftd_test_daemon_signal(&D, SIGSTOP), 0);
	wait_stopped(D.pid);
	ASSERT_OK(fftd_stream_submit(st, in));
	assert_int_equal(shutdown(fd, SHUT_RDWR), 0);
	assert_int_equal(fftd_test_daemon_signal(&D, SIGCONT), 0);
	assert_int_equal(fftd_stream_wait(st, out, NULL), FFTD_ECLOSED);
	assert_int_equal(fftd_stream_submit(st, in), FFTD_ECLOSED);
	fftd_stream_close(st);
	assert_int_equal(fftd_test_seqpacket_fds(fds, 4), 0);
	ASSERT_OK(fftd_stream_open(p, 1, &st));
	ASSERT_OK(fftd_stream_submit(st, in));
	ASSERT_OK(fftd_stream_wait(st, out, NULL));
	assert_true(out[0] == 1.0f && out[510] == 1.0f);
	fftd_stream_close(st);
	// Over NNG the daemon's times do not travel.
	setenv("FFTD_STREAM_CHANNEL", "0", 1);
	ASSERT_OK(fftd_stream_open(p, 1, &st));
	ASSERT_OK(fftd_stream_submit(st, in));
	ASSERT_OK(fftd_stream_wait(st, out, NULL));
	assert_int_equal(fftd_stream_last_times(st, &t), FFTD_EUNSUPPORTED);
	assert_int_equal(fftd_stream_set_spin(st, 100), FFTD_EUNSUPPORTED);
	fftd_stream_close(st);
	unsetenv("FFTD_STREAM_CHANNEL");
	fftd_plan_destroy(p);
	// The daemon forgets closed channels (its poller sees them hang up).
	for (int k = 0; k < 200; k++) {
		ASSERT_OK(fftd_get_stats(C, &after));
		if (after.stream_channels == before.stream_channels) {
			break;
		}
		usleep(10000);
	}
	assert_int_equal(after.stream_channels, before.stream_channels);

	// StreamOpen on a raw connection: no such plan; nothing else leaks.
	nng_socket s;
	fftd_test_raw_connect(&s, D.url);
	Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__StreamOpen so = FFTD__WIRE__STREAM_OPEN__INIT;
	so.plan_id                = 1;
	so.buffer_id              = 1;
	so.depth                  = 1;
	so.slot_bytes             = 4096;
	so.out_offset             = 2048;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_STREAM_OPEN;
	rq.stream_open            = &so;
	Fftd__Wire__Reply *r      = NULL;
	int                rv     = fftd_test_raw_request(s, &rq, NULL, 0, &r);
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	nng_close(s);
	assert_int_equal(rv, FFTD_ENOPLAN);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// The shared daemon, after everything above, maps no buffer, holds one
// session, and exits 0 on SIGTERM (under ASan: no leaks).
static void
test_shared_daemon_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_int_equal(fftd_test_daemon_settles(D.pid, 0, -1, C, 1, 5000), 0);
	assert_int_equal(fftd_test_count_memfd(D.pid, FFTD_TEST_RAW_MEMFD), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	// libfftd stages large inline arrays through shared buffers of its
	// own; keep the inline path inline, so that it is the reference.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_stream_channel),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("shm_streams", tests, &FX);
}

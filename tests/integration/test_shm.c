// SPDX-License-Identifier: MIT
//
// test_shm.c — shared-memory buffers and streaming sessions against a real
// `fftd --backend fftw`:
//   - results through fftd_buffers are bit-identical (memcmp, output span
//     plus 256 bytes of slack) to the inline path of the same plan on the
//     same input, for in and out in one buffer (either order), in two
//     buffers, in a buffer with out in plain memory and the reverse, and
//     in place inside a buffer, at 64-byte aligned offsets. At offsets
//     that are only element-aligned FFTW runs other codelets, so those
//     results are held to the reference and the poison checks, not to the
//     bits; so are complex arrays aligned only to their real type, which C
//     allows (alignof(double complex) is 8) and which must work as they do
//     in plain memory. Cases: the shared table (tests/util/cases.c) of
//     rank 1 and 2 for C2C f64 and f32, R2C f32 and C2R f32 (batch 1..4,
//     sizes 1 .. 4096 with primes and non-powers of two; strided,
//     embedded, interleaved, padded and in-place layouts). Outputs are
//     poisoned (0xFF, a NaN) first; every byte of the buffer window outside
//     the arrays must stay poisoned, the input must stay unchanged, and
//     each result is checked against the long double FFTW reference within
//     fftd_ref_bound (ref.h: 16 eps max(1, log2 N)) with no element left
//     unwritten;
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
//     spin over 10^6 us is FFTD_EINVAL, over NNG FFTD_EUNSUPPORTED;
//   - isolation: another connection naming buffer ids 1..64 (three of them
//     another client's) in Execute or BufferRelease gets FFTD_EINVAL and
//     changes none of that client's bytes; over the raw protocol, offsets
//     and lengths out of range, misaligned offsets, input both in a buffer
//     and inline, and the descriptor socket's refusals (unsealed memfd,
//     wrong byte count, too small a file, not a file, unknown token,
//     another process's send, no fd, two fds, a short request) each get
//     their exact status, and the daemon leaks no descriptor;
//   - lifetime: a client SIGKILLed while holding three 8 MiB buffers and a
//     stream, a buffer destroyed, a client closed with buffers: within 10 s
//     the daemon maps none of those memfds, its descriptor count and
//     session count are back to where they were, and it still serves;
//   - [limits] max_buffer_bytes is enforced per connection (FFTD_ELIMIT),
//     and a destroyed or refused buffer gives its bytes back;
//   - fftd_buffer_create over tcp:// is FFTD_EUNSUPPORTED (and the daemon
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
#include "wire.h"

#define TIMEOUT_MS 60000
#define SETTLE_MS 10000  // how long the daemon may take to let go
#define BUF_X (4u << 20) // the test's two shared buffers
#define BUF_Y (2u << 20)
#define RAW_MEMFD "fftd-test-raw"
#define FFTD_TEST_FDREPLY 256 // the descriptor socket's answer (fdsock.h)

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

// --- helpers
// ------------------------------------------------------------------------

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

// --- 1. shared buffers give the inline path's bits
// ------------------------------------

enum {
	M_ONE,     // in and out in one buffer (order alternates)
	M_IN,      // in in a buffer, out in plain memory
	M_OUT,     // in in plain memory, out in a buffer
	M_TWO,     // in in one buffer, out in another
	M_ODD,     // two buffers, offsets only element-aligned
	M_HALF,    // two buffers, offsets aligned for the C type only
	M_INPLACE, // in == out inside a buffer (in-place cases only)
	M_COUNT
};

static const char *const mode_name[M_COUNT]
    = { "in+out in one buffer", "in buffer, out plain", "in plain, out buffer",
	      "in and out in two buffers", "element-aligned offsets",
	      "offsets aligned to the real type only", "in place in a buffer" };

// region: an array placed at off in a buffer window, expected to hold
// expect (len bytes) afterwards.
typedef struct region {
	size_t      off, len;
	const void *expect;
} region;

// window_check returns the first byte of w[0..len) that is neither the
// expected content of its region nor the 0xFF poison, or -1.
static long long
window_check(const uint8_t *w, size_t len, const region *rs, int nr)
{
	for (size_t i = 0; i < len; i++) {
		int inside = 0;
		for (int k = 0; k < nr && !inside; k++) {
			if (rs[k].len && i >= rs[k].off
			    && i < rs[k].off + rs[k].len) {
				inside = 1;
				if (w[i]
				    != ((const uint8_t *) rs[k]
				            .expect)[i - rs[k].off]) {
					return (long long) i;
				}
			}
		}
		if (!inside && w[i] != 0xFF) {
			return (long long) i;
		}
	}
	return -1;
}

// check_vs_ref checks out (laid out as s->out) against the reference.
static int
check_vs_ref(const fftd__shape *s, const void *out, const long double *ref,
    char *why, size_t whylen)
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

// mode_fails counts failures per mode; only the first MODE_REPORTS of each
// are printed in full.
#define MODE_REPORTS 4
static int mode_fails[M_COUNT];

#define MODE_ERROR(m, ...)                                                     \
	do {                                                                   \
		if (mode_fails[m]++ < MODE_REPORTS) {                          \
			print_error(__VA_ARGS__);                              \
		}                                                              \
		bad++;                                                         \
	} while (0)

// shm_case runs case tc (plan p on client C) inline, then through the
// shared buffers X and Y in every mode, and returns how many checks failed.
static int
shm_case(const fftd_test_case *tc, fftd_plan *p, fftd_buffer *X, fftd_buffer *Y,
    int idx, uint64_t seed)
{
	fftd_test_buffers b, bi;
	fftd_test_result  r;
	char              why[512];
	int               bad = 0;
	memset(&bi, 0, sizeof(bi));
	if (fftd_test_buffers_make(&b, &tc->desc, 0, seed) != 0) {
		print_error("%s: cannot set up\n", tc->name);
		return 1;
	}
	const fftd__shape *s    = &b.s;
	size_t             inb  = (size_t) s->in.bytes;
	size_t             outl = b.out_len; // output span + slack
	int                st   = fftd_execute(p, b.in, b.out);
	if (st != FFTD_OK
	    || fftd_test_buffers_check(&b, &r, why, sizeof(why))) {
		print_error("%s: inline: %s\n", tc->name,
		    st != FFTD_OK ? fftd_err_name(st) : why);
		fftd_test_buffers_free(&b);
		return 1;
	}
	long double *ref = fftd_ref_transform(s, b.pristine);
	if (ref == NULL) {
		fftd_test_buffers_free(&b);
		return 1;
	}
	uint8_t     *xa = fftd_buffer_data(X), *ya = fftd_buffer_data(Y);
	uint8_t     *plain_in  = malloc(inb ? inb : 1);
	uint8_t     *plain_out = malloc(outl);
	uint8_t     *ff        = malloc(outl); // what a poisoned output was
	size_t       g         = 64 * (size_t) (1 + idx % 3);
	long double *ref_ip    = NULL;
	if (plain_in == NULL || plain_out == NULL || ff == NULL) {
		print_error("%s: out of memory\n", tc->name);
		bad++;
		goto out;
	}
	fftd_ref_poison(ff, outl);
	for (int m = 0; m < M_COUNT; m++) {
		const uint8_t     *in_expect = b.pristine, *out_expect = b.out;
		const long double *mref    = ref;
		size_t             out_len = outl;
		if (m == M_INPLACE) {
			if (!tc->in_place) {
				continue;
			}
			// Its own inline baseline, in place, on fresh data.
			snprintf(why, sizeof(why), "cannot set up");
			if (fftd_test_buffers_make(
			        &bi, &tc->desc, 1, seed ^ 0x5a5a)
			        != 0
			    || (st = fftd_execute(p, bi.in, bi.in)) != FFTD_OK
			    || fftd_test_buffers_check(
			           &bi, &r, why, sizeof(why))
			        != 0) {
				print_error("%s: inline in place: %s\n",
				    tc->name,
				    st != FFTD_OK ? fftd_err_name(st) : why);
				bad++;
				break;
			}
			out_expect = bi.out;
			out_len    = bi.out_len;
			if ((ref_ip = fftd_ref_transform(s, bi.pristine))
			    == NULL) {
				bad++;
				break;
			}
			mref = ref_ip;
		}
		region   rx[2], ry[1];
		int      nx = 0, ny = 0;
		uint8_t *in = NULL, *out = NULL;
		size_t   io = g, oo = g;
		switch (m) {
		case M_ONE:
			if (idx % 2 == 0) {
				oo = align64(io + inb) + g;
			} else {
				io = align64(oo + outl) + g;
			}
			in  = xa + io;
			out = xa + oo;
			break;
		case M_IN:
			in  = xa + io;
			out = plain_out;
			break;
		case M_OUT:
			in  = plain_in;
			out = xa + oo;
			break;
		case M_TWO:
			in  = xa + io;
			out = ya + oo;
			break;
		case M_ODD:
			io  = g + s->in.elem_size;
			oo  = g + s->out.elem_size;
			in  = xa + io;
			out = ya + oo;
			break;
		case M_HALF: {
			// A complex array needs only its real type's alignment
			// in C (alignof(double complex) is 8): such an array
			// inside a buffer is as valid an argument as it is in
			// plain memory.
			size_t real = s->precision == FFTD_F64 ? 8 : 4;
			io          = g + real;
			oo          = g + real;
			in          = xa + io;
			out         = ya + oo;
			break;
		}
		case M_INPLACE:
			in = out = xa + io;
			break;
		}
		size_t winx = 0, winy = 0;
		if (in >= xa && in < xa + BUF_X) {
			rx[nx++] = (region) { io, m == M_INPLACE ? 0 : inb,
				in_expect };
			winx     = io + inb;
		}
		if (out >= xa && out < xa + BUF_X) {
			rx[nx++] = (region) { oo, out_len, out_expect };
			winx     = winx > oo + out_len ? winx : oo + out_len;
		} else if (out >= ya && out < ya + BUF_Y) {
			// M_ODD's and M_HALF's output: by fftd_test_check
			// instead.
			ry[ny++] = (region) { oo, out_len,
				m == M_ODD || m == M_HALF ? out : out_expect };
			winy     = oo + out_len;
		}
		winx += 256;
		winy += ny ? 256 : 0;
		if (winx > BUF_X || winy > BUF_Y) {
			print_error(
			    "%s: does not fit the test's buffers\n", tc->name);
			bad++;
			continue;
		}
		fftd_ref_poison(xa, winx);
		fftd_ref_poison(ya, winy);
		fftd_ref_poison(plain_out, outl);
		if (m == M_INPLACE) {
			memcpy(in, bi.before, out_len);
		} else {
			memcpy(in, b.pristine, inb);
		}
		st = fftd_execute(p, in, out);
		if (st != FFTD_OK) {
			MODE_ERROR(m, "%s: %s: %s (%s)\n", tc->name,
			    mode_name[m], fftd_err_name(st), fftd_last_error());
			continue;
		}
		long long at;
		if (m == M_ODD || m == M_HALF) {
			if (fftd_test_check(s, b.pristine, out, ff, out_len, &r,
			        why, sizeof(why))
			    != 0) {
				MODE_ERROR(m, "%s: %s: %s\n", tc->name,
				    mode_name[m], why);
			}
		} else if (memcmp(out, out_expect, out_len) != 0) {
			size_t k = 0;
			while (k < out_len
			    && ((uint8_t *) out)[k] == out_expect[k]) {
				k++;
			}
			char ref_why[256] = "within the reference's bound";
			check_vs_ref(s, out, mref, ref_why, sizeof(ref_why));
			MODE_ERROR(m,
			    "%s: %s: output differs from the inline path's at "
			    "byte "
			    "%zu of %zu (%s)\n",
			    tc->name, mode_name[m], k, out_len, ref_why);
		} else if (check_vs_ref(s, out, mref, why, sizeof(why))) {
			MODE_ERROR(
			    m, "%s: %s: %s\n", tc->name, mode_name[m], why);
		}
		if (m != M_INPLACE && memcmp(in, b.pristine, inb) != 0) {
			MODE_ERROR(m, "%s: %s: the input was changed\n",
			    tc->name, mode_name[m]);
		} else if ((at = window_check(xa, winx, rx, nx)) >= 0
		    || (at = window_check(ya, winy, ry, ny)) >= 0) {
			MODE_ERROR(m,
			    "%s: %s: a buffer byte outside the arrays changed, "
			    "at "
			    "%lld\n",
			    tc->name, mode_name[m], at);
		}
	}
out:
	free(plain_in);
	free(plain_out);
	free(ff);
	free(ref);
	free(ref_ip);
	fftd_test_buffers_free(&b);
	if (bi.in != NULL) {
		fftd_test_buffers_free(&bi);
	}
	return bad;
}

static void
test_bit_identical(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const struct {
		fftd_kind      kind;
		fftd_precision p;
	} combos[] = {
		{ FFTD_C2C, FFTD_F64 },
		{ FFTD_C2C, FFTD_F32 },
		{ FFTD_R2C, FFTD_F32 },
		{ FFTD_C2R, FFTD_F32 },
	};
	fftd_buffer *X = NULL, *Y = NULL;
	ASSERT_OK(fftd_buffer_create(C, BUF_X, &X));
	ASSERT_OK(fftd_buffer_create(C, BUF_Y, &Y));
	assert_int_equal(fftd_buffer_size(X), BUF_X);
	assert_int_equal((uintptr_t) fftd_buffer_data(X) % 4096, 0);
	fftd_test_case *tc = calloc(FFTD_TEST_MAX_CASES, sizeof(*tc));
	assert_non_null(tc);
	int bad = 0, cases = 0, inplace = 0;
	for (size_t c = 0; c < sizeof(combos) / sizeof(combos[0]); c++) {
		for (int rank = 1; rank <= 2; rank++) {
			size_t n = fftd_test_cases(combos[c].kind, rank,
			    combos[c].p, false, tc, FFTD_TEST_MAX_CASES);
			bad += n == 0;
			for (size_t i = 0; i < n; i++) {
				fftd_plan *p = NULL;
				int rv = fftd_plan_create(C, &tc[i].desc, &p);
				if (rv != FFTD_OK) {
					print_error("%s: plan: %s (%s)\n",
					    tc[i].name, fftd_err_name(rv),
					    fftd_last_error());
					bad++;
					continue;
				}
				uint64_t seed
				    = fftd_test_case_seed((uint64_t) (c * 1000
				        + (size_t) rank * 100 + i));
				bad += shm_case(&tc[i], p, X, Y, cases, seed);
				cases++;
				inplace += tc[i].in_place;
				fftd_plan_destroy(p);
			}
		}
	}
	free(tc);
	fftd_buffer_destroy(X);
	fftd_buffer_destroy(Y);
	printf("shared vs inline: %d cases x %d modes (+%d in place), %d "
	       "failures\n",
	    cases, M_INPLACE, inplace, bad);
	for (int m = 0; m < M_COUNT; m++) {
		if (mode_fails[m]) {
			print_error("%s: %d failures (FFTD_TEST_SEED=%llu)\n",
			    mode_name[m], mode_fails[m],
			    (unsigned long long) fftd_test_seed());
		}
	}
	fftd_test_print_summary("shm");
	assert_true(cases >= 300);
	assert_int_equal(bad, 0);
}

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
		    || check_vs_ref(s, exp[k], ref, why, sizeof(why))) {
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

static void raw_connect(nng_socket *s, const char *url);

// seqpacket_fds lists this process's SOCK_SEQPACKET sockets (stream
// channels: nothing else here makes one) into fds; returns how many.
static int
seqpacket_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int            n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int       fd = atoi(e->d_name), type = 0;
		socklen_t tl = sizeof(type);
		if (e->d_name[0] != '.' && fd != dirfd(d)
		    && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0
		    && type == SOCK_SEQPACKET && n < max) {
			fds[n++] = fd;
		}
	}
	closedir(d);
	return n;
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
	assert_int_equal(seqpacket_fds(fds, 4), 1);
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
	assert_int_equal(seqpacket_fds(fds, 4), 0);
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
	raw_connect(&s, D.url);
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

// --- raw protocol: registering a buffer by hand
// -------------------------------------------

// raw_connect opens a raw session on url with a Hello.
static void
raw_connect(nng_socket *s, const char *url)
{
	assert_int_equal(fftd_test_raw_open(s, url, 10000), 0);
	assert_int_equal(
	    fftd_test_raw_hello(*s, FFTD_PROTOCOL_VERSION, NULL), FFTD_OK);
}

// raw_plan creates a plan of d on the raw session and returns its id;
// *in_bytes and *out_bytes receive its array sizes.
static uint64_t
raw_plan(nng_socket s, const fftd_plan_desc *d, uint64_t *in_bytes,
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

// raw_register sends BufferRegister{bytes}; on FFTD_OK the token and the
// descriptor socket's path are stored. Returns the status (-1: no reply).
static int
raw_register(
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

// raw_release sends BufferRelease{id} and returns the status.
static int
raw_release(nng_socket s, uint64_t id)
{
	Fftd__Wire__Request       rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__BufferRelease br = FFTD__WIRE__BUFFER_RELEASE__INIT;
	br.buffer_id                 = id;
	rq.body_case                 = FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE;
	rq.buffer_release            = &br;
	return fftd_test_raw_request(s, &rq, NULL, 0, NULL);
}

// make_memfd makes a memfd of `bytes` bytes with the given seals (0: none).
static int
make_memfd(const char *name, size_t bytes, int seals)
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

// fd_reply is the descriptor socket's 256-byte answer.
typedef struct fd_reply {
	int32_t  status;
	uint32_t zero;
	uint64_t id;
	char     msg[241];
} fd_reply;

// fd_handover connects to the descriptor socket at path, sends req (len
// bytes; 24 for a well-formed request) with nfds descriptors attached
// (SCM_RIGHTS), half-closes when shut is set, and reads the 256-byte
// answer into *rep. Returns 0, or -1 (errno-style failure, printed) when
// no whole answer came.
static int
fd_handover(const char *path, const uint8_t *req, size_t len, const int *fds,
    int nfds, int shut, fd_reply *rep)
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

// fd_request builds the 24-byte request: token, u64 LE byte count.
static void
fd_request(uint8_t req[24], const uint8_t token[16], uint64_t bytes)
{
	memcpy(req, token, 16);
	for (int i = 0; i < 8; i++) {
		req[16 + i] = (uint8_t) (bytes >> (8 * i));
	}
}

// fd_expect hands fds over with token and bytes and checks the answer's
// status (and, for errors, a message and id 0). Returns the buffer id on
// FFTD_OK, 0 otherwise; *bad counts failures.
static uint64_t
fd_expect(const char *what, const char *path, const uint8_t *req, size_t len,
    const int *fds, int nfds, int shut, int want, int *bad)
{
	fd_reply rep;
	if (fd_handover(path, req, len, fds, nfds, shut, &rep) != 0) {
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

// raw_exec sends an Execute and returns the status (-1: no reply);
// *reply_payload receives the reply's payload length.
static int
raw_exec(nng_socket s, uint64_t plan, uint64_t inb, uint64_t in_off,
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

// exec_expect runs raw_exec and checks the status (and, on success, the
// reply payload's length; on error, that a message came). Returns 1 if
// the check failed.
static int
exec_expect(const char *what, nng_socket s, uint64_t plan, uint64_t inb,
    uint64_t in_off, uint64_t outb, uint64_t out_off, size_t plen, int want,
    uint64_t want_payload)
{
	char     msg[512];
	uint64_t rp      = 0;
	void    *payload = plen ? calloc(1, plen) : NULL;
	int st = raw_exec(s, plan, inb, in_off, outb, out_off, payload, plen,
	    &rp, msg, sizeof(msg));
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

// fdsend PATH TOKENHEX BYTES: hand a sealed memfd over with someone else's
// token; exits with 10 + the answer's status (2: no answer).
static int
role_fdsend(int argc, char **argv)
{
	if (argc < 3 || strlen(argv[1]) != 32) {
		return 100;
	}
	uint8_t token[16], req[24];
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(argv[1] + 2 * i, "%2x", &v) != 1) {
			return 101;
		}
		token[i] = (uint8_t) v;
	}
	uint64_t bytes = strtoull(argv[2], NULL, 0);
	int      fd    = make_memfd(RAW_MEMFD, (size_t) bytes, F_SEAL_SHRINK);
	if (fd < 0) {
		return 102;
	}
	fd_request(req, token, bytes);
	fd_reply rep;
	int      rv = fd_handover(argv[0], req, sizeof(req), &fd, 1, 0, &rep);
	close(fd);
	if (rv != 0) {
		return 2;
	}
	return 10 + (rep.status >= 0 && rep.status < 100 ? rep.status : 99);
}

// --- 3. isolation between connections
// ------------------------------------------------------

static void
test_isolation(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L; // fresh: buffer ids start at 1
	assert_int_equal(fftd_test_daemon_start(d, NULL, DAEMON_ARGS), 0);
	fftd_client *c1;
	ASSERT_OK(fftd_client_open(&c1, d->url, TIMEOUT_MS));
	fftd_buffer *held[3];
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_buffer_create(c1, 65536, &held[i]));
		memset(fftd_buffer_data(held[i]), 0x5a + i, 65536);
	}
	nng_socket rs;
	raw_connect(&rs, d->url);
	fftd_plan_desc pd;
	int64_t        n16 = 16;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_C2C, FFTD_F64), 0);
	uint64_t ib, ob;
	uint64_t plan = raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 256);
	int bad = 0;
	for (uint64_t id = 1; id <= 64; id++) {
		char what[96];
		snprintf(what, sizeof(what),
		    "another connection's in_buffer %llu",
		    (unsigned long long) id);
		bad += exec_expect(
		    what, rs, plan, id, 0, 0, 0, 0, FFTD_EINVAL, 0);
		snprintf(what, sizeof(what),
		    "another connection's out_buffer %llu",
		    (unsigned long long) id);
		bad += exec_expect(
		    what, rs, plan, 0, 0, id, 0, 256, FFTD_EINVAL, 0);
		snprintf(what, sizeof(what),
		    "another connection's buffer %llu both "
		    "ways",
		    (unsigned long long) id);
		bad += exec_expect(
		    what, rs, plan, id, 0, id, 256, 0, FFTD_EINVAL, 0);
		int st = raw_release(rs, id);
		if (st != FFTD_EINVAL) {
			print_error("BufferRelease of buffer %llu of another "
			            "connection: "
			            "%d, want FFTD_EINVAL\n",
			    (unsigned long long) id, st);
			bad++;
		}
	}
	// Not a byte of the first client's buffers changed, and they are
	// still its own to use.
	for (int i = 0; i < 3; i++) {
		const uint8_t *p = fftd_buffer_data(held[i]);
		for (size_t k = 0; k < 65536; k++) {
			if (p[k] != (uint8_t) (0x5a + i)) {
				print_error(
				    "buffer %d changed at byte %zu\n", i, k);
				bad++;
				break;
			}
		}
	}
	fftd_plan  *p1;
	fftd__shape s;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	ASSERT_OK(fftd_plan_create(c1, &pd, &p1));
	uint8_t *in  = fftd_buffer_data(held[0]),
	        *out = fftd_buffer_data(held[2]);
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(77));
	fftd_ref_poison(out, 256);
	assert_int_equal(fftd_execute(p1, in, out), FFTD_OK);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	if (check_vs_ref(&s, out, ref, msg, sizeof(msg))) {
		print_error(
		    "the owner's execution through its buffers: %s\n", msg);
		bad++;
	}
	free(ref);
	// The raw connection's own first buffer gets id 4: ids 1..3 were
	// the other client's, and all of them were refused above.
	uint8_t tok[16], req[24];
	char    path[128];
	assert_int_equal(
	    raw_register(rs, 4096, tok, path, sizeof(path)), FFTD_OK);
	int fd = make_memfd(RAW_MEMFD, 4096, F_SEAL_SHRINK);
	assert_true(fd >= 0);
	fd_request(req, tok, 4096);
	uint64_t own
	    = fd_expect("own buffer", path, req, 24, &fd, 1, 0, FFTD_OK, &bad);
	close(fd);
	assert_int_equal(own, 4);
	bad += exec_expect(
	    "own buffer, both ways", rs, plan, own, 0, own, 256, 0, FFTD_OK, 0);
	nng_close(rs);
	fftd_plan_destroy(p1);
	for (int i = 0; i < 3; i++) {
		fftd_buffer_destroy(held[i]);
	}
	fftd_client_close(c1);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
	assert_int_equal(bad, 0);
}

// --- 3b. the raw protocol: ranges, alignment, the descriptor socket
// ------------------------

static void
test_raw_buffers(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const size_t SZ       = 65536;
	int          fds0     = fftd_test_open_fds(D.pid);
	int          rawmaps0 = fftd_test_count_memfd(D.pid, RAW_MEMFD);
	assert_true(fds0 > 0);
	assert_int_equal(rawmaps0, 0);
	nng_socket rs;
	raw_connect(&rs, D.url);
	fftd_plan_desc pd;
	int64_t        n16 = 16, n8k = 8192;
	uint64_t       ib, ob;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_C2C, FFTD_F64), 0);
	uint64_t p16 = raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 256);
	assert_int_equal(ob, 256);
	fftd__shape s16;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s16, msg, sizeof(msg)), FFTD_OK);
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n8k, FFTD_C2C, FFTD_F64), 0);
	uint64_t pbig = raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 131072); // more than the whole buffer
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n16, FFTD_R2C, FFTD_F32), 0);
	uint64_t pr2c = raw_plan(rs, &pd, &ib, &ob);
	assert_int_equal(ib, 64); // 16 f32 reals, 4 bytes each
	assert_int_equal(ob, 72); // 9 f32 complex, 8 bytes each

	int     bad = 0;
	uint8_t tok[16], req[24];
	char    path[128];
	// A well-formed registration, as libfftd does it.
	assert_int_equal(
	    raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	int fd = make_memfd(RAW_MEMFD, SZ, F_SEAL_SHRINK | F_SEAL_GROW);
	assert_true(fd >= 0);
	uint8_t *mem
	    = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	fd_request(req, tok, SZ);
	uint64_t A = fd_expect(
	    "sealed memfd", path, req, 24, &fd, 1, 0, FFTD_OK, &bad);
	assert_true(A != 0);
	assert_int_equal(fftd_test_count_memfd(D.pid, RAW_MEMFD), 1);
	fd_expect("the same token again", path, req, 24, &fd, 1, 0, FFTD_EINVAL,
	    &bad);
	close(fd);

	// Executions on it: the daemon works in our pages.
	fftd_ref_fill_input(mem, &s16, fftd_test_case_seed(900));
	long double *ref = fftd_ref_transform(&s16, mem);
	assert_non_null(ref);
	fftd_ref_poison(mem + 256, SZ - 256);
	bad += exec_expect(
	    "in and out in the buffer", rs, p16, A, 0, A, 256, 0, FFTD_OK, 0);
	if (check_vs_ref(&s16, mem + 256, ref, msg, sizeof(msg))) {
		print_error("raw buffer result: %s\n", msg);
		bad++;
	}
	for (size_t k = 512; k < SZ; k++) {
		if (mem[k] != 0xFF) {
			print_error(
			    "raw buffer: byte %zu past the output changed\n",
			    k);
			bad++;
			break;
		}
	}
	bad += exec_expect(
	    "in place in the buffer", rs, p16, A, 0, A, 0, 0, FFTD_OK, 0);
	if (check_vs_ref(&s16, mem, ref, msg, sizeof(msg))) {
		print_error("raw buffer in place: %s\n", msg);
		bad++;
	}
	free(ref);
	// In and out overlapping, neither equal nor apart: the input is read
	// whole before the output is written.
	fftd_ref_fill_input(mem, &s16, fftd_test_case_seed(901));
	ref = fftd_ref_transform(&s16, mem);
	assert_non_null(ref);
	bad += exec_expect(
	    "in and out overlapping", rs, p16, A, 0, A, 128, 0, FFTD_OK, 0);
	if (check_vs_ref(&s16, mem + 128, ref, msg, sizeof(msg))) {
		print_error("raw buffer, overlapping in and out: %s\n", msg);
		bad++;
	}
	free(ref);
	// Ranges of the input (plan input 256 bytes, elements of 16).
	bad += exec_expect(
	    "in at the very end", rs, p16, A, SZ - 256, 0, 0, 0, FFTD_OK, 256);
	bad += exec_expect(
	    "in at an element offset", rs, p16, A, 16, 0, 0, 0, FFTD_OK, 256);
	bad += exec_expect("in 16 bytes past the end", rs, p16, A, SZ - 240, 0,
	    0, 0, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "in at the buffer's size", rs, p16, A, SZ, 0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("in far past the end", rs, p16, A,
	    (uint64_t) 1 << 40, 0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("in offset 2^64 - 256", rs, p16, A, UINT64_MAX - 255,
	    0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("in offset 2^64 - 1", rs, p16, A, UINT64_MAX, 0, 0,
	    0, FFTD_EINVAL, 0);
	bad += exec_expect("in offset 8 (half an element)", rs, p16, A, 8, 0, 0,
	    0, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "in offset 1", rs, p16, A, 1, 0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("input in the buffer and inline", rs, p16, A, 0, 0,
	    0, 256, FFTD_EPROTO, 0);
	bad += exec_expect("input in the buffer and 100 bytes inline", rs, p16,
	    A, 0, 0, 0, 100, FFTD_EPROTO, 0);
	bad += exec_expect("input in the buffer and inline, out in it too", rs,
	    p16, A, 0, A, 256, 256, FFTD_EPROTO, 0);
	// Ranges of the output.
	bad += exec_expect(
	    "out at the very end", rs, p16, 0, 0, A, SZ - 256, 256, FFTD_OK, 0);
	bad += exec_expect("out 128 bytes past the end", rs, p16, 0, 0, A,
	    SZ - 128, 256, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "out offset 24", rs, p16, 0, 0, A, 24, 256, FFTD_EINVAL, 0);
	bad += exec_expect("out offset 2^64 - 128", rs, p16, 0, 0, A,
	    UINT64_MAX - 127, 256, FFTD_EINVAL, 0);
	bad += exec_expect("out in the buffer, 100-byte inline input", rs, p16,
	    0, 0, A, 0, 100, FFTD_ESIZE, 0);
	bad += exec_expect("in in the buffer, out in no buffer", rs, p16, A, 0,
	    A + 1000, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "in in no buffer", rs, p16, A + 1000, 0, 0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("unknown plan on a good buffer", rs, 0xdeadbeef, A,
	    0, A, 256, 0, FFTD_ENOPLAN, 0);
	// An array longer than the whole buffer.
	bad += exec_expect("128 KiB input in a 64 KiB buffer", rs, pbig, A, 0,
	    0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect("128 KiB output in a 64 KiB buffer", rs, pbig, 0, 0,
	    A, 0, 131072, FFTD_EINVAL, 0);
	// Element sizes per side: f32 reals in, f32 complex out.
	bad += exec_expect(
	    "r2c in offset 2", rs, pr2c, A, 2, 0, 0, 0, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "r2c in offset 4", rs, pr2c, A, 4, 0, 0, 0, FFTD_OK, 72);
	bad += exec_expect(
	    "r2c out offset 4", rs, pr2c, 0, 0, A, 4, 64, FFTD_EINVAL, 0);
	bad += exec_expect(
	    "r2c out offset 8", rs, pr2c, 0, 0, A, 8, 64, FFTD_OK, 0);
	bad += exec_expect(
	    "r2c in 4 + out 1000", rs, pr2c, A, 4, A, 1000, 0, FFTD_OK, 0);

	// The descriptor socket's refusals.
	uint8_t unknown[16];
	for (int i = 0; i < 16; i++) {
		unknown[i] = (uint8_t) (i * 37 + 11);
	}
	int sealed = make_memfd(RAW_MEMFD, SZ, F_SEAL_SHRINK);
	int half   = make_memfd(RAW_MEMFD, SZ / 2, F_SEAL_SHRINK);
	int loose  = make_memfd(RAW_MEMFD, SZ, 0);
	int pp[2];
	assert_true(sealed >= 0 && half >= 0 && loose >= 0);
	assert_int_equal(pipe(pp), 0);
	fd_request(req, unknown, SZ);
	fd_expect(
	    "unknown token", path, req, 24, &sealed, 1, 0, FFTD_EINVAL, &bad);
	fd_expect(
	    "no descriptor", path, req, 24, NULL, 0, 0, FFTD_EPROTO, &bad);
	int two[2] = { sealed, half };
	fd_expect(
	    "two descriptors", path, req, 24, two, 2, 0, FFTD_EPROTO, &bad);
	fd_expect("a 10-byte request", path, req, 10, &sealed, 1, 1,
	    FFTD_EPROTO, &bad);
	assert_int_equal(
	    raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fd_request(req, tok, SZ);
	fd_expect("memfd without F_SEAL_SHRINK", path, req, 24, &loose, 1, 0,
	    FFTD_EINVAL, &bad);
	fd_expect("its token, spent by the refusal", path, req, 24, &sealed, 1,
	    0, FFTD_EINVAL, &bad);
	assert_int_equal(
	    raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fd_request(req, tok, SZ / 2);
	fd_expect(
	    "wrong byte count", path, req, 24, &half, 1, 0, FFTD_EINVAL, &bad);
	// Another process with this connection's token and the right count.
	{
		char hex[33], bytes[32];
		for (int i = 0; i < 16; i++) {
			snprintf(hex + 2 * i, 3, "%02x", tok[i]);
		}
		snprintf(bytes, sizeof(bytes), "%zu", SZ);
		const char *args[] = { path, hex, bytes, NULL };
		pid_t       pid    = fftd_test_spawn("fdsend", args);
		assert_true(pid > 0);
		int code = -1;
		fftd_test_wait_pids(&pid, 1, 20000, &code);
		if (code != 10 + FFTD_EINVAL) {
			print_error(
			    "another process's send with our token: exit %d, "
			    "want %d (FFTD_EINVAL)\n",
			    code, 10 + FFTD_EINVAL);
			bad++;
		}
	}
	assert_int_equal(
	    raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fd_request(req, tok, SZ);
	fd_expect("a memfd smaller than the count", path, req, 24, &half, 1, 0,
	    FFTD_EINVAL, &bad);
	assert_int_equal(
	    raw_register(rs, SZ, tok, path, sizeof(path)), FFTD_OK);
	fd_request(req, tok, SZ);
	fd_expect("a pipe", path, req, 24, &pp[0], 1, 0, FFTD_EINVAL, &bad);
	close(sealed);
	close(half);
	close(loose);
	close(pp[0]);
	close(pp[1]);
	int st = raw_register(rs, 0, tok, path, sizeof(path));
	if (st != FFTD_EINVAL) {
		print_error(
		    "BufferRegister of 0 bytes: %d, want FFTD_EINVAL\n", st);
		bad++;
	}
	st = raw_register(rs, (uint64_t) 1 << 62, tok, path, sizeof(path));
	if (st != FFTD_ELIMIT) {
		print_error(
		    "BufferRegister of 2^62 bytes: %d, want FFTD_ELIMIT\n", st);
		bad++;
	}
	// None of the refused descriptors stayed mapped.
	if (fftd_test_count_memfd(D.pid, RAW_MEMFD) != 1) {
		print_error("daemon maps %d of our memfds, want 1\n",
		    fftd_test_count_memfd(D.pid, RAW_MEMFD));
		bad++;
	}

	// Release: then the id is gone.
	assert_int_equal(raw_release(rs, A), FFTD_OK);
	assert_int_equal(fftd_test_count_memfd(D.pid, RAW_MEMFD), 0);
	bad += exec_expect(
	    "a released buffer", rs, p16, A, 0, 0, 0, 0, FFTD_EINVAL, 0);
	assert_int_equal(raw_release(rs, A), FFTD_EINVAL);
	assert_int_equal(raw_release(rs, 0), FFTD_EINVAL);
	bad += exec_expect(
	    "inline after it all", rs, p16, 0, 0, 0, 0, 256, FFTD_OK, 256);
	nng_close(rs);
	munmap(mem, SZ);
	// The daemon kept no descriptor of all this, and still serves.
	assert_int_equal(
	    fftd_test_daemon_settles(D.pid, 0, fds0, C, 1, SETTLE_MS), 0);
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(bad, 0);
}

// --- 4. lifetime
// ------------------------------------------------------------------------------

#define HOLD_BYTES (8u << 20)

// holder URL FD: three 8 MiB buffers and a stream with two executions
// submitted; says 'R' on FD, then waits to be killed.
static int
role_holder(int argc, char **argv)
{
	if (argc < 2) {
		return 100;
	}
	int          fd = atoi(argv[1]);
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
		return 101;
	}
	fftd_buffer *b[3];
	for (int i = 0; i < 3; i++) {
		if (fftd_buffer_create(c, HOLD_BYTES, &b[i]) != FFTD_OK) {
			return 102;
		}
		memset(fftd_buffer_data(b[i]), i + 1, HOLD_BYTES);
	}
	fftd_plan_desc d;
	int64_t        n = 4096;
	fftd_plan     *p;
	fftd_stream   *st;
	fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32);
	d.batch = 16;
	if (fftd_plan_create(c, &d, &p) != FFTD_OK
	    || fftd_stream_open(p, 2, &st) != FFTD_OK) {
		return 103;
	}
	for (int i = 0; i < 2; i++) {
		memset(fftd_stream_input(st), 0, fftd_plan_input_bytes(p));
		if (fftd_stream_submit(st, NULL) != FFTD_OK) {
			return 104;
		}
	}
	if (write(fd, "R", 1) != 1) {
		return 105;
	}
	for (;;) {
		pause();
	}
}

// run_through_buffer checks that c's daemon still serves a transform
// through a fresh shared buffer.
static int
run_through_buffer(fftd_client *c)
{
	fftd_plan_desc d;
	int64_t        n = 100;
	fftd__shape    s;
	char           msg[256];
	fftd_plan     *p   = NULL;
	fftd_buffer   *b   = NULL;
	int            bad = 0;
	fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64);
	d.batch = 3;
	if (fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)) != FFTD_OK
	    || fftd_plan_create(c, &d, &p) != FFTD_OK
	    || fftd_buffer_create(c, 65536, &b) != FFTD_OK) {
		print_error("no plan or buffer: %s\n", fftd_last_error());
		fftd_plan_destroy(p);
		return 1;
	}
	uint8_t *in = fftd_buffer_data(b), *out = in + 32768;
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(4242));
	fftd_ref_poison(out, (size_t) s.out.bytes);
	int          st  = fftd_execute(p, in, out);
	long double *ref = fftd_ref_transform(&s, in);
	if (st != FFTD_OK || ref == NULL
	    || check_vs_ref(&s, out, ref, msg, sizeof(msg))) {
		print_error("transform through a buffer: %s %s\n",
		    fftd_err_name(st), msg);
		bad = 1;
	}
	free(ref);
	fftd_buffer_destroy(b);
	fftd_plan_destroy(p);
	return bad;
}

static void
test_killed_holder(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_stats s0;
	assert_int_equal(fftd_get_stats(C, &s0), FFTD_OK);
	int maps0 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME),
	    fds0  = fftd_test_open_fds(D.pid);
	assert_true(maps0 >= 0);
	assert_true(fds0 > 0);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char fdarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	const char *args[] = { D.url, fdarg, NULL };
	pid_t       pid    = fftd_test_spawn("holder", args);
	assert_true(pid > 0);
	close(fds[1]);
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	char          ch  = 0;
	int ready = poll(&pfd, 1, 30000) == 1 && read(fds[0], &ch, 1) == 1
	    && ch == 'R';
	close(fds[0]);
	int        maps1 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME);
	int        alive = kill(pid, 0) == 0;
	fftd_stats s1;
	int        srv = fftd_get_stats(C, &s1);
	kill(pid, SIGKILL);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(ready);
	assert_true(alive);
	assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
	// While it lived the daemon mapped its three buffers and its stream's.
	if (maps1 != maps0 + 4) {
		print_error(
		    "daemon maps %d libfftd memfds with the holder alive, want "
		    "%d\n",
		    maps1, maps0 + 4);
	}
	assert_int_equal(maps1, maps0 + 4);
	assert_int_equal(srv, FFTD_OK);
	assert_int_equal(s1.sessions, s0.sessions + 1);
	// Then it lets go of all of it.
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(run_through_buffer(C), 0);
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
}

static void
test_destroy_and_close(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_stats s0;
	assert_int_equal(fftd_get_stats(C, &s0), FFTD_OK);
	int maps0 = fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME),
	    fds0  = fftd_test_open_fds(D.pid);
	int own0  = fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME);
	assert_true(maps0 >= 0 && fds0 > 0 && own0 >= 0);
	fftd_client *c;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	fftd_buffer *b[3];
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_buffer_create(c, HOLD_BYTES, &b[i]));
		memset(fftd_buffer_data(b[i]), 0x33, HOLD_BYTES);
	}
	assert_int_equal(
	    fftd_test_count_memfd(D.pid, FFTD_TEST_MEMFD_NAME), maps0 + 3);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0 + 3);
	// A normal destroy unmaps it on both sides.
	fftd_buffer_destroy(b[1]);
	assert_int_equal(fftd_test_daemon_settles(D.pid, maps0 + 2, -1, C,
	                     s0.sessions + 1, SETTLE_MS),
	    0);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0 + 2);
	// Closing the client with two buffers still held releases them in
	// the daemon, and the connection's descriptor.
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_settles(
	                     D.pid, maps0, fds0, C, s0.sessions, SETTLE_MS),
	    0);
	// The handles are still released here, as plans are after a close.
	fftd_buffer_destroy(b[0]);
	fftd_buffer_destroy(b[2]);
	assert_int_equal(
	    fftd_test_count_memfd(getpid(), FFTD_TEST_MEMFD_NAME), own0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(run_through_buffer(C), 0);
}

// --- 5. the per-client buffer limit
// ----------------------------------------------------------

static void
test_buffer_limit(void **state)
{
	(void) state;
	static const char conf[]
	    = "# test_shm: a 1 MiB shared-memory allowance\n"
	      "[limits]\n"
	      "max_buffer_bytes = 1M\n";
	fftd_test_daemon *d = &L;
	assert_int_equal(fftd_test_daemon_start(d, conf, DAEMON_ARGS), 0);
	fftd_client *c, *c2;
	ASSERT_OK(fftd_client_open(&c, d->url, TIMEOUT_MS));
	fftd_buffer *b1, *b2, *b3, *x;
	assert_int_equal(fftd_buffer_create(c, 2u << 20, &x), FFTD_ELIMIT);
	assert_true(fftd_last_error()[0] != '\0');
	assert_int_equal(
	    fftd_buffer_create(c, (1u << 20) + 1, &x), FFTD_ELIMIT);
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b1));
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b2)); // = limit
	assert_int_equal(fftd_buffer_create(c, 1, &x), FFTD_ELIMIT);
	fftd_plan_desc pd;
	int64_t        n = 1024;
	fftd_plan     *p;
	fftd_stream   *st;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F64), 0);
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	assert_int_equal(fftd_stream_open(p, 1, &st), FFTD_ELIMIT);
	// The allowance is per connection.
	ASSERT_OK(fftd_client_open(&c2, d->url, TIMEOUT_MS));
	ASSERT_OK(fftd_buffer_create(c2, 1u << 20, &x));
	fftd_buffer_destroy(x);
	fftd_client_close(c2);
	// Destroying gives the bytes back.
	fftd_buffer_destroy(b1);
	ASSERT_OK(fftd_buffer_create(c, 512u << 10, &b3));
	assert_int_equal(fftd_buffer_create(c, 1, &x), FFTD_ELIMIT);
	fftd__shape s;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&pd, NULL, &s, msg, sizeof(msg)), FFTD_OK);
	uint8_t *in = fftd_buffer_data(b2), *out = fftd_buffer_data(b3);
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(31));
	fftd_ref_poison(out, (size_t) s.out.bytes);
	assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	int rc = check_vs_ref(&s, out, ref, msg, sizeof(msg));
	free(ref);
	assert_int_equal(rc, 0);
	fftd_buffer_destroy(b2);
	fftd_buffer_destroy(b3);
	ASSERT_OK(fftd_buffer_create(c, 1u << 20, &x));
	fftd_buffer_destroy(x);
	ASSERT_OK(fftd_stream_open(p, 4, &st)); // 4 x 32 KiB
	fftd_stream_close(st);

	// Over the raw protocol: a refused hand-over gives its bytes back.
	nng_socket rs;
	raw_connect(&rs, d->url);
	uint8_t tok[16], req[24];
	char    path[128];
	int     bad = 0;
	// A pending token's bytes are promised: nothing more fits.
	assert_int_equal(
	    raw_register(rs, 1u << 20, tok, path, sizeof(path)), FFTD_OK);
	assert_int_equal(
	    raw_register(rs, 4096, tok, path, sizeof(path)), FFTD_ELIMIT);
	nng_close(rs);
	raw_connect(&rs, d->url);
	assert_int_equal(
	    raw_register(rs, 1u << 20, tok, path, sizeof(path)), FFTD_OK);
	int loose = make_memfd(RAW_MEMFD, 1u << 20, 0);
	assert_true(loose >= 0);
	fd_request(req, tok, 1u << 20);
	fd_expect(
	    "unsealed memfd", path, req, 24, &loose, 1, 0, FFTD_EINVAL, &bad);
	close(loose);
	assert_int_equal(
	    raw_register(rs, 1u << 20, tok, path, sizeof(path)), FFTD_OK);
	int sealed = make_memfd(RAW_MEMFD, 1u << 20, F_SEAL_SHRINK);
	assert_true(sealed >= 0);
	fd_request(req, tok, 1u << 20);
	uint64_t id = fd_expect(
	    "sealed memfd", path, req, 24, &sealed, 1, 0, FFTD_OK, &bad);
	close(sealed);
	assert_int_equal(
	    raw_register(rs, 4096, tok, path, sizeof(path)), FFTD_ELIMIT);
	assert_int_equal(raw_release(rs, id), FFTD_OK);
	assert_int_equal(
	    raw_register(rs, 1u << 20, tok, path, sizeof(path)), FFTD_OK);
	nng_close(rs);
	fftd_plan_destroy(p);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
	assert_int_equal(bad, 0);
}

// --- 6. tcp://
// --------------------------------------------------------------------------------

// free_port returns a TCP port on 127.0.0.1 that was free a moment ago.
static int
free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		return -1;
	}
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr    = htonl(INADDR_LOOPBACK);
	socklen_t len        = sizeof(a);
	int       port       = -1;
	if (bind(s, (struct sockaddr *) &a, sizeof(a)) == 0
	    && getsockname(s, (struct sockaddr *) &a, &len) == 0) {
		port = ntohs(a.sin_port);
	}
	close(s);
	return port;
}

static void
test_tcp_unsupported(void **state)
{
	(void) state;
	fftd_test_daemon *d = &L;
	char              url[64];
	int               started = -1;
	for (int tries = 0; tries < 3 && started != 0; tries++) {
		int port = free_port();
		assert_true(port > 0);
		snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
		const char *args[] = { "--backend", "fftw", "--log-level",
			"info", "--listen", url, NULL };
		started            = fftd_test_daemon_start(
		               d, "[remote]\nallow_insecure = yes\n", args);
	}
	assert_int_equal(started, 0);
	fftd_client *c;
	ASSERT_OK(fftd_client_open(&c, url, TIMEOUT_MS));
	fftd_buffer *b = NULL;
	assert_int_equal(fftd_buffer_create(c, 4096, &b), FFTD_EUNSUPPORTED);
	assert_true(fftd_last_error()[0] != '\0');
	assert_null(b);
	fftd_plan_desc pd;
	int64_t        n = 64;
	fftd_plan     *p;
	fftd_stream   *st = NULL;
	assert_int_equal(
	    fftd_plan_desc_init(&pd, 1, &n, FFTD_C2C, FFTD_F32), 0);
	ASSERT_OK(fftd_plan_create(c, &pd, &p));
	assert_int_equal(fftd_stream_open(p, 2, &st), FFTD_EUNSUPPORTED);
	assert_null(st);
	fftd_plan_destroy(p);
	// Inline transforms over tcp:// still work.
	fftd_test_case tc;
	memset(&tc, 0, sizeof(tc));
	snprintf(tc.name, sizeof(tc.name), "c2c f32 64 over tcp");
	tc.desc = pd;
	assert_int_equal(
	    fftd_test_run_case(c, &tc, fftd_test_case_seed(64)), 0);
	// The daemon itself refuses shared memory on a tcp pipe.
	nng_socket rs;
	raw_connect(&rs, url);
	uint8_t tok[16];
	char    path[128];
	int     rv = raw_register(rs, 4096, tok, path, sizeof(path));
	nng_close(rs);
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	// The same daemon's ipc:// socket offers it.
	fftd_client *ci;
	ASSERT_OK(fftd_client_open(&ci, d->url, TIMEOUT_MS));
	ASSERT_OK(fftd_buffer_create(ci, 4096, &b));
	fftd_buffer_destroy(b);
	fftd_client_close(ci);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(d), 0);
}

// The shared daemon, after everything above, maps no buffer, holds one
// session, and exits 0 on SIGTERM (under ASan: no leaks).
static void
test_shared_daemon_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_int_equal(fftd_test_daemon_settles(D.pid, 0, -1, C, 1, 5000), 0);
	assert_int_equal(fftd_test_count_memfd(D.pid, RAW_MEMFD), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

static const fftd_test_role roles[] = {
	{ "holder", role_holder },
	{ "fdsend", role_fdsend },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	// libfftd stages large inline arrays through shared buffers of its
	// own; keep the inline path inline, so that it is the reference.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bit_identical),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_stream_channel),
		cmocka_unit_test_teardown(
		    test_isolation, fftd_test_local_teardown),
		cmocka_unit_test(test_raw_buffers),
		cmocka_unit_test(test_killed_holder),
		cmocka_unit_test(test_destroy_and_close),
		cmocka_unit_test_teardown(
		    test_buffer_limit, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_tcp_unsupported, fftd_test_local_teardown),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("shm", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_shm_bits.c — shared-memory buffers give the inline path's bits, against
// a real `fftd --backend fftw`:
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
//     unwritten.
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
#include "../util/shm_raw.h"
#include "wire.h"

#define TIMEOUT_MS 60000
#define BUF_X (4u << 20) // the test's two shared buffers
#define BUF_Y (2u << 20)

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

// align64 rounds n up to a multiple of 64 (the aligned offsets).
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
			fftd_test_check_vs_ref(
			    s, out, mref, ref_why, sizeof(ref_why));
			MODE_ERROR(m,
			    "%s: %s: output differs from the inline path's at "
			    "byte "
			    "%zu of %zu (%s)\n",
			    tc->name, mode_name[m], k, out_len, ref_why);
		} else if (fftd_test_check_vs_ref(
		               s, out, mref, why, sizeof(why))) {
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
		cmocka_unit_test(test_bit_identical),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("shm_bits", tests, &FX);
}

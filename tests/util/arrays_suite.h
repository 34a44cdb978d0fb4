// SPDX-License-Identifier: MIT
//
// arrays_suite.h — PRIVATE to fftd's tests. What tests/integration/
// test_arrays.c (fftw backend) and tests/gpu/test_gpu_arrays.c (cuda
// backend) both check of resident arrays (fftd_array_*, issue 16):
//   - round trips: fresh arrays read back as zeros; random bytes written at
//     odd offsets and lengths, from the heap (inline, or through libfftd's
//     staging buffers) and from a shared buffer (by reference), read back
//     the same through each path; spans past the end are FFTD_ESIZE;
//   - executions on arrays, C2C/R2C/C2R x f32/f64, rank 1 and 2, at
//     element-aligned offsets that are not 64-byte aligned: the output
//     read back matches the long double FFTW reference within
//     fftd_ref_bound (ref.h: 16 eps log2 N; 1.8e-14 at N = 1024 in f64,
//     9.5e-6 in f32), every output element written over a NaN poison, the
//     bytes around the output span untouched, the input span unchanged
//     (C2C, R2C);
//   - a chain of three executions, each one's output array the next one's
//     input, with nothing read back in between: forward, inverse by 1/N,
//     forward again reproduce the first transform and the input within
//     the bound;
//   - the device's memory in use (fftd_device_stats.memory_used_bytes)
//     back to its level after a client holding arrays is SIGKILLed
//     (arrays_role_holder, arrays_killed_holder).
// Header-only (static functions, cmocka), as transform_suite.h; include it
// from one test program after <cmocka.h>.

#ifndef FFTD_TESTS_ARRAYS_SUITE_H
#define FFTD_TESTS_ARRAYS_SUITE_H

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "cases.h"
#include "check.h"
#include "fftd.h"
#include "layout.h"
#include "ref.h"

#define ARRAYS_HOLD_BYTES ((size_t) 4 << 20) // per array of the holder
#define ARRAYS_HOLD_COUNT 3

// arrays_fill_random fills n bytes with a xorshift64* stream from seed.
static void
arrays_fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed | 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		p[i] = (uint8_t) ((x * 0x2545F4914F6CDD1Dull) >> 56);
	}
}

// arrays_stat picks one of a device's statistics for arrays_device_stat
// and arrays_wait_stat.
typedef enum arrays_stat {
	ARRAYS_MEMORY_USED,  // memory_used_bytes
	ARRAYS_IPC_MAPPINGS, // ipc_mappings
} arrays_stat;

// arrays_device_stat is device dev's statistic st as the daemon reports it
// (fftd_device_stats).
static uint64_t
arrays_device_stat(fftd_client *c, int dev, arrays_stat st)
{
	fftd_device_stats dv[FFTD_MAX_DEVICES];
	int               n = 0;
	ASSERT_OK(fftd_get_device_stats(c, dv, FFTD_MAX_DEVICES, &n));
	assert_true(dev < n);
	return st == ARRAYS_IPC_MAPPINGS ? dv[dev].ipc_mappings
	                                 : dv[dev].memory_used_bytes;
}

// arrays_memory_used is device dev's memory in use as the daemon reports
// it (fftd_device_stats.memory_used_bytes).
static uint64_t
arrays_memory_used(fftd_client *c, int dev)
{
	return arrays_device_stat(c, dev, ARRAYS_MEMORY_USED);
}

// arrays_settled_memory is device dev's memory in use once it holds
// still for 50 ms (at most 2 s): fftd_array_destroy does not wait, so an
// earlier test's last destroy may still be on its way.
static uint64_t
arrays_settled_memory(fftd_client *c, int dev)
{
	uint64_t m0 = arrays_memory_used(c, dev);
	for (int i = 0; i < 40; i++) {
		fftd_test_sleep_ms(50);
		uint64_t m = arrays_memory_used(c, dev);
		if (m == m0) {
			break;
		}
		m0 = m;
	}
	return m0;
}

// arrays_wait_stat waits (at most ms) until device dev's statistic st is
// want; returns 0, or -1 printing what it saw last. The daemon counts
// after each job, so a reply may come a moment before the count moves.
static int
arrays_wait_stat(fftd_client *c, int dev, arrays_stat st, uint64_t want, int ms)
{
	uint64_t got = 0;
	for (int waited = 0; waited <= ms; waited += 10) {
		if ((got = arrays_device_stat(c, dev, st)) == want) {
			return 0;
		}
		fftd_test_sleep_ms(10);
	}
	printf("device %d: %llu %s, want %llu\n", dev, (unsigned long long) got,
	    st == ARRAYS_IPC_MAPPINGS ? "IPC mappings" : "bytes in use",
	    (unsigned long long) want);
	return -1;
}

// arrays_wait_memory waits (at most ms) until device dev's memory in use
// is want; returns 0, or -1 printing what it saw last.
static int
arrays_wait_memory(fftd_client *c, int dev, uint64_t want, int ms)
{
	return arrays_wait_stat(c, dev, ARRAYS_MEMORY_USED, want, ms);
}

// arrays_check_span reads [off, off + len) of a into a scratch array and
// compares it with want.
static void
arrays_check_span(fftd_array *a, size_t off, const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len ? len : 1);
	assert_non_null(got);
	memset(got, 0xA5, len);
	ASSERT_OK(fftd_array_read(a, off, got, len));
	if (len != 0 && memcmp(got, want, len) != 0) {
		size_t i = 0;
		while (got[i] == want[i]) {
			i++;
		}
		fail_msg("array bytes differ at %zu (of %zu at offset %zu): "
		         "%02x, want %02x",
		    i, len, off, got[i], want[i]);
	}
	free(got);
}

// arrays_round_trips runs the round trips on a fresh array of device dev,
// through client c (whose shared buffers go by reference; staging as c
// was opened with).
static void
arrays_round_trips(fftd_client *c, int dev, uint64_t seed)
{
	const size_t bytes = ((size_t) 1 << 20) + 13;
	fftd_array  *a;
	fftd_buffer *b;
	ASSERT_OK(fftd_array_create(c, dev, bytes, &a));
	assert_int_equal(fftd_array_size(a), bytes);
	assert_int_equal(fftd_array_device(a), dev < 0 ? 0 : dev);
	ASSERT_OK(fftd_buffer_create(c, (size_t) 4 << 20, &b));
	uint8_t *mirror = calloc(1, bytes), *src = malloc(bytes);
	uint8_t *sh = fftd_buffer_data(b);
	assert_non_null(mirror);
	assert_non_null(src);
	arrays_check_span(a, 0, mirror, bytes); // zero-filled
	// Spans and where their bytes come from: 0 heap, 1 shared buffer.
	static const struct {
		size_t off, len;
		int    shared;
		size_t boff; // offset in the shared buffer
	} cases[] = {
		{ 0, 100, 0, 0 },
		{ 1, 4093, 0, 0 },
		{ ((size_t) 1 << 20) + 6, 7, 0, 0 },
		{ 12345, 300000, 0, 0 }, // staged when c stages
		{ 3, ((size_t) 1 << 20) + 10, 1, 777 },
		{ 524287, 70001, 1, 3 },
		{ 99, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *from = cases[i].shared ? sh + cases[i].boff : src;
		arrays_fill_random(from, cases[i].len, seed + i);
		ASSERT_OK(
		    fftd_array_write(a, cases[i].off, from, cases[i].len));
		memcpy(mirror + cases[i].off, from, cases[i].len);
		// Read back the whole array from the heap, and through the
		// shared buffer, and the span alone.
		arrays_check_span(a, 0, mirror, bytes);
		memset(sh + 64, 0x5A, bytes);
		ASSERT_OK(fftd_array_read(a, 0, sh + 64, bytes));
		assert_memory_equal(sh + 64, mirror, bytes);
		arrays_check_span(
		    a, cases[i].off, mirror + cases[i].off, cases[i].len);
	}
	assert_int_equal(fftd_array_write(a, bytes - 5, src, 6), FFTD_ESIZE);
	assert_int_equal(fftd_array_read(a, bytes + 1, src, 0), FFTD_ESIZE);
	assert_int_equal(fftd_array_read(a, 0, NULL, 5), FFTD_EINVAL);
	arrays_check_span(a, 0, mirror, bytes);
	fftd_array_destroy(a);
	fftd_buffer_destroy(b);
	free(mirror);
	free(src);
}

// arrays_alloc_poison makes an array of bytes on dev filled with 0xFF
// (a NaN in every precision).
static fftd_array *
arrays_alloc_poison(fftd_client *c, int dev, size_t bytes)
{
	fftd_array *a;
	uint8_t    *p = malloc(bytes);
	assert_non_null(p);
	memset(p, 0xFF, bytes);
	ASSERT_OK(fftd_array_create(c, dev, bytes, &a));
	ASSERT_OK(fftd_array_write(a, 0, p, bytes));
	free(p);
	return a;
}

// arrays_exec_one executes d on arrays of device dev (input at an odd
// element offset, output beside poison) and checks the output against the
// reference and the bytes around it.
static void
arrays_exec_one(fftd_client *c, int dev, const fftd_plan_desc *d, uint64_t seed)
{
	fftd__shape s;
	char        msg[256], name[160];
	fftd_test_describe(d, name, sizeof(name));
	assert_int_equal(fftd__shape_resolve(d, NULL, &s, msg, sizeof(msg)), 0);
	size_t     in_off = 3 * s.in.elem_size, out_off = 5 * s.out.elem_size;
	size_t     in_len  = in_off + s.in.bytes + 40;
	size_t     out_len = out_off + s.out.bytes + 40;
	fftd_plan *p;
	ASSERT_OK(fftd_plan_create(c, d, &p));
	uint8_t *in = malloc(s.in.bytes), *out = malloc(out_len);
	uint8_t *in_back = malloc(s.in.bytes);
	assert_true(in && out && in_back);
	fftd_ref_fill_input(in, &s, seed);
	fftd_array *ain  = arrays_alloc_poison(c, dev, in_len);
	fftd_array *aout = arrays_alloc_poison(c, dev, out_len);
	ASSERT_OK(fftd_array_write(ain, in_off, in, s.in.bytes));
	int rv = fftd_execute_arrays(p, ain, in_off, aout, out_off);
	if (rv != FFTD_OK) {
		fail_msg(
		    "%s: %s: %s", name, fftd_err_name(rv), fftd_last_error());
	}
	ASSERT_OK(fftd_array_read(aout, 0, out, out_len));
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	double err   = fftd_ref_rel_l2(&s, out + out_off, ref);
	double bound = fftd_ref_bound(&s);
	size_t unw   = fftd_ref_unwritten(&s, out + out_off);
	if (!(err <= bound) || unw != 0) {
		fail_msg("%s on arrays: error %.3g (bound %.3g), %zu unwritten",
		    name, err, bound, unw);
	}
	for (size_t i = 0; i < out_off; i++) {
		assert_int_equal(out[i], 0xFF); // before the span
	}
	for (size_t i = out_off + s.out.bytes; i < out_len; i++) {
		assert_int_equal(out[i], 0xFF); // after it
	}
	if (s.kind != FFTD_C2R) { // C2R may overwrite its input
		ASSERT_OK(fftd_array_read(ain, in_off, in_back, s.in.bytes));
		assert_memory_equal(in_back, in, s.in.bytes);
	}
	free(ref);
	free(in);
	free(out);
	free(in_back);
	fftd_array_destroy(ain);
	fftd_array_destroy(aout);
	fftd_plan_destroy(p);
}

// arrays_exec_all runs arrays_exec_one for every kind and precision (f32,
// f64), rank 1 (N = 1000, batch 3) and rank 2 (12 x 10, batch 2).
static void
arrays_exec_all(fftd_client *c, int dev)
{
	static const fftd_kind      kinds[] = { FFTD_C2C, FFTD_R2C, FFTD_C2R };
	static const fftd_precision precs[] = { FFTD_F64, FFTD_F32 };
	uint64_t                    k       = 0;
	for (int ki = 0; ki < 3; ki++) {
		for (int pi = 0; pi < 2; pi++) {
			for (int rank = 1; rank <= 2; rank++) {
				int64_t n1[1] = { 1000 }, n2[2] = { 12, 10 };
				fftd_plan_desc d;
				ASSERT_OK(fftd_plan_desc_init(&d, rank,
				    rank == 1 ? n1 : n2, kinds[ki], precs[pi]));
				d.batch = rank == 1 ? 3 : 2;
				if (kinds[ki] == FFTD_C2C && rank == 2) {
					d.direction = FFTD_INVERSE;
					d.norm      = FFTD_NORM_ORTHO;
				}
				arrays_exec_one(
				    c, dev, &d, fftd_test_case_seed(k++));
			}
		}
	}
}

// arrays_chain runs forward, inverse (by 1/N) and forward again on three
// arrays of device dev, each output the next input, reading back only at
// the end: the third output must equal the first transform's reference,
// the second the input.
static void
arrays_chain(fftd_client *c, int dev, uint64_t seed)
{
	int64_t        n = 4096;
	fftd_plan_desc d;
	fftd__shape    s;
	char           msg[256];
	fftd_plan     *fwd, *inv;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	d.batch = 4;
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), 0);
	ASSERT_OK(fftd_plan_create(c, &d, &fwd));
	d.direction = FFTD_INVERSE;
	d.norm      = FFTD_NORM_BY_N;
	ASSERT_OK(fftd_plan_create(c, &d, &inv));
	size_t      nb = s.in.bytes;
	uint8_t    *x = malloc(nb), *y = malloc(nb);
	fftd_array *a, *b;
	assert_true(x && y);
	fftd_ref_fill_input(x, &s, seed);
	ASSERT_OK(fftd_array_create(c, dev, nb, &a));
	ASSERT_OK(fftd_array_create(c, dev, 2 * nb, &b)); // two spans
	ASSERT_OK(fftd_array_write(a, 0, x, nb));
	ASSERT_OK(fftd_execute_arrays(fwd, a, 0, b, 0));  // X = F x
	ASSERT_OK(fftd_execute_arrays(inv, b, 0, b, nb)); // x' = F^-1 X
	ASSERT_OK(fftd_execute_arrays(fwd, b, nb, a, 0)); // X' = F x'
	long double *ref = fftd_ref_transform(&s, x);
	assert_non_null(ref);
	ASSERT_OK(fftd_array_read(a, 0, y, nb));
	double err = fftd_ref_rel_l2(&s, y, ref), bound = fftd_ref_bound(&s);
	if (!(err <= 3 * bound)) {
		fail_msg("chain: third output error %.3g (3 x bound %.3g)", err,
		    3 * bound);
	}
	ASSERT_OK(fftd_array_read(b, nb, y, nb));
	double e2 = 0, n2 = 0;
	for (size_t i = 0; i < nb / 8; i++) {
		double u = ((double *) y)[i], v = ((double *) x)[i];
		e2 += (u - v) * (u - v);
		n2 += v * v;
	}
	if (!(sqrt(e2 / n2) <= 2 * bound)) {
		fail_msg("chain: round trip error %.3g (2 x bound %.3g)",
		    sqrt(e2 / n2), 2 * bound);
	}
	free(ref);
	free(x);
	free(y);
	fftd_array_destroy(a);
	fftd_array_destroy(b);
	fftd_plan_destroy(fwd);
	fftd_plan_destroy(inv);
}

// arrays_role_holder (a child role: URL FD DEVICE) creates
// ARRAYS_HOLD_COUNT arrays of ARRAYS_HOLD_BYTES on DEVICE, writes them,
// says 'R' on FD and waits to be killed.
static int
arrays_role_holder(int argc, char **argv)
{
	if (argc < 3) {
		return 100;
	}
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], 60000) != FFTD_OK) {
		return 101;
	}
	uint8_t *p = malloc(ARRAYS_HOLD_BYTES);
	if (p == NULL) {
		return 102;
	}
	memset(p, 0x42, ARRAYS_HOLD_BYTES);
	for (int i = 0; i < ARRAYS_HOLD_COUNT; i++) {
		fftd_array *a;
		if (fftd_array_create(c, atoi(argv[2]), ARRAYS_HOLD_BYTES, &a)
		        != FFTD_OK
		    || fftd_array_write(a, 0, p, ARRAYS_HOLD_BYTES)
		        != FFTD_OK) {
			return 103;
		}
	}
	if (write(atoi(argv[1]), "R", 1) != 1) {
		return 104;
	}
	for (;;) {
		pause();
	}
}

// arrays_spawn_ready spawns the child role (fftd_test_spawn) with the
// arguments url, the write end of a pipe and extra (NULL: none), and waits
// at most 60 s for the child to say 'R' on the pipe; *ready says whether
// it did. Returns the child's pid.
static pid_t
arrays_spawn_ready(
    const char *role, const char *url, const char *extra, int *ready)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char fdarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	const char *args[] = { url, fdarg, extra, NULL };
	pid_t       pid    = fftd_test_spawn(role, args);
	assert_true(pid > 0);
	close(fds[1]);
	struct pollfd pfd = { fds[0], POLLIN, 0 };
	char          ch  = 0;
	*ready = poll(&pfd, 1, 60000) == 1 && read(fds[0], &ch, 1) == 1
	    && ch == 'R';
	close(fds[0]);
	return pid;
}

// arrays_killed_holder starts a holder on url (device dev), checks that
// the daemon counts its arrays (at least their bytes more in use), kills
// it and waits until device dev's memory in use is back to its level
// (asked through c).
static void
arrays_killed_holder(fftd_client *c, const char *url, int dev)
{
	uint64_t m0 = arrays_memory_used(c, dev);
	char     devarg[16];
	snprintf(devarg, sizeof(devarg), "%d", dev);
	int      ready = 0;
	pid_t    pid   = arrays_spawn_ready("holder", url, devarg, &ready);
	uint64_t m1    = ready ? arrays_memory_used(c, dev) : 0;
	kill(pid, SIGKILL);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(ready);
	printf("device %d: %llu bytes in use before the holder, %llu with "
	       "its arrays\n",
	    dev, (unsigned long long) m0, (unsigned long long) m1);
	assert_true(m1 >= m0 + ARRAYS_HOLD_COUNT * ARRAYS_HOLD_BYTES);
	assert_int_equal(arrays_wait_memory(c, dev, m0, 10000), 0);
}

#endif // FFTD_TESTS_ARRAYS_SUITE_H

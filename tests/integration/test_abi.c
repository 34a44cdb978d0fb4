// SPDX-License-Identifier: MIT
//
// test_abi.c — libfftd's caller-sized structs (fftd.h, "Binary
// compatibility"), on a real `fftd --backend fftw`: a client compiled
// against an older fftd.h, whose structs are shorter (the structs below
// are such older versions: the current ones less their last fields), is
// served correctly, and the library writes no byte past the caller's
// struct (each sits in a buffer whose tail is poisoned and checked after
// the call); a newer client's longer struct is accepted; a size of zero,
// not a whole number of words, or absurd is FFTD_EINVAL.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fixture.h"
#include "../util/probe.h"
#include "fftd.h"

#define TIMEOUT_MS 60000
#define POISON 0xa5
#define GUARD 64

static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_daemon D;
static fftd_client     *C;

// FX: one fftw daemon and its client for the whole group.
static fftd_test_fixture FX = {
	.daemon     = { { .d = &D, .c = &C, .args = DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

// An older fftd_device_info: no memory_bytes.
typedef struct old_device_info {
	int  index;
	char name[64];
	char backend[16];
} old_device_info;

// An older fftd_info: its devices the older ones, no ndaemons.
typedef struct old_info {
	uint32_t        protocol_version;
	char            server_version[32];
	char            backend[16];
	int             ndevices;
	old_device_info devices[FFTD_MAX_DEVICES];
	int             nalgorithms;
	char            algorithms[FFTD_MAX_ALGORITHMS][16];
	uint32_t        precisions;
	uint64_t        max_request_bytes;
	uint32_t        max_rank;
	uint64_t        max_batch;
	uint32_t        max_plans_per_client;
	uint32_t        max_inflight_per_client;
	uint64_t        max_queued_bytes_per_client;
} old_info;

// Older structs that are the current ones' first fields: their sizes.
#define OLD_STATS_SIZE offsetof(fftd_stats, canceled)
#define OLD_CLIENT_STATS_SIZE offsetof(fftd_client_stats, queue_hist)
#define OLD_DEVICE_STATS_SIZE offsetof(fftd_device_stats, cache_hits)
#define OLD_DESC_SIZE offsetof(fftd_plan_desc, algorithm)
#define OLD_TIMES_SIZE offsetof(fftd_stream_times, answered_ns)

// A newer fftd_exec_options: one field more, zero (its default).
typedef struct new_exec_options {
	int64_t deadline_us;
	int64_t later_field;
} new_exec_options;

// poisoned returns a buffer of size bytes plus GUARD, all POISON.
static unsigned char *
poisoned(size_t size)
{
	unsigned char *b = malloc(size + GUARD);
	assert_non_null(b);
	memset(b, POISON, size + GUARD);
	return b;
}

// guard_intact says whether the GUARD bytes after size bytes of b are
// still POISON: the library wrote nothing past the caller's struct.
static bool
guard_intact(const unsigned char *b, size_t size)
{
	for (size_t i = 0; i < GUARD; i++) {
		if (b[size + i] != POISON) {
			return false;
		}
	}
	return true;
}

// An older fftd_info (older device entries, no ndaemons) gets the same
// values as the current one, and nothing past its end.
static void
test_old_info(void **state)
{
	(void) state;
	fftd_info full;
	assert_int_equal(fftd_client_info(C, &full), FFTD_OK);
	unsigned char *b = poisoned(sizeof(old_info));
	assert_int_equal(fftd_client_info_sized(C, (fftd_info *) (void *) b,
	                     sizeof(old_info), sizeof(old_device_info)),
	    FFTD_OK);
	assert_true(guard_intact(b, sizeof(old_info)));
	old_info o;
	memcpy(&o, b, sizeof(o));
	assert_int_equal(o.protocol_version, full.protocol_version);
	assert_string_equal(o.server_version, full.server_version);
	assert_string_equal(o.backend, full.backend);
	assert_int_equal(o.ndevices, full.ndevices);
	assert_true(o.ndevices >= 1);
	for (int i = 0; i < o.ndevices; i++) {
		assert_int_equal(o.devices[i].index, full.devices[i].index);
		assert_string_equal(o.devices[i].name, full.devices[i].name);
		assert_string_equal(
		    o.devices[i].backend, full.devices[i].backend);
	}
	assert_int_equal(o.nalgorithms, full.nalgorithms);
	for (int i = 0; i < o.nalgorithms; i++) {
		assert_string_equal(o.algorithms[i], full.algorithms[i]);
	}
	assert_int_equal(o.precisions, full.precisions);
	assert_int_equal(o.max_request_bytes, full.max_request_bytes);
	assert_int_equal(o.max_rank, full.max_rank);
	assert_int_equal(o.max_batch, full.max_batch);
	assert_int_equal(o.max_plans_per_client, full.max_plans_per_client);
	assert_int_equal(
	    o.max_inflight_per_client, full.max_inflight_per_client);
	assert_int_equal(
	    o.max_queued_bytes_per_client, full.max_queued_bytes_per_client);
	free(b);
}

// An older fftd_stats, and arrays of older client and device statistics
// (the element size is the caller's), are filled without a byte past them.
static void
test_old_stats(void **state)
{
	(void) state;
	// The counts compared below are the daemon's: wait until it has
	// closed any earlier connection (the fixture's readiness probe is
	// torn down asynchronously; comparing at once failed in CI, 1
	// session against 2), so that only C is connected and no plan is.
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, TIMEOUT_MS), 0);
	fftd_stats full;
	assert_int_equal(fftd_get_stats(C, &full), FFTD_OK);
	unsigned char *b = poisoned(OLD_STATS_SIZE);
	assert_int_equal(
	    fftd_get_stats_sized(C, (fftd_stats *) (void *) b, OLD_STATS_SIZE),
	    FFTD_OK);
	assert_true(guard_intact(b, OLD_STATS_SIZE));
	fftd_stats got;
	memcpy(&got, b, OLD_STATS_SIZE);
	assert_int_equal(got.sessions, full.sessions);
	assert_int_equal(got.cache_budget_bytes, full.cache_budget_bytes);
	free(b);

	// A second connection, so that the client list has two entries.
	fftd_client *c2 = NULL;
	assert_int_equal(fftd_client_open(&c2, D.url, TIMEOUT_MS), FFTD_OK);
	assert_int_equal(fftd_test_wait_stats(C, 2, 0, TIMEOUT_MS), 0);
	fftd_client_stats fc[8];
	int               nfull = 0, n = 0;
	assert_int_equal(fftd_get_client_stats(C, fc, 8, &nfull), FFTD_OK);
	assert_true(nfull >= 2);
	for (int max = 1; max <= 3; max++) {
		size_t sz = (size_t) max * OLD_CLIENT_STATS_SIZE;
		b         = poisoned(sz);
		assert_int_equal(fftd_get_client_stats_sized(C,
		                     (fftd_client_stats *) (void *) b,
		                     OLD_CLIENT_STATS_SIZE, max, &n),
		    FFTD_OK);
		assert_int_equal(n, nfull);
		assert_true(guard_intact(b, sz));
		for (int i = 0; i < max && i < n; i++) {
			fftd_client_stats e;
			memcpy(&e, b + (size_t) i * OLD_CLIENT_STATS_SIZE,
			    OLD_CLIENT_STATS_SIZE);
			assert_int_equal(e.id, fc[i].id);
			assert_string_equal(e.name, fc[i].name);
		}
		free(b);
	}
	fftd_client_close(c2);

	fftd_device_stats fd[4];
	assert_int_equal(fftd_get_device_stats(C, fd, 4, &nfull), FFTD_OK);
	assert_true(nfull >= 1);
	b = poisoned(OLD_DEVICE_STATS_SIZE);
	assert_int_equal(
	    fftd_get_device_stats_sized(C, (fftd_device_stats *) (void *) b,
	        OLD_DEVICE_STATS_SIZE, 1, &n),
	    FFTD_OK);
	assert_true(guard_intact(b, OLD_DEVICE_STATS_SIZE));
	fftd_device_stats e;
	memcpy(&e, b, OLD_DEVICE_STATS_SIZE);
	assert_int_equal(e.index, fd[0].index);
	assert_string_equal(e.name, fd[0].name);
	assert_string_equal(e.backend, fd[0].backend);
	free(b);
}

// An older fftd_plan_desc (no algorithm, device or priority) is filled by
// fftd_plan_desc_init within its size, and plans as the current one with
// those fields at their defaults: the poison after it (which as a pointer
// or a device index would fail the plan) is never read.
static void
test_old_plan_desc(void **state)
{
	(void) state;
	const int64_t   n[1] = { 64 };
	unsigned char  *b    = poisoned(OLD_DESC_SIZE);
	fftd_plan_desc *old  = (fftd_plan_desc *) (void *) b;
	assert_int_equal(fftd_plan_desc_init_sized(
	                     old, OLD_DESC_SIZE, 1, n, FFTD_C2C, FFTD_F64),
	    FFTD_OK);
	assert_true(guard_intact(b, OLD_DESC_SIZE));
	fftd_plan *po = NULL, *pf = NULL;
	assert_int_equal(
	    fftd_plan_create_sized(C, old, OLD_DESC_SIZE, &po), FFTD_OK);
	assert_true(guard_intact(b, OLD_DESC_SIZE));
	fftd_plan_desc full;
	assert_int_equal(
	    fftd_plan_desc_init(&full, 1, n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_int_equal(fftd_plan_create(C, &full, &pf), FFTD_OK);
	assert_string_equal(fftd_plan_algorithm(po), fftd_plan_algorithm(pf));
	assert_int_equal(fftd_plan_input_bytes(po), fftd_plan_input_bytes(pf));
	double in[128], out_o[128], out_f[128];
	for (int i = 0; i < 128; i++) {
		in[i] = (double) ((i * 7) % 13) - 6.0;
	}
	assert_int_equal(fftd_execute(po, in, out_o), FFTD_OK);
	assert_int_equal(fftd_execute(pf, in, out_f), FFTD_OK);
	assert_memory_equal(out_o, out_f, sizeof(out_o));
	fftd_plan_destroy(po);
	fftd_plan_destroy(pf);
	free(b);
}

// Options of a newer client (one more field, at its default) are taken;
// an older or absurd size is refused.
static void
test_exec_options(void **state)
{
	(void) state;
	const int64_t  n[1] = { 16 };
	fftd_plan_desc d;
	fftd_plan     *p = NULL;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	double           in[32] = { 1 }, out[32];
	new_exec_options o      = { .deadline_us = 60000000 };
	fftd_request    *r      = NULL;
	assert_int_equal(fftd_execute_async_opts_sized(p, in, out,
	                     (const fftd_exec_options *) (const void *) &o,
	                     sizeof(o), NULL, NULL, &r),
	    FFTD_OK);
	assert_int_equal(fftd_request_wait(r), FFTD_OK);
	for (int i = 0; i < 16; i++) {
		assert_true(out[2 * i] == 1.0 && out[2 * i + 1] == 0.0);
	}
	const size_t bad[] = { 0, 2, 6, (size_t) 1 << 20, SIZE_MAX };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		r = NULL;
		assert_int_equal(
		    fftd_execute_async_opts_sized(p, in, out,
		        (const fftd_exec_options *) (const void *) &o, bad[k],
		        NULL, NULL, &r),
		    FFTD_EINVAL);
		assert_null(r);
	}
	fftd_plan_destroy(p);
}

// A size of zero, not a whole number of 4-byte words, or over 64 KiB is
// FFTD_EINVAL for every call that takes one, and nothing is written.
static void
test_bad_sizes(void **state)
{
	(void) state;
	const size_t   bad[] = { 0, 1, 7, (size_t) 1 << 17, SIZE_MAX };
	const int64_t  n[1]  = { 16 };
	unsigned char *b     = poisoned(4096);
	int            cnt   = -1;
	fftd_plan     *p     = NULL;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		size_t s = bad[k];
		assert_int_equal(
		    fftd_client_info_sized(C, (fftd_info *) (void *) b, s,
		        sizeof(fftd_device_info)),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_client_info_sized(
		        C, (fftd_info *) (void *) b, sizeof(fftd_info), s),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_get_stats_sized(C, (fftd_stats *) (void *) b, s),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_get_client_stats_sized(
		        C, (fftd_client_stats *) (void *) b, s, 1, &cnt),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_get_device_stats_sized(
		        C, (fftd_device_stats *) (void *) b, s, 1, &cnt),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_plan_desc_init_sized((fftd_plan_desc *) (void *) b, s,
		        1, n, FFTD_C2C, FFTD_F64),
		    FFTD_EINVAL);
		assert_int_equal(
		    fftd_plan_create_sized(
		        C, (const fftd_plan_desc *) (void *) b, s, &p),
		    FFTD_EINVAL);
		assert_null(p);
		assert_int_equal(cnt, -1);
	}
	for (size_t i = 0; i < 4096; i++) {
		assert_int_equal(b[i], POISON);
	}
	free(b);
}

// A stream's times into an older fftd_stream_times (no answered_ns); a bad
// size is refused. Skipped where the daemon offers no stream channel.
static void
test_stream_times(void **state)
{
	(void) state;
	const int64_t  n[1] = { 64 };
	fftd_plan_desc d;
	fftd_plan     *p  = NULL;
	fftd_stream   *st = NULL;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F64), FFTD_OK);
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	assert_int_equal(fftd_stream_open(p, 2, &st), FFTD_OK);
	double in[128] = { 1 };
	assert_int_equal(fftd_stream_submit(st, in), FFTD_OK);
	assert_int_equal(fftd_stream_wait(st, NULL, NULL), FFTD_OK);
	fftd_stream_times full;
	int               rv = fftd_stream_last_times(st, &full);
	if (rv == FFTD_EUNSUPPORTED) {
		fftd_stream_close(st);
		fftd_plan_destroy(p);
		skip();
	}
	assert_int_equal(rv, FFTD_OK);
	unsigned char *b = poisoned(OLD_TIMES_SIZE);
	assert_int_equal(fftd_stream_last_times_sized(st,
	                     (fftd_stream_times *) (void *) b, OLD_TIMES_SIZE),
	    FFTD_OK);
	assert_true(guard_intact(b, OLD_TIMES_SIZE));
	fftd_stream_times got;
	memcpy(&got, b, OLD_TIMES_SIZE);
	assert_true(got.submitted_ns == full.submitted_ns
	    && got.finished_ns == full.finished_ns);
	assert_int_equal(fftd_stream_last_times_sized(
	                     st, (fftd_stream_times *) (void *) b, 0),
	    FFTD_EINVAL);
	assert_true(guard_intact(b, OLD_TIMES_SIZE));
	free(b);
	fftd_stream_close(st);
	fftd_plan_destroy(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_info),
		cmocka_unit_test(test_old_stats),
		cmocka_unit_test(test_old_plan_desc),
		cmocka_unit_test(test_exec_options),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_stream_times),
	};
	return fftd_test_run_group("abi", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_algo_stats.c — the AlgoStats reply (daemon/algo_stats.c, issue 18
// item 5) built from a speed table made here: a full table (1,024 entries
// with shape texts cut at their longest, 63 characters) does not fit one
// reply, so each page stays under the 64 KiB protobuf limit, pages follow
// one another by slot, and every entry is listed exactly once, in slot
// order; a page limit, a start past the end and a request without fields
// (the first page) behave as proto/fftd.proto says; each entry carries the
// reported name of its key, its shape text and its time in seconds.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo_table.h"
#include "server_impl.h"
#include "wire.h"

// page fetches the page of t that rq asks for, unpacked (free it with
// fftd__wire__reply__free_unpacked), and checks its protobuf size.
static Fftd__Wire__Reply *
page(const Fftd__Wire__AlgoStatsRequest *rq, fftd__speed_table *t)
{
	nng_msg *m = NULL;
	assert_int_equal(fftd__algo_stats_build(&m, rq, t), FFTD_OK);
	fftd__frame f;
	assert_int_equal(
	    fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &f), FFTD_OK);
	assert_true(f.pb_len <= FFTD__WIRE_MAX_PB);
	Fftd__Wire__Reply *r = fftd__wire__reply__unpack(NULL, f.pb_len, f.pb);
	nng_msg_free(m);
	assert_non_null(r);
	assert_int_equal(r->body_case, FFTD__WIRE__REPLY__BODY_ALGO_STATS);
	assert_non_null(r->algo_stats);
	return r;
}

// shape_of makes a shape for a speed key: rank 3 with 19-digit sizes
// (the longest text) when wide, else c2c f32 64x64 batch 8 inverse.
static fftd__shape
shape_of(bool wide, fftd_precision p)
{
	fftd__shape s;
	memset(&s, 0, sizeof(s));
	s.kind      = FFTD_C2C;
	s.precision = p;
	s.direction = FFTD_FORWARD;
	if (wide) {
		s.rank  = 3;
		s.kind  = FFTD_R2C;
		s.batch = 1000000000000000000LL;
		for (int i = 0; i < 3; i++) {
			s.n[i] = 1000000000000000000LL + i;
		}
	} else {
		s.rank      = 2;
		s.n[0]      = 64;
		s.n[1]      = 64;
		s.batch     = 8;
		s.direction = FFTD_INVERSE;
	}
	s.total = wide ? INT64_MAX : s.n[0] * s.n[1]; // the key's, not used
	return s;
}

// fill puts n entries into t, entry i on device i with key algo and time
// (i + 1) microseconds.
static void
fill(fftd__speed_table *t, int n, const char *algo, bool wide)
{
	fftd__shape s = shape_of(wide, FFTD_F64);
	for (int i = 0; i < n; i++) {
		fftd__speed_key k;
		fftd__speed_key_make(&k, i, algo, &s);
		fftd__speed_put(t, &k, (uint64_t) (i + 1) * 1000);
	}
}

static fftd__speed_table T;

static int
reset(void **state)
{
	(void) state;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	memset(&T, 0, sizeof(T));
	T.mtx = m;
	return 0;
}

static void
test_full_table_in_pages(void **state)
{
	(void) state;
	fill(&T, FFTD__SPEED_MAX + 10, "split16-conv", true); // 10 evicted
	Fftd__Wire__AlgoStatsRequest rq = FFTD__WIRE__ALGO_STATS_REQUEST__INIT;
	static int                   seen[FFTD__SPEED_MAX];
	memset(seen, 0, sizeof(seen));
	int pages = 0, listed = 0;
	for (;;) {
		Fftd__Wire__Reply          *r = page(&rq, &T);
		Fftd__Wire__AlgoStatsReply *w = r->algo_stats;
		assert_int_equal(w->speed_total, FFTD__SPEED_MAX);
		assert_int_equal(w->speed_evictions, 10);
		assert_true(w->n_speeds > 0);
		assert_true(w->n_speeds < FFTD__SPEED_MAX); // really paged
		assert_int_equal(w->speed_next, rq.speed_from + w->n_speeds);
		for (size_t i = 0; i < w->n_speeds; i++) {
			const Fftd__Wire__SpeedEntry *e = w->speeds[i];
			assert_string_equal(e->key, "split16-conv");
			assert_string_equal(e->algorithm, "split16");
			// Cut to fftd_speed_entry.shape's 63 characters.
			assert_string_equal(e->shape,
			    "r2c fwd f64 "
			    "1000000000000000000x1000000000000000001"
			    "x10000000000");
			// Slot order: the first 10 devices were evicted
			// for the last 10, in their slots.
			uint32_t slot = rq.speed_from + (uint32_t) i;
			uint32_t dev
			    = slot < 10 ? FFTD__SPEED_MAX + slot : slot;
			assert_int_equal(e->device, dev);
			double want = (double) (dev + 1) * 1e-6;
			assert_true(fabs(e->seconds - want) <= 1e-15 * want);
			seen[slot]++;
			listed++;
		}
		pages++;
		rq.speed_from = w->speed_next;
		bool more     = w->speed_more;
		assert_int_equal(more, w->speed_next < FFTD__SPEED_MAX);
		fftd__wire__reply__free_unpacked(r, NULL);
		if (!more) {
			break;
		}
	}
	assert_true(pages >= 2);
	assert_int_equal(listed, FFTD__SPEED_MAX);
	for (int i = 0; i < FFTD__SPEED_MAX; i++) {
		assert_int_equal(seen[i], 1);
	}
}

static void
test_limits_and_ends(void **state)
{
	(void) state;
	fill(&T, 40, "fftw-f32", false);
	// No request fields: the first page, all 40 (small entries).
	Fftd__Wire__Reply *r = page(NULL, &T);
	assert_int_equal(r->algo_stats->n_speeds, 40);
	assert_false(r->algo_stats->speed_more);
	assert_int_equal(r->algo_stats->speed_next, 40);
	const Fftd__Wire__SpeedEntry *e = r->algo_stats->speeds[0];
	assert_string_equal(e->key, "fftw-f32");
	assert_string_equal(e->algorithm, "fftw-f32");
	assert_string_equal(e->shape, "c2c inv f64 64x64 batch 8");
	fftd__wire__reply__free_unpacked(r, NULL);
	// A limit: slots 5, 6, 7, and more follow.
	Fftd__Wire__AlgoStatsRequest rq = FFTD__WIRE__ALGO_STATS_REQUEST__INIT;
	rq.speed_from                   = 5;
	rq.speed_limit                  = 3;
	r                               = page(&rq, &T);
	assert_int_equal(r->algo_stats->n_speeds, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r->algo_stats->speeds[i]->device, 5 + i);
	}
	assert_int_equal(r->algo_stats->speed_next, 8);
	assert_true(r->algo_stats->speed_more);
	fftd__wire__reply__free_unpacked(r, NULL);
	// Past the end, and far past it (a hostile slot): nothing, no more.
	const uint32_t past[] = { 40, 41, FFTD__SPEED_MAX + 1, UINT32_MAX };
	for (size_t k = 0; k < sizeof(past) / sizeof(past[0]); k++) {
		rq.speed_from  = past[k];
		rq.speed_limit = UINT32_MAX;
		r              = page(&rq, &T);
		assert_int_equal(r->algo_stats->n_speeds, 0);
		assert_false(r->algo_stats->speed_more);
		assert_int_equal(r->algo_stats->speed_total, 40);
		fftd__wire__reply__free_unpacked(r, NULL);
	}
}

static void
test_names(void **state)
{
	(void) state;
	// The key a backend plans under and the name plans report.
	static const struct {
		const char    *key, *name;
		fftd_precision p;
	} rows[] = {
		{ "fftw", "fftw", FFTD_F64 },
		{ "fftw-f32", "fftw-f32", FFTD_F64 },
		{ "fftw", "fftw", FFTD_F32 },
		{ "tc16-conv", "tc16", FFTD_F32 },
		{ "split16-conv", "split16", FFTD_F64 },
		{ "cufft-f16", "cufft-f16", FFTD_F32 },
		{ "nonesuch", "nonesuch", FFTD_F32 },
	};
	size_t n = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < n; i++) {
		fftd__shape     s = shape_of(false, rows[i].p);
		fftd__speed_key k;
		fftd__speed_key_make(&k, (int) i, rows[i].key, &s);
		fftd__speed_put(&T, &k, 5);
	}
	Fftd__Wire__Reply *r = page(NULL, &T);
	assert_int_equal(r->algo_stats->n_speeds, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(r->algo_stats->speeds[i]->key, rows[i].key);
		assert_string_equal(
		    r->algo_stats->speeds[i]->algorithm, rows[i].name);
	}
	assert_string_equal(
	    r->algo_stats->speeds[2]->shape, "c2c inv f32 64x64 batch 8");
	fftd__wire__reply__free_unpacked(r, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_full_table_in_pages, reset),
		cmocka_unit_test_setup(test_limits_and_ends, reset),
		cmocka_unit_test_setup(test_names, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
//
// test_algo_table.c — accuracy-aware "auto" (issue 18 item 5) as pure
// functions: the choice over made-up candidates (the fastest within the
// tolerance, never one whose bound exceeds it, the data's own precision as
// the fallback, the tie rules), the error table's bounds (increasing in N,
// conversions costing more than none, each row's measured figure under its
// bound) and its names, and the speed table's bound and LRU order.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo_table.h"
#include "errtable.h"

// cand_of makes a candidate.
static fftd__algo_cand
cand_of(double bound, uint64_t ns, fftd_precision p, bool fallback)
{
	fftd__algo_cand c = { bound, ns, p, fallback };
	return c;
}

static void
test_choose_fastest_within(void **state)
{
	(void) state;
	fftd__algo_cand c[4] = {
		cand_of(1e-6, 100, FFTD_F32, true),   // cufft f32 (data f32)
		cand_of(2e-6, 120, FFTD_F32, false),  // split16: slower
		cand_of(1.8e-3, 40, FFTD_F16, false), // tc16: fastest
		cand_of(2e-2, 30, FFTD_F16, false),   // faster, bound too big
	};
	assert_int_equal(fftd__algo_choose(c, 4, 1e-2), 2);
	assert_int_equal(fftd__algo_choose(c, 4, 2e-2), 3);
	assert_int_equal(fftd__algo_choose(c, 4, 1.8e-3), 2); // <= counts
	assert_int_equal(fftd__algo_choose(c, 4, 1e-3), 0);
	// Never one whose bound exceeds the tolerance, however fast.
	for (double tol = 1e-9; tol < 1; tol *= 3) {
		int k = fftd__algo_choose(c, 4, tol);
		assert_true(k >= 0);
		assert_true(c[k].fallback || c[k].bound <= tol);
	}
}

static void
test_choose_fallback(void **state)
{
	(void) state;
	// Nothing meets 1e-9, the fallback's bound neither: the data's own
	// precision runs (today's behaviour).
	fftd__algo_cand c[2] = {
		cand_of(1e-6, 100, FFTD_F32, true),
		cand_of(2e-3, 10, FFTD_F16, false),
	};
	assert_int_equal(fftd__algo_choose(c, 2, 1e-9), 0);
	// A faster candidate within tolerance but never measured (ns 0) is
	// not chosen; neither is anything over an unmeasured fallback.
	c[1].bound = 1e-7;
	c[1].ns    = 0;
	assert_int_equal(fftd__algo_choose(c, 2, 1e-3), 0);
	c[1].ns = 10;
	c[0].ns = 0;
	assert_int_equal(fftd__algo_choose(c, 2, 1e-3), 0);
	// The fallback wins over slower candidates wherever it sits.
	fftd__algo_cand d[3] = {
		cand_of(1e-7, 300, FFTD_F32, false),
		cand_of(1e-7, 200, FFTD_F32, false),
		cand_of(1e-7, 100, FFTD_F64, true),
	};
	assert_int_equal(fftd__algo_choose(d, 3, 1e-3), 2);
	// No fallback and nothing eligible: -1; nothing at all: -1.
	fftd__algo_cand e[1] = { cand_of(1e-2, 5, FFTD_F16, false) };
	assert_int_equal(fftd__algo_choose(e, 1, 1e-3), -1);
	assert_int_equal(fftd__algo_choose(e, 0, 1e-3), -1);
}

static void
test_choose_ties(void **state)
{
	(void) state;
	// Equal times: the more accurate computing precision, then the
	// earlier candidate.
	fftd__algo_cand c[3] = {
		cand_of(2e-3, 50, FFTD_F16, false),
		cand_of(1e-6, 50, FFTD_F32, false),
		cand_of(1e-15, 50, FFTD_F64, true),
	};
	assert_int_equal(fftd__algo_choose(c, 3, 1e-2), 2);
	fftd__algo_cand d[3] = {
		cand_of(1e-6, 50, FFTD_F32, false),
		cand_of(2e-6, 50, FFTD_F32, false),
		cand_of(1e-15, 60, FFTD_F64, true),
	};
	assert_int_equal(fftd__algo_choose(d, 3, 1e-2), 0);
}

// find_row returns the row of algo computing in p.
static const fftd__err_row *
find_row(const char *algo, fftd_precision p)
{
	for (int i = 0; i < fftd__err_nrows; i++) {
		if (strcmp(fftd__err_rows[i].algo, algo) == 0
		    && fftd__err_rows[i].compute == p) {
			return &fftd__err_rows[i];
		}
	}
	fail_msg("no row %s/%d", algo, (int) p);
	return NULL;
}

static void
test_bounds(void **state)
{
	(void) state;
	static const fftd_precision data[] = { FFTD_F16, FFTD_F32, FFTD_F64 };
	for (int i = 0; i < fftd__err_nrows; i++) {
		const fftd__err_row *r = &fftd__err_rows[i];
		for (int d = 0; d < 3; d++) {
			double prev = 0;
			for (int64_t n = 1; n <= ((int64_t) 1 << 40);
			     n         = n * 3 + 1) {
				double b = fftd__err_bound(r, data[d], n);
				assert_true(b >= prev); // increasing in N
				prev = b;
				if (fftd__err_prec_rank(r->compute)
				    > fftd__err_prec_rank(data[d])) {
					assert_true(b == 1.0); // cannot serve
				} else {
					assert_true(b > 0 && b < 1);
				}
			}
		}
		// Converting costs more than computing at the data's own
		// precision does with the same row.
		if (r->compute != FFTD_F64) {
			assert_true(fftd__err_bound(r, FFTD_F64, 1024)
			    > fftd__err_bound(r, r->compute, 1024));
		}
	}
	// The measured figures the constants come from (errtable.c) are
	// under their rows' bounds, with the margin the table promises (x2
	// less 10%), and the rows order as the algorithms' accuracy does.
	struct {
		const char    *algo;
		fftd_precision p;
		int64_t        n;
		double         measured;
	} m[] = {
		{ "tc16", FFTD_F16, 256, 3.24e-4 },
		{ "tc16", FFTD_F16, (int64_t) 1 << 27, 7.14e-4 },
		{ "cufft", FFTD_F16, (int64_t) 1 << 24, 2.74e-3 },
		{ "split16", FFTD_F32, (int64_t) 1 << 24, 4.30e-7 },
		{ "cufft", FFTD_F32, 32768, 2.85e-7 },
		{ "cufft", FFTD_F32, (int64_t) 1 << 27, 3.83e-7 },
	};
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		double b = fftd__err_bound(
		    find_row(m[k].algo, m[k].p), m[k].p, m[k].n);
		assert_true(b >= 1.8 * m[k].measured);
	}
	int64_t n = 1 << 20;
	assert_true(fftd__err_bound(find_row("tc16", FFTD_F16), FFTD_F32, n)
	    > fftd__err_bound(find_row("split16", FFTD_F32), FFTD_F32, n));
	assert_true(fftd__err_bound(find_row("split16", FFTD_F32), FFTD_F64, n)
	    > fftd__err_bound(find_row("cufft", FFTD_F64), FFTD_F64, n));
	// tc16 on f32 data fits 1e-2 at every size it serves, not 1e-4.
	double b = fftd__err_bound(
	    find_row("tc16", FFTD_F16), FFTD_F32, (int64_t) 1 << 27);
	assert_true(b < 1e-2 && b > 1e-4);
}

static void
test_names(void **state)
{
	(void) state;
	char                 a[16], k[16];
	const fftd__err_row *tc = find_row("tc16", FFTD_F16);
	assert_string_equal(fftd__err_name(tc, FFTD_F32, a), "tc16");
	assert_string_equal(fftd__err_key(tc, FFTD_F32, k), "tc16-conv");
	assert_string_equal(fftd__err_key(tc, FFTD_F16, k), "tc16");
	const fftd__err_row *sp = find_row("split16", FFTD_F32);
	assert_string_equal(fftd__err_name(sp, FFTD_F64, a), "split16");
	assert_string_equal(fftd__err_key(sp, FFTD_F64, k), "split16-conv");
	const fftd__err_row *cf = find_row("cufft", FFTD_F32);
	assert_string_equal(fftd__err_name(cf, FFTD_F64, a), "cufft-f32");
	assert_string_equal(fftd__err_key(cf, FFTD_F64, k), "cufft-f32");
	assert_string_equal(fftd__err_name(cf, FFTD_F32, a), "cufft");
	const fftd__err_row *fw = find_row("fftw", FFTD_F32);
	assert_string_equal(fftd__err_key(fw, FFTD_F64, k), "fftw-f32");
}

static void
test_speed_table(void **state)
{
	(void) state;
	static fftd__speed_table t = { .mtx = PTHREAD_MUTEX_INITIALIZER };
	fftd__shape              s;
	memset(&s, 0, sizeof(s));
	s.rank  = 1;
	s.batch = 1;
	fftd__speed_key k;
	uint64_t        ns;
	for (int i = 0; i < FFTD__SPEED_MAX; i++) {
		s.n[0] = 100 + i;
		fftd__speed_key_make(&k, 0, "fftw", &s);
		fftd__speed_put(&t, &k, (uint64_t) i + 1);
	}
	assert_int_equal(fftd__speed_count(&t, NULL), FFTD__SPEED_MAX);
	// Touch the first; the second is then the least recently used.
	s.n[0] = 100;
	fftd__speed_key_make(&k, 0, "fftw", &s);
	assert_true(fftd__speed_get(&t, &k, &ns));
	assert_int_equal(ns, 1);
	s.n[0] = 99; // a new one: evicts n = 101
	fftd__speed_key_make(&k, 0, "fftw", &s);
	fftd__speed_put(&t, &k, 7);
	uint64_t ev;
	assert_int_equal(fftd__speed_count(&t, &ev), FFTD__SPEED_MAX);
	assert_int_equal(ev, 1);
	s.n[0] = 101;
	fftd__speed_key_make(&k, 0, "fftw", &s);
	assert_false(fftd__speed_get(&t, &k, &ns));
	s.n[0] = 100;
	fftd__speed_key_make(&k, 0, "fftw", &s);
	assert_true(fftd__speed_get(&t, &k, &ns));
	// Another device or algorithm is another entry.
	fftd__speed_key_make(&k, 1, "fftw", &s);
	assert_false(fftd__speed_get(&t, &k, &ns));
	fftd__speed_key_make(&k, 0, "fftw-f32", &s);
	assert_false(fftd__speed_get(&t, &k, &ns));
	uint64_t v[5] = { 5, 1, 4, 2, 3 };
	assert_int_equal(fftd__median_ns(v, 5), 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose_fastest_within),
		cmocka_unit_test(test_choose_fallback),
		cmocka_unit_test(test_choose_ties),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_speed_table),
	};
	return cmocka_run_group_tests_name("algo_table", tests, NULL, NULL);
}

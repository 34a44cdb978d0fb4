// SPDX-License-Identifier: MIT
//
// test_plan_cache.c — the plan cache (daemon/plan_cache.c) driven through a
// mock backend that counts plan and destroy calls, gives each plan a
// configurable byte size, records the order plans are destroyed in and
// checks every plan it is asked to destroy is live (ASan reports what leaks).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "layout.h"
#include "plan_cache.h"
#include "../util/mock_backend.h"

#define MOCK_MAGIC 0x6d6f636bu
#define MAX_IDS 256

typedef struct mock_plan {
	uint32_t    magic;
	int         id; // 0, 1, 2, ... in planning order
	fftd__shape s;
	char        algorithm[32];
} mock_plan;

static struct {
	int      plans, destroys, live;
	uint64_t bytes_next[MAX_IDS]; // bytes of plan id (0: bytes_default)
	uint64_t bytes_default;
	int      destroyed[MAX_IDS]; // ids in destroy order
	int      fail_next;          // status the next plan call returns
} mock;

static const char *const mock_algorithms[] = { "mock", "alt", NULL };

static int
mock_plan_fn(fftd__device *dev, const fftd__shape *s, const char *algorithm,
    void **plan, uint64_t *bytes, char *msg, size_t msglen)
{
	(void) dev;
	assert_non_null(algorithm);
	if (mock.fail_next) {
		int rv         = mock.fail_next;
		mock.fail_next = 0;
		snprintf(msg, msglen, "mock says no");
		return rv;
	}
	mock_plan *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->magic = MOCK_MAGIC;
	p->id    = mock.plans++;
	p->s     = *s;
	snprintf(p->algorithm, sizeof(p->algorithm), "%s", algorithm);
	*plan  = p;
	*bytes = p->id < MAX_IDS && mock.bytes_next[p->id]
	    ? mock.bytes_next[p->id]
	    : mock.bytes_default;
	mock.live++;
	return FFTD_OK;
}

static int
mock_execute(fftd__device *dev, void *plan, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	(void) dev;
	(void) plan;
	(void) s;
	(void) in;
	(void) out;
	(void) msg;
	(void) msglen;
	return FFTD_OK;
}

static void
mock_destroy(fftd__device *dev, void *plan)
{
	(void) dev;
	mock_plan *p = plan;
	assert_non_null(p);
	assert_int_equal(p->magic, MOCK_MAGIC); // not destroyed twice
	p->magic = 0;
	if (mock.destroys < MAX_IDS) {
		mock.destroyed[mock.destroys] = p->id;
	}
	mock.destroys++;
	mock.live--;
	free(p);
}

static const fftd__backend mock_backend = {
	.name       = "mock",
	.algorithms = mock_algorithms,
	.probe      = mock_probe,
	.open       = mock_open,
	.close      = mock_close,
	.plan       = mock_plan_fn,
	.execute    = mock_execute,
	.destroy    = mock_destroy,
};

static fftd__device dev = {
	.backend = &mock_backend,
	.index   = 0,
	.local   = 0,
	.name    = "mock0",
};

static int
reset(void **state)
{
	(void) state;
	memset(&mock, 0, sizeof(mock));
	mock.bytes_default = 100;
	return 0;
}

// shape_n resolves a contiguous 1-D C2C f64 transform of size n.
static fftd__shape
shape_n(int64_t n)
{
	fftd_plan_desc d = { .rank = 1,
		.n                 = { n },
		.batch             = 1,
		.kind              = FFTD_C2C,
		.precision         = FFTD_F64,
		.direction         = FFTD_FORWARD };
	fftd__shape    s;
	char           msg[128];
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), 0);
	return s;
}

static fftd__cache_entry *
get(fftd__cache *c, const fftd__shape *s, const char *alg)
{
	fftd__cache_entry *e = NULL;
	char               msg[128];
	assert_int_equal(
	    fftd__cache_acquire(c, s, alg, &e, msg, sizeof(msg)), 0);
	assert_non_null(e);
	assert_non_null(fftd__cache_plan(e));
	return e;
}

static int
plan_id(fftd__cache_entry *e)
{
	mock_plan *p = fftd__cache_plan(e);
	assert_int_equal(p->magic, MOCK_MAGIC);
	return p->id;
}

static fftd__cache_stats
stats(fftd__cache *c)
{
	fftd__cache_stats st;
	memset(&st, 0xff, sizeof(st));
	fftd__cache_get_stats(c, &st);
	return st;
}

static void
test_hit_miss(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 1000), 0);
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.budget, 1000);

	fftd__shape        a  = shape_n(64);
	fftd__cache_entry *e1 = get(c, &a, "mock");
	assert_int_equal(mock.plans, 1);
	mock_plan *p = fftd__cache_plan(e1);
	assert_string_equal(p->algorithm, "mock");
	assert_int_equal(p->s.n[0], 64);
	fftd__cache_release(c, e1);

	fftd__cache_entry *e2 = get(c, &a, "mock");
	assert_ptr_equal(e2, e1);
	assert_ptr_equal(fftd__cache_plan(e2), p);
	assert_int_equal(mock.plans, 1);
	// A second reference to a held entry is a hit too.
	fftd__cache_entry *e3 = get(c, &a, "mock");
	assert_ptr_equal(e3, e1);
	fftd__cache_release(c, e2);
	fftd__cache_release(c, e3);

	st = stats(c);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.bytes, 100);
	fftd__cache_destroy(c);
	assert_int_equal(mock.destroys, 1);
	assert_int_equal(mock.live, 0);
}

// Budget of three plans: A B C, touch A, then D evicts B and E evicts C.
static void
test_lru_order(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 300), 0);
	fftd__shape s[5];
	for (int i = 0; i < 5; i++) {
		s[i] = shape_n(10 + i);
	}
	for (int i = 0; i < 3; i++) {
		fftd__cache_release(c, get(c, &s[i], "mock"));
	}
	fftd__cache_release(c, get(c, &s[0], "mock")); // A is now most recent
	assert_int_equal(mock.destroys, 0);
	fftd__cache_release(c, get(c, &s[3], "mock")); // D
	assert_int_equal(mock.destroys, 1);
	assert_int_equal(mock.destroyed[0], 1);        // B
	fftd__cache_release(c, get(c, &s[4], "mock")); // E
	assert_int_equal(mock.destroys, 2);
	assert_int_equal(mock.destroyed[1], 2); // C
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.evictions, 2);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.bytes, 300);
	assert_int_equal(st.misses, 5);
	assert_int_equal(st.hits, 1);
	// A survived: acquiring it is a hit on the original plan.
	fftd__cache_entry *e = get(c, &s[0], "mock");
	assert_int_equal(plan_id(e), 0);
	fftd__cache_release(c, e);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
}

// Plans of different sizes: evict exactly the least recent ones needed.
static void
test_evicts_just_enough(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 1000), 0);
	mock.bytes_next[0] = 300;
	mock.bytes_next[1] = 300;
	mock.bytes_next[2] = 300;
	mock.bytes_next[3] = 500; // needs two of the 300s to go
	for (int i = 0; i < 4; i++) {
		fftd__shape s = shape_n(100 + i);
		fftd__cache_release(c, get(c, &s, "mock"));
	}
	fftd__cache_stats st = stats(c);
	assert_true(st.bytes <= st.budget);
	assert_int_equal(mock.destroys, 2);
	assert_int_equal(mock.destroyed[0], 0);
	assert_int_equal(mock.destroyed[1], 1);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.bytes, 800);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
}

// Entries in use are never evicted, even when that keeps the cache over
// its budget; the new plan is still made.
static void
test_referenced_never_evicted(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 200), 0);
	fftd__shape a = shape_n(1), b = shape_n(2), x = shape_n(3),
	            y         = shape_n(4);
	fftd__cache_entry *ea = get(c, &a, "mock");
	fftd__cache_entry *eb = get(c, &b, "mock");
	fftd__cache_entry *ex = get(c, &x, "mock"); // over budget: all held
	assert_int_equal(mock.plans, 3);
	assert_int_equal(mock.destroys, 0);
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.bytes, 300);
	// Plans of held entries stay valid.
	assert_int_equal(plan_id(ea), 0);
	assert_int_equal(plan_id(eb), 1);
	assert_int_equal(plan_id(ex), 2);

	fftd__cache_release(c, ea); // a is the only unreferenced entry
	fftd__cache_entry *ey = get(c, &y, "mock");
	// Only a could go; b and x are still in use.
	for (int i = 0; i < mock.destroys; i++) {
		assert_int_equal(mock.destroyed[i], 0);
	}
	assert_int_equal(mock.destroys, 1);
	assert_int_equal(plan_id(eb), 1);
	assert_int_equal(plan_id(ex), 2);
	assert_int_equal(plan_id(ey), 3);
	// A plan bigger than the whole budget is still made for its user.
	mock.bytes_default    = 1000;
	fftd__shape        z  = shape_n(5);
	fftd__cache_entry *ez = get(c, &z, "mock");
	assert_int_equal(plan_id(ez), 4);
	fftd__cache_release(c, eb);
	fftd__cache_release(c, ex);
	fftd__cache_release(c, ey);
	fftd__cache_release(c, ez);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
	assert_int_equal(mock.destroys, mock.plans);
}

// Every field of the shape, and the algorithm, is part of the key: each
// variant below is a miss with its own plan; asking again hits each one.
static void
test_key_distinguishes_fields(void **state)
{
	(void) state;
	const fftd_plan_desc base = { .rank = 2,
		.n                          = { 8, 6 },
		.batch                      = 2,
		.kind                       = FFTD_C2C,
		.precision                  = FFTD_F64,
		.direction                  = FFTD_FORWARD };
	fftd_plan_desc       v[32];
	const char          *alg[32];
	int                  n = 0;
#define VARIANT(stmt)                                                          \
	do {                                                                   \
		v[n]   = base;                                                 \
		alg[n] = "mock";                                               \
		{                                                              \
			fftd_plan_desc *d = &v[n];                             \
			(void) d;                                              \
			stmt;                                                  \
		}                                                              \
		n++;                                                           \
	} while (0)
	VARIANT((void) 0);
	VARIANT(d->rank = 1);
	VARIANT(d->rank = 3; d->n[2] = 6);
	VARIANT(d->n[0] = 9);
	VARIANT(d->n[1] = 7);
	VARIANT(d->n[0] = 6; d->n[1] = 8); // same volume, swapped
	VARIANT(d->batch = 3);
	VARIANT(d->kind = FFTD_R2C);
	VARIANT(d->kind = FFTD_C2R; d->direction = FFTD_INVERSE);
	VARIANT(d->precision = FFTD_F32);
	VARIANT(d->precision = FFTD_F16);
	VARIANT(d->direction = FFTD_INVERSE);
	VARIANT(d->norm = FFTD_NORM_BY_N);
	VARIANT(d->norm = FFTD_NORM_ORTHO);
	VARIANT(d->istride = 2);
	VARIANT(d->ostride = 2);
	VARIANT(d->idist = 50);
	VARIANT(d->odist = 50);
	VARIANT(d->inembed[0] = 8; d->inembed[1] = 7);
	VARIANT(d->inembed[0] = 9; d->inembed[1] = 6); // only the bound differs
	VARIANT(d->onembed[0] = 8; d->onembed[1] = 7);
	VARIANT(d->istride = 2; d->ostride = 2); // both sides
	VARIANT(d->input = FFTD_INPUT_I8);
	VARIANT(d->input = FFTD_INPUT_I8; d->kind = FFTD_R2C);
	VARIANT(alg[n] = "alt");
#undef VARIANT
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, UINT64_MAX), 0);
	fftd__cache_entry *e[32];
	for (int i = 0; i < n; i++) {
		fftd__shape s;
		char        msg[128];
		assert_int_equal(
		    fftd__shape_resolve(&v[i], NULL, &s, msg, sizeof(msg)), 0);
		e[i] = get(c, &s, alg[i]);
		if (mock.plans != i + 1) {
			print_error(
			    "variant %d shares a plan with an earlier one\n",
			    i);
			fail();
		}
		mock_plan *p = fftd__cache_plan(e[i]);
		assert_int_equal(p->s.kind, s.kind);
		assert_int_equal(p->s.batch, s.batch);
		assert_string_equal(p->algorithm, alg[i]);
		fftd__cache_release(c, e[i]);
	}
	for (int i = 0; i < n; i++) {
		fftd__shape s;
		char        msg[128];
		assert_int_equal(
		    fftd__shape_resolve(&v[i], NULL, &s, msg, sizeof(msg)), 0);
		fftd__cache_entry *again = get(c, &s, alg[i]);
		if (again != e[i] || plan_id(again) != i) {
			print_error("variant %d: second lookup got plan %d\n",
			    i, plan_id(again));
			fail();
		}
		fftd__cache_release(c, again);
	}
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.misses, n);
	assert_int_equal(st.hits, n);
	assert_int_equal(st.entries, n);
	assert_int_equal(mock.destroys, 0);
	fftd__cache_destroy(c);
	assert_int_equal(mock.destroys, n);
	assert_int_equal(mock.live, 0);
}

// Descriptions that resolve to the same layout are the same plan (0 and 1
// for a stride, zero and explicit default embeds), and a shape is looked up
// by value, not by the bytes of whatever struct padding it carries.
static void
test_key_same_shape_hits(void **state)
{
	(void) state;
	const fftd_plan_desc a = { .rank = 2,
		.n                       = { 8, 6 },
		.batch                   = 2,
		.kind                    = FFTD_R2C,
		.precision               = FFTD_F32,
		.direction               = FFTD_FORWARD };
	fftd_plan_desc       b = a;
	b.istride              = 1;
	b.ostride              = 1;
	b.inembed[0]           = 8;
	b.inembed[1]           = 6;
	b.onembed[0]           = 8;
	b.onembed[1]           = 4;
	b.idist                = 48;
	b.odist                = 32;
	fftd__shape sa, sb;
	char        msg[128];
	assert_int_equal(
	    fftd__shape_resolve(&a, NULL, &sa, msg, sizeof(msg)), 0);
	assert_int_equal(
	    fftd__shape_resolve(&b, NULL, &sb, msg, sizeof(msg)), 0);
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 1000), 0);
	fftd__cache_entry *ea = get(c, &sa, "mock");
	fftd__cache_entry *eb = get(c, &sb, "mock");
	assert_ptr_equal(ea, eb);
	assert_int_equal(mock.plans, 1);

	// The same values in a struct whose padding holds garbage.
	fftd__shape sc;
	memset(&sc, 0xAB, sizeof(sc));
	sc.rank      = sa.rank;
	sc.batch     = sa.batch;
	sc.kind      = sa.kind;
	sc.precision = sa.precision;
	sc.input     = sa.input;
	sc.direction = sa.direction;
	sc.norm      = sa.norm;
	sc.total     = sa.total;
	for (int k = 0; k < FFTD_MAX_RANK; k++) {
		sc.n[k] = sa.n[k];
	}
	fftd__side       *dst[2] = { &sc.in, &sc.out };
	const fftd__side *src[2] = { &sa.in, &sa.out };
	for (int i = 0; i < 2; i++) {
		dst[i]->complex   = src[i]->complex;
		dst[i]->elem_size = src[i]->elem_size;
		for (int k = 0; k < FFTD_MAX_RANK; k++) {
			dst[i]->n[k]     = src[i]->n[k];
			dst[i]->embed[k] = src[i]->embed[k];
		}
		dst[i]->stride = src[i]->stride;
		dst[i]->dist   = src[i]->dist;
		dst[i]->elems  = src[i]->elems;
		dst[i]->bytes  = src[i]->bytes;
		dst[i]->dense  = src[i]->dense;
	}
	fftd__cache_entry *ec    = get(c, &sc, "mock");
	int                plans = mock.plans;
	fftd__cache_release(c, ea);
	fftd__cache_release(c, eb);
	fftd__cache_release(c, ec);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
	if (ec != ea) {
		print_error(
		    "an equal shape with other padding bytes missed the "
		    "cache (the key hashes raw struct bytes)\n");
	}
	assert_ptr_equal(ec, ea);
	assert_int_equal(plans, 1);
}

// Lowering the budget evicts least-recently-used unreferenced entries
// until the cache fits; held entries stay.
static void
test_set_budget_trims(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 10000), 0);
	fftd__cache_entry *held = NULL;
	for (int i = 0; i < 5; i++) {
		fftd__shape        s = shape_n(20 + i);
		fftd__cache_entry *e = get(c, &s, "mock");
		if (i == 0) {
			held = e; // the oldest, but in use
		} else {
			fftd__cache_release(c, e);
		}
	}
	assert_int_equal(stats(c).bytes, 500);
	fftd__cache_set_budget(c, 250);
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.budget, 250);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.bytes, 200);
	assert_int_equal(st.evictions, 3);
	assert_int_equal(mock.destroys, 3);
	assert_int_equal(mock.destroyed[0], 1);
	assert_int_equal(mock.destroyed[1], 2);
	assert_int_equal(mock.destroyed[2], 3);
	assert_int_equal(plan_id(held), 0);
	// Raising it again evicts nothing.
	fftd__cache_set_budget(c, 100000);
	assert_int_equal(stats(c).entries, 2);
	assert_int_equal(mock.destroys, 3);
	fftd__cache_release(c, held);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
}

// A backend error passes through with its message; nothing is cached for
// it, and the next acquire plans again.
static void
test_backend_error(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 1000), 0);
	fftd__shape        s        = shape_n(33);
	fftd__cache_entry *e        = (fftd__cache_entry *) 1;
	char               msg[128] = "";
	mock.fail_next              = FFTD_EUNSUPPORTED;
	assert_int_equal(
	    fftd__cache_acquire(c, &s, "mock", &e, msg, sizeof(msg)),
	    FFTD_EUNSUPPORTED);
	assert_non_null(strstr(msg, "mock says no"));
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.bytes, 0);
	e = get(c, &s, "mock");
	assert_int_equal(plan_id(e), 0);
	fftd__cache_release(c, e);
	fftd__cache_destroy(c);
	assert_int_equal(mock.live, 0);
}

// Destroying the cache destroys every plan it made, once.
static void
test_destroy_frees_all(void **state)
{
	(void) state;
	fftd__cache *c;
	assert_int_equal(fftd__cache_create(&c, &dev, 1u << 20), 0);
	for (int i = 0; i < 50; i++) {
		fftd__shape s = shape_n(1 + i % 25); // half of them hits
		fftd__cache_release(c, get(c, &s, i % 2 ? "mock" : "alt"));
	}
	fftd__cache_stats st = stats(c);
	assert_int_equal(st.entries, (uint64_t) mock.plans);
	fftd__cache_destroy(c);
	assert_int_equal(mock.destroys, mock.plans);
	assert_int_equal(mock.live, 0);
	// An empty cache, and NULL.
	assert_int_equal(fftd__cache_create(&c, &dev, 0), 0);
	fftd__cache_destroy(c);
	fftd__cache_destroy(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_hit_miss, reset),
		cmocka_unit_test_setup(test_lru_order, reset),
		cmocka_unit_test_setup(test_evicts_just_enough, reset),
		cmocka_unit_test_setup(test_referenced_never_evicted, reset),
		cmocka_unit_test_setup(test_key_distinguishes_fields, reset),
		cmocka_unit_test_setup(test_key_same_shape_hits, reset),
		cmocka_unit_test_setup(test_set_budget_trims, reset),
		cmocka_unit_test_setup(test_backend_error, reset),
		cmocka_unit_test_setup(test_destroy_frees_all, reset),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("plan_cache", tests, NULL, NULL);
}

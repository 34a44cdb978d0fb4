// SPDX-License-Identifier: MIT
//
// test_backend_fftw.c — the CPU backend driven directly through its
// fftd__backend interface (probe, open, plan, execute, destroy, close), and
// the test reference itself (tests/util/ref.c), which every other test
// trusts: it is checked here against a naive DFT, and each check the tests
// rely on is shown to fail on wrong data.
//
// Every transform case runs three times on one plan: on 64-byte-aligned
// buffers (the plan's own alignment), on buffers one real off (the
// backend's lazily made FFTW_UNALIGNED plan), and aligned again. Outputs are
// poisoned first, so an element left unwritten shows as NaN; gaps must come
// back zero.

#include <math.h>
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
#include "../util/ref.h"

#define MSGLEN 256

static const fftd__backend *be = &fftd__backend_fftw;

// worst[p] is the largest error / bound seen per precision, for the log.
static double worst[2];
static int    ncases;

// --- helpers -------------------------------------------------------------

// The device most tests share, opened by the group setup (cmocka gives a
// group state precedence over each test's own state, so it is a global).
static fftd__device shared_dev;

static void
open_dev(fftd__device *dev, int threads, int measure)
{
	fftd__backend_config cfg
	    = { .fftw_threads = threads, .fftw_measure = measure };
	char msg[MSGLEN] = "";
	memset(dev, 0, sizeof(*dev));
	dev->backend = be;
	assert_int_equal(be->open(dev, &cfg, msg, sizeof(msg)), FFTD_OK);
	assert_non_null(dev->state);
}

static void
desc_init(fftd_plan_desc *d, int rank, const int64_t *n, int64_t batch,
    fftd_kind kind, fftd_precision p)
{
	memset(d, 0, sizeof(*d));
	d->rank = rank;
	for (int k = 0; k < rank; k++) {
		d->n[k] = n[k];
	}
	d->batch     = batch;
	d->kind      = kind;
	d->precision = p;
	d->direction = kind == FFTD_C2R ? FFTD_INVERSE : FFTD_FORWARD;
	d->norm      = FFTD_NORM_NONE;
	d->algorithm = "fftw";
	d->device    = -1;
}

static void
resolve(const fftd_plan_desc *d, fftd__shape *s)
{
	char msg[MSGLEN] = "";
	int  rv          = fftd__shape_resolve(d, NULL, s, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		print_error("resolve: %s\n", msg);
	}
	assert_int_equal(rv, FFTD_OK);
}

// buf_alloc returns a 64-byte-aligned block with room for bytes at offset
// off; *base is what to free.
static void *
buf_alloc(size_t bytes, size_t off, void **base)
{
	size_t n = (bytes + off + 63) / 64 * 64;
	*base    = aligned_alloc(64, n);
	assert_non_null(*base);
	return (char *) *base + off;
}

// exec_check executes plan on fresh input (seed) through buffers placed
// off bytes past 64-byte alignment, and checks the output against the
// reference. Returns error / bound.
static double
exec_check(fftd__device *dev, void *plan, const fftd__shape *s, uint64_t seed,
    size_t off)
{
	void *ib, *ob;
	void *in          = buf_alloc(s->in.bytes, off, &ib);
	void *out         = buf_alloc(s->out.bytes, off, &ob);
	char  msg[MSGLEN] = "";

	fftd_ref_fill_input(in, s, seed);
	// The reference first: C2R may overwrite its input.
	long double *ref = fftd_ref_transform(s, in);
	assert_non_null(ref);
	fftd_ref_poison(out, s->out.bytes);

	int rv = be->execute(dev, plan, s, in, out, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		print_error("execute: %s\n", msg);
	}
	assert_int_equal(rv, FFTD_OK);
	assert_int_equal(fftd_ref_unwritten(s, out), 0);
	assert_int_equal(fftd_ref_gaps_nonzero(s, out), 0);
	double err   = fftd_ref_rel_l2(s, out, ref);
	double bound = fftd_ref_bound(s);
	if (!(err <= bound)) {
		print_error(
		    "rel L2 error %.3g over the bound %.3g\n", err, bound);
	}
	assert_true(err <= bound);
	free(ref);
	free(ib);
	free(ob);
	return err / bound;
}

// plan_run plans desc on dev, runs it aligned and misaligned, destroys it.
static void
plan_run(fftd__device *dev, const fftd_plan_desc *d, uint64_t seed)
{
	fftd__shape s;
	void       *plan        = NULL;
	uint64_t    bytes       = 0;
	char        msg[MSGLEN] = "";
	resolve(d, &s);
	int rv = be->plan(dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		print_error("plan: %s\n", msg);
	}
	assert_int_equal(rv, FFTD_OK);
	assert_non_null(plan);
	assert_true(bytes > 0);

	size_t real = s.precision == FFTD_F64 ? 8 : 4;
	double r    = exec_check(dev, plan, &s, seed, 0);
	double r2   = exec_check(dev, plan, &s, seed + 1, real);
	// Again aligned, after the unaligned plan exists.
	double r3 = exec_check(dev, plan, &s, seed + 2, 0);
	r         = fmax(r, fmax(r2, r3));
	if (r > worst[s.precision]) {
		worst[s.precision] = r;
	}
	ncases++;
	be->destroy(dev, plan);
}

static int
group_setup(void **state)
{
	(void) state;
	fftd__backend_config cfg = { .fftw_threads = 2, .fftw_measure = 0 };
	char                 msg[MSGLEN];
	shared_dev.backend = be;
	if (be->open(&shared_dev, &cfg, msg, sizeof(msg)) != FFTD_OK) {
		print_error("open: %s\n", msg);
		return -1;
	}
	return 0;
}

static int
group_teardown(void **state)
{
	(void) state;
	be->close(&shared_dev);
	print_message("fftw backend: %d layouts; worst error/bound f64 %.3f, "
	              "f32 %.3f\n",
	    ncases, worst[FFTD_F64], worst[FFTD_F32]);
	return 0;
}

// --- the transform table -------------------------------------------------

// A geometry is valid for every kind: embedded sizes are at least n on
// both the real and the complex side. ipad/opad > 0 set the distance to
// the default plus the pad (a gap between transforms).
typedef struct geom {
	int     rank;
	int64_t n[FFTD_MAX_RANK];
	int64_t batch;
	int64_t inembed[FFTD_MAX_RANK], istride, ipad;
	int64_t onembed[FFTD_MAX_RANK], ostride, opad;
} geom;

static const geom geoms[] = {
	{ 1, { 16 }, 1 },
	{ 1, { 17 }, 3 },
	{ 1, { 101 }, 2, { 0 }, 2, 0, { 0 }, 3, 0 },
	{ 1, { 1009 }, 1 },
	{ 1, { 1000 }, 4, { 0 }, 1, 5, { 0 }, 1, 7 },
	{ 1, { 4096 }, 2, { 0 }, 1, 0, { 0 }, 2, 1 },
	{ 1, { 30 }, 5, { 40 }, 1, 0, { 33 }, 1, 0 },
	{ 2, { 12, 10 }, 2 },
	{ 2, { 17, 9 }, 3, { 17, 13 }, 1, 0, { 17, 11 }, 2, 0 },
	{ 2, { 64, 101 }, 1 },
	{ 2, { 1, 101 }, 2, { 0 }, 3, 2, { 0 }, 1, 0 },
	{ 3, { 6, 5, 7 }, 2 },
	{ 3, { 8, 9, 10 }, 2, { 8, 11, 12 }, 2, 3, { 9, 10, 13 }, 1, 5 },
	{ 3, { 16, 16, 16 }, 1 },
	{ 3, { 5, 7, 11 }, 1, { 5, 8, 12 }, 1, 0, { 6, 7, 11 }, 2, 0 },
};
#define NGEOM (sizeof(geoms) / sizeof(geoms[0]))

typedef struct tcase {
	char           name[96];
	const geom    *g;
	fftd_kind      kind;
	fftd_precision prec;
	fftd_direction dir;
	fftd_norm      norm;
} tcase;

static const char *kind_name[] = { "c2c", "r2c", "c2r" };
static const char *prec_name[] = { "f64", "f32", "f16" };
static const char *norm_name[] = { "none", "by_n", "ortho" };

static void
case_desc(const tcase *tc, fftd_plan_desc *d)
{
	const geom *g = tc->g;
	desc_init(d, g->rank, g->n, g->batch, tc->kind, tc->prec);
	d->direction = tc->dir;
	d->norm      = tc->norm;
	for (int k = 0; k < g->rank; k++) {
		d->inembed[k] = g->inembed[k];
		d->onembed[k] = g->onembed[k];
	}
	d->istride = g->istride;
	d->ostride = g->ostride;
	if (g->ipad || g->opad) {
		fftd__shape s;
		resolve(d, &s);
		d->idist = g->ipad ? s.in.dist + g->ipad : 0;
		d->odist = g->opad ? s.out.dist + g->opad : 0;
	}
}

// --- backend behaviour ---------------------------------------------------

static void
test_probe_open_close(void **state)
{
	(void) state;
	char why[64] = "";
	assert_int_equal(be->probe(why, sizeof(why)), 1);
	assert_string_equal(be->name, "fftw");
	assert_string_equal(be->algorithms[0], "fftw");
	assert_null(be->algorithms[1]);

	fftd__device dev;
	open_dev(&dev, 3, 0);
	assert_string_equal(dev.name, "cpu (3 threads)");
	assert_int_equal(dev.memory_bytes, 0);

	// close frees plans still alive (ASan's leak check watches).
	int64_t        n[] = { 64 };
	fftd_plan_desc d;
	fftd__shape    s;
	void          *plan;
	uint64_t       bytes;
	char           msg[MSGLEN];
	desc_init(&d, 1, n, 2, FFTD_C2C, FFTD_F64);
	resolve(&d, &s);
	assert_int_equal(
	    be->plan(&dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg)),
	    FFTD_OK);
	desc_init(&d, 1, n, 2, FFTD_R2C, FFTD_F32);
	resolve(&d, &s);
	assert_int_equal(
	    be->plan(&dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg)),
	    FFTD_OK);
	be->close(&dev);
	assert_null(dev.state);
}

static void
test_f16_unsupported(void **state)
{
	(void) state;
	fftd__device *dev = &shared_dev;
	for (int kind = FFTD_C2C; kind <= FFTD_C2R; kind++) {
		int64_t        n[] = { 8, 8 };
		fftd_plan_desc d;
		fftd__shape    s;
		void          *plan = NULL;
		uint64_t       bytes;
		char           msg[MSGLEN] = "";
		desc_init(&d, 2, n, 1, (fftd_kind) kind, FFTD_F16);
		resolve(&d, &s);
		assert_int_equal(
		    be->plan(dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg)),
		    FFTD_EUNSUPPORTED);
		assert_null(plan);
		assert_non_null(strstr(msg, "f16"));
		assert_non_null(strstr(msg, "cuda"));
	}
}

static void
test_int_limits(void **state)
{
	(void) state;
	fftd__device *dev = &shared_dev;
	struct {
		int64_t     n, batch, istride;
		const char *what;
	} cases[] = {
		{ 3000000000LL, 1, 0, "n = 3000000000" },
		{ 4, 3000000000LL, 0, "batch = 3000000000" },
		{ 4, 1, 3000000000LL, "istride = 3000000000" },
		{ 4, 2, 600000000LL, "idist = 2400000000" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fftd_plan_desc d;
		fftd__shape    s;
		void          *plan = NULL;
		uint64_t       bytes;
		char           msg[MSGLEN] = "";
		desc_init(
		    &d, 1, &cases[i].n, cases[i].batch, FFTD_C2C, FFTD_F32);
		d.istride = cases[i].istride;
		resolve(&d, &s);
		// Refused before anything of that size is allocated.
		assert_int_equal(
		    be->plan(dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg)),
		    FFTD_EUNSUPPORTED);
		assert_null(plan);
		if (strstr(msg, cases[i].what) == NULL) {
			print_error("message \"%s\" lacks \"%s\"\n", msg,
			    cases[i].what);
			fail();
		}
	}
}

static void
test_unknown_algorithm(void **state)
{
	(void) state;
	fftd__device  *dev = &shared_dev;
	int64_t        n[] = { 8 };
	fftd_plan_desc d;
	fftd__shape    s;
	void          *plan = NULL;
	uint64_t       bytes;
	char           msg[MSGLEN] = "";
	desc_init(&d, 1, n, 1, FFTD_C2C, FFTD_F64);
	resolve(&d, &s);
	assert_int_equal(
	    be->plan(dev, &s, "cufft", &plan, &bytes, msg, sizeof(msg)),
	    FFTD_EUNSUPPORTED);
	assert_non_null(strstr(msg, "cufft"));
}

static void
test_in_place_refused(void **state)
{
	(void) state;
	fftd__device  *dev = &shared_dev;
	int64_t        n[] = { 8 };
	fftd_plan_desc d;
	fftd__shape    s;
	void          *plan = NULL;
	uint64_t       bytes;
	char           msg[MSGLEN] = "";
	double         buf[16]     = { 0 };
	desc_init(&d, 1, n, 1, FFTD_C2C, FFTD_F64);
	resolve(&d, &s);
	assert_int_equal(
	    be->plan(dev, &s, "fftw", &plan, &bytes, msg, sizeof(msg)),
	    FFTD_OK);
	assert_int_equal(be->execute(dev, plan, &s, buf, buf, msg, sizeof(msg)),
	    FFTD_EINTERNAL);
	be->destroy(dev, plan);
}

// Every norm with every kind, both directions of C2C, on one layout with
// gaps; and BY_N / ORTHO outputs are the NONE output scaled.
static void
test_norms(void **state)
{
	(void) state;
	fftd__device *dev = &shared_dev;
	geom          g   = { 2, { 6, 15 }, 2, { 0 }, 2, 0, { 7, 17 }, 1, 3 };
	tcase         tc  = { .g = &g };
	int           i   = 0;
	for (int kind = FFTD_C2C; kind <= FFTD_C2R; kind++) {
		for (int p = FFTD_F64; p <= FFTD_F32; p++) {
			for (int norm = 0; norm < 3; norm++) {
				for (int dir = -1; dir <= 1; dir += 2) {
					if ((kind == FFTD_R2C && dir == 1)
					    || (kind == FFTD_C2R
					        && dir == -1)) {
						continue;
					}
					tc.kind = (fftd_kind) kind;
					tc.prec = (fftd_precision) p;
					tc.norm = (fftd_norm) norm;
					tc.dir  = (fftd_direction) dir;
					fftd_plan_desc d;
					case_desc(&tc, &d);
					plan_run(dev, &d, 99 + i++);
				}
			}
		}
	}
}

// FFTW_MEASURE plans on scratch arrays; several threads.
static void
test_measure(void **state)
{
	(void) state;
	fftd__device dev;
	open_dev(&dev, 3, 1);
	static const geom g[] = {
		{ 1, { 256 }, 8, { 0 }, 1, 0, { 0 }, 2, 0 },
		{ 2, { 32, 30 }, 2, { 0 }, 1, 4, { 33, 31 }, 1, 0 },
		{ 3, { 8, 8, 9 }, 3 },
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		for (int kind = FFTD_C2C; kind <= FFTD_C2R; kind++) {
			tcase          tc = { .g = &g[i],
				         .kind   = (fftd_kind) kind,
				         .prec   = i % 2 ? FFTD_F32 : FFTD_F64,
				         .dir  = kind == FFTD_C2R ? FFTD_INVERSE
				                                  : FFTD_FORWARD,
				         .norm = FFTD_NORM_ORTHO };
			fftd_plan_desc d;
			case_desc(&tc, &d);
			plan_run(&dev, &d, 7 + i);
		}
	}
	be->close(&dev);
}

// --- the reference itself ------------------------------------------------

// naive computes the batch by the DFT's definition, in long double, from
// x (laid out as s->in) into y (laid out as s->out, zeroed by the caller).
static void
naive(const fftd__shape *s, const long double *x, long double *y)
{
	int         r    = s->rank;
	int         so   = s->out.complex ? 2 : 1;
	int64_t     nl   = s->n[r - 1];
	long double sign = s->direction == FFTD_INVERSE ? 1 : -1;
	long double f    = 1;
	if (s->norm == FFTD_NORM_BY_N) {
		f = 1.0L / s->total;
	} else if (s->norm == FFTD_NORM_ORTHO) {
		f = 1.0L / sqrtl(s->total);
	}
	int64_t j[FFTD_MAX_RANK], k[FFTD_MAX_RANK], m[FFTD_MAX_RANK];
	for (int64_t b = 0; b < s->batch; b++) {
		int64_t nout = s->total / nl * s->out.n[r - 1];
		for (int64_t ko = 0; ko < nout; ko++) {
			int64_t t = ko;
			for (int d = r - 1; d >= 0; d--) {
				k[d] = t % s->out.n[d];
				t /= s->out.n[d];
			}
			long double sre = 0, sim = 0;
			for (int64_t ji = 0; ji < s->total; ji++) {
				t = ji;
				for (int d = r - 1; d >= 0; d--) {
					j[d] = t % s->n[d];
					t /= s->n[d];
				}
				long double xr, xi;
				if (s->kind == FFTD_R2C) {
					xr = x[fftd__side_index(
					    &s->in, r, b, j)];
					xi = 0;
				} else if (s->kind == FFTD_C2R
				    && j[r - 1] >= s->in.n[r - 1]) {
					// The missing half: conjugate mirror.
					for (int d = 0; d < r; d++) {
						m[d] = (s->n[d] - j[d])
						    % s->n[d];
					}
					int64_t i
					    = fftd__side_index(&s->in, r, b, m);
					xr = x[2 * i];
					xi = -x[2 * i + 1];
				} else {
					int64_t i
					    = fftd__side_index(&s->in, r, b, j);
					xr = x[2 * i];
					xi = x[2 * i + 1];
				}
				long double ph = 0;
				for (int d = 0; d < r; d++) {
					ph += (long double) ((j[d] * k[d])
					          % s->n[d])
					    / s->n[d];
				}
				ph *= 2
				    * 3.14159265358979323846264338327950288L;
				long double c = cosl(ph), sn = sign * sinl(ph);
				sre += xr * c - xi * sn;
				sim += xr * sn + xi * c;
			}
			int64_t o = so * fftd__side_index(&s->out, r, b, k);
			y[o]      = sre * f;
			if (so == 2) {
				y[o + 1] = sim * f;
			}
		}
	}
}

static void
test_ref_vs_naive(void **state)
{
	(void) state;
	static const geom g[] = {
		{ 1, { 15 }, 3, { 0 }, 2, 1, { 0 }, 1, 2 },
		{ 2, { 6, 10 }, 2, { 7, 11 }, 1, 0, { 6, 13 }, 2, 0 },
		{ 3, { 4, 5, 6 }, 2, { 0 }, 1, 3, { 5, 5, 7 }, 1, 0 },
		{ 2, { 3, 7 }, 1 },
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		for (int kind = FFTD_C2C; kind <= FFTD_C2R; kind++) {
			tcase tc = { .g = &g[i],
				.kind   = (fftd_kind) kind,
				.prec   = FFTD_F64,
				.dir    = kind == FFTD_C2R ? FFTD_INVERSE
				       : i % 2 == 1        ? FFTD_INVERSE
				                           : FFTD_FORWARD,
				.norm   = (fftd_norm) ((i + kind) % 3) };
			if (kind == FFTD_R2C) {
				tc.dir = FFTD_FORWARD;
			}
			fftd_plan_desc d;
			fftd__shape    s;
			case_desc(&tc, &d);
			resolve(&d, &s);
			void *in = malloc(s.in.bytes);
			assert_non_null(in);
			fftd_ref_fill_input(in, &s, 5 + i);
			long double *ref = fftd_ref_transform(&s, in);
			assert_non_null(ref);
			int          ri = s.in.complex ? 2 : 1;
			int          ro = s.out.complex ? 2 : 1;
			long double *x  = malloc(s.in.elems * ri * sizeof(*x));
			long double *y  = calloc(s.out.elems * ro, sizeof(*y));
			assert_non_null(x);
			assert_non_null(y);
			for (int64_t e = 0; e < s.in.elems * ri; e++) {
				x[e] = ((double *) in)[e];
			}
			naive(&s, x, y);
			double err = fftd_ref_rel_l2_ld(&s, y, ref);
			// Long double: 64-bit mantissa, eps 5.4e-20.
			if (!(err < 1e-16)) {
				print_error("%s geometry %zu: %.3g\n",
				    kind_name[kind], i, err);
			}
			assert_true(err < 1e-16);
			free(in);
			free(x);
			free(y);
			free(ref);
		}
	}
}

// The checks can fail: a wrong sign, a wrong scale, one wrong element, an
// unwritten element and a dirty gap are all caught.
static void
test_checks_can_fail(void **state)
{
	(void) state;
	geom           g  = { 2, { 16, 12 }, 2, { 0 }, 1, 0, { 17, 12 }, 2, 0 };
	tcase          tc = { .g = &g,
		         .kind   = FFTD_C2C,
		         .prec   = FFTD_F64,
		         .dir    = FFTD_FORWARD,
		         .norm   = FFTD_NORM_NONE };
	fftd_plan_desc d;
	fftd__shape    s;
	case_desc(&tc, &d);
	resolve(&d, &s);
	double bound = fftd_ref_bound(&s);

	void *in  = malloc(s.in.bytes);
	void *out = malloc(s.out.bytes);
	assert_non_null(in);
	assert_non_null(out);
	fftd_ref_fill_input(in, &s, 42);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);

	// The reference rounded to f64 passes, gaps zero.
	fftd_ref_store(out, &s.out, FFTD_F64, ref);
	assert_true(fftd_ref_rel_l2(&s, out, ref) <= bound);
	assert_int_equal(fftd_ref_unwritten(&s, out), 0);
	assert_int_equal(fftd_ref_gaps_nonzero(&s, out), 0);

	// The other sign fails by far.
	fftd__shape s2     = s;
	s2.direction       = FFTD_INVERSE;
	long double *wrong = fftd_ref_transform(&s2, in);
	assert_non_null(wrong);
	double e = fftd_ref_rel_l2_ld(&s, wrong, ref);
	print_message("wrong sign: rel L2 %.3g, bound %.3g\n", e, bound);
	assert_true(e > 1e3 * bound);
	free(wrong);

	// A missing 1/N fails.
	s2      = s;
	s2.norm = FFTD_NORM_BY_N;
	wrong   = fftd_ref_transform(&s2, in);
	assert_non_null(wrong);
	assert_true(fftd_ref_rel_l2_ld(&s, wrong, ref) > bound);
	free(wrong);

	// One element off by 1e-6 of its size fails (f64 bound).
	int64_t j[2] = { 3, 5 };
	int64_t i    = 2 * fftd__side_index(&s.out, 2, 1, j);
	((double *) out)[i] *= 1 + 1e-6;
	assert_true(fftd_ref_rel_l2(&s, out, ref) > bound);
	((double *) out)[i] = (double) ref[i];

	// An unwritten element, and a NaN, are counted once each.
	fftd_ref_poison((double *) out + i, 16);
	assert_int_equal(fftd_ref_unwritten(&s, out), 1);
	assert_true(isnan(fftd_ref_rel_l2(&s, out, ref)));
	fftd_ref_poison(out, s.out.bytes);
	assert_int_equal(
	    fftd_ref_unwritten(&s, out), (size_t) (s.total * s.batch));

	// A gap element not zero: element 1 lies between stride-2 elements.
	fftd_ref_store(out, &s.out, FFTD_F64, ref);
	((double *) out)[2 * 1 + 1] = 1e-300;
	assert_int_equal(fftd_ref_gaps_nonzero(&s, out), 1);

	free(ref);
	free(in);
	free(out);
}

// C2R input from fftd_ref_fill_input is a true half-spectrum: C2R then R2C
// gives it back (times N); raw random input does not, which is why every
// C2R test must use fftd_ref_fill_input.
static void
test_hermitian(void **state)
{
	(void) state;
	static const geom g[] = {
		{ 1, { 16 }, 2 },
		{ 2, { 6, 8 }, 2, { 7, 9 }, 2, 0, { 0 }, 1, 0 },
		{ 3, { 4, 6, 5 }, 1 },
		{ 3, { 3, 4, 10 }, 2 },
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		for (int raw = 0; raw < 2; raw++) {
			tcase          tc = { .g = &g[i],
				         .kind   = FFTD_C2R,
				         .prec   = FFTD_F64,
				         .dir    = FFTD_INVERSE,
				         .norm   = FFTD_NORM_BY_N };
			fftd_plan_desc d;
			fftd__shape    s, sr;
			case_desc(&tc, &d);
			resolve(&d, &s);
			// The R2C back: its input is C2R's output layout.
			fftd_plan_desc dr;
			desc_init(
			    &dr, s.rank, s.n, s.batch, FFTD_R2C, FFTD_F64);
			for (int k = 0; k < s.rank; k++) {
				dr.inembed[k] = s.out.embed[k];
				dr.onembed[k] = s.in.embed[k];
			}
			dr.istride = s.out.stride;
			dr.idist   = s.out.dist;
			dr.ostride = s.in.stride;
			dr.odist   = s.in.dist;
			resolve(&dr, &sr);

			double *in = malloc(s.in.bytes);
			assert_non_null(in);
			if (raw) {
				fftd_ref_fill(in, &s.in, FFTD_F64, 11);
			} else {
				fftd_ref_fill_input(in, &s, 11);
			}
			long double *y = fftd_ref_transform(&s, in);
			assert_non_null(y);
			double *yd = malloc(s.out.bytes);
			assert_non_null(yd);
			fftd_ref_store(yd, &s.out, FFTD_F64, y);
			long double *back = fftd_ref_transform(&sr, yd);
			assert_non_null(back);
			// back is laid out as s.in: compare with in there.
			long double *want
			    = calloc(s.in.elems * 2, sizeof(long double));
			assert_non_null(want);
			for (int64_t e = 0; e < s.in.elems * 2; e++) {
				want[e] = in[e];
			}
			double err = fftd_ref_rel_l2_ld(&sr, back, want);
			if (raw) {
				assert_true(err > 1e-3);
			} else {
				assert_true(err < 1e-14);
			}
			free(want);
			free(back);
			free(yd);
			free(y);
			free(in);
		}
	}
}

static void
test_f16_convert(void **state)
{
	(void) state;
	// Every binary16 value survives f16 -> f32 -> f16.
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = fftd_ref_f16_to_f32((uint16_t) h);
		if (isnan(f)) {
			assert_true(
			    (fftd_ref_f32_to_f16(f) & 0x7c00) == 0x7c00);
			assert_true((fftd_ref_f32_to_f16(f) & 0x3ff) != 0);
			continue;
		}
		assert_int_equal(fftd_ref_f32_to_f16(f), h);
	}
	assert_true(fftd_ref_f16_to_f32(0x3c00) == 1.0f);
	assert_true(fftd_ref_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(fftd_ref_f16_to_f32(0x0001) == 0x1p-24f);
	assert_true(fftd_ref_f16_to_f32(0xc000) == -2.0f);
	// Ties to even, overflow, underflow.
	assert_int_equal(fftd_ref_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	assert_int_equal(fftd_ref_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	assert_int_equal(fftd_ref_f32_to_f16(65519.0f), 0x7bff);
	assert_int_equal(fftd_ref_f32_to_f16(65520.0f), 0x7c00);
	assert_int_equal(fftd_ref_f32_to_f16(0x1p-25f), 0x0000);
	assert_int_equal(fftd_ref_f32_to_f16(0x1.8p-25f), 0x0001);
	assert_int_equal(fftd_ref_f32_to_f16(-0x1.8p-24f), 0x8002);
#ifdef __FLT16_MAX__
	// Against the compiler's own conversion, on floats near every
	// binary16 and random bit patterns.
	uint64_t x = 1;
	for (int i = 0; i < 2000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t bits = (uint32_t) x;
		if (i % 2) { // near the binary16 range
			bits = (bits & 0x80000000)
			    | (0x33000000 + bits % (0x47800000 - 0x33000000));
		}
		float f;
		memcpy(&f, &bits, sizeof(f));
		if (isnan(f)) {
			continue;
		}
		_Float16 hv = (_Float16) f;
		uint16_t want;
		memcpy(&want, &hv, sizeof(want));
		if (fftd_ref_f32_to_f16(f) != want) {
			print_error("%a: got %#x want %#x\n", (double) f,
			    fftd_ref_f32_to_f16(f), want);
			fail();
		}
	}
#endif
}

static void
test_fill_deterministic(void **state)
{
	(void) state;
	int64_t        n[] = { 100 };
	fftd_plan_desc d;
	fftd__shape    s;
	desc_init(&d, 1, n, 3, FFTD_C2C, FFTD_F32);
	d.istride = 2;
	resolve(&d, &s);
	float *a = malloc(s.in.bytes), *b = malloc(s.in.bytes);
	assert_non_null(a);
	assert_non_null(b);
	fftd_ref_fill(a, &s.in, FFTD_F32, 7);
	fftd_ref_fill(b, &s.in, FFTD_F32, 7);
	assert_memory_equal(a, b, s.in.bytes);
	double sum = 0, mx = 0;
	for (int64_t i = 0; i < s.in.elems * 2; i++) {
		assert_true(a[i] >= -1 && a[i] <= 1);
		sum += a[i];
		mx = fmax(mx, fabs(a[i]));
	}
	assert_true(fabs(sum) / (s.in.elems * 2) < 0.1);
	assert_true(mx > 0.9);
	fftd_ref_fill(b, &s.in, FFTD_F32, 8);
	assert_memory_not_equal(a, b, s.in.bytes);
	free(a);
	free(b);
}

// --- main ------------------------------------------------------------------

static tcase cases[3 * 2 * NGEOM];

static void
test_table_case(void **state)
{
	const tcase   *tc = *state;
	fftd_plan_desc d;
	case_desc(tc, &d);
	plan_run(&shared_dev, &d, 1000 + (uint64_t) (tc - cases));
}

int
main(void)
{
	static struct CMUnitTest tests[3 * 2 * NGEOM + 16];
	size_t                   nt = 0;
	int                      ci = 0;

	// One test per (kind, precision, geometry); direction and norm
	// rotate so each kind meets every norm on varied layouts.
	for (int kind = FFTD_C2C; kind <= FFTD_C2R; kind++) {
		for (int p = FFTD_F64; p <= FFTD_F32; p++) {
			for (size_t g = 0; g < NGEOM; g++) {
				tcase *tc = &cases[ci++];
				tc->g     = &geoms[g];
				tc->kind  = (fftd_kind) kind;
				tc->prec  = (fftd_precision) p;
				tc->norm  = (fftd_norm) ((g + kind + p) % 3);
				tc->dir   = kind == FFTD_C2R ? FFTD_INVERSE
				      : kind == FFTD_R2C     ? FFTD_FORWARD
				      : g % 2                ? FFTD_INVERSE
				                             : FFTD_FORWARD;
				const geom *gg = tc->g;
				int o = snprintf(tc->name, sizeof(tc->name),
				    "%s_%s_rank%d_", kind_name[kind],
				    prec_name[p], gg->rank);
				for (int k = 0; k < gg->rank; k++) {
					o += snprintf(tc->name + o,
					    sizeof(tc->name) - o, "%s%lld",
					    k ? "x" : "", (long long) gg->n[k]);
				}
				snprintf(tc->name + o, sizeof(tc->name) - o,
				    "_b%lld%s_%s_%s", (long long) gg->batch,
				    (gg->istride > 1 || gg->ostride > 1
				        || gg->ipad || gg->opad
				        || gg->inembed[0] || gg->onembed[0])
				        ? "_gaps"
				        : "",
				    tc->dir == FFTD_FORWARD ? "fwd" : "inv",
				    norm_name[tc->norm]);
				tests[nt++] = (struct CMUnitTest) { tc->name,
					test_table_case, NULL, NULL, tc };
			}
		}
	}
#define ADD(f) tests[nt++] = (struct CMUnitTest) cmocka_unit_test(f)
	ADD(test_probe_open_close);
	ADD(test_f16_unsupported);
	ADD(test_int_limits);
	ADD(test_unknown_algorithm);
	ADD(test_in_place_refused);
	ADD(test_norms);
	ADD(test_measure);
	ADD(test_ref_vs_naive);
	ADD(test_checks_can_fail);
	ADD(test_hermitian);
	ADD(test_f16_convert);
	ADD(test_fill_deterministic);
#undef ADD
	return _cmocka_run_group_tests(
	    "backend_fftw", tests, nt, group_setup, group_teardown);
}

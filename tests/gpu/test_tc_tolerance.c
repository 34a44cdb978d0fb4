// SPDX-License-Identifier: MIT
//
// test_tc_tolerance.c — accuracy-aware "auto" on the GPU (issue 18 item
// 5): over sizes (1D 2^10, 2^14, 2^17, 2^20; 2D 1024^2) and tolerances
// (1e-2, 1e-3, 1e-4, 1e-6; and 1e-12 for f64), on fresh random f32 and f64
// data (also scaled by 1e6 and 1e-6, so that the fp16 scaling of tc16's
// conversions is exercised), every transform's relative L2 error against
// FFTW in long double is within the tolerance, no output element is left
// unwritten (poisoned outputs), and the algorithm reported is one whose
// error bound (common/errtable.c) fits the tolerance, or the data's own
// cuFFT. The choices are printed; nothing is timed or asserted about
// speed. (3D joins the sizes once the tc kernels serve it.)
//
// Without FFTD_TEST_GPU=1 and a usable GPU every test reports itself
// skipped.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../util/cases.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "../util/ref.h"
#include "errtable.h"
#include "fftd.h"
#include "layout.h"

#define TIMEOUT_MS 300000

static struct {
	const char      *skip_reason;
	fftd_test_daemon d;
	fftd_client     *c;
} g;

static const char *const DAEMON_ARGS[]
    = { "--backend", "cuda", "--log-level", "debug", NULL };

static fftd_test_fixture FX = {
	.daemon     = { { &g.d, &g.c, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.check_exit = 1,
};

// One shape: rank, sizes, batch (about 2^21 points in all).
typedef struct tshape {
	int     rank;
	int64_t n[2];
	int64_t batch;
} tshape;

static const tshape shapes[] = {
	{ 1, { 1 << 10 }, 64 },
	{ 1, { 1 << 14 }, 8 },
	{ 1, { 1 << 17 }, 4 },
	{ 1, { 1 << 20 }, 2 },
	{ 2, { 1024, 1024 }, 2 },
};
static const double tols[]   = { 1e-2, 1e-3, 1e-4, 1e-6, 1e-12 };
static const double scales[] = { 1.0, 1e6, 1e-6 };

// bound_of is the error table's bound of the algorithm reported (name) for
// data of precision p and n points, or -1 for the data's own cuFFT (the
// fallback, which tolerance 0 runs too).
static double
bound_of(const char *name, fftd_precision p, int64_t n)
{
	for (int i = 0; i < fftd__err_nrows; i++) {
		const fftd__err_row *r = &fftd__err_rows[i];
		char                 nm[16];
		if (strcmp(r->backend, "cuda") != 0
		    || fftd__err_prec_rank(r->compute)
		        > fftd__err_prec_rank(p)) {
			continue;
		}
		if (strcmp(fftd__err_name(r, p, nm), name) != 0) {
			continue;
		}
		if (strcmp(name, "cufft") == 0) {
			return -1;
		}
		return fftd__err_bound(r, p, n);
	}
	fail_msg("algorithm \"%s\" is not in the error table for %s data", name,
	    p == FFTD_F64 ? "f64" : "f32");
	return 0;
}

// worst_transform is the largest relative L2 error of one transform of
// the dense C2C batch out (precision p) against ref (long double pairs).
static double
worst_transform(const fftd__shape *s, fftd_precision p, const void *out,
    const long double *ref)
{
	double worst = 0;
	for (int64_t b = 0; b < s->batch; b++) {
		long double num = 0, den = 0;
		for (int64_t j = 0; j < 2 * s->total; j++) {
			int64_t     i = b * 2 * s->total + j;
			long double x = p == FFTD_F64
			    ? ((const double *) out)[i]
			    : ((const float *) out)[i];
			long double d = x - ref[i];
			num += d * d;
			den += ref[i] * ref[i];
		}
		double e
		    = den > 0 ? (double) sqrtl(num / den) : (double) sqrtl(num);
		if (!(e <= worst)) { // NaN sticks
			worst = e;
		}
	}
	return worst;
}

// run_table runs every shape, scale and tolerance on data of precision p.
static void
run_table(fftd_precision p)
{
	fftd_test_gpu_skip_test(g.skip_reason);
	int      failed = 0;
	uint64_t seed   = fftd_test_seed() + (uint64_t) p * 1000;
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		const tshape  *t = &shapes[k];
		fftd_plan_desc d;
		fftd__shape    s;
		char           msg[256];
		assert_int_equal(
		    fftd_plan_desc_init(&d, t->rank, t->n, FFTD_C2C, p),
		    FFTD_OK);
		d.batch = t->batch;
		assert_int_equal(
		    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)),
		    FFTD_OK);
		void *in  = malloc(s.in.bytes);
		void *out = malloc(s.out.bytes);
		assert_non_null(in);
		assert_non_null(out);
		for (size_t sc = 0; sc < sizeof(scales) / sizeof(scales[0]);
		     sc++) {
			fftd_ref_fill_input(in, &s, seed++);
			for (int64_t i = 0; i < 2 * s.in.elems; i++) {
				if (p == FFTD_F64) {
					((double *) in)[i] *= scales[sc];
				} else {
					((float *) in)[i] *= (float) scales[sc];
				}
			}
			long double *ref = fftd_ref_transform(&s, in);
			assert_non_null(ref);
			for (size_t ti = 0; ti < sizeof(tols) / sizeof(tols[0]);
			     ti++) {
				double tol = tols[ti];
				if (p == FFTD_F32 && tol < 1e-6) {
					continue; // below what f32 data holds
				}
				d.tolerance = tol;
				fftd_plan *plan;
				int rv = fftd_plan_create(g.c, &d, &plan);
				if (rv != FFTD_OK) {
					print_message("plan: %s: %s\n",
					    fftd_err_name(rv),
					    fftd_last_error());
					failed++;
					continue;
				}
				const char *alg = fftd_plan_algorithm(plan);
				fftd_ref_poison(out, s.out.bytes);
				rv        = fftd_execute(plan, in, out);
				double e  = rv == FFTD_OK
				     ? worst_transform(&s, p, out, ref)
				     : INFINITY;
				double b  = bound_of(alg, p, s.total);
				bool   ok = rv == FFTD_OK
				    && fftd_ref_unwritten(&s, out) == 0
				    && e <= tol && b <= tol;
				print_message(
				    "%s %dD %lld%s x %lld scale %g tol "
				    "%g: %s (bound %.2g) error %.2e%s\n",
				    p == FFTD_F64 ? "f64" : "f32", t->rank,
				    (long long) t->n[0],
				    t->rank == 2 ? "^2" : "",
				    (long long) t->batch, scales[sc], tol, alg,
				    b, e, ok ? "" : "  FAILED");
				failed += !ok;
				fftd_plan_destroy(plan);
			}
			free(ref);
		}
		free(in);
		free(out);
	}
	assert_int_equal(failed, 0);
}

static void
test_f32_data(void **state)
{
	(void) state;
	run_table(FFTD_F32);
}

static void
test_f64_data(void **state)
{
	(void) state;
	run_table(FFTD_F64);
}

int
main(void)
{
	g.skip_reason                   = fftd_test_gpu_start(&FX);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_data),
		cmocka_unit_test(test_f64_data),
	};
	return fftd_test_run_group("tc_tolerance", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_mf_sigmasq.c — the matched-filter bank's sigma^2 modes
// (fftd_mf_desc's sigmasq_mode: COMPUTE, STORE, USE) through a real
// `fftd --backend fftw`, on fresh random problems (FFTD_TEST_SEED repeats
// a run): f64 and f32, N of 1000 and 4096, a random slice of a resident
// bank of 20 templates and a random request each; the checks are
// tests/util/mf_sigmasq.h's (STORE and USE give COMPUTE's bits, USE takes
// the values given, bad values, spans and modes are refused with typed
// errors and nothing written). tests/gpu/test_gpu_arrays.c makes the same
// checks on the cuda backend's engines.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/mf_ref.h"
#include "../util/mf_sigmasq.h"
#include "fftd.h"

#define TIMEOUT_MS 60000
#define NTEMPLATES 20

static fftd_test_daemon  D; // the shared daemon (fftw backend, defaults)
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
};

// test_modes: per precision and N, one resident bank, a random slice and
// request, the three modes checked.
static void
test_modes(void **state)
{
	(void) state;
	static const int64_t sizes[] = { 1000, 4096 };
	for (int pi = 0; pi < 2; pi++) {
		fftd_precision p = pi == 0 ? FFTD_F64 : FFTD_F32;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint64_t s
			    = fftd_test_case_seed(900 + 10 * (uint64_t) pi + i);
			fftd_test_mf b;
			fftd_test_mf_new(&b, sizes[i], p, NTEMPLATES,
			    fftd_test_mf_rng_next(&s));
			size_t rs = fftd_test_mf_real_size(p);
			size_t nb = (size_t) b.nbins;
			// D and S in one array, the templates in another, at
			// offsets of whole reals that are not 64-byte aligned
			fftd_test_mf_span sp = { .c = C, .dev = 0 };
			sp.data_off          = 3 * rs;
			sp.psd_off  = sp.data_off + 2 * nb * rs + 5 * rs;
			size_t tb   = 2 * nb * rs;
			size_t toff = 12 * rs;
			ASSERT_OK(fftd_array_create(
			    C, 0, sp.psd_off + nb * rs + 7 * rs, &sp.dp));
			ASSERT_OK(fftd_array_create(C, 0,
			    toff + (size_t) NTEMPLATES * tb + 3 * rs, &sp.tpl));
			ASSERT_OK(fftd_array_write(
			    sp.dp, sp.data_off, b.data, 2 * nb * rs));
			ASSERT_OK(fftd_array_write(
			    sp.dp, sp.psd_off, b.psd, nb * rs));
			ASSERT_OK(fftd_array_write(sp.tpl, toff, b.templates,
			    (size_t) NTEMPLATES * tb));
			b.count = fftd_test_mf_range(&s, 2, NTEMPLATES);
			b.first
			    = fftd_test_mf_range(&s, 0, NTEMPLATES - b.count);
			sp.tpl_off = toff + (size_t) b.first * tb;
			size_t  maxt;
			int64_t idx[3];
			int     ns;
			fftd_test_mf_draw(
			    &b, &s, (int) b.count, &maxt, idx, &ns);
			printf("%s N = %lld: templates [%lld, %lld)\n",
			    p == FFTD_F64 ? "f64" : "f32", (long long) b.n,
			    (long long) b.first,
			    (long long) (b.first + b.count));
			fftd_test_mf_sigmasq(&sp, &b, maxt, idx, ns);
			fftd_array_destroy(sp.dp);
			fftd_array_destroy(sp.tpl);
			fftd_test_mf_free(&b);
		}
	}
	fftd_test_mf_print_worst("fftw");
}

int
main(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
	};
	return fftd_test_run_group("mf_sigmasq[fftw]", tests, &FX);
}

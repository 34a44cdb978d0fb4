// SPDX-License-Identifier: MIT
//
// test_tc_host.c — host unit tests of the tensor-core FFT kernels' pure-host
// parts (kernels/tc_host.c, kernels/tc.h): error codes, the pass
// decomposition of every size class, twiddle tables against long double,
// fp16 rounding (round-to-nearest-even, as cvt.rn.f16.f32), the split16
// hi/lo split and its scale, and the shared-memory swizzles, which must make
// every warp-wide access pattern of the kernels conflict-free. No GPU needed.

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc.h"

static void test_errors(void **state)
{
	(void)state;
	assert_string_equal(fftd_tc_strerror(FFTD_TC_OK), "success");
	assert_string_equal(fftd_tc_strerror(FFTD_TC_EUNSUPPORTED), "size, rank or algorithm not supported");
	assert_int_equal(fftd_tc_cuda_error(FFTD_TC_ECUDA_BASE - 2), 2);
	assert_int_equal(fftd_tc_cuda_error(FFTD_TC_EINVAL), 0);
	assert_string_equal(fftd_tc_strerror(FFTD_TC_ECUDA_BASE - 700), "CUDA runtime error");
}

static void test_layout_1d(void **state)
{
	(void)state;
	fftd__tc_layout lay;
	for (int l = 8; l <= 24; l++) {
		int64_t n = (int64_t)1 << l;
		int     rc = fftd__tc_plan_layout(1, &n, 3, &lay);
		if (l == 15) { // 2^15: no single block, no split into two >= 256
			assert_int_equal(rc, FFTD_TC_EUNSUPPORTED);
			continue;
		}
		assert_int_equal(rc, FFTD_TC_OK);
		assert_int_equal(lay.points, n);
		if (n <= FFTD__TC_MAX_LEN) {
			assert_int_equal(lay.npass, 1);
			assert_int_equal(lay.pass[0].len, n);
			assert_int_equal(lay.pass[0].q_total, 3);
			assert_int_equal(lay.pass[0].s_in, 1);
			assert_int_equal(lay.ws_points, 0);
		} else {
			assert_int_equal(lay.npass, 2);
			int64_t n1 = lay.pass[0].len, n2 = lay.pass[1].len;
			assert_int_equal(n1 * n2, n);
			assert_true(n1 >= 256 && n1 <= 4096 && n2 >= 256 && n2 <= 4096);
			assert_true(n2 >= n1);
			assert_int_equal(lay.pass[0].s_in, n2);
			assert_int_equal(lay.pass[0].s_out, n2);
			assert_int_equal(lay.pass[0].tw_n, n);
			assert_int_equal(lay.pass[0].q_total, 3 * n2);
			assert_int_equal(lay.pass[1].s_in, 1);
			assert_int_equal(lay.pass[1].s_out, n1);
			assert_int_equal(lay.pass[1].q_total, 3 * n1);
			assert_int_equal(lay.pass[0].dst, FFTD__TC_BUF_WS);
			assert_int_equal(lay.pass[1].src, FFTD__TC_BUF_WS);
			assert_int_equal(lay.ws_points, 3 * n);
		}
	}
	int64_t bad[] = {128, 300, (int64_t)1 << 25, 0, -256};
	int     want[] = {FFTD_TC_EUNSUPPORTED, FFTD_TC_EUNSUPPORTED, FFTD_TC_EUNSUPPORTED, FFTD_TC_EINVAL,
            FFTD_TC_EINVAL};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(fftd__tc_plan_layout(1, &bad[i], 1, &lay), want[i]);
	int64_t n = 4096;
	assert_int_equal(fftd__tc_plan_layout(1, &n, 0, &lay), FFTD_TC_EINVAL);
	assert_int_equal(fftd__tc_plan_layout(1, NULL, 1, &lay), FFTD_TC_EINVAL);
	assert_int_equal(fftd__tc_plan_layout(1, &n, (int64_t)1 << 40, &lay), FFTD_TC_EINVAL);
	int64_t d3[3] = {256, 256, 256};
	assert_int_equal(fftd__tc_plan_layout(3, d3, 1, &lay), FFTD_TC_EUNSUPPORTED);
	assert_int_equal(fftd_tc_plan_supported((fftd_tc_algo)7, 1, &n, 1), FFTD_TC_EINVAL);
	assert_int_equal(fftd_tc_plan_supported(FFTD_TC_SPLIT16, 1, &n, 1), FFTD_TC_OK);
}

static void test_layout_2d(void **state)
{
	(void)state;
	fftd__tc_layout lay;
	for (int a = 8; a <= 12; a++)
		for (int b = 8; b <= 12; b++) {
			int64_t d[2] = {(int64_t)1 << a, (int64_t)1 << b};
			assert_int_equal(fftd__tc_plan_layout(2, d, 5, &lay), FFTD_TC_OK);
			assert_int_equal(lay.npass, 2);
			assert_int_equal(lay.pass[0].len, d[1]);
			assert_int_equal(lay.pass[0].q_total, 5 * d[0]);
			assert_int_equal(lay.pass[0].s_in, 1);
			assert_int_equal(lay.pass[1].len, d[0]);
			assert_int_equal(lay.pass[1].s_in, d[1]);
			assert_int_equal(lay.pass[1].s_out, d[1]);
			assert_int_equal(lay.pass[1].q_total, 5 * d[1]);
			assert_int_equal(lay.pass[1].src, FFTD__TC_BUF_OUT);
			assert_int_equal(lay.ws_points, 0);
		}
	int64_t d1[2] = {128, 256}, d2[2] = {256, 8192}, d3[2] = {256, 300};
	assert_int_equal(fftd__tc_plan_layout(2, d1, 1, &lay), FFTD_TC_EUNSUPPORTED);
	assert_int_equal(fftd__tc_plan_layout(2, d2, 1, &lay), FFTD_TC_EUNSUPPORTED);
	assert_int_equal(fftd__tc_plan_layout(2, d3, 1, &lay), FFTD_TC_EUNSUPPORTED);
}

static void test_twiddles(void **state)
{
	(void)state;
	const int64_t n = 4096;
	float        *w = malloc(2 * n * sizeof *w);
	assert_non_null(w);
	fftd__tc_twiddles(n, n, 1, w);
	double worst = 0;
	for (int64_t j = 0; j < n; j++) {
		long double a = 2.0L * 3.14159265358979323846264338327950288L * j / n;
		worst         = fmax(worst, fabs((double)(w[2 * j] - cosl(a))));
		worst         = fmax(worst, fabs((double)(w[2 * j + 1] + sinl(a))));
	}
	assert_true(worst <= 6.0e-8); // rounded to float: half an ulp of 1
	assert_true(w[2 * 1024] == 0.0f && w[2 * 1024 + 1] == -1.0f);
	assert_true(w[2 * 2048] == -1.0f && w[2 * 2048 + 1] == 0.0f);
	assert_true(w[2 * 3072] == 0.0f && w[2 * 3072 + 1] == 1.0f);
	// strided: W_N^(4096 j) for the four-step's high table
	float hi[2 * 8];
	fftd__tc_twiddles((int64_t)1 << 15, 8, 4096, hi);
	for (int j = 0; j < 8; j++) {
		long double a = 2.0L * 3.14159265358979323846264338327950288L * j / 8;
		assert_true(fabs((double)(hi[2 * j] - cosl(a))) <= 6e-8);
		assert_true(fabs((double)(hi[2 * j + 1] + sinl(a))) <= 6e-8);
	}
	free(w);
}

static float bits_f(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

static void test_f16(void **state)
{
	(void)state;
	struct {
		float    x;
		uint16_t h;
	} c[] = {
	    {1.0f, 0x3c00}, {-2.0f, 0xc000}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff}, {65520.0f, 0x7c00},
	    {1e9f, 0x7c00}, {0.0f, 0x0000}, {-0.0f, 0x8000}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000},
	    {0x1.8p-25f, 0x0001}, {0x1.8p-24f, 0x0002}, {0x1p-14f, 0x0400}, {0x1.ff8p-15f, 0x03ff}, {0x1.ffcp-15f, 0x0400},
	    {1.0f + 0x1p-11f, 0x3c00}, {1.0f + 0x3p-11f, 0x3c02}, {1.0f + 0x1p-10f, 0x3c01},
	    {0x1p-30f, 0x0000},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		assert_int_equal(fftd__tc_f16_from_f32(c[i].x), c[i].h);
	assert_int_equal(fftd__tc_f16_from_f32(bits_f(0x7fc00000u)) & 0x7e00, 0x7e00);
	assert_int_equal(fftd__tc_f16_from_f32(bits_f(0x7f800000u)), 0x7c00);
	for (uint32_t h = 0; h < 0x10000u; h++) {
		if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
			continue; // NaN payloads
		float f = fftd__tc_f32_from_f16((uint16_t)h);
		assert_int_equal(fftd__tc_f16_from_f32(f), h);
	}
}

static void test_split(void **state)
{
	(void)state;
	srand(12345);
	for (int k = 0; k < 200000; k++) {
		// magnitudes over many decades, as inside a long FFT
		float mag = ldexpf(1.0f, (rand() % 60) - 30);
		float x   = mag * (2.0f * rand() / (float)RAND_MAX - 1.0f);
		float m   = fabsf(x) * (1.0f + (rand() % 4)); // the tile max >= |x|
		uint32_t mb;
		memcpy(&mb, &m, sizeof mb);
		int e = fftd__tc_scale_exp(mb);
		if (m > 0) {
			float ms = ldexpf(m, e);
			assert_true(ms >= 8192.0f && ms < 16384.0f);
		}
		uint16_t hi, lo;
		fftd__tc_split(x, e, &hi, &lo);
		double xs = ldexp((double)x, e);
		double r  = (double)fftd__tc_f32_from_f16(hi) + (double)fftd__tc_f32_from_f16(lo);
		// hi carries 11 bits, lo 11 more; lo may be subnormal only for
		// values far below the tile max, where 2^-24 absolute is fine
		double tol = fmax(fabs(xs) * 0x1p-22, 0x1p-24);
		assert_true(fabs(r - xs) <= tol);
	}
	assert_int_equal(fftd__tc_scale_exp(0), 140 - 14);
}

// ---- shared-memory bank conflicts of every kernel access pattern --------

typedef uint32_t (*swz_fn)(uint32_t);

static uint32_t elem_off(int e, uint32_t rs, uint32_t cs)
{
	return 8u * rs * ((e >> 1) & 1) + cs * (e & 1) + 8u * cs * (e >> 2);
}

// Wavefronts a warp needs for idx[0..31]: 4-byte words over 32 banks (whole
// warp), or 8-byte words over 16 bank pairs (each half-warp separately).
static int wavefronts(const uint32_t *idx, int bytes, swz_fn swz)
{
	int worst = 0;
	int groups = bytes == 4 ? 1 : 2, lanes = 32 / groups, banks = bytes == 4 ? 32 : 16;
	for (int h = 0; h < groups; h++) {
		for (int b = 0; b < banks; b++) {
			uint32_t seen[32];
			int      ns = 0;
			for (int l = h * lanes; l < (h + 1) * lanes; l++) {
				uint32_t p = swz(idx[l]);
				if ((int)(p % (uint32_t)banks) != b)
					continue;
				int dup = 0;
				for (int s = 0; s < ns; s++)
					dup |= seen[s] == p;
				if (!dup)
					seen[ns++] = p;
			}
			if (ns > worst)
				worst = ns;
		}
	}
	return worst;
}

static int check_config(int L, int C, int NT, int bytes, swz_fn swz, int strided)
{
	int R = L / 256, worst = 1;
	uint32_t idx[32];
#define CHECK()                                                                 \
	do {                                                                    \
		int w_ = wavefronts(idx, bytes, swz);                           \
		if (w_ > worst)                                                 \
			worst = w_;                                             \
	} while (0)
	for (int warp = 0; warp < NT / 32; warp++) {
		// copies
		for (int j = 0; j < C * L / NT; j++) {
			for (int l = 0; l < 32; l++) {
				int tid = warp * 32 + l;
				idx[l]  = strided ? (uint32_t)((tid % C) * L + tid / C + j * (NT / C))
				                  : (uint32_t)(tid + j * NT);
			}
			CHECK();
		}
		// level 1 (gather and write) for a few (f, a)
		for (int f = 0; f < C; f += (C > 1 ? C - 1 : 1))
			for (int a = 0; a < R; a += (R > 2 ? R / 2 - 1 : 1))
				for (int e = 0; e < 8; e++) {
					for (int l = 0; l < 32; l++) {
						int g = l >> 2, t = l & 3;
						idx[l] = (uint32_t)(f * L + a + R * (g + 32 * t)) + elem_off(e, R, 16 * R);
					}
					CHECK();
					for (int l = 0; l < 32; l++) {
						int g = l >> 2, t = l & 3;
						idx[l] = (uint32_t)(f * L + 256 * a + g + 32 * t) + elem_off(e, 1, 16);
					}
					CHECK();
				}
		// level 2
		if (R >= 2 && R <= 8) {
			for (int j = 0; j < C * 256 / NT; j++)
				for (int x = 0; x < R; x++) {
					for (int l = 0; l < 32; l++) {
						int pidx = warp * 32 + l + j * NT;
						idx[l]   = (uint32_t)((pidx / 256) * L + pidx % 256 + 256 * x);
					}
					CHECK();
				}
		}
		if (R >= 16) {
			int RR = R / 16;
			for (int kb0 = 0; kb0 < 256; kb0 += 16 * 5)
				for (int b = 0; b < RR; b++)
					for (int e = 0; e < 8; e++) {
						for (int l = 0; l < 32; l++) {
							int g = l >> 2, t = l & 3;
							idx[l] = (uint32_t)(kb0 + 4096 * b + g + 512 * t) + elem_off(e, 1, 256);
						}
						CHECK();
						for (int l = 0; l < 32; l++) {
							int g = l >> 2, t = l & 3;
							idx[l] = (uint32_t)(kb0 + 256 * b + g + 512 * RR * t) +
							    elem_off(e, 1, 256 * (uint32_t)RR);
						}
						CHECK();
					}
		}
	}
#undef CHECK
	return worst;
}

static uint32_t swz4(uint32_t p) { return fftd__tc_swz4(p); }
static uint32_t swz8(uint32_t p) { return fftd__tc_swz8(p); }

static void test_swizzle(void **state)
{
	(void)state;
	// bijections that stay inside each 32-word (16-word) row
	for (uint32_t p = 0; p < 65536; p++) {
		assert_int_equal(fftd__tc_swz4(p) >> 5, p >> 5);
		assert_int_equal(fftd__tc_swz8(p) >> 4, p >> 4);
		assert_int_equal(fftd__tc_swz4(fftd__tc_swz4(p)), p); // XOR with f(high bits): an involution
		assert_int_equal(fftd__tc_swz8(fftd__tc_swz8(p)), p);
	}
	// linear: swz(a ^ b) = swz(a) ^ swz(b) ^ swz(0)
	for (uint32_t a = 1; a < 65536; a = a * 3 + 7)
		for (uint32_t b = 5; b < 65536; b = b * 5 + 3)
			assert_int_equal(fftd__tc_swz4(a ^ b), fftd__tc_swz4(a) ^ fftd__tc_swz4(b));
	static const int warps4[] = {8, 8, 8, 8, 8, 16, 16}; // tc16 contiguous 256 .. 16384
	for (int l = 8; l <= 14; l++) {
		int L = 1 << l, C = fftd__tc_block_ffts(L, 0, 4, 0), W = warps4[l - 8];
		assert_int_equal(check_config(L, C, W * 32, 4, swz4, 0), 1);
		assert_int_equal(check_config(L, C, W * 32, 8, swz8, 0), 1);
	}
	for (int wide = 0; wide < 2; wide++)
		for (int l = 8; l <= 12; l++) {
			int L  = 1 << l;
			int C4 = fftd__tc_block_ffts(L, 1, 4, wide), C8 = fftd__tc_block_ffts(L, 1, 8, wide);
			int W4 = C4 * L / 256 / 2, W8 = C8 * L / 256 / 2;
			W4     = W4 < 4 ? 4 : (W4 > 16 ? 16 : W4);
			W8     = W8 < 4 ? 4 : (W8 > 16 ? 16 : W8);
			int c4 = check_config(L, C4, W4 * 32, 4, swz4, 1), c8 = check_config(L, C8, W8 * 32, 8, swz8, 1);
			print_message("strided%s L=%d: tc16 C=%d worst %d, split16 C=%d worst %d\n", wide ? " wide" : "", L,
			    C4, c4, C8, c8);
			assert_true(c4 <= 1);
			assert_true(c8 <= 1);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_layout_1d),
	    cmocka_unit_test(test_layout_2d),
	    cmocka_unit_test(test_twiddles),
	    cmocka_unit_test(test_f16),
	    cmocka_unit_test(test_split),
	    cmocka_unit_test(test_swizzle),
	};
	return cmocka_run_group_tests_name("tc_host", tests, NULL, NULL);
}

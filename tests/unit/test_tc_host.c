// SPDX-License-Identifier: MIT
//
// test_tc_host.c — host unit tests of the tensor-core FFT kernels' pure-host
// parts (kernels/tc_host.c, kernels/tc.h): error codes, the pass
// decomposition of every size class, twiddle tables against long double
// (and the pass kernel's two-factor level-1 twiddles), fp16 rounding
// (round-to-nearest-even, as cvt.rn.f16.f32), the split16 hi/lo split and
// its scale. The shared-memory swizzles are test_tc_swizzle.c's. No GPU
// needed.

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc.h"

static void
test_errors(void **state)
{
	(void) state;
	assert_string_equal(fftd__tc_strerror(FFTD__TC_OK), "success");
	assert_string_equal(fftd__tc_strerror(FFTD__TC_EUNSUPPORTED),
	    "size, rank or algorithm not supported");
	assert_int_equal(fftd__tc_cuda_error(FFTD__TC_ECUDA_BASE - 2), 2);
	assert_int_equal(fftd__tc_cuda_error(FFTD__TC_EINVAL), 0);
	assert_string_equal(
	    fftd__tc_strerror(FFTD__TC_ECUDA_BASE - 700), "CUDA runtime error");
}

// Largest number of neighbouring columns a column pass of len points moves
// at once, over both algorithms and both column-run widths.
static int
max_block_ffts(int len)
{
	int c = 1;
	for (int eb = 4; eb <= 8; eb *= 2)
		for (int wide = 0; wide < 2; wide++) {
			int x = fftd__tc_block_ffts(len, 1, eb, wide);
			if (x > c)
				c = x;
		}
	return c;
}

// tc16's layout of a C2C shape (tc.h, fftd__tc_plan_layout_algo); split16's
// differs only at 1D 2^15 and 2^24 (test_layout_1d).
static int
c2c_layout(int rank, const int64_t *dims, int64_t batch, fftd__tc_layout *lay)
{
	return fftd__tc_plan_layout_algo(
	    FFTD__TC_TC16, FFTD__TC_C2C, rank, dims, batch, lay);
}

// Structural checks of a 1D layout: pass lengths within the kernels' limits,
// their product N, every FFT of every pass covered (q_total * len = batch N),
// strides that the kernels' column groups tile, a buffer chain IN -> ... ->
// OUT where only in-place-safe passes (same positions read and written) run
// in place, and the workspace the chain uses. limits = 0 skips the kernels'
// length limits (small instances of the schemes).
static void
check_layout_1d(
    const fftd__tc_layout *lay, int64_t n, int64_t batch, int limits)
{
	int64_t prod    = 1;
	int     uses_ws = 0;
	assert_int_equal(lay->points, n);
	assert_true(lay->npass >= 1 && lay->npass <= FFTD__TC_MAX_PASSES);
	for (int i = 0; i < lay->npass; i++) {
		const fftd__tc_pass *p       = &lay->pass[i];
		int                  strided = p->s_in > 1 || p->s_out > 1;
		prod *= p->len;
		assert_int_equal(p->q_total * p->len, batch * n);
		if (!limits) {
			// index algebra only
		} else if (p->len
		    < FFTD__TC_MIN_LEN) { // a CUDA-core radix pass
			assert_true(p->len == 2 || p->len == 4 || p->len == 8);
			assert_int_equal(p->tw_n, 0);
		} else {
			assert_true(
			    p->len <= (strided ? FFTD__TC_MAX_STRIDED_LEN
			                       : FFTD__TC_MAX_LEN));
			int c = max_block_ffts(p->len);
			if (strided) {
				assert_true(p->s_in == 1 || p->s_in % c == 0);
				assert_true(p->s_out == 1 || p->s_out % c == 0);
				assert_int_equal(p->q_total % c, 0);
			}
		}
		// strides are powers of two and tile the transform
		assert_true(p->s_in >= 1 && (p->s_in & (p->s_in - 1)) == 0);
		assert_true(p->s_out >= 1 && (p->s_out & (p->s_out - 1)) == 0);
		assert_int_equal((batch * n) % (p->len * p->s_in), 0);
		assert_int_equal((batch * n) % (p->len * p->s_out), 0);
		if (p->tw_n > 0) {
			assert_true(p->tw_n <= FFTD__TC_MAX_1D
			    && p->tw_n % p->len == 0);
			assert_true(!limits
			    || p->len
			        >= FFTD__TC_MIN_LEN); // twiddles: tensor-core
			                              // passes
			// the twiddle exponent (q % s_in) k stays below tw_n
			assert_true((p->s_in - 1) * (p->len - 1) < p->tw_n);
			// the compiled twiddle kinds (tc.h, fftd__tc_tw_kind):
			// the cheap two-pass kind needs s_in = s_out and tw_n
			// <= 2^24; the general kind is compiled for columns of
			// 256 and 512
			int kind = fftd__tc_tw_kind(p);
			assert_true(kind == 1 || kind == 2);
			if (kind == 1)
				assert_true(p->s_in == p->s_out
				    && p->tw_n <= ((int64_t) 1 << 24));
			else if (limits)
				assert_true(p->len == 256 || p->len == 512);
		} else {
			assert_int_equal(fftd__tc_tw_kind(p), 0);
		}
		assert_int_equal(
		    p->src, i == 0 ? FFTD__TC_BUF_IN : lay->pass[i - 1].dst);
		if (i == lay->npass - 1)
			assert_int_equal(p->dst, FFTD__TC_BUF_OUT);
		else
			assert_true(p->dst
			    != FFTD__TC_BUF_IN); // the caller's input is never
			                         // written (unless in == out)
		if (p->s_in != p->s_out)
			assert_true(p->src != p->dst);
		uses_ws
		    |= p->src == FFTD__TC_BUF_WS || p->dst == FFTD__TC_BUF_WS;
	}
	assert_int_equal(prod, n);
	assert_int_equal(lay->ws_points, uses_ws ? batch * n : 0);
}

static void
test_layout_1d(void **state)
{
	(void) state;
	fftd__tc_layout lay;
	for (int l = 8; l <= 27; l++) {
		int64_t n = (int64_t) 1 << l;
		for (int64_t batch = 1; batch <= 3; batch += 2) {
			assert_int_equal(
			    c2c_layout(1, &n, batch, &lay), FFTD__TC_OK);
			check_layout_1d(&lay, n, batch, 1);
			// the fewest passes: one while a block holds the FFT
			// (tc16: 2^15, 128 KiB in place), two up to 4096^2
			// (the largest column pass squared), else three
			assert_int_equal(
			    lay.npass, l <= 15 ? 1 : (l <= 24 ? 2 : 3));
			// split16's layout: the same but at 2^15, two passes
			// (4096 x radix 8), and at 2^24, three passes of 256
			// (tc_host.c, max_single, two_pass_max)
			fftd__tc_layout sl;
			assert_int_equal(
			    fftd__tc_plan_layout_algo(FFTD__TC_SPLIT16,
			        FFTD__TC_C2C, 1, &n, batch, &sl),
			    FFTD__TC_OK);
			check_layout_1d(&sl, n, batch, 1);
			// no tc16 pass on the CUDA cores' radix kernels, no
			// split16 pass longer than its shared memory holds
			for (int i = 0; i < lay.npass; i++)
				assert_true(
				    lay.pass[i].len > FFTD__TC_MAX_RADIX);
			for (int i = 0; i < sl.npass; i++)
				assert_true(
				    sl.pass[i].len <= FFTD__TC_MAX_LEN_SPLIT16);
			assert_int_equal(
			    sl.npass, l <= 14 ? 1 : (l <= 23 ? 2 : 3));
			if (l == 24)
				for (int i = 0; i < 3; i++)
					assert_int_equal(sl.pass[i].len, 256);
			else if (l == 15)
				assert_true(sl.pass[0].len == 4096
				    && sl.pass[1].len == 8);
			else
				assert_memory_equal(&sl, &lay, sizeof lay);
		}
		assert_int_equal(c2c_layout(1, &n, 3, &lay), FFTD__TC_OK);
		if (l <= 15) {
			assert_int_equal(lay.pass[0].len, n);
			assert_int_equal(lay.pass[0].q_total, 3);
			assert_int_equal(lay.pass[0].s_in, 1);
			assert_int_equal(lay.pass[0].s_out, 1);
		} else if (l <= 24) {
			int64_t n1 = lay.pass[0].len, n2 = lay.pass[1].len;
			assert_true(n1 >= 256 && n2 <= 4096 && n2 >= n1);
			assert_int_equal(lay.pass[0].s_in, n2);
			assert_int_equal(lay.pass[0].s_out, n2);
			assert_int_equal(lay.pass[0].tw_n, n);
			assert_int_equal(lay.pass[0].q_total, 3 * n2);
			assert_int_equal(lay.pass[1].s_in, 1);
			assert_int_equal(lay.pass[1].s_out, n1);
			assert_int_equal(lay.pass[1].q_total, 3 * n1);
			assert_int_equal(lay.pass[0].dst, FFTD__TC_BUF_WS);
			assert_int_equal(fftd__tc_tw_kind(&lay.pass[0]),
			    1); // the original two-pass kernels
		} else {
			int64_t n1 = lay.pass[0].len, n2 = lay.pass[1].len,
			        n3 = lay.pass[2].len;
			assert_true(
			    n1 >= 256 && n1 <= n2 && n2 <= n3 && n3 <= 512);
			assert_int_equal(lay.pass[0].s_in, n2 * n3);
			assert_int_equal(lay.pass[0].tw_n, n);
			assert_int_equal(lay.pass[1].s_in, n3);
			assert_int_equal(lay.pass[1].s_out, n1 * n3);
			assert_int_equal(lay.pass[1].tw_n, n2 * n3);
			assert_int_equal(lay.pass[2].s_in, 1);
			assert_int_equal(lay.pass[2].s_out, n1 * n2);
			assert_int_equal(lay.pass[2].tw_n, 0);
			assert_int_equal(fftd__tc_tw_kind(&lay.pass[0]), 2);
			assert_int_equal(fftd__tc_tw_kind(&lay.pass[1]), 2);
		}
		print_message("1D 2^%d: %d pass(es), lengths %d x %d x %d\n", l,
		    lay.npass, lay.pass[0].len,
		    lay.npass > 1 ? lay.pass[1].len : 1,
		    lay.npass > 2 ? lay.pass[2].len : 1);
	}
	// a 2^27 batch of split16 points is 1 GiB of workspace
	int64_t n27 = (int64_t) 1 << 27;
	assert_int_equal(c2c_layout(1, &n27, 1, &lay), FFTD__TC_OK);
	assert_true((uint64_t) lay.ws_points * 8 == (uint64_t) 1 << 30);
	int64_t bad[]  = { 128, 300, (int64_t) 1 << 28, 0, -256 };
	int     want[] = { FFTD__TC_EUNSUPPORTED, FFTD__TC_EUNSUPPORTED,
		    FFTD__TC_EUNSUPPORTED, FFTD__TC_EINVAL, FFTD__TC_EINVAL };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(c2c_layout(1, &bad[i], 1, &lay), want[i]);
	int64_t n = 4096;
	assert_int_equal(c2c_layout(1, &n, 0, &lay), FFTD__TC_EINVAL);
	assert_int_equal(c2c_layout(1, NULL, 1, &lay), FFTD__TC_EINVAL);
	assert_int_equal(
	    c2c_layout(1, &n, (int64_t) 1 << 40, &lay), FFTD__TC_EINVAL);
	assert_int_equal(c2c_layout(1, &n27, ((int64_t) 1 << 13) + 1, &lay),
	    FFTD__TC_EINVAL);
	int64_t d3[3] = { 1024, 256, 256 }; // 3D: tests/unit/test_tc_nd.c
	assert_int_equal(c2c_layout(3, d3, 1, &lay), FFTD__TC_EUNSUPPORTED);
	assert_int_equal(
	    fftd__tc_plan_supported((fftd__tc_algo) 7, FFTD__TC_C2C, 1, &n, 1),
	    FFTD__TC_EINVAL);
	assert_int_equal(
	    fftd__tc_plan_supported(FFTD__TC_SPLIT16, FFTD__TC_C2C, 1, &n, 1),
	    FFTD__TC_OK);
	for (int l = 8; l <= 27; l++) {
		int64_t m = (int64_t) 1 << l;
		assert_int_equal(fftd__tc_plan_supported(
		                     FFTD__TC_TC16, FFTD__TC_C2C, 1, &m, 1),
		    FFTD__TC_OK);
		assert_int_equal(fftd__tc_plan_supported(
		                     FFTD__TC_SPLIT16, FFTD__TC_C2C, 1, &m, 1),
		    FFTD__TC_OK);
	}
}

// ---- the index algebra of the multi-pass schemes, run on the host ----------

// In-place iterative radix-2 DFT in double, sign -1 forward, +1 inverse.
static void
dft_pow2(double *re, double *im, int64_t n, int sign)
{
	for (int64_t i = 1, j = 0; i < n; i++) {
		int64_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double t = re[i];
			re[i]    = re[j];
			re[j]    = t;
			t        = im[i];
			im[i]    = im[j];
			im[j]    = t;
		}
	}
	for (int64_t len = 2; len <= n; len <<= 1) {
		for (int64_t k = 0; k < len / 2; k++) {
			long double a = sign * 2.0L
			    * 3.14159265358979323846264338327950288L * k / len;
			double wr = (double) cosl(a), wi = (double) sinl(a);
			for (int64_t i = k; i < n; i += len) {
				int64_t j  = i + len / 2;
				double  xr = re[j] * wr - im[j] * wi,
				       xi  = re[j] * wi + im[j] * wr;
				re[j]      = re[i] - xr;
				im[j]      = im[i] - xi;
				re[i] += xr;
				im[i] += xi;
			}
		}
	}
}

// Runs a layout's passes exactly as tc.h defines them (gather with s_in,
// DFT, twiddle W_tw_n^((q % s_in) k), scatter with s_out), one buffer per
// FFTD__TC_BUF_*. A pass whose source is its destination must read and write
// the same positions (the kernels run its FFTs concurrently).
static void
run_layout(
    const fftd__tc_layout *lay, int64_t batch, double *bufs[3][2], int sign)
{
	double re[4096], im[4096];
	for (int i = 0; i < lay->npass; i++) {
		const fftd__tc_pass *p = &lay->pass[i];
		assert_true(p->len <= 4096);
		if (p->src == p->dst)
			assert_int_equal(p->s_in, p->s_out);
		double **src = bufs[p->src], **dst = bufs[p->dst];
		for (int64_t q = 0; q < p->q_total; q++) {
			int64_t bi
			    = (q / p->s_in) * p->len * p->s_in + q % p->s_in;
			int64_t bo
			    = (q / p->s_out) * p->len * p->s_out + q % p->s_out;
			for (int64_t k = 0; k < p->len; k++) {
				assert_true(
				    bi + k * p->s_in < batch * lay->points);
				re[k] = src[0][bi + k * p->s_in];
				im[k] = src[1][bi + k * p->s_in];
			}
			dft_pow2(re, im, p->len, sign);
			for (int64_t k = 0; k < p->len; k++) {
				double r = re[k], m = im[k];
				if (p->tw_n > 0) {
					int64_t e
					    = ((q % p->s_in) * k) % p->tw_n;
					long double a = sign * 2.0L
					    * 3.14159265358979323846264338327950288L
					    * e / p->tw_n;
					double wr = (double) cosl(a),
					       wi = (double) sinl(a);
					r         = re[k] * wr - im[k] * wi;
					m         = re[k] * wi + im[k] * wr;
				}
				assert_true(
				    bo + k * p->s_out < batch * lay->points);
				dst[0][bo + k * p->s_out] = r;
				dst[1][bo + k * p->s_out] = m;
			}
		}
	}
}

// One layout against a direct DFT of the whole transform, random input.
static double
layout_error(const fftd__tc_layout *lay, int64_t batch, int sign, int in_place)
{
	int64_t total = batch * lay->points;
	double *mem   = calloc((size_t) total * 8, sizeof(double));
	assert_non_null(mem);
	double *x[2]   = { mem, mem + total },
	       *ref[2] = { mem + 2 * total, mem + 3 * total };
	double *out[2] = { mem + 4 * total, mem + 5 * total },
	       *ws[2]  = { mem + 6 * total, mem + 7 * total };
	srand(777);
	for (int64_t i = 0; i < total; i++) {
		x[0][i] = ref[0][i] = 2.0 * rand() / RAND_MAX - 1.0;
		x[1][i] = ref[1][i] = 2.0 * rand() / RAND_MAX - 1.0;
		out[0][i] = out[1][i] = ws[0][i] = ws[1][i] = NAN;
	}
	for (int64_t b = 0; b < batch; b++)
		dft_pow2(ref[0] + b * lay->points, ref[1] + b * lay->points,
		    lay->points, sign);
	double *bufs[3][2] = { { x[0], x[1] },
		{ in_place ? x[0] : out[0], in_place ? x[1] : out[1] },
		{ ws[0], ws[1] } };
	run_layout(lay, batch, bufs, sign);
	double num = 0, den = 0;
	for (int64_t i = 0; i < total; i++) {
		double dr = bufs[FFTD__TC_BUF_OUT][0][i] - ref[0][i],
		       di = bufs[FFTD__TC_BUF_OUT][1][i] - ref[1][i];
		num += isfinite(dr) && isfinite(di) ? dr * dr + di * di
		                                    : INFINITY;
		den += ref[0][i] * ref[0][i] + ref[1][i] * ref[1][i];
	}
	free(mem);
	return sqrt(num / den);
}

static void
test_layout_algebra(void **state)
{
	(void) state;
	// small instances of every scheme, radix (len < 256) factors included
	static const int64_t f[][3] = { { 16, 8, 0 }, { 8, 2, 0 },
		{ 32, 64, 0 }, { 4096, 8, 0 }, { 4, 8, 16 }, { 8, 8, 8 },
		{ 16, 4, 2 }, { 2, 32, 4 }, { 256, 16, 32 } };
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		int             np = f[i][2] ? 3 : 2;
		fftd__tc_layout lay;
		int64_t         batch
		    = f[i][0] * f[i][1] * (f[i][2] ? f[i][2] : 1) > 65536 ? 1
		                                                          : 3;
		fftd__tc_layout_factors(np, f[i], batch, &lay);
		check_layout_1d(&lay, lay.points, batch, 0);
		for (int sign = -1; sign <= 1; sign += 2)
			for (int ip = 0; ip < 2; ip++) {
				if (batch == 1
				    && (sign > 0 || ip)) // the big one: once
					continue;
				double e = layout_error(&lay, batch, sign, ip);
				print_message("factors %lld x %lld x %lld "
				              "batch %lld %s%s: rel L2 %.2e\n",
				    (long long) f[i][0], (long long) f[i][1],
				    (long long) f[i][2], (long long) batch,
				    sign < 0 ? "fwd" : "inv",
				    ip ? " in-place" : "", e);
				assert_true(e < 1e-12);
			}
	}
	// the planner's own layouts of 2^15 (split16's 4096 x radix 8; tc16's
	// is one pass) and 2^16, in place and not
	for (int l = 15; l <= 16; l++) {
		int64_t         n = (int64_t) 1 << l;
		fftd__tc_layout lay;
		assert_int_equal(fftd__tc_plan_layout_algo(FFTD__TC_SPLIT16,
		                     FFTD__TC_C2C, 1, &n, 2, &lay),
		    FFTD__TC_OK);
		assert_int_equal(lay.npass, 2);
		for (int ip = 0; ip < 2; ip++)
			assert_true(layout_error(&lay, 2, -1, ip) < 1e-12);
	}
}

// One entry W_N^m of a column's four-step table as a float pair rounded
// from long double (fftd__tc_twiddles, exact at the quarter points; the
// kernels' sincospi is within 1 ulp of this, split16's double one rounds to
// it).
static void
tw_entry(int64_t m, int n_log2, float *w)
{
	float t[4]; // W_N^0, W_N^m
	fftd__tc_twiddles((int64_t) 1 << n_log2, 2, m, t);
	w[0] = t[2];
	w[1] = t[3];
}

// The four-step twiddle W_N^(ql k) as the kernels form it (tc.h,
// FFTD__TC_TW_COL, fftd__tc_tw_col_exp; tc16_pass.cuh, tile_tw and level 2):
// for column lengths 256 .. 4096 and N = 2^16 .. 2^27, on random columns
// ql < N / len and outputs k < len, the exponents of entries k % 16,
// 16 + (k / 16) % 16 and (len > 256) 32 + k / 256 lie below N and add up to
// ql k mod N, and the float product of the entries is W_N^(ql k) against
// long double within a few float roundings.
static void
test_twiddle_product(void **state)
{
	(void) state;
	uint64_t r = 0x12345678u;
	for (int l = 16; l <= 27; l++) {
		const int64_t n     = (int64_t) 1 << l;
		double        worst = 0, sum2 = 0;
		int           cnt = 0;
		for (int len = 256; len <= 4096; len *= 2) {
			assert_int_equal(FFTD__TC_TW_COL(len),
			    32 + (len > 256 ? len / 256 : 0));
			for (int i = 0; i < 20000; i++) {
				r ^= r << 13;
				r ^= r >> 7;
				r ^= r << 17;
				const int64_t ql
				    = (int64_t) (r % (uint64_t) (n / len));
				const int k
				    = (int) ((r >> 32) % (uint64_t) len);
				const int j[3] = { k % 16, 16 + (k / 16) % 16,
					32 + k / 256 };
				const int nj   = len > 256 ? 3 : 2;
				int64_t   sum  = 0;
				float     wr = 1, wi = 0;
				for (int t = 0; t < nj; t++) {
					assert_true(
					    j[t] < FFTD__TC_TW_COL(len));
					const int64_t m
					    = fftd__tc_tw_col_exp(ql, j[t], l);
					assert_true(m >= 0 && m < n);
					sum += m;
					float e[2];
					tw_entry(m, l, e);
					const float xr = wr * e[0] - wi * e[1];
					wi             = wr * e[1] + wi * e[0];
					wr             = xr;
				}
				const int64_t want
				    = (int64_t) (((unsigned __int128) ql
				                     * (uint64_t) k)
				        % (uint64_t) n);
				assert_int_equal(sum % n, want);
				long double ang = -2.0L
				    * 3.14159265358979323846264338327950288L
				    * (long double) want / (long double) n;
				double e = hypot((double) (wr - cosl(ang)),
				    (double) (wi - sinl(ang)));
				worst    = fmax(worst, e);
				sum2 += e * e;
				cnt++;
			}
		}
		print_message(
		    "four-step twiddles N=2^%d: worst %.2e rms %.2e\n", l,
		    worst, sqrt(sum2 / cnt));
		assert_true(worst < 2.5e-7); // two float products of rounded
		                             // entries (seen: <= 1.95e-7)
		assert_true(sqrt(sum2 / cnt) < 6e-8);
	}
}

// The pass kernel's level-1 DIT twiddle W_L^(a kb) as the product of its two
// factor tables (tc.h, fftd__tc_l1_twiddle_lane/elem; tc16_pass.cuh): for
// every pass length L = 512 .. 32768, tile a < L / 256, lane and fragment
// element, the exponents add up to a kb mod L, both stay below L (the kernel
// masks them), and the float product of the two table entries is W_L^(a kb)
// against long double within a few float roundings.
static void
test_l1_twiddle(void **state)
{
	(void) state;
	float *t = malloc(2 * FFTD__TC_MAX_LEN * sizeof *t);
	assert_non_null(t);
	for (uint32_t len = 512; len <= FFTD__TC_MAX_LEN; len *= 2) {
		fftd__tc_twiddles(len, len, 1, t);
		double worst = 0;
		for (uint32_t a = 0; a < len / 256; a++) {
			for (int lane = 0; lane < 32; lane++) {
				for (int e = 0; e < 8; e++) {
					uint32_t kb
					    = (uint32_t) (fftd__tc_frag_row(
					                      lane, e)
					        + 16
					            * fftd__tc_frag_col(
					                lane, e));
					uint32_t jl = fftd__tc_l1_twiddle_lane(
					             a, (uint32_t) lane),
					         je = fftd__tc_l1_twiddle_elem(
					             a, (uint32_t) e);
					assert_true(jl < len && je < len);
					assert_int_equal(
					    (jl + je) % len, (a * kb) % len);
					const float *x = t + 2 * jl,
					            *y = t + 2 * je;
					float wr = x[0] * y[0] - x[1] * y[1],
					      wi = x[0] * y[1] + x[1] * y[0];
					long double ang = -2.0L
					    * 3.14159265358979323846264338327950288L
					    * ((a * kb) % len) / len;
					worst = fmax(worst,
					    hypot((double) (wr - cosl(ang)),
					        (double) (wi - sinl(ang))));
				}
			}
		}
		print_message("level-1 twiddle products L=%u: worst %.2e\n",
		    (unsigned) len, worst);
		assert_true(worst < 2e-7); // two roundings and a product
	}
	free(t);
}

static void
test_layout_2d(void **state)
{
	(void) state;
	fftd__tc_layout lay;
	for (int a = 8; a <= 12; a++)
		for (int b = 8; b <= 12; b++) {
			int64_t d[2] = { (int64_t) 1 << a, (int64_t) 1 << b };
			assert_int_equal(
			    c2c_layout(2, d, 5, &lay), FFTD__TC_OK);
			assert_int_equal(lay.npass, 2);
			assert_int_equal(
			    (int64_t) lay.pass[0].len * lay.pass[1].len,
			    d[0] * d[1]);
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
	int64_t d1[2] = { 128, 256 }, d2[2] = { 256, 8192 },
	        d3[2] = { 256, 300 };
	assert_int_equal(c2c_layout(2, d1, 1, &lay), FFTD__TC_EUNSUPPORTED);
	assert_int_equal(c2c_layout(2, d2, 1, &lay), FFTD__TC_EUNSUPPORTED);
	assert_int_equal(c2c_layout(2, d3, 1, &lay), FFTD__TC_EUNSUPPORTED);
}

static void
test_twiddles(void **state)
{
	(void) state;
	const int64_t n = 4096;
	float        *w = malloc(2 * n * sizeof *w);
	assert_non_null(w);
	fftd__tc_twiddles(n, n, 1, w);
	double worst = 0;
	for (int64_t j = 0; j < n; j++) {
		long double a
		    = 2.0L * 3.14159265358979323846264338327950288L * j / n;
		worst = fmax(worst, fabs((double) (w[2 * j] - cosl(a))));
		worst = fmax(worst, fabs((double) (w[2 * j + 1] + sinl(a))));
	}
	assert_true(worst <= 6.0e-8); // rounded to float: half an ulp of 1
	assert_true(w[2 * 1024] == 0.0f && w[2 * 1024 + 1] == -1.0f);
	assert_true(w[2 * 2048] == -1.0f && w[2 * 2048 + 1] == 0.0f);
	assert_true(w[2 * 3072] == 0.0f && w[2 * 3072 + 1] == 1.0f);
	// strided: W_N^(4096 j) for the four-step's high table
	float hi[2 * 8];
	fftd__tc_twiddles((int64_t) 1 << 15, 8, 4096, hi);
	for (int j = 0; j < 8; j++) {
		long double a
		    = 2.0L * 3.14159265358979323846264338327950288L * j / 8;
		assert_true(fabs((double) (hi[2 * j] - cosl(a))) <= 6e-8);
		assert_true(fabs((double) (hi[2 * j + 1] + sinl(a))) <= 6e-8);
	}
	free(w);
}

static float
bits_f(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

static void
test_f16(void **state)
{
	(void) state;
	struct {
		float    x;
		uint16_t h;
	} c[] = {
		{ 1.0f, 0x3c00 },
		{ -2.0f, 0xc000 },
		{ 65504.0f, 0x7bff },
		{ 65519.0f, 0x7bff },
		{ 65520.0f, 0x7c00 },
		{ 1e9f, 0x7c00 },
		{ 0.0f, 0x0000 },
		{ -0.0f, 0x8000 },
		{ 0x1p-24f, 0x0001 },
		{ 0x1p-25f, 0x0000 },
		{ 0x1.8p-25f, 0x0001 },
		{ 0x1.8p-24f, 0x0002 },
		{ 0x1p-14f, 0x0400 },
		{ 0x1.ff8p-15f, 0x03ff },
		{ 0x1.ffcp-15f, 0x0400 },
		{ 1.0f + 0x1p-11f, 0x3c00 },
		{ 1.0f + 0x3p-11f, 0x3c02 },
		{ 1.0f + 0x1p-10f, 0x3c01 },
		{ 0x1p-30f, 0x0000 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		assert_int_equal(fftd__tc_f16_from_f32(c[i].x), c[i].h);
	assert_int_equal(
	    fftd__tc_f16_from_f32(bits_f(0x7fc00000u)) & 0x7e00, 0x7e00);
	assert_int_equal(fftd__tc_f16_from_f32(bits_f(0x7f800000u)), 0x7c00);
	for (uint32_t h = 0; h < 0x10000u; h++) {
		if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
			continue; // NaN payloads
		float f = fftd__tc_f32_from_f16((uint16_t) h);
		assert_int_equal(fftd__tc_f16_from_f32(f), h);
	}
}

static void
test_split(void **state)
{
	(void) state;
	srand(12345);
	for (int k = 0; k < 200000; k++) {
		// magnitudes over many decades, as inside a long FFT
		float mag = ldexpf(1.0f, (rand() % 60) - 30);
		float x   = mag * (2.0f * rand() / (float) RAND_MAX - 1.0f);
		float m
		    = fabsf(x) * (1.0f + (rand() % 4)); // the tile max >= |x|
		uint32_t mb;
		memcpy(&mb, &m, sizeof mb);
		int e = fftd__tc_scale_exp(mb);
		if (m > 0) {
			float ms = ldexpf(m, e);
			assert_true(ms >= 8192.0f && ms < 16384.0f);
		}
		uint16_t hi, lo;
		fftd__tc_split(x, e, &hi, &lo);
		double xs = ldexp((double) x, e);
		double r  = (double) fftd__tc_f32_from_f16(hi)
		    + (double) fftd__tc_f32_from_f16(lo);
		// hi carries 11 bits, lo 11 more; lo may be subnormal only for
		// values far below the tile max, where 2^-24 absolute is fine
		double tol = fmax(fabs(xs) * 0x1p-22, 0x1p-24);
		assert_true(fabs(r - xs) <= tol);
	}
	assert_int_equal(fftd__tc_scale_exp(0), 140 - 14);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_layout_1d),
		cmocka_unit_test(test_layout_2d),
		cmocka_unit_test(test_layout_algebra),
		cmocka_unit_test(test_twiddles),
		cmocka_unit_test(test_twiddle_product),
		cmocka_unit_test(test_l1_twiddle),
		cmocka_unit_test(test_f16),
		cmocka_unit_test(test_split),
	};
	return cmocka_run_group_tests_name("tc_host", tests, NULL, NULL);
}

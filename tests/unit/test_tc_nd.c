// SPDX-License-Identifier: MIT
//
// test_tc_nd.c — host unit tests of the tensor-core kernels' planner for 3D
// transforms and for real ones (kernels/tc_host.c, fftd__tc_plan_layout_algo:
// C2C with rank 3, R2C and C2R). Every 3D side class and the real shapes are
// checked structurally (pass lengths a compiled kernel takes, strides that the
// kernels' column groups tile, the buffer chain, the workspace), then small
// instances are run on the CPU in double: each pass as the kernels index it
// (tc.h, fftd__tc_pass) with a plain FFT, the real steps with the formulas of
// tc_real.cuh, against an independent reference (row-column DFTs over the array
// as x[b][i0][i1][i2], and for real transforms the complex DFT of the real
// data, cut to n/2 + 1). No GPU.

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tc.h"

#define PI_L 3.14159265358979323846264338327950288L

// In-place radix-2 FFT of n (a power of two) points with stride s, sign -1
// forward, +1 inverse, unnormalized; twiddles in long double.
static void
fft(double *re, double *im, int64_t n, int64_t s, int sign)
{
	for (int64_t i = 1, j = 0; i < n; i++) {
		int64_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double t  = re[i * s];
			re[i * s] = re[j * s];
			re[j * s] = t;
			t         = im[i * s];
			im[i * s] = im[j * s];
			im[j * s] = t;
		}
	}
	for (int64_t len = 2; len <= n; len *= 2)
		for (int64_t k = 0; k < len / 2; k++) {
			long double a = sign * 2.0L * PI_L * k / len;
			double wr = (double) cosl(a), wi = (double) sinl(a);
			for (int64_t i = k; i < n; i += len) {
				int64_t u = i * s, v = (i + len / 2) * s;
				double  xr = re[v] * wr - im[v] * wi;
				double  xi = re[v] * wi + im[v] * wr;
				re[v]      = re[u] - xr;
				im[v]      = im[u] - xi;
				re[u] += xr;
				im[u] += xi;
			}
		}
}

// Largest number of neighbouring columns a column pass of len points moves
// at once: the tensor-core passes' (tc.h, fftd__tc_block_ffts, over both
// precisions and run widths) or the axis kernel's (tc_axis.cuh: 2048 / len,
// at most 32).
static int
max_cols(int len)
{
	if (len <= FFTD__TC_AXIS_MAX)
		return 2048 / len > 32 ? 32 : 2048 / len;
	int c = 1;
	for (int eb = 4; eb <= 8; eb *= 2)
		for (int wide = 0; wide < 2; wide++) {
			int x = fftd__tc_block_ffts(len, 1, eb, wide);
			if (x > c)
				c = x;
		}
	return c;
}

// Structural checks of a multi-dimensional complex pass: a length some
// kernel takes, no twiddle, strides the column groups tile.
static void
check_axis_pass(const fftd__tc_pass *p, int64_t total)
{
	int strided = p->s_in > 1;
	if (p->op == FFTD__TC_OP_PLANE) { // tc.h: contiguous planes
		assert_true(
		    p->len >= FFTD__TC_AXIS_MIN && p->len <= FFTD__TC_AXIS_MAX);
		assert_true(p->len2 >= FFTD__TC_AXIS_MIN
		    && p->len2 <= FFTD__TC_AXIS_MAX);
		assert_true((int64_t) p->len * p->len2 <= FFTD__TC_PLANE_MAX);
		assert_int_equal(p->s_in, 1);
		assert_int_equal(p->s_out, 1);
		assert_int_equal(p->tw_n, 0);
		assert_int_equal(p->q_total * p->len * p->len2, total);
		return;
	}
	assert_int_equal(p->op, FFTD__TC_OP_FFT);
	assert_int_equal(p->len2, 0);
	assert_int_equal(p->tw_n, 0);
	assert_int_equal(p->s_in, p->s_out);
	assert_true((p->len >= FFTD__TC_AXIS_MIN && p->len <= FFTD__TC_AXIS_MAX)
	    || (p->len >= FFTD__TC_MIN_LEN
	        && p->len <= (strided ? FFTD__TC_MAX_STRIDED_LEN
	                              : FFTD__TC_MAX_LEN_SPLIT16)));
	assert_int_equal(p->q_total * p->len, total);
	if (strided) {
		int c = max_cols(p->len);
		assert_int_equal(p->s_in % c, 0);
		assert_int_equal(p->q_total % c, 0);
	}
}

// Every 3D shape of sides 32 .. 512: three passes, one per axis, of kernels
// that exist, in place in out; or two, when the last two sides are at most
// 128 and their plane at most FFTD__TC_PLANE_MAX points: the planes, then
// the first axis. And the refusals around the ranges.
static void
test_layout_3d(void **state)
{
	(void) state;
	fftd__tc_layout lay;
	int             planes = 0;
	for (int a = 5; a <= 9; a++)
		for (int b = 5; b <= 9; b++)
			for (int c = 5; c <= 9; c++) {
				int64_t d[3] = { (int64_t) 1 << a,
					(int64_t) 1 << b, (int64_t) 1 << c };
				assert_int_equal(
				    fftd__tc_plan_layout_algo(FFTD__TC_TC16,
				        FFTD__TC_C2C, 3, d, 3, &lay),
				    FFTD__TC_OK);
				const int plane
				    = b <= 7 && c <= 7 && b + c <= 12;
				planes += plane;
				assert_int_equal(lay.npass, plane ? 2 : 3);
				assert_int_equal(
				    lay.points, d[0] * d[1] * d[2]);
				assert_int_equal(lay.ws_points, 0);
				int64_t s = plane ? d[1] * d[2] : 1;
				for (int k = 0; k < lay.npass; k++) {
					const fftd__tc_pass *p = &lay.pass[k];
					check_axis_pass(p, 3 * lay.points);
					assert_int_equal(p->src,
					    k == 0 ? FFTD__TC_BUF_IN
					           : FFTD__TC_BUF_OUT);
					assert_int_equal(
					    p->dst, FFTD__TC_BUF_OUT);
					if (plane && k == 0) {
						assert_int_equal(
						    p->op, FFTD__TC_OP_PLANE);
						assert_int_equal(p->len, d[2]);
						assert_int_equal(p->len2, d[1]);
						continue;
					}
					const int ax = plane ? 0 : 2 - k;
					assert_int_equal(p->len, d[ax]);
					assert_int_equal(p->s_in, s);
					s *= d[ax];
				}
				assert_int_equal(
				    fftd__tc_plan_supported(
				        FFTD__TC_TC16, FFTD__TC_C2C, 3, d, 3),
				    FFTD__TC_OK);
			}
	// planes: (y, z) in {32, 64, 128}^2 with y z <= 4096, for 5 first sides
	assert_int_equal(planes, 6 * 5);
	// refusals: sides outside 32 .. 512, not powers of two, rank 4
	int64_t bad[][3] = { { 16, 64, 64 }, { 64, 1024, 64 }, { 64, 64, 16 },
		{ 64, 96, 64 } };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(fftd__tc_plan_layout_algo(FFTD__TC_TC16,
		                     FFTD__TC_C2C, 3, bad[i], 1, &lay),
		    FFTD__TC_EUNSUPPORTED);
	int64_t d4[4] = { 32, 32, 32, 32 }, d3[3] = { 512, 512, 512 };
	assert_int_equal(fftd__tc_plan_layout_algo(
	                     FFTD__TC_TC16, FFTD__TC_C2C, 4, d4, 1, &lay),
	    FFTD__TC_EUNSUPPORTED);
	assert_int_equal(fftd__tc_plan_layout_algo(FFTD__TC_TC16, FFTD__TC_C2C,
	                     3, d3, (int64_t) 1 << 14, &lay),
	    FFTD__TC_EINVAL);
	int64_t d0[3] = { 32, 0, 32 };
	assert_int_equal(fftd__tc_plan_layout_algo(
	                     FFTD__TC_TC16, FFTD__TC_C2C, 3, d0, 1, &lay),
	    FFTD__TC_EINVAL);
}

// The real shapes: every side class, both kinds. Complex passes as in C2C
// of the halved last dim, renamed buffers (R2C: in -> .. -> workspace with
// out as scratch; C2R: workspace -> .. -> out), and the real step.
static void
check_real_layout(const fftd__tc_layout *lay, fftd__tc_type type, int rank,
    const int64_t *dims, int64_t batch)
{
	int64_t h = dims[rank - 1] / 2, pts = h;
	for (int i = 0; i < rank - 1; i++)
		pts *= dims[i];
	assert_int_equal(lay->points, pts);
	assert_int_equal(lay->ws_points, batch * pts);
	assert_int_equal(lay->rank, rank);
	assert_int_equal(lay->cdims[rank - 1], h);
	int                  first = type == FFTD__TC_C2R;
	const fftd__tc_pass *r     = &lay->pass[first ? 0 : lay->npass - 1];
	assert_int_equal(
	    r->op, first ? FFTD__TC_OP_C2R_PRE : FFTD__TC_OP_R2C_POST);
	assert_int_equal(r->len, h);
	assert_int_equal(r->q_total, batch * pts / h);
	assert_int_equal(r->src, first ? FFTD__TC_BUF_IN : FFTD__TC_BUF_WS);
	assert_int_equal(r->dst, first ? FFTD__TC_BUF_WS : FFTD__TC_BUF_OUT);
	for (int i = 0; i < lay->npass; i++) {
		const fftd__tc_pass *p = &lay->pass[i];
		if (p->op != FFTD__TC_OP_FFT)
			continue;
		if (rank > 1)
			check_axis_pass(p, batch * pts);
		// R2C never writes in; C2R never touches in after its first
		// step
		assert_true(p->dst != FFTD__TC_BUF_IN);
		if (type == FFTD__TC_C2R)
			assert_true(p->src != FFTD__TC_BUF_IN);
	}
	// the complex result lands where the real step reads it
	const fftd__tc_pass *lastc
	    = &lay->pass[first ? lay->npass - 1 : lay->npass - 2];
	assert_int_equal(
	    lastc->dst, first ? FFTD__TC_BUF_OUT : FFTD__TC_BUF_WS);
}

// Every real shape class of both kinds (check_real_layout), and the sizes
// just outside the real ranges.
static void
test_layout_real(void **state)
{
	(void) state;
	fftd__tc_layout lay;
	for (int t = FFTD__TC_R2C; t <= FFTD__TC_C2R; t++) {
		fftd__tc_type type = (fftd__tc_type) t;
		for (int l = 9; l <= 27; l++) {
			int64_t n = (int64_t) 1 << l;
			assert_int_equal(
			    fftd__tc_plan_layout_algo(
			        FFTD__TC_TC16, type, 1, &n, 1, &lay),
			    FFTD__TC_OK);
			check_real_layout(&lay, type, 1, &n, 1);
			// n = 2^16: tc16's half length in one pass, split16's
			// in two (4096 x radix 8), beside the real step
			if (l == 16) {
				assert_int_equal(lay.npass, 2);
				fftd__tc_layout sl;
				assert_int_equal(
				    fftd__tc_plan_layout_algo(
				        FFTD__TC_SPLIT16, type, 1, &n, 1, &sl),
				    FFTD__TC_OK);
				check_real_layout(&sl, type, 1, &n, 1);
				assert_int_equal(sl.npass, 3);
			}
		}
		for (int a = 8; a <= 12; a++)
			for (int b = 8; b <= 12; b++) {
				int64_t d[2]
				    = { (int64_t) 1 << a, (int64_t) 1 << b };
				assert_int_equal(
				    fftd__tc_plan_layout_algo(
				        FFTD__TC_TC16, type, 2, d, 2, &lay),
				    FFTD__TC_OK);
				check_real_layout(&lay, type, 2, d, 2);
			}
		for (int a = 5; a <= 9; a++)
			for (int b = 5; b <= 9; b++)
				for (int c = 6; c <= 9; c++) {
					int64_t d[3] = { (int64_t) 1 << a,
						(int64_t) 1 << b,
						(int64_t) 1 << c };
					assert_int_equal(
					    fftd__tc_plan_layout_algo(
					        FFTD__TC_TC16, type, 3, d, 2,
					        &lay),
					    FFTD__TC_OK);
					check_real_layout(&lay, type, 3, d, 2);
				}
		int64_t n256 = 256, d2[2] = { 128, 512 },
		        d3[3] = { 64, 64, 32 };
		assert_int_equal(fftd__tc_plan_layout_algo(
		                     FFTD__TC_TC16, type, 1, &n256, 1, &lay),
		    FFTD__TC_EUNSUPPORTED);
		assert_int_equal(fftd__tc_plan_layout_algo(
		                     FFTD__TC_TC16, type, 2, d2, 1, &lay),
		    FFTD__TC_EUNSUPPORTED);
		assert_int_equal(fftd__tc_plan_layout_algo(
		                     FFTD__TC_TC16, type, 3, d3, 1, &lay),
		    FFTD__TC_EUNSUPPORTED);
		assert_int_equal(
		    fftd__tc_plan_supported(FFTD__TC_SPLIT16, type, 3, d3, 1),
		    FFTD__TC_EUNSUPPORTED);
		int64_t d3ok[3] = { 64, 64, 64 };
		assert_int_equal(
		    fftd__tc_plan_supported(FFTD__TC_SPLIT16, type, 3, d3ok, 1),
		    FFTD__TC_OK);
	}
	int64_t n = 1024;
	assert_int_equal(fftd__tc_plan_layout_algo(
	                     FFTD__TC_TC16, (fftd__tc_type) 3, 1, &n, 1, &lay),
	    FFTD__TC_EINVAL);
}

// A complex buffer of the CPU run: re and im arrays of cap points.
typedef struct cbuf {
	double *re, *im;
	int64_t cap;
} cbuf;

// mirror returns the row of -K for row r = b P + K (tc_real.cuh).
static int64_t
mirror(const fftd__tc_layout *lay, int64_t r)
{
	int64_t m = r, p = 1;
	for (int i = lay->rank - 2; i >= 0; i--) {
		int64_t d = lay->cdims[i], f = (r / p) % d;
		m += (((d - f) % d) - f) * p;
		p *= d;
	}
	return m;
}

// run_cpu runs lay's passes in double over bufs[IN, OUT, WS, TMP] as the
// kernels index them (tc.h, fftd__tc_pass; tc_real.cuh for the real steps).
// Where two buffers are one (in place), a pass may read and write it only at
// the same positions (what every pass kernel of one launch needs).
static void
run_cpu(const fftd__tc_layout *lay, cbuf *bufs[4], int sign)
{
	double *tr = malloc(FFTD__TC_MAX_LEN * sizeof *tr),
	       *ti = malloc(FFTD__TC_MAX_LEN * sizeof *ti);
	assert_true(tr != NULL && ti != NULL);
	for (int i = 0; i < lay->npass; i++) {
		const fftd__tc_pass *p   = &lay->pass[i];
		cbuf                *src = bufs[p->src], *dst = bufs[p->dst];
		int64_t              h = p->len;
		if (src->re == dst->re)
			assert_true((p->op == FFTD__TC_OP_FFT
			                || p->op == FFTD__TC_OP_PLANE)
			    && p->s_in == p->s_out);
		if (p->op == FFTD__TC_OP_PLANE) {
			// plane q: len2 rows of h points at q len2 h; rows
			// then columns, in the scratch
			int64_t np = p->len2 * h;
			assert_true(np <= 16384);
			for (int64_t q = 0; q < p->q_total; q++) {
				assert_true((q + 1) * np <= src->cap
				    && (q + 1) * np <= dst->cap);
				memcpy(tr, src->re + q * np,
				    (size_t) np * sizeof *tr);
				memcpy(ti, src->im + q * np,
				    (size_t) np * sizeof *ti);
				for (int64_t y = 0; y < p->len2; y++)
					fft(tr + y * h, ti + y * h, h, 1, sign);
				for (int64_t z = 0; z < h; z++)
					fft(tr + z, ti + z, p->len2, h, sign);
				memcpy(dst->re + q * np, tr,
				    (size_t) np * sizeof *tr);
				memcpy(dst->im + q * np, ti,
				    (size_t) np * sizeof *ti);
			}
			continue;
		}
		if (p->op == FFTD__TC_OP_R2C_POST) {
			for (int64_t r = 0; r < p->q_total; r++)
				for (int64_t k = 0; k <= h; k++) {
					int64_t ia = r * h + k % h,
					        ib
					    = mirror(lay, r) * h + (h - k) % h;
					assert_true(
					    ia < src->cap && ib < src->cap);
					double ar      = src->re[ia],
					       ai      = src->im[ia];
					double br      = src->re[ib],
					       bi      = -src->im[ib];
					double er      = (ar + br) / 2,
					       ei      = (ai + bi) / 2;
					double orr     = (ai - bi) / 2,
					       oi      = -(ar - br) / 2;
					long double a  = -PI_L * k / h;
					double      wr = (double) cosl(a),
					       wi      = (double) sinl(a);
					int64_t o      = r * (h + 1) + k;
					assert_true(o < dst->cap);
					dst->re[o] = er + orr * wr - oi * wi;
					dst->im[o] = ei + orr * wi + oi * wr;
				}
			continue;
		}
		if (p->op == FFTD__TC_OP_C2R_PRE) {
			for (int64_t r = 0; r < p->q_total; r++)
				for (int64_t m = 0; m < h; m++) {
					int64_t ia = r * (h + 1) + m,
					        ib
					    = mirror(lay, r) * (h + 1) + h - m;
					assert_true(
					    ia < src->cap && ib < src->cap);
					double ar      = src->re[ia],
					       ai      = src->im[ia];
					double br      = src->re[ib],
					       bi      = -src->im[ib];
					double      sr = ar + br, si = ai + bi;
					double      dr = ar - br, di = ai - bi;
					long double a  = PI_L * m / h;
					double      wr = (double) cosl(a),
					       wi      = (double) sinl(a);
					double tre     = dr * wr - di * wi,
					       tim     = dr * wi + di * wr;
					int64_t o      = r * h + m;
					assert_true(o < dst->cap);
					dst->re[o] = sr - tim;
					dst->im[o] = si + tre;
				}
			continue;
		}
		assert_true(h <= FFTD__TC_MAX_LEN);
		for (int64_t q = 0; q < p->q_total; q++) {
			int64_t bi = (q / p->s_in) * h * p->s_in + q % p->s_in;
			int64_t bo
			    = (q / p->s_out) * h * p->s_out + q % p->s_out;
			for (int64_t k = 0; k < h; k++) {
				assert_true(bi + k * p->s_in < src->cap);
				tr[k] = src->re[bi + k * p->s_in];
				ti[k] = src->im[bi + k * p->s_in];
			}
			fft(tr, ti, h, 1, sign);
			for (int64_t k = 0; k < h; k++) {
				double r = tr[k], m = ti[k];
				if (p->tw_n > 0) {
					long double a = sign * 2.0L * PI_L
					    * (long double) (((q % p->s_in) * k)
					        % p->tw_n)
					    / p->tw_n;
					double wr = (double) cosl(a),
					       wi = (double) sinl(a);
					r         = tr[k] * wr - ti[k] * wi;
					m         = tr[k] * wi + ti[k] * wr;
				}
				assert_true(bo + k * p->s_out < dst->cap);
				dst->re[bo + k * p->s_out] = r;
				dst->im[bo + k * p->s_out] = m;
			}
		}
	}
	free(tr);
	free(ti);
}

// ref_nd transforms batch arrays of dims[0..rank-1] (row-major) in place,
// axis by axis, with the plain FFT: the reference, indexed directly.
static void
ref_nd(double *re, double *im, int rank, const int64_t *dims, int64_t batch,
    int sign)
{
	int64_t pts = 1;
	for (int i = 0; i < rank; i++)
		pts *= dims[i];
	for (int ax = 0; ax < rank; ax++) {
		int64_t inner = 1;
		for (int i = ax + 1; i < rank; i++)
			inner *= dims[i];
		int64_t outer = batch * pts / (inner * dims[ax]);
		for (int64_t o = 0; o < outer; o++)
			for (int64_t j = 0; j < inner; j++) {
				int64_t base = o * dims[ax] * inner + j;
				fft(re + base, im + base, dims[ax], inner,
				    sign);
			}
	}
}

// frand is a uniform random number in [-1, 1) from the LCG state *s.
static double
frand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double) (*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

// check_routed checks a layout rerouted for converted input and output
// (fftd__tc_layout_route_io): in is read by the first pass only, out is
// written by the last only and read by none, nothing writes in, and TMP has
// room for one copy of the batch when a pass uses it.
static void
check_routed(const fftd__tc_layout *lay, int64_t batch)
{
	int used = 0;
	for (int i = 0; i < lay->npass; i++) {
		const fftd__tc_pass *p = &lay->pass[i];
		assert_true(p->dst != FFTD__TC_BUF_IN);
		assert_true((p->src == FFTD__TC_BUF_IN) == (i == 0));
		assert_true(p->src != FFTD__TC_BUF_OUT || lay->npass == 1);
		assert_true(
		    (p->dst == FFTD__TC_BUF_OUT) == (i == lay->npass - 1));
		used
		    |= p->src == FFTD__TC_BUF_TMP || p->dst == FFTD__TC_BUF_TMP;
	}
	assert_int_equal(lay->tmp_points, used ? batch * lay->points : 0);
}

// One shape of one kind, run on the CPU through its layout (rerouted for
// converted input and output when io), against the reference; returns the
// relative L2 error.
static double
nd_error(fftd__tc_type type, int rank, const int64_t *dims, int64_t batch,
    int in_place, int sign, int io)
{
	fftd__tc_layout lay;
	assert_int_equal(fftd__tc_plan_layout_algo(
	                     FFTD__TC_TC16, type, rank, dims, batch, &lay),
	    FFTD__TC_OK);
	if (io) {
		fftd__tc_layout_route_io(&lay, batch);
		check_routed(&lay, batch);
	}
	int64_t real = 1; // points of the real (or C2C) array
	for (int i = 0; i < rank; i++)
		real *= dims[i];
	int64_t h = dims[rank - 1] / 2, rows = batch * real / dims[rank - 1];
	int64_t cap = type == FFTD__TC_C2C ? batch * real : rows * (h + 1);
	double *mem = malloc((size_t) cap * 8 * sizeof(double));
	double *ref = malloc((size_t) batch * real * 2 * sizeof(double));
	assert_true(mem != NULL && ref != NULL);
	for (int64_t i = 0; i < cap * 8; i++)
		mem[i] = NAN; // poison
	cbuf b_in   = { mem, mem + cap, cap },
	     b_out  = { mem + 2 * cap, mem + 3 * cap, cap },
	     b_ws   = { mem + 4 * cap, mem + 5 * cap, cap },
	     b_tmp  = { mem + 6 * cap, mem + 7 * cap, io ? cap : 0 };
	double  *rr = ref, *ri = ref + batch * real;
	uint64_t seed = 12345 + (uint64_t) real + (uint64_t) type;
	double   num = 0, den = 0;
	if (type == FFTD__TC_C2C) {
		for (int64_t i = 0; i < batch * real; i++) {
			rr[i] = b_in.re[i] = frand(&seed);
			ri[i] = b_in.im[i] = frand(&seed);
		}
		ref_nd(rr, ri, rank, dims, batch, sign);
	} else {
		// the real data x and its full complex transform
		for (int64_t i = 0; i < batch * real; i++) {
			rr[i] = frand(&seed);
			ri[i] = 0;
		}
		if (type == FFTD__TC_R2C) {
			for (int64_t i = 0; i < batch * real / 2; i++) {
				b_in.re[i] = rr[2 * i]; // x[2m] + i x[2m + 1]
				b_in.im[i] = rr[2 * i + 1];
			}
			ref_nd(rr, ri, rank, dims, batch, -1);
		} else {
			double *xr = malloc(
			    (size_t) batch * real * 2 * sizeof(double));
			assert_non_null(xr);
			double *xi = xr + batch * real;
			memcpy(xr, rr, (size_t) batch * real * sizeof(double));
			memset(xi, 0, (size_t) batch * real * sizeof(double));
			ref_nd(xr, xi, rank, dims, batch, -1);
			for (int64_t r = 0; r < rows; r++) // the half spectrum
				for (int64_t k = 0; k <= h; k++) {
					b_in.re[r * (h + 1) + k]
					    = xr[r * 2 * h + k];
					b_in.im[r * (h + 1) + k]
					    = xi[r * 2 * h + k];
				}
			free(xr);
			for (int64_t i = 0; i < batch * real; i++)
				rr[i] *= (double) real; // unnormalized: n x
		}
	}
	cbuf *bufs[4] = { &b_in, in_place ? &b_in : &b_out, &b_ws, &b_tmp };
	run_cpu(&lay, bufs,
	    type == FFTD__TC_C2C       ? sign
	        : type == FFTD__TC_R2C ? -1
	                               : 1);
	cbuf *o = bufs[FFTD__TC_BUF_OUT];
	if (type == FFTD__TC_R2C) {
		for (int64_t r = 0; r < rows; r++)
			for (int64_t k = 0; k <= h; k++) {
				int64_t i = r * (h + 1) + k, j = r * 2 * h + k;
				double  dr = o->re[i] - rr[j],
				       di  = o->im[i] - ri[j];
				num += isfinite(dr + di) ? dr * dr + di * di
				                         : INFINITY;
				den += rr[j] * rr[j] + ri[j] * ri[j];
			}
	} else if (type == FFTD__TC_C2R) {
		for (int64_t i = 0; i < batch * real; i++) {
			double v  = i % 2 ? o->im[i / 2] : o->re[i / 2];
			double dr = v - rr[i];
			num += isfinite(dr) ? dr * dr : INFINITY;
			den += rr[i] * rr[i];
		}
	} else {
		for (int64_t i = 0; i < batch * real; i++) {
			double dr = o->re[i] - rr[i], di = o->im[i] - ri[i];
			num += isfinite(dr + di) ? dr * dr + di * di : INFINITY;
			den += rr[i] * rr[i] + ri[i] * ri[i];
		}
	}
	free(mem);
	free(ref);
	return sqrt(num / den);
}

// Small instances of 3D C2C and of R2C / C2R in every rank, and of 1D and
// 2D C2C, run through their layouts in double (run_cpu), in place and not,
// as planned and rerouted for converted input and output: the index algebra
// and the real-step formulas must be exact to rounding.
static void
test_nd_algebra(void **state)
{
	(void) state;
	static const struct {
		int     type, rank;
		int64_t dims[3], batch;
	} c[] = {
		{ FFTD__TC_C2C, 1, { 1024 }, 3 },
		{ FFTD__TC_C2C, 1, { 32768 }, 1 },
		{ FFTD__TC_C2C, 1, { 65536 }, 1 },
		{ FFTD__TC_C2C, 2, { 256, 512 }, 1 },
		{ FFTD__TC_C2C, 3, { 32, 32, 32 }, 2 },
		{ FFTD__TC_C2C, 3, { 64, 32, 128 }, 1 },
		{ FFTD__TC_C2C, 3, { 32, 256, 32 }, 1 },
		{ FFTD__TC_R2C, 1, { 512 }, 3 },
		{ FFTD__TC_R2C, 1, { 65536 }, 1 },
		{ FFTD__TC_R2C, 2, { 256, 256 }, 2 },
		{ FFTD__TC_R2C, 3, { 32, 32, 64 }, 2 },
		{ FFTD__TC_R2C, 3, { 64, 32, 128 }, 1 },
		{ FFTD__TC_C2R, 1, { 512 }, 3 },
		{ FFTD__TC_C2R, 1, { 65536 }, 1 },
		{ FFTD__TC_C2R, 2, { 256, 512 }, 1 },
		{ FFTD__TC_C2R, 3, { 32, 32, 64 }, 2 },
		{ FFTD__TC_C2R, 3, { 32, 64, 128 }, 1 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		for (int k = 0; k < 8; k++) {
			int ip = k & 1, sign = k & 2 ? 1 : -1, io = k >> 2;
			if (c[i].type != FFTD__TC_C2C && sign > 0)
				continue;
			double e = nd_error((fftd__tc_type) c[i].type,
			    c[i].rank, c[i].dims, c[i].batch, ip, sign, io);
			print_message("%s rank %d %lld x %lld x %lld "
			              "batch %lld%s%s%s: rel L2 %.2e\n",
			    c[i].type == FFTD__TC_C2C       ? "C2C"
			        : c[i].type == FFTD__TC_R2C ? "R2C"
			                                    : "C2R",
			    c[i].rank, (long long) c[i].dims[0],
			    (long long) c[i].dims[1], (long long) c[i].dims[2],
			    (long long) c[i].batch, sign > 0 ? " inv" : "",
			    ip ? " in-place" : "",
			    io ? " routed for conversion" : "", e);
			assert_true(e < 1e-12);
		}
}

// The axis kernel's Stockham schedule (kernels/tc_axis.cuh, axis_stage:
// radix 8 while 8 divides L / Ns, then 4 or 2; butterfly j reads
// x[j + r L/R], twiddles by W_{Ns R}^{(j mod Ns) r}, writes
// (j / Ns) Ns R + j mod Ns + r Ns) replayed in double with a plain DFT
// per butterfly, against the FFT: the index algebra of the device code.
static void
test_axis_stockham(void **state)
{
	(void) state;
	for (int L = FFTD__TC_AXIS_MIN; L <= 256; L *= 2)
		for (int sign = -1; sign <= 1; sign += 2) {
			double   a[2][2][256], want[2][256];
			uint64_t seed = (uint64_t) L;
			for (int n = 0; n < L; n++) {
				a[0][0][n] = want[0][n] = frand(&seed);
				a[0][1][n] = want[1][n] = frand(&seed);
			}
			fft(want[0], want[1], L, 1, sign);
			int src = 0;
			for (int ns = 1; ns < L;) {
				int R = L / ns >= 8 ? 8 : L / ns, B = L / R;
				for (int j = 0; j < B; j++) {
					double vr[8], vi[8], yr[8], yi[8];
					int    jm = j % ns;
					for (int r = 0; r < R; r++) {
						long double t = sign * 2.0L
						    * PI_L * jm * r / (ns * R);
						double xr
						    = a[src][0][j + r * B],
						    xi = a[src][1][j + r * B];
						vr[r]  = xr * cosl(t)
						    - xi * sinl(t);
						vi[r] = xr * sinl(t)
						    + xi * cosl(t);
					}
					for (int k = 0; k < R; k++) {
						yr[k] = yi[k] = 0;
						for (int r = 0; r < R; r++) {
							long double t = sign
							    * 2.0L * PI_L * r
							    * k / R;
							yr[k] += vr[r] * cosl(t)
							    - vi[r] * sinl(t);
							yi[k] += vr[r] * sinl(t)
							    + vi[r] * cosl(t);
						}
					}
					int d = (j / ns) * ns * R + jm;
					for (int r = 0; r < R; r++) {
						a[1 - src][0][d + r * ns]
						    = yr[r];
						a[1 - src][1][d + r * ns]
						    = yi[r];
					}
				}
				src = 1 - src;
				ns *= R;
			}
			double num = 0, den = 0;
			for (int k = 0; k < L; k++) {
				double dr = a[src][0][k] - want[0][k],
				       di = a[src][1][k] - want[1][k];
				num += dr * dr + di * di;
				den += want[0][k] * want[0][k]
				    + want[1][k] * want[1][k];
			}
			assert_true(sqrt(num / den) < 1e-13);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_3d),
		cmocka_unit_test(test_layout_real),
		cmocka_unit_test(test_nd_algebra),
		cmocka_unit_test(test_axis_stockham),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

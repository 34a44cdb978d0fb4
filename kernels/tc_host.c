// SPDX-License-Identifier: MIT
//
// tc_host.c — the pure-host parts of the tensor-core FFT kernels (tc.h):
// error strings, the pass decomposition of a shape (see
// fftd__tc_plan_layout_algo: one pass up to 32768 points (split16: 16384),
// two up to 2^24 (split16: 2^23), three for 2^25 (split16: 2^24) .. 2^27,
// after Bailey, "FFTs
// in external or hierarchical memory", J. Supercomputing 4, 1990; one pass per
// axis for 2D and 3D, or a plane and an axis for 3D with short last sides; R2C
// and C2R as the half-length complex transform and a real step), twiddle tables
// computed in long double, and the fp16 rounding and hi/lo split arithmetic
// that the device code performs (so the host unit tests can pin it down). No
// CUDA here: it builds and is tested on machines without a GPU.

#include <math.h>
#include <string.h>

#include "tc.h"

const char *
fftd__tc_strerror(int err)
{
	switch (err) {
#define FFTD__TC_STR(name, value, text)                                        \
	case value:                                                            \
		return text;
		FFTD__TC_ERRORS(FFTD__TC_STR)
#undef FFTD__TC_STR
	default:
		break;
	}
	if (fftd__tc_cuda_error(err) != 0)
		return "CUDA runtime error";
	return "unknown error";
}

int
fftd__tc_cuda_error(int err)
{
	if (err <= FFTD__TC_ECUDA_BASE - 1
	    && err > FFTD__TC_ECUDA_BASE - 100000)
		return FFTD__TC_ECUDA_BASE - err;
	return 0;
}

static int
is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

static int
log2i(int64_t n)
{
	int l = 0;
	while (((int64_t) 1 << l) < n)
		l++;
	return l;
}

// Single-pass limit per algorithm: the whole FFT in one block's shared
// memory. tc16: 32768 points, 128 KiB, transformed in place (no room for the
// scratch buffer of the shorter passes; kernels/tc16_pass.cuh); split16:
// 16384 points, 128 KiB of 8-byte points.
static int64_t
max_single(fftd__tc_algo algo)
{
	return algo == FFTD__TC_SPLIT16 ? FFTD__TC_MAX_LEN_SPLIT16
	                                : FFTD__TC_MAX_LEN;
}

// Two passes reach 4096^2 = 2^24 points (layout_1d), but split16's
// 4096-point column pass (4 columns of 8-byte points in place: 32-byte runs,
// one block an SM) costs more than a third pass: on the H200, split16's 1D
// 2^24 took 1.41 ms in two passes and 1.20 in three of 256 points
// (bench/README.md, stop 42).
static int
two_pass_max(fftd__tc_algo algo)
{
	return algo == FFTD__TC_SPLIT16 ? 23 : 24;
}

static fftd__tc_pass
mkpass(int64_t len, int64_t q_total, int64_t s_in, int64_t s_out, int64_t tw_n,
    int src, int dst)
{
	return (fftd__tc_pass) { .len = (int) len,
		.q_total              = q_total,
		.s_in                 = s_in,
		.s_out                = s_out,
		.tw_n                 = tw_n,
		.src                  = src,
		.dst                  = dst };
}

// 1D decomposition (N = 2^l), the fewest passes over device memory the
// kernels allow. A tensor-core pass is 256 .. 32768 points contiguous (split16:
// 16384) but at most 4096 over columns (C columns of up to 4096 points fill a
// block's shared memory), and a two-pass four-step needs one column pass in
// each direction (the transpose), so two tensor-core passes reach 4096^2 =
// 2^24.
//
//   2^8 .. 2^14   one contiguous pass (tc16 to 2^15, max_single).
//   2^15          split16: two passes, N = 4096 * 8: pass 0 the 4096-point
//                 DFTs down the 8 columns (stride 8) times W_N^(n2 k1) into the
//                 workspace; pass 1 the 8-point DFTs along the 4096 rows
//                 (radix-8 on the CUDA cores, fp32, no twiddle), written to
//                 X[k1 + 4096 k2]. (Two tensor-core passes would need a
//                 factor below 256; a single pass would need 256 KiB of
//                 shared memory for split16's data alone.)
//   2^16 .. 2^24  two passes (four-step; split16 up to 2^23, two_pass_max),
//                 N = N1 * N2, N1 = 2^floor(l/2) <= N2 <= 4096:
//                 x[n1 N2 + n2]; pass 0: N1-point DFTs down
//                 the N2 columns, times W_N^(n2 k1), into the workspace at
//                 k1 N2 + n2; pass 1: N2-point DFTs along the N1 rows, written
//                 to X[k1 + N1 k2] (column stride N1).
//   2^25 .. 2^27  three passes (split16 from 2^24), N = N1 * N2 * N3 (each
//                 256 .. 512, N1 <= N2 <= N3): x[n1 N2 N3 + n2 N3 + n3] and
//                 X[k1 + N1 k2 + N1 N2 k3] with
//                   pass 0: N1-point DFTs over n1 (stride N2 N3) times
//                     W_N^((n2 N3 + n3) k1), in place in out
//                     ([k1][n2][n3]);
//                   pass 1: N2-point DFTs over n2 (stride N3) times
//                     W_{N2 N3}^(n3 k2), out -> workspace transposed to
//                     [k2][k1][n3] (s_in = N3, s_out = N1 N3);
//                   pass 2: N3-point DFTs along the rows, workspace -> out at
//                     X[k1 + N1 k2 + N1 N2 k3] (s_out = N1 N2).
//                 Two passes cannot cover 2^25: one of them would need a
//                 column pass of 8192+ points (no shared-memory room for C >= 2
//                 such columns and the level-2 scratch), so three passes of
//                 short, wide-run columns it is.
void
fftd__tc_layout_factors(
    int npass, const int64_t *f, int64_t batch, fftd__tc_layout *lay)
{
	memset(lay, 0, sizeof *lay);
	if (npass == 1) {
		lay->npass   = 1;
		lay->points  = f[0];
		lay->pass[0] = mkpass(
		    f[0], batch, 1, 1, 0, FFTD__TC_BUF_IN, FFTD__TC_BUF_OUT);
		return;
	}
	if (npass == 2) {
		int64_t n1 = f[0], n2 = f[1], n = n1 * n2;
		lay->npass     = 2;
		lay->points    = n;
		lay->ws_points = batch * n;
		lay->pass[0]   = mkpass(n1, batch * n2, n2, n2, n,
		      FFTD__TC_BUF_IN, FFTD__TC_BUF_WS);
		lay->pass[1] = mkpass(n2, batch * n1, 1, n1, 0, FFTD__TC_BUF_WS,
		    FFTD__TC_BUF_OUT);
		return;
	}
	int64_t n1 = f[0], n2 = f[1], n3 = f[2], n = n1 * n2 * n3;
	lay->npass     = 3;
	lay->points    = n;
	lay->ws_points = batch * n;
	lay->pass[0]   = mkpass(n1, batch * n2 * n3, n2 * n3, n2 * n3, n,
	      FFTD__TC_BUF_IN, FFTD__TC_BUF_OUT);
	lay->pass[1]   = mkpass(n2, batch * n1 * n3, n3, n1 * n3, n2 * n3,
	      FFTD__TC_BUF_OUT, FFTD__TC_BUF_WS);
	lay->pass[2]   = mkpass(n3, batch * n1 * n2, 1, n1 * n2, 0,
	      FFTD__TC_BUF_WS, FFTD__TC_BUF_OUT);
}

static int
layout_1d(int64_t n, int64_t batch, fftd__tc_algo algo, fftd__tc_layout *lay)
{
	int     l = log2i(n);
	int64_t f[3];
	if (n <= max_single(algo)) {
		f[0] = n;
		fftd__tc_layout_factors(1, f, batch, lay);
	} else if (l == 15) {
		f[0] = FFTD__TC_MAX_STRIDED_LEN;
		f[1] = n / f[0]; // 8: a CUDA-core pass
		fftd__tc_layout_factors(2, f, batch, lay);
	} else if (l <= two_pass_max(algo)) {
		f[0] = (int64_t) 1 << (l / 2);
		f[1] = n / f[0];
		fftd__tc_layout_factors(2, f, batch, lay);
	} else {
		int l1 = l / 3, l2 = (l - l1) / 2;
		f[0] = (int64_t) 1 << l1;
		f[1] = (int64_t) 1 << l2;
		f[2] = n / (f[0] * f[1]);
		fftd__tc_layout_factors(3, f, batch, lay);
	}
	return FFTD__TC_OK;
}

// axis_len_ok says whether some compiled pass kernel takes an axis of len
// points, contiguous (the last axis) or over columns (strided): the
// CUDA-core shared-memory kernel for 32 .. 128 (kernels/tc_axis.cuh), the
// tensor-core passes from 256 (at most 4096 over columns; contiguous axes
// to split16's limit, which both precisions share).
static int
axis_len_ok(int64_t len, int strided)
{
	if (len >= FFTD__TC_AXIS_MIN && len <= FFTD__TC_AXIS_MAX)
		return 1;
	return len >= FFTD__TC_MIN_LEN
	    && len
	    <= (strided ? FFTD__TC_MAX_STRIDED_LEN : FFTD__TC_MAX_LEN_SPLIT16);
}

// plane_ok says whether the last two sides of a 3D shape, rows of z points
// and y of them, are one FFTD__TC_OP_PLANE pass (tc.h).
static int
plane_ok(int64_t y, int64_t z)
{
	return y >= FFTD__TC_AXIS_MIN && y <= FFTD__TC_AXIS_MAX
	    && z >= FFTD__TC_AXIS_MIN && z <= FFTD__TC_AXIS_MAX
	    && y * z <= FFTD__TC_PLANE_MAX;
}

// layout_axes lays out a rank 2 or 3 transform as one pass per axis, all in
// place in out after the first: the last axis (contiguous rows) from in to
// out, then each earlier axis i as columns of stride prod(dims[i+1..]). A 3D
// shape whose last two sides make a plane (plane_ok) has two passes
// instead: the planes (in to out), then the first axis. The caller checked
// the sides' ranges and the batch.
static int
layout_axes(int rank, const int64_t *dims, int64_t batch, fftd__tc_layout *lay)
{
	int64_t points = 1, stride = 1;
	for (int i = 0; i < rank; i++)
		points *= dims[i];
	lay->points = points;
	lay->npass  = rank;
	int k = 0, i = rank - 1;
	if (rank == 3 && plane_ok(dims[1], dims[2])) {
		stride            = dims[1] * dims[2];
		lay->pass[0]      = mkpass(dims[2], batch * dims[0], 1, 1, 0,
		         FFTD__TC_BUF_IN, FFTD__TC_BUF_OUT);
		lay->pass[0].op   = FFTD__TC_OP_PLANE;
		lay->pass[0].len2 = (int) dims[1];
		lay->npass        = 2;
		k                 = 1;
		i                 = 0;
	}
	for (; i >= 0; i--, k++) {
		if (!axis_len_ok(dims[i], stride > 1))
			return FFTD__TC_EUNSUPPORTED;
		lay->pass[k]
		    = mkpass(dims[i], batch * (points / dims[i]), stride,
		        stride, 0, k == 0 ? FFTD__TC_BUF_IN : FFTD__TC_BUF_OUT,
		        FFTD__TC_BUF_OUT);
		stride *= dims[i];
	}
	return FFTD__TC_OK;
}

// check_dims checks rank, dims and batch common to every kind: EINVAL for
// what no plan could be, EUNSUPPORTED for non-powers of two.
static int
check_dims(int rank, const int64_t *dims, int64_t batch)
{
	if (dims == NULL || batch < 1 || rank < 1)
		return FFTD__TC_EINVAL;
	if (rank > 3)
		return FFTD__TC_EUNSUPPORTED;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 1)
			return FFTD__TC_EINVAL;
		if (!is_pow2(dims[i]))
			return FFTD__TC_EUNSUPPORTED;
	}
	return FFTD__TC_OK;
}

// in_range says whether every side of a rank 2 or 3 shape lies in the C2C
// ranges of tc.h (2D: 256 .. 4096; 3D: 32 .. 512).
static int
in_range(int rank, const int64_t *dims)
{
	int64_t lo = rank == 2 ? FFTD__TC_MIN_LEN : FFTD__TC_MIN_3D,
	        hi = rank == 2 ? FFTD__TC_MAX_STRIDED_LEN : FFTD__TC_MAX_3D;
	for (int i = 0; i < rank; i++)
		if (dims[i] < lo || dims[i] > hi)
			return 0;
	return 1;
}

// plan_layout checks a C2C shape against the kernels' ranges and lays it
// out: 1D by layout_1d (one pass up to max_single, two up to 2^two_pass_max
// points), 2D and 3D by layout_axes.
static int
plan_layout(int rank, const int64_t *dims, int64_t batch, fftd__tc_algo algo,
    fftd__tc_layout *lay)
{
	memset(lay, 0, sizeof *lay);
	int rc = check_dims(rank, dims, batch);
	if (rc != FFTD__TC_OK)
		return rc;
	if (rank == 1) {
		int64_t n = dims[0];
		if (n < FFTD__TC_MIN_LEN || n > FFTD__TC_MAX_1D)
			return FFTD__TC_EUNSUPPORTED;
		if (batch > ((int64_t) 1 << 40) / n)
			return FFTD__TC_EINVAL;
		rc = layout_1d(n, batch, algo, lay);
	} else {
		// 2D: rows then columns; 3D: one pass per axis, or planes
		// and the first axis (layout_axes)
		if (!in_range(rank, dims))
			return FFTD__TC_EUNSUPPORTED;
		int64_t points = 1;
		for (int i = 0; i < rank; i++)
			points *= dims[i];
		if (batch > ((int64_t) 1 << 40) / points)
			return FFTD__TC_EINVAL;
		rc = layout_axes(rank, dims, batch, lay);
	}
	lay->rank = rank;
	for (int i = 0; i < rank; i++)
		lay->cdims[i] = dims[i];
	return rc;
}

// Real transforms (R2C, C2R) as the complex transform of half the length:
// the real rows x[K][j] (K the index over the leading axes, j < n) read as
// z[K][m] = x[K][2m] + i x[K][2m + 1], m < h = n/2, so the real input is the
// complex array as it lies. With Z the complex transform of z over every
// axis (dims d[0..rank-2] x h), the R2C output, k = 0 .. h, is
//   X[K][k] = E + W_n^k O,  E = (Z[K][k] + conj(Z[-K][-k])) / 2,
//                           O = -i (Z[K][k] - conj(Z[-K][-k])) / 2,
// indices mod each side (Numerical Recipes, 3rd ed., sec. 12.3.2; for rank >
// 1 -K negates every leading axis). C2R inverts it: from the half spectrum,
//   Z[K][m] = A + B + i W_n^-m (A - B),  A = X[K][m], B = conj(X[-K][h - m]),
// then the inverse complex transform gives y[2m] + i y[2m + 1] unnormalized,
// as FFTW's c2r. The complex passes are those of the C2C layout of the
// complex dims, with their buffers renamed so that the real step has a
// workspace of its own to read or write (tc.h, fftd__tc_plan_layout_algo).
int
fftd__tc_plan_layout_algo(fftd__tc_algo algo, fftd__tc_type type, int rank,
    const int64_t *dims, int64_t batch, fftd__tc_layout *lay)
{
	if (type == FFTD__TC_C2C)
		return plan_layout(rank, dims, batch, algo, lay);
	memset(lay, 0, sizeof *lay);
	if (type != FFTD__TC_R2C && type != FFTD__TC_C2R)
		return FFTD__TC_EINVAL;
	int rc = check_dims(rank, dims, batch);
	if (rc != FFTD__TC_OK)
		return rc;
	int64_t n = dims[rank - 1], cd[3] = { 0 };
	if (rank == 1 ? n < FFTD__TC_MIN_REAL_1D || n > FFTD__TC_MAX_1D
	              : !in_range(rank, dims) || n < FFTD__TC_MIN_REAL_LAST)
		return FFTD__TC_EUNSUPPORTED;
	int64_t points = 1;
	for (int i = 0; i < rank; i++) {
		cd[i] = i == rank - 1 ? dims[i] / 2 : dims[i];
		points *= cd[i];
	}
	if (batch > ((int64_t) 1 << 40) / points)
		return FFTD__TC_EINVAL;
	if (rank == 1)
		rc = plan_layout(1, cd, batch, algo, lay);
	else
		rc = layout_axes(rank, cd, batch, lay);
	if (rc != FFTD__TC_OK)
		return rc;
	lay->rank = rank;
	for (int i = 0; i < rank; i++)
		lay->cdims[i] = cd[i];
	// R2C: the complex result goes to the workspace and the complex
	// passes' own scratch to out (as large: rows of h + 1); C2R: the
	// complex passes start in the workspace and use it as their scratch
	// too (every pass that reads and writes it keeps its positions).
	static const int r2c_map[3]
	    = { FFTD__TC_BUF_IN, FFTD__TC_BUF_WS, FFTD__TC_BUF_OUT },
	    c2r_map[3] = { FFTD__TC_BUF_WS, FFTD__TC_BUF_OUT, FFTD__TC_BUF_WS };
	const int *map = type == FFTD__TC_R2C ? r2c_map : c2r_map;
	for (int i = 0; i < lay->npass; i++) {
		lay->pass[i].src = map[lay->pass[i].src];
		lay->pass[i].dst = map[lay->pass[i].dst];
	}
	int64_t       h    = cd[rank - 1];
	fftd__tc_pass real = mkpass(h, batch * (points / h), 1, 1, 0,
	    FFTD__TC_BUF_WS, FFTD__TC_BUF_OUT);
	if (type == FFTD__TC_R2C) {
		real.op                 = FFTD__TC_OP_R2C_POST;
		lay->pass[lay->npass++] = real;
	} else {
		real.op  = FFTD__TC_OP_C2R_PRE;
		real.src = FFTD__TC_BUF_IN;
		real.dst = FFTD__TC_BUF_WS;
		memmove(&lay->pass[1], &lay->pass[0],
		    (size_t) lay->npass * sizeof lay->pass[0]);
		lay->pass[0] = real;
		lay->npass++;
	}
	lay->ws_points = batch * points;
	return FFTD__TC_OK;
}

void
fftd__tc_layout_route_io(fftd__tc_layout *lay, int64_t batch)
{
	int last = lay->npass - 1, moved = 0;
	for (int i = 0; i < lay->npass; i++) {
		if (i != last && lay->pass[i].dst == FFTD__TC_BUF_OUT) {
			lay->pass[i].dst = FFTD__TC_BUF_TMP;
			moved            = 1;
		}
		if (i != 0 && lay->pass[i].src == FFTD__TC_BUF_OUT) {
			lay->pass[i].src = FFTD__TC_BUF_TMP;
			moved            = 1;
		}
	}
	lay->tmp_points = moved ? batch * lay->points : 0;
}

void
fftd__tc_twiddles(int64_t n, int64_t count, int64_t step, float *out)
{
	for (int64_t j = 0; j < count; j++) {
		// reduce j*step mod n exactly in integers, then use the octant
		// symmetry so the quarter points come out exact (0, +-1)
		int64_t m = (int64_t) (((unsigned __int128) j * (uint64_t) step)
		    % (uint64_t) n);
		long double c, s;
		if ((4 * m) % n == 0) {
			static const long double qc[4] = { 1, 0, -1, 0 },
			                         qs[4] = { 0, 1, 0, -1 };
			c                              = qc[(4 * m) / n];
			s                              = qs[(4 * m) / n];
		} else {
			long double a = 2.0L
			    * 3.14159265358979323846264338327950288L
			    * (long double) m / (long double) n;
			c = cosl(a);
			s = sinl(a);
		}
		out[2 * j]     = (float) c;
		out[2 * j + 1] = (float) -s; // forward: exp(-i a)
	}
}

// Round-to-nearest-even right shift of m by s (1 <= s).
static uint32_t
rne_shift(uint32_t m, int s)
{
	if (s > 31)
		return 0;
	uint32_t q = m >> s, r = m & ((1u << s) - 1), half = 1u << (s - 1);
	if (r > half || (r == half && (q & 1u)))
		q++;
	return q;
}

uint16_t
fftd__tc_f16_from_f32(float x)
{
	uint32_t b;
	memcpy(&b, &x, sizeof b);
	uint32_t sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
	if (a >= 0x7f800000u) // inf, NaN (quiet)
		return (
		    uint16_t) (sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
	int e = (int) (a >> 23);
	if (e >= 113) { // normal half range or overflow: rebias, round 23 -> 10
		        // bits
		uint32_t h = rne_shift(a - (112u << 23), 13);
		if (h >= 0x7c00u)
			h = 0x7c00u;
		return (uint16_t) (sign | h);
	}
	if (e == 0) // float subnormals are far below half's smallest step
		return (uint16_t) sign;
	// half subnormal: value = mant * 2^(e - 150), step 2^-24
	uint32_t mant = (a & 0x7fffffu) | 0x800000u;
	return (uint16_t) (sign | rne_shift(mant, 126 - e));
}

float
fftd__tc_f32_from_f16(uint16_t h)
{
	uint32_t sign = (uint32_t) (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu,
	         m = h & 0x3ffu, b;
	if (e == 0x1f)
		b = sign | 0x7f800000u | (m << 13);
	else if (e != 0)
		b = sign | ((e + 112u) << 23) | (m << 13);
	else if (m == 0)
		b = sign;
	else { // subnormal: normalize
		int s = 0;
		while (!(m & 0x400u)) {
			m <<= 1;
			s++;
		}
		b = sign | ((uint32_t) (113 - s) << 23) | ((m & 0x3ffu) << 13);
	}
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

void
fftd__tc_split(float x, int e, uint16_t *hi, uint16_t *lo)
{
	float xs = ldexpf(x, e);
	*hi      = fftd__tc_f16_from_f32(xs);
	*lo      = fftd__tc_f16_from_f32(xs - fftd__tc_f32_from_f16(*hi));
}

int
fftd__tc_plan_supported(fftd__tc_algo algo, fftd__tc_type type, int rank,
    const int64_t *dims, int64_t batch)
{
	fftd__tc_layout lay;
	if (algo != FFTD__TC_TC16 && algo != FFTD__TC_SPLIT16)
		return FFTD__TC_EINVAL;
	if (type != FFTD__TC_C2C && type != FFTD__TC_R2C
	    && type != FFTD__TC_C2R)
		return FFTD__TC_EINVAL;
	return fftd__tc_plan_layout_algo(algo, type, rank, dims, batch, &lay);
}

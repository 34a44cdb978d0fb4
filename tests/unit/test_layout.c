// SPDX-License-Identifier: MIT
//
// test_layout.c — fftd__shape_resolve and fftd__side_copy (common/layout.c):
// a table of plan descriptions with the exact status each must get, and
// for the valid ones the extents, byte counts and distances worked out by
// hand; then brute-force checks of every valid layout (largest index + 1
// is the extent; a side called dense uses every element) and of side_copy
// (only layout elements are copied).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../util/cases.h"
#include "layout.h"

#define C2C(p) .kind = FFTD_C2C, .precision = (p), .direction = FFTD_FORWARD
#define C2CI(p) .kind = FFTD_C2C, .precision = (p), .direction = FFTD_INVERSE
#define R2C(p) .kind = FFTD_R2C, .precision = (p), .direction = FFTD_FORWARD
#define C2R(p) .kind = FFTD_C2R, .precision = (p), .direction = FFTD_INVERSE

static const fftd__limits lim_none  = { 0, 0, 0 };
static const fftd__limits lim_small = { 1024, 2, 4 }; // bytes, rank, batch

typedef struct side_want {
	int64_t  elems;
	uint64_t bytes;
	int64_t  dist;
	int64_t  last_n; // n[rank-1] on this side (n/2+1 on a complex half)
	int      dense;  // 1, 0, or -1: either is right
} side_want;

typedef struct layout_case {
	const char         *name;
	fftd_plan_desc      d;
	const fftd__limits *lim;
	int                 code;
	int64_t             total;
	side_want           in, out;
} layout_case;

#define P2(k) ((int64_t) 1 << (k))

static const layout_case cases[] = {
	// --- valid layouts, worked out by hand ----------------------------
	// contiguous: extent = batch * prod(n) on each side.
	{ "c2c f64 8", { .rank = 1, .n = { 8 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_OK, 8, { 8, 128, 8, 8, 1 }, { 8, 128, 8, 8, 1 } },
	{ "c2c f32 4x6 b3",
	    { .rank = 2, .n = { 4, 6 }, .batch = 3, C2C(FFTD_F32) }, NULL,
	    FFTD_OK, 24, { 72, 576, 24, 6, 1 }, { 72, 576, 24, 6, 1 } },
	{ "c2c f64 inverse ortho 5",
	    { .rank    = 1,
	        .n     = { 5 },
	        .batch = 1,
	        C2CI(FFTD_F64),
	        .norm = FFTD_NORM_ORTHO },
	    NULL, FFTD_OK, 5, { 5, 80, 5, 5, 1 }, { 5, 80, 5, 5, 1 } },
	// R2C: complex side n/2+1 (7 -> 4, 9 -> 5), real 8 B, complex 16 B.
	{ "r2c f64 7 b2", { .rank = 1, .n = { 7 }, .batch = 2, R2C(FFTD_F64) },
	    NULL, FFTD_OK, 7, { 14, 112, 7, 7, 1 }, { 8, 128, 4, 4, 1 } },
	{ "r2c f64 9", { .rank = 1, .n = { 9 }, .batch = 1, R2C(FFTD_F64) },
	    NULL, FFTD_OK, 9, { 9, 72, 9, 9, 1 }, { 5, 80, 5, 5, 1 } },
	{ "c2r f32 6x9",
	    { .rank = 2, .n = { 6, 9 }, .batch = 1, C2R(FFTD_F32) }, NULL,
	    FFTD_OK, 54, { 30, 240, 30, 5, 1 }, { 54, 216, 54, 9, 1 } },
	{ "c2r f64 8", { .rank = 1, .n = { 8 }, .batch = 1, C2R(FFTD_F64) },
	    NULL, FFTD_OK, 8, { 5, 80, 5, 5, 1 }, { 8, 64, 8, 8, 1 } },
	// f16: real 2 B, complex 4 B; 4x4x8 -> complex 4x4x5 = 80.
	{ "r2c f16 4x4x8 b2",
	    { .rank = 3, .n = { 4, 4, 8 }, .batch = 2, R2C(FFTD_F16) }, NULL,
	    FFTD_OK, 128, { 256, 512, 128, 8, 1 }, { 160, 640, 80, 5, 1 } },
	{ "r2c f32 1 b2", { .rank = 1, .n = { 1 }, .batch = 2, R2C(FFTD_F32) },
	    NULL, FFTD_OK, 1, { 2, 8, 1, 1, 1 }, { 2, 16, 1, 1, 1 } },
	{ "c2c f64 1", { .rank = 1, .n = { 1 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_OK, 1, { 1, 16, 1, 1, 1 }, { 1, 16, 1, 1, 1 } },
	// strided: one transform spans (n-1)*stride+1; default dist =
	// stride*n = 10; extent = 2*10 + 8 + 1 = 29.
	{ "c2c f64 5 is2 b3",
	    { .rank = 1, .n = { 5 }, .batch = 3, C2C(FFTD_F64), .istride = 2 },
	    NULL, FFTD_OK, 5, { 29, 464, 10, 5, 0 }, { 15, 240, 5, 5, 1 } },
	// out stride 2, dist 20: extent = 20 + 14 + 1 = 35.
	{ "c2c f64 8 os2 od20 b2",
	    { .rank    = 1,
	        .n     = { 8 },
	        .batch = 2,
	        C2C(FFTD_F64),
	        .ostride = 2,
	        .odist   = 20 },
	    NULL, FFTD_OK, 8, { 16, 256, 8, 8, 1 }, { 35, 560, 20, 8, 0 } },
	// embedded 3x4 in 5x6: span = 3 + 2*6 = 15, dist = 30, extent 46.
	{ "c2c f64 3x4 in5x6 b2",
	    { .rank    = 2,
	        .n     = { 3, 4 },
	        .batch = 2,
	        C2C(FFTD_F64),
	        .inembed = { 5, 6 } },
	    NULL, FFTD_OK, 12, { 46, 736, 30, 4, 0 }, { 24, 384, 12, 4, 1 } },
	// only embed[0] larger: one transform is contiguous (extent 12).
	{ "c2c f64 3x4 in5x4 b1",
	    { .rank    = 2,
	        .n     = { 3, 4 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { 5, 4 } },
	    NULL, FFTD_OK, 12, { 12, 192, 20, 4, 1 }, { 12, 192, 12, 4, 1 } },
	// ... but with two transforms, dist = 20 leaves elements 12..19
	// unused: not dense. extent = 20 + 11 + 1 = 32.
	{ "c2c f64 3x4 in5x4 b2",
	    { .rank    = 2,
	        .n     = { 3, 4 },
	        .batch = 2,
	        C2C(FFTD_F64),
	        .inembed = { 5, 4 } },
	    NULL, FFTD_OK, 12, { 32, 512, 20, 4, 0 }, { 24, 384, 12, 4, 1 } },
	// interleaved batch: stride 4, dist 1: extent = 3 + 20 + 1 = 24.
	{ "c2c f32 6 is4 id1 b4",
	    { .rank    = 1,
	        .n     = { 6 },
	        .batch = 4,
	        C2C(FFTD_F32),
	        .istride = 4,
	        .idist   = 1 },
	    NULL, FFTD_OK, 6, { 24, 192, 1, 6, -1 }, { 24, 192, 6, 6, 1 } },
	// padded distance: extent = 2*7 + 3 + 1 = 18.
	{ "c2c f64 4 id7 b3",
	    { .rank = 1, .n = { 4 }, .batch = 3, C2C(FFTD_F64), .idist = 7 },
	    NULL, FFTD_OK, 4, { 18, 288, 7, 4, 0 }, { 12, 192, 4, 4, 1 } },
	// overlapping input transforms (dist 1 < n): extent 2 + 3 + 1 = 6.
	{ "c2c f64 4 id1 b3",
	    { .rank = 1, .n = { 4 }, .batch = 3, C2C(FFTD_F64), .idist = 1 },
	    NULL, FFTD_OK, 4, { 6, 96, 1, 4, 0 }, { 12, 192, 4, 4, 1 } },
	// FFTW's in-place R2C: real rows padded to 2*(6/2+1) = 8.
	// span = 5 + 3*8 = 29, dist 32, extent 62.
	{ "r2c f64 4x6 in4x8 b2",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 2,
	        R2C(FFTD_F64),
	        .inembed = { 4, 8 } },
	    NULL, FFTD_OK, 24, { 62, 496, 32, 6, 0 }, { 32, 512, 16, 4, 1 } },
	{ "c2r f64 4x6 on4x8 b2",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 2,
	        C2R(FFTD_F64),
	        .onembed = { 4, 8 } },
	    NULL, FFTD_OK, 24, { 32, 512, 16, 4, 1 }, { 62, 496, 32, 6, 0 } },
	// the complex side's embed may equal n/2+1 exactly.
	{ "r2c f64 4x6 on4x4",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        R2C(FFTD_F64),
	        .onembed = { 4, 4 } },
	    NULL, FFTD_OK, 24, { 24, 192, 24, 6, 1 }, { 16, 256, 16, 4, 1 } },
	// rank 3, stride 2, embed 3x5x6: span = 3 + 2*6 + 1*30 = 45,
	// one = 90, dist = 2*90 = 180, extent 91 (f32 complex: 8 B).
	{ "c2c f32 2x3x4 is2 in3x5x6",
	    { .rank    = 3,
	        .n     = { 2, 3, 4 },
	        .batch = 1,
	        C2C(FFTD_F32),
	        .istride = 2,
	        .inembed = { 3, 5, 6 } },
	    NULL, FFTD_OK, 24, { 91, 728, 180, 4, 0 }, { 24, 192, 24, 4, 1 } },
	// limits: exactly at each limit is fine; zero limits mean none.
	{ "limit bytes: 1024 of 1024",
	    { .rank = 1, .n = { 64 }, .batch = 1, C2C(FFTD_F64) }, &lim_small,
	    FFTD_OK, 64, { 64, 1024, 64, 64, 1 }, { 64, 1024, 64, 64, 1 } },
	{ "limit batch: 4 of 4",
	    { .rank = 1, .n = { 16 }, .batch = 4, C2C(FFTD_F64) }, &lim_small,
	    FFTD_OK, 16, { 64, 1024, 16, 16, 1 }, { 64, 1024, 16, 16, 1 } },
	{ "limit rank: 2 of 2",
	    { .rank = 2, .n = { 4, 4 }, .batch = 1, C2C(FFTD_F32) }, &lim_small,
	    FFTD_OK, 16, { 16, 128, 16, 4, 1 }, { 16, 128, 16, 4, 1 } },
	{ "zero limits are none",
	    { .rank = 1, .n = { P2(20) }, .batch = 1000, C2C(FFTD_F64) },
	    &lim_none, FFTD_OK, P2(20),
	    { 1048576000, 16777216000ull, P2(20), P2(20), 1 },
	    { 1048576000, 16777216000ull, P2(20), P2(20), 1 } },

	// --- EINVAL ---------------------------------------------------------
	{ "rank 0", { .rank = 0, .n = { 8 }, .batch = 1, C2C(FFTD_F64) }, NULL,
	    FFTD_EINVAL },
	{ "rank 4", { .rank = 4, .n = { 8, 8, 8 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_EINVAL },
	{ "rank -1", { .rank = -1, .n = { 8 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_EINVAL },
	{ "rank 4 is invalid before any limit",
	    { .rank = 4, .n = { 8, 8, 8 }, .batch = 1, C2C(FFTD_F64) },
	    &lim_small, FFTD_EINVAL },
	{ "n[0] = 0", { .rank = 1, .n = { 0 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_EINVAL },
	{ "n[1] = -5", { .rank = 2, .n = { 4, -5 }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_EINVAL },
	{ "n[2] = 0",
	    { .rank = 3, .n = { 4, 4, 0 }, .batch = 1, C2C(FFTD_F64) }, NULL,
	    FFTD_EINVAL },
	{ "batch 0", { .rank = 1, .n = { 8 }, .batch = 0, C2C(FFTD_F64) }, NULL,
	    FFTD_EINVAL },
	{ "batch -1", { .rank = 1, .n = { 8 }, .batch = -1, C2C(FFTD_F64) },
	    NULL, FFTD_EINVAL },
	{ "kind 3",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = (fftd_kind) 3,
	        .precision = FFTD_F64,
	        .direction = FFTD_FORWARD },
	    NULL, FFTD_EINVAL },
	{ "kind -1",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = (fftd_kind) -1,
	        .precision = FFTD_F64,
	        .direction = FFTD_FORWARD },
	    NULL, FFTD_EINVAL },
	{ "precision 3",
	    { .rank = 1, .n = { 8 }, .batch = 1, C2C((fftd_precision) 3) },
	    NULL, FFTD_EINVAL },
	{ "precision -1",
	    { .rank = 1, .n = { 8 }, .batch = 1, C2C((fftd_precision) -1) },
	    NULL, FFTD_EINVAL },
	{ "direction 0",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = FFTD_C2C,
	        .precision = FFTD_F64,
	        .direction = (fftd_direction) 0 },
	    NULL, FFTD_EINVAL },
	{ "direction 2",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = FFTD_C2C,
	        .precision = FFTD_F64,
	        .direction = (fftd_direction) 2 },
	    NULL, FFTD_EINVAL },
	{ "norm 3",
	    { .rank    = 1,
	        .n     = { 8 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .norm = (fftd_norm) 3 },
	    NULL, FFTD_EINVAL },
	{ "norm -1",
	    { .rank    = 1,
	        .n     = { 8 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .norm = (fftd_norm) -1 },
	    NULL, FFTD_EINVAL },
	{ "r2c inverse",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = FFTD_R2C,
	        .precision = FFTD_F64,
	        .direction = FFTD_INVERSE },
	    NULL, FFTD_EINVAL },
	{ "c2r forward",
	    { .rank        = 1,
	        .n         = { 8 },
	        .batch     = 1,
	        .kind      = FFTD_C2R,
	        .precision = FFTD_F64,
	        .direction = FFTD_FORWARD },
	    NULL, FFTD_EINVAL },
	{ "istride -1",
	    { .rank = 1, .n = { 8 }, .batch = 1, C2C(FFTD_F64), .istride = -1 },
	    NULL, FFTD_EINVAL },
	{ "idist -3",
	    { .rank = 1, .n = { 8 }, .batch = 2, C2C(FFTD_F64), .idist = -3 },
	    NULL, FFTD_EINVAL },
	{ "ostride -2",
	    { .rank = 1, .n = { 8 }, .batch = 1, C2C(FFTD_F64), .ostride = -2 },
	    NULL, FFTD_EINVAL },
	{ "odist -1",
	    { .rank = 1, .n = { 8 }, .batch = 2, C2C(FFTD_F64), .odist = -1 },
	    NULL, FFTD_EINVAL },
	{ "inembed 3 < n 4",
	    { .rank    = 1,
	        .n     = { 4 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { 3 } },
	    NULL, FFTD_EINVAL },
	{ "inembed 4x5 < n 4x6",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { 4, 5 } },
	    NULL, FFTD_EINVAL },
	{ "r2c onembed 4x3 < complex 4x4",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        R2C(FFTD_F64),
	        .onembed = { 4, 3 } },
	    NULL, FFTD_EINVAL },
	{ "c2r inembed 4x3 < complex 4x4",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        C2R(FFTD_F64),
	        .inembed = { 4, 3 } },
	    NULL, FFTD_EINVAL },
	{ "c2r onembed 4x5 < real 4x6",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        C2R(FFTD_F64),
	        .onembed = { 4, 5 } },
	    NULL, FFTD_EINVAL },
	{ "inembed partly zero",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { 0, 8 } },
	    NULL, FFTD_EINVAL },
	{ "inembed negative",
	    { .rank    = 2,
	        .n     = { 4, 6 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { -1, 8 } },
	    NULL, FFTD_EINVAL },

	// --- EOVERFLOW
	// --------------------------------------------------------
	{ "n 2^40 x 2^40",
	    { .rank = 2, .n = { P2(40), P2(40) }, .batch = 1, C2C(FFTD_F64) },
	    NULL, FFTD_EOVERFLOW },
	{ "n 2^21 x 2^21 x 2^22",
	    { .rank    = 3,
	        .n     = { P2(21), P2(21), P2(22) },
	        .batch = 1,
	        C2C(FFTD_F32) },
	    NULL, FFTD_EOVERFLOW },
	{ "n 2^62: bytes overflow",
	    { .rank = 1, .n = { P2(62) }, .batch = 1, C2C(FFTD_F64) }, NULL,
	    FFTD_EOVERFLOW },
	{ "r2c 2^31 x 2^31: real bytes overflow",
	    { .rank = 2, .n = { P2(31), P2(31) }, .batch = 1, R2C(FFTD_F64) },
	    NULL, FFTD_EOVERFLOW },
	{ "batch 2^62",
	    { .rank = 1, .n = { 2 }, .batch = P2(62), C2C(FFTD_F64) }, NULL,
	    FFTD_EOVERFLOW },
	{ "istride 2^62",
	    { .rank    = 1,
	        .n     = { 3 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .istride = P2(62) },
	    NULL, FFTD_EOVERFLOW },
	{ "idist INT64_MAX",
	    { .rank    = 1,
	        .n     = { 3 },
	        .batch = 2,
	        C2C(FFTD_F64),
	        .idist = INT64_MAX },
	    NULL, FFTD_EOVERFLOW },
	{ "odist INT64_MAX",
	    { .rank    = 1,
	        .n     = { 3 },
	        .batch = 2,
	        C2C(FFTD_F64),
	        .odist = INT64_MAX },
	    NULL, FFTD_EOVERFLOW },
	{ "inembed 2^40 x 2^40",
	    { .rank    = 2,
	        .n     = { 1, 1 },
	        .batch = 1,
	        C2C(FFTD_F64),
	        .inembed = { P2(40), P2(40) } },
	    NULL, FFTD_EOVERFLOW },
	{ "overflow wins over limits",
	    { .rank = 1, .n = { P2(62) }, .batch = 1, C2C(FFTD_F64) },
	    &lim_small, FFTD_EOVERFLOW },

	// --- ELIMIT
	// ------------------------------------------------------------
	{ "limit rank: 3 of 2",
	    { .rank = 3, .n = { 2, 2, 2 }, .batch = 1, C2C(FFTD_F64) },
	    &lim_small, FFTD_ELIMIT },
	{ "limit batch: 5 of 4",
	    { .rank = 1, .n = { 4 }, .batch = 5, C2C(FFTD_F64) }, &lim_small,
	    FFTD_ELIMIT },
	{ "limit bytes: 1040 of 1024",
	    { .rank = 1, .n = { 65 }, .batch = 1, C2C(FFTD_F64) }, &lim_small,
	    FFTD_ELIMIT },
	{ "limit bytes: r2c output 1040 of 1024",
	    { .rank = 1, .n = { 128 }, .batch = 1, R2C(FFTD_F64) }, &lim_small,
	    FFTD_ELIMIT },
	{ "limit bytes: c2r input 1040 of 1024",
	    { .rank = 1, .n = { 128 }, .batch = 1, C2R(FFTD_F64) }, &lim_small,
	    FFTD_ELIMIT },
	{ "limit bytes: strides count",
	    { .rank = 1, .n = { 8 }, .batch = 1, C2C(FFTD_F64), .istride = 16 },
	    &lim_small, FFTD_ELIMIT },
	{ "limit bytes: 2^40 points",
	    { .rank = 1, .n = { P2(40) }, .batch = 1, C2C(FFTD_F64) },
	    &lim_small, FFTD_ELIMIT },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int
check_side(const char *name, const char *which, const fftd__side *sd,
    const side_want *w, int rank)
{
	if (sd->elems != w->elems || sd->bytes != w->bytes
	    || sd->dist != w->dist || sd->n[rank - 1] != w->last_n
	    || (w->dense >= 0 && sd->dense != (w->dense != 0))) {
		print_error(
		    "%s, %s side: elems %lld bytes %llu dist %lld last n "
		    "%lld dense %d; want %lld %llu %lld %lld %d\n",
		    name, which, (long long) sd->elems,
		    (unsigned long long) sd->bytes, (long long) sd->dist,
		    (long long) sd->n[rank - 1], (int) sd->dense,
		    (long long) w->elems, (unsigned long long) w->bytes,
		    (long long) w->dist, (long long) w->last_n, w->dense);
		return 1;
	}
	return 0;
}

static void
test_resolve_table(void **state)
{
	(void) state;
	int bad = 0;
	for (size_t i = 0; i < NCASES; i++) {
		const layout_case *c = &cases[i];
		fftd__shape        s;
		char               msg[256];
		memset(msg, 'x', sizeof(msg));
		int rv
		    = fftd__shape_resolve(&c->d, c->lim, &s, msg, sizeof(msg));
		if (rv != c->code) {
			print_error("%s: got %d, want %d (%s)\n", c->name, rv,
			    c->code, msg);
			bad++;
			continue;
		}
		if (rv != FFTD_OK) {
			// A failure always says why.
			if (msg[0] == '\0' || strlen(msg) >= sizeof(msg)) {
				print_error("%s: no reason given\n", c->name);
				bad++;
			}
			continue;
		}
		if (msg[0] != '\0') {
			print_error("%s: msg not cleared on success: %s\n",
			    c->name, msg);
			bad++;
		}
		if (s.total != c->total || s.rank != c->d.rank
		    || s.batch != c->d.batch || s.kind != c->d.kind
		    || s.precision != c->d.precision || s.norm != c->d.norm
		    || s.direction != c->d.direction) {
			print_error("%s: shape fields wrong (total %lld)\n",
			    c->name, (long long) s.total);
			bad++;
		}
		bad += check_side(c->name, "in", &s.in, &c->in, s.rank);
		bad += check_side(c->name, "out", &s.out, &c->out, s.rank);
		int64_t ws_in  = c->d.istride ? c->d.istride : 1;
		int64_t ws_out = c->d.ostride ? c->d.ostride : 1;
		assert_int_equal(s.in.stride, ws_in);
		assert_int_equal(s.out.stride, ws_out);
		assert_int_equal(s.in.complex, c->d.kind != FFTD_R2C);
		assert_int_equal(s.out.complex, c->d.kind != FFTD_C2R);
	}
	assert_int_equal(bad, 0);
}

static void
test_resolve_null_and_short_msg(void **state)
{
	(void) state;
	fftd__shape    s;
	char           msg[64];
	fftd_plan_desc d = { .rank = 0, .n = { 8 }, .batch = 1, C2C(FFTD_F64) };
	assert_int_equal(
	    fftd__shape_resolve(NULL, NULL, &s, msg, sizeof(msg)), FFTD_EINVAL);
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, NULL, msg, sizeof(msg)), FFTD_EINVAL);
	// No message buffer at all.
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, NULL, 0), FFTD_EINVAL);
	// A short buffer is truncated and terminated, never overrun.
	char small[16];
	memset(small, 'Z', sizeof(small));
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, small, 8), FFTD_EINVAL);
	assert_true(strlen(small) < 8);
	for (size_t i = 8; i < sizeof(small); i++) {
		assert_int_equal(small[i], 'Z');
	}
}

static void
test_elem_size(void **state)
{
	(void) state;
	assert_int_equal(fftd__elem_size(FFTD_F64, true), 16);
	assert_int_equal(fftd__elem_size(FFTD_F64, false), 8);
	assert_int_equal(fftd__elem_size(FFTD_F32, true), 8);
	assert_int_equal(fftd__elem_size(FFTD_F32, false), 4);
	assert_int_equal(fftd__elem_size(FFTD_F16, true), 4);
	assert_int_equal(fftd__elem_size(FFTD_F16, false), 2);
	assert_int_equal(fftd__elem_size((fftd_precision) 3, true), 0);
	assert_int_equal(fftd__elem_size((fftd_precision) -1, false), 0);
}

static void
test_side_index(void **state)
{
	(void) state;
	fftd__shape s;
	char        msg[128];
	// 3x4 embedded in 5x6, batch 2: element (2,3) of transform 1 is the
	// last one: 30 + 2*6 + 3 = 45.
	fftd_plan_desc d1 = { .rank = 2,
		.n                  = { 3, 4 },
		.batch              = 2,
		C2C(FFTD_F64),
		.inembed = { 5, 6 } };
	assert_int_equal(
	    fftd__shape_resolve(&d1, NULL, &s, msg, sizeof(msg)), 0);
	int64_t j[3] = { 2, 3, 0 };
	assert_int_equal(fftd__side_index(&s.in, 2, 1, j), 45);
	assert_int_equal(fftd__side_index(&s.out, 2, 1, j), 12 + 11);
	// rank 3, stride 2 in 3x5x6: (1,2,3) -> ((1*5)+2)*6+3 = 45, *2 = 90.
	fftd_plan_desc d2 = { .rank = 3,
		.n                  = { 2, 3, 4 },
		.batch              = 1,
		C2C(FFTD_F32),
		.istride = 2,
		.inembed = { 3, 5, 6 } };
	assert_int_equal(
	    fftd__shape_resolve(&d2, NULL, &s, msg, sizeof(msg)), 0);
	int64_t j2[3] = { 1, 2, 3 };
	assert_int_equal(fftd__side_index(&s.in, 3, 0, j2), 90);
	// interleaved: stride 4, dist 1: element 5 of transform 3 = 3 + 20.
	fftd_plan_desc d3 = { .rank = 1,
		.n                  = { 6 },
		.batch              = 4,
		C2C(FFTD_F32),
		.istride = 4,
		.idist   = 1 };
	assert_int_equal(
	    fftd__shape_resolve(&d3, NULL, &s, msg, sizeof(msg)), 0);
	int64_t j3[3] = { 5, 0, 0 };
	assert_int_equal(fftd__side_index(&s.in, 1, 3, j3), 23);
}

// For every valid case of the table: the largest layout index + 1 is the
// extent, and a side that claims to be dense really uses every element of
// its extent (side_copy relies on it for its single memcpy).
static void
test_extent_brute_force(void **state)
{
	(void) state;
	int bad = 0;
	for (size_t i = 0; i < NCASES; i++) {
		const layout_case *c = &cases[i];
		fftd__shape        s;
		char               msg[256];
		if (c->code != FFTD_OK
		    || fftd__shape_resolve(&c->d, c->lim, &s, msg, sizeof(msg))
		        != 0
		    || s.in.elems > 100000 || s.out.elems > 100000) {
			continue;
		}
		const fftd__side *sides[2] = { &s.in, &s.out };
		for (int k = 0; k < 2; k++) {
			const fftd__side *sd = sides[k];
			unsigned char    *m  = fftd_test_layout_mask(sd, s.rank,
			        s.batch, (size_t) sd->bytes + sd->elem_size);
			assert_non_null(m);
			int64_t last = -1, used = 0;
			for (int64_t e = 0; e <= sd->elems; e++) {
				if (m[(size_t) e * sd->elem_size]) {
					last = e;
					used++;
				}
			}
			if (last + 1 != sd->elems) {
				print_error(
				    "%s %s: largest index %lld, extent %lld\n",
				    c->name, k ? "out" : "in", (long long) last,
				    (long long) sd->elems);
				bad++;
			}
			if (sd->dense && used != sd->elems) {
				print_error("%s %s: called dense, but only "
				            "%lld of %lld "
				            "elements are in the layout\n",
				    c->name, k ? "out" : "in", (long long) used,
				    (long long) sd->elems);
				bad++;
			}
			free(m);
		}
	}
	assert_int_equal(bad, 0);
}

// side_copy must copy every layout element and nothing else.
static void
test_side_copy_only_layout(void **state)
{
	(void) state;
	static const fftd_plan_desc descs[] = {
		{ .rank = 1, .n = { 8 }, .batch = 3, C2C(FFTD_F64) }, // dense
		{ .rank    = 1,
		    .n     = { 5 },
		    .batch = 3,
		    C2C(FFTD_F64),
		    .istride = 2 },
		{ .rank    = 2,
		    .n     = { 3, 4 },
		    .batch = 2,
		    C2C(FFTD_F64),
		    .inembed = { 5, 6 } },
		{ .rank    = 2,
		    .n     = { 3, 4 },
		    .batch = 2,
		    C2C(FFTD_F64),
		    .inembed = { 5, 4 } },
		{ .rank    = 1,
		    .n     = { 6 },
		    .batch = 4,
		    C2C(FFTD_F32),
		    .istride = 4,
		    .idist   = 1 },
		{ .rank    = 1,
		    .n     = { 4 },
		    .batch = 3,
		    C2C(FFTD_F32),
		    .idist = 7 },
		{ .rank    = 3,
		    .n     = { 2, 3, 4 },
		    .batch = 2,
		    C2C(FFTD_F32),
		    .istride = 2,
		    .inembed = { 3, 5, 6 } },
		{ .rank    = 2,
		    .n     = { 4, 6 },
		    .batch = 2,
		    R2C(FFTD_F64),
		    .inembed = { 4, 8 } },
		{ .rank    = 3,
		    .n     = { 3, 4, 5 },
		    .batch = 2,
		    R2C(FFTD_F16),
		    .inembed = { 4, 5, 7 },
		    .idist   = 200 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
		fftd__shape s;
		char        msg[256], name[128];
		fftd_test_describe(&descs[i], name, sizeof(name));
		assert_int_equal(
		    fftd__shape_resolve(&descs[i], NULL, &s, msg, sizeof(msg)),
		    0);
		size_t         bytes = (size_t) s.in.bytes;
		unsigned char *src   = malloc(bytes);
		unsigned char *dst   = malloc(bytes);
		unsigned char *m
		    = fftd_test_layout_mask(&s.in, s.rank, s.batch, bytes);
		assert_non_null(src);
		assert_non_null(dst);
		assert_non_null(m);
		for (size_t b = 0; b < bytes; b++) {
			src[b] = (unsigned char) (b * 7 + 1)
			    | 1; // never 0xEE... mostly
			if (src[b] == 0xEE) {
				src[b] = 0x11;
			}
		}
		memset(dst, 0xEE, bytes);
		fftd__side_copy(dst, src, &s.in, s.rank, s.batch);
		size_t wrong = 0, leaked = 0;
		for (size_t b = 0; b < bytes; b++) {
			if (m[b] && dst[b] != src[b]) {
				wrong++;
			}
			if (!m[b] && dst[b] != 0xEE) {
				leaked++;
			}
		}
		if (wrong || leaked) {
			print_error(
			    "side_copy %s: %zu layout bytes not copied, %zu "
			    "bytes outside the layout written (dense %d)\n",
			    name, wrong, leaked, (int) s.in.dense);
			bad++;
		}
		free(src);
		free(dst);
		free(m);
	}
	assert_int_equal(bad, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_table),
		cmocka_unit_test(test_resolve_null_and_short_msg),
		cmocka_unit_test(test_elem_size),
		cmocka_unit_test(test_side_index),
		cmocka_unit_test(test_extent_brute_force),
		cmocka_unit_test(test_side_copy_only_layout),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
//
// tc.h — PRIVATE to fftd. The C ABI of the tensor-core FFT kernels (issue 4)
// and the index arithmetic that the CUDA kernels, the host planner and the
// host unit tests share. Nothing here is public: the daemon's tc16/split16
// backends and tests/ use it; clients see only fftd.h.
//
// Two algorithms, one kernel family (kernels/tc16_pass.cuh and its pieces):
//   tc16     fp16 complex storage (interleaved re, im: 4 bytes a point),
//            radix-16 DFTs as 16x16 matrix products on the tensor cores
//            (mma.sync m16n8k16, fp16 inputs, fp32 accumulation), after the
//            tcFFT paper (Li et al., "tcFFT: A Fast Half-Precision FFT
//            Library for NVIDIA Tensor Cores", IEEE CLUSTER 2021, sec. III).
//   split16  fp32 complex storage (8 bytes a point) through the same fp16
//            tensor cores: every operand is split into scaled fp16 hi + lo
//            parts and the products recombined in fp32 at every radix-16
//            stage, after Markidis et al. ("NVIDIA Tensor Core
//            Programmability, Performance & Precision", IPDPSW 2018, sec. V)
//            and Ootomo & Yokota ("Recovering single precision accuracy from
//            Tensor Cores while surpassing the FP32 theoretical peak
//            performance", IJHPCA 2022).
//
// Conventions are FFTW's and cuFFT's: forward is exp(-2 pi i jk/n),
// unnormalized in both directions; batches are contiguous (distance = the
// product of dims), dims row-major (the last one contiguous).
//
// Thread safety: plan create/destroy are not thread-safe with respect to the
// same plan; fftd__tc_execute only reads the plan, so one plan may be executed
// from several threads on several streams at once (each with its own
// workspace).

#ifndef FFTD_KERNELS_TC_H
#define FFTD_KERNELS_TC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define FFTD__TC_HD __host__ __device__ __forceinline__
// usable in constant expressions too (the kernels' template arguments)
#define FFTD__TC_HD_CONSTEXPR __host__ __device__ constexpr
#else
#define FFTD__TC_HD static inline
#define FFTD__TC_HD_CONSTEXPR static inline
#endif

// FFTD__TC_ERRORS is the one table of error codes: the enum and
// fftd__tc_strerror come from it. Codes are 0 or negative. A CUDA runtime error
// e is returned as FFTD__TC_ECUDA_BASE - e (a tagged range, so no information
// is lost); fftd__tc_cuda_error() recovers e.
#define FFTD__TC_ERRORS(X)                                                     \
	X(OK, 0, "success")                                                    \
	X(EINVAL, -1, "invalid argument")                                      \
	X(EUNSUPPORTED, -2, "size, rank or algorithm not supported")           \
	X(ENOMEM, -3, "out of host memory")                                    \
	X(EDEVMEM, -4, "out of device memory")                                 \
	X(ENODEV, -5, "no CUDA device")

enum {
#define FFTD__TC_ENUM(name, value, text) FFTD__TC_##name = value,
	FFTD__TC_ERRORS(FFTD__TC_ENUM)
#undef FFTD__TC_ENUM
	    FFTD__TC_ECUDA_BASE
	= -1000
};

// fftd__tc_strerror returns a static string for any code this file defines
// (CUDA-tagged codes included: "CUDA runtime error").
const char *fftd__tc_strerror(int err);

// fftd__tc_cuda_error returns the CUDA runtime error inside a tagged code, or
// 0 when err is not one.
int fftd__tc_cuda_error(int err);

// fftd__tc_algo names the two algorithms.
typedef enum fftd__tc_algo {
	FFTD__TC_TC16    = 1, // fp16 in/out, fp16 tensor-core products
	FFTD__TC_SPLIT16 = 2  // fp32 in/out, split fp16 hi/lo products
} fftd__tc_algo;

// fftd__tc_type is the transform's kind, cuFFT's and FFTW's layouts: C2C
// complex to complex; R2C real (n points per transform, dims row-major) to
// the non-redundant half (dims[0] x .. x (dims[rank-1]/2 + 1) complex points),
// forward only; C2R that half back to real, inverse only. Real elements are
// __half (tc16) or float (split16); complex ones the pairs of those.
typedef enum fftd__tc_type {
	FFTD__TC_C2C = 0,
	FFTD__TC_R2C = 1,
	FFTD__TC_C2R = 2
} fftd__tc_type;

// Directions, FFTW's sign convention.
#define FFTD__TC_FORWARD (-1)
#define FFTD__TC_INVERSE (+1)

typedef struct fftd__tc_plan fftd__tc_plan;

// fftd__tc_plan_create makes a plan for batch transforms of rank 1, 2 or 3
// with dims[0..rank-1] (powers of two) of kind type in direction
// FFTD__TC_FORWARD or FFTD__TC_INVERSE. C2C: 1D 256 .. 2^27
// (FFTD__TC_MAX_1D): 256 .. 32768 (split16: 16384) in one pass over memory,
// then 2^16 (split16: 2^15) .. 2^24 in two (split16: to 2^23), 2^25
// (split16: 2^24) .. 2^27 in three; 2D each side
// 256 .. 4096 (two passes); 3D each side 32 .. 512 (FFTD__TC_MIN_3D ..
// FFTD__TC_MAX_3D, three passes, one per axis, sides below 256 on the CUDA
// cores, kernels/tc_axis.cuh; two passes when the last two sides are at most
// 128 and their plane at most FFTD__TC_PLANE_MAX points: the plane,
// kernels/tc_plane.cuh, then the first axis). R2C (forward only) and C2R
// (inverse only): 1D n 512 .. 2^27, 2D and 3D as for C2C with the last (real)
// dim >= 64 (FFTD__TC_MIN_REAL_LAST); they run the complex transform of the
// real data read as n/2 complex points along the last axis, and a separate
// post-process (R2C) or pre-process (C2R) kernel (kernels/tc_real.cuh) — except
// 1D with n/2 <= FFTD__TC_MAX_FUSED_REAL executed out of place (in and out not
// overlapping), whose one complex pass runs the real step itself (one kernel).
// It allocates the plan's twiddle tables on the current CUDA device (cudaMalloc
// + cudaMemcpy, so it synchronizes); it never touches request data. On success
// *plan is set and FFTD__TC_OK returned; otherwise *plan is NULL. Errors:
// FFTD__TC_EINVAL (a bad argument, or R2C inverse / C2R forward),
// FFTD__TC_EUNSUPPORTED, FFTD__TC_ENOMEM, FFTD__TC_EDEVMEM, FFTD__TC_ENODEV,
// CUDA-tagged codes.
int fftd__tc_plan_create(fftd__tc_plan **plan, fftd__tc_algo algo,
    fftd__tc_type type, int rank, const int64_t *dims, int64_t batch,
    int direction);

// fftd__tc_plan_supported says (FFTD__TC_OK or FFTD__TC_EUNSUPPORTED/EINVAL)
// whether fftd__tc_plan_create would accept the shape; it needs no GPU.
int fftd__tc_plan_supported(fftd__tc_algo algo, fftd__tc_type type, int rank,
    const int64_t *dims, int64_t batch);

// fftd__tc_workspace_size stores in *bytes the device workspace execute needs:
// C2C: one copy of the batch (batch * prod(dims) points, 4 or 8 bytes each)
// for 1D transforms of more than one pass (tc16: more than 32768 points,
// split16: 16384), 0 for single-pass, 2D and 3D
// transforms; R2C and C2R: one copy of the batch's half-length complex array
// (batch * prod(dims) / 2 points), always; plans of fftd__tc_plan_create_io
// with a converted side and more than one pass one more copy of the
// batch (fftd__tc_layout_route_io).
int fftd__tc_workspace_size(const fftd__tc_plan *plan, size_t *bytes);

// The environment variable FFTD_TC_WIDE=0 (read at plan creation) selects
// the narrow column blocks of fftd__tc_block_ffts (32-byte runs; 16-byte for
// 4096-point columns, through a scratch buffer, instead of the wide in-place
// kernel's 32) instead of the wide ones (up to 128-byte runs); a tuning knob
// for benchmarks, not an interface.
//
// fftd__tc_execute enqueues the transform on stream (a cudaStream_t, NULL for
// the default stream) and returns without waiting. in and out are device
// pointers to batch * prod(dims) points (tc16: __half2 re,im; split16:
// float2), 16-byte aligned; in == out is allowed (in-place). workspace has
// fftd__tc_workspace_size bytes (may be NULL when that is 0) and must not be
// used by anything else until the transform is done. R2C: in holds
// batch * prod(dims) reals (__half or float), out batch * prod(dims[0..rank-2])
// * (dims[rank-1]/2 + 1) complex points; C2R the other way round; both may be
// in == out (no pass writes what another block of it has still to read),
// and C2R leaves in unchanged. The plan is only read:
// executing one plan concurrently on several streams is safe. Errors:
// FFTD__TC_EINVAL, CUDA-tagged codes (launch errors).
int fftd__tc_execute(const fftd__tc_plan *plan, const void *in, void *out,
    void *workspace, void *stream);

// Fused precision conversion (issue 18 item 4; tc16 only). fftd__tc_io is
// the element kind of a plan's input or output in device memory:
//   FFTD__TC_IO_NATIVE  the algorithm's storage (tc16: __half2 / __half);
//   FFTD__TC_IO_F32     float pairs (re, im); floats for R2C's input and
//                       C2R's output;
//   FFTD__TC_IO_I8      int8 pairs (re, im), or int8 reals for R2C; input
//                       only (radio voltages).
// The first pass converts what it reads into fp16 as it loads it (no
// separate conversion kernel), the last pass converts what it writes.
typedef enum fftd__tc_io {
	FFTD__TC_IO_NATIVE = 0,
	FFTD__TC_IO_F32    = 1,
	FFTD__TC_IO_I8     = 2
} fftd__tc_io;
// fftd__tc_plan_create_io is fftd__tc_plan_create for a tc16 plan whose input
// is in_io elements and whose output is out_io elements (in_io FFTD__TC_IO_*,
// out_io NATIVE or F32). The passes in between keep fp16 storage in the
// workspace, which grows by one fp16 copy of the batch when the plan has
// more than one pass (fftd__tc_workspace_size says how much). Errors as
// fftd__tc_plan_create, and FFTD__TC_EUNSUPPORTED for split16 with a
// kind other than NATIVE or for I8 output.
int fftd__tc_plan_create_io(fftd__tc_plan **plan, fftd__tc_algo algo,
    fftd__tc_type type, int rank, const int64_t *dims, int64_t batch,
    int direction, fftd__tc_io in_io, fftd__tc_io out_io);
// fftd__tc_execute_io is fftd__tc_execute with the input and output in the
// plan's fftd__tc_io kinds and a per-transform scale: exps, when not NULL,
// is a device array of batch ints e[t] (fftd__conv_exponents, convert.h,
// computes them from each transform's largest magnitude so that no fp16
// stage overflows); transform t's converted input is multiplied by 2^e[t]
// before its one rounding to fp16 and its output by 2^-e[t], both exact in
// fp32. exps is ignored when the input is NATIVE (nothing is scaled). in and
// out may be the same buffer only when their elements have the same size
// (F32 in and out, or NATIVE); otherwise they must not overlap. Errors as
// fftd__tc_execute.
int fftd__tc_execute_io(const fftd__tc_plan *plan, const void *in, void *out,
    void *workspace, const int *exps, void *stream);
// fftd__tc_plan_destroy frees the plan and its device tables (NULL is fine).
// The caller makes sure no transform of this plan is still running.
void fftd__tc_plan_destroy(fftd__tc_plan *plan);

// fftd__tc_plan_describe writes a one-line summary of the passes (for logs and
// benchmarks) into buf.
void fftd__tc_plan_describe(const fftd__tc_plan *plan, char *buf, size_t len);

// ---------------------------------------------------------------------------
// Internal: planning (kernels/tc_host.c, pure C, no CUDA).

// One pass is a batch of q_total FFTs of length len: 256 .. 32768 (split16:
// 16384) on the tensor cores (kernels/tc16_pass.cuh, pass_kernel), or 2 ..
// FFTD__TC_MAX_RADIX
// on the CUDA cores (radix_kernel: a plain radix-2/4/8 butterfly per FFT, no
// shared memory). FFT q reads its element n at
// in + (q / s_in) * len * s_in + n * s_in + q % s_in (s_in = 1: contiguous
// FFTs; s_in > 1: columns), writes element k at the same place with s_out,
// and, when tw_n > 0, multiplies element k by W_{tw_n}^{(q % s_in) * k} (the
// four-step twiddle) before writing. Column passes on the tensor cores move
// C = fftd__tc_block_ffts(...) neighbouring columns at once, so a stride
// s > 1 must be a multiple of C (at most 32; the planner keeps s >= 8 and
// checks this, tests/unit/test_tc_host.c too).
//
// A pass of op FFTD__TC_OP_PLANE is the 2D FFT of each of q_total
// contiguous planes of len2 rows of len points (both FFTD__TC_AXIS_MIN ..
// FFTD__TC_AXIS_MAX, len2 * len <= FFTD__TC_PLANE_MAX), in one pass over
// memory (kernels/tc_plane.cuh): the last two axes of a 3D transform whose
// planes fit a block's shared memory, so that it needs two passes, not
// three. Its strides are 1 and it has no twiddle.
//
// A pass whose op is FFTD__TC_OP_R2C_POST or _C2R_PRE is the real-transform
// step (kernels/tc_real.cuh) over q_total rows of len = n/2 complex points (n
// the real last dim): FFTD__TC_OP_R2C_POST reads the complex transform Z (rows
// of len points) and writes the R2C output (rows of len + 1);
// FFTD__TC_OP_C2R_PRE reads the C2R input (rows of len + 1) and writes the Z
// whose inverse complex transform is the real output.
typedef struct fftd__tc_pass {
	int     op; // FFTD__TC_OP_*
	int     len;
	int     len2; // FFTD__TC_OP_PLANE: rows of a plane (else 0)
	int64_t q_total;
	int64_t s_in, s_out;
	int64_t tw_n;
	int     src; // FFTD__TC_BUF_*
	int     dst;
} fftd__tc_pass;

// FFTD__TC_BUF_TMP: plans with a converted input or output
// (fftd__tc_layout_route_io) keep what would pass through out in fp16 at
// the workspace's end instead, since out's elements have another size.
enum {
	FFTD__TC_BUF_IN  = 0,
	FFTD__TC_BUF_OUT = 1,
	FFTD__TC_BUF_WS  = 2,
	FFTD__TC_BUF_TMP = 3
};
enum {
	FFTD__TC_OP_FFT      = 0,
	FFTD__TC_OP_R2C_POST = 1,
	FFTD__TC_OP_C2R_PRE  = 2,
	FFTD__TC_OP_PLANE    = 3
};

#define FFTD__TC_MAX_PASSES 4          // three complex passes and a real step
#define FFTD__TC_MIN_LEN 256           // tensor-core passes
#define FFTD__TC_MAX_LEN 32768         // one pass, contiguous (tc16)
#define FFTD__TC_MAX_LEN_SPLIT16 16384 // split16's: 8-byte points
#define FFTD__TC_MAX_STRIDED_LEN 4096  // one pass over columns
#define FFTD__TC_MAX_RADIX 8           // CUDA-core passes: len 2, 4, 8
#define FFTD__TC_AXIS_MIN 32           // CUDA-core shared-memory axis passes:
#define FFTD__TC_AXIS_MAX 128          // len 32 .. 128 (kernels/tc_axis.cuh)
#define FFTD__TC_PLANE_MAX 4096        // points of one FFTD__TC_OP_PLANE plane
#define FFTD__TC_MIN_3D 32             // 3D: each side 32 .. 512
#define FFTD__TC_MAX_3D 512
#define FFTD__TC_MIN_REAL_1D 512  // R2C/C2R 1D: n 512 .. 2^27
#define FFTD__TC_MIN_REAL_LAST 64 // R2C/C2R 2D, 3D: last dim >= 64
// R2C/C2R 1D with n/2 <= this, out of place: the real step runs inside the
// complex pass (one kernel, one pass over device memory)
#define FFTD__TC_MAX_FUSED_REAL 8192
#define FFTD__TC_MAX_1D (1 << 27)
// Four-step twiddles of a column pass (kernels/tc16_pass.cuh): each
// iteration of a block makes, for each of its columns (ql = q % s_in or
// q % s_out, fftd__tc_tw_kind), a table of FFTD__TC_TW_COL(len) entries
// W_N^m (N = tw_n), m = fftd__tc_tw_col_exp(ql, j, log2 N) for entry j:
// j < 16: ql j; 16 <= j < 32: 16 ql (j - 16); 32 <= j (len > 256):
// 256 ql (j - 32), mod N. Output k < len of the column is multiplied by
// entries k % 16, 16 + (k / 16) % 16 and, when len > 256, 32 + k / 256,
// whose exponents add up to ql k mod N. (A column's points, which one warp
// handles together, then read distinct entries of one small table: no
// shared-memory bank conflicts.)
#define FFTD__TC_TW_COL(len) (32 + ((len) > 256 ? (len) / 256 : 0))

FFTD__TC_HD int64_t
fftd__tc_tw_col_exp(int64_t ql, int j, int n_log2)
{
	const int64_t d  = j < 16 ? j : j < 32 ? j - 16 : j - 32;
	const int     sh = j < 16 ? 0 : j < 32 ? 4 : 8;
	return ((ql * d) << sh) & (((int64_t) 1 << n_log2) - 1);
}

// fftd__tc_tw_kind says which compiled twiddle a pass uses: 0 none; 1 the
// two-pass kind (s_in = s_out and tw_n <= 2^24: ql = q % s_out); 2 the
// general kind (s_in != s_out or tw_n > 2^24: ql = q % s_in; the first two
// passes of three-pass transforms, compiled for column lengths 256 and 512
// only).
FFTD__TC_HD int
fftd__tc_tw_kind(const fftd__tc_pass *p)
{
	if (p->tw_n <= 0)
		return 0;
	return p->s_in == p->s_out && p->tw_n <= ((int64_t) 1 << 24) ? 1 : 2;
}

// A layout: the passes of one plan. For R2C and C2R, points and the passes'
// lengths are those of the complex transform (the last dim halved), cdims its
// dims (the real-step kernels mirror the row index over cdims[0..rank-2]).
typedef struct fftd__tc_layout {
	int           npass;
	fftd__tc_pass pass[FFTD__TC_MAX_PASSES];
	int64_t       points;     // complex points per transform
	int64_t       ws_points;  // workspace, in points
	int64_t       tmp_points; // FFTD__TC_BUF_TMP after it, in points
	int           rank;
	int64_t       cdims[3];
} fftd__tc_layout;

// fftd__tc_plan_layout_algo fills *lay with the passes that algo's plans
// run for a shape of kind type, or returns FFTD__TC_EUNSUPPORTED /
// FFTD__TC_EINVAL. C2C: the passes of the shape; R2C: the complex passes of
// the half-length transform (in -> ... -> workspace, with out as their
// scratch) and the post-process (workspace -> out); C2R: the pre-process (in
// -> workspace) and the complex passes (workspace -> ... -> out, with the
// workspace as their scratch); dims are the real dims. tc16 and split16 lay
// out the same passes, but that split16 takes 1D transforms of 2^15 complex
// points in two passes (4096 x radix 8), not one, and of 2^24 in three, not
// two (tc_host.c, max_single, two_pass_max).
int fftd__tc_plan_layout_algo(fftd__tc_algo algo, fftd__tc_type type, int rank,
    const int64_t *dims, int64_t batch, fftd__tc_layout *lay);

// fftd__tc_layout_route_io reroutes a layout for a plan whose input or
// output elements differ in size from the passes' storage (tc.h
// fftd__tc_io): every pass but the last that writes out, and every pass
// but the first that reads it, uses FFTD__TC_BUF_TMP instead, so that out
// is written once, by the last pass, and in read once, by the first (in
// may then be out). Sets lay->tmp_points (one copy of the batch, or 0 when
// nothing was rerouted).
void fftd__tc_layout_route_io(fftd__tc_layout *lay, int64_t batch);
// fftd__tc_layout_factors fills *lay with the passes of a 1D transform of
// N = f[0] * ... * f[npass - 1] points (npass 1 .. 3, the schemes of
// fftd__tc_plan_layout_algo, which calls it with the factors it chose), without
// checking any limit: for tests of the index algebra on small sizes.
void fftd__tc_layout_factors(
    int npass, const int64_t *f, int64_t batch, fftd__tc_layout *lay);

// fftd__tc_twiddles writes W_n^j = exp(-2 pi i j / n), j in [0, count), as
// float pairs (re, im) rounded from long double, exact at the quarter points.
void fftd__tc_twiddles(int64_t n, int64_t count, int64_t step, float *out);

// fftd__tc_f16_from_f32 / fftd__tc_f32_from_f16 convert IEEE binary16 with
// round-to-nearest-even (the device's cvt.rn.f16.f32), for host tests and
// reference arithmetic.
uint16_t fftd__tc_f16_from_f32(float x);
float    fftd__tc_f32_from_f16(uint16_t h);

// fftd__tc_split splits x * 2^e into fp16 hi + lo: hi = rn(x 2^e),
// lo = rn(x 2^e - hi). The device kernels do exactly this on every fragment.
void fftd__tc_split(float x, int e, uint16_t *hi, uint16_t *lo);

// ---------------------------------------------------------------------------
// Shared with the device code.

// fftd__tc_scale_exp returns the power of two e with which split16 scales a
// fragment whose largest magnitude has the float bit pattern maxbits (>= 0):
// max * 2^e lies in [2^13, 2^14), so hi parts stay below fp16's 65504 even
// after a 16-term sum, and lo parts (about 2^-11 of hi) stay normal.
// Returns e, clamped so that 2^e and 2^-e are normal floats.
FFTD__TC_HD int
fftd__tc_scale_exp(uint32_t maxbits)
{
	int ex = (int) ((maxbits >> 23) & 0xffu); // biased exponent of max
	if (ex < 14)
		ex = 14;
	if (ex > 240)
		ex = 240;
	return 140
	    - ex; // max in [2^(ex-127), 2^(ex-126)) -> max*2^e in [2^13, 2^14)
}

// Fragment element e (0..7) of a thread in the m16n8k16 A layout (PTX ISA,
// "Matrix Fragments for mma.m16n8k16 with floating point type"): register
// e/2, half e%2; row = groupID + 8 * ((e >> 1) & 1), col = 2 * threadID +
// (e & 1) + 8 * (e >> 2). The accumulator of the two n8 tiles j = 0, 1,
// element c (row groupID + 8 * (c >> 1), col 8j + 2 * threadID + (c & 1)),
// is the same element e = 4j + c: that is why a product's result can be packed
// straight into the next product's A operand.
FFTD__TC_HD int
fftd__tc_frag_row(int lane, int e)
{
	return (lane >> 2) + 8 * ((e >> 1) & 1);
}
FFTD__TC_HD int
fftd__tc_frag_col(int lane, int e)
{
	return 2 * (lane & 3) + (e & 1) + 8 * (e >> 2);
}

// The level-1 DIT twiddle W_L^(a kb) of the pass kernel (kernels/
// tc16_pass.cuh) for tile a (a < R = L / 256) and fragment element e of a
// lane, kb = fftd__tc_frag_row + 16 fftd__tc_frag_col = b(lane) + o(e) with
// b = lane / 4 + 32 (lane % 4) and o = 8 (e bit 1) + 16 (e bit 0) + 128 (e bit
// 2), is W_L^(a b) W_L^(a o): the kernel keeps an R x 32 table of lane
// factors (a warp reads 32 consecutive entries: no bank conflict) and an
// R x 8 table of element factors (a warp reads one entry: a broadcast);
// these give their exponents, both below L for R <= 128. One quarter table
// indexed by a kb instead made every lookup an up-to-16-way bank conflict
// (Nsight Compute, H200, 1D 4096: 13.5 M conflicted wavefronts, shared
// memory 86% busy).
FFTD__TC_HD uint32_t
fftd__tc_l1_twiddle_lane(uint32_t a, uint32_t lane)
{
	return a * ((lane >> 2) + 32 * (lane & 3));
}
FFTD__TC_HD uint32_t
fftd__tc_l1_twiddle_elem(uint32_t a, uint32_t e)
{
	return a * (8 * ((e >> 1) & 1) + 16 * (e & 1) + 128 * (e >> 2));
}

// Shared-memory swizzles. Points sit in shared memory at a linear index p
// (FFT f of a block at f * len); the word stored at physical index
// p ^ S(p >> w) where S is linear over GF(2), so S(a ^ b) = S(a) ^ S(b): the
// kernels compute the swizzle of a lane's base index once and fold the
// constant offsets. The masks were searched (tests/unit/test_tc_swizzle.c
// checks them) so that every warp-wide access pattern of the kernels hits 32
// distinct banks: 4-byte words (tc16, whole warp) and 8-byte words (split16,
// each half-warp over 16 bank pairs).
FFTD__TC_HD uint32_t
fftd__tc_swz4(uint32_t p)
{
	uint32_t s = 0;
	s ^= (0u - ((p >> 5) & 1u)) & 23u;
	s ^= (0u - ((p >> 6) & 1u)) & 11u;
	s ^= (0u - ((p >> 7) & 1u)) & 21u;
	s ^= (0u - ((p >> 8) & 1u)) & 27u;
	s ^= (0u - ((p >> 9) & 1u)) & 9u;
	s ^= (0u - ((p >> 10) & 1u)) & 29u;
	s ^= (0u - ((p >> 11) & 1u)) & 12u;
	s ^= (0u - ((p >> 12) & 1u)) & 22u;
	s ^= (0u - ((p >> 13) & 1u)) & 8u;
	s ^= (0u - ((p >> 14) & 1u)) & 4u;
	s ^= (0u - ((p >> 15) & 1u)) & 15u;
	return p ^ s;
}
FFTD__TC_HD uint32_t
fftd__tc_swz8(uint32_t p)
{
	uint32_t s = 0;
	s ^= (0u - ((p >> 4) & 1u)) & 1u;
	s ^= (0u - ((p >> 5) & 1u)) & 8u;
	s ^= (0u - ((p >> 6) & 1u)) & 7u;
	s ^= (0u - ((p >> 7) & 1u)) & 10u;
	s ^= (0u - ((p >> 8) & 1u)) & 13u;
	s ^= (0u - ((p >> 9) & 1u)) & 7u;
	s ^= (0u - ((p >> 10) & 1u)) & 12u;
	s ^= (0u - ((p >> 11) & 1u)) & 9u;
	s ^= (0u - ((p >> 12) & 1u)) & 15u;
	s ^= (0u - ((p >> 13) & 1u)) & 5u;
	s ^= (0u - ((p >> 14) & 1u)) & 10u;
	s ^= (0u - ((p >> 15) & 1u)) & 4u;
	return p ^ s;
}

// The per-pass block shape: how many FFTs (columns) a block holds at once.
// Contiguous passes hold 4096 points (one FFT when len >= 4096). Column passes
// hold enough columns for 32-byte runs in device memory (8 tc16 points, 4
// split16 points), halved while a block's buffer would exceed 64 KiB; "wide"
// column passes take runs of up to 128 bytes while the buffer holds at most
// 8192 points (more columns for short columns; 32 KiB tc16, 64 KiB split16),
// and 4096-point columns 32-byte runs (8 tc16 or 4 split16 columns) in one
// 128 KiB buffer, in place (no scratch; split16's narrow 16-byte runs through
// a scratch buffer took 2.14 ms for 1D 2^23 on the H200, these 1.25).
// split16 at 8192 points rather than 32 KiB (16 columns of 512, 8 of 1024:
// 128- and 64-byte runs, one block an SM) took 2D 1024^2 from 1.034 to 0.826
// ms on the H200 and 1D 2^20 from 1.139 to 0.934; tc16 at 64 KiB (32
// columns of 512, 16 of 1024) was up to 7% slower (1D 2^17), so tc16 stays
// at 32 KiB.
FFTD__TC_HD_CONSTEXPR int
fftd__tc_block_ffts(int len, int strided, int elem_bytes, int wide)
{
	if (!strided)
		return len >= 4096 ? 1 : 4096 / len;
	int c = 32 / elem_bytes;
	while (c > 2 && (long) c * len * elem_bytes > 65536L)
		c /= 2;
	if (!wide)
		return c;
	if (len == 4096)
		return 32 / elem_bytes; // in place in one 128 KiB buffer
	int w = 128 / elem_bytes;
	while (w > 1 && (long) w * len > 8192L)
		w /= 2;
	return w > c ? w : c;
}

// fftd__tc_block_scratch: whether a pass block of ffts FFTs of len points
// of elem_bytes each has room for a scratch buffer beside its input buffer
// (both within 160 KiB), which level 1 writes into (kernels/tc16_smem.cuh,
// Smem::SCR). Passes without one run in place: the wide 4096-point columns
// and tc16's 32768-point contiguous pass.
FFTD__TC_HD_CONSTEXPR int
fftd__tc_block_scratch(int len, int ffts, int elem_bytes)
{
	return 2L * ffts * len * elem_bytes <= 160L * 1024;
}

// fftd__tc_block_warps: the warps of a pass kernel's block
// (kernels/tc16_info.cuh), ffts = fftd__tc_block_ffts(...). In-place column
// passes: tc16 (4-byte points) on 32 warps, 64 registers a thread (with 16,
// an SM's one block hid too little latency: on the H200, 1D 2^24's second
// pass took 318 us against 299 us); split16 on 16 with 128 registers (on
// 32, capped at 64, it spills 100 bytes). tc16 blocks of 16384 points
// (the 16384-point contiguous pass, 8 columns of 2048) on 32 warps too: one
// block an SM either way, and with 16 the H200 took 2% longer for 1D 16384,
// 2^21 and 2^22 (no spills at 64 registers but 12-44 bytes in the 2048-point
// column passes with a fused conversion). Otherwise two of the block's
// ffts * len / 256 level-1 tiles a warp, 4 .. 16 warps (fewer for fewer
// tiles), 32 from 128 tiles. The swizzle test's models take their thread
// counts from here (tests/unit/test_tc_swizzle.c).
FFTD__TC_HD_CONSTEXPR int
fftd__tc_block_warps(int len, int strided, int elem_bytes, int ffts)
{
	int tiles = ffts * (len / 256);
	if (strided && !fftd__tc_block_scratch(len, ffts, elem_bytes))
		return elem_bytes == 4 ? 32 : 16;
	if (elem_bytes == 4 && ffts * len >= 16384)
		return 32;
	return tiles >= 128
	    ? 32
	    : (tiles / 2 < 4 ? (tiles < 4 ? tiles : 4)
	                     : (tiles / 2 > 16 ? 16 : tiles / 2));
}

#ifdef __cplusplus
}
#endif

#endif // FFTD_KERNELS_TC_H

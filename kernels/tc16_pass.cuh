// SPDX-License-Identifier: MIT
//
// tc16_pass.cuh — PRIVATE to kernels/: included by tc16.cu and split16.cu
// only. The one kernel family behind tc16 and split16: a pass of batched
// power-of-two FFTs of length L = 256 * R (R = 1 .. 64; tc16 to 128), a few
// FFTs per thread block, all stages in shared memory; and (tc16_radix.cuh) a
// plain radix-2/4/8 pass on the CUDA cores for the factor below 256 of
// split16's 2^15 = 4096 * 8.
//
// Algorithm (tcFFT, Li et al., IEEE CLUSTER 2021, sec. III-B/C: radix-16
// "merging" as a 16x16 complex matrix product on the tensor cores, twiddles
// multiplied element-wise inside the fragments, several mergings per kernel):
//
//   n = a + R * b (a < R, b < 256), k = kb + 256 * ka:
//   level 1, per a: a 256-point FFT of x[a + R b] held by one warp in
//     registers as one 16x16 tile M[b2][b1] = x[a + R (16 b1 + b2)]:
//       row DFT (M * F16 on the tensor cores) -> twiddle W_256^(b2 k1)
//       -> transpose in registers (movmatrix) -> row DFT again,
//     the 256 results go to kb + 256 a (in place, IPC: to a + R kb).
//   level 2, per kb: the DIT twiddle W_L^(a kb), then the R-point DFT over a
//     (stride 256): R <= 8 on the CUDA cores in fp32; R = 16 r as a radix-r
//     step on the CUDA cores followed by one more radix-16 tensor-core
//     product. Results land in natural order.
//
// The tensor-core product is mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// with the register layouts the PTX ISA documents (never WMMA's unspecified
// fragment::x[] order, which is what breaks the paper's own code on sm_90):
// A 16x16 complex tile is two real A operands (re, im), F16 two real B
// operands (two n8 halves each), Yr = Xr Fr - Xi Fi and Yi = Xr Fi + Xi Fr as
// four real products per n8 half. The accumulator layout of the two halves
// equals the A layout (tc.h, fftd__tc_frag_row/col), so results feed the next
// product after one cvt to fp16, and movmatrix.trans transposes a tile.
//
// split16 (Markidis et al. 2018, Ootomo & Yokota 2022): an fp32 operand x of a
// tile is scaled by a power of two 2^e chosen from the tile's largest
// magnitude (one scale per 16x16 fragment, i.e. per 16 length-16 vectors) and
// split into hi = fp16(x 2^e), lo = fp16(x 2^e - hi); F16 likewise. A product
// is hi*Fhi + hi*Flo + lo*Fhi (lo*Flo, 2^-22 relative, is dropped), summed in
// fp32 and unscaled; so every radix-16 stage is as accurate as fp32 and the
// error does not grow with the transform size. Data between stages, the
// twiddles and the radix-2/4/8 steps stay fp32.
//
// Data: device memory holds tc16 points as __half2 (re low, im high) and
// split16 points as float2. Shared memory holds the block's FFTs at linear
// index f * L + n, swizzled per word (tc.h, fftd__tc_swz4/8) so that every
// access of a warp is conflict-free (tests/unit/test_tc_swizzle.c). Blocks
// are persistent and loop over the batch. Global loads go straight into
// shared memory with cp.async (a fused conversion's f32 or int8 input through
// registers, tc_io.cuh), the next block's data streaming in while level 2 of
// this one runs (level 1 writes a scratch buffer; 256- and 512-point column
// passes ask L2 for the block after that as well, and column passes whose
// runs are shorter than a 128-byte line have L2 fetch whole lines);
// contiguous passes store from the registers of their last stage (32-byte
// pieces or whole lines), column passes through shared memory in runs of C
// points (up to 128 bytes); the in-place column passes refill each position
// with the next block's input as soon as its output is stored. tc16's
// 32768-point pass fills a block's 128 KiB alone and runs in place too
// (IPC below): its next block loads after the last barrier.
//
// Measured on the H200 (bench/kernels, 2^26 points): the contiguous kernels
// are bound by L1/shared-memory throughput and instruction issue, not by the
// tensor cores; see the report of issue 4 for the numbers.
//
// This file holds the pass kernel; its register cap (min_blocks) is in
// tc16_smem.cuh, its block shape and make_kernel_info, which tc16.cu and
// split16.cu instantiate it through, in tc16_info.cuh. Its pieces live beside
// it: the PTX wrappers in tc16_ptx.cuh, complex arithmetic and the small
// CUDA-core DFTs in tc16_dft.cuh, the tensor-core tile DFT in tc16_frag.cuh,
// shared-memory layout and index maps in tc16_smem.cuh, the shared types and
// precision traits in tc16_types.cuh.

#ifndef FFTD_KERNELS_TC16_PASS_CUH
#define FFTD_KERNELS_TC16_PASS_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tc.h"
#include "tc16_dft.cuh"
#include "tc16_frag.cuh"
#include "tc16_ptx.cuh"
#include "tc16_smem.cuh"
#include "tc16_types.cuh"
#include "tc_io.cuh"
#include "tc_real.cuh"

namespace fftd_tc
{

// ---------------------------------------------------------------------------
// The pass kernel.
//
// P: Tc16 or Split16. L = 256 R. C FFTs per block iteration, W warps.
// STRIDED: column passes (runtime strides s_in/s_out, either may be 1);
// otherwise contiguous FFTs only. INV: inverse. TW (column passes): multiply
// output k of FFT q by the four-step twiddle W_N^(ql k), N = 2^args.tw_log2
// (tc.h, fftd__tc_tw_kind): without TWG the two-pass kind, ql = q % s_out
// (s_in = s_out); with TWG the general kind, ql = q % s_in (the first and
// middle passes of three-pass transforms). SCR: level
// 1 writes into a scratch buffer (no register stash). CV: the first or last
// pass of a plan with fused conversion (tc_io.cuh): in and out are of the
// kinds args names. RSTEP: a 1D real transform's step fused in (contiguous
// passes, L <= FFTD__TC_MAX_FUSED_REAL; tc_real.cuh): FFTD__TC_OP_R2C_POST
// turns the results in shared memory into R2C output rows of L + 1
// (r2c_rows) instead of storing them, FFTD__TC_OP_C2R_PRE loads C2R input
// rows of L + 1 and builds the complex input in shared memory (c2r_rows).
template <class P, int L, int C, int W, bool STRIDED, bool INV, bool TW,
    bool SCR, bool TWG, bool CV, int RSTEP>
__global__ void
__launch_bounds__(W * 32,
    (min_blocks<P, L, C, W, TW, (!STRIDED && RSTEP != FFTD__TC_OP_R2C_POST),
        l1_tables(L, STRIDED)>())) pass_kernel(PassArgs args)
{
	using Word             = typename P::Word;
	constexpr bool SPLIT   = P::kSplit;
	constexpr int  B       = P::kBytes;
	constexpr int  R       = L / 256;
	constexpr int  NT      = W * 32;
	constexpr int  PTS     = C * L;     // points per block iteration
	constexpr int  TPW     = C * R / W; // level-1 tiles per warp
	constexpr int  COPIES  = PTS / NT;  // copy steps per thread
	constexpr int  RR      = R >= 16 ? R / 16 : 1;
	constexpr bool R2C_OUT = RSTEP == FFTD__TC_OP_R2C_POST;
	constexpr bool C2R_IN  = RSTEP == FFTD__TC_OP_C2R_PRE;
	// Contiguous passes: the last stage stores to device memory itself
	// (32-byte or 128-byte pieces), no copy-out through shared memory;
	// but with the R2C step fused in, results stay in shared memory (in
	// natural order, as in a column pass) for r2c_rows.
	constexpr bool DIRECT = !STRIDED && !R2C_OUT;
	// In-place column passes (IP: wide columns of 4096 points, whose 8
	// tc16 or 4 split16 columns fill 128 KiB, no room for a scratch
	// buffer): level 1 writes each result where the lane read its input
	// (element kb of tile a at a + 16 kb), level 2 likewise (k = kb + 256
	// ka at ka + 16 kb), copy_out reads point k at 16 (k % 256) + k / 256.
	constexpr bool IP = STRIDED && !SCR;
	// In-place contiguous passes (IPC: tc16's 32768 points, 128 KiB, one
	// FFT a block, no room for a scratch buffer): level 1 writes each
	// result where the lane read its input (element kb of tile a at a + R
	// kb), so no result waits in registers for a block barrier (a stash
	// of 4 tiles a thread spilled 160 bytes at 64 registers, this form
	// 24); level 2 reads that order (l2a_item_ip, l2b_in_ip) and stores
	// to device memory itself. The next input loads after the last
	// barrier (one block an SM). Slower on the H200 (1D 32768 0.324 ms):
	// each lane refilling the positions its level-2b tiles had read
	// (0.345), L2 asked for the next input an iteration ahead (0.348).
	constexpr bool IPC = !STRIDED && !SCR && R == 128;
	static_assert(!IPC || (C == 1 && RSTEP == FFTD__TC_OP_FFT && !SPLIT),
	    "in-place contiguous passes: tc16, one FFT a block, no real step");
	// Column passes of 256 and 512 points in runs of 64 or 128 bytes (the
	// wide blocks) ask L2 for the input of the iteration after the one
	// cp.async loads (io_prefetch_in: a 128-byte line a run). On two
	// H200s, tc16 2D 256^2 and 3D 256^3 took 6-7% less time, 2D 512^2
	// and 32x256x512 2-4%, 3D 512^3 1-3%, split16 2D 256^2 2-3% (but its
	// 3D 512^3 and 1D 2^27 1-2% more); with it in the 1024- and
	// 2048-point column passes too (32-byte runs for tc16) 1D 2^20 ..
	// 2^23 and 2D 2048^2 took 3-6% more, tc16 and split16 alike.
	constexpr bool L2_AHEAD = STRIDED && L <= 512 && C * B >= 64 && !CV
	    && RSTEP == FFTD__TC_OP_FFT;
	// Column passes whose runs are shorter than a 128-byte line (1024-
	// to 4096-point columns, tc16's 512-point ones) load their strided
	// input with the hint that L2 fetch whole lines (cp_async_n's LINE).
	// On the H200, tc16 2D 1024^2 0.445 -> 0.434 ms, 1D 2^24 0.651 ->
	// 0.636; its column pass's L2 hit rate 67% -> 76% (ncu). On every
	// load the hint changed nothing; 256-byte fetches were slower.
	constexpr bool L2_LINE = STRIDED && C * B < 128;
	// The next block's input streams into buf as soon as level 1 has read
	// it, unless a later stage still writes or reads buf. R2C_BUF: the
	// fused R2C step of L > 4096 has level 2b write a third buffer (Smem)
	// instead of buf (H200, R2C 1D 16384: 0.189 -> 0.177 ms).
	constexpr bool R2C_BUF = R2C_OUT && R > 16;
	static_assert(!R2C_BUF || SCR, "the output buffer follows scratch");
	constexpr bool EARLY
	    = (SCR && (R < 32 || DIRECT || R2C_BUF)) || (DIRECT && R == 1);
	constexpr uint32_t SCR_OFF
	    = (uint32_t) PTS * B; // byte offset of the scratch buffer
	static_assert(L >= 256 && L <= 32768 && (L & (L - 1)) == 0, "L");
	static_assert(TPW >= 1 && TPW * W == C * R, "tiles per warp");
	static_assert(COPIES * NT == PTS, "copy steps");
	static_assert(DIRECT || SCR || R == 16,
	    "column passes go through the scratch buffer or are in place");
	static_assert(RSTEP == FFTD__TC_OP_FFT
	        || (!STRIDED && !TW && !CV && SCR
	            && L <= FFTD__TC_MAX_FUSED_REAL),
	    "real steps fuse into contiguous passes of 1D rows only");

	// Shared memory: the input buffer (buf); when SCR a scratch buffer that
	// level 1 writes into (so its results need not wait in registers for a
	// block barrier, and the next block's input can stream into buf while
	// level 2 runs); with R2C_BUF an output buffer; then the twiddles:
	// W_256^(row col) of each lane's 8 tile elements, W_R^m for level 2a
	// (R > 16), when TW the four-step table of each column (remade each
	// iteration), and when L1T the two factor tables of W_L^(a kb) (tc.h,
	// fftd__tc_l1_twiddle_lane/elem; contiguous passes with R <= 8 apply
	// them in level 2 instead, MOVE_TW below). Buffer accesses use byte
	// offsets: swizzle(x) * B, linear too, so each is one LOP3 on a base.
	constexpr bool L1T = l1_tables(L, STRIDED);
	using SM           = Smem<P, L, C, TW, DIRECT, L1T>;
	static_assert((SM::NBUFS == 3) == R2C_BUF, "R2C_BUF's output buffer");
	extern __shared__ __align__(16) unsigned char smem_raw[];
	float2 *const t256 = reinterpret_cast<float2 *>(
	    smem_raw + (size_t) SM::NBUFS * PTS * B);
	float2 *const tr   = t256 + 8 * 32;         // W_R^m, m < R (R > 16)
	float2 *const twc  = tr + (R > 16 ? R : 0); // C x FFTD__TC_TW_COL(L)
	float2 *const t1l  = twc + (TW ? C * FFTD__TC_TW_COL(L) : 0); // R x 32
	float2 *const t1e  = t1l + (L1T ? R * 32 : 0);                // R x 8
	auto          bref = [&](uint32_t off) -> Word          &{
                return *reinterpret_cast<Word *>(smem_raw + off);
	};
	auto sref = [&](uint32_t off) -> Word & {
		return *reinterpret_cast<Word *>(smem_raw + SCR_OFF + off);
	};
	auto oref = [&](uint32_t off) -> Word & { // R2C_BUF's output buffer
		return *reinterpret_cast<Word *>(smem_raw + 2 * SCR_OFF + off);
	};
	auto SB = [](uint32_t x) -> uint32_t { return P::swz(x) * B; };

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t = lane & 3;

	const long long nit    = (args.q_total + C - 1) / C;
	const bool      s_in_1 = !STRIDED || args.s_in == 1;

	// Constants: the F16 fragments (registers), the twiddle tables (shared
	// memory; the first barrier of the loop publishes them).
	DftB<SPLIT> F;
	load_dft<INV, L>(args.tab, lane, F);
	if (warp == 0)
		for (int e = 0; e < 8; e++)
			t256[e * 32 + lane] = twiddle<INV>(args.tab,
			    fftd__tc_frag_row(lane, e)
			        * fftd__tc_frag_col(lane, e) * R);
	// W_R^m at m; in IPC, where a warp's items have 16 different alpha,
	// W_R^(alpha b) at 16 b + alpha (alpha < 16, b < RR: R entries too),
	// so that a warp reads 16 consecutive entries, not 16 spread by b
	if (R > 16)
		for (int j = tid; j < R; j += NT)
			tr[j] = twiddle<INV>(
			    args.tab, 256 * (IPC ? (j % 16) * (j / 16) : j));
	if (L1T)
		for (int j = tid; j < R * 40; j += NT)
			(j < R * 32 ? t1l[j] : t1e[j - R * 32]) = twiddle<INV>(
			    args.tab,
			    (int) (j < R * 32
			            ? fftd__tc_l1_twiddle_lane(j / 32, j % 32)
			            : fftd__tc_l1_twiddle_elem(
			                (j - R * 32) / 8, j % 8))
			        & (L - 1));

	// MOVE_TW: level 2 applies the level-1 DIT twiddles W_L^(a kb), where a
	// thread always sees the same kb (NKB of them when a block has fewer
	// than 256 threads): R - 1 constants per kb, in registers (column
	// passes have no registers to spare for them).
	constexpr bool MOVE_TW = !STRIDED && R > 1 && R <= 8;
	static_assert(L1T == (R > 1 && !MOVE_TW), "level-1 twiddle tables");
	constexpr int NKB = NT >= 256 ? 1 : 256 / NT;
	constexpr int RT  = MOVE_TW ? R - 1 : 1;
	float2        tw1[NKB][RT];
	for (int jk = 0; jk < NKB; jk++)
		for (int x = 0; x < RT; x++)
			tw1[jk][x] = MOVE_TW ? twiddle<INV>(args.tab,
			                 (x + 1) * ((tid + jk * NT) % 256))
			                     : make_float2(1.f, 0.f);

	// Per-lane parts of the swizzled byte offsets (see l1_in and friends).
	uint32_t sw_c1_0 = SB((uint32_t) tid);
	uint32_t sw_cs_0 = SB((uint32_t) ((tid % C) * L + tid / C));
	uint32_t sw_g1_0
	    = SB(l1_in<L, R>(warp)) ^ SB((uint32_t) R * (g + 32 * t));
	uint32_t sw_w1_0 = SB(l1_out<L, R>(warp)) ^ SB((uint32_t) (g + 32 * t));
	uint32_t sw_p2_0 = SB(l2_pair<L>(tid));
	uint32_t sw_g2_0 = IP
	    ? SB(l2_unit_ip<L>(warp)) ^ SB((uint32_t) (16 * g + 2 * t))
	    : SB(l2_unit<L>(warp)) ^ SB((uint32_t) (g + 512 * t));
	uint32_t sw_co_0 = IP
	    ? SB((uint32_t) ((tid % C) * L) + ip_pos<L>((uint32_t) (tid / C)))
	    : 0;
	uint32_t sw_a2_0 = SB(IPC ? l2a_item_ip<L, R>(tid) : l2a_item<L>(tid));
	uint32_t sw_bi_0 = IPC
	    ? SB(l2b_in_ip<L, R, RR>(warp)) ^ SB((uint32_t) (R * g + 2 * t))
	    : SB(l2b_in<L, RR>(warp)) ^ SB((uint32_t) (g + 512 * t));
	uint32_t sw_c1 = sw_c1_0, sw_cs = sw_cs_0;

	// Converted input (CV; tc_io.cuh, io_copy_in / io_prefetch_in) of
	// block iteration it. G loads in flight a thread: 4 f32 or 8 int8
	// elements, 2 in the in-place column passes (64 registers: 148 bytes
	// of spill with 4, 68 with 2). L2 is asked for an iteration's input an
	// iteration ahead, except in the in-place column passes: there it is
	// 256 KiB a block (f32), 33 MiB for the GPU's 132 blocks, and on the
	// H200 the fused 1D 2^24 f32 plan took 1.19 ms with it, 1.09 without.
	auto cv_copy_in = [&](long long it) {
		auto put = [&](int j, Word w) {
			bref(s_in_1 ? sw_c1 ^ SB((uint32_t) (j * NT))
			            : sw_cs ^ SB((uint32_t) (j * (NT / C))))
			    = w;
		};
		if (args.in_io == FFTD__TC_IO_F32)
			io_copy_in<P, float2, L, C, NT, COPIES,
			    IP || IPC ? 2 : 4>(args, it, tid, s_in_1, put);
		else
			io_copy_in<P, char2, L, C, NT, COPIES,
			    IP || IPC ? 2 : 8>(args, it, tid, s_in_1, put);
	};
	auto cv_prefetch = [&](long long it) {
		if (IP || IPC || !io_in_converted<CV>(args) || it >= nit)
			return;
		if (args.in_io == FFTD__TC_IO_F32)
			io_prefetch_in<float2, L, C, NT>(args, it, tid, s_in_1);
		else
			io_prefetch_in<char2, L, C, NT>(args, it, tid, s_in_1);
	};

	auto copy_in = [&](long long it) {
		if constexpr (C2R_IN) {
			c2r_rows<P, L, C, NT>(args, it, SB,
			    [&](uint32_t off, Word w) { bref(off) = w; });
			return;
		}
		if (io_in_converted<CV>(args)) {
			cv_copy_in(it);
			return;
		}
		const Word    *in = static_cast<const Word *>(args.in);
		const uint32_t sb
		    = (uint32_t) __cvta_generic_to_shared(smem_raw);
		if (s_in_1) {
			const long long base = it * C * (long long) L;
			const Word     *src  = in + base + tid;
			if ((it + 1) * C <= args.q_total) {
#pragma unroll
				for (int j = 0; j < COPIES; j++)
					cp_async_n<B>(sb
					        + (sw_c1
					            ^ SB((uint32_t) (j * NT))),
					    src + j * NT);
			} else {
				const long long limit
				    = args.q_total * (long long) L - base;
#pragma unroll
				for (int j = 0; j < COPIES; j++)
					if (tid + j * NT < limit)
						cp_async_n<B>(sb
						        + (sw_c1
						            ^ SB((uint32_t) (j
						                * NT))),
						    src + j * NT);
			}
		} else {
			const long long s   = args.s_in;
			const Word     *src = in
			    + col_first(it * C, L, s, args.s_in_log2)
			    + (tid % C) + (long long) (tid / C) * s;
			// the step is opaque so that the 64-bit offsets are not
			// all precomputed and held across the iteration loop
			const long long step
			    = (long long) opaque((uint32_t) (NT / C)) * s;
#pragma unroll
			for (int j = 0; j < COPIES; j++) {
				cp_async_n<B, L2_LINE>(sb
				        + (sw_cs
				            ^ SB((uint32_t) (j * (NT / C)))),
				    src);
				src += step;
			}
		}
	};

	// Output of point p of out (a pointer into out's native view): the
	// native store, or the converted one of tc_io.cuh, with the scale of
	// the iteration (sco, set at its start) when sco_one.
	Word *const out_base = static_cast<Word *>(args.out);
	Scale       sco;
	bool        sco_one = false;
	auto        put     = [&](Word *p, float re, float im) {
                if constexpr (CV) {
                        const long long i = p - out_base;
                        if (sco_one)
                                io_store_s<P>(args, i, sco, re, im);
                        else
                                io_store<P>(args, i, i, re, im);
                } else {
                        *p = P::store(re, im);
                }
	};
	auto putw = [&](Word *p, Word w) {
		if constexpr (CV) {
			const float2 v = P::load(w);
			put(p, v.x, v.y);
		} else {
			*p = w;
		}
	};

	// Column passes only: scratch (or, in place, buf) -> device memory,
	// C-point runs. (sw_co: a fresh opaque copy each call, or the compiler
	// keeps all COPIES offsets from it across the loop, and spills them.)
	auto copy_out = [&](long long it) {
		const uint32_t  sw_co = opaque(sw_co_0);
		Word           *out   = static_cast<Word *>(args.out);
		const long long s     = args.s_out;
		Word *dst = out + col_first(it * C, L, s, args.s_out_log2)
		    + (tid % C) + (long long) (tid / C) * s;
		const long long step
		    = (long long) opaque((uint32_t) (NT / C)) * s;
#pragma unroll
		for (int j = 0; j < COPIES; j++) {
			if constexpr (IP)
				putw(dst,
				    bref(sw_co
				        ^ SB(ip_pos<L>(
				            (uint32_t) (j * (NT / C))))));
			else
				putw(dst,
				    sref(
				        sw_cs ^ SB((uint32_t) (j * (NT / C)))));
			dst += step;
		}
	};

	// In-place passes with strided input: copy_out and the next copy_in in
	// one loop. Step j of thread tid reads position f L + n (f = tid % C,
	// n = tid / C + (NT / C) j: where copy_in writes), which holds the
	// point k = n / 16 + 256 (n % 16) (ip_pos(k) = n), stores it, then
	// starts the copy of input row n into it. The store needs the read's
	// value, so the read is done before the copy is issued (in order);
	// the asm's memory clobber keeps the compiler from reordering them.
	auto copy_out_in = [&](long long it, long long nx) {
		Word           *out = static_cast<Word *>(args.out);
		const long long s   = args.s_out;
		const int       n0  = tid / C;
		Word *dst = out + col_first(it * C, L, s, args.s_out_log2)
		    + (tid % C) + (long long) ((n0 >> 4) + 256 * (n0 & 15)) * s;
		const long long dstep
		    = (long long) opaque((uint32_t) (NT / C / 16)) * s;
		const bool      more = nx < nit;
		const long long si   = args.s_in;
		const Word     *src  = static_cast<const Word *>(args.in)
		    + col_first(nx * C, L, si, args.s_in_log2) + (tid % C)
		    + (long long) n0 * si;
		const long long sstep
		    = (long long) opaque((uint32_t) (NT / C)) * si;
		const uint32_t sb
		    = (uint32_t) __cvta_generic_to_shared(smem_raw);
		static_assert(
		    !IP || (NT / C) % 16 == 0, "k steps by NT / C / 16");
#pragma unroll
		for (int j = 0; j < COPIES; j++) {
			const uint32_t off
			    = sw_cs ^ SB((uint32_t) (j * (NT / C)));
			*dst = bref(off);
			if (more)
				cp_async_n<B, L2_LINE>(sb + off, src);
			dst += dstep;
			src += sstep;
		}
		cp_async_commit();
	};

	// Four-step twiddle W_N^(ql k) of column f of this iteration: each
	// column's table (tc.h, FFTD__TC_TW_COL, fftd__tc_tw_col_exp) is made
	// by tw_tables before the iteration's first barrier; the barrier
	// before copy_out ends the previous iteration's reads. A warp's
	// points share f and differ in k's low digits, so they read distinct
	// entries of one small table: no bank conflicts. (One set of tables
	// for every column, indexed by the digits of m = ql k, gave up to
	// 16-way conflicts: lanes' m step by ql.)
	static_assert(!TW || STRIDED, "four-step twiddles in column passes");
	constexpr int TWC       = FFTD__TC_TW_COL(L);
	auto          tw_tables = [&](long long it) {
                const long long smask = (TWG ? args.s_in : args.s_out) - 1;
                for (int j = tid; j < C * TWC; j += NT) {
                        const long long ql = (it * C + j / TWC) & smask;
                        twc[j]             = twiddle_pow2<INV, SPLIT>(
                            fftd__tc_tw_col_exp(ql, j % TWC, args.tw_log2),
                            args.tw_log2);
                }
	};
	// The twiddles of one 16x16 output tile of column f, element e of a
	// lane at k = kb0 + frag_row(e) + CS frag_col(e) (tc.h; CS = 16:
	// level 1 of R = 1, kb0 = 0; CS = 256: level 2 of R = 16, kb0 a
	// multiple of 16): W_N^(ql k) = row[frag_row / 8] col[e], read into
	// registers before the tile's stores (which the compiler cannot tell
	// from these loads), 6 or 7 loads a lane instead of 16 or 24.
	struct TileTw {
		float2          row[2], col[4];
		FFTD_DEV float2 at(int e) const
		{
			return cmul(
			    row[(e >> 1) & 1], col[(e & 1) + 2 * (e >> 2)]);
		}
	};
	auto tile_tw = [&](int f, int kb0, int cs) -> TileTw {
		const float2 *tb = twc + opaque((uint32_t) (f * TWC));
		const float2 *cb = tb + (cs == 16 ? 16 : 32);
		TileTw        w;
		const float2  w1
		    = cs == 16 ? make_float2(1.f, 0.f) : tb[16 + (kb0 >> 4)];
#pragma unroll
		for (int h = 0; h < 2; h++)
			w.row[h] = cs == 16 ? tb[(lane >> 2) + 8 * h]
			                    : cmul(tb[(lane >> 2) + 8 * h], w1);
#pragma unroll
		for (int c = 0; c < 4; c++)
			w.col[c] = cb[2 * (lane & 3) + (c & 1) + 8 * (c >> 1)];
		return w;
	};

	// copy_in(n), and (converted input) the L2 request for the iteration
	// after it, which this block loads next
	auto prefetch = [&](long long n) {
		if (n < nit) {
			cv_prefetch(n + gridDim.x);
			if constexpr (L2_AHEAD)
				if (!s_in_1 && n + gridDim.x < nit)
					io_prefetch_in<Word, L, C, NT>(
					    args, n + gridDim.x, tid, false);
			copy_in(n);
		}
		cp_async_commit();
	};

	long long it = blockIdx.x;
	prefetch(it);

	for (; it < nit; it += gridDim.x) {
		const long long nxt = it + gridDim.x;
		// tc16's plain FFT passes keep the per-lane bases in
		// registers (see pin()): on the H200 1D 2^17 .. 2^27 took up
		// to 8% less time (2^24 the same), 4096 .. 16384 2-5%. Fused
		// real steps and conversions hold more live values, and
		// recomputing the bases is what keeps them from spilling;
		// split16 gained at 4096 points but lost 2-4% at 512 .. 2048.
		if constexpr (!P::kSplit && RSTEP == FFTD__TC_OP_FFT && !CV) {
			pin(sw_c1_0), pin(sw_cs_0), pin(sw_g1_0), pin(sw_w1_0);
			pin(sw_p2_0), pin(sw_g2_0), pin(sw_co_0), pin(sw_a2_0);
			pin(sw_bi_0);
		}
		// fresh, opaque copies each iteration (see opaque())
		const int      ln    = (int) opaque((uint32_t) lane);
		const uint32_t sw_g1 = opaque(sw_g1_0), sw_w1 = opaque(sw_w1_0);
		sw_c1               = opaque(sw_c1_0);
		sw_cs               = opaque(sw_cs_0);
		const float2 *t256l = t256 + opaque((uint32_t) lane);
		Word *const   out   = static_cast<Word *>(args.out);
		if constexpr (CV) {
			// the output scale of this iteration: columns (s_out
			// > 1) lie in one transform, rows when C L <= points
			if (DIRECT) {
				sco_one = (long long) C * L
				    <= (1LL << args.out_tlog2);
				if (sco_one)
					sco = io_scale_out(
					    args, it * C * (long long) L);
			} else {
				sco_one = args.s_out > 1
				    || (long long) C * L
				        <= (1LL << args.out_tlog2);
				sco = io_scale_out(args,
				    col_first(it * C, L, args.s_out,
				        args.s_out_log2));
			}
		}
		if constexpr (TW)
			tw_tables(it);
		cp_async_wait<0>();
		__syncthreads();

		// ---- level 1: 256-point FFTs in registers, one tile per warp
		// step. without a scratch buffer, results wait in registers for
		// a barrier
		constexpr bool STASH
		    = !SCR && !IP && !IPC && !(R == 1 && DIRECT);
		Word stash[STASH ? TPW : 1][8];
#pragma unroll
		for (int i = 0; i < TPW; i++) {
			const int tau = warp + W * i, f = tau / R, a = tau % R;
			const uint32_t sb = sw_g1 ^ SB(l1_in<L, R>(W * i));
			Word           w[8];
#pragma unroll
			for (int e = 0; e < 8; e++)
				w[e] = bref(sb ^ SB(elem_off(e, R, 16 * R)));
			Frag<SPLIT> x;
			words_to_frag(w, x);
			float yr[8], yi[8];
			row_dft(x, F, yr, yi);
#pragma unroll
			for (int e = 0; e < 8; e++) {
				float2 v = cmul(make_float2(yr[e], yi[e]),
				    t256l[32 * e]); // W_256^(row col)
				yr[e]    = v.x;
				yi[e]    = v.y;
			}
			to_frag(yr, yi, x);
			transpose(x);
			row_dft(x, F, yr, yi);
			// the lane factor of W_L^(a kb) (a warp-uniform)
			const float2   tla = L1T ? t1l[a * 32 + ln] : float2();
			const uint32_t so  = sw_w1 ^ SB(l1_out<L, R>(W * i));
			const int      kb0
			    = (ln >> 2) + 32 * (ln & 3); // kb of element 0
			const long long q = it * C + f;
			Word *const dst = out + q * L + kb0; // R == 1 && DIRECT
			TileTw      tw;
			if (R == 1 && TW)
				tw = tile_tw(f, 0, 16);
			// W_L^(a kb) is 1 for a = 0 (a is warp-uniform): one
			// branch a tile, not one around each element's product
			// and store (a BSSY / BSYNC pair each, 4.2 M of the
			// 512-point column pass's 105 M warp instructions in
			// Nsight Compute; up to 5% faster on the H200)
			if (L1T && a != 0) {
#pragma unroll
				for (int e = 0; e < 8; e++) {
					const float2 v
					    = cmul(make_float2(yr[e], yi[e]),
					        cmul(tla, t1e[a * 8 + e]));
					yr[e] = v.x;
					yi[e] = v.y;
				}
			}
#pragma unroll
			for (int e = 0; e < 8; e++) {
				float2 v = make_float2(yr[e], yi[e]);
				if (!L1T && R == 1 && TW)
					v = cmul(v, tw.at(e));
				if (R == 1 && DIRECT) {
					if (q < args.q_total)
						put(dst + elem_off(e, 1, 16),
						    v.x, v.y);
				} else if (IP || IPC) { // where w[e] was read
					bref(sb ^ SB(elem_off(e, R, 16 * R)))
					    = P::store(v.x, v.y);
				} else if (SCR) {
					sref(so ^ SB(elem_off(e, 1, 16)))
					    = P::store(v.x, v.y);
				} else {
					stash[STASH ? i : 0][e]
					    = P::store(v.x, v.y);
				}
			}
		}
		if (STASH) {
			__syncthreads();
#pragma unroll
			for (int i = 0; i < TPW; i++) {
				const uint32_t so
				    = sw_w1 ^ SB(l1_out<L, R>(W * i));
#pragma unroll
				for (int e = 0; e < 8; e++)
					bref(so ^ SB(elem_off(e, 1, 16)))
					    = stash[STASH ? i : 0][e];
			}
		}
		// level 2 works in the scratch buffer, or in buf without one
		auto wref = [&](uint32_t off) -> Word & {
			return SCR ? sref(off) : bref(off);
		};

		// ---- level 2: R-point DFTs over a (stride 256), natural order
		// out.
		if constexpr (R == 1) {
			__syncthreads();
			if (EARLY)
				prefetch(nxt);
		} else if constexpr (R <= 8) {
			// On the CUDA cores, one thread per (f, kb).
			constexpr int PAIRS = C * 256 / NT;
			static_assert(PAIRS * NT == C * 256, "level-2 pairs");
			const uint32_t sw_p2 = opaque(sw_p2_0);
			__syncthreads();
			if (EARLY)
				prefetch(nxt);
#pragma unroll
			for (int j = 0; j < PAIRS; j++) {
				const int pidx = tid + j * NT, f = pidx / 256,
				          kb = pidx % 256;
				const uint32_t sb
				    = sw_p2 ^ SB(l2_pair<L>(j * NT));
				float2 v[R];
#pragma unroll
				for (int x = 0; x < R; x++)
					v[x] = P::load(wref(
					    sb ^ SB((uint32_t) (256 * x))));
				if (MOVE_TW)
#pragma unroll
					for (int x = 1; x < R; x++)
						v[x] = cmul(v[x],
						    tw1[j % NKB]
						       [x - 1]); // W_L^(a kb)
				SmallDft<R, INV>::run(v);
				const long long q = it * C + f;
				// W_N^(ql kb) once, times W_N^(256 ql x) per x
				const float2 *e   = TW
				      ? twc + opaque((uint32_t) (f * TWC))
				      : twc; // (no opaque copy without TW)
				const float2  wkb = TW
				     ? cmul(e[kb & 15], e[16 + (kb >> 4)])
				     : float2();
#pragma unroll
				for (int x = 0; x < R; x++) {
					if (TW)
						v[x] = cmul(
						    v[x], cmul(wkb, e[32 + x]));
					if (DIRECT) {
						if (q < args.q_total)
							put(out + q * L + kb
							        + 256 * x,
							    v[x].x, v[x].y);
					} else {
						wref(sb
						    ^ SB((uint32_t) (256 * x)))
						    = P::store(v[x].x, v[x].y);
					}
				}
			}
		} else if constexpr (R == 16) {
			// One tensor-core product per (f, 16 consecutive kb):
			// rows kb, columns a -> ka; in place, so no block
			// barrier between.
			constexpr int UNITS = C * 16 / W;
			static_assert(UNITS * W == C * 16, "level-2 units");
			const uint32_t sw_g2 = opaque(sw_g2_0);
			__syncthreads();
			if (EARLY)
				prefetch(nxt);
#pragma unroll
			for (int u0 = 0; u0 < UNITS; u0++) {
				const int u = warp + W * u0, f = u / 16,
				          kb0     = (u % 16) * 16;
				const uint32_t sb = sw_g2
				    ^ SB(IP ? l2_unit_ip<L>(W * u0)
				            : l2_unit<L>(W * u0));
				// a tile's rows are kb, its columns a (ka)
				constexpr uint32_t RS = IP ? 16 : 1,
				                   CS = IP ? 1 : 256;
				Word z[8];
#pragma unroll
				for (int e = 0; e < 8; e++)
					z[e] = wref(
					    sb ^ SB(elem_off(e, RS, CS)));
				Frag<SPLIT> x;
				words_to_frag(z, x);
				float yr[8], yi[8];
				row_dft(x, F, yr, yi);
				const long long q = it * C + f;
				Word *const dst = out + q * L + kb0 + (ln >> 2)
				    + 512 * (ln & 3);
				TileTw tw;
				if (TW)
					tw = tile_tw(f, kb0, 256);
#pragma unroll
				for (int e = 0; e < 8; e++) {
					float2 v = make_float2(yr[e], yi[e]);
					if (TW)
						v = cmul(v, tw.at(e));
					if (DIRECT) {
						if (q < args.q_total)
							put(dst
							        + elem_off(
							            e, 1, 256),
							    v.x, v.y);
					} else {
						wref(sb
						    ^ SB(elem_off(e, RS, CS)))
						    = P::store(v.x, v.y);
					}
				}
			}
		} else {
			// R = 16 RR, a = alpha + 16 beta, ka = RR kappa +
			// beta': (2a) radix-RR over beta on the CUDA cores,
			// times W_R^(alpha beta'), in place; (2b) the radix-16
			// product over alpha per (f, kb0, beta'), results to kb
			// + 256 (RR kappa + beta') in device memory (contiguous
			// passes only: L > 4096), or with the R2C step fused
			// in, to the output buffer (R2C_BUF) in natural order.
			static_assert(
			    !STRIDED, "L > 4096 only for contiguous passes");
			constexpr int ITEMS = C * 4096 / NT;
			static_assert(ITEMS * NT == C * 4096, "level-2a items");
			constexpr int TPW2 = C * 16 * RR / W;
			static_assert(
			    TPW2 * W == C * 16 * RR, "level-2b tiles per warp");
			const uint32_t sw_a2 = opaque(sw_a2_0);
			__syncthreads();
			if (EARLY)
				prefetch(nxt);
#pragma unroll
			for (int j = 0; j < ITEMS; j++) {
				const int i  = tid + j * NT,
				          al = IPC ? i % 16 : (i % 4096) / 256;
				const uint32_t sb = sw_a2
				    ^ SB(IPC ? l2a_item_ip<L, R>(j * NT)
				             : l2a_item<L>(j * NT));
				// beta's step: 4096 (256 a + kb), 16 (IPC)
				constexpr uint32_t BS = IPC ? 16 : 4096;
				float2             v[RR];
#pragma unroll
				for (int b = 0; b < RR; b++)
					v[b] = P::load(
					    wref(sb ^ SB((uint32_t) (BS * b))));
				SmallDft<RR, INV>::run(v);
#pragma unroll
				for (int b = 0; b < RR; b++) {
					// W_R^(al b); al is warp-uniform but in
					// IPC, where W_R^0 = 1 exactly and no
					// branch is better
					if (b > 0 && (IPC || al > 0))
						v[b] = cmul(v[b],
						    tr[IPC ? 16 * b + al
						           : al * b]);
					wref(sb ^ SB((uint32_t) (BS * b)))
					    = P::store(v[b].x, v[b].y);
				}
			}
			__syncthreads();
			const uint32_t sw_bi = opaque(sw_bi_0);
#pragma unroll
			for (int i = 0; i < TPW2; i++) {
				const int tau     = warp + W * i,
				          f       = tau / (16 * RR),
				          kb0     = (tau % 16) * 16,
				          b       = (tau / 16) % RR;
				const uint32_t sb = sw_bi
				    ^ SB(IPC ? l2b_in_ip<L, R, RR>(W * i)
				             : l2b_in<L, RR>(W * i));
				// a tile's rows are kb, its columns alpha
				constexpr uint32_t RS = IPC ? R : 1,
				                   CS = IPC ? 1 : 256;
				Word z[8];
#pragma unroll
				for (int e = 0; e < 8; e++)
					z[e] = wref(
					    sb ^ SB(elem_off(e, RS, CS)));
				Frag<SPLIT> x;
				words_to_frag(z, x);
				float yr[8], yi[8];
				row_dft(x, F, yr, yi);
				if constexpr (R2C_OUT) {
					// point k = l2b_out(tau) + (ln >> 2)
					// + 512 RR (ln & 3) + elem_off
					const uint32_t so = SB(l2b_out<L, RR>((
					                        uint32_t) warp))
					    ^ SB(l2b_out<L, RR>(
					        (uint32_t) (W * i)))
					    ^ SB((uint32_t) ((ln >> 2)
					        + 512 * RR * (ln & 3)));
#pragma unroll
					for (int e = 0; e < 8; e++)
						oref(so
						    ^ SB(elem_off(
						        e, 1, 256 * RR)))
						    = P::store(yr[e], yi[e]);
					continue;
				}
				const long long q = it * C + f;
				Word *const dst   = out + q * L + kb0 + 256 * b
				    + (ln >> 2) + 512 * RR * (ln & 3);
#pragma unroll
				for (int e = 0; e < 8; e++)
					if (q < args.q_total)
						put(dst
						        + elem_off(
						            e, 1, 256 * RR),
						    yr[e], yi[e]);
			}
		}
		if constexpr (R2C_OUT) {
			__syncthreads();
			// level 2 left the results in scratch (R <= 16) or
			// in the output buffer (R > 16)
			r2c_rows<P, L, C, NT>(args, it, SB, [&](uint32_t off) {
				return R2C_BUF ? oref(off) : wref(off);
			});
		} else if (IP && !CV) {
			__syncthreads();
			if (args.s_in > 1) {
				// each thread stores the points at the
				// positions its next copy-in fills, then
				// refills them: no barrier between
				copy_out_in(it, nxt);
				continue;
			}
			copy_out(it);
		} else if (!DIRECT) {
			__syncthreads();
			copy_out(it);
		}
		if (!EARLY) {
			// every buffer read above may be refilled from here on
			__syncthreads();
			prefetch(nxt);
		}
	}
	cp_async_wait<0>();
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC16_PASS_CUH

// SPDX-License-Identifier: MIT
//
// tc_axis.cuh — PRIVATE to kernels/: included by tc16.cu and split16.cu
// only. The axis pass kernel: batched FFTs of length L = 32 .. 128 on the
// CUDA cores, each whole in shared memory, for the sides of 3D transforms
// (and the half-length rows of real 2D transforms) too short for the
// tensor-core passes (tc16_pass.cuh, L >= 256). After the split-fp16 3D FFT
// of Kang, Glaeser et al. ("Accelerating 3D FFT with Half-Precision Floating
// Point Hardware on GPU"), which keeps the short radix-2/4/8 stages of a 3D
// FFT in fp32 arithmetic and only the storage narrow: here the data is
// fp16 (tc16) or fp32 (split16) in device memory and fp32 in shared memory
// and registers, so a split16 3D transform keeps fp32 accuracy on these axes
// (the paper reports ~1e-6 relative error with hi/lo splitting).
//
// Algorithm: two Stockham stages, L = R1 R2 (32 = 8 x 4, 64 = 8 x 8,
// 128 = 16 x 8; Govindaraju et al., "High Performance Discrete Fourier
// Transforms on Graphics Processors", SC 2008, fig. 2), natural order in
// and out:
//   stage 1, butterfly j < R2 of an FFT: the R1-point DFT of x[j + r R2],
//     r < R1, straight from the registers its device-memory loads filled,
//     element r to y[j R1 + r] in shared memory;
//   stage 2, butterfly j < R1: y[j + r R1], r < R2, times W_L^(j r) (a
//     shared table of W_L that each block fills with sincospif of exact
//     fractions: fp32-accurate), the R2-point DFT, element r straight to
//     device memory as X[j + r R1].
// So a point crosses shared memory once. (The radix-8 ping-pong version
// before it, with sincospif twiddles, moved every point through shared
// memory four to five times and was issue-bound: ncu on the H200 showed
// 79% of the SM's issue slots busy and 24-31% of DRAM's bandwidth.)
//
// Data movement: a block transforms C FFTs at a time (C L = 4096 points
// for L = 128, else 2048; for columns C = 32 at most, so that column groups
// tile every stride the planner makes, which are powers of two >= 32).
// Column passes (s_in > 1) give neighbouring threads neighbouring columns,
// so each warp access covers runs of up to 32 points (128 bytes for tc16);
// contiguous passes give them neighbouring butterflies of one row. In
// shared memory point n of FFT f sits at f PITCH + n + n / R1 (axis_at):
// the pad point after every R1 spreads stage 1's stores (stride R1) over
// the banks, and for columns an odd PITCH spreads the column order. No
// four-step twiddle: these passes only serve multi-dimensional transforms.

#ifndef FFTD_KERNELS_TC_AXIS_CUH
#define FFTD_KERNELS_TC_AXIS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tc16_dft.cuh"
#include "tc16_types.cuh"
#include "tc_io.cuh"

namespace fftd_tc
{

// The two radices of an axis of L points (see above): R1 then R2.
__host__ __device__ constexpr int
axis_r1(int len)
{
	return len >= 128 ? 16 : 8;
}
__host__ __device__ constexpr int
axis_r2(int len)
{
	return len / axis_r1(len);
}

// axis_ffts is the number of FFTs an axis block transforms at once, and
// axis_threads its threads: every stage has at least one butterfly a thread.
__host__ __device__ constexpr int
axis_ffts(int len, bool strided)
{
	return strided && (len >= 128 ? 4096 : 2048) / len > 32
	    ? 32
	    : (len >= 128 ? 4096 : 2048) / len;
}
__host__ __device__ constexpr int
axis_threads(int len, bool strided)
{
	return axis_ffts(len, strided) * len
	    / (axis_r1(len) > axis_r2(len) ? axis_r1(len) : axis_r2(len));
}

// axis_min_blocks caps the registers so that several blocks share an SM
// (24 warps for tc16; 16 for split16, whose registers hold float pairs,
// and for 128 points, whose 16 loads a thread spilled at 80 registers):
// the loads of one block's next group overlap the others' stages.
template <class P>
__host__ __device__ constexpr int
axis_min_blocks(int len, bool strided)
{
	return (P::kSplit || len >= 128 ? 512 : 768)
	    / axis_threads(len, strided);
}

// axis_pitch is the shared-memory row of one FFT: L points and a pad point
// after every R1; for columns one more, so that the pitch is odd (rows:
// even is conflict-free for 64 and 128 points, where odd left 2-way
// conflicts; a search over pitches, the model counting distinct words on
// one bank pair per half-warp).
__host__ __device__ constexpr int
axis_pitch(int len, bool strided)
{
	return len + len / axis_r1(len) + (strided ? 1 : 0);
}

// axis_at is where point n of FFT f sits in the shared buffer.
template <int L, bool STRIDED>
FFTD_DEV int
axis_at(int f, int n)
{
	return f * axis_pitch(L, STRIDED) + n + n / axis_r1(L);
}

// axis_table fills tw[j] = W_L^j, j < L (forward sign, from sincospif of
// the exact fraction j / L: fp32-accurate), with the block's NT threads.
template <int NT>
FFTD_DEV void
axis_table(float2 *tw, int L)
{
	for (int j = threadIdx.x; j < L; j += NT) {
		float s, c;
		sincospif(-2.0f * (float) j / (float) L, &s, &c);
		tw[j] = make_float2(c, s);
	}
}

// twiddle_dft is butterfly j of a second Stockham stage of R points: v[r]
// times W_L^(j r), read from a table of W_M^i (axis_table, M = L step) at
// i = j r step and conjugated for the inverse, then the R-point DFT.
template <int R, bool INV>
FFTD_DEV void
twiddle_dft(float2 (&v)[R], const float2 *tw, int step, int j)
{
#pragma unroll
	for (int r = 1; r < R; r++) {
		float2 w = tw[j * r * step];
		if (INV)
			w.y = -w.y;
		v[r] = cmul(v[r], w);
	}
	SmallDft<R, INV>::run(v);
}

// The axis pass: FFT q reads element n at
// (q / s_in) L s_in + n s_in + q % s_in and writes element k likewise with
// s_out (tc.h, fftd__tc_pass); a persistent block loops over groups of C.
// CV: the first or last pass of a plan with fused conversion (tc_io.cuh).
// A group's C FFTs are neighbouring columns of one transform (the planner
// makes s and q_total multiples of C) or C consecutive rows, so a point's
// address is the group's 64-bit base plus a 32-bit offset (n s < 2^25).
template <class P, int L, bool STRIDED, bool INV, bool CV>
__global__ void
__launch_bounds__(axis_threads(L, STRIDED), axis_min_blocks<P>(L, STRIDED))
    axis_kernel(PassArgs a)
{
	using Word                  = typename P::Word;
	constexpr int            C  = axis_ffts(L, STRIDED);
	constexpr int            NT = axis_threads(L, STRIDED);
	constexpr int            R1 = axis_r1(L), R2 = axis_r2(L);
	constexpr int            B1 = C * L / R1 / NT; // butterflies a thread
	constexpr int            B2 = C * L / R2 / NT;
	extern __shared__ float2 axis_smem[];
	float2                  *buf = axis_smem;
	float2         *tw  = buf + C * axis_pitch(L, STRIDED); // W_L^j, j < L
	const Word     *in  = static_cast<const Word *>(a.in);
	Word           *out = static_cast<Word *>(a.out);
	const long long nit = (a.q_total + C - 1) / C;
	static_assert(B1 * NT * R1 == C * L && B2 * NT * R2 == C * L, "shape");
	axis_table<NT>(tw, L);
	// the group's first point in device memory; point n of its FFT f
	// lies at f + n s (columns) or f L + n (rows) from it
	auto base = [&](long long q0, int slog2) -> long long {
		return STRIDED ? col_first(q0, L, 1LL << slog2, slog2) : q0 * L;
	};
	// butterfly u of a thread in a stage whose FFTs have NB butterflies:
	// columns give neighbouring threads neighbouring FFTs, rows
	// neighbouring butterflies
	auto bfly = [](int u, int NB, int &f, int &j) {
		const int b = (int) threadIdx.x + u * NT;
		f           = STRIDED ? b % C : b / NB;
		j           = STRIDED ? b / C : b % NB;
	};
	// Stage 1's inputs of the next group are loaded into registers while
	// this group's stage 2 runs, every load in flight at once.
	Word nx[B1][R1];
	auto load = [&](long long it) {
		const long long q0   = it * C;
		const bool      full = q0 + C <= a.q_total;
		const long long b0   = base(q0, a.s_in_log2);
		const Word     *src  = in + b0;
		const uint32_t  s    = STRIDED ? (uint32_t) a.s_in : 1u;
		const uint32_t  fs   = STRIDED ? 1u : (uint32_t) L;
#pragma unroll
		for (int u = 0; u < B1; u++) {
			int f, j;
			bfly(u, R2, f, j);
#pragma unroll
			for (int r = 0; r < R1; r++) {
				nx[u][r] = P::store(0.0f, 0.0f);
				if (full || q0 + f < a.q_total) {
					const uint32_t o = (uint32_t) f * fs
					    + (uint32_t) (j + r * R2) * s;
					if constexpr (CV)
						nx[u][r] = io_load<P, CV>(
						    a, b0 + o, b0 + o);
					else
						nx[u][r] = src[o];
				}
			}
		}
	};
	if ((long long) blockIdx.x < nit)
		load(blockIdx.x);
	__syncthreads(); // the table
	for (long long it = blockIdx.x; it < nit; it += gridDim.x) {
		const long long q0 = it * C;
		// stage 1: R1-point DFTs from the registers into the buffer
#pragma unroll
		for (int u = 0; u < B1; u++) {
			int f, j;
			bfly(u, R2, f, j);
			float2 v[R1];
#pragma unroll
			for (int r = 0; r < R1; r++)
				v[r] = P::load(nx[u][r]);
			SmallDft<R1, INV>::run(v);
#pragma unroll
			for (int r = 0; r < R1; r++)
				buf[axis_at<L, STRIDED>(f, j * R1 + r)] = v[r];
		}
		__syncthreads();
		if (it + gridDim.x < nit)
			load(it + gridDim.x);
		// stage 2: twiddles, R2-point DFTs, straight to device memory
		const bool      full = q0 + C <= a.q_total;
		const long long b0   = base(q0, a.s_out_log2);
		const uint32_t  s    = STRIDED ? (uint32_t) a.s_out : 1u;
		const uint32_t  fs   = STRIDED ? 1u : (uint32_t) L;
#pragma unroll
		for (int u = 0; u < B2; u++) {
			int f, j;
			bfly(u, R1, f, j);
			float2 v[R2];
#pragma unroll
			for (int r = 0; r < R2; r++)
				v[r] = buf[axis_at<L, STRIDED>(f, j + r * R1)];
			twiddle_dft<R2, INV>(v, tw, 1, j);
			if (full || q0 + f < a.q_total) {
#pragma unroll
				for (int r = 0; r < R2; r++) {
					const long long at = b0
					    + (uint32_t) f * fs
					    + (uint32_t) (j + r * R1) * s;
					if constexpr (CV)
						io_store<P>(
						    a, at, at, v[r].x, v[r].y);
					else
						out[at]
						    = P::store(v[r].x, v[r].y);
				}
			}
		}
		__syncthreads(); // buf is read before the next stage 1
	}
}

// make_axis_info describes one compiled axis kernel for tc16_plan.cu: its
// block shape (C FFTs, axis_threads threads) and the shared memory it
// needs: the buffer and the table of W_L.
template <class P, int L, bool STRIDED, bool INV, bool CV = false>
KernelInfo
make_axis_info()
{
	KernelInfo k;
	k.fn    = axis_kernel<P, L, STRIDED, INV, CV>;
	k.len   = L;
	k.ffts  = axis_ffts(L, STRIDED);
	k.warps = axis_threads(L, STRIDED) / 32;
	k.smem  = sizeof(float2)
	    * (axis_ffts(L, STRIDED) * axis_pitch(L, STRIDED) + L);
	return k;
}

// The axis kernel for len = 32 .. 128 (no four-step twiddle), or false.
template <class P, bool CV = false>
bool
axis_kernel_info(int len, bool strided, bool inverse, int tw, KernelInfo *k)
{
	if (tw)
		return false;
#define FFTD_TC_AXIS_CASE(LEN)                                                 \
	if (len == LEN) {                                                      \
		*k = strided                                                   \
		    ? (inverse ? make_axis_info<P, LEN, true, true, CV>()      \
		               : make_axis_info<P, LEN, true, false, CV>())    \
		    : (inverse ? make_axis_info<P, LEN, false, true, CV>()     \
		               : make_axis_info<P, LEN, false, false, CV>());  \
		return true;                                                   \
	}
	FFTD_TC_AXIS_CASE(32)
	FFTD_TC_AXIS_CASE(64)
	FFTD_TC_AXIS_CASE(128)
#undef FFTD_TC_AXIS_CASE
	return false;
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_AXIS_CUH

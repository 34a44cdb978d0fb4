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
// Algorithm: a radix-8 Stockham autosort FFT (then one radix-4 or radix-2
// stage), natural order in and out, ping-ponging between two shared-memory
// buffers (Govindaraju et al., "High Performance Discrete Fourier
// Transforms on Graphics Processors", SC 2008, fig. 2): in the stage of span
// Ns, butterfly j of an FFT reads x[j + r L/R], r < R, multiplies element r by
// W_{Ns R}^{(j mod Ns) r} (from a shared-memory table of W_L^j that each
// block fills with sincospif of exact fractions: fp32-accurate twiddles),
// does the R-point DFT and writes element r to (j / Ns) Ns R + (j mod Ns) +
// r Ns.
//
// Data movement: a block holds C FFTs (C L = 2048 points; for columns at
// most 32, so that column groups tile every stride the planner makes, which
// are powers of two >= 32). Column passes (s_in > 1) read and write C
// neighbouring columns, so each warp access covers whole runs of C points
// (128 bytes for tc16 C = 32); contiguous passes read C L consecutive
// points. In shared memory point n of FFT f sits at f PITCH + n, and for
// L = 128 at f PITCH + n + n / 16 (axis_at): there the pad point after
// every 16 spreads the radix-8 Stockham stores of span 1 (stride 8 points),
// which fell 8-way on one bank pair, over all banks (measured on the H100:
// 3D 128^3 tc16 1.735 -> 1.648 ms); for L = 32 and 64 (at most 4-way, and
// 2-way with the pad) the pad measured 2-5% slower, so they keep plain
// rows. The odd PITCH spreads the column-order loads and stores. No
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

// axis_ffts is the number of FFTs an axis block holds (see above).
__host__ __device__ constexpr int
axis_ffts(int len, bool strided)
{
	return strided && 2048 / len > 32 ? 32 : 2048 / len;
}

constexpr int kAxisThreads = 256;

// axis_pitch is the shared-memory row of one FFT: L points, for L >= 128
// a pad point after every 16, and one more so that the pitch is odd.
__host__ __device__ constexpr int
axis_pitch(int len)
{
	return len + (len >= 128 ? len / 16 : 0) + 1;
}

// axis_at is where point n of FFT f sits in a shared buffer.
template <int L>
FFTD_DEV int
axis_at(int f, int n)
{
	return f * axis_pitch(L) + n + (L >= 128 ? n >> 4 : 0);
}

// One Stockham stage of radix R and span NS over the block's C FFTs (rows of
// axis_pitch(L) points in shared memory, axis_at), src -> dst. tw is W_L^j,
// j < L (forward sign), in shared memory: W_{NS R}^{jm r} = W_L^{jm r L /
// (NS R)}, one load (sincospif here made the kernel issue-bound: 79% of the
// SM's issue slots, 24-31% of DRAM's bandwidth, ncu on the H200).
template <int L, int C, int R, int NS, bool INV>
FFTD_DEV void
axis_stage(const float2 *src, float2 *dst, const float2 *tw)
{
	constexpr int B = L / R; // butterflies per FFT
	for (int b = threadIdx.x; b < C * B; b += kAxisThreads) {
		const int f = b / B, j = b % B, jm = j % NS;
		float2    v[R];
#pragma unroll
		for (int r = 0; r < R; r++)
			v[r] = src[axis_at<L>(f, j + r * B)];
		if (NS > 1) {
#pragma unroll
			for (int r = 1; r < R; r++) {
				float2 w = tw[jm * r * (L / (NS * R))];
				if (INV)
					w.y = -w.y;
				v[r] = cmul(v[r], w);
			}
		}
		SmallDft<R, INV>::run(v);
		const int d = (j / NS) * NS * R + jm;
#pragma unroll
		for (int r = 0; r < R; r++)
			dst[axis_at<L>(f, d + r * NS)] = v[r];
	}
}

// The stages of an L-point FFT from span NS on: radix 8 while 8 | L / NS,
// then one radix-4 or radix-2 stage. Returns the buffer holding the result.
template <int L, int C, int NS, bool INV>
FFTD_DEV float2 *
axis_stages(float2 *src, float2 *dst, const float2 *tw)
{
	if constexpr (NS >= L) {
		return src;
	} else {
		constexpr int R = L / NS >= 8 ? 8 : L / NS;
		axis_stage<L, C, R, NS, INV>(src, dst, tw);
		__syncthreads();
		return axis_stages<L, C, NS * R, INV>(dst, src, tw);
	}
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
__launch_bounds__(kAxisThreads) axis_kernel(PassArgs a)
{
	using Word                 = typename P::Word;
	constexpr int            C = axis_ffts(L, STRIDED);
	extern __shared__ float2 axis_smem[];
	float2         *buf0 = axis_smem, *buf1 = axis_smem + C * axis_pitch(L);
	float2         *tw  = buf1 + C * axis_pitch(L); // W_L^j, j < L
	const Word     *in  = static_cast<const Word *>(a.in);
	Word           *out = static_cast<Word *>(a.out);
	const long long nit = (a.q_total + C - 1) / C;
	for (int j = threadIdx.x; j < L; j += kAxisThreads) {
		float s, c;
		sincospif(-2.0f * (float) j / (float) L, &s, &c);
		tw[j] = make_float2(c, s);
	}
	// the group's first point in device memory; points (c, n) lie at
	// c + n s (columns) or c L + n (rows) from it
	auto base = [&](long long q0, int slog2) -> long long {
		return STRIDED ? (((q0 >> slog2) * L) << slog2)
		        + (q0 & ((1LL << slog2) - 1))
		               : q0 * L;
	};
	// Each thread's PER points of group it go into registers, every load
	// in flight at once; the next group's are loaded while this one's
	// stages run (a load-then-store loop waited out one load latency per
	// point).
	constexpr int PER = C * L / kAxisThreads;
	static_assert(PER * kAxisThreads == C * L, "points per thread");
	Word nx[PER];
	auto load = [&](long long it) {
		const long long q0   = it * C;
		const bool      full = q0 + C <= a.q_total;
		const long long b0   = base(q0, a.s_in_log2);
		const uint32_t  s    = (uint32_t) a.s_in;
#pragma unroll
		for (int u = 0; u < PER; u++) {
			// columns: neighbouring threads, neighbouring columns
			const int i = threadIdx.x + u * kAxisThreads;
			const int c = STRIDED ? i % C : i / L;
			const int n = STRIDED ? i / C : i % L;
			nx[u]       = P::store(0.0f, 0.0f);
			if (full || q0 + c < a.q_total) {
				const long long at = b0
				    + (STRIDED ? (uint32_t) c + (uint32_t) n * s
				               : (uint32_t) i);
				if constexpr (CV)
					nx[u] = io_load<P, CV>(a, at, at);
				else
					nx[u] = in[at];
			}
		}
	};
	if ((long long) blockIdx.x < nit)
		load(blockIdx.x);
	for (long long it = blockIdx.x; it < nit; it += gridDim.x) {
		const long long q0 = it * C;
#pragma unroll
		for (int u = 0; u < PER; u++) {
			const int i            = threadIdx.x + u * kAxisThreads;
			const int c            = STRIDED ? i % C : i / L;
			const int n            = STRIDED ? i / C : i % L;
			buf0[axis_at<L>(c, n)] = P::load(nx[u]);
		}
		__syncthreads();
		if (it + gridDim.x < nit)
			load(it + gridDim.x);
		const float2   *res = axis_stages<L, C, 1, INV>(buf0, buf1, tw);
		const bool      full = q0 + C <= a.q_total;
		const long long b0   = base(q0, a.s_out_log2);
		const uint32_t  s    = (uint32_t) a.s_out;
#pragma unroll
		for (int u = 0; u < PER; u++) {
			const int i = threadIdx.x + u * kAxisThreads;
			const int c = STRIDED ? i % C : i / L;
			const int n = STRIDED ? i / C : i % L;
			if (full || q0 + c < a.q_total) {
				const long long at = b0
				    + (STRIDED ? (uint32_t) c + (uint32_t) n * s
				               : (uint32_t) i);
				const float2 v = res[axis_at<L>(c, n)];
				if constexpr (CV)
					io_store<P>(a, at, at, v.x, v.y);
				else
					out[at] = P::store(v.x, v.y);
			}
		}
		__syncthreads(); // res is read before the next load overwrites
	}
}

// make_axis_info describes one compiled axis kernel for tc16_plan.cu: its
// block shape (C FFTs, 8 warps) and the shared memory it needs: the two
// ping-pong buffers and the table of W_L.
template <class P, int L, bool STRIDED, bool INV, bool CV = false>
KernelInfo
make_axis_info()
{
	KernelInfo k;
	k.fn    = axis_kernel<P, L, STRIDED, INV, CV>;
	k.len   = L;
	k.ffts  = axis_ffts(L, STRIDED);
	k.warps = kAxisThreads / 32;
	k.smem  = sizeof(float2)
	    * (2 * axis_ffts(L, STRIDED) * axis_pitch(L) + L); // + W_L
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

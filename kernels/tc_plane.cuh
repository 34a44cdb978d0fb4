// SPDX-License-Identifier: MIT
//
// tc_plane.cuh — PRIVATE to kernels/: included by tc16.cu, tc16_io.cu and
// split16.cu only. The plane pass kernel (tc.h, FFTD__TC_OP_PLANE): the 2D
// FFT of contiguous planes of LY rows of LZ points (each 32 .. 128, LY LZ
// <= 4096) in one pass over memory, on the CUDA cores. It serves the last
// two axes of a 3D transform whose planes fit a block's shared memory, so
// that the transform takes two passes (planes, then the first axis) instead
// of one per axis: the split-fp16 3D FFT of Kang, Glaeser et al.
// ("Accelerating 3D FFT with Half-Precision Floating Point Hardware on
// GPU") likewise transforms a 3D array's short axes together in shared
// memory, with fp16 storage and fp32 arithmetic, as here (tc16: fp16 in
// device memory, split16: fp32; fp32 in shared memory and registers).
//
// Algorithm: each axis in the two Stockham stages of tc_axis.cuh (L = R1
// R2: 32 = 8 x 4, 64 = 8 x 8, 128 = 16 x 8), natural order in and out:
//   rows (z), stage 1: the R1-point DFTs of x[j + r R2] straight from the
//     registers the device-memory loads filled, to j R1 + r in shared
//     memory;
//   rows, stage 2: twiddle W_LZ^(j r) and the R2-point DFTs, in place (each
//     butterfly writes the points it read);
//   columns (y), stage 1: the R1-point DFTs down each column, read into
//     registers, a barrier, written to j R1 + r;
//   columns, stage 2: twiddle W_LY^(j r), the R2-point DFTs, straight to
//     device memory.
// A block transforms 4096 points (4096 / (LY LZ) planes) at a time, 256
// threads; the loads of the next group are in flight while this one's
// stages after the first run. Shared memory holds row f of the group (plane
// f / LY, row f % LY) at f PITCH with a pad point after every R1 of a row
// (tc_axis.cuh's row layout, axis_pitch), so the row stages are those of
// the axis kernel's rows and the column stages, whose neighbouring threads
// take neighbouring columns, read and write consecutive words.

#ifndef FFTD_KERNELS_TC_PLANE_CUH
#define FFTD_KERNELS_TC_PLANE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "tc16_dft.cuh"
#include "tc16_types.cuh"
#include "tc_axis.cuh"
#include "tc_io.cuh"

namespace fftd_tc
{

constexpr int kPlaneGroup   = 4096; // points a block transforms at once
constexpr int kPlaneThreads = 256;

// plane_at is where point z of row f of the group sits in shared memory.
template <int LZ>
FFTD_DEV int
plane_at(int f, int z)
{
	return f * axis_pitch(LZ, false) + z + z / axis_r1(LZ);
}

// The plane pass: plane q of LY LZ points at q LY LZ of in and of out
// (contiguous, tc.h FFTD__TC_OP_PLANE); a persistent block loops over
// groups of NP planes. CV: the first or last pass of a plan with fused
// conversion (tc_io.cuh).
template <class P, int LY, int LZ, bool INV, bool CV>
__global__ void
__launch_bounds__(kPlaneThreads, 2) plane_kernel(PassArgs a)
{
	using Word        = typename P::Word;
	constexpr int NT  = kPlaneThreads;
	constexpr int G   = kPlaneGroup;
	constexpr int PP  = LY * LZ; // points a plane
	constexpr int NP  = G / PP;  // planes a group
	constexpr int RZ1 = axis_r1(LZ), RZ2 = axis_r2(LZ);
	constexpr int RY1 = axis_r1(LY), RY2 = axis_r2(LY);
	constexpr int LM    = LY > LZ ? LY : LZ;
	constexpr int BZ1   = G / RZ1 / NT; // butterflies a thread
	constexpr int BZ2   = G / RZ2 / NT;
	constexpr int BY1   = G / RY1 / NT;
	constexpr int BY2   = G / RY2 / NT;
	constexpr int PITCH = axis_pitch(LZ, false);
	static_assert(NP * PP == G && BZ1 * RZ1 * NT == G && BZ2 * RZ2 * NT == G
	        && BY1 * RY1 * NT == G && BY2 * RY2 * NT == G,
	    "shape");
	extern __shared__ float2 plane_smem[];
	float2                  *buf = plane_smem;
	float2                  *tw  = buf + NP * LY * PITCH; // W_LM^j, j < LM
	const Word              *in  = static_cast<const Word *>(a.in);
	Word                    *out = static_cast<Word *>(a.out);
	const long long          nit = (a.q_total + NP - 1) / NP;
	axis_table<NT>(tw, LM); // W_LZ and W_LY at steps LM / LZ, LM / LY

	// Row stage 1's inputs of the next group, loaded into registers while
	// this group's later stages run. Butterfly (row f, j < RZ2), rows'
	// neighbouring butterflies on neighbouring threads.
	Word nx[BZ1][RZ1];
	auto load = [&](long long it) {
		const long long q0   = it * NP;
		const bool      full = q0 + NP <= a.q_total;
		const long long b0   = q0 * PP;
#pragma unroll
		for (int u = 0; u < BZ1; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int f = b / RZ2, j = b % RZ2;
#pragma unroll
			for (int r = 0; r < RZ1; r++) {
				nx[u][r] = P::store(0.0f, 0.0f);
				if (full || q0 + f / LY < a.q_total) {
					const int o = f * LZ + j + r * RZ2;
					if constexpr (CV)
						nx[u][r] = io_load<P, CV>(
						    a, b0 + o, b0 + o);
					else
						nx[u][r] = in[b0 + o];
				}
			}
		}
	};
	if ((long long) blockIdx.x < nit)
		load(blockIdx.x);
	__syncthreads(); // the table
	for (long long it = blockIdx.x; it < nit; it += gridDim.x) {
		const long long q0 = it * NP;
		// rows, stage 1: registers -> buffer
#pragma unroll
		for (int u = 0; u < BZ1; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int f = b / RZ2, j = b % RZ2;
			float2    v[RZ1];
#pragma unroll
			for (int r = 0; r < RZ1; r++)
				v[r] = P::load(nx[u][r]);
			SmallDft<RZ1, INV>::run(v);
#pragma unroll
			for (int r = 0; r < RZ1; r++)
				buf[plane_at<LZ>(f, j * RZ1 + r)] = v[r];
		}
		__syncthreads();
		if (it + gridDim.x < nit) {
			load(it + gridDim.x);
		}
		// rows, stage 2: in place
#pragma unroll
		for (int u = 0; u < BZ2; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int f = b / RZ1, j = b % RZ1;
			float2    v[RZ2];
#pragma unroll
			for (int r = 0; r < RZ2; r++)
				v[r] = buf[plane_at<LZ>(f, j + r * RZ1)];
			twiddle_dft<RZ2, INV>(v, tw, LM / LZ, j);
#pragma unroll
			for (int r = 0; r < RZ2; r++)
				buf[plane_at<LZ>(f, j + r * RZ1)] = v[r];
		}
		__syncthreads();
		// columns, stage 1: butterfly (plane p, column z, j < RY2),
		// neighbouring columns on neighbouring threads; every read
		// before any write (the writes land on other butterflies'
		// points)
		float2 vy[BY1][RY1];
#pragma unroll
		for (int u = 0; u < BY1; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int z = b % LZ, j = (b / LZ) % RY2,
			          p = b / (LZ * RY2);
#pragma unroll
			for (int r = 0; r < RY1; r++)
				vy[u][r] = buf[plane_at<LZ>(
				    p * LY + j + r * RY2, z)];
			SmallDft<RY1, INV>::run(vy[u]);
		}
		__syncthreads();
#pragma unroll
		for (int u = 0; u < BY1; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int z = b % LZ, j = (b / LZ) % RY2,
			          p = b / (LZ * RY2);
#pragma unroll
			for (int r = 0; r < RY1; r++)
				buf[plane_at<LZ>(p * LY + j * RY1 + r, z)]
				    = vy[u][r];
		}
		__syncthreads();
		// columns, stage 2: straight to device memory
		const bool      full = q0 + NP <= a.q_total;
		const long long b0   = q0 * PP;
#pragma unroll
		for (int u = 0; u < BY2; u++) {
			const int b = (int) threadIdx.x + u * NT;
			const int z = b % LZ, j = (b / LZ) % RY1,
			          p = b / (LZ * RY1);
			float2 v[RY2];
#pragma unroll
			for (int r = 0; r < RY2; r++)
				v[r] = buf[plane_at<LZ>(
				    p * LY + j + r * RY1, z)];
			twiddle_dft<RY2, INV>(v, tw, LM / LY, j);
			if (full || q0 + p < a.q_total) {
#pragma unroll
				for (int r = 0; r < RY2; r++) {
					const int o
					    = p * PP + (j + r * RY1) * LZ + z;
					if constexpr (CV)
						io_store<P>(a, b0 + o, b0 + o,
						    v[r].x, v[r].y);
					else
						out[b0 + o]
						    = P::store(v[r].x, v[r].y);
				}
			}
		}
		__syncthreads(); // buf is read before the next row stage 1
	}
}

// make_plane_info describes one compiled plane kernel for tc16_plan.cu:
// ffts is the planes a block transforms at once, len the row length LZ.
template <class P, int LY, int LZ, bool INV, bool CV = false>
KernelInfo
make_plane_info()
{
	KernelInfo k;
	k.fn    = plane_kernel<P, LY, LZ, INV, CV>;
	k.len   = LZ;
	k.ffts  = kPlaneGroup / (LY * LZ);
	k.warps = kPlaneThreads / 32;
	k.smem  = sizeof(float2)
	    * ((size_t) (kPlaneGroup / LZ) * axis_pitch(LZ, false)
	        + (LY > LZ ? LY : LZ));
	return k;
}

// The plane kernel for planes of ly rows of lz points (tc.h
// FFTD__TC_OP_PLANE), or false.
template <class P, bool CV = false>
bool
plane_kernel_info(int ly, int lz, bool inverse, KernelInfo *k)
{
#define FFTD_TC_PLANE_CASE(LY, LZ)                                             \
	if (ly == LY && lz == LZ) {                                            \
		*k = inverse ? make_plane_info<P, LY, LZ, true, CV>()          \
		             : make_plane_info<P, LY, LZ, false, CV>();        \
		return true;                                                   \
	}
	FFTD_TC_PLANE_CASE(32, 32)
	FFTD_TC_PLANE_CASE(32, 64)
	FFTD_TC_PLANE_CASE(64, 32)
	FFTD_TC_PLANE_CASE(64, 64)
	FFTD_TC_PLANE_CASE(32, 128)
	FFTD_TC_PLANE_CASE(128, 32)
#undef FFTD_TC_PLANE_CASE
	return false;
}

} // namespace fftd_tc

#endif // FFTD_KERNELS_TC_PLANE_CUH

// SPDX-License-Identifier: MIT
//
// kernels.h — PRIVATE to bench/kernels (kernels.cu, kernels_run.cu,
// kernels_report.cu): the cases, the per-algorithm results, the buffers
// shared by the run, and the timing helper. kernels.cu builds the case list
// and owns the buffers; kernels_run.cu times and checks every algorithm of
// one case; kernels_report.cu computes pass counts and floors and writes the
// table and the JSON.

#ifndef FFTD_BENCH_KERNELS_H
#define FFTD_BENCH_KERNELS_H

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x)                                                                  \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
			    #x, cudaGetErrorString(e_));                       \
			exit(1);                                               \
		}                                                              \
	} while (0)

// Points per launch: complex points for C2C, real inputs for R2C (the
// longest transforms, 1D 2^27 and 3D 512^3, run one 2^27-point transform).
static const int64_t kPoints    = (int64_t) 1 << 26;
static const int64_t kMaxPoints = (int64_t) 1 << 27; // buffers' capacity

// Relative L2 errors above these flag a result as wrong: excluded from the
// best-peer ratio and marked '!' in the table (fp16 storage rounds each
// pass to ~5e-4; fp32 to ~6e-8).
static const double kWrong16 = 1e-2;
static const double kWrong32 = 1e-5;

// One transform shape: rank 1..3, dims row-major (the last contiguous),
// batch transforms per launch; r2c: real input, dims[rank-1]/2 + 1 complex
// outputs along the last axis.
struct Case {
	int         rank;
	int64_t     dims[3];
	int64_t     batch;
	bool        r2c;
	std::string name;

	// Input elements (complex points, or reals for R2C) per transform.
	int64_t per_in() const
	{
		int64_t n = 1;
		for (int i = 0; i < rank; i++)
			n *= dims[i];
		return n;
	}
	// Complex output points per transform.
	int64_t per_out() const
	{
		return r2c
		    ? per_in() / dims[rank - 1] * (dims[rank - 1] / 2 + 1)
		    : per_in();
	}
};

struct Result {
	double      ms = NAN, err = NAN; // median ms per launch; relative L2
	bool        ok          = false; // ran (ms valid)
	bool        wrong       = false; // err above kWrong16 / kWrong32
	bool        unsupported = false; // the plan answered EUNSUPPORTED
	std::string note;                // why not ok
};

// The algorithms of a row, in table order. ..._NARROW: tc16 and split16
// with 32-byte column runs (FFTD_TC_WIDE=0), timing only.
enum {
	ALG_TC16,
	ALG_CU16,
	ALG_VK16,
	ALG_SP16,
	ALG_CU32,
	ALG_VK32,
	ALG_TC16_NARROW,
	ALG_SP16_NARROW,
	ALG_N
};

struct Row {
	Case   c;
	int    passes  = 0;   // fewest read+write passes (kernels_report.cu)
	double bytes16 = 0;   // bytes read + written by one pass, fp16
	double bytes32 = 0;   // the same, fp32
	double floor16 = NAN; // ms: passes * bytes16 / copy rate
	double floor32 = NAN;
	Result r[ALG_N];
	char   desc16[512] = "", desc32[512] = "";
};

// The run's state: device buffers (kMaxPoints complex points each, fp16 and
// fp32), the workspace, VkFFT's own input copy, the host inputs.
struct Bench {
	cudaStream_t        st    = 0;
	int                 runs  = 60;
	bool                noerr = false, quick = false;
	bool                ours = false; // --ours: tc16 and split16 alone
	void               *in16 = nullptr, *out16 = nullptr;
	void               *in32 = nullptr, *out32 = nullptr;
	void               *ws = nullptr, *vkin = nullptr;
	size_t              ws_cap = 0;
	std::vector<__half> h16; // 2 * kMaxPoints values in [-1, 1]
	std::vector<float>  h32; // the same values in fp32
	double              copy_ms = NAN, copy16_ms = NAN, copy_gbs = NAN;
	std::string         device;
	std::string         device_uuid;    // as nvidia-smi -L prints it
	int                 vk_version = 0; // 0: built without VkFFT
};

static inline float
median_of(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

// time_it runs fn() 5 times (warm-up), then runs times between two CUDA
// events on st; returns the median ms.
template <class F>
static double
time_it(F fn, cudaStream_t st, int runs)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 5; i++)
		fn();
	CK(cudaStreamSynchronize(st));
	std::vector<float> t;
	for (int i = 0; i < runs; i++) {
		CK(cudaEventRecord(a, st));
		fn();
		CK(cudaEventRecord(b, st));
		CK(cudaEventSynchronize(b));
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, a, b));
		t.push_back(ms);
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return median_of(t);
}

// kernels_run.cu: runs every algorithm of r.c (fills r.r[], r.desc*).
void bench_run_row(Bench &b, Row &r);

// The conversion table (kernels_conv.cu): f32 and int8 data through tc16
// with the conversion fused or separate, and cuFFT f32.
enum {
	CV_F32_FUSED,    // f32 -> tc16, fused conversion -> f32
	CV_F32_SEPARATE, // f32 -> conv_in -> tc16 -> conv_out -> f32
	CV_F32_CUFFT,    // cuFFT f32
	CV_I8_FUSED,     // int8 -> tc16, fused conversion -> f32
	CV_I8_SEPARATE,  // int8 -> conv_in -> tc16 -> conv_out -> f32
	CV_I8_CUFFT,     // int8 -> f32 (one kernel) -> cuFFT f32
	CV_F32_PASSES,   // CV_F32_FUSED's tc16 passes alone (exponents known)
	CV_I8_PASSES,    // CV_I8_FUSED's likewise
	CV_N
};
struct ConvRow {
	Case   c;
	int    passes    = 0;
	double floor_f32 = NAN, floor_i8 = NAN, floor_cu = NAN; // ms
	Result r[CV_N];
	char   desc[512] = "";
};
// bench_conv_case says whether a case has a conversion row.
bool bench_conv_case(const std::string &name);
void bench_conv_row(Bench &b, ConvRow &r);
void bench_conv_table(const Bench &b, const std::vector<ConvRow> &rows);
// bench_conv_json writes `, "conversion": [...]` into an open JSON object.
void bench_conv_json(FILE *f, const std::vector<ConvRow> &rows);

// kernels_report.cu: the pass count and bytes of a case (fills r.passes,
// r.bytes16, r.bytes32; the floors once b.copy_gbs is known).
void bench_floors(const Bench &b, Row &r);
// The text table on stdout.
void bench_table(const Bench &b, const std::vector<Row> &rows);
// The JSON file (the conversion rows too); 0 or -1 (errno set) when path
// cannot be written.
int bench_json(const Bench &b, const std::vector<Row> &rows,
    const std::vector<ConvRow> &conv, const char *path);

#endif // FFTD_BENCH_KERNELS_H

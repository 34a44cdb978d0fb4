// SPDX-License-Identifier: MIT
//
// kernels.cu — bench/kernels: the tensor-core FFT kernels (kernels/tc.h)
// against cuFFT on the same GPU in one run (issue 4): tc16 vs cuFFT f16 and
// split16 vs cuFFT f32, batched C2C forward, 1D N = 2^8 .. 2^27 and 2D 256^2
// .. 4096^2, 2^26 points per launch (2^27 for the one 2^27-point transform).
// Times are the median of RUNS launches (CUDA events around each, after
// warm-up); GB/s counts one read and one write of the data (the least a
// transform must move) against a device-to-device copy measured in the same
// run. Errors are relative L2 against FFTW in double precision on the same
// inputs (uniform in [-1, 1], rounded to the storage precision), over the
// first transforms of the batch (up to 2^22 points, or one transform when it
// is longer); the reference is computed once per case and precision.
// Shapes with 256- or 512-point column passes are also timed with the old
// 32-byte column runs (FFTD_TC_WIDE=0), to keep the default honest.
//
// usage: kernels [--quick] [--noerr] [--only NAMES] [out.json]
// Prints a table; writes the full results as JSON when a path is given.
// --only runs the cases named (e.g. "1D 4096" or "1D 32768,1D 134217728"),
// --noerr skips the FFTW checks (both for profiling under ncu), --quick
// takes 20 runs instead of 60.

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tc.h"

#define CK(x)                                                                  \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
			    #x, cudaGetErrorString(e_));                       \
			exit(1);                                               \
		}                                                              \
	} while (0)

static const int64_t kPoints = (int64_t) 1
    << 26; // per launch (copy bandwidth too)
static const int64_t kMaxPoints = (int64_t) 1
    << 27; // buffers: the longest transform
static int RUNS = 60;

struct Case {
	int         rank;
	int64_t     n0, n1; // 1D: n0; 2D: n0 x n1
	int64_t     batch;
	std::string name;
};

struct Result {
	double      ms = NAN, err = NAN;
	bool        ok = false;
	std::string note;
};

static float
median_ms(const std::vector<float> &v)
{
	std::vector<float> s = v;
	std::sort(s.begin(), s.end());
	return s[s.size() / 2];
}

// Times fn() RUNS times after warm-up; median in ms.
template <class F>
static double
time_it(F fn, cudaStream_t st)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 5; i++)
		fn();
	CK(cudaStreamSynchronize(st));
	std::vector<float> t;
	for (int i = 0; i < RUNS; i++) {
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
	return median_ms(t);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static double
urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double) (rng >> 11) * 0x1p-52 - 1.0;
}

// Relative L2 error of got[0..pts) against FFTW double of in2 (same shape);
// the reference is computed once and kept in *ref (reset by the caller when
// the case or the input precision changes).
static bool g_noerr = false;

static double
rel_err(const Case &c, int64_t ntr, const std::vector<double> &in2,
    const double *got2, std::vector<double> *ref)
{
	if (g_noerr)
		return NAN;
	int64_t per = c.rank == 1 ? c.n0 : c.n0 * c.n1;
	int64_t pts = per * ntr;
	if (ref->empty()) {
		fftw_complex *buf = (fftw_complex *) fftw_malloc(
		    sizeof(fftw_complex) * (size_t) pts);
		memcpy(buf, in2.data(), sizeof(double) * 2 * (size_t) pts);
		int       n[2] = { (int) c.n0, (int) c.n1 };
		fftw_plan p    = fftw_plan_many_dft(c.rank, n, (int) ntr, buf,
		       NULL, 1, (int) per, buf, NULL, 1, (int) per, FFTW_FORWARD,
		       FFTW_ESTIMATE);
		fftw_execute(p);
		fftw_destroy_plan(p);
		ref->assign(
		    (const double *) buf, (const double *) buf + 2 * pts);
		fftw_free(buf);
	}
	const double *r   = ref->data();
	double        num = 0, den = 0;
	for (int64_t i = 0; i < pts; i++) {
		double dr = got2[2 * i] - r[2 * i],
		       di = got2[2 * i + 1] - r[2 * i + 1];
		if (!std::isfinite(got2[2 * i])
		    || !std::isfinite(got2[2 * i + 1]))
			num = INFINITY;
		num += dr * dr + di * di;
		den += r[2 * i] * r[2 * i] + r[2 * i + 1] * r[2 * i + 1];
	}
	return std::sqrt(num / den);
}

// --only: a comma-separated list of case names.
static bool
selected(const char *only, const std::string &name)
{
	if (only == NULL)
		return true;
	std::string list = std::string(",") + only + ",";
	return list.find("," + name + ",") != std::string::npos;
}

int
main(int argc, char **argv)
{
	const char *json = NULL, *only = NULL;
	bool        quick = false, noerr = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--noerr"))
			noerr = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (argv[i][0] != '-')
			json = argv[i];
		else {
			fprintf(stderr,
			    "usage: kernels [--quick] [--noerr] [--only NAME] "
			    "[--json FILE]\n");
			return 2;
		}
	}
	if (quick)
		RUNS = 20;
	g_noerr  = noerr;
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "kernels: no CUDA device\n");
		return 77;
	}
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	cudaStream_t st;
	CK(cudaStreamCreate(&st));

	// Inputs: the same random data for every shape.
	std::vector<__half> h16((size_t) kMaxPoints * 2);
	std::vector<float>  h32((size_t) kMaxPoints * 2);
	for (int64_t i = 0; i < kMaxPoints * 2; i++) {
		double v = urand();
		h16[i]   = __float2half_rn((float) v);
		h32[i]   = (float) v;
	}
	void *in16, *out16, *in32, *out32, *ws = NULL;
	CK(cudaMalloc(&in16, kMaxPoints * 4));
	CK(cudaMalloc(&out16, kMaxPoints * 4));
	CK(cudaMalloc(&in32, kMaxPoints * 8));
	CK(cudaMalloc(&out32, kMaxPoints * 8));
	size_t ws_cap = kMaxPoints * 8;
	CK(cudaMalloc(&ws, ws_cap));
	CK(cudaMemcpy(
	    in16, h16.data(), kMaxPoints * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(
	    in32, h32.data(), kMaxPoints * 8, cudaMemcpyHostToDevice));

	// Copy bandwidth: bytes read + written per second, 512 MiB.
	double copy_ms = time_it(
	    [&] {
		    CK(cudaMemcpyAsync(out32, in32, kPoints * 8,
		        cudaMemcpyDeviceToDevice, st));
	    },
	    st);
	double copy_gbs  = 2.0 * kPoints * 8 / (copy_ms * 1e-3) / 1e9;
	double copy16_ms = time_it(
	    [&] {
		    CK(cudaMemcpyAsync(out16, in16, kPoints * 4,
		        cudaMemcpyDeviceToDevice, st));
	    },
	    st);

	std::vector<Case> cases;
	for (int l = 8; l <= 27; l++) {
		int64_t n = (int64_t) 1 << l;
		cases.push_back({ 1, n, 1, std::max<int64_t>(1, kPoints / n),
		    "1D " + std::to_string(n) });
	}
	for (int l = 8; l <= 12; l++) {
		int64_t n = (int64_t) 1 << l;
		cases.push_back({ 2, n, n, kPoints / (n * n),
		    "2D " + std::to_string(n) + "^2" });
	}

	struct Row {
		Case   c;
		Result tc16, cu16, sp16, cu32, tc16w,
		    sp16w; // ...w: FFTD_TC_WIDE=0 (narrow) column passes
		char desc16[512], desc32[512];
	};
	std::vector<Row> rows;

	std::vector<double> got, in_ref;
	for (const Case &c : cases) {
		if (!selected(only, c.name))
			continue;
		Row r;
		r.c         = c;
		r.desc16[0] = r.desc32[0] = 0;
		int64_t per               = c.rank == 1 ? c.n0 : c.n0 * c.n1;
		int64_t ntr = std::max<int64_t>(1, ((int64_t) 1 << 22) / per);
		ntr         = std::min(ntr, c.batch);
		if (quick)
			ntr = std::min<int64_t>(ntr,
			    std::max<int64_t>(1, ((int64_t) 1 << 20) / per));
		int64_t             pts     = per * ntr;
		int64_t             dims[2] = { c.n0, c.n1 };
		const int64_t       launch = per * c.batch; // points per launch
		std::vector<double> ref16,
		    ref32; // FFTW references, made on first use
		if (got.size() < (size_t) (2 * pts)) {
			got.resize((size_t) (2 * pts));
			in_ref.resize((size_t) (2 * pts));
		}

		// ---- fp16: tc16 and cuFFT f16
		for (int64_t i = 0; i < 2 * pts; i++)
			in_ref[i] = __half2float(h16[i]);
		{
			fftd__tc_plan *p = NULL;
			int rc = fftd__tc_plan_create(&p, FFTD__TC_TC16,
			    FFTD__TC_C2C, c.rank, dims, c.batch,
			    FFTD__TC_FORWARD);
			if (rc == FFTD__TC_OK) {
				size_t wsb = 0;
				fftd__tc_workspace_size(p, &wsb);
				fftd__tc_plan_describe(
				    p, r.desc16, sizeof r.desc16);
				CK(cudaMemset(out16, 0xff, launch * 4));
				r.tc16.ms = time_it(
				    [&] {
					    int e = fftd__tc_execute(
					        p, in16, out16, ws, st);
					    if (e != FFTD__TC_OK) {
						    fprintf(stderr,
						        "tc16 execute: %s\n",
						        fftd__tc_strerror(e));
						    exit(1);
					    }
				    },
				    st);
				CK(cudaGetLastError());
				std::vector<__half> o((size_t) pts * 2);
				CK(cudaMemcpy(o.data(), out16, pts * 4,
				    cudaMemcpyDeviceToHost));
				for (int64_t i = 0; i < 2 * pts; i++)
					got[i] = __half2float(o[i]);
				r.tc16.err = rel_err(
				    c, ntr, in_ref, got.data(), &ref16);
				r.tc16.ok = true;
				fftd__tc_plan_destroy(p);
			} else {
				r.tc16.note = fftd__tc_strerror(rc);
			}
		}
		{
			cufftHandle h;
			long long   n[2] = { c.n0, c.n1 };
			size_t      wsz  = 0;
			cufftResult cr   = cufftCreate(&h);
			if (cr == CUFFT_SUCCESS)
				cr = cufftXtMakePlanMany(h, c.rank, n, NULL, 1,
				    per, CUDA_C_16F, NULL, 1, per, CUDA_C_16F,
				    c.batch, &wsz, CUDA_C_16F);
			if (cr == CUFFT_SUCCESS)
				cr = cufftSetStream(h, st);
			if (cr == CUFFT_SUCCESS) {
				CK(cudaMemset(out16, 0xff, launch * 4));
				r.cu16.ms = time_it(
				    [&] {
					    cufftXtExec(
					        h, in16, out16, CUFFT_FORWARD);
				    },
				    st);
				std::vector<__half> o((size_t) pts * 2);
				CK(cudaMemcpy(o.data(), out16, pts * 4,
				    cudaMemcpyDeviceToHost));
				for (int64_t i = 0; i < 2 * pts; i++)
					got[i] = __half2float(o[i]);
				r.cu16.err = rel_err(
				    c, ntr, in_ref, got.data(), &ref16);
				r.cu16.ok = true;
			} else {
				r.cu16.note
				    = "cufft error " + std::to_string((int) cr);
			}
			cufftDestroy(h);
		}

		// ---- fp32: split16 and cuFFT f32
		for (int64_t i = 0; i < 2 * pts; i++)
			in_ref[i] = h32[i];
		{
			fftd__tc_plan *p = NULL;
			int rc = fftd__tc_plan_create(&p, FFTD__TC_SPLIT16,
			    FFTD__TC_C2C, c.rank, dims, c.batch,
			    FFTD__TC_FORWARD);
			if (rc == FFTD__TC_OK) {
				fftd__tc_plan_describe(
				    p, r.desc32, sizeof r.desc32);
				CK(cudaMemset(out32, 0xff, launch * 8));
				r.sp16.ms = time_it(
				    [&] {
					    int e = fftd__tc_execute(
					        p, in32, out32, ws, st);
					    if (e != FFTD__TC_OK) {
						    fprintf(stderr,
						        "split16 execute: %s\n",
						        fftd__tc_strerror(e));
						    exit(1);
					    }
				    },
				    st);
				CK(cudaGetLastError());
				std::vector<float> o((size_t) pts * 2);
				CK(cudaMemcpy(o.data(), out32, pts * 8,
				    cudaMemcpyDeviceToHost));
				for (int64_t i = 0; i < 2 * pts; i++)
					got[i] = o[i];
				r.sp16.err = rel_err(
				    c, ntr, in_ref, got.data(), &ref32);
				r.sp16.ok = true;
				fftd__tc_plan_destroy(p);
			} else {
				r.sp16.note = fftd__tc_strerror(rc);
			}
		}
		{
			cufftHandle h;
			int         n[2] = { (int) c.n0, (int) c.n1 };
			cufftResult cr
			    = cufftPlanMany(&h, c.rank, n, NULL, 1, (int) per,
			        NULL, 1, (int) per, CUFFT_C2C, (int) c.batch);
			if (cr == CUFFT_SUCCESS)
				cr = cufftSetStream(h, st);
			if (cr == CUFFT_SUCCESS) {
				CK(cudaMemset(out32, 0xff, launch * 8));
				r.cu32.ms = time_it(
				    [&] {
					    cufftExecC2C(h,
					        (cufftComplex *) in32,
					        (cufftComplex *) out32,
					        CUFFT_FORWARD);
				    },
				    st);
				std::vector<float> o((size_t) pts * 2);
				CK(cudaMemcpy(o.data(), out32, pts * 8,
				    cudaMemcpyDeviceToHost));
				for (int64_t i = 0; i < 2 * pts; i++)
					got[i] = o[i];
				r.cu32.err = rel_err(
				    c, ntr, in_ref, got.data(), &ref32);
				r.cu32.ok = true;
				cufftDestroy(h);
			} else {
				r.cu32.note
				    = "cufft error " + std::to_string((int) cr);
			}
		}
		// Column passes with 32-byte runs (FFTD_TC_WIDE=0, the old
		// default): only shapes with a column pass of 256 or 512 points
		// differ; timing only.
		bool has_short_cols = (c.rank == 2 && c.n0 <= 512)
		    || (c.rank == 1 && c.n0 > 16384
		        && c.n0 <= ((int64_t) 1 << 18));
		if (has_short_cols) {
			setenv("FFTD_TC_WIDE", "0", 1);
			for (int a = 0; a < 2; a++) {
				fftd__tc_plan *p = NULL;
				Result        &x = a == 0 ? r.tc16w : r.sp16w;
				if (fftd__tc_plan_create(&p,
				        a == 0 ? FFTD__TC_TC16
				               : FFTD__TC_SPLIT16,
				        FFTD__TC_C2C, c.rank, dims, c.batch,
				        FFTD__TC_FORWARD)
				    != FFTD__TC_OK)
					continue;
				void *i_ = a == 0 ? in16 : in32,
				     *o_ = a == 0 ? out16 : out32;
				x.ms     = time_it(
                                    [&] {
                                            fftd__tc_execute(p, i_, o_, ws, st);
                                    },
                                    st);
				x.ok = true;
				fftd__tc_plan_destroy(p);
			}
			unsetenv("FFTD_TC_WIDE");
		}
		rows.push_back(r);
		fprintf(stderr,
		    "%-10s tc16 %.4f ms (err %.2e)  cufft16 %.4f ms (err %.2e) "
		    " split16 %.4f ms (err %.2e)  cufft32 %.4f ms (err %.2e)\n",
		    c.name.c_str(), r.tc16.ms, r.tc16.err, r.cu16.ms,
		    r.cu16.err, r.sp16.ms, r.sp16.err, r.cu32.ms, r.cu32.err);
	}

	// GB/s: one read + one write of the points of a launch (2^26, or 2^27).
	auto gbs = [](double ms, int bytes, const Case &c) {
		const double pts = (double) (c.rank == 1 ? c.n0 : c.n0 * c.n1)
		    * (double) c.batch;
		return 2.0 * pts * bytes / (ms * 1e-3) / 1e9;
	};

	if (json != NULL) {
		FILE *f = fopen(json, "w");
		if (f == NULL) {
			perror(json);
			return 1;
		}
		fprintf(f,
		    "{\n  \"device\": \"%s\",\n  \"points_per_launch\": "
		    "%lld,\n  \"runs\": %d,\n",
		    prop.name, (long long) kPoints, RUNS);
		fprintf(f,
		    "  \"copy_ms_512MiB\": %.5f,\n  \"copy_gbs\": %.1f,\n  "
		    "\"copy_ms_256MiB\": %.5f,\n",
		    copy_ms, copy_gbs, copy16_ms);
		fprintf(f, "  \"cases\": [\n");
		for (size_t i = 0; i < rows.size(); i++) {
			const Row &r   = rows[i];
			auto       one = [&](const char *k, const Result &x,
                                       int bytes, bool last) {
                                char err[32]; // JSON has no NaN or inf: null
                                              // when not measured (--noerr) or
                                              // not finite
                                if (!x.ok)
                                        snprintf(err, sizeof err, "-1");
                                else if (std::isfinite(x.err))
                                        snprintf(
					          err, sizeof err, "%.4e", x.err);
                                else
                                        snprintf(err, sizeof err, "null");
                                fprintf(f,
				          "      \"%s\": {\"ok\": %s, \"ms\": %.5f, "
				                "\"gbs\": %.1f, \"rel_l2\": %s, \"note\": "
				                "\"%s\"}%s\n",
				          k, x.ok ? "true" : "false",
                                    x.ok ? x.ms : -1.0,
                                    x.ok ? gbs(x.ms, bytes, r.c) : 0.0, err,
				          x.note.c_str(), last ? "" : ",");
			};
			fprintf(f,
			    "    {\"name\": \"%s\", \"rank\": %d, \"dims\": "
			    "[%lld, %lld], \"batch\": %lld,\n",
			    r.c.name.c_str(), r.c.rank, (long long) r.c.n0,
			    (long long) r.c.n1, (long long) r.c.batch);
			fprintf(f,
			    "      \"plan_tc16\": \"%s\",\n      "
			    "\"plan_split16\": \"%s\",\n",
			    r.desc16, r.desc32);
			one("tc16", r.tc16, 4, false);
			one("cufft_f16", r.cu16, 4, false);
			one("split16", r.sp16, 8, false);
			one("cufft_f32", r.cu32, 8, false);
			one("tc16_narrow", r.tc16w, 4, false);
			one("split16_narrow", r.sp16w, 8, true);
			fprintf(f, "    }%s\n", i + 1 < rows.size() ? "," : "");
		}
		fprintf(f, "  ]\n}\n");
		fclose(f);
	}

	printf(
	    "bench/kernels on %s: 2^26 points per launch (2^27: one "
	    "transform), median of %d runs; D2D copy %.0f GB/s (read+write)\n",
	    prop.name, RUNS, copy_gbs);
	printf("%-10s | %8s %8s %5s %5s %9s %9s | %8s %8s %5s %9s %9s\n",
	    "case", "tc16 ms", "cuf16 ms", "x", "%copy", "err tc16",
	    "err cuf16", "sp16 ms", "cuf32 ms", "x", "err sp16", "err cuf32");
	for (const Row &r : rows) {
		printf("%-10s | %8.4f %8.4f %5.2f %5.0f %9.2e %9.2e | %8.4f "
		       "%8.4f %5.2f %9.2e %9.2e\n",
		    r.c.name.c_str(), r.tc16.ms, r.cu16.ms,
		    r.cu16.ms / r.tc16.ms,
		    100.0 * gbs(r.tc16.ms, 4, r.c) / copy_gbs, r.tc16.err,
		    r.cu16.err, r.sp16.ms, r.cu32.ms, r.cu32.ms / r.sp16.ms,
		    r.sp16.err, r.cu32.err);
	}
	printf(
	    "column passes with 32-byte runs (FFTD_TC_WIDE=0) instead, ms:\n");
	for (const Row &r : rows)
		if (r.tc16w.ok)
			printf("%-10s | tc16 %.4f -> %.4f | split16 %.4f -> "
			       "%.4f\n",
			    r.c.name.c_str(), r.tc16.ms, r.tc16w.ms, r.sp16.ms,
			    r.sp16w.ms);
	return 0;
}

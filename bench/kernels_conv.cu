// SPDX-License-Identifier: MIT
//
// kernels_conv.cu — bench/kernels' conversion table (issue 18 item 4): f32
// data and int8 input (radio voltages) through tc16 with the conversion
// fused into its first and last pass (kernels/tc.h, fftd__tc_execute_io,
// after fftd__conv_exponents' scan), against the separate conversion kernels
// it replaces (fftd__conv_in, the native tc16 plan, fftd__conv_out) and
// against what a user would run in-process at fp32: cuFFT f32 on the f32
// data, and on int8 data converted to f32 first (one kernel, convert.h).
// Forward, the rows of kConvCases, 2^26 points per launch like the main
// table; errors are relative L2 against FFTW in double on the same values.
//
// The floor of a fused plan: the exponent scan reads the input once, the
// first pass reads the input and writes fp16, the middle passes read and
// write fp16, the last reads fp16 and writes f32 (bytes / the copy rate of
// the run); cuFFT f32's floor is its passes at 16 bytes a point.

#include "kernels.h"
#include "convert.h"
#include "fftd_kernels.h"
#include "json.h"
#include "tc.h"

#include <cufft.h>
#include <cufftXt.h>
#include <fftw3.h>

#include <cstring>

// The rows: shapes whose tc16 plans cover one, two and three passes, 2D,
// 3D and R2C.
static const char *const kConvCases[] = { "1D 4096", "1D 65536", "1D 1048576",
	"1D 16777216", "2D 1024^2", "2D 4096^2", "3D 128^3", "3D 256^3",
	"R2C 1D 1048576", "R2C 2D 1024^2" };

bool
bench_conv_case(const std::string &name)
{
	for (const char *n : kConvCases)
		if (name == n)
			return true;
	return false;
}

// conv_error is the relative L2 error of the first ntr transforms of out
// (device, f32 complex) against FFTW in double of in (host values).
static double
conv_error(
    const Case &c, int64_t ntr, const std::vector<double> &in, const void *out)
{
	int     n[3] = { (int) c.dims[0], (int) c.dims[1], (int) c.dims[2] };
	int64_t po   = c.per_out() * ntr;
	fftw_complex *ref
	    = (fftw_complex *) fftw_malloc(sizeof(fftw_complex) * po);
	std::vector<double> tmp(in);
	fftw_plan           p = c.r2c
	              ? fftw_plan_many_dft_r2c(c.rank, n, (int) ntr, tmp.data(), NULL, 1,
	                  (int) c.per_in(), ref, NULL, 1, (int) c.per_out(),
	                  FFTW_ESTIMATE)
	              : fftw_plan_many_dft(c.rank, n, (int) ntr,
	                  (fftw_complex *) tmp.data(), NULL, 1, (int) c.per_in(), ref,
	                  NULL, 1, (int) c.per_out(), FFTW_FORWARD, FFTW_ESTIMATE);
	fftw_execute(p);
	fftw_destroy_plan(p);
	std::vector<float> got((size_t) (2 * po));
	CK(cudaMemcpy(
	    got.data(), out, (size_t) po * 8, cudaMemcpyDeviceToHost));
	const double *r   = (const double *) ref;
	double        num = 0, den = 0;
	for (int64_t i = 0; i < 2 * po; i++) {
		double d = std::isfinite(got[i]) ? got[i] - r[i] : INFINITY;
		num += d * d;
		den += r[i] * r[i];
	}
	fftw_free(ref);
	return std::sqrt(num / den);
}

static const char *const kConvKey[CV_N] = { "f32_tc16_fused",
	"f32_tc16_separate", "f32_cufft", "i8_tc16_fused", "i8_tc16_separate",
	"i8_cufft_f32", "f32_tc16_fused_passes", "i8_tc16_fused_passes" };

// i8_to_f32 converts n int8 values to float: what an in-process fp32
// pipeline runs before cuFFT.
__global__ void
i8_to_f32(const int8_t *in, float *out, int64_t n)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (int64_t) gridDim.x * blockDim.x)
		out[i] = (float) in[i];
}

void
bench_conv_row(Bench &b, ConvRow &r)
{
	const Case &c        = r.c;
	const bool  q        = c.r2c;
	int64_t     in_reals = c.per_in() * c.batch * (q ? 1 : 2),
	        out_reals    = c.per_out() * c.batch * 2;
	int64_t ntr          = std::min<int64_t>(c.batch,
            std::max<int64_t>(
                1, ((int64_t) 1 << (b.quick ? 20 : 22)) / c.per_in()));
	// int8 input: the run's values times 127, rounded (a full-range
	// voltage)
	std::vector<int8_t> h8((size_t) in_reals);
	for (int64_t i = 0; i < in_reals; i++)
		h8[i] = (int8_t) lrintf(127.0f * b.h32[i]);
	// the separate conversion's fp16 buffers (b.in16 holds the main
	// table's input)
	void *d8 = nullptr, *scr = nullptr, *cin = nullptr, *cout = nullptr;
	CK(cudaMalloc(&d8, (size_t) in_reals));
	CK(cudaMalloc(&cin, (size_t) in_reals * 2));
	CK(cudaMalloc(&cout, (size_t) out_reals * 2));
	CK(cudaMemcpy(
	    d8, h8.data(), (size_t) in_reals, cudaMemcpyHostToDevice));
	CK(cudaMalloc(&scr, fftd__conv_scratch_bytes(c.batch)));

	fftd__tc_plan *pf32 = nullptr, *pi8 = nullptr, *pn = nullptr;
	fftd__tc_type  ty = q ? FFTD__TC_R2C : FFTD__TC_C2C;
	int            rc
	    = fftd__tc_plan_create_io(&pf32, FFTD__TC_TC16, ty, c.rank, c.dims,
	        c.batch, FFTD__TC_FORWARD, FFTD__TC_IO_F32, FFTD__TC_IO_F32);
	if (rc == FFTD__TC_OK)
		rc = fftd__tc_plan_create_io(&pi8, FFTD__TC_TC16, ty, c.rank,
		    c.dims, c.batch, FFTD__TC_FORWARD, FFTD__TC_IO_I8,
		    FFTD__TC_IO_F32);
	if (rc == FFTD__TC_OK)
		rc = fftd__tc_plan_create(&pn, FFTD__TC_TC16, ty, c.rank,
		    c.dims, c.batch, FFTD__TC_FORWARD);
	size_t wf = 0, wn = 0;
	if (rc == FFTD__TC_OK) {
		fftd__tc_workspace_size(pf32, &wf);
		fftd__tc_workspace_size(pn, &wn);
		if (wf > b.ws_cap || wn > b.ws_cap)
			rc = FFTD__TC_EDEVMEM;
	}
	cufftHandle h     = 0;
	long long   n[3]  = { c.dims[0], c.dims[1], c.dims[2] };
	size_t      cws   = 0;
	bool        cu_ok = cufftCreate(&h) == CUFFT_SUCCESS
	    && cufftXtMakePlanMany(h, c.rank, n, NULL, 1, c.per_in(),
	           q ? CUDA_R_32F : CUDA_C_32F, NULL, 1, c.per_out(),
	           CUDA_C_32F, c.batch, &cws, CUDA_C_32F)
	        == CUFFT_SUCCESS
	    && cufftSetStream(h, b.st) == CUFFT_SUCCESS;
	const int   src[2] = { FFTD__KERN_F32, FFTD__KERN_I8 };
	const void *din[2] = { b.in32, d8 };
	int64_t     rin = in_reals / c.batch, rout = out_reals / c.batch;
	for (int a = 0; a < CV_N; a++) {
		Result *x = &r.r[a];
		// s 1: int8 input; k 0 fused, 1 separate, 2 cuFFT, 3 the fused
		// passes alone
		const int s
		    = a >= CV_F32_PASSES ? a - CV_F32_PASSES : a >= CV_I8_FUSED;
		const int k = a >= CV_F32_PASSES ? 3 : a - 3 * s;
		if (rc != FFTD__TC_OK && k != 2) {
			x->note = fftd__tc_strerror(rc);
			continue;
		}
		if (!cu_ok && k == 2) {
			x->note = "cufft plan error";
			continue;
		}
		if (k == 3) // the exponents, once
			fftd__conv_exponents(din[s], src[s], c.batch, rin,
			    c.per_in(), 15, scr, b.st);
		auto run = [&] {
			if (k == 3) {
				fftd__tc_execute_io(s ? pi8 : pf32, din[s],
				    b.out32, b.ws,
				    fftd__conv_exps(scr, c.batch), b.st);
			} else if (k == 0) {
				fftd__conv_exponents(din[s], src[s], c.batch,
				    rin, c.per_in(), 15, scr, b.st);
				fftd__tc_execute_io(s ? pi8 : pf32, din[s],
				    b.out32, b.ws,
				    fftd__conv_exps(scr, c.batch), b.st);
			} else if (k == 1) {
				fftd__conv_in(din[s], src[s], cin,
				    FFTD__KERN_F16, c.batch, rin, c.per_in(),
				    15, scr, b.st);
				fftd__tc_execute(pn, cin, cout, b.ws, b.st);
				fftd__conv_out(cout, FFTD__KERN_F16, b.out32,
				    FFTD__KERN_F32, c.batch, rout, scr, b.st);
			} else if (s == 0) {
				cufftXtExec(h, b.in32, b.out32, CUFFT_FORWARD);
			} else {
				// int8 to f32 (one kernel), then cuFFT f32
				i8_to_f32<<<1056, 256, 0, b.st>>>(
				    (const int8_t *) d8, (float *) b.out16,
				    in_reals);
				cufftXtExec(h, b.out16, b.out32, CUFFT_FORWARD);
			}
		};
		CK(cudaMemset(b.out32, 0xff, (size_t) out_reals * 4));
		run();
		CK(cudaStreamSynchronize(b.st));
		if (cudaGetLastError() != cudaSuccess) {
			x->note = "launch error";
			continue;
		}
		if (!b.noerr) {
			std::vector<double> v((size_t) (ntr * rin));
			for (size_t i = 0; i < v.size(); i++)
				v[i] = s ? (double) h8[i] : (double) b.h32[i];
			x->err = conv_error(c, ntr, v, b.out32);
		}
		x->ms = time_it(run, b.st, b.runs);
		x->ok = true;
	}
	if (cu_ok)
		cufftDestroy(h);
	fftd__tc_plan_describe(pf32, r.desc, sizeof r.desc);
	fftd__tc_plan_destroy(pf32);
	fftd__tc_plan_destroy(pi8);
	fftd__tc_plan_destroy(pn);
	cudaFree(d8);
	cudaFree(scr);
	cudaFree(cin);
	cudaFree(cout);
	// floors, per complex point of the computed transform (R2C: of the
	// half-length one, whose points read two reals and write about one
	// output point): see the top of the file
	double pts  = (double) (c.per_in() * c.batch) / (q ? 2 : 1);
	double ib32 = 8, ib8 = 2, ob = 8;
	int    p   = r.passes;
	double mid = p > 1 ? (p - 2) * 8.0 : 0;
	double f32b
	    = p > 1 ? ib32 + (ib32 + 4) + mid + (4 + ob) : ib32 + ib32 + ob;
	double i8b  = p > 1 ? ib8 + (ib8 + 4) + mid + (4 + ob) : ib8 + ib8 + ob;
	r.floor_f32 = pts * f32b / (b.copy_gbs * 1e9) * 1e3;
	r.floor_i8  = pts * i8b / (b.copy_gbs * 1e9) * 1e3;
	r.floor_cu  = pts * p * (ib32 + ob) / (b.copy_gbs * 1e9) * 1e3;
}

// cell prints a time with '-' for none.
static std::string
cell(const Result &x, const char *fmt)
{
	char b[32];
	if (!x.ok)
		return "-";
	snprintf(b, sizeof b, fmt, x.ms);
	return b;
}
static std::string
num(double v, const char *fmt)
{
	char b[32];
	if (!std::isfinite(v))
		return "-";
	snprintf(b, sizeof b, fmt, v);
	return b;
}

void
bench_conv_table(const Bench &b, const std::vector<ConvRow> &rows)
{
	if (rows.empty())
		return;
	printf(
	    "\nconversion (issue 18 item 4): f32 data and int8 input through "
	    "tc16, the conversion fused into its first and last pass (fused) "
	    "or in separate kernels (sep), beside cuFFT f32 (int8: converted "
	    "to f32 by one kernel first); f32 output; ms, median of %d "
	    "runs\n",
	    b.runs);
	printf("floor: the fused plan's bytes (exponent scan, passes with "
	       "f32/int8 ends) / copy rate; %%fl: floor / fused; x: other / "
	       "fused (>1: fused faster); e: rel L2 against FFTW double\n");
	printf("passes: the fused plan's tc16 passes alone (exponents "
	       "computed before)\n");
	printf("%-15s %1s | %6s %7s %4s %7s %7s %7s %5s %5s %7s %7s %7s | "
	       "%6s %7s %4s %7s %7s %7s %5s %5s %7s %7s %7s\n",
	    "size", "p", "floor", "fused", "%fl", "passes", "sep", "cuf32",
	    "x sep", "x cu", "e fused", "e sep", "e cuf32", "floor", "i8 fus",
	    "%fl", "passes", "i8 sep", "i8 cu", "x sep", "x cu", "e fused",
	    "e sep", "e cuf32");
	for (const ConvRow &r : rows) {
		const Result *x = r.r;
		printf("%-15s %1d", r.c.name.c_str(), r.passes);
		for (int s = 0; s < 2; s++) {
			const Result &f = x[3 * s], &sp = x[3 * s + 1],
			             &cu = x[3 * s + 2],
			             &pa = x[CV_F32_PASSES + s];
			double fl        = s ? r.floor_i8 : r.floor_f32;
			printf(
			    " | %6.3f %7s %4s %7s %7s %7s %5s %5s %7s %7s %7s",
			    fl, cell(f, "%.3f").c_str(),
			    num(f.ok ? 100 * fl / f.ms : NAN, "%.0f").c_str(),
			    cell(pa, "%.3f").c_str(), cell(sp, "%.3f").c_str(),
			    cell(cu, "%.3f").c_str(),
			    num(f.ok && sp.ok ? sp.ms / f.ms : NAN, "%.2f")
			        .c_str(),
			    num(f.ok && cu.ok ? cu.ms / f.ms : NAN, "%.2f")
			        .c_str(),
			    num(f.err, "%.1e").c_str(),
			    num(sp.err, "%.1e").c_str(),
			    num(cu.err, "%.1e").c_str());
		}
		printf("\n");
	}
}

void
bench_conv_json(FILE *f, const std::vector<ConvRow> &rows)
{
	fprintf(f, ",\n  \"conversion\": [");
	for (size_t i = 0; i < rows.size(); i++) {
		const ConvRow &r = rows[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		bench_json_str(f, r.c.name.c_str());
		fprintf(f, ", \"passes\": %d", r.passes);
		bench_json_field(f, "floor_f32_fused_ms", r.floor_f32);
		bench_json_field(f, "floor_i8_fused_ms", r.floor_i8);
		bench_json_field(f, "floor_cufft_f32_ms", r.floor_cu);
		fprintf(f, ", \"plan_f32_fused\": ");
		bench_json_str(f, r.desc);
		for (int a = 0; a < CV_N; a++) {
			const Result &x = r.r[a];
			fprintf(f, ",\n      \"%s\": {\"ok\": %s", kConvKey[a],
			    x.ok ? "true" : "false");
			bench_json_field(f, "ms", x.ok ? x.ms : NAN);
			bench_json_field(f, "rel_l2", x.err);
			fprintf(f, ", \"note\": ");
			bench_json_str(f, x.note.c_str());
			fprintf(f, "}");
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]");
}

// SPDX-License-Identifier: MIT
//
// kernels_run.cu — bench/kernels' runners: one case through every algorithm
// of its row (tc16, cuFFT f16, VkFFT f16; split16, cuFFT f32, VkFFT f32; the
// narrow-column variants of tc16 and split16), each timed as the median of
// b.runs launches on one stream and checked against FFTW in double precision
// on the same inputs. Outputs are poisoned (all bits set: NaN in fp16 and
// fp32) before each algorithm runs, so a transform that writes nothing
// fails its check. A plan that answers FFTD__TC_EUNSUPPORTED (tc16/split16
// 3D and R2C until the kernels serve them) leaves an "unsupported" cell and
// the peers are still timed.

#include "kernels.h"
#include "kernels_vkfft.h"
#include "tc.h"

#include <cufft.h>
#include <cufftXt.h>
#include <fftw3.h>

#include <cstring>

// Transforms checked per case: up to 2^22 input points (one transform when
// it is longer; 2^20 with --quick).
static int64_t
checked_transforms(const Bench &b, const Case &c)
{
	int64_t per = c.per_in();
	int64_t cap = b.quick ? (int64_t) 1 << 20 : (int64_t) 1 << 22;
	int64_t ntr = std::max<int64_t>(1, cap / per);
	return std::min(ntr, c.batch);
}

// fftw_reference fills *ref with FFTW's forward transform (double) of the
// first ntr transforms of in (complex pairs, or reals for R2C): ntr *
// per_out complex points as (re, im) pairs.
static void
fftw_reference(const Case &c, int64_t ntr, const std::vector<double> &in,
    std::vector<double> *ref)
{
	int     n[3]   = { (int) c.dims[0], (int) c.dims[1], (int) c.dims[2] };
	int64_t per_in = c.per_in(), per_out = c.per_out();
	int64_t pts_out = per_out * ntr;
	fftw_complex *out
	    = (fftw_complex *) fftw_malloc(sizeof(fftw_complex) * pts_out);
	fftw_plan p;
	if (c.r2c) {
		double *rin = (double *) fftw_malloc(
		    sizeof(double) * (size_t) (per_in * ntr));
		p = fftw_plan_many_dft_r2c(c.rank, n, (int) ntr, rin, NULL, 1,
		    (int) per_in, out, NULL, 1, (int) per_out, FFTW_ESTIMATE);
		memcpy(
		    rin, in.data(), sizeof(double) * (size_t) (per_in * ntr));
		fftw_execute(p);
		fftw_free(rin);
	} else {
		p = fftw_plan_many_dft(c.rank, n, (int) ntr, out, NULL, 1,
		    (int) per_in, out, NULL, 1, (int) per_in, FFTW_FORWARD,
		    FFTW_ESTIMATE);
		memcpy(out, in.data(), sizeof(double) * 2 * (size_t) pts_out);
		fftw_execute(p);
	}
	fftw_destroy_plan(p);
	ref->assign((const double *) out, (const double *) out + 2 * pts_out);
	fftw_free(out);
}

// The inputs and FFTW reference of one case in one precision.
struct Check {
	int64_t             ntr = 0;
	std::vector<double> in, ref; // ref made on first use
};

// check copies the first ntr transforms' output from out (device; fp16 or
// fp32 complex) and stores their relative L2 error against FFTW in x->err;
// x->wrong when it is above the precision's bound or not finite.
static void
check(const Bench &b, const Case &c, Check &k, const void *out, bool half,
    Result *x)
{
	if (b.noerr)
		return;
	if (k.ref.empty())
		fftw_reference(c, k.ntr, k.in, &k.ref);
	int64_t             pts = c.per_out() * k.ntr;
	std::vector<double> got((size_t) (2 * pts));
	if (half) {
		std::vector<__half> o((size_t) (2 * pts));
		CK(cudaMemcpy(o.data(), out, pts * 4, cudaMemcpyDeviceToHost));
		for (int64_t i = 0; i < 2 * pts; i++)
			got[i] = __half2float(o[i]);
	} else {
		std::vector<float> o((size_t) (2 * pts));
		CK(cudaMemcpy(o.data(), out, pts * 8, cudaMemcpyDeviceToHost));
		for (int64_t i = 0; i < 2 * pts; i++)
			got[i] = o[i];
	}
	const double *r   = k.ref.data();
	double        num = 0, den = 0;
	for (int64_t i = 0; i < 2 * pts; i++) {
		if (!std::isfinite(got[i]))
			num = INFINITY;
		num += (got[i] - r[i]) * (got[i] - r[i]);
		den += r[i] * r[i];
	}
	x->err   = std::sqrt(num / den);
	x->wrong = !(x->err <= (half ? kWrong16 : kWrong32));
}

// Bytes of one launch's input and output in storage precision.
static size_t
in_bytes(const Case &c, bool half)
{
	return (size_t) (c.per_in() * c.batch) * (half ? 2 : 4)
	    * (c.r2c ? 1 : 2);
}
static size_t
out_bytes(const Case &c, bool half)
{
	return (size_t) (c.per_out() * c.batch) * (half ? 4 : 8);
}

// run_tc times fftd's tc16 (half) or split16 on the case; check == NULL:
// timing only.
static void
run_tc(Bench &b, const Case &c, bool half, Check *k, Result *x, char *desc,
    size_t dlen)
{
	fftd__tc_plan *p = NULL;
	void *in = half ? b.in16 : b.in32, *out = half ? b.out16 : b.out32;
	int   rc
	    = fftd__tc_plan_create(&p, half ? FFTD__TC_TC16 : FFTD__TC_SPLIT16,
	        c.r2c ? FFTD__TC_R2C : FFTD__TC_C2C, c.rank, c.dims, c.batch,
	        FFTD__TC_FORWARD);
	if (rc == FFTD__TC_EUNSUPPORTED) {
		x->unsupported = true;
		x->note        = "unsupported";
		return;
	}
	if (rc != FFTD__TC_OK) {
		x->note = fftd__tc_strerror(rc);
		return;
	}
	size_t wsb = 0;
	fftd__tc_workspace_size(p, &wsb);
	if (wsb > b.ws_cap) {
		x->note = "workspace larger than the bench's";
		fftd__tc_plan_destroy(p);
		return;
	}
	if (desc != NULL)
		fftd__tc_plan_describe(p, desc, dlen);
	CK(cudaMemset(out, 0xff, out_bytes(c, half)));
	rc = fftd__tc_execute(p, in, out, b.ws, b.st);
	CK(cudaStreamSynchronize(b.st));
	if (rc != FFTD__TC_OK) {
		x->note = std::string("execute: ") + fftd__tc_strerror(rc);
		fftd__tc_plan_destroy(p);
		return;
	}
	if (k != NULL)
		check(b, c, *k, out, half, x);
	x->ms = time_it(
	    [&] { fftd__tc_execute(p, in, out, b.ws, b.st); }, b.st, b.runs);
	CK(cudaGetLastError());
	x->ok = true;
	fftd__tc_plan_destroy(p);
}

// run_cufft times cuFFT f16 (cufftXt, CUDA_R/C_16F) or f32 on the case.
static void
run_cufft(Bench &b, const Case &c, bool half, Check &k, Result *x)
{
	void *in = half ? b.in16 : b.in32, *out = half ? b.out16 : b.out32;
	cufftHandle h;
	long long   n[3] = { c.dims[0], c.dims[1], c.dims[2] };
	size_t      wsz  = 0;
	cufftResult cr   = cufftCreate(&h);
	if (cr != CUFFT_SUCCESS) {
		x->note = "cufftCreate error " + std::to_string((int) cr);
		return;
	}
	cudaDataType it = half ? (c.r2c ? CUDA_R_16F : CUDA_C_16F)
	                       : (c.r2c ? CUDA_R_32F : CUDA_C_32F);
	cudaDataType ot = half ? CUDA_C_16F : CUDA_C_32F;
	cr = cufftXtMakePlanMany(h, c.rank, n, NULL, 1, c.per_in(), it, NULL, 1,
	    c.per_out(), ot, c.batch, &wsz, ot);
	if (cr == CUFFT_SUCCESS)
		cr = cufftSetStream(h, b.st);
	if (cr == CUFFT_SUCCESS) {
		CK(cudaMemset(out, 0xff, out_bytes(c, half)));
		cr = cufftXtExec(h, in, out, CUFFT_FORWARD);
		CK(cudaStreamSynchronize(b.st));
	}
	if (cr != CUFFT_SUCCESS) {
		x->note = "cufft error " + std::to_string((int) cr);
		cufftDestroy(h);
		return;
	}
	check(b, c, k, out, half, x);
	x->ms = time_it(
	    [&] { cufftXtExec(h, in, out, CUFFT_FORWARD); }, b.st, b.runs);
	x->ok = true;
	cufftDestroy(h);
}

// run_vkfft times VkFFT on the case, reading a copy of the input (b.vkin),
// then checks one launch from a fresh copy into a poisoned output.
static void
run_vkfft(Bench &b, const Case &c, bool half, Check &k, Result *x)
{
	if (b.vk_version == 0) {
		x->note = "not built";
		return;
	}
	void *in = half ? b.in16 : b.in32, *out = half ? b.out16 : b.out32;
	char  msg[256];
	CK(cudaMemcpy(b.vkin, in, in_bytes(c, half), cudaMemcpyDeviceToDevice));
	bench_vk *p = NULL;
	if (bench_vk_plan(&p, c.rank, c.dims, c.batch, c.r2c, half, b.vkin, out,
	        b.st, msg, sizeof msg)
	    != 0) {
		x->note = msg;
		return;
	}
	double ms = -1;
	if (bench_vk_time(p, b.runs, &ms, msg, sizeof msg) != 0) {
		x->note = msg;
		bench_vk_destroy(p);
		return;
	}
	CK(cudaMemcpy(b.vkin, in, in_bytes(c, half), cudaMemcpyDeviceToDevice));
	CK(cudaMemset(out, 0xff, out_bytes(c, half)));
	if (bench_vk_exec(p, msg, sizeof msg) != 0) {
		x->note = msg;
		bench_vk_destroy(p);
		return;
	}
	check(b, c, k, out, half, x);
	x->ms = ms;
	x->ok = true;
	bench_vk_destroy(p);
}

// Shapes with column passes of 256 or 512 points (C2C only): timed again
// with 32-byte column runs (FFTD_TC_WIDE=0), to keep the default honest.
static bool
has_short_cols(const Case &c)
{
	if (c.r2c)
		return false;
	return (c.rank == 2 && c.dims[0] <= 512)
	    || (c.rank == 1 && c.dims[0] > 16384
	        && c.dims[0] <= ((int64_t) 1 << 18));
}

void
bench_run_row(Bench &b, Row &r)
{
	const Case &c = r.c;
	Check       k;
	k.ntr      = checked_transforms(b, c);
	size_t nin = (size_t) (c.per_in() * k.ntr) * (c.r2c ? 1 : 2);
	if (!b.noerr)
		k.in.resize(nin);

	// ---- fp16 storage: tc16, cuFFT f16, VkFFT f16
	for (size_t i = 0; i < k.in.size(); i++)
		k.in[i] = __half2float(b.h16[i]);
	run_tc(b, c, true, &k, &r.r[ALG_TC16], r.desc16, sizeof r.desc16);
	if (!b.ours) { // peers left "-" without a note (not listed)
		run_cufft(b, c, true, k, &r.r[ALG_CU16]);
		run_vkfft(b, c, true, k, &r.r[ALG_VK16]);
	}

	// ---- fp32: split16, cuFFT f32, VkFFT f32
	k.ref.clear();
	for (size_t i = 0; i < k.in.size(); i++)
		k.in[i] = b.h32[i];
	run_tc(b, c, false, &k, &r.r[ALG_SP16], r.desc32, sizeof r.desc32);
	if (!b.ours) {
		run_cufft(b, c, false, k, &r.r[ALG_CU32]);
		run_vkfft(b, c, false, k, &r.r[ALG_VK32]);
	}

	if (!b.ours && has_short_cols(c)) {
		setenv("FFTD_TC_WIDE", "0", 1);
		run_tc(b, c, true, NULL, &r.r[ALG_TC16_NARROW], NULL, 0);
		run_tc(b, c, false, NULL, &r.r[ALG_SP16_NARROW], NULL, 0);
		unsetenv("FFTD_TC_WIDE");
	}
}

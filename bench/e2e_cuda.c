// SPDX-License-Identifier: MIT
//
// e2e_cuda.c — bench/e2e's in-process baselines (a)-(c) (see e2e.h): the
// duplex PCIe copy bound, cuFFT on one stream and cuFFT on 16 streams,
// timed with CUDA events; without CUDA, stubs that report no GPU.

#include "e2e.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#endif

#ifdef FFTD_WITH_CUDA

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			snprintf(err, sizeof(err), "%s: %s", #call,            \
			    cudaGetErrorString(e_));                           \
			goto fail;                                             \
		}                                                              \
	} while (0)

#define CKF(call)                                                              \
	do {                                                                   \
		cufftResult r_ = (call);                                       \
		if (r_ != CUFFT_SUCCESS) {                                     \
			snprintf(err, sizeof(err), "%s: cufftResult %d",       \
			    #call, (int) r_);                                  \
			goto fail;                                             \
		}                                                              \
	} while (0)

// e2e_gpu_detect finds GPU 0 and makes its context; 0 (with
// B->no_gpu_why) when there is none.
int
e2e_gpu_detect(bench *B)
{
	int         n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		snprintf(B->no_gpu_why, sizeof(B->no_gpu_why), "no GPU: %s",
		    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		(void) cudaGetLastError();
		return 0;
	}
	struct cudaDeviceProp p;
	if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
		snprintf(B->gpu_name, sizeof(B->gpu_name), "%.120s", p.name);
	}
	return cudaSetDevice(0) == cudaSuccess && cudaFree(0) == cudaSuccess;
}

// make_cufft_plan makes the in-process cuFFT plan of batch
// transforms of a case; 0 or a cufftResult.
static int
make_cufft_plan(const bcase *c, int64_t batch, cufftHandle *h)
{
	long long    n = c->n;
	size_t       ws;
	cudaDataType it, ot, et;
	if (c->prec == FFTD_F16) {
		it = ot = et = CUDA_C_16F;
	} else if (c->kind == FFTD_R2C) {
		it = CUDA_R_32F;
		ot = et = CUDA_C_32F;
	} else {
		it = ot = et = CUDA_C_32F;
	}
	cufftResult r = cufftCreate(h);
	if (r != CUFFT_SUCCESS) {
		return (int) r;
	}
	r = cufftXtMakePlanMany(*h, 1, &n, NULL, 1, 0, it, NULL, 1, 0, ot,
	    (long long) batch, &ws, et);
	if (r != CUFFT_SUCCESS) {
		cufftDestroy(*h);
		return (int) r;
	}
	return 0;
}

// e2e_run_inproc measures (a), (b), (c) for one case with the input src; the
// output of (b) is left in out_b (host, may be NULL).
void
e2e_run_inproc(bench *B, case_result *R, const void *src, void *out_b)
{
	const bcase *c   = R->c;
	size_t       inb = R->in_bytes, outb = R->out_bytes;
	char         err[300];
	void        *hin = NULL, *hout = NULL, *din = NULL, *dout = NULL;
	cudaStream_t s[INPROC_STREAMS + 1]  = { 0 };
	cudaEvent_t  ev[INPROC_STREAMS + 2] = { 0 };
	cufftHandle  plan[INPROC_STREAMS];
	int          nplans = 0;
	int          nwarm  = 2;
	meas        *cur    = &R->a;

	CK(cudaHostAlloc(&hin, inb, cudaHostAllocDefault));
	CK(cudaHostAlloc(&hout, outb, cudaHostAllocDefault));
	CK(cudaMalloc(&din, inb));
	CK(cudaMalloc(&dout, outb));
	memcpy(hin, src, inb);
	memset(hout, 0, outb);
	for (int i = 0; i <= INPROC_STREAMS; i++) {
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	}
	for (int i = 0; i < INPROC_STREAMS + 2; i++) {
		CK(cudaEventCreate(&ev[i]));
	}
	cudaEvent_t  e0 = ev[INPROC_STREAMS], e1 = ev[INPROC_STREAMS + 1];
	cudaStream_t sm = s[INPROC_STREAMS]; // timing stream

	// (a) duplex: H2D on s[0], D2H on s[1], both from/to pinned memory;
	// also each direction alone.
	for (int which = 0; which < 3; which++) {
		meas *m = which == 0 ? &R->a
		    : which == 1     ? &R->a_h2d
		                     : &R->a_d2h;
		cur     = m;
		// more warm-up for the first copies from a fresh pinned
		// allocation (the first case's duplex figure was 45 GB/s
		// against 50 for the others on the H200 with 2)
		for (int r = -(which == 0 ? 5 : nwarm); r < B->reps; r++) {
			CK(cudaEventRecord(e0, sm));
			CK(cudaStreamWaitEvent(s[0], e0, 0));
			CK(cudaStreamWaitEvent(s[1], e0, 0));
			if (which != 2) {
				CK(cudaMemcpyAsync(din, hin, inb,
				    cudaMemcpyHostToDevice, s[0]));
			}
			if (which != 1) {
				CK(cudaMemcpyAsync(hout, dout, outb,
				    cudaMemcpyDeviceToHost, s[1]));
			}
			CK(cudaEventRecord(ev[0], s[0]));
			CK(cudaEventRecord(ev[1], s[1]));
			CK(cudaStreamWaitEvent(sm, ev[0], 0));
			CK(cudaStreamWaitEvent(sm, ev[1], 0));
			CK(cudaEventRecord(e1, sm));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				m->s[m->nrep++] = ms * 1e-3;
			}
		}
		// the bound is in input bytes/s; H2D alone and D2H alone in
		// the bytes each moves
		e2e_meas_finish(m, which == 2 ? outb : inb);
	}
	e2e_meas_print("(a) pinned H2D+D2H at once", &R->a);
	e2e_meas_print("    H2D alone (input bytes)", &R->a_h2d);
	e2e_meas_print("    D2H alone (output bytes)", &R->a_d2h);

	// (b) one stream, one plan over the whole batch
	cur = &R->b;
	{
		int rv = make_cufft_plan(c, R->batch, &plan[0]);
		if (rv != 0) {
			snprintf(err, sizeof(err),
			    "cufftXtMakePlanMany (batch %" PRId64
			    "): cufftResult %d",
			    R->batch, rv);
			goto fail;
		}
		nplans = 1;
		CKF(cufftSetStream(plan[0], s[0]));
		for (int r = -nwarm; r < B->reps; r++) {
			CK(cudaEventRecord(e0, s[0]));
			CK(cudaMemcpyAsync(
			    din, hin, inb, cudaMemcpyHostToDevice, s[0]));
			CKF(cufftXtExec(plan[0], din, dout, CUFFT_FORWARD));
			CK(cudaMemcpyAsync(
			    hout, dout, outb, cudaMemcpyDeviceToHost, s[0]));
			CK(cudaEventRecord(e1, s[0]));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				R->b.s[R->b.nrep++] = ms * 1e-3;
			}
		}
		e2e_meas_finish(&R->b, inb);
		if (out_b != NULL) {
			memcpy(out_b, hout, outb);
		}
		cufftDestroy(plan[0]);
		nplans = 0;
	}
	e2e_meas_print("(b) cuFFT 1 stream H2D+FFT+D2H", &R->b);

	// (c) the batch in K chunks over K streams, one plan per stream
	cur = &R->c16;
	{
		int64_t K
		    = R->batch < INPROC_STREAMS ? R->batch : INPROC_STREAMS;
		int64_t chunk  = (R->batch + K - 1) / K;
		K              = (R->batch + chunk - 1) / chunk;
		R->c16_streams = (int) K;
		size_t inper = e2e_case_in_per(c), outper = e2e_case_out_per(c);
		for (int64_t k = 0; k < K; k++) {
			int64_t nb = k == K - 1 ? R->batch - chunk * k : chunk;
			int     rv = make_cufft_plan(c, nb, &plan[k]);
			if (rv != 0) {
				snprintf(err, sizeof(err),
				    "cufftXtMakePlanMany (batch %" PRId64
				    "): cufftResult %d",
				    nb, rv);
				goto fail;
			}
			nplans++;
			CKF(cufftSetStream(plan[k], s[k]));
		}
		for (int r = -nwarm; r < B->reps; r++) {
			CK(cudaEventRecord(e0, sm));
			for (int64_t k = 0; k < K; k++) {
				int64_t nb
				    = k == K - 1 ? R->batch - chunk * k : chunk;
				size_t io = (size_t) (chunk * k) * inper;
				size_t oo = (size_t) (chunk * k) * outper;
				CK(cudaStreamWaitEvent(s[k], e0, 0));
				CK(cudaMemcpyAsync((char *) din + io,
				    (char *) hin + io, (size_t) nb * inper,
				    cudaMemcpyHostToDevice, s[k]));
				CKF(cufftXtExec(plan[k], (char *) din + io,
				    (char *) dout + oo, CUFFT_FORWARD));
				CK(cudaMemcpyAsync((char *) hout + oo,
				    (char *) dout + oo, (size_t) nb * outper,
				    cudaMemcpyDeviceToHost, s[k]));
				CK(cudaEventRecord(ev[k], s[k]));
			}
			for (int64_t k = 0; k < K; k++) {
				CK(cudaStreamWaitEvent(sm, ev[k], 0));
			}
			CK(cudaEventRecord(e1, sm));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				R->c16.s[R->c16.nrep++] = ms * 1e-3;
			}
		}
		e2e_meas_finish(&R->c16, inb);
	}
	{
		char lab[64];
		snprintf(
		    lab, sizeof(lab), "(c) cuFFT %d streams", R->c16_streams);
		e2e_meas_print(lab, &R->c16);
	}
	goto cleanup;

fail:
	e2e_meas_set(cur, -2, "failed: %s", err);
	e2e_meas_print("(a)-(c) in-process", cur);
	(void) cudaGetLastError();
cleanup:
	(void) cudaDeviceSynchronize();
	for (int i = 0; i < nplans; i++) {
		cufftDestroy(plan[i]);
	}
	for (int i = 0; i <= INPROC_STREAMS; i++) {
		if (s[i] != NULL) {
			cudaStreamDestroy(s[i]);
		}
	}
	for (int i = 0; i < INPROC_STREAMS + 2; i++) {
		if (ev[i] != NULL) {
			cudaEventDestroy(ev[i]);
		}
	}
	cudaFreeHost(hin);
	cudaFreeHost(hout);
	cudaFree(din);
	cudaFree(dout);
	(void) cudaGetLastError();
}

#else // !FFTD_WITH_CUDA

// e2e_gpu_detect: built without CUDA, there is no GPU.
int
e2e_gpu_detect(bench *B)
{
	snprintf(
	    B->no_gpu_why, sizeof(B->no_gpu_why), "no GPU: built without CUDA");
	return 0;
}

// e2e_run_inproc: built without CUDA, (a)-(c) are not run.
void
e2e_run_inproc(bench *B, case_result *R, const void *src, void *out_b)
{
	(void) B;
	(void) R;
	(void) src;
	(void) out_b;
}

#endif

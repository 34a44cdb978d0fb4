// SPDX-License-Identifier: MIT
//
// cuda_measure.c — the cuda backend's measure (backend.h), for the speed
// table of accuracy-aware "auto" (daemon/algo_pick.c): one execution of a
// plan timed on the device with scratch data, conversions included. It
// runs on the device's planner thread, beside the worker's executions, so
// it uses nothing of theirs: its own stream, its own unit (a cuFFT handle
// bound to that stream with its own workspace; a tc plan is only read, so
// the plan's is borrowed), its own input and output, all counted against
// the budget and freed before it returns. Time between CUDA events: one
// run to warm up, then the median of 5.

#include <cuda_runtime.h>
#include <string.h>

#include "algo_table.h"
#include "cuda_impl.h"
#include "errmsg.h"

#define RUNS 6

// fftd__cuda_measure times one execution of plan (shape s) on this device
// and stores the median in *ns.
int
fftd__cuda_measure(fftd__device *dev, void *plan, const fftd__shape *s,
    uint64_t *ns, char *msg, size_t msglen)
{
	fftd__cuda_state *st     = dev->state;
	fftd__cuda_plan  *p      = plan;
	cudaStream_t      stream = NULL;
	cudaEvent_t       ev[RUNS + 1];
	int               nev = 0;
	fftd__cuda_unit   u;
	void             *din = NULL, *dout = NULL;
	uint64_t          io       = s->in.bytes + s->out.bytes;
	bool              reserved = false;
	cudaError_t       e;
	int               rv;

	memset(&u, 0, sizeof(u));
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking))
	    != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaStreamCreate", msg, msglen);
	}
	rv = fftd__cuda_make_unit(st, p, &p->cshape, s->batch, stream,
	    p->main.is_tc ? p->main.tc : NULL, &u, msg, msglen);
	if (rv != FFTD_OK) {
		goto out;
	}
	rv = fftd__cuda_reserve_plan_bytes(
	    st, io, "scratch data for timing a plan", msg, msglen);
	if (rv != FFTD_OK) {
		goto out;
	}
	reserved = true;
	if ((e = cudaMalloc(&din, (size_t) s->in.bytes)) != cudaSuccess
	    || (e = cudaMalloc(&dout, (size_t) s->out.bytes)) != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaMalloc (timing)", msg, msglen);
		goto out;
	}
	// Zeros: every algorithm runs at the same speed on any finite data.
	if ((e = cudaMemsetAsync(din, 0, (size_t) s->in.bytes, stream))
	    != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaMemsetAsync", msg, msglen);
		goto out;
	}
	for (nev = 0; nev < RUNS + 1; nev++) {
		if ((e = cudaEventCreate(&ev[nev])) != cudaSuccess) {
			rv = fftd__cuda_fail(e, "cudaEventCreate", msg, msglen);
			goto out;
		}
	}
	for (int k = 0; k < RUNS && rv == FFTD_OK; k++) {
		(void) cudaEventRecord(ev[k], stream);
		rv = fftd__cuda_dev_transform(
		    stream, p, &u, s, din, dout, msg, msglen);
	}
	(void) cudaEventRecord(ev[RUNS], stream);
	if ((e = cudaStreamSynchronize(stream)) != cudaSuccess
	    && rv == FFTD_OK) {
		rv = fftd__cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
	}
	if (rv == FFTD_OK) {
		uint64_t t[RUNS - 1];
		for (int k = 1; k < RUNS; k++) {
			float ms = 0;
			(void) cudaEventElapsedTime(&ms, ev[k], ev[k + 1]);
			t[k - 1] = (uint64_t) ((double) ms * 1e6);
		}
		*ns = fftd__median_ns(t, RUNS - 1);
		if (*ns == 0) {
			*ns = 1;
		}
	}
out:
	if (stream != NULL) {
		(void) cudaStreamSynchronize(stream);
	}
	for (int k = 0; k < nev; k++) {
		(void) cudaEventDestroy(ev[k]);
	}
	if (din != NULL) {
		(void) cudaFree(din);
	}
	if (dout != NULL) {
		(void) cudaFree(dout);
	}
	if (reserved) {
		fftd__cuda_release_plan_bytes(st, io);
	}
	if (u.made) {
		// The unit's own bytes: as unit_free does, but the tc plan is
		// borrowed (tc_owned false) and stays the plan's.
		if (!u.is_tc) {
			(void) cufftDestroy(u.handle);
		}
		if (u.work != NULL) {
			(void) cudaFree(u.work);
		}
		fftd__cuda_conv_free(&u);
		fftd__cuda_release_plan_bytes(st, u.held);
	}
	if (stream != NULL) {
		(void) cudaStreamDestroy(stream);
	}
	return rv;
}

// SPDX-License-Identifier: MIT
//
// cuda_exec.c — the cuda backend's execution on one stream: a unit's FFT
// (cuFFT call or tc kernels), the device-side transform around it (zeroing
// the output's gaps, the FFT, the scale pass), which the pipeline
// (cuda_pipeline.c) runs per chunk too, and a whole request on the
// worker's request stream with its copies in and out. Buffers come from
// cuda_memory.c; choosing this path or the pipeline is cuda_device.c's.

#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <stddef.h>
#include <string.h>

#include "backend_util.h"
#include "errmsg.h"
#include "cuda_impl.h"
#include "fftd_kernels.h"
#include "tc.h"

// exec_fft runs the plan's cuFFT call on device buffers.
static int
exec_fft(const fftd__cuda_plan *p, cufftHandle h, void *din, void *dout,
    char *msg, size_t msglen)
{
	cufftResult r;
	const char *call;
	if (p->prec == FFTD_F16) {
		call = "cufftXtExec";
		r    = cufftXtExec(h, din, dout, p->direction);
	} else if (p->prec == FFTD_F64) {
		switch (p->kind) {
		case FFTD_C2C:
			call = "cufftExecZ2Z";
			r    = cufftExecZ2Z(h, din, dout, p->direction);
			break;
		case FFTD_R2C:
			call = "cufftExecD2Z";
			r    = cufftExecD2Z(h, din, dout);
			break;
		default:
			call = "cufftExecZ2D";
			r    = cufftExecZ2D(h, din, dout);
			break;
		}
	} else {
		switch (p->kind) {
		case FFTD_C2C:
			call = "cufftExecC2C";
			r    = cufftExecC2C(h, din, dout, p->direction);
			break;
		case FFTD_R2C:
			call = "cufftExecR2C";
			r    = cufftExecR2C(h, din, dout);
			break;
		default:
			call = "cufftExecC2R";
			r    = cufftExecC2R(h, din, dout);
			break;
		}
	}
	if (r != CUFFT_SUCCESS) {
		return fftd__cufft_fail(r, call, msg, msglen);
	}
	return FFTD_OK;
}

// fftd__cuda_exec_unit enqueues unit u's transform of din into dout on stream.
// A cuFFT handle was bound to this same stream when it was made; a tc plan
// takes it here, with the unit's own workspace (used on no other stream).
int
fftd__cuda_exec_unit(const fftd__cuda_plan *p, const fftd__cuda_unit *u,
    cudaStream_t stream, void *din, void *dout, char *msg, size_t msglen)
{
	if (u->is_tc) {
		int rc = fftd__tc_execute(u->tc, din, dout, u->work, stream);
		if (rc != FFTD__TC_OK) {
			return fftd__cuda_tc_fail(
			    rc, "fftd__tc_execute", msg, msglen);
		}
		return FFTD_OK;
	}
	return exec_fft(p, u->handle, din, dout, msg, msglen);
}

// scale_out enqueues the norm's scale pass over dout's whole extent (its
// gaps are zero and stay zero), when the norm has one.
static int
scale_out(cudaStream_t stream, const fftd__shape *s, void *dout, char *msg,
    size_t msglen)
{
	double f = fftd__norm_factor(s);
	if (f == 1.0) {
		return FFTD_OK;
	}
	cudaError_t e = (cudaError_t) fftd__kern_scale(
	    dout, (int) s->precision, fftd__out_reals(s), f, stream);
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "fftd__kern_scale", msg, msglen);
	}
	return FFTD_OK;
}

// fftd__cuda_conv_transform enqueues a converted plan's (cuda_convert.c)
// transform of din (the data's precision) into dout: the scaled conversion into
// the unit's input buffer, the algorithm's transform into its output buffer,
// the unscaled conversion back into dout, and the norm's scale pass there.
int
fftd__cuda_conv_transform(cudaStream_t stream, const fftd__cuda_plan *p,
    const fftd__cuda_unit *u, const fftd__shape *s, void *din, void *dout,
    char *msg, size_t msglen)
{
	const fftd__shape *cs     = &p->cshape;
	int                target = fftd__cuda_conv_target(p);
	if (target < 0 || u->cbuf == NULL || s->batch != cs->batch) {
		return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
		    "converted plan without its conversion");
	}
	void *cin, *cout, *scr;
	fftd__cuda_conv_bufs(p, u, &cin, &cout, &scr);
	int64_t ntr  = s->batch;
	int64_t rin  = s->in.elems * (s->in.complex ? 2 : 1) / ntr;
	int64_t rout = s->out.elems * (s->out.complex ? 2 : 1) / ntr;
	int     src
	    = s->input == FFTD_INPUT_I8 ? FFTD__KERN_I8 : (int) s->precision;
	int rc;
	if (fftd__cuda_conv_fused(p, NULL, NULL)) {
		// tc16 converts in its first and last pass (kernels/tc_io.cuh):
		// only the exponents come first. din and dout never overlap
		// here (separate request buffers; arrays run out of place).
		rc = fftd__conv_exponents(
		    din, src, ntr, rin, s->total, target, scr, stream);
		if (rc != 0) {
			return fftd__cuda_fail((cudaError_t) rc,
			    "fftd__conv_exponents", msg, msglen);
		}
		rc = fftd__tc_execute_io(u->tc, din, dout, u->work,
		    fftd__conv_exps(scr, ntr), stream);
		if (rc != FFTD__TC_OK) {
			return fftd__cuda_tc_fail(
			    rc, "fftd__tc_execute_io", msg, msglen);
		}
		return scale_out(stream, s, dout, msg, msglen);
	}
	rc = fftd__conv_in(din, src, cin, (int) cs->precision, ntr, rin,
	    s->total, target, scr, stream);
	if (rc != 0) {
		return fftd__cuda_fail(
		    (cudaError_t) rc, "fftd__conv_in", msg, msglen);
	}
	int rv = fftd__cuda_exec_unit(p, u, stream, cin, cout, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	rc = fftd__conv_out(cout, (int) cs->precision, dout, (int) s->precision,
	    ntr, rout, scr, stream);
	if (rc != 0) {
		return fftd__cuda_fail(
		    (cudaError_t) rc, "fftd__conv_out", msg, msglen);
	}
	return scale_out(stream, s, dout, msg, msglen);
}

// fftd__cuda_dev_transform enqueues, on stream, everything between the input's
// arrival in din and the output's departure from dout: zeroing the
// output's gaps, the FFT (unit u, whichever algorithm), the scaling. The
// tc kernels are unnormalized in both directions like cuFFT, so the one
// scale pass serves all algorithms.
int
fftd__cuda_dev_transform(cudaStream_t stream, const fftd__cuda_plan *p,
    const fftd__cuda_unit *u, const fftd__shape *s, void *din, void *dout,
    char *msg, size_t msglen)
{
	cudaError_t e;
	if (p->conv) {
		// Accuracy-aware auto's converted plans (dense layouts).
		return fftd__cuda_conv_transform(
		    stream, p, u, s, din, dout, msg, msglen);
	}
	if (fftd__side_has_gaps(&s->out, s->rank, s->batch)) {
		e = cudaMemsetAsync(dout, 0, (size_t) s->out.bytes, stream);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaMemsetAsync", msg, msglen);
		}
	}
	int rv = fftd__cuda_exec_unit(p, u, stream, din, dout, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	return scale_out(stream, s, dout, msg, msglen);
}

// fftd__cuda_execute_single runs one request on the worker's request stream
// (the current device is set): input through pinned memory to the device,
// the transform (fftd__cuda_dev_transform), output back, then a sync; the
// caller's buffers are used for DMA directly when already pinned, else the
// staging buffers carry them. Nothing runs on the buffers when it returns.
int
fftd__cuda_execute_single(fftd__cuda_state *st, fftd__cuda_plan *p,
    const fftd__shape *s, void *in, void *out, char *msg, size_t msglen)
{
	size_t      ni = (size_t) s->in.bytes, no = (size_t) s->out.bytes;
	cudaError_t e;
	int         rv;

	if ((rv = fftd__cuda_grow_dev(
	         st, &st->d_in, &st->d_out, ni, "input", msg, msglen))
	        != FFTD_OK
	    || (rv = fftd__cuda_grow_dev(
	            st, &st->d_out, &st->d_in, no, "output", msg, msglen))
	        != FFTD_OK) {
		return rv;
	}

	// Stage through pinned memory unless the caller's already is.
	const void *src = in;
	void       *dst = out;
	if (!fftd__cuda_is_pinned(in)) {
		if ((rv = fftd__cuda_grow_host(&st->h_in, ni, msg, msglen))
		    != FFTD_OK) {
			return rv;
		}
		memcpy(st->h_in.p, in, ni);
		src = st->h_in.p;
	}
	if (!fftd__cuda_is_pinned(out)) {
		if ((rv = fftd__cuda_grow_host(&st->h_out, no, msg, msglen))
		    != FFTD_OK) {
			return rv;
		}
		dst = st->h_out.p;
	}

	e = cudaMemcpyAsync(
	    st->d_in.p, src, ni, cudaMemcpyHostToDevice, st->stream);
	if (e != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaMemcpyAsync (H2D)", msg, msglen);
		goto drain;
	}
	rv = fftd__cuda_dev_transform(
	    st->stream, p, &p->main, s, st->d_in.p, st->d_out.p, msg, msglen);
	if (rv != FFTD_OK) {
		goto drain;
	}
	e = cudaMemcpyAsync(
	    dst, st->d_out.p, no, cudaMemcpyDeviceToHost, st->stream);
	if (e != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaMemcpyAsync (D2H)", msg, msglen);
		goto drain;
	}
	if ((e = cudaStreamSynchronize(st->stream)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
	}
	if (dst != out) {
		memcpy(out, dst, no);
	}
	return FFTD_OK;

drain:
	// Nothing may still run on our buffers when we return.
	(void) cudaStreamSynchronize(st->stream);
	return rv;
}

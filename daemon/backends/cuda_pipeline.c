// SPDX-License-Identifier: MIT
//
// cuda_pipeline.c — the cuda backend's split-batch pipeline: a large
// batch cut into chunks that run on K streams, so that copies in, FFTs and
// copies out of different chunks overlap (described below). It uses the
// device-side transform of cuda_exec.c per chunk, units made by
// cuda_plan.c and buffers grown by cuda_memory.c; cuda_device.c decides
// (fftd__cuda_chunk_of) when a request takes this path.

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend_util.h"
#include "cuda_impl.h"

// A large batch is cut into chunks of whole transforms that run on the
// pipeline's K streams in turn, so that the H2D copy of chunk i+1, the FFT
// of chunk i and the D2H copy of chunk i-1 overlap (PCIe is full duplex),
// and, when the caller's memory is not pinned, the CPU's copy into the
// staging buffer of one chunk overlaps the transfers of the others. It
// applies when transforms do not interleave (each side's distance is at
// least one transform's extent), so each chunk is one contiguous range on
// both sides, and when the output has no gaps (the ranges between chunks
// then need no zeroing).

// fftd__cuda_chunk_of returns the transforms per chunk for s, or 0 when s is
// not pipelined.
int64_t
fftd__cuda_chunk_of(const fftd__cuda_state *st, const fftd__shape *s)
{
	if (st->nstreams < 2 || s->batch < 2 || st->chunk_bytes == 0
	    || s->in.bytes < 2 * st->chunk_bytes) {
		return 0;
	}
	int64_t one_in  = s->in.elems - (s->batch - 1) * s->in.dist;
	int64_t one_out = s->out.elems - (s->batch - 1) * s->out.dist;
	if (s->in.dist < one_in || s->out.dist < one_out
	    || fftd__side_has_gaps(&s->out, s->rank, s->batch)) {
		return 0;
	}
	uint64_t per = (uint64_t) s->in.dist * s->in.elem_size;
	int64_t  c   = (int64_t) (st->chunk_bytes / (per ? per : 1));
	return c < 1 ? 1 : c >= s->batch ? 0 : c;
}

// chunk_shape is s restricted to nb transforms.
static void
chunk_shape(fftd__shape *c, const fftd__shape *s, int64_t nb)
{
	*c           = *s;
	c->batch     = nb;
	c->in.elems  = s->in.elems - (s->batch - nb) * s->in.dist;
	c->in.bytes  = (uint64_t) c->in.elems * s->in.elem_size;
	c->out.elems = s->out.elems - (s->batch - nb) * s->out.dist;
	c->out.bytes = (uint64_t) c->out.elems * s->out.elem_size;
}

// fftd__cuda_pipeline_execute runs s as chunks of cb transforms over the
// pipeline's streams (see the top of this file): it makes the plan's
// per-stream units and grows the streams' buffers on first use, then
// returns when every chunk's output is in out (or, after an error, when no
// stream still works on the buffers).
int
fftd__cuda_pipeline_execute(fftd__cuda_state *st, fftd__cuda_plan *p,
    const fftd__shape *s, int64_t cb, const void *in, void *out, char *msg,
    size_t msglen)
{
	int64_t B      = s->batch;
	int64_t nch    = (B + cb - 1) / cb;
	int     K      = st->nstreams < nch ? st->nstreams : (int) nch;
	bool    pin_in = fftd__cuda_is_pinned(in),
	     pin_out   = fftd__cuda_is_pinned(out);
	fftd__shape full, last;
	chunk_shape(&full, s, cb);
	chunk_shape(&last, s, B - (nch - 1) * cb);
	int rv;

	if (p->chunk != cb) {
		// Made on first use: one unit per stream (a cuFFT handle runs
		// on one stream with one workspace; a tc plan is shared, its
		// workspace not), one for the last chunk.
		fftd__cuda_pipe_units_free(st, p);
	}
	for (int k = 0; k < K; k++) {
		// Stream 0's unit is made first and owns the tc plan.
		fftd__tc_plan *share = k > 0 ? p->sub[0].tc : NULL;
		if (!p->sub[k].made
		    && (rv = fftd__cuda_make_unit(st, p, s, cb,
		            st->ps[k].stream, share, &p->sub[k], msg, msglen))
		        != FFTD_OK) {
			return rv;
		}
		if ((rv = fftd__cuda_grow_pipe(st, &st->ps[k],
		         (size_t) full.in.bytes, (size_t) full.out.bytes,
		         !pin_in, !pin_out, msg, msglen))
		    != FFTD_OK) {
			return rv;
		}
	}
	int tail_k = (int) ((nch - 1) % K);
	if (last.batch != cb && !p->tail.made
	    && (rv = fftd__cuda_make_unit(st, p, s, last.batch,
	            st->ps[tail_k].stream, NULL, &p->tail, msg, msglen))
	        != FFTD_OK) {
		return rv;
	}
	p->chunk = cb;

	const char *src      = in;
	char       *dst      = out;
	size_t      in_step  = (size_t) (cb * s->in.dist) * s->in.elem_size;
	size_t      out_step = (size_t) (cb * s->out.dist) * s->out.elem_size;
	int64_t
	    staged[FFTD__CUDA_MAX_STREAMS]; // chunk whose output waits in h_out
	for (int k = 0; k < K; k++) {
		staged[k] = -1;
	}
	cudaError_t e = cudaSuccess;
	rv            = FFTD_OK;
	for (int64_t i = 0; i < nch && rv == FFTD_OK; i++) {
		int                     k  = (int) (i % K);
		fftd__cuda_pipe_stream *ps = &st->ps[k];
		const fftd__shape      *cs = i == nch - 1 ? &last : &full;
		const fftd__cuda_unit  *u
		    = cs->batch == cb ? &p->sub[k] : &p->tail;
		if (i >= K) {
			// This stream's previous chunk must be out of its
			// buffers.
			if ((e = cudaEventSynchronize(ps->done))
			    != cudaSuccess) {
				rv = fftd__cuda_fail(
				    e, "cudaEventSynchronize", msg, msglen);
				break;
			}
			if (staged[k] >= 0) {
				const fftd__shape *ps_s
				    = staged[k] == nch - 1 ? &last : &full;
				memcpy(dst + (size_t) staged[k] * out_step,
				    ps->h_out.p, (size_t) ps_s->out.bytes);
				staged[k] = -1;
			}
		}
		const void *from = src + (size_t) i * in_step;
		if (!pin_in) {
			memcpy(ps->h_in.p, from, (size_t) cs->in.bytes);
			from = ps->h_in.p;
		}
		void *to = pin_out ? dst + (size_t) i * out_step : ps->h_out.p;
		if ((e = cudaMemcpyAsync(ps->d_in.p, from,
		         (size_t) cs->in.bytes, cudaMemcpyHostToDevice,
		         ps->stream))
		    != cudaSuccess) {
			rv = fftd__cuda_fail(
			    e, "cudaMemcpyAsync (H2D)", msg, msglen);
			break;
		}
		rv = fftd__cuda_dev_transform(
		    ps->stream, p, u, cs, ps->d_in.p, ps->d_out.p, msg, msglen);
		if (rv != FFTD_OK) {
			break;
		}
		if ((e = cudaMemcpyAsync(to, ps->d_out.p,
		         (size_t) cs->out.bytes, cudaMemcpyDeviceToHost,
		         ps->stream))
		        != cudaSuccess
		    || (e = cudaEventRecord(ps->done, ps->stream))
		        != cudaSuccess) {
			rv = fftd__cuda_fail(
			    e, "cudaMemcpyAsync (D2H)", msg, msglen);
			break;
		}
		if (!pin_out) {
			staged[k] = i;
		}
	}
	// Finish every stream, in chunk order, and copy staged outputs out.
	for (int64_t i = nch - K > 0 ? nch - K : 0; i < nch; i++) {
		int                     k  = (int) (i % K);
		fftd__cuda_pipe_stream *ps = &st->ps[k];
		if ((e = cudaStreamSynchronize(ps->stream)) != cudaSuccess
		    && rv == FFTD_OK) {
			rv = fftd__cuda_fail(
			    e, "cudaStreamSynchronize", msg, msglen);
		}
		if (rv == FFTD_OK && staged[k] >= 0) {
			const fftd__shape *ps_s
			    = staged[k] == nch - 1 ? &last : &full;
			memcpy(dst + (size_t) staged[k] * out_step, ps->h_out.p,
			    (size_t) ps_s->out.bytes);
			staged[k] = -1;
		}
	}
	if (rv != FFTD_OK) {
		for (int k = 0; k < K; k++) {
			(void) cudaStreamSynchronize(st->ps[k].stream);
		}
	}
	return rv;
}

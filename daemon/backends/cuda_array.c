// SPDX-License-Identifier: MIT
//
// cuda_array.c — the cuda backend's resident arrays (issue 16; backend.h:
// array_alloc, array_free, array_copy, execute_device): device memory a
// client keeps in the daemon between requests, so that a chain of steps
// never crosses PCIe. An array's bytes are counted in st->plan_bytes, as a
// plan's workspace is, so the device budget, memory_in_use and the
// pipeline's and request buffers' growth all see them; the request
// buffers, a cache, are dropped first when an array needs their room.
// Copies run on the worker's request stream and are waited for; an
// execution on arrays runs the plan's main unit (the whole batch) on
// device pointers, with no staging (fftd__cuda_dev_transform). Calls
// cuda_memory.c, cuda_exec.c and cuda_error.c.
//
// Threads: every call runs on the device's batch worker (an execution on
// arrays may run on the device's realtime worker: both are in the device's
// primary context, so the pointers are valid there). The byte counts are
// taken under st->mtx, which the planner shares (cuda_impl.h, "Threads");
// cudaMalloc and cudaFree run outside it.

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_impl.h"
#include "errmsg.h"

// reserve counts bytes of a new array in plan_bytes if they fit the
// budget, dropping the caches first when they stand in the way.
static int
reserve(fftd__cuda_state *st, uint64_t bytes, char *msg, size_t msglen)
{
	pthread_mutex_lock(&st->mtx);
	uint64_t bufs = fftd__cuda_cache_bytes(st);
	uint64_t held = st->plan_bytes + st->pipe_bytes;
	if (held <= st->budget && bytes <= st->budget - held
	    && bytes + bufs > st->budget - held) {
		fftd__cuda_drop_caches(st);
	}
	int rv = FFTD_OK;
	if (held > st->budget || bytes > st->budget - held) {
		rv = fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "an array of %.1f MiB does not fit: device budget %.1f "
		    "MiB, %.1f MiB held by plans, arrays and pipeline buffers",
		    fftd__cuda_mib(bytes), fftd__cuda_mib(st->budget),
		    fftd__cuda_mib(held));
	} else {
		st->plan_bytes += bytes;
	}
	pthread_mutex_unlock(&st->mtx);
	return rv;
}

// fftd__cuda_array_alloc gives bytes of zero-filled device memory within the
// budget (backend.h: array_alloc): counted first, then cudaMalloc and a
// cudaMemsetAsync on the request stream, waited for, so that no client
// ever reads another's old bytes.
int
fftd__cuda_array_alloc(
    fftd__device *dev, uint64_t bytes, void **ptr, char *msg, size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	cudaError_t       e;
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	if (bytes > SIZE_MAX) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "an array of %.1f MiB cannot be addressed",
		    fftd__cuda_mib(bytes));
	}
	int rv = reserve(st, bytes, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	void *p = NULL;
	e       = cudaMalloc(&p, (size_t) bytes);
	if (e == cudaSuccess) {
		e = cudaMemsetAsync(p, 0, (size_t) bytes, st->stream);
		if (e == cudaSuccess) {
			e = cudaStreamSynchronize(st->stream);
		}
		if (e != cudaSuccess) {
			rv = fftd__cuda_fail(
			    e, "cudaMemsetAsync (new array)", msg, msglen);
			(void) cudaFree(p);
		}
	} else {
		rv = fftd__cuda_fail(e, "cudaMalloc (array)", msg, msglen);
	}
	if (rv != FFTD_OK) {
		fftd__cuda_release_plan_bytes(st, bytes);
		return rv;
	}
	*ptr = p;
	return FFTD_OK;
}

// fftd__cuda_array_free frees an array and takes its bytes off the count
// (backend.h: array_free). cudaFree waits for work in flight on it.
void
fftd__cuda_array_free(fftd__device *dev, void *ptr, uint64_t bytes)
{
	fftd__cuda_state *st = dev->state;
	(void) cudaSetDevice(st->ordinal);
	if (cudaFree(ptr) != cudaSuccess) {
		(void) cudaGetLastError();
	}
	fftd__cuda_release_plan_bytes(st, bytes);
}

// fftd__cuda_array_copy copies len bytes between host and device memory, or
// within the device (backend.h: array_copy; dir 0 host to device, 1 device
// to host, 2 device to device), on the request stream, and waits. A
// client's shared buffer is registered (pinned) already, so it is DMAed
// from directly; other host memory (an inline payload) goes through the
// driver's pageable path.
int
fftd__cuda_array_copy(fftd__device *dev, void *dst, const void *src, size_t len,
    int dir, char *msg, size_t msglen)
{
	static const enum cudaMemcpyKind kinds[3] = { cudaMemcpyHostToDevice,
		cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
	static const char *const         names[3] = { "cudaMemcpyAsync (H2D)",
		        "cudaMemcpyAsync (D2H)", "cudaMemcpyAsync (D2D)" };
	fftd__cuda_state                *st       = dev->state;
	cudaError_t                      e;
	if (dir < 0 || dir > 2) {
		return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
		    "array copy in direction %d", dir);
	}
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	e = cudaMemcpyAsync(dst, src, len, kinds[dir], st->stream);
	if (e != cudaSuccess) {
		int rv = fftd__cuda_fail(e, names[dir], msg, msglen);
		(void) cudaStreamSynchronize(st->stream);
		return rv;
	}
	if ((e = cudaStreamSynchronize(st->stream)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
	}
	return FFTD_OK;
}

// fftd__cuda_execute_device runs a plan on device memory (backend.h:
// execute_device): the plan's main unit on the worker's request stream,
// gaps zeroed and scaled as fftd__cuda_dev_transform does, then a sync;
// through the request buffers when a pointer is not aligned to the complex
// element, which cuFFT requires.
// It holds st->mtx as cuda_execute does (cuda_impl.h, "Threads").
int
fftd__cuda_execute_device(fftd__device *dev, void *plan, const fftd__shape *s,
    void *in, void *out, char *msg, size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	fftd__cuda_plan  *p  = plan;
	cudaError_t       e;
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	pthread_mutex_lock(&st->mtx);
	// cuFFT refuses pointers not aligned to the complex element
	// (CUFFT_INVALID_VALUE), real sides of R2C/C2R included; an array
	// offset that is only element-aligned on a real side goes through
	// the request buffers, device to device.
	size_t cplx = s->precision == FFTD_F64 ? 16
	    : s->precision == FFTD_F32         ? 8
	                                       : 4;
	bool   stage
	    = ((uintptr_t) in % cplx) != 0 || ((uintptr_t) out % cplx) != 0;
	void *din = in, *dout = out;
	int   rv = FFTD_OK;
	if (stage) {
		rv = fftd__cuda_grow_dev(st, &st->d_in, &st->d_out, s->in.bytes,
		    "an unaligned array's input", msg, msglen);
		if (rv == FFTD_OK) {
			rv = fftd__cuda_grow_dev(st, &st->d_out, &st->d_in,
			    s->out.bytes, "an unaligned array's output", msg,
			    msglen);
		}
		if (rv == FFTD_OK
		    && (e = cudaMemcpyAsync(st->d_in.p, in, s->in.bytes,
		            cudaMemcpyDeviceToDevice, st->stream))
		        != cudaSuccess) {
			rv = fftd__cuda_fail(e, "cudaMemcpyAsync", msg, msglen);
		}
		din  = st->d_in.p;
		dout = st->d_out.p;
	}
	if (rv == FFTD_OK) {
		rv = fftd__cuda_dev_transform(
		    st->stream, p, &p->main, s, din, dout, msg, msglen);
	}
	if (rv == FFTD_OK && stage
	    && (e = cudaMemcpyAsync(out, st->d_out.p, s->out.bytes,
	            cudaMemcpyDeviceToDevice, st->stream))
	        != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaMemcpyAsync", msg, msglen);
	}
	e = cudaStreamSynchronize(st->stream);
	if (rv == FFTD_OK && e != cudaSuccess) {
		rv = fftd__cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
	}
	pthread_mutex_unlock(&st->mtx);
	return rv;
}

// SPDX-License-Identifier: MIT
//
// cuda_memory.c — the cuda backend's memory: the device budget
// (cfg->device_budget, shared between plan workspaces, pipeline buffers and
// request buffers; the request buffers are a cache, dropped first when a
// plan or a pipeline buffer needs the room), the device and pinned host
// buffers grown on demand, whether host memory is pinned, and pinning a
// client's shared-memory buffer. What uses the buffers is cuda_exec.c and
// cuda_pipeline.c; what counts plan bytes in is cuda_plan.c.

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_impl.h"
#include "errmsg.h"

// Buffers grow in steps of this, so slowly growing requests do not
// reallocate every time.
#define GROW_STEP ((size_t) 2 << 20)

// fftd__cuda_buf_free_dev frees device buffer b (cudaFree) and empties it.
void
fftd__cuda_buf_free_dev(fftd__cuda_buf *b)
{
	if (b->p != NULL) {
		(void) cudaFree(b->p);
	}
	b->p   = NULL;
	b->cap = 0;
}

// fftd__cuda_buf_free_host frees pinned host buffer b (cudaFreeHost) and
// empties it.
void
fftd__cuda_buf_free_host(fftd__cuda_buf *b)
{
	if (b->p != NULL) {
		(void) cudaFreeHost(b->p);
	}
	b->p   = NULL;
	b->cap = 0;
}

// bank_cache_bytes is what the bank keeps between calls: its scratch and
// the kept sigma^2.
static uint64_t
bank_cache_bytes(const fftd__cuda_state *st)
{
	uint64_t b = st->mf_dev.cap;
	for (int i = 0; i < FFTD__MF_SIGMA_KEPT; i++) {
		b += st->mf_sigma[i].buf.cap;
	}
	return b;
}

// drop_bank_caches frees them.
static void
drop_bank_caches(fftd__cuda_state *st)
{
	fftd__cuda_buf_free_dev(&st->mf_dev);
	for (int i = 0; i < FFTD__MF_SIGMA_KEPT; i++) {
		fftd__cuda_buf_free_dev(&st->mf_sigma[i].buf);
		st->mf_sigma[i].key = (struct fftd__mf_sigma_key) { 0 };
	}
}

// fftd__cuda_cache_bytes is the device memory held as caches: the
// single-shot request buffers and what the bank keeps. Under st->mtx.
uint64_t
fftd__cuda_cache_bytes(const fftd__cuda_state *st)
{
	return st->d_in.cap + st->d_out.cap + bank_cache_bytes(st);
}

// fftd__cuda_drop_caches frees them, when their room is needed: nothing
// uses them then (under st->mtx, which a request holds while it does).
void
fftd__cuda_drop_caches(fftd__cuda_state *st)
{
	fftd__cuda_buf_free_dev(&st->d_in);
	fftd__cuda_buf_free_dev(&st->d_out);
	drop_bank_caches(st);
}

// round_up rounds n up to a whole GROW_STEP.
static size_t
round_up(size_t n)
{
	return (n + GROW_STEP - 1) / GROW_STEP * GROW_STEP;
}

// fftd__cuda_grow_dev makes device buffer b hold at least need bytes, within
// the budget given the other buffer's capacity. The stream is idle here.
int
fftd__cuda_grow_dev(fftd__cuda_state *st, fftd__cuda_buf *b,
    const fftd__cuda_buf *other, size_t need, const char *what, char *msg,
    size_t msglen)
{
	if (b->cap >= need) {
		return FFTD_OK;
	}
	uint64_t held = st->plan_bytes + st->pipe_bytes + other->cap;
	if (held + bank_cache_bytes(st) + need > st->budget) {
		drop_bank_caches(st);
	}
	if (held > st->budget || need > st->budget - held) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "%s needs %.1f MiB of device memory; budget %.1f MiB, "
		    "%.1f MiB held by plans, pipeline and the other buffer",
		    what, fftd__cuda_mib(need), fftd__cuda_mib(st->budget),
		    fftd__cuda_mib(held));
	}
	size_t want = round_up(need);
	if (want > st->budget - held) {
		want = need;
	}
	fftd__cuda_buf_free_dev(b);
	cudaError_t e = cudaMalloc(&b->p, want);
	if (e != cudaSuccess) {
		b->p = NULL;
		return fftd__cuda_fail(e, "cudaMalloc", msg, msglen);
	}
	b->cap = want;
	return FFTD_OK;
}

// fftd__cuda_grow_host makes pinned host buffer b hold at least need bytes.
// Pinned host memory is not device memory: it is not held to the budget.
int
fftd__cuda_grow_host(fftd__cuda_buf *b, size_t need, char *msg, size_t msglen)
{
	if (b->cap >= need) {
		return FFTD_OK;
	}
	size_t want = round_up(need);
	fftd__cuda_buf_free_host(b);
	cudaError_t e = cudaHostAlloc(&b->p, want, cudaHostAllocDefault);
	if (e != cudaSuccess) {
		b->p = NULL;
		(void) cudaGetLastError();
		// Pinned host memory, not device memory: ENOMEM.
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "cudaHostAlloc of %.1f MiB of staging: %s",
		    fftd__cuda_mib(want), cudaGetErrorString(e));
	}
	b->cap = want;
	return FFTD_OK;
}

// fftd__cuda_reserve_plan_bytes counts need more device bytes for a plan in
// plan_bytes if they fit the budget, before they are allocated, so that
// the worker, growing its buffers meanwhile, sees them taken. The
// single-shot request buffers are a cache, so they are dropped before a
// plan is refused for their sake (under st->mtx: no request is using them
// then). Any thread; the caller gives back what it does not allocate with
// fftd__cuda_release_plan_bytes.
int
fftd__cuda_reserve_plan_bytes(fftd__cuda_state *st, uint64_t need,
    const char *what, char *msg, size_t msglen)
{
	pthread_mutex_lock(&st->mtx);
	uint64_t bufs = fftd__cuda_cache_bytes(st);
	if (st->plan_bytes + st->pipe_bytes + need + bufs > st->budget) {
		fftd__cuda_drop_caches(st);
	}
	uint64_t held = st->plan_bytes + st->pipe_bytes;
	int      rv   = FFTD_OK;
	if (held > st->budget || need > st->budget - held) {
		rv = fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "plan needs %.1f MiB of %s; device budget %.1f MiB, "
		    "%.1f MiB held by other plans and buffers",
		    fftd__cuda_mib(need), what, fftd__cuda_mib(st->budget),
		    fftd__cuda_mib(held));
	} else {
		st->plan_bytes += need;
	}
	pthread_mutex_unlock(&st->mtx);
	return rv;
}

// fftd__cuda_release_plan_bytes takes n bytes of a plan off plan_bytes (a
// freed unit, or a reservation not used). Any thread.
void
fftd__cuda_release_plan_bytes(fftd__cuda_state *st, uint64_t n)
{
	pthread_mutex_lock(&st->mtx);
	st->plan_bytes -= n;
	pthread_mutex_unlock(&st->mtx);
}

// fftd__cuda_grow_pipe sizes pipeline stream buffers, within the device budget.
int
fftd__cuda_grow_pipe(fftd__cuda_state *st, fftd__cuda_pipe_stream *ps,
    size_t nin, size_t nout, bool stage_in, bool stage_out, char *msg,
    size_t msglen)
{
	fftd__cuda_buf *d[2]    = { &ps->d_in, &ps->d_out };
	size_t          need[2] = { nin, nout };
	for (int i = 0; i < 2; i++) {
		if (d[i]->cap >= need[i]) {
			continue;
		}
		st->pipe_bytes -= d[i]->cap;
		fftd__cuda_buf_free_dev(d[i]);
		uint64_t held = st->plan_bytes + st->pipe_bytes
		    + fftd__cuda_cache_bytes(st);
		if (held + need[i] > st->budget) {
			// The single-shot buffers are a cache: drop them first.
			fftd__cuda_drop_caches(st);
			held = st->plan_bytes + st->pipe_bytes;
		}
		if (held > st->budget || need[i] > st->budget - held) {
			return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
			    "pipeline chunk needs %.1f MiB of device memory; "
			    "budget %.1f MiB, %.1f MiB held",
			    fftd__cuda_mib(need[i]), fftd__cuda_mib(st->budget),
			    fftd__cuda_mib(held));
		}
		cudaError_t e = cudaMalloc(&d[i]->p, need[i]);
		if (e != cudaSuccess) {
			d[i]->p = NULL;
			return fftd__cuda_fail(
			    e, "cudaMalloc (pipeline)", msg, msglen);
		}
		d[i]->cap = need[i];
		st->pipe_bytes += need[i];
	}
	int rv = FFTD_OK;
	if (stage_in) {
		rv = fftd__cuda_grow_host(&ps->h_in, nin, msg, msglen);
	}
	if (rv == FFTD_OK && stage_out) {
		rv = fftd__cuda_grow_host(&ps->h_out, nout, msg, msglen);
	}
	return rv;
}

// fftd__cuda_is_pinned says whether host memory at ptr is page-locked
// (cudaHostAlloc or cudaHostRegister), so DMA can use it directly.
bool
fftd__cuda_is_pinned(const void *ptr)
{
	struct cudaPointerAttributes a;
	if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
		(void) cudaGetLastError();
		return false;
	}
	return a.type == cudaMemoryTypeHost;
}

// fftd__cuda_host_register pins [addr, addr + len) (backend.h: host_register)
// for DMA from every device's context (cudaHostRegisterPortable). Called on
// the fd socket's thread, not a worker's, so it sets that thread's current
// device first; it reads only st->ordinal, which never changes.
int
fftd__cuda_host_register(
    fftd__device *dev, void *addr, size_t len, char *msg, size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	cudaError_t       e  = cudaSetDevice(st->ordinal);
	if (e == cudaSuccess) {
		// Portable: every device's context may DMA from it.
		e = cudaHostRegister(addr, len, cudaHostRegisterPortable);
	}
	if (e != cudaSuccess) {
		(void) cudaGetLastError();
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "cudaHostRegister of %.1f MiB: %s (is LimitMEMLOCK high "
		    "enough?)",
		    fftd__cuda_mib(len), cudaGetErrorString(e));
	}
	return FFTD_OK;
}

// fftd__cuda_host_unregister undoes fftd__cuda_host_register, on whichever
// thread drops the buffer's last reference (backend.h: host_unregister).
void
fftd__cuda_host_unregister(fftd__device *dev, void *addr)
{
	fftd__cuda_state *st = dev->state;
	(void) cudaSetDevice(st->ordinal);
	if (cudaHostUnregister(addr) != cudaSuccess) {
		(void) cudaGetLastError();
	}
}

// fftd__cuda_memory_in_use is the device memory this worker holds
// (backend.h: memory_in_use): plan workspaces and tables, pipeline buffers,
// the caches (request buffers, the bank's scratch). Called on the worker after
// each job.
uint64_t
fftd__cuda_memory_in_use(fftd__device *dev)
{
	fftd__cuda_state *st = dev->state;
	pthread_mutex_lock(&st->mtx);
	uint64_t n
	    = st->plan_bytes + st->pipe_bytes + fftd__cuda_cache_bytes(st);
	pthread_mutex_unlock(&st->mtx);
	return n;
}

// SPDX-License-Identifier: MIT
//
// cuda_device.c — the cuda backend's entry: the vtable the daemon sees
// (fftd__backend_cuda, backend.h), probing, opening a device for a worker
// (context settings, budget, streams) and closing it, and the execute
// entry, which sends a request to the pipeline (cuda_pipeline.c) or the
// single stream (cuda_exec.c). The top floor (cuda_impl.h says what the
// other files hold and which thread runs what).

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cuda_impl.h"
#include "errmsg.h"
#include "log.h"

// cuda_probe counts the CUDA devices (backend.h: probe). Main thread, once,
// before any worker starts; cudaGetDeviceCount makes no context.
static int
cuda_probe(char *why, size_t whylen)
{
	int         n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		(void) cudaGetLastError();
		snprintf(why, whylen, "cudaGetDeviceCount: %s",
		    cudaGetErrorString(e));
		return 0;
	}
	if (n <= 0) {
		snprintf(why, whylen, "no CUDA device");
		return 0;
	}
	return n;
}

// cuda_open opens device dev->local for one worker (backend.h: open), on
// that worker's thread: it makes dev->local the thread's current device
// (which binds the thread to the device's primary context), applies
// gpu_sync while that context is still unmade, sizes this worker's share of
// the device budget, and creates its request stream and pipeline streams at
// the lane's priority. Buffers and plans come later, on demand.
static int
cuda_open(fftd__device *dev, const fftd__backend_config *cfg, char *msg,
    size_t msglen)
{
	cudaError_t           e;
	struct cudaDeviceProp prop;

	if ((e = cudaSetDevice(dev->local)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	static const unsigned sync_flags[]
	    = { cudaDeviceScheduleAuto, cudaDeviceScheduleSpin,
		      cudaDeviceScheduleYield, cudaDeviceScheduleBlockingSync };
	// The realtime lane opens second and shares the batch lane's context,
	// so its setting too.
	if (!cfg->realtime && cfg->gpu_sync > 0 && cfg->gpu_sync < 4
	    && (e = cudaSetDeviceFlags(sync_flags[cfg->gpu_sync]))
	        != cudaSuccess) {
		// Too late once the device's context exists (another thread
		// of this process made it): CUDA's choice stays.
		(void) cudaGetLastError();
		fftd__log(FFTD_LOG_WARN, "device %d: gpu_sync not applied: %s",
		    dev->local, cudaGetErrorString(e));
	}
	if ((e = cudaGetDeviceProperties(&prop, dev->local)) != cudaSuccess) {
		return fftd__cuda_fail(
		    e, "cudaGetDeviceProperties", msg, msglen);
	}
	fftd__cuda_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "no memory for the cuda device state");
	}
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&st->mtx, &ma);
	pthread_mutexattr_destroy(&ma);
	st->ordinal    = dev->local;
	uint64_t total = prop.totalGlobalMem;
	st->budget     = total / 10 * 9;
	if (cfg->device_budget != 0) {
		st->budget
		    = cfg->device_budget < total ? cfg->device_budget : total;
	}
	if (cfg->budget_share > 0 && cfg->budget_share < 1) {
		st->budget
		    = (uint64_t) ((double) st->budget * cfg->budget_share);
	}
	// Lower numbers are higher priorities; batch work keeps the default.
	int lo = 0, hi = 0;
	if (cfg->realtime
	    && cudaDeviceGetStreamPriorityRange(&lo, &hi) != cudaSuccess) {
		(void) cudaGetLastError();
		hi = 0;
	}
	int prio = cfg->realtime ? hi : 0;
	e        = cudaStreamCreateWithPriority(
	           &st->stream, cudaStreamNonBlocking, prio);
	if (e != cudaSuccess) {
		pthread_mutex_destroy(&st->mtx);
		free(st);
		return fftd__cuda_fail(
		    e, "cudaStreamCreateWithPriority", msg, msglen);
	}
	st->chunk_bytes = cfg->pipeline_chunk_bytes;
	int want        = cfg->pipeline_streams > FFTD__CUDA_MAX_STREAMS
	           ? FFTD__CUDA_MAX_STREAMS
	           : cfg->pipeline_streams;
	for (int k = 0; k < want; k++) {
		fftd__cuda_pipe_stream *ps = &st->ps[k];
		if (cudaStreamCreateWithPriority(
		        &ps->stream, cudaStreamNonBlocking, prio)
		    != cudaSuccess) {
			break;
		}
		if (cudaEventCreateWithFlags(&ps->done, cudaEventDisableTiming)
		    != cudaSuccess) {
			(void) cudaStreamDestroy(ps->stream);
			break;
		}
		st->nstreams++;
	}
	(void) cudaGetLastError();
	// Names fit in 64 in practice; a longer one is cut, not refused.
	size_t nl = strnlen(prop.name, sizeof(prop.name));
	if (nl >= sizeof(dev->name)) {
		nl = sizeof(dev->name) - 1;
	}
	memcpy(dev->name, prop.name, nl);
	dev->name[nl]     = '\0';
	dev->memory_bytes = total;
	dev->state        = st;
	return FFTD_OK;
}

// cuda_close closes the device for this worker (backend.h: close), on the
// worker's thread after its last job and after the planner thread stopped
// (worker.c stops it first), so it takes no lock: it waits for the streams,
// then unmaps IPC memory still mapped, frees the plans still live, the
// buffers and the streams.
static void
cuda_close(fftd__device *dev)
{
	fftd__cuda_state *st = dev->state;
	if (st == NULL) {
		return;
	}
	(void) cudaSetDevice(st->ordinal);
	(void) cudaStreamSynchronize(st->stream);
	fftd__cuda_ipc_close_all(st);
	while (st->plans != NULL) {
		fftd__cuda_plan *p = st->plans;
		st->plans          = p->next;
		fftd__cuda_plan_free(st, p);
	}
	fftd__cuda_mf_plans_free(st);
	fftd__cuda_buf_free_host(&st->mf_host);
	fftd__cuda_drop_caches(st); // the bank's scratch, kept sigma^2
	fftd__cuda_buf_free_dev(&st->d_in);
	fftd__cuda_buf_free_dev(&st->d_out);
	fftd__cuda_buf_free_host(&st->h_in);
	fftd__cuda_buf_free_host(&st->h_out);
	for (int k = 0; k < st->nstreams; k++) {
		fftd__cuda_pipe_stream *ps = &st->ps[k];
		(void) cudaStreamSynchronize(ps->stream);
		fftd__cuda_buf_free_dev(&ps->d_in);
		fftd__cuda_buf_free_dev(&ps->d_out);
		fftd__cuda_buf_free_host(&ps->h_in);
		fftd__cuda_buf_free_host(&ps->h_out);
		(void) cudaEventDestroy(ps->done);
		(void) cudaStreamDestroy(ps->stream);
	}
	(void) cudaStreamDestroy(st->stream);
	pthread_mutex_destroy(&st->mtx);
	free(st);
	dev->state = NULL;
}

// cuda_execute runs a plan on host memory (backend.h: execute), on the
// worker's thread: it makes the device current, then runs the request as a
// pipeline of chunks when its batch is large enough
// (fftd__cuda_chunk_of), else on the single request stream. It holds
// st->mtx throughout: the planner thread counts plan bytes and may drop the
// request buffers this uses (cuda_impl.h, "Threads").
static int
cuda_execute(fftd__device *dev, void *plan, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	fftd__cuda_plan  *p  = plan;
	cudaError_t       e;

	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	pthread_mutex_lock(&st->mtx);
	int rv;
	// Converted plans (cuda_convert.c) run in one piece.
	int64_t cb = p->conv ? 0 : fftd__cuda_chunk_of(st, s);
	if (cb > 0) {
		rv = fftd__cuda_pipeline_execute(
		    st, p, s, cb, in, out, msg, msglen);
	} else {
		rv = fftd__cuda_execute_single(st, p, s, in, out, msg, msglen);
	}
	pthread_mutex_unlock(&st->mtx);
	return rv;
}

// fftd__backend_cuda is the backend as the daemon sees it (backend.h).
const fftd__backend fftd__backend_cuda = {
	.name          = "cuda",
	.algorithms    = fftd__cuda_algorithms,
	.probe         = cuda_probe,
	.open          = cuda_open,
	.close         = cuda_close,
	.plan          = fftd__cuda_plan_make,
	.execute       = cuda_execute,
	.destroy       = fftd__cuda_destroy,
	.plan_estimate = fftd__cuda_plan_estimate,
	.measure       = fftd__cuda_measure,
	// Plans are made and destroyed on the device's planner thread.
	.plan_any_thread = 1,
	.host_register   = fftd__cuda_host_register,
	.host_unregister = fftd__cuda_host_unregister,
	.memory_in_use   = fftd__cuda_memory_in_use,
	// Resident arrays (cuda_array.c) and the bank on them (cuda_mf.c).
	.array_alloc    = fftd__cuda_array_alloc,
	.array_free     = fftd__cuda_array_free,
	.array_copy     = fftd__cuda_array_copy,
	.execute_device = fftd__cuda_execute_device,
	.mf_bank        = fftd__cuda_mf_bank,
	// A client's own GPU memory, mapped in place (cuda_ipc.c).
	.ipc_open     = fftd__cuda_ipc_open,
	.ipc_close    = fftd__cuda_ipc_close,
	.ipc_mappings = fftd__cuda_ipc_mappings,
};

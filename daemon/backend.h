// SPDX-License-Identifier: MIT
//
// backend.h — PRIVATE to fftd. The one small interface every FFT backend
// implements (fftw: FFTW3 on the CPU; cuda: cuFFT and our own kernels).
//
// A backend serves one or more devices. Each device is driven by exactly one
// worker thread (daemon/worker.c), and every call below for a device runs
// on that device's worker thread, so a backend needs no locks of its own
// for per-device state (CUDA context, streams, buffers, FFTW planner) —
// except that a backend that sets plan_any_thread has plan and destroy
// called on the device's planner thread (planner.h), concurrently with
// execute on the worker, and must lock what they share.

#ifndef FFTD_DAEMON_BACKEND_H
#define FFTD_DAEMON_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

typedef struct fftd__device fftd__device;
struct fftd__mf_args; // mf.h

// fftd__backend_config holds the settings a backend reads at open.
typedef struct fftd__backend_config {
	int fftw_threads; // threads per FFTW execution (>= 1)
	int fftw_measure; // 0: FFTW_ESTIMATE, 1: FFTW_MEASURE
	uint64_t
	    device_budget;    // device memory a device may use, bytes (0: 90%)
	int pipeline_streams; // streams of the split-batch pipeline
	uint64_t pipeline_chunk_bytes; // input bytes per pipeline chunk
	// How a GPU worker waits for its device: 0 CUDA's choice (spins when
	// it has a core to itself), 1 spin, 2 yield, 3 block (sleeps: frees
	// the CPU for other processes and so is not the thread the kernel
	// preempts when the host is busy, at a few us per wake-up).
	int gpu_sync;
	// The realtime lane: a second worker on the same device that serves
	// only realtime plans, so they never wait for a batch transform in
	// progress. Its streams get the device's highest priority, so its
	// kernels are scheduled ahead of batch ones that wait for the SMs.
	int realtime;
	// budget_share is the fraction of the device budget (device_budget,
	// or its 90% default) this worker may hold (0: all of it). The two
	// lanes of a device split it, so together they never exceed it.
	double budget_share;
} fftd__backend_config;

// fftd__backend is a backend's operations.
typedef struct fftd__backend {
	const char *name; // "fftw" or "cuda"

	// algorithms is a NULL-terminated list of algorithm names this backend
	// serves, the first being its default ("fftw"; "cufft", "tc16", ...).
	const char *const *algorithms;

	// aligned_input asks for execute's input at a 64-byte boundary. NNG
	// hands over a request body 4 bytes past its allocation (REP takes the
	// request id off the front), so the worker moves the payload into
	// place first; a backend that copies the input anyway (to pinned
	// memory) leaves this 0 and saves that pass.
	int aligned_input;

	// probe returns how many devices the backend can serve here (0 if
	// none) and writes a reason into why when there are none. Called once
	// from the main thread before any worker starts.
	int (*probe)(char *why, size_t whylen);

	// open prepares device dev->local (fills dev->name, memory_bytes and
	// dev->state). Returns FFTD_OK or an error with msg filled.
	int (*open)(fftd__device *dev, const fftd__backend_config *cfg,
	    char *msg, size_t msglen);

	// close releases everything open and the plans made.
	void (*close)(fftd__device *dev);

	// plan creates a plan for shape s with the named algorithm (never NULL:
	// the worker resolves "auto"), stores it in *plan and the bytes it
	// holds (workspace, twiddles, device buffers it owns) in *bytes.
	// Planning never touches request data. Errors: FFTD_EUNSUPPORTED (with
	// msg saying what is unsupported), FFTD_EDEVMEM, FFTD_EBACKEND, tagged
	// codes.
	int (*plan)(fftd__device *dev, const fftd__shape *s,
	    const char *algorithm, void **plan, uint64_t *bytes, char *msg,
	    size_t msglen);

	// execute runs plan on host memory: in holds s->in.bytes bytes (the
	// backend may overwrite it), out has room for s->out.bytes bytes. On
	// success every byte of out is written: layout elements with the
	// transform's result scaled as s->norm asks, gap elements with zero.
	int (*execute)(fftd__device *dev, void *plan, const fftd__shape *s,
	    void *in, void *out, char *msg, size_t msglen);

	// destroy frees a plan made by plan.
	void (*destroy)(fftd__device *dev, void *plan);

	// plan_estimate is what plan would store in *bytes for (s,
	// algorithm), known before planning, so that the plan cache can admit
	// or refuse the plan first. Any thread. NULL: unknown (admitted).
	uint64_t (*plan_estimate)(
	    fftd__device *dev, const fftd__shape *s, const char *algorithm);

	// plan_any_thread says that plan and destroy may run on another
	// thread than the device's worker, concurrently with execute on it
	// (never two plan or destroy calls at once for one device): the
	// daemon then plans on a planner thread of the device, so that a slow
	// plan does not hold up executions. 0: plans are made on the worker.
	int plan_any_thread;

	// host_register pins [addr, addr + len) (a client's shared-memory
	// buffer) so the device can DMA straight from and to it, for every
	// device of this backend. NULL when the backend needs nothing (CPU).
	// Unlike the calls above, it and host_unregister may run on any
	// thread (the daemon calls them off the workers: pinning is slow).
	int (*host_register)(fftd__device *dev, void *addr, size_t len,
	    char *msg, size_t msglen);

	// host_unregister undoes host_register. NULL when host_register is.
	void (*host_unregister)(fftd__device *dev, void *addr);

	// memory_in_use is the device memory the backend holds now (plans,
	// workspaces, pipeline and request buffers), bytes. NULL: none (CPU).
	uint64_t (*memory_in_use)(fftd__device *dev);

	// Resident arrays (issue 16). NULL where the backend has none: the
	// daemon answers FFTD_EUNSUPPORTED. All run on the device's worker.
	//
	// array_alloc gives `bytes` of zero-filled device memory (host memory
	// on the CPU backend) in *ptr, within the device budget beside plans
	// and buffers (FFTD_EDEVMEM when it does not fit).
	int (*array_alloc)(fftd__device *dev, uint64_t bytes, void **ptr,
	    char *msg, size_t msglen);
	// array_free frees what array_alloc gave (bytes: its size).
	void (*array_free)(fftd__device *dev, void *ptr, uint64_t bytes);
	// array_copy copies len bytes: host to device (dir 0), device to host
	// (dir 1) or device to device (dir 2); host memory may be a client's
	// shared buffer (pinned by host_register) or any other.
	int (*array_copy)(fftd__device *dev, void *dst, const void *src,
	    size_t len, int dir, char *msg, size_t msglen);
	// execute_device is execute with input and output in device memory
	// (array_alloc's), with the same guarantees on out.
	int (*execute_device)(fftd__device *dev, void *plan,
	    const fftd__shape *s, void *in, void *out, char *msg,
	    size_t msglen);
	// mf_bank runs the matched-filter bank (mf.h) on device memory,
	// results into the host memory args names.
	int (*mf_bank)(fftd__device *dev, struct fftd__mf_args *args, char *msg,
	    size_t msglen);

	// CUDA IPC (fftd_array_open_ipc). NULL where the backend has none:
	// the daemon answers FFTD_EUNSUPPORTED. Run on the device's batch
	// worker, as the array calls.
	//
	// ipc_open maps the allocation that handle (handle_len bytes: a
	// cudaIpcMemHandle_t, FFTD_IPC_HANDLE_SIZE) names, or finds it
	// mapped already, and gives in *ptr the address of [offset, offset +
	// bytes) in it and in *map the mapping, for ipc_close. Its memory
	// must be on this device (FFTD_EINVAL) and the span inside it
	// (FFTD_ESIZE); a handle CUDA cannot open is a tagged CUDA code.
	// Nothing is allocated or counted against the budget.
	int (*ipc_open)(fftd__device *dev, const void *handle,
	    size_t handle_len, uint64_t offset, uint64_t bytes, void **ptr,
	    void **map, char *msg, size_t msglen);
	// ipc_close drops one user of map; the last unmaps it (never frees
	// the client's memory).
	void (*ipc_close)(fftd__device *dev, void *map);
	// ipc_mappings is how many allocations the device has mapped now.
	uint64_t (*ipc_mappings)(fftd__device *dev);

	// measure times one execution of plan (made by plan for s) on
	// scratch data it allocates itself, device side only (the copies in
	// and out are the same for every algorithm; conversions are counted),
	// and stores the median of several runs in *ns. It runs where plan
	// does (the planner thread), beside execute on the worker, on its own
	// stream, buffers and, for cuFFT, its own handle: a cached plan may be
	// executing meanwhile. For accuracy-aware "auto" (algo_pick.c). NULL:
	// not measured, so "auto" keeps the default algorithm.
	int (*measure)(fftd__device *dev, void *plan, const fftd__shape *s,
	    uint64_t *ns, char *msg, size_t msglen);
} fftd__backend;

// fftd__device is one device served by one worker thread.
typedef struct fftd__device {
	const fftd__backend *backend;
	int                  index;    // daemon-wide device index
	int                  local;    // backend's own ordinal (CUDA device)
	char                 name[64]; // "NVIDIA H200", "cpu (16 threads)"
	uint64_t             memory_bytes; // device memory, 0 for the CPU
	void                *state;        // the backend's per-device state
} fftd__device;

// The backends compiled into this daemon.
extern const fftd__backend fftd__backend_fftw;
#ifdef FFTD_WITH_CUDA
extern const fftd__backend fftd__backend_cuda;
#endif

// fftd__norm_factor returns the scale s->norm asks for (1 for NORM_NONE).
double fftd__norm_factor(const fftd__shape *s);

#endif // FFTD_DAEMON_BACKEND_H

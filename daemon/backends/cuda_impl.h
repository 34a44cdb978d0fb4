// SPDX-License-Identifier: MIT
//
// cuda_impl.h — PRIVATE to the cuda backend: included by
// daemon/backends/cuda_*.c and nothing else. The daemon sees the backend
// only through its vtable, fftd__backend_cuda (backend.h).
//
// The GPU backend. Three algorithms, one staging and pipeline machinery:
//   cufft    cuFFT, f64 / f32 / f16 (f16 through cufftXt, power-of-two
//            sizes only, as cuFFT requires), every kind, rank and layout;
//   tc16     our tensor-core kernels (kernels/tc.h), f16 C2C;
//   split16  the same kernels on split fp16 hi/lo operands, f32 C2C;
// both tc algorithms: power-of-two sizes, rank 1 or 2, in the ranges of
// kernels/tc.h, dense contiguous batches (tc_check says what else is
// refused, and why). "auto" is cufft (the first of fftd__cuda_algorithms);
// the others are asked for by name.
// Built only with -DFFTD_WITH_CUDA.
//
// One device per CUDA ordinal; its worker thread owns one non-blocking
// stream, device buffers for a request's input and output, and pinned host
// staging buffers, all grown on demand. Every byte reaches the GPU from
// pinned memory (pageable copies run at a sixth of the speed): a request's
// buffer that is already pinned or registered (cudaHostRegister, the
// shared-memory path) is used directly, any other is first copied into the
// staging buffer. One request runs as
//     [memcpy to staging] H2D | memset gaps | FFT | scale | D2H | sync
//     [memcpy from staging]
// on the stream; fftd__cuda_dev_transform is the device-side middle, shared
// by the single-stream path and the chunked multi-stream pipeline. What
// differs between algorithms is only the FFT step: a plan holds "units" (a
// cuFFT handle, or a tc plan, each with the workspace we gave it) for the
// whole batch and, for the pipeline, per stream and for the last chunk, and
// exec_unit runs whichever it is.
//
// Device memory: plan workspaces and tc twiddle tables (counted exactly by
// us) and the device buffers stay within cfg->device_budget (0: 90% of the
// card); a request that cannot fit is refused with FFTD_EDEVMEM.
//
// The files, in floors (a file calls only those above it in this list):
//   cuda_error.c     CUDA, cuFFT and tc-kernel errors to fftd codes and
//                    messages;
//   cuda_memory.c    the device budget, buffers grown on demand (request,
//                    staging and pipeline buffers), pinning host memory;
//   cuda_convert.c   accuracy-aware auto's converted plans: which names,
//                    shapes in the computing precision, their buffers;
//   cuda_plan.c      which algorithm serves which shape, units (cuFFT
//                    handles, tc plans, their workspaces), plans;
//   cuda_exec.c      the device-side transform of one unit (converted
//                    too) and the single-stream execution of a request;
//   cuda_measure.c   one execution timed on scratch data (speed table);
//   cuda_pipeline.c  the split-batch pipeline: chunks over K streams,
//                    copies overlapping transforms;
//   cuda_array.c     resident arrays: device memory counted against the
//                    budget, copies, executions on device pointers;
//   cuda_ipc.c       CUDA IPC mappings: a client's GPU memory mapped in
//                    place, once per allocation, never freed here;
//   cuda_mf_plans.c  the bank's cached cuFFT plans and second stream;
//   cuda_mf_setup.c  one bank call's batch size, plans, device memory
//                    and host copies (cuda_mf_impl.h);
//   cuda_mf.c        the matched-filter bank (mf.h) on resident arrays:
//                    its three engines (fourstep, cufft, plain), checks,
//                    batches and results;
//   cuda_device.c    open, close, the execute entry that picks single
//                    stream or pipeline, and the vtable.
//
// Threads and CUDA contexts. probe runs on the main thread before any
// worker starts. open, close, execute and memory_in_use run on the
// device's worker thread (daemon/worker.c). The backend sets
// plan_any_thread: plan and destroy run on the device's planner thread
// (daemon/planner.c), beside execute, so that a plan that takes seconds to
// make (cuFFT's planner for a large prime size) holds up no execution.
// (The split-batch pipeline's per-stream units are the exception: they are
// made inside execute, on the worker, on a plan's first pipelined
// execution.)
// What the two threads share — the byte counts against the budget, the
// worker's cached request buffers, the list of plans — is guarded by
// st->mtx (recursive): execute holds it for a whole request; the planner
// takes it only to count bytes in or out (dropping the request buffers
// when a plan needs their room) and to link or unlink a plan, never across
// cuFFT's planning or a cudaMalloc, so executions wait at most for those
// few instructions and a plan waits at most for the request in progress.
// cudaFree synchronises the device, so a destroy on the planner thread
// waits for the worker's work in flight; the worker itself does not wait.
// The tc planner's synchronous cudaMemcpy runs on the legacy default
// stream, which does not wait for the worker's non-blocking streams. A
// device with the
// realtime lane has two workers, each with its own state (streams,
// buffers, plans, share of the budget), both in the device's primary
// context. host_register runs on the fd socket's thread and
// host_unregister on whichever thread drops a shared buffer's last
// reference; they read only st->ordinal. The CUDA runtime's current device
// is per thread, so every entry point that calls CUDA makes st->ordinal
// current first (cudaSetDevice, which binds the thread to the device's
// primary context); the functions declared below assume it is.

#ifndef FFTD_DAEMON_BACKENDS_CUDA_IMPL_H
#define FFTD_DAEMON_BACKENDS_CUDA_IMPL_H

#include <cuda_runtime.h>
#include <cufft.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "convert.h"
#include "fftd_kernels.h"
#include "mf_kernels.h"
#include "tc.h"

_Static_assert(FFTD__KERN_F64 == (int) FFTD_F64
        && FFTD__KERN_F32 == (int) FFTD_F32 && FFTD__KERN_F16 == (int) FFTD_F16,
    "fftd_kernels.h precision codes must match fftd_precision");
_Static_assert(
    CUFFT_FORWARD == (int) FFTD_FORWARD && CUFFT_INVERSE == (int) FFTD_INVERSE,
    "cuFFT and fftd directions must agree");
_Static_assert(FFTD__TC_FORWARD == (int) FFTD_FORWARD
        && FFTD__TC_INVERSE == (int) FFTD_INVERSE,
    "tc kernels and fftd directions must agree");

// The algorithms, in the order of fftd__cuda_algorithms (the first is
// "auto").
typedef enum fftd__cuda_algo {
	FFTD__CUDA_ALG_CUFFT = 0,
	FFTD__CUDA_ALG_TC16,
	FFTD__CUDA_ALG_SPLIT16,
	FFTD__CUDA_ALG_COUNT
} fftd__cuda_algo;

// fftd__cuda_algorithms names the algorithms (NULL-terminated; the
// vtable's list, backend.h). Defined in cuda_plan.c.
extern const char *const fftd__cuda_algorithms[];

typedef struct fftd__cuda_state fftd__cuda_state;
typedef struct fftd__cuda_plan  fftd__cuda_plan;

// fftd__cuda_buf is a device or pinned host buffer grown on demand.
// FFTD__MF_SIGMA_KEPT is how many calls' sigma^2 a device keeps.
#define FFTD__MF_SIGMA_KEPT 8

typedef struct fftd__cuda_buf {
	void  *p;
	size_t cap;
} fftd__cuda_buf;

#define FFTD__CUDA_MAX_STREAMS 32

// A pipeline stream: its own stream, completion event, and device and
// pinned staging buffers for one chunk.
typedef struct fftd__cuda_pipe_stream {
	cudaStream_t   stream;
	cudaEvent_t    done;
	fftd__cuda_buf d_in, d_out, h_in, h_out;
} fftd__cuda_pipe_stream;

// fftd__cuda_state is one worker's hold on its device (dev->state).
struct fftd__cuda_state {
	// mtx guards plan_bytes, pipe_bytes, the request buffers d_in/d_out
	// and the plans list between the worker and the planner thread (see
	// "Threads" above); recursive, as execute holds it when it makes a
	// plan's pipeline units.
	pthread_mutex_t mtx;
	int             ordinal;
	cudaStream_t    stream;
	int             nstreams;    // pipeline streams (0: no pipeline)
	size_t          chunk_bytes; // input bytes per pipeline chunk
	uint64_t        pipe_bytes;  // device bytes of the pipeline buffers
	fftd__cuda_pipe_stream ps[FFTD__CUDA_MAX_STREAMS];
	uint64_t               budget; // device memory we may hold, bytes
	// plan_bytes: workspaces of the live plans, and the bytes of the
	// resident arrays (cuda_array.c), counted alike against the budget.
	uint64_t         plan_bytes;
	fftd__cuda_buf   d_in, d_out; // device
	fftd__cuda_buf   h_in, h_out; // pinned host staging
	fftd__cuda_plan *plans;       // live plans, so close can free leftovers
	// CUDA IPC allocations mapped by this (batch) worker (cuda_ipc.c),
	// and their number for ipc_mappings.
	struct fftd__cuda_ipc_map *ipc;
	_Atomic uint64_t           ipc_count;
	// The matched-filter bank's cached plans (cuda_mf_plans.c), NULL
	// until the first fused bank.
	struct fftd__mf_plan_cache *mf_plans;
	// The bank's pinned host copies, kept between calls (cuda_mf.c):
	// host memory, not held to the budget.
	fftd__cuda_buf mf_host;
	// The bank's device scratch, kept between calls (cuda_mf.c) as the
	// request buffers are: a cache, in memory_in_use but not in
	// plan_bytes, dropped (fftd__cuda_drop_caches) before anything that
	// needs its room is refused.
	fftd__cuda_buf mf_dev;
	// The sigma^2 of the last FFTD__MF_SIGMA_KEPT bank calls that
	// computed them (count f64 each) and what they were computed from
	// (cuda_mf_setup.c), least recently used out: a cache like mf_dev,
	// given to a later call of the same key instead of summing them again
	// (~6% of a template's time at 2^17 on the H200). Several, so that a
	// search alternating detectors (one PSD each) or banks keeps each.
	struct fftd__mf_sigma_kept {
		fftd__cuda_buf buf;
		struct fftd__mf_sigma_key {
			const void *templates, *psd;
			int64_t     count, n, kmin, kmax;
			double      delta_f;
			int         precision;
			uint64_t    tpl_gen, psd_gen; // 0: no entry
		} key;
		uint64_t used; // mf_sigma_clock at its last use
	} mf_sigma[FFTD__MF_SIGMA_KEPT];
	uint64_t mf_sigma_clock;
	// The fourstep bank's second and third streams and its events (fork,
	// join, join3; a part's passes done; a part's slots copied, for each
	// of two batches in flight), made on first use (cuda_mf.c,
	// mf_kernels.h); mf_aux says they exist.
	bool         mf_aux;
	cudaStream_t mf_stream2, mf_stream3;
	cudaEvent_t  mf_ev[3];
	cudaEvent_t  mf_xev[FFTD__MF_MAX_PARTS];
	cudaEvent_t  mf_pev[2][FFTD__MF_MAX_PARTS];
};

// fftd__cuda_unit is one executable transform of a plan for a given
// batch: a cuFFT handle (bound to its stream at creation) or a tc plan
// (given its stream at launch), with the workspace we allocated for it. A
// tc plan only reads itself when it runs, so the pipeline's per-stream
// units share the one of stream 0 (tc_owned false) and have only their own
// workspace.
typedef struct fftd__cuda_unit {
	bool           made;
	bool           is_tc;
	cufftHandle    handle;   // !is_tc
	fftd__tc_plan *tc;       // is_tc
	bool           tc_owned; // this unit destroys tc
	void          *work;     // workspace we allocated (NULL if none needed)
	size_t         work_bytes;
	uint64_t       held; // device bytes counted in st->plan_bytes
	// A converted plan's (cuda_convert.c) buffers: the input and output
	// in the computing precision and the conversion's scratch, one
	// allocation of cbuf_bytes (counted in held); only the scratch when
	// the tc16 passes convert (fftd__cuda_conv_fused).
	void  *cbuf;
	size_t cbuf_bytes;
} fftd__cuda_unit;

// fftd__cuda_plan is a plan of this backend (the daemon's void *plan).
struct fftd__cuda_plan {
	fftd__cuda_plan *next, *prev;
	fftd__cuda_algo  algo;
	fftd__cuda_unit  main; // the whole batch, on the state's stream
	fftd_precision   prec;
	fftd_kind        kind;
	int              direction;
	fftd__shape      shape;
	// Accuracy-aware auto's converted plans (cuda_convert.c): conv set,
	// the data in shape.precision, the algorithm run on cshape (the
	// same transform in prec, the computing precision). Without
	// conversion cshape is shape.
	bool        conv;
	fftd__shape cshape;
	// Split-batch pipeline (made on first use): transforms per chunk, one
	// unit per stream for a full chunk, one for the last, shorter chunk.
	int64_t         chunk;
	fftd__cuda_unit sub[FFTD__CUDA_MAX_STREAMS];
	fftd__cuda_unit tail;
};

// Functions the files share, by file; each says what it does above its
// definition.

// --- cuda_error.c ------------------------------------------------------------

int fftd__cuda_fail(cudaError_t e, const char *call, char *msg, size_t msglen);
const char *fftd__cufft_name(cufftResult r);
int fftd__cufft_fail(cufftResult r, const char *call, char *msg, size_t msglen);
int fftd__cuda_tc_fail(int rc, const char *call, char *msg, size_t msglen);
double fftd__cuda_mib(uint64_t b);

// --- cuda_memory.c -----------------------------------------------------------

void fftd__cuda_buf_free_dev(fftd__cuda_buf *b);
void fftd__cuda_buf_free_host(fftd__cuda_buf *b);
int  fftd__cuda_grow_dev(fftd__cuda_state *st, fftd__cuda_buf *b,
     const fftd__cuda_buf *other, size_t need, const char *what, char *msg,
     size_t msglen);
int  fftd__cuda_grow_host(
     fftd__cuda_buf *b, size_t need, char *msg, size_t msglen);
uint64_t fftd__cuda_cache_bytes(const fftd__cuda_state *st);
void     fftd__cuda_drop_caches(fftd__cuda_state *st);
int      fftd__cuda_reserve_plan_bytes(fftd__cuda_state *st, uint64_t need,
         const char *what, char *msg, size_t msglen);
void     fftd__cuda_release_plan_bytes(fftd__cuda_state *st, uint64_t n);
int      fftd__cuda_grow_pipe(fftd__cuda_state *st, fftd__cuda_pipe_stream *ps,
         size_t nin, size_t nout, bool stage_in, bool stage_out, char *msg,
         size_t msglen);
bool     fftd__cuda_is_pinned(const void *ptr);
int      fftd__cuda_host_register(
         fftd__device *dev, void *addr, size_t len, char *msg, size_t msglen);
void     fftd__cuda_host_unregister(fftd__device *dev, void *addr);
uint64_t fftd__cuda_memory_in_use(fftd__device *dev);

// --- cuda_plan.c -------------------------------------------------------------

int      fftd__cuda_make_unit(fftd__cuda_state *st, const fftd__cuda_plan *p,
         const fftd__shape *s, int64_t batch, cudaStream_t stream,
         fftd__tc_plan *share, fftd__cuda_unit *u, char *msg, size_t msglen);
void     fftd__cuda_pipe_units_free(fftd__cuda_state *st, fftd__cuda_plan *p);
int      fftd__cuda_plan_make(fftd__device *dev, const fftd__shape *s,
         const char *algorithm, void **planp, uint64_t *bytes, char *msg,
         size_t msglen);
void     fftd__cuda_destroy(fftd__device *dev, void *plan);
uint64_t fftd__cuda_plan_estimate(
    fftd__device *dev, const fftd__shape *s, const char *algorithm);
void fftd__cuda_plan_free(fftd__cuda_state *st, fftd__cuda_plan *p);

// --- cuda_convert.c ----------------------------------------------------------

int  fftd__cuda_conv_resolve(const char *algorithm, const fftd__shape *s,
     bool *conv, int *algo, fftd__shape *cs, char *msg, size_t msglen);
int  fftd__cuda_conv_alloc(fftd__cuda_state *st, const fftd__cuda_plan *p,
     fftd__cuda_unit *u, char *msg, size_t msglen);
void fftd__cuda_conv_free(fftd__cuda_unit *u);
int  fftd__cuda_conv_target(const fftd__cuda_plan *p);
bool fftd__cuda_conv_fused(
    const fftd__cuda_plan *p, fftd__tc_io *in_io, fftd__tc_io *out_io);
void fftd__cuda_conv_bufs(const fftd__cuda_plan *p, const fftd__cuda_unit *u,
    void **cin, void **cout, void **scratch);

// --- cuda_exec.c -------------------------------------------------------------

int fftd__cuda_exec_unit(const fftd__cuda_plan *p, const fftd__cuda_unit *u,
    cudaStream_t stream, void *din, void *dout, char *msg, size_t msglen);
int fftd__cuda_conv_transform(cudaStream_t stream, const fftd__cuda_plan *p,
    const fftd__cuda_unit *u, const fftd__shape *s, void *din, void *dout,
    char *msg, size_t msglen);

int fftd__cuda_dev_transform(cudaStream_t stream, const fftd__cuda_plan *p,
    const fftd__cuda_unit *u, const fftd__shape *s, void *din, void *dout,
    char *msg, size_t msglen);
int fftd__cuda_execute_single(fftd__cuda_state *st, fftd__cuda_plan *p,
    const fftd__shape *s, void *in, void *out, char *msg, size_t msglen);

// --- cuda_array.c ------------------------------------------------------------

int fftd__cuda_array_alloc(
    fftd__device *dev, uint64_t bytes, void **ptr, char *msg, size_t msglen);
void fftd__cuda_array_free(fftd__device *dev, void *ptr, uint64_t bytes);
int  fftd__cuda_array_copy(fftd__device *dev, void *dst, const void *src,
     size_t len, int dir, char *msg, size_t msglen);
int  fftd__cuda_execute_device(fftd__device *dev, void *plan,
     const fftd__shape *s, void *in, void *out, char *msg, size_t msglen);

// --- cuda_ipc.c --------------------------------------------------------------

int      fftd__cuda_ipc_open(fftd__device *dev, const void *handle,
         size_t handle_len, uint64_t offset, uint64_t bytes, void **ptr, void **map,
         char *msg, size_t msglen);
void     fftd__cuda_ipc_close(fftd__device *dev, void *map);
uint64_t fftd__cuda_ipc_mappings(fftd__device *dev);
void     fftd__cuda_ipc_close_all(fftd__cuda_state *st);

// --- cuda_mf_plans.c ---------------------------------------------------------

typedef struct fftd__mf_plan_cache fftd__mf_plan_cache;
// fftd__mf_cached_plan is a cached plan of the bank's fused engine: its
// handle and the workspace it needs.
typedef struct fftd__mf_cached_plan {
	cufftHandle h;
	size_t      work;
} fftd__mf_cached_plan;
int  fftd__cuda_mf_plan(fftd__cuda_state *st, int64_t n, int batch,
     fftd__mf_cached_plan *out, char *msg, size_t msglen);
void fftd__cuda_mf_plans_free(fftd__cuda_state *st);
bool fftd__cuda_mf_aux_stream(fftd__cuda_state *st);

// --- cuda_mf.c ---------------------------------------------------------------

struct fftd__mf_args;
int fftd__cuda_mf_bank(
    fftd__device *dev, struct fftd__mf_args *a, char *msg, size_t msglen);

// --- cuda_measure.c ----------------------------------------------------------

int fftd__cuda_measure(fftd__device *dev, void *plan, const fftd__shape *s,
    uint64_t *ns, char *msg, size_t msglen);

// --- cuda_pipeline.c ---------------------------------------------------------

int64_t fftd__cuda_chunk_of(const fftd__cuda_state *st, const fftd__shape *s);
int     fftd__cuda_pipeline_execute(fftd__cuda_state *st, fftd__cuda_plan *p,
        const fftd__shape *s, int64_t cb, const void *in, void *out, char *msg,
        size_t msglen);

#endif // FFTD_DAEMON_BACKENDS_CUDA_IMPL_H

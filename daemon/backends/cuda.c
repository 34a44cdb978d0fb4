// SPDX-License-Identifier: MIT
//
// cuda.c — the GPU backend. Three algorithms, one staging and pipeline
// machinery:
//   cufft    cuFFT, f64 / f32 / f16 (f16 through cufftXt, power-of-two
//            sizes only, as cuFFT requires), every kind, rank and layout;
//   tc16     our tensor-core kernels (kernels/tc.h), f16 C2C;
//   split16  the same kernels on split fp16 hi/lo operands, f32 C2C;
// both tc algorithms: power-of-two sizes, rank 1 or 2, in the ranges of
// kernels/tc.h, dense contiguous batches (tc_check says what else is
// refused, and why). "auto" is cufft (the first of cuda_algorithms); the
// others are asked for by name.
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
// on the stream; dev_transform is the device-side middle, shared by the
// single-stream path and the chunked multi-stream pipeline. What differs
// between algorithms is only the FFT step: a plan holds "units" (a cuFFT
// handle, or a tc plan, each with the workspace we gave it) for the whole
// batch and, for the pipeline, per stream and for the last chunk, and
// exec_unit runs whichever it is.
//
// Device memory: plan workspaces and tc twiddle tables (counted exactly by
// us) and the device buffers stay within cfg->device_budget (0: 90% of the
// card); a request that cannot fit is refused with FFTD_EDEVMEM.

#include "backend.h"

#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_util.h"
#include "errmsg.h"
#include "fftd_kernels.h"
#include "log.h"
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

// The algorithms, in the order of cuda_algorithms (the first is "auto").
typedef enum cuda_algo {
	ALG_CUFFT = 0,
	ALG_TC16,
	ALG_SPLIT16,
	ALG_COUNT
} cuda_algo;

static const char *const cuda_algorithms[]
    = { "cufft", "tc16", "split16", NULL };
_Static_assert(
    sizeof(cuda_algorithms) / sizeof(cuda_algorithms[0]) == ALG_COUNT + 1,
    "cuda_algorithms and cuda_algo must list the same algorithms");

// Buffers grow in steps of this, so slowly growing requests do not
// reallocate every time.
#define GROW_STEP ((size_t) 2 << 20)

typedef struct cuda_state cuda_state;
typedef struct cuda_plan  cuda_plan;

// buf is a device or pinned host buffer grown on demand.
typedef struct buf {
	void  *p;
	size_t cap;
} buf;

#define MAX_STREAMS 32

// A pipeline stream: its own stream, completion event, and device and
// pinned staging buffers for one chunk.
typedef struct pipe_stream {
	cudaStream_t stream;
	cudaEvent_t  done;
	buf          d_in, d_out, h_in, h_out;
} pipe_stream;

struct cuda_state {
	int          ordinal;
	cudaStream_t stream;
	int          nstreams;    // pipeline streams (0: no pipeline)
	size_t       chunk_bytes; // input bytes per pipeline chunk
	uint64_t     pipe_bytes;  // device bytes of the pipeline buffers
	pipe_stream  ps[MAX_STREAMS];
	uint64_t     budget;      // device memory we may hold, bytes
	uint64_t     plan_bytes;  // workspaces of the live plans
	buf          d_in, d_out; // device
	buf          h_in, h_out; // pinned host staging
	cuda_plan   *plans;       // live plans, so close can free leftovers
};

// unit is one executable transform of a plan for a given batch: a cuFFT
// handle (bound to its stream at creation) or a tc plan (given its stream
// at launch), with the workspace we allocated for it. A tc plan only reads
// itself when it runs, so the pipeline's per-stream units share the one of
// stream 0 (tc_owned false) and have only their own workspace.
typedef struct unit {
	bool           made;
	bool           is_tc;
	cufftHandle    handle;   // !is_tc
	fftd__tc_plan *tc;       // is_tc
	bool           tc_owned; // this unit destroys tc
	void          *work;     // workspace we allocated (NULL if none needed)
	size_t         work_bytes;
	uint64_t       held; // device bytes counted in st->plan_bytes
} unit;

struct cuda_plan {
	cuda_plan     *next, *prev;
	cuda_algo      algo;
	unit           main; // the whole batch, on the state's stream
	fftd_precision prec;
	fftd_kind      kind;
	int            direction;
	fftd__shape    shape;
	// Split-batch pipeline (made on first use): transforms per chunk, one
	// unit per stream for a full chunk, one for the last, shorter chunk.
	int64_t chunk;
	unit    sub[MAX_STREAMS];
	unit    tail;
};

// cuda_fail maps a CUDA error of call to an fftd code, with a message.
static int
cuda_fail(cudaError_t e, const char *call, char *msg, size_t msglen)
{
	(void) cudaGetLastError(); // clear it unless it is sticky
	int code = e == cudaErrorMemoryAllocation
	    ? FFTD_EDEVMEM
	    : FFTD_ECUDAERR + ((int) e & FFTD_ERR_CODE_MASK);
	return fftd__errmsg(code, msg, msglen, "%s: %s (%s)", call,
	    cudaGetErrorName(e), cudaGetErrorString(e));
}

static const char *
cufft_name(cufftResult r)
{
	switch (r) {
	case CUFFT_SUCCESS:
		return "CUFFT_SUCCESS";
	case CUFFT_INVALID_PLAN:
		return "CUFFT_INVALID_PLAN";
	case CUFFT_ALLOC_FAILED:
		return "CUFFT_ALLOC_FAILED";
	case CUFFT_INVALID_TYPE:
		return "CUFFT_INVALID_TYPE";
	case CUFFT_INVALID_VALUE:
		return "CUFFT_INVALID_VALUE";
	case CUFFT_INTERNAL_ERROR:
		return "CUFFT_INTERNAL_ERROR";
	case CUFFT_EXEC_FAILED:
		return "CUFFT_EXEC_FAILED";
	case CUFFT_SETUP_FAILED:
		return "CUFFT_SETUP_FAILED";
	case CUFFT_INVALID_SIZE:
		return "CUFFT_INVALID_SIZE";
	case CUFFT_UNALIGNED_DATA:
		return "CUFFT_UNALIGNED_DATA";
	case CUFFT_INVALID_DEVICE:
		return "CUFFT_INVALID_DEVICE";
	case CUFFT_NO_WORKSPACE:
		return "CUFFT_NO_WORKSPACE";
	case CUFFT_NOT_IMPLEMENTED:
		return "CUFFT_NOT_IMPLEMENTED";
	case CUFFT_NOT_SUPPORTED:
		return "CUFFT_NOT_SUPPORTED";
	default:
		return "cuFFT error";
	}
}

// cufft_fail maps a cuFFT error of call to an fftd code, with a message.
static int
cufft_fail(cufftResult r, const char *call, char *msg, size_t msglen)
{
	int code = r == CUFFT_ALLOC_FAILED
	    ? FFTD_EDEVMEM
	    : FFTD_ECUFFTERR + ((int) r & FFTD_ERR_CODE_MASK);
	return fftd__errmsg(
	    code, msg, msglen, "%s: %s (%d)", call, cufft_name(r), (int) r);
}

// tc_fail maps an error code of the tc kernels' call to an fftd code, with
// fftd__tc_strerror's words (and CUDA's, for a CUDA-tagged code).
static int
tc_fail(int rc, const char *call, char *msg, size_t msglen)
{
	int ce = fftd__tc_cuda_error(rc);
	if (ce != 0) {
		cudaError_t e = (cudaError_t) ce;
		(void) cudaGetLastError(); // clear it unless it is sticky
		int code = e == cudaErrorMemoryAllocation
		    ? FFTD_EDEVMEM
		    : FFTD_ECUDAERR + (ce & FFTD_ERR_CODE_MASK);
		return fftd__errmsg(code, msg, msglen, "%s: %s: %s (%s)", call,
		    fftd__tc_strerror(rc), cudaGetErrorName(e),
		    cudaGetErrorString(e));
	}
	int code;
	switch (rc) {
	case FFTD__TC_EUNSUPPORTED:
		code = FFTD_EUNSUPPORTED;
		break;
	case FFTD__TC_ENOMEM:
		code = FFTD_ENOMEM;
		break;
	case FFTD__TC_EDEVMEM:
		code = FFTD_EDEVMEM;
		break;
	default:
		// EINVAL, ENODEV: the shape was checked and the device is
		// open, so these say the kernels refused what we checked.
		code = FFTD_EBACKEND;
		break;
	}
	return fftd__errmsg(code, msg, msglen, "%s: %s (tc code %d)", call,
	    fftd__tc_strerror(rc), rc);
}

static double
mib(uint64_t b)
{
	return (double) b / (1 << 20);
}

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

static int
cuda_open(fftd__device *dev, const fftd__backend_config *cfg, char *msg,
    size_t msglen)
{
	cudaError_t           e;
	struct cudaDeviceProp prop;

	if ((e = cudaSetDevice(dev->local)) != cudaSuccess) {
		return cuda_fail(e, "cudaSetDevice", msg, msglen);
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
		return cuda_fail(e, "cudaGetDeviceProperties", msg, msglen);
	}
	cuda_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "no memory for the cuda device state");
	}
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
		free(st);
		return cuda_fail(
		    e, "cudaStreamCreateWithPriority", msg, msglen);
	}
	st->chunk_bytes = cfg->pipeline_chunk_bytes;
	int want        = cfg->pipeline_streams > MAX_STREAMS ? MAX_STREAMS
	                                                      : cfg->pipeline_streams;
	for (int k = 0; k < want; k++) {
		pipe_stream *ps = &st->ps[k];
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

static void
buf_free_dev(buf *b)
{
	if (b->p != NULL) {
		(void) cudaFree(b->p);
	}
	b->p   = NULL;
	b->cap = 0;
}

static void
buf_free_host(buf *b)
{
	if (b->p != NULL) {
		(void) cudaFreeHost(b->p);
	}
	b->p   = NULL;
	b->cap = 0;
}

static size_t
round_up(size_t n)
{
	return (n + GROW_STEP - 1) / GROW_STEP * GROW_STEP;
}

// grow_dev makes device buffer b hold at least need bytes, within the
// budget given the other buffer's capacity. The stream is idle here.
static int
grow_dev(cuda_state *st, buf *b, const buf *other, size_t need,
    const char *what, char *msg, size_t msglen)
{
	if (b->cap >= need) {
		return FFTD_OK;
	}
	uint64_t held = st->plan_bytes + other->cap;
	if (held > st->budget || need > st->budget - held) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "%s needs %.1f MiB of device memory; budget %.1f MiB, "
		    "%.1f MiB held by plans and the other buffer",
		    what, mib(need), mib(st->budget), mib(held));
	}
	size_t want = round_up(need);
	if (want > st->budget - held) {
		want = need;
	}
	buf_free_dev(b);
	cudaError_t e = cudaMalloc(&b->p, want);
	if (e != cudaSuccess) {
		b->p = NULL;
		return cuda_fail(e, "cudaMalloc", msg, msglen);
	}
	b->cap = want;
	return FFTD_OK;
}

static int
grow_host(buf *b, size_t need, char *msg, size_t msglen)
{
	if (b->cap >= need) {
		return FFTD_OK;
	}
	size_t want = round_up(need);
	buf_free_host(b);
	cudaError_t e = cudaHostAlloc(&b->p, want, cudaHostAllocDefault);
	if (e != cudaSuccess) {
		b->p = NULL;
		(void) cudaGetLastError();
		// Pinned host memory, not device memory: ENOMEM.
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "cudaHostAlloc of %.1f MiB of staging: %s", mib(want),
		    cudaGetErrorString(e));
	}
	b->cap = want;
	return FFTD_OK;
}

static void
unit_free(cuda_state *st, unit *u)
{
	if (!u->made) {
		return;
	}
	if (u->is_tc) {
		if (u->tc_owned) {
			fftd__tc_plan_destroy(u->tc);
		}
	} else {
		(void) cufftDestroy(u->handle);
	}
	if (u->work != NULL) {
		(void) cudaFree(u->work);
	}
	st->plan_bytes -= u->held;
	memset(u, 0, sizeof(*u));
}

// pipe_units_free frees a plan's pipeline units. Stream 0's unit owns the
// tc plan that the other streams' units borrow, so it goes last: no unit
// is ever left pointing at a destroyed plan.
static void
pipe_units_free(cuda_state *st, cuda_plan *p)
{
	for (int k = MAX_STREAMS - 1; k >= 0; k--) {
		unit_free(st, &p->sub[k]);
	}
	unit_free(st, &p->tail);
	p->chunk = 0;
}

static void
plan_free(cuda_state *st, cuda_plan *p)
{
	unit_free(st, &p->main);
	pipe_units_free(st, p);
	free(p);
}

static void
cuda_close(fftd__device *dev)
{
	cuda_state *st = dev->state;
	if (st == NULL) {
		return;
	}
	(void) cudaSetDevice(st->ordinal);
	(void) cudaStreamSynchronize(st->stream);
	while (st->plans != NULL) {
		cuda_plan *p = st->plans;
		st->plans    = p->next;
		plan_free(st, p);
	}
	buf_free_dev(&st->d_in);
	buf_free_dev(&st->d_out);
	buf_free_host(&st->h_in);
	buf_free_host(&st->h_out);
	for (int k = 0; k < st->nstreams; k++) {
		pipe_stream *ps = &st->ps[k];
		(void) cudaStreamSynchronize(ps->stream);
		buf_free_dev(&ps->d_in);
		buf_free_dev(&ps->d_out);
		buf_free_host(&ps->h_in);
		buf_free_host(&ps->h_out);
		(void) cudaEventDestroy(ps->done);
		(void) cudaStreamDestroy(ps->stream);
	}
	(void) cudaStreamDestroy(st->stream);
	free(st);
	dev->state = NULL;
}

static bool
is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

// reserve_plan_bytes checks that need more device bytes for a plan fit
// the budget. The single-shot request buffers are a cache, so they are
// dropped before a plan is refused for their sake.
static int
reserve_plan_bytes(
    cuda_state *st, uint64_t need, const char *what, char *msg, size_t msglen)
{
	uint64_t bufs = st->d_in.cap + st->d_out.cap;
	if (st->plan_bytes + st->pipe_bytes + need + bufs > st->budget) {
		buf_free_dev(&st->d_in);
		buf_free_dev(&st->d_out);
	}
	uint64_t held = st->plan_bytes + st->pipe_bytes;
	if (held > st->budget || need > st->budget - held) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "plan needs %.1f MiB of %s; device budget %.1f MiB, "
		    "%.1f MiB held by other plans and buffers",
		    mib(need), what, mib(st->budget), mib(held));
	}
	return FFTD_OK;
}

// make_cufft_unit creates a cuFFT handle for shape s with `batch`
// transforms, on `stream`, with a workspace we allocate after checking the
// budget.
static int
make_cufft_unit(cuda_state *st, const fftd__shape *s, int64_t batch,
    cudaStream_t stream, unit *u, char *msg, size_t msglen)
{
	cufftResult r;
	cudaError_t e;
	memset(u, 0, sizeof(*u));
	if ((r = cufftCreate(&u->handle)) != CUFFT_SUCCESS) {
		return cufft_fail(r, "cufftCreate", msg, msglen);
	}
	// We allocate the workspace ourselves, after checking the budget.
	if ((r = cufftSetAutoAllocation(u->handle, 0)) != CUFFT_SUCCESS) {
		(void) cufftDestroy(u->handle);
		return cufft_fail(r, "cufftSetAutoAllocation", msg, msglen);
	}

	// The advanced layout exactly as the shape says: cuFFT's semantics
	// for n / embed / stride / dist are FFTW's.
	long long n[FFTD_MAX_RANK], ie[FFTD_MAX_RANK], oe[FFTD_MAX_RANK];
	for (int k = 0; k < s->rank; k++) {
		n[k]  = s->n[k];
		ie[k] = s->in.embed[k];
		oe[k] = s->out.embed[k];
	}
	size_t      work = 0;
	const char *call;
	if (s->precision == FFTD_F16) {
		cudaDataType it = s->kind == FFTD_R2C ? CUDA_R_16F : CUDA_C_16F;
		cudaDataType ot = s->kind == FFTD_C2R ? CUDA_R_16F : CUDA_C_16F;
		call            = "cufftXtMakePlanMany";
		r = cufftXtMakePlanMany(u->handle, s->rank, n, ie, s->in.stride,
		    s->in.dist, it, oe, s->out.stride, s->out.dist, ot, batch,
		    &work, CUDA_C_16F);
	} else {
		bool      d = s->precision == FFTD_F64;
		cufftType t = s->kind == FFTD_C2C ? (d ? CUFFT_Z2Z : CUFFT_C2C)
		    : s->kind == FFTD_R2C         ? (d ? CUFFT_D2Z : CUFFT_R2C)
		                                  : (d ? CUFFT_Z2D : CUFFT_C2R);
		call        = "cufftMakePlanMany64";
		r = cufftMakePlanMany64(u->handle, s->rank, n, ie, s->in.stride,
		    s->in.dist, oe, s->out.stride, s->out.dist, t, batch,
		    &work);
	}
	if (r == CUFFT_SUCCESS) {
		call = "cufftGetSize";
		r    = cufftGetSize(u->handle, &work);
	}
	if (r != CUFFT_SUCCESS) {
		(void) cufftDestroy(u->handle);
		if (r == CUFFT_INVALID_SIZE || r == CUFFT_NOT_SUPPORTED
		    || r == CUFFT_NOT_IMPLEMENTED) {
			return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
			    "%s: %s: cuFFT does not support this shape", call,
			    cufft_name(r));
		}
		return cufft_fail(r, call, msg, msglen);
	}

	int rv = reserve_plan_bytes(st, work, "cuFFT workspace", msg, msglen);
	if (rv != FFTD_OK) {
		(void) cufftDestroy(u->handle);
		return rv;
	}
	if (work > 0) {
		if ((e = cudaMalloc(&u->work, work)) != cudaSuccess) {
			(void) cufftDestroy(u->handle);
			return cuda_fail(
			    e, "cudaMalloc (cuFFT workspace)", msg, msglen);
		}
		if ((r = cufftSetWorkArea(u->handle, u->work))
		    != CUFFT_SUCCESS) {
			(void) cudaFree(u->work);
			(void) cufftDestroy(u->handle);
			return cufft_fail(r, "cufftSetWorkArea", msg, msglen);
		}
	}
	if ((r = cufftSetStream(u->handle, stream)) != CUFFT_SUCCESS) {
		if (u->work != NULL) {
			(void) cudaFree(u->work);
		}
		(void) cufftDestroy(u->handle);
		return cufft_fail(r, "cufftSetStream", msg, msglen);
	}
	u->work_bytes = work;
	u->held       = work;
	u->made       = true;
	st->plan_bytes += work;
	return FFTD_OK;
}

static fftd__tc_algo
tc_algo(cuda_algo a)
{
	return a == ALG_TC16 ? FFTD__TC_TC16 : FFTD__TC_SPLIT16;
}

// tc_table_bytes bounds the device memory of a tc plan's twiddle tables:
// one float2 per point of each pass's length (a pass is at most
// FFTD__TC_MAX_LEN points; 2D has one pass a side) and at most 4 x 256
// four-step entries a pass (kernels/tc16_plan.cu). The kernels' ABI does
// not report it, and a plan cache that counted tc plans as free would keep
// any number of them; a bound from tc.h's public limits stays right when
// the planner changes how it splits a size.
static uint64_t
tc_table_bytes(const fftd__shape *s)
{
	uint64_t pts;
	if (s->rank == 2) {
		pts = (uint64_t) s->n[0] + (uint64_t) s->n[1];
	} else {
		uint64_t most
		    = (uint64_t) FFTD__TC_MAX_PASSES * FFTD__TC_MAX_LEN;
		pts = (uint64_t) s->n[0] < most ? (uint64_t) s->n[0] : most;
	}
	pts += (uint64_t) FFTD__TC_MAX_PASSES * 4 * FFTD__TC_TW_TABLE;
	return pts * 2 * sizeof(float);
}

// make_tc_unit makes a tc plan for shape s (checked by tc_check) with
// `batch` transforms, or borrows `share` (a plan of the same shape and
// batch), and allocates the workspace it needs after checking the budget.
// fftd__tc_plan_create works on the current device (the caller set it).
static int
make_tc_unit(cuda_state *st, cuda_algo a, const fftd__shape *s, int64_t batch,
    fftd__tc_plan *share, unit *u, char *msg, size_t msglen)
{
	uint64_t tables = 0;
	int      rc;
	memset(u, 0, sizeof(*u));
	u->is_tc = true;
	if (share != NULL) {
		u->tc = share;
	} else {
		rc = fftd__tc_plan_create(&u->tc, tc_algo(a), s->rank, s->n,
		    batch, (int) s->direction);
		if (rc != FFTD__TC_OK) {
			return tc_fail(rc, "fftd__tc_plan_create", msg, msglen);
		}
		u->tc_owned = true;
		tables      = tc_table_bytes(s);
	}
	size_t work = 0;
	int    rv   = FFTD_OK;
	if ((rc = fftd__tc_workspace_size(u->tc, &work)) != FFTD__TC_OK) {
		rv = tc_fail(rc, "fftd__tc_workspace_size", msg, msglen);
	} else {
		rv = reserve_plan_bytes(
		    st, work + tables, "tc workspace and tables", msg, msglen);
	}
	if (rv == FFTD_OK && work > 0) {
		cudaError_t e = cudaMalloc(&u->work, work);
		if (e != cudaSuccess) {
			u->work = NULL;

			rv = cuda_fail(e, "cudaMalloc (tc work)", msg, msglen);
		}
	}
	if (rv != FFTD_OK) {
		if (u->tc_owned) {
			fftd__tc_plan_destroy(u->tc);
		}
		memset(u, 0, sizeof(*u));
		return rv;
	}
	if (u->tc_owned) {
		// Which kernels and passes serve the plan, for tuning reports.
		char d[512];
		fftd__tc_plan_describe(u->tc, d, sizeof(d));
		fftd__log(FFTD_LOG_DEBUG, "cuda: %s batch %lld: %s",
		    cuda_algorithms[a], (long long) batch, d);
	}
	u->work_bytes = work;
	u->held       = work + tables;
	u->made       = true;
	st->plan_bytes += u->held;
	return FFTD_OK;
}

// make_unit makes plan p's unit for shape s with `batch` transforms that
// runs on `stream`. share: a tc plan of the same batch to borrow (pipeline
// streams after the first), NULL to make one; cuFFT handles are never
// shared (a handle is bound to one stream and one workspace).
static int
make_unit(cuda_state *st, const cuda_plan *p, const fftd__shape *s,
    int64_t batch, cudaStream_t stream, fftd__tc_plan *share, unit *u,
    char *msg, size_t msglen)
{
	if (p->algo == ALG_CUFFT) {
		return make_cufft_unit(st, s, batch, stream, u, msg, msglen);
	}
	return make_tc_unit(st, p->algo, s, batch, share, u, msg, msglen);
}

static const char *
prec_name(fftd_precision p)
{
	return p == FFTD_F64 ? "f64"
	    : p == FFTD_F32  ? "f32"
	    : p == FFTD_F16  ? "f16"
	                     : "?";
}

// tc_dense says whether side sd of s is what the tc kernels read and
// write: unit stride, no padding between rows, transforms back to back.
// (embed[0] only bounds the array, so it may exceed n[0].)
static bool
tc_dense(const fftd__side *sd, const fftd__shape *s)
{
	if (sd->stride != 1) {
		return false;
	}
	for (int k = 1; k < s->rank; k++) {
		if (sd->embed[k] != sd->n[k]) {
			return false;
		}
	}
	return s->batch == 1 || sd->dist == s->total;
}

// tc_check returns FFTD_OK when algorithm a (tc16 or split16) serves shape
// s, else FFTD_EUNSUPPORTED with what it serves and why this plan is not
// that. Needs no GPU.
static int
tc_check(cuda_algo a, const fftd__shape *s, char *msg, size_t msglen)
{
	static const char *const kinds[]  = { "C2C", "R2C", "C2R" };
	fftd_precision           want     = a == ALG_TC16 ? FFTD_F16 : FFTD_F32;
	char                     why[200] = "";
	if (s->precision != want) {
		snprintf(why, sizeof(why), "is %s", prec_name(s->precision));
	} else if (s->kind != FFTD_C2C) {
		snprintf(why, sizeof(why), "is %s",
		    (unsigned) s->kind < 3 ? kinds[s->kind]
		                           : "of an unknown kind");
	} else if (s->rank < 1 || s->rank > 2) {
		snprintf(why, sizeof(why), "is rank %d", s->rank);
	} else if (!tc_dense(&s->in, s) || !tc_dense(&s->out, s)) {
		const fftd__side *sd = !tc_dense(&s->in, s) ? &s->in : &s->out;
		char              emb[48];
		if (s->rank == 1) {
			snprintf(
			    emb, sizeof(emb), "%lld", (long long) sd->embed[0]);
		} else {
			snprintf(emb, sizeof(emb), "%lldx%lld",
			    (long long) sd->embed[0], (long long) sd->embed[1]);
		}
		snprintf(why, sizeof(why),
		    "has a strided, padded or spaced-out %sput layout (stride "
		    "%lld, embed %s, dist %lld; dense is stride 1, embed = n, "
		    "dist %lld)",
		    sd == &s->in ? "in" : "out", (long long) sd->stride, emb,
		    (long long) sd->dist, (long long) s->total);
	} else {
		int rc = fftd__tc_plan_supported(
		    tc_algo(a), s->rank, s->n, s->batch);
		if (rc == FFTD__TC_OK) {
			return FFTD_OK;
		}
		int k = 0;
		while (k < s->rank - 1 && is_pow2(s->n[k])) {
			k++;
		}
		if (!is_pow2(s->n[k])) {
			snprintf(why, sizeof(why),
			    "has n[%d] = %lld, not a power of two", k,
			    (long long) s->n[k]);
		} else if (rc == FFTD__TC_EUNSUPPORTED) {
			if (s->rank == 1) {
				bool in = s->n[0] >= FFTD__TC_MIN_LEN
				    && s->n[0] <= FFTD__TC_MAX_1D;
				snprintf(why, sizeof(why), "has n = %lld, %s",
				    (long long) s->n[0],
				    in ? "a size the planner cannot split"
				       : "outside those sizes");
			} else {
				snprintf(why, sizeof(why),
				    "has n = %lld x %lld, outside those sizes",
				    (long long) s->n[0], (long long) s->n[1]);
			}
		} else {
			snprintf(why, sizeof(why),
			    "has batch %lld: too many points for one launch",
			    (long long) s->batch);
		}
	}
	return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
	    "%s serves %s C2C of power-of-two sizes the tc kernels plan, rank "
	    "1 (%d .. %lld points) or rank 2 (each side %d .. %d), in dense "
	    "contiguous batches; this plan %s",
	    cuda_algorithms[a], prec_name(want), FFTD__TC_MIN_LEN,
	    (long long) FFTD__TC_MAX_1D, FFTD__TC_MIN_LEN,
	    FFTD__TC_MAX_STRIDED_LEN, why);
}

static int
cuda_plan_make(fftd__device *dev, const fftd__shape *s, const char *algorithm,
    void **planp, uint64_t *bytes, char *msg, size_t msglen)
{
	cuda_state *st = dev->state;
	cudaError_t e;
	int         a = -1;

	for (int i = 0; algorithm != NULL && i < ALG_COUNT; i++) {
		if (strcmp(algorithm, cuda_algorithms[i]) == 0) {
			a = i;
		}
	}
	if (a < 0) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "algorithm \"%s\" is not served by the cuda backend",
		    algorithm ? algorithm : "(null)");
	}
	if (a != ALG_CUFFT) {
		int rv = tc_check((cuda_algo) a, s, msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
	} else if (s->precision == FFTD_F16) {
		for (int k = 0; k < s->rank; k++) {
			if (!is_pow2(s->n[k])) {
				return fftd__errmsg(FFTD_EUNSUPPORTED, msg,
				    msglen,
				    "cuFFT does f16 only for power-of-two "
				    "sizes: n[%d] = %lld",
				    k, (long long) s->n[k]);
			}
		}
	} else if (s->precision != FFTD_F64 && s->precision != FFTD_F32) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown precision %d", (int) s->precision);
	}
	if (s->kind != FFTD_C2C && s->kind != FFTD_R2C && s->kind != FFTD_C2R) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown transform kind %d", (int) s->kind);
	}
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return cuda_fail(e, "cudaSetDevice", msg, msglen);
	}

	cuda_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return fftd__errmsg(
		    FFTD_ENOMEM, msg, msglen, "no memory for a plan");
	}
	p->algo      = (cuda_algo) a;
	p->prec      = s->precision;
	p->kind      = s->kind;
	p->direction = s->kind == FFTD_R2C ? CUFFT_FORWARD
	    : s->kind == FFTD_C2R          ? CUFFT_INVERSE
	                                   : (int) s->direction;
	p->shape     = *s;

	int rv = make_unit(
	    st, p, s, s->batch, st->stream, NULL, &p->main, msg, msglen);
	if (rv != FFTD_OK) {
		free(p);
		return rv;
	}
	p->next = st->plans;
	if (st->plans != NULL) {
		st->plans->prev = p;
	}
	st->plans = p;
	*planp    = p;
	*bytes    = p->main.held;
	return FFTD_OK;
}

static void
cuda_destroy(fftd__device *dev, void *plan)
{
	cuda_state *st = dev->state;
	cuda_plan  *p  = plan;
	if (p == NULL) {
		return;
	}
	(void) cudaSetDevice(st->ordinal);
	if (p->prev != NULL) {
		p->prev->next = p->next;
	} else {
		st->plans = p->next;
	}
	if (p->next != NULL) {
		p->next->prev = p->prev;
	}
	plan_free(st, p);
}

// exec_fft runs the plan's cuFFT call on device buffers.
static int
exec_fft(const cuda_plan *p, cufftHandle h, void *din, void *dout, char *msg,
    size_t msglen)
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
		return cufft_fail(r, call, msg, msglen);
	}
	return FFTD_OK;
}

// exec_unit enqueues unit u's transform of din into dout on stream. A
// cuFFT handle was bound to this same stream when it was made; a tc plan
// takes it here, with the unit's own workspace (used on no other stream).
static int
exec_unit(const cuda_plan *p, const unit *u, cudaStream_t stream, void *din,
    void *dout, char *msg, size_t msglen)
{
	if (u->is_tc) {
		int rc = fftd__tc_execute(u->tc, din, dout, u->work, stream);
		if (rc != FFTD__TC_OK) {
			return tc_fail(rc, "fftd__tc_execute", msg, msglen);
		}
		return FFTD_OK;
	}
	return exec_fft(p, u->handle, din, dout, msg, msglen);
}

// dev_transform enqueues, on stream, everything between the input's
// arrival in din and the output's departure from dout: zeroing the
// output's gaps, the FFT (unit u, whichever algorithm), the scaling. The
// tc kernels are unnormalized in both directions like cuFFT, so the one
// scale pass serves all algorithms.
static int
dev_transform(cudaStream_t stream, const cuda_plan *p, const unit *u,
    const fftd__shape *s, void *din, void *dout, char *msg, size_t msglen)
{
	cudaError_t e;
	if (fftd__side_has_gaps(&s->out, s->rank, s->batch)) {
		e = cudaMemsetAsync(dout, 0, (size_t) s->out.bytes, stream);
		if (e != cudaSuccess) {
			return cuda_fail(e, "cudaMemsetAsync", msg, msglen);
		}
	}
	int rv = exec_unit(p, u, stream, din, dout, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	double f = fftd__norm_factor(s);
	if (f != 1.0) {
		// The whole extent: gaps are zero and stay zero.
		e = (cudaError_t) fftd__kern_scale(
		    dout, (int) s->precision, fftd__out_reals(s), f, stream);
		if (e != cudaSuccess) {
			return cuda_fail(e, "fftd__kern_scale", msg, msglen);
		}
	}
	return FFTD_OK;
}

// is_pinned says whether host memory at ptr is page-locked (cudaHostAlloc
// or cudaHostRegister), so DMA can use it directly.
static bool
is_pinned(const void *ptr)
{
	struct cudaPointerAttributes a;
	if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
		(void) cudaGetLastError();
		return false;
	}
	return a.type == cudaMemoryTypeHost;
}

// --- split-batch pipeline ---------------------------------------------------
//
// A large batch is cut into chunks of whole transforms that run on the
// pipeline's K streams in turn, so that the H2D copy of chunk i+1, the FFT
// of chunk i and the D2H copy of chunk i-1 overlap (PCIe is full duplex),
// and, when the caller's memory is not pinned, the CPU's copy into the
// staging buffer of one chunk overlaps the transfers of the others. It
// applies when transforms do not interleave (each side's distance is at
// least one transform's extent), so each chunk is one contiguous range on
// both sides, and when the output has no gaps (the ranges between chunks
// then need no zeroing).

// chunk_of returns the transforms per chunk for s, or 0 when s is not
// pipelined.
static int64_t
chunk_of(const cuda_state *st, const fftd__shape *s)
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

// grow_pipe sizes pipeline stream buffers, within the device budget.
static int
grow_pipe(cuda_state *st, pipe_stream *ps, size_t nin, size_t nout,
    bool stage_in, bool stage_out, char *msg, size_t msglen)
{
	buf   *d[2]    = { &ps->d_in, &ps->d_out };
	size_t need[2] = { nin, nout };
	for (int i = 0; i < 2; i++) {
		if (d[i]->cap >= need[i]) {
			continue;
		}
		st->pipe_bytes -= d[i]->cap;
		buf_free_dev(d[i]);
		uint64_t held = st->plan_bytes + st->pipe_bytes + st->d_in.cap
		    + st->d_out.cap;
		if (held + need[i] > st->budget) {
			// The single-shot buffers are a cache: drop them first.
			buf_free_dev(&st->d_in);
			buf_free_dev(&st->d_out);
			held = st->plan_bytes + st->pipe_bytes;
		}
		if (held > st->budget || need[i] > st->budget - held) {
			return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
			    "pipeline chunk needs %.1f MiB of device memory; "
			    "budget %.1f MiB, %.1f MiB held",
			    mib(need[i]), mib(st->budget), mib(held));
		}
		cudaError_t e = cudaMalloc(&d[i]->p, need[i]);
		if (e != cudaSuccess) {
			d[i]->p = NULL;
			return cuda_fail(
			    e, "cudaMalloc (pipeline)", msg, msglen);
		}
		d[i]->cap = need[i];
		st->pipe_bytes += need[i];
	}
	int rv = FFTD_OK;
	if (stage_in) {
		rv = grow_host(&ps->h_in, nin, msg, msglen);
	}
	if (rv == FFTD_OK && stage_out) {
		rv = grow_host(&ps->h_out, nout, msg, msglen);
	}
	return rv;
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

static int
pipeline_execute(cuda_state *st, cuda_plan *p, const fftd__shape *s, int64_t cb,
    const void *in, void *out, char *msg, size_t msglen)
{
	int64_t     B      = s->batch;
	int64_t     nch    = (B + cb - 1) / cb;
	int         K      = st->nstreams < nch ? st->nstreams : (int) nch;
	bool        pin_in = is_pinned(in), pin_out = is_pinned(out);
	fftd__shape full, last;
	chunk_shape(&full, s, cb);
	chunk_shape(&last, s, B - (nch - 1) * cb);
	int rv;

	if (p->chunk != cb) {
		// Made on first use: one unit per stream (a cuFFT handle runs
		// on one stream with one workspace; a tc plan is shared, its
		// workspace not), one for the last chunk.
		pipe_units_free(st, p);
	}
	for (int k = 0; k < K; k++) {
		// Stream 0's unit is made first and owns the tc plan.
		fftd__tc_plan *share = k > 0 ? p->sub[0].tc : NULL;
		if (!p->sub[k].made
		    && (rv = make_unit(st, p, s, cb, st->ps[k].stream, share,
		            &p->sub[k], msg, msglen))
		        != FFTD_OK) {
			return rv;
		}
		if ((rv = grow_pipe(st, &st->ps[k], (size_t) full.in.bytes,
		         (size_t) full.out.bytes, !pin_in, !pin_out, msg,
		         msglen))
		    != FFTD_OK) {
			return rv;
		}
	}
	int tail_k = (int) ((nch - 1) % K);
	if (last.batch != cb && !p->tail.made
	    && (rv = make_unit(st, p, s, last.batch, st->ps[tail_k].stream,
	            NULL, &p->tail, msg, msglen))
	        != FFTD_OK) {
		return rv;
	}
	p->chunk = cb;

	const char *src      = in;
	char       *dst      = out;
	size_t      in_step  = (size_t) (cb * s->in.dist) * s->in.elem_size;
	size_t      out_step = (size_t) (cb * s->out.dist) * s->out.elem_size;
	int64_t     staged[MAX_STREAMS]; // chunk whose output waits in h_out
	for (int k = 0; k < K; k++) {
		staged[k] = -1;
	}
	cudaError_t e = cudaSuccess;
	rv            = FFTD_OK;
	for (int64_t i = 0; i < nch && rv == FFTD_OK; i++) {
		int                k  = (int) (i % K);
		pipe_stream       *ps = &st->ps[k];
		const fftd__shape *cs = i == nch - 1 ? &last : &full;
		const unit        *u  = cs->batch == cb ? &p->sub[k] : &p->tail;
		if (i >= K) {
			// This stream's previous chunk must be out of its
			// buffers.
			if ((e = cudaEventSynchronize(ps->done))
			    != cudaSuccess) {
				rv = cuda_fail(
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
			rv = cuda_fail(e, "cudaMemcpyAsync (H2D)", msg, msglen);
			break;
		}
		rv = dev_transform(
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
			rv = cuda_fail(e, "cudaMemcpyAsync (D2H)", msg, msglen);
			break;
		}
		if (!pin_out) {
			staged[k] = i;
		}
	}
	// Finish every stream, in chunk order, and copy staged outputs out.
	for (int64_t i = nch - K > 0 ? nch - K : 0; i < nch; i++) {
		int          k  = (int) (i % K);
		pipe_stream *ps = &st->ps[k];
		if ((e = cudaStreamSynchronize(ps->stream)) != cudaSuccess
		    && rv == FFTD_OK) {
			rv = cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
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

static int
cuda_execute(fftd__device *dev, void *plan, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	cuda_state *st = dev->state;
	cuda_plan  *p  = plan;
	size_t      ni = (size_t) s->in.bytes, no = (size_t) s->out.bytes;
	cudaError_t e;
	int         rv;

	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	int64_t cb = chunk_of(st, s);
	if (cb > 0) {
		return pipeline_execute(st, p, s, cb, in, out, msg, msglen);
	}
	if ((rv = grow_dev(st, &st->d_in, &st->d_out, ni, "input", msg, msglen))
	        != FFTD_OK
	    || (rv = grow_dev(
	            st, &st->d_out, &st->d_in, no, "output", msg, msglen))
	        != FFTD_OK) {
		return rv;
	}

	// Stage through pinned memory unless the caller's already is.
	const void *src = in;
	void       *dst = out;
	if (!is_pinned(in)) {
		if ((rv = grow_host(&st->h_in, ni, msg, msglen)) != FFTD_OK) {
			return rv;
		}
		memcpy(st->h_in.p, in, ni);
		src = st->h_in.p;
	}
	if (!is_pinned(out)) {
		if ((rv = grow_host(&st->h_out, no, msg, msglen)) != FFTD_OK) {
			return rv;
		}
		dst = st->h_out.p;
	}

	e = cudaMemcpyAsync(
	    st->d_in.p, src, ni, cudaMemcpyHostToDevice, st->stream);
	if (e != cudaSuccess) {
		rv = cuda_fail(e, "cudaMemcpyAsync (H2D)", msg, msglen);
		goto drain;
	}
	rv = dev_transform(
	    st->stream, p, &p->main, s, st->d_in.p, st->d_out.p, msg, msglen);
	if (rv != FFTD_OK) {
		goto drain;
	}
	e = cudaMemcpyAsync(
	    dst, st->d_out.p, no, cudaMemcpyDeviceToHost, st->stream);
	if (e != cudaSuccess) {
		rv = cuda_fail(e, "cudaMemcpyAsync (D2H)", msg, msglen);
		goto drain;
	}
	if ((e = cudaStreamSynchronize(st->stream)) != cudaSuccess) {
		return cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
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

static int
cuda_host_register(
    fftd__device *dev, void *addr, size_t len, char *msg, size_t msglen)
{
	cuda_state *st = dev->state;
	cudaError_t e  = cudaSetDevice(st->ordinal);
	if (e == cudaSuccess) {
		// Portable: every device's context may DMA from it.
		e = cudaHostRegister(addr, len, cudaHostRegisterPortable);
	}
	if (e != cudaSuccess) {
		(void) cudaGetLastError();
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "cudaHostRegister of %.1f MiB: %s (is LimitMEMLOCK high "
		    "enough?)",
		    mib(len), cudaGetErrorString(e));
	}
	return FFTD_OK;
}

static void
cuda_host_unregister(fftd__device *dev, void *addr)
{
	cuda_state *st = dev->state;
	(void) cudaSetDevice(st->ordinal);
	if (cudaHostUnregister(addr) != cudaSuccess) {
		(void) cudaGetLastError();
	}
}

static uint64_t
cuda_memory_in_use(fftd__device *dev)
{
	cuda_state *st = dev->state;
	return st->plan_bytes + st->pipe_bytes + st->d_in.cap + st->d_out.cap;
}

const fftd__backend fftd__backend_cuda = {
	.name            = "cuda",
	.algorithms      = cuda_algorithms,
	.probe           = cuda_probe,
	.open            = cuda_open,
	.close           = cuda_close,
	.plan            = cuda_plan_make,
	.execute         = cuda_execute,
	.destroy         = cuda_destroy,
	.host_register   = cuda_host_register,
	.host_unregister = cuda_host_unregister,
	.memory_in_use   = cuda_memory_in_use,
};

// SPDX-License-Identifier: MIT
//
// cuda.c — the GPU backend: cuFFT on NVIDIA devices, f64 / f32 / f16
// (f16 through cufftXt, power-of-two sizes only, as cuFFT requires). Built
// only with -DFFTD_WITH_CUDA. Later algorithms (tc16, split16: our own
// kernels) plug in beside "cufft" here.
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
// on the stream; dev_transform is the device-side middle, kept separate so
// that a chunked multi-stream pipeline can reuse it.
//
// Device memory: plan workspaces (allocated by us, so counted exactly) and
// the two device buffers stay within cfg->device_budget (0: 90% of the
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
#include "fftd_kernels.h"

_Static_assert(FFTD_KERN_F64 == (int) FFTD_F64 &&
        FFTD_KERN_F32 == (int) FFTD_F32 && FFTD_KERN_F16 == (int) FFTD_F16,
    "fftd_kernels.h precision codes must match fftd_precision");
_Static_assert(CUFFT_FORWARD == (int) FFTD_FORWARD &&
        CUFFT_INVERSE == (int) FFTD_INVERSE,
    "cuFFT and fftd directions must agree");

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

struct cuda_state {
	int          ordinal;
	cudaStream_t stream;
	uint64_t     budget;     // device memory we may hold, bytes
	uint64_t     plan_bytes; // workspaces of the live plans
	buf          d_in, d_out; // device
	buf          h_in, h_out; // pinned host staging
	cuda_plan   *plans;       // live plans, so close can free leftovers
};

struct cuda_plan {
	cuda_plan     *next, *prev;
	cufftHandle    handle;
	void          *work; // workspace we allocated (NULL if none needed)
	size_t         work_bytes;
	fftd_precision prec;
	fftd_kind      kind;
	int            direction;
};

static int
fail(int code, char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
fail(int code, char *msg, size_t msglen, const char *fmt, ...)
{
	if (msg != NULL && msglen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return code;
}

// cuda_fail maps a CUDA error of call to an fftd code, with a message.
static int
cuda_fail(cudaError_t e, const char *call, char *msg, size_t msglen)
{
	(void) cudaGetLastError(); // clear it unless it is sticky
	int code = e == cudaErrorMemoryAllocation
	    ? FFTD_EDEVMEM
	    : FFTD_ECUDAERR + ((int) e & FFTD_ERR_CODE_MASK);
	return fail(code, msg, msglen, "%s: %s (%s)", call,
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
	return fail(
	    code, msg, msglen, "%s: %s (%d)", call, cufft_name(r), (int) r);
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
	if ((e = cudaGetDeviceProperties(&prop, dev->local)) != cudaSuccess) {
		return cuda_fail(e, "cudaGetDeviceProperties", msg, msglen);
	}
	cuda_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return fail(FFTD_ENOMEM, msg, msglen,
		    "no memory for the cuda device state");
	}
	st->ordinal = dev->local;
	uint64_t total = prop.totalGlobalMem;
	st->budget     = total / 10 * 9;
	if (cfg->device_budget != 0) {
		st->budget = cfg->device_budget < total ? cfg->device_budget
		                                        : total;
	}
	e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		free(st);
		return cuda_fail(e, "cudaStreamCreateWithFlags", msg, msglen);
	}
	// Names fit in 64 in practice; a longer one is cut, not refused.
	size_t nl = strnlen(prop.name, sizeof(prop.name));
	if (nl >= sizeof(dev->name)) {
		nl = sizeof(dev->name) - 1;
	}
	memcpy(dev->name, prop.name, nl);
	dev->name[nl] = '\0';
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
		return fail(FFTD_EDEVMEM, msg, msglen,
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
		return fail(FFTD_ENOMEM, msg, msglen,
		    "cudaHostAlloc of %.1f MiB of staging: %s", mib(want),
		    cudaGetErrorString(e));
	}
	b->cap = want;
	return FFTD_OK;
}

static void
plan_free(cuda_state *st, cuda_plan *p)
{
	(void) cufftDestroy(p->handle);
	if (p->work != NULL) {
		(void) cudaFree(p->work);
	}
	st->plan_bytes -= p->work_bytes;
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
	(void) cudaStreamDestroy(st->stream);
	free(st);
	dev->state = NULL;
}

static bool
is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

static int
cuda_plan_make(fftd__device *dev, const fftd__shape *s, const char *algorithm,
    void **planp, uint64_t *bytes, char *msg, size_t msglen)
{
	cuda_state *st = dev->state;
	cufftResult r;
	cudaError_t e;

	if (algorithm == NULL || strcmp(algorithm, "cufft") != 0) {
		return fail(FFTD_EUNSUPPORTED, msg, msglen,
		    "algorithm \"%s\" is not served by the cuda backend",
		    algorithm ? algorithm : "(null)");
	}
	if (s->precision == FFTD_F16) {
		for (int k = 0; k < s->rank; k++) {
			if (!is_pow2(s->n[k])) {
				return fail(FFTD_EUNSUPPORTED, msg, msglen,
				    "cuFFT does f16 only for power-of-two "
				    "sizes: n[%d] = %lld",
				    k, (long long) s->n[k]);
			}
		}
	} else if (s->precision != FFTD_F64 && s->precision != FFTD_F32) {
		return fail(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown precision %d", (int) s->precision);
	}
	if (s->kind != FFTD_C2C && s->kind != FFTD_R2C && s->kind != FFTD_C2R) {
		return fail(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown transform kind %d", (int) s->kind);
	}
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return cuda_fail(e, "cudaSetDevice", msg, msglen);
	}

	cuda_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return fail(FFTD_ENOMEM, msg, msglen, "no memory for a plan");
	}
	p->prec      = s->precision;
	p->kind      = s->kind;
	p->direction = s->kind == FFTD_R2C ? CUFFT_FORWARD
	    : s->kind == FFTD_C2R          ? CUFFT_INVERSE
	                                   : (int) s->direction;
	if ((r = cufftCreate(&p->handle)) != CUFFT_SUCCESS) {
		free(p);
		return cufft_fail(r, "cufftCreate", msg, msglen);
	}
	// We allocate the workspace ourselves, after checking the budget.
	if ((r = cufftSetAutoAllocation(p->handle, 0)) != CUFFT_SUCCESS) {
		(void) cufftDestroy(p->handle);
		free(p);
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
		call = "cufftXtMakePlanMany";
		r    = cufftXtMakePlanMany(p->handle, s->rank, n, ie,
		       s->in.stride, s->in.dist, it, oe, s->out.stride,
		       s->out.dist, ot, s->batch, &work, CUDA_C_16F);
	} else {
		bool      d = s->precision == FFTD_F64;
		cufftType t = s->kind == FFTD_C2C
		    ? (d ? CUFFT_Z2Z : CUFFT_C2C)
		    : s->kind == FFTD_R2C ? (d ? CUFFT_D2Z : CUFFT_R2C)
		                          : (d ? CUFFT_Z2D : CUFFT_C2R);
		call = "cufftMakePlanMany64";
		r    = cufftMakePlanMany64(p->handle, s->rank, n, ie,
		       s->in.stride, s->in.dist, oe, s->out.stride,
		       s->out.dist, t, s->batch, &work);
	}
	if (r == CUFFT_SUCCESS) {
		call = "cufftGetSize";
		r    = cufftGetSize(p->handle, &work);
	}
	if (r != CUFFT_SUCCESS) {
		(void) cufftDestroy(p->handle);
		free(p);
		if (r == CUFFT_INVALID_SIZE || r == CUFFT_NOT_SUPPORTED ||
		    r == CUFFT_NOT_IMPLEMENTED) {
			return fail(FFTD_EUNSUPPORTED, msg, msglen,
			    "%s: %s: cuFFT does not support this shape", call,
			    cufft_name(r));
		}
		return cufft_fail(r, call, msg, msglen);
	}

	// Budget: the request buffers are a cache, so drop them before
	// refusing a plan for their sake.
	uint64_t bufs = st->d_in.cap + st->d_out.cap;
	if (st->plan_bytes + work + bufs > st->budget) {
		buf_free_dev(&st->d_in);
		buf_free_dev(&st->d_out);
	}
	if (st->plan_bytes > st->budget ||
	    work > st->budget - st->plan_bytes) {
		(void) cufftDestroy(p->handle);
		free(p);
		return fail(FFTD_EDEVMEM, msg, msglen,
		    "plan needs %.1f MiB of cuFFT workspace; device budget "
		    "%.1f MiB, %.1f MiB held by other plans",
		    mib(work), mib(st->budget), mib(st->plan_bytes));
	}
	if (work > 0) {
		if ((e = cudaMalloc(&p->work, work)) != cudaSuccess) {
			(void) cufftDestroy(p->handle);
			free(p);
			return cuda_fail(e, "cudaMalloc (cuFFT workspace)", msg,
			    msglen);
		}
		if ((r = cufftSetWorkArea(p->handle, p->work)) !=
		    CUFFT_SUCCESS) {
			(void) cudaFree(p->work);
			(void) cufftDestroy(p->handle);
			free(p);
			return cufft_fail(r, "cufftSetWorkArea", msg, msglen);
		}
	}
	if ((r = cufftSetStream(p->handle, st->stream)) != CUFFT_SUCCESS) {
		if (p->work != NULL) {
			(void) cudaFree(p->work);
		}
		(void) cufftDestroy(p->handle);
		free(p);
		return cufft_fail(r, "cufftSetStream", msg, msglen);
	}
	p->work_bytes = work;
	st->plan_bytes += work;

	p->next = st->plans;
	if (st->plans != NULL) {
		st->plans->prev = p;
	}
	st->plans = p;
	*planp    = p;
	*bytes    = work;
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
exec_fft(const cuda_plan *p, void *din, void *dout, char *msg, size_t msglen)
{
	cufftResult r;
	const char *call;
	if (p->prec == FFTD_F16) {
		call = "cufftXtExec";
		r    = cufftXtExec(p->handle, din, dout, p->direction);
	} else if (p->prec == FFTD_F64) {
		switch (p->kind) {
		case FFTD_C2C:
			call = "cufftExecZ2Z";
			r    = cufftExecZ2Z(p->handle, din, dout, p->direction);
			break;
		case FFTD_R2C:
			call = "cufftExecD2Z";
			r    = cufftExecD2Z(p->handle, din, dout);
			break;
		default:
			call = "cufftExecZ2D";
			r    = cufftExecZ2D(p->handle, din, dout);
			break;
		}
	} else {
		switch (p->kind) {
		case FFTD_C2C:
			call = "cufftExecC2C";
			r    = cufftExecC2C(p->handle, din, dout, p->direction);
			break;
		case FFTD_R2C:
			call = "cufftExecR2C";
			r    = cufftExecR2C(p->handle, din, dout);
			break;
		default:
			call = "cufftExecC2R";
			r    = cufftExecC2R(p->handle, din, dout);
			break;
		}
	}
	if (r != CUFFT_SUCCESS) {
		return cufft_fail(r, call, msg, msglen);
	}
	return FFTD_OK;
}

// dev_transform enqueues, on stream, everything between the input's
// arrival in din and the output's departure from dout: zeroing the
// output's gaps, the FFT, the scaling.
static int
dev_transform(cuda_state *st, const cuda_plan *p, const fftd__shape *s,
    void *din, void *dout, char *msg, size_t msglen)
{
	cudaError_t e;
	if (fftd__side_has_gaps(&s->out, s->rank, s->batch)) {
		e = cudaMemsetAsync(dout, 0, (size_t) s->out.bytes, st->stream);
		if (e != cudaSuccess) {
			return cuda_fail(e, "cudaMemsetAsync", msg, msglen);
		}
	}
	int rv = exec_fft(p, din, dout, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	double f = fftd__norm_factor(s);
	if (f != 1.0) {
		// The whole extent: gaps are zero and stay zero.
		e = (cudaError_t) fftd_kern_scale(dout, (int) s->precision,
		    fftd__out_reals(s), f, st->stream);
		if (e != cudaSuccess) {
			return cuda_fail(e, "fftd_kern_scale", msg, msglen);
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
	if ((rv = grow_dev(st, &st->d_in, &st->d_out, ni, "input", msg,
	         msglen)) != FFTD_OK ||
	    (rv = grow_dev(st, &st->d_out, &st->d_in, no, "output", msg,
	         msglen)) != FFTD_OK) {
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
	rv = dev_transform(st, p, s, st->d_in.p, st->d_out.p, msg, msglen);
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

static const char *const cuda_algorithms[] = { "cufft", NULL };

const fftd__backend fftd__backend_cuda = {
	.name       = "cuda",
	.algorithms = cuda_algorithms,
	.probe      = cuda_probe,
	.open       = cuda_open,
	.close      = cuda_close,
	.plan       = cuda_plan_make,
	.execute    = cuda_execute,
	.destroy    = cuda_destroy,
};

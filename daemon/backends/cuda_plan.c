// SPDX-License-Identifier: MIT
//
// cuda_plan.c — the cuda backend's plans: which algorithm serves which
// shape (pure checks, no GPU), the device memory a tc plan's tables take,
// units (a cuFFT handle or a tc plan with the workspace we allocate for it,
// after checking the budget: cuda_memory.c) and plans (a main unit for the
// whole batch; the pipeline's units, made by cuda_pipeline.c on first use).
// Running a unit is cuda_exec.c's. Plan creation, workspace sizing and
// release are kept in separate sections below; make_cufft_unit still
// creates the handle, sizes, reserves and allocates in one go.

#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "errmsg.h"
#include "log.h"
#include "tc.h"

const char *const fftd__cuda_algorithms[]
    = { "cufft", "tc16", "split16", NULL };
_Static_assert(sizeof(fftd__cuda_algorithms) / sizeof(fftd__cuda_algorithms[0])
        == FFTD__CUDA_ALG_COUNT + 1,
    "fftd__cuda_algorithms and fftd__cuda_algo must list the same "
    "algorithms");

// --- which algorithm serves which shape (no GPU, any thread) -----------------

// is_pow2 says whether n is a power of two.
static bool
is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

// tc_algo is the kernels' code (tc.h) of algorithm a (tc16 or split16).
static fftd__tc_algo
tc_algo(fftd__cuda_algo a)
{
	return a == FFTD__CUDA_ALG_TC16 ? FFTD__TC_TC16 : FFTD__TC_SPLIT16;
}

// prec_name names precision p, for messages.
static const char *
prec_name(fftd_precision p)
{
	return p == FFTD_F64 ? "f64"
	    : p == FFTD_F32  ? "f32"
	    : p == FFTD_F16  ? "f16"
	                     : "?";
}

// side_points is the number of elements of one transform on side sd: the
// product of its logical sizes (for the complex side of R2C and C2R, the
// last one is n/2 + 1).
static int64_t
side_points(const fftd__side *sd, int rank)
{
	int64_t p = 1;
	for (int k = 0; k < rank; k++) {
		p *= sd->n[k];
	}
	return p;
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
	return s->batch == 1 || sd->dist == side_points(sd, s->rank);
}

// tc_type is the kernels' code (tc.h) of transform kind k.
static fftd__tc_type
tc_type(fftd_kind k)
{
	return k == FFTD_R2C ? FFTD__TC_R2C
	    : k == FFTD_C2R  ? FFTD__TC_C2R
	                     : FFTD__TC_C2C;
}

// tc_size_why writes into why (len bytes) why the kernels refuse the sizes
// of s (a dense layout of a known kind and rank 1 .. 3 whose planning
// failed with rc), naming the range that applies to this kind and rank.
static void
tc_size_why(const fftd__shape *s, int rc, char *why, size_t len)
{
	bool real = s->kind != FFTD_C2C;
	int  k    = 0;
	while (k < s->rank - 1 && is_pow2(s->n[k])) {
		k++;
	}
	if (!is_pow2(s->n[k])) {
		snprintf(why, len, "has n[%d] = %lld, not a power of two", k,
		    (long long) s->n[k]);
	} else if (rc != FFTD__TC_EUNSUPPORTED) {
		snprintf(why, len,
		    "has batch %lld: too many points for one launch",
		    (long long) s->batch);
	} else if (s->rank == 1) {
		int64_t lo = real ? FFTD__TC_MIN_REAL_1D : FFTD__TC_MIN_LEN;
		bool    in = s->n[0] >= lo && s->n[0] <= FFTD__TC_MAX_1D;
		snprintf(why, len, "has n = %lld, %s", (long long) s->n[0],
		    in         ? "a size the planner cannot split"
		        : real ? "outside 512 .. 2^27 (real rank 1)"
		               : "outside 256 .. 2^27 (rank 1)");
	} else if (s->rank == 2) {
		snprintf(why, len,
		    "has n = %lld x %lld, outside %d .. %d a side (rank 2)",
		    (long long) s->n[0], (long long) s->n[1], FFTD__TC_MIN_LEN,
		    FFTD__TC_MAX_STRIDED_LEN);
	} else {
		snprintf(why, len,
		    "has n = %lld x %lld x %lld, outside %d .. %d a side%s "
		    "(rank 3)",
		    (long long) s->n[0], (long long) s->n[1],
		    (long long) s->n[2], FFTD__TC_MIN_3D, FFTD__TC_MAX_3D,
		    real ? " with the last >= 64" : "");
	}
}

// tc_check returns FFTD_OK when algorithm a (tc16 or split16) serves shape
// s, else FFTD_EUNSUPPORTED with what it serves and why this plan is not
// that. Needs no GPU.
static int
tc_check(fftd__cuda_algo a, const fftd__shape *s, char *msg, size_t msglen)
{
	fftd_precision want = a == FFTD__CUDA_ALG_TC16 ? FFTD_F16 : FFTD_F32;
	char           why[200] = "";
	if (s->precision != want) {
		snprintf(why, sizeof(why), "is %s", prec_name(s->precision));
	} else if (s->kind != FFTD_C2C && s->kind != FFTD_R2C
	    && s->kind != FFTD_C2R) {
		snprintf(why, sizeof(why), "is of an unknown kind");
	} else if (s->rank < 1 || s->rank > 3) {
		snprintf(why, sizeof(why), "is rank %d", s->rank);
	} else if (!tc_dense(&s->in, s) || !tc_dense(&s->out, s)) {
		const fftd__side *sd = !tc_dense(&s->in, s) ? &s->in : &s->out;
		char              emb[64];
		int               k = snprintf(
		                  emb, sizeof(emb), "%lld", (long long) sd->embed[0]);
		for (int i = 1;
		     i < s->rank && k > 0 && (size_t) k < sizeof(emb); i++) {
			k += snprintf(emb + k, sizeof(emb) - (size_t) k,
			    "x%lld", (long long) sd->embed[i]);
		}
		snprintf(why, sizeof(why),
		    "has a strided, padded or spaced-out %sput layout (stride "
		    "%lld, embed %s, dist %lld; dense is stride 1, embed = n, "
		    "dist %lld)",
		    sd == &s->in ? "in" : "out", (long long) sd->stride, emb,
		    (long long) sd->dist, (long long) side_points(sd, s->rank));
	} else {
		int rc = fftd__tc_plan_supported(
		    tc_algo(a), tc_type(s->kind), s->rank, s->n, s->batch);
		if (rc == FFTD__TC_OK) {
			return FFTD_OK;
		}
		tc_size_why(s, rc, why, sizeof(why));
	}
	return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
	    "%s serves %s C2C, R2C and C2R of power-of-two sizes the tc "
	    "kernels plan, in dense contiguous batches: rank 1 (C2C %d .. %lld "
	    "points, R2C/C2R %d .. %lld), rank 2 (each side %d .. %d), rank 3 "
	    "(each side %d .. %d; R2C/C2R with the last >= %d); this plan %s",
	    fftd__cuda_algorithms[a], prec_name(want), FFTD__TC_MIN_LEN,
	    (long long) FFTD__TC_MAX_1D, FFTD__TC_MIN_REAL_1D,
	    (long long) FFTD__TC_MAX_1D, FFTD__TC_MIN_LEN,
	    FFTD__TC_MAX_STRIDED_LEN, FFTD__TC_MIN_3D, FFTD__TC_MAX_3D,
	    FFTD__TC_MIN_REAL_LAST, why);
}

// --- device memory of a tc plan ----------------------------------------------

// tc_table_bytes bounds the device memory of a tc plan's twiddle tables:
// one float2 per point of each pass's length (a pass is at most
// FFTD__TC_MAX_LEN points; 2D and 3D have one pass a side; the kernels
// make the four-step twiddles themselves, kernels/tc16_plan.cu). The kernels'
// ABI does not report it, and a plan cache that counted tc plans as free would
// keep any number of them; a bound from tc.h's public limits stays right when
// the planner changes how it splits a size.
static uint64_t
tc_table_bytes(const fftd__shape *s)
{
	uint64_t pts;
	if (s->rank >= 2) {
		pts = 0; // one pass a side (real: the last halved, no table)
		for (int k = 0; k < s->rank; k++) {
			pts += (uint64_t) s->n[k];
		}
	} else {
		uint64_t most
		    = (uint64_t) FFTD__TC_MAX_PASSES * FFTD__TC_MAX_LEN;
		pts = (uint64_t) s->n[0] < most ? (uint64_t) s->n[0] : most;
	}
	return pts * 2 * sizeof(float);
}

// --- units: made with their workspace, released ------------------------------

// make_cufft_unit creates a cuFFT handle for shape s with `batch`
// transforms, on `stream`, with a workspace we allocate after checking the
// budget.
static int
make_cufft_unit(fftd__cuda_state *st, const fftd__shape *s, int64_t batch,
    cudaStream_t stream, fftd__cuda_unit *u, char *msg, size_t msglen)
{
	cufftResult r;
	cudaError_t e;
	memset(u, 0, sizeof(*u));
	if ((r = cufftCreate(&u->handle)) != CUFFT_SUCCESS) {
		return fftd__cufft_fail(r, "cufftCreate", msg, msglen);
	}
	// We allocate the workspace ourselves, after checking the budget.
	if ((r = cufftSetAutoAllocation(u->handle, 0)) != CUFFT_SUCCESS) {
		(void) cufftDestroy(u->handle);
		return fftd__cufft_fail(
		    r, "cufftSetAutoAllocation", msg, msglen);
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
			    fftd__cufft_name(r));
		}
		return fftd__cufft_fail(r, call, msg, msglen);
	}

	int rv = fftd__cuda_reserve_plan_bytes(
	    st, work, "cuFFT workspace", msg, msglen);
	if (rv != FFTD_OK) {
		(void) cufftDestroy(u->handle);
		return rv;
	}
	if (work > 0) {
		if ((e = cudaMalloc(&u->work, work)) != cudaSuccess) {
			(void) cufftDestroy(u->handle);
			fftd__cuda_release_plan_bytes(st, work);
			return fftd__cuda_fail(
			    e, "cudaMalloc (cuFFT workspace)", msg, msglen);
		}
		if ((r = cufftSetWorkArea(u->handle, u->work))
		    != CUFFT_SUCCESS) {
			(void) cudaFree(u->work);
			(void) cufftDestroy(u->handle);
			fftd__cuda_release_plan_bytes(st, work);
			return fftd__cufft_fail(
			    r, "cufftSetWorkArea", msg, msglen);
		}
	}
	if ((r = cufftSetStream(u->handle, stream)) != CUFFT_SUCCESS) {
		if (u->work != NULL) {
			(void) cudaFree(u->work);
		}
		(void) cufftDestroy(u->handle);
		fftd__cuda_release_plan_bytes(st, work);
		return fftd__cufft_fail(r, "cufftSetStream", msg, msglen);
	}
	// The reservation above counted work in plan_bytes already.
	u->work_bytes = work;
	u->held       = work;
	u->made       = true;
	return FFTD_OK;
}

// make_tc_unit makes a tc plan for shape s (checked by tc_check) with
// `batch` transforms, reading in_io and writing out_io elements (tc.h,
// fftd__tc_io), or borrows `share` (a plan of the same shape, batch and
// kinds), and allocates the workspace it needs after checking the budget.
// fftd__tc_plan_create_io works on the current device (the caller set it).
static int
make_tc_unit(fftd__cuda_state *st, fftd__cuda_algo a, const fftd__shape *s,
    int64_t batch, fftd__tc_io in_io, fftd__tc_io out_io, fftd__tc_plan *share,
    fftd__cuda_unit *u, char *msg, size_t msglen)
{
	uint64_t tables = 0;
	int      rc;
	memset(u, 0, sizeof(*u));
	u->is_tc = true;
	if (share != NULL) {
		u->tc = share;
	} else {
		rc = fftd__tc_plan_create_io(&u->tc, tc_algo(a),
		    tc_type(s->kind), s->rank, s->n, batch, (int) s->direction,
		    in_io, out_io);
		if (rc != FFTD__TC_OK) {
			return fftd__cuda_tc_fail(
			    rc, "fftd__tc_plan_create_io", msg, msglen);
		}
		u->tc_owned = true;
		tables      = tc_table_bytes(s);
	}
	size_t work     = 0;
	int    rv       = FFTD_OK;
	bool   reserved = false;
	if ((rc = fftd__tc_workspace_size(u->tc, &work)) != FFTD__TC_OK) {
		rv = fftd__cuda_tc_fail(
		    rc, "fftd__tc_workspace_size", msg, msglen);
	} else {
		rv = fftd__cuda_reserve_plan_bytes(
		    st, work + tables, "tc workspace and tables", msg, msglen);
		reserved = rv == FFTD_OK;
	}
	if (rv == FFTD_OK && work > 0) {
		cudaError_t e = cudaMalloc(&u->work, work);
		if (e != cudaSuccess) {
			u->work = NULL;

			rv = fftd__cuda_fail(
			    e, "cudaMalloc (tc work)", msg, msglen);
		}
	}
	if (rv != FFTD_OK && reserved) {
		fftd__cuda_release_plan_bytes(st, work + tables);
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
		    fftd__cuda_algorithms[a], (long long) batch, d);
	}
	// The reservation above counted these bytes in plan_bytes already.
	u->work_bytes = work;
	u->held       = work + tables;
	u->made       = true;
	return FFTD_OK;
}

static void unit_free(fftd__cuda_state *st, fftd__cuda_unit *u);

// fftd__cuda_make_unit makes plan p's unit for shape s with `batch` transforms
// that runs on `stream`. share: a tc plan of the same batch to borrow (pipeline
// streams after the first), NULL to make one; cuFFT handles are never
// shared (a handle is bound to one stream and one workspace).
int
fftd__cuda_make_unit(fftd__cuda_state *st, const fftd__cuda_plan *p,
    const fftd__shape *s, int64_t batch, cudaStream_t stream,
    fftd__tc_plan *share, fftd__cuda_unit *u, char *msg, size_t msglen)
{
	int rv;
	if (p->algo == FFTD__CUDA_ALG_CUFFT) {
		rv = make_cufft_unit(st, s, batch, stream, u, msg, msglen);
	} else {
		// a converted tc16 plan converts in its own passes
		fftd__tc_io in_io = FFTD__TC_IO_NATIVE, out_io = in_io;
		(void) fftd__cuda_conv_fused(p, &in_io, &out_io);
		rv = make_tc_unit(st, p->algo, s, batch, in_io, out_io, share,
		    u, msg, msglen);
	}
	if (rv == FFTD_OK && p->conv) {
		rv = fftd__cuda_conv_alloc(st, p, u, msg, msglen);
		if (rv != FFTD_OK) {
			unit_free(st, u);
		}
	}
	return rv;
}

// unit_free releases unit u: its cuFFT handle or (when it owns it) its tc
// plan, and its workspace, and takes its bytes off the plans' count.
static void
unit_free(fftd__cuda_state *st, fftd__cuda_unit *u)
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
	fftd__cuda_conv_free(u);
	fftd__cuda_release_plan_bytes(st, u->held);
	memset(u, 0, sizeof(*u));
}

// fftd__cuda_pipe_units_free frees a plan's pipeline units. Stream 0's unit
// owns the tc plan that the other streams' units borrow, so it goes last: no
// unit is ever left pointing at a destroyed plan.
void
fftd__cuda_pipe_units_free(fftd__cuda_state *st, fftd__cuda_plan *p)
{
	for (int k = FFTD__CUDA_MAX_STREAMS - 1; k >= 0; k--) {
		unit_free(st, &p->sub[k]);
	}
	unit_free(st, &p->tail);
	p->chunk = 0;
}

// --- plans -------------------------------------------------------------------

// fftd__cuda_plan_make makes a plan (backend.h: plan): it checks that the
// named algorithm serves s (tc_check for the tc algorithms; cuFFT's own
// limits otherwise), then makes the plan's main unit, for the whole batch
// on the request stream, and links the plan into the state's list. The
// pipeline's units are made later, on the plan's first pipelined execution
// (cuda_pipeline.c). *bytes is what the main unit holds.
int
fftd__cuda_plan_make(fftd__device *dev, const fftd__shape *s,
    const char *algorithm, void **planp, uint64_t *bytes, char *msg,
    size_t msglen)
{
	fftd__cuda_state  *st = dev->state;
	cudaError_t        e;
	int                a = -1;
	bool               conv;
	fftd__shape        cs;
	const fftd__shape *ds = s; // the data's shape

	for (int i = 0; algorithm != NULL && i < FFTD__CUDA_ALG_COUNT; i++) {
		if (strcmp(algorithm, fftd__cuda_algorithms[i]) == 0) {
			a = i;
		}
	}
	// Accuracy-aware auto's conversions: plan the algorithm on the
	// shape in its computing precision (cuda_convert.c).
	int rc = fftd__cuda_conv_resolve(
	    algorithm, s, &conv, &a, &cs, msg, msglen);
	if (rc != FFTD_OK) {
		return rc;
	}
	if (conv) {
		s = &cs;
	}
	if (a < 0) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "algorithm \"%s\" is not served by the cuda backend",
		    algorithm ? algorithm : "(null)");
	}
	if (a != FFTD__CUDA_ALG_CUFFT) {
		int rv = tc_check((fftd__cuda_algo) a, s, msg, msglen);
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
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}

	fftd__cuda_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return fftd__errmsg(
		    FFTD_ENOMEM, msg, msglen, "no memory for a plan");
	}
	p->algo      = (fftd__cuda_algo) a;
	p->prec      = s->precision;
	p->kind      = s->kind;
	p->direction = s->kind == FFTD_R2C ? CUFFT_FORWARD
	    : s->kind == FFTD_C2R          ? CUFFT_INVERSE
	                                   : (int) s->direction;
	p->shape     = *ds;
	p->conv      = conv;
	p->cshape    = *s;

	int rv = fftd__cuda_make_unit(
	    st, p, s, s->batch, st->stream, NULL, &p->main, msg, msglen);
	if (rv != FFTD_OK) {
		free(p);
		return rv;
	}
	pthread_mutex_lock(&st->mtx);
	p->next = st->plans;
	if (st->plans != NULL) {
		st->plans->prev = p;
	}
	st->plans = p;
	pthread_mutex_unlock(&st->mtx);
	*planp = p;
	*bytes = p->main.held;
	return FFTD_OK;
}

// fftd__cuda_destroy frees a plan (backend.h: destroy): unlinks it and frees
// its units.
void
fftd__cuda_destroy(fftd__device *dev, void *plan)
{
	fftd__cuda_state *st = dev->state;
	fftd__cuda_plan  *p  = plan;
	if (p == NULL) {
		return;
	}
	(void) cudaSetDevice(st->ordinal);
	pthread_mutex_lock(&st->mtx);
	if (p->prev != NULL) {
		p->prev->next = p->next;
	} else {
		st->plans = p->next;
	}
	if (p->next != NULL) {
		p->next->prev = p->prev;
	}
	pthread_mutex_unlock(&st->mtx);
	fftd__cuda_plan_free(st, p);
}

// fftd__cuda_plan_free frees plan p with all its units.
void
fftd__cuda_plan_free(fftd__cuda_state *st, fftd__cuda_plan *p)
{
	unit_free(st, &p->main);
	fftd__cuda_pipe_units_free(st, p);
	free(p);
}

// --- estimates (no GPU work, any thread) -------------------------------------

// The memo of cuFFT's estimates. cufftEstimateMany makes a plan under
// cuFFT's process-wide lock (below), so an estimate can wait 100 ms and
// more for a plan being compiled on another thread; clients that come and go
// ask for the same few shapes again and again, and the answer depends only
// on the arguments, so each is asked once. Direct-mapped: a collision
// replaces the older entry, which costs one more estimate later. Process-
// wide, as the estimate takes no handle and no device.
enum { EST_MEMO = 256, EST_KEY = 8 + 3 * FFTD_MAX_RANK };

typedef struct est_entry {
	bool     used;
	int64_t  key[EST_KEY];
	uint64_t bytes;
} est_entry;

static pthread_mutex_t est_mtx = PTHREAD_MUTEX_INITIALIZER;
static est_entry       est_memo[EST_MEMO];

// est_slot is the memo's slot for key: FNV-1a over its bytes.
static size_t
est_slot(const int64_t *key)
{
	const unsigned char *b = (const unsigned char *) key;
	uint64_t             h = 14695981039346656037ULL;
	for (size_t i = 0; i < sizeof(int64_t) * EST_KEY; i++) {
		h = (h ^ b[i]) * 1099511628211ULL;
	}
	return (size_t) (h % EST_MEMO);
}

// cufft_estimate is cufftEstimateMany's workspace for these arguments,
// from the memo when it was asked before; false where cuFFT refuses.
static bool
cufft_estimate(int rank, const int *n, const int *ie, int is, int id,
    const int *oe, int os, int od, cufftType t, int batch, uint64_t *bytes)
{
	int64_t key[EST_KEY];
	memset(key, 0, sizeof(key));
	key[0] = rank;
	key[1] = (int64_t) t;
	key[2] = batch;
	key[3] = is;
	key[4] = id;
	key[5] = os;
	key[6] = od;
	for (int k = 0; k < rank; k++) {
		key[8 + k]                     = n[k];
		key[8 + FFTD_MAX_RANK + k]     = ie[k];
		key[8 + 2 * FFTD_MAX_RANK + k] = oe[k];
	}
	size_t slot = est_slot(key);
	pthread_mutex_lock(&est_mtx);
	est_entry *e   = &est_memo[slot];
	bool       hit = e->used && memcmp(e->key, key, sizeof(key)) == 0;
	if (hit) {
		*bytes = e->bytes;
	}
	pthread_mutex_unlock(&est_mtx);
	if (hit) {
		return true;
	}
	// Outside the lock: two threads asking for one new shape both ask
	// cuFFT, and both store the same answer.
	size_t work = 0;
	if (cufftEstimateMany(rank, (int *) n, (int *) ie, is, id, (int *) oe,
	        os, od, t, batch, &work)
	    != CUFFT_SUCCESS) {
		return false;
	}
	pthread_mutex_lock(&est_mtx);
	e        = &est_memo[slot];
	e->used  = true;
	e->bytes = work;
	memcpy(e->key, key, sizeof(key));
	pthread_mutex_unlock(&est_mtx);
	*bytes = work;
	return true;
}

// fftd__cuda_plan_estimate is the device bytes fftd__cuda_plan_make would
// count for (s, algorithm) (backend.h: plan_estimate), known before
// planning, so that the plan cache admits or refuses a plan before the
// planner thread spends time on it. cuFFT: its own estimate of the
// workspace (cufftEstimateMany: no handle, no device memory, but not cheap:
// stack samples on the H100 show it making a plan, cufftMakePlanMany,
// under cuFFT's process-wide lock, which a plan being compiled elsewhere
// holds for 100 ms and more; it runs on NNG's task threads, so a burst of
// clients planning at once can hold several of them: hence the memo above);
// f16 plans, which it does not cover, take the estimate of the f32
// plan of the same shape, whose elements are twice as large. tc16 and
// split16: the workspace of the plan's layout (fftd__tc_plan_layout_algo)
// and the tables' bound. 0 where the algorithm does not serve s: plan then
// refuses it and says why.
uint64_t
fftd__cuda_plan_estimate(
    fftd__device *dev, const fftd__shape *s, const char *algorithm)
{
	(void) dev;
	int a = -1;
	for (int i = 0; algorithm != NULL && i < FFTD__CUDA_ALG_COUNT; i++) {
		if (strcmp(algorithm, fftd__cuda_algorithms[i]) == 0) {
			a = i;
		}
	}
	if (a < 0) {
		return 0;
	}
	if (a != FFTD__CUDA_ALG_CUFFT) {
		if (tc_check((fftd__cuda_algo) a, s, NULL, 0) != FFTD_OK) {
			return 0;
		}
		// the workspace fftd__tc_workspace_size will report: the
		// layout's, which the plan is made from (host code, no GPU)
		fftd__tc_layout lay;
		if (fftd__tc_plan_layout_algo(a == FFTD__CUDA_ALG_TC16
		            ? FFTD__TC_TC16
		            : FFTD__TC_SPLIT16,
		        tc_type(s->kind), s->rank, s->n, s->batch, &lay)
		    != FFTD__TC_OK) {
			return 0;
		}
		uint64_t elem = a == FFTD__CUDA_ALG_TC16 ? 4 : 8;
		return (uint64_t) lay.ws_points * elem + tc_table_bytes(s);
	}
	// cuFFT's estimate takes int arguments; a shape past them gets the
	// bound of one copy of the batch in complex elements of its precision,
	// what cuFFT's large multi-pass plans use as workspace.
	uint64_t elem  = s->precision == FFTD_F64 ? 16
	     : s->precision == FFTD_F32           ? 8
	                                          : 4;
	uint64_t bound = (uint64_t) s->batch * (uint64_t) s->total * elem;
	int      n[FFTD_MAX_RANK], ie[FFTD_MAX_RANK], oe[FFTD_MAX_RANK];
	int64_t  big = s->batch > s->in.dist ? s->batch : s->in.dist;
	big          = big > s->out.dist ? big : s->out.dist;
	if (big > INT32_MAX || s->in.stride > INT32_MAX
	    || s->out.stride > INT32_MAX) {
		return bound;
	}
	for (int k = 0; k < s->rank; k++) {
		if (s->in.embed[k] > INT32_MAX || s->out.embed[k] > INT32_MAX) {
			return bound;
		}
		n[k]  = (int) s->n[k];
		ie[k] = (int) s->in.embed[k];
		oe[k] = (int) s->out.embed[k];
	}
	bool      d    = s->precision == FFTD_F64;
	cufftType t    = s->kind == FFTD_C2C ? (d ? CUFFT_Z2Z : CUFFT_C2C)
	       : s->kind == FFTD_R2C         ? (d ? CUFFT_D2Z : CUFFT_R2C)
	                                     : (d ? CUFFT_Z2D : CUFFT_C2R);
	uint64_t  work = 0;
	if (!cufft_estimate(s->rank, n, ie, (int) s->in.stride,
	        (int) s->in.dist, oe, (int) s->out.stride, (int) s->out.dist, t,
	        (int) s->batch, &work)) {
		return bound;
	}
	return work;
}

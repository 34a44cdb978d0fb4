// SPDX-License-Identifier: MIT
//
// cuda_mf_plans.c — what the matched-filter bank keeps between calls
// besides memory (cuda_mf.c): the fourstep engine's second stream and
// events, made on first use; and the cufft engine's cuFFT plans, batched
// out-of-place inverse C2C transforms of n samples, kept per device for a
// few (n, batch) pairs,
// least recently used dropped, because a bank search calls the bank over
// and over with the same shape and making a plan costs about as much as
// filtering a hundred templates. Their workspace is not theirs: cuda_mf.c
// allocates it per call within the device budget and sets it; a cached
// plan holds only cuFFT's own small tables.
//
// Threads: the device's batch worker, holding st->mtx.

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "errmsg.h"

#define CACHED 4

typedef struct cached_plan {
	bool        used;
	int64_t     n;
	int         batch;
	cufftHandle h;
	size_t      work;
	uint64_t    last;
} cached_plan;

struct fftd__mf_plan_cache {
	cached_plan p[CACHED];
	uint64_t    tick;
};

// drop frees one cached plan.
static void
drop(cached_plan *f)
{
	if (f->used) {
		(void) cufftDestroy(f->h);
	}
	memset(f, 0, sizeof(*f));
}

// make builds the plan of f (n, batch set) on the worker's stream, without
// a workspace of its own.
static int
make(fftd__cuda_state *st, cached_plan *f, char *msg, size_t msglen)
{
	long long   n    = f->n;
	const char *call = "cufftCreate";
	cufftResult r    = cufftCreate(&f->h);
	if (r != CUFFT_SUCCESS) {
		return fftd__cufft_fail(r, call, msg, msglen);
	}
	call = "cufftSetAutoAllocation";
	r    = cufftSetAutoAllocation(f->h, 0);
	if (r == CUFFT_SUCCESS) {
		call = "cufftMakePlanMany64";
		r    = cufftMakePlanMany64(f->h, 1, &n, NULL, 1, n, NULL, 1, n,
		       CUFFT_C2C, f->batch, &f->work);
	}
	if (r == CUFFT_SUCCESS) {
		call = "cufftSetStream";
		r    = cufftSetStream(f->h, st->stream);
	}
	if (r != CUFFT_SUCCESS) {
		(void) cufftDestroy(f->h);
		return fftd__cufft_fail(r, call, msg, msglen);
	}
	f->used = true;
	return FFTD_OK;
}

// fftd__cuda_mf_plan finds or makes the f32 inverse C2C plan for batch
// transforms of n samples (out of place, rows n apart); *out gets its
// handle and the workspace it needs (valid until the next call here).
// Errors: FFTD_ENOMEM, FFTD_EBACKEND.
int
fftd__cuda_mf_plan(fftd__cuda_state *st, int64_t n, int batch,
    fftd__mf_cached_plan *out, char *msg, size_t msglen)
{
	if (st->mf_plans == NULL) {
		st->mf_plans = calloc(1, sizeof(*st->mf_plans));
		if (st->mf_plans == NULL) {
			return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
			    "matched filter: no memory for the plan cache");
		}
	}
	fftd__mf_plan_cache *c    = st->mf_plans;
	cached_plan         *slot = &c->p[0];
	for (int i = 0; i < CACHED; i++) {
		cached_plan *f = &c->p[i];
		if (f->used && f->n == n && f->batch == batch) {
			f->last = ++c->tick;
			*out    = (fftd__mf_cached_plan) { f->h, f->work };
			return FFTD_OK;
		}
		if (!f->used || (slot->used && f->last < slot->last)) {
			slot = f;
		}
	}
	drop(slot);
	slot->n     = n;
	slot->batch = batch;
	int rv      = make(st, slot, msg, msglen);
	if (rv != FFTD_OK) {
		memset(slot, 0, sizeof(*slot));
		return rv;
	}
	slot->last = ++c->tick;
	*out       = (fftd__mf_cached_plan) { slot->h, slot->work };
	return FFTD_OK;
}

// AUX_EVENTS is the aux streams' events (cuda_impl.h).
#define AUX_EVENTS (3 + 3 * FFTD__MF_MAX_PARTS)

// aux_event is the aux streams' event i (AUX_EVENTS of them).
static cudaEvent_t *
aux_event(fftd__cuda_state *st, int i)
{
	const int m = FFTD__MF_MAX_PARTS;
	return i < 3    ? &st->mf_ev[i]
	    : i < 3 + m ? &st->mf_xev[i - 3]
	                : &st->mf_pev[(i - 3 - m) / m][(i - 3 - m) % m];
}

// fftd__cuda_mf_aux_stream makes the fourstep bank's second and third
// streams (at the worker stream's priority) and their events on first use;
// false when CUDA could not (the engine then runs on one stream).
bool
fftd__cuda_mf_aux_stream(fftd__cuda_state *st)
{
	if (st->mf_aux) {
		return true;
	}
	int prio = 0;
	if (cudaStreamGetPriority(st->stream, &prio) != cudaSuccess
	    || cudaStreamCreateWithPriority(
	           &st->mf_stream2, cudaStreamNonBlocking, prio)
	        != cudaSuccess) {
		(void) cudaGetLastError();
		return false;
	}
	// The third stream's small kernels (each part's sigma^2 and gather)
	// first when blocks are handed out: at the passes' priority they
	// waited ~190 us behind the passes on the H200.
	int least = 0, greatest = 0;
	if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess
	    || cudaStreamCreateWithPriority(
	           &st->mf_stream3, cudaStreamNonBlocking, greatest)
	        != cudaSuccess) {
		(void) cudaStreamDestroy(st->mf_stream2);
		(void) cudaGetLastError();
		return false;
	}
	for (int i = 0; i < AUX_EVENTS; i++) {
		if (cudaEventCreateWithFlags(
		        aux_event(st, i), cudaEventDisableTiming)
		    != cudaSuccess) {
			while (i-- > 0) {
				(void) cudaEventDestroy(*aux_event(st, i));
			}
			(void) cudaStreamDestroy(st->mf_stream2);
			(void) cudaStreamDestroy(st->mf_stream3);
			(void) cudaGetLastError();
			return false;
		}
	}
	st->mf_aux = true;
	return true;
}

// fftd__cuda_mf_plans_free drops every cached plan and the second stream
// (device close).
void
fftd__cuda_mf_plans_free(fftd__cuda_state *st)
{
	if (st->mf_aux) {
		(void) cudaStreamSynchronize(st->mf_stream2);
		(void) cudaStreamSynchronize(st->mf_stream3);
		for (int i = 0; i < AUX_EVENTS; i++) {
			(void) cudaEventDestroy(*aux_event(st, i));
		}
		(void) cudaStreamDestroy(st->mf_stream2);
		(void) cudaStreamDestroy(st->mf_stream3);
		st->mf_aux = false;
	}
	if (st->mf_plans == NULL) {
		return;
	}
	for (int i = 0; i < CACHED; i++) {
		drop(&st->mf_plans->p[i]);
	}
	free(st->mf_plans);
	st->mf_plans = NULL;
}

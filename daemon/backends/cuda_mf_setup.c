// SPDX-License-Identifier: MIT
//
// cuda_mf_setup.c — what one matched-filter bank call holds on the cuda
// backend (cuda_mf.c runs it; cuda_mf_impl.h): the batch size B, chosen
// from the device budget; the plain engine's cuFFT plans (made per call,
// as the fftw engine does) or the cufft engine's (cached,
// cuda_mf_plans.c), fourstep needing none; one device allocation carved
// into the scratch, the scan's slots, sigma sums, a series row, the f32
// engines' keys, w and 1/S, cufft's output rows, fourstep's twiddle
// tables and cuFFT's workspace, reserved with
// fftd__cuda_reserve_plan_bytes and kept as the next call's cache
// (dropped when anything else needs its room: cuda_memory.c); the
// pinned host copies the batches' results come back into; and the cache
// of the last calls' computed sigma^2 (st->mf_sigma), given to a later
// call of the same templates and PSD.
//
// Threads: the device's batch worker, holding st->mtx (cuda_mf.c).

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_mf_impl.h"
#include "errmsg.h"
#include "mf_kernels.h"

// Scratch per batch, bytes (the brief: at most 256 MiB).
#define SCRATCH_BYTES ((uint64_t) 256 << 20)
// The fused engine's: its input and output rows together, for at most
// FUSED_BATCH templates (kept between calls, so its size costs nothing per
// call; on the H100, 256 at 2^17 samples ran 4-5% faster than 128, and 64
// at 2^20, the most 1 GiB holds, 20% faster than 16).
#define FUSED_SCRATCH_BYTES ((uint64_t) 1 << 30)
#define FUSED_BATCH 256
// The fourstep engine's: its intermediate only (N x 8 bytes a template,
// the slots and sums besides not counted), for at most OWN_BATCH
// templates, so that a bank of 1,024 at 2^17 runs as one batch (one host
// round trip instead of four) and 2^20 in batches of 512: on the H200, a
// 1,024-template call at 2^20 took 8.56-8.72 us a template in batches of
// 512 (4 runs, mean 8.66) against 8.71-8.80 in batches of 256 (2 GiB; 5
// runs, mean 8.77), 1.3%, and 8.65 in one batch of 1,024, whose gather
// and slot copy no later batch overlaps (bench/README.md, stop 30). Never
// more than half of what the device budget has left (first_batch).
// FFTD_MF_OWN_SCRATCH_MIB (MiB), a measurement knob, replaces it.
#define OWN_SCRATCH_BYTES ((uint64_t) 4 << 30)
#define OWN_BATCH 1024
// Templates per batch at most (grid.y of the kernels allows 65535).
#define MAX_BATCH 1024
#define ALIGN 256

// up rounds x up to ALIGN.
static uint64_t
up(uint64_t x)
{
	return (x + ALIGN - 1) / ALIGN * ALIGN;
}

// aux_bytes is the device memory besides the scratch and workspace for a
// batch of b: the scan's slots (key, t, z), flags, sigma sums, series row.
static uint64_t
aux_bytes(const fftd__mf_gpu *g, int64_t b)
{
	uint64_t slots = (uint64_t) b * (uint64_t) g->slots;
	return up(slots * 8) * 2 + up(slots * 16) + up(2 * 8)
	    + up((uint64_t) g->a->count * 8)
	    + (g->a->nseries > 0 ? up((uint64_t) g->width * g->rsize) : 0);
}

// make_plan makes an in-place inverse C2C/Z2Z plan of length N for howmany
// transforms on the worker's stream, without a workspace of its own; *work
// gets the workspace it needs.
static int
make_plan(fftd__mf_gpu *g, int howmany, cufftHandle *h, size_t *work, char *msg,
    size_t msglen)
{
	cufftResult r;
	long long   n = g->a->n;
	if ((r = cufftCreate(h)) != CUFFT_SUCCESS) {
		return fftd__cufft_fail(r, "cufftCreate", msg, msglen);
	}
	const char *call = "cufftSetAutoAllocation";
	r                = cufftSetAutoAllocation(*h, 0);
	if (r == CUFFT_SUCCESS) {
		call = "cufftMakePlanMany64";
		r    = cufftMakePlanMany64(*h, 1, &n, NULL, 1, n, NULL, 1, n,
                    g->f64 ? CUFFT_Z2Z : CUFFT_C2C, howmany, work);
	}
	if (r == CUFFT_SUCCESS) {
		call = "cufftSetStream";
		r    = cufftSetStream(*h, g->st->stream);
	}
	if (r != CUFFT_SUCCESS) {
		(void) cufftDestroy(*h);
		return fftd__cufft_fail(r, call, msg, msglen);
	}
	return FFTD_OK;
}

// drop_plans destroys the plans made so far.
static void
drop_plans(fftd__mf_gpu *g)
{
	if (g->have_plan) {
		(void) cufftDestroy(g->plan);
	}
	if (g->have_tail) {
		(void) cufftDestroy(g->tail);
	}
	g->have_plan = g->have_tail = false;
}

// zout_bytes is the f32 engines' output rows for a batch of b: the whole
// transform (cufft), the searched samples (fourstep, for series rows
// only), or none.
static uint64_t
zout_bytes(const fftd__mf_gpu *g, int64_t b)
{
	if (!g->fused || (g->own && g->a->nseries == 0)) {
		return 0;
	}
	return up(
	    (uint64_t) b * (uint64_t) (g->own ? g->zld : g->a->n) * g->csize);
}

// fused_extra is the device memory the f32 engines need besides the
// plain engine's for a batch of b: the output rows (zout_bytes), the
// packed keys, the sigma partials, w and 1/S, fourstep's tables.
static uint64_t
fused_extra(const fftd__mf_gpu *g, int64_t b)
{
	if (!g->fused) {
		return 0;
	}
	uint64_t slots = (uint64_t) b * (uint64_t) g->slots;
	uint64_t nbins = (uint64_t) (g->a->n / 2 + 1);
	uint64_t tab   = g->own ? fftd__mf_fourstep_table_bytes(g->a->n) : 0;
	return zout_bytes(g, b) + up(slots * 8)
	    + up((uint64_t) b * (uint64_t) g->chunks * 8) + up(nbins * g->csize)
	    + up(nbins * 8) + up(tab);
}

// pick_plans makes (plain) or fetches from the cache (fused) the plans for
// batches of b; *work gets the workspace they need.
static int
pick_plans(fftd__mf_gpu *g, int64_t b, size_t *work, char *msg, size_t msglen)
{
	const fftd__mf_args *a = g->a;
	if (g->own) {
		*work = 0;
		return FFTD_OK;
	}
	if (g->fused) {
		int rv = fftd__cuda_mf_plan(
		    g->st, a->n, (int) b, &g->fp, msg, msglen);
		*work = rv == FFTD_OK ? g->fp.work : 0;
		return rv;
	}
	int    tl = (int) (a->count % b);
	size_t w1 = 0, w2 = 0;
	int    rv    = make_plan(g, (int) b, &g->plan, &w1, msg, msglen);
	g->have_plan = rv == FFTD_OK;
	if (rv == FFTD_OK && tl != 0) {
		rv           = make_plan(g, tl, &g->tail, &w2, msg, msglen);
		g->have_tail = rv == FFTD_OK;
	}
	if (rv != FFTD_OK) {
		drop_plans(g);
		return rv;
	}
	*work = w1 > w2 ? w1 : w2;
	return FFTD_OK;
}

// own_scratch_bytes is OWN_SCRATCH_BYTES, or FFTD_MF_OWN_SCRATCH_MIB.
static uint64_t
own_scratch_bytes(void)
{
	const char *v   = getenv("FFTD_MF_OWN_SCRATCH_MIB");
	long        mib = v != NULL ? atol(v) : 0;
	return mib > 0 ? (uint64_t) mib << 20 : OWN_SCRATCH_BYTES;
}

// first_batch is B before the budget's say: the scratch within 256 MiB
// and half of what the budget has left; the fused engine's a
// power of two (its plans are cached per B) no larger than the count needs.
static int64_t
first_batch(const fftd__mf_gpu *g, uint64_t avail)
{
	const fftd__mf_args *a     = g->a;
	uint64_t             one   = (uint64_t) a->n * g->csize;
	uint64_t             fixed = fused_extra(g, 0); // w and 1/S
	uint64_t             per
	    = one + (uint64_t) g->slots * 32 + fused_extra(g, 1) - fixed;
	uint64_t most = g->own ? own_scratch_bytes()
	    : g->fused         ? FUSED_SCRATCH_BYTES
	                       : SCRATCH_BYTES;
	uint64_t cap  = avail / 2 < most ? avail / 2 : most;
	int64_t  b = (int64_t) (g->own && cap == most ? cap / one : cap / per);
	b          = b < 1 ? 1 : b > MAX_BATCH ? MAX_BATCH : b;
	if (!g->fused) {
		return b > a->count ? a->count : b;
	}
	int64_t p      = 1;
	int64_t most_b = g->own ? OWN_BATCH : FUSED_BATCH;
	while (p * 2 <= b && p * 2 <= most_b && p < a->count) {
		p *= 2;
	}
	return p;
}

// fftd__cuda_mf_setup (cuda_mf_impl.h): B from first_batch, halved until
// it fits.
int
fftd__cuda_mf_setup(fftd__mf_gpu *g, char *msg, size_t msglen)
{
	fftd__cuda_state    *st  = g->st;
	const fftd__mf_args *a   = g->a;
	uint64_t             one = (uint64_t) a->n * g->csize;
	pthread_mutex_lock(&st->mtx);
	uint64_t held  = st->plan_bytes + st->pipe_bytes;
	uint64_t avail = held < st->budget ? st->budget - held : 0;
	pthread_mutex_unlock(&st->mtx);
	int64_t b = first_batch(g, avail);
	int     rv;
	// The last call's scratch (a cache, st->mf_dev): taken out of the
	// cache for this call (st->mtx is ours throughout) and reused when it
	// is big enough, counted whole while in use.
	fftd__cuda_buf cached = st->mf_dev;
	st->mf_dev            = (fftd__cuda_buf) { 0 };
	uint64_t need         = 0;
	for (;;) {
		g->batch = (int) b;
		rv       = pick_plans(g, b, &g->work_bytes, msg, msglen);
		if (rv != FFTD_OK) {
			fftd__cuda_buf_free_dev(&cached);
			return rv;
		}
		need = up(one * (uint64_t) b) + aux_bytes(g, b)
		    + fused_extra(g, b) + g->work_bytes;
		if (cached.cap < need) {
			fftd__cuda_buf_free_dev(&cached);
		}
		uint64_t want = cached.p != NULL ? cached.cap : need;
		rv            = fftd__cuda_reserve_plan_bytes(
		               st, want, "matched-filter scratch", msg, msglen);
		if (rv == FFTD_EDEVMEM && cached.p != NULL) {
			fftd__cuda_buf_free_dev(&cached);
			want = need;
			rv   = fftd__cuda_reserve_plan_bytes(
			      st, want, "matched-filter scratch", msg, msglen);
		}
		if (rv == FFTD_OK) {
			g->held = want;
			break;
		}
		drop_plans(g);
		if (rv != FFTD_EDEVMEM || b == 1) {
			return rv;
		}
		b = b / 2;
	}
	// One allocation for the scratch and cuFFT's workspace (its tail,
	// 256-byte aligned): each cudaMalloc and cudaFree costs per call.
	uint64_t    mem = up(need - g->work_bytes);
	cudaError_t e   = cudaSuccess;
	if (cached.p != NULL) {
		g->mem = cached.p;
	} else {
		e = cudaMalloc((void **) &g->mem, (size_t) g->held);
	}
	if (e != cudaSuccess) {
		g->mem = NULL;
		return fftd__cuda_fail(
		    e, "cudaMalloc (bank scratch)", msg, msglen);
	}
	if (g->work_bytes > 0) {
		g->work = g->mem + mem;
		cufftResult r
		    = cufftSetWorkArea(g->fused ? g->fp.h : g->plan, g->work);
		if (r == CUFFT_SUCCESS && g->have_tail) {
			r = cufftSetWorkArea(g->tail, g->work);
		}
		if (r != CUFFT_SUCCESS) {
			return fftd__cufft_fail(
			    r, "cufftSetWorkArea", msg, msglen);
		}
	}
	uint64_t slots = (uint64_t) g->batch * (uint64_t) g->slots;
	char    *p     = g->mem;
	g->q           = p;
	p += up(one * (uint64_t) g->batch);
	// key, t and z one region, as the fourstep engine's parts need
	// (mf_kernels.h)
	g->key = (uint64_t *) p;
	g->t   = g->key + slots;
	g->z   = (double *) (g->t + slots);
	p += up(slots * 32);
	g->flags = (uint64_t *) p;
	p += up(2 * 8);
	g->hh = (double *) p;
	p += up((uint64_t) a->count * 8);
	g->row = a->nseries > 0 ? p : NULL;
	p += a->nseries > 0 ? up((uint64_t) g->width * g->rsize) : 0;
	if (g->fused) {
		uint64_t nbins = (uint64_t) (a->n / 2 + 1);
		g->zout        = zout_bytes(g, 1) > 0 ? p : NULL;
		p += zout_bytes(g, g->batch);
		g->fkey = (uint64_t *) p;
		p += up(slots * 8);
		g->partial = (double *) p;
		p += up((uint64_t) g->batch * (uint64_t) g->chunks * 8);
		g->w = p;
		p += up(nbins * g->csize);
		g->is = (double *) p;
		p += up(nbins * 8);
		g->tab = g->own ? p : NULL;
		// q's bins outside the band stay zero: the product writes
		// only the band (the fourstep engine writes all of q, its
		// intermediate, and makes its tables instead).
		e = g->own
		    ? (cudaError_t) fftd__mf_fourstep_tables(
		        g->tab, a->n, st->stream)
		    : cudaMemsetAsync(g->q, 0,
		        (size_t) (one * (uint64_t) g->batch), st->stream);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaMemsetAsync", msg, msglen);
		}
	}
	char *k0     = (char *) g->key;
	g->reg_bytes = (size_t) ((char *) g->flags + 16 - k0);
	// Pinned (so the copies are asynchronous and quick), kept on the
	// device between calls (allocating pinned memory costs a millisecond).
	g->reg_bytes = (size_t) up(g->reg_bytes);
	rv           = fftd__cuda_grow_host(&st->mf_host,
	              2 * g->reg_bytes + (size_t) a->count * 8, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	g->hreg[0] = st->mf_host.p;
	g->hreg[1] = g->hreg[0] + g->reg_bytes;
	g->hhh     = (double *) (g->hreg[1] + g->reg_bytes);
	for (; g->nev < 2; g->nev++) {
		e = cudaEventCreateWithFlags(
		    &g->ev[g->nev], cudaEventDisableTiming);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaEventCreate", msg, msglen);
		}
	}
	return FFTD_OK;
}

// sigma_key is what g's call computes sigma^2 from.
static struct fftd__mf_sigma_key
sigma_key(const fftd__mf_gpu *g)
{
	const fftd__mf_args *a = g->a;
	return (struct fftd__mf_sigma_key) { .templates = a->templates,
		.psd                                    = a->psd,
		.count                                  = a->count,
		.n                                      = a->n,
		.kmin                                   = a->kmin,
		.kmax                                   = a->kmax,
		.delta_f                                = a->delta_f,
		.precision                              = (int) a->precision,
		.tpl_gen                                = a->tpl_gen,
		.psd_gen                                = a->psd_gen };
}

// same_key compares two keys field by field (no padding read).
static bool
same_key(const struct fftd__mf_sigma_key *k, const struct fftd__mf_sigma_key *w)
{
	return k->templates == w->templates && k->psd == w->psd
	    && k->count == w->count && k->n == w->n && k->kmin == w->kmin
	    && k->kmax == w->kmax && k->delta_f == w->delta_f
	    && k->precision == w->precision && k->tpl_gen == w->tpl_gen
	    && k->psd_gen == w->psd_gen;
}

// fftd__cuda_mf_sigma_cached (cuda_mf_impl.h): only where both arrays'
// generations are known (an entry's are never 0).
double *
fftd__cuda_mf_sigma_cached(const fftd__mf_gpu *g)
{
	fftd__cuda_state         *st = g->st;
	struct fftd__mf_sigma_key w  = sigma_key(g);
	if (w.tpl_gen == 0 || w.psd_gen == 0) {
		return NULL;
	}
	for (int i = 0; i < FFTD__MF_SIGMA_KEPT; i++) {
		struct fftd__mf_sigma_kept *e = &st->mf_sigma[i];
		if (e->buf.p != NULL && same_key(&e->key, &w)) {
			e->used = ++st->mf_sigma_clock;
			return e->buf.p;
		}
	}
	return NULL;
}

// fftd__cuda_mf_sigma_keep (cuda_mf_impl.h): into a free entry or the
// least recently used one; the copy is queued on the worker's stream
// after the call's work, so the next call reads it done.
void
fftd__cuda_mf_sigma_keep(fftd__mf_gpu *g)
{
	fftd__cuda_state *st   = g->st;
	size_t            need = (size_t) g->a->count * 8;
	if (g->a->tpl_gen == 0 || g->a->psd_gen == 0) {
		return; // a CUDA IPC mapping: its owner writes it unseen
	}
	struct fftd__mf_sigma_kept *e = &st->mf_sigma[0];
	for (int i = 1; i < FFTD__MF_SIGMA_KEPT && e->key.tpl_gen != 0; i++) {
		if (st->mf_sigma[i].key.tpl_gen == 0
		    || st->mf_sigma[i].used < e->used) {
			e = &st->mf_sigma[i];
		}
	}
	e->key = (struct fftd__mf_sigma_key) { 0 }; // none until queued
	if (e->buf.cap < need) {
		fftd__cuda_buf_free_dev(&e->buf);
		uint64_t held = st->plan_bytes + st->pipe_bytes
		    + fftd__cuda_cache_bytes(st);
		void *p = NULL;
		if (held > st->budget || need > st->budget - held
		    || cudaMalloc(&p, need) != cudaSuccess) {
			(void) cudaGetLastError();
			return;
		}
		e->buf = (fftd__cuda_buf) { p, need };
	}
	if (cudaMemcpyAsync(
	        e->buf.p, g->hh, need, cudaMemcpyDeviceToDevice, st->stream)
	    != cudaSuccess) {
		(void) cudaGetLastError();
		return;
	}
	e->key  = sigma_key(g);
	e->used = ++st->mf_sigma_clock;
}

// fftd__cuda_mf_teardown (cuda_mf_impl.h).
void
fftd__cuda_mf_teardown(fftd__mf_gpu *g)
{
	(void) cudaStreamSynchronize(g->st->stream);
	drop_plans(g);
	if (g->mem != NULL) {
		// Kept for the next call (a cache; see setup).
		fftd__cuda_buf_free_dev(&g->st->mf_dev);
		g->st->mf_dev = (fftd__cuda_buf) { g->mem, (size_t) g->held };
	}
	if (g->held > 0) {
		fftd__cuda_release_plan_bytes(g->st, g->held);
	}
	(void) cudaGetLastError();
	for (int i = 0; i < g->nev; i++) {
		(void) cudaEventDestroy(g->ev[i]);
	}
}

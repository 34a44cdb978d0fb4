// SPDX-License-Identifier: MIT
//
// cuda_mf_impl.h — PRIVATE to cuda_mf.c and cuda_mf_setup.c: one
// matched-filter bank call's state on the cuda backend, and the two halves
// of its life that cuda_mf_setup.c holds: setup (batch size, plans,
// device memory, pinned host copies) and teardown. What a call computes
// and in what order is cuda_mf.c's.

#ifndef FFTD_DAEMON_CUDA_MF_IMPL_H
#define FFTD_DAEMON_CUDA_MF_IMPL_H

#include <cufft.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda_impl.h"
#include "mf.h"

// fftd__mf_gpu is one bank call's state (cuda_mf.c runs the call,
// cuda_mf_setup.c gives it its device memory and plans).
typedef struct fftd__mf_gpu {
	fftd__cuda_state *st;
	fftd__mf_args    *a;
	bool              f64;
	size_t            csize, rsize;       // one complex, one real
	int64_t           width, nwin, slots; // slots = 1 + nwin per template
	int               batch;
	cufftHandle       plan, tail;
	bool              have_plan, have_tail;
	void             *work; // cuFFT workspace (shared)
	size_t            work_bytes;
	char             *mem;             // one allocation, carved below
	uint64_t          held;            // bytes reserved
	void             *q;               // batch x N complex
	uint64_t         *key, *t, *flags; // flags: [0] bad input, [1] rho
	double           *z, *hh;
	// sigma^2 given in hh (FFTD_MF_SIGMASQ_USE's, or the kept ones of an
	// earlier call: fftd__cuda_mf_sigma_cached), not computed
	bool  given;
	void *row; // one series row
	// The fused engine (f32): the cached plan (cuda_mf_plans.c), w = D/S,
	// 1/S, the transforms' output, the scan's packed keys, sigma partials.
	bool                 fused;
	bool                 own; // the fourstep engine (no cuFFT plan)
	fftd__mf_cached_plan fp;
	void                *tab;      // own: its twiddle tables
	int64_t              zq0, zld; // own: zout's first sample, row
	void                *w, *zout;
	double              *is, *partial;
	uint64_t            *fkey;
	int64_t              chunks;
	// Host copies, pinned: hreg[i] mirrors the device region key .. flags
	// (one copy per batch; two, so that batch k + 1 runs while the host
	// reads batch k), ev[i] marks its copy done; hkey, ht, hz and hflags
	// point into the one being read.
	char       *hreg[2];
	cudaEvent_t ev[2];
	int         nev;
	// The fourstep engine on three streams copies each part's slots on
	// its own (part_copy in cuda_mf.c): nparts[i] of them for hreg[i],
	// part k of which holds the batch's templates [part_b0, part_b0 +
	// part_nb) and is done at st->mf_pev[i][k]; cur_buf, cur_j0 and cur_nb
	// are the batch being queued, tail_copied whether its last part's copy
	// took its flags and sigma^2 too.
	bool    parted, tail_copied;
	int     nparts[2], cur_buf, cur_nb;
	int     part_b0[2][FFTD__MF_MAX_PARTS], part_nb[2][FFTD__MF_MAX_PARTS];
	int64_t cur_j0;
	size_t  reg_bytes;
	uint64_t *hkey, *ht, *hflags;
	double   *hz, *hhh;
	size_t    nheap;
} fftd__mf_gpu;

// fftd__cuda_mf_setup picks B (halved until plans, scratch and the rest fit
// the budget), makes or fetches the plans, reserves and allocates the
// device memory and the host copies, and carves g's pointers. Errors:
// FFTD_EDEVMEM, FFTD_ENOMEM, FFTD_EBACKEND; whatever it took, teardown
// gives back.
int fftd__cuda_mf_setup(fftd__mf_gpu *g, char *msg, size_t msglen);

// fftd__cuda_mf_sigma_cached is the device's kept sigma^2 of an earlier
// call that computed them from the same templates, PSD, band, delta_f and
// array generations as g's call (mf.h: tpl_gen, psd_gen), or NULL. After
// setup, which may drop the caches.
double *fftd__cuda_mf_sigma_cached(const fftd__mf_gpu *g);

// fftd__cuda_mf_sigma_keep queues the copy of the sigma^2 g's call
// computed (g->hh, count f64) into the device's cache (FFTD__MF_SIGMA_KEPT
// entries, least recently used out), where the budget has room (nothing
// otherwise: a cache). On a call that succeeded.
void fftd__cuda_mf_sigma_keep(fftd__mf_gpu *g);

// fftd__cuda_mf_teardown gives back what setup took (any part of it),
// the device scratch kept as the next call's cache.
void fftd__cuda_mf_teardown(fftd__mf_gpu *g);

#endif // FFTD_DAEMON_CUDA_MF_IMPL_H

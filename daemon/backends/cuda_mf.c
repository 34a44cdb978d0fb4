// SPDX-License-Identifier: MIT
//
// cuda_mf.c — the matched-filter bank (daemon/mf.h) on the cuda backend
// (backend.h: mf_bank), over device memory (resident arrays,
// cuda_array.c), in one of three engines:
//  - fourstep (f32, N = 2^12 .. 2^20, 8-byte aligned templates: the
//    default): fftd's own two-pass FFT with the product and sigma fused
//    into its first pass and the scan into its second
//    (kernels/mf_fourstep.cu); no cuFFT plan.
//  - cufft (other f32, or FFTD_MF_ENGINE=cufft): one kernel for the
//    product band and sigma (kernels/mf_fused.cu), cuFFT's plain batched
//    inverse (its LTO callbacks measured slower: bench/cufft_lto.c), one
//    scan pass.
//  - plain (f64, or FFTD_MF_ENGINE=plain): each step its own kernel
//    (kernels/mf.cu) around cuFFT.
// All compute what the fftw engine computes (daemon/backends/fftw_mf.c:
// FINDCHIRP's filter, Allen et al. 2012, as PyCBC's matched_filter_core
// does), with the same rules:
//   1. the PSD positive and finite and the data finite over [kmin, kmax):
//      a device kernel finds the first bad bin (PSD first at a bin), the
//      host reads back one word (the f32 engines: with the first batch's
//      slots, before taking any result) and names it (FFTD_EINVAL);
//   2. sigma_j^2 = 4 df sum |h_jk|^2 / S_k for every template of the slice
//      (one block each, double), read back: a non-finite one names the
//      first such template (FFTD_EINVAL) — before any transform, where the
//      fftw engine checks batch by batch (only which error is reported
//      first can differ, when several templates are bad); given
//      (FFTD_MF_SIGMASQ_USE): read in the caller's array instead and
//      checked finite and >= 0 as read back; STORE copies them there;
//      computed by an earlier call from the same templates and PSD (same
//      spans, band, delta_f and array generations: mf.h): the device's
//      kept ones (cuda_mf_setup.c), as if given;
//   3. templates in batches of B: the product q = conj(h) D / S (zero
//      outside [kmin, kmax), the negative frequencies included), the
//      inverse C2C/Z2Z of length N, the scan (peak and each window's
//      loudest sample, the first on ties — for the f32 engines, samples
//      whose |z|^2 agree to f32 rounding are ties — z there), the series
//      rows; peaks, window winners and a non-finite-rho flag read back
//      (a non-finite rho names the batch's first such template); the
//      fourstep engine's in parts, each copied as its gather ends and
//      taken (step 4) while the later parts run;
//   4. on the host: peaks (z times 4 df), triggers above the threshold
//      counted in ntotal, the loudest max_triggers kept with the fftw
//      engine's min-heap and tie order (louder, lower template, earlier
//      sample) and written in (template, t) order.
// Device memory, plans and host copies: cuda_mf_setup.c.
//
// Threads: the device's batch worker, holding st->mtx for the whole call
// as execute does (cuda_impl.h, "Threads"); cudaSetDevice first.

#include <cuda_runtime.h>
#include <cufft.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_mf_impl.h"
#include "clock.h"
#include "errmsg.h"
#include "log.h"
#include "mf.h"
#include "mf_kernels.h"

// kern_fail turns a kernel launch's error into a message.
static int
kern_fail(int rc, const char *what, char *msg, size_t msglen)
{
	return fftd__cuda_fail((cudaError_t) rc, what, msg, msglen);
}

// sync waits for the stream, naming what failed.
static int
sync_stream(fftd__mf_gpu *g, char *msg, size_t msglen)
{
	cudaError_t e = cudaStreamSynchronize(g->st->stream);
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaStreamSynchronize", msg, msglen);
	}
	return FFTD_OK;
}

// d2h copies len bytes from the device on the worker's stream.
static int
d2h(fftd__mf_gpu *g, void *dst, const void *src, size_t len, char *msg,
    size_t msglen)
{
	cudaError_t e = cudaMemcpyAsync(
	    dst, src, len, cudaMemcpyDeviceToHost, g->st->stream);
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaMemcpyAsync (D2H)", msg, msglen);
	}
	return FFTD_OK;
}

static int check_sigma(
    fftd__mf_gpu *g, int64_t j0, int64_t nb, char *msg, size_t msglen);

static int bad_input(fftd__mf_gpu *g, uint64_t bad, char *msg, size_t msglen);

// check_inputs runs steps 1 and 2 of the top of this file. The fused
// engines' check is read back with the first batch's slots (finish_batch)
// instead of waiting for it here: a host round trip less a call, and no
// result is taken before it is read.
static int
check_inputs(fftd__mf_gpu *g, char *msg, size_t msglen)
{
	const fftd__mf_args *a   = g->a;
	cudaStream_t         s   = g->st->stream;
	cudaError_t          e   = cudaMemsetAsync(g->flags, 0xFF, 16, s);
	uint64_t             bad = FFTD__MF_NONE;
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaMemsetAsync", msg, msglen);
	}
	int rc = fftd__mf_check_inputs(
	    a->data, a->psd, (int) a->precision, a->kmin, a->kmax, g->flags, s);
	if (rc != 0) {
		return kern_fail(rc, "fftd__mf_check_inputs", msg, msglen);
	}
	if (g->fused) { // sigma too is summed batch by batch
		return FFTD_OK;
	}
	if (!g->given) {
		rc = fftd__mf_sigma2(a->templates, a->psd, (int) a->precision,
		    a->n / 2 + 1, a->kmin, a->kmax, a->count, 4 * a->delta_f,
		    g->hh, s);
		if (rc != 0) {
			return kern_fail(rc, "fftd__mf_sigma2", msg, msglen);
		}
	}
	int rv = d2h(g, &bad, g->flags, 8, msg, msglen);
	if (rv == FFTD_OK) {
		rv = d2h(g, g->hhh, g->hh, (size_t) a->count * 8, msg, msglen);
	}
	if (rv == FFTD_OK) {
		rv = sync_stream(g, msg, msglen);
	}
	if (rv == FFTD_OK) {
		rv = bad_input(g, bad, msg, msglen);
	}
	return rv == FFTD_OK ? check_sigma(g, 0, a->count, msg, msglen) : rv;
}

// bad_input names the first bad input bin that the check kernel found
// (bad, FFTD__MF_NONE when none: FFTD_OK).
static int
bad_input(fftd__mf_gpu *g, uint64_t bad, char *msg, size_t msglen)
{
	const fftd__mf_args *a  = g->a;
	int                  rv = FFTD_OK;
	if (bad != FFTD__MF_NONE && bad % 2 == 0) {
		int64_t k  = (int64_t) (bad / 2);
		double  sv = 0;
		if (g->f64) {
			rv = d2h(g, &sv, (const double *) a->psd + k, 8, msg,
			    msglen);
		} else {
			float f = 0;
			rv      = d2h(
			         g, &f, (const float *) a->psd + k, 4, msg, msglen);
			if (rv == FFTD_OK) {
				rv = sync_stream(g, msg, msglen);
			}
			sv = f;
		}
		if (rv == FFTD_OK && g->f64) {
			rv = sync_stream(g, msg, msglen);
		}
		if (rv != FFTD_OK) {
			return rv;
		}
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: psd[%lld] = %g is not positive "
		    "and finite (f32: scale data and templates by "
		    "DYN_RANGE_FAC = 2^69 and the PSD by its square, "
		    "as PyCBC does)",
		    (long long) k, sv);
	}
	if (bad != FFTD__MF_NONE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: data[%lld] is not finite",
		    (long long) (bad / 2));
	}
	return FFTD_OK;
}

// check_sigma names the first template in [j0, j0 + nb) whose sigma^2 is
// not finite, or, given (FFTD_MF_SIGMASQ_USE), negative (FFTD_EINVAL).
static int
check_sigma(fftd__mf_gpu *g, int64_t j0, int64_t nb, char *msg, size_t msglen)
{
	for (int64_t j = j0; j < j0 + nb; j++) {
		int rv
		    = fftd__mf_check_sigmasq(g->a, j, g->hhh[j], msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
	}
	return FFTD_OK;
}

// slot_rho is the rho whose bits a slot's key holds.
static double
slot_rho(uint64_t key)
{
	double r;
	memcpy(&r, &key, sizeof(r));
	return r;
}

// take_batch turns templates [b0, b1) of the batch from j0, read back
// into the host copies, into peaks (their sigma left to finish_batch) and
// triggers; hkey, ht and hz hold the slots from template b0's on.
static int
take_batch(
    fftd__mf_gpu *g, int64_t j0, int b0, int b1, char *msg, size_t msglen)
{
	fftd__mf_args *a     = g->a;
	double         scale = 4 * a->delta_f;
	bool           trig  = a->threshold > 0;
	for (int b = b0; b < b1; b++) {
		int64_t j = j0 + b;
		size_t  s = (size_t) (b - b0) * (size_t) g->slots;
		if (g->ht[s] >= (uint64_t) a->n) {
			return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
			    "matched filter: no peak found for template %lld",
			    (long long) j);
		}
		a->peaks[j] = (fftd__mf_peak) { .rho = slot_rho(g->hkey[s]),
			.t                           = (int64_t) g->ht[s],
			.z_re                        = g->hz[2 * s] * scale,
			.z_im = g->hz[2 * s + 1] * scale };
		for (int64_t w = 0; trig && w < g->nwin; w++) {
			size_t sw  = s + 1 + (size_t) w;
			double rho = slot_rho(g->hkey[sw]);
			if (!(rho > a->threshold)) {
				continue;
			}
			if (g->ht[sw] >= (uint64_t) a->n) {
				return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
				    "matched filter: no sample for window %lld "
				    "of template %lld",
				    (long long) w, (long long) j);
			}
			fftd__mf_trigger t = { .template_index = j,
				.t    = (int64_t) g->ht[sw],
				.rho  = rho,
				.z_re = g->hz[2 * sw] * scale,
				.z_im = g->hz[2 * sw + 1] * scale };
			fftd__mf_trigger_add(g->a, &g->nheap, &t);
		}
	}
	return FFTD_OK;
}

// transform_plain runs the plain engine's steps for a batch: the product
// into q, cuFFT's inverse, the three-pass scan (mf.cu).
static int
transform_plain(fftd__mf_gpu *g, const char *tpl, int nb,
    fftd__mf_scan_args *sa, char *msg, size_t msglen)
{
	fftd__mf_args *a     = g->a;
	cudaStream_t   s     = g->st->stream;
	size_t         slots = (size_t) nb * (size_t) g->slots;
	int            rc    = fftd__mf_product(g->q, a->data, a->psd, tpl,
	                  (int) a->precision, a->n, a->kmin, a->kmax, nb, s);
	if (rc != 0) {
		return kern_fail(rc, "fftd__mf_product", msg, msglen);
	}
	cufftHandle h = nb == g->batch ? g->plan : g->tail;
	cufftResult r = g->f64 ? cufftExecZ2Z(h, g->q, g->q, CUFFT_INVERSE)
	                       : cufftExecC2C(h, g->q, g->q, CUFFT_INVERSE);
	if (r != CUFFT_SUCCESS) {
		return fftd__cufft_fail(
		    r, g->f64 ? "cufftExecZ2Z" : "cufftExecC2C", msg, msglen);
	}
	cudaError_t e = cudaMemsetAsync(g->key, 0, slots * 8, s);
	if (e == cudaSuccess) {
		e = cudaMemsetAsync(g->t, 0xFF, slots * 8, s);
	}
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaMemsetAsync", msg, msglen);
	}
	if ((rc = fftd__mf_scan(sa, s)) != 0) {
		return kern_fail(rc, "fftd__mf_scan", msg, msglen);
	}
	return FFTD_OK;
}

// transform_fused runs the fused engine's steps for a batch: the product
// band and sigma sums in one read of the templates, cuFFT's inverse from q
// (zero outside the band) into zout, the one-pass scan (mf_fused.cu). A
// short last batch runs the full-B plan; rows past nb are not scanned.
static int
transform_fused(fftd__mf_gpu *g, const char *tpl, int64_t j0, int nb,
    fftd__mf_scan_args *sa, char *msg, size_t msglen)
{
	fftd__mf_args *a = g->a;
	cudaStream_t   s = g->st->stream;
	// sigma^2 given: hh holds it, not overwritten
	double *hh = g->given ? NULL : g->hh + j0;
	int     rc = fftd__mf_product_sigma(g->q, a->n, tpl, a->n / 2 + 1, g->w,
	        g->is, a->kmin, a->kmax, nb, g->partial, 4 * a->delta_f, hh, s);
	if (rc != 0) {
		return kern_fail(rc, "fftd__mf_product_sigma", msg, msglen);
	}
	cufftResult r = cufftExecC2C(g->fp.h, g->q, g->zout, CUFFT_INVERSE);
	if (r != CUFFT_SUCCESS) {
		return fftd__cufft_fail(r, "cufftExecC2C", msg, msglen);
	}
	if ((rc = fftd__mf_scan_fused(sa, g->fkey, s)) != 0) {
		return kern_fail(rc, "fftd__mf_scan_fused", msg, msglen);
	}
	return FFTD_OK;
}

// part_copy (fftd__mf_fourstep_args.part_done) queues the copy of a
// part's slots (one region: mf_kernels.h) into the host copies on the
// part's stream and marks it with the part's event, so that the host reads
// each part while the later ones run (finish_batch). After the last part
// every pass, sum and gather of the batch is done on that stream (it
// waited for each part's passes), so the batch's flags and sigma^2 follow
// there, unless series rows (queued after the batch) may still flag: a
// copy after the join was ~13 us more of the batch's span at 2^17 on the
// H200.
static int
part_copy(void *ctx, int b0, int nb, void *stream)
{
	fftd__mf_gpu *g   = ctx;
	int           buf = g->cur_buf, p = g->nparts[buf];
	if (p >= FFTD__MF_MAX_PARTS) {
		return (int) cudaErrorInvalidValue;
	}
	// the part's slots: one run from fftd__mf_part_slots's start
	size_t      row = FFTD__MF_SLOT_BYTES * (size_t) g->slots;
	size_t      off = (size_t) b0 * row;
	cudaError_t e
	    = cudaMemcpyAsync(g->hreg[buf] + off, (char *) g->key + off,
	        (size_t) nb * row, cudaMemcpyDeviceToHost, stream);
	if (e == cudaSuccess && b0 + nb == g->cur_nb && g->a->nseries == 0) {
		size_t fo = (size_t) ((char *) g->flags - (char *) g->key);
		e         = cudaMemcpyAsync(g->hreg[buf] + fo, g->flags, 16,
		            cudaMemcpyDeviceToHost, stream);
		if (e == cudaSuccess) {
			e = cudaMemcpyAsync(g->hhh + g->cur_j0,
			    g->hh + g->cur_j0, (size_t) g->cur_nb * 8,
			    cudaMemcpyDeviceToHost, stream);
		}
		g->tail_copied = e == cudaSuccess;
	}
	if (e == cudaSuccess) {
		e = cudaEventRecord(g->st->mf_pev[buf][p], stream);
	}
	if (e == cudaSuccess) {
		g->part_b0[buf][p] = b0;
		g->part_nb[buf][p] = nb;
		g->nparts[buf]     = p + 1;
	}
	return (int) e;
}

// transform_own runs the fourstep engine's steps for a batch
// (mf_fourstep.cu): the product fused into its first pass, the scan into
// its second; it writes the searched samples (sa->q) for series rows only.
static int
transform_own(fftd__mf_gpu *g, const char *tpl, int64_t j0,
    fftd__mf_scan_args *sa, char *msg, size_t msglen)
{
	fftd__mf_args         *a = g->a;
	cudaStream_t           s = g->st->stream;
	fftd__mf_fourstep_args f = { .scan = sa,
		.scratch                   = g->q,
		.tpl                       = tpl,
		.nbins                     = a->n / 2 + 1,
		.w                         = g->w,
		.is                        = g->is,
		.kmin                      = a->kmin,
		.kmax                      = a->kmax,
		.tab                       = g->tab,
		.partial                   = g->partial,
		.hh                        = g->hh + j0,
		.sigma                     = !g->given,
		.fkey                      = g->fkey };
	g->parted                = fftd__cuda_mf_aux_stream(g->st);
	if (g->parted) {
		f.stream2  = g->st->mf_stream2;
		f.stream3  = g->st->mf_stream3;
		f.ev_fork  = g->st->mf_ev[0];
		f.ev_join  = g->st->mf_ev[1];
		f.ev_join3 = g->st->mf_ev[2];
		for (int i = 0; i < FFTD__MF_MAX_PARTS; i++) {
			f.ev_part[i] = g->st->mf_xev[i];
		}
		f.part_done = part_copy;
		f.ctx       = g;
	}
	int rc = fftd__mf_fourstep(&f, s);
	return rc == 0 ? FFTD_OK
	               : kern_fail(rc, "fftd__mf_fourstep", msg, msglen);
}

// enqueue_batch queues step 3 of the top of this file for the templates
// from j0 (nb of them) on the worker's stream, the slots' copy into
// hreg[buf] included, and marks it with ev[buf].
static int
enqueue_batch(
    fftd__mf_gpu *g, int64_t j0, int nb, int buf, char *msg, size_t msglen)
{
	fftd__mf_args *a     = g->a;
	cudaStream_t   s     = g->st->stream;
	size_t         nbins = (size_t) (a->n / 2 + 1);
	const char    *tpl
	    = (const char *) a->templates + (size_t) j0 * nbins * g->csize;
	// The fourstep engine writes the searched samples only for the series
	// rows' sake; otherwise its gather reads z at the winners from its
	// intermediate (mf_kernels.h).
	void              *q  = g->own ? (a->nseries > 0 ? g->zout : NULL)
	                  : g->fused   ? g->zout
	                               : g->q;
	fftd__mf_scan_args sa = { .q = q,
		.ld                  = g->own ? g->zld : a->n,
		.q0                  = g->own ? g->zq0 : 0,
		.precision           = (int) a->precision,
		.n                   = a->n,
		.nb                  = nb,
		.hh                  = g->hh + j0,
		.scale               = 4 * a->delta_f,
		.t_begin             = a->t_begin,
		.t_end               = a->t_end,
		.cluster             = a->cluster,
		.nwin                = g->nwin,
		.threshold           = a->threshold,
		.key                 = g->key,
		.t                   = g->t,
		.z                   = g->z,
		.nonfinite           = g->flags + 1 };
	// The f32 engines' scans merge into zeroed packed keys.
	if (g->fused) {
		cudaError_t e = cudaMemsetAsync(g->fkey, 0,
		    (size_t) nb * (size_t) g->slots * 8, g->st->stream);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaMemsetAsync", msg, msglen);
		}
	}
	g->cur_buf     = buf;
	g->cur_j0      = j0;
	g->cur_nb      = nb;
	g->nparts[buf] = 0;
	g->tail_copied = false;
	int rc         = g->own ? transform_own(g, tpl, j0, &sa, msg, msglen)
	            : g->fused ? transform_fused(g, tpl, j0, nb, &sa, msg, msglen)
	                       : transform_plain(g, tpl, nb, &sa, msg, msglen);
	if (rc != FFTD_OK) {
		return rc;
	}
	size_t esize = g->rsize;
	for (int k = 0; k < a->nseries; k++) {
		int64_t j = a->series_index[k];
		if (j < j0 || j >= j0 + nb) {
			continue;
		}
		if ((rc = fftd__mf_series(&sa, (int) (j - j0), g->row, s))
		    != 0) {
			return kern_fail(rc, "fftd__mf_series", msg, msglen);
		}
		char *dst = (char *) a->series
		    + (size_t) k * (size_t) g->width * esize;
		int rv = d2h(
		    g, dst, g->row, (size_t) g->width * esize, msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
	}
	// STORE: the batch's sigma^2, final once its engine summed them.
	if (a->sigmasq_mode == FFTD_MF_SIGMASQ_STORE) {
		cudaError_t e = cudaMemcpyAsync(a->sigmasq + j0, g->hh + j0,
		    (size_t) nb * 8, cudaMemcpyDeviceToDevice, s);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaMemcpyAsync (sigmasq)", msg, msglen);
		}
	}
	// One copy of the slots and flags into pinned memory (a batch's host
	// round trip is what the engine's time has beside the kernels); the
	// flags alone where the parts copied their slots (part_copy), none
	// where the last part copied them too.
	size_t off = (size_t) ((char *) g->flags - (char *) g->key);
	int    rv  = g->tail_copied ? FFTD_OK
	        : g->parted
	        ? d2h(g, g->hreg[buf] + off, g->flags, 16, msg, msglen)
	        : d2h(g, g->hreg[buf], g->key, g->reg_bytes, msg, msglen);
	if (rv == FFTD_OK && g->fused && !g->tail_copied) {
		rv = d2h(
		    g, g->hhh + j0, g->hh + j0, (size_t) nb * 8, msg, msglen);
	}
	if (rv == FFTD_OK) {
		cudaError_t e = cudaEventRecord(g->ev[buf], s);
		if (e != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaEventRecord", msg, msglen);
		}
	}
	return rv;
}

// finish_batch waits for the batch enqueued into buf and turns its slots
// into peaks and triggers: part by part as each part's copy lands where
// the parts copied their own (the host's reading then runs beside the
// later parts' kernels), its errors reported only after the flags' and
// sigma^2's, which name the cause.
static int
finish_batch(
    fftd__mf_gpu *g, int64_t j0, int nb, int buf, char *msg, size_t msglen)
{
	char *k0 = (char *) g->key, *h = g->hreg[buf];
	g->hflags         = (uint64_t *) (h + ((char *) g->flags - k0));
	int         taken = FFTD_OK;
	cudaError_t e     = cudaSuccess;
	for (int p = 0; g->parted && p < g->nparts[buf] && taken == FFTD_OK;
	     p++) {
		if ((e = cudaEventSynchronize(g->st->mf_pev[buf][p]))
		    != cudaSuccess) {
			return fftd__cuda_fail(
			    e, "cudaEventSynchronize", msg, msglen);
		}
		// the part's slots, laid out as a batch's (mf_kernels.h)
		int b0 = g->part_b0[buf][p], pnb = g->part_nb[buf][p];
		fftd__mf_part_slots((uint64_t *) h, g->slots, b0, pnb, &g->hkey,
		    &g->ht, &g->hz);
		taken = take_batch(g, j0, b0, b0 + pnb, msg, msglen);
	}
	if ((e = cudaEventSynchronize(g->ev[buf])) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaEventSynchronize", msg, msglen);
	}
	int rv;
	if (g->fused
	    && ((rv = bad_input(g, g->hflags[0], msg, msglen)) != FFTD_OK
	        || (rv = check_sigma(g, j0, nb, msg, msglen)) != FFTD_OK)) {
		return rv;
	}
	uint64_t nonfinite = g->hflags[1];
	if (nonfinite != FFTD__MF_NONE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "matched filter: rho of template %lld is "
		    "not finite (an f32 product D conj(h)/S "
		    "out of range? scale as PyCBC does, by "
		    "DYN_RANGE_FAC)",
		    (long long) (j0 + (int64_t) nonfinite));
	}
	if (!g->parted) {
		g->hkey = (uint64_t *) h;
		g->ht   = (uint64_t *) (h + ((char *) g->t - k0));
		g->hz   = (double *) (h + ((char *) g->z - k0));
		taken   = take_batch(g, j0, 0, nb, msg, msglen);
	}
	for (int64_t j = j0; taken == FFTD_OK && j < j0 + nb; j++) {
		g->a->peaks[j].sigma = sqrt(g->hhh[j]);
	}
	return taken;
}

// fftd__cuda_mf_bank runs the bank a on the GPU (see the top of this file)
// on the device's worker; a's arrays are device memory, its results host
// memory. Errors: FFTD_EINVAL (an argument out of range, a PSD bin not
// positive, data, a template or rho not finite), FFTD_EUNSUPPORTED (f16),
// FFTD_EDEVMEM (no room for one template's scratch in the budget),
// FFTD_ENOMEM, FFTD_EBACKEND (CUDA or cuFFT failed).
int
fftd__cuda_mf_bank(
    fftd__device *dev, struct fftd__mf_args *a, char *msg, size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	int rv = fftd__mf_check_args(a, "cuda", INT32_MAX, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	cudaError_t e = cudaSetDevice(st->ordinal);
	if (e != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	a->ntriggers   = 0;
	a->ntotal      = 0;
	fftd__mf_gpu g = { .st = st, .a = a };
	g.f64          = a->precision == FFTD_F64;
	g.rsize        = g.f64 ? sizeof(double) : sizeof(float);
	g.csize        = 2 * g.rsize;
	g.width        = a->t_end - a->t_begin;
	g.nwin = a->threshold > 0 ? (g.width + a->cluster - 1) / a->cluster : 0;
	g.slots = 1 + g.nwin;
	pthread_mutex_lock(&st->mtx);
	const char *eng = getenv("FFTD_MF_ENGINE");
	g.fused         = a->precision == FFTD_F32
	    && (eng == NULL || strcmp(eng, "plain") != 0);
	// The fourstep engine where it has a shape for n and the templates
	// are 8-byte aligned (float2 loads); FFTD_MF_ENGINE=cufft keeps
	// cuFFT's.
	g.own = g.fused && (eng == NULL || strcmp(eng, "cufft") != 0)
	    && fftd__mf_fourstep_blocks(a->n) > 0
	    && (uintptr_t) a->templates % 8 == 0;
	g.chunks = g.own ? fftd__mf_fourstep_blocks(a->n)
	                 : FFTD__MF_CHUNKS(a->kmax - a->kmin);
	// zout from a 32-byte boundary, rows a multiple of 32 bytes, so the
	// second pass's runs of samples fill whole sectors.
	g.zq0     = a->t_begin / 4 * 4;
	g.zld     = (a->t_end - g.zq0 + 3) / 4 * 4;
	double t0 = fftd__mono_s();
	rv        = fftd__cuda_mf_setup(&g, msg, msglen);
	double t1 = fftd__mono_s();
	// USE: sigma^2 given; the engines read it where it is, writing none
	// (checked as each batch's are read back: check_sigma). A copy into
	// hh cost ~30 us before the first kernel on the H200.
	double *kept = NULL;
	if (rv == FFTD_OK && a->sigmasq_mode == FFTD_MF_SIGMASQ_USE) {
		g.hh    = a->sigmasq;
		g.given = true;
	} else if (rv == FFTD_OK
	    && (kept = fftd__cuda_mf_sigma_cached(&g)) != NULL) {
		// An earlier call's, from the same templates and PSD.
		g.hh    = kept;
		g.given = true;
		fftd__log(FFTD_LOG_DEBUG,
		    "device %d: matched filter: sigma^2 of %lld templates kept "
		    "from an earlier call",
		    st->ordinal, (long long) a->count);
	}
	if (rv == FFTD_OK) {
		rv = check_inputs(&g, msg, msglen);
	}
	double t2 = fftd__mono_s();
	if (rv == FFTD_OK && g.fused) {
		int rc = fftd__mf_weight(
		    g.w, g.is, a->data, a->psd, a->kmin, a->kmax, st->stream);
		rv = rc == 0 ? FFTD_OK
		             : kern_fail(rc, "fftd__mf_weight", msg, msglen);
	}
	// The GPU's span from the first batch's start to the last one's end,
	// for the debug line only (what of the batches' time the GPU is busy).
	cudaEvent_t span[2] = { NULL, NULL };
	if (rv == FFTD_OK && fftd__log_enabled(FFTD_LOG_DEBUG)) {
		for (int i = 0; i < 2; i++) {
			if (cudaEventCreate(&span[i]) != cudaSuccess) {
				span[i] = NULL;
			}
		}
		if (span[1] != NULL
		    && (span[0] == NULL
		        || cudaEventRecord(span[0], st->stream)
		            != cudaSuccess)) {
			(void) cudaEventDestroy(span[1]); // no figure
			span[1] = NULL;
		}
	}
	// Batch k + 1 is queued before the host reads batch k's slots.
	int64_t pj0 = -1;
	int     pnb = 0, buf = 0;
	for (int64_t j0 = 0; rv == FFTD_OK && j0 < a->count; j0 += g.batch) {
		int nb
		    = a->count - j0 < g.batch ? (int) (a->count - j0) : g.batch;
		rv = enqueue_batch(&g, j0, nb, buf, msg, msglen);
		if (rv == FFTD_OK && span[1] != NULL) {
			(void) cudaEventRecord(span[1], st->stream);
		}
		if (rv == FFTD_OK && pj0 >= 0) {
			rv = finish_batch(&g, pj0, pnb, buf ^ 1, msg, msglen);
		}
		pj0 = j0;
		pnb = nb;
		buf ^= 1;
	}
	if (rv == FFTD_OK && pj0 >= 0) {
		rv = finish_batch(&g, pj0, pnb, buf ^ 1, msg, msglen);
	}
	if (rv == FFTD_OK) {
		fftd__mf_triggers_finish(a, g.nheap);
	}
	if (rv == FFTD_OK && !g.given) {
		fftd__cuda_mf_sigma_keep(&g);
	}
	double t3    = fftd__mono_s();
	float  gspan = -1;
	if (span[1] != NULL && rv == FFTD_OK
	    && cudaEventSynchronize(span[1]) == cudaSuccess
	    && cudaEventElapsedTime(&gspan, span[0], span[1]) != cudaSuccess) {
		gspan = -1;
	}
	for (int i = 0; i < 2; i++) {
		if (span[i] != NULL) {
			(void) cudaEventDestroy(span[i]);
		}
	}
	fftd__cuda_mf_teardown(&g);
	pthread_mutex_unlock(&st->mtx);
	fftd__log(FFTD_LOG_DEBUG,
	    "device %d: matched filter (%s engine): %lld templates of %lld "
	    "samples in batches of %d: setup %.3f ms, checks and sigma %.3f "
	    "ms, batches %.3f ms (the GPU's span %.3f ms), teardown %.3f ms",
	    st->ordinal,
	    g.own         ? "fourstep"
	        : g.fused ? "cufft"
	                  : "plain",
	    (long long) a->count, (long long) a->n, g.batch, (t1 - t0) * 1e3,
	    (t2 - t1) * 1e3, (t3 - t2) * 1e3, (double) gspan,
	    (fftd__mono_s() - t3) * 1e3);
	return rv;
}

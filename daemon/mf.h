// SPDX-License-Identifier: MIT
//
// mf.h — PRIVATE to fftd's daemon. The matched-filter bank as a backend
// computes it (fftd__backend.mf_bank, backend.h): FINDCHIRP's filter
// (Allen et al. 2012, Phys. Rev. D 85, 122006, sec. IV; PyCBC's
// matched_filter_core) over a slice of a resident template bank. For
// template j, bins k in [kmin, kmax):
//   z_j(t) = 4 df sum_k D_k conj(h_jk) / S_k exp(+2 pi i k t / N)
//            (the length-N complex inverse DFT of the one-sided product,
//            zero outside [kmin, kmax): PyCBC's q),
//   sigma_j^2 = 4 df sum_k |h_jk|^2 / S_k,   rho_j(t) = |z_j(t)| / sigma_j.
// The request handler (daemon/mf_req.c) checks every argument before a
// backend sees it: the pointers below are the device's (a backend's
// array_alloc memory), spans inside their arrays, ranges as stated.
// Served by the fftw backend (backends/fftw_mf.c) and the cuda backend
// (backends/cuda_mf.c, kernels/mf.cu), with the same semantics.

#ifndef FFTD_DAEMON_MF_H
#define FFTD_DAEMON_MF_H

#include <stddef.h>
#include <stdint.h>

#include "fftd.h"

// fftd__mf_peak is one template's result (the wire record, common/mf_wire.h,
// carries the same fields).
typedef struct fftd__mf_peak {
	double  rho;        // max rho_j(t) over [t_begin, t_end)
	int64_t t;          // its sample (the first on ties)
	double  sigma;      // sigma_j
	double  z_re, z_im; // z_j(t) at the peak
} fftd__mf_peak;

// fftd__mf_trigger is one clustered trigger: the loudest sample of one
// window [t_begin + w cluster, t_begin + (w + 1) cluster) whose rho is
// above the threshold.
typedef struct fftd__mf_trigger {
	int64_t template_index; // within the slice (0 .. count - 1)
	int64_t t;
	double  rho;
	double  z_re, z_im;
} fftd__mf_trigger;

// fftd__mf_args is one bank request as a backend runs it.
typedef struct fftd__mf_args {
	int64_t        n;          // N, time samples; spectra have N/2+1 bins
	fftd_precision precision;  // FFTD_F32 or FFTD_F64: element type below
	double         delta_f;    // Hz
	int64_t        kmin, kmax; // 0 <= kmin < kmax <= N/2+1
	int64_t        t_begin, t_end; // 0 <= t_begin < t_end <= N
	double         threshold;      // <= 0: no triggers
	int64_t        cluster;        // >= 1
	const void    *data;           // D: N/2+1 complex (device memory)
	const void    *psd;            // S: N/2+1 real, 1/Hz (device memory)
	const void    *templates;      // h: count x (N/2+1) complex, contiguous
	int64_t        count;          // templates in the slice (>= 1)
	// sigma_j^2 (fftd_mf_sigmasq, fftd.h): COMPUTE, or STORE into /
	// USE from sigmasq, count f64 in the device's memory (USE: checked
	// by the backend, finite and >= 0)
	int     sigmasq_mode;
	double *sigmasq;
	// The write generations of the arrays holding the templates and the
	// PSD when the call started (server_impl.h: fftd__array.gen; 0: not
	// known, as for a CUDA IPC mapping). A backend may keep the sigma^2
	// it computed and give them to a later call of the same spans, band,
	// delta_f and generations instead of computing them again (cuda:
	// cuda_mf_setup.c), as PyCBC's filter banks cache sigmasq per
	// template and PSD. Same values, bit for bit.
	uint64_t tpl_gen, psd_gen;
	// Results, host memory the caller owns:
	fftd__mf_peak    *peaks;        // count entries
	fftd__mf_trigger *triggers;     // room for max_triggers
	size_t            max_triggers; // the loudest are kept when more
	size_t            ntriggers;    // out: written
	size_t            ntotal;       // out: found
	const int64_t    *series_index; // nseries template indices (slice)
	int               nseries;
	void *series; // nseries x (t_end - t_begin) rho values, f32 or f64
} fftd__mf_args;

// fftd__mf_check_args checks a as the request handler does (FFTD_EINVAL,
// FFTD_EUNSUPPORTED for a precision other than f64/f32, naming backend);
// at most max_count templates.
int fftd__mf_check_args(const fftd__mf_args *a, const char *backend,
    int64_t max_count, char *msg, size_t msglen);

// fftd__mf_check_sigmasq checks template j's sigma^2 s2 as both engines
// do: given (FFTD_MF_SIGMASQ_USE), finite and >= 0; else finite, a
// template not finite over the band naming j (FFTD_EINVAL).
int fftd__mf_check_sigmasq(
    const fftd__mf_args *a, int64_t j, double s2, char *msg, size_t msglen);

// fftd__mf_trigger_add counts trigger t in a->ntotal and keeps it in
// a->triggers (*nheap entries: a list until max_triggers are held, then a
// min-heap) if it is among the loudest a->max_triggers so far: louder
// first, then the lower template, then the earlier sample. Both engines
// call it (mf_triggers.c), a->ntotal 0 before a call's first trigger.
void fftd__mf_trigger_add(
    fftd__mf_args *a, size_t *nheap, const fftd__mf_trigger *t);

// fftd__mf_triggers_finish puts the nheap kept triggers in (template,
// sample) order and sets a->ntriggers.
void fftd__mf_triggers_finish(fftd__mf_args *a, size_t nheap);

#endif // FFTD_DAEMON_MF_H

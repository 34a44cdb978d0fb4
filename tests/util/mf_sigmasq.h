// SPDX-License-Identifier: MIT
//
// mf_sigmasq.h — PRIVATE to fftd's tests. The matched-filter bank's
// sigma^2 modes (fftd_mf_desc's sigmasq_mode, fftd.h) checked on one bank
// problem through a daemon, shared by tests/integration/test_mf_sigmasq.c
// (the fftw backend) and tests/gpu/test_gpu_arrays.c (the cuda backend's
// three engines). Include after <cmocka.h> and mf_ref.h.

#ifndef FFTD_TESTS_MF_SIGMASQ_H
#define FFTD_TESTS_MF_SIGMASQ_H

#include <stddef.h>

#include "fftd.h"
#include "mf_ref.h"

// fftd_test_mf_span is where a bank problem's inputs sit: D at data_off
// and S at psd_off of dp, the slice's first template at tpl_off of tpl,
// all arrays of client c on device dev.
typedef struct fftd_test_mf_span {
	fftd_client *c;
	int          dev;
	fftd_array  *dp, *tpl;
	size_t       data_off, psd_off, tpl_off;
} fftd_test_mf_span;

// fftd_test_mf_sigmasq checks b's current request (drawn by
// fftd_test_mf_draw, with its reference) in the three modes, with results
// poisoned before every call:
//   - COMPUTE, then STORE into a fresh array at offset 8: both within the
//     reference's bounds, their results the same bits, and each stored
//     value's square root peak j's sigma, bit for bit (within 1e-12
//     relative of the reference's sigma^2 by the first check);
//   - USE of the stored values: the same bits as COMPUTE (peaks,
//     triggers, series);
//   - USE of four times them, the threshold halved: every rho (peaks,
//     triggers, series) exactly half of COMPUTE's, sigma twice, the
//     samples, z and trigger counts the same (so the given values are
//     the ones used);
//   - refused, results still poisoned: a given value negative or NaN
//     (FFTD_EINVAL naming sigmasq[j]), the span past the array's end
//     (FFTD_ESIZE), an offset not a multiple of 8, sigmasq_mode 3, USE
//     without an array, STORE into a span of the templates it reads
//     (FFTD_EINVAL).
// max_triggers, idx and nseries as fftd_test_mf_draw gave them.
void fftd_test_mf_sigmasq(const fftd_test_mf_span *sp, fftd_test_mf *b,
    size_t max_triggers, const int64_t *idx, int nseries);

#endif // FFTD_TESTS_MF_SIGMASQ_H

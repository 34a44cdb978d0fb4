// SPDX-License-Identifier: MIT
//
// tc_ref.c — the reference of the tensor-core kernels' tests (tc_ref.h).

#include "tc_ref.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <fftw3.h>

#include "gpu.h"

// counts gives the scalars of one transform's input and output.
static void
counts(int type, int rank, const int64_t *dims, int64_t *in, int64_t *out)
{
	int64_t pts = 1, n = dims[rank - 1];
	for (int i = 0; i < rank; i++)
		pts *= dims[i];
	int64_t half = 2 * (pts / n) * (n / 2 + 1);
	*in          = type == FFTD_TEST_TC_C2C ? 2 * pts
	             : type == FFTD_TEST_TC_R2C ? pts
	                                        : half;
	*out         = type == FFTD_TEST_TC_C2C ? 2 * pts
	            : type == FFTD_TEST_TC_R2C  ? half
	                                        : pts;
}

void
fftd_test_tc_fftw(int type, int rank, const int64_t *dims, int64_t batch,
    int dir, const double *x, double *ref)
{
	int64_t di, dout;
	counts(type, rank, dims, &di, &dout);
	int n[3];
	for (int i = 0; i < rank; i++)
		n[i] = (int) dims[i];
	// a copy: c2r destroys its input, and x stays the caller's
	double *tmp = fftw_malloc(sizeof(double) * (size_t) (di * batch));
	assert_non_null(tmp);
	memcpy(tmp, x, sizeof(double) * (size_t) (di * batch));
	fftw_plan p;
	if (type == FFTD_TEST_TC_C2C)
		p = fftw_plan_many_dft(rank, n, (int) batch,
		    (fftw_complex *) tmp, NULL, 1, (int) (di / 2),
		    (fftw_complex *) ref, NULL, 1, (int) (dout / 2),
		    dir < 0 ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
	else if (type == FFTD_TEST_TC_R2C)
		p = fftw_plan_many_dft_r2c(rank, n, (int) batch, tmp, NULL, 1,
		    (int) di, (fftw_complex *) ref, NULL, 1, (int) (dout / 2),
		    FFTW_ESTIMATE);
	else
		p = fftw_plan_many_dft_c2r(rank, n, (int) batch,
		    (fftw_complex *) tmp, NULL, 1, (int) (di / 2), ref, NULL, 1,
		    (int) dout, FFTW_ESTIMATE);
	assert_non_null(p);
	fftw_execute(p);
	fftw_destroy_plan(p);
	fftw_free(tmp);
}

void
fftd_test_tc_half_spectrum(int rank, const int64_t *dims, int64_t batch,
    double amp, double scale, uint64_t *rng, double *x)
{
	int64_t pts = 1, di, dout;
	for (int i = 0; i < rank; i++)
		pts *= dims[i];
	counts(FFTD_TEST_TC_R2C, rank, dims, &di, &dout);
	double *r = fftw_malloc(sizeof(double) * (size_t) (batch * pts));
	assert_non_null(r);
	for (int64_t i = 0; i < batch * pts; i++)
		r[i] = amp * fftd_test_urand(rng);
	fftd_test_tc_fftw(FFTD_TEST_TC_R2C, rank, dims, batch, -1, r, x);
	fftw_free(r);
	for (int64_t i = 0; i < dout * batch; i++)
		x[i] *= scale;
}

double
fftd_test_rel_l2(const double *got, const double *ref, int64_t n)
{
	double num = 0, den = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!isfinite(got[i]))
			return 1e30;
		num += (got[i] - ref[i]) * (got[i] - ref[i]);
		den += ref[i] * ref[i];
	}
	return sqrt(num / den);
}

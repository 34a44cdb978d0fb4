// SPDX-License-Identifier: MIT
//
// transform.c — the example's transforms through libfftd: each is planned,
// executed on the daemon and destroyed (on_daemon), then computed again
// in-process with FFTW in double on the same input, and the relative
// difference is kept in the job (note_difference). filter.c and
// gw150914.c call gw_c2c and gw_r2c_batch; what is transformed, and why,
// is theirs.

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "gw150914.h"

// gw_fail_fftd says what failed, with the library's message for rv and
// the daemon's detail, and returns rv.
int
gw_fail_fftd(const char *what, int rv)
{
	const char *detail = fftd_last_error();
	fprintf(stderr, "gw150914: %s: %s%s%s%s\n", what, fftd_strerror(rv),
	    *detail ? " (" : "", detail, *detail ? ")" : "");
	return rv;
}

// on_daemon plans *desc, executes it on in (nin doubles: the real numbers
// of the input, interleaved for complex), writes the nout output doubles
// to out, and destroys the plan. f32 plans get their buffers converted
// here, so the rest of the program stays in double.
static int
on_daemon(job *j, fftd_plan_desc *desc, const double *in, size_t nin,
    double *out, size_t nout, const char *what)
{
	fftd_plan *plan = NULL;
	void      *tin = NULL, *tout = NULL;
	desc->precision = j->opt->precision;
	desc->algorithm = j->opt->algorithm;
	int rv          = fftd_plan_create(j->client, desc, &plan);
	if (rv != FFTD_OK) {
		return gw_fail_fftd(what, rv);
	}
	size_t esz
	    = desc->precision == FFTD_F64 ? sizeof(double) : sizeof(float);
	if (fftd_plan_input_bytes(plan) != nin * esz
	    || fftd_plan_output_bytes(plan) != nout * esz) {
		fprintf(stderr,
		    "gw150914: %s: plan sizes %zu/%zu bytes, "
		    "expected %zu/%zu\n",
		    what, fftd_plan_input_bytes(plan),
		    fftd_plan_output_bytes(plan), nin * esz, nout * esz);
		rv = FFTD_EINTERNAL;
		goto out;
	}
	if (desc->precision == FFTD_F64) {
		rv = fftd_execute(plan, in, out);
	} else {
		tin  = malloc(nin * sizeof(float));
		tout = malloc(nout * sizeof(float));
		if (tin == NULL || tout == NULL) {
			rv = FFTD_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nin; i++) {
			((float *) tin)[i] = (float) in[i];
		}
		rv = fftd_execute(plan, tin, tout);
		for (size_t i = 0; rv == FFTD_OK && i < nout; i++) {
			out[i] = ((float *) tout)[i];
		}
	}
	if (rv != FFTD_OK) {
		gw_fail_fftd(what, rv);
	}
out:
	free(tin);
	free(tout);
	fftd_plan_destroy(plan);
	return rv;
}

// note_difference records ||got - ref|| / ||ref|| (2-norms over the n
// doubles) as one more transform compared.
static void
note_difference(
    job *j, const double *got, const double *ref, size_t n, const char *what)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double d = got[i] - ref[i];
		num += d * d;
		den += ref[i] * ref[i];
	}
	double rel = den > 0 ? sqrt(num / den) : sqrt(num);
	j->ntransforms++;
	if (rel > j->max_rel || j->ntransforms == 1) {
		j->max_rel = rel;
		snprintf(j->worst, sizeof(j->worst), "%s", what);
	}
}

// gw_r2c_batch computes batch real-to-complex transforms of size n (contiguous)
// on the daemon into out (batch x (n/2+1) complex), and compares with FFTW.
int
gw_r2c_batch(job *j, const double *in, double complex *out, int64_t n,
    int64_t batch, const char *what)
{
	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, 1, &n, FFTD_R2C, FFTD_F64);
	desc.batch = batch;
	size_t nh  = (size_t) (n / 2 + 1);
	size_t nin = (size_t) (n * batch), nout = 2 * nh * (size_t) batch;
	int    rv = on_daemon(j, &desc, in, nin, (double *) out, nout, what);
	if (rv != FFTD_OK) {
		return rv;
	}

	double       *rin = fftw_alloc_real(nin);
	fftw_complex *ref = fftw_alloc_complex(nh * (size_t) batch);
	int           nn  = (int) n;
	fftw_plan p = fftw_plan_many_dft_r2c(1, &nn, (int) batch, rin, NULL, 1,
	    (int) n, ref, NULL, 1, (int) nh, FFTW_ESTIMATE);
	memcpy(rin, in, nin * sizeof(double));
	fftw_execute(p);
	note_difference(
	    j, (const double *) out, (const double *) ref, nout, what);
	fftw_destroy_plan(p);
	fftw_free(rin);
	fftw_free(ref);
	return FFTD_OK;
}

// gw_c2c computes one complex transform of size n on the daemon, in direction
// dir with normalisation norm, and compares with FFTW.
int
gw_c2c(job *j, const double complex *in, double complex *out, int64_t n,
    fftd_direction dir, fftd_norm norm, const char *what)
{
	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, 1, &n, FFTD_C2C, FFTD_F64);
	desc.direction    = dir;
	desc.norm         = norm;
	size_t        nr  = 2 * (size_t) n;
	const double *din = (const double *) in;
	int rv = on_daemon(j, &desc, din, nr, (double *) out, nr, what);
	if (rv != FFTD_OK) {
		return rv;
	}

	int           sign = dir == FFTD_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD;
	fftw_complex *cin  = fftw_alloc_complex((size_t) n);
	fftw_complex *ref  = fftw_alloc_complex((size_t) n);
	fftw_plan p = fftw_plan_dft_1d((int) n, cin, ref, sign, FFTW_ESTIMATE);
	memcpy(cin, in, (size_t) n * sizeof(fftw_complex));
	fftw_execute(p);
	double scale = norm == FFTD_NORM_BY_N ? 1.0 / (double) n
	    : norm == FFTD_NORM_ORTHO         ? 1.0 / sqrt((double) n)
	                                      : 1.0;
	for (size_t i = 0; i < (size_t) n; i++) {
		ref[i] *= scale; // complex.h first: fftw_complex is C99's
	}
	note_difference(
	    j, (const double *) out, (const double *) ref, nr, what);
	fftw_destroy_plan(p);
	fftw_free(cin);
	fftw_free(ref);
	return FFTD_OK;
}

// SPDX-License-Identifier: MIT
//
// pipelines_fftd.c — bench/pipelines' cases through libfftd: (a) the
// matched-filter bank on resident arrays (fftd_mf_bank, in slices), and
// (b) what a client can do without it: per template it forms the product
// q = conj(h) D / S on the host into a shared buffer, a batched C2C
// inverse plan transforms it (fftd_execute, shared-memory path), and the
// client scans z for the peak itself. Both time the whole set of
// templates per repetition with CLOCK_MONOTONIC, after one warm-up, and
// keep every template's peak for the checks in pipelines.c.

#include "pipelines.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MAX_TRIGGERS is the room for triggers per fftd_mf_bank call.
#define MAX_TRIGGERS 4096
// MAX_INFLIGHT bounds --inflight.
#define MAX_INFLIGHT 8

// fail writes what failed into c->note and returns -1.
static int
fail(pl_case *c, const char *what, int rv)
{
	snprintf(c->note, sizeof(c->note), "%s: %s: %s", what,
	    fftd_err_name(rv), fftd_last_error());
	c->failed = 1;
	return -1;
}

// bank_job is one thread's share of a bank pass: slices k, k + inflight,
// k + 2 inflight, ...
typedef struct bank_job {
	fftd_client        *cl;
	const fftd_mf_desc *d;
	fftd_array         *data, *psd, *tpl;
	fftd_array         *sq; // sigma^2 (STORE, USE), or NULL
	const pl_inputs    *in;
	int64_t             slice;
	int                 k, inflight;
	fftd_mf_peak       *peaks;
	fftd_mf_trigger    *trig; // MAX_TRIGGERS of this thread's
	int64_t             ntrig;
	int                 rv;
} bank_job;

static void *
bank_thread(void *arg)
{
	bank_job *j      = arg;
	size_t    tbytes = sizeof(float) * 2 * (size_t) j->in->nbins;
	j->ntrig         = 0;
	j->rv            = FFTD_OK;
	for (int64_t s = j->slice * j->k; s < j->in->count;
	     s += j->slice * j->inflight) {
		int64_t cnt
		    = j->in->count - s < j->slice ? j->in->count - s : j->slice;
		size_t       nt = 0, ntot = 0;
		fftd_mf_desc d   = *j->d; // the slice's sigma^2
		d.sigmasq        = j->sq;
		d.sigmasq_offset = (size_t) s * sizeof(double);
		int rv = fftd_mf_bank(j->cl, &d, j->data, 0, j->psd, 0, j->tpl,
		    (size_t) s * tbytes, cnt, j->peaks + s, j->trig,
		    MAX_TRIGGERS, &nt, &ntot, NULL, 0, NULL);
		if (rv != FFTD_OK) {
			j->rv = rv;
			break;
		}
		j->ntrig += (int64_t) ntot;
	}
	return NULL;
}

// bank_pass searches the whole bank once in slices, inflight of them
// requested at a time from as many threads of the one client (a search
// keeping the daemon busy while it reads answers); *ntrig gets the
// triggers found over all slices.
static int
bank_pass(bank_job *jobs, int inflight, int64_t *ntrig)
{
	pthread_t th[MAX_INFLIGHT];
	int       started = 0;
	for (int k = 1; k < inflight; k++) {
		if (pthread_create(&th[k], NULL, bank_thread, &jobs[k]) != 0) {
			break;
		}
		started = k;
	}
	bank_thread(&jobs[0]);
	for (int k = 1; k <= started; k++) {
		pthread_join(th[k], NULL);
	}
	*ntrig = 0;
	for (int k = 0; k < inflight; k++) {
		if (k > started && k > 0) {
			return FFTD_ENOMEM; // no thread for its share
		}
		if (jobs[k].rv != FFTD_OK) {
			return jobs[k].rv;
		}
		*ntrig += jobs[k].ntrig;
	}
	return FFTD_OK;
}

int
pl_fftd_bank(fftd_client *cl, const pl_inputs *in, int64_t slice, int inflight,
    int reps, bool sigmasq_given, pl_case *c)
{
	size_t        tbytes = sizeof(float) * 2 * (size_t) in->nbins;
	fftd_array   *data = NULL, *psd = NULL, *tpl = NULL, *sq = NULL;
	fftd_mf_peak *peaks = calloc((size_t) in->count, sizeof(*peaks));
	inflight            = inflight < 1       ? 1
	               : inflight > MAX_INFLIGHT ? MAX_INFLIGHT
	                                         : inflight;
	fftd_mf_trigger *trig
	    = calloc((size_t) MAX_TRIGGERS * (size_t) inflight, sizeof(*trig));
	double *sec = calloc(PL_MAX_REPS, sizeof(double));
	int     rv = FFTD_ENOMEM, ret = -1;
	c->templates = in->count;
	if (peaks == NULL || trig == NULL || sec == NULL) {
		fail(c, "memory", rv);
		goto out;
	}
	if ((rv = fftd_array_create(cl, -1, tbytes, &data)) != FFTD_OK
	    || (rv = fftd_array_create(
	            cl, -1, sizeof(float) * (size_t) in->nbins, &psd))
	        != FFTD_OK
	    || (rv = fftd_array_create(
	            cl, -1, tbytes * (size_t) in->count, &tpl))
	        != FFTD_OK
	    || (sigmasq_given
	        && (rv = fftd_array_create(
	                cl, -1, sizeof(double) * (size_t) in->count, &sq))
	            != FFTD_OK)) {
		fail(c, "fftd_array_create", rv);
		goto out;
	}
	if ((rv = fftd_array_write(data, 0, in->data, tbytes)) != FFTD_OK
	    || (rv = fftd_array_write(
	            psd, 0, in->psd, sizeof(float) * (size_t) in->nbins))
	        != FFTD_OK
	    || (rv = fftd_array_write(
	            tpl, 0, in->bank, tbytes * (size_t) in->count))
	        != FFTD_OK) {
		fail(c, "fftd_array_write", rv);
		goto out;
	}
	fftd_mf_desc d;
	fftd_mf_desc_init(&d);
	d.n         = in->n;
	d.precision = FFTD_F32;
	d.delta_f   = in->delta_f;
	d.kmin      = in->kmin;
	d.kmax      = in->kmax;
	d.t_begin   = in->t_begin;
	d.t_end     = in->t_end;
	d.threshold = in->threshold;
	d.cluster   = in->cluster;
	// sigma^2 given: the warm-up stores it, the timed calls use it
	d.sigmasq_mode
	    = sigmasq_given ? FFTD_MF_SIGMASQ_STORE : FFTD_MF_SIGMASQ_COMPUTE;
	int64_t  ntrig;
	bank_job jobs[MAX_INFLIGHT];
	for (int k = 0; k < inflight; k++) {
		jobs[k] = (bank_job) { .cl = cl,
			.d                 = &d,
			.data              = data,
			.psd               = psd,
			.tpl               = tpl,
			.sq                = sq,
			.in                = in,
			.slice             = slice,
			.k                 = k,
			.inflight          = inflight,
			.peaks             = peaks,
			.trig              = trig + (size_t) k * MAX_TRIGGERS };
	}
	if ((rv = bank_pass(jobs, inflight, &ntrig)) != FFTD_OK) {
		fail(c, "fftd_mf_bank (warm-up)", rv);
		goto out;
	}
	if (sigmasq_given) {
		d.sigmasq_mode = FFTD_MF_SIGMASQ_USE;
	}
	int    r     = 0;
	double total = 0;
	for (; !pl_reps_done(r, reps, total); r++) {
		double t0 = pl_now();
		rv        = bank_pass(jobs, inflight, &ntrig);
		sec[r]    = pl_now() - t0;
		total += sec[r];
		if (rv != FFTD_OK) {
			fail(c, "fftd_mf_bank", rv);
			goto out;
		}
	}
	pl_case_times(c, sec, r);
	c->triggers = ntrig;
	c->bytes    = bench_mf_design_bytes(
	       in->n, in->kmin, in->kmax, in->t_begin, in->t_end);
	c->peaks = calloc((size_t) in->count, sizeof(pl_peak));
	if (c->peaks != NULL) {
		for (int64_t j = 0; j < in->count; j++) {
			c->peaks[j] = (pl_peak) { peaks[j].rho, peaks[j].t };
		}
		c->npeaks = in->count;
	}
	snprintf(c->note, sizeof(c->note),
	    "slices of %lld, %d in flight, %lld triggers%s", (long long) slice,
	    inflight, (long long) ntrig,
	    sigmasq_given ? ", sigma^2 given" : "");
	ret = 0;
out:
	fftd_array_destroy(sq);
	fftd_array_destroy(tpl);
	fftd_array_destroy(psd);
	fftd_array_destroy(data);
	free(peaks);
	free(trig);
	free(sec);
	return ret;
}

// plain_batch forms q for templates [first, first + b) into q (b x N
// complex), with sigma^2 / (4 delta_f) of each into sum[].
static void
plain_form(const pl_inputs *in, const float *w, const float *inv, int64_t first,
    int b, float *q, double *sum)
{
	int64_t n = in->n;
	for (int i = 0; i < b; i++) {
		const float *h  = in->bank + 2 * (first + i) * in->nbins;
		float       *qi = q + 2 * (int64_t) i * n;
		double       s  = 0;
		memset(qi, 0, sizeof(float) * 2 * (size_t) in->kmin);
		for (int64_t k = in->kmin; k < in->kmax; k++) {
			float hr = h[2 * k], hi = h[2 * k + 1];
			float wr = w[2 * k], wi = w[2 * k + 1];
			qi[2 * k]     = hr * wr + hi * wi; // conj(h) w
			qi[2 * k + 1] = hr * wi - hi * wr;
			s += (double) ((hr * hr + hi * hi) * inv[k]);
		}
		memset(qi + 2 * in->kmax, 0,
		    sizeof(float) * 2 * (size_t) (n - in->kmax));
		sum[i] = s;
	}
}

// plain_peaks scans z (b x N complex) over [t_begin, t_end) for each
// template's largest |z| (the first on ties) and stores rho there.
static void
plain_peaks(
    const pl_inputs *in, const float *z, int b, const double *sum, pl_peak *out)
{
	for (int i = 0; i < b; i++) {
		const float *zi   = z + 2 * (int64_t) i * in->n;
		float        best = -1;
		int64_t      bt   = in->t_begin;
		for (int64_t t = in->t_begin; t < in->t_end; t++) {
			float m = zi[2 * t] * zi[2 * t]
			    + zi[2 * t + 1] * zi[2 * t + 1];
			if (m > best) {
				best = m;
				bt   = t;
			}
		}
		// rho = 4 df |ifft q| / sqrt(4 df sum) = sqrt(4 df |.|^2 / sum)
		out[i]
		    = (pl_peak) { sqrt(4.0 * in->delta_f * best / sum[i]), bt };
	}
}

int
pl_fftd_plain(fftd_client *cl, const pl_inputs *in, int64_t count, int batch,
    int reps, pl_case *c)
{
	if (count > in->count) {
		count = in->count;
	}
	if (batch > count) {
		batch = (int) count;
	}
	count -= count % batch;
	c->templates    = count;
	size_t       qb = sizeof(float) * 2 * (size_t) in->n * (size_t) batch;
	fftd_buffer *bq = NULL, *bz = NULL;
	fftd_plan   *p = NULL;
	float       *w = NULL, *inv = NULL;
	double      *sec = calloc((size_t) reps, sizeof(double));
	double       sum[1024];
	pl_peak     *peaks = calloc((size_t) count, sizeof(pl_peak));
	int          rv = FFTD_ENOMEM, ret = -1;
	if (batch > 1024 || sec == NULL || peaks == NULL
	    || pl_weights(in, &w, &inv) != 0) {
		fail(c, "memory", rv);
		goto out;
	}
	if ((rv = fftd_buffer_create(cl, qb, &bq)) != FFTD_OK
	    || (rv = fftd_buffer_create(cl, qb, &bz)) != FFTD_OK) {
		fail(c, "fftd_buffer_create", rv);
		goto out;
	}
	fftd_plan_desc d;
	int64_t        n = in->n;
	fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32);
	d.direction = FFTD_INVERSE;
	d.batch     = batch;
	if ((rv = fftd_plan_create(cl, &d, &p)) != FFTD_OK) {
		fail(c, "fftd_plan_create", rv);
		goto out;
	}
	float *q = fftd_buffer_data(bq), *z = fftd_buffer_data(bz);
	for (int r = -1; r < reps; r++) {
		double t0 = pl_now();
		for (int64_t j = 0; j < count; j += batch) {
			plain_form(in, w, inv, j, batch, q, sum);
			if ((rv = fftd_execute(p, q, z)) != FFTD_OK) {
				fail(c, "fftd_execute", rv);
				goto out;
			}
			plain_peaks(in, z, batch, sum, peaks + j);
		}
		if (r >= 0) {
			sec[r] = pl_now() - t0;
		}
	}
	pl_case_times(c, sec, reps);
	c->peaks  = peaks;
	c->npeaks = count;
	peaks     = NULL;
	snprintf(c->note, sizeof(c->note),
	    "%lld templates, C2C inverse batch %d, shared buffers",
	    (long long) count, batch);
	ret = 0;
out:
	fftd_plan_destroy(p);
	fftd_buffer_destroy(bz);
	fftd_buffer_destroy(bq);
	free(w);
	free(inv);
	free(sec);
	free(peaks);
	return ret;
}

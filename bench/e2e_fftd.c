// SPDX-License-Identifier: MIT
//
// e2e_fftd.c — bench/e2e's paths through fftd, (d)-(f) (see e2e.h): the
// shared-memory path, the inline path beside the host's memcpy rate, and
// the streaming session (slots in place, and with copies), timed on
// CLOCK_MONOTONIC; their outputs checked bit for bit against each other
// and against a double-precision DFT of a few transforms.

#include "e2e.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// poison fills an output with 0xff bytes: NaN in f16 and f32.
static void
poison(void *p, size_t n)
{
	memset(p, 0xff, n); // NaN in f16 and f32
}

// all_finite checks that every output value was written (poisoned: NaN)
static int
all_finite(const bcase *c, const void *p, size_t bytes)
{
	if (c->prec == FFTD_F16) {
		const uint16_t *h = p;
		for (size_t i = 0; i < bytes / 2; i++) {
			if ((h[i] & 0x7c00) == 0x7c00) {
				return 0;
			}
		}
	} else {
		const float *f = p;
		for (size_t i = 0; i < bytes / 4; i++) {
			if (!isfinite(f[i])) {
				return 0;
			}
		}
	}
	return 1;
}

// get_real is real i of a case's array as a double.
static double
get_real(const bcase *c, const void *p, size_t i)
{
	return c->prec == FFTD_F16 ? e2e_h2d(((const uint16_t *) p)[i])
	                           : (double) ((const float *) p)[i];
}

// ref_check compares transforms 0 and batch-1 of out (the output for input
// src) with a double-precision DFT, on all bins when N <= 16384, else on
// 16 bins. Returns the relative L2 error over the bins compared.
static double
ref_check(
    const bcase *c, int64_t batch, const void *src, const void *out, int *nbins)
{
	int64_t n    = c->n;
	int64_t nout = c->kind == FFTD_R2C ? n / 2 + 1 : n;
	int     all  = n <= 16384;
	int64_t nk   = all ? nout : 16;
	double *wr   = e2e_xmalloc(sizeof(double) * (size_t) n);
	double *wi   = e2e_xmalloc(sizeof(double) * (size_t) n);
	double *xr   = e2e_xmalloc(sizeof(double) * (size_t) n);
	double *xi   = e2e_xmalloc(sizeof(double) * (size_t) n);
	double  num = 0, den = 0;
	for (int64_t m = 0; m < n; m++) {
		double a = -2.0 * M_PI * (double) m / (double) n;
		wr[m]    = cos(a);
		wi[m]    = sin(a);
	}
	int64_t ts[2] = { 0, batch - 1 };
	for (int ti = 0; ti < (batch > 1 ? 2 : 1); ti++) {
		int64_t t  = ts[ti];
		size_t  ib = (size_t) t
		    * (c->kind == FFTD_R2C ? (size_t) n : 2 * (size_t) n);
		size_t ob = (size_t) t * 2 * (size_t) nout;
		for (int64_t j = 0; j < n; j++) {
			if (c->kind == FFTD_R2C) {
				xr[j] = get_real(c, src, ib + (size_t) j);
				xi[j] = 0;
			} else {
				xr[j] = get_real(c, src, ib + 2 * (size_t) j);
				xi[j]
				    = get_real(c, src, ib + 2 * (size_t) j + 1);
			}
		}
		uint64_t seed = 77;
		for (int64_t q = 0; q < nk; q++) {
			int64_t k  = all
			     ? q
			     : (int64_t) (e2e_splitmix(&seed) % (uint64_t) nout);
			double  sr = 0, si = 0;
			int64_t idx = 0; // (j * k) mod n
			for (int64_t j = 0; j < n; j++) {
				sr += xr[j] * wr[idx] - xi[j] * wi[idx];
				si += xr[j] * wi[idx] + xi[j] * wr[idx];
				idx += k;
				if (idx >= n) {
					idx -= n;
				}
			}
			double orr = get_real(c, out, ob + 2 * (size_t) k);
			double oi  = get_real(c, out, ob + 2 * (size_t) k + 1);
			num += (orr - sr) * (orr - sr) + (oi - si) * (oi - si);
			den += sr * sr + si * si;
		}
	}
	free(wr);
	free(wi);
	free(xr);
	free(xi);
	*nbins = (int) nk;
	return sqrt(num / den);
}

// e2e_ref_tol is the largest relative error accepted against the DFT.
double
e2e_ref_tol(const bcase *c)
{
	return c->prec == FFTD_F16 ? 1e-2 : 1e-5;
}

// rel_err between two whole outputs of the case
static double
rel_err(const bcase *c, const void *x, const void *y, size_t bytes)
{
	size_t n   = bytes / e2e_real_bytes(c->prec);
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double a = get_real(c, x, i), b = get_real(c, y, i);
		num += (a - b) * (a - b);
		den += b * b;
	}
	return sqrt(num / den);
}

// time_execute runs warm-up, then reps timed executions of plan on in/out.
static int
time_execute(bench *B, meas *m, const fftd_plan *plan, const void *in,
    void *out, size_t bytes, int nwarm)
{
	for (int r = -nwarm; r < B->reps; r++) {
		double t0 = fftd__mono_s();
		int    rv = fftd_execute(plan, in, out);
		double t1 = fftd__mono_s();
		if (rv != FFTD_OK) {
			e2e_meas_set(
			    m, -2, "fftd_execute failed: %s", e2e_ferr(rv));
			return rv;
		}
		if (r >= 0) {
			m->s[m->nrep++] = t1 - t0;
		}
	}
	e2e_meas_finish(m, bytes);
	return 0;
}

// time_memcpy times the host's single-thread memcpy of a case's input,
// beside (e).
static void
time_memcpy(bench *B, case_result *R, const void *src)
{
	void *dst = e2e_xmalloc_touched(R->in_bytes);
	for (int r = -1; r < B->reps; r++) {
		double t0 = fftd__mono_s();
		memcpy(dst, src, R->in_bytes);
		double t1 = fftd__mono_s();
		if (r >= 0) {
			R->memcpy_.s[R->memcpy_.nrep++] = t1 - t0;
		}
	}
	// keep the copy from being optimised away
	if (((volatile char *) dst)[R->in_bytes / 2]
	    != ((const char *) src)[R->in_bytes / 2]) {
		fprintf(stderr, "e2e: memcpy check failed\n");
	}
	free(dst);
	e2e_meas_finish(&R->memcpy_, R->in_bytes);
}

// stream_pass submits nsub chunks through the stream. copy: each chunk of
// src is copied into its slot and each result copied out to dst;
// otherwise the slots are submitted as they are (filled in place) and the
// results are read in place.
static int
stream_pass(fftd_stream *st, int nsub, const char *src, size_t cin, char *dst,
    size_t cout, int copy)
{
	int done = 0, rv;
	for (int k = 0; k < nsub; k++) {
		if (fftd_stream_pending(st) >= STREAM_DEPTH) {
			const void *o;
			rv = fftd_stream_wait(
			    st, copy ? dst + (size_t) done * cout : NULL, &o);
			if (rv != FFTD_OK) {
				return rv;
			}
			done++;
		}
		rv = fftd_stream_submit(
		    st, copy ? src + (size_t) k * cin : NULL);
		if (rv != FFTD_OK) {
			return rv;
		}
	}
	while (fftd_stream_pending(st) > 0) {
		const void *o;
		rv = fftd_stream_wait(
		    st, copy ? dst + (size_t) done * cout : NULL, &o);
		if (rv != FFTD_OK) {
			return rv;
		}
		done++;
	}
	return 0;
}

// e2e_run_fftd measures (d), (e) and (f) of a case through the daemon
// and checks their outputs against each other, the DFT and (b) (out_b).
void
e2e_run_fftd(bench *B, case_result *R, const void *src, const void *out_b)
{
	const bcase   *c   = R->c;
	size_t         inb = R->in_bytes, outb = R->out_bytes;
	fftd_plan_desc d;
	fftd_plan     *plan = NULL, *cplan = NULL;
	fftd_buffer   *bin = NULL, *bout = NULL;
	fftd_stream   *st = NULL;
	char *out_d = NULL, *out_e = NULL, *out_f = NULL, *out_c = NULL;
	void *in_e = NULL;
	int   rv;

	e2e_desc_for(c, R->batch, &d);
	if ((rv = fftd_plan_create(B->client, &d, &plan)) != FFTD_OK) {
		const char *w = e2e_ferr(rv);
		e2e_meas_set(&R->d, -1, "unavailable: plan: %s", w);
		e2e_meas_set(&R->e, -1, "unavailable: plan: %s", w);
		e2e_meas_set(&R->f, -1, "unavailable: plan: %s", w);
		e2e_meas_set(&R->f_copy, -1, "unavailable: plan: %s", w);
		snprintf(R->plan_why, sizeof(R->plan_why), "plan: %.180s", w);
		snprintf(R->check_note, sizeof(R->check_note), "n/a (no plan)");
		e2e_meas_print("(d)-(f) fftd", &R->d);
		return;
	}
	snprintf(R->algorithm, sizeof(R->algorithm), "%s",
	    fftd_plan_algorithm(plan));
	if (fftd_plan_input_bytes(plan) != inb
	    || fftd_plan_output_bytes(plan) != outb) {
		fprintf(stderr, "e2e: plan sizes %zu/%zu, expected %zu/%zu\n",
		    fftd_plan_input_bytes(plan), fftd_plan_output_bytes(plan),
		    inb, outb);
	}
	printf("  fftd plan: algorithm %s\n", R->algorithm);

	// (d) shared-memory buffers
	rv = fftd_buffer_create(B->client, inb, &bin);
	if (rv == FFTD_OK) {
		rv = fftd_buffer_create(B->client, outb, &bout);
	}
	if (rv != FFTD_OK) {
		e2e_meas_set(&R->d, -1, "unavailable: fftd_buffer_create: %s",
		    e2e_ferr(rv));
		fftd_buffer_destroy(bin);
		bin = NULL;
	} else {
		B->shm_ok = 1;
		memcpy(fftd_buffer_data(bin), src, inb);
		memset(fftd_buffer_data(bout), 0, outb);
		out_d = e2e_xmalloc(outb);
		// check run: poisoned output, then the timed runs
		poison(fftd_buffer_data(bout), outb);
		rv = fftd_execute(
		    plan, fftd_buffer_data(bin), fftd_buffer_data(bout));
		if (rv != FFTD_OK) {
			e2e_meas_set(
			    &R->d, -2, "fftd_execute failed: %s", e2e_ferr(rv));
			free(out_d);
			out_d = NULL;
		} else {
			memcpy(out_d, fftd_buffer_data(bout), outb);
			time_execute(B, &R->d, plan, fftd_buffer_data(bin),
			    fftd_buffer_data(bout), inb, 1);
		}
		fftd_buffer_destroy(bin);
		fftd_buffer_destroy(bout);
		bin = bout = NULL;
	}
	e2e_meas_print("(d) fftd shared memory", &R->d);

	// (e) inline, with the host memcpy rate beside it
	time_memcpy(B, R, src);
	in_e  = e2e_xmalloc_touched(inb);
	out_e = e2e_xmalloc_touched(outb);
	memcpy(in_e, src, inb);
	poison(out_e, outb);
	rv = fftd_execute(plan, in_e, out_e);
	if (rv != FFTD_OK) {
		e2e_meas_set(
		    &R->e, -2, "fftd_execute failed: %s", e2e_ferr(rv));
		free(out_e);
		out_e = NULL;
	} else {
		char *keep = e2e_xmalloc(outb);
		memcpy(keep, out_e, outb);
		time_execute(B, &R->e, plan, in_e, out_e, inb, 1);
		free(out_e);
		out_e = keep;
	}
	e2e_meas_print("(e) fftd inline", &R->e);
	e2e_meas_print("    host memcpy, one thread", &R->memcpy_);
	free(in_e);
	in_e = NULL;

	// (f) streaming session over per-submit plans of ~64 MiB
	{
		size_t inper = e2e_case_in_per(c), outper = e2e_case_out_per(c);
		size_t target = (size_t) (64 * MIB);
		if (target > inb / 8) {
			target = inb / 8; // at least 8 submits (--quick)
		}
		int64_t cb = (int64_t) (target / inper);
		if (cb < 1) {
			cb = 1;
		}
		while (R->batch % cb != 0) {
			cb--;
		}
		R->chunk_batch = cb;
		R->nsub        = (int) (R->batch / cb);
		size_t cin = (size_t) cb * inper, cout = (size_t) cb * outper;

		e2e_desc_for(c, cb, &d);
		if ((rv = fftd_plan_create(B->client, &d, &cplan)) != FFTD_OK) {
			e2e_meas_set(
			    &R->f, -1, "unavailable: plan: %s", e2e_ferr(rv));
			goto f_done;
		}
		snprintf(R->stream_algorithm, sizeof(R->stream_algorithm), "%s",
		    fftd_plan_algorithm(cplan));
		if ((rv = fftd_stream_open(cplan, STREAM_DEPTH, &st))
		    != FFTD_OK) {
			e2e_meas_set(&R->f, -1,
			    "unavailable: fftd_stream_open: %s", e2e_ferr(rv));
			goto f_done;
		}
		// copy mode once, poisoned: the full output, for the checks
		out_f = e2e_xmalloc_touched(outb);
		poison(out_f, outb);
		if ((rv = stream_pass(st, R->nsub, src, cin, out_f, cout, 1))
		    != 0) {
			e2e_meas_set(
			    &R->f, -2, "stream failed: %s", e2e_ferr(rv));
			free(out_f);
			out_f = NULL;
			goto f_done;
		}
		// fill every slot in place with real data (producer writes,
		// not timed), then time in-place passes
		for (int k = 0; k < STREAM_DEPTH && k < R->nsub; k++) {
			void *p = fftd_stream_input(st);
			if (p == NULL) {
				e2e_meas_set(&R->f, -2,
				    "fftd_stream_input returned NULL");
				goto f_done;
			}
			memcpy(p, src + (size_t) k * cin, cin);
			if ((rv = fftd_stream_submit(st, p)) != FFTD_OK) {
				e2e_meas_set(&R->f, -2, "submit failed: %s",
				    e2e_ferr(rv));
				goto f_done;
			}
		}
		while (fftd_stream_pending(st) > 0) {
			if ((rv = fftd_stream_wait(st, NULL, NULL))
			    != FFTD_OK) {
				e2e_meas_set(
				    &R->f, -2, "wait failed: %s", e2e_ferr(rv));
				goto f_done;
			}
		}
		for (int r = -1; r < B->reps; r++) {
			double t0 = fftd__mono_s();
			rv = stream_pass(st, R->nsub, NULL, cin, NULL, cout, 0);
			double t1 = fftd__mono_s();
			if (rv != 0) {
				e2e_meas_set(&R->f, -2, "stream failed: %s",
				    e2e_ferr(rv));
				goto f_done;
			}
			if (r >= 0) {
				R->f.s[R->f.nrep++] = t1 - t0;
			}
		}
		e2e_meas_finish(&R->f, inb);
		// sustained: reps passes back to back without draining in
		// between, one figure (a pipeline that runs forever)
		{
			double t0 = fftd__mono_s();
			rv        = stream_pass(
			           st, R->nsub * B->reps, NULL, 0, NULL, 0, 0);
			double t1 = fftd__mono_s();
			if (rv != 0) {
				e2e_meas_set(&R->f_sustained, -2,
				    "stream failed: %s", e2e_ferr(rv));
			} else {
				R->f_sustained.s[R->f_sustained.nrep++]
				    = t1 - t0;
				e2e_meas_finish(
				    &R->f_sustained, inb * (size_t) B->reps);
			}
		}
		// copy mode timed: chunk copied into the slot, result out
		{
			char *tmp = e2e_xmalloc_touched(outb);
			for (int r = -1; r < B->reps; r++) {
				double t0 = fftd__mono_s();
				rv        = stream_pass(
				           st, R->nsub, src, cin, tmp, cout, 1);
				double t1 = fftd__mono_s();
				if (rv != 0) {
					e2e_meas_set(&R->f_copy, -2,
					    "stream failed: %s", e2e_ferr(rv));
					break;
				}
				if (r >= 0) {
					R->f_copy.s[R->f_copy.nrep++] = t1 - t0;
				}
			}
			if (rv == 0) {
				e2e_meas_finish(&R->f_copy, inb);
			}
			free(tmp);
		}
		// same plan, execute path, chunk by chunk, for the bitwise
		// check
		out_c = e2e_xmalloc_touched(outb);
		poison(out_c, outb);
		for (int k = 0; k < R->nsub; k++) {
			if ((rv = fftd_execute(cplan, src + (size_t) k * cin,
			         out_c + (size_t) k * cout))
			    != FFTD_OK) {
				free(out_c);
				out_c = NULL;
				break;
			}
		}
	}
f_done : {
	char lab[96];
	snprintf(lab, sizeof(lab), "(f) fftd stream, %d x %.0f MiB, depth %d",
	    R->nsub,
	    (double) R->chunk_batch * (double) e2e_case_in_per(c) / MIB,
	    STREAM_DEPTH);
	e2e_meas_print(lab, &R->f);
	e2e_meas_print("    stream, reps passes back to back", &R->f_sustained);
	e2e_meas_print("    stream with copies in and out", &R->f_copy);
}
	fftd_stream_close(st);
	fftd_plan_destroy(cplan);
	fftd_plan_destroy(plan);

	// checks
	{
		const char *first = out_d ? out_d : out_e ? out_e : out_f;
		int         fin   = 1;
		if (out_d && !all_finite(c, out_d, outb)) {
			fin = 0;
		}
		if (out_e && !all_finite(c, out_e, outb)) {
			fin = 0;
		}
		if (out_f && !all_finite(c, out_f, outb)) {
			fin = 0;
		}
		R->outputs_finite = first ? fin : -1;
		R->de_same
		    = out_d && out_e ? memcmp(out_d, out_e, outb) == 0 : -1;
		R->f_vs_d = out_f && (out_d || out_e)
		    ? memcmp(out_f, out_d ? out_d : out_e, outb) == 0
		    : -1;
		R->f_sameplan
		    = out_f && out_c ? memcmp(out_f, out_c, outb) == 0 : -1;
		R->ref_err = first
		    ? ref_check(c, R->batch, src, first, &R->ref_bins)
		    : NAN;
		R->b_err
		    = first && out_b ? rel_err(c, first, out_b, outb) : NAN;
		char  *p    = R->check_note;
		size_t left = sizeof(R->check_note);
		int    w    = snprintf(p, left,
		          "d==e %s; f==d(full plan) %s; f==same plan via execute %s; "
		                "outputs %s",
                    R->de_same < 0   ? "n/a"
		              : R->de_same ? "bit-identical"
		                           : "DIFFER",
                    R->f_vs_d < 0   ? "n/a"
		              : R->f_vs_d ? "bit-identical"
		                          : "differ",
                    R->f_sameplan < 0   ? "n/a"
		              : R->f_sameplan ? "bit-identical"
		                              : "DIFFER",
                    R->outputs_finite < 0   ? "n/a"
		              : R->outputs_finite ? "all written, finite"
		                                  : "NOT ALL WRITTEN/FINITE");
		(void) w;
		printf("  checks: %s\n", R->check_note);
		if (first) {
			printf("  vs double-precision DFT (%d bins x 2 "
			       "transforms): rel err %.2e",
			    R->ref_bins, R->ref_err);
			if (!isnan(R->b_err)) {
				printf(
				    "; vs in-process cuFFT (b): rel err %.2e",
				    R->b_err);
			}
			printf("\n");
		}
	}
	free(out_d);
	free(out_e);
	free(out_f);
	free(out_c);
}

// SPDX-License-Identifier: MIT
//
// pipelines_data.c — bench/pipelines' synthetic inputs and shared helpers:
// an aLIGO-like PSD from Ajith's fit, colored Gaussian noise with that PSD,
// a bank of stationary-phase chirp-like templates (|h| ~ f^(-7/6), a
// random chirp mass and phase each), one of them injected into the data;
// the byte counts per template of cases (a) and (c); the timing helpers.
// Everything is f32 in PyCBC's scaled units (strain x 2^69, PSD x 2^138),
// so that the products stay far from f32's limits, as in the GW150914
// search.

#include "pipelines.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// SCALE is PyCBC's DYN_RANGE_FAC, 2^69.
#define SCALE 0x1p69
// MSUN_S is G Msun / c^3 in seconds.
#define MSUN_S 4.925491025543576e-06
// RHO_INJECT is the injected signal's optimal rho.
#define RHO_INJECT 20.0

// rng is a splitmix64 step; rng_u01 a uniform double in (0, 1).
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
rng_u01(uint64_t *s)
{
	return ((double) (rng_next(s) >> 11) + 0.5) * 0x1p-53;
}

// rng_gauss draws a standard normal (Box-Muller).
static double
rng_gauss(uint64_t *s)
{
	double u = rng_u01(s), v = rng_u01(s);
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

// psd_aligo is the aLIGO zero-detuned high-power PSD in 1/Hz, Ajith's fit
// (P. Ajith, Phys. Rev. D 84, 084004 (2011), eq. 4.7), held at its 10 Hz
// value below 10 Hz so that every bin is positive and finite.
static double
psd_aligo(double f)
{
	double x  = (f < 10.0 ? 10.0 : f) / 245.4;
	double x2 = x * x;
	return 1e-49
	    * (pow(x, -4.14) - 5.0 / x2
	        + 111.0 * (1.0 - x2 + 0.5 * x2 * x2) / (1.0 + 0.5 * x2));
}

// tpl_job is one thread's share of the bank.
typedef struct tpl_job {
	const pl_inputs *in;
	const double    *amp, *f53; // A f^(-7/6), f^(-5/3) per bin
	const double    *mc, *phi;  // per template
	int64_t          first, end;
} tpl_job;

// tpl_run writes templates [first, end): h(f) = A f^(-7/6)
// exp(-i (3/128 (pi Mc f)^(-5/3) + phi)) for kmin <= k < N/2, zero
// elsewhere (below the cutoff, and at Nyquist, so that PyCBC's kmax of
// N/2 covers the same bins as fftd's N/2+1). The merger is at t = 0.
static void *
tpl_run(void *arg)
{
	const tpl_job   *j  = arg;
	const pl_inputs *in = j->in;
	for (int64_t t = j->first; t < j->end; t++) {
		float *h = in->bank + 2 * t * in->nbins;
		memset(h, 0, sizeof(float) * 2 * (size_t) in->nbins);
		double c = 3.0 / 128.0 * pow(M_PI * j->mc[t], -5.0 / 3.0);
		for (int64_t k = in->kmin; k < in->n / 2; k++) {
			double ph    = c * j->f53[k] + j->phi[t];
			h[2 * k]     = (float) (j->amp[k] * cos(ph));
			h[2 * k + 1] = (float) (-j->amp[k] * sin(ph));
		}
	}
	return NULL;
}

// make_bank fills in->bank over up to 16 threads (the bank at 2^20 x
// 1024 is half a billion sines).
static int
make_bank(pl_inputs *in, uint64_t *s)
{
	int64_t nb  = in->nbins;
	double *amp = malloc(sizeof(double) * (size_t) nb);
	double *f53 = malloc(sizeof(double) * (size_t) nb);
	double *mc  = malloc(sizeof(double) * (size_t) in->count);
	double *phi = malloc(sizeof(double) * (size_t) in->count);
	if (amp == NULL || f53 == NULL || mc == NULL || phi == NULL) {
		free(amp), free(f53), free(mc), free(phi);
		return -1;
	}
	double f0 = PL_F_LOWER;
	for (int64_t k = 0; k < nb; k++) {
		double f = k == 0 ? in->delta_f : k * in->delta_f;
		amp[k]   = pow(f / f0, -7.0 / 6.0);
		f53[k]   = pow(f, -5.0 / 3.0);
	}
	for (int64_t t = 0; t < in->count; t++) {
		mc[t]  = (5.0 + 25.0 * rng_u01(s)) * MSUN_S;
		phi[t] = 2.0 * M_PI * rng_u01(s);
	}
	long nt = sysconf(_SC_NPROCESSORS_ONLN);
	nt      = nt < 1 ? 1 : nt > 16 ? 16 : nt;
	if (nt > in->count) {
		nt = (long) in->count;
	}
	pthread_t th[16];
	tpl_job   jobs[16];
	int       started = 0;
	for (long i = 0; i < nt; i++) {
		jobs[i] = (tpl_job) { in, amp, f53, mc, phi, in->count * i / nt,
			in->count * (i + 1) / nt };
		if (i > 0
		    && pthread_create(&th[i], NULL, tpl_run, &jobs[i]) == 0) {
			started |= 1 << i;
		} else if (i > 0) {
			tpl_run(&jobs[i]);
		}
	}
	tpl_run(&jobs[0]);
	for (long i = 1; i < nt; i++) {
		if (started & (1 << i)) {
			pthread_join(th[i], NULL);
		}
	}
	free(amp), free(f53), free(mc), free(phi);
	return 0;
}

// pl_inputs_make: the PSD, the noise (E|D_k|^2 = S_k / (2 delta_f), the
// one-sided convention, so that rho^2 of noise alone averages 2), the
// bank, and template `inject` (1) added to the data at a random sample
// of the searched half with optimal rho RHO_INJECT.
int
pl_inputs_make(pl_inputs *in, int64_t n, int64_t count, uint64_t seed)
{
	memset(in, 0, sizeof(*in));
	in->n         = n;
	in->nbins     = n / 2 + 1;
	in->delta_f   = PL_SAMPLE_RATE / (double) n;
	in->kmin      = (int64_t) (PL_F_LOWER / in->delta_f);
	in->kmax      = in->nbins;
	in->t_begin   = n / 4;
	in->t_end     = n - n / 4;
	in->cluster   = 4096;
	in->threshold = 6.0;
	in->count     = count;
	in->inject    = count > 1 ? 1 : 0;
	in->seed      = seed;
	in->data      = malloc(sizeof(float) * 2 * (size_t) in->nbins);
	in->psd       = malloc(sizeof(float) * (size_t) in->nbins);
	in->bank
	    = malloc(sizeof(float) * 2 * (size_t) in->nbins * (size_t) count);
	if (in->data == NULL || in->psd == NULL || in->bank == NULL) {
		pl_inputs_free(in);
		return -1;
	}
	uint64_t s = seed;
	for (int64_t k = 0; k < in->nbins; k++) {
		double S            = psd_aligo(k * in->delta_f);
		in->psd[k]          = (float) (S * SCALE * SCALE);
		double a            = sqrt(S / (4.0 * in->delta_f)) * SCALE;
		in->data[2 * k]     = (float) (a * rng_gauss(&s));
		in->data[2 * k + 1] = (float) (a * rng_gauss(&s));
	}
	in->data[1] = 0; // DC and Nyquist of a real series are real
	in->data[2 * (in->nbins - 1) + 1] = 0;
	if (make_bank(in, &s) != 0) {
		pl_inputs_free(in);
		return -1;
	}
	// The injection: alpha h e^(-2 pi i k tau / N), alpha = rho / sigma.
	const float *h   = in->bank + 2 * in->inject * in->nbins;
	double       sum = 0;
	for (int64_t k = in->kmin; k < in->kmax; k++) {
		sum += ((double) h[2 * k] * h[2 * k]
		           + (double) h[2 * k + 1] * h[2 * k + 1])
		    / in->psd[k];
	}
	double  sigma = sqrt(4.0 * in->delta_f * sum);
	double  alpha = RHO_INJECT / sigma;
	int64_t tau   = in->t_begin
	    + (int64_t) (rng_u01(&s) * (double) (in->t_end - in->t_begin));
	for (int64_t k = in->kmin; k < in->kmax; k++) {
		double ph = -2.0 * M_PI * (double) ((k * tau) % n) / (double) n;
		double c = cos(ph), sn = sin(ph);
		double hr = h[2 * k], hi = h[2 * k + 1];
		in->data[2 * k] += (float) (alpha * (hr * c - hi * sn));
		in->data[2 * k + 1] += (float) (alpha * (hr * sn + hi * c));
	}
	return 0;
}

void
pl_inputs_free(pl_inputs *in)
{
	free(in->data);
	free(in->psd);
	free(in->bank);
	in->data = in->psd = in->bank = NULL;
}

int
pl_weights(const pl_inputs *in, float **wp, float **invp)
{
	float *w   = calloc((size_t) in->nbins, 2 * sizeof(float));
	float *inv = calloc((size_t) in->nbins, sizeof(float));
	if (w == NULL || inv == NULL) {
		free(w), free(inv);
		return -1;
	}
	for (int64_t k = in->kmin; k < in->kmax; k++) {
		inv[k]       = 1.0f / in->psd[k];
		w[2 * k]     = in->data[2 * k] * inv[k];
		w[2 * k + 1] = in->data[2 * k + 1] * inv[k];
	}
	*wp   = w;
	*invp = inv;
	return 0;
}

// bench_mf_design_bytes is the bytes one template costs the bank by its
// engine's design (daemon/backends/cuda_mf.c), the figure against which
// (a)'s "% of copy rate" is printed. The daemon's engine is the bench's
// too: both read FFTD_MF_ENGINE.
//  - fourstep (the default for N = 2^12 .. 2^20; kernels/mf_fourstep.cu):
//    its first pass reads the template over [kmin, kmax) (8 B a bin; the
//    product and sigma in the same read) and writes the N-point
//    intermediate (N x 8 B), its second reads it and writes only keys
//    (the searched samples are written for series rows alone, which the
//    bench does not ask for). Until stop 20 this also counted a write of
//    the searched samples, which the second pass has not made since its
//    gather reads z from the intermediate: (a)'s % of copy rate was 1.2x
//    too high at 2^17 and 2^20.
//  - cufft (FFTD_MF_ENGINE=cufft or plain, or another N; mf_fused.cu): the
//    product kernel reads the template band and writes its product band
//    (2 x 8 B a bin), cuFFT's two read+write passes of the length-N
//    transform (2 x 2 x N x 8 B: every size here is two passes of at most
//    2^14 points), and the scan's one read of the searched samples.
// w = D / S, 1 / S, tables and slots are per call or per batch, not per
// template; so are the gather's reads of a row of the intermediate per
// window above 0.99 threshold (a few a call).
double
bench_mf_design_bytes(
    int64_t n, int64_t kmin, int64_t kmax, int64_t t_begin, int64_t t_end)
{
	const char *eng = getenv("FFTD_MF_ENGINE");
	bool        own
	    = (eng == NULL
	          || (strcmp(eng, "cufft") != 0 && strcmp(eng, "plain") != 0))
	    && n >= ((int64_t) 1 << 12) && n <= ((int64_t) 1 << 20);
	if (own) {
		return (double) (kmax - kmin) * 8.0 + 2.0 * (double) n * 8.0;
	}
	return (double) (kmax - kmin) * 16.0 + 2.0 * 2.0 * (double) n * 8.0
	    + (double) (t_end - t_begin) * 8.0;
}

double
pl_cuda_passes_bytes(const pl_inputs *in)
{
	return (double) (in->kmax - in->kmin) * 8.0 + (double) in->n * 8.0
	    + 2.0 * 2.0 * (double) in->n * 8.0
	    + (double) (in->t_end - in->t_begin) * 8.0;
}

// cmp_double orders doubles for qsort.
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

int
pl_reps_done(int r, int reps, double total)
{
	return r >= PL_MAX_REPS || (r >= reps && total >= PL_MIN_SECONDS);
}

void
pl_case_times(pl_case *c, double *sec, int reps)
{
	qsort(sec, (size_t) reps, sizeof(double), cmp_double);
	c->reps       = reps;
	c->sec_min    = sec[0];
	c->sec_max    = sec[reps - 1];
	c->sec_median = reps % 2 ? sec[reps / 2]
	                         : 0.5 * (sec[reps / 2 - 1] + sec[reps / 2]);
	c->tps        = (double) c->templates / c->sec_median;
	c->ran        = 1;
}

double
pl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

// SPDX-License-Identifier: MIT
//
// load_gen.c — a load client's inputs and the check of its results (see
// load.h): the base input x drawn from the client's seed, the NFACTORS
// inputs c x made once, the FFTW reference X, and the relative L2 error of
// an output against c_k X. The same code serves a client process of a run
// (load_child.c) and, through fftd_load_gen, bench/soak's clients.

#include "load_impl.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

// splitmix is splitmix64, the seed's stream of random numbers.
static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// reference computes ch->ref = transform of ch->x in double (FFTW).
static int
reference(child *ch)
{
	slot         *s = ch->s;
	int           n = (int) s->n, b = (int) s->batch;
	size_t        m = ch->nout / 2; // complex outputs
	fftw_complex *o = fftw_malloc(sizeof(fftw_complex) * m);
	void         *i = fftw_malloc(s->kind == FFTD_R2C
	                ? sizeof(double) * ch->nin
	                : sizeof(fftw_complex) * (ch->nin / 2));
	fftw_plan     pl;
	if (o == NULL || i == NULL) {
		fftw_free(o);
		fftw_free(i);
		return -1;
	}
	double *id = i;
	for (size_t k = 0; k < ch->nin; k++) {
		id[k] = ch->x[k];
	}
	if (s->kind == FFTD_R2C) {
		pl = fftw_plan_many_dft_r2c(1, &n, b, id, NULL, 1, n, o, NULL,
		    1, n / 2 + 1, FFTW_ESTIMATE);
	} else {
		pl = fftw_plan_many_dft(1, &n, b, i, NULL, 1, n, o, NULL, 1, n,
		    FFTW_FORWARD, FFTW_ESTIMATE);
	}
	if (pl == NULL) {
		fftw_free(o);
		fftw_free(i);
		return -1;
	}
	fftw_execute(pl);
	double sum = 0;
	for (size_t k = 0; k < m; k++) {
		ch->ref[2 * k]     = (float) o[k][0];
		ch->ref[2 * k + 1] = (float) o[k][1];
		sum += o[k][0] * o[k][0] + o[k][1] * o[k][1];
	}
	ch->ref_norm2 = sum;
	fftw_destroy_plan(pl);
	fftw_free(o);
	fftw_free(i);
	return 0;
}

// fftd__load_factor is c_k, exact in f32 (and in every x it multiplies).
double
fftd__load_factor(uint64_t k)
{
	return (double) (1 + k % NFACTORS);
}

// fftd__load_input returns request k's input, c_k x. The NFACTORS inputs are
// made once, so that a client's own CPU time per request is the check alone
// (plus libfftd's copies): a client sending 16 MiB requests must keep up
// with its share of a GPU.
const float *
fftd__load_input(child *ch, uint64_t k)
{
	return ch->in[k % NFACTORS];
}

// fftd__load_rel_err is ||out - c X|| / ||c X|| over the whole request (NaN if
// any output is NaN). Four partial sums keep the loop from waiting on one chain
// of additions.
double
fftd__load_rel_err(const child *ch, const float *out, uint64_t k)
{
	float        c    = (float) fftd__load_factor(k);
	const float *r    = ch->ref;
	double       e[4] = { 0, 0, 0, 0 };
	size_t       i    = 0;
	for (; i + 4 <= ch->nout; i += 4) {
		for (int j = 0; j < 4; j++) {
			float d = out[i + j] - c * r[i + j];
			e[j] += (double) d * (double) d;
		}
	}
	for (; i < ch->nout; i++) {
		float d = out[i] - c * r[i];
		e[0] += (double) d * (double) d;
	}
	double sum = (e[0] + e[1]) + (e[2] + e[3]);
	return sqrt(sum / ((double) c * (double) c * ch->ref_norm2));
}

// fftd__load_make_inputs draws the base input x from the slot's seed, makes the
// NFACTORS inputs c x and the reference c-free transform X (FFTW).
int
fftd__load_make_inputs(child *ch)
{
	uint64_t seed = ch->s->seed;
	for (size_t i = 0; i < ch->nin; i++) {
		int v    = (int) (splitmix(&seed) % 4097) - 2048; // -2048..2048
		ch->x[i] = (float) v / 2048.0f;
	}
	for (int f = 0; f < NFACTORS; f++) {
		float c = (float) fftd__load_factor((uint64_t) f);
		for (size_t i = 0; i < ch->nin; i++) {
			// exact: x has 12 significant bits, c 4
			ch->in[f][i] = c * ch->x[i];
		}
	}
	return reference(ch);
}

// fftd_load_gen is a client's inputs and expected results for one shape
// outside a load run: a child and its slot of their own, so that the
// same code draws and checks (bench/soak).
struct fftd_load_gen {
	child ch;
	slot  s;
};

// fftd_load_gen_new makes a generator of one shape's inputs (load.h).
fftd_load_gen *
fftd_load_gen_new(fftd_kind kind, int64_t n, int64_t batch, uint64_t seed)
{
	fftd_load_gen *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		return NULL;
	}
	child *ch     = &g->ch;
	ch->s         = &g->s;
	g->s.kind     = kind;
	g->s.n        = n;
	g->s.batch    = batch;
	g->s.seed     = seed;
	g->s.in_bytes = (size_t) (n * batch) * (kind == FFTD_R2C ? 4 : 8);
	g->s.out_bytes
	    = (size_t) ((kind == FFTD_R2C ? n / 2 + 1 : n) * batch) * 8;
	g->s.bound = 16.0 * ldexp(1.0, -24) * fmax(1.0, log2((double) n));
	ch->nin    = g->s.in_bytes / sizeof(float);
	ch->nout   = g->s.out_bytes / sizeof(float);
	ch->x      = malloc(g->s.in_bytes);
	ch->ref    = malloc(g->s.out_bytes);
	int bad    = ch->x == NULL || ch->ref == NULL;
	for (int f = 0; f < NFACTORS; f++) {
		ch->in[f] = malloc(g->s.in_bytes);
		bad |= ch->in[f] == NULL;
	}
	if (bad || fftd__load_make_inputs(ch) != 0) {
		fftd_load_gen_free(g);
		return NULL;
	}
	return g;
}

// fftd_load_gen_in_bytes is the size of one input.
size_t
fftd_load_gen_in_bytes(const fftd_load_gen *g)
{
	return g->s.in_bytes;
}

// fftd_load_gen_out_bytes is the size of one result.
size_t
fftd_load_gen_out_bytes(const fftd_load_gen *g)
{
	return g->s.out_bytes;
}

// fftd_load_gen_input is request k's input, c_k x.
const float *
fftd_load_gen_input(const fftd_load_gen *g, uint64_t k)
{
	return fftd__load_input((child *) &g->ch, k);
}

// fftd_load_gen_error is request k's relative L2 error.
double
fftd_load_gen_error(const fftd_load_gen *g, const float *out, uint64_t k)
{
	return fftd__load_rel_err(&g->ch, out, k);
}

// fftd_load_gen_bound is the error a right result stays within.
double
fftd_load_gen_bound(const fftd_load_gen *g)
{
	return g->s.bound;
}

// fftd_load_gen_free frees a generator (NULL: nothing).
void
fftd_load_gen_free(fftd_load_gen *g)
{
	if (g == NULL) {
		return;
	}
	for (int f = 0; f < NFACTORS; f++) {
		free(g->ch.in[f]);
	}
	free(g->ch.x);
	free(g->ch.ref);
	free(g);
}

// SPDX-License-Identifier: MIT
//
// load.c — a many-tenant load on a real daemon (see load.h). Linked into
// bench/load and the integration tests, not into the unit tests (it calls
// libfftd).

#include "load.h"
#include "cpu_slice.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <fftw3.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { PH_WAIT = 0, PH_REALTIME = 1, PH_ALL = 2, PH_STOP = 3 };
enum { ST_STARTING = 0, ST_READY = 1, ST_DONE = 2, ST_FAILED = -1 };

#define LAT_CAP (1u << 20) // latency samples per realtime client and phase
// stage samples per realtime client and phase: FFTD_LOAD_NSTAGES stages
// and the whole latency each (us)
#define STAGE_CAP (1u << 16)
#define STAGE_W (FFTD_LOAD_NSTAGES + 1)

const char *const fftd_load_stage_names[FFTD_LOAD_NSTAGES]
    = { "copy in", "to daemon", "queue", "device", "back", "copy out" };
#define NFACTORS 13  // c_k = 1 + (k mod 13)
#define SAMPLE_MS 50 // client-stats sampling in the window

// --- shapes
// -------------------------------------------------------------------

typedef struct shape {
	fftd_kind kind;
	int64_t   n, batch;
} shape;

// Batch clients take these in turn. Full (a GPU): 256 KiB .. 16 MiB of
// input per request. Small (the fftw backend on a CPU): 16 .. 192 KiB, so
// that 10^5 requests take a couple of minutes on two cores.
static const shape FULL[] = {
	{ FFTD_C2C, 1024, 32 },   // 256 KiB
	{ FFTD_R2C, 16384, 16 },  // 1 MiB
	{ FFTD_C2C, 1000, 256 },  // 1.95 MiB, not a power of two
	{ FFTD_C2C, 4096, 128 },  // 4 MiB
	{ FFTD_R2C, 6000, 256 },  // 5.9 MiB, not a power of two
	{ FFTD_R2C, 1 << 18, 8 }, // 8 MiB
	{ FFTD_C2C, 1 << 20, 2 }, // 16 MiB
};
static const shape SMALL[] = {
	{ FFTD_C2C, 256, 8 },   // 16 KiB
	{ FFTD_R2C, 2048, 8 },  // 64 KiB
	{ FFTD_C2C, 1000, 8 },  // 62.5 KiB, not a power of two
	{ FFTD_C2C, 1024, 16 }, // 128 KiB
	{ FFTD_R2C, 6000, 8 },  // 187.5 KiB, not a power of two
	{ FFTD_R2C, 8192, 4 },  // 128 KiB
	{ FFTD_C2C, 4096, 6 },  // 192 KiB
};
#define NSHAPES ((int) (sizeof(FULL) / sizeof(FULL[0])))
_Static_assert(NSHAPES == FFTD_LOAD_NSHAPES
        && sizeof(SMALL) / sizeof(SMALL[0]) == FFTD_LOAD_NSHAPES,
    "size tables");
static const shape RT_FULL  = { FFTD_C2C, 4096, 16 }; // 512 KiB
static const shape RT_SMALL = { FFTD_C2C, 4096, 4 };  // 128 KiB

// --- what parent and children share (a file both map)
// -------------------------

typedef struct slot {
	// written by the parent before the child starts
	int       realtime;
	fftd_kind kind;
	int64_t   n, batch;
	int       depth;
	double    rate_hz;
	uint64_t  seed;
	int       rt_stream; // realtime: use a stream (the child says if it
	                     // could)
	int  batch_shm;      // batch: arrays in an fftd_buffer (zero copy)
	int  batch_nice;     // batch: the child's nice value (0: unchanged)
	int  rt_slice_us;    // realtime: its threads' time slice (0: default)
	int  rt_in_place;    // realtime: stream slots used in place
	int  rt_spin_us;     // realtime: stream waits spin this long
	char batch_cpus[64]; // batch: CPUs it may run on ("": all)
	// written by the child
	_Atomic int      state;
	pid_t            pid;
	char             why[200];
	char             algorithm[16];
	size_t           in_bytes, out_bytes;
	double           bound, max_err;
	_Atomic uint64_t submitted; // submit calls that returned FFTD_OK
	_Atomic uint64_t answered;  // of them, completed (any status)
	uint64_t         ok, wrong, failed, refused, wrong_after_mark;
	int              refused_status;
	uint64_t         status[2][FFTD_LOAD_NSTATUS];
	_Atomic uint64_t mark;
	_Atomic int      marked;
	uint64_t         nlat[2];
	uint64_t         nstage[2];
	uint64_t         missed;
} slot;

typedef struct shared {
	char        url[512];
	int         nclients, nrealtime, timeout_ms;
	int         rt_unloaded; // unloaded samples per realtime client
	_Atomic int phase;
	_Atomic int steady;   // in the steady window
	_Atomic int mark_req; // SIGTERM run: ping and mark
	slot        slot[FFTD_LOAD_MAX_CLIENTS];
	// then float lat[nrealtime][2][LAT_CAP] (microseconds)
	// and float stage[nrealtime][2][STAGE_CAP][STAGE_W]
} shared;

static size_t
shared_size(int nrealtime)
{
	return sizeof(shared) + (size_t) nrealtime * 2 * LAT_CAP * sizeof(float)
	    + (size_t) nrealtime * 2 * STAGE_CAP * STAGE_W * sizeof(float);
}

static float *
lat_of(shared *sh, int i, int phase)
{
	float *base = (float *) (sh + 1);
	return base + ((size_t) i * 2 + (size_t) phase) * LAT_CAP;
}

// stage_of is realtime client i's stage samples of a phase: STAGE_W
// floats each.
static float *
stage_of(shared *sh, int i, int phase)
{
	float *base = (float *) (sh + 1) + (size_t) sh->nrealtime * 2 * LAT_CAP;
	return base + ((size_t) i * 2 + (size_t) phase) * STAGE_CAP * STAGE_W;
}

// --- small helpers
// ------------------------------------------------------------

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void
sleep_ms(int ms)
{
	fftd_test_sleep_ms(ms);
}

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *
ferr(int rv)
{
	static _Thread_local char b[300];
	const char               *d = fftd_last_error();
	snprintf(b, sizeof(b), "%s%s%.200s", fftd_err_name(rv),
	    d != NULL && d[0] ? ": " : "", d != NULL ? d : "");
	return b;
}

static int
bucket_of(int st)
{
	return st >= 0 && st < FFTD_LOAD_NSTATUS - 1 ? st
	                                             : FFTD_LOAD_NSTATUS - 1;
}

const char *
fftd_load_status_name(int bucket)
{
	if (bucket == FFTD_LOAD_NSTATUS - 1) {
		return "other";
	}
	const char *n = fftd_err_name(bucket);
	return strncmp(n, "FFTD_", 5) == 0 ? n + 5 : n;
}

static const char *
kind_name(fftd_kind k)
{
	return k == FFTD_C2C ? "C2C" : k == FFTD_R2C ? "R2C" : "C2R";
}

// --- the child
// ----------------------------------------------------------------

typedef struct child {
	shared      *sh;
	slot        *s;
	int          me;
	fftd_client *c;
	fftd_plan   *p;
	float       *x;   // base input (in_bytes / 4 floats)
	float       *ref; // its transform, as f32 complex pairs
	double       ref_norm2;
	size_t       nin, nout;    // floats in and out
	float       *in[NFACTORS]; // c x for each factor c, made once
	float       *out[FFTD_LOAD_MAX_DEPTH];
	fftd_buffer *shm; // holds in[] and out[] when batch_shm
	fftd_stream *st;  // realtime clients on the stream path
} child;

static void
child_fail(child *ch, const char *what, int rv)
{
	snprintf(ch->s->why, sizeof(ch->s->why), "%s: %.150s", what, ferr(rv));
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

static double
factor(uint64_t k)
{
	return (double) (1 + k % NFACTORS);
}

// input returns request k's input, c_k x. The NFACTORS inputs are made
// once, so that a client's own CPU time per request is the check alone
// (plus libfftd's copies): a client sending 16 MiB requests must keep up
// with its share of a GPU.
static const float *
input(child *ch, uint64_t k)
{
	return ch->in[k % NFACTORS];
}

// rel_err is ||out - c X|| / ||c X|| over the whole request (NaN if any
// output is NaN). Four partial sums keep the loop from waiting on one
// chain of additions.
static double
rel_err(const child *ch, const float *out, uint64_t k)
{
	float        c    = (float) factor(k);
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

// account records the answer st of request k whose output is out.
static int
account(child *ch, int st, const float *out, uint64_t k)
{
	slot *s     = ch->s;
	int   after = atomic_load(&s->marked) && k >= atomic_load(&s->mark);
	int   good  = 0;
	s->status[after][bucket_of(st)]++;
	if (st == FFTD_OK) {
		double e = rel_err(ch, out, k);
		if (e <= s->bound) {
			s->ok++;
			good = 1;
		} else {
			if (s->wrong == 0) {
				snprintf(s->why, sizeof(s->why),
				    "request %" PRIu64
				    " (factor %.0f): relative L2 error %.3g > "
				    "%.3g",
				    k, factor(k), e, s->bound);
			}
			s->wrong++;
			s->wrong_after_mark += after;
		}
		if (!(e <= s->max_err)) {
			s->max_err = e; // NaN sticks
		}
	} else {
		s->failed++;
	}
	atomic_fetch_add(&s->answered, 1);
	return good;
}

// maybe_mark answers the parent's mark request (SIGTERM run): a ping sent
// after the k requests already submitted is answered only once the daemon
// has read them.
static void
maybe_mark(child *ch, uint64_t k)
{
	slot *s = ch->s;
	if (!atomic_load(&ch->sh->mark_req) || atomic_load(&s->marked)) {
		return;
	}
	int rv = fftd_ping(ch->c, NULL);
	atomic_store(&s->mark, rv == FFTD_OK ? k : 0);
	atomic_store(&s->marked, 1);
}

static int
stop_status(int st)
{
	return st == FFTD_ECLOSED || st == FFTD_ESHUTDOWN
	    || st == FFTD_ECONNREFUSED || st == FFTD_ETIMEDOUT
	    || (st & FFTD_ERR_RANGE_MASK) == FFTD_ENNGERR;
}

// rt_exec runs one realtime request: through the client's stream
// (shared-memory slot; the input copied in, the result out, or both used
// in place: *outp then points into the slot) when it has one, else
// fftd_execute (inline). in is the slot itself when filled in place.
static int
rt_exec(child *ch, const float *in, const float **outp)
{
	*outp = ch->out[0];
	if (ch->st == NULL) {
		return fftd_execute(ch->p, in, ch->out[0]);
	}
	int rv = fftd_stream_submit(ch->st, in);
	if (rv != FFTD_OK) {
		return rv;
	}
	if (!ch->s->rt_in_place) {
		return fftd_stream_wait(ch->st, ch->out[0], NULL);
	}
	const void *o = NULL;
	rv            = fftd_stream_wait(ch->st, NULL, &o);
	if (rv == FFTD_OK) {
		*outp = o;
	}
	return rv;
}

static void
run_realtime(child *ch)
{
	shared  *sh     = ch->sh;
	slot    *s      = ch->s;
	uint64_t period = (uint64_t) (1e9 / s->rate_hz);
	uint64_t next   = now_ns();
	uint64_t k      = 0;
	for (;;) {
		int ph = atomic_load(&sh->phase);
		if (ph == PH_STOP) {
			break;
		}
		maybe_mark(ch, k);
		struct timespec ts = { (time_t) (next / 1000000000ull),
			(long) (next % 1000000000ull) };
		while (
		    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
		    == EINTR) { }
		const float *in = input(ch, k);
		if (s->rt_in_place) {
			// The producer writes the slot: not part of the
			// latency, as for a pipeline filling it in place.
			float *slot_in = fftd_stream_input(ch->st);
			if (slot_in != NULL) {
				memcpy(slot_in, in, s->in_bytes);
				in = slot_in;
			}
		}
		int          steady0 = atomic_load(&sh->steady);
		uint64_t     t0      = now_ns();
		const float *out     = NULL;
		atomic_fetch_add(&s->submitted, 1);
		int      rv      = rt_exec(ch, in, &out);
		uint64_t t1      = now_ns();
		int      steady1 = atomic_load(&sh->steady);
		int      good    = account(ch, rv, out, k);
		k++;
		int b = ph == PH_REALTIME ? 0 : steady0 && steady1 ? 1 : -1;
		if (good && b >= 0 && s->nlat[b] < LAT_CAP) {
			lat_of(sh, ch->me, b)[s->nlat[b]++]
			    = (float) ((double) (t1 - t0) * 1e-3);
		}
		fftd_stream_times tm;
		if (good && b >= 0 && s->nstage[b] < STAGE_CAP && ch->st
		    && fftd_stream_last_times(ch->st, &tm) == FFTD_OK) {
			const int64_t e[STAGE_W + 1] = { (int64_t) t0,
				tm.submitted_ns, tm.received_ns, tm.started_ns,
				tm.finished_ns, tm.answered_ns, (int64_t) t1,
				(int64_t) t0 };
			float        *v              = stage_of(sh, ch->me, b)
			    + s->nstage[b]++ * STAGE_W;
			for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
				v[j] = (float) ((double) (e[j + 1] - e[j])
				    * 1e-3);
			}
			v[FFTD_LOAD_NSTAGES]
			    = (float) ((double) (t1 - t0) * 1e-3);
		}
		if (rv != FFTD_OK && stop_status(rv)) {
			break;
		}
		next += period;
		uint64_t now = now_ns();
		if (next < now) {
			uint64_t skip = (now - next) / period + 1;
			s->missed += skip;
			next += skip * period;
		}
	}
}

static void
run_batch(child *ch)
{
	shared       *sh = ch->sh;
	slot         *s  = ch->s;
	int           D  = s->depth;
	fftd_request *req[FFTD_LOAD_MAX_DEPTH];
	uint64_t      k = 0, oldest = 0; // requests submitted, oldest in flight
	int           stop = 0;
	for (;;) {
		while (!stop && k - oldest < (uint64_t) D) {
			if (atomic_load(&sh->phase) == PH_STOP) {
				stop = 1;
				break;
			}
			maybe_mark(ch, k);
			int sl = (int) (k % (uint64_t) D);
			int rv = fftd_execute_async(ch->p, input(ch, k),
			    ch->out[sl], NULL, NULL, &req[sl]);
			if (rv != FFTD_OK) {
				if (s->refused++ == 0) {
					s->refused_status = rv;
				}
				stop = 1;
				break;
			}
			k++;
			atomic_store(&s->submitted, k);
		}
		if (oldest == k) {
			break;
		}
		int sl = (int) (oldest % (uint64_t) D);
		int st = fftd_request_wait(req[sl]);
		account(ch, st, ch->out[sl], oldest);
		oldest++;
	}
}

int
fftd_load_cpu_list(const char *list, void *set)
{
	cpu_set_t *cs = set;
	CPU_ZERO(cs);
	const char *p = list;
	while (*p != '\0') {
		char *end;
		long  a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0) {
			return -1;
		}
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a) {
				return -1;
			}
			p = end;
		}
		if (b >= CPU_SETSIZE) {
			return -1;
		}
		for (long c = a; c <= b; c++) {
			CPU_SET((int) c, cs);
		}
		if (*p == ',') {
			p++;
		} else if (*p != '\0') {
			return -1;
		}
	}
	return CPU_COUNT(cs);
}

// make_inputs draws the base input x from the slot's seed, makes the
// NFACTORS inputs c x and the reference c-free transform X (FFTW).
static int
make_inputs(child *ch)
{
	uint64_t seed = ch->s->seed;
	for (size_t i = 0; i < ch->nin; i++) {
		int v    = (int) (splitmix(&seed) % 4097) - 2048; // -2048..2048
		ch->x[i] = (float) v / 2048.0f;
	}
	for (int f = 0; f < NFACTORS; f++) {
		float c = (float) factor((uint64_t) f);
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
	if (bad || make_inputs(ch) != 0) {
		fftd_load_gen_free(g);
		return NULL;
	}
	return g;
}

size_t
fftd_load_gen_in_bytes(const fftd_load_gen *g)
{
	return g->s.in_bytes;
}

size_t
fftd_load_gen_out_bytes(const fftd_load_gen *g)
{
	return g->s.out_bytes;
}

const float *
fftd_load_gen_input(const fftd_load_gen *g, uint64_t k)
{
	return input((child *) &g->ch, k);
}

double
fftd_load_gen_error(const fftd_load_gen *g, const float *out, uint64_t k)
{
	return rel_err(&g->ch, out, k);
}

double
fftd_load_gen_bound(const fftd_load_gen *g)
{
	return g->s.bound;
}

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

static int
child_main(child *ch)
{
	shared *sh = ch->sh;
	slot   *s  = ch->s;
	// Lowering one's own priority needs no privilege; a failure only
	// leaves the batch client as urgent as the others.
	if (!s->realtime && s->batch_nice > 0) {
		(void) setpriority(PRIO_PROCESS, 0, s->batch_nice);
	}
	// Before libfftd starts its threads, which inherit the mask.
	cpu_set_t cpus;
	if (s->batch_cpus[0] != '\0'
	    && (fftd_load_cpu_list(s->batch_cpus, &cpus) <= 0
	        || sched_setaffinity(0, sizeof(cpus), &cpus) != 0)) {
		child_fail(ch, "sched_setaffinity", FFTD_EINVAL);
		return 1;
	}
	int rv = fftd_client_open(&ch->c, sh->url, sh->timeout_ms);
	if (rv != FFTD_OK) {
		child_fail(ch, "fftd_client_open", rv);
		return 1;
	}
	if (s->realtime && s->rt_slice_us > 0) {
		// libfftd's threads exist now; a kernel without custom slices
		// ignores this.
		(void) fftd__set_slice_all((uint64_t) s->rt_slice_us * 1000);
	}
	fftd_plan_desc d;
	fftd_plan_desc_init(&d, 1, &s->n, s->kind, FFTD_F32);
	d.batch    = s->batch;
	d.priority = s->realtime ? FFTD_PRIORITY_REALTIME : FFTD_PRIORITY_BATCH;
	if ((rv = fftd_plan_create(ch->c, &d, &ch->p)) != FFTD_OK) {
		child_fail(ch, "fftd_plan_create", rv);
		return 1;
	}
	snprintf(s->algorithm, sizeof(s->algorithm), "%s",
	    fftd_plan_algorithm(ch->p));
	s->in_bytes  = fftd_plan_input_bytes(ch->p);
	s->out_bytes = fftd_plan_output_bytes(ch->p);
	ch->nin      = s->in_bytes / sizeof(float);
	ch->nout     = s->out_bytes / sizeof(float);
	s->bound     = 16.0 * ldexp(1.0, -24) * fmax(1.0, log2((double) s->n));
	ch->x        = malloc(s->in_bytes);
	ch->ref      = malloc(s->out_bytes);
	int          nout     = s->realtime ? 1 : s->depth;
	int          bad      = ch->x == NULL || ch->ref == NULL;
	fftd_buffer *shm      = NULL; // kept in ch->shm once made
	size_t       in_span  = (s->in_bytes + 63) & ~(size_t) 63;
	size_t       out_span = (s->out_bytes + 63) & ~(size_t) 63;
	if (!s->realtime && s->batch_shm
	    && fftd_buffer_create(
	           ch->c, NFACTORS * in_span + (size_t) nout * out_span, &shm)
	        != FFTD_OK) {
		shm = NULL; // not ipc://: plain memory after all
	}
	ch->shm = shm;
	for (int i = 0; i < NFACTORS; i++) {
		// In a shared buffer the daemon reads the arrays in place and
		// writes the results there: no copy on either side.
		ch->in[i] = shm ? (float *) ((char *) fftd_buffer_data(shm)
		                + (size_t) i * in_span)
		                : malloc(s->in_bytes);
		bad |= ch->in[i] == NULL;
	}
	for (int i = 0; i < nout; i++) {
		ch->out[i] = shm ? (float *) ((char *) fftd_buffer_data(shm)
		                 + NFACTORS * in_span + (size_t) i * out_span)
		                 : calloc(1, s->out_bytes);
		bad |= ch->out[i] == NULL;
	}
	if (bad) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		return 1;
	}
	if (make_inputs(ch) != 0) {
		snprintf(s->why, sizeof(s->why), "FFTW reference failed");
		return 1;
	}
	// One warm-up execution (plans the daemon's side), checked; not
	// counted.
	if (s->realtime && s->rt_stream) {
		rv = fftd_stream_open(ch->p, 1, &ch->st);
		if (rv != FFTD_OK && rv != FFTD_EUNSUPPORTED) {
			child_fail(ch, "fftd_stream_open", rv);
			return 1;
		}
		s->rt_stream = rv == FFTD_OK; // tcp://: inline after all
		if (s->rt_stream && s->rt_spin_us > 0) {
			rv = fftd_stream_set_spin(
			    ch->st, (uint32_t) s->rt_spin_us);
			if (rv != FFTD_OK && rv != FFTD_EUNSUPPORTED) {
				child_fail(ch, "fftd_stream_set_spin", rv);
				return 1;
			}
		}
	}
	s->rt_in_place    = s->rt_in_place && s->rt_stream;
	const float *warm = ch->out[0];
	rv                = s->realtime ? rt_exec(ch, input(ch, 0), &warm)
	                                : fftd_execute(ch->p, input(ch, 0), ch->out[0]);
	if (rv != FFTD_OK) {
		child_fail(ch, "warm-up fftd_execute", rv);
		return 1;
	}
	double e = rel_err(ch, warm, 0);
	if (!(e <= s->bound)) {
		snprintf(s->why, sizeof(s->why),
		    "warm-up result wrong: relative L2 error %.3g > %.3g", e,
		    s->bound);
		return 1;
	}
	memset(ch->out[0], 0, s->out_bytes);
	atomic_store(&s->state, ST_READY);

	int want = s->realtime ? PH_REALTIME : PH_ALL;
	while (atomic_load(&sh->phase) < want) {
		sleep_ms(1);
	}
	if (atomic_load(&sh->phase) != PH_STOP) {
		if (s->realtime) {
			run_realtime(ch);
		} else {
			run_batch(ch);
		}
	}
	return 0;
}

int
fftd_load_role(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "load-client: PATH INDEX\n");
		return 2;
	}
	int         fd = open(argv[0], O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(
		    stderr, "load-client: %s: %s\n", argv[0], strerror(errno));
		return 2;
	}
	shared *sh = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	close(fd);
	int me = atoi(argv[1]);
	if (sh == MAP_FAILED || me < 0 || me >= sh->nclients) {
		return 2;
	}
	child ch  = { .sh = sh, .s = &sh->slot[me], .me = me };
	ch.s->pid = getpid();
	int rc    = child_main(&ch);
	if (ch.shm == NULL) {
		for (int i = 0; i < FFTD_LOAD_MAX_DEPTH; i++) {
			free(ch.out[i]);
		}
		for (int i = 0; i < NFACTORS; i++) {
			free(ch.in[i]);
		}
	}
	free(ch.x);
	free(ch.ref);
	fftd_stream_close(ch.st);
	fftd_buffer_destroy(ch.shm);
	fftd_plan_destroy(ch.p);
	if (ch.c != NULL) {
		fftd_client_close(ch.c);
	}
	atomic_store(&ch.s->state, rc == 0 ? ST_DONE : ST_FAILED);
	munmap(sh, (size_t) st.st_size);
	return rc;
}

// --- the parent
// ---------------------------------------------------------------

void
fftd_load_defaults(fftd_load_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nclients  = 16;
	cfg->nrealtime = 2;
	cfg->requests  = 100000;
	cfg->depth     = 8;
	cfg->sizes     = FFTD_LOAD_SIZES_AUTO;
	cfg->timeout_s = 900;
}

static void fail(fftd_load_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fail(fftd_load_result *r, const char *fmt, ...)
{
	if (r->failures++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->failure, sizeof(r->failure), fmt, ap);
		va_end(ap);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

static double
pct(const double *v, uint64_t n, double p)
{
	if (n == 0) {
		return NAN;
	}
	uint64_t i = (uint64_t) ceil(p * (double) n);
	return v[i > 0 ? i - 1 : 0];
}

static void
lat_summary(fftd_load_lat *L, double *v, uint64_t n)
{
	memset(L, 0, sizeof(*L));
	L->n = n;
	if (n == 0) {
		L->p50 = L->p99 = L->p999 = L->max = L->mean = NAN;
		return;
	}
	qsort(v, n, sizeof(double), cmp_double);
	double sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		sum += v[i];
	}
	L->p50  = pct(v, n, 0.50);
	L->p99  = pct(v, n, 0.99);
	L->p999 = pct(v, n, 0.999);
	L->max  = v[n - 1];
	L->mean = sum / (double) n;
}

// A snapshot of the daemon's per-client and per-device statistics.
#define MAX_STATS 256
typedef struct snap {
	int               rv, n, ndev;
	fftd_client_stats cs[MAX_STATS];
	fftd_device_stats ds[FFTD_MAX_DEVICES];
	uint64_t          answered[FFTD_LOAD_MAX_CLIENTS];
	double            t;
} snap;

// cpu_ticks reads the host's CPU time from /proc/stat's "cpu" line:
// t[0] all, t[1] idle (idle + iowait), t[2] steal. 0: unreadable.
static int
cpu_ticks(unsigned long long t[3])
{
	FILE *f = fopen("/proc/stat", "r");
	if (f == NULL) {
		return 0;
	}
	unsigned long long v[8] = { 0 };
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8) {
		return 0;
	}
	t[0] = 0;
	for (int i = 0; i < 8; i++) {
		t[0] += v[i];
	}
	t[1] = v[3] + v[4];
	t[2] = v[7];
	return 1;
}

// cpu_share sets *busy and *steal to the fractions of the host's CPU time
// between two cpu_ticks readings (NAN if either failed or none passed).
static void
cpu_share(const unsigned long long a[3], int oka, const unsigned long long b[3],
    int okb, double *busy, double *steal)
{
	*busy = *steal = NAN;
	if (!oka || !okb || b[0] <= a[0]) {
		return;
	}
	double all = (double) (b[0] - a[0]);
	*steal     = (double) (b[2] - a[2]) / all;
	*busy = (all - (double) (b[1] - a[1]) - (double) (b[2] - a[2])) / all;
}

static int
take_snap(fftd_client *ctl, shared *sh, snap *sn, char *why, size_t wlen)
{
	sn->t  = now_s();
	int rv = fftd_get_client_stats(ctl, sn->cs, MAX_STATS, &sn->n);
	if (rv == FFTD_OK) {
		rv = fftd_get_device_stats(
		    ctl, sn->ds, FFTD_MAX_DEVICES, &sn->ndev);
	}
	if (sn->n > MAX_STATS) {
		sn->n = MAX_STATS;
	}
	if (sn->ndev > FFTD_MAX_DEVICES) {
		sn->ndev = FFTD_MAX_DEVICES;
	}
	for (int i = 0; i < sh->nclients; i++) {
		sn->answered[i] = atomic_load(&sh->slot[i].answered);
	}
	sn->rv = rv;
	if (rv != FFTD_OK && why != NULL && why[0] == '\0') {
		snprintf(why, wlen, "fftd_get_client_stats: %.150s", ferr(rv));
	}
	return rv;
}

static const fftd_client_stats *
find_pid(const snap *sn, pid_t pid)
{
	for (int i = 0; i < sn->n && pid > 0; i++) {
		if (sn->cs[i].pid == (uint64_t) pid) {
			return &sn->cs[i];
		}
	}
	return NULL;
}

static uint64_t
total_answered(shared *sh)
{
	uint64_t t = 0;
	for (int i = 0; i < sh->nclients; i++) {
		t += atomic_load(&sh->slot[i].answered);
	}
	return t;
}

// wait_all waits until pred(sh, i) holds for every client i in [lo, hi)
// or a child failed or timeout_s passed; returns 0, or -1 with why.
static int
wait_all(shared *sh, int lo, int hi, int (*pred)(shared *, int),
    double timeout_s, fftd_load_result *r, const char *what)
{
	double until = now_s() + timeout_s;
	for (;;) {
		int all = 1;
		for (int i = lo; i < hi; i++) {
			if (atomic_load(&sh->slot[i].state) == ST_FAILED) {
				fail(r, "client %d failed %s: %s", i, what,
				    sh->slot[i].why);
				return -1;
			}
			all &= pred(sh, i);
		}
		if (all) {
			return 0;
		}
		if (now_s() > until) {
			fail(r, "timed out (%.0f s) %s", timeout_s, what);
			return -1;
		}
		sleep_ms(2);
	}
}

static int
p_ready(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].state) != ST_STARTING;
}

static int
p_unloaded(shared *sh, int i)
{
	return sh->slot[i].nlat[0] >= (uint64_t) sh->rt_unloaded
	    || atomic_load(&sh->slot[i].state) != ST_READY;
}

static int
p_backlogged(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].answered)
	    >= 2 * (uint64_t) sh->slot[i].depth;
}

static int
p_marked(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].marked)
	    || atomic_load(&sh->slot[i].state) != ST_READY;
}

static void
collect(fftd_load_result *r, shared *sh, const int *codes)
{
	for (int i = 0; i < r->nclients; i++) {
		slot             *s = &sh->slot[i];
		fftd_load_client *c = &r->cl[i];
		c->realtime         = s->realtime;
		c->kind             = s->kind;
		c->n                = s->n;
		c->batch            = s->batch;
		c->in_bytes         = s->in_bytes;
		c->out_bytes        = s->out_bytes;
		c->depth            = s->realtime ? 1 : s->depth;
		c->rate_hz          = s->rate_hz;
		c->rt_stream        = s->rt_stream;
		c->pid              = s->pid;
		c->exit_code        = codes[i];
		snprintf(
		    c->algorithm, sizeof(c->algorithm), "%s", s->algorithm);
		snprintf(c->why, sizeof(c->why), "%s", s->why);
		c->submitted  = atomic_load(&s->submitted);
		c->ok         = s->ok;
		c->wrong      = s->wrong;
		c->failed     = s->failed;
		c->refused    = s->refused;
		uint64_t ans  = atomic_load(&s->answered);
		c->unanswered = c->submitted > ans ? c->submitted - ans : 0;
		memcpy(c->status, s->status, sizeof(c->status));
		c->wrong_after_mark = s->wrong_after_mark;
		c->mark = atomic_load(&s->marked) ? atomic_load(&s->mark)
		                                  : c->submitted;
		c->refused_status = s->refused_status;
		c->max_err        = s->max_err;
		c->bound          = s->bound;
		c->missed         = s->missed;
		r->submitted += c->submitted;
		r->ok += c->ok;
		r->wrong += c->wrong;
		r->failed += c->failed;
		r->unanswered += c->unanswered;
		r->refused += c->refused;
	}
}

// stages summarises the realtime clients' stage samples of a phase.
static void
stages(fftd_load_stages *S, shared *sh, int b)
{
	memset(S, 0, sizeof(*S));
	uint64_t n = 0;
	for (int i = 0; i < sh->nrealtime; i++) {
		n += sh->slot[i].nstage[b];
	}
	S->n       = n;
	double *v  = malloc(sizeof(double) * (n + 1));
	double *tt = malloc(sizeof(double) * (n + 1));
	for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
		S->p50[j] = S->p99[j] = S->tail_mean[j] = NAN;
	}
	S->tail_total_mean = NAN;
	if (n == 0 || v == NULL || tt == NULL) {
		free(v);
		free(tt);
		return;
	}
	// The tail: executions whose whole latency is above the p99.
	uint64_t m = 0;
	for (int i = 0; i < sh->nrealtime; i++) {
		const float *x = stage_of(sh, i, b);
		for (uint64_t k = 0; k < sh->slot[i].nstage[b]; k++) {
			tt[m++] = x[k * STAGE_W + FFTD_LOAD_NSTAGES];
		}
	}
	qsort(tt, n, sizeof(double), cmp_double);
	double cut = pct(tt, n, 0.99), tail[FFTD_LOAD_NSTAGES + 1] = { 0 };
	for (int j = 0; j <= FFTD_LOAD_NSTAGES; j++) {
		m = 0;
		for (int i = 0; i < sh->nrealtime; i++) {
			const float *x = stage_of(sh, i, b);
			for (uint64_t k = 0; k < sh->slot[i].nstage[b]; k++) {
				const float *e = x + k * STAGE_W;
				v[m++]         = e[j];
				if (e[FFTD_LOAD_NSTAGES] > cut) {
					tail[j] += e[j];
					S->ntail += j == 0;
				}
			}
		}
		if (j == FFTD_LOAD_NSTAGES) {
			break;
		}
		qsort(v, n, sizeof(double), cmp_double);
		S->p50[j] = pct(v, n, 0.50);
		S->p99[j] = pct(v, n, 0.99);
	}
	if (S->ntail > 0) {
		for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
			S->tail_mean[j] = tail[j] / (double) S->ntail;
		}
		S->tail_total_mean
		    = tail[FFTD_LOAD_NSTAGES] / (double) S->ntail;
	}
	free(v);
	free(tt);
}

static void
latencies(fftd_load_result *r, shared *sh)
{
	uint64_t tot[2] = { 0, 0 };
	for (int i = 0; i < sh->nrealtime; i++) {
		tot[0] += sh->slot[i].nlat[0];
		tot[1] += sh->slot[i].nlat[1];
	}
	for (int b = 0; b < 2; b++) {
		double  *all = malloc(sizeof(double) * (tot[b] + 1));
		uint64_t m   = 0;
		for (int i = 0; i < sh->nrealtime && all != NULL; i++) {
			uint64_t n   = sh->slot[i].nlat[b];
			double  *one = malloc(sizeof(double) * (n + 1));
			for (uint64_t j = 0; j < n && one != NULL; j++) {
				one[j] = all[m++] = lat_of(sh, i, b)[j];
			}
			if (one != NULL) {
				lat_summary(
				    b ? &r->cl[i].loaded : &r->cl[i].unloaded,
				    one, n);
			}
			free(one);
		}
		if (all != NULL) {
			lat_summary(
			    b ? &r->rt_loaded : &r->rt_unloaded, all, m);
		}
		free(all);
	}
	r->p99_ratio = r->rt_loaded.p99 / r->rt_unloaded.p99;
	for (int b = 0; b < 2; b++) {
		stages(&r->rt_stages[b], sh, b);
	}
}

static void
dq_of(fftd_load_dq *q, const uint64_t *a, const uint64_t *b)
{
	uint64_t d[FFTD_HIST_BUCKETS], n = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		d[i] = b[i] - a[i];
		n += d[i];
	}
	q->n   = n;
	q->p50 = q->p99 = NAN;
	uint64_t cum    = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS && n > 0; i++) {
		cum += d[i];
		double bound = fftd_hist_bound(i) * 1e6;
		if (isnan(q->p50) && cum * 2 >= n) {
			q->p50 = bound;
		}
		if (isnan(q->p99) && cum * 100 >= n * 99) {
			q->p99 = bound;
		}
	}
}

// daemon_lat fills the clients' daemon-side latencies of one phase.
static void
daemon_lat(
    fftd_load_result *r, shared *sh, const snap *s0, const snap *s1, int phase)
{
	for (int i = 0; i < r->nclients; i++) {
		const fftd_client_stats *a = find_pid(s0, sh->slot[i].pid);
		const fftd_client_stats *b = find_pid(s1, sh->slot[i].pid);
		if (a != NULL && b != NULL) {
			dq_of(&r->cl[i].queue[phase], a->queue_hist,
			    b->queue_hist);
			dq_of(&r->cl[i].device[phase], a->device_hist,
			    b->device_hist);
		}
	}
}

// jain_of is Jain's index (sum x)^2 / (n sum x^2) of n > 0 values from
// their sum and sum of squares; NAN when all are 0.
static double
jain_of(double sum, double sum2, int n)
{
	return sum2 > 0 ? sum * sum / ((double) n * sum2) : NAN;
}

void
fftd_load_fairness(const double *device_s, const double *weight,
    const double *backlogged, int n, fftd_load_fair *out)
{
	double sum = 0, sum2 = 0;
	int    nb = 0;
	for (int i = 0; i < n; i++) {
		if (backlogged[i] >= FFTD_LOAD_BACKLOG_MIN) {
			double x = device_s[i] / weight[i];
			sum += x;
			sum2 += x * x;
			nb++;
		}
	}
	out->n         = n;
	out->jain_bl_n = nb;
	out->mean_bl   = nb > 0 ? sum / nb : NAN;
	out->jain_bl   = nb >= 2 ? jain_of(sum, sum2, nb) : NAN;
	out->over_n    = 0;
	for (int i = 0; i < n && nb > 0; i++) {
		if (!(backlogged[i] >= FFTD_LOAD_BACKLOG_MIN)
		    && device_s[i] / weight[i]
		        > FFTD_LOAD_OVER_TOL * out->mean_bl) {
			out->over_n++;
		}
	}
}

// fairness computes the window's per-client figures and Jain's index
// over the batch clients.
static void
fairness(fftd_load_result *r, shared *sh, const snap *s0, const snap *s1,
    const uint64_t *bl, uint64_t nsamples)
{
	double sum = 0, sum2 = 0, mn = INFINITY, mx = 0;
	int    n = 0;
	// the batch clients' device time, weight and backlogged share
	double dv[FFTD_LOAD_MAX_CLIENTS], wt[FFTD_LOAD_MAX_CLIENTS],
	    bg[FFTD_LOAD_MAX_CLIENTS];
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client        *c = &r->cl[i];
		const fftd_client_stats *a = find_pid(s0, sh->slot[i].pid);
		const fftd_client_stats *b = find_pid(s1, sh->slot[i].pid);
		if (a == NULL || b == NULL) {
			continue;
		}
		c->matched  = 1;
		c->device_s = b->device_seconds - a->device_seconds;
		c->queue_s  = b->queue_seconds - a->queue_seconds;
		c->executes = b->executes - a->executes;
		c->weight   = b->weight;
		c->backlogged
		    = nsamples ? (double) bl[i] / (double) nsamples : NAN;
		if (!c->realtime) {
			sum += c->device_s;
			sum2 += c->device_s * c->device_s;
			mn    = fmin(mn, c->device_s);
			mx    = fmax(mx, c->device_s);
			dv[n] = c->device_s;
			wt[n] = c->weight > 0 ? c->weight : 1;
			bg[n] = c->backlogged;
			n++;
		}
	}
	r->jain_n = n;
	r->jain   = n > 0 ? jain_of(sum, sum2, n) : NAN;
	fftd_load_fairness(dv, wt, bg, n, &r->fair);
	if (n > 0 && sum > 0) {
		r->share_min = mn / (sum / n);
		r->share_max = mx / (sum / n);
	} else {
		r->share_min = r->share_max = NAN;
	}
	double busy = 0;
	r->ndev     = 0;
	for (int d = 0; d < s1->ndev && d < s0->ndev; d++) {
		double b = s1->ds[d].busy_seconds - s0->ds[d].busy_seconds;
		busy += b;
		r->dev_busy[d]     = r->window_s > 0 ? b / r->window_s : NAN;
		r->dev_executes[d] = s1->ds[d].executes - s0->ds[d].executes;
		r->ndev            = d + 1;
	}
	r->device_busy = s1->ndev > 0 && r->window_s > 0
	    ? busy / (r->window_s * s1->ndev)
	    : NAN;
}

static void
verdict(fftd_load_result *r)
{
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client *c = &r->cl[i];
		if (c->exit_code != 0) {
			fail(r, "client %d exited with status %d%s%s", i,
			    c->exit_code, c->why[0] ? ": " : "", c->why);
		}
	}
	if (!r->sigterm) {
		r->lost = r->failed + r->unanswered + r->refused;
		if (r->lost != 0) {
			for (int i = 0; i < r->nclients; i++) {
				fftd_load_client *c = &r->cl[i];
				for (int b = 1; b < FFTD_LOAD_NSTATUS
				     && c->failed + c->refused != 0;
				     b++) {
					if (c->status[0][b] != 0) {
						fail(r,
						    "client %d: %" PRIu64
						    " requests answered %s",
						    i, c->status[0][b],
						    fftd_load_status_name(b));
						break;
					}
				}
				if (c->refused) {
					fail(r,
					    "client %d: a submit failed: %s", i,
					    fftd_err_name(c->refused_status));
				}
			}
			fail(r, "%" PRIu64 " requests lost", r->lost);
		}
		if (r->wrong != 0) {
			for (int i = 0; i < r->nclients; i++) {
				if (r->cl[i].wrong) {
					fail(r, "client %d: %s", i,
					    r->cl[i].why);
				}
			}
		}
		if (!r->stats_ok) {
			fail(r, "daemon statistics: %s", r->stats_why);
		} else if (r->daemon_errors != 0) {
			fail(r, "the daemon counted %" PRIu64 " errors",
			    r->daemon_errors);
		}
		return;
	}
	// SIGTERM run
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client *c            = &r->cl[i];
		uint64_t          before_ok    = c->status[0][FFTD_OK];
		uint64_t          wrong_before = c->wrong - c->wrong_after_mark;
		uint64_t          good_before  = before_ok - wrong_before;
		r->accepted += c->mark;
		r->accepted_ok += good_before;
		// accepted but not answered correctly: errors, wrong results,
		// no answer at all
		r->accepted_bad
		    += c->mark > good_before ? c->mark - good_before : 0;
		uint64_t late_bad = c->wrong_after_mark;
		for (int b = 1; b < FFTD_LOAD_NSTATUS; b++) {
			if (b != FFTD_ECLOSED && b != FFTD_ESHUTDOWN
			    && b != FFTD_ETIMEDOUT) {
				late_bad += c->status[1][b];
			}
		}
		r->late_timedout += c->status[1][FFTD_ETIMEDOUT];
		uint64_t after_answered = 0;
		for (int b = 0; b < FFTD_LOAD_NSTATUS; b++) {
			after_answered += c->status[1][b];
		}
		uint64_t after_sub
		    = c->submitted > c->mark ? c->submitted - c->mark : 0;
		late_bad += after_sub > after_answered
		    ? after_sub - after_answered
		    : 0;
		r->late_bad += late_bad;
	}
	if (r->accepted_bad != 0) {
		fail(r,
		    "%" PRIu64 " of %" PRIu64
		    " accepted requests not answered correctly",
		    r->accepted_bad, r->accepted);
	}
	if (r->late_bad != 0) {
		fail(r,
		    "%" PRIu64
		    " requests after the marks wrong, unanswered or answered "
		    "with an error other than ECLOSED/ESHUTDOWN/ETIMEDOUT",
		    r->late_bad);
	}
	if (r->exit_code != 0) {
		fail(r, "the daemon exited with status %d", r->exit_code);
	} else if (!(r->exit_s <= FFTD_LOAD_EXIT_TARGET_S)) {
		fail(r, "the daemon took %.2f s to exit (target %.0f s)",
		    r->exit_s, FFTD_LOAD_EXIT_TARGET_S);
	}
}

int
fftd_load_run(const fftd_load_config *cfg0, fftd_load_result *r)
{
	memset(r, 0, sizeof(*r));
	r->cfg                = *cfg0;
	fftd_load_config *cfg = &r->cfg;
	r->jain = r->p99_ratio = r->exit_s = r->device_busy = NAN;
	r->host_busy_unloaded = r->host_steal_unloaded = NAN;
	r->host_busy_loaded = r->host_steal_loaded = NAN;
	r->share_min = r->share_max = NAN;
	r->rt_loaded.p99 = r->rt_unloaded.p99 = NAN;
	for (int i = 0; i < FFTD_LOAD_MAX_CLIENTS; i++) {
		for (int p = 0; p < 2; p++) {
			fftd_load_dq *q[2]
			    = { &r->cl[i].queue[p], &r->cl[i].device[p] };
			for (int k = 0; k < 2; k++) {
				q[k]->p50 = q[k]->p99 = NAN;
			}
		}
	}
	r->sigterm = cfg->sigterm_after_s > 0;
	if (cfg->nclients < 1 || cfg->nclients > FFTD_LOAD_MAX_CLIENTS
	    || cfg->nrealtime < 0 || cfg->nrealtime > FFTD_LOAD_MAX_REALTIME
	    || cfg->nrealtime > cfg->nclients || cfg->depth < 1
	    || (r->sigterm && cfg->daemon == NULL) || cfg->url == NULL
	    || cfg->nshapes < 0 || cfg->nshapes > NSHAPES) {
		fail(r, "bad configuration");
		return -1;
	}
	for (int i = 0; i < cfg->nshapes; i++) {
		if (cfg->shapes[i] < 0 || cfg->shapes[i] >= NSHAPES) {
			fail(r, "shape %d: not in 0..%d", cfg->shapes[i],
			    NSHAPES - 1);
			return -1;
		}
	}
	if (cfg->timeout_s <= 0) {
		cfg->timeout_s = 900;
	}
	r->nclients = cfg->nclients;
	int nrt     = cfg->nrealtime;

	fftd_client *ctl = NULL;
	int          rv  = fftd_client_open(&ctl, cfg->url, 60000);
	if (rv != FFTD_OK) {
		fail(r, "cannot connect to %s: %s", cfg->url, ferr(rv));
		return -1;
	}
	fftd_client_info(ctl, &r->info);
	r->small = cfg->sizes == FFTD_LOAD_SIZES_SMALL
	    || (cfg->sizes == FFTD_LOAD_SIZES_AUTO
	        && strcmp(r->info.backend, "fftw") == 0);
	if (cfg->depth > FFTD_LOAD_MAX_DEPTH) {
		cfg->depth = FFTD_LOAD_MAX_DEPTH;
	}
	if (r->info.max_inflight_per_client > 0
	    && (uint32_t) cfg->depth > r->info.max_inflight_per_client) {
		cfg->depth = (int) r->info.max_inflight_per_client;
	}
	if (cfg->rt_rate_hz <= 0) {
		cfg->rt_rate_hz = r->small ? 100 : 250;
	}
	if (cfg->rt_unloaded <= 0) {
		cfg->rt_unloaded = r->small ? 500 : 2000;
	}

	// the shared file
	const char *tmp = getenv("TMPDIR");
	char        path[300];
	snprintf(path, sizeof(path), "%s/fftd-load-XXXXXX",
	    tmp != NULL && tmp[0] && strlen(tmp) < 200 ? tmp : "/tmp");
	int    fd = mkstemp(path);
	size_t sz = shared_size(nrt);
	if (fd < 0 || ftruncate(fd, (off_t) sz) != 0) {
		fail(r, "shared file %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		fftd_client_close(ctl);
		return -1;
	}
	shared *sh = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED) {
		fail(r, "mmap: %s", strerror(errno));
		unlink(path);
		fftd_client_close(ctl);
		return -1;
	}
	snprintf(sh->url, sizeof(sh->url), "%s", cfg->url);
	sh->nclients    = cfg->nclients;
	sh->nrealtime   = nrt;
	sh->rt_unloaded = cfg->rt_unloaded;
	// In the SIGTERM run, requests the daemon never read wait this long
	// for the connection to come back (FFTD_ETIMEDOUT).
	sh->timeout_ms = r->sigterm ? 5000 : 120000;
	for (int i = 0; i < cfg->nclients; i++) {
		slot        *s  = &sh->slot[i];
		const shape *sp = i < nrt
		    ? (r->small ? &RT_SMALL : &RT_FULL)
		    : &(r->small ? SMALL : FULL)[cfg->nshapes > 0
		            ? cfg->shapes[(i - nrt) % cfg->nshapes]
		            : (i - nrt) % NSHAPES];
		s->realtime     = i < nrt;
		s->kind         = sp->kind;
		s->n            = sp->n;
		s->batch        = sp->batch;
		s->depth        = s->realtime ? 1 : cfg->depth;
		s->rate_hz      = s->realtime ? cfg->rt_rate_hz : 0;
		s->rt_stream    = s->realtime && !cfg->rt_inline;
		s->batch_shm    = !s->realtime && cfg->batch_shm;
		s->batch_nice   = s->realtime ? 0 : cfg->batch_nice;
		s->rt_slice_us  = s->realtime ? cfg->rt_slice_us : 0;
		s->rt_in_place  = s->rt_stream && cfg->rt_in_place;
		s->rt_spin_us   = s->rt_stream ? cfg->rt_spin_us : 0;
		if (!s->realtime) {
			snprintf(s->batch_cpus, sizeof(s->batch_cpus), "%s",
			    cfg->batch_cpus);
		}
		s->seed = 0x5eed10adull * (uint64_t) (i + 1) + 0x9e3779b9ull;
	}

	rv          = fftd_get_stats(ctl, &r->before);
	r->stats_ok = rv == FFTD_OK;
	if (!r->stats_ok) {
		snprintf(r->stats_why, sizeof(r->stats_why),
		    "fftd_get_stats: %.150s", ferr(rv));
	}

	pid_t pids[FFTD_LOAD_MAX_CLIENTS];
	int   codes[FFTD_LOAD_MAX_CLIENTS];
	for (int i = 0; i < cfg->nclients; i++) {
		char idx[16];
		snprintf(idx, sizeof(idx), "%d", i);
		const char *args[] = { path, idx, NULL };
		pids[i]            = fftd_test_spawn(FFTD_LOAD_ROLE, args);
		if (pids[i] < 0) {
			fail(r, "cannot start client %d", i);
		}
	}
	double t_start = now_s(), deadline = t_start + cfg->timeout_s;
	snap  *s0 = calloc(1, sizeof(*s0)), *s1 = calloc(1, sizeof(*s1)),
	     *sx = calloc(1, sizeof(*sx)), *su0 = calloc(1, sizeof(*su0)),
	     *su1                          = calloc(1, sizeof(*su1));
	uint64_t bl[FFTD_LOAD_MAX_CLIENTS] = { 0 }, nsamples = 0;
	int      have_unloaded = 0;
	if (s0 == NULL || s1 == NULL || sx == NULL || su0 == NULL
	    || su1 == NULL) {
		fail(r, "out of memory");
	}

	if (r->failures == 0
	    && wait_all(sh, 0, cfg->nclients, p_ready, 300, r, "while starting")
	        == 0) {
		if (cfg->verbose) {
			fprintf(stderr, "load: %d clients ready (%.1f s)\n",
			    cfg->nclients, now_s() - t_start);
		}
		// unloaded: realtime alone
		double             t1 = now_s();
		unsigned long long c0[3], c1[3];
		if (nrt > 0 && !r->sigterm) {
			int ok = take_snap(ctl, sh, su0, NULL, 0) == FFTD_OK;
			int k0 = cpu_ticks(c0);
			atomic_store(&sh->phase, PH_REALTIME);
			wait_all(sh, 0, nrt, p_unloaded,
			    cfg->rt_unloaded / cfg->rt_rate_hz * 5 + 30, r,
			    "in the unloaded phase");
			cpu_share(c0, k0, c1, cpu_ticks(c1),
			    &r->host_busy_unloaded, &r->host_steal_unloaded);
			have_unloaded
			    = ok && take_snap(ctl, sh, su1, NULL, 0) == FFTD_OK;
		}
		r->unloaded_s = now_s() - t1;
		// loaded
		atomic_store(&sh->phase, PH_ALL);
		double t2 = now_s();
		if (cfg->verbose) {
			fprintf(stderr,
			    "load: loaded phase from CLOCK_MONOTONIC %.3f s\n",
			    t2);
		}
		if (r->failures == 0
		    && wait_all(sh, nrt, cfg->nclients, p_backlogged, 300, r,
		           "before the window")
		        == 0) {
			r->client_stats_ok
			    = take_snap(ctl, sh, s0, r->client_stats_why,
			          sizeof(r->client_stats_why))
			    == FFTD_OK;
			atomic_store(&sh->steady, 1);
			int    k0   = cpu_ticks(c0);
			double last = now_s();
			if (cfg->verbose) {
				fprintf(stderr,
				    "load: window from CLOCK_MONOTONIC %.3f "
				    "s\n",
				    last);
			}
			for (;;) {
				sleep_ms(SAMPLE_MS);
				double t = now_s();
				if (r->client_stats_ok
				    && take_snap(ctl, sh, sx, NULL, 0)
				        == FFTD_OK) {
					nsamples++;
					for (int i = 0; i < cfg->nclients;
					     i++) {
						const fftd_client_stats *c
						    = find_pid(
						        sx, sh->slot[i].pid);
						bl[i] += c != NULL
						    && c->inflight > 0;
					}
				}
				int dead = 0;
				for (int i = 0; i < cfg->nclients; i++) {
					dead |= atomic_load(&sh->slot[i].state)
					    != ST_READY;
				}
				if (dead) {
					fail(r,
					    "a client ended during the "
					    "window");
					break;
				}
				if (r->sigterm
				        ? t - s0->t >= cfg->sigterm_after_s
				        : total_answered(sh)
				            >= (uint64_t) cfg->requests) {
					break;
				}
				if (t > deadline) {
					fail(r,
					    "timed out (%d s) with %" PRIu64
					    " of %lld requests done",
					    cfg->timeout_s, total_answered(sh),
					    cfg->requests);
					break;
				}
				if (cfg->verbose && t - last >= 5) {
					last = t;
					fprintf(stderr,
					    "load: %.0f s, %" PRIu64
					    " requests\n",
					    t - t2, total_answered(sh));
				}
			}
			if (r->client_stats_ok) {
				take_snap(ctl, sh, s1, r->client_stats_why,
				    sizeof(r->client_stats_why));
				r->client_stats_ok = s1->rv == FFTD_OK;
			} else {
				s1->t = now_s();
				for (int i = 0; i < cfg->nclients; i++) {
					s1->answered[i] = atomic_load(
					    &sh->slot[i].answered);
				}
			}
			atomic_store(&sh->steady, 0);
			cpu_share(c0, k0, c1, cpu_ticks(c1),
			    &r->host_busy_loaded, &r->host_steal_loaded);
			r->window_s = s1->t - s0->t;
			for (int i = 0; i < cfg->nclients; i++) {
				uint64_t d = s1->answered[i] - s0->answered[i];
				r->window_reqs += d;
				r->window_in_bytes += (double) d
				    * (double) sh->slot[i].in_bytes;
			}
		}
		if (r->sigterm && r->failures == 0) {
			// mark, then SIGTERM with everybody in full flight
			atomic_store(&sh->mark_req, 1);
			wait_all(
			    sh, 0, cfg->nclients, p_marked, 30, r, "marking");
			double ts = now_s();
			fftd_test_daemon_signal(cfg->daemon, SIGTERM);
			r->sigterm_at_s = ts - t2;
			while (fftd_test_daemon_alive(cfg->daemon)
			    && now_s() - ts < 10) {
				sleep_ms(1);
			}
			double te = now_s();
			if (!fftd_test_daemon_alive(cfg->daemon)) {
				r->exit_s = te - ts;
			}
			r->exit_code = fftd_test_daemon_wait(cfg->daemon, 0);
		}
		r->run_s = now_s() - t2;
	}
	atomic_store(&sh->phase, PH_STOP);
	fftd_test_wait_pids(pids, cfg->nclients, 120000, codes);
	r->run_s = now_s() - t_start - r->unloaded_s;

	collect(r, sh, codes);
	latencies(r, sh);
	if (r->client_stats_ok) {
		fairness(r, sh, s0, s1, bl, nsamples);
		daemon_lat(r, sh, s0, s1, 1);
	}
	if (have_unloaded) {
		daemon_lat(r, sh, su0, su1, 0);
	}
	if (!r->sigterm && r->stats_ok) {
		r->stats_ok = fftd_get_stats(ctl, &r->after) == FFTD_OK;
		if (!r->stats_ok) {
			snprintf(r->stats_why, sizeof(r->stats_why),
			    "fftd_get_stats after the run failed");
		}
		r->daemon_errors = r->after.errors - r->before.errors;
	}
	verdict(r);
	free(s0);
	free(s1);
	free(sx);
	free(su0);
	free(su1);
	munmap(sh, sz);
	unlink(path);
	fftd_client_close(ctl);
	return 0;
}

// --- output
// --------------------------------------------------------------------

static void
shape_label(char *b, size_t n, const fftd_load_client *c)
{
	snprintf(b, n, "%s f32 %" PRId64 "x%" PRId64, kind_name(c->kind), c->n,
	    c->batch);
}

static const char *
mark(int ok)
{
	return ok ? "ok" : "MISSED";
}

void
fftd_load_print(const fftd_load_result *r, FILE *f)
{
	const fftd_load_config *cfg = &r->cfg;
	fprintf(f,
	    "fftd load%s: daemon %s, backend %s (%s), %s sizes; %d clients "
	    "(%d realtime at %.0f Hz%s, spin %d us, slice %d us), batch depth "
	    "%d%s, nice %d\n",
	    r->sigterm ? " (SIGTERM run)" : "", r->info.server_version,
	    r->info.backend,
	    r->info.ndevices > 0 ? r->info.devices[0].name : "no device",
	    r->small ? "small" : "full", r->nclients, cfg->nrealtime,
	    cfg->rt_rate_hz, cfg->rt_in_place ? ", slots in place" : "",
	    cfg->rt_spin_us, cfg->rt_slice_us, cfg->depth,
	    cfg->batch_shm ? " in shared buffers" : "", cfg->batch_nice);
	if (cfg->batch_cpus[0] != '\0') {
		fprintf(f, "batch clients on CPUs %s\n", cfg->batch_cpus);
	}
	fprintf(f,
	    "%3s %-4s %-20s %8s %5s %9s %9s %6s %6s %9s %7s %8s %7s %6s\n", "#",
	    "cls", "shape", "in KiB", "depth", "requests", "ok", "wrong",
	    "lost", "dev s(w)", "share", "dev us/r", "q ms/r", "backlg");
	double batch_dev = 0;
	int    nb        = 0;
	for (int i = 0; i < r->nclients; i++) {
		if (!r->cl[i].realtime && r->cl[i].matched) {
			batch_dev += r->cl[i].device_s;
			nb++;
		}
	}
	for (int i = 0; i < r->nclients; i++) {
		const fftd_load_client *c = &r->cl[i];
		char                    sl[40];
		shape_label(sl, sizeof(sl), c);
		uint64_t lost = c->failed + c->unanswered + c->refused;
		fprintf(f,
		    "%3d %-4s %-20s %8.1f %5d %9" PRIu64 " %9" PRIu64
		    " %6" PRIu64 " %6" PRIu64,
		    i, c->realtime ? "rt" : "bat", sl,
		    (double) c->in_bytes / 1024.0, c->depth, c->submitted,
		    c->ok, c->wrong, lost);
		if (c->matched) {
			double share = !c->realtime && batch_dev > 0
			    ? c->device_s / (batch_dev / nb)
			    : NAN;
			double per   = c->executes ? 1.0 / c->executes : NAN;
			fprintf(f, " %9.3f %7.3f %8.1f %7.2f %6.2f\n",
			    c->device_s, share, c->device_s * 1e6 * per,
			    c->queue_s * 1e3 * per, c->backlogged);
		} else {
			fprintf(f, " %9s %7s %8s %7s %6s\n", "-", "-", "-", "-",
			    "-");
		}
	}
	fprintf(f,
	    "(share: device time over the batch clients' mean, in the "
	    "window; dev us/r, q ms/r: the daemon's device and queue time per "
	    "request in the window; backlg: share "
	    "of %d ms samples with work queued at the daemon)\n",
	    SAMPLE_MS);
	fprintf(f,
	    "window %.1f s: %" PRIu64 " requests (%.0f/s, %.2f GB/s of "
	    "input), device busy %.0f%%; %" PRIu64 " requests in all, %.1f s "
	    "loaded + %.1f s unloaded\n",
	    r->window_s, r->window_reqs,
	    r->window_s > 0 ? (double) r->window_reqs / r->window_s : NAN,
	    r->window_s > 0 ? r->window_in_bytes / r->window_s / 1e9 : NAN,
	    r->device_busy * 100, r->submitted, r->run_s, r->unloaded_s);
	if (r->ndev > 1) {
		fprintf(f, "devices in the window:");
		for (int d = 0; d < r->ndev; d++) {
			fprintf(f, "%s %d: busy %.0f%%, %" PRIu64 " executions",
			    d ? ";" : "", d, r->dev_busy[d] * 100,
			    r->dev_executes[d]);
		}
		fprintf(f, "\n");
	}
	fprintf(f,
	    "host CPUs: unloaded %.0f%% busy, %.1f%% stolen; window %.0f%% "
	    "busy, %.1f%% stolen (steal: a hypervisor ran something else on "
	    "this machine's vCPUs)\n",
	    r->host_busy_unloaded * 100, r->host_steal_unloaded * 100,
	    r->host_busy_loaded * 100, r->host_steal_loaded * 100);
	double maxerr = 0, bound = 0;
	for (int i = 0; i < r->nclients; i++) {
		if (r->cl[i].max_err > maxerr || isnan(r->cl[i].max_err)) {
			maxerr = r->cl[i].max_err;
		}
		bound = fmax(bound, r->cl[i].bound);
	}
	fprintf(f,
	    "results: largest relative L2 error %.2g (bound 16 eps "
	    "max(1, log2 n), up to %.2g)\n",
	    maxerr, bound);
	if (cfg->nrealtime > 0) {
		for (int i = 0; i < cfg->nrealtime; i++) {
			const fftd_load_client *c = &r->cl[i];
			fprintf(f,
			    "realtime %d (%s): unloaded p50 %.0f p99 %.0f us "
			    "(n "
			    "%" PRIu64 "), loaded p50 %.0f p99 %.0f p99.9 "
			    "%.0f max %.0f us (n %" PRIu64 "), %" PRIu64
			    " slots missed\n",
			    i, c->rt_stream ? "stream" : "inline",
			    c->unloaded.p50, c->unloaded.p99, c->unloaded.n,
			    c->loaded.p50, c->loaded.p99, c->loaded.p999,
			    c->loaded.max, c->loaded.n, c->missed);
			fprintf(f,
			    "  daemon side (histogram buckets, us): queue "
			    "p50/p99 unloaded <= %.0f/%.0f, loaded <= "
			    "%.0f/%.0f; device p99 unloaded <= %.0f, loaded "
			    "<= %.0f\n",
			    c->queue[0].p50, c->queue[0].p99, c->queue[1].p50,
			    c->queue[1].p99, c->device[0].p99,
			    c->device[1].p99);
		}
	}
	for (int b = 0; b < 2; b++) {
		const fftd_load_stages *S = &r->rt_stages[b];
		if (S->n == 0) {
			continue;
		}
		fprintf(f,
		    "realtime stages %s (us; p50 / p99 / mean over the "
		    "%" PRIu64 " slower than p99, whose mean is %.0f):",
		    b ? "loaded" : "unloaded", S->ntail, S->tail_total_mean);
		for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
			fprintf(f, "%s %s %.0f/%.0f/%.0f", j ? "," : "",
			    fftd_load_stage_names[j], S->p50[j], S->p99[j],
			    S->tail_mean[j]);
		}
		fprintf(f, "\n");
	}
	if (!r->client_stats_ok) {
		fprintf(f, "per-client statistics unavailable: %s\n",
		    r->client_stats_why);
	}
	if (!r->sigterm) {
		fprintf(f, "targets:\n");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n", "lost results",
		    r->lost, "= 0", mark(r->lost == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "wrong results", r->wrong, "= 0", mark(r->wrong == 0));
		if (r->stats_ok) {
			fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
			    "daemon errors (fftd_get_stats)", r->daemon_errors,
			    "= 0", mark(r->daemon_errors == 0));
		} else {
			fprintf(f, "  %-40s %12s   %-12s %s\n",
			    "daemon errors (fftd_get_stats)", "n/a", "= 0",
			    r->stats_why);
		}
		char lab[64];
		snprintf(lab, sizeof(lab), "Jain index, batch device time (%d)",
		    r->jain_n);
		bool all_bl = r->fair.jain_bl_n == r->jain_n;
		fprintf(f, "  %-40s %12.4f   %-12s %s\n", lab, r->jain,
		    ">= 0.99",
		    isnan(r->jain) ? "not measured"
		        : all_bl   ? mark(r->jain >= FFTD_LOAD_JAIN_TARGET)
		                   : "(not all backlogged: see below)");
		if (!all_bl) {
			snprintf(lab, sizeof(lab),
			    "Jain index, backlogged ones (%d of %d)",
			    r->fair.jain_bl_n, r->jain_n);
			fprintf(f, "  %-40s %12.4f   %-12s %s\n", lab,
			    r->fair.jain_bl, ">= 0.99",
			    isnan(r->fair.jain_bl)
			        ? "not measured (devices not saturated)"
			        : mark(
			            r->fair.jain_bl >= FFTD_LOAD_JAIN_TARGET));
			fprintf(f, "  %-40s %12d   %-12s %s\n",
			    "others above the backlogged mean +5%",
			    r->fair.over_n, "= 0", mark(r->fair.over_n == 0));
		}
		fprintf(f, "  %-40s %5.0f / %5.0f   %-12s\n",
		    "realtime p99 unloaded / loaded (us)", r->rt_unloaded.p99,
		    r->rt_loaded.p99, "");
		fprintf(f, "  %-40s %12.2f   %-12s %s\n",
		    "realtime p99 loaded / unloaded", r->p99_ratio, "<= 2",
		    isnan(r->p99_ratio)
		        ? "not measured"
		        : mark(r->p99_ratio <= FFTD_LOAD_P99_RATIO_TARGET));
	} else {
		fprintf(f,
		    "SIGTERM %.1f s into the load; requests by status "
		    "(before the marks | after):\n",
		    r->sigterm_at_s);
		for (int b = 0; b < FFTD_LOAD_NSTATUS; b++) {
			uint64_t n0 = 0, n1 = 0;
			for (int i = 0; i < r->nclients; i++) {
				n0 += r->cl[i].status[0][b];
				n1 += r->cl[i].status[1][b];
			}
			if (n0 || n1) {
				fprintf(f,
				    "  %-14s %10" PRIu64 " | %" PRIu64 "\n",
				    fftd_load_status_name(b), n0, n1);
			}
		}
		uint64_t una = 0, ref = 0;
		for (int i = 0; i < r->nclients; i++) {
			una += r->cl[i].unanswered;
			ref += r->cl[i].refused;
		}
		fprintf(f,
		    "  unanswered %" PRIu64 ", submits refused %" PRIu64
		    " (not accepted: fine)\n",
		    una, ref);
		fprintf(f, "targets:\n");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "accepted, not answered correctly", r->accepted_bad, "= 0",
		    mark(r->accepted_bad == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "accepted (before the marks)", r->accepted, "", "");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "later: wrong or unclean", r->late_bad, "= 0",
		    mark(r->late_bad == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "later: ETIMEDOUT (never read)", r->late_timedout, "",
		    r->late_timedout ? "(waited for a reconnection)" : "");
		fprintf(f, "  %-40s %12d   %-12s %s\n", "daemon exit status",
		    r->exit_code, "= 0", mark(r->exit_code == 0));
		fprintf(f, "  %-40s %12.3f   %-12s %s\n",
		    "daemon exit after SIGTERM (s)", r->exit_s, "<= 5",
		    mark(r->exit_s <= FFTD_LOAD_EXIT_TARGET_S));
	}
	if (r->failures) {
		fprintf(f, "FAILED (%d): %s\n", r->failures, r->failure);
	}
	fflush(f);
}

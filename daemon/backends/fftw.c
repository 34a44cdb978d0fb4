// SPDX-License-Identifier: MIT
//
// fftw.c — the CPU backend: FFTW3 (f64 through fftw_*, f32 through fftwf_*),
// FFTW's threads for parallelism. One device, "cpu (N threads)". This is
// what CI and laptops run, and what `backend = auto` falls back to.
//
// FFTW's advanced interface (plan_many) takes exactly fftd's layout, so a
// shape maps onto one plan with no copying. Plans are made on scratch
// arrays (never on request data) and executed with the new-array interface
// on the request's buffers. FFTW requires those buffers to have the same
// SIMD alignment as the planning arrays; we plan on 64-byte-aligned arrays
// and, for a request whose buffers are aligned otherwise, use a second plan
// made (once, lazily) with FFTW_UNALIGNED.
//
// Resident arrays (issue 16): on this backend "device memory" is the
// daemon's host memory, 64-byte aligned and zero-filled, held to a host
// budget per device: [backend] device_memory when set, else half of the
// machine's physical memory. Copies are memcpy; executions on arrays are
// executions on those pointers. memory_in_use reports the arrays' bytes
// (FFTW's plans are the plan cache's to count).

#include "backend.h"

#include <fftw3.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_util.h"
#include "errmsg.h"
#include "fftw_impl.h"

// FFTW's planner (wisdom, twiddle cache, plan_with_nthreads) is global to
// each precision's library: planning and destroying must not run on two
// threads at once. Plans are made and destroyed on each device's planner
// thread while its worker executes (plan_any_thread), and two CPU devices
// have two planners, so it is locked here; the lock also guards each
// device's list of live plans. fftw_execute_* is thread-safe and runs
// unlocked.
static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t  threads_once = PTHREAD_ONCE_INIT;
static int             threads_ok;

// Planning arrays are aligned to this, more than any SIMD FFTW uses.
#define PLAN_ALIGN 64

typedef struct cpu_state cpu_state;
typedef struct cpu_plan  cpu_plan;

struct cpu_state {
	int       nthreads;
	unsigned  flags; // FFTW_ESTIMATE or FFTW_MEASURE
	cpu_plan *plans; // live plans, so close can free those left over
	// Resident arrays: their bytes and the budget (changed on the
	// worker's thread only; atomic for memory_in_use's readers).
	uint64_t         array_budget;
	_Atomic uint64_t array_bytes;
};

// A plan of either precision: the enclosing cpu_plan says which member.
typedef union any_plan {
	fftw_plan  d;
	fftwf_plan f;
} any_plan;

struct cpu_plan {
	cpu_plan      *next, *prev;
	fftd_precision prec;
	fftd_kind      kind;
	int            rank;
	int            sign;
	int            n[FFTD_MAX_RANK];
	int            inembed[FFTD_MAX_RANK];
	int            onembed[FFTD_MAX_RANK];
	int            istride, idist, ostride, odist, batch;
	size_t         in_bytes, out_bytes;
	int            in_align, out_align; // fftw_alignment_of at planning
	bool           have_aligned, have_unaligned;
	any_plan       aligned;   // for buffers aligned as at planning
	any_plan       unaligned; // FFTW_UNALIGNED, made on first need
	// "fftw-f32" (fftw_auto.c): f64 data, planned and run in f32 on
	// converted copies; s32 is the shape in f32.
	bool        conv;
	fftd__shape s32;
	// int8 input (fftd_plan_desc.input): sn is the shape with its input
	// in the data's precision, what the plan runs on after conversion.
	bool        i8;
	fftd__shape sn;
};

static void
init_threads(void)
{
	threads_ok = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
}

static int
cpu_probe(char *why, size_t whylen)
{
	(void) why;
	(void) whylen;
	return 1; // the CPU is always there
}

static int
cpu_open(fftd__device *dev, const fftd__backend_config *cfg, char *msg,
    size_t msglen)
{
	pthread_once(&threads_once, init_threads);
	if (!threads_ok) {
		return fftd__errmsg(
		    FFTD_EBACKEND, msg, msglen, "fftw_init_threads failed");
	}
	cpu_state *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "no memory for the fftw device state");
	}
	st->nthreads     = cfg->fftw_threads >= 1 ? cfg->fftw_threads : 1;
	st->flags        = cfg->fftw_measure ? FFTW_MEASURE : FFTW_ESTIMATE;
	st->array_budget = cfg->device_budget;
	if (st->array_budget == 0) {
		long pages       = sysconf(_SC_PHYS_PAGES);
		long psize       = sysconf(_SC_PAGESIZE);
		st->array_budget = pages > 0 && psize > 0
		    ? (uint64_t) pages * (uint64_t) psize / 2
		    : (uint64_t) 1 << 30;
	}
	snprintf(dev->name, sizeof(dev->name), "cpu (%d thread%s)",
	    st->nthreads, st->nthreads == 1 ? "" : "s");
	dev->memory_bytes = 0;
	dev->state        = st;
	return FFTD_OK;
}

static void
destroy_obj(cpu_plan *p)
{
	pthread_mutex_lock(&planner_lock);
	if (p->prec == FFTD_F64) {
		if (p->have_aligned) {
			fftw_destroy_plan(p->aligned.d);
		}
		if (p->have_unaligned) {
			fftw_destroy_plan(p->unaligned.d);
		}
	} else {
		if (p->have_aligned) {
			fftwf_destroy_plan(p->aligned.f);
		}
		if (p->have_unaligned) {
			fftwf_destroy_plan(p->unaligned.f);
		}
	}
	pthread_mutex_unlock(&planner_lock);
	free(p);
}

static void
cpu_close(fftd__device *dev)
{
	cpu_state *st = dev->state;
	if (st == NULL) {
		return;
	}
	while (st->plans != NULL) {
		cpu_plan *p = st->plans;
		st->plans   = p->next;
		destroy_obj(p);
	}
	free(st);
	dev->state = NULL;
}

// int_arg is one parameter handed to FFTW's int interface.
typedef struct int_arg {
	const char *name;
	int64_t     v;
	int        *to;
} int_arg;

// fit_int stores v in *out if FFTW's int interface can take it.
static bool
fit_int(int64_t v, int *out)
{
	if (v < 0 || v > INT_MAX) {
		return false;
	}
	*out = (int) v;
	return true;
}

static void *
alloc_scratch(size_t bytes)
{
	// aligned_alloc wants a multiple of the alignment. The pages are
	// only touched by FFTW_MEASURE: with FFTW_ESTIMATE this costs
	// address space, not memory.
	size_t n = (bytes + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
	return aligned_alloc(PLAN_ALIGN, n ? n : PLAN_ALIGN);
}

// make_plan plans p on fresh scratch arrays with flags added to the
// device's planner flag, storing the result in *ap.
static int
make_plan(cpu_state *st, cpu_plan *p, unsigned extra, any_plan *ap, char *msg,
    size_t msglen)
{
	void *in  = alloc_scratch(p->in_bytes);
	void *out = alloc_scratch(p->out_bytes);
	if (in == NULL || out == NULL) {
		free(in);
		free(out);
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "fftw: no memory for %zu + %zu bytes of planning arrays",
		    p->in_bytes, p->out_bytes);
	}
	// FFTW's defaults: the input is kept for c2c and r2c, destroyed for
	// c2r (FFTW has no input-preserving multi-dimensional c2r). The
	// backend interface would allow destroying it always, but keeping
	// it costs little and spares a worker that hands us a client's
	// buffer from surprises.
	unsigned flags = st->flags | extra;
	bool     ok;

	pthread_mutex_lock(&planner_lock);
	if (p->prec == FFTD_F64) {
		fftw_plan_with_nthreads(st->nthreads);
		switch (p->kind) {
		case FFTD_C2C:
			ap->d = fftw_plan_many_dft(p->rank, p->n, p->batch, in,
			    p->inembed, p->istride, p->idist, out, p->onembed,
			    p->ostride, p->odist, p->sign, flags);
			break;
		case FFTD_R2C:
			ap->d = fftw_plan_many_dft_r2c(p->rank, p->n, p->batch,
			    in, p->inembed, p->istride, p->idist, out,
			    p->onembed, p->ostride, p->odist, flags);
			break;
		default:
			ap->d = fftw_plan_many_dft_c2r(p->rank, p->n, p->batch,
			    in, p->inembed, p->istride, p->idist, out,
			    p->onembed, p->ostride, p->odist, flags);
			break;
		}
		ok = ap->d != NULL;
		if (ok && extra == 0) {
			p->in_align  = fftw_alignment_of(in);
			p->out_align = fftw_alignment_of(out);
		}
	} else {
		fftwf_plan_with_nthreads(st->nthreads);
		switch (p->kind) {
		case FFTD_C2C:
			ap->f = fftwf_plan_many_dft(p->rank, p->n, p->batch, in,
			    p->inembed, p->istride, p->idist, out, p->onembed,
			    p->ostride, p->odist, p->sign, flags);
			break;
		case FFTD_R2C:
			ap->f = fftwf_plan_many_dft_r2c(p->rank, p->n, p->batch,
			    in, p->inembed, p->istride, p->idist, out,
			    p->onembed, p->ostride, p->odist, flags);
			break;
		default:
			ap->f = fftwf_plan_many_dft_c2r(p->rank, p->n, p->batch,
			    in, p->inembed, p->istride, p->idist, out,
			    p->onembed, p->ostride, p->odist, flags);
			break;
		}
		ok = ap->f != NULL;
		if (ok && extra == 0) {
			p->in_align  = fftwf_alignment_of(in);
			p->out_align = fftwf_alignment_of(out);
		}
	}
	pthread_mutex_unlock(&planner_lock);
	free(in);
	free(out);
	if (!ok) {
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "%s_plan_many_dft%s returned no plan",
		    p->prec == FFTD_F64 ? "fftw" : "fftwf",
		    p->kind == FFTD_C2C       ? ""
		        : p->kind == FFTD_R2C ? "_r2c"
		                              : "_c2r");
	}
	return FFTD_OK;
}

// plan_bytes estimates what an FFTW plan holds, since FFTW does not say.
// The bulk is twiddle tables: about n complex values per dimension for
// Cooley-Tukey, up to ~4n for a prime size (Rader, or Bluestein's padded
// convolution of length >= 2n-1 and its transformed kernel), so we count
// 4 n complex per dimension. Add ~16 KiB of plan structures (solver tree,
// codelet descriptors) per plan plus ~4 KiB per thread for the threaded
// split, and count it twice for the FFTW_UNALIGNED plan we may add later.
// Buffers FFTW allocates during execution are freed after it and are not
// counted.
static uint64_t
plan_bytes(const fftd__shape *s, int nthreads)
{
	uint64_t cplx = 2 * (s->precision == FFTD_F64 ? 8 : 4);
	uint64_t tw   = 0;
	for (int k = 0; k < s->rank; k++) {
		tw += 4 * (uint64_t) s->n[k] * cplx;
	}
	uint64_t structs = 16384 + 4096 * (uint64_t) nthreads;
	return sizeof(cpu_plan) + 2 * (tw + structs);
}

// cpu_plan_estimate is plan_bytes before planning (any thread: nthreads
// is set at open and never changes).
static uint64_t
cpu_plan_estimate(
    fftd__device *dev, const fftd__shape *s, const char *algorithm)
{
	(void) algorithm;
	const cpu_state *st = dev->state;
	return plan_bytes(s, st->nthreads);
}

static int
cpu_plan_make(fftd__device *dev, const fftd__shape *s, const char *algorithm,
    void **planp, uint64_t *bytes, char *msg, size_t msglen)
{
	cpu_state  *st = dev->state;
	fftd__shape s32, sn;
	bool        i8 = s->input == FFTD_INPUT_I8;
	if (i8) {
		// The plan is the native one; execute converts the int8 input
		// (same element indices) into a scratch array first.
		sn              = *s;
		sn.input        = FFTD_INPUT_NATIVE;
		sn.in.elem_size = fftd__elem_size(s->precision, s->in.complex);
		if (sn.in.elem_size == 0
		    || __builtin_mul_overflow((uint64_t) sn.in.elems,
		        (uint64_t) sn.in.elem_size, &sn.in.bytes)) {
			return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
			    "int8 input: the converted input's size overflows");
		}
		s = &sn;
	}
	bool conv = algorithm != NULL && strcmp(algorithm, "fftw-f32") == 0
	    && s->precision == FFTD_F64;

	if (algorithm != NULL && strcmp(algorithm, "fftw") != 0 && !conv) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "algorithm \"%s\" is not served by the fftw backend",
		    algorithm);
	}
	if (conv) {
		// Accuracy-aware auto's f64 data through FFTW's f32 planner:
		// the same layout in elements half as large.
		s32               = *s;
		s32.precision     = FFTD_F32;
		s32.in.elem_size  = s->in.elem_size / 2;
		s32.in.bytes      = s->in.bytes / 2;
		s32.out.elem_size = s->out.elem_size / 2;
		s32.out.bytes     = s->out.bytes / 2;
		s                 = &s32;
	}
	if (s->precision == FFTD_F16) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "f16 needs a GPU backend (cuda); the fftw backend does "
		    "f64 and f32");
	}
	if (s->precision != FFTD_F64 && s->precision != FFTD_F32) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown precision %d", (int) s->precision);
	}
	if (s->kind != FFTD_C2C && s->kind != FFTD_R2C && s->kind != FFTD_C2R) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "unknown transform kind %d", (int) s->kind);
	}

	cpu_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return fftd__errmsg(
		    FFTD_ENOMEM, msg, msglen, "no memory for a plan");
	}
	p->conv = conv;
	p->s32  = s32;
	p->i8   = i8;
	p->sn   = sn;
	p->prec = s->precision;
	p->kind = s->kind;
	p->rank = s->rank;
	p->sign = s->direction == FFTD_INVERSE ? FFTW_BACKWARD : FFTW_FORWARD;
	// FFTW's plan_many takes ints; its internal index arithmetic is in
	// ptrdiff_t, so only the parameters themselves must fit.
	int_arg args[3 * FFTD_MAX_RANK + 5];
	int     nargs = 0;
	for (int k = 0; k < s->rank; k++) {
		args[nargs++] = (int_arg) { "n", s->n[k], &p->n[k] };
		args[nargs++]
		    = (int_arg) { "inembed", s->in.embed[k], &p->inembed[k] };
		args[nargs++]
		    = (int_arg) { "onembed", s->out.embed[k], &p->onembed[k] };
	}
	args[nargs++]    = (int_arg) { "istride", s->in.stride, &p->istride };
	args[nargs++]    = (int_arg) { "idist", s->in.dist, &p->idist };
	args[nargs++]    = (int_arg) { "ostride", s->out.stride, &p->ostride };
	args[nargs++]    = (int_arg) { "odist", s->out.dist, &p->odist };
	args[nargs++]    = (int_arg) { "batch", s->batch, &p->batch };
	const char *bad  = NULL;
	int64_t     badv = 0;
	for (int i = 0; i < nargs && bad == NULL; i++) {
		if (!fit_int(args[i].v, args[i].to)) {
			bad  = args[i].name;
			badv = args[i].v;
		}
	}
	if (bad != NULL) {
		free(p);
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "%s = %lld does not fit FFTW's int interface (at most %d)",
		    bad, (long long) badv, INT_MAX);
	}
	p->in_bytes  = (size_t) s->in.bytes;
	p->out_bytes = (size_t) s->out.bytes;

	int rv = make_plan(st, p, 0, &p->aligned, msg, msglen);
	if (rv != FFTD_OK) {
		free(p);
		return rv;
	}
	p->have_aligned = true;

	pthread_mutex_lock(&planner_lock);
	p->next = st->plans;
	if (st->plans != NULL) {
		st->plans->prev = p;
	}
	st->plans = p;
	pthread_mutex_unlock(&planner_lock);
	*planp = p;
	*bytes = plan_bytes(s, st->nthreads);
	return FFTD_OK;
}

static void
cpu_destroy(fftd__device *dev, void *plan)
{
	cpu_state *st = dev->state;
	cpu_plan  *p  = plan;
	if (p == NULL) {
		return;
	}
	pthread_mutex_lock(&planner_lock);
	if (p->prev != NULL) {
		p->prev->next = p->next;
	} else {
		st->plans = p->next;
	}
	if (p->next != NULL) {
		p->next->prev = p->prev;
	}
	pthread_mutex_unlock(&planner_lock);
	destroy_obj(p);
}

static int run_plan(fftd__device *dev, cpu_plan *p, const fftd__shape *s,
    void *in, void *out, char *msg, size_t msglen);

// exec_native runs plan on in and out of shape s in the plan's
// precision; an "fftw-f32" plan through f32 copies converted on the way in
// and out (fftw_auto.c).
static int
exec_native(fftd__device *dev, cpu_plan *p, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	if (!p->conv) {
		return run_plan(dev, p, s, in, out, msg, msglen);
	}
	size_t ni  = (size_t) s->in.bytes / sizeof(double);
	size_t no  = (size_t) s->out.bytes / sizeof(double);
	float *fin = alloc_scratch(ni * sizeof(float));
	float *fou = alloc_scratch(no * sizeof(float));
	int    rv  = FFTD_OK;
	if (fin == NULL || fou == NULL) {
		rv = fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "no memory for the f32 copies of an fftw-f32 execution");
	} else {
		int e = fftd__fftw_to_f32(fin, in, ni, s->total);
		rv    = run_plan(dev, p, &p->s32, fin, fou, msg, msglen);
		if (rv == FFTD_OK) {
			fftd__fftw_from_f32(out, fou, no, e);
		}
	}
	free(fin);
	free(fou);
	return rv;
}

// cpu_execute runs plan on in and out (backend.h: execute). An int8
// input is converted exactly into a 64-byte-aligned scratch array of the
// plan's precision, element for element over the input's extent (strided
// and padded layouts keep their indices), which the native plan then
// reads; FFTW never sees the int8 bytes.
static int
cpu_execute(fftd__device *dev, void *plan, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	cpu_plan *p = plan;
	if (!p->i8) {
		return exec_native(dev, p, s, in, out, msg, msglen);
	}
	void *cin = alloc_scratch((size_t) p->sn.in.bytes);
	if (cin == NULL) {
		return fftd__errmsg(FFTD_ENOMEM, msg, msglen,
		    "no memory for the converted copy of an int8 input "
		    "(%.1f MiB)",
		    (double) p->sn.in.bytes / 1048576.0);
	}
	fftd__fftw_from_i8(
	    cin, p->sn.precision == FFTD_F64, in, fftd__in_reals(s));
	int rv = exec_native(dev, p, &p->sn, cin, out, msg, msglen);
	free(cin);
	return rv;
}

// run_plan executes plan p on in and out of shape s (its own precision).
static int
run_plan(fftd__device *dev, cpu_plan *p, const fftd__shape *s, void *in,
    void *out, char *msg, size_t msglen)
{
	cpu_state *st   = dev->state;
	size_t     real = p->prec == FFTD_F64 ? sizeof(double) : sizeof(float);

	if (in == out) {
		// Plans are out-of-place; FFTW's new-array rule forbids mixing.
		return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
		    "fftw: in-place execution is not supported");
	}
	if ((uintptr_t) in % real != 0 || (uintptr_t) out % real != 0) {
		return fftd__errmsg(FFTD_EINTERNAL, msg, msglen,
		    "fftw: buffers not aligned to their %zu-byte reals", real);
	}
	bool same;
	if (p->prec == FFTD_F64) {
		same = fftw_alignment_of(in) == p->in_align
		    && fftw_alignment_of(out) == p->out_align;
	} else {
		same = fftwf_alignment_of(in) == p->in_align
		    && fftwf_alignment_of(out) == p->out_align;
	}
	if (!same && !p->have_unaligned) {
		int rv = make_plan(
		    st, p, FFTW_UNALIGNED, &p->unaligned, msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
		p->have_unaligned = true;
	}
	any_plan ap = same ? p->aligned : p->unaligned;

	// FFTW writes only the output layout's elements: zero the gaps first.
	fftd__host_prepare_out(out, s);
	if (p->prec == FFTD_F64) {
		switch (p->kind) {
		case FFTD_C2C:
			fftw_execute_dft(ap.d, in, out);
			break;
		case FFTD_R2C:
			fftw_execute_dft_r2c(ap.d, in, out);
			break;
		default:
			fftw_execute_dft_c2r(ap.d, in, out);
			break;
		}
	} else {
		switch (p->kind) {
		case FFTD_C2C:
			fftwf_execute_dft(ap.f, in, out);
			break;
		case FFTD_R2C:
			fftwf_execute_dft_r2c(ap.f, in, out);
			break;
		default:
			fftwf_execute_dft_c2r(ap.f, in, out);
			break;
		}
	}
	fftd__host_finish(out, s);
	return FFTD_OK;
}

// fftd__fftw_planner_lock hands planner_lock to the backend's other files
// (fftw_mf.c plans its bank transforms under it).
pthread_mutex_t *
fftd__fftw_planner_lock(void)
{
	return &planner_lock;
}

// fftd__fftw_nthreads is the device's FFTW thread count, so that the
// bank's transforms use the threads [devices] gives the backend.
int
fftd__fftw_nthreads(const fftd__device *dev)
{
	const cpu_state *st = dev != NULL ? dev->state : NULL;
	return st != NULL ? st->nthreads : 1;
}

// cpu_array_alloc gives a zero-filled, 64-byte-aligned host array within
// the device's host budget (backend.h: array_alloc).
static int
cpu_array_alloc(
    fftd__device *dev, uint64_t bytes, void **ptr, char *msg, size_t msglen)
{
	cpu_state *st   = dev->state;
	uint64_t   held = atomic_load(&st->array_bytes);
	if (bytes > st->array_budget || held > st->array_budget - bytes) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "an array of %.1f MiB does not fit: arrays hold %.1f MiB "
		    "of the host budget %.1f MiB ([backend] device_memory, "
		    "else half the machine's memory)",
		    (double) bytes / 1048576.0, (double) held / 1048576.0,
		    (double) st->array_budget / 1048576.0);
	}
	void *p = NULL;
	if (bytes > SIZE_MAX - PLAN_ALIGN
	    || posix_memalign(&p, PLAN_ALIGN, (size_t) bytes) != 0) {
		return fftd__errmsg(FFTD_EDEVMEM, msg, msglen,
		    "no host memory for an array of %.1f MiB",
		    (double) bytes / 1048576.0);
	}
	memset(p, 0, (size_t) bytes);
	atomic_fetch_add(&st->array_bytes, bytes);
	*ptr = p;
	return FFTD_OK;
}

// cpu_array_free frees what cpu_array_alloc gave (backend.h: array_free).
static void
cpu_array_free(fftd__device *dev, void *ptr, uint64_t bytes)
{
	cpu_state *st = dev->state;
	free(ptr);
	atomic_fetch_sub(&st->array_bytes, bytes);
}

// cpu_array_copy copies between host memories: every direction is a
// memcpy here (backend.h: array_copy).
static int
cpu_array_copy(fftd__device *dev, void *dst, const void *src, size_t len,
    int dir, char *msg, size_t msglen)
{
	(void) dev;
	(void) dir;
	(void) msg;
	(void) msglen;
	memcpy(dst, src, len);
	return FFTD_OK;
}

// cpu_memory_in_use is the bytes of the device's resident arrays
// (backend.h: memory_in_use).
static uint64_t
cpu_memory_in_use(fftd__device *dev)
{
	cpu_state *st = dev->state;
	return atomic_load(&st->array_bytes);
}

static const char *const cpu_algorithms[] = { "fftw", NULL };

const fftd__backend fftd__backend_fftw = {
	.name          = "fftw",
	.algorithms    = cpu_algorithms,
	.aligned_input = 1,
	.probe         = cpu_probe,
	.open          = cpu_open,
	.close         = cpu_close,
	.plan          = cpu_plan_make,
	.execute       = cpu_execute,
	.destroy       = cpu_destroy,
	.plan_estimate = cpu_plan_estimate,
	.measure       = fftd__fftw_measure,
	// Plans are made on scratch arrays under planner_lock; execute uses
	// the new-array interface, which FFTW allows beside the planner.
	.plan_any_thread = 1,
	.memory_in_use   = cpu_memory_in_use,
	// Resident arrays live in host memory; executions on them are
	// executions on those pointers; the matched-filter bank is
	// fftw_mf.c's.
	.array_alloc    = cpu_array_alloc,
	.array_free     = cpu_array_free,
	.array_copy     = cpu_array_copy,
	.execute_device = cpu_execute,
	.mf_bank        = fftd__fftw_mf_bank,
};

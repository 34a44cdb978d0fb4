// SPDX-License-Identifier: MIT
//
// dropin_impl.h — PRIVATE to libfftd-fftw3.so, the FFTW3-compatible drop-in
// library (issue 17, item 4): only dropin/*.c include it. The library
// exports FFTW3's own names (fftw_* for double, fftwf_* for float) and
// nothing else (dropin/fftw3.map); a program linked with -lfftw3 runs its
// transforms through the fftd daemon when it is loaded with LD_PRELOAD, or
// linked in place of -lfftw3/-lfftw3f. Transforms the daemon cannot take,
// or too small to pay a round trip, run in the real FFTW, which the library
// loads at run time (dlopen, RTLD_LOCAL). The files, in floors (a file
// calls only those above it in this list):
//   config.c  environment (threshold, log level, paths, timeout), the log
//   real.c    the real FFTW: dlopen of libfftw3(f).so.3 and its _threads,
//             symbol lookup, the one lock around the real planner
//   conn.c    the process's one fftd client, opened lazily, thread-safe
//   memory.c  fftw_malloc and fftw_free: fftd shared buffers or host memory
//   r2r.c     halfcomplex order <-> r2c's n/2+1 complex layout
//   plan.c    a guru64 problem -> fftd plan, or the reason it goes to FFTW
//   exec.c    executing a daemon plan; falling back to FFTW on failure
//   api.c     the FFTW3 API itself, compiled twice (f64: fftw_, f32:
//             fftwf_): planners mapped to guru64 problems, execute,
//             destroy, and the calls forwarded to the real FFTW
//
// Plans: a plan the daemon serves is an fftd__dr_plan, whose first word is
// FFTD__DR_MAGIC; every other plan a program holds is the real FFTW's own
// and is handed back to it (plans of both kinds may be mixed freely).
// Threads: as FFTW, planners must not run concurrently (the real planner
// is also serialised behind real.c's lock); executions of one plan may run
// in any number of threads at once.

#ifndef FFTD_DROPIN_IMPL_H
#define FFTD_DROPIN_IMPL_H

#include <fftw3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fftd.h"

// FFTD__DR_API marks the FFTW names the library exports.
#define FFTD__DR_API __attribute__((visibility("default")))

// FFTD__DR_MAGIC opens every daemon plan. It is not a canonical user-space
// address, so the first word of a real FFTW plan (a pointer) never equals
// it.
#define FFTD__DR_MAGIC UINT64_C(0xf7d0ffd3a11ed0c5)

// fftd__dr_prec is a plan's precision: which real FFTW serves it.
typedef enum fftd__dr_prec {
	FFTD__DR_F64 = 0, // fftw_, libfftw3.so.3
	FFTD__DR_F32 = 1, // fftwf_, libfftw3f.so.3
} fftd__dr_prec;

// fftd__dr_kind is the transform kind of a problem.
typedef enum fftd__dr_kind {
	FFTD__DR_C2C,
	FFTD__DR_R2C,
	FFTD__DR_C2R,
	FFTD__DR_R2R, // the kinds array says which
} fftd__dr_kind;

// fftd__dr_problem is one planner call in FFTW's guru64 form, whatever
// planner the program called; strides count elements of each side's type.
typedef struct fftd__dr_problem {
	fftd__dr_prec        prec;
	fftd__dr_kind        kind;
	int                  rank;
	const fftw_iodim64  *dims;
	int                  howmany_rank;
	const fftw_iodim64  *howmany;
	const fftw_r2r_kind *r2r_kinds; // R2R: rank kinds
	int                  sign;      // C2C: FFTW_FORWARD or FFTW_BACKWARD
	unsigned             flags;
	void                *in, *out;
} fftd__dr_problem;

// fftd__dr_hc is a daemon plan's halfcomplex side (FFTW_R2HC, FFTW_HC2R):
// the daemon runs R2C or C2R with the complex side in a contiguous
// temporary array, and r2r.c repacks it to or from the user's halfcomplex
// array.
typedef enum fftd__dr_hc {
	FFTD__DR_HC_NONE = 0,
	FFTD__DR_HC_R2HC, // out = halfcomplex(R2C(in))
	FFTD__DR_HC_HC2R, // out = C2R(complex(in))
} fftd__dr_hc;

// fftd__dr_plan is a plan the daemon serves.
typedef struct fftd__dr_plan {
	uint64_t       magic; // FFTD__DR_MAGIC
	fftd__dr_prec  prec;
	fftd__dr_kind  kind;
	fftd__dr_hc    hc;
	int            sign;
	unsigned       flags;
	fftd_plan     *fp;       // the daemon's plan
	fftd_plan_desc desc;     // what it was made from
	void          *in, *out; // the planner's arrays (fftw_execute)
	// R2HC/HC2R: the user's halfcomplex side's stride and distance, and
	// the temporary complex array (batch x (n/2+1)), one execution at a
	// time (others make their own).
	int64_t         hc_stride, hc_dist;
	void           *tmp;
	size_t          tmp_bytes;
	pthread_mutex_t tmp_lock;
	// real: the real FFTW plan that replaced the daemon's after an
	// execution failed there (made on that execution's arrays with
	// FFTW_ESTIMATE); NULL while the daemon serves the plan.
	pthread_mutex_t fallback_lock;
	void *_Atomic   real;
	// dims and howmany of the real plan, should it be needed.
	int           rank;
	fftw_iodim64  dims[FFTD_MAX_RANK];
	fftw_iodim64  howmany; // n = batch
	fftw_r2r_kind r2r_kind;
} fftd__dr_plan;

// --- config.c ---------------------------------------------------------------

// FFTD__DR_MIN_DEFAULT is FFTD_FFTW3_MIN's default: the elements per
// execution (product of the sizes times the batch) below which a transform
// runs in the real FFTW (README, "FFTW drop-in", says how it was measured).
#define FFTD__DR_MIN_DEFAULT 32768

// fftd__dr_log_level is how much the library writes to stderr.
enum { FFTD__DR_LOG_OFF = 0, FFTD__DR_LOG_WARN = 1, FFTD__DR_LOG_DEBUG = 2 };

// fftd__dr_config is the environment, read once.
typedef struct fftd__dr_config {
	int64_t     min_elements; // FFTD_FFTW3_MIN
	int         log_level;    // FFTD_FFTW3_LOG: off, warn (default), debug
	int         timeout_ms;   // FFTD_FFTW3_TIMEOUT_MS
	size_t      shm_min;      // FFTD_FFTW3_SHM_MIN: bytes
	const char *real[2];      // FFTD_FFTW3_REAL, FFTD_FFTW3F_REAL
	int         disabled;     // FFTD_FFTW3_DISABLE=1: all to FFTW
} fftd__dr_config;

const fftd__dr_config *fftd__dr_config_get(void);
void                   fftd__dr_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// --- real.c -----------------------------------------------------------------

// fftd__dr_real_sym returns the real FFTW's function `name` (the full
// name, "fftw_execute") of the precision's library or its _threads
// library, loading them on first use; NULL (logged once) if there is none.
void *fftd__dr_real_sym(fftd__dr_prec prec, const char *name);
// fftd__dr_real_lock and _unlock bracket every call into the real planner.
void fftd__dr_real_lock(void);
void fftd__dr_real_unlock(void);
// fftd__dr_real_plan makes the problem's plan in the real FFTW (its guru64
// planner of the problem's kind, under the planner lock); NULL when FFTW
// refuses it or cannot be loaded.
void *fftd__dr_real_plan(const fftd__dr_problem *pb);
// fftd__dr_real_execute runs a real FFTW plan on new arrays of a problem
// of this kind (fftw_execute_dft, _r2c, _c2r or _r2r).
void fftd__dr_real_execute(
    fftd__dr_prec prec, fftd__dr_kind kind, void *plan, void *in, void *out);

// --- conn.c -----------------------------------------------------------------

// fftd__dr_client returns the process's client, connecting on first use
// (and again at most every 10 s after a failure); NULL when no daemon is
// reachable, with the reason in why (why may be NULL).
fftd_client *fftd__dr_client(char *why, size_t whylen);
// fftd__dr_client_lost says that an execution found the daemon gone (err:
// FFTD_ECLOSED, FFTD_ETIMEDOUT, ...): for 10 s fftd__dr_client answers
// NULL.
void fftd__dr_client_lost(int err);
// fftd__dr_conn_error says whether an fftd error means the connection is
// gone (rather than a refusal of this one request).
int fftd__dr_conn_error(int err);

// --- memory.c ---------------------------------------------------------------

void *fftd__dr_malloc(size_t n);
void  fftd__dr_free(void *p);

// --- r2r.c ------------------------------------------------------------------

// fftd__dr_to_hc writes batch halfcomplex arrays of n reals (element j of
// transform b at out[b*dist + j*stride]) from batch contiguous arrays of
// n/2+1 complex (c2c order, re/im interleaved).
void fftd__dr_to_hc(fftd__dr_prec prec, int64_t n, int64_t batch,
    const void *cplx, void *out, int64_t stride, int64_t dist);
// fftd__dr_from_hc is its inverse: halfcomplex in, n/2+1 complex out (the
// imaginary parts FFTW leaves implicit set to 0).
void fftd__dr_from_hc(fftd__dr_prec prec, int64_t n, int64_t batch,
    const void *in, int64_t stride, int64_t dist, void *cplx);

// --- plan.c -----------------------------------------------------------------

// fftd__dr_plan_make returns a daemon plan for the problem, or NULL when
// the real FFTW must make it (the reason is logged at debug level).
fftd__dr_plan *fftd__dr_plan_make(const fftd__dr_problem *pb);
// fftd__dr_plan_destroy frees a daemon plan (and its fallback plan).
void fftd__dr_plan_destroy(fftd__dr_plan *p);
// fftd__dr_plan_describe writes a one-line description of the plan.
void fftd__dr_plan_describe(const fftd__dr_plan *p, char *buf, size_t len);
// fftd__dr_plan_flops estimates the plan's operations (5 N log2 N per
// complex transform, half for real ones) as fftw_flops reports them.
void fftd__dr_plan_flops(
    const fftd__dr_plan *p, double *add, double *mul, double *fma);

// fftd__dr_is_ours says whether an FFTW plan pointer is a daemon plan.
static inline int
fftd__dr_is_ours(const void *p)
{
	return p != NULL && *(const uint64_t *) p == FFTD__DR_MAGIC;
}

// --- exec.c -----------------------------------------------------------------

// fftd__dr_execute runs a daemon plan on in and out (NULL, NULL: the
// planner's arrays); when the daemon fails, the real FFTW runs it (and
// every later execution of the plan).
void fftd__dr_execute(fftd__dr_plan *p, void *in, void *out);

#endif // FFTD_DROPIN_IMPL_H

// SPDX-License-Identifier: MIT
//
// real.c — the real FFTW behind the drop-in library: libfftw3.so.3 and
// libfftw3f.so.3 (or FFTD_FFTW3_REAL / FFTD_FFTW3F_REAL) and their
// _threads libraries, opened at run time with dlopen(RTLD_LOCAL) so that
// their names do not shadow ours, and looked up by name with dlsym on
// their own handles (which never finds our exports). When the program
// itself links -lfftw3 (the LD_PRELOAD case) dlopen returns that very
// library. Also the one lock that serialises the real planner, and the
// real guru64 planners and new-array executes for any problem.

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "dropin_impl.h"

// lib is one precision's real libraries.
typedef struct lib {
	pthread_once_t once;
	void          *main;    // libfftw3(f).so.3
	void          *threads; // libfftw3(f)_threads.so.3, or NULL
} lib;

static lib libs[2] = {
	{ PTHREAD_ONCE_INIT, NULL, NULL },
	{ PTHREAD_ONCE_INIT, NULL, NULL },
};

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

// open_lib loads one precision's libraries (pthread_once).
static void
open_lib(fftd__dr_prec prec)
{
	const fftd__dr_config *c    = fftd__dr_config_get();
	const char            *path = c->real[prec];
	if (path == NULL) {
		path
		    = prec == FFTD__DR_F64 ? "libfftw3.so.3" : "libfftw3f.so.3";
	}
	libs[prec].main = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (libs[prec].main == NULL) {
		fftd__dr_log(FFTD__DR_LOG_WARN,
		    "cannot load the real FFTW (%s): %s; transforms the daemon "
		    "does not serve fail",
		    path, dlerror());
		return;
	}
	// Threads live in the main library of some builds (dlsym finds them
	// there first), in a library of their own in Debian's.
	libs[prec].threads
	    = dlopen(prec == FFTD__DR_F64 ? "libfftw3_threads.so.3"
	                                  : "libfftw3f_threads.so.3",
	        RTLD_NOW | RTLD_LOCAL);
}

static void
open_f64(void)
{
	open_lib(FFTD__DR_F64);
}

static void
open_f32(void)
{
	open_lib(FFTD__DR_F32);
}

// fftd__dr_real_sym: see dropin_impl.h.
void *
fftd__dr_real_sym(fftd__dr_prec prec, const char *name)
{
	pthread_once(
	    &libs[prec].once, prec == FFTD__DR_F64 ? open_f64 : open_f32);
	void *f = NULL;
	if (libs[prec].main != NULL) {
		f = dlsym(libs[prec].main, name);
	}
	if (f == NULL && libs[prec].threads != NULL) {
		f = dlsym(libs[prec].threads, name);
	}
	if (f == NULL) {
		fftd__dr_log(FFTD__DR_LOG_WARN,
		    "the real FFTW has no %s: the call does nothing", name);
	}
	return f;
}

// fftd__dr_real_lock takes the real planner's lock.
void
fftd__dr_real_lock(void)
{
	pthread_mutex_lock(&planner_lock);
}

// fftd__dr_real_unlock releases it.
void
fftd__dr_real_unlock(void)
{
	pthread_mutex_unlock(&planner_lock);
}

// The real FFTW's calls with their arrays as void *: float and double
// pointers pass alike, so one type serves both precisions.
typedef void *(*guru_dft_fn)(int, const fftw_iodim64 *, int,
    const fftw_iodim64 *, void *, void *, int, unsigned);
typedef void *(*guru_rdft2_fn)(int, const fftw_iodim64 *, int,
    const fftw_iodim64 *, void *, void *, unsigned);
typedef void *(*guru_r2r_fn)(int, const fftw_iodim64 *, int,
    const fftw_iodim64 *, void *, void *, const fftw_r2r_kind *, unsigned);
typedef void (*exec_fn)(void *, void *, void *);

// sym looks up FFTW's name with the precision's prefix ("plan_guru64_dft"
// -> fftw_plan_guru64_dft or fftwf_plan_guru64_dft).
static void *
sym(fftd__dr_prec prec, const char *base)
{
	char name[96];
	strcpy(name, prec == FFTD__DR_F64 ? "fftw_" : "fftwf_");
	strncat(name, base, sizeof(name) - strlen(name) - 1);
	return fftd__dr_real_sym(prec, name);
}

// fftd__dr_real_plan: see dropin_impl.h.
void *
fftd__dr_real_plan(const fftd__dr_problem *pb)
{
	void *plan = NULL;
	fftd__dr_real_lock();
	switch (pb->kind) {
	case FFTD__DR_C2C: {
		guru_dft_fn f = (guru_dft_fn) sym(pb->prec, "plan_guru64_dft");
		if (f != NULL) {
			plan = f(pb->rank, pb->dims, pb->howmany_rank,
			    pb->howmany, pb->in, pb->out, pb->sign, pb->flags);
		}
		break;
	}
	case FFTD__DR_R2C:
	case FFTD__DR_C2R: {
		guru_rdft2_fn f = (guru_rdft2_fn) sym(pb->prec,
		    pb->kind == FFTD__DR_R2C ? "plan_guru64_dft_r2c"
		                             : "plan_guru64_dft_c2r");
		if (f != NULL) {
			plan = f(pb->rank, pb->dims, pb->howmany_rank,
			    pb->howmany, pb->in, pb->out, pb->flags);
		}
		break;
	}
	case FFTD__DR_R2R: {
		guru_r2r_fn f = (guru_r2r_fn) sym(pb->prec, "plan_guru64_r2r");
		if (f != NULL) {
			plan = f(pb->rank, pb->dims, pb->howmany_rank,
			    pb->howmany, pb->in, pb->out, pb->r2r_kinds,
			    pb->flags);
		}
		break;
	}
	}
	fftd__dr_real_unlock();
	return plan;
}

// fftd__dr_real_execute: see dropin_impl.h.
void
fftd__dr_real_execute(
    fftd__dr_prec prec, fftd__dr_kind kind, void *plan, void *in, void *out)
{
	static const char *const names[] = {
		[FFTD__DR_C2C] = "execute_dft",
		[FFTD__DR_R2C] = "execute_dft_r2c",
		[FFTD__DR_C2R] = "execute_dft_c2r",
		[FFTD__DR_R2R] = "execute_r2r",
	};
	static _Atomic(void *) cache[2][4];
	void                  *f = atomic_load(&cache[prec][kind]);
	if (f == NULL) {
		f = sym(prec, names[kind]);
		atomic_store(&cache[prec][kind], f);
	}
	if (f != NULL) {
		((exec_fn) f)(plan, in, out);
	}
}

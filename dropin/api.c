// SPDX-License-Identifier: MIT
//
// api.c — the FFTW3 API of the drop-in library, compiled twice as FFTW
// compiles its own: with X(name) = fftw_name and R = double (api_f64.o),
// and with -DFFTD_DR_SINGLE, X(name) = fftwf_name and R = float
// (api_f32.o). The prototypes come from the real <fftw3.h>, so the
// compiler checks that every definition here matches FFTW's.
//
// Planners: every basic, advanced (plan_many) and guru planner becomes one
// guru64 problem, as in FFTW's own api/ (FFTW's layout rules: the default
// embedded sizes, and for in-place r2c/c2r the real side's last dimension
// padded to 2(n/2+1)); plan.c gives it to the daemon or says why not, and
// then the real FFTW plans it with the program's flags. Execute, destroy,
// print, flops and cost look at the plan: a daemon plan is ours, any other
// is the real FFTW's. Split-array planners, wisdom, threads, cleanup and
// the time limit are the real FFTW's business: forwarded (a call the real
// FFTW lacks does nothing and returns 0 or NULL, logged).
//
// Not exported: fftw_version, fftw_cc and fftw_codelet_optim. They are
// data: a program that reads them holds a copy relocation sized by the
// real library's strings, which a different definition would truncate.
// Under LD_PRELOAD they come from the real libfftw3; a program linked
// against this library instead of -lfftw3 that reads them links
// -lfftw3 after it.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_impl.h"

#ifdef FFTD_DR_SINGLE
#define X(name) fftwf_##name
#define R float
#define PREC FFTD__DR_F32
#define PFX "fftwf_"
#else
#define X(name) fftw_##name
#define R double
#define PREC FFTD__DR_F64
#define PFX "fftw_"
#endif
typedef X(complex) C;

// REAL(name) is the real FFTW's X(name), looked up once (NULL if absent).
#define REAL(name)                                                             \
	__extension__({                                                        \
		static _Atomic(void *) sym_;                                   \
		void                  *g_ = atomic_load(&sym_);                \
		if (g_ == NULL) {                                              \
			g_ = fftd__dr_real_sym(PREC, PFX #name);               \
			atomic_store(&sym_, g_);                               \
		}                                                              \
		(__typeof__(&X(name))) g_;                                     \
	})

// FWD returns the real X(name)(args), or def when there is none.
#define FWD(def, name, ...)                                                    \
	do {                                                                   \
		__typeof__(&X(name)) f_ = REAL(name);                          \
		return f_ != NULL ? f_(__VA_ARGS__) : (def);                   \
	} while (0)

// FWD_VOID calls the real X(name)(args) when there is one.
#define FWD_VOID(name, ...)                                                    \
	do {                                                                   \
		__typeof__(&X(name)) f_ = REAL(name);                          \
		if (f_ != NULL) {                                              \
			f_(__VA_ARGS__);                                       \
		}                                                              \
	} while (0)

// OURS is the daemon plan behind an FFTW plan pointer, or NULL.
#define OURS(p) (fftd__dr_is_ours(p) ? (fftd__dr_plan *) (p) : NULL)

// --- planners -------------------------------------------------------------

// plan_problem is every planner's end: the daemon's plan, else FFTW's.
static X(plan) plan_problem(const fftd__dr_problem *pb)
{
	fftd__dr_plan *p = fftd__dr_plan_make(pb);
	if (p != NULL) {
		return (X(plan)) p;
	}
	return (X(plan)) fftd__dr_real_plan(pb);
}

// guru64 makes a problem from guru64 arguments and plans it.
static X(plan) guru64(fftd__dr_kind kind, int rank, const fftw_iodim64 *dims,
    int howmany_rank, const fftw_iodim64 *howmany, void *in, void *out,
    const fftw_r2r_kind *kinds, int sign, unsigned flags)
{
	fftd__dr_problem pb = {
		.prec         = PREC,
		.kind         = kind,
		.rank         = rank,
		.dims         = dims,
		.howmany_rank = howmany_rank,
		.howmany      = howmany,
		.r2r_kinds    = kinds,
		.sign         = sign,
		.flags        = flags,
		.in           = in,
		.out          = out,
	};
	return plan_problem(&pb);
}

// to64 copies n guru dimensions (int) to guru64 ones; NULL for n <= 0 or
// no memory (the caller then plans rank 0, which FFTW refuses or copies).
static fftw_iodim64 *
to64(int n, const X(iodim) * d)
{
	if (n <= 0 || d == NULL) {
		return NULL;
	}
	fftw_iodim64 *e = calloc((size_t) n, sizeof(*e));
	for (int k = 0; e != NULL && k < n; k++) {
		e[k].n  = d[k].n;
		e[k].is = d[k].is;
		e[k].os = d[k].os;
	}
	return e;
}

// pad is FFTW's rdft2_pad: the embedded sizes of an r2c/c2r side when the
// program gives none (n; the complex side's last n/2+1; an in-place real
// side's last 2(n/2+1)), written into buf.
static const int *
pad(int rank, const int *n, const int *nembed, int inplace, int cmplx, int *buf)
{
	if (nembed != NULL || rank <= 0) {
		return nembed != NULL ? nembed : n;
	}
	if (!inplace && !cmplx) {
		return n;
	}
	memcpy(buf, n, sizeof(int) * (size_t) rank);
	buf[rank - 1] = (n[rank - 1] / 2 + 1) * (cmplx ? 1 : 2);
	return buf;
}

// many is FFTW's advanced layout (plan_many_*) as guru64 dimensions: row
// major on each side with its embedded sizes, and one howmany dimension.
static X(plan) many(fftd__dr_kind kind, int rank, const int *n, int howmany,
    void *in, const int *inembed, int istride, int idist, void *out,
    const int *onembed, int ostride, int odist, const fftw_r2r_kind *kinds,
    int sign, unsigned flags)
{
	if (rank < 0 || (rank > 0 && n == NULL)) {
		return NULL;
	}
	fftw_iodim64 *dims
	    = calloc(rank > 0 ? (size_t) rank : 1, sizeof(*dims));
	int *ib      = calloc(rank > 0 ? (size_t) rank : 1, sizeof(int));
	int *ob      = calloc(rank > 0 ? (size_t) rank : 1, sizeof(int));
	X(plan) plan = NULL;
	if (dims != NULL && ib != NULL && ob != NULL) {
		int        inplace = in == out;
		const int *ie = inembed, *oe = onembed;
		if (kind == FFTD__DR_R2C) {
			ie = pad(rank, n, inembed, inplace, 0, ib);
			oe = pad(rank, n, onembed, inplace, 1, ob);
		} else if (kind == FFTD__DR_C2R) {
			ie = pad(rank, n, inembed, inplace, 1, ib);
			oe = pad(rank, n, onembed, inplace, 0, ob);
		} else {
			ie = inembed != NULL ? inembed : n;
			oe = onembed != NULL ? onembed : n;
		}
		for (int k = rank - 1; k >= 0; k--) {
			dims[k].n  = n[k];
			dims[k].is = k == rank - 1
			    ? istride
			    : dims[k + 1].is * (ptrdiff_t) ie[k + 1];
			dims[k].os = k == rank - 1
			    ? ostride
			    : dims[k + 1].os * (ptrdiff_t) oe[k + 1];
		}
		fftw_iodim64 h = { howmany, idist, odist };
		plan           = guru64(
		              kind, rank, dims, 1, &h, in, out, kinds, sign, flags);
	}
	free(dims);
	free(ib);
	free(ob);
	return plan;
}

FFTD__DR_API
X(plan)
X(plan_guru64_dft)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, C *in, C *out, int sign, unsigned flags)
{
	return guru64(FFTD__DR_C2C, rank, dims, howmany_rank, howmany_dims, in,
	    out, NULL, sign, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_dft_r2c)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, R *in, C *out, unsigned flags)
{
	return guru64(FFTD__DR_R2C, rank, dims, howmany_rank, howmany_dims, in,
	    out, NULL, FFTW_FORWARD, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_dft_c2r)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, C *in, R *out, unsigned flags)
{
	return guru64(FFTD__DR_C2R, rank, dims, howmany_rank, howmany_dims, in,
	    out, NULL, FFTW_BACKWARD, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_r2r)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, R *in, R *out, const X(r2r_kind) * kind,
    unsigned flags)
{
	return guru64(FFTD__DR_R2R, rank, dims, howmany_rank, howmany_dims, in,
	    out, kind, 0, flags);
}

// GURU32 is a guru (int) planner: its dimensions copied to guru64 ones.
#define GURU32(call)                                                           \
	do {                                                                   \
		fftw_iodim64 *d_ = to64(rank, dims);                           \
		fftw_iodim64 *h_ = to64(howmany_rank, howmany_dims);           \
		X(plan) p_       = NULL;                                       \
		if ((rank <= 0 || d_ != NULL)                                  \
		    && (howmany_rank <= 0 || h_ != NULL)) {                    \
			p_ = call;                                             \
		}                                                              \
		free(d_);                                                      \
		free(h_);                                                      \
		return p_;                                                     \
	} while (0)

FFTD__DR_API
X(plan)
X(plan_guru_dft)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, C *in, C *out, int sign, unsigned flags)
{
	GURU32(X(plan_guru64_dft)(
	    rank, d_, howmany_rank, h_, in, out, sign, flags));
}

FFTD__DR_API
X(plan)
X(plan_guru_dft_r2c)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, R *in, C *out, unsigned flags)
{
	GURU32(
	    X(plan_guru64_dft_r2c)(rank, d_, howmany_rank, h_, in, out, flags));
}

FFTD__DR_API
X(plan)
X(plan_guru_dft_c2r)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, C *in, R *out, unsigned flags)
{
	GURU32(
	    X(plan_guru64_dft_c2r)(rank, d_, howmany_rank, h_, in, out, flags));
}

FFTD__DR_API
X(plan)
X(plan_guru_r2r)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, R *in, R *out, const X(r2r_kind) * kind,
    unsigned flags)
{
	GURU32(X(plan_guru64_r2r)(
	    rank, d_, howmany_rank, h_, in, out, kind, flags));
}

FFTD__DR_API
X(plan)
X(plan_many_dft)
(int rank, const int *n, int howmany, C *in, const int *inembed, int istride,
    int idist, C *out, const int *onembed, int ostride, int odist, int sign,
    unsigned flags)
{
	return many(FFTD__DR_C2C, rank, n, howmany, in, inembed, istride, idist,
	    out, onembed, ostride, odist, NULL, sign, flags);
}

FFTD__DR_API
X(plan)
X(plan_many_dft_r2c)
(int rank, const int *n, int howmany, R *in, const int *inembed, int istride,
    int idist, C *out, const int *onembed, int ostride, int odist,
    unsigned flags)
{
	return many(FFTD__DR_R2C, rank, n, howmany, in, inembed, istride, idist,
	    out, onembed, ostride, odist, NULL, FFTW_FORWARD, flags);
}

FFTD__DR_API
X(plan)
X(plan_many_dft_c2r)
(int rank, const int *n, int howmany, C *in, const int *inembed, int istride,
    int idist, R *out, const int *onembed, int ostride, int odist,
    unsigned flags)
{
	return many(FFTD__DR_C2R, rank, n, howmany, in, inembed, istride, idist,
	    out, onembed, ostride, odist, NULL, FFTW_BACKWARD, flags);
}

FFTD__DR_API
X(plan)
X(plan_many_r2r)
(int rank, const int *n, int howmany, R *in, const int *inembed, int istride,
    int idist, R *out, const int *onembed, int ostride, int odist,
    const X(r2r_kind) * kind, unsigned flags)
{
	return many(FFTD__DR_R2R, rank, n, howmany, in, inembed, istride, idist,
	    out, onembed, ostride, odist, kind, 0, flags);
}

FFTD__DR_API
X(plan)
X(plan_dft)(int rank, const int *n, C *in, C *out, int sign, unsigned flags)
{
	return X(plan_many_dft)(
	    rank, n, 1, in, NULL, 1, 0, out, NULL, 1, 0, sign, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_1d)(int n, C *in, C *out, int sign, unsigned flags)
{
	return X(plan_dft)(1, &n, in, out, sign, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_2d)(int n0, int n1, C *in, C *out, int sign, unsigned flags)
{
	int n[2] = { n0, n1 };
	return X(plan_dft)(2, n, in, out, sign, flags);
}

FFTD__DR_API
X(plan)
X(plan_dft_3d)(int n0, int n1, int n2, C *in, C *out, int sign, unsigned flags)
{
	int n[3] = { n0, n1, n2 };
	return X(plan_dft)(3, n, in, out, sign, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_r2c)(int rank, const int *n, R *in, C *out, unsigned flags)
{
	return X(plan_many_dft_r2c)(
	    rank, n, 1, in, NULL, 1, 0, out, NULL, 1, 0, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_r2c_1d)(int n, R *in, C *out, unsigned flags)
{
	return X(plan_dft_r2c)(1, &n, in, out, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_r2c_2d)(int n0, int n1, R *in, C *out, unsigned flags)
{
	int n[2] = { n0, n1 };
	return X(plan_dft_r2c)(2, n, in, out, flags);
}

FFTD__DR_API
X(plan)
X(plan_dft_r2c_3d)(int n0, int n1, int n2, R *in, C *out, unsigned flags)
{
	int n[3] = { n0, n1, n2 };
	return X(plan_dft_r2c)(3, n, in, out, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_c2r)(int rank, const int *n, C *in, R *out, unsigned flags)
{
	return X(plan_many_dft_c2r)(
	    rank, n, 1, in, NULL, 1, 0, out, NULL, 1, 0, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_c2r_1d)(int n, C *in, R *out, unsigned flags)
{
	return X(plan_dft_c2r)(1, &n, in, out, flags);
}

FFTD__DR_API
X(plan) X(plan_dft_c2r_2d)(int n0, int n1, C *in, R *out, unsigned flags)
{
	int n[2] = { n0, n1 };
	return X(plan_dft_c2r)(2, n, in, out, flags);
}

FFTD__DR_API
X(plan)
X(plan_dft_c2r_3d)(int n0, int n1, int n2, C *in, R *out, unsigned flags)
{
	int n[3] = { n0, n1, n2 };
	return X(plan_dft_c2r)(3, n, in, out, flags);
}

FFTD__DR_API
X(plan)
X(plan_r2r)
(int rank, const int *n, R *in, R *out, const X(r2r_kind) * kind,
    unsigned flags)
{
	return X(plan_many_r2r)(
	    rank, n, 1, in, NULL, 1, 0, out, NULL, 1, 0, kind, flags);
}

FFTD__DR_API
X(plan) X(plan_r2r_1d)(int n, R *in, R *out, X(r2r_kind) kind, unsigned flags)
{
	return X(plan_r2r)(1, &n, in, out, &kind, flags);
}

FFTD__DR_API
X(plan)
X(plan_r2r_2d)
(int n0, int n1, R *in, R *out, X(r2r_kind) kind0, X(r2r_kind) kind1,
    unsigned flags)
{
	int n[2]         = { n0, n1 };
	X(r2r_kind) k[2] = { kind0, kind1 };
	return X(plan_r2r)(2, n, in, out, k, flags);
}

FFTD__DR_API
X(plan)
X(plan_r2r_3d)
(int n0, int n1, int n2, R *in, R *out, X(r2r_kind) kind0, X(r2r_kind) kind1,
    X(r2r_kind) kind2, unsigned flags)
{
	int n[3]         = { n0, n1, n2 };
	X(r2r_kind) k[3] = { kind0, kind1, kind2 };
	return X(plan_r2r)(3, n, in, out, k, flags);
}

// Split-array planners: the daemon takes interleaved complex arrays only.
// The real planner's lock guards them as every other real planner call.
#define FWD_PLAN(name, ...)                                                    \
	do {                                                                   \
		__typeof__(&X(name)) f_ = REAL(name);                          \
		X(plan) p_              = NULL;                                \
		if (f_ != NULL) {                                              \
			fftd__dr_log(FFTD__DR_LOG_DEBUG,                       \
			    PFX #name " -> fftw (split arrays)");              \
			fftd__dr_real_lock();                                  \
			p_ = f_(__VA_ARGS__);                                  \
			fftd__dr_real_unlock();                                \
		}                                                              \
		return p_;                                                     \
	} while (0)

FFTD__DR_API
X(plan)
X(plan_guru_split_dft)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, R *ri, R *ii, R *ro, R *io, unsigned flags)
{
	FWD_PLAN(plan_guru_split_dft, rank, dims, howmany_rank, howmany_dims,
	    ri, ii, ro, io, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_split_dft)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, R *ri, R *ii, R *ro, R *io, unsigned flags)
{
	FWD_PLAN(plan_guru64_split_dft, rank, dims, howmany_rank, howmany_dims,
	    ri, ii, ro, io, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru_split_dft_r2c)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, R *in, R *ro, R *io, unsigned flags)
{
	FWD_PLAN(plan_guru_split_dft_r2c, rank, dims, howmany_rank,
	    howmany_dims, in, ro, io, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru_split_dft_c2r)
(int rank, const X(iodim) * dims, int howmany_rank,
    const X(iodim) * howmany_dims, R *ri, R *ii, R *out, unsigned flags)
{
	FWD_PLAN(plan_guru_split_dft_c2r, rank, dims, howmany_rank,
	    howmany_dims, ri, ii, out, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_split_dft_r2c)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, R *in, R *ro, R *io, unsigned flags)
{
	FWD_PLAN(plan_guru64_split_dft_r2c, rank, dims, howmany_rank,
	    howmany_dims, in, ro, io, flags);
}

FFTD__DR_API
X(plan)
X(plan_guru64_split_dft_c2r)
(int rank, const X(iodim64) * dims, int howmany_rank,
    const X(iodim64) * howmany_dims, R *ri, R *ii, R *out, unsigned flags)
{
	FWD_PLAN(plan_guru64_split_dft_c2r, rank, dims, howmany_rank,
	    howmany_dims, ri, ii, out, flags);
}

// --- execute and destroy
// ------------------------------------------------------

FFTD__DR_API void
X(execute)(const X(plan) p)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_execute(o, NULL, NULL);
	} else if (p != NULL) {
		FWD_VOID(execute, p);
	}
}

FFTD__DR_API void
X(execute_dft)(const X(plan) p, C *in, C *out)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_execute(o, in, out);
	} else if (p != NULL) {
		FWD_VOID(execute_dft, p, in, out);
	}
}

FFTD__DR_API void
X(execute_dft_r2c)(const X(plan) p, R *in, C *out)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_execute(o, in, out);
	} else if (p != NULL) {
		FWD_VOID(execute_dft_r2c, p, in, out);
	}
}

FFTD__DR_API void
X(execute_dft_c2r)(const X(plan) p, C *in, R *out)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_execute(o, in, out);
	} else if (p != NULL) {
		FWD_VOID(execute_dft_c2r, p, in, out);
	}
}

FFTD__DR_API void
X(execute_r2r)(const X(plan) p, R *in, R *out)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_execute(o, in, out);
	} else if (p != NULL) {
		FWD_VOID(execute_r2r, p, in, out);
	}
}

// split_on_ours: a daemon plan is never a split-array plan; FFTW leaves
// this undefined, here it is logged and nothing is written.
static void
split_on_ours(const char *name)
{
	fftd__dr_log(
	    FFTD__DR_LOG_WARN, "%s on an interleaved plan: not executed", name);
}

FFTD__DR_API void
X(execute_split_dft)(const X(plan) p, R *ri, R *ii, R *ro, R *io)
{
	if (OURS(p) != NULL) {
		split_on_ours(PFX "execute_split_dft");
	} else if (p != NULL) {
		FWD_VOID(execute_split_dft, p, ri, ii, ro, io);
	}
}

FFTD__DR_API void
X(execute_split_dft_r2c)(const X(plan) p, R *in, R *ro, R *io)
{
	if (OURS(p) != NULL) {
		split_on_ours(PFX "execute_split_dft_r2c");
	} else if (p != NULL) {
		FWD_VOID(execute_split_dft_r2c, p, in, ro, io);
	}
}

FFTD__DR_API void
X(execute_split_dft_c2r)(const X(plan) p, R *ri, R *ii, R *out)
{
	if (OURS(p) != NULL) {
		split_on_ours(PFX "execute_split_dft_c2r");
	} else if (p != NULL) {
		FWD_VOID(execute_split_dft_c2r, p, ri, ii, out);
	}
}

FFTD__DR_API void
X(destroy_plan)(X(plan) p)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_plan_destroy(o);
	} else if (p != NULL) {
		fftd__dr_real_lock();
		FWD_VOID(destroy_plan, p);
		fftd__dr_real_unlock();
	}
}

// --- plan information
// -----------------------------------------------------------

FFTD__DR_API void
X(fprint_plan)(const X(plan) p, FILE *output_file)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		char buf[256];
		fftd__dr_plan_describe(o, buf, sizeof(buf));
		fputs(buf, output_file);
	} else {
		FWD_VOID(fprint_plan, p, output_file);
	}
}

FFTD__DR_API void
X(print_plan)(const X(plan) p)
{
	X(fprint_plan)(p, stdout);
}

FFTD__DR_API char *
X(sprint_plan)(const X(plan) p)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		char buf[256];
		fftd__dr_plan_describe(o, buf, sizeof(buf));
		return strdup(buf);
	}
	FWD(NULL, sprint_plan, p);
}

FFTD__DR_API void
X(flops)(const X(plan) p, double *add, double *mul, double *fmas)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		fftd__dr_plan_flops(o, add, mul, fmas);
	} else {
		FWD_VOID(flops, p, add, mul, fmas);
	}
}

FFTD__DR_API double
X(estimate_cost)(const X(plan) p)
{
	fftd__dr_plan *o = OURS(p);
	if (o != NULL) {
		double a, m, f;
		fftd__dr_plan_flops(o, &a, &m, &f);
		return a + m + f;
	}
	FWD(0.0, estimate_cost, p);
}

FFTD__DR_API double
X(cost)(const X(plan) p)
{
	if (OURS(p) != NULL) {
		return X(estimate_cost)(p);
	}
	FWD(0.0, cost, p);
}

// --- memory
// ---------------------------------------------------------------------

FFTD__DR_API void *
X(malloc)(size_t n)
{
	return fftd__dr_malloc(n);
}

FFTD__DR_API void
X(free)(void *p)
{
	fftd__dr_free(p);
}

FFTD__DR_API R *
X(alloc_real)(size_t n)
{
	return n > SIZE_MAX / sizeof(R) ? NULL : fftd__dr_malloc(n * sizeof(R));
}

FFTD__DR_API C *
X(alloc_complex)(size_t n)
{
	return n > SIZE_MAX / sizeof(C) ? NULL : fftd__dr_malloc(n * sizeof(C));
}

FFTD__DR_API int
X(alignment_of)(R *p)
{
	FWD((int) ((uintptr_t) p % 16), alignment_of, p);
}

// --- forwarded: cleanup, time limit, threads, wisdom ----------------------

FFTD__DR_API void
X(cleanup)(void)
{
	fftd__dr_real_lock();
	FWD_VOID(cleanup);
	fftd__dr_real_unlock();
}

FFTD__DR_API void
X(set_timelimit)(double t)
{
	FWD_VOID(set_timelimit, t);
}

// init_threads succeeds without a threads library too: the daemon's
// plans use the daemon's threads, the real FFTW's stay single-threaded.
FFTD__DR_API int
X(init_threads)(void)
{
	FWD(1, init_threads);
}

FFTD__DR_API void
X(plan_with_nthreads)(int nthreads)
{
	FWD_VOID(plan_with_nthreads, nthreads);
}

FFTD__DR_API int
X(planner_nthreads)(void)
{
	FWD(1, planner_nthreads);
}

FFTD__DR_API void
X(cleanup_threads)(void)
{
	FWD_VOID(cleanup_threads);
}

FFTD__DR_API void
X(threads_set_callback)(
    void (*parallel_loop)(void *(*work)(char *), char *jobdata, size_t elsize,
        int njobs, void *data),
    void *data)
{
	FWD_VOID(threads_set_callback, parallel_loop, data);
}

FFTD__DR_API void
X(make_planner_thread_safe)(void)
{
	FWD_VOID(make_planner_thread_safe);
}

FFTD__DR_API void
X(forget_wisdom)(void)
{
	FWD_VOID(forget_wisdom);
}

FFTD__DR_API int
X(export_wisdom_to_filename)(const char *filename)
{
	FWD(0, export_wisdom_to_filename, filename);
}

FFTD__DR_API void
X(export_wisdom_to_file)(FILE *output_file)
{
	FWD_VOID(export_wisdom_to_file, output_file);
}

FFTD__DR_API char *
X(export_wisdom_to_string)(void)
{
	FWD(NULL, export_wisdom_to_string);
}

FFTD__DR_API void
X(export_wisdom)(X(write_char_func) write_char, void *data)
{
	FWD_VOID(export_wisdom, write_char, data);
}

FFTD__DR_API int
X(import_system_wisdom)(void)
{
	FWD(0, import_system_wisdom);
}

FFTD__DR_API int
X(import_wisdom_from_filename)(const char *filename)
{
	FWD(0, import_wisdom_from_filename, filename);
}

FFTD__DR_API int
X(import_wisdom_from_file)(FILE *input_file)
{
	FWD(0, import_wisdom_from_file, input_file);
}

FFTD__DR_API int
X(import_wisdom_from_string)(const char *input_string)
{
	FWD(0, import_wisdom_from_string, input_string);
}

FFTD__DR_API int
X(import_wisdom)(X(read_char_func) read_char, void *data)
{
	FWD(0, import_wisdom, read_char, data);
}

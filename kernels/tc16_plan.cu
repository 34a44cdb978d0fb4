// SPDX-License-Identifier: MIT
//
// tc16_plan.cu — the C ABI of tc.h for both tensor-core algorithms: plan
// creation (pass decomposition from tc_host.c, kernel choice — those of
// tc16_io.cu for the first and last passes of a plan with fused conversion
// —, twiddle tables
// in device memory, launch geometry from the occupancy calculator),
// execution as one to four kernel launches on the caller's stream (three
// complex passes at most, and the real step of R2C / C2R; one for a 1D
// R2C / C2R whose real step is fused into its one complex pass), and
// destruction. The
// kernels themselves are in tc16.cu / split16.cu (and the .cuh files they
// include: pass, radix, axis, plane and real-step kernels).

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc.h"
#include "tc16_types.cuh"

struct fftd__tc_plan {
	fftd__tc_algo       algo;
	fftd__tc_type       type;
	int                 direction;
	int                 rank;
	int64_t             dims[3];
	int64_t             batch;
	fftd__tc_layout     lay;
	fftd_tc::KernelInfo kern[FFTD__TC_MAX_PASSES];
	int                 grid[FFTD__TC_MAX_PASSES];
	const float2 *tab[FFTD__TC_MAX_PASSES]; // W_len^j (tensor-core passes)
	void         *dmem;                     // all tables, one allocation
	size_t        elem_bytes;
	fftd__tc_io   in_io, out_io; // element kinds of in and out
	// 1D R2C / C2R of n/2 <= FFTD__TC_MAX_FUSED_REAL: the complex pass
	// (index fuse_with, -1 for none) with the real step fused in, run
	// instead of both when in and out do not overlap
	int                 fuse_with;
	fftd_tc::KernelInfo fkern;
	int                 fgrid;
};

// io_bytes is the size of one point (a pair) of kind io in a plan whose
// storage has elem bytes a point.
static size_t
io_bytes(fftd__tc_io io, size_t elem)
{
	return io == FFTD__TC_IO_F32 ? 8 : io == FFTD__TC_IO_I8 ? 2 : elem;
}

static int
cuda_code(cudaError_t e)
{
	return e == cudaSuccess ? FFTD__TC_OK : FFTD__TC_ECUDA_BASE - (int) e;
}

// real_step says whether a pass's op is a real step (tc.h), whose threads
// loop over pairs of points and whose rows, not points, are a transform's.
static bool
real_step(int op)
{
	return op == FFTD__TC_OP_R2C_POST || op == FFTD__TC_OP_C2R_PRE;
}

// launch_grid sets *grid for kernel k over iters block iterations: at
// most as many blocks as fit on the device at once (persistent blocks).
static cudaError_t
launch_grid(const fftd_tc::KernelInfo *k, long long iters, int sms, int *grid)
{
	int         nb = 0;
	cudaError_t ce = cudaFuncSetAttribute((const void *) k->fn,
	    cudaFuncAttributeMaxDynamicSharedMemorySize, (int) k->smem);
	if (ce == cudaSuccess)
		ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		    &nb, (const void *) k->fn, k->warps * 32, k->smem);
	if (ce != cudaSuccess)
		return ce;
	if (nb < 1)
		nb = 1;
	const long long g = (long long) nb * sms;
	*grid             = (int) (iters < g ? iters : g);
	return cudaSuccess;
}

static int
log2ll(long long v)
{
	int l = 0;
	while ((1LL << l) < v)
		l++;
	return l;
}

extern "C" int
fftd__tc_plan_create(fftd__tc_plan **out, fftd__tc_algo algo,
    fftd__tc_type type, int rank, const int64_t *dims, int64_t batch,
    int direction)
{
	return fftd__tc_plan_create_io(out, algo, type, rank, dims, batch,
	    direction, FFTD__TC_IO_NATIVE, FFTD__TC_IO_NATIVE);
}

extern "C" int
fftd__tc_plan_create_io(fftd__tc_plan **out, fftd__tc_algo algo,
    fftd__tc_type type, int rank, const int64_t *dims, int64_t batch,
    int direction, fftd__tc_io in_io, fftd__tc_io out_io)
{
	if (out == NULL)
		return FFTD__TC_EINVAL;
	*out = NULL;
	if ((algo != FFTD__TC_TC16 && algo != FFTD__TC_SPLIT16)
	    || (direction != FFTD__TC_FORWARD && direction != FFTD__TC_INVERSE)
	    || (int) in_io < FFTD__TC_IO_NATIVE || (int) in_io > FFTD__TC_IO_I8
	    || (int) out_io < FFTD__TC_IO_NATIVE
	    || (int) out_io > FFTD__TC_IO_I8)
		return FFTD__TC_EINVAL;
	const bool io
	    = in_io != FFTD__TC_IO_NATIVE || out_io != FFTD__TC_IO_NATIVE;
	if (io && (algo != FFTD__TC_TC16 || out_io == FFTD__TC_IO_I8))
		return FFTD__TC_EUNSUPPORTED;
	int rc = fftd__tc_plan_supported(algo, type, rank, dims, batch);
	if (rc != FFTD__TC_OK)
		return rc;
	if ((type == FFTD__TC_R2C && direction != FFTD__TC_FORWARD)
	    || (type == FFTD__TC_C2R && direction != FFTD__TC_INVERSE))
		return FFTD__TC_EINVAL;
	fftd__tc_layout lay;
	if ((rc = fftd__tc_plan_layout_algo(
	         algo, type, rank, dims, batch, &lay))
	    != FFTD__TC_OK)
		return rc;
	if (io)
		fftd__tc_layout_route_io(&lay, batch);

	int         ndev = 0;
	cudaError_t ce   = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev == 0) {
		cudaGetLastError();
		return FFTD__TC_ENODEV;
	}
	int dev = 0, sms = 0;
	if ((ce = cudaGetDevice(&dev)) != cudaSuccess
	    || (ce = cudaDeviceGetAttribute(
	            &sms, cudaDevAttrMultiProcessorCount, dev))
	        != cudaSuccess)
		return cuda_code(ce);

	fftd__tc_plan *p = (fftd__tc_plan *) calloc(1, sizeof *p);
	if (p == NULL)
		return FFTD__TC_ENOMEM;
	p->algo      = algo;
	p->direction = direction;
	p->type      = type;
	p->rank      = rank;
	for (int i = 0; i < 3; i++)
		p->dims[i] = i < rank ? dims[i] : 1;
	p->batch       = batch;
	p->lay         = lay;
	p->elem_bytes  = algo == FFTD__TC_TC16 ? 4 : 8;
	p->in_io       = in_io;
	p->out_io      = out_io;
	const bool inv = direction == FFTD__TC_INVERSE;
	// Column passes: runs of up to 128 bytes per column group ("wide", the
	// default: measured faster for 256- and 512-point columns on the H200),
	// or 32 bytes with FFTD_TC_WIDE=0 (a tuning knob, read at plan time).
	const char *wide_env = getenv("FFTD_TC_WIDE");
	const bool  wide     = !(wide_env != NULL && wide_env[0] == '0');

	// Kernels and their launch geometry.
	for (int i = 0; i < lay.npass; i++) {
		const fftd__tc_pass *ps      = &lay.pass[i];
		bool                 strided = ps->s_in > 1 || ps->s_out > 1;
		const int            twk     = fftd__tc_tw_kind(ps);
		// the passes that read in or write out convert (tc_io.cuh)
		const bool cv = io && (i == 0 || i == lay.npass - 1);
		bool       ok;
		if (ps->op == FFTD__TC_OP_PLANE)
			ok = cv ? fftd_tc::tc16_plane_io_kernel(
			         ps->len2, ps->len, inv, &p->kern[i])
			    : algo == FFTD__TC_TC16
			    ? fftd_tc::tc16_plane_kernel(
			        ps->len2, ps->len, inv, &p->kern[i])
			    : fftd_tc::split16_plane_kernel(
			        ps->len2, ps->len, inv, &p->kern[i]);
		else if (cv)
			ok = ps->op != FFTD__TC_OP_FFT
			    ? fftd_tc::tc16_real_io_kernel(
			        ps->op, ps->q_total, ps->len, &p->kern[i])
			    : fftd_tc::tc16_io_kernel(
			        ps->len, strided, inv, twk, &p->kern[i]);
		else if (ps->op != FFTD__TC_OP_FFT)
			ok = algo == FFTD__TC_TC16
			    ? fftd_tc::tc16_real_kernel(
			        ps->op, ps->q_total, ps->len, &p->kern[i])
			    : fftd_tc::split16_real_kernel(
			        ps->op, ps->q_total, ps->len, &p->kern[i]);
		else
			ok = algo == FFTD__TC_TC16
			    ? fftd_tc::tc16_kernel(
			        ps->len, strided, inv, twk, wide, &p->kern[i])
			    : fftd_tc::split16_kernel(
			        ps->len, strided, inv, twk, wide, &p->kern[i]);
		if (!ok) {
			free(p);
			return FFTD__TC_EUNSUPPORTED;
		}
		const fftd_tc::KernelInfo *k = &p->kern[i];
		// a column pass (tensor cores or tc_axis.cuh) moves k->ffts
		// neighbouring columns at once: its strides must be multiples
		// of that (the planner sees to it)
		if (strided && ps->op == FFTD__TC_OP_FFT
		    && ps->len > FFTD__TC_MAX_RADIX
		    && ((ps->s_in > 1 && ps->s_in % k->ffts != 0)
		        || (ps->s_out > 1 && ps->s_out % k->ffts != 0)
		        || ps->q_total % k->ffts != 0)) {
			free(p);
			return FFTD__TC_EUNSUPPORTED;
		}
		// a real step's threads loop over pairs of points (len / 2
		// a row), not rows: a grid of one block per row starved 1D
		// R2C/C2R (4 rows of 2^23 points ran on 4 blocks, 18.9 ms
		// on the H100)
		long long iters = real_step(ps->op)
		    ? (ps->q_total * (ps->len / 2) + k->warps * 32 - 1)
		        / (k->warps * 32)
		    : (ps->q_total + k->ffts - 1) / k->ffts;
		if ((ce = launch_grid(k, iters, sms, &p->grid[i]))
		    != cudaSuccess) {
			free(p);
			return cuda_code(ce);
		}
	}

	// The fused real step (1D, no conversion: two passes, the complex one
	// contiguous and short enough).
	p->fuse_with = -1;
	if (!io && rank == 1 && type != FFTD__TC_C2C && lay.npass == 2) {
		const int            ci = type == FFTD__TC_R2C ? 0 : 1;
		const fftd__tc_pass *ps = &lay.pass[ci];
		const int op = type == FFTD__TC_R2C ? FFTD__TC_OP_R2C_POST
		                                    : FFTD__TC_OP_C2R_PRE;
		if (ps->op == FFTD__TC_OP_FFT && ps->s_in == 1 && ps->s_out == 1
		    && ps->len <= FFTD__TC_MAX_FUSED_REAL
		    && (algo == FFTD__TC_TC16
		            ? fftd_tc::tc16_fused_real_kernel(
		                op, ps->len, &p->fkern)
		            : fftd_tc::split16_fused_real_kernel(
		                op, ps->len, &p->fkern))) {
			if ((ce = launch_grid(&p->fkern,
			         (ps->q_total + p->fkern.ffts - 1)
			             / p->fkern.ffts,
			         sms, &p->fgrid))
			    != cudaSuccess) {
				free(p);
				return cuda_code(ce);
			}
			p->fuse_with = ci;
		}
	}

	// Tables: W_len for each tensor-core pass (the kernels make the
	// four-step twiddles themselves, tc.h FFTD__TC_TW_COL).
	size_t n_tab[FFTD__TC_MAX_PASSES] = { 0 }, total = 0;
	for (int i = 0; i < lay.npass; i++) {
		n_tab[i] = lay.pass[i].op == FFTD__TC_OP_FFT
		        && lay.pass[i].len >= FFTD__TC_MIN_LEN
		    ? (size_t) lay.pass[i].len
		    : 0;
		total += n_tab[i];
	}
	float *host
	    = (float *) malloc((total > 0 ? total : 1) * 2 * sizeof(float));
	if (host == NULL) {
		free(p);
		return FFTD__TC_ENOMEM;
	}
	size_t off = 0, offs[FFTD__TC_MAX_PASSES] = { 0 };
	for (int i = 0; i < lay.npass; i++) {
		offs[i] = off;
		fftd__tc_twiddles(
		    lay.pass[i].len, (int64_t) n_tab[i], 1, host + 2 * off);
		off += n_tab[i];
	}
	if (total > 0) {
		if ((ce = cudaMalloc(&p->dmem, total * sizeof(float2)))
		    != cudaSuccess) {
			free(host);
			free(p);
			cudaGetLastError();
			return ce == cudaErrorMemoryAllocation
			    ? FFTD__TC_EDEVMEM
			    : cuda_code(ce);
		}
		ce = cudaMemcpy(p->dmem, host, total * sizeof(float2),
		    cudaMemcpyHostToDevice);
	}
	free(host);
	if (ce != cudaSuccess) {
		cudaFree(p->dmem);
		free(p);
		return cuda_code(ce);
	}
	const float2 *d = (const float2 *) p->dmem;
	for (int i = 0; i < lay.npass; i++)
		p->tab[i] = n_tab[i] > 0 ? d + offs[i] : NULL;
	*out = p;
	return FFTD__TC_OK;
}

extern "C" int
fftd__tc_workspace_size(const fftd__tc_plan *p, size_t *bytes)
{
	if (p == NULL || bytes == NULL)
		return FFTD__TC_EINVAL;
	*bytes
	    = (size_t) (p->lay.ws_points + p->lay.tmp_points) * p->elem_bytes;
	return FFTD__TC_OK;
}

extern "C" int
fftd__tc_execute(
    const fftd__tc_plan *p, const void *in, void *out, void *ws, void *stream)
{
	return fftd__tc_execute_io(p, in, out, ws, NULL, stream);
}

// pass_args gives pass i of p the arguments its kernel takes, reading src
// and writing dst.
static fftd_tc::PassArgs
pass_args(const fftd__tc_plan *p, int i, const void *src, void *dst)
{
	const fftd__tc_pass *ps = &p->lay.pass[i];
	fftd_tc::PassArgs    a;
	a.in_io    = FFTD__TC_IO_NATIVE;
	a.out_io   = FFTD__TC_IO_NATIVE;
	a.exps_in  = NULL;
	a.exps_out = NULL;
	// the transform of a point, or of a real step's row
	a.in_tlog2 = a.out_tlog2
	    = log2ll(p->lay.points) - (real_step(ps->op) ? log2ll(ps->len) : 0);
	a.in         = src;
	a.out        = dst;
	a.q_total    = ps->q_total;
	a.s_in       = ps->s_in;
	a.s_out      = ps->s_out;
	a.s_in_log2  = log2ll(ps->s_in);
	a.s_out_log2 = log2ll(ps->s_out);
	a.tab        = p->tab[i];
	a.tw_log2    = ps->tw_n > 0 ? log2ll(ps->tw_n) : 0;
	a.len        = ps->len;
	a.len_log2   = log2ll(ps->len);
	a.nd         = p->rank - 1;
	for (int d = 0; d < 2; d++)
		a.dlog2[d] = d < p->rank - 1 // innermost first
		    ? log2ll(p->lay.cdims[p->rank - 2 - d])
		    : 0;
	return a;
}

// launch enqueues kernel k on grid blocks with a on st.
static int
launch(const fftd_tc::KernelInfo *k, int grid, const fftd_tc::PassArgs &a,
    cudaStream_t st)
{
	k->fn<<<grid, k->warps * 32, k->smem, st>>>(a);
	return cuda_code(cudaGetLastError());
}

// overlap says whether the input and output extents of an execution of a
// 1D R2C / C2R plan p share a byte (batch rows of n reals, and of n/2 + 1
// points).
static bool
overlap(const fftd__tc_plan *p, const void *in, const void *out)
{
	const size_t h = (size_t) p->dims[0] / 2, b = (size_t) p->batch;
	const size_t real    = b * h * p->elem_bytes,
	             cplx    = b * (h + 1) * p->elem_bytes;
	const size_t    nin  = p->type == FFTD__TC_R2C ? real : cplx;
	const size_t    nout = p->type == FFTD__TC_R2C ? cplx : real;
	const uintptr_t i = (uintptr_t) in, o = (uintptr_t) out;
	return i < o + nout && o < i + nin;
}

extern "C" int
fftd__tc_execute_io(const fftd__tc_plan *p, const void *in, void *out, void *ws,
    const int *exps, void *stream)
{
	if (p == NULL || in == NULL || out == NULL
	    || (p->lay.ws_points + p->lay.tmp_points > 0 && ws == NULL))
		return FFTD__TC_EINVAL;
	if (((uintptr_t) in & (io_bytes(p->in_io, p->elem_bytes) - 1))
	    || ((uintptr_t) out & (io_bytes(p->out_io, p->elem_bytes) - 1))
	    || ((uintptr_t) ws & (p->elem_bytes - 1)))
		return FFTD__TC_EINVAL;
	cudaStream_t st = (cudaStream_t) stream;
	// one kernel for the complex pass and the real step: not in place,
	// where a block would overwrite rows another has still to read
	if (p->fuse_with >= 0 && !overlap(p, in, out))
		return launch(&p->fkern, p->fgrid,
		    pass_args(p, p->fuse_with, in, out), st);
	void *const bufs[4] = { (void *) in, out, ws,
		ws == NULL
		    ? NULL
		    : (char *) ws + (size_t) p->lay.ws_points * p->elem_bytes };
	const bool  scaled  = p->in_io != FFTD__TC_IO_NATIVE && exps != NULL;
	const int   last    = p->lay.npass - 1;
	for (int i = 0; i < p->lay.npass; i++) {
		const fftd__tc_pass *ps = &p->lay.pass[i];
		fftd_tc::PassArgs    a
		    = pass_args(p, i, bufs[ps->src], bufs[ps->dst]);
		// fused conversion: what the first pass reads, the last writes
		// (only kernels compiled with CV look at these)
		a.in_io      = i == 0 ? p->in_io : FFTD__TC_IO_NATIVE;
		a.out_io     = i == last ? p->out_io : FFTD__TC_IO_NATIVE;
		a.exps_in    = i == 0 && scaled ? exps : NULL;
		a.exps_out   = i == last && scaled ? exps : NULL;
		const int rc = launch(&p->kern[i], p->grid[i], a, st);
		if (rc != FFTD__TC_OK)
			return rc;
	}
	return FFTD__TC_OK;
}

extern "C" void
fftd__tc_plan_destroy(fftd__tc_plan *p)
{
	if (p == NULL)
		return;
	if (p->dmem != NULL)
		cudaFree(p->dmem);
	free(p);
}

extern "C" void
fftd__tc_plan_describe(const fftd__tc_plan *p, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return;
	if (p == NULL) {
		snprintf(buf, len, "(null)");
		return;
	}
	static const char *const kind[3] = { "C2C", "R2C", "C2R" };
	static const char *const io[3]   = { "", " f32", " int8" };
	int                      n = snprintf(buf, len, "%s %s %s%s%s%s%s",
            p->algo == FFTD__TC_TC16 ? "tc16" : "split16", kind[p->type],
            p->direction == FFTD__TC_FORWARD ? "fwd" : "inv",
            p->in_io != FFTD__TC_IO_NATIVE ? ", in" : "", io[p->in_io],
            p->out_io != FFTD__TC_IO_NATIVE ? ", out" : "", io[p->out_io]);
	for (int i = 0; i < p->lay.npass && n > 0 && (size_t) n < len; i++) {
		const fftd__tc_pass       *ps     = &p->lay.pass[i];
		const fftd_tc::KernelInfo *k      = &p->kern[i];
		static const char *const   twk[3] = { "", " tw", " tw4" };
		if (ps->op == FFTD__TC_OP_PLANE) {
			n += snprintf(buf + n, len - (size_t) n,
			    " | pass %d: planes %dx%d (CUDA cores) q %lld, %d "
			    "planes x %d warps, %zu B smem, grid %d",
			    i, ps->len2, ps->len, (long long) ps->q_total,
			    k->ffts, k->warps, k->smem, p->grid[i]);
			continue;
		}
		if (ps->op != FFTD__TC_OP_FFT) {
			n += snprintf(buf + n, len - (size_t) n,
			    " | pass %d: %s of %lld rows of %d, grid %d", i,
			    ps->op == FFTD__TC_OP_R2C_POST ? "R2C post-process"
			                                   : "C2R pre-process",
			    (long long) ps->q_total, ps->len, p->grid[i]);
			continue;
		}
		n += snprintf(buf + n, len - (size_t) n,
		    " | pass %d: len %d%s q %lld s %lld/%lld%s, %d ffts x %d "
		    "warps, %zu B smem, grid %d",
		    i, ps->len,
		    ps->len < FFTD__TC_MIN_LEN ? " (CUDA cores)" : "",
		    (long long) ps->q_total, (long long) ps->s_in,
		    (long long) ps->s_out, twk[fftd__tc_tw_kind(ps)], k->ffts,
		    k->warps, k->smem, p->grid[i]);
	}
	if (p->fuse_with >= 0 && n > 0 && (size_t) n < len)
		snprintf(buf + n, len - (size_t) n,
		    " | out of place: pass %d with the real step fused, %d "
		    "ffts x %d warps, %zu B smem, grid %d",
		    p->fuse_with, p->fkern.ffts, p->fkern.warps, p->fkern.smem,
		    p->fgrid);
}

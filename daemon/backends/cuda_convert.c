// SPDX-License-Identifier: MIT
//
// cuda_convert.c — the cuda backend's converted plans, for accuracy-aware
// "auto" (issue 18 item 5; daemon/algo_pick.c): data of one precision run
// through an algorithm of a lower one, converted on the device on the
// execution's stream (kernels/convert.cu):
//   "tc16-conv"     f32 or f64 data through tc16 (fp16),
//   "split16-conv"  f64 data through split16 (fp32 storage),
//   "cufft-f32"     f64 data through cuFFT f32,
// names that only the daemon's choice uses (naming "tc16" for f32 data
// stays refused); and int8 input (fftd_plan_desc.input = FFTD_INPUT_I8,
// issue 18 item 4) through any algorithm, converted on the device into the
// precision the plan computes in (so only int8 crosses PCIe, a quarter of
// f32's bytes). tc16 converts f32 and int8 input in its first pass and
// writes f32 output from its last (fftd__cuda_conv_fused: no conversion
// kernel, no buffers in fp16 but the plan's workspace); the others, and
// f64 data, convert in separate kernels. Each transform is scaled by a power of
// two chosen from its largest magnitude (a reduction on the GPU) so that its
// worst-case output, N times that magnitude, fits the lower precision (fp16's
// 65504 above all), and unscaled on the way out: exact, both ways. Dense
// layouts only; converted plans never take the split-batch pipeline. The
// conversions' buffers belong to the unit (counted against the budget
// like a workspace).

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "backend_util.h"
#include "cuda_impl.h"
#include "errmsg.h"

// One converted algorithm: the backend's name, the algorithm it runs, the
// precision it computes in, and the scale target (convert.h).
typedef struct conv_algo {
	const char     *name;
	fftd__cuda_algo algo;
	fftd_precision  compute;
	int             target_log2;
} conv_algo;

static const conv_algo conv_algos[] = {
	{ "tc16-conv", FFTD__CUDA_ALG_TC16, FFTD_F16, 15 },
	{ "split16-conv", FFTD__CUDA_ALG_SPLIT16, FFTD_F32, 64 },
	{ "cufft-f32", FFTD__CUDA_ALG_CUFFT, FFTD_F32, 64 },
};
#define NCONV ((int) (sizeof(conv_algos) / sizeof(conv_algos[0])))

// find_conv returns the converted algorithm called name, or NULL.
static const conv_algo *
find_conv(const char *name)
{
	for (int i = 0; name != NULL && i < NCONV; i++) {
		if (strcmp(name, conv_algos[i].name) == 0) {
			return &conv_algos[i];
		}
	}
	return NULL;
}

// prec_rank orders precisions by accuracy (f16 < f32 < f64).
static int
prec_rank(fftd_precision p)
{
	return p == FFTD_F16 ? 0 : p == FFTD_F32 ? 1 : 2;
}

// fftd__cuda_conv_resolve says whether algorithm is a converted one
// (*conv); if so, it checks that it serves s (data of a higher precision
// than it computes in, dense layouts) and gives the algorithm it runs in
// *algo and the shape in its computing precision in *cs. FFTD_OK, or
// FFTD_EUNSUPPORTED saying why.
int
fftd__cuda_conv_resolve(const char *algorithm, const fftd__shape *s, bool *conv,
    int *algo, fftd__shape *cs, char *msg, size_t msglen)
{
	const conv_algo *c  = find_conv(algorithm);
	bool             i8 = s->input == FFTD_INPUT_I8;
	*conv               = c != NULL || i8;
	if (!*conv) {
		return FFTD_OK;
	}
	if (!s->in.dense || !s->out.dense) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "%s converts dense layouts only",
		    c != NULL ? c->name : "int8 input on the cuda backend");
	}
	if (c == NULL) {
		// int8 input through a native algorithm (*algo, the caller's):
		// converted into the data's own precision.
		*cs              = *s;
		cs->input        = FFTD_INPUT_NATIVE;
		cs->in.elem_size = fftd__elem_size(s->precision, s->in.complex);
		cs->in.bytes     = (uint64_t) s->in.elems * cs->in.elem_size;
		return FFTD_OK;
	}
	if (prec_rank(s->precision) <= prec_rank(c->compute)) {
		return fftd__errmsg(FFTD_EUNSUPPORTED, msg, msglen,
		    "%s converts data of a higher precision than the one it "
		    "computes in",
		    c->name);
	}
	size_t ein        = fftd__elem_size(c->compute, s->in.complex);
	size_t eou        = fftd__elem_size(c->compute, s->out.complex);
	*cs               = *s;
	cs->input         = FFTD_INPUT_NATIVE;
	cs->precision     = c->compute;
	cs->in.elem_size  = ein;
	cs->in.bytes      = (uint64_t) s->in.elems * ein;
	cs->out.elem_size = eou;
	cs->out.bytes     = (uint64_t) s->out.elems * eou;
	*algo             = (int) c->algo;
	return FFTD_OK;
}

// round_up rounds n up to a multiple of 256 bytes.
static size_t
round_up(size_t n)
{
	return (n + 255) / 256 * 256;
}

// fftd__cuda_conv_alloc gives unit u of converted plan p its buffers:
// input and output in the computing precision and the conversion's
// scratch, after checking the budget.
int
fftd__cuda_conv_alloc(fftd__cuda_state *st, const fftd__cuda_plan *p,
    fftd__cuda_unit *u, char *msg, size_t msglen)
{
	const fftd__shape *cs    = &p->cshape;
	bool               fused = fftd__cuda_conv_fused(p, NULL, NULL);
	size_t             tot   = (fused ? 0
	                                  : round_up((size_t) cs->in.bytes)
                                 + round_up((size_t) cs->out.bytes))
	    + round_up(fftd__conv_scratch_bytes(cs->batch));
	int rv = fftd__cuda_reserve_plan_bytes(
	    st, tot, "conversion buffers", msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	cudaError_t e = cudaMalloc(&u->cbuf, tot);
	if (e != cudaSuccess) {
		u->cbuf = NULL;
		fftd__cuda_release_plan_bytes(st, tot);
		return fftd__cuda_fail(
		    e, "cudaMalloc (conversion buffers)", msg, msglen);
	}
	u->cbuf_bytes = tot;
	u->held += tot;
	return FFTD_OK;
}

// fftd__cuda_conv_free frees unit u's conversion buffers (their bytes go
// with u->held).
void
fftd__cuda_conv_free(fftd__cuda_unit *u)
{
	if (u->cbuf != NULL) {
		(void) cudaFree(u->cbuf);
		u->cbuf = NULL;
	}
}

// fftd__cuda_conv_target is the scale target (convert.h) of converted plan
// p, or -1 when p is not one.
int
fftd__cuda_conv_target(const fftd__cuda_plan *p)
{
	for (int i = 0; p->conv && i < NCONV; i++) {
		if (conv_algos[i].algo == p->algo
		    && conv_algos[i].compute == p->cshape.precision
		    && p->cshape.precision != p->shape.precision) {
			return conv_algos[i].target_log2;
		}
	}
	// int8 input computed in the data's own precision: fp16's target
	// for f16 (int8 values do overflow a long enough fp16 transform),
	// f32's otherwise (the scale is exact: it changes nothing but the
	// exponents).
	if (p->conv && p->shape.input == FFTD_INPUT_I8) {
		return p->cshape.precision == FFTD_F16 ? 15 : 64;
	}
	return -1;
}

// fftd__cuda_conv_fused says whether plan p is a tc16 plan whose passes
// convert (kernels/tc.h, fftd__tc_plan_create_io): f32 data, or int8
// input of f32 or f16 data, through tc16; and gives the kinds its first
// pass reads and last pass writes (either pointer may be NULL).
bool
fftd__cuda_conv_fused(
    const fftd__cuda_plan *p, fftd__tc_io *in_io, fftd__tc_io *out_io)
{
	const fftd__shape *s  = &p->shape;
	bool               i8 = s->input == FFTD_INPUT_I8;
	if (!p->conv || p->algo != FFTD__CUDA_ALG_TC16
	    || !(
	        s->precision == FFTD_F32 || (i8 && s->precision == FFTD_F16))) {
		return false;
	}
	if (in_io != NULL) {
		*in_io = i8 ? FFTD__TC_IO_I8 : FFTD__TC_IO_F32;
	}
	if (out_io != NULL) {
		*out_io = s->precision == FFTD_F32 ? FFTD__TC_IO_F32
		                                   : FFTD__TC_IO_NATIVE;
	}
	return true;
}

// fftd__cuda_conv_bufs splits unit u's conversion allocation (plan p):
// input and output in the computing precision, scratch (fused plans: the
// scratch only, *cin and *cout NULL).
void
fftd__cuda_conv_bufs(const fftd__cuda_plan *p, const fftd__cuda_unit *u,
    void **cin, void **cout, void **scratch)
{
	char *b = u->cbuf;
	if (fftd__cuda_conv_fused(p, NULL, NULL)) {
		*cin = *cout = NULL;
		*scratch     = b;
		return;
	}
	*cin     = b;
	*cout    = b + round_up((size_t) p->cshape.in.bytes);
	*scratch = (char *) *cout + round_up((size_t) p->cshape.out.bytes);
}

// SPDX-License-Identifier: MIT
//
// test_tc_daemon.c — the tensor-core algorithms through the daemon: plans
// with algorithm "tc16" (f16) and "split16" (f32), C2C, R2C and C2R, on `fftd
// --backend cuda`, executed by a real client and checked against the FFTW
// long double reference (tests/util/ref.h).
//
//   - info: the hello lists cufft, tc16 and split16, "auto" still picks
//     cufft, and a cufft and a split16 plan of one shape are two cache
//     entries that each compute their own (correct) result;
//   - tc16_* / split16_*: 1D 256, 4096, 65536 and 2D 256x256, 1024x1024,
//     batch > 1, forward and inverse, each normalization, on two daemons
//     (one without the pipeline, where every case runs on the single-stream
//     path, and one with 4 KiB pipeline chunks over 3 streams, where every
//     case runs through the split-batch pipeline, the 256-point ones with
//     several transforms a chunk and a shorter last chunk), each with plain
//     client buffers (inline below 1 MiB, libfftd's staging pool above), a
//     shared fftd_buffer (pinned by the daemon: direct DMA) and the same
//     buffer in place; outputs are poisoned (NaN) first, with poisoned
//     slack after them that must stay untouched, and inputs must come back
//     unchanged;
//   - tc16_3d / split16_3d / tc16_real / split16_real: 3D C2C (the CUDA-core
//     axis kernel's sides and a tensor-core one) and R2C / C2R in 1D, 2D
//     and 3D, the same way (each normalization, both daemons, every buffer
//     mode), bounded by cuFFT's own error on the same input through the
//     same daemon (plan "cufft", plain buffers): tc16 <= cuFFT f16's,
//     split16 <= 2x cuFFT f32's (issue 18's targets);
//   - refused: shapes the kernels do not serve get FFTD_EUNSUPPORTED with
//     the daemon's reason;
//   - daemons_exit_cleanly: no plan left, both daemons exit 0.
// The same algorithms through fftctl and .npy files are test_tc_fftctl.c's.
//
// Without FFTD_TEST_GPU=1 in the environment, or without a usable GPU
// (cudaGetDeviceCount fails or finds none), every test reports SKIPPED,
// never passed.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "fftd.h"
#include "layout.h"
#include "../util/ref.h"

// Bounds on the relative L2 error of a whole batch against the long double
// reference of the same (already rounded) input. They are the kernels' own
// acceptance bounds (tests/gpu/test_tc16.c, TOL_TC16 and TOL_SPLIT16): the
// daemon adds staging copies (exact) and, for by-n and ortho, one scale
// pass (one more rounding of each output, 2^-12 relative rms in f16, 2^-25
// in f32: far below both bounds), so it must meet them too.
//   tc16: binary16 storage (unit roundoff 2^-11 = 4.9e-4) and fp16 operands
//     with fp32 sums on the tensor cores; every radix-16 stage rounds its
//     outputs and twiddles to fp16, and the errors of 2..5 stages (256 ..
//     2^20 points) and the output rounding add up to ~1e-3..2.5e-3 rms;
//     4e-3 leaves room for that and still fails a wrong twiddle, sign or
//     scale (errors of order 1). One wrong element moves the error of the
//     largest batch (2^21 points) by only ~7e-4, under the bound: the
//     poison and slack checks catch elements left unwritten or written
//     out of place, the small sizes one computed wrong.
//   split16: every fp32 operand is split into fp16 hi + lo and the products
//     recombined in fp32, so each stage costs a few fp32 roundings (2^-24 =
//     6e-8): 2e-6 is within a small factor of cuFFT's f32 error and far
//     below what fp16 arithmetic (1e-3) would give, so a split that lost
//     its lo part fails.
#define BOUND_TC16 4e-3
#define BOUND_SPLIT16 2e-6

// Poisoned bytes after every output, which no execution may touch.
#define SLACK 4096

// Client calls wait at most this long.
#define TIMEOUT_MS 60000

// The two daemons: [0] without the split-batch pipeline (every request
// runs on the single-stream path, whatever the default chunk size),
// [1] pipelined.
enum { D_SINGLE = 0, D_PIPE = 1, ND = 2 };

static const char single_conf[] = "[backend]\n"
                                  "pipeline_streams = 0\n";

// Chunks of 4 KiB over 3 streams: every batched case of the table has at
// least two chunks of input, so it is pipelined; 256-point transforms (1 or
// 2 KiB) go several to a chunk with a shorter last chunk (a tc plan of its
// own), the others one to a chunk with the streams reused (nch > 3).
static const char pipe_conf[] = "[backend]\n"
                                "pipeline_streams = 3\n"
                                "pipeline_chunk_bytes = 4K\n";

// Buffer modes of one execution.
enum { M_PLAIN = 0, M_SHM, M_SHM_INPLACE, NM };
static const char *const mode_name[NM] = { "plain", "shm", "shm-inplace" };

// The largest case: split16 1024x1024 x 2, 16 MiB a side.
#define SHM_BYTES ((size_t) 2 * (16u << 20) + SLACK)

static struct {
	const char      *skip_reason;
	fftd_test_daemon d[ND];
	fftd_client     *c[ND];
	fftd_buffer     *shm[ND];
	int              started;
	double           worst[2][ND][NM]; // [tc16, split16][daemon][mode]
} g;

// make_buffers creates each daemon's shared buffer once both daemons run
// and their clients are open.
static int
make_buffers(void)
{
	for (int i = 0; i < ND; i++) {
		int rv = fftd_buffer_create(g.c[i], SHM_BYTES, &g.shm[i]);
		if (rv != FFTD_OK) {
			fprintf(stderr, "fftd_buffer_create: %s (%s)\n",
			    fftd_err_name(rv), fftd_last_error());
			return -1;
		}
	}
	g.started = 1;
	return 0;
}

// destroy_buffers destroys the shared buffers before the clients close.
static void
destroy_buffers(void)
{
	for (int i = 0; i < ND; i++) {
		fftd_buffer_destroy(g.shm[i]);
		g.shm[i] = NULL;
	}
}

// DAEMON_ARGS: both daemons run the cuda backend.
static const char *const DAEMON_ARGS[]
    = { "--backend", "cuda", "--log-level", "debug", NULL };

// FX: the two daemons, a client and a shared buffer on each; nothing
// starts without a GPU.
static fftd_test_fixture FX = {
	.daemon
	= { { &g.d[D_SINGLE], &g.c[D_SINGLE], single_conf, DAEMON_ARGS },
	    { &g.d[D_PIPE], &g.c[D_PIPE], pipe_conf, DAEMON_ARGS } },
	.timeout_ms  = TIMEOUT_MS,
	.after_start = make_buffers,
	.before_stop = destroy_buffers,
};

// --- one execution ---------------------------------------------------------

static bool
all_ff(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != 0xFF) {
			return false;
		}
	}
	return true;
}

// exec_check plans d on daemon di, executes it once in mode m on input (the
// pristine input of shape s) and checks the output against ref (the
// reference of s, norm applied) within bound. Returns 0 or 1 (after saying
// why).
static int
exec_check(int di, int m, const fftd_plan_desc *d, const fftd__shape *s,
    const void *input, const long double *ref, double bound, const char *label)
{
	char       why[512] = "";
	fftd_plan *p        = NULL;
	size_t     inb = (size_t) s->in.bytes, outb = (size_t) s->out.bytes;
	void      *in = NULL, *out = NULL;
	void      *own_in = NULL, *own_out = NULL;
	int        bad = 1;
	int        rv  = fftd_plan_create(g.c[di], d, &p);
	if (rv != FFTD_OK) {
		snprintf(why, sizeof(why), "fftd_plan_create: %s (%s)",
		    fftd_err_name(rv), fftd_last_error());
		p = NULL;
		goto out;
	}
	if (strcmp(fftd_plan_algorithm(p), d->algorithm) != 0) {
		snprintf(why, sizeof(why), "plan algorithm %s, asked for %s",
		    fftd_plan_algorithm(p), d->algorithm);
		goto out;
	}
	if (fftd_plan_input_bytes(p) != inb
	    || fftd_plan_output_bytes(p) != outb) {
		snprintf(why, sizeof(why), "plan bytes %zu/%zu, layout %zu/%zu",
		    fftd_plan_input_bytes(p), fftd_plan_output_bytes(p), inb,
		    outb);
		goto out;
	}
	switch (m) {
	case M_PLAIN:
		own_in  = malloc(inb);
		own_out = malloc(outb + SLACK);
		if (own_in == NULL || own_out == NULL) {
			snprintf(why, sizeof(why), "out of memory");
			goto out;
		}
		in  = own_in;
		out = own_out;
		break;
	case M_SHM:
		in  = fftd_buffer_data(g.shm[di]);
		out = (char *) in + inb;
		break;
	default:
		in = out = fftd_buffer_data(g.shm[di]);
		break;
	}
	assert_true(m == M_PLAIN || inb + outb + SLACK <= SHM_BYTES);
	// In place, the output ends where the longer of input and output
	// ends (C2R reads more bytes than it writes): the slack starts there.
	size_t end = m == M_SHM_INPLACE && inb > outb ? inb : outb;
	fftd_ref_poison(out, end + SLACK);
	memcpy(in, input, inb);
	rv = fftd_execute(p, in, out);
	if (rv != FFTD_OK) {
		snprintf(why, sizeof(why), "fftd_execute: %s (%s)",
		    fftd_err_name(rv), fftd_last_error());
		goto out;
	}
	double err       = fftd_ref_rel_l2(s, out, ref);
	size_t unwritten = fftd_ref_unwritten(s, out);
	int    k         = 0;
	if (!(err <= bound)) { // NaN fails too
		k += snprintf(why + k, sizeof(why) - (size_t) k,
		    "rel L2 error %.3g > bound %.3g; ", err, bound);
	}
	if (unwritten != 0) {
		k += snprintf(why + k, sizeof(why) - (size_t) k,
		    "%zu output elements not written; ", unwritten);
	}
	if (!all_ff((const unsigned char *) out + end, SLACK)) {
		k += snprintf(why + k, sizeof(why) - (size_t) k,
		    "bytes after the output changed; ");
	}
	if (m != M_SHM_INPLACE && memcmp(in, input, inb) != 0) {
		k += snprintf(why + k, sizeof(why) - (size_t) k,
		    "the input was changed; ");
	}
	if (k == 0) {
		int a = strcmp(d->algorithm, "tc16") == 0 ? 0 : 1;
		if (err > g.worst[a][di][m]) {
			g.worst[a][di][m] = err;
		}
		bad = 0;
	}
out:
	if (bad) {
		fprintf(stderr, "FAIL %s [%s, %s]: %s (FFTD_TEST_SEED=%llu)\n",
		    label,
		    di == D_PIPE ? "pipelined daemon" : "single-stream daemon",
		    mode_name[m], why, (unsigned long long) fftd_test_seed());
	}
	fftd_plan_destroy(p);
	free(own_in);
	free(own_out);
	return bad;
}

// --- the size table --------------------------------------------------------

typedef struct tc_shape {
	int       rank;
	int64_t   n[3];
	int64_t   batch;
	fftd_kind kind; // 0: C2C
} tc_shape;

static const tc_shape shapes_1d[] = {
	{ 1, { 256, 0 }, 13 },  // one pass
	{ 1, { 4096, 0 }, 5 },  // one pass, one transform a block
	{ 1, { 65536, 0 }, 4 }, // four-step, with a workspace
};
static const tc_shape shapes_2d[] = {
	{ 2, { 256, 256 }, 3 },
	{ 2, { 1024, 1024 }, 2 },
};
// 3D: sides on the CUDA cores (32 .. 128) and a tensor-core one (256).
static const tc_shape shapes_3d[] = {
	{ 3, { 32, 32, 32 }, 3, FFTD_C2C },
	{ 3, { 64, 32, 128 }, 2, FFTD_C2C },
	{ 3, { 32, 256, 64 }, 1, FFTD_C2C },
};
// Real: 1D (one pass and two), 2D (a CUDA-core row pass), 3D.
static const tc_shape shapes_real[] = {
	{ 1, { 4096 }, 3, FFTD_R2C },
	{ 1, { 65536 }, 2, FFTD_R2C },
	{ 2, { 256, 256 }, 2, FFTD_R2C },
	{ 3, { 32, 32, 64 }, 2, FFTD_R2C },
	{ 1, { 4096 }, 3, FFTD_C2R },
	{ 1, { 65536 }, 2, FFTD_C2R },
	{ 2, { 256, 256 }, 2, FFTD_C2R },
	{ 3, { 32, 32, 64 }, 2, FFTD_C2R },
};

// cufft_error runs d (shape s) through cuFFT on the single-stream daemon,
// plain buffers, and returns its relative L2 error against ref: the bound
// of the tc algorithms' error on the same input (BOUND_BY_CUFFT).
static double
cufft_error(const fftd_plan_desc *d, const fftd__shape *s, const void *input,
    const long double *ref)
{
	fftd_plan_desc dc = *d;
	fftd_plan     *p  = NULL;
	dc.algorithm      = "cufft";
	assert_int_equal(fftd_plan_create(g.c[D_SINGLE], &dc, &p), FFTD_OK);
	void *in  = malloc((size_t) s->in.bytes),
	     *out = malloc((size_t) s->out.bytes);
	assert_true(in != NULL && out != NULL);
	memcpy(in, input, (size_t) s->in.bytes);
	fftd_ref_poison(out, (size_t) s->out.bytes);
	assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	double e = fftd_ref_rel_l2(s, out, ref);
	fftd_plan_destroy(p);
	free(in);
	free(out);
	return e;
}

// BOUND_BY_CUFFT as a bound: measure cuFFT of the same precision on the same
// input, then tc16 must be within 1x and split16 within 2x its error.
#define BOUND_BY_CUFFT (-1.0)

// run_shape runs shape sh with algorithm algo (precision p) forward and
// inverse, with each normalization, on both daemons in every buffer mode.
// Returns the number of failed executions.
static int
run_shape(const char *algo, fftd_precision p, const tc_shape *sh, double bound,
    uint64_t seed_base)
{
	static const fftd_direction dirs[] = { FFTD_FORWARD, FFTD_INVERSE };
	// Each step scales the reference by 1/sqrt(N): none, ortho, by-n.
	static const fftd_norm norms[]
	    = { FFTD_NORM_NONE, FFTD_NORM_ORTHO, FFTD_NORM_BY_N };
	// Indexed by fftd_norm.
	static const char *const norm_name[] = { "none", "by-n", "ortho" };
	int                      failed      = 0;
	static const char *const kind_name[] = { "C2C", "R2C", "C2R" };
	for (int dr = 0; dr < 2; dr++) {
		fftd_plan_desc d;
		fftd__shape    s;
		char           msg[256];
		// R2C is forward only, C2R inverse only
		if ((sh->kind == FFTD_R2C && dr == 1)
		    || (sh->kind == FFTD_C2R && dr == 0)) {
			continue;
		}
		assert_int_equal(
		    fftd_plan_desc_init(&d, sh->rank, sh->n, sh->kind, p),
		    FFTD_OK);
		d.batch     = sh->batch;
		d.direction = dirs[dr];
		d.algorithm = algo;
		assert_int_equal(
		    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)),
		    FFTD_OK);
		void *input = malloc((size_t) s.in.bytes);
		assert_non_null(input);
		fftd_ref_fill_input(
		    input, &s, fftd_test_case_seed(seed_base + (uint64_t) dr));
		long double *ref = fftd_ref_transform(&s, input);
		assert_non_null(ref);
		size_t nref = (size_t) s.out.elems * (s.out.complex ? 2 : 1);
		for (int ni = 0; ni < 3; ni++) {
			if (ni > 0) {
				long double f
				    = 1.0L / sqrtl((long double) s.total);
				for (size_t i = 0; i < nref; i++) {
					ref[i] *= f;
				}
			}
			d.norm = norms[ni];
			fftd__shape sn;
			assert_int_equal(fftd__shape_resolve(
			                     &d, NULL, &sn, msg, sizeof(msg)),
			    FFTD_OK);
			char size[64], label[160];
			int  k = snprintf(
			     size, sizeof(size), "%lld", (long long) sh->n[0]);
			for (int r = 1; r < sh->rank; r++) {
				k += snprintf(size + k,
				    sizeof(size) - (size_t) k, "x%lld",
				    (long long) sh->n[r]);
			}
			double b = bound;
			if (bound == BOUND_BY_CUFFT) {
				double cu = cufft_error(&d, &sn, input, ref);
				b = strcmp(algo, "tc16") == 0 ? cu : 2 * cu;
			}
			snprintf(label, sizeof(label),
			    "%s %s n=%s b=%lld %s %s (bound %.3g)", algo,
			    kind_name[sh->kind], size, (long long) sh->batch,
			    dr == 0 ? "fwd" : "inv", norm_name[norms[ni]], b);
			for (int dm = 0; dm < ND; dm++) {
				for (int m = 0; m < NM; m++) {
					failed += exec_check(dm, m, &d, &sn,
					    input, ref, b, label);
				}
			}
		}
		free(ref);
		free(input);
	}
	return failed;
}

static void
run_table(const char *algo, fftd_precision p, const tc_shape *t, size_t n,
    double bound, uint64_t seed_base)
{
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		failed += run_shape(algo, p, &t[i], bound, seed_base + 10 * i);
	}
	assert_int_equal(failed, 0);
}

static void
test_tc16_1d(void **state)
{
	(void) state;
	run_table("tc16", FFTD_F16, shapes_1d,
	    sizeof(shapes_1d) / sizeof(shapes_1d[0]), BOUND_TC16, 100);
}

static void
test_tc16_2d(void **state)
{
	(void) state;
	run_table("tc16", FFTD_F16, shapes_2d,
	    sizeof(shapes_2d) / sizeof(shapes_2d[0]), BOUND_TC16, 200);
}

static void
test_split16_1d(void **state)
{
	(void) state;
	run_table("split16", FFTD_F32, shapes_1d,
	    sizeof(shapes_1d) / sizeof(shapes_1d[0]), BOUND_SPLIT16, 300);
}

static void
test_split16_2d(void **state)
{
	(void) state;
	run_table("split16", FFTD_F32, shapes_2d,
	    sizeof(shapes_2d) / sizeof(shapes_2d[0]), BOUND_SPLIT16, 400);
}

static void
test_tc16_3d(void **state)
{
	(void) state;
	run_table("tc16", FFTD_F16, shapes_3d,
	    sizeof(shapes_3d) / sizeof(shapes_3d[0]), BOUND_BY_CUFFT, 500);
}

static void
test_split16_3d(void **state)
{
	(void) state;
	run_table("split16", FFTD_F32, shapes_3d,
	    sizeof(shapes_3d) / sizeof(shapes_3d[0]), BOUND_BY_CUFFT, 600);
}

static void
test_tc16_real(void **state)
{
	(void) state;
	run_table("tc16", FFTD_F16, shapes_real,
	    sizeof(shapes_real) / sizeof(shapes_real[0]), BOUND_BY_CUFFT, 700);
}

static void
test_split16_real(void **state)
{
	(void) state;
	run_table("split16", FFTD_F32, shapes_real,
	    sizeof(shapes_real) / sizeof(shapes_real[0]), BOUND_BY_CUFFT, 800);
}

// --- what the daemon offers ------------------------------------------------

static bool
lists(const fftd_info *info, const char *name)
{
	for (int i = 0; i < info->nalgorithms && i < FFTD_MAX_ALGORITHMS; i++) {
		if (strcmp(info->algorithms[i], name) == 0) {
			return true;
		}
	}
	return false;
}

// plan_algo plans d on the default daemon and returns the algorithm the
// daemon chose (a static copy), with the plan in *pp.
static const char *
plan_algo(const fftd_plan_desc *d, fftd_plan **pp)
{
	static char name[32];
	int         rv = fftd_plan_create(g.c[D_SINGLE], d, pp);
	if (rv != FFTD_OK) {
		fprintf(stderr, "fftd_plan_create: %s (%s)\n",
		    fftd_err_name(rv), fftd_last_error());
		*pp = NULL;
		return "";
	}
	snprintf(name, sizeof(name), "%s", fftd_plan_algorithm(*pp));
	return name;
}

static void
test_info(void **state)
{
	(void) state;
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	fftd_info info;
	assert_int_equal(fftd_client_info(g.c[D_SINGLE], &info), FFTD_OK);
	assert_string_equal(info.backend, "cuda");
	assert_true(info.nalgorithms >= 3);
	assert_string_equal(info.algorithms[0], "cufft"); // what auto means
	assert_true(lists(&info, "cufft"));
	assert_true(lists(&info, "tc16"));
	assert_true(lists(&info, "split16"));

	// "auto" (and NULL) keep choosing cuFFT, for f16 and f32 C2C alike.
	fftd_plan_desc d;
	fftd_plan     *p;
	const int64_t  n[1] = { 4096 };
	assert_int_equal(fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F16), 0);
	assert_string_equal(plan_algo(&d, &p), "cufft");
	fftd_plan_destroy(p);
	d.algorithm = "auto";
	d.precision = FFTD_F32;
	assert_string_equal(plan_algo(&d, &p), "cufft");
	fftd_plan_destroy(p);

	// One shape, two algorithms: two cache entries (the key holds the
	// algorithm), and each plan computes with its own algorithm.
	const int64_t n2[1] = { 2048 };
	assert_int_equal(fftd_plan_desc_init(&d, 1, n2, FFTD_C2C, FFTD_F32), 0);
	d.batch = 3;
	fftd_stats st0, st1;
	assert_int_equal(fftd_get_stats(g.c[D_SINGLE], &st0), FFTD_OK);
	fftd_plan *pc, *ps, *pa;
	d.algorithm = "cufft";
	assert_string_equal(plan_algo(&d, &pc), "cufft");
	d.algorithm = "split16";
	assert_string_equal(plan_algo(&d, &ps), "split16");
	d.algorithm = "auto";
	assert_string_equal(plan_algo(&d, &pa), "cufft");
	assert_int_equal(fftd_get_stats(g.c[D_SINGLE], &st1), FFTD_OK);
	assert_int_equal(st1.cache_misses - st0.cache_misses, 2);
	assert_int_equal(st1.cache_hits - st0.cache_hits, 1);
	assert_true(st1.cache_entries >= st0.cache_entries + 2);

	fftd__shape s;
	char        msg[256];
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), 0);
	size_t b     = (size_t) s.in.bytes;
	float *in    = malloc(b);
	float *out_c = malloc(b);
	float *out_s = malloc(b);
	assert_non_null(in);
	assert_non_null(out_c);
	assert_non_null(out_s);
	fftd_ref_fill_input(in, &s, fftd_test_case_seed(7));
	fftd_ref_poison(out_c, b);
	fftd_ref_poison(out_s, b);
	assert_int_equal(fftd_execute(pc, in, out_c), FFTD_OK);
	assert_int_equal(fftd_execute(ps, in, out_s), FFTD_OK);
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	double ec = fftd_ref_rel_l2(&s, out_c, ref);
	double es = fftd_ref_rel_l2(&s, out_s, ref);
	print_message(
	    "f32 n=2048 b=3: cufft rel L2 %.3g, split16 %.3g\n", ec, es);
	assert_true(ec <= fftd_ref_bound(&s));
	assert_true(es <= BOUND_SPLIT16);
	// Different algorithms round differently: identical bits would mean
	// one plan served both.
	assert_true(memcmp(out_c, out_s, b) != 0);
	free(ref);
	free(in);
	free(out_c);
	free(out_s);
	fftd_plan_destroy(pc);
	fftd_plan_destroy(ps);
	fftd_plan_destroy(pa);
}

// --- refusals --------------------------------------------------------------

static void
expect_refused(const fftd_plan_desc *d, const char *what)
{
	fftd_plan *p  = NULL;
	int        rv = fftd_plan_create(g.c[D_SINGLE], d, &p);
	if (rv == FFTD_OK) {
		fftd_plan_destroy(p);
		fail_msg("%s %s: planned, expected FFTD_EUNSUPPORTED",
		    d->algorithm, what);
	}
	const char *m = fftd_last_error();
	print_message(
	    "%-8s %-26s %s: %s\n", d->algorithm, what, fftd_err_name(rv), m);
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	// The daemon's reason names the algorithm and what it serves.
	assert_non_null(strstr(m, d->algorithm));
	assert_non_null(strstr(m, "serves"));
}

static void
refuse(const char *algo, int rank, const int64_t *n, fftd_kind kind,
    fftd_precision p, const char *what)
{
	fftd_plan_desc d;
	assert_int_equal(fftd_plan_desc_init(&d, rank, n, kind, p), FFTD_OK);
	d.algorithm = algo;
	expect_refused(&d, what);
}

static void
test_refused(void **state)
{
	(void) state;
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	const int64_t n100[1] = { 100 }, n128[1] = { 128 };
	const int64_t n28[1] = { (int64_t) 1 << 28 };
	const int64_t n4k[1] = { 4096 }, n256[1] = { 256 };
	const int64_t big3[3] = { 64, 1024, 64 }, small3[3] = { 16, 64, 64 };
	const int64_t short3[3] = { 64, 64, 32 };
	const int64_t big2[2] = { 8192, 256 }, small2[2] = { 128, 256 };
	const int64_t odd2[2] = { 256, 96 }, sq[2] = { 256, 256 };

	refuse("tc16", 1, n100, FFTD_C2C, FFTD_F16, "n=100 (not pow2)");
	refuse("tc16", 1, n128, FFTD_C2C, FFTD_F16, "n=128 (too short)");
	refuse("tc16", 1, n28, FFTD_C2C, FFTD_F16, "n=2^28 (too long)");
	refuse("tc16", 2, big2, FFTD_C2C, FFTD_F16, "8192x256");
	refuse("tc16", 2, small2, FFTD_C2C, FFTD_F16, "128x256");
	refuse("tc16", 2, odd2, FFTD_C2C, FFTD_F16, "256x96 (not pow2)");
	refuse("tc16", 1, n256, FFTD_R2C, FFTD_F16, "r2c n=256 (too short)");
	refuse("tc16", 1, n256, FFTD_C2R, FFTD_F16, "c2r n=256 (too short)");
	refuse("tc16", 1, n4k, FFTD_C2C, FFTD_F32, "f32");
	refuse("tc16", 1, n4k, FFTD_C2C, FFTD_F64, "f64");
	refuse("tc16", 3, big3, FFTD_C2C, FFTD_F16, "64x1024x64");
	refuse("tc16", 3, small3, FFTD_C2C, FFTD_F16, "16x64x64");
	refuse("tc16", 3, short3, FFTD_R2C, FFTD_F16, "r2c 64x64x32");
	refuse("split16", 1, n4k, FFTD_C2C, FFTD_F16, "f16");
	refuse("split16", 1, n4k, FFTD_C2C, FFTD_F64, "f64");
	refuse("split16", 1, n100, FFTD_C2C, FFTD_F32, "n=100 (not pow2)");
	refuse("split16", 1, n256, FFTD_R2C, FFTD_F32, "r2c n=256 (too short)");
	refuse("split16", 3, big3, FFTD_C2C, FFTD_F32, "64x1024x64");
	refuse("split16", 3, short3, FFTD_C2R, FFTD_F32, "c2r 64x64x32");

	// Layouts the kernels do not read: strided, embedded, spaced out.
	fftd_plan_desc d;
	assert_int_equal(
	    fftd_plan_desc_init(&d, 1, n4k, FFTD_C2C, FFTD_F16), 0);
	d.algorithm = "tc16";
	d.istride   = 2;
	expect_refused(&d, "istride 2");
	d.istride = 0;
	d.ostride = 2;
	expect_refused(&d, "ostride 2");
	d.ostride = 0;
	d.batch   = 2;
	d.idist   = 4096 + 64;
	expect_refused(&d, "idist n+64");
	d.idist = 0;
	d.odist = 4096 + 64;
	expect_refused(&d, "odist n+64");
	assert_int_equal(fftd_plan_desc_init(&d, 2, sq, FFTD_C2C, FFTD_F32), 0);
	d.algorithm  = "split16";
	d.inembed[0] = 256;
	d.inembed[1] = 512;
	expect_refused(&d, "inembed 256x512");
	d.inembed[0] = d.inembed[1] = 0;
	d.onembed[0]                = 256;
	d.onembed[1]                = 300;
	expect_refused(&d, "onembed 256x300");

	// The last description with no algorithm goes to cuFFT, which takes
	// it: the refusal is the tc kernels', not the shape's.
	d.algorithm = NULL;
	fftd_plan *p;
	assert_string_equal(plan_algo(&d, &p), "cufft");
	fftd_plan_destroy(p);

	// An unknown name is refused by the server, naming what is served.
	d.algorithm   = "tc32";
	fftd_plan *q  = NULL;
	int        rv = fftd_plan_create(g.c[D_SINGLE], &d, &q);
	assert_int_equal(rv, FFTD_EUNSUPPORTED);
	assert_non_null(strstr(fftd_last_error(), "tc16"));
	assert_int_equal(fftd_ping(g.c[D_SINGLE], NULL), FFTD_OK);
}

// --- the end ---------------------------------------------------------------

static void
test_daemons_exit_cleanly(void **state)
{
	(void) state;
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	static const char *const a[2] = { "tc16", "split16" };
	for (int k = 0; k < 2; k++) {
		for (int di = 0; di < ND; di++) {
			print_message(
			    "%-8s worst rel L2 on the %s daemon: plain "
			    "%.3g, shm %.3g, shm in place %.3g\n",
			    a[k], di == D_PIPE ? "pipelined" : "single-stream",
			    g.worst[k][di][M_PLAIN], g.worst[k][di][M_SHM],
			    g.worst[k][di][M_SHM_INPLACE]);
		}
	}
	for (int i = 0; i < ND; i++) {
		fftd_stats st;
		assert_int_equal(fftd_get_stats(g.c[i], &st), FFTD_OK);
		assert_int_equal(st.plans, 0); // every test destroyed its plans
		fftd_buffer_destroy(g.shm[i]);
		g.shm[i] = NULL;
		fftd_client_close(g.c[i]);
		g.c[i] = NULL;
		assert_int_equal(fftd_test_daemon_stop(&g.d[i]), 0);
	}
}

int
main(void)
{
	g.skip_reason                   = fftd_test_gpu_start(&FX);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_tc16_1d),
		cmocka_unit_test(test_tc16_2d),
		cmocka_unit_test(test_split16_1d),
		cmocka_unit_test(test_split16_2d),
		cmocka_unit_test(test_tc16_3d),
		cmocka_unit_test(test_split16_3d),
		cmocka_unit_test(test_tc16_real),
		cmocka_unit_test(test_split16_real),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_daemons_exit_cleanly),
	};
	return fftd_test_run_group("tc_daemon", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_tc_fftctl.c — the tensor-core algorithms through fftctl: `fftctl fft
// --algorithm tc16` (and split16) on .npy files written and read with
// fftctl's own npy module against `fftd --backend cuda` (single-stream
// path), forward against the FFTW long double reference (tests/util/ref.h)
// and back again with --inverse --norm by-n; a 3D transform (--rank 3) and
// real ones (--kind r2c, --kind c2r) forward against the reference;
// fftctl passes the daemon's refusal on; then no plan is left and the
// daemon exits 0. The same
// algorithms through libfftd are test_tc_daemon.c's.
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

// fftctl's .npy reader and writer (fftctl/npy.c; the Makefile links it in).
#include "npy.h"

// The kernels' own acceptance bounds (tests/gpu/test_tc16.c, TOL_TC16 and
// TOL_SPLIT16), which the daemon must meet too: test_tc_daemon.c says why.
#define BOUND_TC16 4e-3
#define BOUND_SPLIT16 2e-6

// Client calls (and fftctl's) wait at most this long.
#define TIMEOUT_MS 60000

// The daemon: without the split-batch pipeline (every request on the
// single-stream path), as test_tc_daemon.c's first daemon.
enum { D_SINGLE = 0 };

static const char single_conf[] = "[backend]\n"
                                  "pipeline_streams = 0\n";

static struct {
	const char      *skip_reason;
	fftd_test_daemon d[1];
	fftd_client     *c[1];
	int              started;
} g;

// mark_started notes that the daemon runs and its client is open.
static int
mark_started(void)
{
	g.started = 1;
	return 0;
}

// DAEMON_ARGS: the daemon runs the cuda backend.
static const char *const DAEMON_ARGS[]
    = { "--backend", "cuda", "--log-level", "debug", NULL };

// FX: the daemon and a client on it; nothing starts without a GPU.
static fftd_test_fixture FX = {
	.daemon
	= { { &g.d[D_SINGLE], &g.c[D_SINGLE], single_conf, DAEMON_ARGS } },
	.timeout_ms  = TIMEOUT_MS,
	.after_start = mark_started,
};

// --- fftctl ----------------------------------------------------------------

// run_fftctl runs `fftctl --url URL --timeout MS ARGS...` (args
// NULL-terminated) against the default daemon with stdout and stderr in
// log, and returns its exit status (-1 if it could not run or hung).
static int
run_fftctl(const char *log, const char *const *args)
{
	const char *bin = fftd_test_fftctl_bin();
	char        tmo[16];
	const char *argv[24];
	int         argc = 0;
	snprintf(tmo, sizeof(tmo), "%d", TIMEOUT_MS);
	argv[argc++] = bin;
	argv[argc++] = "--url";
	argv[argc++] = g.d[D_SINGLE].url;
	argv[argc++] = "--timeout";
	argv[argc++] = tmo;
	for (int i = 0; args[i] != NULL && argc < 23; i++) {
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;

	posix_spawn_file_actions_t fa;
	pid_t                      pid = -1;
	int                        rc  = posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		rc = posix_spawn_file_actions_addopen(
		    &fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	if (rc == 0) {
		rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	if (rc == 0) {
		fflush(stdout);
		fflush(stderr);
		rc = posix_spawn(
		    &pid, bin, &fa, NULL, (char *const *) argv, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "posix_spawn %s: %s\n", bin, strerror(rc));
		return -1;
	}
	int code = -1;
	fftd_test_wait_pids(&pid, 1, 2 * TIMEOUT_MS, &code);
	return code;
}

// log_has says whether file path contains text (NULL: print the file and
// say no), printing the file when it does not.
static bool
log_has(const char *path, const char *text)
{
	char  buf[8192];
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open\n", path);
		return false;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (text != NULL && strstr(buf, text) != NULL) {
		return true;
	}
	fprintf(stderr, "%s%s%s; it holds:\n%s\n", path,
	    text != NULL ? " lacks " : "", text != NULL ? text : "", buf);
	return false;
}

// npy_ok says whether an npy call returned FFTD__NPY_OK, printing its
// message when not.
static bool
npy_ok(int rc, const char *msg)
{
	if (rc != FFTD__NPY_OK) {
		fprintf(stderr, "npy: %s (%s)\n", fftd__npy_strerror(rc), msg);
	}
	return rc == FFTD__NPY_OK;
}

// fftctl_ok runs fftctl with args, which must exit 0 (its log printed
// when not); with algo (args with -v), the log must name algo as the
// daemon's choice.
static void
fftctl_ok(const char *log, const char *const *args, const char *algo)
{
	int rc = run_fftctl(log, args);
	if (rc != 0) {
		(void) log_has(log, NULL);
	}
	assert_int_equal(rc, 0);
	if (algo != NULL) {
		char by[32];
		snprintf(by, sizeof(by), "by %s", algo);
		assert_true(log_has(log, by));
	}
}

// npy_load_checked loads path into y, which must hold dtype dt, the nd
// axes of shape and bytes bytes.
static void
npy_load_checked(const char *path, fftd__npy *y, fftd__npy_dtype dt, int nd,
    const int64_t *shape, size_t bytes)
{
	char msg[256];
	assert_true(npy_ok(fftd__npy_load(path, y, msg, sizeof(msg)), msg));
	assert_int_equal(y->dtype, dt);
	assert_int_equal(y->ndim, nd);
	for (int k = 0; k < nd; k++) {
		assert_int_equal(y->shape[k], shape[k]);
	}
	assert_int_equal(y->nbytes, bytes);
}

// fftctl_round_trip writes a batch of 3 complex transforms of 4096 points
// in the .npy dtype of algo's precision, runs `fftctl fft --algorithm
// algo` on it, checks OUT against the reference, runs the inverse with
// --norm by-n on OUT and checks that it gives the input back.
static void
fftctl_round_trip(
    const char *dir, const char *algo, fftd_precision p, double bound)
{
	const int64_t  n[1] = { 4096 };
	fftd_plan_desc d;
	fftd__shape    s;
	char           msg[256];
	assert_int_equal(fftd_plan_desc_init(&d, 1, n, FFTD_C2C, p), 0);
	d.batch = 3;
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), 0);
	void *x = malloc((size_t) s.in.bytes);
	assert_non_null(x);
	fftd_ref_fill_input(
	    x, &s, fftd_test_case_seed(p == FFTD_F16 ? 11 : 12));

	// numpy has no complex half: fftctl's complex f16 is <f2 with a
	// trailing axis of 2 (re, im); f32 complex is <c8.
	int64_t         shape[3] = { 3, 4096, 2 };
	int             nd       = p == FFTD_F16 ? 3 : 2;
	fftd__npy_dtype dt       = p == FFTD_F16 ? FFTD__NPY_F2 : FFTD__NPY_C8;
	char            in_path[400], out_path[400], back_path[400], log[400];
	snprintf(in_path, sizeof(in_path), "%s/%s-in.npy", dir, algo);
	snprintf(out_path, sizeof(out_path), "%s/%s-out.npy", dir, algo);
	snprintf(back_path, sizeof(back_path), "%s/%s-back.npy", dir, algo);
	snprintf(log, sizeof(log), "%s/%s.log", dir, algo);
	assert_true(npy_ok(
	    fftd__npy_save(in_path, dt, nd, shape, x, msg, sizeof(msg)), msg));

	const char *fwd[]
	    = { "fft", "--algorithm", algo, "-v", in_path, out_path, NULL };
	fftctl_ok(log, fwd, algo); // -v names the daemon's choice

	fftd__npy y;
	npy_load_checked(out_path, &y, dt, nd, shape, (size_t) s.out.bytes);
	long double *ref = fftd_ref_transform(&s, x);
	assert_non_null(ref);
	double e_fwd = fftd_ref_rel_l2(&s, y.data, ref);
	free(ref);

	const char *inv[] = { "fft", "--algorithm", algo, "--inverse", "--norm",
		"by-n", out_path, back_path, NULL };
	fftctl_ok(log, inv, NULL);
	fftd__npy z;
	assert_true(
	    npy_ok(fftd__npy_load(back_path, &z, msg, sizeof(msg)), msg));
	assert_int_equal(z.nbytes, (size_t) s.in.bytes);
	// The input itself is the reference of the round trip. Each leg is
	// within bound (relative), and the inverse DFT scaled by 1/N maps the
	// first leg's error to the same relative error, so the round trip is
	// within twice the bound.
	size_t       nr = (size_t) s.in.elems * 2;
	long double *xr = malloc(nr * sizeof(long double));
	assert_non_null(xr);
	for (size_t i = 0; i < nr; i++) {
		xr[i] = p == FFTD_F16 ? (long double) fftd_ref_f16_to_f32(
		            ((const uint16_t *) x)[i])
		                      : (long double) ((const float *) x)[i];
	}
	d.direction = FFTD_INVERSE;
	d.norm      = FFTD_NORM_BY_N;
	fftd__shape si;
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &si, msg, sizeof(msg)), 0);
	double e_back = fftd_ref_rel_l2(&si, z.data, xr);
	print_message(
	    "fftctl --algorithm %s: forward rel L2 %.3g (bound %.3g), "
	    "round trip %.3g (bound %.3g)\n",
	    algo, e_fwd, bound, e_back, 2 * bound);
	assert_true(e_fwd <= bound);
	assert_true(e_back <= 2 * bound);
	free(xr);
	fftd__npy_free(&y);
	fftd__npy_free(&z);
	free(x);
	unlink(in_path);
	unlink(out_path);
	unlink(back_path);
	unlink(log);
}

// fftctl_once writes a batch of `batch` transforms of kind and shape n
// (rank axes) in the .npy dtype of algo's precision, runs `fftctl fft
// --algorithm algo --rank R --kind K` on it and checks OUT's shape, size and
// values (against the reference, within bound).
static void
fftctl_once(const char *dir, const char *algo, fftd_precision p, fftd_kind kind,
    int rank, const int64_t *n, int64_t batch, double bound)
{
	static const char *const kinds[] = { "c2c", "r2c", "c2r" };
	fftd_plan_desc           d;
	fftd__shape              s;
	char                     msg[256];
	assert_int_equal(fftd_plan_desc_init(&d, rank, n, kind, p), 0);
	d.batch = batch;
	assert_int_equal(
	    fftd__shape_resolve(&d, NULL, &s, msg, sizeof(msg)), 0);
	void *x = malloc((size_t) s.in.bytes);
	assert_non_null(x);
	fftd_ref_fill_input(x, &s, fftd_test_case_seed(20 + (uint64_t) kind));

	// shapes: the batch (an axis only when > 1: .npy holds 4 axes at
	// most), the side's sizes, and (complex f16) a trailing 2
	int64_t in_shape[5] = { batch }, out_shape[5] = { batch };
	int     lead = batch > 1, in_nd = lead + rank, out_nd = lead + rank;
	for (int k = 0; k < rank; k++) {
		in_shape[lead + k]  = s.in.n[k];
		out_shape[lead + k] = s.out.n[k];
	}
	if (p == FFTD_F16 && s.in.complex) {
		in_shape[in_nd++] = 2;
	}
	if (p == FFTD_F16 && s.out.complex) {
		out_shape[out_nd++] = 2;
	}
	fftd__npy_dtype in_dt  = p == FFTD_F16 ? FFTD__NPY_F2
	     : s.in.complex                    ? FFTD__NPY_C8
	                                       : FFTD__NPY_F4;
	fftd__npy_dtype out_dt = p == FFTD_F16 ? FFTD__NPY_F2
	    : s.out.complex                    ? FFTD__NPY_C8
	                                       : FFTD__NPY_F4;
	char            in_path[400], out_path[400], log[400], rk[8], nl[24];
	snprintf(in_path, sizeof(in_path), "%s/%s-%s-in.npy", dir, algo,
	    kinds[kind]);
	snprintf(out_path, sizeof(out_path), "%s/%s-%s-out.npy", dir, algo,
	    kinds[kind]);
	snprintf(log, sizeof(log), "%s/%s-%s.log", dir, algo, kinds[kind]);
	snprintf(rk, sizeof(rk), "%d", rank);
	snprintf(nl, sizeof(nl), "%lld", (long long) n[rank - 1]);
	assert_true(npy_ok(fftd__npy_save(in_path, in_dt, in_nd, in_shape, x,
	                       msg, sizeof(msg)),
	    msg));
	const char *args[] = { "fft", "--algorithm", algo, "-v", "--rank", rk,
		"--kind", kinds[kind], "--n", nl, in_path, out_path, NULL };
	if (kind != FFTD_C2R) {
		args[8]  = in_path; // no --n
		args[9]  = out_path;
		args[10] = NULL;
	}
	fftctl_ok(log, args, algo);
	fftd__npy y;
	npy_load_checked(
	    out_path, &y, out_dt, out_nd, out_shape, (size_t) s.out.bytes);
	long double *ref = fftd_ref_transform(&s, x);
	assert_non_null(ref);
	double e = fftd_ref_rel_l2(&s, y.data, ref);
	print_message("fftctl --algorithm %s --kind %s --rank %d: rel L2 %.3g "
	              "(bound %.3g)\n",
	    algo, kinds[kind], rank, e, bound);
	assert_true(e <= bound);
	free(ref);
	fftd__npy_free(&y);
	free(x);
	unlink(in_path);
	unlink(out_path);
	unlink(log);
}

static void
test_fftctl(void **state)
{
	(void) state;
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	const char *tmp = getenv("TMPDIR");
	char        dir[256];
	snprintf(dir, sizeof(dir), "%s/fftd-tc-XXXXXX",
	    tmp != NULL && tmp[0] != '\0' && strlen(tmp) < 128 ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	fftctl_round_trip(dir, "tc16", FFTD_F16, BOUND_TC16);
	fftctl_round_trip(dir, "split16", FFTD_F32, BOUND_SPLIT16);
	const int64_t n3[3] = { 32, 32, 64 }, n1[1] = { 4096 };
	fftctl_once(dir, "tc16", FFTD_F16, FFTD_C2C, 3, n3, 1, BOUND_TC16);
	fftctl_once(dir, "tc16", FFTD_F16, FFTD_R2C, 1, n1, 3, BOUND_TC16);
	fftctl_once(dir, "tc16", FFTD_F16, FFTD_C2R, 3, n3, 1, BOUND_TC16);
	fftctl_once(
	    dir, "split16", FFTD_F32, FFTD_R2C, 3, n3, 2, BOUND_SPLIT16);

	// fftctl passes the daemon's refusal on: tc16 of complex64 data.
	char    path[400], log[400], msg[256];
	int64_t shape[1] = { 4096 };
	float  *z        = calloc(2 * 4096, sizeof(float));
	assert_non_null(z);
	snprintf(path, sizeof(path), "%s/c8.npy", dir);
	snprintf(log, sizeof(log), "%s/refused.log", dir);
	assert_true(npy_ok(
	    fftd__npy_save(path, FFTD__NPY_C8, 1, shape, z, msg, sizeof(msg)),
	    msg));
	free(z);
	char out[400];
	snprintf(out, sizeof(out), "%s/never.npy", dir);
	const char *args[] = { "fft", "--algorithm", "tc16", path, out, NULL };
	assert_int_equal(run_fftctl(log, args), 1);
	assert_true(log_has(log, "tc16 serves f16"));
	assert_int_equal(access(out, F_OK), -1);
	unlink(path);
	unlink(log);
	if (rmdir(dir) != 0) {
		fail_msg("rmdir %s: %s", dir, strerror(errno));
	}
}

// --- the end ---------------------------------------------------------------

// No plan is left (fftctl's went with its session) and the daemon exits 0.
static void
test_daemon_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_gpu_skip_test(g.skip_reason);
	assert_true(g.started);
	fftd_stats st;
	assert_int_equal(fftd_get_stats(g.c[D_SINGLE], &st), FFTD_OK);
	assert_int_equal(st.plans, 0);
	fftd_client_close(g.c[D_SINGLE]);
	g.c[D_SINGLE] = NULL;
	assert_int_equal(fftd_test_daemon_stop(&g.d[D_SINGLE]), 0);
}

int
main(void)
{
	g.skip_reason                   = fftd_test_gpu_start(&FX);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fftctl),
		cmocka_unit_test(test_daemon_exits_cleanly),
	};
	return fftd_test_run_group("tc_fftctl", tests, &FX);
}

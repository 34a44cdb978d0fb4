// SPDX-License-Identifier: MIT
//
// e2e.c — end-to-end benchmark of fftd against what a user could write
// in-process, all in one run on the same GPU (issue 3).
//
//   e2e [--url URL | --spawn FFTD_BIN] [--json FILE] [--quick]
//       [--cases LIST] [--reps N] [--config FILE] [--verbose]
//
// For each case (f32 C2C N=4096, f32 C2C N=2^20, f32 R2C N=16384, f16 C2C
// N=4096; batch making >= 512 MiB of input, 64 MiB with --quick):
//   (a) pinned cudaMemcpyAsync H2D and D2H at once on two streams: the
//       duplex PCIe bound, in input bytes/s for this case's in/out sizes;
//   (b) in-process cuFFT, one stream: H2D + FFT + D2H of the whole batch;
//   (c) in-process cuFFT, 16 streams: the batch in 16 chunks, one plan and
//       one stream per chunk;
//   (d) fftd shared-memory path: input and output in fftd_buffer's;
//   (e) fftd inline path: fftd_execute on malloc'd memory, beside the
//       host's single-thread memcpy rate for the same size;
//   (f) fftd streaming session, depth 4, one plan of ~64 MiB per submit
//       (slots filled in place: the producer's own writes are not timed;
//       "f-copy" also times copying each chunk in and out of the slots);
//   4 client processes at once, each (d) (and, for comparison, (e)) on its
//   own quarter of the batch in its own buffers: aggregate throughput;
// and once: small-request round trips (N=1024 f32 C2C batch 1, 2000 after
// warm-up, p50/p99 in µs) over the connection.
// (a)-(c) are timed with CUDA events, (d)-(f) with CLOCK_MONOTONIC; every
// figure is the median of --reps repetitions after warm-up, in GB/s (1e9
// bytes/s) of input bytes. (d), (e) and (f) are checked bit for bit against
// each other and against a double-precision DFT of a few transforms.
//
// --cases LIST (comma-separated) picks among c2c4096, c2c1m, r2c16384,
// f16c2c4096, latency and clients (the 4-client runs of the chosen cases);
// default: all. Without a GPU (cudaGetDeviceCount fails) (a)-(c) are
// skipped and the --quick sizes are used.

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef FFTD_WITH_CUDA
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#endif

#include "json.h"
#include "fftd.h"
#include "lib/daemon.h"

#define MIB (1024.0 * 1024.0)
#define MAX_REPS 64
#define NCLIENTS 4
#define STREAM_DEPTH 4
#define INPROC_STREAMS 16
#define LAT_WARMUP 200
#define LAT_ROUNDS 2000

// --- small helpers ---------------------------------------------------------

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

static double
median(const double *v, int n)
{
	double s[MAX_REPS * 4];
	if (n <= 0) {
		return NAN;
	}
	memcpy(s, v, sizeof(double) * (size_t) n);
	qsort(s, (size_t) n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n == 0 ? 1 : n);
	if (p == NULL) {
		fprintf(stderr, "e2e: out of memory (%zu bytes)\n", n);
		exit(2);
	}
	return p;
}

// Pages of a fresh allocation are faulted in before anything is timed.
static void *
xmalloc_touched(size_t n)
{
	void *p = xmalloc(n);
	memset(p, 0, n);
	return p;
}

// splitmix64, a fast PRNG with good statistics, for non-zero random input.
static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// uniform in [-1, 1), never exactly 0
static float
unif(uint64_t *s)
{
	uint32_t r = (uint32_t) (splitmix(s) >> 40); // 24 bits
	float    f = ((float) r + 0.5f) * (2.0f / 16777216.0f) - 1.0f;
	return f;
}

// IEEE binary16 <-> float (round to nearest even; normal/subnormal/inf/nan).
static uint16_t
f2h(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t mant = x & 0x7fffffu;
	int      exp  = (int) ((x >> 23) & 0xff);
	if (exp == 0xff) {
		return (uint16_t) (sign | 0x7c00u | (mant ? 0x200u : 0));
	}
	int e = exp - 127 + 15;
	if (e >= 31) {
		return (uint16_t) (sign | 0x7c00u);
	}
	if (e <= 0) {
		if (e < -10) {
			return (uint16_t) sign;
		}
		mant |= 0x800000u;
		int      shift = 14 - e;
		uint32_t h     = mant >> shift;
		uint32_t rem   = mant & ((1u << shift) - 1);
		uint32_t half  = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1))) {
			h++;
		}
		return (uint16_t) (sign | h);
	}
	uint32_t h   = ((uint32_t) e << 10) | (mant >> 13);
	uint32_t rem = mant & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) {
		h++;
	}
	return (uint16_t) (sign | h);
}

static double
h2d(uint16_t h)
{
	int    e = (h >> 10) & 0x1f;
	int    m = h & 0x3ff;
	double v;
	if (e == 0) {
		v = ldexp((double) m, -24);
	} else if (e == 31) {
		v = m ? NAN : INFINITY;
	} else {
		v = ldexp((double) (m | 0x400), e - 25);
	}
	return (h & 0x8000) ? -v : v;
}

// --- cases -------------------------------------------------------------------

typedef struct bcase {
	const char    *name;  // --cases name
	const char    *label; // table label
	fftd_kind      kind;
	fftd_precision prec;
	int64_t        n;
} bcase;

static const bcase CASES[] = {
	{ "c2c4096", "f32 C2C N=4096", FFTD_C2C, FFTD_F32, 4096 },
	{ "c2c1m", "f32 C2C N=2^20", FFTD_C2C, FFTD_F32, 1 << 20 },
	{ "r2c16384", "f32 R2C N=16384", FFTD_R2C, FFTD_F32, 16384 },
	{ "f16c2c4096", "f16 C2C N=4096", FFTD_C2C, FFTD_F16, 4096 },
};
#define NCASES ((int) (sizeof(CASES) / sizeof(CASES[0])))

static size_t
real_bytes(fftd_precision p)
{
	return p == FFTD_F64 ? 8 : p == FFTD_F32 ? 4 : 2;
}

// Per-transform input and output bytes of a 1-D contiguous case.
static size_t
case_in_per(const bcase *c)
{
	size_t r = real_bytes(c->prec);
	return c->kind == FFTD_R2C ? r * (size_t) c->n : 2 * r * (size_t) c->n;
}

static size_t
case_out_per(const bcase *c)
{
	size_t r = real_bytes(c->prec);
	return c->kind == FFTD_R2C ? 2 * r * (size_t) (c->n / 2 + 1)
	                           : 2 * r * (size_t) c->n;
}

// batch making at least `target` bytes of input
static int64_t
batch_for(const bcase *c, size_t target)
{
	size_t per = case_in_per(c);
	return (int64_t) ((target + per - 1) / per);
}

static void
fill_input(const bcase *c, void *p, int64_t batch, uint64_t seed)
{
	size_t   nreal = case_in_per(c) / real_bytes(c->prec) * (size_t) batch;
	uint64_t s     = seed * 0x2545f4914f6cdd1dull + 12345;
	if (c->prec == FFTD_F16) {
		uint16_t *h = p;
		for (size_t i = 0; i < nreal; i++) {
			uint16_t v;
			do {
				v = f2h(unif(&s));
			} while ((v & 0x7fff) == 0);
			h[i] = v;
		}
	} else {
		float *f = p;
		for (size_t i = 0; i < nreal; i++) {
			f[i] = unif(&s);
		}
	}
}

static void
desc_for(const bcase *c, int64_t batch, fftd_plan_desc *d)
{
	fftd_plan_desc_init(d, 1, &c->n, c->kind, c->prec);
	d->batch = batch;
}

// --- results
// -------------------------------------------------------------------

typedef struct meas {
	int  state; // 0 not run, 1 measured, -1 skipped/unavailable, -2 failed
	char why[200];
	int  nrep;
	double s[MAX_REPS]; // seconds per repetition
	double med;         // median seconds
	double gbps;        // input bytes / median, 1e9 B/s
} meas;

typedef struct case_result {
	const bcase *c;
	int          selected;
	int64_t      batch;
	size_t       in_bytes, out_bytes;
	int64_t      chunk_batch; // per submit of (f)
	int          nsub;
	char         algorithm[32];
	char         plan_why[200]; // why the daemon has no plan for this case
	char         stream_algorithm[32];
	meas a, a_h2d, a_d2h, b, c16, d, e, memcpy_, f, f_copy, f_sustained;
	meas cl_shm, cl_inline;
	int  c16_streams;
	// checks: -1 not done, 0 differs, 1 identical / ok
	int    de_same, f_sameplan, f_vs_d, outputs_finite;
	char   check_note[256];
	double ref_err;  // vs double-precision DFT (NAN: not done)
	int    ref_bins; // bins compared per transform
	double b_err;    // fftd output vs in-process cuFFT (b)
} case_result;

static void meas_set(meas *m, int state, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
meas_set(meas *m, int state, const char *fmt, ...)
{
	m->state = state;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

static void
meas_finish(meas *m, size_t bytes)
{
	m->state = 1;
	m->med   = median(m->s, m->nrep);
	m->gbps  = (double) bytes / m->med / 1e9;
}

static void
meas_print(const char *what, const meas *m)
{
	if (m->state == 1) {
		printf("  %-34s %8.2f GB/s  (median %.3f ms of %d)\n", what,
		    m->gbps, m->med * 1e3, m->nrep);
	} else if (m->state != 0) {
		printf("  %-34s %s\n", what, m->why);
	}
	fflush(stdout);
}

typedef struct lat_result {
	int    state;
	char   why[200];
	int    n;
	double p50, p99, min, max, mean;
} lat_result;

typedef struct bench {
	const char  *url;
	int          quick, reps, gpu;
	char         gpu_name[128];
	char         no_gpu_why[160];
	fftd_client *client;
	fftd_info    info;
	case_result  cr[NCASES];
	int          want_latency, want_clients;
	lat_result   lat_inline, lat_shm, lat_ping;
	int          shm_ok; // fftd_buffer_create works
	char         shm_why[200];
} bench;

static const char *
ferr(int rv)
{
	static _Thread_local char b[400];
	const char               *d = fftd_last_error();
	snprintf(b, sizeof(b), "%s%s%s", fftd_err_name(rv),
	    d != NULL && d[0] ? ": " : "", d != NULL ? d : "");
	return b;
}

// --- (a)-(c): in-process CUDA baselines
// ----------------------------------------

#ifdef FFTD_WITH_CUDA

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			snprintf(err, sizeof(err), "%s: %s", #call,            \
			    cudaGetErrorString(e_));                           \
			goto fail;                                             \
		}                                                              \
	} while (0)

#define CKF(call)                                                              \
	do {                                                                   \
		cufftResult r_ = (call);                                       \
		if (r_ != CUFFT_SUCCESS) {                                     \
			snprintf(err, sizeof(err), "%s: cufftResult %d",       \
			    #call, (int) r_);                                  \
			goto fail;                                             \
		}                                                              \
	} while (0)

static int
gpu_detect(bench *B)
{
	int         n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		snprintf(B->no_gpu_why, sizeof(B->no_gpu_why), "no GPU: %s",
		    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		(void) cudaGetLastError();
		return 0;
	}
	struct cudaDeviceProp p;
	if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
		snprintf(B->gpu_name, sizeof(B->gpu_name), "%.120s", p.name);
	}
	return cudaSetDevice(0) == cudaSuccess && cudaFree(0) == cudaSuccess;
}

static int
make_cufft_plan(const bcase *c, int64_t batch, cufftHandle *h)
{
	long long    n = c->n;
	size_t       ws;
	cudaDataType it, ot, et;
	if (c->prec == FFTD_F16) {
		it = ot = et = CUDA_C_16F;
	} else if (c->kind == FFTD_R2C) {
		it = CUDA_R_32F;
		ot = et = CUDA_C_32F;
	} else {
		it = ot = et = CUDA_C_32F;
	}
	cufftResult r = cufftCreate(h);
	if (r != CUFFT_SUCCESS) {
		return (int) r;
	}
	r = cufftXtMakePlanMany(*h, 1, &n, NULL, 1, 0, it, NULL, 1, 0, ot,
	    (long long) batch, &ws, et);
	if (r != CUFFT_SUCCESS) {
		cufftDestroy(*h);
		return (int) r;
	}
	return 0;
}

// run_inproc measures (a), (b), (c) for one case with the input src; the
// output of (b) is left in out_b (host, may be NULL).
static void
run_inproc(bench *B, case_result *R, const void *src, void *out_b)
{
	const bcase *c   = R->c;
	size_t       inb = R->in_bytes, outb = R->out_bytes;
	char         err[300];
	void        *hin = NULL, *hout = NULL, *din = NULL, *dout = NULL;
	cudaStream_t s[INPROC_STREAMS + 1]  = { 0 };
	cudaEvent_t  ev[INPROC_STREAMS + 2] = { 0 };
	cufftHandle  plan[INPROC_STREAMS];
	int          nplans = 0;
	int          nwarm  = 2;
	meas        *cur    = &R->a;

	CK(cudaHostAlloc(&hin, inb, cudaHostAllocDefault));
	CK(cudaHostAlloc(&hout, outb, cudaHostAllocDefault));
	CK(cudaMalloc(&din, inb));
	CK(cudaMalloc(&dout, outb));
	memcpy(hin, src, inb);
	memset(hout, 0, outb);
	for (int i = 0; i <= INPROC_STREAMS; i++) {
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	}
	for (int i = 0; i < INPROC_STREAMS + 2; i++) {
		CK(cudaEventCreate(&ev[i]));
	}
	cudaEvent_t  e0 = ev[INPROC_STREAMS], e1 = ev[INPROC_STREAMS + 1];
	cudaStream_t sm = s[INPROC_STREAMS]; // timing stream

	// (a) duplex: H2D on s[0], D2H on s[1], both from/to pinned memory;
	// also each direction alone.
	for (int which = 0; which < 3; which++) {
		meas *m = which == 0 ? &R->a
		    : which == 1     ? &R->a_h2d
		                     : &R->a_d2h;
		cur     = m;
		// more warm-up for the first copies from a fresh pinned
		// allocation (the first case's duplex figure was 45 GB/s
		// against 50 for the others on the H200 with 2)
		for (int r = -(which == 0 ? 5 : nwarm); r < B->reps; r++) {
			CK(cudaEventRecord(e0, sm));
			CK(cudaStreamWaitEvent(s[0], e0, 0));
			CK(cudaStreamWaitEvent(s[1], e0, 0));
			if (which != 2) {
				CK(cudaMemcpyAsync(din, hin, inb,
				    cudaMemcpyHostToDevice, s[0]));
			}
			if (which != 1) {
				CK(cudaMemcpyAsync(hout, dout, outb,
				    cudaMemcpyDeviceToHost, s[1]));
			}
			CK(cudaEventRecord(ev[0], s[0]));
			CK(cudaEventRecord(ev[1], s[1]));
			CK(cudaStreamWaitEvent(sm, ev[0], 0));
			CK(cudaStreamWaitEvent(sm, ev[1], 0));
			CK(cudaEventRecord(e1, sm));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				m->s[m->nrep++] = ms * 1e-3;
			}
		}
		// the bound is in input bytes/s; H2D alone and D2H alone in
		// the bytes each moves
		meas_finish(m, which == 2 ? outb : inb);
	}
	meas_print("(a) pinned H2D+D2H at once", &R->a);
	meas_print("    H2D alone (input bytes)", &R->a_h2d);
	meas_print("    D2H alone (output bytes)", &R->a_d2h);

	// (b) one stream, one plan over the whole batch
	cur = &R->b;
	{
		int rv = make_cufft_plan(c, R->batch, &plan[0]);
		if (rv != 0) {
			snprintf(err, sizeof(err),
			    "cufftXtMakePlanMany (batch %" PRId64
			    "): cufftResult %d",
			    R->batch, rv);
			goto fail;
		}
		nplans = 1;
		CKF(cufftSetStream(plan[0], s[0]));
		for (int r = -nwarm; r < B->reps; r++) {
			CK(cudaEventRecord(e0, s[0]));
			CK(cudaMemcpyAsync(
			    din, hin, inb, cudaMemcpyHostToDevice, s[0]));
			CKF(cufftXtExec(plan[0], din, dout, CUFFT_FORWARD));
			CK(cudaMemcpyAsync(
			    hout, dout, outb, cudaMemcpyDeviceToHost, s[0]));
			CK(cudaEventRecord(e1, s[0]));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				R->b.s[R->b.nrep++] = ms * 1e-3;
			}
		}
		meas_finish(&R->b, inb);
		if (out_b != NULL) {
			memcpy(out_b, hout, outb);
		}
		cufftDestroy(plan[0]);
		nplans = 0;
	}
	meas_print("(b) cuFFT 1 stream H2D+FFT+D2H", &R->b);

	// (c) the batch in K chunks over K streams, one plan per stream
	cur = &R->c16;
	{
		int64_t K
		    = R->batch < INPROC_STREAMS ? R->batch : INPROC_STREAMS;
		int64_t chunk  = (R->batch + K - 1) / K;
		K              = (R->batch + chunk - 1) / chunk;
		R->c16_streams = (int) K;
		size_t inper = case_in_per(c), outper = case_out_per(c);
		for (int64_t k = 0; k < K; k++) {
			int64_t nb = k == K - 1 ? R->batch - chunk * k : chunk;
			int     rv = make_cufft_plan(c, nb, &plan[k]);
			if (rv != 0) {
				snprintf(err, sizeof(err),
				    "cufftXtMakePlanMany (batch %" PRId64
				    "): cufftResult %d",
				    nb, rv);
				goto fail;
			}
			nplans++;
			CKF(cufftSetStream(plan[k], s[k]));
		}
		for (int r = -nwarm; r < B->reps; r++) {
			CK(cudaEventRecord(e0, sm));
			for (int64_t k = 0; k < K; k++) {
				int64_t nb
				    = k == K - 1 ? R->batch - chunk * k : chunk;
				size_t io = (size_t) (chunk * k) * inper;
				size_t oo = (size_t) (chunk * k) * outper;
				CK(cudaStreamWaitEvent(s[k], e0, 0));
				CK(cudaMemcpyAsync((char *) din + io,
				    (char *) hin + io, (size_t) nb * inper,
				    cudaMemcpyHostToDevice, s[k]));
				CKF(cufftXtExec(plan[k], (char *) din + io,
				    (char *) dout + oo, CUFFT_FORWARD));
				CK(cudaMemcpyAsync((char *) hout + oo,
				    (char *) dout + oo, (size_t) nb * outper,
				    cudaMemcpyDeviceToHost, s[k]));
				CK(cudaEventRecord(ev[k], s[k]));
			}
			for (int64_t k = 0; k < K; k++) {
				CK(cudaStreamWaitEvent(sm, ev[k], 0));
			}
			CK(cudaEventRecord(e1, sm));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0) {
				R->c16.s[R->c16.nrep++] = ms * 1e-3;
			}
		}
		meas_finish(&R->c16, inb);
	}
	{
		char lab[64];
		snprintf(
		    lab, sizeof(lab), "(c) cuFFT %d streams", R->c16_streams);
		meas_print(lab, &R->c16);
	}
	goto cleanup;

fail:
	meas_set(cur, -2, "failed: %s", err);
	meas_print("(a)-(c) in-process", cur);
	(void) cudaGetLastError();
cleanup:
	(void) cudaDeviceSynchronize();
	for (int i = 0; i < nplans; i++) {
		cufftDestroy(plan[i]);
	}
	for (int i = 0; i <= INPROC_STREAMS; i++) {
		if (s[i] != NULL) {
			cudaStreamDestroy(s[i]);
		}
	}
	for (int i = 0; i < INPROC_STREAMS + 2; i++) {
		if (ev[i] != NULL) {
			cudaEventDestroy(ev[i]);
		}
	}
	cudaFreeHost(hin);
	cudaFreeHost(hout);
	cudaFree(din);
	cudaFree(dout);
	(void) cudaGetLastError();
}

#else // !FFTD_WITH_CUDA

static int
gpu_detect(bench *B)
{
	snprintf(
	    B->no_gpu_why, sizeof(B->no_gpu_why), "no GPU: built without CUDA");
	return 0;
}

static void
run_inproc(bench *B, case_result *R, const void *src, void *out_b)
{
	(void) B;
	(void) R;
	(void) src;
	(void) out_b;
}

#endif

// --- (d)-(f): through fftd
// -------------------------------------------------------

static void
poison(void *p, size_t n)
{
	memset(p, 0xff, n); // NaN in f16 and f32
}

// all_finite checks that every output value was written (poisoned: NaN)
static int
all_finite(const bcase *c, const void *p, size_t bytes)
{
	if (c->prec == FFTD_F16) {
		const uint16_t *h = p;
		for (size_t i = 0; i < bytes / 2; i++) {
			if ((h[i] & 0x7c00) == 0x7c00) {
				return 0;
			}
		}
	} else {
		const float *f = p;
		for (size_t i = 0; i < bytes / 4; i++) {
			if (!isfinite(f[i])) {
				return 0;
			}
		}
	}
	return 1;
}

static double
get_real(const bcase *c, const void *p, size_t i)
{
	return c->prec == FFTD_F16 ? h2d(((const uint16_t *) p)[i])
	                           : (double) ((const float *) p)[i];
}

// ref_check compares transforms 0 and batch-1 of out (the output for input
// src) with a double-precision DFT, on all bins when N <= 16384, else on
// 16 bins. Returns the relative L2 error over the bins compared.
static double
ref_check(
    const bcase *c, int64_t batch, const void *src, const void *out, int *nbins)
{
	int64_t n    = c->n;
	int64_t nout = c->kind == FFTD_R2C ? n / 2 + 1 : n;
	int     all  = n <= 16384;
	int64_t nk   = all ? nout : 16;
	double *wr   = xmalloc(sizeof(double) * (size_t) n);
	double *wi   = xmalloc(sizeof(double) * (size_t) n);
	double *xr   = xmalloc(sizeof(double) * (size_t) n);
	double *xi   = xmalloc(sizeof(double) * (size_t) n);
	double  num = 0, den = 0;
	for (int64_t m = 0; m < n; m++) {
		double a = -2.0 * M_PI * (double) m / (double) n;
		wr[m]    = cos(a);
		wi[m]    = sin(a);
	}
	int64_t ts[2] = { 0, batch - 1 };
	for (int ti = 0; ti < (batch > 1 ? 2 : 1); ti++) {
		int64_t t  = ts[ti];
		size_t  ib = (size_t) t
		    * (c->kind == FFTD_R2C ? (size_t) n : 2 * (size_t) n);
		size_t ob = (size_t) t * 2 * (size_t) nout;
		for (int64_t j = 0; j < n; j++) {
			if (c->kind == FFTD_R2C) {
				xr[j] = get_real(c, src, ib + (size_t) j);
				xi[j] = 0;
			} else {
				xr[j] = get_real(c, src, ib + 2 * (size_t) j);
				xi[j]
				    = get_real(c, src, ib + 2 * (size_t) j + 1);
			}
		}
		uint64_t seed = 77;
		for (int64_t q = 0; q < nk; q++) {
			int64_t k  = all
			     ? q
			     : (int64_t) (splitmix(&seed) % (uint64_t) nout);
			double  sr = 0, si = 0;
			int64_t idx = 0; // (j * k) mod n
			for (int64_t j = 0; j < n; j++) {
				sr += xr[j] * wr[idx] - xi[j] * wi[idx];
				si += xr[j] * wi[idx] + xi[j] * wr[idx];
				idx += k;
				if (idx >= n) {
					idx -= n;
				}
			}
			double orr = get_real(c, out, ob + 2 * (size_t) k);
			double oi  = get_real(c, out, ob + 2 * (size_t) k + 1);
			num += (orr - sr) * (orr - sr) + (oi - si) * (oi - si);
			den += sr * sr + si * si;
		}
	}
	free(wr);
	free(wi);
	free(xr);
	free(xi);
	*nbins = (int) nk;
	return sqrt(num / den);
}

// ref_tol is the largest relative error accepted against the DFT.
static double
ref_tol(const bcase *c)
{
	return c->prec == FFTD_F16 ? 1e-2 : 1e-5;
}

// rel_err between two whole outputs of the case
static double
rel_err(const bcase *c, const void *x, const void *y, size_t bytes)
{
	size_t n   = bytes / real_bytes(c->prec);
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		double a = get_real(c, x, i), b = get_real(c, y, i);
		num += (a - b) * (a - b);
		den += b * b;
	}
	return sqrt(num / den);
}

// time_execute runs warm-up, then reps timed executions of plan on in/out.
static int
time_execute(bench *B, meas *m, const fftd_plan *plan, const void *in,
    void *out, size_t bytes, int nwarm)
{
	for (int r = -nwarm; r < B->reps; r++) {
		double t0 = now_s();
		int    rv = fftd_execute(plan, in, out);
		double t1 = now_s();
		if (rv != FFTD_OK) {
			meas_set(m, -2, "fftd_execute failed: %s", ferr(rv));
			return rv;
		}
		if (r >= 0) {
			m->s[m->nrep++] = t1 - t0;
		}
	}
	meas_finish(m, bytes);
	return 0;
}

static void
time_memcpy(bench *B, case_result *R, const void *src)
{
	void *dst = xmalloc_touched(R->in_bytes);
	for (int r = -1; r < B->reps; r++) {
		double t0 = now_s();
		memcpy(dst, src, R->in_bytes);
		double t1 = now_s();
		if (r >= 0) {
			R->memcpy_.s[R->memcpy_.nrep++] = t1 - t0;
		}
	}
	// keep the copy from being optimised away
	if (((volatile char *) dst)[R->in_bytes / 2]
	    != ((const char *) src)[R->in_bytes / 2]) {
		fprintf(stderr, "e2e: memcpy check failed\n");
	}
	free(dst);
	meas_finish(&R->memcpy_, R->in_bytes);
}

// stream_pass submits nsub chunks through the stream. copy: each chunk of
// src is copied into its slot and each result copied out to dst;
// otherwise the slots are submitted as they are (filled in place) and the
// results are read in place.
static int
stream_pass(fftd_stream *st, int nsub, const char *src, size_t cin, char *dst,
    size_t cout, int copy)
{
	int done = 0, rv;
	for (int k = 0; k < nsub; k++) {
		if (fftd_stream_pending(st) >= STREAM_DEPTH) {
			const void *o;
			rv = fftd_stream_wait(
			    st, copy ? dst + (size_t) done * cout : NULL, &o);
			if (rv != FFTD_OK) {
				return rv;
			}
			done++;
		}
		rv = fftd_stream_submit(
		    st, copy ? src + (size_t) k * cin : NULL);
		if (rv != FFTD_OK) {
			return rv;
		}
	}
	while (fftd_stream_pending(st) > 0) {
		const void *o;
		rv = fftd_stream_wait(
		    st, copy ? dst + (size_t) done * cout : NULL, &o);
		if (rv != FFTD_OK) {
			return rv;
		}
		done++;
	}
	return 0;
}

static void
run_fftd(bench *B, case_result *R, const void *src, const void *out_b)
{
	const bcase   *c   = R->c;
	size_t         inb = R->in_bytes, outb = R->out_bytes;
	fftd_plan_desc d;
	fftd_plan     *plan = NULL, *cplan = NULL;
	fftd_buffer   *bin = NULL, *bout = NULL;
	fftd_stream   *st = NULL;
	char *out_d = NULL, *out_e = NULL, *out_f = NULL, *out_c = NULL;
	void *in_e = NULL;
	int   rv;

	desc_for(c, R->batch, &d);
	if ((rv = fftd_plan_create(B->client, &d, &plan)) != FFTD_OK) {
		const char *w = ferr(rv);
		meas_set(&R->d, -1, "unavailable: plan: %s", w);
		meas_set(&R->e, -1, "unavailable: plan: %s", w);
		meas_set(&R->f, -1, "unavailable: plan: %s", w);
		meas_set(&R->f_copy, -1, "unavailable: plan: %s", w);
		snprintf(R->plan_why, sizeof(R->plan_why), "plan: %.180s", w);
		snprintf(R->check_note, sizeof(R->check_note), "n/a (no plan)");
		meas_print("(d)-(f) fftd", &R->d);
		return;
	}
	snprintf(R->algorithm, sizeof(R->algorithm), "%s",
	    fftd_plan_algorithm(plan));
	if (fftd_plan_input_bytes(plan) != inb
	    || fftd_plan_output_bytes(plan) != outb) {
		fprintf(stderr, "e2e: plan sizes %zu/%zu, expected %zu/%zu\n",
		    fftd_plan_input_bytes(plan), fftd_plan_output_bytes(plan),
		    inb, outb);
	}
	printf("  fftd plan: algorithm %s\n", R->algorithm);

	// (d) shared-memory buffers
	rv = fftd_buffer_create(B->client, inb, &bin);
	if (rv == FFTD_OK) {
		rv = fftd_buffer_create(B->client, outb, &bout);
	}
	if (rv != FFTD_OK) {
		meas_set(
		    &R->d, -1, "unavailable: fftd_buffer_create: %s", ferr(rv));
		fftd_buffer_destroy(bin);
		bin = NULL;
	} else {
		B->shm_ok = 1;
		memcpy(fftd_buffer_data(bin), src, inb);
		memset(fftd_buffer_data(bout), 0, outb);
		out_d = xmalloc(outb);
		// check run: poisoned output, then the timed runs
		poison(fftd_buffer_data(bout), outb);
		rv = fftd_execute(
		    plan, fftd_buffer_data(bin), fftd_buffer_data(bout));
		if (rv != FFTD_OK) {
			meas_set(
			    &R->d, -2, "fftd_execute failed: %s", ferr(rv));
			free(out_d);
			out_d = NULL;
		} else {
			memcpy(out_d, fftd_buffer_data(bout), outb);
			time_execute(B, &R->d, plan, fftd_buffer_data(bin),
			    fftd_buffer_data(bout), inb, 1);
		}
		fftd_buffer_destroy(bin);
		fftd_buffer_destroy(bout);
		bin = bout = NULL;
	}
	meas_print("(d) fftd shared memory", &R->d);

	// (e) inline, with the host memcpy rate beside it
	time_memcpy(B, R, src);
	in_e  = xmalloc_touched(inb);
	out_e = xmalloc_touched(outb);
	memcpy(in_e, src, inb);
	poison(out_e, outb);
	rv = fftd_execute(plan, in_e, out_e);
	if (rv != FFTD_OK) {
		meas_set(&R->e, -2, "fftd_execute failed: %s", ferr(rv));
		free(out_e);
		out_e = NULL;
	} else {
		char *keep = xmalloc(outb);
		memcpy(keep, out_e, outb);
		time_execute(B, &R->e, plan, in_e, out_e, inb, 1);
		free(out_e);
		out_e = keep;
	}
	meas_print("(e) fftd inline", &R->e);
	meas_print("    host memcpy, one thread", &R->memcpy_);
	free(in_e);
	in_e = NULL;

	// (f) streaming session over per-submit plans of ~64 MiB
	{
		size_t inper = case_in_per(c), outper = case_out_per(c);
		size_t target = (size_t) (64 * MIB);
		if (target > inb / 8) {
			target = inb / 8; // at least 8 submits (--quick)
		}
		int64_t cb = (int64_t) (target / inper);
		if (cb < 1) {
			cb = 1;
		}
		while (R->batch % cb != 0) {
			cb--;
		}
		R->chunk_batch = cb;
		R->nsub        = (int) (R->batch / cb);
		size_t cin = (size_t) cb * inper, cout = (size_t) cb * outper;

		desc_for(c, cb, &d);
		if ((rv = fftd_plan_create(B->client, &d, &cplan)) != FFTD_OK) {
			meas_set(&R->f, -1, "unavailable: plan: %s", ferr(rv));
			goto f_done;
		}
		snprintf(R->stream_algorithm, sizeof(R->stream_algorithm), "%s",
		    fftd_plan_algorithm(cplan));
		if ((rv = fftd_stream_open(cplan, STREAM_DEPTH, &st))
		    != FFTD_OK) {
			meas_set(&R->f, -1, "unavailable: fftd_stream_open: %s",
			    ferr(rv));
			goto f_done;
		}
		// copy mode once, poisoned: the full output, for the checks
		out_f = xmalloc_touched(outb);
		poison(out_f, outb);
		if ((rv = stream_pass(st, R->nsub, src, cin, out_f, cout, 1))
		    != 0) {
			meas_set(&R->f, -2, "stream failed: %s", ferr(rv));
			free(out_f);
			out_f = NULL;
			goto f_done;
		}
		// fill every slot in place with real data (producer writes,
		// not timed), then time in-place passes
		for (int k = 0; k < STREAM_DEPTH && k < R->nsub; k++) {
			void *p = fftd_stream_input(st);
			if (p == NULL) {
				meas_set(&R->f, -2,
				    "fftd_stream_input returned NULL");
				goto f_done;
			}
			memcpy(p, src + (size_t) k * cin, cin);
			if ((rv = fftd_stream_submit(st, p)) != FFTD_OK) {
				meas_set(
				    &R->f, -2, "submit failed: %s", ferr(rv));
				goto f_done;
			}
		}
		while (fftd_stream_pending(st) > 0) {
			if ((rv = fftd_stream_wait(st, NULL, NULL))
			    != FFTD_OK) {
				meas_set(
				    &R->f, -2, "wait failed: %s", ferr(rv));
				goto f_done;
			}
		}
		for (int r = -1; r < B->reps; r++) {
			double t0 = now_s();
			rv = stream_pass(st, R->nsub, NULL, cin, NULL, cout, 0);
			double t1 = now_s();
			if (rv != 0) {
				meas_set(
				    &R->f, -2, "stream failed: %s", ferr(rv));
				goto f_done;
			}
			if (r >= 0) {
				R->f.s[R->f.nrep++] = t1 - t0;
			}
		}
		meas_finish(&R->f, inb);
		// sustained: reps passes back to back without draining in
		// between, one figure (a pipeline that runs forever)
		{
			double t0 = now_s();
			rv        = stream_pass(
			           st, R->nsub * B->reps, NULL, 0, NULL, 0, 0);
			double t1 = now_s();
			if (rv != 0) {
				meas_set(&R->f_sustained, -2,
				    "stream failed: %s", ferr(rv));
			} else {
				R->f_sustained.s[R->f_sustained.nrep++]
				    = t1 - t0;
				meas_finish(
				    &R->f_sustained, inb * (size_t) B->reps);
			}
		}
		// copy mode timed: chunk copied into the slot, result out
		{
			char *tmp = xmalloc_touched(outb);
			for (int r = -1; r < B->reps; r++) {
				double t0 = now_s();
				rv        = stream_pass(
				           st, R->nsub, src, cin, tmp, cout, 1);
				double t1 = now_s();
				if (rv != 0) {
					meas_set(&R->f_copy, -2,
					    "stream failed: %s", ferr(rv));
					break;
				}
				if (r >= 0) {
					R->f_copy.s[R->f_copy.nrep++] = t1 - t0;
				}
			}
			if (rv == 0) {
				meas_finish(&R->f_copy, inb);
			}
			free(tmp);
		}
		// same plan, execute path, chunk by chunk, for the bitwise
		// check
		out_c = xmalloc_touched(outb);
		poison(out_c, outb);
		for (int k = 0; k < R->nsub; k++) {
			if ((rv = fftd_execute(cplan, src + (size_t) k * cin,
			         out_c + (size_t) k * cout))
			    != FFTD_OK) {
				free(out_c);
				out_c = NULL;
				break;
			}
		}
	}
f_done : {
	char lab[96];
	snprintf(lab, sizeof(lab), "(f) fftd stream, %d x %.0f MiB, depth %d",
	    R->nsub, (double) R->chunk_batch * (double) case_in_per(c) / MIB,
	    STREAM_DEPTH);
	meas_print(lab, &R->f);
	meas_print("    stream, reps passes back to back", &R->f_sustained);
	meas_print("    stream with copies in and out", &R->f_copy);
}
	fftd_stream_close(st);
	fftd_plan_destroy(cplan);
	fftd_plan_destroy(plan);

	// checks
	{
		const char *first = out_d ? out_d : out_e ? out_e : out_f;
		int         fin   = 1;
		if (out_d && !all_finite(c, out_d, outb)) {
			fin = 0;
		}
		if (out_e && !all_finite(c, out_e, outb)) {
			fin = 0;
		}
		if (out_f && !all_finite(c, out_f, outb)) {
			fin = 0;
		}
		R->outputs_finite = first ? fin : -1;
		R->de_same
		    = out_d && out_e ? memcmp(out_d, out_e, outb) == 0 : -1;
		R->f_vs_d = out_f && (out_d || out_e)
		    ? memcmp(out_f, out_d ? out_d : out_e, outb) == 0
		    : -1;
		R->f_sameplan
		    = out_f && out_c ? memcmp(out_f, out_c, outb) == 0 : -1;
		R->ref_err = first
		    ? ref_check(c, R->batch, src, first, &R->ref_bins)
		    : NAN;
		R->b_err
		    = first && out_b ? rel_err(c, first, out_b, outb) : NAN;
		char  *p    = R->check_note;
		size_t left = sizeof(R->check_note);
		int    w    = snprintf(p, left,
		          "d==e %s; f==d(full plan) %s; f==same plan via execute %s; "
		                "outputs %s",
                    R->de_same < 0   ? "n/a"
		              : R->de_same ? "bit-identical"
		                           : "DIFFER",
                    R->f_vs_d < 0   ? "n/a"
		              : R->f_vs_d ? "bit-identical"
		                          : "differ",
                    R->f_sameplan < 0   ? "n/a"
		              : R->f_sameplan ? "bit-identical"
		                              : "DIFFER",
                    R->outputs_finite < 0   ? "n/a"
		              : R->outputs_finite ? "all written, finite"
		                                  : "NOT ALL WRITTEN/FINITE");
		(void) w;
		printf("  checks: %s\n", R->check_note);
		if (first) {
			printf("  vs double-precision DFT (%d bins x 2 "
			       "transforms): rel err %.2e",
			    R->ref_bins, R->ref_err);
			if (!isnan(R->b_err)) {
				printf(
				    "; vs in-process cuFFT (b): rel err %.2e",
				    R->b_err);
			}
			printf("\n");
		}
	}
	free(out_d);
	free(out_e);
	free(out_f);
	free(out_c);
}

// --- 4 client processes
// ------------------------------------------------------------

typedef struct shared_sync {
	pthread_barrier_t bar;
	int               fail[NCLIENTS];
	char              why[NCLIENTS][160];
	double            t0[NCLIENTS][MAX_REPS], t1[NCLIENTS][MAX_REPS];
} shared_sync;

static const bcase *
case_by_name(const char *name)
{
	for (int i = 0; i < NCASES; i++) {
		if (strcmp(CASES[i].name, name) == 0) {
			return &CASES[i];
		}
	}
	return NULL;
}

// child role "client": URL CASE BATCH MODE(shm|inline) REPS SYNCFILE INDEX
static int
role_client(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "client role: %d arguments\n", argc);
		return 2;
	}
	const char  *url  = argv[0];
	const bcase *c    = case_by_name(argv[1]);
	int64_t      qb   = strtoll(argv[2], NULL, 10);
	int          shm  = strcmp(argv[3], "shm") == 0;
	int          reps = atoi(argv[4]);
	int          me   = atoi(argv[6]);
	int          fd   = open(argv[5], O_RDWR);
	if (fd < 0 || c == NULL || me < 0 || me >= NCLIENTS
	    || reps > MAX_REPS) {
		return 2;
	}
	shared_sync *sy = mmap(
	    NULL, sizeof(*sy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sy == MAP_FAILED) {
		return 2;
	}
	fftd_client   *cl = NULL;
	fftd_plan     *pl = NULL;
	fftd_buffer   *bi = NULL, *bo = NULL;
	void          *in = NULL, *out = NULL;
	fftd_plan_desc d;
	size_t         inb = case_in_per(c) * (size_t) qb,
	       outb        = case_out_per(c) * (size_t) qb;
	int rv             = fftd_client_open(&cl, url, 0);
	if (rv == FFTD_OK) {
		desc_for(c, qb, &d);
		rv = fftd_plan_create(cl, &d, &pl);
	}
	if (rv == FFTD_OK && shm) {
		rv = fftd_buffer_create(cl, inb, &bi);
		if (rv == FFTD_OK) {
			rv = fftd_buffer_create(cl, outb, &bo);
		}
		if (rv == FFTD_OK) {
			in  = fftd_buffer_data(bi);
			out = fftd_buffer_data(bo);
		}
	} else if (rv == FFTD_OK) {
		in  = xmalloc_touched(inb);
		out = xmalloc_touched(outb);
	}
	if (rv == FFTD_OK) {
		fill_input(c, in, qb, 1000 + (uint64_t) me);
		memset(out, 0, outb);
		rv = fftd_execute(pl, in, out); // warm-up
	}
	if (rv != FFTD_OK) {
		sy->fail[me] = 1;
		snprintf(sy->why[me], sizeof(sy->why[me]), "%.150s", ferr(rv));
	}
	pthread_barrier_wait(&sy->bar);
	int anyfail = 0;
	for (int i = 0; i < NCLIENTS; i++) {
		anyfail |= sy->fail[i];
	}
	if (!anyfail) {
		for (int r = 0; r < reps; r++) {
			pthread_barrier_wait(&sy->bar);
			double t0 = now_s();
			rv = sy->fail[me] ? FFTD_OK : fftd_execute(pl, in, out);
			double t1 = now_s();
			if (rv != FFTD_OK && !sy->fail[me]) {
				sy->fail[me] = 1;
				snprintf(sy->why[me], sizeof(sy->why[me]),
				    "%.150s", ferr(rv));
			}
			sy->t0[me][r] = t0;
			sy->t1[me][r] = t1;
		}
	}
	if (shm) {
		fftd_buffer_destroy(bi);
		fftd_buffer_destroy(bo);
	} else {
		free(in);
		free(out);
	}
	fftd_plan_destroy(pl);
	fftd_client_close(cl);
	int failed = sy->fail[me];
	munmap(sy, sizeof(*sy));
	return failed ? 1 : 0;
}

static void
run_clients(bench *B, case_result *R, int shm, meas *m)
{
	if (R->plan_why[0]) {
		meas_set(m, -1, "unavailable: %s", R->plan_why);
		return;
	}
	if (shm && !B->shm_ok) {
		meas_set(m, -1, "unavailable: %s",
		    B->shm_why[0] ? B->shm_why : "no shared-memory buffers");
		return;
	}
	if (R->batch < NCLIENTS) {
		meas_set(m, -1, "batch %" PRId64 " < %d clients", R->batch,
		    NCLIENTS);
		return;
	}
	int64_t qb     = R->batch / NCLIENTS;
	char    path[] = "/tmp/fftd-e2e-sync-XXXXXX";
	int     fd     = mkstemp(path);
	if (fd < 0 || ftruncate(fd, sizeof(shared_sync)) != 0) {
		meas_set(m, -2, "sync file: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return;
	}
	shared_sync *sy = mmap(
	    NULL, sizeof(*sy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sy == MAP_FAILED) {
		meas_set(m, -2, "mmap: %s", strerror(errno));
		unlink(path);
		return;
	}
	memset(sy, 0, sizeof(*sy));
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sy->bar, &ba, NCLIENTS);
	pthread_barrierattr_destroy(&ba);

	char qs[32], rs[16];
	snprintf(qs, sizeof(qs), "%" PRId64, qb);
	snprintf(rs, sizeof(rs), "%d", B->reps);
	const char *args[] = { B->url, R->c->name, qs, shm ? "shm" : "inline",
		rs, path, NULL };
	int         codes[NCLIENTS];
	int         bad
	    = fftd_test_run_children(NCLIENTS, "client", args, 600000, codes);
	if (bad != 0) {
		char w[160] = "";
		for (int i = 0; i < NCLIENTS; i++) {
			if (sy->fail[i]) {
				snprintf(w, sizeof(w), "client %d: %s", i,
				    sy->why[i]);
				break;
			}
		}
		meas_set(m, shm ? -1 : -2, "%s: %s",
		    shm ? "unavailable" : "failed",
		    w[0] ? w : "a client process failed");
	} else {
		for (int r = 0; r < B->reps; r++) {
			double lo = INFINITY, hi = -INFINITY;
			for (int i = 0; i < NCLIENTS; i++) {
				lo = fmin(lo, sy->t0[i][r]);
				hi = fmax(hi, sy->t1[i][r]);
			}
			m->s[m->nrep++] = hi - lo;
		}
		meas_finish(m, (size_t) qb * NCLIENTS * case_in_per(R->c));
	}
	pthread_barrier_destroy(&sy->bar);
	munmap(sy, sizeof(*sy));
	unlink(path);
}

// --- latency
// ---------------------------------------------------------------------

static void
lat_finish(lat_result *L, double *v, int n)
{
	qsort(v, (size_t) n, sizeof(double), cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += v[i];
	}
	L->state = 1;
	L->n     = n;
	L->p50   = v[n / 2];
	L->p99   = v[(n * 99) / 100];
	L->min   = v[0];
	L->max   = v[n - 1];
	L->mean  = sum / n;
}

static void
lat_print(const char *what, const lat_result *L)
{
	if (L->state == 1) {
		printf("  %-30s p50 %7.1f us  p99 %7.1f us  (min %.1f, mean "
		       "%.1f, max %.1f; %d round trips)\n",
		    what, L->p50, L->p99, L->min, L->mean, L->max, L->n);
	} else if (L->state != 0) {
		printf("  %-30s %s\n", what, L->why);
	}
}

static void
run_latency(bench *B)
{
	static const bcase lc
	    = { "lat", "f32 C2C N=1024 batch 1", FFTD_C2C, FFTD_F32, 1024 };
	fftd_plan_desc d;
	fftd_plan     *pl = NULL;
	double        *v  = xmalloc(sizeof(double) * LAT_ROUNDS);
	desc_for(&lc, 1, &d);
	int rv = fftd_plan_create(B->client, &d, &pl);
	if (rv != FFTD_OK) {
		B->lat_inline.state = -2;
		snprintf(B->lat_inline.why, sizeof(B->lat_inline.why),
		    "plan: %s", ferr(rv));
		free(v);
		return;
	}
	size_t inb = case_in_per(&lc), outb = case_out_per(&lc);
	for (int mode = 0; mode < 3; mode++) {
		lat_result  *L  = mode == 0 ? &B->lat_inline
		      : mode == 1           ? &B->lat_shm
		                            : &B->lat_ping;
		fftd_buffer *bi = NULL, *bo = NULL;
		void        *in = NULL, *out = NULL;
		if (mode == 0) {
			in  = xmalloc_touched(inb);
			out = xmalloc_touched(outb);
		} else if (mode == 1) {
			rv = fftd_buffer_create(B->client, inb, &bi);
			if (rv == FFTD_OK) {
				rv = fftd_buffer_create(B->client, outb, &bo);
			}
			if (rv != FFTD_OK) {
				L->state = -1;
				snprintf(L->why, sizeof(L->why),
				    "unavailable: %s", ferr(rv));
				fftd_buffer_destroy(bi);
				continue;
			}
			in  = fftd_buffer_data(bi);
			out = fftd_buffer_data(bo);
		}
		if (in != NULL) {
			fill_input(&lc, in, 1, 9);
		}
		int n = 0;
		for (int r = -LAT_WARMUP; r < LAT_ROUNDS; r++) {
			double t0 = now_s();
			rv        = mode == 2 ? fftd_ping(B->client, NULL)
			                      : fftd_execute(pl, in, out);
			double t1 = now_s();
			if (rv != FFTD_OK) {
				L->state = -2;
				snprintf(L->why, sizeof(L->why),
				    "failed: %.180s", ferr(rv));
				break;
			}
			if (r >= 0) {
				v[n++] = (t1 - t0) * 1e6;
			}
		}
		if (n == LAT_ROUNDS) {
			lat_finish(L, v, n);
		}
		if (mode == 0) {
			free(in);
			free(out);
		} else {
			fftd_buffer_destroy(bi);
			fftd_buffer_destroy(bo);
		}
	}
	fftd_plan_destroy(pl);
	free(v);
	lat_print("inline execute", &B->lat_inline);
	lat_print("shared-memory execute", &B->lat_shm);
	lat_print("ping", &B->lat_ping);
}

// --- report
// ------------------------------------------------------------------------

static void
cell(char *buf, size_t n, const meas *m)
{
	if (m->state == 1) {
		snprintf(buf, n, "%.2f", m->gbps);
	} else if (m->state == -1 || m->state == 0) {
		snprintf(buf, n, "-");
	} else {
		snprintf(buf, n, "FAIL");
	}
}

static void
ratio_cell(char *buf, size_t n, const meas *x, const meas *y, double target)
{
	if (x->state == 1 && y->state == 1) {
		double r = x->gbps / y->gbps;
		snprintf(buf, n, "%.3f%s", r, r >= target ? "" : "*");
	} else {
		snprintf(buf, n, "-");
	}
}

static void
print_tables(bench *B)
{
	printf("\n=== fftd e2e: GB/s of input bytes (1e9 B/s), median of %d; "
	       "GPU %s; daemon backend %s\n",
	    B->reps, B->gpu ? B->gpu_name : "none", B->info.backend);
	if (!B->gpu) {
		printf("(a)-(c): skipped (%s)\n", B->no_gpu_why);
	}
	printf("%-16s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "case",
	    "in MiB", "(a)dup", "(b)1st", "(c)16st", "(d)shm", "(e)inl",
	    "memcpy", "(f)strm", "(f)copy", "4cl-shm", "4cl-inl");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		char a[16], b[16], c[16], d[16], e[16], mc[16], f[16], fc[16],
		    k[16], ki[16];
		cell(a, 16, &R->a);
		cell(b, 16, &R->b);
		cell(c, 16, &R->c16);
		cell(d, 16, &R->d);
		cell(e, 16, &R->e);
		cell(mc, 16, &R->memcpy_);
		cell(f, 16, &R->f);
		cell(fc, 16, &R->f_copy);
		cell(k, 16, &R->cl_shm);
		cell(ki, 16, &R->cl_inline);
		printf("%-16s %7.0f %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n",
		    R->c->label, (double) R->in_bytes / MIB, a, b, c, d, e, mc,
		    f, fc, k, ki);
	}
	printf("\nratios (target; * = missed)\n");
	printf("%-16s %9s %9s %9s %9s %9s\n", "case", "d/a>=.95", "f/a>=.95",
	    "d/c>=1", "e/mc>=.5", "4cl/a>=.95");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		char r1[16], r2[16], r3[16], r4[16], r5[16];
		ratio_cell(r1, 16, &R->d, &R->a, 0.95);
		ratio_cell(r2, 16, &R->f, &R->a, 0.95);
		ratio_cell(r3, 16, &R->d, &R->c16, 1.0);
		ratio_cell(r4, 16, &R->e, &R->memcpy_, 0.5);
		ratio_cell(r5, 16, &R->cl_shm, &R->a, 0.95);
		printf("%-16s %9s %9s %9s %9s %9s\n", R->c->label, r1, r2, r3,
		    r4, r5);
	}
	printf("\nchecks\n");
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		printf("%-16s %s", R->c->label, R->check_note);
		if (!isnan(R->ref_err)) {
			double tol = ref_tol(R->c);
			printf("; DFT rel err %.1e (%s %.0e)", R->ref_err,
			    R->ref_err < tol ? "ok <" : "BAD >=", tol);
		}
		if (!isnan(R->b_err)) {
			printf("; vs (b) %.1e", R->b_err);
		}
		printf("\n");
	}
	if (B->want_latency) {
		printf("\nsmall requests (f32 C2C N=1024 batch 1, %d round "
		       "trips after %d warm-up; target p50<=60 p99<=200 us)\n",
		    LAT_ROUNDS, LAT_WARMUP);
		lat_print("inline execute", &B->lat_inline);
		lat_print("shared-memory execute", &B->lat_shm);
		lat_print("ping", &B->lat_ping);
	}
	fflush(stdout);
}

static void
json_meas(FILE *f, const char *key, const meas *m)
{
	fprintf(f, "      \"%s\": {\"state\": \"%s\"", key,
	    m->state == 1        ? "ok"
	        : m->state == -1 ? "unavailable"
	        : m->state == -2 ? "failed"
	                         : "skipped");
	if (m->state == 1) {
		fprintf(f, ", \"gbps\": ");
		bench_json_num(f, m->gbps);
		fprintf(f, ", \"median_s\": ");
		bench_json_num(f, m->med);
		fprintf(f, ", \"samples_s\": [");
		for (int i = 0; i < m->nrep; i++) {
			fprintf(f, "%s", i ? ", " : "");
			bench_json_num(f, m->s[i]);
		}
		fprintf(f, "]");
	} else {
		fprintf(f, ", \"why\": ");
		bench_json_str(f, m->why[0] ? m->why : "not run");
	}
	fprintf(f, "},\n");
}

static void
json_ratio(
    FILE *f, const char *key, const meas *x, const meas *y, double target)
{
	fprintf(f, "        \"%s\": {\"value\": ", key);
	if (x->state == 1 && y->state == 1) {
		bench_json_num(f, x->gbps / y->gbps);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ", \"target\": %.2f},\n", target);
}

static void
json_lat(FILE *f, const char *key, const lat_result *L, int last)
{
	fprintf(f, "    \"%s\": {\"state\": \"%s\"", key,
	    L->state == 1        ? "ok"
	        : L->state == -1 ? "unavailable"
	        : L->state == -2 ? "failed"
	                         : "skipped");
	if (L->state == 1) {
		fprintf(f,
		    ", \"n\": %d, \"p50_us\": %.3f, \"p99_us\": %.3f, "
		    "\"min_us\": %.3f, \"mean_us\": %.3f, \"max_us\": %.3f",
		    L->n, L->p50, L->p99, L->min, L->mean, L->max);
	} else if (L->why[0]) {
		fprintf(f, ", \"why\": ");
		bench_json_str(f, L->why);
	}
	fprintf(f, "}%s\n", last ? "" : ",");
}

static const char *
tri(int v)
{
	return v < 0 ? "null" : v ? "true" : "false";
}

static int
write_json(bench *B, const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "e2e: cannot write %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	fprintf(f,
	    "{\n  \"bench\": \"fftd e2e\",\n  \"units\": \"GB/s = 1e9 bytes of "
	    "input per second\",\n");
	fprintf(f, "  \"quick\": %s,\n  \"reps\": %d,\n  \"gpu\": ",
	    B->quick ? "true" : "false", B->reps);
	if (B->gpu) {
		bench_json_str(f, B->gpu_name);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"no_gpu_reason\": ");
	bench_json_str(f, B->gpu ? "" : B->no_gpu_why);
	fprintf(f, ",\n  \"daemon\": {\"url\": ");
	bench_json_str(f, B->url);
	fprintf(f, ", \"version\": ");
	bench_json_str(f, B->info.server_version);
	fprintf(f, ", \"backend\": ");
	bench_json_str(f, B->info.backend);
	fprintf(f, ", \"devices\": [");
	for (int i = 0; i < B->info.ndevices; i++) {
		fprintf(f, "%s", i ? ", " : "");
		bench_json_str(f, B->info.devices[i].name);
	}
	fprintf(f, "]},\n  \"cases\": [\n");
	int first = 1;
	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B->cr[i];
		if (!R->selected) {
			continue;
		}
		fprintf(f,
		    "%s    {\n      \"name\": \"%s\", \"label\": \"%s\",\n",
		    first ? "" : ",\n", R->c->name, R->c->label);
		first = 0;
		fprintf(f,
		    "      \"n\": %" PRId64 ", \"batch\": %" PRId64
		    ", \"input_bytes\": %zu, \"output_bytes\": %zu,\n",
		    R->c->n, R->batch, R->in_bytes, R->out_bytes);
		fprintf(f, "      \"algorithm\": ");
		bench_json_str(f, R->algorithm);
		fprintf(f,
		    ", \"stream_plan_batch\": %" PRId64
		    ", \"stream_submits\": %d, \"stream_depth\": %d, "
		    "\"inproc_streams\": %d,\n",
		    R->chunk_batch, R->nsub, STREAM_DEPTH, R->c16_streams);
		json_meas(f, "a_duplex", &R->a);
		json_meas(f, "a_h2d_only", &R->a_h2d);
		json_meas(f, "a_d2h_only_output_bytes", &R->a_d2h);
		json_meas(f, "b_cufft_1stream", &R->b);
		json_meas(f, "c_cufft_16streams", &R->c16);
		json_meas(f, "d_fftd_shm", &R->d);
		json_meas(f, "e_fftd_inline", &R->e);
		json_meas(f, "host_memcpy_1thread", &R->memcpy_);
		json_meas(f, "f_fftd_stream_inplace", &R->f);
		json_meas(f, "f_fftd_stream_sustained", &R->f_sustained);
		json_meas(f, "f_fftd_stream_copy", &R->f_copy);
		json_meas(f, "clients4_shm", &R->cl_shm);
		json_meas(f, "clients4_inline", &R->cl_inline);
		fprintf(f, "      \"ratios\": {\n");
		json_ratio(f, "d_over_a", &R->d, &R->a, 0.95);
		json_ratio(f, "f_over_a", &R->f, &R->a, 0.95);
		json_ratio(f, "d_over_c", &R->d, &R->c16, 1.0);
		json_ratio(f, "f_over_c", &R->f, &R->c16, 1.0);
		json_ratio(f, "e_over_memcpy", &R->e, &R->memcpy_, 0.5);
		json_ratio(f, "clients4_over_a", &R->cl_shm, &R->a, 0.95);
		fprintf(f, "        \"_\": null\n      },\n");
		fprintf(f,
		    "      \"checks\": {\"d_e_bit_identical\": %s, "
		    "\"f_d_bit_identical\": %s, \"f_same_plan_bit_identical\": "
		    "%s, \"outputs_finite\": %s, \"dft_rel_err\": ",
		    tri(R->de_same), tri(R->f_vs_d), tri(R->f_sameplan),
		    tri(R->outputs_finite));
		bench_json_num(f, R->ref_err);
		fprintf(f, ", \"dft_tolerance\": %.0e, \"dft_ok\": %s",
		    ref_tol(R->c),
		    isnan(R->ref_err)                ? "null"
		        : R->ref_err < ref_tol(R->c) ? "true"
		                                     : "false");
		fprintf(f,
		    ", \"dft_bins_per_transform\": %d, \"rel_err_vs_b\": ",
		    R->ref_bins);
		bench_json_num(f, R->b_err);
		fprintf(f, "}\n    }");
	}
	fprintf(f,
	    "\n  ],\n  \"latency\": {\n    \"shape\": \"f32 C2C N=1024 batch "
	    "1\", \"warmup\": %d, \"rounds\": %d,\n",
	    LAT_WARMUP, LAT_ROUNDS);
	json_lat(f, "inline", &B->lat_inline, 0);
	json_lat(f, "shm", &B->lat_shm, 0);
	json_lat(f, "ping", &B->lat_ping, 1);
	fprintf(f, "  }\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}

// --- main
// ----------------------------------------------------------------------------

static const fftd_test_role ROLES[] = {
	{ "client", role_client },
	{ NULL, NULL },
};

static void
usage(void)
{
	fprintf(stderr,
	    "usage: e2e [--url URL | --spawn FFTD_BIN] [--json FILE] "
	    "[--quick]\n"
	    "           [--cases LIST] [--reps N] [--config FILE] [--verbose]\n"
	    "  LIST: comma-separated of c2c4096 c2c1m r2c16384 f16c2c4096 "
	    "latency clients\n");
	exit(2);
}

static char *
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return NULL;
	}
	char  *buf = xmalloc(1 << 20);
	size_t n   = fread(buf, 1, (1 << 20) - 1, f);
	buf[n]     = '\0';
	fclose(f);
	return buf;
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);

	static bench B;
	const char  *url = NULL, *spawn = NULL, *json = NULL, *cases = NULL,
	           *conf = NULL;
	B.reps           = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--url") == 0 && i + 1 < argc) {
			url = argv[++i];
		} else if (strcmp(a, "--spawn") == 0 && i + 1 < argc) {
			spawn = argv[++i];
		} else if (strcmp(a, "--json") == 0 && i + 1 < argc) {
			json = argv[++i];
		} else if (strcmp(a, "--quick") == 0) {
			B.quick = 1;
		} else if (strcmp(a, "--cases") == 0 && i + 1 < argc) {
			cases = argv[++i];
		} else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
			B.reps = atoi(argv[++i]);
		} else if (strcmp(a, "--config") == 0 && i + 1 < argc) {
			conf = argv[++i];
		} else if (strcmp(a, "--verbose") == 0) {
			setenv("FFTD_TEST_DAEMON_LOG", "1", 1);
		} else {
			usage();
		}
	}
	if ((url != NULL) == (spawn != NULL)) {
		if (url == NULL && spawn == NULL) {
			fprintf(stderr,
			    "e2e: give --url URL or --spawn FFTD_BIN\n");
		}
		usage();
	}
	if (B.reps == 0) {
		B.reps = 7;
	}
	if (B.reps < 1 || B.reps > MAX_REPS) {
		fprintf(stderr, "e2e: --reps must be 1..%d\n", MAX_REPS);
		return 2;
	}

	// what to run
	B.want_latency = B.want_clients = cases == NULL;
	for (int i = 0; i < NCASES; i++) {
		B.cr[i].c        = &CASES[i];
		B.cr[i].selected = cases == NULL;
		B.cr[i].ref_err  = NAN;
		B.cr[i].b_err    = NAN;
		B.cr[i].de_same = B.cr[i].f_vs_d = B.cr[i].f_sameplan
		    = B.cr[i].outputs_finite     = -1;
	}
	if (cases != NULL) {
		char *dup = strdup(cases), *save = NULL;
		for (char *t = strtok_r(dup, ",", &save); t;
		     t       = strtok_r(NULL, ",", &save)) {
			int hit = 0;
			for (int i = 0; i < NCASES; i++) {
				if (strcmp(t, CASES[i].name) == 0) {
					B.cr[i].selected = hit = 1;
				}
			}
			if (strcmp(t, "latency") == 0) {
				B.want_latency = hit = 1;
			}
			if (strcmp(t, "clients") == 0) {
				B.want_clients = hit = 1;
			}
			if (!hit) {
				fprintf(stderr, "e2e: unknown case %s\n", t);
				usage();
			}
		}
		free(dup);
	}

	B.gpu = gpu_detect(&B);
	if (!B.gpu && !B.quick) {
		printf("e2e: %s: using the --quick sizes\n", B.no_gpu_why);
		B.quick = 1;
	}
	size_t target = B.quick ? (size_t) (64 * MIB) : (size_t) (512 * MIB);

	fftd_test_daemon dmn;
	int              spawned = 0;
	if (spawn != NULL) {
		char *ctext = NULL;
		if (conf != NULL && (ctext = read_file(conf)) == NULL) {
			fprintf(stderr, "e2e: cannot read %s\n", conf);
			return 2;
		}
		setenv("FFTD_BIN", spawn, 1);
		if (fftd_test_daemon_start(&dmn, ctext, NULL) != 0) {
			fprintf(stderr, "e2e: could not start %s\n", spawn);
			return 1;
		}
		free(ctext);
		spawned = 1;
		url     = dmn.url;
	}
	B.url  = url;
	int rv = fftd_client_open(&B.client, url, 0);
	if (rv != FFTD_OK) {
		fprintf(
		    stderr, "e2e: cannot connect to %s: %s\n", url, ferr(rv));
		if (spawned) {
			fftd_test_daemon_stop(&dmn);
		}
		return 1;
	}
	fftd_client_info(B.client, &B.info);
	printf("fftd e2e: daemon %s at %s, backend %s (%s); GPU here: %s; %s "
	       "sizes, %d reps\n",
	    B.info.server_version, url, B.info.backend,
	    B.info.ndevices > 0 ? B.info.devices[0].name : "no device",
	    B.gpu ? B.gpu_name : B.no_gpu_why,
	    B.quick ? "quick (64 MiB)" : "full (512 MiB)", B.reps);

	// Is the shared-memory path there at all? (the reason, for the table)
	{
		fftd_buffer *probe = NULL;
		rv                 = fftd_buffer_create(B.client, 4096, &probe);
		if (rv == FFTD_OK) {
			B.shm_ok = 1;
			fftd_buffer_destroy(probe);
		} else {
			snprintf(B.shm_why, sizeof(B.shm_why),
			    "fftd_buffer_create: %s", ferr(rv));
			printf("shared-memory buffers unavailable: %s\n",
			    B.shm_why);
		}
	}

	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B.cr[i];
		if (!R->selected) {
			continue;
		}
		const bcase *c = R->c;
		R->batch       = batch_for(c, target);
		R->in_bytes    = case_in_per(c) * (size_t) R->batch;
		R->out_bytes   = case_out_per(c) * (size_t) R->batch;
		printf("\n--- %s: batch %" PRId64
		       ", %.0f MiB in, %.1f MiB out\n",
		    c->label, R->batch, (double) R->in_bytes / MIB,
		    (double) R->out_bytes / MIB);
		fflush(stdout);
		char *src = xmalloc(R->in_bytes);
		fill_input(c, src, R->batch, (uint64_t) i + 1);
		char *out_b = NULL;
		if (B.gpu) {
			out_b = xmalloc_touched(R->out_bytes);
			run_inproc(&B, R, src, out_b);
			if (R->b.state != 1) {
				free(out_b);
				out_b = NULL;
			}
		} else {
			meas_set(&R->a, -1, "skipped (no GPU)");
			meas_set(&R->b, -1, "skipped (no GPU)");
			meas_set(&R->c16, -1, "skipped (no GPU)");
			printf("  (a)-(c): skipped (no GPU)\n");
		}
		run_fftd(&B, R, src, out_b);
		free(out_b);
		free(src);
		if (B.want_clients) {
			run_clients(&B, R, 1, &R->cl_shm);
			meas_print("4 clients, shared memory", &R->cl_shm);
			run_clients(&B, R, 0, &R->cl_inline);
			meas_print("4 clients, inline", &R->cl_inline);
		}
	}
	if (B.want_latency) {
		printf("\n--- small requests\n");
		run_latency(&B);
	}

	print_tables(&B);
	int bad = 0;
	// failed measurements and failed checks make the exit status 1;
	// paths the daemon does not offer (unavailable) do not
	for (int i = 0; i < NCASES; i++) {
		case_result *R     = &B.cr[i];
		const meas  *all[] = { &R->a, &R->b, &R->c16, &R->d, &R->e,
			 &R->f, &R->f_copy, &R->cl_shm, &R->cl_inline };
		for (size_t k = 0;
		     R->selected && k < sizeof(all) / sizeof(all[0]); k++) {
			bad |= all[k]->state == -2;
		}
		bad |= R->selected
		    && (R->de_same == 0 || R->f_sameplan == 0
		        || R->outputs_finite == 0
		        || (!isnan(R->ref_err)
		            && !(R->ref_err < ref_tol(R->c))));
	}
	bad |= B.lat_inline.state == -2 || B.lat_shm.state == -2;
	if (bad) {
		printf("e2e: FAILED (a measurement or a check failed; see "
		       "above)\n");
	}
	if (json != NULL) {
		bad |= write_json(&B, json) != 0;
		if (!bad) {
			printf("JSON: %s\n", json);
		}
	}
	fftd_client_close(B.client);
	if (spawned) {
		int st = fftd_test_daemon_stop(&dmn);
		if (st != 0) {
			fprintf(
			    stderr, "e2e: daemon exited with status %d\n", st);
			bad = 1;
		}
	}
	return bad;
}

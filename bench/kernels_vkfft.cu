// SPDX-License-Identifier: MIT
//
// kernels_vkfft.cu — VkFFT's CUDA backend behind bench/kernels_vkfft.h, the
// strongest fp16 peer of fftd's tc16 kernels (/work/shared/KERNELS.md):
// VkFFT generates its kernels at plan time and compiles them with NVRTC,
// then launches them with the driver API on our stream. Built with
// -DFFTD_BENCH_VKFFT and VkFFT's headers on the include path (bench/kernels.mk
// does both when VKFFT_DIR is given; link -lnvrtc -lcuda); otherwise every
// call answers "not built". The VkFFT tree is never part of fftd: fetch it
// (bench/README.md, "bench/kernels") and point VKFFT_DIR at it.

#include "kernels_vkfft.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef FFTD_BENCH_VKFFT

#ifndef VKFFT_BACKEND
#define VKFFT_BACKEND 1
#endif
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <vector>

// VkFFT's fp16 kernels #include <ROOT/include/cuda_fp16.h> when NVRTC
// compiles them, ROOT being CUDA_TOOLKIT_ROOT_DIR: the toolkit of the
// machine that runs the bench, $VKFFT_CUDA_ROOT or else the CUDA_HOME this
// was built with (bench/kernels.mk passes FFTD_BENCH_CUDA_HOME).
#ifndef FFTD_BENCH_CUDA_HOME
#define FFTD_BENCH_CUDA_HOME "/usr/local/cuda"
#endif
static const char *
bench_vk_cuda_root(void)
{
	const char *e = getenv("VKFFT_CUDA_ROOT");
	return e != NULL && *e != 0 ? e : FFTD_BENCH_CUDA_HOME;
}
#define CUDA_TOOLKIT_ROOT_DIR bench_vk_cuda_root()

#include "vkFFT.h"

struct bench_vk {
	VkFFTApplication app;
	cudaStream_t     stream;
	CUdevice         dev;
	void            *in, *out;
	uint64_t         in_bytes, out_bytes;
	bool             inited;
};

// vk_fail writes what failed into msg and returns the non-zero code, so
// every error path is one line.
static int
vk_fail(char *msg, size_t len, int code, const char *what, const char *why)
{
	if (msg != NULL && len > 0)
		snprintf(msg, len, "%s: %s", what, why);
	return code != 0 ? code : -1;
}

int
bench_vk_version(void)
{
	return VkFFTGetVersion();
}

// bench_vk_plan fills VkFFT's configuration for an out-of-place transform
// (isInputFormatted: read from in, write to buffer = out; R2C strides are
// VkFFT's defaults for that mode: n reals in, n/2 + 1 complex out) and
// initializes the application. VkFFT's axes run from the contiguous one:
// size[0] = dims[rank-1].
int
bench_vk_plan(bench_vk **plan, int rank, const int64_t *dims, int64_t batch,
    int r2c, int half, const void *in, void *out, void *stream, char *msg,
    size_t len)
{
	*plan = NULL;
	if (rank < 1 || rank > 3 || batch < 1)
		return vk_fail(msg, len, -1, "plan", "bad shape");
	bench_vk *p = (bench_vk *) calloc(1, sizeof *p);
	if (p == NULL)
		return vk_fail(msg, len, -1, "plan", "out of memory");
	p->stream        = (cudaStream_t) stream;
	p->in            = (void *) in;
	p->out           = out;
	CUresult    cr   = cuInit(0);
	cudaError_t ce   = cudaSuccess;
	int         cdev = 0;
	if (cr == CUDA_SUCCESS)
		ce = cudaGetDevice(&cdev);
	if (cr == CUDA_SUCCESS && ce == cudaSuccess)
		cr = cuDeviceGet(&p->dev, cdev);
	if (cr != CUDA_SUCCESS || ce != cudaSuccess) {
		free(p);
		return vk_fail(msg, len, -1, "plan", "no CUDA device");
	}

	uint64_t points = (uint64_t) batch, half_points = (uint64_t) batch;
	for (int i = 0; i < rank; i++) {
		points *= (uint64_t) dims[i];
		half_points *= i == rank - 1 && r2c ? (uint64_t) dims[i] / 2 + 1
		                                    : (uint64_t) dims[i];
	}
	uint64_t real_bytes = half ? 2 : 4; // one real element
	p->in_bytes         = points * real_bytes * (r2c ? 1 : 2);
	p->out_bytes        = half_points * real_bytes * 2;

	VkFFTConfiguration c = {};
	c.FFTdim             = (uint64_t) rank;
	for (int i = 0; i < rank; i++)
		c.size[i] = (uint64_t) dims[rank - 1 - i];
	c.numberBatches       = (uint64_t) batch;
	c.performR2C          = r2c ? 1 : 0;
	c.halfPrecision       = half ? 1 : 0;
	c.makeForwardPlanOnly = 1;
	c.device              = &p->dev;
	c.stream              = &p->stream;
	c.num_streams         = 1;
	c.isInputFormatted    = 1;
	c.inputBuffer         = &p->in;
	c.inputBufferSize     = &p->in_bytes;
	c.buffer              = &p->out;
	c.bufferSize          = &p->out_bytes;
	VkFFTResult r         = initializeVkFFT(&p->app, c);
	if (r != VKFFT_SUCCESS) {
		char why[160];
		snprintf(why, sizeof why, "VkFFT error %d (%s)", (int) r,
		    getVkFFTErrorString(r));
		free(p);
		return vk_fail(msg, len, (int) r, "initializeVkFFT", why);
	}
	p->inited = true;
	*plan     = p;
	return 0;
}

// vk_launch appends one forward transform to the plan's stream.
static VkFFTResult
vk_launch(bench_vk *p)
{
	VkFFTLaunchParams lp = {};
	lp.inputBuffer       = &p->in;
	lp.buffer            = &p->out;
	return VkFFTAppend(&p->app, -1, &lp);
}

int
bench_vk_time(bench_vk *p, int runs, double *ms, char *msg, size_t len)
{
	*ms = -1;
	if (p == NULL || runs < 1)
		return vk_fail(msg, len, -1, "time", "no plan");
	cudaEvent_t a, b;
	if (cudaEventCreate(&a) != cudaSuccess)
		return vk_fail(msg, len, -1, "time", "cudaEventCreate");
	if (cudaEventCreate(&b) != cudaSuccess) {
		cudaEventDestroy(a);
		return vk_fail(msg, len, -1, "time", "cudaEventCreate");
	}
	std::vector<float> t;
	VkFFTResult        r = VKFFT_SUCCESS;
	for (int i = 0; i < 5 && r == VKFFT_SUCCESS; i++)
		r = vk_launch(p);
	cudaError_t ce = cudaStreamSynchronize(p->stream);
	for (int i = 0; i < runs && r == VKFFT_SUCCESS && ce == cudaSuccess;
	     i++) {
		float x = 0;
		ce      = cudaEventRecord(a, p->stream);
		if (ce == cudaSuccess)
			r = vk_launch(p);
		if (ce == cudaSuccess && r == VKFFT_SUCCESS)
			ce = cudaEventRecord(b, p->stream);
		if (ce == cudaSuccess && r == VKFFT_SUCCESS)
			ce = cudaEventSynchronize(b);
		if (ce == cudaSuccess && r == VKFFT_SUCCESS)
			ce = cudaEventElapsedTime(&x, a, b);
		t.push_back(x);
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	if (r != VKFFT_SUCCESS)
		return vk_fail(
		    msg, len, (int) r, "VkFFTAppend", getVkFFTErrorString(r));
	if (ce != cudaSuccess)
		return vk_fail(msg, len, -1, "time", cudaGetErrorString(ce));
	std::sort(t.begin(), t.end());
	*ms = t[t.size() / 2];
	return 0;
}

int
bench_vk_exec(bench_vk *p, char *msg, size_t len)
{
	if (p == NULL)
		return vk_fail(msg, len, -1, "exec", "no plan");
	VkFFTResult r = vk_launch(p);
	if (r != VKFFT_SUCCESS)
		return vk_fail(
		    msg, len, (int) r, "VkFFTAppend", getVkFFTErrorString(r));
	cudaError_t ce = cudaStreamSynchronize(p->stream);
	if (ce != cudaSuccess)
		return vk_fail(msg, len, -1, "exec", cudaGetErrorString(ce));
	return 0;
}

void
bench_vk_destroy(bench_vk *p)
{
	if (p == NULL)
		return;
	if (p->inited)
		deleteVkFFT(&p->app);
	free(p);
}

#else // !FFTD_BENCH_VKFFT: the bench runs without the VkFFT columns.

int
bench_vk_version(void)
{
	return 0;
}

int
bench_vk_plan(bench_vk **plan, int rank, const int64_t *dims, int64_t batch,
    int r2c, int half, const void *in, void *out, void *stream, char *msg,
    size_t len)
{
	(void) rank, (void) dims, (void) batch, (void) r2c, (void) half;
	(void) in, (void) out, (void) stream;
	*plan = NULL;
	if (msg != NULL && len > 0)
		snprintf(msg, len, "not built (VKFFT_DIR unset)");
	return -1;
}

int
bench_vk_time(bench_vk *plan, int runs, double *ms, char *msg, size_t len)
{
	(void) plan, (void) runs;
	*ms = -1;
	if (msg != NULL && len > 0)
		snprintf(msg, len, "not built (VKFFT_DIR unset)");
	return -1;
}

int
bench_vk_exec(bench_vk *plan, char *msg, size_t len)
{
	(void) plan;
	if (msg != NULL && len > 0)
		snprintf(msg, len, "not built (VKFFT_DIR unset)");
	return -1;
}

void
bench_vk_destroy(bench_vk *plan)
{
	(void) plan;
}

#endif // FFTD_BENCH_VKFFT

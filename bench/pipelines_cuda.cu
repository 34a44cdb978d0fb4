// SPDX-License-Identifier: MIT
//
// pipelines_cuda.cu — bench/pipelines' in-process GPU figures: case (c),
// the matched-filter bank as a careful CUDA programmer writes it without
// fusion (the bank resident on the GPU; per batch of templates a product
// kernel, a batched cuFFT C2C inverse in place, a peak kernel), and the
// device-to-device copy rate that the byte counts are read against. No
// daemon: this is what fftd's bank (case a) has to beat. C ABI
// (pipelines.h); built with nvcc and linked into the C program.
//
// The product kernel reads w = D/S and 1/S (computed once on the host per
// size: a property of the data, not of a template) and h over [kmin, kmax),
// writes q over all N (zero outside [kmin, kmax)) and sums |h|^2/S on the
// way (a block sum, one double atomic per block), so sigma costs no pass
// of its own. The peak kernel reads z over [t_begin, t_end) once and keeps
// max |z|^2 with its first sample as one 64-bit key (the float's bits above
// the complement of the sample), one atomicMax per block. Keys and sums of
// the whole bank stay on the device and are read back once per pass.

#include <cuda_runtime.h>
#include <cufft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipelines.h"

#define THREADS 256

// product_kernel: q_b = conj(h_{first+b}) w over [kmin, kmax), 0 elsewhere;
// sig[first + b] += sum |h|^2 / S. grid.y is the template in the batch.
__global__ void
product_kernel(const float2 *__restrict__ bank, const float2 *__restrict__ w,
    const float *__restrict__ inv, float2 *__restrict__ q, double *sig,
    int64_t nbins, int64_t n, int64_t kmin, int64_t kmax, int64_t first)
{
	int           b   = blockIdx.y;
	const float2 *h   = bank + (first + b) * nbins;
	float2       *qb  = q + (int64_t) b * n;
	float         acc = 0;
	for (int64_t k = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; k < n;
	     k += (int64_t) gridDim.x * blockDim.x) {
		float2 r = make_float2(0.f, 0.f);
		if (k >= kmin && k < kmax) {
			float2 hv = h[k], wv = w[k];
			r.x = hv.x * wv.x + hv.y * wv.y;
			r.y = hv.x * wv.y - hv.y * wv.x;
			acc += (hv.x * hv.x + hv.y * hv.y) * inv[k];
		}
		qb[k] = r;
	}
	__shared__ float part[THREADS / 32];
	for (int o = 16; o > 0; o >>= 1) {
		acc += __shfl_down_sync(0xffffffffu, acc, o);
	}
	if ((threadIdx.x & 31) == 0) {
		part[threadIdx.x / 32] = acc;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		float s = 0;
		for (int i = 0; i < THREADS / 32; i++) {
			s += part[i];
		}
		atomicAdd(&sig[first + b], (double) s);
	}
}

// peak_kernel: key[first + b] = max over t in [t0, t1) of
// (bits(|z_b(t)|^2) << 32 | ~t): the largest |z|^2, the first sample on
// ties (|z|^2 >= 0, so its bits order as the value does).
__global__ void
peak_kernel(const float2 *__restrict__ z, unsigned long long *key, int64_t n,
    int64_t t0, int64_t t1, int64_t first)
{
	int                b    = blockIdx.y;
	const float2      *zb   = z + (int64_t) b * n;
	unsigned long long best = 0;
	for (int64_t t = t0 + (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
	     t < t1; t += (int64_t) gridDim.x * blockDim.x) {
		float2             v = zb[t];
		float              m = v.x * v.x + v.y * v.y;
		unsigned long long k
		    = ((unsigned long long) __float_as_uint(m) << 32)
		    | (unsigned long long) (0xffffffffu - (unsigned) t);
		best = k > best ? k : best;
	}
	__shared__ unsigned long long part[THREADS / 32];
	for (int o = 16; o > 0; o >>= 1) {
		unsigned long long v = __shfl_down_sync(0xffffffffu, best, o);
		best                 = v > best ? v : best;
	}
	if ((threadIdx.x & 31) == 0) {
		part[threadIdx.x / 32] = best;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int i = 1; i < THREADS / 32; i++) {
			best = part[i] > best ? part[i] : best;
		}
		atomicMax(&key[first + b], best);
	}
}

int
pl_cuda_device(char *name, size_t len)
{
	int         nd = 0;
	cudaError_t e  = cudaGetDeviceCount(&nd);
	if (e != cudaSuccess || nd == 0) {
		snprintf(name, len, "no CUDA device (%s)",
		    e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
		return 0;
	}
	cudaDeviceProp p;
	if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
		snprintf(name, len, "no CUDA device (properties)");
		return 0;
	}
	snprintf(name, len, "%s", p.name);
	return 1;
}

void
pl_cuda_versions(int *runtime, int *cufft)
{
	*runtime = 0;
	*cufft   = 0;
	cudaRuntimeGetVersion(runtime);
	cufftGetVersion(cufft);
}

// cmp_float orders floats for qsort.
static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *) a, y = *(const float *) b;
	return x < y ? -1 : x > y;
}

int
pl_cuda_copy_rate(size_t bytes, int reps, double *bps, char *err, size_t errlen)
{
	void       *a = NULL, *b = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	float      *ms  = (float *) calloc((size_t) reps, sizeof(float));
	cudaError_t e   = cudaSuccess;
	int         ret = -1;
	if (ms == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((e = cudaMalloc(&a, bytes)) != cudaSuccess
	    || (e = cudaMalloc(&b, bytes)) != cudaSuccess
	    || (e = cudaMemset(a, 1, bytes)) != cudaSuccess
	    || (e = cudaEventCreate(&e0)) != cudaSuccess
	    || (e = cudaEventCreate(&e1)) != cudaSuccess) {
		goto out;
	}
	for (int r = -2; r < reps; r++) {
		if ((e = cudaEventRecord(e0)) != cudaSuccess
		    || (e = cudaMemcpyAsync(
		            b, a, bytes, cudaMemcpyDeviceToDevice))
		        != cudaSuccess
		    || (e = cudaEventRecord(e1)) != cudaSuccess
		    || (e = cudaEventSynchronize(e1)) != cudaSuccess) {
			goto out;
		}
		if (r >= 0
		    && (e = cudaEventElapsedTime(&ms[r], e0, e1))
		        != cudaSuccess) {
			goto out;
		}
	}
	qsort(ms, (size_t) reps, sizeof(float), cmp_float);
	*bps = 2.0 * (double) bytes / (1e-3 * (double) ms[reps / 2]);
	ret  = 0;
out:
	if (ret != 0) {
		snprintf(err, errlen, "%s", cudaGetErrorString(e));
	}
	if (e0 != NULL) {
		cudaEventDestroy(e0);
	}
	if (e1 != NULL) {
		cudaEventDestroy(e1);
	}
	cudaFree(a);
	cudaFree(b);
	free(ms);
	return ret;
}

// cbank is case (c)'s device state.
typedef struct cbank {
	float2             *bank, *w, *q;
	float              *inv;
	double             *sig, *hsig;
	unsigned long long *key, *hkey;
	cufftHandle         plan, tail;
	int                 have_plan, have_tail;
	cudaStream_t        st;
	cudaEvent_t         e0, e1;
} cbank;

// cbank_pass enqueues one pass over the whole bank on s->st.
static cudaError_t
cbank_pass(cbank *s, const pl_inputs *in, int batch)
{
	cudaError_t e;
	size_t      k = (size_t) in->count;
	if ((e = cudaMemsetAsync(s->sig, 0, k * sizeof(double), s->st))
	        != cudaSuccess
	    || (e = cudaMemsetAsync(s->key, 0, k * sizeof(*s->key), s->st))
	        != cudaSuccess) {
		return e;
	}
	int64_t per = (int64_t) THREADS * 4;
	int     gx  = (int) ((in->n + per - 1) / per), gp;
	gx          = gx > 1024 ? 1024 : gx;
	gp          = (int) ((in->t_end - in->t_begin + per - 1) / per);
	gp          = gp > 1024 ? 1024 : gp;
	for (int64_t j = 0; j < in->count; j += batch) {
		int b = in->count - j < batch ? (int) (in->count - j) : batch;
		product_kernel<<<dim3(gx, b), THREADS, 0, s->st>>>(s->bank,
		    s->w, s->inv, s->q, s->sig, in->nbins, in->n, in->kmin,
		    in->kmax, j);
		cufftResult r = cufftExecC2C(b == batch ? s->plan : s->tail,
		    (cufftComplex *) s->q, (cufftComplex *) s->q,
		    CUFFT_INVERSE);
		if (r != CUFFT_SUCCESS) {
			return cudaErrorUnknown;
		}
		peak_kernel<<<dim3(gp, b), THREADS, 0, s->st>>>(
		    s->q, s->key, in->n, in->t_begin, in->t_end, j);
	}
	if ((e = cudaGetLastError()) != cudaSuccess
	    || (e = cudaMemcpyAsync(s->hsig, s->sig, k * sizeof(double),
	            cudaMemcpyDeviceToHost, s->st))
	        != cudaSuccess) {
		return e;
	}
	return cudaMemcpyAsync(s->hkey, s->key, k * sizeof(*s->key),
	    cudaMemcpyDeviceToHost, s->st);
}

// make_plan makes a batched in-place C2C plan of `b` transforms of n.
static int
make_plan(cufftHandle *p, int64_t n64, int b, cudaStream_t st)
{
	int n = (int) n64;
	if (cufftPlanMany(p, 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_C2C, b)
	    != CUFFT_SUCCESS) {
		return -1;
	}
	return cufftSetStream(*p, st) == CUFFT_SUCCESS ? 0 : -1;
}

int
pl_cuda_bank(const pl_inputs *in, int batch, int reps, pl_case *c)
{
	cbank       s;
	size_t      tb  = sizeof(float2) * (size_t) in->nbins;
	size_t      k   = (size_t) in->count;
	double     *sec = (double *) calloc(PL_MAX_REPS, sizeof(double));
	float      *w = NULL, *inv = NULL;
	cudaError_t e     = cudaSuccess;
	const char *what  = "";
	int         ret   = -1;
	int         r     = -1; // repetitions timed (after the warm-up, -1)
	double      total = 0;
	memset(&s, 0, sizeof(s));
	c->templates = in->count;
	if (batch > in->count) {
		batch = (int) in->count;
	}
	if (sec == NULL || pl_weights(in, &w, &inv) != 0) {
		snprintf(c->note, sizeof(c->note), "out of host memory");
		c->failed = 1;
		free(sec);
		return -1;
	}
	what = "allocation";
	if ((e = cudaStreamCreate(&s.st)) != cudaSuccess
	    || (e = cudaEventCreate(&s.e0)) != cudaSuccess
	    || (e = cudaEventCreate(&s.e1)) != cudaSuccess
	    || (e = cudaMalloc((void **) &s.bank, tb * k)) != cudaSuccess
	    || (e = cudaMalloc((void **) &s.w, tb)) != cudaSuccess
	    || (e = cudaMalloc((void **) &s.inv, sizeof(float) * in->nbins))
	        != cudaSuccess
	    || (e = cudaMalloc(
	            (void **) &s.q, sizeof(float2) * (size_t) in->n * batch))
	        != cudaSuccess
	    || (e = cudaMalloc((void **) &s.sig, sizeof(double) * k))
	        != cudaSuccess
	    || (e = cudaMalloc((void **) &s.key, sizeof(*s.key) * k))
	        != cudaSuccess
	    || (e = cudaMallocHost((void **) &s.hsig, sizeof(double) * k))
	        != cudaSuccess
	    || (e = cudaMallocHost((void **) &s.hkey, sizeof(*s.hkey) * k))
	        != cudaSuccess) {
		goto out;
	}
	what = "upload";
	if ((e = cudaMemcpy(s.bank, in->bank, tb * k, cudaMemcpyHostToDevice))
	        != cudaSuccess
	    || (e = cudaMemcpy(s.w, w, tb, cudaMemcpyHostToDevice))
	        != cudaSuccess
	    || (e = cudaMemcpy(s.inv, inv, sizeof(float) * in->nbins,
	            cudaMemcpyHostToDevice))
	        != cudaSuccess) {
		goto out;
	}
	what = "cufftPlanMany";
	e    = cudaErrorUnknown;
	if (make_plan(&s.plan, in->n, batch, s.st) != 0) {
		goto out;
	}
	s.have_plan = 1;
	if (in->count % batch != 0) {
		if (make_plan(&s.tail, in->n, (int) (in->count % batch), s.st)
		    != 0) {
			goto out;
		}
		s.have_tail = 1;
	}
	what = "pass";
	for (; r < 0 || !pl_reps_done(r, reps, total); r++) {
		float ms = 0;
		if ((e = cudaEventRecord(s.e0, s.st)) != cudaSuccess
		    || (e = cbank_pass(&s, in, batch)) != cudaSuccess
		    || (e = cudaEventRecord(s.e1, s.st)) != cudaSuccess
		    || (e = cudaEventSynchronize(s.e1)) != cudaSuccess
		    || (e = cudaEventElapsedTime(&ms, s.e0, s.e1))
		        != cudaSuccess) {
			goto out;
		}
		if (r >= 0) {
			sec[r] = 1e-3 * (double) ms;
			total += sec[r];
		}
	}
	pl_case_times(c, sec, r);
	c->bytes = pl_cuda_passes_bytes(in);
	c->peaks = (pl_peak *) calloc(k, sizeof(pl_peak));
	if (c->peaks != NULL) {
		for (size_t j = 0; j < k; j++) {
			unsigned bits = (unsigned) (s.hkey[j] >> 32);
			float    m;
			memcpy(&m, &bits, sizeof(m));
			c->peaks[j].t = (int64_t) (0xffffffffu
			    - (unsigned) (s.hkey[j] & 0xffffffffu));
			c->peaks[j].rho
			    = sqrt(4.0 * in->delta_f * m / s.hsig[j]);
		}
		c->npeaks = in->count;
	}
	snprintf(c->note, sizeof(c->note),
	    "bank of %lld resident, cuFFT C2C inverse batch %d",
	    (long long) in->count, batch);
	ret = 0;
out:
	if (ret != 0) {
		snprintf(c->note, sizeof(c->note), "%s: %s", what,
		    cudaGetErrorString(e));
		c->failed = 1;
	}
	if (s.have_plan) {
		cufftDestroy(s.plan);
	}
	if (s.have_tail) {
		cufftDestroy(s.tail);
	}
	cudaFree(s.bank);
	cudaFree(s.w);
	cudaFree(s.inv);
	cudaFree(s.q);
	cudaFree(s.sig);
	cudaFree(s.key);
	cudaFreeHost(s.hsig);
	cudaFreeHost(s.hkey);
	if (s.e0 != NULL) {
		cudaEventDestroy(s.e0);
	}
	if (s.e1 != NULL) {
		cudaEventDestroy(s.e1);
	}
	if (s.st != NULL) {
		cudaStreamDestroy(s.st);
	}
	free(sec);
	free(w);
	free(inv);
	return ret;
}

// SPDX-License-Identifier: MIT
//
// cufft_lto.c — bench/cufft_lto: what cuFFT's LTO callbacks cost on this
// GPU, the measurement behind the matched-filter bank's fused engine
// (daemon/backends/cuda_mf.c). The bank's product conj(h) D / S can be
// formed as cuFFT loads its input (a load callback) and only the searched
// samples stored (a store callback: kernels/mf_callbacks.cu, linked by
// cufftXtSetJITCallback); that saves a write and a read of the product
// and half the output, but only pays if cuFFT's kernels with callbacks
// run as fast as without. This times the batched inverse C2C f32 of the
// bank's sizes (2^17, 2^20 samples; batches of 32 and 128) plain and with
// the load, the store and both callbacks, in place and out of place, next
// to the device copy rate, and prints µs per transform (CUDA events,
// best of 20 after a warm-up). On the lent H100 (cuFFT 12.0, CUDA 13):
// plain 1.61 µs at 2^17, with both callbacks 3.44; at 2^20 12.2 and 26.2;
// a separate product pass costs ~0.35 µs at 2^17 — so the engine keeps
// cuFFT plain and fuses the steps around it instead.
//
// Usage: cufft_lto [--json FILE]. Needs a GPU (exits 0 with a note when
// there is none).

#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf_lto.h"

static void *g_tpl, *g_w, *g_win, *g_q, *g_z, *g_dp;

// time_plan is the best of 20 runs of one plan variant, µs per transform
// (negative: cuFFT refused the variant, its cufftResult negated).
static double
time_plan(long long n, int batch, int load, int store, int oop)
{
	cufftHandle h;
	void       *info = g_dp, *work = NULL;
	size_t      ws = 0;
	cufftResult r  = cufftCreate(&h);
	if (r == CUFFT_SUCCESS) {
		r = cufftSetAutoAllocation(h, 0);
	}
	if (r == CUFFT_SUCCESS && load) {
		r = cufftXtSetJITCallback(h, FFTD__MF_CB_LOAD, fftd__mf_cb_lto,
		    fftd__mf_cb_lto_size, CUFFT_CB_LD_COMPLEX, &info);
	}
	if (r == CUFFT_SUCCESS && store) {
		r = cufftXtSetJITCallback(h, FFTD__MF_CB_STORE, fftd__mf_cb_lto,
		    fftd__mf_cb_lto_size, CUFFT_CB_ST_COMPLEX, &info);
	}
	if (r == CUFFT_SUCCESS) {
		r = cufftMakePlanMany64(
		    h, 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_C2C, batch, &ws);
	}
	if (r == CUFFT_SUCCESS && cudaMalloc(&work, ws + 1) != cudaSuccess) {
		r = CUFFT_ALLOC_FAILED;
	}
	if (r == CUFFT_SUCCESS) {
		r = cufftSetWorkArea(h, work);
	}
	if (r != CUFFT_SUCCESS) {
		cufftDestroy(h);
		cudaFree(work);
		return -(double) r;
	}
	fftd__mf_cb_params p = { g_tpl, g_w, g_win, (unsigned) n,
		(unsigned) (n / 2 + 1), (unsigned) (n / 1000),
		(unsigned) (n / 2 + 1), (unsigned) batch, (unsigned) (n / 4),
		(unsigned) (n / 2), 1 };
	cudaMemcpy(g_dp, &p, sizeof(p), cudaMemcpyHostToDevice);
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	float best = 1e30f;
	for (int i = 0; i < 21; i++) {
		cudaEventRecord(a, 0);
		cufftExecC2C(h, g_q, oop ? g_z : g_q, CUFFT_INVERSE);
		cudaEventRecord(b, 0);
		cudaEventSynchronize(b);
		float ms;
		cudaEventElapsedTime(&ms, a, b);
		if (i > 0 && ms < best) {
			best = ms;
		}
	}
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	cudaFree(work);
	cufftDestroy(h);
	return best * 1e3 / batch;
}

int
main(int argc, char **argv)
{
	const char *json
	    = argc == 3 && strcmp(argv[1], "--json") == 0 ? argv[2] : NULL;
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("cufft_lto: no GPU, nothing measured\n");
		return 0;
	}
	struct cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	size_t big = (size_t) 1 << 30;
	if (cudaMalloc(&g_tpl, big) || cudaMalloc(&g_w, 64 << 20)
	    || cudaMalloc(&g_win, big) || cudaMalloc(&g_q, big)
	    || cudaMalloc(&g_z, big) || cudaMalloc(&g_dp, 256)) {
		fprintf(stderr, "cufft_lto: cudaMalloc failed\n");
		return 1;
	}
	cudaMemset(g_tpl, 0x3c, big);
	cudaMemset(g_q, 0x3c, big);
	cudaMemset(g_w, 0x3c, 64 << 20);
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	float copy = 1e30f;
	for (int i = 0; i < 10; i++) {
		cudaEventRecord(a, 0);
		cudaMemcpy(g_z, g_q, big, cudaMemcpyDeviceToDevice);
		cudaEventRecord(b, 0);
		cudaEventSynchronize(b);
		float ms;
		cudaEventElapsedTime(&ms, a, b);
		copy = ms < copy ? ms : copy;
	}
	double gbs = 2.0 * (double) big / (copy * 1e-3) / 1e9;
	FILE  *f   = json != NULL ? fopen(json, "w") : NULL;
	printf("%s: device copy %.0f GB/s (read + write)\n", prop.name, gbs);
	printf("µs per transform, inverse C2C f32 (in place / out of place)\n");
	printf("%9s %6s %13s %13s %13s %13s %9s\n", "n", "batch", "plain",
	    "load cb", "store cb", "both cb", "1 pass");
	if (f != NULL) {
		fprintf(f,
		    "{\"device\": \"%s\", \"copy_gbs\": %.1f, \"rows\": [",
		    prop.name, gbs);
	}
	static const long long ns[] = { 131072, 1048576 };
	static const int       bs[] = { 32, 128 };
	const char            *sep  = "";
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			long long n  = ns[i];
			int       bt = bs[j];
			double    t[4][2];
			for (int v = 0; v < 4; v++) {
				for (int o = 0; o < 2; o++) {
					t[v][o]
					    = time_plan(n, bt, v == 1 || v == 3,
					        v == 2 || v == 3, o);
				}
			}
			double pass = 2.0 * (double) n * 8 / (gbs * 1e3);
			printf("%9lld %6d %6.2f/%6.2f %6.2f/%6.2f %6.2f/%6.2f "
			       "%6.2f/%6.2f %9.2f\n",
			    n, bt, t[0][0], t[0][1], t[1][0], t[1][1], t[2][0],
			    t[2][1], t[3][0], t[3][1], pass);
			if (f != NULL) {
				fprintf(f,
				    "%s{\"n\": %lld, \"batch\": %d, \"plain\": "
				    "[%.3f, %.3f], \"load\": [%.3f, %.3f], "
				    "\"store\": [%.3f, %.3f], \"both\": [%.3f, "
				    "%.3f], \"one_pass_us\": %.3f}",
				    sep, n, bt, t[0][0], t[0][1], t[1][0],
				    t[1][1], t[2][0], t[2][1], t[3][0], t[3][1],
				    pass);
				sep = ", ";
			}
		}
	}
	printf("(1 pass: one read and one write of a transform's data at the "
	       "copy rate; a negative time is cuFFT's error code)\n");
	if (f != NULL) {
		fprintf(f, "]}\n");
		fclose(f);
	}
	return 0;
}

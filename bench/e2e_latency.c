// SPDX-License-Identifier: MIT
//
// e2e_latency.c — bench/e2e's small-request round trips (see e2e.h): f32
// C2C N=1024 batch 1, inline and through a shared buffer, and pings, each
// LAT_ROUNDS after LAT_WARMUP; p50/p99 in microseconds.

#include "e2e.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// lat_finish sorts n round trips (seconds) into a figure in us.
static void
lat_finish(lat_result *L, double *v, int n)
{
	qsort(v, (size_t) n, sizeof(double), e2e_cmp_double);
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

// e2e_lat_print prints a round-trip figure's line.
void
e2e_lat_print(const char *what, const lat_result *L)
{
	if (L->state == 1) {
		printf("  %-30s p50 %7.1f us  p99 %7.1f us  (min %.1f, mean "
		       "%.1f, max %.1f; %d round trips)\n",
		    what, L->p50, L->p99, L->min, L->mean, L->max, L->n);
	} else if (L->state != 0) {
		printf("  %-30s %s\n", what, L->why);
	}
}

// e2e_run_latency measures small-request round trips: inline,
// through a shared buffer, and pings.
void
e2e_run_latency(bench *B)
{
	static const bcase lc
	    = { "lat", "f32 C2C N=1024 batch 1", FFTD_C2C, FFTD_F32, 1024 };
	fftd_plan_desc d;
	fftd_plan     *pl = NULL;
	double        *v  = e2e_xmalloc(sizeof(double) * LAT_ROUNDS);
	e2e_desc_for(&lc, 1, &d);
	int rv = fftd_plan_create(B->client, &d, &pl);
	if (rv != FFTD_OK) {
		B->lat_inline.state = -2;
		snprintf(B->lat_inline.why, sizeof(B->lat_inline.why),
		    "plan: %s", e2e_ferr(rv));
		free(v);
		return;
	}
	size_t inb = e2e_case_in_per(&lc), outb = e2e_case_out_per(&lc);
	for (int mode = 0; mode < 3; mode++) {
		lat_result  *L  = mode == 0 ? &B->lat_inline
		      : mode == 1           ? &B->lat_shm
		                            : &B->lat_ping;
		fftd_buffer *bi = NULL, *bo = NULL;
		void        *in = NULL, *out = NULL;
		if (mode == 0) {
			in  = e2e_xmalloc_touched(inb);
			out = e2e_xmalloc_touched(outb);
		} else if (mode == 1) {
			rv = fftd_buffer_create(B->client, inb, &bi);
			if (rv == FFTD_OK) {
				rv = fftd_buffer_create(B->client, outb, &bo);
			}
			if (rv != FFTD_OK) {
				L->state = -1;
				snprintf(L->why, sizeof(L->why),
				    "unavailable: %s", e2e_ferr(rv));
				fftd_buffer_destroy(bi);
				continue;
			}
			in  = fftd_buffer_data(bi);
			out = fftd_buffer_data(bo);
		}
		if (in != NULL) {
			e2e_fill_input(&lc, in, 1, 9);
		}
		int n = 0;
		for (int r = -LAT_WARMUP; r < LAT_ROUNDS; r++) {
			double t0 = fftd__mono_s();
			rv        = mode == 2 ? fftd_ping(B->client, NULL)
			                      : fftd_execute(pl, in, out);
			double t1 = fftd__mono_s();
			if (rv != FFTD_OK) {
				L->state = -2;
				snprintf(L->why, sizeof(L->why),
				    "failed: %.180s", e2e_ferr(rv));
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
	e2e_lat_print("inline execute", &B->lat_inline);
	e2e_lat_print("shared-memory execute", &B->lat_shm);
	e2e_lat_print("ping", &B->lat_ping);
}

// SPDX-License-Identifier: MIT
//
// membw.c — the host's memory copy bandwidth with 1, 2, 4, ... threads, to
// read bench/load's figures against: an inline fftd request costs its
// client a copy in and a copy out beside the DMA, so a host whose memory
// is saturated bounds the throughput of inline clients whatever the GPUs
// do.
//
//   membw [--mib N] [--threads MAX] [--json FILE]
//
// Each thread copies its own two N MiB (default 256) buffers into each
// other for ~0.5 s after a warm-up pass; printed per thread count: copied
// bytes per second (GB/s, 1e9), and memory traffic (read + write, twice
// that). The threads are not pinned: the kernel places them as it would
// load's clients.

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "clock.h"

typedef struct worker {
	pthread_t          t;
	size_t             bytes;
	char              *a, *b;
	double             copied; // bytes, in the timed phase
	pthread_barrier_t *start;
	atomic_bool       *stop;
} worker;

static void *
worker_main(void *arg)
{
	worker *w = arg;
	memcpy(w->b, w->a, w->bytes); // warm-up: fault every page in
	memcpy(w->a, w->b, w->bytes);
	pthread_barrier_wait(w->start);
	int k = 0;
	while (!atomic_load(w->stop)) {
		if (k++ & 1) {
			memcpy(w->a, w->b, w->bytes);
		} else {
			memcpy(w->b, w->a, w->bytes);
		}
		w->copied += (double) w->bytes;
	}
	return NULL;
}

// run copies with n threads and returns bytes copied per second.
static double
run(int n, size_t bytes)
{
	worker           *w = calloc((size_t) n, sizeof(*w));
	pthread_barrier_t start;
	atomic_bool       stop = false;
	if (w == NULL) {
		return -1;
	}
	pthread_barrier_init(&start, NULL, (unsigned) n + 1);
	int made = 0;
	for (int i = 0; i < n; i++) {
		w[i].bytes = bytes;
		w[i].a     = malloc(bytes);
		w[i].b     = malloc(bytes);
		w[i].start = &start;
		w[i].stop  = &stop;
		if (w[i].a == NULL || w[i].b == NULL) {
			fprintf(
			    stderr, "membw: out of memory at %d threads\n", n);
			exit(1);
		}
		memset(w[i].a, i + 1, bytes);
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "membw: pthread_create: %s\n",
			    strerror(errno));
			exit(1);
		}
		made++;
	}
	pthread_barrier_wait(&start);
	double          t0   = fftd__mono_s();
	struct timespec half = { 0, 500000000 };
	nanosleep(&half, NULL);
	atomic_store(&stop, true);
	double copied = 0;
	for (int i = 0; i < made; i++) {
		pthread_join(w[i].t, NULL);
		copied += w[i].copied;
		free(w[i].a);
		free(w[i].b);
	}
	// Each thread finishes the copy in flight: count the time to the last.
	double dt = fftd__mono_s() - t0;
	pthread_barrier_destroy(&start);
	free(w);
	return copied / dt;
}

int
main(int argc, char **argv)
{
	size_t      mib  = 256;
	long        maxt = sysconf(_SC_NPROCESSORS_ONLN);
	const char *json = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
			mib = (size_t) atol(argv[++i]);
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			maxt = atol(argv[++i]);
		} else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
			json = argv[++i];
		} else {
			fprintf(stderr,
			    "usage: membw [--mib N] [--threads MAX] [--json "
			    "FILE]\n");
			return 2;
		}
	}
	if (mib == 0 || maxt < 1) {
		fprintf(
		    stderr, "membw: --mib and --threads must be positive\n");
		return 2;
	}
	FILE *jf = NULL;
	if (json != NULL && (jf = fopen(json, "w")) == NULL) {
		fprintf(stderr, "membw: %s: %s\n", json, strerror(errno));
		return 1;
	}
	printf("host memory copy, %zu MiB per buffer, %ld CPUs online\n", mib,
	    sysconf(_SC_NPROCESSORS_ONLN));
	printf("%8s %14s %16s\n", "threads", "copy GB/s", "traffic GB/s");
	if (jf != NULL) {
		fprintf(jf, "{\"bench\": \"membw\", \"mib\": %zu, \"runs\": [",
		    mib);
	}
	int first = 1;
	for (long n = 1;; n *= 2) {
		if (n > maxt) {
			n = maxt;
		}
		double r = run((int) n, mib << 20);
		printf("%8ld %14.1f %16.1f\n", n, r / 1e9, 2 * r / 1e9);
		fflush(stdout);
		if (jf != NULL) {
			fprintf(
			    jf, "%s{\"threads\": %ld", first ? "" : ", ", n);
			bench_json_field(jf, "copy_gbps", r / 1e9);
			fprintf(jf, "}");
			first = 0;
		}
		if (n == maxt) {
			break;
		}
	}
	if (jf != NULL) {
		fprintf(jf, "]}\n");
		fclose(jf);
	}
	return 0;
}

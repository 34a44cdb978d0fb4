// SPDX-License-Identifier: MIT
//
// soak_probe.c — what bench/soak measures besides its clients (soak.c says
// what the soak is): the daemon's level (RSS, fds and mappings from /proc,
// plans, sessions, channels and device memory from its statistics) and the
// well-behaved client that pings it every PING_MS, with the quantiles of
// its round trips.

#include <dirent.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/daemon.h"
#include "clock.h"
#include "fftd.h"
#include "soak.h"

// --- the daemon's level ---------------------------------------------------

// count_lines counts the lines of a /proc file (-1 if unreadable).
static long
count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	long n = 0;
	int  ch;
	while ((ch = getc(f)) != EOF) {
		n += ch == '\n';
	}
	fclose(f);
	return n;
}

// soak_take_level reads the daemon's RSS, fds and mappings from /proc and its
// plans, sessions, channels and device memory from its statistics.
void
soak_take_level(pid_t pid, fftd_client *ctl, level *L)
{
	char path[64], line[256];
	L->rss_kb = L->fds = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	FILE *f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			L->rss_kb = atol(line + 6);
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	DIR *d = opendir(path);
	if (d != NULL) {
		L->fds = 0;
		for (struct dirent *e; (e = readdir(d)) != NULL;) {
			L->fds += e->d_name[0] != '.';
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	L->maps = count_lines(path);
	fftd_stats s;
	L->plans = L->sessions = L->channels = L->dev_used = -1;
	if (fftd_get_stats(ctl, &s) == FFTD_OK) {
		L->plans    = (int64_t) s.plans;
		L->sessions = (int64_t) s.sessions;
		L->channels = (int64_t) s.stream_channels;
	}
	fftd_device_stats ds[FFTD_MAX_DEVICES];
	int               n = 0;
	if (fftd_get_device_stats(ctl, ds, FFTD_MAX_DEVICES, &n) == FFTD_OK) {
		int64_t used = 0, any = 0;
		for (int i = 0; i < n && i < FFTD_MAX_DEVICES; i++) {
			any |= ds[i].memory_bytes > 0; // 0: the CPU
			used += (int64_t) ds[i].memory_used_bytes;
		}
		L->dev_used = any ? used : -1;
	}
}

// --- the well-behaved client: a ping every PING_MS ----------------------

// soak_ping_main pings every PING_MS until told to stop, keeping the round
// trips (at most cap of them) and counting failures.
void *
soak_ping_main(void *arg)
{
	pinger *pg = arg;
	while (!atomic_load(&pg->stop)) {
		double    rtt = 0;
		long long t0  = fftd__mono_ms();
		int       rv  = fftd_ping(pg->c, &rtt);
		if (rv != FFTD_OK) {
			pg->failed++;
		} else if (pg->n < pg->cap) {
			pg->us[pg->n++] = (float) rtt;
		}
		long long left = PING_MS - (fftd__mono_ms() - t0);
		if (left > 0) {
			fftd_test_sleep_ms((int) left);
		}
	}
	return NULL;
}

// cmp_float orders floats for qsort.
static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *) a, y = *(const float *) b;
	return (x > y) - (x < y);
}

// soak_pct is the p-quantile of v[0..n) (sorted in place); NAN when empty.
double
soak_pct(float *v, size_t n, double p)
{
	if (n == 0) {
		return NAN;
	}
	qsort(v, n, sizeof(*v), cmp_float);
	size_t i = (size_t) ceil(p * (double) n);
	return v[i == 0 ? 0 : i - 1];
}

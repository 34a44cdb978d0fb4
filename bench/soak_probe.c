// SPDX-License-Identifier: MIT
//
// soak_probe.c — what bench/soak measures besides its clients (soak.c says
// what the soak is): the daemon's level (RSS, fds and mappings from /proc,
// plans, sessions, channels and device memory from its statistics), the
// well-behaved clients that ping it every PING_MS (the ping process and
// the soak's own thread), and the figures of both, printed and as JSON:
// the levels, the pings' quantiles and where their time went.

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/daemon.h"
#include "clock.h"
#include "fftd.h"
#include "json.h"
#include "soak.h"
#include "../client/client_impl.h"

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
	while (!atomic_load(pg->stop)) {
		double    us[4];
		long long t0   = fftd__mono_ms();
		uint64_t  sent = fftd__mono_ns();
		int       rv   = fftd__ping_split(pg->c, us);
		if (rv != FFTD_OK) {
			pg->failed++;
		} else if (pg->n < pg->cap) {
			for (int k = 0; k < 3; k++) {
				pg->split[3 * pg->n + k] = (float) us[k + 1];
			}
			if (pg->sent_ns != NULL) {
				pg->sent_ns[pg->n] = sent;
			}
			pg->us[pg->n++] = (float) us[0];
			if (pg->published != NULL) {
				atomic_store(pg->published, pg->n);
			}
		}
		long long left = PING_MS - (fftd__mono_ms() - t0);
		if (left > 0) {
			fftd_test_sleep_ms((int) left);
		}
	}
	return NULL;
}

// soak_ping_process: see soak.h.
int
soak_ping_process(int argc, char **argv)
{
	if (argc < 1) {
		return 1;
	}
	int fd = open(argv[0], O_RDWR);
	if (fd < 0) {
		return 1;
	}
	shared *sh = mmap(
	    NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED) {
		return 1;
	}
	pinger pg = { .stop = &sh->ping.stop,
		.published  = &sh->ping.n,
		.us         = sh->ping.us,
		.split      = sh->ping.split,
		.sent_ns    = sh->ping.sent_ns,
		.cap        = PING_CAP };
	if (fftd_client_open(&pg.c, sh->url, 30000) != FFTD_OK) {
		fprintf(stderr, "soak-ping: %s\n", fftd_last_error());
		return 1;
	}
	atomic_store(&sh->ping.ready, 1);
	soak_ping_main(&pg);
	atomic_store(&sh->ping.failed, pg.failed);
	fftd_client_close(pg.c);
	munmap(sh, sizeof(shared));
	return 0;
}

// soak_ping_split prints where the pings spent their time (soak.h).
void
soak_ping_split(const pinger *pg, FILE *f, FILE *json)
{
	static const char *const name[3] = { "to_daemon", "in_daemon", "back" };
	float                   *v       = malloc((pg->n + 1) * sizeof(float));
	double                   p99[3], slow[3] = { 0, 0, 0 };
	size_t                   nslow = 0;
	for (size_t i = 0; i < pg->n; i++) {
		// pg->us may be sorted already: a ping's trip is its stages'
		// sum
		const float *sp = pg->split + 3 * i;
		if (!isnan(sp[0]) && sp[0] + sp[1] + sp[2] > PING_TARGET_US) {
			nslow++;
			for (int k = 0; k < 3; k++) {
				slow[k] += pg->split[3 * i + k];
			}
		}
	}
	for (int k = 0; k < 3; k++) {
		size_t m = 0;
		for (size_t i = 0; v != NULL && i < pg->n; i++) {
			if (!isnan(pg->split[3 * i + k])) {
				v[m++] = pg->split[3 * i + k];
			}
		}
		p99[k]  = soak_pct(v, m, 0.99);
		slow[k] = nslow ? slow[k] / (double) nslow : NAN;
	}
	free(v);
	if (f != NULL)
		fprintf(f,
		    "ping split (us; to the daemon's handler, in it, back): "
		    "p99 %.0f, "
		    "%.0f, %.0f; mean of the %zu pings over %.0f us: %.0f, "
		    "%.0f, "
		    "%.0f\n",
		    p99[0], p99[1], p99[2], nslow, PING_TARGET_US, slow[0],
		    slow[1], slow[2]);
	for (int k = 0; json != NULL && k < 3; k++) {
		char key[48];
		snprintf(key, sizeof(key), "split_p99_%s", name[k]);
		bench_json_field(json, key, p99[k]);
		snprintf(key, sizeof(key), "split_slow_mean_%s", name[k]);
		bench_json_field(json, key, slow[k]);
	}
	if (json != NULL) {
		bench_json_field(json, "slow", (double) nslow);
	}
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

// --- the figures: levels and pings, printed and as JSON ----------------

// soak_print_level: see soak.h.
void
soak_print_level(FILE *f, const char *name, const level *L)
{
	char dev[32];
	if (L->dev_used < 0) {
		snprintf(dev, sizeof(dev), "n/a");
	} else {
		snprintf(dev, sizeof(dev), "%" PRId64, L->dev_used);
	}
	fprintf(f,
	    "%-10s %8.0f %10ld %6ld %6ld %6" PRId64 " %8" PRId64 " %8" PRId64
	    " %12s\n",
	    name, L->t, L->rss_kb, L->fds, L->maps, L->plans, L->sessions,
	    L->channels, dev);
}

// soak_json_level: see soak.h.
void
soak_json_level(FILE *f, const char *key, const level *L)
{
	fprintf(f, ", \"%s\": {\"t\": %.1f", key, L->t);
	bench_json_field(f, "rss_kb", (double) L->rss_kb);
	bench_json_field(f, "fds", (double) L->fds);
	bench_json_field(f, "maps", (double) L->maps);
	bench_json_field(f, "plans", (double) L->plans);
	bench_json_field(f, "sessions", (double) L->sessions);
	bench_json_field(f, "stream_channels", (double) L->channels);
	bench_json_field(f, "device_used_bytes",
	    L->dev_used < 0 ? NAN : (double) L->dev_used);
	fprintf(f, "}");
}

// soak_wait_ping_ready: see soak.h.
int
soak_wait_ping_ready(shared *sh, pid_t pid, int ms)
{
	long long until = fftd__mono_ms() + ms;
	while (!atomic_load(&sh->ping.ready)) {
		if (waitpid(pid, NULL, WNOHANG) == pid
		    || fftd__mono_ms() > until) {
			fprintf(
			    stderr, "soak: the ping process did not start\n");
			return -1;
		}
		fftd_test_sleep_ms(5);
	}
	return 0;
}

// soak_write_ping_log: see soak.h.
int
soak_write_ping_log(const char *path, const pinger *pg)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		return -1;
	}
	fprintf(f, "# sent_ns total_us to_daemon_us in_daemon_us back_us\n");
	for (size_t i = 0; i < pg->n; i++) {
		const float *sp = pg->split + 3 * i;
		fprintf(f, "%" PRIu64 " %.1f %.1f %.1f %.1f\n", pg->sent_ns[i],
		    pg->us[i], sp[0], sp[1], sp[2]);
	}
	return fclose(f) == 0 ? 0 : -1;
}

// soak_ping_figures: see soak.h.
soak_ping_figs
soak_ping_figures(pinger *pg, size_t warm)
{
	soak_ping_figs f   = { .worst = 0 };
	size_t         win = 10 * 1000 / PING_MS;
	float         *tmp = malloc(win * sizeof(float));
	for (size_t o = 0; tmp != NULL && o + win <= pg->n; o += win) {
		memcpy(tmp, pg->us + o, win * sizeof(float));
		f.worst = fmax(f.worst, soak_pct(tmp, win, 0.99));
	}
	free(tmp);
	if (pg->n < win) { // no whole window: the run itself is the window
		f.worst = NAN;
	}
	size_t npost = warm <= pg->n ? pg->n - warm : 0;
	float *post  = malloc((npost + 1) * sizeof(float));
	if (post != NULL) {
		memcpy(post, pg->us + (pg->n - npost), npost * sizeof(float));
	}
	f.p99_post = post ? soak_pct(post, npost, 0.99) : NAN;
	free(post);
	f.p50 = soak_pct(pg->us, pg->n, 0.5);
	f.p99 = soak_pct(pg->us, pg->n, 0.99);
	f.max = pg->n ? pg->us[pg->n - 1] : NAN;
	return f;
}

// soak_print_ping: see soak.h.
void
soak_print_ping(
    const char *name, const pinger *pg, const soak_ping_figs *f, int judged)
{
	printf("%s, every %d ms: n %zu, failed %" PRIu64
	       ", p50 %.0f us, p99 %.0f us (after warm-up %.0f us), worst "
	       "10 s p99 %.0f us, max %.0f us%s\n",
	    name, PING_MS, pg->n, pg->failed, f->p50, f->p99, f->p99_post,
	    f->worst, f->max,
	    !judged ? ""
	        : f->p99 < PING_TARGET_US
	            && (isnan(f->worst) || f->worst < PING_TARGET_US)
	        ? "  met (target p99 < 2000 us throughout)"
	        : "  MISSED (target p99 < 2000 us throughout)");
	soak_ping_split(pg, stdout, NULL);
}

// soak_json_ping: see soak.h.
void
soak_json_ping(
    FILE *f, const char *key, const pinger *pg, const soak_ping_figs *x)
{
	fprintf(f, ", \"%s\": {\"n\": %zu", key, pg->n);
	bench_json_field(f, "failed", (double) pg->failed);
	bench_json_field(f, "p50", x->p50);
	bench_json_field(f, "p99", x->p99);
	bench_json_field(f, "p99_after_warmup", x->p99_post);
	bench_json_field(f, "worst_10s_p99", x->worst);
	bench_json_field(f, "max", x->max);
	bench_json_field(f, "target_p99", PING_TARGET_US);
	soak_ping_split(pg, NULL, f);
	fprintf(f, "}");
}

// SPDX-License-Identifier: MIT
//
// soak.c — the soak test (issue 14): many clients, small and large
// requests mixed, clients killed and restarted at random, the daemon's
// resources watched for leaks.
//
//   soak [--spawn FFTD_BIN] [--clients N] [--requests N] [--kill-every-ms M]
//        [--depth D] [--large-every L] [--warmup-frac F] [--timeout S]
//        [--json FILE] [--verbose]
//
// --clients processes (default 16) each keep --depth (4) requests in
// flight: f32 C2C of n = 64, 256, 1000, 1024 (batch 1), and every L-th
// (default 32) a large one of 1, 2 or 4 MiB (C2C 4096 x 32, R2C 65536 x 8,
// C2C 65536 x 8). Client i sends its large requests one of four ways
// (i mod 4): inline (libfftd stages them through its shared buffers),
// inline with FFTD_INLINE_STAGING=0 (through NNG itself), from and into an
// fftd_buffer, through an fftd_stream. Requests are drawn and checked by
// tests/util/load.c's generator (c_k x in, c_k X expected, FFTW reference).
// Every --kill-every-ms (default 500; 0: never) a random client gets
// SIGKILL and is started again.
//
// The run: the first --warmup-frac (0.25) of the requests, then every
// client is stopped (they finish what they have in flight and exit) and,
// once the daemon has closed their sessions, its level is taken: RSS, open
// fds, /proc/PID/maps lines, plans, sessions, stream channels, device
// memory in use (fftd_get_device_stats; n/a on the CPU backend). Then the
// clients run again until --requests are answered, are stopped the same
// way, and the level is taken again: it must be back within 5% (at least
// one for counts), with as many sessions as before. The same figures are
// sampled every second throughout (JSON `samples`). A separate,
// well-behaved client pings every 10 ms from start to end: its p99 is
// reported against the 2 ms target (not part of the exit status: two
// shared cores may not hold it).
//
// Exit status 1 if a result was wrong or lost (answered with an error, a
// refused submit, a client that failed on its own), the level did not come
// back, or the daemon did not stop cleanly. The daemon is $FFTD_BIN (or
// build/fftd), on a fresh ipc socket.

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>

#include "../tests/util/daemon.h"
#include "fftd.h"
#include "json.h"
#include "../tests/util/load.h"

#define MAX_CLIENTS 64
#define MAX_DEPTH 12 // < 13: a slot's reuse changes c_k
#define NSMALL 4
#define NLARGE 3
#define PING_MS 10
#define PING_TARGET_US 2000.0
#define LEVEL_TOL 0.05
#define QUIESCE_MS 20000 // sessions closed after the clients left
#define STOP_MS 60000    // clients finishing what they have in flight

static const int64_t SMALL_N[NSMALL] = { 64, 256, 1000, 1024 };
static const struct {
	fftd_kind kind;
	int64_t   n, batch;
} LARGE[NLARGE] = {
	{ FFTD_C2C, 4096, 32 }, // 1 MiB
	{ FFTD_R2C, 65536, 8 }, // 2 MiB
	{ FFTD_C2C, 65536, 8 }, // 4 MiB
};
enum { M_INLINE, M_NNG, M_SHM, M_STREAM, NMODES };

// --- what the parent and the clients share (a file both map) ---------------

typedef struct cslot {
	// counted across the client's incarnations
	_Atomic uint64_t ok, wrong, failed, refused;
	_Atomic int      running; // set by the child once it submits
	char             why[200];
} cslot;

typedef struct shared {
	char        url[512];
	int         nclients, depth, large_every, timeout_ms;
	_Atomic int stop;
	cslot       c[MAX_CLIENTS];
} shared;

// --- the client
// ---------------------------------------------------------------

typedef struct req_slot {
	fftd_request        *req;
	const fftd_load_gen *g;
	uint64_t             k;
	float               *in, *out; // shm: inside the buffer
} req_slot;

// note_bad records a client's first failure and counts it.
static void
note_bad(cslot *s, _Atomic uint64_t *ctr, const char *fmt, const char *a,
    double x, double y)
{
	if (atomic_fetch_add(ctr, 1) == 0 && s->why[0] == '\0') {
		snprintf(s->why, sizeof(s->why), fmt, a, x, y);
	}
}

// check counts request k's answer st with output out.
static void
check(cslot *s, const fftd_load_gen *g, int st, const float *out, uint64_t k)
{
	if (st != FFTD_OK) {
		note_bad(s, &s->failed, "answered %s (%.0f, %.0f)",
		    fftd_err_name(st), (double) k, 0);
		return;
	}
	double e = fftd_load_gen_error(g, out, k);
	if (e <= fftd_load_gen_bound(g)) {
		atomic_fetch_add(&s->ok, 1);
	} else {
		note_bad(s, &s->wrong, "%s: relative error %.3g > %.3g",
		    "wrong result", e, fftd_load_gen_bound(g));
	}
}

// soak_client runs client INDEX: its requests until the parent says stop,
// then it completes what it has in flight and exits 0.
static int
soak_client(int argc, char **argv)
{
	if (argc < 3) {
		return 2;
	}
	int fd = open(argv[0], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		return 2;
	}
	shared *sh = mmap(
	    NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	int me = atoi(argv[1]), inc = atoi(argv[2]);
	if (sh == MAP_FAILED || me < 0 || me >= sh->nclients) {
		return 2;
	}
	cslot *s    = &sh->c[me];
	int    mode = me % NMODES, li = (me / NMODES + inc) % NLARGE;
	if (mode == M_NNG) {
		setenv(
		    "FFTD_INLINE_STAGING", "0", 1); // before the client opens
	}
	fftd_client   *c          = NULL;
	fftd_plan     *ps[NSMALL] = { 0 }, *pl = NULL;
	fftd_load_gen *gs[NSMALL] = { 0 }, *gl = NULL;
	fftd_buffer   *buf = NULL;
	fftd_stream   *st  = NULL;
	req_slot       rs[MAX_DEPTH];
	float         *sout = NULL; // the stream's results
	int            D = sh->depth, rv, rc = 1;
	memset(rs, 0, sizeof(rs));
#define FAIL(what, code)                                                       \
	do {                                                                   \
		snprintf(s->why, sizeof(s->why), "%s: %s", what,               \
		    fftd_err_name(code));                                      \
		goto out;                                                      \
	} while (0)
	if ((rv = fftd_client_open(&c, sh->url, sh->timeout_ms)) != FFTD_OK) {
		FAIL("fftd_client_open", rv);
	}
	for (int i = 0; i < NSMALL; i++) {
		fftd_plan_desc d;
		fftd_plan_desc_init(&d, 1, &SMALL_N[i], FFTD_C2C, FFTD_F32);
		gs[i] = fftd_load_gen_new(FFTD_C2C, SMALL_N[i], 1,
		    (uint64_t) me * 100 + (uint64_t) i + 1);
		if (gs[i] == NULL) {
			FAIL("generator", FFTD_ENOMEM);
		}
		if ((rv = fftd_plan_create(c, &d, &ps[i])) != FFTD_OK) {
			FAIL("fftd_plan_create", rv);
		}
	}
	fftd_plan_desc d;
	fftd_plan_desc_init(&d, 1, &LARGE[li].n, LARGE[li].kind, FFTD_F32);
	d.batch = LARGE[li].batch;
	gl = fftd_load_gen_new(LARGE[li].kind, LARGE[li].n, LARGE[li].batch,
	    (uint64_t) me * 100 + 50 + (uint64_t) li);
	if (gl == NULL) {
		FAIL("generator", FFTD_ENOMEM);
	}
	if ((rv = fftd_plan_create(c, &d, &pl)) != FFTD_OK) {
		FAIL("fftd_plan_create (large)", rv);
	}
	size_t in_max  = fftd_load_gen_in_bytes(gl),
	       out_max = fftd_load_gen_out_bytes(gl);
	size_t span
	    = ((in_max + 63) & ~(size_t) 63) + ((out_max + 63) & ~(size_t) 63);
	if (mode == M_SHM) {
		rv = fftd_buffer_create(c, (size_t) D * span, &buf);
		if (rv != FFTD_OK) {
			FAIL("fftd_buffer_create", rv);
		}
	}
	if (mode == M_STREAM
	    && (rv = fftd_stream_open(pl, 1, &st)) != FFTD_OK) {
		FAIL("fftd_stream_open", rv);
	}
	for (int i = 0; i < D; i++) {
		if (buf != NULL) {
			rs[i].in  = (float *) ((char *) fftd_buffer_data(buf)
                            + (size_t) i * span);
			rs[i].out = (float *) ((char *) rs[i].in
			    + ((in_max + 63) & ~(size_t) 63));
		} else if ((rs[i].out = malloc(out_max)) == NULL) {
			FAIL("malloc", FFTD_ENOMEM);
		}
	}
	sout = mode == M_STREAM ? malloc(out_max) : NULL;
	if (mode == M_STREAM && sout == NULL) {
		FAIL("malloc", FFTD_ENOMEM);
	}
	atomic_store(&s->running, 1);
	uint64_t k = 0, oldest = 0;
	int      stop = 0;
	for (;;) {
		while (!stop && k - oldest < (uint64_t) D) {
			if (atomic_load(&sh->stop)) {
				stop = 1;
				break;
			}
			int large = k % (uint64_t) sh->large_every
			    == (uint64_t) sh->large_every - 1;
			if (large && st != NULL) {
				// The stream's own request, one at a time.
				rv = fftd_stream_submit(
				    st, fftd_load_gen_input(gl, k));
				if (rv == FFTD_OK) {
					rv = fftd_stream_wait(st, sout, NULL);
				}
				check(s, gl, rv, sout, k);
				k++; // its ring slot stays empty
				continue;
			}
			req_slot            *r  = &rs[k % (uint64_t) D];
			const fftd_load_gen *g  = large ? gl : gs[k % NSMALL];
			const fftd_plan     *p  = large ? pl : ps[k % NSMALL];
			const float         *in = fftd_load_gen_input(g, k);
			if (buf != NULL) {
				memcpy(r->in, in, fftd_load_gen_in_bytes(g));
				in = r->in;
			}
			r->g = g;
			r->k = k;
			rv   = fftd_execute_async(
			      p, in, r->out, NULL, NULL, &r->req);
			if (rv != FFTD_OK) {
				r->req = NULL;
				note_bad(s, &s->refused,
				    "submit refused: %s (%.0f%.0f)",
				    fftd_err_name(rv), 0, 0);
				stop = 1;
				break;
			}
			k++;
		}
		// Skip slots the stream path left empty.
		while (oldest < k && rs[oldest % (uint64_t) D].req == NULL) {
			oldest++;
		}
		if (oldest == k) {
			if (stop) {
				break;
			}
			continue;
		}
		req_slot *r = &rs[oldest % (uint64_t) D];
		int       w = fftd_request_wait(r->req);
		r->req      = NULL;
		check(s, r->g, w, r->out, r->k);
		oldest++;
	}
	rc = 0;
out:
	for (int i = 0; i < D; i++) {
		if (rs[i].req != NULL) {
			(void) fftd_request_wait(rs[i].req);
		}
		if (buf == NULL) {
			free(rs[i].out);
		}
	}
	free(sout);
	fftd_stream_close(st);
	fftd_buffer_destroy(buf);
	fftd_plan_destroy(pl);
	for (int i = 0; i < NSMALL; i++) {
		fftd_plan_destroy(ps[i]);
		fftd_load_gen_free(gs[i]);
	}
	fftd_load_gen_free(gl);
	if (c != NULL) {
		fftd_client_close(c);
	}
	munmap(sh, sizeof(shared));
	return rc;
#undef FAIL
}

// --- the daemon's level
// -------------------------------------------------------

typedef struct level {
	double   t; // seconds since the start
	long     rss_kb, fds, maps;
	int64_t  plans, sessions, channels, dev_used; // -1: unknown
	uint64_t requests; // answered so far, all clients
} level;

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

// take_level reads the daemon's RSS, fds and mappings from /proc and its
// plans, sessions, channels and device memory from its statistics.
static void
take_level(pid_t pid, fftd_client *ctl, level *L)
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

typedef struct pinger {
	fftd_client *c;
	pthread_t    th;
	_Atomic int  stop;
	float       *us;
	size_t       n, cap;
	uint64_t     failed;
	double       t0;
} pinger;

static void *
ping_main(void *arg)
{
	pinger *pg = arg;
	while (!atomic_load(&pg->stop)) {
		double    rtt = 0;
		long long t0  = fftd_test_now_ms();
		int       rv  = fftd_ping(pg->c, &rtt);
		if (rv != FFTD_OK) {
			pg->failed++;
		} else if (pg->n < pg->cap) {
			pg->us[pg->n++] = (float) rtt;
		}
		long long left = PING_MS - (fftd_test_now_ms() - t0);
		if (left > 0) {
			fftd_test_sleep_ms((int) left);
		}
	}
	return NULL;
}

static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *) a, y = *(const float *) b;
	return (x > y) - (x < y);
}

// pct is the p-quantile of v[0..n) (sorted in place); NAN when empty.
static double
pct(float *v, size_t n, double p)
{
	if (n == 0) {
		return NAN;
	}
	qsort(v, n, sizeof(*v), cmp_float);
	size_t i = (size_t) ceil(p * (double) n);
	return v[i == 0 ? 0 : i - 1];
}

// --- the parent
// ---------------------------------------------------------------

typedef struct run {
	shared          *sh;
	char             path[256];
	pid_t            pid[MAX_CLIENTS];
	int              inc[MAX_CLIENTS];
	uint64_t         kills, restarts, child_failures;
	char             child_why[300];
	level           *samples;
	size_t           nsamples, capsamples;
	fftd_test_daemon d;
	fftd_client     *ctl;
	double           t0;
	int              verbose;
} run;

static double
now_s(void)
{
	return (double) fftd_test_now_ms() * 1e-3;
}

static uint64_t
answered(const shared *sh)
{
	uint64_t n = 0;
	for (int i = 0; i < sh->nclients; i++) {
		n += atomic_load(&sh->c[i].ok) + atomic_load(&sh->c[i].wrong)
		    + atomic_load(&sh->c[i].failed);
	}
	return n;
}

static void
start_client(run *r, int i)
{
	char idx[16], inc[16];
	snprintf(idx, sizeof(idx), "%d", i);
	snprintf(inc, sizeof(inc), "%d", r->inc[i]++);
	const char *args[] = { r->path, idx, inc, NULL };
	atomic_store(&r->sh->c[i].running, 0);
	r->pid[i] = fftd_test_spawn("soak-client", args);
}

// reap notes children that ended: killed by us (counted at the kill) or
// on their own, where anything but exit 0 after a stop is a failure.
static void
reap(run *r, int restart)
{
	for (int i = 0; i < r->sh->nclients; i++) {
		int st;
		if (r->pid[i] <= 0
		    || waitpid(r->pid[i], &st, WNOHANG) != r->pid[i]) {
			continue;
		}
		r->pid[i] = 0;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			if (r->child_failures++ == 0) {
				snprintf(r->child_why, sizeof(r->child_why),
				    "client %d exited with status 0x%x: %.200s",
				    i, st, r->sh->c[i].why);
			}
		}
		if (restart && !atomic_load(&r->sh->stop)) {
			start_client(r, i);
		}
	}
}

static void
sample(run *r)
{
	if (r->nsamples == r->capsamples) {
		size_t cap = r->capsamples ? 2 * r->capsamples : 1024;
		level *s   = realloc(r->samples, cap * sizeof(level));
		if (s == NULL) {
			return;
		}
		r->samples    = s;
		r->capsamples = cap;
	}
	level *L = &r->samples[r->nsamples++];
	take_level(r->d.pid, r->ctl, L);
	L->t        = now_s() - r->t0;
	L->requests = answered(r->sh);
	if (r->verbose) {
		fprintf(stderr,
		    "soak: t=%.0fs requests=%" PRIu64
		    " rss=%ldkB fds=%ld maps=%ld "
		    "plans=%" PRId64 " sessions=%" PRId64 " kills=%" PRIu64
		    "\n",
		    L->t, L->requests, L->rss_kb, L->fds, L->maps, L->plans,
		    L->sessions, r->kills);
	}
}

// phase runs the clients until `until` requests are answered (killing one
// at random every kill_ms), then stops them and waits for them to exit.
// Returns 0, or -1 when the deadline passed.
static int
phase(run *r, uint64_t until, int kill_ms, double deadline)
{
	atomic_store(&r->sh->stop, 0);
	for (int i = 0; i < r->sh->nclients; i++) {
		start_client(r, i);
	}
	double next_sample = now_s(), next_kill = now_s() + kill_ms * 1e-3;
	while (answered(r->sh) < until) {
		if (now_s() > deadline || !fftd_test_daemon_alive(&r->d)) {
			break;
		}
		if (now_s() >= next_sample) {
			sample(r);
			next_sample += 1.0;
		}
		if (kill_ms > 0 && now_s() >= next_kill) {
			int i = rand() % r->sh->nclients;
			if (r->pid[i] > 0
			    && atomic_load(&r->sh->c[i].running)) {
				kill(r->pid[i], SIGKILL);
				waitpid(r->pid[i], NULL, 0);
				r->kills++;
				r->restarts++;
				start_client(r, i);
			}
			next_kill += kill_ms * 1e-3;
		}
		reap(r, 1);
		fftd_test_sleep_ms(10);
	}
	atomic_store(&r->sh->stop, 1);
	double stop_by = now_s() + STOP_MS * 1e-3;
	for (;;) {
		reap(r, 0);
		int left = 0;
		for (int i = 0; i < r->sh->nclients; i++) {
			left += r->pid[i] > 0;
		}
		if (left == 0) {
			break;
		}
		if (now_s() > stop_by) {
			for (int i = 0; i < r->sh->nclients; i++) {
				if (r->pid[i] > 0) {
					kill(r->pid[i], SIGKILL);
				}
			}
			reap(r, 0);
			snprintf(r->child_why, sizeof(r->child_why),
			    "clients did not stop within %d s", STOP_MS / 1000);
			r->child_failures++;
			break;
		}
		fftd_test_sleep_ms(20);
	}
	return answered(r->sh) >= until ? 0 : -1;
}

// quiesce waits until the daemon has closed every client session but the
// two of this program (control and ping) and its stream channels, then
// takes its level. Returns 0, or -1 (level taken anyway) when sessions
// stayed open for QUIESCE_MS: a leak.
static int
quiesce(run *r, level *L)
{
	double until = now_s() + QUIESCE_MS * 1e-3;
	int    rv    = -1;
	while (now_s() < until) {
		take_level(r->d.pid, r->ctl, L);
		if (L->sessions == 2 && L->channels == 0 && L->plans == 0) {
			rv = 0;
			break;
		}
		fftd_test_sleep_ms(100);
	}
	fftd_test_sleep_ms(1000); // let freed memory settle
	take_level(r->d.pid, r->ctl, L);
	L->t        = now_s() - r->t0;
	L->requests = answered(r->sh);
	return rv;
}

// within says whether `end` is back at `base`'s level: at most 5% (and
// at least one unit) above it.
static int
within(double base, double end)
{
	if (base < 0 || end < 0) {
		return 1; // unknown: not judged
	}
	return end <= base + fmax(1.0, LEVEL_TOL * base);
}

static void
print_level(FILE *f, const char *name, const level *L)
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

static void
json_level(FILE *f, const char *key, const level *L)
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

static void
usage(void)
{
	fprintf(stderr,
	    "usage: soak [--spawn FFTD_BIN] [--clients N] [--requests N]\n"
	    "            [--kill-every-ms M] [--depth D] [--large-every L]\n"
	    "            [--warmup-frac F] [--timeout S] [--json FILE] "
	    "[--verbose]\n");
	exit(2);
}

static const fftd_test_role ROLES[] = {
	{ "soak-client", soak_client },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int         nclients = 16, kill_ms = 500, depth = 4, large_every = 32;
	int         timeout_s = 3600, verbose = 0;
	long long   requests  = 200000;
	double      warm_frac = 0.25;
	const char *json      = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a   = argv[i];
		int         val = i + 1 < argc;
		if (strcmp(a, "--spawn") == 0 && val) {
			setenv("FFTD_BIN", argv[++i], 1);
		} else if (strcmp(a, "--clients") == 0 && val) {
			nclients = atoi(argv[++i]);
		} else if (strcmp(a, "--requests") == 0 && val) {
			requests = atoll(argv[++i]);
		} else if (strcmp(a, "--kill-every-ms") == 0 && val) {
			kill_ms = atoi(argv[++i]);
		} else if (strcmp(a, "--depth") == 0 && val) {
			depth = atoi(argv[++i]);
		} else if (strcmp(a, "--large-every") == 0 && val) {
			large_every = atoi(argv[++i]);
		} else if (strcmp(a, "--warmup-frac") == 0 && val) {
			warm_frac = atof(argv[++i]);
		} else if (strcmp(a, "--timeout") == 0 && val) {
			timeout_s = atoi(argv[++i]);
		} else if (strcmp(a, "--json") == 0 && val) {
			json = argv[++i];
		} else if (strcmp(a, "--verbose") == 0) {
			verbose = 1;
		} else {
			usage();
		}
	}
	if (nclients < 1 || nclients > MAX_CLIENTS || requests < 1
	    || kill_ms < 0 || depth < 1 || depth > MAX_DEPTH || large_every < 1
	    || !(warm_frac > 0 && warm_frac < 1) || timeout_s < 1) {
		usage();
	}

	run r = { .verbose = verbose };
	snprintf(r.path, sizeof(r.path), "%s/fftd-soak.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(r.path);
	if (fd < 0 || ftruncate(fd, sizeof(shared)) != 0) {
		perror("soak: shared file");
		return 1;
	}
	r.sh = mmap(
	    NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r.sh == MAP_FAILED) {
		perror("soak: mmap");
		return 1;
	}
	if (fftd_test_daemon_start(&r.d, NULL, NULL) != 0) {
		unlink(r.path);
		return 1;
	}
	snprintf(r.sh->url, sizeof(r.sh->url), "%s", r.d.url);
	r.sh->nclients    = nclients;
	r.sh->depth       = depth;
	r.sh->large_every = large_every;
	r.sh->timeout_ms  = 30000;
	srand((unsigned) getpid());

	pinger pg = { .cap = (size_t) timeout_s * (1000 / PING_MS) + 1024 };
	pg.us     = malloc(pg.cap * sizeof(float));
	if (pg.us == NULL || fftd_client_open(&r.ctl, r.d.url, 30000) != FFTD_OK
	    || fftd_client_open(&pg.c, r.d.url, 30000) != FFTD_OK
	    || pthread_create(&pg.th, NULL, ping_main, &pg) != 0) {
		fprintf(
		    stderr, "soak: control clients: %s\n", fftd_last_error());
		fftd_test_daemon_stop(&r.d);
		unlink(r.path);
		return 1;
	}
	r.t0              = now_s();
	double   deadline = r.t0 + timeout_s;
	uint64_t warm     = (uint64_t) ((double) requests * warm_frac);
	level    base, end;
	int      fails    = 0;
	char     why[400] = "";
#define FAILED(...)                                                            \
	do {                                                                   \
		if (fails++ == 0) {                                            \
			snprintf(why, sizeof(why), __VA_ARGS__);               \
		}                                                              \
	} while (0)

	printf("soak: %d clients, %lld requests (warm-up %" PRIu64
	       "), depth %d, every %d-th large, a kill every %d ms\n",
	    nclients, requests, warm, depth, large_every, kill_ms);
	if (phase(&r, warm, kill_ms, deadline) != 0) {
		FAILED("warm-up did not complete (timeout or daemon gone)");
	}
	if (quiesce(&r, &base) != 0) {
		FAILED("after warm-up: %" PRId64 " sessions, %" PRId64
		       " plans, %" PRId64 " channels still open (want 2, 0, 0)",
		    base.sessions, base.plans, base.channels);
	}
	size_t   ping_warm  = pg.n;
	uint64_t kills_warm = r.kills;
	if (fails == 0
	    && phase(&r, (uint64_t) requests, kill_ms, deadline) != 0) {
		FAILED("the run did not complete (timeout or daemon gone)");
	}
	int q = quiesce(&r, &end);
	if (q != 0) {
		FAILED("at the end: %" PRId64 " sessions, %" PRId64
		       " plans, %" PRId64
		       " channels still open (want 2, 0, 0): "
		       "the daemon did not release killed clients",
		    end.sessions, end.plans, end.channels);
	}
	atomic_store(&pg.stop, 1);
	pthread_join(pg.th, NULL);
	double dur = now_s() - r.t0;

	uint64_t ok = 0, wrong = 0, failed = 0, refused = 0;
	for (int i = 0; i < nclients; i++) {
		ok += r.sh->c[i].ok;
		wrong += r.sh->c[i].wrong;
		failed += r.sh->c[i].failed;
		refused += r.sh->c[i].refused;
		if ((r.sh->c[i].wrong || r.sh->c[i].failed
		        || r.sh->c[i].refused)
		    && fails == 0) {
			FAILED("client %d: %s", i, r.sh->c[i].why);
		}
	}
	if (r.child_failures > 0) {
		FAILED("%s", r.child_why);
	}
	const struct {
		const char *name;
		double      b, e;
	} lv[] = {
		{ "rss_kb", (double) base.rss_kb, (double) end.rss_kb },
		{ "fds", (double) base.fds, (double) end.fds },
		{ "maps", (double) base.maps, (double) end.maps },
		{ "plans", (double) base.plans, (double) end.plans },
		{ "device_used_bytes", (double) base.dev_used,
		    (double) end.dev_used },
	};
	int nlv = (int) (sizeof(lv) / sizeof(lv[0]));
	for (int i = 0; i < nlv; i++) {
		if (!within(lv[i].b, lv[i].e)) {
			FAILED("%s grew from %.0f to %.0f (> 5%%)", lv[i].name,
			    lv[i].b, lv[i].e);
		}
	}
	if (base.sessions != end.sessions) {
		FAILED("sessions: %" PRId64 " after warm-up, %" PRId64
		       " at the end",
		    base.sessions, end.sessions);
	}
	// The well-behaved client's latency over the whole run and over the
	// measured part (after the warm-up), and the worst 10 s window.
	size_t win   = 10 * 1000 / PING_MS;
	double worst = 0;
	float *tmp   = malloc(win * sizeof(float));
	for (size_t o = 0; tmp != NULL && o + win <= pg.n; o += win) {
		memcpy(tmp, pg.us + o, win * sizeof(float));
		worst = fmax(worst, pct(tmp, win, 0.99));
	}
	free(tmp);
	size_t npost = pg.n - ping_warm;
	float *post  = malloc((npost + 1) * sizeof(float));
	if (post != NULL) {
		memcpy(post, pg.us + ping_warm, npost * sizeof(float));
	}
	double p99_post = post ? pct(post, npost, 0.99) : NAN;
	free(post);
	double p50 = pct(pg.us, pg.n, 0.5), p99 = pct(pg.us, pg.n, 0.99),
	       pmax = pg.n ? pg.us[pg.n - 1] : NAN;

	int dst = fftd_test_daemon_stop(&r.d);
	if (dst != 0) {
		FAILED("the daemon exited with status %d", dst);
	}

	printf("\n%-10s %8s %10s %6s %6s %6s %8s %8s %12s\n", "level", "t_s",
	    "rss_kB", "fds", "maps", "plans", "sessions", "channels",
	    "device_used");
	print_level(stdout, "warm-up", &base);
	print_level(stdout, "end", &end);
	printf("\nduration %.0f s, requests answered %" PRIu64 " (ok %" PRIu64
	       ", wrong %" PRIu64 ", failed %" PRIu64 ", refused %" PRIu64
	       "), kills %" PRIu64 " (%" PRIu64 " after warm-up)\n",
	    dur, ok + wrong + failed, ok, wrong, failed, refused, r.kills,
	    r.kills - kills_warm);
	printf("ping (well-behaved client, every %d ms): n %zu, failed %" PRIu64
	       ", p50 %.0f us, p99 %.0f us (after warm-up %.0f us), worst 10 s "
	       "p99 %.0f us, max %.0f us%s\n",
	    PING_MS, pg.n, pg.failed, p50, p99, p99_post, worst, pmax,
	    p99 < PING_TARGET_US ? "" : "  MISSED (target p99 < 2000 us)");
	printf("soak: %s%s\n", fails ? "FAILED: " : "passed", why);

	if (json != NULL) {
		FILE *f = fopen(json, "w");
		if (f == NULL) {
			perror(json);
			fails++;
		} else {
			fprintf(f,
			    "{\"soak\": {\"clients\": %d, \"requests\": %lld",
			    nclients, requests);
			bench_json_field(f, "kill_every_ms", kill_ms);
			bench_json_field(f, "depth", depth);
			bench_json_field(f, "large_every", large_every);
			bench_json_field(f, "duration_s", dur);
			bench_json_field(
			    f, "answered", (double) (ok + wrong + failed));
			bench_json_field(f, "ok", (double) ok);
			bench_json_field(f, "wrong", (double) wrong);
			bench_json_field(
			    f, "lost", (double) (failed + refused));
			bench_json_field(f, "kills", (double) r.kills);
			bench_json_field(
			    f, "client_failures", (double) r.child_failures);
			json_level(f, "level_after_warmup", &base);
			json_level(f, "level_end", &end);
			fprintf(f, ", \"ping_us\": {\"n\": %zu", pg.n);
			bench_json_field(f, "failed", (double) pg.failed);
			bench_json_field(f, "p50", p50);
			bench_json_field(f, "p99", p99);
			bench_json_field(f, "p99_after_warmup", p99_post);
			bench_json_field(f, "worst_10s_p99", worst);
			bench_json_field(f, "max", pmax);
			bench_json_field(f, "target_p99", PING_TARGET_US);
			fprintf(f, "}, \"passed\": %s, \"failure\": ",
			    fails ? "false" : "true");
			bench_json_str(f, why);
			fprintf(f, ", \"samples\": [");
			for (size_t i = 0; i < r.nsamples; i++) {
				const level *L = &r.samples[i];
				fprintf(f,
				    "%s[%.1f, %" PRIu64
				    ", %ld, %ld, %ld, %" PRId64 ", %" PRId64
				    ", %" PRId64 "]",
				    i ? ", " : "", L->t, L->requests, L->rss_kb,
				    L->fds, L->maps, L->plans, L->sessions,
				    L->dev_used);
			}
			fprintf(f,
			    "], \"samples_columns\": [\"t_s\", \"requests\", "
			    "\"rss_kb\", \"fds\", \"maps\", \"plans\", "
			    "\"sessions\", \"device_used_bytes\"]}}\n");
			fclose(f);
		}
	}
	fftd_client_close(pg.c);
	fftd_client_close(r.ctl);
	free(pg.us);
	free(r.samples);
	munmap(r.sh, sizeof(shared));
	unlink(r.path);
	return fails ? 1 : 0;
}

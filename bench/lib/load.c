// SPDX-License-Identifier: MIT
//
// load.c — a many-tenant load run on a real daemon (see load.h): the
// shapes the clients transform, the file the parent shares with its client
// processes, the clients started and the phases driven (unloaded, loaded,
// the steady window sampled through the daemon's statistics, the SIGTERM
// run's marks and signal). Linked into bench/load, bench/soak and the
// integration tests, not into the unit tests (it calls libfftd).
//
// It leaves to its siblings (load_impl.h): a client process to
// load_child.c, its inputs and checks to load_gen.c, the figures and the
// verdict to load_figures.c, the report to load_print.c.

#include "load_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// --- shapes ------------------------------------------------------------------

// shape is one client's transform: kind, length, batch.
typedef struct shape {
	fftd_kind kind;
	int64_t   n, batch;
} shape;

// Batch clients take these in turn. Full (a GPU): 256 KiB .. 16 MiB of
// input per request. Small (the fftw backend on a CPU): 16 .. 192 KiB, so
// that 10^5 requests take a couple of minutes on two cores.
static const shape FULL[] = {
	{ FFTD_C2C, 1024, 32 },   // 256 KiB
	{ FFTD_R2C, 16384, 16 },  // 1 MiB
	{ FFTD_C2C, 1000, 256 },  // 1.95 MiB, not a power of two
	{ FFTD_C2C, 4096, 128 },  // 4 MiB
	{ FFTD_R2C, 6000, 256 },  // 5.9 MiB, not a power of two
	{ FFTD_R2C, 1 << 18, 8 }, // 8 MiB
	{ FFTD_C2C, 1 << 20, 2 }, // 16 MiB
};
static const shape SMALL[] = {
	{ FFTD_C2C, 256, 8 },   // 16 KiB
	{ FFTD_R2C, 2048, 8 },  // 64 KiB
	{ FFTD_C2C, 1000, 8 },  // 62.5 KiB, not a power of two
	{ FFTD_C2C, 1024, 16 }, // 128 KiB
	{ FFTD_R2C, 6000, 8 },  // 187.5 KiB, not a power of two
	{ FFTD_R2C, 8192, 4 },  // 128 KiB
	{ FFTD_C2C, 4096, 6 },  // 192 KiB
};
#define NSHAPES ((int) (sizeof(FULL) / sizeof(FULL[0])))
_Static_assert(NSHAPES == FFTD_LOAD_NSHAPES
        && sizeof(SMALL) / sizeof(SMALL[0]) == FFTD_LOAD_NSHAPES,
    "size tables");
static const shape RT_FULL  = { FFTD_C2C, 4096, 16 }; // 512 KiB
static const shape RT_SMALL = { FFTD_C2C, 4096, 4 };  // 128 KiB

// --- the parent
// ----------------------------------------------------------------

// fftd_load_defaults fills a configuration with the full run's (load.h).
void
fftd_load_defaults(fftd_load_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nclients  = 16;
	cfg->nrealtime = 2;
	cfg->requests  = 100000;
	cfg->depth     = 8;
	cfg->sizes     = FFTD_LOAD_SIZES_AUTO;
	cfg->timeout_s = 900;
}

// fftd__load_fail notes a failure of the run: the first one's text is
// kept in r->failure, all are counted.
void
fftd__load_fail(fftd_load_result *r, const char *fmt, ...)
{
	if (r->failures++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->failure, sizeof(r->failure), fmt, ap);
		va_end(ap);
	}
}

// cpu_ticks reads the host's CPU time from /proc/stat's "cpu" line:
// t[0] all, t[1] idle (idle + iowait), t[2] steal. 0: unreadable.
static int
cpu_ticks(unsigned long long t[3])
{
	FILE *f = fopen("/proc/stat", "r");
	if (f == NULL) {
		return 0;
	}
	unsigned long long v[8] = { 0 };
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8) {
		return 0;
	}
	t[0] = 0;
	for (int i = 0; i < 8; i++) {
		t[0] += v[i];
	}
	t[1] = v[3] + v[4];
	t[2] = v[7];
	return 1;
}

// cpu_share sets *busy and *steal to the fractions of the host's CPU time
// between two cpu_ticks readings (NAN if either failed or none passed).
static void
cpu_share(const unsigned long long a[3], int oka, const unsigned long long b[3],
    int okb, double *busy, double *steal)
{
	*busy = *steal = NAN;
	if (!oka || !okb || b[0] <= a[0]) {
		return;
	}
	double all = (double) (b[0] - a[0]);
	*steal     = (double) (b[2] - a[2]) / all;
	*busy = (all - (double) (b[1] - a[1]) - (double) (b[2] - a[2])) / all;
}

// take_snap takes a snapshot of the daemon's per-client and per-device
// statistics and of the clients' answered counts; a failure's text goes
// to why (when given and still empty).
static int
take_snap(fftd_client *ctl, shared *sh, snap *sn, char *why, size_t wlen)
{
	sn->t  = fftd__mono_s();
	int rv = fftd_get_client_stats(ctl, sn->cs, MAX_STATS, &sn->n);
	if (rv == FFTD_OK) {
		rv = fftd_get_device_stats(
		    ctl, sn->ds, FFTD_MAX_DEVICES, &sn->ndev);
	}
	if (sn->n > MAX_STATS) {
		sn->n = MAX_STATS;
	}
	if (sn->ndev > FFTD_MAX_DEVICES) {
		sn->ndev = FFTD_MAX_DEVICES;
	}
	for (int i = 0; i < sh->nclients; i++) {
		sn->answered[i] = atomic_load(&sh->slot[i].answered);
	}
	sn->rv = rv;
	if (rv != FFTD_OK && why != NULL && why[0] == '\0') {
		snprintf(why, wlen, "fftd_get_client_stats: %.150s",
		    fftd__load_ferr(rv));
	}
	return rv;
}

// total_answered is how many requests all clients have had answered.
static uint64_t
total_answered(shared *sh)
{
	uint64_t t = 0;
	for (int i = 0; i < sh->nclients; i++) {
		t += atomic_load(&sh->slot[i].answered);
	}
	return t;
}

// wait_all waits until pred(sh, i) holds for every client i in [lo, hi)
// or a child failed or timeout_s passed; returns 0, or -1 with why.
static int
wait_all(shared *sh, int lo, int hi, int (*pred)(shared *, int),
    double timeout_s, fftd_load_result *r, const char *what)
{
	double until = fftd__mono_s() + timeout_s;
	for (;;) {
		int all = 1;
		for (int i = lo; i < hi; i++) {
			if (atomic_load(&sh->slot[i].state) == ST_FAILED) {
				fftd__load_fail(r, "client %d failed %s: %s", i,
				    what, sh->slot[i].why);
				return -1;
			}
			all &= pred(sh, i);
		}
		if (all) {
			return 0;
		}
		if (fftd__mono_s() > until) {
			fftd__load_fail(
			    r, "timed out (%.0f s) %s", timeout_s, what);
			return -1;
		}
		fftd_test_sleep_ms(2);
	}
}

// p_ready: client i has started (ready or failed).
static int
p_ready(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].state) != ST_STARTING;
}

// p_unloaded: realtime client i has its unloaded samples (or stopped).
static int
p_unloaded(shared *sh, int i)
{
	return sh->slot[i].nlat[0] >= (uint64_t) sh->rt_unloaded
	    || atomic_load(&sh->slot[i].state) != ST_READY;
}

// p_backlogged: batch client i has had 2 x depth requests answered.
static int
p_backlogged(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].answered)
	    >= 2 * (uint64_t) sh->slot[i].depth;
}

// p_marked: client i has answered the mark request (or stopped).
static int
p_marked(shared *sh, int i)
{
	return atomic_load(&sh->slot[i].marked)
	    || atomic_load(&sh->slot[i].state) != ST_READY;
}

// fftd_load_run runs the load (load.h): the shared file, the clients,
// the unloaded phase, the loaded phase and its window (or the SIGTERM
// run's marks and signal), then the figures and the verdict.
int
fftd_load_run(const fftd_load_config *cfg0, fftd_load_result *r)
{
	memset(r, 0, sizeof(*r));
	r->cfg                = *cfg0;
	fftd_load_config *cfg = &r->cfg;
	r->jain = r->p99_ratio = r->exit_s = r->device_busy = NAN;
	r->host_busy_unloaded = r->host_steal_unloaded = NAN;
	r->host_busy_loaded = r->host_steal_loaded = NAN;
	r->share_min = r->share_max = NAN;
	r->rt_loaded.p99 = r->rt_unloaded.p99 = NAN;
	for (int i = 0; i < FFTD_LOAD_MAX_CLIENTS; i++) {
		for (int p = 0; p < 2; p++) {
			fftd_load_dq *q[2]
			    = { &r->cl[i].queue[p], &r->cl[i].device[p] };
			for (int k = 0; k < 2; k++) {
				q[k]->p50 = q[k]->p99 = NAN;
			}
		}
	}
	r->sigterm = cfg->sigterm_after_s > 0;
	if (cfg->nclients < 1 || cfg->nclients > FFTD_LOAD_MAX_CLIENTS
	    || cfg->nrealtime < 0 || cfg->nrealtime > FFTD_LOAD_MAX_REALTIME
	    || cfg->nrealtime > cfg->nclients || cfg->depth < 1
	    || (r->sigterm && cfg->daemon == NULL) || cfg->url == NULL
	    || cfg->nshapes < 0 || cfg->nshapes > NSHAPES) {
		fftd__load_fail(r, "bad configuration");
		return -1;
	}
	for (int i = 0; i < cfg->nshapes; i++) {
		if (cfg->shapes[i] < 0 || cfg->shapes[i] >= NSHAPES) {
			fftd__load_fail(r, "shape %d: not in 0..%d",
			    cfg->shapes[i], NSHAPES - 1);
			return -1;
		}
	}
	if (cfg->timeout_s <= 0) {
		cfg->timeout_s = 900;
	}
	r->nclients = cfg->nclients;
	int nrt     = cfg->nrealtime;

	fftd_client *ctl = NULL;
	int          rv  = fftd_client_open(&ctl, cfg->url, 60000);
	if (rv != FFTD_OK) {
		fftd__load_fail(r, "cannot connect to %s: %s", cfg->url,
		    fftd__load_ferr(rv));
		return -1;
	}
	fftd_client_info(ctl, &r->info);
	r->small = cfg->sizes == FFTD_LOAD_SIZES_SMALL
	    || (cfg->sizes == FFTD_LOAD_SIZES_AUTO
	        && strcmp(r->info.backend, "fftw") == 0);
	if (cfg->depth > FFTD_LOAD_MAX_DEPTH) {
		cfg->depth = FFTD_LOAD_MAX_DEPTH;
	}
	if (r->info.max_inflight_per_client > 0
	    && (uint32_t) cfg->depth > r->info.max_inflight_per_client) {
		cfg->depth = (int) r->info.max_inflight_per_client;
	}
	if (cfg->rt_rate_hz <= 0) {
		cfg->rt_rate_hz = r->small ? 100 : 250;
	}
	if (cfg->rt_unloaded <= 0) {
		cfg->rt_unloaded = r->small ? 500 : 2000;
	}

	// the shared file
	const char *tmp = getenv("TMPDIR");
	char        path[300];
	snprintf(path, sizeof(path), "%s/fftd-load-XXXXXX",
	    tmp != NULL && tmp[0] && strlen(tmp) < 200 ? tmp : "/tmp");
	int    fd = mkstemp(path);
	size_t sz = shared_size(nrt);
	if (fd < 0 || ftruncate(fd, (off_t) sz) != 0) {
		fftd__load_fail(r, "shared file %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		fftd_client_close(ctl);
		return -1;
	}
	shared *sh = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED) {
		fftd__load_fail(r, "mmap: %s", strerror(errno));
		unlink(path);
		fftd_client_close(ctl);
		return -1;
	}
	snprintf(sh->url, sizeof(sh->url), "%s", cfg->url);
	sh->nclients    = cfg->nclients;
	sh->nrealtime   = nrt;
	sh->rt_unloaded = cfg->rt_unloaded;
	// In the SIGTERM run, requests the daemon never read wait this long
	// for the connection to come back (FFTD_ETIMEDOUT). It is also every
	// request's time limit, and accepted requests must be answered: under
	// TSan on two stolen cores one waited over 5 s in the daemon's queue
	// (CI, test_load), so 20 s; the run then ends up to 20 s later.
	sh->timeout_ms = r->sigterm ? 20000 : 120000;
	for (int i = 0; i < cfg->nclients; i++) {
		slot        *s  = &sh->slot[i];
		const shape *sp = i < nrt
		    ? (r->small ? &RT_SMALL : &RT_FULL)
		    : &(r->small ? SMALL : FULL)[cfg->nshapes > 0
		            ? cfg->shapes[(i - nrt) % cfg->nshapes]
		            : (i - nrt) % NSHAPES];
		s->realtime     = i < nrt;
		s->kind         = sp->kind;
		s->n            = sp->n;
		s->batch        = sp->batch;
		s->depth        = s->realtime ? 1 : cfg->depth;
		s->rate_hz      = s->realtime ? cfg->rt_rate_hz : 0;
		s->rt_stream    = s->realtime && !cfg->rt_inline;
		s->batch_shm    = !s->realtime && cfg->batch_shm;
		s->batch_nice   = s->realtime ? 0 : cfg->batch_nice;
		s->rt_slice_us  = s->realtime ? cfg->rt_slice_us : 0;
		s->rt_in_place  = s->rt_stream && cfg->rt_in_place;
		s->rt_spin_us   = s->rt_stream ? cfg->rt_spin_us : 0;
		if (!s->realtime) {
			snprintf(s->batch_cpus, sizeof(s->batch_cpus), "%s",
			    cfg->batch_cpus);
		}
		s->seed = 0x5eed10adull * (uint64_t) (i + 1) + 0x9e3779b9ull;
	}

	rv          = fftd_get_stats(ctl, &r->before);
	r->stats_ok = rv == FFTD_OK;
	if (!r->stats_ok) {
		snprintf(r->stats_why, sizeof(r->stats_why),
		    "fftd_get_stats: %.150s", fftd__load_ferr(rv));
	}

	pid_t pids[FFTD_LOAD_MAX_CLIENTS];
	int   codes[FFTD_LOAD_MAX_CLIENTS];
	for (int i = 0; i < cfg->nclients; i++) {
		char idx[16];
		snprintf(idx, sizeof(idx), "%d", i);
		const char *args[] = { path, idx, NULL };
		pids[i]            = fftd_test_spawn(FFTD_LOAD_ROLE, args);
		if (pids[i] < 0) {
			fftd__load_fail(r, "cannot start client %d", i);
		}
	}
	double t_start = fftd__mono_s(), deadline = t_start + cfg->timeout_s;
	snap  *s0 = calloc(1, sizeof(*s0)), *s1 = calloc(1, sizeof(*s1)),
	     *sx = calloc(1, sizeof(*sx)), *su0 = calloc(1, sizeof(*su0)),
	     *su1                          = calloc(1, sizeof(*su1));
	uint64_t bl[FFTD_LOAD_MAX_CLIENTS] = { 0 }, nsamples = 0;
	int      have_unloaded = 0;
	if (s0 == NULL || s1 == NULL || sx == NULL || su0 == NULL
	    || su1 == NULL) {
		fftd__load_fail(r, "out of memory");
	}

	if (r->failures == 0
	    && wait_all(sh, 0, cfg->nclients, p_ready, 300, r, "while starting")
	        == 0) {
		if (cfg->verbose) {
			fprintf(stderr, "load: %d clients ready (%.1f s)\n",
			    cfg->nclients, fftd__mono_s() - t_start);
		}
		// unloaded: realtime alone
		double             t1 = fftd__mono_s();
		unsigned long long c0[3], c1[3];
		if (nrt > 0 && !r->sigterm) {
			int ok = take_snap(ctl, sh, su0, NULL, 0) == FFTD_OK;
			int k0 = cpu_ticks(c0);
			atomic_store(&sh->phase, PH_REALTIME);
			wait_all(sh, 0, nrt, p_unloaded,
			    cfg->rt_unloaded / cfg->rt_rate_hz * 5 + 30, r,
			    "in the unloaded phase");
			cpu_share(c0, k0, c1, cpu_ticks(c1),
			    &r->host_busy_unloaded, &r->host_steal_unloaded);
			have_unloaded
			    = ok && take_snap(ctl, sh, su1, NULL, 0) == FFTD_OK;
		}
		r->unloaded_s = fftd__mono_s() - t1;
		// loaded
		atomic_store(&sh->phase, PH_ALL);
		double t2 = fftd__mono_s();
		if (cfg->verbose) {
			fprintf(stderr,
			    "load: loaded phase from CLOCK_MONOTONIC %.3f s\n",
			    t2);
		}
		if (r->failures == 0
		    && wait_all(sh, nrt, cfg->nclients, p_backlogged, 300, r,
		           "before the window")
		        == 0) {
			r->client_stats_ok
			    = take_snap(ctl, sh, s0, r->client_stats_why,
			          sizeof(r->client_stats_why))
			    == FFTD_OK;
			atomic_store(&sh->steady, 1);
			int    k0   = cpu_ticks(c0);
			double last = fftd__mono_s();
			if (cfg->verbose) {
				fprintf(stderr,
				    "load: window from CLOCK_MONOTONIC %.3f "
				    "s\n",
				    last);
			}
			for (;;) {
				fftd_test_sleep_ms(SAMPLE_MS);
				double t = fftd__mono_s();
				if (r->client_stats_ok
				    && take_snap(ctl, sh, sx, NULL, 0)
				        == FFTD_OK) {
					nsamples++;
					for (int i = 0; i < cfg->nclients;
					     i++) {
						const fftd_client_stats *c
						    = fftd__load_find_pid(
						        sx, sh->slot[i].pid);
						bl[i] += c != NULL
						    && c->inflight > 0;
					}
				}
				int dead = 0;
				for (int i = 0; i < cfg->nclients; i++) {
					dead |= atomic_load(&sh->slot[i].state)
					    != ST_READY;
				}
				if (dead) {
					fftd__load_fail(r,
					    "a client ended during the "
					    "window");
					break;
				}
				if (r->sigterm
				        ? t - s0->t >= cfg->sigterm_after_s
				        : total_answered(sh)
				            >= (uint64_t) cfg->requests) {
					break;
				}
				if (t > deadline) {
					fftd__load_fail(r,
					    "timed out (%d s) with %" PRIu64
					    " of %lld requests done",
					    cfg->timeout_s, total_answered(sh),
					    cfg->requests);
					break;
				}
				if (cfg->verbose && t - last >= 5) {
					last = t;
					fprintf(stderr,
					    "load: %.0f s, %" PRIu64
					    " requests\n",
					    t - t2, total_answered(sh));
				}
			}
			if (r->client_stats_ok) {
				take_snap(ctl, sh, s1, r->client_stats_why,
				    sizeof(r->client_stats_why));
				r->client_stats_ok = s1->rv == FFTD_OK;
			} else {
				s1->t = fftd__mono_s();
				for (int i = 0; i < cfg->nclients; i++) {
					s1->answered[i] = atomic_load(
					    &sh->slot[i].answered);
				}
			}
			atomic_store(&sh->steady, 0);
			cpu_share(c0, k0, c1, cpu_ticks(c1),
			    &r->host_busy_loaded, &r->host_steal_loaded);
			r->window_s = s1->t - s0->t;
			for (int i = 0; i < cfg->nclients; i++) {
				uint64_t d = s1->answered[i] - s0->answered[i];
				r->window_reqs += d;
				r->window_in_bytes += (double) d
				    * (double) sh->slot[i].in_bytes;
			}
		}
		if (r->sigterm && r->failures == 0) {
			// mark, then SIGTERM with everybody in full flight
			atomic_store(&sh->mark_req, 1);
			wait_all(
			    sh, 0, cfg->nclients, p_marked, 30, r, "marking");
			double ts = fftd__mono_s();
			fftd_test_daemon_signal(cfg->daemon, SIGTERM);
			r->sigterm_at_s = ts - t2;
			while (fftd_test_daemon_alive(cfg->daemon)
			    && fftd__mono_s() - ts < 10) {
				fftd_test_sleep_ms(1);
			}
			double te = fftd__mono_s();
			if (!fftd_test_daemon_alive(cfg->daemon)) {
				r->exit_s = te - ts;
			}
			r->exit_code = fftd_test_daemon_wait(cfg->daemon, 0);
		}
		r->run_s = fftd__mono_s() - t2;
	}
	atomic_store(&sh->phase, PH_STOP);
	fftd_test_wait_pids(pids, cfg->nclients, 120000, codes);
	r->run_s = fftd__mono_s() - t_start - r->unloaded_s;

	fftd__load_collect(r, sh, codes);
	fftd__load_latencies(r, sh);
	if (r->client_stats_ok) {
		fftd__load_window_fairness(r, sh, s0, s1, bl, nsamples);
		fftd__load_daemon_lat(r, sh, s0, s1, 1);
	}
	if (have_unloaded) {
		fftd__load_daemon_lat(r, sh, su0, su1, 0);
	}
	if (!r->sigterm && r->stats_ok) {
		r->stats_ok = fftd_get_stats(ctl, &r->after) == FFTD_OK;
		if (!r->stats_ok) {
			snprintf(r->stats_why, sizeof(r->stats_why),
			    "fftd_get_stats after the run failed");
		}
		r->daemon_errors = r->after.errors - r->before.errors;
	}
	fftd__load_verdict(r);
	free(s0);
	free(s1);
	free(sx);
	free(su0);
	free(su1);
	munmap(sh, sz);
	unlink(path);
	fftd_client_close(ctl);
	return 0;
}

// SPDX-License-Identifier: MIT
//
// soak.c — the soak test (issue 14): many clients, small and large
// requests mixed, clients killed and restarted at random, the daemon's
// resources watched for leaks.
//
//   soak [--spawn FFTD_BIN] [--clients N] [--requests N] [--kill-every-ms M]
//        [--depth D] [--large-every L] [--warmup-frac F] [--timeout S]
//        [--stall-s S] [--sample-ms S] [--json FILE] [--ping-log FILE]
//        [--verbose]
//
// --clients processes (default 16) each keep --depth (4) requests in
// flight: f32 C2C of n = 64, 256, 1000, 1024 (batch 1), and every L-th
// (default 32) a large one of 1, 2 or 4 MiB (C2C 4096 x 32, R2C 65536 x 8,
// C2C 65536 x 8). Client i sends its large requests one of four ways
// (i mod 4): inline (libfftd stages them through its shared buffers),
// inline with FFTD_INLINE_STAGING=0 (through NNG itself), from and into an
// fftd_buffer, through an fftd_stream. Requests are drawn and checked by
// bench/lib/load_gen.c's generator (c_k x in, c_k X expected, FFTW reference).
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
// sampled every --sample-ms (1000) throughout (JSON `samples`). A separate,
// well-behaved client, a process that does nothing else, pings every 10 ms
// from start to end: its p99, overall and in every 10 s window, is
// reported against the 2 ms target (not part of the exit status: two
// shared cores may not hold it). A thread of the soak's own process pings
// beside it, for comparison: that process also forks the clients and
// reads the daemon's /proc files, and its pings show what that costs.
//
// The soak never waits without a bound: no request answered for --stall-s
// (default 120) seconds, a client that does not submit --stall-s (default
// 60) seconds after it was started, clients that do not stop within 60 s,
// a killed client not gone within 10 s, and --timeout (3600) seconds for
// the whole run each end it with every client named (index, pid, what it
// was doing and since when, its process state). A client that ends before
// it is told to stop ends the run at once (it is not started again). A
// progress line (requests, rate, kills) comes every 10 s; --verbose adds
// the daemon's level every second. The client processes are in
// soak_client.c, the level, the pings and their figures in soak_probe.c.
//
// Exit status 1 if a result was wrong or lost (answered with an error, a
// refused submit, a client that failed on its own), a bound above was
// passed, the level did not come back, or the daemon did not stop cleanly.
// The daemon is $FFTD_BIN (or build/fftd), on a fresh ipc socket.

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include "lib/daemon.h"
#include "clock.h"
#include "fftd.h"
#include "json.h"
#include "soak.h"

#define LEVEL_TOL 0.05
#define QUIESCE_MS 20000 // sessions closed after the clients left
#define STOP_MS 60000    // clients finishing what they have in flight
#define OWN_SESSIONS 3   // control, ping thread, ping process

// --- the parent
// ---------------------------------------------------------------

// Every wait of the parent has a bound; past it the parent names the
// clients that did not move (index, pid, what they were doing, their
// process state) and fails. --stall-s S sets the first two.
#define STALL_MS_DEFAULT 120000 // no request answered by any client
#define START_MS_DEFAULT 60000  // a started client not yet submitting
#define KILL_WAIT_MS 10000      // a SIGKILLed client not yet gone
#define PROGRESS_S 10.0         // a progress line, also without --verbose

typedef struct run {
	shared          *sh;
	char             path[256];
	pid_t            pid[MAX_CLIENTS];
	int              inc[MAX_CLIENTS];
	long long        started_ms[MAX_CLIENTS];
	uint64_t         kills, restarts, child_failures;
	char             child_why[300];
	level           *samples;
	size_t           nsamples, capsamples;
	double           sample_s; // --sample-ms: the level's sampling period
	fftd_test_daemon d;
	fftd_client     *ctl;
	double           t0;
	int              verbose, stall_ms, start_ms;
	const char      *phase; // "warm-up" or "run"
} run;

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

// child_failed records a failure of client i (-1: of none in particular;
// the first one's words are kept for the summary) and prints it at once,
// so that the log shows it where it happened.
static void child_failed(run *r, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
child_failed(run *r, int i, const char *fmt, ...)
{
	char    msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char who[32] = "";
	if (i >= 0) {
		snprintf(who, sizeof(who), "client %d: ", i);
	}
	if (r->child_failures++ == 0) {
		snprintf(r->child_why, sizeof(r->child_why), "%s%s", who, msg);
	}
	fprintf(stderr, "soak: t=%.0fs %s: FAILURE: %s%s\n",
	    fftd__mono_s() - r->t0, r->phase, who, msg);
}

// status_words says how a child ended (wait status st) in words.
static void
status_words(int st, char *buf, size_t len)
{
	if (WIFEXITED(st)) {
		int c = WEXITSTATUS(st);
		snprintf(buf, len, "exit %d%s", c,
		    c == 127       ? ": it could not exec"
		        : c == 126 ? ": its parent was gone"
		        : c == 2   ? ": bad arguments or shared file"
		                   : "");
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "killed by signal %d", WTERMSIG(st));
	} else {
		snprintf(buf, len, "wait status 0x%x", st);
	}
}

// proc_state reads a process's state letter and kernel wait channel from
// /proc ("?" when gone).
static void
proc_state(pid_t pid, char *st, size_t stlen, char *wchan, size_t wlen)
{
	char path[64], buf[512];
	snprintf(st, stlen, "?");
	snprintf(wchan, wlen, "?");
	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	FILE *f = fopen(path, "r");
	if (f != NULL) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n]   = '\0';
		char *p  = strrchr(buf, ')'); // the name may hold spaces
		if (p != NULL && p[1] == ' ' && p[2] != '\0') {
			snprintf(st, stlen, "%c", p[2]);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int) pid);
	f = fopen(path, "r");
	if (f != NULL) {
		size_t n = fread(wchan, 1, wlen - 1, f);
		wchan[n] = '\0';
		if (n == 0) {
			snprintf(wchan, wlen, "-");
		}
		fclose(f);
	}
}

// report_clients prints, for each client process still there, its index,
// pid and incarnation, what it says it is doing and for how long, and its
// process state: what a stuck run needs to be debugged.
static void
report_clients(run *r, const char *why)
{
	long long now = fftd__mono_ms();
	fprintf(stderr, "soak: t=%.0fs %s: %s; the clients:\n",
	    fftd__mono_s() - r->t0, r->phase, why);
	for (int i = 0; i < r->sh->nclients; i++) {
		const cslot *s = &r->sh->c[i];
		if (r->pid[i] <= 0) {
			fprintf(stderr, "soak:   client %2d: no process\n", i);
			continue;
		}
		char st[8], wchan[64];
		proc_state(r->pid[i], st, sizeof(st), wchan, sizeof(wchan));
		int       state = atomic_load(&s->state);
		long long since = atomic_load(&s->state_ms);
		if (state == CS_SPAWNED) {
			since = r->started_ms[i];
		}
		fprintf(stderr,
		    "soak:   client %2d (pid %d, incarnation %d, mode %d): %s "
		    "for %.1f s; process state %s, waiting in %s; answered "
		    "%" PRIu64 "%s%s\n",
		    i, (int) r->pid[i], r->inc[i] - 1, i % NMODES,
		    soak_state_name(state), (double) (now - since) * 1e-3, st,
		    wchan,
		    atomic_load(&s->ok) + atomic_load(&s->wrong)
		        + atomic_load(&s->failed),
		    s->why[0] ? "; first error: " : "", s->why);
	}
}

// wait_gone waits at most ms for child pid (SIGKILLed, or told to stop)
// to end and reaps it, its wait status in *st when st is not NULL (-1 if
// it was reaped elsewhere). Returns 0, or -1 when it is still there.
static int
wait_gone(pid_t pid, int ms, int *st)
{
	long long until = fftd__mono_ms() + ms;
	if (st != NULL) {
		*st = -1;
	}
	for (;;) {
		pid_t w = waitpid(pid, st, WNOHANG);
		if (w == pid || (w < 0 && errno == ECHILD)) {
			return 0;
		}
		if (fftd__mono_ms() > until) {
			return -1;
		}
		fftd_test_sleep_ms(5);
	}
}

// start_client starts client i's next incarnation. Returns 0, or -1 after
// recording why.
static int
start_client(run *r, int i)
{
	char idx[16], inc[16];
	snprintf(idx, sizeof(idx), "%d", i);
	snprintf(inc, sizeof(inc), "%d", r->inc[i]++);
	const char *args[] = { r->path, idx, inc, NULL };
	atomic_store(&r->sh->c[i].running, 0);
	atomic_store(&r->sh->c[i].state, CS_SPAWNED);
	r->started_ms[i] = fftd__mono_ms();
	r->pid[i]        = fftd_test_spawn("soak-client", args);
	if (r->pid[i] <= 0) {
		r->pid[i] = 0;
		child_failed(r, i, "could not be started: %s", strerror(errno));
		return -1;
	}
	return 0;
}

// reap notes children that ended. Before stop every client should run:
// one that ended on its own (killed ones are reaped at the kill) is a
// failure, and it is not started again (a client that cannot start would
// be restarted for ever, the run going nowhere). After stop, anything but
// exit 0 is a failure. Returns how many ended on their own before stop.
static int
reap(run *r)
{
	int early = 0;
	for (int i = 0; i < r->sh->nclients; i++) {
		int st;
		if (r->pid[i] <= 0
		    || waitpid(r->pid[i], &st, WNOHANG) != r->pid[i]) {
			continue;
		}
		pid_t       pid = r->pid[i];
		const char *why = r->sh->c[i].why;
		char        how[64];
		r->pid[i] = 0;
		status_words(st, how, sizeof(how));
		int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (!atomic_load(&r->sh->stop)) {
			early++;
			child_failed(r, i,
			    "pid %d ended before it was told to stop (%s; it "
			    "was %s)%s%.150s",
			    (int) pid, how,
			    soak_state_name(atomic_load(&r->sh->c[i].state)),
			    why[0] ? ": " : "", why);
		} else if (!ok) {
			child_failed(r, i, "pid %d ended (%s)%s%.150s",
			    (int) pid, how, why[0] ? ": " : "", why);
		}
	}
	return early;
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
	soak_take_level(r->d.pid, r->ctl, L);
	L->t        = fftd__mono_s() - r->t0;
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

// progress prints where the run is: requests answered, the rate since the
// last line, kills, clients running.
static void
progress(run *r, uint64_t until, uint64_t *last_n, double *last_t)
{
	double   t       = fftd__mono_s();
	uint64_t n       = answered(r->sh);
	int      running = 0;
	for (int i = 0; i < r->sh->nclients; i++) {
		running += r->pid[i] > 0 && atomic_load(&r->sh->c[i].running);
	}
	printf("soak: t=%.0fs %s: requests %" PRIu64 " of %" PRIu64
	       " (%.0f/s), kills %" PRIu64 ", clients running %d of %d\n",
	    t - r->t0, r->phase, n, until,
	    t > *last_t ? (double) (n - *last_n) / (t - *last_t) : 0.0,
	    r->kills, running, r->sh->nclients);
	*last_n = n;
	*last_t = t;
}

// stuck_client returns a client that was started more than start_ms ago
// and does not submit yet, or -1.
static int
stuck_client(const run *r)
{
	long long now = fftd__mono_ms();
	for (int i = 0; i < r->sh->nclients; i++) {
		if (r->pid[i] > 0 && !atomic_load(&r->sh->c[i].running)
		    && now - r->started_ms[i] > r->start_ms) {
			return i;
		}
	}
	return -1;
}

// stop_clients tells the clients to stop and waits (at most STOP_MS) for
// them to finish what they have in flight and exit; those still there
// then are named, SIGKILLed and count as a failure.
static void
stop_clients(run *r)
{
	atomic_store(&r->sh->stop, 1);
	double stop_by = fftd__mono_s() + STOP_MS * 1e-3;
	for (;;) {
		reap(r);
		int left = 0;
		for (int i = 0; i < r->sh->nclients; i++) {
			left += r->pid[i] > 0;
		}
		if (left == 0) {
			return;
		}
		if (fftd__mono_s() > stop_by) {
			char why[80];
			snprintf(why, sizeof(why),
			    "%d clients did not stop within %d s", left,
			    STOP_MS / 1000);
			report_clients(r, why);
			child_failed(r, -1, "%s", why);
			for (int i = 0; i < r->sh->nclients; i++) {
				if (r->pid[i] <= 0) {
					continue;
				}
				kill(r->pid[i], SIGKILL);
				if (wait_gone(r->pid[i], KILL_WAIT_MS, NULL)
				    != 0) {
					fprintf(stderr,
					    "soak: client %d (pid %d) still "
					    "there %d ms after SIGKILL\n",
					    i, (int) r->pid[i], KILL_WAIT_MS);
				}
				r->pid[i] = 0;
			}
			return;
		}
		fftd_test_sleep_ms(20);
	}
}

// phase runs the clients until `until` requests are answered (killing one
// at random every kill_ms and starting it again), then stops them and
// waits for them to exit. Returns 0, or -1 (the clients stopped, the
// reason printed and recorded) when a client failed on its own or did not
// start, no request was answered for stall_ms, the deadline passed or the
// daemon went away.
static int
phase(run *r, const char *name, uint64_t until, int kill_ms, double deadline)
{
	r->phase = name;
	atomic_store(&r->sh->stop, 0);
	for (int i = 0; i < r->sh->nclients; i++) {
		if (r->pid[i] > 0) { // cannot happen: stop_clients reaps all
			child_failed(
			    r, i, "pid %d left from before", r->pid[i]);
			stop_clients(r);
			return -1;
		}
		if (start_client(r, i) != 0) {
			stop_clients(r);
			return -1;
		}
	}
	double next_sample   = fftd__mono_s(),
	       next_kill     = fftd__mono_s() + kill_ms * 1e-3;
	double next_progress = fftd__mono_s() + PROGRESS_S,
	       last_t        = fftd__mono_s();
	uint64_t  last_n = answered(r->sh), seen = last_n;
	long long moved = fftd__mono_ms();
	int       rv    = 0;
	char      why[160];
	while (answered(r->sh) < until) {
		uint64_t n = answered(r->sh);
		if (n != seen) {
			seen  = n;
			moved = fftd__mono_ms();
		}
		if (fftd__mono_s() > deadline) {
			snprintf(why, sizeof(why),
			    "the deadline (--timeout) passed at %" PRIu64
			    " of %" PRIu64 " requests",
			    n, until);
			report_clients(r, why);
			rv = -1;
			break;
		}
		if (!fftd_test_daemon_alive(&r->d)) {
			fprintf(stderr,
			    "soak: t=%.0fs %s: the daemon is gone\n",
			    fftd__mono_s() - r->t0, r->phase);
			rv = -1;
			break;
		}
		if (fftd__mono_ms() - moved > r->stall_ms) {
			snprintf(why, sizeof(why),
			    "STALLED: no request answered for %d s (%" PRIu64
			    " of %" PRIu64 ")",
			    r->stall_ms / 1000, n, until);
			report_clients(r, why);
			child_failed(r, -1, "%s", why);
			rv = -1;
			break;
		}
		int i = stuck_client(r);
		if (i >= 0) {
			snprintf(why, sizeof(why),
			    "client %d (pid %d) does not submit %d s after it "
			    "was started",
			    i, (int) r->pid[i], r->start_ms / 1000);
			report_clients(r, why);
			child_failed(r, i, "%s", why);
			rv = -1;
			break;
		}
		if (fftd__mono_s() >= next_sample) {
			sample(r);
			next_sample += r->sample_s;
		}
		if (fftd__mono_s() >= next_progress) {
			progress(r, until, &last_n, &last_t);
			next_progress += PROGRESS_S;
		}
		if (kill_ms > 0 && fftd__mono_s() >= next_kill) {
			i = rand() % r->sh->nclients;
			if (r->pid[i] > 0
			    && atomic_load(&r->sh->c[i].running)) {
				pid_t pid = r->pid[i];
				kill(pid, SIGKILL);
				r->pid[i] = 0;
				r->kills++;
				if (wait_gone(pid, KILL_WAIT_MS, NULL) != 0) {
					child_failed(r, i,
					    "pid %d still there %d ms after "
					    "SIGKILL",
					    (int) pid, KILL_WAIT_MS);
					rv = -1;
					break;
				}
				r->restarts++;
				if (start_client(r, i) != 0) {
					rv = -1;
					break;
				}
			}
			next_kill += kill_ms * 1e-3;
		}
		if (reap(r) > 0) {
			rv = -1;
			break;
		}
		fftd_test_sleep_ms(10);
	}
	stop_clients(r);
	progress(r, until, &last_n, &last_t);
	return rv == 0 && answered(r->sh) >= until ? 0 : -1;
}

// quiesce waits until the daemon has closed every client session but the
// three of this program (control, ping thread, ping process) and its
// stream channels, then
// takes its level. Returns 0, or -1 (level taken anyway) when sessions
// stayed open for QUIESCE_MS: a leak.
static int
quiesce(run *r, level *L)
{
	double until = fftd__mono_s() + QUIESCE_MS * 1e-3;
	int    rv    = -1;
	while (fftd__mono_s() < until) {
		soak_take_level(r->d.pid, r->ctl, L);
		if (L->sessions == OWN_SESSIONS && L->channels == 0
		    && L->plans == 0) {
			rv = 0;
			break;
		}
		fftd_test_sleep_ms(100);
	}
	fftd_test_sleep_ms(1000); // let freed memory settle
	soak_take_level(r->d.pid, r->ctl, L);
	L->t        = fftd__mono_s() - r->t0;
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
usage(void)
{
	fprintf(stderr,
	    "usage: soak [--spawn FFTD_BIN] [--clients N] [--requests N]\n"
	    "            [--kill-every-ms M] [--depth D] [--large-every L]\n"
	    "            [--sample-ms S]\n"
	    "            [--warmup-frac F] [--timeout S] [--stall-s S]\n"
	    "            [--json FILE] [--ping-log FILE] [--verbose]\n");
	exit(2);
}

static const fftd_test_role ROLES[] = {
	{ "soak-client", soak_client },
	{ "soak-ping", soak_ping_process },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int nclients = 16, kill_ms = 500, depth = 4, large_every = 32,
	    sample_ms         = 1000;
	int         timeout_s = 3600, verbose = 0, stall_s = 0;
	long long   requests  = 200000;
	double      warm_frac = 0.25;
	const char *json      = NULL;
	const char *ping_log  = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a   = argv[i];
		int         val = i + 1 < argc;
		if (strcmp(a, "--spawn") == 0 && val) {
			setenv("FFTD_BIN", argv[++i], 1);
		} else if (strcmp(a, "--clients") == 0 && val) {
			nclients = atoi(argv[++i]);
		} else if (strcmp(a, "--requests") == 0 && val) {
			requests = atoll(argv[++i]);
		} else if (strcmp(a, "--sample-ms") == 0 && val) {
			sample_ms = atoi(argv[++i]);
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
		} else if (strcmp(a, "--ping-log") == 0 && val) {
			ping_log = argv[++i];
		} else if (strcmp(a, "--stall-s") == 0 && val) {
			stall_s = atoi(argv[++i]);
		} else if (strcmp(a, "--verbose") == 0) {
			verbose = 1;
		} else {
			usage();
		}
	}
	if (nclients < 1 || nclients > MAX_CLIENTS || requests < 1
	    || kill_ms < 0 || sample_ms < 10 || depth < 1 || depth > MAX_DEPTH
	    || large_every < 1 || !(warm_frac > 0 && warm_frac < 1)
	    || timeout_s < 1 || stall_s < 0) {
		usage();
	}

	run r = { .verbose = verbose,
		.sample_s  = sample_ms * 1e-3,
		.stall_ms  = stall_s > 0 ? stall_s * 1000 : STALL_MS_DEFAULT,
		.start_ms  = stall_s > 0 ? stall_s * 1000 : START_MS_DEFAULT,
		.phase     = "start" };
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

	// The ping process is the well-behaved client; the thread
	// beside it shares this process with the forks and /proc reads.
	_Atomic int pg_stop     = 0;
	pinger      pg          = { .stop = &pg_stop,
		              .cap = (size_t) timeout_s * (1000 / PING_MS) + 1024 };
	pg.us                   = malloc(pg.cap * sizeof(float));
	pg.split                = malloc(3 * pg.cap * sizeof(float));
	const char *ping_args[] = { r.path, NULL };
	pid_t       ping_pid    = fftd_test_spawn("soak-ping", ping_args);
	if (pg.us == NULL || pg.split == NULL || ping_pid <= 0
	    || soak_wait_ping_ready(r.sh, ping_pid, START_MS_DEFAULT) != 0
	    || fftd_client_open(&r.ctl, r.d.url, 30000) != FFTD_OK
	    || fftd_client_open(&pg.c, r.d.url, 30000) != FFTD_OK
	    || pthread_create(&pg.th, NULL, soak_ping_main, &pg) != 0) {
		fprintf(
		    stderr, "soak: control clients: %s\n", fftd_last_error());
		if (ping_pid > 0) {
			kill(ping_pid, SIGKILL);
			wait_gone(ping_pid, KILL_WAIT_MS, NULL);
		}
		fftd_test_daemon_stop(&r.d);
		unlink(r.path);
		return 1;
	}
	r.t0              = fftd__mono_s();
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
	if (phase(&r, "warm-up", warm, kill_ms, deadline) != 0) {
		FAILED("warm-up did not complete: %s",
		    r.child_failures ? r.child_why : "timeout or daemon gone");
	}
	if (quiesce(&r, &base) != 0) {
		FAILED("after warm-up: %" PRId64 " sessions, %" PRId64
		       " plans, %" PRId64 " channels still open (want 3, 0, 0)",
		    base.sessions, base.plans, base.channels);
	}
	size_t   ping_warm  = pg.n;
	size_t   pp_warm    = atomic_load(&r.sh->ping.n);
	uint64_t kills_warm = r.kills;
	if (fails == 0
	    && phase(&r, "run", (uint64_t) requests, kill_ms, deadline) != 0) {
		FAILED("the run did not complete: %s",
		    r.child_failures ? r.child_why : "timeout or daemon gone");
	}
	int q = quiesce(&r, &end);
	if (q != 0) {
		FAILED("at the end: %" PRId64 " sessions, %" PRId64
		       " plans, %" PRId64
		       " channels still open (want 3, 0, 0): "
		       "the daemon did not release killed clients",
		    end.sessions, end.plans, end.channels);
	}
	atomic_store(&pg_stop, 1);
	pthread_join(pg.th, NULL);
	atomic_store(&r.sh->ping.stop, 1);
	int pst = -1;
	if (wait_gone(ping_pid, STOP_MS, &pst) != 0) {
		kill(ping_pid, SIGKILL);
		wait_gone(ping_pid, KILL_WAIT_MS, NULL);
		FAILED("the ping process did not stop within %d s",
		    STOP_MS / 1000);
	} else if (!WIFEXITED(pst) || WEXITSTATUS(pst) != 0) {
		FAILED("the ping process ended badly (status %d)", pst);
	}
	pinger pp  = { .us = r.sh->ping.us,
		 .split    = r.sh->ping.split,
		 .sent_ns  = r.sh->ping.sent_ns,
		 .n        = atomic_load(&r.sh->ping.n),
		 .cap      = PING_CAP,
		 .failed   = atomic_load(&r.sh->ping.failed) };
	double dur = fftd__mono_s() - r.t0;

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
	if (ping_log != NULL && soak_write_ping_log(ping_log, &pp) != 0) {
		FAILED("cannot write %s", ping_log);
	}
	soak_ping_figs fp = soak_ping_figures(&pp, pp_warm),
	               ft = soak_ping_figures(&pg, ping_warm);
	int dst           = fftd_test_daemon_stop(&r.d);
	if (dst != 0) {
		FAILED("the daemon exited with status %d", dst);
	}

	printf("\n%-10s %8s %10s %6s %6s %6s %8s %8s %12s\n", "level", "t_s",
	    "rss_kB", "fds", "maps", "plans", "sessions", "channels",
	    "device_used");
	soak_print_level(stdout, "warm-up", &base);
	soak_print_level(stdout, "end", &end);
	printf("\nduration %.0f s, requests answered %" PRIu64 " (ok %" PRIu64
	       ", wrong %" PRIu64 ", failed %" PRIu64 ", refused %" PRIu64
	       "), kills %" PRIu64 " (%" PRIu64 " after warm-up)\n",
	    dur, ok + wrong + failed, ok, wrong, failed, refused, r.kills,
	    r.kills - kills_warm);
	soak_print_ping(
	    "ping (well-behaved client: a process of its own)", &pp, &fp, 1);
	soak_print_ping(
	    "ping (a thread of the soak's own process, for comparison)", &pg,
	    &ft, 0);
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
			soak_json_level(f, "level_after_warmup", &base);
			soak_json_level(f, "level_end", &end);
			soak_json_ping(f, "ping_us", &pp, &fp);
			soak_json_ping(f, "ping_thread_us", &pg, &ft);
			fprintf(f, ", \"passed\": %s, \"failure\": ",
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
	free(pg.split);
	free(r.samples);
	munmap(r.sh, sizeof(shared));
	unlink(r.path);
	return fails ? 1 : 0;
}

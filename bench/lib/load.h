// SPDX-License-Identifier: MIT
//
// load.h — PRIVATE to fftd's benchmarks and tests (bench/lib). A
// many-tenant load on a real daemon, shared by bench/load (the full run,
// issue 5's targets), bench/soak (its input generator) and
// tests/integration/test_load.c (a shortened run in CI). Implemented by
// bench/lib/load*.c (load_impl.h says which file holds what).
//
// N client processes (children of the calling program, started with
// fftd_test_spawn in role FFTD_LOAD_ROLE) share the daemon:
//   - `realtime` clients (FFTD_PRIORITY_REALTIME): one small streaming
//     transform (f32 C2C 4096 x batch 16 at 250 Hz; batch 4 at 100 Hz on
//     the CPU) at a fixed rate, one request at a time through an
//     fftd_stream of depth 1 (the shared-memory path streaming pipelines
//     use: submit copies the input in, wait copies the result out), or
//     fftd_execute (inline) with rt_inline or over tcp://; latency
//     measured from the submit to the wait's return;
//   - `batch` clients (FFTD_PRIORITY_BATCH): f32 C2C and R2C of several
//     lengths, powers of two and not, 256 KiB .. 16 MiB of input per
//     request on a GPU (16 .. 192 KiB on the CPU backend), each keeping
//     `depth` requests in flight (fftd_execute_async) so that it stays
//     backlogged.
// Every result is checked. Client i draws a random base input x (values
// k/2048, |k| <= 2048, so that small integer multiples are exact in f32)
// and computes once its transform X in double with FFTW (and the 13
// inputs c x, so that a client's CPU per request is the check alone);
// request k sends c_k x with c_k = 1 + (k mod 13) and must come back as
// c_k X, within the
// relative L2 error 16 eps max(1, log2 n) over the whole request (eps =
// 2^-24; the bound of ref.h's fftd_ref_bound for f32). Consecutive
// requests of a client have different factors and clients have different
// x, so a result given to the wrong request or client fails, and an
// output left partly unwritten (still holding the result of the request
// that used the slot `depth` requests before, c differing) fails too.
//
// A run (fftd_load_run):
//   1. the children start, plan, compute X, and say they are ready;
//   2. unloaded: only the realtime clients run, until each has
//      rt_unloaded latency samples;
//   3. loaded: the batch clients start; once each has completed 2 x depth
//      requests (all backlogged), the steady window opens with a snapshot
//      of fftd_get_client_stats, fftd_get_device_stats and fftd_get_stats;
//      realtime latencies taken in the window count as "loaded"; the
//      window closes with a second snapshot once `requests` requests (all
//      clients, all phases) are complete; then every client stops
//      submitting, completes what it has in flight, and exits.
// Jain's fairness index is computed over the batch clients' device_seconds
// deltas in the window (equal weights); clients are matched to the
// daemon's per-client statistics by peer pid (ipc:// only).
//
// SIGTERM run (sigterm_after_s > 0, a daemon the caller started): phase 2
// is skipped; sigterm_after_s seconds after the window opens, each client
// sends fftd_ping between two of its submissions and notes how many
// requests it had submitted when the ping was answered (the daemon reads
// a connection's messages in order, so those are accepted work); then
// the daemon gets SIGTERM while every client keeps submitting. Requests
// before the mark must complete with a correct result; later ones may
// also complete with FFTD_ECLOSED or FFTD_ESHUTDOWN (the daemon may not
// have taken them in), or with FFTD_ETIMEDOUT: a client of one URL waits
// up to its timeout for a lost connection to come back (fftd.h), so a
// request still in its send queue when the daemon goes (never read by
// it) ends so; those are counted apart (late_timedout). Any other status
// or a wrong result fails. The daemon must exit 0 within 5 s of the
// signal.

#ifndef FFTD_BENCH_LOAD_H
#define FFTD_BENCH_LOAD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon.h"
#include "fftd.h"

// FFTD_LOAD_ROLE is the child role; the program's role table must map it
// to fftd_load_role.
#define FFTD_LOAD_ROLE "load-client"
#define FFTD_LOAD_MAX_CLIENTS 64
#define FFTD_LOAD_MAX_REALTIME 8
#define FFTD_LOAD_MAX_DEPTH 12 // < 13: a slot's reuse changes c_k
#define FFTD_LOAD_NSHAPES 7    // batch shapes of each size table
// Statuses are counted by code 0..FFTD_LOAD_NSTATUS-2; the last bucket
// holds every other code (tagged ranges).
#define FFTD_LOAD_NSTATUS 32
// Targets (issue 5).
#define FFTD_LOAD_JAIN_TARGET 0.99
// A batch client counts as backlogged when it had work queued at the
// daemon in at least this share of the window's samples.
#define FFTD_LOAD_BACKLOG_MIN 0.9
// A client that is not backlogged may have more device time than the
// backlogged clients' mean by at most this factor (max-min fairness).
#define FFTD_LOAD_OVER_TOL 1.05
#define FFTD_LOAD_P99_RATIO_TARGET 2.0
#define FFTD_LOAD_EXIT_TARGET_S 5.0

// Sizes: what the batch and realtime clients transform.
typedef enum fftd_load_sizes {
	FFTD_LOAD_SIZES_AUTO  = 0, // small on the fftw backend, else full
	FFTD_LOAD_SIZES_SMALL = 1,
	FFTD_LOAD_SIZES_FULL  = 2,
} fftd_load_sizes;

// fftd_load_fair is fair sharing judged as max-min fairness, which is
// what a work-conserving fair scheduler gives (Bertsekas and Gallager,
// Data Networks, 2nd ed., section 6.5.2): a client that keeps work queued
// is owed an equal share of device time (per weight); a client that does
// not (its own CPU, say, limits what it asks) is owed what it asks, and
// must not get more than the backlogged ones. Jain's index (Jain, Chiu,
// Hawe, DEC-TR-301, 1984, section 3: over x_i = T_i / O_i, O_i the fair
// allocation) over all batch clients equals jain_bl when all of them are
// backlogged; when some are not, only this one is meaningful.
typedef struct fftd_load_fair {
	int    n;         // batch clients judged
	int    jain_bl_n; // of them backlogged (>= FFTD_LOAD_BACKLOG_MIN)
	double jain_bl;   // Jain's index over their device time / weight
	int    over_n;    // others above FFTD_LOAD_OVER_TOL x their mean
	double mean_bl;   // the backlogged clients' mean device time / weight
} fftd_load_fair;

// fftd_load_fairness judges n clients' device times (seconds, any unit),
// weights (> 0) and backlogged shares (0..1; NAN counts as not
// backlogged). jain_bl is NAN with fewer than 2 backlogged clients (the
// devices were not saturated by them: nothing to share).
void fftd_load_fairness(const double *device_s, const double *weight,
    const double *backlogged, int n, fftd_load_fair *out);

// fftd_load_config describes a run; fftd_load_defaults fills it.
typedef struct fftd_load_config {
	const char       *url;        // the daemon
	fftd_test_daemon *daemon;     // the daemon the caller started, or NULL
	int               nclients;   // client processes (2..64)
	int               nrealtime;  // of them realtime (0..8)
	long long         requests;   // requests to complete, all clients
	int               depth;      // batch clients' requests in flight
	double            rt_rate_hz; // realtime request rate (0: default)
	int               rt_inline;  // realtime through fftd_execute
	// rt_in_place: realtime clients use their stream's slots in place, as
	// a streaming pipeline would: the input is written into the slot
	// (fftd_stream_input) before the clock starts (the producer's own
	// work) and the result is checked in the slot (fftd_stream_wait's
	// outp), so neither copy is in the latency
	int rt_in_place;
	// rt_spin_us: realtime streams' waits spin this long before they
	// sleep (fftd_stream_set_spin; 0: they sleep at once)
	int rt_spin_us;
	int rt_unloaded; // unloaded samples per rt client (0: def.)
	int batch_shm;   // batch clients' arrays in fftd_buffers (no copies)
	int batch_nice;  // batch clients' nice value, 1..19 (0: as started)
	int rt_slice_us; // realtime clients' time slice, us
	                 // (daemon/cpu_slice.h)
	// batch_cpus: CPUs the batch client processes may run on, a list
	// such as "4-15" or "2,3,8-15" (empty: all), as an administrator keeps
	// batch jobs off the cores of realtime pipelines (systemd's
	// AllowedCPUs=, taskset); the realtime clients and the daemon are
	// not confined.
	char            batch_cpus[64];
	fftd_load_sizes sizes;
	// shapes: batch client i (0-based among the batch clients) takes
	// shape shapes[i % nshapes] of the size table (0..FFTD_LOAD_NSHAPES-1,
	// smallest first); nshapes 0: all in turn
	int    shapes[FFTD_LOAD_NSHAPES];
	int    nshapes;
	double sigterm_after_s; // > 0: SIGTERM run (needs daemon)
	int    timeout_s;       // bound on the whole run
	int    verbose;         // progress lines on stderr
} fftd_load_config;

// fftd_load_lat is a latency summary, in microseconds.
typedef struct fftd_load_lat {
	uint64_t n;
	double   p50, p99, p999, max, mean;
} fftd_load_lat;

// FFTD_LOAD_NSTAGES: the parts of a realtime stream execution's latency
// (fftd_stream_last_times), in order: copy in (the client's copy into the
// slot, bench start to submitted), to daemon (submitted to received),
// queue (received to started), device (started to finished), back
// (finished to answered), copy out (answered to the wait's return).
#define FFTD_LOAD_NSTAGES 6
extern const char *const fftd_load_stage_names[FFTD_LOAD_NSTAGES];

// fftd_load_stages summarises the stages over the realtime clients'
// stream executions of one phase, in microseconds: each stage's p50 and
// p99, and its mean over the tail (the executions whose whole latency
// was above the phase's p99), which says where the tail's time went.
typedef struct fftd_load_stages {
	uint64_t n, ntail;
	double   p50[FFTD_LOAD_NSTAGES], p99[FFTD_LOAD_NSTAGES];
	double   tail_mean[FFTD_LOAD_NSTAGES];
	double   tail_total_mean;
} fftd_load_stages;

// fftd_load_dq is a latency seen by the daemon (fftd_client_stats
// histograms): the upper bounds of the buckets holding the percentiles,
// in microseconds.
typedef struct fftd_load_dq {
	uint64_t n;
	double   p50, p99;
} fftd_load_dq;

// fftd_load_client is one client process's outcome.
typedef struct fftd_load_client {
	int       realtime;
	fftd_kind kind;
	int64_t   n, batch;
	size_t    in_bytes, out_bytes;
	int       depth;
	char      algorithm[16];
	double    rate_hz;   // realtime
	int       rt_stream; // realtime: through an fftd_stream
	pid_t     pid;
	int       exit_code; // the child's exit status (0 fine)
	char      why[200];  // the child's own failure, if any
	// requests: submitted (fftd_execute_async / fftd_execute accepted),
	// ok (answered FFTD_OK and correct), wrong (FFTD_OK, not correct),
	// failed (answered with an error), unanswered (no answer: the child
	// died or hung), refused (the submit call itself failed)
	uint64_t submitted, ok, wrong, failed, unanswered, refused;
	// status counts of answered requests: [0] submitted before the mark
	// (all of them outside the SIGTERM run), [1] after it
	uint64_t status[2][FFTD_LOAD_NSTATUS];
	uint64_t wrong_after_mark; // of wrong
	uint64_t mark;             // requests submitted before the mark
	int      refused_status;   // the first refused submit's status
	double   max_err, bound;   // relative L2 errors seen / allowed
	// the daemon's view in the steady window (matched by pid)
	int      matched;
	double   device_s, queue_s; // deltas
	uint64_t executes;          // delta of answered executions
	double   backlogged; // share of samples with work queued at the daemon
	double   weight;
	// the daemon's queue and device time per request: [0] unloaded
	// phase (realtime clients), [1] steady window
	fftd_load_dq queue[2], device[2];
	// realtime latencies (client side, microseconds)
	fftd_load_lat unloaded, loaded;
	uint64_t      missed; // rate slots skipped because a request overran
} fftd_load_client;

// fftd_load_result is the outcome of a run.
typedef struct fftd_load_result {
	fftd_load_config cfg; // as run (defaults filled in)
	fftd_info        info;
	int              small; // sizes used
	int              nclients;
	fftd_load_client cl[FFTD_LOAD_MAX_CLIENTS];
	// totals over the clients
	uint64_t submitted, ok, wrong, failed, unanswered, refused;
	uint64_t lost;  // failed + unanswered + refused (outside SIGTERM runs)
	double   run_s; // from the start of phase 2 to the last exit
	double   unloaded_s;      // phase 2 (realtime alone)
	double   window_s;        // steady window
	uint64_t window_reqs;     // requests completed in the window (all)
	double   window_in_bytes; // their input bytes
	// daemon counters (fftd_get_stats before the children, after them)
	int        stats_ok;
	char       stats_why[200];
	fftd_stats before, after;
	uint64_t   daemon_errors; // after.errors - before.errors
	// fairness over the batch clients (matched ones)
	int    client_stats_ok;
	char   client_stats_why[200];
	int    jain_n;
	double jain;
	double share_min, share_max; // device time / mean, over them
	// max-min fairness (fftd_load_fairness): Jain's index over the
	// backlogged batch clients, and how many of the others had more
	// device time than those
	fftd_load_fair fair;
	double         device_busy; // busy fraction of the devices in window
	// per device in the window (several devices: how evenly placement
	// spread the work): busy fraction and executions
	int      ndev;
	double   dev_busy[FFTD_MAX_DEVICES];
	uint64_t dev_executes[FFTD_MAX_DEVICES];
	// realtime latency, all realtime clients together
	fftd_load_lat    rt_unloaded, rt_loaded;
	fftd_load_stages rt_stages[2]; // unloaded, loaded (streams only)
	double           p99_ratio; // loaded / unloaded (NAN if not measured)
	// the host's CPUs in the unloaded phase and the window (/proc/stat;
	// NAN where unreadable): fraction busy, and fraction stolen by a
	// hypervisor (a virtual machine's vCPUs not running: every thread on
	// them stalls, whatever its priority)
	double host_busy_unloaded, host_steal_unloaded;
	double host_busy_loaded, host_steal_loaded;
	// SIGTERM run
	int      sigterm;
	double   sigterm_at_s; // from the start of phase 2
	double   exit_s;       // signal to exit (NAN: did not exit in time)
	int      exit_code;    // the daemon's status (-1: killed)
	uint64_t accepted;     // requests submitted before the marks
	uint64_t accepted_ok;  // of them, answered correctly
	uint64_t accepted_bad; // of them, anything else
	uint64_t late_bad; // after the marks: wrong, unanswered, or a status
	                   // other than FFTD_OK, ECLOSED, ESHUTDOWN, ETIMEDOUT
	uint64_t late_timedout; // after the marks: FFTD_ETIMEDOUT
	// verdict: correctness failures (lost, wrong, daemon errors, SIGTERM
	// checks, child failures) — not the performance targets
	int  failures;
	char failure[400]; // the first one
} fftd_load_result;

// fftd_load_defaults fills *cfg: 16 clients of which 2 realtime, 100000
// requests, depth 8, sizes auto, timeout 900 s.
void fftd_load_defaults(fftd_load_config *cfg);

// fftd_load_cpu_list checks a CPU list (batch_cpus) and returns how many
// CPUs it names, or -1 if it is malformed or names a CPU past CPU_SETSIZE.
int fftd_load_cpu_list(const char *list, void *set);

// fftd_load_run runs the load described by cfg against cfg->url and fills
// *res. Returns 0 when the run took place (res->failures says whether it
// was correct), -1 when it could not (res->failure says why).
int fftd_load_run(const fftd_load_config *cfg, fftd_load_result *res);

// fftd_load_role is the child role (register it as FFTD_LOAD_ROLE).
int fftd_load_role(int argc, char **argv);

// fftd_load_print prints the run's table, figures and targets.
void fftd_load_print(const fftd_load_result *res, FILE *f);

// fftd_load_status_name is a short name for a status bucket.
const char *fftd_load_status_name(int bucket);

// fftd_load_gen is the load clients' inputs and expected results for one
// f32 shape (C2C or R2C, rank 1, dense, batched), for programs that drive
// their own requests and check them the same way (bench/soak): request k's
// input is c_k x, its result must be c_k X within the same bound.
typedef struct fftd_load_gen fftd_load_gen;

// fftd_load_gen_new draws x from seed and computes X (FFTW, double); NULL
// when out of memory.
fftd_load_gen *fftd_load_gen_new(
    fftd_kind kind, int64_t n, int64_t batch, uint64_t seed);

// fftd_load_gen_in_bytes and _out_bytes are the dense array sizes.
size_t fftd_load_gen_in_bytes(const fftd_load_gen *g);
size_t fftd_load_gen_out_bytes(const fftd_load_gen *g);

// fftd_load_gen_input is request k's input (owned by g).
const float *fftd_load_gen_input(const fftd_load_gen *g, uint64_t k);

// fftd_load_gen_error is the relative L2 error of out as request k's
// result (NaN if out holds a NaN); fftd_load_gen_bound is the most allowed.
double fftd_load_gen_error(
    const fftd_load_gen *g, const float *out, uint64_t k);
double fftd_load_gen_bound(const fftd_load_gen *g);

// fftd_load_gen_free frees g (NULL is ignored).
void fftd_load_gen_free(fftd_load_gen *g);

#endif // FFTD_BENCH_LOAD_H

// SPDX-License-Identifier: MIT
//
// load_impl.h — PRIVATE to bench/lib/load*.c: what the load engine's files
// (load.h) share. The run's parent and its client processes talk through
// one file both map (`shared`, a `slot` per client, then the realtime
// clients' latency and stage samples); a client process is a `child`; the
// parent's view of the daemon's statistics is a `snap`.
//
// The files, floor by floor: load_gen.c (a client's inputs, its FFTW
// reference and the check of a result), load_child.c (a client process),
// load_figures.c (the run's figures and verdict from the shared file and
// the snapshots), load_print.c (names and the report), load.c (the run:
// the shared file, the clients, the phases and the window).

#ifndef FFTD_BENCH_LOAD_IMPL_H
#define FFTD_BENCH_LOAD_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "load.h"

enum { PH_WAIT = 0, PH_REALTIME = 1, PH_ALL = 2, PH_STOP = 3 };
enum { ST_STARTING = 0, ST_READY = 1, ST_DONE = 2, ST_FAILED = -1 };

#define LAT_CAP (1u << 20) // latency samples per realtime client and phase
// stage samples per realtime client and phase: FFTD_LOAD_NSTAGES stages
// and the whole latency each (us)
#define STAGE_CAP (1u << 16)
#define STAGE_W (FFTD_LOAD_NSTAGES + 1)
#define NFACTORS 13  // c_k = 1 + (k mod 13)
#define SAMPLE_MS 50 // client-stats sampling in the window

// --- what parent and children share (a file both map) -------------------

typedef struct slot {
	// written by the parent before the child starts
	int       realtime;
	fftd_kind kind;
	int64_t   n, batch;
	int       depth;
	double    rate_hz;
	uint64_t  seed;
	int       rt_stream; // realtime: use a stream (the child says if it
	                     // could)
	int  batch_shm;      // batch: arrays in an fftd_buffer (zero copy)
	int  batch_nice;     // batch: the child's nice value (0: unchanged)
	int  rt_slice_us;    // realtime: its threads' time slice (0: default)
	int  rt_in_place;    // realtime: stream slots used in place
	int  rt_spin_us;     // realtime: stream waits spin this long
	char batch_cpus[64]; // batch: CPUs it may run on ("": all)
	// written by the child
	_Atomic int      state;
	pid_t            pid;
	char             why[200];
	char             algorithm[16];
	size_t           in_bytes, out_bytes;
	double           bound, max_err;
	_Atomic uint64_t submitted; // submit calls that returned FFTD_OK
	_Atomic uint64_t answered;  // of them, completed (any status)
	uint64_t         ok, wrong, failed, refused, wrong_after_mark;
	int              refused_status;
	uint64_t         status[2][FFTD_LOAD_NSTATUS];
	_Atomic uint64_t mark;
	_Atomic int      marked;
	uint64_t         nlat[2];
	uint64_t         nstage[2];
	uint64_t         missed;
} slot;

typedef struct shared {
	char        url[512];
	int         nclients, nrealtime, timeout_ms;
	int         rt_unloaded; // unloaded samples per realtime client
	_Atomic int phase;
	_Atomic int steady;   // in the steady window
	_Atomic int mark_req; // SIGTERM run: ping and mark
	slot        slot[FFTD_LOAD_MAX_CLIENTS];
	// then float lat[nrealtime][2][LAT_CAP] (microseconds)
	// and float stage[nrealtime][2][STAGE_CAP][STAGE_W]
} shared;

// shared_size is the size of the shared file for nrealtime realtime clients.
static inline size_t
shared_size(int nrealtime)
{
	return sizeof(shared) + (size_t) nrealtime * 2 * LAT_CAP * sizeof(float)
	    + (size_t) nrealtime * 2 * STAGE_CAP * STAGE_W * sizeof(float);
}

// lat_of is realtime client i's latency samples of a phase (microseconds).
static inline float *
lat_of(shared *sh, int i, int phase)
{
	float *base = (float *) (sh + 1);
	return base + ((size_t) i * 2 + (size_t) phase) * LAT_CAP;
}

// stage_of is realtime client i's stage samples of a phase: STAGE_W
// floats each.
static inline float *
stage_of(shared *sh, int i, int phase)
{
	float *base = (float *) (sh + 1) + (size_t) sh->nrealtime * 2 * LAT_CAP;
	return base + ((size_t) i * 2 + (size_t) phase) * STAGE_CAP * STAGE_W;
}

// --- a client process --------------------------------------------------------

// child is a client process's state: its slot, its client, plan and
// stream, its inputs (made once) and the reference they are checked by.
typedef struct child {
	shared      *sh;
	slot        *s;
	int          me;
	fftd_client *c;
	fftd_plan   *p;
	float       *x;   // base input (in_bytes / 4 floats)
	float       *ref; // its transform, as f32 complex pairs
	double       ref_norm2;
	size_t       nin, nout;    // floats in and out
	float       *in[NFACTORS]; // c x for each factor c, made once
	float       *out[FFTD_LOAD_MAX_DEPTH];
	fftd_buffer *shm; // holds in[] and out[] when batch_shm
	fftd_stream *st;  // realtime clients on the stream path
} child;

// --- the parent's snapshots ------------------------------------------------

// A snapshot of the daemon's per-client and per-device statistics.
#define MAX_STATS 256
typedef struct snap {
	int               rv, n, ndev;
	fftd_client_stats cs[MAX_STATS];
	fftd_device_stats ds[FFTD_MAX_DEVICES];
	uint64_t          answered[FFTD_LOAD_MAX_CLIENTS];
	double            t;
} snap;

// --- across the files
// ----------------------------------------------------------

// fftd__load_factor is request k's factor c_k = 1 + (k mod NFACTORS).
double fftd__load_factor(uint64_t k);

// fftd__load_input returns request k's input c_k x (made once).
const float *fftd__load_input(child *ch, uint64_t k);

// fftd__load_rel_err is request k's relative L2 error (load_gen.c).
double fftd__load_rel_err(const child *ch, const float *out, uint64_t k);

// fftd__load_make_inputs draws x, makes the inputs c x and the reference
// X (load_gen.c). Returns 0, or -1 if FFTW failed.
int fftd__load_make_inputs(child *ch);

// fftd__load_ferr is rv's name and libfftd's last message, in a buffer of
// the calling thread's (load_print.c).
const char *fftd__load_ferr(int rv);

// fftd__load_fail notes a failure of the run: the first one's text is kept
// in r->failure, all are counted (load.c).
void fftd__load_fail(fftd_load_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// fftd__load_find_pid is the statistics of the daemon's client of process
// pid in a snapshot, or NULL (load_figures.c).
const fftd_client_stats *fftd__load_find_pid(const snap *sn, pid_t pid);

// fftd__load_collect copies every client's counts from the shared file
// into r, with the clients' exit codes (load_figures.c).
void fftd__load_collect(fftd_load_result *r, shared *sh, const int *codes);

// fftd__load_latencies summarises the realtime clients' latencies and
// stages of both phases (load_figures.c).
void fftd__load_latencies(fftd_load_result *r, shared *sh);

// fftd__load_daemon_lat fills the clients' daemon-side latencies of one
// phase from two snapshots (load_figures.c).
void fftd__load_daemon_lat(
    fftd_load_result *r, shared *sh, const snap *s0, const snap *s1, int phase);

// fftd__load_window_fairness computes the window's per-client figures and
// Jain's index over the batch clients (load_figures.c).
void fftd__load_window_fairness(fftd_load_result *r, shared *sh, const snap *s0,
    const snap *s1, const uint64_t *bl, uint64_t nsamples);

// fftd__load_verdict checks the run's figures against the targets and
// notes every miss with fftd__load_fail (load_figures.c).
void fftd__load_verdict(fftd_load_result *r);

#endif // FFTD_BENCH_LOAD_IMPL_H

// SPDX-License-Identifier: MIT
//
// soak.h — PRIVATE to bench/soak. What the soak's parent (soak.c) and its
// client processes (soak_client.c) share: the layout of the file both map,
// the request mix, and the states a client reports, so that the parent can
// say what a client that does not move was doing.

#ifndef FFTD_BENCH_SOAK_H
#define FFTD_BENCH_SOAK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "fftd.h"

#define MAX_CLIENTS 64
#define MAX_DEPTH 12 // < 13: a slot's reuse changes c_k

enum { M_INLINE, M_NNG, M_SHM, M_STREAM, NMODES };

// What a client is doing (cslot.state), in the order it goes through them.
enum {
	CS_SPAWNED, // started by the parent, not yet running its role
	CS_CONNECT, // in fftd_client_open
	CS_PLAN,    // planning, registering its buffer or stream
	CS_RUN,     // submitting and waiting for its requests
	CS_DRAIN,   // saw stop: waiting for what it has in flight
	CS_CLOSE,   // releasing its objects and closing its client
	CS_EXIT,    // returned from its role
	NSTATES
};

// cslot is one client's slot, counted across its incarnations.
typedef struct cslot {
	_Atomic uint64_t ok, wrong, failed, refused;
	_Atomic int      running;  // set by the child once it submits
	_Atomic int      state;    // CS_*, set by the child
	_Atomic int64_t  state_ms; // when it entered it (CLOCK_MONOTONIC)
	char             why[200];
} cslot;

#define PING_MS 10
#define PING_TARGET_US 2000.0 // the bound on the ping's p99
#define PING_CAP (1u << 19)   // pings the ping process keeps: 87 min

// ping_area is where the ping process (soak_ping_process) leaves its
// round trips for the parent.
typedef struct ping_area {
	_Atomic int      stop;  // set by the parent: end the pings
	_Atomic int      ready; // set by the ping process once connected
	_Atomic size_t   n;     // round trips kept in us and split so far
	_Atomic uint64_t failed;
	float            us[PING_CAP];
	float            split[3 * PING_CAP];
	uint64_t         sent_ns[PING_CAP]; // when each was sent (monotonic)
} ping_area;

// shared is the file the parent creates and every client maps.
typedef struct shared {
	char        url[512];
	int         nclients, depth, large_every, timeout_ms;
	_Atomic int stop;
	cslot       c[MAX_CLIENTS];
	ping_area   ping;
} shared;

// level is the daemon's level at one time.
typedef struct level {
	double   t; // seconds since the start
	long     rss_kb, fds, maps;
	int64_t  plans, sessions, channels, dev_used; // -1: unknown
	uint64_t requests; // answered so far, all clients
} level;

// soak_take_level reads the daemon's (pid) RSS, fds and mappings from
// /proc and its plans, sessions, channels and device memory from its
// statistics through ctl.
void soak_take_level(pid_t pid, fftd_client *ctl, level *L);

// pinger is a well-behaved client: its own connection, a loop that pings
// every PING_MS until *stop, and the round trips (us, at most cap). The
// soak runs two: the ping process (soak_ping_process, the issue's
// well-behaved client, a process that does nothing else) and a thread of
// the soak's own process, which also forks the clients and reads /proc.
typedef struct pinger {
	fftd_client    *c;
	pthread_t       th;
	_Atomic int    *stop;
	_Atomic size_t *published; // NULL, or n stored after each ping
	float          *us;
	float          *split; // per ping: to the daemon, in it, back (us; NAN)
	uint64_t *sent_ns;     // NULL, or when each was sent (CLOCK_MONOTONIC)
	size_t    n, cap;
	uint64_t  failed;
} pinger;

// soak_ping_main is the pinger's loop (arg: the pinger); a thread's body.
void *soak_ping_main(void *arg);

// soak_ping_process is the ping process (argv: the shared file): it
// connects, sets ping.ready, and pings into the shared ping_area until
// ping.stop. Returns 0, or 1 if it could not start.
int soak_ping_process(int argc, char **argv);

// soak_ping_split prints (to f, and as a JSON object's fields to json; either
// may be NULL) where the pings spent their time: each stage's p99, and the
// stages' mean over the pings slower than the target.
void soak_ping_split(const pinger *pg, FILE *f, FILE *json);

// soak_print_level prints one row of the level table (name, then L's
// figures) to f; soak_json_level writes L as the JSON object `key`.
void soak_print_level(FILE *f, const char *name, const level *L);
void soak_json_level(FILE *f, const char *key, const level *L);

// soak_wait_ping_ready waits (at most ms) for the ping process pid to
// connect (sh->ping.ready). Returns 0, or -1 (it ended, or did not connect
// in time) after saying so on stderr.
int soak_wait_ping_ready(shared *sh, pid_t pid, int ms);

// soak_write_ping_log writes pg's round trips to path, one per line in
// the order sent: when it was sent (CLOCK_MONOTONIC, ns), the round trip,
// and its three stages (us), to line a slow ping up with what the daemon's
// threads were doing then (tools/thread-sample.py). pg->sent_ns must be
// set. Returns 0, or -1.
int soak_write_ping_log(const char *path, const pinger *pg);

// soak_ping_figs are a pinger's round-trip quantiles (us).
typedef struct soak_ping_figs {
	double p50, p99, p99_post, worst, max;
} soak_ping_figs;

// soak_ping_figures takes pg's quantiles over the whole run, after its
// first `warm` pings (the warm-up), and over the worst 10 s window (NAN
// when the run is shorter). Sorts pg->us in place (pg->split keeps the
// pings' order).
soak_ping_figs soak_ping_figures(pinger *pg, size_t warm);

// soak_print_ping prints a pinger's figures (named name) and where its
// pings spent their time to stdout; judged: marked met or MISSED against
// the target (p99 and the worst window both under it).
void soak_print_ping(
    const char *name, const pinger *pg, const soak_ping_figs *f, int judged);

// soak_json_ping writes a pinger's figures as the JSON object `key`.
void soak_json_ping(
    FILE *f, const char *key, const pinger *pg, const soak_ping_figs *x);

// soak_pct is the p-quantile of v[0..n) (sorted in place); NAN when empty.
double soak_pct(float *v, size_t n, double p);

// soak_client runs one client (argv: the shared file, its index, its
// incarnation): its requests until the parent says stop, then it
// completes what it has in flight and returns 0.
int soak_client(int argc, char **argv);

// soak_state_name names a CS_* state.
const char *soak_state_name(int state);

#endif // FFTD_BENCH_SOAK_H

// SPDX-License-Identifier: MIT
//
// server.h — PRIVATE to fftd. The NNG side of the daemon: one REP socket
// served by many contexts (several requests in flight per client and across
// clients), sessions (one per client connection), the plan handles each
// session holds, request validation, and the hand-off of plan and execute
// work to the device workers. Its files (server.c on top, then sessions,
// executions, stream channels, buffers, plans, statistics and replies) share
// the private server_impl.h, which lists them floor by floor.

#ifndef FFTD_DAEMON_SERVER_H
#define FFTD_DAEMON_SERVER_H

#include <stddef.h>

#include "config.h"
#include "fftd.h"
#include "worker.h"

typedef struct fftd__server fftd__server;

// fftd__server_create prepares a server over the started workers (borrowed:
// they must outlive the server; workers[i] serves device index i).
// rt_workers, when not NULL, are the devices' realtime lanes (rt_workers[i]
// on device i too): realtime plans are made and run there only, so they
// never queue behind a batch transform. backend_name is what clients are
// told.
int fftd__server_create(fftd__server **sp, const fftd__config *cfg,
    fftd__worker **workers, fftd__worker **rt_workers, int nworkers,
    const char *backend_name);

// fftd__server_start opens the socket and its listeners (cfg->listen).
// Returns FFTD_OK or an error with err filled.
int fftd__server_start(fftd__server *s, char *err, size_t errlen);

// fftd__server_drain stops accepting (refuses new connections, stops
// waiting for new requests) and waits up to timeout_ms for every accepted
// request to be answered. Returns the number of requests still unanswered.
int fftd__server_drain(fftd__server *s, int timeout_ms);

// fftd__server_destroy closes the socket, ends every session (their plans
// are released to the workers' caches) and frees the server. Call before
// stopping the workers.
void fftd__server_destroy(fftd__server *s);

// fftd__server_reload applies what a config reload may change: request
// limits, per-client limits and fair-share weights.
void fftd__server_reload(fftd__server *s, const fftd__config *fresh);

// fftd__server_get_stats fills *st with the counters of the server and of
// every worker's plan cache.
void fftd__server_get_stats(fftd__server *s, fftd_stats *st);

// fftd__server_snapshot takes a consistent copy of every counter: the
// daemon totals into *st, one entry per connected client into *clients
// (malloc'd array of *nclients, the caller frees; NULL when none) and one
// per device into *devices (malloc'd, *ndevices). Safe from any thread.
// Returns FFTD_OK or FFTD_ENOMEM (nothing to free then).
int fftd__server_snapshot(fftd__server *s, fftd_stats *st,
    fftd_client_stats **clients, int *nclients, fftd_device_stats **devices,
    int *ndevices);

// fftd__server_inflight is the number of requests being worked on or
// answered right now (the queue depth systemd's STATUS= line shows).
int fftd__server_inflight(fftd__server *s);

#endif // FFTD_DAEMON_SERVER_H

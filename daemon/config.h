// SPDX-License-Identifier: MIT
//
// config.h — PRIVATE to fftd. The daemon's settings: built-in defaults,
// then the config file (inih syntax, /etc/fftd/fftd.conf), then the command
// line, each overriding the one before.

#ifndef FFTD_DAEMON_CONFIG_H
#define FFTD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "layout.h"

#define FFTD__MAX_LISTEN 8
#define FFTD__MAX_ALLOW 64     // entries of [remote] allow
#define FFTD__TLS_PATH_MAX 512 // [tls] file names

// fftd__netmask is one entry of the [remote] allow list: a network (or a
// single address, prefix 32 or 128) that remote clients may connect from.
typedef struct fftd__netmask {
	int     family;   // 4 or 6
	int     prefix;   // leading bits of addr that must match
	uint8_t addr[16]; // network byte order; IPv4 in the first 4 bytes
} fftd__netmask;
#define FFTD__MAX_WEIGHTS 64

typedef struct fftd__config {
	char        *listen[FFTD__MAX_LISTEN]; // NNG URLs (owned)
	int          nlisten;
	int          contexts; // requests served at once
	int          slice_us; // EEVDF slice of our threads, us (0: default)
	int          busy_poll_us;    // busypoll.h's window, us: -1 auto, 0 off
	char         backend[16];     // "auto", "cuda" or "fftw"
	char         devices[128];    // "all" or "0,2"
	int          fftw_threads;    // 0: one per online CPU
	int          cpu_devices;     // fftw backend: devices the CPU serves as
	int          gpu_sync;        // 0 auto, 1 spin, 2 yield, 3 block
	bool         realtime_lane;   // realtime work on its own worker+stream
	double       realtime_memory; // its share of the device budgets
	int          fftw_measure;    // 0 estimate, 1 measure
	uint64_t     cache_budget;    // plan cache bytes per device
	uint64_t     device_budget;   // device memory per device (0: 90%)
	int          pipeline_streams; // split-batch pipeline streams per GPU
	uint64_t     pipeline_chunk_bytes; // input bytes per pipeline chunk
	fftd__limits limits;
	uint32_t     max_plans_per_client;
	uint64_t     max_plan_bytes_per_client; // estimated plan bytes (0: off)
	uint64_t     max_buffer_bytes; // shared memory per client connection
	uint32_t     max_buffers_per_client; // shared buffers per connection
	uint32_t     max_buffers_per_user;   // ... over all of a uid's
	uint32_t     max_streams_per_client; // stream channels per connection
	uint32_t     max_streams_per_user;   // ... over all of a uid's
	uint32_t     max_fd_connections_per_user; // open on the fd socket
	uint32_t     max_connections_per_user;    // ipc connections of one uid
	uint32_t     max_arrays_per_client; // resident arrays per connection
	uint64_t     max_array_bytes_per_client; // their bytes (0: no limit)
	bool ipc_peers_any; // CUDA IPC from any uid (false: same-user, root)
	uint32_t max_inflight_per_client;     // executions queued or running
	uint64_t max_queued_bytes_per_client; // their inline input bytes
	struct {
		uint32_t uid;
		double   weight;
	} weights[FFTD__MAX_WEIGHTS]; // fair-share weight per user
	int  nweights;
	int  socket_mode; // permissions of ipc sockets (octal)
	int  log_level;
	int  drain_timeout_ms;    // how long SIGTERM waits for accepted work
	char metrics_listen[256]; // [metrics] listen; "": off
	// Remote clients (remote.h): [tls] for tls+tcp:// listeners, [remote].
	char tls_cert[FFTD__TLS_PATH_MAX];      // PEM certificate (chain)
	char tls_key[FFTD__TLS_PATH_MAX];       // PEM key ("": in tls_cert)
	char tls_client_ca[FFTD__TLS_PATH_MAX]; // CAs or client certificates
	bool tls_require_client_cert;           // false only when set to no
	fftd__netmask allow[FFTD__MAX_ALLOW];   // [remote] allow (empty: any)
	int           nallow;
	bool remote_allow_insecure; // loopback tcp://, abstract:// listeners
} fftd__config;

// fftd__config_defaults fills *cfg with the built-in defaults.
void fftd__config_defaults(fftd__config *cfg);

// fftd__config_load reads an inih file into *cfg. Returns 0, or -1 with a
// message (file missing or line N malformed / unknown key) in err.
int fftd__config_load(
    fftd__config *cfg, const char *path, char *err, size_t errlen);

// fftd__config_read is fftd__config_load on an open file f, named name in
// messages.
int fftd__config_read(
    fftd__config *cfg, FILE *f, const char *name, char *err, size_t errlen);

// fftd__config_set applies one "section.key = value" setting (used by the
// file parser and by the command line). Returns 0 or -1 for an unknown key
// or bad value.
int fftd__config_set(
    fftd__config *cfg, const char *section, const char *key, const char *value);

// fftd__config_add_listen appends a listen URL (copied). Returns -1 when full.
int fftd__config_add_listen(fftd__config *cfg, const char *url);

// fftd__config_default_listen writes the default listen URL:
// ipc:///run/fftd/fftd.sock for root, else ipc://$XDG_RUNTIME_DIR/fftd.sock.
void fftd__config_default_listen(char *buf, size_t len);

// fftd__config_busy_poll_ns is server.busy_poll_us in ns, auto (-1)
// resolved for this host and `threads` polling threads (busypoll.h).
uint64_t fftd__config_busy_poll_ns(const fftd__config *cfg, int threads);

// fftd__config_weight is the fair-share weight of user uid (1 unless
// configured in [weights]).
double fftd__config_weight(const fftd__config *cfg, uint64_t uid);

// fftd__config_free frees what the config owns.
void fftd__config_free(fftd__config *cfg);

#endif // FFTD_DAEMON_CONFIG_H

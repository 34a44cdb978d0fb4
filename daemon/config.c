// SPDX-License-Identifier: MIT
//
// config.c — defaults and the inih-based config file reader.

#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <ini.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busypoll.h"
#include "log.h"
#include "remote.h"

void
fftd__config_defaults(fftd__config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	// Enough for every client's in-flight limit across a busy server:
	// a request no context takes waits inside NNG, unseen by the
	// scheduler.
	cfg->contexts = 1024;
	// 100 us slices: measured on the H100 host under full load, the
	// realtime p99 drops and throughput rises (bench/README.md).
	cfg->slice_us = 100;
	// auto: on where the host has CPUs to spare (busypoll.h)
	cfg->busy_poll_us = -1;
	strcpy(cfg->backend, "auto");
	strcpy(cfg->devices, "all");
	cfg->fftw_threads             = 0;
	cfg->cpu_devices              = 1;
	cfg->fftw_measure             = 0;
	cfg->cache_budget             = 1ull << 30;
	cfg->device_budget            = 0;
	cfg->pipeline_streams         = 8; // measured: deploy/fftd.conf
	cfg->pipeline_chunk_bytes     = 8ull << 20;
	cfg->realtime_lane            = true;
	cfg->realtime_memory          = 0.125;
	cfg->limits.max_request_bytes = 4ull << 30;
	cfg->limits.max_rank          = FFTD_MAX_RANK;
	cfg->limits.max_batch         = 1ull << 30;
	cfg->max_plans_per_client     = 1024;
	cfg->max_buffer_bytes         = 16ull << 30;
	// Each buffer is one mapping (vm.max_map_count is 65530 by default),
	// each stream channel and hand-over connection one descriptor.
	cfg->max_buffers_per_client      = 1024;
	cfg->max_buffers_per_user        = 8192;
	cfg->max_streams_per_client      = 64;
	cfg->max_streams_per_user        = 1024;
	cfg->max_fd_connections_per_user = 16;
	cfg->max_connections_per_user    = 1024;
	cfg->max_arrays_per_client       = 1024;
	cfg->max_array_bytes_per_client  = 0;     // the device budget rules
	cfg->ipc_peers_any               = false; // same-user
	cfg->max_inflight_per_client     = 32;
	cfg->max_queued_bytes_per_client = 4ull << 30;
	cfg->socket_mode                 = 0660;
	cfg->log_level                   = FFTD_LOG_INFO;
	cfg->drain_timeout_ms            = 30000;
	cfg->tls_require_client_cert     = true;
}

void
fftd__config_default_listen(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (geteuid() != 0 && xdg != NULL && xdg[0] != '\0') {
		snprintf(buf, len, "ipc://%s/fftd.sock", xdg);
	} else {
		snprintf(buf, len, "ipc:///run/fftd/fftd.sock");
	}
}

int
fftd__config_add_listen(fftd__config *cfg, const char *url)
{
	if (cfg->nlisten >= FFTD__MAX_LISTEN) {
		return -1;
	}
	char *copy = strdup(url);
	if (copy == NULL) {
		return -1;
	}
	cfg->listen[cfg->nlisten++] = copy;
	return 0;
}

double
fftd__config_weight(const fftd__config *cfg, uint64_t uid)
{
	for (int k = 0; k < cfg->nweights; k++) {
		if (cfg->weights[k].uid == uid) {
			return cfg->weights[k].weight;
		}
	}
	return 1.0;
}

void
fftd__config_free(fftd__config *cfg)
{
	for (int i = 0; i < cfg->nlisten; i++) {
		free(cfg->listen[i]);
	}
	cfg->nlisten = 0;
}

// set_detail says why the last fftd__config_set of this thread failed,
// when there is more to say than "bad value" (the file reader adds it).
static _Thread_local char set_detail[256];

// parse_decimal reads the leading decimal digits of v (no sign, no base
// prefix: "010" is ten) into *out and points *end past them. Returns -1,
// with the reason in set_detail, when there are none or they overflow.
static int
parse_decimal(const char *v, uint64_t *out, const char **end)
{
	uint64_t    x = 0;
	const char *p = v;
	if (*p < '0' || *p > '9') {
		snprintf(set_detail, sizeof(set_detail), "%s",
		    *p == '\0' ? "a value is required"
		               : "not a decimal number");
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned) (*p - '0');
		if (x > (UINT64_MAX - d) / 10) {
			snprintf(set_detail, sizeof(set_detail), "too large");
			return -1;
		}
		x = x * 10 + d;
	}
	*out = x;
	*end = p;
	return 0;
}

// parse_u64 accepts a decimal count with an optional K, M, G or T suffix
// (binary multiples: 8M is 8 MiB), exactly as deploy/fftd.conf documents;
// anything else after the digits ("5iB", "5BB", "0x10", "8 M") is refused.
static int
parse_u64(const char *v, uint64_t *out)
{
	const char *end;
	uint64_t    x;
	if (parse_decimal(v, &x, &end) != 0) {
		return -1;
	}
	int shift = 0;
	if (end[0] != '\0') {
		const char *sfx = strchr("KMGT", end[0]);
		if (sfx == NULL || end[1] != '\0') {
			snprintf(set_detail, sizeof(set_detail),
			    "'%s' after the number: the only suffixes are K, "
			    "M, G and T",
			    end);
			return -1;
		}
		shift = 10 * (int) (sfx - "KMGT" + 1);
	}
	if (shift && x > (UINT64_MAX >> shift)) {
		snprintf(set_detail, sizeof(set_detail), "too large");
		return -1;
	}
	*out = x << shift;
	return 0;
}

uint64_t
fftd__config_busy_poll_ns(const fftd__config *cfg, int threads)
{
	int64_t us = cfg->busy_poll_us < 0 ? fftd__busy_poll_auto_us(threads)
	                                   : cfg->busy_poll_us;
	return (uint64_t) us * 1000u;
}

// parse_int accepts a decimal integer in lo .. hi (a leading '-' only when
// lo is negative), nothing after it.
static int
parse_int(const char *v, int lo, int hi, int *out)
{
	const char *end;
	uint64_t    x;
	bool        neg = v[0] == '-' && lo < 0;
	if (parse_decimal(v + neg, &x, &end) != 0) {
		return -1;
	}
	if (*end != '\0') {
		snprintf(set_detail, sizeof(set_detail),
		    "'%s' after the number", end);
		return -1;
	}
	if (x > (uint64_t) INT32_MAX + 1
	    || (neg ? -(int64_t) x : (int64_t) x) < lo
	    || (neg ? -(int64_t) x : (int64_t) x) > hi) {
		snprintf(set_detail, sizeof(set_detail),
		    "out of range %d .. %d", lo, hi);
		return -1;
	}
	*out = (int) (neg ? -(int64_t) x : (int64_t) x);
	return 0;
}

// parse_bool takes yes/no, true/false, 1/0.
static int
parse_bool(const char *v, bool *out)
{
	if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0
	    || strcmp(v, "1") == 0) {
		*out = true;
	} else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0
	    || strcmp(v, "0") == 0) {
		*out = false;
	} else {
		return -1;
	}
	return 0;
}

#define IS(s, k) (strcmp(section, s) == 0 && strcmp(key, k) == 0)

// set_path copies a file name into one of the config's path fields.
static int
set_path(char *dst, const char *value)
{
	if (strlen(value) >= FFTD__TLS_PATH_MAX) {
		snprintf(set_detail, sizeof(set_detail), "path too long");
		return -1;
	}
	snprintf(dst, FFTD__TLS_PATH_MAX, "%s", value);
	return 0;
}

int
fftd__config_set(
    fftd__config *cfg, const char *section, const char *key, const char *value)
{
	uint64_t u;
	int      i;
	set_detail[0] = '\0';
	// "key =" with nothing after it is a mistake, except where empty is
	// documented to mean "none" (off, in the cert file, no list).
	if (value[0] == '\0' && !IS("metrics", "listen") && !IS("tls", "cert")
	    && !IS("tls", "key") && !IS("tls", "client_ca")
	    && !IS("remote", "allow")) {
		snprintf(set_detail, sizeof(set_detail), "a value is required");
		return -1;
	}
	if (IS("server", "listen")) {
		return fftd__config_add_listen(cfg, value);
	}
	if (IS("server", "contexts")) {
		return parse_int(value, 1, 4096, &cfg->contexts);
	}
	if (IS("server", "slice_us")) {
		if (parse_int(value, 0, 100000, &i) != 0
		    || (i != 0 && i < 100)) {
			return -1; // the kernel takes 0.1 .. 100 ms
		}
		cfg->slice_us = i;
		return 0;
	}
	if (IS("server", "busy_poll_us")) {
		if (strcmp(value, "auto") == 0) {
			cfg->busy_poll_us = -1;
			return 0;
		}
		return parse_int(
		    value, 0, FFTD__BUSY_POLL_MAX_US, &cfg->busy_poll_us);
	}
	if (IS("server", "socket_mode")) {
		// Octal permission bits, 1 to 4 digits (0660, 660).
		size_t n = strspn(value, "01234567");
		if (n == 0 || n > 4 || value[n] != '\0'
		    || strtol(value, NULL, 8) > 0777) {
			snprintf(set_detail, sizeof(set_detail),
			    "not octal permission bits such as 0660");
			return -1;
		}
		cfg->socket_mode = (int) strtol(value, NULL, 8);
		return 0;
	}
	if (IS("server", "drain_timeout_ms")) {
		return parse_int(value, 0, 3600000, &cfg->drain_timeout_ms);
	}
	if (IS("backend", "backend")) {
		if (strcmp(value, "auto") != 0 && strcmp(value, "cuda") != 0
		    && strcmp(value, "fftw") != 0) {
			return -1;
		}
		snprintf(cfg->backend, sizeof(cfg->backend), "%s", value);
		return 0;
	}
	if (IS("backend", "devices")) {
		if (strlen(value) >= sizeof(cfg->devices)) {
			return -1;
		}
		snprintf(cfg->devices, sizeof(cfg->devices), "%s", value);
		return 0;
	}
	if (IS("backend", "gpu_sync")) {
		static const char *const names[]
		    = { "auto", "spin", "yield", "block" };
		for (int k = 0; k < 4; k++) {
			if (strcmp(value, names[k]) == 0) {
				cfg->gpu_sync = k;
				return 0;
			}
		}
		return -1;
	}
	if (IS("backend", "realtime_lane")) {
		return parse_bool(value, &cfg->realtime_lane);
	}
	if (IS("backend", "realtime_memory")) {
		// A fraction of the device memory and plan cache budgets.
		char  *end;
		double f = strtod(value, &end);
		if (end == value || *end != '\0' || !(f > 0 && f < 1)) {
			return -1;
		}
		cfg->realtime_memory = f;
		return 0;
	}
	if (IS("backend", "cpu_devices")) {
		return parse_int(value, 1, FFTD_MAX_DEVICES, &cfg->cpu_devices);
	}
	if (IS("backend", "fftw_threads")) {
		return parse_int(value, 0, 1024, &cfg->fftw_threads);
	}
	if (IS("backend", "fftw_planner")) {
		if (strcmp(value, "estimate") == 0) {
			cfg->fftw_measure = 0;
		} else if (strcmp(value, "measure") == 0) {
			cfg->fftw_measure = 1;
		} else {
			return -1;
		}
		return 0;
	}
	if (IS("backend", "pipeline_streams")) {
		return parse_int(value, 0, 32, &cfg->pipeline_streams);
	}
	if (IS("backend", "pipeline_chunk_bytes")) {
		return parse_u64(value, &cfg->pipeline_chunk_bytes);
	}
	if (IS("backend", "device_memory")) {
		return parse_u64(value, &cfg->device_budget);
	}
	if (IS("limits", "max_request_bytes")) {
		if (parse_u64(value, &u) != 0 || u == 0) {
			return -1;
		}
		cfg->limits.max_request_bytes = u;
		return 0;
	}
	if (IS("limits", "max_rank")) {
		if (parse_int(value, 1, FFTD_MAX_RANK, &i) != 0) {
			return -1;
		}
		cfg->limits.max_rank = (uint32_t) i;
		return 0;
	}
	if (IS("limits", "max_batch")) {
		if (parse_u64(value, &u) != 0 || u == 0) {
			return -1;
		}
		cfg->limits.max_batch = u;
		return 0;
	}
	if (IS("limits", "max_plans_per_client")) {
		if (parse_int(value, 1, 1 << 20, &i) != 0) {
			return -1;
		}
		cfg->max_plans_per_client = (uint32_t) i;
		return 0;
	}
	if (IS("limits", "max_plan_bytes_per_client")) {
		return parse_u64(value, &cfg->max_plan_bytes_per_client);
	}
	if (IS("limits", "max_array_bytes_per_client")) {
		return parse_u64(value, &cfg->max_array_bytes_per_client);
	}
	if (IS("limits", "ipc_peers")) {
		// Whose CUDA IPC handles the daemon maps (array.c).
		if (strcmp(value, "same-user") == 0
		    || strcmp(value, "any") == 0) {
			cfg->ipc_peers_any = strcmp(value, "any") == 0;
			return 0;
		}
		snprintf(
		    set_detail, sizeof(set_detail), "must be same-user or any");
		return -1;
	}
	if (IS("limits", "max_buffer_bytes")) {
		return parse_u64(value, &cfg->max_buffer_bytes);
	}
	static const struct {
		const char *key;
		size_t      off;
	} counts[] = {
		{ "max_buffers_per_client",
		    offsetof(fftd__config, max_buffers_per_client) },
		{ "max_buffers_per_user",
		    offsetof(fftd__config, max_buffers_per_user) },
		{ "max_streams_per_client",
		    offsetof(fftd__config, max_streams_per_client) },
		{ "max_streams_per_user",
		    offsetof(fftd__config, max_streams_per_user) },
		{ "max_fd_connections_per_user",
		    offsetof(fftd__config, max_fd_connections_per_user) },
		{ "max_connections_per_user",
		    offsetof(fftd__config, max_connections_per_user) },
		{ "max_arrays_per_client",
		    offsetof(fftd__config, max_arrays_per_client) },
	};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		if (IS("limits", counts[k].key)) {
			if (parse_int(value, 1, 1 << 20, &i) != 0) {
				return -1;
			}
			*(uint32_t *) ((char *) cfg + counts[k].off)
			    = (uint32_t) i;
			return 0;
		}
	}
	if (IS("limits", "max_inflight_per_client")) {
		if (parse_int(value, 1, 1 << 16, &i) != 0) {
			return -1;
		}
		cfg->max_inflight_per_client = (uint32_t) i;
		return 0;
	}
	if (IS("limits", "max_queued_bytes_per_client")) {
		if (parse_u64(value, &u) != 0 || u == 0) {
			return -1;
		}
		cfg->max_queued_bytes_per_client = u;
		return 0;
	}
	if (strcmp(section, "weights") == 0) {
		// user name (or numeric uid) = weight, 0.01 .. 1000
		char  *end;
		double wt = strtod(value, &end);
		if (end == value || *end != '\0' || !(wt >= 0.01 && wt <= 1000)
		    || cfg->nweights >= FFTD__MAX_WEIGHTS) {
			return -1;
		}
		struct passwd *pw  = getpwnam(key);
		unsigned long  uid = 0;
		if (pw != NULL) {
			uid = pw->pw_uid;
		} else {
			errno = 0;
			uid   = strtoul(key, &end, 10);
			if (errno != 0 || end == key || *end != '\0'
			    || uid > UINT32_MAX) {
				return -1; // no such user
			}
		}
		for (int k = 0; k < cfg->nweights; k++) {
			if (cfg->weights[k].uid == uid) {
				cfg->weights[k].weight = wt;
				return 0;
			}
		}
		cfg->weights[cfg->nweights].uid    = (uint32_t) uid;
		cfg->weights[cfg->nweights].weight = wt;
		cfg->nweights++;
		return 0;
	}
	if (IS("tls", "cert")) {
		return set_path(cfg->tls_cert, value);
	}
	if (IS("tls", "key")) {
		return set_path(cfg->tls_key, value);
	}
	if (IS("tls", "client_ca")) {
		return set_path(cfg->tls_client_ca, value);
	}
	if (IS("tls", "require_client_cert")) {
		return parse_bool(value, &cfg->tls_require_client_cert);
	}
	if (IS("remote", "allow_insecure")) {
		return parse_bool(value, &cfg->remote_allow_insecure);
	}
	if (IS("remote", "allow")) {
		// A list; the key may be repeated, each adding to it.
		return fftd__remote_parse_allow(value, cfg->allow,
		    FFTD__MAX_ALLOW, &cfg->nallow, set_detail,
		    sizeof(set_detail));
	}
	if (IS("cache", "budget_bytes")) {
		return parse_u64(value, &cfg->cache_budget);
	}
	if (IS("metrics", "listen")) {
		// Checked (loopback only) when the endpoint starts.
		if (strlen(value) >= sizeof(cfg->metrics_listen)) {
			return -1;
		}
		snprintf(cfg->metrics_listen, sizeof(cfg->metrics_listen), "%s",
		    value);
		return 0;
	}
	if (IS("log", "level")) {
		int l = fftd__log_parse_level(value);
		if (l < 0) {
			return -1;
		}
		cfg->log_level = l;
		return 0;
	}
	snprintf(set_detail, sizeof(set_detail), "unknown key");
	return -1;
}

typedef struct load_ctx {
	fftd__config *cfg;
	char         *err;
	size_t        errlen;
	int           failed;
} load_ctx;

static int
on_ini(void *user, const char *section, const char *key, const char *value)
{
	load_ctx *lc = user;
	if (fftd__config_set(lc->cfg, section, key, value) != 0) {
		if (!lc->failed) {
			if (set_detail[0] != '\0') {
				snprintf(lc->err, lc->errlen,
				    "[%s] %s = %s: %s", section, key, value,
				    set_detail);
			} else {
				snprintf(lc->err, lc->errlen,
				    "[%s] %s = %s: bad value", section, key,
				    value);
			}
		}
		lc->failed = 1;
		return 0;
	}
	return 1;
}

int
fftd__config_load(fftd__config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(
		    err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	int rv = fftd__config_read(cfg, f, path, err, errlen);
	fclose(f);
	return rv;
}

// fftd__config_read parses an open config file (see config.h); split from
// fftd__config_load so that a fuzzer can feed it memory (tests/fuzz).
int
fftd__config_read(
    fftd__config *cfg, FILE *f, const char *name, char *err, size_t errlen)
{
	load_ctx lc = { cfg, err, errlen, 0 };
	int      rv = ini_parse_file(f, on_ini, &lc);
	if (rv == -2) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	if (rv > 0) {
		char first[256];
		snprintf(first, sizeof(first), "%s",
		    lc.failed ? err : "syntax error");
		snprintf(err, errlen, "%s:%d: %s", name, rv, first);
		return -1;
	}
	return 0;
}

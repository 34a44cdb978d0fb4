// SPDX-License-Identifier: MIT
//
// stats.c — fftctl stats: the daemon's counters, then a table of its
// clients and one of its devices, or all of it as one JSON object
// (--json). Names other clients chose are printed sanitised. Options and
// connecting are main.c's (fftctl.h).

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fftctl.h"
#include "text.h"

// fftd__ctl_stats_help is fftctl stats --help.
const char fftd__ctl_stats_help[]
    = "usage: fftctl stats [--json]\n"
      "\n"
      "Prints the daemon's counters: uptime, sessions and plans alive, "
      "requests,\n"
      "errors, payload bytes, transforms executed, plan cache use; then a "
      "table of\n"
      "the connected clients (this fftctl among them) and one of the "
      "devices.\n"
      "\n"
      "clients: id (connection id, as FFTD_CLIENT= in the daemon's log), "
      "pid, name,\n"
      "  fair-share weight, executions in flight, requests answered, "
      "errors,\n"
      "  executions, payload bytes in and out, device time used (s), queue "
      "time\n"
      "  p50 and p99 (estimated from the daemon's histogram: linear within "
      "a\n"
      "  bucket; '>' and the last bound, 10 s, past it), executions "
      "canceled and\n"
      "  expired.\n"
      "devices: index, name, backend, memory in use / total, busy share "
      "of the\n"
      "  last ~10 s, jobs queued or running, executions, plan cache hits,\n"
      "  misses, evictions, entries and bytes, CUDA IPC mappings.\n"
      "plans by algorithm: plans made since the daemon started, by the "
      "algorithm\n"
      "  chosen (fftd_plan_algorithm; a tolerance may choose a faster "
      "one).\n"
      "\n"
      "  --json   one JSON object: keys as the fields of fftd_stats, plus\n"
      "           \"clients\" and \"devices\" arrays (fields of "
      "fftd_client_stats and\n"
      "           fftd_device_stats; queue_p50_s and queue_p99_s, null "
      "when no\n"
      "           data; \"hist_bounds_s\" holds the finite bucket bounds "
      "of the\n"
      "           *_hist arrays, whose last count is above them), and "
      "\"algorithms\"\n"
      "           (fftd_algorithm_stats: algorithm, plans)\n";

// hist_quantile estimates quantile q of a histogram of per-bucket counts
// (bounds fftd_hist_bound) as Prometheus's histogram_quantile does:
// linearly within the bucket that holds it. Returns -1 for an empty
// histogram; *above is set when the quantile lies past the last finite
// bound (the value returned is then that bound).
static double
hist_quantile(const uint64_t *h, double q, bool *above)
{
	uint64_t total = 0;
	*above         = false;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		total += h[i];
	}
	if (total == 0) {
		return -1;
	}
	double   rank = q * (double) total;
	uint64_t cum  = 0;
	double   lo   = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		uint64_t prev = cum;
		double   hi   = fftd_hist_bound(i);
		cum += h[i];
		if (h[i] > 0 && (double) cum >= rank) {
			if (isinf(hi)) {
				*above = true;
				return lo;
			}
			return lo
			    + (hi - lo) * (rank - (double) prev)
			    / (double) h[i];
		}
		if (!isinf(hi)) {
			lo = hi;
		}
	}
	*above = true;
	return lo;
}

// human_secs writes a duration with a unit that suits it.
static const char *
human_secs(char *buf, size_t len, double s)
{
	if (s < 1e-3) {
		snprintf(buf, len, "%.0fus", s * 1e6);
	} else if (s < 1) {
		snprintf(buf, len, "%.2fms", s * 1e3);
	} else {
		snprintf(buf, len, "%.2fs", s);
	}
	return buf;
}

// quantile_text writes quantile q of histogram h for the table: "-" when
// it is empty, ">" before the last bound when the quantile lies past it.
static const char *
quantile_text(char *buf, size_t len, const uint64_t *h, double q)
{
	bool   above;
	double v = hist_quantile(h, q, &above);
	if (v < 0) {
		snprintf(buf, len, "-");
	} else if (above) {
		char t[24];
		snprintf(buf, len, ">%s", human_secs(t, sizeof(t), v));
	} else {
		human_secs(buf, len, v);
	}
	return buf;
}

// put_name writes a name the daemon reported (at most max bytes; client
// names come from other clients): for the terminal (json false) control
// characters and bytes that are not UTF-8 become '?' and the text is cut
// at width bytes; for JSON it is a quoted, escaped string.
static void
put_name(const char *s, size_t max, bool json, int width)
{
	const unsigned char *u = (const unsigned char *) s;
	size_t               n = strnlen(s, max);
	int                  w = 0;
	if (json) {
		putchar('"');
	}
	for (size_t i = 0; i < n;) {
		size_t l = fftd__utf8_len(u + i, n - i);
		if (!json && w >= width) {
			break;
		}
		if (l == 0) {
			fputs(json ? "\\ufffd" : "?", stdout);
			l = 1;
		} else if (u[i] == '"' || u[i] == '\\') {
			printf(json ? "\\%c" : "%c", u[i]);
		} else if (u[i] < 0x20 || u[i] == 0x7F) {
			if (json) {
				printf("\\u%04x", u[i]);
			} else {
				putchar('?');
			}
		} else {
			fwrite(u + i, 1, l, stdout);
		}
		i += l;
		w++;
	}
	if (json) {
		putchar('"');
	} else {
		printf("%*s", width > w ? width - w : 0, "");
	}
}

// json_double writes v, or null for NaN, infinities and negative values
// (the "no data" of hist_quantile).
static void
json_double(double v)
{
	if (isnan(v) || isinf(v) || v < 0) {
		fputs("null", stdout);
	} else {
		printf("%.9g", v);
	}
}

// json_hist writes ", \"key\": [counts]", a histogram's bucket counts.
static void
json_hist(const char *key, const uint64_t *h)
{
	printf(", \"%s\": [", key);
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		printf("%s%" PRIu64, i ? ", " : "", h[i]);
	}
	putchar(']');
}

// json_clients writes the "clients" array of stats --json.
static void
json_clients(const fftd_client_stats *cl, int n)
{
	printf("\"clients\": [");
	for (int i = 0; i < n; i++) {
		const fftd_client_stats *c = &cl[i];
		bool                     above;
		printf("%s{\"id\": %" PRIu32 ", \"pid\": %" PRIu64
		       ", \"uid\": %" PRIu64 ", \"name\": ",
		    i ? ", " : "", c->id, c->pid, c->uid);
		put_name(c->name, sizeof(c->name), true, 0);
		printf(", \"weight\": ");
		json_double(c->weight);
		printf(", \"requests\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"executes\": %" PRIu64 ", \"bytes_in\": %" PRIu64
		       ", \"bytes_out\": %" PRIu64 ", \"canceled\": %" PRIu64
		       ", \"expired\": %" PRIu64 ", \"inflight\": %" PRIu32
		       ", \"queued_bytes\": %" PRIu64 ", \"queue_seconds\": ",
		    c->requests, c->errors, c->executes, c->bytes_in,
		    c->bytes_out, c->canceled, c->expired, c->inflight,
		    c->queued_bytes);
		json_double(c->queue_seconds);
		printf(", \"device_seconds\": ");
		json_double(c->device_seconds);
		printf(", \"queue_p50_s\": ");
		json_double(hist_quantile(c->queue_hist, 0.5, &above));
		printf(", \"queue_p99_s\": ");
		json_double(hist_quantile(c->queue_hist, 0.99, &above));
		json_hist("queue_hist", c->queue_hist);
		json_hist("device_hist", c->device_hist);
		putchar('}');
	}
	putchar(']');
}

// json_devices writes the "devices" array of stats --json.
static void
json_devices(const fftd_device_stats *dv, int n)
{
	printf("\"devices\": [");
	for (int i = 0; i < n; i++) {
		const fftd_device_stats *d = &dv[i];
		printf("%s{\"index\": %d, \"name\": ", i ? ", " : "", d->index);
		put_name(d->name, sizeof(d->name), true, 0);
		printf(", \"backend\": ");
		put_name(d->backend, sizeof(d->backend), true, 0);
		printf(", \"memory_bytes\": %" PRIu64
		       ", \"memory_used_bytes\": %" PRIu64
		       ", \"busy_seconds\": ",
		    d->memory_bytes, d->memory_used_bytes);
		json_double(d->busy_seconds);
		printf(", \"busy_fraction\": ");
		json_double(d->busy_fraction);
		printf(", \"queued\": %" PRIu32 ", \"executes\": %" PRIu64
		       ", \"cache_hits\": %" PRIu64
		       ", \"cache_misses\": %" PRIu64
		       ", \"cache_evictions\": %" PRIu64
		       ", \"cache_entries\": %" PRIu64
		       ", \"cache_bytes\": %" PRIu64
		       ", \"cache_budget_bytes\": %" PRIu64
		       ", \"ipc_mappings\": %" PRIu64 "}",
		    d->queued, d->executes, d->cache_hits, d->cache_misses,
		    d->cache_evictions, d->cache_entries, d->cache_bytes,
		    d->cache_budget_bytes, d->ipc_mappings);
	}
	putchar(']');
}

// name_width is the width of a name column: the longest name, within
// [lo, hi].
static int
name_width(const char *names, size_t stride, size_t max, int n, int lo, int hi)
{
	int w = lo;
	for (int i = 0; i < n; i++) {
		int l = (int) strnlen(names + (size_t) i * stride, max);
		w     = l > w ? l : w;
	}
	return w < hi ? w : hi;
}

// table_clients prints the clients table of fftctl stats (n >= 1).
static void
table_clients(const fftd_client_stats *cl, int n)
{
	char b1[32], b2[32], b3[32], b4[32];
	int w = name_width(cl[0].name, sizeof(*cl), sizeof(cl->name), n, 4, 24);
	printf("\nclients (%d)\n", n);
	printf("  %10s %8s  %-*s %6s %5s %9s %7s %9s %10s %10s %9s %8s %8s "
	       "%7s %7s\n",
	    "id", "pid", w, "name", "weight", "infl", "requests", "errors",
	    "executes", "in", "out", "device s", "q p50", "q p99", "cancel",
	    "expired");
	for (int i = 0; i < n; i++) {
		const fftd_client_stats *c = &cl[i];
		printf("  %10" PRIu32 " %8" PRIu64 "  ", c->id, c->pid);
		put_name(c->name, sizeof(c->name), false, w);
		printf(" %6.3g %5" PRIu32 " %9" PRIu64 " %7" PRIu64 " %9" PRIu64
		       " %10s %10s %9.3f %8s %8s %7" PRIu64 " %7" PRIu64 "\n",
		    c->weight, c->inflight, c->requests, c->errors, c->executes,
		    fftd__ctl_human(b1, sizeof(b1), c->bytes_in),
		    fftd__ctl_human(b2, sizeof(b2), c->bytes_out),
		    c->device_seconds,
		    quantile_text(b3, sizeof(b3), c->queue_hist, 0.5),
		    quantile_text(b4, sizeof(b4), c->queue_hist, 0.99),
		    c->canceled, c->expired);
	}
}

// table_devices prints the devices table of fftctl stats (n >= 1).
static void
table_devices(const fftd_device_stats *dv, int n)
{
	char b1[32], b2[32], b3[32], mem[72];
	int w = name_width(dv[0].name, sizeof(*dv), sizeof(dv->name), n, 4, 32);
	printf("\ndevices (%d)\n", n);
	printf("  %5s  %-*s %-7s %21s %6s %6s %9s %8s %7s %6s %7s %10s %4s\n",
	    "index", w, "name", "backend", "memory used/total", "busy",
	    "queued", "executes", "hits", "misses", "evict", "entries", "cache",
	    "ipc");
	for (int i = 0; i < n; i++) {
		const fftd_device_stats *d = &dv[i];
		if (d->memory_bytes != 0) {
			snprintf(mem, sizeof(mem), "%s / %s",
			    fftd__ctl_human(
			        b1, sizeof(b1), d->memory_used_bytes),
			    fftd__ctl_human(b2, sizeof(b2), d->memory_bytes));
		} else {
			snprintf(mem, sizeof(mem), "-");
		}
		printf("  %5d  ", d->index);
		put_name(d->name, sizeof(d->name), false, w);
		putchar(' ');
		put_name(d->backend, sizeof(d->backend), false, 7);
		printf(" %21s %5.1f%% %6" PRIu32 " %9" PRIu64 " %8" PRIu64
		       " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %10s %4" PRIu64
		       "\n",
		    mem, 100 * d->busy_fraction, d->queued, d->executes,
		    d->cache_hits, d->cache_misses, d->cache_evictions,
		    d->cache_entries,
		    fftd__ctl_human(b3, sizeof(b3), d->cache_bytes),
		    d->ipc_mappings);
	}
}

// table_algorithms prints the plans made per algorithm (fftctl stats).
static void
table_algorithms(const fftd_algorithm_stats *a, int n)
{
	printf("\nplans by algorithm (%d)\n", n);
	for (int i = 0; i < n; i++) {
		printf("  ");
		put_name(a[i].algorithm, sizeof(a[i].algorithm), false, 16);
		printf(" %" PRIu64 "\n", a[i].plans);
	}
}

// json_algorithms writes the "algorithms" array of stats --json.
static void
json_algorithms(const fftd_algorithm_stats *a, int n)
{
	printf("\"algorithms\": [");
	for (int i = 0; i < n; i++) {
		printf("%s{\"algorithm\": ", i ? ", " : "");
		put_name(a[i].algorithm, sizeof(a[i].algorithm), true, 0);
		printf(", \"plans\": %" PRIu64 "}", a[i].plans);
	}
	printf("]");
}

// get_clients fetches every client's statistics into a malloc'd array
// (clients may connect between the calls: ask again with room to spare).
static int
get_clients(fftd_client *client, fftd_client_stats **out, int *n)
{
	int max = 64;
	for (;;) {
		fftd_client_stats *a   = calloc((size_t) max, sizeof(*a));
		int                got = 0;
		if (a == NULL) {
			return FFTD_ENOMEM;
		}
		int rv = fftd_get_client_stats(client, a, max, &got);
		if (rv != FFTD_OK) {
			free(a);
			return rv;
		}
		if (got <= max) {
			*out = a;
			*n   = got < 0 ? 0 : got;
			return FFTD_OK;
		}
		free(a);
		max = got + 16;
	}
}

// fftd__ctl_stats is fftctl stats: the daemon's counters, then its
// clients and devices, as tables or (--json) one JSON object.
int
fftd__ctl_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int  c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(fftd__ctl_stats_help, stdout);
			return EXIT_OK;
		default:
			return fftd__ctl_usage_error("stats", "bad option");
		}
	}
	if (optind != argc) {
		return fftd__ctl_usage_error(
		    "stats", "unexpected argument '%s'", argv[optind]);
	}
	fftd_client *client;
	int          ec = fftd__ctl_connect(&client);
	if (ec != EXIT_OK) {
		return ec;
	}
	fftd_stats           s;
	fftd_client_stats   *cl = NULL;
	fftd_device_stats    dv[FFTD_MAX_DEVICES];
	fftd_algorithm_stats al[16];
	int                  ncl = 0, ndv = 0, nal = 0;
	int                  rv = fftd_get_stats(client, &s);
	if (rv == FFTD_OK) {
		rv = get_clients(client, &cl, &ncl);
	}
	if (rv == FFTD_OK) {
		rv  = fftd_get_device_stats(client, dv, FFTD_MAX_DEVICES, &ndv);
		ndv = ndv < 0                ? 0
		    : ndv > FFTD_MAX_DEVICES ? FFTD_MAX_DEVICES
		                             : ndv;
	}
	if (rv == FFTD_OK) {
		// A daemon from before the call has no such counts.
		rv  = fftd_get_algorithm_stats(client, al, 16, &nal);
		nal = rv != FFTD_OK ? 0 : nal > 16 ? 16 : nal;
		rv  = rv == FFTD_EPROTO ? FFTD_OK : rv;
	}
	fftd_client_close(client);
	if (rv != FFTD_OK) {
		free(cl);
		return fftd__ctl_fail("stats", rv);
	}

	// One table drives both outputs, so they cannot disagree.
	const struct {
		const char *key;   // JSON key: the fftd_stats field
		const char *label; // table label
		uint64_t    v;
		bool        bytes;
	} rows[] = {
		{ "uptime_ms", "uptime (s)", s.uptime_ms, false },
		{ "sessions", "sessions", s.sessions, false },
		{ "plans", "plans", s.plans, false },
		{ "stream_channels", "stream channels", s.stream_channels,
		    false },
		{ "requests", "requests", s.requests, false },
		{ "errors", "errors", s.errors, false },
		{ "bytes_in", "bytes in", s.bytes_in, true },
		{ "bytes_out", "bytes out", s.bytes_out, true },
		{ "executes", "executes", s.executes, false },
		{ "canceled", "canceled", s.canceled, false },
		{ "expired", "expired", s.expired, false },
		{ "cache_hits", "cache hits", s.cache_hits, false },
		{ "cache_misses", "cache misses", s.cache_misses, false },
		{ "cache_evictions", "cache evictions", s.cache_evictions,
		    false },
		{ "cache_entries", "cache entries", s.cache_entries, false },
		{ "cache_bytes", "cache bytes", s.cache_bytes, true },
		{ "cache_budget_bytes", "cache budget", s.cache_budget_bytes,
		    true },
	};
	size_t n = sizeof(rows) / sizeof(rows[0]);
	if (json) {
		printf("{");
		for (size_t i = 0; i < n; i++) {
			printf("%s\"%s\": %" PRIu64, i ? ", " : "", rows[i].key,
			    rows[i].v);
		}
		printf(", \"hist_bounds_s\": [");
		for (int i = 0; i < FFTD_HIST_BUCKETS - 1; i++) {
			printf("%s", i ? ", " : "");
			json_double(fftd_hist_bound(i));
		}
		printf("], ");
		json_clients(cl, ncl);
		printf(", ");
		json_devices(dv, ndv);
		printf(", ");
		json_algorithms(al, nal);
		printf("}\n");
		free(cl);
		return EXIT_OK;
	}
	char b[32];
	for (size_t i = 0; i < n; i++) {
		if (i == 0) {
			printf("%-16s %.3f\n", rows[i].label,
			    (double) rows[i].v / 1000);
		} else if (rows[i].bytes) {
			printf("%-16s %" PRIu64 " (%s)\n", rows[i].label,
			    rows[i].v,
			    fftd__ctl_human(b, sizeof(b), rows[i].v));
		} else {
			printf("%-16s %" PRIu64 "\n", rows[i].label, rows[i].v);
		}
	}
	if (ncl > 0) {
		table_clients(cl, ncl);
	} else {
		printf("\nclients (0)\n");
	}
	if (ndv > 0) {
		table_devices(dv, ndv);
	} else {
		printf("\ndevices (0)\n");
	}
	table_algorithms(al, nal);
	free(cl);
	return EXIT_OK;
}

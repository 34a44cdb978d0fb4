// SPDX-License-Identifier: MIT
//
// fftctl.c — the command-line client of fftd: checks a daemon is alive
// (ping), shows what it serves (info) and its counters (stats), and
// transforms numpy .npy or raw files (fft) so that numpy.load of the output
// gives what numpy.fft would, up to the normalisation asked for. A user of
// libfftd can read cmd_fft as a worked example of planning and executing.

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fftd.h"
#include "npy.h"
#include "text.h"

// Exit codes, as `fftctl --help` states them.
enum {
	EXIT_OK    = 0,
	EXIT_ERROR = 1, // the daemon, a transform or a file failed
	EXIT_USAGE = 2,
};

// Global options, parsed before the command name.
static const char *g_url        = NULL; // NULL: fftd_default_url()
static int         g_timeout_ms = 0;    // 0: the library's default

static void
usage(FILE *out)
{
	fprintf(out,
	    "usage: fftctl [--url URL] [--timeout MS] COMMAND [ARGS]\n"
	    "\n"
	    "commands:\n"
	    "  ping [-c COUNT]       round-trip time to the daemon\n"
	    "  info                  what the daemon serves: versions, "
	    "backend,\n"
	    "                        devices, algorithms, precisions, limits\n"
	    "  stats [--json]        the daemon's counters, clients and "
	    "devices\n"
	    "  fft [OPTIONS] IN OUT  transform an array (.npy or raw)\n"
	    "  help [COMMAND]        this text, or a command's\n"
	    "\n"
	    "global options:\n"
	    "  --url URL       daemon address; default $FFTD_URL, else\n"
	    "                  ipc://$XDG_RUNTIME_DIR/fftd.sock, else\n"
	    "                  ipc:///run/fftd/fftd.sock\n"
	    "  --timeout MS    connect and per-call timeout (default 10000;\n"
	    "                  -1: none)\n"
	    "  --version       print the library version\n"
	    "  -h, --help      this text; COMMAND --help for a command's\n"
	    "\n"
	    "exit status: 0 ok, 1 daemon, transform or file error, 2 usage "
	    "error\n");
}

static int
usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fftctl%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see fftctl %s%s--help)\n", cmd ? cmd : "",
	    cmd ? " " : "");
	return EXIT_USAGE;
}

// fftd_fail prints what failed with the library's message for err and the
// daemon's detail, and returns EXIT_ERROR.
static int
fftd_fail(const char *what, int err)
{
	const char *detail = fftd_last_error();
	fprintf(stderr, "fftctl: %s: %s%s%s%s\n", what, fftd_strerror(err),
	    *detail ? " (" : "", detail, *detail ? ")" : "");
	return EXIT_ERROR;
}

static const char *
url_name(void)
{
	static char buf[512];
	if (g_url != NULL) {
		return g_url;
	}
	if (fftd_default_url(buf, sizeof(buf)) != FFTD_OK) {
		snprintf(buf, sizeof(buf), "(default address)");
	}
	return buf;
}

static int
connect_daemon(fftd_client **c)
{
	int rv = fftd_client_open(c, g_url, g_timeout_ms);
	if (rv != FFTD_OK) {
		return fftd_fail(url_name(), rv);
	}
	return EXIT_OK;
}

// parse_ll parses a whole decimal integer in [min, max].
static bool
parse_ll(const char *s, long long min, long long max, long long *v)
{
	char *end;
	errno       = 0;
	long long x = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || x < min || x > max) {
		return false;
	}
	*v = x;
	return true;
}

// human writes a byte count with a binary unit.
static const char *
human(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[]
	    = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double) bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	} else {
		snprintf(buf, len, "%.2f %s", v, unit[u]);
	}
	return buf;
}

// --- ping -------------------------------------------------------------------

static const char ping_help[]
    = "usage: fftctl ping [-c COUNT]\n"
      "\n"
      "Connects to the daemon and sends COUNT pings (default 5), one after "
      "the other;\n"
      "prints the round-trip times in microseconds: min/median/max.\n"
      "\n"
      "  -c, --count COUNT   number of pings, 1..1000000\n";

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

static int
cmd_ping(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long count = 5;
	int       c;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!parse_ll(optarg, 1, 1000000, &count)) {
				return usage_error("ping",
				    "-c: '%s' is not a count in 1..1000000",
				    optarg);
			}
			break;
		case 'h':
			fputs(ping_help, stdout);
			return EXIT_OK;
		default:
			return usage_error("ping", "bad option");
		}
	}
	if (optind != argc) {
		return usage_error(
		    "ping", "unexpected argument '%s'", argv[optind]);
	}

	double *rtt = malloc((size_t) count * sizeof(double));
	if (rtt == NULL) {
		fprintf(stderr, "fftctl: out of memory\n");
		return EXIT_ERROR;
	}
	fftd_client *client;
	int          ec = connect_daemon(&client);
	if (ec != EXIT_OK) {
		free(rtt);
		return ec;
	}
	for (long long i = 0; i < count; i++) {
		int rv = fftd_ping(client, &rtt[i]);
		if (rv != FFTD_OK) {
			ec = fftd_fail("ping", rv);
			goto out;
		}
	}
	qsort(rtt, (size_t) count, sizeof(double), cmp_double);
	size_t m      = (size_t) count / 2;
	double median = count % 2 ? rtt[m] : (rtt[m - 1] + rtt[m]) / 2;
	printf("%s: %lld round trip%s, min/median/max = %.1f/%.1f/%.1f µs\n",
	    url_name(), count, count == 1 ? "" : "s", rtt[0], median,
	    rtt[count - 1]);
out:
	fftd_client_close(client);
	free(rtt);
	return ec;
}

// --- info -------------------------------------------------------------------

static const char info_help[]
    = "usage: fftctl info\n"
      "\n"
      "Prints what the daemon reported at connection: its version and "
      "protocol, its\n"
      "default backend, its devices (with memory), the algorithms and "
      "precisions it\n"
      "serves, and its request limits.\n";

static const char *const prec_name[] = { "f64", "f32", "f16" };

static int
cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(info_help, stdout);
			return EXIT_OK;
		}
		return usage_error("info", "bad option");
	}
	if (optind != argc) {
		return usage_error(
		    "info", "unexpected argument '%s'", argv[optind]);
	}
	fftd_client *client;
	int          ec = connect_daemon(&client);
	if (ec != EXIT_OK) {
		return ec;
	}
	fftd_info info;
	int       rv = fftd_client_info(client, &info);
	fftd_client_close(client);
	if (rv != FFTD_OK) {
		return fftd_fail("info", rv);
	}

	char b[32];
	printf("%-16s %s\n", "address", url_name());
	printf("%-16s %s\n", "server version", info.server_version);
	printf("%-16s %s\n", "library version", fftd_version());
	printf("%-16s %" PRIu32 " (library: %d)\n", "protocol",
	    info.protocol_version, FFTD_PROTOCOL_VERSION);
	printf("%-16s %s\n", "backend", info.backend);
	int nd = info.ndevices < 0             ? 0
	    : info.ndevices > FFTD_MAX_DEVICES ? FFTD_MAX_DEVICES
	                                       : info.ndevices;
	printf("%-16s %d\n", "devices", nd);
	if (nd > 0) {
		// Column width from the longest name, so the table lines up.
		int w = 4;
		for (int i = 0; i < nd; i++) {
			int l = (int) strnlen(
			    info.devices[i].name, sizeof(info.devices[i].name));
			w = l > w ? l : w;
		}
		printf("  %-5s %-*s  %-8s %s\n", "index", w, "name", "backend",
		    "memory");
		for (int i = 0; i < nd; i++) {
			const fftd_device_info *d = &info.devices[i];
			printf("  %-5d %-*.*s  %-8.*s %s\n", d->index, w,
			    (int) sizeof(d->name), d->name,
			    (int) sizeof(d->backend), d->backend,
			    d->memory_bytes
			        ? human(b, sizeof(b), d->memory_bytes)
			        : "-");
		}
	}
	printf("%-16s ", "algorithms");
	int na = info.nalgorithms < 0                ? 0
	    : info.nalgorithms > FFTD_MAX_ALGORITHMS ? FFTD_MAX_ALGORITHMS
	                                             : info.nalgorithms;
	for (int i = 0; i < na; i++) {
		printf("%s%.*s", i ? ", " : "",
		    (int) sizeof(info.algorithms[i]), info.algorithms[i]);
	}
	printf("%s\n%-16s ", na ? "" : "-", "precisions");
	bool any = false;
	for (int p = 0; p < 3; p++) {
		if (info.precisions & (1u << p)) {
			printf("%s%s", any ? ", " : "", prec_name[p]);
			any = true;
		}
	}
	printf("%s\n", any ? "" : "-");
	printf("%-16s %s per request side\n", "max request",
	    info.max_request_bytes ? human(b, sizeof(b), info.max_request_bytes)
	                           : "unlimited");
	printf("%-16s %" PRIu32 "\n", "max rank", info.max_rank);
	printf("%-16s %" PRIu64 "\n", "max batch", info.max_batch);
	printf("%-16s %" PRIu32 " per connection\n", "max plans",
	    info.max_plans_per_client);
	printf("%-16s %" PRIu32 " executions, %s of inline input per "
	       "connection\n",
	    "max in flight", info.max_inflight_per_client,
	    human(b, sizeof(b), info.max_queued_bytes_per_client));
	if (info.ndaemons > 1) {
		printf("%-16s %d (the above is the first; limits are the "
		       "smallest)\n",
		    "daemons", info.ndaemons);
	}
	return EXIT_OK;
}

// --- stats ------------------------------------------------------------------

static const char stats_help[]
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
      "  misses, evictions, entries and bytes.\n"
      "\n"
      "  --json   one JSON object: keys as the fields of fftd_stats, plus\n"
      "           \"clients\" and \"devices\" arrays (fields of "
      "fftd_client_stats and\n"
      "           fftd_device_stats; queue_p50_s and queue_p99_s, null "
      "when no\n"
      "           data; \"hist_bounds_s\" holds the finite bucket bounds "
      "of the\n"
      "           *_hist arrays, whose last count is above them)\n";

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

static void
json_hist(const char *key, const uint64_t *h)
{
	printf(", \"%s\": [", key);
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		printf("%s%" PRIu64, i ? ", " : "", h[i]);
	}
	putchar(']');
}

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
		       ", \"cache_budget_bytes\": %" PRIu64 "}",
		    d->queued, d->executes, d->cache_hits, d->cache_misses,
		    d->cache_evictions, d->cache_entries, d->cache_bytes,
		    d->cache_budget_bytes);
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
		    human(b1, sizeof(b1), c->bytes_in),
		    human(b2, sizeof(b2), c->bytes_out), c->device_seconds,
		    quantile_text(b3, sizeof(b3), c->queue_hist, 0.5),
		    quantile_text(b4, sizeof(b4), c->queue_hist, 0.99),
		    c->canceled, c->expired);
	}
}

static void
table_devices(const fftd_device_stats *dv, int n)
{
	char b1[32], b2[32], b3[32], mem[72];
	int w = name_width(dv[0].name, sizeof(*dv), sizeof(dv->name), n, 4, 32);
	printf("\ndevices (%d)\n", n);
	printf("  %5s  %-*s %-7s %21s %6s %6s %9s %8s %7s %6s %7s %10s\n",
	    "index", w, "name", "backend", "memory used/total", "busy",
	    "queued", "executes", "hits", "misses", "evict", "entries",
	    "cache");
	for (int i = 0; i < n; i++) {
		const fftd_device_stats *d = &dv[i];
		if (d->memory_bytes != 0) {
			snprintf(mem, sizeof(mem), "%s / %s",
			    human(b1, sizeof(b1), d->memory_used_bytes),
			    human(b2, sizeof(b2), d->memory_bytes));
		} else {
			snprintf(mem, sizeof(mem), "-");
		}
		printf("  %5d  ", d->index);
		put_name(d->name, sizeof(d->name), false, w);
		putchar(' ');
		put_name(d->backend, sizeof(d->backend), false, 7);
		printf(" %21s %5.1f%% %6" PRIu32 " %9" PRIu64 " %8" PRIu64
		       " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %10s\n",
		    mem, 100 * d->busy_fraction, d->queued, d->executes,
		    d->cache_hits, d->cache_misses, d->cache_evictions,
		    d->cache_entries, human(b3, sizeof(b3), d->cache_bytes));
	}
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

static int
cmd_stats(int argc, char **argv)
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
			fputs(stats_help, stdout);
			return EXIT_OK;
		default:
			return usage_error("stats", "bad option");
		}
	}
	if (optind != argc) {
		return usage_error(
		    "stats", "unexpected argument '%s'", argv[optind]);
	}
	fftd_client *client;
	int          ec = connect_daemon(&client);
	if (ec != EXIT_OK) {
		return ec;
	}
	fftd_stats         s;
	fftd_client_stats *cl = NULL;
	fftd_device_stats  dv[FFTD_MAX_DEVICES];
	int                ncl = 0, ndv = 0;
	int                rv = fftd_get_stats(client, &s);
	if (rv == FFTD_OK) {
		rv = get_clients(client, &cl, &ncl);
	}
	if (rv == FFTD_OK) {
		rv  = fftd_get_device_stats(client, dv, FFTD_MAX_DEVICES, &ndv);
		ndv = ndv < 0                ? 0
		    : ndv > FFTD_MAX_DEVICES ? FFTD_MAX_DEVICES
		                             : ndv;
	}
	fftd_client_close(client);
	if (rv != FFTD_OK) {
		free(cl);
		return fftd_fail("stats", rv);
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
			    rows[i].v, human(b, sizeof(b), rows[i].v));
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
	free(cl);
	return EXIT_OK;
}

// --- fft --------------------------------------------------------------------

static const char fft_help[]
    = "usage: fftctl fft [OPTIONS] IN OUT\n"
      "\n"
      "Transforms the array in IN through the daemon and writes OUT. IN is\n"
      "a numpy .npy file unless --raw; OUT is written as .npy if its name\n"
      "ends in .npy, else as raw little-endian elements (complex ones as\n"
      "interleaved re, im).\n"
      "\n"
      "Axes: the last R axes (--rank, default 1) are transformed, the\n"
      "leading ones are a batch. The dtype sets the precision: <c16 and <f8\n"
      "are f64, <c8 and <f4 f32, <f2 f16; complex f16 is <f2 with a trailing\n"
      "axis of 2 (re, im), in and out. Real input to a c2c transform is\n"
      "promoted to complex, as numpy.fft.fft does.\n"
      "\n"
      "  --kind K          c2c (default); r2c: real in, last axis n/2+1 out;\n"
      "                    c2r: last axis m in, real n out\n"
      "  --inverse         inverse c2c, exp(+2 pi i jk/n); r2c is always\n"
      "                    forward, c2r always inverse\n"
      "  --norm N          none (default), by-n (1/N) or ortho (1/sqrt N),\n"
      "                    N the product of the transformed sizes; numpy's\n"
      "                    fft is none, its ifft and irfft by-n\n"
      "  --rank R          number of trailing axes transformed, 1..3\n"
      "  --n LAST          c2r: logical length of the last axis, default\n"
      "                    2*(m-1); m must equal LAST/2+1\n"
      "  --algorithm NAME  ask for one implementation: fftw, cufft, tc16,\n"
      "                    split16 (default: the daemon's choice, cufft on\n"
      "                    a GPU); tc16 (f16) and split16 (f32) do c2c of\n"
      "                    power-of-two sizes, --rank 1 (from 256) or 2\n"
      "                    (256 .. 4096 each); `fftctl info` lists what\n"
      "                    the daemon serves\n"
      "  --device D        run on device D (default: any)\n"
      "  --raw             IN is raw: give --shape, --precision, --complex\n"
      "  --shape AxBx..    logical shape of a raw IN, up to 4 axes (no axis\n"
      "                    for re, im)\n"
      "  --precision P     f64, f32 or f16, for a raw IN\n"
      "  --complex         a raw IN holds complex elements\n"
      "  -v, --verbose     say what was done\n"
      "\n"
      "example: numpy.fft.rfft(a) of a (8, 1024) float64 array in a.npy:\n"
      "  fftctl fft --kind r2c a.npy A.npy    # A.npy: (8, 513) complex128\n";

// array is an input or output in memory: precision, real or complex, the
// logical shape (no axis for re/im), and the elements.
typedef struct array {
	fftd_precision prec;
	bool           complex;
	int            ndim;
	int64_t        shape[FFTD__NPY_MAX_NDIM];
	size_t         nelems; // logical elements (complex counts once)
	void          *data;
} array;

static size_t
elem_size(fftd_precision p, bool complex)
{
	size_t r = p == FFTD_F64 ? 8 : p == FFTD_F32 ? 4 : 2;
	return complex ? 2 * r : r;
}

static bool
parse_shape(const char *s, array *a)
{
	a->ndim = 0;
	for (const char *p = s;;) {
		char *end;
		errno       = 0;
		long long v = strtoll(p, &end, 10);
		if (errno != 0 || end == p || v < 1
		    || a->ndim == FFTD__NPY_MAX_NDIM) {
			return false;
		}
		a->shape[a->ndim++] = v;
		if (*end == '\0') {
			return true;
		}
		if (*end != 'x' && *end != ',') {
			return false;
		}
		p = end + 1;
	}
}

// count_elems sets a->nelems from the shape, refusing overflow.
static bool
count_elems(array *a)
{
	size_t n = 1;
	for (int k = 0; k < a->ndim; k++) {
		if (a->shape[k] < 0
		    || __builtin_mul_overflow(n, (size_t) a->shape[k], &n)) {
			return false;
		}
	}
	size_t b;
	if (__builtin_mul_overflow(n, elem_size(a->prec, a->complex), &b)) {
		return false;
	}
	a->nelems = n;
	return true;
}

static int
load_raw(const char *path, array *a)
{
	if (!count_elems(a)) {
		fprintf(stderr, "fftctl fft: --shape is too large\n");
		return EXIT_USAGE;
	}
	size_t      want = a->nelems * elem_size(a->prec, a->complex);
	FILE       *f    = fopen(path, "rb");
	struct stat st;
	if (f == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, strerror(errno));
		if (f != NULL) {
			fclose(f);
		}
		return EXIT_ERROR;
	}
	// The shape must account for the whole file: a mismatch is almost
	// always a wrong --shape, --precision or --complex.
	if (S_ISREG(st.st_mode) && (uint64_t) st.st_size != want) {
		fprintf(stderr,
		    "fftctl fft: %s holds %lld bytes; --shape, --precision and "
		    "--complex say %zu\n",
		    path, (long long) st.st_size, want);
		fclose(f);
		return EXIT_ERROR;
	}
	a->data = malloc(want ? want : 1);
	if (a->data == NULL || fread(a->data, 1, want, f) != want) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path,
		    a->data == NULL ? "out of memory"
		                    : "file shorter than --shape says");
		fclose(f);
		return EXIT_ERROR;
	}
	fclose(f);
	return EXIT_OK;
}

// load_npy reads IN; an <f2 array is complex half when the transform takes
// complex input (c2c, c2r), its trailing axis of 2 then being (re, im).
static int
load_npy(const char *path, fftd_kind kind, array *a)
{
	fftd__npy arr;
	char      msg[256];
	int       rv = fftd__npy_load(path, &arr, msg, sizeof(msg));
	if (rv != FFTD__NPY_OK) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, msg);
		return EXIT_ERROR;
	}
	a->ndim = arr.ndim;
	memcpy(a->shape, arr.shape, sizeof(a->shape));
	switch (arr.dtype) {
	case FFTD__NPY_C16:
		a->prec    = FFTD_F64;
		a->complex = true;
		break;
	case FFTD__NPY_C8:
		a->prec    = FFTD_F32;
		a->complex = true;
		break;
	case FFTD__NPY_F8:
		a->prec    = FFTD_F64;
		a->complex = false;
		break;
	case FFTD__NPY_F4:
		a->prec    = FFTD_F32;
		a->complex = false;
		break;
	case FFTD__NPY_F2:
		a->prec    = FFTD_F16;
		a->complex = kind != FFTD_R2C;
		if (a->complex) {
			if (a->ndim < 2 || a->shape[a->ndim - 1] != 2) {
				fprintf(stderr,
				    "fftctl fft: %s: complex f16 input is "
				    "<f2 with a trailing axis of 2 (re, im); "
				    "this array's shape does not end in 2\n",
				    path);
				fftd__npy_free(&arr);
				return EXIT_ERROR;
			}
			a->ndim--;
		}
		break;
	}
	a->nelems = arr.nelems / (a->prec == FFTD_F16 && a->complex ? 2 : 1);
	a->data   = arr.data; // ownership moves to a
	return EXIT_OK;
}

// promote turns real elements into complex ones with zero imaginary part.
static bool
promote(array *a)
{
	size_t         r = elem_size(a->prec, false);
	unsigned char *c = calloc(a->nelems ? a->nelems : 1, 2 * r);
	if (c == NULL) {
		return false;
	}
	for (size_t i = 0; i < a->nelems; i++) {
		memcpy(c + 2 * r * i, (unsigned char *) a->data + r * i, r);
	}
	free(a->data);
	a->data    = c;
	a->complex = true;
	return true;
}

static int
save_output(const char *path, const array *o, bool verbose)
{
	size_t len = strlen(path);
	if (len >= 4 && strcmp(path + len - 4, ".npy") == 0) {
		fftd__npy_dtype dt;
		int64_t         shape[FFTD__NPY_MAX_NDIM + 1];
		int             nd = o->ndim;
		memcpy(shape, o->shape, sizeof(int64_t) * (size_t) nd);
		switch (o->prec) {
		case FFTD_F64:
			dt = o->complex ? FFTD__NPY_C16 : FFTD__NPY_F8;
			break;
		case FFTD_F32:
			dt = o->complex ? FFTD__NPY_C8 : FFTD__NPY_F4;
			break;
		default:
			dt = FFTD__NPY_F2;
			if (o->complex) {
				shape[nd++] = 2; // numpy has no complex half
			}
			break;
		}
		char msg[256];
		int  rv = fftd__npy_save(
		     path, dt, nd, shape, o->data, msg, sizeof(msg));
		if (rv != FFTD__NPY_OK) {
			fprintf(stderr, "fftctl fft: %s: %s\n", path, msg);
			return EXIT_ERROR;
		}
		return EXIT_OK;
	}
	size_t bytes = o->nelems * elem_size(o->prec, o->complex);
	FILE  *f     = fopen(path, "wb");
	bool   ok    = f != NULL && fwrite(o->data, 1, bytes, f) == bytes;
	if (f != NULL && fclose(f) != 0) {
		ok = false;
	}
	if (!ok) {
		fprintf(stderr, "fftctl fft: %s: %s\n", path, strerror(errno));
		return EXIT_ERROR;
	}
	if (verbose) {
		fprintf(stderr, "fftctl fft: %s: raw %s%s, shape", path,
		    prec_name[o->prec], o->complex ? " complex" : "");
		for (int k = 0; k < o->ndim; k++) {
			fprintf(
			    stderr, "%s%" PRId64, k ? "x" : " ", o->shape[k]);
		}
		fprintf(stderr, "\n");
	}
	return EXIT_OK;
}

typedef struct fft_opts {
	fftd_kind   kind;
	bool        inverse;
	fftd_norm   norm;
	int         rank;
	long long   n_last; // c2r --n, 0: default
	const char *algorithm;
	int         device;
	bool        raw;
	bool        have_shape, have_prec;
	bool        complex;
	bool        verbose;
} fft_opts;

// run_batches executes the transform of desc (batch = total) in chunks
// the daemon accepts: at most max_batch transforms and max_request_bytes
// per side in one request. Two plans at most: full chunks, remainder.
static int
run_batches(fftd_client *client, fftd_plan_desc *desc, int64_t total,
    size_t in_per, size_t out_per, const void *in, void *out, const char **algo)
{
	fftd_info info;
	int64_t   chunk = total;
	if (fftd_client_info(client, &info) == FFTD_OK) {
		if (info.max_batch > 0 && (uint64_t) chunk > info.max_batch) {
			chunk = (int64_t) info.max_batch;
		}
		size_t per = in_per > out_per ? in_per : out_per;
		if (info.max_request_bytes > 0 && per > 0
		    && (uint64_t) chunk > info.max_request_bytes / per) {
			chunk = (int64_t) (info.max_request_bytes / per);
		}
		if (chunk < 1) {
			chunk = 1; // let the daemon refuse it, with its words
		}
	}
	fftd_plan *plan    = NULL;
	int64_t    planned = 0;
	int        rv      = FFTD_OK;
	for (int64_t done = 0; done < total;) {
		int64_t b = total - done < chunk ? total - done : chunk;
		if (b != planned) {
			fftd_plan_destroy(plan);
			plan        = NULL;
			desc->batch = b;
			rv          = fftd_plan_create(client, desc, &plan);
			if (rv != FFTD_OK) {
				return fftd_fail("plan", rv);
			}
			planned = b;
			*algo   = fftd_plan_algorithm(plan);
			// Our buffers are sized by the same rule as the
			// library's; a mismatch would be a bug, not bad input.
			size_t ib = in_per * (size_t) b;
			size_t ob = out_per * (size_t) b;
			if (fftd_plan_input_bytes(plan) != ib
			    || fftd_plan_output_bytes(plan) != ob) {
				fprintf(stderr,
				    "fftctl fft: internal error: plan expects "
				    "%zu/%zu bytes, have %zu/%zu\n",
				    fftd_plan_input_bytes(plan),
				    fftd_plan_output_bytes(plan), ib, ob);
				fftd_plan_destroy(plan);
				return EXIT_ERROR;
			}
		}
		rv = fftd_execute(plan,
		    (const unsigned char *) in + in_per * (size_t) done,
		    (unsigned char *) out + out_per * (size_t) done);
		if (rv != FFTD_OK) {
			fftd_plan_destroy(plan);
			return fftd_fail("execute", rv);
		}
		done += b;
	}
	// The plan name lives as long as the plan: keep a copy.
	static char name[32];
	snprintf(name, sizeof(name), "%s", plan != NULL ? *algo : "-");
	*algo = name;
	fftd_plan_destroy(plan);
	return EXIT_OK;
}

static int
fft_transform(
    const char *in_path, const char *out_path, const fft_opts *o, array *in)
{
	static const char *const kind_name[] = { "c2c", "r2c", "c2r" };
	const char              *kn          = kind_name[o->kind];

	if (o->kind == FFTD_R2C && in->complex) {
		return usage_error(
		    "fft", "r2c takes real input; %s is complex", in_path);
	}
	if (o->kind == FFTD_C2R && !in->complex) {
		return usage_error(
		    "fft", "c2r takes complex input; %s is real", in_path);
	}
	if (o->kind == FFTD_C2C && !in->complex && !promote(in)) {
		fprintf(stderr, "fftctl fft: out of memory\n");
		return EXIT_ERROR;
	}
	if (in->ndim < o->rank) {
		return usage_error("fft",
		    "%s has %d axes, fewer than --rank %d", in_path, in->ndim,
		    o->rank);
	}
	if (in->nelems == 0) {
		return usage_error("fft", "%s is empty", in_path);
	}

	// Transform axes are the last R; the leading ones multiply into
	// the batch.
	int     lead = in->ndim - o->rank;
	int64_t n[FFTD_MAX_RANK];
	int64_t batch = 1;
	for (int k = 0; k < lead; k++) {
		batch *= in->shape[k]; // bounded by nelems: no overflow
	}
	for (int k = 0; k < o->rank; k++) {
		n[k] = in->shape[lead + k];
	}
	array out = { .prec = in->prec,
		.complex    = o->kind != FFTD_C2R,
		.ndim       = in->ndim };
	memcpy(out.shape, in->shape, sizeof(out.shape));
	int64_t *last = &n[o->rank - 1];
	if (o->kind == FFTD_R2C) {
		out.shape[in->ndim - 1] = *last / 2 + 1;
	} else if (o->kind == FFTD_C2R) {
		int64_t m  = *last;
		int64_t nl = o->n_last ? o->n_last : 2 * (m - 1);
		if (nl < 1 || nl / 2 + 1 != m) {
			return usage_error("fft",
			    "c2r: the last axis has %" PRId64 " elements; "
			    "give --n LAST with LAST/2+1 = %" PRId64,
			    m, m);
		}
		*last                   = nl;
		out.shape[in->ndim - 1] = nl;
	}
	if (!count_elems(&out)) {
		fprintf(stderr, "fftctl fft: output size overflows\n");
		return EXIT_ERROR;
	}
	size_t per_in
	    = in->nelems / (size_t) batch * elem_size(in->prec, in->complex);
	size_t per_out
	    = out.nelems / (size_t) batch * elem_size(out.prec, out.complex);
	out.data = malloc(out.nelems * elem_size(out.prec, out.complex));
	if (out.data == NULL) {
		fprintf(stderr, "fftctl fft: out of memory\n");
		return EXIT_ERROR;
	}

	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, o->rank, n, o->kind, in->prec);
	if (o->kind == FFTD_C2C && o->inverse) {
		desc.direction = FFTD_INVERSE;
	}
	desc.norm      = o->norm;
	desc.algorithm = o->algorithm;
	desc.device    = o->device;

	fftd_client *client;
	int          ec   = connect_daemon(&client);
	const char  *algo = "-";
	if (ec == EXIT_OK) {
		ec = run_batches(client, &desc, batch, per_in, per_out,
		    in->data, out.data, &algo);
		fftd_client_close(client);
	}
	if (ec == EXIT_OK) {
		ec = save_output(out_path, &out, o->verbose);
	}
	if (ec == EXIT_OK && o->verbose) {
		fprintf(stderr, "fftctl fft: %s %s %s, batch %" PRId64 " of",
		    kn,
		    o->kind == FFTD_C2C ? (o->inverse ? "inverse" : "forward")
		        : o->kind == FFTD_R2C ? "forward"
		                              : "inverse",
		    prec_name[in->prec], batch);
		for (int k = 0; k < o->rank; k++) {
			fprintf(stderr, "%s%" PRId64, k ? "x" : " ", n[k]);
		}
		fprintf(stderr, " by %s -> %s\n", algo, out_path);
	}
	free(out.data);
	return ec;
}

static int
cmd_fft(int argc, char **argv)
{
	enum {
		O_KIND = 256,
		O_INVERSE,
		O_NORM,
		O_RANK,
		O_N,
		O_ALGORITHM,
		O_DEVICE,
		O_RAW,
		O_SHAPE,
		O_PRECISION,
		O_COMPLEX
	};
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, O_KIND },
		{ "inverse", no_argument, NULL, O_INVERSE },
		{ "norm", required_argument, NULL, O_NORM },
		{ "rank", required_argument, NULL, O_RANK },
		{ "axes-rank", required_argument, NULL, O_RANK },
		{ "n", required_argument, NULL, O_N },
		{ "algorithm", required_argument, NULL, O_ALGORITHM },
		{ "device", required_argument, NULL, O_DEVICE },
		{ "raw", no_argument, NULL, O_RAW },
		{ "shape", required_argument, NULL, O_SHAPE },
		{ "precision", required_argument, NULL, O_PRECISION },
		{ "complex", no_argument, NULL, O_COMPLEX },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	fft_opts  o  = { .kind = FFTD_C2C,
		  .norm        = FFTD_NORM_NONE,
		  .rank        = 1,
		  .device      = -1 };
	array     in = { 0 };
	long long v;
	int       c;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case O_KIND:
			if (strcmp(optarg, "c2c") == 0) {
				o.kind = FFTD_C2C;
			} else if (strcmp(optarg, "r2c") == 0) {
				o.kind = FFTD_R2C;
			} else if (strcmp(optarg, "c2r") == 0) {
				o.kind = FFTD_C2R;
			} else {
				return usage_error("fft",
				    "--kind: c2c, r2c or c2r, not '%s'",
				    optarg);
			}
			break;
		case O_INVERSE:
			o.inverse = true;
			break;
		case O_NORM:
			if (strcmp(optarg, "none") == 0) {
				o.norm = FFTD_NORM_NONE;
			} else if (strcmp(optarg, "by-n") == 0) {
				o.norm = FFTD_NORM_BY_N;
			} else if (strcmp(optarg, "ortho") == 0) {
				o.norm = FFTD_NORM_ORTHO;
			} else {
				return usage_error("fft",
				    "--norm: none, by-n or ortho, not '%s'",
				    optarg);
			}
			break;
		case O_RANK:
			if (!parse_ll(optarg, 1, FFTD_MAX_RANK, &v)) {
				return usage_error("fft",
				    "--rank: 1..%d, not '%s'", FFTD_MAX_RANK,
				    optarg);
			}
			o.rank = (int) v;
			break;
		case O_N:
			if (!parse_ll(optarg, 1, INT64_MAX, &v)) {
				return usage_error("fft",
				    "--n: a positive length, not '%s'", optarg);
			}
			o.n_last = v;
			break;
		case O_ALGORITHM:
			o.algorithm = optarg;
			break;
		case O_DEVICE:
			if (!parse_ll(optarg, -1, INT_MAX, &v)) {
				return usage_error("fft",
				    "--device: an index (-1: any), not '%s'",
				    optarg);
			}
			o.device = (int) v;
			break;
		case O_RAW:
			o.raw = true;
			break;
		case O_SHAPE:
			if (!parse_shape(optarg, &in)) {
				return usage_error("fft",
				    "--shape: 1 to %d positive sizes as "
				    "AxBx.., not '%s'",
				    FFTD__NPY_MAX_NDIM, optarg);
			}
			o.have_shape = true;
			break;
		case O_PRECISION:
			if (strcmp(optarg, "f64") == 0) {
				in.prec = FFTD_F64;
			} else if (strcmp(optarg, "f32") == 0) {
				in.prec = FFTD_F32;
			} else if (strcmp(optarg, "f16") == 0) {
				in.prec = FFTD_F16;
			} else {
				return usage_error("fft",
				    "--precision: f64, f32 or f16, not '%s'",
				    optarg);
			}
			o.have_prec = true;
			break;
		case O_COMPLEX:
			o.complex = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(fft_help, stdout);
			return EXIT_OK;
		default:
			return usage_error("fft", "bad option");
		}
	}
	if (argc - optind != 2) {
		return usage_error("fft", "give IN and OUT");
	}
	const char *in_path = argv[optind], *out_path = argv[optind + 1];
	if (o.inverse && o.kind != FFTD_C2C) {
		return usage_error("fft",
		    "--inverse is for c2c (r2c is forward, c2r inverse)");
	}
	if (o.n_last != 0 && o.kind != FFTD_C2R) {
		return usage_error("fft", "--n is for c2r");
	}
	if (o.raw != (o.have_shape && o.have_prec) || (!o.raw && o.complex)) {
		return usage_error("fft",
		    o.raw ? "--raw needs --shape and --precision"
		          : "--shape, --precision and --complex describe a "
		            "--raw input");
	}

	int ec;
	if (o.raw) {
		in.complex = o.complex;
		ec         = load_raw(in_path, &in);
	} else {
		ec = load_npy(in_path, o.kind, &in);
	}
	if (ec == EXIT_OK) {
		ec = fft_transform(in_path, out_path, &o, &in);
	}
	free(in.data);
	return ec;
}

// --- main -------------------------------------------------------------------

typedef struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} command;

static const command commands[] = {
	{ "ping", cmd_ping, ping_help },
	{ "info", cmd_info, info_help },
	{ "stats", cmd_stats, stats_help },
	{ "fft", cmd_fft, fft_help },
};

static const command *
find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name) == 0) {
			return &commands[i];
		}
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	enum { O_URL = 256, O_TIMEOUT, O_VERSION };
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, O_URL },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "version", no_argument, NULL, O_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int       c;
	// "+": stop at the command name; its options are its own.
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case O_URL:
			g_url = optarg;
			break;
		case O_TIMEOUT:
			if (!parse_ll(optarg, -1, INT_MAX, &v)) {
				return usage_error(NULL,
				    "--timeout: milliseconds (-1: none), not "
				    "'%s'",
				    optarg);
			}
			g_timeout_ms = (int) v;
			break;
		case O_VERSION:
			printf("fftctl %s (protocol %d)\n", fftd_version(),
			    FFTD_PROTOCOL_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[optind];
	if (strcmp(name, "help") == 0) {
		const command *cmd
		    = optind + 1 < argc ? find_command(argv[optind + 1]) : NULL;
		if (optind + 1 < argc && cmd == NULL) {
			return usage_error(
			    NULL, "no command '%s'", argv[optind + 1]);
		}
		if (cmd != NULL) {
			fputs(cmd->help, stdout);
		} else {
			usage(stdout);
		}
		return EXIT_OK;
	}
	const command *cmd = find_command(name);
	if (cmd == NULL) {
		return usage_error(NULL, "no command '%s'", name);
	}
	// The command parses its own argv from its name on; optind = 0
	// makes getopt start afresh (glibc).
	int    cargc = argc - optind;
	char **cargv = argv + optind;
	optind       = 0;
	return cmd->run(cargc, cargv);
}

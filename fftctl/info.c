// SPDX-License-Identifier: MIT
//
// info.c — fftctl info: what the daemon serves, as it reported it at
// connection (versions, backend, devices, algorithms, precisions, limits),
// and how accuracy-aware auto chooses: the error table (common/errtable.c),
// the plans made per algorithm and the daemon's speed table.
// Options and connecting are main.c's (fftctl.h); fftctl stats (stats.c)
// shows what the daemon has done.

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtable.h"
#include "fftctl.h"

// fftd__ctl_info_help is fftctl info --help.
const char fftd__ctl_info_help[]
    = "usage: fftctl info\n"
      "\n"
      "Prints what the daemon reported at connection: its version and "
      "protocol, its\n"
      "default backend, its devices (with memory), the algorithms and "
      "precisions it\n"
      "serves, and its request limits; the error table of accuracy-aware "
      "auto\n"
      "(--tolerance), the plans made per algorithm since the daemon "
      "started, and the\n"
      "speed table: per device, algorithm key (and the name plans "
      "report) and shape,\n"
      "the median time of one execution that auto chooses by.\n";

// print_error_table prints the error table accuracy-aware auto chooses by
// (common/errtable.c: the bound of the relative L2 error of one transform
// at a few sizes) for the rows of backend (all rows when it is unknown).
static void
print_error_table(const char *backend)
{
	static const int64_t sizes[] = { 1 << 10, 1 << 14, 1 << 20, 1 << 24 };
	bool                 any     = false;
	for (int i = 0; i < fftd__err_nrows; i++) {
		any |= strcmp(fftd__err_rows[i].backend, backend) == 0;
	}
	printf("%-16s relative L2 error bound per transform (--tolerance)\n",
	    "error table");
	printf("  %-10s %-9s %9s %9s %9s %9s\n", "algorithm", "computes",
	    "N=2^10", "2^14", "2^20", "2^24");
	for (int i = 0; i < fftd__err_nrows; i++) {
		const fftd__err_row *r = &fftd__err_rows[i];
		if (any && strcmp(r->backend, backend) != 0) {
			continue;
		}
		printf(
		    "  %-10s %-9s", r->algo, fftd__ctl_prec_name[r->compute]);
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			printf(
			    " %9.2e", fftd__err_bound(r, r->compute, sizes[k]));
		}
		printf("\n");
	}
	printf("  (data of a higher precision run at a lower one adds two "
	       "roundings there)\n");
}

// SPEED_MAX is the speed table's most entries (fftd_get_speed_table).
#define SPEED_MAX 1024

// printable copies the daemon's text s (at most max bytes) into out with
// any byte that is not printable ASCII as '?'.
static const char *
printable(char *out, size_t outlen, const char *s, size_t max)
{
	size_t n = strnlen(s, max), k = 0;
	for (; k < n && k + 1 < outlen; k++) {
		out[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
	}
	out[k] = '\0';
	return out;
}

// print_algo_stats prints, under the error table, the plans made per
// algorithm and the daemon's speed table (fftd_get_algorithm_stats,
// fftd_get_speed_table); a daemon that does not report them is said so.
// Returns FFTD_OK or the error of a call.
static int
print_algo_stats(fftd_client *client)
{
	fftd_algorithm_stats a[16];
	char                 t1[80], t2[80], t3[80];
	int                  na = 0, ns = 0;
	uint64_t             ev = 0;
	int                  rv = fftd_get_algorithm_stats(client, a, 16, &na);
	if (rv != FFTD_OK) {
		return rv;
	}
	printf("%-16s ", "plans made");
	na = na > 16 ? 16 : na;
	for (int i = 0; i < na; i++) {
		printf("%s%s %" PRIu64, i ? ", " : "",
		    printable(
		        t1, sizeof(t1), a[i].algorithm, sizeof(a[i].algorithm)),
		    a[i].plans);
	}
	printf("%s\n", na ? "" : "-");
	fftd_speed_entry *e = calloc(SPEED_MAX, sizeof(*e));
	if (e == NULL) {
		return FFTD_ENOMEM;
	}
	rv = fftd_get_speed_table(client, e, SPEED_MAX, &ns, &ev);
	if (rv != FFTD_OK) {
		free(e);
		return rv;
	}
	printf("%-16s %d entries, %" PRIu64 " evicted (median seconds of one "
	       "execution)\n",
	    "speed table", ns, ev);
	ns = ns > SPEED_MAX ? SPEED_MAX : ns;
	if (ns > 0) {
		printf("  %-6s %-12s %-12s %10s  %s\n", "device", "key",
		    "algorithm", "seconds", "shape");
	}
	for (int i = 0; i < ns; i++) {
		printf("  %-6d %-12s %-12s %10.3e  %s\n", e[i].device,
		    printable(t1, sizeof(t1), e[i].key, sizeof(e[i].key)),
		    printable(
		        t2, sizeof(t2), e[i].algorithm, sizeof(e[i].algorithm)),
		    e[i].seconds,
		    printable(t3, sizeof(t3), e[i].shape, sizeof(e[i].shape)));
	}
	free(e);
	return FFTD_OK;
}

// fftd__ctl_info is fftctl info: what the daemon reported at connection
// (fftd_client_info), one line per item, devices as a table.
int
fftd__ctl_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(fftd__ctl_info_help, stdout);
			return EXIT_OK;
		}
		return fftd__ctl_usage_error("info", "bad option");
	}
	if (optind != argc) {
		return fftd__ctl_usage_error(
		    "info", "unexpected argument '%s'", argv[optind]);
	}
	fftd_client *client;
	int          ec = fftd__ctl_connect(&client);
	if (ec != EXIT_OK) {
		return ec;
	}
	fftd_info info;
	int       rv = fftd_client_info(client, &info);
	if (rv != FFTD_OK) {
		fftd_client_close(client);
		return fftd__ctl_fail("info", rv);
	}

	char b[32];
	printf("%-16s %s\n", "address", fftd__ctl_url_name());
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
			        ? fftd__ctl_human(b, sizeof(b), d->memory_bytes)
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
			printf("%s%s", any ? ", " : "", fftd__ctl_prec_name[p]);
			any = true;
		}
	}
	printf("%s\n", any ? "" : "-");
	printf("%-16s %s per request side\n", "max request",
	    info.max_request_bytes
	        ? fftd__ctl_human(b, sizeof(b), info.max_request_bytes)
	        : "unlimited");
	printf("%-16s %" PRIu32 "\n", "max rank", info.max_rank);
	printf("%-16s %" PRIu64 "\n", "max batch", info.max_batch);
	printf("%-16s %" PRIu32 " per connection\n", "max plans",
	    info.max_plans_per_client);
	printf("%-16s %" PRIu32 " executions, %s of inline input per "
	       "connection\n",
	    "max in flight", info.max_inflight_per_client,
	    fftd__ctl_human(b, sizeof(b), info.max_queued_bytes_per_client));
	print_error_table(info.backend);
	rv = print_algo_stats(client);
	fftd_client_close(client);
	if (rv == FFTD_EPROTO) {
		printf(
		    "%-16s - (the daemon does not report it)\n", "speed table");
	} else if (rv != FFTD_OK) {
		return fftd__ctl_fail("info", rv);
	}
	if (info.ndaemons > 1) {
		printf("%-16s %d (the above is the first; limits are the "
		       "smallest)\n",
		    "daemons", info.ndaemons);
	}
	return EXIT_OK;
}

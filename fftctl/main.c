// SPDX-License-Identifier: MIT
//
// main.c — fftctl, the command-line client of fftd: checks a daemon is
// alive (ping), shows what it serves (info) and its counters (stats), and
// transforms numpy .npy or raw files (fft) so that numpy.load of the output
// gives what numpy.fft would, up to the normalisation asked for.
//
// This file holds the global options (--url, --timeout, --version, --help),
// the dispatch to a subcommand, and the helpers every subcommand shares
// (usage errors, daemon failures, connecting, integers, byte counts). Each
// subcommand is its own file: ping.c, info.c, stats.c, fft.c (with array.c,
// its input and output files); npy.c reads and writes .npy. fftctl.h is
// their private header.

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fftctl.h"

// Global options, parsed before the command name.
static const char *g_url        = NULL; // NULL: fftd_default_url()
static int         g_timeout_ms = 0;    // 0: the library's default

// fftd__ctl_prec_name names the precisions, indexed by fftd_precision.
const char *const fftd__ctl_prec_name[3] = { "f64", "f32", "f16" };

// usage writes fftctl --help, the commands and the global options, to out.
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

// fftd__ctl_usage_error reports a usage error of command cmd (NULL: of
// fftctl itself), points at the command's --help, and returns EXIT_USAGE.
int
fftd__ctl_usage_error(const char *cmd, const char *fmt, ...)
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

// fftd__ctl_fail prints what failed with the library's message for err and
// the daemon's detail, and returns EXIT_ERROR.
int
fftd__ctl_fail(const char *what, int err)
{
	const char *detail = fftd_last_error();
	fprintf(stderr, "fftctl: %s: %s%s%s%s\n", what, fftd_strerror(err),
	    *detail ? " (" : "", detail, *detail ? ")" : "");
	return EXIT_ERROR;
}

// fftd__ctl_url_name is the daemon address fftctl uses, for messages:
// --url, else the library's default address.
const char *
fftd__ctl_url_name(void)
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

// fftd__ctl_connect opens a connection with the global --url and
// --timeout; on failure it says why and returns EXIT_ERROR.
int
fftd__ctl_connect(fftd_client **c)
{
	int rv = fftd_client_open(c, g_url, g_timeout_ms);
	if (rv != FFTD_OK) {
		return fftd__ctl_fail(fftd__ctl_url_name(), rv);
	}
	return EXIT_OK;
}

// fftd__ctl_parse_ll parses a whole decimal integer in [min, max].
bool
fftd__ctl_parse_ll(const char *s, long long min, long long max, long long *v)
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

// fftd__ctl_human writes a byte count with a binary unit.
const char *
fftd__ctl_human(char *buf, size_t len, uint64_t bytes)
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

// command is one subcommand: its name, what runs it, its --help text.
typedef struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} command;

static const command commands[] = {
	{ "ping", fftd__ctl_ping, fftd__ctl_ping_help },
	{ "info", fftd__ctl_info, fftd__ctl_info_help },
	{ "stats", fftd__ctl_stats, fftd__ctl_stats_help },
	{ "fft", fftd__ctl_fft, fftd__ctl_fft_help },
};

// find_command returns the subcommand called name, or NULL.
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

// main parses the global options up to the command name, then hands the
// rest of argv to the command (or prints help).
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
			if (!fftd__ctl_parse_ll(optarg, -1, INT_MAX, &v)) {
				return fftd__ctl_usage_error(NULL,
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
			return fftd__ctl_usage_error(
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
		return fftd__ctl_usage_error(NULL, "no command '%s'", name);
	}
	// The command parses its own argv from its name on; optind = 0
	// makes getopt start afresh (glibc).
	int    cargc = argc - optind;
	char **cargv = argv + optind;
	optind       = 0;
	return cmd->run(cargc, cargv);
}

// SPDX-License-Identifier: MIT
//
// ping.c — fftctl ping: is the daemon alive, and how long is a round trip.
// Options and connecting are main.c's (fftctl.h).

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "fftctl.h"

// fftd__ctl_ping_help is fftctl ping --help.
const char fftd__ctl_ping_help[]
    = "usage: fftctl ping [-c COUNT]\n"
      "\n"
      "Connects to the daemon and sends COUNT pings (default 5), one after "
      "the other;\n"
      "prints the round-trip times in microseconds: min/median/max.\n"
      "\n"
      "  -c, --count COUNT   number of pings, 1..1000000\n";

// cmp_double orders doubles for qsort.
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

// fftd__ctl_ping is fftctl ping: COUNT round trips on one connection,
// their min/median/max.
int
fftd__ctl_ping(int argc, char **argv)
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
			if (!fftd__ctl_parse_ll(optarg, 1, 1000000, &count)) {
				return fftd__ctl_usage_error("ping",
				    "-c: '%s' is not a count in 1..1000000",
				    optarg);
			}
			break;
		case 'h':
			fputs(fftd__ctl_ping_help, stdout);
			return EXIT_OK;
		default:
			return fftd__ctl_usage_error("ping", "bad option");
		}
	}
	if (optind != argc) {
		return fftd__ctl_usage_error(
		    "ping", "unexpected argument '%s'", argv[optind]);
	}

	double *rtt = malloc((size_t) count * sizeof(double));
	if (rtt == NULL) {
		fprintf(stderr, "fftctl: out of memory\n");
		return EXIT_ERROR;
	}
	fftd_client *client;
	int          ec = fftd__ctl_connect(&client);
	if (ec != EXIT_OK) {
		free(rtt);
		return ec;
	}
	for (long long i = 0; i < count; i++) {
		int rv = fftd_ping(client, &rtt[i]);
		if (rv != FFTD_OK) {
			ec = fftd__ctl_fail("ping", rv);
			goto out;
		}
	}
	qsort(rtt, (size_t) count, sizeof(double), cmp_double);
	size_t m      = (size_t) count / 2;
	double median = count % 2 ? rtt[m] : (rtt[m - 1] + rtt[m]) / 2;
	printf("%s: %lld round trip%s, min/median/max = %.1f/%.1f/%.1f µs\n",
	    fftd__ctl_url_name(), count, count == 1 ? "" : "s", rtt[0], median,
	    rtt[count - 1]);
out:
	fftd_client_close(client);
	free(rtt);
	return ec;
}

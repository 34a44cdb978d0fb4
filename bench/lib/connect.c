// SPDX-License-Identifier: MIT
//
// connect.c — the client of a benchmark's daemon (connect.h). A file of
// its own so that only programs linking libfftd pull it from libbench.a.

#include "connect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// fftd_bench_connect: see connect.h.
int
fftd_bench_connect(const char *who, const char *url, const char *spawn,
    int timeout_ms, fftd_test_daemon *d, fftd_client **c)
{
	memset(d, 0, sizeof(*d));
	*c = NULL;
	if (url == NULL) {
		if (spawn != NULL) {
			setenv("FFTD_BIN", spawn, 1);
		}
		if (fftd_test_daemon_start(d, NULL, NULL) != 0) {
			return -1;
		}
		url = d->url;
	}
	int rv = fftd_client_open(c, url, timeout_ms);
	if (rv != FFTD_OK) {
		fprintf(stderr, "%s: fftd_client_open %s: %s: %s\n", who, url,
		    fftd_err_name(rv), fftd_last_error());
		if (d->pid) {
			fftd_test_daemon_stop(d);
		}
		return -1;
	}
	return 0;
}

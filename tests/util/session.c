// SPDX-License-Identifier: MIT
//
// session.c — a daemon with a client on it (session.h).

#include "session.h"

#include <stdio.h>

int
fftd_test_session_start(fftd_test_daemon *d, const char *config,
    const char *const *args, int timeout_ms, fftd_client **cp)
{
	*cp = NULL;
	if (fftd_test_daemon_start(d, config, args) != 0) {
		return -1;
	}
	int rv = fftd_client_open(cp, d->url, timeout_ms);
	if (rv != FFTD_OK) {
		fprintf(stderr, "fftd_client_open: %s (%s)\n",
		    fftd_err_name(rv), fftd_last_error());
		*cp = NULL;
		fftd_test_daemon_stop(d);
		return -1;
	}
	return 0;
}

int
fftd_test_session_stop(fftd_test_daemon *d, fftd_client **cp)
{
	if (*cp != NULL) {
		fftd_client_close(*cp);
		*cp = NULL;
	}
	return d->pid != 0 ? fftd_test_daemon_stop(d) : 0;
}

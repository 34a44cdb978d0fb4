// SPDX-License-Identifier: MIT
//
// conn.c — the drop-in library's one fftd client per process, opened on
// first need (the first plan the daemon could serve, or the first large
// fftw_malloc) at the client library's default address (fftd_default_url:
// FFTD_URL, else the system or per-user socket), and kept until the
// process ends. A failed connect is remembered: the next try comes at the
// earliest 10 s later, so a program without a daemon pays one refused
// connect, not one per plan. Likewise when an execution finds the daemon
// gone (fftd__dr_client_lost): for 10 s new plans go to the real FFTW at
// once instead of each waiting out the client's timeout; after that the
// client (which reconnects by itself) is offered again. Thread-safe (one
// mutex).

#include <stdio.h>
#include <time.h>

#include "dropin_impl.h"

#define RETRY_NS (10 * INT64_C(1000000000))

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static fftd_client    *client;
static int64_t         failed_at; // CLOCK_MONOTONIC ns of the last failure
static int             failed;
static char            failed_why[320];

// now_ns is CLOCK_MONOTONIC in nanoseconds.
static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// fftd__dr_client: see dropin_impl.h.
fftd_client *
fftd__dr_client(char *why, size_t whylen)
{
	pthread_mutex_lock(&conn_lock);
	fftd_client *c      = client;
	int          recent = failed && now_ns() - failed_at < RETRY_NS;
	if (c != NULL && recent) {
		c = NULL; // lost a moment ago: leave it be for now
	} else if (c == NULL && !recent) {
		char url[4096];
		if (fftd_default_url(url, sizeof(url)) != FFTD_OK) {
			snprintf(url, sizeof(url), "(default)");
		}
		int rv = fftd_client_open(
		    &c, NULL, fftd__dr_config_get()->timeout_ms);
		if (rv == FFTD_OK) {
			client = c;
			failed = 0;
			fftd__dr_log(
			    FFTD__DR_LOG_DEBUG, "connected to fftd at %s", url);
		} else {
			c         = NULL;
			failed    = 1;
			failed_at = now_ns();
			snprintf(failed_why, sizeof(failed_why),
			    "no daemon at %.120s: %s (%.80s)", url,
			    fftd_strerror(rv), fftd_last_error());
			fftd__dr_log(FFTD__DR_LOG_DEBUG, "%s", failed_why);
		}
	}
	if (c == NULL && why != NULL) {
		snprintf(why, whylen, "%s", failed_why);
	}
	pthread_mutex_unlock(&conn_lock);
	return c;
}

// fftd__dr_client_lost: see dropin_impl.h.
void
fftd__dr_client_lost(int err)
{
	pthread_mutex_lock(&conn_lock);
	failed    = 1;
	failed_at = now_ns();
	snprintf(failed_why, sizeof(failed_why),
	    "the daemon was lost a moment ago (%s)", fftd_strerror(err));
	pthread_mutex_unlock(&conn_lock);
}

// fftd__dr_conn_error: see dropin_impl.h.
int
fftd__dr_conn_error(int err)
{
	return err == FFTD_ECLOSED || err == FFTD_ETIMEDOUT
	    || err == FFTD_ECONNREFUSED || err == FFTD_ESHUTDOWN
	    || (err & FFTD_ERR_RANGE_MASK) == FFTD_ENNGERR;
}

// SPDX-License-Identifier: MIT
//
// metrics.h — PRIVATE to fftd. The Prometheus endpoint: GET /metrics on
// NNG's own HTTP server answers the daemon's counters in the text
// exposition format (version 0.0.4): per client (requests, errors, bytes,
// executions, queue and device time histograms), daemon totals, and per
// device (memory, busy fraction, queue, plan cache). Off unless
// `[metrics] listen = http://127.0.0.1:9464` is set; only loopback
// addresses are accepted (the endpoint has no authentication: a scraper on
// the same host, or a tunnel, reads it).

#ifndef FFTD_DAEMON_METRICS_H
#define FFTD_DAEMON_METRICS_H

#include <stddef.h>

#include "fftd.h"
#include "server.h"

typedef struct fftd__metrics fftd__metrics;

// FFTD__METRICS_CONTENT_TYPE is the Content-Type of the answer.
#define FFTD__METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

// fftd__metrics_check_url checks that url is http://HOST:PORT[/...] with
// HOST a loopback address (127.0.0.0/8, ::1, [::1], localhost). Returns
// FFTD_OK, or FFTD_EINVAL with err saying what is wrong.
int fftd__metrics_check_url(const char *url, char *err, size_t errlen);

// fftd__metrics_start checks url (fftd__metrics_check_url), binds it and
// serves GET /metrics from snapshots of srv (borrowed: stop the metrics
// before destroying the server). The HTTP requests are answered on NNG's
// threads. Returns FFTD_OK with *mp set, or an error with err filled and
// nothing left running.
int fftd__metrics_start(fftd__metrics **mp, const char *url, fftd__server *srv,
    char *err, size_t errlen);

// fftd__metrics_stop stops serving (a scrape in progress is finished
// first; later ones are refused), closes the listener and frees m. NULL is
// ignored.
void fftd__metrics_stop(fftd__metrics *m);

// fftd__metrics_render writes the exposition text for the daemon totals
// *st, the nclients clients and the ndevices devices into a malloc'd,
// NUL-terminated buffer *out of *len bytes (the NUL not counted; the
// caller frees it). Every family has its HELP and TYPE lines, even with no
// samples; label values are escaped (\\, \", \n) and made valid UTF-8.
// Returns FFTD_OK or FFTD_ENOMEM (*out NULL then).
int fftd__metrics_render(char **out, size_t *len, const fftd_stats *st,
    const fftd_client_stats *clients, int nclients,
    const fftd_device_stats *devices, int ndevices);

#endif // FFTD_DAEMON_METRICS_H

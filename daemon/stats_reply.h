// SPDX-License-Identifier: MIT
//
// stats_reply.h — PRIVATE to fftd. The answer to a Stats request: the
// daemon's counters, its devices, and one page of its clients, packed so
// that the protobuf part stays under FFTD__WIRE_MAX_PB however many
// clients are connected (a thousand clients do not fit in one 64 KiB
// reply).

#ifndef FFTD_DAEMON_STATS_REPLY_H
#define FFTD_DAEMON_STATS_REPLY_H

#include <nng/nng.h>

#include "fftd.h"
#include "fftd.pb-c.h"

// fftd__stats_reply builds in *mp the Stats reply to rq from a snapshot
// (fftd__server_snapshot): the counters st, the ndv devices dv, and the
// clients of cl (ncl of them; the array is sorted by id here) whose id is
// above rq->clients_after, in id order, at most rq->clients_limit (0: no
// limit) and as many as fit the protobuf limit, with clients_total and
// clients_more set. On success the caller owns *mp. Returns FFTD_OK or
// FFTD_ENOMEM.
int fftd__stats_reply(nng_msg **mp, const Fftd__Wire__StatsRequest *rq,
    const fftd_stats *st, fftd_client_stats *cl, int ncl, fftd_device_stats *dv,
    int ndv);

#endif // FFTD_DAEMON_STATS_REPLY_H

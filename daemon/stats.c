// SPDX-License-Identifier: MIT
//
// stats.c — the paged Stats reply (stats_reply.h). The clients are
// sorted by id and a page is cut by a cursor (the last id the client has)
// rather than an offset, so that clients connecting or leaving between two
// pages shift nothing: each client still connected is listed once.

#include "stats_reply.h"

#include <stdlib.h>

#include "wire.h"

// Room kept below FFTD__WIRE_MAX_PB for the Reply's own fields and the
// length prefixes of the nested messages.
#define SLACK 256

static int
by_id(const void *a, const void *b)
{
	uint32_t x = ((const fftd_client_stats *) a)->id;
	uint32_t y = ((const fftd_client_stats *) b)->id;
	return x < y ? -1 : x > y;
}

// field_bytes is what one nested message of len bytes costs in its parent:
// a one-byte tag, the length varint, the message.
static size_t
field_bytes(size_t len)
{
	size_t n = 1 + len;
	do {
		n++;
		len >>= 7;
	} while (len != 0);
	return n;
}

int
fftd__stats_reply(nng_msg **mp, const Fftd__Wire__StatsRequest *rq,
    const fftd_stats *st, fftd_client_stats *cl, int ncl, fftd_device_stats *dv,
    int ndv)
{
	uint32_t                  after = rq != NULL ? rq->clients_after : 0;
	uint32_t                  limit = rq != NULL ? rq->clients_limit : 0;
	int                       rv    = FFTD_ENOMEM;
	Fftd__Wire__Reply         r     = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__Stats         ws    = FFTD__WIRE__STATS__INIT;
	Fftd__Wire__ClientStats  *wc    = calloc((size_t) ncl + 1, sizeof(*wc));
	Fftd__Wire__ClientStats **pc    = calloc((size_t) ncl + 1, sizeof(*pc));
	Fftd__Wire__DeviceStats  *wd    = calloc((size_t) ndv + 1, sizeof(*wd));
	Fftd__Wire__DeviceStats **pd    = calloc((size_t) ndv + 1, sizeof(*pd));
	if (wc == NULL || pc == NULL || wd == NULL || pd == NULL) {
		goto out;
	}
	fftd__stats_to_wire(&ws, st);
	for (int i = 0; i < ndv; i++) {
		Fftd__Wire__DeviceStats w0 = FFTD__WIRE__DEVICE_STATS__INIT;
		wd[i]                      = w0;
		fftd__device_stats_to_wire(&wd[i], &dv[i]);
		pd[i] = &wd[i];
	}
	ws.n_devices     = (size_t) ndv;
	ws.devices       = pd;
	ws.clients_total = (uint64_t) ncl;
	size_t used      = SLACK + protobuf_c_message_get_packed_size(&ws.base);

	qsort(cl, (size_t) ncl, sizeof(*cl), by_id);
	int i = 0;
	while (i < ncl && cl[i].id <= after) {
		i++;
	}
	size_t k = 0;
	for (; i < ncl && (limit == 0 || k < limit); i++) {
		Fftd__Wire__ClientStats w0 = FFTD__WIRE__CLIENT_STATS__INIT;
		wc[k]                      = w0;
		fftd__client_stats_to_wire(&wc[k], &cl[i]);
		size_t b = field_bytes(
		    protobuf_c_message_get_packed_size(&wc[k].base));
		if (used + b > FFTD__WIRE_MAX_PB) {
			break;
		}
		used += b;
		pc[k] = &wc[k];
		k++;
	}
	ws.n_clients    = k;
	ws.clients      = pc;
	ws.clients_more = i < ncl;
	r.body_case     = FFTD__WIRE__REPLY__BODY_STATS;
	r.stats         = &ws;
	rv              = fftd__msg_build(mp, &r.base, 0, NULL);
out:
	free(wc);
	free(pc);
	free(wd);
	free(pd);
	return rv;
}

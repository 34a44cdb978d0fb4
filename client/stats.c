// SPDX-License-Identifier: MIT
//
// stats.c — the daemon's statistics (fftd_get_stats, fftd_get_client_stats,
// fftd_get_device_stats): the Stats round trip, paged for the list of
// clients, and the conversion into the caller's structs (client/abi.c's
// sizes; common/wire.c converts from the wire).

#include <stdbool.h>

#include "client_impl.h"

// stats_rpc fetches the daemon's statistics reply, with the page of its
// clients whose ids are above after (proto/fftd.proto: StatsRequest).
static int
stats_rpc(fftd_client *client, uint32_t after, Fftd__Wire__Reply **rp)
{
	Fftd__Wire__Request      req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__StatsRequest sr  = FFTD__WIRE__STATS_REQUEST__INIT;
	sr.clients_after             = after;
	req.body_case                = FFTD__WIRE__REQUEST__BODY_STATS;
	req.stats                    = &sr;
	int rv                       = fftd__rpc(client, &req, rp);
	if (rv == FFTD_OK
	    && (*rp)->body_case != FFTD__WIRE__REPLY__BODY_STATS) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "stats answered without stats");
	}
	return rv;
}

// fftd_get_stats_sized fetches the daemon's counters into the caller's
// fftd_stats of size bytes.
int
fftd_get_stats_sized(fftd_client *client, fftd_stats *st, size_t size)
{
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "fftd_stats size %zu is bad", size);
	}
	if (client == NULL || st == NULL) {
		return fftd__set_error(FFTD_EINVAL, "client or stats is NULL");
	}
	Fftd__Wire__Reply *r  = NULL;
	int                rv = stats_rpc(client, 0, &r);
	if (rv == FFTD_OK) {
		fftd_stats x;
		fftd__stats_from_wire(&x, r->stats);
		fftd__abi_out(st, size, &x, sizeof(x));
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv;
}

// stats_list fetches the daemon's per-client (devices false) or
// per-device list: its length in *n, up to max entries into out (an
// fftd_client_stats or fftd_device_stats array). Clients come in pages
// (the daemon's reply has a size limit): it asks for the next page, after
// the last client id it has, while the daemon says more follow. Entries
// are size bytes apart in out (the caller's sizeof of its struct).
static int
stats_list(
    fftd_client *client, void *out, size_t size, int max, int *n, bool devices)
{
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(FFTD_EINVAL, "%s size %zu is bad",
		    devices ? "fftd_device_stats" : "fftd_client_stats", size);
	}
	if (client == NULL || n == NULL || max < 0
	    || (out == NULL && max > 0)) {
		return fftd__set_error(FFTD_EINVAL, "client, out or n is NULL");
	}
	int      total = 0, rv;
	uint32_t after = 0;
	bool     more;
	do {
		Fftd__Wire__Reply *r = NULL;
		if ((rv = stats_rpc(client, after, &r)) != FFTD_OK) {
			if (r != NULL) {
				fftd__wire__reply__free_unpacked(r, NULL);
			}
			return rv;
		}
		const Fftd__Wire__Stats *ws = r->stats;
		int k = (int) (devices ? ws->n_devices : ws->n_clients);
		for (int i = 0; i < k; i++, total++) {
			if (total >= max) {
				continue;
			}
			char *at = (char *) out + (size_t) total * size;
			if (devices) {
				fftd_device_stats x;
				fftd__device_stats_from_wire(
				    &x, ws->devices[i]);
				fftd__abi_out(at, size, &x, sizeof(x));
			} else {
				fftd_client_stats x;
				fftd__client_stats_from_wire(
				    &x, ws->clients[i]);
				fftd__abi_out(at, size, &x, sizeof(x));
			}
		}
		// Ids grow from page to page, so this ends.
		more = !devices && ws->clients_more && k > 0;
		if (more) {
			after = ws->clients[k - 1]->id;
		}
		fftd__wire__reply__free_unpacked(r, NULL);
	} while (more);
	*n = total;
	return FFTD_OK;
}

// fftd_get_client_stats_sized: stats_list of the clients.
int
fftd_get_client_stats_sized(
    fftd_client *client, fftd_client_stats *out, size_t size, int max, int *n)
{
	return stats_list(client, out, size, max, n, false);
}

// fftd_get_device_stats_sized: stats_list of the devices.
int
fftd_get_device_stats_sized(
    fftd_client *client, fftd_device_stats *out, size_t size, int max, int *n)
{
	return stats_list(client, out, size, max, n, true);
}

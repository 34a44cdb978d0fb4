// SPDX-License-Identifier: MIT
//
// algo_stats.c — what the daemon's accuracy-aware auto has done
// (fftd_get_algorithm_stats, fftd_get_speed_table; issue 18 item 5): the
// AlgoStats round trip, paged by slot for the speed table, whose 1,024
// entries do not fit one reply, and the conversion into the caller's
// structs (client/abi.c's sizes; common/wire.c converts from the wire).

#include <limits.h>
#include <stdbool.h>

#include "client_impl.h"

// algo_rpc fetches one AlgoStats reply, with the speed table's entries
// from slot from on (proto/fftd.proto: AlgoStatsRequest).
static int
algo_rpc(fftd_client *client, uint32_t from, Fftd__Wire__Reply **rp)
{
	Fftd__Wire__Request          req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__AlgoStatsRequest ar  = FFTD__WIRE__ALGO_STATS_REQUEST__INIT;
	ar.speed_from                    = from;
	req.body_case                    = FFTD__WIRE__REQUEST__BODY_ALGO_STATS;
	req.algo_stats                   = &ar;
	int rv                           = fftd__rpc(client, &req, rp);
	if (rv == FFTD_OK
	    && ((*rp)->body_case != FFTD__WIRE__REPLY__BODY_ALGO_STATS
	        || (*rp)->algo_stats == NULL)) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "algorithm stats answered without them");
	}
	return rv;
}

// check_list checks a list call's arguments (fftd.h, "Statistics"):
// what names the struct, for the message.
static int
check_list(const fftd_client *client, const void *out, size_t size, int max,
    const int *n, const char *what)
{
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "%s size %zu is bad", what, size);
	}
	if (client == NULL || n == NULL) {
		return fftd__set_error(FFTD_EINVAL, "client or n is NULL");
	}
	if (max < 0) {
		return fftd__set_error(
		    FFTD_EINVAL, "max = %d is negative", max);
	}
	if (out == NULL && max > 0) {
		return fftd__set_error(
		    FFTD_EINVAL, "out is NULL with max = %d", max);
	}
	return FFTD_OK;
}

// fftd_get_algorithm_stats_sized fetches the plans made per algorithm
// into the caller's array of size-byte entries.
int
fftd_get_algorithm_stats_sized(fftd_client *client, fftd_algorithm_stats *out,
    size_t size, int max, int *n)
{
	int rv = check_list(client, out, size, max, n, "fftd_algorithm_stats");
	if (rv != FFTD_OK) {
		return rv;
	}
	Fftd__Wire__Reply *r = NULL;
	if ((rv = algo_rpc(client, 0, &r)) == FFTD_OK) {
		const Fftd__Wire__AlgoStatsReply *w = r->algo_stats;
		for (size_t i = 0; i < w->n_plans && i < (size_t) max; i++) {
			fftd_algorithm_stats x;
			fftd__algo_plans_from_wire(&x, w->plans[i]);
			fftd__abi_out(
			    (char *) out + i * size, size, &x, sizeof(x));
		}
		*n = w->n_plans > INT_MAX ? INT_MAX : (int) w->n_plans;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv;
}

// fftd_get_speed_table_sized fetches the speed table page by page: each
// reply says the slot to ask from next and whether entries are left.
int
fftd_get_speed_table_sized(fftd_client *client, fftd_speed_entry *out,
    size_t size, int max, int *n, uint64_t *evictions)
{
	int rv = check_list(client, out, size, max, n, "fftd_speed_entry");
	if (rv != FFTD_OK) {
		return rv;
	}
	int      total = 0;
	uint32_t from  = 0;
	uint64_t ev    = 0;
	bool     more;
	do {
		Fftd__Wire__Reply *r = NULL;
		if ((rv = algo_rpc(client, from, &r)) != FFTD_OK) {
			if (r != NULL) {
				fftd__wire__reply__free_unpacked(r, NULL);
			}
			return rv;
		}
		const Fftd__Wire__AlgoStatsReply *w = r->algo_stats;
		for (size_t i = 0; i < w->n_speeds; i++, total++) {
			if (total >= max) {
				continue;
			}
			fftd_speed_entry x;
			fftd__speed_entry_from_wire(&x, w->speeds[i]);
			fftd__abi_out((char *) out + (size_t) total * size,
			    size, &x, sizeof(x));
		}
		ev = w->speed_evictions;
		// The slot only grows and each page holds an entry, so this
		// ends (a daemon that says otherwise is not followed).
		more = w->speed_more && w->n_speeds > 0 && w->speed_next > from;
		from = w->speed_next;
		fftd__wire__reply__free_unpacked(r, NULL);
	} while (more);
	*n = total;
	if (evictions != NULL) {
		*evictions = ev;
	}
	return FFTD_OK;
}

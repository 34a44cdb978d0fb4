// SPDX-License-Identifier: MIT
//
// algo_stats.c — floor 1 of the NNG server (server_impl.h): the answer to
// an AlgoStats request, what accuracy-aware auto has done (issue 18 item
// 5): the plans made per algorithm chosen (algo_table.c counts them as
// plan.c makes them) and one page of the speed table. The table holds up
// to FFTD__SPEED_MAX (1,024) entries of about 60-100 bytes on the wire,
// more than one reply's FFTD__WIRE_MAX_PB of protobuf, so the entries come
// in pages cut by slot: a page holds the entries from the slot asked for
// on, as many as fit (or as asked), and says which slot to ask from next.
// Entries keep their slot for their life, so a page boundary shifts
// nothing. Calls reply.c only.
//
// Threads: NNG's task threads. Locks: the speed table's and the counts'
// own mutexes, held only while they are copied out (algo_table.c).

#include "server_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_table.h"
#include "errtable.h"

// reported_name writes into out the name fftd_plan_algorithm reports for
// plan key `key` on data of precision p: the error table's row whose key
// it is (keys are unique across backends), or the key itself.
static void
reported_name(const char *key, fftd_precision p, char out[16])
{
	for (int i = 0; i < fftd__err_nrows; i++) {
		char k[16];
		fftd__err_key(&fftd__err_rows[i], p, k);
		if (fftd__err_prec_rank(fftd__err_rows[i].compute)
		        <= fftd__err_prec_rank(p)
		    && strcmp(k, key) == 0) {
			fftd__err_name(&fftd__err_rows[i], p, out);
			return;
		}
	}
	snprintf(out, 16, "%s", key);
}

// shape_text writes a short description of s into out: kind, direction,
// precision, sizes and batch ("c2c fwd f32 64x64 batch 8"); cut to len.
static void
shape_text(const fftd__shape *s, char *out, size_t len)
{
	static const char *const kinds[] = { "c2c", "r2c", "c2r" };
	static const char *const precs[] = { "f64", "f32", "f16" };
	int                      n       = snprintf(out, len, "%s %s %s ",
            (unsigned) s->kind < 3 ? kinds[s->kind] : "?",
            s->direction == FFTD_FORWARD ? "fwd" : "inv",
            (unsigned) s->precision < 3 ? precs[s->precision] : "?");
	for (int i = 0;
	     i < s->rank && i < FFTD_MAX_RANK && n > 0 && (size_t) n < len;
	     i++) {
		n += snprintf(out + n, len - (size_t) n, "%s%" PRId64,
		    i ? "x" : "", s->n[i]);
	}
	if (n > 0 && (size_t) n < len) {
		snprintf(
		    out + n, len - (size_t) n, " batch %" PRId64, s->batch);
	}
}

// speed_public fills *x, the public form of speed table entry e.
static void
speed_public(fftd_speed_entry *x, const fftd__speed_entry *e)
{
	memset(x, 0, sizeof(*x));
	x->device = e->key.device;
	snprintf(x->key, sizeof(x->key), "%.15s", e->key.algo);
	reported_name(x->key, e->key.shape.precision, x->algorithm);
	shape_text(&e->key.shape, x->shape, sizeof(x->shape));
	x->seconds = (double) e->ns * 1e-9;
}

// fftd__algo_stats_build: see server_impl.h.
int
fftd__algo_stats_build(
    nng_msg **mp, const Fftd__Wire__AlgoStatsRequest *rq, fftd__speed_table *t)
{
	uint32_t from  = rq != NULL ? rq->speed_from : 0;
	uint32_t limit = rq != NULL ? rq->speed_limit : 0;
	int      rv    = FFTD_ENOMEM;
	int      room  = FFTD__SPEED_MAX;
	if (from > FFTD__SPEED_MAX) {
		from = FFTD__SPEED_MAX;
	}
	if (limit != 0 && limit < (uint32_t) room) {
		room = (int) limit;
	}

	// The plan counts: at most FFTD__ALGO_NAMES short entries.
	char                       names[FFTD__ALGO_NAMES][16];
	uint64_t                   counts[FFTD__ALGO_NAMES];
	Fftd__Wire__AlgoPlans      wp[FFTD__ALGO_NAMES];
	Fftd__Wire__AlgoPlans     *pp[FFTD__ALGO_NAMES];
	Fftd__Wire__Reply          r  = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__AlgoStatsReply ws = FFTD__WIRE__ALGO_STATS_REPLY__INIT;
	int np = fftd__algo_plan_counts(names, counts, FFTD__ALGO_NAMES);
	for (int i = 0; i < np; i++) {
		Fftd__Wire__AlgoPlans w0 = FFTD__WIRE__ALGO_PLANS__INIT;
		wp[i]                    = w0;
		wp[i].algorithm          = names[i];
		wp[i].plans              = counts[i];
		pp[i]                    = &wp[i];
	}
	ws.n_plans = (size_t) np;
	ws.plans   = pp;

	fftd__speed_entry       *e  = calloc((size_t) room, sizeof(*e));
	fftd_speed_entry        *x  = calloc((size_t) room, sizeof(*x));
	Fftd__Wire__SpeedEntry  *we = calloc((size_t) room, sizeof(*we));
	Fftd__Wire__SpeedEntry **pe = calloc((size_t) room, sizeof(*pe));
	if (e == NULL || x == NULL || we == NULL || pe == NULL) {
		goto out;
	}
	int      total = 0;
	uint64_t ev    = 0;
	int      got   = fftd__speed_list(t, (int) from, e, room, &total, &ev);
	ws.speed_total = (uint32_t) total;
	ws.speed_evictions = ev;
	size_t used        = FFTD__WIRE_PAGE_SLACK
	    + protobuf_c_message_get_packed_size(&ws.base);
	int k = 0;
	for (; k < got; k++) {
		Fftd__Wire__SpeedEntry w0 = FFTD__WIRE__SPEED_ENTRY__INIT;
		speed_public(&x[k], &e[k]);
		we[k] = w0;
		fftd__speed_entry_to_wire(&we[k], &x[k]);
		size_t b = fftd__wire_field_bytes(
		    protobuf_c_message_get_packed_size(&we[k].base));
		if (used + b > FFTD__WIRE_MAX_PB) {
			break;
		}
		used += b;
		pe[k] = &we[k];
	}
	ws.n_speeds   = (size_t) k;
	ws.speeds     = pe;
	ws.speed_next = from + (uint32_t) k;
	ws.speed_more = (int) ws.speed_next < total;
	r.body_case   = FFTD__WIRE__REPLY__BODY_ALGO_STATS;
	r.algo_stats  = &ws;
	rv            = fftd__msg_build(mp, &r.base, 0, NULL);
out:
	free(e);
	free(x);
	free(we);
	free(pe);
	return rv;
}

// fftd__algo_stats_request answers an AlgoStats request with the plan
// counts and one page of the daemon's speed table.
void
fftd__algo_stats_request(fftd__ctx *c, const Fftd__Wire__AlgoStatsRequest *rq)
{
	nng_msg *m = NULL;
	if (fftd__algo_stats_build(&m, rq, fftd__speed_global()) != FFTD_OK) {
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	fftd__reply_count(c->srv, c->pipe, FFTD_OK);
	fftd__ctx_send(c, m);
}

// SPDX-License-Identifier: MIT
//
// fuzz-request.c — libFuzzer target for what the daemon does to every NNG
// message before it dispatches it (daemon/server.c, handle_request): the
// frame header (fftd__frame_parse), the protobuf-c Request decode, the
// "only execute and array write requests carry a payload" rule, for
// MatchedFilter the argument checks both sides make (fftd__mf_check,
// common/mf_wire.h) under the default limits and none, and, for
// PlanCreate, the whole validation that needs no running server:
// fftd__desc_from_wire and fftd__shape_resolve under the daemon's default
// limits and under none. A resolved layout that is small enough is then copied
// with fftd__side_copy from and into arrays of exactly its byte count, so ASan
// checks that the layout arithmetic keeps every element inside them, and
// the description is sent round the wire again (fftd__desc_to_wire, pack,
// unpack) and must come back equal. The same bytes are also decoded as a
// Reply and converted as the client library converts Stats and AlgoStats
// replies.
//
// Not covered here (they need a session, a plan, a buffer or an array of a
// live server: daemon/exec.c, stream.c, buffer.c, array.c, mf_req.c,
// session.c; test_arrays covers the array ones): Execute's ranges
// and payload length against its plan, StreamOpen's slot checks,
// BufferRegister's limits, Hello's name handling. The integration tests
// (test_robustness_clients) cover those with hostile requests against a real
// daemon.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fftd.h"
#include "layout.h"
#include "mf_wire.h"
#include "wire.h"

// Layouts whose arrays are at most this big, and whose loops are at most
// this long, are copied; bigger ones are only resolved.
#define COPY_MAX_BYTES (1u << 20)
#define COPY_MAX_ELEMS (1u << 16)

// check_side copies one resolved side between two arrays of exactly its
// byte count (ASan reports any element outside them).
static void
check_side(const fftd__side *sd, int rank, int64_t batch, int64_t total)
{
	if (sd->bytes == 0 || sd->bytes > COPY_MAX_BYTES || batch <= 0
	    || total <= 0
	    || (uint64_t) batch > COPY_MAX_ELEMS / (uint64_t) total) {
		return;
	}
	uint8_t *src = malloc(sd->bytes), *dst = malloc(sd->bytes);
	if (src == NULL || dst == NULL) {
		abort();
	}
	memset(src, 0x5a, sd->bytes);
	fftd__side_copy(dst, src, sd, rank, batch);
	free(src);
	free(dst);
}

// check_round_trip sends a converted description round the wire again
// and checks that it comes back unchanged.
static void
check_round_trip(const fftd_plan_desc *d)
{
	fftd__wire_desc       w;
	Fftd__Wire__PlanDesc *back;
	uint8_t              *pb;
	size_t                len;
	fftd_plan_desc        e;
	char                  msg[256];
	fftd__desc_to_wire(&w, d);
	len = protobuf_c_message_get_packed_size(&w.pd.base);
	pb  = malloc(len ? len : 1);
	if (pb == NULL) {
		abort();
	}
	protobuf_c_message_pack(&w.pd.base, pb);
	back = fftd__wire__plan_desc__unpack(NULL, len, pb);
	if (back == NULL
	    || fftd__desc_from_wire(back, &e, msg, sizeof(msg)) != FFTD_OK) {
		abort(); // what we packed must decode
	}
	if (e.rank != d->rank || e.batch != d->batch || e.kind != d->kind
	    || e.precision != d->precision || e.direction != d->direction
	    || e.norm != d->norm || e.istride != d->istride
	    || e.idist != d->idist || e.ostride != d->ostride
	    || e.odist != d->odist || e.device != d->device
	    || e.priority != d->priority
	    || strcmp(e.algorithm, d->algorithm) != 0) {
		abort();
	}
	for (int k = 0; k < d->rank; k++) {
		if (e.n[k] != d->n[k] || e.inembed[k] != d->inembed[k]
		    || e.onembed[k] != d->onembed[k]) {
			abort();
		}
	}
	fftd__wire__plan_desc__free_unpacked(back, NULL);
	free(pb);
}

// check_plan_create runs PlanCreate's validation.
static void
check_plan_create(const Fftd__Wire__PlanCreate *pc, const fftd__limits *lim)
{
	fftd_plan_desc d;
	fftd__shape    sh;
	char           msg[512];
	if (fftd__desc_from_wire(pc->desc, &d, msg, sizeof(msg)) != FFTD_OK) {
		if (memchr(msg, '\0', sizeof(msg)) == NULL) {
			abort();
		}
		return;
	}
	check_round_trip(&d);
	const fftd__limits *lims[2] = { lim, NULL };
	for (int i = 0; i < 2; i++) {
		int rv
		    = fftd__shape_resolve(&d, lims[i], &sh, msg, sizeof(msg));
		if (rv != FFTD_OK) {
			if (rv != FFTD_EINVAL && rv != FFTD_EOVERFLOW
			    && rv != FFTD_ELIMIT) {
				abort(); // the documented codes only
			}
			continue;
		}
		if (sh.rank < 1 || sh.rank > FFTD_MAX_RANK
		    || sh.in.bytes != (uint64_t) sh.in.elems * sh.in.elem_size
		    || sh.out.bytes
		        != (uint64_t) sh.out.elems * sh.out.elem_size) {
			abort();
		}
		if (lims[i] != NULL
		    && (sh.in.bytes > lim->max_request_bytes
		        || sh.out.bytes > lim->max_request_bytes)) {
			abort(); // a limit let through
		}
		check_side(&sh.in, sh.rank, sh.batch, sh.total);
		check_side(&sh.out, sh.rank, sh.batch, sh.total);
	}
}

// check_mf runs MatchedFilter's argument checks: only the documented codes,
// and byte counts that agree with each other and with the limit.
static void
check_mf(const Fftd__Wire__MatchedFilter *mf, const fftd__limits *lim)
{
	const uint64_t max[2] = { lim->max_request_bytes, UINT64_MAX };
	for (int i = 0; i < 2; i++) {
		fftd__mf_sizes sz;
		char           msg[256];
		int rv = fftd__mf_check(mf, max[i], &sz, msg, sizeof(msg));
		if (rv != FFTD_OK) {
			if ((rv != FFTD_EINVAL && rv != FFTD_EUNSUPPORTED
			        && rv != FFTD_EOVERFLOW && rv != FFTD_ELIMIT)
			    || memchr(msg, '\0', sizeof(msg)) == NULL) {
				abort();
			}
			continue;
		}
		if (sz.bins != mf->n / 2 + 1 || sz.reply_max > max[i]
		    || sz.tpl_bytes != (uint64_t) mf->count * sz.data_bytes
		    || sz.series_len != (uint64_t) (mf->t_end - mf->t_begin)) {
			abort();
		}
	}
}

// check_reply decodes the bytes as a Reply, as the client library does.
static void
check_reply(const fftd__frame *f)
{
	Fftd__Wire__Reply *rep
	    = fftd__wire__reply__unpack(NULL, f->pb_len, f->pb);
	if (rep == NULL) {
		return;
	}
	if (rep->body_case == FFTD__WIRE__REPLY__BODY_STATS
	    && rep->stats != NULL) {
		fftd_stats        x;
		fftd_client_stats c;
		fftd_device_stats dv;
		fftd__stats_from_wire(&x, rep->stats);
		for (size_t i = 0; i < rep->stats->n_clients; i++) {
			fftd__client_stats_from_wire(
			    &c, rep->stats->clients[i]);
		}
		for (size_t i = 0; i < rep->stats->n_devices; i++) {
			fftd__device_stats_from_wire(
			    &dv, rep->stats->devices[i]);
		}
	}
	if (rep->body_case == FFTD__WIRE__REPLY__BODY_ALGO_STATS
	    && rep->algo_stats != NULL) {
		fftd_algorithm_stats a;
		fftd_speed_entry     e;
		for (size_t i = 0; i < rep->algo_stats->n_plans; i++) {
			fftd__algo_plans_from_wire(
			    &a, rep->algo_stats->plans[i]);
		}
		for (size_t i = 0; i < rep->algo_stats->n_speeds; i++) {
			fftd__speed_entry_from_wire(
			    &e, rep->algo_stats->speeds[i]);
		}
	}
	fftd__wire__reply__free_unpacked(rep, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static fftd__config cfg;
	static int          init;
	if (!init) {
		fftd__config_defaults(&cfg);
		init = 1;
	}
	// The daemon parses the body of an NNG message: a heap copy of
	// exactly the received bytes.
	uint8_t *buf = malloc(size ? size : 1);
	if (buf == NULL) {
		abort();
	}
	memcpy(buf, data, size);
	fftd__frame f;
	int         rv = fftd__frame_parse(buf, size, &f);
	if (rv == FFTD_OK) {
		if (f.pb < buf || f.pb + f.pb_len > buf + size
		    || (f.payload == NULL) != (f.payload_len == 0)
		    || (f.payload != NULL
		        && (f.payload < f.pb + f.pb_len
		            || f.payload_len
		                != (uint64_t) (buf + size - f.payload)))) {
			abort(); // a frame that points outside the message
		}
		Fftd__Wire__Request *req
		    = fftd__wire__request__unpack(NULL, f.pb_len, f.pb);
		if (req != NULL) {
			bool payload_ok = f.payload_len == 0
			    || req->body_case
			        == FFTD__WIRE__REQUEST__BODY_EXECUTE
			    || req->body_case
			        == FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE;
			if (payload_ok
			    && req->body_case
			        == FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER) {
				check_mf(req->matched_filter, &cfg.limits);
			}
			if (payload_ok
			    && req->body_case
			        == FFTD__WIRE__REQUEST__BODY_PLAN_CREATE) {
				check_plan_create(
				    req->plan_create, &cfg.limits);
			}
			fftd__wire__request__free_unpacked(req, NULL);
		}
		check_reply(&f);
	} else if (rv != FFTD_EPROTO && rv != FFTD_EVERSION) {
		abort();
	}
	free(buf);
	return 0;
}

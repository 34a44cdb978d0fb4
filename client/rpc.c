// SPDX-License-Identifier: MIT
//
// rpc.c — libfftd's round trips: one request and its reply over an NNG context
// of an endpoint's socket, with no payload either way (hello, plans, ping,
// statistics, buffers, cancel), one daemon or several at once
// (fftd__rpc_start, then fftd__rpc_finish), or with payloads, waited for
// (fftd__rpc_payload: resident arrays' copies, the bank's results).
// Executions, which carry payloads and complete asynchronously, are
// exec.c's; the reply decoder is shared with it.

#include <stdio.h>
#include <string.h>

#include <nng/nng.h>

#include "client_impl.h"

// fftd__decode_frame parses a reply frame of len bytes at buf (an NNG
// message's body, or a bank channel's packet); on success *rp is the
// unpacked reply (status may be an error, whose message becomes the last
// error) and f points into buf.
int
fftd__decode_frame(
    uint8_t *buf, size_t len, Fftd__Wire__Reply **rp, fftd__frame *f)
{
	int rv = fftd__frame_parse(buf, len, f);
	if (rv != FFTD_OK) {
		return fftd__set_error(
		    rv, "malformed reply frame from the daemon");
	}
	*rp = fftd__wire__reply__unpack(NULL, f->pb_len, f->pb);
	if (*rp == NULL) {
		return fftd__set_error(FFTD_EPROTO, "reply does not decode");
	}
	if ((*rp)->status != FFTD_OK) {
		fftd__set_error((*rp)->status, "%s", (*rp)->message);
	}
	return FFTD_OK;
}

// fftd__decode_reply is fftd__decode_frame of a reply message.
int
fftd__decode_reply(nng_msg *m, Fftd__Wire__Reply **rp, fftd__frame *f)
{
	return fftd__decode_frame(nng_msg_body(m), nng_msg_len(m), rp, f);
}

// fftd__rpc_start sends req (no payload) to endpoint i without waiting.
void
fftd__rpc_start(
    fftd_client *c, int i, const Fftd__Wire__Request *req, fftd__rpc_call *call)
{
	nng_msg *m;
	call->aio = NULL;
	if (fftd__forked()) {
		call->rv = FFTD_EUNSUPPORTED;
		(void) fftd__fork_refuse();
		snprintf(call->msg, sizeof(call->msg), "%s", fftd_last_error());
		return;
	}
	call->rv = fftd__msg_build(&m, &req->base, 0, NULL);
	if (call->rv != FFTD_OK) {
		snprintf(
		    call->msg, sizeof(call->msg), "cannot build the request");
		return;
	}
	int rv;
	if ((rv = nng_aio_alloc(&call->aio, NULL, NULL)) != 0
	    || (rv = nng_ctx_open(&call->ctx, c->ep[i].sock)) != 0) {
		nng_msg_free(m);
		if (call->aio != NULL) {
			nng_aio_free(call->aio);
			call->aio = NULL;
		}
		call->rv = fftd__map_nng(rv);
		snprintf(call->msg, sizeof(call->msg), "%s", nng_strerror(rv));
		return;
	}
	nng_aio_set_timeout(call->aio, c->timeout);
	nng_aio_set_msg(call->aio, m);
	nng_ctx_send(call->ctx, call->aio);
}

// fftd__rpc_finish waits for the reply of a call fftd__rpc_start made, which
// the caller frees with fftd__wire__reply__free_unpacked. Returns the transport
// or decoding error, else the reply's own status.
int
fftd__rpc_finish(fftd__rpc_call *call, Fftd__Wire__Reply **rp)
{
	int rv;
	if (call->rv != FFTD_OK) {
		return fftd__set_error(call->rv, "%s", call->msg);
	}
	nng_aio_wait(call->aio);
	if ((rv = nng_aio_result(call->aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(call->aio));
		goto done;
	}
	nng_ctx_recv(call->ctx, call->aio);
	nng_aio_wait(call->aio);
	if ((rv = nng_aio_result(call->aio)) == 0) {
		fftd__frame f;
		nng_msg    *m = nng_aio_get_msg(call->aio);
		rv            = fftd__decode_reply(m, rp, &f);
		nng_msg_free(m);
		nng_ctx_close(call->ctx);
		nng_aio_free(call->aio);
		if (rv != FFTD_OK) {
			return rv;
		}
		if (f.payload_len != 0) {
			fftd__wire__reply__free_unpacked(*rp, NULL);
			*rp = NULL;
			return fftd__set_error(
			    FFTD_EPROTO, "unexpected payload in reply");
		}
		return (*rp)->status;
	}
done:
	nng_ctx_close(call->ctx);
	nng_aio_free(call->aio);
	return fftd__set_error(fftd__map_nng(rv),
	    "no answer from the daemon: %s", nng_strerror(rv));
}

// fftd__rpc_on sends req (no payload) to endpoint i and waits for the reply
// (see fftd__rpc_finish).
int
fftd__rpc_on(fftd_client *c, int i, const Fftd__Wire__Request *req,
    Fftd__Wire__Reply **rp)
{
	fftd__rpc_call call;
	fftd__rpc_start(c, i, req, &call);
	return fftd__rpc_finish(&call, rp);
}

// fftd__rpc_payload sends req with len payload bytes copied from payload to
// endpoint i and waits for the reply. On FFTD_OK the caller owns *rp and
// *mp (the reply message, whose payload f describes) and frees both; on an
// error neither is left and the last error says why (the reply's own
// status and message among them).
int
fftd__rpc_payload(fftd_client *c, int i, const Fftd__Wire__Request *req,
    const void *payload, uint64_t len, Fftd__Wire__Reply **rp, nng_msg **mp,
    fftd__frame *f)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	nng_msg *m;
	void    *pl;
	nng_aio *aio = NULL;
	nng_ctx  ctx;
	*rp    = NULL;
	*mp    = NULL;
	int rv = fftd__msg_build(&m, &req->base, len, &pl);
	if (rv != FFTD_OK) {
		return fftd__set_error(rv,
		    "cannot build a request of %llu "
		    "payload bytes",
		    (unsigned long long) len);
	}
	if (len != 0) {
		memcpy(pl, payload, (size_t) len);
	}
	if ((rv = nng_aio_alloc(&aio, NULL, NULL)) != 0
	    || (rv = nng_ctx_open(&ctx, c->ep[i].sock)) != 0) {
		nng_msg_free(m);
		if (aio != NULL) {
			nng_aio_free(aio);
		}
		return fftd__set_error(
		    fftd__map_nng(rv), "%s", nng_strerror(rv));
	}
	nng_aio_set_timeout(aio, c->timeout);
	nng_aio_set_msg(aio, m);
	nng_ctx_send(ctx, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(aio));
	} else {
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
	}
	nng_msg *r = rv == 0 ? nng_aio_get_msg(aio) : NULL;
	nng_ctx_close(ctx);
	nng_aio_free(aio);
	if (rv != 0) {
		return fftd__set_error(fftd__map_nng(rv),
		    "no answer from the daemon: %s", nng_strerror(rv));
	}
	int st = fftd__decode_reply(r, rp, f);
	if (st == FFTD_OK && (*rp)->status != FFTD_OK) {
		st = (*rp)->status; // the last error holds its message
		fftd__wire__reply__free_unpacked(*rp, NULL);
		*rp = NULL;
	}
	if (st != FFTD_OK) {
		nng_msg_free(r);
		return st;
	}
	*mp = r;
	return FFTD_OK;
}

// fftd__rpc is fftd__rpc_on the first endpoint: what a client of several
// daemons asks only one of them (ping, statistics, buffers: see
// fftd_client_open).
int
fftd__rpc(
    fftd_client *c, const Fftd__Wire__Request *req, Fftd__Wire__Reply **rp)
{
	return fftd__rpc_on(c, 0, req, rp);
}

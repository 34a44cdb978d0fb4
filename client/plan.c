// SPDX-License-Identifier: MIT
//
// plan.c — plans: fftd_plan_desc_init, and fftd_plan_create /
// fftd_plan_destroy on every daemon of the client at once (one id per
// endpoint and the session that made it), with the byte counts the daemon's
// layout arithmetic (common/layout.c) gives. Executing plans is exec.c's.

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "client_impl.h"

// desc_defaults fills *d with what every field of fftd_plan_desc reads as
// when a caller's (older, shorter) struct lacks it: fftd_plan_desc_init's
// values, the sizes and kind aside.
static void
desc_defaults(fftd_plan_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->batch  = 1;
	d->device = -1;
}

// fftd_plan_desc_init_sized fills the caller's fftd_plan_desc of size
// bytes (fftd_plan_desc_init in fftd.h): a full one here, then the bytes
// the caller's struct has.
int
fftd_plan_desc_init_sized(fftd_plan_desc *out, size_t size, int rank,
    const int64_t *n, fftd_kind kind, fftd_precision precision)
{
	fftd_plan_desc  full;
	fftd_plan_desc *desc = &full;
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "fftd_plan_desc size %zu is bad", size);
	}
	if (out == NULL || desc == NULL || n == NULL || rank < 1
	    || rank > FFTD_MAX_RANK) {
		return fftd__set_error(
		    FFTD_EINVAL, "rank = %d: must be 1, 2 or 3", rank);
	}
	memset(desc, 0, sizeof(*desc));
	desc->rank = rank;
	for (int k = 0; k < rank; k++) {
		desc->n[k] = n[k];
	}
	desc->batch     = 1;
	desc->kind      = kind;
	desc->precision = precision;
	desc->direction = kind == FFTD_C2R ? FFTD_INVERSE : FFTD_FORWARD;
	desc->norm      = FFTD_NORM_NONE;
	desc->algorithm = NULL;
	desc->device    = -1;
	fftd__abi_out(out, size, desc, sizeof(*desc));
	return FFTD_OK;
}

// fftd__ep_usable says whether executions of plan p may go to endpoint i. With
// one daemon, always (as ever: while the connection is down, NNG waits for
// it to come back, up to the timeout, and a new session answers
// FFTD_ENOPLAN). With several, only while the session that made the plan
// there is connected and has not been seen to drop a request.
bool
fftd__ep_usable(const fftd_client *c, const fftd_plan *p, int i)
{
	if (c->nep == 1) {
		return true;
	}
	const ep_link *l = c->ep[i].link;
	return p->epoch[i] != 0 && atomic_load(&l->pipe) != 0
	    && atomic_load(&l->epoch) == p->epoch[i]
	    && atomic_load(&l->broken) != p->epoch[i];
}

// plan_release destroys plan p on the endpoints in mask whose session
// still holds it, all at once.
static void
plan_release(fftd_client *c, const fftd_plan *p, uint32_t mask)
{
	Fftd__Wire__Request     req[FFTD_MAX_DAEMONS];
	Fftd__Wire__PlanDestroy pd[FFTD_MAX_DAEMONS];
	fftd__rpc_call          call[FFTD_MAX_DAEMONS];
	bool                    sent[FFTD_MAX_DAEMONS] = { false };
	char                    keep[sizeof(fftd__last_error)];
	memcpy(keep, fftd__last_error, sizeof(keep)); // not the caller's error
	for (int i = 0; i < c->nep; i++) {
		if (!(mask & (1u << i)) || !fftd__ep_usable(c, p, i)) {
			continue; // a session that is gone took its plans along
		}
		fftd__wire__request__init(&req[i]);
		fftd__wire__plan_destroy__init(&pd[i]);
		pd[i].plan_id       = p->id[i];
		req[i].body_case    = FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY;
		req[i].plan_destroy = &pd[i];
		fftd__rpc_start(c, i, &req[i], &call[i]);
		sent[i] = true;
	}
	for (int i = 0; i < c->nep; i++) {
		Fftd__Wire__Reply *r = NULL;
		if (sent[i]) {
			(void) fftd__rpc_finish(&call[i], &r);
		}
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	memcpy(fftd__last_error, keep, sizeof(keep));
}

// fftd_plan_create_sized makes the plan the caller's fftd_plan_desc of
// size bytes describes (fields it lacks at their defaults: desc_defaults)
// on every daemon connected now (fftd_plan_create in fftd.h).
int
fftd_plan_create_sized(fftd_client *client, const fftd_plan_desc *cdesc,
    size_t size, fftd_plan **planp)
{
	char           msg[512];
	fftd_plan_desc full;
	if (!fftd__abi_size_ok(size)) {
		return fftd__set_error(
		    FFTD_EINVAL, "fftd_plan_desc size %zu is bad", size);
	}
	if (client == NULL || cdesc == NULL || planp == NULL) {
		return fftd__set_error(
		    FFTD_EINVAL, "client, desc or planp is NULL");
	}
	desc_defaults(&full);
	fftd__abi_in(&full, sizeof(full), cdesc, size);
	const fftd_plan_desc *desc = &full;
	fftd_plan            *p    = calloc(1, sizeof(*p));
	if (p == NULL) {
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	// Resolve here too (no limits: those are the daemon's) so that byte
	// counts and the output copy use the same arithmetic as the daemon.
	int rv = fftd__shape_resolve(desc, NULL, &p->shape, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		free(p);
		return fftd__set_error(rv, "%s", msg);
	}
	fftd__wire_desc        wd;
	Fftd__Wire__Request    req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__PlanCreate pc  = FFTD__WIRE__PLAN_CREATE__INIT;
	fftd__desc_to_wire(&wd, desc);
	pc.desc         = &wd.pd;
	req.body_case   = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	req.plan_create = &pc;
	// Every daemon connected now makes it, all at once; one that is not
	// is left out of this plan (it would hold the call up to the timeout).
	// The session is read before the request goes: a reconnection under
	// way leaves the endpoint out rather than naming the wrong session.
	fftd__rpc_call call[FFTD_MAX_DAEMONS];
	uint64_t       epoch[FFTD_MAX_DAEMONS];
	bool           sent[FFTD_MAX_DAEMONS] = { false };
	int            asked                  = 0;
	for (int i = 0; i < client->nep; i++) {
		epoch[i] = atomic_load(&client->ep[i].link->epoch);
		if (client->nep > 1
		    && atomic_load(&client->ep[i].link->pipe) == 0) {
			continue;
		}
		fftd__rpc_start(client, i, &req, &call[i]);
		sent[i] = true;
		asked++;
	}
	if (asked == 0) {
		free(p);
		return fftd__set_error(FFTD_ECLOSED,
		    "none of the %d daemons is connected now (libfftd "
		    "reconnects by itself; try again later)",
		    client->nep);
	}
	uint32_t made   = 0;
	int      status = FFTD_OK;
	for (int i = 0; i < client->nep; i++) {
		Fftd__Wire__Reply *r = NULL;
		if (!sent[i]) {
			continue;
		}
		rv = fftd__rpc_finish(&call[i], &r);
		if (rv == FFTD_OK
		    && (r->body_case != FFTD__WIRE__REPLY__BODY_PLAN_CREATE
		        || r->plan_create->input_bytes != p->shape.in.bytes
		        || r->plan_create->output_bytes
		            != p->shape.out.bytes)) {
			rv = fftd__set_error(FFTD_EPROTO,
			    "daemon's plan does not match the description's "
			    "byte counts");
		}
		if (rv == FFTD_OK) {
			p->id[i]    = r->plan_create->plan_id;
			p->epoch[i] = epoch[i] != 0 ? epoch[i] : 1;
			made |= 1u << i;
			if (p->algorithm[0] == '\0') {
				fftd__copy_str(p->algorithm,
				    sizeof(p->algorithm),
				    r->plan_create->algorithm);
			}
		} else if (status == FFTD_OK) {
			status = fftd__url_error(client, i, rv);
			snprintf(msg, sizeof(msg), "%s", fftd__last_error);
		}
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	if (status != FFTD_OK) {
		plan_release(client, p, made);
		free(p);
		return fftd__set_error(status, "%s", msg);
	}
	p->client = client;
	atomic_fetch_add(&client->refs, 1);
	*planp = p;
	return FFTD_OK;
}

// fftd_plan_destroy releases the plan on its daemons (unless the client
// is closed) and drops its client reference.
void
fftd_plan_destroy(fftd_plan *plan)
{
	if (fftd__forked()) {
		free(plan); // this process's copy; no daemon call (fork.c)
		return;
	}
	if (plan == NULL) {
		return;
	}
	// After fftd_client_close the daemon has released the plan already.
	// A failure means the same (it went away or restarted).
	if (!atomic_load(&plan->client->closed)) {
		plan_release(plan->client, plan, UINT32_MAX);
	}
	fftd__client_unref(plan->client);
	free(plan);
}

// fftd_plan_input_bytes is the input array's size in bytes.
size_t
fftd_plan_input_bytes(const fftd_plan *plan)
{
	return plan ? (size_t) plan->shape.in.bytes : 0;
}

// fftd_plan_output_bytes is the output array span's size in bytes.
size_t
fftd_plan_output_bytes(const fftd_plan *plan)
{
	return plan ? (size_t) plan->shape.out.bytes : 0;
}

// fftd_plan_algorithm names the implementation the daemon chose.
const char *
fftd_plan_algorithm(const fftd_plan *plan)
{
	return plan ? plan->algorithm : "";
}

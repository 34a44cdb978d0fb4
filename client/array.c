// SPDX-License-Identifier: MIT
//
// array.c — resident arrays (fftd.h: fftd_array_*, fftd_execute_arrays):
// memory in the daemon's device that a client fills, reads back and runs
// executions on, so that a chain of steps moves no data through the
// socket. An array lives in the session of the first endpoint (the first
// daemon of a URL list) and dies with it. Copies go by reference when the
// host side lies inside one of the client's shared buffers, else as the
// request's or reply's payload, spans of STAGE_MIN_BYTES or more through
// a staging buffer (buffer.c) as executions' inline arrays do, in chunks
// of at most ARRAY_CHUNK bytes so that staging buffers stay small and no
// message passes the daemon's request limit. fftd_array_open_ipc makes
// an array of the caller's own GPU memory (a CUDA IPC handle), which the
// daemon maps; everything else treats it as any array.
//
// Threads: every call blocks its caller; any thread. The handle is
// immutable after creation.

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "client_impl.h"

// ARRAY_CHUNK is the largest span one write or read request moves inline
// or through a staging buffer.
#define ARRAY_CHUNK ((uint64_t) 64 << 20)

// fftd__array_alive says whether a's session still holds it.
int
fftd__array_alive(const fftd_array *a)
{
	const fftd_client *c = a->client;
	if (atomic_load(&c->closed)) {
		return fftd__set_error(FFTD_ECLOSED, "the client is closed");
	}
	const ep_link *l = c->ep[0].link;
	if (atomic_load(&l->pipe) == 0 || atomic_load(&l->epoch) != a->epoch) {
		return fftd__set_error(FFTD_ECLOSED,
		    "array %" PRIu64 " was lost with its connection to the "
		    "daemon (arrays die with their connection)",
		    a->id);
	}
	return FFTD_OK;
}

// array_request sends wr (an ArrayCreate or ArrayOpenIpc request) to the
// first daemon and makes *arrp of its reply, which must name an array of
// bytes bytes; what names the request in the error.
static int
array_request(fftd_client *client, Fftd__Wire__Request *wr, size_t bytes,
    const char *what, fftd_array **arrp)
{
	if (atomic_load(&client->closed)) {
		return fftd__set_error(FFTD_ECLOSED, "the client is closed");
	}
	fftd_array *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	Fftd__Wire__Reply *r = NULL;
	// The session the array will belong to: taken before the request,
	// so a reconnection meanwhile makes the array unusable, not wrong.
	uint64_t epoch = atomic_load(&client->ep[0].link->epoch);
	int      rv    = fftd__rpc_on(client, 0, wr, &r);
	if (rv == FFTD_OK
	    && (r->body_case != FFTD__WIRE__REPLY__BODY_ARRAY_CREATE
	        || r->array_create->array_id == 0
	        || r->array_create->bytes != bytes)) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "array %s reply without the array", what);
	}
	if (rv != FFTD_OK) {
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
		free(a);
		return fftd__url_error(client, 0, rv);
	}
	a->client = client;
	a->id     = r->array_create->array_id;
	a->device = (int) r->array_create->device;
	a->bytes  = bytes;
	a->epoch  = epoch;
	fftd__wire__reply__free_unpacked(r, NULL);
	atomic_fetch_add(&client->refs, 1);
	*arrp = a;
	return FFTD_OK;
}

// fftd_array_create asks the first daemon for an array.
int
fftd_array_create(
    fftd_client *client, int device, size_t bytes, fftd_array **arrp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (client == NULL || arrp == NULL || bytes == 0 || device < -1) {
		return fftd__set_error(FFTD_EINVAL,
		    "client or arrp missing, bytes 0 or device below -1");
	}
	Fftd__Wire__Request     wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayCreate ac = FFTD__WIRE__ARRAY_CREATE__INIT;
	ac.device                  = device;
	ac.bytes                   = bytes;
	wr.body_case               = FFTD__WIRE__REQUEST__BODY_ARRAY_CREATE;
	wr.array_create            = &ac;
	return array_request(client, &wr, bytes, "create", arrp);
}

// fftd_array_open_ipc asks the first daemon to map [offset, offset +
// bytes) of the caller's CUDA allocation that handle names. The arguments
// that need no daemon are checked here; the daemon checks them again, and
// the connection, the peer and the memory.
int
fftd_array_open_ipc(fftd_client *client, int device, const void *handle,
    size_t handle_len, size_t offset, size_t bytes, fftd_array **arrp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (client == NULL || arrp == NULL || handle == NULL) {
		return fftd__set_error(
		    FFTD_EINVAL, "client, handle or arrp missing");
	}
	if (handle_len != FFTD_IPC_HANDLE_SIZE || bytes == 0 || device < -1
	    || offset > SIZE_MAX - bytes) {
		return fftd__set_error(FFTD_EINVAL,
		    "handle_len %zu (a cudaIpcMemHandle_t has %d), bytes %zu, "
		    "offset %zu, device %d: bytes must be > 0, offset + "
		    "bytes must not overflow, device >= -1",
		    handle_len, FFTD_IPC_HANDLE_SIZE, bytes, offset, device);
	}
	Fftd__Wire__Request      wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayOpenIpc oi = FFTD__WIRE__ARRAY_OPEN_IPC__INIT;
	oi.device                   = device;
	oi.handle.data              = (uint8_t *) (uintptr_t) handle;
	oi.handle.len               = handle_len;
	oi.offset                   = offset;
	oi.bytes                    = bytes;
	wr.body_case                = FFTD__WIRE__REQUEST__BODY_ARRAY_OPEN_IPC;
	wr.array_open_ipc           = &oi;
	return array_request(client, &wr, bytes, "open", arrp);
}

// fftd_array_size is the array's size in bytes.
size_t
fftd_array_size(const fftd_array *arr)
{
	return arr ? arr->bytes : 0;
}

// fftd_array_device is the array's device index.
int
fftd_array_device(const fftd_array *arr)
{
	return arr ? arr->device : -1;
}

// fftd_array_destroy releases the array in the daemon (unless its session
// is gone: then the daemon has freed it) and frees the handle.
void
fftd_array_destroy(fftd_array *arr)
{
	if (fftd__forked()) {
		free(arr); // this process's copy; no daemon call (fork.c)
		return;
	}
	if (arr == NULL) {
		return;
	}
	char keep[sizeof(fftd__last_error)];
	memcpy(keep, fftd__last_error, sizeof(keep));
	if (fftd__array_alive(arr) == FFTD_OK) {
		Fftd__Wire__Request      wr = FFTD__WIRE__REQUEST__INIT;
		Fftd__Wire__ArrayDestroy ad = FFTD__WIRE__ARRAY_DESTROY__INIT;
		ad.array_id                 = arr->id;
		wr.body_case         = FFTD__WIRE__REQUEST__BODY_ARRAY_DESTROY;
		wr.array_destroy     = &ad;
		Fftd__Wire__Reply *r = NULL;
		(void) fftd__rpc_on(arr->client, 0, &wr, &r);
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	memcpy(fftd__last_error, keep, sizeof(keep)); // a void call
	fftd__client_unref(arr->client);
	free(arr);
}

// copy_check checks a write's or read's arguments here, before anything
// is sent: the daemon checks them again.
static int
copy_check(const fftd_array *a, size_t off, const void *host, size_t len)
{
	if (a == NULL || (host == NULL && len != 0)) {
		return fftd__set_error(
		    FFTD_EINVAL, "array or host memory NULL");
	}
	if (len > a->bytes || off > a->bytes - len) {
		return fftd__set_error(FFTD_ESIZE,
		    "%zu bytes at offset %zu pass the end of the array (%zu "
		    "bytes)",
		    len, off, a->bytes);
	}
	return len == 0 ? FFTD_OK : fftd__array_alive(a);
}

// copy_one sends one write (dir 0) or read (dir 1) of [off, off + len)
// and waits: by reference into buffer bid at boff when bid is not 0, else
// with the bytes inline (a read's reply must carry exactly len).
static int
copy_one(fftd_array *a, int dir, uint64_t off, uint64_t len, uint64_t bid,
    uint64_t boff, const void *src, void *dst)
{
	Fftd__Wire__Request    wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayWrite aw = FFTD__WIRE__ARRAY_WRITE__INIT;
	Fftd__Wire__ArrayRead  ar = FFTD__WIRE__ARRAY_READ__INIT;
	if (dir == 0) {
		aw.array_id    = a->id;
		aw.offset      = off;
		aw.len         = len;
		aw.in_buffer   = bid;
		aw.in_offset   = boff;
		wr.body_case   = FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE;
		wr.array_write = &aw;
	} else {
		ar.array_id   = a->id;
		ar.offset     = off;
		ar.len        = len;
		ar.out_buffer = bid;
		ar.out_offset = boff;
		wr.body_case  = FFTD__WIRE__REQUEST__BODY_ARRAY_READ;
		wr.array_read = &ar;
	}
	Fftd__Wire__Reply *r = NULL;
	nng_msg           *m = NULL;
	fftd__frame        f;
	uint64_t           inline_len = dir == 0 && bid == 0 ? len : 0;
	int                rv
	    = fftd__rpc_payload(a->client, 0, &wr, src, inline_len, &r, &m, &f);
	if (rv != FFTD_OK) {
		return fftd__url_error(a->client, 0, rv);
	}
	uint64_t want = dir == 1 && bid == 0 ? len : 0;
	if (f.payload_len != want) {
		rv = fftd__set_error(FFTD_EPROTO,
		    "reply carries %" PRIu64 " bytes; expected %" PRIu64,
		    f.payload_len, want);
	} else if (want != 0) {
		fftd__par_memcpy(dst, f.payload, (size_t) len);
	}
	fftd__wire__reply__free_unpacked(r, NULL);
	nng_msg_free(m);
	return rv;
}

// copy_chunks moves [off, off + len) in chunks of at most ARRAY_CHUNK,
// each through a staging buffer when it is large enough and one can be
// had, else inline.
static int
copy_chunks(
    fftd_array *a, int dir, size_t off, const void *src, void *dst, size_t len)
{
	fftd_client *c = a->client;
	for (size_t done = 0; done < len;) {
		size_t       n = len - done < ARRAY_CHUNK ? len - done
		                                          : (size_t) ARRAY_CHUNK;
		fftd_buffer *st
		    = n >= c->stage_min ? fftd__stage_acquire(c, n) : NULL;
		int rv;
		if (st != NULL && dir == 0) {
			fftd__par_memcpy(
			    st->addr, (const char *) src + done, n);
		}
		rv = copy_one(a, dir, off + done, n, st ? st->id : 0, 0,
		    dir == 0 ? (const char *) src + done : NULL,
		    dir == 1 ? (char *) dst + done : NULL);
		if (rv == FFTD_OK && st != NULL && dir == 1) {
			fftd__par_memcpy((char *) dst + done, st->addr, n);
		}
		fftd__stage_release(c, st);
		if (rv != FFTD_OK) {
			return rv;
		}
		done += n;
	}
	return FFTD_OK;
}

// fftd_array_write copies host memory into the array.
int
fftd_array_write(fftd_array *arr, size_t offset, const void *src, size_t len)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	int rv = copy_check(arr, offset, src, len);
	if (rv != FFTD_OK || len == 0) {
		return rv;
	}
	uint64_t bid, boff;
	if (fftd__buffer_find(arr->client, src, len, 1, &bid, &boff)) {
		return copy_one(arr, 0, offset, len, bid, boff, NULL, NULL);
	}
	return copy_chunks(arr, 0, offset, src, NULL, len);
}

// fftd_array_read copies a span of the array into host memory.
int
fftd_array_read(fftd_array *arr, size_t offset, void *dst, size_t len)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	int rv = copy_check(arr, offset, dst, len);
	if (rv != FFTD_OK || len == 0) {
		return rv;
	}
	uint64_t bid, boff;
	if (fftd__buffer_find(arr->client, dst, len, 1, &bid, &boff)) {
		return copy_one(arr, 1, offset, len, bid, boff, NULL, NULL);
	}
	return copy_chunks(arr, 1, offset, NULL, dst, len);
}

// fftd_execute_arrays runs an execution of plan on two arrays of its
// client, in the first daemon, and waits for it.
int
fftd_execute_arrays(const fftd_plan *plan, fftd_array *in, size_t in_offset,
    fftd_array *out, size_t out_offset)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (plan == NULL || in == NULL || out == NULL) {
		return fftd__set_error(FFTD_EINVAL, "plan, in or out is NULL");
	}
	fftd_client *c = plan->client;
	if (in->client != c || out->client != c) {
		return fftd__set_error(FFTD_EINVAL,
		    "the arrays belong to another client than the plan");
	}
	int rv = fftd__array_alive(in);
	if (rv == FFTD_OK) {
		rv = fftd__array_alive(out);
	}
	if (rv != FFTD_OK) {
		return rv;
	}
	if (!fftd__ep_usable(c, plan, 0)) {
		return fftd__set_error(FFTD_ENOPLAN,
		    "the plan is not held by the arrays' daemon (%s) now",
		    c->ep[0].url);
	}
	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = plan->id[0];
	ex.in_array            = in->id;
	ex.in_offset           = in_offset;
	ex.out_array           = out->id;
	ex.out_offset          = out_offset;
	ex.tag                 = atomic_fetch_add(&c->next_tag, 1) + 1;
	wr.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	wr.execute             = &ex;
	Fftd__Wire__Reply *r   = NULL;
	rv                     = fftd__rpc_on(c, 0, &wr, &r);
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv == FFTD_OK ? rv : fftd__url_error(c, 0, rv);
}

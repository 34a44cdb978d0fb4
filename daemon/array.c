// SPDX-License-Identifier: MIT
//
// array.c — floor 2 of the NNG server (server_impl.h): resident arrays,
// device memory a client keeps in the daemon between requests (issue 16).
// ArrayCreate (checked against the client's [limits] max_arrays_per_client
// and max_array_bytes_per_client, allocated by the backend within the
// device budget), ArrayWrite and ArrayRead (bytes inline, or by reference
// in one of the client's shared buffers), ArrayDestroy, the arrays'
// references and lookups for executions (exec.c) and the bank (mf_req.c),
// and the release of a closed session's arrays. ArrayOpenIpc makes an
// array of GPU memory the client holds (a CUDA IPC handle): local ipc://
// connections only, the peer's uid checked against [limits] ipc_peers,
// mapped by the backend (ipc_open) on the worker, counted in
// max_arrays_per_client but not in the bytes (the memory is the client's),
// unmapped (ipc_close) where another array is freed. Calls reply.c, and
// buffer.c (same floor) for the shared buffers a copy names.
//
// Threads: the request handlers run on NNG's task threads; the backend's
// array calls (array_alloc, array_copy, array_free) only on the device's
// batch worker, in jobs: creates, writes and reads are client work of the
// connection's flow (fair-shared, dropped when the client goes), frees are
// control jobs (never dropped). fftd__array_unref runs on any thread.
// Locks: a session's array list and counts are under the server lock;
// refs are atomic. Jobs are posted under the server lock, so a session
// that closes either finds them queued (and drops them) or they find no
// session.

#include "server_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

enum array_op { OP_CREATE, OP_WRITE, OP_READ, OP_OPEN_IPC };

// An array request on its way to the array's device worker.
typedef struct array_job {
	fftd__job     job; // must be first
	fftd__server *srv;
	fftd__ctx    *ctx;
	uint32_t      pipe;
	enum array_op op;
	fftd__array  *a;        // write, read: one reference
	fftd__shbuf  *b;        // the shared-buffer side (one reference)
	uint64_t      off, len; // span of the array
	uint64_t      boff;     // offset in b
	nng_msg      *req;      // write inline: the request (its payload)
	const void   *payload;  // in req
	int           wi;       // create, open: the device's worker
	uint64_t      bytes;    // create: the size (open: 0, none reserved)
	uint64_t      ipc_off, ipc_len; // open: the span of the allocation
	uint8_t       handle[FFTD_IPC_HANDLE_SIZE]; // open: the IPC handle
} array_job;

// mem_release gives back an array's memory on its device's worker: frees
// what array_alloc gave, or unmaps a CUDA IPC mapping (ipc not NULL).
static void
mem_release(fftd__device *dev, void *ptr, void *ipc, uint64_t bytes)
{
	if (ipc != NULL) {
		dev->backend->ipc_close(dev, ipc);
	} else {
		dev->backend->array_free(dev, ptr, bytes);
	}
}

// held_bytes is what array a counts in its session's array_bytes: its
// size, or 0 for the client's own memory (CUDA IPC).
static uint64_t
held_bytes(const fftd__array *a)
{
	return a->ipc != NULL ? 0 : a->bytes;
}

// free_run frees an array's memory on its device's worker (the control
// job the last reference posts) and the array itself.
static void
free_run(fftd__worker *w, fftd__job *job)
{
	fftd__array  *a   = (fftd__array *) job;
	fftd__device *dev = (fftd__device *) fftd__worker_device(w);
	mem_release(dev, a->ptr, a->ipc, a->bytes);
	free(a);
}

// fftd__array_unref drops one reference; the last posts the free to the
// array's own worker (the backend's memory calls run there only).
void
fftd__array_unref(fftd__server *s, fftd__array *a)
{
	if (a == NULL || atomic_fetch_sub(&a->refs, 1) != 1) {
		return;
	}
	memset(&a->job, 0, sizeof(a->job));
	a->job.fn = free_run;
	fftd__worker_post(s->workers[a->wi], &a->job);
}

// fftd__array_touch (server_impl.h).
void
fftd__array_touch(fftd__array *a)
{
	static _Atomic uint64_t next = 1;
	if (a != NULL && a->ipc == NULL) {
		atomic_store(&a->gen, atomic_fetch_add(&next, 1));
	}
}

// fftd__array_find returns session ss's array id with one more reference,
// or NULL (server lock held).
fftd__array *
fftd__array_find(fftd__session *ss, uint64_t id)
{
	fftd__array *a = ss ? ss->arrays : NULL;
	while (a != NULL && a->id != id) {
		a = a->next;
	}
	if (a != NULL) {
		atomic_fetch_add(&a->refs, 1);
	}
	return a;
}

// fftd__array_span checks [off, off + len) against a's size and off
// against align.
int
fftd__array_span(const fftd__array *a, uint64_t off, uint64_t len,
    uint64_t align, const char *what, char *msg, size_t msglen)
{
	if (len > a->bytes || off > a->bytes - len) {
		snprintf(msg, msglen,
		    "%s: %" PRIu64 " bytes at offset %" PRIu64
		    " pass the end of array %" PRIu64 " (%" PRIu64 " bytes)",
		    what, len, off, a->id, a->bytes);
		return FFTD_ESIZE;
	}
	if (align > 1 && off % align != 0) {
		snprintf(msg, msglen,
		    "%s: offset %" PRIu64
		    " is not a multiple of the element size %" PRIu64,
		    what, off, align);
		return FFTD_EINVAL;
	}
	return FFTD_OK;
}

// fftd__array_release_all drops a closed session's references to its
// arrays; each is freed on its worker once no job uses it.
int
fftd__array_release_all(fftd__server *s, fftd__session *ss)
{
	int n = 0;
	for (fftd__array *a = ss->arrays, *next; a != NULL; a = next) {
		next = a->next;
		fftd__array_unref(s, a);
		n++;
	}
	ss->arrays      = NULL;
	ss->narrays     = 0;
	ss->array_bytes = 0;
	return n;
}

// job_free gives back what a finished or dropped job holds.
static void
job_free(array_job *aj)
{
	if (aj->req != NULL) {
		nng_msg_free(aj->req);
	}
	fftd__array_unref(aj->srv, aj->a);
	fftd__buf_unref(aj->srv, aj->b);
	free(aj);
}

// unreserve gives a create's reserved count and bytes back to its session,
// if it is still open (server lock held).
static void
unreserve(fftd__server *s, uint32_t pipe, uint64_t bytes)
{
	fftd__session *ss = fftd__session_find(s, pipe);
	if (ss != NULL) {
		ss->narrays--;
		ss->array_bytes -= bytes;
	}
}

// job_drop answers a job that will not run (worker.h): its client went
// away, or it was canceled.
static void
job_drop(fftd__worker *w, fftd__job *job, int status)
{
	(void) w;
	array_job *aj = (array_job *) job;
	fftd__ctx *c  = aj->ctx;
	if (aj->op == OP_CREATE || aj->op == OP_OPEN_IPC) {
		pthread_mutex_lock(&aj->srv->mtx);
		unreserve(aj->srv, aj->pipe, aj->bytes);
		pthread_mutex_unlock(&aj->srv->mtx);
	}
	job_free(aj);
	fftd__ctx_reply_error(c, status, "%s",
	    status == FFTD_ECLOSED ? "client went away" : "not run: canceled");
}

// create_run allocates a new array (or maps the client's memory, for an
// open) on the worker and lists it in its session, or gives the
// reservation back.
static void
create_run(array_job *aj, fftd__device *dev)
{
	fftd__server *s        = aj->srv;
	char          msg[256] = "";
	void         *ptr = NULL, *ipc = NULL;
	bool          by_ipc = aj->op == OP_OPEN_IPC;
	uint64_t      size   = by_ipc ? aj->ipc_len : aj->bytes;
	fftd__array  *a      = calloc(1, sizeof(*a));
	int           rv     = FFTD_ENOMEM;
	if (a != NULL && by_ipc) {
		rv = dev->backend->ipc_open(dev, aj->handle, sizeof(aj->handle),
		    aj->ipc_off, aj->ipc_len, &ptr, &ipc, msg, sizeof(msg));
	} else if (a != NULL) {
		rv = dev->backend->array_alloc(
		    dev, aj->bytes, &ptr, msg, sizeof(msg));
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, aj->pipe);
	if (rv == FFTD_OK && ss != NULL) {
		a->srv   = s;
		a->id    = atomic_fetch_add(&s->next_array_id, 1);
		a->pipe  = aj->pipe;
		a->wi    = aj->wi;
		a->ptr   = ptr;
		a->ipc   = ipc;
		a->bytes = size;
		fftd__array_touch(a);
		atomic_store(&a->refs, 1); // the session's
		a->next    = ss->arrays;
		ss->arrays = a;
	} else {
		unreserve(s, aj->pipe, aj->bytes);
	}
	pthread_mutex_unlock(&s->mtx);
	if (rv == FFTD_OK && ss == NULL) {
		mem_release(dev, ptr, ipc, aj->bytes);
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "client went away");
	}
	if (rv != FFTD_OK) {
		free(a);
		fftd__ctx_reply_error(aj->ctx, rv, "%s",
		    msg[0] ? msg : "daemon out of memory for an array");
		return;
	}
	Fftd__Wire__Reply            r  = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__ArrayCreateReply cr = FFTD__WIRE__ARRAY_CREATE_REPLY__INIT;
	cr.array_id                     = a->id;
	cr.device                       = (uint32_t) dev->index;
	cr.bytes                        = size;
	r.body_case                     = FFTD__WIRE__REPLY__BODY_ARRAY_CREATE;
	r.array_create                  = &cr;
	fftd__ctx_reply(aj->ctx, &r, 0, NULL);
}

// copy_run runs a write or read on the worker and answers it: a read
// whose bytes travel inline answers with them as the payload.
static void
copy_run(array_job *aj, fftd__device *dev)
{
	char       msg[256] = "";
	fftd__ctx *c        = aj->ctx;
	nng_msg   *m        = NULL;
	void      *host     = aj->b ? (char *) aj->b->addr + aj->boff : NULL;
	char      *dptr     = (char *) aj->a->ptr + aj->off;
	int        rv;
	if (aj->op == OP_WRITE) {
		rv = dev->backend->array_copy(dev, dptr,
		    host ? host : aj->payload, (size_t) aj->len, 0, msg,
		    sizeof(msg));
		fftd__array_touch(aj->a); // done (or failed part way)
		atomic_fetch_add(&aj->srv->n_bytes_in, aj->len);
	} else {
		Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
		rv                  = fftd__msg_build(
		                     &m, &r.base, host ? 0 : aj->len, host ? NULL : &host);
		if (rv != FFTD_OK) {
			snprintf(msg, sizeof(msg),
			    "daemon out of memory for a %" PRIu64 "-byte reply",
			    aj->len);
		} else {
			rv = dev->backend->array_copy(dev, host, dptr,
			    (size_t) aj->len, 1, msg, sizeof(msg));
		}
		atomic_fetch_add(&aj->srv->n_bytes_out, aj->len);
	}
	uint32_t      pipe    = aj->pipe;
	fftd__server *s       = aj->srv;
	bool          is_read = aj->op == OP_READ;
	job_free(aj);
	if (rv != FFTD_OK) {
		if (m != NULL) {
			nng_msg_free(m);
		}
		fftd__ctx_reply_error(
		    c, rv, "%s", msg[0] ? msg : fftd_strerror(rv));
	} else if (is_read) {
		fftd__reply_count(s, pipe, FFTD_OK);
		fftd__ctx_send(c, m);
	} else {
		Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
		fftd__ctx_reply(c, &r, 0, NULL);
	}
}

// job_run runs an array job on the device's worker.
static void
job_run(fftd__worker *w, fftd__job *job)
{
	array_job    *aj  = (array_job *) job;
	fftd__device *dev = (fftd__device *) fftd__worker_device(w);
	if (aj->op == OP_CREATE || aj->op == OP_OPEN_IPC) {
		create_run(aj, dev);
		free(aj);
	} else {
		copy_run(aj, dev);
	}
}

// job_post queues aj on worker wi as client work of its connection, unless
// the connection is gone (FFTD_ECLOSED). For a create or an open, it first
// reserves the array's count and bytes (none for an open) against the
// client's limits (FFTD_ELIMIT).
static int
job_post(fftd__server *s, array_job *aj, char *msg, size_t msglen)
{
	int  rv         = FFTD_OK;
	bool makes      = aj->op == OP_CREATE || aj->op == OP_OPEN_IPC;
	aj->job.fn      = job_run;
	aj->job.drop    = job_drop;
	aj->job.flow    = aj->pipe;
	aj->job.cost_ns = (aj->len + aj->bytes) / 10 + 1000; // ~10 GB/s
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss    = fftd__session_find(s, aj->pipe);
	uint64_t       limit = s->cfg.max_array_bytes_per_client;
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, msglen, "no session for this connection");
	} else if (makes && ss->narrays >= s->cfg.max_arrays_per_client) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "this connection holds %u arrays, the limit ([limits] "
		    "max_arrays_per_client)",
		    ss->narrays);
	} else if (aj->op == OP_CREATE && limit != 0
	    && (aj->bytes > limit || ss->array_bytes > limit - aj->bytes)) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "an array of %" PRIu64 " bytes; this connection's arrays "
		    "hold %" PRIu64 " of its %" PRIu64
		    " ([limits] max_array_bytes_per_client)",
		    aj->bytes, ss->array_bytes, limit);
	} else {
		if (makes) {
			ss->narrays++;
			ss->array_bytes += aj->bytes;
		}
		aj->job.weight = ss->weight;
		fftd__worker_post(s->workers[aj->wi], &aj->job);
	}
	pthread_mutex_unlock(&s->mtx);
	return rv;
}

// fftd__array_create checks an ArrayCreate (device, size, the backend's
// support) and posts the allocation to the device's worker.
void
fftd__array_create(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayCreate *ac)
{
	fftd__server *s  = c->srv;
	int           wi = ac->device == -1 ? 0 : ac->device;
	if (ac->device < -1) {
		fftd__ctx_reply_error(c, FFTD_EINVAL,
		    "device = %d: must be a device index or -1", ac->device);
		return;
	}
	if (wi >= s->nworkers) {
		fftd__ctx_reply_error(c, FFTD_ENODEVICE,
		    "device %d: no such device (this daemon serves %d)",
		    ac->device, s->nworkers);
		return;
	}
	const fftd__device *dev = fftd__worker_device(s->workers[wi]);
	if (dev->backend->array_alloc == NULL) {
		fftd__ctx_reply_error(c, FFTD_EUNSUPPORTED,
		    "the %s backend keeps no resident arrays",
		    dev->backend->name);
		return;
	}
	if (ac->bytes == 0) {
		fftd__ctx_reply_error(
		    c, FFTD_EINVAL, "bytes = 0: an array holds at least one");
		return;
	}
	array_job *aj = calloc(1, sizeof(*aj));
	if (aj == NULL) {
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	aj->srv   = s;
	aj->ctx   = c;
	aj->pipe  = pipe;
	aj->op    = OP_CREATE;
	aj->wi    = wi;
	aj->bytes = ac->bytes;
	char msg[256];
	int  rv = job_post(s, aj, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		free(aj);
		fftd__ctx_reply_error(c, rv, "%s", msg);
	}
}

// fftd__array_destroy forgets an array of the session; jobs that use it
// keep it until they end, then its worker frees it.
void
fftd__array_destroy(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayDestroy *ad)
{
	fftd__server *s = c->srv;
	fftd__array  *a = NULL;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	for (fftd__array **pp = ss ? &ss->arrays : NULL; pp && *pp;
	     pp               = &(*pp)->next) {
		if ((*pp)->id == ad->array_id) {
			a   = *pp;
			*pp = a->next;
			ss->narrays--;
			ss->array_bytes -= held_bytes(a);
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (a == NULL) {
		fftd__ctx_reply_error(c, FFTD_EINVAL,
		    "array %" PRIu64 " does not exist on this connection",
		    ad->array_id);
		return;
	}
	fftd__array_unref(s, a);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	fftd__ctx_reply(c, &r, 0, NULL);
}

// copy_prepare looks up a write's or read's array and shared buffer
// (taking references into aj) and checks the spans. Returns FFTD_OK or an
// error with msg filled (references taken stay in aj for job_free).
static int
copy_prepare(fftd__server *s, uint32_t pipe, uint64_t array_id,
    uint64_t buffer_id, uint64_t boff, array_job *aj, char *msg, size_t msglen)
{
	const char *what = aj->op == OP_WRITE ? "write" : "read";
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	aj->a             = fftd__array_find(ss, array_id);
	if (aj->op == OP_WRITE) {
		fftd__array_touch(aj->a); // posted
	}
	if (aj->a != NULL && buffer_id != 0) {
		aj->b = fftd__buf_find(ss, buffer_id);
	}
	pthread_mutex_unlock(&s->mtx);
	if (aj->a == NULL) {
		snprintf(msg, msglen,
		    "array %" PRIu64 " does not exist on this connection",
		    array_id);
		return FFTD_EINVAL;
	}
	if (buffer_id != 0 && aj->b == NULL) {
		snprintf(msg, msglen,
		    "buffer %" PRIu64 " does not exist on this connection",
		    buffer_id);
		return FFTD_EINVAL;
	}
	int rv
	    = fftd__array_span(aj->a, aj->off, aj->len, 1, what, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	if (aj->b != NULL
	    && (aj->len > aj->b->size || boff > aj->b->size - aj->len)) {
		snprintf(msg, msglen,
		    "%s: %" PRIu64 " bytes at offset %" PRIu64
		    " do not fit buffer %" PRIu64 " (%zu bytes)",
		    what, aj->len, boff, aj->b->id, aj->b->size);
		return FFTD_ESIZE;
	}
	aj->boff = boff;
	aj->wi   = aj->a->wi;
	return FFTD_OK;
}

// copy_request checks and posts a write or read whose aj has op, off and
// len set (and, for an inline write, req and payload), or answers why not.
static void
copy_request(fftd__ctx *c, uint32_t pipe, uint64_t array_id, uint64_t buffer_id,
    uint64_t boff, array_job *aj)
{
	fftd__server *s = c->srv;
	char          msg[320];
	aj->srv  = s;
	aj->ctx  = c;
	aj->pipe = pipe;
	int rv   = copy_prepare(
	      s, pipe, array_id, buffer_id, boff, aj, msg, sizeof(msg));
	if (rv == FFTD_OK && aj->op == OP_READ && aj->b == NULL) {
		pthread_mutex_lock(&s->mtx);
		uint64_t max = s->limits.max_request_bytes;
		pthread_mutex_unlock(&s->mtx);
		if (aj->len > max) {
			rv = FFTD_ELIMIT;
			snprintf(msg, sizeof(msg),
			    "read of %" PRIu64 " bytes inline; a reply carries "
			    "at most %" PRIu64 " ([limits] max_request_bytes)",
			    aj->len, max);
		}
	}
	if (rv == FFTD_OK && aj->len == 0) {
		job_free(aj); // nothing to copy
		Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
		fftd__ctx_reply(c, &r, 0, NULL);
		return;
	}
	if (rv == FFTD_OK) {
		rv = job_post(s, aj, msg, sizeof(msg));
		if (rv == FFTD_OK) {
			return;
		}
	}
	job_free(aj);
	fftd__ctx_reply_error(c, rv, "%s", msg);
}

// fftd__array_write checks an ArrayWrite (array, span, the bytes inline or
// in a shared buffer) and posts the copy; it takes req.
void
fftd__array_write(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayWrite *aw,
    nng_msg *req, const fftd__frame *f)
{
	array_job *aj = calloc(1, sizeof(*aj));
	if (aj == NULL) {
		nng_msg_free(req);
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	aj->op      = OP_WRITE;
	aj->off     = aw->offset;
	aj->len     = aw->len;
	aj->req     = req;
	aj->payload = f->payload;
	if (aw->in_buffer != 0 && f->payload_len != 0) {
		job_free(aj);
		fftd__ctx_reply_error(c, FFTD_EPROTO,
		    "array write both from a buffer and inline");
		return;
	}
	if (aw->in_buffer == 0 && f->payload_len != aw->len) {
		job_free(aj);
		fftd__ctx_reply_error(c, FFTD_ESIZE,
		    "payload is %" PRIu64 " bytes; the write says %" PRIu64,
		    f->payload_len, aw->len);
		return;
	}
	copy_request(c, pipe, aw->array_id, aw->in_buffer, aw->in_offset, aj);
}

// fftd__array_read checks an ArrayRead and posts the copy.
void
fftd__array_read(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayRead *ar)
{
	array_job *aj = calloc(1, sizeof(*aj));
	if (aj == NULL) {
		fftd__ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	aj->op  = OP_READ;
	aj->off = ar->offset;
	aj->len = ar->len;
	copy_request(c, pipe, ar->array_id, ar->out_buffer, ar->out_offset, aj);
}

// ipc_refused says why session ss may not hand over CUDA IPC handles, or
// returns 0: only over a local ipc:// connection (whose peer credentials
// the daemon knows), and, unless [limits] ipc_peers = any, only from the
// daemon's own user or root, since an IPC handle opens another process's
// GPU memory to whoever holds it (server lock held).
static int
ipc_refused(
    const fftd__server *s, const fftd__session *ss, char *msg, size_t msglen)
{
	if (ss == NULL) {
		snprintf(msg, msglen, "no session for this connection");
		return FFTD_ECLOSED;
	}
	if (!ss->ipc) {
		snprintf(msg, msglen,
		    "CUDA IPC needs a local ipc:// connection (this one has "
		    "no peer credentials: tcp or tls)");
		return FFTD_EREFUSED;
	}
	uint64_t me = (uint64_t) geteuid();
	if (!s->cfg.ipc_peers_any && ss->uid != me && ss->uid != 0) {
		snprintf(msg, msglen,
		    "CUDA IPC from uid %" PRIu64 " refused: the daemon runs as "
		    "uid %" PRIu64 " and [limits] ipc_peers = same-user",
		    ss->uid, me);
		return FFTD_EREFUSED;
	}
	return FFTD_OK;
}

// fftd__array_open_ipc checks an ArrayOpenIpc (device, handle length,
// span, the connection and its peer, the backend's support) and posts the
// mapping to the device's worker.
void
fftd__array_open_ipc(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayOpenIpc *oi)
{
	fftd__server *s  = c->srv;
	int           wi = oi->device == -1 ? 0 : oi->device;
	char          msg[256];
	int           rv = FFTD_OK;
	if (oi->device < -1) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "device = %d: must be a device index or -1", oi->device);
	} else if (wi >= s->nworkers) {
		rv = FFTD_ENODEVICE;
		snprintf(msg, sizeof(msg),
		    "device %d: no such device (this daemon serves %d)",
		    oi->device, s->nworkers);
	} else if (oi->handle.len != FFTD_IPC_HANDLE_SIZE
	    || oi->handle.data == NULL) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "an IPC handle of %zu bytes; a cudaIpcMemHandle_t has %d",
		    oi->handle.len, FFTD_IPC_HANDLE_SIZE);
	} else if (oi->bytes == 0) {
		rv = FFTD_EINVAL;
		snprintf(
		    msg, sizeof(msg), "bytes = 0: an array holds at least one");
	} else if (oi->offset > UINT64_MAX - oi->bytes) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "offset %" PRIu64 " + bytes %" PRIu64 " overflows",
		    oi->offset, oi->bytes);
	}
	if (rv == FFTD_OK) {
		pthread_mutex_lock(&s->mtx);
		rv = ipc_refused(
		    s, fftd__session_find(s, pipe), msg, sizeof(msg));
		pthread_mutex_unlock(&s->mtx);
	}
	if (rv == FFTD_OK) {
		const fftd__device *dev = fftd__worker_device(s->workers[wi]);
		if (dev->backend->ipc_open == NULL) {
			rv = FFTD_EUNSUPPORTED;
			snprintf(msg, sizeof(msg),
			    "the %s backend maps no CUDA IPC memory",
			    dev->backend->name);
		}
	}
	array_job *aj = rv == FFTD_OK ? calloc(1, sizeof(*aj)) : NULL;
	if (rv == FFTD_OK && aj == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg), "daemon out of memory");
	}
	if (rv == FFTD_OK) {
		aj->srv     = s;
		aj->ctx     = c;
		aj->pipe    = pipe;
		aj->op      = OP_OPEN_IPC;
		aj->wi      = wi;
		aj->ipc_off = oi->offset;
		aj->ipc_len = oi->bytes;
		memcpy(aj->handle, oi->handle.data, sizeof(aj->handle));
		rv = job_post(s, aj, msg, sizeof(msg));
		if (rv != FFTD_OK) {
			free(aj);
		}
	}
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(c, rv, "%s", msg);
	}
}

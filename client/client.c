// SPDX-License-Identifier: MIT
//
// client.c — libfftd: the client side of the fftd protocol.
//
// One NNG REQ socket per daemon the client talks to (one, or a list: see
// fftd_client_open); every call opens its own NNG context, so any number of
// threads and asynchronous executions share a connection with several
// requests in flight. REQ's automatic resend is turned off: a request is
// never executed twice behind the caller's back.
//
// Several daemons: NNG's REQ socket could spread requests over several
// dialers itself, but a plan id means something only on the connection
// (daemon session) that made it, so each daemon gets a socket of its own
// (an endpoint), plans are made on each, and the library picks the
// endpoint of each execution.

#include "fftd.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "clock.h"
#include "dial.h"
#include "fftd.pb-c.h"
#include "layout.h"
#include "wire.h"

#define DEFAULT_TIMEOUT_MS 60000
#define SYSTEM_URL "ipc:///run/fftd/fftd.sock"

// A client is freed when it is closed and its last plan is destroyed:
// fftd.h lets plans be destroyed after their client was closed.
struct fftd_buffer {
	fftd_client *client;
	uint64_t     id;
	void        *addr;
	size_t       size;
	fftd_buffer *next;
	bool         busy; // staging buffers only: lent to a request
};

// Inline executions of at least STAGE_MIN_BYTES over ipc:// go through a
// pool of shared buffers instead of the socket: NNG's ipc transport moves a
// large message ~200 KiB per system call with thread hand-offs between
// them (about 0.5-1 GB/s), and the daemon's NNG threads, which also carry
// every realtime request, are busy for all of it; a copy into shared
// memory runs at memcpy speed and the daemon then DMAs from it. Below
// 64 KiB a message is one write and staging saves nothing. At most
// STAGE_POOL_MAX idle buffers are kept. FFTD_INLINE_STAGING in the
// environment: 0 turns staging off, a byte count sets the threshold.
#define STAGE_MIN_BYTES ((uint64_t) 64 << 10)
#define STAGE_POOL_MAX 4

// ep_link is the part of an endpoint that NNG's pipe callbacks update. It
// lives until nng_close of its socket has returned (socket_closer), since
// a callback may run while the socket closes, after the client is gone.
// With one dialer a socket has at most one pipe at a time; each new one is
// a new daemon session, which holds none of the plans of the one before.
typedef struct ep_link {
	_Atomic uint32_t pipe;   // the connected pipe's id; 0: none now
	_Atomic uint64_t epoch;  // pipes connected so far: names the session
	_Atomic uint64_t broken; // a session seen to drop a request
	// The client, for ep_dropped; cleared before the client goes.
	pthread_mutex_t     mtx;
	struct fftd_client *client; // under mtx
	int                 index;  // of the endpoint in the client
} ep_link;

// endpoint is one daemon of the client's URL list.
typedef struct endpoint {
	nng_socket sock;
	bool       open; // sock is open
	char      *url;
	ep_link   *link;
	uint32_t   limit;     // the daemon's max_inflight_per_client (0: none)
	int        ninflight; // under the client's mtx: executions in flight
} endpoint;

struct fftd_client {
	endpoint     ep[FFTD_MAX_DAEMONS];
	int          nep; // 1, or the length of the URL list
	int          rr;  // under mtx: where the next tie-breaking scan starts
	bool         ipc; // one daemon, over ipc://: shared memory possible
	fftd_buffer *buffers;     // under mtx
	fftd_buffer *staging;     // under mtx: the inline staging pool
	bool         staging_off; // not ipc, refused once, or turned off
	uint64_t     stage_min;   // inline arrays of this many bytes are staged
	nng_duration timeout;
	fftd_info    info;
	_Atomic int  refs; // 1 for the open client + 1 per plan
	_Atomic bool closed;
	// Executions in flight, so close can cancel them and wait for their
	// callbacks before the socket goes (NNG must not tear a socket down
	// under callbacks that still close its contexts).
	pthread_mutex_t      mtx;
	pthread_cond_t       idle;
	pthread_cond_t       slot; // signalled whenever one completes
	struct fftd_request *inflight;
	int                  ninflight;
	_Atomic uint64_t     next_tag;
};

struct fftd_plan {
	fftd_client *client;
	fftd__shape  shape;
	char         algorithm[16]; // as the first daemon that holds it says
	// Per endpoint: the plan's id there, and the session (ep_link.epoch)
	// that made it; epoch 0: the plan is not held there.
	uint64_t id[FFTD_MAX_DAEMONS];
	uint64_t epoch[FFTD_MAX_DAEMONS];
};

enum req_state { REQ_SEND, REQ_RECV, REQ_DONE };

struct fftd_request {
	fftd_client     *client;
	const fftd_plan *plan;
	void            *out;
	fftd_callback    cb;
	void            *data;
	nng_ctx          ctx;
	nng_aio         *aio;
	int              ep;         // the endpoint it was sent to
	uint64_t         epoch;      // that endpoint's session when sent
	_Atomic bool     sent;       // handed to a connection
	bool             out_shared; // the daemon writes out itself
	fftd_buffer     *stage;      // staging buffer lent to this request
	uint64_t         stage_out;  // offset of the output in it
	fftd_request    *next_inflight, *prev_inflight;
	uint64_t         tag; // names it for cancellation
	enum req_state   state;
	int              status;
	char             message[512];
	pthread_mutex_t  mtx;
	pthread_cond_t   cv;
};

static _Thread_local char last_error[512];

// How long fftd_client_close lets executions in flight finish before it
// cancels them, and how long it waits for NNG to tear the socket down.
#define CLOSE_DRAIN_MAX_MS 10000
#define CLOSE_SOCKET_MAX_MS 2000

typedef struct socket_closer socket_closer;
static socket_closer        *closer_start(nng_socket sock, ep_link *link);
static void closer_wait(socket_closer *sc, const struct timespec *until);
static struct timespec deadline_after(long ms);

// Set while a completion callback runs on a library I/O thread: such a
// thread must never wait for a free in-flight slot (the slot may need the
// very thread to complete).
static _Thread_local bool in_callback;

static void         stage_release(fftd_client *c, fftd_buffer *b);
static fftd_buffer *stage_acquire(fftd_client *c, uint64_t bytes);
static void         buffer_release(fftd_client *c, fftd_buffer *buf);
static void         par_memcpy(void *dst, const void *src, size_t n);

static int set_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
set_error(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

const char *
fftd_last_error(void)
{
	return last_error;
}

const char *
fftd_version(void)
{
	static char v[32];
	snprintf(v, sizeof(v), "%d.%d.%d", FFTD_VERSION_MAJOR,
	    FFTD_VERSION_MINOR, FFTD_VERSION_PATCH);
	return v;
}

static int
map_nng(int rv)
{
	switch (rv) {
	case 0:
		return FFTD_OK;
	case NNG_ETIMEDOUT:
		return FFTD_ETIMEDOUT;
	case NNG_ECLOSED:
	case NNG_ECONNRESET:
	case NNG_ECONNSHUT:
	case NNG_ECANCELED:
		return FFTD_ECLOSED;
	case NNG_ECONNREFUSED:
	case NNG_ENOENT:
	case NNG_EADDRINVAL:
		return FFTD_ECONNREFUSED;
	case NNG_ENOMEM:
		return FFTD_ENOMEM;
	default:
		return FFTD_ENNGERR + rv;
	}
}

int
fftd_plan_desc_init(fftd_plan_desc *desc, int rank, const int64_t *n,
    fftd_kind kind, fftd_precision precision)
{
	if (desc == NULL || n == NULL || rank < 1 || rank > FFTD_MAX_RANK) {
		return set_error(
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
	return FFTD_OK;
}

int
fftd_default_url(char *buf, size_t len)
{
	const char *env = getenv("FFTD_URL");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int         n;
	if (env != NULL && env[0] != '\0') {
		n = snprintf(buf, len, "%s", env);
	} else if (access("/run/fftd/fftd.sock", F_OK) == 0 || xdg == NULL
	    || xdg[0] == '\0') {
		n = snprintf(buf, len, "%s", SYSTEM_URL);
	} else {
		n = snprintf(buf, len, "ipc://%s/fftd.sock", xdg);
	}
	if (n < 0 || (size_t) n >= len) {
		return set_error(FFTD_ELIMIT, "default URL does not fit");
	}
	return FFTD_OK;
}

// --- one round trip
// ------------------------------------------------------------

// decode_reply parses a reply message; on success *rp is the unpacked
// reply (status may be an error, whose message becomes the last error).
static int
decode_reply(nng_msg *m, Fftd__Wire__Reply **rp, fftd__frame *f)
{
	int rv = fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), f);
	if (rv != FFTD_OK) {
		return set_error(rv, "malformed reply frame from the daemon");
	}
	*rp = fftd__wire__reply__unpack(NULL, f->pb_len, f->pb);
	if (*rp == NULL) {
		return set_error(FFTD_EPROTO, "reply does not decode");
	}
	if ((*rp)->status != FFTD_OK) {
		set_error((*rp)->status, "%s", (*rp)->message);
	}
	return FFTD_OK;
}

// rpc_call is one request-reply exchange under way (rpc_start, then
// rpc_finish), so that several daemons can be asked at once.
typedef struct rpc_call {
	nng_ctx  ctx;
	nng_aio *aio;
	int      rv;       // an error rpc_start met: rpc_finish returns it
	char     msg[256]; // with this message
} rpc_call;

// rpc_start sends req (no payload) to endpoint i without waiting.
static void
rpc_start(fftd_client *c, int i, const Fftd__Wire__Request *req, rpc_call *call)
{
	nng_msg *m;
	call->aio = NULL;
	call->rv  = fftd__msg_build(&m, &req->base, 0, NULL);
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
		call->rv = map_nng(rv);
		snprintf(call->msg, sizeof(call->msg), "%s", nng_strerror(rv));
		return;
	}
	nng_aio_set_timeout(call->aio, c->timeout);
	nng_aio_set_msg(call->aio, m);
	nng_ctx_send(call->ctx, call->aio);
}

// rpc_finish waits for the reply of a call rpc_start made, which the
// caller frees with fftd__wire__reply__free_unpacked. Returns the
// transport or decoding error, else the reply's own status.
static int
rpc_finish(rpc_call *call, Fftd__Wire__Reply **rp)
{
	int rv;
	if (call->rv != FFTD_OK) {
		return set_error(call->rv, "%s", call->msg);
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
		rv            = decode_reply(m, rp, &f);
		nng_msg_free(m);
		nng_ctx_close(call->ctx);
		nng_aio_free(call->aio);
		if (rv != FFTD_OK) {
			return rv;
		}
		if (f.payload_len != 0) {
			fftd__wire__reply__free_unpacked(*rp, NULL);
			*rp = NULL;
			return set_error(
			    FFTD_EPROTO, "unexpected payload in reply");
		}
		return (*rp)->status;
	}
done:
	nng_ctx_close(call->ctx);
	nng_aio_free(call->aio);
	return set_error(
	    map_nng(rv), "no answer from the daemon: %s", nng_strerror(rv));
}

// rpc_on sends req (no payload) to endpoint i and waits for the reply (see
// rpc_finish).
static int
rpc_on(fftd_client *c, int i, const Fftd__Wire__Request *req,
    Fftd__Wire__Reply **rp)
{
	rpc_call call;
	rpc_start(c, i, req, &call);
	return rpc_finish(&call, rp);
}

// rpc is rpc_on the first endpoint: what a client of several daemons asks
// only one of them (ping, statistics, buffers: see fftd_client_open).
static int
rpc(fftd_client *c, const Fftd__Wire__Request *req, Fftd__Wire__Reply **rp)
{
	return rpc_on(c, 0, req, rp);
}

// prefix_url puts "url: " before the message in buf (len bytes), which
// keeps what fits.
static void
prefix_url(char *buf, size_t len, const char *url)
{
	size_t u = strlen(url) + 2;
	if (u >= len) {
		return;
	}
	size_t m = strnlen(buf, len - 1);
	if (m > len - 1 - u) {
		m = len - 1 - u;
	}
	memmove(buf + u, buf, m);
	memcpy(buf, url, u - 2);
	buf[u - 2] = ':';
	buf[u - 1] = ' ';
	buf[u + m] = '\0';
}

// url_error puts endpoint i's URL before the calling thread's last error,
// on a client of several daemons, and returns code.
static int
url_error(const fftd_client *c, int i, int code)
{
	if (c->nep > 1) {
		prefix_url(last_error, sizeof(last_error), c->ep[i].url);
	}
	return code;
}

// --- client
// ----------------------------------------------------------------------

static void
copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void
fill_info(fftd_info *info, const Fftd__Wire__HelloReply *h)
{
	memset(info, 0, sizeof(*info));
	info->protocol_version = h->protocol_version;
	copy_str(info->server_version, sizeof(info->server_version),
	    h->server_version);
	copy_str(info->backend, sizeof(info->backend), h->backend);
	for (size_t i = 0; i < h->n_devices && i < FFTD_MAX_DEVICES; i++) {
		fftd_device_info *d = &info->devices[info->ndevices++];
		d->index            = (int) h->devices[i]->index;
		copy_str(d->name, sizeof(d->name), h->devices[i]->name);
		copy_str(
		    d->backend, sizeof(d->backend), h->devices[i]->backend);
		d->memory_bytes = h->devices[i]->memory_bytes;
	}
	for (size_t i = 0; i < h->n_algorithms && i < FFTD_MAX_ALGORITHMS;
	     i++) {
		copy_str(info->algorithms[info->nalgorithms++], 16,
		    h->algorithms[i]);
	}
	for (size_t i = 0; i < h->n_precisions; i++) {
		if (h->precisions[i] >= 0 && h->precisions[i] < 32) {
			info->precisions |= 1u << h->precisions[i];
		}
	}
	if (h->limits != NULL) {
		info->max_request_bytes    = h->limits->max_request_bytes;
		info->max_rank             = h->limits->max_rank;
		info->max_batch            = h->limits->max_batch;
		info->max_plans_per_client = h->limits->max_plans_per_client;
		info->max_inflight_per_client
		    = h->limits->max_inflight_per_client;
		info->max_queued_bytes_per_client
		    = h->limits->max_queued_bytes_per_client;
	}
}

// min_limit is the smaller of two daemon limits, 0 meaning none.
static uint64_t
min_limit(uint64_t a, uint64_t b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

// merge_info folds daemon info o into *info, the first daemon's: the
// smallest limits, and the precisions and algorithms every daemon serves.
static void
merge_info(fftd_info *info, const fftd_info *o)
{
	info->max_request_bytes
	    = min_limit(info->max_request_bytes, o->max_request_bytes);
	info->max_rank  = (uint32_t) min_limit(info->max_rank, o->max_rank);
	info->max_batch = min_limit(info->max_batch, o->max_batch);
	info->max_plans_per_client = (uint32_t) min_limit(
	    info->max_plans_per_client, o->max_plans_per_client);
	info->max_inflight_per_client = (uint32_t) min_limit(
	    info->max_inflight_per_client, o->max_inflight_per_client);
	info->max_queued_bytes_per_client = min_limit(
	    info->max_queued_bytes_per_client, o->max_queued_bytes_per_client);
	info->precisions &= o->precisions;
	int kept = 0;
	for (int a = 0; a < info->nalgorithms; a++) {
		bool both = false;
		for (int b = 0; b < o->nalgorithms && !both; b++) {
			both = strcmp(info->algorithms[a], o->algorithms[b])
			    == 0;
		}
		if (both) {
			memmove(info->algorithms[kept++], info->algorithms[a],
			    sizeof(info->algorithms[a]));
		}
	}
	for (int a = kept; a < info->nalgorithms; a++) {
		memset(info->algorithms[a], 0, sizeof(info->algorithms[a]));
	}
	info->nalgorithms = kept;
}

// parse_urls splits list at its commas into at most FFTD_MAX_DAEMONS URLs,
// each without the blanks around it, malloc'd into urls[0 .. *n - 1].
static int
parse_urls(const char *list, char **urls, int *n)
{
	int         rv = FFTD_OK;
	const char *p  = list;
	*n             = 0;
	for (int k = 1;; k++) {
		const char *comma = strchr(p, ',');
		size_t      len   = comma ? (size_t) (comma - p) : strlen(p);
		while (len > 0 && isspace((unsigned char) *p)) {
			p++;
			len--;
		}
		while (len > 0 && isspace((unsigned char) p[len - 1])) {
			len--;
		}
		if (len == 0) {
			rv = set_error(FFTD_EINVAL,
			    "URL %d of \"%s\" is empty (a list of daemons is "
			    "URLs separated by commas)",
			    k, list);
			break;
		}
		if (*n == FFTD_MAX_DAEMONS) {
			rv = set_error(FFTD_EINVAL,
			    "more than %d URLs in \"%s\" (FFTD_MAX_DAEMONS)",
			    FFTD_MAX_DAEMONS, list);
			break;
		}
		if ((urls[*n] = strndup(p, len)) == NULL) {
			rv = set_error(FFTD_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
		if (comma == NULL) {
			return FFTD_OK;
		}
		p = comma + 1;
	}
	while (*n > 0) {
		free(urls[--*n]);
	}
	return rv;
}

static void
link_free(ep_link *l)
{
	if (l != NULL) {
		pthread_mutex_destroy(&l->mtx);
		free(l);
	}
}

// ep_dropped fails at once, on a client of several daemons, the executions
// for endpoint i's session epoch that still wait in NNG's queue for its
// connection, which just dropped: they were never sent, so nothing runs
// twice, and NNG would otherwise hold them until the timeout (or send
// them on the next connection, whose session lacks their plan). What was
// sent fails by itself (NNG_ECONNRESET). A client of one daemon keeps
// NNG's way: wait for the connection to come back.
static void
ep_dropped(fftd_client *c, int i, uint64_t epoch)
{
	if (c->nep == 1) {
		return;
	}
	pthread_mutex_lock(&c->mtx);
	for (fftd_request *r = c->inflight; r != NULL; r = r->next_inflight) {
		if (r->ep == i && r->epoch == epoch && !atomic_load(&r->sent)) {
			nng_aio_cancel(r->aio); // "request not sent"
		}
	}
	pthread_mutex_unlock(&c->mtx);
}

// on_pipe follows endpoint's connection (NNG pipe callback).
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	ep_link *l  = arg;
	uint32_t id = (uint32_t) nng_pipe_id(p);
	if (ev == NNG_PIPE_EV_ADD_POST) {
		atomic_fetch_add(&l->epoch, 1); // before pipe: see ep_usable
		atomic_store(&l->pipe, id);
		return;
	}
	uint64_t epoch = atomic_load(&l->epoch);
	if (atomic_compare_exchange_strong(&l->pipe, &id, 0)) {
		pthread_mutex_lock(&l->mtx);
		if (l->client != NULL) {
			ep_dropped(l->client, l->index, epoch);
		}
		pthread_mutex_unlock(&l->mtx);
	}
}

// ep_open connects endpoint i (its url set) and says hello, filling *info.
static int
ep_open(fftd_client *c, int i, fftd_info *info)
{
	endpoint *e = &c->ep[i];
	int       rv;
	if ((e->link = calloc(1, sizeof(*e->link))) == NULL) {
		return set_error(FFTD_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&e->link->mtx, NULL);
	e->link->client = c;
	e->link->index  = i;
	if ((rv = nng_req0_open(&e->sock)) != 0) {
		return set_error(
		    map_nng(rv), "cannot open a socket: %s", nng_strerror(rv));
	}
	e->open = true;
	// Never resend: an execute must not run twice unasked.
	nng_socket_set_ms(
	    e->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	// Replies carry whole transforms; the daemon bounds their size.
	nng_socket_set_size(e->sock, NNG_OPT_RECVMAXSZ, 0);
	// Before dialing: nng_dial returns after the first pipe's ADD_POST.
	nng_pipe_notify(e->sock, NNG_PIPE_EV_ADD_POST, on_pipe, e->link);
	nng_pipe_notify(e->sock, NNG_PIPE_EV_REM_POST, on_pipe, e->link);
	char dmsg[512] = "";
	if ((rv = fftd__client_dial(e->sock, e->url, dmsg, sizeof(dmsg)))
	    != 0) {
		return set_error(rv, "cannot connect to %s: %s", e->url, dmsg);
	}
	Fftd__Wire__Request req   = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Hello   hello = FFTD__WIRE__HELLO__INIT;
	hello.protocol_version    = FFTD_PROTOCOL_VERSION;
	// The program's name, so that stats and logs say who is who.
	hello.client_name    = program_invocation_short_name;
	hello.pid            = (uint32_t) getpid();
	req.body_case        = FFTD__WIRE__REQUEST__BODY_HELLO;
	req.hello            = &hello;
	Fftd__Wire__Reply *r = NULL;
	rv                   = rpc_on(c, i, &req, &r);
	if (rv == FFTD_OK
	    && (r->body_case != FFTD__WIRE__REPLY__BODY_HELLO
	        || r->hello == NULL)) {
		rv = set_error(
		    FFTD_EPROTO, "daemon answered hello with no hello");
	}
	if (rv == FFTD_OK) {
		fill_info(info, r->hello);
		e->limit = info->max_inflight_per_client;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv == FFTD_OK ? rv : url_error(c, i, rv);
}

// client_free frees a client whose sockets are closed (or never opened).
static void
client_free(fftd_client *c)
{
	for (int i = 0; i < c->nep; i++) {
		free(c->ep[i].url);
	}
	pthread_mutex_destroy(&c->mtx);
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->slot);
	free(c);
}

// stage_setting reads FFTD_INLINE_STAGING: unset or empty keeps *min
// (STAGE_MIN_BYTES), "0" turns staging off (false), a positive byte count
// replaces *min. Anything else is ignored, as a typo must not turn off a
// data path.
static bool
stage_setting(uint64_t *min)
{
	const char *v = getenv("FFTD_INLINE_STAGING");
	if (v == NULL || v[0] == '\0') {
		return true;
	}
	char              *end;
	unsigned long long n;
	errno = 0;
	n     = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || v[0] == '-') {
		return true;
	}
	if (n == 0) {
		return false;
	}
	*min = n;
	return true;
}

int
fftd_client_open(fftd_client **clientp, const char *url, int timeout_ms)
{
	char  defurl[4096]; // $FFTD_URL may be a list
	char *urls[FFTD_MAX_DAEMONS];
	int   n, rv;
	if (clientp == NULL) {
		return set_error(FFTD_EINVAL, "clientp is NULL");
	}
	if (url == NULL) {
		if ((rv = fftd_default_url(defurl, sizeof(defurl)))
		    != FFTD_OK) {
			return rv;
		}
		url = defurl;
	}
	if ((rv = parse_urls(url, urls, &n)) != FFTD_OK) {
		return rv;
	}
	fftd_client *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		while (n > 0) {
			free(urls[--n]);
		}
		return set_error(FFTD_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&c->mtx, NULL);
	pthread_condattr_t ca; // fftd_client_close waits on it with a deadline
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->idle, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->slot, NULL);
	c->nep = n;
	for (int i = 0; i < n; i++) {
		c->ep[i].url = urls[i];
	}
	c->timeout = timeout_ms == 0 ? DEFAULT_TIMEOUT_MS
	    : timeout_ms < 0         ? NNG_DURATION_INFINITE
	                             : timeout_ms;
	// Shared memory (buffers, streams, inline staging) needs the one
	// daemon to be local.
	c->ipc         = n == 1 && strncmp(urls[0], "ipc://", 6) == 0;
	c->stage_min   = STAGE_MIN_BYTES;
	c->staging_off = !c->ipc || !stage_setting(&c->stage_min);
	for (int i = 0; i < n && rv == FFTD_OK; i++) {
		fftd_info info;
		rv = ep_open(c, i, i == 0 ? &c->info : &info);
		if (rv == FFTD_OK && i > 0) {
			merge_info(&c->info, &info);
		}
	}
	if (rv != FFTD_OK) {
		// A daemon that hung up during the hello (refused by its
		// allow-list, say) can leave NNG 1.5's close hanging as well:
		// bounded, as in fftd_client_close (socket_closer).
		socket_closer  *sc[FFTD_MAX_DAEMONS];
		struct timespec until = deadline_after(CLOSE_SOCKET_MAX_MS);
		for (int i = 0; i < n; i++) {
			sc[i] = NULL;
			if (c->ep[i].link != NULL) {
				pthread_mutex_lock(&c->ep[i].link->mtx);
				c->ep[i].link->client = NULL;
				pthread_mutex_unlock(&c->ep[i].link->mtx);
			}
			if (c->ep[i].open) {
				sc[i] = closer_start(
				    c->ep[i].sock, c->ep[i].link);
			} else {
				link_free(c->ep[i].link);
			}
			c->ep[i].link = NULL;
		}
		for (int i = 0; i < n; i++) {
			closer_wait(sc[i], &until);
		}
		client_free(c);
		return rv;
	}
	c->info.ndaemons = n;
	atomic_store(&c->refs, 1);
	*clientp = c;
	return FFTD_OK;
}

static void
client_unref(fftd_client *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		client_free(c);
	}
}

static struct timespec
deadline_after(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

// socket_closer runs nng_close on a thread of its own, so that the caller
// can stop waiting: NNG 1.5 (Debian 12's) can hang in nng_close when the
// socket is closed in the middle of a partial read or write of a large
// message on an ipc pipe (its transport resubmits the transfer on an aio
// that close has already stopped, and the pipe reaper then waits for it
// forever). fftd_client_close avoids that state by draining first; this is
// the bound for what it cannot avoid (a reply to a timed-out request still
// arriving). Freed by whichever side finishes last. It also frees the
// socket's ep_link once nng_close has returned (no pipe callback can run
// after that).
struct socket_closer {
	nng_socket      sock;
	ep_link        *link;
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	bool            done;
	int             refs;
};

static void
socket_closer_unref(socket_closer *sc)
{
	pthread_mutex_lock(&sc->mtx);
	int left = --sc->refs;
	pthread_mutex_unlock(&sc->mtx);
	if (left == 0) {
		pthread_mutex_destroy(&sc->mtx);
		pthread_cond_destroy(&sc->cv);
		free(sc);
	}
}

static void *
socket_closer_main(void *arg)
{
	socket_closer *sc = arg;
	nng_close(sc->sock);
	link_free(sc->link);
	pthread_mutex_lock(&sc->mtx);
	sc->done = true;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mtx);
	socket_closer_unref(sc);
	return NULL;
}

// closer_start starts closing sock (then freeing link) on a thread of its
// own; closer_wait waits for it until the deadline. NULL: closed already.
static socket_closer *
closer_start(nng_socket sock, ep_link *link)
{
	socket_closer *sc = calloc(1, sizeof(*sc));
	pthread_t      t;
	if (sc == NULL) {
		nng_close(sock);
		link_free(link);
		return NULL;
	}
	sc->sock = sock;
	sc->link = link;
	sc->refs = 2;
	pthread_mutex_init(&sc->mtx, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sc->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t, NULL, socket_closer_main, sc) != 0) {
		sc->refs = 1;
		socket_closer_unref(sc);
		nng_close(sock);
		link_free(link);
		return NULL;
	}
	pthread_detach(t);
	return sc;
}

static void
closer_wait(socket_closer *sc, const struct timespec *until)
{
	if (sc == NULL) {
		return;
	}
	pthread_mutex_lock(&sc->mtx);
	while (!sc->done
	    && pthread_cond_timedwait(&sc->cv, &sc->mtx, until) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&sc->mtx);
	socket_closer_unref(sc);
}

void
fftd_client_close(fftd_client *client)
{
	if (client == NULL) {
		return;
	}
	atomic_store(&client->closed, true); // new executions: FFTD_ECLOSED
	// Let what is in flight finish: cancelling leaves its request or reply
	// half-written on the pipe, the state in which nng_close can hang
	// (socket_closer). The daemon answers every request it took.
	long drain = client->timeout < 0 || client->timeout > CLOSE_DRAIN_MAX_MS
	    ? CLOSE_DRAIN_MAX_MS
	    : (long) client->timeout;
	struct timespec until = deadline_after(drain);
	pthread_mutex_lock(&client->mtx);
	pthread_cond_broadcast(&client->slot); // no one waits for a slot now
	while (client->ninflight > 0
	    && pthread_cond_timedwait(&client->idle, &client->mtx, &until)
	        != ETIMEDOUT) { }
	for (fftd_request *r = client->inflight; r != NULL;
	     r               = r->next_inflight) {
		nng_aio_cancel(r->aio); // completes it with FFTD_ECLOSED
	}
	while (client->ninflight > 0) {
		pthread_cond_wait(&client->idle, &client->mtx);
	}
	fftd_buffer *stage = client->staging;
	client->staging    = NULL;
	pthread_mutex_unlock(&client->mtx);
	while (stage != NULL) { // the daemon frees its side with the session
		fftd_buffer *next = stage->next;
		buffer_release(client, stage);
		stage = next;
	}
	// All the sockets at once, each bounded as one (socket_closer).
	socket_closer *sc[FFTD_MAX_DAEMONS];
	for (int i = 0; i < client->nep; i++) {
		pthread_mutex_lock(&client->ep[i].link->mtx);
		client->ep[i].link->client = NULL; // it is going
		pthread_mutex_unlock(&client->ep[i].link->mtx);
	}
	for (int i = 0; i < client->nep; i++) {
		sc[i] = closer_start(client->ep[i].sock, client->ep[i].link);
		client->ep[i].link = NULL;
	}
	until = deadline_after(CLOSE_SOCKET_MAX_MS);
	for (int i = 0; i < client->nep; i++) {
		closer_wait(sc[i], &until);
	}
	client_unref(client);
}

int
fftd_client_info(fftd_client *client, fftd_info *info)
{
	if (client == NULL || info == NULL) {
		return set_error(FFTD_EINVAL, "client or info is NULL");
	}
	*info = client->info;
	return FFTD_OK;
}

int
fftd_ping(fftd_client *client, double *rtt_us)
{
	if (client == NULL) {
		return set_error(FFTD_EINVAL, "client is NULL");
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Fftd__Wire__Request req  = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    ping = FFTD__WIRE__PING__INIT;
	ping.token               = (uint64_t) t0.tv_nsec;
	req.body_case            = FFTD__WIRE__REQUEST__BODY_PING;
	req.ping                 = &ping;
	Fftd__Wire__Reply *r     = NULL;
	int                rv    = rpc(client, &req, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rv == FFTD_OK
	    && (r->body_case != FFTD__WIRE__REPLY__BODY_PING
	        || r->ping->token != ping.token)) {
		rv = set_error(
		    FFTD_EPROTO, "ping answered with the wrong token");
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	if (rv == FFTD_OK && rtt_us != NULL) {
		*rtt_us = (double) (t1.tv_sec - t0.tv_sec) * 1e6
		    + (double) (t1.tv_nsec - t0.tv_nsec) / 1e3;
	}
	return rv;
}

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
	int rv                       = rpc(client, &req, rp);
	if (rv == FFTD_OK
	    && (*rp)->body_case != FFTD__WIRE__REPLY__BODY_STATS) {
		rv = set_error(FFTD_EPROTO, "stats answered without stats");
	}
	return rv;
}

int
fftd_get_stats(fftd_client *client, fftd_stats *st)
{
	if (client == NULL || st == NULL) {
		return set_error(FFTD_EINVAL, "client or stats is NULL");
	}
	Fftd__Wire__Reply *r  = NULL;
	int                rv = stats_rpc(client, 0, &r);
	if (rv == FFTD_OK) {
		fftd__stats_from_wire(st, r->stats);
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
// the last client id it has, while the daemon says more follow.
static int
stats_list(fftd_client *client, void *out, int max, int *n, bool devices)
{
	if (client == NULL || n == NULL || max < 0
	    || (out == NULL && max > 0)) {
		return set_error(FFTD_EINVAL, "client, out or n is NULL");
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
			} else if (devices) {
				fftd__device_stats_from_wire(
				    (fftd_device_stats *) out + total,
				    ws->devices[i]);
			} else {
				fftd__client_stats_from_wire(
				    (fftd_client_stats *) out + total,
				    ws->clients[i]);
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

int
fftd_get_client_stats(
    fftd_client *client, fftd_client_stats *out, int max, int *n)
{
	return stats_list(client, out, max, n, false);
}

int
fftd_get_device_stats(
    fftd_client *client, fftd_device_stats *out, int max, int *n)
{
	return stats_list(client, out, max, n, true);
}

// --- plans
// ------------------------------------------------------------------------

// ep_usable says whether executions of plan p may go to endpoint i. With
// one daemon, always (as ever: while the connection is down, NNG waits for
// it to come back, up to the timeout, and a new session answers
// FFTD_ENOPLAN). With several, only while the session that made the plan
// there is connected and has not been seen to drop a request.
static bool
ep_usable(const fftd_client *c, const fftd_plan *p, int i)
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
	rpc_call                call[FFTD_MAX_DAEMONS];
	bool                    sent[FFTD_MAX_DAEMONS] = { false };
	char                    keep[sizeof(last_error)];
	memcpy(keep, last_error, sizeof(keep)); // not the caller's error
	for (int i = 0; i < c->nep; i++) {
		if (!(mask & (1u << i)) || !ep_usable(c, p, i)) {
			continue; // a session that is gone took its plans along
		}
		fftd__wire__request__init(&req[i]);
		fftd__wire__plan_destroy__init(&pd[i]);
		pd[i].plan_id       = p->id[i];
		req[i].body_case    = FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY;
		req[i].plan_destroy = &pd[i];
		rpc_start(c, i, &req[i], &call[i]);
		sent[i] = true;
	}
	for (int i = 0; i < c->nep; i++) {
		Fftd__Wire__Reply *r = NULL;
		if (sent[i]) {
			(void) rpc_finish(&call[i], &r);
		}
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	memcpy(last_error, keep, sizeof(keep));
}

int
fftd_plan_create(
    fftd_client *client, const fftd_plan_desc *desc, fftd_plan **planp)
{
	char msg[512];
	if (client == NULL || desc == NULL || planp == NULL) {
		return set_error(FFTD_EINVAL, "client, desc or planp is NULL");
	}
	fftd_plan *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return set_error(FFTD_ENOMEM, "out of memory");
	}
	// Resolve here too (no limits: those are the daemon's) so that byte
	// counts and the output copy use the same arithmetic as the daemon.
	int rv = fftd__shape_resolve(desc, NULL, &p->shape, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		free(p);
		return set_error(rv, "%s", msg);
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
	rpc_call call[FFTD_MAX_DAEMONS];
	uint64_t epoch[FFTD_MAX_DAEMONS];
	bool     sent[FFTD_MAX_DAEMONS] = { false };
	int      asked                  = 0;
	for (int i = 0; i < client->nep; i++) {
		epoch[i] = atomic_load(&client->ep[i].link->epoch);
		if (client->nep > 1
		    && atomic_load(&client->ep[i].link->pipe) == 0) {
			continue;
		}
		rpc_start(client, i, &req, &call[i]);
		sent[i] = true;
		asked++;
	}
	if (asked == 0) {
		free(p);
		return set_error(FFTD_ECLOSED,
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
		rv = rpc_finish(&call[i], &r);
		if (rv == FFTD_OK
		    && (r->body_case != FFTD__WIRE__REPLY__BODY_PLAN_CREATE
		        || r->plan_create->input_bytes != p->shape.in.bytes
		        || r->plan_create->output_bytes
		            != p->shape.out.bytes)) {
			rv = set_error(FFTD_EPROTO,
			    "daemon's plan does not match the description's "
			    "byte counts");
		}
		if (rv == FFTD_OK) {
			p->id[i]    = r->plan_create->plan_id;
			p->epoch[i] = epoch[i] != 0 ? epoch[i] : 1;
			made |= 1u << i;
			if (p->algorithm[0] == '\0') {
				copy_str(p->algorithm, sizeof(p->algorithm),
				    r->plan_create->algorithm);
			}
		} else if (status == FFTD_OK) {
			status = url_error(client, i, rv);
			snprintf(msg, sizeof(msg), "%s", last_error);
		}
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	if (status != FFTD_OK) {
		plan_release(client, p, made);
		free(p);
		return set_error(status, "%s", msg);
	}
	p->client = client;
	atomic_fetch_add(&client->refs, 1);
	*planp = p;
	return FFTD_OK;
}

void
fftd_plan_destroy(fftd_plan *plan)
{
	if (plan == NULL) {
		return;
	}
	// After fftd_client_close the daemon has released the plan already.
	// A failure means the same (it went away or restarted).
	if (!atomic_load(&plan->client->closed)) {
		plan_release(plan->client, plan, UINT32_MAX);
	}
	client_unref(plan->client);
	free(plan);
}

size_t
fftd_plan_input_bytes(const fftd_plan *plan)
{
	return plan ? (size_t) plan->shape.in.bytes : 0;
}

size_t
fftd_plan_output_bytes(const fftd_plan *plan)
{
	return plan ? (size_t) plan->shape.out.bytes : 0;
}

const char *
fftd_plan_algorithm(const fftd_plan *plan)
{
	return plan ? plan->algorithm : "";
}

// --- execution
// --------------------------------------------------------------------

static void
request_free(fftd_request *req, bool from_callback)
{
	stage_release(req->client, req->stage);
	nng_ctx_close(req->ctx);
	if (from_callback) {
		nng_aio_reap(
		    req->aio); // cannot free an aio inside its callback
	} else {
		nng_aio_free(req->aio);
	}
	pthread_mutex_destroy(&req->mtx);
	pthread_cond_destroy(&req->cv);
	free(req);
}

// inflight_add lists a request whose slot pick_endpoint counted.
static void
inflight_add(fftd_client *c, fftd_request *req)
{
	pthread_mutex_lock(&c->mtx);
	req->prev_inflight = NULL;
	req->next_inflight = c->inflight;
	if (c->inflight != NULL) {
		c->inflight->prev_inflight = req;
	}
	c->inflight = req;
	pthread_mutex_unlock(&c->mtx);
}

static void
inflight_remove(fftd_client *c, fftd_request *req)
{
	pthread_mutex_lock(&c->mtx);
	if (req->prev_inflight != NULL) {
		req->prev_inflight->next_inflight = req->next_inflight;
	} else {
		c->inflight = req->next_inflight;
	}
	if (req->next_inflight != NULL) {
		req->next_inflight->prev_inflight = req->prev_inflight;
	}
	pthread_mutex_unlock(&c->mtx);
}

// inflight_done gives back the slot pick_endpoint counted on endpoint ep.
static void
inflight_done(fftd_client *c, int ep)
{
	pthread_mutex_lock(&c->mtx);
	c->ep[ep].ninflight--;
	if (--c->ninflight == 0) {
		pthread_cond_broadcast(&c->idle);
	}
	pthread_cond_broadcast(&c->slot);
	pthread_mutex_unlock(&c->mtx);
}

static void
request_finish(fftd_request *req, int status)
{
	fftd_client *c = req->client;
	inflight_remove(c, req);
	int ep = req->ep;
	if (status == FFTD_ECLOSED && atomic_load(&c->closed)) {
		snprintf(req->message, sizeof(req->message), "client closed");
	}
	if (status != FFTD_OK && c->nep > 1) { // say which daemon
		prefix_url(req->message, sizeof(req->message), c->ep[ep].url);
	}
	if (req->cb != NULL) {
		// The caller's thread-local last error is not ours to set here;
		// the callback sees the status.
		in_callback = true;
		req->cb(req, status, req->data);
		in_callback = false;
		request_free(req, true);
		inflight_done(c, ep);
		return;
	}
	pthread_mutex_lock(&req->mtx);
	req->status = status;
	req->state  = REQ_DONE;
	pthread_cond_broadcast(&req->cv);
	pthread_mutex_unlock(&req->mtx);
	inflight_done(c, ep);
}

// conn_lost notes that the connection req went on dropped it (NNG's REQ
// fails a request whose pipe closes with NNG_ECONNRESET): the plans of
// that session are gone, and the pipe callback may come later than this
// completion, which lets the next submission in.
static void
conn_lost(fftd_request *req, int rv)
{
	if (rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT) {
		atomic_store(
		    &req->client->ep[req->ep].link->broken, req->epoch);
	}
}

static void
request_cb(void *arg)
{
	fftd_request *req = arg;
	int           rv  = nng_aio_result(req->aio);
	if (req->state == REQ_SEND) {
		if (rv != 0) {
			conn_lost(req, rv);
			nng_msg_free(nng_aio_get_msg(req->aio));
			snprintf(req->message, sizeof(req->message),
			    "request not sent: %s",
			    rv == NNG_ECANCELED
			            && !atomic_load(&req->client->closed)
			        ? "the connection to the daemon dropped"
			        : nng_strerror(rv));
			request_finish(req, map_nng(rv));
			return;
		}
		atomic_store(&req->sent, true);
		// Under the mutex: fftd_request_wait and fftd_request_done
		// read the state on other threads.
		pthread_mutex_lock(&req->mtx);
		req->state = REQ_RECV; // also while closing: close drains
		pthread_mutex_unlock(&req->mtx);

		nng_ctx_recv(req->ctx, req->aio);
		return;
	}
	if (rv != 0) {
		conn_lost(req, rv);
		snprintf(req->message, sizeof(req->message),
		    "no answer from the daemon: %s", nng_strerror(rv));
		request_finish(req, map_nng(rv));
		return;
	}
	nng_msg           *m = nng_aio_get_msg(req->aio);
	fftd__frame        f;
	Fftd__Wire__Reply *r      = NULL;
	int                status = decode_reply(m, &r, &f);
	if (status == FFTD_OK && r->status != FFTD_OK) {
		status = r->status;
		snprintf(req->message, sizeof(req->message), "%s", r->message);
	} else if (status == FFTD_OK) {
		const fftd__shape *s    = &req->plan->shape;
		uint64_t           want = req->out_shared ? 0 : s->out.bytes;
		if (f.payload_len != want) {
			status = FFTD_EPROTO;
			snprintf(req->message, sizeof(req->message),
			    "reply carries %" PRIu64
			    " bytes; expected %" PRIu64,
			    f.payload_len, want);
		} else if (req->stage != NULL && s->out.dense) {
			par_memcpy(req->out,
			    (const uint8_t *) req->stage->addr + req->stage_out,
			    (size_t) s->out.bytes);
		} else if (req->stage != NULL) {
			fftd__side_copy(req->out,
			    (const uint8_t *) req->stage->addr + req->stage_out,
			    &s->out, s->rank, s->batch);
		} else if (!req->out_shared) {
			fftd__side_copy(
			    req->out, f.payload, &s->out, s->rank, s->batch);
		}
	} else {
		snprintf(req->message, sizeof(req->message), "%s", last_error);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	nng_msg_free(m);
	request_finish(req, status);
}

// find_buffer says whether [p, p + len) lies inside one of c's shared
// buffers at an offset the daemon takes (a multiple of elem, the side's
// element size), and if so gives its id and the offset. An array only
// aligned to its real type (as C allows for complex) travels inline.
static bool
find_buffer(fftd_client *c, const void *p, uint64_t len, size_t elem,
    uint64_t *id, uint64_t *off)
{
	bool found = false;
	pthread_mutex_lock(&c->mtx);
	for (fftd_buffer *b = c->buffers; b != NULL && !found; b = b->next) {
		uintptr_t a = (uintptr_t) b->addr, x = (uintptr_t) p;
		if (x >= a && len <= b->size && x - a <= b->size - len
		    && (x - a) % elem == 0) {
			*id   = b->id;
			*off  = x - a;
			found = true;
		}
	}
	pthread_mutex_unlock(&c->mtx);
	return found;
}

// no_endpoint says why no endpoint is left for plan p (several daemons).
static int
no_endpoint(const fftd_client *c, const fftd_plan *p)
{
	for (int i = 0; i < c->nep; i++) {
		const ep_link *l = c->ep[i].link;
		if (p->epoch[i] != 0 && atomic_load(&l->pipe) != 0
		    && atomic_load(&l->epoch) != p->epoch[i]) {
			return set_error(FFTD_ENOPLAN,
			    "the plan's daemons are all gone; %s is back, on a "
			    "new connection without this plan (make it again)",
			    c->ep[i].url);
		}
	}
	return set_error(FFTD_ECLOSED,
	    "the plan's daemons are all disconnected (of %d; libfftd "
	    "reconnects by itself, but plans die with their connection)",
	    c->nep);
}

// pick_endpoint chooses the daemon of an execution of plan p and counts
// it in flight there: of the endpoints that may run p (ep_usable), the one
// with the fewest of this client's executions in flight, ties going round
// robin. While every one of them has its daemon's limit in flight the
// caller waits for a completion, so a deep pipeline waits instead of being
// refused (not on a callback thread: the slot may need that very thread).
static int
pick_endpoint(fftd_client *c, const fftd_plan *p, int *epp, uint64_t *epoch)
{
	pthread_mutex_lock(&c->mtx);
	for (;;) {
		if (atomic_load(&c->closed)) {
			pthread_mutex_unlock(&c->mtx);
			return set_error(FFTD_ECLOSED, "the client is closed");
		}
		int best = -1, usable = 0;
		for (int k = 0; k < c->nep; k++) {
			int       i = (c->rr + k) % c->nep;
			endpoint *e = &c->ep[i];
			if (!ep_usable(c, p, i)) {
				continue;
			}
			usable++;
			if (e->limit != 0 && e->ninflight >= (int) e->limit
			    && !in_callback) {
				continue;
			}
			if (best < 0 || e->ninflight < c->ep[best].ninflight) {
				best = i;
			}
		}
		if (best >= 0) {
			c->ep[best].ninflight++;
			c->ninflight++;
			c->rr  = (best + 1) % c->nep;
			*epp   = best;
			*epoch = atomic_load(&c->ep[best].link->epoch);
			pthread_mutex_unlock(&c->mtx);
			return FFTD_OK;
		}
		if (usable == 0) {
			pthread_mutex_unlock(&c->mtx);
			return no_endpoint(c, p);
		}
		pthread_cond_wait(&c->slot, &c->mtx);
	}
}

int
fftd_execute_async(const fftd_plan *plan, const void *in, void *out,
    fftd_callback cb, void *data, fftd_request **reqp)
{
	return fftd_execute_async_opts(plan, in, out, NULL, cb, data, reqp);
}

int
fftd_execute_async_opts(const fftd_plan *plan, const void *in, void *out,
    const fftd_exec_options *opts, fftd_callback cb, void *data,
    fftd_request **reqp)
{
	if (plan == NULL || in == NULL || out == NULL) {
		return set_error(FFTD_EINVAL, "plan, in or out is NULL");
	}
	if ((cb == NULL) == (reqp == NULL)) {
		return set_error(
		    FFTD_EINVAL, "give exactly one of cb and reqp");
	}
	if (opts != NULL && opts->deadline_us < 0) {
		return set_error(FFTD_EINVAL,
		    "deadline_us = %lld: must be >= 0",
		    (long long) opts->deadline_us);
	}
	int      ep    = 0;
	uint64_t epoch = 0;
	int      rv    = pick_endpoint(plan->client, plan, &ep, &epoch);
	if (rv != FFTD_OK) {
		return rv;
	}
	fftd_request *req = calloc(1, sizeof(*req));
	if (req == NULL) {
		inflight_done(plan->client, ep);
		return set_error(FFTD_ENOMEM, "out of memory");
	}
	req->client = plan->client;
	req->ep     = ep;
	req->epoch  = epoch;
	req->plan   = plan;
	req->out    = out;
	req->cb     = cb;
	req->data   = data;
	pthread_mutex_init(&req->mtx, NULL);
	pthread_cond_init(&req->cv, NULL);

	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = plan->id[ep];
	req->tag       = atomic_fetch_add(&plan->client->next_tag, 1) + 1;
	ex.tag         = req->tag;
	ex.deadline_us = opts != NULL ? (uint64_t) opts->deadline_us : 0;
	wr.body_case   = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	wr.execute     = &ex;
	// Arrays inside this client's shared buffers go by reference.
	find_buffer(plan->client, in, plan->shape.in.bytes,
	    plan->shape.in.elem_size, &ex.in_buffer, &ex.in_offset);
	req->out_shared = find_buffer(plan->client, out, plan->shape.out.bytes,
	    plan->shape.out.elem_size, &ex.out_buffer, &ex.out_offset);
	if (!ex.in_buffer && !req->out_shared
	    && plan->shape.in.bytes >= plan->client->stage_min) {
		uint64_t in_span
		    = (plan->shape.in.bytes + 4095) & ~(uint64_t) 4095;
		req->stage = stage_acquire(
		    plan->client, in_span + plan->shape.out.bytes);
		if (req->stage != NULL) {
			par_memcpy(req->stage->addr, in,
			    (size_t) plan->shape.in.bytes);
			ex.in_buffer    = req->stage->id;
			ex.in_offset    = 0;
			ex.out_buffer   = req->stage->id;
			ex.out_offset   = in_span;
			req->stage_out  = in_span;
			req->out_shared = true; // the reply carries no payload
		}
	}
	uint64_t inline_bytes = ex.in_buffer ? 0 : plan->shape.in.bytes;
	nng_msg *m;
	void    *payload;
	rv = fftd__msg_build(&m, &wr.base, inline_bytes, &payload);
	if (rv != FFTD_OK) {
		stage_release(plan->client, req->stage);
		pthread_mutex_destroy(&req->mtx);
		pthread_cond_destroy(&req->cv);
		free(req);
		inflight_done(plan->client, ep);
		return set_error(rv, "cannot build a %" PRIu64 "-byte request",
		    plan->shape.in.bytes);
	}
	if (inline_bytes) {
		memcpy(payload, in, (size_t) inline_bytes);
	}
	if ((rv = nng_aio_alloc(&req->aio, request_cb, req)) != 0
	    || (rv = nng_ctx_open(&req->ctx, plan->client->ep[ep].sock)) != 0) {
		if (req->aio != NULL) {
			nng_aio_free(req->aio);
		}
		nng_msg_free(m);
		stage_release(plan->client, req->stage);
		pthread_mutex_destroy(&req->mtx);
		pthread_cond_destroy(&req->cv);
		free(req);
		inflight_done(plan->client, ep);
		return set_error(map_nng(rv), "%s", nng_strerror(rv));
	}
	nng_aio_set_timeout(req->aio, plan->client->timeout);
	nng_aio_set_msg(req->aio, m);
	req->state = REQ_SEND;
	if (reqp != NULL) {
		*reqp = req; // before the send: the callback may finish at once
	}
	inflight_add(plan->client, req);
	nng_ctx_send(req->ctx, req->aio);
	return FFTD_OK;
}

int
fftd_request_cancel(fftd_request *req)
{
	if (req == NULL || req->cb != NULL) {
		return set_error(
		    FFTD_EINVAL, "req is NULL or completes through a callback");
	}
	if (fftd_request_done(req)) {
		return set_error(FFTD_EBUSY, "the request has completed");
	}
	Fftd__Wire__Request wr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Cancel  cr = FFTD__WIRE__CANCEL__INIT;
	cr.tag                 = req->tag;
	wr.body_case           = FFTD__WIRE__REQUEST__BODY_CANCEL;
	wr.cancel              = &cr;
	Fftd__Wire__Reply *r   = NULL;
	// To the daemon the request went to: tags name requests per session.
	int rv = rpc_on(req->client, req->ep, &wr, &r);
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv == FFTD_OK ? rv : url_error(req->client, req->ep, rv);
}

int
fftd_request_done(fftd_request *req)
{
	if (req == NULL) {
		return 1;
	}
	pthread_mutex_lock(&req->mtx);
	int done = req->state == REQ_DONE;
	pthread_mutex_unlock(&req->mtx);
	return done;
}

int
fftd_request_wait(fftd_request *req)
{
	if (req == NULL) {
		return set_error(FFTD_EINVAL, "req is NULL");
	}
	pthread_mutex_lock(&req->mtx);
	while (req->state != REQ_DONE) {
		pthread_cond_wait(&req->cv, &req->mtx);
	}
	pthread_mutex_unlock(&req->mtx);
	int status = req->status;
	if (status != FFTD_OK) {
		set_error(status, "%s", req->message);
	}
	request_free(req, false);
	return status;
}

int
fftd_execute(const fftd_plan *plan, const void *in, void *out)
{
	fftd_request *req;
	int           rv = fftd_execute_async(plan, in, out, NULL, NULL, &req);
	if (rv != FFTD_OK) {
		return rv;
	}
	return fftd_request_wait(req);
}

// --- shared-memory buffers
// --------------------------------------------------------

// send_fd hands fd to the daemon's descriptor socket with the token and
// reads back the buffer id (protocol in daemon/fdsock.h).
static int
send_fd(const char *path, const uint8_t *token, size_t toklen, uint64_t bytes,
    int fd, uint64_t *id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (toklen != 16 || strlen(path) >= sizeof(sa.sun_path)) {
		return set_error(FFTD_EPROTO, "bad buffer registration reply");
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		int e = errno;
		if (s >= 0) {
			close(s);
		}
		return set_error(FFTD_ESYSERR + e, "%s: %s", path, strerror(e));
	}
	struct timeval tv = { 10, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	uint8_t req[24];
	memcpy(req, token, 16);
	for (int i = 0; i < 8; i++) {
		req[16 + i] = (uint8_t) (bytes >> (8 * i));
	}
	union {
		struct cmsghdr h;
		char           b[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec  iov = { req, sizeof(req) };
	struct msghdr mh  = { 0 };
	mh.msg_iov        = &iov;
	mh.msg_iovlen     = 1;
	mh.msg_control    = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level     = SOL_SOCKET;
	c->cmsg_type      = SCM_RIGHTS;
	c->cmsg_len       = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	uint8_t rep[256];
	ssize_t n = sendmsg(s, &mh, MSG_NOSIGNAL);
	// A daemon at its limit answers FFTD_ELIMIT and closes before reading
	// the request: its reply is there to read even when the send failed.
	if (n == (ssize_t) sizeof(req)
	    || (n < 0 && (errno == EPIPE || errno == ECONNRESET))) {
		n = recv(s, rep, sizeof(rep), MSG_WAITALL);
	}
	int e = errno;
	close(s);
	if (n != (ssize_t) sizeof(rep)) {
		return set_error(n < 0 ? FFTD_ESYSERR + e : FFTD_EPROTO,
		    "buffer hand-over to %s failed", path);
	}
	int32_t status = (int32_t) ((uint32_t) rep[0] | (uint32_t) rep[1] << 8
	    | (uint32_t) rep[2] << 16 | (uint32_t) rep[3] << 24);
	*id            = 0;
	for (int i = 7; i >= 0; i--) {
		*id = (*id << 8) | rep[8 + i];
	}
	rep[sizeof(rep) - 1] = '\0';
	if (status != FFTD_OK) {
		return set_error(status, "%s", (const char *) rep + 16);
	}
	return FFTD_OK;
}

static int buffer_make(
    fftd_client *client, size_t bytes, bool staging, fftd_buffer **bufp);

int
fftd_buffer_create(fftd_client *client, size_t bytes, fftd_buffer **bufp)
{
	if (client == NULL || bufp == NULL || bytes == 0) {
		return set_error(FFTD_EINVAL, "client, bytes or bufp missing");
	}
	if (client->nep > 1) {
		return set_error(FFTD_EUNSUPPORTED,
		    "shared-memory buffers need a client of one daemon; this "
		    "one was opened on a list of %d",
		    client->nep);
	}
	return buffer_make(client, bytes, false, bufp);
}

// buffer_make creates a shared buffer: listed in client->buffers (found by
// address in executions) or, for staging, in no list (the pool keeps it).
static int
buffer_make(fftd_client *client, size_t bytes, bool staging, fftd_buffer **bufp)
{
	if (!client->ipc) {
		return set_error(FFTD_EUNSUPPORTED,
		    "shared memory needs an ipc:// connection");
	}
	size_t page = (size_t) sysconf(_SC_PAGESIZE);
	if (bytes > SIZE_MAX - page) {
		return set_error(FFTD_EOVERFLOW, "buffer size overflows");
	}
	size_t size = (bytes + page - 1) / page * page;
	// Sealed against shrinking: the daemon maps it and must never fault.
	int fd = memfd_create("fftd-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t) size) != 0
	    || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
	        != 0) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return set_error(FFTD_ESYSERR + e, "memfd: %s", strerror(e));
	}
	void *addr
	    = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		int e = errno;
		close(fd);
		return set_error(FFTD_ESYSERR + e, "mmap: %s", strerror(e));
	}
	Fftd__Wire__Request        req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__BufferRegister br  = FFTD__WIRE__BUFFER_REGISTER__INIT;
	br.bytes                       = size;
	req.body_case         = FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER;
	req.buffer_register   = &br;
	Fftd__Wire__Reply *r  = NULL;
	uint64_t           id = 0;
	int                rv = rpc(client, &req, &r);
	if (rv == FFTD_OK
	    && r->body_case != FFTD__WIRE__REPLY__BODY_BUFFER_REGISTER) {
		rv = set_error(FFTD_EPROTO, "no registration in the reply");
	}
	if (rv == FFTD_OK) {
		rv = send_fd(r->buffer_register->fd_socket,
		    r->buffer_register->token.data,
		    r->buffer_register->token.len, size, fd, &id);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	close(fd); // the mappings keep the memory
	fftd_buffer *b = NULL;
	if (rv == FFTD_OK && (b = calloc(1, sizeof(*b))) == NULL) {
		rv = set_error(FFTD_ENOMEM, "out of memory");
	}
	if (rv != FFTD_OK) {
		munmap(addr, size);
		return rv;
	}
	b->client = client;
	b->id     = id;
	b->addr   = addr;
	b->size   = size;
	if (staging) {
		*bufp = b; // owned by the pool; holds no client reference
		return FFTD_OK;
	}
	atomic_fetch_add(&client->refs, 1);
	pthread_mutex_lock(&client->mtx);
	b->next         = client->buffers;
	client->buffers = b;
	pthread_mutex_unlock(&client->mtx);
	*bufp = b;
	return FFTD_OK;
}

// stage_acquire lends an idle staging buffer of at least `bytes` bytes,
// making one if none fits (sized to a power of two, so that requests of
// similar sizes share). NULL: use the socket (not ipc, the daemon refused a
// buffer, or staging is off).
static fftd_buffer *
stage_acquire(fftd_client *c, uint64_t bytes)
{
	pthread_mutex_lock(&c->mtx);
	if (c->staging_off) {
		pthread_mutex_unlock(&c->mtx);
		return NULL;
	}
	// Best fit: a small request must not take the buffer that a large
	// one would otherwise have to make anew.
	fftd_buffer *fit = NULL;
	for (fftd_buffer *b = c->staging; b != NULL; b = b->next) {
		if (!b->busy && b->size >= bytes
		    && (fit == NULL || b->size < fit->size)) {
			fit = b;
		}
	}
	if (fit != NULL) {
		fit->busy = true;
		pthread_mutex_unlock(&c->mtx);
		return fit;
	}
	pthread_mutex_unlock(&c->mtx);
	uint64_t size = 1;
	while (size < bytes) {
		size <<= 1;
	}
	fftd_buffer *b = NULL;
	char         keep[sizeof(last_error)];
	memcpy(keep, last_error, sizeof(keep));
	int rv = size > SIZE_MAX ? FFTD_EOVERFLOW
	                         : buffer_make(c, (size_t) size, true, &b);
	memcpy(last_error, keep, sizeof(keep)); // not the caller's error
	pthread_mutex_lock(&c->mtx);
	if (rv != FFTD_OK) {
		// Over the daemon's limit or refused: stay on the socket from
		// now on rather than asking again for every request.
		c->staging_off = true;
		pthread_mutex_unlock(&c->mtx);
		return NULL;
	}
	b->busy    = true;
	b->next    = c->staging;
	c->staging = b;
	// Keep at most STAGE_POOL_MAX idle buffers: drop the smallest idle.
	int idle = 0;
	for (fftd_buffer *x = c->staging; x != NULL; x = x->next) {
		idle += !x->busy;
	}
	fftd_buffer *drop = NULL;
	if (idle > STAGE_POOL_MAX) {
		fftd_buffer **pp = NULL;
		for (fftd_buffer **q = &c->staging; *q != NULL;
		     q               = &(*q)->next) {
			if (!(*q)->busy
			    && (pp == NULL || (*q)->size < (*pp)->size)) {
				pp = q;
			}
		}
		drop = *pp;
		*pp  = drop->next;
	}
	pthread_mutex_unlock(&c->mtx);
	if (drop != NULL) {
		buffer_release(c, drop);
	}
	return b;
}

// Copies into and out of staging buffers of at least PAR_COPY_MIN bytes are
// split over up to PAR_COPY_THREADS threads (this thread included): one
// core's memcpy (~10 GB/s) is below what the rest of the path (PCIe
// ~50 GB/s duplex) moves, and the copy is the whole cost of staging.
#define PAR_COPY_MIN ((size_t) 16 << 20)
#define PAR_COPY_THREADS 4

typedef struct copy_part {
	void       *dst;
	const void *src;
	size_t      n;
} copy_part;

static void *
copy_part_main(void *arg)
{
	copy_part *cp = arg;
	memcpy(cp->dst, cp->src, cp->n);
	return NULL;
}

static void
par_memcpy(void *dst, const void *src, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int  k    = (int) (n / (PAR_COPY_MIN / 2));
	if (k > PAR_COPY_THREADS) {
		k = PAR_COPY_THREADS;
	}
	if (cpus > 0 && k > cpus) {
		k = (int) cpus;
	}
	if (n < PAR_COPY_MIN || k < 2) {
		memcpy(dst, src, n);
		return;
	}
	copy_part parts[PAR_COPY_THREADS];
	pthread_t t[PAR_COPY_THREADS];
	bool      started[PAR_COPY_THREADS] = { false };
	size_t    each = (n / (size_t) k + 4095) & ~(size_t) 4095;
	for (int i = 0; i < k; i++) {
		size_t off   = (size_t) i * each;
		parts[i].dst = (char *) dst + off;
		parts[i].src = (const char *) src + off;
		parts[i].n   = off >= n ? 0 : (n - off < each ? n - off : each);
	}
	for (int i = 1; i < k; i++) {
		started[i]
		    = pthread_create(&t[i], NULL, copy_part_main, &parts[i])
		    == 0;
		if (!started[i]) {
			copy_part_main(&parts[i]); // no thread: copy it here
		}
	}
	copy_part_main(&parts[0]);
	for (int i = 1; i < k; i++) {
		if (started[i]) {
			pthread_join(t[i], NULL);
		}
	}
}

// stage_release gives a staging buffer back to the pool.
static void
stage_release(fftd_client *c, fftd_buffer *b)
{
	if (b == NULL) {
		return;
	}
	pthread_mutex_lock(&c->mtx);
	b->busy = false;
	pthread_mutex_unlock(&c->mtx);
}

void *
fftd_buffer_data(const fftd_buffer *buf)
{
	return buf ? buf->addr : NULL;
}

size_t
fftd_buffer_size(const fftd_buffer *buf)
{
	return buf ? buf->size : 0;
}

// buffer_release releases b in the daemon (unless the client is closed:
// the daemon released it with the session) and unmaps it here.
static void
buffer_release(fftd_client *c, fftd_buffer *buf)
{
	if (!atomic_load(&c->closed)) {
		Fftd__Wire__Request       req = FFTD__WIRE__REQUEST__INIT;
		Fftd__Wire__BufferRelease br = FFTD__WIRE__BUFFER_RELEASE__INIT;
		br.buffer_id                 = buf->id;
		req.body_case        = FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE;
		req.buffer_release   = &br;
		Fftd__Wire__Reply *r = NULL;
		(void) rpc(c, &req, &r); // a gone daemon released it already
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	munmap(buf->addr, buf->size);
	free(buf);
}

void
fftd_buffer_destroy(fftd_buffer *buf)
{
	if (buf == NULL) {
		return;
	}
	fftd_client *c = buf->client;
	pthread_mutex_lock(&c->mtx);
	for (fftd_buffer **pp = &c->buffers; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == buf) {
			*pp = buf->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->mtx);
	buffer_release(c, buf);
	client_unref(c);
}

// --- streams
// --------------------------------------------------------------------------

#define MAX_DEPTH 64

struct fftd_stream {
	const fftd_plan *plan;
	fftd_buffer     *buf;
	int              depth;
	size_t           in_off, slot; // output at in_off past a slot's start
	int              head;         // next slot to submit
	int              tail;         // oldest slot in flight
	int              pending;
	int64_t          deadline_us;
	int64_t          spin_ns; // waits poll without sleeping this long
	fftd_request    *req[MAX_DEPTH];
	// Stream channel (chan >= 0): submissions and answers over a socket
	// of the stream's own, not NNG; per slot, the submission's tag and,
	// once answered, its status.
	int      chan;
	int      broken; // the channel failed: this status for the rest
	uint64_t tag[MAX_DEPTH];
	int      status[MAX_DEPTH];
	bool     answered[MAX_DEPTH];
	char     why[MAX_DEPTH][232];       // fftd__chan_reply.msg
	fftd_stream_times times[MAX_DEPTH]; // per slot, as answered
	fftd_stream_times last;             // of the last successful wait
	bool              have_last;
};

// stream_chan_setting reads FFTD_STREAM_CHANNEL: 0 never, 2 required
// (fftd_stream_open fails instead of using NNG; for tests), else 1: when
// the daemon offers it.
static int
stream_chan_setting(void)
{
	const char *v = getenv("FFTD_STREAM_CHANNEL");
	if (v != NULL && strcmp(v, "0") == 0) {
		return 0;
	}
	return v != NULL && strcmp(v, "2") == 0 ? 2 : 1;
}

// stream_chan_open asks the daemon for a stream channel (StreamOpen) and
// hands it one end of a socketpair; st->chan is the other.
static int
stream_chan_open(fftd_stream *st)
{
	fftd_client           *c   = st->plan->client;
	Fftd__Wire__Request    req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__StreamOpen so  = FFTD__WIRE__STREAM_OPEN__INIT;
	so.plan_id                 = st->plan->id[0];
	so.buffer_id               = st->buf->id;
	so.depth                   = (uint32_t) st->depth;
	so.slot_bytes              = st->slot;
	so.out_offset              = st->in_off;
	req.body_case              = FFTD__WIRE__REQUEST__BODY_STREAM_OPEN;
	req.stream_open            = &so;
	Fftd__Wire__Reply *r       = NULL;
	int                sv[2]   = { -1, -1 };
	uint64_t           id      = 0;
	int                rv      = rpc(c, &req, &r);
	if (rv == FFTD_OK
	    && r->body_case != FFTD__WIRE__REPLY__BODY_STREAM_OPEN) {
		rv = set_error(FFTD_EPROTO, "no stream token in the reply");
	}
	if (rv == FFTD_OK
	    && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		rv = set_error(
		    FFTD_ESYSERR + errno, "socketpair: %s", strerror(errno));
	}
	if (rv == FFTD_OK) {
		rv = send_fd(r->stream_open->fd_socket,
		    r->stream_open->token.data, r->stream_open->token.len, 0,
		    sv[1], &id);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	if (sv[1] >= 0) {
		close(sv[1]); // the daemon has its own copy now
	}
	if (rv != FFTD_OK) {
		if (sv[0] >= 0) {
			close(sv[0]);
		}
		return rv;
	}
	st->chan = sv[0];
	return FFTD_OK;
}

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

int
fftd_stream_open(const fftd_plan *plan, int depth, fftd_stream **streamp)
{
	if (plan == NULL || streamp == NULL || depth < 1 || depth > MAX_DEPTH) {
		return set_error(FFTD_EINVAL,
		    "plan, streamp or depth (1..%d) bad", MAX_DEPTH);
	}
	if (plan->client->nep > 1) {
		return set_error(FFTD_EUNSUPPORTED,
		    "streams need a client of one daemon; this one was "
		    "opened on a list of %d",
		    plan->client->nep);
	}
	fftd_stream *st = calloc(1, sizeof(*st));
	if (st == NULL) {
		return set_error(FFTD_ENOMEM, "out of memory");
	}
	st->plan   = plan;
	st->depth  = depth;
	st->in_off = align64((size_t) plan->shape.in.bytes);
	st->slot   = st->in_off + align64((size_t) plan->shape.out.bytes);
	if (st->slot > SIZE_MAX / (size_t) depth) {
		free(st);
		return set_error(
		    FFTD_EOVERFLOW, "stream buffer size overflows");
	}
	st->chan = -1;
	int rv   = fftd_buffer_create(
	      plan->client, st->slot * (size_t) depth, &st->buf);
	if (rv != FFTD_OK) {
		free(st);
		return rv;
	}
	// A stream channel if the daemon offers one; else NNG, as any
	// execution (a daemon of an older protocol answers FFTD_EPROTO).
	int want = stream_chan_setting();
	if (want > 0 && (rv = stream_chan_open(st)) != FFTD_OK && want == 2) {
		fftd_buffer_destroy(st->buf);
		free(st);
		return rv;
	}
	*streamp = st;
	return FFTD_OK;
}

static char *
slot_at(const fftd_stream *st, int i)
{
	return (char *) st->buf->addr + (size_t) i * st->slot;
}

void *
fftd_stream_input(fftd_stream *st)
{
	if (st == NULL || st->pending == st->depth) {
		return NULL;
	}
	return slot_at(st, st->head);
}

int
fftd_stream_submit(fftd_stream *st, const void *in)
{
	if (st == NULL) {
		return set_error(FFTD_EINVAL, "stream is NULL");
	}
	if (st->pending == st->depth) {
		return set_error(
		    FFTD_EBUSY, "%d executions in flight already", st->depth);
	}
	char *slot = slot_at(st, st->head);
	if (in != NULL && in != slot) {
		memcpy(slot, in, (size_t) st->plan->shape.in.bytes);
	}
	if (st->chan >= 0) {
		if (st->broken) {
			return set_error(
			    st->broken, "the stream's channel failed");
		}
		fftd__chan_submit sub = { 0 };
		sub.slot              = (uint32_t) st->head;
		sub.tag = atomic_fetch_add(&st->plan->client->next_tag, 1) + 1;
		sub.deadline_us                  = (uint64_t) st->deadline_us;
		st->times[st->head].submitted_ns = (int64_t) fftd__mono_ns();
		ssize_t n = send(st->chan, &sub, sizeof(sub), MSG_NOSIGNAL);
		if (n != (ssize_t) sizeof(sub)) {
			return set_error(FFTD_ECLOSED, "stream channel: %s",
			    n < 0 ? strerror(errno) : "short send");
		}
		st->tag[st->head]      = sub.tag;
		st->answered[st->head] = false;
		st->head               = (st->head + 1) % st->depth;
		st->pending++;
		return FFTD_OK;
	}
	fftd_exec_options opts = { .deadline_us = st->deadline_us };
	int rv = fftd_execute_async_opts(st->plan, slot, slot + st->in_off,
	    &opts, NULL, NULL, &st->req[st->head]);
	if (rv != FFTD_OK) {
		return rv;
	}
	st->head = (st->head + 1) % st->depth;
	st->pending++;
	return FFTD_OK;
}

// chan_wait reads the channel's answers until slot i's has come (they may
// come out of order when the plan runs on several devices).
static int
chan_wait(fftd_stream *st, int i)
{
	int     timeout  = st->plan->client->timeout == NNG_DURATION_INFINITE
	         ? -1
	         : (int) st->plan->client->timeout;
	int64_t spin_end = st->spin_ns > 0 ? (int64_t) fftd__mono_ns() + st->spin_ns : 0;
	while (!st->answered[i] && !st->broken) {
		fftd__chan_reply r;
		ssize_t          k;
		if (spin_end != 0 && (int64_t) fftd__mono_ns() < spin_end) {
			k = recv(st->chan, &r, sizeof(r), MSG_DONTWAIT);
			if (k < 0
			    && (errno == EAGAIN || errno == EWOULDBLOCK
			        || errno == EINTR)) {
				continue;
			}
		} else {
			struct pollfd p = { st->chan, POLLIN, 0 };
			int           n = poll(&p, 1, timeout);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n == 0) {
				// Its answer may still come, into a slot
				// reused by then: the channel cannot be
				// trusted any more.
				st->broken = FFTD_ETIMEDOUT;
				break;
			}
			k = recv(st->chan, &r, sizeof(r), 0);
		}
		if (k < (ssize_t) offsetof(fftd__chan_reply, msg) + 1) {
			st->broken = k < 0 && errno == EINTR ? 0 : FFTD_ECLOSED;
			continue;
		}
		r.msg[sizeof(r.msg) - 1] = '\0';
		if (r.slot < (uint32_t) st->depth && !st->answered[r.slot]
		    && st->tag[r.slot] == r.tag) {
			fftd_stream_times *t = &st->times[r.slot];
			t->answered_ns       = (int64_t) fftd__mono_ns();
			t->received_ns       = (int64_t) r.received_ns;
			t->started_ns        = (int64_t) r.started_ns;
			t->finished_ns       = (int64_t) r.finished_ns;
			st->answered[r.slot] = true;
			st->status[r.slot]   = r.status;
			snprintf(st->why[r.slot], sizeof(st->why[r.slot]), "%s",
			    r.msg);
		} else if (r.status != FFTD_OK) {
			// Not one of ours (a malformed submission's answer).
			st->broken = r.status;
		}
	}
	if (!st->answered[i]) {
		return set_error(st->broken,
		    st->broken == FFTD_ETIMEDOUT
		        ? "no answer on the stream channel in time"
		        : "the stream's channel failed");
	}
	if (st->status[i] != FFTD_OK) {
		return set_error(st->status[i], "%s", st->why[i]);
	}
	st->last      = st->times[i];
	st->have_last = true;
	return FFTD_OK;
}

int
fftd_stream_last_times(const fftd_stream *st, fftd_stream_times *times)
{
	if (st == NULL || times == NULL) {
		return set_error(FFTD_EINVAL, "stream or times is NULL");
	}
	if (st->chan < 0) {
		return set_error(FFTD_EUNSUPPORTED,
		    "this stream has no stream channel: no daemon times");
	}
	if (!st->have_last) {
		return set_error(FFTD_EINVAL, "no wait has succeeded yet");
	}
	*times = st->last;
	return FFTD_OK;
}

int
fftd_stream_wait(fftd_stream *st, void *out, const void **outp)
{
	if (st == NULL || st->pending == 0) {
		return set_error(FFTD_EINVAL, "nothing in flight");
	}
	int i = st->tail;
	int rv
	    = st->chan >= 0 ? chan_wait(st, i) : fftd_request_wait(st->req[i]);
	char *res  = slot_at(st, i) + st->in_off;
	st->req[i] = NULL;
	st->tail   = (st->tail + 1) % st->depth;
	st->pending--;
	if (rv == FFTD_OK && out != NULL) {
		const fftd__shape *s = &st->plan->shape;
		fftd__side_copy(out, res, &s->out, s->rank, s->batch);
	}
	if (rv == FFTD_OK && outp != NULL) {
		*outp = res;
	}
	return rv;
}

int
fftd_stream_pending(const fftd_stream *st)
{
	return st ? st->pending : 0;
}

void
fftd_stream_close(fftd_stream *st)
{
	if (st == NULL) {
		return;
	}
	while (st->pending > 0) {
		(void) fftd_stream_wait(st, NULL, NULL);
	}
	if (st->chan >= 0) {
		close(st->chan);
	}
	fftd_buffer_destroy(st->buf);
	free(st);
}

void
fftd_stream_set_deadline(fftd_stream *st, int64_t deadline_us)
{
	if (st != NULL) {
		st->deadline_us = deadline_us > 0 ? deadline_us : 0;
	}
}

int
fftd_stream_set_spin(fftd_stream *st, uint32_t spin_us)
{
	if (st == NULL) {
		return set_error(FFTD_EINVAL, "stream is NULL");
	}
	if (spin_us > 1000000) {
		return set_error(
		    FFTD_EINVAL, "spin_us %u is over 10^6 (1 s)", spin_us);
	}
	if (st->chan < 0) {
		return set_error(FFTD_EUNSUPPORTED,
		    "this stream has no stream channel: its waits are NNG's");
	}
	st->spin_ns = (int64_t) spin_us * 1000;
	return FFTD_OK;
}

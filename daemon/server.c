// SPDX-License-Identifier: MIT
//
// server.c — the daemon's NNG REP socket, its contexts, sessions and plan
// handles, and request dispatch.
//
// Each context runs a small state machine on NNG's aio callbacks:
// RECV → (validate) → WORK → SEND → RECV. Cheap requests (hello, ping,
// stats, plan destroy, and every rejection) are answered from the callback;
// plan creation and execution are posted to the device worker, which answers
// through the same context when done. Requests are validated completely
// before anything is allocated for them.
//
// Sessions are NNG pipes (one per client connection). When a pipe goes away
// its session is closed at once: its plan handles are dropped and queued
// work for it is skipped, so a dead client costs nothing.

#include "server.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/transport/ipc/ipc.h>

#include "chan.h"
#include "fdsock.h"
#include "fftd.pb-c.h"
#include "log.h"
#include "remote.h"
#include "stats_reply.h"
#include "wire.h"

// How long a stopping daemon keeps connections open after the last answer
// was handed to NNG, so that it is written out.
#define LINGER_MS 1000
// How long it then waits with no more receiving, so that the pipes fall
// quiet before the socket closes.
#define QUIET_MS 200

#ifndef FFTD_VERSION_STRING
#define FFTD_VERSION_STRING "0.1.0"
#endif

typedef struct fftd__session fftd__session;
typedef struct fftd__handle  fftd__handle;
typedef struct fftd__ctx     fftd__ctx;

enum ctx_state { CTX_RECV, CTX_WORK, CTX_SEND, CTX_DONE };

struct fftd__ctx {
	fftd__server   *srv;
	uint32_t        pipe;     // the connection of the request being served
	bool            refusing; // answering FFTD_ESHUTDOWN: not in busy
	nng_ctx         ctx;
	nng_aio        *aio;
	pthread_mutex_t mtx;
	enum ctx_state  state;
};

// A plan handle: what one client's plan id stands for. References: one
// from the session list while the plan is alive, one per queued job.
// Unless pinned, a plan runs on whichever device is least loaded, and is
// planned there (through that device's cache) on first use: entries[i] is
// its cache entry on worker i. When the last reference goes, one release
// job per entry gives it back on its own worker.
typedef struct release_job {
	fftd__job     job; // must be first
	fftd__handle *h;
	int           wi;
} release_job;

struct fftd__handle {
	uint64_t                   id;
	uint32_t                   pipe; // owning session's pipe id
	int                        home; // worker index it was planned on first
	bool                       pinned;
	int                        realtime;
	fftd__shape                shape;
	char                       algorithm[16];
	uint64_t                   est_bytes; // counted in plan_bytes
	fftd__cache_entry *_Atomic entries[FFTD_MAX_DEVICES];
	_Atomic uint64_t           est_ns; // execution time, moving average
	_Atomic int                refs;
	_Atomic int                releases_left;
	release_job                rel[FFTD_MAX_DEVICES];
	fftd__handle              *next; // in the session's list
};

// A client's shared-memory buffer, mapped here and pinned for DMA.
// References: one from the session's list, one per execution using it.
// Pinning and unpinning (cudaHostRegister, tens of ms for large buffers)
// run on the thread that registers or drops the buffer, never on a device
// worker, where they would hold up realtime work.
typedef struct fftd__shbuf fftd__shbuf;
struct fftd__shbuf {
	uint64_t      id;
	void         *addr;
	size_t        size;
	fftd__device *dev; // whose backend pinned it
	bool          pinned;
	_Atomic int   refs;
	fftd__shbuf  *next;
};

#define MAX_PENDING_TOKENS 4
// Connections refused by [remote] allow that are kept open to be told why
// (refused_pipe); past this many, more are hung up on at once.
#define MAX_REFUSED 64

// A connection [remote] allow refuses is not hung up on at once: its
// requests (the Hello first) are answered FFTD_EREFUSED with the reason,
// so that its client learns why and closes the connection itself. (A
// connection the daemon hangs up on can also leave NNG 1.5 in the client
// unable to close sockets.) It has no session; a second request closes it.
typedef struct refused_pipe {
	uint32_t             pipe;
	int                  answered;
	char                 why[160];
	struct refused_pipe *next;
} refused_pipe;
// A stream channel (StreamOpen; chan.h): executions of one plan on fixed
// slots of one shared buffer, submitted and answered over a SOCK_SEQPACKET
// socket instead of NNG. References: one from the poller until the channel
// hangs up, one per job in flight; the socket closes with the last, so a
// worker never answers into a reused descriptor.
typedef struct stream_chan stream_chan;
struct stream_chan {
	int           fd;
	uint32_t      pipe; // owning session's pipe id
	fftd__handle *h;    // one reference
	fftd__shbuf  *b;    // one reference
	uint32_t      depth;
	uint64_t      slot_bytes, out_off;
	_Atomic int   refs;
	stream_chan  *next; // in s->chans (server lock) until it hangs up
};

// A descriptor hand-over promised to a session (BufferRegister or
// StreamOpen) whose descriptor has not arrived yet.
typedef struct pending_token {
	uint8_t  token[FFTD__FDSOCK_TOKEN];
	uint64_t bytes;
	// A stream channel's token (bytes 0): what StreamOpen asked.
	bool     stream;
	uint64_t plan_id, buffer_id, slot_bytes, out_off;
	uint32_t depth;
} pending_token;

struct fftd__session {
	uint32_t          pipe;
	uint32_t          nplans;     // alive and being created
	uint64_t          plan_bytes; // their estimated bytes
	uint64_t          uid, pid;
	bool              ipc; // peer credentials known: shared memory allowed
	fftd__handle     *plans;
	fftd__shbuf      *bufs;
	uint64_t          buf_bytes; // mapped and promised to pending tokens
	uint32_t          nbufs;     // buffers mapped and promised, as those
	pending_token     pending[MAX_PENDING_TOKENS];
	int               npending;
	int               nchans; // stream channels open
	double            weight;
	uint64_t          queued_bytes; // inline input of executions in flight
	fftd_client_stats st;           // counters (server lock)
	fftd__session    *next;
};

struct fftd__server {
	fftd__config     cfg; // copy; listen URLs borrowed from caller
	fftd__worker   **workers;
	fftd__worker   **rt_workers; // realtime lanes, or NULL: none
	int              nworkers;
	char             backend[16];
	nng_socket       sock;
	bool             sock_open;
	nng_listener     listeners[FFTD__MAX_LISTEN];
	int              nlisteners;
	fftd__ctx       *ctxs;
	int              nctxs;
	pthread_mutex_t  mtx; // sessions, handles, limits
	pthread_cond_t   drained;
	fftd__session   *sessions;
	refused_pipe    *refused;  // (server lock)
	_Atomic int      nrefused; // changed under the server lock
	fftd__fdsock    *fdsock;
	char             fd_path[108];
	fftd__chanpoll  *chanpoll;
	stream_chan     *chans; // open stream channels (server lock)
	_Atomic uint64_t next_buf_id;
	fftd__limits     limits;
	uint32_t         max_plans;
	uint64_t         max_plan_bytes; // per connection (0: no limit)
	uint64_t         max_buffer_bytes;
	_Atomic bool     stopping;
	_Atomic bool     recv_stopped; // drained: no more receiving
	_Atomic int      busy;         // contexts in WORK or SEND
	_Atomic uint64_t next_plan_id;
	struct timespec  started;
	// counters
	_Atomic uint64_t n_sessions, n_plans, n_requests, n_errors;
	_Atomic uint64_t n_bytes_in, n_bytes_out, n_executes;
	_Atomic uint64_t n_canceled, n_expired;
	// busy-fraction windows per worker (server lock)
	uint64_t mark_ns[FFTD_MAX_DEVICES], mark_busy[FFTD_MAX_DEVICES];
	double   busy_frac[FFTD_MAX_DEVICES];
};

typedef struct plan_job {
	fftd__job     job;
	fftd__ctx    *ctx;
	fftd__handle *h;
} plan_job;

typedef struct exec_job {
	fftd__job     job; // must be first
	fftd__server *srv;
	fftd__ctx    *ctx;         // where the answer goes: an NNG context,
	stream_chan  *chan;        // or a stream channel (one reference)
	uint32_t      slot;        // the channel's slot
	uint64_t      received_ns; // when the channel thread read it
	fftd__handle *h;
	nng_msg      *req;
	void         *payload;    // inline input, or NULL
	fftd__shbuf  *inb, *outb; // shared buffers, or NULL
	uint64_t      in_off, out_off;
	uint64_t      inline_bytes; // counted in the session's queued_bytes
	uint64_t      deadline_us;
	bool          moved; // re-posted to the plan's home device
	// Planned on this device's planner thread first (exec_plan_run):
	// how that went.
	bool planned;
	int  plan_rv;
	char plan_msg[200];
} exec_job;

// lane is the workers that serve plans of a priority class: realtime
// plans have the devices' realtime lanes when there are such.
static fftd__worker **
lane(const fftd__server *s, int realtime)
{
	return realtime && s->rt_workers != NULL ? s->rt_workers : s->workers;
}

// cancel_all drops the queued jobs of pipe with tag (0: all) on every
// worker of every lane.
static int
cancel_all(fftd__server *s, uint32_t pipe, uint64_t tag, int status)
{
	int n = 0;
	for (int i = 0; i < s->nworkers; i++) {
		n += fftd__worker_cancel(s->workers[i], pipe, tag, status);
		if (s->rt_workers != NULL) {
			n += fftd__worker_cancel(
			    s->rt_workers[i], pipe, tag, status);
		}
	}
	return n;
}

// --- replies -----------------------------------------------------------------

static void ctx_send(fftd__ctx *c, nng_msg *m);

static fftd__session *find_session(fftd__server *s, uint32_t p);

// count_reply counts an answer in the daemon's and its client's totals.
static void
count_reply(fftd__server *s, uint32_t pipe, int status)
{
	atomic_fetch_add(&s->n_requests, 1);
	if (status != FFTD_OK) {
		atomic_fetch_add(&s->n_errors, 1);
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	if (ss != NULL) {
		ss->st.requests++;
		ss->st.errors += status != FFTD_OK;
	}
	pthread_mutex_unlock(&s->mtx);
}

static void
ctx_reply(
    fftd__ctx *c, Fftd__Wire__Reply *r, uint64_t payload_len, void **payload)
{
	nng_msg *m;
	count_reply(c->srv, c->pipe, r->status);
	if (fftd__msg_build(&m, &r->base, payload_len, payload) != FFTD_OK) {
		// Out of memory even for the reply: answer without the body so
		// the client learns why instead of timing out.
		Fftd__Wire__Reply e = FFTD__WIRE__REPLY__INIT;
		e.status            = FFTD_ENOMEM;
		e.message           = "daemon out of memory for the reply";
		if (fftd__msg_build(&m, &e.base, 0, NULL) != FFTD_OK) {
			m = NULL;
		}
		if (payload) {
			*payload = NULL;
		}
	}
	ctx_send(c, m);
}

static void ctx_reply_error(fftd__ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
ctx_reply_error(fftd__ctx *c, int status, const char *fmt, ...)
{
	char    msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fftd__log(FFTD_LOG_DEBUG, "request refused: %s: %s",
	    fftd_err_name(status), msg);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	r.status            = status;
	r.message           = msg;
	ctx_reply(c, &r, 0, NULL);
}

// --- sessions and handles ----------------------------------------------------

// find_session returns the open session of pipe id p (server lock held).
static fftd__session *
find_session(fftd__server *s, uint32_t p)
{
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		if (ss->pipe == p) {
			return ss;
		}
	}
	return NULL;
}

static void
release_job_run(fftd__worker *w, fftd__job *job)
{
	release_job  *rj = (release_job *) job;
	fftd__handle *h  = rj->h;
	fftd__cache_release(
	    fftd__worker_cache(w), atomic_load(&h->entries[rj->wi]));
	if (atomic_fetch_sub(&h->releases_left, 1) == 1) {
		free(h);
	}
}

// handle_unref drops one reference; the last one gives the plan's cache
// entries back, each on its own worker's thread.
static void
handle_unref(fftd__server *s, fftd__handle *h)
{
	if (atomic_fetch_sub(&h->refs, 1) != 1) {
		return;
	}
	atomic_fetch_sub(&s->n_plans, 1);
	int n = 0;
	for (int i = 0; i < s->nworkers; i++) {
		n += atomic_load(&h->entries[i]) != NULL;
	}
	if (n == 0) {
		free(h);
		return;
	}
	atomic_store(&h->releases_left, n);
	// Once the n-th job is posted its worker may free h: the loop must
	// not read h again (posted < n is tested before h->entries).
	int posted = 0;
	for (int i = 0; i < s->nworkers && posted < n; i++) {
		if (atomic_load(&h->entries[i]) != NULL) {
			posted++;
			h->rel[i].job.fn = release_job_run;
			h->rel[i].h      = h;
			h->rel[i].wi     = i;
			fftd__worker_post_plan(
			    lane(s, h->realtime)[i], &h->rel[i].job);
		}
	}
}

// shbuf_unref drops one reference; the last unpins and unmaps (host
// memory registration is thread-safe in the backends that pin).
static void
shbuf_unref(fftd__server *s, fftd__shbuf *b)
{
	(void) s;
	if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1) {
		return;
	}
	if (b->pinned) {
		b->dev->backend->host_unregister(b->dev, b->addr);
	}
	munmap(b->addr, b->size);
	free(b);
}

// busy_done ends one unit of accepted work; the drain waits for none left.
static void
busy_done(fftd__server *s)
{
	atomic_fetch_sub(&s->busy, 1);
	if (atomic_load(&s->stopping)) {
		pthread_mutex_lock(&s->mtx);
		pthread_cond_broadcast(&s->drained);
		pthread_mutex_unlock(&s->mtx);
	}
}

static void
chan_unref(fftd__server *s, stream_chan *ch)
{
	if (ch == NULL || atomic_fetch_sub(&ch->refs, 1) != 1) {
		return;
	}
	close(ch->fd);
	handle_unref(s, ch->h);
	shbuf_unref(s, ch->b);
	free(ch);
}

// chan_answer answers submission `tag` on `slot` of a stream channel,
// counted as a reply. It never blocks a worker: a client that does not
// read its answers (its socket buffer full) or is gone loses them.
static void chan_answer(fftd__server *s, stream_chan *ch, uint64_t tag,
    uint32_t slot, const uint64_t *times, int status, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

// times, when not NULL: the execution's received, started and finished
// CLOCK_MONOTONIC ns (fftd__chan_reply).
static void
chan_answer(fftd__server *s, stream_chan *ch, uint64_t tag, uint32_t slot,
    const uint64_t *times, int status, const char *fmt, ...)
{
	count_reply(s, ch->pipe, status);
	fftd__chan_reply r;
	r.status      = status;
	r.slot        = slot;
	r.tag         = tag;
	r.received_ns = times ? times[0] : 0;
	r.started_ns  = times ? times[1] : 0;
	r.finished_ns = times ? times[2] : 0;
	r.msg[0]      = '\0';
	if (status != FFTD_OK) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
		va_end(ap);
	}
	size_t len = offsetof(fftd__chan_reply, msg) + strlen(r.msg) + 1;
	if (send(ch->fd, &r, len, MSG_DONTWAIT | MSG_NOSIGNAL)
	    != (ssize_t) len) {
		fftd__log(FFTD_LOG_DEBUG,
		    "stream channel of client %u: answer %" PRIu64
		    " not delivered: %s",
		    ch->pipe, tag, strerror(errno));
	}
}

// job_answer_error answers an execution that failed or did not run, on
// its context or its stream channel (whose reference and unit of work it
// then gives back).
static void job_answer_error(fftd__server *s, fftd__ctx *c, stream_chan *ch,
    uint64_t tag, uint32_t slot, int status, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static void
job_answer_error(fftd__server *s, fftd__ctx *c, stream_chan *ch, uint64_t tag,
    uint32_t slot, int status, const char *fmt, ...)
{
	char    msg[240];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ch == NULL) {
		ctx_reply_error(c, status, "%s", msg);
		return;
	}
	chan_answer(s, ch, tag, slot, NULL, status, "%s", msg);
	chan_unref(s, ch);
	busy_done(s);
}

static void
session_close(fftd__server *s, uint32_t pipe)
{
	pthread_mutex_lock(&s->mtx);
	fftd__session **pp = &s->sessions;
	while (*pp != NULL && (*pp)->pipe != pipe) {
		pp = &(*pp)->next;
	}
	fftd__session *ss = *pp;
	if (ss != NULL) {
		*pp = ss->next;
	}
	pthread_mutex_unlock(&s->mtx);
	if (ss == NULL) {
		return;
	}
	// Its stream channels hang up (the poller then forgets them).
	pthread_mutex_lock(&s->mtx);
	for (stream_chan *ch = s->chans; ch != NULL; ch = ch->next) {
		if (ch->pipe == pipe) {
			shutdown(ch->fd, SHUT_RDWR);
		}
	}
	pthread_mutex_unlock(&s->mtx);
	// Queued work of a client that is gone is dropped, not run.
	int nq = cancel_all(s, pipe, 0, FFTD_ECLOSED);
	int n = 0, nb = 0;
	for (fftd__handle *h = ss->plans, *next; h != NULL; h = next) {
		next = h->next;
		handle_unref(s, h);
		n++;
	}
	for (fftd__shbuf *b = ss->bufs, *next; b != NULL; b = next) {
		next = b->next;
		shbuf_unref(s, b);
		nb++;
	}
	char f_client[32], f_pid[40];
	snprintf(f_client, sizeof(f_client), "FFTD_CLIENT=%u", pipe);
	snprintf(f_pid, sizeof(f_pid), "FFTD_CLIENT_PID=%" PRIu64, ss->pid);
	const char *const fields[]
	    = { f_client, f_pid, "FFTD_EVENT=disconnect", NULL };
	fftd__log_fields(FFTD_LOG_INFO, fields,
	    "client %u (pid %" PRIu64 ") disconnected; %d plan(s), %d "
	    "buffer(s) released, %d queued execution(s) dropped",
	    pipe, ss->pid, n, nb, nq);
	free(ss);
	atomic_fetch_sub(&s->n_sessions, 1);
}

// refuse keeps pipe p open to answer its requests FFTD_EREFUSED, or hangs
// up on it when too many refused ones are open.
static void
refuse(fftd__server *s, nng_pipe p, const char *why)
{
	refused_pipe *r    = calloc(1, sizeof(*r));
	bool          kept = false;
	pthread_mutex_lock(&s->mtx);
	if (r != NULL && atomic_load(&s->nrefused) < MAX_REFUSED) {
		r->pipe = (uint32_t) nng_pipe_id(p);
		snprintf(r->why, sizeof(r->why), "%s", why);
		r->next    = s->refused;
		s->refused = r;
		atomic_fetch_add(&s->nrefused, 1);
		kept = true;
	}
	pthread_mutex_unlock(&s->mtx);
	if (!kept) {
		free(r);
		nng_pipe_close(p);
	}
}

static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	fftd__server *s  = arg;
	uint32_t      id = (uint32_t) nng_pipe_id(p);
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		if (atomic_load(&s->stopping)) {
			nng_pipe_close(p); // shutting down: no new clients
			return;
		}
		char why[160];
		if (!fftd__remote_allowed(p, &s->cfg, why, sizeof(why))) {
			fftd__log(FFTD_LOG_WARN, "connection refused: %s", why);
			refuse(s, p, why);
			return;
		}
		// The session must exist before the pipe's first request: NNG
		// starts the protocol on a pipe (which may then receive and
		// answer requests) before it runs ADD_POST. REM_POST follows
		// ADD_PRE in every case, so the session is always closed.
		fftd__session *ss = calloc(1, sizeof(*ss));
		if (ss == NULL) {
			fftd__log(
			    FFTD_LOG_ERROR, "out of memory for a session");
			nng_pipe_close(p);
			return;
		}
		ss->pipe = id;
		// Peer credentials exist for ipc:// pipes only.
		ss->ipc = nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &ss->pid)
		        == 0
		    && nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &ss->uid)
		        == 0;
		pthread_mutex_lock(&s->mtx);
		ss->weight
		    = ss->ipc ? fftd__config_weight(&s->cfg, ss->uid) : 1.0;
		ss->next    = s->sessions;
		s->sessions = ss;
		pthread_mutex_unlock(&s->mtx);
		atomic_fetch_add(&s->n_sessions, 1);
		char f_client[32], f_pid[40], f_uid[40];
		snprintf(f_client, sizeof(f_client), "FFTD_CLIENT=%u", id);
		snprintf(
		    f_pid, sizeof(f_pid), "FFTD_CLIENT_PID=%" PRIu64, ss->pid);
		snprintf(
		    f_uid, sizeof(f_uid), "FFTD_CLIENT_UID=%" PRIu64, ss->uid);
		const char *const fields[]
		    = { f_client, f_pid, f_uid, "FFTD_EVENT=connect", NULL };
		fftd__log_fields(FFTD_LOG_INFO, fields,
		    "client %u connected (pid %" PRIu64 ", uid %" PRIu64 ")",
		    id, ss->pid, ss->uid);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		pthread_mutex_lock(&s->mtx);
		for (refused_pipe **pp = &s->refused; *pp != NULL;
		     pp                = &(*pp)->next) {
			if ((*pp)->pipe == id) {
				refused_pipe *r = *pp;
				*pp             = r->next;
				atomic_fetch_sub(&s->nrefused, 1);
				free(r);
				break;
			}
		}
		pthread_mutex_unlock(&s->mtx);
		session_close(s, id);
	}
}

// --- requests ----------------------------------------------------------------

static int
pick_algorithm(const fftd__backend *be, const char *want, const fftd__shape *sh,
    char out[16], char *msg, size_t msglen)
{
	(void) sh;
	if (want == NULL || want[0] == '\0' || strcmp(want, "auto") == 0) {
		snprintf(out, 16, "%s", be->algorithms[0]);
		return FFTD_OK;
	}
	for (const char *const *a = be->algorithms; *a != NULL; a++) {
		if (strcmp(*a, want) == 0) {
			snprintf(out, 16, "%s", want);
			return FFTD_OK;
		}
	}
	int n = snprintf(msg, msglen,
	    "algorithm \"%.32s\" is not served by the %s "
	    "backend (served:",
	    want, be->name);
	for (const char *const *a = be->algorithms;
	     *a != NULL && n > 0 && (size_t) n < msglen; a++) {
		n += snprintf(msg + n, msglen - (size_t) n, " %s", *a);
	}
	if (n > 0 && (size_t) n < msglen) {
		snprintf(msg + n, msglen - (size_t) n, ")");
	}
	return FFTD_EUNSUPPORTED;
}

static void
plan_job_run(fftd__worker *w, fftd__job *job)
{
	plan_job     *pj       = (plan_job *) job;
	fftd__handle *h        = pj->h;
	fftd__ctx    *c        = pj->ctx;
	fftd__server *s        = c->srv;
	char          msg[512] = "";
	free(pj);

	fftd__cache_entry *e = NULL;
	int rv = fftd__cache_acquire(fftd__worker_cache(w), &h->shape,
	    h->algorithm, &e, msg, sizeof(msg));
	if (rv == FFTD_OK) {
		atomic_store(&h->entries[h->home], e);
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, h->pipe);
	if (rv == FFTD_OK && ss != NULL) {
		atomic_fetch_add(&h->refs, 1); // the session's reference
		h->next   = ss->plans;
		ss->plans = h;
	} else if (ss != NULL) {
		ss->nplans--;
		ss->plan_bytes -= h->est_bytes;
	}
	pthread_mutex_unlock(&s->mtx);

	// Drop the job's reference before answering, so that a client that
	// asks for stats right after the answer sees the plan count settled.
	uint64_t id = h->id, in_bytes = h->shape.in.bytes;
	uint64_t out_bytes = h->shape.out.bytes;
	char     alg[16];
	memcpy(alg, h->algorithm, sizeof(alg));
	handle_unref(s, h);
	if (rv != FFTD_OK) {
		ctx_reply_error(c, rv, "%s", msg[0] ? msg : fftd_strerror(rv));
	} else if (ss == NULL) {
		ctx_reply_error(
		    c, FFTD_ECLOSED, "client went away while planning");
	} else {
		Fftd__Wire__Reply           r = FFTD__WIRE__REPLY__INIT;
		Fftd__Wire__PlanCreateReply pr
		    = FFTD__WIRE__PLAN_CREATE_REPLY__INIT;
		pr.plan_id      = id;
		pr.input_bytes  = in_bytes;
		pr.output_bytes = out_bytes;
		pr.algorithm    = alg;
		pr.device       = (uint32_t) fftd__worker_device(w)->index;
		r.body_case     = FFTD__WIRE__REPLY__BODY_PLAN_CREATE;
		r.plan_create   = &pr;
		ctx_reply(c, &r, 0, NULL);
	}
}

static void
handle_plan_create(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanCreate *pc)
{
	fftd__server  *s = c->srv;
	fftd_plan_desc d;
	fftd__shape    sh;
	char           msg[512];
	int rv = fftd__desc_from_wire(pc->desc, &d, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	pthread_mutex_lock(&s->mtx);
	fftd__limits lim       = s->limits;
	uint32_t     max_plans = s->max_plans;
	pthread_mutex_unlock(&s->mtx);
	rv = fftd__shape_resolve(&d, &lim, &sh, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	if (d.priority != FFTD_PRIORITY_BATCH
	    && d.priority != FFTD_PRIORITY_REALTIME) {
		ctx_reply_error(c, FFTD_EINVAL,
		    "priority = %d: must be batch (0) or realtime (1)",
		    (int) d.priority);
		return;
	}
	// Device: the one asked for, else the least loaded (executions may
	// later run on other devices; this is where it is planned first).
	fftd__worker **ws   = lane(s, d.priority == FFTD_PRIORITY_REALTIME);
	fftd__worker  *w    = NULL;
	int            home = 0;
	if (d.device >= 0) {
		for (int i = 0; i < s->nworkers; i++) {
			if (fftd__worker_device(ws[i])->index == d.device) {
				w    = ws[i];
				home = i;
			}
		}
		if (w == NULL) {
			ctx_reply_error(c, FFTD_ENODEVICE,
			    "device %d: no such device (this daemon serves %d)",
			    d.device, s->nworkers);
			return;
		}
	} else if (d.device != -1) {
		ctx_reply_error(c, FFTD_EINVAL,
		    "device = %d: must be a device index or -1", d.device);
		return;
	} else {
		w = ws[0];
		for (int i = 1; i < s->nworkers; i++) {
			if (fftd__worker_backlog_ns(ws[i])
			        < fftd__worker_backlog_ns(w)
			    || (fftd__worker_backlog_ns(ws[i])
			            == fftd__worker_backlog_ns(w)
			        && fftd__worker_load(ws[i])
			            < fftd__worker_load(w))) {
				w    = ws[i];
				home = i;
			}
		}
	}
	char alg[16];
	rv = pick_algorithm(fftd__worker_device(w)->backend, d.algorithm, &sh,
	    alg, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	fftd__handle *h  = calloc(1, sizeof(*h));
	plan_job     *pj = calloc(1, sizeof(*pj));
	if (h == NULL || pj == NULL) {
		free(h);
		free(pj);
		ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
		return;
	}
	fftd__device *dev = (fftd__device *) fftd__worker_device(w);
	uint64_t      est = dev->backend->plan_estimate != NULL
	         ? dev->backend->plan_estimate(dev, &sh, alg)
	         : 0;
	pthread_mutex_lock(&s->mtx);
	uint64_t       max_bytes = s->max_plan_bytes;
	fftd__session *ss        = find_session(s, pipe);
	bool           full      = ss != NULL && ss->nplans >= max_plans;
	bool           heavy
	    = ss != NULL && max_bytes != 0 && ss->plan_bytes + est > max_bytes;
	uint64_t held = ss != NULL ? ss->plan_bytes : 0;
	if (ss != NULL && !full && !heavy) {
		ss->nplans++;
		ss->plan_bytes += est;
	}
	pthread_mutex_unlock(&s->mtx);
	if (ss == NULL || full || heavy) {
		free(h);
		free(pj);
		if (ss == NULL) {
			ctx_reply_error(
			    c, FFTD_ECLOSED, "no session for this connection");
		} else if (full) {
			ctx_reply_error(c, FFTD_ELIMIT,
			    "this connection already holds %u plans, the limit",
			    max_plans);
		} else {
			ctx_reply_error(c, FFTD_ELIMIT,
			    "this plan needs about %.1f MiB; this connection's "
			    "plans hold %.1f MiB of its %.1f MiB "
			    "([limits] max_plan_bytes_per_client)",
			    (double) est / 1048576.0, (double) held / 1048576.0,
			    (double) max_bytes / 1048576.0);
		}
		return;
	}
	h->est_bytes = est;
	h->id        = atomic_fetch_add(&s->next_plan_id, 1);
	h->pipe      = pipe;
	h->home      = home;
	h->pinned    = d.device >= 0;
	h->realtime  = d.priority == FFTD_PRIORITY_REALTIME;
	h->shape     = sh;
	memcpy(h->algorithm, alg, sizeof(alg));
	atomic_store(&h->refs, 1); // the job's reference
	atomic_fetch_add(&s->n_plans, 1);
	pj->job.fn = plan_job_run;
	pj->ctx    = c;
	pj->h      = h;
	fftd__worker_post_plan(w, &pj->job);
}

// exec_cost_guess is the expected device time of one execution of h: its
// measured average, else a guess from its bytes (10 GB/s).
static uint64_t
exec_cost_guess(const fftd__handle *h)
{
	uint64_t est = atomic_load(&((fftd__handle *) h)->est_ns);
	if (est != 0) {
		return est;
	}
	return (h->shape.in.bytes + h->shape.out.bytes) / 10 + 1000;
}

// place picks the worker for an execution of h: its home when pinned, else
// the one whose queued work ends first, counting a planning cost where the
// plan is not made yet.
static int
place(fftd__server *s, const fftd__handle *h)
{
	if (h->pinned || s->nworkers == 1) {
		return h->home;
	}
	uint64_t       cost = exec_cost_guess(h);
	int            best = h->home;
	uint64_t       bval = UINT64_MAX;
	fftd__worker **ws   = lane(s, h->realtime);
	for (int i = 0; i < s->nworkers; i++) {
		uint64_t v = fftd__worker_backlog_ns(ws[i]) + cost;
		if (atomic_load(&((fftd__handle *) h)->entries[i]) == NULL) {
			v += 2000000 + cost; // planning there first
		}
		if (v < bval) {
			bval = v;
			best = i;
		}
	}
	return best;
}

static bool
overlaps(const void *a, uint64_t alen, const void *b, uint64_t blen)
{
	uintptr_t x = (uintptr_t) a, y = (uintptr_t) b;
	return x < y + blen && y < x + alen;
}

// exec_settle takes an execution off its client's books (in flight,
// queued bytes) and records how it went, before it is answered, so the
// client sees settled counts. status is FFTD_OK for an execution that ran.
static void
exec_settle(fftd__server *s, const exec_job *ej, int status, uint64_t queue_ns,
    uint64_t device_ns)
{
	const fftd__shape *sh = &ej->h->shape;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, ej->h->pipe);
	if (ss != NULL) {
		ss->st.inflight--;
		ss->queued_bytes -= ej->inline_bytes;
		if (status == FFTD_OK) {
			double q = (double) queue_ns * 1e-9;
			double d = (double) device_ns * 1e-9;
			ss->st.executes++;
			ss->st.bytes_in += sh->in.bytes;
			ss->st.bytes_out += sh->out.bytes;
			ss->st.queue_seconds += q;
			ss->st.device_seconds += d;
			ss->st.queue_hist[fftd__hist_bucket(q)]++;
			ss->st.device_hist[fftd__hist_bucket(d)]++;
		} else if (status == FFTD_ECANCELED || status == FFTD_ECLOSED) {
			ss->st.canceled++;
		} else if (status == FFTD_EDEADLINE) {
			ss->st.expired++;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (status == FFTD_ECANCELED || status == FFTD_ECLOSED) {
		atomic_fetch_add(&s->n_canceled, 1);
	} else if (status == FFTD_EDEADLINE) {
		atomic_fetch_add(&s->n_expired, 1);
	}
}

// exec_job_drop answers an execution that will not run (worker.h).
static void
exec_job_drop(fftd__worker *w, fftd__job *job, int status)
{
	(void) w;
	exec_job     *ej     = (exec_job *) job;
	fftd__ctx    *c      = ej->ctx;
	stream_chan  *ch     = ej->chan;
	fftd__server *s      = ej->srv;
	uint64_t      tag    = job->tag;
	uint32_t      slot   = ej->slot;
	uint64_t      waited = (fftd__mono_ns() - job->enqueue_ns) / 1000;
	exec_settle(s, ej, status, 0, 0);
	if (ej->req != NULL) {
		nng_msg_free(ej->req);
	}
	handle_unref(s, ej->h);
	shbuf_unref(s, ej->inb);
	shbuf_unref(s, ej->outb);
	uint64_t deadline_us = ej->deadline_us;
	free(ej);
	switch (status) {
	case FFTD_EDEADLINE:
		job_answer_error(s, c, ch, tag, slot, status,
		    "deadline of %" PRIu64 " us passed before the transform "
		    "could start (queued %" PRIu64 " us behind earlier work)",
		    deadline_us, waited);
		break;
	case FFTD_ECANCELED:
		job_answer_error(s, c, ch, tag, slot, status,
		    "canceled by the client before it "
		    "started");
		break;
	case FFTD_ECLOSED:
		job_answer_error(
		    s, c, ch, tag, slot, status, "client went away");
		break;
	default:
		job_answer_error(s, c, ch, tag, slot, status, "not run: %s",
		    fftd_strerror(status));
		break;
	}
}

static void exec_job_run(fftd__worker *w, fftd__job *job);

// exec_plan_run plans an execution's plan on the planner thread of the
// device it was placed on, then hands the execution back to the device's
// worker (exec_job_run), which runs it or answers the planning error.
static void
exec_plan_run(fftd__worker *w, fftd__job *job)
{
	exec_job     *ej = (exec_job *) job;
	fftd__handle *h  = ej->h;
	int           wi = fftd__worker_device(w)->index;
	ej->plan_rv      = FFTD_OK;
	ej->plan_msg[0]  = '\0';
	// Only this thread sets entries[wi] (planning is serial here).
	if (atomic_load(&h->entries[wi]) == NULL) {
		fftd__cache_entry *e = NULL;
		ej->plan_rv
		    = fftd__cache_acquire(fftd__worker_cache(w), &h->shape,
		        h->algorithm, &e, ej->plan_msg, sizeof(ej->plan_msg));
		if (ej->plan_rv == FFTD_OK) {
			atomic_store(&h->entries[wi], e);
		}
	}
	job->fn = exec_job_run;
	fftd__worker_post(w, job);
}

static void
exec_job_run(fftd__worker *w, fftd__job *job)
{
	exec_job           *ej          = (exec_job *) job;
	fftd__handle       *h           = ej->h;
	fftd__ctx          *c           = ej->ctx;
	stream_chan        *ch          = ej->chan;
	fftd__server       *s           = ej->srv;
	uint64_t            tag         = job->tag;
	uint32_t            slot        = ej->slot;
	uint64_t            received_ns = ej->received_ns;
	fftd__shbuf        *inb = ej->inb, *outb = ej->outb;
	const fftd__shape  *sh  = &h->shape;
	const fftd__device *dev = fftd__worker_device(w);
	void    *in     = inb ? (char *) inb->addr + ej->in_off : ej->payload;
	void    *dst    = outb ? (char *) outb->addr + ej->out_off : NULL;
	void    *tmp_in = NULL, *tmp_out = NULL;
	nng_msg *m        = NULL;
	void    *out      = NULL;
	char     msg[512] = "";
	int      rv       = FFTD_OK;
	uint64_t t_start = fftd__mono_ns(), t_exec = 0;
	int      wi = dev->index; // its place in s->workers

	pthread_mutex_lock(&s->mtx);
	bool alive = find_session(s, h->pipe) != NULL;
	pthread_mutex_unlock(&s->mtx);
	if (!alive) {
		// Nobody will read the answer; skip the work.
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "client went away");
		goto done;
	}
	fftd__cache_entry *entry = atomic_load(&h->entries[wi]);
	if (entry == NULL && !ej->planned && fftd__worker_on_planner(w)) {
		// First execution of this plan on this device: it is planned
		// on the device's planner thread and comes back here.
		ej->planned = true;
		job->fn     = exec_plan_run;
		fftd__worker_post_plan(w, job);
		return;
	}
	if (entry == NULL && ej->planned) {
		rv = ej->plan_rv != FFTD_OK ? ej->plan_rv : FFTD_EINTERNAL;
		snprintf(msg, sizeof(msg), "%s", ej->plan_msg);
	}
	if (entry == NULL) {
		// First execution of this plan on this device: plan it here
		// (when the backend plans on the worker).
		if (!ej->planned) {
			rv = fftd__cache_acquire(fftd__worker_cache(w), sh,
			    h->algorithm, &entry, msg, sizeof(msg));
		}
		if (rv != FFTD_OK && !ej->moved && wi != h->home) {
			// This device cannot take it (memory): the plan's
			// home device can, as it planned it.
			fftd__log(FFTD_LOG_DEBUG,
			    "plan %" PRIu64 " cannot be made on %s (%s); "
			    "running it on its home device",
			    h->id, dev->name, msg);
			ej->moved = true;
			fftd__worker_post(
			    lane(s, h->realtime)[h->home], &ej->job);
			return;
		}
		if (rv != FFTD_OK) {
			goto done;
		}
		atomic_store(&h->entries[wi], entry);
	}
	if (inb != NULL
	    && (dev->backend->aligned_input
	        || (dst != NULL
	            && overlaps(in, sh->in.bytes, dst, sh->out.bytes)))) {
		// The client's input must survive: FFTW's C2R overwrites its
		// input, and an output that overlaps it would be written while
		// it is still read. One copy keeps both safe.
		tmp_in = aligned_alloc(FFTD__WIRE_ALIGN,
		    (sh->in.bytes + FFTD__WIRE_ALIGN - 1)
		        & ~(uint64_t) (FFTD__WIRE_ALIGN - 1));
		if (tmp_in == NULL) {
			rv = FFTD_ENOMEM;
			goto done;
		}
		memcpy(tmp_in, in, (size_t) sh->in.bytes);
		in = tmp_in;
	} else if (inb == NULL && dev->backend->aligned_input
	    && ((uintptr_t) in % FFTD__WIRE_ALIGN)) {
		// The frame keeps at least 64 bytes before the payload, so an
		// aligned place always exists in front of it.
		void *to = (void *) ((uintptr_t) in
		    & ~(uintptr_t) (FFTD__WIRE_ALIGN - 1));
		memmove(to, in, (size_t) sh->in.bytes);
		in = to;
	}
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	if (dst == NULL) {
		rv = fftd__msg_build(&m, &r.base, sh->out.bytes, &out);
	} else if (sh->out.dense) {
		// A stream channel's answer is no NNG message.
		rv  = ch ? FFTD_OK : fftd__msg_build(&m, &r.base, 0, NULL);
		out = dst; // straight into the client's pages
	} else {
		// Only the layout's elements may change in the client's buffer.
		rv  = ch ? FFTD_OK : fftd__msg_build(&m, &r.base, 0, NULL);
		out = tmp_out = aligned_alloc(FFTD__WIRE_ALIGN,
		    (sh->out.bytes + FFTD__WIRE_ALIGN - 1)
		        & ~(uint64_t) (FFTD__WIRE_ALIGN - 1));
	}
	if (rv != FFTD_OK || out == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg),
		    "daemon out of memory for a %" PRIu64 "-byte result",
		    sh->out.bytes);
		goto done;
	}
	uint64_t t0 = fftd__mono_ns();
	rv          = dev->backend->execute((fftd__device *) dev,
	             fftd__cache_plan(entry), sh, in, out, msg, sizeof(msg));
	t_exec      = fftd__mono_ns() - t0; // the transform's own, for est_ns
	if (rv == FFTD_OK && tmp_out != NULL) {
		fftd__side_copy(dst, tmp_out, &sh->out, sh->rank, sh->batch);
	}
	if (rv == FFTD_OK) {
		uint64_t est = atomic_load(&h->est_ns);
		atomic_store(&h->est_ns, est ? (3 * est + t_exec) / 4 : t_exec);
	} else {
		char f_dev[80], f_err[48];
		snprintf(f_dev, sizeof(f_dev), "FFTD_DEVICE=%s", dev->name);
		snprintf(
		    f_err, sizeof(f_err), "FFTD_ERROR=%s", fftd_err_name(rv));
		const char *const fields[]
		    = { f_dev, f_err, "FFTD_EVENT=execute_failed", NULL };
		fftd__log_fields(FFTD_LOG_WARN, fields,
		    "execute on %s failed: %s: %s", dev->name,
		    fftd_err_name(rv), msg);
	}
done:
	// Device time is the worker's time on this request, staging and reply
	// included: what the scheduler charges is what the statistics say.
	uint64_t t_end = fftd__mono_ns();
	t_exec         = t_end - t_start;
	fftd__worker_charge(w, t_exec);
	exec_settle(s, ej, rv, t_start - job->enqueue_ns, t_exec);
	if (ej->req != NULL) {
		nng_msg_free(ej->req);
	}
	free(ej);
	free(tmp_in);
	free(tmp_out);
	uint64_t out_bytes = sh->out.bytes;
	uint32_t pipe      = h->pipe;
	// References go before the answer, so the client sees settled counts.
	handle_unref(s, h);
	shbuf_unref(s, inb);
	shbuf_unref(s, outb);
	if (rv != FFTD_OK) {
		if (m != NULL) {
			nng_msg_free(m);
		}
		job_answer_error(s, c, ch, tag, slot, rv, "%s",
		    msg[0] ? msg : fftd_strerror(rv));
	} else {
		atomic_fetch_add(&s->n_executes, 1);
		atomic_fetch_add(&s->n_bytes_out, out_bytes);
		if (ch != NULL) {
			const uint64_t times[3]
			    = { received_ns, t_start, t_end };
			chan_answer(s, ch, tag, slot, times, FFTD_OK, "%s", "");
			chan_unref(s, ch);
			busy_done(s);
		} else {
			count_reply(s, pipe, FFTD_OK);
			ctx_send(c, m);
		}
	}
}

// session_plan and session_buf look up session ss's (NULL: none) plan
// or buffer id, taking no reference (server lock held).
static fftd__handle *
session_plan(fftd__session *ss, uint64_t id)
{
	fftd__handle *h = ss ? ss->plans : NULL;
	while (h != NULL && h->id != id) {
		h = h->next;
	}
	return h;
}

static fftd__shbuf *
session_buf(fftd__session *ss, uint64_t id)
{
	fftd__shbuf *b = ss ? ss->bufs : NULL;
	while (b != NULL && b->id != id) {
		b = b->next;
	}
	return b;
}

// find_shbuf returns session ss's buffer id with one more reference, or
// NULL (server lock held).
static fftd__shbuf *
find_shbuf(fftd__session *ss, uint64_t id)
{
	fftd__shbuf *b = session_buf(ss, id);
	if (b != NULL) {
		atomic_fetch_add(&b->refs, 1);
	}
	return b;
}

// check_range validates an array of `bytes` bytes at `off` in buffer b,
// for elements of elem_size bytes.
static int
check_range(const fftd__shbuf *b, uint64_t off, uint64_t bytes,
    size_t elem_size, const char *side, char *msg, size_t msglen)
{
	if (bytes > b->size || off > b->size - bytes) {
		snprintf(msg, msglen,
		    "%sput of %" PRIu64 " bytes at offset %" PRIu64
		    " does not fit buffer %" PRIu64 " (%zu bytes)",
		    side, bytes, off, b->id, b->size);
		return FFTD_EINVAL;
	}
	if (off % elem_size) {
		snprintf(msg, msglen,
		    "%sput offset %" PRIu64 " is not a multiple of the element "
		    "size %zu",
		    side, off, elem_size);
		return FFTD_EINVAL;
	}
	return FFTD_OK;
}

// exec_job_init fills the parts of an execution that do not depend on
// where its arrays are or where its answer goes.
static void
exec_job_init(exec_job *ej, fftd__server *s, fftd__handle *h, uint32_t pipe,
    uint64_t tag, uint64_t deadline_us)
{
	ej->job.fn          = exec_job_run;
	ej->job.drop        = exec_job_drop;
	ej->job.flow        = pipe;
	ej->job.realtime    = h->realtime;
	ej->job.tag         = tag;
	ej->job.cost_ns     = exec_cost_guess(h);
	ej->job.deadline_ns = deadline_us == 0 ? 0
	                                       : fftd__mono_ns()
	        + (deadline_us > UINT64_MAX / 4000 ? UINT64_MAX / 4
	                                           : deadline_us * 1000);
	ej->srv             = s;
	ej->h               = h;
	ej->deadline_us     = deadline_us;
}

// exec_admit checks an execution against its client's limits and posts it
// to a device of its lane. Admission and the post happen under the server
// lock, so a client that disconnects now either finds the job queued (and
// drops it) or the job finds no session. A stream channel's job counts as
// accepted work for the drain from here on.
static int
exec_admit(
    fftd__server *s, uint32_t pipe, exec_job *ej, char *msg, size_t msglen)
{
	fftd__handle *h  = ej->h;
	int           wi = place(s, h);
	int           rv = FFTD_OK;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, msglen, "client went away");
	} else if (ss->st.inflight >= s->cfg.max_inflight_per_client) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "this connection has %u executions in flight, the "
		    "limit (limits.max_inflight_per_client)",
		    ss->st.inflight);
	} else if (ss->st.inflight > 0
	    && ss->queued_bytes + ej->inline_bytes
	        > s->cfg.max_queued_bytes_per_client) {
		rv = FFTD_ELIMIT;
		snprintf(msg, msglen,
		    "this connection has %" PRIu64
		    " input bytes queued; %" PRIu64
		    " more exceed the limit %" PRIu64
		    " (limits.max_queued_bytes_per_client)",
		    ss->queued_bytes, ej->inline_bytes,
		    s->cfg.max_queued_bytes_per_client);
	} else {
		ss->st.inflight++;
		ss->queued_bytes += ej->inline_bytes;
		ej->job.weight = ss->weight;
		atomic_fetch_add(&s->n_bytes_in, h->shape.in.bytes);
		if (ej->chan != NULL) {
			atomic_fetch_add(&s->busy, 1);
		}
		fftd__worker_post(lane(s, h->realtime)[wi], &ej->job);
	}
	pthread_mutex_unlock(&s->mtx);
	return rv;
}

static void
handle_execute(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Execute *ex,
    nng_msg *req, const fftd__frame *f)
{
	fftd__server *s   = c->srv;
	fftd__shbuf  *inb = NULL, *outb = NULL;
	int           rv = FFTD_OK;
	char          msg[512];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	fftd__handle  *h  = session_plan(ss, ex->plan_id);
	if (h != NULL) {
		atomic_fetch_add(&h->refs, 1);
		if (ex->in_buffer != 0
		    && (inb = find_shbuf(ss, ex->in_buffer)) == NULL) {
			rv = FFTD_EINVAL;
			snprintf(msg, sizeof(msg),
			    "buffer %" PRIu64
			    " does not exist on this connection",
			    ex->in_buffer);
		}
		if (ex->out_buffer != 0
		    && (outb = find_shbuf(ss, ex->out_buffer)) == NULL) {
			rv = FFTD_EINVAL;
			snprintf(msg, sizeof(msg),
			    "buffer %" PRIu64
			    " does not exist on this connection",
			    ex->out_buffer);
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (h == NULL) {
		nng_msg_free(req);
		ctx_reply_error(c, FFTD_ENOPLAN,
		    "plan %" PRIu64 " does not exist on this connection",
		    ex->plan_id);
		return;
	}
	const fftd__shape *sh = &h->shape;
	if (rv == FFTD_OK && inb != NULL) {
		rv = f->payload_len != 0 ? FFTD_EPROTO : FFTD_OK;
		snprintf(msg, sizeof(msg), "input both in a buffer and inline");
		if (rv == FFTD_OK) {
			rv = check_range(inb, ex->in_offset, sh->in.bytes,
			    sh->in.elem_size, "in", msg, sizeof(msg));
		}
	} else if (rv == FFTD_OK && f->payload_len != sh->in.bytes) {
		rv = FFTD_ESIZE;
		snprintf(msg, sizeof(msg),
		    "payload is %" PRIu64
		    " bytes; the plan's input is %" PRIu64,
		    f->payload_len, sh->in.bytes);
	}
	if (rv == FFTD_OK && outb != NULL) {
		rv = check_range(outb, ex->out_offset, sh->out.bytes,
		    sh->out.elem_size, "out", msg, sizeof(msg));
	}
	exec_job *ej = NULL;
	if (rv == FFTD_OK && (ej = calloc(1, sizeof(*ej))) == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, sizeof(msg), "daemon out of memory");
	}
	if (rv == FFTD_OK) {
		exec_job_init(ej, s, h, pipe, ex->tag, ex->deadline_us);
		ej->ctx          = c;
		ej->req          = req;
		ej->payload      = f->payload;
		ej->inb          = inb;
		ej->outb         = outb;
		ej->in_off       = ex->in_offset;
		ej->out_off      = ex->out_offset;
		ej->inline_bytes = f->payload_len;
		rv               = exec_admit(s, pipe, ej, msg, sizeof(msg));
		if (rv == FFTD_OK) {
			return;
		}
		free(ej);
	}
	handle_unref(s, h);
	shbuf_unref(s, inb);
	shbuf_unref(s, outb);
	nng_msg_free(req);
	ctx_reply_error(c, rv, "%s", msg);
}

// --- shared-memory buffers ---------------------------------------------------

// new_token makes a token for a descriptor hand-over, or answers why not
// (false): the daemon does not offer `what`, or has no randomness.
static bool
new_token(fftd__ctx *c, bool offered, const char *what,
    uint8_t token[FFTD__FDSOCK_TOKEN])
{
	if (!offered) {
		ctx_reply_error(c, FFTD_EUNSUPPORTED,
		    "this daemon offers no %s (no ipc:// listener)", what);
		return false;
	}
	if (getrandom(token, FFTD__FDSOCK_TOKEN, 0) != FFTD__FDSOCK_TOKEN) {
		ctx_reply_error(c, FFTD_ESYSERR, "no randomness for a token");
		return false;
	}
	return true;
}

// pending_add lists a new hand-over of session ss (room checked, server
// lock held): token set, everything else zero.
static pending_token *
pending_add(fftd__session *ss, const uint8_t *token)
{
	pending_token *pt = &ss->pending[ss->npending++];
	memset(pt, 0, sizeof(*pt));
	memcpy(pt->token, token, sizeof(pt->token));
	return pt;
}

// reply_token answers a BufferRegister or StreamOpen: with status rv and
// msg when it is refused, else the token to send with the descriptor and
// where to send it.
static void
reply_token(
    fftd__ctx *c, int rv, const char *msg, const uint8_t *token, bool stream)
{
	if (rv != FFTD_OK) {
		ctx_reply_error(c, rv, "%s", msg);
		return;
	}
	Fftd__Wire__Reply               r = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__BufferRegisterReply rr
	    = FFTD__WIRE__BUFFER_REGISTER_REPLY__INIT;
	rr.token.data = (uint8_t *) token;
	rr.token.len  = FFTD__FDSOCK_TOKEN;
	rr.fd_socket  = c->srv->fd_path;
	if (stream) {
		r.body_case   = FFTD__WIRE__REPLY__BODY_STREAM_OPEN;
		r.stream_open = &rr;
	} else {
		r.body_case       = FFTD__WIRE__REPLY__BODY_BUFFER_REGISTER;
		r.buffer_register = &rr;
	}
	ctx_reply(c, &r, 0, NULL);
}

// over_count says whether session ss may have one more shared buffer (or
// stream channel): FFTD_OK, or FFTD_ELIMIT with why in msg when its
// connection or its user (all of the uid's ipc connections) holds the
// [limits] number already. Each buffer is a mapping and each channel a
// descriptor in the daemon, both finite (vm.max_map_count, RLIMIT_NOFILE).
// Server lock held.
static int
over_count(
    fftd__server *s, fftd__session *ss, bool streams, char *msg, size_t len)
{
	const char *what     = streams ? "stream channels" : "shared buffers";
	uint64_t    per_conn = streams ? s->cfg.max_streams_per_client
	                               : s->cfg.max_buffers_per_client;
	uint64_t    per_user = streams ? s->cfg.max_streams_per_user
	                               : s->cfg.max_buffers_per_user;
	uint64_t    mine     = streams ? (uint64_t) ss->nchans : ss->nbufs;
	if (mine >= per_conn) {
		snprintf(msg, len,
		    "this connection has %" PRIu64 " %s, the limit ([limits] "
		    "max_%s_per_client)",
		    mine, what, streams ? "streams" : "buffers");
		return FFTD_ELIMIT;
	}
	uint64_t user = 0;
	for (fftd__session *t = s->sessions; t != NULL; t = t->next) {
		if (t->ipc && t->uid == ss->uid) {
			user += streams ? (uint64_t) t->nchans : t->nbufs;
		}
	}
	if (user >= per_user) {
		snprintf(msg, len,
		    "user %" PRIu64 " has %" PRIu64 " %s, the limit ([limits] "
		    "max_%s_per_user)",
		    ss->uid, user, what, streams ? "streams" : "buffers");
		return FFTD_ELIMIT;
	}
	return FFTD_OK;
}

static void
handle_buffer_register(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRegister *br)
{
	fftd__server *s = c->srv;
	uint8_t       token[FFTD__FDSOCK_TOKEN];
	if (!new_token(c, s->fdsock != NULL, "shared memory", token)) {
		return;
	}
	int  rv = FFTD_OK;
	char msg[256];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss    = find_session(s, pipe);
	uint64_t       limit = s->max_buffer_bytes;
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "no session for this connection");
	} else if (!ss->ipc) {
		rv = FFTD_EUNSUPPORTED;
		snprintf(msg, sizeof(msg),
		    "shared memory needs an ipc:// connection");
	} else if (br->bytes == 0 || br->bytes > limit
	    || ss->buf_bytes > limit - br->bytes) {
		rv = br->bytes == 0 ? FFTD_EINVAL : FFTD_ELIMIT;
		snprintf(msg, sizeof(msg),
		    "%" PRIu64
		    " more buffer bytes; this connection has %" PRIu64
		    " of its limit %" PRIu64,
		    br->bytes, ss->buf_bytes, limit);
	} else if (ss->npending >= MAX_PENDING_TOKENS) {
		rv = FFTD_ELIMIT;
		snprintf(
		    msg, sizeof(msg), "too many buffer registrations pending");
	} else if ((rv = over_count(s, ss, false, msg, sizeof(msg)))
	    == FFTD_OK) {
		pending_add(ss, token)->bytes = br->bytes;
		ss->buf_bytes += br->bytes;
		ss->nbufs++;
	}
	pthread_mutex_unlock(&s->mtx);
	reply_token(c, rv, msg, token, false);
}

static void
handle_buffer_release(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRelease *br)
{
	fftd__server *s = c->srv;
	fftd__shbuf  *b = NULL;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	for (fftd__shbuf **pp = ss ? &ss->bufs : NULL; pp && *pp;
	     pp               = &(*pp)->next) {
		if ((*pp)->id == br->buffer_id) {
			b   = *pp;
			*pp = b->next;
			ss->buf_bytes -= b->size;
			ss->nbufs--;
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (b == NULL) {
		ctx_reply_error(c, FFTD_EINVAL,
		    "buffer %" PRIu64 " does not exist on this connection",
		    br->buffer_id);
		return;
	}
	shbuf_unref(s, b);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	ctx_reply(c, &r, 0, NULL);
}

// --- stream channels ---------------------------------------------------------

// handle_stream_open checks what a stream channel will use (the plan, the
// buffer, every slot inside it) and answers a token for its socket.
static void
handle_stream_open(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__StreamOpen *so)
{
	fftd__server *s = c->srv;
	uint8_t       token[FFTD__FDSOCK_TOKEN];
	if (!new_token(c, s->fdsock != NULL && s->chanpoll != NULL,
	        "stream channels", token)) {
		return;
	}
	int  rv = FFTD_OK;
	char msg[256];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	fftd__handle  *h  = session_plan(ss, so->plan_id);
	fftd__shbuf   *b  = session_buf(ss, so->buffer_id);
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "no session for this connection");
	} else if (!ss->ipc) {
		rv = FFTD_EUNSUPPORTED;
		snprintf(msg, sizeof(msg),
		    "stream channels need an ipc:// connection");
	} else if (h == NULL) {
		rv = FFTD_ENOPLAN;
		snprintf(msg, sizeof(msg),
		    "plan %" PRIu64 " does not exist on this connection",
		    so->plan_id);
	} else if (b == NULL) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "buffer %" PRIu64 " does not exist on this connection",
		    so->buffer_id);
	} else if (so->depth == 0 || so->slot_bytes == 0
	    || so->slot_bytes > b->size / so->depth) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "%u slots of %" PRIu64 " bytes do not fit buffer %" PRIu64
		    " (%zu bytes)",
		    so->depth, so->slot_bytes, b->id, b->size);
	} else if (so->out_offset < h->shape.in.bytes
	    || so->out_offset > so->slot_bytes
	    || h->shape.out.bytes > so->slot_bytes - so->out_offset
	    || so->slot_bytes % 64 || so->out_offset % 64) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "a slot of %" PRIu64 " bytes with the output at %" PRIu64
		    " cannot hold the plan's input (%" PRIu64
		    " bytes) and output (%" PRIu64
		    " bytes) apart, 64-byte aligned",
		    so->slot_bytes, so->out_offset, h->shape.in.bytes,
		    h->shape.out.bytes);
	} else if (ss->npending >= MAX_PENDING_TOKENS) {
		rv = FFTD_ELIMIT;
		snprintf(msg, sizeof(msg), "too many hand-overs pending");
	} else if ((rv = over_count(s, ss, true, msg, sizeof(msg)))
	    == FFTD_OK) {
		pending_token *pt = pending_add(ss, token);
		pt->stream        = true;
		pt->plan_id       = so->plan_id;
		pt->buffer_id     = so->buffer_id;
		pt->depth         = so->depth;
		pt->slot_bytes    = so->slot_bytes;
		pt->out_off       = so->out_offset;
	}
	pthread_mutex_unlock(&s->mtx);
	reply_token(c, rv, msg, token, true);
}

// stream_attach makes the channel for a stream token whose socket arrived
// (fd socket's thread; session ss's pending entry i, server lock held).
static int
stream_attach(fftd__server *s, fftd__session *ss, int i, int fd,
    stream_chan **chp, char *msg, size_t msglen)
{
	int       type = 0, domain = 0;
	socklen_t tl = sizeof(type), dl = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0
	    || type != SOCK_SEQPACKET
	    || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) != 0
	    || domain != AF_UNIX) {
		snprintf(msg, msglen,
		    "a stream channel must be an AF_UNIX SOCK_SEQPACKET "
		    "socket");
		return FFTD_EINVAL;
	}
	fftd__handle *h = session_plan(ss, ss->pending[i].plan_id);
	fftd__shbuf  *b = session_buf(ss, ss->pending[i].buffer_id);
	if (h == NULL || b == NULL) {
		snprintf(msg, msglen,
		    "the stream's plan or buffer was released meanwhile");
		return FFTD_EINVAL;
	}
	int rv = over_count(s, ss, true, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	stream_chan *ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		snprintf(msg, msglen, "daemon out of memory");
		return FFTD_ENOMEM;
	}
	int cfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (cfd < 0) {
		int e = errno;
		free(ch);
		snprintf(msg, msglen, "no descriptor for the channel: %s",
		    strerror(e));
		return FFTD_ESYSERR + e;
	}
	ch->fd         = cfd;
	ch->pipe       = ss->pipe;
	ch->h          = h;
	ch->b          = b;
	ch->depth      = ss->pending[i].depth;
	ch->slot_bytes = ss->pending[i].slot_bytes;
	ch->out_off    = ss->pending[i].out_off;
	atomic_fetch_add(&h->refs, 1);
	atomic_fetch_add(&b->refs, 1);
	atomic_store(&ch->refs, 1); // the poller's
	ch->next = s->chans;
	s->chans = ch;
	ss->nchans++;
	*chp = ch;
	return FFTD_OK;
}

// chan_packet runs one submission of a stream channel (poller thread).
static void
chan_packet(void *arg, void *chan, const void *pkt, size_t len)
{
	fftd__server     *s   = arg;
	stream_chan      *ch  = chan;
	uint64_t          now = fftd__mono_ns();
	fftd__chan_submit sub;
	char              why[160];
	int               prv = fftd__chan_submit_parse(
	                  pkt, len, ch->depth, &sub, why, sizeof(why));
	if (prv == FFTD_EPROTO) {
		chan_answer(s, ch, 0, 0, NULL, prv, "%s", why);
		return;
	}
	if (atomic_load(&s->stopping)) {
		chan_answer(s, ch, sub.tag, sub.slot, NULL, FFTD_ESHUTDOWN,
		    "the daemon is shutting down; request not run");
		return;
	}
	if (prv != FFTD_OK) {
		chan_answer(s, ch, sub.tag, sub.slot, NULL, prv, "%s", why);
		return;
	}
	exec_job *ej = calloc(1, sizeof(*ej));
	if (ej == NULL) {
		chan_answer(s, ch, sub.tag, sub.slot, NULL, FFTD_ENOMEM,
		    "daemon out of memory");
		return;
	}
	atomic_fetch_add(&ch->h->refs, 1);
	atomic_fetch_add(&ch->b->refs, 2);
	atomic_fetch_add(&ch->refs, 1);
	exec_job_init(ej, s, ch->h, ch->pipe, sub.tag, sub.deadline_us);
	ej->chan        = ch;
	ej->slot        = sub.slot;
	ej->received_ns = now;
	ej->inb         = ch->b;
	ej->outb        = ch->b;
	ej->in_off      = (uint64_t) sub.slot * ch->slot_bytes;
	ej->out_off     = ej->in_off + ch->out_off;
	char msg[240];
	int  rv = exec_admit(s, ch->pipe, ej, msg, sizeof(msg));
	if (rv != FFTD_OK) {
		free(ej);
		handle_unref(s, ch->h);
		shbuf_unref(s, ch->b);
		shbuf_unref(s, ch->b);
		chan_answer(s, ch, sub.tag, sub.slot, NULL, rv, "%s", msg);
		chan_unref(s, ch);
	}
}

// chan_hangup forgets a stream channel whose client hung up or whose
// session closed (poller thread).
static void
chan_hangup(void *arg, void *chan)
{
	fftd__server *s  = arg;
	stream_chan  *ch = chan;
	pthread_mutex_lock(&s->mtx);
	for (stream_chan **pp = &s->chans; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	fftd__session *ss = find_session(s, ch->pipe);
	if (ss != NULL) {
		ss->nchans--;
	}
	pthread_mutex_unlock(&s->mtx);
	chan_unref(s, ch);
}

// on_fd runs on the fd socket's thread: it checks the token and the
// sender, maps the descriptor, pins it, and gives the buffer to its session.
static int
on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen)
{
	fftd__server *s     = arg;
	uint32_t      pipe  = 0;
	bool          found = false, cred_ok = false;
	stream_chan  *ch  = NULL;
	int           srv = FFTD_OK;
	pthread_mutex_lock(&s->mtx);
	for (fftd__session *ss = s->sessions; ss != NULL && !found;
	     ss                = ss->next) {
		for (int i = 0; i < ss->npending; i++) {
			if (memcmp(
			        ss->pending[i].token, token, FFTD__FDSOCK_TOKEN)
			    != 0) {
				continue;
			}
			found   = true;
			cred_ok = ss->pid == (uint64_t) peer->pid
			    && ss->uid == (uint64_t) peer->uid
			    && ss->pending[i].bytes == bytes;
			if (cred_ok && ss->pending[i].stream) {
				srv = stream_attach(
				    s, ss, i, fd, &ch, msg, msglen);
				ss->pending[i] = ss->pending[--ss->npending];
			} else if (cred_ok) {
				// The token is spent; its bytes stay promised
				// until the buffer exists or fails below.
				ss->pending[i] = ss->pending[--ss->npending];
				pipe           = ss->pipe;
			}
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (!found || !cred_ok) {
		snprintf(msg, msglen, "%s",
		    !found ? "unknown token"
		           : "sender or size does not match the token's "
		             "connection");
		return FFTD_EINVAL;
	}
	if (srv != FFTD_OK || ch != NULL) {
		// A stream channel: watched from now on (or not made).
		if (srv == FFTD_OK
		    && (srv = fftd__chanpoll_add(s->chanpoll, ch->fd, ch))
		        != FFTD_OK) {
			snprintf(
			    msg, msglen, "cannot watch the stream channel");
			chan_hangup(s, ch);
		}
		*id = 0;
		return srv;
	}
	int          rv = FFTD_OK;
	struct stat  st;
	int          seals = fcntl(fd, F_GET_SEALS);
	fftd__shbuf *b     = NULL;
	// A buffer that could shrink under our mapping would fault the
	// daemon (SIGBUS): only memfds sealed against shrinking are taken.
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
	    || (uint64_t) st.st_size < bytes) {
		rv = FFTD_EINVAL;
		snprintf(msg, msglen,
		    "descriptor is not a file of %" PRIu64 " bytes", bytes);
	} else if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		rv = FFTD_EINVAL;
		snprintf(msg, msglen,
		    "buffer must be a memfd sealed against "
		    "shrinking (F_SEAL_SHRINK)");
	} else if ((b = calloc(1, sizeof(*b))) == NULL) {
		rv = FFTD_ENOMEM;
		snprintf(msg, msglen, "daemon out of memory");
	} else {
		b->size = (size_t) bytes;
		b->addr = mmap(
		    NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (b->addr == MAP_FAILED) {
			rv = FFTD_ESYSERR + errno;
			snprintf(msg, msglen, "mmap: %s", strerror(errno));
			free(b);
			b = NULL;
		}
	}
	fftd__device *dev0
	    = (fftd__device *) fftd__worker_device(s->workers[0]);
	if (rv == FFTD_OK && dev0->backend->host_register) {
		// Here, on the fd socket's thread: pinning a large buffer takes
		// long, and no device's queue should wait for it.
		b->dev = dev0;
		rv     = dev0->backend->host_register(
		        dev0, b->addr, b->size, msg, msglen);
		b->pinned = rv == FFTD_OK;
	}
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	if (ss != NULL && rv == FFTD_OK) {
		b->id = atomic_fetch_add(&s->next_buf_id, 1);
		atomic_store(&b->refs, 1);
		b->next  = ss->bufs;
		ss->bufs = b;
		*id      = b->id;
	} else if (ss != NULL) {
		ss->buf_bytes -= bytes;
		ss->nbufs--;
	}
	pthread_mutex_unlock(&s->mtx);
	if (rv == FFTD_OK && ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, msglen, "client went away");
	}
	if (rv != FFTD_OK && b != NULL) {
		atomic_store(&b->refs, 1);
		shbuf_unref(s, b);
	}
	return rv;
}

static void
handle_plan_destroy(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanDestroy *pd)
{
	fftd__server *s = c->srv;
	fftd__handle *h = NULL;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = find_session(s, pipe);
	for (fftd__handle **pp = ss ? &ss->plans : NULL; pp && *pp;
	     pp                = &(*pp)->next) {
		if ((*pp)->id == pd->plan_id) {
			h   = *pp;
			*pp = h->next;
			ss->nplans--;
			ss->plan_bytes -= h->est_bytes;
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	if (h == NULL) {
		ctx_reply_error(c, FFTD_ENOPLAN,
		    "plan %" PRIu64 " does not exist on this connection",
		    pd->plan_id);
		return;
	}
	handle_unref(s, h);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	ctx_reply(c, &r, 0, NULL);
}

static void
handle_cancel(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Cancel *cr)
{
	fftd__server *s = c->srv;
	if (cr->tag == 0) {
		ctx_reply_error(c, FFTD_EINVAL, "cancel needs a request tag");
		return;
	}
	int n = cancel_all(s, pipe, cr->tag, FFTD_ECANCELED);
	if (n == 0) {
		ctx_reply_error(c, FFTD_EBUSY,
		    "request %" PRIu64 " is not queued (started, answered or "
		    "unknown)",
		    cr->tag);
		return;
	}
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	ctx_reply(c, &r, 0, NULL);
}

static void
handle_hello(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Hello *hello)
{
	fftd__server *s = c->srv;
	if (hello->protocol_version != FFTD_PROTOCOL_VERSION) {
		ctx_reply_error(c, FFTD_EVERSION,
		    "client speaks protocol %u; this daemon speaks %u",
		    hello->protocol_version, FFTD_PROTOCOL_VERSION);
		return;
	}
	Fftd__Wire__Reply      r  = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__HelloReply hr = FFTD__WIRE__HELLO_REPLY__INIT;
	Fftd__Wire__Limits     lm = FFTD__WIRE__LIMITS__INIT;
	Fftd__Wire__Device     devs[FFTD_MAX_DEVICES];
	Fftd__Wire__Device    *pdevs[FFTD_MAX_DEVICES];
	const char            *algs[FFTD_MAX_ALGORITHMS];
	Fftd__Wire__Precision  precs[3] = { FFTD__WIRE__PRECISION__F64,
		 FFTD__WIRE__PRECISION__F32, FFTD__WIRE__PRECISION__F16 };
	size_t                 nd = 0, na = 0;
	bool                   f16 = false;
	for (int i = 0; i < s->nworkers && nd < FFTD_MAX_DEVICES; i++) {
		const fftd__device *dv = fftd__worker_device(s->workers[i]);
		Fftd__Wire__Device  d0 = FFTD__WIRE__DEVICE__INIT;
		devs[nd]               = d0;
		devs[nd].index         = (uint32_t) dv->index;
		devs[nd].name          = (char *) dv->name;
		devs[nd].backend       = (char *) dv->backend->name;
		devs[nd].memory_bytes  = dv->memory_bytes;
		pdevs[nd]              = &devs[nd];
		nd++;
		f16 |= strcmp(dv->backend->name, "fftw") != 0;
		for (const char *const *a = dv->backend->algorithms; *a; a++) {
			bool seen = false;
			for (size_t k = 0; k < na; k++) {
				seen |= strcmp(algs[k], *a) == 0;
			}
			if (!seen && na < FFTD_MAX_ALGORITHMS) {
				algs[na++] = *a;
			}
		}
	}
	pthread_mutex_lock(&s->mtx);
	lm.max_request_bytes           = s->limits.max_request_bytes;
	lm.max_rank                    = s->limits.max_rank;
	lm.max_batch                   = s->limits.max_batch;
	lm.max_plans_per_client        = s->max_plans;
	lm.max_inflight_per_client     = s->cfg.max_inflight_per_client;
	lm.max_queued_bytes_per_client = s->cfg.max_queued_bytes_per_client;
	fftd__session *ss              = find_session(s, pipe);
	if (ss != NULL && hello->client_name != NULL) {
		snprintf(
		    ss->st.name, sizeof(ss->st.name), "%s", hello->client_name);
	}
	pthread_mutex_unlock(&s->mtx);
	hr.protocol_version = FFTD_PROTOCOL_VERSION;
	hr.server_version   = FFTD_VERSION_STRING;
	hr.backend          = s->backend;
	hr.n_devices        = nd;
	hr.devices          = pdevs;
	hr.n_algorithms     = na;
	hr.algorithms       = (char **) algs;
	hr.n_precisions     = f16 ? 3 : 2;
	hr.precisions       = precs;
	hr.limits           = &lm;
	r.body_case         = FFTD__WIRE__REPLY__BODY_HELLO;
	r.hello             = &hr;
	ctx_reply(c, &r, 0, NULL);
}

// handle_stats answers with the counters, the devices and one page of the
// clients (stats_reply.h).
static void
handle_stats(fftd__ctx *c, const Fftd__Wire__StatsRequest *rq)
{
	fftd_stats         st;
	fftd_client_stats *cl  = NULL;
	fftd_device_stats *dv  = NULL;
	int                ncl = 0, ndv = 0;
	nng_msg           *m = NULL;
	if (fftd__server_snapshot(c->srv, &st, &cl, &ncl, &dv, &ndv) != FFTD_OK
	    || fftd__stats_reply(&m, rq, &st, cl, ncl, dv, ndv) != FFTD_OK) {
		ctx_reply_error(c, FFTD_ENOMEM, "daemon out of memory");
	} else {
		count_reply(c->srv, c->pipe, FFTD_OK);
		ctx_send(c, m);
	}
	free(cl);
	free(dv);
}

static void
handle_request(fftd__ctx *c, nng_msg *m)
{
	fftd__frame f;
	uint32_t    pipe = (uint32_t) nng_pipe_id(nng_msg_get_pipe(m));
	c->pipe          = pipe;
	char why[160]    = "";
	bool hang_up     = false;
	// A refused pipe is listed in ADD_PRE, before its first request can
	// arrive; with none listed, this path takes no lock.
	if (atomic_load(&c->srv->nrefused) > 0) {
		pthread_mutex_lock(&c->srv->mtx);
		for (refused_pipe *r = c->srv->refused; r != NULL;
		     r               = r->next) {
			if (r->pipe == pipe) {
				snprintf(why, sizeof(why), "%s", r->why);
				hang_up = r->answered++ > 0;
				break;
			}
		}
		pthread_mutex_unlock(&c->srv->mtx);
	}
	if (why[0] != '\0') {
		if (hang_up) { // told already, and still asking
			nng_pipe_close(nng_msg_get_pipe(m));
		}
		nng_msg_free(m);
		ctx_reply_error(
		    c, FFTD_EREFUSED, "connection refused: %s", why);
		return;
	}
	int rv = fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &f);
	if (rv != FFTD_OK) {
		nng_msg_free(m);
		ctx_reply_error(c, rv,
		    rv == FFTD_EVERSION
		        ? "frame of another protocol version; this daemon "
		          "speaks %d"
		        : "malformed frame header (protocol %d)",
		    FFTD_PROTOCOL_VERSION);
		return;
	}
	Fftd__Wire__Request *req
	    = fftd__wire__request__unpack(NULL, f.pb_len, f.pb);
	if (req == NULL) {
		nng_msg_free(m);
		ctx_reply_error(
		    c, FFTD_EPROTO, "request message does not decode");
		return;
	}
	if (f.payload_len != 0
	    && req->body_case != FFTD__WIRE__REQUEST__BODY_EXECUTE) {
		fftd__wire__request__free_unpacked(req, NULL);
		nng_msg_free(m);
		ctx_reply_error(
		    c, FFTD_EPROTO, "only execute requests carry a payload");
		return;
	}
	switch (req->body_case) {
	case FFTD__WIRE__REQUEST__BODY_HELLO:
		nng_msg_free(m);
		handle_hello(c, pipe, req->hello);
		break;
	case FFTD__WIRE__REQUEST__BODY_PING: {
		nng_msg_free(m);
		Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
		Fftd__Wire__Ping  p = FFTD__WIRE__PING__INIT;
		p.token             = req->ping->token;
		r.body_case         = FFTD__WIRE__REPLY__BODY_PING;
		r.ping              = &p;
		ctx_reply(c, &r, 0, NULL);
		break;
	}
	case FFTD__WIRE__REQUEST__BODY_STATS:
		nng_msg_free(m);
		handle_stats(c, req->stats);
		break;
	case FFTD__WIRE__REQUEST__BODY_PLAN_CREATE:
		nng_msg_free(m);
		handle_plan_create(c, pipe, req->plan_create);
		break;
	case FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY:
		nng_msg_free(m);
		handle_plan_destroy(c, pipe, req->plan_destroy);
		break;
	case FFTD__WIRE__REQUEST__BODY_EXECUTE:
		handle_execute(c, pipe, req->execute, m, &f); // takes m
		break;
	case FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER:
		nng_msg_free(m);
		handle_buffer_register(c, pipe, req->buffer_register);
		break;
	case FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE:
		nng_msg_free(m);
		handle_buffer_release(c, pipe, req->buffer_release);
		break;
	case FFTD__WIRE__REQUEST__BODY_CANCEL:
		nng_msg_free(m);
		handle_cancel(c, pipe, req->cancel);
		break;
	case FFTD__WIRE__REQUEST__BODY_STREAM_OPEN:
		nng_msg_free(m);
		handle_stream_open(c, pipe, req->stream_open);
		break;
	default:
		nng_msg_free(m);
		ctx_reply_error(c, FFTD_EPROTO, "empty or unknown request");
		break;
	}
	fftd__wire__request__free_unpacked(req, NULL);
}

// --- contexts ----------------------------------------------------------------

static void
ctx_send(fftd__ctx *c, nng_msg *m)
{
	pthread_mutex_lock(&c->mtx);
	if (m == NULL) {
		// Nothing could be built: drop the request and listen again.
		atomic_fetch_sub(&c->srv->busy, 1);
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
	} else {
		c->state = CTX_SEND;
		nng_aio_set_msg(c->aio, m);
		nng_ctx_send(c->ctx, c->aio);
	}
	pthread_mutex_unlock(&c->mtx);
}

static void
ctx_cb(void *arg)
{
	fftd__ctx    *c  = arg;
	fftd__server *s  = c->srv;
	int           rv = nng_aio_result(c->aio);
	pthread_mutex_lock(&c->mtx);
	if (c->state == CTX_SEND) {
		if (rv != 0) {
			// The client is gone; its answer goes with it.
			nng_msg_free(nng_aio_get_msg(c->aio));
		}
		if (!c->refusing) {
			atomic_fetch_sub(&s->busy, 1);
		}
		c->refusing = false;
		if (atomic_load(&s->stopping)) {
			pthread_mutex_lock(&s->mtx);
			pthread_cond_broadcast(&s->drained);
			pthread_mutex_unlock(&s->mtx);
			if (rv == NNG_ECLOSED
			    || atomic_load(&s->recv_stopped)) {
				c->state = CTX_DONE;
				pthread_mutex_unlock(&c->mtx);
				return;
			}
			// Still answering (FFTD_ESHUTDOWN) until the drain
			// and its linger are over.
		}
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	if (c->state != CTX_RECV) {
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	if (rv != 0) {
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED
		    || atomic_load(&s->stopping)) {
			c->state = CTX_DONE;
		} else {
			nng_ctx_recv(c->ctx, c->aio);
		}
		pthread_mutex_unlock(&c->mtx);
		return;
	}
	nng_msg *m = nng_aio_get_msg(c->aio);
	c->state   = CTX_WORK;
	atomic_fetch_add(&s->busy, 1);
	pthread_mutex_unlock(&c->mtx);
	if (atomic_load(&s->stopping)) {
		// Draining: a request that arrives now is answered at once,
		// so its client does not wait out its timeout. It is not
		// accepted work: the drain does not wait for it.
		pthread_mutex_lock(&c->mtx);
		c->refusing = true;
		pthread_mutex_unlock(&c->mtx);
		atomic_fetch_sub(&s->busy, 1);
		c->pipe = (uint32_t) nng_pipe_id(nng_msg_get_pipe(m));
		nng_msg_free(m);
		ctx_reply_error(c, FFTD_ESHUTDOWN,
		    "the daemon is shutting down; request not run");
		return;
	}
	handle_request(c, m);
}

// --- lifecycle ---------------------------------------------------------------

int
fftd__server_create(fftd__server **sp, const fftd__config *cfg,
    fftd__worker **workers, fftd__worker **rt_workers, int nworkers,
    const char *backend_name)
{
	fftd__server *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return FFTD_ENOMEM;
	}
	s->cfg              = *cfg;
	s->workers          = workers;
	s->rt_workers       = rt_workers;
	s->nworkers         = nworkers;
	s->limits           = cfg->limits;
	s->max_plans        = cfg->max_plans_per_client;
	s->max_plan_bytes   = cfg->max_plan_bytes_per_client;
	s->max_buffer_bytes = cfg->max_buffer_bytes;
	atomic_store(&s->next_buf_id, 1);
	snprintf(s->backend, sizeof(s->backend), "%s", backend_name);
	atomic_store(&s->next_plan_id, 1);
	pthread_mutex_init(&s->mtx, NULL);
	pthread_cond_init(&s->drained, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	*sp = s;
	return FFTD_OK;
}

int
fftd__server_start(fftd__server *s, char *err, size_t errlen)
{
	int rv;
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		snprintf(err, errlen, "cannot open the socket: %s",
		    nng_strerror(rv));
		return FFTD_ENNGERR + rv;
	}
	s->sock_open = true;
	// A request is a frame header, a small protobuf and the payload.
	size_t maxsz = s->limits.max_request_bytes > SIZE_MAX - (1u << 20)
	    ? 0
	    : (size_t) s->limits.max_request_bytes + FFTD__WIRE_MAX_PB + 128;
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, maxsz);
	nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_PRE, on_pipe, s);
	nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST, on_pipe, s);
	for (int i = 0; i < s->cfg.nlisten; i++) {
		const char   *url = s->cfg.listen[i];
		nng_listener *l   = &s->listeners[s->nlisteners];
		if ((rv = nng_listener_create(l, s->sock, url)) != 0) {
			snprintf(err, errlen, "%s: %s", url, nng_strerror(rv));
			return FFTD_ENNGERR + rv;
		}
		if (strncmp(url, "ipc://", 6) == 0) {
			nng_listener_set_int(
			    *l, NNG_OPT_IPC_PERMISSIONS, s->cfg.socket_mode);
		}
		if ((rv = fftd__remote_listener_setup(
		         *l, url, &s->cfg, err, errlen))
		    != FFTD_OK) {
			nng_listener_close(*l);
			return rv;
		}
		if ((rv = nng_listener_start(*l, 0)) != 0) {
			snprintf(err, errlen, "cannot listen on %s: %s", url,
			    nng_strerror(rv));
			nng_listener_close(*l);
			return FFTD_ENNGERR + rv;
		}
		s->nlisteners++;
		fftd__log(FFTD_LOG_INFO, "listening on %s", url);
		// Shared-memory buffers arrive beside the first ipc socket.
		if (strncmp(url, "ipc://", 6) == 0 && s->fdsock == NULL) {
			int n = snprintf(
			    s->fd_path, sizeof(s->fd_path), "%s.fd", url + 6);
			if (n < 0 || (size_t) n >= sizeof(s->fd_path)) {
				fftd__log(FFTD_LOG_WARN,
				    "%s: path too long for the "
				    "buffer socket; no shared memory",
				    url);
			} else if (fftd__fdsock_start(&s->fdsock, s->fd_path,
			               s->cfg.socket_mode,
			               (int) s->cfg.max_fd_connections_per_user,
			               on_fd, s, err, errlen)
			    != FFTD_OK) {
				fftd__log(
				    FFTD_LOG_WARN, "no shared memory: %s", err);
				s->fdsock = NULL;
			} else {
				fftd__log(FFTD_LOG_INFO,
				    "shared-memory buffers via %s", s->fd_path);
				const fftd__chanpoll_ops ops
				    = { chan_packet, chan_hangup };
				if (fftd__chanpoll_start(
				        &s->chanpoll, &ops, s, err, errlen)
				    != FFTD_OK) {
					// Streams then use NNG.
					fftd__log(FFTD_LOG_WARN,
					    "no stream channels: %s", err);
					s->chanpoll = NULL;
				}
			}
		}
	}
	s->ctxs = calloc((size_t) s->cfg.contexts, sizeof(*s->ctxs));
	if (s->ctxs == NULL) {
		snprintf(err, errlen, "out of memory");
		return FFTD_ENOMEM;
	}
	for (int i = 0; i < s->cfg.contexts; i++) {
		fftd__ctx *c = &s->ctxs[i];
		c->srv       = s;
		pthread_mutex_init(&c->mtx, NULL);
		if ((rv = nng_aio_alloc(&c->aio, ctx_cb, c)) != 0
		    || (rv = nng_ctx_open(&c->ctx, s->sock)) != 0) {
			snprintf(err, errlen, "cannot open a context: %s",
			    nng_strerror(rv));
			return FFTD_ENNGERR + rv;
		}
		s->nctxs++;
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
	}
	return FFTD_OK;
}

// linger waits up to ms milliseconds while clients are connected.
static void
linger(fftd__server *s, int ms)
{
	for (int i = 0; i < ms && atomic_load(&s->n_sessions) > 0; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

int
fftd__server_drain(fftd__server *s, int timeout_ms)
{
	// Closing a listener would also close the connections it accepted,
	// answers still to be written included; new connections are refused
	// in on_pipe instead. Contexts keep receiving while the accepted work
	// finishes: what arrives is answered FFTD_ESHUTDOWN at once, so its
	// client need not time out.
	atomic_store(&s->stopping, true);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->mtx);
	while (atomic_load(&s->busy) > 0) {
		if (pthread_cond_timedwait(&s->drained, &s->mtx, &until) != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	// A completed send has only queued the reply on its pipe; closing the
	// socket now would drop replies still being written. Linger until
	// the clients hang up, or briefly: queued replies leave in well under
	// that even at a few GB. The contexts keep receiving meanwhile, so a
	// request that arrives now is still answered FFTD_ESHUTDOWN instead
	// of waiting out its client's timeout.
	linger(s, LINGER_MS);
	// Then no more receiving, so that the pipes fall quiet before the
	// socket closes (NNG 1.5 can hang closing a pipe in the middle of a
	// large message: see the client's socket_closer).
	atomic_store(&s->recv_stopped, true);
	for (int i = 0; i < s->nctxs; i++) {
		fftd__ctx *c = &s->ctxs[i];
		pthread_mutex_lock(&c->mtx);
		if (c->state == CTX_RECV) {
			nng_aio_cancel(c->aio);
		}
		pthread_mutex_unlock(&c->mtx);
	}
	linger(s, QUIET_MS);
	return atomic_load(&s->busy);
}

void
fftd__server_destroy(fftd__server *s)
{
	if (s == NULL) {
		return;
	}
	atomic_store(&s->stopping, true);
	fftd__fdsock_stop(s->fdsock);
	fftd__chanpoll_stop(s->chanpoll);
	if (s->sock_open) {
		nng_close(s->sock); // aborts contexts and fires pipe removals
	}
	// Jobs still queued answer through contexts: let them finish (their
	// sends fail at once on the closed socket) before the contexts go.
	for (int i = 0; i < s->nworkers; i++) {
		fftd__worker_flush(s->workers[i]);
		if (s->rt_workers != NULL) {
			fftd__worker_flush(s->rt_workers[i]);
		}
	}
	for (int i = 0; i < s->nctxs; i++) {
		nng_aio_stop(s->ctxs[i].aio);
	}
	for (int i = 0; i < s->nctxs; i++) {
		nng_aio_free(s->ctxs[i].aio);
		pthread_mutex_destroy(&s->ctxs[i].mtx);
	}
	free(s->ctxs);
	// Channels the stopped poller did not see hang up: its references.
	while (s->chans != NULL) {
		stream_chan *ch = s->chans;
		s->chans        = ch->next;
		chan_unref(s, ch);
	}
	while (s->sessions != NULL) {
		session_close(s, s->sessions->pipe);
	}
	while (s->refused != NULL) {
		refused_pipe *r = s->refused;
		s->refused      = r->next;
		free(r);
	}
	pthread_mutex_destroy(&s->mtx);
	pthread_cond_destroy(&s->drained);
	free(s);
}

void
fftd__server_reload(fftd__server *s, const fftd__config *fresh)
{
	pthread_mutex_lock(&s->mtx);
	s->limits                          = fresh->limits;
	s->max_plans                       = fresh->max_plans_per_client;
	s->max_plan_bytes                  = fresh->max_plan_bytes_per_client;
	s->cfg.max_inflight_per_client     = fresh->max_inflight_per_client;
	s->cfg.max_queued_bytes_per_client = fresh->max_queued_bytes_per_client;
	s->cfg.max_buffers_per_client      = fresh->max_buffers_per_client;
	s->cfg.max_buffers_per_user        = fresh->max_buffers_per_user;
	s->cfg.max_streams_per_client      = fresh->max_streams_per_client;
	s->cfg.max_streams_per_user        = fresh->max_streams_per_user;
	fftd__fdsock_set_max_per_user(
	    s->fdsock, (int) fresh->max_fd_connections_per_user);
	memcpy(s->cfg.weights, fresh->weights, sizeof(s->cfg.weights));
	s->cfg.nweights = fresh->nweights;
	// New weights apply to the jobs clients send from now on.
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		ss->weight
		    = ss->ipc ? fftd__config_weight(&s->cfg, ss->uid) : 1.0;
	}
	pthread_mutex_unlock(&s->mtx);
}

int
fftd__server_inflight(fftd__server *s)
{
	return atomic_load(&s->busy);
}

// cache_stats_add adds one plan cache's counters to a sum.
static void
cache_stats_add(fftd__cache_stats *sum, const fftd__cache_stats *cs)
{
	sum->hits += cs->hits;
	sum->misses += cs->misses;
	sum->evictions += cs->evictions;
	sum->entries += cs->entries;
	sum->bytes += cs->bytes;
	sum->budget += cs->budget;
}

// device_cache_stats sums the plan caches of device i's lanes.
static void
device_cache_stats(fftd__server *s, int i, fftd__cache_stats *cs)
{
	fftd__cache_get_stats(fftd__worker_cache(s->workers[i]), cs);
	if (s->rt_workers != NULL) {
		fftd__cache_stats r;
		fftd__cache_get_stats(fftd__worker_cache(s->rt_workers[i]), &r);
		cache_stats_add(cs, &r);
	}
}

// device_worker_stats sums what device i's lanes measured.
static void
device_worker_stats(fftd__server *s, int i, fftd__worker_stats *ws)
{
	fftd__worker_get_stats(s->workers[i], ws);
	if (s->rt_workers != NULL) {
		fftd__worker_stats r;
		fftd__worker_get_stats(s->rt_workers[i], &r);
		ws->busy_ns += r.busy_ns;
		ws->executes += r.executes;
		ws->memory_used += r.memory_used;
		ws->queued += r.queued;
	}
}

void
fftd__server_get_stats(fftd__server *s, fftd_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	st->uptime_ms = (uint64_t) (now.tv_sec - s->started.tv_sec) * 1000
	    + (uint64_t) ((now.tv_nsec - s->started.tv_nsec) / 1000000);
	st->sessions  = atomic_load(&s->n_sessions);
	st->plans     = atomic_load(&s->n_plans);
	st->requests  = atomic_load(&s->n_requests);
	st->errors    = atomic_load(&s->n_errors);
	st->bytes_in  = atomic_load(&s->n_bytes_in);
	st->bytes_out = atomic_load(&s->n_bytes_out);
	st->executes  = atomic_load(&s->n_executes);
	st->canceled  = atomic_load(&s->n_canceled);
	st->expired   = atomic_load(&s->n_expired);
	pthread_mutex_lock(&s->mtx);
	for (stream_chan *ch = s->chans; ch != NULL; ch = ch->next) {
		st->stream_channels++;
	}
	pthread_mutex_unlock(&s->mtx);
	fftd__cache_stats sum = { 0 };
	for (int i = 0; i < s->nworkers; i++) {
		fftd__cache_stats cs;
		device_cache_stats(s, i, &cs);
		cache_stats_add(&sum, &cs);
	}
	st->cache_hits         = sum.hits;
	st->cache_misses       = sum.misses;
	st->cache_evictions    = sum.evictions;
	st->cache_entries      = sum.entries;
	st->cache_bytes        = sum.bytes;
	st->cache_budget_bytes = sum.budget;
}

int
fftd__server_snapshot(fftd__server *s, fftd_stats *st,
    fftd_client_stats **clients, int *nclients, fftd_device_stats **devices,
    int *ndevices)
{
	*clients  = NULL;
	*devices  = NULL;
	*nclients = 0;
	*ndevices = 0;
	fftd__server_get_stats(s, st);
	fftd_device_stats *dv = calloc((size_t) s->nworkers, sizeof(*dv));
	if (dv == NULL) {
		return FFTD_ENOMEM;
	}
	uint64_t now = fftd__mono_ns();
	pthread_mutex_lock(&s->mtx);
	for (int i = 0; i < s->nworkers; i++) {
		const fftd__device *d = fftd__worker_device(s->workers[i]);
		fftd__worker_stats  ws;
		fftd__cache_stats   cs;
		device_worker_stats(s, i, &ws);
		device_cache_stats(s, i, &cs);
		fftd_device_stats *x = &dv[i];
		x->index             = d->index;
		snprintf(x->name, sizeof(x->name), "%s", d->name);
		snprintf(
		    x->backend, sizeof(x->backend), "%s", d->backend->name);
		x->memory_bytes       = d->memory_bytes;
		x->memory_used_bytes  = ws.memory_used;
		x->busy_seconds       = (double) ws.busy_ns * 1e-9;
		x->queued             = (uint32_t) ws.queued;
		x->executes           = ws.executes;
		x->cache_hits         = cs.hits;
		x->cache_misses       = cs.misses;
		x->cache_evictions    = cs.evictions;
		x->cache_entries      = cs.entries;
		x->cache_bytes        = cs.bytes;
		x->cache_budget_bytes = cs.budget;
		// Busy share over a window of 1 to 10 s ending now.
		if (s->mark_ns[i] == 0) {
			s->mark_ns[i]   = fftd__mono_ns() - 1;
			s->mark_busy[i] = 0;
		}
		uint64_t span = now - s->mark_ns[i];
		if (span >= 1000000000u) {
			double f = (double) (ws.busy_ns - s->mark_busy[i])
			    / (double) span;
			s->busy_frac[i] = f > 1 ? 1 : f;
			if (span >= 10000000000u) {
				s->mark_ns[i]   = now;
				s->mark_busy[i] = ws.busy_ns;
			}
		}
		x->busy_fraction = s->busy_frac[i];
	}
	int n = 0;
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		n++;
	}
	fftd_client_stats *cl = n ? calloc((size_t) n, sizeof(*cl)) : NULL;
	if (n != 0 && cl == NULL) {
		pthread_mutex_unlock(&s->mtx);
		free(dv);
		return FFTD_ENOMEM;
	}
	int k = 0;
	for (fftd__session *ss = s->sessions; ss != NULL; ss = ss->next) {
		fftd_client_stats *x = &cl[k++];
		*x                   = ss->st;
		x->id                = ss->pipe;
		x->pid               = ss->pid;
		x->uid               = ss->uid;
		x->weight            = ss->weight;
		x->queued_bytes      = ss->queued_bytes;
	}
	pthread_mutex_unlock(&s->mtx);
	*clients  = cl;
	*nclients = n;
	*devices  = dv;
	*ndevices = s->nworkers;
	return FFTD_OK;
}

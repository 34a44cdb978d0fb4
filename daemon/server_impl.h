// SPDX-License-Identifier: MIT
//
// server_impl.h — PRIVATE to the daemon's NNG server: only the files in the
// floors below include it (server.h is what the rest of fftd sees). It holds
// the structs those files share and the calls they make into each other.
//
// Floors. Each file may call the files on lower floors (and its own), never
// a file above it; where a lower file must tell a higher one that work is
// done, it calls the completion callback the higher one handed it (an
// execution's done, a descriptor token's ops). Files outside the floors
// (worker.c, chan.c, fdsock.c, plan_cache.c, the backends) are called from
// any floor and call none of them except through such callbacks.
//
//   floor  file       holds                                   may call
//   6      server.c   lifecycle, the context state machine     0-5
//                     (ctx_cb), request dispatch
//   5      session.c  sessions: pipe events, refused pipes,    0-4
//                     Hello, closing a session
//   4      exec.c     executions: placement, admission, run,   0-3
//                     settle, cancel; their two submitters
//                     (Execute requests, stream packets);
//                     executions on resident arrays
//   4      mf_req.c   the MatchedFilter request: checks, the   0-3
//                     bank's job on the device, the reply
//   3      stream.c   stream channels: StreamOpen, attach,     0-2
//                     answers, hang-up, references
//   2      buffer.c   shared buffers and their references,     0-1
//                     descriptor tokens, the descriptor
//                     callback (on the fd socket's thread)
//   2      array.c    resident arrays: create, destroy,        0-1,
//                     write, read, CUDA IPC opens (jobs on     buffer.c
//                     the device's worker), references,
//                     limits, lookups
//   1      plan.c     plan handles: create, destroy,           0
//                     references
//   1      stats.c    statistics: counters, snapshots, the     0
//                     paged Stats reply
//   1      algo_stats.c                                       0
//                     what accuracy-aware auto did: plans
//                     per algorithm, the paged speed table
//   0      reply.c    replies on an NNG context, answer        (none)
//                     counting, lookups (session, plan,
//                     buffer by id; a lane's workers), the
//                     drain's unit of work
//
// Threads (each file says which of its calls runs where):
//   NNG's task threads   ctx_cb, dispatch and every request handler; the
//                        reply's send.
//   NNG's pipe callback  fftd__session_on_pipe (connect, disconnect).
//   device workers       plan and release jobs (when the backend plans on
//                        the worker), execution jobs (worker.h), array
//                        jobs (create, write, read, free) and bank jobs.
//   device planners      plan and release jobs, an execution's first
//                        planning on a device (planner.h).
//   fd socket thread     fftd__buf_on_fd and the stream attach it calls.
//   stream poller        fftd__exec_stream_packet, fftd__mf_chan_packet,
//                        fftd__stream_hangup.
//   main thread          fftd__server_create/start/drain/destroy/reload,
//                        fftd__server_get_stats; NNG's HTTP threads (metrics.c)
//                        call fftd__server_snapshot.
// A dropped execution (canceled, expired, its client gone) is answered on
// the thread that dropped it (worker.h).
//
// Locks: s->mtx (the server lock) guards the session list and everything in
// a session, the refused pipes, the stream channel list, the limits a
// reload changes and the busy-fraction windows; s->drained is signalled
// under it. c->mtx (a context's lock) guards c->state and c->refusing;
// ctx_cb takes the server lock inside it, never the other way round. A
// worker's lock is taken inside the server lock (admission posts under
// it). References (refs) and counters are atomics, taken and dropped with
// no lock.

#ifndef FFTD_DAEMON_SERVER_IMPL_H
#define FFTD_DAEMON_SERVER_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <nng/nng.h>

#include "chan.h"
#include "fdsock.h"
#include "fftd.pb-c.h"
#include "server.h"
#include "wire.h"

typedef struct fftd__session fftd__session;
typedef struct fftd__handle  fftd__handle;
typedef struct fftd__shbuf   fftd__shbuf;
typedef struct fftd__stream  fftd__stream;
typedef struct fftd__token   fftd__token;
typedef struct fftd__ctx     fftd__ctx;
typedef struct fftd__array   fftd__array;

enum ctx_state { CTX_RECV, CTX_WORK, CTX_SEND, CTX_DONE };

// An NNG context and the request it serves (server.c's state machine).
struct fftd__ctx {
	fftd__server   *srv;
	uint32_t        pipe;     // the connection of the request being served
	bool            refusing; // answering FFTD_ESHUTDOWN: not in busy
	nng_ctx         ctx;
	nng_aio        *aio;
	pthread_mutex_t mtx;
	enum ctx_state  state;
	uint64_t        recv_ns; // CLOCK_MONOTONIC when the request arrived
};

// A plan handle: what one client's plan id stands for (plan.c). References:
// one from the session list while the plan is alive, one per queued job.
// Unless pinned, a plan runs on whichever device is least loaded, and is
// planned there (through that device's cache) on first use: entries[i] is
// its cache entry on worker i. When the last reference goes, one release
// job per entry gives it back on its own worker.
typedef struct fftd__release_job {
	fftd__job     job; // must be first
	fftd__handle *h;
	int           wi;
} fftd__release_job;

struct fftd__handle {
	uint64_t    id;
	uint32_t    pipe; // owning session's pipe id
	int         home; // worker index it was planned on first
	bool        pinned;
	int         realtime;
	fftd__shape shape;
	char        algorithm[16]; // the backend's name of it
	// Accuracy-aware auto (algo_pick.h): the tolerance of an "auto"
	// plan (0: none, the default algorithm), and the name the client is
	// told (fftd_plan_algorithm), set with algorithm on the planner.
	double                     tolerance;
	char                       reported[16];
	uint64_t                   est_bytes; // counted in plan_bytes
	fftd__cache_entry *_Atomic entries[FFTD_MAX_DEVICES];
	_Atomic uint64_t           est_ns; // execution time, moving average
	_Atomic int                refs;
	_Atomic int                releases_left;
	fftd__release_job          rel[FFTD_MAX_DEVICES];
	fftd__handle              *next; // in the session's list
};

// A client's shared-memory buffer, mapped here and pinned for DMA
// (buffer.c). References: one from the session's list, one per execution
// or stream channel using it. Pinning (cudaHostRegister, tens of ms for
// large buffers) runs on the fd socket's thread; unpinning and unmapping on
// the thread that drops the last reference: usually the one releasing the
// buffer or closing the session, but a device worker when an execution or
// stream on it was the last holder (the client released the buffer, or
// died, while it ran). The cuda backend sets its device on every entry, so
// that is correct, if slower for that worker.
struct fftd__shbuf {
	uint64_t      id;
	void         *addr;
	size_t        size;
	fftd__device *dev; // whose backend pinned it
	bool          pinned;
	_Atomic int   refs;
	fftd__shbuf  *next;
};

// A resident array (array.c): device memory a client created, or memory
// of its own it handed over by CUDA IPC (ipc not NULL: not counted in the
// session's array_bytes, unmapped, never freed), on the device of batch
// worker wi (its index in s->workers, the device index). References: one from
// the session's list while it is alive, one per job that uses it (copies,
// executions, bank requests); the last posts the free (job) to worker wi, the
// only thread that touches the backend's memory calls.
struct fftd__array {
	fftd__job     job; // the free job; must be first
	fftd__server *srv;
	uint64_t      id;
	uint32_t      pipe; // owning session's pipe id
	int           wi;
	void         *ptr; // the memory: array_alloc's, or the span's address
	void         *ipc; // its CUDA IPC mapping (ipc_open), or NULL
	uint64_t      bytes;
	_Atomic int   refs;
	fftd__array  *next; // in the session's list
	// Its write generation (fftd__array_touch), unique in the daemon: a
	// new one at creation and whenever a write into it is posted or
	// done; 0 for a CUDA IPC mapping, which its owner writes unseen. The
	// bank's sigma^2 cache keys on it (mf.h).
	_Atomic uint64_t gen;
};

#define MAX_PENDING_TOKENS 4
// Connections refused by [remote] allow that are kept open to be told why
// (fftd__refused); past this many, more are hung up on at once.
#define MAX_REFUSED 64

// A connection [remote] allow refuses is not hung up on at once: its
// requests (the Hello first) are answered FFTD_EREFUSED with the reason,
// so that its client learns why and closes the connection itself. (A
// connection the daemon hangs up on can also leave NNG 1.5 in the client
// unable to close sockets.) It has no session; a second request closes it.
typedef struct fftd__refused {
	uint32_t              pipe;
	int                   answered;
	char                  why[160];
	struct fftd__refused *next;
} fftd__refused;

// A stream channel (StreamOpen; chan.h; stream.c): executions of one plan
// on fixed slots of one shared buffer, submitted and answered over a
// SOCK_SEQPACKET socket instead of NNG. References: one from the poller
// until the channel hangs up, one per job in flight; the socket closes
// with the last, so a worker never answers into a reused descriptor.
struct fftd__stream {
	fftd__server *srv;
	int           fd;
	uint32_t      pipe; // owning session's pipe id
	fftd__handle *h;    // one reference (NULL for a bank channel)
	fftd__shbuf  *b;    // one reference (NULL for a bank channel)
	uint32_t      depth;
	uint64_t      slot_bytes, out_off;
	// A bank channel (StreamOpen's bank): MatchedFilter requests, one at
	// a time; busy while one is accepted and not yet answered.
	bool          bank;
	_Atomic bool  busy;
	_Atomic int   refs;
	fftd__stream *next; // in s->chans (server lock) until it hangs up
};

// fftd__token_ops is what a descriptor token that is not a plain shared
// buffer's does when its descriptor arrives (fftd__buf_on_fd, on the fd
// socket's thread): attach, under the server lock, makes the object
// (*objp) for token t of session ss from descriptor fd (borrowed: attach
// duplicates what it keeps); then watch, without the lock, starts it. Each
// returns FFTD_OK or an error with msg filled; a watch that fails has
// undone its attach. The stream channels' (stream.c) are the only ones.
typedef struct fftd__token_ops {
	int (*attach)(fftd__server *s, fftd__session *ss, const fftd__token *t,
	    int fd, void **objp, char *msg, size_t msglen);
	int (*watch)(fftd__server *s, void *obj, char *msg, size_t msglen);
} fftd__token_ops;

// A descriptor hand-over promised to a session (BufferRegister or
// StreamOpen) whose descriptor has not arrived yet.
struct fftd__token {
	uint8_t  token[FFTD__FDSOCK_TOKEN];
	uint64_t bytes;
	// A stream channel's token (bytes 0): its ops and what StreamOpen
	// asked. ops is NULL for a shared buffer's.
	const fftd__token_ops *ops;
	uint64_t               plan_id, buffer_id, slot_bytes, out_off;
	uint32_t               depth;
	bool                   bank;
};

struct fftd__session {
	uint32_t          pipe;
	uint32_t          nplans;     // alive and being created
	uint64_t          plan_bytes; // their estimated bytes
	uint64_t          uid, pid;
	bool              ipc; // peer credentials known: shared memory allowed
	fftd__handle     *plans;
	fftd__shbuf      *bufs;
	fftd__array      *arrays;
	uint32_t          narrays;     // alive and being created
	uint64_t          array_bytes; // their bytes
	uint64_t          buf_bytes;   // mapped and promised to pending tokens
	uint32_t          nbufs;       // buffers mapped and promised, as those
	fftd__token       pending[MAX_PENDING_TOKENS];
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
	fftd__refused   *refused;  // (server lock)
	_Atomic int      nrefused; // changed under the server lock
	fftd__fdsock    *fdsock;
	char             fd_path[108];
	fftd__chanpoll  *chanpoll;
	fftd__stream    *chans; // open stream channels (server lock)
	_Atomic uint64_t next_buf_id;
	_Atomic uint64_t next_array_id;
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

// fftd__exec_answer is how an execution ended, handed to the completion
// callback its submitter set (fftd__exec_done_fn).
typedef struct fftd__exec_answer {
	uint32_t pipe; // the client's connection
	uint64_t tag;  // its request tag (0: none)
	uint32_t slot; // a stream channel's slot
	// An execution that ran: when it was received (0 when not through a
	// stream channel), started and finished, CLOCK_MONOTONIC ns; NULL
	// when it failed or did not run.
	const uint64_t *times;
	// Status FFTD_OK from an NNG submitter: the reply, its output in
	// place; the callback owns it. NULL otherwise.
	nng_msg *msg;
	// Any other status: why (never NULL then).
	const char *why;
} fftd__exec_answer;

// fftd__exec_done_fn answers an execution (status FFTD_OK or why not),
// with arg the submitter's (its NNG context or its stream channel). It
// runs once, on the thread that ran or dropped the execution (a device
// worker, or the thread that canceled it), after the execution released
// its plan and buffers, with no lock held.
typedef void (*fftd__exec_done_fn)(
    const fftd__exec_answer *a, int status, void *arg);

// --- floor 0: reply.c
// ----------------------------------------------------------

// fftd__ctx_send hands m to c's context as the answer (NULL: nothing could
// be built; the request is dropped and c listens again). Any thread.
void fftd__ctx_send(fftd__ctx *c, nng_msg *m);

// fftd__ctx_reply counts and sends reply r on c, with payload_len bytes of
// payload room (*payload set to it, see fftd__msg_build).
void fftd__ctx_reply(
    fftd__ctx *c, Fftd__Wire__Reply *r, uint64_t payload_len, void **payload);

// fftd__ctx_reply_error answers c's request with status and a message.
void fftd__ctx_reply_error(fftd__ctx *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// fftd__ctx_exec_done is the completion of an execution submitted over an
// NNG context (arg: the fftd__ctx).
void fftd__ctx_exec_done(const fftd__exec_answer *a, int status, void *arg);

// fftd__reply_count counts an answer in the daemon's and its client's
// totals (takes the server lock).
void fftd__reply_count(fftd__server *s, uint32_t pipe, int status);

// fftd__session_find returns the open session of pipe id p (server lock
// held).
fftd__session *fftd__session_find(fftd__server *s, uint32_t p);

// fftd__session_plan and fftd__session_buf look up session ss's (NULL:
// none) plan or buffer id, taking no reference (server lock held).
fftd__handle *fftd__session_plan(fftd__session *ss, uint64_t id);
fftd__shbuf  *fftd__session_buf(fftd__session *ss, uint64_t id);

// fftd__lane is the workers that serve plans of a priority class.
fftd__worker **fftd__lane(const fftd__server *s, int realtime);

// fftd__busy_done ends one unit of accepted work; the drain waits for none
// left.
void fftd__busy_done(fftd__server *s);

// --- floor 1: plan.c, stats.c, algo_stats.c
// -------------------------------------------------

// fftd__plan_create answers a PlanCreate (NNG task thread; the plan is
// made on a device's worker or planner, which answers c).
void fftd__plan_create(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanCreate *pc);

// fftd__plan_destroy answers a PlanDestroy (NNG task thread).
void fftd__plan_destroy(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__PlanDestroy *pd);

// fftd__plan_unref drops one reference to h; the last gives the plan's
// cache entries back, each on its own worker's thread. Any thread.
void fftd__plan_unref(fftd__server *s, fftd__handle *h);

// fftd__stats_request answers a Stats request (NNG task thread).
void fftd__stats_request(fftd__ctx *c, const Fftd__Wire__StatsRequest *rq);

// fftd__algo_stats_request answers an AlgoStats request (NNG task thread).
void fftd__algo_stats_request(
    fftd__ctx *c, const Fftd__Wire__AlgoStatsRequest *rq);

// fftd__algo_stats_build builds in *mp the AlgoStats reply to rq (NULL: the
// first page): the plan counts and the entries of speed table t from slot
// rq->speed_from on, at most rq->speed_limit (0: no limit) and as many as
// keep the protobuf under FFTD__WIRE_MAX_PB, with speed_next and
// speed_more set. Any thread. On success the caller owns *mp. Returns
// FFTD_OK or FFTD_ENOMEM.
struct fftd__speed_table;
int fftd__algo_stats_build(nng_msg **mp, const Fftd__Wire__AlgoStatsRequest *rq,
    struct fftd__speed_table *t);

// --- floor 2: buffer.c
// ---------------------------------------------------------

// fftd__buf_register and fftd__buf_release answer BufferRegister and
// BufferRelease (NNG task thread).
void fftd__buf_register(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRegister *br);
void fftd__buf_release(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRelease *br);

// fftd__buf_unref drops one reference to b (NULL: none); the last unpins
// and unmaps. Any thread.
void fftd__buf_unref(fftd__server *s, fftd__shbuf *b);

// fftd__buf_find returns session ss's buffer id with one more reference,
// or NULL (server lock held).
fftd__shbuf *fftd__buf_find(fftd__session *ss, uint64_t id);

// fftd__buf_on_fd is the fd socket's descriptor callback (fdsock.h).
int fftd__buf_on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen);

// fftd__token_new makes a token for a descriptor hand-over, or answers c
// why not (false): the daemon does not offer `what`, or has no randomness.
bool fftd__token_new(fftd__ctx *c, bool offered, const char *what,
    uint8_t token[FFTD__FDSOCK_TOKEN]);

// fftd__token_add lists a new hand-over of session ss (room checked,
// server lock held): token set, everything else zero.
fftd__token *fftd__token_add(fftd__session *ss, const uint8_t *token);

// fftd__token_reply answers a BufferRegister or StreamOpen.
void fftd__token_reply(
    fftd__ctx *c, int rv, const char *msg, const uint8_t *token, bool stream);

// fftd__token_over_count says whether session ss may have one more shared
// buffer (or stream channel); server lock held.
int fftd__token_over_count(
    fftd__server *s, fftd__session *ss, bool streams, char *msg, size_t len);

// fftd__array_create, fftd__array_destroy, fftd__array_write and
// fftd__array_read answer ArrayCreate, ArrayDestroy, ArrayWrite and
// ArrayRead (NNG task thread; the copies and the allocation run on the
// array's device worker, which answers c). fftd__array_write takes req,
// which carries the inline bytes (f: its frame).
void fftd__array_create(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayCreate *ac);
void fftd__array_destroy(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayDestroy *ad);
void fftd__array_write(fftd__ctx *c, uint32_t pipe,
    const Fftd__Wire__ArrayWrite *aw, nng_msg *req, const fftd__frame *f);
void fftd__array_read(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayRead *ar);

// fftd__array_open_ipc answers ArrayOpenIpc (NNG task thread): the
// session's transport and peer are checked against [limits] ipc_peers,
// then the device's worker maps the handle and answers c.
void fftd__array_open_ipc(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__ArrayOpenIpc *oi);

// fftd__array_find returns session ss's array id with one more reference,
// or NULL (server lock held).
fftd__array *fftd__array_find(fftd__session *ss, uint64_t id);

// fftd__array_touch gives a (NULL: none) a new write generation, unless
// it is a CUDA IPC mapping (array.c). Any thread.
void fftd__array_touch(fftd__array *a);

// fftd__array_unref drops one reference to a (NULL: none); the last posts
// its free to its device's worker. Any thread.
void fftd__array_unref(fftd__server *s, fftd__array *a);

// fftd__array_span checks that [off, off + len) lies inside a, with off a
// multiple of align: FFTD_OK, FFTD_ESIZE (past the end) or FFTD_EINVAL
// (misaligned), msg naming `what`.
int fftd__array_span(const fftd__array *a, uint64_t off, uint64_t len,
    uint64_t align, const char *what, char *msg, size_t msglen);

// fftd__array_release_all drops the references of a closed session ss
// (unlinked: no lock needed) to its arrays; returns how many it held.
int fftd__array_release_all(fftd__server *s, fftd__session *ss);

// --- floor 3: stream.c
// ---------------------------------------------------------

// fftd__stream_open answers a StreamOpen (NNG task thread).
void fftd__stream_open(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__StreamOpen *so);

// fftd__stream_answer answers submission tag on slot of channel ch,
// counted as a reply, without blocking; times as fftd__exec_answer's.
void fftd__stream_answer(fftd__server *s, fftd__stream *ch, uint64_t tag,
    uint32_t slot, const uint64_t *times, int status, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

// fftd__stream_exec_done is the completion of an execution submitted over
// a stream channel (arg: the fftd__stream, whose reference and unit of
// work it gives back).
void fftd__stream_exec_done(const fftd__exec_answer *a, int status, void *arg);

// fftd__stream_send_frame sends a whole reply frame (m's body, which it
// frees) as one packet of bank channel ch, counted as pipe's reply of
// status, without blocking: a client that does not read, or is gone, loses
// it. Any thread.
void fftd__stream_send_frame(
    fftd__server *s, fftd__stream *ch, int status, nng_msg *m);

// fftd__stream_unref drops one reference to ch (NULL: none); the last
// closes its socket and releases its plan and buffer. Any thread.
void fftd__stream_unref(fftd__server *s, fftd__stream *ch);

// fftd__stream_hangup is the poller's on_hangup (chan.h): it forgets a
// channel whose client hung up or whose session closed.
void fftd__stream_hangup(void *arg, void *chan);

// fftd__stream_shutdown_pipe shuts the sockets of pipe's channels down
// (the poller then hangs them up).
void fftd__stream_shutdown_pipe(fftd__server *s, uint32_t pipe);

// fftd__stream_forget_all drops the poller's reference to every channel
// still listed, once the poller has stopped (server destroy).
void fftd__stream_forget_all(fftd__server *s);

// --- floor 4: exec.c
// -----------------------------------------------------------

// fftd__exec_request answers an Execute (NNG task thread): it validates
// it and posts it to a device, which answers c. It takes req.
void fftd__exec_request(fftd__ctx *c, uint32_t pipe,
    const Fftd__Wire__Execute *ex, nng_msg *req, const fftd__frame *f);

// fftd__exec_stream_packet is the poller's on_packet (chan.h): one
// submission of a stream channel.
void fftd__exec_stream_packet(
    void *arg, void *chan, const void *pkt, size_t len);

// fftd__exec_cancel answers a Cancel (NNG task thread).
void fftd__exec_cancel(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Cancel *cr);

// fftd__exec_cancel_all drops the queued jobs of pipe with tag (0: all) on
// every worker of every lane; returns how many.
int fftd__exec_cancel_all(
    fftd__server *s, uint32_t pipe, uint64_t tag, int status);

// --- floor 4: mf_req.c
// ---------------------------------------------------------

// fftd__mf_request answers a MatchedFilter (NNG task thread): it checks
// every argument and posts the bank to the arrays' device, which answers
// c.
void fftd__mf_request(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__MatchedFilter *mf);

// fftd__mf_chan_packet answers one packet of bank channel ch (the stream
// poller's thread): a MatchedFilter request framed as over NNG, checked and
// posted as fftd__mf_request does, answered on the channel.
void fftd__mf_chan_packet(
    fftd__server *s, fftd__stream *ch, const void *pkt, size_t len);

// --- floor 5: session.c
// --------------------------------------------------------

// fftd__session_on_pipe is NNG's pipe callback (ADD_PRE, REM_POST).
void fftd__session_on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg);

// fftd__session_close closes pipe's session, if open: its channels hang
// up, its queued work is dropped, its plans and buffers are released.
void fftd__session_close(fftd__server *s, uint32_t pipe);

// fftd__session_refused says whether pipe was refused ([remote] allow):
// why filled (else why[0] is '\0'); *hang_up when it was told already.
void fftd__session_refused(
    fftd__server *s, uint32_t pipe, char *why, size_t whylen, bool *hang_up);

// fftd__session_hello answers a Hello (NNG task thread).
void fftd__session_hello(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__Hello *hello);

// fftd__session_free_refused frees the refused pipes' list (destroy).
void fftd__session_free_refused(fftd__server *s);

#endif // FFTD_DAEMON_SERVER_IMPL_H

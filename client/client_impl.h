// SPDX-License-Identifier: MIT
//
// client_impl.h — PRIVATE to libfftd: only the library's own files
// (client/*.c) include it; fftctl, tests, benchmarks and the daemon must not.
// The library's shared structs (client, endpoint, plan, request, buffer) and
// the calls its files make into one another, file by file:
//   errors.c    error codes' names, the per-thread last error, URL prefixes
//   hist.c      the latency histograms' bucket bounds
//   abi.c       the library version; caller-sized structs (fftd.h's ABI)
//   rpc.c       one request-reply exchange over an NNG context
//   endpoint.c  URL lists, dialing one daemon (ipc, tcp, tls+tcp), hello
//   client.c    fftd_client_open / close, info, ping
//   stats.c     the daemon's statistics
//   algo_stats.c  plans per algorithm, the speed table (accuracy-aware auto)
//   plan.c      plans on every endpoint
//   exec.c      executions: endpoint choice, sending, completion
//   buffer.c    shared-memory buffers, the descriptor hand-over, staging
//   stream.c    streams and their stream channel
//   array.c     resident arrays: create, copies, executions on them
//   mf.c        the matched-filter bank request
//   bankchan.c  bank channels: the bank's requests off NNG
//   fork.c      refusing calls in a forked child (NNG is not fork-safe)
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

#ifndef FFTD_CLIENT_IMPL_H
#define FFTD_CLIENT_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "fftd.h"
#include "fftd.pb-c.h"
#include "layout.h"
#include "wire.h"

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

// FFTD__MAX_BANK_CHANNELS bounds a client's bank channels (bankchan.c).
#define FFTD__MAX_BANK_CHANNELS 8

// A bank channel (bankchan.c): its socket (-1: closed), whether a caller
// holds it, the buffer its replies are read into and the shared buffer its
// requests' results are written into.
typedef struct fftd__bankch {
	int          fd;
	bool         busy;
	uint8_t     *buf;
	fftd_buffer *res;
	uint64_t     res_retry_ns; // no result buffer asked for before then
	uint64_t     busy_ns;      // how long a call polls for its reply
} fftd__bankch;

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
	// Bank channels (bankchan.c), under bank_mtx; bank_off: refused once,
	// not asked again.
	pthread_mutex_t bank_mtx;
	fftd__bankch    bank[FFTD__MAX_BANK_CHANNELS];
	int             nbank;
	bool            bank_off;
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

// fftd_array is a resident array in the daemon of the first endpoint,
// held by that endpoint's session `epoch` (ep_link.epoch): a reconnected
// session holds none of the arrays of the one before.
struct fftd_array {
	fftd_client *client; // holds a reference
	uint64_t     id;
	uint64_t     epoch;
	int          device;
	size_t       bytes;
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

// --- errors.c ------------------------------------------------------------

// FFTD__LAST_ERROR_LEN is the size of the per-thread last error.
#define FFTD__LAST_ERROR_LEN 512

// fftd__last_error is the calling thread's last error (fftd_last_error).
extern _Thread_local char fftd__last_error[FFTD__LAST_ERROR_LEN];

// fftd__fork_watch starts noting forks (fork.c); called before libfftd's
// first NNG call. fftd__forked says whether this process was forked after
// that; fftd__fork_refuse sets the last error for a call refused there and
// returns FFTD_EUNSUPPORTED.
void fftd__fork_watch(void);
bool fftd__forked(void);
int  fftd__fork_refuse(void);

// fftd__set_error formats the calling thread's last error and returns code.
int fftd__set_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// fftd__prefix_url puts "url: " before the message in buf (len bytes).
void fftd__prefix_url(char *buf, size_t len, const char *url);

// fftd__url_error puts endpoint i's URL before the last error, on a client
// of several daemons, and returns code.
int fftd__url_error(const fftd_client *c, int i, int code);

// fftd__map_nng turns an NNG error into an fftd_error code.
int fftd__map_nng(int rv);

// --- abi.c -----------------------------------------------------------------

// fftd__abi_size_ok says whether size can be the sizeof of one of fftd.h's
// caller-allocated structs, of this header's version or another: not zero,
// a whole number of 4-byte words, at most FFTD__ABI_MAX_SIZE.
#define FFTD__ABI_MAX_SIZE ((size_t) 1 << 16)
bool fftd__abi_size_ok(size_t size);

// fftd__abi_in copies a caller's struct (csize bytes at src) into the
// library's own (lsize bytes at dst, already holding every field's default):
// the fields the caller's struct lacks keep their defaults, bytes the
// library does not know are ignored.
void fftd__abi_in(void *dst, size_t lsize, const void *src, size_t csize);

// fftd__abi_out copies the library's struct (lsize bytes at src) into the
// caller's (csize bytes at dst): never more than csize bytes, and the
// caller's bytes the library does not know are zeroed.
void fftd__abi_out(void *dst, size_t csize, const void *src, size_t lsize);

// fftd__abi_info_out copies *info into a caller's fftd_info of size bytes
// whose devices[] entries are device_size bytes each (both checked with
// fftd__abi_size_ok).
void fftd__abi_info_out(
    void *dst, size_t size, size_t device_size, const fftd_info *info);

// --- rpc.c ---------------------------------------------------------------

// fftd__ping_split times one Ping round trip, split at the daemon's stamps
// (client.c says how); bench/soak reports where slow pings spent their time.
int fftd__ping_split(fftd_client *client, double us[4]);

// fftd__rpc_call is one request-reply exchange under way (fftd__rpc_start,
// then fftd__rpc_finish), so that several daemons can be asked at once.
typedef struct fftd__rpc_call {
	nng_ctx  ctx;
	nng_aio *aio;
	int      rv;       // an error fftd__rpc_start met: _finish returns it
	char     msg[256]; // with this message
} fftd__rpc_call;

// fftd__decode_reply parses a reply message into *rp, fftd__decode_frame a
// reply frame in a buffer (see rpc.c).
int fftd__decode_reply(nng_msg *m, Fftd__Wire__Reply **rp, fftd__frame *f);
int fftd__decode_frame(
    uint8_t *buf, size_t len, Fftd__Wire__Reply **rp, fftd__frame *f);
// fftd__rpc_start sends req (no payload) to endpoint i without waiting.
void fftd__rpc_start(fftd_client *c, int i, const Fftd__Wire__Request *req,
    fftd__rpc_call *call);
// fftd__rpc_finish waits for the reply of a call fftd__rpc_start made.
int fftd__rpc_finish(fftd__rpc_call *call, Fftd__Wire__Reply **rp);
// fftd__rpc_on sends req to endpoint i and waits for the reply.
int fftd__rpc_on(fftd_client *c, int i, const Fftd__Wire__Request *req,
    Fftd__Wire__Reply **rp);
// fftd__rpc_payload sends req with len payload bytes to endpoint i and
// waits; on FFTD_OK the caller frees *rp and the reply message *mp (its
// payload in *f).
int fftd__rpc_payload(fftd_client *c, int i, const Fftd__Wire__Request *req,
    const void *payload, uint64_t len, Fftd__Wire__Reply **rp, nng_msg **mp,
    fftd__frame *f);
// fftd__rpc is fftd__rpc_on the first endpoint.
int fftd__rpc(
    fftd_client *c, const Fftd__Wire__Request *req, Fftd__Wire__Reply **rp);

// --- endpoint.c ------------------------------------------------------------

// fftd__client_dial dials url on sock and waits for the connection (for
// tls+tcp://, the TLS handshake too: FFTD_TLS_CA, FFTD_TLS_CERT,
// FFTD_TLS_KEY and FFTD_TLS_SERVER_NAME are read at each call; see
// endpoint.c). Returns 0 or an fftd_error code with msg filled:
// FFTD_ECONNREFUSED (nobody listening), FFTD_EINVAL (a TLS variable
// missing, or its file unreadable or not PEM: msg names it),
// FFTD_ENNGERR + NNG_ECRYPTO / NNG_ECONNSHUT / NNG_EPEERAUTH (handshake
// failed: msg says whether the daemon's certificate failed verification or
// the daemon refused the client's), FFTD_ENNGERR + n otherwise.
int fftd__client_dial(
    nng_socket sock, const char *url, char *msg, size_t msglen);

// fftd__copy_str copies src (NULL: "") into dst, cut to len bytes.
void fftd__copy_str(char *dst, size_t len, const char *src);
// fftd__merge_info folds daemon info o into *info, the first daemon's.
void fftd__merge_info(fftd_info *info, const fftd_info *o);
// fftd__parse_urls splits a comma-separated list into malloc'd URLs.
int fftd__parse_urls(const char *list, char **urls, int *n);
// fftd__link_free frees an endpoint's ep_link (NULL is ignored).
void fftd__link_free(ep_link *l);
// fftd__ep_open connects endpoint i (its url set) and says hello.
int fftd__ep_open(fftd_client *c, int i, fftd_info *info);

// --- client.c --------------------------------------------------------------

// fftd__client_unref drops one reference (a plan's, a buffer's, the open
// client's); the last frees the client.
void fftd__client_unref(fftd_client *c);

// --- array.c -------------------------------------------------------------

// fftd__array_alive says whether a's session still holds it: FFTD_OK, or
// FFTD_ECLOSED with the last error set.
int fftd__array_alive(const fftd_array *a);

// --- plan.c --------------------------------------------------------------

// fftd__ep_usable says whether executions of plan p may go to endpoint i.
bool fftd__ep_usable(const fftd_client *c, const fftd_plan *p, int i);

// --- buffer.c --------------------------------------------------------------

// stream.c: fftd__chan_open sends so (a StreamOpen) and hands the daemon
// one end of a new SOCK_SEQPACKET socketpair; *fd gets the other.
int fftd__chan_open(fftd_client *c, Fftd__Wire__StreamOpen *so, int *fd);

// bankchan.c: fftd__bankch_take lends a bank channel for a request whose
// results take at most reply_max bytes (its index; -1: use NNG);
// fftd__bankch_results is its result buffer's id (the request's
// result_buffer) and mapping; fftd__bankch_call sends req on it and waits
// (*unsent: the request never left, *broken: release it as such);
// fftd__bankch_release gives it back (closed unless ok);
// fftd__bankch_close_all closes them (client close).
int      fftd__bankch_take(fftd_client *c, size_t reply_max);
uint64_t fftd__bankch_results(fftd_client *c, int k, void **addr);
int  fftd__bankch_call(fftd_client *c, int k, const Fftd__Wire__Request *req,
     Fftd__Wire__Reply **rp, fftd__frame *f, bool *unsent, bool *broken);
void fftd__bankch_release(fftd_client *c, int k, bool ok);
void fftd__bankch_close_all(fftd_client *c);

// fftd__send_fd hands fd to the daemon's descriptor socket at path with
// the token and reads back the buffer id (common/handover.h), waiting at
// most timeout (the client's) for each side.
int fftd__send_fd(const char *path, const uint8_t *token, size_t toklen,
    uint64_t bytes, int fd, nng_duration timeout, uint64_t *id);
// fftd__buffer_release releases buf in the daemon and unmaps it here.
void fftd__buffer_release(fftd_client *c, fftd_buffer *buf);
// fftd__stage_acquire lends an idle staging buffer of at least bytes bytes
// (NULL: use the socket); fftd__stage_release gives it back.
fftd_buffer *fftd__stage_acquire(fftd_client *c, uint64_t bytes);
void         fftd__stage_release(fftd_client *c, fftd_buffer *b);
// fftd__buffer_find says whether [p, p + len) lies inside one of c's
// shared buffers at an offset that is a multiple of elem, and if so gives
// its id and the offset.
bool fftd__buffer_find(fftd_client *c, const void *p, uint64_t len, size_t elem,
    uint64_t *id, uint64_t *off);
// fftd__par_memcpy is memcpy, over several threads for large copies.
void fftd__par_memcpy(void *dst, const void *src, size_t n);

#endif // FFTD_CLIENT_IMPL_H

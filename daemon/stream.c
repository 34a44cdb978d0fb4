// SPDX-License-Identifier: MIT
//
// stream.c — floor 3 of the NNG server (server_impl.h): stream channels
// (chan.h), a realtime stream's executions submitted and answered over a
// socket of its own, and bank channels (StreamOpen's bank), whose
// MatchedFilter requests mf_req.c answers through fftd__stream_send_frame.
// StreamOpen (checked, answered with a token), the channel's attach when its
// socket arrives (the token ops that buffer.c's descriptor callback calls), its
// answers, its hang-up and its references. A channel's submissions become
// executions in exec.c (fftd__exec_stream_packet), which answer through
// fftd__stream_exec_done; the poller's thread and epoll loop are chan.c's.
// Calls reply.c, plan.c and buffer.c.
//
// Threads: fftd__stream_open on NNG's task threads; stream_attach and
// stream_watch on the fd socket's thread; fftd__stream_hangup on the
// poller's thread; fftd__stream_answer and fftd__stream_exec_done on the
// poller's thread (refusals) or the thread that ran or dropped the
// execution; fftd__stream_unref on any. Locks: s->chans and a session's
// nchans are under the server lock; a channel's refs are atomic; answers
// are sent (never blocking) with no lock held.

#include "server_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

// fftd__stream_unref drops one reference; the last closes the socket and
// gives back the channel's plan and buffer references.
void
fftd__stream_unref(fftd__server *s, fftd__stream *ch)
{
	if (ch == NULL || atomic_fetch_sub(&ch->refs, 1) != 1) {
		return;
	}
	close(ch->fd);
	if (ch->h != NULL) {
		fftd__plan_unref(s, ch->h);
	}
	fftd__buf_unref(s, ch->b);
	free(ch);
}

// fftd__stream_send_frame: see server_impl.h.
void
fftd__stream_send_frame(
    fftd__server *s, fftd__stream *ch, int status, nng_msg *m)
{
	fftd__reply_count(s, ch->pipe, status);
	if (m == NULL) {
		return;
	}
	if (send(ch->fd, nng_msg_body(m), nng_msg_len(m),
	        MSG_DONTWAIT | MSG_NOSIGNAL)
	    != (ssize_t) nng_msg_len(m)) {
		fftd__log(FFTD_LOG_DEBUG,
		    "bank channel of client %u: reply of %zu bytes not "
		    "delivered: %s",
		    ch->pipe, nng_msg_len(m), strerror(errno));
	}
	nng_msg_free(m);
}

// fftd__stream_answer answers submission `tag` on `slot` of a stream
// channel, counted as a reply. It never blocks a worker: a client that does
// not read its answers (its socket buffer full) or is gone loses them.
// times, when not NULL: the execution's received, started and finished
// CLOCK_MONOTONIC ns (fftd__chan_reply).
void
fftd__stream_answer(fftd__server *s, fftd__stream *ch, uint64_t tag,
    uint32_t slot, const uint64_t *times, int status, const char *fmt, ...)
{
	fftd__reply_count(s, ch->pipe, status);
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

// fftd__stream_exec_done answers an execution submitted on channel arg
// (the completion exec.c calls), then gives back the execution's
// reference to the channel and its unit of accepted work.
void
fftd__stream_exec_done(const fftd__exec_answer *a, int status, void *arg)
{
	fftd__stream *ch = arg;
	fftd__server *s  = ch->srv;
	if (status != FFTD_OK) {
		fftd__stream_answer(
		    s, ch, a->tag, a->slot, NULL, status, "%s", a->why);
	} else {
		fftd__stream_answer(
		    s, ch, a->tag, a->slot, a->times, FFTD_OK, "%s", "");
	}
	fftd__stream_unref(s, ch);
	fftd__busy_done(s);
}

static const fftd__token_ops stream_token_ops;

// fftd__stream_open checks what a stream channel will use (the plan, the
// buffer, every slot inside it) and answers a token for its socket.
void
fftd__stream_open(fftd__ctx *c, uint32_t pipe, const Fftd__Wire__StreamOpen *so)
{
	fftd__server *s = c->srv;
	uint8_t       token[FFTD__FDSOCK_TOKEN];
	if (!fftd__token_new(c, s->fdsock != NULL && s->chanpoll != NULL,
	        "stream channels", token)) {
		return;
	}
	int  rv = FFTD_OK;
	char msg[256];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
	fftd__handle  *h  = fftd__session_plan(ss, so->plan_id);
	fftd__shbuf   *b  = fftd__session_buf(ss, so->buffer_id);
	if (ss == NULL) {
		rv = FFTD_ECLOSED;
		snprintf(msg, sizeof(msg), "no session for this connection");
	} else if (!ss->ipc) {
		rv = FFTD_EUNSUPPORTED;
		snprintf(msg, sizeof(msg),
		    "stream channels need an ipc:// connection");
	} else if (so->bank
	    && (so->plan_id != 0 || so->buffer_id != 0 || so->depth != 0
	        || so->slot_bytes != 0 || so->out_offset != 0)) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "a bank channel takes no plan, buffer or slots");
	} else if (!so->bank && h == NULL) {
		rv = FFTD_ENOPLAN;
		snprintf(msg, sizeof(msg),
		    "plan %" PRIu64 " does not exist on this connection",
		    so->plan_id);
	} else if (!so->bank && b == NULL) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "buffer %" PRIu64 " does not exist on this connection",
		    so->buffer_id);
	} else if (!so->bank
	    && (so->depth == 0 || so->slot_bytes == 0
	        || so->slot_bytes > b->size / so->depth)) {
		rv = FFTD_EINVAL;
		snprintf(msg, sizeof(msg),
		    "%u slots of %" PRIu64 " bytes do not fit buffer %" PRIu64
		    " (%zu bytes)",
		    so->depth, so->slot_bytes, b->id, b->size);
	} else if (!so->bank
	    && (so->out_offset < h->shape.in.bytes
	        || so->out_offset > so->slot_bytes
	        || h->shape.out.bytes > so->slot_bytes - so->out_offset
	        || so->slot_bytes % 64 || so->out_offset % 64)) {
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
	} else if ((rv = fftd__token_over_count(s, ss, true, msg, sizeof(msg)))
	    == FFTD_OK) {
		fftd__token *pt = fftd__token_add(ss, token);
		pt->ops         = &stream_token_ops;
		pt->plan_id     = so->plan_id;
		pt->buffer_id   = so->buffer_id;
		pt->depth       = so->depth;
		pt->slot_bytes  = so->slot_bytes;
		pt->out_off     = so->out_offset;
		pt->bank        = so->bank;
	}
	pthread_mutex_unlock(&s->mtx);
	fftd__token_reply(c, rv, msg, token, true);
}

// stream_attach makes the channel for a stream token whose socket arrived
// (fd socket's thread; session ss's pending token t, server lock held):
// the token ops' attach (server_impl.h), *objp set to the channel.
static int
stream_attach(fftd__server *s, fftd__session *ss, const fftd__token *t, int fd,
    void **objp, char *msg, size_t msglen)
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
	fftd__handle *h = t->bank ? NULL : fftd__session_plan(ss, t->plan_id);
	fftd__shbuf  *b = t->bank ? NULL : fftd__session_buf(ss, t->buffer_id);
	if (!t->bank && (h == NULL || b == NULL)) {
		snprintf(msg, msglen,
		    "the stream's plan or buffer was released meanwhile");
		return FFTD_EINVAL;
	}
	int rv = fftd__token_over_count(s, ss, true, msg, msglen);
	if (rv != FFTD_OK) {
		return rv;
	}
	fftd__stream *ch = calloc(1, sizeof(*ch));
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
	ch->srv        = s;
	ch->fd         = cfd;
	ch->pipe       = ss->pipe;
	ch->h          = h;
	ch->b          = b;
	ch->depth      = t->depth;
	ch->slot_bytes = t->slot_bytes;
	ch->out_off    = t->out_off;
	ch->bank       = t->bank;
	atomic_store(&ch->busy, false);
	if (!t->bank) {
		atomic_fetch_add(&h->refs, 1);
		atomic_fetch_add(&b->refs, 1);
	}
	atomic_store(&ch->refs, 1); // the poller's
	ch->next = s->chans;
	s->chans = ch;
	ss->nchans++;
	*objp = ch;
	return FFTD_OK;
}

// stream_watch hands an attached channel to the poller (fd socket's
// thread, no lock held): the token ops' watch. A channel the poller cannot
// watch is hung up at once.
static int
stream_watch(fftd__server *s, void *obj, char *msg, size_t msglen)
{
	fftd__stream *ch = obj;
	int           rv = fftd__chanpoll_add(s->chanpoll, ch->fd, ch);
	if (rv != FFTD_OK) {
		snprintf(msg, msglen, "cannot watch the stream channel");
		fftd__stream_hangup(s, ch);
	}
	return rv;
}

// What a stream channel's descriptor token does when its socket arrives
// (buffer.c's fftd__buf_on_fd calls it; it never calls this file).
static const fftd__token_ops stream_token_ops = {
	.attach = stream_attach,
	.watch  = stream_watch,
};

// fftd__stream_hangup forgets a stream channel whose client hung up or whose
// session closed (poller thread).
void
fftd__stream_hangup(void *arg, void *chan)
{
	fftd__server *s  = arg;
	fftd__stream *ch = chan;
	pthread_mutex_lock(&s->mtx);
	for (fftd__stream **pp = &s->chans; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	fftd__session *ss = fftd__session_find(s, ch->pipe);
	if (ss != NULL) {
		ss->nchans--;
	}
	pthread_mutex_unlock(&s->mtx);
	fftd__stream_unref(s, ch);
}

// fftd__stream_shutdown_pipe shuts down the sockets of pipe's channels
// (its session is closing); the poller then sees them hang up.
void
fftd__stream_shutdown_pipe(fftd__server *s, uint32_t pipe)
{
	pthread_mutex_lock(&s->mtx);
	for (fftd__stream *ch = s->chans; ch != NULL; ch = ch->next) {
		if (ch->pipe == pipe) {
			shutdown(ch->fd, SHUT_RDWR);
		}
	}
	pthread_mutex_unlock(&s->mtx);
}

// fftd__stream_forget_all drops the poller's reference to the channels
// the stopped poller did not see hang up (server destroy, main thread).
void
fftd__stream_forget_all(fftd__server *s)
{
	while (s->chans != NULL) {
		fftd__stream *ch = s->chans;
		s->chans         = ch->next;
		fftd__stream_unref(s, ch);
	}
}

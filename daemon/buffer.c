// SPDX-License-Identifier: MIT
//
// buffer.c — floor 2 of the NNG server (server_impl.h): shared-memory
// buffers (BufferRegister, BufferRelease, their references: the last
// unpins and unmaps), the tokens that promise a descriptor hand-over to a
// session, and the fd socket's descriptor callback, which maps and pins a
// buffer or, for another kind of token, calls the ops its issuer listed
// with it (a stream channel's: stream.c). Calls reply.c only.
//
// Threads: the request handlers run on NNG's task threads;
// fftd__buf_on_fd on the fd socket's thread (fdsock.h), where pinning a
// large buffer (tens of ms) holds up no device; fftd__buf_unref on any
// thread. Locks: a session's buffers, tokens and their counts are under
// the server lock; a buffer's refs are atomic. Mapping and pinning run
// with no lock held.

#include "server_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

// fftd__buf_unref drops one reference; the last unpins and unmaps (host
// memory registration is thread-safe in the backends that pin).
void
fftd__buf_unref(fftd__server *s, fftd__shbuf *b)
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

// fftd__buf_find returns session ss's buffer id with one more reference, or
// NULL (server lock held).
fftd__shbuf *
fftd__buf_find(fftd__session *ss, uint64_t id)
{
	fftd__shbuf *b = fftd__session_buf(ss, id);
	if (b != NULL) {
		atomic_fetch_add(&b->refs, 1);
	}
	return b;
}

// fftd__token_new makes a token for a descriptor hand-over, or answers why not
// (false): the daemon does not offer `what`, or has no randomness.
bool
fftd__token_new(fftd__ctx *c, bool offered, const char *what,
    uint8_t token[FFTD__FDSOCK_TOKEN])
{
	if (!offered) {
		fftd__ctx_reply_error(c, FFTD_EUNSUPPORTED,
		    "this daemon offers no %s (no ipc:// listener)", what);
		return false;
	}
	if (getrandom(token, FFTD__FDSOCK_TOKEN, 0) != FFTD__FDSOCK_TOKEN) {
		fftd__ctx_reply_error(
		    c, FFTD_ESYSERR, "no randomness for a token");
		return false;
	}
	return true;
}

// fftd__token_add lists a new hand-over of session ss (room checked, server
// lock held): token set, everything else zero.
fftd__token *
fftd__token_add(fftd__session *ss, const uint8_t *token)
{
	fftd__token *pt = &ss->pending[ss->npending++];
	memset(pt, 0, sizeof(*pt));
	memcpy(pt->token, token, sizeof(pt->token));
	return pt;
}

// fftd__token_reply answers a BufferRegister or StreamOpen: with status rv and
// msg when it is refused, else the token to send with the descriptor and
// where to send it.
void
fftd__token_reply(
    fftd__ctx *c, int rv, const char *msg, const uint8_t *token, bool stream)
{
	if (rv != FFTD_OK) {
		fftd__ctx_reply_error(c, rv, "%s", msg);
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
	fftd__ctx_reply(c, &r, 0, NULL);
}

// fftd__token_over_count says whether session ss may have one more shared
// buffer (or stream channel): FFTD_OK, or FFTD_ELIMIT with why in msg when its
// connection or its user (all of the uid's ipc connections) holds the
// [limits] number already. Each buffer is a mapping and each channel a
// descriptor in the daemon, both finite (vm.max_map_count, RLIMIT_NOFILE).
// Server lock held.
int
fftd__token_over_count(
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

// fftd__buf_register checks a BufferRegister against the limits and
// answers a token for the descriptor hand-over.
void
fftd__buf_register(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRegister *br)
{
	fftd__server *s = c->srv;
	uint8_t       token[FFTD__FDSOCK_TOKEN];
	if (!fftd__token_new(c, s->fdsock != NULL, "shared memory", token)) {
		return;
	}
	int  rv = FFTD_OK;
	char msg[256];
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss    = fftd__session_find(s, pipe);
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
	} else if ((rv = fftd__token_over_count(s, ss, false, msg, sizeof(msg)))
	    == FFTD_OK) {
		fftd__token_add(ss, token)->bytes = br->bytes;
		ss->buf_bytes += br->bytes;
		ss->nbufs++;
	}
	pthread_mutex_unlock(&s->mtx);
	fftd__token_reply(c, rv, msg, token, false);
}

// fftd__buf_release forgets a buffer of the session; executions that use
// it keep it mapped until they end.
void
fftd__buf_release(
    fftd__ctx *c, uint32_t pipe, const Fftd__Wire__BufferRelease *br)
{
	fftd__server *s = c->srv;
	fftd__shbuf  *b = NULL;
	pthread_mutex_lock(&s->mtx);
	fftd__session *ss = fftd__session_find(s, pipe);
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
		fftd__ctx_reply_error(c, FFTD_EINVAL,
		    "buffer %" PRIu64 " does not exist on this connection",
		    br->buffer_id);
		return;
	}
	fftd__buf_unref(s, b);
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	fftd__ctx_reply(c, &r, 0, NULL);
}

// fftd__buf_on_fd runs on the fd socket's thread: it checks the token and
// the sender, maps the descriptor, pins it, and gives the buffer to its
// session. A token listed with ops (a stream channel's) is handed to them
// instead: attach under the server lock, then watch.
int
fftd__buf_on_fd(void *arg, const uint8_t *token, uint64_t bytes, int fd,
    const struct ucred *peer, uint64_t *id, char *msg, size_t msglen)
{
	fftd__server          *s     = arg;
	uint32_t               pipe  = 0;
	bool                   found = false, cred_ok = false;
	const fftd__token_ops *ops = NULL; // another kind of token's
	void                  *obj = NULL; // what its attach made
	int                    srv = FFTD_OK;
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
			if (cred_ok && ss->pending[i].ops != NULL) {
				ops = ss->pending[i].ops;
				srv = ops->attach(s, ss, &ss->pending[i], fd,
				    &obj, msg, msglen);
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
	if (ops != NULL) {
		// A stream channel: watched from now on (or not made).
		if (srv == FFTD_OK) {
			srv = ops->watch(s, obj, msg, msglen);
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
	fftd__session *ss = fftd__session_find(s, pipe);
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
		fftd__buf_unref(s, b);
	}
	return rv;
}

// SPDX-License-Identifier: MIT
//
// chan.c — the stream channels' poller (see chan.h).

#include "chan.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busypoll.h"
#include "clock.h"
#include "fftd.h"
#include "log.h"
#include "wire.h"

#define MAX_EVENTS 64
#define DRAIN_MAX 64

typedef struct watch {
	int           fd;
	void         *chan;
	struct watch *prev, *next; // in the poller's list (its lock)
} watch;

struct fftd__chanpoll {
	pthread_mutex_t    mtx;
	watch             *watches;
	int                ep;
	int                wake[2];
	pthread_t          thread;
	fftd__chanpoll_ops ops;
	void              *arg;
	uint64_t           busy_ns; // busy polling window (busypoll.h); 0 off
	// The largest packet, a bank channel's request (a frame of at most
	// FFTD__WIRE_MAX_PB protobuf bytes, no payload), and one byte more, so
	// that an oversized packet shows as such instead of being cut to a
	// valid length. Only the poller's thread uses it.
	uint8_t buf[FFTD__WIRE_HEADER_SIZE + FFTD__WIRE_MAX_PB + 1];
};

// fftd__chan_submit_parse checks one packet's size, slot and flags (see
// chan.h); exec.c's fftd__exec_stream_packet calls it on every packet.
int
fftd__chan_submit_parse(const void *pkt, size_t len, uint32_t depth,
    fftd__chan_submit *sub, char *msg, size_t msglen)
{
	if (len != sizeof(*sub)) {
		memset(sub, 0, sizeof(*sub));
		snprintf(msg, msglen,
		    "stream packet of %zu bytes; a submission is %zu", len,
		    sizeof(*sub));
		return FFTD_EPROTO;
	}
	memcpy(sub, pkt, sizeof(*sub));
	if (sub->slot >= depth || sub->flags != 0) {
		snprintf(msg, msglen, "slot %u of a stream of %u (flags %u)",
		    sub->slot, depth, sub->flags);
		return FFTD_EINVAL;
	}
	return FFTD_OK;
}

static void
unlink_watch(fftd__chanpoll *p, watch *w)
{
	if (w->prev != NULL) {
		w->prev->next = w->next;
	} else {
		p->watches = w->next;
	}
	if (w->next != NULL) {
		w->next->prev = w->prev;
	}
}

// drain reads every packet waiting on w; returns false once the channel
// hung up (on_hangup has run and w is freed).
static bool
drain(fftd__chanpoll *p, watch *w)
{
	uint8_t *buf = p->buf;
	// At most DRAIN_MAX packets a turn, so that a client that floods its
	// channel cannot starve the others (epoll reports it again).
	for (int k = 0; k < DRAIN_MAX; k++) {
		ssize_t n = recv(w->fd, buf, sizeof(p->buf), MSG_DONTWAIT);
		if (n > 0) {
			p->ops.on_packet(p->arg, w->chan, buf, (size_t) n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return true;
		}
		if (n < 0 && errno == EINTR) {
			continue;
		}
		// 0: the peer hung up (or the server shut it down).
		epoll_ctl(p->ep, EPOLL_CTL_DEL, w->fd, NULL);
		pthread_mutex_lock(&p->mtx);
		unlink_watch(p, w);
		pthread_mutex_unlock(&p->mtx);
		p->ops.on_hangup(p->arg, w->chan);
		free(w);
		return false;
	}
	return true;
}

static void *
chanpoll_main(void *arg)
{
	fftd__chanpoll    *p = arg;
	struct epoll_event ev[MAX_EVENTS];
	uint64_t           last = 0; // when a channel last had a packet
	for (;;) {
		// Within busy_ns of the last packet, poll instead of sleeping:
		// the client's next request usually follows its answer.
		bool polling = p->busy_ns > 0 && last != 0
		    && fftd__mono_ns() - last < p->busy_ns;
		int n = epoll_wait(p->ep, ev, MAX_EVENTS, polling ? 0 : -1);
		if (n == 0 || (n < 0 && errno == EINTR)) {
			fftd__cpu_relax();
			continue;
		}
		if (n < 0) {
			fftd__log(FFTD_LOG_ERROR, "stream channels: epoll: %s",
			    strerror(errno));
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == NULL) {
				return NULL; // stop
			}
			drain(p, ev[i].data.ptr);
		}
		last = fftd__mono_ns();
	}
}

int
fftd__chanpoll_start(fftd__chanpoll **pp, const fftd__chanpoll_ops *ops,
    void *arg, uint64_t busy_poll_ns, char *err, size_t errlen)
{
	fftd__chanpoll *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return FFTD_ENOMEM;
	}
	pthread_mutex_init(&p->mtx, NULL);
	p->ops     = *ops;
	p->arg     = arg;
	p->busy_ns = busy_poll_ns;
	p->wake[0] = p->wake[1] = -1;
	p->ep                   = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev   = { .events = EPOLLIN, .data.ptr = NULL };
	int                rv;
	if (p->ep < 0 || pipe2(p->wake, O_CLOEXEC) != 0
	    || epoll_ctl(p->ep, EPOLL_CTL_ADD, p->wake[0], &ev) != 0) {
		int e = errno;
		snprintf(err, errlen, "stream channels: %s", strerror(e));
		rv = FFTD_ESYSERR + e;
		goto fail;
	}
	if (pthread_create(&p->thread, NULL, chanpoll_main, p) != 0) {
		snprintf(err, errlen, "cannot start the stream channel thread");
		rv = FFTD_ESYSERR;
		goto fail;
	}
	*pp = p;
	return FFTD_OK;
fail: // close whatever was made before the failure
	for (int i = 0; i < 2; i++) {
		if (p->wake[i] >= 0) {
			close(p->wake[i]);
		}
	}
	if (p->ep >= 0) {
		close(p->ep);
	}
	pthread_mutex_destroy(&p->mtx);
	free(p);
	return rv;
}

int
fftd__chanpoll_add(fftd__chanpoll *p, int fd, void *chan)
{
	watch *w = malloc(sizeof(*w));
	if (w == NULL) {
		return FFTD_ENOMEM;
	}
	w->fd   = fd;
	w->chan = chan;
	w->prev = NULL;
	int fl  = fcntl(fd, F_GETFL);
	// Level-triggered: a packet that arrives while drain runs is seen on
	// the next epoll_wait.
	struct epoll_event ev
	    = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = w };
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		int e = errno;
		free(w);
		return FFTD_ESYSERR + e;
	}
	// Listed before the poller can see it, so that it is never unlinked
	// before it is linked.
	pthread_mutex_lock(&p->mtx);
	w->next = p->watches;
	if (w->next != NULL) {
		w->next->prev = w;
	}
	p->watches = w;
	int rv     = epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev);
	int e      = errno;
	if (rv != 0) {
		unlink_watch(p, w);
	}
	pthread_mutex_unlock(&p->mtx);
	if (rv != 0) {
		free(w);
		return FFTD_ESYSERR + e;
	}
	return FFTD_OK;
}

void
fftd__chanpoll_stop(fftd__chanpoll *p)
{
	if (p == NULL) {
		return;
	}
	if (write(p->wake[1], "x", 1) != 1) {
		fftd__log(
		    FFTD_LOG_WARN, "stream channels: cannot wake the thread");
	}
	pthread_join(p->thread, NULL);
	for (watch *w = p->watches, *next; w != NULL; w = next) {
		next = w->next;
		free(w);
	}
	pthread_mutex_destroy(&p->mtx);
	close(p->ep);
	close(p->wake[0]);
	close(p->wake[1]);
	free(p);
}

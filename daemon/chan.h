// SPDX-License-Identifier: MIT
//
// chan.h — PRIVATE to fftd. The poller of stream channels: one thread that
// waits (epoll) on every stream channel's SOCK_SEQPACKET socket and hands
// each packet to the server. A stream channel (StreamOpen in
// proto/fftd.proto; a bank channel likewise, its MatchedFilter requests)
// carries a realtime stream's submissions and answers
// straight between the client's thread and the daemon, instead of through
// NNG's poller and task threads on both sides: two thread wake-ups per
// execution where NNG needs six or more, each of which can wait for a CPU
// on a loaded host.

#ifndef FFTD_DAEMON_CHAN_H
#define FFTD_DAEMON_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "streamchan.h"

typedef struct fftd__chanpoll fftd__chanpoll;

// The callbacks run on the poller's thread. on_packet gets each packet
// received on a channel (len bytes, possibly malformed, in a buffer that
// is reused after it returns; a packet
// longer than a bank channel's largest request arrives cut to that length
// plus one byte); on_hangup runs
// once, last, when the channel's peer hung up, its socket failed, or it
// was shut down (shutdown(2) on its descriptor is how the server closes
// one). The descriptor stays the server's to close after on_hangup.
typedef struct fftd__chanpoll_ops {
	void (*on_packet)(void *arg, void *chan, const void *pkt, size_t len);
	void (*on_hangup)(void *arg, void *chan);
} fftd__chanpoll_ops;

// fftd__chanpoll_start starts the poller's thread. After a packet it
// polls its channels for busy_poll_ns (0: never) before it sleeps
// (busypoll.h).
int fftd__chanpoll_start(fftd__chanpoll **pp, const fftd__chanpoll_ops *ops,
    void *arg, uint64_t busy_poll_ns, char *err, size_t errlen);

// fftd__chanpoll_add watches fd (made non-blocking) for channel chan.
int fftd__chanpoll_add(fftd__chanpoll *p, int fd, void *chan);

// fftd__chanpoll_stop stops the thread; channels not hung up by then get
// no on_hangup (the server frees them itself).
void fftd__chanpoll_stop(fftd__chanpoll *p);

// fftd__chan_submit_parse reads one packet received on the channel of a
// stream of `depth` slots (len bytes at pkt, possibly malformed) into *sub.
// Returns FFTD_OK; FFTD_EPROTO when len is not a submission's size (*sub is
// zeroed); FFTD_EINVAL when its slot is outside the stream or its flags are
// set (*sub is filled, so that the answer can name its tag and slot). msg
// says why. No I/O, so that a fuzzer can call it (tests/fuzz).
int fftd__chan_submit_parse(const void *pkt, size_t len, uint32_t depth,
    struct fftd__chan_submit *sub, char *msg, size_t msglen);

#endif // FFTD_DAEMON_CHAN_H

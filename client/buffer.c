// SPDX-License-Identifier: MIT
//
// buffer.c — shared-memory buffers (fftd_buffer_*): a sealed memfd mapped here
// and handed to the daemon over its descriptor socket (the hand-over,
// common/handover.h; stream.c hands its channel over the same way), and the
// pool of staging buffers that inline executions of 64 KiB or more go
// through over ipc:// (exec.c), with the parallel copy into and out of them.

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_impl.h"
#include "handover.h"

// fftd__send_fd hands fd to the daemon's descriptor socket with the token and
// reads back the buffer id (common/handover.h), waiting at most the
// client's timeout (NNG_DURATION_INFINITE: no limit) for each side.
int
fftd__send_fd(const char *path, const uint8_t *token, size_t toklen,
    uint64_t bytes, int fd, nng_duration timeout, uint64_t *id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (toklen != FFTD__FDSOCK_TOKEN
	    || strlen(path) >= sizeof(sa.sun_path)) {
		return fftd__set_error(
		    FFTD_EPROTO, "bad buffer registration reply");
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
		int e = errno;
		if (s >= 0) {
			close(s);
		}
		return fftd__set_error(
		    FFTD_ESYSERR + e, "%s: %s", path, strerror(e));
	}
	// SO_RCVTIMEO/SO_SNDTIMEO of zero wait forever.
	struct timeval tv = { 0, 0 };
	if (timeout != NNG_DURATION_INFINITE && timeout > 0) {
		tv.tv_sec  = timeout / 1000;
		tv.tv_usec = (suseconds_t) (timeout % 1000) * 1000;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	uint8_t req[FFTD__FDSOCK_REQ];
	memcpy(req, token, FFTD__FDSOCK_TOKEN);
	for (int i = 0; i < 8; i++) {
		req[FFTD__FDSOCK_TOKEN + i] = (uint8_t) (bytes >> (8 * i));
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
	uint8_t rep[FFTD__FDSOCK_REPLY];
	ssize_t n = sendmsg(s, &mh, MSG_NOSIGNAL);
	// A daemon at its limit answers FFTD_ELIMIT and closes before reading
	// the request: its reply is there to read even when the send failed.
	if (n == (ssize_t) sizeof(req)
	    || (n < 0 && (errno == EPIPE || errno == ECONNRESET))) {
		n = recv(s, rep, sizeof(rep), MSG_WAITALL);
	}
	int e = errno;
	close(s);
	if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
		return fftd__set_error(FFTD_ETIMEDOUT,
		    "buffer hand-over to %s: no answer within the client's "
		    "timeout",
		    path);
	}
	if (n != (ssize_t) sizeof(rep)) {
		return fftd__set_error(n < 0 ? FFTD_ESYSERR + e : FFTD_EPROTO,
		    "buffer hand-over to %s failed", path);
	}
	int32_t status = (int32_t) ((uint32_t) rep[0] | (uint32_t) rep[1] << 8
	    | (uint32_t) rep[2] << 16 | (uint32_t) rep[3] << 24);
	*id            = 0;
	for (int i = 7; i >= 0; i--) {
		*id = (*id << 8) | rep[FFTD__FDSOCK_REPLY_ID + i];
	}
	rep[sizeof(rep) - 1] = '\0';
	if (status != FFTD_OK) {
		return fftd__set_error(
		    status, "%s", (const char *) rep + FFTD__FDSOCK_REPLY_MSG);
	}
	return FFTD_OK;
}

static int buffer_make(
    fftd_client *client, size_t bytes, bool staging, fftd_buffer **bufp);

// fftd_buffer_create makes a shared buffer for this client (fftd.h); a
// client of several daemons has none.
int
fftd_buffer_create(fftd_client *client, size_t bytes, fftd_buffer **bufp)
{
	if (fftd__forked()) {
		return fftd__fork_refuse();
	}
	if (client == NULL || bufp == NULL || bytes == 0) {
		return fftd__set_error(
		    FFTD_EINVAL, "client, bytes or bufp missing");
	}
	if (client->nep > 1) {
		return fftd__set_error(FFTD_EUNSUPPORTED,
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
		return fftd__set_error(FFTD_EUNSUPPORTED,
		    "shared memory needs an ipc:// connection");
	}
	size_t page = (size_t) sysconf(_SC_PAGESIZE);
	if (bytes > SIZE_MAX - page) {
		return fftd__set_error(FFTD_EOVERFLOW, "buffer size overflows");
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
		return fftd__set_error(
		    FFTD_ESYSERR + e, "memfd: %s", strerror(e));
	}
	void *addr
	    = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		int e = errno;
		close(fd);
		return fftd__set_error(
		    FFTD_ESYSERR + e, "mmap: %s", strerror(e));
	}
	Fftd__Wire__Request        req = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__BufferRegister br  = FFTD__WIRE__BUFFER_REGISTER__INIT;
	br.bytes                       = size;
	req.body_case         = FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER;
	req.buffer_register   = &br;
	Fftd__Wire__Reply *r  = NULL;
	uint64_t           id = 0;
	int                rv = fftd__rpc(client, &req, &r);
	if (rv == FFTD_OK
	    && r->body_case != FFTD__WIRE__REPLY__BODY_BUFFER_REGISTER) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "no registration in the reply");
	}
	if (rv == FFTD_OK) {
		rv = fftd__send_fd(r->buffer_register->fd_socket,
		    r->buffer_register->token.data,
		    r->buffer_register->token.len, size, fd, client->timeout,
		    &id);
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	close(fd); // the mappings keep the memory
	fftd_buffer *b = NULL;
	if (rv == FFTD_OK && (b = calloc(1, sizeof(*b))) == NULL) {
		rv = fftd__set_error(FFTD_ENOMEM, "out of memory");
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

// fftd__buffer_find says whether [p, p + len) lies inside one of c's shared
// buffers at an offset the daemon takes (a multiple of elem, the side's
// element size), and if so gives its id and the offset (exec.c, array.c).
// An array only aligned to its real type (as C allows for complex)
// travels inline.
bool
fftd__buffer_find(fftd_client *c, const void *p, uint64_t len, size_t elem,
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

// fftd__stage_acquire lends an idle staging buffer of at least `bytes` bytes,
// making one if none fits (sized to a power of two, so that requests of
// similar sizes share). NULL: use the socket (not ipc, the daemon refused a
// buffer, or staging is off).
fftd_buffer *
fftd__stage_acquire(fftd_client *c, uint64_t bytes)
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
	char         keep[sizeof(fftd__last_error)];
	memcpy(keep, fftd__last_error, sizeof(keep));
	int rv = size > SIZE_MAX ? FFTD_EOVERFLOW
	                         : buffer_make(c, (size_t) size, true, &b);
	memcpy(fftd__last_error, keep, sizeof(keep)); // not the caller's error
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
		fftd__buffer_release(c, drop);
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

// copy_part_main copies one part (a thread of fftd__par_memcpy).
static void *
copy_part_main(void *arg)
{
	copy_part *cp = arg;
	memcpy(cp->dst, cp->src, cp->n);
	return NULL;
}

// fftd__par_memcpy is memcpy, split over up to PAR_COPY_THREADS threads
// for copies of PAR_COPY_MIN bytes or more.
void
fftd__par_memcpy(void *dst, const void *src, size_t n)
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

// fftd__stage_release gives a staging buffer back to the pool.
void
fftd__stage_release(fftd_client *c, fftd_buffer *b)
{
	if (b == NULL) {
		return;
	}
	pthread_mutex_lock(&c->mtx);
	b->busy = false;
	pthread_mutex_unlock(&c->mtx);
}

// fftd_buffer_data is the buffer's address here.
void *
fftd_buffer_data(const fftd_buffer *buf)
{
	return buf ? buf->addr : NULL;
}

// fftd_buffer_size is the buffer's size, whole pages.
size_t
fftd_buffer_size(const fftd_buffer *buf)
{
	return buf ? buf->size : 0;
}

// fftd__buffer_release releases b in the daemon (unless the client is closed:
// the daemon released it with the session) and unmaps it here.
void
fftd__buffer_release(fftd_client *c, fftd_buffer *buf)
{
	if (!atomic_load(&c->closed)) {
		Fftd__Wire__Request       req = FFTD__WIRE__REQUEST__INIT;
		Fftd__Wire__BufferRelease br = FFTD__WIRE__BUFFER_RELEASE__INIT;
		br.buffer_id                 = buf->id;
		req.body_case        = FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE;
		req.buffer_release   = &br;
		Fftd__Wire__Reply *r = NULL;
		(void) fftd__rpc(
		    c, &req, &r); // a gone daemon released it already
		if (r != NULL) {
			fftd__wire__reply__free_unpacked(r, NULL);
		}
	}
	munmap(buf->addr, buf->size);
	free(buf);
}

// fftd_buffer_destroy unlists the buffer, releases it in the daemon and
// here, and drops its client reference.
void
fftd_buffer_destroy(fftd_buffer *buf)
{
	if (fftd__forked()) {
		return; // the parent's: see fork.c
	}
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
	fftd__buffer_release(c, buf);
	fftd__client_unref(c);
}

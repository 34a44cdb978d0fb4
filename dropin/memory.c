// SPDX-License-Identifier: MIT
//
// memory.c — fftw_malloc and fftw_free of the drop-in library (and so
// fftw_alloc_real and fftw_alloc_complex). An allocation of
// FFTD_FFTW3_SHM_MIN bytes or more (64 KiB by default) is an fftd shared
// buffer (fftd_buffer_create: memory the daemon maps too), so arrays a
// program plans on travel to the daemon by reference, with no copy;
// smaller ones, and all of them when no daemon is reachable or the daemon
// refuses another buffer, are host memory aligned to 64 bytes (FFTW's
// SIMD needs 16 or 32). Shared buffers are page-aligned. A table of the
// shared ones (pointer -> buffer, hashed, under one mutex) tells fftw_free
// which is which; pointers not in it came from posix_memalign (here, or
// from a real FFTW's fftw_malloc, which allocates the same way) and go to
// free().

#include <stdint.h>
#include <stdlib.h>

#include "dropin_impl.h"

#define NBUCKETS 256
#define HOST_ALIGN 64

// shm is one shared buffer handed out by fftw_malloc.
typedef struct shm {
	void        *data;
	fftd_buffer *buf;
	struct shm  *next;
} shm;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static shm            *table[NBUCKETS];

// bucket hashes a page-aligned pointer.
static size_t
bucket(const void *p)
{
	uintptr_t x = (uintptr_t) p >> 12;
	x ^= x >> 17;
	x *= UINT64_C(0x9e3779b97f4a7c15);
	return (size_t) (x >> 56) % NBUCKETS;
}

// host_alloc is the host-memory path.
static void *
host_alloc(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, HOST_ALIGN, n == 0 ? 1 : n) != 0) {
		return NULL;
	}
	return p;
}

// fftd__dr_malloc allocates n bytes for fftw_malloc.
void *
fftd__dr_malloc(size_t n)
{
	const fftd__dr_config *c = fftd__dr_config_get();
	if (c->disabled || n < c->shm_min) {
		return host_alloc(n);
	}
	fftd_client *cl = fftd__dr_client(NULL, 0);
	if (cl == NULL) {
		return host_alloc(n);
	}
	shm *e = malloc(sizeof(*e));
	if (e == NULL) {
		return NULL;
	}
	int rv = fftd_buffer_create(cl, n, &e->buf);
	if (rv != FFTD_OK) {
		fftd__dr_log(FFTD__DR_LOG_DEBUG,
		    "fftw_malloc(%zu): no shared buffer (%s: %s); host memory",
		    n, fftd_strerror(rv), fftd_last_error());
		free(e);
		return host_alloc(n);
	}
	e->data = fftd_buffer_data(e->buf);
	pthread_mutex_lock(&mem_lock);
	size_t b = bucket(e->data);
	e->next  = table[b];
	table[b] = e;
	pthread_mutex_unlock(&mem_lock);
	return e->data;
}

// fftd__dr_free frees what fftd__dr_malloc (or a real fftw_malloc) gave.
void
fftd__dr_free(void *p)
{
	if (p == NULL) {
		return;
	}
	shm *found = NULL;
	pthread_mutex_lock(&mem_lock);
	for (shm **pp = &table[bucket(p)]; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->data == p) {
			found = *pp;
			*pp   = found->next;
			break;
		}
	}
	pthread_mutex_unlock(&mem_lock);
	if (found == NULL) {
		free(p);
		return;
	}
	fftd_buffer_destroy(found->buf);
	free(found);
}

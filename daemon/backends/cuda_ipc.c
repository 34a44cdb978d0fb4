// SPDX-License-Identifier: MIT
//
// cuda_ipc.c — the cuda backend's CUDA IPC mappings (issue 16; backend.h:
// ipc_open, ipc_close, ipc_mappings): GPU memory a client process holds,
// named by the cudaIpcMemHandle_t it got from cudaIpcGetMemHandle, mapped
// into the daemon (cudaIpcOpenMemHandle) so that executions and copies use
// it in place, with no PCIe crossing. The memory stays the client's: it is
// never counted against the device budget and never freed here, only
// unmapped (cudaIpcCloseMemHandle). One allocation may back several arrays
// (of one client or several; a handle always names the allocation's base):
// a table per device maps each once and counts its users, since CUDA may
// refuse a second cudaIpcOpenMemHandle of one handle in one process.
// After the mapping, the memory's device (cudaPointerGetAttributes) must
// be this one and the span must lie inside the allocation
// (cuMemGetAddressRange, reached through cudaGetDriverEntryPointByVersion
// so that the daemon does not link libcuda and still starts on machines
// without a driver). Calls cuda_error.c.
//
// Threads: ipc_open and ipc_close run on the device's batch worker (array
// jobs); the table is that worker's alone. ipc_mappings runs on the
// worker too (after each job, as memory_in_use); the count is an atomic
// all the same, so that reading it is never a race.

#include <cuda.h>
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "errmsg.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == FFTD_IPC_HANDLE_SIZE,
    "FFTD_IPC_HANDLE_SIZE must be sizeof(cudaIpcMemHandle_t)");

// One mapped allocation: its handle, where it lies here and its size, and
// how many arrays use it.
struct fftd__cuda_ipc_map {
	unsigned char              handle[FFTD_IPC_HANDLE_SIZE];
	void                      *base;
	size_t                     size;
	int                        refs;
	struct fftd__cuda_ipc_map *next;
};

typedef CUresult (*get_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

// allocation_size finds how many bytes of the allocation mapped at base
// follow base (cuMemGetAddressRange of the driver API, looked up at each
// call: a mapping is rare next to the transforms on it).
static int
allocation_size(void *base, size_t *size, char *msg, size_t msglen)
{
	void                                *fn = NULL;
	enum cudaDriverEntryPointQueryResult q  = cudaDriverEntryPointSuccess;
	cudaError_t e = cudaGetDriverEntryPointByVersion(
	    "cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q);
	if (e != cudaSuccess || q != cudaDriverEntryPointSuccess
	    || fn == NULL) {
		(void) cudaGetLastError();
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "the CUDA driver offers no cuMemGetAddressRange (%s)",
		    cudaGetErrorString(e));
	}
	CUdeviceptr b = 0;
	size_t      n = 0;
	CUresult    r
	    = ((get_range_fn) fn)(&b, &n, (CUdeviceptr) (uintptr_t) base);
	if (r != CUDA_SUCCESS) {
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "cuMemGetAddressRange of a mapped IPC allocation: "
		    "CUresult %d",
		    (int) r);
	}
	// The mapping should start its allocation; where the driver maps a
	// larger range around it, only what follows base is the client's.
	uintptr_t lo = (uintptr_t) b, at = (uintptr_t) base;
	if (at < lo || at - lo > n) {
		return fftd__errmsg(FFTD_EBACKEND, msg, msglen,
		    "cuMemGetAddressRange: the IPC mapping lies outside the "
		    "range it reports");
	}
	*size = n - (size_t) (at - lo);
	return FFTD_OK;
}

// map_new maps handle on the current device and checks the memory's
// device; the new entry has no users yet.
static int
map_new(fftd__cuda_state *st, const void *handle,
    struct fftd__cuda_ipc_map **mp, char *msg, size_t msglen)
{
	cudaIpcMemHandle_t h;
	memcpy(&h, handle, sizeof(h));
	void       *base = NULL;
	cudaError_t e
	    = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
	if (e != cudaSuccess) {
		(void) cudaGetLastError();
		return fftd__cuda_fail(e,
		    "cudaIpcOpenMemHandle (the handle names no memory this "
		    "daemon can map)",
		    msg, msglen);
	}
	struct cudaPointerAttributes pa;
	int                          rv = FFTD_OK;
	if ((e = cudaPointerGetAttributes(&pa, base)) != cudaSuccess) {
		(void) cudaGetLastError();
		rv = fftd__cuda_fail(
		    e, "cudaPointerGetAttributes (IPC memory)", msg, msglen);
	} else if (pa.type != cudaMemoryTypeDevice
	    || pa.device != st->ordinal) {
		rv = fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "the handle's memory is on CUDA device %d, not on this "
		    "device (CUDA device %d)",
		    pa.device, st->ordinal);
	}
	size_t size = 0;
	if (rv == FFTD_OK) {
		rv = allocation_size(base, &size, msg, msglen);
	}
	struct fftd__cuda_ipc_map *m = NULL;
	if (rv == FFTD_OK && (m = calloc(1, sizeof(*m))) == NULL) {
		rv = fftd__errmsg(
		    FFTD_ENOMEM, msg, msglen, "no memory for an IPC mapping");
	}
	if (rv != FFTD_OK) {
		(void) cudaIpcCloseMemHandle(base);
		(void) cudaGetLastError();
		return rv;
	}
	memcpy(m->handle, handle, sizeof(m->handle));
	m->base = base;
	m->size = size;
	*mp     = m;
	return FFTD_OK;
}

// unmap closes m's mapping and frees it (its last user went).
static void
unmap(fftd__cuda_state *st, struct fftd__cuda_ipc_map *m)
{
	if (cudaIpcCloseMemHandle(m->base) != cudaSuccess) {
		(void) cudaGetLastError();
	}
	free(m);
	atomic_fetch_sub(&st->ipc_count, 1);
}

// fftd__cuda_ipc_open maps (or finds mapped) the allocation handle names
// and gives the address of [offset, offset + bytes) in it (backend.h:
// ipc_open). The daemon checked handle_len, bytes and their sum before.
int
fftd__cuda_ipc_open(fftd__device *dev, const void *handle, size_t handle_len,
    uint64_t offset, uint64_t bytes, void **ptr, void **map, char *msg,
    size_t msglen)
{
	fftd__cuda_state *st = dev->state;
	cudaError_t       e;
	if (handle_len != FFTD_IPC_HANDLE_SIZE) {
		return fftd__errmsg(FFTD_EINVAL, msg, msglen,
		    "an IPC handle of %zu bytes; a cudaIpcMemHandle_t has %d",
		    handle_len, FFTD_IPC_HANDLE_SIZE);
	}
	if ((e = cudaSetDevice(st->ordinal)) != cudaSuccess) {
		return fftd__cuda_fail(e, "cudaSetDevice", msg, msglen);
	}
	struct fftd__cuda_ipc_map *m = st->ipc;
	while (m != NULL && memcmp(m->handle, handle, sizeof(m->handle)) != 0) {
		m = m->next;
	}
	bool fresh = m == NULL;
	if (fresh) {
		int rv = map_new(st, handle, &m, msg, msglen);
		if (rv != FFTD_OK) {
			return rv;
		}
		m->next = st->ipc;
		st->ipc = m;
		atomic_fetch_add(&st->ipc_count, 1);
	}
	if (bytes > m->size || offset > m->size - bytes) {
		int rv = fftd__errmsg(FFTD_ESIZE, msg, msglen,
		    "%" PRIu64 " bytes at offset %" PRIu64
		    " pass the end of the IPC allocation (%zu bytes)",
		    bytes, offset, m->size);
		if (fresh) {
			st->ipc = m->next;
			unmap(st, m);
		}
		return rv;
	}
	m->refs++;
	*ptr = (char *) m->base + offset;
	*map = m;
	return FFTD_OK;
}

// fftd__cuda_ipc_close drops one user of a mapping; the last unmaps it
// (backend.h: ipc_close). cudaIpcCloseMemHandle does not wait for work
// queued on the memory, so the request stream is waited for first (no
// job of the daemon is in flight on an array that goes: the worker runs
// one job at a time, and the realtime lane's executions hold the array).
void
fftd__cuda_ipc_close(fftd__device *dev, void *map)
{
	fftd__cuda_state          *st = dev->state;
	struct fftd__cuda_ipc_map *m  = map;
	(void) cudaSetDevice(st->ordinal);
	if (m == NULL || --m->refs > 0) {
		return;
	}
	for (struct fftd__cuda_ipc_map **pp = &st->ipc; *pp != NULL;
	     pp                             = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	(void) cudaStreamSynchronize(st->stream);
	unmap(st, m);
}

// fftd__cuda_ipc_mappings is how many allocations this worker has mapped
// (backend.h: ipc_mappings).
uint64_t
fftd__cuda_ipc_mappings(fftd__device *dev)
{
	const fftd__cuda_state *st = dev->state;
	return st ? (uint64_t) atomic_load(&st->ipc_count) : 0;
}

// fftd__cuda_ipc_close_all unmaps what is still mapped when the device
// closes (cuda_device.c: close, after the last job).
void
fftd__cuda_ipc_close_all(fftd__cuda_state *st)
{
	while (st->ipc != NULL) {
		struct fftd__cuda_ipc_map *m = st->ipc;
		st->ipc                      = m->next;
		unmap(st, m);
	}
}

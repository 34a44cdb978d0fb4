// SPDX-License-Identifier: MIT
//
// test_gpu_ipc.c — CUDA IPC inputs (fftd_array_open_ipc, issue 16 item 2)
// on `fftd --backend cuda`, the daemon a separate process as for every
// client: this process cudaMallocs, fills, exports (cudaIpcGetMemHandle of
// the allocation's base, the offset of an interior pointer from
// cuMemGetAddressRange as fftd.h says) and opens spans through the daemon.
//   - executions on IPC arrays: C2C f32 (N = 1024, batch 16) and R2C f32
//     (N = 1000, batch 8), input an IPC span at an element-aligned interior
//     offset, output an IPC span of the same allocation (the handle opened
//     twice), of another allocation, and a resident array; outputs
//     poisoned (0xFF: NaN) and read back with cudaMemcpy, checked against
//     the long double FFTW reference within fftd_ref_bound (ref.h: 16 eps
//     log2 N, 9.5e-6 at N = 1024 in f32), every element written;
//   - fftd_array_write and fftd_array_read through an IPC array equal
//     cudaMemcpy of the same bytes, both ways;
//   - the memory is the client's: a 320 MiB allocation opens under the
//     daemon's 256 MiB budget and its memory in use does not move;
//   - refusals: a device the daemon does not have (FFTD_ENODEVICE; with
//     two GPUs, device 1 for memory of device 0: FFTD_EINVAL, or a CUDA
//     error where the devices have no peer access), a span past
//     the allocation (FFTD_ESIZE), a garbage handle (a typed CUDA error);
//     the daemon serves on;
//   - one handle opened twice is mapped once (fftd_device_stats
//     ipc_mappings + 1), unmapped at the last destroy;
//   - a killed client: a child cudaMallocs 4 allocations, opens 8 IPC
//     arrays on them and 2 resident arrays, and is SIGKILLed; the daemon's
//     ipc_mappings and device memory in use return to their levels within
//     10 s.
// Without FFTD_TEST_GPU=1 or a usable GPU (or built without CUDA) every
// test reports SKIPPED.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
// Only the suite's helpers (fill, memory in use, a poisoned array) are
// used here, not its tests.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../util/arrays_suite.h"
#pragma GCC diagnostic pop
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/gpu.h"
#include "fftd.h"

#ifdef FFTD_WITH_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif

#define TIMEOUT_MS 120000
#define KID_ALLOCS 4
#define KID_ALLOC_BYTES ((size_t) 4 << 20)
#define KID_RESIDENT_BYTES ((size_t) 4 << 20)

static const char      *skip_reason;
static fftd_test_daemon D;
static fftd_client     *C;

// FX: the daemon D (a 256 MiB device memory budget) with the client C;
// nothing starts without a GPU; the teardown fails unless D exits 0.
static fftd_test_fixture FX = FFTD_TEST_GPU_BUDGET_FIXTURE(&D, &C, TIMEOUT_MS);

#ifdef FFTD_WITH_CUDA

// CUDA_OK fails the test when a CUDA call of this process fails.
#define CUDA_OK(call)                                                          \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fail_msg("%s: %s", #call, cudaGetErrorString(e_));     \
		}                                                              \
	} while (0)

typedef CUresult (*get_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

// alloc_base finds the base and size of the allocation holding p
// (cuMemGetAddressRange, through the runtime's driver entry point: the
// tests do not link libcuda). Returns 0, or -1.
static int
alloc_base(const void *p, char **base, size_t *size)
{
	void                                *fn = NULL;
	enum cudaDriverEntryPointQueryResult q  = cudaDriverEntryPointSuccess;
	if (cudaGetDriverEntryPointByVersion(
	        "cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q)
	        != cudaSuccess
	    || q != cudaDriverEntryPointSuccess || fn == NULL) {
		return -1;
	}
	CUdeviceptr b = 0;
	if (((get_range_fn) fn)(&b, size, (CUdeviceptr) (uintptr_t) p)
	    != CUDA_SUCCESS) {
		return -1;
	}
	*base = (char *) (uintptr_t) b;
	return 0;
}

// open_span opens [p, p + bytes) of this process's device memory on
// client c as fftd.h says: the handle of p's allocation, p's offset in it.
// No cmocka assertion: the killed holder (a child) calls it too. Returns
// fftd_array_open_ipc's code, or -1 when this process's CUDA failed.
static int
open_span(fftd_client *c, int dev, const void *p, size_t bytes, fftd_array **a)
{
	char              *base = NULL;
	size_t             size = 0;
	cudaIpcMemHandle_t h;
	if (alloc_base(p, &base, &size) != 0
	    || cudaIpcGetMemHandle(&h, base) != cudaSuccess) {
		printf("cuMemGetAddressRange or cudaIpcGetMemHandle failed\n");
		return -1;
	}
	return fftd_array_open_ipc(c, dev, &h, sizeof(h),
	    (size_t) ((const char *) p - base), bytes, a);
}

// exec_case runs d with its input in an IPC span of this process's
// allocation `buf` (at an interior, element-aligned offset) and its output
// in the IPC span of *out_ptr's allocation (out_ptr NULL: a resident
// array), and checks the output against the reference.
static void
exec_case(const fftd_plan_desc *d, char *in_ptr, char *out_ptr, uint64_t seed)
{
	fftd__shape s;
	char        msg[256], name[160];
	fftd_test_describe(d, name, sizeof(name));
	assert_int_equal(fftd__shape_resolve(d, NULL, &s, msg, sizeof(msg)), 0);
	fftd_plan *p;
	ASSERT_OK(fftd_plan_create(C, d, &p));
	uint8_t *in = malloc(s.in.bytes), *out = malloc(s.out.bytes);
	assert_true(in && out);
	fftd_ref_fill_input(in, &s, seed);
	CUDA_OK(cudaMemcpy(in_ptr, in, s.in.bytes, cudaMemcpyHostToDevice));
	fftd_array *ain, *aout;
	ASSERT_OK(open_span(C, 0, in_ptr, s.in.bytes, &ain));
	if (out_ptr != NULL) {
		CUDA_OK(cudaMemset(out_ptr, 0xFF, s.out.bytes));
		ASSERT_OK(open_span(C, 0, out_ptr, s.out.bytes, &aout));
	} else {
		aout = arrays_alloc_poison(C, 0, s.out.bytes);
	}
	// This process's writes must be complete before the daemon reads the
	// memory: a cudaMemcpy from pageable memory may return before its
	// DMA lands and cudaMemset is asynchronous, so wait for the device.
	// The daemon's are complete when the call returns.
	CUDA_OK(cudaDeviceSynchronize());
	int rv = fftd_execute_arrays(p, ain, 0, aout, 0);
	if (rv != FFTD_OK) {
		fail_msg(
		    "%s: %s: %s", name, fftd_err_name(rv), fftd_last_error());
	}
	if (out_ptr != NULL) {
		CUDA_OK(cudaMemcpy(
		    out, out_ptr, s.out.bytes, cudaMemcpyDeviceToHost));
	} else {
		ASSERT_OK(fftd_array_read(aout, 0, out, s.out.bytes));
	}
	long double *ref = fftd_ref_transform(&s, in);
	assert_non_null(ref);
	double err   = fftd_ref_rel_l2(&s, out, ref);
	double bound = fftd_ref_bound(&s);
	printf("%s, output %s: rel L2 %.3g (bound %.3g)\n", name,
	    out_ptr ? "IPC" : "resident", err, bound);
	assert_int_equal(fftd_ref_unwritten(&s, out), 0);
	assert_true(err <= bound);
	// The input span is unchanged (C2C and R2C keep it).
	uint8_t *back = malloc(s.in.bytes);
	assert_non_null(back);
	CUDA_OK(cudaMemcpy(back, in_ptr, s.in.bytes, cudaMemcpyDeviceToHost));
	assert_memory_equal(back, in, s.in.bytes);
	free(back);
	free(ref);
	fftd_array_destroy(ain);
	fftd_array_destroy(aout);
	fftd_plan_destroy(p);
	free(in);
	free(out);
}

// test_executions: C2C and R2C f32 on IPC inputs, into an IPC span of the
// same allocation (its handle opened twice), of another one, and into a
// resident array.
static void
test_executions(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	char *a = NULL, *b = NULL;
	CUDA_OK(cudaMalloc((void **) &a, (size_t) 8 << 20));
	CUDA_OK(cudaMalloc((void **) &b, (size_t) 4 << 20));
	fftd_plan_desc d;
	int64_t        n = 1024;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F32));
	d.batch = 16;
	exec_case(&d, a + 3 * 8, a + (4 << 20) + 5 * 8, fftd_test_case_seed(1));
	exec_case(&d, a + 7 * 8, b + 11 * 8, fftd_test_case_seed(2));
	exec_case(&d, a + 4096, NULL, fftd_test_case_seed(3));
	n = 1000;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_R2C, FFTD_F32));
	d.batch = 8;
	exec_case(&d, a + 3 * 4, a + (4 << 20) + 8, fftd_test_case_seed(4));
	exec_case(&d, a + 64, b, fftd_test_case_seed(5));
	CUDA_OK(cudaFree(a));
	CUDA_OK(cudaFree(b));
}

// test_copies: fftd_array_write into an IPC array and cudaMemcpy out of
// the memory agree, and cudaMemcpy into it and fftd_array_read, at odd
// offsets and lengths; a 320 MiB allocation opens beside the 256 MiB
// budget, the daemon's memory in use unchanged.
static void
test_copies(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	const size_t bytes = ((size_t) 1 << 20) + 13, off = 4099;
	char        *a = NULL;
	CUDA_OK(cudaMalloc((void **) &a, bytes + off + 7));
	uint8_t *src = malloc(bytes), *got = malloc(bytes);
	assert_true(src && got);
	fftd_array *x;
	ASSERT_OK(open_span(C, 0, a + off, bytes, &x));
	assert_int_equal(fftd_array_size(x), bytes);
	assert_int_equal(fftd_array_device(x), 0);
	arrays_fill_random(src, bytes, fftd_test_case_seed(10));
	ASSERT_OK(fftd_array_write(x, 5, src, bytes - 5));
	CUDA_OK(
	    cudaMemcpy(got, a + off + 5, bytes - 5, cudaMemcpyDeviceToHost));
	assert_memory_equal(got, src, bytes - 5);
	arrays_fill_random(src, bytes, fftd_test_case_seed(11));
	CUDA_OK(cudaMemcpy(a + off, src, bytes, cudaMemcpyHostToDevice));
	CUDA_OK(cudaDeviceSynchronize()); // the DMA has landed (see exec_case)
	memset(got, 0x5A, bytes);
	ASSERT_OK(fftd_array_read(x, 0, got, bytes));
	assert_memory_equal(got, src, bytes);
	assert_int_equal(fftd_array_read(x, 1, got, bytes), FFTD_ESIZE);
	fftd_array_destroy(x);
	// The client's memory is not the daemon's.
	uint64_t m0  = arrays_memory_used(C, 0);
	char    *big = NULL;
	CUDA_OK(cudaMalloc((void **) &big, (size_t) 320 << 20));
	ASSERT_OK(open_span(C, 0, big, (size_t) 320 << 20, &x));
	assert_int_equal(arrays_memory_used(C, 0), m0);
	assert_true(m0 <= FFTD_TEST_GPU_BUDGET);
	fftd_array_destroy(x);
	CUDA_OK(cudaFree(big));
	CUDA_OK(cudaFree(a));
	free(src);
	free(got);
}

// test_refusals: a device the daemon lacks, memory of another device, a
// span past the allocation, a garbage handle: each its typed error, no
// array made, the daemon serving on.
static void
test_refusals(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	// 2 MiB: a whole page of the allocator, so that the daemon sees the
	// same size however the driver rounds it.
	char *a = NULL;
	CUDA_OK(cudaMalloc((void **) &a, (size_t) 2 << 20));
	fftd_array *x = NULL;
	fftd_info   in;
	ASSERT_OK(fftd_client_info(C, &in));
	int rv = open_span(C, 1, a, 4096, &x);
	printf("device 1 of %d: %s: %s\n", in.ndevices, fftd_err_name(rv),
	    fftd_last_error());
	// With two GPUs the daemon maps it on device 1 (through peer access)
	// and refuses it there, or CUDA cannot map it at all.
	assert_true(in.ndevices > 1 ? rv == FFTD_EINVAL
	            || (rv & FFTD_ERR_RANGE_MASK) == FFTD_ECUDAERR
	                            : rv == FFTD_ENODEVICE);
	rv = open_span(C, 0, a + 4096, (size_t) 2 << 20, &x);
	printf("past the allocation: %s: %s\n", fftd_err_name(rv),
	    fftd_last_error());
	assert_int_equal(rv, FFTD_ESIZE);
	uint8_t junk[FFTD_IPC_HANDLE_SIZE];
	arrays_fill_random(junk, sizeof(junk), fftd_test_case_seed(20));
	rv = fftd_array_open_ipc(C, 0, junk, sizeof(junk), 0, 64, &x);
	printf(
	    "garbage handle: %s: %s\n", fftd_err_name(rv), fftd_last_error());
	assert_int_not_equal(rv, FFTD_OK);
	assert_true((rv & FFTD_ERR_RANGE_MASK) == FFTD_ECUDAERR
	    || rv == FFTD_EINVAL || rv == FFTD_EBACKEND);
	assert_null(x);
	assert_int_equal(
	    arrays_wait_stat(C, 0, ARRAYS_IPC_MAPPINGS, 0, 10000), 0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	CUDA_OK(cudaFree(a));
}

// test_refcount: one allocation opened as three arrays, two of them with
// one span, is one mapping until the last goes.
static void
test_refcount(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t i0 = arrays_device_stat(C, 0, ARRAYS_IPC_MAPPINGS);
	char    *a  = NULL;
	CUDA_OK(cudaMalloc((void **) &a, (size_t) 1 << 20));
	fftd_array *x[3];
	ASSERT_OK(open_span(C, 0, a, 4096, &x[0]));
	ASSERT_OK(open_span(C, 0, a, 4096, &x[1]));
	ASSERT_OK(open_span(C, 0, a + 8192, 8192, &x[2]));
	assert_int_equal(
	    arrays_wait_stat(C, 0, ARRAYS_IPC_MAPPINGS, i0 + 1, 10000), 0);
	// The three see one memory.
	uint8_t w[64], r[64];
	arrays_fill_random(w, sizeof(w), fftd_test_case_seed(30));
	ASSERT_OK(fftd_array_write(x[0], 100, w, sizeof(w)));
	ASSERT_OK(fftd_array_read(x[1], 100, r, sizeof(r)));
	assert_memory_equal(r, w, sizeof(w));
	fftd_array_destroy(x[0]);
	fftd_array_destroy(x[2]);
	fftd_test_sleep_ms(100);
	assert_int_equal(arrays_device_stat(C, 0, ARRAYS_IPC_MAPPINGS), i0 + 1);
	ASSERT_OK(fftd_array_read(x[1], 0, r, sizeof(r)));
	fftd_array_destroy(x[1]);
	assert_int_equal(
	    arrays_wait_stat(C, 0, ARRAYS_IPC_MAPPINGS, i0, 10000), 0);
	CUDA_OK(cudaFree(a));
}

// role_ipc_holder (a child role: URL FD) cudaMallocs KID_ALLOCS
// allocations, opens two IPC arrays on each and creates two resident
// arrays, says 'R' on FD and waits to be killed.
static int
role_ipc_holder(int argc, char **argv)
{
	if (argc < 2) {
		return 100;
	}
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], 60000) != FFTD_OK) {
		return 101;
	}
	for (int i = 0; i < KID_ALLOCS; i++) {
		char       *p = NULL;
		fftd_array *a;
		if (cudaMalloc((void **) &p, KID_ALLOC_BYTES) != cudaSuccess
		    || cudaMemset(p, 0x42, KID_ALLOC_BYTES) != cudaSuccess) {
			return 102;
		}
		if (open_span(c, 0, p, KID_ALLOC_BYTES, &a) != FFTD_OK
		    || open_span(c, 0, p + 4096, 4096, &a) != FFTD_OK) {
			return 103;
		}
	}
	for (int i = 0; i < 2; i++) {
		fftd_array *a;
		if (fftd_array_create(c, 0, KID_RESIDENT_BYTES, &a)
		    != FFTD_OK) {
			return 104;
		}
	}
	if (write(atoi(argv[1]), "R", 1) != 1) {
		return 105;
	}
	for (;;) {
		pause();
	}
}

// test_killed: a client holding IPC mappings and resident arrays is
// SIGKILLed; the daemon unmaps and frees everything within 10 s.
static void
test_killed(void **state)
{
	(void) state;
	if (skip_reason != NULL) {
		skip();
	}
	uint64_t m0     = arrays_memory_used(C, 0),
	         i0     = arrays_device_stat(C, 0, ARRAYS_IPC_MAPPINGS);
	int      ready  = 0;
	pid_t    pid    = arrays_spawn_ready("ipc_holder", D.url, NULL, &ready);
	int      mapped = -1;
	uint64_t m1     = 0;
	if (ready) {
		mapped = arrays_wait_stat(
		    C, 0, ARRAYS_IPC_MAPPINGS, i0 + KID_ALLOCS, 10000);
		m1 = arrays_memory_used(C, 0);
	}
	kill(pid, SIGKILL);
	int wst;
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(ready);
	assert_int_equal(mapped, 0);
	printf("device 0: %llu bytes in use and %llu mappings before the "
	       "holder, %llu bytes with its arrays\n",
	    (unsigned long long) m0, (unsigned long long) i0,
	    (unsigned long long) m1);
	assert_true(m1 >= m0 + 2 * KID_RESIDENT_BYTES);
	assert_int_equal(
	    arrays_wait_stat(C, 0, ARRAYS_IPC_MAPPINGS, i0, 10000), 0);
	assert_int_equal(arrays_wait_memory(C, 0, m0, 10000), 0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

static const fftd_test_role roles[] = {
	{ "ipc_holder", role_ipc_holder },
	{ NULL, NULL },
};

#else // !FFTD_WITH_CUDA

FFTD_TEST_NO_CUDA(test_executions)
FFTD_TEST_NO_CUDA(test_copies)
FFTD_TEST_NO_CUDA(test_refusals)
FFTD_TEST_NO_CUDA(test_refcount)
FFTD_TEST_NO_CUDA(test_killed)
static const fftd_test_role roles[] = { { NULL, NULL } };

#endif // FFTD_WITH_CUDA

int
main(int argc, char **argv)
{
	skip_reason = fftd_test_gpu_start_roles(argc, argv, roles, &FX);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_executions),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_killed),
	};
	return fftd_test_run_group("ipc[cuda]", tests, &FX);
}

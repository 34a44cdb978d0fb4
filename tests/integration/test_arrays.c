// SPDX-License-Identifier: MIT
//
// test_arrays.c — resident arrays (issue 16) against a real `fftd
// --backend fftw`, where "device memory" is the daemon's host memory:
//   - round trips, executions on arrays (C2C/R2C/C2R x f32/f64 against the
//     long double FFTW reference within fftd_ref_bound, outputs poisoned)
//     and a chain of executions that never leaves the daemon
//     (tests/util/arrays_suite.h), with libfftd's staging on and off, and
//     across the 64 MiB chunks of a large inline copy;
//   - limits: [limits] max_arrays_per_client and max_array_bytes_per_client
//     are FFTD_ELIMIT, an array past the host budget ([backend]
//     device_memory) FFTD_EDEVMEM, a 2^62-byte one EDEVMEM on the default
//     daemon, never a crash; bad arguments are typed errors;
//   - hostile requests on raw sessions: unknown ids, another connection's
//     array id, spans past an array, misaligned and overlapping spans,
//     payloads that do not match: each its typed error, the owner's array
//     untouched;
//   - lifetime: the daemon's memory in use (device stats) back to its
//     level after fftd_array_destroy, fftd_client_close and a SIGKILLed
//     client;
//   - the MatchedFilter request: bad arguments answered with the typed
//     error of the check that refuses them (through libfftd and raw), good
//     ones run (a flat PSD, zero data: rho 0).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/arrays_suite.h"
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/shm_raw.h"
#include "fftd.h"
#include "wire.h"

#define TIMEOUT_MS 60000

static fftd_test_daemon  D; // the shared daemon (fftw backend, defaults)
static fftd_test_daemon  L; // a test's own (fftd_test_local_teardown)
static fftd_client      *C;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
	.local      = &L,
};

static void
test_round_trips(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	arrays_round_trips(C, -1, fftd_test_case_seed(100));
	// The same with staging off: large heap spans travel in the socket.
	setenv("FFTD_INLINE_STAGING", "0", 1);
	fftd_client *c;
	int          rv = fftd_client_open(&c, D.url, TIMEOUT_MS);
	unsetenv("FFTD_INLINE_STAGING");
	ASSERT_OK(rv);
	arrays_round_trips(c, 0, fftd_test_case_seed(200));
	fftd_client_close(c);
}

// test_big_copy: a copy larger than libfftd's 64 MiB chunk, from and into
// the heap, with the chunk boundary at an odd offset.
static void
test_big_copy(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	size_t      bytes = ((size_t) 64 << 20) + 4099;
	uint8_t    *src = malloc(bytes), *got = malloc(bytes);
	fftd_array *a;
	assert_true(src && got);
	arrays_fill_random(src, bytes, fftd_test_case_seed(300));
	ASSERT_OK(fftd_array_create(C, 0, bytes + 5, &a));
	ASSERT_OK(fftd_array_write(a, 5, src, bytes));
	ASSERT_OK(fftd_array_read(a, 5, got, bytes));
	assert_memory_equal(got, src, bytes);
	fftd_array_destroy(a);
	free(src);
	free(got);
}

static void
test_executions(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	arrays_exec_all(C, 0);
}

static void
test_chain(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_stats s0, s1;
	ASSERT_OK(fftd_get_stats(C, &s0));
	arrays_chain(C, -1, fftd_test_case_seed(400));
	ASSERT_OK(fftd_get_stats(C, &s1));
	// Three executions ran in the daemon; libfftd refuses a payload in
	// their replies (fftd__rpc_on), so no intermediate came back.
	assert_int_equal(s1.executes - s0.executes, 3);
}

// test_limits: a daemon allowing 3 arrays and 1 MiB of them per
// connection, with a 4 MiB host budget.
static void
test_limits(void **state)
{
	(void) state;
	static const char conf[] = "[backend]\ndevice_memory = 4M\n"
	                           "[limits]\nmax_arrays_per_client = 3\n"
	                           "max_array_bytes_per_client = 1M\n";
	assert_int_equal(fftd_test_daemon_start(&L, conf, DAEMON_ARGS), 0);
	fftd_client *c, *c2;
	ASSERT_OK(fftd_client_open(&c, L.url, TIMEOUT_MS));
	fftd_array *a[4] = { NULL }, *x = NULL;
	assert_int_equal(
	    fftd_array_create(c, -1, (1 << 20) + 1, &x), FFTD_ELIMIT);
	assert_non_null(strstr(fftd_last_error(), "max_array_bytes"));
	ASSERT_OK(fftd_array_create(c, -1, 512 << 10, &a[0]));
	ASSERT_OK(fftd_array_create(c, -1, 256 << 10, &a[1]));
	assert_int_equal(fftd_array_create(c, -1, 300 << 10, &x), FFTD_ELIMIT);
	ASSERT_OK(fftd_array_create(c, -1, 1000, &a[2]));
	assert_int_equal(fftd_array_create(c, -1, 8, &x), FFTD_ELIMIT);
	assert_non_null(strstr(fftd_last_error(), "max_arrays_per_client"));
	fftd_array_destroy(a[2]); // gives the count back
	ASSERT_OK(fftd_array_create(c, -1, 8, &a[3]));
	// The limits are per connection; the host budget is the device's.
	ASSERT_OK(fftd_client_open(&c2, L.url, TIMEOUT_MS));
	fftd_array *b[4];
	ASSERT_OK(fftd_array_create(c2, -1, 1 << 20, &b[0]));
	assert_int_equal(fftd_array_create(c2, -1, 1, &x), FFTD_ELIMIT);
	fftd_array_destroy(b[0]); // gives the bytes back
	ASSERT_OK(fftd_array_create(c2, -1, 1 << 20, &b[1]));
	fftd_client *c3;
	ASSERT_OK(fftd_client_open(&c3, L.url, TIMEOUT_MS));
	ASSERT_OK(fftd_array_create(c3, -1, 1 << 20, &b[3]));
	// 768 KiB + 8 + 3 x 1 MiB held: 1 MiB more does not fit the 4 MiB
	// host budget, whoever asks.
	fftd_client *c4;
	ASSERT_OK(fftd_client_open(&c4, L.url, TIMEOUT_MS));
	fftd_array *y = NULL;
	ASSERT_OK(fftd_array_create(c4, -1, 1 << 20, &y));
	fftd_client *c5;
	ASSERT_OK(fftd_client_open(&c5, L.url, TIMEOUT_MS));
	assert_int_equal(fftd_array_create(c5, -1, 1 << 20, &x), FFTD_EDEVMEM);
	assert_non_null(strstr(fftd_last_error(), "budget"));
	// Bad arguments.
	assert_int_equal(fftd_array_create(c5, -1, 0, &x), FFTD_EINVAL);
	assert_int_equal(fftd_array_create(c5, -2, 8, &x), FFTD_EINVAL);
	assert_int_equal(fftd_array_create(c5, 7, 8, &x), FFTD_ENODEVICE);
	assert_int_equal(fftd_array_create(NULL, 0, 8, &x), FFTD_EINVAL);
	fftd_client_close(c5);
	fftd_client_close(c4);
	fftd_client_close(c3);
	fftd_client_close(c2);
	fftd_array_destroy(y);
	fftd_array_destroy(b[1]);
	fftd_array_destroy(b[3]);
	for (int i = 0; i < 4; i++) {
		if (i != 2) {
			fftd_array_destroy(a[i]);
		}
	}
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// test_huge: an array far past any memory is refused, never a crash.
static void
test_huge(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	fftd_array *x  = NULL;
	int         rv = fftd_array_create(C, 0, (size_t) 1 << 62, &x);
	printf(
	    "2^62-byte array: %s: %s\n", fftd_err_name(rv), fftd_last_error());
	assert_true(rv == FFTD_EDEVMEM || rv == FFTD_ELIMIT);
	assert_null(x);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// raw_array_create creates an array on a raw session; returns its id.
static uint64_t
raw_array_create(nng_socket s, uint64_t bytes)
{
	Fftd__Wire__Request     rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayCreate ac = FFTD__WIRE__ARRAY_CREATE__INIT;
	ac.device                  = -1;
	ac.bytes                   = bytes;
	rq.body_case               = FFTD__WIRE__REQUEST__BODY_ARRAY_CREATE;
	rq.array_create            = &ac;
	Fftd__Wire__Reply *r       = NULL;
	assert_int_equal(fftd_test_raw_request(s, &rq, NULL, 0, &r), FFTD_OK);
	assert_int_equal(r->body_case, FFTD__WIRE__REPLY__BODY_ARRAY_CREATE);
	assert_int_equal(r->array_create->bytes, bytes);
	uint64_t id = r->array_create->array_id;
	fftd__wire__reply__free_unpacked(r, NULL);
	return id;
}

// raw_status sends rq with payload_len bytes of payload and returns the
// reply's status, printing its message.
static int
raw_status(nng_socket s, const Fftd__Wire__Request *rq, const void *payload,
    size_t payload_len)
{
	Fftd__Wire__Reply *r = NULL;
	int rv = fftd_test_raw_request(s, rq, payload, payload_len, &r);
	if (r != NULL) {
		if (rv != FFTD_OK) {
			printf("  %s: %s\n", fftd_err_name(rv), r->message);
		}
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv;
}

// raw_write and raw_read send an ArrayWrite (payload inline) and an
// ArrayRead (nothing else set) and return the status.
static int
raw_write(nng_socket s, uint64_t id, uint64_t off, uint64_t len,
    const void *payload, size_t plen)
{
	Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayWrite aw = FFTD__WIRE__ARRAY_WRITE__INIT;
	aw.array_id               = id;
	aw.offset                 = off;
	aw.len                    = len;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE;
	rq.array_write            = &aw;
	return raw_status(s, &rq, payload, plen);
}

static int
raw_read(nng_socket s, uint64_t id, uint64_t off, uint64_t len)
{
	Fftd__Wire__Request   rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayRead ar = FFTD__WIRE__ARRAY_READ__INIT;
	ar.array_id              = id;
	ar.offset                = off;
	ar.len                   = len;
	rq.body_case             = FFTD__WIRE__REQUEST__BODY_ARRAY_READ;
	rq.array_read            = &ar;
	return raw_status(s, &rq, NULL, 0);
}

// raw_exec sends an Execute of plan on arrays and returns the status.
static int
raw_exec(nng_socket s, uint64_t plan, uint64_t in, uint64_t in_off,
    uint64_t out, uint64_t out_off, size_t payload_len)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = plan;
	ex.in_array            = in;
	ex.in_offset           = in_off;
	ex.out_array           = out;
	ex.out_offset          = out_off;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	rq.execute             = &ex;
	return raw_status(s, &rq, NULL, payload_len);
}

// test_hostile: what no correct client sends, on two raw sessions.
static void
test_hostile(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	nng_socket s1, s2;
	fftd_test_raw_connect(&s1, D.url);
	fftd_test_raw_connect(&s2, D.url);
	uint64_t mine = raw_array_create(s1, 4096);
	uint64_t out  = raw_array_create(s1, 8192);
	uint8_t  pat[4096];
	arrays_fill_random(pat, sizeof(pat), 7);
	assert_int_equal(raw_write(s1, mine, 0, 4096, pat, 4096), FFTD_OK);
	// Another connection cannot use, read, write or destroy my array.
	assert_int_equal(raw_read(s2, mine, 0, 16), FFTD_EINVAL);
	assert_int_equal(raw_write(s2, mine, 0, 16, pat, 16), FFTD_EINVAL);
	Fftd__Wire__Request      rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayDestroy ad = FFTD__WIRE__ARRAY_DESTROY__INIT;
	ad.array_id                 = mine;
	rq.body_case                = FFTD__WIRE__REQUEST__BODY_ARRAY_DESTROY;
	rq.array_destroy            = &ad;
	assert_int_equal(raw_status(s2, &rq, NULL, 0), FFTD_EINVAL);
	// Unknown ids, spans past the end, payloads that disagree.
	assert_int_equal(raw_read(s1, 999999, 0, 16), FFTD_EINVAL);
	assert_int_equal(raw_read(s1, mine, 4090, 7), FFTD_ESIZE);
	assert_int_equal(raw_read(s1, mine, UINT64_MAX, 2), FFTD_ESIZE);
	assert_int_equal(raw_write(s1, mine, 4095, 2, pat, 2), FFTD_ESIZE);
	assert_int_equal(raw_write(s1, mine, 0, 100, pat, 99), FFTD_ESIZE);
	assert_int_equal(raw_write(s1, mine, 0, 0, NULL, 0), FFTD_OK);
	// Executions: a plan of 100 complex f64 (1600 bytes).
	fftd_plan_desc d;
	int64_t        n = 100;
	uint64_t       ib, ob;
	ASSERT_OK(fftd_plan_desc_init(&d, 1, &n, FFTD_C2C, FFTD_F64));
	uint64_t plan  = fftd_test_raw_plan(s1, &d, &ib, &ob);
	uint64_t plan2 = fftd_test_raw_plan(s2, &d, &ib, &ob);
	assert_int_equal(raw_exec(s1, plan, mine, 0, out, 0, 0), FFTD_OK);
	assert_int_equal(raw_exec(s2, plan2, mine, 0, out, 0, 0), FFTD_EINVAL);
	assert_int_equal(raw_exec(s1, plan, mine, 0, 0, 0, 0),
	    FFTD_EUNSUPPORTED); // one side only
	assert_int_equal(raw_exec(s1, plan, mine, 0, out, 0, 1600),
	    FFTD_EPROTO); // a payload besides
	assert_int_equal(raw_exec(s1, plan, mine, 8, out, 0, 0),
	    FFTD_EINVAL); // not a whole element
	assert_int_equal(raw_exec(s1, plan, mine, 2512, out, 0, 0),
	    FFTD_ESIZE); // 2512 + 1600 > 4096
	assert_int_equal(raw_exec(s1, plan, out, 0, out, 1584, 0),
	    FFTD_EINVAL); // overlapping spans
	assert_int_equal(raw_exec(s1, plan, out, 0, out, 1600, 0), FFTD_OK);
	assert_int_equal(
	    raw_exec(s1, plan, mine, 0, 424242, 0, 0), FFTD_EINVAL);
	assert_int_equal(raw_exec(s1, 31337, mine, 0, out, 0, 0), FFTD_ENOPLAN);
	// The owner's bytes are intact.
	Fftd__Wire__Request   rr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayRead ar = FFTD__WIRE__ARRAY_READ__INIT;
	ar.array_id              = mine;
	ar.len                   = 4096;
	rr.body_case             = FFTD__WIRE__REQUEST__BODY_ARRAY_READ;
	rr.array_read            = &ar;
	assert_int_equal(fftd_test_raw_send_request(s1, &rr, NULL, 0), 0);
	nng_msg *m;
	assert_int_equal(nng_recvmsg(s1, &m, 0), 0);
	fftd__frame f;
	assert_int_equal(
	    fftd__frame_parse(nng_msg_body(m), nng_msg_len(m), &f), FFTD_OK);
	assert_int_equal(f.payload_len, 4096);
	assert_memory_equal(f.payload, pat, 4096);
	nng_msg_free(m);
	nng_close(s2);
	nng_close(s1);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// test_freed: the daemon's memory in use (device stats) comes back when
// arrays are destroyed, their client closes, or it is killed.
static void
test_freed(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	uint64_t     m0 = arrays_settled_memory(C, 0);
	fftd_client *c;
	fftd_array  *a[3];
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	for (int i = 0; i < 3; i++) {
		ASSERT_OK(fftd_array_create(c, 0, (size_t) 1 << 20, &a[i]));
	}
	assert_int_equal(arrays_wait_memory(C, 0, m0 + (3u << 20), 10000), 0);
	fftd_array_destroy(a[1]);
	assert_int_equal(arrays_wait_memory(C, 0, m0 + (2u << 20), 10000), 0);
	fftd_client_close(c);
	assert_int_equal(arrays_wait_memory(C, 0, m0, 10000), 0);
	// After the close the handles are still released here.
	fftd_array_destroy(a[0]);
	fftd_array_destroy(a[2]);
	arrays_killed_holder(C, D.url, 0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
}

// mf_try runs the bank on arrays sized for n = 64 with desc changed by
// the caller; returns the status.
static int
mf_try(fftd_client *c, const fftd_mf_desc *d, fftd_array *data, fftd_array *psd,
    fftd_array *tpl, int64_t count, size_t psd_off, const int64_t *series_index,
    int nseries)
{
	fftd_mf_peak    peaks[4];
	fftd_mf_trigger trig[4];
	size_t          nt = 0, ntot = 0;
	double          series[4 * 64];
	int rv = fftd_mf_bank(c, d, data, 0, psd, psd_off, tpl, 0, count, peaks,
	    trig, 4, &nt, &ntot, series_index, nseries, series);
	printf("  %s: %s\n", fftd_err_name(rv), fftd_last_error());
	return rv;
}

static void
test_mf_request(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const int64_t n = 64, bins = n / 2 + 1;
	fftd_array   *data, *psd, *tpl;
	ASSERT_OK(fftd_array_create(C, 0, (size_t) bins * 16, &data));
	ASSERT_OK(fftd_array_create(C, 0, (size_t) bins * 8, &psd));
	ASSERT_OK(fftd_array_create(C, 0, (size_t) bins * 16 * 4, &tpl));
	// A flat PSD; data and templates stay zero (sigma 0, rho 0: allowed).
	double ones[33];
	for (int k = 0; k < 33; k++) {
		ones[k] = 1.0;
	}
	ASSERT_OK(fftd_array_write(psd, 0, ones, sizeof(ones)));
	fftd_mf_desc d;
	ASSERT_OK(fftd_mf_desc_init(&d));
	assert_int_equal(d.precision, FFTD_F64);
	assert_int_equal(d.cluster, 1);
	d.n             = n;
	d.delta_f       = 1.0 / 16;
	int64_t good[1] = { 3 }, bad[1] = { 4 };
	assert_int_equal(mf_try(C, &d, data, psd, tpl, 4, 0, good, 1), FFTD_OK);
	fftd_mf_desc e = d;
	e.n            = 1;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e           = d;
	e.precision = FFTD_F16;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EUNSUPPORTED);
	e         = d;
	e.delta_f = 0;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e      = d;
	e.kmin = 10;
	e.kmax = 10;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e      = d;
	e.kmax = bins + 1;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e       = d;
	e.t_end = n + 1;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e         = d;
	e.cluster = 0;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	e           = d;
	e.threshold = NAN;
	assert_int_equal(
	    mf_try(C, &e, data, psd, tpl, 4, 0, NULL, 0), FFTD_EINVAL);
	assert_int_equal(
	    mf_try(C, &d, data, psd, tpl, 0, 0, NULL, 0), FFTD_EINVAL);
	assert_int_equal(
	    mf_try(C, &d, data, psd, tpl, 4, 0, bad, 1), FFTD_EINVAL);
	// The daemon's own checks: spans past an array, misaligned offsets,
	// arrays of the wrong size.
	assert_int_equal(
	    mf_try(C, &d, data, psd, tpl, 5, 0, NULL, 0), FFTD_ESIZE);
	assert_int_equal(
	    mf_try(C, &d, data, psd, tpl, 4, 8, NULL, 0), FFTD_ESIZE);
	assert_int_equal(
	    mf_try(C, &d, data, tpl, tpl, 4, 4, NULL, 0), FFTD_EINVAL);
	assert_int_equal(
	    mf_try(C, &d, psd, psd, tpl, 4, 0, NULL, 0), FFTD_ESIZE);
	// Raw: an id of no array, NaN delta_f.
	nng_socket s;
	fftd_test_raw_connect(&s, D.url);
	uint64_t                  a = raw_array_create(s, (uint64_t) bins * 16);
	Fftd__Wire__Request       rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__MatchedFilter mf = FFTD__WIRE__MATCHED_FILTER__INIT;
	mf.n                         = (uint64_t) n;
	mf.precision                 = FFTD__WIRE__PRECISION__F64;
	mf.delta_f                   = 1.0 / 16;
	mf.kmax                      = bins;
	mf.t_end                     = n;
	mf.cluster                   = 1;
	mf.count                     = 1;
	mf.data_array                = a;
	mf.psd_array                 = a;
	mf.templates_array           = 777777;
	rq.body_case                 = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	rq.matched_filter            = &mf;
	assert_int_equal(raw_status(s, &rq, NULL, 0), FFTD_EINVAL);
	mf.templates_array = a;
	// Arguments pass; the engine refuses the all-zero PSD (typed).
	assert_int_equal(raw_status(s, &rq, NULL, 0), FFTD_EINVAL);
	mf.delta_f = NAN;
	assert_int_equal(raw_status(s, &rq, NULL, 0), FFTD_EINVAL);
	mf.delta_f      = 1.0 / 16;
	mf.max_triggers = UINT64_MAX / 8;
	assert_int_equal(raw_status(s, &rq, NULL, 0), FFTD_EOVERFLOW);
	mf.max_triggers = (uint64_t) 1 << 40;
	assert_int_equal(raw_status(s, &rq, NULL, 0), FFTD_ELIMIT);
	nng_close(s);
	fftd_array_destroy(data);
	fftd_array_destroy(psd);
	fftd_array_destroy(tpl);
}

// The shared daemon, after everything above, holds no array memory and
// exits 0 on SIGTERM (under ASan: no leaks).
static void
test_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_int_equal(arrays_wait_memory(C, 0, 0, 10000), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

static const fftd_test_role roles[] = {
	{ "holder", arrays_role_holder },
	{ NULL, NULL },
};

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_big_copy),
		cmocka_unit_test(test_executions),
		cmocka_unit_test(test_chain),
		cmocka_unit_test_teardown(
		    test_limits, fftd_test_local_teardown),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_freed),
		cmocka_unit_test(test_mf_request),
		cmocka_unit_test(test_exits_cleanly),
	};
	return fftd_test_run_group("arrays[fftw]", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// test_robustness_clients.c — the daemon under pressure and abuse from its
// clients: 8 client processes at once; a client killed (SIGKILL) with a
// large transform in flight; a client closed with plans and requests
// outstanding; malformed and hostile frames sent with a raw NNG REQ
// socket, each answered with its exact status. After each abuse the
// daemon must still serve. Its sibling test_robustness_daemon.c holds the
// daemon's own limits, signals and command line.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cases.h"
#include "../util/client_cases.h"
#include "../../bench/lib/daemon.h"
#include "../../bench/lib/raw.h"
#include "../util/ref.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "clock.h"
#include "fftd.h"
#include "layout.h"
#include "wire.h"

#define TIMEOUT_MS 60000
#define NWORKERS 8

static fftd_test_daemon  D; // the shared daemon (fftw backend, defaults)
static fftd_client      *C; // the test's own client of D
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// FX: the shared daemon D (fftw backend, defaults) with the client C.
static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
};

// --- helpers ----------------------------------------------------------------

// one_case runs one transform of the shared table on client c and
// returns 0 if it was right.
static int
one_case(fftd_client *c, fftd_kind kind, int rank, fftd_precision p, size_t k,
    uint64_t seed)
{
	fftd_test_case tc[FFTD_TEST_MAX_CASES];
	size_t         n
	    = fftd_test_cases(kind, rank, p, false, tc, FFTD_TEST_MAX_CASES);
	if (n == 0) {
		return -1;
	}
	return fftd_test_run_case(c, &tc[k % n], seed);
}

// desc_c2c describes a 1-D C2C plan of n points.
static int
desc_c2c(fftd_plan_desc *d, int64_t n, fftd_precision p)
{
	return fftd_plan_desc_init(d, 1, &n, FFTD_C2C, p);
}

// --- child roles -------------------------------------------------------------

// worker URL SEED INDEX: many transforms of several kinds, checked; and a
// plan every worker shares (the plan cache serves them all).
static int
role_worker(int argc, char **argv)
{
	if (argc < 3) {
		return 100;
	}
	const char  *url   = argv[0];
	uint64_t     seed  = strtoull(argv[1], NULL, 0);
	int          index = atoi(argv[2]);
	fftd_client *c;
	int          rv = fftd_client_open(&c, url, TIMEOUT_MS);
	if (rv != FFTD_OK) {
		fprintf(stderr, "worker %d: open: %s (%s)\n", index,
		    fftd_err_name(rv), fftd_last_error());
		return 101;
	}
	int                    failed  = 0;
	fftd_precision         p       = index % 2 ? FFTD_F32 : FFTD_F64;
	int                    rank    = 1 + index % 3;
	static const fftd_kind kinds[] = { FFTD_C2C, FFTD_R2C, FFTD_C2R };
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < 3; k++) {
			for (size_t i = (size_t) (index + round) % 3; i < 21;
			     i += 3) {
				failed += one_case(c, kinds[k], rank, p, i,
				              seed
				                  + (uint64_t) (index * 100000
				                      + round * 1000 + k * 100)
				                  + i)
				    != 0;
			}
		}
	}
	// The shared plan, executed repeatedly on fresh data.
	fftd_plan_desc d;
	desc_c2c(&d, 1024, FFTD_F64);
	d.batch       = 4;
	fftd_plan *pl = NULL;
	if ((rv = fftd_plan_create(c, &d, &pl)) != FFTD_OK) {
		fprintf(
		    stderr, "worker %d: plan: %s\n", index, fftd_err_name(rv));
		failed++;
	} else {
		for (int i = 0; i < 8; i++) {
			fftd_test_buffers b;
			fftd_test_result  r;
			char              why[512];
			if (fftd_test_buffers_make(&b, &d, 0,
			        seed ^ (uint64_t) (index * 77 + i))) {
				failed++;
				continue;
			}
			rv = fftd_execute(pl, b.in, b.out);
			if (rv != FFTD_OK) {
				fprintf(stderr, "worker %d: execute: %s\n",
				    index, fftd_err_name(rv));
				failed++;
			} else if (fftd_test_buffers_check(
			               &b, &r, why, sizeof(why))) {
				fprintf(stderr, "worker %d: shared plan: %s\n",
				    index, why);
				failed++;
			}
			fftd_test_buffers_free(&b);
		}
		fftd_plan_destroy(pl);
	}
	fftd_client_close(c);
	if (failed) {
		fprintf(stderr,
		    "worker %d: %d failures (FFTD_TEST_SEED=%llu)\n", index,
		    failed, (unsigned long long) fftd_test_seed());
	}
	return failed ? 1 : 0;
}

static int role_closer(int argc, char **argv);

// victim URL FD: make three plans, one of them large, say so on FD, then
// execute the large one forever (the parent kills us mid-request).
static int
role_victim(int argc, char **argv)
{
	if (argc < 2) {
		return 100;
	}
	int fd = atoi(argv[1]);
	// Payloads through the socket, so the kill lands mid-transfer there
	// (not through libfftd's shared-memory staging; test_shm_lifetime kills
	// a client holding shared buffers).
	setenv("FFTD_INLINE_STAGING", "0", 1);
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
		return 101;
	}
	fftd_plan_desc d;
	fftd_plan     *big, *small1, *small2;
	desc_c2c(&d, (int64_t) 1 << 21, FFTD_F64); // 32 MiB each way
	if (fftd_plan_create(c, &d, &big) != FFTD_OK) {
		return 102;
	}
	desc_c2c(&d, 100, FFTD_F32);
	if (fftd_plan_create(c, &d, &small1) != FFTD_OK) {
		return 103;
	}
	desc_c2c(&d, 101, FFTD_F64);
	if (fftd_plan_create(c, &d, &small2) != FFTD_OK) {
		return 104;
	}
	size_t bytes = fftd_plan_input_bytes(big);
	void  *in    = calloc(1, bytes);
	void  *out   = malloc(bytes);
	if (in == NULL || out == NULL) {
		return 105;
	}
	((double *) in)[0] = 1.0;
	if (write(fd, "R", 1) != 1) {
		return 106;
	}
	for (;;) {
		fftd_execute(big, in, out);
	}
}

static const fftd_test_role roles[] = {
	{ "worker", role_worker },
	{ "victim", role_victim },
	{ "closer", role_closer },
	{ NULL, NULL },
};

// --- many clients
// ----------------------------------------------------------------

static void
test_concurrent_clients(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	char seed[32];
	snprintf(
	    seed, sizeof(seed), "%llu", (unsigned long long) fftd_test_seed());
	const char *args[] = { D.url, seed, NULL };
	int         codes[NWORKERS];
	int         bad
	    = fftd_test_run_children(NWORKERS, "worker", args, 240000, codes);
	for (int i = 0; i < NWORKERS; i++) {
		if (codes[i] != 0) {
			print_error("worker %d: exit status %d\n", i, codes[i]);
		}
	}
	assert_int_equal(bad, 0);
	// Their sessions and plans are gone.
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 10000), 0);
	fftd_stats st;
	assert_int_equal(fftd_get_stats(C, &st), FFTD_OK);
	assert_true(
	    st.cache_hits >= NWORKERS - 1); // the shared plan was shared
}

// --- a client killed mid-request
// ------------------------------------------------------

static void
test_killed_client(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	char fd[16];
	snprintf(fd, sizeof(fd), "%d", fds[1]);
	const char *args[] = { D.url, fd, NULL };
	pid_t       pid    = fftd_test_spawn("victim", args);
	assert_true(pid > 0);
	close(fds[1]);
	struct pollfd pfd   = { fds[0], POLLIN, 0 };
	int           ready = poll(&pfd, 1, 30000);
	char          ch    = 0;
	if (ready != 1 || read(fds[0], &ch, 1) != 1 || ch != 'R') {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(fds[0]);
		fail_msg("the victim did not get ready");
	}
	close(fds[0]);
	// The victim holds a session and three plans, and 32 MiB executions
	// follow each other: wait until the daemon has received one, so the
	// kill lands with the next one in flight.
	int        held = fftd_test_wait_stats(C, 2, 3, 10000);
	fftd_stats s0, s1;
	int        rv      = fftd_get_stats(C, &s0);
	long long  until   = fftd__mono_ms() + 20000;
	int        started = 0;
	while (rv == FFTD_OK && fftd__mono_ms() < until) {
		if ((rv = fftd_get_stats(C, &s1)) == FFTD_OK
		    && s1.bytes_in >= s0.bytes_in + (32u << 20)) {
			started = 1;
			break;
		}
		fftd_test_sleep_ms(5);
	}
	fftd_test_sleep_ms(20);
	int killed = kill(pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(killed, 0);
	assert_int_equal(held, 0);
	assert_true(started);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	// The daemon keeps serving, and soon forgets the victim.
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 10000), 0);
	assert_int_equal(
	    one_case(C, FFTD_C2C, 1, FFTD_F64, 3, fftd_test_case_seed(42)), 0);
	assert_true(fftd_test_daemon_alive(&D));
}

// --- a client closed with plans and requests outstanding
// ------------------------------

typedef struct close_state {
	pthread_mutex_t mtx;
	int             calls, ok, closed, other;
} close_state;

static void
close_cb(fftd_request *req, int status, void *data)
{
	(void) req;
	close_state *s = data;
	pthread_mutex_lock(&s->mtx);
	s->calls++;
	if (status == FFTD_OK) {
		s->ok++;
	} else if (status == FFTD_ECLOSED) {
		s->closed++;
	} else {
		s->other++;
	}
	pthread_mutex_unlock(&s->mtx);
}

// closer URL: open a client, make three plans, start four 16 MiB
// executions, close the client with all of it outstanding; every callback
// must run once, with FFTD_OK or FFTD_ECLOSED; then release the plans with
// fftd_plan_destroy, which fftd.h allows after the close. A child process,
// so that a crash here (ASan) fails this test only.
static int
role_closer(int argc, char **argv)
{
	if (argc < 1) {
		return 100;
	}
	fftd_client *c;
	if (fftd_client_open(&c, argv[0], TIMEOUT_MS) != FFTD_OK) {
		return 101;
	}
	fftd_plan     *p[3];
	fftd_plan_desc d;
	for (int i = 0; i < 3; i++) {
		desc_c2c(&d, i == 0 ? (int64_t) 1 << 20 : 64 + i, FFTD_F64);
		if (fftd_plan_create(c, &d, &p[i]) != FFTD_OK) {
			return 102;
		}
	}
	size_t      bytes = fftd_plan_input_bytes(p[0]);
	void       *in    = calloc(1, bytes);
	void       *out[4];
	close_state cs;
	memset(&cs, 0, sizeof(cs));
	pthread_mutex_init(&cs.mtx, NULL);
	for (int i = 0; i < 4; i++) {
		out[i] = malloc(bytes);
		if (fftd_execute_async(p[0], in, out[i], close_cb, &cs, NULL)
		    != FFTD_OK) {
			return 103;
		}
	}
	fftd_client_close(c);
	long long until = fftd__mono_ms() + 10000;
	for (;;) {
		pthread_mutex_lock(&cs.mtx);
		int calls = cs.calls;
		pthread_mutex_unlock(&cs.mtx);
		if (calls >= 4 || fftd__mono_ms() > until) {
			break;
		}
		fftd_test_sleep_ms(5);
	}
	fftd_test_sleep_ms(50);
	pthread_mutex_lock(&cs.mtx);
	fprintf(stderr,
	    "closer: 4 in flight at close: %d ok, %d closed, %d "
	    "other, %d callbacks; now fftd_plan_destroy\n",
	    cs.ok, cs.closed, cs.other, cs.calls);
	int rv = cs.calls == 4 && cs.other == 0 ? 0 : 1;
	pthread_mutex_unlock(&cs.mtx);
	for (int i = 0; i < 3; i++) {
		fftd_plan_destroy(p[i]);
	}
	for (int i = 0; i < 4; i++) {
		free(out[i]);
	}
	free(in);
	pthread_mutex_destroy(&cs.mtx);
	return rv;
}

static void
test_close_releases_session(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	const char *args[] = { D.url, NULL };
	pid_t       pid    = fftd_test_spawn("closer", args);
	assert_true(pid > 0);
	int code;
	fftd_test_wait_pids(&pid, 1, 20000, &code);
	// Whatever the child did, the daemon forgets its session and plans.
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 10000), 0);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	if (code != 0) {
		print_error("closer: exit status %d\n", code);
	}
	assert_int_equal(code, 0);
}

// --- malformed and hostile frames
// ----------------------------------------------------------

typedef struct raw_session {
	nng_socket   s;
	fftd__limits lim;
	uint64_t     plan_id;    // a 16-point C2C f64 plan of this session
	uint64_t     plan_bytes; // its input bytes (256)
} raw_session;

static int
raw_expect(
    raw_session *rs, const char *what, const void *buf, size_t len, int want)
{
	Fftd__Wire__Reply *r   = NULL;
	int                st  = fftd_test_raw_call(rs->s, buf, len, &r);
	int                bad = 0;
	if (st != want) {
		print_error("%s: status %d (%s), want %d (%s)%s%s\n", what, st,
		    st >= 0 ? fftd_err_name(st) : "no reply", want,
		    fftd_err_name(want), r ? ": " : "", r ? r->message : "");
		bad = 1;
	} else if (want != FFTD_OK
	    && (r == NULL || r->message == NULL || r->message[0] == '\0')) {
		print_error("%s: error reply without a message\n", what);
		bad = 1;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return bad;
}

static int
raw_request(raw_session *rs, const char *what, const Fftd__Wire__Request *rq,
    size_t payload, int want)
{
	nng_msg *m;
	void    *p  = NULL;
	int      rv = fftd__msg_build(&m, &rq->base, payload, &p);
	assert_int_equal(rv, FFTD_OK);
	if (payload) {
		memset(p, 0, payload);
	}
	int bad = raw_expect(rs, what, nng_msg_body(m), nng_msg_len(m), want);
	nng_msg_free(m);
	return bad;
}

// raw_plan sends a PlanCreate of pd and expects want.
static int
raw_plan(raw_session *rs, const char *what, Fftd__Wire__PlanDesc *pd, int want)
{
	Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__PlanCreate pc = FFTD__WIRE__PLAN_CREATE__INIT;
	pc.desc                   = pd;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	rq.plan_create            = &pc;
	return raw_request(rs, what, &rq, 0, want);
}

static void
pd_init(Fftd__Wire__PlanDesc *pd, int64_t *n, uint32_t rank)
{
	Fftd__Wire__PlanDesc init = FFTD__WIRE__PLAN_DESC__INIT;
	*pd                       = init;
	pd->rank                  = rank;
	pd->n_n                   = rank;
	pd->n                     = n;
	pd->batch                 = 1;
	pd->kind                  = FFTD__WIRE__KIND__C2C;
	pd->precision             = FFTD__WIRE__PRECISION__F64;
	pd->direction             = -1;
	pd->device                = -1;
}

// expected_code is what fftd__shape_resolve says of pd under the daemon's
// own limits (the daemon must agree, and it must be an error).
static int
expected_code(raw_session *rs, const Fftd__Wire__PlanDesc *pd)
{
	fftd_plan_desc d;
	char           msg[256];
	int            rv = fftd__desc_from_wire(pd, &d, msg, sizeof(msg));
	if (rv == FFTD_OK) {
		fftd__shape s;
		rv = fftd__shape_resolve(&d, &rs->lim, &s, msg, sizeof(msg));
	}
	return rv;
}

static void
raw_session_open(raw_session *rs)
{
	memset(rs, 0, sizeof(*rs));
	assert_int_equal(fftd_test_raw_open(&rs->s, D.url, 10000), 0);
	Fftd__Wire__Reply *r = NULL;
	assert_int_equal(
	    fftd_test_raw_hello(rs->s, FFTD_PROTOCOL_VERSION, &r), FFTD_OK);
	assert_int_equal(r->body_case, FFTD__WIRE__REPLY__BODY_HELLO);
	assert_non_null(r->hello->limits);
	rs->lim.max_request_bytes = r->hello->limits->max_request_bytes;
	rs->lim.max_rank          = r->hello->limits->max_rank;
	rs->lim.max_batch         = r->hello->limits->max_batch;
	fftd__wire__reply__free_unpacked(r, NULL);
	// A plan of this session: C2C f64 n = 16, 256 bytes each way.
	int64_t              n[1] = { 16 };
	Fftd__Wire__PlanDesc pd;
	pd_init(&pd, n, 1);
	Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__PlanCreate pc = FFTD__WIRE__PLAN_CREATE__INIT;
	pc.desc                   = &pd;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	rq.plan_create            = &pc;
	r                         = NULL;
	assert_int_equal(
	    fftd_test_raw_request(rs->s, &rq, NULL, 0, &r), FFTD_OK);
	assert_int_equal(r->body_case, FFTD__WIRE__REPLY__BODY_PLAN_CREATE);
	rs->plan_id    = r->plan_create->plan_id;
	rs->plan_bytes = r->plan_create->input_bytes;
	assert_int_equal(rs->plan_bytes, 256);
	assert_int_equal(r->plan_create->output_bytes, 256);
	fftd__wire__reply__free_unpacked(r, NULL);
}

static int
raw_ping_ok(raw_session *rs)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    pg = FFTD__WIRE__PING__INIT;
	pg.token               = 0x1234;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_PING;
	rq.ping                = &pg;
	Fftd__Wire__Reply *r   = NULL;
	int                st  = fftd_test_raw_request(rs->s, &rq, NULL, 0, &r);
	int ok = st == FFTD_OK && r->body_case == FFTD__WIRE__REPLY__BODY_PING
	    && r->ping->token == 0x1234;
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return ok;
}

static void
test_malformed_frames(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	raw_session rs;
	raw_session_open(&rs);
	int bad = 0;

	// Frame-level damage, around a valid Ping.
	Fftd__Wire__Request pr = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    pg = FFTD__WIRE__PING__INIT;
	pr.body_case           = FFTD__WIRE__REQUEST__BODY_PING;
	pr.ping                = &pg;
	size_t   pbn;
	uint8_t *pb = fftd_test_pack(&pr.base, &pbn);
	size_t   len;
	uint8_t *f;
	uint8_t  garbage[100];
	for (size_t i = 0; i < sizeof(garbage); i++) {
		garbage[i] = (uint8_t) (i * 97 + 13);
	}
	bad += raw_expect(
	    &rs, "garbage bytes", garbage, sizeof(garbage), FFTD_EPROTO);
	bad += raw_expect(&rs, "empty message", garbage, 0, FFTD_EPROTO);
	bad += raw_expect(&rs, "23 bytes", garbage, 23, FFTD_EPROTO);
#define FRAME(what, want, ...)                                                 \
	do {                                                                   \
		f = fftd_test_frame(&len, __VA_ARGS__);                        \
		bad += raw_expect(&rs, what, f, len, want);                    \
		free(f);                                                       \
	} while (0)
	FRAME("good ping frame", FFTD_OK, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn, 0, 0, pb, pbn, NULL, 0);
	FRAME("bad magic", FFTD_EPROTO, 0x12345678u, FFTD_PROTOCOL_VERSION, 0,
	    (uint32_t) pbn, 0, 0, pb, pbn, NULL, 0);
	FRAME("wrong version", FFTD_EVERSION, FFTD__WIRE_MAGIC, 2, 0,
	    (uint32_t) pbn, 0, 0, pb, pbn, NULL, 0);
	FRAME("nonzero flags", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0x8000, (uint32_t) pbn, 0, 0, pb, pbn, NULL,
	    0);
	FRAME("nonzero reserved", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn, 7, 0, pb, pbn, NULL, 0);
	FRAME("pb_len past the end", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn + 500, 0, 0, pb, pbn, NULL,
	    0);
	FRAME("pb_len 4 GiB", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, 0xffffffffu, 0, 0, pb, pbn, NULL, 0);
	FRAME("payload_len 2^64-1", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn, 0, UINT64_MAX, pb, pbn,
	    NULL, 64);
	uint8_t junk[20];
	memset(junk, 0xff, sizeof(junk));
	FRAME("protobuf garbage", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, sizeof(junk), 0, 0, junk, sizeof(junk),
	    NULL, 0);
	FRAME("empty protobuf (no request body)", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, 0, 0, 0, NULL, 0, NULL, 0);
	free(pb);

	// Execute: truncated payload, wrong length, unknown plan.
	Fftd__Wire__Request ex = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Execute e  = FFTD__WIRE__EXECUTE__INIT;
	e.plan_id              = rs.plan_id;
	ex.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	ex.execute             = &e;
	pb                     = fftd_test_pack(&ex.base, &pbn);
	FRAME("payload truncated", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn, 0, 256, pb, pbn, NULL,
	    100);
	FRAME("payload longer than announced", FFTD_EPROTO, FFTD__WIRE_MAGIC,
	    FFTD_PROTOCOL_VERSION, 0, (uint32_t) pbn, 0, 200, pb, pbn, NULL,
	    256);
	free(pb);
	bad += raw_request(
	    &rs, "execute, the right payload", &ex, 256, FFTD_OK);
	bad += raw_request(
	    &rs, "execute, payload 128 of 256", &ex, 128, FFTD_ESIZE);
	bad += raw_request(
	    &rs, "execute, payload 257 of 256", &ex, 257, FFTD_ESIZE);
	bad += raw_request(&rs, "execute, no payload", &ex, 0, FFTD_ESIZE);
	e.plan_id = 0xdeadbeef;
	bad += raw_request(
	    &rs, "execute, unknown plan", &ex, 256, FFTD_ENOPLAN);
	e.plan_id = 0;
	bad += raw_request(&rs, "execute, plan 0", &ex, 256, FFTD_ENOPLAN);
	// A plan of another connection is not this one's to use.
	{
		fftd_plan_desc d;
		fftd_plan     *other;
		desc_c2c(&d, 16, FFTD_F64);
		assert_int_equal(fftd_plan_create(C, &d, &other), FFTD_OK);
		uint64_t id;
		// Plan ids are not visible through libfftd; try the ids near
		// ours, none of which may be served to us unless it is ours.
		for (id = rs.plan_id + 1; id < rs.plan_id + 64; id++) {
			e.plan_id = id;
			bad += raw_request(&rs,
			    "execute, another session's plan", &ex, 256,
			    FFTD_ENOPLAN);
		}
		fftd_plan_destroy(other);
	}
	Fftd__Wire__Request     dr   = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__PlanDestroy pdst = FFTD__WIRE__PLAN_DESTROY__INIT;
	pdst.plan_id                 = 0xdeadbeef;
	dr.body_case                 = FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY;
	dr.plan_destroy              = &pdst;
	bad += raw_request(&rs, "destroy, unknown plan", &dr, 0, FFTD_ENOPLAN);

	// Hello of another protocol version.
	Fftd__Wire__Reply *r  = NULL;
	int                st = fftd_test_raw_hello(rs.s, 2, &r);
	if (st != FFTD_EVERSION) {
		print_error("hello v2: status %d, want FFTD_EVERSION\n", st);
		bad++;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}

	// Absurd plan descriptions.
	int64_t                n[8] = { 16, 16, 16, 16, 16, 16, 16, 16 };
	Fftd__Wire__PlanDesc   pd;
	Fftd__Wire__PlanCreate nodesc = FFTD__WIRE__PLAN_CREATE__INIT;
	Fftd__Wire__Request    rq     = FFTD__WIRE__REQUEST__INIT;
	rq.body_case                  = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
	rq.plan_create                = &nodesc;
	bad += raw_request(
	    &rs, "plan create without a description", &rq, 0, FFTD_EINVAL);
	pd_init(&pd, n, 7);
	bad += raw_plan(&rs, "rank 7", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 0);
	bad += raw_plan(&rs, "rank 0", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 2);
	pd.n_n = 1;
	bad += raw_plan(&rs, "rank 2 with one size", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.n_n = 8;
	bad += raw_plan(&rs, "rank 1 with eight sizes", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 2);
	Fftd__Wire__Layout lay = FFTD__WIRE__LAYOUT__INIT;
	lay.n_embed            = 8;
	lay.embed              = n;
	pd.input               = &lay;
	bad += raw_plan(&rs, "eight embedded sizes", &pd, FFTD_EINVAL);
	int64_t big[3] = { (int64_t) 1 << 40, 0, 0 };
	pd_init(&pd, big, 1);
	int want = expected_code(&rs, &pd);
	assert_int_equal(want, FFTD_ELIMIT); // 16 TiB is over any sane limit
	bad += raw_plan(&rs, "n = 2^40", &pd, want);
	int64_t one[1] = { 1 };
	pd_init(&pd, one, 1);
	pd.batch = (int64_t) 1 << 62;
	want     = expected_code(&rs, &pd);
	assert_true(want == FFTD_ELIMIT || want == FFTD_EOVERFLOW);
	bad += raw_plan(&rs, "batch = 2^62", &pd, want);
	int64_t huge3[3]
	    = { (int64_t) 1 << 40, (int64_t) 1 << 40, (int64_t) 1 << 40 };
	pd_init(&pd, huge3, 3);
	bad += raw_plan(&rs, "n = 2^40 x 2^40 x 2^40", &pd, FFTD_EOVERFLOW);
	int64_t neg[1] = { -16 };
	pd_init(&pd, neg, 1);
	bad += raw_plan(&rs, "n = -16", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.batch = 0;
	bad += raw_plan(&rs, "batch 0", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.kind = (Fftd__Wire__Kind) 7;
	bad += raw_plan(&rs, "kind 7", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.precision = (Fftd__Wire__Precision) 9;
	bad += raw_plan(&rs, "precision 9", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.direction = 5;
	bad += raw_plan(&rs, "direction 5", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	pd.norm = (Fftd__Wire__Norm) 9;
	bad += raw_plan(&rs, "norm 9", &pd, FFTD_EINVAL);
	pd_init(&pd, n, 1);
	Fftd__Wire__Layout neg_stride = FFTD__WIRE__LAYOUT__INIT;
	neg_stride.stride             = -1;
	pd.output                     = &neg_stride;
	bad += raw_plan(&rs, "ostride -1", &pd, FFTD_EINVAL);

	// After all of it the session and the daemon still answer.
	if (!raw_ping_ok(&rs)) {
		print_error("no ping answer after the malformed frames\n");
		bad++;
	}
	e.plan_id = rs.plan_id;
	bad += raw_request(&rs, "execute after it all", &ex, 0, FFTD_ESIZE);
	bad += raw_request(
	    &rs, "execute of our plan after it all", &ex, 256, FFTD_OK);
	nng_close(rs.s);
	assert_int_equal(fftd_ping(C, NULL), FFTD_OK);
	assert_int_equal(
	    one_case(C, FFTD_R2C, 2, FFTD_F32, 4, fftd_test_case_seed(7)), 0);
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 10000), 0);
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(bad, 0);
#undef FRAME
}

// The shared daemon, after everything above, exits 0 on SIGTERM (under
// ASan that includes no leaks) with no session or plan left behind.
static void
test_shared_daemon_exits_cleanly(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_int_equal(fftd_test_wait_stats(C, 1, 0, 5000), 0);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, roles);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_clients),
		cmocka_unit_test(test_killed_client),
		cmocka_unit_test(test_close_releases_session),
		cmocka_unit_test(test_malformed_frames),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("robustness_clients", tests, &FX);
}

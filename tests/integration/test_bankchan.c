// SPDX-License-Identifier: MIT
//
// test_bankchan.c — bank channels (client/bankchan.c, StreamOpen's bank):
// the matched-filter bank's requests and replies over a socket of their
// own instead of NNG, through a real `fftd --backend fftw`, on fresh random
// inputs (FFTD_TEST_SEED repeats a run) checked against the long double
// reference of tests/util/mf_ref.h within its bounds (test_mf.c's):
//   - a call over a channel and the same call over NNG
//     (FFTD_BANK_CHANNEL=0) give the reference's results, bit for bit the
//     same, and only the first opens a SOCK_SEQPACKET socket;
//   - four threads of one client calling at once, each on its own slice
//     of a bank, each get their slice's results (the whole bank's,
//     checked against the reference), over at most one channel each;
//   - results larger than a socket packet (series rows) come through the
//     channel's shared buffer, and a request that could give more than
//     64 MiB of results (room for 2^22 triggers) goes over NNG, correct;
//   - a client that cannot get a result buffer (its buffer limit used)
//     calls through NNG, correct, asking for the buffer once, not per call;
//   - the daemon answers a misbehaving channel with typed errors and goes
//     on serving it: a packet that is no frame (FFTD_EPROTO), a frame of
//     another request (FFTD_EPROTO), requests naming other connections'
//     arrays or buffers, or no result buffer (FFTD_EINVAL), a second
//     request before the first's answer
//     was read (FFTD_ELIMIT for one of the two, the other answered);
//     afterwards the client's own calls over it are still correct;
//   - a caller built against another ABI's result structs (larger, by a
//     field the library lacks: fftd_mf_bank_sized) gets the same records
//     field by field and zeros past them;
//   - with busy polling on both sides (server.busy_poll_us, and
//     FFTD_BUSY_POLL_US in the client: common/busypoll.h), calls back to
//     back, calls after the polling window ran out (the sleeping paths
//     again) and four threads at once give the same bits as without.

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../util/cases.h"
#include "../util/check.h"
#include "../util/fixture.h"
#include "../util/mf_ref.h"
#include "../util/probe.h"
#include "fftd.h"
#include "wire.h"

#define TIMEOUT_MS 60000
#define NTEMPLATES 12
#define NTHREADS 4

static fftd_test_daemon D; // fftw backend, defaults
static fftd_client     *C;
static fftd_test_daemon DP; // the same, polling 2 ms after each request
static fftd_client     *CP;
// A window longer than a call here (the fftw backend on 4096 samples), so
// that polling, not sleeping, catches the answers and requests.
#define BUSY_POLL_US 2000
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

static fftd_test_fixture FX = {
	.daemon     = { { &D, &C, NULL, DAEMON_ARGS },
	        { &DP, &CP, "[server]\nbusy_poll_us = 2000\n", DAEMON_ARGS } },
	.timeout_ms = TIMEOUT_MS,
};

// A bank problem resident on one client: D and S in dp, the templates in
// tpl, each from offset 0.
typedef struct bank {
	fftd_test_mf b;
	fftd_array  *dp, *tpl;
	size_t       psd_off, tpl_bytes;
} bank;

// bank_new draws an f64 bank of NTEMPLATES at N = n and makes it resident
// on c. Returns FFTD_OK or the first error (threads use it).
static int
bank_new(fftd_client *c, bank *k, int64_t n, uint64_t seed)
{
	memset(k, 0, sizeof(*k));
	fftd_test_mf_new(&k->b, n, FFTD_F64, NTEMPLATES, seed);
	size_t nb    = (size_t) k->b.nbins;
	k->psd_off   = 2 * nb * 8;
	k->tpl_bytes = 2 * nb * 8;
	int rv       = fftd_array_create(c, 0, k->psd_off + nb * 8, &k->dp);
	if (rv == FFTD_OK) {
		rv = fftd_array_create(
		    c, 0, (size_t) NTEMPLATES * k->tpl_bytes, &k->tpl);
	}
	if (rv == FFTD_OK) {
		rv = fftd_array_write(k->dp, 0, k->b.data, 2 * nb * 8);
	}
	if (rv == FFTD_OK) {
		rv = fftd_array_write(k->dp, k->psd_off, k->b.psd, nb * 8);
	}
	if (rv == FFTD_OK) {
		rv = fftd_array_write(k->tpl, 0, k->b.templates,
		    (size_t) NTEMPLATES * k->tpl_bytes);
	}
	return rv;
}

static void
bank_free(bank *k)
{
	fftd_array_destroy(k->dp);
	fftd_array_destroy(k->tpl);
	fftd_test_mf_free(&k->b);
}

// bank_call runs the request drawn on k's slice into o (poisoned by
// fftd_test_mf_out_new) on client c.
static int
bank_call(fftd_client *c, const bank *k, fftd_test_mf_out *o)
{
	const fftd_test_mf *b = &k->b;
	fftd_mf_desc        d;
	fftd_test_mf_desc(b, &d);
	return fftd_mf_bank(c, &d, k->dp, 0, k->dp, k->psd_off, k->tpl,
	    (size_t) b->first * k->tpl_bytes, b->count, o->peaks, o->triggers,
	    o->max_triggers, &o->ntriggers, &o->ntotal, o->series_index,
	    o->nseries, o->series);
}

// draw draws a request on the whole bank with threshold and series rows
// (fftd_test_mf_draw) and gives its results' room, poisoned.
static void
draw(bank *k, uint64_t *s, fftd_test_mf_out *o)
{
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	k->b.first = 0;
	k->b.count = NTEMPLATES;
	fftd_test_mf_draw(&k->b, s, NTEMPLATES, &maxt, idx, &ns);
	fftd_test_mf_out_new(o, &k->b, maxt, ns, idx);
}

// seqpacket_count is how many SOCK_SEQPACKET sockets this process holds.
static int
seqpacket_count(void)
{
	return fftd_test_seqpacket_fds(NULL, 0);
}

// same_results checks that two runs of one request returned the same
// bits.
static void
same_results(const fftd_test_mf_out *x, const fftd_test_mf_out *y, int64_t n,
    int64_t width)
{
	assert_memory_equal(x->peaks, y->peaks, (size_t) n * sizeof(*x->peaks));
	assert_int_equal(x->ntriggers, y->ntriggers);
	assert_int_equal(x->ntotal, y->ntotal);
	if (x->ntriggers > 0) {
		assert_memory_equal(x->triggers, y->triggers,
		    x->ntriggers * sizeof(*x->triggers));
	}
	if (x->nseries > 0) {
		assert_memory_equal(x->series, y->series,
		    (size_t) x->nseries * (size_t) width * 8);
	}
}

// test_paths_agree: the same requests over a channel and over NNG.
static void
test_paths_agree(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const int64_t sizes[] = { 4096, 1000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t s    = fftd_test_case_seed(77 + i);
		uint64_t seed = fftd_test_mf_rng_next(&s);
		setenv("FFTD_BANK_CHANNEL", "0", 1);
		fftd_client *cn;
		ASSERT_OK(fftd_client_open(&cn, D.url, TIMEOUT_MS));
		int  before = seqpacket_count();
		bank kn, kc;
		ASSERT_OK(bank_new(cn, &kn, sizes[i], seed));
		fftd_test_mf_out on, oc;
		uint64_t         s2 = s; // the same request below
		draw(&kn, &s, &on);
		ASSERT_OK(bank_call(cn, &kn, &on));
		assert_int_equal(seqpacket_count(), before); // NNG only
		fftd_test_mf_describe(&kn.b, &on, "NNG");
		fftd_test_mf_check(&kn.b, &on);
		unsetenv("FFTD_BANK_CHANNEL");
		// The same inputs (same seed) and request on C, over a channel.
		ASSERT_OK(bank_new(C, &kc, sizes[i], seed));
		draw(&kc, &s2, &oc);
		assert_int_equal(oc.max_triggers, on.max_triggers);
		ASSERT_OK(bank_call(C, &kc, &oc));
		assert_true(seqpacket_count() >= 1); // C's channel
		fftd_test_mf_describe(&kc.b, &oc, "channel");
		fftd_test_mf_check(&kc.b, &oc);
		same_results(&on, &oc, NTEMPLATES, kc.b.width);
		fftd_test_mf_out_free(&on);
		fftd_test_mf_out_free(&oc);
		bank_free(&kn);
		bank_free(&kc);
		fftd_client_close(cn);
	}
}

// A thread's share of test_threads: its slice of the bank starts at
// template `first`, and each of its results is compared with the main
// thread's result for the whole bank (ref, checked against the
// reference), shifted by first.
typedef struct job {
	fftd_client            *c;
	bank                   *k;
	const fftd_test_mf_out *ref;
	int64_t                 first;
	int                     calls, ok;
} job;

// close_rho says whether two f64 rho agree to the reference's f64 bound
// (test_mf.c's: 1e-12 of the larger; the slices may batch templates
// differently).
static bool
close_rho(double x, double y)
{
	double m = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
	return fabs(x - y) <= 1e-12 * (m > 1 ? m : 1);
}

// same_as_ref says whether o, the result of slice [first, NTEMPLATES),
// is ref's (the whole bank) from template first on: peaks, and the
// triggers of those templates (ref keeps all it found).
static bool
same_as_ref(
    const fftd_test_mf_out *o, const fftd_test_mf_out *ref, int64_t first)
{
	for (int64_t j = 0; j < NTEMPLATES - first; j++) {
		const fftd_mf_peak *p = &o->peaks[j],
		                   *q = &ref->peaks[first + j];
		if (p->t != q->t || !close_rho(p->rho, q->rho)
		    || !close_rho(p->sigma, q->sigma)) {
			return false;
		}
	}
	size_t i = 0;
	for (size_t r = 0; r < ref->ntriggers; r++) {
		const fftd_mf_trigger *q = &ref->triggers[r];
		if (q->template_index < first) {
			continue;
		}
		if (i >= o->ntriggers) {
			return false;
		}
		const fftd_mf_trigger *p = &o->triggers[i++];
		if (p->template_index != q->template_index - first
		    || p->t != q->t || !close_rho(p->rho, q->rho)) {
			return false;
		}
	}
	return i == o->ntriggers && o->ntotal == o->ntriggers;
}

static void *
thread_main(void *arg)
{
	job         *j = arg;
	fftd_test_mf b = j->k->b; // this thread's slice of the same inputs
	b.first        = j->first;
	b.count        = NTEMPLATES - j->first;
	for (int i = 0; i < j->calls; i++) {
		fftd_test_mf_out o;
		fftd_test_mf_out_new(&o, &b, j->ref->max_triggers, 0, NULL);
		fftd_mf_desc d;
		fftd_test_mf_desc(&b, &d);
		int rv = fftd_mf_bank(j->c, &d, j->k->dp, 0, j->k->dp,
		    j->k->psd_off, j->k->tpl,
		    (size_t) b.first * j->k->tpl_bytes, b.count, o.peaks,
		    o.triggers, o.max_triggers, &o.ntriggers, &o.ntotal, NULL,
		    0, NULL);
		if (rv == FFTD_OK && same_as_ref(&o, j->ref, j->first)) {
			j->ok++;
		}
		fftd_test_mf_out_free(&o);
	}
	return NULL;
}

// A result struct of a later ABI: this one's and a field it lacks.
typedef struct {
	fftd_mf_peak p;
	double       extra;
} peak_v2;
typedef struct {
	fftd_mf_trigger t;
	double          extra;
} trigger_v2;

// test_other_abi_sizes: fftd_mf_bank_sized with larger peak and trigger
// structs (poisoned) gets what fftd_mf_bank gets, each in its struct's
// place, and zeros in the field the library lacks.
static void
test_other_abi_sizes(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	uint64_t s = fftd_test_case_seed(17);
	bank     k;
	ASSERT_OK(bank_new(C, &k, 1000, fftd_test_mf_rng_next(&s)));
	fftd_test_mf_out o;
	draw(&k, &s, &o);
	ASSERT_OK(bank_call(C, &k, &o));
	fftd_test_mf_check(&k.b, &o);
	size_t      nt = o.max_triggers;
	peak_v2    *pv = malloc(NTEMPLATES * sizeof(*pv));
	trigger_v2 *tv = malloc((nt + 1) * sizeof(*tv));
	assert_non_null(pv);
	assert_non_null(tv);
	memset(pv, 0xA5, NTEMPLATES * sizeof(*pv));
	memset(tv, 0xA5, (nt + 1) * sizeof(*tv));
	void        *series = o.nseries > 0
	           ? malloc((size_t) o.nseries * (size_t) k.b.width * 8)
	           : NULL;
	size_t       ntrig = 0, ntotal = 0;
	fftd_mf_desc d;
	fftd_test_mf_desc(&k.b, &d);
	ASSERT_OK(fftd_mf_bank_sized(C, &d, sizeof(d), k.dp, 0, k.dp, k.psd_off,
	    k.tpl, 0, NTEMPLATES, &pv[0].p, sizeof(*pv), &tv[0].t, sizeof(*tv),
	    nt, &ntrig, &ntotal, o.series_index, o.nseries, series));
	assert_int_equal(ntrig, o.ntriggers);
	assert_int_equal(ntotal, o.ntotal);
	for (int j = 0; j < NTEMPLATES; j++) {
		assert_memory_equal(&pv[j].p, &o.peaks[j], sizeof(pv[j].p));
		assert_true(pv[j].extra == 0);
	}
	for (size_t i = 0; i < ntrig; i++) {
		assert_memory_equal(&tv[i].t, &o.triggers[i], sizeof(tv[i].t));
		assert_true(tv[i].extra == 0);
	}
	uint8_t poison[sizeof(*tv)];
	memset(poison, 0xA5, sizeof(poison));
	assert_memory_equal(&tv[ntrig], poison, sizeof(poison));
	if (o.nseries > 0) {
		assert_memory_equal(series, o.series,
		    (size_t) o.nseries * (size_t) k.b.width * 8);
	}
	free(series);
	free(pv);
	free(tv);
	fftd_test_mf_out_free(&o);
	bank_free(&k);
}

// threads_agree: NTHREADS threads of client c call at once, each on its
// own slice of one bank (so that results landing in another thread's
// buffer would show), 25 times; every result must be the main thread's
// for the whole bank, which is checked against the reference first.
static bool
threads_agree(fftd_client *c, uint64_t s)
{
	bank k;
	ASSERT_OK(bank_new(c, &k, 4096, fftd_test_mf_rng_next(&s)));
	k.b.first = 0;
	k.b.count = NTEMPLATES;
	size_t  maxt;
	int64_t idx[3];
	int     ns;
	fftd_test_mf_draw(&k.b, &s, 0, &maxt, idx, &ns);
	fftd_test_mf_out ref; // room for every trigger found
	fftd_test_mf_out_new(&ref, &k.b, fftd_test_mf_found(&k.b) + 1, 0, NULL);
	ASSERT_OK(bank_call(c, &k, &ref));
	fftd_test_mf_check(&k.b, &ref);
	assert_int_equal(ref.ntriggers, ref.ntotal);
	pthread_t th[NTHREADS];
	job       jobs[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		jobs[i] = (job) { .c = c,
			.k           = &k,
			.ref         = &ref,
			.first       = 1 + 2 * i,
			.calls       = 25 };
		assert_int_equal(
		    pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
	}
	bool ok = true;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		ok = ok && jobs[i].ok == jobs[i].calls;
	}
	fftd_test_mf_out_free(&ref);
	bank_free(&k);
	return ok;
}

// test_threads: threads_agree on C.
static void
test_threads(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	assert_true(threads_agree(C, fftd_test_case_seed(5)));
	// At most one channel per thread that ever waited at once.
	assert_true(seqpacket_count() <= NTHREADS + 1);
}

// test_big_results: results larger than any socket packet (three series
// rows of 2^16 samples, 1.5 MB) come over the channel, through its
// shared buffer; room for 2^22 triggers (168 MB at most) sends the
// request through NNG instead. Both correct.
static void
test_big_results(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	uint64_t s = fftd_test_case_seed(9);
	bank     k;
	ASSERT_OK(bank_new(C, &k, 65536, fftd_test_mf_rng_next(&s)));
	fftd_test_mf_out o;
	draw(&k, &s, &o);
	size_t maxt = o.max_triggers;
	fftd_test_mf_out_free(&o);
	static const int64_t rows[3] = { 0, 5, NTEMPLATES - 1 };
	fftd_test_mf_out_new(&o, &k.b, maxt, 3, rows);
	int before = seqpacket_count();
	ASSERT_OK(bank_call(C, &k, &o));
	assert_true(before >= 1); // C's channel, from the earlier tests
	fftd_test_mf_describe(&k.b, &o, "channel, series");
	fftd_test_mf_check(&k.b, &o);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_out_new(&o, &k.b, (size_t) 1 << 22, 0, NULL);
	ASSERT_OK(bank_call(C, &k, &o));
	fftd_test_mf_describe(&k.b, &o, "NNG, 2^22 trigger room");
	fftd_test_mf_check(&k.b, &o);
	fftd_test_mf_out_free(&o);
	assert_int_equal(seqpacket_count(), before);
	bank_free(&k);
}

// client_errors is client c's failed requests as the daemon counts them.
static uint64_t
client_errors(fftd_client *c)
{
	fftd_client_stats st;
	if (fftd_test_my_client_stats(c, &st) != 0) {
		fail_msg("this process is not among the daemon's clients");
	}
	return st.errors;
}

// calls_checked runs n requests drawn on k through c, each checked
// against the reference.
static void
calls_checked(fftd_client *c, bank *k, uint64_t *s, int n)
{
	for (int i = 0; i < n; i++) {
		fftd_test_mf_out o;
		draw(k, s, &o);
		ASSERT_OK(bank_call(c, k, &o));
		fftd_test_mf_check(&k->b, &o);
		fftd_test_mf_out_free(&o);
	}
}

// test_no_result_buffer: a client that may hold one shared buffer, which
// it holds, cannot get a channel's result buffer. Its bank calls go
// through NNG, correct, and the refused buffer is asked for once, not on
// every call (a round trip and a refusal each). Once the client's buffer
// is gone and the retry interval (1 s) has passed, calls are still right
// and the channel has its result buffer (the client's one).
static void
test_no_result_buffer(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	static const char conf[] = "[limits]\nmax_buffers_per_client = 1\n";
	fftd_test_daemon  d1;
	fftd_client      *c;
	assert_int_equal(
	    fftd_test_session_start(&d1, conf, DAEMON_ARGS, TIMEOUT_MS, &c), 0);
	fftd_buffer *mine;
	ASSERT_OK(fftd_buffer_create(c, 4096, &mine));
	uint64_t s = fftd_test_case_seed(31);
	bank     k;
	ASSERT_OK(bank_new(c, &k, 4096, fftd_test_mf_rng_next(&s)));
	uint64_t before = client_errors(c);
	calls_checked(c, &k, &s, 4);
	uint64_t refused = client_errors(c) - before;
	printf("# 4 calls without room for a result buffer: %llu refused "
	       "buffer request(s)\n",
	    (unsigned long long) refused);
	assert_int_equal(refused, 1);
	fftd_buffer_destroy(mine);
	fftd_test_sleep_ms(1100);
	calls_checked(c, &k, &s, 2);
	assert_int_equal(client_errors(c) - before, refused);
	// The channel asked again and holds the client's one buffer now.
	assert_int_equal(fftd_buffer_create(c, 4096, &mine), FFTD_ELIMIT);
	bank_free(&k);
	assert_int_equal(fftd_test_session_stop(&d1, &c), 0);
}

// chan_reply reads one reply frame from channel fd (at most 5 s) and
// returns its status (-1: none came or it does not decode); its message
// goes to why (room for 256 bytes) when why is not NULL.
static int
chan_reply(int fd, char *why)
{
	static uint8_t buf[1 << 20];
	struct pollfd  p = { fd, POLLIN, 0 };
	if (poll(&p, 1, 5000) != 1) {
		return -1;
	}
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0) {
		return -1;
	}
	fftd__frame f;
	if (fftd__frame_parse(buf, (size_t) n, &f) != FFTD_OK) {
		return -1;
	}
	Fftd__Wire__Reply *r = fftd__wire__reply__unpack(NULL, f.pb_len, f.pb);
	if (r == NULL) {
		return -1;
	}
	int st = r->status;
	if (why != NULL) {
		snprintf(why, 256, "%s", r->message ? r->message : "");
	}
	fftd__wire__reply__free_unpacked(r, NULL);
	return st;
}

// send_frame sends request rq as one packet on fd.
static void
send_frame(int fd, const Fftd__Wire__Request *rq)
{
	nng_msg *m;
	ASSERT_OK(fftd__msg_build(&m, &rq->base, 0, NULL));
	assert_int_equal(send(fd, nng_msg_body(m), nng_msg_len(m), 0),
	    (ssize_t) nng_msg_len(m));
	nng_msg_free(m);
}

// bank_request fills a MatchedFilter of k's request on arrays data (D at
// 0, S at psd_off) and tpl.
static void
bank_request(
    Fftd__Wire__MatchedFilter *mf, const bank *k, uint64_t data, uint64_t tpl)
{
	mf->n               = (uint64_t) k->b.n;
	mf->precision       = FFTD__WIRE__PRECISION__F64;
	mf->delta_f         = k->b.delta_f;
	mf->kmin            = k->b.kmin;
	mf->kmax            = k->b.kmax;
	mf->t_begin         = k->b.t_begin;
	mf->t_end           = k->b.t_end;
	mf->cluster         = k->b.cluster;
	mf->threshold       = k->b.threshold;
	mf->data_array      = data;
	mf->psd_array       = data;
	mf->psd_offset      = k->psd_off;
	mf->templates_array = tpl;
	mf->count           = NTEMPLATES;
	mf->max_triggers    = 16;
}

// test_misbehaving: a client's own channel, written to directly.
static void
test_misbehaving(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	// A client of its own, whose one channel is the socket it adds.
	fftd_client *c;
	ASSERT_OK(fftd_client_open(&c, D.url, TIMEOUT_MS));
	uint64_t s = fftd_test_case_seed(13);
	bank     k;
	// Long enough (tens of ms here) that a second request finds the
	// first still running.
	ASSERT_OK(bank_new(c, &k, 65536, fftd_test_mf_rng_next(&s)));
	fftd_test_mf_out o;
	draw(&k, &s, &o);
	int old[64], now[64];
	int before = fftd_test_seqpacket_fds(old, 64);
	assert_true(before < 64);
	ASSERT_OK(bank_call(c, &k, &o));
	fftd_test_mf_check(&k.b, &o);
	assert_int_equal(fftd_test_seqpacket_fds(now, 64), before + 1);
	int fd = -1; // c's channel: the one socket that is new
	for (int i = 0; i <= before; i++) {
		bool seen = false;
		for (int j = 0; j < before; j++) {
			seen = seen || now[i] == old[j];
		}
		fd = seen ? fd : now[i];
	}
	assert_true(fd >= 0);
	// Not a frame.
	static const char junk[] = "not a frame at all";
	assert_int_equal(
	    send(fd, junk, sizeof(junk), 0), (ssize_t) sizeof(junk));
	assert_int_equal(chan_reply(fd, NULL), FFTD_EPROTO);
	// A frame of another request.
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Ping    pg = FFTD__WIRE__PING__INIT;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_PING;
	rq.ping                = &pg;
	send_frame(fd, &rq);
	assert_int_equal(chan_reply(fd, NULL), FFTD_EPROTO);
	// The arrays' ids, which the API keeps to itself: the daemon names an
	// id that is not this connection's; c's two are the first it does
	// not (ids count up from 1, dp's first).
	Fftd__Wire__Request       mq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__MatchedFilter mf = FFTD__WIRE__MATCHED_FILTER__INIT;
	mq.body_case                 = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	mq.matched_filter            = &mf;
	uint64_t ids[2]              = { 0, 0 };
	int      found               = 0;
	for (uint64_t id = 1; id < 100000 && found < 2; id++) {
		char why[256];
		bank_request(&mf, &k, id, id);
		send_frame(fd, &mq);
		int st = chan_reply(fd, why);
		assert_true(st == FFTD_EINVAL || st == FFTD_ESIZE);
		if (strstr(why, "does not exist") == NULL) {
			ids[found++] = id;
		}
	}
	assert_int_equal(found, 2);
	// A request without a result buffer: refused (its results could
	// exceed a packet).
	bank_request(&mf, &k, ids[0], ids[1]);
	char why[256];
	send_frame(fd, &mq);
	assert_int_equal(chan_reply(fd, why), FFTD_EINVAL);
	assert_non_null(strstr(why, "result_buffer"));
	// The channel's result buffer, found as the arrays were: the first id
	// the daemon does not name as missing (then it runs: FFTD_OK).
	int st = FFTD_EINVAL;
	for (uint64_t id = 1; id < 100000 && st != FFTD_OK; id++) {
		mf.result_buffer = id;
		send_frame(fd, &mq);
		st = chan_reply(fd, why);
		assert_true(st == FFTD_OK
		    || (st == FFTD_EINVAL && strstr(why, "does not exist")));
	}
	assert_int_equal(st, FFTD_OK);
	// Two bank requests before reading: one runs, one is refused.
	send_frame(fd, &mq);
	send_frame(fd, &mq);
	int a = chan_reply(fd, NULL), b = chan_reply(fd, NULL);
	assert_true((a == FFTD_OK && b == FFTD_ELIMIT)
	    || (a == FFTD_ELIMIT && b == FFTD_OK));
	// The channel still serves the client's own calls, correctly.
	fftd_test_mf_out o2;
	draw(&k, &s, &o2);
	ASSERT_OK(bank_call(c, &k, &o2));
	fftd_test_mf_check(&k.b, &o2);
	fftd_test_mf_out_free(&o);
	fftd_test_mf_out_free(&o2);
	bank_free(&k);
	fftd_client_close(c);
	assert_int_equal(seqpacket_count(), before);
}

// test_busy_poll: the same requests to a daemon and client that poll
// (DP, FFTD_BUSY_POLL_US) as to ones that sleep (D, FFTD_BUSY_POLL_US=0),
// back to back and after pauses longer than the window; then the threads
// of test_threads against DP.
static void
test_busy_poll(void **state)
{
	(void) state;
	fftd_test_need_daemon();
	char us[32];
	snprintf(us, sizeof(us), "%d", BUSY_POLL_US);
	for (int round = 0; round < 2; round++) {
		uint64_t s    = fftd_test_case_seed(91 + (uint64_t) round);
		uint64_t seed = fftd_test_mf_rng_next(&s);
		setenv("FFTD_BUSY_POLL_US", "0", 1); // channels read it at open
		fftd_client *cs, *cp;
		ASSERT_OK(fftd_client_open(&cs, D.url, TIMEOUT_MS));
		setenv("FFTD_BUSY_POLL_US", us, 1);
		ASSERT_OK(fftd_client_open(&cp, DP.url, TIMEOUT_MS));
		bank ks, kp;
		ASSERT_OK(bank_new(cs, &ks, 4096, seed));
		ASSERT_OK(bank_new(cp, &kp, 4096, seed));
		for (int call = 0; call < 6; call++) {
			fftd_test_mf_out os, op;
			uint64_t         s2 = s;
			draw(&ks, &s, &os);
			draw(&kp, &s2, &op);
			ASSERT_OK(bank_call(cs, &ks, &os));
			// Odd calls come after the window ran out on both
			// sides (the poller, the worker and this thread
			// sleep again).
			if (call % 2 == 1) {
				usleep(3 * BUSY_POLL_US);
			}
			ASSERT_OK(bank_call(cp, &kp, &op));
			fftd_test_mf_check(&kp.b, &op);
			same_results(&os, &op, NTEMPLATES, kp.b.width);
			fftd_test_mf_out_free(&os);
			fftd_test_mf_out_free(&op);
		}
		bank_free(&ks);
		bank_free(&kp);
		fftd_client_close(cs);
		fftd_client_close(cp);
	}
	// Threads of one polling client, each on its own channel.
	fftd_client *cp;
	ASSERT_OK(fftd_client_open(&cp, DP.url, TIMEOUT_MS));
	assert_true(threads_agree(cp, fftd_test_case_seed(95)));
	fftd_client_close(cp);
	unsetenv("FFTD_BUSY_POLL_US");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_agree),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_big_results),
		cmocka_unit_test(test_no_result_buffer),
		cmocka_unit_test(test_misbehaving),
		cmocka_unit_test(test_other_abi_sizes),
		cmocka_unit_test(test_busy_poll),
	};
	return fftd_test_run_group("test_bankchan", tests, &FX);
}

// SPDX-License-Identifier: MIT
//
// seeds.c — writes the fuzzers' seed corpora (tests/fuzz/fuzz-*.c) from
// real, valid messages made by the project's own code, so that no binary
// blob is committed: frames of every request (resident arrays and the
// matched-filter bank among them) and of the replies the client reads, built
// with fftd__msg_build and fftd__desc_to_wire as libfftd builds them; stream
// channel submissions as libfftd sends them; hand-over requests (token, byte
// count, a descriptor) as libfftd sends them, and the ways a peer gets them
// wrong; .npy files written by fftd__npy_fwrite; config files, deploy/fftd.conf
// among them.
//
//   fuzz-seeds OUT_DIR [FFTD_CONF]   writes OUT_DIR/NAME/seed-NNN

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdsock.h"
#include "fftd.h"
#include "npy.h"
#include "streamchan.h"
#include "wire.h"

static const char *out_dir;

// put writes one seed file OUT_DIR/name/seed-NNN.
static void
put(const char *name, const void *p, size_t len)
{
	static int count;
	char       path[4096];
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/seed-%03d", out_dir, name, count++);
	FILE *f = fopen(path, "wb");
	if (f == NULL || (len > 0 && fwrite(p, 1, len, f) != len)
	    || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

// put_frame writes a frame of message m with payload_len payload bytes.
static void
put_frame(const ProtobufCMessage *m, uint64_t payload_len)
{
	nng_msg *msg;
	void    *payload;
	if (fftd__msg_build(&msg, m, payload_len, &payload) != FFTD_OK) {
		fprintf(stderr, "fuzz-seeds: cannot build a frame\n");
		exit(1);
	}
	if (payload_len > 0) {
		memset(payload, 0x3c, (size_t) payload_len);
	}
	put("request", nng_msg_body(msg), nng_msg_len(msg));
	nng_msg_free(msg);
}

// Plan descriptions as applications create them.
static void
plan_seeds(void)
{
	fftd_plan_desc ds[14];
	memset(ds, 0, sizeof(ds));
	for (int i = 0; i < 14; i++) {
		ds[i].batch     = 1;
		ds[i].direction = FFTD_FORWARD;
		ds[i].device    = -1;
	}
	ds[0].rank        = 1; // C2C f64 N=1024
	ds[0].n[0]        = 1024;
	ds[1].rank        = 1; // R2C f32 batched, strided
	ds[1].n[0]        = 4096;
	ds[1].batch       = 8;
	ds[1].kind        = FFTD_R2C;
	ds[1].precision   = FFTD_F32;
	ds[1].istride     = 2;
	ds[1].idist       = 8192;
	ds[2].rank        = 2; // C2R f16 2D, normalized
	ds[2].n[0]        = 64;
	ds[2].n[1]        = 64;
	ds[2].kind        = FFTD_C2R;
	ds[2].precision   = FFTD_F16;
	ds[2].direction   = FFTD_INVERSE;
	ds[2].norm        = FFTD_NORM_BY_N;
	ds[3].rank        = 3; // 3D with embedded (padded) layouts
	ds[3].n[0]        = 8;
	ds[3].n[1]        = 8;
	ds[3].n[2]        = 8;
	ds[3].inembed[0]  = 8;
	ds[3].inembed[1]  = 10;
	ds[3].inembed[2]  = 12;
	ds[3].onembed[0]  = 8;
	ds[3].onembed[1]  = 8;
	ds[3].onembed[2]  = 16;
	ds[3].batch       = 3;
	ds[3].idist       = 960;
	ds[3].odist       = 1024;
	ds[4].rank        = 1; // realtime, algorithm named, a device chosen
	ds[4].n[0]        = 100;
	ds[4].algorithm   = "tc16";
	ds[4].precision   = FFTD_F32;
	ds[4].priority    = FFTD_PRIORITY_REALTIME;
	ds[4].device      = 0;
	ds[4].norm        = FFTD_NORM_ORTHO;
	ds[5].rank        = 2; // R2C 2D, batch overlapping (dist 0)
	ds[5].n[0]        = 6;
	ds[5].n[1]        = 7;
	ds[5].kind        = FFTD_R2C;
	ds[5].batch       = 4;
	ds[5].idist       = 0;
	ds[6].rank        = 1; // auto with a tolerance (issue 18): f64 data
	ds[6].n[0]        = 4096;
	ds[6].batch       = 2;
	ds[6].tolerance   = 1e-5;
	ds[7].rank        = 2; // f32 2D, a tolerance only fp16 can meet
	ds[7].n[0]        = 256;
	ds[7].n[1]        = 256;
	ds[7].precision   = FFTD_F32;
	ds[7].tolerance   = 1e-2;
	ds[8].rank        = 1; // a tolerance refused (negative)
	ds[8].n[0]        = 64;
	ds[8].tolerance   = -1.0;
	ds[9].rank        = 3; // tc16 3D C2C (issue 18)
	ds[9].n[0]        = 32;
	ds[9].n[1]        = 32;
	ds[9].n[2]        = 64;
	ds[9].batch       = 2;
	ds[9].precision   = FFTD_F16;
	ds[9].algorithm   = "tc16";
	ds[10].rank       = 1; // split16 R2C (issue 18)
	ds[10].n[0]       = 4096;
	ds[10].kind       = FFTD_R2C;
	ds[10].precision  = FFTD_F32;
	ds[10].algorithm  = "split16";
	ds[11].rank       = 1; // int8 C2C voltages, interleaved channels
	ds[11].n[0]       = 1024;
	ds[11].batch      = 4;
	ds[11].istride    = 4;
	ds[11].idist      = 1;
	ds[11].precision  = FFTD_F32;
	ds[11].input      = FFTD_INPUT_I8;
	ds[12].rank       = 2; // int8 R2C 2D, padded rows
	ds[12].n[0]       = 16;
	ds[12].n[1]       = 30;
	ds[12].inembed[0] = 16;
	ds[12].inembed[1] = 32;
	ds[12].kind       = FFTD_R2C;
	ds[12].input      = FFTD_INPUT_I8;
	ds[13].rank       = 1; // int8 C2R: refused
	ds[13].n[0]       = 64;
	ds[13].kind       = FFTD_C2R;
	ds[13].direction  = FFTD_INVERSE;
	ds[13].input      = FFTD_INPUT_I8;
	for (int i = 0; i < 14; i++) {
		fftd__wire_desc        w;
		Fftd__Wire__Request    rq = FFTD__WIRE__REQUEST__INIT;
		Fftd__Wire__PlanCreate pc = FFTD__WIRE__PLAN_CREATE__INIT;
		fftd__desc_to_wire(&w, &ds[i]);
		pc.desc        = &w.pd;
		rq.body_case   = FFTD__WIRE__REQUEST__BODY_PLAN_CREATE;
		rq.plan_create = &pc;
		put_frame(&rq.base, 0);
	}
}

// The other requests, one of each (execute inline and on buffers).
static void
request_seeds(void)
{
	Fftd__Wire__Request rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Hello   h  = FFTD__WIRE__HELLO__INIT;
	h.protocol_version     = FFTD_PROTOCOL_VERSION;
	h.client_name          = "fuzz-seeds";
	h.pid                  = 4242;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_HELLO;
	rq.hello               = &h;
	put_frame(&rq.base, 0);

	Fftd__Wire__Ping p = FFTD__WIRE__PING__INIT;
	p.token            = 0x0123456789abcdefull;
	rq.body_case       = FFTD__WIRE__REQUEST__BODY_PING;
	rq.ping            = &p;
	put_frame(&rq.base, 0);

	Fftd__Wire__StatsRequest st = FFTD__WIRE__STATS_REQUEST__INIT;
	rq.body_case                = FFTD__WIRE__REQUEST__BODY_STATS;
	rq.stats                    = &st;
	put_frame(&rq.base, 0);

	// AlgoStats: the first page, a later one with a limit, and a slot
	// far past any table.
	Fftd__Wire__AlgoStatsRequest as = FFTD__WIRE__ALGO_STATS_REQUEST__INIT;
	rq.body_case                    = FFTD__WIRE__REQUEST__BODY_ALGO_STATS;
	rq.algo_stats                   = &as;
	put_frame(&rq.base, 0);
	as.speed_from  = 17;
	as.speed_limit = 5;
	put_frame(&rq.base, 0);
	as.speed_from  = UINT32_MAX;
	as.speed_limit = 0;
	put_frame(&rq.base, 0);

	Fftd__Wire__PlanDestroy pd = FFTD__WIRE__PLAN_DESTROY__INIT;
	pd.plan_id                 = 7;
	rq.body_case               = FFTD__WIRE__REQUEST__BODY_PLAN_DESTROY;
	rq.plan_destroy            = &pd;
	put_frame(&rq.base, 0);

	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = 7;
	ex.tag                 = 99;
	ex.deadline_us         = 5000;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	rq.execute             = &ex;
	put_frame(&rq.base, 16384); // inline: N=1024 C2C f64
	ex.in_buffer  = 3;
	ex.in_offset  = 0;
	ex.out_buffer = 3;
	ex.out_offset = 16384;
	put_frame(&rq.base, 0); // shared memory

	Fftd__Wire__BufferRegister br = FFTD__WIRE__BUFFER_REGISTER__INIT;
	br.bytes                      = 1 << 20;
	rq.body_case       = FFTD__WIRE__REQUEST__BODY_BUFFER_REGISTER;
	rq.buffer_register = &br;
	put_frame(&rq.base, 0);

	Fftd__Wire__BufferRelease bl = FFTD__WIRE__BUFFER_RELEASE__INIT;
	bl.buffer_id                 = 3;
	rq.body_case                 = FFTD__WIRE__REQUEST__BODY_BUFFER_RELEASE;
	rq.buffer_release            = &bl;
	put_frame(&rq.base, 0);

	Fftd__Wire__Cancel c = FFTD__WIRE__CANCEL__INIT;
	c.tag                = 99;
	rq.body_case         = FFTD__WIRE__REQUEST__BODY_CANCEL;
	rq.cancel            = &c;
	put_frame(&rq.base, 0);

	Fftd__Wire__StreamOpen so = FFTD__WIRE__STREAM_OPEN__INIT;
	so.plan_id                = 7;
	so.buffer_id              = 3;
	so.depth                  = 4;
	so.slot_bytes             = 32768;
	so.out_offset             = 16384;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_STREAM_OPEN;
	rq.stream_open            = &so;
	put_frame(&rq.base, 0);
}

// Resident arrays and the matched-filter bank (issue 16): create, write
// inline and from a shared buffer, read inline and into one, destroy, an
// execution on arrays, a bank request with series, and one whose reply
// size overflows; CUDA IPC opens, good and bad.
static void
array_seeds(void)
{
	Fftd__Wire__Request     rq = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__ArrayCreate ac = FFTD__WIRE__ARRAY_CREATE__INIT;
	ac.device                  = -1;
	ac.bytes                   = 1 << 20;
	rq.body_case               = FFTD__WIRE__REQUEST__BODY_ARRAY_CREATE;
	rq.array_create            = &ac;
	put_frame(&rq.base, 0);

	Fftd__Wire__ArrayWrite aw = FFTD__WIRE__ARRAY_WRITE__INIT;
	aw.array_id               = 5;
	aw.offset                 = 4096;
	aw.len                    = 16384;
	rq.body_case              = FFTD__WIRE__REQUEST__BODY_ARRAY_WRITE;
	rq.array_write            = &aw;
	put_frame(&rq.base, 16384); // inline
	aw.in_buffer = 3;
	aw.in_offset = 64;
	put_frame(&rq.base, 0); // from a shared buffer

	Fftd__Wire__ArrayRead ar = FFTD__WIRE__ARRAY_READ__INIT;
	ar.array_id              = 5;
	ar.offset                = 4096;
	ar.len                   = 16384;
	rq.body_case             = FFTD__WIRE__REQUEST__BODY_ARRAY_READ;
	rq.array_read            = &ar;
	put_frame(&rq.base, 0);
	ar.out_buffer = 3;
	ar.out_offset = 128;
	put_frame(&rq.base, 0);

	Fftd__Wire__ArrayDestroy ad = FFTD__WIRE__ARRAY_DESTROY__INIT;
	ad.array_id                 = 5;
	rq.body_case                = FFTD__WIRE__REQUEST__BODY_ARRAY_DESTROY;
	rq.array_destroy            = &ad;
	put_frame(&rq.base, 0);

	Fftd__Wire__Execute ex = FFTD__WIRE__EXECUTE__INIT;
	ex.plan_id             = 7;
	ex.in_array            = 5;
	ex.in_offset           = 0;
	ex.out_array           = 6;
	ex.out_offset          = 32;
	rq.body_case           = FFTD__WIRE__REQUEST__BODY_EXECUTE;
	rq.execute             = &ex;
	put_frame(&rq.base, 0);

	int64_t                   series[2] = { 0, 3 };
	Fftd__Wire__MatchedFilter mf        = FFTD__WIRE__MATCHED_FILTER__INIT;
	mf.n                                = 1 << 17;
	mf.precision                        = FFTD__WIRE__PRECISION__F32;
	mf.delta_f                          = 4096.0 / (1 << 17);
	mf.kmin                             = 640;
	mf.kmax                             = (1 << 16) + 1;
	mf.t_begin                          = 8192;
	mf.t_end                            = (1 << 17) - 8192;
	mf.threshold                        = 5.5;
	mf.cluster                          = 4096;
	mf.data_array                       = 5;
	mf.psd_array                        = 6;
	mf.psd_offset                       = 64;
	mf.templates_array                  = 8;
	mf.templates_offset                 = 0;
	mf.count                            = 64;
	mf.max_triggers                     = 1000;
	mf.n_series_index                   = 2;
	mf.series_index                     = series;
	rq.body_case      = FFTD__WIRE__REQUEST__BODY_MATCHED_FILTER;
	rq.matched_filter = &mf;
	put_frame(&rq.base, 0);
	mf.n_series_index = 0;
	mf.max_triggers   = UINT64_MAX / 8; // the reply's size overflows
	put_frame(&rq.base, 0);

	// CUDA IPC: an open of a span of a client's allocation, then the
	// ways it goes wrong (a short handle, no bytes, a span that wraps).
	uint8_t                  handle[FFTD_IPC_HANDLE_SIZE];
	Fftd__Wire__ArrayOpenIpc oi = FFTD__WIRE__ARRAY_OPEN_IPC__INIT;
	for (size_t i = 0; i < sizeof(handle); i++) {
		handle[i] = (uint8_t) (i * 37 + 11);
	}
	oi.device         = 0;
	oi.handle.data    = handle;
	oi.handle.len     = sizeof(handle);
	oi.offset         = 4096;
	oi.bytes          = 1 << 20;
	rq.body_case      = FFTD__WIRE__REQUEST__BODY_ARRAY_OPEN_IPC;
	rq.array_open_ipc = &oi;
	put_frame(&rq.base, 0);
	oi.handle.len = 63;
	put_frame(&rq.base, 0);
	oi.handle.len = sizeof(handle);
	oi.bytes      = 0;
	put_frame(&rq.base, 0);
	oi.bytes  = 2;
	oi.offset = UINT64_MAX;
	put_frame(&rq.base, 0);

	// Their replies: an array made; a bank's counts, whose payload holds
	// 64 peak and 10 trigger records (common/mf_wire.h).
	Fftd__Wire__Reply            r  = FFTD__WIRE__REPLY__INIT;
	Fftd__Wire__ArrayCreateReply cr = FFTD__WIRE__ARRAY_CREATE_REPLY__INIT;
	cr.array_id                     = 5;
	cr.bytes                        = 1 << 20;
	r.body_case                     = FFTD__WIRE__REPLY__BODY_ARRAY_CREATE;
	r.array_create                  = &cr;
	put_frame(&r.base, 0);
	Fftd__Wire__MatchedFilterReply mr
	    = FFTD__WIRE__MATCHED_FILTER_REPLY__INIT;
	mr.ntriggers     = 10;
	mr.ntotal        = 12;
	r.body_case      = FFTD__WIRE__REPLY__BODY_MATCHED_FILTER;
	r.matched_filter = &mr;
	put_frame(&r.base, 74 * 40);
}

// Replies as the daemon sends them (the client decodes these).
static void
reply_seeds(void)
{
	Fftd__Wire__Reply r = FFTD__WIRE__REPLY__INIT;
	r.status            = FFTD_EINVAL;
	r.message           = "rank = 4: must be 1, 2 or 3";
	put_frame(&r.base, 0);

	r.status                       = FFTD_OK;
	r.message                      = "";
	Fftd__Wire__PlanCreateReply pr = FFTD__WIRE__PLAN_CREATE_REPLY__INIT;
	pr.plan_id                     = 7;
	pr.input_bytes                 = 16384;
	pr.output_bytes                = 16384;
	pr.algorithm                   = "fftw";
	r.body_case                    = FFTD__WIRE__REPLY__BODY_PLAN_CREATE;
	r.plan_create                  = &pr;
	put_frame(&r.base, 16384);

	fftd_stats        x;
	fftd_client_stats c[2];
	fftd_device_stats d;
	memset(&x, 0, sizeof(x));
	memset(c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	x.uptime_ms = 123456;
	x.sessions  = 2;
	x.requests  = 1000;
	for (int i = 0; i < 2; i++) {
		c[i].id       = (uint32_t) i + 1;
		c[i].pid      = 1000 + (uint64_t) i;
		c[i].requests = 500;
		c[i].weight   = 1.0;
		snprintf(c[i].name, sizeof(c[i].name), "client-%d", i);
		c[i].queue_hist[3]  = 17;
		c[i].device_hist[5] = 9;
	}
	snprintf(d.name, sizeof(d.name), "cpu");
	snprintf(d.backend, sizeof(d.backend), "fftw");
	d.executes                     = 1000;
	Fftd__Wire__Stats        ws    = FFTD__WIRE__STATS__INIT;
	Fftd__Wire__ClientStats  wc[2] = { FFTD__WIRE__CLIENT_STATS__INIT,
		 FFTD__WIRE__CLIENT_STATS__INIT };
	Fftd__Wire__ClientStats *pc[2] = { &wc[0], &wc[1] };
	Fftd__Wire__DeviceStats  wd    = FFTD__WIRE__DEVICE_STATS__INIT;
	Fftd__Wire__DeviceStats *pd    = &wd;
	fftd__stats_to_wire(&ws, &x);
	fftd__client_stats_to_wire(&wc[0], &c[0]);
	fftd__client_stats_to_wire(&wc[1], &c[1]);
	fftd__device_stats_to_wire(&wd, &d);
	ws.n_clients = 2;
	ws.clients   = pc;
	ws.n_devices = 1;
	ws.devices   = &pd;
	r.body_case  = FFTD__WIRE__REPLY__BODY_STATS;
	r.stats      = &ws;
	put_frame(&r.base, 0);

	// An AlgoStats reply: two plan counts and a page of two entries.
	Fftd__Wire__AlgoStatsReply as = FFTD__WIRE__ALGO_STATS_REPLY__INIT;
	Fftd__Wire__AlgoPlans      ap[2]
	    = { FFTD__WIRE__ALGO_PLANS__INIT, FFTD__WIRE__ALGO_PLANS__INIT };
	Fftd__Wire__AlgoPlans *pp[2] = { &ap[0], &ap[1] };
	Fftd__Wire__SpeedEntry we[2]
	    = { FFTD__WIRE__SPEED_ENTRY__INIT, FFTD__WIRE__SPEED_ENTRY__INIT };
	Fftd__Wire__SpeedEntry *pe[2] = { &we[0], &we[1] };
	fftd_speed_entry        se[2];
	memset(se, 0, sizeof(se));
	ap[0].algorithm = "fftw";
	ap[0].plans     = 12;
	ap[1].algorithm = "fftw-f32";
	ap[1].plans     = 3;
	for (int i = 0; i < 2; i++) {
		snprintf(se[i].key, sizeof(se[i].key), "%s", ap[i].algorithm);
		snprintf(se[i].algorithm, sizeof(se[i].algorithm), "%s",
		    ap[i].algorithm);
		snprintf(se[i].shape, sizeof(se[i].shape),
		    "c2c fwd f64 4096 batch 3");
		se[i].seconds = 5e-5 * (i + 1);
		fftd__speed_entry_to_wire(&we[i], &se[i]);
	}
	as.n_plans         = 2;
	as.plans           = pp;
	as.n_speeds        = 2;
	as.speeds          = pe;
	as.speed_total     = 40;
	as.speed_evictions = 1;
	as.speed_more      = 1;
	as.speed_next      = 2;
	r.body_case        = FFTD__WIRE__REPLY__BODY_ALGO_STATS;
	r.algo_stats       = &as;
	put_frame(&r.base, 0);
}

// Stream channel packets: a depth, then length-prefixed submissions.
static void
chan_seeds(void)
{
	uint8_t           buf[4 + 4 * (1 + sizeof(fftd__chan_submit))];
	uint32_t          depth = 4;
	size_t            len   = 0;
	fftd__chan_submit sub   = { 0 };
	memcpy(buf, &depth, 4);
	len = 4;
	for (uint32_t i = 0; i < 4; i++) {
		sub.slot        = i;
		sub.tag         = 100 + i;
		sub.deadline_us = i == 2 ? 1000 : 0;
		buf[len++]      = (uint8_t) sizeof(sub);
		memcpy(buf + len, &sub, sizeof(sub));
		len += sizeof(sub);
	}
	put("chan", buf, len);
	put("chan", buf, 4 + 1 + sizeof(sub)); // one submission
	sub.slot = 9;                          // outside the stream
	memcpy(buf + 5, &sub, sizeof(sub));
	put("chan", buf, 4 + 1 + sizeof(sub));
}

// fdsock_put writes one fuzz-fdsock input (see its opening comment): the
// mode, then chunks of req, each its flags (descriptors, credentials, a
// read after it) and its length, lens[i] bytes (a 0 ends the list).
static void
fdsock_put(
    uint8_t mode, const uint8_t *req, const uint8_t *flags, const size_t *lens)
{
	uint8_t buf[256];
	size_t  len = 0, at = 0;
	int     n = 0;
	for (; lens[n] > 0; n++) {
		buf[1 + len]     = flags[n];
		buf[1 + len + 1] = (uint8_t) (lens[n] - 1); // 1 + byte % 32
		memcpy(buf + 1 + len + 2, req + at, lens[n]);
		len += 2 + lens[n];
		at += lens[n];
	}
	buf[0] = (uint8_t) (mode | n << 5);
	put("fdsock", buf, 1 + len);
}

// Descriptor hand-overs: the request libfftd sends (token, u64 LE byte
// count, one descriptor, in one sendmsg; the client then waits for the
// reply), in pieces, and the ways a peer gets it wrong.
static void
fdsock_seeds(void)
{
	enum {
		CLOSE     = 0,
		HALF      = 1,
		STAY      = 2,
		PEER_PASS = 4,
		OWN_PASS  = 8,
		REFUSE    = 16
	};
	enum { FD1 = 1, FD2 = 2, FD5 = 5, FD6 = 6, CREDS = 8, READ = 16 };
	uint8_t req[FFTD__FDSOCK_REQ + 8];
	for (int i = 0; i < FFTD__FDSOCK_TOKEN; i++) {
		req[i] = (uint8_t) (0xa5 ^ (i * 37)); // a token
	}
	uint64_t bytes = 1 << 20;
	for (int i = 0; i < 8; i++) {
		req[FFTD__FDSOCK_TOKEN + i] = (uint8_t) (bytes >> (8 * i));
	}
	memset(req + FFTD__FDSOCK_REQ, 0x5a, 8); // more than a request
	const size_t whole[] = { 24, 0 }, three[] = { 5, 10, 9, 0 },
	             short10[] = { 10, 0 }, over[] = { 24, 8, 0 },
	             none[] = { 0 };
	fdsock_put(STAY, req, (const uint8_t[]) { FD1 }, whole);
	fdsock_put(STAY | REFUSE, req, (const uint8_t[]) { FD1 }, whole);
	fdsock_put(HALF, req, (const uint8_t[]) { FD1 | CREDS }, whole);
	fdsock_put(STAY | PEER_PASS, req, (const uint8_t[]) { FD1 }, whole);
	fdsock_put(STAY | OWN_PASS, req, (const uint8_t[]) { FD1 }, whole);
	fdsock_put(STAY, req, (const uint8_t[]) { READ, FD1 | READ, 0 }, three);
	fdsock_put(STAY, req, (const uint8_t[]) { FD1, FD1 }, over);
	fdsock_put(STAY, req, (const uint8_t[]) { 0 }, whole);
	fdsock_put(STAY, req, (const uint8_t[]) { FD2 }, whole);
	fdsock_put(STAY, req, (const uint8_t[]) { FD5 }, whole);
	fdsock_put(STAY, req, (const uint8_t[]) { FD1, FD6, FD1 }, three);
	fdsock_put(CLOSE, req, (const uint8_t[]) { FD1 }, short10);
	fdsock_put(STAY, req, (const uint8_t[]) { FD1 | READ }, short10);
	fdsock_put(CLOSE, req, NULL, none); // connects, says nothing, closes
	fdsock_put(STAY, req, NULL, none);  // says nothing until the time-out
}

// .npy files: every dtype, ranks 0 to 4.
static void
npy_seeds(void)
{
	static const int64_t shapes[5][4]
	    = { { 0 }, { 5 }, { 2, 3 }, { 2, 1, 3 }, { 1, 2, 2, 2 } };
	double data[64];
	for (int i = 0; i < 64; i++) {
		data[i] = i * 0.25 - 3;
	}
	for (int dt = FFTD__NPY_F8; dt <= FFTD__NPY_I1; dt++) {
		for (int rank = 0; rank <= 4; rank++) {
			char  *p   = NULL;
			size_t len = 0;
			FILE  *f   = open_memstream(&p, &len);
			char   msg[256];
			if (f == NULL
			    || fftd__npy_fwrite(f, (fftd__npy_dtype) dt, rank,
			           shapes[rank], data, msg, sizeof(msg))
			        != FFTD__NPY_OK
			    || fclose(f) != 0) {
				fprintf(stderr, "fuzz-seeds: npy: %s\n", msg);
				exit(1);
			}
			put("npy", p, len);
			free(p);
		}
	}
}

// Config files: the shipped one, and one that sets every kind of key.
static void
config_seeds(const char *conf)
{
	static const char *const texts[] = {
		"[server]\nlisten = ipc:///tmp/fftd.sock\nlisten = "
		"tcp://127.0.0.1:5555\ncontexts = 64\nslice_us = 0\n"
		"socket_mode = 0600\ndrain_timeout_ms = 1000\n",
		"[backend]\nbackend = fftw\ndevices = 0,2\nfftw_threads = 2\n"
		"cpu_devices = 2\nfftw_planner = measure\ngpu_sync = block\n"
		"realtime_lane = no\nrealtime_memory = 0.25\n"
		"device_memory = 2G\npipeline_streams = 4\n"
		"pipeline_chunk_bytes = 16M\n",
		"[limits]\nmax_request_bytes = 1G\nmax_rank = 2\n"
		"max_batch = 1024\nmax_plans_per_client = 16\n"
		"max_buffer_bytes = 64M\nmax_inflight_per_client = 4\n"
		"max_queued_bytes_per_client = 512M\n[cache]\n"
		"budget_bytes = 256M\n",
		"[weights]\nroot = 2\n1000 = 0.5\n[log]\nlevel = debug\n"
		"[metrics]\nlisten = http://127.0.0.1:9464/metrics\n",
		"[tls]\ncert = /etc/fftd/tls/server.pem\nkey = "
		"/etc/fftd/tls/server.key\nclient_ca = /etc/fftd/tls/c.pem\n"
		"require_client_cert = yes\n[remote]\nallow = 10.1.0.0/16, "
		"192.168.7.12\nallow = 2001:db8::/32 ::1\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		put("config", texts[i], strlen(texts[i]));
	}
	FILE *f = conf != NULL ? fopen(conf, "rb") : NULL;
	if (f != NULL) {
		static char buf[1 << 16];
		size_t      n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		put("config", buf, n);
	}
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fuzz-seeds OUT_DIR [FFTD_CONF]\n");
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
		perror(out_dir);
		return 1;
	}
	plan_seeds();
	request_seeds();
	array_seeds();
	reply_seeds();
	chan_seeds();
	fdsock_seeds();
	npy_seeds();
	config_seeds(argc > 2 ? argv[2] : NULL);
	return 0;
}

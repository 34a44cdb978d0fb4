// SPDX-License-Identifier: MIT
//
// soak_client.c — one client process of bench/soak (soak.c says what the
// soak is): it keeps --depth requests in flight through its data path
// (i mod 4: inline staged, inline through NNG, an fftd_buffer, an
// fftd_stream), checks every answer, counts it in its slot of the shared
// file, and notes there what it is doing (soak.h's CS_* states) so that
// the parent can name a client that stops moving.

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/daemon.h"
#include "lib/load.h"
#include "clock.h"
#include "fftd.h"
#include "soak.h"

#define NSMALL 4
#define NLARGE 3

static const int64_t SMALL_N[NSMALL] = { 64, 256, 1000, 1024 };
static const struct {
	fftd_kind kind;
	int64_t   n, batch;
} LARGE[NLARGE] = {
	{ FFTD_C2C, 4096, 32 }, // 1 MiB
	{ FFTD_R2C, 65536, 8 }, // 2 MiB
	{ FFTD_C2C, 65536, 8 }, // 4 MiB
};

static const char *const STATE_NAME[NSTATES] = {
	[CS_SPAWNED] = "started, not yet connecting",
	[CS_CONNECT] = "connecting (fftd_client_open)",
	[CS_PLAN]    = "planning (plans, buffer, stream)",
	[CS_RUN]     = "running its requests",
	[CS_DRAIN]   = "stopping: waiting for its requests in flight",
	[CS_CLOSE]   = "closing (releasing its objects, fftd_client_close)",
	[CS_EXIT]    = "exiting",
};

// soak_state_name names a CS_* state.
const char *
soak_state_name(int state)
{
	return state >= 0 && state < NSTATES ? STATE_NAME[state] : "unknown";
}

// set_state notes in the client's slot what it is doing from now on.
static void
set_state(cslot *s, int state)
{
	atomic_store(&s->state_ms, (int64_t) fftd__mono_ms());
	atomic_store(&s->state, state);
}

typedef struct req_slot {
	fftd_request        *req;
	const fftd_load_gen *g;
	uint64_t             k;
	float               *in, *out; // shm: inside the buffer
} req_slot;

// note_bad records a client's first failure and counts it.
static void
note_bad(cslot *s, _Atomic uint64_t *ctr, const char *fmt, const char *a,
    double x, double y)
{
	if (atomic_fetch_add(ctr, 1) == 0 && s->why[0] == '\0') {
		snprintf(s->why, sizeof(s->why), fmt, a, x, y);
	}
}

// check counts request k's answer st with output out.
static void
check(cslot *s, const fftd_load_gen *g, int st, const float *out, uint64_t k)
{
	if (st != FFTD_OK) {
		note_bad(s, &s->failed, "answered %s (%.0f, %.0f)",
		    fftd_err_name(st), (double) k, 0);
		return;
	}
	double e = fftd_load_gen_error(g, out, k);
	if (e <= fftd_load_gen_bound(g)) {
		atomic_fetch_add(&s->ok, 1);
	} else {
		note_bad(s, &s->wrong, "%s: relative error %.3g > %.3g",
		    "wrong result", e, fftd_load_gen_bound(g));
	}
}

// soak_client runs client INDEX: its requests until the parent says stop,
// then it completes what it has in flight and exits 0.
int
soak_client(int argc, char **argv)
{
	if (argc < 3) {
		return 2;
	}
	int fd = open(argv[0], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		return 2;
	}
	shared *sh = mmap(
	    NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	int me = atoi(argv[1]), inc = atoi(argv[2]);
	if (sh == MAP_FAILED || me < 0 || me >= sh->nclients) {
		return 2;
	}
	cslot *s    = &sh->c[me];
	int    mode = me % NMODES, li = (me / NMODES + inc) % NLARGE;
	if (mode == M_NNG) {
		setenv(
		    "FFTD_INLINE_STAGING", "0", 1); // before the client opens
	}
	fftd_client   *c          = NULL;
	fftd_plan     *ps[NSMALL] = { 0 }, *pl = NULL;
	fftd_load_gen *gs[NSMALL] = { 0 }, *gl = NULL;
	fftd_buffer   *buf = NULL;
	fftd_stream   *st  = NULL;
	req_slot       rs[MAX_DEPTH];
	float         *sout = NULL; // the stream's results
	int            D = sh->depth, rv, rc = 1;
	memset(rs, 0, sizeof(rs));
#define FAIL(what, code)                                                       \
	do {                                                                   \
		snprintf(s->why, sizeof(s->why), "%s: %s", what,               \
		    fftd_err_name(code));                                      \
		goto out;                                                      \
	} while (0)
	set_state(s, CS_CONNECT);
	if ((rv = fftd_client_open(&c, sh->url, sh->timeout_ms)) != FFTD_OK) {
		FAIL("fftd_client_open", rv);
	}
	set_state(s, CS_PLAN);
	for (int i = 0; i < NSMALL; i++) {
		fftd_plan_desc d;
		fftd_plan_desc_init(&d, 1, &SMALL_N[i], FFTD_C2C, FFTD_F32);
		gs[i] = fftd_load_gen_new(FFTD_C2C, SMALL_N[i], 1,
		    (uint64_t) me * 100 + (uint64_t) i + 1);
		if (gs[i] == NULL) {
			FAIL("generator", FFTD_ENOMEM);
		}
		if ((rv = fftd_plan_create(c, &d, &ps[i])) != FFTD_OK) {
			FAIL("fftd_plan_create", rv);
		}
	}
	fftd_plan_desc d;
	fftd_plan_desc_init(&d, 1, &LARGE[li].n, LARGE[li].kind, FFTD_F32);
	d.batch = LARGE[li].batch;
	gl = fftd_load_gen_new(LARGE[li].kind, LARGE[li].n, LARGE[li].batch,
	    (uint64_t) me * 100 + 50 + (uint64_t) li);
	if (gl == NULL) {
		FAIL("generator", FFTD_ENOMEM);
	}
	if ((rv = fftd_plan_create(c, &d, &pl)) != FFTD_OK) {
		FAIL("fftd_plan_create (large)", rv);
	}
	size_t in_max  = fftd_load_gen_in_bytes(gl),
	       out_max = fftd_load_gen_out_bytes(gl);
	size_t span
	    = ((in_max + 63) & ~(size_t) 63) + ((out_max + 63) & ~(size_t) 63);
	if (mode == M_SHM) {
		rv = fftd_buffer_create(c, (size_t) D * span, &buf);
		if (rv != FFTD_OK) {
			FAIL("fftd_buffer_create", rv);
		}
	}
	if (mode == M_STREAM
	    && (rv = fftd_stream_open(pl, 1, &st)) != FFTD_OK) {
		FAIL("fftd_stream_open", rv);
	}
	for (int i = 0; i < D; i++) {
		if (buf != NULL) {
			rs[i].in  = (float *) ((char *) fftd_buffer_data(buf)
                            + (size_t) i * span);
			rs[i].out = (float *) ((char *) rs[i].in
			    + ((in_max + 63) & ~(size_t) 63));
		} else if ((rs[i].out = malloc(out_max)) == NULL) {
			FAIL("malloc", FFTD_ENOMEM);
		}
	}
	sout = mode == M_STREAM ? malloc(out_max) : NULL;
	if (mode == M_STREAM && sout == NULL) {
		FAIL("malloc", FFTD_ENOMEM);
	}
	atomic_store(&s->running, 1);
	set_state(s, CS_RUN);
	uint64_t k = 0, oldest = 0;
	int      stop = 0;
	for (;;) {
		while (!stop && k - oldest < (uint64_t) D) {
			if (atomic_load(&sh->stop)) {
				stop = 1;
				set_state(s, CS_DRAIN);
				break;
			}
			int large = k % (uint64_t) sh->large_every
			    == (uint64_t) sh->large_every - 1;
			if (large && st != NULL) {
				// The stream's own request, one at a time.
				rv = fftd_stream_submit(
				    st, fftd_load_gen_input(gl, k));
				if (rv == FFTD_OK) {
					rv = fftd_stream_wait(st, sout, NULL);
				}
				check(s, gl, rv, sout, k);
				k++; // its ring slot stays empty
				continue;
			}
			req_slot            *r  = &rs[k % (uint64_t) D];
			const fftd_load_gen *g  = large ? gl : gs[k % NSMALL];
			const fftd_plan     *p  = large ? pl : ps[k % NSMALL];
			const float         *in = fftd_load_gen_input(g, k);
			if (buf != NULL) {
				memcpy(r->in, in, fftd_load_gen_in_bytes(g));
				in = r->in;
			}
			r->g = g;
			r->k = k;
			rv   = fftd_execute_async(
			      p, in, r->out, NULL, NULL, &r->req);
			if (rv != FFTD_OK) {
				r->req = NULL;
				note_bad(s, &s->refused,
				    "submit refused: %s (%.0f%.0f)",
				    fftd_err_name(rv), 0, 0);
				stop = 1;
				set_state(s, CS_DRAIN);
				break;
			}
			k++;
		}
		// Skip slots the stream path left empty.
		while (oldest < k && rs[oldest % (uint64_t) D].req == NULL) {
			oldest++;
		}
		if (oldest == k) {
			if (stop) {
				break;
			}
			continue;
		}
		req_slot *r = &rs[oldest % (uint64_t) D];
		int       w = fftd_request_wait(r->req);
		r->req      = NULL;
		check(s, r->g, w, r->out, r->k);
		oldest++;
	}
	rc = 0;
out:
	set_state(s, CS_CLOSE);
	for (int i = 0; i < D; i++) {
		if (rs[i].req != NULL) {
			(void) fftd_request_wait(rs[i].req);
		}
		if (buf == NULL) {
			free(rs[i].out);
		}
	}
	free(sout);
	fftd_stream_close(st);
	fftd_buffer_destroy(buf);
	fftd_plan_destroy(pl);
	for (int i = 0; i < NSMALL; i++) {
		fftd_plan_destroy(ps[i]);
		fftd_load_gen_free(gs[i]);
	}
	fftd_load_gen_free(gl);
	if (c != NULL) {
		fftd_client_close(c);
	}
	set_state(s, CS_EXIT);
	munmap(sh, sizeof(shared));
	return rc;
#undef FAIL
}

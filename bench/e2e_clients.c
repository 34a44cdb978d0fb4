// SPDX-License-Identifier: MIT
//
// e2e_clients.c — bench/e2e's 4 client processes (see e2e.h): each runs
// (d) or (e) on its own quarter of a case's batch in its own buffers, the
// repetitions started together on a barrier in a file all map; the figure
// is their aggregate throughput.

#include "e2e.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct shared_sync {
	pthread_barrier_t bar;
	int               fail[NCLIENTS];
	char              why[NCLIENTS][160];
	double            t0[NCLIENTS][MAX_REPS], t1[NCLIENTS][MAX_REPS];
} shared_sync;

// case_by_name is the case a child was told to run, or NULL.
static const bcase *
case_by_name(const char *name)
{
	for (int i = 0; i < NCASES; i++) {
		if (strcmp(e2e_cases[i].name, name) == 0) {
			return &e2e_cases[i];
		}
	}
	return NULL;
}

// child role "client": URL CASE BATCH MODE(shm|inline) REPS SYNCFILE INDEX
int
e2e_role_client(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "client role: %d arguments\n", argc);
		return 2;
	}
	const char  *url  = argv[0];
	const bcase *c    = case_by_name(argv[1]);
	int64_t      qb   = strtoll(argv[2], NULL, 10);
	int          shm  = strcmp(argv[3], "shm") == 0;
	int          reps = atoi(argv[4]);
	int          me   = atoi(argv[6]);
	int          fd   = open(argv[5], O_RDWR);
	if (fd < 0 || c == NULL || me < 0 || me >= NCLIENTS
	    || reps > MAX_REPS) {
		return 2;
	}
	shared_sync *sy = mmap(
	    NULL, sizeof(*sy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sy == MAP_FAILED) {
		return 2;
	}
	fftd_client   *cl = NULL;
	fftd_plan     *pl = NULL;
	fftd_buffer   *bi = NULL, *bo = NULL;
	void          *in = NULL, *out = NULL;
	fftd_plan_desc d;
	size_t         inb = e2e_case_in_per(c) * (size_t) qb,
	       outb        = e2e_case_out_per(c) * (size_t) qb;
	int rv             = fftd_client_open(&cl, url, 0);
	if (rv == FFTD_OK) {
		e2e_desc_for(c, qb, &d);
		rv = fftd_plan_create(cl, &d, &pl);
	}
	if (rv == FFTD_OK && shm) {
		rv = fftd_buffer_create(cl, inb, &bi);
		if (rv == FFTD_OK) {
			rv = fftd_buffer_create(cl, outb, &bo);
		}
		if (rv == FFTD_OK) {
			in  = fftd_buffer_data(bi);
			out = fftd_buffer_data(bo);
		}
	} else if (rv == FFTD_OK) {
		in  = e2e_xmalloc_touched(inb);
		out = e2e_xmalloc_touched(outb);
	}
	if (rv == FFTD_OK) {
		e2e_fill_input(c, in, qb, 1000 + (uint64_t) me);
		memset(out, 0, outb);
		rv = fftd_execute(pl, in, out); // warm-up
	}
	if (rv != FFTD_OK) {
		sy->fail[me] = 1;
		snprintf(
		    sy->why[me], sizeof(sy->why[me]), "%.150s", e2e_ferr(rv));
	}
	pthread_barrier_wait(&sy->bar);
	int anyfail = 0;
	for (int i = 0; i < NCLIENTS; i++) {
		anyfail |= sy->fail[i];
	}
	if (!anyfail) {
		for (int r = 0; r < reps; r++) {
			pthread_barrier_wait(&sy->bar);
			double t0 = fftd__mono_s();
			rv = sy->fail[me] ? FFTD_OK : fftd_execute(pl, in, out);
			double t1 = fftd__mono_s();
			if (rv != FFTD_OK && !sy->fail[me]) {
				sy->fail[me] = 1;
				snprintf(sy->why[me], sizeof(sy->why[me]),
				    "%.150s", e2e_ferr(rv));
			}
			sy->t0[me][r] = t0;
			sy->t1[me][r] = t1;
		}
	}
	if (shm) {
		fftd_buffer_destroy(bi);
		fftd_buffer_destroy(bo);
	} else {
		free(in);
		free(out);
	}
	fftd_plan_destroy(pl);
	fftd_client_close(cl);
	int failed = sy->fail[me];
	munmap(sy, sizeof(*sy));
	return failed ? 1 : 0;
}

// e2e_run_clients runs NCLIENTS client processes on quarters of a
// case's batch, shared memory (shm) or inline, and takes their aggregate
// throughput per repetition into m.
void
e2e_run_clients(bench *B, case_result *R, int shm, meas *m)
{
	if (R->plan_why[0]) {
		e2e_meas_set(m, -1, "unavailable: %s", R->plan_why);
		return;
	}
	if (shm && !B->shm_ok) {
		e2e_meas_set(m, -1, "unavailable: %s",
		    B->shm_why[0] ? B->shm_why : "no shared-memory buffers");
		return;
	}
	if (R->batch < NCLIENTS) {
		e2e_meas_set(m, -1, "batch %" PRId64 " < %d clients", R->batch,
		    NCLIENTS);
		return;
	}
	int64_t qb     = R->batch / NCLIENTS;
	char    path[] = "/tmp/fftd-e2e-sync-XXXXXX";
	int     fd     = mkstemp(path);
	if (fd < 0 || ftruncate(fd, sizeof(shared_sync)) != 0) {
		e2e_meas_set(m, -2, "sync file: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return;
	}
	shared_sync *sy = mmap(
	    NULL, sizeof(*sy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sy == MAP_FAILED) {
		e2e_meas_set(m, -2, "mmap: %s", strerror(errno));
		unlink(path);
		return;
	}
	memset(sy, 0, sizeof(*sy));
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sy->bar, &ba, NCLIENTS);
	pthread_barrierattr_destroy(&ba);

	char qs[32], rs[16];
	snprintf(qs, sizeof(qs), "%" PRId64, qb);
	snprintf(rs, sizeof(rs), "%d", B->reps);
	const char *args[] = { B->url, R->c->name, qs, shm ? "shm" : "inline",
		rs, path, NULL };
	int         codes[NCLIENTS];
	int         bad
	    = fftd_test_run_children(NCLIENTS, "client", args, 600000, codes);
	if (bad != 0) {
		char w[160] = "";
		for (int i = 0; i < NCLIENTS; i++) {
			if (sy->fail[i]) {
				snprintf(w, sizeof(w), "client %d: %s", i,
				    sy->why[i]);
				break;
			}
		}
		e2e_meas_set(m, shm ? -1 : -2, "%s: %s",
		    shm ? "unavailable" : "failed",
		    w[0] ? w : "a client process failed");
	} else {
		for (int r = 0; r < B->reps; r++) {
			double lo = INFINITY, hi = -INFINITY;
			for (int i = 0; i < NCLIENTS; i++) {
				lo = fmin(lo, sy->t0[i][r]);
				hi = fmax(hi, sy->t1[i][r]);
			}
			m->s[m->nrep++] = hi - lo;
		}
		e2e_meas_finish(
		    m, (size_t) qb * NCLIENTS * e2e_case_in_per(R->c));
	}
	pthread_barrier_destroy(&sy->bar);
	munmap(sy, sizeof(*sy));
	unlink(path);
}

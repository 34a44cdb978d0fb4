// SPDX-License-Identifier: MIT
//
// load_child.c — a load client process (see load.h): started by the run
// (load.c) in role FFTD_LOAD_ROLE, it maps the shared file, opens its
// client and plan, makes its inputs (load_gen.c), says it is ready, and in
// its phase runs as a realtime client (one request at a time at a fixed
// rate, latencies and stages recorded) or a batch client (depth requests
// in flight), checking and counting every answer in its slot.

#include "load_impl.h"
#include "cpu_slice.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// child_fail notes in the slot why the client gave up.
static void
child_fail(child *ch, const char *what, int rv)
{
	snprintf(ch->s->why, sizeof(ch->s->why), "%s: %.150s", what,
	    fftd__load_ferr(rv));
}

// bucket_of is the status bucket a status is counted in (the last one
// holds every code beyond the table).
static int
bucket_of(int st)
{
	return st >= 0 && st < FFTD_LOAD_NSTATUS - 1 ? st
	                                             : FFTD_LOAD_NSTATUS - 1;
}

// account records the answer st of request k whose output is out.
static int
account(child *ch, int st, const float *out, uint64_t k)
{
	slot *s     = ch->s;
	int   after = atomic_load(&s->marked) && k >= atomic_load(&s->mark);
	int   good  = 0;
	s->status[after][bucket_of(st)]++;
	if (st == FFTD_OK) {
		double e = fftd__load_rel_err(ch, out, k);
		if (e <= s->bound) {
			s->ok++;
			good = 1;
		} else {
			if (s->wrong == 0) {
				snprintf(s->why, sizeof(s->why),
				    "request %" PRIu64
				    " (factor %.0f): relative L2 error %.3g > "
				    "%.3g",
				    k, fftd__load_factor(k), e, s->bound);
			}
			s->wrong++;
			s->wrong_after_mark += after;
		}
		if (!(e <= s->max_err)) {
			s->max_err = e; // NaN sticks
		}
	} else {
		s->failed++;
	}
	atomic_fetch_add(&s->answered, 1);
	return good;
}

// maybe_mark answers the parent's mark request (SIGTERM run): a ping sent
// after the k requests already submitted is answered only once the daemon
// has read them.
static void
maybe_mark(child *ch, uint64_t k)
{
	slot *s = ch->s;
	if (!atomic_load(&ch->sh->mark_req) || atomic_load(&s->marked)) {
		return;
	}
	int rv = fftd_ping(ch->c, NULL);
	atomic_store(&s->mark, rv == FFTD_OK ? k : 0);
	atomic_store(&s->marked, 1);
}

// stop_status is whether a status means the daemon or the connection is
// gone, so that a realtime client stops.
static int
stop_status(int st)
{
	return st == FFTD_ECLOSED || st == FFTD_ESHUTDOWN
	    || st == FFTD_ECONNREFUSED || st == FFTD_ETIMEDOUT
	    || (st & FFTD_ERR_RANGE_MASK) == FFTD_ENNGERR;
}

// rt_exec runs one realtime request: through the client's stream
// (shared-memory slot; the input copied in, the result out, or both used
// in place: *outp then points into the slot) when it has one, else
// fftd_execute (inline). in is the slot itself when filled in place.
static int
rt_exec(child *ch, const float *in, const float **outp)
{
	*outp = ch->out[0];
	if (ch->st == NULL) {
		return fftd_execute(ch->p, in, ch->out[0]);
	}
	int rv = fftd_stream_submit(ch->st, in);
	if (rv != FFTD_OK) {
		return rv;
	}
	if (!ch->s->rt_in_place) {
		return fftd_stream_wait(ch->st, ch->out[0], NULL);
	}
	const void *o = NULL;
	rv            = fftd_stream_wait(ch->st, NULL, &o);
	if (rv == FFTD_OK) {
		*outp = o;
	}
	return rv;
}

// run_realtime sends one request per period (absolute deadlines; missed
// slots counted and skipped) until the run stops, recording each good
// answer's latency, and its stages on the stream path, in its phase.
static void
run_realtime(child *ch)
{
	shared  *sh     = ch->sh;
	slot    *s      = ch->s;
	uint64_t period = (uint64_t) (1e9 / s->rate_hz);
	uint64_t next   = fftd__mono_ns();
	uint64_t k      = 0;
	for (;;) {
		int ph = atomic_load(&sh->phase);
		if (ph == PH_STOP) {
			break;
		}
		maybe_mark(ch, k);
		struct timespec ts = { (time_t) (next / 1000000000ull),
			(long) (next % 1000000000ull) };
		while (
		    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
		    == EINTR) { }
		const float *in = fftd__load_input(ch, k);
		if (s->rt_in_place) {
			// The producer writes the slot: not part of the
			// latency, as for a pipeline filling it in place.
			float *slot_in = fftd_stream_input(ch->st);
			if (slot_in != NULL) {
				memcpy(slot_in, in, s->in_bytes);
				in = slot_in;
			}
		}
		int          steady0 = atomic_load(&sh->steady);
		uint64_t     t0      = fftd__mono_ns();
		const float *out     = NULL;
		atomic_fetch_add(&s->submitted, 1);
		int      rv      = rt_exec(ch, in, &out);
		uint64_t t1      = fftd__mono_ns();
		int      steady1 = atomic_load(&sh->steady);
		int      good    = account(ch, rv, out, k);
		k++;
		int b = ph == PH_REALTIME ? 0 : steady0 && steady1 ? 1 : -1;
		if (good && b >= 0 && s->nlat[b] < LAT_CAP) {
			lat_of(sh, ch->me, b)[s->nlat[b]++]
			    = (float) ((double) (t1 - t0) * 1e-3);
		}
		fftd_stream_times tm;
		if (good && b >= 0 && s->nstage[b] < STAGE_CAP && ch->st
		    && fftd_stream_last_times(ch->st, &tm) == FFTD_OK) {
			const int64_t e[STAGE_W + 1] = { (int64_t) t0,
				tm.submitted_ns, tm.received_ns, tm.started_ns,
				tm.finished_ns, tm.answered_ns, (int64_t) t1,
				(int64_t) t0 };
			float        *v              = stage_of(sh, ch->me, b)
			    + s->nstage[b]++ * STAGE_W;
			for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
				v[j] = (float) ((double) (e[j + 1] - e[j])
				    * 1e-3);
			}
			v[FFTD_LOAD_NSTAGES]
			    = (float) ((double) (t1 - t0) * 1e-3);
		}
		if (rv != FFTD_OK && stop_status(rv)) {
			break;
		}
		next += period;
		uint64_t now = fftd__mono_ns();
		if (next < now) {
			uint64_t skip = (now - next) / period + 1;
			s->missed += skip;
			next += skip * period;
		}
	}
}

// run_batch keeps depth requests in flight (fftd_execute_async) until the
// run stops or a submit is refused, then completes what is in flight.
static void
run_batch(child *ch)
{
	shared       *sh = ch->sh;
	slot         *s  = ch->s;
	int           D  = s->depth;
	fftd_request *req[FFTD_LOAD_MAX_DEPTH];
	uint64_t      k = 0, oldest = 0; // requests submitted, oldest in flight
	int           stop = 0;
	for (;;) {
		while (!stop && k - oldest < (uint64_t) D) {
			if (atomic_load(&sh->phase) == PH_STOP) {
				stop = 1;
				break;
			}
			maybe_mark(ch, k);
			int sl = (int) (k % (uint64_t) D);
			int rv
			    = fftd_execute_async(ch->p, fftd__load_input(ch, k),
			        ch->out[sl], NULL, NULL, &req[sl]);
			if (rv != FFTD_OK) {
				if (s->refused++ == 0) {
					s->refused_status = rv;
				}
				stop = 1;
				break;
			}
			k++;
			atomic_store(&s->submitted, k);
		}
		if (oldest == k) {
			break;
		}
		int sl = (int) (oldest % (uint64_t) D);
		int st = fftd_request_wait(req[sl]);
		account(ch, st, ch->out[sl], oldest);
		oldest++;
	}
}

// fftd_load_cpu_list parses a CPU list such as "0-3,6" into a cpu_set_t
// (load.h).
int
fftd_load_cpu_list(const char *list, void *set)
{
	cpu_set_t *cs = set;
	CPU_ZERO(cs);
	const char *p = list;
	while (*p != '\0') {
		char *end;
		long  a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0) {
			return -1;
		}
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a) {
				return -1;
			}
			p = end;
		}
		if (b >= CPU_SETSIZE) {
			return -1;
		}
		for (long c = a; c <= b; c++) {
			CPU_SET((int) c, cs);
		}
		if (*p == ',') {
			p++;
		} else if (*p != '\0') {
			return -1;
		}
	}
	return CPU_COUNT(cs);
}

// child_main is a client's life: affinity and nice value, client, plan,
// buffers, inputs, stream, one checked warm-up execution; then ready, and
// its phase's loop. Returns 0, or 1 with why in the slot.
static int
child_main(child *ch)
{
	shared *sh = ch->sh;
	slot   *s  = ch->s;
	// Lowering one's own priority needs no privilege; a failure only
	// leaves the batch client as urgent as the others.
	if (!s->realtime && s->batch_nice > 0) {
		(void) setpriority(PRIO_PROCESS, 0, s->batch_nice);
	}
	// Before libfftd starts its threads, which inherit the mask.
	cpu_set_t cpus;
	if (s->batch_cpus[0] != '\0'
	    && (fftd_load_cpu_list(s->batch_cpus, &cpus) <= 0
	        || sched_setaffinity(0, sizeof(cpus), &cpus) != 0)) {
		child_fail(ch, "sched_setaffinity", FFTD_EINVAL);
		return 1;
	}
	int rv = fftd_client_open(&ch->c, sh->url, sh->timeout_ms);
	if (rv != FFTD_OK) {
		child_fail(ch, "fftd_client_open", rv);
		return 1;
	}
	if (s->realtime && s->rt_slice_us > 0) {
		// libfftd's threads exist now; a kernel without custom slices
		// ignores this.
		(void) fftd__set_slice_all((uint64_t) s->rt_slice_us * 1000);
	}
	fftd_plan_desc d;
	fftd_plan_desc_init(&d, 1, &s->n, s->kind, FFTD_F32);
	d.batch    = s->batch;
	d.priority = s->realtime ? FFTD_PRIORITY_REALTIME : FFTD_PRIORITY_BATCH;
	if ((rv = fftd_plan_create(ch->c, &d, &ch->p)) != FFTD_OK) {
		child_fail(ch, "fftd_plan_create", rv);
		return 1;
	}
	snprintf(s->algorithm, sizeof(s->algorithm), "%s",
	    fftd_plan_algorithm(ch->p));
	s->in_bytes  = fftd_plan_input_bytes(ch->p);
	s->out_bytes = fftd_plan_output_bytes(ch->p);
	ch->nin      = s->in_bytes / sizeof(float);
	ch->nout     = s->out_bytes / sizeof(float);
	s->bound     = 16.0 * ldexp(1.0, -24) * fmax(1.0, log2((double) s->n));
	ch->x        = malloc(s->in_bytes);
	ch->ref      = malloc(s->out_bytes);
	int          nout     = s->realtime ? 1 : s->depth;
	int          bad      = ch->x == NULL || ch->ref == NULL;
	fftd_buffer *shm      = NULL; // kept in ch->shm once made
	size_t       in_span  = (s->in_bytes + 63) & ~(size_t) 63;
	size_t       out_span = (s->out_bytes + 63) & ~(size_t) 63;
	if (!s->realtime && s->batch_shm
	    && fftd_buffer_create(
	           ch->c, NFACTORS * in_span + (size_t) nout * out_span, &shm)
	        != FFTD_OK) {
		shm = NULL; // not ipc://: plain memory after all
	}
	ch->shm = shm;
	for (int i = 0; i < NFACTORS; i++) {
		// In a shared buffer the daemon reads the arrays in place and
		// writes the results there: no copy on either side.
		ch->in[i] = shm ? (float *) ((char *) fftd_buffer_data(shm)
		                + (size_t) i * in_span)
		                : malloc(s->in_bytes);
		bad |= ch->in[i] == NULL;
	}
	for (int i = 0; i < nout; i++) {
		ch->out[i] = shm ? (float *) ((char *) fftd_buffer_data(shm)
		                 + NFACTORS * in_span + (size_t) i * out_span)
		                 : calloc(1, s->out_bytes);
		bad |= ch->out[i] == NULL;
	}
	if (bad) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		return 1;
	}
	if (fftd__load_make_inputs(ch) != 0) {
		snprintf(s->why, sizeof(s->why), "FFTW reference failed");
		return 1;
	}
	// One warm-up execution (plans the daemon's side), checked; not
	// counted.
	if (s->realtime && s->rt_stream) {
		rv = fftd_stream_open(ch->p, 1, &ch->st);
		if (rv != FFTD_OK && rv != FFTD_EUNSUPPORTED) {
			child_fail(ch, "fftd_stream_open", rv);
			return 1;
		}
		s->rt_stream = rv == FFTD_OK; // tcp://: inline after all
		if (s->rt_stream && s->rt_spin_us > 0) {
			rv = fftd_stream_set_spin(
			    ch->st, (uint32_t) s->rt_spin_us);
			if (rv != FFTD_OK && rv != FFTD_EUNSUPPORTED) {
				child_fail(ch, "fftd_stream_set_spin", rv);
				return 1;
			}
		}
	}
	s->rt_in_place    = s->rt_in_place && s->rt_stream;
	const float *warm = ch->out[0];
	rv                = s->realtime
	                   ? rt_exec(ch, fftd__load_input(ch, 0), &warm)
	                   : fftd_execute(ch->p, fftd__load_input(ch, 0), ch->out[0]);
	if (rv != FFTD_OK) {
		child_fail(ch, "warm-up fftd_execute", rv);
		return 1;
	}
	double e = fftd__load_rel_err(ch, warm, 0);
	if (!(e <= s->bound)) {
		snprintf(s->why, sizeof(s->why),
		    "warm-up result wrong: relative L2 error %.3g > %.3g", e,
		    s->bound);
		return 1;
	}
	memset(ch->out[0], 0, s->out_bytes);
	atomic_store(&s->state, ST_READY);

	int want = s->realtime ? PH_REALTIME : PH_ALL;
	while (atomic_load(&sh->phase) < want) {
		fftd_test_sleep_ms(1);
	}
	if (atomic_load(&sh->phase) != PH_STOP) {
		if (s->realtime) {
			run_realtime(ch);
		} else {
			run_batch(ch);
		}
	}
	return 0;
}

// fftd_load_role is the client process (load.h): PATH of the shared file
// and the client's INDEX.
int
fftd_load_role(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "load-client: PATH INDEX\n");
		return 2;
	}
	int         fd = open(argv[0], O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(
		    stderr, "load-client: %s: %s\n", argv[0], strerror(errno));
		return 2;
	}
	shared *sh = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	close(fd);
	int me = atoi(argv[1]);
	if (sh == MAP_FAILED || me < 0 || me >= sh->nclients) {
		return 2;
	}
	child ch  = { .sh = sh, .s = &sh->slot[me], .me = me };
	ch.s->pid = getpid();
	int rc    = child_main(&ch);
	if (ch.shm == NULL) {
		for (int i = 0; i < FFTD_LOAD_MAX_DEPTH; i++) {
			free(ch.out[i]);
		}
		for (int i = 0; i < NFACTORS; i++) {
			free(ch.in[i]);
		}
	}
	free(ch.x);
	free(ch.ref);
	fftd_stream_close(ch.st);
	fftd_buffer_destroy(ch.shm);
	fftd_plan_destroy(ch.p);
	if (ch.c != NULL) {
		fftd_client_close(ch.c);
	}
	atomic_store(&ch.s->state, rc == 0 ? ST_DONE : ST_FAILED);
	munmap(sh, (size_t) st.st_size);
	return rc;
}

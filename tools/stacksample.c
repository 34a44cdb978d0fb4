// SPDX-License-Identifier: MIT
//
// stacksample.c — a diagnostic for issue 14's ping tail, not part of fftd:
// an LD_PRELOAD library that samples every thread's stack of a process
// named fftd (every STACKS_US, default 1000 us, through SIGPROF and
// backtrace()) into a ring of the last 30 s, and at exit writes the samples
// that fall inside the slow pings of bench/soak --ping-log
// ($FFTD_STACKS_PINGLOG, pings whose way to the daemon took over
// $FFTD_STACKS_SLOW_US, default 1500) to $FFTD_STACKS_OUT, with each frame
// as module+offset (and its dynamic symbol when there is one), for
// addr2line. Other processes that load it are left alone.
//
//   cc -shared -fPIC -O2 -o stacksample.so tools/stacksample.c -ldl -pthread
//   LD_PRELOAD=$PWD/stacksample.so FFTD_STACKS_OUT=... FFTD_STACKS_PINGLOG=...
//       bench/soak ... --ping-log ...

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 20
#define RING (1u << 21) // samples kept (~40 s of 50 threads at 1 ms)

typedef struct sample {
	uint64_t t_ns;
	int      tid, n;
	char     comm[16];
	void    *pc[DEPTH];
} sample;

static sample          *ring;
static _Atomic uint64_t next_slot;
static atomic_int       running;
static pthread_t        sampler;
static int              self_tid;

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void
on_prof(int sig)
{
	(void) sig;
	int      saved = errno;
	uint64_t k     = atomic_fetch_add(&next_slot, 1);
	sample  *s     = &ring[k % RING];
	s->t_ns        = 0; // not yet whole
	s->tid         = (int) syscall(SYS_gettid);
	prctl(PR_GET_NAME, s->comm);
	s->n    = backtrace(s->pc, DEPTH);
	s->t_ns = now_ns();
	errno   = saved;
}

static void *
sample_main(void *arg)
{
	(void) arg;
	self_tid        = (int) syscall(SYS_gettid);
	const char *e   = getenv("STACKS_US");
	long        us  = e ? atol(e) : 1000;
	int         pid = getpid();
	while (atomic_load(&running)) {
		DIR *d = opendir("/proc/self/task");
		for (struct dirent *t; d && (t = readdir(d)) != NULL;) {
			int tid = atoi(t->d_name);
			if (tid > 0 && tid != self_tid) {
				syscall(SYS_tgkill, pid, tid, SIGPROF);
			}
		}
		if (d) {
			closedir(d);
		}
		struct timespec ts = { 0, us * 1000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

__attribute__((constructor)) static void
start(void)
{
	char  comm[32] = "";
	FILE *f        = fopen("/proc/self/comm", "r");
	if (f) {
		if (!fgets(comm, sizeof(comm), f)) {
			comm[0] = '\0';
		}
		fclose(f);
	}
	if (strcmp(comm, "fftd\n") != 0 || getenv("FFTD_STACKS_OUT") == NULL) {
		return;
	}
	ring = calloc(RING, sizeof(sample));
	if (ring == NULL) {
		return;
	}
	void *warm[4];
	backtrace(warm, 4); // loads libgcc_s now, not in a handler
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags   = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	atomic_store(&running, 1);
	pthread_create(&sampler, NULL, sample_main, NULL);
}

static void
frame(FILE *o, void *pc)
{
	Dl_info di;
	if (dladdr(pc, &di) && di.dli_fname) {
		const char *b = strrchr(di.dli_fname, '/');
		fprintf(o, " %s+0x%lx", b ? b + 1 : di.dli_fname,
		    (unsigned long) ((char *) pc - (char *) di.dli_fbase));
		if (di.dli_sname) {
			fprintf(o, "(%s)", di.dli_sname);
		}
	} else {
		fprintf(o, " %p", pc);
	}
}

__attribute__((destructor)) static void
stop(void)
{
	if (!atomic_load(&running)) {
		return;
	}
	atomic_store(&running, 0);
	pthread_join(sampler, NULL);
	signal(SIGPROF, SIG_IGN);
	const char *outp = getenv("FFTD_STACKS_OUT");
	const char *logp = getenv("FFTD_STACKS_PINGLOG");
	const char *sl   = getenv("FFTD_STACKS_SLOW_US");
	double      slow = sl ? atof(sl) : 1500;
	FILE       *o    = fopen(outp, "w");
	FILE       *pl   = logp ? fopen(logp, "r") : NULL;
	if (o == NULL) {
		return;
	}
	uint64_t total = atomic_load(&next_slot);
	uint64_t first = total > RING ? total - RING : 0;
	fprintf(o, "# %llu samples, the last %llu kept\n",
	    (unsigned long long) total, (unsigned long long) (total - first));
	char line[256];
	while (pl && fgets(line, sizeof(line), pl)) {
		unsigned long long sent;
		double             tot, to;
		if (line[0] == '#'
		    || sscanf(line, "%llu %lf %lf", &sent, &tot, &to) != 3
		    || !(to > slow)) {
			continue;
		}
		uint64_t lo = sent, hi = sent + (uint64_t) (to * 1e3);
		fprintf(o, "PING %llu %.0f\n", sent, to);
		for (uint64_t k = first; k < total; k++) {
			const sample *s = &ring[k % RING];
			if (s->t_ns < lo || s->t_ns > hi) {
				continue;
			}
			fprintf(o, "S %.3f %d %s",
			    (double) (s->t_ns - lo) / 1e3, s->tid, s->comm);
			for (int i = 2; i < s->n; i++) { // 0, 1: the handler
				frame(o, s->pc[i]);
			}
			fputc('\n', o);
		}
	}
	if (pl) {
		fclose(pl);
	}
	fclose(o);
}

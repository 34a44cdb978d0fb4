// SPDX-License-Identifier: MIT
//
// cpu_slice.c — a short EEVDF CPU time slice for latency-bound threads
// (cpu_slice.h). Moved from common/slice.c: the daemon asks for it
// (server.slice_us, main.c); the load engine (tests/util/load.c) links
// this file too, for its realtime client threads.

#include "cpu_slice.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc
// before 2.41 does not declare it.
struct fftd__sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t  sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime; // SCHED_OTHER: the slice, ns (Linux 6.12+)
	uint64_t sched_deadline;
	uint64_t sched_period;
};

int
fftd__set_slice(pid_t tid, uint64_t ns)
{
#ifdef SYS_sched_setattr
	errno    = 0;
	int nice = getpriority(PRIO_PROCESS, (id_t) tid);
	if (nice == -1 && errno != 0) {
		return -errno;
	}
	struct fftd__sched_attr a;
	memset(&a, 0, sizeof(a));
	a.size          = sizeof(a);
	a.sched_policy  = SCHED_OTHER;
	a.sched_nice    = nice; // unchanged: raising it needs privilege
	a.sched_runtime = ns;
	if (syscall(SYS_sched_setattr, tid, &a, 0) != 0) {
		return -errno;
	}
	return 0;
#else
	(void) tid;
	(void) ns;
	return -ENOSYS;
#endif
}

int
fftd__set_slice_all(uint64_t ns)
{
	DIR *d = opendir("/proc/self/task");
	if (d == NULL) {
		int rv = fftd__set_slice(0, ns);
		return rv == 0 ? 1 : rv;
	}
	int            n = 0, first = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long  tid = strtol(e->d_name, &end, 10);
		if (end == e->d_name || *end != '\0') {
			continue; // "." and ".."
		}
		int rv = fftd__set_slice((pid_t) tid, ns);
		if (rv == 0) {
			n++;
		} else if (first == 0) {
			first = rv;
		}
	}
	closedir(d);
	return n > 0 ? n : first;
}

// SPDX-License-Identifier: MIT
//
// cpu_slice.h — PRIVATE to fftd (the daemon's main.c; the load engine and
// test_sched link it too). Asking the kernel for a short CPU time slice.
//
// On a host whose CPUs are all busy, a thread that wakes up (a request
// arrived, the device finished) waits for a CPU. Linux's EEVDF scheduler
// (6.6+) lets the running thread finish its slice first, 3-4 ms by default
// on a 16-CPU host, whatever the nice values. Since Linux 6.12 a thread
// may ask for a shorter slice (sched_setattr(2), SCHED_OTHER with
// sched_runtime, 0.1-100 ms, no privilege needed); a woken thread with a
// shorter slice than the running one preempts it. Older kernels accept
// and ignore the request.

#ifndef FFTD_DAEMON_CPU_SLICE_H
#define FFTD_DAEMON_CPU_SLICE_H

#include <stdint.h>
#include <sys/types.h>

// fftd__set_slice asks for a slice of ns nanoseconds for thread tid (0:
// the calling thread), keeping SCHED_OTHER at its current nice value.
// Returns 0, or -errno (ENOSYS where sched_setattr does not exist).
int fftd__set_slice(pid_t tid, uint64_t ns);

// fftd__set_slice_all does that for every thread of this process now
// (threads started later get the kernel's default). Returns the number of
// threads set, or -errno of the first failure when none could be.
int fftd__set_slice_all(uint64_t ns);

#endif // FFTD_DAEMON_CPU_SLICE_H

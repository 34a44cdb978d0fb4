// SPDX-License-Identifier: MIT
//
// busypoll.h — PRIVATE to fftd (daemon and library). Busy polling: a thread
// that would sleep until a peer's next message instead polls for it a
// short while first, as Linux's SO_BUSY_POLL (net.core.busy_poll) and
// io_uring's SQPOLL idle time do. A sleeping thread's wake-up crosses the
// scheduler and an inter-processor interrupt: on the lent H200 host each
// hand-off of a bank call cost 14-45 us (bench/README.md, stop 32), three
// per call, where polling takes one or two. The price is a CPU busy while
// requests keep coming, and for the window after the last; so it is on by
// default only where the host has CPUs to spare, as CUDA's
// cudaDeviceScheduleAuto spins only when each context can have a core to
// itself.

#ifndef FFTD_COMMON_BUSYPOLL_H
#define FFTD_COMMON_BUSYPOLL_H

#include <stdint.h>
#include <unistd.h>

// FFTD__BUSY_POLL_AUTO_US is the window where it is on by default: longer
// than a bank call of 1,024 templates at 2^17 samples on the H200 (~1.1
// ms), so that a client calling back to back never finds its peer asleep.
#define FFTD__BUSY_POLL_AUTO_US 2000
// FFTD__BUSY_POLL_AUTO_CPUS: at least this many online CPUs for that, and
// two per thread that polls.
#define FFTD__BUSY_POLL_AUTO_CPUS 8
// FFTD__BUSY_POLL_MAX_US bounds a configured window (0.1 s).
#define FFTD__BUSY_POLL_MAX_US 100000

// fftd__busy_poll_rule_us is the default window, us, for a process of
// `threads` polling threads on a host of `cpus` online CPUs:
// FFTD__BUSY_POLL_AUTO_US with FFTD__BUSY_POLL_AUTO_CPUS CPUs or more and
// two per such thread, else 0 (off).
static inline int64_t
fftd__busy_poll_rule_us(long cpus, int threads)
{
	return cpus >= FFTD__BUSY_POLL_AUTO_CPUS && cpus >= 2L * threads
	    ? FFTD__BUSY_POLL_AUTO_US
	    : 0;
}

// fftd__busy_poll_auto_us is that rule on this host.
static inline int64_t
fftd__busy_poll_auto_us(int threads)
{
	return fftd__busy_poll_rule_us(sysconf(_SC_NPROCESSORS_ONLN), threads);
}

// fftd__cpu_relax tells the CPU that this is a polling loop (x86 PAUSE,
// arm64 YIELD): the sibling hyper-thread gets the core's resources.
static inline void
fftd__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif // FFTD_COMMON_BUSYPOLL_H

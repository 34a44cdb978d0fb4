// SPDX-License-Identifier: MIT
//
// probe.h — PRIVATE to fftd's integration and GPU tests. What a test sees
// of a running daemon from outside: its open descriptors and memfd
// mappings (/proc), and its statistics settling to expected counts, for
// the tests that check that nothing leaks (test_peer_faults,
// test_robustness_clients, test_shm_*).

#ifndef FFTD_TESTS_PROBE_H
#define FFTD_TESTS_PROBE_H

#include <stdint.h>
#include <sys/types.h>

#include "fftd.h"

// FFTD_TEST_MEMFD_NAME is the name of libfftd's buffer memfds
// (client/buffer.c).
#define FFTD_TEST_MEMFD_NAME "fftd-buffer"

// fftd_test_open_fds counts the open descriptors of process pid, or -1.
int fftd_test_open_fds(pid_t pid);

// fftd_test_seqpacket_fds lists this process's SOCK_SEQPACKET sockets
// (stream and bank channels: nothing else in the tests makes one) into fds
// (at most max; fds may be NULL when max is 0); returns how many there
// are.
int fftd_test_seqpacket_fds(int *fds, int max);

// fftd_test_open_fds_steady is fftd_test_open_fds once the count has held
// for 5 samples 20 ms apart (at most 3 s; then the last count): a leak
// check's baseline, which must not count a descriptor that an earlier
// test's connection or request is still closing (the settled count then
// fell below it).
int fftd_test_open_fds_steady(pid_t pid);

// fftd_test_count_memfd counts the mappings of memfds named `name` in
// process pid (lines of /proc/PID/maps naming "memfd:NAME"), or -1.
int fftd_test_count_memfd(pid_t pid, const char *name);

// fftd_test_wait_stats waits (at most timeout_ms) until the daemon, asked
// through c, reports `sessions` sessions and `plans` plans; returns 0 or
// -1 (printing what it saw).
int fftd_test_wait_stats(
    fftd_client *c, uint64_t sessions, uint64_t plans, int timeout_ms);

// fftd_test_daemon_settles waits (at most timeout_ms) until daemon pid
// maps `maps` libfftd memfds, holds `fds` descriptors (unless fds < 0)
// and, asked through c, reports `sessions` sessions. Returns 0 or -1
// (printing what it saw last).
int fftd_test_daemon_settles(pid_t pid, int maps, int fds, fftd_client *c,
    uint64_t sessions, int timeout_ms);

// fftd_test_my_client_stats stores in *out the daemon's statistics for
// this process's client c (its entry of fftd_get_client_stats with this
// pid and the program's name: raw test connections of the same process
// have other names). Returns 0, or -1 when the call fails or no entry
// matches.
int fftd_test_my_client_stats(fftd_client *c, fftd_client_stats *out);

#endif // FFTD_TESTS_PROBE_H

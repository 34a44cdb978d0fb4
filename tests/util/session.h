// SPDX-License-Identifier: MIT
//
// session.h — PRIVATE to fftd's tests. A daemon with a client on it, the
// fixture most integration and GPU suites start from.

#ifndef FFTD_TESTS_SESSION_H
#define FFTD_TESTS_SESSION_H

#include "../../bench/lib/daemon.h"
#include "fftd.h"

// fftd_test_session_start starts the daemon (fftd_test_daemon_start with
// config and args) and opens *cp on it with timeout_ms. Returns 0, or -1
// after printing why, with the daemon stopped again.
int fftd_test_session_start(fftd_test_daemon *d, const char *config,
    const char *const *args, int timeout_ms, fftd_client **cp);

// fftd_test_session_stop closes *cp (if open; it becomes NULL) and stops
// the daemon if it runs. Returns the daemon's exit status
// (fftd_test_daemon_wait), 0 when it was not running.
int fftd_test_session_stop(fftd_test_daemon *d, fftd_client **cp);

#endif // FFTD_TESTS_SESSION_H

// SPDX-License-Identifier: MIT
//
// fixture.h — PRIVATE to fftd's integration and GPU tests. The one setup
// and teardown of a test program's daemons: a program describes the
// daemons its group runs against (its own fftd_test_daemon and
// fftd_client variables, each daemon's config and arguments) in one
// fftd_test_fixture and runs its tests with fftd_test_fixture_run; the
// group setup starts every daemon on a fresh socket and opens a client on
// each, the teardown closes and stops them. Hooks let a program add what
// is its own (certificates, a port, a client on a URL list, buffers).
// Also the shared session helpers (a daemon with a client on it) that
// tests starting daemons of their own use, and fftd_test_local_teardown,
// which stops a test's own daemon if a failed assertion left it running.
//
// Include after <cmocka.h>.

#ifndef FFTD_TESTS_FIXTURE_H
#define FFTD_TESTS_FIXTURE_H

#include <stddef.h>

#include "../../bench/lib/daemon.h"
#include "fftd.h"

// FFTD_TEST_FIXTURE_MAX is how many daemons one fixture starts.
#define FFTD_TEST_FIXTURE_MAX 2

// fftd_test_fixture_daemon is one daemon of a fixture: where the test
// keeps it and its client, and how it starts.
typedef struct fftd_test_fixture_daemon {
	fftd_test_daemon  *d;      // the test's daemon (NULL: no daemon here)
	fftd_client      **c;      // where its client goes (NULL: none)
	const char        *config; // its fftd.conf text (NULL: none)
	const char *const *args;   // its extra arguments (NULL: none)
} fftd_test_fixture_daemon;

// fftd_test_fixture is what a test program's group runs against.
typedef struct fftd_test_fixture {
	fftd_test_fixture_daemon daemon[FFTD_TEST_FIXTURE_MAX];
	int                      timeout_ms; // the clients' timeout
	// skip_reason: non-NULL, nothing starts (every test reports itself
	// skipped; GPU tests without a GPU)
	const char *skip_reason;
	// check_exit: the teardown fails unless every daemon exits 0
	int check_exit;
	// per_test: the daemons start and stop around each test that names
	// fftd_test_setup and fftd_test_teardown, not around the group
	int per_test;
	// local: a test's own daemon, stopped by fftd_test_local_teardown
	fftd_test_daemon *local;
	// Hooks, each optional: before the daemons start (ports,
	// certificates, config text); once they answer and the clients are
	// open (0 or -1); before the clients close; after the daemons stopped.
	int (*before_start)(void);
	int (*after_start)(void);
	void (*before_stop)(void);
	void (*after_stop)(void);
} fftd_test_fixture;

// fftd_test_fixture_run runs the n tests as the cmocka group name against
// fixture f (which must outlive the call): the daemons start before the
// first test and stop after the last (with f->per_test, around each test
// that names fftd_test_setup and fftd_test_teardown instead). Applies
// FFTD_TEST_FILTER (a cmocka test filter) when it is set. Returns cmocka's
// result. Tests keep their own state pointers: the fixture sets none.
int fftd_test_fixture_run(const char *name, const struct CMUnitTest *tests,
    size_t n, fftd_test_fixture *f);

// fftd_test_run_group is fftd_test_fixture_run for an array of tests.
#define fftd_test_run_group(name, tests, f)                                    \
	fftd_test_fixture_run(                                                 \
	    name, tests, sizeof(tests) / sizeof((tests)[0]), f)

// fftd_test_setup starts the running fixture's daemons and opens their
// clients (a cmocka setup; the group's, or a test's with per_test).
// Returns 0, or -1 after printing why, with what it started stopped again.
int fftd_test_setup(void **state);

// fftd_test_teardown closes the clients and stops the daemons (a cmocka
// teardown). Returns 0, or -1 with check_exit when a daemon did not exit 0.
int fftd_test_teardown(void **state);

// fftd_test_local_teardown stops the fixture's `local` daemon if a failed
// assertion left it running (a cmocka teardown).
int fftd_test_local_teardown(void **state);

// fftd_test_need_daemon asserts that the fixture's first daemon runs and
// its client is open (a test that needs the group's daemon).
void fftd_test_need_daemon(void);

// fftd_test_session_start starts the daemon (fftd_test_daemon_start with
// config and args) and opens *cp on it with timeout_ms. Returns 0, or -1
// after printing why, with the daemon stopped again.
int fftd_test_session_start(fftd_test_daemon *d, const char *config,
    const char *const *args, int timeout_ms, fftd_client **cp);

// fftd_test_session_stop closes *cp (if open; it becomes NULL) and stops
// the daemon if it runs. Returns the daemon's exit status
// (fftd_test_daemon_wait), 0 when it was not running.
int fftd_test_session_stop(fftd_test_daemon *d, fftd_client **cp);

#endif // FFTD_TESTS_FIXTURE_H

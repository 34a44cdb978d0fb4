// SPDX-License-Identifier: MIT
//
// fixture.c — the test programs' one setup and teardown of their daemons,
// and a daemon with a client on it (see fixture.h).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

// running is the fixture of the group fftd_test_fixture_run runs: cmocka's
// setups take no argument of the caller's, and a test program runs one
// group.
static fftd_test_fixture *running;

// fftd_test_session_start starts a daemon and opens a client on it
// (fixture.h).
int
fftd_test_session_start(fftd_test_daemon *d, const char *config,
    const char *const *args, int timeout_ms, fftd_client **cp)
{
	*cp = NULL;
	if (fftd_test_daemon_start(d, config, args) != 0) {
		return -1;
	}
	int rv = fftd_client_open(cp, d->url, timeout_ms);
	if (rv != FFTD_OK) {
		fprintf(stderr, "fftd_client_open: %s (%s)\n",
		    fftd_err_name(rv), fftd_last_error());
		*cp = NULL;
		fftd_test_daemon_stop(d);
		return -1;
	}
	return 0;
}

// fftd_test_session_stop closes the client and stops the daemon.
int
fftd_test_session_stop(fftd_test_daemon *d, fftd_client **cp)
{
	if (*cp != NULL) {
		fftd_client_close(*cp);
		*cp = NULL;
	}
	return d->pid != 0 ? fftd_test_daemon_stop(d) : 0;
}

// stop_all closes the fixture's clients, then stops its daemons that run.
// Returns -1 if a daemon did not exit 0, else 0.
static int
stop_all(fftd_test_fixture *f)
{
	int bad = 0;
	for (int i = 0; i < FFTD_TEST_FIXTURE_MAX; i++) {
		fftd_test_fixture_daemon *fd = &f->daemon[i];
		if (fd->c != NULL && *fd->c != NULL) {
			fftd_client_close(*fd->c);
			*fd->c = NULL;
		}
	}
	for (int i = 0; i < FFTD_TEST_FIXTURE_MAX; i++) {
		fftd_test_fixture_daemon *fd = &f->daemon[i];
		if (fd->d != NULL && fd->d->pid != 0
		    && fftd_test_daemon_stop(fd->d) != 0) {
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

// fftd_test_setup starts the running fixture's daemons and clients
// (fixture.h).
int
fftd_test_setup(void **state)
{
	(void) state;
	fftd_test_fixture *f = running;
	if (f == NULL || f->skip_reason != NULL) {
		return 0;
	}
	if (f->before_start != NULL && f->before_start() != 0) {
		return -1;
	}
	for (int i = 0; i < FFTD_TEST_FIXTURE_MAX; i++) {
		fftd_test_fixture_daemon *fd = &f->daemon[i];
		if (fd->d == NULL) {
			continue;
		}
		int rv = fd->c != NULL
		    ? fftd_test_session_start(
		        fd->d, fd->config, fd->args, f->timeout_ms, fd->c)
		    : fftd_test_daemon_start(fd->d, fd->config, fd->args);
		if (rv != 0) {
			(void) stop_all(f);
			return -1;
		}
	}
	if (f->after_start != NULL && f->after_start() != 0) {
		if (f->before_stop != NULL) {
			f->before_stop();
		}
		(void) stop_all(f);
		return -1;
	}
	return 0;
}

// fftd_test_teardown closes the clients and stops the daemons.
int
fftd_test_teardown(void **state)
{
	(void) state;
	fftd_test_fixture *f = running;
	if (f == NULL) {
		return 0;
	}
	if (f->before_stop != NULL) {
		f->before_stop();
	}
	int rv = stop_all(f);
	if (f->after_stop != NULL) {
		f->after_stop();
	}
	return f->check_exit ? rv : 0;
}

// fftd_test_local_teardown stops a test's own daemon that
// still runs.
int
fftd_test_local_teardown(void **state)
{
	(void) state;
	if (running != NULL && running->local != NULL
	    && running->local->pid != 0) {
		fftd_test_daemon_stop(running->local);
	}
	return 0;
}

// fftd_test_need_daemon asserts the group's daemon runs with
// its client open.
void
fftd_test_need_daemon(void)
{
	assert_non_null(running);
	fftd_test_fixture_daemon *fd = &running->daemon[0];
	assert_non_null(fd->d);
	assert_true(fd->c == NULL || *fd->c != NULL);
	assert_true(fftd_test_daemon_alive(fd->d));
}

// fftd_test_fixture_run runs a group against a fixture
// (fixture.h).
int
fftd_test_fixture_run(const char *name, const struct CMUnitTest *tests,
    size_t n, fftd_test_fixture *f)
{
	running            = f;
	const char *filter = getenv("FFTD_TEST_FILTER");
	if (filter != NULL) {
		cmocka_set_test_filter(filter);
	}
	int rv  = _cmocka_run_group_tests(name, tests, n,
            f->per_test ? NULL : fftd_test_setup,
            f->per_test ? NULL : fftd_test_teardown);
	running = NULL;
	return rv;
}

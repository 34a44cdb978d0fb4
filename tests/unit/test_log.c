// SPDX-License-Identifier: MIT
//
// test_log.c — the daemon's logging (daemon/log.c): stderr lines carry a
// timestamp, the level and the structured fields as key=value; levels above
// the set one are dropped; JOURNAL_STREAM that does not name stderr keeps
// stderr lines; JOURNAL_STREAM naming stderr sends entries to journald, and
// where journald is absent (no /run/systemd/journal/socket, as in CI) falls
// back to "<N>message" lines that the journal would read.

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

// capture runs fn with stderr redirected to a temporary file and returns
// what was written (malloc'd), with JOURNAL_STREAM as given (NULL: unset;
// "self": the temporary file's own dev:ino).
static char *
capture(void (*fn)(void), const char *journal)
{
	char path[] = "/tmp/fftd-log-XXXXXX";
	int  fd     = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	if (journal == NULL) {
		unsetenv("JOURNAL_STREAM");
	} else if (strcmp(journal, "self") == 0) {
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		char v[64];
		snprintf(v, sizeof(v), "%llu:%llu",
		    (unsigned long long) st.st_dev,
		    (unsigned long long) st.st_ino);
		setenv("JOURNAL_STREAM", v, 1);
	} else {
		setenv("JOURNAL_STREAM", journal, 1);
	}
	fftd__log_reset();
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	fftd__log_reset();
	off_t n   = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t) n + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t) n, 0), n);
	close(fd);
	return buf;
}

static void
emit(void)
{
	fftd__log_set_level(FFTD_LOG_INFO);
	const char *const fields[]
	    = { "FFTD_CLIENT=7", "FFTD_CLIENT_PID=42", NULL };
	fftd__log_fields(FFTD_LOG_INFO, fields, "client %d connected", 7);
	fftd__log(FFTD_LOG_DEBUG, "not shown at level info");
	fftd__log(FFTD_LOG_ERROR, "plain %s", "error");
}

static void
test_stderr_lines(void **state)
{
	(void) state;
	char *out = capture(emit, NULL);
	print_message("%s", out);
	// 2026-11-22T08:00:00.123 fftd info: client 7 connected client=7 ...
	assert_non_null(strstr(
	    out, " fftd info: client 7 connected client=7 client_pid=42\n"));
	assert_non_null(strstr(out, " fftd error: plain error\n"));
	assert_null(strstr(out, "not shown"));
	assert_true(out[4] == '-' && out[10] == 'T' && out[19] == '.');
	free(out);
}

static void
test_foreign_journal_stream(void **state)
{
	(void) state;
	// Inherited from a parent whose stderr was the journal: not ours.
	char *out = capture(emit, "1:2");
	assert_non_null(strstr(out, " fftd info: client 7 connected"));
	assert_null(strstr(out, "<6>"));
	free(out);
}

static void
test_journal_stream(void **state)
{
	(void) state;
	char *out      = capture(emit, "self");
	int   journald = access("/run/systemd/journal/socket", W_OK) == 0;
	print_message("journald %s; captured: %s\n",
	    journald ? "present" : "absent", out);
	if (journald) {
		// Entries went to the journal, not to the stream.
		assert_null(strstr(out, "client 7 connected"));
	} else {
		// No journald: the stream gets priority-prefixed lines.
		assert_non_null(strstr(out, "<6>client 7 connected\n"));
		assert_non_null(strstr(out, "<3>plain error\n"));
		assert_null(strstr(out, "not shown"));
	}
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stderr_lines),
		cmocka_unit_test(test_foreign_journal_stream),
		cmocka_unit_test(test_journal_stream),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}

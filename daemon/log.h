// SPDX-License-Identifier: MIT
//
// log.h — PRIVATE to fftd. Levelled logging for the daemon: one line per
// event on stderr, with a timestamp unless stderr goes to the journal.

#ifndef FFTD_DAEMON_LOG_H
#define FFTD_DAEMON_LOG_H

typedef enum fftd__log_level {
	FFTD_LOG_ERROR = 0,
	FFTD_LOG_WARN  = 1,
	FFTD_LOG_INFO  = 2,
	FFTD_LOG_DEBUG = 3,
} fftd__log_level;

// fftd__log_set_level sets the most verbose level printed.
void fftd__log_set_level(fftd__log_level level);

// fftd__log_parse_level parses "error", "warn", "info" or "debug"; returns
// -1 for anything else.
int fftd__log_parse_level(const char *s);

// fftd__log prints one line at level (thread-safe).
void fftd__log(fftd__log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif // FFTD_DAEMON_LOG_H

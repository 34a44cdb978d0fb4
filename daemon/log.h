// SPDX-License-Identifier: MIT
//
// log.h — PRIVATE to fftd. Levelled logging for the daemon: journald
// entries with structured fields under systemd, else one line per event on
// stderr with a timestamp.

#ifndef FFTD_DAEMON_LOG_H
#define FFTD_DAEMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>

typedef enum fftd__log_level {
	FFTD_LOG_ERROR = 0,
	FFTD_LOG_WARN  = 1,
	FFTD_LOG_INFO  = 2,
	FFTD_LOG_DEBUG = 3,
} fftd__log_level;

// fftd__log_set_level sets the most verbose level printed.
void fftd__log_set_level(fftd__log_level level);

// fftd__log_enabled says whether entries at level are printed (to skip
// work done only for them).
bool fftd__log_enabled(fftd__log_level level);

// fftd__log_parse_level parses "error", "warn", "info" or "debug"; returns
// -1 for anything else.
int fftd__log_parse_level(const char *s);

// FFTD_LOG_MAX_FIELDS bounds the structured fields of one entry.
#define FFTD_LOG_MAX_FIELDS 8

// fftd__log_to_journal says whether entries go to journald: stderr is the
// stream named by $JOURNAL_STREAM (checked once; fftd__log_reset forgets).
bool fftd__log_to_journal(void);
void fftd__log_reset(void);

// fftd__log_fields logs at level with structured fields, each "KEY=value"
// with KEY in journald's form (upper case, digits, '_'; ours start with
// FFTD_), NULL-terminated, at most FFTD_LOG_MAX_FIELDS: journal fields
// under systemd, " key=value" (FFTD_ dropped, lower case) on stderr.
void fftd__log_fields(fftd__log_level level, const char *const *fields,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fftd__logv_fields(fftd__log_level level, const char *const *fields,
    const char *fmt, va_list ap);

// fftd__log prints one line at level (thread-safe).
void fftd__log(fftd__log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif // FFTD_DAEMON_LOG_H

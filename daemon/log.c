// SPDX-License-Identifier: MIT
//
// log.c — the daemon's log lines. Under systemd (JOURNAL_STREAM set) the
// journal adds its own timestamps and reads the <N> syslog priority prefix,
// so lines carry that prefix instead of a time.

#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Atomic int log_level = FFTD_LOG_INFO;

void
fftd__log_set_level(fftd__log_level level)
{
	atomic_store(&log_level, (int) level);
}

int
fftd__log_parse_level(const char *s)
{
	static const char *names[] = { "error", "warn", "info", "debug" };
	for (int i = 0; i < 4; i++) {
		if (s != NULL && strcmp(s, names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

void
fftd__log(fftd__log_level level, const char *fmt, ...)
{
	static const char *tags[] = { "error", "warn", "info", "debug" };
	static const int   prio[] = { 3, 4, 6, 7 }; // syslog priorities
	if ((int) level > atomic_load(&log_level)) {
		return;
	}
	char    line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (getenv("JOURNAL_STREAM") != NULL) {
		fprintf(stderr, "<%d>%s\n", prio[level], line);
		return;
	}
	struct timespec ts;
	struct tm       tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	char when[32];
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld fftd %s: %s\n", when, ts.tv_nsec / 1000000,
	    tags[level], line);
}

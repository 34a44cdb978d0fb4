// SPDX-License-Identifier: MIT
//
// log.c — the daemon's log lines. When stderr is the journal's stream
// (systemd sets JOURNAL_STREAM to its device:inode), entries go to journald
// with sd_journal_sendv: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=fftd and the
// caller's structured fields (FFTD_CLIENT=..., queryable with journalctl
// FFTD_CLIENT=7). Otherwise one line on stderr with a timestamp and the
// fields as key=value. If the stream is the journal's but journald's
// socket is missing, or journald refuses an entry, the line goes to
// stderr with a <N> syslog priority prefix (which the journal also reads).

#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

static _Atomic int log_level = FFTD_LOG_INFO;
static _Atomic int journal   = -1; // -1: not yet checked (see below)

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

void
fftd__log_set_level(fftd__log_level level)
{
	atomic_store(&log_level, (int) level);
}

bool
fftd__log_enabled(fftd__log_level level)
{
	return (int) level <= atomic_load(&log_level);
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

bool
fftd__log_to_journal(void)
{
	int j = atomic_load(&journal);
	if (j >= 0) {
		return j == 1;
	}
	// Only when stderr is that very stream: a child that inherited the
	// variable but writes elsewhere logs to its own stderr.
	const char        *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat        st;
	j = e != NULL && sscanf(e, "%llu:%llu", &dev, &ino) == 2
	    && fstat(STDERR_FILENO, &st) == 0
	    && (unsigned long long) st.st_dev == dev
	    && (unsigned long long) st.st_ino == ino;
	// The stream is the journal's: 1 entries to journald (its socket is
	// there: sd_journal_sendv drops entries silently when it is not),
	// 2 "<N>" lines on the stream.
	if (j) {
		j = access(JOURNAL_SOCKET, W_OK) == 0 ? 1 : 2;
	}
	atomic_store(&journal, j);
	return j == 1;
}

void
fftd__log_reset(void)
{
	atomic_store(&journal, -1);
}

void
fftd__logv_fields(fftd__log_level level, const char *const *fields,
    const char *fmt, va_list ap)
{
	static const char *tags[] = { "error", "warn", "info", "debug" };
	static const int   prio[] = { 3, 4, 6, 7 }; // syslog priorities
	if ((int) level > atomic_load(&log_level) || (int) level < 0) {
		return;
	}
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	int nf = 0;
	while (
	    fields != NULL && fields[nf] != NULL && nf < FFTD_LOG_MAX_FIELDS) {
		nf++;
	}
	if (fftd__log_to_journal()) {
		char         msg[1100], pri[16];
		struct iovec iov[3 + FFTD_LOG_MAX_FIELDS];
		int          n = 0;
		snprintf(msg, sizeof(msg), "MESSAGE=%s", line);
		snprintf(pri, sizeof(pri), "PRIORITY=%d", prio[level]);
		iov[n++] = (struct iovec) { msg, strlen(msg) };
		iov[n++] = (struct iovec) { pri, strlen(pri) };
		iov[n++]
		    = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=fftd", 22 };
		for (int i = 0; i < nf; i++) {
			iov[n++] = (struct iovec) { (char *) fields[i],
				strlen(fields[i]) };
		}
		if (sd_journal_sendv(iov, n) >= 0) {
			return;
		}
		fprintf(stderr, "<%d>%s\n", prio[level], line);
		return;
	}
	if (atomic_load(&journal) == 2) {
		fprintf(stderr, "<%d>%s\n", prio[level], line);
		return;
	}
	struct timespec ts;
	struct tm       tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	char when[32];
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	// One write per line, so lines of several threads do not interleave.
	char   out[2048];
	size_t len = (size_t) snprintf(out, sizeof(out), "%s.%03ld fftd %s: %s",
	    when, ts.tv_nsec / 1000000, tags[level], line);
	for (int i = 0; i < nf && len < sizeof(out); i++) {
		// FFTD_CLIENT=7 -> client=7: the journal's names, shorter.
		const char *f = fields[i];
		if (strncmp(f, "FFTD_", 5) == 0) {
			f += 5;
		}
		char        key[64];
		const char *eq = strchr(f, '=');
		size_t      kl = eq ? (size_t) (eq - f) : strlen(f);
		if (kl >= sizeof(key)) {
			kl = sizeof(key) - 1;
		}
		for (size_t k = 0; k < kl; k++) {
			char c = f[k];
			key[k]
			    = c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
		}
		key[kl] = '\0';
		len += (size_t) snprintf(out + len, sizeof(out) - len, " %s=%s",
		    key, eq ? eq + 1 : "");
	}
	if (len >= sizeof(out)) {
		len = sizeof(out) - 1;
	}
	fprintf(stderr, "%.*s\n", (int) len, out);
}

void
fftd__log_fields(
    fftd__log_level level, const char *const *fields, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fftd__logv_fields(level, fields, fmt, ap);
	va_end(ap);
}

void
fftd__log(fftd__log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fftd__logv_fields(level, NULL, fmt, ap);
	va_end(ap);
}

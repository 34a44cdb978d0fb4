// SPDX-License-Identifier: MIT
//
// probe.c — a running daemon seen from outside: descriptors, memfd
// mappings, statistics that settle (see probe.h).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "probe.h"
#include "clock.h"

// fftd_test_open_fds counts the open descriptors of process pid, or -1.
int
fftd_test_open_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	DIR *d = opendir(path);
	if (d == NULL) {
		return -1;
	}
	int            n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n;
}

// fftd_test_open_fds_steady (probe.h).
int
fftd_test_open_fds_steady(pid_t pid)
{
	long long until = fftd__mono_ms() + 3000;
	int       n = fftd_test_open_fds(pid), same = 1;
	while (same < 5 && n >= 0 && fftd__mono_ms() < until) {
		fftd_test_sleep_ms(20);
		int m = fftd_test_open_fds(pid);
		same  = m == n ? same + 1 : 1;
		n     = m;
	}
	return n;
}

// fftd_test_count_memfd counts the mappings of memfds named `name` in process
// pid (lines of /proc/PID/maps naming "memfd:NAME"), or -1.
int
fftd_test_count_memfd(pid_t pid, const char *name)
{
	char path[64], pat[96], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	snprintf(pat, sizeof(pat), "memfd:%s ", name);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	int n = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strstr(line, pat) != NULL;
	}
	fclose(f);
	return n;
}

// fftd_test_wait_stats waits (bounded) until the daemon reports `sessions`
// sessions and `plans` plans; returns 0 or -1 (printing what it saw).
int
fftd_test_wait_stats(
    fftd_client *c, uint64_t sessions, uint64_t plans, int timeout_ms)
{
	long long  until = fftd__mono_ms() + timeout_ms;
	fftd_stats st;
	memset(&st, 0, sizeof(st));
	for (;;) {
		int rv = fftd_get_stats(c, &st);
		if (rv == FFTD_OK && st.sessions == sessions
		    && st.plans == plans) {
			return 0;
		}
		if (fftd__mono_ms() > until) {
			print_error("stats: %llu sessions, %llu plans (rv %s); "
			            "want %llu "
			            "and %llu\n",
			    (unsigned long long) st.sessions,
			    (unsigned long long) st.plans, fftd_err_name(rv),
			    (unsigned long long) sessions,
			    (unsigned long long) plans);
			return -1;
		}
		fftd_test_sleep_ms(20);
	}
}

// fftd_test_daemon_settles waits (at most timeout_ms) until daemon pid maps
// `maps` libfftd memfds, holds `fds` descriptors (unless fds < 0) and, asked
// through c, reports `sessions` sessions. Returns 0 or -1 (printing what
// it saw last).
int
fftd_test_daemon_settles(pid_t pid, int maps, int fds, fftd_client *c,
    uint64_t sessions, int timeout_ms)
{
	long long  until = fftd__mono_ms() + timeout_ms;
	fftd_stats st;
	memset(&st, 0, sizeof(st));
	for (;;) {
		int m  = fftd_test_count_memfd(pid, FFTD_TEST_MEMFD_NAME);
		int f  = fftd_test_open_fds(pid);
		int rv = fftd_get_stats(c, &st);
		if (m == maps && (fds < 0 || f == fds) && rv == FFTD_OK
		    && st.sessions == sessions) {
			return 0;
		}
		if (fftd__mono_ms() > until) {
			print_error(
			    "daemon %d: %d memfd mappings (want %d), %d fds "
			    "(want %d), %llu sessions (want %llu, stats %s)\n",
			    (int) pid, m, maps, f, fds,
			    (unsigned long long) st.sessions,
			    (unsigned long long) sessions, fftd_err_name(rv));
			return -1;
		}
		fftd_test_sleep_ms(20);
	}
}

int
fftd_test_seqpacket_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int            n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int       fd = atoi(e->d_name), type = 0;
		socklen_t tl = sizeof(type);
		if (e->d_name[0] != '.' && fd != dirfd(d)
		    && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0
		    && type == SOCK_SEQPACKET) {
			if (n < max) {
				fds[n] = fd;
			}
			n++;
		}
	}
	closedir(d);
	return n;
}

// fftd_test_my_client_stats: see probe.h.
int
fftd_test_my_client_stats(fftd_client *c, fftd_client_stats *out)
{
	fftd_client_stats cs[64];
	int               n = 0;
	if (fftd_get_client_stats(c, cs, 64, &n) != FFTD_OK) {
		return -1;
	}
	for (int i = 0; i < n && i < 64; i++) {
		if (cs[i].pid == (uint64_t) getpid()
		    && strcmp(cs[i].name, program_invocation_short_name) == 0) {
			*out = cs[i];
			return 0;
		}
	}
	return -1;
}

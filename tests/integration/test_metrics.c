// SPDX-License-Identifier: MIT
//
// test_metrics.c — the daemon's metrics and status against a real daemon
// (fftw backend) with `[metrics] listen` on a free loopback port: GET
// /metrics over a plain TCP socket answers the text format, and after a
// few executions this client's fftd_client_executes_total and the
// daemon's fftd_executes_total count exactly them (and agree with
// fftd_get_client_stats / fftd_get_device_stats); other paths answer 404;
// `fftctl stats` prints the client and device tables and `--json` has
// their arrays; a metrics address that is not loopback, or a port in use,
// stops the start-up with a message and a non-zero status; SIGHUP with a
// changed address says it needs a restart; the daemon exits 0 with a
// metrics connection still open.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "../util/probe.h"
#include "clock.h"
#include "fftd.h"

#define TIMEOUT_MS 60000
#define NEXEC 5 // executions the scrape test runs

static fftd_test_daemon  D; // the shared daemon, metrics on D_PORT
static fftd_test_daemon  L; // a test's own daemon
static fftd_client      *C; // this process's client of D
static int               D_PORT;
static const char *const DAEMON_ARGS[]
    = { "--backend", "fftw", "--log-level", "info", NULL };

// --- helpers ----------------------------------------------------------------

// free_port returns a TCP port on 127.0.0.1 that nobody listens on now.
static int
free_port(void)
{
	int                s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a;
	socklen_t          len = sizeof(a);
	memset(&a, 0, sizeof(a));
	a.sin_family      = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *) &a, sizeof(a)) != 0
	    || getsockname(s, (struct sockaddr *) &a, &len) != 0) {
		if (s >= 0) {
			close(s);
		}
		return -1;
	}
	close(s);
	return ntohs(a.sin_port);
}

static int
tcp_connect(int port)
{
	int                s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family      = AF_INET;
	a.sin_port        = htons((uint16_t) port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *) &a, sizeof(a)) != 0) {
		if (s >= 0) {
			close(s);
		}
		return -1;
	}
	return s;
}

// http_get sends "GET path" (HTTP/1.1, Connection: close) to 127.0.0.1:port
// and reads the answer until the server closes (at most 10 s). Returns the
// status code (-1 on failure) with the body in *body (malloc'd, NUL-
// terminated) and the Content-Type in ctype ("" when none).
static int
http_get(int port, const char *path, char **body, char *ctype, size_t ctlen)
{
	*body    = NULL;
	ctype[0] = '\0';
	int s    = tcp_connect(port);
	if (s < 0) {
		print_error(
		    "connect 127.0.0.1:%d: %s\n", port, strerror(errno));
		return -1;
	}
	char req[256];
	int  n = snprintf(req, sizeof(req),
	     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: "
	      "close\r\n\r\n",
	     path, port);
	if (send(s, req, (size_t) n, MSG_NOSIGNAL) != n) {
		close(s);
		return -1;
	}
	size_t    cap = 1 << 16, len = 0;
	char     *buf      = malloc(cap);
	long long deadline = fftd__mono_ms() + 10000;
	for (;;) {
		struct pollfd pfd  = { s, POLLIN, 0 };
		long long     left = deadline - fftd__mono_ms();
		if (left <= 0 || poll(&pfd, 1, (int) left) <= 0) {
			print_error("GET %s: no end of answer in 10 s\n", path);
			free(buf);
			close(s);
			return -1;
		}
		if (len + 4096 + 1 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		ssize_t r = recv(s, buf + len, cap - len - 1, 0);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			break;
		}
		len += (size_t) r;
	}
	close(s);
	buf[len] = '\0';
	int status;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
		print_error("GET %s: not HTTP: %.80s\n", path, buf);
		free(buf);
		return -1;
	}
	char *hend = strstr(buf, "\r\n\r\n");
	if (hend == NULL) {
		free(buf);
		return -1;
	}
	*hend = '\0';
	for (char *h = strstr(buf, "\r\n"); h != NULL; h = strstr(h, "\r\n")) {
		h += 2;
		if (strncasecmp(h, "Content-Type:", 13) == 0) {
			const char *v = h + 13;
			while (*v == ' ') {
				v++;
			}
			size_t l = strcspn(v, "\r");
			snprintf(ctype, ctlen, "%.*s", (int) l, v);
		}
	}
	*body = strdup(hend + 4);
	free(buf);
	return status;
}

// metric finds the sample line of name (followed by '{' or ' ') that
// contains match (any line of name when match is NULL) and reads its value
// into *v. Returns 0, or -1 when there is none.
static int
metric(const char *text, const char *name, const char *match, double *v)
{
	size_t nl = strlen(name);
	for (const char *line = text; *line != '\0';) {
		const char *end = strchr(line, '\n');
		size_t      ll  = end ? (size_t) (end - line) : strlen(line);
		char        buf[2048];
		snprintf(buf, sizeof(buf), "%.*s", (int) ll, line);
		if (strncmp(buf, name, nl) == 0
		    && (buf[nl] == '{' || buf[nl] == ' ')
		    && (match == NULL || strstr(buf, match) != NULL)) {
			const char *sp = strrchr(buf, ' ');
			*v             = strtod(sp + 1, NULL);
			return 0;
		}
		line += ll + (end != NULL);
	}
	return -1;
}

static void
metrics_conf(char *buf, size_t len, const char *host, int port)
{
	snprintf(buf, len, "[metrics]\nlisten = http://%s:%d\n", host, port);
}

// log_has waits (at most timeout_ms) until the daemon's log holds text.
static int
log_has(const fftd_test_daemon *d, const char *text, int timeout_ms)
{
	long long until = fftd__mono_ms() + timeout_ms;
	for (;;) {
		FILE *f = fopen(d->log, "r");
		if (f != NULL) {
			char line[2048];
			while (fgets(line, sizeof(line), f) != NULL) {
				if (strstr(line, text) != NULL) {
					fclose(f);
					return 0;
				}
			}
			fclose(f);
		}
		if (fftd__mono_ms() > until) {
			return -1;
		}
		fftd_test_sleep_ms(20);
	}
}

// D_CONF is D's config: metrics on D_PORT (choose_port writes both).
static char D_CONF[256];

// choose_port picks a free port for D's metrics and writes D's config,
// before D starts.
static int
choose_port(void)
{
	D_PORT = free_port();
	if (D_PORT <= 0) {
		fprintf(stderr, "no free port on 127.0.0.1\n");
		return -1;
	}
	metrics_conf(D_CONF, sizeof(D_CONF), "127.0.0.1", D_PORT);
	return 0;
}

// FX: the shared daemon D with this process's client C, metrics on a free
// port; L is a test's own.
static fftd_test_fixture FX = {
	.daemon       = { { &D, &C, D_CONF, DAEMON_ARGS } },
	.timeout_ms   = TIMEOUT_MS,
	.local        = &L,
	.before_start = choose_port,
};

// --- tests ------------------------------------------------------------------

// NEXEC executions, then the scrape counts exactly them for this client
// and for the daemon, as the client API does.
static void
test_scrape_counts_executions(void **state)
{
	(void) state;
	assert_non_null(C);
	int64_t        n[1] = { 1024 };
	fftd_plan_desc d;
	fftd_plan     *p;
	assert_int_equal(fftd_plan_desc_init(&d, 1, n, FFTD_C2C, FFTD_F64), 0);
	d.batch       = 4;
	size_t  bytes = (size_t) (4 * 1024 * 2) * sizeof(double);
	double *in    = calloc(1, bytes);
	double *out   = calloc(1, bytes);
	assert_non_null(in);
	assert_non_null(out);
	in[0] = 1;
	assert_int_equal(fftd_plan_create(C, &d, &p), FFTD_OK);
	for (int i = 0; i < NEXEC; i++) {
		assert_int_equal(fftd_execute(p, in, out), FFTD_OK);
	}
	assert_true(out[0] == 1 && out[2] == 1); // a delta: all ones

	char mypid[64];
	snprintf(mypid, sizeof(mypid), "pid=\"%d\"", (int) getpid());
	// Counters are updated as the answers go out: poll a little.
	char     *body = NULL;
	char      ctype[128];
	double    cl = -1, total = -1, dev = -1, count = -1, bin = -1;
	long long until = fftd__mono_ms() + 5000;
	for (;;) {
		free(body);
		int st
		    = http_get(D_PORT, "/metrics", &body, ctype, sizeof(ctype));
		assert_int_equal(st, 200);
		assert_non_null(body);
		cl = total = dev = count = bin = -1;
		metric(body, "fftd_client_executes_total", mypid, &cl);
		metric(body, "fftd_executes_total", NULL, &total);
		metric(
		    body, "fftd_device_executes_total", "device=\"0\"", &dev);
		metric(body, "fftd_client_bytes_in_total", mypid, &bin);
		metric(body, "fftd_client_device_seconds_count", mypid, &count);
		if ((cl == NEXEC && total == NEXEC && dev == NEXEC)
		    || fftd__mono_ms() > until) {
			break;
		}
		fftd_test_sleep_ms(50);
	}
	if (!(cl == NEXEC && total == NEXEC && dev == NEXEC)) {
		print_error("client %g, daemon %g, device %g executions; want "
		            "%d\n---- /metrics ----\n%s\n",
		    cl, total, dev, NEXEC, body);
		fail();
	}
	assert_non_null(strstr(ctype, "text/plain"));
	assert_non_null(strstr(ctype, "version=0.0.4"));
	assert_true(bin == (double) (NEXEC * bytes));
	assert_true(count == NEXEC);
	// Every family is declared.
	assert_non_null(strstr(body,
	    "# TYPE fftd_client_queue_seconds "
	    "histogram\n"));
	assert_non_null(strstr(body,
	    "# TYPE fftd_plan_cache_hits_total "
	    "counter\n"));
	assert_non_null(strstr(body, "# TYPE fftd_device_busy_ratio gauge\n"));
	free(body);

	// The same through the client API.
	fftd_client_stats mine;
	assert_int_equal(fftd_test_my_client_stats(C, &mine), 0);
	assert_int_equal(mine.executes, NEXEC);
	fftd_device_stats ds[FFTD_MAX_DEVICES];
	int               nds = 0;
	assert_int_equal(
	    fftd_get_device_stats(C, ds, FFTD_MAX_DEVICES, &nds), FFTD_OK);
	assert_true(nds >= 1);
	uint64_t sum = 0;
	for (int i = 0; i < nds; i++) {
		sum += ds[i].executes;
	}
	assert_int_equal(sum, NEXEC);

	fftd_plan_destroy(p);
	free(in);
	free(out);
}

static void
test_other_paths(void **state)
{
	(void) state;
	char *body;
	char  ctype[128];
	assert_int_equal(
	    http_get(D_PORT, "/nothing-here", &body, ctype, sizeof(ctype)),
	    404);
	free(body);
	assert_int_equal(
	    http_get(D_PORT, "/", &body, ctype, sizeof(ctype)), 200);
	assert_non_null(strstr(body, "/metrics"));
	free(body);
}

// fftctl stats: the totals, then a client table (this process in it) and a
// device table; --json with clients and devices arrays.
static void
test_fftctl_stats(void **state)
{
	(void) state;
	static char out[1 << 16];
	char        cmd[1024], pid[32];
	snprintf(pid, sizeof(pid), " %d ", (int) getpid());
	snprintf(cmd, sizeof(cmd), "%s --url %s stats", fftd_test_fftctl_bin(),
	    D.url);
	int rc = fftd_test_run_capture(cmd, out, sizeof(out));
	if (rc != 0 || strstr(out, "executes") == NULL
	    || strstr(out, "\nclients (") == NULL
	    || strstr(out, "\ndevices (1)") == NULL
	    || strstr(out, "q p99") == NULL || strstr(out, "hits") == NULL
	    || strstr(out, pid) == NULL) {
		print_error("%s: status %d:\n%s\n", cmd, rc, out);
		fail();
	}

	snprintf(cmd, sizeof(cmd), "%s --url %s stats --json",
	    fftd_test_fftctl_bin(), D.url);
	rc = fftd_test_run_capture(cmd, out, sizeof(out));
	snprintf(pid, sizeof(pid), "\"pid\": %d,", (int) getpid());
	char execs[64];
	snprintf(execs, sizeof(execs), "\"executes\": %d,", NEXEC);
	size_t len = strlen(out);
	if (rc != 0 || len < 3 || out[0] != '{' || strcmp(out + len - 2, "}\n")
	    || strstr(out, "\"clients\": [{") == NULL
	    || strstr(out, "\"devices\": [{\"index\": 0") == NULL
	    || strstr(out, execs) == NULL
	    || strstr(out, "\"hist_bounds_s\": [") == NULL
	    || strstr(out, pid) == NULL) {
		print_error("%s: status %d:\n%s\n", cmd, rc, out);
		fail();
	}
	// Balanced brackets and braces outside strings: one JSON value.
	int  depth = 0;
	bool str = false, esc = false;
	for (size_t i = 0; i < len; i++) {
		char ch = out[i];
		if (str) {
			if (esc) {
				esc = false;
			} else if (ch == '\\') {
				esc = true;
			} else if (ch == '"') {
				str = false;
			}
			continue;
		}
		if (ch == '"') {
			str = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			assert_true(--depth >= 0);
			if (depth == 0) {
				assert_string_equal(out + i + 1, "\n");
			}
		}
	}
	assert_int_equal(depth, 0);
}

// A metrics address that is not loopback stops the start-up with the
// reason and status 2 (a config error, before any device is opened); a
// port in use (the shared daemon's) with status 1 after a clean teardown
// (under ASan a leak would change the status).
static void
test_refuses_bad_address(void **state)
{
	(void) state;
	static const struct {
		const char *host;
		const char *why;
		int         code; // config error 2; failed start-up 1
	} cases[] = {
		// clang-format off
		{ "0.0.0.0", "loopback", 2 },
		{ "192.0.2.1", "loopback", 2 },
		{ "[::]", "loopback", 2 },
		{ "", "loopback", 2 },
		{ "127.0.0.1", "cannot serve", 1 }, // D_PORT: in use
		// clang-format on
	};
	char dir[] = "/tmp/fftd-test-metrics-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char        conf[512], confpath[512], cmd[2048];
	static char out[1 << 14];
	snprintf(confpath, sizeof(confpath), "%s/fftd.conf", dir);
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int port = i + 1 < sizeof(cases) / sizeof(cases[0])
		    ? free_port()
		    : D_PORT;
		metrics_conf(conf, sizeof(conf), cases[i].host, port);
		FILE *f = fopen(confpath, "w");
		assert_non_null(f);
		fputs(conf, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
		    "%s --config %s --backend fftw --listen ipc://%s/fftd.sock",
		    fftd_test_daemon_bin(), confpath, dir);
		int rc = fftd_test_run_capture(cmd, out, sizeof(out));
		if (rc != cases[i].code || strstr(out, cases[i].why) == NULL
		    || strstr(out, "metrics") == NULL) {
			print_error("metrics on '%s': status %d, want %d and "
			            "an error saying '%s':\n%s\n",
			    cases[i].host, rc, cases[i].code, cases[i].why,
			    out);
			failed++;
		}
	}
	unlink(confpath);
	char sock[512];
	snprintf(sock, sizeof(sock), "%s/fftd.sock", dir);
	unlink(sock);
	rmdir(dir);
	assert_int_equal(failed, 0);
	// The shared daemon is unharmed.
	char *body;
	char  ctype[128];
	assert_int_equal(
	    http_get(D_PORT, "/metrics", &body, ctype, sizeof(ctype)), 200);
	free(body);
}

// SIGHUP with another metrics address: the log says it needs a restart,
// and the endpoint stays where it was.
static void
test_sighup_change_needs_restart(void **state)
{
	(void) state;
	char conf[256];
	int  port = free_port();
	assert_true(port > 0);
	metrics_conf(conf, sizeof(conf), "127.0.0.1", port);
	assert_int_equal(fftd_test_daemon_start(&L, conf, DAEMON_ARGS), 0);
	int other = free_port();
	metrics_conf(conf, sizeof(conf), "127.0.0.1", other);
	FILE *f = fopen(L.conf, "w");
	assert_non_null(f);
	fputs(conf, f);
	fclose(f);
	assert_int_equal(fftd_test_daemon_signal(&L, SIGHUP), 0);
	assert_int_equal(log_has(&L, "next restart", 5000), 0);
	char *body;
	char  ctype[128];
	assert_int_equal(
	    http_get(port, "/metrics", &body, ctype, sizeof(ctype)), 200);
	free(body);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// The shared daemon exits 0 on SIGTERM (under ASan: no leaks) although a
// scraper holds a connection with half a request sent.
static void
test_exit_with_open_connection(void **state)
{
	(void) state;
	int s = tcp_connect(D_PORT);
	assert_true(s >= 0);
	static const char half[] = "GET /metr";
	assert_int_equal(send(s, half, sizeof(half) - 1, MSG_NOSIGNAL),
	    (ssize_t) sizeof(half) - 1);
	fftd_client_close(C);
	C = NULL;
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
	close(s);
}

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_counts_executions),
		cmocka_unit_test(test_other_paths),
		cmocka_unit_test(test_fftctl_stats),
		cmocka_unit_test(test_refuses_bad_address),
		cmocka_unit_test_teardown(
		    test_sighup_change_needs_restart, fftd_test_local_teardown),
		cmocka_unit_test(test_exit_with_open_connection),
	};
	return fftd_test_run_group("metrics", tests, &FX);
}

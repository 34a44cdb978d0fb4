// SPDX-License-Identifier: MIT
//
// test_config.c — the config file reader (daemon/config.c) is strict: an
// empty value where one is needed, a number in another base than ten, a
// size suffix other than K, M, G or T, or anything after the number is
// refused with the file, the line, the key and the reason; the good forms
// give the values they say.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "busypoll.h"
#include "config.h"

// load writes text to a temporary file and loads it into *cfg (after the
// defaults); err receives the message, with the file's name replaced by
// "F" so that it can be compared exactly.
static int
load(const char *text, fftd__config *cfg, char *err, size_t errlen)
{
	char path[] = "/tmp/fftd-config-XXXXXX";
	int  fd     = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
	close(fd);
	fftd__config_defaults(cfg);
	char raw[512] = "";
	int  rv       = fftd__config_load(cfg, path, raw, sizeof(raw));
	unlink(path);
	err[0]      = '\0';
	size_t plen = strlen(path);
	if (rv != 0 && strncmp(raw, path, plen) == 0) {
		snprintf(err, errlen, "F%s", raw + plen);
	} else if (rv != 0) {
		snprintf(err, errlen, "%s", raw);
	}
	fftd__config_free(cfg);
	return rv;
}

// Each bad line is line 3 of its file, under its section on line 2.
static const struct {
	const char *section, *line, *err;
} bad[] = {
	{ "server", "socket_mode =",
	    "F:3: [server] socket_mode = : a value is required" },
	{ "server", "socket_mode = 0668",
	    "F:3: [server] socket_mode = 0668: not octal permission bits "
	    "such as 0660" },
	{ "server", "socket_mode = 01777",
	    "F:3: [server] socket_mode = 01777: not octal permission bits "
	    "such as 0660" },
	{ "server", "socket_mode = rw",
	    "F:3: [server] socket_mode = rw: not octal permission bits such "
	    "as 0660" },
	{ "server",
	    "listen =", "F:3: [server] listen = : a value is required" },
	{ "server",
	    "contexts =", "F:3: [server] contexts = : a value is required" },
	{ "server", "contexts = 0x10",
	    "F:3: [server] contexts = 0x10: 'x10' after the number" },
	{ "server", "contexts = 16k",
	    "F:3: [server] contexts = 16k: 'k' after the number" },
	{ "server", "contexts = +16",
	    "F:3: [server] contexts = +16: not a decimal number" },
	{ "server", "contexts = 0",
	    "F:3: [server] contexts = 0: out of range 1 .. 4096" },
	{ "server", "contexts = 99999999999999999999999",
	    "F:3: [server] contexts = 99999999999999999999999: too large" },
	{ "server", "busy_poll_us = 100001",
	    "F:3: [server] busy_poll_us = 100001: out of range 0 .. 100000" },
	{ "server", "busy_poll_us = -1",
	    "F:3: [server] busy_poll_us = -1: not a decimal number" },
	{ "server", "busy_poll_us = on",
	    "F:3: [server] busy_poll_us = on: not a decimal number" },
	{ "limits", "max_request_bytes =",
	    "F:3: [limits] max_request_bytes = : a value is required" },
	{ "limits", "max_request_bytes = 5iB",
	    "F:3: [limits] max_request_bytes = 5iB: 'iB' after the number: "
	    "the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = 5BB",
	    "F:3: [limits] max_request_bytes = 5BB: 'BB' after the number: "
	    "the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = 5KiB",
	    "F:3: [limits] max_request_bytes = 5KiB: 'KiB' after the "
	    "number: the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = 5k",
	    "F:3: [limits] max_request_bytes = 5k: 'k' after the number: "
	    "the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = 0x10",
	    "F:3: [limits] max_request_bytes = 0x10: 'x10' after the "
	    "number: the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = -1",
	    "F:3: [limits] max_request_bytes = -1: not a decimal number" },
	{ "limits", "max_request_bytes = 1 G",
	    "F:3: [limits] max_request_bytes = 1 G: ' G' after the number: "
	    "the only suffixes are K, M, G and T" },
	{ "limits", "max_request_bytes = 16777216T",
	    "F:3: [limits] max_request_bytes = 16777216T: too large" },
	{ "limits", "max_buffers_per_client = 0",
	    "F:3: [limits] max_buffers_per_client = 0: out of range 1 .. "
	    "1048576" },
	{ "limits", "max_fd_connections_per_user =",
	    "F:3: [limits] max_fd_connections_per_user = : a value is "
	    "required" },
	{ "limits", "max_arrays_per_client = 0",
	    "F:3: [limits] max_arrays_per_client = 0: out of range 1 .. "
	    "1048576" },
	{ "limits", "max_array_bytes_per_client = 1X",
	    "F:3: [limits] max_array_bytes_per_client = 1X: 'X' after the "
	    "number: the only suffixes are K, M, G and T" },
	{ "limits", "ipc_peers = everyone",
	    "F:3: [limits] ipc_peers = everyone: must be same-user or any" },
	{ "limits", "max_connections_per_user = 0",
	    "F:3: [limits] max_connections_per_user = 0: out of range 1 .. "
	    "1048576" },
	{ "cache", "budget_bytes = 1GB",
	    "F:3: [cache] budget_bytes = 1GB: 'GB' after the number: the "
	    "only suffixes are K, M, G and T" },
	{ "log", "level =", "F:3: [log] level = : a value is required" },
	{ "limits", "max_rnak = 3", "F:3: [limits] max_rnak = 3: unknown key" },
};

// test_bad_forms: every bad line is refused with its exact message.
static void
test_bad_forms(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char         text[256], err[512];
		fftd__config cfg;
		snprintf(text, sizeof(text), "; test\n[%s]\n%s\n",
		    bad[i].section, bad[i].line);
		int rv = load(text, &cfg, err, sizeof(err));
		if (rv == 0 || strcmp(err, bad[i].err) != 0) {
			print_error("case %zu '%s': rv %d, got '%s'\n", i,
			    bad[i].line, rv, err);
		}
		assert_int_not_equal(rv, 0);
		assert_string_equal(err, bad[i].err);
	}
}

// test_good_forms: decimal numbers (leading zeros stay decimal) and the
// four suffixes give what they say; empty stays allowed where it means
// "none".
static void
test_good_forms(void **state)
{
	(void) state;
	fftd__config cfg;
	char         err[512];
	assert_int_equal(load("[server]\nsocket_mode = 0640\ncontexts = 010\n"
	                      "busy_poll_us = 250\n"
	                      "[limits]\nmax_request_bytes = 010\n"
	                      "max_batch = 3K\nmax_buffer_bytes = 2M\n"
	                      "max_queued_bytes_per_client = 5G\n"
	                      "max_buffers_per_client = 7\n"
	                      "max_buffers_per_user = 9\n"
	                      "max_streams_per_client = 3\n"
	                      "max_streams_per_user = 4\n"
	                      "max_fd_connections_per_user = 2\n"
	                      "max_connections_per_user = 5\n"
	                      "max_arrays_per_client = 6\n"
	                      "max_array_bytes_per_client = 3M\n"
	                      "ipc_peers = any\n"
	                      "[cache]\nbudget_bytes = 1T\n"
	                      "[metrics]\nlisten =\n"
	                      "[tls]\nkey =\n"
	                      "[remote]\nallow =\n",
	                     &cfg, err, sizeof(err)),
	    0);
	assert_string_equal(err, "");
	assert_int_equal(cfg.socket_mode, 0640);
	assert_int_equal(cfg.contexts, 10);
	assert_int_equal(cfg.busy_poll_us, 250);
	assert_int_equal(fftd__config_busy_poll_ns(&cfg, 1000), 250000);
	assert_int_equal(cfg.limits.max_request_bytes, 10);
	assert_int_equal(cfg.limits.max_batch, 3 << 10);
	assert_int_equal(cfg.max_buffer_bytes, 2 << 20);
	assert_int_equal(cfg.max_queued_bytes_per_client, 5ull << 30);
	assert_int_equal(cfg.max_buffers_per_client, 7);
	assert_int_equal(cfg.max_buffers_per_user, 9);
	assert_int_equal(cfg.max_streams_per_client, 3);
	assert_int_equal(cfg.max_streams_per_user, 4);
	assert_int_equal(cfg.max_fd_connections_per_user, 2);
	assert_int_equal(cfg.max_connections_per_user, 5);
	assert_int_equal(cfg.max_arrays_per_client, 6);
	assert_int_equal(cfg.max_array_bytes_per_client, 3 << 20);
	assert_true(cfg.ipc_peers_any);
	assert_int_equal(cfg.cache_budget, 1ull << 40);
	assert_string_equal(cfg.metrics_listen, "");
	assert_int_equal(cfg.nallow, 0);
}

// test_busy_poll_auto: "auto" (the default) polls 2 ms on a host of 8
// online CPUs or more and two per polling thread, not at all otherwise
// (the rule at both edges, whatever this host has; then this host's);
// 0 is off.
static void
test_busy_poll_auto(void **state)
{
	(void) state;
	fftd__config cfg;
	char         err[512];
	assert_int_equal(fftd__busy_poll_rule_us(8, 4), 2000);
	assert_int_equal(fftd__busy_poll_rule_us(7, 1), 0); // too few CPUs
	assert_int_equal(fftd__busy_poll_rule_us(8, 5), 0); // < 2 a thread
	assert_int_equal(fftd__busy_poll_rule_us(34, 17), 2000);
	assert_int_equal(fftd__busy_poll_rule_us(33, 17), 0);
	long     n    = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t want = n >= 8 && n >= 6 ? 2000000 : 0; // 3 threads
	fftd__config_defaults(&cfg);
	assert_int_equal(fftd__config_busy_poll_ns(&cfg, 3), want);
	// More polling threads than half the CPUs: off.
	assert_int_equal(fftd__config_busy_poll_ns(&cfg, (int) n / 2 + 1), 0);
	assert_int_equal(
	    load("[server]\nbusy_poll_us = auto\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.busy_poll_us, -1);
	assert_int_equal(fftd__config_busy_poll_ns(&cfg, 3), want);
	assert_int_equal(
	    load("[server]\nbusy_poll_us = 0\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(fftd__config_busy_poll_ns(&cfg, 3), 0);
}

// test_shipped_config: deploy/fftd.conf loads as it is.
static void
test_shipped_config(void **state)
{
	(void) state;
	fftd__config cfg;
	char         err[512] = "";
	fftd__config_defaults(&cfg);
	int rv = fftd__config_load(&cfg, "deploy/fftd.conf", err, sizeof(err));
	if (rv != 0) {
		print_error("%s\n", err);
	}
	assert_int_equal(rv, 0);
	fftd__config_free(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_forms),
		cmocka_unit_test(test_good_forms),
		cmocka_unit_test(test_busy_poll_auto),
		cmocka_unit_test(test_shipped_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
//
// test_remote.c — the remote-client rules of daemon/remote.c without a
// running daemon: the [remote] allow parser (IPv4 and IPv6 CIDRs, single
// addresses, malformed entries refused with the entry named), the matcher
// (prefix boundaries, IPv4-mapped IPv6, families kept apart), loopback
// detection, the config keys of [tls] and [remote] (errors carry the
// line), and listener setup: plain tcp:// only on loopback, tls+tcp://
// refused without a certificate or a client CA, files named in errors.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "config.h"
#include "fftd.h"
#include "log.h"
#include "remote.h"

// parse parses text into a fresh list; returns the parser's result.
static int
parse(const char *text, fftd__netmask *list, int *n, char *err, size_t len)
{
	*n     = 0;
	err[0] = '\0';
	return fftd__remote_parse_allow(
	    text, list, FFTD__MAX_ALLOW, n, err, len);
}

// addr converts text (IPv4 or IPv6) to bytes; returns the family.
static int
addr(const char *text, uint8_t *out)
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, text, out) == 1) {
		return 4;
	}
	if (inet_pton(AF_INET6, text, out) == 1) {
		return 6;
	}
	fail_msg("test address %s does not parse", text);
	return 0;
}

static bool
matches(const fftd__netmask *list, int n, const char *text)
{
	uint8_t a[16];
	int     family = addr(text, a);
	return fftd__remote_match(list, n, family, a);
}

static void
test_parse_valid(void **state)
{
	(void) state;
	static const struct {
		const char *text;
		int         n;
		int         family0, prefix0; // first entry
	} cases[] = {
		{ "10.1.0.0/16", 1, 4, 16 },
		{ "192.168.7.12", 1, 4, 32 },
		{ "2001:db8::/32", 1, 6, 32 },
		{ "::1", 1, 6, 128 },
		{ "10.1.0.0/16, 192.168.7.12, 2001:db8::/32", 3, 4, 16 },
		{ "10.1.0.0/16,192.168.7.12", 2, 4, 16 },
		{ "  10.1.0.0/16   192.168.7.12\t", 2, 4, 16 },
		{ "0.0.0.0/0", 1, 4, 0 },
		{ "::/0", 1, 6, 0 },
		{ "10.0.0.0/8,", 1, 4, 8 },
		{ "::ffff:10.0.0.0/104", 1, 4, 8 }, // stored as IPv4
		{ "fe80::1:2:3:4/128", 1, 6, 128 },
		{ "", 0, 0, 0 },
		{ " , ", 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fftd__netmask list[FFTD__MAX_ALLOW];
		int           n;
		char          err[256];
		if (parse(cases[i].text, list, &n, err, sizeof(err)) != 0) {
			fail_msg("'%s' refused: %s", cases[i].text, err);
		}
		assert_int_equal(n, cases[i].n);
		if (n > 0) {
			assert_int_equal(list[0].family, cases[i].family0);
			assert_int_equal(list[0].prefix, cases[i].prefix0);
		}
	}
}

static void
test_parse_malformed(void **state)
{
	(void) state;
	static const struct {
		const char *text;
		const char *named; // what the message must quote
	} cases[] = {
		{ "10.1.0.0/33", "10.1.0.0/33" },
		{ "2001:db8::/129", "2001:db8::/129" },
		{ "10.1.0.0/", "10.1.0.0/" },
		{ "10.1.0.0/-1", "10.1.0.0/-1" },
		{ "10.1.0.0/1a", "10.1.0.0/1a" },
		{ "10.1.0.0/016x", "10.1.0.0/016x" },
		{ "/16", "/16" },
		{ "10.1.2", "10.1.2" },
		{ "256.1.1.1", "256.1.1.1" },
		{ "10.1.0.0.0", "10.1.0.0.0" },
		{ "gpu1.lab", "gpu1.lab" },
		{ "localhost", "localhost" },
		{ "2001:db8:::1", "2001:db8:::1" },
		{ "fe80::1%eth0", "fe80::1%eth0" },
		{ "10.1.2.0/16", "10.1.2.0/16" }, // bits past the prefix
		{ "2001:db8::1/32", "2001:db8::1/32" },
		{ "10.0.0.0/8; 10.1.0.0/16", "10.0.0.0/8;" },
		{ "10.0.0.0/8, bogus", "bogus" },
		{ "*", "*" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fftd__netmask list[FFTD__MAX_ALLOW];
		int           n;
		char          err[256];
		if (parse(cases[i].text, list, &n, err, sizeof(err)) != -1) {
			fail_msg("'%s' accepted", cases[i].text);
		}
		assert_int_equal(n, 0); // nothing appended on error
		if (strstr(err, cases[i].named) == NULL) {
			fail_msg("'%s': message '%s' does not name '%s'",
			    cases[i].text, err, cases[i].named);
		}
	}
	// The message for a host-bits typo names the network meant.
	fftd__netmask list[FFTD__MAX_ALLOW];
	int           n;
	char          err[256];
	assert_int_equal(parse("10.1.2.0/16", list, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "10.1.0.0/16"));
}

static void
test_parse_appends_and_bounds(void **state)
{
	(void) state;
	fftd__netmask list[FFTD__MAX_ALLOW];
	int           n = 0;
	char          err[256];
	assert_int_equal(fftd__remote_parse_allow(
	                     "10.0.0.0/8", list, 3, &n, err, sizeof(err)),
	    0);
	assert_int_equal(fftd__remote_parse_allow("192.168.0.0/16 ::1", list, 3,
	                     &n, err, sizeof(err)),
	    0);
	assert_int_equal(n, 3);
	// Full: refused, and the list stays as it was.
	assert_int_equal(fftd__remote_parse_allow(
	                     "172.16.0.0/12", list, 3, &n, err, sizeof(err)),
	    -1);
	assert_int_equal(n, 3);
	assert_non_null(strstr(err, "more than 3"));
	// A bad entry after good ones appends none of them.
	n = 1;
	assert_int_equal(fftd__remote_parse_allow("172.16.0.0/12, nope", list,
	                     3, &n, err, sizeof(err)),
	    -1);
	assert_int_equal(n, 1);
}

static void
test_match(void **state)
{
	(void) state;
	fftd__netmask list[FFTD__MAX_ALLOW];
	int           n;
	char          err[256];
	assert_int_equal(parse("10.1.0.0/16, 192.168.7.12, 2001:db8::/32, "
	                       "172.16.0.0/12, 10.200.3.128/25",
	                     list, &n, err, sizeof(err)),
	    0);
	assert_int_equal(n, 5);
	static const struct {
		const char *a;
		bool        in;
	} cases[] = {
		{ "10.1.0.0", true },
		{ "10.1.255.255", true },
		{ "10.1.37.4", true },
		{ "10.0.255.255", false },
		{ "10.2.0.0", false },
		{ "192.168.7.12", true },
		{ "192.168.7.13", false },
		{ "192.168.7.11", false },
		{ "172.16.0.1", true },
		{ "172.31.255.255", true },
		{ "172.32.0.0", false },
		{ "172.15.255.255", false },
		{ "10.200.3.128", true },
		{ "10.200.3.255", true },
		{ "10.200.3.127", false },
		{ "2001:db8::1", true },
		{ "2001:db8:ffff:ffff::1", true },
		{ "2001:db9::1", false },
		{ "2001:db7:ffff::1", false },
		{ "::ffff:10.1.2.3", true }, // IPv4-mapped matches as IPv4
		{ "::ffff:10.3.2.1", false },
		{ "::ffff:192.168.7.12", true },
		{ "::10.1.2.3", false }, // IPv4-compatible is not mapped
		{ "8.8.8.8", false },
		{ "::1", false }, // loopback is allowed by rule, not by list
		{ "127.0.0.1", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (matches(list, n, cases[i].a) != cases[i].in) {
			fail_msg("%s: match %d, want %d", cases[i].a,
			    !cases[i].in, cases[i].in);
		}
	}
	// An empty list matches nothing (remote.c admits all when empty).
	assert_false(matches(list, 0, "10.1.0.1"));
	// /0 matches its own family only.
	assert_int_equal(parse("0.0.0.0/0", list, &n, err, sizeof(err)), 0);
	assert_true(matches(list, n, "203.0.113.9"));
	assert_true(matches(list, n, "::ffff:203.0.113.9"));
	assert_false(matches(list, n, "2001:db8::1"));
	assert_int_equal(parse("::/0", list, &n, err, sizeof(err)), 0);
	assert_true(matches(list, n, "2001:db8::1"));
	assert_false(matches(list, n, "203.0.113.9"));
	// A bad family matches nothing.
	uint8_t a[16] = { 10, 1, 0, 1 };
	assert_false(fftd__remote_match(list, n, 5, a));
}

static void
test_loopback(void **state)
{
	(void) state;
	static const struct {
		const char *a;
		bool        lo;
	} cases[] = {
		{ "127.0.0.1", true },
		{ "127.255.255.254", true },
		{ "127.3.4.5", true },
		{ "::1", true },
		{ "::ffff:127.0.0.1", true },
		{ "128.0.0.1", false },
		{ "126.255.255.255", false },
		{ "10.0.0.1", false },
		{ "::", false },
		{ "::2", false },
		{ "0.0.0.0", false },
		{ "fe80::1", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t a[16];
		int     family = addr(cases[i].a, a);
		if (fftd__remote_is_loopback(family, a) != cases[i].lo) {
			fail_msg("%s: loopback %d, want %d", cases[i].a,
			    !cases[i].lo, cases[i].lo);
		}
	}
}

// write_file writes text to a fresh temporary file; path receives its name.
static void
write_file(char *path, const char *text)
{
	strcpy(path, "/tmp/fftd-test-remote-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
	close(fd);
}

static void
test_config_keys(void **state)
{
	(void) state;
	fftd__config cfg;
	fftd__config_defaults(&cfg);
	assert_true(cfg.tls_require_client_cert);
	assert_int_equal(cfg.nallow, 0);
	assert_int_equal(cfg.tls_cert[0], '\0');
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "cert", "/etc/fftd/server.pem"), 0);
	assert_string_equal(cfg.tls_cert, "/etc/fftd/server.pem");
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "key", "/etc/fftd/server.key"), 0);
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "client_ca", "/etc/fftd/ca.pem"), 0);
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "require_client_cert", "no"), 0);
	assert_false(cfg.tls_require_client_cert);
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "require_client_cert", "yes"), 0);
	assert_true(cfg.tls_require_client_cert);
	assert_int_equal(
	    fftd__config_set(&cfg, "tls", "require_client_cert", "maybe"), -1);
	assert_int_equal(fftd__config_set(&cfg, "tls", "ciphers", "all"), -1);
	// The realtime lane's keys share the yes/no parser.
	assert_true(cfg.realtime_lane);
	assert_true(cfg.realtime_memory == 0.125);
	assert_int_equal(
	    fftd__config_set(&cfg, "backend", "realtime_lane", "no"), 0);
	assert_false(cfg.realtime_lane);
	assert_int_equal(
	    fftd__config_set(&cfg, "backend", "realtime_lane", "maybe"), -1);
	assert_int_equal(
	    fftd__config_set(&cfg, "backend", "realtime_memory", "0.25"), 0);
	assert_true(cfg.realtime_memory == 0.25);
	assert_int_equal(
	    fftd__config_set(&cfg, "backend", "realtime_memory", "1"), -1);
	assert_int_equal(
	    fftd__config_set(&cfg, "backend", "realtime_memory", "x"), -1);
	char long_path[FFTD__TLS_PATH_MAX + 8];
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(fftd__config_set(&cfg, "tls", "cert", long_path), -1);
	// allow: each key adds to the list; a bad one adds nothing.
	assert_int_equal(
	    fftd__config_set(&cfg, "remote", "allow", "10.1.0.0/16, ::1"), 0);
	assert_int_equal(
	    fftd__config_set(&cfg, "remote", "allow", "192.168.7.12"), 0);
	assert_int_equal(cfg.nallow, 3);
	assert_int_equal(
	    fftd__config_set(&cfg, "remote", "allow", "10.0.0.0/99"), -1);
	assert_int_equal(cfg.nallow, 3);
	fftd__config_free(&cfg);

	// From a file: the error names the line and the bad entry.
	char path[64];
	write_file(path,
	    "[tls]\ncert = /x/server.pem\nrequire_client_cert = no\n"
	    "[remote]\nallow = 10.1.0.0/16\nallow = 192.168.7.12, "
	    "2001:db8::/32\n");
	fftd__config_defaults(&cfg);
	char err[512];
	if (fftd__config_load(&cfg, path, err, sizeof(err)) != 0) {
		fail_msg("config refused: %s", err);
	}
	assert_int_equal(cfg.nallow, 3);
	assert_string_equal(cfg.tls_cert, "/x/server.pem");
	assert_false(cfg.tls_require_client_cert);
	fftd__config_free(&cfg);
	unlink(path);
	write_file(path,
	    "[remote]\nallow = 10.1.0.0/16\n\nallow = 10.2.0.0/"
	    "16, 10.3.0.0/33\n");
	fftd__config_defaults(&cfg);
	assert_int_equal(fftd__config_load(&cfg, path, err, sizeof(err)), -1);
	if (strstr(err, ":4:") == NULL || strstr(err, "10.3.0.0/33") == NULL
	    || strstr(err, "prefix") == NULL) {
		fail_msg("error '%s' does not name line 4 and the entry", err);
	}
	fftd__config_free(&cfg);
	unlink(path);
}

// setup_listener creates a listener for url on a fresh REP socket and runs
// fftd__remote_listener_setup on it; returns its result with err filled.
static int
setup_listener(
    const char *url, const fftd__config *cfg, char *err, size_t errlen)
{
	nng_socket   s;
	nng_listener l;
	assert_int_equal(nng_rep0_open(&s), 0);
	int rv = nng_listener_create(&l, s, url);
	if (rv != 0) {
		nng_close(s);
		fail_msg("%s: nng_listener_create: %s", url, nng_strerror(rv));
	}
	err[0] = '\0';
	rv     = fftd__remote_listener_setup(l, url, cfg, err, errlen);
	nng_close(s);
	return rv;
}

static void
test_listener_rules(void **state)
{
	(void) state;
	fftd__config cfg;
	char         err[512];
	fftd__config_defaults(&cfg);
	// Each URL without and with [remote] allow_insecure = yes: loopback
	// tcp://, ws:// and abstract:// admit every local user, so they need
	// it (issue 14, defect 8); other plain addresses are refused anyway.
	static const struct {
		const char *url;
		int         rv, rv_insecure;
		const char *says; // in the message when refused by default
	} plain[] = {
		{ "tcp://127.0.0.1:0", FFTD_EINVAL, FFTD_OK, "allow_insecure" },
		{ "tcp://127.8.9.10:0", FFTD_EINVAL, FFTD_OK,
		    "allow_insecure" },
		{ "tcp://[::1]:0", FFTD_EINVAL, FFTD_OK, "every local user" },
		{ "tcp://localhost:0", FFTD_EINVAL, FFTD_OK, "allow_insecure" },
		{ "tcp4://127.0.0.1:0", FFTD_EINVAL, FFTD_OK,
		    "allow_insecure" },
		{ "ws://127.0.0.1:0/fftd", FFTD_EINVAL, FFTD_OK,
		    "allow_insecure" },
		{ "abstract://fftd-test-remote", FFTD_EINVAL, FFTD_OK,
		    "allow_insecure" },
		{ "ipc:///tmp/fftd-test-remote.sock", FFTD_OK, FFTD_OK, NULL },
		{ "inproc://fftd-test-remote", FFTD_OK, FFTD_OK, NULL },
		{ "tcp://0.0.0.0:0", FFTD_EINVAL, FFTD_EINVAL,
		    "tls+tcp://0.0.0.0:0" },
		{ "tcp://:0", FFTD_EINVAL, FFTD_EINVAL, "tls+tcp://" },
		{ "tcp://[::]:0", FFTD_EINVAL, FFTD_EINVAL, "tls+tcp://" },
		{ "tcp6://[::]:0", FFTD_EINVAL, FFTD_EINVAL, "loopback" },
		{ "tcp://[::ffff:0.0.0.0]:0", FFTD_EINVAL, FFTD_EINVAL,
		    "loopback" },
		{ "ws://0.0.0.0:0/fftd", FFTD_EINVAL, FFTD_EINVAL, "wss://" },
	};
	for (int insecure = 0; insecure < 2; insecure++) {
		fftd__config_set(
		    &cfg, "remote", "allow_insecure", insecure ? "yes" : "no");
		for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
			int want
			    = insecure ? plain[i].rv_insecure : plain[i].rv;
			int rv = setup_listener(
			    plain[i].url, &cfg, err, sizeof(err));
			if (rv != want) {
				fail_msg("%s (allow_insecure %d): %s (%s), "
				         "want %s",
				    plain[i].url, insecure, fftd_err_name(rv),
				    err, fftd_err_name(want));
			}
			if (!insecure && plain[i].says != NULL
			    && strstr(err, plain[i].says) == NULL) {
				fail_msg("%s: message '%s' does not say '%s'",
				    plain[i].url, err, plain[i].says);
			}
		}
	}
	fftd__config_set(&cfg, "remote", "allow_insecure", "no");

	// tls+tcp:// needs a certificate, and a client CA unless
	// require_client_cert = no; files are named when missing.
	const char *tls = "tls+tcp://127.0.0.1:0";
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "[tls] cert is not set"));
	fftd__config_set(&cfg, "tls", "cert", "/nonexistent/fftd-server.pem");
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "client_ca is not set"));
	assert_non_null(strstr(err, "require_client_cert = no"));
	fftd__config_set(&cfg, "tls", "require_client_cert", "no");
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "/nonexistent/fftd-server.pem"));
	char notpem[64];
	write_file(notpem, "this is not a certificate\n");
	fftd__config_set(&cfg, "tls", "cert", notpem);
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, notpem));
	assert_non_null(strstr(err, "not a PEM file"));
	// A PEM file that holds no certificate and key is refused by NNG.
	char fake[64];
	write_file(fake,
	    "-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
	    "CERTIFICATE-----\n");
	fftd__config_set(&cfg, "tls", "cert", fake);
	fftd__config_set(&cfg, "tls", "key", "/nonexistent/fftd-server.key");
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "/nonexistent/fftd-server.key"));
	fftd__config_set(&cfg, "tls", "key", fake);
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "not a PEM certificate"));
	fftd__config_set(&cfg, "tls", "require_client_cert", "yes");
	fftd__config_set(&cfg, "tls", "client_ca", "/nonexistent/fftd-ca.pem");
	assert_int_equal(
	    setup_listener(tls, &cfg, err, sizeof(err)), FFTD_EINVAL);
	assert_non_null(strstr(err, "/nonexistent/fftd-ca.pem"));
	unlink(notpem);
	unlink(fake);
	fftd__config_free(&cfg);
}

int
main(void)
{
	fftd__log_set_level(FFTD_LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_appends_and_bounds),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_listener_rules),
	};
	return cmocka_run_group_tests_name("remote", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
//
// test_remote.c — remote clients over tls+tcp:// against a real daemon.
// At start the openssl command makes a throwaway PKI in a temporary folder:
// a CA; the daemon's certificate (signed by the CA, names localhost and
// 127.0.0.1); alice (signed by the CA: allowed); mallory (signed by another
// CA: refused); bob and eve (self-signed; bob is on a certificate
// allow-list, eve is not). Checked: C2C transforms over TLS with alice's
// certificate match the FFTW reference; mallory, a client without a
// certificate, a client without FFTD_TLS_CA, bad file names and a wrong
// server name fail with FFTD_EINVAL or a TLS handshake error whose message
// says what is wrong, and the daemon keeps serving; a client_ca file of
// self-signed client certificates is an allow-list; require_client_cert =
// no admits clients without certificates (with a warning in the log);
// [remote] allow never shuts out loopback peers, and plain tcp:// works on
// loopback; a client that dials one of this machine's own non-loopback
// addresses (its peer address is then that address) is refused unless
// allow lists it, with the address in the daemon's log; the daemon
// refuses to start with plain tcp:// on 0.0.0.0, a missing certificate or
// key, tls+tcp:// without client_ca, or a bad allow entry. The parser and
// matcher are unit-tested in tests/unit/test_remote.c.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/nng.h>

#include "../util/cases.h"
#include "../util/client_cases.h"
#include "../../bench/lib/daemon.h"
#include "../util/fixture.h"
#include "fftd.h"

#define TIMEOUT_MS 30000

static char             PKI[256]; // the temporary folder of certificates
static fftd_test_daemon D;        // CA-verified daemon (client_ca = ca.pem)
static fftd_test_daemon L;        // a test's own daemon
static char             URL[128]; // tls+tcp://127.0.0.1:PORT of D

// The certificates, made with the openssl command line. EC P-256 keys
// (fast to make); the server certificate names localhost as a DNS name and
// 127.0.0.1 as an IP address (mbedTLS 2.28 matches DNS names only, so
// clients set FFTD_TLS_SERVER_NAME=localhost).
static const char MKCERTS[]
    = "set -e\n"
      "K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
      "req() { openssl req \"$@\" -days 2 >>openssl.log 2>&1; }\n"
      "sign() { openssl x509 -req -days 2 -CAcreateserial \"$@\" "
      ">>openssl.log 2>&1; }\n"
      "req -x509 $K -keyout ca.key -out ca.pem -subj /CN=fftd-test-ca\n"
      "req -x509 $K -keyout rogue.key -out rogue.pem -subj /CN=rogue-ca\n"
      "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext\n"
      "req $K -keyout server.key -out server.csr -subj /CN=localhost\n"
      "sign -in server.csr -CA ca.pem -CAkey ca.key -out server.pem "
      "-extfile san.ext\n"
      "req $K -keyout alice.key -out alice.csr -subj /CN=alice\n"
      "sign -in alice.csr -CA ca.pem -CAkey ca.key -out alice.pem\n"
      "req $K -keyout mallory.key -out mallory.csr -subj /CN=mallory\n"
      "sign -in mallory.csr -CA rogue.pem -CAkey rogue.key -out "
      "mallory.pem\n"
      "req -x509 $K -keyout bob.key -out bob.pem -subj /CN=bob\n"
      "req -x509 $K -keyout eve.key -out eve.pem -subj /CN=eve\n"
      "cat alice.pem alice.key > alice-both.pem\n";

// --- helpers
// --------------------------------------------------------------------

// pki returns the path of a file in the PKI folder (a static buffer of
// four, rotated, so that a call may use a few at once).
static const char *
pki(const char *name)
{
	static char buf[4][400];
	static int  next;
	char       *b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", PKI, name);
	return b;
}

static void
set_or_unset(const char *var, const char *value)
{
	if (value != NULL) {
		setenv(var, value, 1);
	} else {
		unsetenv(var);
	}
}

// tls_env sets the client's TLS variables (file names within the PKI
// folder; NULL unsets).
static void
tls_env(const char *ca, const char *cert, const char *key, const char *name)
{
	set_or_unset("FFTD_TLS_CA", ca ? pki(ca) : NULL);
	set_or_unset("FFTD_TLS_CERT", cert ? pki(cert) : NULL);
	set_or_unset("FFTD_TLS_KEY", key ? pki(key) : NULL);
	set_or_unset("FFTD_TLS_SERVER_NAME", name);
}

// free_port returns a TCP port on 127.0.0.1 that nobody listens on now.
static int
free_port(void)
{
	int                fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa;
	socklen_t          len = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family      = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0
	    || getsockname(fd, (struct sockaddr *) &sa, &len) != 0) {
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	close(fd);
	return ntohs(sa.sin_port);
}

// TLS_ARGS is the size of tls_args' argument lists.
#define TLS_ARGS 9

// tls_args fills args (TLS_ARGS entries) with a daemon's command line (fftw
// backend) with a tls+tcp:// listener on a free port (plus the helper's
// ipc one), and writes the tls URL into url; extra (may be NULL) is one
// more --listen. Returns 0, or -1 when no port is free.
static int
tls_args(const char **args, char *url, size_t urllen, const char *extra)
{
	int port = free_port();
	if (port < 0) {
		return -1;
	}
	snprintf(url, urllen, "tls+tcp://127.0.0.1:%d", port);
	const char *a[TLS_ARGS] = { "--backend", "fftw", "--log-level", "info",
		"--listen", url, extra ? "--listen" : NULL, extra, NULL };
	memcpy(args, a, sizeof(a));
	return 0;
}

// start_tls_daemon starts a daemon with config text and tls_args' command
// line, and writes the tls URL into url.
static int
start_tls_daemon(fftd_test_daemon *d, const char *config, char *url,
    size_t urllen, const char *extra)
{
	const char *args[TLS_ARGS];
	if (tls_args(args, url, urllen, extra) != 0) {
		return -1;
	}
	return fftd_test_daemon_start(d, config, args);
}

// ANY_ERROR is open_expect's want for a failure with any code.
#define ANY_ERROR (-1)

// open_expect opens a client of url and checks the outcome: FFTD_OK (the
// client is returned), or failure with code want (ANY_ERROR: any) and a
// message containing says (and says2, when not NULL).
static fftd_client *
open_expect(const char *url, int want, const char *says, const char *says2)
{
	fftd_client *c  = NULL;
	int          rv = fftd_client_open(&c, url, TIMEOUT_MS);
	if (want == FFTD_OK) {
		if (rv != FFTD_OK) {
			fail_msg("fftd_client_open(%s): %s (%s)", url,
			    fftd_err_name(rv), fftd_last_error());
		}
		return c;
	}
	if (rv == FFTD_OK) {
		fftd_client_close(c);
		fail_msg("fftd_client_open(%s) succeeded; want %s (%s)", url,
		    want != ANY_ERROR ? fftd_err_name(want) : "an error", says);
	}
	const char *msg = fftd_last_error();
	print_message(
	    "    refused as expected: %s: %s\n", fftd_err_name(rv), msg);
	if (want != ANY_ERROR && rv != want) {
		fail_msg("fftd_client_open(%s): %s, want %s (%s)", url,
		    fftd_err_name(rv), fftd_err_name(want), msg);
	}
	if ((says != NULL && strstr(msg, says) == NULL)
	    || (says2 != NULL && strstr(msg, says2) == NULL)) {
		fail_msg("message '%s' does not say '%s'%s%s", msg, says,
		    says2 ? " and " : "", says2 ? says2 : "");
	}
	return NULL;
}

// one_c2c runs a C2C transform of 4096 points x 8 over c and checks it
// against the reference.
static void
one_c2c(fftd_client *c)
{
	fftd_test_case tc;
	memset(&tc, 0, sizeof(tc));
	int64_t n = 4096;
	assert_int_equal(
	    fftd_plan_desc_init(&tc.desc, 1, &n, FFTD_C2C, FFTD_F64), FFTD_OK);
	tc.desc.batch = 8;
	snprintf(tc.name, sizeof(tc.name), "c2c f64 n=4096 b=8 over tls");
	assert_int_equal(fftd_test_run_case(c, &tc, fftd_test_case_seed(7)), 0);
}

// read_log returns the daemon's log so far (malloc'd).
static char *
read_log(const fftd_test_daemon *d)
{
	FILE *f = fopen(d->log, "r");
	assert_non_null(f);
	char  *buf = calloc(1, 1 << 20);
	size_t n   = fread(buf, 1, (1 << 20) - 1, f);
	buf[n]     = '\0';
	fclose(f);
	return buf;
}

// run_daemon_capture runs the daemon binary with args (at most 5 s),
// its output to a file, and returns its exit status (128 + signal; -1 if
// it had to be killed) with the output in out.
static int
run_daemon_capture(const char *const *args, char *out, size_t outlen)
{
	return fftd_test_daemon_run(args, 5000, out, outlen);
}

// write_conf writes text to a temporary config file; path receives its name.
static void
write_conf(char *path, const char *text)
{
	strcpy(path, "/tmp/fftd-test-remote-conf-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
	close(fd);
}

// --- setup
// ----------------------------------------------------------------------

// D_CONF and D_ARGS are D's config and command line (make_pki writes
// them).
static char        D_CONF[1536];
static const char *D_ARGS[TLS_ARGS];

// make_pki makes the certificates in a fresh PKI folder and D's config
// (client_ca = ca.pem) and command line (a tls+tcp:// listener), before D
// starts.
static int
make_pki(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(PKI, sizeof(PKI), "%s/fftd-test-pki-XXXXXX",
	    tmp != NULL && tmp[0] != '\0' && strlen(tmp) < 64 ? tmp : "/tmp");
	if (mkdtemp(PKI) == NULL) {
		fprintf(stderr, "mkdtemp %s: %s\n", PKI, strerror(errno));
		return -1;
	}
	char script[400];
	snprintf(script, sizeof(script), "%s/mkcerts.sh", PKI);
	FILE *f = fopen(script, "w");
	if (f == NULL) {
		return -1;
	}
	fputs(MKCERTS, f);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cd '%s' && sh ./mkcerts.sh", PKI);
	if (system(cmd) != 0) {
		fprintf(stderr,
		    "cannot make the test certificates with openssl (is it "
		    "installed?); its output:\n");
		snprintf(cmd, sizeof(cmd), "cat '%s/openssl.log' >&2", PKI);
		if (system(cmd) != 0) {
			fprintf(stderr, "(no openssl.log)\n");
		}
		return -1;
	}
	snprintf(D_CONF, sizeof(D_CONF),
	    "[tls]\ncert = %s\nkey = %s\nclient_ca = %s\n", pki("server.pem"),
	    pki("server.key"), pki("ca.pem"));
	return tls_args(D_ARGS, URL, sizeof(URL), NULL);
}

// remove_pki removes the PKI folder, after the daemons stopped.
static void
remove_pki(void)
{
	if (PKI[0] != '\0') {
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", PKI);
		if (system(cmd) != 0) {
			fprintf(stderr, "cannot remove %s\n", PKI);
		}
	}
}

// FX: the CA-verified daemon D (no client: the tests open their own); L is
// a test's own.
static fftd_test_fixture FX = {
	.daemon       = { { &D, NULL, D_CONF, D_ARGS } },
	.local        = &L,
	.before_start = make_pki,
	.after_stop   = remove_pki,
};

// --- tests
// ----------------------------------------------------------------------

// C2C over TLS with the allowed certificate: every rank-1 f64 case of the
// shared table, a rank-2 set in f32, and a larger batch, each against the
// long double FFTW reference.
static void
test_c2c_allowed_cert(void **state)
{
	(void) state;
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	fftd_client *c = open_expect(URL, FFTD_OK, NULL, NULL);
	assert_int_equal(fftd_test_run_cases(c, FFTD_C2C, 1, FFTD_F64, 0), 0);
	assert_int_equal(fftd_test_run_cases(c, FFTD_C2C, 2, FFTD_F32, 0), 0);
	one_c2c(c);
	fftd_client_close(c);
	// The key may also be in the certificate's file.
	tls_env("ca.pem", "alice-both.pem", NULL, "localhost");
	c = open_expect(URL, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
	fftd_test_print_summary("c2c over tls+tcp");
}

// A certificate the daemon does not trust is refused in the handshake,
// and the daemon goes on serving.
static void
test_unallowed_cert(void **state)
{
	(void) state;
	tls_env("ca.pem", "mallory.pem", "mallory.key", "localhost");
	open_expect(URL, FFTD_ENNGERR + NNG_ECRYPTO,
	    "refused the client certificate", "mallory.pem");
	tls_env("ca.pem", "eve.pem", "eve.key", "localhost");
	open_expect(
	    URL, ANY_ERROR, "refused the client certificate", "eve.pem");
	// Without a client certificate at all.
	tls_env("ca.pem", NULL, NULL, "localhost");
	open_expect(
	    URL, ANY_ERROR, "wants a client certificate", "FFTD_TLS_CERT");
	// A key that is not the certificate's.
	tls_env("ca.pem", "alice.pem", "bob.key", "localhost");
	open_expect(
	    URL, ANY_ERROR, "refused the client certificate", "alice.pem");
	assert_true(fftd_test_daemon_alive(&D));
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	fftd_client *c = open_expect(URL, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
}

// The client's own settings: FFTD_TLS_CA is required; files that cannot
// be read or are not PEM are FFTD_EINVAL naming the variable and file.
static void
test_client_settings(void **state)
{
	(void) state;
	tls_env(NULL, "alice.pem", "alice.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_CA is not set", NULL);
	setenv("FFTD_TLS_CA", "", 1); // empty is unset
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_CA is not set", NULL);
	tls_env("no-such-ca.pem", "alice.pem", "alice.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_CA=", "no-such-ca.pem");
	tls_env("mkcerts.sh", "alice.pem", "alice.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "mkcerts.sh", "not a PEM file");
	tls_env("ca.pem", "no-such-cert.pem", "alice.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_CERT=", "no-such-cert.pem");
	tls_env("ca.pem", "alice.pem", "no-such.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_KEY=", "no-such.key");
	tls_env("ca.pem", NULL, "alice.key", "localhost");
	open_expect(URL, FFTD_EINVAL, "FFTD_TLS_CERT is not", NULL);
	tls_env("ca.pem", "alice.pem", "alice.csr", "localhost");
	open_expect(URL, FFTD_EINVAL, "private key", NULL);
	// Nobody listening: the usual refusal.
	char none[64];
	snprintf(none, sizeof(none), "tls+tcp://127.0.0.1:%d", free_port());
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	open_expect(none, FFTD_ECONNREFUSED, NULL, NULL);
	assert_true(fftd_test_daemon_alive(&D));
}

// The daemon is verified: its certificate must chain to FFTD_TLS_CA and
// name the server (mbedTLS matches DNS names, not IP addresses).
static void
test_server_verified(void **state)
{
	(void) state;
	tls_env("rogue.pem", "alice.pem", "alice.key", "localhost");
	open_expect(URL, FFTD_ENNGERR + NNG_ECRYPTO,
	    "daemon's certificate does not verify", "rogue.pem");
	tls_env("ca.pem", "alice.pem", "alice.key", "gpu7.example");
	open_expect(URL, ANY_ERROR, "does not name 'gpu7.example'", NULL);
	tls_env("ca.pem", "alice.pem", "alice.key", NULL); // host 127.0.0.1
	open_expect(URL, ANY_ERROR, "'127.0.0.1'", "FFTD_TLS_SERVER_NAME");
	assert_true(fftd_test_daemon_alive(&D));
}

// client_ca may list self-signed client certificates instead of a CA:
// then exactly those clients get in.
static void
test_certificate_allow_list(void **state)
{
	(void) state;
	char list[400], conf[1536], url[128];
	snprintf(list, sizeof(list), "%s", pki("allowed.pem"));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", pki("bob.pem"), list);
	assert_int_equal(system(cmd), 0);
	snprintf(conf, sizeof(conf),
	    "[tls]\ncert = %s\nkey = %s\nclient_ca = %s\n", pki("server.pem"),
	    pki("server.key"), list);
	assert_int_equal(start_tls_daemon(&L, conf, url, sizeof(url), NULL), 0);
	tls_env("ca.pem", "bob.pem", "bob.key", "localhost");
	fftd_client *c = open_expect(url, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
	tls_env("ca.pem", "eve.pem", "eve.key", "localhost");
	open_expect(
	    url, ANY_ERROR, "refused the client certificate", "eve.pem");
	// alice's CA is not on this daemon's list.
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	open_expect(
	    url, ANY_ERROR, "refused the client certificate", "alice.pem");
	assert_true(fftd_test_daemon_alive(&L));
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// require_client_cert = no: no client_ca, any client that completes the
// handshake gets in, and the log says so.
static void
test_no_client_cert_required(void **state)
{
	(void) state;
	char conf[1536], url[128];
	snprintf(conf, sizeof(conf),
	    "[tls]\ncert = %s\nkey = %s\nrequire_client_cert = no\n",
	    pki("server.pem"), pki("server.key"));
	assert_int_equal(start_tls_daemon(&L, conf, url, sizeof(url), NULL), 0);
	char *log = read_log(&L);
	if (strstr(log, "warn") == NULL
	    || strstr(log, "without client certificates") == NULL) {
		fail_msg("no warning in the log:\n%s", log);
	}
	free(log);
	tls_env("ca.pem", NULL, NULL, "localhost");
	fftd_client *c = open_expect(url, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// [remote] allow that lists no loopback network: loopback peers are still
// admitted (tls+tcp:// and a plain tcp:// loopback listener, which
// [remote] allow_insecure = yes lets the daemon open).
static void
test_allow_list_keeps_loopback(void **state)
{
	(void) state;
	char conf[1536], url[128], plain[64];
	snprintf(conf, sizeof(conf),
	    "[tls]\ncert = %s\nkey = %s\nclient_ca = %s\n[remote]\nallow = "
	    "10.9.9.9, 2001:db8::/32\nallow_insecure = yes\n",
	    pki("server.pem"), pki("server.key"), pki("ca.pem"));
	snprintf(plain, sizeof(plain), "tcp://127.0.0.1:%d", free_port());
	assert_int_equal(
	    start_tls_daemon(&L, conf, url, sizeof(url), plain), 0);
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	fftd_client *c = open_expect(url, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
	tls_env(NULL, NULL, NULL, NULL); // plain tcp:// needs none
	c = open_expect(plain, FFTD_OK, NULL, NULL);
	one_c2c(c);
	fftd_client_close(c);
	char *log = read_log(&L);
	assert_null(strstr(log, "connection refused"));
	free(log);
	assert_int_equal(fftd_test_daemon_stop(&L), 0);
}

// local_addr finds an address of this machine that is not loopback (nor
// IPv6 link-local) in family af; writes it as text and returns 0, or -1.
static int
local_addr(int af, char *buf, size_t len)
{
	struct ifaddrs *list, *i;
	int             rv = -1;
	if (getifaddrs(&list) != 0) {
		return -1;
	}
	for (i = list; i != NULL && rv != 0; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != af) {
			continue;
		}
		if (af == AF_INET) {
			struct in_addr a
			    = ((struct sockaddr_in *) i->ifa_addr)->sin_addr;
			if ((ntohl(a.s_addr) >> 24) != 127
			    && inet_ntop(AF_INET, &a, buf, (socklen_t) len)) {
				rv = 0;
			}
		} else {
			struct in6_addr a
			    = ((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr;
			if (!IN6_IS_ADDR_LOOPBACK(&a)
			    && !IN6_IS_ADDR_LINKLOCAL(&a)
			    && !IN6_IS_ADDR_V4MAPPED(&a)
			    && inet_ntop(AF_INET6, &a, buf, (socklen_t) len)) {
				rv = 0;
			}
		}
	}
	freeifaddrs(list);
	return rv;
}

// network_of writes addr's network of prefix bits as "net/prefix".
static void
network_of(int af, const char *addr, int prefix, char *buf, size_t len)
{
	uint8_t a[16];
	char    text[INET6_ADDRSTRLEN];
	assert_int_equal(inet_pton(af, addr, a), 1);
	int bytes = af == AF_INET ? 4 : 16;
	for (int b = prefix; b < bytes * 8; b++) {
		a[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
	}
	assert_non_null(inet_ntop(af, a, text, sizeof(text)));
	snprintf(buf, len, "%s/%d", text, prefix);
}

// [remote] allow end to end: a client that connects to one of this
// machine's own non-loopback addresses has that address as its peer
// address, so it is refused unless allow lists it (or its network).
// Skipped on a machine with no such address.
static void
test_network_allow_list(void **state)
{
	(void) state;
	char v4[INET6_ADDRSTRLEN], v6[INET6_ADDRSTRLEN];
	bool have4 = local_addr(AF_INET, v4, sizeof(v4)) == 0;
	bool have6 = local_addr(AF_INET6, v6, sizeof(v6)) == 0;
	if (!have4 && !have6) {
		print_message("    no non-loopback address here: skipped\n");
		skip();
	}
	char url4[128] = "", url6[128] = "";
	if (have4) {
		snprintf(
		    url4, sizeof(url4), "tls+tcp://%s:%d", v4, free_port());
	}
	if (have6) {
		snprintf(
		    url6, sizeof(url6), "tls+tcp://[%s]:%d", v6, free_port());
	}
	char net4[64] = "", net6[80] = "";
	if (have4) {
		network_of(AF_INET, v4, 24, net4, sizeof(net4));
	}
	if (have6) {
		network_of(AF_INET6, v6, 64, net6, sizeof(net6));
	}
	tls_env("ca.pem", "alice.pem", "alice.key", "localhost");
	for (int round = 0; round < 2; round++) {
		// Round 0: allow lists other networks; round 1: ours too.
		char conf[2048];
		snprintf(conf, sizeof(conf),
		    "[tls]\ncert = %s\nkey = %s\nclient_ca = %s\n[remote]\n"
		    "allow = 10.9.9.9, 2001:db8::/32\nallow = %s %s\n",
		    pki("server.pem"), pki("server.key"), pki("ca.pem"),
		    round ? net4 : "", round ? net6 : "");
		const char *args[]
		    = { "--backend", "fftw", "--listen", have4 ? url4 : url6,
			      "--listen", have6 ? url6 : url4, NULL };
		assert_int_equal(fftd_test_daemon_start(&L, conf, args), 0);
		for (int f = 0; f < 2; f++) {
			const char *u    = f == 0 ? url4 : url6;
			const char *addr = f == 0 ? v4 : v6;
			if (u[0] == '\0') {
				continue;
			}
			if (round == 1) {
				fftd_client *c  = NULL;
				int          rv = fftd_client_open(&c, u, 5000);
				if (rv != FFTD_OK) {
					fail_msg("%s (allow %s %s): %s (%s)", u,
					    net4, net6, fftd_err_name(rv),
					    fftd_last_error());
				}
				one_c2c(c);
				fftd_client_close(c);
				continue;
			}
			// Refused with a reason, in this process: the client
			// closes the connection itself (a daemon that hung
			// up could leave NNG unable to close sockets here).
			char says[160];
			snprintf(says, sizeof(says),
			    "connection refused: client address %s ", addr);
			open_expect(u, FFTD_EREFUSED, says, "[remote] allow");
			char  want[160];
			char *log = read_log(&L);
			snprintf(want, sizeof(want),
			    "connection refused: client address %s ", addr);
			if (strstr(log, want) == NULL) {
				fail_msg("no '%s' in the log:\n%s", want, log);
			}
			free(log);
		}
		// Loopback clients of the same daemon are not affected.
		fftd_client *c = open_expect(L.url, FFTD_OK, NULL, NULL);
		one_c2c(c);
		fftd_client_close(c);
		assert_int_equal(fftd_test_daemon_stop(&L), 0);
	}
}

// The daemon refuses to start with an unsafe or broken remote setup, with
// a message that says what to do.
static void
test_startup_refusals(void **state)
{
	(void) state;
	char out[8192], path[64], conf[1536], listen[64];
	int  port = free_port();
	snprintf(listen, sizeof(listen), "tcp://0.0.0.0:%d", port);
	const char *open_tcp[]
	    = { "--backend", "fftw", "--listen", listen, NULL };
	int code = run_daemon_capture(open_tcp, out, sizeof(out));
	if (!(code > 0 && code < 128) || strstr(out, "loopback") == NULL
	    || strstr(out, "tls+tcp://0.0.0.0") == NULL) {
		fail_msg(
		    "plain tcp on 0.0.0.0: status %d, output:\n%s", code, out);
	}
	// Loopback tcp:// and abstract:// admit every local user: refused
	// unless [remote] allow_insecure = yes (issue 14, defect 8; the
	// test above shows them working with it).
	snprintf(listen, sizeof(listen), "tcp://127.0.0.1:%d", port);
	code = run_daemon_capture(open_tcp, out, sizeof(out));
	if (!(code > 0 && code < 128) || strstr(out, "allow_insecure") == NULL
	    || strstr(out, "every local user") == NULL) {
		fail_msg("plain tcp on 127.0.0.1: status %d, output:\n%s", code,
		    out);
	}
	snprintf(listen, sizeof(listen), "abstract://fftd-test-%d", port);
	code = run_daemon_capture(open_tcp, out, sizeof(out));
	if (!(code > 0 && code < 128)
	    || strstr(out, "allow_insecure") == NULL) {
		fail_msg("abstract://: status %d, output:\n%s", code, out);
	}
	snprintf(listen, sizeof(listen), "tls+tcp://127.0.0.1:%d", port);
	const char *with_conf[] = { "--config", path, "--backend", "fftw",
		"--listen", listen, NULL };
	static const struct {
		const char *fmt; // %s: the PKI folder
		const char *says;
	} bad[] = {
		{ "[tls]\ncert = %s/no-such-server.pem\nclient_ca = "
		  "%s/ca.pem\n",
		    "no-such-server.pem" },
		{ "[tls]\ncert = %s/server.pem\nkey = %s/no-such.key\n"
		  "client_ca = %s/ca.pem\n",
		    "no-such.key" },
		{ "[tls]\ncert = %s/server.pem\nkey = %s/server.key\n"
		  "client_ca = %s/no-such-ca.pem\n",
		    "no-such-ca.pem" },
		{ "[tls]\ncert = %s/server.pem\nkey = %s/server.key\n",
		    "client_ca is not set" },
		{ "[tls]\nkey = %s/server.key\n", "[tls] cert is not set" },
		{ "[tls]\ncert = %s/server.pem\nkey = %s/ca.pem\nclient_ca = "
		  "%s/ca.pem\n",
		    "private key" },
		{ "[remote]\nallow = 10.1.0.0/16, 10.2.0.0/33\n",
		    "10.2.0.0/33" },
		{ "[tls]\nrequire_client_cert = perhaps\n",
		    "require_client_cert" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(conf, sizeof(conf), bad[i].fmt, PKI, PKI, PKI);
		write_conf(path, conf);
		code = run_daemon_capture(with_conf, out, sizeof(out));
		unlink(path);
		if (!(code > 0 && code < 128)
		    || strstr(out, bad[i].says) == NULL) {
			fail_msg("config %zu:\n%sstatus %d, want an error "
			         "saying '%s'; output:\n%s",
			    i, conf, code, bad[i].says, out);
		}
	}
}

// The shared daemon served every client above and exits 0 on SIGTERM
// (under ASan: without leaks).
static void
test_shared_daemon_exits_cleanly(void **state)
{
	(void) state;
	assert_true(fftd_test_daemon_alive(&D));
	assert_int_equal(fftd_test_daemon_stop(&D), 0);
}

int
main(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	(void) fftd_test_seed();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c2c_allowed_cert),
		cmocka_unit_test(test_unallowed_cert),
		cmocka_unit_test(test_client_settings),
		cmocka_unit_test(test_server_verified),
		cmocka_unit_test_teardown(
		    test_certificate_allow_list, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_no_client_cert_required, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_allow_list_keeps_loopback, fftd_test_local_teardown),
		cmocka_unit_test_teardown(
		    test_network_allow_list, fftd_test_local_teardown),
		cmocka_unit_test(test_startup_refusals),
		cmocka_unit_test(test_shared_daemon_exits_cleanly),
	};
	return fftd_test_run_group("remote", tests, &FX);
}

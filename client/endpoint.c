// SPDX-License-Identifier: MIT
//
// dial.c — connecting a client socket to one daemon (dial.h). Plain URLs
// go to nng_dial; tls+tcp:// (and wss://) URLs get a dialer with a client
// TLS configuration built from the environment:
//
//   FFTD_TLS_CA           PEM file of the CA(s) that signed the daemon's
//                         certificate (required: the daemon is verified)
//   FFTD_TLS_CERT         PEM file of this client's certificate (optional;
//                         daemons normally require one)
//   FFTD_TLS_KEY          its private key, unencrypted (default: in
//                         FFTD_TLS_CERT)
//   FFTD_TLS_SERVER_NAME  name to check the daemon's certificate against
//                         (default: the URL's host)

#include "dial.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "fftd.h"

// PEM files larger than this are not certificates or keys.
#define PEM_MAX (1u << 20)

static int
map_dial_error(int rv)
{
	return rv == NNG_ECONNREFUSED || rv == NNG_ENOENT
	        || rv == NNG_EADDRINVAL
	    ? FFTD_ECONNREFUSED
	    : FFTD_ENNGERR + rv;
}

static bool
is_tls_url(const char *url)
{
	static const char *const schemes[] = { "tls+tcp://", "tls+tcp4://",
		"tls+tcp6://", "wss://", "wss4://", "wss6://", NULL };
	for (int i = 0; schemes[i] != NULL; i++) {
		if (strncmp(url, schemes[i], strlen(schemes[i])) == 0) {
			return true;
		}
	}
	return false;
}

// env returns the variable's value, or NULL when unset or empty.
static const char *
env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : NULL;
}

// read_pem reads the PEM file named by variable var whole, NUL-terminated,
// into *out (malloc'd).
static int
read_pem(
    const char *var, const char *path, char **out, char *msg, size_t msglen)
{
	*out    = NULL;
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(msg, msglen, "%s=%s: cannot read: %s", var, path,
		    strerror(errno));
		return FFTD_EINVAL;
	}
	char  *buf = malloc(PEM_MAX + 1);
	size_t n   = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
	int    bad = buf == NULL || ferror(f);
	fclose(f);
	if (bad || n > PEM_MAX) {
		snprintf(msg, msglen, "%s=%s: %s", var, path,
		    buf == NULL ? "out of memory"
		        : bad   ? "read error"
		                : "too large for a PEM file");
		free(buf);
		return buf == NULL ? FFTD_ENOMEM : FFTD_EINVAL;
	}
	buf[n] = '\0';
	if (strstr(buf, "-----BEGIN ") == NULL) {
		snprintf(msg, msglen, "%s=%s: not a PEM file", var, path);
		free(buf);
		return FFTD_EINVAL;
	}
	*out = buf;
	return FFTD_OK;
}

// tls_config builds the client TLS configuration for url from the
// environment.
static int
tls_config(const char *url, nng_tls_config **cfgp, char *msg, size_t msglen)
{
	const char     *ca_path   = env("FFTD_TLS_CA");
	const char     *cert_path = env("FFTD_TLS_CERT");
	const char     *key_path  = env("FFTD_TLS_KEY");
	const char     *name      = env("FFTD_TLS_SERVER_NAME");
	char           *ca = NULL, *cert = NULL, *key = NULL;
	nng_tls_config *cfg    = NULL;
	nng_url        *u      = NULL;
	int             status = FFTD_EINVAL, rv;

	*cfgp = NULL;
	if (ca_path == NULL) {
		snprintf(msg, msglen,
		    "FFTD_TLS_CA is not set: a tls+tcp:// daemon is verified "
		    "against the CA certificate(s) in the PEM file it names");
		return FFTD_EINVAL;
	}
	if (key_path != NULL && cert_path == NULL) {
		snprintf(msg, msglen,
		    "FFTD_TLS_KEY is set but FFTD_TLS_CERT is not");
		return FFTD_EINVAL;
	}
	if ((status = read_pem("FFTD_TLS_CA", ca_path, &ca, msg, msglen))
	        != FFTD_OK
	    || (cert_path != NULL
	        && ((status = read_pem(
	                 "FFTD_TLS_CERT", cert_path, &cert, msg, msglen))
	                != FFTD_OK
	            || (status = read_pem(
	                    key_path ? "FFTD_TLS_KEY" : "FFTD_TLS_CERT",
	                    key_path ? key_path : cert_path, &key, msg, msglen))
	                != FFTD_OK))) {
		goto out;
	}
	status = FFTD_EINVAL;
	if (name == NULL) {
		if ((rv = nng_url_parse(&u, url)) != 0) {
			snprintf(msg, msglen, "%s", nng_strerror(rv));
			goto out;
		}
		name = u->u_hostname;
	}
	if ((rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT)) != 0) {
		snprintf(msg, msglen,
		    "no TLS in this NNG build (%s, engine %s)",
		    nng_strerror(rv), nng_tls_engine_name());
		status = FFTD_ENNGERR + rv;
		goto out;
	}
	if ((rv = nng_tls_config_ca_chain(cfg, ca, NULL)) != 0) {
		snprintf(msg, msglen,
		    "FFTD_TLS_CA=%s: not PEM certificates (%s)", ca_path,
		    nng_strerror(rv));
		goto out;
	}
	if (cert != NULL
	    && (rv = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0) {
		snprintf(msg, msglen,
		    "FFTD_TLS_CERT=%s, FFTD_TLS_KEY=%s: not a PEM certificate "
		    "and its unencrypted private key (%s)",
		    cert_path, key_path ? key_path : cert_path,
		    nng_strerror(rv));
		goto out;
	}
	if ((rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED))
	        != 0
	    || (rv = nng_tls_config_server_name(cfg, name)) != 0) {
		snprintf(
		    msg, msglen, "TLS configuration: %s", nng_strerror(rv));
		goto out;
	}
	*cfgp  = cfg;
	cfg    = NULL;
	status = FFTD_OK;
out:
	if (cfg != NULL) {
		nng_tls_config_free(cfg);
	}
	if (u != NULL) {
		nng_url_free(u);
	}
	free(ca);
	free(cert);
	free(key);
	return status;
}

// probe_server_only dials url once more on a socket of its own with the
// daemon's certificate left unverified, to tell the two handshake failures
// apart that mbedTLS reports alike (NNG_ECRYPTO): the daemon's certificate
// failing verification, and the daemon refusing ours. Returns true when the
// handshake succeeds that way (so the daemon's certificate was the
// problem). Nothing but the SP header is sent, and the socket is closed at
// once.
static bool
probe_server_only(const char *url)
{
	nng_socket      s;
	nng_dialer      d;
	nng_tls_config *cfg;
	char            msg[256];
	bool            ok = false;
	if (tls_config(url, &cfg, msg, sizeof(msg)) != FFTD_OK) {
		return false;
	}
	if (nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_NONE) == 0
	    && nng_req0_open(&s) == 0) {
		if (nng_dialer_create(&d, s, url) == 0
		    && nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg) == 0) {
			ok = nng_dialer_start(d, 0) == 0;
		}
		nng_close(s);
	}
	nng_tls_config_free(cfg);
	return ok;
}

// tls_failure explains a failed TLS dial (rv from nng_dialer_start).
static int
tls_failure(int rv, const char *url, char *msg, size_t msglen)
{
	const char *cert = env("FFTD_TLS_CERT");
	const char *name = env("FFTD_TLS_SERVER_NAME");
	nng_url    *u    = NULL;
	switch (rv) {
	case NNG_EPEERAUTH:
	case NNG_ECRYPTO:
	case NNG_ECONNSHUT:
	case NNG_ECLOSED:
	case NNG_ECONNRESET:
		break;
	default:
		snprintf(msg, msglen, "%s", nng_strerror(rv));
		return map_dial_error(rv);
	}
	if (name == NULL && nng_url_parse(&u, url) == 0) {
		name = u->u_hostname;
	}
	if (probe_server_only(url)) {
		uint8_t ip[16];
		bool    literal = name != NULL
		    && (inet_pton(AF_INET, name, ip) == 1
		        || inet_pton(AF_INET6, name, ip) == 1);
		snprintf(msg, msglen,
		    "TLS handshake failed (%s): the daemon's certificate does "
		    "not verify against FFTD_TLS_CA=%s or does not name "
		    "'%s'%s",
		    nng_strerror(rv), env("FFTD_TLS_CA"), name ? name : "",
		    literal ? " (IP addresses are not matched: set "
		              "FFTD_TLS_SERVER_NAME to its DNS name)"
		            : "");
	} else if (cert != NULL) {
		snprintf(msg, msglen,
		    "TLS handshake failed (%s): the daemon refused the client "
		    "certificate FFTD_TLS_CERT=%s (not in its client_ca, or "
		    "not the key's), or it does not speak TLS here",
		    nng_strerror(rv), cert);
	} else {
		snprintf(msg, msglen,
		    "TLS handshake failed (%s): the daemon wants a client "
		    "certificate (set FFTD_TLS_CERT and FFTD_TLS_KEY), or it "
		    "does not speak TLS here",
		    nng_strerror(rv));
	}
	if (u != NULL) {
		nng_url_free(u);
	}
	return FFTD_ENNGERR + rv;
}

int
fftd__client_dial(nng_socket sock, const char *url, char *msg, size_t msglen)
{
	int rv;
	if (!is_tls_url(url)) {
		if ((rv = nng_dial(sock, url, NULL, 0)) == 0) {
			return FFTD_OK;
		}
		snprintf(msg, msglen, "%s", nng_strerror(rv));
		return map_dial_error(rv);
	}
	nng_tls_config *cfg;
	nng_dialer      d;
	if ((rv = tls_config(url, &cfg, msg, msglen)) != FFTD_OK) {
		return rv;
	}
	if ((rv = nng_dialer_create(&d, sock, url)) != 0) {
		nng_tls_config_free(cfg);
		snprintf(msg, msglen, "%s", nng_strerror(rv));
		return rv == NNG_ENOTSUP ? FFTD_EINVAL : map_dial_error(rv);
	}
	// The dialer takes its own hold on the configuration.
	rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg);
	nng_tls_config_free(cfg);
	if (rv != 0) {
		nng_dialer_close(d);
		snprintf(msg, msglen, "cannot set the TLS configuration: %s",
		    nng_strerror(rv));
		return FFTD_ENNGERR + rv;
	}
	if ((rv = nng_dialer_start(d, 0)) != 0) {
		nng_dialer_close(d);
		return tls_failure(rv, url, msg, msglen);
	}
	return FFTD_OK;
}

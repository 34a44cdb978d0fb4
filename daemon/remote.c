// SPDX-License-Identifier: MIT
//
// remote.c — listeners for remote clients (remote.h): the loopback rule for
// plain tcp:// (and [remote] allow_insecure, without which loopback tcp://
// and abstract:// listeners are refused), the server TLS configuration of
// tls+tcp:// listeners, and the [remote] allow list (parser, matcher, and the
// per-connection check).

#include "remote.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nng/supplemental/tls/tls.h>

#include "fftd.h"
#include "log.h"

// PEM files larger than this are not certificates or keys.
#define PEM_MAX (1u << 20)

// --- addresses
// ----------------------------------------------------------------

static const uint8_t v4_mapped_prefix[12]
    = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

// unmap turns an IPv4-mapped IPv6 address into IPv4 (in place in *family
// and addr); others are left as they are.
static void
unmap(int *family, uint8_t *addr)
{
	if (*family == 6 && memcmp(addr, v4_mapped_prefix, 12) == 0) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = 4;
	}
}

bool
fftd__remote_is_loopback(int family, const uint8_t *addr)
{
	uint8_t a[16] = { 0 };
	memcpy(a, addr, family == 4 ? 4 : 16);
	unmap(&family, a);
	if (family == 4) {
		return a[0] == 127;
	}
	static const uint8_t one[16] = { [15] = 1 };
	return family == 6 && memcmp(a, one, 16) == 0;
}

// prefix_equal says whether the first bits bits of a and b are equal.
static bool
prefix_equal(const uint8_t *a, const uint8_t *b, int bits)
{
	int whole = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t) whole) != 0) {
		return false;
	}
	if (rest == 0) {
		return true;
	}
	uint8_t mask = (uint8_t) (0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

bool
fftd__remote_match(
    const fftd__netmask *list, int n, int family, const uint8_t *addr)
{
	uint8_t a[16] = { 0 };
	if (family != 4 && family != 6) {
		return false;
	}
	memcpy(a, addr, family == 4 ? 4 : 16);
	unmap(&family, a);
	for (int i = 0; i < n; i++) {
		if (list[i].family == family
		    && prefix_equal(list[i].addr, a, list[i].prefix)) {
			return true;
		}
	}
	return false;
}

// format_addr writes addr (family 4 or 6) as text.
static void
format_addr(int family, const uint8_t *addr, char *buf, size_t len)
{
	if (inet_ntop(
	        family == 4 ? AF_INET : AF_INET6, addr, buf, (socklen_t) len)
	    == NULL) {
		snprintf(buf, len, "?");
	}
}

// parse_entry parses one allow-list entry: an address, or address/prefix.
static int
parse_entry(const char *s, fftd__netmask *m, char *err, size_t errlen)
{
	char        text[INET6_ADDRSTRLEN + 8];
	const char *slash  = strchr(s, '/');
	size_t      alen   = slash ? (size_t) (slash - s) : strlen(s);
	int         prefix = -1;
	memset(m, 0, sizeof(*m));
	if (alen == 0 || alen >= INET6_ADDRSTRLEN) {
		snprintf(
		    err, errlen, "'%s' is not an IP address or network", s);
		return -1;
	}
	memcpy(text, s, alen);
	text[alen] = '\0';
	if (inet_pton(AF_INET, text, m->addr) == 1) {
		m->family = 4;
	} else if (inet_pton(AF_INET6, text, m->addr) == 1) {
		m->family = 6;
	} else {
		snprintf(err, errlen,
		    "'%s' is not an IP address or network (write "
		    "10.1.0.0/16, 192.168.7.12 or 2001:db8::/32)",
		    s);
		return -1;
	}
	int max = m->family == 4 ? 32 : 128;
	if (slash != NULL) {
		const char *p = slash + 1;
		prefix        = 0;
		if (*p == '\0' || strlen(p) > 3) {
			prefix = -1;
		}
		for (; prefix >= 0 && *p != '\0'; p++) {
			if (!isdigit((unsigned char) *p)) {
				prefix = -1;
				break;
			}
			prefix = prefix * 10 + (*p - '0');
		}
		if (prefix < 0 || prefix > max) {
			snprintf(err, errlen,
			    "'%s': the prefix length must be 0..%d", s, max);
			return -1;
		}
	} else {
		prefix = max;
	}
	m->prefix = prefix;
	if (m->family == 6 && memcmp(m->addr, v4_mapped_prefix, 12) == 0
	    && prefix >= 96) {
		unmap(&m->family, m->addr);
		m->prefix = prefix - 96;
	}
	// Bits past the prefix must be zero: 10.1.2.0/16 is a typo for a
	// network, and silently widening it would admit more than meant.
	int     bytes = m->family == 4 ? 4 : 16;
	uint8_t net[16];
	memset(net, 0, sizeof(net));
	for (int b = 0; b < m->prefix; b++) {
		net[b / 8] |= (uint8_t) (m->addr[b / 8] & (0x80 >> (b % 8)));
	}
	if (memcmp(net, m->addr, (size_t) bytes) != 0) {
		char shown[INET6_ADDRSTRLEN];
		format_addr(m->family, net, shown, sizeof(shown));
		snprintf(err, errlen,
		    "'%s' has address bits set past the prefix (the network "
		    "is %s/%d)",
		    s, shown, m->prefix);
		return -1;
	}
	return 0;
}

int
fftd__remote_parse_allow(const char *text, fftd__netmask *list, int max, int *n,
    char *err, size_t errlen)
{
	int         count = *n;
	const char *p     = text;
	for (;;) {
		while (*p == ',' || isspace((unsigned char) *p)) {
			p++;
		}
		if (*p == '\0') {
			break;
		}
		const char *end = p;
		while (*end != '\0' && *end != ','
		    && !isspace((unsigned char) *end)) {
			end++;
		}
		char   entry[INET6_ADDRSTRLEN + 8];
		size_t len = (size_t) (end - p);
		if (len >= sizeof(entry)) {
			snprintf(err, errlen,
			    "'%.*s...' is not an IP address or network", 40, p);
			return -1;
		}
		memcpy(entry, p, len);
		entry[len] = '\0';
		if (count >= max) {
			snprintf(err, errlen,
			    "more than %d entries in [remote] allow", max);
			return -1;
		}
		if (parse_entry(entry, &list[count], err, errlen) != 0) {
			return -1;
		}
		count++;
		p = end;
	}
	*n = count;
	return 0;
}

// --- listeners
// ------------------------------------------------------------------

// has_scheme says whether url begins with one of the schemes (each given
// with its "://").
static bool
has_scheme(const char *url, const char *const *schemes)
{
	for (int i = 0; schemes[i] != NULL; i++) {
		if (strncmp(url, schemes[i], strlen(schemes[i])) == 0) {
			return true;
		}
	}
	return false;
}

static const char *const tls_schemes[] = { "tls+tcp://", "tls+tcp4://",
	"tls+tcp6://", "wss://", "wss4://", "wss6://", NULL };
static const char *const plain_schemes[]
    = { "tcp://", "tcp4://", "tcp6://", "ws://", "ws4://", "ws6://", NULL };

// host_is_loopback says whether a URL's host name is a loopback address
// or "localhost". "" and "*" (every address) are not.
static bool
host_is_loopback(const char *host)
{
	uint8_t a[16];
	if (strcasecmp(host, "localhost") == 0) {
		return true;
	}
	if (inet_pton(AF_INET, host, a) == 1) {
		return fftd__remote_is_loopback(4, a);
	}
	if (inet_pton(AF_INET6, host, a) == 1) {
		return fftd__remote_is_loopback(6, a);
	}
	return false;
}

// read_pem reads a PEM file whole, NUL-terminated, into *out (malloc'd).
static int
read_pem(
    const char *what, const char *path, char **out, char *err, size_t errlen)
{
	*out    = NULL;
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err, errlen, "[tls] %s %s: cannot read: %s", what,
		    path, strerror(errno));
		return FFTD_EINVAL;
	}
	char  *buf = malloc(PEM_MAX + 1);
	size_t n   = buf ? fread(buf, 1, PEM_MAX + 1, f) : 0;
	int    bad = buf == NULL || ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "[tls] %s %s: cannot read: %s", what,
		    path, buf ? "read error" : "out of memory");
		free(buf);
		return FFTD_EINVAL;
	}
	if (n > PEM_MAX) {
		snprintf(err, errlen, "[tls] %s %s: larger than %u bytes", what,
		    path, PEM_MAX);
		free(buf);
		return FFTD_EINVAL;
	}
	buf[n] = '\0';
	if (strstr(buf, "-----BEGIN ") == NULL) {
		snprintf(
		    err, errlen, "[tls] %s %s: not a PEM file", what, path);
		free(buf);
		return FFTD_EINVAL;
	}
	*out = buf;
	return FFTD_OK;
}

// tls_setup builds the server TLS configuration of a tls+tcp:// listener
// and gives it to l.
static int
tls_setup(nng_listener l, const char *url, const fftd__config *cfg, char *err,
    size_t errlen)
{
	char           *cert = NULL, *key = NULL, *ca = NULL;
	nng_tls_config *tls = NULL;
	int             rv, status = FFTD_EINVAL;
	const char *keypath = cfg->tls_key[0] ? cfg->tls_key : cfg->tls_cert;

	if (cfg->tls_cert[0] == '\0') {
		snprintf(err, errlen,
		    "%s: [tls] cert is not set (the daemon's PEM certificate; "
		    "[tls] key its private key, unless it is in the same "
		    "file)",
		    url);
		return FFTD_EINVAL;
	}
	if (cfg->tls_client_ca[0] == '\0' && cfg->tls_require_client_cert) {
		snprintf(err, errlen,
		    "%s: [tls] client_ca is not set, so clients could not be "
		    "authenticated; name the CA (or the allowed client "
		    "certificates) in client_ca, or set require_client_cert "
		    "= no to accept clients without certificates",
		    url);
		return FFTD_EINVAL;
	}
	if (read_pem("cert", cfg->tls_cert, &cert, err, errlen) != FFTD_OK
	    || read_pem(cfg->tls_key[0] ? "key" : "cert (for the key)", keypath,
	           &key, err, errlen)
	        != FFTD_OK
	    || (cfg->tls_client_ca[0] != '\0'
	        && read_pem("client_ca", cfg->tls_client_ca, &ca, err, errlen)
	            != FFTD_OK)) {
		goto out;
	}
	if ((rv = nng_tls_config_alloc(&tls, NNG_TLS_MODE_SERVER)) != 0) {
		snprintf(err, errlen,
		    "%s: no TLS in this NNG build (%s, "
		    "engine %s)",
		    url, nng_strerror(rv), nng_tls_engine_name());
		status = FFTD_ENNGERR + rv;
		goto out;
	}
	if ((rv = nng_tls_config_own_cert(tls, cert, key, NULL)) != 0) {
		snprintf(err, errlen,
		    "[tls] cert %s, key %s: not a PEM certificate and its "
		    "unencrypted private key (%s)",
		    cfg->tls_cert, keypath, nng_strerror(rv));
		goto out;
	}
	if (ca != NULL) {
		if ((rv = nng_tls_config_ca_chain(tls, ca, NULL)) != 0) {
			snprintf(err, errlen,
			    "[tls] client_ca %s: not PEM certificates (%s)",
			    cfg->tls_client_ca, nng_strerror(rv));
			goto out;
		}
		rv = nng_tls_config_auth_mode(tls, NNG_TLS_AUTH_MODE_REQUIRED);
	} else {
		rv = nng_tls_config_auth_mode(tls, NNG_TLS_AUTH_MODE_NONE);
	}
	if (rv != 0) {
		snprintf(err, errlen, "%s: TLS auth mode: %s", url,
		    nng_strerror(rv));
		status = FFTD_ENNGERR + rv;
		goto out;
	}
	// The listener takes its own hold on the configuration (and drops
	// it when closed); ours goes below.
	if ((rv = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, tls)) != 0) {
		snprintf(err, errlen,
		    "%s: cannot set the TLS configuration: %s", url,
		    nng_strerror(rv));
		status = FFTD_ENNGERR + rv;
		goto out;
	}
	if (ca != NULL) {
		fftd__log(FFTD_LOG_INFO,
		    "%s: TLS with certificate %s; clients must present a "
		    "certificate that verifies against %s",
		    url, cfg->tls_cert, cfg->tls_client_ca);
	} else {
		fftd__log(FFTD_LOG_WARN,
		    "%s: TLS without client certificates (require_client_cert "
		    "= no): any client that reaches this address%s may use "
		    "the daemon",
		    url, cfg->nallow > 0 ? " from [remote] allow" : "");
	}
	status = FFTD_OK;
out:
	if (tls != NULL) {
		nng_tls_config_free(tls);
	}
	free(cert);
	free(key);
	free(ca);
	return status;
}

// insecure_ok admits a loopback tcp:// or ws:// listener, or an
// abstract:// one, only when [remote] allow_insecure is set: any local
// user can connect to them (no socket file whose mode would say who), and
// a TCP session has no peer uid, so [weights] cannot apply to it.
static int
insecure_ok(const char *url, const fftd__config *cfg, char *err, size_t errlen)
{
	if (!cfg->remote_allow_insecure) {
		snprintf(err, errlen,
		    "%s: this listener admits every local user (no socket "
		    "file mode and no peer uid, so [weights] cannot apply); "
		    "listen on ipc:// or on tls+tcp:// with client "
		    "certificates, or set [remote] allow_insecure = yes to "
		    "accept that risk",
		    url);
		return FFTD_EINVAL;
	}
	fftd__log(FFTD_LOG_WARN,
	    "%s: [remote] allow_insecure = yes: every local user may use the "
	    "daemon through this listener, with weight 1",
	    url);
	return FFTD_OK;
}

int
fftd__remote_listener_setup(nng_listener l, const char *url,
    const fftd__config *cfg, char *err, size_t errlen)
{
	if (has_scheme(url, tls_schemes)) {
		return tls_setup(l, url, cfg, err, errlen);
	}
	bool abstract = strncmp(url, "abstract://", 11) == 0;
	if (!abstract && !has_scheme(url, plain_schemes)) {
		return FFTD_OK; // ipc://, inproc://
	}
	if (abstract) {
		return insecure_ok(url, cfg, err, errlen);
	}
	nng_url *u;
	int      rv = nng_url_parse(&u, url);
	if (rv != 0) {
		snprintf(err, errlen, "%s: %s", url, nng_strerror(rv));
		return FFTD_EINVAL;
	}
	bool ok = host_is_loopback(u->u_hostname);
	nng_url_free(u);
	if (!ok) {
		const char *rest = strstr(url, "://") + 3;
		bool        ws   = url[0] == 'w';
		snprintf(err, errlen,
		    "%s: plain %s:// is only for loopback addresses "
		    "(127.0.0.0/8, ::1, localhost); for remote clients listen "
		    "on %s://%s with [tls] cert, key and client_ca",
		    url, ws ? "ws" : "tcp", ws ? "wss" : "tls+tcp", rest);
		return FFTD_EINVAL;
	}
	return insecure_ok(url, cfg, err, errlen);
}

// --- connections
// ------------------------------------------------------------------

bool
fftd__remote_allowed(
    nng_pipe p, const fftd__config *cfg, char *why, size_t whylen)
{
	nng_sockaddr sa;
	int          rv;
	memset(&sa, 0, sizeof(sa));
	if ((rv = nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa)) != 0) {
		// Only network transports have a peer address worth checking;
		// a local pipe without one is admitted, any other is not.
		char        *url = NULL;
		nng_listener l   = nng_pipe_listener(p);
		bool local = nng_listener_get_string(l, NNG_OPT_URL, &url) == 0
		    && (strncmp(url, "ipc://", 6) == 0
		        || strncmp(url, "inproc://", 9) == 0
		        || strncmp(url, "abstract://", 11) == 0);
		if (url != NULL) {
			nng_strfree(url);
		}
		if (!local) {
			snprintf(why, whylen,
			    "pipe %d: cannot read the peer address: %s",
			    nng_pipe_id(p), nng_strerror(rv));
		}
		return local;
	}
	int      family;
	uint8_t  addr[16] = { 0 };
	unsigned port;
	switch (sa.s_family) {
	case NNG_AF_INET:
		family = 4;
		memcpy(addr, &sa.s_in.sa_addr, 4);
		port = ntohs(sa.s_in.sa_port);
		break;
	case NNG_AF_INET6:
		family = 6;
		memcpy(addr, sa.s_in6.sa_addr, 16);
		port = ntohs(sa.s_in6.sa_port);
		break;
	default:
		return true; // ipc, inproc, abstract: local by construction
	}
	if (fftd__remote_is_loopback(family, addr) || cfg->nallow == 0
	    || fftd__remote_match(cfg->allow, cfg->nallow, family, addr)) {
		return true;
	}
	char text[INET6_ADDRSTRLEN];
	unmap(&family, addr);
	format_addr(family, addr, text, sizeof(text));
	snprintf(why, whylen,
	    "client address %s (port %u) is not in [remote] allow", text, port);
	return false;
}

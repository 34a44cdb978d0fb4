// SPDX-License-Identifier: MIT
//
// endpoint.c — libfftd's endpoints, one per daemon of the client's URL
// list: the list itself (fftd_default_url, fftd__parse_urls), each
// endpoint's socket, its pipe callbacks (the daemon session it is on) and
// its hello (fftd__ep_open, the daemon's info, merged over several), and
// dialing one URL (fftd__client_dial). client.c opens and closes the
// endpoints; plan.c and exec.c read their sessions. Plain URLs
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

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>

#include "client_impl.h"
#include "fftd.h"

// PEM files larger than this are not certificates or keys.
#define PEM_MAX (1u << 20)

// map_dial_error turns nng_dial's error into an fftd_error code.
static int
map_dial_error(int rv)
{
	return rv == NNG_ECONNREFUSED || rv == NNG_ENOENT
	        || rv == NNG_EADDRINVAL
	    ? FFTD_ECONNREFUSED
	    : FFTD_ENNGERR + rv;
}

// is_tls_url says whether url needs a TLS configuration.
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

// fftd__client_dial dials url on sock (client_impl.h).
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

// --- URL lists and endpoints -------------------------------------------------

#define SYSTEM_URL "ipc:///run/fftd/fftd.sock"

// fftd_default_url: see fftd.h ($FFTD_URL, the system socket, the
// per-user one).
int
fftd_default_url(char *buf, size_t len)
{
	const char *env = getenv("FFTD_URL");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int         n;
	if (env != NULL && env[0] != '\0') {
		n = snprintf(buf, len, "%s", env);
	} else if (access("/run/fftd/fftd.sock", F_OK) == 0 || xdg == NULL
	    || xdg[0] == '\0') {
		n = snprintf(buf, len, "%s", SYSTEM_URL);
	} else {
		n = snprintf(buf, len, "ipc://%s/fftd.sock", xdg);
	}
	if (n < 0 || (size_t) n >= len) {
		return fftd__set_error(FFTD_ELIMIT, "default URL does not fit");
	}
	return FFTD_OK;
}

// fftd__copy_str copies src (NULL: "") into dst, cut to len bytes.
void
fftd__copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

// fill_info fills *info from the daemon's hello.
static void
fill_info(fftd_info *info, const Fftd__Wire__HelloReply *h)
{
	memset(info, 0, sizeof(*info));
	info->protocol_version = h->protocol_version;
	fftd__copy_str(info->server_version, sizeof(info->server_version),
	    h->server_version);
	fftd__copy_str(info->backend, sizeof(info->backend), h->backend);
	for (size_t i = 0; i < h->n_devices && i < FFTD_MAX_DEVICES; i++) {
		fftd_device_info *d = &info->devices[info->ndevices++];
		d->index            = (int) h->devices[i]->index;
		fftd__copy_str(d->name, sizeof(d->name), h->devices[i]->name);
		fftd__copy_str(
		    d->backend, sizeof(d->backend), h->devices[i]->backend);
		d->memory_bytes = h->devices[i]->memory_bytes;
	}
	for (size_t i = 0; i < h->n_algorithms && i < FFTD_MAX_ALGORITHMS;
	     i++) {
		fftd__copy_str(info->algorithms[info->nalgorithms++], 16,
		    h->algorithms[i]);
	}
	for (size_t i = 0; i < h->n_precisions; i++) {
		if (h->precisions[i] >= 0 && h->precisions[i] < 32) {
			info->precisions |= 1u << h->precisions[i];
		}
	}
	if (h->limits != NULL) {
		info->max_request_bytes    = h->limits->max_request_bytes;
		info->max_rank             = h->limits->max_rank;
		info->max_batch            = h->limits->max_batch;
		info->max_plans_per_client = h->limits->max_plans_per_client;
		info->max_inflight_per_client
		    = h->limits->max_inflight_per_client;
		info->max_queued_bytes_per_client
		    = h->limits->max_queued_bytes_per_client;
	}
}

// min_limit is the smaller of two daemon limits, 0 meaning none.
static uint64_t
min_limit(uint64_t a, uint64_t b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

// fftd__merge_info folds daemon info o into *info, the first daemon's: the
// smallest limits, and the precisions and algorithms every daemon serves.
void
fftd__merge_info(fftd_info *info, const fftd_info *o)
{
	info->max_request_bytes
	    = min_limit(info->max_request_bytes, o->max_request_bytes);
	info->max_rank  = (uint32_t) min_limit(info->max_rank, o->max_rank);
	info->max_batch = min_limit(info->max_batch, o->max_batch);
	info->max_plans_per_client = (uint32_t) min_limit(
	    info->max_plans_per_client, o->max_plans_per_client);
	info->max_inflight_per_client = (uint32_t) min_limit(
	    info->max_inflight_per_client, o->max_inflight_per_client);
	info->max_queued_bytes_per_client = min_limit(
	    info->max_queued_bytes_per_client, o->max_queued_bytes_per_client);
	info->precisions &= o->precisions;
	int kept = 0;
	for (int a = 0; a < info->nalgorithms; a++) {
		bool both = false;
		for (int b = 0; b < o->nalgorithms && !both; b++) {
			both = strcmp(info->algorithms[a], o->algorithms[b])
			    == 0;
		}
		if (both) {
			memmove(info->algorithms[kept++], info->algorithms[a],
			    sizeof(info->algorithms[a]));
		}
	}
	for (int a = kept; a < info->nalgorithms; a++) {
		memset(info->algorithms[a], 0, sizeof(info->algorithms[a]));
	}
	info->nalgorithms = kept;
}

// fftd__parse_urls splits list at its commas into at most FFTD_MAX_DAEMONS
// URLs, each without the blanks around it, malloc'd into urls[0 .. *n - 1].
int
fftd__parse_urls(const char *list, char **urls, int *n)
{
	int         rv = FFTD_OK;
	const char *p  = list;
	*n             = 0;
	for (int k = 1;; k++) {
		const char *comma = strchr(p, ',');
		size_t      len   = comma ? (size_t) (comma - p) : strlen(p);
		while (len > 0 && isspace((unsigned char) *p)) {
			p++;
			len--;
		}
		while (len > 0 && isspace((unsigned char) p[len - 1])) {
			len--;
		}
		if (len == 0) {
			rv = fftd__set_error(FFTD_EINVAL,
			    "URL %d of \"%s\" is empty (a list of daemons is "
			    "URLs separated by commas)",
			    k, list);
			break;
		}
		if (*n == FFTD_MAX_DAEMONS) {
			rv = fftd__set_error(FFTD_EINVAL,
			    "more than %d URLs in \"%s\" (FFTD_MAX_DAEMONS)",
			    FFTD_MAX_DAEMONS, list);
			break;
		}
		if ((urls[*n] = strndup(p, len)) == NULL) {
			rv = fftd__set_error(FFTD_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
		if (comma == NULL) {
			return FFTD_OK;
		}
		p = comma + 1;
	}
	while (*n > 0) {
		free(urls[--*n]);
	}
	return rv;
}

// fftd__link_free frees an endpoint's ep_link (NULL is ignored).
void
fftd__link_free(ep_link *l)
{
	if (l != NULL) {
		pthread_mutex_destroy(&l->mtx);
		free(l);
	}
}

// ep_dropped fails at once, on a client of several daemons, the executions
// for endpoint i's session epoch that still wait in NNG's queue for its
// connection, which just dropped: they were never sent, so nothing runs
// twice, and NNG would otherwise hold them until the timeout (or send
// them on the next connection, whose session lacks their plan). What was
// sent fails by itself (NNG_ECONNRESET). A client of one daemon keeps
// NNG's way: wait for the connection to come back.
static void
ep_dropped(fftd_client *c, int i, uint64_t epoch)
{
	if (c->nep == 1) {
		return;
	}
	pthread_mutex_lock(&c->mtx);
	for (fftd_request *r = c->inflight; r != NULL; r = r->next_inflight) {
		if (r->ep == i && r->epoch == epoch && !atomic_load(&r->sent)) {
			nng_aio_cancel(r->aio); // "request not sent"
		}
	}
	pthread_mutex_unlock(&c->mtx);
}

// on_pipe follows endpoint's connection (NNG pipe callback).
static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	ep_link *l  = arg;
	uint32_t id = (uint32_t) nng_pipe_id(p);
	if (ev == NNG_PIPE_EV_ADD_POST) {
		atomic_fetch_add(
		    &l->epoch, 1); // before pipe: see fftd__ep_usable
		atomic_store(&l->pipe, id);
		return;
	}
	uint64_t epoch = atomic_load(&l->epoch);
	if (atomic_compare_exchange_strong(&l->pipe, &id, 0)) {
		pthread_mutex_lock(&l->mtx);
		if (l->client != NULL) {
			ep_dropped(l->client, l->index, epoch);
		}
		pthread_mutex_unlock(&l->mtx);
	}
}

// fftd__ep_open connects endpoint i (its url set) and says hello, filling
// *info.
int
fftd__ep_open(fftd_client *c, int i, fftd_info *info)
{
	endpoint *e = &c->ep[i];
	int       rv;
	if ((e->link = calloc(1, sizeof(*e->link))) == NULL) {
		return fftd__set_error(FFTD_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&e->link->mtx, NULL);
	e->link->client = c;
	e->link->index  = i;
	if ((rv = nng_req0_open(&e->sock)) != 0) {
		return fftd__set_error(fftd__map_nng(rv),
		    "cannot open a socket: %s", nng_strerror(rv));
	}
	e->open = true;
	// Never resend: an execute must not run twice unasked.
	nng_socket_set_ms(
	    e->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	// Replies carry whole transforms; the daemon bounds their size.
	nng_socket_set_size(e->sock, NNG_OPT_RECVMAXSZ, 0);
	// Before dialing: nng_dial returns after the first pipe's ADD_POST.
	nng_pipe_notify(e->sock, NNG_PIPE_EV_ADD_POST, on_pipe, e->link);
	nng_pipe_notify(e->sock, NNG_PIPE_EV_REM_POST, on_pipe, e->link);
	char dmsg[512] = "";
	if ((rv = fftd__client_dial(e->sock, e->url, dmsg, sizeof(dmsg)))
	    != 0) {
		return fftd__set_error(
		    rv, "cannot connect to %s: %s", e->url, dmsg);
	}
	Fftd__Wire__Request req   = FFTD__WIRE__REQUEST__INIT;
	Fftd__Wire__Hello   hello = FFTD__WIRE__HELLO__INIT;
	hello.protocol_version    = FFTD_PROTOCOL_VERSION;
	// The program's name, so that stats and logs say who is who.
	hello.client_name    = program_invocation_short_name;
	hello.pid            = (uint32_t) getpid();
	req.body_case        = FFTD__WIRE__REQUEST__BODY_HELLO;
	req.hello            = &hello;
	Fftd__Wire__Reply *r = NULL;
	rv                   = fftd__rpc_on(c, i, &req, &r);
	if (rv == FFTD_OK
	    && (r->body_case != FFTD__WIRE__REPLY__BODY_HELLO
	        || r->hello == NULL)) {
		rv = fftd__set_error(
		    FFTD_EPROTO, "daemon answered hello with no hello");
	}
	if (rv == FFTD_OK) {
		fill_info(info, r->hello);
		e->limit = info->max_inflight_per_client;
	}
	if (r != NULL) {
		fftd__wire__reply__free_unpacked(r, NULL);
	}
	return rv == FFTD_OK ? rv : fftd__url_error(c, i, rv);
}

// SPDX-License-Identifier: MIT
//
// metrics.c — the Prometheus endpoint (see metrics.h). NNG's HTTP server
// calls on_metrics on one of its threads for each GET /metrics; it takes a
// snapshot of the server's counters (fftd__server_snapshot, safe from any
// thread) and renders it with fftd__metrics_render, a pure function the
// unit tests check without a daemon.
//
// Families are written whole, one after the other (the text format wants
// every sample of a family together, after its HELP and TYPE lines); the
// tables below say which field of fftd_client_stats / fftd_device_stats /
// fftd_stats each one shows, so adding a metric is adding a row.

#include "metrics.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "algo_table.h"
#include "log.h"
#include "text.h"

// --- rendering --------------------------------------------------------------

typedef enum metric_type {
	COUNTER,
	GAUGE,
	HISTOGRAM,
} metric_type;

static const char *const type_name[] = { "counter", "gauge", "histogram" };

typedef enum value_type {
	V_U64,
	V_U32,
	V_DBL,
} value_type;

// A family shown for each element of an array of structs: the value at
// offset (of type vt); for a histogram, the per-bucket counts at offset
// and the sum (seconds) at sum_offset.
typedef struct family {
	const char *name;
	metric_type type;
	value_type  vt;
	size_t      offset;
	size_t      sum_offset;
	const char *help;
} family;

#define CL(f) offsetof(fftd_client_stats, f)
#define DV(f) offsetof(fftd_device_stats, f)
#define ST(f) offsetof(fftd_stats, f)

static const family client_families[] = {
	{ "fftd_client_requests_total", COUNTER, V_U64, CL(requests), 0,
	    "Requests of the client answered." },
	{ "fftd_client_errors_total", COUNTER, V_U64, CL(errors), 0,
	    "Requests of the client answered with an error." },
	{ "fftd_client_executes_total", COUNTER, V_U64, CL(executes), 0,
	    "Executions of the client answered successfully." },
	{ "fftd_client_bytes_in_total", COUNTER, V_U64, CL(bytes_in), 0,
	    "Input bytes of the client's executions (inline or shared)." },
	{ "fftd_client_bytes_out_total", COUNTER, V_U64, CL(bytes_out), 0,
	    "Output bytes of the client's executions (inline or shared)." },
	{ "fftd_client_canceled_total", COUNTER, V_U64, CL(canceled), 0,
	    "Executions of the client dropped by cancel or disconnect." },
	{ "fftd_client_expired_total", COUNTER, V_U64, CL(expired), 0,
	    "Executions of the client not started by their deadline." },
	{ "fftd_client_inflight", GAUGE, V_U32, CL(inflight), 0,
	    "Executions of the client queued or running now." },
	{ "fftd_client_queued_bytes", GAUGE, V_U64, CL(queued_bytes), 0,
	    "Inline input bytes of the client's queued executions." },
	{ "fftd_client_weight", GAUGE, V_DBL, CL(weight), 0,
	    "Fair-share weight of the client." },
	{ "fftd_client_queue_seconds", HISTOGRAM, V_U64, CL(queue_hist),
	    CL(queue_seconds),
	    "Time the client's executions waited in the queue." },
	{ "fftd_client_device_seconds", HISTOGRAM, V_U64, CL(device_hist),
	    CL(device_seconds), "Device time of the client's executions." },
};

static const family daemon_families[] = {
	{ "fftd_sessions", GAUGE, V_U64, ST(sessions), 0,
	    "Clients connected now." },
	{ "fftd_plans", GAUGE, V_U64, ST(plans), 0, "Client plans alive now." },
	{ "fftd_stream_channels", GAUGE, V_U64, ST(stream_channels), 0,
	    "Stream channels (fftd_stream) open now." },
	{ "fftd_requests_total", COUNTER, V_U64, ST(requests), 0,
	    "Requests answered." },
	{ "fftd_errors_total", COUNTER, V_U64, ST(errors), 0,
	    "Requests answered with an error." },
	{ "fftd_executes_total", COUNTER, V_U64, ST(executes), 0,
	    "Transforms executed (requests, not batch elements)." },
	{ "fftd_bytes_in_total", COUNTER, V_U64, ST(bytes_in), 0,
	    "Input bytes of executions (inline or shared)." },
	{ "fftd_bytes_out_total", COUNTER, V_U64, ST(bytes_out), 0,
	    "Output bytes of executions (inline or shared)." },
	{ "fftd_canceled_total", COUNTER, V_U64, ST(canceled), 0,
	    "Executions dropped by cancel or disconnect." },
	{ "fftd_expired_total", COUNTER, V_U64, ST(expired), 0,
	    "Executions not started by their deadline." },
};

static const family device_families[] = {
	{ "fftd_device_memory_bytes", GAUGE, V_U64, DV(memory_bytes), 0,
	    "Memory of the device (0 for the CPU)." },
	{ "fftd_device_memory_used_bytes", GAUGE, V_U64, DV(memory_used_bytes),
	    0, "Device memory held by plans and buffers now." },
	{ "fftd_device_busy_seconds_total", COUNTER, V_DBL, DV(busy_seconds), 0,
	    "Device time spent executing." },
	{ "fftd_device_busy_ratio", GAUGE, V_DBL, DV(busy_fraction), 0,
	    "Busy share of the device over the last ~10 s (0..1)." },
	{ "fftd_device_queued", GAUGE, V_U32, DV(queued), 0,
	    "Jobs queued or running on the device now." },
	{ "fftd_device_executes_total", COUNTER, V_U64, DV(executes), 0,
	    "Transforms executed on the device." },
	{ "fftd_device_ipc_mappings", GAUGE, V_U64, DV(ipc_mappings), 0,
	    "Client allocations mapped by CUDA IPC now." },
	{ "fftd_plan_cache_hits_total", COUNTER, V_U64, DV(cache_hits), 0,
	    "Plan cache lookups that found a plan." },
	{ "fftd_plan_cache_misses_total", COUNTER, V_U64, DV(cache_misses), 0,
	    "Plan cache lookups that had to plan." },
	{ "fftd_plan_cache_evictions_total", COUNTER, V_U64,
	    DV(cache_evictions), 0,
	    "Plans evicted from the cache to stay within its budget." },
	{ "fftd_plan_cache_entries", GAUGE, V_U64, DV(cache_entries), 0,
	    "Plans in the cache now." },
	{ "fftd_plan_cache_bytes", GAUGE, V_U64, DV(cache_bytes), 0,
	    "Bytes held by cached plans (workspace included)." },
	{ "fftd_plan_cache_budget_bytes", GAUGE, V_U64, DV(cache_budget_bytes),
	    0, "Byte budget of the plan cache." },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

// put_double writes v as the text format wants a float: "+Inf", "-Inf",
// "NaN", else the shortest of %.15g (enough for microseconds over years).
static void
put_double(FILE *f, double v)
{
	if (isnan(v)) {
		fputs("NaN", f);
	} else if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	} else {
		fprintf(f, "%.15g", v);
	}
}

static void
put_value(FILE *f, const void *base, const family *fm)
{
	const char *p = (const char *) base + fm->offset;
	uint64_t    u;
	uint32_t    w;
	double      d;
	switch (fm->vt) {
	case V_U64:
		memcpy(&u, p, sizeof(u));
		fprintf(f, "%" PRIu64, u);
		break;
	case V_U32:
		memcpy(&w, p, sizeof(w));
		fprintf(f, "%" PRIu32, w);
		break;
	case V_DBL:
		memcpy(&d, p, sizeof(d));
		put_double(f, d);
		break;
	}
}

// put_label writes name="value" with the value (at most max bytes, up to
// a NUL) escaped as the text format says (\\, \", \n), other control
// characters and bytes that are not UTF-8 written as '?': client names
// come from the clients.
static void
put_label(FILE *f, const char *name, const char *value, size_t max)
{
	const unsigned char *s = (const unsigned char *) value;
	size_t               n = strnlen(value, max);
	fprintf(f, "%s=\"", name);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '\\') {
			fputs("\\\\", f);
		} else if (c == '"') {
			fputs("\\\"", f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c < 0x20 || c == 0x7F) {
			fputc('?', f);
		} else if (c >= 0x80) {
			size_t l = fftd__utf8_len(s + i, n - i);
			if (l == 0) {
				fputc('?', f);
				i++;
			} else {
				fwrite(s + i, 1, l, f);
				i += l;
			}
			continue;
		} else {
			fputc(c, f);
		}
		i++;
	}
	fputc('"', f);
}

static void
put_header(FILE *f, const family *fm)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fm->name, fm->help, fm->name,
	    type_name[fm->type]);
}

static void
client_labels(FILE *f, const fftd_client_stats *c)
{
	fprintf(f,
	    "client=\"%" PRIu32 "\",pid=\"%" PRIu64 "\",uid=\"%" PRIu64 "\",",
	    c->id, c->pid, c->uid);
	put_label(f, "name", c->name, sizeof(c->name));
}

static void
device_labels(FILE *f, const fftd_device_stats *d)
{
	fprintf(f, "device=\"%d\",", d->index);
	put_label(f, "name", d->name, sizeof(d->name));
	fputc(',', f);
	put_label(f, "backend", d->backend, sizeof(d->backend));
}

// put_histogram writes the _bucket (cumulative, le ascending, "+Inf"
// last), _sum and _count samples of one client's histogram.
static void
put_histogram(FILE *f, const family *fm, const fftd_client_stats *c)
{
	uint64_t counts[FFTD_HIST_BUCKETS];
	double   sum;
	memcpy(counts, (const char *) c + fm->offset, sizeof(counts));
	memcpy(&sum, (const char *) c + fm->sum_offset, sizeof(sum));
	uint64_t cum = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		cum += counts[i];
		fprintf(f, "%s_bucket{", fm->name);
		client_labels(f, c);
		fputs(",le=\"", f);
		double le = fftd_hist_bound(i);
		if (i == FFTD_HIST_BUCKETS - 1 || isinf(le)) {
			fputs("+Inf", f);
		} else {
			put_double(f, le);
		}
		fprintf(f, "\"} %" PRIu64 "\n", cum);
		if (i == FFTD_HIST_BUCKETS - 1 || isinf(le)) {
			break;
		}
	}
	fprintf(f, "%s_sum{", fm->name);
	client_labels(f, c);
	fputs("} ", f);
	put_double(f, sum);
	fprintf(f, "\n%s_count{", fm->name);
	client_labels(f, c);
	fprintf(f, "} %" PRIu64 "\n", cum);
}

// put_algo_plans writes the plans made per chosen algorithm (accuracy-aware
// auto, algo_table.h) and the speed table's size.
static void
put_algo_plans(FILE *f)
{
	static const family plans = { "fftd_plans_by_algorithm_total", COUNTER,
		V_U64, 0, 0,
		"Plans made, by the algorithm chosen (fftd_plan_algorithm)." };
	static const family speeds
	    = { "fftd_speed_table_entries", GAUGE, V_U64, 0, 0,
		      "Execution times kept for accuracy-aware auto (device, "
		      "algorithm, shape)." };
	char     names[FFTD__ALGO_NAMES][16];
	uint64_t counts[FFTD__ALGO_NAMES];
	int      n = fftd__algo_plan_counts(names, counts, FFTD__ALGO_NAMES);
	put_header(f, &plans);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{", plans.name);
		put_label(f, "algorithm", names[i], sizeof(names[i]));
		fprintf(f, "} %" PRIu64 "\n", counts[i]);
	}
	put_header(f, &speeds);
	fprintf(f, "%s %d\n", speeds.name,
	    fftd__speed_count(fftd__speed_global(), NULL));
}

int
fftd__metrics_render(char **out, size_t *len, const fftd_stats *st,
    const fftd_client_stats *clients, int nclients,
    const fftd_device_stats *devices, int ndevices)
{
	char  *buf = NULL;
	size_t n   = 0;
	FILE  *f   = open_memstream(&buf, &n);
	*out       = NULL;
	*len       = 0;
	if (f == NULL) {
		return FFTD_ENOMEM;
	}

	static const family uptime = { "fftd_uptime_seconds", GAUGE, V_DBL, 0,
		0, "Seconds since the daemon started." };
	put_header(f, &uptime);
	fputs("fftd_uptime_seconds ", f);
	put_double(f, (double) st->uptime_ms / 1000.0);
	fputc('\n', f);
	for (size_t k = 0; k < NELEM(daemon_families); k++) {
		const family *fm = &daemon_families[k];
		put_header(f, fm);
		fprintf(f, "%s ", fm->name);
		put_value(f, st, fm);
		fputc('\n', f);
	}

	for (size_t k = 0; k < NELEM(client_families); k++) {
		const family *fm = &client_families[k];
		put_header(f, fm);
		for (int i = 0; i < nclients; i++) {
			if (fm->type == HISTOGRAM) {
				put_histogram(f, fm, &clients[i]);
				continue;
			}
			fprintf(f, "%s{", fm->name);
			client_labels(f, &clients[i]);
			fputs("} ", f);
			put_value(f, &clients[i], fm);
			fputc('\n', f);
		}
	}

	for (size_t k = 0; k < NELEM(device_families); k++) {
		const family *fm = &device_families[k];
		put_header(f, fm);
		for (int i = 0; i < ndevices; i++) {
			fprintf(f, "%s{", fm->name);
			device_labels(f, &devices[i]);
			fputs("} ", f);
			put_value(f, &devices[i], fm);
			fputc('\n', f);
		}
	}

	put_algo_plans(f);

	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		free(buf);
		return FFTD_ENOMEM;
	}
	*out = buf;
	*len = n;
	return FFTD_OK;
}

// --- the URL ----------------------------------------------------------------

// is_loopback says whether host (brackets already removed) is 127.0.0.0/8,
// ::1, ::ffff:127.x.y.z or "localhost".
static bool
is_loopback(const char *host)
{
	struct in_addr  a4;
	struct in6_addr a6;
	if (strcmp(host, "localhost") == 0) {
		return true;
	}
	if (inet_pton(AF_INET, host, &a4) == 1) {
		return (ntohl(a4.s_addr) >> 24) == 127;
	}
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		return IN6_IS_ADDR_LOOPBACK(&a6)
		    || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	}
	return false;
}

int
fftd__metrics_check_url(const char *url, char *err, size_t errlen)
{
	nng_url *u;
	int      rv = FFTD_EINVAL;
	if (nng_url_parse(&u, url) != 0) {
		snprintf(err, errlen,
		    "[metrics] listen = %s: not a URL (want "
		    "http://127.0.0.1:PORT)",
		    url);
		return FFTD_EINVAL;
	}
	char host[256];
	snprintf(host, sizeof(host), "%s", u->u_hostname);
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	if (strcmp(u->u_scheme, "http") != 0) {
		snprintf(err, errlen,
		    "[metrics] listen = %s: the metrics endpoint speaks plain "
		    "http:// only (want http://127.0.0.1:PORT)",
		    url);
	} else if (host[0] == '\0') {
		snprintf(err, errlen,
		    "[metrics] listen = %s: no host; the metrics endpoint "
		    "listens on loopback only (127.0.0.0/8, ::1 or "
		    "localhost), never on every address",
		    url);
	} else if (!is_loopback(host)) {
		snprintf(err, errlen,
		    "[metrics] listen = %s: %s is not a loopback address; the "
		    "metrics endpoint has no authentication and listens on "
		    "loopback only (127.0.0.0/8, ::1 or localhost)",
		    url, host);
	} else if (u->u_path[0] != '\0' && strcmp(u->u_path, "/") != 0
	    && strcmp(u->u_path, "/metrics") != 0) {
		snprintf(err, errlen,
		    "[metrics] listen = %s: the path is always /metrics; give "
		    "the address alone (http://HOST:PORT)",
		    url);
	} else {
		rv = FFTD_OK;
	}
	nng_url_free(u);
	return rv;
}

// --- the HTTP server --------------------------------------------------------

// metrics_shared is what the HTTP handler reads. The handler owns it
// (nng_http_handler_set_data frees it with the handler), because NNG may
// still be inside on_metrics after fftd__metrics_stop has returned: stop
// clears srv, waits for the scrapes that use it, and from then on
// on_metrics answers 503 without touching the server.
typedef struct metrics_shared {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	fftd__server   *srv;    // NULL once stopping
	int             active; // scrapes reading srv now
} metrics_shared;

struct fftd__metrics {
	nng_http_server *http;
	metrics_shared  *sh; // owned by the /metrics handler
};

static void
shared_free(void *arg)
{
	metrics_shared *sh = arg;
	pthread_cond_destroy(&sh->cv);
	pthread_mutex_destroy(&sh->mu);
	free(sh);
}

static const char root_page[]
    = "fftd: Prometheus metrics at /metrics (text format 0.0.4)\n";

// on_metrics answers GET (and HEAD) /metrics, on an NNG thread.
static void
on_metrics(nng_aio *aio)
{
	nng_http_handler *h    = nng_aio_get_input(aio, 1);
	metrics_shared   *sh   = nng_http_handler_get_data(h);
	nng_http_res     *res  = NULL;
	char             *body = NULL;
	size_t            len  = 0;
	uint16_t          code = NNG_HTTP_STATUS_SERVICE_UNAVAILABLE;

	pthread_mutex_lock(&sh->mu);
	fftd__server *srv = sh->srv;
	if (srv != NULL) {
		sh->active++;
	}
	pthread_mutex_unlock(&sh->mu);
	if (srv != NULL) {
		fftd_stats         st;
		fftd_client_stats *cl  = NULL;
		fftd_device_stats *dv  = NULL;
		int                ncl = 0, ndv = 0;
		int rv = fftd__server_snapshot(srv, &st, &cl, &ncl, &dv, &ndv);
		pthread_mutex_lock(&sh->mu);
		if (--sh->active == 0) {
			pthread_cond_broadcast(&sh->cv);
		}
		pthread_mutex_unlock(&sh->mu);
		code = NNG_HTTP_STATUS_INTERNAL_SERVER_ERROR;
		if (rv == FFTD_OK) {
			rv = fftd__metrics_render(
			    &body, &len, &st, cl, ncl, dv, ndv);
			free(cl);
			free(dv);
		}
		if (rv == FFTD_OK) {
			code = NNG_HTTP_STATUS_OK;
		}
	}

	int rv;
	if (code == NNG_HTTP_STATUS_OK) {
		if ((rv = nng_http_res_alloc(&res)) == 0
		    && ((rv = nng_http_res_set_header(
		             res, "Content-Type", FFTD__METRICS_CONTENT_TYPE))
		            != 0
		        || (rv = nng_http_res_copy_data(res, body, len))
		            != 0)) {
			nng_http_res_free(res);
			res = NULL;
		}
	} else {
		rv = nng_http_res_alloc_error(&res, code);
	}
	free(body);
	if (rv != 0) {
		// No answer can be made: NNG closes the connection.
		nng_aio_finish(aio, rv);
		return;
	}
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
}

int
fftd__metrics_start(fftd__metrics **mp, const char *url, fftd__server *srv,
    char *err, size_t errlen)
{
	*mp = NULL;
	if (fftd__metrics_check_url(url, err, errlen) != FFTD_OK) {
		return FFTD_EINVAL;
	}
	fftd__metrics    *m    = calloc(1, sizeof(*m));
	metrics_shared   *sh   = calloc(1, sizeof(*sh));
	nng_url          *u    = NULL;
	nng_http_handler *h    = NULL;
	nng_http_handler *root = NULL;
	const char       *what;
	int               rv;
	if (m == NULL || sh == NULL) {
		free(m);
		free(sh);
		snprintf(err, errlen, "metrics: out of memory");
		return FFTD_ENOMEM;
	}
	pthread_mutex_init(&sh->mu, NULL);
	pthread_cond_init(&sh->cv, NULL);
	sh->srv = srv;
	m->sh   = sh;

	what = "handler";
	if ((rv = nng_http_handler_alloc(&h, "/metrics", on_metrics)) != 0) {
		shared_free(sh);
		goto fail;
	}
	// From here the handler owns sh: freeing it frees sh.
	if ((rv = nng_http_handler_set_data(h, sh, shared_free)) != 0) {
		shared_free(sh);
		nng_http_handler_free(h);
		goto fail;
	}
	// A GET has no body: refuse one rather than read it.
	nng_http_handler_collect_body(h, true, 0);
	if ((rv = nng_http_handler_alloc_static(&root, "/", root_page,
	         sizeof(root_page) - 1, "text/plain; charset=utf-8"))
	    != 0) {
		nng_http_handler_free(h);
		goto fail;
	}
	what = "URL";
	if ((rv = nng_url_parse(&u, url)) != 0) {
		nng_http_handler_free(h);
		nng_http_handler_free(root);
		goto fail;
	}
	what = "HTTP server";
	rv   = nng_http_server_hold(&m->http, u);
	nng_url_free(u);
	if (rv != 0) {
		nng_http_handler_free(h);
		nng_http_handler_free(root);
		goto fail;
	}
	// Once added, a handler is the server's (freed with it).
	what = "handler";
	if ((rv = nng_http_server_add_handler(m->http, h)) != 0) {
		nng_http_handler_free(h);
		nng_http_handler_free(root);
		goto fail_http;
	}
	if ((rv = nng_http_server_add_handler(m->http, root)) != 0) {
		nng_http_handler_free(root);
		goto fail_http;
	}
	what = "listen";
	if ((rv = nng_http_server_start(m->http)) != 0) {
		goto fail_http;
	}
	fftd__log(FFTD_LOG_INFO, "metrics: serving GET /metrics on %s", url);
	*mp = m;
	return FFTD_OK;

fail_http:
	nng_http_server_release(m->http);
fail:
	free(m);
	snprintf(err, errlen, "metrics: cannot serve %s (%s): %s", url, what,
	    nng_strerror(rv));
	return rv == NNG_ENOMEM ? FFTD_ENOMEM : FFTD_ENNGERR + rv;
}

void
fftd__metrics_stop(fftd__metrics *m)
{
	if (m == NULL) {
		return;
	}
	metrics_shared *sh = m->sh;
	pthread_mutex_lock(&sh->mu);
	sh->srv = NULL;
	while (sh->active > 0) {
		pthread_cond_wait(&sh->cv, &sh->mu);
	}
	pthread_mutex_unlock(&sh->mu);
	// sh now belongs to NNG alone (freed with the handler).
	nng_http_server_stop(m->http);
	nng_http_server_release(m->http);
	free(m);
}

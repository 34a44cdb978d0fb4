// SPDX-License-Identifier: MIT
//
// test_metrics.c — the Prometheus endpoint's text (daemon/metrics.c)
// without a daemon: fftd__metrics_render's output is parsed back by a small
// reader of the text exposition format (0.0.4) that checks what a scraper
// relies on: every sample's family has HELP and TYPE lines before it and
// its samples together; counters end in _total; histogram buckets are
// cumulative with le ascending, the last le "+Inf" and equal to _count;
// label values escaped (\\, \", \n) so a hostile client name reads back
// as sent; the whole text valid UTF-8. And the loopback rule of
// fftd__metrics_check_url, case by case.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>

#include "fftd.h"
#include "metrics.h"

// --- a reader of the text format --------------------------------------------

#define MAX_FAMILIES 128
#define MAX_SAMPLES 4096
#define MAX_LABELS 8

typedef struct label {
	char name[64];
	char value[256]; // unescaped
} label;

typedef struct sample {
	char   name[128];
	label  labels[MAX_LABELS];
	int    nlabels;
	double value;
} sample;

typedef struct family {
	char name[128];
	char type[16]; // "" until its TYPE line
	bool help;
	bool closed; // another family came after it
} family;

typedef struct parsed {
	family fam[MAX_FAMILIES];
	int    nfam;
	sample s[MAX_SAMPLES];
	int    ns;
} parsed;

static family *
find_family(parsed *p, const char *name)
{
	for (int i = 0; i < p->nfam; i++) {
		if (strcmp(p->fam[i].name, name) == 0) {
			return &p->fam[i];
		}
	}
	return NULL;
}

// add_family returns the family called name, made the current one (all
// others closed): a family met again after another one began fails.
static family *
add_family(parsed *p, const char *name)
{
	family *f = find_family(p, name);
	if (f == NULL) {
		assert_true(p->nfam < MAX_FAMILIES);
		f = &p->fam[p->nfam++];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", name);
	}
	if (f->closed) {
		fail_msg("family %s: lines after another family began", name);
	}
	for (int i = 0; i < p->nfam; i++) {
		if (&p->fam[i] != f) {
			p->fam[i].closed = true;
		}
	}
	return f;
}

static bool
is_name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
	    || c == ':' || (!first && c >= '0' && c <= '9');
}

// read_name copies the metric or label name at *s into out and advances.
static void
read_name(const char **s, char *out, size_t len)
{
	size_t n = 0;
	assert_true(is_name_char(**s, true));
	while (is_name_char(**s, n == 0)) {
		assert_true(n + 1 < len);
		out[n++] = *(*s)++;
	}
	out[n] = '\0';
}

// read_value reads a sample value: a float, "+Inf", "-Inf" or "NaN".
static double
read_value(const char *s)
{
	if (strcmp(s, "+Inf") == 0) {
		return INFINITY;
	}
	if (strcmp(s, "-Inf") == 0) {
		return -INFINITY;
	}
	if (strcmp(s, "NaN") == 0) {
		return NAN;
	}
	char  *end;
	double v = strtod(s, &end);
	if (end == s || *end != '\0') {
		fail_msg("bad sample value '%s'", s);
	}
	return v;
}

// family_of is the family a sample belongs to: its own name, or for the
// _bucket, _sum and _count series the histogram they belong to.
static family *
family_of(parsed *p, const char *name)
{
	static const char *const suffix[] = { "_bucket", "_sum", "_count" };
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(name), l = strlen(suffix[k]);
		if (n > l && strcmp(name + n - l, suffix[k]) == 0) {
			char base[128];
			snprintf(
			    base, sizeof(base), "%.*s", (int) (n - l), name);
			family *f = find_family(p, base);
			if (f != NULL && strcmp(f->type, "histogram") == 0) {
				return f;
			}
		}
	}
	return find_family(p, name);
}

static void
parse_sample(parsed *p, const char *line)
{
	assert_true(p->ns < MAX_SAMPLES);
	sample *sm = &p->s[p->ns++];
	memset(sm, 0, sizeof(*sm));
	const char *s = line;
	read_name(&s, sm->name, sizeof(sm->name));
	if (*s == '{') {
		s++;
		while (*s != '}') {
			assert_true(sm->nlabels < MAX_LABELS);
			label *l = &sm->labels[sm->nlabels++];
			read_name(&s, l->name, sizeof(l->name));
			assert_int_equal(*s++, '=');
			assert_int_equal(*s++, '"');
			size_t n = 0;
			while (*s != '"') {
				char c = *s++;
				assert_true(c != '\0' && c != '\n');
				if (c == '\\') {
					c = *s++;
					if (c == 'n') {
						c = '\n';
					} else if (c != '\\' && c != '"') {
						fail_msg(
						    "bad escape \\%c in %s", c,
						    line);
					}
				}
				assert_true(n + 1 < sizeof(l->value));
				l->value[n++] = c;
			}
			l->value[n] = '\0';
			s++;
			if (*s == ',') {
				s++;
			} else {
				assert_int_equal(*s, '}');
			}
		}
		s++;
	}
	assert_int_equal(*s++, ' ');
	sm->value = read_value(s);

	family *f = family_of(p, sm->name);
	if (f == NULL || !f->help || f->type[0] == '\0') {
		fail_msg("sample %s: no HELP and TYPE before it", sm->name);
	}
	add_family(p, f->name); // fails if the family was closed
	if (strcmp(f->type, "histogram") != 0) {
		assert_string_equal(sm->name, f->name);
	}
	if (strcmp(f->type, "counter") == 0) {
		size_t n = strlen(f->name);
		assert_true(n > 6 && strcmp(f->name + n - 6, "_total") == 0);
	}
}

// parse reads the whole text into *p (every line ends in '\n').
static void
parse(parsed *p, const char *text, size_t len)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(strlen(text), len);
	assert_true(len > 0 && text[len - 1] == '\n');
	const char *line = text;
	while (*line != '\0') {
		const char *nl = strchr(line, '\n');
		assert_non_null(nl);
		char buf[4096];
		assert_true((size_t) (nl - line) < sizeof(buf));
		memcpy(buf, line, (size_t) (nl - line));
		buf[nl - line] = '\0';
		if (strncmp(buf, "# HELP ", 7) == 0) {
			const char *s = buf + 7;
			char        name[128];
			read_name(&s, name, sizeof(name));
			assert_int_equal(*s, ' ');
			family *f = add_family(p, name);
			assert_false(f->help);
			f->help = true;
		} else if (strncmp(buf, "# TYPE ", 7) == 0) {
			const char *s = buf + 7;
			char        name[128];
			read_name(&s, name, sizeof(name));
			assert_int_equal(*s++, ' ');
			family *f = add_family(p, name);
			assert_true(f->type[0] == '\0');
			assert_true(strcmp(s, "counter") == 0
			    || strcmp(s, "gauge") == 0
			    || strcmp(s, "histogram") == 0);
			snprintf(f->type, sizeof(f->type), "%s", s);
		} else {
			assert_true(buf[0] != '#' && buf[0] != '\0');
			parse_sample(p, buf);
		}
		line = nl + 1;
	}
}

static const char *
label_of(const sample *s, const char *name)
{
	for (int i = 0; i < s->nlabels; i++) {
		if (strcmp(s->labels[i].name, name) == 0) {
			return s->labels[i].value;
		}
	}
	return NULL;
}

// find_sample returns the sample called name whose label lname is lvalue
// (any sample of that name when lname is NULL), or NULL.
static const sample *
find_sample(
    const parsed *p, const char *name, const char *lname, const char *lvalue)
{
	for (int i = 0; i < p->ns; i++) {
		const sample *s = &p->s[i];
		if (strcmp(s->name, name) != 0) {
			continue;
		}
		if (lname == NULL) {
			return s;
		}
		const char *v = label_of(s, lname);
		if (v != NULL && strcmp(v, lvalue) == 0) {
			return s;
		}
	}
	return NULL;
}

static int
count_samples(const parsed *p, const char *name)
{
	int n = 0;
	for (int i = 0; i < p->ns; i++) {
		n += strcmp(p->s[i].name, name) == 0;
	}
	return n;
}

// check_histogram checks histogram base for the client whose label client
// is id: buckets cumulative, le ascending and ending in +Inf, the last
// equal to _count and to total, _sum equal to sum.
static void
check_histogram(
    const parsed *p, const char *base, const char *id, double total, double sum)
{
	char bucket[160], cnt[160], sm[160];
	snprintf(bucket, sizeof(bucket), "%s_bucket", base);
	snprintf(cnt, sizeof(cnt), "%s_count", base);
	snprintf(sm, sizeof(sm), "%s_sum", base);
	double prev_le = -INFINITY, prev = 0, last = -1;
	int    n   = 0;
	bool   inf = false;
	for (int i = 0; i < p->ns; i++) {
		const sample *s = &p->s[i];
		const char   *c = label_of(s, "client");
		if (strcmp(s->name, bucket) != 0 || c == NULL
		    || strcmp(c, id) != 0) {
			continue;
		}
		assert_false(inf); // nothing after +Inf
		const char *le = label_of(s, "le");
		assert_non_null(le);
		double v = read_value(le);
		if (!(v > prev_le)) {
			fail_msg("%s client %s: le %s after %g", base, id, le,
			    prev_le);
		}
		assert_true(s->value >= prev);
		inf     = isinf(v) && v > 0;
		prev_le = v;
		prev    = s->value;
		last    = s->value;
		n++;
	}
	assert_true(inf);
	assert_int_equal(n, FFTD_HIST_BUCKETS);
	const sample *c = find_sample(p, cnt, "client", id);
	const sample *s = find_sample(p, sm, "client", id);
	assert_non_null(c);
	assert_non_null(s);
	assert_true(last == c->value);
	assert_true(c->value == total);
	assert_true(fabs(s->value - sum) <= 1e-9 * (1 + fabs(sum)));
}

// valid_utf8 says whether the n bytes at s are valid UTF-8.
static bool
valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t   len;
		uint32_t cp, min;
		if (s[i] < 0x80) {
			i++;
			continue;
		} else if ((s[i] & 0xE0) == 0xC0) {
			len = 2, cp = s[i] & 0x1F, min = 0x80;
		} else if ((s[i] & 0xF0) == 0xE0) {
			len = 3, cp = s[i] & 0x0F, min = 0x800;
		} else if ((s[i] & 0xF8) == 0xF0) {
			len = 4, cp = s[i] & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (i + len > n) {
			return false;
		}
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80) {
				return false;
			}
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF
		    || (cp >= 0xD800 && cp <= 0xDFFF)) {
			return false;
		}
		i += len;
	}
	return true;
}

// --- the tests --------------------------------------------------------------

// Every family the endpoint promises, with its type.
static const struct {
	const char *name, *type;
} expected[] = {
	{ "fftd_uptime_seconds", "gauge" },
	{ "fftd_sessions", "gauge" },
	{ "fftd_plans", "gauge" },
	{ "fftd_stream_channels", "gauge" },
	{ "fftd_requests_total", "counter" },
	{ "fftd_errors_total", "counter" },
	{ "fftd_executes_total", "counter" },
	{ "fftd_bytes_in_total", "counter" },
	{ "fftd_bytes_out_total", "counter" },
	{ "fftd_canceled_total", "counter" },
	{ "fftd_expired_total", "counter" },
	{ "fftd_client_requests_total", "counter" },
	{ "fftd_client_errors_total", "counter" },
	{ "fftd_client_executes_total", "counter" },
	{ "fftd_client_bytes_in_total", "counter" },
	{ "fftd_client_bytes_out_total", "counter" },
	{ "fftd_client_canceled_total", "counter" },
	{ "fftd_client_expired_total", "counter" },
	{ "fftd_client_inflight", "gauge" },
	{ "fftd_client_queued_bytes", "gauge" },
	{ "fftd_client_weight", "gauge" },
	{ "fftd_client_queue_seconds", "histogram" },
	{ "fftd_client_device_seconds", "histogram" },
	{ "fftd_device_memory_bytes", "gauge" },
	{ "fftd_device_memory_used_bytes", "gauge" },
	{ "fftd_device_busy_seconds_total", "counter" },
	{ "fftd_device_busy_ratio", "gauge" },
	{ "fftd_device_queued", "gauge" },
	{ "fftd_device_executes_total", "counter" },
	{ "fftd_device_ipc_mappings", "gauge" },
	{ "fftd_plan_cache_hits_total", "counter" },
	{ "fftd_plan_cache_misses_total", "counter" },
	{ "fftd_plan_cache_evictions_total", "counter" },
	{ "fftd_plan_cache_entries", "gauge" },
	{ "fftd_plan_cache_bytes", "gauge" },
	{ "fftd_plan_cache_budget_bytes", "gauge" },
};

static parsed P; // large: not on the stack

static void
check_families(parsed *p)
{
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		family *f = find_family(p, expected[i].name);
		if (f == NULL) {
			fail_msg("family %s missing", expected[i].name);
		}
		assert_true(f->help);
		assert_string_equal(f->type, expected[i].type);
	}
}

// The histogram bounds ascend and end in +Inf (what le relies on).
static void
test_hist_bounds(void **state)
{
	(void) state;
	for (int i = 1; i < FFTD_HIST_BUCKETS; i++) {
		if (!(fftd_hist_bound(i) > fftd_hist_bound(i - 1))) {
			fail_msg("fftd_hist_bound(%d) = %g after %g", i,
			    fftd_hist_bound(i), fftd_hist_bound(i - 1));
		}
	}
	assert_true(isinf(fftd_hist_bound(FFTD_HIST_BUCKETS - 1)));
}

// No clients, no devices: every family still declared, daemon totals as
// given.
static void
test_render_empty(void **state)
{
	(void) state;
	fftd_stats st;
	memset(&st, 0, sizeof(st));
	st.uptime_ms = 12345;
	st.executes  = 7;
	char  *out;
	size_t len;
	assert_int_equal(
	    fftd__metrics_render(&out, &len, &st, NULL, 0, NULL, 0), FFTD_OK);
	parse(&P, out, len);
	check_families(&P);
	const sample *s = find_sample(&P, "fftd_uptime_seconds", NULL, NULL);
	assert_non_null(s);
	assert_true(fabs(s->value - 12.345) < 1e-9);
	s = find_sample(&P, "fftd_executes_total", NULL, NULL);
	assert_non_null(s);
	assert_true(s->value == 7);
	assert_int_equal(count_samples(&P, "fftd_client_requests_total"), 0);
	free(out);
}

static void
fill_client(fftd_client_stats *c, uint32_t id, const char *name, int seed)
{
	memset(c, 0, sizeof(*c));
	c->id  = id;
	c->pid = 1000 + (uint64_t) id;
	c->uid = 500;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->weight       = 1.5;
	c->requests     = 100 + (uint64_t) seed;
	c->errors       = 3;
	c->executes     = 90 + (uint64_t) seed;
	c->bytes_in     = 1ull << 40;
	c->bytes_out    = 12345678901ull;
	c->canceled     = 2;
	c->expired      = 1;
	c->inflight     = 4;
	c->queued_bytes = 65536;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		c->queue_hist[i]  = (uint64_t) ((i * 7 + seed) % 5);
		c->device_hist[i] = (uint64_t) ((i * 3 + seed) % 4);
		c->queue_seconds += (double) c->queue_hist[i] * 1e-4;
		c->device_seconds += (double) c->device_hist[i] * 2e-3;
	}
	c->queue_hist[FFTD_HIST_BUCKETS - 1] = 1; // one past the last bound
}

static double
hist_total(const uint64_t *h)
{
	double t = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		t += (double) h[i];
	}
	return t;
}

static void
test_render_clients_devices(void **state)
{
	(void) state;
	fftd_stats st;
	memset(&st, 0, sizeof(st));
	st.uptime_ms       = 3600000;
	st.sessions        = 3;
	st.requests        = 1000;
	st.stream_channels = 2;
	st.executes        = 900;

	// A name with a quote, a backslash and a newline; one with bytes
	// that are not UTF-8 and a control character; one in UTF-8; one
	// that fills the field with no NUL.
	static const char nasty[] = "evil\"name\\with\nnewline";
	fftd_client_stats cl[4];
	fill_client(&cl[0], 7, nasty, 0);
	fill_client(&cl[1], 8, "bad\xff\xc3(\x01utf8", 1);
	fill_client(&cl[2], 9, "gw-\xc3\xa9t\xc3\xa9", 2);
	fill_client(&cl[3], 10, "", 3);
	memset(cl[3].name, 'x', sizeof(cl[3].name));

	fftd_device_stats dv[2];
	memset(dv, 0, sizeof(dv));
	for (int i = 0; i < 2; i++) {
		dv[i].index = i;
		snprintf(dv[i].name, sizeof(dv[i].name), "NVIDIA H200 #%d", i);
		snprintf(dv[i].backend, sizeof(dv[i].backend), "cuda");
		dv[i].memory_bytes       = 150000000000ull;
		dv[i].memory_used_bytes  = 1234567890ull;
		dv[i].busy_seconds       = 12.5 + i;
		dv[i].busy_fraction      = 0.25 * (i + 1);
		dv[i].queued             = 3;
		dv[i].executes           = 450;
		dv[i].cache_hits         = 440;
		dv[i].cache_misses       = 10;
		dv[i].cache_evictions    = 2;
		dv[i].cache_entries      = 8;
		dv[i].cache_bytes        = 1 << 20;
		dv[i].cache_budget_bytes = 1 << 30;
	}

	char  *out;
	size_t len;
	assert_int_equal(
	    fftd__metrics_render(&out, &len, &st, cl, 4, dv, 2), FFTD_OK);
	assert_true(valid_utf8((const unsigned char *) out, len));
	parse(&P, out, len);
	check_families(&P);

	// The escaped form, and the name read back as it was sent.
	assert_non_null(strstr(out, "name=\"evil\\\"name\\\\with\\nnewline\""));
	const sample *s
	    = find_sample(&P, "fftd_client_executes_total", "client", "7");
	assert_non_null(s);
	assert_string_equal(label_of(s, "name"), nasty);
	assert_string_equal(label_of(s, "pid"), "1007");
	assert_string_equal(label_of(s, "uid"), "500");
	assert_true(s->value == 90);
	s = find_sample(&P, "fftd_client_requests_total", "client", "8");
	assert_non_null(s);
	assert_string_equal(label_of(s, "name"), "bad\?\?(?utf8");
	s = find_sample(&P, "fftd_client_requests_total", "client", "9");
	assert_string_equal(label_of(s, "name"), "gw-\xc3\xa9t\xc3\xa9");
	s = find_sample(&P, "fftd_client_requests_total", "client", "10");
	assert_int_equal(strlen(label_of(s, "name")), sizeof(cl[3].name));
	s = find_sample(&P, "fftd_client_bytes_in_total", "client", "7");
	assert_true(s->value == (double) (1ull << 40));
	s = find_sample(&P, "fftd_client_weight", "client", "7");
	assert_true(s->value == 1.5);
	assert_int_equal(count_samples(&P, "fftd_client_inflight"), 4);

	for (int i = 0; i < 4; i++) {
		char id[16];
		snprintf(id, sizeof(id), "%u", (unsigned) cl[i].id);
		check_histogram(&P, "fftd_client_queue_seconds", id,
		    hist_total(cl[i].queue_hist), cl[i].queue_seconds);
		check_histogram(&P, "fftd_client_device_seconds", id,
		    hist_total(cl[i].device_hist), cl[i].device_seconds);
	}

	s = find_sample(&P, "fftd_device_busy_ratio", "device", "1");
	assert_non_null(s);
	assert_string_equal(label_of(s, "name"), "NVIDIA H200 #1");
	assert_string_equal(label_of(s, "backend"), "cuda");
	assert_true(s->value == 0.5);
	s = find_sample(&P, "fftd_device_memory_bytes", "device", "0");
	assert_true(s->value == 150000000000.0);
	s = find_sample(&P, "fftd_plan_cache_misses_total", "device", "0");
	assert_true(s->value == 10);
	assert_int_equal(count_samples(&P, "fftd_plan_cache_budget_bytes"), 2);
	s = find_sample(&P, "fftd_sessions", NULL, NULL);
	assert_true(s->value == 3);
	s = find_sample(&P, "fftd_stream_channels", NULL, NULL);
	assert_true(s->value == 2);
	free(out);
}

// Non-finite values are written as the format spells them.
static void
test_render_special_values(void **state)
{
	(void) state;
	fftd_stats st;
	memset(&st, 0, sizeof(st));
	fftd_client_stats c;
	fill_client(&c, 1, "nan", 0);
	c.weight = NAN;
	fftd_device_stats d;
	memset(&d, 0, sizeof(d));
	d.busy_seconds  = INFINITY;
	d.busy_fraction = -INFINITY;
	char  *out;
	size_t len;
	assert_int_equal(
	    fftd__metrics_render(&out, &len, &st, &c, 1, &d, 1), FFTD_OK);
	parse(&P, out, len);
	assert_non_null(strstr(out, "} NaN\n"));
	assert_non_null(strstr(out, "} +Inf\n"));
	assert_non_null(strstr(out, "} -Inf\n"));
	free(out);
}

static void
test_check_url(void **state)
{
	(void) state;
	static const struct {
		const char *url;
		int         ok;
		const char *why; // in the message when refused
	} cases[] = {
		{ "http://127.0.0.1:9464", 1, NULL },
		{ "http://127.0.0.1:9464/", 1, NULL },
		{ "http://127.0.0.1:9464/metrics", 1, NULL },
		{ "http://127.45.6.7:80", 1, NULL },
		{ "http://localhost:9464", 1, NULL },
		{ "http://[::1]:9464", 1, NULL },
		{ "http://[::ffff:127.0.0.1]:9464", 1, NULL },
		{ "http://0.0.0.0:9464", 0, "loopback" },
		{ "http://:9464", 0, "loopback" },
		{ "http://10.0.0.1:9464", 0, "loopback" },
		{ "http://192.168.1.20:9464", 0, "loopback" },
		{ "http://128.0.0.1:9464", 0, "loopback" },
		{ "http://[::]:9464", 0, "loopback" },
		{ "http://[2001:db8::1]:9464", 0, "loopback" },
		{ "http://example.org:9464", 0, "loopback" },
		{ "http://localhost.example.org:9464", 0, "loopback" },
		{ "https://127.0.0.1:9464", 0, "http://" },
		{ "tcp://127.0.0.1:9464", 0, "http://" },
		{ "http://127.0.0.1:9464/other", 0, "/metrics" },
		{ "not a url", 0, "URL" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		int  rv
		    = fftd__metrics_check_url(cases[i].url, err, sizeof(err));
		if (cases[i].ok && rv != FFTD_OK) {
			fail_msg("%s: refused: %s", cases[i].url, err);
		}
		if (!cases[i].ok) {
			if (rv != FFTD_EINVAL) {
				fail_msg("%s: accepted", cases[i].url);
			}
			if (strstr(err, cases[i].why) == NULL
			    || strstr(err, cases[i].url) == NULL) {
				fail_msg("%s: message '%s' lacks '%s'",
				    cases[i].url, err, cases[i].why);
			}
		}
	}
	// Start refuses the same way, before binding anything.
	fftd__metrics *m = (fftd__metrics *) &m;
	char           err[512];
	assert_int_equal(
	    fftd__metrics_start(&m, "http://0.0.0.0:1", NULL, err, sizeof(err)),
	    FFTD_EINVAL);
	assert_null(m);
	assert_non_null(strstr(err, "loopback"));
	fftd__metrics_stop(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_bounds),
		cmocka_unit_test(test_render_empty),
		cmocka_unit_test(test_render_clients_devices),
		cmocka_unit_test(test_render_special_values),
		cmocka_unit_test(test_check_url),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}

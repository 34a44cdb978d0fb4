// SPDX-License-Identifier: MIT
//
// cases.c — the shared transform table and output check (see cases.h).

#include "cases.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref.h"

// --- the table -----------------------------------------------------------

typedef struct size_row {
	int     rank;
	int64_t n[FFTD_MAX_RANK];
} size_row;

static const size_row sizes_any[] = {
	{ 1, { 1 } },
	{ 1, { 2 } },
	{ 1, { 7 } },
	{ 1, { 17 } },
	{ 1, { 64 } },
	{ 1, { 100 } },
	{ 1, { 101 } },
	{ 1, { 1009 } },
	{ 1, { 4096 } },
	{ 2, { 17, 12 } },
	{ 2, { 64, 65 } },
	{ 3, { 5, 6, 7 } },
	{ 3, { 16, 16, 16 } },
};

static const size_row sizes_pow2[] = {
	{ 1, { 2 } },
	{ 1, { 64 } },
	{ 1, { 4096 } },
	{ 2, { 16, 32 } },
	{ 2, { 64, 64 } },
	{ 3, { 4, 8, 2 } },
	{ 3, { 16, 16, 16 } },
};

// The layout variants every size runs in.
enum {
	V_CONTIG,      // batch 1, default layout
	V_BATCH,       // batch 3, default layout
	V_STRIDE,      // batch 2, istride 2, ostride 3
	V_EMBED,       // batch 3, padded embedded sizes on both sides
	V_INTERLEAVED, // batch 4, stride = batch, dist = 1 on both sides
	V_DIST,        // batch 2, distances padded past the default
	V_INPLACE,     // batch 2, in-place (R2C/C2R: real rows padded)
	V_COUNT
};

static const char *const variant_name[V_COUNT] = { "contig", "batch", "stride",
	"embed", "interleaved", "dist", "in-place" };

static const char *
kind_name(fftd_kind k)
{
	return k == FFTD_C2C ? "c2c" : k == FFTD_R2C ? "r2c" : "c2r";
}

const char *
fftd_test_prec_name(fftd_precision p)
{
	return p == FFTD_F64 ? "f64" : p == FFTD_F32 ? "f32" : "f16";
}

static const char *
norm_name(fftd_norm n)
{
	return n == FFTD_NORM_NONE ? "none"
	    : n == FFTD_NORM_BY_N  ? "by_n"
	                           : "ortho";
}

void
fftd_test_describe(const fftd_plan_desc *d, char *buf, size_t len)
{
	int k = snprintf(buf, len, "%s %s n=", kind_name(d->kind),
	    fftd_test_prec_name(d->precision));
	for (int i = 0; i < d->rank && k > 0 && (size_t) k < len; i++) {
		k += snprintf(buf + k, len - (size_t) k, "%s%lld", i ? "x" : "",
		    (long long) d->n[i]);
	}
	if (k > 0 && (size_t) k < len) {
		snprintf(buf + k, len - (size_t) k,
		    " b=%lld is=%lld id=%lld os=%lld od=%lld %s %s",
		    (long long) d->batch, (long long) d->istride,
		    (long long) d->idist, (long long) d->ostride,
		    (long long) d->odist,
		    d->direction == FFTD_FORWARD ? "fwd" : "inv",
		    norm_name(d->norm));
	}
}

static void
make_case(fftd_test_case *tc, fftd_kind kind, fftd_precision p,
    const size_row *sz, int v)
{
	fftd_plan_desc *d = &tc->desc;
	memset(tc, 0, sizeof(*tc));
	d->rank      = sz->rank;
	d->kind      = kind;
	d->precision = p;
	d->device    = -1;
	d->algorithm = NULL;
	d->batch     = 1;
	int64_t nin[FFTD_MAX_RANK], nout[FFTD_MAX_RANK];
	int     last = sz->rank - 1;
	for (int k = 0; k < sz->rank; k++) {
		d->n[k] = nin[k] = nout[k] = sz->n[k];
	}
	if (kind == FFTD_R2C) {
		nout[last] = sz->n[last] / 2 + 1;
	} else if (kind == FFTD_C2R) {
		nin[last] = sz->n[last] / 2 + 1;
	}
	int64_t vin = 1, vout = 1;
	for (int k = 0; k < sz->rank; k++) {
		vin *= nin[k];
		vout *= nout[k];
	}
	fftd_direction dir  = FFTD_FORWARD;
	fftd_norm      norm = FFTD_NORM_NONE;
	switch (v) {
	case V_CONTIG:
		break;
	case V_BATCH:
		d->batch = 3;
		dir      = FFTD_INVERSE;
		norm     = FFTD_NORM_BY_N;
		break;
	case V_STRIDE:
		d->batch   = 2;
		d->istride = 2;
		d->ostride = 3;
		norm       = FFTD_NORM_ORTHO;
		break;
	case V_EMBED: {
		static const int64_t pin[3]  = { 1, 2, 3 },
		                     pout[3] = { 2, 1, 1 };
		d->batch                     = 3;
		for (int k = 0; k < sz->rank; k++) {
			d->inembed[k] = nin[k] + pin[k];
			d->onembed[k] = nout[k] + pout[k];
		}
		dir = FFTD_INVERSE;
		break;
	}
	case V_INTERLEAVED:
		d->batch   = 4;
		d->istride = d->ostride = 4;
		d->idist = d->odist = 1;
		norm                = FFTD_NORM_BY_N;
		break;
	case V_DIST:
		d->batch = 2;
		d->idist = vin + 5;
		d->odist = vout + 3;
		dir      = FFTD_INVERSE;
		norm     = FFTD_NORM_ORTHO;
		break;
	case V_INPLACE:
		d->batch = 2;
		if (kind != FFTD_C2C) {
			// FFTW's in-place real layout: real rows padded to
			// 2 * (n/2 + 1) so both sides occupy the same bytes.
			int64_t *e = kind == FFTD_R2C ? d->inembed : d->onembed;
			for (int k = 0; k < sz->rank; k++) {
				e[k] = sz->n[k];
			}
			e[last] = 2 * (sz->n[last] / 2 + 1);
		}
		dir          = FFTD_INVERSE;
		norm         = FFTD_NORM_BY_N;
		tc->in_place = true;
		break;
	}
	d->direction = kind == FFTD_R2C ? FFTD_FORWARD
	    : kind == FFTD_C2R          ? FFTD_INVERSE
	                                : dir;
	d->norm      = norm;
	char desc[100];
	fftd_test_describe(d, desc, sizeof(desc));
	snprintf(tc->name, sizeof(tc->name), "%s [%s]", desc, variant_name[v]);
}

size_t
fftd_test_cases(fftd_kind kind, int rank, fftd_precision p, bool pow2_only,
    fftd_test_case *out, size_t max)
{
	const size_row *rows = pow2_only ? sizes_pow2 : sizes_any;
	size_t nrows = pow2_only ? sizeof(sizes_pow2) / sizeof(sizes_pow2[0])
	                         : sizeof(sizes_any) / sizeof(sizes_any[0]);
	size_t count = 0;
	for (size_t r = 0; r < nrows; r++) {
		if (rows[r].rank != rank) {
			continue;
		}
		for (int v = 0; v < V_COUNT && count < max; v++) {
			make_case(&out[count++], kind, p, &rows[r], v);
		}
	}
	return count;
}

// --- seeds ---------------------------------------------------------------

static pthread_once_t seed_once = PTHREAD_ONCE_INIT;
static uint64_t       base_seed;

static void
seed_init(void)
{
	const char *e = getenv("FFTD_TEST_SEED");
	if (e != NULL && e[0] != '\0') {
		base_seed = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		base_seed = ((uint64_t) ts.tv_sec * 1000000007ull)
		    ^ (uint64_t) ts.tv_nsec ^ ((uint64_t) getpid() << 32);
	}
	printf("seed: FFTD_TEST_SEED=%llu\n", (unsigned long long) base_seed);
	fflush(stdout);
}

uint64_t
fftd_test_seed(void)
{
	pthread_once(&seed_once, seed_init);
	return base_seed;
}

uint64_t
fftd_test_case_seed(uint64_t i)
{
	uint64_t z = fftd_test_seed() + (i + 1) * 0x9e3779b97f4a7c15ull;
	z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// --- the check -----------------------------------------------------------

unsigned char *
fftd_test_layout_mask(
    const fftd__side *sd, int rank, int64_t batch, size_t bytes)
{
	unsigned char *m = calloc(bytes ? bytes : 1, 1);
	if (m == NULL) {
		return NULL;
	}
	int64_t n[FFTD_MAX_RANK] = { 1, 1, 1 };
	int     off              = FFTD_MAX_RANK - rank;
	for (int k = 0; k < rank; k++) {
		n[k + off] = sd->n[k];
	}
	int64_t j[FFTD_MAX_RANK];
	for (int64_t b = 0; b < batch; b++) {
		for (int64_t a0 = 0; a0 < n[0]; a0++) {
			for (int64_t a1 = 0; a1 < n[1]; a1++) {
				for (int64_t a2 = 0; a2 < n[2]; a2++) {
					int64_t a[3] = { a0, a1, a2 };
					for (int k = 0; k < rank; k++) {
						j[k] = a[k + off];
					}
					int64_t idx
					    = fftd__side_index(sd, rank, b, j);
					size_t at
					    = (size_t) idx * sd->elem_size;
					if (idx >= 0
					    && at + sd->elem_size <= bytes) {
						memset(
						    m + at, 1, sd->elem_size);
					}
				}
			}
		}
	}
	return m;
}

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned long cases;
	double        err, bound; // the worst case (largest err / bound)
} stats[3];

static void
note(fftd_precision p, double err, double bound)
{
	if ((unsigned) p > 2) {
		return;
	}
	pthread_mutex_lock(&stats_lock);
	stats[p].cases++;
	if (stats[p].cases == 1
	    || !(err / bound <= stats[p].err / stats[p].bound)) {
		stats[p].err   = err;
		stats[p].bound = bound;
	}
	pthread_mutex_unlock(&stats_lock);
}

int
fftd_test_check(const fftd__shape *s, const void *in, const void *out,
    const void *before, size_t len, fftd_test_result *r, char *why,
    size_t whylen)
{
	memset(r, 0, sizeof(*r));
	why[0]           = '\0';
	long double *ref = fftd_ref_transform(s, in);
	if (ref == NULL) {
		snprintf(why, whylen, "reference transform failed");
		return -1;
	}
	r->err       = fftd_ref_rel_l2(s, out, ref);
	r->bound     = fftd_ref_bound(s);
	r->unwritten = fftd_ref_unwritten(s, out);
	free(ref);

	unsigned char *m
	    = fftd_test_layout_mask(&s->out, s->rank, s->batch, len);
	if (m == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	const unsigned char *o = out, *bf = before;
	size_t               first = 0;
	for (size_t i = 0; i < len; i++) {
		if (!m[i] && o[i] != bf[i]) {
			if (r->touched++ == 0) {
				first = i;
			}
		}
	}
	free(m);

	int    bad = 0;
	size_t k   = 0;
	if (!(r->err <= r->bound)) { // NaN fails too
		k += (size_t) snprintf(why + k, whylen - k,
		    "rel L2 error %.3g > bound %.3g", r->err, r->bound);
		bad = 1;
	}
	if (r->unwritten && k < whylen) {
		k += (size_t) snprintf(why + k, whylen - k,
		    "%s%zu output elements not written", bad ? "; " : "",
		    r->unwritten);
		bad = 1;
	}
	if (r->touched && k < whylen) {
		snprintf(why + k, whylen - k,
		    "%s%zu bytes outside the output layout changed (first at "
		    "byte "
		    "%zu of %zu)",
		    bad ? "; " : "", r->touched, first, len);
		bad = 1;
	}
	if (!bad) {
		note(s->precision, r->err, r->bound);
	}
	return bad ? -1 : 0;
}

void
fftd_test_print_summary(const char *label)
{
	pthread_mutex_lock(&stats_lock);
	printf("%s: worst rel L2 error", label);
	int any = 0;
	for (int p = 0; p < 3; p++) {
		if (stats[p].cases == 0) {
			continue;
		}
		printf("%s %s %.3g (bound %.3g, %lu cases)", any ? "," : "",
		    fftd_test_prec_name((fftd_precision) p), stats[p].err,
		    stats[p].bound, stats[p].cases);
		any = 1;
	}
	printf("%s\n", any ? "" : " none: no case checked");
	fflush(stdout);
	pthread_mutex_unlock(&stats_lock);
}

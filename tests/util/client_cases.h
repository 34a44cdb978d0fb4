// SPDX-License-Identifier: MIT
//
// client_cases.h — PRIVATE to fftd's tests. Running the shared case table
// (cases.h) through libfftd against a live daemon: plan, check the byte
// counts, fill, poison, execute, check. Header-only (static functions)
// because tests/util/*.c is also linked into the unit tests, which do not
// link libfftd; include it only from integration and GPU tests.

#ifndef FFTD_TESTS_CLIENT_CASES_H
#define FFTD_TESTS_CLIENT_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "fftd.h"
#include "layout.h"
#include "ref.h"

// FFTD_TEST_SLACK is how many poisoned bytes follow every output buffer, to
// catch writes past the output span.
#define FFTD_TEST_SLACK 256

// fftd_test_buffers are the buffers of one execution.
typedef struct fftd_test_buffers {
	fftd__shape s;
	void       *in;       // input as sent (out == in when in place)
	void       *out;      // output buffer
	size_t      out_len;  // bytes of out checked (span + slack)
	void       *pristine; // copy of the input before executing
	void       *before;   // copy of out before executing
	int         in_place;
} fftd_test_buffers;

static inline void
fftd_test_buffers_free(fftd_test_buffers *b)
{
	free(b->in);
	if (!b->in_place) {
		free(b->out);
	}
	free(b->pristine);
	free(b->before);
	memset(b, 0, sizeof(*b));
}

// fftd_test_buffers_make resolves d, fills the input with seed, poisons the
// output (and the slack after it) and keeps copies of both. Returns 0 or -1.
static inline int
fftd_test_buffers_make(
    fftd_test_buffers *b, const fftd_plan_desc *d, int in_place, uint64_t seed)
{
	char msg[256];
	memset(b, 0, sizeof(*b));
	if (fftd__shape_resolve(d, NULL, &b->s, msg, sizeof(msg)) != FFTD_OK) {
		fprintf(stderr, "case does not resolve: %s\n", msg);
		return -1;
	}
	size_t inb  = (size_t) b->s.in.bytes;
	size_t outb = (size_t) b->s.out.bytes;
	size_t big  = (inb > outb ? inb : outb) + FFTD_TEST_SLACK;
	b->in_place = in_place;
	b->in       = malloc(in_place ? big : inb + FFTD_TEST_SLACK);
	b->pristine = malloc(inb ? inb : 1);
	if (b->in == NULL || b->pristine == NULL) {
		fftd_test_buffers_free(b);
		return -1;
	}
	if (in_place) {
		fftd_ref_poison(b->in, big);
		b->out     = b->in;
		b->out_len = big;
	} else {
		b->out_len = outb + FFTD_TEST_SLACK;
		b->out     = malloc(b->out_len);
		if (b->out == NULL) {
			fftd_test_buffers_free(b);
			return -1;
		}
		fftd_ref_poison(b->out, b->out_len);
	}
	fftd_ref_fill_input(b->in, &b->s, seed);
	memcpy(b->pristine, b->in, inb);
	b->before = malloc(b->out_len);
	if (b->before == NULL) {
		fftd_test_buffers_free(b);
		return -1;
	}
	memcpy(b->before, b->out, b->out_len);
	return 0;
}

// fftd_test_buffers_check checks an execution's output (fftd_test_check)
// and, when not in place, that the input was left alone.
static inline int
fftd_test_buffers_check(
    fftd_test_buffers *b, fftd_test_result *r, char *why, size_t whylen)
{
	if (!b->in_place
	    && memcmp(b->in, b->pristine, (size_t) b->s.in.bytes)) {
		snprintf(why, whylen, "the input buffer was changed");
		return -1;
	}
	return fftd_test_check(
	    &b->s, b->pristine, b->out, b->before, b->out_len, r, why, whylen);
}

// fftd_test_run_case plans tc on client c, checks the plan's byte counts
// against the shape, executes it once on fresh data (seed) and checks the
// result. Returns 0, or -1 after printing the case, the seed and why.
static inline int
fftd_test_run_case(fftd_client *c, const fftd_test_case *tc, uint64_t seed)
{
	char              why[512] = "";
	fftd_test_buffers b;
	fftd_test_result  r;
	fftd_plan        *p  = NULL;
	int               rv = -1;
	if (fftd_test_buffers_make(&b, &tc->desc, tc->in_place, seed) != 0) {
		snprintf(why, sizeof(why), "cannot set the buffers up");
		goto out;
	}
	int st = fftd_plan_create(c, &tc->desc, &p);
	if (st != FFTD_OK) {
		snprintf(why, sizeof(why), "fftd_plan_create: %s (%s)",
		    fftd_err_name(st), fftd_last_error());
		p = NULL;
		goto out;
	}
	if (fftd_plan_input_bytes(p) != (size_t) b.s.in.bytes
	    || fftd_plan_output_bytes(p) != (size_t) b.s.out.bytes) {
		snprintf(why, sizeof(why),
		    "plan bytes in %zu out %zu, the layout says %llu and %llu",
		    fftd_plan_input_bytes(p), fftd_plan_output_bytes(p),
		    (unsigned long long) b.s.in.bytes,
		    (unsigned long long) b.s.out.bytes);
		goto out;
	}
	st = fftd_execute(p, b.in, b.out);
	if (st != FFTD_OK) {
		snprintf(why, sizeof(why), "fftd_execute: %s (%s)",
		    fftd_err_name(st), fftd_last_error());
		goto out;
	}
	rv = fftd_test_buffers_check(&b, &r, why, sizeof(why));
out:
	if (rv != 0) {
		fprintf(stderr,
		    "FAIL %s: %s [case seed %llu, FFTD_TEST_SEED=%llu]\n",
		    tc->name, why, (unsigned long long) seed,
		    (unsigned long long) fftd_test_seed());
	}
	fftd_plan_destroy(p);
	fftd_test_buffers_free(&b);
	return rv;
}

// fftd_test_run_cases runs every case of kind x rank x precision (see
// fftd_test_cases) and returns how many failed.
static inline int
fftd_test_run_cases(
    fftd_client *c, fftd_kind kind, int rank, fftd_precision p, int pow2_only)
{
	fftd_test_case *tc = calloc(FFTD_TEST_MAX_CASES, sizeof(*tc));
	if (tc == NULL) {
		return 1;
	}
	size_t n = fftd_test_cases(
	    kind, rank, p, pow2_only, tc, FFTD_TEST_MAX_CASES);
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t seed = fftd_test_case_seed(
		    ((uint64_t) kind * 16 + (uint64_t) rank * 4 + (uint64_t) p)
		        * 1000
		    + i);
		failed += fftd_test_run_case(c, &tc[i], seed) != 0;
	}
	if (n == 0) {
		fprintf(stderr, "no cases for this kind x rank x precision\n");
		failed = 1;
	}
	free(tc);
	return failed;
}

#endif // FFTD_TESTS_CLIENT_CASES_H

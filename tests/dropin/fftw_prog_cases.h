// SPDX-License-Identifier: MIT
//
// fftw_prog_cases.h — PRIVATE to tests/dropin/fftw_prog.c, which includes
// it once per precision (X(name) = fftw_name or fftwf_name, R = double or
// float), as FFTW's own sources are compiled per precision: one case of
// the table run through the FFTW API of that precision and checked
// against the long double reference (fftwl, which the drop-in does not
// export, so it is always the real FFTW).

// X(fill) allocates a side's array (fftw_malloc: large ones are fftd
// shared buffers under the drop-in) filled with POISON.
static R *
X(fill)(size_t nreal)
{
	R *a = X(malloc)(nreal * sizeof(R) + 64);
	for (size_t i = 0; a != NULL && i < nreal; i++) {
		a[i] = (R) POISON;
	}
	return a;
}

// X(plan_case) makes the case's plan on in and out with the API it names.
static X(plan) X(plan_case)(const tcase *tc, const layout *L, R *in, R *out)
{
	int      r = tc->rank;
	unsigned f = tc->flags;
	if (tc->api == API_BASIC) {
		const int *n = tc->n;
		switch (tc->kind) {
		case K_C2C:
			return r == 1 ? X(plan_dft_1d)(n[0], (X(complex) *) in,
			           (X(complex) *) out, tc->sign, f)
			    : r == 2
			    ? X(plan_dft_2d)(n[0], n[1], (X(complex) *) in,
			        (X(complex) *) out, tc->sign, f)
			    : X(plan_dft_3d)(n[0], n[1], n[2],
			        (X(complex) *) in, (X(complex) *) out, tc->sign,
			        f);
		case K_R2C:
			return r == 1 ? X(plan_dft_r2c_1d)(
			           n[0], in, (X(complex) *) out, f)
			    : r == 2 ? X(plan_dft_r2c_2d)(
			          n[0], n[1], in, (X(complex) *) out, f)
			             : X(plan_dft_r2c_3d)(n[0], n[1], n[2], in,
			                 (X(complex) *) out, f);
		case K_C2R:
			return r == 1 ? X(plan_dft_c2r_1d)(
			           n[0], (X(complex) *) in, out, f)
			    : r == 2 ? X(plan_dft_c2r_2d)(
			          n[0], n[1], (X(complex) *) in, out, f)
			             : X(plan_dft_c2r_3d)(n[0], n[1], n[2],
			                 (X(complex) *) in, out, f);
		case K_R2HC:
			return X(plan_r2r_1d)(n[0], in, out, FFTW_R2HC, f);
		case K_HC2R:
			return X(plan_r2r_1d)(n[0], in, out, FFTW_HC2R, f);
		case K_DCT:
			return X(plan_r2r_1d)(n[0], in, out, FFTW_REDFT10, f);
		}
		return NULL;
	}
	if (tc->api == API_GURU64 || tc->api == API_GURU) {
		X(iodim64) d[3], h   = { tc->howmany, L->idist, L->odist };
		X(iodim) d32[3], h32 = { tc->howmany, L->idist, L->odist };
		for (int k = r - 1; k >= 0; k--) {
			d[k].n    = tc->n[k];
			d[k].is   = k == r - 1 ? L->istride
			                       : d[k + 1].is * L->iemb[k + 1];
			d[k].os   = k == r - 1 ? L->ostride
			                       : d[k + 1].os * L->oemb[k + 1];
			d32[k].n  = (int) d[k].n;
			d32[k].is = (int) d[k].is;
			d32[k].os = (int) d[k].os;
		}
		X(r2r_kind) kind = tc->kind == K_HC2R ? FFTW_HC2R : FFTW_R2HC;
		int g32          = tc->api == API_GURU;
		switch (tc->kind) {
		case K_C2C:
			return g32
			    ? X(plan_guru_dft)(r, d32, 1, &h32,
			        (X(complex) *) in, (X(complex) *) out, tc->sign,
			        f)
			    : X(plan_guru64_dft)(r, d, 1, &h, (X(complex) *) in,
			        (X(complex) *) out, tc->sign, f);
		case K_R2C:
			return g32 ? X(plan_guru_dft_r2c)(
			           r, d32, 1, &h32, in, (X(complex) *) out, f)
			           : X(plan_guru64_dft_r2c)(
			               r, d, 1, &h, in, (X(complex) *) out, f);
		case K_C2R:
			return g32 ? X(plan_guru_dft_c2r)(
			           r, d32, 1, &h32, (X(complex) *) in, out, f)
			           : X(plan_guru64_dft_c2r)(
			               r, d, 1, &h, (X(complex) *) in, out, f);
		default:
			return g32 ? X(plan_guru_r2r)(
			           r, d32, 1, &h32, in, out, &kind, f)
			           : X(plan_guru64_r2r)(
			               r, d, 1, &h, in, out, &kind, f);
		}
	}
	// API_MANY and API_NEWARRAY: the advanced interface.
	switch (tc->kind) {
	case K_C2C:
		return X(plan_many_dft)(r, tc->n, tc->howmany,
		    (X(complex) *) in, L->iemb, L->istride, L->idist,
		    (X(complex) *) out, L->oemb, L->ostride, L->odist, tc->sign,
		    f);
	case K_R2C:
		return X(plan_many_dft_r2c)(r, tc->n, tc->howmany, in, L->iemb,
		    L->istride, L->idist, (X(complex) *) out, L->oemb,
		    L->ostride, L->odist, f);
	case K_C2R:
		return X(plan_many_dft_c2r)(r, tc->n, tc->howmany,
		    (X(complex) *) in, L->iemb, L->istride, L->idist, out,
		    L->oemb, L->ostride, L->odist, f);
	default: {
		X(r2r_kind)
		kind = tc->kind == K_HC2R ? FFTW_HC2R
		    : tc->kind == K_DCT   ? FFTW_REDFT10
		                          : FFTW_R2HC;
		return X(plan_many_r2r)(r, tc->n, tc->howmany, in, L->iemb,
		    L->istride, L->idist, out, L->oemb, L->ostride, L->odist,
		    &kind, f);
	}
	}
}

// X(execute_case) runs the plan on in and out: fftw_execute on the
// planner's arrays, or the new-array call of the kind on others.
static void
X(execute_case)(const tcase *tc, X(plan) p, R *in, R *out, int newarray)
{
	if (!newarray) {
		X(execute)(p);
		return;
	}
	switch (tc->kind) {
	case K_C2C:
		X(execute_dft)(p, (X(complex) *) in, (X(complex) *) out);
		break;
	case K_R2C:
		X(execute_dft_r2c)(p, in, (X(complex) *) out);
		break;
	case K_C2R:
		X(execute_dft_c2r)(p, (X(complex) *) in, out);
		break;
	default:
		X(execute_r2r)(p, in, out);
		break;
	}
}

// X(run_case) runs one case: plan (checking that FFTW_ESTIMATE planning
// left both arrays alone), fill the input, execute, gather the output
// (and check that nothing outside the output layout was written), and
// compare it with the long double reference. The gathered output goes to
// *res (malloc'ed, L->nlog_out reals). Returns the relative L2 error, or
// -1 after printing why the case failed otherwise.
static double
X(run_case)(const tcase *tc, const layout *L, uint64_t seed, long double **res)
{
	size_t isz = L->in_reals, osz = L->out_reals;
	if (tc->inplace) {
		isz = osz = isz > osz ? isz : osz;
	}
	R *a_in  = X(fill)(isz);
	R *a_out = tc->inplace ? a_in : X(fill)(osz);
	R *b_in = NULL, *b_out = NULL;
	if (a_in == NULL || a_out == NULL) {
		printf("%s: fftw_malloc failed\n", tc->name);
		return -1;
	}
	X(plan) p = X(plan_case)(tc, L, a_in, a_out);
	if (p == NULL) {
		printf("%s: the planner returned NULL\n", tc->name);
		return -1;
	}
	if (tc->flags & FFTW_ESTIMATE) {
		for (size_t i = 0; i < isz; i++) {
			if (a_in[i] != (R) POISON
			    || (!tc->inplace && i < osz
			        && a_out[i] != (R) POISON)) {
				printf("%s: FFTW_ESTIMATE planning wrote the "
				       "arrays (element %zu)\n",
				    tc->name, i);
				return -1;
			}
		}
		for (size_t i = isz; !tc->inplace && i < osz; i++) {
			if (a_out[i] != (R) POISON) {
				printf("%s: FFTW_ESTIMATE planning wrote the "
				       "output (element %zu)\n",
				    tc->name, i);
				return -1;
			}
		}
	}
	if (kill_pid > 0) {
		// --kill: the daemon dies between this plan and its execution.
		kill(kill_pid, SIGKILL);
		kill_pid = 0;
	}
	if (fork_after_plan) {
		// --fork: the rest runs in a child forked between this plan
		// and its execution; this process ends with the child's
		// status, flushing nothing of its own (the child has the
		// same buffered output).
		fork_after_plan = 0;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fftw_prog: fork");
			_exit(2);
		}
		if (pid > 0) {
			int st = 0;
			while (waitpid(pid, &st, 0) < 0) { }
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 3);
		}
	}
	R *in = a_in, *out = a_out;
	if (tc->api == API_NEWARRAY) {
		b_in  = X(fill)(isz);
		b_out = tc->inplace ? b_in : X(fill)(osz);
		in    = b_in;
		out   = b_out;
	} else {
		for (size_t i = 0; i < isz; i++) {
			in[i] = (R) POISON;
		}
		for (size_t i = 0; !tc->inplace && i < osz; i++) {
			out[i] = (R) POISON;
		}
	}
	// The input: random logical values, rounded to R, scattered into the
	// input layout; the reference sees the very same values.
	long double *lin = input_values(tc, L, seed);
	for (size_t i = 0; i < L->nlog_in; i++) {
		lin[i]             = (long double) (R) lin[i];
		in[L->in_index[i]] = (R) lin[i];
	}
	X(execute_case)(tc, p, in, out, tc->api == API_NEWARRAY);
	if (tc->flags & FFTW_PRESERVE_INPUT) {
		for (size_t i = 0; i < L->nlog_in; i++) {
			if (in[L->in_index[i]] != (R) lin[i]) {
				printf("%s: FFTW_PRESERVE_INPUT, yet input "
				       "element %zu changed\n",
				    tc->name, i);
				return -1;
			}
		}
	}
	long double *got = malloc(L->nlog_out * sizeof(long double));
	for (size_t i = 0; i < L->nlog_out; i++) {
		got[i] = out[L->out_index[i]];
	}
	int gaps_ok = 1;
	if (!tc->inplace) {
		for (size_t i = 0; i < osz; i++) {
			if (!L->out_mask[i] && out[i] != (R) POISON) {
				printf(
				    "%s: element %zu outside the output layout "
				    "was written\n",
				    tc->name, i);
				gaps_ok = 0;
				break;
			}
		}
	}
	long double *ref = reference(tc, L, lin);
	double       err = rel_l2(got, ref, L->nlog_out);
	X(destroy_plan)(p);
	X(free)(a_in);
	if (!tc->inplace) {
		X(free)(a_out);
	}
	X(free)(b_in);
	if (!tc->inplace) {
		X(free)(b_out);
	}
	free(lin);
	free(ref);
	*res = got;
	return gaps_ok ? err : -1;
}

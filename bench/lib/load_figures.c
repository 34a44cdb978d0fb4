// SPDX-License-Identifier: MIT
//
// load_figures.c — a load run's figures and verdict (see load.h): each
// client's counts from the shared file, the realtime latencies and stage
// times, the daemon-side latencies and the window's fair shares from the
// statistics snapshots, and the check of all of them against issue 5's
// targets. The run itself (phases, snapshots) is load.c's.

#include "load_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// cmp_double orders doubles for qsort.
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

// pct is the p-quantile of n sorted values (the nearest rank); NAN if none.
static double
pct(const double *v, uint64_t n, double p)
{
	if (n == 0) {
		return NAN;
	}
	uint64_t i = (uint64_t) ceil(p * (double) n);
	return v[i > 0 ? i - 1 : 0];
}

// lat_summary sorts n latencies and fills their quantiles, maximum and mean.
static void
lat_summary(fftd_load_lat *L, double *v, uint64_t n)
{
	memset(L, 0, sizeof(*L));
	L->n = n;
	if (n == 0) {
		L->p50 = L->p99 = L->p999 = L->max = L->mean = NAN;
		return;
	}
	qsort(v, n, sizeof(double), cmp_double);
	double sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		sum += v[i];
	}
	L->p50  = pct(v, n, 0.50);
	L->p99  = pct(v, n, 0.99);
	L->p999 = pct(v, n, 0.999);
	L->max  = v[n - 1];
	L->mean = sum / (double) n;
}

// fftd__load_find_pid is the statistics of the daemon's client of process
// pid in a snapshot, or NULL.
const fftd_client_stats *
fftd__load_find_pid(const snap *sn, pid_t pid)
{
	for (int i = 0; i < sn->n && pid > 0; i++) {
		if (sn->cs[i].pid == (uint64_t) pid) {
			return &sn->cs[i];
		}
	}
	return NULL;
}

// fftd__load_collect copies every client's counts from the shared file
// into r and adds them up.
void
fftd__load_collect(fftd_load_result *r, shared *sh, const int *codes)
{
	for (int i = 0; i < r->nclients; i++) {
		slot             *s = &sh->slot[i];
		fftd_load_client *c = &r->cl[i];
		c->realtime         = s->realtime;
		c->kind             = s->kind;
		c->n                = s->n;
		c->batch            = s->batch;
		c->in_bytes         = s->in_bytes;
		c->out_bytes        = s->out_bytes;
		c->depth            = s->realtime ? 1 : s->depth;
		c->rate_hz          = s->rate_hz;
		c->rt_stream        = s->rt_stream;
		c->pid              = s->pid;
		c->exit_code        = codes[i];
		snprintf(
		    c->algorithm, sizeof(c->algorithm), "%s", s->algorithm);
		snprintf(c->why, sizeof(c->why), "%s", s->why);
		c->submitted  = atomic_load(&s->submitted);
		c->ok         = s->ok;
		c->wrong      = s->wrong;
		c->failed     = s->failed;
		c->refused    = s->refused;
		uint64_t ans  = atomic_load(&s->answered);
		c->unanswered = c->submitted > ans ? c->submitted - ans : 0;
		memcpy(c->status, s->status, sizeof(c->status));
		c->wrong_after_mark = s->wrong_after_mark;
		c->mark = atomic_load(&s->marked) ? atomic_load(&s->mark)
		                                  : c->submitted;
		c->refused_status = s->refused_status;
		c->max_err        = s->max_err;
		c->bound          = s->bound;
		c->missed         = s->missed;
		r->submitted += c->submitted;
		r->ok += c->ok;
		r->wrong += c->wrong;
		r->failed += c->failed;
		r->unanswered += c->unanswered;
		r->refused += c->refused;
	}
}

// stages summarises the realtime clients' stage samples of a phase.
static void
stages(fftd_load_stages *S, shared *sh, int b)
{
	memset(S, 0, sizeof(*S));
	uint64_t n = 0;
	for (int i = 0; i < sh->nrealtime; i++) {
		n += sh->slot[i].nstage[b];
	}
	S->n       = n;
	double *v  = malloc(sizeof(double) * (n + 1));
	double *tt = malloc(sizeof(double) * (n + 1));
	for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
		S->p50[j] = S->p99[j] = S->tail_mean[j] = NAN;
	}
	S->tail_total_mean = NAN;
	if (n == 0 || v == NULL || tt == NULL) {
		free(v);
		free(tt);
		return;
	}
	// The tail: executions whose whole latency is above the p99.
	uint64_t m = 0;
	for (int i = 0; i < sh->nrealtime; i++) {
		const float *x = stage_of(sh, i, b);
		for (uint64_t k = 0; k < sh->slot[i].nstage[b]; k++) {
			tt[m++] = x[k * STAGE_W + FFTD_LOAD_NSTAGES];
		}
	}
	qsort(tt, n, sizeof(double), cmp_double);
	double cut = pct(tt, n, 0.99), tail[FFTD_LOAD_NSTAGES + 1] = { 0 };
	for (int j = 0; j <= FFTD_LOAD_NSTAGES; j++) {
		m = 0;
		for (int i = 0; i < sh->nrealtime; i++) {
			const float *x = stage_of(sh, i, b);
			for (uint64_t k = 0; k < sh->slot[i].nstage[b]; k++) {
				const float *e = x + k * STAGE_W;
				v[m++]         = e[j];
				if (e[FFTD_LOAD_NSTAGES] > cut) {
					tail[j] += e[j];
					S->ntail += j == 0;
				}
			}
		}
		if (j == FFTD_LOAD_NSTAGES) {
			break;
		}
		qsort(v, n, sizeof(double), cmp_double);
		S->p50[j] = pct(v, n, 0.50);
		S->p99[j] = pct(v, n, 0.99);
	}
	if (S->ntail > 0) {
		for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
			S->tail_mean[j] = tail[j] / (double) S->ntail;
		}
		S->tail_total_mean
		    = tail[FFTD_LOAD_NSTAGES] / (double) S->ntail;
	}
	free(v);
	free(tt);
}

// fftd__load_latencies summarises the realtime clients' latencies of both
// phases, each client's and all together, and their stages.
void
fftd__load_latencies(fftd_load_result *r, shared *sh)
{
	uint64_t tot[2] = { 0, 0 };
	for (int i = 0; i < sh->nrealtime; i++) {
		tot[0] += sh->slot[i].nlat[0];
		tot[1] += sh->slot[i].nlat[1];
	}
	for (int b = 0; b < 2; b++) {
		double  *all = malloc(sizeof(double) * (tot[b] + 1));
		uint64_t m   = 0;
		for (int i = 0; i < sh->nrealtime && all != NULL; i++) {
			uint64_t n   = sh->slot[i].nlat[b];
			double  *one = malloc(sizeof(double) * (n + 1));
			for (uint64_t j = 0; j < n && one != NULL; j++) {
				one[j] = all[m++] = lat_of(sh, i, b)[j];
			}
			if (one != NULL) {
				lat_summary(
				    b ? &r->cl[i].loaded : &r->cl[i].unloaded,
				    one, n);
			}
			free(one);
		}
		if (all != NULL) {
			lat_summary(
			    b ? &r->rt_loaded : &r->rt_unloaded, all, m);
		}
		free(all);
	}
	r->p99_ratio = r->rt_loaded.p99 / r->rt_unloaded.p99;
	for (int b = 0; b < 2; b++) {
		stages(&r->rt_stages[b], sh, b);
	}
}

// dq_of is the p50 and p99 (bucket bounds, us) of a daemon histogram's
// growth between two snapshots.
static void
dq_of(fftd_load_dq *q, const uint64_t *a, const uint64_t *b)
{
	uint64_t d[FFTD_HIST_BUCKETS], n = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS; i++) {
		d[i] = b[i] - a[i];
		n += d[i];
	}
	q->n   = n;
	q->p50 = q->p99 = NAN;
	uint64_t cum    = 0;
	for (int i = 0; i < FFTD_HIST_BUCKETS && n > 0; i++) {
		cum += d[i];
		double bound = fftd_hist_bound(i) * 1e6;
		if (isnan(q->p50) && cum * 2 >= n) {
			q->p50 = bound;
		}
		if (isnan(q->p99) && cum * 100 >= n * 99) {
			q->p99 = bound;
		}
	}
}

// fftd__load_daemon_lat fills the clients' daemon-side latencies of one phase.
void
fftd__load_daemon_lat(
    fftd_load_result *r, shared *sh, const snap *s0, const snap *s1, int phase)
{
	for (int i = 0; i < r->nclients; i++) {
		const fftd_client_stats *a
		    = fftd__load_find_pid(s0, sh->slot[i].pid);
		const fftd_client_stats *b
		    = fftd__load_find_pid(s1, sh->slot[i].pid);
		if (a != NULL && b != NULL) {
			dq_of(&r->cl[i].queue[phase], a->queue_hist,
			    b->queue_hist);
			dq_of(&r->cl[i].device[phase], a->device_hist,
			    b->device_hist);
		}
	}
}

// jain_of is Jain's index (sum x)^2 / (n sum x^2) of n > 0 values from
// their sum and sum of squares; NAN when all are 0.
static double
jain_of(double sum, double sum2, int n)
{
	return sum2 > 0 ? sum * sum / ((double) n * sum2) : NAN;
}

// fftd_load_fairness judges the clients' shares as max-min fairness
// (load.h).
void
fftd_load_fairness(const double *device_s, const double *weight,
    const double *backlogged, int n, fftd_load_fair *out)
{
	double sum = 0, sum2 = 0;
	int    nb = 0;
	for (int i = 0; i < n; i++) {
		if (backlogged[i] >= FFTD_LOAD_BACKLOG_MIN) {
			double x = device_s[i] / weight[i];
			sum += x;
			sum2 += x * x;
			nb++;
		}
	}
	out->n         = n;
	out->jain_bl_n = nb;
	out->mean_bl   = nb > 0 ? sum / nb : NAN;
	out->jain_bl   = nb >= 2 ? jain_of(sum, sum2, nb) : NAN;
	out->over_n    = 0;
	for (int i = 0; i < n && nb > 0; i++) {
		if (!(backlogged[i] >= FFTD_LOAD_BACKLOG_MIN)
		    && device_s[i] / weight[i]
		        > FFTD_LOAD_OVER_TOL * out->mean_bl) {
			out->over_n++;
		}
	}
}

// fftd__load_window_fairness computes the window's per-client figures and
// Jain's index over the batch clients.
void
fftd__load_window_fairness(fftd_load_result *r, shared *sh, const snap *s0,
    const snap *s1, const uint64_t *bl, uint64_t nsamples)
{
	double sum = 0, sum2 = 0, mn = INFINITY, mx = 0;
	int    n = 0;
	// the batch clients' device time, weight and backlogged share
	double dv[FFTD_LOAD_MAX_CLIENTS], wt[FFTD_LOAD_MAX_CLIENTS],
	    bg[FFTD_LOAD_MAX_CLIENTS];
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client        *c = &r->cl[i];
		const fftd_client_stats *a
		    = fftd__load_find_pid(s0, sh->slot[i].pid);
		const fftd_client_stats *b
		    = fftd__load_find_pid(s1, sh->slot[i].pid);
		if (a == NULL || b == NULL) {
			continue;
		}
		c->matched  = 1;
		c->device_s = b->device_seconds - a->device_seconds;
		c->queue_s  = b->queue_seconds - a->queue_seconds;
		c->executes = b->executes - a->executes;
		c->weight   = b->weight;
		c->backlogged
		    = nsamples ? (double) bl[i] / (double) nsamples : NAN;
		if (!c->realtime) {
			sum += c->device_s;
			sum2 += c->device_s * c->device_s;
			mn    = fmin(mn, c->device_s);
			mx    = fmax(mx, c->device_s);
			dv[n] = c->device_s;
			wt[n] = c->weight > 0 ? c->weight : 1;
			bg[n] = c->backlogged;
			n++;
		}
	}
	r->jain_n = n;
	r->jain   = n > 0 ? jain_of(sum, sum2, n) : NAN;
	fftd_load_fairness(dv, wt, bg, n, &r->fair);
	if (n > 0 && sum > 0) {
		r->share_min = mn / (sum / n);
		r->share_max = mx / (sum / n);
	} else {
		r->share_min = r->share_max = NAN;
	}
	double busy = 0;
	r->ndev     = 0;
	for (int d = 0; d < s1->ndev && d < s0->ndev; d++) {
		double b = s1->ds[d].busy_seconds - s0->ds[d].busy_seconds;
		busy += b;
		r->dev_busy[d]     = r->window_s > 0 ? b / r->window_s : NAN;
		r->dev_executes[d] = s1->ds[d].executes - s0->ds[d].executes;
		r->ndev            = d + 1;
	}
	r->device_busy = s1->ndev > 0 && r->window_s > 0
	    ? busy / (r->window_s * s1->ndev)
	    : NAN;
}

// fftd__load_verdict notes each target the run missed: clients that
// failed, lost or wrong results, daemon errors; in the SIGTERM run, the
// accepted requests answered wrongly, unclean later answers and the
// daemon's exit.
void
fftd__load_verdict(fftd_load_result *r)
{
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client *c = &r->cl[i];
		if (c->exit_code != 0) {
			fftd__load_fail(r,
			    "client %d exited with status %d%s%s", i,
			    c->exit_code, c->why[0] ? ": " : "", c->why);
		}
	}
	if (!r->sigterm) {
		r->lost = r->failed + r->unanswered + r->refused;
		if (r->lost != 0) {
			for (int i = 0; i < r->nclients; i++) {
				fftd_load_client *c = &r->cl[i];
				for (int b = 1; b < FFTD_LOAD_NSTATUS
				     && c->failed + c->refused != 0;
				     b++) {
					if (c->status[0][b] != 0) {
						fftd__load_fail(r,
						    "client %d: %" PRIu64
						    " requests answered %s",
						    i, c->status[0][b],
						    fftd_load_status_name(b));
						break;
					}
				}
				if (c->refused) {
					fftd__load_fail(r,
					    "client %d: a submit failed: %s", i,
					    fftd_err_name(c->refused_status));
				}
			}
			fftd__load_fail(
			    r, "%" PRIu64 " requests lost", r->lost);
		}
		if (r->wrong != 0) {
			for (int i = 0; i < r->nclients; i++) {
				if (r->cl[i].wrong) {
					fftd__load_fail(r, "client %d: %s", i,
					    r->cl[i].why);
				}
			}
		}
		if (!r->stats_ok) {
			fftd__load_fail(
			    r, "daemon statistics: %s", r->stats_why);
		} else if (r->daemon_errors != 0) {
			fftd__load_fail(r,
			    "the daemon counted %" PRIu64 " errors",
			    r->daemon_errors);
		}
		return;
	}
	// SIGTERM run
	for (int i = 0; i < r->nclients; i++) {
		fftd_load_client *c            = &r->cl[i];
		uint64_t          before_ok    = c->status[0][FFTD_OK];
		uint64_t          wrong_before = c->wrong - c->wrong_after_mark;
		uint64_t          good_before  = before_ok - wrong_before;
		r->accepted += c->mark;
		r->accepted_ok += good_before;
		// accepted but not answered correctly: errors, wrong results,
		// no answer at all
		r->accepted_bad
		    += c->mark > good_before ? c->mark - good_before : 0;
		uint64_t late_bad = c->wrong_after_mark;
		for (int b = 1; b < FFTD_LOAD_NSTATUS; b++) {
			if (b != FFTD_ECLOSED && b != FFTD_ESHUTDOWN
			    && b != FFTD_ETIMEDOUT) {
				late_bad += c->status[1][b];
			}
		}
		r->late_timedout += c->status[1][FFTD_ETIMEDOUT];
		uint64_t after_answered = 0;
		for (int b = 0; b < FFTD_LOAD_NSTATUS; b++) {
			after_answered += c->status[1][b];
		}
		uint64_t after_sub
		    = c->submitted > c->mark ? c->submitted - c->mark : 0;
		late_bad += after_sub > after_answered
		    ? after_sub - after_answered
		    : 0;
		r->late_bad += late_bad;
	}
	if (r->accepted_bad != 0) {
		fftd__load_fail(r,
		    "%" PRIu64 " of %" PRIu64
		    " accepted requests not answered correctly",
		    r->accepted_bad, r->accepted);
	}
	if (r->late_bad != 0) {
		fftd__load_fail(r,
		    "%" PRIu64
		    " requests after the marks wrong, unanswered or answered "
		    "with an error other than ECLOSED/ESHUTDOWN/ETIMEDOUT",
		    r->late_bad);
	}
	if (r->exit_code != 0) {
		fftd__load_fail(
		    r, "the daemon exited with status %d", r->exit_code);
	} else if (!(r->exit_s <= FFTD_LOAD_EXIT_TARGET_S)) {
		fftd__load_fail(r,
		    "the daemon took %.2f s to exit (target %.0f s)", r->exit_s,
		    FFTD_LOAD_EXIT_TARGET_S);
	}
}

// SPDX-License-Identifier: MIT
//
// load_print.c — the load engine's words (see load.h): the names of the
// realtime stages and status buckets, an error's text, and the report of a
// run (fftd_load_print) that bench/load and tests/integration/test_load.c
// print. The figures it prints are load_figures.c's.

#include "load_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

// fftd_load_stage_names are the realtime stages' names (load.h).
const char *const fftd_load_stage_names[FFTD_LOAD_NSTAGES]
    = { "copy in", "to daemon", "queue", "device", "back", "copy out" };

// fftd__load_ferr is rv's name and libfftd's last message, in a buffer of
// the calling thread's.
const char *
fftd__load_ferr(int rv)
{
	static _Thread_local char b[300];
	const char               *d = fftd_last_error();
	snprintf(b, sizeof(b), "%s%s%.200s", fftd_err_name(rv),
	    d != NULL && d[0] ? ": " : "", d != NULL ? d : "");
	return b;
}

// fftd_load_status_name is a short name for a status bucket (load.h).
const char *
fftd_load_status_name(int bucket)
{
	if (bucket == FFTD_LOAD_NSTATUS - 1) {
		return "other";
	}
	const char *n = fftd_err_name(bucket);
	return strncmp(n, "FFTD_", 5) == 0 ? n + 5 : n;
}

// kind_name is a transform kind's name in the report.
static const char *
kind_name(fftd_kind k)
{
	return k == FFTD_C2C ? "C2C" : k == FFTD_R2C ? "R2C" : "C2R";
}

// shape_label is a client's shape as the report shows it.
static void
shape_label(char *b, size_t n, const fftd_load_client *c)
{
	snprintf(b, n, "%s f32 %" PRId64 "x%" PRId64, kind_name(c->kind), c->n,
	    c->batch);
}

// mark is a target's verdict in the report.
static const char *
mark(int ok)
{
	return ok ? "ok" : "MISSED";
}

// fftd_load_print writes the report of a run to f (load.h).
void
fftd_load_print(const fftd_load_result *r, FILE *f)
{
	const fftd_load_config *cfg = &r->cfg;
	fprintf(f,
	    "fftd load%s: daemon %s, backend %s (%s), %s sizes; %d clients "
	    "(%d realtime at %.0f Hz%s, spin %d us, slice %d us), batch depth "
	    "%d%s, nice %d\n",
	    r->sigterm ? " (SIGTERM run)" : "", r->info.server_version,
	    r->info.backend,
	    r->info.ndevices > 0 ? r->info.devices[0].name : "no device",
	    r->small ? "small" : "full", r->nclients, cfg->nrealtime,
	    cfg->rt_rate_hz, cfg->rt_in_place ? ", slots in place" : "",
	    cfg->rt_spin_us, cfg->rt_slice_us, cfg->depth,
	    cfg->batch_shm ? " in shared buffers" : "", cfg->batch_nice);
	if (cfg->batch_cpus[0] != '\0') {
		fprintf(f, "batch clients on CPUs %s\n", cfg->batch_cpus);
	}
	fprintf(f,
	    "%3s %-4s %-20s %8s %5s %9s %9s %6s %6s %9s %7s %8s %7s %6s\n", "#",
	    "cls", "shape", "in KiB", "depth", "requests", "ok", "wrong",
	    "lost", "dev s(w)", "share", "dev us/r", "q ms/r", "backlg");
	double batch_dev = 0;
	int    nb        = 0;
	for (int i = 0; i < r->nclients; i++) {
		if (!r->cl[i].realtime && r->cl[i].matched) {
			batch_dev += r->cl[i].device_s;
			nb++;
		}
	}
	for (int i = 0; i < r->nclients; i++) {
		const fftd_load_client *c = &r->cl[i];
		char                    sl[40];
		shape_label(sl, sizeof(sl), c);
		uint64_t lost = c->failed + c->unanswered + c->refused;
		fprintf(f,
		    "%3d %-4s %-20s %8.1f %5d %9" PRIu64 " %9" PRIu64
		    " %6" PRIu64 " %6" PRIu64,
		    i, c->realtime ? "rt" : "bat", sl,
		    (double) c->in_bytes / 1024.0, c->depth, c->submitted,
		    c->ok, c->wrong, lost);
		if (c->matched) {
			double share = !c->realtime && batch_dev > 0
			    ? c->device_s / (batch_dev / nb)
			    : NAN;
			double per   = c->executes ? 1.0 / c->executes : NAN;
			fprintf(f, " %9.3f %7.3f %8.1f %7.2f %6.2f\n",
			    c->device_s, share, c->device_s * 1e6 * per,
			    c->queue_s * 1e3 * per, c->backlogged);
		} else {
			fprintf(f, " %9s %7s %8s %7s %6s\n", "-", "-", "-", "-",
			    "-");
		}
	}
	fprintf(f,
	    "(share: device time over the batch clients' mean, in the "
	    "window; dev us/r, q ms/r: the daemon's device and queue time per "
	    "request in the window; backlg: share "
	    "of %d ms samples with work queued at the daemon)\n",
	    SAMPLE_MS);
	fprintf(f,
	    "window %.1f s: %" PRIu64 " requests (%.0f/s, %.2f GB/s of "
	    "input), device busy %.0f%%; %" PRIu64 " requests in all, %.1f s "
	    "loaded + %.1f s unloaded\n",
	    r->window_s, r->window_reqs,
	    r->window_s > 0 ? (double) r->window_reqs / r->window_s : NAN,
	    r->window_s > 0 ? r->window_in_bytes / r->window_s / 1e9 : NAN,
	    r->device_busy * 100, r->submitted, r->run_s, r->unloaded_s);
	if (r->ndev > 1) {
		fprintf(f, "devices in the window:");
		for (int d = 0; d < r->ndev; d++) {
			fprintf(f, "%s %d: busy %.0f%%, %" PRIu64 " executions",
			    d ? ";" : "", d, r->dev_busy[d] * 100,
			    r->dev_executes[d]);
		}
		fprintf(f, "\n");
	}
	fprintf(f,
	    "host CPUs: unloaded %.0f%% busy, %.1f%% stolen; window %.0f%% "
	    "busy, %.1f%% stolen (steal: a hypervisor ran something else on "
	    "this machine's vCPUs)\n",
	    r->host_busy_unloaded * 100, r->host_steal_unloaded * 100,
	    r->host_busy_loaded * 100, r->host_steal_loaded * 100);
	double maxerr = 0, bound = 0;
	for (int i = 0; i < r->nclients; i++) {
		if (r->cl[i].max_err > maxerr || isnan(r->cl[i].max_err)) {
			maxerr = r->cl[i].max_err;
		}
		bound = fmax(bound, r->cl[i].bound);
	}
	fprintf(f,
	    "results: largest relative L2 error %.2g (bound 16 eps "
	    "max(1, log2 n), up to %.2g)\n",
	    maxerr, bound);
	if (cfg->nrealtime > 0) {
		for (int i = 0; i < cfg->nrealtime; i++) {
			const fftd_load_client *c = &r->cl[i];
			fprintf(f,
			    "realtime %d (%s): unloaded p50 %.0f p99 %.0f us "
			    "(n "
			    "%" PRIu64 "), loaded p50 %.0f p99 %.0f p99.9 "
			    "%.0f max %.0f us (n %" PRIu64 "), %" PRIu64
			    " slots missed\n",
			    i, c->rt_stream ? "stream" : "inline",
			    c->unloaded.p50, c->unloaded.p99, c->unloaded.n,
			    c->loaded.p50, c->loaded.p99, c->loaded.p999,
			    c->loaded.max, c->loaded.n, c->missed);
			fprintf(f,
			    "  daemon side (histogram buckets, us): queue "
			    "p50/p99 unloaded <= %.0f/%.0f, loaded <= "
			    "%.0f/%.0f; device p99 unloaded <= %.0f, loaded "
			    "<= %.0f\n",
			    c->queue[0].p50, c->queue[0].p99, c->queue[1].p50,
			    c->queue[1].p99, c->device[0].p99,
			    c->device[1].p99);
		}
	}
	for (int b = 0; b < 2; b++) {
		const fftd_load_stages *S = &r->rt_stages[b];
		if (S->n == 0) {
			continue;
		}
		fprintf(f,
		    "realtime stages %s (us; p50 / p99 / mean over the "
		    "%" PRIu64 " slower than p99, whose mean is %.0f):",
		    b ? "loaded" : "unloaded", S->ntail, S->tail_total_mean);
		for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
			fprintf(f, "%s %s %.0f/%.0f/%.0f", j ? "," : "",
			    fftd_load_stage_names[j], S->p50[j], S->p99[j],
			    S->tail_mean[j]);
		}
		fprintf(f, "\n");
	}
	if (!r->client_stats_ok) {
		fprintf(f, "per-client statistics unavailable: %s\n",
		    r->client_stats_why);
	}
	if (!r->sigterm) {
		fprintf(f, "targets:\n");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n", "lost results",
		    r->lost, "= 0", mark(r->lost == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "wrong results", r->wrong, "= 0", mark(r->wrong == 0));
		if (r->stats_ok) {
			fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
			    "daemon errors (fftd_get_stats)", r->daemon_errors,
			    "= 0", mark(r->daemon_errors == 0));
		} else {
			fprintf(f, "  %-40s %12s   %-12s %s\n",
			    "daemon errors (fftd_get_stats)", "n/a", "= 0",
			    r->stats_why);
		}
		char lab[64];
		snprintf(lab, sizeof(lab), "Jain index, batch device time (%d)",
		    r->jain_n);
		bool all_bl = r->fair.jain_bl_n == r->jain_n;
		fprintf(f, "  %-40s %12.4f   %-12s %s\n", lab, r->jain,
		    ">= 0.99",
		    isnan(r->jain) ? "not measured"
		        : all_bl   ? mark(r->jain >= FFTD_LOAD_JAIN_TARGET)
		                   : "(not all backlogged: see below)");
		if (!all_bl) {
			snprintf(lab, sizeof(lab),
			    "Jain index, backlogged ones (%d of %d)",
			    r->fair.jain_bl_n, r->jain_n);
			fprintf(f, "  %-40s %12.4f   %-12s %s\n", lab,
			    r->fair.jain_bl, ">= 0.99",
			    isnan(r->fair.jain_bl)
			        ? "not measured (devices not saturated)"
			        : mark(
			            r->fair.jain_bl >= FFTD_LOAD_JAIN_TARGET));
			fprintf(f, "  %-40s %12d   %-12s %s\n",
			    "others above the backlogged mean +5%",
			    r->fair.over_n, "= 0", mark(r->fair.over_n == 0));
		}
		fprintf(f, "  %-40s %5.0f / %5.0f   %-12s\n",
		    "realtime p99 unloaded / loaded (us)", r->rt_unloaded.p99,
		    r->rt_loaded.p99, "");
		fprintf(f, "  %-40s %12.2f   %-12s %s\n",
		    "realtime p99 loaded / unloaded", r->p99_ratio, "<= 2",
		    isnan(r->p99_ratio)
		        ? "not measured"
		        : mark(r->p99_ratio <= FFTD_LOAD_P99_RATIO_TARGET));
	} else {
		fprintf(f,
		    "SIGTERM %.1f s into the load; requests by status "
		    "(before the marks | after):\n",
		    r->sigterm_at_s);
		for (int b = 0; b < FFTD_LOAD_NSTATUS; b++) {
			uint64_t n0 = 0, n1 = 0;
			for (int i = 0; i < r->nclients; i++) {
				n0 += r->cl[i].status[0][b];
				n1 += r->cl[i].status[1][b];
			}
			if (n0 || n1) {
				fprintf(f,
				    "  %-14s %10" PRIu64 " | %" PRIu64 "\n",
				    fftd_load_status_name(b), n0, n1);
			}
		}
		uint64_t una = 0, ref = 0;
		for (int i = 0; i < r->nclients; i++) {
			una += r->cl[i].unanswered;
			ref += r->cl[i].refused;
		}
		fprintf(f,
		    "  unanswered %" PRIu64 ", submits refused %" PRIu64
		    " (not accepted: fine)\n",
		    una, ref);
		fprintf(f, "targets:\n");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "accepted, not answered correctly", r->accepted_bad, "= 0",
		    mark(r->accepted_bad == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "accepted (before the marks)", r->accepted, "", "");
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "later: wrong or unclean", r->late_bad, "= 0",
		    mark(r->late_bad == 0));
		fprintf(f, "  %-40s %12" PRIu64 "   %-12s %s\n",
		    "later: ETIMEDOUT (never read)", r->late_timedout, "",
		    r->late_timedout ? "(waited for a reconnection)" : "");
		fprintf(f, "  %-40s %12d   %-12s %s\n", "daemon exit status",
		    r->exit_code, "= 0", mark(r->exit_code == 0));
		fprintf(f, "  %-40s %12.3f   %-12s %s\n",
		    "daemon exit after SIGTERM (s)", r->exit_s, "<= 5",
		    mark(r->exit_s <= FFTD_LOAD_EXIT_TARGET_S));
	}
	if (r->failures) {
		fprintf(f, "FAILED (%d): %s\n", r->failures, r->failure);
	}
	fflush(f);
}

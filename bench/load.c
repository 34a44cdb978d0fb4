// SPDX-License-Identifier: MIT
//
// load.c — the many-tenant load benchmark (issue 5's targets).
//
//   load [--url URL | --spawn FFTD_BIN] [--json FILE] [--clients N]
//        [--realtime N] [--requests N] [--depth N] [--rate HZ]
//        [--unloaded N] [--rt-inline] [--rt-in-place] [--rt-spin-us US]
//        [--rt-slice-us US] [--batch-shm]
//        [--batch-nice N] [--batch-cpus LIST]
//        [--sizes auto|small|full]
//        [--shapes I,J,...] [--sigterm-after S] [--config FILE] [--backend
//        NAME]
//        [--timeout S] [--verbose]
//
// N client processes (default 16, of which 2 realtime) against one
// daemon: realtime clients stream f32 C2C 4096 x 16 at 250 Hz through an
// fftd_stream (--rt-inline: fftd_execute; --rt-in-place: its slots used in
// place, input written into the slot before the clock starts and the
// result checked in the slot, as a pipeline would; --rt-spin-us US: their
// waits spin up to US before sleeping, fftd_stream_set_spin), batch clients
// keep --depth (default 8) requests of 256 KiB .. 16 MiB (f32 C2C and R2C,
// several lengths) in flight (--batch-shm: their arrays in fftd_buffers, so
// that neither libfftd nor the daemon copies them: less host CPU taken from the
// daemon; --batch-nice N: the batch client processes run at nice N, as
// batch jobs on a shared server usually do; --batch-cpus LIST: the batch
// client processes run only on those CPUs, e.g. 4-15, as an administrator
// keeps batch jobs off the cores of realtime pipelines; --rt-slice-us US: the
// realtime clients' threads ask for a time slice of US microseconds, see
// daemon/cpu_slice.h); --requests (default 10^5) requests
// in all, every result checked against c_k X (bench/lib/load.h says how).
// Measured: lost and wrong results, the daemon's error count, Jain's
// fairness index over the batch clients' device time (the daemon's
// per-client statistics, between two snapshots taken while every batch
// client is backlogged), realtime p50/p99 latency unloaded (realtime
// clients alone) and loaded. On the fftw backend (no GPU) the sizes are
// smaller (16 .. 192 KiB; realtime 4096 x 4 at 100 Hz) so that the run
// takes a couple of minutes on two cores. --shapes picks batch shapes by
// their index in the size table (0..6, smallest first; default all in
// turn), e.g. to see which one a realtime stream suffers from.
//
// --sigterm-after S (needs a daemon this program starts): instead of the
// measured run, the SIGTERM run: the same clients, the daemon gets SIGTERM
// S seconds into full load; every request the daemon had accepted must be
// answered correctly, the others end cleanly (FFTD_ECLOSED or
// FFTD_ESHUTDOWN; FFTD_ETIMEDOUT, counted apart, for those still in the
// client's send queue: see bench/lib/load.h), and the daemon must exit 0
// within 5 s.
//
// Without --url or --spawn the daemon $FFTD_BIN (default build/fftd) is
// started. The exit status is 1 if a result was lost or wrong, the daemon
// counted errors, or a SIGTERM check failed; performance targets missed
// are marked in the table, not in the exit status.

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "fftd.h"
#include "lib/daemon.h"
#include "lib/load.h"

static const fftd_test_role ROLES[] = {
	{ FFTD_LOAD_ROLE, fftd_load_role },
	{ NULL, NULL },
};

static void
usage(void)
{
	fprintf(stderr,
	    "usage: load [--url URL | --spawn FFTD_BIN] [--json FILE] "
	    "[--clients N]\n"
	    "            [--realtime N] [--requests N] [--depth N] [--rate "
	    "HZ]\n"
	    "            [--unloaded N] [--rt-inline] [--rt-in-place] "
	    "[--rt-spin-us US]\n"
	    "            [--rt-slice-us US]\n"
	    "            [--batch-shm] [--batch-nice N] [--batch-cpus LIST] "
	    "[--sizes "
	    "auto|small|full]\n"
	    "            [--shapes I,J,...]\n"
	    "            [--sigterm-after S] [--config FILE] [--backend NAME]\n"
	    "            [--timeout S] [--verbose]\n");
	exit(2);
}

static char *
read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return NULL;
	}
	char *buf = malloc(1 << 20);
	if (buf == NULL) {
		fclose(f);
		return NULL;
	}
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n]   = '\0';
	fclose(f);
	return buf;
}

// --- JSON
// ----------------------------------------------------------------------

// jarray writes `, "key": [v0, v1, ...]` of the FFTD_LOAD_NSTAGES values.
static void
jarray(FILE *f, const char *key, const double *v)
{
	fprintf(f, ", \"%s\": [", key);
	for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
		fprintf(f, "%s", j ? ", " : "");
		bench_json_num(f, v[j]);
	}
	fprintf(f, "]");
}

static void
jstages(FILE *f, const char *key, const fftd_load_stages *S)
{
	fprintf(f, ", \"%s\": {\"n\": %" PRIu64 ", \"tail_n\": %" PRIu64, key,
	    S->n, S->ntail);
	bench_json_field(f, "tail_total_mean_us", S->tail_total_mean);
	jarray(f, "p50_us", S->p50);
	jarray(f, "p99_us", S->p99);
	jarray(f, "tail_mean_us", S->tail_mean);
	fprintf(f, "}");
}

static void
jlat(FILE *f, const char *key, const fftd_load_lat *L)
{
	fprintf(f, "\"%s\": {\"n\": %" PRIu64 ", \"p50_us\": ", key, L->n);
	bench_json_num(f, L->p50);
	bench_json_field(f, "p99_us", L->p99);
	bench_json_field(f, "p999_us", L->p999);
	bench_json_field(f, "max_us", L->max);
	bench_json_field(f, "mean_us", L->mean);
	fprintf(f, "}");
}

static const char *
kname(fftd_kind k)
{
	return k == FFTD_C2C ? "c2c" : k == FFTD_R2C ? "r2c" : "c2r";
}

static void
json_run(FILE *f, const fftd_load_result *r)
{
	const fftd_load_config *c = &r->cfg;
	fprintf(f,
	    "{\n    \"config\": {\"clients\": %d, \"realtime\": %d, "
	    "\"requests\": %lld, \"depth\": %d, \"rt_rate_hz\": %g, "
	    "\"rt_unloaded\": %d, \"sizes\": \"%s\", \"sigterm_after_s\": "
	    "%g, \"batch_shm\": %s, \"batch_nice\": %d, \"rt_slice_us\": "
	    "%d, \"rt_in_place\": %s, \"rt_spin_us\": %d, \"batch_cpus\": ",
	    c->nclients, c->nrealtime, c->requests, c->depth, c->rt_rate_hz,
	    c->rt_unloaded, r->small ? "small" : "full", c->sigterm_after_s,
	    c->batch_shm ? "true" : "false", c->batch_nice, c->rt_slice_us,
	    c->rt_in_place ? "true" : "false", c->rt_spin_us);
	bench_json_str(f, c->batch_cpus);
	fprintf(f, "},\n");
	fprintf(f,
	    "    \"requests\": {\"submitted\": %" PRIu64 ", \"ok\": %" PRIu64
	    ", \"wrong\": %" PRIu64 ", \"failed\": %" PRIu64
	    ", \"unanswered\": %" PRIu64 ", \"refused\": %" PRIu64
	    ", \"lost\": %" PRIu64 "},\n",
	    r->submitted, r->ok, r->wrong, r->failed, r->unanswered, r->refused,
	    r->lost);
	fprintf(f, "    \"window\": {\"seconds\": ");
	bench_json_num(f, r->window_s);
	fprintf(f, ", \"requests\": %" PRIu64 ", \"requests_per_s\": ",
	    r->window_reqs);
	bench_json_num(
	    f, r->window_s > 0 ? (double) r->window_reqs / r->window_s : NAN);
	fprintf(f, ", \"input_gbps\": ");
	bench_json_num(
	    f, r->window_s > 0 ? r->window_in_bytes / r->window_s / 1e9 : NAN);
	fprintf(f, ", \"device_busy\": ");
	bench_json_num(f, r->device_busy);
	bench_json_field(f, "host_busy_unloaded", r->host_busy_unloaded);
	bench_json_field(f, "host_steal_unloaded", r->host_steal_unloaded);
	bench_json_field(f, "host_busy_loaded", r->host_busy_loaded);
	bench_json_field(f, "host_steal_loaded", r->host_steal_loaded);
	fprintf(f, ", \"devices\": [");
	for (int d = 0; d < r->ndev; d++) {
		fprintf(f, "%s{\"index\": %d, \"busy\": ", d ? ", " : "", d);
		bench_json_num(f, r->dev_busy[d]);
		fprintf(f, ", \"executes\": %" PRIu64 "}", r->dev_executes[d]);
	}
	fprintf(f, "]},\n    \"unloaded_s\": ");
	bench_json_num(f, r->unloaded_s);
	fprintf(f, ", \"loaded_s\": ");
	bench_json_num(f, r->run_s);
	fprintf(f, ",\n    \"daemon_stats\": ");
	if (r->stats_ok && !r->sigterm) {
		fprintf(f,
		    "{\"errors\": %" PRIu64 ", \"requests\": %" PRIu64
		    ", \"executes\": %" PRIu64 ", \"canceled\": %" PRIu64
		    ", \"expired\": %" PRIu64 "}",
		    r->daemon_errors, r->after.requests - r->before.requests,
		    r->after.executes - r->before.executes,
		    r->after.canceled - r->before.canceled,
		    r->after.expired - r->before.expired);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n    \"client_stats\": ");
	if (r->client_stats_ok) {
		fprintf(f, "\"ok\"");
	} else {
		bench_json_str(f, r->client_stats_why);
	}
	fprintf(f, ",\n    \"jain\": {\"value\": ");
	bench_json_num(f, r->jain);
	fprintf(f, ", \"target\": %.2f, \"clients\": %d, \"share_min\": ",
	    FFTD_LOAD_JAIN_TARGET, r->jain_n);
	bench_json_num(f, r->share_min);
	fprintf(f, ", \"share_max\": ");
	bench_json_num(f, r->share_max);
	fprintf(f, ", \"backlogged\": %d, \"backlogged_min\": %.2f",
	    r->fair.jain_bl_n, FFTD_LOAD_BACKLOG_MIN);
	bench_json_field(f, "value_backlogged", r->fair.jain_bl);
	fprintf(f, ", \"over_backlogged_mean\": %d", r->fair.over_n);
	fprintf(f, "},\n    \"realtime\": {");
	jlat(f, "unloaded", &r->rt_unloaded);
	fprintf(f, ", ");
	jlat(f, "loaded", &r->rt_loaded);
	fprintf(f, ", \"p99_ratio\": ");
	bench_json_num(f, r->p99_ratio);
	fprintf(
	    f, ", \"p99_ratio_target\": %.1f,\n", FFTD_LOAD_P99_RATIO_TARGET);
	fprintf(f, "      \"stages\": {\"names\": [");
	for (int j = 0; j < FFTD_LOAD_NSTAGES; j++) {
		fprintf(f, "%s", j ? ", " : "");
		bench_json_str(f, fftd_load_stage_names[j]);
	}
	fprintf(f, "]");
	for (int b = 0; b < 2; b++) {
		jstages(f, b ? "loaded" : "unloaded", &r->rt_stages[b]);
	}
	fprintf(f, "}},\n");
	if (r->sigterm) {
		fprintf(f, "    \"sigterm\": {\"at_s\": ");
		bench_json_num(f, r->sigterm_at_s);
		fprintf(f, ", \"exit_s\": ");
		bench_json_num(f, r->exit_s);
		fprintf(f,
		    ", \"exit_target_s\": %.0f, \"exit_code\": %d, "
		    "\"accepted\": %" PRIu64 ", \"accepted_ok\": %" PRIu64
		    ", \"accepted_bad\": %" PRIu64 ", \"late_bad\": %" PRIu64
		    ", \"late_timedout\": %" PRIu64
		    ", \"status_before_mark\": {",
		    FFTD_LOAD_EXIT_TARGET_S, r->exit_code, r->accepted,
		    r->accepted_ok, r->accepted_bad, r->late_bad,
		    r->late_timedout);
		for (int side = 0; side < 2; side++) {
			int first = 1;
			for (int b = 0; b < FFTD_LOAD_NSTATUS; b++) {
				uint64_t n = 0;
				for (int i = 0; i < r->nclients; i++) {
					n += r->cl[i].status[side][b];
				}
				if (n) {
					fprintf(f, "%s\"%s\": %" PRIu64,
					    first ? "" : ", ",
					    fftd_load_status_name(b), n);
					first = 0;
				}
			}
			fprintf(f, "}%s",
			    side ? "},\n" : ", \"status_after_mark\": {");
		}
	}
	fprintf(f, "    \"clients\": [\n");
	for (int i = 0; i < r->nclients; i++) {
		const fftd_load_client *k = &r->cl[i];
		fprintf(f,
		    "      {\"index\": %d, \"class\": \"%s\", \"kind\": "
		    "\"%s\", \"precision\": \"f32\", \"n\": %" PRId64
		    ", \"batch\": %" PRId64
		    ", \"input_bytes\": %zu, \"output_bytes\": %zu, \"depth\": "
		    "%d, \"algorithm\": ",
		    i, k->realtime ? "realtime" : "batch", kname(k->kind), k->n,
		    k->batch, k->in_bytes, k->out_bytes, k->depth);
		bench_json_str(f, k->algorithm);
		fprintf(f,
		    ", \"submitted\": %" PRIu64 ", \"ok\": %" PRIu64
		    ", \"wrong\": %" PRIu64 ", \"failed\": %" PRIu64
		    ", \"unanswered\": %" PRIu64 ", \"refused\": %" PRIu64
		    ", \"max_rel_err\": ",
		    k->submitted, k->ok, k->wrong, k->failed, k->unanswered,
		    k->refused);
		bench_json_num(f, k->max_err);
		fprintf(f, ", \"err_bound\": ");
		bench_json_num(f, k->bound);
		if (k->matched) {
			fprintf(f, ", \"window\": {\"device_s\": ");
			bench_json_num(f, k->device_s);
			fprintf(f, ", \"queue_s\": ");
			bench_json_num(f, k->queue_s);
			fprintf(f,
			    ", \"executes\": %" PRIu64 ", \"backlogged\": ",
			    k->executes);
			bench_json_num(f, k->backlogged);
			fprintf(f, ", \"weight\": ");
			bench_json_num(f, k->weight);
			fprintf(f, "}");
		}
		static const char *const ph[2] = { "unloaded", "window" };
		for (int p = 0; p < 2; p++) {
			if (k->queue[p].n == 0) {
				continue;
			}
			fprintf(f,
			    ", \"daemon_%s\": {\"n\": %" PRIu64
			    ", \"queue_p50_us_le\": ",
			    ph[p], k->queue[p].n);
			bench_json_num(f, k->queue[p].p50);
			fprintf(f, ", \"queue_p99_us_le\": ");
			bench_json_num(f, k->queue[p].p99);
			fprintf(f, ", \"device_p50_us_le\": ");
			bench_json_num(f, k->device[p].p50);
			fprintf(f, ", \"device_p99_us_le\": ");
			bench_json_num(f, k->device[p].p99);
			fprintf(f, "}");
		}
		if (k->realtime) {
			fprintf(f,
			    ", \"rate_hz\": %g, \"missed_slots\": %" PRIu64
			    ", ",
			    k->rate_hz, k->missed);
			jlat(f, "unloaded", &k->unloaded);
			fprintf(f, ", ");
			jlat(f, "loaded", &k->loaded);
		}
		fprintf(f, ", \"exit_code\": %d", k->exit_code);
		if (k->why[0]) {
			fprintf(f, ", \"note\": ");
			bench_json_str(f, k->why);
		}
		fprintf(f, "}%s\n", i + 1 < r->nclients ? "," : "");
	}
	fprintf(f, "    ],\n    \"failures\": %d, \"failure\": ", r->failures);
	bench_json_str(f, r->failure);
	fprintf(f, "\n  }");
}

static int
write_json(const char *path, const char *url, const fftd_load_result *load,
    const fftd_load_result *term)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "load: cannot write %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	const fftd_info *in = load != NULL ? &load->info : &term->info;
	fprintf(f, "{\n  \"bench\": \"fftd load\",\n  \"daemon\": {\"url\": ");
	bench_json_str(f, url);
	fprintf(f, ", \"version\": ");
	bench_json_str(f, in->server_version);
	fprintf(f, ", \"backend\": ");
	bench_json_str(f, in->backend);
	fprintf(f, ", \"devices\": [");
	for (int i = 0; i < in->ndevices; i++) {
		fprintf(f, "%s", i ? ", " : "");
		bench_json_str(f, in->devices[i].name);
	}
	fprintf(f, "], \"max_inflight_per_client\": %u},\n",
	    in->max_inflight_per_client);
	fprintf(f,
	    "  \"checks\": \"request k of a client is c_k x (c_k = 1 + k mod "
	    "13, x exact in f32) and must come back as c_k X (X: FFTW in "
	    "double) within relative L2 error 16 eps max(1, log2 n), eps = "
	    "2^-24\",\n");
	fprintf(f, "  \"load\": ");
	if (load != NULL) {
		json_run(f, load);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"sigterm_run\": ");
	if (term != NULL) {
		json_run(f, term);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, "\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}

// --- main
// ----------------------------------------------------------------------

int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);
	setvbuf(stdout, NULL, _IOLBF, 0);

	fftd_load_config cfg;
	fftd_load_defaults(&cfg);
	const char *url = NULL, *spawn = NULL, *json = NULL, *conf = NULL,
	           *backend  = NULL;
	double sigterm_after = 0;
	for (int i = 1; i < argc; i++) {
		const char *a   = argv[i];
		const char *v   = i + 1 < argc ? argv[i + 1] : NULL;
		int         val = v != NULL;
		if (strcmp(a, "--url") == 0 && val) {
			url = argv[++i];
		} else if (strcmp(a, "--spawn") == 0 && val) {
			spawn = argv[++i];
		} else if (strcmp(a, "--json") == 0 && val) {
			json = argv[++i];
		} else if (strcmp(a, "--clients") == 0 && val) {
			cfg.nclients = atoi(argv[++i]);
		} else if (strcmp(a, "--realtime") == 0 && val) {
			cfg.nrealtime = atoi(argv[++i]);
		} else if (strcmp(a, "--requests") == 0 && val) {
			cfg.requests = atoll(argv[++i]);
		} else if (strcmp(a, "--depth") == 0 && val) {
			cfg.depth = atoi(argv[++i]);
		} else if (strcmp(a, "--rate") == 0 && val) {
			cfg.rt_rate_hz = atof(argv[++i]);
		} else if (strcmp(a, "--shapes") == 0 && val) {
			// comma-separated indices into the size table
			char *dup = strdup(argv[++i]), *save = NULL;
			cfg.nshapes = 0;
			for (char *t = strtok_r(dup, ",", &save); t != NULL;
			     t       = strtok_r(NULL, ",", &save)) {
				if (cfg.nshapes == FFTD_LOAD_NSHAPES) {
					usage();
				}
				cfg.shapes[cfg.nshapes++] = atoi(t);
			}
			free(dup);
		} else if (strcmp(a, "--rt-inline") == 0) {
			cfg.rt_inline = 1;
		} else if (strcmp(a, "--rt-in-place") == 0) {
			cfg.rt_in_place = 1;
		} else if (strcmp(a, "--rt-spin-us") == 0 && val) {
			cfg.rt_spin_us = atoi(argv[++i]);
			if (cfg.rt_spin_us < 0 || cfg.rt_spin_us > 1000000) {
				usage();
			}
		} else if (strcmp(a, "--batch-shm") == 0) {
			cfg.batch_shm = 1;
		} else if (strcmp(a, "--rt-slice-us") == 0 && val) {
			cfg.rt_slice_us = atoi(argv[++i]);
			if (cfg.rt_slice_us < 0 || cfg.rt_slice_us > 100000) {
				usage();
			}
		} else if (strcmp(a, "--batch-cpus") == 0 && val) {
			cpu_set_t cs;
			snprintf(cfg.batch_cpus, sizeof(cfg.batch_cpus), "%s",
			    argv[++i]);
			if (strlen(argv[i]) >= sizeof(cfg.batch_cpus)
			    || fftd_load_cpu_list(cfg.batch_cpus, &cs) <= 0) {
				usage();
			}
		} else if (strcmp(a, "--batch-nice") == 0 && val) {
			cfg.batch_nice = atoi(argv[++i]);
			if (cfg.batch_nice < 0 || cfg.batch_nice > 19) {
				usage();
			}
		} else if (strcmp(a, "--unloaded") == 0 && val) {
			cfg.rt_unloaded = atoi(argv[++i]);
		} else if (strcmp(a, "--sizes") == 0 && val) {
			i++;
			if (strcmp(v, "auto") == 0) {
				cfg.sizes = FFTD_LOAD_SIZES_AUTO;
			} else if (strcmp(v, "small") == 0) {
				cfg.sizes = FFTD_LOAD_SIZES_SMALL;
			} else if (strcmp(v, "full") == 0) {
				cfg.sizes = FFTD_LOAD_SIZES_FULL;
			} else {
				usage();
			}
		} else if (strcmp(a, "--sigterm-after") == 0 && val) {
			sigterm_after = atof(argv[++i]);
		} else if (strcmp(a, "--config") == 0 && val) {
			conf = argv[++i];
		} else if (strcmp(a, "--backend") == 0 && val) {
			backend = argv[++i];
		} else if (strcmp(a, "--timeout") == 0 && val) {
			cfg.timeout_s = atoi(argv[++i]);
		} else if (strcmp(a, "--verbose") == 0) {
			cfg.verbose = 1;
		} else {
			usage();
		}
	}
	if (url != NULL && spawn != NULL) {
		usage();
	}
	if (url != NULL && sigterm_after > 0) {
		fprintf(stderr,
		    "load: --sigterm-after needs a daemon this program starts "
		    "(not --url)\n");
		return 2;
	}
	if (cfg.nclients < 1 || cfg.nclients > FFTD_LOAD_MAX_CLIENTS
	    || cfg.nrealtime < 0 || cfg.nrealtime > FFTD_LOAD_MAX_REALTIME
	    || cfg.nrealtime > cfg.nclients || cfg.depth < 1
	    || cfg.depth > FFTD_LOAD_MAX_DEPTH || cfg.requests < 1) {
		fprintf(stderr,
		    "load: --clients 1..%d, --realtime 0..%d (<= clients), "
		    "--depth 1..%d, --requests >= 1\n",
		    FFTD_LOAD_MAX_CLIENTS, FFTD_LOAD_MAX_REALTIME,
		    FFTD_LOAD_MAX_DEPTH);
		return 2;
	}

	fftd_test_daemon dmn;
	int              spawned = 0;
	if (url == NULL) {
		char *ctext = NULL;
		if (conf != NULL && (ctext = read_text(conf)) == NULL) {
			fprintf(stderr, "load: cannot read %s\n", conf);
			return 2;
		}
		if (spawn != NULL) {
			setenv("FFTD_BIN", spawn, 1);
		}
		const char *dargs[] = { "--backend", backend, NULL };
		if (fftd_test_daemon_start(
		        &dmn, ctext, backend != NULL ? dargs : NULL)
		    != 0) {
			fprintf(stderr, "load: could not start %s\n",
			    fftd_test_daemon_bin());
			free(ctext);
			return 1;
		}
		free(ctext);
		spawned = 1;
		url     = dmn.url;
	}
	cfg.url    = url;
	cfg.daemon = spawned ? &dmn : NULL;

	// One run: the measured load, or (--sigterm-after) the SIGTERM run.
	static fftd_load_result res;
	int                     bad = 0;
	cfg.sigterm_after_s         = sigterm_after;
	if (fftd_load_run(&cfg, &res) != 0) {
		fprintf(stderr, "load: %s\n", res.failure);
		bad = 1;
	} else {
		fftd_load_print(&res, stdout);
		bad |= res.failures != 0;
		if (json != NULL
		    && write_json(json, url, sigterm_after > 0 ? NULL : &res,
		           sigterm_after > 0 ? &res : NULL)
		        != 0) {
			bad = 1;
		} else if (json != NULL) {
			printf("JSON: %s\n", json);
		}
	}
	if (spawned && dmn.pid != 0) {
		int st = fftd_test_daemon_stop(&dmn);
		if (st != 0) {
			fprintf(
			    stderr, "load: daemon exited with status %d\n", st);
			bad = 1;
		}
	}
	if (bad) {
		printf("load: FAILED\n");
	}
	return bad;
}

// SPDX-License-Identifier: MIT
//
// e2e.c — end-to-end benchmark of fftd against what a user could write
// in-process, all in one run on the same GPU (issue 3).
//
//   e2e [--url URL | --spawn FFTD_BIN] [--json FILE] [--quick]
//       [--cases LIST] [--reps N] [--config FILE] [--verbose]
//
// For each case (f32 C2C N=4096, f32 C2C N=2^20, f32 R2C N=16384, f16 C2C
// N=4096; batch making >= 512 MiB of input, 64 MiB with --quick):
//   (a) pinned cudaMemcpyAsync H2D and D2H at once on two streams: the
//       duplex PCIe bound, in input bytes/s for this case's in/out sizes;
//   (b) in-process cuFFT, one stream: H2D + FFT + D2H of the whole batch;
//   (c) in-process cuFFT, 16 streams: the batch in 16 chunks, one plan and
//       one stream per chunk;
//   (d) fftd shared-memory path: input and output in fftd_buffer's;
//   (e) fftd inline path: fftd_execute on malloc'd memory, beside the
//       host's single-thread memcpy rate for the same size;
//   (f) fftd streaming session, depth 4, one plan of ~64 MiB per submit
//       (slots filled in place: the producer's own writes are not timed;
//       "f-copy" also times copying each chunk in and out of the slots);
//   4 client processes at once, each (d) (and, for comparison, (e)) on its
//   own quarter of the batch in its own buffers: aggregate throughput;
// and once: small-request round trips (N=1024 f32 C2C batch 1, 2000 after
// warm-up, p50/p99 in µs) over the connection.
// (a)-(c) are timed with CUDA events, (d)-(f) with CLOCK_MONOTONIC; every
// figure is the median of --reps repetitions after warm-up, in GB/s (1e9
// bytes/s) of input bytes. (d), (e) and (f) are checked bit for bit against
// each other and against a double-precision DFT of a few transforms.
//
// --cases LIST (comma-separated) picks among c2c4096, c2c1m, r2c16384,
// f16c2c4096, latency and clients (the 4-client runs of the chosen cases);
// default: all. Without a GPU (cudaGetDeviceCount fails) (a)-(c) are
// skipped and the --quick sizes are used.
//
// This file holds the program: its options, the run over the chosen
// cases, the exit status. The case families are its siblings (e2e.h):
// e2e_cuda.c (a)-(c), e2e_fftd.c (d)-(f), e2e_clients.c (4 clients),
// e2e_latency.c (small requests); e2e_cases.c the cases and figures,
// e2e_report.c the tables and JSON.

#include "e2e.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ROLES are the child roles: the 4 clients' processes.
static const fftd_test_role ROLES[] = {
	{ "client", e2e_role_client },
	{ NULL, NULL },
};

// usage prints the command line and exits with status 2.
static void
usage(void)
{
	fprintf(stderr,
	    "usage: e2e [--url URL | --spawn FFTD_BIN] [--json FILE] "
	    "[--quick]\n"
	    "           [--cases LIST] [--reps N] [--config FILE] [--verbose]\n"
	    "  LIST: comma-separated of c2c4096 c2c1m r2c16384 f16c2c4096 "
	    "latency clients\n");
	exit(2);
}

// read_file reads a (config) file of at most 1 MiB; NULL if it cannot.
static char *
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return NULL;
	}
	char  *buf = e2e_xmalloc(1 << 20);
	size_t n   = fread(buf, 1, (1 << 20) - 1, f);
	buf[n]     = '\0';
	fclose(f);
	return buf;
}

// main parses the options, starts or reaches the daemon, runs the chosen
// cases, prints the tables and writes the JSON; exit status 1 when a
// measurement or a check failed.
int
main(int argc, char **argv)
{
	fftd_test_child_dispatch(argc, argv, ROLES);

	static bench B;
	const char  *url = NULL, *spawn = NULL, *json = NULL, *cases = NULL,
	           *conf = NULL;
	B.reps           = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--url") == 0 && i + 1 < argc) {
			url = argv[++i];
		} else if (strcmp(a, "--spawn") == 0 && i + 1 < argc) {
			spawn = argv[++i];
		} else if (strcmp(a, "--json") == 0 && i + 1 < argc) {
			json = argv[++i];
		} else if (strcmp(a, "--quick") == 0) {
			B.quick = 1;
		} else if (strcmp(a, "--cases") == 0 && i + 1 < argc) {
			cases = argv[++i];
		} else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
			B.reps = atoi(argv[++i]);
		} else if (strcmp(a, "--config") == 0 && i + 1 < argc) {
			conf = argv[++i];
		} else if (strcmp(a, "--verbose") == 0) {
			setenv("FFTD_TEST_DAEMON_LOG", "1", 1);
		} else {
			usage();
		}
	}
	if ((url != NULL) == (spawn != NULL)) {
		if (url == NULL && spawn == NULL) {
			fprintf(stderr,
			    "e2e: give --url URL or --spawn FFTD_BIN\n");
		}
		usage();
	}
	if (B.reps == 0) {
		B.reps = 7;
	}
	if (B.reps < 1 || B.reps > MAX_REPS) {
		fprintf(stderr, "e2e: --reps must be 1..%d\n", MAX_REPS);
		return 2;
	}

	// what to run
	B.want_latency = B.want_clients = cases == NULL;
	for (int i = 0; i < NCASES; i++) {
		B.cr[i].c        = &e2e_cases[i];
		B.cr[i].selected = cases == NULL;
		B.cr[i].ref_err  = NAN;
		B.cr[i].b_err    = NAN;
		B.cr[i].de_same = B.cr[i].f_vs_d = B.cr[i].f_sameplan
		    = B.cr[i].outputs_finite     = -1;
	}
	if (cases != NULL) {
		char *dup = strdup(cases), *save = NULL;
		for (char *t = strtok_r(dup, ",", &save); t;
		     t       = strtok_r(NULL, ",", &save)) {
			int hit = 0;
			for (int i = 0; i < NCASES; i++) {
				if (strcmp(t, e2e_cases[i].name) == 0) {
					B.cr[i].selected = hit = 1;
				}
			}
			if (strcmp(t, "latency") == 0) {
				B.want_latency = hit = 1;
			}
			if (strcmp(t, "clients") == 0) {
				B.want_clients = hit = 1;
			}
			if (!hit) {
				fprintf(stderr, "e2e: unknown case %s\n", t);
				usage();
			}
		}
		free(dup);
	}

	B.gpu = e2e_gpu_detect(&B);
	if (!B.gpu && !B.quick) {
		printf("e2e: %s: using the --quick sizes\n", B.no_gpu_why);
		B.quick = 1;
	}
	size_t target = B.quick ? (size_t) (64 * MIB) : (size_t) (512 * MIB);

	fftd_test_daemon dmn;
	int              spawned = 0;
	if (spawn != NULL) {
		char *ctext = NULL;
		if (conf != NULL && (ctext = read_file(conf)) == NULL) {
			fprintf(stderr, "e2e: cannot read %s\n", conf);
			return 2;
		}
		setenv("FFTD_BIN", spawn, 1);
		if (fftd_test_daemon_start(&dmn, ctext, NULL) != 0) {
			fprintf(stderr, "e2e: could not start %s\n", spawn);
			return 1;
		}
		free(ctext);
		spawned = 1;
		url     = dmn.url;
	}
	B.url  = url;
	int rv = fftd_client_open(&B.client, url, 0);
	if (rv != FFTD_OK) {
		fprintf(stderr, "e2e: cannot connect to %s: %s\n", url,
		    e2e_ferr(rv));
		if (spawned) {
			fftd_test_daemon_stop(&dmn);
		}
		return 1;
	}
	fftd_client_info(B.client, &B.info);
	printf("fftd e2e: daemon %s at %s, backend %s (%s); GPU here: %s; %s "
	       "sizes, %d reps\n",
	    B.info.server_version, url, B.info.backend,
	    B.info.ndevices > 0 ? B.info.devices[0].name : "no device",
	    B.gpu ? B.gpu_name : B.no_gpu_why,
	    B.quick ? "quick (64 MiB)" : "full (512 MiB)", B.reps);

	// Is the shared-memory path there at all? (the reason, for the table)
	{
		fftd_buffer *probe = NULL;
		rv                 = fftd_buffer_create(B.client, 4096, &probe);
		if (rv == FFTD_OK) {
			B.shm_ok = 1;
			fftd_buffer_destroy(probe);
		} else {
			snprintf(B.shm_why, sizeof(B.shm_why),
			    "fftd_buffer_create: %s", e2e_ferr(rv));
			printf("shared-memory buffers unavailable: %s\n",
			    B.shm_why);
		}
	}

	for (int i = 0; i < NCASES; i++) {
		case_result *R = &B.cr[i];
		if (!R->selected) {
			continue;
		}
		const bcase *c = R->c;
		R->batch       = e2e_batch_for(c, target);
		R->in_bytes    = e2e_case_in_per(c) * (size_t) R->batch;
		R->out_bytes   = e2e_case_out_per(c) * (size_t) R->batch;
		printf("\n--- %s: batch %" PRId64
		       ", %.0f MiB in, %.1f MiB out\n",
		    c->label, R->batch, (double) R->in_bytes / MIB,
		    (double) R->out_bytes / MIB);
		fflush(stdout);
		char *src = e2e_xmalloc(R->in_bytes);
		e2e_fill_input(c, src, R->batch, (uint64_t) i + 1);
		char *out_b = NULL;
		if (B.gpu) {
			out_b = e2e_xmalloc_touched(R->out_bytes);
			e2e_run_inproc(&B, R, src, out_b);
			if (R->b.state != 1) {
				free(out_b);
				out_b = NULL;
			}
		} else {
			e2e_meas_set(&R->a, -1, "skipped (no GPU)");
			e2e_meas_set(&R->b, -1, "skipped (no GPU)");
			e2e_meas_set(&R->c16, -1, "skipped (no GPU)");
			printf("  (a)-(c): skipped (no GPU)\n");
		}
		e2e_run_fftd(&B, R, src, out_b);
		free(out_b);
		free(src);
		if (B.want_clients) {
			e2e_run_clients(&B, R, 1, &R->cl_shm);
			e2e_meas_print("4 clients, shared memory", &R->cl_shm);
			e2e_run_clients(&B, R, 0, &R->cl_inline);
			e2e_meas_print("4 clients, inline", &R->cl_inline);
		}
	}
	if (B.want_latency) {
		printf("\n--- small requests\n");
		e2e_run_latency(&B);
	}

	e2e_print_tables(&B);
	int bad = 0;
	// failed measurements and failed checks make the exit status 1;
	// paths the daemon does not offer (unavailable) do not
	for (int i = 0; i < NCASES; i++) {
		case_result *R     = &B.cr[i];
		const meas  *all[] = { &R->a, &R->b, &R->c16, &R->d, &R->e,
			 &R->f, &R->f_copy, &R->cl_shm, &R->cl_inline };
		for (size_t k = 0;
		     R->selected && k < sizeof(all) / sizeof(all[0]); k++) {
			bad |= all[k]->state == -2;
		}
		bad |= R->selected
		    && (R->de_same == 0 || R->f_sameplan == 0
		        || R->outputs_finite == 0
		        || (!isnan(R->ref_err)
		            && !(R->ref_err < e2e_ref_tol(R->c))));
	}
	bad |= B.lat_inline.state == -2 || B.lat_shm.state == -2;
	if (bad) {
		printf("e2e: FAILED (a measurement or a check failed; see "
		       "above)\n");
	}
	if (json != NULL) {
		bad |= e2e_write_json(&B, json) != 0;
		if (!bad) {
			printf("JSON: %s\n", json);
		}
	}
	fftd_client_close(B.client);
	if (spawned) {
		int st = fftd_test_daemon_stop(&dmn);
		if (st != 0) {
			fprintf(
			    stderr, "e2e: daemon exited with status %d\n", st);
			bad = 1;
		}
	}
	return bad;
}

// SPDX-License-Identifier: MIT
//
// main.c — the fftd daemon's entry point: options and config, backend and
// device selection, the device workers, the NNG server, and the libuv loop
// that owns signals (SIGTERM/SIGINT: drain and exit 0; SIGHUP: reload).

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <uv.h>

#include "backend.h"
#include "config.h"
#include "log.h"
#include "cpu_slice.h"
#include "metrics.h"
#include "server.h"
#include "worker.h"

#ifndef FFTD_VERSION_STRING
#define FFTD_VERSION_STRING "0.1.0"
#endif

#define DEFAULT_CONFIG "/etc/fftd/fftd.conf"

typedef struct daemon_state {
	fftd__config   cfg;
	const char    *config_path;
	fftd__server  *server;
	fftd__metrics *metrics; // NULL unless [metrics] listen is set
	fftd__worker  *workers[FFTD_MAX_DEVICES];
	fftd__worker  *rt_workers[FFTD_MAX_DEVICES]; // realtime lanes or NULL
	int            nworkers;
	uv_loop_t      loop;
	uv_signal_t    sigterm, sigint, sighup;
	uv_timer_t     notify_timer;  // systemd watchdog pings and STATUS=
	uint64_t       watchdog_usec; // 0: no watchdog asked for
	int            stop_signal;
} daemon_state;

static void
usage(FILE *f)
{
	fprintf(f,
	    "Usage: fftd [OPTION]...\n"
	    "GPU FFT service: serves batched FFTs to local and remote "
	    "clients.\n"
	    "\n"
	    "  -c, --config FILE      config file (default " DEFAULT_CONFIG
	    " if it exists)\n"
	    "  -l, --listen URL       listen on an NNG URL (ipc:// or "
	    "tcp://);\n"
	    "                         repeatable; default "
	    "ipc:///run/fftd/fftd.sock\n"
	    "                         for root, else "
	    "ipc://$XDG_RUNTIME_DIR/fftd.sock\n"
	    "  -b, --backend NAME     auto (CUDA when a GPU is present, else "
	    "FFTW),\n"
	    "                         cuda or fftw\n"
	    "  -d, --devices LIST     all, or device indices such as 0,2\n"
	    "      --log-level LEVEL  error, warn, info or debug\n"
	    "  -V, --version          print the version and exit\n"
	    "  -h, --help             print this help and exit\n"
	    "\n"
	    "Command-line options override the config file. SIGTERM or SIGINT\n"
	    "finish accepted requests and exit; SIGHUP reloads the config "
	    "file's\n"
	    "limits, cache budget and log level.\n");
}

// parse_devices turns "all" or "0,2" into a list of backend ordinals.
static int
parse_devices(const char *spec, int available, int *out, int *nout)
{
	*nout = 0;
	if (strcmp(spec, "all") == 0) {
		for (int i = 0; i < available && i < FFTD_MAX_DEVICES; i++) {
			out[(*nout)++] = i;
		}
		return 0;
	}
	const char *p = spec;
	while (*p) {
		char *end;
		errno  = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v >= available
		    || *nout >= FFTD_MAX_DEVICES) {
			return -1;
		}
		for (int i = 0; i < *nout; i++) {
			if (out[i] == v) {
				return -1;
			}
		}
		out[(*nout)++] = (int) v;
		p              = end;
		if (*p == ',') {
			p++;
		} else if (*p != '\0') {
			return -1;
		}
	}
	return *nout > 0 ? 0 : -1;
}

// select_backend applies the backend setting: auto picks CUDA when the
// CUDA backend is built in and finds a device, else FFTW, and says why.
static const fftd__backend *
select_backend(const char *want, int cpu_devices, int *ndev)
{
	char why[256] = "";
#ifdef FFTD_WITH_CUDA
	if (strcmp(want, "cuda") == 0 || strcmp(want, "auto") == 0) {
		int n = fftd__backend_cuda.probe(why, sizeof(why));
		if (n > 0) {
			fftd__log(FFTD_LOG_INFO,
			    "backend cuda: %d GPU(s) found%s", n,
			    strcmp(want, "auto") == 0 ? " (auto)" : "");
			*ndev = n;
			return &fftd__backend_cuda;
		}
		if (strcmp(want, "cuda") == 0) {
			fftd__log(FFTD_LOG_ERROR,
			    "backend cuda: no usable GPU: %s", why);
			return NULL;
		}
		fftd__log(FFTD_LOG_INFO,
		    "backend fftw (auto): no usable GPU: %s", why);
	}
#else
	if (strcmp(want, "cuda") == 0) {
		fftd__log(FFTD_LOG_ERROR,
		    "backend cuda: this fftd was built without CUDA");
		return NULL;
	}
	if (strcmp(want, "auto") == 0) {
		fftd__log(
		    FFTD_LOG_INFO, "backend fftw (auto): built without CUDA");
	}
#endif
	*ndev = fftd__backend_fftw.probe(why, sizeof(why));
	if (*ndev <= 0) {
		fftd__log(FFTD_LOG_ERROR, "backend fftw: %s", why);
		return NULL;
	}
	// The CPU may be split into several devices (backend.cpu_devices),
	// each a worker with its own FFTW threads and queue.
	*ndev = cpu_devices;
	return &fftd__backend_fftw;
}

// Teardown after the drain must not hang the exit: NNG 1.5 (Debian 12's)
// can block in nng_close when a pipe is closed in the middle of a partial
// read or write of a large message (a client still sending as we stop).
// Every accepted request has been answered by then, so after
// TEARDOWN_MAX_S the process leaves with the status it would have had.
#define TEARDOWN_MAX_S 5

static void *
teardown_watchdog(void *arg)
{
	int status = (int) (intptr_t) arg;
	sleep(TEARDOWN_MAX_S);
	fftd__log(FFTD_LOG_WARN,
	    "teardown still blocked in NNG after %d s; exiting",
	    TEARDOWN_MAX_S);
	_exit(status);
	return NULL;
}

static void
start_teardown_watchdog(int status)
{
	// Stop signals blocked in the new thread too: they must reach the
	// main thread only (see main's teardown).
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	if (pthread_create(
	        &t, NULL, teardown_watchdog, (void *) (intptr_t) status)
	    == 0) {
		pthread_detach(t);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

// on_notify_timer runs on the loop: a ping proves the loop turns (systemd
// restarts a daemon whose pings stop: WatchdogSec= in deploy/fftd.service),
// and STATUS= shows what `systemctl status fftd` prints.
static void
on_notify_timer(uv_timer_t *t)
{
	daemon_state *d = t->data;
	fftd_stats    st;
	fftd__server_get_stats(d->server, &st);
	sd_notifyf(0,
	    "%sSTATUS=serving %" PRIu64 " client(s), %" PRIu64 " plan(s), "
	    "%d request(s) in flight, %" PRIu64 " executed",
	    d->watchdog_usec ? "WATCHDOG=1\n" : "", st.sessions, st.plans,
	    fftd__server_inflight(d->server), st.executes);
}

// raise_nofile raises the soft descriptor limit to the hard one: each
// client connection, stream channel and descriptor hand-over holds one,
// and the soft limit is often 1024 while the hard one is far higher
// (systemd: LimitNOFILE= in deploy/fftd.service). Logged either way.
static void
raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		return;
	}
	rlim_t was  = rl.rlim_cur;
	rlim_t want = rl.rlim_max;
	if (want == RLIM_INFINITY) {
		want = 1 << 20; // the kernel's usual fs.nr_open
	}
	if (was != RLIM_INFINITY && was < want) {
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			fftd__log(FFTD_LOG_WARN,
			    "descriptor limit stays %llu: cannot raise it to "
			    "%llu: %s",
			    (unsigned long long) was, (unsigned long long) want,
			    strerror(errno));
			return;
		}
		fftd__log(FFTD_LOG_INFO,
		    "descriptor limit (RLIMIT_NOFILE) raised from %llu to %llu",
		    (unsigned long long) was, (unsigned long long) want);
		return;
	}
	fftd__log(FFTD_LOG_INFO, "descriptor limit (RLIMIT_NOFILE): %llu",
	    (unsigned long long) was);
}

// on_stop_signal stops the loop at the first SIGTERM or SIGINT; one that
// comes later (the loop turns again only at the very end) is only logged.
static void
on_stop_signal(uv_signal_t *h, int signum)
{
	daemon_state *d = h->data;
	if (d->stop_signal != 0) {
		fftd__log(FFTD_LOG_INFO, "%s again: already stopping",
		    strsignal(signum));
		return;
	}
	d->stop_signal = signum;
	uv_stop(h->loop);
}

static void
on_sighup(uv_signal_t *h, int signum)
{
	(void) signum;
	daemon_state *d = h->data;
	if (d->config_path == NULL) {
		fftd__log(FFTD_LOG_INFO, "SIGHUP: no config file to reload");
		return;
	}
	fftd__config fresh;
	char         err[512];
	fftd__config_defaults(&fresh);
	if (fftd__config_load(&fresh, d->config_path, err, sizeof(err)) != 0) {
		fftd__log(
		    FFTD_LOG_ERROR, "SIGHUP: config not reloaded: %s", err);
		fftd__config_free(&fresh);
		return;
	}
	// Listeners, backend and devices stay as they are: changing them
	// needs a restart. Limits, weights, cache budget and log level
	// apply now.
	if (strcmp(fresh.metrics_listen, d->cfg.metrics_listen) != 0) {
		fftd__log(FFTD_LOG_WARN,
		    "SIGHUP: [metrics] listen changed from '%s' to '%s': "
		    "takes effect at the next restart",
		    d->cfg.metrics_listen, fresh.metrics_listen);
	}
	fftd__server_reload(d->server, &fresh);
	// The plan caches' budgets, split between the lanes as at start;
	// unreferenced plans over a lowered budget are evicted at once.
	double   rt_share = d->cfg.realtime_lane ? d->cfg.realtime_memory : 0;
	uint64_t rt_cache = (uint64_t) ((double) fresh.cache_budget * rt_share);
	for (int i = 0; i < d->nworkers; i++) {
		fftd__cache_set_budget(fftd__worker_cache(d->workers[i]),
		    fresh.cache_budget - rt_cache);
		if (d->cfg.realtime_lane && d->rt_workers[i] != NULL) {
			fftd__cache_set_budget(
			    fftd__worker_cache(d->rt_workers[i]), rt_cache);
		}
	}
	fftd__log_set_level((fftd__log_level) fresh.log_level);
	fftd__log(FFTD_LOG_INFO, "SIGHUP: reloaded %s", d->config_path);
	fftd__config_free(&fresh);
}

#define LOOP_FDS 8 // descriptors the event loop needs, with margin

// loop_open makes the event loop and its signal and timer handles. It runs
// before anything listens: libuv needs descriptors of its own (epoll,
// pipes, eventfd), and once a client can reach the daemon it may take the
// last ones (or an operator lower the limit) before the loop exists; libuv
// aborts on a loop whose setup failed. Returns 0, or a libuv error with
// nothing left open.
static int
loop_open(daemon_state *d)
{
	// libuv aborts, instead of failing, when some of its descriptors
	// cannot be made (the process-wide signal pipe): it gets its
	// LOOP_FDS only when they are free. The daemon has no other thread
	// yet, so the ones seen free here are still free below.
	int fds[LOOP_FDS], n = 0;
	for (; n < LOOP_FDS; n++) {
		fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		close(fds[i]);
	}
	if (n < LOOP_FDS) {
		return UV_EMFILE;
	}
	int rv = uv_loop_init(&d->loop);
	if (rv != 0) {
		return rv;
	}
	uv_signal_t *sigs[3] = { &d->sigterm, &d->sigint, &d->sighup };
	int          nsig    = 0;
	while (nsig < 3 && (rv = uv_signal_init(&d->loop, sigs[nsig])) == 0) {
		sigs[nsig++]->data = d;
	}
	if (rv == 0
	    && (rv = uv_signal_start(&d->sigterm, on_stop_signal, SIGTERM)) == 0
	    && (rv = uv_signal_start(&d->sigint, on_stop_signal, SIGINT))
	        == 0) {
		rv = uv_signal_start(&d->sighup, on_sighup, SIGHUP);
	}
	if (rv == 0) {
		uv_timer_init(&d->loop, &d->notify_timer);
		d->notify_timer.data = d;
		return 0;
	}
	for (int i = 0; i < nsig; i++) {
		uv_close((uv_handle_t *) sigs[i], NULL);
	}
	uv_run(&d->loop, UV_RUN_DEFAULT);
	uv_loop_close(&d->loop);
	return rv;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "backend", required_argument, NULL, 'b' },
		{ "devices", required_argument, NULL, 'd' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static daemon_state d;
	// Large request and reply buffers (NNG messages of inline payloads,
	// staging) are mmap'd and go back to the system when freed. glibc's
	// default raises its mmap threshold after each such free, up to 32 MiB,
	// so later ones land in the heap and arenas and stay there: RSS then
	// drifts up with the mix of sizes seen, which hides real leaks.
	mallopt(M_MMAP_THRESHOLD, 512 * 1024);
	// Stop and reload signals wait (blocked, pending) until the event loop
	// handles them: a client may connect, and so a supervisor or test may
	// signal, as soon as the sockets listen, before the loop exists. The
	// threads started meanwhile (NNG, workers) inherit the mask, so the
	// signals always come to the loop's thread.
	sigset_t stop_sigs;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	char err[512];
	int  c;

	// First pass: the config file, so the command line can override it.
	while ((c = getopt_long(argc, argv, "c:l:b:d:Vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			break;
		case 'V':
			printf("fftd %s (protocol %d)\n", FFTD_VERSION_STRING,
			    FFTD_PROTOCOL_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case '?':
			usage(stderr);
			return 2;
		default:
			break;
		}
	}
	if (optind < argc) {
		fprintf(
		    stderr, "fftd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	fftd__config_defaults(&d.cfg);
	if (d.config_path == NULL && access(DEFAULT_CONFIG, R_OK) == 0) {
		d.config_path = DEFAULT_CONFIG;
	}
	if (d.config_path != NULL
	    && fftd__config_load(&d.cfg, d.config_path, err, sizeof(err))
	        != 0) {
		fprintf(stderr, "fftd: %s\n", err);
		return 2;
	}
	// Listen URLs on the command line replace those of the file.
	bool cli_listen = false;
	optind          = 1;
	while ((c = getopt_long(argc, argv, "c:l:b:d:Vh", opts, NULL)) != -1) {
		const char *key = NULL, *section = NULL;
		switch (c) {
		case 'l':
			if (!cli_listen) {
				fftd__config_free(&d.cfg);
				cli_listen = true;
			}
			section = "server", key = "listen";
			break;
		case 'b':
			section = "backend", key = "backend";
			break;
		case 'd':
			section = "backend", key = "devices";
			break;
		case 'L':
			section = "log", key = "level";
			break;
		default:
			continue;
		}
		if (fftd__config_set(&d.cfg, section, key, optarg) != 0) {
			fprintf(stderr, "fftd: bad value for --%s: '%s'\n",
			    c == 'L' ? "log-level" : key, optarg);
			return 2;
		}
	}
	fftd__log_set_level((fftd__log_level) d.cfg.log_level);
	raise_nofile();
	// A metrics address that is not loopback stops the start-up before
	// any device is opened.
	if (d.cfg.metrics_listen[0] != '\0'
	    && fftd__metrics_check_url(d.cfg.metrics_listen, err, sizeof(err))
	        != FFTD_OK) {
		fftd__log(FFTD_LOG_ERROR, "%s", err);
		return 2;
	}
	if (d.cfg.nlisten == 0) {
		char url[512];
		fftd__config_default_listen(url, sizeof(url));
		fftd__config_add_listen(&d.cfg, url);
	}

	int                  ndev = 0;
	const fftd__backend *be
	    = select_backend(d.cfg.backend, d.cfg.cpu_devices, &ndev);
	if (be == NULL) {
		return 1;
	}
	int ords[FFTD_MAX_DEVICES], nords;
	if (parse_devices(d.cfg.devices, ndev, ords, &nords) != 0) {
		fftd__log(FFTD_LOG_ERROR,
		    "devices = %s: not a list of distinct indices below %d",
		    d.cfg.devices, ndev);
		return 2;
	}
	fftd__backend_config bc = {
		// 0: the online CPUs, shared among the CPU devices.
		.fftw_threads         = d.cfg.fftw_threads > 0
		            ? d.cfg.fftw_threads
		            : (int) sysconf(_SC_NPROCESSORS_ONLN) / d.cfg.cpu_devices,
		.fftw_measure         = d.cfg.fftw_measure,
		.device_budget        = d.cfg.device_budget,
		.pipeline_streams     = d.cfg.pipeline_streams,
		.pipeline_chunk_bytes = d.cfg.pipeline_chunk_bytes,
		.gpu_sync             = d.cfg.gpu_sync,
	};
	// With the realtime lane, each device has a second worker for
	// realtime plans; the two split the device's memory and cache budgets.
	double rt_share = d.cfg.realtime_lane ? d.cfg.realtime_memory : 0;
	fftd__backend_config rt = bc;
	bc.budget_share         = 1 - rt_share;
	rt.budget_share         = rt_share;
	rt.realtime             = 1;
	// The two caches add up to the configured budget exactly.
	uint64_t rt_cache = (uint64_t) ((double) d.cfg.cache_budget * rt_share);
	int      status   = 1;
	bool     have_loop = false;
	// The loop first (see loop_open): the signals it takes stay blocked
	// until it runs.
	int uvrv = loop_open(&d);
	if (uvrv != 0) {
		fftd__log(FFTD_LOG_ERROR, "cannot make the event loop: %s",
		    uv_strerror(uvrv));
		goto out;
	}
	have_loop = true;
	// The channels' poller and every worker poll: auto counts them all,
	// and the server's copy of the config gets the resolved window.
	uint64_t busy_ns = fftd__config_busy_poll_ns(
	    &d.cfg, 1 + nords * (d.cfg.realtime_lane ? 2 : 1));
	d.cfg.busy_poll_us = (int) (busy_ns / 1000);
	if (busy_ns > 0) {
		fftd__log(FFTD_LOG_INFO,
		    "busy polling: %.0f us after each request "
		    "(server.busy_poll_us)",
		    (double) busy_ns / 1e3);
	}
	for (int i = 0; i < nords; i++) {
		if (fftd__worker_start(&d.workers[d.nworkers], be, ords[i], i,
		        &bc, d.cfg.cache_budget - rt_cache, err, sizeof(err))
		    != FFTD_OK) {
			fftd__log(FFTD_LOG_ERROR, "%s", err);
			goto out;
		}
		d.nworkers++;
		if (d.cfg.realtime_lane
		    && fftd__worker_start(&d.rt_workers[i], be, ords[i], i, &rt,
		           rt_cache, err, sizeof(err))
		        != FFTD_OK) {
			fftd__log(FFTD_LOG_ERROR, "%s (realtime lane)", err);
			goto out;
		}
		fftd__worker_set_busy_poll(d.workers[i], busy_ns);
		if (d.cfg.realtime_lane) {
			fftd__worker_set_busy_poll(d.rt_workers[i], busy_ns);
		}
		const fftd__device *dev = fftd__worker_device(d.workers[i]);
		fftd__log(FFTD_LOG_INFO, "device %d: %s (%s)%s", dev->index,
		    dev->name, be->name,
		    d.cfg.realtime_lane ? ", with a realtime lane" : "");
	}
	if (fftd__server_create(&d.server, &d.cfg, d.workers,
	        d.cfg.realtime_lane ? d.rt_workers : NULL, d.nworkers, be->name)
	    != FFTD_OK) {
		fftd__log(FFTD_LOG_ERROR, "server: out of memory");
		goto out;
	}
	// The metrics endpoint listens before the server does: a client
	// whose Hello is answered can scrape at once, and a metrics port in
	// use fails the start before any client was accepted.
	if (d.cfg.metrics_listen[0] != '\0'
	    && fftd__metrics_start(
	           &d.metrics, d.cfg.metrics_listen, d.server, err, sizeof(err))
	        != FFTD_OK) {
		fftd__log(FFTD_LOG_ERROR, "%s", err);
		goto out;
	}
	if (fftd__server_start(d.server, err, sizeof(err)) != FFTD_OK) {
		fftd__log(FFTD_LOG_ERROR, "%s", err);
		goto out;
	}

	if (d.cfg.slice_us > 0) {
		// Every thread now running (workers, NNG's, the metrics
		// server's): a request's wake-ups should not wait out a busy
		// client's slice (cpu_slice.h).
		int n = fftd__set_slice_all((uint64_t) d.cfg.slice_us * 1000);
		if (n > 0) {
			fftd__log(FFTD_LOG_INFO,
			    "time slice of %d us asked for %d threads",
			    d.cfg.slice_us, n);
		} else {
			fftd__log(FFTD_LOG_INFO,
			    "server.slice_us = %d not applied: %s",
			    d.cfg.slice_us, strerror(-n));
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	fftd__log(FFTD_LOG_INFO, "fftd %s ready: backend %s, %d device(s)",
	    FFTD_VERSION_STRING, be->name, d.nworkers);
	// Ready only now that the sockets listen and the devices are open;
	// outside systemd (no NOTIFY_SOCKET) this does nothing.
	sd_notifyf(0, "READY=1\nSTATUS=serving on %d listener(s), backend %s",
	    d.cfg.nlisten, be->name);
	// Pings at half the watchdog interval (sd_watchdog_enabled reads
	// WATCHDOG_USEC); STATUS= every 5 s, or with each ping if sooner.
	uint64_t wd_usec = 0;
	if (sd_watchdog_enabled(0, &wd_usec) <= 0) {
		wd_usec = 0;
	}
	d.watchdog_usec   = wd_usec;
	uint64_t every_ms = 5000;
	if (wd_usec != 0 && wd_usec / 2000 < every_ms) {
		every_ms = wd_usec / 2000 ? wd_usec / 2000 : 1;
	}
	uv_timer_start(
	    &d.notify_timer, on_notify_timer, wd_usec ? 0 : every_ms, every_ms);

	uv_run(&d.loop, UV_RUN_DEFAULT);
	uv_timer_stop(&d.notify_timer); // it reads the server

	fftd__log(FFTD_LOG_INFO, "%s: finishing accepted requests",
	    strsignal(d.stop_signal));
	sd_notifyf(0, "STOPPING=1\nSTATUS=stopping: finishing %d request(s)",
	    fftd__server_inflight(d.server));
	int left = fftd__server_drain(d.server, d.cfg.drain_timeout_ms);
	if (left > 0) {
		fftd__log(FFTD_LOG_WARN,
		    "%d request(s) still running after %d ms; stopping anyway",
		    left, d.cfg.drain_timeout_ms);
	}
	status = 0;
	start_teardown_watchdog(status);
out:
	// The signal handles stay open until the server is gone: closing
	// one restores the default action, and a second SIGTERM would then
	// kill the daemon halfway through its teardown (sockets left).
	fftd__metrics_stop(d.metrics); // before the server it reads
	fftd__server_destroy(d.server);
	for (int i = 0; i < d.nworkers; i++) {
		if (d.rt_workers[i] != NULL) {
			fftd__worker_stop(d.rt_workers[i]);
		}
		fftd__worker_stop(d.workers[i]);
	}
	if (have_loop) {
		// Signals that came meanwhile are logged; from here on they
		// stay blocked (every other thread has them blocked since
		// start-up), so none can end the process before it returns.
		uv_run(&d.loop, UV_RUN_NOWAIT);
		pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
		uv_close((uv_handle_t *) &d.sigterm, NULL);
		uv_close((uv_handle_t *) &d.sigint, NULL);
		uv_close((uv_handle_t *) &d.sighup, NULL);
		uv_close((uv_handle_t *) &d.notify_timer, NULL);
		uv_run(&d.loop, UV_RUN_DEFAULT);
		uv_loop_close(&d.loop);
	}
	fftd__config_free(&d.cfg);
	fftd__log(FFTD_LOG_INFO, "stopped");
	return status;
}

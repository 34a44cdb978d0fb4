// SPDX-License-Identifier: MIT
//
// config.c — the drop-in library's settings, read once from the
// environment, and its log (stderr, one line per event, "fftd-fftw3: ..."):
//   FFTD_FFTW3_MIN         elements per execution (the product of the
//                          sizes times the batch) below which a transform
//                          runs in the real FFTW; default
//                          FFTD__DR_MIN_DEFAULT; 0 sends all it can to the
//                          daemon
//   FFTD_FFTW3_LOG         off, warn (default: failures) or debug (also
//                          where each plan goes and why)
//   FFTD_FFTW3_TIMEOUT_MS  the client's connect and request timeout
//                          (default 10000)
//   FFTD_FFTW3_SHM_MIN     fftw_malloc sizes (bytes) from which memory is
//                          an fftd shared buffer (default 65536)
//   FFTD_FFTW3_REAL        the real libfftw3 to load (default
//                          libfftw3.so.3); FFTD_FFTW3F_REAL likewise for
//                          libfftw3f.so.3
//   FFTD_FFTW3_DISABLE     1: everything runs in the real FFTW
// The daemon's address is the client library's default (FFTD_URL, else
// the system or per-user socket: fftd_default_url), as fftctl finds it.

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dropin_impl.h"

static fftd__dr_config cfg;
static pthread_once_t  cfg_once = PTHREAD_ONCE_INIT;

// env_int64 reads a non-negative integer variable, keeping def when it is
// unset or not a number (said at warn level).
static int64_t
env_int64(const char *name, int64_t def)
{
	const char *v = getenv(name);
	if (v == NULL || *v == '\0') {
		return def;
	}
	char *end;
	errno       = 0;
	long long x = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || x < 0) {
		fprintf(stderr,
		    "fftd-fftw3: %s=%s is not a non-negative integer; using "
		    "%lld\n",
		    name, v, (long long) def);
		return def;
	}
	return x;
}

// cfg_read fills cfg from the environment (pthread_once).
static void
cfg_read(void)
{
	cfg.log_level   = FFTD__DR_LOG_WARN;
	const char *lvl = getenv("FFTD_FFTW3_LOG");
	if (lvl != NULL) {
		if (strcasecmp(lvl, "debug") == 0) {
			cfg.log_level = FFTD__DR_LOG_DEBUG;
		} else if (strcasecmp(lvl, "off") == 0
		    || strcasecmp(lvl, "none") == 0) {
			cfg.log_level = FFTD__DR_LOG_OFF;
		}
	}
	cfg.min_elements = env_int64("FFTD_FFTW3_MIN", FFTD__DR_MIN_DEFAULT);
	cfg.timeout_ms   = (int) env_int64("FFTD_FFTW3_TIMEOUT_MS", 10000);
	if (cfg.timeout_ms <= 0) {
		cfg.timeout_ms = 10000;
	}
	cfg.shm_min  = (size_t) env_int64("FFTD_FFTW3_SHM_MIN", 65536);
	cfg.real[0]  = getenv("FFTD_FFTW3_REAL");
	cfg.real[1]  = getenv("FFTD_FFTW3F_REAL");
	cfg.disabled = env_int64("FFTD_FFTW3_DISABLE", 0) != 0;
}

// fftd__dr_config_get returns the settings, reading them on first use.
const fftd__dr_config *
fftd__dr_config_get(void)
{
	pthread_once(&cfg_once, cfg_read);
	return &cfg;
}

// fftd__dr_log writes one line to stderr when level is enabled; the whole
// line goes out in one write so that threads do not interleave.
void
fftd__dr_log(int level, const char *fmt, ...)
{
	if (fftd__dr_config_get()->log_level < level) {
		return;
	}
	char    line[1024];
	int     k = snprintf(line, sizeof(line), "fftd-fftw3: ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + k, sizeof(line) - (size_t) k - 1, fmt, ap);
	va_end(ap);
	size_t len = strlen(line);
	line[len]  = '\n';
	fwrite(line, 1, len + 1, stderr);
}

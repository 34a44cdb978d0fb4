// SPDX-License-Identifier: MIT
//
// fuzz-config.c — libFuzzer target for the daemon's config file reader
// (daemon/config.c, fftd__config_read: inih and fftd__config_set behind
// it, [weights] user names and [remote] allow lists included). The input
// is the whole file, read from memory (fmemopen) through the same path as
// /etc/fftd/fftd.conf (fftd__config_load opens the file and calls
// fftd__config_read). A load that fails must say why; the counts of what
// it collected stay within their arrays; whatever it did,
// fftd__config_free must release everything (LeakSanitizer checks).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fftd__log_set_level(FFTD_LOG_ERROR); // [remote] warnings
		init = 1;
	}
	// fmemopen of 0 bytes fails: an empty file is one empty line.
	uint8_t *copy = malloc(size + 1);
	if (copy == NULL) {
		abort();
	}
	memcpy(copy, data, size);
	copy[size] = '\n';
	FILE *f    = fmemopen(copy, size + 1, "r");
	if (f == NULL) {
		abort();
	}
	fftd__config cfg;
	char         err[512] = "";
	fftd__config_defaults(&cfg);
	int rv = fftd__config_read(&cfg, f, "fuzz.conf", err, sizeof(err));
	fclose(f);
	if ((rv != 0 && rv != -1) || (rv != 0 && err[0] == '\0')
	    || memchr(err, '\0', sizeof(err)) == NULL || cfg.nlisten < 0
	    || cfg.nlisten > FFTD__MAX_LISTEN || cfg.nweights < 0
	    || cfg.nweights > FFTD__MAX_WEIGHTS || cfg.nallow < 0
	    || cfg.nallow > FFTD__MAX_ALLOW || cfg.socket_mode < 0
	    || cfg.socket_mode > 0777) {
		abort();
	}
	fftd__config_free(&cfg);
	free(copy);
	return 0;
}

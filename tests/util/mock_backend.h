// SPDX-License-Identifier: MIT
//
// mock_backend.h — PRIVATE to fftd's unit tests. The parts of a mock
// backend (daemon/backend.h) that every mock shares: a probe that finds a
// device, and an open and close with nothing to do. Header-only (static
// functions); the test supplies plan, execute and destroy if it needs
// them.

#ifndef FFTD_TESTS_MOCK_BACKEND_H
#define FFTD_TESTS_MOCK_BACKEND_H

#include <stddef.h>

#include "backend.h"

static int
mock_probe(char *why, size_t whylen)
{
	(void) why;
	(void) whylen;
	return 1;
}

static int
mock_open(fftd__device *dev, const fftd__backend_config *cfg, char *msg,
    size_t msglen)
{
	(void) dev;
	(void) cfg;
	(void) msg;
	(void) msglen;
	return FFTD_OK;
}

static void
mock_close(fftd__device *dev)
{
	(void) dev;
}

#endif // FFTD_TESTS_MOCK_BACKEND_H

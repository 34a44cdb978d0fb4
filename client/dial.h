// SPDX-License-Identifier: MIT
//
// dial.h — PRIVATE to libfftd. Connecting a client socket to one daemon
// URL: ipc://, tcp:// (loopback daemons), or tls+tcp:// with the TLS
// settings taken from the environment (see fftd_client_open in fftd.h).

#ifndef FFTD_CLIENT_DIAL_H
#define FFTD_CLIENT_DIAL_H

#include <stddef.h>

#include <nng/nng.h>

// fftd__client_dial dials url on sock and waits for the connection (for
// tls+tcp://, the TLS handshake too: FFTD_TLS_CA, FFTD_TLS_CERT,
// FFTD_TLS_KEY and FFTD_TLS_SERVER_NAME are read at each call; see
// dial.c). Returns 0 or an fftd_error code with msg filled:
// FFTD_ECONNREFUSED (nobody listening), FFTD_EINVAL (a TLS variable
// missing, or its file unreadable or not PEM: msg names it),
// FFTD_ENNGERR + NNG_ECRYPTO / NNG_ECONNSHUT / NNG_EPEERAUTH (handshake
// failed: msg says whether the daemon's certificate failed verification or
// the daemon refused the client's), FFTD_ENNGERR + n otherwise.
int fftd__client_dial(
    nng_socket sock, const char *url, char *msg, size_t msglen);

#endif // FFTD_CLIENT_DIAL_H

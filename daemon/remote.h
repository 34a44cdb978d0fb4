// SPDX-License-Identifier: MIT
//
// remote.h — PRIVATE to fftd. Listeners for remote clients: TLS for
// tls+tcp:// (NNG's TLS transport), the client allow-list, and the rules
// that plain tcp:// is for loopback only and that loopback tcp:// and
// abstract:// listeners (which any local user can reach, with no peer uid
// for [weights]) need [remote] allow_insecure = yes.
//
// Who may connect over the network is decided twice. The TLS handshake
// admits only clients whose certificate verifies against [tls] client_ca
// (a CA, or the self-signed client certificates themselves: NNG 1.5.2 has
// no option to read the peer certificate's name, so that file is the
// allow-list of certificates). Then the ADD_PRE pipe callback admits only
// peer addresses in [remote] allow (fftd__remote_allowed); ipc:// clients
// and loopback peers are always admitted.

#ifndef FFTD_DAEMON_REMOTE_H
#define FFTD_DAEMON_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "config.h"

// fftd__remote_listener_setup configures listener l for url before it
// starts (TLS certificate, key and client CA for tls+tcp://; refusal of a
// plain tcp:// address that is not loopback, and of loopback tcp:// and
// abstract:// unless [remote] allow_insecure). Returns FFTD_OK or an error
// with err filled.
int fftd__remote_listener_setup(nng_listener l, const char *url,
    const fftd__config *cfg, char *err, size_t errlen);

// fftd__remote_allowed says whether pipe p may connect (remote address in
// the configured allow-list; ipc:// and loopback always may). When not,
// why names the address.
bool fftd__remote_allowed(
    nng_pipe p, const fftd__config *cfg, char *why, size_t whylen);

// fftd__remote_parse_allow parses a list of IPv4 and IPv6 addresses and
// CIDR networks separated by commas or blanks ("10.1.0.0/16,
// 192.168.7.12, 2001:db8::/32") and appends the entries to list, which
// holds *n of at most max. A network must have no bits set past its prefix
// (10.1.2.0/16 is refused: 10.1.0.0/16 is meant, or 10.1.2.0/24). IPv4
// written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) is stored as IPv4.
// Returns 0, or -1 with err naming the first bad entry; on error nothing
// is appended.
int fftd__remote_parse_allow(const char *text, fftd__netmask *list, int max,
    int *n, char *err, size_t errlen);

// fftd__remote_match says whether the address addr (family 4 or 6,
// network byte order, 4 or 16 bytes) lies in one of the n entries of
// list. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) matches as a.b.c.d.
bool fftd__remote_match(
    const fftd__netmask *list, int n, int family, const uint8_t *addr);

// fftd__remote_is_loopback says whether addr (as in fftd__remote_match)
// is a loopback address: 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104.
bool fftd__remote_is_loopback(int family, const uint8_t *addr);

#endif // FFTD_DAEMON_REMOTE_H

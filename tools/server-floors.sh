#!/bin/sh
# SPDX-License-Identifier: MIT
#
# server-floors.sh — checks that the daemon's server files stand in the
# floors daemon/server_impl.h lists: for each file's object, every fftd__
# symbol it uses that another server file defines (nm), printed as
# "file(floor) -> file(floor) symbol"; a call into a higher floor is marked
# UP and fails the check.
#   sh tools/server-floors.sh [BUILD_DIR]      (default: build)
set -eu
B=${1:-build}
# The table's rows: "//   6      server.c   ..." → "server:6".
floors=$(sed -n 's|^//   \([0-9]\)  *\([a-z_]*\)\.c .*|\2:\1|p' daemon/server_impl.h)
[ -n "$floors" ] || { echo "no floor table in daemon/server_impl.h" >&2; exit 2; }
bad=0
for a in $floors; do
	f=${a%%:*}; fl=${a##*:}
	for u in $(nm -u "$B/daemon/$f.o" | awk '{print $2}' | grep '^fftd__' || true); do
		for b in $floors; do
			g=${b%%:*}; gl=${b##*:}
			[ "$g" = "$f" ] && continue
			if nm --defined-only "$B/daemon/$g.o" | awk '{print $3}' | grep -qx "$u"; then
				mark=""
				[ "$gl" -gt "$fl" ] && { mark=" UP"; bad=1; }
				[ "$gl" -eq "$fl" ] && mark=" (same floor)"
				echo "$f($fl) -> $g($gl) $u$mark"
			fi
		done
	done
done
[ $bad -eq 0 ] && echo "floors: no file calls a file above it" || echo "floors: calls upward (UP) found" >&2
exit $bad

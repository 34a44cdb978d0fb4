#!/bin/sh
# SPDX-License-Identifier: MIT
#
# symbols.sh — libfftd-fftw3.so, the FFTW3 drop-in, exports exactly the
# functions the real <fftw3.h> declares for double and single precision
# (fftw_*, fftwf_*; not fftwl_ nor fftwq_, which stay with the real FFTW)
# and nothing else: no libfftd, NNG or protobuf-c names, no fftd__dr_
# internals; and it is marked never to be unloaded. The expected list comes from the installed header through the
# C preprocessor, so the test fails when the two drift apart.
#
#   sh tests/dropin/symbols.sh BUILD_DIR [HEADER]
#
# Exit status 1 when the lists differ, 2 when it cannot run.

dir=${1:?usage: sh tests/dropin/symbols.sh BUILD_DIR [HEADER]}
header=${2:-/usr/include/fftw3.h}
lib=$dir/libfftd-fftw3.so
[ -f "$lib" ] || { echo "dropin symbols: $lib is missing" >&2; exit 2; }
[ -f "$header" ] || { echo "dropin symbols: $header is missing" >&2; exit 2; }
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftd-dsym.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "#include \"$header\"" | "$cc" -E -P - | tr ';' '\n' |
	grep -o 'fftwf\{0,1\}_[a-z0-9_]*[ \t]*(' | sed 's/[ \t]*($//' |
	sort -u >"$tmp/expected"
[ -s "$tmp/expected" ] || { echo "dropin symbols: nothing in $header" >&2; exit 2; }
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' |
	sed 's/@.*$//' | sort -u >"$tmp/exported"
# Never unloaded (-z nodelete, Makefile): NNG's threads outlive a dlclose.
if ! readelf -d "$lib" | grep -q 'FLAGS_1.*NODELETE'; then
	echo "dropin symbols: libfftd-fftw3.so lacks DF_1_NODELETE (link with -z nodelete)"
	exit 1
fi
if cmp -s "$tmp/expected" "$tmp/exported"; then
	echo "dropin symbols: libfftd-fftw3.so exports the $(wc -l <"$tmp/expected") fftw_/fftwf_ functions of $header, nothing else, and is never unloaded"
	exit 0
fi
echo "dropin symbols: libfftd-fftw3.so and $header disagree"
comm -13 "$tmp/expected" "$tmp/exported" | sed 's/^/  exported, not in the header: /'
comm -23 "$tmp/expected" "$tmp/exported" | sed 's/^/  in the header, not exported: /'
exit 1

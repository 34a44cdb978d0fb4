#!/bin/sh
# SPDX-License-Identifier: MIT
#
# symbols.sh — libfftd.so exports exactly the calls include/fftd.h declares
# with FFTD_API: no generated protobuf code, no NNG, no fftd__ internals, and
# none of the public calls missing; and it is marked never to be unloaded. The expected list is read from the
# header, so the test fails when the header and the library drift apart.
#
#   sh tests/symbols.sh BUILD_DIR [HEADER]
#
# Prints the differences and exits 1 when the two lists differ, 2 when it
# cannot run (no library, no nm, nothing FFTD_API in the header).

dir=${1:?usage: sh tests/symbols.sh BUILD_DIR [HEADER]}
header=${2:-$(dirname "$0")/../include/fftd.h}
lib=$dir/libfftd.so
[ -f "$lib" ] || { echo "symbols: $lib is missing" >&2; exit 2; }
[ -f "$header" ] || { echo "symbols: $header is missing" >&2; exit 2; }
command -v nm >/dev/null 2>&1 || { echo "symbols: no nm" >&2; exit 2; }
command -v readelf >/dev/null 2>&1 || { echo "symbols: no readelf" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftd-symbols.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Expected: each declaration that starts with FFTD_API, joined up to its
# ';', names the identifier before its first '('. Comments are dropped
# first (a comment may mention FFTD_API).
sed -e 's://.*$::' "$header" | awk '
	/^[ \t]*#/ { next }
	decl != "" || /^[ \t]*FFTD_API[ \t]/ {
		decl = decl " " $0
		if (index(decl, ";") > 0) { print decl; decl = "" }
	}' | sed -n 's/^[^(]*[^A-Za-z0-9_]\(fftd_[A-Za-z0-9_]*\)[ \t]*(.*$/\1/p' |
	sort -u >"$tmp/expected"
[ -s "$tmp/expected" ] || { echo "symbols: no FFTD_API declaration in $header" >&2; exit 2; }

# Exported: the dynamic symbol table's defined symbols, without their
# version suffix and without the version node itself (type A).
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' |
	sed 's/@.*$//' | sort -u >"$tmp/exported"

# Never unloaded (-z nodelete, Makefile): NNG's threads outlive a dlclose.
if ! readelf -d "$lib" | grep -q 'FLAGS_1.*NODELETE'; then
	echo "symbols: libfftd.so lacks DF_1_NODELETE (link with -z nodelete):"
	echo "  a dlclose would leave NNG's threads running unmapped code"
	exit 1
fi
if cmp -s "$tmp/expected" "$tmp/exported"; then
	echo "symbols: libfftd.so exports the $(wc -l <"$tmp/expected") FFTD_API calls of $header, nothing else, and is never unloaded"
	exit 0
fi
echo "symbols: libfftd.so and $header disagree"
comm -13 "$tmp/expected" "$tmp/exported" | sed 's/^/  exported, not FFTD_API in the header: /'
comm -23 "$tmp/expected" "$tmp/exported" | sed 's/^/  FFTD_API in the header, not exported: /'
exit 1

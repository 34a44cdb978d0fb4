#!/bin/sh
# SPDX-License-Identifier: MIT
#
# build.sh — build the NNG that fftd links: Debian 12's own nng 1.5.2-2
# source package with fftd's patches (patches/series) on top, as a static,
# position-independent libnng.a with TLS (mbedTLS), installed under PREFIX.
#
#   sh deps/nng/build.sh PREFIX        (the Makefile runs it: build-deps/nng)
#
# Why: NNG 1.5.2, the one Debian 12 ships, has two defects that let one
# local user stop fftd accepting clients or stall all client cleanup
# (patches/*.patch say how); no fixed NNG can be installed from Debian 12.
# The source comes through apt (`apt-get source`, which needs a deb-src
# entry: tools/install-deps.sh adds one mirroring the configured deb
# entries); apt checks it against the signed archive index and
# dpkg-source against the .dsc checksums. Nothing fetched is kept in the
# repository. NNG_DSC=/path/to/nng_1.5.2-2.dsc uses a source package
# already downloaded instead.
#
# PREFIX/.fftd-stamp records the hash of this script and the patches; the
# build is skipped while it matches.
set -eu

[ $# -eq 1 ] || { echo "usage: sh deps/nng/build.sh PREFIX" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
version=1.5.2-2

stamp=$(cd "$here" && cat build.sh patches/series $(cat patches/series | sed 's|^|patches/|') | sha256sum | cut -d' ' -f1)
if [ -f "$prefix/.fftd-stamp" ] && [ "$(cat "$prefix/.fftd-stamp")" = "$stamp" ] &&
	[ -f "$prefix/lib/libnng.a" ]; then
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fftd-nng.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "${NNG_DSC:-}" ]; then
	dsc=$NNG_DSC
else
	echo "nng: fetching the nng $version source package with apt-get source"
	if ! (cd "$work" && apt-get source --download-only -qq "nng=$version" >"$work/apt.log" 2>&1); then
		cat "$work/apt.log" >&2
		echo "nng: apt-get source nng=$version failed: it needs a deb-src entry for" >&2
		echo "     Debian 12 (run 'make deps': tools/install-deps.sh adds one)" >&2
		exit 1
	fi
	dsc="$work/nng_$version.dsc"
fi
# dpkg-source checks the tarballs against the .dsc and applies Debian's
# own patches (debian/patches); ours go on top.
dpkg-source --no-copy -x "$dsc" "$work/src" >"$work/dpkg-source.log" 2>&1 ||
	{ cat "$work/dpkg-source.log" >&2; exit 1; }
while read -r p; do
	case "$p" in '' | '#'*) continue ;; esac
	echo "nng: applying $p"
	patch -d "$work/src" -p1 --forward --fuzz=0 --quiet <"$here/patches/$p"
done <"$here/patches/series"

gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$work/src" -B "$work/build" $gen -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
	-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF \
	-DNNG_ENABLE_TLS=ON -DNNG_TESTS=OFF -DNNG_TOOLS=OFF \
	>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; exit 1; }
cmake --build "$work/build" --parallel 2 >"$work/build.log" 2>&1 ||
	{ tail -50 "$work/build.log" >&2; exit 1; }
rm -rf "$prefix/include/nng" "$prefix/lib/libnng.a"
cmake --install "$work/build" >/dev/null
echo "$stamp" >"$prefix/.fftd-stamp"
echo "nng: $version with $(grep -c . "$here/patches/series") fftd patches installed in $prefix"

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# install-deps.sh — install the Debian/Ubuntu packages fftd builds and tests
# with, if any is missing. Needs root (or sudo) only when something is
# missing. The CUDA toolkit (nvcc, cuFFT) is not a Debian package here: when
# /usr/local/cuda is absent the build goes on without the CUDA backend.
#
# fftd links its own build of NNG (deps/nng/build.sh: Debian's nng 1.5.2
# source package with fftd's patches), so apt must be able to fetch source
# packages: when it cannot, this script adds deb-src entries that mirror
# the deb entries already configured.
set -eu

PKGS="build-essential dpkg-dev cmake ninja-build clang libclang-rt-14-dev pkg-config protobuf-c-compiler libprotobuf-c-dev
libmbedtls-dev libuv1-dev libinih-dev libfftw3-dev libhdf5-dev libcmocka-dev
gnuplot-nox libsystemd-dev systemd openssl python3-venv"

SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

# have_nng_source: apt knows where to fetch the nng source package.
have_nng_source() {
	apt-cache showsrc nng 2>/dev/null | grep -q '^Package: nng'
}

# add_deb_src: a deb-src twin of every configured deb entry (deb822
# .sources files and one-line sources.list entries), in files of our own.
add_deb_src() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case "$f" in */fftd-src-*) continue ;; esac
		grep -Eq '^Types:.*deb-src' "$f" && continue
		sed -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' "$f" |
			$SUDO tee "/etc/apt/sources.list.d/fftd-src-$(basename "$f")" >/dev/null
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		case "$f" in */fftd-src-*) continue ;; esac
		if grep -Eq '^deb[[:space:]]' "$f"; then
			grep -E '^deb[[:space:]]' "$f" | sed -E 's/^deb([[:space:]])/deb-src\1/' |
				$SUDO tee "/etc/apt/sources.list.d/fftd-src-$(basename "$f" .list).list" >/dev/null
		fi
	done
}

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ] && have_nng_source; then
	echo "install-deps: all packages present"
	exit 0
fi
if ! have_nng_source; then
	echo "install-deps: adding deb-src entries (for the nng source package)"
	add_deb_src
fi
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing"
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing
fi
have_nng_source || echo "install-deps: warning: apt still finds no nng source package" >&2

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# install-deps.sh — install the Debian/Ubuntu packages fftd builds and tests
# with, if any is missing. Needs root (or sudo) only when something is
# missing. The CUDA toolkit (nvcc, cuFFT) is not a Debian package here: when
# /usr/local/cuda is absent the build goes on without the CUDA backend.
set -eu

PKGS="build-essential pkg-config protobuf-c-compiler libprotobuf-c-dev libnng-dev
libmbedtls-dev libuv1-dev libinih-dev libfftw3-dev libhdf5-dev libcmocka-dev
gnuplot-nox libsystemd-dev systemd openssl"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh — the fftw backend's matched-filter bank, and the GW150914 search
# (examples/gw150914/search.c) through a daemon it spawns, against PyCBC on
# GW150914 (tests/pycbc/check_mf.py says what is compared and the bounds).
#
#   sh tests/pycbc/run.sh [BUILD_DIR] [check_mf.py options...]
#
# Builds BUILD_DIR/tests/pycbc/mf_driver, fftd, fftctl and gw150914-search
# (default BUILD_DIR: build), finds a
# Python with examples/gw150914/requirements.txt — $FFTD_PYCBC_PYTHON if
# set, else BUILD_DIR/venv-gw/bin/python, made with `python3 -m venv` and
# pip on first use (about 2 minutes and 680 MB; needs the network once) —
# and runs the check in BUILD_DIR/pycbc on the GWOSC strain in
# $FFTD_GW_DATA (default ../shared/data/gw150914). Exit status: check_mf.py's
# (0 passed, 1 a check failed, 2 it could not run).

set -eu
cd "$(dirname "$0")/../.."
B=build
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
	B=$1
	shift
fi
data=${FFTD_GW_DATA:-../shared/data/gw150914}
py=${FFTD_PYCBC_PYTHON:-}
if [ -z "$py" ]; then
	venv=$B/venv-gw
	if [ ! -x "$venv/bin/python" ]; then
		echo "run.sh: making $venv (examples/gw150914/requirements.txt)"
		python3 -m venv "$venv"
		"$venv/bin/pip" install -q -r examples/gw150914/requirements.txt
	fi
	py=$venv/bin/python
fi
make -s BUILD="$B" "$B/tests/pycbc/mf_driver" "$B/fftd" "$B/fftctl" \
	"$B/gw150914-search"
exec "$py" tests/pycbc/check_mf.py --driver "$B/tests/pycbc/mf_driver" \
	--search "$B/gw150914-search" --fftd "$B/fftd" --fftctl "$B/fftctl" \
	--work "$B/pycbc" --data-dir "$data" --json "$B/pycbc/summary.json" "$@"

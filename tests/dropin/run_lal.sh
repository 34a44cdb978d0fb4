#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_lal.sh — LALSuite's own FFT plans through the FFTW drop-in
# (tests/dropin/lal_check.py says what is compared and the bounds).
#
#   sh tests/dropin/run_lal.sh [BUILD_DIR] [lal_check.py options...]
#
# Builds BUILD_DIR/libfftd-fftw3.so, fftd and fftctl (default BUILD_DIR:
# build), finds a Python with the lalsuite wheel — $FFTD_PYCBC_PYTHON if
# set, else BUILD_DIR/venv-gw/bin/python, the venv tests/pycbc/run.sh
# makes from examples/gw150914/requirements.txt (made here the same way
# when missing) — and runs the check in BUILD_DIR/lal. Exit status:
# lal_check.py's (0 passed, 1 a check failed, 2 it could not run).

set -eu
cd "$(dirname "$0")/../.."
B=build
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
	B=$1
	shift
fi
py=${FFTD_PYCBC_PYTHON:-}
if [ -z "$py" ]; then
	venv=$B/venv-gw
	if [ ! -x "$venv/bin/python" ]; then
		echo "run_lal.sh: making $venv (examples/gw150914/requirements.txt)"
		python3 -m venv "$venv"
		"$venv/bin/pip" install -q -r examples/gw150914/requirements.txt
	fi
	py=$venv/bin/python
fi
make -s BUILD="$B" "$B/libfftd-fftw3.so" "$B/fftd" "$B/fftctl"
exec "$py" tests/dropin/lal_check.py --fftd "$B/fftd" --fftctl "$B/fftctl" \
	--lib "$B/libfftd-fftw3.so" --work "$B/lal" "$@"

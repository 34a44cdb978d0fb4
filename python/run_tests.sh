#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_tests.sh — the Python package's checks (make python-test): installs ./python into
# BUILD_DIR's Python venv (the one tests/pycbc/run.sh makes from
# examples/gw150914/requirements.txt, with pytest and hypothesis added), then runs, each against a CPU
# daemon it starts on a fresh socket:
#   1. python/tests (numpy compatibility, objects, errors, the PyCBC backend on GW150914);
#   2. scipy's own scipy.fft test suite with fftd as scipy.fft's global backend
#      (python/tests/scipy_global_backend.py). One test is deselected, as it cannot pass
#      with any backend other than pocketfft: test_multiprocess[numpy-irfft] compares
#      the parent's results (fftd) with forked children's (pocketfft: libfftd cannot run
#      after fork, so the backend declines there) with rtol 1e-7 and atol 0, and the
#      two libraries' roundings of the zero outputs differ (5.6e-17 against 0).
#
#   sh python/run_tests.sh [BUILD_DIR]        (default build)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
venv=$B/venv-gw
if [ ! -x "$venv/bin/python" ]; then
	echo "run_tests.sh: making $venv (examples/gw150914/requirements.txt)"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q -r examples/gw150914/requirements.txt
fi
# pytest, and hypothesis, which scipy's own conftest imports.
"$venv/bin/python" -c 'import pytest, hypothesis' 2>/dev/null ||
	"$venv/bin/pip" install -q pytest==9.2.0 hypothesis==6.170.17
"$venv/bin/pip" install -q --no-deps --force-reinstall ./python
rm -rf python/build python/fftd.egg-info
make -s BUILD="$B" "$B/fftd" "$B/libfftd.so"
export FFTD_BUILD="$PWD/$B"
py=$PWD/$venv/bin/python
tests=$PWD/python/tests
# run from elsewhere so that the installed package, not the source tree, is imported
cd "$B"
echo "== python/tests"
"$py" -m pytest -q -p no:cacheprovider "$tests"
echo "== scipy.fft's own tests, fftd as the global backend"
PYTHONPATH=$tests "$py" -m pytest -q -p no:cacheprovider -p scipy_global_backend \
	--pyargs scipy.fft -k 'not (test_multiprocess and irfft)'

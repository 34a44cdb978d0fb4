#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-python.sh — bench/python.py on the lent GPU machine, in one command.
# Here first: sh tools/python-bundle.sh && make gpu-bundle; carry gpu-run and
# gpu-carry; there, from the repository root: sh tools/gpu-python.sh.
#
# Runs /opt/torch/.venv/bin/python (or $PY) with the package from python/,
# libfftd from $B/libfftd.so (gpu-run: STATIC_DEPS=1 builds it with NNG,
# mbedTLS and protobuf-c linked in, so it needs only libc), cffi from
# gpu-carry/py/site when that Python has none, against a daemon it starts
# from $B/fftd (backend auto: cuFFT), with the C client baseline
# $B/bench/python_c. The large case is f32 C2C 4096 x $LARGE_BATCH (default
# 16384: 512 MiB of input, as bench/e2e's cases). Writes $OUT/python.json and
# $OUT/python.log (OUT default /tmp/fftd-gpu-out) and prints the log, whose
# last part is the table; exit status that of bench/python.py.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-gpu-run}
PY=${PY:-/opt/torch/.venv/bin/python}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_LIB="$PWD/$B/libfftd.so"
pp="$PWD/python"
if ! "$PY" -c 'import cffi' 2>/dev/null; then
	pp="$pp:$PWD/gpu-carry/py/site"
fi
export PYTHONPATH="$pp${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
	>"$OUT/python-gpu.txt" 2>&1
# shellcheck disable=SC2086
"$PY" bench/python.py --spawn "$B/fftd" --c-helper "$B/bench/python_c" \
	--json "$OUT/python.json" --large-batch "${LARGE_BATCH:-16384}" ${PYBENCH_ARGS:-} \
	>"$OUT/python.log" 2>&1
rc=$?
cat "$OUT/python-gpu.txt" "$OUT/python.log"
echo "bench/python: rc=$rc"
exit $rc

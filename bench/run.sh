#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh — run fftd's benchmarks (make bench).
#
#   sh bench/run.sh [BUILD_DIR]
#
# 1. BUILD_DIR/bench/e2e --spawn BUILD_DIR/fftd --json BUILD_DIR/bench/e2e.json
#    (with --quick when there is no GPU: nvidia-smi absent or failing);
# 2. BUILD_DIR/bench/load --spawn BUILD_DIR/fftd --json BUILD_DIR/bench/load.json
#    (16 client processes, 10^5 requests; smaller sizes by itself on the
#    fftw backend), then the same with --sigterm-after 3 (SIGTERM under
#    load) into BUILD_DIR/bench/load-sigterm.json;
# 3. every other executable in BUILD_DIR/bench (e.g. kernels), as
#    NAME --json BUILD_DIR/bench/NAME.json (each handles a missing GPU itself;
#    pipelines runs its CPU cases anyway and starts $FFTD_BIN, BUILD_DIR/fftd).
# 4. bench/python.py (the Python package against the C client and numpy,
#    scipy, CuPy) into BUILD_DIR/bench/python.json, when $FFTD_PYTHON (default
#    BUILD_DIR/venv-gw/bin/python, the venv of python/run_tests.sh) exists
#    and imports numpy and cffi; PYBENCH_ARGS adds options.
# Tables go to stdout; the exit status is 1 if any benchmark failed (exit
# status 77 means the benchmark found no GPU: reported as skipped).
# Extra arguments for e2e may be given in $E2E_ARGS (e.g. "--cases c2c4096"),
# for load in $LOAD_ARGS (e.g. "--requests 20000").
set -u
B=${1:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac

if [ ! -x "$B/bench/e2e" ] || [ ! -x "$B/fftd" ]; then
	echo "bench: $B/bench/e2e or $B/fftd missing (make BUILD=$B bench-e2e)" >&2
	exit 1
fi

# bench/pipelines (and any benchmark using bench/lib's daemon start) runs
# the daemon of this build.
FFTD_BIN=${FFTD_BIN:-$B/fftd}
export FFTD_BIN

quick=""
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	quick="--quick"
	echo "bench: no GPU (nvidia-smi absent or failing): e2e --quick"
fi

fail=0
summary=""
# shellcheck disable=SC2086
"$B/bench/e2e" --spawn "$B/fftd" --json "$B/bench/e2e.json" $quick ${E2E_ARGS:-}
rc=$?
summary="${summary}e2e: rc=$rc ($B/bench/e2e.json)
"
[ $rc -eq 0 ] || fail=1

if [ -x "$B/bench/load" ]; then
	for mode in load load-sigterm; do
		echo
		echo "=== bench/$mode"
		extra=""
		[ $mode = load ] || extra="--sigterm-after 3"
		# shellcheck disable=SC2086
		"$B/bench/load" --spawn "$B/fftd" --json "$B/bench/$mode.json" \
			$extra ${LOAD_ARGS:-}
		rc=$?
		summary="${summary}$mode: rc=$rc ($B/bench/$mode.json)
"
		[ $rc -eq 0 ] || fail=1
	done
fi

for bin in "$B"/bench/*; do
	name=$(basename "$bin")
	case $name in e2e | load | python_c | *.json | *.o | *.log | *.txt) continue ;; esac
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	echo
	echo "=== bench/$name"
	"$bin" --json "$B/bench/$name.json"
	rc=$?
	if [ $rc -eq 77 ]; then # the benchmark's own "no GPU here"
		summary="${summary}$name: skipped (no GPU)
"
		continue
	fi
	summary="${summary}$name: rc=$rc ($B/bench/$name.json)
"
	[ $rc -eq 0 ] || fail=1
done

py=${FFTD_PYTHON:-$B/venv-gw/bin/python}
if [ -x "$py" ] && "$py" -c 'import numpy, cffi' 2>/dev/null; then
	echo
	echo "=== bench/python"
	src=$(cd "$(dirname "$0")/.." && pwd)
	# shellcheck disable=SC2086
	PYTHONPATH="$src/python" FFTD_LIB="$B/libfftd.so" "$py" "$src/bench/python.py" \
		--spawn "$B/fftd" --c-helper "$B/bench/python_c" \
		--json "$B/bench/python.json" ${PYBENCH_ARGS:-}
	rc=$?
	summary="${summary}python: rc=$rc ($B/bench/python.json)
"
	[ $rc -eq 0 ] || fail=1
else
	summary="${summary}python: skipped (no $py with numpy and cffi)
"
fi

echo
echo "=== bench summary"
printf '%s' "$summary"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-mf-engines.sh — the matched-filter bank's f32 engines side by side on
# the lent GPU machine, in one call: test_gpu_arrays on the default engine
# (fourstep) and on cuFFT's, then bench/pipelines once per engine (the
# daemon and the bench both read FFTD_MF_ENGINE). Compare the two tables'
# (a) rows: (c), in-process cuFFT, runs in both and shows the machine's
# drift between them.
#
#   B=gpu-run sh tools/gpu-mf-engines.sh [tests] [bench]   (default: both)
#
# PIPELINES_ARGS adds bench options (default "--slice 1024 --no-pycbc").
# Logs and JSON under $OUT.
set -u
B=${B:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
what=${*:-tests bench}
rc=0
nvidia-smi -L 2>/dev/null
for w in $what; do
	case $w in
	tests)
		FFTD_TEST_GPU=1 FFTD_TEST_ONLY=test_gpu_arrays \
			sh tests/run.sh --gpu "$B" >"$OUT/mf-tests.log" 2>&1 || rc=1
		grep -E "^(ok|FAIL|SKIP) |^tests:|worst|f32|engine" "$OUT/mf-tests.log" | head -40
		;;
	bench)
		for eng in fourstep cufft; do
			# shellcheck disable=SC2086
			FFTD_MF_ENGINE=$eng "$B/bench/pipelines" \
				--json "$OUT/pipelines-$eng.json" \
				${PIPELINES_ARGS:---slice 1024 --no-pycbc} \
				>"$OUT/pipelines-$eng.log" 2>&1 || rc=1
			echo "== engine $eng"
			cat "$OUT/pipelines-$eng.log"
		done
		;;
	esac
done
exit $rc

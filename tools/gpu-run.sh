#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-run.sh — everything that needs the lent GPU machine, in one call.
# Build here first (make gpu-bundle; GW data copied to gpu-carry/data),
# carry build-gpu and gpu-carry, and run `sh tools/gpu-run.sh` there.
# Writes logs under $OUT (or /tmp/fftd-gpu-out) and prints a summary last.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
grep -i nvidia /proc/devices >"$OUT/proc-devices.txt" 2>&1

summary=""
add() { summary="$summary$1
"; }

# 1. GPU tests (make test-gpu without make).
if [ -f tests/run.sh ]; then
	FFTD_TEST_GPU=1 sh tests/run.sh --gpu "$B" >"$OUT/test-gpu.log" 2>&1
	add "test-gpu: rc=$? $(tail -n 1 "$OUT/test-gpu.log")"
else
	for t in "$B"/tests/gpu/test_*; do
		FFTD_TEST_GPU=1 "$t" >>"$OUT/test-gpu.log" 2>&1
		add "$(basename "$t"): rc=$?"
	done
fi

# 2. The GW150914 job on both backends (SKIP_GW=1: not this time).
gw_backends="cuda fftw"
[ "${SKIP_GW:-0}" = 1 ] && gw_backends=""
for be in $gw_backends; do
	FFTD_BACKEND=$be FFTD_DATA=gpu-carry/data sh examples/gw150914/demo.sh "$B" \
	    >"$OUT/gw-$be.log" 2>&1
	rc=$?
	add "gw150914 $be: rc=$rc"
	add "$(grep -E '^(H1|L1): peak|daemon vs FFTW|^fftd .*samples' "$OUT/gw-$be.log")"
done
cp "$B"/demo/fftd.log "$OUT/fftd-last.log" 2>/dev/null

# 3. Optional extra steps (benchmarks, kernel checks) named by the caller.
for extra in ${GPU_EXTRA:-}; do
	sh "$extra" >"$OUT/$(basename "$extra").log" 2>&1
	add "$extra: rc=$? $(tail -n 1 "$OUT/$(basename "$extra").log")"
done

echo "=== summary"
printf '%s' "$summary" | tee "$OUT/summary.txt"
# The device tool returns only a few files: one archive of everything.
(cd "$OUT" && tar czf /tmp/fftd-results.tgz . && rm -rf ./* &&
	mv /tmp/fftd-results.tgz results.tgz)

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-e2e-ab.sh — bench/e2e against two daemons on one machine in one run,
# alternated, for "is B within noise of A" questions (e.g. a restructure
# that must not change speed). On the lent GPU machine, after carrying a
# bundle (make gpu-bundle) with the second daemon beside it:
#
#   A=gpu-run/fftd-old B=gpu-run/fftd sh tools/gpu-e2e-ab.sh
#
# ROUNDS (default 3) rounds of A then B, each bench/e2e --cases $CASES
# (default c2c4096,latency). Logs and JSON under $OUT; the lines that
# matter (the shared-memory, inline and stream columns, the small-request
# latencies) are printed per run, labelled.
set -u
BD=${BD:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$BD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
r=1
while [ "$r" -le "${ROUNDS:-3}" ]; do
	for side in A B; do
		eval "bin=\$$side"
		log="$OUT/e2e-$side-$r.log"
		"$BD/bench/e2e" --spawn "$bin" --cases "${CASES:-c2c4096,latency}" \
		    --json "$OUT/e2e-$side-$r.json" >"$log" 2>&1
		echo "== $side round $r (rc=$?) $bin"
		grep -E '^f32 C2C N=4096 |^f16 C2C|^f32 R2C|^  (inline|shared|ping)' "$log"
	done
	r=$((r + 1))
done

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-soak.sh — the long soak (bench/soak, issue 14) on the lent GPU
# machine, with the cuda backend, after `make gpu-bundle` here and with
# build-gpu carried there.
#
#   sh tools/gpu-soak.sh start    # GPU tests, then the soak in the background
#   sh tools/gpu-soak.sh collect  # wait for the soak (at most WAIT_S), copy its log
#
# The soak outlives one device call (10 minutes at most), so `start` runs it
# in a session of its own (setsid) writing to /tmp/fftd-soak; `collect`, in a
# later call on the same machine, waits for it and copies the log, the JSON
# and the daemon's log to $OUT. SOAK_REQUESTS (default 10^7),
# SOAK_KILL_MS (500), WAIT_S (540). A later call that carries build-gpu
# again replaces the soak's binary under it: the soak re-execs its clients
# through /proc/self/exe, so that no longer matters (the first long soak
# stalled on it), but `collect` needs no carry.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/fftd-gpu-out}
S=/tmp/fftd-soak
mkdir -p "$OUT" "$S"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"

case "${1:-}" in
start)
	nvidia-smi --query-gpu=name,memory.total,driver_version \
	    --format=csv,noheader | tee "$OUT/gpu.txt"
	nproc | tee -a "$OUT/gpu.txt"
	FFTD_TEST_GPU=1 sh tests/run.sh --gpu "$B" >"$OUT/test-gpu.log" 2>&1
	echo "test-gpu: rc=$? $(tail -n 1 "$OUT/test-gpu.log")"
	rm -f "$S"/*
	setsid sh -c "'$B/bench/soak' --clients 16 \
	    --requests ${SOAK_REQUESTS:-10000000} \
	    --kill-every-ms ${SOAK_KILL_MS:-500} --json $S/soak.json \
	    >$S/soak.log 2>&1; echo \"soak exit \$?\" >>$S/soak.log" \
	    </dev/null >/dev/null 2>&1 &
	sleep "${WAIT_S:-60}"
	tail -n 3 "$S/soak.log"
	;;
collect)
	end=$(($(date +%s) + ${WAIT_S:-540}))
	while ! grep -q '^soak exit' "$S/soak.log" 2>/dev/null &&
		[ "$(date +%s)" -lt "$end" ]; do
		sleep 10
	done
	cp "$S"/soak.log "$S"/soak.json "$OUT/" 2>/dev/null
	tail -n 40 "$S/soak.log"
	;;
*)
	echo "usage: sh tools/gpu-soak.sh start|collect" >&2
	exit 2
	;;
esac

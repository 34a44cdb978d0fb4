#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-soak.sh — the long soak (bench/soak, issue 14) on the lent GPU
# machine, with the cuda backend, after `make gpu-bundle` here and with
# build-gpu carried there.
#
#   sh tools/gpu-soak.sh start    # GPU tests, then the soak in the background
#   sh tools/gpu-soak.sh collect  # wait for the soak (at most WAIT_S), copy its log
#   sh tools/gpu-soak.sh ping     # short soaks (SOAK_REQUESTS, default 10^6)
#                                 # with and without kills and large requests,
#                                 # to see what the ping's p99 depends on
#   sh tools/gpu-soak.sh diag     # a short soak with the daemon's threads
#                                 # sampled: what they did in slow pings
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
ping)
	# CPU busy share of the host over each run, from /proc/stat, and
	# every 5 s each daemon thread's CPU time (name, utime, stime in
	# ticks) from /proc/PID/task, to see which of its threads are busy.
	busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
	threads() {
		while :; do
			p=$(pgrep -n -x fftd)
			[ -n "$p" ] && for t in /proc/"$p"/task/*; do
				echo "$(date +%s) $(cut -d' ' -f1,2,14,15 "$t/stat" 2>/dev/null)"
			done
			sleep 5
		done
	}
	# PING_VARIANTS: name:extra-arguments pairs, separated by ";".
	vs=${PING_VARIANTS:-"default:;no-kills:--kill-every-ms 0;no-large:--large-every 1000000000;neither:--kill-every-ms 0 --large-every 1000000000"}
	IFS=';'
	for v in $vs; do
		unset IFS
		name=${v%%:*}
		b0=$(busy)
		threads >"$OUT/threads-$name.txt" &
		tp=$!
		# shellcheck disable=SC2086
		"$B/bench/soak" --clients 16 --requests "${SOAK_REQUESTS:-1000000}" \
		    ${v#*:} --json "$OUT/ping-$name.json" >"$OUT/ping-$name.log" 2>&1
		rc=$?
		kill $tp
		b1=$(busy)
		echo "$b0 $b1" | awk -v n="$name" -v rc="$rc" \
		    '{printf "%-9s rc=%d cpu busy %.0f%%\n", n, rc, 100*($3-$1)/($4-$2)}'
		grep '^ping' "$OUT/ping-$name.log"
		IFS=';'
	done
	unset IFS
	;;
diag)
	# One short soak with the ping process's round trips logged and the
	# daemon's threads sampled (tools/thread-sample.py), then what the
	# threads were doing during each slow ping.
	python3 tools/thread-sample.py record fftd "$OUT/threads.txt" 300 &
	tp=$!
	# shellcheck disable=SC2086
	"$B/bench/soak" --clients 16 --requests "${SOAK_REQUESTS:-600000}" \
	    ${SOAK_ARGS:-} --ping-log "$OUT/ping.log" \
	    --json "$OUT/diag.json" >"$OUT/diag.log" 2>&1
	echo "soak rc=$?"
	kill $tp 2>/dev/null
	grep '^ping' "$OUT/diag.log"
	python3 tools/thread-sample.py report "$OUT/threads.txt" \
	    "$OUT/ping.log" >"$OUT/diag-report.txt"
	tail -n 25 "$OUT/diag-report.txt"
	;;
*)
	echo "usage: sh tools/gpu-soak.sh start|collect|ping|diag" >&2
	exit 2
	;;
esac

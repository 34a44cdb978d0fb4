#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-latency.sh — whether the host's idle states cost the bank's calls
# time on the lent GPU machine: bench/pipelines' (a) and (c) at one size,
# plainly, with every other core kept busy (so none sleeps deeply), and,
# where this user may, with /dev/cpu_dma_latency held at 0 (the PM QoS
# request that tuned's latency-performance profile makes).
#
#   B=gpu-run SIZES=17 sh tools/gpu-latency.sh
set -u
B=${B:-gpu-run}
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
run() {
	"$B/bench/pipelines" --sizes "${SIZES:-17}" --plain 2 --no-pycbc 2>&1 |
		grep -E "^[0-9]+ +\((a|c)\)" |
		awk -v t="$1" '{ print t, $1, $2, $5, $6, $8 }'
}
if [ "${1:-}" = --run ]; then
	run "$2"
	run "$2"
	exit 0
fi
echo "uid $(id -u), $(nproc) cpus, governor" \
	"$(cat /sys/devices/system/cpu/cpufreq/policy0/scaling_governor 2>/dev/null)"
for s in /sys/devices/system/cpu/cpu0/cpuidle/state*; do
	[ -d "$s" ] && echo "idle state $(cat "$s/name"): exit latency" \
		"$(cat "$s/latency") us, disabled $(cat "$s/disable")"
done
run plain
run plain
n=$(($(nproc) - 1))
i=0
pids=
while [ $i -lt $n ]; do
	(while :; do :; done) &
	pids="$pids $!" # not $(jobs -p): a subshell's jobs are its own
	i=$((i + 1))
done
run busy
run busy
# shellcheck disable=SC2086
kill $pids
wait
if [ -w /dev/cpu_dma_latency ]; then
	python3 - "$0" <<'PY'
import os, struct, subprocess, sys
fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
os.write(fd, struct.pack("i", 0))  # held while this process lives
subprocess.run(["sh", sys.argv[1], "--run", "qos0"])
PY
fi
run plain

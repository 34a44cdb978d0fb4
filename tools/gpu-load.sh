#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-load.sh — the issue-5 runs for the lent GPU machine (GPU_EXTRA step of
# tools/gpu-run.sh, or alone): bench/load on the cuda backend (16 client
# processes, >= 10^5 requests, fairness, realtime latency); the same
# without the realtime lane (SKIP_NOLANE=1: not), with the batch clients on
# shared buffers (SKIP_SHM=1: not), at nice 10 (SKIP_NICE=1: not) and with
# the GPU worker blocking on the device (SKIP_BLOCK=1: not); the SIGTERM
# run;
# and, when the machine has two GPUs or more, the aggregate throughput of
# batched work on one GPU and on all of them. SKIP_DEFAULT=1 and
# SKIP_SIGTERM=1 leave those runs out. Logs and JSON under $OUT.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rc=0

if [ "${SKIP_DEFAULT:-0}" != 1 ]; then
	"$B/bench/load" --spawn "$B/fftd" --json "$OUT/load.json" ${LOAD_ARGS:-} \
	    >"$OUT/load.log" 2>&1 || rc=1
	tail -n 40 "$OUT/load.log"
fi

# The same without the realtime lane (realtime work shares the batch
# worker): what the lane is worth, measured in the same session.
if [ "${SKIP_NOLANE:-0}" != 1 ]; then
	printf '[backend]\nrealtime_lane = no\n' >"$OUT/no-lane.conf"
	"$B/bench/load" --spawn "$B/fftd" --config "$OUT/no-lane.conf" \
	    --json "$OUT/load-nolane.json" ${LOAD_ARGS:-} \
	    >"$OUT/load-nolane.log" 2>&1 || rc=1
	echo "realtime_lane = no:"
	tail -n 12 "$OUT/load-nolane.log"
fi

# The same with the batch clients' arrays in shared buffers (no copies in
# libfftd or the daemon): how much of the realtime latency under load is
# the host's CPU, taken by the copies, rather than the device queue.
if [ "${SKIP_SHM:-0}" != 1 ]; then
	"$B/bench/load" --spawn "$B/fftd" --batch-shm --json "$OUT/load-shm.json" \
	    ${LOAD_ARGS:-} >"$OUT/load-shm.log" 2>&1 || rc=1
	echo "batch clients on shared buffers:"
	tail -n 12 "$OUT/load-shm.log"
fi

# And with the batch clients at nice 10, as batch jobs on a shared server
# usually run: the daemon and the realtime clients then get the CPU when
# they wake (SKIP_NICE=1: not; SHM_NICE=1: also on shared buffers).
if [ "${SKIP_NICE:-0}" != 1 ]; then
	"$B/bench/load" --spawn "$B/fftd" --batch-nice 10 \
	    --json "$OUT/load-nice.json" ${LOAD_ARGS:-} \
	    >"$OUT/load-nice.log" 2>&1 || rc=1
	echo "batch clients at nice 10:"
	tail -n 12 "$OUT/load-nice.log"
fi
if [ "${SHM_NICE:-0}" = 1 ]; then
	"$B/bench/load" --spawn "$B/fftd" --batch-nice 10 --batch-shm \
	    --json "$OUT/load-shm-nice.json" ${LOAD_ARGS:-} \
	    >"$OUT/load-shm-nice.log" 2>&1 || rc=1
	echo "batch clients at nice 10 on shared buffers:"
	tail -n 12 "$OUT/load-shm-nice.log"
fi

# And with the GPU worker sleeping while it waits for the device
# ([backend] gpu_sync = block) instead of spinning.
if [ "${SKIP_BLOCK:-0}" != 1 ]; then
	printf '[backend]\ngpu_sync = block\n' >"$OUT/gpu-sync-block.conf"
	"$B/bench/load" --spawn "$B/fftd" --config "$OUT/gpu-sync-block.conf" \
	    --json "$OUT/load-block.json" ${LOAD_ARGS:-} \
	    >"$OUT/load-block.log" 2>&1 || rc=1
	echo "gpu_sync = block:"
	tail -n 12 "$OUT/load-block.log"
fi

if [ "${SKIP_SIGTERM:-0}" != 1 ]; then
	"$B/bench/load" --spawn "$B/fftd" --sigterm-after "${SIGTERM_AFTER:-5}" \
	    --json "$OUT/load-sigterm.json" >"$OUT/load-sigterm.log" 2>&1 || rc=1
	tail -n 20 "$OUT/load-sigterm.log"
fi

ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$ngpu" -ge 2 ]; then
	for devs in 0 all; do
		printf '[backend]\ndevices = %s\n' "$devs" >"$OUT/devices-$devs.conf"
		"$B/bench/load" --spawn "$B/fftd" --config "$OUT/devices-$devs.conf" \
		    --realtime 0 ${MULTI_ARGS:-} --json "$OUT/load-devices-$devs.json" \
		    >"$OUT/load-devices-$devs.log" 2>&1 || rc=1
		echo "devices=$devs:"
		tail -n 25 "$OUT/load-devices-$devs.log"
	done
fi
exit $rc

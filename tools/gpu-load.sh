#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-load.sh — the issue-5 runs for the lent GPU machine (GPU_EXTRA step of
# tools/gpu-run.sh, or alone): bench/load on the cuda backend (16 client
# processes, >= 10^5 requests, fairness, realtime latency) in several
# variants, measured in one session so they compare:
#   default     as configured out of the box
#   gpu0        the same on device 0 alone ([backend] devices = 0): the
#               issue's one-GPU load on a host with several
#   wide        defaults with ${WIDE_CLIENTS:-30} clients (2 realtime), so
#               that inline batch clients, each bound by its own copies and
#               checks, can keep several GPUs busy
#   nolane      [backend] realtime_lane = no (realtime shares the batch
#               worker)
#   noslice     [server] slice_us = 0 (the kernel's default time slice for
#               the daemon's threads)
#   shm         batch clients' arrays in shared buffers (no copies)
#   inplace     realtime clients use their stream slots in place
#               (--rt-in-place: no copy in or out in their latency)
#   spin        inplace, and their waits spin up to ${SPIN_US:-2000} us
#               before sleeping (--rt-spin-us; fftd_stream_set_spin)
#   spin-copy   the same spin with the realtime clients' copies
#   nochan      realtime streams through NNG, not their stream channels
#               (FFTD_STREAM_CHANNEL=0)
#   inline1m    libfftd stages only arrays of 1 MiB or more (the threshold
#               before 64 KiB): 256 KiB arrays go through NNG's socket
#   nice        batch client processes at nice 10
#   pinned      batch client processes on CPUs 4-15 only (--batch-cpus),
#               as an administrator keeps batch jobs off the realtime
#               pipelines' cores; the daemon and realtime clients anywhere
#   rtslice     the realtime clients' threads ask for 100 us time slices
#               too (--rt-slice-us 100; daemon/cpu_slice.h)
#   rtslice-shm both of the above
#   block       [backend] gpu_sync = block
#   chunk1m, chunk2m  [backend] pipeline_chunk_bytes = 1M, 2M (a realtime
#               copy waits in the copy engines behind the batch chunks
#               already queued there)
#   streams2    [backend] pipeline_streams = 2
#   sigterm     SIGTERM 5 s into full load: every accepted request answered
#   devices     one GPU vs all (only with two GPUs or more): the same
#               batch clients (--realtime 0, MULTI_ARGS), devices = 0 then
#               devices = all
#   devices-shm the same with ${MULTI_CLIENTS:-30} batch clients on shared
#               buffers, so that the clients' copies and checks (one core
#               each) do not bound the two GPUs' throughput
# VARIANTS="default nolane ..." picks (default: all). LOAD_ARGS go to every
# measured run. Logs and JSON under $OUT as load-VARIANT.{log,json}.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
VARIANTS=${VARIANTS:-default inplace spin spin-copy nochan nolane noslice shm inline1m nice pinned rtslice rtslice-shm block chunk1m chunk2m streams2 sigterm devices devices-shm}
rc=0

conf() { # conf NAME LINES...: a config file under $OUT
	f="$OUT/$1.conf"
	shift
	printf '%s\n' "$@" >"$f"
	echo "$f"
}

run() { # run VARIANT ARGS... (a variant run again gets -2, -3, ...)
	v=$1
	shift
	n=1
	while [ -e "$OUT/load-$v.log" ] || [ -e "$OUT/load-$v-$n.log" ]; do
		n=$((n + 1))
		[ -e "$OUT/load-$v-$n.log" ] || { v="$v-$n"; break; }
	done
	"$B/bench/load" --spawn "$B/fftd" --json "$OUT/load-$v.json" "$@" \
	    >"$OUT/load-$v.log" 2>&1 || rc=1
	echo "== $v: $*"
	grep -E '^(window|devices in the window|host CPUs|realtime [0-9]|realtime stages|  daemon side)|Jain|p99 loaded|lost results|wrong results|daemon errors|SIGTERM|daemon exit' \
	    "$OUT/load-$v.log"
}

for v in $VARIANTS; do
	case $v in
	default) run default ${LOAD_ARGS:-} ;;
	gpu0) run gpu0 --config "$(conf gpu0 '[backend]' 'devices = 0')" ${LOAD_ARGS:-} ;;
	wide) run wide --clients "${WIDE_CLIENTS:-30}" ${LOAD_ARGS:-} ;;
	nolane) run nolane --config "$(conf nolane '[backend]' 'realtime_lane = no')" ${LOAD_ARGS:-} ;;
	noslice) run noslice --config "$(conf noslice '[server]' 'slice_us = 0')" ${LOAD_ARGS:-} ;;
	shm) run shm --batch-shm ${LOAD_ARGS:-} ;;
	inplace) run inplace --rt-in-place ${LOAD_ARGS:-} ;;
	spin) run spin --rt-in-place --rt-spin-us "${SPIN_US:-2000}" ${LOAD_ARGS:-} ;;
	spin-copy) run spin-copy --rt-spin-us "${SPIN_US:-2000}" ${LOAD_ARGS:-} ;;
	nochan)
		export FFTD_STREAM_CHANNEL=0
		run nochan ${LOAD_ARGS:-}
		unset FFTD_STREAM_CHANNEL
		;;
	inline1m)
		export FFTD_INLINE_STAGING=1048576
		run inline1m ${LOAD_ARGS:-}
		unset FFTD_INLINE_STAGING
		;;
	nice) run nice --batch-nice 10 ${LOAD_ARGS:-} ;;
	pinned) run pinned --batch-cpus "${BATCH_CPUS:-4-15}" ${LOAD_ARGS:-} ;;
	rtslice) run rtslice --rt-slice-us 100 ${LOAD_ARGS:-} ;;
	rtslice-shm) run rtslice-shm --rt-slice-us 100 --batch-shm ${LOAD_ARGS:-} ;;
	chunk1m) run chunk1m --config "$(conf chunk1m '[backend]' 'pipeline_chunk_bytes = 1M')" ${LOAD_ARGS:-} ;;
	chunk2m) run chunk2m --config "$(conf chunk2m '[backend]' 'pipeline_chunk_bytes = 2M')" ${LOAD_ARGS:-} ;;
	streams2) run streams2 --config "$(conf streams2 '[backend]' 'pipeline_streams = 2')" ${LOAD_ARGS:-} ;;
	block) run block --config "$(conf block '[backend]' 'gpu_sync = block')" ${LOAD_ARGS:-} ;;
	sigterm) run sigterm --sigterm-after "${SIGTERM_AFTER:-5}" ;;
	devices | devices-shm)
		ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
		args="${MULTI_ARGS:-}"
		[ "$v" = devices-shm ] && args="$args --batch-shm --clients ${MULTI_CLIENTS:-30}"
		if [ "$ngpu" -ge 2 ]; then
			for devs in 0 all; do
				run "$v-$devs" --config "$(conf "$v-$devs" '[backend]' "devices = $devs")" \
				    --realtime 0 $args
			done
		else
			echo "== $v: skipped, $ngpu GPU(s)"
		fi
		;;
	*) echo "unknown variant $v" >&2; rc=1 ;;
	esac
done
exit $rc

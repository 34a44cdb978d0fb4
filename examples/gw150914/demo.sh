#!/bin/sh
# SPDX-License-Identifier: MIT
#
# demo.sh — `make demo`: start a private fftd, run the GW150914 matched
# filter through it, stop it. Usage: sh examples/gw150914/demo.sh BUILD_DIR
#
# The daemon listens on a socket in a fresh temporary directory, so the demo
# never meets a system daemon or another user's. It is always stopped with
# SIGTERM, and must then exit 0 (it drains and exits cleanly on SIGTERM);
# the script's exit status is the job's, or 1 if the daemon misbehaved.
# FFTD_BACKEND picks the backend (default auto: CUDA if a GPU is present);
# FFTD_DATA the data directory (default: the example's own default,
# ../shared/data/gw150914).

set -u

if [ $# -ne 1 ]; then
	echo "usage: sh examples/gw150914/demo.sh BUILD_DIR" >&2
	exit 2
fi
build=$1
for prog in fftd fftctl gw150914; do
	if [ ! -x "$build/$prog" ]; then
		echo "demo: $build/$prog is missing; run make first" >&2
		exit 2
	fi
done

out=$build/demo
mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftd-demo.XXXXXX") || exit 1
url="ipc://$tmp/fftd.sock"
log=$out/fftd.log
pid=

# stop_daemon sends SIGTERM and waits (bounded) for the exit status; a
# daemon that does not stop within 10 s is killed and counts as a failure.
stop_daemon() {
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "demo: fftd did not stop within 10 s of SIGTERM; killing it" >&2
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		pid=
		return 1
	fi
	wait "$pid"
	st=$?
	pid=
	if [ $st -ne 0 ]; then
		echo "demo: fftd exited with status $st after SIGTERM (log: $log)" >&2
		return 1
	fi
	return 0
}

# On any exit, including an interrupted one, the daemon goes and so does
# the temporary directory.
trap 'stop_daemon; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "demo: starting $build/fftd on $url (backend ${FFTD_BACKEND:-auto}, log $log)"
"$build/fftd" --listen "$url" --backend "${FFTD_BACKEND:-auto}" \
	--log-level info >"$log" 2>&1 &
pid=$!

# Wait until the daemon answers, at most about 30 s (CUDA initialisation
# can take a while); give up early if it died.
i=0
until "$build/fftctl" --url "$url" --timeout 1000 ping -c 1 >/dev/null 2>&1; do
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		echo "demo: fftd exited with status $? during startup; its log:" >&2
		pid=
		cat "$log" >&2
		exit 1
	fi
	i=$((i + 1))
	if [ $i -ge 300 ]; then
		echo "demo: fftd did not answer within 30 s; its log:" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.1 2>/dev/null || sleep 1
done
"$build/fftctl" --url "$url" info
"$build/fftctl" --url "$url" ping -c 5

if [ -n "${FFTD_DATA:-}" ]; then
	"$build/gw150914" --url "$url" --check --plot-dir "$out" --data "$FFTD_DATA"
else
	"$build/gw150914" --url "$url" --check --plot-dir "$out"
fi
rc=$?

if ! stop_daemon; then
	[ $rc -eq 0 ] && rc=1
fi
if [ $rc -eq 0 ]; then
	plots=
	for det in H1 L1; do
		png=$out/gw150914_${det}_snr.png
		[ -f "$png" ] && plots="$plots $png"
	done
	echo "demo: ok; plots:${plots:- none (is gnuplot installed?)}"
else
	echo "demo: FAILED (status $rc); daemon log: $log" >&2
fi
exit $rc

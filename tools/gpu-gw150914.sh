#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-gw150914.sh — the GW150914 template-bank search (examples/gw150914,
# gw150914-search) on the lent GPU machine with the full bank of 1,024
# IMRPhenomD templates (537 MB), which no one call can carry: it goes
# xz-compressed (~190 MB) in pieces of at most 48 MiB, one a call, staged
# on the GPU machine until all have come.
#
#   here:  sh tools/gpu-gw150914.sh pack BANK.h5 INPUT_DIR
#            (BANK.h5 from make_bank.py --size 1024; INPUT_DIR holds
#            input-H1.h5 and input-L1.h5, tests/pycbc's or the demo's
#            search inputs): gpu-carry/gw/bank.h5.xz.NN, SHA256SUMS and
#            the inputs (git-ignored)
#   there: sh tools/gpu-gw150914.sh receive
#            (in each call carrying a piece: copies what came to $STAGE)
#          B=DIR sh tools/gpu-gw150914.sh run
#            (receive, unpack once complete, start DIR/fftd with the cuda
#            backend, or $FFTD_BACKEND, search both detectors in one request of 1,024 each
#            with --check, stop the daemon; the output on stdout, the
#            daemon's log and search.json under $OUT)
#
# Carry the last piece with the build's fftd, gw150914-search and
# lib/ (B), and gpu-carry/gw's inputs; the machine must stay warm
# between the calls (the stage is in /tmp).
set -u
STAGE=${STAGE:-/tmp/fftd-gw-stage}
OUT=${OUT:-/tmp/fftd-gpu-out}
HERE=gpu-carry/gw

pack() {
	[ $# -eq 2 ] || { echo "usage: $0 pack BANK.h5 INPUT_DIR" >&2; exit 2; }
	rm -rf "$HERE" && mkdir -p "$HERE"
	xz -T2 -6 -c "$1" | split -b 48M -d - "$HERE/bank.h5.xz."
	cp "$2/input-H1.h5" "$2/input-L1.h5" "$HERE/"
	(cd "$HERE" && sha256sum bank.h5.xz.* >SHA256SUMS)
	ls -l "$HERE"
}

receive() {
	mkdir -p "$STAGE"
	[ -d "$HERE" ] && cp "$HERE"/* "$STAGE"/ 2>/dev/null
	[ -f "$STAGE/SHA256SUMS" ] || { echo "gw: no pieces yet"; return 1; }
	need=$(wc -l <"$STAGE/SHA256SUMS")
	have=0
	for p in $(cut -d' ' -f3 "$STAGE/SHA256SUMS"); do
		[ -f "$STAGE/$p" ] && have=$((have + 1))
	done
	echo "gw: $have of $need pieces received"
	[ "$have" -eq "$need" ] || return 1
	[ -f "$STAGE/bank.h5" ] && return 0
	(cd "$STAGE" && sha256sum -c --quiet SHA256SUMS) ||
		{ echo "gw: pieces do not match SHA256SUMS"; return 1; }
	cat "$STAGE"/bank.h5.xz.* | xz -dc >"$STAGE/bank.h5" ||
		{ echo "gw: unpacking failed"; rm -f "$STAGE/bank.h5"; return 1; }
}

run() {
	receive || return 1
	for f in input-H1.h5 input-L1.h5; do
		[ -f "$STAGE/$f" ] || { echo "gw: no $f carried"; return 1; }
	done
	mkdir -p "$OUT"
	B=${B:-gpu-run}
	export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	url="ipc:///tmp/fftd-gw-$$.sock"
	"$B/fftd" --listen "$url" --backend "${FFTD_BACKEND:-cuda}" --log-level info \
		>"$OUT/fftd-gw.log" 2>&1 &
	pid=$!
	i=0
	# the search's own first call waits for the daemon; a second here
	until [ -S "/tmp/fftd-gw-$$.sock" ] || [ $i -ge 300 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	"$B/gw150914-search" --url "$url" --bank "$STAGE/bank.h5" \
		--input "$STAGE/input-H1.h5" --input "$STAGE/input-L1.h5" \
		--slice 1024 --out "$OUT/search.json" --no-plot \
		--plot-dir "$OUT" --check --quiet
	rc=$?
	kill -TERM $pid 2>/dev/null
	wait $pid
	echo "gw150914-search: exit status $rc; fftd: exit status $?"
	return $rc
}

case "${1:-}" in
pack) shift; pack "$@" ;;
receive) receive ;;
run) run ;;
*) echo "usage: $0 pack BANK.h5 INPUT_DIR | receive | run" >&2; exit 2 ;;
esac

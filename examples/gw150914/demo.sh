#!/bin/sh
# SPDX-License-Identifier: MIT
#
# demo.sh — `make demo`: start a private fftd, run the GW150914 matched
# filter through it (gw150914: the GWOSC tutorial's single template, every
# transform checked against FFTW), then the template-bank search
# (gw150914-search: make_bank.py's default bank, resident in the daemon,
# fftd_mf_bank), stop it. Usage: sh examples/gw150914/demo.sh BUILD_DIR
#
# The search's inputs come from Python (LALSuite, PyCBC): a venv in
# BUILD_DIR/venv-gw made on first use with `python3 -m venv` and pip
# (examples/gw150914/requirements.txt: about 2 minutes and 680 MB, the
# network once; $FFTD_PYCBC_PYTHON names another Python that has them),
# the bank cached in BUILD_DIR/bank, the prepared inputs in
# BUILD_DIR/demo/search. If they cannot be made the single-template part
# still runs, the search is skipped with a message and the demo fails.
# FFTD_BANK_SIZE sets the bank's size (default: make_bank.py's, 128).
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
for prog in fftd fftctl gw150914 gw150914-search; do
	if [ ! -x "$build/$prog" ]; then
		echo "demo: $build/$prog is missing; run make first" >&2
		exit 2
	fi
done

out=$build/demo
mkdir -p "$out" || exit 1
data=${FFTD_DATA:-../shared/data/gw150914}
here=$(dirname "$0")

# prepare_search makes what the search reads: the venv (if missing), the
# bank (cached) and the prepared inputs of H1 and L1; it sets $bank.
prepare_search() {
	for f in H-H1_LOSC_4_V2-1126259446-32.hdf5 L-L1_LOSC_4_V2-1126259446-32.hdf5; do
		if [ ! -f "$data/$f" ]; then
			echo "demo: $data/$f is missing (gw150914 says where to get it)" >&2
			return 1
		fi
	done
	py=${FFTD_PYCBC_PYTHON:-}
	if [ -z "$py" ]; then
		venv=$build/venv-gw
		if [ ! -x "$venv/bin/python" ]; then
			echo "demo: making $venv for the search's inputs" \
				"($here/requirements.txt: about 2 minutes, 680 MB)"
			if ! python3 -m venv "$venv" ||
				! "$venv/bin/pip" install -q -r "$here/requirements.txt"; then
				rm -rf "$venv"
				return 1
			fi
		fi
		py=$venv/bin/python
	fi
	echo "demo: the bank (make_bank.py, cached in $build/bank)"
	bank=$("$py" "$here/make_bank.py" ${FFTD_BANK_SIZE:+--size "$FFTD_BANK_SIZE"} \
		--out-dir "$build/bank" | tail -n 1) || return 1
	[ -f "$bank" ] || return 1
	for det in H1 L1; do
		[ -f "$out/search/input-$det.h5" ] && continue
		echo "demo: the search inputs (pycbc_reference.py prepare)"
		"$py" "$here/pycbc_reference.py" prepare --data-dir "$data" \
			--out-dir "$out/search" >"$out/search-prepare.log" 2>&1 ||
			{ cat "$out/search-prepare.log" >&2; return 1; }
		break
	done
	return 0
}

bank=
search_ready=no
if prepare_search; then
	search_ready=yes
else
	echo "demo: could not make the search's inputs (above); the" \
		"template-bank search will be skipped" >&2
fi
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

# The template-bank search: the bank resident in the daemon once, both
# detectors searched against it.
src=skipped
if [ "$search_ready" = yes ]; then
	echo
	"$build/gw150914-search" --url "$url" --bank "$bank" \
		--input "$out/search/input-H1.h5" --input "$out/search/input-L1.h5" \
		--out "$out/search.json" --plot-dir "$out" --check
	src=$?
	[ $rc -eq 0 ] && rc=$src
elif [ $rc -eq 0 ]; then
	rc=1
fi

if ! stop_daemon; then
	[ $rc -eq 0 ] && rc=1
fi
if [ $rc -eq 0 ]; then
	plots=
	for det in H1 L1; do
		for png in "$out/gw150914_${det}_snr.png" "$out/search_${det}_rho.png"; do
			[ -f "$png" ] && plots="$plots $png"
		done
	done
	echo "demo: ok; plots:${plots:- none (is gnuplot installed?)}"
else
	echo "demo: FAILED (status $rc; search: $src); daemon log: $log" >&2
fi
exit $rc

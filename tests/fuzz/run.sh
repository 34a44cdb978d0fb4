#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh — run every fuzzer of build-fuzz/ (make fuzz) for a bounded time.
#
#   sh tests/fuzz/run.sh SECONDS [NAME...]
#
# Each target (all, or the NAMEs given: request, chan, fdsock, npy, config)
# runs for SECONDS (libFuzzer's -max_total_time) on its corpus,
# build-fuzz/corpus/NAME/ (seeds from make fuzz, plus what earlier runs
# added), with its dictionary tests/fuzz/NAME.dict when there is one. With
# FUZZ_RUNS=N each runs N inputs instead, without a time bound. One line per
# target:
#   ok    NAME   EXECS execs   E exec/s   Ts
#   FAIL  NAME   EXECS execs   E exec/s   Ts   crash|leak|timeout|oom: ARTIFACT
# A finding is written to build-fuzz/artifacts/NAME/ and the end of the
# fuzzer's output is printed; reproduce it with build-fuzz/fuzz-NAME FILE.
# The last line is "fuzz: P passed, F failed" and the exit status is 1 if
# any target found something (crash, sanitizer report, leak, timeout of 10 s
# on one input, out of memory) or did not run.
#
# Environment: FUZZ_DIR (default build-fuzz), FUZZ_RUNS, FUZZ_ARGS (more
# libFuzzer flags, e.g. -seed=1; not -jobs or -workers, whose output goes
# to files this script does not read). Each target is one process.

usage() {
	echo "usage: sh tests/fuzz/run.sh SECONDS [NAME...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
secs=$1
shift
case $secs in
'' | *[!0-9]*) usage ;;
esac
dir=${FUZZ_DIR:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
	set --
	for src in "$here"/fuzz-*.c; do
		n=${src##*/fuzz-}
		set -- "$@" "${n%.c}"
	done
fi

# Leaks count; UBSan stops at the first report (as the test suite).
ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS

pass=0
fail=0
log=$(mktemp "${TMPDIR:-/tmp}/fftd-fuzz.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT INT TERM

for name in "$@"; do
	bin=$dir/fuzz-$name
	corpus=$dir/corpus/$name
	art=$dir/artifacts/$name
	if [ ! -x "$bin" ]; then
		printf 'FAIL  %-8s not built (make fuzz)\n' "$name"
		fail=$((fail + 1))
		continue
	fi
	mkdir -p "$corpus" "$art"
	dict=""
	[ -f "$here/$name.dict" ] && dict="-dict=$here/$name.dict"
	# Inputs no longer than a real message needs: longer ones only
	# repeat it and slow every run down.
	case $name in
	chan) maxlen=256 ;;   # a depth and a few packets
	fdsock) maxlen=256 ;; # a mode and 7 chunks of at most 2 + 32 bytes
	npy) maxlen=1024 ;;   # a header and a small array
	request) maxlen=2048 ;; # frames of small requests and replies
	*) maxlen=4096 ;;
	esac
	if [ -n "${FUZZ_RUNS:-}" ]; then
		bound="-runs=$FUZZ_RUNS"
	else
		bound="-max_total_time=$secs"
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086 # the flags are words on purpose
	"$bin" $bound -max_len=$maxlen -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art/" $dict ${FUZZ_ARGS:-} "$corpus" >"$log" 2>&1
	rc=$?
	t=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	what=""
	if grep -q 'ERROR: LeakSanitizer' "$log"; then
		what=leak
	elif grep -q 'ERROR: libFuzzer: timeout' "$log"; then
		what=timeout
	elif grep -q 'ERROR: libFuzzer: out-of-memory' "$log"; then
		what=oom
	elif [ "$rc" != 0 ] || [ -n "$artifact" ]; then
		what=crash
	fi
	if [ -z "$what" ] && [ -z "$execs" ]; then
		what="no statistics (did not run?)"
	fi
	if [ -z "$what" ]; then
		printf 'ok    %-8s %12s execs %8s exec/s %5ds\n' "$name" "$execs" "$rate" "$t"
		pass=$((pass + 1))
	else
		printf 'FAIL  %-8s %12s execs %8s exec/s %5ds   %s: %s\n' "$name" \
			"${execs:-?}" "${rate:-?}" "$t" "$what" "${artifact:-none}"
		echo "---- end of fuzz-$name's output ----"
		tail -n 60 "$log"
		echo "----"
		fail=$((fail + 1))
	fi
done

echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]

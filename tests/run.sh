#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh — run fftd's test binaries and add up cmocka's results.
#
#   sh tests/run.sh [--gpu | --all] BUILD_DIR[=NAME,NAME...]...
#
# For each build folder: every tests/unit, tests/integration and
# tests/dropin test_* binary and
# tests/cxx_header (with --gpu: the tests/gpu binaries instead; with --all:
# both, so that GPU tests show up as skipped on machines without a GPU), each with
# FFTD_BIN=BUILD_DIR/fftd and sanitizer options that suit a CUDA-linked
# binary. A binary's line says what cmocka reported; a binary that crashes,
# times out, exits non-zero after its tests, or prints no cmocka summary
# counts as failed. The last line is exactly
#   tests: P passed, F failed, S skipped
# and the exit status is 1 if anything failed.
#
# Also bench/soak, the short soak (FFTD_SOAK_REQUESTS requests, default
# 200000), as one test, where the build folder has it.
#
# Also tests/symbols.sh (libfftd.so exports exactly fftd.h's FFTD_API
# calls), as one test named "symbols", where the build folder has the library,
# and tests/dropin/symbols.sh (libfftd-fftw3.so exports exactly fftw3.h's
# fftw_/fftwf_ functions) as "dropin_symbols".
#
# Environment: FFTD_TEST_ONLY (run only these binaries: names such as
# "test_shm_bits soak", separated by spaces), FFTD_TEST_TIMEOUT (seconds per binary, default 600),
# FFTD_TEST_SEED (repeat a run's random inputs), FFTD_TEST_VERBOSE=1 (print
# every binary's whole output, not only failing ones).

usage() {
	echo "usage: sh tests/run.sh [--gpu | --all] BUILD_DIR..." >&2
	exit 2
}

gpu=0
if [ "${1:-}" = "--gpu" ]; then
	gpu=1
	shift
elif [ "${1:-}" = "--all" ]; then
	gpu=2
	shift
fi
[ $# -ge 1 ] || usage

timeout_s=${FFTD_TEST_TIMEOUT:-600}
have_timeout=0
if command -v timeout >/dev/null 2>&1; then
	have_timeout=1
fi

# Sanitizers: CUDA's runtime maps memory where ASan's shadow gap would be
# (protect_shadow_gap=0); leaks count; UBSan stops at the first report.
# Options already in the environment come last, so they win.
ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# TSan (SAN=thread builds): stop at the first race, show both stacks of a
# lock-order report; tests/tsan.supp holds reports inside third-party
# libraries only (each with its reason).
tests_dir=$(cd "$(dirname "$0")" && pwd)
tsan_supp=$tests_dir/tsan.supp
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$tsan_supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
# cmocka's plain output is what we parse.
unset CMOCKA_MESSAGE_OUTPUT CMOCKA_XML_FILE

# wanted NAME: whether FFTD_TEST_ONLY (names of test binaries, "soak"
# and "cxx_header", separated by spaces; unset: all) lets NAME run.
# A build folder given as DIR=NAME,NAME,... runs only those in DIR.
wanted() {
	if [ -n "${dir_only:-}" ]; then
		case ",$dir_only," in *",$1,"*) ;; *) return 1 ;; esac
	fi
	[ -z "${FFTD_TEST_ONLY:-}" ] && return 0
	case " $FFTD_TEST_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

total_pass=0
total_fail=0
total_skip=0
log=$(mktemp "${TMPDIR:-/tmp}/fftd-run.XXXXXX") || exit 2
# A signal ends the run (after the log is removed): a run that went on with
# its log gone counted a killed test as passed.
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_one NAME KIND CMD... : run a binary, parse, print, add up.
# KIND is "cmocka" or "plain" (one test: passed when it exits 0).
run_one() {
	name=$1
	kind=$2
	shift 2
	start=$(date +%s)
	if [ "$have_timeout" = 1 ]; then
		timeout -k 10 "$timeout_s" "$@" >"$log" 2>&1
	else
		"$@" >"$log" 2>&1
	fi
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ "$kind" = plain ]; then
		if [ "$rc" = 0 ]; then p=1; f=0; else p=0; f=1; fi
		s=0
		note=""
	else
		# Sum over groups: planned ("Running N"), passed, skipped. Whatever
		# was planned and neither passed nor skipped failed (failures,
		# errors, a failed group setup, a crash part-way).
		set -- $(awk '
			/^\[==========\] Running [0-9]+ test\(s\)\./ { planned += $3 }
			/^\[==========\] [0-9]+ test\(s\) run\./      { summaries++ }
			/\[  PASSED  \] [0-9]+ test\(s\)\./ {
				sub(/.*\[  PASSED  \] /, ""); passed += $1 }
			/\[  SKIPPED \] [0-9]+ test\(s\), listed below:/ {
				sub(/.*\[  SKIPPED \] /, ""); skipped += $1 }
			END { printf "%d %d %d %d\n", planned, summaries, passed, skipped }
		' "$log")
		# an unreadable log (awk printed nothing) is no summary
		planned=${1:-0} summaries=${2:-0} p=${3:-0} s=${4:-0}
		f=$((planned - p - s))
		[ "$f" -ge 0 ] || f=0
		note=""
		if [ "$summaries" = 0 ] || [ "$planned" = 0 ]; then
			note=" (no cmocka summary)"
			[ "$f" -gt 0 ] || f=1
		fi
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			# Every test passed, yet the binary failed: a leak report, a
			# crash at exit, a timeout.
			note=" (exit status $rc after its tests)"
			f=1
		fi
	fi
	if [ "$rc" = 124 ] || { [ "$have_timeout" = 1 ] && [ "$rc" = 137 ]; }; then
		note="$note (timed out after ${timeout_s}s?)"
	elif [ "$rc" -gt 128 ]; then
		note="$note (killed by signal $((rc - 128)))"
	fi
	if [ "$f" -gt 0 ]; then
		verdict=FAIL
	elif [ "$p" = 0 ] && [ "$s" -gt 0 ]; then
		verdict=SKIP
	else
		verdict=ok
	fi
	printf '%-4s %-48s %3d passed, %d failed, %d skipped, %ds%s\n' \
		"$verdict" "$name" "$p" "$f" "$s" "$secs" "$note"
	if [ "$f" -gt 0 ] || [ "${FFTD_TEST_VERBOSE:-0}" = 1 ]; then
		echo "---- output of $name (last 200 lines) ----"
		tail -n 200 "$log"
		echo "---- end of $name ----"
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
}

for arg in "$@"; do
	dir=${arg%%=*}
	dir_only=""
	case "$arg" in *=*) dir_only=${arg#*=} ;; esac
	if [ ! -d "$dir" ]; then
		echo "FAIL $dir: no such build folder" >&2
		total_fail=$((total_fail + 1))
		continue
	fi
	abs=$(cd "$dir" && pwd)
	FFTD_BIN="$abs/fftd"
	export FFTD_BIN
	if [ ! -x "$FFTD_BIN" ]; then
		echo "note: $FFTD_BIN is missing; integration tests will fail" >&2
	fi
	echo "== $dir"
	case $gpu in
	1) subdirs="gpu" ;;
	2) subdirs="unit integration dropin gpu" ;;
	*) subdirs="unit integration dropin" ;;
	esac
	found=0
	for sub in $subdirs; do
		for bin in "$abs/tests/$sub"/test_*; do
			[ -f "$bin" ] && [ -x "$bin" ] || continue
			case $bin in *.o | *.d) continue ;; esac
			wanted "${bin##*/}" || continue
			found=$((found + 1))
			run_one "$dir/tests/$sub/${bin##*/}" cmocka "$bin"
		done
	done
	# The matched-filter bank's f32 engines other than the default
	# (fourstep where it has a shape): the same tests on cuFFT's, and on
	# fourstep's one-pass kernel where that has a shape (2^14 .. 2^18).
	if [ "$gpu" != 0 ] && [ -x "$abs/tests/gpu/test_gpu_arrays" ] &&
		wanted test_gpu_arrays; then
		found=$((found + 2))
		run_one "$dir/tests/gpu/test_gpu_arrays[FFTD_MF_ENGINE=cufft]" \
			cmocka env FFTD_MF_ENGINE=cufft "$abs/tests/gpu/test_gpu_arrays"
		run_one "$dir/tests/gpu/test_gpu_arrays[FFTD_MF_CLUSTER=1]" \
			cmocka env FFTD_MF_CLUSTER=1 "$abs/tests/gpu/test_gpu_arrays"
	fi
	if [ "$gpu" != 1 ] && [ -x "$abs/tests/cxx_header" ] && wanted cxx_header; then
		found=$((found + 1))
		run_one "$dir/tests/cxx_header" plain "$abs/tests/cxx_header"
	fi
	# libfftd.so exports exactly the calls include/fftd.h declares FFTD_API
	# (tests/symbols.sh).
	if [ "$gpu" != 1 ] && [ -f "$abs/libfftd.so" ] && wanted symbols; then
		found=$((found + 1))
		run_one "$dir/symbols" plain sh "$tests_dir/symbols.sh" "$abs"
	fi
	# libfftd-fftw3.so exports exactly FFTW's fftw_/fftwf_ functions
	# (tests/dropin/symbols.sh).
	if [ "$gpu" != 1 ] && [ -f "$abs/libfftd-fftw3.so" ] && wanted dropin_symbols; then
		found=$((found + 1))
		run_one "$dir/dropin_symbols" plain sh "$tests_dir/dropin/symbols.sh" "$abs"
	fi
	# The short soak (bench/README.md): kills, leaks, lost or wrong results.
	# Not in the ASan build: its allocator's quarantine moves RSS by more
	# than the soak's 5% leak bound (RSS 327,728 -> 352,792 kB with no
	# leak reported); LeakSanitizer checks the daemon in the other tests.
	case "$dir" in *-san) soak_here=0 ;; *) soak_here=1 ;; esac
	if [ "$gpu" != 1 ] && [ "$soak_here" = 1 ] && [ -x "$abs/bench/soak" ] && wanted soak; then
		found=$((found + 1))
		run_one "$dir/bench/soak" plain "$abs/bench/soak" \
			--requests "${FFTD_SOAK_REQUESTS:-200000}" --kill-every-ms 250
	fi
	if [ "$found" = 0 ]; then
		echo "FAIL $dir: no test binaries (build first)"
		total_fail=$((total_fail + 1))
	fi
done

echo "tests: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" = 0 ]

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-check.sh — the whole GPU story of the tensor-core FFT kernels (issue 4)
# in one call on the lent GPU machine: SASS check (HMMA present, no local
# memory), host unit tests, a GPU smoke test, bench/kernels (tc16 vs cuFFT
# f16, split16 vs cuFFT f32), the full GPU tests (every size class against
# FFTW double), then compute-sanitizer memcheck + racecheck on the smoke
# test. Results go to four files under $OUT (summary.txt, bench.txt,
# kernels.json, all.log), written as it goes, so a run cut short still
# returns what it did; a short table is printed last.
# The binaries are built here beforehand and carried (the lent machine has no
# cmocka: its .so travels in BUILD/lib):
#   make BUILD=build-k build-k/bench/kernels build-k/tests/gpu/test_tc16 \
#        build-k/tests/gpu/test_tc16_nd \
#        build-k/tests/unit/test_tc_host build-k/tests/unit/test_tc_swizzle
#   mkdir -p build-k/lib && cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 build-k/lib/
# then run with carry ["build-k/bench", "build-k/tests", "build-k/lib"].
# PROFILE=0 skips the two ncu profiles.
#
# usage: sh kernels/gpu-check.sh [BUILD]   (default build-k; OUT defaults to /tmp/tc-out)

B=${1:-build-k}
OUT=${OUT:-/tmp/tc-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
S="$OUT/summary.txt"
A="$OUT/all.log"
: > "$S"
: > "$A"
log() { echo "$*" | tee -a "$S"; }
section() { printf '\n===== %s =====\n' "$*" >> "$A"; }

log "$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader)"

section sass
cuobjdump -sass "$B"/bench/kernels 2>/dev/null | awk '
	/Function :/ { if (fn != "") printf "%s HMMA=%d LDL/STL=%d\n", fn, h, l; fn=$3; h=0; l=0; next }
	/HMMA/ { h++ } /LDL|STL/ { l++ }
	END { if (fn != "") printf "%s HMMA=%d LDL/STL=%d\n", fn, h, l }' | grep pass_kernel > "$OUT/sass.tmp"
cat "$OUT/sass.tmp" >> "$A"
log "SASS: $(wc -l < "$OUT/sass.tmp") pass kernels, $(awk '$2=="HMMA=0"' "$OUT/sass.tmp" | wc -l) without HMMA, $(awk '$3!="LDL/STL=0"' "$OUT/sass.tmp" | wc -l) with local memory; HMMA counts: $(awk '{sub("HMMA=","",$2); print $2}' "$OUT/sass.tmp" | sort -n | uniq | tr '\n' ' ')"
rm -f "$OUT/sass.tmp"

section unit
for u in test_tc_host test_tc_swizzle; do
	timeout 60 "$B"/tests/unit/$u >> "$A" 2>&1
	log "unit $u: rc=$?"
done

gpu_test() {
	section "gpu $1"
	timeout "$2" "$B"/tests/gpu/test_tc16 "$1" > "$OUT/t.tmp" 2>&1
	rc=$?
	cat "$OUT/t.tmp" >> "$A"
	log "gpu $1: rc=$rc errs: $(grep -o 'rel L2 [0-9.e+-]*' "$OUT/t.tmp" | awk '{printf "%s ", $3}')"
	grep -E "got \(|non-finite|not supported|plan_create" "$OUT/t.tmp" | head -8 | tee -a "$S"
	rm -f "$OUT/t.tmp"
}

gpu_test test_errors 30
gpu_test test_smoke 60

section bench
timeout 200 "$B"/bench/kernels "$OUT/kernels.json" > "$OUT/bench.txt" 2>> "$A"
log "bench: rc=$?"

# Profiles of a few pass kernels (hardware counters; clocks left alone).
if [ "${PROFILE:-1}" = 1 ] && command -v ncu > /dev/null; then
	SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
	for spec in "4Tc16:1D 4096:1" "4Tc16:1D 1048576:2"; do
		k=${spec%%:*}; rest=${spec#*:}; case_=${rest%%:*}; cnt=${rest##*:}
		section "ncu $k $case_"
		timeout 90 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:$k" --launch-skip 4 --launch-count "$cnt" $SEC \
			"$B"/bench/kernels --quick --noerr --only "$case_" >> "$A" 2>&1
		log "ncu $k $case_: rc=$? $(grep -E 'Duration|DRAM Throughput|Achieved Occupancy' "$A" | tail -3 | awk '{print $1, $2, $(NF)}' | tr '\n' ' ')"
	done
fi

for t in test_tc16_1d_single test_tc16_1d_fourstep test_tc16_2d test_tc16_inverse_inplace \
	test_split16_1d_single test_split16_1d_fourstep test_split16_2d test_split16_inverse_inplace; do
	gpu_test "$t" 60
done

if command -v compute-sanitizer > /dev/null; then
	section memcheck
	timeout 60 compute-sanitizer --tool memcheck --print-limit 5 "$B"/tests/gpu/test_tc16 test_smoke >> "$A" 2>&1
	log "memcheck smoke: rc=$? $(grep -E 'ERROR SUMMARY' "$A" | tail -1)"
	section racecheck
	timeout 90 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 5 "$B"/tests/gpu/test_tc16 test_smoke >> "$A" 2>&1
	log "racecheck smoke: rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$A" | tail -1)"
	# the fused real steps (R2C / C2R rows in shared memory)
	for tool in memcheck racecheck; do
		section "$tool real smoke"
		timeout 120 compute-sanitizer --tool $tool --print-limit 5 "$B"/tests/gpu/test_tc16_nd test_real_smoke >> "$A" 2>&1
		log "$tool real smoke: rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$A" | tail -1)"
	done
fi

echo "===== summary ====="
cat "$S"
echo "===== bench ====="
cat "$OUT/bench.txt"

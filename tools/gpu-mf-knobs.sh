#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-mf-knobs.sh — bench/pipelines once per setting of the matched-filter
# bank's measurement knobs, in one call on the lent GPU machine, printing
# the (a) and (c) rows of each run: (c), in-process cuFFT, shows the
# machine's drift between runs. Each argument is one run's environment
# (space-separated VAR=value words; "-" for none), e.g.
#
#   B=gpu-run sh tools/gpu-mf-knobs.sh - FFTD_MF_FOURSTEP_PARTS=2 \
#       "FFTD_MF_FOURSTEP_PARTS=1 FFTD_MF_OWN_SCRATCH_MIB=1024"
#
# SIZES (log2 N, at most four; default 17,20) and PIPELINES_ARGS (default
# "--plain 4 --no-pycbc") set the bench's sizes and options. The one-pass
# kernel against the two passes, say, is
#
#   SIZES=14,15,16,17 B=gpu-run sh tools/gpu-mf-knobs.sh \
#       FFTD_MF_CLUSTER=1 FFTD_MF_CLUSTER=0
#
# (its tests: FFTD_TEST_ONLY=test_gpu_arrays sh tests/run.sh --gpu gpu-run).
# Logs under $OUT.
set -u
B=${B:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
rc=0
i=0
for setting in "$@"; do
	i=$((i + 1))
	[ "$setting" = - ] && setting=""
	# shellcheck disable=SC2086
	env $setting "$B/bench/pipelines" --sizes "${SIZES:-17,20}" \
		${PIPELINES_ARGS:---plain 4 --no-pycbc} \
		>"$OUT/knobs-$i.log" 2>&1 || rc=1
	echo "== run $i: ${setting:-defaults}"
	grep -E "^[0-9]+ +\((a|c)\)|FAIL" "$OUT/knobs-$i.log" |
		awk '{ printf "%s %s %s %s %s\n", $1, $2, $5, $6, $8 }'
done
exit $rc

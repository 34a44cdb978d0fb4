#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-mf-cluster.sh — the fourstep engine's one-pass kernel
# (kernels/mf_cluster.cu) against its two passes, in one call on the lent
# GPU machine: test_gpu_arrays with the default engine (the one-pass
# kernel where it has a shape; with "tests0" also with FFTD_MF_CLUSTER=0),
# then bench/pipelines at SIZES with the kernel and without it (the
# daemon reads FFTD_MF_CLUSTER), so that (c), in-process cuFFT, shows the
# machine's drift between the two tables.
#
#   B=gpu-run sh tools/gpu-mf-cluster.sh [tests] [tests0] [bench]
#
# SIZES: log2 N list (default 14,15,16,17,18,20); PIPELINES_ARGS adds
# bench options (default "--plain 16 --no-pycbc"). Logs and JSON under
# $OUT.
set -u
B=${B:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
what=${*:-tests bench}
rc=0
nvidia-smi -L 2>/dev/null
arrays() { # $1: FFTD_MF_CLUSTER
	start=$(date +%s)
	FFTD_MF_CLUSTER=$1 FFTD_TEST_GPU=1 timeout -k 10 300 \
		"$B/tests/gpu/test_gpu_arrays" >"$OUT/arrays-cluster$1.log" 2>&1 || rc=1
	echo "== test_gpu_arrays FFTD_MF_CLUSTER=$1 ($(($(date +%s) - start)) s)"
	grep -E "PASSED|FAILED|SKIPPED|worst|error|Error" \
		"$OUT/arrays-cluster$1.log" | head -20
}
for w in $what; do
	case $w in
	tests) arrays 1 ;;
	tests0) arrays 0 ;;
	bench)
		for c in 1 0; do
			# shellcheck disable=SC2086
			FFTD_MF_CLUSTER=$c "$B/bench/pipelines" \
				--sizes "${SIZES:-14,15,16,17,18,20}" \
				--json "$OUT/pipelines-cluster$c.json" \
				${PIPELINES_ARGS:---plain 16 --no-pycbc} \
				>"$OUT/pipelines-cluster$c.log" 2>&1 || rc=1
			echo "== bench/pipelines FFTD_MF_CLUSTER=$c"
			grep -E "^[0-9]+ +\((a|c)\)|^targets|check|FAIL" \
				"$OUT/pipelines-cluster$c.log" | cut -c1-150
		done
		;;
	esac
done
exit $rc

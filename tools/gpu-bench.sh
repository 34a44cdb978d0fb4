#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-bench.sh — the benchmarks for the lent GPU machine (GPU_EXTRA step of
# tools/gpu-run.sh, or alone): bench/e2e on every case with the default
# pipeline settings, the split-batch pipeline's settings compared on f32 C2C
# N=4096 (the figures that chose the defaults in deploy/fftd.conf), and
# bench/kernels (fftd's kernels beside cuFFT and VkFFT: build it here with
# `make gpu-bundle VKFFT_DIR=/path/to/VkFFT`, or `make build/bench/kernels
# VKFFT_DIR=...` and carry the binary; bench/README.md, "bench/kernels").
# KERNELS_ARGS adds options (e.g. "--quick --only '1D 4096,3D 64^3'"),
# SKIP_E2E=1 / SKIP_KERNELS=1 leave a part out. Logs and JSON under $OUT.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/fftd-gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rc=0

if [ "${SKIP_E2E:-0}" != 1 ]; then
	"$B/bench/e2e" --spawn "$B/fftd" --json "$OUT/e2e.json" ${E2E_ARGS:-} \
	    >"$OUT/e2e.log" 2>&1 || rc=1
	sed -n '/^=== fftd e2e/,$p' "$OUT/e2e.log"
fi

# Pipeline settings: K streams x chunk bytes, one case, same GPU.
for kc in ${PIPE_SETTINGS:-}; do
	k=${kc%x*}
	c=${kc#*x}
	conf="$OUT/pipe-$kc.conf"
	printf '[backend]\npipeline_streams = %s\npipeline_chunk_bytes = %s\n' \
	    "$k" "$c" >"$conf"
	"$B/bench/e2e" --spawn "$B/fftd" --config "$conf" --cases c2c4096 --reps 5 \
	    --json "$OUT/e2e-pipe-$kc.json" >"$OUT/e2e-pipe-$kc.log" 2>&1 || rc=1
	echo "pipeline $kc: $(grep -E '^f32 C2C N=4096 ' "$OUT/e2e-pipe-$kc.log" | head -1)"
done

if [ "${SKIP_KERNELS:-0}" != 1 ] && [ -x "$B/bench/kernels" ]; then
	# eval: KERNELS_ARGS may quote names with spaces ("--only '1D 4096'").
	eval "\"\$B/bench/kernels\" ${KERNELS_ARGS:-} --json \"\$OUT/kernels.json\"" \
	    >"$OUT/kernels.log" 2>&1 || rc=1
	# The table (progress lines go first, on stderr, into the same log).
	sed -n '/^bench\/kernels on /,$p' "$OUT/kernels.log"
	[ $rc = 0 ] || tail -n 5 "$OUT/kernels.log"
fi
exit $rc

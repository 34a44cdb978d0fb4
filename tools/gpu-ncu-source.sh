#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-ncu-source.sh — Nsight Compute's full section set, with per-SASS-
# instruction execution counts, for the kernels that bench/kernels runs for
# one row, on the lent GPU machine:
#
#   sh tools/gpu-ncu-source.sh B ROW KERNEL_REGEX OUTPREFIX [COUNT]
#
# B: the bundle (gpu-run/); ROW: a bench/kernels row name ("1D 4096");
# KERNEL_REGEX: matched against the demangled name, e.g.
# 'Tc16, \(int\)4096, .*\(bool\)0, \(int\)0>' (the last bool is CV: 0 leaves
# out the conversion table's kernels), or '^(?!fftd_tc|VkFFT)' for cuFFT's;
# COUNT: launches profiled (default 1). Writes OUTPREFIX.ncu-rep, the
# details page (OUTPREFIX.details.csv) and the SASS source page with
# instructions executed per line (OUTPREFIX.sass.csv), which answer where
# a kernel's dynamic instructions go (tools/gpu-ncu-pass.sh gives only the
# totals); tools/ncu-sass-summary.py sums that page by opcode and lists the
# instructions where warps stall. Clocks are not locked.
set -u
B=$1 ROW=$2 K=$3 O=$4 N=${5:-1}
NCU=$(ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "gpu-ncu-source: no ncu" >&2; exit 77; }
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 400 "$NCU" --kernel-name-base demangled --set full \
    --import-source no --clock-control none -k "regex:$K" -c "$N" -f -o "$O" \
    "$B/bench/kernels" --quick --noerr --only "$ROW" >"$O.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "gpu-ncu-source: ncu exit $rc" >>"$O.log"; exit $rc; }
"$NCU" -i "$O.ncu-rep" --page details --csv >"$O.details.csv" 2>&1
"$NCU" -i "$O.ncu-rep" --page source --csv --print-source sass \
    >"$O.sass.csv" 2>&1
exit 0

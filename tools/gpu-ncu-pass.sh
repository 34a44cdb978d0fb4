#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-ncu-pass.sh — Nsight Compute metrics of the tc16/split16 pass kernels
# that bench/kernels runs for one row, on the lent GPU machine:
#
#   sh tools/gpu-ncu-pass.sh B ROW KERNEL_REGEX OUTFILE [COUNT]
#
# B: the bundle (gpu-run/, or build-gpu); ROW: a bench/kernels row name
# ("1D 4096"), run with --ours (tc16 and split16 alone); KERNEL_REGEX:
# matched against the demangled name, e.g.
# 'Tc16, \(int\)4096, .*\(bool\)0, \(int\)0>' (the last bool is CV: 0
# leaves out the conversion table's kernel); COUNT: launches profiled
# (default 1; 2 for both passes of a two-pass row); KBIN (environment): the
# bench binary, default B/bench/kernels. Metrics: time, DRAM and
# L1/shared throughput, DRAM bytes read and written, L2 sector hit rate,
# instructions by pipe, shared-memory wavefronts and bank conflicts, global
# store sectors, and the stall reasons per issued instruction. Clocks are
# not locked (--clock-control none), so durations compare within one run,
# not with bench/kernels.
set -u
B=$1 ROW=$2 K=$3 O=$4 N=${5:-1}
NCU=$(ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "gpu-ncu-pass: no ncu" >&2; exit 77; }
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_active
M=$M,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active
M=$M,smsp__inst_executed.sum,smsp__inst_executed_pipe_lsu.sum
M=$M,smsp__inst_executed_pipe_tensor.sum,smsp__inst_executed_pipe_fma.sum
M=$M,smsp__inst_executed_pipe_alu.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
M=$M,smsp__sass_inst_executed_op_shared_ld.sum
M=$M,smsp__sass_inst_executed_op_shared_st.sum
M=$M,smsp__sass_inst_executed_op_ldgsts.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
for s in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle \
    math_pipe_throttle wait not_selected selected dispatch_stall \
    no_instruction branch_resolving tex_throttle membar drain; do
	M=$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 300 "$NCU" --clock-control none --kernel-name-base demangled \
    -k "regex:$K" -c "$N" --metrics "$M" \
    "${KBIN:-$B/bench/kernels}" --ours --quick --noerr --only "$ROW" >"$O" 2>&1
rc=$?
[ $rc -eq 0 ] || echo "gpu-ncu-pass: ncu exit $rc" >>"$O"
exit $rc

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-mf-profile.sh — Nsight Compute figures for the matched-filter bank's
# kernels on the lent GPU machine: bench/pipelines (one size, a short bank)
# under ncu, every kernel of the daemon (the bank's) and of case (c)
# (in-process cuFFT), with time, DRAM throughput and bytes, SM throughput,
# achieved occupancy, registers and shared-memory bank conflicts.
#
#   B=gpu-run sh tools/gpu-mf-profile.sh [LOG2N]   (default 17)
#   B=gpu-run MODE=sections KERNELS=REGEX sh tools/gpu-mf-profile.sh [LOG2N]
#
# FFTD_MF_ENGINE picks the bank's engine as for the daemon. CSV under $OUT.
# MODE=sections prints Nsight Compute's own sections (speed of light,
# warp states, scheduler, compute and memory workload) for the first
# kernels whose names match KERNELS (default: the bank's own, pass|mf_),
# as text, to see where their time goes rather than only how much.
# MODE=source takes the stall samples of each SASS instruction (Source
# Counters) of COUNT (2) kernels matching KERNELS (default pass) after
# SKIP (4), and prints them summed by opcode and the 30 hottest
# instructions (a stall is charged to the instruction that waits: the
# first use of a load, the one after a barrier); the report and the CSV
# stay under $OUT.
set -u
B=${B:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
N=${1:-17}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ "${MODE:-}" = source ]; then
	# Per-instruction stall samples of the first kernels matching KERNELS
	# (SASS), summed by opcode and listed for the hottest instructions.
	"$NCU" --target-processes all --clock-control none \
		--kernel-name "regex:${KERNELS:-pass}" --launch-skip "${SKIP:-4}" \
		--launch-count "${COUNT:-2}" --section SourceCounters \
		--section WarpStateStats --section LaunchStats --section Occupancy \
		--import-source no -f -o "$OUT/src-$N" \
		"$B/bench/pipelines" --sizes "$N" --templates 256 --reps 1 \
		--plain 4 --no-pycbc --slice 256 >"$OUT/src-$N.log" 2>&1
	rc=$?
	"$NCU" -i "$OUT/src-$N.ncu-rep" --page details --print-units base \
		>"$OUT/src-$N-details.txt" 2>&1
	grep -E '^  [a-zA-Z_]|Registers|Stall|Achieved Occ|Theoretical Occ|Duration|Warp Cycles Per Issued' \
		"$OUT/src-$N-details.txt" | cut -c1-110 | head -80
	"$NCU" -i "$OUT/src-$N.ncu-rep" --page source --csv \
		--print-source sass >"$OUT/src-$N-sass.csv" 2>&1
	python3 - "$OUT/src-$N-sass.csv" <<'PY'
import csv, sys, collections, re
text = open(sys.argv[1], errors="replace").read().splitlines()
# one table per kernel; each starts with a header line holding "Source"
tables, cur = [], None
for line in text:
    if line.startswith('"#') or line.startswith('"Address"') or line.startswith('"Source"'):
        pass
    try:
        row = next(csv.reader([line]))
    except Exception:
        continue
    if "Source" in row and ("Address" in row or "#" in row):
        cur = {"h": row, "rows": []}
        tables.append(cur)
    elif cur is not None and len(row) == len(cur["h"]):
        cur["rows"].append(row)
    elif line.strip():
        print("| " + line[:150])
for t in tables:
    h = t["h"]
    print("columns:", "; ".join(h)[:600])
    si = h.index("Source")
    def col(name):
        for i, c in enumerate(h):
            if c.startswith(name):
                return i
        return None
    ai = col("Warp Stall Sampling (All")
    ni = col("Warp Stall Sampling (Not")
    ei = col("Instructions Executed")
    def num(r, i):
        try:
            return float(r[i].replace(",", "")) if i is not None and r[i] else 0.0
        except ValueError:
            return 0.0
    tot = sum(num(r, ai) for r in t["rows"]) or 1
    ops = collections.Counter(); ex = collections.Counter()
    for r in t["rows"]:
        op = re.sub(r"^@!?U?P\w+\s+", "", r[si].strip()).split(" ")[0]
        ops[op] += num(r, ai); ex[op] += num(r, ei)
    print(f"== {len(t['rows'])} SASS lines, {tot:.0f} samples, {sum(ex.values()):.0f} instructions")
    for op, v in ops.most_common(22):
        print(f"  {op:24s} {100*v/tot:5.1f}% samples  {ex[op]:12.0f} executed")
    print("  hottest:")
    for r in sorted(t["rows"], key=lambda r: -num(r, ai))[:30]:
        print(f"  {100*num(r, ai)/tot:5.1f}% ns={100*num(r, ni)/tot:5.1f}%  {r[si].strip()[:70]}")
PY
	exit $rc
fi
if [ "${MODE:-}" = sections ]; then
	"$NCU" --target-processes all --clock-control none \
		--kernel-name "regex:${KERNELS:-pass|mf_}" --launch-skip 4 \
		--launch-count "${COUNT:-4}" \
		--section SpeedOfLight --section WarpStateStats \
		--section SchedulerStats --section ComputeWorkloadAnalysis \
		--section MemoryWorkloadAnalysis --section Occupancy \
		--section LaunchStats \
		"$B/bench/pipelines" --sizes "$N" --templates 256 --reps 1 \
		--plain 16 --no-pycbc --slice 256 >"$OUT/ncu-sections-$N.txt" \
		2>"$OUT/ncu-sections-$N.err"
	rc=$?
	grep -vE '^==PROF==|^ +-{5,}' "$OUT/ncu-sections-$N.txt" |
		grep -E '^  [a-zA-Z_]|Duration|Throughput|Issue|Stall|Warp Cycles|Eligible|Active Warps|Registers|Shared Memory|Occupancy|Executed Ipc|Bank|Block Size|Grid Size|L1|L2|DRAM|Pipe' |
		cut -c1-110 | head -${LINES_MAX:-400}
	exit $rc
fi
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,dram__bytes_read.sum,dram__bytes_write.sum
m=$m,sm__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,launch__registers_per_thread,launch__block_size,launch__grid_size
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
m=$m,smsp__inst_executed.sum,lts__t_bytes.sum
"$NCU" --target-processes all --metrics "$m" --csv \
	--launch-skip 0 --launch-count 40 \
	"$B/bench/pipelines" --sizes "$N" --templates 256 --reps 1 --plain 16 \
	--no-pycbc --slice 256 >"$OUT/ncu-$N.csv" 2>"$OUT/ncu-$N.err"
rc=$?
python3 - "$OUT/ncu-$N.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit("no ncu rows")
h = rows[0]
ki, mi, vi, ii = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
k = collections.OrderedDict()
for r in rows[1:]:
    k.setdefault((r[ii], r[ki][:60]), {})[r[mi]] = r[vi]
short = {"gpu__time_duration.sum": "us", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
         "dram__bytes_read.sum": "rd", "dram__bytes_write.sum": "wr", "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm%",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "occ%", "launch__registers_per_thread": "regs",
         "launch__block_size": "blk", "launch__grid_size": "grid", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": "bankc",
         "smsp__inst_executed.sum": "inst", "lts__t_bytes.sum": "l2B"}
for (i, name), v in k.items():
    print(i, name, " ".join(f"{short.get(a, a)}={b}" for a, b in v.items()))
PY
exit $rc

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ncu-sass-summary.py: where a kernel's time and instructions go, from the
SASS source page that tools/gpu-ncu-source.sh writes (OUTPREFIX.sass.csv,
`ncu --page source --csv --print-source sass`).

  ncu-sass-summary.py SASS_CSV [TOP]

For each profiled kernel (a kernel profiled more than once is summarised
once): the warp-stall samples and instructions executed in all; per opcode
(the mnemonic without its modifiers: LDGSTS, LDS, IMAD...) the share of
the stall samples, the instructions executed, and the shared-memory
wavefronts with the excessive ones (bank conflicts, or for LDGSTS one
wavefront per device-memory piece a warp's copy touches); the TOP (default
20) instructions by stall samples, each with its two largest stall
reasons; and every instruction with excessive shared wavefronts.

Used at stop 43 on the 512-point tc16 column pass (bench/README.md): its
"bank conflicts" were all on its 4-byte LDGSTS copies, two 64-byte pieces
of device memory a warp, none on an LDS or STS. Runs anywhere (no GPU, no
Nsight Compute): fetch the CSV from the GPU machine and run it here.
"""
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
WF = "L1 Wavefronts Shared"
WF_EXCESS = "L1 Wavefronts Shared Excessive"


def kernels(path):
    """(name, header, rows) per kernel section of the CSV, each name once."""
    sections, cur = [], None
    with open(path, newline="") as f:
        for line in f:
            if line.startswith('"Kernel Name"'):
                name = next(csv.reader([line]))[1]
                cur = (name, [])
                sections.append(cur)
            elif cur is not None:
                cur[1].append(line)
    seen = set()
    for name, lines in sections:
        if name in seen:
            continue
        seen.add(name)
        rows = list(csv.reader(lines))
        if not rows:
            continue
        header = rows[0]
        yield name, header, [r for r in rows[1:] if len(r) == len(header)]


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith("@"):  # predicate
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def summarise(name, header, rows, top):
    ix = {k: i for i, k in enumerate(header)}
    for k in ("Source", SAMPLES, EXECUTED):
        if k not in ix:
            sys.exit("ncu-sass-summary: no column %r: not a SASS page" % k)
    stalls = [k for k in header
              if k.startswith("stall_") and "Not Issued" not in k]

    def get(r, k):
        return num(r[ix[k]]) if k in ix else 0.0

    samples = sum(get(r, SAMPLES) for r in rows) or 1.0
    executed = sum(get(r, EXECUTED) for r in rows)
    print("== %s" % name)
    print("stall samples %d, warp instructions executed %.1f M"
          % (samples, executed / 1e6))

    ops = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for r in rows:
        o = ops[opcode(r[ix["Source"]].strip())]
        o[0] += get(r, SAMPLES)
        o[1] += get(r, EXECUTED)
        o[2] += get(r, WF)
        o[3] += get(r, WF_EXCESS)
    print("%-10s %8s %12s %12s %12s" % ("opcode", "samples", "executed",
                                       "shared wf", "excessive"))
    for op, (s, e, w, x) in sorted(ops.items(), key=lambda kv: -kv[1][0]):
        if s / samples < 0.005 and x == 0:
            continue
        print("%-10s %7.1f%% %11.2fM %11.2fM %11.2fM"
              % (op, 100 * s / samples, e / 1e6, w / 1e6, x / 1e6))

    def reasons(r):
        rs = sorted(((get(r, k), k[len("stall_"):]) for k in stalls),
                    reverse=True)
        return ", ".join("%s %d" % (k, v) for v, k in rs[:2] if v > 0)

    print("top %d instructions by stall samples:" % top)
    order = sorted(range(len(rows)), key=lambda i: -get(rows[i], SAMPLES))
    for i in sorted(order[:top]):
        r = rows[i]
        print("  %5d %5.1f%% %10d  %-48s %s"
              % (i, 100 * get(r, SAMPLES) / samples, get(r, EXECUTED),
                 r[ix["Source"]].strip()[:48], reasons(r)))
    excess = [(i, r) for i, r in enumerate(rows) if get(r, WF_EXCESS) > 0]
    if excess:
        print("instructions with excessive shared wavefronts:")
        for i, r in excess:
            print("  %5d %10d executed %10d wavefronts %10d excessive  %s"
                  % (i, get(r, EXECUTED), get(r, WF), get(r, WF_EXCESS),
                     r[ix["Source"]].strip()[:48]))
    print()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    top = int(sys.argv[2]) if len(sys.argv) == 3 else 20
    found = False
    for name, header, rows in kernels(sys.argv[1]):
        found = True
        summarise(name, header, rows, top)
    if not found:
        sys.exit("ncu-sass-summary: no kernel section in %s" % sys.argv[1])


if __name__ == "__main__":
    main()

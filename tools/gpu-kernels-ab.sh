#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-kernels-ab.sh — A/B of several builds of bench/kernels in one call on
# the lent GPU (one GPU, one run: the only comparison bench/README.md trusts).
#
#   sh tools/gpu-kernels-ab.sh NAME=BIN [NAME=BIN ...]
#
# Runs the builds in turn, ROUNDS times (default 2, alternating, so that a
# drift of the GPU's clocks falls on all of them), each with ARGS (default
# "--ours --quick --noerr": tc16 and split16 alone). Every run's progress
# lines go to $OUT/ab.log as they come, prefixed "NAME ROUND", so a call cut
# short by its time limit keeps what it measured. Last, $OUT/ab.txt and
# stdout: per case and algorithm, the mean ms of each build over the rounds
# and its ratio to the first build's (below 1: faster).
set -u
OUT=${OUT:-/tmp/fftd-gpu-out}
ROUNDS=${ROUNDS:-2}
ARGS=${ARGS:---ours --quick --noerr}
mkdir -p "$OUT"
[ $# -ge 1 ] || {
	echo "usage: $0 NAME=BIN [NAME=BIN ...]" >&2
	exit 2
}
nvidia-smi -L >>"$OUT/ab.log" 2>&1
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for nb in "$@"; do
		name=${nb%%=*}
		bin=${nb#*=}
		# eval: ARGS may quote case names ("--only '1D 4096'")
		eval "\"\$bin\" $ARGS" 2>&1 >/dev/null |
		    sed -u "s/^/$name $r /" >>"$OUT/ab.log"
	done
	r=$((r + 1))
done

# "NAME ROUND CASE p N floor F | tc16 MS (E) ... | sp16 MS (E) ..."
awk -v order="$*" '
BEGIN { nb = split(order, o, " "); for (i = 1; i <= nb; i++) sub(/=.*/, "", o[i]) }
/ p [0-9]+ floor / {
	name = $1; i = index($0, " p "); c = substr($0, length($1 $2) + 3, i - length($1 $2) - 3)
	sub(/ +$/, "", c)
	t = $0; sub(/.*\| tc16 /, "", t); split(t, a, " ")
	s = $0; sub(/.*\| sp16 /, "", s); split(s, b, " ")
	if (!(c in seen)) { seen[c] = 1; cases[++nc] = c }
	if (a[1] + 0 > 0) { tc[c, name] += a[1]; ntc[c, name]++ }
	if (b[1] + 0 > 0) { sp[c, name] += b[1]; nsp[c, name]++ }
}
END {
	printf "%-16s %-7s", "case", "alg"
	for (i = 1; i <= nb; i++) printf " %10s", o[i]
	printf "   ratios to %s\n", o[1]
	for (k = 1; k <= nc; k++) {
		c = cases[k]
		for (g = 0; g < 2; g++) {
			printf "%-16s %-7s", c, g ? "split16" : "tc16"
			for (i = 1; i <= nb; i++) {
				n = g ? nsp[c, o[i]] : ntc[c, o[i]]
				m[i] = n ? (g ? sp[c, o[i]] : tc[c, o[i]]) / n : 0
				printf " %10.4f", m[i]
			}
			printf "  "
			for (i = 2; i <= nb; i++)
				printf " %6.3f", (m[1] > 0 ? m[i] / m[1] : 0)
			printf "\n"
		}
	}
}' "$OUT/ab.log" | tee "$OUT/ab.txt"

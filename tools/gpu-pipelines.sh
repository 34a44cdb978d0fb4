#!/bin/sh
# SPDX-License-Identifier: MIT
#
# gpu-pipelines.sh — bench/pipelines (issue 16, item 5) on the lent GPU
# machine, with PyCBC for case (d) from the pieces tools/pycbc-bundle.sh
# packs under gpu-carry/pycbc (git-ignored, at most 24 MiB each, so that
# they can be carried in consecutive calls):
#
#   sh tools/gpu-pipelines.sh receive   (a call carrying some pieces: each
#                                        is copied to $PYCBC_STAGE; once all
#                                        of SHA256SUMS are there and match,
#                                        they are unpacked into $PYCBC_DIR)
#   B=gpu-run sh tools/gpu-pipelines.sh (receive what this call carries,
#                                        then the bench; PIPELINES_ARGS adds
#                                        options, e.g. "--sizes 17")
#
# The bench runs with FFTD_PYCBC_PYTHON=$PY (default /opt/torch/.venv's,
# Python 3.12 with numpy 2.x) and PYTHONPATH=$PYCBC_DIR; without the
# unpacked bundle case (d) is skipped (--no-pycbc) and says so. Table on
# stdout, log and JSON under $OUT.
set -u
B=${B:-gpu-run}
OUT=${OUT:-/tmp/fftd-gpu-out}
PYCBC_STAGE=${PYCBC_STAGE:-/tmp/fftd-pycbc-pieces}
PYCBC_DIR=${PYCBC_DIR:-/tmp/fftd-pycbc}
PY=${FFTD_PYCBC_PYTHON:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT" "$PYCBC_STAGE"

# receive copies the carried pieces to the stage and unpacks a complete set.
receive() {
	if [ -d gpu-carry/pycbc ]; then
		cp gpu-carry/pycbc/* "$PYCBC_STAGE"/ 2>/dev/null
	fi
	[ -f "$PYCBC_STAGE/SHA256SUMS" ] || { echo "pycbc: no pieces yet"; return 1; }
	have=0
	need=$(wc -l <"$PYCBC_STAGE/SHA256SUMS")
	for p in $(cut -d' ' -f3 "$PYCBC_STAGE/SHA256SUMS"); do
		[ -f "$PYCBC_STAGE/$p" ] && have=$((have + 1))
	done
	if [ "$have" -lt "$need" ]; then
		echo "pycbc: $have of $need pieces received"
		return 1
	fi
	if [ -f "$PYCBC_DIR/.complete" ]; then
		echo "pycbc: unpacked in $PYCBC_DIR"
		return 0
	fi
	(cd "$PYCBC_STAGE" && sha256sum -c --quiet SHA256SUMS) || {
		echo "pycbc: pieces do not match SHA256SUMS"
		return 1
	}
	rm -rf "$PYCBC_DIR" && mkdir -p "$PYCBC_DIR"
	cat "$PYCBC_STAGE"/pycbc.tar.xz.* | xz -dc | tar -C "$PYCBC_DIR" -xf - ||
		cat "$PYCBC_STAGE"/pycbc.tar.xz.* | "$PY" -c \
		    "import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode='r|xz').extractall(sys.argv[1])" \
		    "$PYCBC_DIR" || { echo "pycbc: unpacking failed"; return 1; }
	touch "$PYCBC_DIR/.complete"
	echo "pycbc: unpacked into $PYCBC_DIR ($(du -sh "$PYCBC_DIR" | cut -f1))"
}

if [ "${1:-}" = receive ]; then
	receive
	exit $?
fi
receive
pyargs="--no-pycbc"
if [ -f "$PYCBC_DIR/.complete" ] && [ -x "$PY" ]; then
	export FFTD_PYCBC_PYTHON="$PY"
	export PYTHONPATH="$PYCBC_DIR${PYTHONPATH:+:$PYTHONPATH}"
	pyargs=""
else
	echo "pipelines: case (d) skipped: PyCBC not unpacked in $PYCBC_DIR or no $PY"
fi
export LD_LIBRARY_PATH="$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FFTD_BIN="$PWD/$B/fftd"
nvidia-smi -L 2>/dev/null
# shellcheck disable=SC2086
"$B/bench/pipelines" --json "$OUT/pipelines.json" $pyargs ${PIPELINES_ARGS:-} \
    >"$OUT/pipelines.log" 2>&1
rc=$?
cat "$OUT/pipelines.log"
exit $rc

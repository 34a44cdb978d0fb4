#!/bin/sh
# SPDX-License-Identifier: MIT
#
# pycbc-bundle.sh — PyCBC for case (d) of bench/pipelines on the lent GPU
# machine, which has Python 3.12 (/opt/torch/.venv, numpy 2.x, no pycbc) and
# no network. Run here (network needed once):
#
#   sh tools/pycbc-bundle.sh [OUT_DIR]        (default gpu-carry/pycbc)
#
# 1. pip download, for CPython $PYVER (3.12) on manylinux x86_64, binary
#    wheels only, pycbc and everything it needs beyond numpy, at the versions
#    of examples/gw150914/requirements.txt (the set the GW150914 check runs);
# 2. pip install --target of those wheels (--no-deps, same platform);
# 3. prune to what matched_filter needs: the modules a run of
#    bench/pycbc_mf.py's calls imports, recorded with $PROBE_PYTHON (a local
#    Python with the same pycbc: default build/venv-gw/bin/python, made by
#    tests/pycbc/run.sh): top-level packages never imported, their
#    subpackages never imported, tests, __pycache__ and the shared libraries
#    of *.libs that no kept extension needs (readelf NEEDED, transitively)
#    are removed (for LALSuite that keeps lal and lalsimulation, which
#    pycbc imports, and drops the rest);
# 4. tar.xz of the result split into pieces of at most 24 MiB (a call
#    carries at most 64 MiB with the tree: two pieces, or one beside the
#    binaries):
#    OUT_DIR/pycbc.tar.xz.00, .01, ... and OUT_DIR/SHA256SUMS, and a
#    kept-modules list beside. The total size is printed.
#
# On the GPU machine tools/gpu-pipelines.sh takes the pieces (carried one
# per call if need be), checks them, unpacks them into $PYCBC_DIR and runs
# the bench with PYTHONPATH=$PYCBC_DIR. PRUNE=0 skips step 3 (should the
# pruned set miss a module that Python 3.12 imports). PYVER=3.11 builds a bundle this
# machine's Python can import, to test the pruning here.
set -eu
cd "$(dirname "$0")/.."
out=${1:-gpu-carry/pycbc}
pyver=${PYVER:-3.12}
probe=${PROBE_PYTHON:-build/venv-gw/bin/python}
work=${PYCBC_BUNDLE_WORK:-build/pycbc-bundle-$pyver}
req=examples/gw150914/requirements.txt
plat="--platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64"

if [ ! -x "$probe" ]; then
	echo "pycbc-bundle: no $probe (PROBE_PYTHON: a Python with pycbc; sh tests/pycbc/run.sh makes build/venv-gw)" >&2
	exit 2
fi
rm -rf "$work"
mkdir -p "$work/wheels" "$work/site"

# 1. Wheels: pycbc pinned, its dependencies constrained to the tested set.
pycbc_pin=$(grep -E '^pycbc==' "$req")
# shellcheck disable=SC2086
python3 -m pip download -q --dest "$work/wheels" --python-version "$pyver" \
	$plat --only-binary=:all: -c "$req" "$pycbc_pin"
rm -f "$work"/wheels/numpy-*.whl
echo "pycbc-bundle: $(ls "$work/wheels" | wc -l) wheels, $(du -sh "$work/wheels" | cut -f1)"

# 2. Unpack them for the target Python.
# shellcheck disable=SC2086
python3 -m pip install -q --target "$work/site" --python-version "$pyver" \
	$plat --only-binary=:all: --no-deps --no-index "$work"/wheels/*.whl
echo "pycbc-bundle: unpacked $(du -sh "$work/site" | cut -f1)"

# 3. What matched_filter imports, recorded by running its calls.
"$probe" - "$work/modules.txt" <<'EOF'
import sys
from pycbc.fft import backend_support
backend_support.set_backend(["fftw"])
import numpy as np
import pycbc
from pycbc.filter import matched_filter
from pycbc.types import FrequencySeries
h = FrequencySeries(np.ones(4097, dtype=np.complex64), delta_f=0.5)
p = FrequencySeries(np.ones(4097, dtype=np.float32), delta_f=0.5)
abs(matched_filter(h, h, psd=p, low_frequency_cutoff=20.0).numpy()).argmax()
with open(sys.argv[1], "w") as f:
    f.write("\n".join(sorted(sys.modules)) + "\n")
EOF
[ "${PRUNE:-1}" = 0 ] || python3 - "$work/site" "$work/modules.txt" <<'EOF'
"""Prune SITE to the modules listed (see pycbc-bundle.sh, step 3)."""
import os, shutil, subprocess, sys
site, mods = sys.argv[1], set(open(sys.argv[2]).read().split())
tops = {m.split(".")[0] for m in mods}

def dotted(path):
    return os.path.relpath(path, site).replace(os.sep, ".")

for name in os.listdir(site):
    p = os.path.join(site, name)
    if name.endswith((".dist-info", ".libs")) or name == "bin":
        continue
    mod = name.split(".")[0]
    if mod not in tops:
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
for root, dirs, _ in os.walk(site, topdown=True):
    for d in list(dirs):
        p = os.path.join(root, d)
        name = dotted(p)
        is_pkg = os.path.exists(os.path.join(p, "__init__.py"))
        if d == "__pycache__" or (d in ("tests", "test", "testing") and name not in mods) \
                or (is_pkg and root != site and name not in mods
                    and not any(m.startswith(name + ".") for m in mods)):
            shutil.rmtree(p)
            dirs.remove(d)
shutil.rmtree(os.path.join(site, "bin"), ignore_errors=True)

def needed(path):
    try:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [l.split("[")[1].split("]")[0] for l in out.splitlines() if "(NEEDED)" in l]

libs = {}
for name in os.listdir(site):
    if name.endswith(".libs"):
        for f in os.listdir(os.path.join(site, name)):
            libs[f] = os.path.join(site, name, f)
want, todo = set(), []
for root, _, files in os.walk(site):
    if root.endswith(".libs") and os.path.dirname(root) == site:
        continue
    todo += [os.path.join(root, f) for f in files if ".so" in f]
while todo:
    for n in needed(todo.pop()):
        if n in libs and n not in want:
            want.add(n)
            todo.append(libs[n])
for f, p in libs.items():
    if f not in want:
        os.remove(p)
kept = sorted(n for n in os.listdir(site) if not n.endswith(".dist-info"))
print("pycbc-bundle: kept " + " ".join(kept))
EOF
echo "pycbc-bundle: pruned to $(du -sh "$work/site" | cut -f1)"

# 4. Pack and split.
mkdir -p "$out"
rm -f "$out"/pycbc.tar.xz.* "$out/SHA256SUMS"
tar -C "$work/site" -cf - . | xz -T0 -6 | split -b 24M -d - "$out/pycbc.tar.xz."
cp "$work/modules.txt" "$out/modules.txt"
(cd "$out" && sha256sum pycbc.tar.xz.* >SHA256SUMS)
ls -l "$out"
echo "pycbc-bundle: $(ls "$out"/pycbc.tar.xz.* | wc -l) pieces, $(du -cb "$out"/pycbc.tar.xz.* | tail -1 | cut -f1) bytes in all (Python $pyver)"

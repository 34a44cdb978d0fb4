#!/bin/sh
# SPDX-License-Identifier: MIT
#
# python-bundle.sh — prepare here what bench/python.py needs on the lent GPU
# machine beyond its Python (/opt/torch/.venv: Python 3.12, numpy 2.x, CuPy;
# no network there, and cffi may be missing): gpu-carry/py/site/ holds cffi
# and pycparser (which cffi's cdef parser needs) unpacked from their cp312
# manylinux wheels, at the versions of examples/gw150914/requirements.txt.
# tools/gpu-python.sh puts it on PYTHONPATH only when that Python has no
# cffi of its own. The fftd package itself travels as python/ (tracked), and
# libfftd.so as gpu-run/libfftd.so (make gpu-bundle).
#
#   sh tools/python-bundle.sh          (then: make gpu-bundle; carry gpu-run, gpu-carry)
set -eu
cd "$(dirname "$0")/.."
dest=gpu-carry/py
pip=${PIP:-python3 -m pip}
rm -rf "$dest/site" "$dest/wheels"
mkdir -p "$dest/site" "$dest/wheels"
# shellcheck disable=SC2086
$pip download -q --no-deps --python-version 3.12 --only-binary=:all: \
	--platform manylinux2014_x86_64 -d "$dest/wheels" cffi==2.1.1 pycparser==3.12
for w in "$dest"/wheels/*.whl; do
	python3 -m zipfile -e "$w" "$dest/site"
done
rm -rf "$dest/wheels"
set -- "$dest"/site/_cffi_backend.cpython-312-*.so
[ -f "$1" ] || {
	echo "python-bundle: no cp312 _cffi_backend in $dest/site" >&2
	exit 1
}
du -sh "$dest"

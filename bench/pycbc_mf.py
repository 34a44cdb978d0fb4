#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pycbc_mf.py — case (d) of bench/pipelines: PyCBC's own matched filter.

bench/pipelines writes one size's inputs into a folder and runs this script
there under ``taskset -c 0`` (one CPU core). For each template it calls
``pycbc.filter.matched_filter`` (FFTW backend, one thread) on the same data,
PSD and templates as fftd's bank, as FrequencySeries of complex64 / float32
(PyCBC's scaled units, as its single-precision pipelines use), and finds the
peak of abs(snr) over the same window [t_begin, t_end): what a PyCBC user
runs per template. The whole set of templates is timed per repetition, after
one untimed call (FFTW planning); building the FrequencySeries is not timed.

Inputs in --dir: meta.txt (``key value`` lines: n, delta_f, kmin, kmax,
t_begin, t_end, f_lower, count), data.bin (n/2+1 complex64), psd.bin (n/2+1
float32), bank.bin (count x (n/2+1) complex64; every template is zero at
Nyquist, so PyCBC's kmax of n/2 covers the same bins as fftd's n/2+1).
Output: result.txt in --dir (``version``, ``python``, ``backend``,
``templates``, one ``seconds`` line per repetition, one ``peak INDEX RHO
SAMPLE`` line per template), and a summary line on stdout.

    taskset -c 0 python bench/pycbc_mf.py --dir DIR [--reps 3]
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def read_meta(path: Path) -> dict:
    """meta.txt -> {key: int or float}."""
    meta = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        key, value = line.split()
        meta[key] = float(value) if key in ("delta_f", "f_lower") else int(value)
    return meta


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    import pycbc
    from pycbc.fft import backend_support
    from pycbc.filter import matched_filter
    from pycbc.types import FrequencySeries

    backend_support.set_backend(["fftw"])
    backend = backend_support.get_backend().__name__
    if not backend.endswith("fftw"):
        print(f"pycbc_mf: PyCBC's FFTW backend is not available (got {backend})",
              file=sys.stderr)
        return 2

    m = read_meta(args.dir / "meta.txt")
    n, nb, df = m["n"], m["n"] // 2 + 1, m["delta_f"]
    t0, t1, count = m["t_begin"], m["t_end"], m["count"]
    data = np.fromfile(args.dir / "data.bin", dtype=np.complex64)
    psd = np.fromfile(args.dir / "psd.bin", dtype=np.float32)
    bank = np.fromfile(args.dir / "bank.bin", dtype=np.complex64)
    if data.size != nb or psd.size != nb or bank.size != count * nb:
        print("pycbc_mf: input sizes do not match meta.txt", file=sys.stderr)
        return 2
    bank = bank.reshape(count, nb)
    stilde = FrequencySeries(data, delta_f=df)
    psd_fs = FrequencySeries(psd, delta_f=df)
    hs = [FrequencySeries(bank[i].copy(), delta_f=df) for i in range(count)]
    f_lower = m["f_lower"]

    matched_filter(hs[0], stilde, psd=psd_fs, low_frequency_cutoff=f_lower)
    seconds, peaks = [], []
    for _ in range(args.reps):
        start = time.perf_counter()
        peaks = []
        for h in hs:
            snr = matched_filter(h, stilde, psd=psd_fs, low_frequency_cutoff=f_lower)
            a = np.abs(snr.numpy()[t0:t1])
            j = int(np.argmax(a))
            peaks.append((float(a[j]), t0 + j))
        seconds.append(time.perf_counter() - start)

    with open(args.dir / "result.txt", "w") as f:
        f.write(f"version {pycbc.__version__}\n")
        f.write(f"python {sys.version.split()[0]}\n")
        f.write(f"backend {backend}\n")
        f.write(f"templates {count}\n")
        for s in seconds:
            f.write(f"seconds {s!r}\n")
        for i, (rho, t) in enumerate(peaks):
            f.write(f"peak {i} {rho!r} {t}\n")
    best = sorted(seconds)[len(seconds) // 2]
    print(f"pycbc_mf: N={n} {count} templates, median {best:.3f} s: "
          f"{count / best:.1f} templates/s (PyCBC {pycbc.__version__}, {backend})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fftw backend's matched-filter bank against PyCBC's own matched_filter (issue 16).

On the GW150914 strain of both detectors (GWOSC), conditioned by
``examples/gw150914/pycbc_reference.py prepare``, and a small IMRPhenomD bank from
``examples/gw150914/make_bank.py`` (``--count`` templates, 16 by default), it runs

* PyCBC: ``pycbc_reference.py filter`` (``pycbc.filter.matched_filter``, FFTW backend,
  float64, one thread), which writes per template the peak rho over the valid window, its
  sample, sigma, the complex SNR there and the rho series of every template;
* fftd: ``tests/pycbc/mf_driver`` (``fftd__fftw_mf_bank`` linked directly), in f64 and in
  f32 (data and templates scaled by DYN_RANGE_FAC = 2^69, the PSD by its square),

and checks, per detector, precision and template:

* peak rho within ``--tol`` (1e-3) relative of PyCBC's, at the same sample;
* sigma within ``--tol`` relative; z/sigma at the peak (PyCBC's complex ``peak_snr``)
  within ``--tol`` of its modulus;
* the whole rho series within ``--tol`` of the template's peak (PyCBC's series are
  stored as float32: about 6e-8 of it is storage rounding);
* the clustered triggers (``--threshold``, ``--cluster`` samples from valid_start) against
  the same clustering done here on PyCBC's series: the same windows (but for a window whose
  maximum is within ``--tol`` of the threshold); the same sample or one whose PyCBC rho is
  within ``--tol`` of the window's maximum (a near tie); rho within ``--tol``.

It prints a table per detector and precision (the largest relative differences, the
peak samples, the times) and exits 1 if a check fails, 2 if it could not run.
Needs a Python with examples/gw150914/requirements.txt (tests/pycbc/run.sh makes a
venv) and the GWOSC files in ``--data-dir``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent.parent / "examples" / "gw150914"


def run(cmd: list[str]) -> str:
    """Run a command, echo it, return its stdout; raise on failure."""
    print("+", " ".join(str(c) for c in cmd), flush=True)
    res = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {res.returncode}")
    return res.stdout


def clustered(rho: np.ndarray, first: int, cluster: int, threshold: float) -> dict:
    """{window: (sample, rho)} of the windows whose loudest rho is above threshold.

    rho[i] is sample first + i; windows are [first + w cluster, first + (w+1) cluster),
    the loudest sample of a window its first on ties (numpy's argmax), as mf.h says.
    """
    out = {}
    for w in range((len(rho) + cluster - 1) // cluster):
        seg = rho[w * cluster:(w + 1) * cluster]
        i = int(np.argmax(seg))
        if threshold > 0 and seg[i] > threshold:
            out[w] = (first + w * cluster + i, float(seg[i]))
    return out


def window_max(rho: np.ndarray, w: int, cluster: int) -> float:
    """The loudest rho of window w of one series."""
    return float(np.max(rho[w * cluster:(w + 1) * cluster]))


def check_detector(det: str, args: argparse.Namespace, bank: Path, py: str) -> dict:
    """Run PyCBC and the driver on one detector; compare; return the figures."""
    import h5py

    work = args.work
    inp = work / f"input-{det}.h5"
    k = args.count
    ref = work / f"pycbc-{det}.h5"
    t0 = time.perf_counter()
    run([py, EXAMPLE / "pycbc_reference.py", "filter", "--input", inp, "--bank", bank,
         "--limit", str(k), "--series", ",".join(str(i) for i in range(k)),
         "--out", ref, "--json", work / f"pycbc-{det}.json"])
    t_pycbc = time.perf_counter() - t0
    out = work / f"fftd-{det}.json"
    t0 = time.perf_counter()
    run([args.driver, "--input", inp, "--bank", bank, "--count", str(k),
         "--threshold", repr(args.threshold), "--cluster", str(args.cluster),
         "--json", out, "--series-out", work / f"fftd-{det}"])
    t_driver = time.perf_counter() - t0
    c = json.loads(out.read_text())

    with h5py.File(ref, "r") as f:
        p_rho = f["peak_rho"][:]
        p_idx = f["peak_index"][:]
        p_sig = f["sigma"][:]
        p_snr = f["peak_snr"][:]
        first = int(f["rho_series"].attrs["first_index"])
        p_series = np.stack([f["rho_series"][str(i)][:].astype(np.float64) for i in range(k)])
        info = json.loads((work / f"pycbc-{det}.json").read_text())
    if len(p_rho) != k or c["count"] != k or c["t_begin"] != first:
        raise RuntimeError(f"{det}: PyCBC has {len(p_rho)} templates from {first}, "
                           f"fftd {c['count']} from {c['t_begin']}")
    width = c["t_end"] - c["t_begin"]
    failures = []
    rows = []
    for r in c["runs"]:
        prec = r["precision"]
        peaks = r["peaks"]
        rho = np.array([p["rho"] for p in peaks])
        idx = np.array([p["t"] for p in peaks])
        sig = np.array([p["sigma"] for p in peaks])
        snr = np.array([p["z_re"] + 1j * p["z_im"] for p in peaks]) / sig
        d_rho = np.abs(rho - p_rho) / p_rho
        d_sig = np.abs(sig - p_sig) / p_sig
        d_snr = np.abs(snr - p_snr) / np.abs(p_snr)
        same = idx == p_idx
        dt = np.float32 if prec == "f32" else np.float64
        series = np.fromfile(work / f"fftd-{det}.{prec}", dtype=dt).astype(np.float64)
        series = series.reshape(k, width)
        d_series = np.max(np.abs(series - p_series), axis=1) / p_rho
        # triggers: fftd's against the same clustering of PyCBC's series
        trig_ok = True
        mine = {}
        for j, t, rr, _, _ in r["triggers"]:
            mine[(j, (t - first) // args.cluster)] = (t, rr)
        theirs = {}
        for j in range(k):
            for w, v in clustered(p_series[j], first, args.cluster, args.threshold).items():
                theirs[(j, w)] = v
        # a window whose PyCBC maximum is within tol of the threshold may go either way
        differ = [key for key in set(mine) ^ set(theirs)
                  if abs(window_max(p_series[key[0]], key[1], args.cluster) - args.threshold)
                  > args.tol * args.threshold]
        if differ or r["ntotal"] != len(mine):
            trig_ok = False
            failures.append(f"{det} {prec}: triggers differ in (template, window) {sorted(differ)}"
                            f" (fftd {len(mine)}, ntotal {r['ntotal']}; PyCBC {len(theirs)})")
        for key, (t, rr) in mine.items():
            if key not in theirs:
                continue
            tp, rp = theirs[key]
            near = p_series[key[0]][t - first] >= rp - args.tol * rp
            if not (t == tp or near) or abs(rr - rp) > args.tol * rp:
                trig_ok = False
                failures.append(f"{det} {prec}: trigger of template {key[0]} window {key[1]}: "
                                f"sample {t} rho {rr:.6f}, PyCBC {tp} {rp:.6f}")
        for name, d in (("peak rho", d_rho), ("sigma", d_sig), ("peak SNR", d_snr),
                        ("series", d_series)):
            bad = np.nonzero(~(d <= args.tol))[0]
            if len(bad):
                failures.append(f"{det} {prec}: {name} differs by {d.max():.3g} "
                                f"(templates {bad.tolist()})")
        if not same.all():
            failures.append(f"{det} {prec}: peak samples differ for templates "
                            f"{np.nonzero(~same)[0].tolist()}: {idx[~same].tolist()} "
                            f"against PyCBC's {p_idx[~same].tolist()}")
        loud = int(np.argmax(p_rho))
        rows.append({
            "detector": det, "precision": prec, "templates": k,
            "max_rel_peak_rho": float(d_rho.max()), "max_rel_sigma": float(d_sig.max()),
            "max_rel_peak_snr": float(d_snr.max()), "max_series_over_peak": float(d_series.max()),
            "same_peak_sample": int(same.sum()), "triggers": len(mine),
            "triggers_pycbc": len(theirs), "triggers_ok": trig_ok,
            "loudest": loud, "loudest_rho": float(rho[loud]), "loudest_rho_pycbc": float(p_rho[loud]),
            "loudest_sample": int(idx[loud]), "loudest_sample_pycbc": int(p_idx[loud]),
            "fftd_bank_wall_s": r["wall_s"], "fftd_bank_cpu_s": r["cpu_s"],
            "pycbc_filter_wall_s": info["filter_seconds"],
            "pycbc_filter_cpu_s": info["filter_cpu_seconds"],
        })
    print(f"\n{det}: {k} templates, samples [{c['t_begin']}, {c['t_end']}), bins "
          f"[{c['kmin']}, {c['kmax']}), N = {c['n']}; PyCBC run {t_pycbc:.1f} s, "
          f"driver run {t_driver:.1f} s (both: process start, I/O, series included)")
    print("prec  max|drho|/rho  max|dsig|/sig  max|dsnr|/|snr|  series/peak  same t  "
          "triggers  loudest (rho, sample) fftd / PyCBC              bank s (CPU)  PyCBC s (CPU)")
    for w in rows:
        print(f"{w['precision']}   {w['max_rel_peak_rho']:13.3g}  {w['max_rel_sigma']:13.3g}  "
              f"{w['max_rel_peak_snr']:15.3g}  {w['max_series_over_peak']:11.3g}  "
              f"{w['same_peak_sample']:3d}/{k:<3d} {w['triggers']:4d}/{w['triggers_pycbc']:<4d} "
              f"#{w['loudest']} {w['loudest_rho']:.6f} @{w['loudest_sample']} / "
              f"{w['loudest_rho_pycbc']:.6f} @{w['loudest_sample_pycbc']}   "
              f"{w['fftd_bank_wall_s']:.3f} ({w['fftd_bank_cpu_s']:.3f})  "
              f"{w['pycbc_filter_wall_s']:.3f} ({w['pycbc_filter_cpu_s']:.3f})")
    return {"rows": rows, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--driver", type=Path, default=Path("build/tests/pycbc/mf_driver"))
    ap.add_argument("--work", type=Path, default=Path("build/pycbc"),
                    help="folder for the inputs, the bank and the results")
    ap.add_argument("--data-dir", type=Path, default=Path("../shared/data/gw150914"),
                    help="the GWOSC files of GW150914")
    ap.add_argument("--detectors", nargs="+", default=["H1", "L1"])
    ap.add_argument("--count", type=int, default=16, help="templates")
    ap.add_argument("--threshold", type=float, default=4.5)
    ap.add_argument("--cluster", type=int, default=512, help="samples")
    ap.add_argument("--tol", type=float, default=1e-3, help="relative bound")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)
    py = sys.executable
    t_all = time.perf_counter()
    try:
        args.work.mkdir(parents=True, exist_ok=True)
        missing = [d for d in args.detectors if not (args.work / f"input-{d}.h5").exists()]
        if missing:
            run([py, EXAMPLE / "pycbc_reference.py", "prepare", "--data-dir", args.data_dir,
                 "--out-dir", args.work, "--detectors", *missing])
        bank = Path(run([py, EXAMPLE / "make_bank.py", "--size", str(args.count),
                         "--out-dir", args.work / "bank"]).strip().splitlines()[-1])
        results = [check_detector(d, args, bank, py) for d in args.detectors]
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        print(f"check_mf: could not run: {e}", file=sys.stderr)
        return 2
    failures = [f for r in results for f in r["failures"]]
    total = time.perf_counter() - t_all
    if args.json:
        args.json.write_text(json.dumps({"rows": [w for r in results for w in r["rows"]],
                                         "failures": failures, "seconds": total}, indent=2) + "\n")
    for f in failures:
        print("FAIL", f)
    print(f"\ncheck_mf: {'FAILED' if failures else 'passed'} "
          f"({len(failures)} failure(s), tol {args.tol:g}, {total:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

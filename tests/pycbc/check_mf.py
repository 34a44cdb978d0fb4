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
  f32 (data and templates scaled by DYN_RANGE_FAC = 2^69, the PSD by its square);
* the search: ``build/gw150914-search`` (examples/gw150914/search.c) through a daemon
  spawned here (fftw backend, a socket in a fresh temporary directory, stopped with
  SIGTERM and required to exit 0), both detectors in one run per precision, the bank
  resident and searched in slices of ``--slice`` (5) templates through the public API
  (fftd_array_*, fftd_mf_bank), with the same scaling in f32,

and checks, per detector, program, precision and template:

* peak rho within ``--tol`` (1e-3) relative of PyCBC's, at the same sample;
* sigma within ``--tol`` relative; z/sigma at the peak (PyCBC's complex ``peak_snr``)
  within ``--tol`` of its modulus;
* the whole rho series within ``--tol`` of the template's peak (PyCBC's series are
  stored as float32: about 6e-8 of it is storage rounding): every template's for the
  driver, the loudest template's for the search (its ``search_<det>_rho.dat``, 7 digits);
* the loudest template the same as PyCBC's;
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
import shutil
import signal
import subprocess
import sys
import tempfile
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


def load_reference(work: Path, det: str, k: int) -> dict:
    """PyCBC's results for one detector (pycbc_reference.py filter's file)."""
    import h5py

    with h5py.File(work / f"pycbc-{det}.h5", "r") as f:
        ref = {"rho": f["peak_rho"][:], "idx": f["peak_index"][:], "sig": f["sigma"][:],
               "snr": f["peak_snr"][:], "first": int(f["rho_series"].attrs["first_index"]),
               "series": np.stack([f["rho_series"][str(i)][:].astype(np.float64)
                                   for i in range(k)])}
    ref["info"] = json.loads((work / f"pycbc-{det}.json").read_text())
    return ref


def compare_run(det: str, who: str, prec: str, ref: dict, args: argparse.Namespace,
                peaks: dict, triggers: list, ntotal: int, series: dict) -> tuple[dict, list]:
    """Compare one fftd run with PyCBC; return (figures, failures).

    peaks: arrays rho, t, sigma, z_re, z_im over the templates; triggers: [j, t, rho, ...]
    with j an index into the bank; series: {template: rho over [first, first + width)}.
    """
    k = len(ref["rho"])
    first = ref["first"]
    p_rho, p_idx, p_sig, p_snr, p_series = (ref["rho"], ref["idx"], ref["sig"], ref["snr"],
                                            ref["series"])
    failures = []
    rho = np.asarray(peaks["rho"], dtype=np.float64)
    idx = np.asarray(peaks["t"])
    sig = np.asarray(peaks["sigma"], dtype=np.float64)
    snr = (np.asarray(peaks["z_re"]) + 1j * np.asarray(peaks["z_im"])) / sig
    if len(rho) != k:
        return {}, [f"{det} {who} {prec}: {len(rho)} peaks, PyCBC has {k}"]
    d_rho = np.abs(rho - p_rho) / p_rho
    d_sig = np.abs(sig - p_sig) / p_sig
    d_snr = np.abs(snr - p_snr) / np.abs(p_snr)
    same = idx == p_idx
    d_series = np.zeros(k)
    for j, s in series.items():
        d_series[j] = np.max(np.abs(s - p_series[j])) / p_rho[j]
    # triggers: fftd's against the same clustering of PyCBC's series
    trig_ok = True
    mine = {}
    for j, t, rr, *_ in triggers:
        mine[(j, (t - first) // args.cluster)] = (t, rr)
    theirs = {}
    for j in range(k):
        for w, v in clustered(p_series[j], first, args.cluster, args.threshold).items():
            theirs[(j, w)] = v
    # a window whose PyCBC maximum is within tol of the threshold may go either way
    differ = [key for key in set(mine) ^ set(theirs)
              if abs(window_max(p_series[key[0]], key[1], args.cluster) - args.threshold)
              > args.tol * args.threshold]
    if differ or ntotal != len(mine):
        trig_ok = False
        failures.append(f"{det} {who} {prec}: triggers differ in (template, window) "
                        f"{sorted(differ)} (fftd {len(mine)}, ntotal {ntotal}; "
                        f"PyCBC {len(theirs)})")
    for key, (t, rr) in mine.items():
        if key not in theirs:
            continue
        tp, rp = theirs[key]
        near = p_series[key[0]][t - first] >= rp - args.tol * rp
        if not (t == tp or near) or abs(rr - rp) > args.tol * rp:
            trig_ok = False
            failures.append(f"{det} {who} {prec}: trigger of template {key[0]} window "
                            f"{key[1]}: sample {t} rho {rr:.6f}, PyCBC {tp} {rp:.6f}")
    for name, d in (("peak rho", d_rho), ("sigma", d_sig), ("peak SNR", d_snr),
                    ("series", d_series)):
        bad = np.nonzero(~(d <= args.tol))[0]
        if len(bad):
            failures.append(f"{det} {who} {prec}: {name} differs by {d.max():.3g} "
                            f"(templates {bad.tolist()})")
    if not same.all():
        failures.append(f"{det} {who} {prec}: peak samples differ for templates "
                        f"{np.nonzero(~same)[0].tolist()}: {idx[~same].tolist()} "
                        f"against PyCBC's {p_idx[~same].tolist()}")
    loud = int(np.argmax(p_rho))
    if int(np.argmax(rho)) != loud:
        failures.append(f"{det} {who} {prec}: loudest template #{int(np.argmax(rho))}, "
                        f"PyCBC's #{loud}")
    row = {
        "detector": det, "program": who, "precision": prec, "templates": k,
        "max_rel_peak_rho": float(d_rho.max()), "max_rel_sigma": float(d_sig.max()),
        "max_rel_peak_snr": float(d_snr.max()), "max_series_over_peak": float(d_series.max()),
        "series_compared": len(series),
        "same_peak_sample": int(same.sum()), "triggers": len(mine),
        "triggers_pycbc": len(theirs), "triggers_ok": trig_ok,
        "loudest": loud, "loudest_rho": float(rho[loud]), "loudest_rho_pycbc": float(p_rho[loud]),
        "loudest_sample": int(idx[loud]), "loudest_sample_pycbc": int(p_idx[loud]),
        "pycbc_filter_wall_s": ref["info"]["filter_seconds"],
        "pycbc_filter_cpu_s": ref["info"]["filter_cpu_seconds"],
    }
    return row, failures


def print_rows(rows: list, k: int) -> None:
    """The table of one detector's comparisons."""
    print("program  prec  max|drho|/rho  max|dsig|/sig  max|dsnr|/|snr|  series/peak  same t  "
          "triggers  loudest (rho, sample) fftd / PyCBC              fftd s     PyCBC s (CPU)")
    for w in rows:
        print(f"{w['program']:7s}  {w['precision']}   {w['max_rel_peak_rho']:13.3g}  "
              f"{w['max_rel_sigma']:13.3g}  "
              f"{w['max_rel_peak_snr']:15.3g}  {w['max_series_over_peak']:11.3g}  "
              f"{w['same_peak_sample']:3d}/{k:<3d} {w['triggers']:4d}/{w['triggers_pycbc']:<4d} "
              f"#{w['loudest']} {w['loudest_rho']:.6f} @{w['loudest_sample']} / "
              f"{w['loudest_rho_pycbc']:.6f} @{w['loudest_sample_pycbc']}   "
              f"{w['fftd_bank_wall_s']:.3f}  "
              f"{w['pycbc_filter_wall_s']:.3f} ({w['pycbc_filter_cpu_s']:.3f})")


def check_detector(det: str, args: argparse.Namespace, bank: Path, py: str) -> dict:
    """Run PyCBC and the driver on one detector; compare; return the figures."""
    work = args.work
    inp = work / f"input-{det}.h5"
    k = args.count
    t0 = time.perf_counter()
    run([py, EXAMPLE / "pycbc_reference.py", "filter", "--input", inp, "--bank", bank,
         "--limit", str(k), "--series", ",".join(str(i) for i in range(k)),
         "--out", work / f"pycbc-{det}.h5", "--json", work / f"pycbc-{det}.json"])
    t_pycbc = time.perf_counter() - t0
    out = work / f"fftd-{det}.json"
    t0 = time.perf_counter()
    run([args.driver, "--input", inp, "--bank", bank, "--count", str(k),
         "--threshold", repr(args.threshold), "--cluster", str(args.cluster),
         "--json", out, "--series-out", work / f"fftd-{det}"])
    t_driver = time.perf_counter() - t0
    c = json.loads(out.read_text())
    ref = load_reference(work, det, k)
    if len(ref["rho"]) != k or c["count"] != k or c["t_begin"] != ref["first"]:
        raise RuntimeError(f"{det}: PyCBC has {len(ref['rho'])} templates from "
                           f"{ref['first']}, fftd {c['count']} from {c['t_begin']}")
    width = c["t_end"] - c["t_begin"]
    failures = []
    rows = []
    for r in c["runs"]:
        prec = r["precision"]
        peaks = {key: [p[key] for p in r["peaks"]] for key in ("rho", "t", "sigma", "z_re", "z_im")}
        dt = np.float32 if prec == "f32" else np.float64
        series = np.fromfile(work / f"fftd-{det}.{prec}", dtype=dt).astype(np.float64)
        series = series.reshape(k, width)
        row, fail = compare_run(det, "driver", prec, ref, args, peaks, r["triggers"],
                                r["ntotal"], dict(enumerate(series)))
        row.update({"fftd_bank_wall_s": r["wall_s"], "fftd_bank_cpu_s": r["cpu_s"]})
        rows.append(row)
        failures += fail
    print(f"\n{det}: {k} templates, samples [{c['t_begin']}, {c['t_end']}), bins "
          f"[{c['kmin']}, {c['kmax']}), N = {c['n']}; PyCBC run {t_pycbc:.1f} s, "
          f"driver run {t_driver:.1f} s (both: process start, I/O, series included)")
    print_rows(rows, k)
    return {"rows": rows, "failures": failures}


class Daemon:
    """A private fftd (fftw backend) on a socket in a fresh temporary directory."""

    def __init__(self, fftd: Path, fftctl: Path, log: Path):
        self.tmp = tempfile.mkdtemp(prefix="fftd-pycbc.")
        self.url = f"ipc://{self.tmp}/fftd.sock"
        self.fftctl = fftctl
        self.log = open(log, "w")
        print(f"+ {fftd} --listen {self.url} --backend fftw (log {log})", flush=True)
        self.proc = subprocess.Popen([str(fftd), "--listen", self.url, "--backend", "fftw",
                                      "--log-level", "info"], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        for _ in range(300):
            if self.proc.poll() is not None:
                raise RuntimeError(f"fftd exited {self.proc.returncode} at startup ({log})")
            ping = subprocess.run([str(fftctl), "--url", self.url, "--timeout", "1000", "ping",
                                   "-c", "1"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            if ping.returncode == 0:
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"fftd did not answer within 30 s ({log})")

    def stop(self) -> int:
        """SIGTERM, wait (10 s at most, then SIGKILL); the exit status (-9: killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.proc.returncode


def check_search(args: argparse.Namespace, bank: Path) -> dict:
    """Run examples/gw150914's search through a spawned daemon; compare with PyCBC.

    Both detectors in one run per precision, the bank in slices of --slice templates
    (so that the slicing and the trigger indices across slices are exercised); every
    template's peak and the loudest template's series against PyCBC's.
    """
    work = args.work
    k = args.count
    dets = args.detectors
    refs = {d: load_reference(work, d, k) for d in dets}
    daemon = Daemon(args.fftd, args.fftctl, work / "fftd-search.log")
    rows, failures, runs = [], [], {}
    try:
        for prec in ("f64", "f32"):
            out = work / f"search-{prec}.json"
            cmd = [args.search, "--url", daemon.url, "--bank", bank, "--count", str(k),
                   "--slice", str(args.slice), "--precision", prec,
                   "--threshold", repr(args.threshold), "--cluster", str(args.cluster),
                   "--out", out, "--plot-dir", work / f"search-{prec}", "--no-plot"]
            for d in dets:
                cmd += ["--input", work / f"input-{d}.h5"]
            t0 = time.perf_counter()
            print(run(cmd), end="")
            runs[prec] = (json.loads(out.read_text()), time.perf_counter() - t0)
    finally:
        st = daemon.stop()
    if st != 0:
        failures.append(f"fftd exited {st} after SIGTERM (log {work / 'fftd-search.log'})")
    for d in dets:
        ref = refs[d]
        drows = []
        for prec, (c, t_run) in runs.items():
            r = next((x for x in c["detectors"] if x["detector"] == d), None)
            if r is None:
                raise KeyError(f"the search's results have no {d}")
            if r["t_begin"] != ref["first"]:
                failures.append(f"{d} search {prec}: window from {r['t_begin']}, PyCBC's "
                                f"from {ref['first']}")
                continue
            j = r["loudest"]["template"]
            raw = np.loadtxt(r["series_file"], comments="#")
            row, fail = compare_run(d, "search", prec, ref, args, r["peaks"], r["triggers"],
                                    r["triggers_found"], {j: raw[:, 1]})
            row.update({"fftd_bank_wall_s": r["wall_s"], "templates_per_s": r["templates_per_s"],
                        "requests": r["requests"], "search_run_s": t_run})
            drows.append(row)
            failures += fail
        print(f"\n{d}: gw150914-search through fftd (fftw backend), {k} templates in slices "
              f"of {args.slice}; series: the loudest template's")
        print_rows(drows, k)
        rows += drows
    return {"rows": rows, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--driver", type=Path, default=Path("build/tests/pycbc/mf_driver"))
    ap.add_argument("--search", default="build/gw150914-search",
                    help="examples/gw150914's search, run against a spawned daemon "
                         "(empty: not checked)")
    ap.add_argument("--fftd", type=Path, default=Path("build/fftd"))
    ap.add_argument("--fftctl", type=Path, default=Path("build/fftctl"))
    ap.add_argument("--slice", type=int, default=5, help="templates per search request")
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
        if args.search:
            results.append(check_search(args, bank))
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

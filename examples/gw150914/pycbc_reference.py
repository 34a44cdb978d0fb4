#!/usr/bin/env python3
"""PyCBC reference for the GW150914 template-bank search (issue 16, item 4).

Two subcommands:

``prepare``  GWOSC strain -> one *search input* file per detector (format below),
             with PyCBC's usual conditioning (steps listed under "prepare").
``filter``   search input + bank (from ``make_bank.py``) -> per-template peak SNR,
             computed with PyCBC's own ``pycbc.filter.matched_filter`` on the FFTW
             backend. This is what the C search's test compares with.

Search input format (HDF5, one file per detector)
-------------------------------------------------
N samples at ``sample_rate``, F = N/2 + 1 frequency bins, delta_f = sample_rate / N.

* ``data`` [N] float64 -- the conditioned strain time series (dimensionless),
  sample j at GPS ``gps_start + j / sample_rate``. This is what is filtered.
* ``data_fft`` [F] complex128 -- D(f_k) = delta_t * rfft(data)[k]
  (PyCBC's ``to_frequencyseries``; FFTW forward sign, exp(-2 pi i jk/N)), strain/Hz.
  Redundant with ``data``; stored so a C search can skip its own forward FFT.
* ``psd`` [F] float64 -- one-sided noise PSD S(f_k), strain^2/Hz, the same
  bins. Only bins kmin <= k < kmax are used; the values outside (below f_lower,
  at DC and Nyquist) are what the inverse-spectrum truncation left, finite, unused.
* attributes: ``sample_rate`` (Hz), ``delta_t`` (s), ``delta_f`` (Hz), ``n_time``
  (N), ``gps_start`` (s), ``f_lower`` (Hz; the filter's low-frequency cutoff),
  ``kmin``, ``kmax`` (PyCBC's ``get_cutoff_indices(f_lower, None, delta_f, N)``:
  kmin = int(f_lower/delta_f), kmax = int((N+1)/2), i.e. bins [kmin, kmax), Nyquist
  excluded), ``valid_start``, ``valid_end`` (sample indices: peaks are searched in
  [valid_start, valid_end) only, where neither the filter's wrap-around nor the
  conditioning transients reach), ``detector``, ``source`` (input file),
  ``steps`` (JSON: the conditioning steps and their parameters).

What ``filter`` computes, per template h_k (PyCBC's ``matched_filter_core``):

    z_k(t_j) = 4 delta_f * IFFT_N[ q ](j),   q[k] = D(f_k) conj(h_k(f_k)) / S(f_k)
                                             for kmin <= k < kmax, 0 elsewhere
                                             (negative frequencies 0: complex SNR)
    sigma_k^2 = 4 delta_f * sum_{kmin<=k<kmax} |h_k(f_k)|^2 / S(f_k)
    rho_k(t_j) = |z_k(t_j)| / sigma_k

IFFT_N is the unnormalised backward complex FFT of length N (FFTW_BACKWARD,
exp(+2 pi i jk/N)). The peak is the largest rho_k over [valid_start, valid_end);
its GPS time is gps_start + j/sample_rate, the time at which the template's t = 0
(its merger) lines up with the data.

Precision: ``--precision double`` (default) runs PyCBC in float64, the templates
promoted exactly from the bank's complex64. ``single`` runs it in float32 and first
multiplies data and templates by ``pycbc.DYN_RANGE_FAC`` = 2^69 and the PSD by its
square, as PyCBC's own pipelines do: in float32 the raw product D conj(h) ~ 1e-42
falls below the smallest normal number and the run gives NaN. rho and sigma do not
change under that scaling. A float32 C search needs the same (or an equivalent).

Results (HDF5, ``--out``): ``peak_rho`` [K] float64, ``peak_index`` [K] int64,
``peak_gps`` [K] float64, ``peak_snr`` [K] complex128 (z/sigma at the peak),
``sigma`` [K] float64 (strain/Hz-normalised sigma_k for a 1 Mpc template), the
bank's ``mass1``, ``mass2``, ``spin1z``, ``spin2z``; optional ``rho_series/<k>``
[valid_end - valid_start] float32 for the templates named by ``--series`` (and the
loudest); attributes naming the inputs, precision, backend and timing. A JSON
summary (``--json``) gives the loudest template and the rate.

Usage
-----
    python pycbc_reference.py prepare --data-dir /work/shared/data/gw150914 --out-dir build/ref
    python pycbc_reference.py filter --input build/ref/input-H1.h5 --bank BANK.h5 \\
        --out build/ref/result-H1.h5 --json build/ref/result-H1.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

# one core: set before numpy/FFTW load their thread pools
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

GWOSC_FILES = {
    "H1": "H-H1_LOSC_4_V2-1126259446-32.hdf5",
    "L1": "L-L1_LOSC_4_V2-1126259446-32.hdf5",
}


def use_fftw() -> str:
    """Select PyCBC's FFTW backend; return its name."""
    from pycbc.fft import backend_support

    backend_support.set_backend(["fftw"])
    name = backend_support.get_backend().__name__
    if not name.endswith("fftw"):
        raise RuntimeError(f"PyCBC FFTW backend not available (got {name})")
    return name


# --------------------------------------------------------------------------- prepare

def read_gwosc(path: Path):
    """GWOSC strain file -> pycbc TimeSeries (float64) with its GPS epoch."""
    import h5py
    from pycbc.types import TimeSeries

    with h5py.File(path, "r") as f:
        strain = f["strain/Strain"][:].astype(np.float64)
        dt = float(f["strain/Strain"].attrs["Xspacing"])
        gps = float(f["meta/GPSstart"][()])
    return TimeSeries(strain, delta_t=dt, epoch=gps)


def prepare_one(src: Path, detector: str, out: Path, args: argparse.Namespace) -> dict:
    """Condition one detector's strain the PyCBC-tutorial way and write an input file."""
    import h5py
    from pycbc.filter import highpass
    from pycbc.filter.matchedfilter import get_cutoff_indices
    from pycbc.psd import interpolate, inverse_spectrum_truncation

    raw = read_gwosc(src)
    fs = float(raw.sample_rate)
    n = len(raw)
    # 1. highpass (LAL Butterworth IIR, forward and backward, order 8, attenuation 0.1)
    hp = highpass(raw, args.highpass, filter_order=8, attenuation=0.1)
    # 2. PSD from the middle, away from the highpass transients at both ends
    cond = hp.crop(args.crop, args.crop)
    psd = cond.psd(args.psd_seg, avg_method="median")  # welch: hann, 50% overlap
    # 3. onto the data's delta_f (1/32 Hz), then truncate the inverse spectrum's
    #    time-domain response to psd_trunc seconds (a 4 s whitening filter)
    data_df = 1.0 / (n / fs)
    psd = interpolate(psd, data_df)
    psd = inverse_spectrum_truncation(psd, int(args.psd_trunc * fs),
                                      low_frequency_cutoff=args.highpass)
    if len(psd) != n // 2 + 1:
        raise RuntimeError(f"PSD has {len(psd)} bins, expected {n // 2 + 1}")
    # 4. the data filtered: the whole highpassed segment (length kept, so delta_f
    #    stays 1/32 Hz); the edges are excluded by the valid window instead of a crop
    data = hp
    stilde = data.to_frequencyseries()
    kmin, kmax = get_cutoff_indices(args.f_lower, None, data_df, n)
    valid_start = int(round((args.crop + args.psd_trunc + args.max_template) * fs))
    valid_end = n - int(round((args.crop + args.psd_trunc) * fs))
    steps = [
        {"step": "read", "file": src.name, "dataset": "strain/Strain",
         "delta_t": "attribute Xspacing", "gps_start": "meta/GPSstart"},
        {"step": "pycbc.filter.highpass", "frequency": args.highpass, "filter_order": 8,
         "attenuation": 0.1},
        {"step": "crop for the PSD only", "start_s": args.crop, "end_s": args.crop},
        {"step": "TimeSeries.psd -> pycbc.psd.welch", "seg_len_s": args.psd_seg,
         "seg_stride_s": args.psd_seg / 2, "window": "hann", "avg_method": "median"},
        {"step": "pycbc.psd.interpolate", "delta_f": data_df},
        {"step": "pycbc.psd.inverse_spectrum_truncation",
         "max_filter_len": int(args.psd_trunc * fs), "low_frequency_cutoff": args.highpass,
         "trunc_method": None},
        {"step": "data = whole highpassed segment (no crop, no window)"},
        {"step": "valid window", "start_s": (args.crop + args.psd_trunc + args.max_template),
         "end_before_s": (args.crop + args.psd_trunc)},
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(out, "w") as f:
        f.create_dataset("data", data=np.asarray(data.numpy(), dtype=np.float64))
        f.create_dataset("data_fft", data=np.asarray(stilde.numpy(), dtype=np.complex128))
        f.create_dataset("psd", data=np.asarray(psd.numpy(), dtype=np.float64))
        a = f.attrs
        a["sample_rate"] = fs
        a["delta_t"] = float(data.delta_t)
        a["delta_f"] = data_df
        a["n_time"] = n
        a["gps_start"] = float(data.start_time)
        a["f_lower"] = args.f_lower
        a["kmin"] = kmin
        a["kmax"] = kmax
        a["valid_start"] = valid_start
        a["valid_end"] = valid_end
        a["detector"] = detector
        a["source"] = src.name
        a["steps"] = json.dumps(steps)
    return {"detector": detector, "input": str(out), "n_time": n, "kmin": kmin, "kmax": kmax,
            "valid": [valid_start, valid_end]}


def cmd_prepare(args: argparse.Namespace) -> int:
    """``prepare`` subcommand."""
    use_fftw()
    for det in args.detectors:
        src = args.data_dir / GWOSC_FILES[det]
        if not src.exists():
            print(f"pycbc_reference: missing {src} (GWOSC, event GW150914)", file=sys.stderr)
            return 2
        info = prepare_one(src, det, args.out_dir / f"input-{det}.h5", args)
        print(json.dumps(info))
    return 0


# ---------------------------------------------------------------------------- filter

def load_input(path: Path) -> dict:
    """Read a search input file into a dict of arrays and attributes."""
    import h5py

    with h5py.File(path, "r") as f:
        d = {k: f[k][:] for k in ("data", "psd")}
        if "data_fft" in f:
            d["data_fft"] = f["data_fft"][:]
        d.update({k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()})
    return d


def parse_series(spec: str | None, k: int) -> list[int]:
    """'0,5,17' -> [0, 5, 17] (checked against the bank size)."""
    if not spec:
        return []
    out = sorted({int(x) for x in spec.split(",") if x.strip()})
    for i in out:
        if not 0 <= i < k:
            raise ValueError(f"--series: template {i} not in the bank (0..{k - 1})")
    return out


def cmd_filter(args: argparse.Namespace) -> int:
    """``filter`` subcommand: PyCBC matched_filter over the bank."""
    import h5py
    from pycbc.filter import matched_filter, sigma
    from pycbc.types import FrequencySeries, TimeSeries

    import pycbc

    backend = use_fftw()
    inp = load_input(args.input)
    real_t, cplx_t = ((np.float64, np.complex128) if args.precision == "double"
                      else (np.float32, np.complex64))
    fs = float(inp["sample_rate"])
    n = int(inp["n_time"])
    df = float(inp["delta_f"])
    f_lower = float(args.f_lower if args.f_lower is not None else inp["f_lower"])
    v0, v1 = int(inp["valid_start"]), int(inp["valid_end"])
    gps0 = float(inp["gps_start"])

    # single precision: strain ~1e-21 and S ~1e-46 under- and overflow float32
    # (D conj(h) ~1e-42 is below its smallest normal number), so data and templates
    # are multiplied by PyCBC's DYN_RANGE_FAC = 2^69 and the PSD by its square;
    # rho is unchanged by that (data and sqrt(S) scale alike, the template cancels).
    scale = float(pycbc.DYN_RANGE_FAC) if args.precision == "single" else 1.0
    data = TimeSeries((inp["data"] * scale).astype(real_t), delta_t=1.0 / fs, epoch=gps0)
    stilde = data.to_frequencyseries()
    if "data_fft" in inp:
        ref = inp["data_fft"] * scale
        rel = float(np.linalg.norm(stilde.numpy() - ref) / np.linalg.norm(ref))
    else:
        rel = float("nan")
    psd = FrequencySeries((inp["psd"] * scale ** 2).astype(real_t), delta_f=df)

    bf = h5py.File(args.bank, "r")
    bank = bf["templates"]
    k_all = bank.shape[0]
    if bank.shape[1] != n // 2 + 1 or abs(float(bf.attrs["delta_f"]) - df) > 1e-12:
        print(f"pycbc_reference: bank {bank.shape} / delta_f {bf.attrs['delta_f']} does not "
              f"match the input (N={n}, delta_f={df})", file=sys.stderr)
        return 2
    k = min(k_all, args.limit) if args.limit else k_all
    series_ids = parse_series(args.series, k)
    peak_rho = np.zeros(k)
    peak_idx = np.zeros(k, dtype=np.int64)
    peak_snr = np.zeros(k, dtype=np.complex128)
    sig = np.zeros(k)
    series: dict[int, np.ndarray] = {}
    t_filter = 0.0
    c_filter = 0.0  # CPU seconds: on a shared machine the fairer one-core figure
    for i in range(k):
        h = FrequencySeries((bank[i] * np.float32(scale)).astype(cplx_t), delta_f=df, epoch=gps0)
        t, c = time.perf_counter(), time.process_time()
        snr = matched_filter(h, stilde, psd=psd, low_frequency_cutoff=f_lower)
        win = snr.numpy()[v0:v1]
        a = np.abs(win)
        j = int(np.argmax(a))
        t_filter += time.perf_counter() - t
        c_filter += time.process_time() - c
        peak_rho[i] = a[j]
        peak_idx[i] = v0 + j
        peak_snr[i] = win[j]
        sig[i] = sigma(h, psd=psd, low_frequency_cutoff=f_lower)
        if i in series_ids:
            series[i] = a.astype(np.float32)
    loud = int(np.argmax(peak_rho))
    if loud not in series:
        h = FrequencySeries((bank[loud] * np.float32(scale)).astype(cplx_t), delta_f=df, epoch=gps0)
        series[loud] = np.abs(matched_filter(h, stilde, psd=psd,
                                             low_frequency_cutoff=f_lower).numpy()[v0:v1]
                              ).astype(np.float32)
    params = {name: bf[name][:k] for name in ("mass1", "mass2", "spin1z", "spin2z")}
    bank_attrs = {"approximant": str(bf.attrs["approximant"]),
                  "lalsuite_version": str(bf.attrs["lalsuite_version"])}
    bf.close()

    peak_gps = gps0 + peak_idx / fs
    rate = k / t_filter if t_filter > 0 else float("nan")
    summary = {
        "detector": inp.get("detector", "?"), "input": str(args.input), "bank": str(args.bank),
        "templates": k, "precision": args.precision, "backend": backend,
        "pycbc_version": pycbc.__version__, "f_lower": f_lower,
        "valid_gps": [gps0 + v0 / fs, gps0 + v1 / fs], "dyn_range_scale": scale,
        "stored_data_fft_rel_diff": rel,
        "loudest": {"template": loud, "mass1": float(params["mass1"][loud]),
                    "mass2": float(params["mass2"][loud]),
                    "spin1z": float(params["spin1z"][loud]),
                    "spin2z": float(params["spin2z"][loud]),
                    "rho": float(peak_rho[loud]), "index": int(peak_idx[loud]),
                    "gps": float(peak_gps[loud]),
                    "sigma": float(sig[loud])},
        "filter_seconds": t_filter, "templates_per_s": rate,
        "filter_cpu_seconds": c_filter,
        "templates_per_cpu_s": k / c_filter if c_filter > 0 else float("nan"),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with h5py.File(args.out, "w") as f:
            f.create_dataset("peak_rho", data=peak_rho)
            f.create_dataset("peak_index", data=peak_idx)
            f.create_dataset("peak_gps", data=peak_gps)
            f.create_dataset("peak_snr", data=peak_snr)
            f.create_dataset("sigma", data=sig)
            for name, val in params.items():
                f.create_dataset(name, data=val)
            g = f.create_group("rho_series")
            g.attrs["first_index"] = v0
            for i, s in series.items():
                g.create_dataset(str(i), data=s)
            for key, val in summary.items():
                if not isinstance(val, dict):
                    f.attrs[key] = val if not isinstance(val, list) else np.asarray(val)
            f.attrs["bank_approximant"] = bank_attrs["approximant"]
            f.attrs["bank_lalsuite_version"] = bank_attrs["lalsuite_version"]
            f.attrs["loudest_template"] = loud
    text = json.dumps(summary, indent=2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    L = summary["loudest"]
    print(f"{summary['detector']}: loudest template {loud} of {k}: "
          f"m1={L['mass1']:.1f} m2={L['mass2']:.1f} s1z={L['spin1z']:+.2f} "
          f"s2z={L['spin2z']:+.2f}  rho={L['rho']:.3f} at GPS {L['gps']:.4f} "
          f"(sample {L['index']});  {rate:.0f} templates/s wall, "
          f"{summary['templates_per_cpu_s']:.0f} per CPU-s ({args.precision}, {backend})")
    return 0


# ------------------------------------------------------------------------------ main

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options of both subcommands."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("prepare", help="GWOSC strain -> search input files",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data-dir", type=Path, default=Path("../shared/data/gw150914"))
    p.add_argument("--out-dir", type=Path, default=Path("build/ref"))
    p.add_argument("--detectors", nargs="+", choices=sorted(GWOSC_FILES), default=["H1", "L1"])
    p.add_argument("--highpass", type=float, default=15.0, help="highpass frequency, Hz")
    p.add_argument("--crop", type=float, default=2.0,
                   help="seconds at each end left out of the PSD estimate")
    p.add_argument("--psd-seg", type=float, default=4.0, help="Welch segment length, s")
    p.add_argument("--psd-trunc", type=float, default=4.0,
                   help="inverse-spectrum truncation length, s")
    p.add_argument("--max-template", type=float, default=7.0,
                   help="longest template (s) assumed by the valid window (10+10 M_sun from 20 Hz: about 6 s)")
    p.add_argument("--f-lower", type=float, default=20.0, help="filter low cutoff, Hz")
    p.set_defaults(func=cmd_prepare)

    q = sub.add_parser("filter", help="matched-filter a bank against one input",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    q.add_argument("--input", type=Path, required=True)
    q.add_argument("--bank", type=Path, required=True)
    q.add_argument("--out", type=Path, help="results HDF5")
    q.add_argument("--json", type=Path, help="summary JSON")
    q.add_argument("--precision", choices=("double", "single"), default="double",
                   help="double: data, PSD and templates (promoted exactly) in f64")
    q.add_argument("--f-lower", type=float, help="override the input's f_lower")
    q.add_argument("--series", help="comma-separated template indices whose rho(t) to keep")
    q.add_argument("--limit", type=int, help="only the first LIMIT templates")
    q.set_defaults(func=cmd_filter)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

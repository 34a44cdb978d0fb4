#!/usr/bin/env python3
"""Make an aligned-spin IMRPhenomD template bank for the GW150914 search (issue 16).

Output
------
One HDF5 file, ``<out-dir>/bank-<hash>.h5``, where ``<hash>`` is the first 16 hex
digits of the SHA-256 of the generation parameters (JSON, sorted keys) and of the
LALSuite version. A second call with the same parameters finds the file and reuses
it (prints its path, writes nothing). The file is written to a temporary name and
renamed, so a run cut short never leaves a half-written bank under the final name.

Datasets (K = number of templates, F = N/2 + 1 frequency bins):

* ``templates`` [K, F] complex64 -- h~_+(f_k), f_k = k * delta_f, k = 0 .. F-1,
  in strain per Hz (1/Hz), for a source at 1 Mpc, inclination 0, reference phase 0,
  coalescence at t = 0 (IMRPhenomD puts the peak of the (2,2) mode amplitude near
  t = 0; earlier times wrap to the end of the segment). Bins below ``f_lower`` and
  above the waveform's own end (IMRPhenomD stops at M f = 0.2) are exactly 0.
  Stored contiguous, uncompressed: one template is one row, read with a hyperslab.
* ``mass1``, ``mass2`` [K] float64 -- component masses in solar masses, detector
  frame (redshifted), mass1 >= mass2.
* ``spin1z``, ``spin2z`` [K] float64 -- dimensionless aligned spins (along L).
* ``mchirp``, ``eta``, ``chi_eff``, ``tau0``, ``tau3`` [K] float64 -- derived
  coordinates (solar masses, -, -, s, s); tau0, tau3 at f0 = f_lower.

Attributes: ``delta_f`` (Hz), ``f_lower`` (Hz), ``sample_rate`` (Hz; the time
series is N = sample_rate / delta_f samples), ``n_time`` (N), ``approximant``,
``lalsuite_version``, ``lal_version``, ``placement``, ``params_json`` (every
generation parameter, the ones hashed), ``distance_mpc``, ``polarisation``.

Conventions
-----------
LAL's frequency-domain waveforms are the continuous Fourier transform
h~(f) = integral h(t) exp(-2 pi i f t) dt, whose discrete form is
h~(f_k) = dt * sum_j h(t_j) exp(-2 pi i j k / N): FFTW's forward transform
(FFTW_FORWARD, sign -1) and numpy's ``np.fft.rfft`` times dt. PyCBC's
``TimeSeries.to_frequencyseries()`` is the same (rfft * delta_t), so a bank row is
what ``pycbc.waveform.get_fd_waveform(approximant="IMRPhenomD", ...)`` returns for
the same parameters (it calls the same LAL function), and data transformed with
FFTW's forward R2C times dt can be correlated with it directly.

Sources: S. Khan et al., "Frequency-domain gravitational waves from non-precessing
black-hole binaries. II. A phenomenological model for the advanced detector era",
Phys. Rev. D 93, 044007 (2016), arXiv:1508.07253 (IMRPhenomD; calibrated to
numerical relativity for mass ratios up to 18 and aligned spins up to about 0.85);
LALSimulation, ``XLALSimInspiralChooseFDWaveform`` and ``LALSimIMRPhenomD.c``
(https://lscsoft.docs.ligo.org/lalsuite/lalsimulation/).

Placement (``--placement``)
---------------------------
``sobol`` (default): a deterministic quasi-random placement. The points of a
scrambled Sobol sequence (``scipy.stats.qmc.Sobol``, seed ``--seed``) in [0,1)^4,
taken in order, map to (tau0, eta, spin1z, spin2z): tau0 uniform over the range
the masses allow, eta uniform over what the mass range allows at that tau0
([eta_min(mchirp), 1/4]), spins uniform over [spin-min, spin-max]. tau0 is the
Newtonian chirp time at f0 = f_lower,

    tau0 = 5 / (256 pi f0 eta) (pi M f0)^(-5/3) = 5/256 (pi f0)^(-8/3) Mc^(-5/3)

(M, Mc total and chirp mass in seconds), the coordinate in which the inspiral's
match falls off at the same rate everywhere (Sathyaprakash 1994; Owen &
Sathyaprakash 1999); so templates are spread evenly in the direction a signal's
phase depends on most, which puts most of them at low mass (tau0 6 s at 10+10,
0.1 s at 80+80), as a minimal-match bank does. The first version placed points
uniformly in the (tau0, tau3) plane and rejected the unphysical ones: it left the
low-mass corner, a thin sliver of that plane, empty (no chirp mass below 15 in
1,024 templates; match 0.22 to a 14+11 signal). Why this and not a minimal-match
stochastic placement (sbank): it fits in the time we had, gives exactly ``--size``
templates, and is prefix-stable (a bank of K is the first K templates of any
larger bank with the same other parameters). It does not guarantee a minimal
match: 128 templates cannot cover this 4-d space; ``--check-match`` prints the
bank's best match (over time and phase, aLIGO zero-detuned high-power PSD) to a
few test signals, as a measure of coverage.

``grid``: a plain rectangular grid, n x n in the (tau0, tau3) plane (tau3 the
1.5PN chirp time, pi / (8 f0 eta) (pi M f0)^(-2/3)), the points inside the mass
range, times 3 equal-spin values; the size is rounded up; kept for comparison.

Usage
-----
    python make_bank.py --size 128 --out-dir build/bank          # CPU demo bank
    python make_bank.py --size 1024 --out-dir build/bank          # GPU bank
    python make_bank.py --size 128 --print-path                   # path only
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

MTSUN_SI = 4.925490947641267e-06  # G M_sun / c^3 in seconds (LAL's value)
PLACEMENT_VERSION = 2  # bump when the placement algorithm changes (it is hashed)


@dataclass(frozen=True)
class BankParams:
    """Everything that determines the bank; hashed into the file name."""

    size: int
    m_min: float
    m_max: float
    spin_min: float
    spin_max: float
    f_lower: float
    sample_rate: float
    duration: float
    approximant: str
    placement: str
    seed: int
    placement_version: int = PLACEMENT_VERSION

    @property
    def delta_f(self) -> float:
        return 1.0 / self.duration

    @property
    def n_time(self) -> int:
        return int(round(self.sample_rate * self.duration))

    @property
    def n_freq(self) -> int:
        return self.n_time // 2 + 1


def chirp_times(m1: np.ndarray, m2: np.ndarray, f0: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (tau0, tau3) in seconds for component masses in solar masses."""
    mt = (m1 + m2) * MTSUN_SI
    eta = m1 * m2 / (m1 + m2) ** 2
    v = math.pi * mt * f0
    tau0 = 5.0 / (256.0 * math.pi * f0 * eta) * v ** (-5.0 / 3.0)
    tau3 = math.pi / (8.0 * f0 * eta) * v ** (-2.0 / 3.0)
    return tau0, tau3


def masses_from_chirp_times(tau0: np.ndarray, tau3: np.ndarray,
                            f0: float) -> tuple[np.ndarray, np.ndarray]:
    """Invert :func:`chirp_times`; NaN where (tau0, tau3) is not a physical pair."""
    mt_s = 5.0 * tau3 / (32.0 * math.pi ** 2 * f0 * tau0)  # total mass, seconds
    eta = math.pi / (8.0 * f0 * tau3) * (math.pi * mt_s * f0) ** (-2.0 / 3.0)
    mt = mt_s / MTSUN_SI
    with np.errstate(invalid="ignore"):
        disc = np.sqrt(1.0 - 4.0 * eta)
    m1 = 0.5 * mt * (1.0 + disc)
    m2 = 0.5 * mt * (1.0 - disc)
    return m1, m2


def tau_box(p: BankParams) -> tuple[np.ndarray, np.ndarray]:
    """Bounding box (lo, hi) of (tau0, tau3) over the mass square, by dense sampling."""
    m = np.linspace(p.m_min, p.m_max, 400)
    a, b = np.meshgrid(m, m)
    t0, t3 = chirp_times(a.ravel(), b.ravel(), p.f_lower)
    return np.array([t0.min(), t3.min()]), np.array([t0.max(), t3.max()])


def in_range(m1: np.ndarray, m2: np.ndarray, p: BankParams) -> np.ndarray:
    """Mask of the points with both masses inside [m_min, m_max] (tiny tolerance)."""
    tol = 1e-9
    ok = np.isfinite(m1) & np.isfinite(m2)
    return ok & (m2 >= p.m_min - tol) & (m1 <= p.m_max + tol)


def eta_min_of_mchirp(mc: np.ndarray, p: BankParams) -> np.ndarray:
    """Smallest symmetric mass ratio allowed at chirp mass ``mc`` by the mass range.

    Along the boundary (m1, m_min) for m1 in [m_min, m_max], then (m_max, m2) for m2
    in [m_min, m_max], the chirp mass rises monotonically and eta is the smallest
    the range allows at that chirp mass; interpolated.
    """
    t = np.linspace(p.m_min, p.m_max, 4001)
    m1 = np.concatenate([t, np.full_like(t, p.m_max)])
    m2 = np.concatenate([np.full_like(t, p.m_min), t])
    eta = m1 * m2 / (m1 + m2) ** 2
    mcs = (m1 + m2) * eta ** 0.6
    return np.interp(mc, mcs, eta)


def place_sobol(p: BankParams) -> np.ndarray:
    """Quasi-random placement; returns [K, 4] rows (mass1, mass2, spin1z, spin2z).

    Sobol point u in [0,1)^4 -> tau0 uniform over the range (tau0 depends on the
    chirp mass only), eta uniform over [eta_min(mchirp), 1/4], spin1z and spin2z
    uniform over the spin range. No rejection: every point is a template.
    """
    from scipy.stats import qmc

    c = 5.0 / 256.0 * (math.pi * p.f_lower) ** (-8.0 / 3.0)  # tau0 = c * Mc_s^(-5/3)
    mc_lo = 2.0 * p.m_min * 0.25 ** 0.6
    mc_hi = 2.0 * p.m_max * 0.25 ** 0.6
    t_hi = c * (mc_lo * MTSUN_SI) ** (-5.0 / 3.0)
    t_lo = c * (mc_hi * MTSUN_SI) ** (-5.0 / 3.0)
    sob = qmc.Sobol(d=4, scramble=True, seed=p.seed)
    with warnings.catch_warnings():  # sizes that are not powers of 2 are fine here
        warnings.simplefilter("ignore", UserWarning)
        u = sob.random(p.size)
    tau0 = t_lo + u[:, 0] * (t_hi - t_lo)
    mc = (tau0 / c) ** (-3.0 / 5.0) / MTSUN_SI
    e_lo = eta_min_of_mchirp(mc, p)
    eta = e_lo + u[:, 1] * (0.25 - e_lo)
    mt = mc * eta ** -0.6
    disc = np.sqrt(np.clip(1.0 - 4.0 * eta, 0.0, None))
    m1 = np.clip(0.5 * mt * (1.0 + disc), p.m_min, p.m_max)
    m2 = np.clip(0.5 * mt * (1.0 - disc), p.m_min, p.m_max)
    s1 = p.spin_min + u[:, 2] * (p.spin_max - p.spin_min)
    s2 = p.spin_min + u[:, 3] * (p.spin_max - p.spin_min)
    return np.stack([m1, m2, s1, s2], axis=1)


def place_grid(p: BankParams) -> np.ndarray:
    """Rectangular grid in (tau0, tau3) x spin values, about ``size`` points."""
    lo, hi = tau_box(p)
    n_spin = 3
    best = None
    # find the n for which the n x n grid has about size / n_spin points inside
    for n in range(2, 2000):
        t0, t3 = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
        m1, m2 = masses_from_chirp_times(t0.ravel(), t3.ravel(), p.f_lower)
        ok = in_range(m1, m2, p)
        best = (m1[ok], m2[ok])
        if ok.sum() * n_spin >= p.size:
            break
    m1, m2 = best
    spins = np.linspace(p.spin_min, p.spin_max, n_spin)
    rows = [(a, b, s, s) for s in spins for a, b in zip(m1, m2)]
    return np.array(rows, dtype=float)


def generate_template(m1: float, m2: float, s1z: float, s2z: float,
                      p: BankParams) -> np.ndarray:
    """h~_+(f) of one template, [n_freq] complex128, strain/Hz, at 1 Mpc."""
    import lal
    import lalsimulation as lalsim

    approx = lalsim.GetApproximantFromString(p.approximant)
    f_max = p.sample_rate / 2.0
    hp, _hc = lalsim.SimInspiralChooseFDWaveform(
        m1 * lal.MSUN_SI, m2 * lal.MSUN_SI,
        0.0, 0.0, s1z, 0.0, 0.0, s2z,
        1.0e6 * lal.PC_SI,  # distance: 1 Mpc
        0.0, 0.0, 0.0, 0.0, 0.0,  # inclination, phiRef, longAscNodes, eccentricity, meanPerAno
        p.delta_f, p.f_lower, f_max, 0.0,  # deltaF, f_min, f_max, f_ref (0: f_min)
        None, approx)
    if abs(hp.deltaF - p.delta_f) > 1e-12 * p.delta_f or hp.f0 != 0.0:
        raise RuntimeError(f"unexpected LAL frequency series: deltaF={hp.deltaF} f0={hp.f0}")
    out = np.zeros(p.n_freq, dtype=np.complex128)
    n = min(p.n_freq, hp.data.length)
    out[:n] = hp.data.data[:n]
    k_lo = int(math.ceil(p.f_lower / p.delta_f - 1e-9))
    out[:k_lo] = 0.0  # exactly zero below f_lower (LAL already does; make it a promise)
    return out


def bank_path(p: BankParams, out_dir: Path, lalsuite_version: str) -> Path:
    """Cache path: the parameters and the LALSuite version hashed into the name."""
    key = json.dumps({"params": asdict(p), "lalsuite": lalsuite_version}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return out_dir / f"bank-{digest}.h5"


def lalsuite_versions() -> tuple[str, str]:
    """(lalsuite package version, lal library version)."""
    import lal
    try:
        from importlib.metadata import version
        pkg = version("lalsuite")
    except Exception:  # pragma: no cover - lalsuite built from source
        pkg = "unknown"
    return pkg, lal.__version__


def write_bank(p: BankParams, path: Path, rows: np.ndarray, verbose: bool) -> None:
    """Generate every template and write the bank atomically to ``path``."""
    import h5py

    pkg, lal_ver = lalsuite_versions()
    k = len(rows)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    t_start = time.perf_counter()
    try:
        with h5py.File(tmp, "w") as f:
            ds = f.create_dataset("templates", shape=(k, p.n_freq), dtype=np.complex64)
            for i, (m1, m2, s1, s2) in enumerate(rows):
                ds[i] = generate_template(m1, m2, s1, s2, p).astype(np.complex64)
                if verbose and (i + 1) % 100 == 0:
                    print(f"  {i + 1}/{k} templates", file=sys.stderr)
            m1, m2, s1, s2 = rows.T
            mt = m1 + m2
            eta = m1 * m2 / mt ** 2
            tau0, tau3 = chirp_times(m1, m2, p.f_lower)
            for name, val in (("mass1", m1), ("mass2", m2), ("spin1z", s1), ("spin2z", s2),
                              ("mchirp", mt * eta ** 0.6), ("eta", eta),
                              ("chi_eff", (m1 * s1 + m2 * s2) / mt),
                              ("tau0", tau0), ("tau3", tau3)):
                f.create_dataset(name, data=np.asarray(val, dtype=np.float64))
            a = f.attrs
            a["delta_f"] = p.delta_f
            a["f_lower"] = p.f_lower
            a["sample_rate"] = p.sample_rate
            a["n_time"] = p.n_time
            a["approximant"] = p.approximant
            a["lalsuite_version"] = pkg
            a["lal_version"] = lal_ver
            a["placement"] = p.placement
            a["distance_mpc"] = 1.0
            a["polarisation"] = "plus"
            a["units"] = "templates: strain/Hz; masses: solar masses (detector frame); Hz"
            a["params_json"] = json.dumps(asdict(p), sort_keys=True)
            for key, val in asdict(p).items():
                a["param_" + key] = val
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    if verbose:
        dt = time.perf_counter() - t_start
        print(f"generated {k} templates in {dt:.1f} s ({k / dt:.0f}/s)", file=sys.stderr)


def aligo_psd(freqs: np.ndarray) -> np.ndarray:
    """aLIGO zero-detuned high-power PSD (LAL), 0 where undefined."""
    import lalsimulation as lalsim
    out = np.zeros_like(freqs)
    for i, f in enumerate(freqs):
        if f > 0:
            out[i] = lalsim.SimNoisePSDaLIGOZeroDetHighPower(float(f))
    return out


def check_match(path: Path, p: BankParams, signals: list[tuple[float, float, float, float]]) -> None:
    """Print the bank's best match (over time and phase) to each test signal."""
    import h5py

    df = p.delta_f
    freqs = np.arange(p.n_freq) * df
    psd = aligo_psd(freqs)
    kmin = int(p.f_lower / df)
    kmax = p.n_freq - 1
    w = np.zeros(p.n_freq)
    w[kmin:kmax] = 1.0 / psd[kmin:kmax]
    with h5py.File(path, "r") as f:
        bank = f["templates"]
        masses = np.stack([f["mass1"][:], f["mass2"][:], f["spin1z"][:], f["spin2z"][:]], 1)
        for sig in signals:
            s = generate_template(*sig, p)
            s_norm = math.sqrt(np.sum(np.abs(s) ** 2 * w))
            best, arg = 0.0, -1
            for i in range(len(masses)):
                h = bank[i].astype(np.complex128)
                h_norm = math.sqrt(np.sum(np.abs(h) ** 2 * w))
                q = np.zeros(p.n_time, dtype=np.complex128)
                q[: p.n_freq] = s * np.conj(h) * w
                m = np.abs(np.fft.ifft(q)).max() * p.n_time / (s_norm * h_norm)
                if m > best:
                    best, arg = m, i
            print(f"signal m1={sig[0]:.1f} m2={sig[1]:.1f} s1z={sig[2]:+.2f} s2z={sig[3]:+.2f}: "
                  f"best match {best:.4f} with template {arg} "
                  f"(m1={masses[arg, 0]:.1f} m2={masses[arg, 1]:.1f} "
                  f"s1z={masses[arg, 2]:+.2f} s2z={masses[arg, 3]:+.2f})")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--size", type=int, default=128,
                    help="number of templates (>= 1000 for the GPU run)")
    ap.add_argument("--m-min", type=float, default=10.0, help="smallest component mass, M_sun")
    ap.add_argument("--m-max", type=float, default=80.0, help="largest component mass, M_sun")
    ap.add_argument("--spin-min", type=float, default=-0.85, help="smallest aligned spin")
    ap.add_argument("--spin-max", type=float, default=0.85, help="largest aligned spin")
    ap.add_argument("--f-lower", type=float, default=20.0, help="template start frequency, Hz")
    ap.add_argument("--sample-rate", type=float, default=4096.0, help="data sample rate, Hz")
    ap.add_argument("--duration", type=float, default=32.0,
                    help="data segment length, s (delta_f = 1/duration)")
    ap.add_argument("--approximant", default="IMRPhenomD")
    ap.add_argument("--placement", choices=("sobol", "grid"), default="sobol")
    ap.add_argument("--seed", type=int, default=150914, help="Sobol scrambling seed")
    ap.add_argument("--out-dir", type=Path, default=Path("build/bank"),
                    help="cache directory for bank files")
    ap.add_argument("--force", action="store_true", help="regenerate even if cached")
    ap.add_argument("--print-path", action="store_true",
                    help="print only the bank's path on stdout")
    ap.add_argument("--check-match", action="store_true",
                    help="print the bank's best match to a few test signals (slow-ish)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Make (or reuse) the bank and print its path."""
    args = parse_args(argv)
    if args.size < 1:
        print("make_bank: --size must be >= 1", file=sys.stderr)
        return 2
    if not (0 < args.m_min <= args.m_max) or not (-1 < args.spin_min <= args.spin_max < 1):
        print("make_bank: bad mass or spin range", file=sys.stderr)
        return 2
    p = BankParams(size=args.size, m_min=args.m_min, m_max=args.m_max,
                   spin_min=args.spin_min, spin_max=args.spin_max, f_lower=args.f_lower,
                   sample_rate=args.sample_rate, duration=args.duration,
                   approximant=args.approximant, placement=args.placement, seed=args.seed)
    if p.n_time * 1.0 != p.sample_rate * p.duration or p.n_time % 2:
        print("make_bank: sample_rate * duration must be an even integer", file=sys.stderr)
        return 2
    pkg, _ = lalsuite_versions()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path = bank_path(p, args.out_dir, pkg)
    verbose = not args.print_path
    if path.exists() and not args.force:
        if verbose:
            print(f"cached: {path}", file=sys.stderr)
    else:
        rows = place_sobol(p) if p.placement == "sobol" else place_grid(p)
        if verbose:
            print(f"placing {len(rows)} templates ({p.placement}), writing {path}",
                  file=sys.stderr)
        write_bank(p, path, rows, verbose)
    if args.check_match:
        check_match(path, p, [(39.0, 32.0, 0.0, 0.0), (36.0, 29.0, -0.1, 0.1),
                              (14.0, 11.0, 0.3, 0.0), (70.0, 20.0, 0.5, -0.5)])
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

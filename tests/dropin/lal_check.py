# SPDX-License-Identifier: MIT
"""lal_check.py - LALSuite's own FFT plans through the FFTW drop-in.

The lalsuite wheel carries its own FFTW (lalsuite.libs/libfftw3-*.so.3,
renamed by auditwheel, symbols unchanged), which liblal links by that name.
Its calls to fftw_plan_r2r_1d, fftw_plan_dft_1d, fftw_execute_r2r, ... are
ordinary unversioned dynamic references, resolved through the global scope:
a library in LD_PRELOAD comes first there, so libfftd-fftw3.so interposes
on them as on any program's (no -Bsymbolic, no versioned FFTW symbols in
the wheel; checked with nm/readelf when this was written).

This script starts `fftd --backend fftw` on a fresh socket and runs its
child part twice, on the same seeded random inputs: plainly, and under
LD_PRELOAD=libfftd-fftw3.so with FFTD_FFTW3_MIN=0. The child makes LAL's
plans (lal.CreateForwardREAL8FFTPlan / REAL4, CreateReverse*,
CreateForwardCOMPLEX16FFTPlan / COMPLEX8, CreateReverseCOMPLEX16FFTPlan)
and runs lal.REAL8ForwardFFT, REAL8ReverseFFT, REAL8VectorFFT (halfcomplex),
REAL4ForwardFFT, REAL4ReverseFFT, COMPLEX16VectorFFT and COMPLEX8VectorFFT,
for even and odd lengths. Checked: every result against numpy.fft in double
(relative L2 error <= 2e-15 for double, 1e-6 for single precision;
measured: 4e-16 and 2e-7), the
preloaded run's results against the plain run's (same bounds), and that the
daemon served the preloaded run: its debug log names one daemon plan per
LAL plan, and the daemon's execution counter (fftctl stats) grew by
exactly the number of LAL transforms.

  python lal_check.py --fftd BUILD/fftd --fftctl BUILD/fftctl \
      --lib BUILD/libfftd-fftw3.so [--work DIR]

Last line: "lal_check: P passed, F failed"; exit status 0, 1 (a check
failed) or 2 (could not run).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

BOUND = {"f64": 2e-15, "f32": 1e-6}


def rel_l2(a, b):
    """||a - b|| / ||b||, in double."""
    a = np.asarray(a, dtype=np.complex128)
    b = np.asarray(b, dtype=np.complex128)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def halfcomplex(spec, n):
    """FFTW's halfcomplex order of an rfft spectrum of n points."""
    hc = np.empty(n)
    hc[: n // 2 + 1] = spec.real
    k = np.arange(1, (n + 1) // 2)
    hc[n - k] = spec.imag[k]
    return hc


def child(out_path, seed):
    """Run LAL's FFTs; save results, references and counts to out_path."""
    import lal

    rng = np.random.default_rng(seed)
    res, ref, prec = {}, {}, {}
    plans = execs = 0
    for n in (4096, 1001):
        for bits, real_t, cplx_t in (
            (64, "REAL8", "COMPLEX16"),
            (32, "REAL4", "COMPLEX8"),
        ):
            p = "f64" if bits == 64 else "f32"
            x = rng.standard_normal(n)
            fwd = getattr(lal, "CreateForward%sFFTPlan" % real_t)(n, 0)
            rev = getattr(lal, "CreateReverse%sFFTPlan" % real_t)(n, 1)
            plans += 2
            vi = getattr(lal, "Create%sVector" % real_t)(n)
            vi.data = x
            vo = getattr(lal, "Create%sVector" % cplx_t)(n // 2 + 1)
            getattr(lal, "%sForwardFFT" % real_t)(vo, vi, fwd)
            key = "%s_forward_%d" % (real_t, n)
            res[key], ref[key], prec[key] = vo.data.copy(), np.fft.rfft(
                vi.data.astype(np.float64)), p
            execs += 1
            # Reverse: a Hermitian spectrum (zero imaginary DC and
            # Nyquist, as LAL requires), unnormalised.
            spec = np.fft.rfft(x)
            spec[0] = spec[0].real
            if n % 2 == 0:
                spec[-1] = spec[-1].real
            vc = getattr(lal, "Create%sVector" % cplx_t)(n // 2 + 1)
            vc.data = spec
            vr = getattr(lal, "Create%sVector" % real_t)(n)
            getattr(lal, "%sReverseFFT" % real_t)(vr, vc, rev)
            key = "%s_reverse_%d" % (real_t, n)
            res[key] = vr.data.copy()
            ref[key] = np.fft.irfft(vc.data.astype(np.complex128), n) * n
            prec[key] = p
            execs += 1
            if bits == 64:
                # The halfcomplex output of LAL's REAL8VectorFFT.
                vh = lal.CreateREAL8Vector(n)
                lal.REAL8VectorFFT(vh, vi, fwd)
                key = "REAL8_halfcomplex_%d" % n
                res[key], ref[key], prec[key] = (
                    vh.data.copy(), halfcomplex(np.fft.rfft(x), n), p)
                execs += 1
    for n in (2048, 1000):
        for bits, cplx_t in ((64, "COMPLEX16"), (32, "COMPLEX8")):
            p = "f64" if bits == 64 else "f32"
            z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
            fwd = getattr(lal, "CreateForward%sFFTPlan" % cplx_t)(n, 0)
            rev = getattr(lal, "CreateReverse%sFFTPlan" % cplx_t)(n, 0)
            plans += 2
            vi = getattr(lal, "Create%sVector" % cplx_t)(n)
            vi.data = z
            zin = vi.data.astype(np.complex128)
            vo = getattr(lal, "Create%sVector" % cplx_t)(n)
            fn = getattr(lal, "%sVectorFFT" % cplx_t)
            fn(vo, vi, fwd)
            key = "%s_forward_%d" % (cplx_t, n)
            res[key], ref[key], prec[key] = vo.data.copy(), np.fft.fft(zin), p
            fn(vo, vi, rev)
            key = "%s_reverse_%d" % (cplx_t, n)
            res[key] = vo.data.copy()
            ref[key], prec[key] = np.fft.ifft(zin) * n, p
            execs += 2
    np.savez(
        out_path,
        __plans=plans,
        __execs=execs,
        **{"res_" + k: v for k, v in res.items()},
        **{"ref_" + k: v for k, v in ref.items()},
        **{"prec_" + k: v for k, v in prec.items()},
    )
    return 0


def executes(fftctl, url):
    """The daemon's execution counter, from `fftctl stats`."""
    out = subprocess.run([fftctl, "--url", url, "stats"], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^executes\s+(\d+)", out, re.M)
    if not m:
        raise RuntimeError("no executes line in fftctl stats:\n" + out)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--fftd")
    ap.add_argument("--fftctl")
    ap.add_argument("--lib")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.seed)
    for f in (a.fftd, a.fftctl, a.lib):
        if not f or not os.path.exists(f):
            print("lal_check: missing --fftd/--fftctl/--lib (%s)" % f)
            return 2
    work = a.work or tempfile.mkdtemp(prefix="fftd-lal-")
    os.makedirs(work, exist_ok=True)
    sock = os.path.join(work, "fftd.sock")
    url = "ipc://" + sock
    for f in (sock, sock + ".fd"):
        if os.path.exists(f):
            os.unlink(f)
    print("lal_check: seed %d, daemon at %s" % (a.seed, url))
    log = open(os.path.join(work, "fftd.log"), "w")
    d = subprocess.Popen([a.fftd, "--backend", "fftw", "--listen", url,
                          "--log-level", "warn"], stdout=log, stderr=log)
    try:
        for _ in range(150):
            if subprocess.run([a.fftctl, "--url", url, "ping"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            print("lal_check: the daemon did not answer")
            return 2
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FFTD_FFTW3") and k != "LD_PRELOAD"}
        runs = {}
        before = after = 0
        for name, pre in (("plain", False), ("dropin", True)):
            e = dict(env)
            if pre:
                e.update(LD_PRELOAD=os.path.abspath(a.lib), FFTD_URL=url,
                         FFTD_FFTW3_MIN="0", FFTD_FFTW3_LOG="debug")
                before = executes(a.fftctl, url)
            out = os.path.join(work, name + ".npz")
            r = subprocess.run([sys.executable, __file__, "--child", out,
                                "--seed", str(a.seed)], env=e,
                               capture_output=True, text=True)
            if pre:
                after = executes(a.fftctl, url)
            with open(os.path.join(work, name + ".err"), "w") as f:
                f.write(r.stderr)
            if r.returncode != 0:
                print("lal_check: the %s run failed:\n%s%s"
                      % (name, r.stdout, r.stderr))
                return 1
            runs[name] = (np.load(out), r.stderr)
    finally:
        d.terminate()
        d.wait(timeout=20)
        log.close()

    plain, dropin = runs["plain"][0], runs["dropin"][0]
    npass = nfail = 0

    def check(ok, what):
        nonlocal npass, nfail
        print("%-4s %s" % ("ok" if ok else "FAIL", what))
        if ok:
            npass += 1
        else:
            nfail += 1

    for k in sorted(x[4:] for x in plain.files if x.startswith("res_")):
        b = BOUND[str(plain["prec_" + k])]
        e1 = rel_l2(plain["res_" + k], plain["ref_" + k])
        e2 = rel_l2(dropin["res_" + k], dropin["ref_" + k])
        e3 = rel_l2(dropin["res_" + k], plain["res_" + k])
        check(e1 <= b and e2 <= b and e3 <= b,
              "%-26s vs numpy: plain %.3g, drop-in %.3g; drop-in vs plain "
              "%.3g (bound %g)" % (k, e1, e2, e3, b))
    plans, execs = int(dropin["__plans"]), int(dropin["__execs"])
    served = runs["dropin"][1].count("-> daemon")
    check(served == plans,
          "%d LAL plans, %d daemon plans in the drop-in's log" % (plans,
                                                                   served))
    check(runs["plain"][1].count("fftd-fftw3") == 0,
          "the plain run did not load the drop-in")
    check(after - before == execs,
          "the daemon executed %d transforms for LAL's %d"
          % (after - before, execs))
    print("lal_check: %d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/python — the fftd Python package against the C client and in-process peers.

In one run, against one daemon (started here with --spawn, or --url / $FFTD_URL):

* small transforms (f32 C2C n=256 and f32 R2C n=1024, batch 1): per-call p50/p99 of
  the C client (bench/python_c: the same fftd_plan_create / fftd_execute calls, no
  Python), the binding's floor (cffi calling fftd_execute on ready buffers),
  ``fftd.fft``/``fftd.rfft`` (numpy API, plan cache warm), a reused ``fftd.Plan``
  (``execute(x, out)``), and numpy.fft, scipy.fft (workers = os.cpu_count()) and CuPy
  (on the device, synchronized; and with the host<->device copies). Python overhead =
  p50(fftd) - p50(C); target <= 15 us. Also the Python work of a call alone (the
  package's fftd_execute stubbed out), which few-core machines' scheduling noise does
  not blur.
* a large batch (f32 C2C n=4096 x --large-batch, 64 MiB of input by default): GB/s of
  input of the C client on host memory (inline/staged as libfftd does) and on
  fftd_buffers (shared memory), of ``fftd.fft`` on numpy arrays and on ``fftd.empty``
  arrays, of a reused Plan on each, and of the same peers. Targets: numpy arrays >= 0.9x
  the C client's host-memory figure, fftd.empty arrays >= 0.95x its shared-buffer one.

The C client and the Python loops run in alternating blocks (--blocks) so that drift of
a shared machine falls on both alike; figures are medians over all blocks after
warm-up. Every fftd result is checked against numpy.fft (relative L2 error < 1e-5).
Prints a table (each target met or missed) and writes JSON with --json FILE. Exit
status 1 when a measurement or a check failed (a missed target is not a failure).

    python bench/python.py [--spawn FFTD_BIN [--backend NAME] | --url URL]
        [--c-helper PATH] [--json FILE] [--rounds N] [--warmup N] [--reps N]
        [--blocks N] [--large-batch B] [--no-peers]

libfftd.so is found as the package finds it ($FFTD_LIB first); with --spawn and no
$FFTD_LIB, the libfftd.so beside FFTD_BIN is used.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OVERHEAD_TARGET_US = 15.0
NUMPY_TARGET = 0.9  # fftd.fft(numpy array) / C client on host memory
SHARED_TARGET = 0.95  # fftd.fft(fftd.empty array) / C client on fftd_buffers
CHECK_TOL = 1e-5  # relative L2 error of f32 results against numpy.fft (pocketfft)

SMALL = [("c2c256", "f32 C2C n=256 batch 1", "c2c", 256), ("r2c1024", "f32 R2C n=1024 batch 1", "r2c", 1024)]
LARGE_N = 4096


class Daemon:
    """An fftd started on a socket in a fresh temporary directory; stop() ends it."""

    def __init__(self, binary: str, backend: str | None):
        self.tmp = tempfile.mkdtemp(prefix="fftd-pybench.")
        self.url = f"ipc://{self.tmp}/fftd.sock"
        self.logf = open(Path(self.tmp) / "fftd.log", "w+")
        args = [binary, "--listen", self.url, "--log-level", "warn"]
        if backend:
            args += ["--backend", backend]
        self.proc = subprocess.Popen(args, stdout=self.logf, stderr=subprocess.STDOUT)

    def wait_ready(self, fftd) -> None:
        """Wait until the daemon answers (RuntimeError with its log after 60 s)."""
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fftd exited {self.proc.returncode}: {self.log()}")
            try:
                fftd.Client(self.url, 1000).close()
                return
            except fftd.ConnectionFailed:
                if time.monotonic() > deadline:
                    raise RuntimeError("fftd did not answer in 60 s: " + self.log())
                time.sleep(0.05)

    def log(self) -> str:
        """The daemon's log so far."""
        self.logf.flush()
        return (Path(self.tmp) / "fftd.log").read_text()

    def stop(self) -> int:
        """SIGTERM, wait up to 30 s (then SIGKILL); the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.proc.returncode


class Row:
    """One measured path: samples in seconds, or why it has none."""

    def __init__(self, key: str, label: str):
        self.key, self.label = key, label
        self.samples: list[float] = []
        self.state = "ok"
        self.why = ""

    def fail(self, state: str, why: str) -> None:
        """Mark the row unavailable (peer absent) or failed (a measurement error)."""
        self.state, self.why = state, why

    def pct(self, q: float) -> float:
        """The q-quantile of the samples (q=0.5: median), nan if none."""
        if self.state != "ok" or not self.samples:
            return math.nan
        s = sorted(self.samples)
        return s[min(len(s) - 1, int(q * len(s)))]

    def json(self, nbytes: int | None = None) -> dict:
        """The row as a JSON object (gbps when nbytes is the input size)."""
        if self.state != "ok":
            return {"label": self.label, "state": self.state, "why": self.why}
        d = {"label": self.label, "state": "ok", "median_s": self.pct(0.5),
             "p99_s": self.pct(0.99), "n": len(self.samples)}
        if nbytes:
            d["gbps"] = nbytes / self.pct(0.5) / 1e9
            d["samples_s"] = self.samples
        return d


def timed(fn, reps: int, warmup: int) -> list[float]:
    """fn() run warmup times, then reps times each timed alone (seconds)."""
    for _ in range(warmup):
        fn()
    out = []
    clock = time.perf_counter_ns
    for _ in range(reps):
        t0 = clock()
        fn()
        out.append((clock() - t0) * 1e-9)
    return out


def c_helper(path: str, url: str, kind: str, n: int, batch: int, mode: str, reps: int,
             warmup: int) -> dict:
    """One run of bench/python_c (its JSON object); RuntimeError with its stderr."""
    r = subprocess.run([path, "--url", url, "--kind", kind, "--prec", "f32", "--n", str(n),
                        "--batch", str(batch), "--mode", mode, "--reps", str(reps),
                        "--warmup", str(warmup)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"python_c exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def python_alone(fn, reps: int, warmup: int) -> list[float]:
    """timed(fn) with the package's fftd_execute replaced by a stub that returns 0 at
    once: the Python work of a call alone, without the round trip (on a machine with
    few cores the round trip's threads and the Python work delay each other, so the
    wall-time difference to the C client can exceed this)."""
    mods = [sys.modules["fftd._engine"], sys.modules["fftd.plan"]]
    real = mods[0].lib

    class Stub:
        def __getattr__(self, name):
            return getattr(real, name)

        def fftd_execute(self, *args):
            return 0

    for m in mods:
        m.lib = Stub()
    try:
        return timed(fn, reps, warmup)
    finally:
        for m in mods:
            m.lib = real


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    """Relative L2 error of got against want (in double)."""
    g, w = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    return float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-300))


class Peers:
    """The in-process peers: numpy.fft, scipy.fft (all cores), CuPy (when usable)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.scipy = self.cupy = None
        self.scipy_why = self.cupy_why = "not run (--no-peers)"
        self.workers = os.cpu_count() or 1
        if not enabled:
            return
        try:
            import scipy.fft

            self.scipy = scipy.fft
        except ImportError as e:
            self.scipy_why = f"scipy not importable: {e}"
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            self.cupy = cupy
            self.cupy_name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        except Exception as e:  # ImportError, no driver, no device
            self.cupy_why = f"CuPy not usable: {type(e).__name__}: {e}"

    def rows(self, kind: str, x: np.ndarray, reps: int, warmup: int) -> list[Row]:
        """Measured rows of every peer for forward transforms of x's last axis."""
        if not self.enabled:
            return []
        real = kind == "r2c"
        out = []
        r = Row("numpy", "numpy.fft")
        f = np.fft.rfft if real else np.fft.fft
        r.samples = timed(lambda: f(x), reps, warmup)
        out.append(r)
        r = Row("scipy", f"scipy.fft (workers={self.workers})")
        if self.scipy is None:
            r.fail("unavailable", self.scipy_why)
        else:
            sf = self.scipy.rfft if real else self.scipy.fft
            w = self.workers
            r.samples = timed(lambda: sf(x, workers=w), reps, warmup)
        out.append(r)
        r_dev = Row("cupy", "CuPy on device (sync)")
        r_cp = Row("cupy_copies", "CuPy with H2D+D2H copies")
        if self.cupy is None:
            r_dev.fail("unavailable", self.cupy_why)
            r_cp.fail("unavailable", self.cupy_why)
        else:
            cp = self.cupy
            cf = cp.fft.rfft if real else cp.fft.fft
            xd = cp.asarray(x)
            sync = cp.cuda.Device().synchronize

            def dev():
                cf(xd)
                sync()

            r_dev.samples = timed(dev, reps, warmup)
            r_cp.samples = timed(lambda: cf(cp.asarray(x)).get(), reps, warmup)
            del xd
            cp.get_default_memory_pool().free_all_blocks()
        return out + [r_dev, r_cp]


def bench_small(fftd, client, url: str, helper: str, peers: Peers, a) -> tuple[list, list]:
    """The small-transform cases: (results for the JSON, failed checks)."""
    results, bad = [], []
    rng = np.random.default_rng(1)
    for key, label, kind, n in SMALL:
        if kind == "c2c":
            x = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(np.complex64)
            api, ref = fftd.fft, np.fft.fft
        else:
            x = rng.uniform(-1, 1, n).astype(np.float32)
            api, ref = fftd.rfft, np.fft.rfft
        plan = fftd.Plan((n,), kind=kind, precision="f32", client=client)
        out = np.empty(plan.output_shape[1:], plan.output_dtype)
        cin, cout = fftd._ffi.from_buffer(x), fftd._ffi.from_buffer(out, require_writable=True)
        lib, ptr = fftd._lib, plan._raw.ptr
        rows = {k: Row(k, lb) for k, lb in [
            ("c", "C client (python_c)"), ("cffi", "cffi: fftd_execute, ready buffers"),
            ("api", f"fftd.{api.__name__} (numpy API)"), ("plan", "fftd.Plan.execute(x, out)")]}
        per = max(1, a.rounds // a.blocks)
        try:
            for _ in range(a.blocks):
                c = c_helper(helper, url, kind, n, 1, "inline", per, a.warmup)
                rows["c"].samples += c["samples_s"]
                rows["cffi"].samples += timed(lambda: lib.fftd_execute(ptr, cin, cout), per,
                                              a.warmup)
                rows["api"].samples += timed(lambda: api(x, client=client), per, a.warmup)
                rows["plan"].samples += timed(lambda: plan.execute(x, out), per, a.warmup)
        except (RuntimeError, fftd.Error) as e:
            for r in rows.values():
                if not r.samples:
                    r.fail("failed", str(e))
            bad.append(f"{key}: {e}")
        for k, fn in (("api_py", lambda: api(x, client=client)),
                      ("plan_py", lambda: plan.execute(x, out))):
            r = Row(k, ("fftd numpy API" if k == "api_py" else "fftd.Plan.execute")
                    + ", Python work alone")
            r.samples = python_alone(fn, a.rounds, a.warmup)
            rows[k] = r
        checks = {}
        for what, got in [("api", api(x, client=client)), ("plan", plan.execute(x))]:
            checks[what] = rel_err(got.reshape(-1), ref(x))
            if not checks[what] < CHECK_TOL:
                bad.append(f"{key} {what}: relative error {checks[what]:.2e} >= {CHECK_TOL}")
        plan.close()
        prow = peers.rows(kind, x, a.rounds, a.warmup)
        allrows = list(rows.values()) + prow
        results.append({"key": key, "label": label, "rows": allrows, "checks": checks,
                        "overhead_us": {k: (rows[k].pct(0.5) - rows["c"].pct(0.5)) * 1e6
                                        for k in ("cffi", "api", "plan")},
                        "python_alone_us": {k: rows[k + "_py"].pct(0.5) * 1e6
                                            for k in ("api", "plan")}})
    return results, bad


def bench_large(fftd, client, url: str, helper: str, peers: Peers, a) -> tuple[dict, list]:
    """The large batch: (result for the JSON, failed checks)."""
    n, batch = LARGE_N, a.large_batch
    rng = np.random.default_rng(2)
    x = np.empty((batch, n), np.complex64)
    x.real = rng.uniform(-1, 1, (batch, n))
    x.imag = rng.uniform(-1, 1, (batch, n))
    xs = client.empty(x.shape, x.dtype)
    xs[...] = x
    plan = fftd.Plan((n,), kind="c2c", precision="f32", batch=batch, client=client)
    out = np.zeros(x.shape, x.dtype)
    outs = client.zeros(x.shape, x.dtype)
    rows = {k: Row(k, lb) for k, lb in [
        ("c_inline", "C client, host memory (inline/staged)"),
        ("api_numpy", "fftd.fft(numpy array)"),
        ("plan_numpy", "fftd.Plan.execute(numpy x, out)"),
        ("c_shm", "C client, fftd_buffers"),
        ("api_shared", "fftd.fft(fftd.empty array)"),
        ("plan_shared", "fftd.Plan.execute(fftd.empty x, out)")]}
    bad = []
    per = max(1, a.reps // a.blocks)
    wu = 1
    try:
        for _ in range(a.blocks):
            for mode, key in (("inline", "c_inline"), ("shm", "c_shm")):
                rows[key].samples += c_helper(helper, url, "c2c", n, batch, mode, per,
                                              wu)["samples_s"]
            rows["api_numpy"].samples += timed(lambda: fftd.fft(x, client=client), per, wu)
            rows["plan_numpy"].samples += timed(lambda: plan.execute(x, out), per, wu)
            rows["api_shared"].samples += timed(lambda: fftd.fft(xs, client=client), per, wu)
            rows["plan_shared"].samples += timed(lambda: plan.execute(xs, outs), per, wu)
    except (RuntimeError, fftd.Error) as e:
        for r in rows.values():
            if not r.samples:
                r.fail("failed", str(e))
        bad.append(f"large: {e}")
    want = np.fft.fft(x)
    checks = {}
    for what, got in [("api_numpy", fftd.fft(x, client=client)), ("plan_numpy", out),
                      ("api_shared", fftd.fft(xs, client=client)), ("plan_shared", outs)]:
        checks[what] = rel_err(got, want)
        if not checks[what] < CHECK_TOL:
            bad.append(f"large {what}: relative error {checks[what]:.2e} >= {CHECK_TOL}")
    del want
    plan.close()
    prow = peers.rows("c2c", x, a.reps, wu)
    res = {"key": "c2c4096", "label": f"f32 C2C n={n} batch {batch}", "n": n, "batch": batch,
           "input_bytes": x.nbytes, "rows": list(rows.values()) + prow, "checks": checks}
    return res, bad


def ratio(rows: list, num: str, den: str) -> float:
    """median(den) / median(num): the throughput ratio num/den."""
    r = {x.key: x for x in rows}
    return r[den].pct(0.5) / r[num].pct(0.5)


def targets(small: list, large: dict) -> list[dict]:
    """The issue's targets with their values and verdicts."""
    out = []
    for s in small:
        for k, what in (("api", "numpy API"), ("plan", "Plan.execute")):
            v = s["overhead_us"][k]
            out.append({"what": f"{s['key']} Python overhead, {what} (p50, us)", "value": v,
                        "target": f"<= {OVERHEAD_TARGET_US:g}", "met": v <= OVERHEAD_TARGET_US})
            v = s["python_alone_us"][k]
            out.append({"what": f"{s['key']} Python work alone, {what} (p50, us)", "value": v,
                        "target": f"<= {OVERHEAD_TARGET_US:g}", "met": v <= OVERHEAD_TARGET_US})
    rows = large["rows"]
    for num, den, t, what in (("api_numpy", "c_inline", NUMPY_TARGET, "fftd.fft(numpy) / C host"),
                              ("plan_numpy", "c_inline", NUMPY_TARGET, "Plan(numpy) / C host"),
                              ("api_shared", "c_shm", SHARED_TARGET, "fftd.fft(empty) / C shm"),
                              ("plan_shared", "c_shm", SHARED_TARGET, "Plan(empty) / C shm")):
        v = ratio(rows, num, den)
        out.append({"what": f"large {what}", "value": v, "target": f">= {t:g}", "met": v >= t})
    return out


def fmt_us(v: float) -> str:
    """Microseconds with one decimal, or '-'."""
    return "-" if math.isnan(v) else f"{v * 1e6:.1f}"


def print_tables(meta: dict, small: list, large: dict, tg: list, bad: list) -> None:
    """The report: small-transform latencies, large-batch GB/s, targets, checks."""
    print(f"\nbench/python — {meta['machine']}; daemon {meta['daemon']['backend']} "
          f"{meta['daemon']['server_version']} ({meta['daemon']['devices']}); "
          f"Python {meta['python']}, numpy {meta['numpy']}")
    for s in small:
        print(f"\nsmall: {s['label']} — per call, us")
        print(f"  {'path':<40} {'p50':>9} {'p99':>9} {'p50-C':>9}")
        c50 = s["rows"][0].pct(0.5)
        for r in s["rows"]:
            if r.state != "ok":
                print(f"  {r.label:<40} {r.state}: {r.why}")
                continue
            print(f"  {r.label:<40} {fmt_us(r.pct(0.5)):>9} {fmt_us(r.pct(0.99)):>9} "
                  f"{fmt_us(r.pct(0.5) - c50):>9}")
    print(f"\nlarge: {large['label']} ({large['input_bytes'] / 2**20:.0f} MiB in) — "
          "GB/s of input, median")
    print(f"  {'path':<40} {'GB/s':>9} {'median ms':>10}")
    for r in large["rows"]:
        if r.state != "ok":
            print(f"  {r.label:<40} {r.state}: {r.why}")
            continue
        m = r.pct(0.5)
        print(f"  {r.label:<40} {large['input_bytes'] / m / 1e9:>9.2f} {m * 1e3:>10.2f}")
    print("\ntargets")
    for t in tg:
        v = t["value"]
        vs = "-" if math.isnan(v) else f"{v:.2f}"
        verdict = "met" if t["met"] else "MISSED"
        print(f"  {t['what']:<52} {vs:>8}  (target {t['target']})  {verdict}")
    print("\nchecks (relative L2 error against numpy.fft, bound %.0e): %s" %
          (CHECK_TOL, "all ok" if not bad else "FAILED"))
    for b in bad:
        print("  " + b)


def main() -> int:
    """Parse, start or reach the daemon, run both parts, report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spawn", metavar="FFTD_BIN", help="start this daemon on a fresh socket")
    p.add_argument("--backend", help="--backend of the spawned daemon (default: its auto)")
    p.add_argument("--url", help="a running daemon (default $FFTD_URL when not --spawn)")
    p.add_argument("--c-helper", help="bench/python_c (default: beside FFTD_BIN, bench/)")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--rounds", type=int, default=2000, help="small: timed calls per path")
    p.add_argument("--warmup", type=int, default=100, help="small: warm-up calls per block")
    p.add_argument("--reps", type=int, default=9, help="large: timed calls per path")
    p.add_argument("--blocks", type=int, default=6, help="alternations of C and Python")
    p.add_argument("--large-batch", type=int, default=2048,
                   help="batch of the n=4096 case (2048: 64 MiB)")
    p.add_argument("--no-peers", action="store_true", help="skip numpy/scipy/CuPy")
    a = p.parse_args()
    if a.blocks < 1 or a.rounds < a.blocks or a.reps < 1 or a.large_batch < 1:
        p.error("need blocks >= 1, rounds >= blocks, reps >= 1, large-batch >= 1")
    if a.spawn and not os.environ.get("FFTD_LIB"):
        os.environ["FFTD_LIB"] = str(Path(a.spawn).resolve().parent / "libfftd.so")
    helper = a.c_helper or (str(Path(a.spawn).resolve().parent / "bench" / "python_c")
                            if a.spawn else "build/bench/python_c")
    import fftd

    daemon = Daemon(a.spawn, a.backend) if a.spawn else None
    rc = 0
    try:
        url = daemon.url if daemon else (a.url or os.environ.get("FFTD_URL"))
        if daemon:
            daemon.wait_ready(fftd)
        if not url:
            p.error("give --spawn FFTD_BIN, --url URL or $FFTD_URL")
        client = fftd.Client(url)
        peers = Peers(not a.no_peers)
        info = client.info
        meta = {"machine": f"{platform.node()} ({os.cpu_count()} CPUs, {platform.machine()})"
                           + (f", {peers.cupy_name}" if peers.cupy is not None else ""),
                "python": platform.python_version(), "numpy": np.__version__,
                "fftd_package": fftd.__version__, "library": fftd.library_version(),
                "daemon": {"url": url, "backend": info["backend"],
                           "server_version": info["server_version"],
                           "devices": ", ".join(d["name"] for d in info["devices"]) or "none"},
                "c_helper": helper, "rounds": a.rounds, "reps": a.reps, "blocks": a.blocks}
        small, bad = bench_small(fftd, client, url, helper, peers, a)
        large, bad2 = bench_large(fftd, client, url, helper, peers, a)
        bad += bad2
        tg = targets(small, large)
        client.close()
    finally:
        if daemon:
            st = daemon.stop()
            if st != 0:
                print(f"bench/python: the daemon exited {st}", file=sys.stderr)
                rc = 1
    if a.json:
        doc = {"meta": meta, "targets": tg, "checks_failed": bad,
               "small": [dict(s, rows=[r.json() for r in s["rows"]]) for s in small],
               "large": dict(large, rows=[r.json(large["input_bytes"]) for r in large["rows"]])}
        Path(a.json).write_text(json.dumps(doc, indent=1, default=float) + "\n")
    print_tables(meta, small, large, tg, bad)
    return 1 if bad or rc else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""Plans, futures, streams, shared-buffer arrays, resident arrays, the matched-filter
bank and errors, through a CPU daemon, against numpy in double precision (bound 1e-12 of
the largest |reference| unless said)."""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

import fftd


def close(got, want, tol=1e-12):
    """True when max|got - want| <= tol * max|want|."""
    return np.abs(got - want).max() <= tol * np.abs(want).max()


def test_plan_execute_async_stream(client, rng):
    """One plan: execute, execute_async (a Future), a stream of depth 3; outputs poisoned."""
    x = rng.standard_normal((8, 32)) + 1j * rng.standard_normal((8, 32))
    want = np.fft.ifft(x, norm="ortho")
    with fftd.Plan([32], "c2c", "f64", forward=False, norm="ortho", batch=8,
                   client=client) as p:
        assert p.input_shape == (8, 32) and p.algorithm == "fftw"
        out = np.full((8, 32), np.nan, complex)
        assert p.execute(x, out) is out and close(out, want)
        futs = [p.execute_async(x * k) for k in range(1, 6)]
        for k, f in enumerate(futs, 1):
            assert close(f.result(timeout=30), want * k)
        with p.stream(3) as s:
            for k in range(1, 4):
                s.submit(x * k)
            for k in range(1, 4):
                assert close(s.wait(), want * k)
            slot = s.input()
            slot[...] = x
            s.submit()
            assert close(s.wait(), want)


def test_r2c_c2r_plans_f32(client, rng):
    """r2c and c2r plans in single precision (bound 2e-6)."""
    r = rng.standard_normal((4, 6, 10)).astype(np.float32)
    with fftd.Plan([6, 10], "r2c", "f32", batch=4, client=client) as p:
        assert p.output_shape == (4, 6, 6)
        assert close(p.execute(r), np.fft.rfftn(r.astype(np.float64), axes=(1, 2)), 2e-6)
    h = np.fft.rfftn(r.astype(np.float64), axes=(1, 2)).astype(np.complex64)
    with fftd.Plan([6, 10], "c2r", "f32", batch=4, norm="backward", client=client) as p:
        assert close(p.execute(h), r, 2e-6)


def test_shared_arrays_travel_by_reference(client, rng):
    """fftd.empty arrays: the result is in a shared buffer too, and no payload bytes
    travel in the messages (the daemon's bytes_in counts them, inline or shared alike,
    so the check is the result's place)."""
    a = client.empty((16, 1024), np.complex128)
    a[...] = rng.standard_normal((16, 1024))
    assert client.is_shared(a)
    got = fftd.fft(a, client=client)
    assert client.is_shared(got)
    assert close(got, np.fft.fft(np.array(a)))
    z = client.zeros(10, np.float32)
    assert (z == 0).all() and z.dtype == np.float32


def test_resident_arrays_and_plan(client, rng):
    """Array write/read, execute_arrays: the transform runs on resident memory."""
    x = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    with fftd.Array.from_numpy(x, client=client) as src, \
            fftd.Array(x.nbytes, client=client) as dst, \
            fftd.Plan([64], client=client) as p:
        p.execute_arrays(src, dst)
        assert close(dst.read(np.complex128), np.fft.fft(x))
        with pytest.raises(fftd.ArgumentError) as e:
            dst.read(np.complex128, shape=(65,))
        assert e.value.code == fftd.errors.ESIZE


def test_mf_bank(client, rng):
    """The bank's peaks against the filter computed here with numpy (f64, bound 1e-9)."""
    n, df, count = 256, 0.5, 3
    nb = n // 2 + 1
    data = rng.standard_normal(nb) + 1j * rng.standard_normal(nb)
    psd = rng.uniform(0.5, 2.0, nb)
    h = rng.standard_normal((count, nb)) + 1j * rng.standard_normal((count, nb))
    with fftd.Array.from_numpy(data, client=client) as D, \
            fftd.Array.from_numpy(psd, client=client) as S, \
            fftd.Array.from_numpy(h, client=client) as H:
        res = fftd.mf_bank(D, S, H, count, n=n, delta_f=df, series_index=[0, 2],
                           threshold=1e-9, cluster=64, max_triggers=100)
    for j in range(count):
        q = np.zeros(n, complex)
        q[:nb] = 4 * df * data * np.conj(h[j]) / psd
        z = np.fft.ifft(q) * n
        sigma = np.sqrt(4 * df * np.sum(np.abs(h[j]) ** 2 / psd))
        rho = np.abs(z) / sigma
        assert abs(res.peaks["sigma"][j] - sigma) <= 1e-9 * sigma
        assert abs(res.peaks["rho"][j] - rho.max()) <= 1e-9 * rho.max()
        assert res.peaks["t"][j] == np.argmax(rho)
        if j in (0, 2):
            assert close(res.series[[0, 2].index(j)], rho, 1e-9)
    assert res.ntotal == len(res.triggers) == count * (n // 64)


def test_mf_bank_sigmasq_store_use(client, rng):
    """sigma^2 stored by one search and used by the next gives the same bits; four times
    it halves every rho (so the given values are used); a negative one is refused."""
    n, df, count = 256, 0.5, 3
    nb = n // 2 + 1
    data = rng.standard_normal(nb) + 1j * rng.standard_normal(nb)
    psd = rng.uniform(0.5, 2.0, nb)
    h = rng.standard_normal((count, nb)) + 1j * rng.standard_normal((count, nb))
    kw = dict(n=n, delta_f=df, threshold=1.0, cluster=32, max_triggers=100)
    with fftd.Array.from_numpy(data, client=client) as D, \
            fftd.Array.from_numpy(psd, client=client) as S, \
            fftd.Array.from_numpy(h, client=client) as H, \
            fftd.Array(8 + 8 * count, client=client) as Q:
        plain = fftd.mf_bank(D, S, H, count, **kw)
        stored = fftd.mf_bank(D, S, H, count, sigmasq_mode="store", sigmasq=Q,
                              sigmasq_offset=8, **kw)
        s2 = Q.read(np.float64, (count,), offset=8)
        assert (np.sqrt(s2) == stored.peaks["sigma"]).all()
        used = fftd.mf_bank(D, S, H, count, sigmasq_mode="use", sigmasq=Q,
                            sigmasq_offset=8, **kw)
        for r in (stored, used):
            assert r.peaks.tobytes() == plain.peaks.tobytes()
            assert r.triggers.tobytes() == plain.triggers.tobytes()
        Q.write(4 * s2, offset=8)
        kw["threshold"] = 0.5
        scaled = fftd.mf_bank(D, S, H, count, sigmasq_mode="use", sigmasq=Q,
                              sigmasq_offset=8, **kw)
        assert (scaled.peaks["rho"] == plain.peaks["rho"] / 2).all()
        assert (scaled.peaks["sigma"] == 2 * plain.peaks["sigma"]).all()
        assert (scaled.triggers["t"] == plain.triggers["t"]).all()
        Q.write(np.array([-1.0]), offset=8)
        with pytest.raises(fftd.ArgumentError, match=r"sigmasq\[0\]"):
            fftd.mf_bank(D, S, H, count, sigmasq_mode="use", sigmasq=Q,
                         sigmasq_offset=8, **kw)
        with pytest.raises(ValueError):
            fftd.mf_bank(D, S, H, count, sigmasq_mode="use", **kw)


def test_errors_carry_code_name_message(client):
    """A refused plan raises the family's class with fftd's code, name and message."""
    with pytest.raises(fftd.ArgumentError) as e:
        fftd.Plan([0], client=client)
    assert e.value.code == 1 and e.value.name == "FFTD_EINVAL"
    assert "n[0]" in e.value.message and isinstance(e.value, ValueError)
    with pytest.raises(fftd.UnsupportedError) as e:
        fftd.Plan([64], precision="f16", client=client)  # no f16 on the CPU backend
    assert e.value.name == "FFTD_EUNSUPPORTED"
    with pytest.raises(fftd.ConnectionFailed) as e:
        fftd.Client("ipc:///nonexistent/fftd.sock", 500)
    assert e.value.name == "FFTD_ECONNREFUSED"
    c = fftd.Client(client.url)
    p = fftd.Plan([8], client=c)
    c.close()
    with pytest.raises(fftd.Error):
        p.execute(np.zeros(8, complex))
    with pytest.raises(ValueError):
        fftd.Plan([8], kind="r2r", client=client)


def test_killed_client_is_cleaned_up(client):
    """A Python client killed with plans, buffers and arrays leaves nothing behind."""
    before = client.stats()
    code = ("import sys, os, time, numpy as np, fftd\n"
            f"c = fftd.Client({client.url!r})\n"
            "ps = [fftd.Plan([64 + i], client=c) for i in range(5)]\n"
            "b = c.empty(1 << 20); a = fftd.Array(1 << 20, client=c)\n"
            "print('ready', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    assert client.stats()["plans"] >= before["plans"] + 5
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 20
    while client.stats()["sessions"] > before["sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    after = client.stats()
    assert after["sessions"] == before["sessions"] and after["plans"] == before["plans"]


def test_library_never_unloaded(client):
    """libfftd stays loaded after cffi's dlclose (it is linked -z nodelete): NNG's
    threads, started with the first client, run until the process exits and would
    otherwise run unmapped code (the interpreter's finalisation closes the library;
    the test process died of SIGSEGV at exit, intermittently, before the flag)."""
    code = ("import ctypes, os, fftd\n"
            "from fftd._lib import ffi, lib\n"
            f"fftd.Client({client.url!r}).close()\n"
            "ffi.dlclose(lib)\n"
            "ctypes.CDLL(os.environ['FFTD_LIB'], mode=os.RTLD_NOLOAD)\n"
            "print('still loaded', flush=True)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "still loaded", (r.returncode, r.stderr)


def test_plan_tolerance(client, rng):
    """tolerance= reaches the daemon: accepted, the choice named, the result within it;
    a bad one is an ArgumentError naming the field."""
    x = rng.standard_normal((2, 256)) + 1j * rng.standard_normal((2, 256))
    with fftd.Plan([256], batch=2, tolerance=1e-5, client=client) as p:
        assert p.algorithm in ("fftw", "fftw-f32")
        y = p.execute(x)
    want = np.fft.fft(x)
    assert np.linalg.norm(y - want) <= 1e-5 * np.linalg.norm(want)
    with pytest.raises(fftd.ArgumentError, match="tolerance"):
        fftd.Plan([256], tolerance=-1.0, client=client)


def test_plan_int8_input(client, rng):
    """input="int8": int8 (re, im) pairs for c2c and int8 reals for r2c, the full range,
    against numpy in double on the same values (f64 within 1e-12, f32 within 2e-6);
    other dtypes refused; an inverse int8 plan is the daemon's ArgumentError."""
    x = rng.integers(-128, 128, size=(3, 1000, 2), dtype=np.int8)
    x[0, 0] = (-128, 127)
    want = np.fft.fft(x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64))
    with fftd.Plan([1000], "c2c", "f64", batch=3, input="int8", client=client) as p:
        assert p.input_bytes == 3 * 1000 * 2 and p.input_dtype.base == np.int8
        out = np.full((3, 1000), np.nan, complex)
        assert p.execute(x, out) is out and close(out, want)
        with pytest.raises(ValueError, match="int8"):
            p.execute(x.astype(np.float64))
    r = rng.integers(-128, 128, size=(2, 64, 48), dtype=np.int8)
    with fftd.Plan([64, 48], "r2c", "f32", batch=2, input="int8", client=client) as p:
        assert p.input_bytes == r.nbytes
        assert close(p.execute(r), np.fft.rfftn(r.astype(np.float64), axes=(1, 2)), 2e-6)
    with pytest.raises(fftd.ArgumentError, match="forward"):
        fftd.Plan([256], "c2c", "f32", forward=False, input="int8", client=client)
    with pytest.raises(ValueError, match="input must be"):
        fftd.Plan([256], input="int16", client=client)

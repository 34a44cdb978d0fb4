# SPDX-License-Identifier: MIT
"""The numpy API's fast path and the output pools (fftd._engine.fast, fftd._pool),
through a CPU daemon.

The fast path must give numpy's results (values within test_numpy's bounds against
numpy on the input promoted to double, numpy's dtype and shape) for every dtype and norm
it serves, and decline the rest to the general path. The pools must never hand out
memory that a live result (or a view of one) holds: results are kept alive while more
calls run, poisoned, and compared afterwards, and their memory must be disjoint. Memory
must come back when results are dropped, within the pool's bounds, and a closed client
or a forked child must fail cleanly (a typed error; never the parent's connection).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import fftd
from fftd import _engine, _pool

from test_numpy import bound

FUNCS = {"fft": _engine.FFT, "ifft": _engine.IFFT, "rfft": _engine.RFFT,
         "irfft": _engine.IRFFT}
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int32,
          np.dtype(">f8"), np.dtype(">c8"), np.bool_]
BIG = (4, 8192)  # complex128: 512 KiB, over _pool.POOL_MIN_BYTES


def rand(rng, shape, dtype):
    """Random values of dtype (complex when it is), C-contiguous."""
    dt = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    elif dt.kind in "ib":
        x = np.round(x * 10)
    return np.ascontiguousarray(x.astype(dt))


def check_like_numpy(name, x, got, norm=None):
    """got equals numpy.fft.name(x) in dtype and shape, and in value within the bound
    of test_numpy (against numpy on x promoted to double)."""
    with np.errstate(all="ignore"):
        want = getattr(np.fft, name)(x, norm=norm)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, x.dtype, norm)
    x64 = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    ref = getattr(np.fft, name)(x64, norm=norm)
    err = np.abs(got.astype(ref.dtype) - ref).max() / max(np.abs(ref).max(), 1e-30)
    assert err <= bound(got.dtype), (name, x.dtype, norm, err)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_fast_path_matches_numpy(client, rng, name):
    """Every served dtype, norm and rank, twice (the second call runs the ready entry):
    numpy's values, dtype and shape; entries exist exactly for what the path serves."""
    fn = getattr(fftd, name)
    for dtype in DTYPES:
        if name == "rfft" and np.dtype(dtype).kind == "c":
            continue
        for norm in (None, "backward", "ortho", "forward"):
            for shape in ((7,), (3, 10), (2, 3, 16)):
                for _ in range(2):
                    x = rand(rng, shape, dtype)
                    check_like_numpy(name, x, fn(x, norm=norm, client=client), norm)
                entry = client._fast.get((x.shape, x.dtype, FUNCS[name], norm))
                served = not (name == "irfft" and np.dtype(dtype) == np.float16)
                assert (entry is not None) == served, (name, dtype, norm, shape)


def test_fast_path_declines(client, rng):
    """Calls the path does not serve give numpy's results or exceptions through the
    general path: other axes, n, out, views, lists, empty batches, long double, bad
    norms, irfft of one bin, rfft of complex input."""
    x = rand(rng, (6, 8), np.complex128)
    check_like_numpy("fft", x[:, ::2].copy(), fftd.fft(x[:, ::2], client=client))
    assert np.allclose(fftd.fft(x, axis=0, client=client), np.fft.fft(x, axis=0))
    assert np.allclose(fftd.fft(x, n=5, client=client), np.fft.fft(x, n=5))
    assert np.allclose(fftd.fft(x.T, client=client), np.fft.fft(x.T))
    out = np.full((6, 8), np.nan, complex)
    assert fftd.fft(x, out=out, client=client) is out and np.allclose(out, np.fft.fft(x))
    assert np.allclose(fftd.fft(list(x[0]), client=client), np.fft.fft(x[0]))
    assert fftd.fft(np.zeros((0, 8)), client=client).shape == (0, 8)
    assert fftd.fft(np.ones(4, np.longdouble), client=client).dtype == np.clongdouble
    for call in (lambda m: m.fft(np.ones(4), norm="bogus"),
                 lambda m: m.fft(np.ones(4), axis=-1.0),
                 lambda m: m.irfft(np.ones(1)),
                 lambda m: m.rfft(np.ones(4, complex)),
                 lambda m: m.fft(np.ones((3, 0)))):
        with pytest.raises(Exception) as want:
            call(np.fft)
        with pytest.raises(type(want.value)) as got:
            call(fftd)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shared", [False, True])
def test_pool_never_aliases_live_results(client, rng, shared):
    """Large results kept alive (one only through a view) while more calls run: each
    still equals its own reference, none shares memory with another, and results of
    shared inputs are in shared memory."""
    kept, views, refs = [], [], []
    for i in range(8):
        x = rand(rng, BIG, np.complex128)
        if shared:
            xs = client.empty(BIG, np.complex128)
            xs[...] = x
            x = xs
        r = fftd.fft(x, client=client) if i % 2 else fftd.ifft(x, client=client)
        assert client.is_shared(r) == shared
        refs.append(np.fft.fft(np.array(x)) if i % 2 else np.fft.ifft(np.array(x)))
        if i == 3:
            views.append(r[1:])  # only a view keeps this one
        else:
            kept.append(r)
        for _ in range(3):  # results dropped at once: their blocks go back and are reused
            fftd.fft(x, client=client)[0, 0] = np.nan
    live = kept + views
    for a in live:
        for b in live:
            assert a is b or not np.shares_memory(a, b)
    got = kept[:3] + [np.concatenate([np.full((1, BIG[1]), np.nan), views[0]])] + kept[3:]
    for g, want in zip(got, refs):
        if np.isnan(g[0, 0]):  # the view's result: compare rows 1..
            g, want = g[1:], want[1:]
        assert np.abs(g - want).max() <= 1e-12 * np.abs(want).max()


@pytest.mark.parametrize("shared", [False, True])
def test_pool_memory_returns(client, rng, shared):
    """A dropped result's block is reused by the next call (no new block made); a block
    a view holds is not; dropped results leave at most POOL_MAX_IDLE idle blocks, and a
    shared pool's freed buffers leave the client's shared memory."""
    pool = client._shared_pool if shared else _pool.HOST
    x = rand(rng, BIG, np.complex128)
    if shared:
        xs = client.empty(BIG, np.complex128)
        xs[...] = x
        x = xs
    pool.trim()  # no idle blocks left from earlier tests
    r = fftd.fft(x, client=client)
    made = pool.made
    del r
    r = fftd.fft(x, client=client)
    assert pool.made == made  # the same block again
    v = r[2:]
    del r
    r2 = fftd.fft(x, client=client)
    assert pool.made == made + 1 and not np.shares_memory(v, r2)
    many = [fftd.fft(x, client=client) for _ in range(2 * _pool.POOL_MAX_IDLE)]
    del many, v, r2
    assert pool.idle() <= _pool.POOL_MAX_IDLE
    if shared:
        assert len(client._buffers) == 1 + pool.idle()  # xs and the idle blocks


def test_closed_client(daemon, rng):
    """After close: results made before stay valid (shared ones too), the fast path's
    ready entries are gone and the call raises ConnectionFailed (ECLOSED)."""
    c = fftd.Client(daemon.url, 20000)
    x = rand(rng, BIG, np.complex128)
    xs = c.empty(BIG, np.complex128)
    xs[...] = x
    r, rs = fftd.fft(x, client=c), fftd.fft(xs, client=c)
    c.close()
    want = np.fft.fft(x)
    for g in (r, rs):
        assert np.abs(g - want).max() <= 1e-12 * np.abs(want).max()
    for a in (x, xs, x[:1]):
        with pytest.raises(fftd.ConnectionFailed) as e:
            fftd.fft(a, client=c)
        assert e.value.code == fftd.errors.ECLOSED
    del r, rs, xs  # the shared ones are destroyed after close: must not fail


def test_forked_child_declines(client, rng):
    """In a child forked after the fast path ran: the parent's client and the default
    client raise UnsupportedError, scipy's backend declines (numpy's result); the
    parent's client, entries and pooled shared results work on after the child."""
    scipy_fft = pytest.importorskip("scipy.fft")
    import fftd.scipy_backend  # noqa: F401
    x = rand(rng, BIG, np.complex128)
    xs = client.empty(BIG, np.complex128)
    xs[...] = x
    kept = fftd.fft(xs, client=client)
    fftd.fft(x)  # the default client has an entry too
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one line, never return into pytest
        msg = "ok"
        try:
            for call in (lambda: fftd.fft(x, client=client), lambda: fftd.fft(xs, client=client),
                         lambda: fftd.fft(x)):
                try:
                    call()
                    msg = "a call in the child succeeded"
                except fftd.UnsupportedError:
                    pass
            with scipy_fft.set_backend(fftd.scipy_backend):
                if not np.allclose(scipy_fft.fft(x[0]), np.fft.fft(x[0])):
                    msg = "scipy backend in the child: wrong result"
            client.close()  # a no-op in the child
            del kept
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            msg = f"{type(e).__name__}: {e}"
        os.write(wr, msg.encode())
        os._exit(0)
    os.close(wr)
    msg = os.read(rd, 4096).decode()
    os.close(rd)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and msg == "ok", msg
    want = np.fft.fft(x)
    for g in (kept, fftd.fft(xs, client=client), fftd.fft(x, client=client)):
        assert np.abs(g - want).max() <= 1e-12 * np.abs(want).max()

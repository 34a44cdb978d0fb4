# SPDX-License-Identifier: MIT
"""fftd's numpy.fft functions against numpy.fft itself, on fresh random inputs.

Each random case picks a function, an array (1..4 dimensions, sizes 1..13 with primes,
dtype float16/32/64, complex64/128 or int32, C or Fortran order, a strided or reversed
view), axes (a random subset in random order, negative or not), n/s (crop or pad),
norm, and sometimes ``out``. The reference is numpy.fft on the input promoted to double.
Bounds, as the maximum absolute difference over the maximum |reference|: 1e-12 for
double results, 2e-5 for single, 4e-3 for float16 results (float16's own rounding).
The result's dtype and shape must equal numpy's own call's.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fftd

C2C_1 = ["fft", "ifft"]
R2C_1 = ["rfft", "ihfft"]
C2R_1 = ["irfft", "hfft"]
ND = ["fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn", "rfft2", "irfft2"]
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int32]
NORMS = [None, "backward", "ortho", "forward"]
SIZES = [1, 2, 3, 4, 5, 7, 8, 11, 12, 13]


def bound(dtype) -> float:
    """The relative bound for a result of dtype."""
    return {np.float16: 4e-3, np.float32: 2e-5, np.complex64: 2e-5}.get(np.dtype(dtype).type,
                                                                         1e-12)


def random_array(rng, ndim: int, dtype):
    """A random array of ndim dims, in a random memory layout (returned as a view)."""
    shape = [int(rng.choice(SIZES)) for _ in range(ndim)]
    big = [s * 2 for s in shape]
    base = rng.standard_normal(big)
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.standard_normal(big)
    if np.dtype(dtype).kind == "i":
        base = np.round(base * 10)
    base = base.astype(dtype, order=str(rng.choice(["C", "F"])))
    index = []
    for s in shape:
        layout = rng.integers(3)
        if layout == 0:
            index.append(slice(0, s))
        elif layout == 1:
            index.append(slice(0, 2 * s, 2))
        else:
            index.append(slice(s - 1, None, -1) if s > 1 else slice(0, 1))
    a = base[tuple(index)]
    if ndim > 1 and rng.integers(2):
        a = a.transpose(rng.permutation(ndim))
    return a


def reference(name, a, kw):
    """numpy.fft's result on a promoted to double precision."""
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(np.fft, name)(a64, **kw)


def case(rng, name):
    """(array, kwargs) for one random call of numpy.fft.name."""
    real_in = name in ("rfft", "ihfft", "rfftn", "rfft2")
    dtypes = [d for d in DTYPES if not (real_in and np.dtype(d).kind == "c")]
    dtype = dtypes[rng.integers(len(dtypes))]
    kw = {"norm": NORMS[rng.integers(4)]}
    if name in ND:
        ndim = int(rng.integers(2 if name.endswith("2") else 1, 5))
        a = random_array(rng, ndim, dtype)
        if name.endswith("2"):
            axes = [int(v) for v in rng.choice(ndim, 2, replace=False)]
        else:
            k = int(rng.integers(1, ndim + 1))
            axes = [int(v) for v in rng.permutation(ndim)[:k]]
        axes = [ax - ndim if rng.integers(2) else ax for ax in axes]
        kw["axes"] = axes
        if rng.integers(2):
            kw["s"] = [int(rng.choice(SIZES)) for _ in axes]
    else:
        ndim = int(rng.integers(1, 4))
        a = random_array(rng, ndim, dtype)
        kw["axis"] = int(rng.integers(-ndim, ndim))
        if rng.integers(2):
            kw["n"] = int(rng.choice(SIZES))
        elif name in C2R_1 and a.shape[kw["axis"]] < 2:
            kw["n"] = 2
    if name in ("irfftn", "irfft2") and "s" not in kw and a.shape[kw["axes"][-1]] < 2:
        kw["s"] = [2] * len(kw["axes"])
    return a, kw


@pytest.mark.parametrize("name", C2C_1 + R2C_1 + C2R_1 + ND)
def test_random_against_numpy(daemon, rng, name):
    """40 random calls per function: values within the bound, numpy's dtype and shape."""
    for _ in range(40):
        a, kw = case(rng, name)
        want = getattr(np.fft, name)(a, **kw)
        got = getattr(fftd, name)(a, **kw)
        assert got.dtype == want.dtype, (name, a.dtype, kw)
        assert got.shape == want.shape, (name, a.shape, kw)
        ref = reference(name, a, kw)
        scale = max(np.abs(ref).max(initial=0.0), 1e-30)
        err = np.abs(got.astype(ref.dtype) - ref).max(initial=0.0) / scale
        assert err <= bound(got.dtype), (name, a.shape, a.strides, a.dtype, kw, err)


@pytest.mark.parametrize("name", C2C_1 + R2C_1 + C2R_1 + ["fftn", "rfftn", "irfftn"])
def test_out_argument(daemon, rng, name):
    """out= receives the result (poisoned first) and is returned, as numpy does."""
    a = rng.standard_normal((6, 10))
    if name not in R2C_1 + ["rfftn"]:
        a = a + 1j * rng.standard_normal((6, 10))
    want = getattr(np.fft, name)(a)
    out = np.full(want.shape, np.nan, want.dtype)
    got = getattr(fftd, name)(a, out=out)
    assert got is out
    assert np.abs(out - want).max() <= 1e-12 * np.abs(want).max()
    with pytest.raises(ValueError, match="wrong shape"):
        getattr(fftd, name)(a, out=np.empty((3, 3), want.dtype))


def test_more_than_three_axes(daemon, rng):
    """Five axes: several daemon plans, same result as numpy."""
    a = rng.standard_normal((3, 4, 2, 5, 3)) + 1j * rng.standard_normal((3, 4, 2, 5, 3))
    for name in ("fftn", "ifftn", "irfftn"):
        want = getattr(np.fft, name)(a, norm="ortho")
        got = getattr(fftd, name)(a, norm="ortho")
        assert np.abs(got - want).max() <= 1e-12 * np.abs(want).max()
    r = a.real.copy()
    assert np.abs(fftd.rfftn(r) - np.fft.rfftn(r)).max() <= 1e-12 * np.abs(np.fft.rfftn(r)).max()


@pytest.mark.parametrize("call", [
    lambda m: m.fft(np.ones(4), n=0),
    lambda m: m.fft(np.ones(4), axis=1),
    lambda m: m.fft(np.ones(4), norm="bogus"),
    lambda m: m.rfft(np.ones(4, complex)),
    lambda m: m.irfft(np.ones(1)),
    lambda m: m.fftn(np.ones((2, 2)), s=(2, 2, 2), axes=(0, 1)),
    lambda m: m.fftn(np.ones((2, 2)), axes=(0, 5)),
    lambda m: m.rfftn(np.ones((2, 2)), s=(0, 2), axes=(0, 1)),
])
def test_errors_as_numpy(daemon, call):
    """Wrong arguments raise numpy's own exception type and message."""
    with pytest.raises(Exception) as want:
        call(np.fft)
    with pytest.raises(type(want.value)) as got:
        call(fftd)
    assert str(got.value) == str(want.value)


def test_edges(daemon, rng):
    """Empty batches, a length-1 axis, long double (numpy computes), repeated axes
    (numpy's loop), s without axes (numpy's DeprecationWarning)."""
    e = np.zeros((0, 8))
    assert fftd.fft(e).shape == (0, 8) and fftd.fft(e).dtype == np.complex128
    one = rng.standard_normal((5, 1))
    assert np.allclose(fftd.fft(one, axis=1), one)
    ld = np.arange(8, dtype=np.longdouble)
    assert fftd.fft(ld).dtype == np.clongdouble
    a = rng.standard_normal((4, 4))
    assert np.allclose(fftd.fftn(a, axes=(0, 0)), np.fft.fftn(a, axes=(0, 0)))
    with pytest.warns(DeprecationWarning):
        fftd.fftn(a, s=(4, 4))


def test_scalars_and_lists(daemon):
    """Python lists are accepted like numpy accepts them."""
    assert np.allclose(fftd.fft([1, 2, 3, 4]), np.fft.fft([1, 2, 3, 4]))
    assert np.allclose(fftd.irfft([1, 2, 3]), np.fft.irfft([1, 2, 3]))


def test_large_batch_is_chunked(daemon, rng, monkeypatch):
    """A batch over the daemon's max_request_bytes is split into several plans."""
    c = fftd.default_client()
    monkeypatch.setitem(c.info, "max_request_bytes", 4096)
    a = rng.standard_normal((37, 64)) + 1j * rng.standard_normal((37, 64))
    assert np.abs(fftd.fft(a) - np.fft.fft(a)).max() <= 1e-12 * np.abs(np.fft.fft(a)).max()

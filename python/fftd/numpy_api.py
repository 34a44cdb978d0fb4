# SPDX-License-Identifier: MIT
"""numpy.fft's functions, computed by the daemon: ``fft, ifft, fft2, ifft2, fftn, ifftn,
rfft, irfft, rfft2, irfft2, rfftn, irfftn, hfft, ihfft`` with numpy 2's signatures and
semantics (``n``/``s`` crop or zero-pad, ``axis``/``axes`` negative or not, ``norm``
"backward" | "ortho" | "forward", ``out``), any strides and memory order, and numpy's
result dtypes:

=====================  ==================  ================================
input dtype            computed in         result (complex / real output)
=====================  ==================  ================================
float16                float32             complex64 / float16 (as numpy)
float32, complex64     float32             complex64 / float32
other ints, floats     float64             complex128 / float64
longdouble             numpy.fft (fftd has no long double)
=====================  ==================  ================================

Arguments numpy rejects are passed to numpy.fft itself so that the very exception numpy
raises is raised. ``ifftn`` and ``hfft`` honour ``out`` (numpy 2.3 ignores it there).
Every function takes a keyword ``client`` (default: :func:`fftd.default_client`).
The common call of ``fft, ifft, rfft, irfft`` (a C-contiguous ndarray, default n, last
axis, no out) takes a fast path (fftd._engine.fast: one lookup of ready plans by shape,
dtype and norm) with the same results. Results are ordinary numpy arrays; large ones
(and all those of inputs in shared buffers) are made on pooled memory (fftd._pool) that
goes back to its pool when the array and all its views are collected, so no result ever
shares memory with another live one.
Errors of the daemon raise :class:`fftd.Error` subclasses. Accuracy is the backend's:
FFTW's on the CPU daemon, cuFFT's on the GPU (relative RMS error about 1e-16 in f64,
1e-7 in f32, growing as log n).
"""
from __future__ import annotations

import operator
import warnings
from typing import Optional, Sequence

import numpy as np

from . import _engine as eng
from .client import Client, default_client

try:  # numpy >= 2
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # pragma: no cover - numpy 1.x
    from numpy.core.multiarray import normalize_axis_index  # type: ignore

_LONG = (np.longdouble, np.clongdouble)
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


class _Delegate(Exception):
    """Raised inside a front end when numpy.fft itself must handle the call."""


def _served(a: np.ndarray) -> bool:
    """True if fftd computes this dtype (not long double, object, strings...)."""
    k = a.dtype.kind
    if k not in "biufc" or a.dtype.type in _LONG:
        return False
    return a.dtype.itemsize <= 16


def _single(a: np.ndarray) -> bool:
    """True when numpy computes a in single precision (float16, float32, complex64)."""
    return a.dtype.type in (np.float16, np.float32, np.complex64)


def _complex(a: np.ndarray) -> np.ndarray:
    """a as complex64 or complex128 (numpy's computation dtype)."""
    return np.asarray(a, np.complex64 if _single(a) else np.complex128)


def _real(a: np.ndarray) -> np.ndarray:
    """a (real) as float32 or float64."""
    return np.asarray(a, np.float32 if _single(a) else np.float64)


def _real_result(a: np.ndarray) -> np.dtype:
    """numpy's dtype of a real result from input a: result_type(a.real.dtype, 1.0)."""
    return np.result_type(a.real.dtype, 1.0)


def _finish(res: np.ndarray, out: Optional[np.ndarray], dtype=None) -> np.ndarray:
    """res cast to dtype, or copied into out (numpy's shape check and casting)."""
    if dtype is not None and res.dtype != dtype:
        res = res.astype(dtype)
    if out is None:
        return res
    if getattr(out, "shape", None) != res.shape:
        raise ValueError("output array has wrong shape.")
    np.copyto(out, res, casting="same_kind")
    return out


def _check_norm(norm) -> None:
    """numpy's ValueError for an unknown norm."""
    if norm not in _SWAP:
        raise _Delegate


def _n(n, default: int) -> int:
    """The n argument as a positive int, or _Delegate."""
    if n is None:
        n = default
    try:
        n = operator.index(n)
    except TypeError:
        raise _Delegate from None
    if n < 1:
        raise _Delegate
    return n


def _axis(axis, ndim: int) -> int:
    """axis normalised, or _Delegate."""
    try:
        return normalize_axis_index(operator.index(axis), ndim)
    except Exception:
        raise _Delegate from None


def _fast(a, n, axis, norm, out, client, fn):
    """The fast path's result for numpy's common call, or None (see fftd._engine.fast)."""
    if (n is None and out is None and type(a) is np.ndarray and type(axis) is int
            and axis == -1 and (norm is None or type(norm) is str) and a.flags.c_contiguous):
        return eng.fast(client or default_client(), a, fn, norm)
    return None


def _c2c1(a, n, axis, norm, out, forward, client):
    a = np.asarray(a)
    if not _served(a) or a.ndim == 0:
        raise _Delegate
    _check_norm(norm)
    axis = _axis(axis, a.ndim)
    n = _n(n, a.shape[axis])
    x = eng.fix_shape(_complex(a), [axis], [n])
    res = eng.transform(client or default_client(), x, [axis], eng.C2C, [n], forward,
                        eng.norm_code(norm, forward))
    return _finish(res, out)


def _r2c1(a, n, axis, norm, out, client):
    a = np.asarray(a)
    if not _served(a) or a.ndim == 0 or a.dtype.kind == "c":
        raise _Delegate
    _check_norm(norm)
    axis = _axis(axis, a.ndim)
    n = _n(n, a.shape[axis])
    x = eng.fix_shape(_real(a), [axis], [n])
    res = eng.transform(client or default_client(), x, [axis], eng.R2C, [n], True,
                        eng.norm_code(norm, True))
    return _finish(res, out)


def _c2r1(a, n, axis, norm, out, client):
    a = np.asarray(a)
    if not _served(a) or a.ndim == 0:
        raise _Delegate
    _check_norm(norm)
    axis = _axis(axis, a.ndim)
    n = _n(n, (a.shape[axis] - 1) * 2)
    x = eng.fix_shape(_complex(a), [axis], [n // 2 + 1])
    res = eng.transform(client or default_client(), x, [axis], eng.C2R, [n], False,
                        eng.norm_code(norm, False))
    return _finish(res, out, _real_result(a))


def fft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
        client: Optional[Client] = None) -> np.ndarray:
    """1-D forward DFT, exp(-2 pi i jk/n), along axis (numpy.fft.fft).

    a: array_like, any dtype numpy takes; n: length of the transformed axis (crop or
    zero-pad; default a.shape[axis]); norm: "backward" (none), "ortho" (1/sqrt n),
    "forward" (1/n); out: array of the result's shape to write into. Returns complex64
    for float16/float32/complex64 input, complex128 otherwise.
    """
    r = _fast(a, n, axis, norm, out, client, eng.FFT)
    if r is not None:
        return r
    try:
        return _c2c1(a, n, axis, norm, out, True, client)
    except _Delegate:
        return np.fft.fft(a, n, axis, norm, out=out)


def ifft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
         client: Optional[Client] = None) -> np.ndarray:
    """1-D inverse DFT, exp(+2 pi i jk/n), scaled 1/n by default (numpy.fft.ifft)."""
    r = _fast(a, n, axis, norm, out, client, eng.IFFT)
    if r is not None:
        return r
    try:
        return _c2c1(a, n, axis, norm, out, False, client)
    except _Delegate:
        return np.fft.ifft(a, n, axis, norm, out=out)


def rfft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
         client: Optional[Client] = None) -> np.ndarray:
    """1-D forward DFT of real input: the n//2+1 non-negative frequencies (numpy.fft.rfft).
    Complex input raises numpy's TypeError."""
    r = _fast(a, n, axis, norm, out, client, eng.RFFT)
    if r is not None:
        return r
    try:
        return _r2c1(a, n, axis, norm, out, client)
    except _Delegate:
        return np.fft.rfft(a, n, axis, norm, out=out)


def irfft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
          client: Optional[Client] = None) -> np.ndarray:
    """Inverse of rfft: n real samples (default 2*(m-1)) from m = a.shape[axis]
    Hermitian-half bins, cropped or zero-padded to n//2+1 (numpy.fft.irfft). Imaginary
    parts of the zero (and, n even, the Nyquist) bin are ignored, as numpy does."""
    r = _fast(a, n, axis, norm, out, client, eng.IRFFT)
    if r is not None:
        return r
    try:
        return _c2r1(a, n, axis, norm, out, client)
    except _Delegate:
        return np.fft.irfft(a, n, axis, norm, out=out)


def hfft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
         client: Optional[Client] = None) -> np.ndarray:
    """DFT of a Hermitian-symmetric signal given by its first half: n real values
    (numpy.fft.hfft = irfft(conj(a), n) with the norm's direction swapped)."""
    try:
        a = np.asarray(a)
        if not _served(a):
            raise _Delegate
        _check_norm(norm)
        return _c2r1(np.conjugate(a), n, axis, _SWAP[norm], out, client)
    except _Delegate:
        return np.fft.hfft(a, n, axis, norm, out=out)


def ihfft(a, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None, out=None, *,
          client: Optional[Client] = None) -> np.ndarray:
    """Inverse of hfft for real input: conj(rfft(a, n)) with the norm swapped
    (numpy.fft.ihfft)."""
    try:
        _check_norm(norm)
        res = _r2c1(a, n, axis, _SWAP[norm], None, client)
        return _finish(np.conjugate(res, out=res), out)
    except _Delegate:
        return np.fft.ihfft(a, n, axis, norm, out=out)


def _cook(a: np.ndarray, s, axes, invreal: bool = False):
    """numpy's _cook_nd_args: (sizes, normalised axes), with its DeprecationWarnings."""
    if s is None:
        shapeless = True
        s = list(a.shape) if axes is None else list(np.take(a.shape, axes))
    else:
        shapeless = False
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn(
                "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0)."
                " In a future version of NumPy, this will raise an error and `s[i]` will "
                "correspond to the size along the transformed axis specified by `axes[i]`."
                " To retain current behaviour, pass a sequence [0, ..., k-1] to `axes` for "
                "an array of dimension k.", DeprecationWarning, stacklevel=4)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise _Delegate
    if None in s:
        raise _Delegate  # numpy's deprecated None entries: numpy handles them
    axes = [_axis(ax, a.ndim) for ax in axes]
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    s = [a.shape[ax] if v == -1 else v for v, ax in zip(s, axes)]
    try:
        s = [operator.index(v) for v in s]
    except TypeError:
        raise _Delegate from None
    if not axes or any(v < 1 for v in s) or len(set(axes)) != len(axes):
        raise _Delegate  # nothing to do, numpy's error, or repeated axes: numpy's loop
    return s, axes


def _c2cn(a, s, axes, norm, out, forward, client):
    a = np.asarray(a)
    if not _served(a):
        raise _Delegate
    _check_norm(norm)
    s, axes = _cook(a, s, axes)
    x = eng.fix_shape(_complex(a), axes, s)
    res = eng.transform(client or default_client(), x, axes, eng.C2C, s, forward,
                        eng.norm_code(norm, forward))
    return _finish(res, out)


def fftn(a, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
         norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """N-D forward DFT over axes (default all, or the last len(s)), sizes s (crop or
    zero-pad) (numpy.fft.fftn). Up to three axes run as one daemon plan."""
    try:
        return _c2cn(a, s, axes, norm, out, True, client)
    except _Delegate:
        return np.fft.fftn(a, s, axes, norm, out=out)


def ifftn(a, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
          norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """N-D inverse DFT (numpy.fft.ifftn)."""
    try:
        return _c2cn(a, s, axes, norm, out, False, client)
    except _Delegate:
        return np.fft.ifftn(a, s, axes, norm, out=out)


def fft2(a, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
         norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """2-D forward DFT over axes (default the last two) (numpy.fft.fft2)."""
    try:
        return _c2cn(a, s, axes, norm, out, True, client)
    except _Delegate:
        return np.fft.fft2(a, s, axes, norm, out=out)


def ifft2(a, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
          norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """2-D inverse DFT (numpy.fft.ifft2)."""
    try:
        return _c2cn(a, s, axes, norm, out, False, client)
    except _Delegate:
        return np.fft.ifft2(a, s, axes, norm, out=out)


def _r2cn(a, s, axes, norm, out, client):
    a = np.asarray(a)
    if not _served(a) or a.dtype.kind == "c":
        raise _Delegate
    _check_norm(norm)
    s, axes = _cook(a, s, axes)
    x = eng.fix_shape(_real(a), axes, s)
    res = eng.transform(client or default_client(), x, axes, eng.R2C, s, True,
                        eng.norm_code(norm, True))
    return _finish(res, out)


def _c2rn(a, s, axes, norm, out, client):
    a = np.asarray(a)
    if not _served(a):
        raise _Delegate
    _check_norm(norm)
    s, axes = _cook(a, s, axes, invreal=True)
    half = s[:-1] + [s[-1] // 2 + 1]
    x = eng.fix_shape(_complex(a), axes, half)
    res = eng.transform(client or default_client(), x, axes, eng.C2R, s, False,
                        eng.norm_code(norm, False))
    # numpy's last step is irfft on the other axes' complex result when there are any
    return _finish(res, out, _real_result(a) if len(axes) == 1 else None)


def rfftn(a, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
          norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """N-D DFT of real input: the last axis of axes gives s[-1]//2+1 bins
    (numpy.fft.rfftn)."""
    try:
        return _r2cn(a, s, axes, norm, out, client)
    except _Delegate:
        return np.fft.rfftn(a, s, axes, norm, out=out)


def irfftn(a, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
           norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """Inverse of rfftn: real output of shape s over axes (default last axis
    2*(m-1)) (numpy.fft.irfftn)."""
    try:
        return _c2rn(a, s, axes, norm, out, client)
    except _Delegate:
        return np.fft.irfftn(a, s, axes, norm, out=out)


def rfft2(a, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
          norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """2-D rfftn (numpy.fft.rfft2)."""
    try:
        return _r2cn(a, s, axes, norm, out, client)
    except _Delegate:
        return np.fft.rfft2(a, s, axes, norm, out=out)


def irfft2(a, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
           norm: Optional[str] = None, out=None, *, client: Optional[Client] = None) -> np.ndarray:
    """2-D irfftn (numpy.fft.irfft2)."""
    try:
        return _c2rn(a, s, axes, norm, out, client)
    except _Delegate:
        return np.fft.irfft2(a, s, axes, norm, out=out)


__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft"]

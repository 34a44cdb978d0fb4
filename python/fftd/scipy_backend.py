# SPDX-License-Identifier: MIT
"""scipy.fft's backend (uarray protocol) computing on the daemon.

    import scipy.fft, fftd.scipy_backend as be
    with scipy.fft.set_backend(be):          # or scipy.fft.set_global_backend(be)
        y = scipy.fft.fft(x)                 #   (then scipy.fft.register_backend("scipy")
                                             #    so that what fftd leaves still runs)

Served: fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn,
hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn, with scipy's semantics (its shape/axes rules:
unique axes, -1 sizes; float16 computed and returned in single precision; integers in
double). ``workers`` is accepted (the daemon has its own threads) and ``overwrite_x``
ignored (allowed: it is a permission). Everything else returns NotImplemented so that
scipy's next backend (its own pocketfft) runs it or raises its own exception: DCT/DST
and the rest of scipy.fft, long double, a ``plan`` argument, invalid arguments
(so scipy's exact errors are raised), arrays that are not numpy arrays, empty
transforms, and every call in a process forked from one that used fftd (libfftd
cannot run after fork; scipy's test_multiprocess does that).
"""
from __future__ import annotations

import operator

import numpy as np

from . import _engine as eng
from .client import default_client, forked

__ua_domain__ = "numpy.scipy.fft"

try:  # scipy's own argument rules (a private helper; pinned scipy versions)
    from scipy.fft._pocketfft.helper import _init_nd_shape_and_axes
except ImportError:  # pragma: no cover
    _init_nd_shape_and_axes = None

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


class _Decline(Exception):
    """The call is not fftd's: __ua_function__ returns NotImplemented."""


def _array(x, real: bool) -> np.ndarray:
    """x as scipy computes it (float16 -> float32, ints -> float64), or _Decline."""
    if not isinstance(x, (np.ndarray, list, tuple, int, float, complex, np.generic)):
        raise _Decline
    a = np.asarray(x)
    if a.dtype.kind not in "biufc" or a.dtype.type in (np.longdouble, np.clongdouble):
        raise _Decline
    single = a.dtype.type in (np.float16, np.float32, np.complex64)
    if real:
        if a.dtype.kind == "c":
            raise _Decline  # scipy raises TypeError("x must be a real sequence")
        return np.asarray(a, np.float32 if single else np.float64)
    return np.asarray(a, np.complex64 if single else np.complex128)


def _options(norm, workers, plan) -> None:
    """_Decline unless norm is known, plan absent and workers valid."""
    if norm not in _NORMS or plan is not None:
        raise _Decline
    if workers is not None:
        try:
            w = operator.index(workers)
        except TypeError:
            raise _Decline from None
        if w == 0 or w < -(__import__("os").cpu_count() or 1):
            raise _Decline


def _nd(x: np.ndarray, s, axes):
    """scipy's (sizes, axes), or _Decline (scipy then raises its own error)."""
    if _init_nd_shape_and_axes is None or x.ndim == 0:
        raise _Decline
    try:
        shape, axes = _init_nd_shape_and_axes(x, s, axes)
    except (ValueError, TypeError):
        raise _Decline from None
    if not axes:
        raise _Decline
    return list(shape), list(axes)


def _1d(x: np.ndarray, n, axis, default):
    """([n], [axis]) normalised as scipy does, or _Decline."""
    if x.ndim == 0:
        raise _Decline
    try:
        axis = operator.index(axis)
        n = default(x.shape[axis if axis < 0 else axis]) if n is None else operator.index(n)
    except (TypeError, IndexError):
        raise _Decline from None
    if not -x.ndim <= axis < x.ndim or n < 1:
        raise _Decline
    return [n], [axis % x.ndim]


def _c2c(forward, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *,
         plan=None):
    _options(norm, workers, plan)
    a = _array(x, False)
    s, axes = _1d(a, n, axis, lambda m: m)
    return _go(a, axes, eng.C2C, s, forward, norm)


def _c2cn(forward, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *,
          plan=None):
    _options(norm, workers, plan)
    a = _array(x, False)
    s, axes = _nd(a, s, axes)
    return _go(a, axes, eng.C2C, s, forward, norm)


def _r2c(x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
    _options(norm, workers, plan)
    a = _array(x, True)
    s, axes = _1d(a, n, axis, lambda m: m)
    return _go(a, axes, eng.R2C, s, True, norm)


def _r2cn(x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
    _options(norm, workers, plan)
    a = _array(x, True)
    s, axes = _nd(a, s, axes)
    return _go(a, axes, eng.R2C, s, True, norm)


def _c2r(x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
    _options(norm, workers, plan)
    a = _array(x, False)
    s, axes = _1d(a, n, axis, lambda m: (m - 1) * 2)
    return _go(a, axes, eng.C2R, s, False, norm)


def _c2rn(x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
    _options(norm, workers, plan)
    a = _array(x, False)
    noshape = s is None
    s, axes = _nd(a, s, axes)
    if noshape:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if s[-1] < 1:
        raise _Decline
    return _go(a, axes, eng.C2R, s, False, norm)


def _go(a, axes, kind, s, forward, norm):
    """Crop/pad and run (the C2R input side has s[-1]//2+1 bins on the last axis)."""
    if any(v < 1 for v in s):
        raise _Decline
    half = s[:-1] + [s[-1] // 2 + 1] if kind == eng.C2R else s
    x = eng.fix_shape(a, axes, half)
    if x.size == 0:
        raise _Decline
    return eng.transform(default_client(), x, axes, kind, s, forward,
                         eng.norm_code(norm, forward))


def _hermitian_inverse(fn):
    """hfft/hfftn: irfft of conj(x) with the norm's direction swapped (scipy's c2r with
    forward=True)."""
    def run(x, *args, norm=None, **kw):
        if norm not in _NORMS:
            raise _Decline
        return fn(np.conjugate(_array(x, False)), *args, norm=_SWAP[norm], **kw)
    return run


def _hermitian_forward(fn):
    """ihfft/ihfftn: conj(rfft(x)) with the norm's direction swapped."""
    def run(x, *args, norm=None, **kw):
        if norm not in _NORMS:
            raise _Decline
        y = fn(x, *args, norm=_SWAP[norm], **kw)
        return np.conjugate(y, out=y)
    return run


def _with_axes(fn, default):
    """The *2 forms: fn with axes defaulting to (-2, -1)."""
    def run(x, s=None, axes=default, *args, **kw):
        return fn(x, s, axes, *args, **kw)
    return run


_FUNCS = {
    "fft": lambda *a, **k: _c2c(True, *a, **k),
    "ifft": lambda *a, **k: _c2c(False, *a, **k),
    "fftn": lambda *a, **k: _c2cn(True, *a, **k),
    "ifftn": lambda *a, **k: _c2cn(False, *a, **k),
    "rfft": _r2c,
    "irfft": _c2r,
    "rfftn": _r2cn,
    "irfftn": _c2rn,
    "hfft": _hermitian_inverse(_c2r),
    "ihfft": _hermitian_forward(_r2c),
    "hfftn": _hermitian_inverse(_c2rn),
    "ihfftn": _hermitian_forward(_r2cn),
}
_FUNCS["fft2"] = _with_axes(_FUNCS["fftn"], (-2, -1))
_FUNCS["ifft2"] = _with_axes(_FUNCS["ifftn"], (-2, -1))
_FUNCS["rfft2"] = _with_axes(_r2cn, (-2, -1))
_FUNCS["irfft2"] = _with_axes(_c2rn, (-2, -1))
_FUNCS["hfft2"] = _with_axes(_FUNCS["hfftn"], (-2, -1))
_FUNCS["ihfft2"] = _with_axes(_FUNCS["ihfftn"], (-2, -1))


def __ua_function__(method, args, kwargs):
    """uarray's entry: run method (a scipy.fft multimethod) on the daemon, or return
    NotImplemented for what fftd does not do (see the module's docstring)."""
    fn = _FUNCS.get(getattr(method, "__name__", ""))
    if fn is None or forked():
        return NotImplemented
    try:
        return fn(*args, **kwargs)
    except (_Decline, TypeError):
        return NotImplemented


def served() -> list:
    """Names of the scipy.fft functions this backend computes."""
    return sorted(_FUNCS)

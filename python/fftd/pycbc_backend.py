# SPDX-License-Identifier: MIT
"""A PyCBC FFT backend on the daemon: the module API of pycbc.fft's CPU backends
(pycbc/fft/npfft.py, fftw.py): ``fft(invec, outvec, prec, itype, otype)``,
``ifft(...)`` and the classes ``FFT`` and ``IFFT`` (batched, ``execute()``).

Register it with :func:`fftd.pycbc.register`, then select it:

    import fftd.pycbc; fftd.pycbc.register()
    from pycbc.fft.backend_support import set_backend
    set_backend(["fftd"])       # pycbc.filter.matched_filter now transforms on the daemon

Conventions are PyCBC's: forward exp(-2 pi i jk/n), both directions unnormalised (the
function API then scales by delta_t or delta_f itself); precisions single and double;
complex-to-complex, real-to-complex (forward), complex-to-real (inverse), in place or
not (in place: PyCBC's padded distances, the daemon keeps in and out apart). Plans are
kept per (size, batch, layout, kind, precision) for the process.
"""
from __future__ import annotations

import threading

import numpy as np

from ._lib import ffi, lib, check, C2C, R2C, C2R, F32, F64, FORWARD, INVERSE, NORM_NONE
from .client import RawPlan, default_client, make_desc

_plans: dict = {}
_lock = threading.Lock()


def _plan(size, nbatch, idist, odist, forward, prec, itype, otype) -> RawPlan:
    """The cached daemon plan of one PyCBC transform shape."""
    kind = C2C if itype == otype else (R2C if itype == "real" else C2R)
    p = F64 if prec == "double" else F32
    key = (size, nbatch, idist, odist, forward, kind, p)
    with _lock:
        plan = _plans.get(key)
        if plan is not None and plan.client._c is not None:
            return plan
    desc, _ = make_desc([size], kind, p, FORWARD if forward else INVERSE, NORM_NONE, nbatch,
                        idist=idist if nbatch > 1 else 0, odist=odist if nbatch > 1 else 0)
    plan = RawPlan(default_client(), desc)
    with _lock:
        _plans[key] = plan
    return plan


def _data(vec) -> np.ndarray:
    """The numpy array under a PyCBC Array (CPU scheme)."""
    d = vec.data if hasattr(vec, "data") else vec
    return np.asarray(d)


def _run(plan: RawPlan, invec, outvec) -> None:
    """Execute plan from invec's memory into outvec's (byte sizes checked)."""
    a, b = _data(invec), _data(outvec)
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        raise ValueError("fftd PyCBC backend: vectors must be contiguous")
    if a.nbytes < plan.in_bytes or b.nbytes < plan.out_bytes:
        raise ValueError(f"fftd PyCBC backend: vectors of {a.nbytes} / {b.nbytes} bytes, "
                         f"the transform needs {plan.in_bytes} / {plan.out_bytes}")
    check(lib.fftd_execute(plan.ptr, ffi.from_buffer(a),
                           ffi.from_buffer(b, require_writable=True)), "fftd_execute")


def fft(invec, outvec, prec, itype, otype) -> None:
    """Forward, unnormalised: complex->complex or real->complex (len(invec) samples)."""
    if itype == "complex" and otype == "real":
        raise ValueError("fftd PyCBC backend: no complex-to-real forward FFT")
    n = len(invec)
    _run(_plan(n, 1, 0, 0, True, prec, itype, otype), invec, outvec)


def ifft(invec, outvec, prec, itype, otype) -> None:
    """Inverse, unnormalised: complex->complex or complex->real (len(outvec) samples)."""
    if itype == "real":
        raise ValueError("fftd PyCBC backend: no real-to-complex inverse FFT")
    n = len(outvec)
    _run(_plan(n, 1, 0, 0, False, prec, itype, otype), invec, outvec)


def _base():
    """PyCBC's _BaseFFT and _BaseIFFT (imported late: pycbc is optional)."""
    from pycbc.fft.core import _BaseFFT, _BaseIFFT, _check_fft_args

    return _BaseFFT, _BaseIFFT, _check_fft_args


_BaseFFT, _BaseIFFT, _check_fft_args = _base()


class FFT(_BaseFFT):
    """PyCBC's class API, forward: nbatch transforms of size, PyCBC's distances."""

    def __init__(self, invec, outvec, nbatch=1, size=None):
        super().__init__(invec, outvec, nbatch, size)
        self.prec, self.itype, self.otype = _check_fft_args(invec, outvec)
        self._plan = _plan(self.size, self.nbatch, self.idist, self.odist, True, self.prec,
                           self.itype, self.otype)

    def execute(self):
        """Transform invec into outvec (no rescaling, as PyCBC's class API)."""
        _run(self._plan, self.invec, self.outvec)


class IFFT(_BaseIFFT):
    """PyCBC's class API, inverse."""

    def __init__(self, invec, outvec, nbatch=1, size=None):
        super().__init__(invec, outvec, nbatch, size)
        self.prec, self.itype, self.otype = _check_fft_args(invec, outvec)
        self._plan = _plan(self.size, self.nbatch, self.idist, self.odist, False, self.prec,
                           self.itype, self.otype)

    def execute(self):
        """Transform invec into outvec (no rescaling)."""
        _run(self._plan, self.invec, self.outvec)

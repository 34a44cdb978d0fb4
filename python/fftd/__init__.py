# SPDX-License-Identifier: MIT
"""fftd: numpy arrays in and out of the fftd FFT service.

A binding over libfftd (cffi, ABI mode; see fftd._lib for how the library is found), not
a second implementation of the protocol. What it offers:

* numpy.fft's functions with numpy's semantics (:mod:`fftd.numpy_api`), run by the
  daemon: ``fftd.fft(a)``, ``fftd.rfftn(a, s, axes, norm)`` ...;
* :class:`Client` (a connection; :func:`default_client` is the one the functions use,
  on ``$FFTD_URL`` or the default socket);
* :class:`Plan` (a reusable daemon plan: ``execute``, ``execute_async`` returning a
  ``concurrent.futures.Future``, ``stream`` for :class:`Stream`);
* :func:`empty` / :func:`zeros`: numpy arrays in shared buffers that travel by
  reference;
* :class:`Array` (memory resident in the daemon's device) and :func:`mf_bank` (the
  matched-filter bank search on resident arrays);
* :class:`Error` and its subclasses, carrying fftd's code, name and message;
* :mod:`fftd.scipy_backend` (scipy.fft's uarray backend) and
  :mod:`fftd.pycbc_backend` (a PyCBC FFT backend; :func:`fftd.pycbc.register`).
"""
from __future__ import annotations

from ._lib import lib as _lib, ffi as _ffi
from .errors import (Error, ArgumentError, UnsupportedError, LimitError, ConnectionFailed,
                     BackendError, CanceledError, BusyError)
from .client import Client, default_client, set_default_client, empty, zeros
from .numpy_api import (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2,
                        rfftn, irfftn, hfft, ihfft)
from .plan import Plan, Stream
from .arrays import Array, mf_bank, MFResult

from numpy.fft import fftfreq, rfftfreq, fftshift, ifftshift  # helpers, for drop-in use

__version__ = "0.1.0"


def library_version() -> str:
    """The loaded libfftd's version ("MAJOR.MINOR.PATCH")."""
    return _ffi.string(_lib.fftd_version()).decode()


__all__ = ["Error", "ArgumentError", "UnsupportedError", "LimitError", "ConnectionFailed",
           "BackendError", "CanceledError", "BusyError", "Client", "default_client",
           "set_default_client", "empty", "zeros", "fft", "ifft", "fft2", "ifft2", "fftn",
           "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft", "ihfft",
           "Plan", "Stream", "Array", "mf_bank", "MFResult", "fftfreq", "rfftfreq",
           "fftshift", "ifftshift", "library_version"]

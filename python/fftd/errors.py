# SPDX-License-Identifier: MIT
"""fftd's errors as Python exceptions.

Every failed libfftd call raises an :class:`Error` that carries the code of fftd.h's
error table (``code``), its symbolic name (``name``, e.g. ``"FFTD_EINVAL"``) and the
detailed message the library or the daemon gave (``message``). Subclasses group the
codes by what a caller does about them; those about the caller's arguments are also
``ValueError``, the connection's also ``ConnectionError``, so ordinary ``except``
clauses keep working.
"""
from __future__ import annotations

from ._lib import ffi, lib

# Error codes of fftd.h (FFTD_ERRNO_MAP and the tagged ranges).
EINVAL, ENOMEM, EUNSUPPORTED, ELIMIT, EOVERFLOW, ESIZE, ENOPLAN = 1, 2, 3, 4, 5, 6, 7
EPROTO, EVERSION, ETIMEDOUT, ECLOSED, ECONNREFUSED, ESHUTDOWN = 8, 9, 10, 11, 12, 13
EBACKEND, EBUSY, ENODEVICE, EDEVMEM, EINTERNAL, EDEADLINE = 14, 15, 16, 17, 18, 19
ECANCELED, EREFUSED = 20, 21
ESYSERR, ENNGERR, ECUDAERR, ECUFFTERR = 0x10000000, 0x20000000, 0x30000000, 0x40000000
_RANGE_MASK = 0x70000000


class Error(Exception):
    """A failed fftd call: ``code`` (int), ``name`` ("FFTD_..."), ``message`` (str)."""

    def __init__(self, code: int, name: str, message: str):
        self.code = code
        self.name = name
        self.message = message
        super().__init__(f"{name}: {message}")


class ArgumentError(Error, ValueError):
    """The request was wrong: EINVAL, ESIZE, EOVERFLOW, ENOPLAN, ENODEVICE."""


class UnsupportedError(Error, NotImplementedError):
    """The daemon's backend cannot do this transform (EUNSUPPORTED)."""


class LimitError(Error):
    """Over a configured limit or out of memory: ELIMIT, ENOMEM, EDEVMEM."""


class ConnectionFailed(Error, ConnectionError):
    """The connection failed: ECLOSED, ECONNREFUSED, ESHUTDOWN, ETIMEDOUT, EPROTO,
    EVERSION, EREFUSED, and NNG's or the OS's codes (ENNGERR, ESYSERR)."""


class BackendError(Error):
    """The backend failed: EBACKEND, EINTERNAL, CUDA's and cuFFT's codes."""


class CanceledError(Error):
    """The execution never ran: ECANCELED, EDEADLINE."""


class BusyError(Error):
    """The operation is still in progress (EBUSY)."""


_FAMILY = {
    EINVAL: ArgumentError, ESIZE: ArgumentError, EOVERFLOW: ArgumentError,
    ENOPLAN: ArgumentError, ENODEVICE: ArgumentError,
    EUNSUPPORTED: UnsupportedError,
    ELIMIT: LimitError, ENOMEM: LimitError, EDEVMEM: LimitError,
    ECLOSED: ConnectionFailed, ECONNREFUSED: ConnectionFailed, ESHUTDOWN: ConnectionFailed,
    ETIMEDOUT: ConnectionFailed, EPROTO: ConnectionFailed, EVERSION: ConnectionFailed,
    EREFUSED: ConnectionFailed,
    EBACKEND: BackendError, EINTERNAL: BackendError,
    ECANCELED: CanceledError, EDEADLINE: CanceledError,
    EBUSY: BusyError,
}
_RANGE_FAMILY = {ESYSERR: ConnectionFailed, ENNGERR: ConnectionFailed,
                 ECUDAERR: BackendError, ECUFFTERR: BackendError}


def error_class(code: int) -> type:
    """The Error subclass for code (Error itself for an unknown one)."""
    rng = code & _RANGE_MASK
    if rng:
        return _RANGE_FAMILY.get(rng, Error)
    return _FAMILY.get(code, Error)


def error_from_code(code: int, detail: str = "", what: str = "") -> Error:
    """The exception for code: the library's name and message, the detail, and what failed."""
    name = ffi.string(lib.fftd_err_name(code)).decode()
    msg = ffi.string(lib.fftd_strerror(code)).decode()
    if detail and detail != msg:
        msg = f"{msg} ({detail})"
    if what:
        msg = f"{what}: {msg}"
    return error_class(code)(code, name, msg)

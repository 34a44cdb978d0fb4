# SPDX-License-Identifier: MIT
"""Registration of :mod:`fftd.pycbc_backend` among PyCBC's CPU FFT backends.

PyCBC has no entry point for FFT backends: its CPU scheme keeps them in
``pycbc.fft.backend_cpu`` (``_alist``, ``_adict``, filled at import from a fixed list),
and ``pycbc.fft.backend_support`` keeps the union of all schemes'. :func:`register` adds
``"fftd"`` to both, after PyCBC's own, so nothing changes until a program asks for it
with ``pycbc.fft.backend_support.set_backend(["fftd"])`` (or ``--fft-backends fftd``).
"""
from __future__ import annotations

NAME = "fftd"


def register() -> None:
    """Add the "fftd" backend to PyCBC's CPU scheme (idempotent)."""
    import pycbc.fft.backend_cpu as cpu
    import pycbc.fft.backend_support as support

    from . import pycbc_backend

    if NAME not in cpu._alist:
        cpu._alist.append(NAME)
    cpu._adict[NAME] = pycbc_backend
    cpu._backend_dict[NAME] = "fftd"
    if NAME not in cpu._backend_list:
        cpu._backend_list.append(NAME)
    if NAME not in support._all_backends_list:
        support._all_backends_list.append(NAME)
    support._all_backends_dict[NAME] = pycbc_backend

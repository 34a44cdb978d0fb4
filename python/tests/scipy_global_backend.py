# SPDX-License-Identifier: MIT
"""A pytest plugin that runs scipy's own scipy.fft tests with fftd installed as scipy.fft's
global backend:

    PYTHONPATH=python/tests python -m pytest -p scipy_global_backend --pyargs scipy.fft

At configure time it starts a CPU daemon (tests/daemon.py), makes the package's default
client point at it, calls ``scipy.fft.set_global_backend(fftd.scipy_backend)`` and
registers scipy's own backend behind it (``register_backend("scipy")``), so that what
fftd declines (NotImplemented: DCT/DST, plans, invalid arguments) runs or fails exactly
as scipy would. At the end it prints how many transforms the daemon executed (so a run
in which fftd silently did nothing shows) and fails the session if the daemon did not
exit 0.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from daemon import Daemon  # noqa: E402

_state = {}


def pytest_configure(config):
    """Start the daemon and install the backend before any test module is imported."""
    import fftd
    import fftd.scipy_backend as be
    import scipy.fft

    d = Daemon()
    _state["daemon"] = d
    fftd.set_default_client(fftd.Client(d.url, 60000))
    scipy.fft.set_global_backend(be)
    scipy.fft.register_backend("scipy")


def pytest_unconfigure(config):
    """Report the daemon's executions, stop it, check its exit status."""
    import fftd

    d = _state.pop("daemon", None)
    if d is None:
        return
    c = fftd.set_default_client(None)
    if c is not None:
        st = c.stats()
        print(f"\nscipy_global_backend: fftd executed {st['executes']} transforms "
              f"({st['errors']} errors) for scipy.fft's tests")
        c.close()
    rc = d.stop()
    if rc != 0:
        print(f"scipy_global_backend: fftd exited {rc}")
        config._fftd_exit = rc  # noqa: SLF001


def pytest_sessionfinish(session, exitstatus):
    """Executes nothing: the daemon's exit is checked in unconfigure."""

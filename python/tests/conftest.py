# SPDX-License-Identifier: MIT
"""pytest fixtures of the package's tests: one CPU daemon for the session (the module's
default client points at it), a client per test, and a seeded random generator."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from daemon import Daemon  # noqa: E402  (sets FFTD_LIB first)

import fftd  # noqa: E402


@pytest.fixture(scope="session")
def daemon():
    """The session's daemon; it must exit 0 on SIGTERM at the end."""
    d = Daemon()
    os.environ["FFTD_URL"] = d.url
    fftd.set_default_client(fftd.Client(d.url, 20000))
    yield d
    old = fftd.set_default_client(None)
    if old is not None:
        old.close()
    assert d.stop() == 0, "fftd did not exit 0 after SIGTERM"


@pytest.fixture
def client(daemon):
    """A fresh client of the session's daemon, closed after the test."""
    c = fftd.Client(daemon.url, 20000)
    yield c
    c.close()


@pytest.fixture
def rng(request):
    """A generator seeded from the test's name (reproducible, different per test)."""
    seed = abs(hash(request.node.nodeid)) % (2**32)
    print(f"seed {seed}")
    return np.random.default_rng(seed)

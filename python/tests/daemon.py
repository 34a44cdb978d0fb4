# SPDX-License-Identifier: MIT
"""A private CPU daemon for the Python tests: build/fftd (or $FFTD_BIN) with the fftw
backend on a socket in a fresh temporary directory, waited for until it answers, and
stopped with SIGTERM (its exit status checked). Also points $FFTD_LIB at the build's
libfftd.so before the package is imported."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFTD_BUILD", ROOT / "build"))
os.environ.setdefault("FFTD_LIB", str(BUILD / "libfftd.so"))


class Daemon:
    """One fftd process: .url to connect to, .stop() returns its exit status."""

    def __init__(self, *args: str):
        binary = os.environ.get("FFTD_BIN", str(BUILD / "fftd"))
        self.tmp = tempfile.mkdtemp(prefix="fftd-py.")
        self.url = f"ipc://{self.tmp}/fftd.sock"
        self.log = open(Path(self.tmp) / "fftd.log", "w+")
        self.proc = subprocess.Popen([binary, "--listen", self.url, "--backend", "fftw",
                                      "--log-level", "warn", *args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        import fftd  # after FFTD_LIB is set

        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fftd exited {self.proc.returncode}: {self.logtext()}")
            try:
                fftd.Client(self.url, 1000).close()
                return
            except fftd.ConnectionFailed:
                if time.monotonic() > deadline:
                    raise RuntimeError("fftd did not answer within 30 s: " + self.logtext())
                time.sleep(0.05)

    def logtext(self) -> str:
        """The daemon's log so far."""
        self.log.flush()
        return (Path(self.tmp) / "fftd.log").read_text()

    def stop(self) -> int:
        """SIGTERM, wait up to 30 s, return the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.proc.returncode

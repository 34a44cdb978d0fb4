# SPDX-License-Identifier: MIT
"""Memory resident in the daemon's device (:class:`Array`, fftd_array) and the
matched-filter bank search on it (:func:`mf_bank`, fftd_mf_bank).

An Array lives in the daemon (GPU memory on the cuda backend, the daemon's host memory
on fftw) between requests, so a chain of steps moves no data through the socket or PCIe;
it belongs to its client's connection. ``mf_bank`` runs FINDCHIRP's filter (Allen et al.
2012, PRD 85 122006, sec. IV; PyCBC's matched_filter_core) for a slice of a template bank
against one data segment, all resident, and returns per-template peaks, clustered
triggers and optional rho series.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ._lib import ffi, lib, check, F32, F64
from .client import Client, default_client

PEAK_DTYPE = np.dtype([("rho", "f8"), ("t", "i8"), ("sigma", "f8"), ("z_re", "f8"),
                       ("z_im", "f8")])
TRIGGER_DTYPE = np.dtype([("template_index", "i8"), ("t", "i8"), ("rho", "f8"),
                          ("z_re", "f8"), ("z_im", "f8")])


class Array:
    """``Array(nbytes, device=-1, client=None)``: nbytes (> 0) of zero-filled memory on
    a device of the daemon (-1: device 0). ``write``/``read`` copy host data in and out
    (arrays in the client's shared buffers go by reference). Errors: ArgumentError,
    LimitError (per-client limits, device memory), UnsupportedError.
    """

    def __init__(self, nbytes: int, device: int = -1, client: Optional[Client] = None):
        self.client = client or default_client()
        ap = ffi.new("fftd_array **")
        check(lib.fftd_array_create(self.client._ptr(), int(device), int(nbytes), ap),
              "fftd_array_create")
        self._a = ap[0]
        self.nbytes = int(lib.fftd_array_size(self._a))
        self.device = int(lib.fftd_array_device(self._a))

    @classmethod
    def from_numpy(cls, a: np.ndarray, device: int = -1,
                   client: Optional[Client] = None) -> "Array":
        """A new Array holding a copy of a's bytes (C order)."""
        a = np.ascontiguousarray(a)
        arr = cls(max(a.nbytes, 1), device, client)
        arr.write(a)
        return arr

    def _ptr(self):
        """The fftd_array pointer; ValueError once closed."""
        if self._a is None:
            raise ValueError("the fftd.Array was closed")
        return self._a

    def write(self, src: np.ndarray, offset: int = 0) -> None:
        """Copy src's bytes (C order) into [offset, offset + src.nbytes). Blocking."""
        src = np.ascontiguousarray(src)
        check(lib.fftd_array_write(self._ptr(), int(offset), ffi.from_buffer(src), src.nbytes),
              "fftd_array_write")

    def read(self, dtype=np.uint8, shape=None, offset: int = 0,
             out: Optional[np.ndarray] = None) -> np.ndarray:
        """Copy bytes from offset into out, or a new array of dtype and shape (default:
        the rest of the array). Blocking."""
        if out is None:
            dt = np.dtype(dtype)
            if shape is None:
                shape = ((self.nbytes - int(offset)) // dt.itemsize,)
            out = np.empty(shape, dt)
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        check(lib.fftd_array_read(self._ptr(), int(offset),
                                  ffi.from_buffer(out, require_writable=True), out.nbytes),
              "fftd_array_read")
        return out

    def close(self) -> None:
        """Free the array in the daemon."""
        if self._a is not None:
            a, self._a = self._a, None
            lib.fftd_array_destroy(a)

    def __enter__(self) -> "Array":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


@dataclass
class MFResult:
    """mf_bank's result: peaks (count, PEAK_DTYPE: rho, t, sigma, z_re, z_im),
    triggers (TRIGGER_DTYPE, loudest max_triggers kept), ntotal (triggers found),
    series (len(series_index) x (t_end - t_begin) rho values, or None)."""

    peaks: np.ndarray
    triggers: np.ndarray
    ntotal: int
    series: Optional[np.ndarray]


def mf_bank(data: Array, psd: Array, templates: Array, count: int, *, n: int,
            delta_f: float, precision: str = "f64", kmin: int = 0, kmax: int = 0,
            t_begin: int = 0, t_end: int = 0, threshold: float = 0.0, cluster: int = 1,
            max_triggers: int = 0, series_index: Sequence[int] = (), data_offset: int = 0,
            psd_offset: int = 0, templates_offset: int = 0, sigmasq_mode: str = "compute",
            sigmasq: Optional[Array] = None, sigmasq_offset: int = 0,
            client: Optional[Client] = None) -> MFResult:
    """Matched-filter bank search (fftd_mf_bank) on resident arrays of one device.

    data: D, n//2+1 complex of precision at data_offset; psd: S, n//2+1 reals (one-sided
    PSD, 1/Hz); templates: count contiguous complex spectra of n//2+1 bins. delta_f in
    Hz; bins [kmin, kmax) (kmax 0: all); samples [t_begin, t_end) (t_end 0: n);
    triggers above threshold, one per window of cluster samples. f32 users scale data and
    templates by 2^69 and the PSD by its square, as PyCBC does. sigmasq_mode "store"
    writes each template's sigma^2 (PyCBC's sigmasq) as count float64 into the Array
    sigmasq at sigmasq_offset, "use" takes them from there instead of summing them (a
    search of many segments against one PSD); "compute" (the default) does neither.
    Errors: ArgumentError (ranges, non-finite input, a given sigma^2 negative or not
    finite), LimitError (results over max_request_bytes: search in slices),
    UnsupportedError.
    """
    cl = client or data.client
    d = ffi.new("fftd_mf_desc *")
    check(lib.fftd_mf_desc_init_sized(d, ffi.sizeof("fftd_mf_desc")), "fftd_mf_desc_init")
    prec = {"f64": F64, "f32": F32}.get(precision)
    if prec is None:
        raise ValueError(f"precision must be 'f64' or 'f32', not {precision!r}")
    d.n, d.precision, d.delta_f = int(n), prec, float(delta_f)
    d.kmin, d.kmax, d.t_begin, d.t_end = int(kmin), int(kmax), int(t_begin), int(t_end)
    d.threshold, d.cluster = float(threshold), int(cluster)
    modes = {"compute": lib.FFTD_MF_SIGMASQ_COMPUTE, "store": lib.FFTD_MF_SIGMASQ_STORE,
             "use": lib.FFTD_MF_SIGMASQ_USE}
    if sigmasq_mode not in modes:
        raise ValueError(f"sigmasq_mode must be 'compute', 'store' or 'use', "
                         f"not {sigmasq_mode!r}")
    d.sigmasq_mode = modes[sigmasq_mode]
    if sigmasq_mode != "compute":
        if sigmasq is None:
            raise ValueError(f"sigmasq_mode {sigmasq_mode!r} needs the sigmasq Array")
        d.sigmasq, d.sigmasq_offset = sigmasq._ptr(), int(sigmasq_offset)
    peaks = np.zeros(max(int(count), 0), PEAK_DTYPE)
    trig = np.zeros(max(int(max_triggers), 0), TRIGGER_DTYPE)
    ntrig = ffi.new("size_t *")
    ntotal = ffi.new("size_t *")
    idx = np.ascontiguousarray(series_index, np.int64)
    series = None
    if len(idx):
        span = (int(t_end) or int(n)) - int(t_begin)
        series = np.zeros((len(idx), max(span, 0)), np.float32 if prec == F32 else np.float64)
    check(lib.fftd_mf_bank_sized(
        cl._ptr(), d, ffi.sizeof("fftd_mf_desc"), data._ptr(), int(data_offset), psd._ptr(),
        int(psd_offset), templates._ptr(), int(templates_offset), int(count),
        ffi.cast("fftd_mf_peak *", ffi.from_buffer(peaks, require_writable=True)),
        PEAK_DTYPE.itemsize,
        ffi.cast("fftd_mf_trigger *", ffi.from_buffer(trig, require_writable=True))
        if len(trig) else ffi.NULL,
        TRIGGER_DTYPE.itemsize, len(trig), ntrig, ntotal,
        ffi.cast("int64_t *", ffi.from_buffer(idx)) if len(idx) else ffi.NULL, len(idx),
        ffi.from_buffer(series, require_writable=True) if series is not None else ffi.NULL),
        "fftd_mf_bank")
    return MFResult(peaks, trig[: ntrig[0]].copy(), int(ntotal[0]), series)

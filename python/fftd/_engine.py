# SPDX-License-Identifier: MIT
"""The one transform path of the numpy and scipy front ends: an n-dimensional C2C, R2C
or C2R over any axes of an array, run through daemon plans.

fftd's plans express a batch of rank 1..3 transforms over the trailing axes of a
contiguous array (FFTW's advanced layout), so the transformed axes are moved to the end
and the array made contiguous (no copy when it already is, as for the usual last-axis
call); more than three axes are done as several plans (C2C is separable; R2C takes the
real axis with up to two others first, C2R last, as numpy orders them). A batch larger
than the daemon's max_batch or max_request_bytes is split into chunks of one plan.
Arrays that lie in the client's shared buffers get their output in a shared buffer too,
so both travel by reference. Plans come from the client's cache. Results come from the
output pools (fftd._pool): host memory already faulted in for large ones, the client's
pooled shared buffers for shared inputs.

:func:`fast` is the numpy API's fast path for its common call (a 1-D fft, ifft, rfft or
irfft over the last axis of a C-contiguous array, default n): one dict lookup of
(shape, dtype, function, norm) in the client's ready entries, then the execution.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ._lib import ffi, lib, check, C2C, R2C, C2R, F32, F64, FORWARD, INVERSE
from ._lib import NORM_NONE, NORM_BY_N, NORM_ORTHO
from ._pool import HOST, POOL_MIN_BYTES, host_empty, shared_empty
from .client import Client, _FAST_ENTRIES

MAX_RANK = 3
FFT, IFFT, RFFT, IRFFT = 0, 1, 2, 3  # the functions of the fast path
_NORMS = (None, "backward", "ortho", "forward")
_SINGLE = (np.float16, np.float32, np.complex64)  # numpy computes these in f32
_LONG = (np.longdouble, np.clongdouble)
_MISS = object()


def norm_code(norm: Optional[str], forward: bool) -> int:
    """fftd_norm for numpy's norm keyword in this direction (ValueError if unknown)."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "ortho":
        return NORM_ORTHO
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def precision_of(dtype: np.dtype) -> int:
    """F32 for float32/complex64, F64 for float64/complex128."""
    return F32 if dtype in (np.float32, np.complex64) else F64


def fix_shape(x: np.ndarray, axes: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """x cropped or zero-padded to sizes along axes (a view when only cropping)."""
    index = [slice(None)] * x.ndim
    grow = False
    for ax, n in zip(axes, sizes):
        index[ax] = slice(0, min(n, x.shape[ax]))
        grow |= x.shape[ax] < n
    if not grow:
        return x[tuple(index)]
    shape = list(x.shape)
    for ax, n in zip(axes, sizes):
        shape[ax] = n
    z = np.zeros(shape, x.dtype)
    z[tuple(index)] = x[tuple(index)]
    return z


def transform(client: Client, x: np.ndarray, axes: Sequence[int], kind: int,
              sizes: Sequence[int], forward: bool, norm: int,
              shared: Optional[bool] = None) -> np.ndarray:
    """The transform of x over axes (unique, non-negative), logical sizes `sizes`.

    x is complex64/128 for C2C and C2R, float32/64 for R2C, already cropped or padded:
    x.shape[axes[i]] == sizes[i], but for C2R the last axis has sizes[-1] // 2 + 1.
    norm is an fftd_norm for this direction. Returns a new array (complex, or real for
    C2R) of x's shape with the axes' sizes of the output side.
    """
    axes, sizes = list(axes), list(sizes)
    if shared is None:
        shared = client.is_shared(x)
    if len(axes) <= MAX_RANK:
        return _run(client, x, axes, kind, sizes, forward, norm, shared)
    if kind == C2C:
        x = _run(client, x, axes[-MAX_RANK:], C2C, sizes[-MAX_RANK:], forward, norm, shared)
        return transform(client, x, axes[:-MAX_RANK], C2C, sizes[:-MAX_RANK], forward, norm,
                         shared)
    if kind == R2C:
        x = _run(client, x, axes[-MAX_RANK:], R2C, sizes[-MAX_RANK:], True, norm, shared)
        return transform(client, x, axes[:-MAX_RANK], C2C, sizes[:-MAX_RANK], True, norm,
                         shared)
    x = transform(client, x, axes[:-MAX_RANK], C2C, sizes[:-MAX_RANK], False, norm, shared)
    return _run(client, x, axes[-MAX_RANK:], C2R, sizes[-MAX_RANK:], False, norm, shared)


def _run(client: Client, x: np.ndarray, axes: list, kind: int, sizes: list, forward: bool,
         norm: int, shared: bool) -> np.ndarray:
    """One plan's worth: rank len(axes) <= 3, batched over the other axes."""
    k = len(axes)
    nd = x.ndim
    ends = list(range(nd - k, nd))
    xt = np.moveaxis(x, axes, ends) if axes != ends else x
    prec = precision_of(x.dtype)
    if kind == R2C:
        out_sizes = sizes[:-1] + [sizes[-1] // 2 + 1]
        out_dt = np.complex64 if prec == F32 else np.complex128
    elif kind == C2R:
        out_sizes = sizes
        out_dt = np.float32 if prec == F32 else np.float64
    else:
        out_sizes = sizes
        out_dt = x.dtype
    batch_shape = xt.shape[: nd - k]
    oshape = tuple(batch_shape) + tuple(out_sizes)
    batch = int(np.prod(batch_shape, dtype=np.int64))
    if shared:
        oc = shared_empty(client, oshape, out_dt)
        xc = xt if xt.flags.c_contiguous else shared_empty(client, xt.shape, xt.dtype)
        if xc is not xt:
            xc[...] = xt
    else:
        oc = host_empty(oshape, out_dt)
        xc = np.ascontiguousarray(xt)
    if batch > 0:
        _execute_batches(client, xc.reshape(batch, -1), oc.reshape(batch, -1), sizes, kind,
                         prec, FORWARD if forward else INVERSE, norm)
    return np.moveaxis(oc, ends, axes) if axes != ends else oc


def _execute_batches(client: Client, xin: np.ndarray, xout: np.ndarray, sizes: list,
                     kind: int, prec: int, direction: int, norm: int) -> None:
    """Execute xin (batch, in elements) into xout (batch, out elements), in chunks that
    fit the daemon's max_batch and max_request_bytes."""
    batch = xin.shape[0]
    per = max(xin.shape[1] * xin.itemsize, xout.shape[1] * xout.itemsize, 1)
    chunk = batch
    maxb = client.info.get("max_batch") or 0
    maxr = client.info.get("max_request_bytes") or 0
    if maxb:
        chunk = min(chunk, maxb)
    if maxr:
        chunk = min(chunk, max(1, maxr // per))
    b = 0
    while b < batch:
        m = min(chunk, batch - b)
        plan = client.raw_plan(sizes, kind, prec, direction, norm, m)
        src = ffi.from_buffer(xin[b:b + m])
        dst = ffi.from_buffer(xout[b:b + m], require_writable=True)
        check(lib.fftd_execute(plan.ptr, src, dst), "fftd_execute")
        b += m


def fast(client: Client, a: np.ndarray, fn: int, norm: Optional[str]):
    """fn (FFT, IFFT, RFFT, IRFFT) of a over its last axis with numpy's default n, or
    None when the general path must take the call.

    a is a C-contiguous ndarray and norm None or a str (the caller checked). The entry
    for (a.shape, a.dtype, fn, norm) is made once per client (:func:`_fast_entry`; None
    for calls it does not serve), so a repeated call does no argument normalisation.
    """
    key = (a.shape, a.dtype, fn, norm)
    fastd = client._fast
    e = fastd.get(key, _MISS)
    if e is _MISS:
        e = _fast_entry(client, a, fn, norm)
        if len(fastd) >= _FAST_ENTRIES:
            fastd.clear()
        fastd[key] = e
    if e is None:
        return None
    plan, conv, oshape, odt, obytes = e
    ptr = plan.ptr
    if ptr is None:  # the plan was closed (the client is closing)
        return None
    if conv is not None:
        a = a.astype(conv)
    src = ffi.from_buffer(a)
    if client._buffers:
        lo = int(ffi.cast("uintptr_t", src))
        shared = client._holds(lo, lo + a.nbytes)
    else:
        shared = False
    if shared:
        out = shared_empty(client, oshape, odt)
    elif obytes >= POOL_MIN_BYTES:
        out = HOST.array(oshape, odt)
    else:
        out = np.empty(oshape, odt)
    check(lib.fftd_execute(ptr, src, ffi.from_buffer(out, require_writable=True)),
          "fftd_execute")
    return out


def _fast_entry(client: Client, a: np.ndarray, fn: int, norm: Optional[str]):
    """The ready entry (plan, input conversion dtype or None, output shape, dtype and
    bytes) of fn on arrays like a, or None when numpy's semantics need the general path
    (dtypes fftd does not compute or whose result numpy casts, empty batches, sizes
    numpy rejects, unknown norms, batches the daemon's limits would split)."""
    dt = a.dtype
    if (a.ndim == 0 or dt.kind not in "biufc" or dt.type in _LONG or dt.itemsize > 16
            or norm not in _NORMS):
        return None
    single = dt.type in _SINGLE
    m = a.shape[-1]
    batch = int(np.prod(a.shape[:-1], dtype=np.int64))
    cdt = np.dtype(np.complex64 if single else np.complex128)
    rdt = np.dtype(np.float32 if single else np.float64)
    if m < 1 or batch < 1:
        return None
    if fn in (FFT, IFFT):
        kind, n, forward, idt, odt, om = C2C, m, fn == FFT, cdt, cdt, m
    elif fn == RFFT:
        if dt.kind == "c":
            return None  # numpy's TypeError
        kind, n, forward, idt, odt, om = R2C, m, True, rdt, cdt, m // 2 + 1
    else:
        if m < 2 or dt.type == np.float16:
            return None  # numpy's error; float16's result is cast back to float16
        kind, n, forward, idt, odt, om = C2R, 2 * (m - 1), False, cdt, rdt, 2 * (m - 1)
    per = max(m * idt.itemsize, om * odt.itemsize)
    maxb = client.info.get("max_batch") or 0
    maxr = client.info.get("max_request_bytes") or 0
    if (maxb and batch > maxb) or (maxr and batch * per > maxr):
        return None  # _execute_batches splits it
    plan = client.raw_plan([n], kind, precision_of(idt), FORWARD if forward else INVERSE,
                           norm_code(norm, forward), batch)
    oshape = a.shape[:-1] + (om,)
    return (plan, None if dt == idt else idt, oshape, odt, batch * om * odt.itemsize)


__all__ = ["transform", "fast", "fix_shape", "norm_code", "precision_of", "C2C", "R2C", "C2R",
           "NORM_NONE", "NORM_BY_N", "NORM_ORTHO"]

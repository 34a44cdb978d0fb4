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
so both travel by reference. Plans come from the client's cache.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ._lib import ffi, lib, check, C2C, R2C, C2R, F32, F64, FORWARD, INVERSE
from ._lib import NORM_NONE, NORM_BY_N, NORM_ORTHO
from .client import Client

MAX_RANK = 3


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
        oc = client.empty(oshape, out_dt)
        xc = xt if xt.flags.c_contiguous else client.empty(xt.shape, xt.dtype)
        if xc is not xt:
            xc[...] = xt
    else:
        oc = np.empty(oshape, out_dt)
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


__all__ = ["transform", "fix_shape", "norm_code", "precision_of", "C2C", "R2C", "C2R",
           "NORM_NONE", "NORM_BY_N", "NORM_ORTHO"]

# SPDX-License-Identifier: MIT
"""Reusable plans (:class:`Plan`), asynchronous execution (``concurrent.futures.Future``)
and streams (:class:`Stream`): fftd.h's plan, fftd_execute_async and fftd_stream.

A Plan describes a batch of rank 1..3 transforms in FFTW's advanced layout (sizes,
batch, strides, distances, embedded sizes: fftd_plan_desc) and holds the daemon's plan
until closed or collected. ``execute`` takes numpy arrays; with the default (contiguous)
layout it checks their shapes, otherwise their byte sizes against
fftd_plan_input_bytes / fftd_plan_output_bytes.
"""
from __future__ import annotations

import concurrent.futures
import threading
from typing import Optional, Sequence

import numpy as np

from ._lib import ffi, lib, check, C2C, R2C, C2R, F16, F32, F64, FORWARD, INVERSE
from ._engine import norm_code
from .client import Client, RawPlan, default_client, make_desc
from .errors import error_from_code

_KINDS = {"c2c": C2C, "r2c": R2C, "c2r": C2R}
_PRECISIONS = {"f64": F64, "f32": F32, "f16": F16}
_INPUTS = {"native": 0, "int8": 1}  # fftd_input_type
# element dtypes of (precision, complex?): f16 complex is two binary16 numbers
_DTYPES = {(F64, True): np.dtype(np.complex128), (F64, False): np.dtype(np.float64),
           (F32, True): np.dtype(np.complex64), (F32, False): np.dtype(np.float32),
           (F16, True): np.dtype((np.float16, (2,))), (F16, False): np.dtype(np.float16)}


class Plan:
    """A daemon plan: ``Plan(n, kind="c2c", precision="f64", forward=True, norm=None,
    batch=1, *, layout..., algorithm=None, tolerance=0.0, input="native", device=-1,
    realtime=False, client=None)``.

    n: the logical sizes (rank 1..3, slowest first; real sizes for r2c/c2r). kind:
    "c2c", "r2c" (forward only), "c2r" (inverse only). precision: "f64", "f32", "f16"
    (f16 on GPU backends: complex elements are float16 pairs, shape (..., 2)). norm:
    numpy's "backward" | "ortho" | "forward" meaning for this direction. Layout keywords
    inembed, istride, idist, onembed, ostride, odist: fftd_plan_desc's (0 or None:
    default, contiguous). algorithm: "auto", "fftw", "cufft", "tc16", "split16".
    tolerance: the relative L2 error accepted per transform (fftd_plan_desc.tolerance):
    with algorithm "auto" the daemon runs the fastest algorithm whose error bound fits
    it, maybe at a lower precision (f32 data through tc16); 0: the precision's usual
    accuracy. The algorithm attribute names the one chosen. input: "native" (the
    precision's elements) or "int8" (fftd_plan_desc.input = FFTD_INPUT_I8: radio
    voltages as they come, forward c2c and r2c only; c2c takes int8 (re, im) pairs, shape
    (..., 2), r2c int8 reals; the daemon converts them exactly, and a GPU daemon on the
    device, so only int8 crosses PCIe). An int8 plan takes int8 arrays only (no silent
    conversion of other dtypes: ValueError).
    Errors: ArgumentError, UnsupportedError, LimitError (fftd_plan_create).

    Attributes: input_dtype, output_dtype, input_shape / output_shape (contiguous
    layouts: (batch, *sizes), the complex side halved), input_bytes, output_bytes,
    algorithm (the daemon's choice).
    """

    def __init__(self, n: Sequence[int], kind: str = "c2c", precision: str = "f64",
                 forward: bool = True, norm: Optional[str] = None, batch: int = 1, *,
                 inembed=None, istride: int = 0, idist: int = 0, onembed=None,
                 ostride: int = 0, odist: int = 0, algorithm: Optional[str] = None,
                 tolerance: float = 0.0, input: str = "native", device: int = -1,
                 realtime: bool = False, client: Optional[Client] = None):
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {sorted(_KINDS)}, not {kind!r}")
        if precision not in _PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(_PRECISIONS)}, not {precision!r}")
        if input not in _INPUTS:
            raise ValueError(f"input must be one of {sorted(_INPUTS)}, not {input!r}")
        self.client = client or default_client()
        self.n = tuple(int(v) for v in n)
        self.kind = kind
        self.batch = int(batch)
        k = _KINDS[kind]
        if k == R2C:
            forward = True
        elif k == C2R:
            forward = False
        self.forward = forward
        p = _PRECISIONS[precision]
        desc, _keep = make_desc(self.n, k, p, FORWARD if forward else INVERSE,
                                norm_code(norm, forward), self.batch, inembed=inembed,
                                istride=istride, idist=idist, onembed=onembed,
                                ostride=ostride, odist=odist, algorithm=algorithm,
                                device=device, priority=1 if realtime else 0,
                                tolerance=tolerance, input_type=_INPUTS[input])
        self._raw = RawPlan(self.client, desc)
        self.int8 = input == "int8"
        self.input_dtype = ((np.dtype((np.int8, (2,))) if k != R2C else np.dtype(np.int8))
                            if self.int8 else _DTYPES[(p, k != R2C)])
        self.output_dtype = _DTYPES[(p, k != C2R)]
        half = self.n[:-1] + (self.n[-1] // 2 + 1,)
        dense = not any([inembed, istride, idist, onembed, ostride, odist])
        self.input_shape = ((self.batch,) + (half if k == C2R else self.n)) if dense else None
        self.output_shape = ((self.batch,) + (half if k == R2C else self.n)) if dense else None
        self.input_bytes = self._raw.in_bytes
        self.output_bytes = self._raw.out_bytes
        self.algorithm = ffi.string(lib.fftd_plan_algorithm(self._raw.ptr)).decode()

    def _ptr(self):
        """The fftd_plan pointer; ArgumentError (ENOPLAN) once closed."""
        if self._raw.ptr is None:
            from .errors import ENOPLAN

            raise error_from_code(ENOPLAN, "the fftd.Plan was closed")
        return self._raw.ptr

    def _buffers(self, x, out):
        """Checked (input, output) arrays for one execution (output made if None)."""
        x = np.asarray(x)
        if self.int8 and x.dtype != np.int8:
            raise ValueError(f"an int8 plan takes int8 arrays, not {x.dtype}")
        if x.dtype != self.input_dtype.base or x.nbytes != self.input_bytes:
            if self.input_shape is not None:
                x = np.asarray(x, self.input_dtype.base)
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        if x.nbytes != self.input_bytes:
            raise ValueError(f"input has {x.nbytes} bytes, the plan reads {self.input_bytes}"
                             f" (shape {self.input_shape}, {self.input_dtype})")
        if out is None:
            if self.output_shape is not None:
                shape = self.output_shape + self.output_dtype.shape
                out = (self.client.empty(shape, self.output_dtype.base)
                       if self.client.is_shared(x) else np.empty(shape, self.output_dtype.base))
            else:
                out = np.zeros(self.output_bytes // self.output_dtype.itemsize,
                               self.output_dtype)
        if not (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("out must be a writeable C-contiguous numpy array")
        if out.nbytes != self.output_bytes:
            raise ValueError(f"out has {out.nbytes} bytes, the plan writes {self.output_bytes}")
        return x, out

    def execute(self, x, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Run the plan on x (input layout; converted to input_dtype if its layout is the
        default), writing out (made if None); returns out. Blocking. Errors: ValueError
        (sizes), fftd.Error (fftd_execute)."""
        x, out = self._buffers(x, out)
        check(lib.fftd_execute(self._ptr(), ffi.from_buffer(x),
                               ffi.from_buffer(out, require_writable=True)), "fftd_execute")
        return out

    __call__ = execute

    def execute_async(self, x, out: Optional[np.ndarray] = None) -> concurrent.futures.Future:
        """Start an execution and return a concurrent.futures.Future whose result is out.

        x is copied before this returns; out (made if None) is written when the daemon
        answers and must not be touched until then. The future's exception is the
        fftd.Error of a failed execution. Up to the daemon's max_inflight_per_client
        executions are in flight; further calls wait for a slot.
        """
        x, out = self._buffers(x, out)
        fut: concurrent.futures.Future = concurrent.futures.Future()
        fut.set_running_or_notify_cancel()
        token = _Pending.add(fut, out, self)
        rv = lib.fftd_execute_async(self._ptr(), ffi.from_buffer(x),
                                    ffi.from_buffer(out, require_writable=True),
                                    _on_done, token, ffi.NULL)
        if rv != 0:  # the callback never runs
            _Pending.pop(token)
            check(rv, "fftd_execute_async")
        return fut

    def stream(self, depth: int = 4) -> "Stream":
        """A :class:`Stream` of depth slots on this plan."""
        return Stream(self, depth)

    def execute_arrays(self, src: "object", dst: "object", src_offset: int = 0,
                       dst_offset: int = 0) -> None:
        """Run the plan on resident arrays (fftd.Array): input at src_offset bytes of
        src, output at dst_offset of dst; no data moves to or from this process."""
        check(lib.fftd_execute_arrays(self._ptr(), src._ptr(), int(src_offset), dst._ptr(),
                                      int(dst_offset)), "fftd_execute_arrays")

    def close(self) -> None:
        """Destroy the plan in the daemon (no execution may be in flight)."""
        self._raw.close()

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"fftd.Plan(n={self.n}, kind={self.kind!r}, batch={self.batch}, "
                f"forward={self.forward}, algorithm={self.algorithm!r})")


class _Pending:
    """Futures in flight: the callback's data pointer is an index here (no cdata handle
    crosses threads), and what the execution uses stays referenced until it completes."""

    _lock = threading.Lock()
    _next = 1
    _items: dict = {}

    @classmethod
    def add(cls, fut, out, plan):
        with cls._lock:
            i = cls._next
            cls._next += 1
            cls._items[i] = (fut, out, plan)
        return ffi.cast("void *", i)

    @classmethod
    def pop(cls, token):
        with cls._lock:
            return cls._items.pop(int(ffi.cast("uintptr_t", token)), None)


@ffi.callback("void(fftd_request *, int, void *)")
def _on_done(_req, status, data):
    """Completion of fftd_execute_async, on a library I/O thread: settle the future."""
    item = _Pending.pop(data)
    if item is None:
        return
    fut, out, _plan = item
    if status == 0:
        fut.set_result(out)
    else:
        fut.set_exception(error_from_code(status, "", "fftd_execute_async"))


class Stream:
    """An fftd_stream: up to depth executions of one plan in flight through shared slots.

    ``submit(x)`` copies x into the next slot and starts it (BusyError when depth are in
    flight); ``input()`` gives the next slot's input array to fill in place, then
    ``submit()`` with no argument; ``wait(out=None)`` waits for the oldest execution and
    returns its result (copied into out, or a new array). Driven by one thread at a
    time. Needs an ipc:// client of one daemon.
    """

    def __init__(self, plan: Plan, depth: int = 4):
        if plan.input_shape is None:
            raise ValueError("streams need a plan of the default (contiguous) layout")
        sp = ffi.new("fftd_stream **")
        check(lib.fftd_stream_open(plan._ptr(), int(depth), sp), "fftd_stream_open")
        self._s = sp[0]
        self.plan = plan
        self.depth = int(depth)

    def input(self) -> Optional[np.ndarray]:
        """The next slot's input array (plan.input_shape), or None if depth are in flight.
        Valid until that slot is submitted and answered."""
        p = lib.fftd_stream_input(self._s)
        if p == ffi.NULL:
            return None
        pl = self.plan
        return np.frombuffer(ffi.buffer(p, pl.input_bytes), pl.input_dtype.base).reshape(
            pl.input_shape + pl.input_dtype.shape)

    def submit(self, x=None) -> None:
        """Start the next execution on x (copied into the slot), or on the slot's input
        as filled through input() when x is None."""
        if x is None:
            check(lib.fftd_stream_submit(self._s, ffi.NULL), "fftd_stream_submit")
            return
        x = np.ascontiguousarray(x, self.plan.input_dtype.base)
        if x.nbytes != self.plan.input_bytes:
            raise ValueError(f"input has {x.nbytes} bytes, the plan reads {self.plan.input_bytes}")
        check(lib.fftd_stream_submit(self._s, ffi.from_buffer(x)), "fftd_stream_submit")

    def wait(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Wait for the oldest execution in flight; its result in out (or a new array)."""
        pl = self.plan
        if out is None:
            out = np.empty(pl.output_shape + pl.output_dtype.shape, pl.output_dtype.base)
        elif not (out.flags.c_contiguous and out.nbytes == pl.output_bytes):
            raise ValueError("out must be C-contiguous with the plan's output size")
        check(lib.fftd_stream_wait(self._s, ffi.from_buffer(out, require_writable=True),
                                   ffi.NULL), "fftd_stream_wait")
        return out

    @property
    def pending(self) -> int:
        """Executions in flight."""
        return int(lib.fftd_stream_pending(self._s))

    def close(self) -> None:
        """Wait for what is in flight and free the stream."""
        if self._s is not None:
            s, self._s = self._s, None
            lib.fftd_stream_close(s)

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

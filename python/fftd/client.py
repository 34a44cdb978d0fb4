# SPDX-License-Identifier: MIT
"""The connection to the daemon: :class:`Client`, the default client, and the raw plans
the numpy functions use.

A :class:`Client` wraps one ``fftd_client`` (``fftd_client_open``): its plans, shared
buffers (:meth:`Client.empty`) and resident arrays belong to it and die with it, as
fftd.h says. :func:`default_client` opens, on first use, a client on
``fftd_default_url()`` (``$FFTD_URL``, else the system or per-user socket) that the
module-level functions (``fftd.fft`` ...) use; :func:`set_default_client` replaces it.
A Client may be used from any number of threads (libfftd's calls are thread-safe, and
cffi releases the GIL around each of them).
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from ._lib import ffi, lib, check
from ._pool import Block, Pool

_PLAN_CACHE = 64  # raw plans a client keeps for the numpy functions (LRU)
_FAST_ENTRIES = 32  # ready fast-path entries a client keeps (_engine.fast)
_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()  # every open client (fork)


class RawPlan:
    """One daemon plan (``fftd_plan``) and its byte sizes; freed when collected or closed."""

    __slots__ = ("client", "ptr", "in_bytes", "out_bytes", "__weakref__")

    def __init__(self, client: "Client", desc: Any):
        pp = ffi.new("fftd_plan **")
        check(lib.fftd_plan_create_sized(client._ptr(), desc, ffi.sizeof("fftd_plan_desc"), pp),
              "fftd_plan_create")
        self.client = client  # keeps the connection open while the plan lives
        self.ptr = pp[0]
        self.in_bytes = int(lib.fftd_plan_input_bytes(self.ptr))
        self.out_bytes = int(lib.fftd_plan_output_bytes(self.ptr))

    def close(self) -> None:
        """Destroy the plan in the daemon (idempotent)."""
        if self.ptr is not None:
            lib.fftd_plan_destroy(self.ptr)
            self.ptr = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing to do
            pass


def make_desc(n, kind: int, precision: int, direction: int, norm: int, batch: int = 1,
              *, inembed=None, istride: int = 0, idist: int = 0, onembed=None,
              ostride: int = 0, odist: int = 0, algorithm: Optional[str] = None,
              device: int = -1, priority: int = 0, tolerance: float = 0.0,
              input_type: int = 0) -> tuple:
    """An initialised ``fftd_plan_desc`` (fftd_plan_desc_init, then the fields given).

    Returns (desc, keepalive): keepalive holds the algorithm string's memory.
    """
    n = [int(v) for v in n]
    desc = ffi.new("fftd_plan_desc *")
    nn = ffi.new("int64_t[3]", n + [0] * (3 - len(n)))
    check(lib.fftd_plan_desc_init_sized(desc, ffi.sizeof("fftd_plan_desc"), len(n), nn, kind,
                                        precision), "fftd_plan_desc_init")
    desc.batch = int(batch)
    desc.direction = direction
    desc.norm = norm
    for i, v in enumerate(inembed or ()):
        desc.inembed[i] = int(v)
    for i, v in enumerate(onembed or ()):
        desc.onembed[i] = int(v)
    desc.istride, desc.idist = int(istride), int(idist)
    desc.ostride, desc.odist = int(ostride), int(odist)
    keep = None
    if algorithm:
        keep = ffi.new("char[]", algorithm.encode())
        desc.algorithm = keep
    desc.device = int(device)
    desc.priority = int(priority)
    desc.tolerance = float(tolerance)
    desc.input = int(input_type)
    return desc, keep


class Client:
    """A connection to an fftd daemon.

    ``Client(url=None, timeout_ms=0)``: url is an NNG URL ("ipc:///run/fftd/fftd.sock",
    "tcp://host:5555", a comma-separated list of daemons) or None for
    ``fftd_default_url()``; timeout_ms bounds the connect and every later call (0: 60 s,
    -1: none). Raises :class:`fftd.ConnectionFailed` (ECONNREFUSED, ETIMEDOUT, ...).
    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, url: Optional[str] = None, timeout_ms: int = 0):
        global _opened
        if _forked:
            from .errors import error_from_code, EUNSUPPORTED

            raise error_from_code(EUNSUPPORTED, "libfftd cannot run in a process forked from "
                                  "one that used it: use multiprocessing's 'spawn' or "
                                  "'forkserver' start method")
        _opened = True
        pp = ffi.new("fftd_client **")
        check(lib.fftd_client_open(pp, url.encode() if url else ffi.NULL, int(timeout_ms)),
              f"fftd_client_open({url!r})")
        self._c = pp[0]
        self.url = url
        self._lock = threading.Lock()
        self._plans: OrderedDict = OrderedDict()
        self._buffers: dict[int, int] = {}  # address -> size of live shared buffers
        self._stale = False  # opened by the parent of this (forked) process
        # (shape, dtype, function, norm) -> ready entry or None: _engine.fast
        self._fast: dict = {}
        self._shared_pool = Pool(self._shm_make, self._shm_free)
        _clients.add(self)
        info = ffi.new("fftd_info *")
        check(lib.fftd_client_info_sized(self._c, info, ffi.sizeof("fftd_info"),
                                         ffi.sizeof("fftd_device_info")), "fftd_client_info")
        self.info = _info_dict(info)

    def _ptr(self):
        """The fftd_client pointer; ConnectionFailed if the client was closed,
        UnsupportedError in a process forked after it was opened."""
        if self._c is None or self._stale:
            from .errors import error_from_code, ECLOSED, EUNSUPPORTED

            if self._stale:
                raise error_from_code(EUNSUPPORTED, "this fftd.Client was opened before "
                                      "fork: libfftd cannot run in the forked process")
            raise error_from_code(ECLOSED, "the fftd.Client was closed")
        return self._c

    def close(self) -> None:
        """Close the connection; the daemon frees its plans. Later calls fail (ECLOSED).
        Pooled result buffers are freed now if idle, else when their arrays go."""
        if self._stale:  # a forked child: the parent's connection is not ours to close
            return
        self._fast.clear()
        self._shared_pool.close()
        with self._lock:
            plans = list(self._plans.values())
            self._plans.clear()
        for p in plans:
            p.close()
        if self._c is not None:
            c, self._c = self._c, None
            lib.fftd_client_close(c)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ping(self) -> float:
        """Round trip to the daemon, in microseconds."""
        rtt = ffi.new("double *")
        check(lib.fftd_ping(self._ptr(), rtt), "fftd_ping")
        return float(rtt[0])

    def stats(self) -> dict:
        """The daemon's counters (fftd_get_stats): sessions, plans, requests, executes,
        bytes_in, bytes_out, cache_*, ... as a dict of ints."""
        st = ffi.new("fftd_stats *")
        check(lib.fftd_get_stats_sized(self._ptr(), st, ffi.sizeof("fftd_stats")),
              "fftd_get_stats")
        return {k: int(getattr(st, k)) for k, _ in ffi.typeof("fftd_stats").fields}

    def raw_plan(self, n, kind: int, precision: int, direction: int, norm: int,
                 batch: int) -> RawPlan:
        """A cached contiguous plan of this shape (LRU of _PLAN_CACHE plans)."""
        key = (tuple(n), kind, precision, direction, norm, batch)
        self._ptr()  # closed, or opened before fork: raise before using a cached plan
        with self._lock:
            p = self._plans.get(key)
            if p is not None:
                self._plans.move_to_end(key)
                return p
        desc, _keep = make_desc(n, kind, precision, direction, norm, batch)
        p = RawPlan(self, desc)
        old = []
        with self._lock:
            self._plans[key] = p
            while len(self._plans) > _PLAN_CACHE:
                old.append(self._plans.popitem(last=False)[1])
        if old:  # fast-path entries must not keep evicted plans alive
            for k, e in list(self._fast.items()):
                if e is not None and e[0] in old:
                    self._fast.pop(k, None)
        del old  # each destroyed once no caller holds it (RawPlan.__del__)
        return p

    def _shm_make(self, size: int) -> Block:
        """A new fftd_buffer of size bytes for the shared pool, registered as shared
        memory; on LimitError the pool's idle buffers are freed and it is tried again."""
        bp = ffi.new("fftd_buffer **")
        rv = lib.fftd_buffer_create(self._ptr(), size, bp)
        if rv != 0 and self._shared_pool.idle():
            self._shared_pool.trim()
            rv = lib.fftd_buffer_create(self._ptr(), size, bp)
        check(rv, "fftd_buffer_create")
        addr = int(ffi.cast("uintptr_t", lib.fftd_buffer_data(bp[0])))
        self._buffers[addr] = size
        return Block(addr, size, bp[0])

    def _shm_free(self, block: Block) -> None:
        """Destroy a shared pool's buffer (the library keeps the connection's memory
        alive if the client was closed first)."""
        self._buffers.pop(block.addr, None)
        buf, block.mem = block.mem, None
        if buf is not None:
            lib.fftd_buffer_destroy(buf)

    def empty(self, shape, dtype=np.float64, order: str = "C") -> np.ndarray:
        """A new numpy array in a shared-memory buffer of this client (uninitialised).

        Transforms whose input and output lie in such buffers move no payload through
        the socket: the daemon reads and writes these pages directly. The buffer is
        released when the array (and every view of it) is collected. Raises
        UnsupportedError when the connection is not ipc:// to one daemon, LimitError
        over the daemon's per-client buffer limit.
        """
        dt = np.dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(int(s) for s in shape)
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * dt.itemsize, 1)
        bp = ffi.new("fftd_buffer **")
        check(lib.fftd_buffer_create(self._ptr(), nbytes, bp), "fftd_buffer_create")
        buf = bp[0]
        addr = lib.fftd_buffer_data(buf)
        size = int(lib.fftd_buffer_size(buf))
        key = int(ffi.cast("uintptr_t", addr))
        self._buffers[key] = size
        buffers = self._buffers

        def release(_p, buf=buf, key=key):
            buffers.pop(key, None)
            lib.fftd_buffer_destroy(buf)  # the library keeps the connection's memory alive

        owner = ffi.gc(ffi.cast("char *", addr), release)
        raw = np.frombuffer(ffi.buffer(owner, size), dtype=np.uint8)
        return raw[: int(np.prod(shape, dtype=np.int64)) * dt.itemsize].view(dt).reshape(
            shape, order=order)

    def zeros(self, shape, dtype=np.float64, order: str = "C") -> np.ndarray:
        """As :meth:`empty`, filled with zeros."""
        a = self.empty(shape, dtype, order)
        a[...] = 0
        return a

    def is_shared(self, a: np.ndarray) -> bool:
        """True if all of a's memory lies inside one of this client's shared buffers."""
        if a.nbytes == 0:
            return False
        lo, hi = _byte_bounds(a)
        return self._holds(lo, hi)

    def _holds(self, lo: int, hi: int) -> bool:
        """True if the bytes [lo, hi) lie inside one of this client's shared buffers."""
        for start, size in list(self._buffers.items()):
            if start <= lo and hi <= start + size:
                return True
        return False


def _byte_bounds(a: np.ndarray) -> tuple:
    """The first and one-past-last byte addresses of a's memory."""
    lo = hi = a.__array_interface__["data"][0]
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + a.itemsize


def _info_dict(info) -> dict:
    """fftd_info as a dict (strings decoded)."""
    s = lambda b: ffi.string(b).decode()  # noqa: E731
    return {
        "protocol_version": info.protocol_version,
        "server_version": s(info.server_version),
        "backend": s(info.backend),
        "devices": [{"index": d.index, "name": s(d.name), "backend": s(d.backend),
                     "memory_bytes": d.memory_bytes} for d in info.devices[0:info.ndevices]],
        "algorithms": [s(a) for a in info.algorithms[0:info.nalgorithms]],
        "precisions": [p for p in ("f64", "f32", "f16") if info.precisions & (1 << ("f64", "f32", "f16").index(p))],
        "max_request_bytes": info.max_request_bytes,
        "max_rank": info.max_rank,
        "max_batch": info.max_batch,
        "max_plans_per_client": info.max_plans_per_client,
        "max_inflight_per_client": info.max_inflight_per_client,
        "ndaemons": info.ndaemons,
    }


_default: Optional[Client] = None
_default_lock = threading.Lock()
_opened = False  # a client was opened in this process
_forked = False  # this process was forked from one that had opened a client


def default_client() -> Client:
    """The module's client, opened on first use on fftd_default_url() ($FFTD_URL ...)."""
    global _default
    c = _default
    if c is not None and c._c is not None:
        return c
    with _default_lock:
        if _default is None or _default._c is None:
            _default = Client()
        return _default


def set_default_client(client: Optional[Client]) -> Optional[Client]:
    """Make client the one the module-level functions use; returns the previous one
    (not closed). None: the next call opens a new default client."""
    global _default
    with _default_lock:
        old, _default = _default, client
    return old


def empty(shape, dtype=np.float64, order: str = "C", *, client: Optional[Client] = None) -> np.ndarray:
    """A numpy array in a shared buffer of client (default: the default client); see
    :meth:`Client.empty`."""
    return (client or default_client()).empty(shape, dtype, order)


def zeros(shape, dtype=np.float64, order: str = "C", *, client: Optional[Client] = None) -> np.ndarray:
    """As :func:`empty`, filled with zeros."""
    return (client or default_client()).zeros(shape, dtype, order)


def _after_fork_in_child() -> None:
    """A forked child cannot use its parent's connection (libfftd's I/O threads are not
    copied by fork): forget it, without closing it, so the child opens its own on first
    use. Clients the program made itself raise UnsupportedError in the child (their
    plans and pooled buffers are left alone, never destroyed from here)."""
    global _default, _default_lock, _forked
    _default = None
    _default_lock = threading.Lock()
    _forked = _opened or _forked
    for c in list(_clients):
        c._stale = True
        c._fast = {}
        c._lock = threading.Lock()
        c._shared_pool._abandon()


def forked() -> bool:
    """True in a process forked from one that had opened a client: libfftd (NNG's
    threads and global state) cannot run there, so no client can be opened."""
    return _forked


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _close_default() -> None:
    """Close the default client at exit, before the library's threads are torn down."""
    c = _default
    if c is not None:
        c.close()


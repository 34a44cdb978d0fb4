# SPDX-License-Identifier: MIT
"""Output memory of the transform front ends that does not fault on every call: pools of
ready blocks, keyed by size, from which result arrays are made.

numpy's API returns a new array per call; for a large result (>= POOL_MIN_BYTES) a fresh
allocation costs the kernel's page faults and zeroing on every call, and a fresh shared
buffer (fftd_buffer) a memfd that the daemon must map. A :class:`Pool` keeps blocks
already made (host blocks page-aligned and every page touched once; shared blocks are
the client's fftd_buffers, registered as its shared memory so that results travel by
reference). :meth:`Pool.array` returns an ordinary numpy array whose base is an owner
object; when the last array or view on that memory is collected, the owner's
``__del__`` gives the block back, so the pool never hands out memory a live result
holds. Idle blocks are bounded (POOL_MAX_IDLE blocks and POOL_MAX_IDLE_BYTES per pool,
the least recently returned freed first). The host pool is one per process
(:data:`HOST`); each :class:`fftd.Client` has a shared pool, closed with it.
"""
from __future__ import annotations

import collections
import os
import threading
from typing import Callable

import numpy as np

POOL_MIN_BYTES = 256 << 10  # smaller results: np.empty (numpy's allocator reuses them)
POOL_MAX_IDLE = 4  # idle blocks a pool keeps
POOL_MAX_IDLE_BYTES = 1 << 30  # and their bytes at most
PAGE = 4096


class Block:
    """One piece of memory: addr (int), size (bytes), and what keeps it (mem)."""

    __slots__ = ("addr", "size", "mem")

    def __init__(self, addr: int, size: int, mem):
        self.addr, self.size, self.mem = addr, size, mem


class _Owner:
    """The base of a result array: holds its block and gives it back when collected."""

    __slots__ = ("__array_interface__", "pool", "block")

    def __del__(self):
        try:
            self.pool.give_back(self.block)
        except Exception:  # interpreter shutdown: nothing to give back to
            pass


class Pool:
    """Blocks of memory made by make(size) -> Block and freed by free(block).

    array() takes an idle block of the exact (page-rounded) size or makes one; blocks
    come back through give_back (from owners' __del__, any thread, any time: it only
    appends to a deque and trims when the lock is free).
    """

    def __init__(self, make: Callable[[int], Block], free: Callable[[Block], None],
                 max_idle: int = POOL_MAX_IDLE, max_idle_bytes: int = POOL_MAX_IDLE_BYTES):
        self._make, self._free = make, free
        self.max_idle, self.max_idle_bytes = max_idle, max_idle_bytes
        self._lock = threading.Lock()
        self._idle: list = []  # oldest returned first
        self._returned: collections.deque = collections.deque()
        self.closed = False
        self.made = 0  # blocks made (for tests and the bench)

    def array(self, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array of shape and dtype on a pooled block."""
        dtype = np.dtype(dtype)
        nbytes = dtype.itemsize
        for s in shape:
            nbytes *= s
        size = max(-(-nbytes // PAGE) * PAGE, PAGE)
        block = None
        with self._lock:
            self._drain()
            for i in range(len(self._idle) - 1, -1, -1):
                if self._idle[i].size == size:
                    block = self._idle.pop(i)
                    break
        if block is None:
            block = self._make(size)
            self.made += 1
        owner = _Owner()
        owner.pool, owner.block = self, block
        owner.__array_interface__ = {"shape": tuple(shape), "typestr": dtype.str,
                                     "data": (block.addr, False), "version": 3}
        return np.asarray(owner)

    def give_back(self, block: Block) -> None:
        """Return a block whose last array is gone (an owner's __del__)."""
        self._returned.append(block)
        if self._lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._lock.release()

    def _drain(self) -> None:
        """Move returned blocks to the idle list and free the oldest over the bounds
        (the lock held)."""
        while self._returned:
            self._idle.append(self._returned.popleft())
        if self.closed:
            victims, self._idle = self._idle, []
        else:
            victims = []
            total = sum(b.size for b in self._idle)
            while self._idle and (len(self._idle) > self.max_idle
                                  or total > self.max_idle_bytes):
                b = self._idle.pop(0)
                total -= b.size
                victims.append(b)
        for b in victims:
            self._free(b)

    def trim(self) -> None:
        """Free every idle block (a LimitError on making one; tests)."""
        with self._lock:
            self._drain()
            victims, self._idle = self._idle, []
        for b in victims:
            self._free(b)

    def close(self) -> None:
        """Free idle blocks now and every live one when its array goes."""
        with self._lock:
            self.closed = True
            self._drain()

    def idle(self) -> int:
        """Idle blocks now (tests)."""
        with self._lock:
            self._drain()
            return len(self._idle)

    def _after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held)."""
        self._lock = threading.Lock()

    def _abandon(self) -> None:
        """In a forked child, for a pool of the parent's client: a fresh lock, closed,
        blocks never freed here (libfftd cannot run in the child; the parent frees)."""
        self._lock = threading.Lock()
        self._free = lambda _block: None
        self._idle = []
        self._returned.clear()
        self.closed = True


def _host_make(size: int) -> Block:
    """A page-aligned host block with every page touched (faulted in) once."""
    raw = np.empty(size + PAGE, np.uint8)
    off = -raw.__array_interface__["data"][0] % PAGE
    mem = raw[off:off + size]
    mem[::PAGE] = 0
    return Block(mem.__array_interface__["data"][0], size, mem)


def _host_free(block: Block) -> None:
    """Drop the host block's memory."""
    block.mem = None


HOST = Pool(_host_make, _host_free)


def host_empty(shape: tuple, dtype) -> np.ndarray:
    """np.empty(shape, dtype), from the host pool when it is large."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for s in shape:
        nbytes *= s
    if nbytes < POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    return HOST.array(shape, dtype)


def shared_empty(client, shape: tuple, dtype) -> np.ndarray:
    """An array in client's shared memory from its pool (any size: a new fftd_buffer
    costs a memfd and the daemon's mapping), or a new client.empty once it is closed."""
    pool = client._shared_pool
    if pool.closed:
        return client.empty(shape, dtype)
    return pool.array(shape, dtype)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=HOST._after_fork)

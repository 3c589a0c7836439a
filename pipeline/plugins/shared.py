"""The memory a worker shares with the process that runs a solver from outside (`host.py`):
a file mapped by both, holding a request's puzzles, the answers as they are made, and a header
that says how far the solver got, so that what it answered before it crashed or hung is kept.

    memory = SharedMemory.create()           # the worker: an unlinked file, its fd passed on
    rows = memory.rows(n)                    # views of the first n rows' regions (grown first)
    rows.grids[:] = grids; rows.state[:] = PENDING
    memory.header[ROW]                       # the row in hand (-1: none)

The header's slots (int64): `TICK`, bumped by the solver's side at every call and answer (the
keeper's clock for the per-puzzle timeout starts again at each bump); `ROW`, the row being
asked; `PHASE` (`ASKING`, `RETIMING`: every row answered, some timed again; `BATCH`: one call
holds the rows, so none is known answered until it returns); `BUDGET`, the puzzles the call in
hand holds (its timeout is that many times a puzzle's).

A row's `state`: `PENDING`, `ANSWERED` (its answer is in the regions) or `FAILED` (its
`errors` slot holds a sentence). The file lives in /dev/shm where there is one (memory, never
a disk), is unlinked at once (nothing is left behind, whatever ends the processes), and is
sparse: only the pages a request touches take memory.
"""

import mmap
import os
import tempfile
from typing import NamedTuple

import numpy as np

TICK, ROW, PHASE, BUDGET = 0, 1, 2, 3
ASKING, RETIMING, BATCH = 0, 1, 2
PENDING, ANSWERED, FAILED = 0, 1, 2
HEADER_BYTES = 4096
ERROR_BYTES = 320  # a row's sentence, UTF-8, cut to fit
RECORD = 82  # a puzzle for a C batch function: 81 characters and a NUL
UNSAID = np.uint64(2**64 - 1)  # a C function's count or guesses not written


class Rows(NamedTuple):
    """Views of a request's n rows in the shared file."""

    grids: np.ndarray  # (n, 81) uint8: the puzzles asked, 0 for a blank
    state: np.ndarray  # (n,) uint8: PENDING, ANSWERED, FAILED
    counts: np.ndarray  # (n,) int64: solutions found (-1 unsaid; CLASH: givens clash)
    solutions: np.ndarray  # (n, 81) uint8: the grid returned, zeros where none
    guesses: np.ndarray  # (n,) int64: -1 unsaid
    solve_ns: np.ndarray  # (n,) int64
    errors: np.ndarray  # (n, ERROR_BYTES) uint8: a FAILED row's sentence
    records: np.ndarray  # (n, RECORD) uint8: a C batch function's puzzles
    raw_counts: np.ndarray  # (n,) uint64: its counts, UNSAID until written
    raw_guesses: np.ndarray  # (n,) uint64
    raw_solutions: np.ndarray  # (n, 81) uint8: its grids as characters


_REGIONS = (
    ("grids", 81, np.uint8),
    ("state", 1, np.uint8),
    ("counts", 1, np.int64),
    ("solutions", 81, np.uint8),
    ("guesses", 1, np.int64),
    ("solve_ns", 1, np.int64),
    ("errors", ERROR_BYTES, np.uint8),
    ("records", RECORD, np.uint8),
    ("raw_counts", 1, np.uint64),
    ("raw_guesses", 1, np.uint64),
    ("raw_solutions", 81, np.uint8),
)


def size_for(n: int) -> int:
    """Bytes of the file for requests of up to n rows."""
    total = HEADER_BYTES
    for _, width, dtype in _REGIONS:
        total += -(-(n * width * np.dtype(dtype).itemsize) // 64) * 64
    return total


def _folder() -> str | None:
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


class SharedMemory:
    """The shared file as one side maps it: its header, and its rows as views."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._map: mmap.mmap | None = None
        self._size = 0
        self._remap(max(os.fstat(fd).st_size, HEADER_BYTES))

    @classmethod
    def create(cls) -> "SharedMemory":
        """A new, unlinked file of a header's size (its fd is inheritable: `pass_fds`)."""
        fd, path = tempfile.mkstemp(prefix="sudoku-solver-", dir=_folder())
        os.unlink(path)
        os.ftruncate(fd, HEADER_BYTES)
        return cls(fd)

    def _remap(self, size: int) -> None:
        if self._map is not None:
            self.header = np.zeros(0, np.int64)  # let go of the views before the map closes
            try:
                self._map.close()
            except BufferError:  # a view still held somewhere: leave the old map to the GC
                pass
        self._map = mmap.mmap(self.fd, size)
        self._size = size
        self.header = np.frombuffer(self._map, dtype=np.int64, count=HEADER_BYTES // 8)

    def rows(self, n: int, grow: bool = False) -> Rows:
        """Views of the first n rows; `grow`: make the file large enough first (the side that
        writes a request), else map what the other side made."""
        need = size_for(n)
        if need > self._size:
            if grow:
                os.ftruncate(self.fd, need)
            self._remap(max(need, os.fstat(self.fd).st_size))
        assert self._map is not None
        views, offset = {}, HEADER_BYTES
        for name, width, dtype in _REGIONS:
            count = n * width
            array = np.frombuffer(self._map, dtype=dtype, count=count, offset=offset)
            views[name] = array.reshape(n, width) if width > 1 else array
            offset += -(-(count * np.dtype(dtype).itemsize) // 64) * 64
        return Rows(**views)

    def close(self) -> None:
        self.header = np.zeros(0, np.int64)
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass
            self._map = None
        try:
            os.close(self.fd)
        except OSError:
            pass


def write_error(rows: Rows, i: int, sentence: str) -> None:
    """Row i FAILED, saying why (cut to `ERROR_BYTES`)."""
    data = sentence.encode("utf-8", "replace")[:ERROR_BYTES]
    rows.errors[i, : len(data)] = np.frombuffer(data, dtype=np.uint8)
    rows.errors[i, len(data) :] = 0
    rows.state[i] = FAILED


def clear_answers(rows: Rows) -> None:
    """No answers yet: what a row gets only when answered (a clash: its count alone)."""
    rows.solutions[:] = 0
    rows.counts[:] = -1
    rows.guesses[:] = -1
    rows.solve_ns[:] = 0


def start_row(header: np.ndarray, i: int) -> None:
    """Row i is in hand: the keeper's clock for it starts now."""
    header[ROW] = i
    header[TICK] += 1


def start_batch(header: np.ndarray, k: int) -> None:
    """One call holds k rows: none is known answered until it returns (`BATCH`), and its
    timeout is k puzzles'."""
    header[PHASE], header[BUDGET] = BATCH, k


def end_batch(header: np.ndarray) -> None:
    """The call that held the rows has returned: a puzzle's timeout again."""
    header[PHASE], header[BUDGET] = ASKING, 1


def read_error(rows: Rows, i: int) -> str:
    """A FAILED row's sentence."""
    return bytes(rows.errors[i]).rstrip(b"\0").decode("utf-8", "replace")


__all__ = [
    "ANSWERED",
    "ASKING",
    "BATCH",
    "BUDGET",
    "ERROR_BYTES",
    "FAILED",
    "HEADER_BYTES",
    "PENDING",
    "PHASE",
    "RECORD",
    "RETIMING",
    "ROW",
    "Rows",
    "SharedMemory",
    "TICK",
    "UNSAID",
    "clear_answers",
    "end_batch",
    "read_error",
    "size_for",
    "start_batch",
    "start_row",
    "write_error",
]

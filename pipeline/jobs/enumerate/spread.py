"""The search spread over worker threads, its rows handed back in input order, in bounded
memory: `spread_tables`.

The input's batches are cut into units of a few puzzles (`units`). Each worker thread takes
the next unit (reading the input as it does, one thread at a time), searches it
(`solutions.puzzle_segments`: the numba kernels release the GIL, so threads use every core),
makes the rows into tables (`solutions.segment_tables`) and hands them to the unit's
`_Handoff`; the calling thread drains the
units' hand-offs in the order they were taken, so the rows come out in input order (row,
then k) exactly as one thread would give them, whatever the number of workers.

Memory stays bounded however many solutions a puzzle has: a hand-off holds at most `room`
rows (its worker waits while it is full), and at most `ahead` units are taken and not yet
drained (a worker waits for a free place before it takes one). A worker holding a puzzle with
millions of solutions therefore holds the others up only once they are `ahead` units in front;
no output piles up. No deadlock: the oldest unit not yet drained is always being searched
(units are taken in order), and the calling thread waits on it alone.

A worker's error (an input that fails part-way, a kernel's) is raised in the calling thread
when its unit's turn comes; when the calling thread stops early (an error, Ctrl-C), the
workers are told to stop at their next hand-off and left to end on their own (daemon threads:
a kernel call in progress finishes in the background).
"""

import math
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa

from pipeline.jobs.enumerate.solutions import Tally
from pipeline.waiting import POLL_S, join

Search = Callable[[int, pa.RecordBatch, Tally], Iterator[pa.Table]]
WORKER_NAME = "sudoku-enumerate-"
UNIT_ROWS = 256  # puzzles a unit holds at most: enough to screen a corpus in batches


def units(
    batches: Iterable[tuple[int, pa.RecordBatch]], workers: int
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Each batch cut into units of at most `UNIT_ROWS` puzzles, and into at least 16 a worker
    (a few puzzles each for a small input: puzzles differ a lot in how many solutions they
    have, so small units share the work out evenly)."""
    for source, batch in batches:
        size = max(1, min(UNIT_ROWS, math.ceil(batch.num_rows / (16 * workers))))
        for offset in range(0, batch.num_rows, size):
            yield source, batch.slice(offset, size)


class _Stopped(Exception):
    """The calling thread stopped early: a worker leaves its unit."""


class _Handoff:
    """One unit's tables on their way from its worker to the calling thread."""

    def __init__(self, unit: tuple[int, pa.RecordBatch] | None) -> None:
        self.unit = unit  # the input's index and the unit's puzzles, until searched
        self.rows = 0 if unit is None else unit[1].num_rows  # the unit's input rows
        self.tally = Tally()
        self.tables: deque[pa.Table] = deque()
        self.held = 0  # solution rows in `tables`
        self.done = False
        self.error: BaseException | None = None


class _Spread:
    def __init__(
        self,
        units: Iterator[tuple[int, pa.RecordBatch]],
        search: Search,
        workers: int,
        room: int,
        ahead: int,
    ) -> None:
        self.units = units
        self.search = search
        self.room = room
        self.ahead = ahead
        self.changed = threading.Condition()  # guards everything below
        self.taking = threading.Lock()  # one worker reads the input at a time
        self.order: deque[_Handoff] = deque()  # units taken, not yet drained, in order
        self.exhausted = False  # every unit is taken
        self.stopped = False
        self.threads = [
            threading.Thread(target=self._work, name=f"{WORKER_NAME}{i}", daemon=True)
            for i in range(workers)
        ]

    def _take(self) -> _Handoff | None:
        """The next unit, its hand-off placed in `order`; None: no more to search."""
        with self.taking:
            with self.changed:
                while not (self.stopped or self.exhausted) and len(self.order) >= self.ahead:
                    self.changed.wait()
                if self.stopped or self.exhausted:
                    return None
            handoff: _Handoff | None
            try:
                handoff = _Handoff(next(self.units))
            except StopIteration:
                handoff = None
            except BaseException as e:  # noqa: BLE001 - raised in the caller, in its turn
                handoff = _Handoff(None)
                handoff.error, handoff.done = e, True
            with self.changed:
                if handoff is None or handoff.done:
                    self.exhausted = True
                if handoff is not None:
                    self.order.append(handoff)
                self.changed.notify_all()
            return None if handoff is None or handoff.done else handoff

    def _work(self) -> None:
        while (handoff := self._take()) is not None:
            assert handoff.unit is not None
            (source, batch), handoff.unit = handoff.unit, None
            try:
                for table in self.search(source, batch, handoff.tally):
                    self._hand(handoff, table)
            except _Stopped:
                return
            except BaseException as e:  # noqa: BLE001 - raised in the caller, in its turn
                handoff.error = e
            finally:
                with self.changed:
                    handoff.done = True
                    self.changed.notify_all()

    def _hand(self, handoff: _Handoff, table: pa.Table) -> None:
        with self.changed:
            while not self.stopped and handoff.held >= self.room:
                self.changed.wait()
            if self.stopped:
                raise _Stopped
            handoff.tables.append(table)
            handoff.held += table.num_rows
            self.changed.notify_all()

    def drained(self, tally: Tally, done: Callable[[int], None]) -> Iterator[pa.Table]:
        """Every unit's tables, in order; `tally` counts each unit, and `done(rows)` is
        called with its input rows, once it is drained."""
        for thread in self.threads:
            thread.start()
        try:
            while True:
                with self.changed:
                    while not self.order and not self.exhausted:
                        self.changed.wait(POLL_S)  # woken often: a Ctrl-C on another thread
                    if not self.order:
                        break
                    handoff = self.order[0]
                    while not handoff.tables and not handoff.done:
                        self.changed.wait(POLL_S)
                    table = None
                    if handoff.tables:
                        table = handoff.tables.popleft()
                        handoff.held -= table.num_rows
                    else:
                        self.order.popleft()
                    self.changed.notify_all()
                if table is not None:
                    yield table
                elif handoff.error is not None:
                    raise handoff.error
                else:
                    tally.add(handoff.tally)
                    done(handoff.rows)
            for thread in self.threads:
                join(thread)
        finally:
            with self.changed:
                self.stopped = True
                self.changed.notify_all()


def spread_tables(
    batches: Iterable[tuple[int, pa.RecordBatch]],
    search: Search,
    workers: int,
    room: int,
    tally: Tally,
    done: Callable[[int], None] = lambda rows: None,
    ahead: int | None = None,
) -> Iterator[pa.Table]:
    """`search(source, unit, tally)` run over the units of `batches` on `workers` threads;
    the tables it gives, in input order. At most `room` rows and one table wait per unit,
    and at most `ahead` units (default: 4 a worker) are taken and not yet drained. `tally`
    counts each unit once it is drained, and `done(rows)` is told its input rows then."""
    spread = _Spread(
        units(batches, workers), search, workers, max(1, room), max(1, ahead or 4 * workers)
    )
    return spread.drained(tally, done)


__all__ = ["spread_tables", "units"]

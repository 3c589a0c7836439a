"""The `batch` contract of a `c:` solver (`library.py`), in the solver's process: a request's
puzzles handed to the function in one call.

    void fn(const char *puzzles, size_t count, size_t limit, uint32_t config,
            char *solutions, size_t *counts, size_t *guesses)

Around the call, two compiled passes and nothing per puzzle in Python: `pack_kernel` checks
each row's givens (a clash: `CLASH`, never asked) and writes the others' characters as
82-byte records, compacted; `unpack_kernel` reads the counts, guesses and grids back into the
rows. With `limit` above 1 and `fetch`, the puzzles whose count came without a complete grid
(tdoku's way) are asked once more, limit 1, in a second call. A row is `ANSWERED` once all
of that is done (`shared.py`); one whose count the function left unwritten fails.

While the call runs, a thread reads the counts: once one is written, the function is known to
answer as it goes, and the keeper's timeout is a puzzle's, from the last count; until then the
call is allowed the timeout times its puzzles.
"""

import ctypes
import threading
import time

import numpy as np

from pipeline.compiled import inline_part, kernel
from pipeline.plugins.shared import (
    ANSWERED,
    BUDGET,
    TICK,
    UNSAID,
    Rows,
    clear_answers,
    end_batch,
    start_batch,
    start_row,
    write_error,
)

CLASH = -2  # `counts` of a row whose givens clash: never asked (tdoku does not check them)
WATCH_SECONDS = 0.02  # how often a batch call's counts are read
_UNIT_OF_CELL = np.array(
    [[k // 9, 9 + k % 9, 18 + k // 27 * 3 + k % 9 // 3] for k in range(81)], dtype=np.int64
)
_BITS_SET = np.array([bin(v).count("1") for v in range(512)], dtype=np.int64)


@inline_part
def puzzle_chars(grid: np.ndarray, chars: np.ndarray, units: np.ndarray) -> bool:
    """Write `grid`'s 81 cells as characters (`1`-`9`, `.`) to `chars`; whether two givens
    clash. Two passes without a branch on a cell (measured: 87 ns a puzzle, against 271 for
    one pass that checked each given against its units as it went, a third of tdoku's time
    on an easy puzzle): the characters; then each unit's set of digits, a clash being a unit
    with fewer digits in its set than givens (in all: fewer than three a given)."""
    givens = 0
    for k in range(81):
        d = grid[k]
        chars[k] = np.uint8(46 + (d != 0) * (d + 2))  # '.' or '0' + d
        givens += d != 0
    units[:] = 0
    for k in range(81):
        bit = (np.uint32(1) << np.uint32(grid[k])) >> np.uint32(1)  # 0 for a blank
        units[_UNIT_OF_CELL[k, 0]] |= bit
        units[_UNIT_OF_CELL[k, 1]] |= bit
        units[_UNIT_OF_CELL[k, 2]] |= bit
    digits = 0
    for u in range(27):
        digits += _BITS_SET[units[u]]
    return digits != 3 * givens


@kernel
def pack_kernel(
    grids: np.ndarray,
    chosen: np.ndarray,
    records: np.ndarray,
    raw_counts: np.ndarray,
    raw_guesses: np.ndarray,
    raw_solutions: np.ndarray,
    counts: np.ndarray,
    state: np.ndarray,
    packed: np.ndarray,
) -> int:
    """Write the rows `chosen` whose givens do not clash as records (81 characters and a NUL),
    one after another, their raw answers cleared, their row numbers in `packed`; a row whose
    givens clash is `CLASH` and `ANSWERED` at once. Returns how many were packed."""
    units = np.zeros(27, dtype=np.uint32)
    k = 0
    for i in chosen:
        if puzzle_chars(grids[i], records[k], units):
            counts[i] = CLASH
            state[i] = ANSWERED
            continue
        raw_solutions[k, :] = 0
        records[k, 81] = 0
        raw_counts[k] = UNSAID
        raw_guesses[k] = UNSAID
        packed[k] = i
        k += 1
    return k


@kernel
def unpack_kernel(
    packed: np.ndarray,
    k: int,
    limit: int,
    counted: bool,
    raw_counts: np.ndarray,
    raw_guesses: np.ndarray,
    raw_solutions: np.ndarray,
    counts: np.ndarray,
    guesses: np.ndarray,
    solutions: np.ndarray,
    said: np.ndarray,
    again: np.ndarray,
) -> int:
    """Read the first k records' answers back into their rows: the grid (a non-digit is a
    blank), and, when `counted` (the counting call, not the fetch), the count (at most
    `limit`) and guesses (-1 unsaid), `said` 1 where a count was written. The rows that said
    they found a solution without writing a complete grid go in `again`; returns how many."""
    m = 0
    for j in range(k):
        i = packed[j]
        complete = True
        for cell in range(81):
            ch = raw_solutions[j, cell]
            digit = ch - 48 if 49 <= ch <= 57 else 0
            solutions[i, cell] = digit
            complete &= digit != 0
        if not counted:
            continue
        said[j] = raw_counts[j] != UNSAID
        if not said[j]:
            continue
        counts[i] = min(np.int64(raw_counts[j]), limit)
        guesses[i] = -1 if raw_guesses[j] == UNSAID else np.int64(raw_guesses[j])
        if counts[i] > 0 and not complete:
            again[m] = i
            m += 1
    return m


def warm_batch_kernels() -> None:
    """Load the two kernels (in the keeper, before it forks), with the types of the rows."""
    cells, records = np.zeros((0, 81), np.uint8), np.zeros((0, 82), np.uint8)
    ints, raw, flags = np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.uint8)
    pack_kernel(cells, ints, records, raw, raw, cells, ints, flags, ints)
    unpack_kernel(ints, 0, 2, True, raw, raw, cells, ints, ints, cells, flags, ints)


def ask_batch(
    function: ctypes._CFuncPtr,
    header: np.ndarray,
    rows: Rows,
    limit: int,
    fetch: bool,
    single: bool,
) -> None:
    """Answer every row with the batch function: one call for them all, or, `single`, one
    call a row (after a batch call failed: the row in hand is then known)."""
    everything = np.arange(len(rows.state), dtype=np.int64)
    clear_answers(rows)
    if not single:
        _ask(function, header, rows, everything, limit, fetch)
        return
    for i in everything.tolist():
        start_row(header, i)
        _ask(function, header, rows, everything[i : i + 1], limit, fetch)


def _ask(
    function: ctypes._CFuncPtr,
    header: np.ndarray,
    rows: Rows,
    chosen: np.ndarray,
    limit: int,
    fetch: bool,
) -> None:
    n = len(chosen)
    packed, said, again = np.empty(n, np.int64), np.zeros(n, np.uint8), np.empty(n, np.int64)
    k = _pack(rows, chosen, packed)
    if not k:
        return
    elapsed = _call(function, header, rows, k, limit)
    asked = packed[:k]
    rows.solve_ns[asked] = elapsed // k
    m = _unpack(rows, packed, k, limit, True, said, again)
    if m and fetch and limit > 1:  # grids for the counts that came without one
        fetched = np.empty(m, np.int64)
        m = _pack(rows, again[:m], fetched)
        _call(function, header, rows, m, 1)
        _unpack(rows, fetched, m, 1, False, said, again)
    counted = said[:k].astype(np.bool_)
    rows.state[asked[counted]] = ANSWERED
    for i in asked[~counted].tolist():
        write_error(rows, i, "the solver wrote no count for this puzzle")


def _pack(rows: Rows, chosen: np.ndarray, packed: np.ndarray) -> int:
    """`pack_kernel` on the rows `chosen`, into `rows.records`; how many were packed."""
    return int(
        pack_kernel(
            rows.grids,
            chosen,
            rows.records,
            rows.raw_counts,
            rows.raw_guesses,
            rows.raw_solutions,
            rows.counts,
            rows.state,
            packed,
        )
    )


def _unpack(
    rows: Rows,
    packed: np.ndarray,
    k: int,
    limit: int,
    counted: bool,
    said: np.ndarray,
    again: np.ndarray,
) -> int:
    """`unpack_kernel` on the first k `packed` rows' answers (`counted`: the counting call's,
    else the fetch's); how many want their grid asked again."""
    return int(
        unpack_kernel(
            packed,
            k,
            limit,
            counted,
            rows.raw_counts,
            rows.raw_guesses,
            rows.raw_solutions,
            rows.counts,
            rows.guesses,
            rows.solutions,
            said,
            again,
        )
    )


def _call(function: ctypes._CFuncPtr, header: np.ndarray, rows: Rows, k: int, limit: int) -> int:
    """One call on the first k records; its time in ns. Over one puzzle, a thread watches the
    counts (the module docstring)."""
    done = threading.Event()
    watcher = None
    if k > 1:
        start_batch(header, k)
        watcher = threading.Thread(target=_watch_counts, args=(header, rows, k, done), daemon=True)
        watcher.start()
    header[TICK] += 1
    start = time.perf_counter_ns()
    try:
        function(
            rows.records.ctypes.data,
            k,
            limit,
            0,
            rows.raw_solutions.ctypes.data,
            rows.raw_counts.ctypes.data,
            rows.raw_guesses.ctypes.data,
        )
    finally:
        elapsed = time.perf_counter_ns() - start
        done.set()
        if watcher is not None:
            watcher.join()
        end_batch(header)
        header[TICK] += 1
    return elapsed


def _watch_counts(header: np.ndarray, rows: Rows, k: int, done: threading.Event) -> None:
    """While a batch call runs: each time more counts are written, the keeper's clock starts
    again, and once one is, the timeout is a puzzle's (the function answers as it goes)."""
    seen = 0
    while not done.wait(WATCH_SECONDS):
        written = int(np.count_nonzero(rows.raw_counts[:k] != UNSAID))
        if written != seen:
            seen = written
            header[BUDGET] = 1
            header[TICK] += 1


__all__ = ["CLASH", "ask_batch", "pack_kernel", "unpack_kernel", "warm_batch_kernels"]

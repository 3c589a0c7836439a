"""A `c:` solver's function called on a request's rows, in the solver's own process
(`runner.py`), with one of the two contracts `library.py` describes.

* `puzzle` (tdoku's signature): one compiled kernel over the rows (`call_kernel`), a call
  per puzzle, each timed; the header says the row in hand (`shared.py`), each row `ANSWERED`
  as it comes; then puzzles whose time shows a preemption are timed again (`PHASE`
  `RETIMING`: every row answered already).
* `batch`: the rows' puzzles in one call (`PHASE` `BATCH`); its time is spread evenly. A
  thread watches the counts the function writes: once one appears the function is known to
  answer as it goes, and the timeout is per puzzle from the last one; until then the call is
  allowed the timeout times its puzzles. Asked `single` (after a batch call failed), one
  call a row, each row `ANSWERED` as it comes.

The function's address is an argument of one cached kernel (an LLVM call through a pointer),
so no compiling per library, and `cache=True` keeps working.
"""

import ctypes
import threading
import time
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pipeline.compiled import kernel
from pipeline.solver.bits import now_ns
from pipeline.solver.checks import givens_valid
from pipeline.solver.timing import retime
from pipeline.solvers.shared import (
    ANSWERED,
    ASKING,
    BATCH,
    BUDGET,
    PHASE,
    RETIMING,
    ROW,
    TICK,
    UNSAID,
    Rows,
    write_error,
)

CLASH = -2  # `counts` of a row whose givens clash: never asked (tdoku does not check them)
CONTRACT_SUFFIX = "_sudoku_contract"  # `const char SYMBOL_sudoku_contract[] = "batch";`
WATCH_SECONDS = 0.02  # how often a batch call's counts are read


@intrinsic
def _call_solver(typingctx, address, puzzle, limit, solution, guesses):  # noqa: ANN001, ANN201
    """`((size_t (*)(const char *, size_t, uint32_t, char *, size_t *)) address)(puzzle,
    limit, 0, solution, guesses)` with the data pointers of three uint8/uint64 arrays."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        addr, puz, lim, sol, gss = args
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(
            ir.IntType(64), [i8p, ir.IntType(64), ir.IntType(32), i8p, ir.IntType(64).as_pointer()]
        )
        fn = builder.inttoptr(addr, fnty.as_pointer())
        arrays = signature.args
        p = context.make_array(arrays[1])(context, builder, value=puz).data
        s = context.make_array(arrays[3])(context, builder, value=sol).data
        g = context.make_array(arrays[4])(context, builder, value=gss).data
        return builder.call(
            fn,
            [builder.bitcast(p, i8p), lim, ir.Constant(ir.IntType(32), 0),
             builder.bitcast(s, i8p), builder.bitcast(g, ir.IntType(64).as_pointer())],
        )  # fmt: skip

    return types.int64(address, puzzle, limit, solution, guesses), codegen


@kernel
def call_kernel(
    address: int,
    grids: np.ndarray,
    limit: int,
    fetch: bool,
    counts: np.ndarray,
    solutions: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    state: np.ndarray,
    header: np.ndarray,
) -> None:
    """Ask the solver at `address` about every row whose givens do not clash (`CLASH` in
    `counts` for those: the check is made here, in the same pass that writes the puzzle's
    characters, since a pass of its own cost as much as tdoku on an easy puzzle); each row
    `ANSWERED` in `state` once its answer is written, the header's `ROW` and `TICK` kept."""
    puzzle = np.zeros(82, dtype=np.uint8)  # NUL-terminated
    grid = np.zeros(82, dtype=np.uint8)
    guessed = np.zeros(1, dtype=np.uint64)
    spare = np.zeros(1, dtype=np.uint64)
    clock = np.zeros(2, dtype=np.int64)
    units = np.zeros(27, dtype=np.int32)
    for i in range(grids.shape[0]):
        header[ROW] = i
        header[TICK] += 1
        units[:] = 0
        clash = 0
        for r in range(9):
            for c in range(9):
                k = r * 9 + c
                d = grids[i, k]
                grid[k] = 0
                if d == 0:
                    puzzle[k] = 46  # '.'
                    continue
                puzzle[k] = 48 + d
                bit = 1 << d
                b = 18 + (r // 3) * 3 + c // 3
                clash |= (units[r] | units[9 + c] | units[b]) & bit
                units[r] |= bit
                units[9 + c] |= bit
                units[b] |= bit
        if clash:
            counts[i] = CLASH
            state[i] = ANSWERED
            continue
        guessed[0] = 2**64 - 1
        start = now_ns(clock)
        found = _call_solver(address, puzzle, limit, grid, guessed)
        solve_ns[i] = now_ns(clock) - start
        if fetch and found > 0 and limit > 1:  # a count without a complete grid: fetch one
            for k in range(81):
                if grid[k] < 49 or grid[k] > 57:
                    header[TICK] += 1
                    _call_solver(address, puzzle, 1, grid, spare)
                    break
        for k in range(81):
            c = grid[k]
            solutions[i, k] = c - 48 if 49 <= c <= 57 else 0
        counts[i] = min(found, limit)
        guesses[i] = -1 if guessed[0] == 2**64 - 1 else np.int64(guessed[0])
        state[i] = ANSWERED


def warm_kernel() -> None:
    """Load the kernels a solver's process calls (in the keeper, before it forks)."""
    none = np.zeros((0, 81), np.uint8)
    n = np.zeros(0, np.int64)
    call_kernel(0, none, 2, True, n, none, n, n, np.zeros(0, np.uint8), np.zeros(8, np.int64))
    givens_valid(none)


def library_path(library: str) -> str:
    """What `ctypes` loads for LIBRARY: a path (it has a `/`) made absolute from the current
    folder, as a shell would read it; a bare name searched as the system searches one."""
    return str(Path(library).expanduser().absolute()) if "/" in library else library


class LibraryFunction:
    """The function `LIBRARY:SYMBOL` names, loaded in this process."""

    def __init__(self, target: str) -> None:
        library, _, symbol = target.rpartition(":")
        try:
            self.handle = ctypes.CDLL(library_path(library))
        except OSError as e:
            raise ValueError(f"cannot load {library}: {e}") from None
        try:
            function = getattr(self.handle, symbol)
        except AttributeError:
            raise ValueError(f"{library} has no function {symbol}") from None
        self.address = ctypes.cast(function, ctypes.c_void_p).value or 0
        self.contract = _contract(self.handle, symbol)
        if self.contract not in ("puzzle", "batch"):
            raise ValueError(f"{library}: {symbol}{CONTRACT_SUFFIX} is {self.contract!r}; "
                             "write \"batch\" (or leave it out: tdoku's signature)")  # fmt: skip
        self.function = function
        if self.contract == "batch":
            size_t, pointer = ctypes.c_size_t, ctypes.c_void_p
            function.argtypes = [pointer, size_t, size_t, ctypes.c_uint32, pointer, pointer,
                                 pointer]  # fmt: skip
            function.restype = None
        self.about = {"contract": self.contract}

    def ask(self, header: np.ndarray, rows: Rows, limit: int, fetch: bool, single: bool) -> None:
        if self.contract == "puzzle":
            call_kernel(self.address, rows.grids, limit, fetch, rows.counts, rows.solutions,
                        rows.guesses, rows.solve_ns, rows.state, header)  # fmt: skip
            header[PHASE] = RETIMING
            retime(rows.grids, np.maximum(rows.guesses, 0), rows.solve_ns,
                   lambda subset: self._time_again(subset, limit))  # fmt: skip
            return
        valid = givens_valid(rows.grids)
        rows.counts[~valid] = CLASH
        rows.state[~valid] = ANSWERED
        asked = np.flatnonzero(valid)
        if single:
            for i in asked.tolist():
                header[ROW] = i
                header[TICK] += 1
                self._ask_batch(header, rows, np.array([i]), limit, fetch)
        elif len(asked):
            self._ask_batch(header, rows, asked, limit, fetch)

    def _time_again(self, subset: np.ndarray, limit: int) -> np.ndarray:
        """The times of the puzzles `subset` asked again (answers not kept)."""
        m = len(subset)
        again, scratch, state = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.uint8)
        call_kernel(self.address, subset, limit, False, scratch, np.zeros((m, 81), np.uint8),
                    scratch.copy(), again, state, np.zeros(8, np.int64))  # fmt: skip
        return again

    def _ask_batch(
        self, header: np.ndarray, rows: Rows, asked: np.ndarray, limit: int, fetch: bool
    ) -> None:
        """The batch contract on the rows `asked` (one call; then one more, limit 1, for the
        grids a count came without)."""
        k = len(asked)
        elapsed = self._call_batch(header, rows, rows.grids[asked], limit, watch=k > 1)
        counts, guesses = rows.raw_counts[:k].copy(), rows.raw_guesses[:k].copy()
        cells = _digits(rows.raw_solutions[:k])
        rows.solve_ns[asked] = elapsed // k
        said = counts != UNSAID
        incomplete = ((cells == 0) | (cells > 9)).any(axis=1)
        again = np.flatnonzero(said & (counts > 0) & incomplete) if fetch and limit > 1 else []
        if len(again):
            self._call_batch(header, rows, rows.grids[asked[again]], 1, watch=len(again) > 1)
            cells[again] = _digits(rows.raw_solutions[: len(again)])
        rows.solutions[asked] = np.where(cells <= 9, cells, 0)
        rows.counts[asked] = np.minimum(counts, limit).astype(np.int64)
        rows.guesses[asked] = np.where(guesses == UNSAID, -1, guesses.astype(np.int64))
        rows.state[asked[said]] = ANSWERED
        for i in asked[~said].tolist():
            write_error(rows, i, "the solver wrote no count for this puzzle")

    def _call_batch(
        self, header: np.ndarray, rows: Rows, grids: np.ndarray, limit: int, watch: bool
    ) -> int:
        """One call of the batch function on `grids` (its puzzles written as characters to
        the records region, its answers to the raw regions); its time in ns."""
        k = len(grids)
        rows.records[:k, :81] = np.where(grids == 0, ord("."), grids + ord("0"))
        rows.records[:k, 81] = 0
        rows.raw_counts[:k] = UNSAID
        rows.raw_guesses[:k] = UNSAID
        rows.raw_solutions[:k] = 0
        done = threading.Event()
        watcher = None
        if watch:
            header[PHASE], header[BUDGET] = BATCH, k
            watcher = threading.Thread(target=_watch_counts, args=(header, rows, k, done),
                                       daemon=True)  # fmt: skip
            watcher.start()
        header[TICK] += 1
        start = time.perf_counter_ns()
        try:
            self.function(rows.records.ctypes.data, k, limit, 0, rows.raw_solutions.ctypes.data,
                          rows.raw_counts.ctypes.data, rows.raw_guesses.ctypes.data)  # fmt: skip
        finally:
            elapsed = time.perf_counter_ns() - start
            done.set()
            if watcher is not None:
                watcher.join()
            header[PHASE], header[BUDGET] = ASKING, 1
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


def _digits(chars: np.ndarray) -> np.ndarray:
    """Grids written as characters, as cells: 1-9, 0 for a blank, 10 for anything else."""
    cells = chars.astype(np.int16) - ord("0")
    out = np.where((cells >= 1) & (cells <= 9), cells, 10).astype(np.uint8)
    out[(chars == ord(".")) | (chars == 0)] = 0
    return out


def _contract(handle: ctypes.CDLL, symbol: str) -> str:
    """The contract the library declares for `symbol` (`SYMBOL_sudoku_contract`, a string),
    or `puzzle` when it declares none."""
    try:
        text = (ctypes.c_char * 32).in_dll(handle, symbol + CONTRACT_SUFFIX).value
    except ValueError:  # no such symbol
        return "puzzle"
    return text.decode("ascii", "replace")


__all__ = ["CLASH", "CONTRACT_SUFFIX", "LibraryFunction", "call_kernel", "library_path",
           "warm_kernel"]  # fmt: skip

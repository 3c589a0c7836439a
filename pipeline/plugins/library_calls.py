"""A `c:` solver's function called on a request's rows, in the solver's own process
(`runner.py`), with one of the two contracts `library.py` describes.

* `puzzle` (tdoku's signature): one compiled kernel over the rows (`call_kernel`), a call
  per puzzle, each timed; the header says the row in hand (`shared.py`), each row `ANSWERED`
  as it comes; then puzzles whose time shows a preemption are timed again (`PHASE`
  `RETIMING`: every row answered already).
* `batch`: the rows' puzzles in one call (`library_batch.py`).

The function's address is an argument of one cached kernel (an LLVM call through a pointer),
so no compiling per library, and `cache=True` keeps working.
"""

import ctypes
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pipeline.compiled import kernel
from pipeline.kernels.bits import now_ns
from pipeline.kernels.timing import retime
from pipeline.plugins.library_batch import CLASH, ask_batch, puzzle_chars, warm_batch_kernels
from pipeline.plugins.shared import ANSWERED, PHASE, RETIMING, ROW, TICK, Rows

CONTRACT_SUFFIX = "_sudoku_contract"  # `const char SYMBOL_sudoku_contract[] = "batch";`


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
            [
                builder.bitcast(p, i8p),
                lim,
                ir.Constant(ir.IntType(32), 0),
                builder.bitcast(s, i8p),
                builder.bitcast(g, ir.IntType(64).as_pointer()),
            ],
        )

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
    `counts` for those: the check is made here, where the puzzle's characters are written,
    `puzzle_chars`, since a pass of its own cost as much as tdoku on an easy puzzle); each row
    `ANSWERED` in `state` once its answer is written, the header's `ROW` and `TICK` kept."""
    puzzle = np.zeros(82, dtype=np.uint8)  # NUL-terminated
    grid = np.zeros(82, dtype=np.uint8)
    guessed = np.zeros(1, dtype=np.uint64)
    spare = np.zeros(1, dtype=np.uint64)
    clock = np.zeros(2, dtype=np.int64)
    units = np.zeros(27, dtype=np.uint32)
    for i in range(grids.shape[0]):
        header[ROW] = i
        header[TICK] += 1
        grid[:81] = 0
        if puzzle_chars(grids[i], puzzle, units):
            counts[i] = CLASH
            solutions[i, :] = 0
            guesses[i] = -1
            solve_ns[i] = 0
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
    warm_batch_kernels()


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
            raise ValueError(
                f"{library}: {symbol}{CONTRACT_SUFFIX} is {self.contract!r}; "
                'write "batch" (or leave it out: tdoku\'s signature)'
            )
        self.function = function
        if self.contract == "batch":
            size_t, pointer = ctypes.c_size_t, ctypes.c_void_p
            function.argtypes = [
                pointer,
                size_t,
                size_t,
                ctypes.c_uint32,
                pointer,
                pointer,
                pointer,
            ]
            function.restype = None
        self.about = {"contract": self.contract}

    def ask(self, header: np.ndarray, rows: Rows, limit: int, fetch: bool, single: bool) -> None:
        if self.contract == "batch":
            ask_batch(self.function, header, rows, limit, fetch, single)
            return
        call_kernel(
            self.address,
            rows.grids,
            limit,
            fetch,
            rows.counts,
            rows.solutions,
            rows.guesses,
            rows.solve_ns,
            rows.state,
            header,
        )
        header[PHASE] = RETIMING
        retime(
            rows.grids,
            np.maximum(rows.guesses, 0),
            rows.solve_ns,
            lambda subset: self._time_again(subset, limit),
        )

    def _time_again(self, subset: np.ndarray, limit: int) -> np.ndarray:
        """The times of the puzzles `subset` asked again (answers not kept)."""
        m = len(subset)
        again, scratch, state = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.uint8)
        call_kernel(
            self.address,
            subset,
            limit,
            False,
            scratch,
            np.zeros((m, 81), np.uint8),
            scratch.copy(),
            again,
            state,
            np.zeros(8, np.int64),
        )
        return again


def _contract(handle: ctypes.CDLL, symbol: str) -> str:
    """The contract the library declares for `symbol` (`SYMBOL_sudoku_contract`, a string),
    or `puzzle` when it declares none."""
    try:
        text = (ctypes.c_char * 32).in_dll(handle, symbol + CONTRACT_SUFFIX).value
    except ValueError:  # no such symbol
        return "puzzle"
    return text.decode("ascii", "replace")


__all__ = [
    "CLASH",
    "CONTRACT_SUFFIX",
    "LibraryFunction",
    "call_kernel",
    "library_path",
    "warm_kernel",
]

"""`c:LIBRARY:SYMBOL`: a function of a shared library with tdoku's solver signature,

    size_t fn(const char *puzzle, size_t limit, uint32_t config, char *solution, size_t *guesses)

called from compiled code over a whole batch, so that a puzzle costs what the solver costs.

* `puzzle`: 81 characters, `1`..`9` for a given and `.` for a blank, then a NUL (tdoku reads a
  82nd character >= `.` as the sign of a 729-character pencilmark puzzle: the NUL rules it out).
* `limit`: how many solutions to look for before returning (2 proves uniqueness); `config` 0.
* the return value: the number of solutions found, up to `limit`; `solution`: 81 digits
  `1`..`9` of one of them (left as it is when the solver writes none); `guesses`: how many
  guesses it made (left as it is when the solver does not count them: the column is then null).

**Which calls, and what is timed.** With `limit` 2, tdoku counts solutions but writes a grid
only when called with limit 1, and other solvers may do the same. So each puzzle costs one
call with the asked limit, timed with the monotonic clock as our own kernels time a puzzle
(`solve_ns`: the same work tdoku's `run_benchmark` measures, counting up to 2); then, only
where the solver said it found a solution and wrote no complete grid, a second call with
limit 1 fetches the grid, so that it can be checked. That second call is not in `solve_ns`
(it is not the counting the figure compares); `bench` makes it after its clock, with the
other checks (`bench.solvers`), so its puzzles/s compare with `run_benchmark`'s. Solvers that
write their grid while counting need no second call. (The `config` argument is not used to
ask tdoku for its last solution: with limit 2 and one solution it leaves the grid of an
earlier puzzle there.)

The function's address is an argument of one cached kernel (an LLVM call through a pointer),
so no compiling per library, and `cache=True` keeps working; each call costs a few ns more
than a direct call. A time far above what the puzzle's guesses predict (a preemption on a busy
machine) is measured again and the least kept, as for our kernels (`pipeline.kernels.timing`).
The library is loaded with `ctypes.CDLL` and kept for the process.
"""

import ctypes
import os
import threading
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pipeline.compiled import kernel
from pipeline.errors import InputError
from pipeline.kernels.bits import now_ns
from pipeline.kernels.timing import retime
from pipeline.plugins import Answers, SolverSpec


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


CLASH = -2  # `counts` of a row whose givens clash: never asked (tdoku does not check them)


@kernel
def call_kernel(
    address: int,
    grids: np.ndarray,
    skip: np.ndarray,
    limit: int,
    fetch: bool,
    counts: np.ndarray,
    solutions: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
) -> None:
    """Ask the solver at `address` about every row not skipped whose givens do not clash
    (`CLASH` in `counts` for those: the check is made here, in the same pass that writes the
    puzzle's characters, since a pass of its own cost as much as tdoku on an easy puzzle)."""
    puzzle = np.zeros(82, dtype=np.uint8)  # NUL-terminated
    grid = np.zeros(82, dtype=np.uint8)
    guessed = np.zeros(1, dtype=np.uint64)
    spare = np.zeros(1, dtype=np.uint64)
    clock = np.zeros(2, dtype=np.int64)
    units = np.zeros(27, dtype=np.int32)
    for i in range(grids.shape[0]):
        if skip[i]:
            continue
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
            continue
        guessed[0] = 2**64 - 1
        start = now_ns(clock)
        found = _call_solver(address, puzzle, limit, grid, guessed)
        solve_ns[i] = now_ns(clock) - start
        if fetch and found > 0 and limit > 1:  # a count without a complete grid: fetch one
            for k in range(81):
                if grid[k] < 49 or grid[k] > 57:
                    _call_solver(address, puzzle, 1, grid, spare)
                    break
        for k in range(81):
            c = grid[k]
            solutions[i, k] = c - 48 if 49 <= c <= 57 else 0
        counts[i] = min(found, limit)
        guesses[i] = -1 if guessed[0] == 2**64 - 1 else np.int64(guessed[0])


def _load(spec: SolverSpec) -> tuple[ctypes.CDLL, int]:
    """The library and the function's address; `InputError` (one line) when either is missing."""
    library, _, symbol = spec.target.rpartition(":")
    where = library if os.sep not in library else str(Path(library).expanduser())
    try:
        handle = ctypes.CDLL(where)
    except OSError as e:
        raise InputError(f"solver {spec.text!r}: cannot load {library}: {e}") from None
    try:
        function = getattr(handle, symbol)
    except AttributeError:
        raise InputError(f"solver {spec.text!r}: {library} has no function {symbol}") from None
    return handle, ctypes.cast(function, ctypes.c_void_p).value or 0


_LOCKS: dict[int, threading.Lock] = {}  # by function address: one caller at a time in a process
_LOCKS_LOCK = threading.Lock()


class LibrarySolver:
    """A `c:LIBRARY:SYMBOL` solver (the `Adapter` contract): loaded once per process.

    A C solver need not be thread-safe (tdoku's keeps its state in globals), so it is never
    called by two threads of a process at once: `solve` runs it on worker processes unless
    the user chooses an executor, and threads of one process take turns (a lock per function).
    """

    holds_gil = False  # the kernel releases Python's lock around the whole batch
    thread_safe = False  # see the class: worker processes by default, threads take turns
    fetches = True  # `answer(..., fetch=False)`: no second call for a grid (`bench`'s clock)
    checks_givens = True  # rows whose givens clash come back with `CLASH` counts, unasked

    def __init__(self, spec: SolverSpec) -> None:
        self.spec = spec
        self._handle, self.address = _load(spec)
        with _LOCKS_LOCK:
            self._lock = _LOCKS.setdefault(self.address, threading.Lock())

    def version(self) -> str | None:
        """None: a C function has no version to ask (the run metadata keeps the library's path
        and its size and modification time instead)."""
        return None

    def answer(
        self, grids: np.ndarray, skip: np.ndarray, limit: int, fetch: bool = True
    ) -> Answers:
        grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
        n = grids.shape[0]
        counts = np.full(n, -1, dtype=np.int64)
        solutions = np.zeros((n, 81), dtype=np.uint8)
        guesses = np.full(n, -1, dtype=np.int64)
        solve_ns = np.zeros(n, dtype=np.int64)
        skip = np.ascontiguousarray(skip, dtype=np.bool_)
        with self._lock:
            call_kernel(
                self.address, grids, skip, int(limit), fetch, counts, solutions, guesses, solve_ns
            )

            def solve_again(subset: np.ndarray) -> np.ndarray:
                m = len(subset)
                again, scratch = np.zeros(m, np.int64), np.zeros(m, np.int64)
                call_kernel(
                    self.address,
                    subset,
                    np.zeros(m, np.bool_),
                    int(limit),
                    False,
                    scratch,
                    np.zeros((m, 81), np.uint8),
                    scratch.copy(),
                    again,
                )
                return again

            # a time far above what its guesses predict (a preemption) is measured again, as
            # our kernels' are (`pipeline.kernels.timing`), guesses standing in for nodes
            retime(grids, np.maximum(guesses, 0), solve_ns, solve_again)
        asked = ~skip & (counts != CLASH)
        reported = None if asked.any() and (guesses[asked] < 0).all() else guesses
        return Answers(solutions, counts, reported, solve_ns, None)

    def describe(self) -> dict[str, object]:
        """What the run metadata records of the library: its path, size and modification time."""
        library = self.spec.target.rpartition(":")[0]
        path = Path(library).expanduser()
        if not path.is_file():
            return {"library": library}
        stat = path.stat()
        return {
            "library": str(path.resolve()),
            "bytes": stat.st_size,
            "modified": int(stat.st_mtime),
        }

    def close(self) -> None:
        """Nothing to free: a loaded library stays loaded until the process ends."""

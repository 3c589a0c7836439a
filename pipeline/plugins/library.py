"""`c:LIBRARY:SYMBOL`: a function of a shared library as a solver, with one of two contracts.

**`puzzle`** (tdoku's signature; the default):

    size_t fn(const char *puzzle, size_t limit, uint32_t config, char *solution, size_t *guesses)

* `puzzle`: 81 characters, `1`..`9` for a given and `.` for a blank, then a NUL (tdoku reads a
  82nd character >= `.` as the sign of a 729-character pencilmark puzzle: the NUL rules it out).
* `limit`: how many solutions to look for before returning (2 proves uniqueness); `config` 0.
* the return value: the number of solutions found, up to `limit`; `solution`: 81 digits
  `1`..`9` of one of them (left as it is when the solver writes none); `guesses`: how many
  guesses it made (left as it is when the solver does not count them: the column is then null).

**`batch`**, declared by the library with `const char SYMBOL_sudoku_contract[] = "batch";`:

    void fn(const char *puzzles, size_t count, size_t limit, uint32_t config,
            char *solutions, size_t *counts, size_t *guesses)

`count` puzzles of 82 bytes each (81 characters and a NUL: `puzzles + 82 * i` is puzzle i, as
the `puzzle` contract reads it), their solutions at `solutions + 81 * i`, their counts and
guesses in `counts[i]` and `guesses[i]` (both preset to SIZE_MAX: a count left so is that
puzzle's `solver_error`, guesses left so are null). One call a batch: no loop of ours per
puzzle, so a fast solver pays a call per batch, not per puzzle; its time is spread evenly
over the batch. Write each count as soon as it is known: the timeout is then a puzzle's, from
the last count written.

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
earlier puzzle there.) A time far above what the puzzle's guesses predict (a preemption on a
busy machine) is measured again and the least kept, as for our kernels
(`pipeline.kernels.timing`).

**Where it runs.** In a process of its own (`host.py`): the library is loaded there, never in
the worker, and a crash (a segfault, `exit(3)`) or a hang costs the row it happened on, a
`solver_error` naming the solver and the signal, exit status or time allowed; the rows before
are kept and the rest asked again. LIBRARY with a `/` is a path, from the current folder
(`./libmysolver.so`); a bare name is searched as the system searches libraries. The calls
themselves: `library_calls.py`.
"""

from pathlib import Path
from typing import Any

from pipeline.plugins.host import HostedSolver
from pipeline.plugins.library_calls import CLASH, library_path


class LibrarySolver(HostedSolver):
    """A `c:LIBRARY:SYMBOL` solver (the `Adapter` contract), in a process of its own."""

    kind = "c"
    start_timeout = 0.0  # the library is loaded when it opens: its first call loads nothing
    fetches = True  # `answer(..., fetch=False)`: no second call for a grid (`bench`'s clock)
    checks_givens = True  # rows whose givens clash come back with `CLASH` counts, unasked

    def opening(self) -> dict[str, Any]:
        library, _, symbol = self.spec.target.rpartition(":")
        return {**super().opening(), "target": f"{library_path(library)}:{symbol}"}

    def version(self) -> str | None:
        """None: a C function has no version to ask (the run metadata keeps the library's path
        and its size and modification time instead)."""
        return None

    def describe(self) -> dict[str, object]:
        """What the run metadata records of the library: its path, size and modification time,
        and the contract its function has."""
        library = self.spec.target.rpartition(":")[0]
        about: dict[str, object] = {"contract": self.about.get("contract")}
        path = Path(library_path(library))
        if not path.is_file():
            return {"library": library, **about}
        stat = path.stat()
        return {
            "library": str(path.resolve()),
            "bytes": stat.st_size,
            "modified": int(stat.st_mtime),
            **about,
        }


__all__ = ["CLASH", "LibrarySolver"]

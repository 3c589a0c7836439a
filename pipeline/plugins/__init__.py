"""Solvers from outside the package, named by a spec (`--solver SPEC`), and their contract.

A spec names one solver:

* `fast`, `mrv`, `backtrack`: the built-in strategies (`pipeline.kernels`).
* `c:LIBRARY:SYMBOL`: a function of a shared library with tdoku's signature
  `size_t fn(const char *puzzle, size_t limit, uint32_t config, char *solution,
  size_t *guesses)` (`library.py`).
* `python:MODULE:FUNCTION` (MODULE a dotted name or a `.py` file): a Python function, with the
  seeds' contract (fill a 9x9 list of lists in place, return True/False) or the batch contract
  (a list of 81-character strings in, a list of solutions or None out) (`python_function.py`).
* `cmd:COMMAND`: a program started once per worker, reading puzzles one a line on stdin and
  writing one solution (or an empty line) a line on stdout (`program.py`).

Every solver from outside is an `Adapter`: it answers a batch of puzzles with `Answers`, and
what it answers is then checked by the rules, never trusted.
"""

from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

import numpy as np

from pipeline.kernels import STRATEGIES

Kind = Literal["builtin", "c", "python", "cmd"]
KINDS: tuple[str, ...] = ("c", "python", "cmd")


class Answers(NamedTuple):
    """What a solver from outside said about each puzzle of a batch, one entry per row."""

    solutions: np.ndarray  # (n, 81) uint8: the grid it returned, zeros where it gave none
    counts: np.ndarray  # (n,) int64: solutions it says it found (up to the limit); -1: unsaid
    guesses: np.ndarray | None  # (n,) int64, or None when the solver does not report them
    solve_ns: np.ndarray  # (n,) int64: time it took per puzzle
    errors: list[str | None] | None  # per row: why the solver gave no answer (crash, timeout)


def unanswered(grids: np.ndarray, skip: np.ndarray) -> tuple[np.ndarray, np.ndarray, Answers]:
    """What an adapter that asks row by row (`python:`, `cmd:`) starts from: the grids as
    `(n, 81) uint8`, the rows to ask (those not skipped) and their `Answers` before any is
    given (no grid, no count said, no guesses, no time, no error), to be filled in."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = grids.shape[0]
    answers = Answers(
        solutions=np.zeros((n, 81), dtype=np.uint8),
        counts=np.full(n, -1, dtype=np.int64),
        guesses=None,
        solve_ns=np.zeros(n, dtype=np.int64),
        errors=[None] * n,
    )
    return grids, np.flatnonzero(~np.asarray(skip, dtype=np.bool_)), answers


class Adapter(Protocol):
    """One solver from outside, ready to answer batches (opened once per worker: `open.py`).

    Optional, read with `getattr` where an adapter has them: `thread_safe` (False: `solve`
    runs it on worker processes unless told otherwise, as for `holds_gil`), `describe()` (a
    dict the run metadata adds to the spec and version), `warm()` (start a program, make a
    first call, so that `bench`'s clock holds neither), and the `c:` adapter's `fetches` and
    `checks_givens` (`library.py`).
    """

    spec: "SolverSpec"
    holds_gil: bool  # True: run it in worker processes rather than threads

    def version(self) -> str | None:
        """The solver's version where it has one (for the run metadata)."""
        ...

    def answer(self, grids: np.ndarray, skip: np.ndarray, limit: int) -> Answers:
        """Answer `(n, 81) uint8` grids (0 = blank), rows where `skip` is True left unasked;
        `limit` is how many solutions to look for (1, or 2 to prove uniqueness)."""
        ...

    def close(self) -> None:
        """Free what the adapter holds (a program's process, a library handle)."""
        ...


@dataclass(frozen=True)
class SolverSpec:
    """A parsed `--solver` value."""

    text: str  # as given: the name results and reports show
    kind: Kind
    target: str  # the strategy's name, `LIBRARY:SYMBOL`, `MODULE:FUNCTION` or the command

    @property
    def builtin(self) -> bool:
        return self.kind == "builtin"


def parse_spec(text: str) -> SolverSpec:
    """The solver `text` names; ValueError with one sentence saying what is wrong."""
    if text in STRATEGIES:
        return SolverSpec(text, "builtin", text)
    kind, sep, target = text.partition(":")
    if not sep or kind not in KINDS:
        choices = ", ".join(
            (*STRATEGIES, "c:LIBRARY:SYMBOL", "python:MODULE:FUNCTION", "cmd:COMMAND")
        )
        raise ValueError(f"unknown solver {text!r}; choose one of {choices}")
    if kind in ("c", "python"):
        where, colon, name = target.rpartition(":")
        if not colon or not where or not name.isidentifier():
            shape = "c:LIBRARY:SYMBOL" if kind == "c" else "python:MODULE:FUNCTION"
            raise ValueError(f"solver {text!r} should read {shape}")
    elif not target.strip():
        raise ValueError(f"solver {text!r} names no command; write cmd:COMMAND")
    return SolverSpec(text, kind, target)  # type: ignore[arg-type]


__all__ = ["Adapter", "Answers", "KINDS", "SolverSpec", "parse_spec"]

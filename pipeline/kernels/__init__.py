"""Solver kernels for whole batches of puzzles, and their typed Python facade.

Counting, the same for every strategy, so that reports compare strategies honestly:

* A **node** is a board state the search examines: the root (the givens, after whatever
  propagation the strategy does) counts as one node, and every *choice* the search makes
  creates one more: a digit placed in a cell (`backtrack`, `mrv`), or one way of a branch
  (`fast`: a digit's first configuration in a band or stack, then all the others; where it
  searches light, a digit in a cell, then the cell without it). What propagation forces
  (naked or hidden singles and the like) is not a node.
* A **guess** is a choice made where there were two or more ways: a digit placed at a cell
  that had two or more candidates, or a way of a branch (each branch has at least two). A
  placement by choice at a cell with a single candidate (the plain backtracker walks cells in
  order and meets such cells) is a node but not a guess.

So `nodes - 1 >= guesses` always, with equality for strategies that only choose where there
are several ways (`mrv` places single-candidate cells by choice, `fast` leaves them to
propagation). Every way tried counts, the last one too (even when the others have failed).
A puzzle "solved without guessing" has `guesses == 0`. (tdoku counts a guess per branch point;
`fast`'s branch points are about half its guesses.)

The node budget `max_nodes` counts the root too, and is checked before each placement by
choice: a puzzle stopped by it reports `nodes == max_nodes`. Backing up costs nothing.

Counting beyond 2 solutions, a strategy may count some solutions without visiting them, and
they cost no node: `fast` counts a deadly rectangle's two at once once two solutions are
written (`fast_count.py`). With `max_solutions` 1 or 2 every solution counted is visited.

Every kernel has the same signature and works on a whole batch::

    kernel(grids, skip, [*leading,] max_solutions, max_nodes,
           verdicts, solutions, nodes, guesses, solve_ns, counts) -> None

* `grids`: `(n, 81) uint8`, 0 = blank, 1..9 = given digit, row-major cells.
* `skip`: `(n,) bool`; rows where it is True are left untouched (malformed rows).
* the strategy's leading arguments, if any (`registry.Strategy.leading`: the addresses the
  `fast` search calls its propagations at, `fast_entries.search_entries`; the flags that
  make one kernel serve `mrv` and `backtrack`).
* `max_solutions`: the search stops when it has found this many solutions (any N >= 1):
  1 = stop at the first solution, 2 = prove uniqueness, more = count. The verdict does not
  depend on N beyond that: `SOLVED` for exactly one solution (kernels say it for a first
  solution even when N = 1; `solve_grids` turns it into `FOUND` then), `MULTIPLE` for two or
  more.
* `max_nodes`: per-puzzle node budget, 0 = none. When the budget is spent before the search
  decides, the verdict is `LIMIT` (with the first solution kept if one was found).
* outputs: `verdicts (n,) int8` (codes.py), `solutions (n, 81) uint8` (the first solution found,
  zeros when none), `nodes`, `guesses`, `solve_ns` `(n,) int64`, and `counts (n,) int64`: the
  solutions found, up to `max_solutions` (a count equal to it means "that many or more"; under
  a `LIMIT` verdict, those found before the budget ran out; 0 for `INVALID`).

Pencilmark puzzles: a strategy with a `candidates_kernel` (registry.py; all have one) has a
twin kernel taking `(n, 81) uint16` candidates in place of `grids` (bit d-1: digit d may stand
in the cell; see `pipeline.kernels.candidates`), everything else the same: a cell with one
candidate is placed like a given, a cell with none leaves the puzzle `UNSOLVABLE`, a value
with bits above the ninth is `INVALID` (checks.first_candidates_clash says where).

Givens that clash (a digit twice in a unit, or a value above 9) make the verdict `INVALID`
without a search (nodes, guesses and time 0): every kernel finds them itself while loading the
givens. Where they clash is found once, for those rows only, by `checks.first_clash`.
"""

from typing import NamedTuple

import numpy as np

from pipeline.kernels import codes
from pipeline.kernels.candidates import as_candidates, grid_candidates
from pipeline.kernels.codes import VERDICT_NAMES
from pipeline.kernels.registry import (
    DEFAULT_STRATEGY,
    MAX_NODES,
    REGISTRY,
    STRATEGIES,
    get_strategy,
)
from pipeline.kernels.timing import retime


class KernelResults(NamedTuple):
    """Per-puzzle outputs of a kernel run, one entry per input row."""

    verdicts: np.ndarray  # (n,) int8, codes.py
    solutions: np.ndarray  # (n, 81) uint8, zeros when no solution
    nodes: np.ndarray  # (n,) int64
    guesses: np.ndarray  # (n,) int64
    solve_ns: np.ndarray  # (n,) int64
    counts: np.ndarray  # (n,) int64: solutions found, up to the `solutions` asked for


def _prepare(
    grids: np.ndarray, skip: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, KernelResults]:
    """Contiguous grids, the rows not to search, and outputs with `MALFORMED` where a row is
    skipped (the kernel writes every other row's verdict)."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = grids.shape[0]
    malformed = np.zeros(n, dtype=np.bool_) if skip is None else np.asarray(skip, dtype=np.bool_)
    if malformed.shape != (n,):
        raise ValueError(f"skip must have shape ({n},), got {malformed.shape}")
    out = KernelResults(
        np.full(n, codes.MALFORMED, dtype=np.int8),
        np.zeros((n, 81), dtype=np.uint8),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
    )
    return grids, malformed, out


def _limit(solutions: int) -> int:
    if isinstance(solutions, bool) or not isinstance(solutions, int | np.integer):
        raise ValueError(f"solutions must be a whole number >= 1, not {solutions!r}")
    if not 1 <= solutions <= MAX_NODES:
        raise ValueError(f"solutions must be between 1 and {MAX_NODES:,}, not {solutions!r}")
    return int(solutions)


def _budget(max_nodes: int | None) -> int:
    if max_nodes is not None and not 1 <= max_nodes <= MAX_NODES:
        raise ValueError(f"max_nodes must be between 1 and {MAX_NODES:,}, not {max_nodes!r}")
    return 0 if max_nodes is None else int(max_nodes)


def solve_grids(
    grids: np.ndarray | None,
    strategy: str = DEFAULT_STRATEGY,
    solutions: int = 2,
    max_nodes: int | None = None,
    skip: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
) -> KernelResults:
    """Solve a batch of `(n, 81) uint8` grids; rows whose givens clash get `INVALID`.

    `solutions`: stop after this many (any N >= 1, every strategy): 1 finds a solution, 2
    proves uniqueness, more counts them (`counts`, up to N; N means "N or more"). The
    verdicts do not change with N beyond 2. `skip` marks rows not to solve at all (e.g.
    malformed rows); their verdict is `MALFORMED`.

    `candidates`: pencilmark puzzles instead, `(n, 81) uint16` (bit d-1: digit d allowed;
    see `pipeline.kernels.candidates`); `grids` is then ignored (pass None). Every strategy
    takes them.
    """
    solutions = _limit(solutions)
    budget = _budget(max_nodes)
    chosen = get_strategy(strategy)
    kernel = chosen.load(candidates=candidates is not None)
    if candidates is not None:
        puzzles = as_candidates(candidates)
        todo_skip, out = _prepare(np.zeros((len(puzzles), 81), np.uint8), skip)[1:]
        grids = puzzles
    else:
        if grids is None:
            raise ValueError("solve_grids needs grids or candidates")
        grids, todo_skip, out = _prepare(grids, skip)
    leading = chosen.leading()
    kernel(grids, todo_skip, *leading, solutions, budget, *out)

    def solve_again(subset: np.ndarray) -> np.ndarray:  # grids or candidates
        again = _prepare(np.zeros((len(subset), 81), np.uint8), None)[2]
        kernel(subset, np.zeros(len(subset), np.bool_), *leading, solutions, budget, *again)
        return again.solve_ns

    retime(grids, out.nodes, out.solve_ns, solve_again)
    if solutions == 1:  # a solution, but nobody looked for a second one
        out.verdicts[out.verdicts == codes.SOLVED] = codes.FOUND
    return out


def find_two_solutions(
    grids: np.ndarray | None,
    max_nodes: int | None = None,
    skip: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
) -> tuple[KernelResults, np.ndarray]:
    """`solve_grids` with the `fast` strategy and `solutions=2`, plus the second solution of
    each puzzle that has several (`(n, 81) uint8`, zeros elsewhere): evidence of non-uniqueness.
    `candidates`: pencilmark puzzles instead, as in `solve_grids`.
    """
    from pipeline.kernels import fast
    from pipeline.kernels.fast_entries import search_entries

    budget = _budget(max_nodes)
    entries = search_entries()
    if candidates is not None:
        kernel = fast.two_solutions_candidates_kernel
        puzzles = as_candidates(candidates)
        todo_skip, out = _prepare(np.zeros((len(puzzles), 81), np.uint8), skip)[1:]
    elif grids is None:
        raise ValueError("find_two_solutions needs grids or candidates")
    else:
        kernel = fast.two_solutions_kernel
        puzzles, todo_skip, out = _prepare(grids, skip)
    seconds = np.zeros_like(out.solutions)
    kernel(
        puzzles,
        todo_skip,
        entries,
        budget,
        out.verdicts,
        out.solutions,
        seconds,
        out.nodes,
        out.guesses,
        out.solve_ns,
        out.counts,
    )

    def solve_again(subset: np.ndarray) -> np.ndarray:  # grids or candidates
        again = _prepare(np.zeros((len(subset), 81), np.uint8), None)[2]
        kernel(
            subset,
            np.zeros(len(subset), np.bool_),
            entries,
            budget,
            *again[:2],
            np.zeros_like(again.solutions),
            *again[2:],
        )
        return again.solve_ns

    retime(puzzles, out.nodes, out.solve_ns, solve_again)
    return out, seconds


__all__ = [
    "DEFAULT_STRATEGY",
    "KernelResults",
    "STRATEGIES",
    "VERDICT_NAMES",
    "REGISTRY",
    "codes",
    "find_two_solutions",
    "get_strategy",
    "grid_candidates",
    "solve_grids",
]

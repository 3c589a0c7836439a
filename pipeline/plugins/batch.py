"""A batch of grids put to a solver from outside: asked, checked, and shaped as our kernels'
results (`KernelResults`), so that the result table, `report` and `bench` treat it as they
treat a strategy.

Rows whose givens clash are `invalid` and never asked (as our kernels find them themselves);
malformed rows are skipped. A solver that counts no nodes leaves `nodes` at -1 (null in the
table), and one that reports no guesses `guesses` too.
"""

from typing import NamedTuple

import numpy as np

from pipeline.kernels import KernelResults, codes
from pipeline.kernels.checks import givens_valid
from pipeline.plugins import SolverSpec
from pipeline.plugins.answers import judge_answers
from pipeline.plugins.library import CLASH
from pipeline.plugins.open import open_adapter


class Asked(NamedTuple):
    """A batch's results from a solver from outside."""

    found: KernelResults  # nodes -1 (not counted), guesses -1 where not reported
    messages: dict[int, str]  # why a row is wrong_answer or solver_error, by its position
    kernel_agrees: np.ndarray  # (n,) int8: 1, 0, or -1 (no claim to compare)


def ask_solver(
    spec: SolverSpec | str,
    grids: np.ndarray,
    skip: np.ndarray,
    solutions: int = 2,
    agree: bool = True,
    fetch: bool = True,
) -> Asked:
    """Ask the solver `spec` (opened once per worker) about `grids` (skipping `skip` rows),
    looking for `solutions` (1 or 2) solutions; its answers checked (`answers.judge_answers`)
    and, with `agree`, compared with our `fast` kernel. `fetch=False`: a solver that can
    (`c:`) is not asked again for a grid it did not write while counting (`bench`'s clock)."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = grids.shape[0]
    skip = np.asarray(skip, dtype=np.bool_)
    adapter = open_adapter(spec)
    checks = getattr(adapter, "checks_givens", False)  # in its own pass over the puzzles
    valid = np.ones(n, dtype=np.bool_) if checks else givens_valid(grids)
    asked = ~skip & valid
    if fetch or not getattr(adapter, "fetches", False):
        answers = adapter.answer(grids, ~asked, solutions)
    else:
        answers = adapter.answer(grids, ~asked, solutions, fetch=False)  # type: ignore[call-arg]
    if checks:
        valid = answers.counts != CLASH
        asked &= valid
    judged = judge_answers(grids, asked, answers, solutions, agree, explain=fetch)
    verdicts = judged.verdicts
    verdicts[skip] = codes.MALFORMED
    verdicts[~skip & ~valid] = codes.INVALID
    solve_ns = np.where(asked, answers.solve_ns, 0).astype(np.int64)
    guesses = np.full(n, -1, dtype=np.int64)
    if answers.guesses is not None:
        guesses = np.where(asked, answers.guesses, -1).astype(np.int64)
    guesses[~asked] = 0  # no search ran: 0, as our kernels say
    nodes = np.where(asked, -1, 0).astype(np.int64)
    counts = np.where(asked, answers.counts, 0).astype(np.int64)  # -1: the solver did not say
    found = KernelResults(verdicts, judged.solutions, nodes, guesses, solve_ns, counts)
    return Asked(found, judged.messages, judged.kernel_agrees)

"""What a solver from outside answered, checked by the rules, never trusted: a whole batch at
a time (numpy over the batch and the numba checks of `pipeline.kernels.checks`; a sentence is
written for the few rows that went wrong only).

A row's verdict, from what the solver said (`Answers`) and what the rules say of its grid:

* `solver_error`: the adapter says it gave no answer (a crash, a timeout, unreadable output);
  the sentence is the adapter's.
* `wrong_answer`: the grid it returned is incomplete (a blank or a non-digit), changes a given,
  or repeats a digit in a row, column or box; or it said it found a solution and returned no
  grid; or it said there is none and returned a valid grid. The sentence says which.
* otherwise its claim, its grid being a proven solution: `solved` (it found exactly one,
  looking for two), `multiple` (it found two), `found` (one, looking for one, or a solver that
  does not count), `unsolvable` (it found none and returned no grid).

Givens that clash are `invalid` before any solver is asked (tdoku, for one, does not check its
input), and malformed rows are never asked.

`kernel_agrees` says whether our `fast` kernel, counting to 2, reaches the same claim (none,
exactly one, several) for each row where the solver made one (null where it did not count, or
gave no answer): a solver that says "unique" of a puzzle with two solutions is caught here,
since a single grid cannot show it.
"""

from typing import NamedTuple

import numpy as np

from pipeline.kernels import codes, solve_grids
from pipeline.kernels.checks import clash_messages, first_clash, verify_solutions
from pipeline.plugins import Answers


class Judged(NamedTuple):
    """The checked answers of a batch."""

    verdicts: np.ndarray  # (n,) int8, codes.py
    solutions: np.ndarray  # (n, 81) uint8: the grid the solver returned (checked or not)
    messages: dict[int, str]  # why a row is wrong_answer or solver_error, by its position
    kernel_agrees: np.ndarray  # (n,) int8: 1 agrees, 0 disagrees, -1 no claim to compare


def _wrong_grid_messages(grids: np.ndarray, solutions: np.ndarray) -> list[str]:
    """Why each returned grid is not a solution, in one sentence (rows that failed only)."""
    blank = (solutions == 0) | (solutions > 9)
    changed = (grids != 0) & ~blank & (solutions != grids)
    clashes = clash_messages(first_clash(solutions))
    out = []
    for i, clash in enumerate(clashes):
        if changed[i].any():
            cell = int(np.flatnonzero(changed[i])[0])
            out.append(
                f"the solver's grid changes the given {grids[i, cell]} at "
                f"r{cell // 9 + 1}c{cell % 9 + 1} to {solutions[i, cell]}"
            )
        elif blank[i].any():
            out.append(f"the solver's grid is incomplete: {int(blank[i].sum())} cells blank")
        else:
            out.append(f"the solver's grid breaks a rule: {clash}")
    return out


def kernel_claims(grids: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """`(n,) int64`: solutions our `fast` kernel finds counting to 2 (0, 1, 2), -1 where not
    asked or where it could not decide."""
    found = solve_grids(grids, "fast", solutions=2, skip=~asked)
    claims = np.full(len(asked), -1, dtype=np.int64)
    for verdict, count in ((codes.UNSOLVABLE, 0), (codes.SOLVED, 1), (codes.MULTIPLE, 2)):
        claims[found.verdicts == verdict] = count
    return claims


def agreement(grids: np.ndarray, claims: np.ndarray, limit: int) -> np.ndarray:
    """`(n,) int8`: 1 where our `fast` kernel finds what the solver claims (`claims`: the
    solutions it found up to `limit`, -1 where it made no claim), 0 where not, -1 where there
    is nothing to compare. With `limit` 1 a claim is "some" or "none"."""
    agrees = np.full(len(claims), -1, dtype=np.int8)
    claimed = claims >= 0
    if not claimed.any():
        return agrees
    ours = kernel_claims(grids, claimed)
    known = claimed & (ours >= 0)
    same = (ours == claims) if limit > 1 else ((ours > 0) == (claims > 0))
    agrees[known] = same[known]
    return agrees


def judge_answers(
    grids: np.ndarray,
    asked: np.ndarray,
    answers: Answers,
    limit: int,
    agree: bool = True,
    explain: bool = True,
) -> Judged:
    """Verdicts for `answers` to `grids`; rows where `asked` is False keep verdict -1 (the
    caller's: malformed or invalid). `agree`: compare each claim with our kernel; `explain`:
    write the sentences (`bench`'s timed pass, checked again after the clock, does not)."""
    n = len(asked)
    counts = np.minimum(answers.counts, limit)
    has_grid = answers.solutions.any(axis=1) & asked
    proven = has_grid & verify_solutions(grids, answers.solutions)  # no copies: a whole pass
    failed = np.zeros(n, dtype=np.bool_)
    if answers.errors is not None:
        failed = np.array([e is not None for e in answers.errors], dtype=np.bool_) & asked

    verdicts = np.full(n, -1, dtype=np.int8)
    verdicts[asked & (counts == 0)] = codes.UNSOLVABLE
    verdicts[asked & (counts < 0)] = codes.UNSOLVABLE  # a solver that does not count: no grid
    verdicts[proven] = codes.FOUND
    verdicts[proven & (counts == 1) & (limit > 1)] = codes.SOLVED
    verdicts[proven & (counts >= 2)] = codes.MULTIPLE
    bad_grid = has_grid & ~proven
    no_grid = asked & ~has_grid & (counts > 0)
    grid_for_none = proven & (counts == 0)
    wrong = bad_grid | no_grid | grid_for_none
    verdicts[wrong] = codes.WRONG_ANSWER
    verdicts[failed] = codes.SOLVER_ERROR

    messages: dict[int, str] = {}
    rows = np.flatnonzero(bad_grid & ~failed) if explain else np.zeros(0, np.int64)
    for i, text in zip(
        rows.tolist(), _wrong_grid_messages(grids[rows], answers.solutions[rows]), strict=True
    ):
        messages[i] = text
    for i in np.flatnonzero(no_grid & ~failed & explain).tolist():
        messages[i] = f"the solver says it found {counts[i]} solution(s) but returned no grid"
    for i in np.flatnonzero(grid_for_none & ~failed).tolist():
        messages[i] = "the solver says there is no solution but returned a valid grid"
    for i in np.flatnonzero(failed).tolist():
        messages[i] = (answers.errors or [])[i] or "the solver gave no answer"

    claims = np.where(asked & ~failed & ~wrong, counts, -1)
    agrees = agreement(grids, claims, limit) if agree else np.full(n, -1, dtype=np.int8)
    return Judged(verdicts, answers.solutions, messages, agrees)  # rows not asked: zeros

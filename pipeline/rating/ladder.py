"""The grade of a puzzle: the hardest rung of a fixed ladder of logic techniques it needs.

The ladder is applied the way a careful person solves: always the simplest technique that makes
progress (a placement or an elimination), and back to the bottom rung after every step. The
grade is the highest rung used; `search` when the ladder stalls before the grid is full. All the
techniques are sound and only remove candidates, so a rung used at one moment stays usable
later: the grade is the lowest rung `g` such that the techniques up to `g` solve the puzzle, and
it does not depend on the order in which instances are found, nor on how the puzzle is written
(tested: the 50,623 17-clue and top1465 puzzles keep their grades under 3 random symmetries).

The order of the rungs follows the ratings of Sudoku Explainer (the rating program behind the
"SE" ratings of the forum's hardest lists): hidden single 1.2-1.5, naked single 2.3, locked
candidates 2.6-2.8, naked pair 3.0, X-wing 3.2, hidden pair 3.4, naked triple 3.6, swordfish
3.8, hidden triple 4.0, XY-wing 4.2, XYZ-wing 4.4, naked quad 5.0, jellyfish 5.2, hidden quad
5.4; then chains, which SE rates from 6.5 up by length (the ladder puts each kind on one rung):
X-chains (the skyscraper, two-string kite and turbot fish are the shortest), then XY-chains.
Steps are counted per rung: placements for the singles, candidates removed for the rest.
"""

from typing import NamedTuple

import numpy as np

from pipeline.compiled import inline_part, kernel
from pipeline.rating.board import (
    agrees_with,
    blank_cells,
    start_board,
    start_board_from_candidates,
)
from pipeline.rating.puzzles import rated_puzzles
from pipeline.rating.rungs import LAST_RUNG, apply_rung_at, rung_entries

TECHNIQUES: tuple[str, ...] = (
    "hidden_single",
    "naked_single",
    "locked_candidates",
    "naked_pair",
    "x_wing",
    "hidden_pair",
    "naked_triple",
    "swordfish",
    "hidden_triple",
    "xy_wing",
    "xyz_wing",
    "naked_quad",
    "jellyfish",
    "hidden_quad",
    "x_chain",
    "xy_chain",
)
GRADES: tuple[str, ...] = (*TECHNIQUES, "search")  # the ladder, easiest first
SINGLES: tuple[str, ...] = TECHNIQUES[:2]  # the grades of puzzles solved by singles alone
RUNGS = len(TECHNIQUES)
assert RUNGS == LAST_RUNG + 1, "rungs.py applies each technique by its rung"
SEARCH = RUNGS  # grade code of a puzzle the ladder cannot finish
NO_GRADE = -1  # grade code of a malformed row, clashing givens, or a contradiction found


@inline_part
def climb(
    entries: np.ndarray,
    values: np.ndarray,
    candidates: np.ndarray,
    steps: np.ndarray,
    solution: np.ndarray,
    check: bool,
) -> tuple[int, int]:
    """Run the ladder on a started board until it is full, stalls or contradicts itself
    (`entries`: the techniques' addresses, `rungs.rung_entries()`).

    Adds each rung's steps to `steps` (RUNGS,). Returns (grade code, the first rung whose
    sweep left the board disagreeing with `solution`, or -1; only looked at when `check`).
    """
    hardest = 0
    wrong = -1
    blanks = blank_cells(values)
    while blanks > 0:
        made = 0
        rung = 0
        while rung < RUNGS:
            made = apply_rung_at(entries, rung, values, candidates)
            if made != 0:
                break
            rung += 1
        if made == 0:
            return SEARCH, wrong
        if made < 0:
            return NO_GRADE, wrong
        steps[rung] += made
        if rung > hardest:
            hardest = rung
        if rung <= 1:  # the singles place digits
            blanks -= made
        if check and wrong < 0 and not agrees_with(values, candidates, solution):
            wrong = rung
    return hardest, wrong


@kernel
def grade_kernel(
    puzzles: np.ndarray,
    entries: np.ndarray,
    pencilmarks: bool,
    skip: np.ndarray,
    solutions: np.ndarray,
    check: bool,
    grades: np.ndarray,
    steps: np.ndarray,
    blanks_left: np.ndarray,
    wrong: np.ndarray,
) -> None:
    """Grade a batch: `puzzles (n, 81)`, `uint8` grids, or with `pencilmarks` `uint16`
    candidates (`board.start_board_from_candidates`); rows where `skip` is True get NO_GRADE.
    `entries`: the techniques' addresses (`rungs.rung_entries()`).

    Outputs: `grades (n,) int8` (index into GRADES, or NO_GRADE), `steps (n, RUNGS) int32`,
    `blanks_left (n,) int32` (blank cells when the ladder stopped), `wrong (n,) int8`. With
    `check`, `solutions (n, 81)` are the known solutions and `wrong[i]` is the first rung whose
    sweep removed a solution digit (-1: none); without, `solutions` may be any (1, 81) array.
    """
    values = np.empty(81, dtype=np.uint8)
    candidates = np.empty(81, dtype=np.int32)
    for i in range(puzzles.shape[0]):
        wrong[i] = -1
        for rung in range(RUNGS):
            steps[i, rung] = 0
        started = not skip[i] and (
            start_board_from_candidates(puzzles[i], values, candidates)
            if pencilmarks
            else start_board(puzzles[i], values, candidates)
        )
        if not started:
            grades[i] = NO_GRADE
            blanks_left[i] = 0
            continue
        grade, first_wrong = climb(
            entries, values, candidates, steps[i], solutions[i if check else 0], check
        )
        grades[i] = grade
        wrong[i] = first_wrong
        blanks_left[i] = blank_cells(values)


class GradeResults(NamedTuple):
    """Per-puzzle outputs of `grade_grids`, one entry per input row."""

    grades: np.ndarray  # (n,) int8: index into GRADES, NO_GRADE (-1) for no grade
    steps: np.ndarray  # (n, RUNGS) int32: placements / eliminations made by each technique
    blanks_left: np.ndarray  # (n,) int32: blank cells the ladder left (0 unless `search`)
    wrong: np.ndarray  # (n,) int8: with solutions, the first rung that removed one; else -1


def grade_grids(
    grids: np.ndarray | None,
    skip: np.ndarray | None = None,
    solutions: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
) -> GradeResults:
    """Grade `(n, 81) uint8` grids with the ladder; rows in `skip`, and rows whose givens clash
    or whose candidates run out (no solution), get `NO_GRADE`.

    `solutions` (`(n, 81)`, optional): known solutions; each rung's sweep is then checked to
    keep them (`wrong`), which is how the tests prove the techniques sound.

    `candidates`: pencilmark puzzles instead (`(n, 81) uint16`, see
    `pipeline.kernels.candidates`; `grids` is ignored): the ladder starts from them, cells with
    one candidate placed. Steps count only what the ladder does beyond the marks given.
    """
    puzzles, skip = rated_puzzles(grids, candidates, skip, "grade_grids")
    n = puzzles.shape[0]
    check = solutions is not None
    if check:
        known = np.ascontiguousarray(solutions, dtype=np.uint8).reshape(-1, 81)
        if known.shape != puzzles.shape:
            raise ValueError(f"solutions must have shape {puzzles.shape}, got {known.shape}")
    else:
        known = np.zeros((1, 81), dtype=np.uint8)
    out = GradeResults(
        np.empty(n, dtype=np.int8),
        np.empty((n, RUNGS), dtype=np.int32),
        np.empty(n, dtype=np.int32),
        np.empty(n, dtype=np.int8),
    )
    grade_kernel(puzzles, rung_entries(), candidates is not None, skip, known, check, *out)
    return out

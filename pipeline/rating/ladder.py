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
from pipeline.rating.chains import x_chain, xy_chain
from pipeline.rating.fish import fish
from pipeline.rating.puzzles import rated_puzzles
from pipeline.rating.singles import hidden_single, locked_candidates, naked_single
from pipeline.rating.subsets import hidden_subset, naked_subset
from pipeline.rating.wings import wing

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
SEARCH = RUNGS  # grade code of a puzzle the ladder cannot finish
NO_GRADE = -1  # grade code of a malformed row, clashing givens, or a contradiction found


@inline_part
def apply_rung(rung: int, values: np.ndarray, candidates: np.ndarray) -> int:
    """One sweep of the technique at `rung` (an index into TECHNIQUES): steps made, or -1."""
    if rung < HARD_RUNGS:
        return easy_rungs(rung, values, candidates)
    return hard_rungs(rung, values, candidates)


HARD_RUNGS = 9  # the first rung of `hard_rungs`: xy_wing


# The ladder's techniques in two kernels, `easy_rungs` and `hard_rungs`, each cached on its own:
# on a first run they compile side by side (`run.warmup`), and `apply_rung` links both (the
# rating compiled 16.1 CPU s in one piece, the most of any kernel). Each size written out, not
# read from a table of (technique, size) by rung: a size known when compiling lets numba
# specialise the subset and fish loops; the table made those rungs 12-40% slower a sweep
# (naked quad 5.6 -> 7.4 us, naked pair 1.6 -> 2.3 us, on 2,405 stalled top1465 and
# forum-hardest boards, one core, best of 15) and `grade` 8-10% slower on top1465 and
# forum_hardest_1905_11+.
@kernel
def easy_rungs(rung: int, values: np.ndarray, candidates: np.ndarray) -> int:
    """`apply_rung` for the rungs below HARD_RUNGS: singles to hidden triples."""
    if rung == 0:
        return hidden_single(values, candidates)
    if rung == 1:
        return naked_single(values, candidates)
    if rung == 2:
        return locked_candidates(values, candidates)
    if rung == 3:
        return naked_subset(values, candidates, 2)
    if rung == 4:
        return fish(values, candidates, 2)
    if rung == 5:
        return hidden_subset(values, candidates, 2)
    if rung == 6:
        return naked_subset(values, candidates, 3)
    if rung == 7:
        return fish(values, candidates, 3)
    return hidden_subset(values, candidates, 3)


@kernel
def hard_rungs(rung: int, values: np.ndarray, candidates: np.ndarray) -> int:
    """`apply_rung` for the rungs from HARD_RUNGS on: wings, quads, jellyfish, chains."""
    if rung == 9:
        return wing(values, candidates, 2)
    if rung == 10:
        return wing(values, candidates, 3)
    if rung == 11:
        return naked_subset(values, candidates, 4)
    if rung == 12:
        return fish(values, candidates, 4)
    if rung == 13:
        return hidden_subset(values, candidates, 4)
    if rung == 14:
        return x_chain(values, candidates)
    return xy_chain(values, candidates)


@inline_part
def climb(
    values: np.ndarray,
    candidates: np.ndarray,
    steps: np.ndarray,
    solution: np.ndarray,
    check: bool,
) -> tuple[int, int]:
    """Run the ladder on a started board until it is full, stalls or contradicts itself.

    Adds each rung's steps to `steps` (RUNGS,). Returns (grade code, the first rung whose
    sweep left the board disagreeing with `solution`, or -1; only looked at when `check`).
    """
    hardest = 0
    wrong = -1
    blanks = blank_cells(values)
    while blanks > 0:
        made = 0
        rung = np.int64(0)  # not the literal 0, for which numba compiled apply_rung once more
        while rung < RUNGS:
            made = apply_rung(rung, values, candidates)
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
            values, candidates, steps[i], solutions[i if check else 0], check
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
    grade_kernel(puzzles, candidates is not None, skip, known, check, *out)
    return out

"""A model's answers judged against the rules, a whole batch at a time: each prediction's
verdict, the sentence that says why it is not `correct`, and how many cells it got right.

    verdicts = judge(puzzles, predictions)             # (n,) int8 codes into VERDICT_NAMES
    cells = count_correct_cells(verdicts, predictions.grids, solutions, has_solution)
    why = messages(verdicts, puzzles, predictions)     # null for `correct`

The verdicts, from best to worst (the ladder's order; a prediction gets the worst that applies):

* `correct`: 81 digits that keep every given and repeat no digit in a row, column or box. For
  a puzzle with several solutions, any of them: the rules decide, not an expected answer.
* `wrong`: complete and keeps the givens, but breaks a rule (the first clash is named).
* `givens_changed`: complete, but a given of the puzzle holds another digit.
* `incomplete`: 81 cells, some of them blank (`.` or `0`).
* `malformed`: the puzzle or the prediction is not 81 cells of digits or blanks (or missing).

`cells_correct` counts the cells (givens included) that hold the solution's digit: 81 for a
`correct` prediction whichever solution it is, else against the known solution; unknown (-1)
for a malformed row or a puzzle without a solution. Every step works on numpy arrays of the
whole batch and on Arrow string kernels: no Python loop per puzzle.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import CELLS, ParsedGrids
from pipeline.kernels.checks import first_clash, givens_valid

CORRECT, WRONG, GIVENS_CHANGED, INCOMPLETE, MALFORMED = range(5)
VERDICT_NAMES: tuple[str, ...] = ("correct", "wrong", "givens_changed", "incomplete", "malformed")
UNKNOWN = -1  # cells_correct where no solution is known


def judge(puzzles: ParsedGrids, predictions: ParsedGrids) -> np.ndarray:
    """`(n,) int8` verdicts of `predictions` for `puzzles`, without a solution: the rules
    alone decide."""
    given = puzzles.grids != 0
    blank = predictions.grids == 0
    changed = (given & ~blank & (predictions.grids != puzzles.grids)).any(axis=1)
    verdicts = np.full(len(puzzles.ok), CORRECT, np.int8)
    verdicts[~givens_valid(predictions.grids)] = WRONG
    verdicts[changed] = GIVENS_CHANGED
    verdicts[blank.any(axis=1)] = INCOMPLETE
    verdicts[~(puzzles.ok & predictions.ok)] = MALFORMED
    return verdicts


def count_correct_cells(
    verdicts: np.ndarray, predictions: np.ndarray, solutions: np.ndarray, has_solution: np.ndarray
) -> np.ndarray:
    """`(n,) int8` cells of each prediction equal to its puzzle's solution; 81 for `correct`,
    UNKNOWN where the row is malformed or no solution is known."""
    cells = (predictions == solutions).sum(axis=1, dtype=np.int16).astype(np.int8)
    cells[~has_solution | (verdicts == MALFORMED)] = UNKNOWN
    cells[verdicts == CORRECT] = CELLS
    return cells


def messages(verdicts: np.ndarray, puzzles: ParsedGrids, predictions: ParsedGrids) -> pa.Array:
    """One sentence per row whose verdict is not `correct`, null for `correct` rows."""
    out: pa.Array = pa.nulls(len(verdicts), pa.string())
    for verdict, say in (
        (MALFORMED, _malformed),
        (INCOMPLETE, _incomplete),
        (GIVENS_CHANGED, _givens_changed),
        (WRONG, _wrong),
    ):
        rows = np.flatnonzero(verdicts == verdict)
        if rows.size:
            mask = pa.array(verdicts == verdict)
            out = pc.replace_with_mask(out, mask, say(rows, puzzles, predictions))
    return out


def _text(values: np.ndarray) -> pa.Array:
    return pa.array(values).cast(pa.string())


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _plural(counts: np.ndarray, one: str, many: str) -> pa.Array:
    """`counts` followed by the word for one or for many."""
    return _join(_text(counts), pc.if_else(pa.array(counts == 1), one, many))


def _where(cells: np.ndarray) -> pa.Array:
    """Cells 0..80 as `r1c1` .. `r9c9`."""
    return _join("r", _text(cells // 9 + 1), "c", _text(cells % 9 + 1))


def _malformed(rows: np.ndarray, puzzles: ParsedGrids, predictions: ParsedGrids) -> pa.Array:
    """`puzzle: <why>` when the puzzle is bad, else `prediction: <why>`."""
    bad_puzzle = ~puzzles.ok[rows]
    index = pa.array(rows)
    why = pc.if_else(
        pa.array(bad_puzzle), puzzles.errors.take(index), predictions.errors.take(index)
    )
    # the parser says "missing puzzle" of a null: say "missing" of a missing prediction too
    why = pc.replace_substring(why, "missing puzzle", "missing")
    return _join(pc.if_else(pa.array(bad_puzzle), "puzzle: ", "prediction: "), why)


def _incomplete(rows: np.ndarray, puzzles: ParsedGrids, predictions: ParsedGrids) -> pa.Array:
    """`12 cells left blank, the first at r1c3`."""
    blank = predictions.grids[rows] == 0
    counts = blank.sum(axis=1)
    return _join(
        _plural(counts, " cell left blank", " cells left blank"),
        ", the first at ",
        _where(blank.argmax(axis=1)),
    )


def _givens_changed(rows: np.ndarray, puzzles: ParsedGrids, predictions: ParsedGrids) -> pa.Array:
    """`2 givens changed, the first at r1c1: 5 became 6`."""
    puzzle, predicted = puzzles.grids[rows], predictions.grids[rows]
    changed = (puzzle != 0) & (predicted != puzzle)
    first = changed.argmax(axis=1)
    at = np.arange(len(rows))
    return _join(
        _plural(changed.sum(axis=1), " given changed", " givens changed"),
        ", the first at ",
        _where(first),
        ": ",
        _text(puzzle[at, first]),
        " became ",
        _text(predicted[at, first]),
    )


_UNIT_NAMES = pa.array(["row", "column", "box"])


def _wrong(rows: np.ndarray, puzzles: ParsedGrids, predictions: ParsedGrids) -> pa.Array:
    """The first clash of the prediction: `box 4 repeats 7 at r4c1 and r5c2`."""
    clash = first_clash(predictions.grids[rows])  # complete grids: a digit repeats, kind 0..2
    kind = pa.array(clash.kind.astype(np.int64))
    return _join(
        _UNIT_NAMES.take(kind),
        " ",
        _text(clash.unit.astype(np.int64) + 1),
        " repeats ",
        _text(clash.digit),
        " at ",
        _where(clash.cell_a.astype(np.int64)),
        " and ",
        _where(clash.cell_b.astype(np.int64)),
    )

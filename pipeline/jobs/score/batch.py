"""One batch of predictions scored, the unit of work a worker runs: parse the puzzles and the
predictions, learn each puzzle's solution (the input's solution column where it solves the
puzzle, else the `fast` kernel, for the rows that need one), judge (`verdicts`), and build the
output table and the batch's figures.

    scored = score_record_batch(batch, ScoreOptions(prediction="answer"))
    scored.table, scored.tally
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.cell_lists import is_cell_lists
from pipeline.grid import ParsedGrids, clue_counts, format_grids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.io.readers import as_text
from pipeline.jobs.score.summary import BatchTally, tally_batch
from pipeline.jobs.score.verdicts import (
    CORRECT,
    MALFORMED,
    UNKNOWN,
    VERDICT_NAMES,
    count_correct_cells,
    judge,
    messages,
)
from pipeline.kernels import solve_grids
from pipeline.kernels.checks import verify_solutions
from pipeline.limits import MAX_RATE_SAMPLES
from pipeline.results.schema import enum_array, enum_field, row_fields

VERDICT_FIELD = enum_field("verdict", VERDICT_NAMES, nullable=False)
SOLVER = "fast"  # the kernel that finds the solutions the input does not give
COLUMNS: dict[str, str] = {
    "row": "0-based position in the input",
    "id": "the input's id column, when it has one (its type kept)",
    "puzzle": "the puzzle as read (81 characters, `.` for blanks, when it parses), as `solve` "
    "writes it: what the message's cells refer to, and how `report` joins two models' rows",
    "verdict": "`correct`, `wrong`, `givens_changed`, `incomplete` or `malformed` (best to "
    "worst; a polars Enum in that order)",
    "message": "why the verdict is not `correct`, in a sentence; null for `correct`",
    "cells_correct": "cells (givens included, 0..81) holding the solution's digit; 81 for "
    "`correct`; null for `malformed` rows and puzzles without a solution",
    "clues": "number of givens; null where the puzzle is malformed",
    "grade": "the input's `grade` column, as text, when it has one; with `--rate`, the "
    "hardest technique a person needs (`solve --rate`'s)",
    "difficulty": "the input's `difficulty` column, as a number (null where it is not one), "
    "when it has one; with `--rate`, mean guesses over random symmetries (`solve --rate`'s)",
}


@dataclass(frozen=True)
class ScoreOptions:
    """Which columns of a batch hold what: the predictions, and the input's solutions and
    grades when it has them (the batch's `puzzle`, `row` and `id` are always so named)."""

    prediction: str = "prediction"
    solution: str | None = None
    grade: str | None = None
    difficulty: str | None = None
    rate: bool = False  # rate each puzzle (`pipeline.rating`): its grade and difficulty
    rate_samples: int = 16  # symmetries averaged by the difficulty

    def __post_init__(self) -> None:
        if not 1 <= self.rate_samples <= MAX_RATE_SAMPLES:
            raise ValueError(
                f"rate_samples must be between 1 and {MAX_RATE_SAMPLES:,}, not {self.rate_samples}"
            )

    def kernels(self) -> tuple[str, ...]:
        """The kernels a batch calls (`run.warmup.KERNELS`): the solver, the clash check, the
        check of the predictions and the input's solutions (`verify`), and the rating's with
        `rate`."""
        return (SOLVER, "clash", "verify", *(("rating",) if self.rate else ()))

    @property
    def has_grade(self) -> bool:
        return self.rate or self.grade is not None

    @property
    def has_difficulty(self) -> bool:
        return self.rate or self.difficulty is not None


def output_schema(id_type: pa.DataType | None, grade: bool, difficulty: bool = False) -> pa.Schema:
    """The score output's schema: one row per input row."""
    fields = row_fields(id_type) + [
        pa.field("puzzle", pa.string()),
        VERDICT_FIELD,
        pa.field("message", pa.string()),
        pa.field("cells_correct", pa.int8()),
        pa.field("clues", pa.int8()),
    ]
    if grade:
        fields.append(pa.field("grade", pa.string()))
    if difficulty:
        fields.append(pa.field("difficulty", pa.float64()))
    return pa.schema(fields)


def documented_schema() -> tuple[pa.Schema, dict[str, str]]:
    """Every column an output may hold, and what each means (the docs' table)."""
    return output_schema(pa.string(), grade=True, difficulty=True), COLUMNS


def ratings(
    batch: pa.RecordBatch, puzzles: ParsedGrids, options: ScoreOptions
) -> tuple[pa.Array | None, pa.Array | None]:
    """The rows' grades (text) and difficulties (float64): rated here with `rate`, else the
    input's columns when it has them (a difficulty that is not a number becomes null)."""
    if options.rate:
        import polars as pl

        from pipeline.rating import rate_grids

        rated = rate_grids(puzzles.grids, ~puzzles.ok, options.rate_samples)
        return rated["grade"].cast(pl.String).to_arrow(), rated["difficulty"].to_arrow()
    grades = difficulty = None
    if options.grade is not None:
        grades = optional_column(batch, options.grade)
        grades = None if grades is None else grades.cast(pa.string())
    if options.difficulty is not None:
        difficulty = optional_column(batch, options.difficulty)
        if difficulty is not None:
            if pa.types.is_integer(difficulty.type) or pa.types.is_floating(difficulty.type):
                return grades, difficulty.cast(pa.float64())
            import polars as pl  # text: what is not a number becomes null

            numbers = pl.Series(difficulty).cast(pl.String).cast(pl.Float64, strict=False)
            difficulty = numbers.to_arrow()
    return grades, difficulty


class ScoredBatch(NamedTuple):
    """What a worker sends back for one batch: its output rows and its figures."""

    table: pa.Table
    tally: BatchTally


def known_solutions(
    puzzles: ParsedGrids, expected: pa.Array | None, wanted: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`(n, 81) uint8` solutions and `(n,) bool` where one is known: the input's own where it
    solves its puzzle (a wrong or damaged one is not trusted), else, for the `wanted` rows
    only, the first solution the kernel finds (none for a puzzle that has none)."""
    n = len(puzzles.ok)
    solutions, known = np.zeros((n, 81), np.uint8), np.zeros(n, np.bool_)
    if expected is not None:
        given = parse_puzzles(expected)
        known = puzzles.ok & given.ok & verify_solutions(puzzles.grids, given.grids)
        solutions = given.grids
    todo = np.flatnonzero(wanted & puzzles.ok & ~known)
    if todo.size:
        found = solve_grids(puzzles.grids[todo], strategy=SOLVER, solutions=1)
        got = (found.solutions != 0).all(axis=1)
        solutions[todo[got]] = found.solutions[got]
        known[todo[got]] = True
    return solutions, known


def score_record_batch(batch: pa.RecordBatch, options: ScoreOptions) -> ScoredBatch:
    """Score a batch with columns `row`, `puzzle`, the prediction column and optionally `id`,
    the solution and grade columns: one output row per input row, and the batch's figures."""
    raw = batch.column(batch.schema.get_field_index("puzzle"))
    puzzles = parse_puzzles(raw)
    answers = batch.column(batch.schema.get_field_index(options.prediction))
    # a Parquet column of bytes read as text; lists of 81 ints (a model's outputs) as they are
    predictions = parse_puzzles(answers if is_cell_lists(answers.type) else as_text(answers))
    expected = None if options.solution is None else optional_column(batch, options.solution)
    verdicts = judge(puzzles, predictions)
    # solutions for the rows that need one: a correct prediction holds 81 right cells anyway
    wanted = (verdicts != CORRECT) & (verdicts != MALFORMED)
    solutions, known = known_solutions(puzzles, expected, wanted)
    cells = count_correct_cells(verdicts, predictions.grids, solutions, known)
    clues = clue_counts(puzzles.grids)
    grades, difficulty = ratings(batch, puzzles, options)
    columns: dict[str, pa.Array] = {"row": batch.column(batch.schema.get_field_index("row"))}
    ids = optional_column(batch, "id")
    if ids is not None:
        columns["id"] = ids
    columns |= {
        "puzzle": pc.if_else(
            pa.array(puzzles.ok), format_grids(puzzles.grids), raw.cast(pa.string())
        ),
        "verdict": enum_array(verdicts, VERDICT_FIELD),
        "message": messages(verdicts, puzzles, predictions),
        "cells_correct": pa.array(cells, mask=cells == UNKNOWN),
        "clues": pa.array(clues, mask=~puzzles.ok),
    }
    if grades is not None:
        columns["grade"] = grades
    if difficulty is not None:
        columns["difficulty"] = difficulty
    schema = output_schema(
        None if ids is None else ids.type, grades is not None, difficulty is not None
    )
    table = pa.Table.from_pydict(columns, schema=schema)
    tally = tally_batch(verdicts, clues, puzzles.ok, cells, grades, difficulty)
    return ScoredBatch(table, tally)

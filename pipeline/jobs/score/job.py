"""The score job: a file of a model's answers in, one row per answer out, on all cores.

    summary = score_file("predictions.csv")    # -> predictions.scored.parquet beside the input
    summary.accuracy, summary.by_clues

Reads the input as `solve` does (the same job set-up, options and output checks); its puzzle,
solution and id columns are found as solve finds them, and its prediction column by name
(`io.columns.prediction_column`). The workers score each batch (`batch`) and encode its rows in
the output's format; the parent keeps the parts in order beside the output and joins them at
the end, atomically, with the run's metadata, as solve does. A run that stops (Ctrl-C, lost
workers) keeps its finished parts; `resume=True` goes on from them, as solve's does, and its
summary's figures are read back from the whole output (the parts hold the figures of the rows
done before).
"""

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Unpack

from pipeline.cell_lists import is_cell_lists
from pipeline.errors import InputError
from pipeline.io.columns import prediction_column
from pipeline.io.dataset import Dataset
from pipeline.io.readers import is_text
from pipeline.jobs import JOBS
from pipeline.jobs.score.batch import ScoreOptions, output_schema, score_record_batch
from pipeline.jobs.score.summary import BatchTally, ScoreSummary, ScoreTally, tally_output
from pipeline.jobs.score.verdicts import VERDICT_NAMES
from pipeline.limits import MAX_RATE_SAMPLES
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, Task, part_of, verdict_counts

JOB = JOBS["score"]
SCORED_SUFFIX = JOB.suffix
GRADE_COLUMN = "grade"  # an input column of this name gives the accuracy by grade
DIFFICULTY_COLUMN = "difficulty"  # and one of this name, each row's difficulty (a number)


@dataclass(frozen=True)
class ScoredPart:
    """A batch's output rows, encoded, and its figures: what a worker sends back."""

    part: Part
    tally: BatchTally

    @property
    def rows(self) -> int:
        return self.part.rows


def score_part(task: Task, options: ScoreOptions, fmt: str) -> ScoredPart:
    """The unit of work: score one batch and encode its rows in `fmt`."""
    scored = score_record_batch(task.batch, options)
    counts = verdict_counts(scored.table, VERDICT_NAMES)
    return ScoredPart(part_of(task, scored.table, fmt, counts), scored.tally)


def score_file(
    input_path: str | Path,
    output: str | Path | None = None,
    *,
    prediction_column: str | None = None,
    resume: bool = False,
    rate: bool = False,
    rate_samples: int = 16,
    **options: Unpack[JobOptions],
) -> ScoreSummary:
    """Score every prediction of `input_path` into `output` (default `<stem>.scored.parquet`
    beside the input; `-`: stdout): one row per input row, with its verdict (`correct`,
    `wrong`, `givens_changed`, `incomplete`, `malformed`), a message, the cells correct and
    the clue count (`batch.COLUMNS`). `dataset=True`: `output` (default `<stem>.scored/`) is a
    Parquet dataset folder, as for `solve_file`.

    The predictions are the column named `prediction_column`, else the first named
    prediction, predicted or output (plurals too), never the input's solution column (in
    sudoku-extreme's layout, `answer`). The input's solution column, where
    it solves its puzzle, gives the cells correct; else the `fast` kernel finds a solution.
    Input columns `grade` and `difficulty` (`solve --rate` writes both) come along, and the
    summary gives the accuracy by grade; `rate` rates each puzzle here instead (its grade, and
    its difficulty: mean guesses over `rate_samples` symmetries; far dearer than the scoring).
    `options`: how to read the input and run the job, as for `solve_file` (`JobOptions`).

    Raises `InputError` (its message one line) for a bad file, column, option or output,
    `RunFailed` when the workers or the cluster go away, and `RunInterrupted` after Ctrl-C or
    SIGTERM; both keep the finished batches for `resume=True` (`CheckpointError` when the
    checkpoint is another run's or damaged).
    """
    if not 1 <= rate_samples <= MAX_RATE_SAMPLES:
        raise InputError(
            f"rate_samples must be between 1 and {MAX_RATE_SAMPLES:,}, not {rate_samples}"
        )
    job = start_job(
        JOB, input_path, output, options, resume=resume, kernels=ScoreOptions(rate=rate).kernels()
    )
    assert job.inputs is not None
    if job.inputs.several:
        raise InputError("score takes one input at a time")
    scoring, found = score_options(job.inputs.first, prediction_column, job.reading.solution_column)
    if rate:
        ds = job.inputs.first
        rated = [c for c in (GRADE_COLUMN, DIFFICULTY_COLUMN) if c in ds.extra_columns]
        if rated:
            raise InputError(
                f"{ds.location}: has a {' and a '.join(rated)} column already: "
                "score it without --rate, or rename the column"
            )
        scoring = replace(scoring, rate=True, rate_samples=rate_samples)
    return _run(job, scoring, found)


def score_options(
    ds: Dataset, wanted: str | None, named_solution: str | None
) -> tuple[ScoreOptions, str]:
    """Which batch columns hold the predictions, solutions and grades of `ds`, and the input's
    column of predictions (as the run's metadata records it)."""
    name = ds.location
    if not ds.columns and ds.num_rows == 0:  # an empty file: nothing to find, nothing to score
        return ScoreOptions(), wanted or "prediction"
    taken = (ds.puzzle_column, ds.id_column, ds.solution_column)
    prediction = prediction_column(name, ds.columns, wanted, taken)
    if prediction in (ds.puzzle_column, ds.id_column):
        role, option = (
            ("puzzle", "--column") if prediction == ds.puzzle_column else ("id", "--id-column")
        )
        raise InputError(
            f"{name}: the prediction column '{prediction}' is the {role} column; "
            f"name the {role} column with {option}"
        )
    solution = "solution" if ds.solution_column is not None else None
    if prediction in ds.extra_columns:
        kind = ds.extra_schema.field(ds.extra_columns[prediction]).type
        if not (is_text(kind) or is_cell_lists(kind)):
            raise InputError(
                f"{name}: the prediction column '{prediction}' holds {kind}; "
                "expected puzzle strings or lists of 81 ints 0-9"
            )
    if prediction == ds.solution_column:
        if named_solution is not None:
            raise InputError(
                f"{name}: the prediction and solution columns must differ ('{prediction}')"
            )
        # found as the solutions (by name, or in a file without a header by content), but
        # named as the predictions: it is the predictions, and there are no solutions
        return ScoreOptions("solution", None, *_ratings(ds)), prediction
    return ScoreOptions(ds.extra_columns[prediction], solution, *_ratings(ds)), prediction


def _ratings(ds: Dataset) -> tuple[str | None, str | None]:
    """The batch columns of the input's `grade` and `difficulty` columns, when it has them."""
    return ds.extra_columns.get(GRADE_COLUMN), ds.extra_columns.get(DIFFICULTY_COLUMN)


def _run(job: Job, scoring: ScoreOptions, prediction: str) -> ScoreSummary:
    """The score job, on the run loop."""
    assert job.inputs is not None
    ds = job.inputs.first
    id_type = ds.schema.field("id").type if ds.id_column is not None else None
    schema = output_schema(id_type, scoring.has_grade, scoring.has_difficulty)
    identity = {"command": "score", **asdict(scoring)}
    tally = ScoreTally()
    with running(job, schema, identity=lambda: job.identity(identity)) as run:
        if run.sliced:  # workers read their slices and keep their parts: any order
            for kept in run.map_slices(score_part, scoring, job.format):
                run.write(kept)
                for scored in kept.results:
                    tally.add(scored.tally)
        else:
            for scored in run.map(score_part, run.tasks(slow=scoring.rate), scoring, job.format):
                run.write(scored.part)
                tally.add(scored.tally)
        run.finish()
        wall, rate = job.wall(), run.rate()
        options: dict[str, Any] = asdict(scoring) | {"prediction_column": prediction}
        metadata = job.metadata(run.rows, options, rate, resumed_rows=run.resumed.rows)
        run.commit(metadata)
    if run.resumed.rows and job.output is not None:  # the rows done before are in the output
        tally = tally_output(job.output, job.format)
    summary = tally.summary(
        input=job.inputs.names[0],
        output=str(job.target),
        wall_s=wall,
        rows_per_s=rate,
        workers=job.executor.workers,
        resumed_rows=run.resumed.rows,
    )
    summary.metadata = metadata
    return summary

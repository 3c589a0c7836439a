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

from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.columns import prediction_column
from pipeline.io.dataset import Dataset
from pipeline.io.inputs import STDIN
from pipeline.io.text_columns import check_text_columns
from pipeline.io.writers import encode
from pipeline.jobs.score.batch import ScoreOptions, output_schema, score_record_batch
from pipeline.jobs.score.summary import BatchTally, ScoreSummary, ScoreTally, tally_output
from pipeline.jobs.score.verdicts import VERDICT_NAMES
from pipeline.run.checkpoint import Checkpoint, Progress, StreamSink, open_sink
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, verdict_counts

SCORED_SUFFIX = ".scored.parquet"
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


def score_part(task: tuple[int, pa.RecordBatch], options: ScoreOptions, fmt: str) -> ScoredPart:
    """The unit of work: score one batch (`task`: its first row, the batch) and encode its
    rows in `fmt`."""
    start, batch = task
    scored = score_record_batch(batch, options)
    data = encode(scored.table, fmt, header=start == 0)
    part = Part(
        start, scored.table.num_rows, 0, start, data, verdict_counts(scored.table, VERDICT_NAMES)
    )
    return ScoredPart(part, scored.tally)


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
    the clue count (`batch.COLUMNS`).

    The predictions are the column named `prediction_column`, else the first named
    prediction, predicted, output or answer (plurals too). The input's solution column, where
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
    if rate_samples < 1:
        raise InputError(f"rate_samples must be at least 1, not {rate_samples}")
    job = start_job(
        "score",
        input_path,
        output,
        SCORED_SUFFIX,
        options,
        kernels=ScoreOptions(rate=rate).kernels(),
    )
    if job.inputs.several:
        raise InputError("score takes one input at a time")
    scoring = score_options(job.inputs.first, prediction_column, job.reading.solution_column)
    if rate:
        ds = job.inputs.first
        rated = [c for c in (GRADE_COLUMN, DIFFICULTY_COLUMN) if c in ds.extra_columns]
        if rated:
            raise InputError(
                f"{ds.location}: has a {' and a '.join(rated)} column already: "
                "score it without --rate, or rename the column"
            )
        scoring = replace(scoring, rate=True, rate_samples=rate_samples)
    if resume and job.output is None:
        raise InputError("--resume needs an output file (a run to stdout keeps nothing)")
    if resume and job.inputs.first.stream:
        stream = "stdin" if job.inputs.names[0] == STDIN else job.inputs.names[0]
        raise InputError(f"--resume cannot continue from {stream}: it can be read once only")
    with job.locked():
        return _run(job, scoring, prediction_column, resume)


def score_options(ds: Dataset, wanted: str | None, named_solution: str | None) -> ScoreOptions:
    """Which batch columns hold the predictions, solutions and grades of `ds`."""
    name = ds.location
    prediction = prediction_column(name, ds.columns, wanted, (ds.puzzle_column, ds.id_column))
    if prediction in (ds.puzzle_column, ds.id_column):
        role, option = (
            ("puzzle", "--column") if prediction == ds.puzzle_column else ("id", "--id-column")
        )
        raise InputError(
            f"{name}: the prediction column '{prediction}' is the {role} column; "
            f"name the {role} column with {option}"
        )
    solution = "solution" if ds.solution_column is not None else None
    if prediction == ds.solution_column:
        if named_solution is not None:
            raise InputError(
                f"{name}: the prediction and solution columns must differ ('{prediction}')"
            )
        # found as the solutions (by name, or in a file without a header by content), but
        # named as the predictions: it is the predictions, and there are no solutions
        return ScoreOptions("solution", None, *_ratings(ds))
    return ScoreOptions(ds.extra_columns[prediction], solution, *_ratings(ds))


def _ratings(ds: Dataset) -> tuple[str | None, str | None]:
    """The batch columns of the input's `grade` and `difficulty` columns, when it has them."""
    return ds.extra_columns.get(GRADE_COLUMN), ds.extra_columns.get(DIFFICULTY_COLUMN)


def _tasks(ds: Dataset, start: int) -> Iterator[tuple[int, pa.RecordBatch]]:
    for batch in ds.batches(start):
        yield start, batch
        start += batch.num_rows


def _run(job: Job, scoring: ScoreOptions, prediction: str | None, resume: bool) -> ScoreSummary:
    """The score job, its output locked."""
    ds = job.inputs.first
    id_type = ds.schema.field("id").type if ds.id_column is not None else None
    empty = output_schema(id_type, scoring.has_grade, scoring.has_difficulty).empty_table()
    check_text_columns(empty.schema, job.target.format)
    if job.output is not None:
        Checkpoint(job.output, job.target.format).check_ours()
    sink: Checkpoint | StreamSink | None = None

    def kept() -> tuple[int | None, Path | None]:
        """The rows a stopped run keeps on disk, and where."""
        if isinstance(sink, Checkpoint):
            return sink.rows_kept(), sink.folder
        return None, None

    tally, progress = ScoreTally(), Progress()
    try:
        with running(job, kept=kept) as run:
            sink, progress = open_sink(
                job.output, job.target, partial(_identity, job, scoring), resume, empty.column_names
            )
            run.show_progress(initial=progress.rows)
            done = progress.rows
            for scored in run.map(score_part, _tasks(ds, done), scoring, job.target.format):
                sink.add(scored.part)
                tally.add(scored.tally)
                done += scored.rows
            run.finish()
            wall = job.wall()
            rate = (done - progress.rows) / wall if wall > 0 else 0.0
            options: dict[str, Any] = asdict(scoring) | {"prediction_column": prediction}
            metadata = job.metadata(done, options, rate, resumed_rows=progress.rows)
            # an interrupt while joining keeps the (complete) checkpoint: --resume joins again
            sink.commit(done, empty, metadata)
    except InputError:  # the input failed part-way (a truncated .gz, say)
        if isinstance(sink, Checkpoint) and sink.rows_kept() == progress.rows == 0:
            sink.remove()  # nothing worth resuming: leave no folder behind
        raise
    if isinstance(sink, Checkpoint):
        sink.remove()
    if progress.rows and job.output is not None:  # the rows done before are in the output
        tally = tally_output(job.output, job.target.format)
    summary = tally.summary(
        input=job.inputs.names[0],
        output=str(job.target),
        wall_s=wall,
        rows_per_s=rate,
        workers=job.executor.workers,
        resumed_rows=progress.rows,
    )
    summary.metadata = metadata
    return summary


def _identity(job: Job, scoring: ScoreOptions) -> dict[str, Any]:
    """What the parts kept beside the output belong to (the checkpoint's `run.json`)."""
    return {
        "command": "score",
        **job.inputs.identity()[0],
        **asdict(scoring),
        "reading options": job.reading.as_dict(),
    }

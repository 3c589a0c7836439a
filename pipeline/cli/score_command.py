"""The `score` command: a model's answers judged, a thin layer over `score_file`. Registered on
the same app as the other commands (`pipeline.cli` imports this module after `commands`)."""

from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import (
    BatchSize,
    RateSamples,
    Resume,
    file_job,
    flag,
    input_argument,
    output_option,
    run_job,
)
from pipeline.cli.process import fail


@app.command(cls=Command)
@file_job()
def score(
    input_path: input_argument(
        "A CSV, TSV or Parquet file of puzzles and predictions, or - for stdin.", "PREDICTIONS"
    ),
    output: output_option(
        "Verdicts: .parquet, .csv or .jsonl, DIR/ for a folder of Parquet files, or - "
        "for stdout (default: "
        "<stem>.scored.parquet; stdout for stdin)."
    ) = None,
    prediction_column: Annotated[
        str | None,
        typer.Option(
            "--prediction-column",
            "--predictions-column",
            metavar="NAME",
            help="Column of predictions (default: the first named prediction, predictions, "
            "predicted, output or outputs; never the solution column, such as "
            "sudoku-extreme's `answer`).",
        ),
    ] = None,
    batch_size: BatchSize = 50_000,
    rate: flag(
        "--rate",
        "Rate each puzzle: `grade` (the hardest technique a person needs) and "
        "`difficulty` (mean guesses over symmetries), for the accuracy by grade and "
        "difficulty (costs far more than scoring; an input's own grade and difficulty "
        "columns are used without it).",
    ) = False,
    rate_samples: RateSamples = 16,
    resume: Resume = False,
    exit_zero: flag("--exit-zero", "Exit with code 0 even when some are not correct.") = False,
    **job: Any,
) -> None:
    """Score a model's answers: one row per input row with its verdict (correct, wrong,
    givens_changed, incomplete, malformed), a message, the cells correct and the clues; the
    accuracy, cell accuracy, and accuracy by clue count (and by `grade` when the input has
    one, or with --rate) on stderr, or --json on stdout. A prediction is correct when it is
    complete, keeps the givens and breaks no rule (for a puzzle with several solutions, any
    of them). Exit code 1 when a prediction is not correct (--exit-zero: never).

    Example: sudoku-pipeline score puzzles.parquet --prediction-column solution
    """
    from pipeline.jobs.score import score_file

    summary = run_job(
        score_file,
        input_path,
        output,
        job,
        prediction_column=prediction_column,
        resume=resume,
        rate=rate,
        rate_samples=rate_samples,
        batch_size=batch_size,
    )
    missed = summary.rows - summary.correct
    if missed and not exit_zero:
        fail(f"{missed:,} predictions not correct (--exit-zero to exit 0 anyway)", code=1)

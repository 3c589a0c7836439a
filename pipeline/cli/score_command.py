"""The `score` command: a model's answers judged, a thin layer over `score_file`. Registered on
the same app as the other commands (`pipeline.cli` imports this module after `commands`)."""

from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import file_job, job_options, print_summary
from pipeline.cli.process import fail, one_line_errors
from pipeline.limits import MAX_RATE_SAMPLES


@app.command(cls=Command)
@file_job
def score(
    input_path: Annotated[
        str,
        typer.Argument(
            metavar="PREDICTIONS",
            help="A CSV, TSV or Parquet file of puzzles and predictions, or - for stdin.",
        ),  # fmt: skip
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Verdicts: .parquet, .csv or .jsonl, or - for stdout (default: "
            "<stem>.scored.parquet; stdout for stdin).",
        ),  # fmt: skip
    ] = None,
    prediction_column: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Column of predictions (default: the first named "
            "prediction, predictions, predicted, output, answer or answers).",
        ),  # fmt: skip
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, metavar="N", help="Rows per batch (bounds memory).")
    ] = 50_000,
    rate: Annotated[
        bool,
        typer.Option(
            "--rate",
            help="Rate each puzzle: `grade` (the hardest technique a person needs) and "
            "`difficulty` (mean guesses over symmetries), for the accuracy by grade and "
            "difficulty (costs far more than scoring; an input's own grade and difficulty "
            "columns are used without it).",
        ),  # fmt: skip
    ] = False,
    rate_samples: Annotated[
        int,
        typer.Option(
            min=1, max=MAX_RATE_SAMPLES, metavar="K", help="Symmetries averaged by --rate."
        ),
    ] = 16,
    resume: Annotated[
        bool, typer.Option(help="Continue an interrupted run from its checkpoint.")
    ] = False,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit with code 0 even when some are not correct.")
    ] = False,
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
    from pipeline.scoring import score_file

    with one_line_errors():
        summary = score_file(input_path, output, prediction_column=prediction_column,
                             resume=resume, rate=rate, rate_samples=rate_samples,
                             batch_size=batch_size, **job_options(job))  # fmt: skip
    print_summary(summary, job, stdout_taken=output is not None and str(output) == "-")
    missed = summary.rows - summary.correct
    if missed and not exit_zero:
        fail(f"{missed:,} predictions not correct (--exit-zero to exit 0 anyway)", code=1)

"""The `augment` command: K random symmetries of every puzzle and its solution, a thin layer
over `augment_file`. Registered on the same app as the other commands (`pipeline.cli` imports
this module after `commands`)."""

import inspect
from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import JOB_OPTIONS, job_options, print_summary
from pipeline.cli.process import one_line_errors
from pipeline.limits import MAX_COPIES

AugmentFormat = StrEnum("AugmentFormat", {n: n for n in ("parquet", "npy")})  # type: ignore[misc]


def _augment_job(command: Any) -> Any:
    """Give `augment` the file jobs' options but `--format`, which it declares itself (parquet
    or npy: a folder of arrays)."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    shared = [p for p in JOB_OPTIONS if p.name != "format"]
    command.__signature__ = signature.replace(parameters=own + shared)
    return command


@app.command(cls=Command)
@_augment_job
def augment(
    input_path: Annotated[
        str,
        typer.Argument(
            metavar="INPUT",
            help="A CSV, TSV, TXT or Parquet file of puzzles (and solutions), or - for stdin.",
        ),  # fmt: skip
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="OUT",
            help="A .parquet file, - for stdout, or with --format npy a folder "
            "(default: <stem>.augmented.parquet, or the folder <stem>.augmented).",
        ),  # fmt: skip
    ] = None,
    copies: Annotated[
        int,
        typer.Option(
            "--copies",
            "-k",
            min=1,
            max=MAX_COPIES,
            metavar="K",
            help="Random symmetries of every puzzle.",
        ),  # fmt: skip
    ] = 8,
    seed: Annotated[
        int, typer.Option(min=0, metavar="N", help="Seed of the random symmetries.")
    ] = 0,
    keep_original: Annotated[
        bool, typer.Option("--keep-original", help="Write each puzzle itself too, as copy 0.")
    ] = False,
    output_format: Annotated[
        AugmentFormat | None,
        typer.Option(
            "--format",
            help="parquet, or npy: a folder with one .npy per column (default: parquet).",
        ),  # fmt: skip
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Input rows per batch (bounds memory; default: "
            "about 65,536 rows out per batch, 65,536 / K in).",
        ),  # fmt: skip
    ] = None,
    **job: Any,
) -> None:
    """Augment a corpus: K random symmetries of every puzzle and of its solution (digits
    relabelled; bands, rows in a band, stacks, columns in a stack permuted; transposed),
    distinct where the puzzle has that many, the same for the same seed on any number of
    workers. Each row records its input row (group), its copy number and the symmetry
    applied (relabel, row_order, column_order, transposed), so it can be undone. A puzzle
    without a solution is solved first; rows that are not puzzles with exactly one solution
    are left out and counted, by reason, in the summary.

    Example: sudoku-pipeline augment puzzles.parquet -o train.parquet --copies 8 --seed 1
    """
    from pipeline.augmenting.job import augment_file

    options = job_options(job) | {"format": output_format.value if output_format else None}
    with one_line_errors():
        summary = augment_file(input_path, output, copies=copies, seed=seed,
                               keep_original=keep_original, batch_size=batch_size,
                               **options)  # fmt: skip
    print_summary(summary, job, stdout_taken=output is not None and str(output) == "-")

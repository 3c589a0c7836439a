"""The `augment` command: K random symmetries of every puzzle and its solution, a thin layer
over `augment_file`. Registered on the same app as the other commands (`pipeline.cli` imports
this module after `commands`)."""

from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import file_job, input_argument, output_option, run_job

AugmentFormat = StrEnum("AugmentFormat", {n: n for n in ("parquet", "npy")})  # type: ignore[misc]


@app.command(cls=Command)
@file_job(without={"format"})  # its own --format: parquet or npy (a folder of arrays)
def augment(
    input_path: input_argument(
        "A CSV, TSV, TXT or Parquet file of puzzles (and solutions), or - for stdin."
    ),
    output: output_option(
        "A .parquet file, - for stdout, or with --format npy a folder "
        "(default: <stem>.augmented.parquet, or the folder <stem>.augmented).",
        metavar="OUT",
    ) = None,
    copies: Annotated[
        int,
        typer.Option(
            "--copies", "-k", min=1, metavar="K", help="Random symmetries of every puzzle."
        ),
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
        ),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Input rows per batch (bounds memory; default: "
            "about 65,536 rows out per batch, 65,536 / K in).",
        ),
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
    from pipeline.jobs.augment.job import augment_file

    run_job(
        augment_file,
        input_path,
        output,
        job,
        copies=copies,
        seed=seed,
        keep_original=keep_original,
        batch_size=batch_size,
        format=output_format.value if output_format else None,
    )

"""The `augment` command: K random symmetries of every puzzle and its solution, a thin layer
over `augment_file`. Registered on the same app as the other commands (`pipeline.cli` imports
this module after `commands`)."""

from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import file_job, input_argument, output_option, run_job
from pipeline.limits import MAX_COPIES

AugmentFormat = StrEnum("AugmentFormat", {n: n for n in ("parquet", "npy", "hrm")})  # type: ignore[misc]


@app.command(cls=Command)
@file_job(without={"format"})  # its own --format: parquet, npy or hrm (folders of arrays)
def augment(
    input_path: input_argument(
        "A CSV, TSV, TXT or Parquet file of puzzles (and solutions), or - for stdin."
    ),
    output: output_option(
        "A .parquet file, - for stdout, DIR/ for a folder of Parquet files (--executor "
        "dask), or with --format npy or hrm a folder "
        "(default: <stem>.augmented.parquet, or the folder <stem>.augmented; hrm: <stem>).",
        metavar="OUT",
    ) = None,
    copies: Annotated[
        int,
        typer.Option(
            "--copies",
            "-k",
            min=0,
            max=MAX_COPIES,
            metavar="K",
            help="Random symmetries of every puzzle (0, with --format hrm: none, the puzzles "
            "as they are: a test split).",
        ),
    ] = 8,
    seed: Annotated[
        int, typer.Option(min=0, metavar="N", help="Seed of the random symmetries.")
    ] = 0,
    keep_original: Annotated[
        bool,
        typer.Option(
            "--keep-original",
            help="Write each puzzle itself too, as copy 0 (always, with --format hrm).",
        ),
    ] = False,
    output_format: Annotated[
        AugmentFormat | None,
        typer.Option(
            "--format",
            help="parquet; npy: a folder with one .npy per column; hrm: the folder of a split "
            "as HRM's and TRM's PuzzleDataset loads it (-o sx/train), each puzzle a group of "
            "itself and its copies (default: parquet).",
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
    are left out and counted, by reason, in the summary. --format hrm writes the folder HRM's
    and TRM's training code loads (docs/guide/hrm.md).

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

"""The `split` command: a corpus cut into leak-free train/val/test splits, a thin layer over
`split_file`. Registered on the same app as the other commands (`pipeline.cli` imports this
module after `commands`)."""

import inspect
from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import (
    BatchSize,
    Inputs,
    file_job,
    node_budget,
    output_option,
    run_job,
)
from pipeline.cli.process import fail

Stratum = StrEnum("Stratum", {n: n for n in ("difficulty", "grade", "clues", "rating")})  # type: ignore[misc]
SplitFormat = StrEnum("SplitFormat", {n: n for n in ("parquet", "npy", "hrm")})  # type: ignore[misc]
PARQUET = SplitFormat("parquet")


_FORCE = inspect.Parameter(
    "force",
    inspect.Parameter.KEYWORD_ONLY,
    default=False,
    annotation=Annotated[
        bool,
        typer.Option(
            "--force", help="Replace a folder that holds something other than an earlier split."
        ),
    ],
)


@app.command(cls=Command)
@file_job(without={"format"}, replacing=[_FORCE])  # its own --format; --force of folders
def split(
    inputs: Inputs,
    output: output_option(
        "The folder of splits (made; an earlier split there is replaced).", metavar="DIR"
    ) = None,
    fractions: Annotated[
        str, typer.Option(metavar="F,F,...", help="Shares of the puzzle groups, summing to 1.")
    ] = "0.8,0.1,0.1",
    names: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...", help="The splits' names (default: train,test or train,val,test)."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, metavar="N", help="Orders the groups and the rows.")
    ] = 0,
    stratify: Annotated[
        Stratum | None, typer.Option(help="Keep the shares within each stratum of this.")
    ] = None,
    split_format: Annotated[
        SplitFormat,
        typer.Option(
            "--format",
            help="parquet: <name>.parquet; npy: a folder <name>/ of .npy; hrm: a folder "
            "<name>/ as HRM's and TRM's PuzzleDataset loads it.",
        ),
    ] = PARQUET,
    augment: Annotated[
        int,
        typer.Option(
            min=0,
            metavar="K",
            help="hrm: each training puzzle a group of itself and K random symmetric copies.",
        ),
    ] = 0,
    subsample: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="Keep N random rows of the training split."),
    ] = None,
    min_rating: Annotated[
        float | None,
        typer.Option(metavar="R", help="Leave out rows whose rating column is below R (or empty)."),
    ] = None,
    batch_size: BatchSize = 50_000,
    max_nodes: node_budget("Node budget per puzzle (over it: left out as `limit`).") = None,
    **job: Any,
) -> None:
    """Split puzzles into train/val/test without leaks: every puzzle solved (those without
    exactly one solution, malformed or clashing left out and counted), exact repeats kept
    once, and every disguise of a puzzle (same canonical form) in the same split. Writes
    DIR/<name>.parquet (or DIR/<name>/*.npy, or HRM's DIR/<name>/all__*.npy and dataset.json)
    and DIR/manifest.json (counts, what was left out and why, options, inputs with sha256,
    version). The training split is the first: --subsample and --augment act on it alone.
    The same seed gives the same files on any worker count or executor.

    Example: sudoku-pipeline split puzzles.parquet -o splits --fractions 0.9,0.1
    """
    from pipeline.jobs.split.job import split_file

    if output is None:
        fail("split needs an output folder: give -o DIR")
    run_job(
        split_file,
        inputs,
        output,
        job,
        fractions=fractions,
        names=names,
        seed=seed,
        stratify=None if stratify is None else stratify.value,
        max_nodes=max_nodes,
        subsample=subsample,
        augment=augment,
        min_rating=min_rating,
        batch_size=batch_size,
        format=split_format.value,
    )

"""The `split` command: a corpus cut into leak-free train/val/test splits, a thin layer over
`split_file`. Registered on the same app as the other commands (`pipeline.cli` imports this
module after `commands`)."""

import inspect
from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.commands import Inputs, app
from pipeline.cli.help import Command
from pipeline.cli.options import JOB_OPTIONS, job_options, print_summary
from pipeline.cli.process import fail, one_line_errors
from pipeline.limits import MAX_COPIES
from pipeline.solver.registry import MAX_NODES

Stratum = StrEnum("Stratum", {n: n for n in ("difficulty", "grade", "clues", "rating")})  # type: ignore[misc]
SplitFormat = StrEnum("SplitFormat", {n: n for n in ("parquet", "npy", "hrm")})  # type: ignore[misc]
PARQUET = SplitFormat("parquet")


_FORCE = inspect.Parameter(
    "force",
    inspect.Parameter.KEYWORD_ONLY,
    default=False,
    annotation=Annotated[bool, typer.Option(
        "--force", help="Replace a folder that holds something other than an earlier split.")],
)  # fmt: skip


def _split_job(command: Any) -> Any:
    """The file jobs' options (`JOB_OPTIONS`) after the command's own, but its own `--format`
    and a `--force` that speaks of folders."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    shared = [_FORCE if p.name == "force" else p for p in JOB_OPTIONS if p.name != "format"]
    command.__signature__ = signature.replace(parameters=own + shared)
    return command


@app.command(cls=Command)
@_split_job
def split(
    inputs: Inputs,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="The folder of splits (made; an earlier split there is replaced).",
        ),
    ] = None,  # fmt: skip
    fractions: Annotated[
        str, typer.Option(metavar="F,F,...", help="Shares of the puzzle groups, summing to 1.")
    ] = "0.8,0.1,0.1",
    names: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...", help="The splits' names (default: train,test or train,val,test)."
        ),
    ] = None,  # fmt: skip
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
            max=MAX_COPIES,
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
    batch_size: Annotated[
        int, typer.Option(min=1, metavar="N", help="Rows per batch (bounds memory).")
    ] = 50_000,
    max_nodes: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_NODES,
            metavar="N",
            help="Node budget per puzzle (over it: left out as `limit`).",
        ),
    ] = None,  # fmt: skip
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
    from pipeline.splitting.job import split_file

    if output is None:
        fail("split needs an output folder: give -o DIR")
    options = job_options(job) | {"format": split_format.value}
    with one_line_errors():
        manifest = split_file(inputs, output, fractions=fractions, names=names, seed=seed,
                              stratify=None if stratify is None else stratify.value,
                              max_nodes=max_nodes, subsample=subsample, augment=augment,
                              min_rating=min_rating, batch_size=batch_size,
                              **options)  # fmt: skip
    print_summary(manifest, job)

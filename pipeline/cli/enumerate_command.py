"""The `enumerate` command: every solution of each puzzle, a thin layer over `enumerate_file`.
Registered on the same app as the other commands (`pipeline.cli` imports this module after
`commands`). It takes the file jobs' reading and writing options and `--workers` (threads:
one puzzle's solutions come from one search, the puzzles are spread over the workers; see
`pipeline.jobs.enumerate.job`), not `--executor`."""

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from pipeline.cli.commands import Inputs, app
from pipeline.cli.help import Command
from pipeline.cli.options import JOB_OPTIONS, job_options, print_summary
from pipeline.cli.process import one_line_errors
from pipeline.kernels.registry import MAX_NODES

_TAKEN = ("column", "id_column", "separator", "has_header", "input_format", "format", "force",
          "quiet", "as_json", "workers")  # fmt: skip


def _reading_and_writing(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the options of `JOB_OPTIONS` that read inputs and write the output."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    taken = [p for p in JOB_OPTIONS if p.name in _TAKEN]
    command.__signature__ = signature.replace(parameters=own + taken)  # type: ignore[attr-defined]
    return command


@app.command("enumerate", cls=Command)
@_reading_and_writing
def enumerate_solutions(
    inputs: Inputs,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", min=1, metavar="N", help="Solutions written at most for each puzzle."
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Solutions: .parquet, .csv or .jsonl, or - for stdout (default: "
            "<stem>.solutions.parquet; stdout for stdin).",
        ),  # fmt: skip
    ] = None,
    max_nodes: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_NODES,
            metavar="N",
            help="Node budget per puzzle: a search that spends it stops, its rows so far kept "
            "(counted as limit).",
        ),
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, metavar="N", help="Rows a part holds (bounds memory).")
    ] = 50_000,
    **job: Any,
) -> None:
    """Write every solution of each puzzle (81 characters, or 729-character pencilmarks), up
    to --limit a puzzle, one row each: row, id (when the input has one), k (0-based), solution.
    Written as they are found, so a puzzle with millions of solutions takes no more memory
    than one with a few. The puzzles are spread over --workers threads; the output is the
    same whatever their number. Rows that are malformed, whose givens clash or that have no solution
    give no rows; the summary (stderr, or --json on stdout) counts them.

    Example: sudoku-pipeline enumerate puzzles.parquet --limit 10
    """
    from pipeline.jobs.enumerate import enumerate_file

    options = job_options({"executor": None, "scheduler": None, **job})
    options = {k: v for k, v in options.items() if k not in ("executor", "scheduler")}
    with one_line_errors():
        summary = enumerate_file(inputs, output, limit=limit, max_nodes=max_nodes,
                                 batch_size=batch_size, **options)  # fmt: skip
    print_summary(summary, job, stdout_taken=output is not None and str(output) == "-")

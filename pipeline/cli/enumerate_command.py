"""The `enumerate` command: every solution of each puzzle, a thin layer over `enumerate_file`.
Registered on the same app as the other commands (`pipeline.cli` imports this module after
`commands`). It takes the file jobs' reading and writing options and `--workers` (threads:
one puzzle's solutions come from one search, the puzzles are spread over the workers; see
`pipeline.jobs.enumerate.job`), not `--executor`."""

from typing import Annotated, Any

import typer

from pipeline.cli.commands import app
from pipeline.cli.help import Command
from pipeline.cli.options import Inputs, file_job, node_budget, output_option, run_job

_LEFT = ("solution_column", "executor", "scheduler")  # the file jobs' options it does without


@app.command("enumerate", cls=Command)
@file_job(without=_LEFT)
def enumerate_solutions(
    inputs: Inputs,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", min=1, metavar="N", help="Solutions written at most for each puzzle."
        ),
    ],
    output: output_option(
        "Solutions: .parquet, .csv or .jsonl, or - for stdout (default: "
        "<stem>.solutions.parquet; stdout for stdin)."
    ) = None,
    max_nodes: node_budget(
        "Node budget per puzzle: a search that spends it stops, its rows so far kept "
        "(counted as limit)."
    ) = None,
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

    run_job(
        enumerate_file, inputs, output, job, limit=limit, max_nodes=max_nodes, batch_size=batch_size
    )

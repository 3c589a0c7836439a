"""The options every file job shares (reading, workers, executor, output), declared once, and
how a command hands them to the API and prints its summary.
"""

import inspect
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.limits import MAX_WORKERS
from pipeline.run.executors import EXECUTORS


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)  # fmt: skip


Executor = StrEnum("Executor", {name: name for name in EXECUTORS})  # type: ignore[misc]
InputFormat = StrEnum("InputFormat", {n: n for n in ("csv", "tsv", "txt", "parquet")})  # type: ignore[misc]
OutputFormat = StrEnum("OutputFormat", {n: n for n in ("parquet", "csv", "jsonl")})  # type: ignore[misc]

Column = Annotated[str | None, typer.Option("--column", metavar="NAME",
                   help="Puzzle column (default: found by name or content).")]  # fmt: skip
SolutionColumn = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="Column of expected solutions (default: found by name)."),
]
IdColumn = Annotated[str | None, typer.Option(metavar="NAME",
                     help="Id column passed through (default: `id`).")]  # fmt: skip
Separator = Annotated[str | None, typer.Option(metavar="CHAR",
                      help="CSV field separator (default: sniffed: , ; | or tab).")]  # fmt: skip
Header = Annotated[bool | None, typer.Option("--header/--no-header",
                   help="Force a CSV header on or off.")]  # fmt: skip
InputFormatOption = Annotated[
    InputFormat | None,
    typer.Option(
        "--input-format", help="The input's format (default: from its name; stdin is sniffed)."
    ),
]
FormatOption = Annotated[
    OutputFormat | None,
    typer.Option("--format", help="The output's format (default: from its suffix; CSV on stdout)."),
]
Force = Annotated[bool, typer.Option("--force", help="Replace an output file that is not a "
                                     "result of this tool.")]  # fmt: skip
Workers = Annotated[int | None, typer.Option(min=1, max=MAX_WORKERS, metavar="N",
                    help="Workers (default: the CPUs this process may use).")]  # fmt: skip
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]
ExecutorOption = Annotated[Executor, typer.Option(
    "--executor", help="local: threads here; processes: worker processes here; dask: a Dask "
    "cluster (see README). Default: local.")]  # fmt: skip
Scheduler = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS", help="Dask scheduler, tcp://HOST:PORT (default: a LocalCluster)."
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]
LOCAL = Executor("local")

# The options of every file job (solve, validate), declared once: `file_job` adds them to a
# command's signature, which is what Typer reads, and the command receives them in `**job`.
JOB_OPTIONS = [
    _option("column", Column, None),
    _option("solution_column", SolutionColumn, None),
    _option("id_column", IdColumn, None),
    _option("separator", Separator, None),
    _option("has_header", Header, None),
    _option("input_format", InputFormatOption, None),
    _option("format", FormatOption, None),
    _option("force", Force, False),
    _option("workers", Workers, None),
    _option("quiet", Quiet, False),
    _option("as_json", AsJson, False),
    _option("executor", ExecutorOption, None),  # None: local, or processes for a GIL solver
    _option("scheduler", Scheduler, None),
]


def file_job(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the options of `JOB_OPTIONS` (after its own)."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = signature.replace(parameters=own + JOB_OPTIONS)  # type: ignore[attr-defined]
    return command


def job_options(job: dict[str, Any]) -> dict[str, Any]:
    """The API's `JobOptions` from the command's `JOB_OPTIONS` (`--json` is the command's)."""
    options = {k: v for k, v in job.items() if k not in ("quiet", "as_json")}
    options = {k: v.value if isinstance(v, StrEnum) else v for k, v in options.items()}
    return options | {"progress": not job["quiet"]}


def print_summary(summary: Any, job: dict[str, Any], stdout_taken: bool = False) -> None:
    """`--json`: the summary as JSON on stdout (on stderr when stdout holds the output);
    else the summary sentence on stderr, unless `-q`."""
    if job["as_json"]:
        typer.echo(summary.to_json(), err=stdout_taken)
    elif not job["quiet"]:
        typer.echo(summary.describe(), err=True)

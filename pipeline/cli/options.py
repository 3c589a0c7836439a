"""The options of the commands, each declared once (the file jobs' shared ones, `--output`,
the node budget, the flags), how a command takes the file jobs' options (`file_job`), hands
them to the API and prints its summary.
"""

import inspect
from collections.abc import Callable, Collection
from enum import StrEnum
from typing import Annotated, Any

import typer

from pipeline.cli.process import one_line_errors
from pipeline.kernels.registry import MAX_NODES, budgets_text
from pipeline.limits import MAX_RATE_SAMPLES, MAX_WORKERS
from pipeline.run.executors import EXECUTORS


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


Executor = StrEnum("Executor", {name: name for name in EXECUTORS})  # type: ignore[misc]
InputFormat = StrEnum("InputFormat", {n: n for n in ("csv", "tsv", "txt", "parquet")})  # type: ignore[misc]
OutputFormat = StrEnum("OutputFormat", {n: n for n in ("parquet", "csv", "jsonl")})  # type: ignore[misc]

Column = Annotated[
    str | None,
    typer.Option(
        "--column", metavar="NAME", help="Puzzle column (default: found by name or content)."
    ),
]
SolutionColumn = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="Column of expected solutions (default: found by name)."),
]
IdColumn = Annotated[
    str | None, typer.Option(metavar="NAME", help="Id column passed through (default: `id`).")
]
Separator = Annotated[
    str | None,
    typer.Option(metavar="CHAR", help="CSV field separator (default: sniffed: , ; | or tab)."),
]
Header = Annotated[
    bool | None, typer.Option("--header/--no-header", help="Force a CSV header on or off.")
]
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
Force = Annotated[
    bool, typer.Option("--force", help="Replace an output file that is not a result of this tool.")
]
Workers = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=MAX_WORKERS,
        metavar="N",
        help="Workers (default: the CPUs this process may use).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]
ExecutorOption = Annotated[
    Executor,
    typer.Option(
        "--executor",
        help="local: threads here; processes: worker processes here; dask: a Dask "
        "cluster (see README). Default: local.",
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        metavar="ADDRESS", help="Dask scheduler, tcp://HOST:PORT (default: a LocalCluster)."
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]
BatchSize = Annotated[int, typer.Option(min=1, metavar="N", help="Rows per batch (bounds memory).")]
Resume = Annotated[bool, typer.Option(help="Continue an interrupted run from its checkpoint.")]
RateSamples = Annotated[
    int,
    typer.Option(min=1, max=MAX_RATE_SAMPLES, metavar="K", help="Symmetries averaged by --rate."),
]


def input_argument(help: str, metavar: str = "INPUT") -> Any:
    """The one input of a command (a file, or - for stdin), `help` saying what it holds."""
    return Annotated[str, typer.Argument(metavar=metavar, help=help)]


Inputs = Annotated[
    list[str],
    typer.Argument(
        metavar="INPUT", help="CSV, TSV, Parquet or TXT files, quoted globs, URLs, or - for stdin."
    ),
]


def output_option(help: str, metavar: str = "FILE") -> Any:
    """The `--output` / `-o` option, of the command whose output `help` describes."""
    return Annotated[str | None, typer.Option("--output", "-o", metavar=metavar, help=help)]


def flag(name: str, help: str) -> Any:
    """An on/off option that is off unless given (`--name`, no `--no-name` twin)."""
    return Annotated[bool, typer.Option(name, help=help)]


def node_budget(help: str, strategies: bool = False) -> Any:
    """The `--max-nodes` option (at most the registry's `MAX_NODES`), `help` saying of what;
    with `strategies`, each strategy's default budget said after it (`registry.node_budget`:
    one rule everywhere)."""
    if strategies:
        help = f"{help.removesuffix('.')} (default: the strategy's own, {budgets_text()})."
    return Annotated[int | None, typer.Option(min=1, max=MAX_NODES, metavar="N", help=help)]


# The options of the file jobs, declared once: `file_job` adds them all to a command's
# signature (solve, validate, score), which is what Typer reads, and the command receives them
# in `**job`; split, augment and enumerate take them less the ones they replace or do without.
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


def file_job(
    without: Collection[str] = (), replacing: Collection[inspect.Parameter] = ()
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the options of `JOB_OPTIONS` after its own, but those named in `without`
    (which it declares itself, or does without), and with `replacing`'s in place of those of
    the same names (another help, say)."""
    instead = {p.name: p for p in replacing}

    def with_job_options(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        shared = [instead.get(p.name, p) for p in JOB_OPTIONS if p.name not in without]
        command.__signature__ = signature.replace(parameters=own + shared)  # type: ignore[attr-defined]
        return command

    return with_job_options


def job_options(job: dict[str, Any]) -> dict[str, Any]:
    """The API's `JobOptions` from the command's `JOB_OPTIONS` (`--json` is the command's)."""
    options = {k: v for k, v in job.items() if k not in ("quiet", "as_json")}
    options = {k: v.value if isinstance(v, StrEnum) else v for k, v in options.items()}
    return options | {"progress": not job["quiet"]}


def run_job(
    call: Callable[..., Any],
    inputs: Any,
    output: str | None,
    job: dict[str, Any],
    *,
    sentence_beside_stdout: bool = True,
    **own: Any,
) -> Any:
    """`call(inputs, output, **own)` (a file job of the API) with the file jobs' options
    (`job_options(job)`), its errors as one line; its summary printed (`print_summary`) and
    returned."""
    with one_line_errors():
        summary = call(inputs, output, **own, **job_options(job))
    print_summary(summary, job, output, sentence_beside_stdout=sentence_beside_stdout)
    return summary


def print_summary(
    summary: Any,
    job: dict[str, Any],
    output: str | None = None,
    *,
    sentence_beside_stdout: bool = True,
) -> None:
    """`--json`: the summary as JSON on stdout (on stderr when stdout holds the output, `-`);
    else the summary sentence on stderr, unless `-q`, or unless stdout holds the output and
    not `sentence_beside_stdout` (generate: the puzzles are the answer, a sentence would only
    get in their way)."""
    stdout_taken = output is not None and str(output) == "-"
    if job["as_json"]:
        typer.echo(summary.to_json(), err=stdout_taken)
    elif not job["quiet"] and (sentence_beside_stdout or not stdout_taken):
        typer.echo(summary.describe(), err=True)

"""The `sudoku-pipeline` command: a thin layer over the Python API, no logic of its own.

Exit codes: 0 success; 1 a requested check failed (`validate --strict`); 2 a usage or I/O
error, or lost workers (one line on stderr); 130 interrupted.
"""

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand

from pipeline.errors import PipelineError
from pipeline.jobs.executors import EXECUTORS
from pipeline.solver.registry import DEFAULT_STRATEGY, STRATEGIES

app = typer.Typer(
    help="Solve, validate and report on Sudoku puzzle corpora in bulk.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


# the choices of --strategy and --executor, from the tables that define them
Strategy = StrEnum("Strategy", {name: name for name in STRATEGIES})  # type: ignore[misc]
BenchStrategy = StrEnum(  # type: ignore[misc]
    "BenchStrategy", {"all": "all", **{name: name for name in STRATEGIES}}
)
Executor = StrEnum("Executor", {name: name for name in EXECUTORS})  # type: ignore[misc]
DEFAULT_STRATEGY_CHOICE = Strategy(DEFAULT_STRATEGY)
LOCAL = Executor("local")
ALL_STRATEGIES = BenchStrategy("all")


def _fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Every error a command meets, as one line on stderr and the exit code it calls for."""
    try:
        yield
    except PipelineError as e:
        _fail(str(e), e.EXIT_CODE)
    except KeyboardInterrupt:  # at a moment the job could not tell what it kept
        _fail("interrupted", 130)
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))


class _OneLineErrors(TyperCommand):
    """A command whose usage errors (a bad option value, a missing argument) print one line,
    `error: ...`, with exit code 2, like every other error of the tool."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except Exception as e:  # click's UsageError, which typer no longer re-exports
            if getattr(e, "exit_code", None) != 2 or not hasattr(e, "format_message"):
                raise
            command = " ".join(n for n in (getattr(parent, "info_name", None), info_name) if n)
            _fail(f"{e.format_message()} (see {command} --help)")


Column = Annotated[
    str | None, typer.Option("--column", help="Puzzle column (default: found by name or content).")
]
SolutionColumn = Annotated[
    str | None, typer.Option(help="Column of expected solutions (default: found by name).")
]
IdColumn = Annotated[str | None, typer.Option(help="Id column passed through (default: `id`).")]
Separator = Annotated[str | None, typer.Option(help="CSV field separator (default: , or tab).")]
Header = Annotated[
    bool | None, typer.Option("--header/--no-header", help="Force a CSV header on or off.")
]
BatchSize = Annotated[int, typer.Option(min=1, help="Rows per batch (bounds memory).")]
Workers = Annotated[int | None, typer.Option(min=1, help="Worker processes (default: all cores).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
ExecutorOption = Annotated[
    Executor,
    typer.Option("--executor", help="local: processes here; dask: a Dask cluster (see README)."),
]
Scheduler = Annotated[
    str | None,
    typer.Option(help="Dask scheduler, tcp://HOST:PORT (default: start a LocalCluster)."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)  # fmt: skip


# The options of every file job (solve, validate), declared once: `_file_job` adds them to a
# command's signature, which is what Typer reads, and the command receives them in `**job`.
JOB_OPTIONS = [
    _option("column", Column, None),
    _option("solution_column", SolutionColumn, None),
    _option("id_column", IdColumn, None),
    _option("separator", Separator, None),
    _option("has_header", Header, None),
    _option("workers", Workers, None),
    _option("quiet", Quiet, False),
    _option("as_json", AsJson, False),
    _option("executor", ExecutorOption, LOCAL),
    _option("scheduler", Scheduler, None),
]


def _file_job(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the options of `JOB_OPTIONS` (after its own)."""
    signature = inspect.signature(command)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = signature.replace(parameters=own + JOB_OPTIONS)  # type: ignore[attr-defined]
    return command


def _job_options(job: dict[str, Any]) -> dict[str, Any]:
    """The API's `JobOptions` from the command's `JOB_OPTIONS` (`--json` is the command's)."""
    options = {k: v for k, v in job.items() if k not in ("quiet", "as_json", "executor")}
    return options | {"progress": not job["quiet"], "executor": job["executor"].value}


def _print_summary(summary: Any, job: dict[str, Any]) -> None:
    """`--json` on stdout; the summary sentence on stderr unless `-q --json`."""
    if job["as_json"]:
        typer.echo(summary.to_json())
    if not job["quiet"] or not job["as_json"]:
        typer.echo(summary.describe(), err=True)


@app.command(cls=_OneLineErrors)
@_file_job
def solve(
    input_path: Annotated[Path, typer.Argument(metavar="INPUT", help="CSV, TSV, Parquet or TXT.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Output Parquet (default: <stem>.solved.parquet)."),
    ] = None,
    batch_size: BatchSize = 50_000,
    strategy: Annotated[Strategy, typer.Option(help="Solver strategy.")] = DEFAULT_STRATEGY_CHOICE,
    solutions: Annotated[
        int, typer.Option(min=1, max=2, help="1: stop at the first; 2: prove uniqueness.")
    ] = 2,
    max_nodes: Annotated[
        int | None, typer.Option(min=1, help="Node budget per puzzle (verdict `limit`).")
    ] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue an interrupted run from its checkpoint.")
    ] = False,
    **job: Any,
) -> None:
    """Solve every puzzle of INPUT into a Parquet file, one row per input row.

    Example: sudoku-pipeline solve data/sample.csv -o sample.solved.parquet
    """
    from pipeline.jobs.solve import solve_file

    with _one_line_errors():
        summary = solve_file(input_path, output, strategy=strategy.value, solutions=solutions,
                             max_nodes=max_nodes, resume=resume, batch_size=batch_size,
                             **_job_options(job))  # fmt: skip
    _print_summary(summary, job)


@app.command(cls=_OneLineErrors)
@_file_job
def validate(
    input_path: Annotated[Path, typer.Argument(metavar="INPUT", help="CSV, TSV, Parquet or TXT.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Findings Parquet (default: <stem>.findings.parquet)."),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(min=1, help="Rows per batch (default: 50,000; 5,000 with --minimal)."),
    ] = None,
    max_nodes: Annotated[
        int | None, typer.Option(min=1, help="Node budget per search (finding `limit`).")
    ] = None,
    minimal: Annotated[
        bool, typer.Option("--minimal", help="Also check that unique puzzles are minimal (slow).")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 1 when any error-level finding exists.")
    ] = False,
    **job: Any,
) -> None:
    """Check every row of INPUT, and the dataset as a whole; one Parquet row per finding.

    Errors: malformed, clash, unsolvable, multiple, wrong_solution. Warnings: duplicate, limit,
    not_minimal. Info: few_clues. Exit code 1 under --strict when there is an error.

    Example: sudoku-pipeline validate data/bad_rows.csv --strict
    """
    from pipeline.validate import validate_file

    with _one_line_errors():
        summary = validate_file(input_path, output, max_nodes=max_nodes, minimal=minimal,
                                batch_size=batch_size, **_job_options(job))  # fmt: skip
    _print_summary(summary, job)
    if strict and not summary.clean:
        _fail(f"--strict: {summary.levels['error']:,} error findings in "
              f"{summary.rows_with_errors:,} rows", code=1)  # fmt: skip


@app.command(cls=_OneLineErrors)
def generate(
    n: Annotated[int, typer.Argument(min=0, metavar="N", help="How many puzzles.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="CSV or Parquet by suffix (default: CSV on stdout)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Random seed: same seed, same puzzles.")] = 0,
    clues: Annotated[
        int | None, typer.Option(min=17, max=81, help="Target number of givens (else minimal).")
    ] = None,
    workers: Workers = None,
) -> None:
    """Generate N puzzles with unique solutions: id, puzzle, solution, clues.

    Example: sudoku-pipeline generate 100000 -o corpus.parquet --seed 1
    """
    from pipeline.jobs.generate import generate_file

    with _one_line_errors():
        generate_file(n, "-" if output is None else output, seed=seed, clues=clues,
                      workers=workers)  # fmt: skip
    if output is not None:
        typer.echo(f"wrote {n:,} puzzles to {output}", err=True)


@app.command(cls=_OneLineErrors)
def report(
    results: Annotated[
        list[Path],
        typer.Argument(metavar="RESULTS", help="Result Parquet files (of solve or bench)."),
    ],
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write a self-contained HTML report.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the figures as JSON instead of tables.")
    ] = False,
) -> None:
    """Solver performance from result files, read only: percentiles, verdicts, the hardest
    puzzles; runs of one corpus side by side, with per-puzzle ratios joined on row.

    Example: sudoku-pipeline report fast.parquet mrv.parquet --html report.html
    """
    from pipeline.report import render_text
    from pipeline.report import report as make_report

    with _one_line_errors():
        summary = make_report(results, html=html)
    typer.echo(summary.to_json() if as_json else render_text(summary), nl=as_json)
    if html is not None:
        typer.echo(f"wrote {html}", err=True)


@app.command(cls=_OneLineErrors)
def bench(
    datasets: Annotated[
        list[Path], typer.Argument(metavar="DATASET", help="Inputs, as for solve.")
    ],
    strategy: Annotated[BenchStrategy, typer.Option(help="One strategy, or all.")] = ALL_STRATEGIES,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Also write per-puzzle results (Parquet) for report."),
    ] = None,
    max_nodes: Annotated[
        int | None,
        typer.Option(min=1, help="Node budget per puzzle (default: the strategy's own)."),
    ] = None,
    rows: Annotated[
        int | None, typer.Option(min=1, help="Only the first ROWS rows of each dataset.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    as_json: AsJson = False,
) -> None:
    """Benchmark strategies on datasets: puzzles/s, us/puzzle, nodes/puzzle, guesses/puzzle
    and % solved without guessing, a Markdown table with a row per dataset x strategy.

    Example: sudoku-pipeline bench data/sample.csv --strategy all -o bench.parquet
    """
    from pipeline.jobs.bench import bench as run_bench

    with _one_line_errors():
        result = run_bench(datasets, strategy.value, workers, output, max_nodes=max_nodes,
                           rows=rows, progress=not quiet)  # fmt: skip
    typer.echo(result.to_json() if as_json else result.to_markdown())
    if output is not None:
        typer.echo(f"wrote {output}", err=True)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

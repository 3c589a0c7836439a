"""The `sudoku-pipeline` command: a thin layer over the Python API, no logic of its own.

Exit codes: 0 success; 1 a requested check failed (`validate --strict`); 2 a usage or I/O
error, or lost workers (one line on stderr); 130 interrupted.
"""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperCommand

from pipeline.dataset import DatasetError

app = typer.Typer(
    help="Solve, validate and report on Sudoku puzzle corpora in bulk.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Executor(StrEnum):
    local = "local"
    dask = "dask"


class Strategy(StrEnum):
    fast = "fast"
    mrv = "mrv"
    backtrack = "backtrack"


def _fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


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


@app.command(cls=_OneLineErrors)
def solve(
    input_path: Annotated[Path, typer.Argument(metavar="INPUT", help="CSV, TSV, Parquet or TXT.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Output Parquet (default: <stem>.solved.parquet)."),
    ] = None,
    column: Column = None,
    solution_column: SolutionColumn = None,
    id_column: IdColumn = None,
    separator: Separator = None,
    header: Header = None,
    batch_size: BatchSize = 50_000,
    workers: Workers = None,
    strategy: Annotated[Strategy, typer.Option(help="Solver strategy.")] = Strategy.fast,
    solutions: Annotated[
        int, typer.Option(min=1, max=2, help="1: stop at the first; 2: prove uniqueness.")
    ] = 2,
    max_nodes: Annotated[
        int | None, typer.Option(min=1, help="Node budget per puzzle (verdict `limit`).")
    ] = None,
    resume: Annotated[
        bool, typer.Option(help="Continue an interrupted run from its checkpoint.")
    ] = False,
    quiet: Quiet = False,
    as_json: AsJson = False,
    executor: ExecutorOption = Executor.local,
    scheduler: Scheduler = None,
) -> None:
    """Solve every puzzle of INPUT into a Parquet file, one row per input row.

    Example: sudoku-pipeline solve data/sample.csv -o sample.solved.parquet
    """
    from pipeline.run import RunInterrupted, solve_file

    try:
        summary = solve_file(
            input_path,
            output,
            column=column,
            solution_column=solution_column,
            id_column=id_column,
            separator=separator,
            has_header=header,
            batch_size=batch_size,
            workers=workers,
            strategy=strategy.value,
            solutions=solutions,
            max_nodes=max_nodes,
            resume=resume,
            progress=not quiet,
            executor=executor.value,
            scheduler=scheduler,
        )
    except DatasetError as e:
        _fail(str(e))
    except RunInterrupted as e:
        _fail(str(e), code=130)
    except KeyboardInterrupt:  # at a moment solve_file could not tell what it kept
        _fail("interrupted; run the same command with --resume to keep any finished batches", 130)
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
    if as_json:
        typer.echo(summary.to_json())
    if not quiet or not as_json:
        typer.echo(summary.describe(), err=True)


@app.command(cls=_OneLineErrors)
def validate(
    input_path: Annotated[Path, typer.Argument(metavar="INPUT", help="CSV, TSV, Parquet or TXT.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Findings Parquet (default: <stem>.findings.parquet)."),
    ] = None,
    column: Column = None,
    solution_column: SolutionColumn = None,
    id_column: IdColumn = None,
    separator: Separator = None,
    header: Header = None,
    batch_size: Annotated[
        int | None,
        typer.Option(min=1, help="Rows per batch (default: 50,000; 5,000 with --minimal)."),
    ] = None,
    workers: Workers = None,
    max_nodes: Annotated[
        int | None, typer.Option(min=1, help="Node budget per search (finding `limit`).")
    ] = None,
    minimal: Annotated[
        bool, typer.Option("--minimal", help="Also check that unique puzzles are minimal (slow).")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 1 when any error-level finding exists.")
    ] = False,
    quiet: Quiet = False,
    as_json: AsJson = False,
    executor: ExecutorOption = Executor.local,
    scheduler: Scheduler = None,
) -> None:
    """Check every row of INPUT, and the dataset as a whole; one Parquet row per finding.

    Errors: malformed, clash, unsolvable, multiple, wrong_solution. Warnings: duplicate, limit,
    not_minimal. Info: few_clues. Exit code 1 under --strict when there is an error.

    Example: sudoku-pipeline validate data/bad_rows.csv --strict
    """
    from pipeline.validate import validate_file

    try:
        summary = validate_file(
            input_path,
            output,
            column=column,
            solution_column=solution_column,
            id_column=id_column,
            separator=separator,
            has_header=header,
            batch_size=batch_size,
            workers=workers,
            max_nodes=max_nodes,
            minimal=minimal,
            progress=not quiet,
            executor=executor.value,
            scheduler=scheduler,
        )
    except DatasetError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted", code=130)
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
    if as_json:
        typer.echo(summary.to_json())
    if not quiet or not as_json:
        typer.echo(summary.describe(), err=True)
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
    from pipeline.generate import generate_chunks, generate_file

    if output is not None and output.suffix.lower() not in (".csv", ".parquet", ".pq"):
        _fail(f"{output}: the output must end in .csv or .parquet")
    if output is not None and not output.parent.is_dir():  # say so before generating, not after
        _fail(f"{output.parent}: no such directory for the output")
    try:
        if output is None:
            for i, chunk in enumerate(generate_chunks(n, seed=seed, clues=clues, workers=workers)):
                chunk.write_csv(sys.stdout, include_header=i == 0)
        else:
            generate_file(n, output, seed=seed, clues=clues, workers=workers)
    except OSError as e:
        _fail(f"{output}: cannot write ({e.strerror or str(e).splitlines()[0]})")
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
    from pipeline.report import ReportError
    from pipeline.report import report as make_report

    try:
        summary = make_report(results, html=html)
    except ReportError as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
    typer.echo(summary.to_json() if as_json else summary.to_text(), nl=as_json)
    if html is not None:
        typer.echo(f"wrote {html}", err=True)


class BenchStrategy(StrEnum):
    all = "all"
    fast = "fast"
    mrv = "mrv"
    backtrack = "backtrack"


@app.command(cls=_OneLineErrors)
def bench(
    datasets: Annotated[
        list[Path], typer.Argument(metavar="DATASET", help="Inputs, as for solve.")
    ],
    strategy: Annotated[
        BenchStrategy, typer.Option(help="One strategy, or all.")
    ] = BenchStrategy.all,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Also write per-puzzle results (Parquet) for report."),
    ] = None,
    max_nodes: Annotated[
        int | None,
        typer.Option(min=1, help="Node budget per puzzle (default: 20,000 for mrv, backtrack)."),
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
    from pipeline.bench import bench as run_bench

    try:
        result = run_bench(datasets, strategy.value, workers, output, max_nodes=max_nodes,
                           rows=rows, progress=not quiet)  # fmt: skip
    except DatasetError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted", code=130)
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "))
    typer.echo(result.to_json() if as_json else result.to_markdown())
    if output is not None:
        typer.echo(f"wrote {output}", err=True)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

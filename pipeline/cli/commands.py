"""The `sudoku-pipeline` commands: a thin layer over the Python API, no logic of their own.

Exit codes: 0 success; 1 the data failed a check (`validate` found an error, or a warning
under `--strict`; `--exit-zero` opts out); 2 a usage or I/O error, or lost workers (one line
on stderr); 130 interrupted; 141 stdout closed early (`| head`), quietly.
"""

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.cli import process
from pipeline.cli.help import Command, Group
from pipeline.cli.options import (
    AsJson,
    BatchSize,
    Force,
    Inputs,
    RateSamples,
    Resume,
    file_job,
    flag,
    input_argument,
    node_budget,
    output_option,
    run_job,
)
from pipeline.cli.process import fail, one_line_errors
from pipeline.kernels.registry import DEFAULT_STRATEGY, STRATEGIES
from pipeline.limits import MAX_WORKERS
from pipeline.run import compile_ahead, heap

app = typer.Typer(
    cls=Group,
    help="Solve, validate and report on Sudoku puzzle corpora in bulk.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# the choices of --strategy, from the registry
Strategy = StrEnum("Strategy", {name: name for name in STRATEGIES})  # type: ignore[misc]
BenchStrategy = StrEnum(  # type: ignore[misc]
    "BenchStrategy", {"all": "all", **{name: name for name in STRATEGIES}}
)
DEFAULT_STRATEGY_CHOICE = Strategy(DEFAULT_STRATEGY)
SOLVER_HELP = (
    "A solver in place of --strategy: fast, mrv, backtrack, c:LIBRARY:SYMBOL, "
    "python:MODULE:FUNCTION or cmd:COMMAND (its answers are checked; see README)."
)

# the file jobs' options of reading an input (a job without one does without them)
_READING = ("column", "solution_column", "id_column", "separator", "has_header", "input_format")

RATE_HELP = (
    "Add `difficulty` (mean guesses over symmetries) and "
    "`grade` (the hardest technique a person needs)."
)


def _print_result(
    result: Any, as_text: Callable[[Any], str], *, as_json: bool, quiet: bool, written: Path | None
) -> None:
    """A command's figures on stdout (`result.to_json()` or `as_text(result)`, which ends its
    own lines) and `wrote FILE` on stderr; `-q` keeps stdout for what was asked: the JSON of
    --json, else the figures when no file holds them (`written`)."""
    if as_json or not (quiet and written is not None):
        typer.echo(result.to_json() + "\n" if as_json else as_text(result), nl=False)
    if written is not None and not quiet:
        typer.echo(f"wrote {written}", err=True)


def _version(value: bool) -> None:
    if value:
        from pipeline.io.runinfo import package_version

        typer.echo(f"sudoku-pipeline {package_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Solve, validate and report on Sudoku puzzle corpora in bulk."""


@app.command(cls=Command)
@file_job()
def solve(
    inputs: Inputs,
    output: output_option(
        "Results: .parquet, .csv or .jsonl, DIR/ for a folder of Parquet files, "
        "or - for stdout (default: <stem>.solved.parquet; stdout for stdin)."
    ) = None,
    batch_size: BatchSize = 50_000,
    strategy: Annotated[
        Strategy | None, typer.Option(help=f"Solver strategy (default: {DEFAULT_STRATEGY}).")
    ] = None,
    solver: Annotated[str | None, typer.Option(metavar="SPEC", help=SOLVER_HELP)] = None,
    solutions: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            help="1: stop at the first (verdict `found`); 2: prove uniqueness; more: count "
            "them up to N (`solution_count`; N means N or more).",
        ),
    ] = 2,
    max_nodes: node_budget("Node budget per puzzle (verdict `limit`).", strategies=True) = None,
    resume: Resume = False,
    canonical: flag("--canonical", "Add each puzzle's minlex form (`canonical`).") = False,
    rate: flag("--rate", RATE_HELP) = False,
    rate_samples: RateSamples = 16,
    **job: Any,
) -> None:
    """Solve every puzzle of the inputs into one file of results, one row per input row.

    Example: sudoku-pipeline solve puzzles.parquet -o puzzles.solved.parquet
    """
    from pipeline.jobs.solve.job import solve_file

    if strategy is not None and solver is not None:
        fail("give --strategy or --solver, not both (--solver fast is a strategy)")
    chosen = (strategy or DEFAULT_STRATEGY_CHOICE).value
    run_job(
        solve_file,
        inputs,
        output,
        job,
        strategy=chosen,
        solver=solver,
        solutions=solutions,
        canonical=canonical,
        rate=rate,
        rate_samples=rate_samples,
        max_nodes=max_nodes,
        resume=resume,
        batch_size=batch_size,
    )


@app.command(cls=Command)
@file_job()
def validate(
    input_path: input_argument("A CSV, TSV, Parquet or TXT file, or - for stdin."),
    output: output_option(
        "Findings: .parquet, .csv or .jsonl, "
        "or - for stdout (default: <stem>.findings.parquet; stdout for stdin)."
    ) = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="N", help="Rows per batch (default: 50,000; 5,000 with --minimal)."
        ),
    ] = None,
    max_nodes: node_budget("Node budget per search (finding `limit`; default: none).") = None,
    minimal: flag("--minimal", "Also check that unique puzzles are minimal (slow).") = False,
    strict: flag("--strict", "Exit with code 1 on warnings too.") = False,
    exit_zero: flag("--exit-zero", "Exit with code 0 even when the data has errors.") = False,
    symmetry: flag(
        "--symmetry",
        "Also find duplicates up to symmetry (finding `symmetry_duplicate`; about 1.7 "
        "times the time).",
    ) = False,
    against: Annotated[
        list[str] | None,
        typer.Option(
            "--against",
            metavar="TRAIN",
            help="Audit INPUT for leaks: each row that is a puzzle of TRAIN, exactly or in "
            "disguise (the same canonical form), is an error `leak` naming the TRAIN file "
            "and row (repeat for several TRAIN files, or give a quoted glob).",
        ),
    ] = None,
    **job: Any,
) -> None:
    """Check every row of INPUT, and the dataset as a whole; one Parquet row per finding.

    Errors: malformed, clash, unsolvable, multiple, wrong_solution, leak. Warnings: duplicate,
    symmetry_duplicate, limit, not_minimal. Info: few_clues. Exit code 1 when there is an error
    (--strict: or a warning; --exit-zero: never).

    Example: sudoku-pipeline validate puzzles.parquet -o puzzles.findings.csv
    """
    from pipeline.jobs.validate import validate_file

    summary = run_job(
        validate_file,
        input_path,
        output,
        job,
        max_nodes=max_nodes,
        minimal=minimal,
        symmetry=symmetry,
        against=against or None,
        batch_size=batch_size,
    )
    failed = summary.levels["error"] + (summary.levels["warning"] if strict else 0)
    if failed and not exit_zero:
        what = "error or warning" if strict else "error"
        fail(f"{failed:,} {what} findings (--exit-zero to exit 0 anyway)", code=1)


@app.command(cls=Command)
@file_job(without=_READING + ("executor", "scheduler"))  # threads; no input to read
def generate(
    n: Annotated[int, typer.Argument(min=0, metavar="N", help="How many puzzles.")],
    output: output_option(
        "CSV, JSON Lines or Parquet by suffix, or - for stdout (default: CSV on stdout)."
    ) = None,
    seed: Annotated[
        int, typer.Option(metavar="N", help="Random seed: same seed, same puzzles.")
    ] = 0,
    clues: Annotated[
        int | None,
        typer.Option(min=17, max=81, metavar="N", help="Target number of givens (else minimal)."),
    ] = None,
    grade: Annotated[
        str | None,
        typer.Option(
            metavar="GRADE",
            help="Only puzzles of this grade (the hardest technique they need, e.g. x_wing, "
            "xy_chain, search; a wrong name lists the ladder); adds a grade column.",
        ),
    ] = None,
    min_grade: Annotated[
        str | None,
        typer.Option(metavar="GRADE", help="Only puzzles of this grade or a harder one."),
    ] = None,
    **job: Any,
) -> None:
    """Generate N puzzles with unique solutions: id, puzzle, solution, clues.

    Example: sudoku-pipeline generate 1000 -o puzzles.parquet --seed 1
    """
    from pipeline.jobs.generate.job import generate_file

    run_job(
        generate_file,
        n,
        output or "-",
        job,
        sentence_beside_stdout=False,  # the puzzles are the answer there
        seed=seed,
        clues=clues,
        grade=grade,
        min_grade=min_grade,
    )


@app.command(cls=Command)
def report(
    results: Annotated[
        list[Path],
        typer.Argument(metavar="RESULTS", help="Result Parquet files (of solve, bench or score)."),
    ],
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Also write a self-contained HTML report (needs matplotlib)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the figures as JSON instead of tables.")
    ] = False,
    force: Force = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Nothing on stderr but errors; with --html, no "
            "tables on stdout either (--json is still printed).",
        ),
    ] = False,
) -> None:
    """Solver performance from result files, read only: percentiles, verdicts, kernel and
    wall rates, the hardest puzzles; runs side by side, with per-puzzle ratios between runs
    of one corpus (joined by puzzle, never by row); score files: accuracy by verdict, clue
    count, grade and difficulty, models side by side. --html needs the report extra.

    Example: sudoku-pipeline report puzzles.solved.parquet --json
    """
    from pipeline.report import render_text
    from pipeline.report import report as make_report

    with one_line_errors():
        summary = make_report(results, html=html, force=force)
    _print_result(summary, render_text, as_json=as_json, quiet=quiet, written=html)


@app.command(cls=Command)
def bench(
    datasets: Annotated[
        list[Path], typer.Argument(metavar="DATASET", help="Inputs, as for solve.")
    ],
    strategy: Annotated[
        list[BenchStrategy] | None,
        typer.Option(
            help="A strategy to measure (repeatable), or all (default: all; none with --solver)."
        ),
    ] = None,
    solver: Annotated[
        list[str] | None,
        typer.Option(
            metavar="SPEC",
            help="A solver to measure beside them (repeatable): "
            "c:LIBRARY:SYMBOL, python:MODULE:FUNCTION, cmd:COMMAND or a strategy.",
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, max=MAX_WORKERS, metavar="N", help="Worker threads.")
    ] = 1,
    output: output_option("Also write per-puzzle results (Parquet) for report.") = None,
    max_nodes: node_budget("Node budget per puzzle (verdict `limit`).", strategies=True) = None,
    rows: Annotated[
        int | None, typer.Option(min=1, help="Only the first ROWS rows of each dataset.")
    ] = None,
    repeats: Annotated[
        int,
        typer.Option(min=1, metavar="N", help="Runs of each dataset x strategy; the best is kept."),
    ] = 3,
    reference: Annotated[
        Path | None,
        typer.Option(
            help="A column of reference puzzles/s by dataset, read from CSV "
            "(dataset,puzzles_per_s) or JSON."
        ),
    ] = None,
    tdoku: Annotated[
        Path | None,
        typer.Option(
            envvar="TDOKU_BENCH",
            help="tdoku's run_benchmark: measure it on the same puzzles (skipped if absent).",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Nothing on stderr but errors; with -o, no table on "
            "stdout either (--json is still printed).",
        ),
    ] = False,
    as_json: AsJson = False,
    force: Force = False,
) -> None:
    """Benchmark strategies on datasets: puzzles/s (best of --repeats, with median and min),
    us/puzzle, nodes/puzzle, guesses/puzzle and % solved without guessing, a Markdown table
    with a row per dataset x strategy; the machine, versions and options below it.

    Example: sudoku-pipeline bench puzzles.parquet --strategy all -o bench.parquet
    """
    from pipeline.jobs.bench.job import bench as run_bench

    with one_line_errors():
        result = run_bench(
            datasets,
            [s.value for s in strategy or ()],
            workers,
            output,
            max_nodes=max_nodes,
            rows=rows,
            repeats=repeats,
            reference=reference,
            tdoku=tdoku,
            progress=not quiet,
            force=force,
            solvers=solver or (),
        )
    _print_result(result, _markdown, as_json=as_json, quiet=quiet, written=output)


def _markdown(result: Any) -> str:
    """bench's table and its footer, a blank line after them."""
    return str(result.to_markdown()) + "\n"


def main() -> None:
    """The `sudoku-pipeline` program."""
    process.AS_PROGRAM = True
    heap.keep_freed_memory()  # a batch's memory kept for the next (run/heap.py: 8% on Kaggle rows)
    compile_ahead.enable()  # the program's first command compiles the other commands' kernels
    process.take_signals()
    try:
        app()
    except SystemExit as done:
        if process.interrupted_silently(done.code):
            typer.echo("error: interrupted", err=True)
        process.leave(done.code)
    except KeyboardInterrupt:  # before any command ran: while Typer built the command line
        typer.echo("error: interrupted", err=True)
        process.leave(process.EXIT_INTERRUPTED)

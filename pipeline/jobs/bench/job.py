"""The benchmark table solver authors know from tdoku's harness, for any input `solve` reads.

    result = bench(["top1465.txt", "hardest.csv"], strategy="all", output="bench.parquet")
    print(result.to_markdown())

For each dataset x strategy: puzzles/s, us/puzzle, nodes/puzzle, guesses/puzzle, % solved
without guessing (the definitions of `pipeline.report`), and how many puzzles hit the node
budget. Each dataset is read into memory first, and the kernels are loaded (or compiled)
before the clock starts, so the figures measure solving only:

* puzzles/s: rows over the wall time of the solve step (parse, search, result table), on one
  core by default or on `workers` threads started and warmed beforehand; best of `repeats`
  runs (the least disturbed), with the median and the slowest beside it. The repeats go
  round-robin over every dataset x strategy, so that a disturbance spreads over all of them;
* us/puzzle, nodes/puzzle, guesses/puzzle: kernel time, nodes and guesses per searched puzzle,
  from the fastest repeat.

Optional reference columns (`bench.reference`): figures read from a file (`reference`), or
tdoku's harness measured on the same puzzles (`tdoku`, the path of its `run_benchmark`).
The JSON and the table's footer record the machine, the library versions and the options.

`output` writes every per-puzzle result of the fastest repeat (the result schema, with
`dataset` and `strategy` columns first and ids as text) to one Parquet file that `report`
reads and compares. Bench runs on the run loop as every job does (its output locked, SIGTERM
taken as Ctrl-C, its workers started and warmed before any clock, its output written by the
`tables` sink), without a progress bar: it says each repeat's figures instead.
"""

import datetime
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.opening import open_dataset
from pipeline.io.runinfo import machine
from pipeline.io.writers import as_text
from pipeline.jobs import JOBS
from pipeline.jobs.bench.reference import TdokuRuns, read_reference, tdoku_binary
from pipeline.jobs.bench.solvers import checked, open_solvers, solver_options
from pipeline.jobs.bench.table import BenchResult, BenchRow
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels.registry import STRATEGIES
from pipeline.plugins.open import open_adapter
from pipeline.results.measures import effort
from pipeline.results.schema import result_schema
from pipeline.run.executors import Executor
from pipeline.run.job import input_stem, start_job, warn_empty
from pipeline.run.loop import Run, running
from pipeline.run.warmup import warm

JOB = JOBS["bench"]
BATCH_SIZE = 50_000


def _kernels(options: list[SolveOptions]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k for o in options for k in o.kernels()))


def _warm(kernels: tuple[str, ...], solvers: tuple[str, ...]) -> None:
    """Load the kernels and open the solvers from outside (once per worker thread)."""
    warm(kernels)
    for spec in solvers:  # a program started, a function's lazy imports done, off the clock
        getattr(open_adapter(spec), "warm", lambda: None)()


def _load(path: Path, rows: int | None, workers: int) -> list[pa.RecordBatch]:
    """The dataset's batches (its first `rows` rows), in memory, cut for `workers` workers."""
    ds = open_dataset(path, batch_size=BATCH_SIZE)
    batches, total = [], 0
    for batch in ds.batches():
        if rows is not None and total + batch.num_rows >= rows:
            batches.append(batch.slice(0, rows - total))
            break
        batches.append(batch)
        total += batch.num_rows
    if workers > 1 and batches:
        table = pa.Table.from_batches(batches)
        size = max(256, -(-table.num_rows // (4 * workers)))
        batches = table.to_batches(max_chunksize=min(size, BATCH_SIZE))
    return batches


def _names(paths: list[Path]) -> list[str]:
    names = [input_stem(p) for p in paths]
    return [
        f"{n} #{names[:i].count(n) + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)
    ]


def _with_identity(table: pa.Table, dataset: str, strategy: str) -> pa.Table:
    """The result table with `dataset` and `strategy` first and `id` as text (null without)."""
    if "id" in table.column_names:  # ids of any type, as CSV would hold them
        ids = as_text(table.column("id"))
    else:
        ids = pa.nulls(table.num_rows, pa.string())
    columns = {
        "dataset": pa.array([dataset] * table.num_rows, pa.string()),
        "strategy": pa.array([strategy] * table.num_rows, pa.string()),
        "row": table.column("row"),
        "id": ids,
    }
    columns |= {name: table.column(name) for name in table.column_names if name not in columns}
    columns.setdefault("kernel_agrees", pa.nulls(table.num_rows, pa.bool_()))  # built-in: null
    return pa.Table.from_pydict(columns, schema=bench_schema())


def bench_schema() -> pa.Schema:
    """The schema of a bench output file: dataset, strategy (the strategy's name or the
    `--solver` spec), then the result schema, then `kernel_agrees` (null for a strategy)."""
    schema = result_schema(pa.string())
    extra = [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
    ]
    return pa.schema(extra + list(schema) + [pa.field("kernel_agrees", pa.bool_())])


def _measure(
    name: str,
    path: Path,
    batches: list[pa.RecordBatch],
    options: SolveOptions,
    pool: Executor,
) -> tuple[BenchRow, list[pa.Table]]:
    """Solve the batches on the clock; the row of the table and the result tables."""
    start = time.perf_counter()
    parts = list(pool.map_ordered(solve_record_batch, batches, options))
    wall = time.perf_counter() - start
    n = sum(t.num_rows for t in parts)
    row = BenchRow(
        name, options.name, n, n / wall if wall > 0 else 0.0, wall, options.max_nodes, str(path)
    )
    return row, parts


def _figures(row: BenchRow, parts: list[pa.Table]) -> None:
    """The row's figures from its (checked) result tables."""
    if row.puzzles:
        f = effort(pl.from_arrow(pa.concat_tables(parts)))
        row.us_per_puzzle = f["time_us"]
        row.nodes_per_puzzle = f["nodes"]
        row.guesses_per_puzzle = f["guesses"]
        row.no_guess_pct = f["no_guess_pct"]
        row.limit = f["limit"]


def _puzzles(parts: list[pa.Table]) -> list[str]:
    """The puzzles of a dataset that parsed (normalized strings), for tdoku."""
    if not parts:
        return []
    frame = pl.from_arrow(pa.concat_tables(parts).select(["puzzle", "verdict"]))
    frame = frame.filter(pl.col("verdict").cast(pl.String) != "malformed")  # type: ignore[union-attr]
    return frame["puzzle"].to_list()


def _options_record(
    given: int | None,
    strategy: str,
    opts: dict[str, SolveOptions],
    solutions: int,
    rows: int | None,
    workers: int,
    repeats: int,
) -> dict[str, Any]:
    budgets = "; ".join(  # of the strategies only: a solver from outside searches its own way
        f"{s} {'none' if o.budget is None else f'{o.budget:,}'}"
        for s, o in opts.items()
        if o.solver is None
    )
    solvers = [s for s, o in opts.items() if o.solver is not None]
    return {
        "strategy": strategy or "none",
        **({"solvers": "; ".join(solvers)} if solvers else {}),
        "solutions": solutions,
        # the budget given, as a number (as solve's metadata says it), where one was given:
        # each strategy's own default otherwise, all of them in `budgets`
        **({"max_nodes": given} if given is not None else {}),
        **({"budgets": budgets} if budgets else {}),
        "rows": "all" if rows is None else rows,
        "workers": workers,
        "repeats": repeats,
    }


def bench(
    datasets: list[str | Path] | str | Path,
    strategy: str | list[str] | tuple[str, ...] | None = None,
    workers: int = 1,
    output: str | Path | None = None,
    *,
    max_nodes: int | None = None,
    rows: int | None = None,
    solutions: int = 2,
    repeats: int = 3,
    reference: str | Path | None = None,
    tdoku: str | Path | None = None,
    progress: bool = False,
    force: bool = False,
    solvers: list[str] | tuple[str, ...] = (),
) -> BenchResult:
    """Solve each dataset with each strategy (`"all"`, a name, or a list of names) `repeats`
    times and measure.

    `solvers`: `--solver` specs measured beside the strategies, exactly as they are (the spec
    is the name in the `strategy` column): `c:LIBRARY:SYMBOL`, `python:MODULE:FUNCTION`,
    `cmd:COMMAND`, or a strategy's name. `strategy` defaults to `"all"` without solvers and to
    none with them. A solver's answers are checked as `solve` checks them; its `kernel_agrees`
    (our `fast` kernel's view of its claims) is computed after the clock, not on it.

    `max_nodes` is the node budget for every strategy (default: each strategy's own, as in
    every command: `registry.node_budget`); `rows` keeps the first rows of each dataset; `output`
    writes the per-puzzle results as Parquet; `reference` adds a column of figures read from
    a file, `tdoku` one measured with tdoku's `run_benchmark` at that path (skipped, with a
    note, when it is not there). Raises `InputError` (one line) for a bad file or option.
    `force`: write `output` over a file that is not a result of this tool (as `solve
    --force`); a dataset is never written over.
    """
    paths = [Path(p) for p in ([datasets] if isinstance(datasets, str | Path) else datasets)]
    if not paths:
        raise InputError("no datasets given")
    names = [strategy] if isinstance(strategy, str) else list(strategy or ())
    names = names or (["all"] if not solvers else [])
    for name in names:
        if name != "all" and name not in STRATEGIES:
            raise InputError(f"unknown strategy {name!r}; choose all, {', '.join(STRATEGIES)}")
    strategies = STRATEGIES if "all" in names else tuple(dict.fromkeys(names))
    strategy = "all" if "all" in names else ", ".join(strategies)
    if workers < 1 or repeats < 1 or (rows is not None and rows < 1):
        raise InputError("workers, repeats and rows must be at least 1")
    try:
        options = {s: SolveOptions(s, solutions, max_nodes) for s in strategies}
        options |= solver_options(tuple(solvers), solutions, max_nodes)
    except ValueError as e:
        raise InputError(str(e)) from None
    about = open_solvers(options)
    kernels = _kernels(list(options.values()))
    warm_up = partial(_warm, kernels, tuple(o.solver for o in options.values() if o.solver))
    job = start_job(
        JOB,
        None,
        output,
        {
            "force": force,
            "workers": workers,
            "progress": progress,
            "executor": "inline" if workers == 1 else "local",
        },
        kernels=kernels,
        warm_up=warm_up,
        reads=paths,
    )
    references = [read_reference(reference)] if reference is not None else []
    binary, skipped = tdoku_binary(tdoku)
    notes = [skipped] if skipped else []
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    with running(job, bench_schema(), bar=False) as run:
        loaded = [
            (name, path, _load(path, rows, workers))
            for name, path in zip(_names(paths), paths, strict=True)
        ]
        for _, path, batches in loaded:
            if progress and not any(b.num_rows for b in batches):
                warn_empty(str(path))
        measured = TdokuRuns(binary, solutions) if binary is not None else None
        try:
            best, rates = _repeats(loaded, options, repeats, measured, progress, job.executor)
        finally:
            if measured is not None:
                measured.close()
        run.finish()
        if measured is not None:
            references.append(measured.reference)
            notes += measured.notes
        results, runs = [], []
        for (name, s), (row, _) in best.items():
            row.rates = rates[(name, s)]
            row.references = {ref.label: ref.rate(name, row.path) for ref in references}
            results.append(row)
            runs.append(_run_record(row, repeats, solutions))
        metadata = {
            "command": "bench",
            "started_at": started_at,
            "workers": workers,
            "repeats": repeats,
            "options": _options_record(
                max_nodes, strategy, options, solutions, rows, workers, repeats
            ),
            "runs": runs,
            **({"solvers": about} if about else {}),
            **machine(),
        }
        _write(run, best)
        run.commit(metadata)
    output_name = None if job.target is None else str(job.target)
    return BenchResult(results, workers, output_name, metadata, references, notes)


def _write(run: Run, best: "Measured") -> None:
    """Every per-puzzle result of the fastest repeats, into the output (when there is one)."""
    if run.sink is None:
        return
    for (name, s), (_, parts) in best.items():
        for table in parts:
            run.write(_with_identity(table, name, s))


Measured = dict[tuple[str, str], tuple[BenchRow, list[pa.Table]]]


def _repeats(
    loaded: list[tuple[str, Path, list[pa.RecordBatch]]],
    options: dict[str, SolveOptions],
    repeats: int,
    tdoku: TdokuRuns | None,
    progress: bool,
    pool: Executor,
) -> tuple[Measured, dict[tuple[str, str], list[float]]]:
    """Every dataset x strategy `repeats` times, round-robin (a disturbance spreads over every
    row): the fastest repeat of each, with its result tables, and the rates of all of them.
    `tdoku` measures each dataset once a repeat too. `pool`: the job's workers, started
    (kernels loaded, solvers opened) before any clock."""
    strategies = tuple(options)
    best: Measured = {}
    rates: dict[tuple[str, str], list[float]] = {}
    for repeat in range(repeats):
        for name, path, batches in loaded:
            for s in strategies:
                row, parts = _measure(name, path, batches, options[s], pool)
                rates.setdefault((name, s), []).append(row.puzzles_per_s)
                if (name, s) not in best or row.wall_s < best[(name, s)][0].wall_s:
                    best[(name, s)] = (row, parts)
                if progress:
                    print(
                        f"bench: {name} / {s} ({repeat + 1} of {repeats}): "
                        f"{row.puzzles:,} puzzles, {row.puzzles_per_s:,.0f}/s",
                        file=sys.stderr,
                        flush=True,
                    )
            if tdoku is not None:
                tdoku.measure(name, _puzzles(best[(name, strategies[0])][1]))
    for name, _, batches in loaded:  # after the clock: answers checked, figures
        for s in strategies:
            row, parts = best[(name, s)]
            best[(name, s)] = (row, checked(batches, parts, options[s], pool))
            _figures(row, best[(name, s)][1])
    return best, rates


def _run_record(row: BenchRow, repeats: int, solutions: int) -> dict[str, Any]:
    """One dataset x strategy as the output's metadata records it (`report` reads it)."""
    return {
        "dataset": row.dataset,
        "path": row.path,
        "strategy": row.strategy,
        "rows": row.puzzles,
        "wall_s": round(row.wall_s, 4),
        "rows_per_s": round(row.puzzles_per_s, 1),
        "rates": [round(r, 1) for r in row.rates],
        "repeats": repeats,
        "max_nodes": row.max_nodes,
        "solutions": solutions,
    }

"""The benchmark table solver authors know from tdoku's harness, for any input `solve` reads.

    result = bench(["top1465.txt", "hardest.csv"], strategy="all", output="bench.parquet")
    print(result.to_markdown())

For each dataset x strategy: puzzles/s, us/puzzle, nodes/puzzle, guesses/puzzle, % solved
without guessing (the definitions of `pipeline.report`), and how many puzzles hit the node
budget. Each dataset is read into memory first, and the kernels are loaded (or compiled)
before the clock starts, so the figures measure solving only:

* puzzles/s: rows over the wall time of the solve step (parse, search, result table), on one
  core by default or on `workers` processes started and warmed beforehand;
* us/puzzle, nodes/puzzle, guesses/puzzle: kernel time, nodes and guesses per searched puzzle.

`output` writes every per-puzzle result (the result schema, with `dataset` and `strategy`
columns first and ids as text) to one Parquet file that `report` reads and compares.
"""

import datetime
import itertools
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import InputError
from pipeline.io.dataset import open_dataset
from pipeline.io.output import check_path, default_output, write_atomically
from pipeline.io.runinfo import METADATA_KEY, machine
from pipeline.jobs.batch import SolveOptions, solve_record_batch
from pipeline.jobs.executors import Executor, InlineExecutor, LocalExecutor, warm_kernels
from pipeline.jobs.results import effort, result_schema
from pipeline.solver.registry import REGISTRY, STRATEGIES

BATCH_SIZE = 50_000


@dataclass
class BenchRow:
    """The figures of one dataset x strategy."""

    dataset: str
    strategy: str
    puzzles: int
    puzzles_per_s: float
    wall_s: float
    max_nodes: int | None
    path: str
    us_per_puzzle: float | None = None  # the figures of searched puzzles: None without any
    nodes_per_puzzle: float | None = None
    guesses_per_puzzle: float | None = None
    no_guess_pct: float | None = None
    limit: int = 0


@dataclass
class BenchResult:
    """Every row of the table; `to_markdown()` is what the `bench` command prints."""

    rows: list[BenchRow]
    workers: int
    output: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_markdown(self) -> str:
        def num(value: float | None, places: int) -> str:
            return "-" if value is None else f"{value:,.{places}f}"

        lines = [
            "| dataset | strategy | puzzles | puzzles/s | us/puzzle | nodes/puzzle "
            "| guesses/puzzle | % no guess | limit |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in self.rows:
            lines.append(
                f"| {r.dataset} | {r.strategy} | {r.puzzles:,} | {num(r.puzzles_per_s, 0)} "
                f"| {num(r.us_per_puzzle, 1)} | {num(r.nodes_per_puzzle, 1)} "
                f"| {num(r.guesses_per_puzzle, 1)} | {num(r.no_guess_pct, 1)} | {r.limit:,} |"
            )
        on = f"{self.workers} worker process{'es' if self.workers > 1 else ''}"
        return "\n".join(lines) + (
            f"\n\npuzzles/s: rows over the wall time of solving ({on}, kernels loaded first); "
            "us, nodes and guesses per searched puzzle; limit: puzzles left at the node budget.\n"
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "workers": self.workers,
                "output": self.output,
                "rows": [asdict(r) for r in self.rows],
            },
            indent=2,
        )


def _executor(workers: int, strategies: tuple[str, ...]) -> Executor:
    """This process for one worker, else a pool; either way `start()` loads every kernel the
    strategies call before the caller starts a clock."""
    warm = partial(warm_kernels, strategies)
    return InlineExecutor(warm) if workers == 1 else LocalExecutor(workers, warm)


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
    names = [default_output(p, "").name or p.name for p in paths]
    return [
        f"{n} #{names[:i].count(n) + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)
    ]


def _with_identity(table: pa.Table, dataset: str, strategy: str) -> pa.Table:
    """The result table with `dataset` and `strategy` first and `id` as text (null without)."""
    ids = table.column("id").cast(pa.string()) if "id" in table.column_names else None
    if ids is None:
        ids = pa.nulls(table.num_rows, pa.string())
    columns = {
        "dataset": pa.array([dataset] * table.num_rows, pa.string()),
        "strategy": pa.array([strategy] * table.num_rows, pa.string()),
        "row": table.column("row"),
        "id": ids,
    }
    columns |= {name: table.column(name) for name in table.column_names if name not in columns}
    return pa.Table.from_pydict(columns, schema=bench_schema())


def bench_schema() -> pa.Schema:
    """The schema of a bench output file: dataset, strategy, then the result schema."""
    schema = result_schema(pa.string())
    extra = [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("strategy", pa.string(), nullable=False),
    ]
    return pa.schema(extra + list(schema))


def _write(path: Path, tables: list[pa.Table], metadata: dict[str, Any]) -> None:
    schema = bench_schema().with_metadata({METADATA_KEY: json.dumps(metadata, sort_keys=True)})
    table = pa.concat_tables(tables).cast(schema) if tables else schema.empty_table()
    table = table.replace_schema_metadata(schema.metadata)
    write_atomically(path, lambda f: pq.write_table(table, f, compression="zstd"))


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
    row = BenchRow(name, options.strategy, n, n / wall if wall > 0 else 0.0, wall,
                   options.max_nodes, str(path))  # fmt: skip
    if n:
        f = effort(pl.from_arrow(pa.concat_tables(parts)))
        row.us_per_puzzle = f["time_us"]
        row.nodes_per_puzzle = f["nodes"]
        row.guesses_per_puzzle = f["guesses"]
        row.no_guess_pct = f["no_guess_pct"]
        row.limit = f["limit"]
    return row, parts


def bench(
    datasets: list[str | Path] | str | Path,
    strategy: str = "all",
    workers: int = 1,
    output: str | Path | None = None,
    *,
    max_nodes: int | None = None,
    rows: int | None = None,
    solutions: int = 2,
    progress: bool = False,
) -> BenchResult:
    """Solve each dataset with each strategy (`"all"` or one name) and measure.

    `max_nodes` is the node budget for every strategy (default: each strategy's
    `bench_budget` in the registry); `rows`
    keeps the first rows of each dataset; `output` writes the per-puzzle results as Parquet.
    Raises `InputError` (one line) for a bad file or option.
    """
    paths = [Path(p) for p in ([datasets] if isinstance(datasets, str | Path) else datasets)]
    if not paths:
        raise InputError("no datasets given")
    strategies = STRATEGIES if strategy == "all" else (strategy,)
    if strategy != "all" and strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; choose all, {', '.join(STRATEGIES)}")
    if workers < 1 or (rows is not None and rows < 1):
        raise InputError("workers and rows must be at least 1")
    out = check_path(output) if output is not None else None
    try:
        options = {
            s: SolveOptions(s, solutions, max_nodes or REGISTRY[s].bench_budget) for s in strategies
        }
    except ValueError as e:
        raise InputError(str(e)) from None
    loaded = [
        (name, path, _load(path, rows, workers))
        for name, path in zip(_names(paths), paths, strict=True)
    ]
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results, tables, runs = [], [], []
    pool = _executor(workers, tuple(strategies))
    pool.start()
    try:
        for (name, path, batches), s in itertools.product(loaded, strategies):
            row, parts = _measure(name, path, batches, options[s], pool)
            results.append(row)
            runs.append(
                {
                    "dataset": name,
                    "path": str(path),
                    "strategy": s,
                    "rows": row.puzzles,
                    "wall_s": round(row.wall_s, 4),
                    "rows_per_s": round(row.puzzles_per_s, 1),
                    "max_nodes": row.max_nodes,
                    "solutions": solutions,
                }
            )
            if out is not None:
                tables += [_with_identity(t, name, s) for t in parts]
            if progress:
                print(
                    f"bench: {name} / {s}: {row.puzzles:,} puzzles, {row.puzzles_per_s:,.0f}/s",
                    file=sys.stderr,
                    flush=True,
                )
        pool.close()
    finally:
        pool.terminate()
    metadata = {
        "command": "bench",
        "started_at": started_at,
        "workers": workers,
        "runs": runs,
        **machine(),
    }
    if out is not None:
        _write(out, tables, metadata)
    return BenchResult(results, workers, None if out is None else str(out), metadata)

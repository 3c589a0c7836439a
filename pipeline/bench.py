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
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.batch import SolveOptions, solve_record_batch
from pipeline.dataset import DatasetError, open_dataset
from pipeline.report import METADATA_KEY, run_figures
from pipeline.results import result_schema
from pipeline.run import default_output
from pipeline.runinfo import machine
from pipeline.solver import STRATEGIES

# Node budgets when none is given: the seed strategies give up on the hardest puzzles at
# 20,000 nodes (as in benchmarks/kernels.py) instead of running for minutes; `fast` never needs one.
DEFAULT_BUDGETS: dict[str, int | None] = {"fast": None, "mrv": 20_000, "backtrack": 20_000}
BATCH_SIZE = 50_000
_WORKER_ENV = {"POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}


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


def _warm(strategies: tuple[str, ...]) -> None:
    """Load (or compile) every kernel a batch may call now, not on the clock: each strategy's,
    and the checks that run for clashing givens."""
    puzzles = pa.array(["." * 81, "11" + "." * 79, "x"], pa.string())
    batch = pa.RecordBatch.from_arrays(
        [pa.array([0, 1, 2], pa.int64()), puzzles], names=["row", "puzzle"]
    )
    for strategy in strategies:
        solve_record_batch(batch, SolveOptions(strategy, 2, 1000))


def _init_worker(strategies: tuple[str, ...]) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _warm(strategies)


def _ready(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@contextmanager
def _workers(workers: int, strategies: tuple[str, ...]) -> Iterator[ProcessPoolExecutor | None]:
    """None for one worker (solve in this process), else a pool whose every worker is up with
    its kernels loaded before the caller starts a clock."""
    _warm(strategies)
    if workers == 1:
        yield None
        return
    saved = {k: os.environ.get(k) for k in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)  # one polars/pyarrow thread per worker process
    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(strategies,)
    )
    try:
        pids: set[int] = set()
        for _ in range(20):  # each wait holds a worker for a moment: all get a turn
            pids |= set(pool.map(_ready, [0.05] * workers))
            if len(pids) >= workers:
                break
        _restore(saved)  # the workers are up: they keep their copy
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


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
    names = [default_output(p, suffix="").name or p.name for p in paths]
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
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        pq.write_table(table.replace_schema_metadata(schema.metadata), tmp, compression="zstd")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _measure(
    name: str,
    path: Path,
    batches: list[pa.RecordBatch],
    options: SolveOptions,
    pool: ProcessPoolExecutor | None,
) -> tuple[BenchRow, list[pa.Table]]:
    """Solve the batches on the clock; the row of the table and the result tables."""
    start = time.perf_counter()
    if pool is None:
        parts = [solve_record_batch(b, options) for b in batches]
    else:
        parts = list(pool.map(solve_record_batch, batches, itertools.repeat(options)))
    wall = time.perf_counter() - start
    n = sum(t.num_rows for t in parts)
    row = BenchRow(name, options.strategy, n, n / wall if wall > 0 else 0.0, wall,
                   options.max_nodes, str(path))  # fmt: skip
    if n:
        frame = pl.from_arrow(pa.concat_tables(parts))
        f = run_figures(frame.with_columns(pl.col("verdict").cast(pl.String)))
        row.us_per_puzzle = f["stats"]["time_us"]["mean"]
        row.nodes_per_puzzle = f["stats"]["nodes"]["mean"]
        row.guesses_per_puzzle = f["stats"]["guesses"]["mean"]
        row.no_guess_pct = f["no_guess_pct"]
        row.limit = f["verdicts"]["limit"]
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

    `max_nodes` is the node budget for every strategy (default: `DEFAULT_BUDGETS`); `rows`
    keeps the first rows of each dataset; `output` writes the per-puzzle results as Parquet.
    Raises `DatasetError` (one line) for a bad file or option.
    """
    paths = [Path(p) for p in ([datasets] if isinstance(datasets, str | Path) else datasets)]
    if not paths:
        raise DatasetError("no datasets given")
    strategies = STRATEGIES if strategy == "all" else (strategy,)
    if strategy != "all" and strategy not in STRATEGIES:
        raise DatasetError(f"unknown strategy {strategy!r}; choose all, {', '.join(STRATEGIES)}")
    if workers < 1 or (rows is not None and rows < 1):
        raise DatasetError("workers and rows must be at least 1")
    out = Path(output) if output is not None else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise DatasetError(f"{out}: not a writable output file path")
    try:
        options = {
            s: SolveOptions(s, solutions, max_nodes or DEFAULT_BUDGETS[s]) for s in strategies
        }
    except ValueError as e:
        raise DatasetError(str(e)) from None
    loaded = [
        (name, path, _load(path, rows, workers))
        for name, path in zip(_names(paths), paths, strict=True)
    ]
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results, tables, runs = [], [], []
    with _workers(workers, tuple(strategies)) as pool:
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

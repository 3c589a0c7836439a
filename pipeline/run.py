"""The bulk solve job: an input file in, one Parquet file of results out, on all cores.

    summary = solve_file("puzzles.csv")        # -> puzzles.solved.parquet beside the input

Reads the input in bounded batches (dataset.py), solves them on worker processes (executors.py)
in input order, keeps each finished batch in a checkpoint (checkpoint.py) and at the end
writes the output atomically with the run's metadata. An interrupted run is continued with
`resume=True`; the result then equals an uninterrupted run's, timing columns aside.
"""

import datetime
import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pipeline.batch import SolveOptions, solve_record_batch
from pipeline.checkpoint import Checkpoint
from pipeline.dataset import Dataset, DatasetError, open_dataset
from pipeline.executors import ExecutorLost, make_executor
from pipeline.results import result_schema
from pipeline.runinfo import run_metadata
from pipeline.solver.codes import VERDICT_NAMES

DEFAULT_BATCH_SIZE = 50_000
_SUFFIXES = {".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".gz", ".zst", ".zstd"}


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (`kill`, a batch scheduler's time limit) stops a run the way Ctrl-C does: the
    workers end and the checkpoint stays. Signal handlers can only be set in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class RunFailed(DatasetError):
    """The workers or the cluster went away; what is done stays in the checkpoint."""

    def __init__(self, reason: str, rows_done: int, checkpoint: Path) -> None:
        super().__init__(
            f"{reason}; {rows_done:,} rows done are kept in {checkpoint}; "
            "run the same command with --resume to continue"
        )


class RunInterrupted(Exception):
    """Ctrl-C (or SIGTERM) stopped a run; what is done stays in the checkpoint."""

    def __init__(self, rows_done: int, checkpoint: Path) -> None:
        self.rows_done = rows_done
        self.checkpoint = checkpoint
        super().__init__(
            f"interrupted: {rows_done:,} rows done are kept in {checkpoint}; "
            "run the same command with --resume to continue"
        )


@dataclass
class RunSummary:
    """What a run did; `to_json()` is the `--json` output of the CLI."""

    input: str
    output: str
    rows: int
    verdicts: dict[str, int]
    wall_s: float
    rows_per_s: float
    workers: int
    strategy: str
    resumed_rows: int = 0
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("metadata")
        return json.dumps(data, indent=2)

    def describe(self) -> str:
        counts = ", ".join(f"{v} {n:,}" for v, n in self.verdicts.items() if n)
        resumed = f" ({self.resumed_rows:,} from the checkpoint)" if self.resumed_rows else ""
        return (
            f"{self.rows:,} rows{resumed} in {self.wall_s:.2f} s "
            f"({self.rows_per_s:,.0f} rows/s, {self.workers} worker{'s' * (self.workers != 1)}): "
            f"{counts or 'no rows'}\n"
            f"wrote {self.output}"
        )


def advance_bar(bar: tqdm, ds: Dataset, rows: int) -> None:
    """Move a progress bar on by `rows`. For CSV/TXT inputs its total (hence the ETA) is the
    dataset's estimate, which improves as the file is read, and never below what is done."""
    if ds.num_rows is None:
        bar.total = max(ds.estimated_rows() or 0, bar.n + rows)
    bar.update(rows)


def default_output(input_path: str | Path, suffix: str = ".solved.parquet") -> Path:
    """`data/x.csv.gz` -> `data/x.solved.parquet`."""
    path = Path(input_path)
    name = path.name
    while Path(name).suffix.lower() in _SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return path.with_name(name + suffix)


def _identity(ds: Dataset, options: SolveOptions, reading: dict[str, Any]) -> dict[str, Any]:
    """Everything that makes a checkpoint belong to a run: the input as it is now, the options."""
    stat = ds.path.stat()
    return {
        "input": str(ds.path.resolve()),
        "input size": stat.st_size,
        "input mtime": stat.st_mtime_ns,
        "strategy": options.strategy,
        "solutions": options.solutions,
        "max_nodes": options.max_nodes,
        "reading options": reading,
    }


def solve_file(
    input_path: str | Path,
    output: str | Path | None = None,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    separator: str | None = None,
    has_header: bool | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int | None = None,
    strategy: str = "fast",
    solutions: int = 2,
    max_nodes: int | None = None,
    resume: bool = False,
    progress: bool = True,
    executor: str = "local",
    scheduler: str | None = None,
) -> RunSummary:
    """Solve every row of `input_path` into `output` (default `<stem>.solved.parquet`).

    `executor`: `local` (worker processes here) or `dask` (the cluster at `scheduler`, or a
    LocalCluster of `workers` processes). Raises `DatasetError` (one line, for the CLI) for a
    bad file, column or option, `RunFailed` (a `DatasetError`) when workers or the cluster go
    away, and `RunInterrupted` after Ctrl-C; both keep the finished batches for `resume=True`.
    """
    started = time.perf_counter()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    try:
        options = SolveOptions(strategy, solutions, max_nodes)
    except ValueError as e:
        raise DatasetError(str(e)) from None
    pool = make_executor(executor, workers, scheduler)
    reading = dict(column=column, solution_column=solution_column, id_column=id_column,
                   separator=separator, has_header=has_header)  # fmt: skip
    ds = open_dataset(input_path, batch_size=batch_size, **reading)
    out = Path(output) if output is not None else default_output(input_path)
    if out.is_dir():
        raise DatasetError(f"{out}: is a directory, not an output file")
    if not out.parent.is_dir():
        raise DatasetError(f"{out.parent}: no such directory for the output")
    checkpoint = Checkpoint(out)
    identity = _identity(ds, options, reading)
    if resume:
        done = checkpoint.resume(identity)
    else:
        if checkpoint.exists():
            print(f"note: starting over; discarding the checkpoint at {checkpoint.folder}",
                  file=sys.stderr)  # fmt: skip
        checkpoint.start(identity)
        done = 0
    resumed_rows = done
    pool.start()
    bar = tqdm(
        total=ds.num_rows,
        initial=done,
        unit=" rows",
        unit_scale=True,
        disable=not progress,
        file=sys.stderr,
        desc="solve",
        smoothing=0.1,
    )
    try:
        with _sigterm_as_interrupt():
            results = pool.map_ordered(solve_record_batch, ds.batches(start_row=done), options)
            for table in results:
                checkpoint.add(done, table)
                done += table.num_rows
                advance_bar(bar, ds, table.num_rows)
            bar.close()
            wall = time.perf_counter() - started
            metadata = run_metadata(
                "solve",
                ds,
                done,
                {**asdict(options), "batch_size": batch_size, **reading},
                started_at,
                wall,
                (done - resumed_rows) / wall if wall > 0 else None,
                pool.workers,
                executor,
                scheduler,
                resumed_rows=resumed_rows,
            )
            id_type = ds.schema.field("id").type if ds.id_column is not None else None
            # An interrupt while merging keeps the (complete) checkpoint: --resume merges again.
            counts: Counter[str] = checkpoint.merge(result_schema(id_type), metadata)
    except ExecutorLost as e:
        pool.terminate()
        raise RunFailed(str(e), checkpoint.rows_kept(), checkpoint.folder) from None
    except DatasetError:  # the input failed part-way (a truncated .gz, say)
        pool.terminate()
        if checkpoint.rows_kept() == resumed_rows == 0:
            checkpoint.remove()  # nothing worth resuming: leave no folder behind
        raise
    except KeyboardInterrupt:
        pool.terminate()
        # count what is on disk: the interrupt may have come between a part and `done +=`
        raise RunInterrupted(checkpoint.rows_kept(), checkpoint.folder) from None
    finally:
        bar.close()
    checkpoint.remove()
    return RunSummary(
        input=str(ds.path),
        output=str(out),
        rows=done,
        verdicts={v: counts.get(v, 0) for v in VERDICT_NAMES},
        wall_s=wall,
        rows_per_s=(done - resumed_rows) / wall if wall > 0 else 0.0,
        workers=pool.workers,
        strategy=options.strategy,
        resumed_rows=resumed_rows,
        metadata=metadata,
    )

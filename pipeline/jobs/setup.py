"""What every file job does first, and the pieces it shares: the clock, the input, the output,
the executor, the progress bar and the run's metadata. Used by solve, validate and bench.

    job = start_job("solve", "x.csv", None, ".solved.parquet", {"workers": 2},
                    warm=warm_kernels)
    job.executor.start()
    bar = job.progress_bar()
    for table in job.executor.map_ordered(fn, job.dataset.batches(), options): ...
    job.metadata(rows, options_dict)
"""

import datetime
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from tqdm import tqdm

from pipeline.io.dataset import Dataset, open_dataset
from pipeline.io.output import output_path
from pipeline.io.runinfo import run_metadata
from pipeline.jobs.executors import Executor, make_executor

DEFAULT_BATCH_SIZE = 50_000


class JobOptions(TypedDict, total=False):
    """The options every file job takes as keywords.

    Reading: `column`, `solution_column` and `id_column` name columns (default: found by name
    or content); `separator` and `has_header` apply to CSV/TSV. Running: `batch_size` rows per
    batch (bounds memory), `workers` (default: all cores), `progress` (a bar on stderr),
    `executor` (`local`: worker processes here; `dask`: the cluster at `scheduler`, or a
    LocalCluster of `workers` processes)."""

    column: str | None
    solution_column: str | None
    id_column: str | None
    separator: str | None
    has_header: bool | None
    batch_size: int | None
    workers: int | None
    progress: bool
    executor: str
    scheduler: str | None


READING = ("column", "solution_column", "id_column", "separator", "has_header")


@dataclass(frozen=True)
class ReadOptions:
    """How to read an input: which columns, which separator, whether it has a header (None:
    found from the file)."""

    column: str | None = None
    solution_column: str | None = None
    id_column: str | None = None
    separator: str | None = None
    has_header: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Job:
    """A file job, set up: its input opened, its output checked, its executor chosen."""

    command: str
    dataset: Dataset
    output: Path
    executor: Executor
    executor_kind: str
    scheduler: str | None
    reading: ReadOptions
    batch_size: int
    progress: bool
    started: float = field(default_factory=time.perf_counter)
    started_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )

    def wall(self) -> float:
        """Seconds since the job started."""
        return time.perf_counter() - self.started

    def progress_bar(self, initial: int = 0) -> tqdm:
        """A progress bar on stderr, in rows (a total, hence an ETA, once known)."""
        return tqdm(total=self.dataset.num_rows, initial=initial, unit=" rows", unit_scale=True,
                    disable=not self.progress, file=sys.stderr, desc=self.command,
                    smoothing=0.1)  # fmt: skip

    def advance(self, bar: tqdm, rows: int) -> None:
        """Move the bar on by `rows`. For CSV/TXT inputs its total (hence the ETA) is the
        dataset's estimate, which improves as the file is read, and never below what is done."""
        if self.dataset.num_rows is None:
            bar.total = max(self.dataset.estimated_rows() or 0, bar.n + rows)
        bar.update(rows)

    def metadata(
        self, rows: int, options: dict[str, Any], rows_per_s: float | None, **extra: Any
    ) -> dict[str, Any]:
        """The run's metadata, as every output records it (see `io.runinfo`)."""
        return run_metadata(
            self.command,
            self.dataset,
            rows,
            {**options, "batch_size": self.batch_size, **self.reading.as_dict()},
            self.started_at,
            self.wall(),
            rows_per_s,
            self.executor.workers,
            self.executor_kind,
            self.scheduler,
            **extra,
        )


def start_job(
    command: str,
    input_path: str | Path,
    output: str | Path | None,
    suffix: str,
    options: JobOptions,
    *,
    warm: Callable[[], None] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Job:
    """Choose the executor, open the input, check the output (default: the input's stem with
    `suffix`, beside it). `batch_size` is the job's default. Raises `InputError` (one line)
    before any work is done."""
    started = time.perf_counter()
    unknown = sorted(options.keys() - JobOptions.__annotations__.keys())
    if unknown:
        raise TypeError(f"{command}: unexpected options {', '.join(unknown)}")
    reading = ReadOptions(**{name: options.get(name) for name in READING})
    batch_size = options.get("batch_size") or batch_size
    executor = options.get("executor", "local")
    scheduler = options.get("scheduler")
    pool = make_executor(executor, options.get("workers"), scheduler, warm)
    ds = open_dataset(input_path, batch_size=batch_size, **reading.as_dict())
    out = output_path(input_path, output, suffix)
    return Job(command, ds, out, pool, executor, scheduler, reading, batch_size,
               options.get("progress", True), started)  # fmt: skip


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (`kill`, a batch scheduler's time limit) stops a job the way Ctrl-C does: the
    workers end and what is kept stays. Signal handlers can only be set in the main thread."""
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

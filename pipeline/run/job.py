"""What every file job does first, and the pieces it shares: the clock, the inputs, the output,
the executor, the progress bar and the run's metadata. Used by the file jobs on the run loop
(solve, validate, score, split, augment, enumerate; generate and bench do not use it yet).

    job = start_job("solve", ["x.csv"], None, ".solved.parquet", {"workers": 2},
                    kernels=("fast", "clash"))
    with job.locked():                        # no second run writes this output meanwhile
        job.start_executor()                  # says so when the kernels compile (first run)
        bar = job.progress_bar()
        for part in job.executor.map_ordered(fn, job.inputs.batches(), options): ...
        job.metadata(rows, options_dict)
"""

import datetime
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pipeline.errors import InputError, printable
from pipeline.io.array_folders import check_array_folder
from pipeline.io.inputs import STDIN, Inputs, expand, open_inputs
from pipeline.io.output import STDOUT, OutputLock, Target, check_output, default_output
from pipeline.io.runinfo import run_metadata
from pipeline.io.stdin import is_stream
from pipeline.run.executors import Executor, make_executor
from pipeline.run.warmup import expect_kernels, warm

if TYPE_CHECKING:
    from tqdm import tqdm

DEFAULT_BATCH_SIZE = 50_000


class JobOptions(TypedDict, total=False):
    """The options every file job takes as keywords.

    Reading: `column`, `solution_column` and `id_column` name columns (default: found by name
    or content); `separator` and `has_header` apply to CSV/TSV; `input_format` forces the
    input's format (csv, tsv, txt, parquet; stdin is sniffed otherwise). Writing: `format`
    (parquet, csv, jsonl; default: from the output's suffix), `force` (replace a file that is
    not a result of this tool). Running: `batch_size` rows per batch (bounds memory), `workers`
    (default: the CPUs this process may use), `progress` (a bar on stderr when it is a
    terminal), `executor` (`local`: threads here; `processes`: worker processes here; `dask`:
    the cluster at `scheduler`, or a LocalCluster of `workers` processes)."""

    column: str | None
    solution_column: str | None
    id_column: str | None
    separator: str | None
    has_header: bool | None
    input_format: str | None
    format: str | None
    force: bool
    batch_size: int | None
    workers: int | None
    progress: bool
    executor: str
    scheduler: str | None


READING = ("column", "solution_column", "id_column", "separator", "has_header", "input_format")


@dataclass(frozen=True)
class ReadOptions:
    """How to read an input: which columns, which separator, whether it has a header, which
    format (None: found from the file)."""

    column: str | None = None
    solution_column: str | None = None
    id_column: str | None = None
    separator: str | None = None
    has_header: bool | None = None
    input_format: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def dataset_options(self) -> dict[str, Any]:
        """The keywords of `open_dataset`."""
        options = self.as_dict()
        fmt = options.pop("input_format")
        return options | ({"format": fmt} if fmt is not None else {})


@dataclass
class HiddenBar:
    """What a job keeps of a progress bar nobody sees (not a terminal, or `progress=False`):
    the rows done and the total, as a disabled tqdm bar would, without importing tqdm."""

    total: int | None = None
    n: int = 0

    def update(self, rows: int) -> None:
        self.n += rows

    def refresh(self) -> None:
        """Nothing to draw."""

    def close(self) -> None:
        """Nothing to clear."""


@dataclass
class Job:
    """A file job, set up: its inputs opened, its output checked, its executor chosen."""

    command: str
    inputs: Inputs
    target: Target
    executor: Executor
    executor_kind: str
    scheduler: str | None
    reading: ReadOptions
    batch_size: int
    progress: bool
    kernels: tuple[str, ...] = ()  # what the workers load as they start (`warmup.KERNELS`)
    started: float = field(default_factory=time.perf_counter)
    started_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )

    @property
    def output(self) -> Path | None:
        """The output file (None: stdout)."""
        return self.target.path

    def wall(self) -> float:
        """Seconds since the job started."""
        return time.perf_counter() - self.started

    def locked(self) -> OutputLock | nullcontext[None]:
        """Hold the output's lock (a file output) while the job runs."""
        return nullcontext() if self.target.path is None else OutputLock(self.target.path)

    def start_executor(self) -> None:
        """Start the workers, which load the job's kernels: on a first run they compile, and
        a line on stderr says so, with the time it will take (`pipeline.compiled`)."""
        from pipeline.compiled import notices, stderr_notice

        with notices(stderr_notice(self.command) if self.progress else None):
            expect_kernels(self.kernels)
            self.executor.start()

    def progress_bar(self, initial: int = 0) -> "tqdm | HiddenBar":
        """A progress bar on stderr when it is a terminal, in rows (a total, hence an ETA,
        once known); else a `HiddenBar` (tqdm is imported for a bar shown only)."""
        if not (self.progress and sys.stderr.isatty()):
            return HiddenBar(self.inputs.num_rows, initial)
        from tqdm import tqdm

        return tqdm(total=self.inputs.num_rows, initial=initial, unit=" rows", unit_scale=True,
                    file=sys.stderr, desc=self.command, smoothing=0.1)  # fmt: skip

    def advance(self, bar: "tqdm | HiddenBar", rows: int) -> None:
        """Move the bar on by `rows`. For CSV/TXT inputs its total (hence the ETA) is the
        inputs' estimate, which improves as they are read, and never below what is done."""
        if self.inputs.num_rows is None:
            bar.total = self.inputs.estimated_rows(bar.n + rows) or bar.n + rows
        bar.update(rows)

    def finish_bar(self, bar: "tqdm | HiddenBar") -> None:
        """The bar's total made right (an estimate may have been off), then closed."""
        bar.total = bar.n
        bar.refresh()
        bar.close()

    def metadata(
        self, rows: int, options: dict[str, Any], rows_per_s: float | None, **extra: Any
    ) -> dict[str, Any]:
        """The run's metadata, as every output records it (see `io.runinfo`)."""
        return run_metadata(
            self.command,
            self.inputs.datasets,
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
    inputs: str | Path | list[str | Path] | tuple[str | Path, ...],
    output: str | Path | Target | None,
    suffix: str,
    options: JobOptions,
    *,
    kernels: tuple[str, ...] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    formats: tuple[str, ...] | None = None,
    passthrough: bool = True,
    reserved: tuple[str, ...] = (),
) -> Job:
    """Check the options and the output, choose the executor, open the inputs. The output
    defaults to the input's stem with `suffix`, beside it (stdout for stdin or a pipe). Raises
    `InputError` (one line) before any work is done; an output given as a `Target` is the
    job's to check (a folder, say). `passthrough`: whether the inputs' other
    columns travel along (solve: yes; validate: no use for them), renamed when they would take
    one of the `reserved` names (columns the job adds)."""
    started = time.perf_counter()
    unknown = sorted(options.keys() - JobOptions.__annotations__.keys())
    if unknown:
        raise TypeError(f"{command}: unexpected options {', '.join(unknown)}")
    reading = ReadOptions(**{name: options.get(name) for name in READING})
    batch_size = options.get("batch_size") or batch_size
    if batch_size < 1:
        raise InputError(f"batch_size must be at least 1, not {batch_size}")
    names = expand(inputs)
    if output is None:
        if len(names) == 1 and (names[0] == STDIN or is_stream(names[0])):  # read as - is
            output = STDOUT
        elif len(names) > 1:
            raise InputError(f"{command}: several inputs go into one output: give -o")
        else:
            output = default_output(names[0], suffix)
    if options.get("format") == "npy" and (formats is None or "npy" in formats):
        # a folder of arrays (io.array_folders), checked as a folder is
        folder = check_array_folder(output, inputs=names, force=options.get("force", False))
        target = Target(folder, "npy")
    else:
        target = check_output(output, inputs=names, force=options.get("force", False),
                              format=options.get("format"),
                              formats=tuple(f for f in formats if f != "npy") if formats
                              else None)  # fmt: skip
    kind = options.get("executor") or "local"
    scheduler = options.get("scheduler")
    warm_up = partial(warm, kernels) if kernels else None
    pool = make_executor(kind, options.get("workers"), scheduler, warm_up)
    opened = open_inputs(names, batch_size=batch_size, passthrough=passthrough,
                         reserved=reserved, **reading.dataset_options())  # fmt: skip
    for ds in opened.datasets:  # a header guessed from content: no row goes unsaid
        if ds.header_note and options.get("progress", True):
            print(f"note: {printable(ds.header_note)}", file=sys.stderr)
    return Job(command, opened, target, pool, kind, scheduler, reading, batch_size,
               options.get("progress", True), kernels, started)  # fmt: skip


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

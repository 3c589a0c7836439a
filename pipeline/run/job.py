"""What every job does first: its options checked, its inputs opened, its output checked, its
executor chosen, before any work; and what it then asks of the set-up (the clock, the
progress bar, the run's metadata, what makes a checkpoint its own).

    job = start_job(JOBS["solve"], ["x.csv"], None, {"workers": 2}, kernels=("fast", "clash"))
    with running(job, schema, identity=...) as run: ...      # `run.loop`: the work itself

A job is described by its entry in the job table (`pipeline.jobs.JOBS`, read here as a
`JobSpec`): its name, the suffix of its default output, the formats it writes, its sink
(`run.loop`) and whether it resumes. A job without inputs (generate, bench) passes None.
"""

import datetime
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import InputError, printable
from pipeline.io.array_folders import check_array_folder
from pipeline.io.inputs import STDIN, Inputs, expand, open_names
from pipeline.io.output import STDOUT, Target, check_output, default_output, free_space, size_text
from pipeline.io.runinfo import package_version, run_metadata, usable_cpus
from pipeline.io.stdin import is_stream
from pipeline.run.dataset_output import check_dataset_folder, wants_dataset
from pipeline.run.executors import Executor, make_executor
from pipeline.run.job_options import READING, JobOptions, JobSpec, ReadOptions
from pipeline.run.warmup import expect_kernels, warm

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tqdm import tqdm

DEFAULT_BATCH_SIZE = 50_000
Paths = str | Path | list[str | Path] | tuple[str | Path, ...]


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
    """A job, set up: its inputs opened (None: a job that reads none), its output checked
    (None: none), its executor chosen, not started."""

    spec: JobSpec
    inputs: Inputs | None
    target: Target | None
    executor: Executor
    executor_kind: str
    scheduler: str | None
    reading: ReadOptions
    batch_size: int
    progress: bool
    kernels: tuple[str, ...] = ()  # what the workers load as they start (`warmup.KERNELS`)
    resume: bool = False
    # on Dask, the steps that need the whole corpus run hash-partitioned on the workers
    # (validate's repeats, split's cut and shuffle: `jobs.*.sharded`); else on the client
    shards: bool = False
    started: float = field(default_factory=time.perf_counter)
    started_at: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )

    @property
    def command(self) -> str:
        return self.spec.name

    @property
    def output(self) -> Path | None:
        """The output file or folder (None: stdout, or no output)."""
        return None if self.target is None else self.target.path

    @property
    def format(self) -> str:
        """The output's format (parquet, csv, jsonl, npy; or a folder's: split's)."""
        return "parquet" if self.target is None else self.target.format

    def local_threads(self) -> int:
        """Threads this process may use for its own work (HRM's copies and files, sha256s):
        as many as its workers, when they run here, at most this machine's usable CPUs; with
        a cluster's scheduler, this machine's, whatever the cluster's workers (unknown until
        connected)."""
        here = usable_cpus()
        if self.scheduler is not None:
            return here
        return max(1, min(self.executor.workers, here))

    def wall(self) -> float:
        """Seconds since the job started."""
        return time.perf_counter() - self.started

    def start_executor(self) -> None:
        """Start the workers, which load the job's kernels: on a first run they compile, and
        a line on stderr says so, with the time it will take (`pipeline.compiled`)."""
        from pipeline.compiled import notices, stderr_notice

        with notices(stderr_notice(self.command) if self.progress else None):
            expect_kernels(self.kernels)
            self.executor.start()

    def progress_bar(
        self, initial: int = 0, total: int | None = None, unit: str = "rows"
    ) -> "tqdm | HiddenBar":
        """A progress bar on stderr when it is a terminal, in `unit` (a total, hence an ETA,
        once known: `total`, else the inputs' rows); else a `HiddenBar` (tqdm is imported for
        a bar shown only)."""
        if total is None and self.inputs is not None:
            total = self.inputs.num_rows
        if not (self.progress and sys.stderr.isatty()):
            return HiddenBar(total, initial)
        from tqdm import tqdm

        return tqdm(
            total=total,
            initial=initial,
            unit=f" {unit}",
            unit_scale=True,
            file=sys.stderr,
            desc=self.command,
            smoothing=0.1,
        )

    def advance(self, bar: "tqdm | HiddenBar", rows: int) -> None:
        """Move the bar on by `rows`. For CSV/TXT inputs its total (hence the ETA) is the
        inputs' estimate, which improves as they are read, and never below what is done."""
        if self.inputs is not None and self.inputs.num_rows is None:
            bar.total = self.inputs.estimated_rows(bar.n + rows) or bar.n + rows
        bar.update(rows)

    def check_room(self, needed: int, what: str) -> None:
        """Refuse (`InputError`, before any work) an output whose `what` needs more than the
        `needed` bytes its file system has free."""
        if self.output is None:
            return
        free = free_space(self.output.parent)
        if needed > free:
            raise InputError(
                f"{self.target}: {what} need about {size_text(needed)}; {size_text(free)} are free"
            )

    def identity(self, options: dict[str, Any]) -> dict[str, Any]:
        """What makes a checkpoint belong to a run of this job: the inputs as they are now,
        the tool's version (another version's parts may have another schema), the reading
        options and `options`, the job's own that change its results."""
        assert self.inputs is not None
        inputs = self.inputs.identity()
        return {
            **(inputs[0] if len(inputs) == 1 else {"inputs": inputs}),
            "version": package_version(),
            **options,
            "reading options": self.reading.as_dict(),
        }

    def metadata(
        self, rows: int, options: dict[str, Any], rows_per_s: float | None, **extra: Any
    ) -> dict[str, Any]:
        """The run's metadata, as every output records it (see `io.runinfo`)."""
        assert self.inputs is not None
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
    spec: JobSpec,
    inputs: Paths | None,
    output: str | Path | Target | None,
    options: JobOptions,
    *,
    kernels: tuple[str, ...] = (),
    batch_size: int = DEFAULT_BATCH_SIZE,
    passthrough: bool = True,
    reserved: tuple[str, ...] = (),
    resume: bool = False,
    warm_up: "Callable[[], None] | None" = None,
    expanded: bool = False,
    reads: "Sequence[str | Path]" = (),
    shards: bool = False,
) -> Job:
    """Check the options and the output, choose the executor, open the inputs. The output
    defaults to the input's stem with the job's suffix, beside it (stdout for stdin or a
    pipe). Raises `InputError` (one line) before any work is done; an output given as a
    `Target` is the job's to check (a folder, say). `passthrough`: whether the inputs' other
    columns travel along (solve: yes; validate: no use for them), renamed when they would take
    one of the `reserved` names (columns the job adds). `resume`: go on from the checkpoint
    of a stopped run (a resumable job writing a file, from inputs that can be read again).
    `warm_up`: what each worker runs as it starts, in place of loading `kernels`;
    `expanded`: `inputs` are names `io.inputs.expand` gave already (globs not expanded
    again); `reads`: files a job without inputs reads itself (never written over);
    `shards`: the job finds what needs the whole corpus on the workers, hash-partitioned,
    when it runs on Dask (`Job.shards`)."""
    started = time.perf_counter()
    command = spec.name
    unknown = sorted(options.keys() - JobOptions.__annotations__.keys())
    if unknown:
        raise TypeError(f"{command}: unexpected options {', '.join(unknown)}")
    if resume and not spec.resumable:
        raise TypeError(f"{command}: a run cannot be resumed")
    reading = ReadOptions(**{name: options.get(name) for name in READING})
    batch_size = options.get("batch_size") or batch_size
    if batch_size < 1:
        raise InputError(f"batch_size must be at least 1, not {batch_size}")
    if inputs is None:
        names: list[str] = []
    else:
        names = list(inputs) if expanded else expand(inputs)  # type: ignore[arg-type]
    target = _target(spec, names, output, options, [*names, *map(str, reads)])
    if resume and (target is None or target.path is None):
        raise InputError("--resume needs an output file (a run to stdout keeps nothing)")
    kind = options.get("executor") or "local"
    scheduler = options.get("scheduler")
    if warm_up is None and kernels:
        warm_up = partial(warm, kernels)
    pool = make_executor(kind, options.get("workers"), scheduler, warm_up)
    opened = None
    if names:
        opened = open_names(
            names,
            batch_size=batch_size,
            passthrough=passthrough,
            reserved=reserved,
            **reading.dataset_options(),
        )
        for ds in opened.datasets:  # a header guessed from content: no row goes unsaid
            if ds.header_note and options.get("progress", True):
                print(f"note: {printable(ds.header_note)}", file=sys.stderr)
            if ds.num_rows == 0 and options.get("progress", True):
                warn_empty(ds.location)
        streams = [n for n, ds in zip(opened.names, opened.datasets, strict=True) if ds.stream]
        if resume and streams:
            stream = "stdin" if streams[0] == STDIN else streams[0]
            raise InputError(f"--resume cannot continue from {stream}: it can be read once only")
    return Job(
        spec,
        opened,
        target,
        pool,
        kind,
        scheduler,
        reading,
        batch_size,
        options.get("progress", True),
        kernels,
        resume,
        started=started,
        shards=shards,
    )


def input_stem(path: str | Path) -> str:
    """An input's name without its folder and format suffixes (`data/x.csv.gz` -> `x`)."""
    return default_output(path, "").name or Path(path).name


def _target(
    spec: JobSpec,
    names: list[str],
    output: str | Path | Target | None,
    options: JobOptions,
    reads: list[str],
) -> Target | None:
    """The output, checked: given, or beside the only input (stdout for stdin or a pipe; a
    folder of arrays named as the file without its extension, a split in HRM's layout as the
    input without its suffixes: `train.csv` -> `train/`); None for a job without inputs that
    was given none."""
    fmt = options.get("format")
    arrays = fmt in ("npy", "hrm") and fmt in spec.formats and spec.sink != "folder"
    folder = options.get("dataset", False)  # the API's `-o DIR/` (a Path drops the `/`)
    if folder and (spec.sink not in ("checkpoint", "parts") or arrays):
        raise InputError(f"{spec.name} writes no Parquet dataset folder (dataset=True)")
    if output is None:
        if not names:
            return None
        if len(names) == 1 and (names[0] == STDIN or is_stream(names[0])):  # read as - is
            output = STDOUT
        elif len(names) > 1:
            raise InputError(f"{spec.name}: several inputs go into one output: give -o")
        else:
            suffix = spec.suffix
            if arrays or folder:  # a folder: `x.augmented/` (npy, a dataset), `x/` (hrm)
                suffix = spec.suffix.rsplit(".", 1)[0] if fmt != "hrm" else ""
            output = default_output(names[0], suffix)
    force = options.get("force", False)
    if folder and isinstance(output, str | Path) and str(output) != STDOUT:
        output = os.path.join(output, "")  # the folder, as `-o DIR/` names it
    if (folder or wants_dataset(output)) and spec.sink in ("checkpoint", "parts") and not arrays:
        folder = check_dataset_folder(output, spec.name, fmt=fmt, inputs=reads, force=force)
        return Target(folder, "parquet", dataset=True)
    if spec.sink == "folder":  # checked by the job (a split's folder)
        return Target(Path(output), fmt or spec.formats[0])
    if arrays:
        # a folder of arrays (io.array_folders, io.hrm_folders), checked as a folder is
        assert fmt is not None
        return Target(check_array_folder(output, inputs=reads, force=force), fmt)
    files = tuple(f for f in spec.formats if f not in ("npy", "hrm"))
    return check_output(
        output, inputs=reads, force=force, format=options.get("format"), formats=files
    )


def warn_empty(name: str) -> None:
    """An input of no rows (an empty file, a header alone) is no error, but nobody means to
    run on one: said on stderr, as `warning: NAME: 0 rows`."""
    print(f"warning: {printable(name)}: 0 rows", file=sys.stderr)


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

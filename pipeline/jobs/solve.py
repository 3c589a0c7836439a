"""The bulk solve job: input files in, one file of results out, on all cores.

    summary = solve_file("puzzles.csv")        # -> puzzles.solved.parquet beside the input

Reads the inputs in bounded batches (`io.inputs`), and the executor's workers solve each batch
and encode its results in the output's format (`parts`); the parent keeps each finished part,
in input order, in a checkpoint (`checkpoint`), and at the end joins the parts into the output,
atomically, with the run's metadata. An interrupted run is continued with `resume=True`; the
result then equals an uninterrupted run's, timing columns aside.
"""

import json
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import pyarrow as pa

from pipeline.errors import ExecutorLost, InputError, RunFailed, RunInterrupted
from pipeline.io.inputs import STDIN
from pipeline.jobs.batch import SolveOptions, solve_record_batch
from pipeline.jobs.checkpoint import Checkpoint, Progress, StreamSink
from pipeline.jobs.executors import warm_kernels
from pipeline.jobs.parts import Part, encode, verdict_counts
from pipeline.jobs.results import result_schema
from pipeline.jobs.setup import Job, JobOptions, sigterm_as_interrupt, start_job
from pipeline.solver.codes import VERDICT_NAMES
from pipeline.solver.registry import get_strategy

SOLVED_SUFFIX = ".solved.parquet"
SOURCE_TYPE = pa.dictionary(pa.int32(), pa.string())  # the `source` column of several inputs


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


def _identity(job: Job, options: SolveOptions) -> dict[str, Any]:
    """Everything that makes a checkpoint belong to a run: the inputs as they are now, the
    options."""
    inputs = job.inputs.identity()
    return {
        **(inputs[0] if len(inputs) == 1 else {"inputs": inputs}),
        "strategy": options.strategy,
        "solutions": options.solutions,
        "max_nodes": options.max_nodes,
        "added columns": [
            options.canonical,
            options.rate,
            options.rate_samples,
            options.rate_seed,
        ],  # fmt: skip
        "reading options": job.reading.as_dict(),
    }


def solve_part(
    task: tuple[int, int, str | None, pa.RecordBatch], options: SolveOptions, fmt: str
) -> Part:
    """The unit of work: solve one batch (`task`: its place in the output, its input's index
    and name when there are several inputs, the batch) and encode its results in `fmt`."""
    start, source, name, batch = task
    table = solve_record_batch(batch, options)
    if name is not None:
        names = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(table.num_rows, np.int32)), pa.array([name], pa.string())
        )
        table = table.add_column(0, pa.field("source", SOURCE_TYPE, nullable=False), names)
    first_row = batch.column(0)[0].as_py() if batch.num_rows else 0
    return Part(start, table.num_rows, source, first_row, encode(table, fmt, header=start == 0),
                verdict_counts(table, VERDICT_NAMES))  # fmt: skip


def _empty(job: Job, search: SolveOptions) -> pa.Table:
    """The output's table of no rows: its schema, with `source` first for several inputs."""
    id_type = job.inputs.schema.field("id").type if job.inputs.has_ids else None
    extra = pa.schema([*search.added_schema(), *job.inputs.first.extra_schema])
    schema = result_schema(id_type, extra)
    if job.inputs.several:
        schema = schema.insert(0, pa.field("source", SOURCE_TYPE, nullable=False))
    return schema.empty_table()


def _tasks(job: Job, source: int, row: int, start: int) -> Iterator[tuple]:
    """The work, batch by batch, from input `source`'s `row` on; `start`: the first batch's
    place in the output."""
    for index, batch in job.inputs.batches(source, row):
        yield start, index, job.inputs.names[index] if job.inputs.several else None, batch
        start += batch.num_rows


def solve_file(
    inputs: str | Path | list[str | Path],
    output: str | Path | None = None,
    *,
    strategy: str = "fast",
    solutions: int = 2,
    max_nodes: int | None = None,
    resume: bool = False,
    canonical: bool = False,
    rate: bool = False,
    rate_samples: int = 16,
    **options: Unpack[JobOptions],
) -> RunSummary:
    """Solve every row of `inputs` (a file, `-` for stdin, several files or quoted globs) into
    `output` (default `<stem>.solved.parquet` beside a single input; `-`: stdout). The output's
    format follows its suffix (.parquet, .csv, .jsonl) or `format`.

    `canonical` adds each puzzle's minlex form; `rate` its `difficulty` (mean guesses over
    `rate_samples` random symmetries) and `grade` (the hardest technique a person needs).
    `options`: how to read the inputs and run the job (`JobOptions`: columns, separator,
    header, formats, force, batch size, workers, progress, executor). Raises `InputError` (one
    line, for the CLI) for a bad file, column, option or output, `RunFailed` when workers or
    the cluster go away, and `RunInterrupted` after Ctrl-C or SIGTERM; both keep the finished
    batches for `resume=True`.
    """
    try:
        search = SolveOptions(strategy, solutions, max_nodes, canonical, rate, rate_samples)
    except ValueError as e:
        raise InputError(str(e)) from None
    warm = partial(warm_kernels, (search.strategy,))
    job = start_job("solve", inputs, output, SOLVED_SUFFIX, options, warm=warm,
                    reserved=tuple(search.added_schema().names))  # fmt: skip
    if resume and job.output is None:
        raise InputError("--resume needs an output file (a run to stdout keeps nothing)")
    streams = [n for n, ds in zip(job.inputs.names, job.inputs.datasets, strict=True) if ds.stream]
    if resume and streams:
        stream = "stdin" if streams[0] == STDIN else streams[0]
        raise InputError(f"--resume cannot continue from {stream}: it can be read once only")
    with job.locked():
        return _run(job, search, resume)


def _run(job: Job, search: SolveOptions, resume: bool) -> RunSummary:
    """The solve job, its output locked."""
    pool, empty = job.executor, _empty(job, search)
    with sigterm_as_interrupt():
        try:
            # before a checkpoint: a cluster that cannot be reached leaves nothing behind
            job.start_executor(get_strategy(search.strategy).kernels())
        except KeyboardInterrupt:
            pool.terminate()
            raise RunInterrupted() from None
    sink: Checkpoint | StreamSink
    if job.output is None:
        sink, progress = StreamSink(job.target), Progress()
    else:
        sink = Checkpoint(job.output, job.target.format)
        identity = _identity(job, search)
        if resume:
            progress = sink.resume(identity, empty.column_names)
        else:
            if sink.exists():
                print(f"note: starting over; discarding the checkpoint at {sink.folder}",
                      file=sys.stderr)  # fmt: skip
            sink.start(identity)
            progress = Progress()
    counts = Counter(progress.counts)
    done = read = progress.rows

    def counted() -> Iterator[tuple]:
        nonlocal read
        for task in _tasks(job, progress.source, progress.next_row, done):
            read += task[3].num_rows
            yield task

    stream = counted()
    results = pool.map_ordered(solve_part, stream, search, job.target.format)
    bar = None
    try:
        with sigterm_as_interrupt():
            bar = job.progress_bar(initial=done)
            for part in results:
                sink.add(part)
                counts.update(part.counts)
                done += part.rows
                job.advance(bar, part.rows)
            pool.close()
            job.finish_bar(bar)
            wall = job.wall()
            rate = (done - progress.rows) / wall if wall > 0 else None
            renamed = {n: ds.renamed for n, ds in zip(job.inputs.names, job.inputs.datasets,
                                                      strict=True) if ds.renamed}  # fmt: skip
            metadata = job.metadata(done, asdict(search), rate, resumed_rows=progress.rows,
                                    renamed_columns=renamed or None)  # fmt: skip
            # An interrupt while joining keeps the (complete) checkpoint: --resume joins again.
            sink.commit(read, empty, metadata)
    except ExecutorLost as e:
        pool.terminate()
        kept = sink.rows_kept() if isinstance(sink, Checkpoint) else None
        raise RunFailed(str(e), kept, getattr(sink, "folder", None)) from None
    except InputError:  # the input failed part-way (a truncated .gz, say)
        pool.terminate()
        if isinstance(sink, Checkpoint) and sink.rows_kept() == progress.rows == 0:
            sink.remove()  # nothing worth resuming: leave no folder behind
        raise
    except KeyboardInterrupt:
        pool.terminate()
        if not isinstance(sink, Checkpoint):
            raise RunInterrupted() from None
        # count what is on disk: the interrupt may have come between a part and `done +=`
        raise RunInterrupted(sink.rows_kept(), sink.folder) from None
    finally:
        if bar is not None:
            bar.close()
        # close the readers now (pyarrow's read-ahead threads), not at interpreter exit
        results.close()
        stream.close()
    if isinstance(sink, Checkpoint):
        sink.remove()
    return RunSummary(
        input=", ".join(job.inputs.names),
        output=str(job.target),
        rows=done,
        verdicts={v: counts.get(v, 0) for v in VERDICT_NAMES},
        wall_s=wall,
        rows_per_s=rate or 0.0,
        workers=pool.workers,
        strategy=search.strategy,
        resumed_rows=progress.rows,
        metadata=metadata,
    )

"""The bulk solve job: input files in, one file of results out, on all cores.

    summary = solve_file("puzzles.csv")        # -> puzzles.solved.parquet beside the input

Reads the inputs in bounded batches (`io.inputs`), and the executor's workers solve each batch
and encode its results in the output's format (`parts`); the parent keeps each finished part,
in input order, in a checkpoint (`checkpoint`), and at the end joins the parts into the output,
atomically, with the run's metadata. An interrupted run is continued with `resume=True`; the
result then equals an uninterrupted run's, timing columns aside.
"""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.inputs import STDIN
from pipeline.io.runinfo import package_version
from pipeline.io.text_columns import check_text_columns
from pipeline.io.writers import encode
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels.codes import OUTSIDE_ONLY, VERDICT_NAMES
from pipeline.plugins.open import open_solver, solver_metadata
from pipeline.results.schema import result_schema
from pipeline.run.checkpoint import Checkpoint, StreamSink, open_sink
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, verdict_counts

SOLVED_SUFFIX = ".solved.parquet"
SOURCE_TYPE = pa.dictionary(pa.int32(), pa.string())  # the `source` column of several inputs


@dataclass
class RunSummary:
    """What a run did; `to_json()`: the same as one JSON object."""

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
    options, the tool's version (another version's parts may have another schema)."""
    inputs = job.inputs.identity()
    return {
        **(inputs[0] if len(inputs) == 1 else {"inputs": inputs}),
        "version": package_version(),
        "strategy": options.strategy,
        **({"solver": options.solver} if options.solver else {}),
        "solutions": options.solutions,
        "max_nodes": options.max_nodes,
        "added columns": [
            options.canonical,
            options.rate,
            options.rate_samples,
            options.rate_seed,
        ],
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
    return Part(
        start,
        table.num_rows,
        source,
        first_row,
        encode(table, fmt, header=start == 0),
        verdict_counts(table, VERDICT_NAMES),
    )


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
    solver: str | None = None,
    **options: Unpack[JobOptions],
) -> RunSummary:
    """Solve every row of `inputs` (a file, `-` for stdin, several files or quoted globs) into
    `output` (default `<stem>.solved.parquet` beside a single input; `-`: stdout). The output's
    format follows its suffix (.parquet, .csv, .jsonl) or `format`.

    `solver`: a `--solver` spec (`pipeline.plugins`) in place of `strategy`: a built-in
    strategy's name, `c:LIBRARY:SYMBOL`, `python:MODULE:FUNCTION` or `cmd:COMMAND`, whose
    answers are checked (verdicts `wrong_answer`, `solver_error`; a `kernel_agrees` column);
    one that holds Python's lock, or is not thread-safe (a C library: tdoku keeps its state in
    globals), runs on worker processes unless `executor` says otherwise.
    `canonical` adds each puzzle's minlex form; `rate` its `difficulty` (mean guesses over
    `rate_samples` random symmetries) and `grade` (the hardest technique a person needs).
    `options`: how to read the inputs and run the job (`JobOptions`: columns, separator,
    header, formats, force, batch size, workers, progress, executor). Raises `InputError` (its
    message one line) for a bad file, column, option or output, `RunFailed` when workers or
    the cluster go away, and `RunInterrupted` after Ctrl-C or SIGTERM; both keep the finished
    batches for `resume=True`.
    """
    try:
        search = SolveOptions(
            strategy, solutions, max_nodes, canonical, rate, rate_samples, solver=solver
        )
    except ValueError as e:
        raise InputError(str(e)) from None
    about_solver: dict[str, Any] = {}
    if search.solver is not None:
        adapter = open_solver(search.solver)  # InputError (one line) before any work
        about_solver = solver_metadata(adapter)
        alone = adapter.holds_gil or not getattr(adapter, "thread_safe", True)
        if alone and not options.get("executor"):  # threads would take turns
            options = {**options, "executor": "processes"}  # type: ignore[typeddict-item]
    job = start_job(
        "solve",
        inputs,
        output,
        SOLVED_SUFFIX,
        options,
        kernels=search.kernels(),
        reserved=tuple(search.added_schema().names),
    )
    if resume and job.output is None:
        raise InputError("--resume needs an output file (a run to stdout keeps nothing)")
    streams = [n for n, ds in zip(job.inputs.names, job.inputs.datasets, strict=True) if ds.stream]
    if resume and streams:
        stream = "stdin" if streams[0] == STDIN else streams[0]
        raise InputError(f"--resume cannot continue from {stream}: it can be read once only")
    with job.locked():
        return _run(job, search, resume, about_solver)


def _run(job: Job, search: SolveOptions, resume: bool, about_solver: dict[str, Any]) -> RunSummary:
    """The solve job, its output locked."""
    empty = _empty(job, search)
    # before any work: a column text cannot hold; a folder of the user's at <output>.partial
    check_text_columns(empty.schema, job.target.format)
    if job.output is not None:
        Checkpoint(job.output, job.target.format).check_ours()
    sink: Checkpoint | StreamSink | None = None

    def kept() -> tuple[int | None, Path | None]:
        """What a stopped run keeps: the rows on disk (not a count kept in memory: a stop may
        come between a part written and counted), and where."""
        if isinstance(sink, Checkpoint):
            return sink.rows_kept(), sink.folder
        return None, None

    try:
        # the workers start first: a cluster that cannot be reached leaves nothing behind
        with running(job, kept=kept) as run:
            sink, progress = open_sink(
                job.output, job.target, partial(_identity, job, search), resume, empty.column_names
            )
            run.show_progress(initial=progress.rows)
            counts = Counter(progress.counts)
            done = read = progress.rows

            def counted() -> Iterator[tuple]:
                nonlocal read
                for task in _tasks(job, progress.source, progress.next_row, done):
                    read += task[3].num_rows
                    yield task

            for part in run.map(solve_part, counted(), search, job.target.format):
                sink.add(part)
                counts.update(part.counts)
                done += part.rows
            run.finish()
            wall = job.wall()
            rate = (done - progress.rows) / wall if wall > 0 else None
            renamed = {
                n: ds.renamed
                for n, ds in zip(job.inputs.names, job.inputs.datasets, strict=True)
                if ds.renamed
            }
            said = {"solver": about_solver} if about_solver else {}
            metadata = job.metadata(
                done,
                asdict(search),
                rate,
                resumed_rows=progress.rows,
                renamed_columns=renamed or None,
                **said,
            )
            # An interrupt while joining keeps the (complete) checkpoint: --resume joins again.
            sink.commit(read, empty, metadata)
    except InputError:  # the input failed part-way (a truncated .gz, say)
        if isinstance(sink, Checkpoint) and sink.rows_kept() == progress.rows == 0:
            sink.remove()  # nothing worth resuming: leave no folder behind
        raise
    if isinstance(sink, Checkpoint):
        sink.remove()
    return RunSummary(
        input=", ".join(job.inputs.names),
        output=str(job.target),
        rows=done,
        verdicts={
            v: counts.get(v, 0) for v in VERDICT_NAMES if search.solver or v not in OUTSIDE_ONLY
        },
        wall_s=wall,
        rows_per_s=rate or 0.0,
        workers=job.executor.workers,
        strategy=search.name,
        resumed_rows=progress.rows,
        metadata=metadata,
    )

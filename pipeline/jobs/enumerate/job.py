"""The enumerate job: every solution of each puzzle of the inputs, one row each, into one file.

    summary = enumerate_file("family.txt", limit=1_000_000)   # -> family.solutions.parquet

How it fits the shared run loop: the inputs, the output's rules (refused when it is an input
or not ours without `force`, its lock), the run loop (`run.loop`: signals, the bar, how a run
ends), the parts and their atomic join are the solve job's (`run.job`, `run.checkpoint`,
`io.writers`). One puzzle's solutions come from one sequential search, as long as it may be;
the puzzles are spread over `workers` threads (`spread`: units of a few puzzles, each
worker's tables handed back in input order, a bounded number of rows and units in flight),
or with one worker searched in the calling thread (`solutions.solution_tables`). Either way
the rows are made into tables where they are found, the calling thread cuts and joins them
into tables of `batch_size` rows (`solutions.part_tables`, no copy), and the executor's
worker threads encode those in the output's format meanwhile (Parquet encoding releases the
GIL), a bounded number in flight, so memory stays bounded whatever the count; the output is
the same whatever `workers`. The parts wait in `<output>.partial/` and are joined at the
end, so the output appears whole or not at all; an interrupted run keeps nothing (no
`--resume`: a rerun starts again).
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.jobs import JOBS
from pipeline.jobs.enumerate.solutions import (
    Tally,
    kernel_chunk,
    part_tables,
    puzzle_segments,
    segment_tables,
    solution_tables,
    solutions_schema,
)
from pipeline.jobs.enumerate.spread import spread_tables
from pipeline.kernels.registry import MAX_NODES
from pipeline.results.json_numbers import summary_json
from pipeline.run.job import JobOptions, start_job
from pipeline.run.loop import Run, running
from pipeline.run.parts import Part, Task, part_of

JOB = JOBS["enumerate"]
SOLUTIONS_SUFFIX = JOB.suffix
DEFAULT_PART_ROWS = 50_000
# what enumerate takes of the file jobs' options: worker threads, not processes or Dask
OPTIONS = (
    "column",
    "id_column",
    "separator",
    "has_header",
    "input_format",
    "format",
    "force",
    "dataset",
    "batch_size",
    "progress",
    "workers",
)


@dataclass
class EnumerateSummary:
    """What an enumerate run did; `to_json()`: the same as one JSON object. `puzzles`:
    input rows per outcome (`solutions.OUTCOMES`)."""

    input: str
    output: str
    rows: int
    solutions: int
    limit: int
    max_nodes: int | None
    puzzles: dict[str, int]
    wall_s: float
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        return summary_json(self)

    def describe(self) -> str:
        counts = ", ".join(
            f"{n:,} {what.replace('_', ' ')}" for what, n in self.puzzles.items() if n
        )
        return (
            f"{self.solutions:,} solutions of {self.rows:,} rows (limit {self.limit:,} a "
            f"puzzle) in {self.wall_s:.2f} s: {counts or 'no rows'}\n"
            f"wrote {self.output}"
        )


@dataclass(frozen=True)
class _Encoded:
    """A part, for the run loop, which moves the progress bar by `rows`: input rows, which
    `batches()` counts as it reads them, so none here."""

    part: Part
    rows: int = 0


def _placed(tables: Iterator[pa.Table]) -> Iterator[Task]:
    """Each table as a task: its place in the output (its first row's), the table."""
    start = 0
    for table in tables:
        yield Task(start, 0, None, start, table)
        start += table.num_rows


def _encode(task: Task, fmt: str) -> _Encoded:
    """The unit of work of the executor's worker: one table of solutions encoded in the
    output's format."""
    return _Encoded(part_of(task, task.batch.combine_chunks(), fmt))


def _tables(
    run: Run, limit: int, max_nodes: int | None, schema: pa.Schema, tally: Tally
) -> Iterator[pa.Table]:
    """The solution tables of the job's inputs, in order, searched on its workers (in this
    thread with one); the bar moves on by the input rows searched."""
    job = run.job
    assert job.inputs is not None
    inputs = job.inputs
    names = inputs.names if inputs.several else None
    if job.executor.workers == 1:

        def batches() -> Iterator[tuple[int, pa.RecordBatch]]:
            for source, batch in inputs.batches():
                yield source, batch
                run.advance(batch.num_rows)

        return solution_tables(batches(), limit, job.batch_size, schema, tally, names, max_nodes)
    chunk = kernel_chunk(job.batch_size)

    def search(source: int, unit: pa.RecordBatch, counts: Tally) -> Iterator[pa.Table]:
        segments = puzzle_segments(source, unit, limit, chunk, counts, max_nodes)
        return segment_tables(segments, chunk, schema, names)

    tables = spread_tables(
        inputs.batches(), search, job.executor.workers, chunk, tally, run.advance
    )
    return part_tables(tables, job.batch_size)


def enumerate_file(
    inputs: str | Path | list[str | Path],
    output: str | Path | None = None,
    *,
    limit: int,
    max_nodes: int | None = None,
    **options: Unpack[JobOptions],
) -> EnumerateSummary:
    """Write every solution of each puzzle of `inputs` (81-character or 729-character
    pencilmark puzzles), up to `limit` a puzzle, one row each (`row`, `id` when the input has
    one, `k`, `solution`) into `output` (default `<stem>.solutions.parquet` beside a single
    input; `-`: stdout; its format from its suffix or `format`: parquet, csv, jsonl;
    `dataset=True`: a Parquet dataset folder, as for `solve_file`). Rows that
    are malformed, whose givens clash or that have no solution give no rows and are counted in
    the summary. `max_nodes`: each puzzle's node budget (None: none; a puzzle whose search
    spends it keeps the rows found until then, counted as `limit`). `options`: those of
    `JobOptions` that read the inputs and write the output, `batch_size` (rows a part holds:
    bounds memory) and `workers` (threads; default: the CPUs this process may use; the output
    is the same whatever their number). Raises `InputError` (one line) for a bad file,
    column, option or output, and `RunInterrupted` after Ctrl-C or
    SIGTERM."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"limit must be a whole number of at least 1, not {limit!r}")
    if max_nodes is not None and (
        isinstance(max_nodes, bool)
        or not isinstance(max_nodes, int)
        or not 1 <= max_nodes <= MAX_NODES
    ):
        raise InputError(f"max_nodes must be between 1 and {MAX_NODES:,}, not {max_nodes!r}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"enumerate: unexpected options {', '.join(unknown)}")
    # the kernels load (or compile, saying so) as the job starts, before any clock
    job = start_job(
        JOB,
        inputs,
        output,
        {**options, "executor": "local"},
        kernels=("fast", "clash", "enumerate"),
        batch_size=DEFAULT_PART_ROWS,
        passthrough=False,
    )
    assert job.inputs is not None
    id_type = job.inputs.schema.field("id").type if job.inputs.has_ids else None
    schema = solutions_schema(id_type, sources=job.inputs.several)
    asked = {"limit": limit, "max_nodes": max_nodes}
    tally = Tally()
    with running(job, schema, identity=lambda: job.identity(asked)) as run:
        tables = _tables(run, limit, max_nodes, schema, tally)
        for encoded in run.map(_encode, _placed(tables), job.format):
            run.write(encoded.part)
        run.finish()
        metadata = job.metadata(
            tally.rows, asked, None, solutions=tally.solutions, puzzles=tally.by_outcome()
        )
        run.commit(metadata)
    return EnumerateSummary(
        input=", ".join(job.inputs.names),
        output=str(job.target),
        rows=tally.rows,
        solutions=tally.solutions,
        limit=limit,
        max_nodes=max_nodes,
        puzzles=tally.by_outcome(),
        wall_s=job.wall(),
        metadata=metadata,
    )

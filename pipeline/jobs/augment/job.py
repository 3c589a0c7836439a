"""The augment job: every puzzle of a file, K random symmetries of it (and of its solution), on
all cores, into Parquet or a folder of arrays.

    summary = augment_file("train.csv", "train.augmented.parquet", copies=8, seed=1)
    summary.copies, summary.left_out

Reads the input as `solve` does (the same job set-up, options and output checks). The workers
augment each batch (`batch`): for Parquet they encode its rows, and the parent joins the
parts in order, by their footers, into a temporary file beside the output (`sink`: each byte
written once, no checkpoint), renamed into place at the end with the run's metadata; for a
folder of arrays (`format="npy"`, `io.arrays`) they hand back the columns as arrays, and the
parent appends them to the folder's files. Memory stays bounded by
the batches in flight, whatever the input's size. Copies depend only on the seed and each
row's place in the input, so any worker count and batch size give the same output. A run
that stops keeps nothing (augmenting again is cheap): there is no `resume`.
"""

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.array_folders import NpyFolder
from pipeline.io.output import default_output
from pipeline.io.writers import encode
from pipeline.jobs.augment.batch import (
    LEFT_OUT,
    AugmentOptions,
    AugmentTally,
    augment_record_batch,
    output_schema,
)
from pipeline.jobs.augment.sink import FileSink
from pipeline.run.checkpoint import StreamSink
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part

AUGMENTED_SUFFIX = ".augmented.parquet"
FOLDER_SUFFIX = ".augmented"  # a folder of arrays beside the input
FORMATS = ("parquet", "npy")
# Input rows per batch, by default: about OUTPUT_BATCH rows out (what bounds memory is the
# copies: 50,000 input rows at K = 8 held 400,000 rows, 650 MiB for the process tree)
OUTPUT_BATCH = 65_536
MIN_BATCH = 16  # K in the thousands: a few rows a batch (each row K * 170 bytes)
OWN_COLUMNS = ("group", "copy", "relabel", "row_order", "column_order", "transposed")


@dataclass
class AugmentSummary:
    """What an augment run did: rows read, augmented and left out (by reason, with the first
    input rows of each), copies written, rows short of distinct copies, where, how fast."""

    input: str
    output: str
    format: str
    copies_asked: int
    seed: int
    rows: int
    augmented: int
    copies: int
    solved: int
    short: int
    left_out: dict[str, int]
    examples: dict[str, list[int]]
    short_examples: list[int]
    skipped_columns: list[str]
    wall_s: float
    rows_per_s: float
    workers: int
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def lines(self) -> list[str]:
        """The summary for people (stderr)."""
        out = [
            f"{self.rows:,} rows -> {self.copies:,} rows ({self.augmented:,} puzzles, "
            f"{self.copies_asked} copies each, seed {self.seed}) in {self.wall_s:.2f} s "
            f"({self.rows_per_s:,.0f} rows written/s, {self.workers} workers)"
        ]
        if self.solved:
            out.append(f"solved {self.solved:,} puzzles the input gave no solution for")
        for reason, count in self.left_out.items():
            rows = ", ".join(map(str, self.examples.get(reason, [])))
            more = ", ..." if count > len(self.examples.get(reason, [])) else ""
            out.append(f"left out {count:,} {reason} ({LEFT_OUT[reason]}): rows {rows}{more}")
        if self.short:
            rows = ", ".join(map(str, self.short_examples))
            more = ", ..." if self.short > len(self.short_examples) else ""
            out.append(
                f"{self.short:,} puzzles have fewer distinct symmetric copies than "
                f"asked (a symmetric puzzle): rows {rows}{more}"
            )
        if self.skipped_columns:
            out.append(f"not in the arrays (text): {', '.join(self.skipped_columns)}")
        out.append(f"wrote {self.output}")
        return out

    def describe(self) -> str:
        return "\n".join(self.lines())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("metadata")
        return data

    def to_json(self) -> str:
        return json.dumps(self.as_dict())


@dataclass(frozen=True)
class AugmentedPart:
    """What a worker sends back: a part (Parquet) or arrays (npy), and the batch's tally."""

    rows: int
    tally: AugmentTally
    part: Part | None = None
    arrays: dict[str, Any] | None = None


def augment_part(
    task: tuple[int, pa.RecordBatch], options: AugmentOptions, fmt: str, schema: pa.Schema
) -> AugmentedPart:
    """The unit of work: augment one batch (`task`: the position of its first output row is
    not known yet, so `0`; the batch) and encode its rows in `fmt`."""
    _, batch = task
    augmented = augment_record_batch(batch, options)
    if fmt == "npy":
        return AugmentedPart(augmented.rows, augmented.tally, arrays=augmented.arrays(schema))
    table = augmented.table().cast(schema)
    data = encode(table, fmt)
    return AugmentedPart(table.num_rows, augmented.tally, part=Part(0, table.num_rows, 0, 0, data))


def augment_file(
    input_path: str | Path,
    output: str | Path | None = None,
    *,
    copies: int = 8,
    seed: int = 0,
    keep_original: bool = False,
    **options: Unpack[JobOptions],
) -> AugmentSummary:
    """Write `copies` random symmetries of every puzzle of `input_path` (and of its solution)
    to `output` (default `<stem>.augmented.parquet` beside the input, or the folder
    `<stem>.augmented` with `format="npy"`), with the original first when `keep_original`.

    Output columns (`batch.COLUMNS`): group (the input row), copy, [id], puzzle,
    solution, the symmetry applied (relabel, row_order, column_order, transposed: invertible,
    `pipeline.restore_originals`), then the input's other columns. A row without a solution is
    solved first; rows that are not puzzles with one solution are left out and counted by
    reason (the summary). `options`: how to read the input and run the job, as for
    `solve_file` (`JobOptions`; `format`: parquet or npy).

    Raises `InputError` (its message one line) for a bad file, column, option or output,
    `RunFailed` when the workers or the cluster go away, and `RunInterrupted` after Ctrl-C or
    SIGTERM (nothing is kept).
    """
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise InputError(f"copies must be a whole number of at least 1, not {copies!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed must be a whole number of at least 0, not {seed!r}")
    fmt = options.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"augment writes parquet or npy, not {fmt!r}")
    if output is None and fmt == "npy" and str(input_path) != "-":
        output = default_output(input_path, FOLDER_SUFFIX)
    if fmt is None and output is not None and str(output) == "-":
        options["format"] = "parquet"  # stdout: Parquet too, not the file jobs' CSV
    augmenting = AugmentOptions(copies, seed, keep_original)
    batch_size = max(MIN_BATCH, OUTPUT_BATCH // (copies + keep_original))
    job = start_job(
        "augment",
        input_path,
        output,
        AUGMENTED_SUFFIX,
        options,
        kernels=augmenting.kernels(),
        formats=FORMATS,
        batch_size=batch_size,
        reserved=OWN_COLUMNS,
    )
    if job.inputs.several:
        raise InputError("augment takes one input at a time")
    with job.locked():
        return _run(job, augmenting)


def _tasks(job: Job) -> Iterator[tuple[int, pa.RecordBatch]]:
    for batch in job.inputs.first.batches():
        yield 0, batch


def _run(job: Job, augmenting: AugmentOptions) -> AugmentSummary:
    """The augment job, its output locked."""
    ds = job.inputs.first
    schema = output_schema(ds.schema)
    fmt = job.target.format
    tally, done = AugmentTally(), 0
    folder: NpyFolder | None = None
    skipped: list[str] = []
    sink: FileSink | StreamSink | None = None
    if fmt == "npy":
        assert job.output is not None
        folder = NpyFolder(job.output, schema)
        skipped = folder.skipped
    try:
        with running(job) as run:
            if folder is not None:
                folder.__enter__()
            elif job.output is not None:
                sink = FileSink(job.output)
            else:
                sink = StreamSink(job.target)
            for result in run.map(augment_part, _tasks(job), augmenting, fmt, schema):
                if folder is not None:
                    folder.append(result.arrays)
                else:
                    assert sink is not None and result.part is not None
                    p = result.part
                    sink.add(Part(done, p.rows, 0, done, p.data))
                tally.add(result.tally)
                done += result.rows
            run.finish()
            wall = job.wall()
            rate = done / wall if wall > 0 else 0.0
            options: dict[str, Any] = {
                "copies": augmenting.copies,
                "seed": augmenting.seed,
                "keep_original": augmenting.keep_original,
                "attempts": augmenting.attempts,
            }
            metadata = job.metadata(tally.rows, options, rate, augment=asdict(tally))
            if folder is not None:
                folder.commit(metadata)
            else:
                assert sink is not None
                sink.commit(done, schema.empty_table(), metadata)
    finally:
        if folder is not None:
            folder.__exit__(None, None, None)
        if isinstance(sink, FileSink):
            sink.close()
    summary = AugmentSummary(
        input=job.inputs.names[0],
        output=str(job.target),
        format=fmt,
        copies_asked=augmenting.copies,
        seed=augmenting.seed,
        rows=tally.rows,
        augmented=tally.augmented,
        copies=tally.copies,
        solved=tally.solved,
        short=tally.short,
        left_out=tally.left_out,
        examples=tally.examples,
        short_examples=tally.short_examples,
        skipped_columns=skipped,
        wall_s=wall,
        rows_per_s=rate,
        workers=job.executor.workers,
    )
    summary.metadata = metadata
    return summary

"""The augment job: every puzzle of a file, K random symmetries of it (and of its solution), on
all cores, into Parquet or a folder of arrays.

    summary = augment_file("train.csv", "train.augmented.parquet", copies=8, seed=1)
    summary.copies, summary.left_out

Reads the input as `solve` does (the same job set-up, options and output checks). The workers
augment each batch (`batch`): for Parquet they encode its rows, and the parent joins the
parts in order, by their footers, into a temporary file beside the output (the run loop's
`parts` sink, `io.writers.PartWriter`: each byte written once, no checkpoint), renamed into
place at the end with the run's metadata; for a folder of arrays (`format="npy"`,
`io.arrays`) they hand back the columns as arrays, and the parent appends them to the
folder's files; for HRM's layout (`format="hrm"`, `io.hrm_folders`) they hand back each
row's group (the puzzle itself, then its copies) as HRM's tokens, and the parent appends them
to the split's folder. Memory stays bounded by the batches in flight, whatever the input's
size. Copies depend only on the seed and each
row's place in the input, so any worker count and batch size give the same output. A run
that stops keeps nothing (augmenting again is cheap): there is no `resume`.

On Dask, to a Parquet file (`run.sliced`), the workers read their own slices of the input and
keep their parts in a checkpoint beside the output, at their input places; the client places
them in order and joins them by their footers, as solve's (a stopped run's parts removed).
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.extreme_layout import rating_as_number
from pipeline.jobs import JOBS
from pipeline.jobs.augment.batch import (
    LEFT_OUT,
    AugmentOptions,
    AugmentTally,
    augment_record_batch,
    hrm_schema,
    output_schema,
    refuse_pencilmarks,
)
from pipeline.limits import MAX_COPIES
from pipeline.results.json_numbers import summary_json
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, Task, part_of

JOB = JOBS["augment"]
AUGMENTED_SUFFIX = JOB.suffix
FORMATS = JOB.formats
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

    def to_json(self) -> str:
        return summary_json(self)


@dataclass(frozen=True)
class AugmentedPart:
    """What a worker sends back: a part (Parquet bytes, arrays for npy, HRM's for hrm), and
    the batch's tally."""

    rows: int
    tally: AugmentTally
    part: Part


def augment_part(task: Task, options: AugmentOptions, fmt: str, schema: pa.Schema) -> AugmentedPart:
    """The unit of work: augment one batch and encode its rows in `fmt` (for npy, the arrays
    straight from the kernel: no text made and parsed again; for hrm, each row's group as
    HRM's tokens, `io.hrm_folders.HrmArrays`)."""
    batch = task.batch
    if fmt == "hrm":
        refuse_pencilmarks(batch)
        batch = rating_as_number(batch, streamed=True)  # sudoku-extreme's, kept as numbers
    augmented = augment_record_batch(batch, options)
    if fmt in ("npy", "hrm"):
        arrays = augmented.arrays(schema) if fmt == "npy" else augmented.hrm_arrays(schema)
        part = Part(task.start, augmented.rows, task.source, task.first_row, arrays)
        return AugmentedPart(augmented.rows, augmented.tally, part)
    table = augmented.table().cast(schema)
    return AugmentedPart(table.num_rows, augmented.tally, part_of(task, table, fmt))


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
    `dataset=True` (with `executor="dask"`, from input files): `output` is a Parquet dataset
    folder, as for `solve_file`.

    `format="hrm"`: the folder of one split in the layout HRM's and TRM's `PuzzleDataset`
    loads (`io.hrm_folders`; default: `<stem>` beside the input, `train.csv` -> `train/`, as
    the loader names a split), each input puzzle a group of itself and its `copies` copies
    (the original always kept; `copies=0`: the puzzles as they are, a test split), the other
    columns beside, one `all__<column>.npy` each, and `identifiers.json` beside the folder
    unless one is there.

    Output columns (`batch.COLUMNS`): group (the input row), copy, [id], puzzle,
    solution, the symmetry applied (relabel, row_order, column_order, transposed: invertible,
    `pipeline.restore_originals`), then the input's other columns. A row without a solution is
    solved first; rows that are not puzzles with one solution are left out and counted by
    reason (the summary). `options`: how to read the input and run the job, as for
    `solve_file` (`JobOptions`; `format`: parquet, npy or hrm).

    Raises `InputError` (its message one line) for a bad file, column, option or output,
    `RunFailed` when the workers or the cluster go away, and `RunInterrupted` after Ctrl-C or
    SIGTERM (nothing is kept).
    """
    fewest = 0 if options.get("format") == "hrm" else 1
    if (
        isinstance(copies, bool)
        or not isinstance(copies, int)
        or not fewest <= copies <= MAX_COPIES
    ):
        raise InputError(
            f"copies must be a whole number from 1 to {MAX_COPIES:,} (0 with format hrm: "
            f"the puzzles as they are), not {copies!r}"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed must be a whole number of at least 0, not {seed!r}")
    fmt = options.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"augment writes parquet, npy or hrm, not {fmt!r}")
    if fmt is None and output is not None and str(output) == "-":
        options["format"] = "parquet"  # stdout: Parquet too, not the file jobs' CSV
    if fmt == "hrm":  # a split's folder (`train.csv` -> `train/`), checked as arrays' are
        if output is None and str(input_path) == "-":
            raise InputError("augment --format hrm writes a folder: give -o DIR")
        keep_original = True  # a group is the puzzle itself and its copies
    augmenting = AugmentOptions(copies, seed, keep_original)
    batch_size = max(MIN_BATCH, OUTPUT_BATCH // (copies + keep_original))
    job = start_job(
        JOB,
        input_path,
        output,
        options,
        kernels=augmenting.kernels(),
        batch_size=batch_size,
        reserved=OWN_COLUMNS,
    )
    assert job.inputs is not None
    if job.inputs.several:
        raise InputError("augment takes one input at a time")
    return _run(job, augmenting)


def _run(job: Job, augmenting: AugmentOptions) -> AugmentSummary:
    """The augment job, on the run loop."""
    assert job.inputs is not None
    schema = output_schema(job.inputs.first.schema)
    written = hrm_schema(schema) if job.format == "hrm" else schema  # HRM's: the columns beside
    tally = AugmentTally()
    with running(job, written) as run:
        if run.sliced:  # workers read their slices and keep their parts: any order
            slices = []
            for kept in run.map_slices(augment_part, augmenting, job.format, schema):
                run.write(kept)
                slices.append(kept)
            for kept in sorted(slices, key=lambda k: k.index):  # examples in input order
                for result in kept.results:
                    tally.add(result.tally)
        else:
            for result in run.map(augment_part, run.tasks(), augmenting, job.format, schema):
                run.write(result.part)
                tally.add(result.tally)
        run.finish()
        wall, rate = job.wall(), run.rate()
        options: dict[str, Any] = {
            "copies": augmenting.copies,
            "seed": augmenting.seed,
            "keep_original": augmenting.keep_original,
            "attempts": augmenting.attempts,
        }
        metadata = job.metadata(tally.rows, options, rate, augment=asdict(tally))
        run.commit(metadata)
    summary = AugmentSummary(
        input=job.inputs.names[0],
        output=str(job.target),
        format=job.format,
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
        skipped_columns=run.skipped,
        wall_s=wall,
        rows_per_s=rate,
        workers=job.executor.workers,
    )
    summary.metadata = metadata
    return summary

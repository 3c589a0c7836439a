"""The validate job: an input file in, one Parquet file of findings out, on all cores.

    summary = validate_file("puzzles.csv")     # -> puzzles.findings.parquet beside the input
    summary.clean                              # no error-level finding

Reads the input as `solve` does (the same job set-up and options), checks each batch on the
executor's workers: the row checks of `checks`, and a 128-bit key per row for the duplicate
check, which the parent runs over the whole file at the end (`duplicates`). Each
batch's findings go to a temporary Arrow stream beside the output as they come, so memory
stays bounded; at the end they are merged with the duplicate findings, in row order, into the
output, written atomically (a temporary name, then `os.replace`) with the run's metadata.
"""

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Unpack

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import ExecutorLost, InputError, RunFailed, RunInterrupted
from pipeline.grid import CELLS, PuzzleColumn, clue_counts
from pipeline.io.dataset import optional_column
from pipeline.io.frames import ColumnNames, PuzzleInput, puzzle_batch
from pipeline.io.output import Target, parquet_options, stdout_bytes, write_atomically
from pipeline.io.runinfo import METADATA_KEY
from pipeline.jobs.executors import warm_kernels
from pipeline.jobs.parts import encode
from pipeline.jobs.pool import map_chunks
from pipeline.jobs.setup import (
    DEFAULT_BATCH_SIZE,
    Job,
    JobOptions,
    sigterm_as_interrupt,
    start_job,
)
from pipeline.minlex import canonical_grids
from pipeline.solver import MAX_NODES
from pipeline.validate.catalogue import (
    CODES,
    LEVELS,
    code_counts,
    findings_schema,
    level_counts,
    sort_findings,
)
from pipeline.validate.checks import check_rows, duplicate_findings
from pipeline.validate.duplicates import DuplicateIndex, Repeats, find_repeats, row_keys

FINDINGS_SUFFIX = ".findings.parquet"
MINIMAL_BATCH_SIZE = 5_000
EXAMPLES = 3  # first findings of each code kept for the summary
_ROW_GROUP_ROWS = 65_536
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


@dataclass(frozen=True)
class ValidateOptions:
    """What to check beyond the default row checks: a node budget, minimality."""

    max_nodes: int | None = None
    minimal: bool = False
    symmetry: bool = False  # also find duplicates up to symmetry (canonical forms)

    def __post_init__(self) -> None:
        if self.max_nodes is not None and not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(
                f"max_nodes must be between 1 and {MAX_NODES:,}, not {self.max_nodes!r}"
            )


class BatchReport(NamedTuple):
    """What a worker sends back for one batch."""

    start: int  # the batch's first row
    rows: int
    findings: pa.Table  # sorted by row, one chunk
    keys: np.ndarray  # (rows, 2) uint64, duplicates.row_keys
    clues: np.ndarray  # (82,) int64: puzzles by number of givens
    forms: np.ndarray | None  # (rows, 2) uint64: keys of the canonical forms, when asked


def warm_validation(checks: ValidateOptions) -> None:
    """Load (or compile, on a first run: once, before any worker starts) every kernel a batch
    of these checks calls: the two-solution search and the clash check, the solve kernel for
    `minimal`, the canonical forms for `symmetry`."""
    from pipeline.solver import find_two_solutions
    from pipeline.solver.checks import first_clash

    grids = np.zeros((2, CELLS), dtype=np.uint8)
    grids[1, :2] = 1  # a clash
    find_two_solutions(grids, max_nodes=1000)
    first_clash(grids[1:])
    if checks.minimal:
        warm_kernels(("fast",))
    if checks.symmetry:
        canonical_grids(grids)


def validation_kernels(checks: ValidateOptions) -> list[tuple[str, str]]:
    """(module, name) of the kernels `warm_validation` loads that take long to compile."""
    kernels = [("pipeline.solver.fast", "two_solutions_kernel")]
    if checks.minimal:
        kernels.append(("pipeline.solver.fast", "solve_kernel"))
    if checks.symmetry:
        kernels.append(("pipeline.minlex.batch", "canonical_kernel"))
    return kernels


def validate_record_batch(batch: pa.RecordBatch, options: ValidateOptions) -> BatchReport:
    """The unit of work of a worker: row checks, duplicate keys and clue counts of a batch."""
    findings, parsed = check_rows(batch, options.max_nodes, options.minimal)
    rows = batch.column(batch.schema.get_field_index("row"))
    start = rows[0].as_py() if len(rows) else 0
    clues = np.bincount(clue_counts(parsed.grids[parsed.ok]), minlength=CELLS + 1)
    forms = None
    if options.symmetry:
        forms = row_keys(canonical_grids(parsed.grids), parsed.ok)
    keys = row_keys(parsed.grids, parsed.ok)
    return BatchReport(start, len(rows), findings, keys, clues, forms)


@dataclass
class ValidationSummary:
    """What a validation found; `to_json()` is the `--json` output of the CLI."""

    input: str
    output: str
    rows: int
    clean: bool  # no error-level finding
    findings: dict[str, int]  # per code, every code
    levels: dict[str, int]  # per level
    rows_with_errors: int
    clues: dict[int, int]  # puzzles (rows that parse) by number of givens
    examples: dict[str, list[dict[str, Any]]]  # the first findings of each code found
    wall_s: float
    rows_per_s: float
    workers: int
    minimal: bool
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("metadata")
        return json.dumps(data, indent=2, default=str)

    def describe(self) -> str:
        """The terminal summary: counts per finding with a first example, the clue range."""
        lines = [
            f"{self.rows:,} rows in {self.wall_s:.2f} s ({self.rows_per_s:,.0f} rows/s, "
            f"{self.workers} worker{'s' if self.workers != 1 else ''}): "
            + ("clean" if self.clean else f"{self.rows_with_errors:,} rows with errors")
            + "; findings: "
            + (", ".join(f"{n:,} {level}" for level, n in self.levels.items() if n) or "none")
        ]
        for code, n in self.findings.items():
            if n:
                first = self.examples[code][0]
                lines.append(f"  {CODES[code]:<8} {code:<15} {n:>9,}  "
                             f"e.g. row {first['row']}: {first['message']}")  # fmt: skip
        if self.clues:
            counts = np.repeat(list(self.clues), list(self.clues.values()))
            lines.append(
                f"clues: {counts.min()} to {counts.max()}, median {np.median(counts):g} "
                f"({len(counts):,} puzzles)"
            )
        lines.append(f"wrote {self.output}")
        return "\n".join(lines)


class _Tally:
    """Counts, first examples, clue counts: the summary, gathered batch by batch."""

    def __init__(self) -> None:
        self.codes = dict.fromkeys(CODES, 0)
        self.levels = dict.fromkeys(LEVELS, 0)
        self.rows_with_errors = 0
        self.clues = np.zeros(CELLS + 1, dtype=np.int64)
        self.examples: dict[str, list[dict[str, Any]]] = {}

    def add(self, findings: pa.Table, clues: np.ndarray | None = None) -> None:
        if clues is not None:
            self.clues += clues
        if not findings.num_rows:
            return
        for code, n in code_counts(findings).items():
            self.codes[code] += n
        for level, n in level_counts(findings).items():
            self.levels[level] += n
        is_error = findings.column("level").combine_chunks().indices.to_numpy() == 0
        self.rows_with_errors += len(np.unique(findings.column("row").to_numpy()[is_error]))
        wanted = [c for c, n in code_counts(findings).items()
                  if n and len(self.examples.get(c, [])) < EXAMPLES]  # fmt: skip
        if wanted:
            keep = ["row", "id", "message"] if "id" in findings.column_names else ["row", "message"]
            for record in findings.select([*keep, "code"]).to_pylist():
                examples = self.examples.setdefault(str(record.pop("code")), [])
                if len(examples) < EXAMPLES:
                    examples.append(record)

    def add_repeats(self, repeats: Repeats) -> None:
        """The repeats' counts, and their first examples (without ids: those come with the
        findings file, read again from the input)."""
        for code, rows, first in repeats.kinds():
            if len(rows):
                self.add(duplicate_findings(rows[:EXAMPLES], first[:EXAMPLES], code=code))
                self.codes[code] += len(rows) - min(EXAMPLES, len(rows))
                self.levels[CODES[code]] += len(rows) - min(EXAMPLES, len(rows))

    def summary(self, **run: Any) -> ValidationSummary:
        order = {code: i for i, code in enumerate(CODES)}
        return ValidationSummary(
            **run,
            clean=self.levels["error"] == 0,
            findings=self.codes,
            levels=self.levels,
            rows_with_errors=self.rows_with_errors,
            clues={c: int(n) for c, n in enumerate(self.clues.tolist()) if n},
            examples=dict(sorted(self.examples.items(), key=lambda item: order[item[0]])),
        )


class _FirstIds:
    """The ids of the rows that later rows repeat, gathered as the input is read again, batch by
    batch: memory for those ids only, not for every duplicate."""

    def __init__(self, rows: np.ndarray, id_type: pa.DataType) -> None:
        self.rows = rows  # ascending, distinct
        self._chunks: list[pa.Array] = [pa.array([], id_type)]

    def add(self, start: int, ids: pa.Array) -> None:
        lo, hi = np.searchsorted(self.rows, [start, start + len(ids)])
        if hi > lo:
            self._chunks.append(ids.take(pa.array(self.rows[lo:hi] - start)))

    def of(self, rows: np.ndarray) -> pa.Array:
        taken = pa.chunked_array(self._chunks).take(pa.array(np.searchsorted(self.rows, rows)))
        return taken.combine_chunks()


def _merged(
    stream: Path,
    batches: list[tuple[int, int, bool]],
    repeats: Repeats,
    id_batches: Iterator[pa.RecordBatch] | None,
    id_type: pa.DataType | None,
) -> Iterator[pa.Table]:
    """The findings of every batch (`start`, `rows`, whether the stream holds findings for it),
    in order, with the repeats' findings put in place; `id_batches`: the input read again, for
    the repeats' ids (None: no ids, or an input that cannot be read twice, when `id_type` is
    the type of the ids left null)."""
    first_ids: _FirstIds | None = None
    with pa.OSFile(str(stream), "rb") as source:
        reader = pa.ipc.open_stream(source)
        for start, rows, stored in batches:
            ids = None
            if id_batches is not None:
                batch = next(id_batches)
                ids = batch.column(batch.schema.get_field_index("id"))
                first_ids = first_ids or _FirstIds(repeats.first_rows_needed(), ids.type)
                first_ids.add(start, ids)
            parts = [pa.Table.from_batches([reader.read_next_batch()])] if stored else []
            for code, repeat, first in repeats.kinds():
                lo, hi = np.searchsorted(repeat, [start, start + rows])
                if hi == lo:
                    continue
                own = of = None
                if ids is not None and first_ids is not None:
                    own = ids.take(pa.array(repeat[lo:hi] - start))
                    of = first_ids.of(first[lo:hi])
                elif id_type is not None:  # ids that cannot be read again: null
                    own = pa.nulls(hi - lo, id_type)
                parts.append(duplicate_findings(repeat[lo:hi], first[lo:hi], own, of, code))
            if parts:
                yield sort_findings(pa.concat_tables(parts)) if len(parts) > 1 else parts[0]


def _write_findings(target: Target, schema: pa.Schema, tables: Iterator[pa.Table]) -> None:
    """Write `tables` to the output (a file, atomically, or stdout) in its format; Parquet in
    row groups of about 64k findings."""

    def groups() -> Iterator[pa.Table]:
        pending: list[pa.Table] = []
        size = 0
        for table in tables:
            pending.append(table)
            size += table.num_rows
            if size >= _ROW_GROUP_ROWS:
                yield pa.concat_tables(pending).cast(schema)
                pending, size = [], 0
        if pending:
            yield pa.concat_tables(pending).cast(schema)

    def write(f: Any) -> None:
        if target.format == "parquet":
            with pq.ParquetWriter(f, schema, **parquet_options(schema)) as writer:
                written = 0
                for table in groups():
                    writer.write_table(table)
                    written += table.num_rows
                if not written:  # the schema, even with no findings
                    writer.write_table(schema.empty_table())
            return
        header = True
        for table in groups():
            f.write(encode(table, target.format, header=header))
            header = False
        if header:
            f.write(encode(schema.empty_table(), target.format, header=True))

    if target.path is None:
        write(stdout_bytes())
    else:
        write_atomically(target.path, write)


def validate_file(
    input_path: str | Path,
    output: str | Path | None = None,
    *,
    max_nodes: int | None = None,
    minimal: bool = False,
    symmetry: bool = False,
    **options: Unpack[JobOptions],
) -> ValidationSummary:
    """Validate every row of `input_path`; findings into `output` (default
    `<stem>.findings.parquet` beside the input), one row per finding, in row order.

    `options`: how to read the input and run the job, as for `solve_file` (`JobOptions`).
    `batch_size` defaults to 50,000 rows, or 5,000 with `minimal` (each row then costs about
    30 times more: smaller batches keep every worker busy and the progress bar moving).

    Raises `InputError` (one line, for the CLI) for a bad file, column or option, `RunFailed`
    when the workers or the cluster go away, and `RunInterrupted` after Ctrl-C or SIGTERM
    (nothing is kept).
    """
    try:
        checks = ValidateOptions(max_nodes, minimal, symmetry)
    except ValueError as e:
        raise InputError(str(e)) from None
    job = start_job("validate", input_path, output, FINDINGS_SUFFIX, options,
                    warm=partial(warm_validation, checks),
                    batch_size=MINIMAL_BATCH_SIZE if minimal else DEFAULT_BATCH_SIZE,
                    passthrough=False)  # fmt: skip
    if job.inputs.several:
        raise InputError("validate takes one input at a time")
    with job.locked():
        return _run(job, checks)


def _run(job: Job, checks: ValidateOptions) -> ValidationSummary:
    """The validate job, its output locked."""
    ds, pool = job.inputs.first, job.executor
    schema = findings_schema(ds.schema.field("id").type if ds.id_column is not None else None)
    spool = job.output or Path(tempfile.gettempdir()) / "stdout"
    stream = spool.with_name(f".{spool.name}.findings-{os.getpid()}.arrow")
    index, tally, batches = DuplicateIndex(), _Tally(), []
    forms = DuplicateIndex() if checks.symmetry else None
    bar = None
    try:
        with sigterm_as_interrupt():
            job.start_executor(validation_kernels(checks))
            bar = job.progress_bar()
            with (
                pa.OSFile(str(stream), "wb") as sink,
                pa.ipc.new_stream(sink, schema, options=_IPC_OPTIONS) as writer,
            ):
                for report in pool.map_ordered(validate_record_batch, ds.batches(), checks):
                    index.add(report.start, report.keys)
                    if forms is not None and report.forms is not None:
                        forms.add(report.start, report.forms)
                    tally.add(report.findings, report.clues)
                    batches.append((report.start, report.rows, report.findings.num_rows > 0))
                    if report.findings.num_rows:
                        writer.write_batch(report.findings.to_batches()[0])
                    job.advance(bar, report.rows)
            pool.close()
            job.finish_bar(bar)
            repeats = find_repeats(index, forms)
            del index, forms
            rows = batches[-1][0] + batches[-1][1] if batches else 0
            tally.add_repeats(repeats)
            wall = job.wall()
            run = dict(input=job.inputs.names[0], output=str(job.target), rows=rows,
                       wall_s=wall, rows_per_s=rows / wall if wall > 0 else 0.0,
                       workers=pool.workers, minimal=checks.minimal)  # fmt: skip
            id_batches = None  # the input read again for the repeats' ids (not a stream: once)
            id_type = ds.schema.field("id").type if ds.id_column is not None else None
            has_repeats = len(repeats.rows) + len(repeats.symmetric_rows) > 0
            if ds.id_column is not None and has_repeats and not ds.stream:
                id_batches = ds.batches()
            summary = tally.summary(**run)
            summary.metadata = job.metadata(rows, asdict(checks), summary.rows_per_s,
                                            findings=summary.findings,
                                            levels=summary.levels)  # fmt: skip
            schema = schema.with_metadata(
                {METADATA_KEY: json.dumps(summary.metadata, sort_keys=True, default=str)}
            )
            _write_findings(job.target, schema, _merged(stream, batches, repeats, id_batches,
                                                           id_type))  # fmt: skip
    except ExecutorLost as e:
        pool.terminate()
        raise RunFailed(str(e)) from None
    except KeyboardInterrupt:
        pool.terminate()
        raise RunInterrupted() from None
    finally:
        if bar is not None:
            bar.close()
        stream.unlink(missing_ok=True)
    return summary


def validate_puzzles(
    puzzles: PuzzleInput,
    solutions: PuzzleColumn | None = None,
    *,
    max_nodes: int | None = None,
    minimal: bool = False,
    symmetry: bool = False,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame:
    """Validate puzzles held in memory; a DataFrame of findings in row order, as
    `validate_file` writes them, duplicates included.

    `puzzles`: what `solve_batch` takes, a polars DataFrame included (its puzzle column found
    as a file's, or named with `column=`; its solution column checked, its id column passed
    through: `solution_column=`, `id_column=`). `solutions`, beside a column of puzzles (not a
    DataFrame), is checked like a solution column: one string or None per puzzle.
    `symmetry`: also find duplicates up to symmetry. `workers`: None or 1 checks in this
    thread, more on worker threads (`pipeline.jobs.pool`), with the same findings.
    """
    options = ValidateOptions(max_nodes, minimal, symmetry)
    batch = puzzle_batch(puzzles, solutions=solutions, **columns)
    index, forms = DuplicateIndex(), DuplicateIndex() if symmetry else None
    tables = []
    for report in map_chunks(validate_record_batch, batch, workers, options):
        index.add(report.start, report.keys)
        if forms is not None and report.forms is not None:
            forms.add(report.start, report.forms)
        tables.append(report.findings)
    ids = optional_column(batch, "id")
    for code, rows, first in find_repeats(index, forms).kinds():
        own, of = (None, None) if ids is None else (ids.take(rows), ids.take(first))
        tables.append(duplicate_findings(rows, first, own, of, code))
    return pl.from_arrow(sort_findings(pa.concat_tables(tables)))

"""The validate job: an input file in, one Parquet file of findings out, on all cores.

    summary = validate_file("puzzles.csv")     # -> puzzles.findings.parquet beside the input
    summary.clean                              # no error-level finding

Reads the input as `solve` does (the same job set-up and options), checks each batch on the
executor's workers: the row checks of `checks`, and a 128-bit key per row for the duplicate
check, which the parent runs over the whole file at the end (`duplicates`). Each
batch's findings go to a temporary Arrow stream beside the output as they come, so memory
stays bounded; at the end they are merged with the duplicate findings, in row order, into the
output, written atomically (a temporary name, then `os.replace`) with the run's metadata.
The stream a killed run left (`kill -9`: no cleanup) is deleted by the next run on the output.
"""

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.sidecars import SPOOL, clear_stale_temporaries, findings_spool
from pipeline.io.writers import write_tables
from pipeline.run.job import DEFAULT_BATCH_SIZE, Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.validate.batch import (
    ValidateOptions,
    validate_record_batch,
)
from pipeline.validate.catalogue import findings_schema
from pipeline.validate.duplicates import DuplicateIndex, find_repeats
from pipeline.validate.merge import merged
from pipeline.validate.summary import Tally, ValidationSummary

FINDINGS_SUFFIX = ".findings.parquet"
MINIMAL_BATCH_SIZE = 5_000
_ROW_GROUP_ROWS = 65_536
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


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
                    kernels=checks.kernels(),
                    batch_size=MINIMAL_BATCH_SIZE if minimal else DEFAULT_BATCH_SIZE,
                    passthrough=False)  # fmt: skip
    if job.inputs.several:
        raise InputError("validate takes one input at a time")
    with job.locked():
        return _run(job, checks)


def _run(job: Job, checks: ValidateOptions) -> ValidationSummary:
    """The validate job, its output locked."""
    ds = job.inputs.first
    schema = findings_schema(ds.schema.field("id").type if ds.id_column is not None else None)
    spool = job.output or Path(tempfile.gettempdir()) / "stdout"
    stream = findings_spool(spool)
    clear_stale_temporaries(spool, (SPOOL,))  # what killed runs left: their PIDs have ended
    index, tally, batches = DuplicateIndex(), Tally(), []
    forms = DuplicateIndex() if checks.symmetry else None
    try:
        with running(job) as run:
            with (
                pa.OSFile(os.fsencode(stream), "wb") as sink,
                pa.ipc.new_stream(sink, schema, options=_IPC_OPTIONS) as writer,
            ):
                for report in run.map(validate_record_batch, ds.batches(), checks):
                    index.add(report.start, report.keys)
                    if forms is not None and report.forms is not None:
                        forms.add(report.start, report.forms)
                    tally.add(report.findings, report.clues)
                    batches.append((report.start, report.rows, report.findings.num_rows > 0))
                    if report.findings.num_rows:
                        writer.write_batch(report.findings.to_batches()[0])
            run.finish()
            repeats = find_repeats(index, forms)
            del index, forms
            rows = batches[-1][0] + batches[-1][1] if batches else 0
            tally.add_repeats(repeats)
            wall = job.wall()
            summary = tally.summary(input=job.inputs.names[0], output=str(job.target),
                                    rows=rows, wall_s=wall,
                                    rows_per_s=rows / wall if wall > 0 else 0.0,
                                    workers=job.executor.workers,
                                    minimal=checks.minimal)  # fmt: skip
            summary.metadata = job.metadata(rows, asdict(checks), summary.rows_per_s,
                                            findings=summary.findings,
                                            levels=summary.levels)  # fmt: skip
            id_batches = None  # the input read again for the repeats' ids (not a stream: once)
            id_type = ds.schema.field("id").type if ds.id_column is not None else None
            if ds.id_column is not None and repeats.any() and not ds.stream:
                id_batches = ds.batches()
            findings = merged(stream, batches, repeats, id_batches, id_type)
            write_tables(job.target, schema, findings, summary.metadata, _ROW_GROUP_ROWS)
    finally:
        stream.unlink(missing_ok=True)
    return summary

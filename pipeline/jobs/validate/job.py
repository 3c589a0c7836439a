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

With `against` (a leak audit, `leaks`), the training inputs are streamed through the same
workers before the input and once more after it, for the few rows a leak may copy.
"""

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.inputs import expand, open_inputs
from pipeline.io.sidecars import SPOOL, clear_stale_temporaries, findings_spool
from pipeline.io.writers import write_tables
from pipeline.jobs.validate.batch import (
    ValidateOptions,
    validate_record_batch,
)
from pipeline.jobs.validate.catalogue import findings_schema
from pipeline.jobs.validate.duplicates import DuplicateIndex, find_repeats
from pipeline.jobs.validate.leaks import LeakAudit, check_against, no_leaks
from pipeline.jobs.validate.merge import merged
from pipeline.jobs.validate.summary import EXAMPLES, FindingsTally, ValidationSummary
from pipeline.run.job import DEFAULT_BATCH_SIZE, Job, JobOptions, start_job
from pipeline.run.loop import running

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
    against: str | Path | list[str | Path] | None = None,
    **options: Unpack[JobOptions],
) -> ValidationSummary:
    """Validate every row of `input_path`; findings into `output` (default
    `<stem>.findings.parquet` beside the input), one row per finding, in row order.

    `against`: training inputs (a path, a glob, a URL, or a list of them; read with the same
    column and format options as the input) to audit the input for leaks: each row that is a
    puzzle of theirs, exactly or in disguise, is an error `leak` naming the training input
    and row it copies (`pipeline.jobs.validate.leaks`); the summary's `against` says what each
    training input held and how many leaks there were.

    `options`: how to read the input and run the job, as for `solve_file` (`JobOptions`).
    `batch_size` defaults to 50,000 rows, or 5,000 with `minimal` (each row then costs about
    30 times more: smaller batches keep every worker busy and the progress bar moving).

    Raises `InputError` (its message one line) for a bad file, column or option, `RunFailed`
    when the workers or the cluster go away, and `RunInterrupted` after Ctrl-C or SIGTERM
    (nothing is kept).
    """
    try:
        checks = ValidateOptions(max_nodes, minimal, symmetry, leaks=against is not None)
    except ValueError as e:
        raise InputError(str(e)) from None
    train_names = expand(against) if against is not None else None
    job = start_job(
        "validate",
        input_path,
        output,
        FINDINGS_SUFFIX,
        options,
        kernels=checks.kernels(),
        batch_size=MINIMAL_BATCH_SIZE if minimal else DEFAULT_BATCH_SIZE,
        passthrough=False,
    )
    if job.inputs.several:
        raise InputError("validate takes one input at a time")
    audit = None
    if train_names is not None:
        check_against(job.inputs.names, train_names, job.output)
        reading = job.reading.dataset_options() | {"solution_column": None}
        train = open_inputs(train_names, batch_size=job.batch_size, passthrough=False, **reading)
        audit = LeakAudit(train.names, train.batches)
    with job.locked():
        return _run(job, checks, audit)


def _run(job: Job, checks: ValidateOptions, audit: LeakAudit | None) -> ValidationSummary:
    """The validate job, its output locked."""
    ds = job.inputs.first
    schema = findings_schema(ds.schema.field("id").type if ds.id_column is not None else None)
    spool = job.output or Path(tempfile.gettempdir()) / "stdout"
    stream = findings_spool(spool)
    clear_stale_temporaries(spool, (SPOOL,))  # what killed runs left: their PIDs have ended
    index, tally, batches = DuplicateIndex(), FindingsTally(keep_error_rows=audit is not None), []
    forms = DuplicateIndex() if checks.symmetry else None
    leaks = no_leaks([])
    try:
        with running(job) as run:
            if audit is not None:  # pass 1: the training inputs' form keys
                audit.build(job.executor.map_ordered)
            with (
                pa.OSFile(os.fsencode(stream), "wb") as sink,
                pa.ipc.new_stream(sink, schema, options=_IPC_OPTIONS) as writer,
            ):
                for report in run.map(validate_record_batch, ds.batches(), checks):
                    index.add(report.start, report.keys)
                    if forms is not None and report.forms is not None:
                        forms.add(report.start, report.forms)
                    if audit is not None:  # pass 2: the input's rows that may leak
                        audit.add_test(
                            report.start, report.forms, report.packed, report.pencilmarks
                        )
                    tally.add(report.findings, report.clues)
                    batches.append((report.start, report.rows, report.findings.num_rows > 0))
                    if report.findings.num_rows:
                        writer.write_batch(report.findings.to_batches()[0])
            if audit is not None:  # pass 3: those rows confirmed against the training rows
                leaks = audit.leaks(job.executor.map_ordered)
            run.finish()
            repeats = find_repeats(index, forms)
            del index, forms
            rows = batches[-1][0] + batches[-1][1] if batches else 0
            tally.add_repeats(repeats)
            tally.add_late("leak", leaks.rows, leaks.findings(0, min(EXAMPLES, len(leaks.rows))))
            wall = job.wall()
            summary = tally.summary(
                input=job.inputs.names[0],
                output=str(job.target),
                rows=rows,
                wall_s=wall,
                rows_per_s=rows / wall if wall > 0 else 0.0,
                workers=job.executor.workers,
                minimal=checks.minimal,
                against=None if audit is None else audit.summary(leaks),
            )
            extra = {} if summary.against is None else {"against": summary.against}
            summary.metadata = job.metadata(
                rows,
                asdict(checks),
                summary.rows_per_s,
                findings=summary.findings,
                levels=summary.levels,
                **extra,
            )
            id_batches = None  # the input read again for the repeats' ids (not a stream: once)
            id_type = ds.schema.field("id").type if ds.id_column is not None else None
            if ds.id_column is not None and (repeats.any() or leaks.any()) and not ds.stream:
                id_batches = ds.batches()
            findings = merged(stream, batches, repeats, id_batches, id_type, leaks)
            write_tables(job.target, schema, findings, summary.metadata, _ROW_GROUP_ROWS)
    finally:
        stream.unlink(missing_ok=True)
    return summary

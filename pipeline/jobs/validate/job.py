"""The validate job: an input file in, one file of findings out, on all cores, in one pass.

    summary = validate_file("puzzles.csv")     # -> puzzles.findings.parquet beside the input
    summary.clean                              # no error-level finding

Reads the input as `solve` does (the same job set-up and options), checks each batch on the
executor's workers (the row checks of `checks`, a 128-bit key per row), and, as each batch
comes back in order, the parent finds which of its rows repeat an earlier row
(`duplicates`), puts those findings in place among the batch's (`merge`) and writes them into
the output (the run loop's `tables` sink: written as they come, put in place whole at the
end with the run's metadata). Nothing is read twice: the ids a repeat names are the spooled
ids of the batches before (`merge.SpooledIds`).

With `against` (a leak audit, `leaks`), the training inputs are streamed through the same
workers before the input and once more after it, for the few rows a leak may copy; the leaks
are known only then, so each batch's findings wait in the spool until the leaks are put in
place among them. On Dask (input and training files the workers can open), the workers do
all of it, the audit hash-partitioned among them as the repeats are (`sharded`,
`leak_shards`): no row passes through the client.
"""

from dataclasses import asdict
from pathlib import Path
from typing import Any, Unpack

from pipeline.errors import InputError
from pipeline.io.inputs import Inputs, expand, open_names
from pipeline.io.slices import sliceable
from pipeline.jobs import JOBS
from pipeline.jobs.validate.batch import ValidateOptions, validate_task
from pipeline.jobs.validate.catalogue import findings_schema
from pipeline.jobs.validate.duplicates import RepeatFinder
from pipeline.jobs.validate.leaks import LeakAudit, check_against, no_leaks
from pipeline.jobs.validate.merge import SpooledIds, batch_findings, with_leaks
from pipeline.jobs.validate.sharded import validate_sharded
from pipeline.jobs.validate.summary import EXAMPLES, FindingsTally, ValidationSummary
from pipeline.run.job import DEFAULT_BATCH_SIZE, Job, JobOptions, start_job
from pipeline.run.loop import Run, running

JOB = JOBS["validate"]
FINDINGS_SUFFIX = JOB.suffix
MINIMAL_BATCH_SIZE = 5_000
_ROW_GROUP_ROWS = 65_536


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
        JOB,
        input_path,
        output,
        options,
        kernels=checks.kernels(),
        batch_size=MINIMAL_BATCH_SIZE if minimal else DEFAULT_BATCH_SIZE,
        passthrough=False,
        shards=True,
    )
    assert job.inputs is not None
    if job.inputs.several:
        raise InputError("validate takes one input at a time")
    train = None
    if train_names is not None:
        check_against(job.inputs.names, train_names, job.output)
        reading = job.reading.dataset_options() | {"solution_column": None}
        train = open_names(train_names, batch_size=job.batch_size, passthrough=False, **reading)
        # on Dask, the audit is sharded as the repeats are when the workers can read TRAIN too
        job.shards = all(sliceable(ds) for ds in train.datasets)
    return _run(job, checks, train)


def _run(job: Job, checks: ValidateOptions, train: Inputs | None) -> ValidationSummary:
    """The validate job, on the run loop."""
    assert job.inputs is not None
    ds = job.inputs.first
    id_type = ds.schema.field("id").type if ds.id_column is not None else None
    tally = FindingsTally(keep_error_rows=train is not None)
    repeats = RepeatFinder(checks.symmetry)
    leaks = no_leaks([])
    with running(job, findings_schema(id_type), group_rows=_ROW_GROUP_ROWS) as run:
        if run.sliced:  # on Dask: the workers read, audit, find the repeats and write (`sharded`)
            rows, tally, against = validate_sharded(run, checks, id_type, train)
            run.finish()
            return _summary(job, run, checks, tally, rows, against)
        audit = None if train is None else LeakAudit(train.names, train.batches)
        ids = SpooledIds(run.spool()) if id_type is not None else None
        held = run.spool() if audit is not None else None  # findings, till the leaks are known
        batches: list[tuple[int, int, int]] = []  # (first row, rows, number in `held`)
        if audit is not None:  # pass 1: the training inputs' form keys
            audit.build(job.executor.map_ordered)
        for report in run.map(validate_task, run.tasks(), checks):
            found = repeats.add(report.start, report.keys, report.forms)
            if ids is not None and report.ids is not None:
                ids.add(report.start, report.ids)
            if audit is not None:  # pass 2: the input's rows that may leak
                audit.add_test(report.start, report.forms, report.packed, report.pencilmarks)
            tally.add(report.findings, report.clues)
            tally.add_repeats(found)
            findings = batch_findings(report, found, ids, id_type)
            if held is None:
                run.write(findings)
            else:
                batches.append((report.start, report.rows, held.append(findings)))
        if audit is not None:  # pass 3: those rows confirmed against the training rows
            leaks = audit.leaks(job.executor.map_ordered)
        run.finish()
        if held is not None:  # the leaks put in place, batch by batch
            for start, rows, number in batches:
                run.write(with_leaks(held.read(number), start, rows, leaks, ids))
        tally.add_late("leak", leaks.rows, leaks.findings(0, min(EXAMPLES, len(leaks.rows))))
        against = None if audit is None else audit.summary(leaks)
        return _summary(job, run, checks, tally, run.read, against)


def _summary(
    job: Job,
    run: Run,
    checks: ValidateOptions,
    tally: FindingsTally,
    rows: int,
    against: dict[str, Any] | None,
) -> ValidationSummary:
    """The run's summary, and its metadata into the output as it is committed."""
    assert job.inputs is not None
    wall = job.wall()
    summary = tally.summary(
        input=job.inputs.names[0],
        output=str(job.target),
        rows=rows,
        wall_s=wall,
        rows_per_s=rows / wall if wall > 0 else 0.0,
        workers=job.executor.workers,
        minimal=checks.minimal,
        against=against,
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
    run.commit(summary.metadata)
    return summary

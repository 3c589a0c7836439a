"""An example job, as CONTRIBUTING.md's "How to add a job" tells: count the clues of every puzzle
of the inputs (a row each), and how many puzzles have each count (the summary).

What a job supplies: its entry in the job table (name, default suffix, kernels, sink,
resumable), its unit of work (one batch in, one encoded part out) and its output's schema.
What the run loop gives it, with no line here: the inputs read in bounded batches, the
output checked and locked, the workers started, the progress bar, Ctrl-C and SIGTERM, the
checkpoint (`resume=True` goes on from a stopped run), the output joined and put in place
with the run's metadata. A job of the package sits in `pipeline/jobs/count/` and its entry in
`pipeline.jobs.JOBS`; this one lives in the tests, with its entry beside it.
"""

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

import numpy as np
import pyarrow as pa

from pipeline.grid import clue_counts, parse_puzzles
from pipeline.jobs import JobEntry
from pipeline.run.job import JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, Task, part_of

JOB = JobEntry(
    "count",
    "the clues of every puzzle, and how many puzzles have each count",
    suffix=".clues.parquet",  # `x.csv` -> `x.clues.parquet` beside it
    sink="checkpoint",  # parts kept beside the output, joined at the end: resumable
    resumable=True,
    counted="clues",  # what a resumed run counts again from the parts it kept
)
SCHEMA = pa.schema([("row", pa.int64()), ("clues", pa.int8())])  # null: not a puzzle


def count_part(task: Task, fmt: str) -> Part:
    """The unit of work, on a worker: one batch's clue counts, encoded in the output's format,
    with the puzzles per count (the summary's share)."""
    parsed = parse_puzzles(task.batch.column("puzzle"))
    clues = clue_counts(parsed.grids)
    given = pa.array(clues, pa.int8(), mask=~parsed.ok)
    table = pa.table({"row": task.batch.column("row"), "clues": given}, schema=SCHEMA)
    per_count = np.bincount(clues[parsed.ok], minlength=82)
    counts = {str(n): int(k) for n, k in enumerate(per_count.tolist()) if k}
    return part_of(task, table, fmt, counts)


@dataclass
class CountSummary:
    """What a run did: its rows, the puzzles per number of clues, where it wrote them."""

    rows: int
    clues: dict[int, int]
    output: str
    resumed_rows: int


def count_file(
    inputs: str | Path | list[str | Path],
    output: str | Path | None = None,
    *,
    resume: bool = False,
    **options: Unpack[JobOptions],
) -> CountSummary:
    """Count the clues of every row of `inputs` into `output` (default `<stem>.clues.parquet`
    beside a single input; `-`: stdout); `options` as for `pipeline.solve_file`."""
    job = start_job(JOB, inputs, output, options, resume=resume)
    counts: Counter[str] = Counter()
    with running(job, SCHEMA) as run:
        counts.update(run.resumed.counts)
        for part in run.map(count_part, run.tasks(), job.format):
            run.write(part)
            counts.update(part.counts)
        run.finish()
        run.commit(job.metadata(run.rows, {}, run.rate()))
    clues = {int(n): k for n, k in counts.items() if n is not None}
    return CountSummary(run.rows, dict(sorted(clues.items())), str(job.target), run.resumed.rows)

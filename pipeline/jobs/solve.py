"""The bulk solve job: an input file in, one Parquet file of results out, on all cores.

    summary = solve_file("puzzles.csv")        # -> puzzles.solved.parquet beside the input

Reads the input in bounded batches (`io.dataset`), solves them on the executor's workers in
input order, keeps each finished batch in a checkpoint (`checkpoint`) and at the end writes the
output atomically with the run's metadata. An interrupted run is continued with `resume=True`;
the result then equals an uninterrupted run's, timing columns aside.
"""

import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Unpack

from pipeline.errors import ExecutorLost, InputError, RunFailed, RunInterrupted
from pipeline.jobs.batch import SolveOptions, solve_record_batch
from pipeline.jobs.checkpoint import Checkpoint
from pipeline.jobs.executors import warm_kernels
from pipeline.jobs.results import result_schema
from pipeline.jobs.setup import Job, JobOptions, sigterm_as_interrupt, start_job
from pipeline.solver.codes import VERDICT_NAMES

SOLVED_SUFFIX = ".solved.parquet"


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
    """Everything that makes a checkpoint belong to a run: the input as it is now, the options."""
    stat = job.dataset.path.stat()
    return {
        "input": str(job.dataset.path.resolve()),
        "input size": stat.st_size,
        "input mtime": stat.st_mtime_ns,
        "strategy": options.strategy,
        "solutions": options.solutions,
        "max_nodes": options.max_nodes,
        "reading options": job.reading.as_dict(),
    }


def solve_file(
    input_path: str | Path,
    output: str | Path | None = None,
    *,
    strategy: str = "fast",
    solutions: int = 2,
    max_nodes: int | None = None,
    resume: bool = False,
    **options: Unpack[JobOptions],
) -> RunSummary:
    """Solve every row of `input_path` into `output` (default `<stem>.solved.parquet`).

    `options`: how to read the input and run the job (`JobOptions`: columns, separator,
    header, batch size, workers, progress, executor). Raises `InputError` (one line, for the
    CLI) for a bad file, column or option, `RunFailed` when workers or the cluster go away,
    and `RunInterrupted` after Ctrl-C; both keep the finished batches for `resume=True`.
    """
    try:
        search = SolveOptions(strategy, solutions, max_nodes)
    except ValueError as e:
        raise InputError(str(e)) from None
    warm = partial(warm_kernels, (search.strategy,))
    job = start_job("solve", input_path, output, SOLVED_SUFFIX, options, warm=warm)
    ds, out, pool = job.dataset, job.output, job.executor
    checkpoint = Checkpoint(out)
    identity = _identity(job, search)
    if resume:
        done = checkpoint.resume(identity)
    else:
        if checkpoint.exists():
            print(f"note: starting over; discarding the checkpoint at {checkpoint.folder}",
                  file=sys.stderr)  # fmt: skip
        checkpoint.start(identity)
        done = 0
    resumed_rows = done
    bar = None
    try:
        with sigterm_as_interrupt():
            pool.start()
            bar = job.progress_bar(initial=done)
            results = pool.map_ordered(solve_record_batch, ds.batches(start_row=done), search)
            for table in results:
                checkpoint.add(done, table)
                done += table.num_rows
                job.advance(bar, table.num_rows)
            pool.close()
            bar.close()
            wall = job.wall()
            rate = (done - resumed_rows) / wall if wall > 0 else None
            metadata = job.metadata(done, asdict(search), rate, resumed_rows=resumed_rows)
            id_type = ds.schema.field("id").type if ds.id_column is not None else None
            # An interrupt while merging keeps the (complete) checkpoint: --resume merges again.
            counts: Counter[str] = checkpoint.merge(result_schema(id_type), metadata)
    except ExecutorLost as e:
        pool.terminate()
        raise RunFailed(str(e), checkpoint.rows_kept(), checkpoint.folder) from None
    except InputError:  # the input failed part-way (a truncated .gz, say)
        pool.terminate()
        if checkpoint.rows_kept() == resumed_rows == 0:
            checkpoint.remove()  # nothing worth resuming: leave no folder behind
        raise
    except KeyboardInterrupt:
        pool.terminate()
        # count what is on disk: the interrupt may have come between a part and `done +=`
        raise RunInterrupted(checkpoint.rows_kept(), checkpoint.folder) from None
    finally:
        if bar is not None:
            bar.close()
    checkpoint.remove()
    return RunSummary(
        input=str(ds.path),
        output=str(out),
        rows=done,
        verdicts={v: counts.get(v, 0) for v in VERDICT_NAMES},
        wall_s=wall,
        rows_per_s=rate or 0.0,
        workers=pool.workers,
        strategy=search.strategy,
        resumed_rows=resumed_rows,
        metadata=metadata,
    )

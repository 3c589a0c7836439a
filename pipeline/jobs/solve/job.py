"""The bulk solve job: input files in, one file of results out, on all cores.

    summary = solve_file("puzzles.csv")        # -> puzzles.solved.parquet beside the input

Reads the inputs in bounded batches (`io.inputs`), and the executor's workers solve each batch
and encode its results in the output's format (`parts`); the parent keeps each finished part,
in input order, in a checkpoint (`checkpoint`), and at the end joins the parts into the output,
atomically, with the run's metadata. An interrupted run is continued with `resume=True`; the
result then equals an uninterrupted run's, timing columns aside.
"""

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Unpack

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.jobs import JOBS
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels.codes import OUTSIDE_ONLY, VERDICT_NAMES
from pipeline.plugins.open import open_solver, solver_metadata
from pipeline.results.json_numbers import summary_json
from pipeline.results.schema import result_schema
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Part, Task, part_of, verdict_counts

JOB = JOBS["solve"]
SOLVED_SUFFIX = JOB.suffix
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
    max_nodes: int | None = None  # each puzzle's node budget (the strategy's own by default)
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        return summary_json(self)

    def describe(self) -> str:
        counts = ", ".join(f"{v} {n:,}" for v, n in self.verdicts.items() if n)
        resumed = f" ({self.resumed_rows:,} from the checkpoint)" if self.resumed_rows else ""
        budget = "" if self.max_nodes is None else f", {self.max_nodes:,} nodes a puzzle at most"
        return (
            f"{self.rows:,} rows{resumed} in {self.wall_s:.2f} s "
            f"({self.rows_per_s:,.0f} rows/s, {self.workers} worker{'s' * (self.workers != 1)}"
            f"{budget}): "
            f"{counts or 'no rows'}\n"
            f"wrote {self.output}"
        )


def _identity(job: Job, options: SolveOptions) -> dict[str, Any]:
    """Everything that makes a checkpoint belong to a run (`Job.identity`): the options that
    change the results."""
    return job.identity(
        {
            "strategy": options.strategy,
            **({"solver": options.solver} if options.solver else {}),
            "solutions": options.solutions,
            "max_nodes": options.budget,
            "added columns": [
                options.canonical,
                options.rate,
                options.rate_samples,
                options.rate_seed,
            ],
        }
    )


def solve_part(task: Task, options: SolveOptions, fmt: str) -> Part:
    """The unit of work: solve one batch (a `Task`: its place in the output, its input's
    index and name when there are several inputs, the batch) and encode its results in
    `fmt`."""
    table = solve_record_batch(task.batch, options)
    if task.name is not None:
        names = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(table.num_rows, np.int32)), pa.array([task.name], pa.string())
        )
        table = table.add_column(0, pa.field("source", SOURCE_TYPE, nullable=False), names)
    return part_of(task, table, fmt, verdict_counts(table, VERDICT_NAMES))


def _empty(job: Job, search: SolveOptions) -> pa.Table:
    """The output's table of no rows: its schema, with `source` first for several inputs."""
    assert job.inputs is not None
    id_type = job.inputs.schema.field("id").type if job.inputs.has_ids else None
    extra = pa.schema([*search.added_schema(), *job.inputs.first.extra_schema])
    schema = result_schema(id_type, extra)
    if job.inputs.several:
        schema = schema.insert(0, pa.field("source", SOURCE_TYPE, nullable=False))
    return schema.empty_table()


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
    format follows its suffix (.parquet, .csv, .jsonl) or `format`. `dataset=True`: `output`
    (a `str` or a `Path`; default `<stem>.solved/`) is a Parquet dataset folder, as a trailing
    `/` asks (`-o DIR/`), which a `pathlib.Path` cannot keep; an empty folder or an earlier
    dataset of this tool is taken, any other folder with something in it refused.

    `solver`: a `--solver` spec (`pipeline.plugins`) in place of `strategy`: a built-in
    strategy's name, `c:LIBRARY:SYMBOL`, `python:MODULE:FUNCTION` or `cmd:COMMAND`, whose
    answers are checked (verdicts `wrong_answer`, `solver_error`; a `kernel_agrees` column);
    `c:` and `python:` solvers run in processes of their own, one per worker thread
    (`pipeline.plugins.host`: a crash or a hang costs its row only); an adapter that holds
    Python's lock in this process, or is not thread-safe, runs on worker processes unless
    `executor` says otherwise.
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
    if search.solver is not None and max_nodes is not None:  # it would be ignored
        raise InputError(
            "--max-nodes is the built-in strategies' node budget; a solver from "
            "outside (--solver) searches its own way"
        )
    if search.solver is not None:
        adapter = open_solver(search.solver)  # InputError (one line) before any work
        about_solver = solver_metadata(adapter)
        alone = adapter.holds_gil or not getattr(adapter, "thread_safe", True)
        if alone and not options.get("executor"):  # threads would take turns
            options = {**options, "executor": "processes"}  # type: ignore[typeddict-item]
    job = start_job(
        JOB,
        inputs,
        output,
        options,
        kernels=search.kernels(),
        resume=resume,
        reserved=tuple(search.added_schema().names),
    )
    empty = _empty(job, search)
    with running(job, empty.schema, identity=lambda: _identity(job, search)) as run:
        counts = Counter(run.resumed.counts)
        if run.sliced:  # workers read their slices and keep their parts: any order
            parts: Any = run.map_slices(solve_part, search, job.format)
        else:
            parts = run.map(solve_part, run.tasks(slow=search.rate), search, job.format)
        for part in parts:
            run.write(part)
            counts.update(part.counts)
        run.finish()
        wall, rate = job.wall(), run.rate()
        inputs = job.inputs
        assert inputs is not None
        renamed = {
            n: ds.renamed for n, ds in zip(inputs.names, inputs.datasets, strict=True) if ds.renamed
        }
        said = {"solver": about_solver} if about_solver else {}
        recorded = asdict(search) | {"max_nodes": search.budget}  # the budget that held
        metadata = job.metadata(
            run.rows,
            recorded,
            rate,
            resumed_rows=run.resumed.rows,
            renamed_columns=renamed or None,
            **said,
        )
        run.commit(metadata)
    return RunSummary(
        input=", ".join(inputs.names),
        output=str(job.target),
        rows=run.rows,
        verdicts={
            v: counts.get(v, 0) for v in VERDICT_NAMES if search.solver or v not in OUTSIDE_ONLY
        },
        wall_s=wall,
        rows_per_s=rate,
        workers=job.executor.workers,
        strategy=search.name,
        resumed_rows=run.resumed.rows,
        max_nodes=search.budget,
        metadata=metadata,
    )

"""The jobs, one package each, all of one shape, and the job table that registers them once.

A job's package holds `batch.py` (the worker's unit: one batch of rows through the job's
kernels into an Arrow table), `job.py` (the file job, `<job>_file`, on the run loop of
`pipeline.run`) and `frame.py` (its DataFrame twin, for puzzles a notebook holds), where the job
has them, beside its own modules. No package here is named after a public function of
`pipeline` (these are `pipeline.jobs.solve`, never `pipeline.solve`).

`JOBS` is the one place a job is registered; what reads it:

* the run loop (`pipeline.run`): the command's name, the default output's suffix, the formats
  written, the sink and whether a stopped run resumes (`start_job(JOBS["solve"], ...)`);
* `pipeline` re-exports each job's public names (`api`), loaded on first use;
* the command line registers each job's command (`command`: its module in `pipeline.cli`);
* the docs generator writes each job's output columns into its page (`columns`);
* tests check the rest against it (`tests/test_jobs_table.py`): every kernel a job names is
  one the warm-up knows (`run.warmup.KERNELS`, a table of kernels: the run layer cannot read
  this one), and the import contracts in `pyproject.toml` name every job (import-linter reads
  only its own static lists).

This module is data only (it imports nothing of the package): `import pipeline` reads it.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class JobEntry:
    """One job, as the table registers it."""

    name: str  # the command, the package `pipeline.jobs.<name>`, the run's metadata
    summary: str  # what it does, in one line
    suffix: str = ""  # the default output, beside the input ("": an output must be given)
    formats: tuple[str, ...] = ("parquet", "csv", "jsonl")  # what it writes (npy: a folder)
    sink: str | None = None  # how the run loop writes its output (`run.loop.SINKS`)
    resumable: bool = False  # `resume=True` goes on from a stopped run's checkpoint
    counted: str | None = None  # the output column a resumed run counts again (its verdicts)
    kernels: tuple[str, ...] = ()  # every kernel it may call (`run.warmup.KERNELS`' names)
    api: dict[str, str] = field(default_factory=dict)  # public name -> its module in the package
    command: str | None = None  # the module of `pipeline.cli` that registers its command
    columns: tuple[str, str, str] | None = None  # docs: (page, section, "module:function")
    uses: tuple[str, ...] = ()  # jobs whose batches it runs (the contract's upper layer)

    @property
    def package(self) -> str:
        return f"pipeline.jobs.{self.name}"

    def modules(self) -> dict[str, str]:
        """Each public name's module, whole."""
        return {name: f"{self.package}.{module}" for name, module in self.api.items()}


STRATEGY_KERNELS = ("fast", "mrv", "backtrack")  # `kernels.registry`'s strategies

JOBS: dict[str, JobEntry] = {
    job.name: job
    for job in (
        JobEntry(
            "solve",
            "every row solved: its verdict, solution, nodes, guesses and time",
            suffix=".solved.parquet",
            sink="checkpoint",
            resumable=True,
            counted="verdict",
            kernels=(*STRATEGY_KERNELS, "clash", "library", "canonical", "rating"),
            api={"solve_file": "job", "solve_batch": "frame", "SolveOptions": "batch"},
            command="commands",
            columns=("docs/reference/results.md", "schema", "batch:documented_schema"),
        ),
        JobEntry(
            "validate",
            "every row checked: a file of findings, in row order",
            suffix=".findings.parquet",
            sink="tables",
            kernels=("two_solutions", "clash", "verify", "fast", "canonical"),
            api={"validate_file": "job", "validate_puzzles": "frame"},
            command="commands",
        ),
        JobEntry(
            "generate",
            "puzzles with unique solutions, seeded, written a chunk at a time",
            sink="tables",
            kernels=("fast", "clash", "rating"),
            api={"generate_file": "job", "generate": "puzzles"},
            command="commands",
        ),
        JobEntry(
            "bench",
            "solvers measured on datasets: the table solver authors know",
            formats=("parquet",),
            sink="tables",
            uses=("solve",),
            command="commands",
            kernels=(*STRATEGY_KERNELS, "clash", "library", "verify"),
        ),
        JobEntry(
            "score",
            "a model's answers judged by the rules, one row per answer",
            suffix=".scored.parquet",
            sink="checkpoint",
            resumable=True,
            counted="verdict",
            kernels=("fast", "clash", "verify", "rating"),
            api={"score_file": "job", "score_predictions": "frame"},
            command="score_command",
            columns=("docs/guide/score.md", "scored", "batch:documented_schema"),
        ),
        JobEntry(
            "split",
            "leak-free train/val/test splits in a folder, with their manifest",
            formats=("parquet", "npy", "hrm"),
            sink="folder",
            uses=("solve", "augment"),
            kernels=("fast", "clash", "canonical", "rating", "augment"),
            api={"split": "frame", "split_file": "job", "SplitManifest": "manifest"},
            command="split_command",
        ),
        JobEntry(
            "augment",
            "K random symmetries of every puzzle and its solution",
            suffix=".augmented.parquet",
            formats=("parquet", "npy", "hrm"),
            sink="parts",
            kernels=("augment", "verify", "fast"),
            api={"augment_file": "job", "augment": "frame", "restore_originals": "frame"},
            command="augment_command",
            columns=("docs/guide/augment.md", "augmented", "batch:documented_schema"),
        ),
        JobEntry(
            "enumerate",
            "every solution of each puzzle, one row each",
            suffix=".solutions.parquet",
            sink="checkpoint",
            kernels=("fast", "clash", "enumerate"),
            api={"enumerate_file": "job", "enumerate_puzzles": "frame"},
            command="enumerate_command",
            columns=("docs/guide/enumerate.md", "enumerated", "solutions:documented_schema"),
        ),
    )
}

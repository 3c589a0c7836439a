"""`generate`'s job: a generated corpus written to a file (or stdout) a chunk at a time, on the
run loop (its workers make the chunks; the `tables` sink writes them as they come), with a
progress bar on a terminal and a summary (`--json`), as `solve` and `validate` give theirs."""

from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from pipeline.errors import InputError
from pipeline.io.runinfo import machine
from pipeline.jobs import JOBS
from pipeline.jobs.generate.puzzles import (
    accepted_grades,
    check_request,
    generate_chunks,
    kernels,
    no_puzzles,
)
from pipeline.results.json_numbers import json_text
from pipeline.run.job import start_job
from pipeline.run.loop import running

JOB = JOBS["generate"]
MAX_PUZZLES = 1_000_000_000  # about two days on two cores: more is refused up front
BYTES_PER_PUZZLE = {"csv": 180, "jsonl": 240, "parquet": 100}  # on disk, a little generous


@dataclass
class GenerateSummary:
    """What a `generate_file` did; `to_json()`: the same as one JSON object."""

    output: str
    rows: int
    seed: int
    clues: int | None
    grade: str | None
    min_grade: str | None
    wall_s: float
    rows_per_s: float

    def to_json(self) -> str:
        return json_text({"command": "generate", **asdict(self)})

    def describe(self) -> str:
        return (
            f"wrote {self.rows:,} puzzles to {self.output} in {self.wall_s:.2f} s "
            f"({self.rows_per_s:,.0f} puzzles/s)"
        )


def generate_file(
    n: int,
    output: str | Path,
    seed: int = 0,
    clues: int | None = None,
    workers: int | None = None,
    *,
    force: bool = False,
    format: str | None = None,
    grade: str | None = None,
    min_grade: str | None = None,
    progress: bool = True,
) -> GenerateSummary:
    """Write `generate(n, seed, clues, grade=..., min_grade=...)` to a file, CSV, JSON Lines or
    Parquet by its suffix (or `format`; `-`: stdout, CSV by default), a chunk at a time on
    `workers` threads, in bounded memory, atomically; returns what it did. Raises
    `InputError`, before generating, for an output it cannot write or a corpus that cannot
    finish (more than `MAX_PUZZLES`, or more than the disk holds; a grade too rare, once
    200,000 candidates had none), and `RunInterrupted` after Ctrl-C or SIGTERM (nothing is
    left behind). `progress`: a line on stderr when the kernels compile (a first run) and a
    progress bar when stderr is a terminal; else not a word."""
    try:
        check_request(n, clues, seed)
        accept = accepted_grades(grade, min_grade)
    except ValueError as e:
        raise InputError(str(e)) from None
    if n > MAX_PUZZLES:
        raise InputError(
            f"{n:,} puzzles would take days: at most {MAX_PUZZLES:,} a run "
            "(make a larger corpus from several seeds)"
        )
    options = {"format": format, "force": force, "workers": workers, "progress": progress}
    job = start_job(JOB, None, output, options, kernels=kernels(accept))  # type: ignore[arg-type]
    job.check_room(n * BYTES_PER_PUZZLE[job.format], f"{n:,} puzzles")
    asked = {"n": n, "seed": seed, "clues": clues, "grade": grade, "min_grade": min_grade}
    # what a rerun recognises as this tool's own output (Parquet; text by its first lines)
    metadata = {"command": "generate", "rows": n, "options": asked, **machine()}
    schema = no_puzzles(seed, clues, accept).to_arrow().schema
    with running(job, schema, total=n, unit="puzzles") as run:
        chunks = generate_chunks(
            n, seed, clues, grade=grade, min_grade=min_grade, map=partial(run.map, advance=False)
        )
        for chunk in chunks:
            run.write(chunk.to_arrow())
            run.advance(chunk.height)
        run.finish()
        run.commit(metadata)
    wall = job.wall()
    rate = round(run.rows / wall, 1) if wall > 0 else 0.0
    return GenerateSummary(
        str(job.target), run.rows, seed, clues, grade, min_grade, round(wall, 3), rate
    )

"""`generate`'s job: a generated corpus written to a file (or stdout) a chunk at a time, with a
progress bar on a terminal and a summary (`--json`), as `solve` and `validate` give theirs."""

import itertools
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from pipeline.compiled import notices, stderr_notice
from pipeline.errors import InputError, RunInterrupted
from pipeline.io.output import check_output, free_space, size_text
from pipeline.io.runinfo import machine
from pipeline.io.sidecars import OutputLock, clear_stale_temporaries
from pipeline.io.writers import write_tables
from pipeline.jobs.generate.puzzles import (
    accepted_grades,
    check_request,
    generate_chunks,
    kernels,
    no_puzzles,
)
from pipeline.run.job import HiddenBar, sigterm_as_interrupt
from pipeline.run.warmup import expect_kernels

if TYPE_CHECKING:
    from tqdm import tqdm

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
        return json.dumps({"command": "generate", **asdict(self)}, indent=2)

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
    target = check_output(output, "output", force=force, format=format)
    if target.path is not None:
        free, needed = free_space(target.path.parent), n * BYTES_PER_PUZZLE[target.format]
        if needed > free:
            raise InputError(
                f"{target}: {n:,} puzzles need about {size_text(needed)}; "
                f"{size_text(free)} are free"
            )
    options = {"n": n, "seed": seed, "clues": clues, "grade": grade, "min_grade": min_grade}
    # what a rerun recognises as this tool's own output (Parquet; text by its first lines)
    metadata = {"command": "generate", "rows": n, "options": options, **machine()}
    started = time.perf_counter()

    def write() -> int:
        chunks = generate_chunks(n, seed, clues, workers, grade=grade, min_grade=min_grade)
        first = next(chunks, None)
        if first is None:  # n == 0: the columns alone
            first = no_puzzles(seed, clues, accept)
        bar = _progress_bar(n, progress)
        try:
            tables = _counted(itertools.chain([first], chunks), bar)
            return write_tables(target, first.to_arrow().schema, tables, metadata)
        finally:
            bar.close()

    with sigterm_as_interrupt(), notices(stderr_notice("generate") if progress else None):
        expect_kernels(kernels(accept))
        try:
            if target.path is None:
                rows = write()
            else:
                with OutputLock(target.path):  # no other run writes it meanwhile
                    clear_stale_temporaries(target.path)
                    rows = write()
        except KeyboardInterrupt:
            raise RunInterrupted() from None
    wall = time.perf_counter() - started
    return GenerateSummary(
        str(target),
        rows,
        seed,
        clues,
        grade,
        min_grade,
        round(wall, 3),
        round(rows / wall, 1) if wall > 0 else 0.0,
    )


def _progress_bar(total: int, progress: bool) -> "tqdm | HiddenBar":
    """A bar on stderr in puzzles when it is a terminal (tqdm imported for a bar shown only)."""
    if not (progress and sys.stderr.isatty()):
        return HiddenBar(total)
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=" puzzles",
        unit_scale=True,
        file=sys.stderr,
        desc="generate",
        smoothing=0.1,
    )


def _counted(chunks: Iterator[pl.DataFrame], bar: "tqdm | HiddenBar") -> Iterator[pa.Table]:
    for chunk in chunks:
        yield chunk.to_arrow()
        bar.update(chunk.height)

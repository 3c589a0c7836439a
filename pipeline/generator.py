"""Seeded puzzle generator: random complete grids, then givens removed while the solution stays
unique. Every step works on a whole chunk of puzzles at once (one solver call per removal
round); chunks are independent, so a corpus of any size is made a chunk at a time, on all cores.

The same seed gives the same puzzles on every machine (numpy's PCG64 and a deterministic solver).
"""

import itertools
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.compiled import notices, stderr_notice
from pipeline.errors import InputError, RunInterrupted
from pipeline.grid import MIN_UNIQUE_CLUES, clue_counts, format_grids
from pipeline.io.output import check_output, free_space, size_text
from pipeline.io.runinfo import machine
from pipeline.io.sidecars import OutputLock, clear_stale_temporaries
from pipeline.io.writers import write_tables
from pipeline.rating import GRADE_TYPE
from pipeline.rating.ladder import GRADES, grade_grids
from pipeline.run.executors import InlineExecutor, ThreadExecutor
from pipeline.run.job import sigterm_as_interrupt
from pipeline.run.warmup import expect_kernels, warm
from pipeline.solver import codes, solve_grids
from pipeline.symmetry import random_symmetries

_SEED_CELLS = 11  # random givens that a complete grid is grown from


def random_full_grids(n: int, rng: np.random.Generator) -> np.ndarray:
    """`(n, 81)` random valid complete grids.

    A few random digits in random cells are completed by the solver (rows whose seeds clash or
    cannot be completed are drawn again), then a random symmetry spreads the results over all
    grid shapes.
    """
    grids = np.zeros((n, 81), dtype=np.uint8)
    todo = np.arange(n)
    while todo.size:
        seeds = np.zeros((todo.size, 81), dtype=np.uint8)
        cells = np.argsort(rng.random((todo.size, 81)), axis=1)[:, :_SEED_CELLS]
        digits = rng.integers(1, 10, size=(todo.size, _SEED_CELLS), dtype=np.uint8)
        np.put_along_axis(seeds, cells, digits, axis=1)
        found = solve_grids(seeds, solutions=1)
        done = found.verdicts == codes.FOUND
        grids[todo[done]] = found.solutions[done]
        todo = todo[~done]
    return random_symmetries(grids, rng)


def remove_givens(
    solutions: np.ndarray, rng: np.random.Generator, clues: int | None = None
) -> np.ndarray:
    """Blank cells of complete grids in a random order, keeping each removal that leaves the
    solution unique, until `clues` givens remain (or no given can go: the puzzle is minimal)."""
    target = MIN_UNIQUE_CLUES if clues is None else max(clues, MIN_UNIQUE_CLUES)
    puzzles = np.array(solutions, dtype=np.uint8, copy=True)
    n = puzzles.shape[0]
    order = np.argsort(rng.random((n, 81)), axis=1)
    remaining = np.full(n, 81, dtype=np.int64)
    rows = np.arange(n)
    for step in range(81):
        active = rows[remaining > target]
        if active.size == 0:
            break
        cells = order[active, step]
        trial = puzzles[active]
        trial[np.arange(active.size), cells] = 0
        verdicts = solve_grids(trial, solutions=2).verdicts
        keep = verdicts == codes.SOLVED
        puzzles[active[keep], cells[keep]] = 0
        remaining[active[keep]] -= 1
    return puzzles


CHUNK = 25_000  # puzzles made at a time: bounds memory, and the unit of work of a worker
# With a grade asked for, a chunk is smaller (the candidates behind it can be many times more,
# and several chunks keep all workers busy on a few thousand puzzles); candidates are drawn in
# batches sized from the share that graded right so far, within these bounds.
GRADED_CHUNK = 1_000
BATCH = (1_000, 25_000)
# A grade that none of this many candidates reaches is refused: the run could not finish.
GRADE_TRIES = 200_000


def accepted_grades(grade: str | None = None, min_grade: str | None = None) -> np.ndarray | None:
    """Which grades of the ladder (`GRADES` order) a corpus keeps: exactly `grade`, or
    `min_grade` and every harder one; None when neither is given (every puzzle is kept)."""
    if grade is None and min_grade is None:
        return None
    if grade is not None and min_grade is not None:
        raise ValueError("give a grade or a minimum grade (--grade or --min-grade), not both")
    name = grade if grade is not None else min_grade
    if name not in GRADES:
        raise ValueError(f"grade must be one of {', '.join(GRADES)}; not {name!r}")
    index = GRADES.index(name)
    levels = np.arange(len(GRADES))
    return levels == index if grade is not None else levels >= index


def _check(n: int, clues: int | None, seed: int) -> None:
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, not {seed!r}")
    if n < 0:
        raise ValueError(f"n must be a number of puzzles >= 0, not {n}")
    if clues is not None and not MIN_UNIQUE_CLUES <= clues <= 81:
        raise ValueError(f"clues must be between {MIN_UNIQUE_CLUES} and 81, not {clues}")


def _candidates(
    size: int, rng: np.random.Generator, clues: int | None, accept: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """`size` puzzles and their solutions (and grades, when `accept` says which to keep): drawn
    in batches until `size` are kept, each batch from the same stream, so the result depends on
    the seed alone."""
    if accept is None:
        solutions = random_full_grids(size, rng)
        return remove_givens(solutions, rng, clues), solutions, None
    puzzles, solutions, grades = [], [], []
    kept = tried = 0
    while kept < size:
        share = max(kept / tried, 1 / GRADED_CHUNK) if tried else 0.5
        batch = int(np.clip(1.2 * (size - kept) / share, *BATCH))
        found = random_full_grids(batch, rng)
        made = remove_givens(found, rng, clues)
        graded = grade_grids(made).grades
        keep = accept[graded]
        puzzles.append(made[keep])
        solutions.append(found[keep])
        grades.append(graded[keep])
        kept += int(keep.sum())
        tried += batch
        if kept == 0 and tried >= GRADE_TRIES:
            wanted = [g for g, ok in zip(GRADES, accept, strict=True) if ok]
            raise InputError(f"none of {tried:,} generated puzzles grades as "
                             f"{' or '.join(wanted[:3])}{' ...' if len(wanted) > 3 else ''}: "
                             "too rare to make a corpus of")  # fmt: skip
    cut = slice(0, size)
    return (np.concatenate(puzzles)[cut], np.concatenate(solutions)[cut],
            np.concatenate(grades)[cut])  # fmt: skip


def _chunk(
    index: int,
    start: int,
    size: int,
    seed: int,
    clues: int | None,
    accept: np.ndarray | None = None,
) -> pl.DataFrame:
    """Puzzles `start` .. `start + size - 1` of a corpus: each chunk has its own random stream,
    derived from the seed and its index, so the corpus is the same however chunks are shared out.
    With `accept`, only puzzles of those grades, and a `grade` column.
    """
    rng = np.random.default_rng([seed, index])
    puzzles, solutions, grades = _candidates(size, rng, clues, accept)
    frame = pl.DataFrame(
        {
            "id": np.arange(start, start + size, dtype=np.int64),
            "puzzle": pl.Series(format_grids(puzzles)),
            "solution": pl.Series(format_grids(solutions)),
            "clues": clue_counts(puzzles),
        }
    )
    if accept is None:
        return frame
    grade_column = pl.Series(GRADES, dtype=GRADE_TYPE).gather(grades.astype(np.uint32))
    return frame.with_columns(grade=grade_column)


def _chunk_task(spec: tuple[int, int, int, int, int | None, np.ndarray | None]) -> pa.Table:
    return _chunk(*spec).to_arrow()


def _kernels(accept: np.ndarray | None) -> tuple[str, ...]:
    """The kernels generating calls (`run.warmup.KERNELS`): the grades' when filtering by them."""
    return ("fast", "clash", *(("rating",) if accept is not None else ()))


def generate_chunks(
    n: int,
    seed: int = 0,
    clues: int | None = None,
    workers: int | None = 1,
    grade: str | None = None,
    min_grade: str | None = None,
) -> Iterator[pl.DataFrame]:
    """`generate`, a chunk of puzzles at a time, in order; with `workers` > 1 (or None: all
    cores) the chunks are made on worker threads."""
    _check(n, clues, seed)
    accept = accepted_grades(grade, min_grade)
    size = CHUNK if accept is None else GRADED_CHUNK
    specs = [
        (i, i * size, min(size, n - i * size), seed, clues, accept) for i in range(-(-n // size))
    ]
    if workers == 1 or len(specs) <= 1:
        executor = InlineExecutor()
    else:
        executor = ThreadExecutor(workers, warm=partial(warm, _kernels(accept)))
    try:
        for table in executor.map_ordered(_chunk_task, specs):
            yield pl.from_arrow(table)
        executor.close()
    finally:
        executor.terminate()


def generate(
    n: int,
    seed: int = 0,
    clues: int | None = None,
    *,
    grade: str | None = None,
    min_grade: str | None = None,
) -> pl.DataFrame:
    """`n` puzzles with unique solutions: columns `id`, `puzzle`, `solution`, `clues`.

    `clues` is a target: givens are removed down to it when uniqueness allows, else the puzzle
    stops where no given can go (a minimal puzzle). Without it, puzzles are minimal (typically
    22 to 27 givens). Puzzles use `.` for blanks. The same seed gives the same puzzles.

    `grade` keeps only puzzles whose hardest step is that technique of the ladder
    (`pipeline.GRADES`, e.g. "x_wing", or "search" for puzzles the ladder cannot finish);
    `min_grade` keeps that grade and every harder one. Either adds a `grade` column. Grades
    rarer among minimal puzzles cost more: about 1 in 6 needs search, 1 in 800 an X-wing, and
    a grade none of 200,000 candidates reaches is refused (`InputError`).
    """
    chunks = list(generate_chunks(n, seed, clues, grade=grade, min_grade=min_grade))
    if not chunks:
        return _chunk(0, 0, 0, seed, clues, accepted_grades(grade, min_grade))
    return pl.concat(chunks)


MAX_PUZZLES = 1_000_000_000  # about two days on two cores: more is refused up front
BYTES_PER_PUZZLE = {"csv": 180, "jsonl": 240, "parquet": 100}  # on disk, a little generous


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
) -> int:
    """Write `generate(n, seed, clues, grade=..., min_grade=...)` to a file, CSV, JSON Lines or
    Parquet by its suffix (or `format`; `-`: stdout, CSV by default), a chunk at a time on
    `workers` threads, in bounded memory, atomically; returns the puzzles written. Raises
    `InputError`, before generating, for an output it cannot write or a corpus that cannot
    finish (more than `MAX_PUZZLES`, or more than the disk holds; a grade too rare, once
    200,000 candidates had none), and `RunInterrupted` after Ctrl-C or SIGTERM (nothing is
    left behind). `progress`: a line on stderr when the kernels compile (a first run); else
    not a word."""
    try:
        _check(n, clues, seed)
        accept = accepted_grades(grade, min_grade)
    except ValueError as e:
        raise InputError(str(e)) from None
    if n > MAX_PUZZLES:
        raise InputError(f"{n:,} puzzles would take days: at most {MAX_PUZZLES:,} a run "
                         "(make a larger corpus from several seeds)")  # fmt: skip
    target = check_output(output, "output", force=force, format=format)
    if target.path is not None:
        free, needed = free_space(target.path.parent), n * BYTES_PER_PUZZLE[target.format]
        if needed > free:
            raise InputError(f"{target}: {n:,} puzzles need about {size_text(needed)}; "
                             f"{size_text(free)} are free")  # fmt: skip
    options = {"n": n, "seed": seed, "clues": clues, "grade": grade, "min_grade": min_grade}
    # what a rerun recognises as this tool's own output (Parquet; text by its first lines)
    metadata = {"command": "generate", "rows": n, "options": options, **machine()}

    def write() -> int:
        chunks = generate_chunks(n, seed, clues, workers, grade=grade, min_grade=min_grade)
        first = next(chunks, None)
        if first is None:  # n == 0: the columns alone
            first = _chunk(0, 0, 0, seed, clues, accept)
        tables = (chunk.to_arrow() for chunk in itertools.chain([first], chunks))
        return write_tables(target, first.to_arrow().schema, tables, metadata)

    with sigterm_as_interrupt(), notices(stderr_notice("generate") if progress else None):
        expect_kernels(_kernels(accept))
        try:
            if target.path is None:
                return write()
            with OutputLock(target.path):  # no other run writes it meanwhile
                clear_stale_temporaries(target.path)
                return write()
        except KeyboardInterrupt:
            raise RunInterrupted() from None

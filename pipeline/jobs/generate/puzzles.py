"""Seeded puzzle generator: random complete grids, then givens removed while the solution stays
unique. Every step works on a whole chunk of puzzles at once (one solver call per removal
round); chunks are independent, so a corpus of any size is made a chunk at a time, on all cores.

Puzzle i of a corpus comes from its own random stream, keyed by the seed and i: the same seed
gives the same puzzles on every machine (integer arithmetic and a deterministic solver), and a
smaller corpus is the head of a larger one (with a grade asked for too: the first candidates
that grade right).
"""

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.grid import MIN_UNIQUE_CLUES, clue_counts, format_grids
from pipeline.kernels import codes, solve_grids
from pipeline.rating import GRADE_TYPE
from pipeline.rating.ladder import GRADES, grade_grids
from pipeline.run.executors import InlineExecutor, ThreadExecutor
from pipeline.run.warmup import warm
from pipeline.splitmix import GAMMA, mix_array, stream_start

_SEED_CELLS = 11  # random givens that a complete grid is grown from

# Each puzzle of a corpus draws from its own random stream, keyed by (seed, its number), so
# puzzle i is the same in a corpus of any size (`generate 3` is the head of `generate 5`) and
# however the corpus is cut into chunks. The streams are SplitMix64's, whose n-th draw is
# `mix(start + n * GAMMA)`, so a whole chunk's draws are a few array operations: a numpy
# Generator per puzzle cost 11 us a puzzle to make (0.23 s of 20,000), under the GIL, before
# any draw.
_ORDER, _SYMMETRY, _ATTEMPTS = 0, 1, 2  # the streams of a puzzle: removal order, symmetry, seeds
_STREAM = np.uint64(1 << 32)  # draws per stream


def puzzle_keys(seed: int, numbers: np.ndarray) -> np.ndarray:
    """The random-stream key of puzzles `numbers` (0-based) of the corpus of `seed`."""
    return stream_start(np.array([seed], dtype=np.uint64), numbers)


def _draws(keys: np.ndarray, stream: int, k: int) -> np.ndarray:
    """`(n, k)` uint64 draws: the first `k` of stream `stream` of each key's puzzle."""
    counters = np.uint64(stream) * _STREAM + np.arange(1, k + 1, dtype=np.uint64)
    return mix_array(keys[:, None] + counters[None, :] * GAMMA)


def _orders(draws: np.ndarray) -> np.ndarray:
    """A random permutation per row (of the draws' columns), by sorting them."""
    return np.argsort(draws, axis=-1, kind="stable")


def _line_orders(draws: np.ndarray) -> np.ndarray:
    """`(n, 9)` orders of the nine rows (or columns) from 12 draws a row: bands permuted, rows
    permuted inside each."""
    bands = _orders(draws[:, :3])
    inside = _orders(draws[:, 3:].reshape(-1, 3, 3))
    return (bands[:, :, None] * 3 + inside).reshape(-1, 9)


def _symmetries(grids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """One random symmetry per row (as `symmetry.random_symmetries`), drawn from its key."""
    n = grids.shape[0]
    draws = _draws(keys, _SYMMETRY, 34)
    relabel = np.zeros((n, 10), dtype=np.uint8)
    relabel[:, 1:] = _orders(draws[:, :9]) + 1
    relabelled = np.take_along_axis(relabel, grids.astype(np.intp), axis=1)
    rows, columns = _line_orders(draws[:, 9:21]), _line_orders(draws[:, 21:33])
    cells = (rows[:, :, None] * 9 + columns[:, None, :]).reshape(n, 81)
    transpose = (draws[:, 33] >> np.uint64(63)) == 1
    transposed = (columns[:, :, None] + rows[:, None, :] * 9).reshape(n, 81)  # (i, j) <- (j, i)
    cells[transpose] = transposed[transpose]
    return np.take_along_axis(relabelled, cells, axis=1)


def _full_grids(keys: np.ndarray) -> np.ndarray:
    """A random valid complete grid per key: a few random digits in random cells completed by
    the solver (a row whose seed clashes or cannot be completed draws its next attempt), then a
    random symmetry spreads the results over all grid shapes."""
    grids = np.zeros((keys.size, 81), dtype=np.uint8)
    todo = np.arange(keys.size)
    attempt = 0
    while todo.size:
        draws = _draws(keys[todo], _ATTEMPTS + attempt, 81 + _SEED_CELLS)
        cells = _orders(draws[:, :81])[:, :_SEED_CELLS]
        digits = ((draws[:, 81:] >> np.uint64(11)) * np.uint64(9) >> np.uint64(53)) + 1
        seeds = np.zeros((todo.size, 81), dtype=np.uint8)
        np.put_along_axis(seeds, cells, digits.astype(np.uint8), axis=1)
        found = solve_grids(seeds, solutions=1)
        done = found.verdicts == codes.FOUND
        grids[todo[done]] = found.solutions[done]
        todo = todo[~done]
        attempt += 1
    return _symmetries(grids, keys)


def random_full_grids(n: int, rng: np.random.Generator) -> np.ndarray:
    """`(n, 81)` random valid complete grids, drawn from `rng`."""
    return _full_grids(rng.bit_generator.random_raw(n).astype(np.uint64))


def _remove_in_order(solutions: np.ndarray, order: np.ndarray, clues: int | None) -> np.ndarray:
    """Blank cells of complete grids in each row's `order`, keeping each removal that leaves
    the solution unique, until `clues` givens remain (or no given can go: the puzzle is
    minimal). A row's result depends on its solution and order alone."""
    target = MIN_UNIQUE_CLUES if clues is None else max(clues, MIN_UNIQUE_CLUES)
    puzzles = np.array(solutions, dtype=np.uint8, copy=True)
    n = puzzles.shape[0]
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


def remove_givens(
    solutions: np.ndarray, rng: np.random.Generator, clues: int | None = None
) -> np.ndarray:
    """Blank cells of complete grids in a random order (from `rng`), keeping each removal that
    leaves the solution unique, until `clues` givens remain (or no given can go: the puzzle is
    minimal)."""
    order = np.argsort(rng.random((np.shape(solutions)[0], 81)), axis=1)
    return _remove_in_order(solutions, order, clues)


CHUNK = 5_000  # puzzles made at a time: bounds memory, and the unit of work of a worker
# With a grade asked for, puzzles are the candidates that grade right, in candidate order;
# candidates are made in ranges that grow from GRADED_FIRST to GRADED_CHUNK (a few puzzles of
# a common grade cost little; a rare grade gets full batches).
GRADED_FIRST = 64
GRADED_CHUNK = 1_000
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


def check_request(n: int, clues: int | None, seed: int) -> None:
    if not isinstance(seed, int | np.integer) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be a whole number from 0 to 2**64 - 1, not {seed!r}")
    if n < 0:
        raise ValueError(f"n must be a number of puzzles >= 0, not {n}")
    if clues is not None and not MIN_UNIQUE_CLUES <= clues <= 81:
        raise ValueError(f"clues must be between {MIN_UNIQUE_CLUES} and 81, not {clues}")


def _chunk(
    first: int, count: int, seed: int, clues: int | None, accept: np.ndarray | None = None
) -> pl.DataFrame:
    """Candidates `first` .. `first + count - 1` of the corpus of `seed`, each from its own
    random stream; with `accept`, only those of these grades, and a `grade` column. `id` is the
    candidate's number (a graded corpus numbers its puzzles again)."""
    keys = puzzle_keys(seed, np.arange(first, first + count, dtype=np.uint64))
    solutions = _full_grids(keys)
    puzzles = _remove_in_order(solutions, _orders(_draws(keys, _ORDER, 81)), clues)
    numbers = np.arange(first, first + count, dtype=np.int64)
    grades = None
    if accept is not None:
        graded = grade_grids(puzzles).grades
        keep = accept[graded]
        puzzles, solutions, numbers, grades = (
            puzzles[keep],
            solutions[keep],
            numbers[keep],
            graded[keep],
        )
    frame = pl.DataFrame(
        {
            "id": numbers,
            "puzzle": pl.Series(format_grids(puzzles), dtype=pl.String),
            "solution": pl.Series(format_grids(solutions), dtype=pl.String),
            "clues": clue_counts(puzzles),
        }
    )
    if grades is None:
        return frame
    grade_column = pl.Series(GRADES, dtype=GRADE_TYPE).gather(grades.astype(np.uint32))
    return frame.with_columns(grade=grade_column)


Spec = tuple[int, int, int, int | None, np.ndarray | None]  # `_chunk`'s arguments


def _chunk_task(spec: Spec) -> tuple[int, pa.Table]:
    """A chunk made by a worker, with the number of the candidate after it."""
    return spec[0] + spec[1], _chunk(*spec).to_arrow()


def kernels(accept: np.ndarray | None) -> tuple[str, ...]:
    """The kernels generating calls (`run.warmup.KERNELS`): the grades' when filtering by them."""
    return ("fast", "clash", *(("rating",) if accept is not None else ()))


def _graded_ranges(seed: int, clues: int | None, accept: np.ndarray) -> Iterator[Spec]:
    """The candidate ranges of a graded corpus, for ever: growing, one ending at GRADE_TRIES."""
    start, size = 0, GRADED_FIRST
    while True:
        if start < GRADE_TRIES < start + size:
            size = GRADE_TRIES - start
        yield (start, size, seed, clues, accept)
        start += size
        size = min(2 * size, GRADED_CHUNK)


Mapper = Callable[..., Iterator[Any]]  # (fn, items, *args) -> fn(item, *args), in order


def generate_chunks(
    n: int,
    seed: int = 0,
    clues: int | None = None,
    workers: int | None = 1,
    grade: str | None = None,
    min_grade: str | None = None,
    map: Mapper | None = None,
) -> Iterator[pl.DataFrame]:
    """`generate`, a chunk of puzzles at a time, in order; with `workers` > 1 (or None: all
    cores) the chunks are made on worker threads, or by `map` (a job's run loop: its
    workers, started). Puzzle i is the same whatever `n` is."""
    check_request(n, clues, seed)
    accept = accepted_grades(grade, min_grade)
    if n == 0:
        return
    specs: Iterable[Spec] = (
        _graded_ranges(seed, clues, accept)
        if accept is not None
        else [(i, min(CHUNK, n - i), seed, clues, None) for i in range(0, n, CHUNK)]
    )
    if map is not None:
        yield from _frames(n, map(_chunk_task, specs), accept)
        return
    if workers == 1 or (accept is None and n <= CHUNK):
        executor: InlineExecutor | ThreadExecutor = InlineExecutor()
    else:
        executor = ThreadExecutor(workers, warm=partial(warm, kernels(accept)))
    try:
        yield from _frames(n, executor.map_ordered(_chunk_task, specs), accept)
        executor.close()
    finally:
        executor.terminate()


def _frames(
    n: int, chunks: Iterator[tuple[int, pa.Table]], accept: np.ndarray | None
) -> Iterator[pl.DataFrame]:
    """The chunks as frames: every one, or the first `n` candidates that grade right."""
    if accept is not None:
        yield from _first_graded(n, chunks, accept)
        return
    for _, table in chunks:
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        yield frame


def _first_graded(
    n: int, chunks: Iterator[tuple[int, pa.Table]], accept: np.ndarray
) -> Iterator[pl.DataFrame]:
    """The first `n` candidates that grade right, in candidate order, numbered from 0."""
    kept = 0
    for tried, table in chunks:
        frame = pl.from_arrow(table).head(n - kept)
        if frame.height:
            yield frame.with_columns(id=pl.int_range(kept, kept + frame.height, dtype=pl.Int64))
            kept += frame.height
        if kept >= n:
            return
        if kept == 0 and tried >= GRADE_TRIES:
            wanted = [g for g, ok in zip(GRADES, accept, strict=True) if ok]
            raise InputError(
                f"none of {tried:,} generated puzzles grades as "
                f"{' or '.join(wanted[:3])}{' ...' if len(wanted) > 3 else ''}: "
                "too rare to make a corpus of"
            )


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
        return no_puzzles(seed, clues, accepted_grades(grade, min_grade))
    return pl.concat(chunks)


def no_puzzles(seed: int, clues: int | None, accept: np.ndarray | None) -> pl.DataFrame:
    """A corpus of no puzzles: the columns alone, typed as those of a larger one."""
    return _chunk(0, 0, seed, clues, accept)

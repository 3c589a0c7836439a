"""One split written in HRM's layout (`io.hrm_folders`) from its sorted rows, the copies made on
worker threads while this thread writes.

    written = write_hrm_split(sorted_buckets, folder / "train", metadata, copies=8, seed=1,
                              workers=2, empty=frame_of_no_rows)

The rows come as `spill` sorts them (frames in the split's order, with the repeats each bucket
dropped); each row becomes a group of itself and `copies` random symmetric copies
(`jobs.augment.groups`, keyed by a hash of the puzzle and the seed: the same whatever the
workers or the chunks), its other columns written beside, one value per example.

Where the time goes, and why it is laid out so (1M rows x 8 copies, 8.1M examples, 1.3 GB of
cells): the copies are made `CHUNK_ROWS` rows at a time on `workers` threads (the kernel, the
parsing and numpy's gathers release the GIL), in arrays reused from chunk to chunk (`rooms`:
a new array's pages are zeroed by the system before use, which cost as much as making the
copies), as HRM's tokens by the kernel itself (`offset=1`: no more pass over the cells);
this thread appends the small columns in order, and `workers` writer threads (`HrmSet`) copy
the cells into the page cache at their place while the next chunks are made; the next bucket
is read and sorted on a thread of its own meanwhile.
Memory: the chunks in flight and being written, about 6 MiB each at K = 8.
"""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.grid import parse_puzzles
from pipeline.io.arrays import column_arrays
from pipeline.io.hrm_folders import HrmSet, encode_cells
from pipeline.jobs.augment.groups import grouped_copies
from pipeline.jobs.split.batch import GROUP, SOURCE
from pipeline.jobs.split.hashing import ROW_ORDER, hash_rows, string_bytes
from pipeline.run.executors import ThreadExecutor
from pipeline.symmetry_kernels import Copies, copies_room
from pipeline.waiting import result_of

CHUNK_ROWS = 4096  # input rows a worker makes into groups at a time
T = TypeVar("T")
COPY = "copy"  # the extra column: 0 for a row's own puzzle, 1..K for its copies
KEY = "__row_key"  # the rows' order keys (`hashing.ROW_ORDER`), as `spill` sorted them by


@dataclass
class HrmChunk:
    """A chunk's examples, ready to append: HRM's cells, group sizes, the extra columns."""

    inputs: np.ndarray  # (k, 81) uint8, digit + 1
    labels: np.ndarray  # (k, 81) uint8
    sizes: np.ndarray  # (rows,) examples per group
    extras: dict[str, Any]  # per example, as `io.arrays.column_arrays` gives them
    short: int  # rows with fewer distinct copies than asked
    room: Copies | None  # the arrays the copies were made in, to hand back when written


@dataclass
class HrmWritten:
    """What `write_hrm_split` wrote."""

    rows: int = 0  # input rows (groups)
    repeats: int = 0  # exact repeats the sorted buckets dropped
    examples: int = 0  # rows and their copies
    short: int = 0


def extras_of(frame: pl.DataFrame) -> pa.Table:
    """The columns written beside HRM's arrays, one row per input row: all but the grids,
    `group` as `canonical_group` (HRM's groups are the copies of one row), `source` as codes,
    and `copy` (0 here; the chunks give each copy its number)."""
    rest = frame.drop("puzzle", "solution", KEY, strict=False)
    rest = rest.rename({GROUP: "canonical_group"})
    if SOURCE in rest.columns and rest[SOURCE].dtype == pl.String:
        rest = rest.with_columns(pl.col(SOURCE).cast(pl.Categorical))
    rest = rest.with_columns(pl.lit(0, dtype=pl.Int32).alias(COPY))
    return rest.to_arrow(compat_level=pl.CompatLevel.oldest())


def hrm_chunk(
    item: tuple[pl.DataFrame, dict[str, Any], Copies | None], copies: int, seed: int
) -> HrmChunk:
    """A chunk of sorted rows (with their extra columns, as `column_arrays` gives them, and
    the room to make the copies in) made into groups: the unit of work of a worker thread.
    The rows' random streams are keyed by their order keys: the frame's `KEY` column when
    it has one (the sort's own, not hashed again), else hashed here."""
    frame, extras, room = item
    puzzle_column = frame["puzzle"].to_arrow()
    puzzles = parse_puzzles(puzzle_column).grids
    solutions = parse_puzzles(frame["solution"].to_arrow()).grids
    if KEY in frame.columns:
        keys = frame[KEY].to_numpy() >> np.uint64(1)
    else:
        keys = hash_rows(string_bytes(puzzle_column), seed, ROW_ORDER) >> np.uint64(1)
    grouped = grouped_copies(
        puzzles, solutions, keys.astype(np.int64), copies, seed, room=room, offset=1
    )  # HRM's tokens made by the kernel: no more pass over the copies
    examples = {name: _take(value, grouped.of_row) for name, value in extras.items()}
    examples[COPY] = grouped.copy
    inputs, labels = grouped.puzzles, grouped.solutions
    if not copies:  # the parsed grids themselves, our own arrays: encoded in place
        inputs, labels = encode_cells(inputs, out=inputs), encode_cells(labels, out=labels)
    return HrmChunk(inputs, labels, grouped.sizes, examples, grouped.short, room)


def _take(value: Any, rows: np.ndarray | slice) -> Any:
    """One column of `column_arrays`' form, its rows taken (codes keep their labels)."""
    if isinstance(value, tuple):
        first, second = value
        if isinstance(second, list):  # (codes, labels)
            return _take(first, rows), second
        return first[rows], second[rows]  # (values, valid)
    return value[rows]


def _prefetched(items: Iterator[T]) -> Iterator[T]:
    """`items`, the next one made on a thread of its own while the caller works on this one
    (a bucket read and sorted while the one before is made into copies)."""
    end = object()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(next, items, end)
        while (item := result_of(future)) is not end:
            future = pool.submit(next, items, end)
            yield item  # type: ignore[misc]


def write_hrm_split(
    sorted_buckets: Iterator[tuple[pl.DataFrame, int]],
    path: Path,
    metadata: dict[str, Any],
    *,
    copies: int,
    seed: int,
    workers: int,
    empty: pl.DataFrame,
) -> HrmWritten:
    """Write one split's rows (`sorted_buckets`, as `spill` sorts them; `empty`: a frame of
    their columns with no rows, for a split with none) to the folder `path` in HRM's layout,
    each row a group of itself and `copies` copies; see the module."""
    written = HrmWritten()
    buckets = _prefetched(sorted_buckets)
    first = next(buckets, None)
    schema = extras_of(first[0] if first is not None else empty).schema
    rooms: list[Copies] = []  # rooms whose cells are written, free again (this thread's)

    def chunks() -> Iterator[tuple[pl.DataFrame, dict[str, Any], Copies | None]]:
        for frame, repeats in chain([first], buckets) if first is not None else ():
            written.repeats += repeats
            extras = column_arrays(extras_of(frame))
            for start in range(0, len(frame), CHUNK_ROWS):
                part = slice(start, start + CHUNK_ROWS)
                room = None
                if copies:
                    room = rooms.pop() if rooms else copies_room(CHUNK_ROWS, copies + 1)
                yield frame[part], {k: _take(v, part) for k, v in extras.items()}, room

    executor = ThreadExecutor(workers)
    try:
        with HrmSet(path, schema, writers=workers) as out:
            for chunk in executor.map_ordered(hrm_chunk, chunks(), copies, seed):
                room = chunk.room
                out.append(
                    chunk.inputs,
                    chunk.labels,
                    chunk.sizes,
                    chunk.extras,
                    encoded=True,
                    then=None if room is None else partial(rooms.append, room),
                )
                written.rows += len(chunk.sizes)
                written.short += chunk.short
            out.commit(metadata)
            written.examples = out.examples
        executor.close()
    finally:
        executor.terminate()
    return written

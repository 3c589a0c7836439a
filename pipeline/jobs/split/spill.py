"""The kept rows of a split job on disk, not in memory: the parent holds only what the cut
needs (group, stratum, the row's order key: about 40 bytes a row with the cut's own).

    kept = KeptRows(tmp / SPILL, options, source_names)   # in the output's temporary folder
    kept.add(part.table)                                   # as the batches come, in order
    split_of, groups, strata = kept.cut()
    written = write_splits(kept, split_of, tmp, "parquet", metadata)   # rows, repeats left out
    kept.remove()

How a split larger than memory is shuffled: its rows are ordered by their key (a hash of
(seed, puzzle): `hashing.ROW_ORDER`), then by position, as `plan_split` orders them. The
kept rows are read back a spilled part at a time and routed to `B` bucket files per split by
the key's top bits (`B` a power of two, so that a bucket is about `BUCKET_BYTES`); the
buckets, in order, are the key order, and each is sorted in memory, its exact repeats (all in
one bucket: same puzzle, same key) dropped there, the first in input order kept. The sorted
buckets are written as they come, through the one writer (`io.writers.TableWriter`):
Parquet, `<name>.parquet`, row groups of at least `ROW_GROUP_ROWS`; npy, appended to the
folder's arrays (`io.arrays`); hrm: the same, as HRM's layout (`hrm_writer`), each row of the
training split (the first) a group of itself and its copies, made on worker threads (keyed by
the row's order key: the same whatever the workers).
With a subsample, the training split is its first rows in that order (later buckets are
still read, to count their repeats).

Memory: the parent's peak is the run loop's; the cut adds about 40 bytes a row for a moment,
the writing one bucket at a time (held as Arrow, as polars, filtered and gathered: hence
buckets of `BUCKET_BYTES`; the figures are in docs/BENCHMARKS.md, "Split"). The disk holds the
kept rows about once more (lz4 Arrow files), a part deleted as soon as it is routed, a bucket
as soon as it is sorted.

Everything lives in the output's temporary folder (`.NAME.tmp-PID`), which the next run
clears when a killed run leaves it. Kept rows that fit `MEMORY_BYTES` (as Arrow) are held in
memory instead, parts and buckets alike, the same buckets in the same order (the same bytes
written): the spill's lz4, written and read back twice, cost ~1 CPU s per 1M rows, and its
files as much again in the system's copies (measured: split --format hrm, 1M rows, perf). The
first part past that size sends every part held so far to its file, and the rest follows.
"""

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.hrm_folders import MAX_EXAMPLES, write_identifiers
from pipeline.io.writers import TableWriter, Target, read_spool, spool
from pipeline.jobs.split.batch import GROUP, SOURCE
from pipeline.jobs.split.folder import files_of, written_files
from pipeline.jobs.split.hashing import ROW_ORDER, hash_rows, string_bytes
from pipeline.jobs.split.hrm_writer import KEY, write_hrm_split
from pipeline.jobs.split.manifest import Digests
from pipeline.jobs.split.options import SplitOptions
from pipeline.jobs.split.plan import cut, small_columns

SPILL = ".kept"  # the spilled parts and buckets, inside the output's temporary folder
BUCKET_BYTES = 16 << 20  # the rows of one bucket, sorted in memory at a time (see below)
MEMORY_BYTES = 512 << 20  # kept rows held in memory up to this size (Arrow), not spilled
MAX_BUCKET_BITS = 10  # at most 1,024 buckets (open files) a split: larger ones past 16 GiB
ROW_GROUP_ROWS = 100_000  # a Parquet split's row groups (the last one shorter)
POSITION = "__position"


class KeptRows:
    """The kept rows of every batch, in input order: their columns in Arrow files under
    `folder`, their small columns (group, stratum, order key) in memory."""

    def __init__(
        self,
        folder: Path,
        options: SplitOptions,
        sources: list[str] | None,
        memory: int | None = None,
    ) -> None:
        self.folder = folder
        self.options = options
        self.sources = sources  # the inputs' names when several (`source` made a name)
        self.memory = MEMORY_BYTES if memory is None else memory  # bytes held, not spilled
        self.parts: list[tuple[Path | pa.Table, int]] = []  # (file, or the rows held; rows)
        self.schema: pa.Schema | None = None
        self.rows = 0
        self.bytes = 0
        self._small: list[pl.DataFrame] = []
        self._keys: list[np.ndarray] = []
        folder.mkdir()

    def add(self, table: pa.Table) -> None:
        """Spill one batch's kept rows (in input order after those added before). A column
        whose type differs from an earlier batch's (a `rating` with a fraction after whole
        ones) takes the type that holds both, for every row (`_route` casts them)."""
        if self.schema is None:
            self.schema = table.schema
        elif not table.schema.equals(self.schema):
            self.schema = pa.unify_schemas(
                [self.schema, table.schema], promote_options="permissive"
            )
        if table.num_rows == 0:
            return
        if self.in_memory and self.bytes + table.nbytes <= self.memory:
            self.parts.append((table, table.num_rows))
        else:
            self._spill_held()
            self.parts.append((self._spill(len(self.parts), table), table.num_rows))
        small = pl.from_arrow(table.select(small_columns(self.options)))
        assert isinstance(small, pl.DataFrame)
        self._small.append(small)
        self._keys.append(
            hash_rows(string_bytes(table.column("puzzle")), self.options.seed, ROW_ORDER)
        )
        self.rows += table.num_rows
        self.bytes += table.nbytes

    @property
    def in_memory(self) -> bool:
        """Whether every part is held in memory (none spilled to a file yet)."""
        return all(isinstance(part, pa.Table) for part, _ in self.parts)

    def _spill(self, number: int, table: pa.Table) -> Path:
        path = self.folder / f"part-{number:06d}.arrow"
        with spool(path, table.schema) as out:
            out.write_table(table)
        return path

    def _spill_held(self) -> None:
        """The parts held in memory, written to their files (the budget is spent)."""
        for i, (part, n) in enumerate(self.parts):
            if isinstance(part, pa.Table):
                self.parts[i] = (self._spill(i, part), n)

    def cut(self) -> tuple[np.ndarray, dict[str, int], dict[str, dict[str, int]]]:
        """Each kept row's split, and the groups per split and stratum (`plan.cut`)."""
        if self._small:
            small = pl.concat(self._small, rechunk=True)
        else:
            small = pl.DataFrame(schema={c: pl.Int64 for c in small_columns(self.options)})
        self._small = []
        return cut(small, self.options)

    @property
    def keys(self) -> np.ndarray:
        """The rows' order keys (uint64), in input order."""
        if len(self._keys) != 1:
            self._keys = [np.concatenate(self._keys) if self._keys else np.zeros(0, np.uint64)]
        return self._keys[0]

    def frame(self, table: pa.Table) -> pl.DataFrame:
        """Spilled rows as the split writes them: `source` made its input's name."""
        return frame_of(table, self.sources)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def frame_of(table: pa.Table, sources: list[str] | None) -> pl.DataFrame:
    """Kept rows as the split writes them: `source` made its input's name (`sources`: the
    inputs' names, when several)."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    if sources is not None:
        names = pl.Series(sources, dtype=pl.String)
        frame = frame.with_columns(names.gather(frame[SOURCE].cast(pl.UInt32)).alias(SOURCE))
    return frame


@dataclass
class Written:
    """What `write_splits` wrote: rows per split, exact repeats left out, and what became of
    the training split (its rows before a subsample, its groups after; HRM's examples)."""

    rows: dict[str, int] = field(default_factory=dict)
    repeats: int = 0
    subsampled_from: int | None = None
    train_groups: int | None = None  # canonical groups in the subsampled training split
    examples: dict[str, int] = field(default_factory=dict)  # hrm: examples per split
    short: int = 0  # hrm: training rows with fewer distinct copies than asked


def write_splits(
    kept: KeptRows,
    split_of: np.ndarray,
    folder: Path,
    fmt: str,
    metadata: dict[str, Any],
    workers: int = 1,
    digests: Digests | None = None,
) -> Written:
    """Write each split of `kept` (`split_of`: each row's) into `folder` as `fmt` (parquet,
    npy or hrm); returns what was written (`Written`). `workers`: threads that make HRM's
    copies (`hrm_writer`). `digests`: each split's files handed over as soon as it is written
    (their sha256 taken while the next split is written)."""
    options = kept.options
    names = options.names
    sizes = [int((split_of == s).sum()) for s in range(len(names))]
    if fmt == "hrm":
        check_hrm_room(options, sizes)
        write_identifiers(folder)
    bits = [bucket_bits(size, kept.bytes / max(kept.rows, 1)) for size in sizes]
    buckets = _route(kept, split_of, bits)
    written = Written()
    for s, name in enumerate(names):
        in_order = [buckets.get((s, b)) for b in range(1 << bits[s])]
        sorted_buckets = _sorted(kept, in_order, with_keys=fmt == "hrm")
        limited = s == 0 and options.subsample is not None
        if limited:
            sorted_buckets = _first_rows(sorted_buckets, options.subsample, written)
        if fmt == "parquet":
            target = Target(folder / f"{name}.parquet", "parquet")
            written.rows[name], dropped = _write_table(kept, sorted_buckets, target, metadata)
        elif fmt == "npy":
            target = Target(folder / name, "npy")
            written.rows[name], dropped = _write_table(kept, sorted_buckets, target, metadata)
        else:
            hrm = write_hrm_split(
                sorted_buckets,
                folder / name,
                metadata,
                seed=options.seed,
                copies=options.augment if s == 0 else 0,
                workers=workers,
                empty=_empty(kept),
            )
            written.rows[name], dropped = hrm.rows, hrm.repeats
            written.examples[name] = hrm.examples
            written.short += hrm.short
        written.repeats += dropped
        if digests is not None:
            digests.start(written_files(folder, files_of([name], fmt)))
    return written


def check_hrm_room(options: SplitOptions, sizes: list[int]) -> None:
    """Past HRM's int32 indices, said before any file is written (`sizes`: each split's
    rows)."""
    most = min(sizes[0], options.subsample or sizes[0]) * (options.augment + 1)
    if most > MAX_EXAMPLES:
        raise InputError(
            f"{options.names[0]} would hold up to {most:,} examples, more than the "
            f"{MAX_EXAMPLES:,} HRM's int32 indices count: ask fewer --augment copies or a "
            "--subsample"
        )


def _first_rows(
    sorted_buckets: Iterator[tuple[pl.DataFrame, int]], limit: int, written: Written
) -> Iterator[tuple[pl.DataFrame, int]]:
    """The first `limit` rows of the sorted buckets (a random sample: they are in key order);
    the buckets past it read on only for their repeats. Notes the rows there were, and the
    canonical groups kept, in `written`."""
    total, groups = 0, []
    for frame, repeats in sorted_buckets:
        room = max(limit - total, 0)
        total += len(frame)
        taken = frame.head(room)
        if len(taken):
            groups.append(taken[GROUP])
        yield taken, repeats
    written.subsampled_from = total
    written.train_groups = pl.concat(groups).n_unique() if groups else 0


def bucket_bits(rows: int, row_bytes: float) -> int:
    """log2 of the buckets a split of `rows` rows of `row_bytes` each needs for a bucket to be
    `BUCKET_BYTES`."""
    size = rows * row_bytes
    return min(MAX_BUCKET_BITS, max(0, int(np.ceil(np.log2(max(size / BUCKET_BYTES, 1))))))


def bucket_codes(keys: np.ndarray, splits: np.ndarray, bits: list[int]) -> np.ndarray:
    """Each row's (split, bucket) as one int64, `split << 32 | bucket`: the bucket is the top
    `bits[split]` bits of the row's order key (`keys`), so the buckets in order are the key
    order."""
    shift = np.array([64 - b for b in bits], np.uint64)[splits]
    bucket = np.where(shift < 64, keys >> np.minimum(shift, 63), 0)
    return (splits.astype(np.int64) << 32) | bucket.astype(np.int64)


Bucket = Path | list[pa.Table]  # a bucket's file, or its rows held in memory


def _route(kept: KeptRows, split_of: np.ndarray, bits: list[int]) -> dict[tuple[int, int], Bucket]:
    """Read the spilled parts back one at a time and append each row, with its position, to
    its split's bucket file (held in memory, a list of tables, when the parts are); returns
    the buckets written, by (split, bucket)."""
    keys = kept.keys
    held = kept.in_memory
    writers: dict[tuple[int, int], pa.ipc.RecordBatchFileWriter] = {}
    paths: dict[tuple[int, int], Bucket] = {}
    start = 0
    with ExitStack() as files:
        for p, (path, n) in enumerate(kept.parts):
            if isinstance(path, Path):
                table = read_spool(path)
            else:
                table = path
                kept.parts[p] = (kept.folder, n)  # routed: the rows held let go
            if not table.schema.equals(kept.schema):
                table = table.cast(kept.schema)
            table = table.append_column(POSITION, pa.array(np.arange(start, start + n)))
            code = bucket_codes(keys[start : start + n], split_of[start : start + n], bits)
            order = np.argsort(code, kind="stable")  # within a bucket, input order kept
            codes, firsts = np.unique(code[order], return_index=True)
            for c, lo, hi in zip(codes, firsts, [*firsts[1:], n], strict=True):
                where = (int(c) >> 32, int(c) & 0xFFFFFFFF)
                rows = table.take(order[lo:hi])
                routed = paths.get(where)
                if isinstance(routed, list):
                    routed.append(rows)
                elif held:
                    paths[where] = [rows]
                else:
                    if where not in writers:
                        paths[where] = kept.folder / f"bucket-{where[0]}-{where[1]:06d}.arrow"
                        writers[where] = files.enter_context(spool(paths[where], table.schema))
                    writers[where].write_table(rows)
            if isinstance(path, Path):
                path.unlink()  # routed: its disk space given back
            start += n
    return paths


def _sorted(
    kept: KeptRows, buckets: list[Bucket | None], with_keys: bool = False
) -> Iterator[tuple[pl.DataFrame, int]]:
    """Each bucket's rows by key then position, exact repeats dropped (with their count);
    `with_keys`: their keys too, as a column `KEY` (HRM's copies are keyed by them)."""
    keys = kept.keys
    for bucket in buckets:
        if bucket is None:
            continue
        if isinstance(bucket, list):
            frame = kept.frame(pa.concat_tables(bucket))
            bucket.clear()  # sorted: its rows let go with the frame
        else:
            frame = kept.frame(read_spool(bucket))
            bucket.unlink()
        yield sort_bucket(frame, keys[frame[POSITION].to_numpy()], with_keys)


def sort_bucket(
    frame: pl.DataFrame, keys: np.ndarray, with_keys: bool = False
) -> tuple[pl.DataFrame, int]:
    """A bucket's rows (in input order, with their `POSITION`; `keys`: each row's order key)
    by key then position, exact repeats dropped (the first in input order kept); and how many
    were dropped. `with_keys`: the keys kept as a column `KEY` (HRM's copies are keyed by
    them)."""
    first = frame["puzzle"].is_first_distinct().to_numpy()
    frame, keys = frame.filter(first), keys[first]
    order = np.lexsort((frame[POSITION].to_numpy(), keys))
    frame = frame[order].drop(POSITION)
    if with_keys:
        frame = frame.with_columns(pl.Series(KEY, keys[order], pl.UInt64))
    return frame, int(len(first) - first.sum())


def _empty(kept: KeptRows) -> pl.DataFrame:
    assert kept.schema is not None
    return kept.frame(kept.schema.empty_table())


def arrow_of(frame: pl.DataFrame) -> pa.Table:
    """Written rows as the Arrow table a split's file holds."""
    return frame.to_arrow(compat_level=pl.CompatLevel.oldest())


def _write_table(
    kept: KeptRows,
    sorted_buckets: Iterator[tuple[pl.DataFrame, int]],
    target: Target,
    metadata: dict[str, Any],
) -> tuple[int, int]:
    """One split, its sorted buckets written as they come (`io.writers.TableWriter`: Parquet
    row groups of at least `ROW_GROUP_ROWS`, or a folder of arrays); returns its rows and
    the exact repeats left out."""
    out = TableWriter(target, arrow_of(_empty(kept)).schema, ROW_GROUP_ROWS)
    dropped = 0
    try:
        for frame, repeats in sorted_buckets:
            out.add(arrow_of(frame))
            dropped += repeats
        return out.commit(metadata), dropped
    finally:
        out.close()

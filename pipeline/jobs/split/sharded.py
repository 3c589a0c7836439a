"""split on Dask with no row through the client: the workers read their own slices, keep their
rows, shuffle them into the splits' buckets among themselves and write the splits' parts; the
client holds only the cut's small columns.

    sharded = ShardedSplit(run, options, search, sources)   # in `job._run`, when `run.sliced`
    read, wrong = sharded.keep(by_input, left_out)          # round 1: the rows kept
    split_of, groups, strata = sharded.cut()                # here: the cut's small columns
    written = sharded.write(split_of, tmp, metadata, empty, fmt)  # rounds 2-4, the splits
    sums = sharded.digests([...])                           # each file's sha256, on a worker

The rounds of tasks, each writing into the checkpoint folder beside the output (`<output>
.partial/`, which every worker sees: `run.sliced` checked it before any work):

1. **keep**, a task a slice: each batch solved, grouped and rated as on one machine
   (`batch.split_record_batch`); the slice's kept rows into `shard-kept-NNNNNN.arrow`, and
   back to the client only their small columns (group, stratum: about 8-16 bytes a row) and
   the counts of the rows left out.
2. **route**, a task a slice (the client sends each its rows' splits): its kept rows cut into
   the splits' buckets by the top bits of their order key (a hash of seed and puzzle, as on
   one machine: `spill`), one record batch a bucket (`shard-routed-...`).
3. **sort**, a task a bucket: that bucket's rows from every slice, in input order, sorted by
   key, exact repeats dropped (`spill.sort_bucket`), written as a part (`shard-part-...`:
   Parquet; or a folder of arrays' part, `run.join_arrays`, each row in HRM's layout a group
   of itself and its copies, `hrm_writer.hrm_chunk`); with `--subsample`, the training
   split's buckets are kept sorted instead (`shard-sorted-...`) and
4. **take**, a task a bucket of the training split that the subsample reaches: its first rows
   (as many as the buckets before it leave room for) written as a part.

Then the client joins each split's Parquet parts, in bucket order, by their footers (the
rows of a split in key order, as one machine writes them; a row group a bucket, not 100,000
rows), or has the workers lay out a folder of arrays' parts in its files (`join_arrays`),
and the workers take the sha256 of the inputs and of the splits' files. The splits, their rows and
order, and the manifest's counts are a local run's; the client reads no row and holds about
8-16 bytes a kept row (the small columns) while it cuts.
"""

from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.io.arrays import column_arrays
from pipeline.io.dataset import Dataset
from pipeline.io.hrm_folders import HrmArrays
from pipeline.io.remote import remote_digest
from pipeline.io.url_slices import UrlFile
from pipeline.io.writers import EXTENSIONS, PartWriter, Target, encode
from pipeline.jobs.solve.batch import SolveOptions
from pipeline.jobs.split.batch import GROUP, split_record_batch
from pipeline.jobs.split.hashing import ROW_ORDER, hash_rows, string_bytes
from pipeline.jobs.split.hrm_writer import extras_of, hrm_chunk
from pipeline.jobs.split.manifest import sha256_of
from pipeline.jobs.split.options import SplitOptions
from pipeline.jobs.split.plan import cut, small_columns
from pipeline.jobs.split.spill import (
    POSITION,
    Written,
    arrow_of,
    bucket_bits,
    bucket_codes,
    check_hrm_room,
    frame_of,
    sort_bucket,
)
from pipeline.run.join_arrays import array_part_of, finish, lay_out
from pipeline.run.loop import Run
from pipeline.run.scratch import (
    clear,
    keep,
    read_batch,
    read_table,
    scratch_name,
    write_batches,
)
from pipeline.run.sliced import Planned, planned_batches


class SliceKept(NamedTuple):
    """What round 1 sends back for a slice: its input rows, the rows it kept (their small
    columns, their bytes, their schema) and the rows it left out, by reason."""

    index: int
    source: int
    rows: int
    kept: int
    nbytes: int
    small: pa.Table
    schema: pa.Schema
    left_out: Counter
    wrong: int


class Bucket(NamedTuple):
    """What round 3 sends back for a bucket: its rows (repeats dropped), the repeats, and
    its part (None: no rows, or kept sorted for the subsample)."""

    number: int
    rows: int
    repeats: int
    part: str | None
    examples: int = 0  # hrm: the rows and their copies
    short: int = 0  # hrm: rows with fewer distinct copies than asked


class ShardedSplit:
    """The client's side of a split on Dask (see the module)."""

    def __init__(
        self, run: Run, options: SplitOptions, search: SolveOptions, sources: list[str] | None
    ) -> None:
        assert run.slicer is not None and run.job.inputs is not None
        self.run, self.options, self.search, self.sources = run, options, search, sources
        self.slicer = run.slicer
        self.folder = Path(run.slicer.folder)
        self.executor = run.job.executor
        self.kept: list[SliceKept] = []  # by slice, in input order
        self.schema: pa.Schema | None = None  # the kept rows' (None: no slice)

    def keep(self, by_input: Counter, left_out: Counter) -> tuple[int, int]:
        """Round 1; the input rows read and the kept rows whose input solution is wrong.
        Counts the rows read of each input into `by_input`, those left out into `left_out`."""
        bar = self.run.show_progress()
        bar.total = self.slicer.rows
        several = self.run.job.inputs is not None and self.run.job.inputs.several
        args = (self.search, self.options.min_rating, several, small_columns(self.options))
        found = []
        for kept in self.slicer.each(_keep_slice, *args):
            found.append(kept)
            bar.update(kept.rows)
        self.kept = sorted(found, key=lambda k: k.index)
        read = wrong = 0
        for kept in self.kept:
            by_input[kept.source] += kept.rows
            left_out.update(kept.left_out)
            read += kept.rows
            wrong += kept.wrong
        if self.kept:
            self.schema = pa.unify_schemas(
                [k.schema for k in self.kept], promote_options="permissive"
            )
        return read, wrong

    def cut(self) -> tuple[np.ndarray, dict[str, int], dict[str, dict[str, int]]]:
        """Each kept row's split (in input order), and the groups per split and stratum."""
        smalls = [pl.from_arrow(k.small) for k in self.kept if k.kept]
        if smalls:
            small = pl.concat(smalls, rechunk=True)
        else:
            small = pl.DataFrame(schema={c: pl.Int64 for c in small_columns(self.options)})
        assert isinstance(small, pl.DataFrame)
        return cut(small, self.options)

    def write(
        self,
        split_of: np.ndarray,
        folder: Path,
        metadata: dict[str, Any],
        empty: pa.Table,
        fmt: str = "parquet",
    ) -> Written:
        """Rounds 2-4, then each split made in `folder` in `fmt` (`<name>.parquet`, joined
        here; or the folder of arrays `<name>/`, written by the workers) with the run's
        `metadata` (`empty`: the kept rows' table of no rows, for a schema when no slice
        kept any). What was written, as `spill.write_splits` says it."""
        options = self.options
        names = options.names
        schema = self.schema or empty.schema
        nothing = frame_of(schema.empty_table(), self.sources)
        out = arrow_of(nothing).schema  # as written
        kept_rows = sum(k.kept for k in self.kept)
        row_bytes = sum(k.nbytes for k in self.kept) / max(kept_rows, 1)
        sizes = np.bincount(split_of.astype(np.int64), minlength=len(names))
        if fmt == "hrm":
            check_hrm_room(options, [int(size) for size in sizes])
        copies = options.augment if fmt == "hrm" else 0  # the training split's, in HRM's
        bits = [bucket_bits(int(size), row_bytes) for size in sizes]
        firsts = np.cumsum([0, *(1 << b for b in bits)]).tolist()  # each split's first bucket
        slices = [k for k in self.kept if k.kept]
        starts = np.cumsum([0, *(k.kept for k in slices)]).tolist()
        routes = [
            (self.folder, k.index, split_of[starts[i] : starts[i + 1]], bits, options.seed,
             starts[i], schema)
            for i, k in enumerate(slices)
        ]  # fmt: skip
        for _ in self.executor.map_unordered(_route_slice, routes):
            pass
        subsample = options.subsample
        indices = [k.index for k in slices]
        sorts = [
            (self.folder, number, indices, options.seed, self.sources, out,
             subsample is not None and number < firsts[1], fmt,
             copies if number < firsts[1] else 0)
            for number in range(firsts[-1])
        ] if slices else []  # fmt: skip
        buckets = {b.number: b for b in self.executor.map_unordered(_sort_bucket, sorts)}
        written = Written()
        if subsample is not None:
            self._take(buckets, firsts[1], subsample, written, (out, fmt, copies, options.seed))
        read = [  # every round's scratch, read by now: deleted on the workers
            [self.folder / scratch_name("kept", i), self.folder / scratch_name("routed", i)]
            for i in indices
        ]
        if subsample is not None:
            read.append([self.folder / scratch_name("sorted", n) for n in range(firsts[1])])
        for _ in self.executor.map_unordered(clear, read):
            pass
        for s, name in enumerate(names):
            parts = [buckets[n] for n in range(firsts[s], firsts[s + 1]) if n in buckets]
            written.rows[name] = sum(b.rows for b in parts)
            written.repeats += sum(b.repeats for b in parts)
            if fmt != "parquet":  # a folder of arrays: its rows written by the workers
                paths = [self.folder / b.part for b in parts if b.part is not None]
                columns = extras_of(nothing).schema if fmt == "hrm" else out
                mapper = self.executor.map_unordered
                made = lay_out(paths, folder / name, fmt, columns, mapper)
                finish(made, folder / name, fmt, metadata)
                if fmt == "hrm":
                    written.examples[name] = sum(b.examples for b in parts)
                    written.short += sum(b.short for b in parts)
                continue
            # the one writer's join of Parquet parts (by their footers; fsynced, renamed)
            writer = PartWriter(Target(folder / f"{name}.parquet", "parquet"))
            try:
                for bucket in parts:
                    if bucket.part is not None:
                        writer.add(self.folder / bucket.part, bucket.rows)
                writer.commit(written.rows[name], out.empty_table(), metadata)
            finally:
                writer.close()
        return written

    def _take(
        self,
        buckets: dict[int, Bucket],
        count: int,
        subsample: int,
        written: Written,
        making: tuple[pa.Schema, str, int, int],
    ) -> None:
        """Round 4: the training split's first `subsample` rows, from its sorted buckets
        (`count` of them), made its parts (`making`: as `_part_of` makes them); its rows and
        groups noted in `written`."""
        room, takes = subsample, []
        total = 0
        for number in range(count):
            bucket = buckets.get(number)
            if bucket is None:
                continue
            total += bucket.rows
            take = min(room, bucket.rows)
            room -= take
            if take:
                takes.append((self.folder, number, take, making))
            buckets[number] = bucket._replace(rows=take)
        groups = []
        for number, made, group_ids in self.executor.map_unordered(_take_rows, takes):
            buckets[number] = made._replace(repeats=buckets[number].repeats)
            groups.append(group_ids)
        written.subsampled_from = total
        written.train_groups = len(np.unique(np.concatenate(groups))) if groups else 0

    def digests(self, files: list[Path | UrlFile]) -> dict[Path | UrlFile, tuple[int, str]]:
        """The size and sha256 of each file (a path every worker sees, or a URL), each taken
        on a worker."""
        sent = [(i, f.resolve() if isinstance(f, Path) else f) for i, f in enumerate(files)]
        return {files[i]: sized for i, sized in self.executor.map_unordered(_digest, sent)}


# --- on the workers ------------------------------------------------------------------------


def _keep_slice(item: tuple[Any, ...]) -> SliceKept:
    """Round 1: a slice's rows solved, grouped and rated; its kept rows into the scratch."""
    ds: Dataset = item[0]
    planned: Planned = item[1]
    batch_size, folder, search, min_rating, several, small_names = item[2:]
    source = planned.piece.source
    tables, left_out, wrong, rows = [], Counter(), 0, 0
    for batch in planned_batches(ds, planned, batch_size, folder):
        part = split_record_batch(batch, search, source if several else None, min_rating)
        tables.append(part.table)
        left_out.update(part.left_out)
        wrong += part.wrong_solutions
        rows += part.rows
    kept = pa.concat_tables(tables, promote_options="permissive")
    kept = kept.unify_dictionaries().combine_chunks()
    if kept.num_rows:
        write_batches(Path(folder) / scratch_name("kept", planned.index), [kept])
    small = kept.select(small_names)
    return SliceKept(
        planned.index, source, rows, kept.num_rows, kept.nbytes, small, kept.schema, left_out,
        wrong,
    )  # fmt: skip


def _route_slice(item: tuple[Any, ...]) -> None:
    """Round 2: a slice's kept rows, with their positions, cut into the splits' buckets, one
    record batch a bucket (of every split, in order)."""
    folder, index, splits, bits, seed, start, schema = item
    table = read_table(folder / scratch_name("kept", index), schema)
    table = table.unify_dictionaries().combine_chunks()
    table = table.append_column(POSITION, pa.array(np.arange(start, start + table.num_rows)))
    keys = hash_rows(string_bytes(table.column("puzzle")), seed, ROW_ORDER)
    code = bucket_codes(keys, np.asarray(splits), bits)
    order = np.argsort(code, kind="stable")  # within a bucket, input order kept
    ordered = code[order]
    rows = table.to_batches()[0]
    batches = []
    codes = [(split << 32) | b for split, size in enumerate(bits) for b in range(1 << size)]
    for c in codes:  # every bucket of every split, in order: round 3 reads batch number
        lo, hi = np.searchsorted(ordered, [c, c + 1]).tolist()
        batches.append(rows.take(pa.array(order[lo:hi])))
    write_batches(folder / scratch_name("routed", index), batches)


def _sort_bucket(item: tuple[Any, ...]) -> Bucket:
    """Round 3: a bucket's rows from every slice, sorted, repeats dropped; a part in `fmt`
    (or, `keep_sorted`, an Arrow scratch for round 4)."""
    folder, number, indices, seed, sources, out, keep_sorted, fmt, copies = item
    table = pa.Table.from_batches(
        [read_batch(folder / scratch_name("routed", i), number) for i in indices]
    )
    if not table.num_rows:
        return Bucket(number, 0, 0, None)
    keys = hash_rows(string_bytes(table.column("puzzle")), seed, ROW_ORDER)
    frame, repeats = sort_bucket(frame_of(table, sources), keys, with_keys=fmt == "hrm")
    if keep_sorted:
        write_batches(folder / scratch_name("sorted", number), [arrow_of(frame)])
        return Bucket(number, len(frame), repeats, None)
    return _part_of(frame, folder, number, (out, fmt, copies, seed))._replace(repeats=repeats)


def _take_rows(item: tuple[Any, ...]) -> tuple[int, Bucket, np.ndarray]:
    """Round 4: a sorted bucket's first `take` rows made a part; their group ids."""
    folder, number, take, making = item
    rows = read_table(folder / scratch_name("sorted", number)).slice(0, take)
    frame = pl.from_arrow(rows)
    assert isinstance(frame, pl.DataFrame)
    return number, _part_of(frame, folder, number, making), frame[GROUP].to_numpy()


def _part_of(
    frame: pl.DataFrame, folder: Path, number: int, making: tuple[pa.Schema, str, int, int]
) -> Bucket:
    """A bucket's rows, sorted, kept as a part of its split (`making`: the split's schema
    as written, its format, the copies of each row in HRM's layout, the seed): a Parquet
    file, or a folder of arrays' part (`run.join_arrays`), each row a group of itself and
    its copies in HRM's (`hrm_writer.hrm_chunk`, the local run's)."""
    out, fmt, copies, seed = making
    examples, short = len(frame), 0
    if fmt == "hrm":
        chunk = hrm_chunk((frame, column_arrays(extras_of(frame)), None), copies, seed)
        data = array_part_of(HrmArrays(chunk.inputs, chunk.labels, chunk.sizes, chunk.extras))
        examples, short = len(chunk.inputs), chunk.short
    else:
        rows = arrow_of(frame).cast(out)
        data = encode(rows, "parquet") if fmt == "parquet" else array_part_of(column_arrays(rows))
    name = scratch_name("part", number, EXTENSIONS[fmt])
    keep(folder / name, data)
    return Bucket(number, len(frame), 0, name, examples, short)


def _digest(item: tuple[int, Path | UrlFile]) -> tuple[int, tuple[int, str]]:
    """A file's size and sha256 (a path, or a URL read from its start), with its index."""
    index, file = item
    if isinstance(file, UrlFile):
        return index, remote_digest(file.open(seeking=False))
    return index, (file.stat().st_size, sha256_of(file))

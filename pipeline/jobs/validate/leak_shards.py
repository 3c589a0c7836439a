"""The leak audit (`validate TEST --against TRAIN...`) on Dask with no row through the client:
hash-partitioned among the workers beside the repeats (`sharded`), in the same checkpoint
folder and the same shards (a key's top bits).

    audit = plan_audit(slicer, train)        # the TRAIN inputs cut into slices and counted
    ...                                       # (`sharded.validate_sharded` runs the rounds)
    summary.against == audit.summary()

What each round adds (numbered as `sharded`'s):

1. **checks**, one task a TEST slice: beside the keys, each 81-cell puzzle's form key, row,
   id, and its puzzle and form packed (`packed_cells`, 96 bytes), one record batch a shard
   (`shard-probes-N`; `write_probes`).
   **train**, one task a TRAIN slice (`train_slice`: the slicing the input gets, Parquet row
   groups or text byte ranges, every TRAIN input in the order given): the same of each of its
   81-cell puzzles, the row numbered across the TRAIN inputs (`shard-train-N`), and the
   slice's rows, malformed rows (the first with their messages) and pencilmark rows counted.
2. **leaks**, one task a shard (`leaks_of_shard`): the TEST rows whose form key a TRAIN row of
   the shard has, confirmed word for word against those rows (`leaks.first_copies`: no hash
   trusted; every copy of a puzzle, exact or in disguise, has its form's key and so is in the
   shard), each with the first TRAIN row holding it exactly, else in disguise, into
   `shard-leaks-N`, one record batch a TEST slice, by row.
3. **findings**, one task a TEST slice: its leaks from every shard's file (`slice_leaks`), put
   in place as the repeats are.

The client holds the plan and, per TRAIN input, its counts and first malformed rows: no key
and no row. A shard task memory-maps its files and holds the shard's keys (16 bytes a row)
and the packed words of the rows whose keys hit only.
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.canonical_forms import canonical_grids
from pipeline.grid import parse_puzzles
from pipeline.io.dataset import Dataset, optional_column
from pipeline.io.inputs import Inputs
from pipeline.jobs.validate.duplicates import packed_cells, packed_keys
from pipeline.jobs.validate.leaks import EXAMPLES, Leaks, TrainInput, first_copies
from pipeline.run.scratch import scratch_name, write_batches
from pipeline.run.sliced import Planned, SlicedRun, planned_batches

TRAIN, PROBES, LEAKS = "train", "probes", "leaks"  # the scratch files' kinds
_WORDS = 12  # a puzzle and its form, packed


class TrainSlice(NamedTuple):
    """What a TRAIN slice's task sends back: what its rows held (as `leaks.train_keys`)."""

    source: int
    rows: int
    malformed: int
    examples: list[dict[str, Any]]  # the first malformed rows: row (in its input), message
    pencilmarks: int


@dataclass
class ShardedAudit:
    """The client's side of the audit: the TRAIN slices, and what the summary says."""

    names: list[str]
    planned: list[Planned]
    recipes: list[Dataset]
    offsets: list[int]  # the first row of each TRAIN input among them all; then their rows
    inputs: list[TrainInput] = field(default_factory=list)
    pencilmarks: int = 0  # TEST's pencilmark rows, skipped
    exact: int = 0
    in_disguise: int = 0

    @property
    def rows(self) -> int:
        return self.offsets[-1]

    @property
    def indices(self) -> list[int]:
        return [p.index for p in self.planned]

    def summary(self) -> dict[str, Any]:
        """What the summary says of the audit (`leaks.LeakAudit.summary`'s)."""
        return {
            "train": [asdict(i) for i in self.inputs],
            "leaks": self.exact + self.in_disguise,
            "exact": self.exact,
            "in_disguise": self.in_disguise,
            "pencilmarks_skipped": self.pencilmarks,
        }


def plan_audit(slicer: SlicedRun, train: Inputs) -> ShardedAudit:
    """The TRAIN inputs cut into slices and counted (the workers checked to see them)."""
    planned, recipes = slicer.plan_more(train)
    rows = [0] * len(train.names)
    for p in planned:
        rows[p.piece.source] += p.rows
    offsets = np.concatenate([[0], np.cumsum(rows)]).astype(int).tolist()
    return ShardedAudit(train.names, planned, recipes, offsets)


def train_round(slicer: SlicedRun, audit: ShardedAudit, shards: int) -> None:
    """Round 1 for TRAIN: each slice's keys into the shards (none with `shards` 0: counted
    only), its counts added up in input order."""
    executor, folder = slicer.job.executor, slicer.folder
    items = [(audit.recipes[p.piece.source], p, slicer.job.batch_size, folder, shards)
             for p in audit.planned]  # fmt: skip
    done = {}
    for position, counted in executor.map_unordered(_train_slice, list(enumerate(items))):
        done[position] = counted
    audit.inputs = [TrainInput(name) for name in audit.names]
    for position in range(len(items)):  # in input order: the first malformed rows first
        counted = done[position]
        info = audit.inputs[counted.source]
        info.rows += counted.rows
        info.malformed += counted.malformed
        info.pencilmarks += counted.pencilmarks
        info.examples += counted.examples[: EXAMPLES - len(info.examples)]


def leak_items(
    audit: ShardedAudit, folder: str, shards: int, indices: list[int], starts: list[int]
) -> list[tuple[Any, ...]]:
    """The tasks of round 2 for the leaks, one a shard."""
    has_ids = audit.recipes[0].id_column is not None if audit.recipes else False
    train = audit.indices
    return [(folder, shard, indices, starts, train, has_ids) for shard in range(shards)]


# --- on the workers ------------------------------------------------------------------------


def _train_slice(item: tuple[int, tuple[Any, ...]]) -> tuple[int, TrainSlice]:
    position, (ds, planned, batch_size, folder, shards) = item
    return position, train_slice(ds, planned, batch_size, folder, shards)


class TrainBatch(NamedTuple):
    """A batch of TRAIN read on a worker: its 81-cell puzzles (`plain`: their places in the
    batch) with their form keys, words and ids (with `keyed`), and what took no part."""

    plain: np.ndarray
    keys: np.ndarray | None
    words: np.ndarray | None
    ids: pa.Array | None
    malformed: int
    examples: list[dict[str, Any]]  # the batch's first malformed rows: row, message
    pencilmarks: int


def train_batch(batch: pa.RecordBatch, keyed: bool) -> TrainBatch:
    """What round 1 keeps of a batch of TRAIN (`leaks.train_keys`'s rules: pencilmark rows
    skipped, malformed ones counted), the form keys and words with `keyed`."""
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")), pencilmarks=True)
    marks = parsed.pencilmark
    if marks is None:
        marks = np.zeros(batch.num_rows, np.bool_)
    plain = np.flatnonzero(parsed.ok & ~marks)
    bad = np.flatnonzero(~parsed.ok)
    numbers = batch.column(batch.schema.get_field_index("row")).to_numpy()
    examples = [
        {"row": int(numbers[i]), "message": parsed.errors[int(i)].as_py()}
        for i in bad[:EXAMPLES].tolist()
    ]
    keys = words = ids = None
    if keyed:
        grids = parsed.grids[plain]
        form = packed_cells(canonical_grids(grids))
        words = np.concatenate([packed_cells(grids), form], axis=1)
        keys = packed_keys(form, np.ones(len(plain), np.bool_))[:, 0]
        if (own := optional_column(batch, "id")) is not None:
            ids = own.take(pa.array(plain)).cast(pa.string())
    pencilmarks = int(np.count_nonzero(parsed.ok & marks))
    return TrainBatch(plain, keys, words, ids, len(bad), examples, pencilmarks)


def train_slice(
    ds: Dataset, planned: Planned, batch_size: int, folder: str, shards: int
) -> TrainSlice:
    """Round 1 on a worker, a TRAIN slice: its puzzles' form keys, rows and words, by shard;
    what its rows held. With `shards` 0, counted only."""
    keys, rows, words, ids = [], [], [], []
    malformed = pencilmarks = 0
    examples: list[dict[str, Any]] = []
    at = planned.start  # the place of the slice's first row among every TRAIN input's rows
    for batch in planned_batches(ds, planned, batch_size, folder):
        read = train_batch(batch, shards > 0)
        malformed += read.malformed
        pencilmarks += read.pencilmarks
        examples += read.examples[: EXAMPLES - len(examples)]
        if read.keys is not None and read.words is not None:
            keys.append(read.keys)
            words.append(read.words)
            rows.append(at + read.plain)
            if read.ids is not None:
                ids.append(read.ids)
        at += batch.num_rows
    if shards:
        found = ids if ds.id_column is not None else None
        kept = _keyed(keys, "train_row", rows, words, found, pa.string())
        write_batches(Path(folder) / scratch_name(TRAIN, planned.index), _by_shard(kept, shards))
    return TrainSlice(planned.piece.source, at - planned.start, malformed, examples, pencilmarks)


def write_probes(
    folder: Path,
    index: int,
    forms: np.ndarray,
    packed: np.ndarray,
    rows: np.ndarray,
    ids: pa.Array | None,
    shards: int,
) -> None:
    """Round 1 on a worker, a TEST slice: its 81-cell puzzles' form keys (`forms[:, 0]`, 0 for
    rows that are not), rows, ids and words (`packed`), by shard (`shard-probes-N`)."""
    plain = np.flatnonzero(forms[:, 0])
    own = None if ids is None else [ids.take(pa.array(plain))]
    kept = _keyed([forms[plain, 0]], "row", [rows[plain]], [packed[plain]], own,
                  None if ids is None else ids.type)  # fmt: skip
    write_batches(folder / scratch_name(PROBES, index), _by_shard(kept, shards))


def _keyed(
    keys: list[np.ndarray],
    row_name: str,
    rows: list[np.ndarray],
    words: list[np.ndarray],
    ids: list[pa.Array] | None,
    id_type: pa.DataType | None,
) -> pa.RecordBatch:
    """One record batch: key, row (named `row_name`), words (12 a row) and, with ids, id."""
    flat = np.concatenate([np.zeros((0, _WORDS), np.uint64), *words]).reshape(-1)
    columns = {
        "key": pa.array(np.concatenate([np.zeros(0, np.uint64), *keys])),
        row_name: pa.array(np.concatenate([np.zeros(0, np.int64), *rows]).astype(np.int64)),
        "words": pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.uint64()), _WORDS),
    }
    if ids is not None:
        assert id_type is not None
        columns["id"] = pa.concat_arrays([pa.array([], id_type), *(i.cast(id_type) for i in ids)])
    return pa.record_batch(columns)


def _by_shard(batch: pa.RecordBatch, shards: int) -> list[pa.RecordBatch]:
    """The rows of `batch`, one record batch a shard (their keys' top bits), in order."""
    keys = batch.column(0).to_numpy()
    bits = shards.bit_length() - 1  # shards: a power of two
    shard = (keys >> np.uint64(64 - bits)).astype(np.int64) if bits else np.zeros(len(keys), int)
    order = np.argsort(shard, kind="stable")
    bounds = np.searchsorted(shard[order], np.arange(shards + 1))
    batch = batch.take(pa.array(order))
    return [batch.slice(bounds[s], bounds[s + 1] - bounds[s]) for s in range(shards)]


def _gathered(folder: Path, kind: str, indices: list[int], shard: int) -> pa.Table:
    """The record batch `shard` of each of these files, memory-mapped (a column not read,
    not loaded), as one table in order."""
    batches = [
        pa.ipc.open_file(pa.memory_map(str(folder / scratch_name(kind, i)))).get_batch(shard)
        for i in indices
    ]
    return pa.Table.from_batches(batches)


def _words(table: pa.Table, at: np.ndarray) -> np.ndarray:
    words = table.column("words").take(pa.array(at)).combine_chunks()
    return words.flatten().to_numpy().reshape(-1, _WORDS)


def leaks_of_shard(item: tuple[Any, ...]) -> int:
    """Round 2 on a worker, a shard: the TEST rows that are TRAIN puzzles, confirmed word for
    word, each with its first TRAIN row (`shard-leaks-N`, one record batch a TEST slice);
    how many."""
    folder, shard, indices, starts, train_indices, train_ids = item
    where = Path(folder)
    probes = _gathered(where, PROBES, indices, shard)
    keys = probes.column("key").to_numpy()
    test_rows = probes.column("row").to_numpy()
    train = _gathered(where, TRAIN, train_indices, shard) if train_indices else None
    train_keys = np.zeros(0, np.uint64) if train is None else train.column("key").to_numpy()
    hit = np.flatnonzero(np.isin(keys, train_keys))
    if train is not None and len(hit):
        held = np.flatnonzero(np.isin(train_keys, keys[hit]))
        train_rows = train.column("train_row").to_numpy()
        rows, first, exact = first_copies(
            test_rows[hit], _words(probes, hit), train_rows[held], _words(train, held)
        )
    else:
        rows = first = np.zeros(0, np.int64)
        exact = np.zeros(0, np.bool_)
    columns: dict[str, Any] = {
        "row": pa.array(rows, pa.int64()),
        "train_row": pa.array(first, pa.int64()),
        "exact": pa.array(exact, pa.bool_()),
    }
    if "id" in probes.column_names:
        columns["id"] = probes.column("id").take(pa.array(np.searchsorted(test_rows, rows)))
        columns["id"] = columns["id"].combine_chunks()
    if train_ids:  # TRAIN's rows ascend in the shard (slices in order, each by row)
        named = pa.array([], pa.string())
        if train is not None:
            at = np.searchsorted(train.column("train_row").to_numpy(), first)
            named = train.column("id").take(pa.array(at)).combine_chunks().cast(pa.string())
        columns["train_id"] = named
    found = pa.record_batch(columns)
    cuts = [*np.searchsorted(rows, starts).tolist(), len(rows)]
    per_slice = [found.slice(cuts[k], cuts[k + 1] - cuts[k]) for k in range(len(starts))]
    write_batches(where / scratch_name(LEAKS, shard), per_slice)
    return len(rows)


def slice_leaks(
    folder: Path, shards: int, position: int, names: list[str], offsets: list[int]
) -> tuple[Leaks, pa.Array | None]:
    """Round 3 on a worker: the leaks of the TEST slice at `position` in the plan, from every
    shard's file, by row; and those rows' ids (when the input has ids)."""
    pieces = [
        pa.ipc.open_file(pa.memory_map(str(folder / scratch_name(LEAKS, s)))).get_batch(position)
        for s in range(shards)
    ]
    table = pa.Table.from_batches(pieces)
    table = table.take(pa.array(np.argsort(table.column("row").to_numpy(), kind="stable")))
    first = table.column("train_row").to_numpy()
    sources = np.searchsorted(np.asarray(offsets), first, side="right") - 1
    train_ids = table.column("train_id").to_pylist() if "train_id" in table.column_names else None
    leaks = Leaks(
        table.column("row").to_numpy(),
        sources.astype(np.int64),
        first - np.asarray(offsets, np.int64)[sources],
        table.column("exact").to_numpy(),
        train_ids,
        names,
    )
    ids = table.column("id").combine_chunks() if "id" in table.column_names else None
    return leaks, ids

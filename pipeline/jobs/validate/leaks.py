"""The leak audit (`validate TEST --against TRAIN...`): the rows of TEST that are puzzles of
TRAIN, exactly or in disguise (the same canonical form, `pipeline.canonical_forms`: digits
relabelled, rows, bands, columns or stacks permuted, transposed).

Three passes, memory bounded by TRAIN's keys, not by its rows:

1. TRAIN streamed in batches on the workers (`train_keys`): each 81-cell puzzle's canonical
   form and its 64-bit key (the first half of `duplicates.row_keys`, as `--symmetry` keys
   forms). The parent keeps the keys sorted, with each one's TRAIN row (`TrainIndex`): 12
   bytes a row (12 MB for 1M rows; about 40 for a moment while sorting).
2. TEST as validate reads it (`batch.validate_record_batch` with `leaks`): each batch's form
   keys looked up in TRAIN's; the rows that hit keep their puzzle and form, packed
   (`TestHits`: about 110 bytes a hit).
3. TRAIN read again (`train_candidates`): only its rows whose key a TEST row hit are
   canonicalised again, and their puzzles and forms compared word for word with the TEST
   rows' (`confirm`). No hash is trusted: a leak is never two keys colliding, and keys that
   collide cost only the extra rows they bring.

Each leak names the first TRAIN row (inputs in the order given, rows from 0) that holds the
TEST row's puzzle exactly, or, when none does, the first that holds it in disguise. Rows that
are not 81-cell puzzles take no part: malformed TRAIN rows are counted with their messages,
pencilmark rows (of TRAIN or TEST) are skipped and counted (they have no canonical form here).
"""

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.canonical_forms import canonical_grids
from pipeline.errors import InputError
from pipeline.grid import ParsedGrids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.io.stdin import STDIN
from pipeline.jobs.validate.catalogue import FindingsBuilder, message
from pipeline.jobs.validate.duplicates import packed_cells, row_keys

EXAMPLES = 3  # malformed TRAIN rows kept, with their messages, for the summary
Task = tuple[int, pa.RecordBatch]  # (TRAIN input's index, a batch of it)
Mapper = Callable[..., Iterator[Any]]  # (fn, tasks, *args) -> fn(task, *args) in task order
_WORDS = 6  # a grid packed: `packed_cells`


def _plain(parsed: ParsedGrids) -> np.ndarray:
    """The rows that are 81-cell puzzles (not malformed, not pencilmarks)."""
    return parsed.ok if parsed.pencilmark is None else parsed.ok & ~parsed.pencilmark


def _pencilmarks(parsed: ParsedGrids) -> int:
    return 0 if parsed.pencilmark is None else int(np.count_nonzero(parsed.pencilmark & parsed.ok))


def form_keys(grids: np.ndarray) -> np.ndarray:
    """`(n,) uint64` keys of the canonical forms of `(n, 81)` puzzles (never 0)."""
    forms = canonical_grids(grids)
    return row_keys(forms, np.ones(len(forms), np.bool_))[:, 0]


@dataclass
class TrainInput:
    """What the audit says of one TRAIN input: its rows, those that took no part."""

    input: str
    rows: int = 0
    malformed: int = 0
    pencilmarks: int = 0  # skipped: a pencilmark puzzle has no canonical form here
    examples: list[dict[str, Any]] = field(default_factory=list)  # first malformed rows


class TrainPart(NamedTuple):
    """What a worker sends back for a batch of TRAIN (pass 1)."""

    source: int
    rows: int
    keys: np.ndarray  # (rows,) uint64 form keys, 0 for rows that take no part
    malformed: int
    examples: list[dict[str, Any]]  # the first malformed rows: row, message
    pencilmarks: int


def train_keys(task: Task) -> TrainPart:
    """Pass 1, on a worker: the form key of each 81-cell puzzle of a batch of TRAIN."""
    source, batch = task
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")), pencilmarks=True)
    plain = _plain(parsed)
    keys = np.zeros(batch.num_rows, np.uint64)
    if plain.any():
        keys[plain] = form_keys(parsed.grids[plain])
    bad = np.flatnonzero(~parsed.ok)
    rows = batch.column(batch.schema.get_field_index("row")).to_numpy()
    examples = [
        {"row": int(rows[i]), "message": parsed.errors[int(i)].as_py()} for i in bad[:EXAMPLES]
    ]
    return TrainPart(source, batch.num_rows, keys, len(bad), examples, _pencilmarks(parsed))


class TrainIndex:
    """TRAIN's form keys, sorted, with each one's TRAIN row (numbered across the inputs)."""

    def __init__(self, names: list[str]) -> None:
        self.inputs = [TrainInput(name) for name in names]
        self._parts: list[np.ndarray] = []
        self.keys = np.zeros(0, np.uint64)
        self.rows = np.zeros(0, np.uint32)
        self.offsets = np.zeros(len(names) + 1, np.int64)  # input i's rows: offsets[i], ...

    def add(self, part: TrainPart) -> None:
        """A batch's keys; batches come in input order."""
        info = self.inputs[part.source]
        info.rows += part.rows
        info.malformed += part.malformed
        info.pencilmarks += part.pencilmarks
        info.examples += part.examples[: EXAMPLES - len(info.examples)]
        self._parts.append(part.keys)

    def seal(self) -> None:
        """Every batch is in: sort the keys (rows ascending among equal keys)."""
        keys = np.concatenate(self._parts) if self._parts else np.zeros(0, np.uint64)
        self._parts = []
        np.cumsum([i.rows for i in self.inputs], out=self.offsets[1:])
        at = np.flatnonzero(keys)
        keys = keys[at]
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        del keys
        self.rows = at[order].astype(np.uint32 if len(at) and at[-1] < 2**32 else np.int64)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.rows.nbytes

    def hits(self, keys: np.ndarray) -> np.ndarray:
        """`(n,) bool`: which of `keys` (0: no puzzle) some TRAIN row has."""
        if not len(self.keys):
            return np.zeros(len(keys), np.bool_)
        at = np.searchsorted(self.keys, keys).clip(max=len(self.keys) - 1)
        return (self.keys[at] == keys) & (keys != 0)

    def rows_of(self, keys: np.ndarray) -> list[np.ndarray]:
        """The rows of each TRAIN input (ascending, within the input) whose key is one of
        `keys`."""
        lo = np.searchsorted(self.keys, keys, side="left")
        hi = np.searchsorted(self.keys, keys, side="right")
        counts = hi - lo
        starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
        rows = np.sort(self.rows[starts + np.arange(counts.sum())].astype(np.int64))
        bounds = np.searchsorted(rows, self.offsets)
        return [rows[bounds[i] : bounds[i + 1]] - self.offsets[i] for i in range(len(self.inputs))]


class TestHits:
    """The TEST rows whose form key is TRAIN's (pass 2), with their puzzles and forms packed."""

    def __init__(self, index: TrainIndex) -> None:
        self.index = index
        self.pencilmarks = 0  # TEST rows skipped
        self._rows: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self._packed: list[np.ndarray] = []

    def add(self, start: int, forms: np.ndarray, packed: np.ndarray, pencilmarks: int) -> None:
        """A TEST batch from row `start`: its form keys `(rows, 2)` and packed cells
        `(rows, 12)` (`batch.BatchReport`)."""
        self.pencilmarks += pencilmarks
        at = np.flatnonzero(self.index.hits(forms[:, 0]))
        if len(at):
            self._rows.append(start + at)
            self._keys.append(forms[at, 0])
            self._packed.append(packed[at])

    def rows(self) -> np.ndarray:
        return np.concatenate(self._rows) if self._rows else np.zeros(0, np.int64)

    def keys(self) -> np.ndarray:
        """The distinct form keys hit, ascending."""
        return np.unique(np.concatenate(self._keys)) if self._keys else np.zeros(0, np.uint64)

    def packed(self) -> np.ndarray:
        none = np.zeros((0, 2 * _WORDS), np.uint64)
        return np.concatenate(self._packed) if self._packed else none


class TrainCandidates(NamedTuple):
    """What a worker sends back for a batch of TRAIN (pass 3): the rows a TEST row may copy."""

    rows: int  # of the batch
    source: int
    train_rows: np.ndarray  # int64, within the input
    packed: np.ndarray  # (k, 12) uint64: puzzle and form packed
    ids: pa.Array | None  # strings, when the input has ids


def train_candidates(task: Task, wanted: list[np.ndarray]) -> TrainCandidates:
    """Pass 3, on a worker: the rows of a batch of TRAIN among `wanted[source]` (ascending
    rows of each input), their puzzles and forms packed."""
    source, batch = task
    rows = batch.column(batch.schema.get_field_index("row")).to_numpy()
    mine = wanted[source]
    start = int(rows[0]) if len(rows) else 0
    lo, hi = np.searchsorted(mine, [start, start + len(rows)])
    pick = pa.array(mine[lo:hi] - start)
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")).take(pick))
    packed = np.concatenate(
        [packed_cells(parsed.grids), packed_cells(canonical_grids(parsed.grids))], axis=1
    )
    ids = optional_column(batch, "id")
    ids = None if ids is None else ids.take(pick).cast(pa.string())
    return TrainCandidates(batch.num_rows, source, mine[lo:hi], packed, ids)


class Leaks(NamedTuple):
    """The TEST rows that are TRAIN puzzles (ascending), each with the TRAIN row it copies."""

    rows: np.ndarray  # int64: TEST rows
    sources: np.ndarray  # int64: index of the TRAIN input
    train_rows: np.ndarray  # int64: row within that input
    exact: np.ndarray  # bool: the same puzzle as it stands (else: the same canonical form)
    train_ids: list[str | None] | None  # the TRAIN row's id, when TRAIN has ids
    names: list[str]  # the TRAIN inputs

    def any(self) -> bool:
        return len(self.rows) > 0

    def counts(self) -> dict[str, int]:
        exact = int(np.count_nonzero(self.exact))
        return {"exact": exact, "in_disguise": len(self.rows) - exact}

    def findings(self, lo: int, hi: int, ids: pa.Array | None = None) -> pa.Table:
        """`leak` findings of leaks `lo` to `hi`; `ids`: those TEST rows' ids."""
        out = FindingsBuilder(self.rows[lo:hi], ids)
        names = [self.names[s] for s in self.sources[lo:hi].tolist()]
        rows = self.train_rows[lo:hi].tolist()
        exact = self.exact[lo:hi].tolist()
        train_ids = self.train_ids[lo:hi] if self.train_ids is not None else [None] * len(rows)
        messages = [
            message(
                "leak",
                train_row=r,
                train_input=name,
                train_id="" if i is None else f" (id {i})",
                how="exactly" if e else "in disguise (the same canonical form)",
            )
            for name, r, i, e in zip(names, rows, train_ids, exact, strict=True)
        ]
        out.add(
            "leak",
            np.arange(hi - lo),
            messages,
            train_input=pa.array(names, pa.string()),
            train_row=pa.array(rows, pa.int64()),
            exact=pa.array(exact, pa.bool_()),
        )
        return out.table()

    def in_rows(self, start: int, stop: int) -> tuple[int, int]:
        """The leaks of TEST rows `start` to `stop` (exclusive), as `lo, hi`."""
        lo, hi = np.searchsorted(self.rows, [start, stop])
        return int(lo), int(hi)


def confirm(hits: TestHits, candidates: Iterable[TrainCandidates]) -> Leaks:
    """The leaks: each TEST row hit, matched word for word with TRAIN's candidate rows."""
    names = [i.input for i in hits.index.inputs]
    offsets = hits.index.offsets
    found = list(candidates)
    train_packed = np.concatenate(
        [np.zeros((0, 2 * _WORDS), np.uint64), *(c.packed for c in found)]
    )
    train_rows = np.concatenate(
        [np.zeros(0, np.int64), *(c.train_rows + offsets[c.source] for c in found)]
    )
    rows, g, exact = first_copies(hits.rows(), hits.packed(), train_rows, train_packed)
    sources = np.searchsorted(offsets, g, side="right") - 1
    train_ids = None
    if found and found[0].ids is not None:
        ids = pa.concat_arrays([c.ids for c in found if c.ids is not None]).to_pylist()
        by_row = dict(zip(train_rows.tolist(), ids, strict=True))
        train_ids = [by_row[r] for r in g.tolist()]
    return Leaks(rows, sources.astype(np.int64), g - offsets[sources], exact, train_ids, names)


def first_copies(
    rows: np.ndarray, packed: np.ndarray, train_rows: np.ndarray, train_packed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The TEST `rows` (their puzzles and forms `packed`, `(n, 12)`) that some TRAIN row
    (`train_rows`: numbered across the inputs, with `train_packed`) holds, compared word for
    word: those rows (ascending), the first TRAIN row holding each exactly, or else the first
    holding it in disguise, and whether exactly."""
    puzzle, form = [f"w{j}" for j in range(_WORDS)], [f"w{j}" for j in range(_WORDS, 2 * _WORDS)]

    def frame(rows: np.ndarray, packed: np.ndarray, name: str) -> pl.DataFrame:
        words = {f"w{j}": packed[:, j] for j in range(2 * _WORDS)}
        return pl.DataFrame({name: rows, **words}, schema_overrides=dict.fromkeys(words, pl.UInt64))

    train = frame(train_rows, train_packed, "g")
    first_form = train.group_by(form).agg(pl.col("g").min().alias("form_g"))
    first_exact = train.group_by(puzzle).agg(pl.col("g").min().alias("exact_g"))
    joined = (
        frame(rows, packed, "row")
        .join(first_form, on=form, how="left")
        .join(first_exact, on=puzzle, how="left")
        .filter(pl.col("form_g").is_not_null())
        .sort("row")
    )
    exact = joined["exact_g"].is_not_null().to_numpy()
    g = joined.select(pl.coalesce("exact_g", "form_g"))[:, 0].to_numpy().astype(np.int64)
    return joined["row"].to_numpy().astype(np.int64), g, exact


def no_leaks(names: list[str]) -> Leaks:
    none = np.zeros(0, np.int64)
    return Leaks(none, none, none, np.zeros(0, np.bool_), None, names)


class LeakAudit:
    """The three passes over TRAIN (`tasks()`: its batches, as often as asked), on the
    workers that `map` names; TEST's batch reports go to `add_test` in between."""

    def __init__(self, names: list[str], tasks: Callable[[], Iterable[Task]]) -> None:
        self.index = TrainIndex(names)
        self.hits = TestHits(self.index)
        self.tasks = tasks

    def build(self, map: Mapper) -> None:
        """Pass 1: TRAIN's form keys."""
        for part in map(train_keys, self.tasks()):
            self.index.add(part)
        self.index.seal()

    def add_test(
        self, start: int, forms: np.ndarray | None, packed: np.ndarray | None, pencilmarks: int
    ) -> None:
        """Pass 2: a TEST batch's form keys and packed cells (`BatchReport`)."""
        if forms is not None and packed is not None:
            self.hits.add(start, forms, packed, pencilmarks)

    def leaks(self, map: Mapper) -> Leaks:
        """Pass 3: the hits confirmed (TRAIN read again only when there is a hit)."""
        keys = self.hits.keys()
        if not len(keys):
            return no_leaks([i.input for i in self.index.inputs])
        wanted = self.index.rows_of(keys)
        self.index.keys = self.index.rows = np.zeros(0, np.uint64)  # no longer needed
        sources = {i for i, rows in enumerate(wanted) if len(rows)}
        tasks = (task for task in self.tasks() if task[0] in sources)
        return confirm(self.hits, map(train_candidates, tasks, wanted))

    def summary(self, leaks: Leaks) -> dict[str, Any]:
        """What the summary says of the audit (JSON-ready)."""
        return {
            "train": [asdict(i) for i in self.index.inputs],
            "leaks": len(leaks.rows),
            **leaks.counts(),
            "pencilmarks_skipped": self.hits.pencilmarks,
        }


def check_against(test: list[str], train: list[str], output: Path | None) -> None:
    """One clear line (`InputError`) for TRAIN that cannot be audited against: stdin (it is
    read twice), the input itself, or the output."""
    if not train:
        raise InputError("--against: no training input given")
    for name in train:
        if name == STDIN:
            raise InputError("--against cannot read stdin (-): each training input is read twice")
        for other in test:
            if _same_file(name, other):
                raise InputError(
                    f"{name} is both the input and an --against input: a split "
                    "audited against itself is all leaks"
                )
        if output is not None and _same_file(name, str(output)):
            raise InputError(f"{name} is both an --against input and the output")


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # a URL, stdin, or a file not there (yet): told apart by name
        return False

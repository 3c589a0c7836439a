"""Duplicates, found as the rows come, in bounded memory.

Workers reduce each parsed puzzle to a 128-bit key (`row_keys`, vectorized: two independent
64-bit hashes of the 81 cells packed into six words). The parent keeps each distinct key once,
with the row it was first seen at (`DuplicateIndex`): in 64 shards by the key's top bits, each
a few runs sorted by the key's first half, each at most half the size of the one before (a
batch's new keys are a run of their own; runs of like size are merged, a linear merge, no
sort: a key moves about log2 of the batches' count times in all, and a merge moves one
shard's keys at most). Each batch's keys are looked up as it comes, so its repeats are known
before the next batch, and the findings file is written in one pass.
Puzzles are compared after parsing, so `.` and `0` blanks, and surrounding whitespace, do not
make two puzzles differ. Rows that are not puzzles take no part.

Memory in the parent: 20 bytes a distinct puzzle (both halves, the first row; 200 MB for
10,000,000 distinct puzzles), and for a moment, while a shard's largest runs merge, 16 bytes a
puzzle of theirs more (a 64th of them at most); repeats take nothing (the end-of-file grouping
this replaced held 16 bytes a row, 9 more at the end, and about 100 more a row that shares
its puzzle; measured with tracemalloc). Both halves keep their lowest bit set
for puzzles (all-zero keys mark rows that are not puzzles), so a key has 126 random bits: two
different puzzles among 10M rows share one with probability about 1e-25. Two keys that share
a first half only (a 1-in-2^64 event; tests force it) are told apart by their second.
"""

from typing import NamedTuple

import numpy as np

from pipeline.splitmix import GAMMA, MIX1, MIX2

_SEEDS = (GAMMA, np.uint64(0xD1B54A32D192ED03))
# Two different 64-bit finalizers (SplitMix64's and murmur3's fmix64): multipliers, shifts;
# written out here, in place on a block of words, rather than through `splitmix.mix_array`.
_MIXES = (
    (MIX1, MIX2, (30, 27, 31)),
    (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53), (33, 33, 33)),
)


def packed_cells(grids: np.ndarray) -> np.ndarray:
    """`(n, 81)` cells 0..9 as `(n, 6) uint64`: two cells per byte (4 bits each), injective
    (two grids are equal exactly when their words are)."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = len(grids)
    padded = np.zeros((n, 88), dtype=np.uint8)
    padded[:, :81] = grids
    words = padded.view(np.uint64)  # (n, 11): cells 8j..8j+7 in word j
    packed = words[:, :6].copy()
    packed[:, :5] |= words[:, 6:11] << np.uint64(4)  # cells 48.. into the high nibbles
    return packed


def row_keys(grids: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """`(n, 2) uint64` keys of `(n, 81) uint8` puzzles; zeros where `ok` is False."""
    return packed_keys(packed_cells(grids), ok)


def packed_keys(words: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """`row_keys` of grids already packed (`packed_cells`)."""
    keys = np.empty((len(words), 2), dtype=np.uint64)
    for half, (seed, (m1, m2, (s1, s2, s3))) in enumerate(zip(_SEEDS, _MIXES, strict=True)):
        h = np.full(len(words), seed, dtype=np.uint64)
        for j in range(words.shape[1]):
            h ^= words[:, j]
            h ^= h >> np.uint64(s1)
            h *= m1
            h ^= h >> np.uint64(s2)
            h *= m2
            h ^= h >> np.uint64(s3)
            h += seed  # keep an all-zero word from mapping zero to zero
        keys[:, half] = h | np.uint64(1)
    keys[~np.asarray(ok, dtype=np.bool_)] = 0
    return keys


_NONE = np.zeros(0, dtype=np.int64)
_INT32_MAX = np.iinfo(np.int32).max
_SHARD_BITS = 4  # the keys kept in 16 shards by their top bits: a merge moves 1/16 of them
Run = tuple[np.ndarray, ...]  # first halves (ascending), second halves, first rows


class DuplicateIndex:
    """The distinct keys seen so far, each with its first row, in shards of sorted runs (see
    the module); `add` the keys of the next rows, and learn which of them repeat an earlier
    row."""

    def __init__(self) -> None:
        self._shards: list[list[Run]] = [[] for _ in range(1 << _SHARD_BITS)]
        self.rows = 0

    @property
    def nbytes(self) -> int:
        """Memory held by the runs."""
        return sum(sum(a.nbytes for a in run) for runs in self._shards for run in runs)

    def add(self, start_row: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The `(n, 2) uint64` keys of rows `start_row`, `start_row + 1`, ... (rows come in
        order). Returns `(rows, first_rows)`, both `int64` and ascending by row: each of these
        rows whose puzzle an earlier row (of this batch or before) has, and the row of that
        puzzle's first occurrence."""
        if start_row != self.rows:
            raise ValueError(f"rows must come in order: expected row {self.rows}, got {start_row}")
        self.rows += len(keys)
        at = np.flatnonzero(keys[:, 0] != 0)  # zero: rows that are not puzzles
        if not len(at):
            return _NONE, _NONE
        at = at[np.argsort(keys[at, 0], kind="stable")]  # by first half, then by row
        first, second = keys[at, 0], keys[at, 1]
        alike = first[1:] == first[:-1]
        apart = second[1:] != second[:-1]
        if (alike & apart).any():  # first halves alike, second apart (rare): by both
            at = at[np.lexsort((at, second, first))]
            first, second = keys[at, 0], keys[at, 1]
            alike, apart = first[1:] == first[:-1], second[1:] != second[:-1]
        lead = np.ones(len(at), dtype=np.bool_)  # a key's first row in this batch
        lead[1:] = ~alike | apart
        group = np.cumsum(lead) - 1  # each row's key, among the batch's distinct keys
        first, second = first[lead], second[lead]
        first_rows = np.empty(len(first), dtype=np.int64)
        known = np.zeros(len(first), dtype=np.bool_)
        # the batch's keys are sorted: each shard's are one slice of them
        shard = (first >> np.uint64(64 - _SHARD_BITS)).astype(np.intp)
        bounds = np.searchsorted(shard, np.arange((1 << _SHARD_BITS) + 1)).tolist()
        for s, runs in enumerate(self._shards):
            lo, hi = bounds[s], bounds[s + 1]
            if hi == lo:
                continue
            seen = _lookup(runs, first[lo:hi], second[lo:hi])
            known[lo:hi] = seen >= 0
            first_rows[lo:hi] = np.where(seen >= 0, seen, start_row + at[lead][lo:hi])
            new = seen < 0
            _insert(runs, first[lo:hi][new], second[lo:hi][new], first_rows[lo:hi][new])
        repeat = ~lead | known[group]
        of = np.full(len(keys), -1, dtype=np.int64)  # by row: no sort to put them back
        of[at[repeat]] = first_rows[group[repeat]]
        rows = np.flatnonzero(of >= 0)
        return start_row + rows, of[rows]


def _lookup(runs: list[Run], first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The first row of each key (`first`, `second`: its halves, ascending by first half)
    seen before (kept in `runs`), else -1."""
    found = np.full(len(first), -1, dtype=np.int64)
    for halves, others, rows in runs:
        at = np.searchsorted(halves, first).clip(max=len(halves) - 1)
        hit = halves[at] == first
        same = hit & (others[at] == second)
        found[same] = rows[at[same]]
        for i in np.flatnonzero(hit & ~same).tolist():  # first halves alike: rare
            end = np.searchsorted(halves, first[i], "right")
            alike = np.flatnonzero(others[at[i] : end] == second[i])
            if len(alike):
                found[i] = rows[at[i] + alike[0]]
    return found


def _insert(runs: list[Run], first: np.ndarray, second: np.ndarray, rows: np.ndarray) -> None:
    """Keys seen for the first time (sorted by first half) as a run of `runs`; runs of like
    size merged, so that each is at most half the one before it."""
    if not len(first):
        return
    if rows[-1] <= _INT32_MAX:  # rows as 4 bytes while they fit
        rows = rows.astype(np.int32)
    runs.append((first, second, rows))
    while len(runs) > 1 and len(runs[-2][0]) <= 2 * len(runs[-1][0]):
        b = list(runs.pop())
        a = list(runs.pop())
        runs.append(_merged(a, b))


def _merged(a: list[np.ndarray], b: list[np.ndarray]) -> Run:
    """Two runs sorted by first half (their halves and first rows), as one: each element's
    place found by a binary search in the other run (ties: `a`'s first), no sort; a column of
    the two let go as soon as it is merged."""
    to_a = np.arange(len(a[0])) + np.searchsorted(b[0], a[0], "left")
    to_b = np.arange(len(b[0])) + np.searchsorted(a[0], b[0], "right")
    merged = []
    for i in range(len(a)):
        out = np.empty(len(a[i]) + len(b[i]), dtype=np.result_type(a[i], b[i]))
        out[to_a] = a[i]
        out[to_b] = b[i]
        a[i] = b[i] = _NONE  # the caller holds no other reference
        merged.append(out)
    return tuple(merged)


class Repeats(NamedTuple):
    """Rows that repeat an earlier row's puzzle, and the rows they repeat (ascending by row):
    exactly (`duplicate`) and up to symmetry (`symmetry_duplicate`: the same canonical form,
    where the first such row is not already the row it repeats exactly)."""

    rows: np.ndarray
    first_rows: np.ndarray
    symmetric_rows: np.ndarray = _NONE
    symmetric_first_rows: np.ndarray = _NONE

    def kinds(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(finding code, rows, first rows) of each kind."""
        return [
            ("duplicate", self.rows, self.first_rows),
            ("symmetry_duplicate", self.symmetric_rows, self.symmetric_first_rows),
        ]

    def any(self) -> bool:
        """Whether any row repeats an earlier one, exactly or up to symmetry."""
        return len(self.rows) + len(self.symmetric_rows) > 0


class RepeatFinder:
    """The repeats of a file's rows, batch by batch as they come, from the keys of their
    puzzles and (`symmetry`) of their canonical forms."""

    def __init__(self, symmetry: bool = False) -> None:
        self.exact = DuplicateIndex()
        self.forms = DuplicateIndex() if symmetry else None

    def add(self, start_row: int, keys: np.ndarray, forms: np.ndarray | None = None) -> Repeats:
        rows, first_rows = self.exact.add(start_row, keys)
        if self.forms is None or forms is None:
            return Repeats(rows, first_rows)
        srows, sfirst = self.forms.add(start_row, forms)
        keep = symmetric_only(rows, first_rows, srows, sfirst)
        return Repeats(rows, first_rows, srows[keep], sfirst[keep])


def symmetric_only(
    rows: np.ndarray, first_rows: np.ndarray, srows: np.ndarray, sfirst: np.ndarray
) -> np.ndarray:
    """Which repeats up to symmetry (`srows` of `sfirst`, ascending by row) are not already
    exact repeats of that same row (`rows` of `first_rows`, ascending): a mask of `srows`."""
    if not len(rows):
        return np.ones(len(srows), dtype=np.bool_)
    at = np.searchsorted(rows, srows).clip(max=len(rows) - 1)
    return sfirst != np.where(rows[at] == srows, first_rows[at], -1)

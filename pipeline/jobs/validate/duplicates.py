"""Duplicates, found as the rows come, in bounded memory.

Workers reduce each parsed puzzle to a 128-bit key (`row_keys`, vectorized: two independent
64-bit hashes of the 81 cells packed into six words). The parent keeps each distinct key once,
with the row it was first seen at (`DuplicateIndex`), in a few runs sorted by the key's first
half, each at most half the size of the one before (a batch's new keys are a run of their
own; runs of like size are merged, a linear merge, no sort: a run's keys move about log2 of
the rows' count times in all). Each batch's keys are looked up in the runs as it comes, so
its repeats are known before the next batch, and the findings file is written in one pass.
Puzzles are compared after parsing, so `.` and `0` blanks, and surrounding whitespace, do not
make two puzzles differ. Rows that are not puzzles take no part.

Memory in the parent: 24 bytes a distinct puzzle (both halves, the first row), and for a
moment, while the largest runs merge, 16 bytes a puzzle of theirs more (240 MB and 160 MB more
for 10,000,000 distinct puzzles); repeats take nothing. Both halves keep their lowest bit set
for puzzles (all-zero keys mark rows that are not puzzles), so a key has 126 random bits: two
different puzzles among 10M rows share one with probability about 1e-25. Two keys that share
a first half only (a 1-in-2^64 event; tests force it) are told apart by their second.
"""

from typing import NamedTuple

import numpy as np

_SEEDS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03))
# Two different 64-bit finalizers (splitmix64 and murmur3's fmix64): multipliers, shifts.
_MIXES = (
    (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), (30, 27, 31)),
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


class DuplicateIndex:
    """The distinct keys seen so far, each with its first row, in sorted runs (see the
    module); `add` the keys of the next rows, and learn which of them repeat an earlier row."""

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, ...]] = []  # first halves, second halves, first rows
        self.rows = 0

    @property
    def nbytes(self) -> int:
        """Memory held by the runs."""
        return sum(half.nbytes + other.nbytes + rows.nbytes for half, other, rows in self._runs)

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
        seen = self._lookup(first[lead], second[lead])
        known = seen >= 0
        first_rows = np.where(known, seen, start_row + at[lead])
        repeat = ~lead | known[group]
        new = ~known
        self._insert(first[lead][new], second[lead][new], first_rows[new])
        of = np.full(len(keys), -1, dtype=np.int64)  # by row: no sort to put them back
        of[at[repeat]] = first_rows[group[repeat]]
        rows = np.flatnonzero(of >= 0)
        return start_row + rows, of[rows]

    def _lookup(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The first row of each key (`first`, `second`: its halves, ascending by first half)
        seen before, else -1."""
        found = np.full(len(first), -1, dtype=np.int64)
        for halves, others, rows in self._runs:
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

    def _insert(self, first: np.ndarray, second: np.ndarray, rows: np.ndarray) -> None:
        """Keys seen for the first time (sorted by first half) as a run; runs of like size
        merged, so that each is at most half the one before it."""
        if not len(first):
            return
        self._runs.append((first, second, rows))
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= 2 * len(self._runs[-1][0]):
            b = list(self._runs.pop())
            a = list(self._runs.pop())
            self._runs.append(_merged(a, b))


def _merged(a: list[np.ndarray], b: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Two runs sorted by first half (their halves and rows), as one: a stable sort of the
    two one after the other, which finds the two runs and merges them in one pass (numpy's
    timsort; ties: `a`'s first). A column of the two is let go as soon as it is merged."""
    order = np.argsort(np.concatenate([a[0], b[0]]), kind="stable")
    merged = []
    for i in range(len(a)):
        merged.append(np.concatenate([a[i], b[i]])[order])
        a[i] = b[i] = _NONE  # the caller holds no other reference
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
        return [("duplicate", self.rows, self.first_rows),
                ("symmetry_duplicate", self.symmetric_rows, self.symmetric_first_rows)]  # fmt: skip

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
        at = np.searchsorted(rows, srows).clip(max=max(len(rows) - 1, 0))
        if len(rows):
            exact_first = np.where(rows[at] == srows, first_rows[at], -1)
        else:
            exact_first = np.full(len(srows), -1, dtype=np.int64)
        keep = sfirst != exact_first
        return Repeats(rows, first_rows, srows[keep], sfirst[keep])

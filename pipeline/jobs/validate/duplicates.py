"""Exact duplicates over a whole file, in bounded memory.

Workers reduce each parsed puzzle to a 128-bit key (`row_keys`, vectorized: two independent
64-bit hashes of the 81 cells packed into six words); the parent keeps only the keys, in input
order (`DuplicateIndex`), and sorts the first halves once at the end; the rows that share one
are then grouped in one pass, in row order (1M rows that are all repeats of 49k puzzles:
0.19 s, against 0.61 s for a sort of them on both halves and the row).
Puzzles are compared after parsing, so `.` and `0` blanks, and surrounding whitespace, do not
make two puzzles differ. Rows that are not puzzles take no part.

Memory in the parent: 16 bytes a row while reading (160 MB for 10,000,000 rows), and at the end
for a moment 9 bytes a row more (a sorted copy of the first halves, and a mask: 90 MB for 10M
rows), plus about 100 bytes per row that shares its first half with another row (the
duplicates and their first occurrences: their rows, second halves and groups, and the
results; measured with tracemalloc, against 125 bytes before the one-pass grouping).
Both halves keep their lowest bit set for puzzles (all-zero keys mark rows that are not
puzzles), so a key has 126 random bits: two different puzzles among 10M rows share one with
probability about 1e-25.
"""

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from pipeline.splitmix import GAMMA, MIX1, MIX2

_BLOCK_ROWS = 1 << 20  # keys are kept in blocks of this many rows (16 MiB each)
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


class DuplicateIndex:
    """The keys of every row of a file, in input order; `duplicates()` at the end."""

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self.rows = 0

    @property
    def nbytes(self) -> int:
        """Memory held by the keys (the last block is allocated whole, filled as rows come)."""
        return sum(block.nbytes for block in self._blocks)

    def add(self, start_row: int, keys: np.ndarray) -> None:
        """The keys of rows `start_row`, `start_row + 1`, ...; rows must come in order."""
        if start_row != self.rows:
            raise ValueError(f"rows must come in order: expected row {self.rows}, got {start_row}")
        done = 0
        while done < len(keys):
            block, at = divmod(self.rows, _BLOCK_ROWS)
            if block == len(self._blocks):
                self._blocks.append(np.empty((_BLOCK_ROWS, 2), dtype=np.uint64))
            take = min(len(keys) - done, _BLOCK_ROWS - at)
            self._blocks[block][at : at + take] = keys[done : done + take]
            done += take
            self.rows += take

    def _filled(self) -> Iterator[tuple[int, np.ndarray]]:
        for b, block in enumerate(self._blocks):
            start = b * _BLOCK_ROWS
            yield start, block[: min(_BLOCK_ROWS, self.rows - start)]

    def duplicates(self) -> tuple[np.ndarray, np.ndarray]:
        """`(rows, first_rows)`, both `int64` and ascending by row: each row whose puzzle an
        earlier row already has, and the row of that puzzle's first occurrence."""
        none = np.zeros(0, dtype=np.int64)
        if self.rows < 2:
            return none, none
        firsts = np.concatenate([keys[:, 0] for _, keys in self._filled()])
        firsts.sort()
        repeated = firsts[1:] == firsts[:-1]
        shared = np.unique(firsts[1:][repeated])
        del firsts, repeated
        shared = shared[shared != 0]  # zero: rows that are not puzzles
        if not len(shared):
            return none, none
        rows, candidates, groups = [], [], []
        for start, keys in self._filled():
            at = np.searchsorted(shared, keys[:, 0]).clip(max=len(shared) - 1)
            hit = np.flatnonzero(shared[at] == keys[:, 0])
            rows.append(start + hit)
            candidates.append(keys[hit, 1])
            groups.append(at[hit])
        return _repeats_in_groups(
            np.concatenate(rows), np.concatenate(candidates), np.concatenate(groups), len(shared)
        )


def _repeats_in_groups(
    row: np.ndarray, second: np.ndarray, group: np.ndarray, groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """`DuplicateIndex.duplicates` of the rows that share a first half with another: `row`
    ascending, `second` their keys' second halves, `group` the index of their first half
    among the `groups` shared ones. Each group's first row leads it; a row with the lead's
    second half repeats the lead (no sort: one pass, in row order). A row whose second half
    differs (a 1-in-2^63 event for two different puzzles; tests force it) is settled by
    sorting those few rows on both halves."""
    position = np.arange(len(row))
    lead = np.full(groups, len(row), dtype=np.int64)
    np.minimum.at(lead, group, position)  # the first (lowest) row of each group
    lead = lead[group]
    alike = second == second[lead]
    later = alike & (lead != position)
    rows, first_rows = row[later], row[lead[later]]
    apart = np.flatnonzero(~alike)
    if not len(apart):
        return rows, first_rows
    order = np.lexsort((row[apart], second[apart], group[apart]))  # rows ascending in a tie
    apart = apart[order]
    same = np.zeros(len(apart), dtype=np.bool_)
    same[1:] = (group[apart][1:] == group[apart][:-1]) & (second[apart][1:] == second[apart][:-1])
    start = np.maximum.accumulate(np.where(same, 0, np.arange(len(apart))))
    rows = np.concatenate([rows, row[apart][same]])
    first_rows = np.concatenate([first_rows, row[apart][start][same]])
    by_row = np.argsort(rows, kind="stable")
    return rows[by_row], first_rows[by_row]


class Repeats(NamedTuple):
    """The rows that repeat an earlier row's puzzle, and the rows they repeat (ascending by
    row): exactly (`duplicate`) and up to symmetry (`symmetry_duplicate`: the same canonical
    form, where the first such row is not already the row it repeats exactly)."""

    rows: np.ndarray
    first_rows: np.ndarray
    symmetric_rows: np.ndarray
    symmetric_first_rows: np.ndarray

    def kinds(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(finding code, rows, first rows) of each kind."""
        return [
            ("duplicate", self.rows, self.first_rows),
            ("symmetry_duplicate", self.symmetric_rows, self.symmetric_first_rows),
        ]

    def any(self) -> bool:
        """Whether any row repeats an earlier one, exactly or up to symmetry."""
        return len(self.rows) + len(self.symmetric_rows) > 0

    def first_rows_needed(self) -> np.ndarray:
        """Every row repeated by a later one, ascending and distinct."""
        return np.unique(np.concatenate([self.first_rows, self.symmetric_first_rows]))


def find_repeats(exact: DuplicateIndex, symmetric: DuplicateIndex | None = None) -> Repeats:
    """The repeats of a file from the keys of its puzzles and (when checked) of their
    canonical forms."""
    rows, first_rows = exact.duplicates()
    if symmetric is None:
        none = np.zeros(0, dtype=np.int64)
        return Repeats(rows, first_rows, none, none)
    srows, sfirst = symmetric.duplicates()
    at = np.searchsorted(rows, srows).clip(max=max(len(rows) - 1, 0))
    if len(rows):
        exact_first = np.where(rows[at] == srows, first_rows[at], -1)
    else:
        exact_first = np.full(len(srows), -1, dtype=np.int64)
    keep = sfirst != exact_first
    return Repeats(rows, first_rows, srows[keep], sfirst[keep])

"""The split itself, over the rows kept (one solution each, in input order): exact repeats out,
canonical groups each whole to one split, shares as asked (within each stratum when asked),
rows shuffled by the seed.

    plan = plan_split(kept, options)      # kept: a DataFrame of `batch.split_record_batch` rows
    plan.frames["train"], plan.counts

How the groups are cut: each group (a canonical form, so every disguise of a puzzle) gets a key,
a hash of its id keyed by the seed (`hashing.keyed`); within each stratum the groups are
ordered by key and cut into runs of the sizes the fractions ask. The sizes come by largest
remainders over the running totals of every stratum so far, so that each split's share of all
groups is exact (within one group) and each stratum's is within a group or two. Nothing here
depends on batches, workers or the rows' order beyond "first by input order", so the same
seed gives the same split of the same corpus on any executor.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from pipeline.jobs.split.batch import GROUP
from pipeline.jobs.split.hashing import GROUP_ORDER, ROW_ORDER, hash_rows, keyed, string_bytes
from pipeline.jobs.split.options import DIFFICULTY_STRATA, DUPLICATE, SplitOptions

_SPLIT, _STRATUM, _KEY = "__split", "__stratum", "__key"
_STRATUM_COLUMN = {
    "clues": "clues",
    "grade": "grade_level",
    "difficulty": "difficulty",
    "rating": "rating",
}
_DECILES = ("difficulty", "rating")  # strata made of deciles of the groups by value


@dataclass
class SplitPlan:
    """A corpus split: one frame per split (in the options' order), and the figures a
    manifest reports."""

    frames: dict[str, pl.DataFrame]
    rows: dict[str, int]
    groups: dict[str, int]
    left_out: Counter
    strata: dict[str, dict[str, int]] = field(default_factory=dict)  # stratum -> split -> groups
    subsampled_from: int | None = None  # the first split's rows before `subsample`, if asked

    @property
    def kept_rows(self) -> int:
        return sum(self.rows.values())


def plan_split(
    kept: pl.DataFrame, options: SplitOptions, left_out: Counter | None = None
) -> SplitPlan:
    """Split `kept` (rows with one solution, in input order, with `puzzle`, `clues`, `group`
    and, when stratifying by them, `difficulty` or `grade_level`); `left_out`: the counts by
    reason so far, to which the exact repeats are added.

    With `options.subsample`, the first split keeps the first rows of its random order (the
    order of the rows' keys): a sample drawn by the seed, as large as asked or the split.

    Memory: the splits are taken from `kept` once each, by row numbers worked out on its small
    columns (groups, strata, keys), so that `kept` and the splits are the only copies of the
    rows at any time."""
    left_out = Counter(left_out or {})
    first = kept.select(pl.col("puzzle").is_first_distinct()).to_series().to_numpy()
    positions = np.flatnonzero(first)
    if len(kept) > len(positions):
        left_out[DUPLICATE] += len(kept) - len(positions)
    split_of, group_counts, strata = cut(kept.select(small_columns(options)).filter(first), options)
    keys = hash_rows(string_bytes(kept["puzzle"].to_arrow()), options.seed, ROW_ORDER)
    frames, row_counts, before = {}, {}, None
    for index, name in enumerate(options.names):
        rows = positions[split_of == index]
        rows = rows[np.lexsort((rows, keys[rows]))]  # by key, then by position
        if index == 0 and options.subsample is not None:  # the first rows in a random order
            before, rows = len(rows), rows[: options.subsample]
            group_counts[name] = int(kept[GROUP].gather(rows).n_unique()) if len(rows) else 0
        frames[name] = kept[rows]
        row_counts[name] = len(rows)
    return SplitPlan(frames, row_counts, group_counts, left_out, strata, before)


def cut(
    small: pl.DataFrame, options: SplitOptions
) -> tuple[np.ndarray, dict[str, int], dict[str, dict[str, int]]]:
    """The cut itself, on the rows' small columns (`small_columns`, in input order): each
    row's split (its index in `options.names`), the groups per split, and per stratum.

    Exact repeats may be in `small` or not: a repeat is in its first copy's group, which that
    copy (earlier in input order) already gives its stratum, so the cut is the same."""
    groups = _groups(small, options)
    groups = groups.with_columns(
        pl.Series(_SPLIT, _allocate(groups[_STRATUM].to_numpy(), options.fractions), pl.Int32)
    )
    split_of = (
        small.select(GROUP)
        .join(groups.select(GROUP, _SPLIT), on=GROUP, how="left", maintain_order="left")[_SPLIT]
        .to_numpy()
    )
    group_counts = {
        name: int((groups[_SPLIT] == index).sum()) for index, name in enumerate(options.names)
    }
    strata = _strata_counts(groups, options) if options.stratify else {}
    return split_of, group_counts, strata


def small_columns(options: SplitOptions) -> list[str]:
    """The columns the cut needs: the group, and the stratum's."""
    return [GROUP, *([_STRATUM_COLUMN[options.stratify]] if options.stratify else [])]


def _groups(kept: pl.DataFrame, options: SplitOptions) -> pl.DataFrame:
    """One row per group, in order of key: its id, its stratum (its first row's), its key."""
    value = pl.col(_STRATUM_COLUMN[options.stratify]).first() if options.stratify else pl.lit(0)
    # groups in any order (sorted by key below: 0.1 s less for 1M rows than in the order of
    # their first rows); `first` is still a group's first row in input order
    groups = kept.group_by(GROUP).agg(value.alias(_STRATUM))
    keys = keyed(groups[GROUP].to_numpy(), options.seed, GROUP_ORDER)
    groups = groups.with_columns(pl.Series(_KEY, keys, dtype=pl.UInt64)).sort(_KEY, GROUP)
    if options.stratify in _DECILES:  # deciles by rank: ties (many 0s) cut by key
        order = groups.with_row_index("__i").sort(_STRATUM, _KEY, nulls_last=True)["__i"]
        decile = np.empty(len(groups), np.int64)
        decile[order.to_numpy()] = np.arange(len(groups)) * DIFFICULTY_STRATA // max(len(groups), 1)
        groups = groups.with_columns(
            pl.Series("__value", groups[_STRATUM]), pl.Series(_STRATUM, decile)
        )
    return groups.with_columns(pl.col(_STRATUM).fill_null(-1).cast(pl.Int64))


def _allocate(strata: np.ndarray, fractions: tuple[float, ...]) -> np.ndarray:
    """The split of each group, groups in order of key: in each stratum (in order of value)
    runs of the sizes `_sizes` gives, the first split's first."""
    split = np.empty(len(strata), np.int32)
    shares = np.asarray(fractions, np.float64)
    given = np.zeros(len(shares), np.int64)
    total = 0
    for value in np.unique(strata):
        where = np.flatnonzero(strata == value)
        total += len(where)
        sizes = _sizes(shares * total - given, len(where))
        given += sizes
        split[where] = np.repeat(np.arange(len(shares), dtype=np.int32), sizes)
    return split


def _sizes(need: np.ndarray, m: int) -> np.ndarray:
    """`m` groups shared by largest remainders of `need` (what each split lacks of its share of
    every group so far; it sums to `m`), never below 0; ties to the earlier split."""
    sizes = np.floor(np.maximum(need, 0)).astype(np.int64)
    while sizes.sum() > m:  # a split that was over its share lends back
        sizes[int(np.argmax(sizes - need))] -= 1
    rest = m - int(sizes.sum())
    if rest:
        order = np.argsort(-(need - sizes), kind="stable")
        sizes[order[:rest]] += 1
    return sizes


def _strata_counts(groups: pl.DataFrame, options: SplitOptions) -> dict[str, dict[str, int]]:
    """Groups per split in each stratum, for the manifest; labelled by the stratum's value
    (clue count, grade, or the difficulty decile with its range)."""
    out: dict[str, dict[str, int]] = {}
    for (value,), part in groups.sort(_STRATUM).group_by(_STRATUM, maintain_order=True):
        label = _label(int(value), part, options.stratify)  # type: ignore[arg-type]
        out[label] = {name: int((part[_SPLIT] == i).sum()) for i, name in enumerate(options.names)}
    return out


def _label(value: int, part: pl.DataFrame, stratify: Any) -> str:
    if stratify == "grade":
        from pipeline.rating import GRADES

        return GRADES[value] if 0 <= value < len(GRADES) else "none"
    if stratify in _DECILES:
        low, high = part["__value"].min(), part["__value"].max()
        if low is None:
            return f"decile {value} ({stratify} none)"
        return f"decile {value} ({stratify} {low:g} to {high:g})"
    return str(value)

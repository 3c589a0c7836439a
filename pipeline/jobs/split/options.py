"""What a split is asked for: the fractions, the splits' names, the seed, the stratum, and the
reasons a puzzle is left out. Checked once, for the command and the Python API alike.

    options = SplitOptions.parse("0.8,0.1,0.1", names=None, seed=1, stratify="grade")
    options.names        # ('train', 'val', 'test')

What the training split may be made into (`--format hrm`, after HRM's
`dataset/build_sudoku_dataset.py`): a random `subsample` of its rows, each row then a group of
itself and `augment` random symmetric copies; and, for the whole corpus first, a
`min_rating` below which rows are left out (reason `rating`). The training split is the first
one named (`train` by default); the others are never subsampled or augmented.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_NAMES = {2: ("train", "test"), 3: ("train", "val", "test")}
STRATA = ("difficulty", "grade", "clues", "rating")
DIFFICULTY_STRATA = 10  # `--stratify difficulty` (or `rating`): deciles of the groups' values
FORMATS = ("parquet", "npy", "hrm")
GROUPED_FORMATS = ("hrm",)  # the formats that hold a puzzle and its copies as a group
RATING = "rating"  # the input's column of ratings (sudoku-extreme: tdoku's backtracks)

# Why a row is left out, in the order a row is judged: its verdict first (a row that is not
# a puzzle with one solution), then whether it repeats an earlier kept row exactly.
VERDICT_REASONS = {
    "malformed": "malformed",  # not an 81-cell puzzle
    "invalid": "clash",  # givens repeat a digit in a row, column or box
    "unsolvable": "unsolvable",  # consistent givens that no grid completes
    "multiple": "multiple",  # two or more solutions
    "limit": "limit",  # the node budget ran out (`max_nodes`) before uniqueness was decided
}
DUPLICATE = "duplicate"  # the same puzzle (after parsing) as an earlier kept row
BELOW_RATING = "rating"  # a rating below `min_rating`, or none (judged before solving)
REASONS = (*VERDICT_REASONS.values(), DUPLICATE)

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_FRACTION_SLACK = 1e-6


@dataclass(frozen=True)
class SplitOptions:
    """A split: `fractions` of the canonical groups (each above 0, summing to 1) going to the
    splits `names`, in that order; `seed` orders the groups and the rows (and draws the
    copies); `stratify` (None, `difficulty`, `grade`, `clues` or `rating`) keeps those shares
    within each stratum. `subsample`, `augment`: what the training split (the first) is
    made into; `min_rating`: the lowest `rating` a row may have (see the module)."""

    fractions: tuple[float, ...]
    names: tuple[str, ...]
    seed: int = 0
    stratify: str | None = None
    subsample: int | None = None
    augment: int = 0
    min_rating: float | None = None

    def __post_init__(self) -> None:
        if len(self.fractions) < 2:
            raise ValueError("fractions: give at least two, e.g. 0.8,0.2")
        if any(not math.isfinite(f) or f <= 0 for f in self.fractions):
            raise ValueError(f"fractions must each be above 0, not {_shown(self.fractions)}")
        total = math.fsum(self.fractions)
        if abs(total - 1) > _FRACTION_SLACK:
            raise ValueError(f"fractions must sum to 1, not {total:g} ({_shown(self.fractions)})")
        if len(self.names) != len(self.fractions):
            raise ValueError(
                f"{len(self.fractions)} fractions need {len(self.fractions)} "
                f"names, not {len(self.names)} ({','.join(self.names)})"
            )
        for name in self.names:
            if not _NAME.fullmatch(name) or name.lower() == "manifest":
                raise ValueError(
                    f"split name {name!r}: use letters, digits, _ . - (up to 64, "
                    "not starting with . or -, not 'manifest')"
                )
        if len({n.lower() for n in self.names}) != len(self.names):
            raise ValueError(f"split names must differ: {','.join(self.names)}")
        if isinstance(self.seed, bool) or not 0 <= self.seed < 2**63:
            raise ValueError(f"seed must be an integer from 0 to 2**63 - 1, not {self.seed!r}")
        if self.stratify is not None and self.stratify not in STRATA:
            raise ValueError(f"stratify must be one of {', '.join(STRATA)}, not {self.stratify!r}")
        if self.subsample is not None and (_not_whole(self.subsample) or self.subsample < 1):
            raise ValueError(
                f"subsample must be a whole number of at least 1, not {self.subsample!r}"
            )
        if _not_whole(self.augment) or self.augment < 0:
            raise ValueError(f"augment must be a whole number of at least 0, not {self.augment!r}")
        if self.min_rating is not None and (
            isinstance(self.min_rating, bool) or not math.isfinite(self.min_rating)
        ):
            raise ValueError(f"min_rating must be a number, not {self.min_rating!r}")

    @classmethod
    def parse(
        cls,
        fractions: str | Sequence[float],
        names: str | Sequence[str] | None = None,
        seed: int = 0,
        stratify: str | None = None,
        **training: Any,
    ) -> "SplitOptions":
        """Options from the command's text (`"0.8,0.1,0.1"`, `"train,val,test"`) or from
        sequences; names default to train,test for two fractions and train,val,test for three;
        `training`: subsample, augment, min_rating. ValueError (one sentence) for anything
        wrong."""
        if isinstance(fractions, str):
            try:
                values = tuple(float(part) for part in fractions.split(","))
            except ValueError:
                raise ValueError(
                    f"fractions: {fractions!r} is not a list of numbers like 0.8,0.1,0.1"
                ) from None
        else:
            values = tuple(float(f) for f in fractions)
        if names is None:
            if len(values) not in DEFAULT_NAMES:
                raise ValueError(
                    f"{len(values)} fractions: name the splits with names (--names a,b,c,d)"
                )
            chosen = DEFAULT_NAMES[len(values)]
        else:
            chosen = tuple(
                n.strip() for n in (names.split(",") if isinstance(names, str) else names)
            )
        return cls(values, chosen, seed, stratify, **training)

    @property
    def rate(self) -> bool:
        """Whether the puzzles must be rated (to stratify by difficulty or grade)."""
        return self.stratify in ("difficulty", "grade")

    @property
    def needs_rating(self) -> bool:
        """Whether the input's `rating` column is needed (to stratify or to filter by it)."""
        return self.stratify == RATING or self.min_rating is not None

    def as_dict(self) -> dict:
        return {
            "fractions": list(self.fractions),
            "names": list(self.names),
            "seed": self.seed,
            "stratify": self.stratify,
            "subsample": self.subsample,
            "augment": self.augment,
            "min_rating": self.min_rating,
        }


def _not_whole(value: Any) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def _shown(fractions: tuple[float, ...]) -> str:
    return ",".join(f"{f:g}" for f in fractions)

"""The layouts people hold, known by their column names: which column holds the puzzles, which
the solutions, which the ids, in the public corpora that models train and tools are timed on.

    known_layout(["source", "question", "answer", "rating"]).name   # "sudoku-extreme"
    known_layout(["quizzes", "solutions"]).solution                 # "solutions"

A header is in a layout when it holds every column the layout names (in any order, any case;
other columns may sit beside them: a model's `prediction`, say); when several layouts fit,
the one naming the most columns wins (Kaggle 3M's `id,puzzle,solution,clues,difficulty` over
Kaggle 9M's `puzzle,solution`). A layout of names anyone uses (Kaggle 9M's `puzzle,solution`)
is recognised only as it is, beside nothing but a model's prediction columns: `id,puzzle,
solution` is this tool's own layout, not Kaggle's. A recognised layout settles the columns by
their names, so no header is guessed from content and no note is given; options naming
columns still win.

The names matter most where they mislead: in sudoku-extreme (the set HRM and TRM train on)
`answer` is the dataset's solution, never a model's prediction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownLayout:
    """A public corpus's columns: its name, every column it has, and the roles of some."""

    name: str
    columns: tuple[str, ...]  # the header, in its order
    puzzle: str
    solution: str | None = None
    id: str | None = None
    exact: bool = False  # recognised only as it is (and a model's prediction columns)


KNOWN_LAYOUTS: tuple[KnownLayout, ...] = (
    # sapientinc/sudoku-extreme (HRM, TRM): `.` blanks; rating = tdoku backtracks
    KnownLayout("sudoku-extreme", ("source", "question", "answer", "rating"), "question", "answer"),
    # Kaggle "3 million Sudoku puzzles with ratings"
    KnownLayout(
        "kaggle-3m", ("id", "puzzle", "solution", "clues", "difficulty"), "puzzle", "solution", "id"
    ),
    KnownLayout("kaggle-1m", ("quizzes", "solutions"), "quizzes", "solutions"),
    KnownLayout("kaggle-9m", ("puzzle", "solution"), "puzzle", "solution", exact=True),
    # Recurrent Relational Networks (Palm et al.)
    KnownLayout("rrn", ("quiz", "solution"), "quiz", "solution"),
)


# a model's answers beside a corpus's columns (`columns.PREDICTION_NAMES`, which imports these)
PREDICTION_NAMES = ("prediction", "predictions", "predicted", "output", "outputs")


def known_layout(names: Iterable[str]) -> KnownLayout | None:
    """The layout whose columns the header `names` holds (the one naming most, when several
    do), else None."""
    held = {n.strip().lower() for n in names}
    fits = [layout for layout in KNOWN_LAYOUTS if _fits(layout, held)]
    return max(fits, key=lambda layout: len(layout.columns), default=None)


def _fits(layout: KnownLayout, held: set[str]) -> bool:
    own = set(layout.columns)
    return own <= held and (not layout.exact or held - own <= set(PREDICTION_NAMES))


def column_named(names: Iterable[str], wanted: str | None) -> str | None:
    """The column of `names` that is `wanted` case-insensitively (as the header spells it)."""
    if wanted is None:
        return None
    return next((n for n in names if n.strip().lower() == wanted), None)

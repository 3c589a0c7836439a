"""`split`: leak-free train/val/test splits in memory (`pipeline.split`) and how they are cut
(`jobs.split.plan`); the job and the command in test_cli_split.py. Corpora are made from
`pipeline.generate` with planted disguised copies (`pipeline.symmetry`), exact repeats,
puzzles with several solutions, malformed and clashing rows."""

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.jobs.split import split
from pipeline.jobs.split.options import SplitOptions
from pipeline.jobs.split.plan import _allocate
from pipeline.symmetry import random_symmetries

BASE = pipeline.generate(120, seed=7)
COPIES = 4  # disguises planted of each of the first DISGUISED puzzles
DISGUISED = 30


def _grids(puzzles: list[str]) -> np.ndarray:
    raw = np.frombuffer("".join(puzzles).encode(), np.uint8).reshape(-1, 81)
    return np.where(raw == ord("."), 0, raw - ord("0")).astype(np.uint8)


def _strings(grids: np.ndarray) -> list[str]:
    text = np.where(grids == 0, ord("."), grids + ord("0")).astype(np.uint8)
    return [row.tobytes().decode() for row in text]


def _remove_one_clue_for_multiple(puzzle: str) -> str:
    """A generated puzzle is minimal: without any one of its givens it has several solutions."""
    at = next(i for i, c in enumerate(puzzle) if c != ".")
    return puzzle[:at] + "." + puzzle[at + 1 :]


def _clash(puzzle: str) -> str:
    """The first given repeated in the first blank cell of its row."""
    at = next(i for i, c in enumerate(puzzle) if c != ".")
    row = at // 9
    blank = next(i for i in range(row * 9, row * 9 + 9) if puzzle[i] == ".")
    return puzzle[:blank] + puzzle[at] + puzzle[blank + 1 :]


def _corpus() -> pl.DataFrame:
    """BASE's puzzles, disguised copies of the first DISGUISED spread through the corpus,
    3 exact repeats (one written with 0 blanks), 2 with several solutions, 2 malformed, 1
    clash; `base` says which BASE puzzle a row comes from (-1: none)."""
    puzzles = BASE["puzzle"].to_list()
    rng = np.random.default_rng(3)
    rows = [(p, i) for i, p in enumerate(puzzles)]
    for _ in range(COPIES):
        disguised = _strings(random_symmetries(_grids(puzzles[:DISGUISED]), rng))
        rows += [(p, i) for i, p in enumerate(disguised)]
    rows += [(puzzles[5], 5), (puzzles[6], 6), (puzzles[7].replace(".", "0"), 7)]
    rows += [(_remove_one_clue_for_multiple(puzzles[i]), -1) for i in (50, 51)]
    rows += [("12345", -1), ("x" * 81, -1), (_clash(puzzles[60]), -1)]
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    return pl.DataFrame({"puzzle": [r[0] for r in rows], "base": [r[1] for r in rows]})


CORPUS = _corpus()


def _base_of(frames: dict[str, pl.DataFrame]) -> dict[int, set[str]]:
    where: dict[int, set[str]] = {}
    for name, frame in frames.items():
        for base in frame["base"].to_list():
            where.setdefault(base, set()).add(name)
    return where


def test_disguised_copies_land_in_one_split_and_no_canonical_form_crosses():
    splits = split(CORPUS, fractions="0.5,0.25,0.25", seed=11)

    where = _base_of(splits)
    assert all(len(names) == 1 for names in where.values()), where
    forms = {name: set(pipeline.canonical(f["puzzle"]).to_list()) for name, f in splits.items()}
    assert not forms["train"] & forms["val"] and not forms["train"] & forms["test"]
    assert not forms["val"] & forms["test"]
    for frame in splits.values():  # a group id stands for one canonical form
        pairs = frame.select("group", pl.Series(pipeline.canonical(frame["puzzle"]))).unique()
        assert pairs["group"].n_unique() == len(pairs)


def test_left_out_rows_are_counted_by_reason_and_the_first_repeat_kept():
    splits = split(CORPUS, fractions=(0.5, 0.5), seed=1)

    manifest = splits.manifest
    assert manifest.left_out == {"malformed": 2, "clash": 1, "unsolvable": 0, "multiple": 2,
                                 "limit": 0, "duplicate": 3}  # fmt: skip
    assert manifest.rows_read == len(CORPUS)
    assert manifest.rows_kept == len(BASE) * 1 + DISGUISED * COPIES
    assert manifest.groups == len(BASE)
    kept = pl.concat(splits.values())
    assert kept["puzzle"].n_unique() == len(kept)
    assert kept["base"].min() >= 0  # none of the bad rows
    for base in (5, 6, 7):  # the repeat kept is the first in input order
        rows = CORPUS.with_row_index("at").filter(pl.col("base") == base)
        first = rows.filter(pl.col("puzzle").str.replace_all("0", ".") == BASE["puzzle"][base])
        assert kept.filter(pl.col("puzzle") == BASE["puzzle"][base])["row"].to_list() == [
            first["at"][0]
        ]


def test_solutions_solve_and_clues_count():
    splits = split(CORPUS, fractions=(0.5, 0.5), seed=1)

    frame = pl.concat(splits.values())
    solved = pipeline.solve_batch(frame["puzzle"])
    assert (solved["verdict"] == "solved").all()
    assert solved["solution"].to_list() == frame["solution"].to_list()
    assert solved["clues"].to_list() == frame["clues"].to_list()


@pytest.mark.parametrize("fractions", [(0.8, 0.1, 0.1), (0.7, 0.2, 0.1), (0.5, 0.5)])
def test_group_shares_are_as_asked(fractions):
    corpus = pipeline.generate(1000, seed=2)

    splits = split(corpus, fractions=fractions, seed=5)

    groups = [frame["group"].n_unique() for frame in splits.values()]
    assert groups == [round(f * 1000) for f in fractions]


def test_rows_are_shuffled_by_the_seed_and_the_same_seed_gives_the_same_split():
    first = split(CORPUS, fractions=(0.5, 0.5), seed=1)
    again = split(CORPUS, fractions=(0.5, 0.5), seed=1, workers=2)
    other = split(CORPUS, fractions=(0.5, 0.5), seed=2)

    for name in first:
        assert first[name].equals(again[name])
        assert not first[name]["row"].is_sorted()
    assert not first["train"]["puzzle"].equals(other["train"]["puzzle"])


def test_strata_keep_the_shares_within_each():
    corpus = pipeline.generate(600, seed=4)
    options = SplitOptions.parse((0.6, 0.2, 0.2), stratify="clues")

    splits = split(corpus, fractions=options.fractions, seed=3, stratify="clues")

    strata = splits.manifest.strata
    assert set(strata) == {str(c) for c in corpus["clues"].unique().to_list()}
    for counts in strata.values():
        m = sum(counts.values())
        for name, fraction in zip(options.names, options.fractions, strict=True):
            assert abs(counts[name] - fraction * m) <= 2, (counts, m)
    assert [frame["group"].n_unique() for frame in splits.values()] == [360, 120, 120]


def test_allocation_is_exact_overall_and_close_in_every_stratum():
    rng = np.random.default_rng(0)
    strata = np.sort(rng.integers(0, 40, 5000))  # many small strata
    fractions = (0.8, 0.1, 0.1)

    split_of = _allocate(strata, fractions)

    assert np.bincount(split_of).tolist() == [4000, 500, 500]
    for value in np.unique(strata):
        counts = np.bincount(split_of[strata == value], minlength=3)
        assert (np.abs(counts - np.array(fractions) * counts.sum()) <= 2).all()


def test_rating_strata_and_a_passed_column_that_takes_a_rating_name():
    corpus = pipeline.generate(200, seed=9).with_columns(difficulty=pl.lit("easy"))

    by_grade = split(corpus, fractions=(0.5, 0.5), seed=1, stratify="grade")
    by_difficulty = split(corpus, fractions=(0.5, 0.5), seed=1, stratify="difficulty")

    assert set(by_grade.manifest.strata) <= set(pipeline.GRADES)
    assert len(by_difficulty.manifest.strata) == 10
    train = by_difficulty["train"]
    assert {"difficulty", "grade", "input_difficulty", "group"} <= set(train.columns)
    assert train["input_difficulty"].unique().to_list() == ["easy"]
    assert "grade" not in split(corpus, fractions=(0.5, 0.5)).get("train").columns


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"fractions": "0.5,0.6"}, "sum to 1"),
        ({"fractions": "0.8,x"}, "not a list of numbers"),
        ({"fractions": (0.25,) * 4}, "name the splits"),
        ({"fractions": (0.5, 0.5), "names": "a,a"}, "must differ"),
        ({"fractions": (0.5, 0.5), "names": "a,b,c"}, "2 names"),
        ({"fractions": (0.5, 0.5), "names": "../x,b"}, "split name"),
        ({"fractions": (0.5, 0.5), "stratify": "size"}, "stratify"),
        ({"fractions": (1.0, 0.0)}, "above 0"),
    ],
)
def test_bad_options_say_what_is_wrong(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        split(BASE.head(3), **kwargs)


def test_a_wrong_input_solution_is_counted_and_the_unique_one_written():
    corpus = BASE.head(10).select("puzzle", "solution")
    wrong = corpus["solution"][3][::-1]
    corpus = corpus.with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit(wrong))
        .otherwise("solution")
        .alias("solution")
    )

    splits = split(corpus, fractions=(0.5, 0.5))

    assert splits.manifest.wrong_input_solutions == 1
    kept = pl.concat(splits.values()).sort("row")
    assert kept["solution"].to_list() == BASE.head(10)["solution"].to_list()
    assert (
        split(corpus.select("puzzle"), fractions=(0.5, 0.5)).manifest.wrong_input_solutions is None
    )


def test_a_lazy_frame_is_split_as_its_collected_frame():
    assert split(BASE.lazy(), fractions=(0.5, 0.5))["test"].equals(
        split(BASE, fractions=(0.5, 0.5))["test"]
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=300),
    st.lists(st.integers(1, 50), min_size=2, max_size=5),
)
def test_allocation_for_any_strata_and_fractions(values, weights):
    strata = np.sort(np.array(values))
    fractions = tuple(w / sum(weights) for w in weights)

    split_of = _allocate(strata, fractions)

    counts = np.bincount(split_of, minlength=len(fractions))
    assert counts.sum() == len(strata)
    assert (np.abs(counts - np.array(fractions) * len(strata)) < 1 + 1e-9).all()
    for value in np.unique(strata):
        inside = np.bincount(split_of[strata == value], minlength=len(fractions))
        assert (np.abs(inside - np.array(fractions) * inside.sum()) <= 2).all(), (inside, fractions)

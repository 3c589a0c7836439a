"""`split --format hrm`: the folders HRM's `PuzzleDataset` (github sapientinc/HRM,
`puzzle_dataset.py`) loads, checked with that loader's own logic re-implemented in numpy;
`--augment`, `--subsample`, `--min-rating`, `--stratify rating` on a sudoku-extreme-style CSV
(`source,question,answer,rating`, `.` blanks) made from generated puzzles."""

import json

import numpy as np
import polars as pl
import pytest

import pipeline
from pipeline.grid import format_grids
from pipeline.jobs.split import split_file
from pipeline.kernels.checks import verify_solutions
from tests.conftest import assert_one_line_error, cli

FIELDS = ("inputs", "labels", "puzzle_identifiers", "puzzle_indices", "group_indices")
METADATA = ("pad_id", "ignore_label_id", "blank_identifier_id", "vocab_size", "seq_len",
            "num_puzzle_identifiers", "total_groups", "mean_puzzle_examples", "sets")  # fmt: skip
BASE = pipeline.generate(160, seed=21)


@pytest.fixture(scope="module")
def extreme(tmp_path_factory):
    path = tmp_path_factory.mktemp("hrm") / "extreme.csv"
    ratings = np.arange(len(BASE)) % 40
    pl.DataFrame({"source": ["gen"] * len(BASE), "question": BASE["puzzle"],
                  "answer": BASE["solution"], "rating": ratings}).write_csv(path)  # fmt: skip
    return path


def _load(folder, split):
    """What `PuzzleDataset._lazy_load_dataset` does: the metadata, then each set's fields."""
    metadata = json.loads((folder / split / "dataset.json").read_text())
    assert list(metadata) == list(METADATA)  # PuzzleDatasetMetadata(**json) takes it
    data = {}
    for name in metadata["sets"]:
        data[name] = {f: np.load(folder / split / f"{name}__{f}.npy",
                                 mmap_mode="r" if f in ("inputs", "labels") else None)
                      for f in FIELDS}  # fmt: skip
    return metadata, data


def _check_contract(metadata, arrays):
    """The shapes, dtypes and index rules `_iter_train` and `_iter_test` rely on."""
    n = len(arrays["inputs"])
    assert arrays["inputs"].dtype == arrays["labels"].dtype == np.uint8
    assert arrays["inputs"].shape == arrays["labels"].shape == (n, metadata["seq_len"])
    for f in ("puzzle_identifiers", "puzzle_indices", "group_indices"):
        assert arrays[f].dtype == np.int32
    assert (arrays["puzzle_identifiers"] == 0).all() and len(arrays["puzzle_identifiers"]) == n
    assert arrays["puzzle_indices"].tolist() == list(range(n + 1))
    groups = arrays["group_indices"]
    assert groups[0] == 0 and groups[-1] == n and (np.diff(groups) > 0).all()
    assert metadata["total_groups"] == len(groups) - 1
    assert arrays["inputs"].min() >= 1 and arrays["inputs"].max() <= 10  # digit + 1, blank 1
    assert arrays["labels"].min() >= 2  # solutions: no blanks (never the ignored 0)


def _grids(encoded):
    return np.asarray(encoded, np.uint8) - 1


def test_the_folders_load_as_puzzle_dataset_loads_them(extreme, tmp_path):
    out = tmp_path / "sx"

    manifest = split_file(extreme, out, fractions="0.9,0.1", seed=3, format="hrm",
                          solution_column="answer", progress=False)  # fmt: skip

    assert json.loads((out / "identifiers.json").read_text()) == ["<blank>"]
    for split in ("train", "test"):
        metadata, data = _load(out, split)
        assert metadata["sets"] == ["all"] and metadata["vocab_size"] == 11
        _check_contract(metadata, data["all"])
        rows = manifest.splits[split]["rows"]
        assert metadata["total_groups"] == rows == len(data["all"]["inputs"])
        puzzles, solutions = _grids(data["all"]["inputs"]), _grids(data["all"]["labels"])
        assert verify_solutions(puzzles, solutions).all()
        rating = np.load(out / split / "all__rating.npy")  # sudoku-extreme's columns kept
        assert rating.dtype.kind == "i" and len(rating) == rows
    assert manifest.splits["train"]["rows"] + manifest.splits["test"]["rows"] == len(BASE)


def test_augment_makes_each_training_puzzle_a_group_of_itself_and_its_copies(extreme, tmp_path):
    out = tmp_path / "sx"

    manifest = split_file(extreme, out, fractions="0.8,0.2", seed=5, format="hrm", augment=4,
                          solution_column="answer", progress=False)  # fmt: skip

    metadata, data = _load(out, "train")
    arrays = data["all"]
    _check_contract(metadata, arrays)
    groups = arrays["group_indices"]
    puzzles, solutions = _grids(arrays["inputs"]), _grids(arrays["labels"])
    assert verify_solutions(puzzles, solutions).all()  # each solution moved alike
    canonical = np.array(pipeline.canonical(pl.Series(format_grids(puzzles))))
    for g in range(len(groups) - 1):
        members = slice(groups[g], groups[g + 1])
        assert groups[g + 1] - groups[g] == 5  # the puzzle and 4 distinct copies
        assert len(set(canonical[members])) == 1  # all disguises of the group's first
        assert len({p.tobytes() for p in puzzles[members]}) == 5
    assert manifest.splits["train"]["examples"] == 5 * manifest.splits["train"]["rows"]
    _, test = _load(out, "test")  # the other splits are not augmented
    assert len(test["all"]["group_indices"]) - 1 == len(test["all"]["inputs"])
    train_forms = set(canonical)
    test_forms = set(pipeline.canonical(pl.Series(format_grids(
        _grids(test["all"]["inputs"])))))  # fmt: skip
    assert not train_forms & test_forms  # no copy leaks into the test split
    assert manifest.training["augment"] == 4 and manifest.training["seed"] == 5


def test_the_same_seed_gives_the_same_arrays_whatever_the_workers(extreme, tmp_path):
    def arrays(out, **how):
        split_file(extreme, out, fractions="0.8,0.2", seed=9, format="hrm", augment=2,
                   solution_column="answer", progress=False, **how)  # fmt: skip
        return {p.relative_to(out): p.read_bytes() for p in out.rglob("*.npy")}

    one = arrays(tmp_path / "a", workers=1, batch_size=37)
    assert one == arrays(tmp_path / "b", workers=2, batch_size=50)
    other = split_file(extreme, tmp_path / "d", fractions="0.8,0.2", seed=10, format="hrm",
                       augment=2, solution_column="answer", progress=False)  # fmt: skip
    assert other.options["seed"] == 10
    assert (tmp_path / "d" / "train" / "all__inputs.npy").read_bytes() != one[
        (tmp_path / "a" / "train" / "all__inputs.npy").relative_to(tmp_path / "a")
    ]


def test_subsample_and_min_rating_as_build_sudoku_dataset_has_them(extreme, tmp_path):
    out = tmp_path / "sx"

    manifest = split_file(extreme, out, fractions="0.5,0.5", seed=2, format="hrm",
                          subsample=30, min_rating=10, stratify="rating",
                          solution_column="answer", progress=False)  # fmt: skip

    assert manifest.left_out["rating"] == 4 * 10  # ratings 0..9, four times each
    assert manifest.splits["train"]["rows"] == 30
    assert manifest.training["rows_before_subsample"] > 30
    for split in ("train", "test"):
        assert np.load(out / split / "all__rating.npy").min() >= 10
    assert all(label.startswith("decile") for label in manifest.strata)


def test_subsample_draws_the_first_rows_of_the_seeded_order_in_parquet_too(extreme, tmp_path):
    whole = split_file(extreme, tmp_path / "w", fractions="0.5,0.5", seed=4,
                       solution_column="answer", progress=False)  # fmt: skip
    part = split_file(extreme, tmp_path / "p", fractions="0.5,0.5", seed=4, subsample=12,
                      solution_column="answer", progress=False)  # fmt: skip
    train = pl.read_parquet(tmp_path / "w" / "train.parquet")
    sample = pl.read_parquet(tmp_path / "p" / "train.parquet")
    assert sample.equals(train.head(12))
    assert {"source", "rating"} <= set(sample.columns)
    assert part.splits["test"]["rows"] == whole.splits["test"]["rows"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--augment", "3"], "--augment needs a format that holds groups"),
        (["--format", "npy", "--augment", "3"], "--augment needs a format that holds groups"),
        (["--format", "hrm", "--augment", "2", "--subsample", "0"], "subsample"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(extreme, tmp_path, args, fragment):
    result = cli("split", extreme, "-o", tmp_path / "o", "--solution-column", "answer", *args)
    assert result.exit_code == 2
    if "subsample" not in fragment:
        assert_one_line_error(result.stderr, fragment)
    assert not (tmp_path / "o").exists()


def test_no_rating_column_is_one_line(tmp_path):
    path = tmp_path / "plain.csv"
    BASE.select("puzzle", "solution").write_csv(path)
    result = cli("split", path, "-o", tmp_path / "o", "--min-rating", "3")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "needs a column named rating")


def test_pencilmark_rows_are_refused_by_hrm(tmp_path):
    puzzle, solution = BASE["puzzle"][0], BASE["solution"][0]
    marks = "".join("........."[: int(c) - 1] + c + "........."[int(c) :] if p != "." else
                    "123456789" for p, c in zip(puzzle, solution, strict=True))  # fmt: skip
    path = tmp_path / "marks.csv"
    pl.DataFrame({"puzzle": [BASE["puzzle"][1], marks]}).write_csv(path)
    result = cli("split", path, "-o", tmp_path / "o", "--format", "hrm", "--fractions", "0.5,0.5")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "pencilmark puzzle")
    assert not (tmp_path / "o").exists()


def test_a_folder_of_other_work_is_not_written_over(extreme, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = cli("split", extreme, "-o", out, "--format", "hrm", "--force",
                 "--solution-column", "answer")  # fmt: skip
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "will not delete it")
    assert (out / "notes.txt").read_text() == "mine"


def test_the_in_memory_split_takes_the_same_options():
    frame = pl.DataFrame({"puzzle": BASE["puzzle"], "rating": np.arange(len(BASE)) % 40})

    splits = pipeline.split(frame, fractions=(0.5, 0.5), seed=2, subsample=20, min_rating=10,
                            stratify="rating")  # fmt: skip

    assert len(splits["train"]) == 20 and splits["train"]["rating"].min() >= 10
    assert splits.manifest.left_out["rating"] == 40
    assert splits.manifest.training["rows_before_subsample"] > 20

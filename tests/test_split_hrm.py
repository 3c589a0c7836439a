"""`split --format hrm`: the folders HRM's `PuzzleDataset` (github sapientinc/HRM,
`puzzle_dataset.py`) loads, checked with that loader's own logic re-implemented in numpy
(tests/hrm_loader.py);
`--augment`, `--subsample`, `--min-rating`, `--stratify rating` on a sudoku-extreme-style CSV
(`source,question,answer,rating`, `.` blanks) made from generated puzzles."""

import io
import json

import numpy as np
import polars as pl
import pytest

import pipeline
from pipeline.grid import format_grids
from pipeline.jobs.split import split_file
from pipeline.kernels.checks import verify_solutions
from tests.conftest import assert_one_line_error, cli
from tests.hrm_loader import check_contract, evaluation_batches, grids, load, train_batches

BASE = pipeline.generate(160, seed=21)


@pytest.fixture(scope="module")
def extreme(tmp_path_factory):
    path = tmp_path_factory.mktemp("hrm") / "extreme.csv"
    ratings = np.arange(len(BASE)) % 40
    pl.DataFrame({"source": ["gen"] * len(BASE), "question": BASE["puzzle"],
                  "answer": BASE["solution"], "rating": ratings}).write_csv(path)  # fmt: skip
    return path


def test_the_folders_load_as_puzzle_dataset_loads_them(extreme, tmp_path):
    out = tmp_path / "sx"

    manifest = split_file(extreme, out, fractions="0.9,0.1", seed=3, format="hrm",
                          solution_column="answer", progress=False)  # fmt: skip

    assert json.loads((out / "identifiers.json").read_text()) == ["<blank>"]
    for split in ("train", "test"):
        metadata, data = load(out, split)
        assert metadata["sets"] == ["all"] and metadata["vocab_size"] == 11
        check_contract(metadata, data["all"])
        rows = manifest.splits[split]["rows"]
        assert metadata["total_groups"] == rows == len(data["all"]["inputs"])
        puzzles, solutions = grids(data["all"]["inputs"]), grids(data["all"]["labels"])
        assert verify_solutions(puzzles, solutions).all()
        rating = np.load(out / split / "all__rating.npy")  # sudoku-extreme's columns kept
        assert rating.dtype.kind == "i" and len(rating) == rows
        for path in (out / split).glob("*.npy"):  # the very bytes HRM's np.save writes
            saved = io.BytesIO()
            np.save(saved, np.load(path))
            assert path.read_bytes() == saved.getvalue(), path.name
        source = np.load(out / split / "all__source.npy")  # as codes, their labels named
        labels = json.loads((out / split / "meta.json").read_text())["labels"]["source"]
        assert {labels[code] for code in source} == {"gen"} and len(source) == rows
    assert manifest.splits["train"]["rows"] + manifest.splits["test"]["rows"] == len(BASE)


def test_an_epoch_of_the_loaders_logic_sees_a_puzzle_of_each_group(extreme, tmp_path):
    out = tmp_path / "sx"
    split_file(extreme, out, fractions="0.75,0.25", seed=1, format="hrm", augment=3,
               solution_column="answer", progress=False)  # fmt: skip

    metadata, data = load(out, "train")
    arrays = data["all"]
    batches = train_batches(metadata, arrays, batch_size=16)
    groups = len(arrays["group_indices"]) - 1
    assert len(batches) == groups // 16  # one puzzle of each group an epoch, the rest dropped
    seen = np.concatenate([b["rows"] for b in batches])
    owner = np.searchsorted(arrays["group_indices"], seen, side="right") - 1
    assert len(set(owner.tolist())) == len(seen)  # never two of one group in an epoch
    for batch in batches:
        assert batch["inputs"].shape == (16, 81) and batch["inputs"].dtype == np.int32
        assert verify_solutions(grids(batch["inputs"]), grids(batch["labels"])).all()
    metadata, data = load(out, "test")
    batches = evaluation_batches(metadata, data["all"], batch_size=16)
    assert sum(len(b["rows"]) for b in batches) == metadata["total_groups"]
    last = batches[-1]
    assert (last["inputs"][len(last["rows"]) :] == metadata["pad_id"]).all()  # padded


def test_augment_makes_each_training_puzzle_a_group_of_itself_and_its_copies(extreme, tmp_path):
    out = tmp_path / "sx"

    manifest = split_file(extreme, out, fractions="0.8,0.2", seed=5, format="hrm", augment=4,
                          solution_column="answer", progress=False)  # fmt: skip

    metadata, data = load(out, "train")
    arrays = data["all"]
    check_contract(metadata, arrays)
    groups = arrays["group_indices"]
    puzzles, solutions = grids(arrays["inputs"]), grids(arrays["labels"])
    assert verify_solutions(puzzles, solutions).all()  # each solution moved alike
    canonical = np.array(pipeline.canonical(pl.Series(format_grids(puzzles))))
    for g in range(len(groups) - 1):
        members = slice(groups[g], groups[g + 1])
        assert groups[g + 1] - groups[g] == 5  # the puzzle and 4 distinct copies
        assert len(set(canonical[members])) == 1  # all disguises of the group's first
        assert len({p.tobytes() for p in puzzles[members]}) == 5
    assert manifest.splits["train"]["examples"] == 5 * manifest.splits["train"]["rows"]
    _, test = load(out, "test")  # the other splits are not augmented
    assert len(test["all"]["group_indices"]) - 1 == len(test["all"]["inputs"])
    train_forms = set(canonical)
    test_forms = set(pipeline.canonical(pl.Series(format_grids(
        grids(test["all"]["inputs"])))))  # fmt: skip
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


@pytest.mark.parametrize("fmt", ["parquet", "hrm"])
def test_a_fraction_in_a_later_batch_makes_every_rating_a_float(tmp_path, fmt):
    ratings = [str(i) for i in range(len(BASE))]
    ratings[150] = "2.5"  # whole numbers in the first batches, a fraction in the last
    path = tmp_path / "mixed.csv"
    pl.DataFrame({"question": BASE["puzzle"], "answer": BASE["solution"],
                  "rating": ratings}).write_csv(path)  # fmt: skip
    out = tmp_path / "out"

    split_file(path, out, fractions="0.5,0.5", format=fmt, batch_size=40, column="question",
               solution_column="answer", progress=False)  # fmt: skip

    if fmt == "parquet":
        rating = pl.concat([pl.read_parquet(p) for p in out.glob("*.parquet")])["rating"]
    else:
        rating = pl.Series(np.concatenate([np.load(p) for p in out.glob("*/all__rating.npy")]))
    assert rating.dtype == pl.Float64 and sorted(rating.to_list())[:4] == [0, 1, 2, 2.5]
    frame = pl.DataFrame({"puzzle": BASE["puzzle"], "rating": ratings})
    splits = pipeline.split(frame, fractions=(0.5, 0.5), workers=2)  # chunks in threads
    assert splits["train"]["rating"].dtype == pl.Float64


def test_a_chunk_keyed_by_the_sorts_keys_is_the_chunk_keyed_by_its_own_hashes():
    from pipeline.io.arrays import column_arrays
    from pipeline.jobs.split.hashing import ROW_ORDER, hash_rows, string_bytes
    from pipeline.jobs.split.hrm_writer import KEY, extras_of, hrm_chunk

    frame = BASE.select("puzzle", "solution").with_columns(
        group=pl.int_range(pl.len(), dtype=pl.Int64), rating=pl.lit(1.5)
    )
    keys = hash_rows(string_bytes(frame["puzzle"].to_arrow()), 4, ROW_ORDER)
    keyed = frame.with_columns(pl.Series(KEY, keys, pl.UInt64))
    own = hrm_chunk((frame, column_arrays(extras_of(frame)), None), 3, 4)
    given = hrm_chunk((keyed, column_arrays(extras_of(keyed)), None), 3, 4)

    assert extras_of(keyed).schema == extras_of(frame).schema  # the key is not written
    assert (given.inputs == own.inputs).all() and (given.labels == own.labels).all()
    assert (given.inputs.min(), given.inputs.max()) == (1, 10)  # HRM's tokens
    assert (given.sizes == own.sizes).all() and len(given.inputs) == 4 * len(frame)

"""`augment --format hrm`: the folder of a split that HRM's and TRM's `PuzzleDataset` loads
(checked with that loader's logic, tests/hrm_loader.py), each input puzzle a group of itself
and its K copies (K = 0: a test split, the puzzles as they are); the same bytes for the same
seed whatever the workers; the rules of every folder of arrays; pencilmark rows refused in one
line."""

import json

import numpy as np
import polars as pl
import pytest

import pipeline
from pipeline.errors import InputError
from pipeline.grid import parse_puzzles
from pipeline.jobs.augment.job import augment_file
from pipeline.kernels.checks import verify_solutions
from pipeline.symmetry_kernels import undo_symmetries
from tests.conftest import assert_one_line_error, cli
from tests.hrm_loader import check_contract, grids, load, train_batches

BASE = pipeline.generate(30, seed=31)


@pytest.fixture
def extreme(tmp_path):
    """A sudoku-extreme-style CSV: source, question, answer, rating; `.` blanks."""
    path = tmp_path / "train.csv"
    pl.DataFrame({"source": ["kaggle", "forum"] * (len(BASE) // 2), "question": BASE["puzzle"],
                  "answer": BASE["solution"],
                  "rating": np.arange(len(BASE)) % 7}).write_csv(path)  # fmt: skip
    return path


def _augment(source, out, *args):
    return cli("augment", source, "-o", out, "--format", "hrm", "--column", "question",
               "--solution-column", "answer", *args)  # fmt: skip


def test_each_puzzle_is_a_group_of_itself_and_its_copies_the_loader_reads(extreme, tmp_path):
    out = tmp_path / "sx"
    out.mkdir()
    done = _augment(extreme, out / "train", "--copies", 4, "--seed", 3)
    assert done.exit_code == 0, done.output

    assert json.loads((out / "identifiers.json").read_text()) == ["<blank>"]
    metadata, data = load(out, "train")
    arrays = data["all"]
    check_contract(metadata, arrays)
    assert metadata["total_groups"] == len(BASE) and len(arrays["inputs"]) == 5 * len(BASE)
    assert (np.diff(arrays["group_indices"]) == 5).all()
    puzzles, solutions = grids(arrays["inputs"]), grids(arrays["labels"])
    assert verify_solutions(puzzles, solutions).all()  # each solution moved with its puzzle
    copy = np.load(out / "train" / "all__copy.npy")
    assert copy.tolist() == [0, 1, 2, 3, 4] * len(BASE)
    originals = parse_puzzles(BASE["puzzle"]).grids
    assert (puzzles[copy == 0] == originals).all()  # the group's first: the puzzle itself
    symmetry = [np.load(out / "train" / f"all__{name}.npy")
                for name in ("relabel", "row_order", "column_order", "transposed")]  # fmt: skip
    assert (undo_symmetries(puzzles, *symmetry) == np.repeat(originals, 5, axis=0)).all()
    for group in range(len(BASE)):
        assert len({p.tobytes() for p in puzzles[5 * group : 5 * group + 5]}) == 5
    batches = train_batches(metadata, arrays, batch_size=8)
    assert len(batches) == len(BASE) // 8
    assert all(verify_solutions(grids(b["inputs"]), grids(b["labels"])).all() for b in batches)


def test_sudoku_extremes_columns_are_kept_beside_the_arrays(extreme, tmp_path):
    assert _augment(extreme, tmp_path / "train", "--copies", 2).exit_code == 0

    rating = np.load(tmp_path / "train" / "all__rating.npy")
    assert rating.tolist() == np.repeat(np.arange(len(BASE)) % 7, 3).tolist()
    meta = json.loads((tmp_path / "train" / "meta.json").read_text())
    labels = meta["labels"]["source"]
    source = np.load(tmp_path / "train" / "all__source.npy")
    assert [labels[code] for code in source[::3]] == ["kaggle", "forum"] * (len(BASE) // 2)
    assert meta["sudoku_pipeline"]["options"]["copies"] == 2


def test_a_test_split_beside_it_holds_the_puzzles_as_they_are(extreme, tmp_path):
    (tmp_path / "identifiers.json").write_text('["<blank>"]')  # HRM's own: left as it is
    assert _augment(extreme, tmp_path / "train", "--copies", 3).exit_code == 0
    done = _augment(extreme, tmp_path / "test", "--copies", 0)  # in the same dataset folder
    assert done.exit_code == 0, done.output

    metadata, data = load(tmp_path, "test")
    check_contract(metadata, data["all"])
    assert metadata["total_groups"] == len(data["all"]["inputs"]) == len(BASE)
    assert (grids(data["all"]["inputs"]) == parse_puzzles(BASE["puzzle"]).grids).all()
    assert load(tmp_path, "train")[0]["total_groups"] == len(BASE)  # the train split stays
    done = cli("augment", extreme, "-o", tmp_path / "x.parquet", "--copies", 0)
    assert done.exit_code == 2  # no copies is for HRM's folders only


def test_the_same_seed_gives_the_same_bytes_whatever_the_workers(extreme, tmp_path):
    def arrays(out, **how):
        augment_file(extreme, out, copies=3, seed=5, format="hrm", column="question",
                     solution_column="answer", progress=False, **how)  # fmt: skip
        return {p.relative_to(out): p.read_bytes() for p in sorted(out.glob("*.npy"))}

    one = arrays(tmp_path / "a", workers=1, batch_size=7)
    assert one == arrays(tmp_path / "b", workers=2, batch_size=11)
    assert len(one) >= 12


def test_a_rerun_replaces_its_own_folder_and_nothing_else(extreme, tmp_path):
    out = tmp_path / "train"
    assert _augment(extreme, out, "--copies", 1).exit_code == 0
    assert _augment(extreme, out, "--copies", 2).exit_code == 0  # its own: replaced
    assert np.load(out / "all__inputs.npy").shape == (3 * len(BASE), 81)

    theirs = tmp_path / "test"  # a split folder somebody else made
    theirs.mkdir()
    (theirs / "all__inputs.npy").write_bytes(b"theirs")
    done = _augment(extreme, theirs, "--copies", 0)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "not a result of sudoku-pipeline", "--force")
    (theirs / "notes.txt").write_text("mine")
    done = _augment(extreme, theirs, "--copies", 0, "--force")
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "will not delete it")
    assert (theirs / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("output", "fragment"), [("-", "cannot go to stdout"), (".", "holds the input")]
)
def test_outputs_that_cannot_be_a_split_folder_are_refused_in_one_line(extreme, output,
                                                                       fragment):  # fmt: skip
    done = _augment(extreme, extreme.parent / output if output != "-" else "-", "--copies", 1)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, fragment)


def test_the_folder_is_named_after_the_input_by_default(extreme):
    done = cli("augment", extreme, "--format", "hrm", "--column", "question",
               "--solution-column", "answer", "--copies", 1)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (extreme.parent / "train" / "dataset.json").exists()  # train.csv -> train/
    assert (extreme.parent / "identifiers.json").exists()


def test_pencilmark_rows_are_refused_in_one_line_and_nothing_is_written(tmp_path):
    puzzle, solution = BASE["puzzle"][0], BASE["solution"][0]
    marks = "".join("123456789" if p == "." else "." * (int(s) - 1) + s + "." * (9 - int(s))
                    for p, s in zip(puzzle, solution, strict=True))  # fmt: skip
    path = tmp_path / "marks.csv"
    pl.DataFrame({"puzzle": [BASE["puzzle"][1], marks, BASE["puzzle"][2]]}).write_csv(path)

    done = cli("augment", path, "-o", tmp_path / "out", "--format", "hrm", "--copies", 2)

    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "row 1 is a pencilmark puzzle", "81 cells")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marks.csv"]
    with pytest.raises(InputError, match="pencilmark"):
        augment_file(path, tmp_path / "out", format="hrm", progress=False)


def test_bad_rows_are_left_out_and_counted_not_written(tmp_path):
    path = tmp_path / "mixed.csv"
    rows = [BASE["puzzle"][0], "not a puzzle", BASE["puzzle"][1], "1" * 81]
    pl.DataFrame({"puzzle": rows}).write_csv(path)

    summary = augment_file(path, tmp_path / "out", copies=2, format="hrm", progress=False)

    assert summary.left_out == {"malformed": 1, "invalid": 1}
    assert summary.examples == {"malformed": [1], "invalid": [3]}
    metadata, data = load(tmp_path, "out")
    check_contract(metadata, data["all"])
    assert metadata["total_groups"] == 2
    assert np.load(tmp_path / "out" / "all__group.npy").tolist() == [0] * 3 + [2] * 3

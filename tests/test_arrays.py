"""A table as a folder of `.npy` files (pipeline.io.arrays): streamed, read back by numpy
(memory-mapped too), written in place atomically, never over what is not ours."""

import json
import os

import numpy as np
import pyarrow as pa
import pytest

from pipeline.errors import InputError
from pipeline.io.array_folders import (
    META,
    NpyFolder,
    check_array_folder,
    is_own_folder,
    write_npy_folder,
)
from pipeline.io.arrays import NpyAppender, column_arrays

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def _schema() -> pa.Schema:
    return pa.schema([
        ("puzzle", pa.string()), ("solution", pa.string()), ("group", pa.int64()),
        ("clues", pa.int8()), ("difficulty", pa.float64()), ("ok", pa.bool_()),
        ("relabel", pa.list_(pa.uint8(), 9)), ("grade", pa.dictionary(pa.int8(), pa.string())),
        ("id", pa.string()),
    ])  # fmt: skip


def _table(start: int, n: int, *, grades: list[str] | None = None) -> pa.Table:
    grades = grades or ["singles"] * n
    return pa.table(
        {
            "puzzle": [PUZZLE] * n,
            "solution": [SOLUTION if i % 2 == 0 else None for i in range(n)],
            "group": list(range(start, start + n)),
            "clues": [30] * n,
            "difficulty": [1.5 if i % 3 else None for i in range(n)],
            "ok": [True if i % 4 else None for i in range(n)],
            "relabel": [list(range(1, 10))] * n,
            "grade": pa.array(grades).dictionary_encode(),
            "id": [f"p{i}" for i in range(start, start + n)],
        },
        schema=_schema(),
    )


def test_a_table_streamed_reads_back_whole_with_numpy(tmp_path):
    out = tmp_path / "train"
    rows = write_npy_folder(out, _schema(), [_table(0, 5), _table(5, 0), _table(5, 7)])
    assert rows == 12
    puzzles = np.load(out / "puzzle.npy", mmap_mode="r")
    assert puzzles.shape == (12, 81) and puzzles.dtype == np.uint8
    assert "".join(map(str, puzzles[3])).replace("0", ".") == PUZZLE
    solutions = np.load(out / "solution.npy")
    assert "".join(map(str, solutions[0])) == SOLUTION
    assert not solutions[1].any()  # a null solution: all blanks
    assert np.load(out / "group.npy").tolist() == list(range(5)) + list(range(5, 12))
    assert np.load(out / "group.npy").dtype == np.int64
    assert np.load(out / "clues.npy").dtype == np.int8
    difficulty = np.load(out / "difficulty.npy")
    assert np.isnan(difficulty[0]) and difficulty[1] == 1.5
    assert np.load(out / "relabel.npy").shape == (12, 9)
    assert not (out / "id.npy").exists()
    meta = json.loads((out / META).read_text())
    assert meta["skipped"] == ["id"] and meta["rows"] == 12
    assert meta["files"]["puzzle.npy"]["shape"] == [12, 81]
    assert is_own_folder(out)


def test_nulls_in_a_column_without_nan_get_a_valid_mask_from_the_first_null(tmp_path):
    out = tmp_path / "arrays"
    first = _table(0, 4).set_column(5, "ok", pa.array([True, False, True, True]))
    write_npy_folder(out, _schema(), [first, _table(4, 4)])
    ok = np.load(out / "ok.npy")
    valid = np.load(out / "ok.valid.npy")
    assert ok.tolist() == [True, False, True, True, False, True, True, True]
    assert valid.tolist() == [True] * 4 + [False, True, True, True]


def test_dictionary_codes_stay_one_labelling_across_batches(tmp_path):
    out = tmp_path / "arrays"
    a = _table(0, 2, grades=["singles", "pairs"])
    b = _table(2, 2, grades=["x_wing", "singles"])  # another dictionary order
    write_npy_folder(out, _schema(), [a, b])
    labels = json.loads((out / META).read_text())["labels"]["grade"]
    codes = np.load(out / "grade.npy")
    assert [labels[c] for c in codes] == ["singles", "pairs", "x_wing", "singles"]


def test_no_rows_is_arrays_of_no_rows(tmp_path):
    out = tmp_path / "empty"
    assert write_npy_folder(out, _schema(), []) == 0
    assert np.load(out / "puzzle.npy").shape == (0, 81)
    assert np.load(out / "group.npy").shape == (0,)


def test_the_header_is_as_long_for_any_count_so_it_is_rewritten_in_place(tmp_path):
    small = NpyAppender(tmp_path / "small.npy", np.dtype(np.uint8), (81,))
    small.append(np.ones((3, 81), np.uint8))
    small.close()
    big = NpyAppender(tmp_path / "big.npy", np.dtype(np.uint8), (81,))
    big.rows = 2**62  # the largest count a header must hold, written over the placeholder
    big.close()
    starts = []
    for path in (tmp_path / "small.npy", tmp_path / "big.npy"):
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            starts.append(f.tell())
        assert version == (1, 0) and dtype == np.uint8
    assert starts[0] == starts[1] and starts[0] % 64 == 0
    assert shape == (2**62, 81)
    assert np.load(tmp_path / "small.npy").sum() == 3 * 81


def test_a_failed_write_leaves_no_folder_and_no_temporary(tmp_path):
    out = tmp_path / "arrays"

    def tables():
        yield _table(0, 3)
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_npy_folder(out, _schema(), tables())
    assert list(tmp_path.iterdir()) == []


def test_a_rerun_replaces_its_own_folder(tmp_path):
    out = tmp_path / "arrays"
    write_npy_folder(out, _schema(), [_table(0, 3)])
    check_array_folder(out)  # ours: no --force needed
    write_npy_folder(out, _schema(), [_table(0, 5)])
    assert np.load(out / "group.npy").shape == (5,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arrays"]


def test_somebody_elses_folder_is_refused_and_never_deleted_with_other_files(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="--force"):
        check_array_folder(theirs)
    with pytest.raises(InputError, match="will not delete"):
        check_array_folder(theirs, force=True)
    arrays = tmp_path / "arrays"
    arrays.mkdir()
    np.save(arrays / "x.npy", np.zeros(3))
    with pytest.raises(InputError, match="--force"):
        check_array_folder(arrays)
    assert check_array_folder(arrays, force=True) == arrays
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check_array_folder(empty) == empty


def test_a_file_an_input_a_device_and_stdout_are_refused(tmp_path):
    file = tmp_path / "out"
    file.write_text("data")
    with pytest.raises(InputError, match="--force"):
        check_array_folder(file)
    with pytest.raises(InputError, match="input"):
        check_array_folder(file, inputs=[file], force=True)
    with pytest.raises(InputError, match="regular file"):
        check_array_folder("/dev/null")
    with pytest.raises(InputError, match="stdout"):
        check_array_folder("-")
    with pytest.raises(InputError, match="no such directory"):
        check_array_folder(tmp_path / "missing" / "out")


def test_what_a_killed_run_left_beside_the_folder_is_cleared(tmp_path):
    out = tmp_path / "arrays"
    dead = 4_194_304 + 1  # no process has this id
    for left in (f".arrays.tmp-{dead}", f".arrays.old-{dead}"):
        (tmp_path / left).mkdir()
        (tmp_path / left / "puzzle.npy").write_bytes(b"x")
    write_npy_folder(out, _schema(), [_table(0, 1)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arrays"]


def test_column_arrays_are_what_a_worker_sends_and_append_takes(tmp_path):
    arrays = column_arrays(_table(0, 3))
    assert arrays["puzzle"].shape == (3, 81) and "id" not in arrays
    with NpyFolder(tmp_path / "a", _schema()) as out:
        out.append(arrays)
        out.commit({"command": "test"})
    assert json.loads((tmp_path / "a" / META).read_text())["sudoku_pipeline"] == {"command": "test"}
    assert os.listdir(tmp_path) == ["a"]

"""`augment`: K random symmetries of every puzzle and its solution, in memory (`pipeline.augment`),
through the job (`augment_file`, Parquet or a folder of arrays) and the command line: the
recorded symmetry undoes each copy, copies are sudokus with their solutions, the same seed
gives the same rows on any worker count and batch size, copies of a row are distinct, rows
without a solution are solved, bad rows are left out and counted."""

import gzip
import json
import subprocess

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.errors import InputError
from pipeline.grid import parse_puzzles
from pipeline.jobs.augment.job import augment_file
from pipeline.kernels.checks import verify_solutions
from pipeline.splitmix import GAMMA, mix_array
from pipeline.symmetry_kernels import apply_symmetries, augment_grids, undo_symmetries, unpack
from tests.conftest import COMMAND, assert_one_line_error, cli

CORPUS = pipeline.generate(40, seed=26)
PUZZLES: list[str] = CORPUS["puzzle"].to_list()
SOLUTIONS: list[str] = CORPUS["solution"].to_list()
ONE_GIVEN = SOLUTIONS[0][0] + "." * 80  # 729 images only: copies collide unless redrawn


def _grids(column: object) -> np.ndarray:
    return parse_puzzles(column).grids


def _corpus_csv(tmp_path, solutions: bool = True) -> str:
    path = tmp_path / "corpus.csv"
    columns = ["id", "puzzle", "solution", "clues"] if solutions else ["id", "puzzle", "clues"]
    CORPUS.select(columns).write_csv(path)
    return str(path)


def test_the_recorded_symmetry_undone_gives_back_the_original_puzzle_and_solution():
    copies = pipeline.augment(CORPUS.select("puzzle", "solution"), copies=5, seed=3)
    assert copies.height == 5 * len(PUZZLES)
    back = pipeline.restore_originals(copies)
    groups = back["group"].to_list()
    assert back["puzzle"].to_list() == [PUZZLES[g] for g in groups]
    assert back["solution"].to_list() == [SOLUTIONS[g] for g in groups]
    assert (copies["puzzle"] != pl.Series([PUZZLES[g] for g in groups])).all()


def test_the_numpy_form_of_a_symmetry_is_the_kernels_and_its_inverse():
    grids, solutions = _grids(PUZZLES), _grids(SOLUTIONS)
    made = augment_grids(grids, solutions, np.arange(len(grids)), seed=9, copies=3)
    originals = np.repeat(grids, 3, axis=0)
    symmetry = (made.relabel, made.rows, made.columns, made.transposed)
    assert made.transposed.any() and not made.transposed.all()
    assert (apply_symmetries(originals, *symmetry) == made.puzzles).all()
    assert (undo_symmetries(made.puzzles, *symmetry) == originals).all()
    assert (undo_symmetries(made.solutions, *symmetry) == np.repeat(solutions, 3, axis=0)).all()


def _stepwise(stream: int, modulo: bool) -> tuple[list[int], list[int], list[int], bool, int]:
    """A symmetry drawn one draw at a time, in plain Python (SplitMix64, Fisher-Yates): the
    digits, the rows' and the columns' orders, the transposition, the stream moved on."""
    mask = 2**64 - 1

    def draw() -> int:
        nonlocal stream
        stream = (stream + int(GAMMA)) & mask
        return int(mix_array(np.uint64(stream)))

    def below(bound: int) -> int:
        z = draw()
        return (z >> 11) % bound if modulo else ((z >> 32) * bound) >> 32

    def shuffle(items: list[int], start: int, count: int) -> None:
        for i in range(count - 1, 0, -1):
            j = below(i + 1)
            items[start + i], items[start + j] = items[start + j], items[start + i]

    def line_order() -> list[int]:
        bands = [0, 1, 2]
        shuffle(bands, 0, 3)
        order = [3 * bands[b] + r for b in range(3) for r in range(3)]
        for b in range(3):
            shuffle(order, 3 * b, 3)
        return order

    digits = list(range(1, 10))
    shuffle(digits, 0, 9)
    rows, columns = line_order(), line_order()
    return digits, rows, columns, below(2) == 1, stream


def test_a_symmetry_from_its_draws_made_at_once_is_the_one_drawn_step_by_step():
    """The draw reads its 25 draws made at once in the order a step-by-step Fisher-Yates
    makes them, both ways a draw becomes a small int (augment's and the ratings')."""
    from numba import njit

    from pipeline import symmetry_kernels as sk

    @njit
    def at_once(stream: np.uint64, modulo: bool) -> tuple[np.ndarray, bool, np.uint64]:
        draws = np.empty(sk.DRAWS, np.uint64)
        made = np.empty((3, 9), np.uint8)
        stream = sk.next_draws(stream, draws)
        flip = sk.draw_symmetry(draws, made[0], made[1], made[2], np.empty(3, np.uint8), modulo)
        return made, flip, stream

    for start in np.random.default_rng(3).integers(0, 2**63, 200, dtype=np.uint64):
        for modulo in (False, True):
            stream = int(start)
            for _ in range(2):  # and the stream moved on alike
                made, flip, moved = at_once(np.uint64(stream), modulo)
                digits, rows, columns, transpose, stream = _stepwise(stream, modulo)
                assert made.tolist() == [digits, rows, columns] and flip == transpose
                assert int(moved) == stream


def test_an_offset_adds_to_every_cell_the_copies_and_the_originals_alike():
    grids = _grids([*PUZZLES[:5], ONE_GIVEN])  # the last: copies collide, some dropped
    solutions = _grids([*SOLUTIONS[:5], SOLUTIONS[0]])
    keys = np.arange(len(grids))
    plain = augment_grids(grids, solutions, keys, seed=9, copies=800, keep_original=True)
    tokens = augment_grids(grids, solutions, keys, 9, 800, keep_original=True, offset=1)

    assert not plain.kept.all() and plain.short[-1]
    for name in ("relabel", "rows", "columns", "transposed", "kept", "short"):
        assert (getattr(tokens, name) == getattr(plain, name)).all(), name
    kept = plain.kept
    assert (tokens.puzzles[kept] == plain.puzzles[kept] + 1).all()
    assert (tokens.solutions[kept] == plain.solutions[kept] + 1).all()
    with pytest.raises(ValueError, match="offset"):
        augment_grids(grids, solutions, keys, seed=9, copies=1, offset=2)


def test_copies_are_sudokus_with_their_solutions_and_as_many_clues():
    copies = pipeline.augment(CORPUS.select("puzzle", "solution"), copies=4, seed=1)
    grids, solutions = _grids(copies["puzzle"]), _grids(copies["solution"])
    assert verify_solutions(grids, solutions).all()
    clues = np.count_nonzero(grids, axis=1)
    expected = np.count_nonzero(_grids(PUZZLES), axis=1)[copies["group"].to_numpy()]
    assert (clues == expected).all()
    assert set(pipeline.solve_batch(copies["puzzle"])["verdict"].to_list()) == {"solved"}


def test_the_packed_symmetry_columns_read_as_documented():
    copies = pipeline.augment([PUZZLES[0]], copies=2, seed=4, keep_original=True)
    original = copies.row(0, named=True)
    identity = (original["relabel"], original["row_order"], original["column_order"])
    assert original["copy"] == 0 and identity == (123456789,) * 3
    copy = copies.row(1, named=True)
    relabel = unpack([copy["relabel"]])[0]
    rows = unpack([copy["row_order"]], -1)[0]
    columns = unpack([copy["column_order"]], -1)[0]
    assert sorted(relabel) == list(range(1, 10)) and sorted(rows) == list(range(9))
    i, j = (1, 2) if not copy["transposed"] else (2, 1)  # cell r2c3 of the copy
    cell = PUZZLES[0][rows[i] * 9 + columns[j]]
    assert copy["puzzle"][1 * 9 + 2] == ("." if cell == "." else str(relabel[int(cell) - 1]))


def test_the_same_seed_gives_the_same_rows_whatever_the_workers_and_batch_size(tmp_path):
    source = _corpus_csv(tmp_path)
    runs = [(1, 7), (2, 50), (2, 3)]
    frames = []
    for workers, batch_size in runs:
        out = tmp_path / f"out-{workers}-{batch_size}.parquet"
        augment_file(source, out, copies=3, seed=11, keep_original=True, workers=workers,
                     batch_size=batch_size, progress=False)  # fmt: skip
        frames.append(pl.read_parquet(out))
    assert all(frame.equals(frames[0]) for frame in frames[1:])
    frame = CORPUS.select("puzzle", "solution")
    in_memory = pipeline.augment(frame, copies=3, seed=11, keep_original=True, workers=2)
    assert in_memory.equals(frames[0].drop("id", "input_clues"))
    other_seed = pipeline.augment(frame, copies=3, seed=12, keep_original=True)
    assert not other_seed.equals(in_memory)


def test_processes_give_the_same_rows_as_threads(tmp_path):
    source = _corpus_csv(tmp_path)
    threads, processes = tmp_path / "threads.parquet", tmp_path / "processes.parquet"
    augment_file(source, threads, copies=2, seed=5, batch_size=9, progress=False)
    augment_file(source, processes, copies=2, seed=5, batch_size=13, workers=2,
                 executor="processes", progress=False)  # fmt: skip
    assert pl.read_parquet(threads).equals(pl.read_parquet(processes))


def test_copies_of_a_row_are_distinct_puzzles_when_few_images_exist():
    frame = pl.DataFrame({"puzzle": [ONE_GIVEN, "." * 81], "solution": [SOLUTIONS[0]] * 2})
    copies = pipeline.augment(frame, copies=100, seed=2)
    first = copies.filter(pl.col("group") == 0)["puzzle"]
    assert first.len() == 100 and first.n_unique() == 100  # 100 draws of 729 collide ~7 times
    empty = copies.filter(pl.col("group") == 1)
    assert empty.height == 1  # the empty grid has one image: the other copies are dropped


def test_a_symmetric_puzzle_is_counted_short_in_the_summary(tmp_path):
    path = tmp_path / "symmetric.csv"
    pl.DataFrame({"puzzle": ["." * 81, PUZZLES[1]], "solution": [SOLUTIONS[0], SOLUTIONS[1]]}
                 ).write_csv(path)  # fmt: skip
    summary = augment_file(path, tmp_path / "out.parquet", copies=3, progress=False)
    assert (summary.short, summary.short_examples, summary.copies) == (1, [0], 4)
    assert any("fewer distinct" in line for line in summary.lines())


def test_rows_without_a_solution_are_solved_first(tmp_path):
    source = _corpus_csv(tmp_path, solutions=False)
    out = tmp_path / "out.parquet"
    summary = augment_file(source, out, copies=2, seed=1, progress=False)
    assert summary.solved == len(PUZZLES) and summary.copies == 2 * len(PUZZLES)
    back = pipeline.restore_originals(pl.read_parquet(out))
    assert back["solution"].to_list() == [SOLUTIONS[g] for g in back["group"].to_list()]


def test_bad_rows_are_left_out_counted_by_reason_and_named(tmp_path):
    clash = "11" + PUZZLES[2][2:]
    wrong = SOLUTIONS[3][1:] + SOLUTIONS[3][0]
    many = "." * 81
    rows = [
        (PUZZLES[0], SOLUTIONS[0]),
        ("not a puzzle", None),
        (clash, None),
        (PUZZLES[3], wrong),
        (many, None),
        (PUZZLES[4], None),
        ("12345678." + "........9" + "." * 63, None),  # r1c9 must be 9; column 9 has one
    ]
    path = tmp_path / "bad.csv"
    pl.DataFrame(rows, schema=["puzzle", "solution"], orient="row").write_csv(path)
    out = tmp_path / "out.parquet"
    summary = augment_file(path, out, copies=2, seed=1, progress=False)
    assert summary.left_out == {"malformed": 1, "invalid": 1, "unsolvable": 1, "multiple": 1,
                                "wrong_solution": 1}  # fmt: skip
    assert summary.examples["wrong_solution"] == [3]
    assert (summary.rows, summary.augmented, summary.solved) == (7, 2, 1)
    assert sorted(set(pl.read_parquet(out)["group"].to_list())) == [0, 5]
    text = "\n".join(summary.lines())
    assert "left out 1 multiple (more than one solution): rows 4" in text
    assert json.loads(json.dumps(summary.metadata))["augment"]["left_out"]["malformed"] == 1


def test_npy_folder_holds_the_same_rows_as_parquet(tmp_path):
    source = _corpus_csv(tmp_path)
    parquet, folder = tmp_path / "out.parquet", tmp_path / "arrays"
    augment_file(source, parquet, copies=3, seed=8, progress=False)
    summary = augment_file(source, folder, copies=3, seed=8, format="npy", batch_size=7,
                           progress=False)  # fmt: skip
    frame = pl.read_parquet(parquet)
    puzzles = np.load(folder / "puzzle.npy", mmap_mode="r")
    assert puzzles.shape == (frame.height, 81) and puzzles.dtype == np.uint8
    assert (puzzles == _grids(frame["puzzle"])).all()
    assert (np.load(folder / "solution.npy") == _grids(frame["solution"])).all()
    assert np.load(folder / "group.npy").tolist() == frame["group"].to_list()
    assert np.load(folder / "relabel.npy").tolist() == frame["relabel"].to_list()
    assert summary.format == "npy" and summary.copies == frame.height
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["sudoku_pipeline"]["command"] == "augment"


def test_cli_writes_parquet_and_says_what_it_did(tmp_path):
    source = _corpus_csv(tmp_path)
    out = tmp_path / "train.parquet"
    done = cli("augment", source, "-o", out, "--copies", 2, "--seed", 1, "--keep-original")
    assert done.exit_code == 0, done.output
    assert f"{len(PUZZLES)} rows -> {3 * len(PUZZLES)} rows" in done.stderr
    frame = pl.read_parquet(out)
    assert frame.columns[:4] == ["group", "copy", "id", "puzzle"]
    assert "input_clues" in frame.columns and set(frame["copy"].to_list()) == {0, 1, 2}


def test_cli_npy_folder_and_json_summary(tmp_path):
    source = _corpus_csv(tmp_path)
    done = cli("augment", source, "-o", tmp_path / "arrays", "--format", "npy", "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["copies"] == 8 * len(PUZZLES) and summary["format"] == "npy"
    assert np.load(tmp_path / "arrays" / "puzzle.npy").shape == (8 * len(PUZZLES), 81)


def test_cli_refuses_bad_options_and_others_files_in_one_line(tmp_path):
    source = _corpus_csv(tmp_path)
    theirs = tmp_path / "theirs.parquet"
    theirs.write_bytes(b"PAR1 not ours")
    done = cli("augment", source, "-o", theirs)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "--force")
    assert theirs.read_bytes() == b"PAR1 not ours"
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    done = cli("augment", source, "-o", folder, "--format", "npy", "--force")
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "will not delete")
    done = cli("augment", source, "-o", tmp_path / "x.csv")
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "parquet")
    done = cli("augment", tmp_path / "missing.csv", "-o", tmp_path / "y.parquet")
    assert done.exit_code == 2


def test_a_lazyframe_and_a_column_of_puzzles_are_augmented_as_a_dataframe_is():
    frame = CORPUS.select("puzzle", "solution").head(5)
    expected = pipeline.augment(frame, copies=2, seed=3)
    assert pipeline.augment(frame.lazy(), copies=2, seed=3).equals(expected)
    solved_first = pipeline.augment(frame["puzzle"], copies=2, seed=3)
    assert solved_first.equals(expected)


def test_api_refuses_copies_below_one_and_a_negative_seed():
    with pytest.raises(InputError, match="copies"):
        pipeline.augment(PUZZLES, copies=0)
    with pytest.raises(InputError, match="seed"):
        pipeline.augment(PUZZLES, seed=-1)


def test_a_dask_cluster_gives_the_same_rows_as_threads(tmp_path):
    pytest.importorskip("distributed")
    source = _corpus_csv(tmp_path)
    threads, dask = tmp_path / "threads.parquet", tmp_path / "dask.parquet"
    augment_file(source, threads, copies=2, seed=6, batch_size=11, progress=False)
    augment_file(source, dask, copies=2, seed=6, batch_size=17, workers=2, executor="dask",
                 progress=False)  # fmt: skip
    assert pl.read_parquet(threads).equals(pl.read_parquet(dask))


def test_to_stdout_it_writes_parquet(tmp_path):
    source = _corpus_csv(tmp_path)
    out = tmp_path / "piped.parquet"
    with open(out, "wb") as stdout:
        done = subprocess.run([*COMMAND, "augment", source, "-o", "-", "--copies", "2", "-q"],
                              stdout=stdout, stderr=subprocess.PIPE, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    frame = pl.read_parquet(out)
    assert frame.height == 2 * len(PUZZLES)
    meta = json.loads(pq.read_schema(out).metadata[b"sudoku_pipeline"])
    assert meta["input"]["rows"] == len(PUZZLES) and meta["augment"]["copies"] == frame.height


@pytest.mark.parametrize("fmt", ["parquet", "npy"])
def test_an_input_that_fails_part_way_leaves_no_output_and_nothing_beside_it(tmp_path, fmt):
    pl.concat([CORPUS] * 100).select("puzzle", "solution").write_csv(tmp_path / "big.csv")
    data = gzip.compress((tmp_path / "big.csv").read_bytes())
    (tmp_path / "big.csv").unlink()
    (tmp_path / "cut.csv.gz").write_bytes(data[: len(data) // 2])
    out = tmp_path / ("out.parquet" if fmt == "parquet" else "out")
    with pytest.raises(InputError, match="cut.csv.gz"):
        augment_file(tmp_path / "cut.csv.gz", out, copies=2, format=fmt, batch_size=100,
                     progress=False)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.csv.gz"]

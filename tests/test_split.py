"""`split`: leak-free train/val/test splits, in memory (`pipeline.split`), through the job
(`split_file`, on threads, processes and Dask) and through the command line. Corpora are made
from `pipeline.generate` with planted disguised copies (`pipeline.symmetry`), exact repeats,
puzzles with several solutions, malformed and clashing rows."""

import hashlib
import json
from collections import Counter

import numpy as np
import polars as pl
import pytest

import pipeline
from pipeline.splitting import split, split_file
from pipeline.splitting.options import SplitOptions
from pipeline.splitting.plan import _allocate
from pipeline.symmetry import random_symmetries
from tests.conftest import assert_one_line_error, cli

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


# -- files, workers, executors ------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("split") / "corpus.csv"
    CORPUS.write_csv(path)
    return path


def _read(folder) -> dict[str, pl.DataFrame]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return {
        name: pl.read_parquet(folder / f"{name}.parquet") for name in manifest["options"]["names"]
    }


def test_the_file_job_writes_the_splits_and_a_manifest_that_defends_them(corpus_file, tmp_path):
    out = tmp_path / "splits"

    manifest = split_file(corpus_file, out, fractions="0.5,0.25,0.25", seed=11, progress=False)

    frames = _read(out)
    in_memory = split(CORPUS, fractions="0.5,0.25,0.25", seed=11)
    for name, frame in frames.items():  # the file job and its twin agree (CSV columns: text)
        assert frame.equals(in_memory[name].with_columns(pl.col("base").cast(pl.String))), name
    written = json.loads((out / "manifest.json").read_text())
    assert (
        written["splits"]["train"]["rows"]
        == len(frames["train"])
        == manifest.splits["train"]["rows"]
    )
    assert written["left_out"]["duplicate"] == 3 and written["left_out"]["multiple"] == 2
    assert written["inputs"][0]["size_bytes"] == corpus_file.stat().st_size
    assert len(written["inputs"][0]["sha256"]) == 64
    assert written["version"] == pipeline.__version__ and written["options"]["seed"] == 11
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "test.parquet",
                                                     "train.parquet", "val.parquet"]  # fmt: skip
    assert not list(tmp_path.glob(".splits*"))  # no lock or temporary folder left
    for name, digest in written["sha256"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert sorted(written["sha256"]) == ["test.parquet", "train.parquet", "val.parquet"]


def test_the_same_seed_gives_the_same_files_on_any_workers_batches_and_processes(
    corpus_file, tmp_path
):
    runs = [dict(workers=1, batch_size=1000), dict(workers=2, batch_size=37),
            dict(workers=2, batch_size=100, executor="processes")]  # fmt: skip
    results = []
    for i, run in enumerate(runs):
        split_file(corpus_file, tmp_path / f"s{i}", seed=5, progress=False, **run)
        results.append(_read(tmp_path / f"s{i}"))
    for other in results[1:]:
        for name in results[0]:
            assert results[0][name].equals(other[name]), name


def test_the_dask_executor_gives_the_same_files(corpus_file, tmp_path):
    pytest.importorskip("distributed")
    split_file(corpus_file, tmp_path / "local", seed=5, progress=False)
    split_file(corpus_file, tmp_path / "dask", seed=5, progress=False, batch_size=64,
               executor="dask", workers=2)  # fmt: skip

    local, dask = _read(tmp_path / "local"), _read(tmp_path / "dask")
    for name in local:
        assert local[name].equals(dask[name]), name


def test_npy_folders_load_in_numpy(corpus_file, tmp_path):
    out = tmp_path / "arrays"

    split_file(corpus_file, out, fractions=(0.5, 0.5), seed=2, format="npy", progress=False)

    frames = split(CORPUS, fractions=(0.5, 0.5), seed=2)
    for name, frame in frames.items():
        puzzles = np.load(out / name / "puzzle.npy")
        solutions = np.load(out / name / "solution.npy")
        groups = np.load(out / name / "group.npy")
        assert puzzles.dtype == solutions.dtype == np.uint8
        assert puzzles.shape == solutions.shape == (len(frame), 81)
        assert _strings(puzzles) == frame["puzzle"].to_list()
        assert _strings(solutions) == frame["solution"].to_list()
        assert groups.tolist() == frame["group"].to_list()
        assert ((puzzles == 0) | (puzzles == solutions)).all()
    written = json.loads((out / "manifest.json").read_text())["sha256"]
    assert "train/puzzle.npy" in written and "test/meta.json" in written


def test_several_inputs_are_one_corpus_with_a_source(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    BASE.head(60).write_csv(a)
    BASE.slice(40, 80).write_csv(b)  # rows 40..59 repeat a's

    manifest = split_file([a, b], tmp_path / "out", fractions=(0.5, 0.5), progress=False)

    assert manifest.left_out["duplicate"] == 20 and manifest.rows_kept == 120
    frames = _read(tmp_path / "out")
    sources = Counter(pl.concat(frames.values())["source"].to_list())
    assert sources == {str(a): 60, str(b): 60}


# -- the command line -----------------------------------------------------------------------


def test_cli_split_prints_the_manifest_as_json(corpus_file, tmp_path):
    result = cli("split", corpus_file, "-o", tmp_path / "out", "--fractions", "0.8,0.2",
                 "--names", "fit,holdout", "--seed", "3", "--json")  # fmt: skip

    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    assert list(printed["splits"]) == ["fit", "holdout"]
    assert (tmp_path / "out" / "holdout.parquet").exists()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--fractions", "0.5,0.6"], "sum to 1"),
        (["--fractions", "0.25,0.25,0.25,0.25"], "--names"),
        (["--names", "a,b"], "3 fractions need 3 names"),
    ],
)
def test_cli_bad_options_are_one_line_and_exit_2(corpus_file, tmp_path, args, fragment):
    result = cli("split", corpus_file, "-o", tmp_path / "out", *args)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, fragment)
    assert not (tmp_path / "out").exists()


def test_cli_needs_an_output_folder(corpus_file):
    result = cli("split", corpus_file)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "-o DIR")


def test_a_folder_of_the_users_is_replaced_only_with_force(corpus_file, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "old.parquet").write_text("an earlier split of another tool")

    refused = cli("split", corpus_file, "-o", out)
    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "not empty", "--force")
    assert (out / "old.parquet").exists()

    again = cli("split", corpus_file, "-o", out, "--force", "-q")
    assert again.exit_code == 0, again.stderr
    assert not (out / "old.parquet").exists() and (out / "train.parquet").exists()
    rerun = cli("split", corpus_file, "-o", out, "--seed", "9", "-q")  # its own: replaced
    assert rerun.exit_code == 0, rerun.stderr
    assert json.loads((out / "manifest.json").read_text())["options"]["seed"] == 9


def test_a_folder_of_other_work_is_never_deleted_even_with_force(corpus_file, tmp_path):
    out = tmp_path / "work"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "todo.txt").write_text("keep me")

    refused = cli("split", corpus_file, "-o", out, "--force")

    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "other than a split's", "even with --force")
    assert (out / "notes" / "todo.txt").read_text() == "keep me"


def test_a_file_or_a_folder_holding_the_input_is_refused(corpus_file, tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    assert_one_line_error(cli("split", corpus_file, "-o", file).stderr, "is a file")
    assert_one_line_error(cli("split", corpus_file, "-o", corpus_file.parent, "--force").stderr,
                          "holds the input")  # fmt: skip
    assert file.read_text() == "x"


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


def test_inputs_where_nothing_is_kept_give_empty_splits_of_the_same_columns(tmp_path):
    bad, empty = tmp_path / "bad.csv", tmp_path / "empty.csv"
    bad.write_text("puzzle\nabc\n12\n")
    empty.write_text("puzzle\n")

    manifest = split_file([bad, empty], tmp_path / "out", fractions=(0.5, 0.5), progress=False)

    assert manifest.left_out["malformed"] == 2 and manifest.rows_kept == 0
    assert [i["rows"] for i in manifest.inputs] == [2, 0]
    train = pl.read_parquet(tmp_path / "out" / "train.parquet")
    assert train.columns == ["puzzle", "solution", "clues", "source", "row", "group"]
    assert train.is_empty()


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_holds_it(corpus_file, tmp_path):
    from pipeline.errors import InputError
    from pipeline.io.sidecars import OutputLock

    out = tmp_path / "splits"
    with OutputLock(out), pytest.raises(InputError, match="another run"):
        split_file(corpus_file, out, progress=False)
    assert not out.exists()


def test_what_a_killed_run_left_beside_the_folder_is_cleared(corpus_file, tmp_path):
    dead = 4_194_000  # above any PID this machine gives out
    left = [tmp_path / f".splits.tmp-{dead}", tmp_path / f".splits.old-{dead}"]
    for folder in left:
        folder.mkdir()
        (folder / "train.parquet").write_text("half")

    split_file(corpus_file, tmp_path / "splits", progress=False)

    assert not any(folder.exists() for folder in left)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["splits"]


def test_a_lazy_frame_is_split_as_its_collected_frame():
    assert split(BASE.lazy(), fractions=(0.5, 0.5))["test"].equals(
        split(BASE, fractions=(0.5, 0.5))["test"]
    )

"""A Parquet dataset folder from the Python API: `dataset=True`.

On the command line a trailing `/` asks for a folder (`-o out/`); a notebook's
`pathlib.Path("out/")` drops it (`Path("out/") == Path("out")`), so the file jobs that write
one (`solve_file`, `score_file`, `augment_file` on Dask, `enumerate_file`) take `dataset=True`
as the explicit way: the output, a `str` or a `Path`, is then the folder.
"""

import json
from pathlib import Path

import polars as pl
import pytest

from pipeline import InputError, generate, score_file, solve_file, validate_file

TIMING = ["solve_ns"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dataset-api") / "corpus.csv"
    generate(600, seed=3).select("id", "puzzle", "solution").write_csv(path)
    return path


def _table(folder: Path) -> pl.DataFrame:
    return pl.scan_parquet(f"{folder}/*.parquet").collect().drop(TIMING, strict=False)


def test_a_path_with_dataset_true_is_a_dataset_folder(corpus, tmp_path):
    out = tmp_path / "out"  # a Path: no trailing slash to tell
    summary = solve_file(corpus, out, dataset=True, batch_size=200, workers=1, progress=False)
    assert summary.rows == 600
    manifest = json.loads((out / "_manifest.json").read_text())
    assert [f["file"] for f in manifest["files"]] == [f"part-0000{i}.parquet" for i in range(3)]
    by_slash = tmp_path / "by-slash"
    solve_file(corpus, f"{by_slash}/", batch_size=200, workers=1, progress=False)
    assert _table(out).equals(_table(by_slash))  # the same folder as `-o DIR/` makes


def test_dataset_true_replaces_its_own_folder_and_takes_an_empty_one(corpus, tmp_path):
    out = tmp_path / "out"
    out.mkdir()  # an empty folder: taken
    solve_file(corpus, out, dataset=True, batch_size=200, workers=1, progress=False)
    solve_file(corpus, out, dataset=True, batch_size=300, workers=1, progress=False)  # ours
    assert len(list(out.glob("*.parquet"))) == 2
    assert _table(out).height == 600


def test_dataset_true_never_writes_into_a_folder_that_is_not_ours(corpus, tmp_path):
    out = tmp_path / "notebooks"
    out.mkdir()
    (out / "analysis.ipynb").write_text("{}")
    with pytest.raises(InputError, match="is not empty and holds no earlier Parquet dataset"):
        solve_file(corpus, out, dataset=True, progress=False)
    with pytest.raises(InputError, match="will not delete it, even with --force"):
        solve_file(corpus, out, dataset=True, force=True, progress=False)
    assert [p.name for p in out.iterdir()] == ["analysis.ipynb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks"]  # nothing beside it


def test_dataset_true_without_an_output_is_a_folder_beside_the_input(corpus, tmp_path):
    source = tmp_path / "puzzles.csv"
    source.write_bytes(corpus.read_bytes())
    solve_file(source, dataset=True, workers=1, progress=False)
    assert (tmp_path / "puzzles.solved" / "_manifest.json").is_file()


def test_dataset_true_is_refused_where_no_folder_can_be(corpus, tmp_path):
    with pytest.raises(InputError, match="a dataset folder holds Parquet files, not csv"):
        solve_file(corpus, tmp_path / "out", dataset=True, format="csv", progress=False)
    with pytest.raises(InputError, match="not stdout"):
        solve_file(corpus, "-", dataset=True, progress=False)
    with pytest.raises(InputError, match="validate writes no Parquet dataset folder"):
        validate_file(corpus, tmp_path / "findings", dataset=True, progress=False)
    assert not list(tmp_path.iterdir())


def test_resume_with_dataset_true(corpus, tmp_path, capfd):
    out = tmp_path / "out"
    solve_file(corpus, out, dataset=True, batch_size=200, workers=1, progress=False)
    capfd.readouterr()
    done = solve_file(corpus, out, dataset=True, resume=True, batch_size=200, workers=1,
                      progress=False)  # fmt: skip
    assert done.rows == 600
    assert f"note: {out}/ is complete" in capfd.readouterr().err


def test_score_file_with_dataset_true(corpus, tmp_path):
    predictions = tmp_path / "predictions.csv"
    frame = pl.read_csv(corpus, infer_schema=False)
    frame.with_columns(prediction=pl.col("solution")).write_csv(predictions)
    out = tmp_path / "scored"
    summary = score_file(predictions, out, dataset=True, batch_size=200, workers=1,
                         progress=False)  # fmt: skip
    assert summary.rows == 600 and _table(out).height == 600


def test_dataset_true_on_dask(corpus, tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    solve_file(corpus, out, dataset=True, batch_size=100, executor="dask", workers=2,
               progress=False)  # fmt: skip
    local = tmp_path / "local.parquet"
    solve_file(corpus, local, batch_size=100, workers=1, progress=False)
    assert _table(out).equals(pl.read_parquet(local).drop(TIMING))


def test_enumerate_file_with_dataset_true(corpus, tmp_path):
    from pipeline import enumerate_file

    out = tmp_path / "solutions"
    summary = enumerate_file(corpus, out, dataset=True, limit=2, batch_size=200, workers=1,
                             progress=False)  # fmt: skip
    assert _table(out).height == summary.rows == 600  # one solution each

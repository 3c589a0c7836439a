"""The example job (`tests/count_clues.py`: how a job is added, in one file) on the run loop:
its output, its summary, stdout, and a stopped run resumed."""

import polars as pl
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.grid import clue_counts, parse_puzzles
from tests import count_clues
from tests.count_clues import count_file


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Generated puzzles, with a row that is no puzzle among them."""
    made = pipeline.generate(300, seed=4).select("id", "puzzle")
    rows = pl.concat([made[:100], pl.DataFrame({"id": [-1], "puzzle": ["not a puzzle"]}),
                      made[100:]])  # fmt: skip
    path = tmp_path_factory.mktemp("count") / "corpus.csv"
    rows.write_csv(path)
    return path, made


def test_every_row_gets_its_clues_and_the_summary_counts_them(corpus):
    path, made = corpus
    summary = count_file(path, workers=2, batch_size=64, progress=False)

    out = path.with_name("corpus.clues.parquet")
    assert summary.output == str(out) and summary.rows == 301
    clues = pq.read_table(out).column("clues").to_pylist()
    expected = clue_counts(parse_puzzles(made["puzzle"]).grids).tolist()
    assert clues == expected[:100] + [None] + expected[100:]
    assert summary.clues == {n: expected.count(n) for n in sorted(set(expected))}
    assert pq.read_metadata(out).metadata[b"sudoku_pipeline"].startswith(b"{")


def test_the_rows_go_to_stdout_as_csv(corpus, capfdbinary):
    path, _ = corpus
    count_file(path, "-", progress=False)
    text = capfdbinary.readouterr().out.decode()
    assert text.startswith("row,clues\n0,") and text.count("\n") == 302


def test_a_stopped_run_resumes_where_it_stopped(corpus, tmp_path, monkeypatch):
    path, _ = corpus
    out = tmp_path / "counted.parquet"
    whole = count_file(path, tmp_path / "whole.parquet", batch_size=64, progress=False)
    done = []

    def stop_at_the_third_batch(task, fmt):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(task.start)
        return whole_part(task, fmt)

    whole_part = count_clues.count_part
    monkeypatch.setattr(count_clues, "count_part", stop_at_the_third_batch)
    with pytest.raises(pipeline.RunInterrupted, match="128 rows done are kept"):
        count_file(path, out, batch_size=64, workers=1, progress=False)
    monkeypatch.undo()

    resumed = count_file(path, out, batch_size=64, resume=True, progress=False)

    assert resumed.resumed_rows == 128 and resumed.clues == whole.clues
    assert pq.read_table(out).equals(pq.read_table(tmp_path / "whole.parquet"))

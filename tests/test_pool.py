"""`workers=` on the in-memory API: chunks on warm worker processes, kept between calls, with
the same rows in the same order as in this process (timing columns aside)."""

from pathlib import Path

import polars as pl
import pytest

from pipeline import generate, solve_batch, validate_puzzles
from pipeline.run import pool

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 7 rows, so that a few dozen puzzles make several chunks."""
    monkeypatch.setattr(pool, "MIN_CHUNK_ROWS", 7)


@pytest.fixture(scope="module")
def puzzles():
    frame = generate(40, seed=5)
    bad = pl.DataFrame({"id": [100, 101], "puzzle": ["11" + "." * 79, "x"], "solution": [None] * 2})
    frame = pl.concat([frame.drop("clues"), bad.cast(frame.drop("clues").schema)])
    return pl.concat([frame, frame.head(3)])  # duplicates across chunks


def test_chunks_cover_the_batch_in_order():
    assert pool.chunk_rows(100, None) == pool.chunk_rows(100, 1) == 100
    assert pool.chunk_rows(1_000_000, 2) == pool.MAX_CHUNK_ROWS
    assert pool.chunk_rows(100, 2) == pool.MIN_CHUNK_ROWS


def test_solve_batch_on_workers_gives_the_rows_of_one_process(puzzles, small_chunks):
    here = solve_batch(puzzles)
    there = solve_batch(puzzles, workers=2)
    assert there.drop("solve_ns").equals(here.drop("solve_ns"))
    # past mrv's own budget (20,000 nodes): minimal puzzles take it more
    again = solve_batch(puzzles, workers=2, strategy="mrv", max_nodes=10**9)
    assert again["solution"].equals(here["solution"])


def test_validate_puzzles_on_workers_gives_the_findings_of_one_process(puzzles, small_chunks):
    here = validate_puzzles(puzzles)
    assert set(here["code"].cast(pl.String)) == {"clash", "few_clues", "malformed", "duplicate"}
    assert validate_puzzles(puzzles, workers=2).equals(here)


def test_small_batches_stay_in_this_thread(monkeypatch):
    monkeypatch.setattr(pool, "ThreadExecutor", None)  # any use of workers would fail
    assert solve_batch(["." * 81], workers=3).height == 1


@pytest.mark.parametrize("workers", [0, -1, True])
def test_workers_must_be_at_least_one(workers):
    with pytest.raises(ValueError, match="workers must be None or at least 1"):
        solve_batch(["." * 81], workers=workers)

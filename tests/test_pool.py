"""`workers=` on the in-memory API: chunks on warm worker processes, kept between calls, with
the same rows in the same order as in this process (timing columns aside)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate, solve_batch, validate_puzzles
from pipeline.jobs import pool

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
    executor, _ = pool._pools[2]
    started = executor._pool
    again = solve_batch(puzzles, workers=2, strategy="mrv")  # the same warm workers
    assert pool._pools[2][0]._pool is started
    assert again["solution"].equals(here["solution"])


def test_validate_puzzles_on_workers_gives_the_findings_of_one_process(puzzles, small_chunks):
    here = validate_puzzles(puzzles)
    assert set(here["code"].cast(pl.String)) == {"clash", "few_clues", "malformed", "duplicate"}
    assert validate_puzzles(puzzles, workers=2).equals(here)


def test_a_pool_that_lost_a_worker_starts_again_on_the_next_call(puzzles, small_chunks):
    solve_batch(puzzles, workers=2)
    executor, _ = pool._pools[2]
    executor.terminate()  # as after a dead worker or Ctrl-C
    assert solve_batch(puzzles, workers=2).height == puzzles.height


def test_small_batches_stay_in_this_process():
    before = dict(pool._pools)
    solve_batch(["." * 81], workers=3)
    assert 3 not in pool._pools and pool._pools == before


@pytest.mark.parametrize("workers", [0, -1, True])
def test_workers_must_be_at_least_one(workers):
    with pytest.raises(ValueError, match="workers must be None or at least 1"):
        solve_batch(["." * 81], workers=workers)


def test_the_workers_go_when_the_interpreter_exits():
    script = textwrap.dedent(
        """
        import os
        from pipeline import generate, solve_batch
        from pipeline.jobs import pool

        if __name__ == "__main__":
            pool.MIN_CHUNK_ROWS = 5
            solve_batch(generate(20, seed=1), workers=2)
            executor, _ = pool._pools[2]
            print(" ".join(str(p) for p in executor._pool._processes))
        """
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr  # close_pools ran cleanly
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    for pid in pids:  # gone, not left waiting for work
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()

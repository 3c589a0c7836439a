"""enumerate on several workers (`pipeline.jobs.enumerate.spread`): the same output whatever
their number, rows in input order, memory bounded however many solutions a puzzle has, a
worker's error raised in the caller in its turn."""

import threading

import numpy as np
import pyarrow as pa
import pytest

from pipeline.grid import format_grids
from pipeline.jobs.enumerate import enumerate_file
from pipeline.jobs.enumerate.solutions import Tally
from pipeline.jobs.enumerate.spread import spread_tables
from tests.test_enumeration import blanked


def _corpus(tmp_path):
    """Puzzles with no, one, a few and many solutions, and rows that give none."""
    grids = np.concatenate([blanked(7, 30, 50), blanked(8, 10, 58), blanked(9, 20, 20)])
    puzzles = format_grids(grids).to_pylist()
    puzzles[3] = "nonsense"
    puzzles[11] = "11" + "." * 79  # givens clash
    path = tmp_path / "corpus.csv"
    path.write_text("id,puzzle\n" + "".join(f"p{i},{p}\n" for i, p in enumerate(puzzles)))
    return path


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_output_is_the_same_whatever_the_workers(tmp_path, fmt):
    import pyarrow.parquet as pq

    source = _corpus(tmp_path)
    outputs = {}
    for workers in (1, 2, 3):
        out = tmp_path / f"w{workers}.{fmt}"
        summary = enumerate_file(source, out, limit=300, batch_size=64, workers=workers,
                                 progress=False)  # fmt: skip
        assert summary.metadata["workers"] == workers
        outputs[workers] = (summary.solutions, summary.puzzles,
                            out.read_bytes() if fmt == "csv" else pq.read_table(out))  # fmt: skip
    assert outputs[1][0] > 1000 and outputs[1][1]["at_limit"] > 0  # worth spreading
    assert outputs[1][1]["malformed"] == 1 and outputs[1][1]["invalid"] == 1
    assert outputs[2] == outputs[1] and outputs[3] == outputs[1]


def _batches(n):
    """`n` one-row batches: each its own unit."""
    return [(0, pa.record_batch({"row": [i]})) for i in range(n)]


def _row(unit):
    return unit.column(0)[0].as_py()


def _table(row, k):
    return pa.table({"row": [row], "k": [k]})


def _rows(tables):
    return [(t["row"][0].as_py(), t["k"][0].as_py()) for t in tables]


def test_units_come_back_in_input_order_and_memory_stays_bounded():
    """Every unit's worker runs as fast as it can; the calling thread drains slowly, waiting on
    the producers; rows produced and not yet drained never pass the bound, however many."""
    lock = threading.Lock()
    state = {"made": 0, "taken": 0, "most": 0}

    def search(source, unit, tally):
        for k in range(500):
            with lock:
                state["made"] += 1
                state["most"] = max(state["most"], state["made"] - state["taken"])
            yield _table(_row(unit), k)
        tally.rows += 1
        tally.solutions += 500

    tally = Tally()
    done: list[int] = []
    seen = []
    for table in spread_tables(_batches(12), search, 3, 10, tally, done.append, ahead=2):
        with lock:
            state["taken"] += 1
        seen.append(table)
    assert _rows(seen) == [(row, k) for row in range(12) for k in range(500)]
    assert tally.rows == 12 and tally.solutions == 6000 and done == [1] * 12
    # two units ahead, each holding ten rows handed over; and the table each worker (3)
    # made before it waits
    assert state["most"] <= 2 * 10 + 3


def test_a_workers_error_is_raised_in_its_turn():
    def search(source, unit, tally):
        if _row(unit) == 5:
            raise ValueError("unit five fails")
        yield _table(_row(unit), 0)

    seen = []
    with pytest.raises(ValueError, match="unit five"):
        for table in spread_tables(_batches(9), search, 2, 4, Tally()):
            seen.append(table)
    assert [row for row, _ in _rows(seen)] == [0, 1, 2, 3, 4]


def test_an_input_that_fails_part_way_fails_in_its_turn():
    def batches():
        yield from _batches(3)
        raise OSError("the disk went away")

    def search(source, unit, tally):
        yield _table(_row(unit), 0)

    seen = []
    with pytest.raises(OSError, match="disk"):
        for table in spread_tables(batches(), search, 2, 4, Tally()):
            seen.append(table)
    assert [row for row, _ in _rows(seen)] == [0, 1, 2]


def test_workers_stop_when_the_caller_stops_early():
    stopped = threading.Event()

    def search(source, unit, tally):
        try:
            for k in range(10**9):
                yield _table(0, k)
        finally:
            stopped.set()

    tables = spread_tables(_batches(2), search, 2, 4, Tally())
    assert _rows(next(tables) for _ in range(3)) == [(0, 0), (0, 1), (0, 2)]
    tables.close()
    assert stopped.wait(60)  # a worker left its endless unit


def test_workers_on_the_command_line(tmp_path):
    from tests.conftest import cli

    source = _corpus(tmp_path)
    out = tmp_path / "o.csv"
    done = cli("enumerate", source, "-o", out, "--limit", 3, "--workers", 2, "-q")
    assert done.exit_code == 0, done.stderr
    bad = cli("enumerate", source, "-o", tmp_path / "p.csv", "--limit", 3, "--workers", 0)
    assert bad.exit_code == 2 and not (tmp_path / "p.csv").exists()


def test_sigterm_stops_a_spread_run_and_leaves_nothing(tmp_path):
    """A real process on two workers, stopped by SIGTERM once its first part is on disk: one
    line, exit 130, no output, parts or lock left (the workers told to stop, not waited for)."""
    import signal
    import subprocess
    import sys
    import time

    source = tmp_path / "many.txt"
    source.write_text("".join(p + "\n" for p in format_grids(blanked(5, 50, 62)).to_pylist()))
    out = tmp_path / "many.parquet"
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "enumerate", str(source), "-o", str(out),
         "--limit", "1000000", "--workers", "2", "--batch-size", "1000", "-q"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob("many.parquet.partial/part-*")):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)  # polling for the first part, not a wait for a result
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err == "error: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.txt"]

"""enumerate on several workers (`pipeline.enumerating.spread`): the same output whatever
their number, rows in input order, memory bounded however many solutions a puzzle has, a
worker's error raised in the caller in its turn."""

import threading

import numpy as np
import pyarrow as pa
import pytest

from pipeline.enumerating import enumerate_file
from pipeline.enumerating.solutions import Segment, Tally
from pipeline.enumerating.spread import spread_segments
from pipeline.grid import format_grids
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


def test_units_come_back_in_input_order_and_memory_stays_bounded():
    """Every unit's worker runs as fast as it can; the calling thread drains slowly, waiting on
    the producers; rows produced and not yet drained never pass the bound, however many."""
    lock = threading.Lock()
    state = {"made": 0, "taken": 0, "most": 0}

    def search(source, unit, tally):
        row = unit.column(0)[0].as_py()
        for k in range(500):
            with lock:
                state["made"] += 1
                state["most"] = max(state["most"], state["made"] - state["taken"])
            yield Segment(source, row, None, k, np.zeros((1, 81), np.uint8))
        tally.rows += 1
        tally.solutions += 500

    tally = Tally()
    done: list[int] = []
    seen = []
    for segment in spread_segments(_batches(12), search, 3, 10, tally, done.append, ahead=2):
        with lock:
            state["taken"] += 1
        seen.append((segment.row, segment.k))
    assert seen == [(row, k) for row in range(12) for k in range(500)]
    assert tally.rows == 12 and tally.solutions == 6000 and done == [1] * 12
    # two units ahead, each: ten rows handed over, up to ten more being handed, nine in a
    # block being built; and one segment a worker (3) made before it waits
    assert state["most"] <= 2 * 29 + 3


def test_a_workers_error_is_raised_in_its_turn():
    def search(source, unit, tally):
        row = unit.column(0)[0].as_py()
        if row == 5:
            raise ValueError("unit five fails")
        yield Segment(source, row, None, 0, np.zeros((1, 81), np.uint8))

    seen = []
    with pytest.raises(ValueError, match="unit five"):
        for segment in spread_segments(_batches(9), search, 2, 4, Tally()):
            seen.append(segment.row)
    assert seen == [0, 1, 2, 3, 4]


def test_an_input_that_fails_part_way_fails_in_its_turn():
    def batches():
        yield from _batches(3)
        raise OSError("the disk went away")

    def search(source, unit, tally):
        yield Segment(source, unit.column(0)[0].as_py(), None, 0, np.zeros((1, 81), np.uint8))

    seen = []
    with pytest.raises(OSError, match="disk"):
        for segment in spread_segments(batches(), search, 2, 4, Tally()):
            seen.append(segment.row)
    assert seen == [0, 1, 2]


def test_workers_stop_when_the_caller_stops_early():
    stopped = threading.Event()

    def search(source, unit, tally):
        try:
            for k in range(10**9):
                yield Segment(source, 0, None, k, np.zeros((1, 81), np.uint8))
        finally:
            stopped.set()

    segments = spread_segments(_batches(2), search, 2, 4, Tally())
    assert [next(segments).k for _ in range(3)] == [0, 1, 2]
    segments.close()
    assert stopped.wait(60)  # a worker left its endless unit

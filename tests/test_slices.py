"""Slices of an input that Dask workers read on their own (`io.slices`, `run.sliced`): read
one after the other, they give the rows of the whole input, each once, in order, with their
`row`, wherever the cuts fall (inside a line, at a break, between `\\r` and `\\n`)."""

import gzip
import pickle
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from pipeline.io.inputs import open_inputs
from pipeline.io.slices import (
    RangeBytes,
    count_rows,
    plan_slices,
    recipe,
    shrinking_rows,
    slice_batches,
)
from pipeline.run.sliced import check_storage

PUZZLE = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"
SOLVED = "417369825632158947958724316825437169791586432346912758289643571573291684164875293"


def whole(name: str | Path) -> pa.Table:
    """The input (a path or a URL) read as one, batch after batch."""
    inputs = open_inputs([str(name)], batch_size=3)
    return pa.Table.from_batches([b for _, b in inputs.batches()], inputs.schema)


def sliced(
    name: str | Path, slice_bytes: int | None, rows_per_slice: int = 4, workers: int = 0
) -> pa.Table:
    """The input (a path or a URL) read slice by slice, each from a recipe that went through
    pickle (as a task's arguments go to a worker)."""
    inputs = open_inputs([str(name)], batch_size=3)
    ds = pickle.loads(pickle.dumps(recipe(inputs.first)))
    batches, first = [], 0
    for piece in plan_slices(inputs, rows_per_slice, slice_bytes, workers):
        piece = pickle.loads(pickle.dumps(piece))
        rows = count_rows(ds, piece)
        got = list(slice_batches(ds, piece, first, 3))
        assert sum(b.num_rows for b in got) == rows
        batches += got
        first += rows
    return pa.Table.from_batches(batches, inputs.schema)


TEXTS = {
    "header.csv": f'id,puzzle,solution\n1,{PUZZLE},{SOLVED}\n2,{PUZZLE},\n\n3,"{PUZZLE}",x\n'
    f"4,{PUZZLE[:-1]}1,{SOLVED}\n5,{PUZZLE},{SOLVED}",
    "crlf.csv": "\ufeff\r\n"
    + "".join(f"{i};{PUZZLE}\r\n" for i in range(9))
    + f"9;{PUZZLE}\r10;{PUZZLE}\r\n",
    "plain.txt": "# a comment\n" + "".join(f"{PUZZLE}\n  \n" for _ in range(7)) + PUZZLE,
    "noheader.tsv": "".join(f"{PUZZLE}\t{SOLVED}\n" for _ in range(11)),
    "bom-inside.txt": f"{PUZZLE}\n\ufeff{PUZZLE}\n{PUZZLE}\n",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("slice_bytes", [1, 7, 50, 97, 333, None])
def test_text_slices_read_as_the_whole(tmp_path, name, slice_bytes):
    path = tmp_path / name
    path.write_bytes(TEXTS[name].encode())
    assert sliced(path, slice_bytes).equals(whole(path))


def test_a_line_across_a_cut_belongs_to_the_slice_where_it_starts(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text(f"puzzle\n{PUZZLE}\n{PUZZLE}\n")
    inputs = open_inputs([str(path)], batch_size=3)
    cut = len("puzzle\n") + 77  # inside the first row: it is the first slice's whole
    pieces = plan_slices(inputs, 1, slice_bytes=cut)
    assert [count_rows(recipe(inputs.first), p) for p in pieces] == [1, 1, 0]


def test_a_gz_file_is_one_slice(tmp_path):
    path = tmp_path / "x.csv.gz"
    path.write_bytes(gzip.compress(TEXTS["header.csv"].encode()))
    inputs = open_inputs([str(path)], batch_size=3)
    assert len(plan_slices(inputs, 1, slice_bytes=1)) == 1
    assert sliced(path, 1).equals(whole(path))


def test_parquet_slices_are_runs_of_row_groups(tmp_path):
    path = tmp_path / "x.parquet"
    frame = pl.DataFrame({"id": list(range(10)), "puzzle": [PUZZLE] * 10})
    frame.write_parquet(path, row_group_size=3)
    inputs = open_inputs([str(path)], batch_size=3)
    pieces = plan_slices(inputs, 5)
    assert [p.groups for p in pieces] == [(0, 1), (2, 3)]
    assert [p.first_row for p in pieces] == [0, 6]
    assert sliced(path, None, 5).equals(whole(path))


def test_slices_for_workers_shrink_towards_the_end(tmp_path):
    """Workers take the slices as they finish their last, so a run ends when its last slice
    does: for 2 workers, 40,000 rows cut 16,000 at most are cut shorter and shorter (an
    eighth of what is left), down to 1,000 (16,000 / 16), so that no worker is left alone
    with a long last slice."""
    path = tmp_path / "p.txt"
    path.write_text("".join(f"{PUZZLE}\n" for _ in range(40_000)))
    inputs = open_inputs([str(path)], batch_size=3)
    ds = recipe(inputs.first)

    def rows(workers: int) -> list[int]:
        return [count_rows(ds, p) for p in plan_slices(inputs, 16_000, workers=workers)]

    assert rows(0) == [16_000, 16_000, 8_000]
    shrinking = rows(2)
    assert sum(shrinking) == 40_000
    assert shrinking[:3] == [5_000, 4_375, 3_828]
    assert shrinking == sorted(shrinking, reverse=True)
    assert shrinking[-4:-1] == [1_000] * 3 and shrinking[-1] <= 1_000


def test_the_smallest_slice_grows_with_the_workers():
    """At most about a thousand tasks a second for the scheduler, however many workers."""
    assert shrinking_rows(1e9, 200_000, 0) == 200_000  # no workers said: one size
    assert shrinking_rows(1e9, 200_000, 2) == 200_000  # much left: the most
    assert shrinking_rows(10_000, 200_000, 2) == 12_500  # little left: a sixteenth
    assert shrinking_rows(10_000, 200_000, 100) == 40_000  # 400 rows a worker
    assert shrinking_rows(10_000, 200_000, 1_000) == 200_000  # never more than the most


def test_slices_read_with_workers_give_the_whole_input(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("".join(f"{PUZZLE}\n" for _ in range(5_000)))
    assert sliced(path, None, 1_600, workers=1).equals(whole(path))


def test_parquet_slices_for_workers_shrink_by_whole_row_groups(tmp_path):
    path = tmp_path / "x.parquet"
    pl.DataFrame({"puzzle": [PUZZLE] * 12_000}).write_parquet(path, row_group_size=500)
    inputs = open_inputs([str(path)], batch_size=3)
    shrinking = [p.rows for p in plan_slices(inputs, 4_800, workers=1)]
    assert shrinking == [3_000, 2_500, 2_000, 1_500, 1_000, 500, 500, 500, 500]
    assert [p.rows for p in plan_slices(inputs, 4_800)] == [5_000, 5_000, 2_000]


def test_a_worker_that_does_not_share_the_storage_says_why(tmp_path):
    folder = tmp_path / "out.parquet.partial"
    folder.mkdir()
    (folder / "run.json").write_text("{}")
    import zlib

    token = zlib.crc32(b"{}")
    data = tmp_path / "in.csv"
    data.write_text("puzzle\n")
    assert check_storage(str(folder), token, [(str(data), 7)]) is None
    assert list(folder.iterdir()) == [folder / "run.json"]  # the probe is gone
    assert "not the client's" in check_storage(str(folder), token + 1, [])
    assert "cannot read" in check_storage(str(tmp_path / "elsewhere"), token, [])
    assert "cannot read the input" in check_storage(str(folder), token, [("/nowhere.csv", 1)])
    assert "with 7 bytes, not 8" in check_storage(str(folder), token, [(str(data), 8)])


def test_a_file_cut_short_after_the_plan_is_an_error_not_fewer_rows(tmp_path):
    """A slice reads the bytes its plan says; a file that ends before them (truncated or
    rewritten while the run reads it) stops the run in one line, even where the rows a
    slice was counted at and the rows it read would still agree."""
    from pipeline.errors import InputError

    path = tmp_path / "p.txt"
    path.write_text("".join(f"{PUZZLE}\n" for _ in range(8)))
    inputs = open_inputs([str(path)], batch_size=3)
    ds = recipe(inputs.first)
    pieces = plan_slices(inputs, 4, slice_bytes=4 * 82)
    assert len(pieces) == 2
    opened = RangeBytes(str(path), pieces[1].begin, pieces[1].end).open()  # reading, when
    path.write_text("".join(f"{PUZZLE}\n" for _ in range(6)))  # two lines go

    with pytest.raises(InputError, match="ended 164 bytes early"):
        list(slice_batches(ds, pieces[1], 4, 3))
    with pytest.raises(InputError, match="ended 164 bytes early"):
        while opened.read(1 << 16):
            pass

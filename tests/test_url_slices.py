"""Slices of an input at a URL (`io.url_slices`, `io.slices`), read as a Dask worker reads them:
the file opened again at its URL, only the slice's bytes asked for (Range requests), the rows
those of the whole file, each once, in order, wherever the cuts fall. A file changed since the
plan is an error naming it, never a mix of two files. No Dask here: tests/test_dask_urls.py
runs the same slices on a cluster.

The server is tests/http_served.py's `http.server` in a thread (with or without Range support).
"""

import gzip
import os
import urllib.request
import zlib

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import InputError
from pipeline.io.inputs import open_inputs
from pipeline.io.slices import count_rows, plan_slices, recipe, sliceable
from pipeline.io.url_slices import UrlFile
from pipeline.run.sliced import check_storage
from tests.http_served import CHUNK
from tests.test_slices import PUZZLE, TEXTS, sliced, whole


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize("slice_bytes", [13, 50, 97, None])  # 13: a cut in most lines
def test_text_slices_at_a_url_read_as_the_whole_file(server, name, slice_bytes):
    (server.folder / name).write_bytes(TEXTS[name].encode())

    assert sliced(server / name, slice_bytes).equals(whole(str(server.folder / name)))


def test_the_server_counts_a_late_response_to_its_own_request(server):
    """The count the next test relies on: a body still being written after `forget()` (the
    client read its start and went on, the server writing the rest into the socket's
    buffers) is the earlier request's, never the next ones' (CI failed once so)."""
    (server.folder / "big.bin").write_bytes(os.urandom(256 * CHUNK))  # more than any buffer
    with urllib.request.urlopen(server / "big.bin") as response:
        response.read(CHUNK)
        server.forget()
        response.read()

    assert server.sent == 0 and server.requests == []


def test_a_worker_asks_only_for_its_slice_and_the_line_across_its_end(server):
    lines = [f"{i},{PUZZLE}\n" for i in range(2000)]  # ~170 KB
    (server.folder / "big.csv").write_text("id,puzzle\n" + "".join(lines))
    inputs = open_inputs([server / "big.csv"], batch_size=100)
    pieces = plan_slices(inputs, 500, slice_bytes=40_000)
    ds = recipe(inputs.first)
    server.forget()  # count only the slices' requests

    counted = [count_rows(ds, piece) for piece in pieces]

    assert sum(counted) == 2000 and len(pieces) > 3
    assert all(asked is not None for _, asked in server.requests)  # ranges only
    # each slice: its bytes, and a few KiB past each of its two cuts to find the lines' ends
    assert server.sent < (server.folder / "big.csv").stat().st_size + len(pieces) * 2 * 8192


def test_parquet_at_a_url_is_cut_by_row_groups_from_the_footer(server):
    path = server.folder / "x.parquet"
    frame = pl.DataFrame({"id": list(range(10)), "puzzle": [PUZZLE] * 10})
    frame.write_parquet(path, row_group_size=3)
    inputs = open_inputs([server / "x.parquet"], batch_size=3)

    pieces = plan_slices(inputs, 5)

    assert [p.groups for p in pieces] == [(0, 1), (2, 3)]
    assert [p.first_row for p in pieces] == [0, 6]
    assert sliced(server / "x.parquet", None, 5).equals(whole(str(path)))
    assert all(asked is not None for _, asked in server.requests)  # never the whole file


def test_a_compressed_url_is_one_slice_even_from_a_server_without_ranges(server):
    server.ranges = False
    (server.folder / "x.csv.gz").write_bytes(gzip.compress(TEXTS["header.csv"].encode()))
    inputs = open_inputs([server / "x.csv.gz"], batch_size=3)

    assert sliceable(inputs.first)
    assert len(plan_slices(inputs, 1, slice_bytes=1)) == 1
    assert sliced(server / "x.csv.gz", 1).equals(whole(str(server.folder / "x.csv.gz")))


def test_a_url_from_a_server_without_ranges_is_not_sliced(server):
    server.ranges = False
    (server.folder / "x.csv").write_text(TEXTS["header.csv"])

    assert not sliceable(open_inputs([server / "x.csv"]).first)


def test_an_fsspec_url_is_sliced_as_a_file():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with fs.open("/sliced/x.csv", "wb") as f:
        f.write(TEXTS["header.csv"].encode())
    with fs.open("/sliced/x.parquet", "wb") as f:
        pq.write_table(pa.table({"puzzle": [PUZZLE] * 7}), f, row_group_size=2)
    try:
        assert sliceable(open_inputs(["memory://sliced/x.csv"]).first)
        want = whole("memory://sliced/x.csv")
        assert sliced("memory://sliced/x.csv", 7).equals(want)
        assert len(plan_slices(open_inputs(["memory://sliced/x.parquet"]), 3)) == 2  # 2+2, 2+1
        assert sliced("memory://sliced/x.parquet", None, 3).equals(
            whole("memory://sliced/x.parquet")
        )
    finally:
        fs.rm("/sliced", recursive=True)


def test_a_file_changed_after_the_plan_is_an_error_naming_it(server):
    (server.folder / "x.csv").write_text(TEXTS["header.csv"])
    inputs = open_inputs([server / "x.csv"], batch_size=3)
    pieces = plan_slices(inputs, 1, slice_bytes=50)
    (server.folder / "x.csv").write_text(TEXTS["header.csv"] + f"6,{PUZZLE},\n")

    with pytest.raises(InputError, match=r"x\.csv: changed since the run was planned \(its size"):
        count_rows(recipe(inputs.first), pieces[1])


def test_a_password_travels_to_the_worker_and_is_never_shown(server):
    (server.folder / "x.csv").write_text(TEXTS["header.csv"])
    url = (server / "x.csv").replace("http://", "http://ann:s3cret@")
    inputs = open_inputs([url], batch_size=3)

    pieces = plan_slices(inputs, 1, slice_bytes=50)

    assert all(piece.url is not None and "s3cret" in piece.url.url for piece in pieces)
    assert "s3cret" not in repr(pieces) and "s3cret" not in repr(recipe(inputs.first))
    assert sliced(url, 50).equals(whole(url))
    assert "ann:***@" in pieces[0].path


def test_a_worker_that_cannot_reach_a_url_says_so(server, tmp_path):
    folder = tmp_path / "out.parquet.partial"
    folder.mkdir()
    (folder / "run.json").write_text("{}")
    (server.folder / "x.csv").write_text(TEXTS["header.csv"])
    found = UrlFile.of(open_inputs([server / "x.csv"]).first.remote_file)
    token = zlib.crc32(b"{}")

    assert check_storage(str(folder), token, [found]) is None
    (server.folder / "x.csv").write_text(TEXTS["header.csv"] + "\n\n")
    changed = check_storage(str(folder), token, [found])
    (server.folder / "x.csv").unlink()
    missing = check_storage(str(folder), token, [found])

    assert changed.startswith(f"cannot reach the input {server / 'x.csv'} (changed since")
    assert missing == f"cannot reach the input {server / 'x.csv'} (HTTP 404 Not Found)"

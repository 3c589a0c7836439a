"""Inputs at URLs: `http(s)://` read with the standard library, `s3://`, `gs://`, `hf://` (any
fsspec protocol: `memory://` here) through fsspec. Everything that works for a file works for a
URL: formats by suffix, sniffing, several inputs, the `source` column, the default output (in
the current folder), `--resume` (a changed remote file is told by its size, ETag and
Last-Modified). Errors are one line, exit code 2.

The server is `http.server` in a thread, serving a temporary folder, with Range requests (for
Parquet) unless told not to: nothing here reaches beyond this machine."""

import base64
import http.client
import json
import os
import socket
import sys
import threading
import tracemalloc
import urllib.error

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import generate
from pipeline.errors import InputError
from pipeline.io.opening import open_dataset
from tests.conftest import assert_one_line_error, cli
from tests.http_served import Server
from tests.test_cli_solve import assert_same_results, interrupt_after, metadata_of
from tests.test_dataset import P1, P2, S1, S2, read_all, write, write_parquet

SUFFIX = {None: "", "gzip": ".gz", "zstd": ".zst"}


CSV = f"id,puzzle,solution\n1,{P1},{S1}\n2,{P2},{S2}\n"
TABLE = pa.table({"id": [1, 2], "puzzle": [P1, P2], "solution": [S1, S2]})
SHAPES = {
    "csv": CSV,
    "tsv": CSV.replace(",", "\t"),
    "txt": f"# two puzzles\n{P1}\n\n{P2}\n",
}


def serve(server: Server, name: str, fmt: str, compression: str | None = None) -> str:
    """Write a two-puzzle input `name` in `fmt` into the served folder; its URL."""
    path = server.folder / name
    if fmt == "parquet":
        write_parquet(path, TABLE, compression)
    else:
        write(path, SHAPES[fmt], compression)
    return server / name


# --- every format -----------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
@pytest.mark.parametrize("fmt", ["csv", "tsv", "txt", "parquet"])
def test_every_format_reads_over_http_as_from_a_file(server, tmp_path, fmt, compression):
    name = f"puzzles.{fmt}{SUFFIX[compression]}"
    url = serve(server, name, fmt, compression)

    ds = open_dataset(url)

    assert (ds.format, ds.compression, ds.stream) == (fmt, compression, False)
    assert read_all(ds) == read_all(open_dataset(server.folder / name))


def test_parquet_is_read_by_ranges_not_whole(server):
    rows = 20_000
    notes = [os.urandom(500).hex() for _ in range(rows)]  # 20 MB that validate does not read
    table = pa.table({"puzzle": [P1, P2] * (rows // 2), "note": notes})
    path = write_parquet(server.folder / "big.parquet", table, compression="none")

    ds = open_dataset(server / "big.parquet", passthrough=False)

    assert read_all(ds)["puzzle"] == [P1, P2] * (rows // 2)
    assert all(asked is not None for _, asked in server.requests)
    assert server.sent < path.stat().st_size / 2  # the footer, the puzzles, a sample of notes


def test_parquet_from_a_server_without_ranges_goes_through_a_temporary_file(server):
    server.ranges = False
    url = serve(server, "p.parquet", "parquet")

    assert read_all(open_dataset(url))["solution"] == [S1, S2]
    assert len(server.requests) == 1  # asked for its first byte, given it all, kept it all


def test_a_large_csv_streams_in_bounded_memory(server):
    rows = 120_000  # 20 MB of CSV
    with open(server.folder / "big.csv", "w") as f:
        f.write("puzzle,solution\n")
        for _ in range(rows // 2):
            f.write(f"{P1},{S1}\n{P2},{S2}\n")

    ds = open_dataset(server / "big.csv", batch_size=10_000)
    tracemalloc.start()
    try:
        count = sum(batch.num_rows for batch in ds.batches())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert count == rows
    assert peak < 8 << 20  # a block or two of lines, never the 20 MB body


def test_a_semicolon_csv_at_a_url_is_sniffed(server):
    write(server.folder / "semi.csv", CSV.replace(",", ";"))

    ds = open_dataset(server / "semi.csv")

    assert (ds.separator, read_all(ds)["solution"]) == (";", [S1, S2])


def test_a_query_string_is_no_glob_and_no_part_of_the_format(server):
    url = serve(server, "p.csv", "csv") + "?download=1&x=[1]"

    assert read_all(open_dataset(url))["puzzle"] == [P1, P2]


def test_a_url_without_a_format_in_its_name_is_sniffed_as_a_stream(server):
    url = serve(server, "download", "csv", "gzip")

    ds = open_dataset(url)

    assert (ds.format, ds.compression, ds.stream) == ("csv", "gzip", True)
    assert read_all(ds)["solution"] == [S1, S2]


# --- the command ------------------------------------------------------------------------------


def test_solve_a_url_writes_its_result_in_the_current_folder(server, tmp_path, monkeypatch):
    url = serve(server, "kaggle.csv.gz", "csv", "gzip")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)

    result = cli("solve", url + "?raw=true", "-q")

    assert result.exit_code == 0, result.output
    assert os.listdir(here) == ["kaggle.solved.parquet"]
    out = pl.read_parquet(here / "kaggle.solved.parquet")
    assert out["expected_ok"].to_list() == [True, True]
    meta = metadata_of(here / "kaggle.solved.parquet")["input"]
    assert (meta["path"], meta["format"], meta["compression"]) == (url + "?raw=true", "csv", "gzip")


def test_several_urls_and_a_local_file_go_into_one_output(server, tmp_path):
    first = serve(server, "a.csv", "csv")
    second = serve(server, "b.parquet", "parquet")
    local = write(tmp_path / "c.csv", CSV)
    out = tmp_path / "all.parquet"

    result = cli("solve", first, second, local, "-o", out, "-q")

    assert result.exit_code == 0, result.output
    table = pl.read_parquet(out)
    sources = table["source"].cast(pl.String).to_list()
    assert sources == [first] * 2 + [second] * 2 + [str(local)] * 2
    assert table["row"].to_list() == [0, 1] * 3
    assert table["expected_ok"].all()


def test_validate_reads_a_url_twice_for_the_ids_of_repeats(server, tmp_path):
    write(server.folder / "dups.csv", f"id,puzzle\n7,{P1}\n8,{P2}\n9,{P1}\n")
    out = tmp_path / "findings.parquet"

    result = cli("validate", server / "dups.csv", "-o", out, "-q", "--exit-zero")

    assert result.exit_code == 0, result.output
    findings = pl.read_parquet(out).filter(pl.col("code") == "duplicate")
    assert findings.select("row", "id", "first_row").rows() == [(2, 9, 0)]


def test_a_missing_url_is_one_line(server):
    result = cli("solve", server / "missing.csv", "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "missing.csv", "404")


def test_a_refused_connection_is_one_line(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    result = cli("solve", f"http://127.0.0.1:{port}/x.csv", "-o", tmp_path / "o.parquet", "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, f"127.0.0.1:{port}/x.csv", "refused")


def test_a_server_that_never_answers_times_out_in_one_line(server, tmp_path, monkeypatch):
    import pipeline.io.http_files

    monkeypatch.setattr(pipeline.io.http_files, "TIMEOUT_S", 0.5)
    url = serve(server, "slow.csv", "csv")
    server.hold = threading.Event()

    result = cli("solve", url, "-o", tmp_path / "o.parquet", "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "slow.csv", "timed out")


def test_a_connection_dropped_mid_body_is_one_line_and_no_output(server, tmp_path):
    with open(server.folder / "cut.csv", "w") as f:
        f.write("puzzle\n" + f"{P1}\n" * 100_000)
    server.cut["cut.csv"] = 3_000_000  # of 8 MB
    out = tmp_path / "o.parquet"

    result = cli("solve", server / "cut.csv", "-o", out, "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "cut.csv", "read failed")
    assert not out.exists()


def test_a_remote_file_that_changes_while_read_is_an_error(server):
    url = serve(server, "p.csv", "csv")
    ds = open_dataset(url)
    write(server.folder / "p.csv", CSV + f"3,{P1},{S1}\n")

    with pytest.raises(InputError, match="changed"):
        list(ds.batches())


def test_a_password_in_a_url_is_sent_and_never_shown(server, tmp_path):
    url = serve(server, "p.csv", "csv").replace("http://", "http://ann:s3cret@")
    out = tmp_path / "o.parquet"

    solved = cli("solve", url, "-o", out, "-q")
    missing = cli("solve", url.replace("p.csv", "missing.csv"), "-q")

    assert solved.exit_code == 0, solved.output
    assert set(server.authorizations) == {"Basic " + base64.b64encode(b"ann:s3cret").decode()}
    assert metadata_of(out)["input"]["path"] == url.replace("s3cret", "***")
    assert missing.exit_code == 2
    assert_one_line_error(missing.stderr, "ann:***@", "404")
    assert "s3cret" not in missing.stderr + json.dumps(metadata_of(out))


@pytest.mark.parametrize(
    "error, said",
    [
        (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")), "cannot resolve"),
        (urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")), "refused"),
        (TimeoutError("timed out"), "no answer within"),
        (http.client.IncompleteRead(b"abc", 10), "closed after 3 bytes, 10 more expected"),
    ],
)
def test_network_errors_are_said_in_a_few_words(error, said):
    from pipeline.io.http_files import reason

    assert said in reason(error)


# --- resume -----------------------------------------------------------------------------------


def test_resume_continues_a_url_and_refuses_one_that_changed(server, tmp_path, monkeypatch):
    generate(60, seed=3).write_csv(server.folder / "medium.csv")
    url = server / "medium.csv"
    full = tmp_path / "full.parquet"
    assert cli("solve", url, "-o", full, "--workers", 1, "-q").exit_code == 0
    out = tmp_path / "out.parquet"
    interrupt_after(monkeypatch, parts=2)
    assert cli("solve", url, "-o", out, "--batch-size", 10, "--workers", 1, "-q").exit_code == 130
    monkeypatch.undo()
    served = server.folder / "medium.csv"
    stat = served.stat()

    os.utime(served, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the same bytes, newer
    refused = cli("solve", url, "-o", out, "--resume")
    os.utime(served, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    resumed = cli("solve", url, "-o", out, "--resume", "-q", "--json")

    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "input etag", "input last-modified")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed_rows"] == 20
    assert_same_results(pl.read_parquet(out), pl.read_parquet(full))


def test_resume_refuses_a_url_read_as_a_stream(server, tmp_path):
    url = serve(server, "download", "csv")

    result = cli("solve", url, "-o", tmp_path / "o.parquet", "--resume")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "--resume", "read once")


# --- fsspec: s3://, gs://, hf://, memory:// ---------------------------------------------------


@pytest.fixture
def memory_fs():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    fs.mkdir("/corpus")
    yield fs
    fs.rm("/corpus", recursive=True)


def test_an_fsspec_url_reads_as_a_file(memory_fs):
    with memory_fs.open("/corpus/a.csv", "wb") as f:
        f.write(CSV.encode())
    with memory_fs.open("/corpus/b.parquet", "wb") as f:
        pq.write_table(TABLE, f)

    assert read_all(open_dataset("memory://corpus/a.csv"))["solution"] == [S1, S2]
    assert read_all(open_dataset("memory://corpus/b.parquet"))["solution"] == [S1, S2]


def test_an_fsspec_glob_expands_in_sorted_order(memory_fs, tmp_path):
    for name in ("b.csv", "a.csv"):
        with memory_fs.open(f"/corpus/{name}", "wb") as f:
            f.write(CSV.encode())
    out = tmp_path / "all.csv"

    result = cli("solve", "memory://corpus/*.csv", "-o", out, "-q")

    assert result.exit_code == 0, result.output
    sources = pl.read_csv(out, infer_schema=False)["source"].to_list()
    assert sources == ["memory://corpus/a.csv"] * 2 + ["memory://corpus/b.csv"] * 2


def test_a_missing_fsspec_file_is_one_line(memory_fs):
    result = cli("solve", "memory://corpus/none.csv", "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "memory://corpus/none.csv", "no such file")


def test_a_scheme_whose_package_is_missing_names_what_to_install():
    pytest.importorskip("fsspec")
    try:
        import s3fs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("s3fs is installed")

    with pytest.raises(InputError, match=r"needs fsspec and s3fs: pip install .*\[s3\]"):
        open_dataset("s3://bucket/puzzles.csv")


def test_without_fsspec_an_hf_url_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec fails

    with pytest.raises(InputError, match=r"needs fsspec and huggingface_hub: pip install .*\[hf\]"):
        open_dataset("hf://datasets/someone/sudoku/puzzles.csv")


def test_an_unknown_scheme_is_one_line():
    result = cli("solve", "nosuch://host/x.csv", "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "nosuch://")

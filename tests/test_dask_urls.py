"""Inputs at URLs on Dask (issue 36): the workers read their own slices at the URL, by range
requests, and keep their own parts; the output is the local run's, timing columns aside. A
file changed on the server after the client planned the run fails it in one line, exit code 2.
A server that takes no range requests: the client reads the URL itself, and says so.

The server is tests/http_served.py's `http.server` in a thread; the cluster a LocalCluster of
two workers (threads of this process, as in tests/test_dask.py's quicker tests).
"""

import json
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.jobs.solve.job import solve_file
from tests.conftest import assert_one_line_error, cli
from tests.test_cli_solve import metadata_of
from tests.test_dask import TIMING, _no_part_through_the_client, _Stop

pytest.importorskip("distributed")

ON_DASK = dict(batch_size=100, executor="dask", workers=2, progress=False)  # 400-row slices


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return generate(1200, seed=36).select("id", "puzzle", "solution")


@pytest.fixture(scope="module")
def local_result(frame, tmp_path_factory) -> pl.DataFrame:
    folder = tmp_path_factory.mktemp("local")
    frame.write_csv(folder / "corpus.csv")
    solve_file(folder / "corpus.csv", folder / "out.parquet", workers=1, progress=False)
    return pl.read_parquet(folder / "out.parquet").drop(TIMING)


@pytest.mark.parametrize("name", ["corpus.csv", "corpus.parquet", "corpus.csv.gz"])
def test_workers_read_their_slices_of_a_url(server, frame, local_result, tmp_path, name,
                                            monkeypatch):  # fmt: skip
    served = server.folder / name
    if name.endswith(".parquet"):
        frame.write_parquet(served, row_group_size=150)
    else:
        frame.write_csv(served, compression="gzip" if name.endswith(".gz") else "uncompressed")
    _no_part_through_the_client(monkeypatch)  # the run is sliced, or this fails it
    out = tmp_path / "out.parquet"

    summary = solve_file(server / name, out, **ON_DASK)

    assert summary.rows == 1200
    assert pl.read_parquet(out).drop(TIMING).equals(local_result)
    if not name.endswith(".gz"):  # the workers by ranges; the client's look at its head
        assert [asked for _, asked in server.requests].count(None) <= 1


def test_an_fsspec_url_is_read_by_the_workers(frame, local_result, tmp_path, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")  # the workers are threads here: they see it too
    with fs.open("/dask-urls/corpus.csv", "wb") as f:
        frame.write_csv(f)
    _no_part_through_the_client(monkeypatch)
    out = tmp_path / "out.parquet"
    try:
        solve_file("memory://dask-urls/corpus.csv", out, **ON_DASK)
    finally:
        fs.rm("/dask-urls", recursive=True)
    assert pl.read_parquet(out).drop(TIMING).equals(local_result)


@pytest.mark.parametrize("name", ["corpus.parquet", "corpus.csv"])
def test_a_file_changed_on_the_server_after_the_plan(server, frame, local_result, tmp_path,
                                                    monkeypatch, name):  # fmt: skip
    """The client plans and counts; the file changes; the workers read their slices. A
    Parquet file's row groups are read then, by ranges: the workers find it changed (its
    size, ETag, Last-Modified), and the run ends in one line, exit 2. A text file's slices
    were read whole when counted (and kept): the run reads the file as planned, whole, and
    never a mix of two versions."""
    import pipeline.run.sliced as sliced

    write = pl.DataFrame.write_parquet if name.endswith(".parquet") else pl.DataFrame.write_csv
    write(frame, server.folder / name)
    planned = sliced.SlicedRun.results

    def change_then_run(self, *args):
        write(frame.head(1100), server.folder / name)
        return planned(self, *args)

    monkeypatch.setattr(sliced.SlicedRun, "results", change_then_run)
    out = tmp_path / "out.parquet"

    result = cli("solve", server / name, "-o", out, "--executor", "dask",
                 "--workers", 2, "--batch-size", 100, "-q")  # fmt: skip

    if name.endswith(".parquet"):
        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, server / name, "changed since the run was planned")
        assert not out.exists()
    else:
        assert result.exit_code == 0, result.output
        assert pl.read_parquet(out).drop(TIMING).equals(local_result)


def test_a_server_without_ranges_is_read_by_the_client_and_said(server, frame, local_result,
                                                               tmp_path):  # fmt: skip
    server.ranges = False
    frame.write_csv(server.folder / "corpus.csv")
    out = tmp_path / "out.parquet"

    result = cli("solve", server / "corpus.csv", "-o", out, "--executor", "dask",
                 "--workers", 2, "--batch-size", 100)  # fmt: skip

    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: on Dask, this process reads {server / 'corpus.csv'} and writes the output "
        "itself (its server takes no range requests: the workers cannot read slices of it); "
        "the workers solve the batches it sends them"
    ]
    assert pl.read_parquet(out).drop(TIMING).equals(local_result)


def test_a_url_sliced_on_dask_says_nothing(server, frame, tmp_path):
    frame.write_csv(server.folder / "corpus.csv")

    result = cli("solve", server / "corpus.csv", "-o", tmp_path / "o.parquet",
                 "--executor", "dask", "--workers", 2, "--json")  # fmt: skip

    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_a_password_in_the_url_reaches_the_workers_and_is_never_shown(server, frame,
                                                                      tmp_path: Path):  # fmt: skip
    frame.write_csv(server.folder / "corpus.csv")
    url = (server / "corpus.csv").replace("http://", "http://ann:s3cret@")
    out = tmp_path / "out.parquet"

    result = cli("solve", url, "-o", out, "--executor", "dask", "--workers", 2,
                 "--batch-size", 100, "--json")  # fmt: skip

    assert result.exit_code == 0, result.output
    assert len(server.requests) > 4 and all(server.authorizations)  # the workers' too
    assert "s3cret" not in result.stdout + result.stderr + json.dumps(metadata_of(out))
    assert metadata_of(out)["input"]["path"] == url.replace("s3cret", "***")


def test_a_url_read_as_a_stream_stays_on_the_client_and_says_why(server, frame, tmp_path):
    frame.write_csv(server.folder / "download")  # no format in its name: sniffed, read once

    result = cli("solve", server / "download", "-o", tmp_path / "o.parquet",
                 "--executor", "dask", "--workers", 2, "--json")  # fmt: skip

    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"note: on Dask, this process reads {server / 'download'} and writes the output "
        "itself (its name tells no format: it is read once, as a stream); the workers solve "
        "the batches it sends them"
    ]


def test_a_url_run_stopped_is_finished_by_resume_on_dask(server, frame, local_result,
                                                         tmp_path, monkeypatch):  # fmt: skip
    """Every slice kept, the client stopped at the join: `--resume` on the cluster knows the
    URL's file by its identity, keeps every slice, and joins."""
    from pipeline.run import join

    def stop(f):
        raise _Stop

    frame.write_csv(server.folder / "corpus.csv")
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(join, "durable", stop)
    with pytest.raises(_Stop):
        solve_file(server / "corpus.csv", out, **ON_DASK)
    monkeypatch.undo()

    done = solve_file(server / "corpus.csv", out, resume=True, **ON_DASK)

    assert done.resumed_rows == 1200
    assert pl.read_parquet(out).drop(TIMING).equals(local_result)


def test_a_worker_that_cannot_reach_the_url_is_refused_before_any_work(server, frame, tmp_path,
                                                                      monkeypatch):  # fmt: skip
    from pipeline.errors import InputError
    from pipeline.io.url_slices import UrlFile

    frame.write_csv(server.folder / "corpus.csv")
    url = server / "corpus.csv"
    monkeypatch.setattr(UrlFile, "problem", lambda self: f"cannot reach the input {url} (HTTP 403)")
    out = tmp_path / "out.parquet"

    with pytest.raises(InputError) as refused:
        solve_file(url, out, **ON_DASK)

    assert str(refused.value).endswith(
        f"cannot reach the input {url} (HTTP 403): every worker must reach the input URLs, "
        "with the same credentials"
    )
    assert not out.exists() and not (tmp_path / "out.parquet.partial").exists()


def test_workers_in_other_processes_read_the_url(server, frame, local_result, tmp_path):
    """A real scheduler and two worker processes (tests/test_dask.py's `dask_cluster`): the
    plan, the URL and its identity travel to them pickled, and they reach the server."""
    from tests.test_dask import dask_cluster

    frame.write_parquet(server.folder / "corpus.parquet", row_group_size=150)
    out = tmp_path / "out.parquet"
    with dask_cluster(tmp_path / "cluster") as cluster:
        summary = solve_file(server / "corpus.parquet", out, batch_size=100, executor="dask",
                             scheduler=cluster.address, progress=False)  # fmt: skip

    assert summary.rows == 1200 and summary.workers == 2
    assert pl.read_parquet(out).drop(TIMING).equals(local_result)


def test_a_text_slice_of_a_url_is_downloaded_once(server, frame, tmp_path, monkeypatch):
    """The worker that counts a text slice's rows keeps its bytes (compressed, in the
    checkpoint) for the task that reads them: the file is asked for about once, not twice
    (the counting pass, then the reading pass, as before)."""
    import re

    big = pl.concat([frame] * 4)  # 4,800 rows in 3 slices of 2,000 rows (the last shorter)
    big.write_csv(server.folder / "big.csv")
    big.write_csv(tmp_path / "big.csv")
    size = (server.folder / "big.csv").stat().st_size
    local = tmp_path / "local.parquet"
    solve_file(tmp_path / "big.csv", local, workers=1, progress=False)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", "2000")
    out = tmp_path / "out.parquet"

    solve_file(server / "big.csv", out, **ON_DASK)

    assert pl.read_parquet(out).drop(TIMING).equals(pl.read_parquet(local).drop(TIMING))
    asked = 0
    for path, ranges in server.requests:
        if path.endswith("big.csv") and ranges is not None:
            first, last = map(int, re.fullmatch(r"bytes=(\d+)-(\d+)", ranges).groups())
            asked += last - first + 1
    assert size <= asked < 1.25 * size, (asked, size)  # each slice once, and the cuts' scans
    assert not out.with_name(out.name + ".partial").exists()

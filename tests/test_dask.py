"""Scale out: the same solve and validate jobs on a Dask cluster give the local results.

A real `dask scheduler` and two `dask worker` processes are started on 127.0.0.1 by the tests.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.solving.job import solve_file

pytest.importorskip("distributed")

TIMING = ["solve_ns"]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask(*args: str, log: Path) -> subprocess.Popen:
    command = [str(BIN / "dask"), *args]
    with log.open("w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two single-threaded workers on loopback; yields (address, workers)."""
    logs = tmp_path_factory.mktemp("dask-logs")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                      "--no-dashboard", log=logs / "scheduler.log")  # fmt: skip
    workers = [
        _dask(
            "worker",
            address,
            "--nthreads",
            "1",
            "--no-dashboard",
            "--name",
            f"w{i}",
            log=logs / f"worker{i}.log",
        )  # fmt: skip
        for i in range(2)
    ]
    from distributed import Client

    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(address, timeout="5s") as client:
                client.wait_for_workers(2, timeout=30)
            break
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    yield address, workers
    for process in [*workers, scheduler]:
        _stop(process)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dask-corpus") / "corpus.csv"
    generate(3000, seed=21).select("id", "puzzle", "solution").write_csv(path)
    return path


def _same_rows(a: Path, b: Path) -> None:
    left = pl.read_parquet(a).drop(TIMING)
    right = pl.read_parquet(b).drop(TIMING)
    assert left.height == right.height
    assert left.equals(right)


@pytest.fixture(scope="module")
def local_result(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "local.parquet"
    solve_file(corpus, out, batch_size=250, workers=1, progress=False)
    return out


def test_solve_on_a_running_cluster_equals_local(cluster, corpus, local_result, tmp_path):
    address, _ = cluster
    out = tmp_path / "dask.parquet"
    summary = solve_file(corpus, out, batch_size=250, executor="dask", scheduler=address,
                         progress=False)  # fmt: skip
    assert summary.rows == 3000 and summary.workers == 2
    _same_rows(local_result, out)


def test_solve_on_a_local_cluster_equals_local(corpus, local_result, tmp_path):
    out = tmp_path / "dask.parquet"
    solve_file(corpus, out, batch_size=500, executor="dask", workers=2, progress=False)
    _same_rows(local_result, out)


def _start_slow_run(
    tmp_path: Path, address: str, rows: int, seed: int, batch_size: int, parts: int
) -> tuple[subprocess.Popen, Path]:
    """Start `sudoku-pipeline solve` on the cluster at `address`, on a corpus slow enough to
    interrupt (backtracking), and return once `parts` batches are kept in its checkpoint."""
    path = tmp_path / "hard.csv"
    generate(rows, seed=seed).select("id", "puzzle").write_csv(path)
    out = tmp_path / "out.parquet"
    command = [str(BIN / "sudoku-pipeline"), "solve", str(path), "-o", str(out), "--quiet",
               "--executor", "dask", "--scheduler", address, "--batch-size", str(batch_size),
               "--strategy", "backtrack", "--max-nodes", "3000"]  # fmt: skip
    run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    partial = out.with_name(out.name + ".partial")
    deadline = time.monotonic() + 90
    while len(list(partial.glob("part-*"))) < parts and time.monotonic() < deadline:
        time.sleep(0.05)
    return run, out


def test_a_worker_killed_mid_run_loses_no_rows(cluster, tmp_path):
    """Dask reschedules the batches of a dead worker; the run still completes, in order."""
    address, workers = cluster
    run, out = _start_slow_run(tmp_path, address, rows=1500, seed=5, batch_size=25, parts=3)
    _stop(workers[0])  # kill -9 one of the two workers mid-run
    _, err = run.communicate(timeout=180)
    assert run.returncode == 0, err
    result = pl.read_parquet(out)
    assert result["row"].to_list() == list(range(1500))


def test_without_a_scheduler_to_reach(corpus, tmp_path):
    command = [str(BIN / "sudoku-pipeline"), "solve", str(corpus), "-o", str(tmp_path / "o.pq"),
               "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{_free_port()}"]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr.strip().startswith("error: cannot reach the Dask scheduler")
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "o.pq.partial").exists()  # no checkpoint of nothing (issue 10, 26)
    assert not list(tmp_path.glob(".o.pq*"))  # nor a lock or a temporary file


def test_a_scheduler_that_goes_away_leaves_a_resumable_checkpoint(tmp_path, corpus):
    logs = tmp_path / "logs"
    logs.mkdir()
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                      "--no-dashboard", log=logs / "s.log")  # fmt: skip
    worker = _dask("worker", address, "--nthreads", "1", "--no-dashboard", log=logs / "w.log")
    try:
        run, out = _start_slow_run(tmp_path, address, rows=1200, seed=8, batch_size=20, parts=2)
        partial = out.with_name(out.name + ".partial")
        path = tmp_path / "hard.csv"
        _stop(scheduler)
        _, err = run.communicate(timeout=120)
        assert run.returncode == 2, err
        assert "--resume" in err and "Traceback" not in err
        assert list(partial.glob("part-*"))
        # Resume on this machine's own workers: the rows come out whole and in order.
        done = solve_file(path, out, resume=True, workers=1, strategy="backtrack",
                          max_nodes=3000, batch_size=20, progress=False)  # fmt: skip
        assert done.resumed_rows > 0
        assert pl.read_parquet(out)["row"].to_list() == list(range(1200))
    finally:
        _stop(worker)
        _stop(scheduler)
        shutil.rmtree(logs, ignore_errors=True)

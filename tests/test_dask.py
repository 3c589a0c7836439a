"""Scale out: the same solve and validate jobs on a Dask cluster give the local results.

Real `dask scheduler` and `dask worker` processes are started on 127.0.0.1, a cluster for each
test that needs one, so that no test sees what another left behind (a killed worker, say). The
scheduler picks a free port itself and writes its address to a file: no port is chosen first
and then raced for. A run is cut at a known batch, not at a moment: a worker started with the
preload `dask_hold.py` holds every batch from a given row on, so the run is certainly mid-way
when a test kills that worker or the scheduler, on a fast machine as on a loaded one.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipeline import generate
from pipeline.jobs.solve.job import solve_file

pytest.importorskip("distributed")

TIMING = ["solve_ns"]
BIN = Path(sys.executable).parent
HOLD = Path(__file__).with_name("dask_hold.py")
NO_STORAGE = Path(__file__).with_name("dask_no_storage.py")
# Bounds, not expectations: each is many times what a loaded 2-core machine needs, and passing
# one fails the test with what was awaited.
START_S = 120  # a scheduler, its workers, a run's first batches
RUN_S = 300  # a whole run


def _dask(*args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    command = [str(BIN / "dask"), *args]
    with log.open("w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    """kill -9 the process and all of its own (a worker's nanny and worker process)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


def wait_for(condition: Callable[[], Any], what: str, running: subprocess.Popen, log: Path) -> Any:
    """Poll `condition()` until it holds and return its value; fail, saying `what` was awaited
    and what the process `running` logged (to `log`), when it ends first or after `START_S`."""
    deadline = time.monotonic() + START_S
    while not (value := condition()):
        if running.poll() is not None:
            pytest.fail(f"waiting for {what}: {' '.join(running.args[:2])} ended first, exit "
                        f"code {running.returncode}\n{log.read_text()}")  # fmt: skip
        if time.monotonic() > deadline:
            pytest.fail(f"waiting for {what}: not within {START_S} s\n{log.read_text()}")
        time.sleep(0.05)
    return value


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]
    folder: Path  # logs, the scheduler's file, and the `held-<row>` files of held batches

    def held(self) -> list[int]:
        """The first rows of the batches that workers hold."""
        return sorted(int(p.name.removeprefix("held-")) for p in self.folder.glob("held-*"))


def _address_in(scheduler_file: Path) -> str | None:
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (FileNotFoundError, ValueError, KeyError):  # not yet written, or written half
        return None


@contextmanager
def dask_cluster(
    folder: Path,
    workers: int = 2,
    hold_from_row: dict[int, int] | None = None,
    apart: tuple[int, ...] = (),
    hold_job: str = "solve",
) -> Iterator[Cluster]:
    """A scheduler and `workers` single-threaded workers (`w0`, `w1`, ...) on loopback, all
    connected; worker `i` holds each batch from row `hold_from_row[i]` on (`dask_hold.py`);
    the workers in `apart` do not see the client's storage (`dask_no_storage.py`); `hold_job`:
    the job whose batches are held (solve, validate, split)."""
    folder.mkdir()
    scheduler_file = folder / "scheduler.json"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                      "--scheduler-file", str(scheduler_file),
                      log=folder / "scheduler.log")  # fmt: skip
    started = [scheduler]
    try:
        address = wait_for(lambda: _address_in(scheduler_file), "the scheduler's address",
                           scheduler, folder / "scheduler.log")  # fmt: skip
        for i in range(workers):
            args = ["worker", address, "--nthreads", "1", "--no-dashboard", "--name", f"w{i}",
                    "--local-directory", str(folder / f"w{i}")]  # fmt: skip
            env = None
            if hold_from_row and i in hold_from_row:
                args += ["--preload", str(HOLD)]
                env = {**os.environ, "HOLD_FROM_ROW": str(hold_from_row[i]),
                       "HELD_IN": str(folder), "HOLD_JOB": hold_job}  # fmt: skip
            if i in apart:
                args += ["--preload", str(NO_STORAGE)]
            started.append(_dask(*args, log=folder / f"w{i}.log", env=env))
        from distributed import Client

        with Client(address, timeout=f"{START_S}s") as client:
            client.wait_for_workers(workers, timeout=START_S)
        yield Cluster(address, scheduler, started[1:], folder)
    finally:
        for process in reversed(started):
            _stop(process)


def _start_run(corpus: Path, out: Path, address: str, log: Path) -> subprocess.Popen:
    """`sudoku-pipeline solve` on the cluster at `address` in batches of 250 rows, in the
    background, its stderr to `log`."""
    command = [str(BIN / "sudoku-pipeline"), "solve", str(corpus), "-o", str(out), "--quiet",
               "--executor", "dask", "--scheduler", address, "--batch-size", "250"]  # fmt: skip
    with log.open("w") as err:
        return subprocess.Popen(command, stderr=err)


def _finish(run: subprocess.Popen, log: Path) -> tuple[int, str]:
    """The run's exit code and stderr (from `log`), once it ends (within `RUN_S`)."""
    try:
        run.wait(timeout=RUN_S)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        pytest.fail(f"the run did not end within {RUN_S} s\n{log.read_text()}")
    return run.returncode, log.read_text()


def _parts(out: Path) -> int:
    return len(list(out.with_name(out.name + ".partial").glob("part-*")))


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


def test_solve_on_a_running_cluster_equals_local(corpus, local_result, tmp_path):
    out = tmp_path / "dask.parquet"
    with dask_cluster(tmp_path / "cluster") as cluster:
        summary = solve_file(corpus, out, batch_size=250, executor="dask",
                             scheduler=cluster.address, progress=False)  # fmt: skip
    assert summary.rows == 3000 and summary.workers == 2
    _same_rows(local_result, out)


def test_solve_on_a_local_cluster_equals_local(corpus, local_result, tmp_path):
    out = tmp_path / "dask.parquet"
    solve_file(corpus, out, batch_size=500, executor="dask", workers=2, progress=False)
    _same_rows(local_result, out)


def test_a_worker_killed_holding_a_batch_loses_no_rows(corpus, local_result, tmp_path):
    """Dask gives the batch of a worker that dies holding it to another; the run completes,
    every row once, in order."""
    out, log = tmp_path / "out.parquet", tmp_path / "run.log"
    with dask_cluster(tmp_path / "cluster", hold_from_row={0: 0}) as cluster:
        run = _start_run(corpus, out, cluster.address, log)
        wait_for(cluster.held, "worker w0 to hold a batch", run, log)
        _stop(cluster.workers[0])  # kill -9 the worker holding it
        code, err = _finish(run, log)
    assert code == 0, err
    _same_rows(local_result, out)


def test_a_scheduler_that_goes_away_leaves_a_resumable_checkpoint(corpus, local_result, tmp_path):
    """The scheduler is killed while the fourth batch is held: the run ends with exit code 2
    and a word on `--resume`, keeping the three batches before it; resuming completes it."""
    out, log = tmp_path / "out.parquet", tmp_path / "run.log"
    with dask_cluster(tmp_path / "cluster", workers=1, hold_from_row={0: 750}) as cluster:
        run = _start_run(corpus, out, cluster.address, log)
        wait_for(lambda: _parts(out) == 3 and cluster.held() == [750],
                 "three parts kept and the fourth batch held", run, log)  # fmt: skip
        _stop(cluster.scheduler)
        code, err = _finish(run, log)
    assert code == 2, err
    assert "--resume" in err and "Traceback" not in err
    assert _parts(out) == 3  # the batches before the held one, nothing after it
    # Resume on this machine's own workers: the rows come out whole and in order.
    done = solve_file(corpus, out, resume=True, workers=1, batch_size=250, progress=False)
    assert done.resumed_rows == 750
    _same_rows(local_result, out)


def test_without_a_scheduler_to_reach(corpus, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # the port is this test's, and nothing listens on it
        address = f"tcp://127.0.0.1:{taken.getsockname()[1]}"
        out = tmp_path / "o.pq"
        command = [str(BIN / "sudoku-pipeline"), "solve", str(corpus), "-o", str(out),
                   "--executor", "dask", "--scheduler", address]  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, timeout=RUN_S)
    assert run.returncode == 2
    assert run.stderr.strip().startswith("error: cannot reach the Dask scheduler")
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "o.pq.partial").exists()  # no checkpoint of nothing (issue 10, 26)
    assert not list(tmp_path.glob(".o.pq*"))  # nor a lock or a temporary file


# Issue 36: the workers read their own slices and keep their own parts; the client only plans,
# counts and joins. Slices are 4 batches here (1,000 rows): several a file, cut inside lines.


def refuse_on_the_client(monkeypatch, why: str, *methods: tuple[type, str]) -> None:
    """Fail a test whose run would call any of `methods` (a class, a method's name) in this
    process: what a run whose rows go through the client calls (`why`: which is failed)."""

    def refuse(self, *args):
        raise AssertionError(why)

    for owner, name in methods:
        monkeypatch.setattr(owner, name, refuse)


def run_with_a_worker_killed(
    args: list[Any], folder: Path, hold_job: str, slice_rows: int
) -> tuple[int, str]:
    """`sudoku-pipeline ARGS --quiet --executor dask --scheduler ...` on a real cluster of two
    worker processes, in slices of `slice_rows`; worker w0 holds `hold_job`'s first batch and
    is killed (kill -9) once it does. Returns the run's exit code and stderr."""
    log = folder / "run.log"
    with dask_cluster(folder / "cluster", hold_from_row={0: 0}, hold_job=hold_job) as cluster:
        command = [str(BIN / "sudoku-pipeline"), *map(str, args), "--quiet", "--executor",
                   "dask", "--scheduler", cluster.address]  # fmt: skip
        env = {**os.environ, "SUDOKU_PIPELINE_SLICE_ROWS": str(slice_rows)}
        with log.open("w") as err:
            run = subprocess.Popen(command, stderr=err, env=env)
        wait_for(cluster.held, "worker w0 to hold a batch", run, log)
        _stop(cluster.workers[0])
        return _finish(run, log)


def _no_part_through_the_client(monkeypatch) -> None:
    """Fail a test whose run would keep a part through the client (`Checkpoint.add`)."""
    from pipeline.run.checkpoint import Checkpoint

    def add(self, part):
        raise AssertionError("the client kept a part: the run was not sliced")

    monkeypatch.setattr(Checkpoint, "add", add)


def test_workers_read_csv_parquet_and_gz_themselves(corpus, local_result, tmp_path, monkeypatch):
    import gzip

    frame = pl.read_csv(corpus, infer_schema=False)
    parquet, gz, txt = tmp_path / "c.parquet", tmp_path / "c.csv.gz", tmp_path / "c.txt"
    frame.with_columns(pl.col("id").cast(pl.Int64)).write_parquet(parquet, row_group_size=300)
    gz.write_bytes(gzip.compress(corpus.read_bytes()))
    txt.write_text("# puzzles\n" + "\n".join(frame["puzzle"]) + "\n")
    _no_part_through_the_client(monkeypatch)
    with dask_cluster(tmp_path / "cluster") as cluster:
        for source in (corpus, parquet, gz, txt):
            out = tmp_path / f"{source.name}.solved.parquet"
            summary = solve_file(source, out, batch_size=250, executor="dask",
                                 scheduler=cluster.address, progress=False)  # fmt: skip
            assert summary.rows == 3000, source
            expected = pl.read_parquet(local_result).drop(TIMING)
            got = pl.read_parquet(out).drop(TIMING)
            if source == txt:  # no id, no solution to check
                expected = expected.drop("id", "expected_ok").with_columns(
                    pl.lit(None, pl.Boolean).alias("expected_ok"))  # fmt: skip
                expected = expected.select(got.columns)
            assert got.equals(expected), source


def test_a_task_run_twice_keeps_its_rows_once(corpus, local_result, tmp_path, monkeypatch):
    """Dask may run a slice twice (a worker it thought lost): its parts are kept twice, under
    two names (their timings differ); the output holds every row once."""
    import pipeline.run.sliced as sliced

    once = sliced.slice_task
    monkeypatch.setattr(sliced, "slice_task", lambda *a: (once(*a), once(*a))[1])
    _no_part_through_the_client(monkeypatch)
    out = tmp_path / "twice.parquet"
    summary = solve_file(
        corpus, out, batch_size=250, executor="dask", workers=2, progress=False
    )  # fmt: skip  (a LocalCluster of threads, here)
    assert summary.rows == 3000 and summary.verdicts["solved"] == 3000
    _same_rows(local_result, out)


def test_a_worker_without_the_shared_storage_is_refused_in_one_line(corpus, tmp_path):
    """Before any work: exit code 2, one line naming the worker, nothing left behind."""
    out, log = tmp_path / "out.parquet", tmp_path / "run.log"
    with dask_cluster(tmp_path / "cluster", apart=(1,)) as cluster:
        code, err = _finish(_start_run(corpus, out, cluster.address, log), log)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: the Dask worker at tcp://127.0.0.1:")
    assert "run.json" in err and "every worker must see" in err
    assert not out.exists() and not out.with_name(out.name + ".partial").exists()


def test_a_cluster_that_cannot_write_the_output_is_refused(corpus, tmp_path, monkeypatch):
    import pipeline.run.sliced as sliced
    from pipeline.errors import InputError

    monkeypatch.setattr(sliced, "check_storage", lambda *a: "cannot write in /x (Read-only)")
    out = tmp_path / "o.parquet"
    with pytest.raises(InputError, match="every worker must see"):
        solve_file(corpus, out, batch_size=250, executor="dask", workers=1, progress=False)
    assert not out.exists() and not (tmp_path / "o.parquet.partial").exists()


def test_a_client_killed_mid_run_resumes_on_the_cluster(corpus, local_result, tmp_path):
    """kill -9 of the client while a worker holds a slice and another is done: `--resume`
    keeps the slices done, does the others again, and the output is the local run's."""
    out, log = tmp_path / "out.parquet", tmp_path / "run.log"
    with dask_cluster(tmp_path / "cluster", hold_from_row={0: 1000}) as cluster:
        run = _start_run(corpus, out, cluster.address, log)
        noted = out.with_name(out.name + ".partial") / "counts.jsonl"
        wait_for(lambda: cluster.held() and noted.exists() and noted.read_text(),
                 "a slice held, another noted done", run, log)  # fmt: skip
        run.kill()
        run.wait()
    assert not out.exists()
    with dask_cluster(tmp_path / "cluster2") as cluster:
        done = solve_file(corpus, out, resume=True, batch_size=250, executor="dask",
                          scheduler=cluster.address, progress=False)  # fmt: skip
    assert 0 < done.resumed_rows < 3000 and done.rows == 3000
    assert done.verdicts["solved"] == 3000
    _same_rows(local_result, out)


def test_several_inputs_keep_their_rows_and_source(corpus, tmp_path, monkeypatch):
    lines = corpus.read_text().splitlines(keepends=True)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("".join(lines[:1001]))
    b.write_text("".join(lines[:1] + lines[1001:]))
    local = tmp_path / "local.parquet"
    solve_file([a, b], local, batch_size=100, workers=1, progress=False)
    _no_part_through_the_client(monkeypatch)
    out = tmp_path / "dask.parquet"
    solve_file([a, b], out, batch_size=100, executor="dask", workers=2, progress=False)
    _same_rows(local, out)
    assert pl.read_parquet(out)["source"].cast(pl.String).value_counts(sort=True).rows() == [
        (str(b), 2000),
        (str(a), 1000),
    ]


def test_score_on_workers_that_read_their_slices(corpus, tmp_path, monkeypatch):
    from pipeline.jobs.score.job import score_file

    frame = pl.read_csv(corpus, infer_schema=False)
    wrong = pl.int_range(pl.len()) % 7 == 0
    frame = frame.with_columns(
        prediction=pl.when(wrong).then(pl.col("puzzle")).otherwise(pl.col("solution"))
    )
    source = tmp_path / "predictions.csv"
    frame.write_csv(source)
    local = score_file(source, tmp_path / "local.parquet", batch_size=100, workers=1,
                       progress=False)  # fmt: skip
    _no_part_through_the_client(monkeypatch)
    out = tmp_path / "dask.parquet"
    summary = score_file(source, out, batch_size=100, executor="dask", workers=2,
                         progress=False)  # fmt: skip
    assert pl.read_parquet(out).equals(pl.read_parquet(tmp_path / "local.parquet"))
    from dataclasses import asdict

    run = {"output", "wall_s", "rows_per_s", "workers", "metadata"}
    figures = {k: v for k, v in asdict(summary).items() if k not in run}
    assert figures == {k: v for k, v in asdict(local).items() if k not in run}
    assert figures["rows"] == 3000


class _Stop(BaseException):
    """What an injected fault raises (a BaseException: nothing on the way catches it)."""


@pytest.mark.parametrize("at", [1, 4, 9])  # a part's data, its journal line, later ones
def test_a_sliced_join_stopped_is_continued_by_resume_on_dask(
    corpus, local_result, tmp_path, monkeypatch, at
):
    """The client stopped while joining (as a kill would): `--resume` on the cluster finds
    every slice done, joins the rest, and the output is the local run's, every row once."""
    from pipeline.run import join

    real, calls = join.durable, [0]

    def durable(f):
        calls[0] += 1
        if calls[0] == at:
            raise _Stop
        real(f)

    out = tmp_path / "out.parquet"
    monkeypatch.setattr(join, "durable", durable)
    with pytest.raises(_Stop):
        solve_file(corpus, out, batch_size=250, executor="dask", workers=2, progress=False)
    monkeypatch.setattr(join, "durable", real)
    done = solve_file(corpus, out, resume=True, batch_size=250, executor="dask", workers=2,
                      progress=False)  # fmt: skip
    assert done.resumed_rows == 3000 and done.verdicts["solved"] == 3000
    _same_rows(local_result, out)


def test_resume_with_another_batch_size_does_the_slices_again(
    corpus, local_result, tmp_path, monkeypatch
):
    """A checkpoint whose parts do not tile the slices of the resumed run (a local run's, in
    batches of 250; resumed on Dask in batches of 100): its parts are deleted and the slices
    done again, no row twice."""
    from pipeline.run import join

    def stop(f):
        raise _Stop

    out = tmp_path / "out.parquet"
    monkeypatch.setattr(join, "durable", stop)
    with pytest.raises(_Stop):  # every part kept, the join stopped at its first copy
        solve_file(corpus, out, batch_size=250, workers=1, progress=False)
    monkeypatch.undo()
    assert len(list(out.with_name(out.name + ".partial").glob("part-*"))) == 12
    done = solve_file(corpus, out, resume=True, batch_size=100, executor="dask", workers=2,
                      progress=False)  # fmt: skip
    assert done.resumed_rows < 3000 and done.verdicts["solved"] == 3000
    _same_rows(local_result, out)


# Augment on Dask, to Parquet: the workers read their slices and keep their parts at their
# input places; the client places them in order and joins them. Rows 300-449 are not puzzles:
# whole batches of 50 left out (parts of no rows).

RUN_ONLY = {"wall_s", "rows_per_s", "started_at", "executor", "scheduler", "workers", "cpu"}


@pytest.fixture(scope="module")
def augment_input(corpus, tmp_path_factory) -> Path:
    frame = pl.read_csv(corpus, infer_schema=False).head(1200)
    bad = pl.int_range(pl.len()).is_between(300, 449) | (pl.int_range(pl.len()) % 13 == 0)
    frame = frame.with_columns(puzzle=pl.when(bad).then(pl.lit("1" * 81)).otherwise("puzzle"))
    path = tmp_path_factory.mktemp("augment") / "a.csv"
    frame.write_csv(path)
    return path


@pytest.fixture(scope="module")
def augment_local(augment_input, tmp_path_factory):
    from pipeline.jobs.augment.job import augment_file

    out = tmp_path_factory.mktemp("augment-local") / "local.parquet"
    summary = augment_file(augment_input, out, copies=3, seed=5, batch_size=50, workers=1,
                           progress=False)  # fmt: skip
    return out, summary


def _no_part_through_the_client_writer(monkeypatch) -> None:
    """Fail a test whose augment run would join parts on the client (`PartWriter.add`)."""
    from pipeline.io.writers import PartWriter

    def add(self, data, rows):
        raise AssertionError("the client wrote a part: the run was not sliced")

    _no_part_through_the_client(monkeypatch)
    monkeypatch.setattr(PartWriter, "add", add)


def _same_augment(local, out: Path, summary) -> None:
    from dataclasses import asdict

    import pyarrow.parquet as pq

    expected, made = local
    assert pl.read_parquet(out).equals(pl.read_parquet(expected))
    run = {"output", "wall_s", "rows_per_s", "workers", "metadata", "input"}
    figures = {k: v for k, v in asdict(summary).items() if k not in run}
    assert figures == {k: v for k, v in asdict(made).items() if k not in run}
    assert sum(figures["left_out"].values()) > 150 and figures["copies"] > 2000
    meta = [json.loads(pq.read_schema(p).metadata[b"sudoku_pipeline"]) for p in (expected, out)]
    assert [{k: v for k, v in m.items() if k not in RUN_ONLY | {"input"}} for m in meta] == [
        {k: v for k, v in meta[0].items() if k not in RUN_ONLY | {"input"}}
    ] * 2
    assert not out.with_name(out.name + ".partial").exists()


def test_augment_on_workers_that_read_their_slices(augment_input, augment_local, tmp_path,
                                                   monkeypatch):  # fmt: skip
    from pipeline.jobs.augment.job import augment_file

    parquet = tmp_path / "a.parquet"
    frame = pl.read_csv(augment_input, infer_schema=False)
    frame.with_columns(pl.col("id").cast(pl.Int64)).write_parquet(parquet, row_group_size=170)
    expected = pl.read_parquet(augment_local[0])
    _no_part_through_the_client_writer(monkeypatch)
    with dask_cluster(tmp_path / "cluster") as cluster:
        for source in (augment_input, parquet):
            out = tmp_path / f"{source.name}.augmented.parquet"
            summary = augment_file(source, out, copies=3, seed=5, batch_size=50,
                                   executor="dask", scheduler=cluster.address,
                                   progress=False)  # fmt: skip
            if source == augment_input:
                _same_augment(augment_local, out, summary)
            else:  # its id column is a number
                assert pl.read_parquet(out).drop("id").equals(expected.drop("id"))
                assert summary.copies == augment_local[1].copies


def test_augment_task_run_twice_keeps_its_rows_once(augment_input, augment_local, tmp_path,
                                                   monkeypatch):  # fmt: skip
    import pipeline.run.sliced as sliced
    from pipeline.jobs.augment.job import augment_file

    once = sliced.slice_task
    monkeypatch.setattr(sliced, "slice_task", lambda *a: (once(*a), once(*a))[1])
    _no_part_through_the_client_writer(monkeypatch)
    out = tmp_path / "twice.parquet"
    summary = augment_file(augment_input, out, copies=3, seed=5, batch_size=50,
                           executor="dask", workers=2, progress=False)  # fmt: skip
    _same_augment(augment_local, out, summary)


def test_augment_stopped_on_dask_leaves_nothing(augment_input, tmp_path, monkeypatch):
    """Augment does not resume: stopped while joining, it leaves no output and no parts."""
    from pipeline.jobs.augment.job import augment_file
    from pipeline.run import join

    def stop(f):
        raise _Stop

    out = tmp_path / "out.parquet"
    monkeypatch.setattr(join, "durable", stop)
    with pytest.raises(_Stop):
        augment_file(augment_input, out, copies=3, seed=5, batch_size=50, executor="dask",
                     workers=2, progress=False)  # fmt: skip
    assert not out.exists() and not out.with_name(out.name + ".partial").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name != "a.csv"]


# Issue 36: `-o DIR/`, a Parquet dataset folder: the parts the workers kept become its files.


def _cli(*args: str) -> subprocess.CompletedProcess:
    command = [str(BIN / "sudoku-pipeline"), *args, "--quiet"]
    return subprocess.run(command, capture_output=True, text=True, timeout=RUN_S)


def _same_dataset(local: Path, folder: Path) -> None:
    """The folder reads as the local run's table (timing aside), by polars and pyarrow."""
    import pyarrow.dataset

    expected = pl.read_parquet(local).drop(TIMING, strict=False)
    by_glob = pl.scan_parquet(f"{folder}/*.parquet").collect()
    assert by_glob.drop(TIMING, strict=False).equals(expected)
    read = pl.from_arrow(pyarrow.dataset.dataset(folder, format="parquet").to_table())
    assert read.drop(TIMING, strict=False).equals(
        expected
    )  # _manifest.json skipped, the files in order
    manifest = json.loads((folder / "_manifest.json").read_text())
    names = sorted(p.name for p in folder.glob("*.parquet"))
    assert [f["file"] for f in manifest["files"]] == names
    assert manifest["rows"] == sum(f["rows"] for f in manifest["files"]) == expected.height
    import pyarrow.parquet as pq

    from pipeline.io.runinfo import METADATA_KEY

    footer = json.loads(pq.read_metadata(local).metadata[METADATA_KEY])
    assert manifest["metadata"].keys() == footer.keys()  # what a single file's footer records
    assert manifest["metadata"]["command"] == footer["command"]
    assert not list(folder.parent.glob(f"{folder.name}.partial"))  # the checkpoint removed
    assert not list(folder.parent.glob(f".{folder.name}.*"))  # no temporary folder, no lock


def test_a_dataset_folder_reads_as_the_local_table(corpus, local_result, tmp_path):
    folder = tmp_path / "ds"
    with dask_cluster(tmp_path / "cluster") as cluster:
        on = ("--executor", "dask", "--scheduler", cluster.address, "--batch-size", "250")
        run = _cli("solve", str(corpus), "-o", f"{folder}/", *on)
        assert run.returncode == 0, run.stderr
        assert len(list(folder.glob("*.parquet"))) > 4  # several slices, several files
        _same_dataset(local_result, folder)
        again = _cli("solve", str(corpus), "-o", f"{folder}/", *on)  # its own: replaced
        assert again.returncode == 0, again.stderr
        _same_dataset(local_result, folder)
        forced = tmp_path / "forced"
        forced.mkdir()
        (forced / "old.parquet").write_bytes(b"not ours")
        refused = _cli("solve", str(corpus), "-o", f"{forced}/", *on)
        assert refused.returncode == 2
        assert refused.stderr.startswith("error: ") and "--force" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert (forced / "old.parquet").read_bytes() == b"not ours"
        run = _cli("solve", str(corpus), "-o", f"{forced}/", *on, "--force")
        assert run.returncode == 0, run.stderr
        _same_dataset(local_result, forced)


def test_a_dataset_folder_of_other_files_is_refused_even_with_force(corpus, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    run = _cli("solve", str(corpus), "-o", f"{folder}/", "--executor", "dask", "--force")
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "will not delete it" in run.stderr
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_dataset_folder_on_the_local_executor(corpus, local_result, tmp_path):
    """solve and score keep their parts in a checkpoint on one machine too: the same folder;
    augment does not (its parts are joined as they come): refused in one line."""
    folder = tmp_path / "ds"
    run = _cli("solve", str(corpus), "-o", f"{folder}/", "--batch-size", "700")
    assert run.returncode == 0, run.stderr
    _same_dataset(local_result, folder)
    refused = _cli("augment", str(local_result), "-o", f"{tmp_path / 'aug'}/")
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "--executor dask" in refused.stderr and "Traceback" not in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no folder, lock or checkpoint


def test_a_dataset_commit_stopped_is_finished_by_resume(corpus, local_result, tmp_path,
                                                       monkeypatch):  # fmt: skip
    """Stopped as the folder is put in place: no folder, nothing beside it but the
    checkpoint, whole (the parts are linked, not moved); `--resume` makes the folder."""
    from pipeline.run import dataset_output

    def stop(tmp, folder):
        raise _Stop

    folder = tmp_path / "ds"
    monkeypatch.setattr(dataset_output, "put_in_place", stop)
    with pytest.raises(_Stop):
        solve_file(corpus, f"{folder}/", batch_size=250, executor="dask", workers=2,
                   progress=False)  # fmt: skip
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.partial"]
    done = solve_file(corpus, f"{folder}/", resume=True, batch_size=250, executor="dask",
                      workers=2, progress=False)  # fmt: skip
    assert done.resumed_rows == 3000 and done.verdicts["solved"] == 3000
    _same_dataset(local_result, folder)


def test_score_to_a_dataset_folder(corpus, tmp_path, monkeypatch):
    from pipeline.jobs.score.job import score_file

    frame = pl.read_csv(corpus, infer_schema=False).with_columns(prediction=pl.col("solution"))
    source = tmp_path / "predictions.csv"
    frame.write_csv(source)
    local = tmp_path / "local.parquet"
    score_file(source, local, batch_size=100, workers=1, progress=False)
    _no_part_through_the_client(monkeypatch)
    folder = tmp_path / "scored"
    summary = score_file(source, f"{folder}/", batch_size=100, executor="dask", workers=2,
                         progress=False)  # fmt: skip
    assert summary.rows == 3000
    _same_dataset(local, folder)


def test_augment_to_a_dataset_folder(augment_input, augment_local, tmp_path, monkeypatch):
    """Copies a worker alone knows the count of, batches all left out (parts of no rows)."""
    from pipeline.jobs.augment.job import augment_file

    _no_part_through_the_client_writer(monkeypatch)
    folder = tmp_path / "augmented"
    summary = augment_file(augment_input, f"{folder}/", copies=3, seed=5, batch_size=50,
                           executor="dask", workers=2, progress=False)  # fmt: skip
    assert summary.copies == augment_local[1].copies
    _same_dataset(augment_local[0], folder)

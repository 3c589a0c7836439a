"""`-` as an input: standard input, its format sniffed from its bytes, read once, streamed; and
the other streams read the same way: a named pipe, `/dev/stdin`, `<(...)` (`/dev/fd/N`)."""

import gzip
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import InputError
from pipeline.io.opening import open_dataset
from tests.conftest import COMMAND, assert_one_line_error, command, linux_only

P1 = "004300209005009001070060043006002087190007400050083000600000105003508690042910300"
S1 = "864371259325849761971265843436192587198657432257483916689734125713528694542916378"
P2 = "040100050107003960520008000000000017000906800803050620090060543600080700250097100"
S2 = "346179258187523964529648371965832417472916835813754629798261543631485792254397186"


class Pipe(io.RawIOBase):
    """A pipe of `lines` repeated `times`, made as it is read; counts the bytes read."""

    def __init__(self, data: bytes, times: int = 1) -> None:
        self.data, self.left, self.taken, self.at = data, times, 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.at == len(self.data):
            if self.left <= 1:
                return 0
            self.left, self.at = self.left - 1, 0
        n = min(len(buffer), len(self.data) - self.at)
        buffer[:n] = self.data[self.at : self.at + n]
        self.at += n
        self.taken += n
        return n


def stdin(monkeypatch, data: bytes | io.RawIOBase) -> None:
    """Make `data` standard input (its `.buffer`, as `sys.stdin.buffer` is read)."""
    raw = data if isinstance(data, io.RawIOBase) else io.BytesIO(data)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(raw)))


def parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def compress(data: bytes, compression: str | None) -> bytes:
    if compression is None:
        return data
    return gzip.compress(data) if compression == "gzip" else pa.compress(data, "zstd", asbytes=True)


SHAPES = {
    "csv": f"id,puzzle,solution\n1,{P1},{S1}\n2,{P2},{S2}\n".encode(),
    "tsv": f"id\tpuzzle\tsolution\n1\t{P1}\t{S1}\n2\t{P2}\t{S2}\n".encode(),
    "txt": f"# two puzzles\n{P1}\n\n{P2}\n".encode(),
    "parquet": parquet(pa.table({"id": [1, 2], "puzzle": [P1, P2], "solution": [S1, S2]})),
}


def read_all(ds) -> dict[str, list]:
    return pa.Table.from_batches(list(ds.batches()), schema=ds.schema).to_pydict()


@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
@pytest.mark.parametrize("fmt", list(SHAPES))
def test_every_format_is_sniffed_from_the_bytes(monkeypatch, fmt, compression):
    stdin(monkeypatch, compress(SHAPES[fmt], compression))

    ds = open_dataset("-")

    assert (ds.path, ds.from_stdin, ds.format, ds.compression) == (
        Path("-"), True, fmt, compression,
    )  # fmt: skip
    assert (ds.size_bytes, ds.estimated_rows()) == (0, 2 if fmt == "parquet" else None)
    data = read_all(ds)
    assert data["puzzle"] == [P1, P2]
    if fmt != "txt":
        assert data["id"] == [1, 2] and data["solution"] == [S1, S2]


def test_a_one_column_csv_with_a_header_is_csv_and_plain_lines_are_text(monkeypatch):
    stdin(monkeypatch, f"quizzes\n{P1}\n".encode())
    ds = open_dataset("-")
    assert (ds.format, ds.has_header) == ("csv", True)
    assert read_all(ds)["puzzle"] == [P1]
    stdin(monkeypatch, f"{P1}\n{P2}\n".encode())
    assert open_dataset("-").format == "txt"


def test_the_format_can_be_forced(monkeypatch):
    stdin(monkeypatch, f"{P1},{S1}\n".encode())
    assert open_dataset("-").format == "csv"
    stdin(monkeypatch, f"{P1},{S1}\n".encode())
    ds = open_dataset("-", format="txt")  # then the whole line is the puzzle: malformed
    assert read_all(ds)["puzzle"] == [f"{P1},{S1}"]
    stdin(monkeypatch, f"{P1}\n".encode())
    with pytest.raises(InputError, match="^standard input: not a Parquet file$"):
        open_dataset("-", format="parquet")
    stdin(monkeypatch, gzip.compress(SHAPES["parquet"]))
    with pytest.raises(InputError, match="standard input: is a Parquet file, not text"):
        open_dataset("-", format="csv")


def test_standard_input_is_read_once(monkeypatch):
    stdin(monkeypatch, SHAPES["csv"])
    ds = open_dataset("-")
    assert len(read_all(ds)["row"]) == 2
    with pytest.raises(InputError, match="standard input can be read once only"):
        list(ds.batches())


def test_text_streams_through_in_bounded_memory(monkeypatch):
    pipe = Pipe(f"{P1},{S1}\n".encode() * 10_000, times=40)  # 66 MB, made as it is read
    stdin(monkeypatch, pipe)
    ds = open_dataset("-", batch_size=1000)
    batches = ds.batches()
    next(batches)
    assert pipe.taken < 4 << 20  # the sniffed MiB, a read or two, buffering: not the 66 MB
    assert 1000 + sum(b.num_rows for b in batches) == 400_000


def test_parquet_goes_through_a_temporary_file(monkeypatch):
    table = pa.table({"puzzle": [P1, P2] * 5000, "level": list(range(10_000))})
    stdin(monkeypatch, parquet(table))
    ds = open_dataset("-", batch_size=3000)
    assert ds.num_rows == 10_000
    assert read_all(ds)["level"] == list(range(10_000))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "standard input: not a text file"),
        (gzip.compress(b"x" * 100, mtime=0)[:20], "standard input: cannot read"),
        (b"PAR1 and then no Parquet", "standard input: not a Parquet file"),
    ],
)
def test_bad_bytes_are_one_error(monkeypatch, data, message):
    stdin(monkeypatch, data)
    with pytest.raises(InputError, match=message):
        read_all(open_dataset("-"))


def test_empty_standard_input_has_no_rows(monkeypatch):
    stdin(monkeypatch, b"")
    ds = open_dataset("-")
    assert (ds.format, ds.num_rows, list(ds.batches())) == ("txt", 0, [])


# --- other streams, and a closed standard input: the program itself ---------------------------


def finish_or_stop(run: subprocess.Popen, seconds: float = 60) -> tuple[str, str]:
    """The output of a run that should end by itself; fails (after SIGTERM, then SIGKILL to
    its process group) when it does not."""
    try:
        return run.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGTERM)
        try:
            run.communicate(timeout=10)
            pytest.fail(f"still running after {seconds} s; SIGTERM ended it")
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            pytest.fail(f"still running after {seconds} s, and SIGTERM did not end it")


def start(*args: object) -> subprocess.Popen:
    return subprocess.Popen([*COMMAND, *(str(a) for a in args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def blocked_in_a_pipe(pid: int) -> bool:
    """Whether the process sleeps in a FIFO's open (waiting for a writer) or a pipe's read."""
    try:
        where = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False
    return "partner" in where or "pipe" in where


@linux_only
@pytest.mark.parametrize("name", ["puzzles", "puzzles.csv"])
def test_a_named_pipe_is_read_as_it_is_written(tmp_path, name):
    """`mkfifo p; producer > p & sudoku-pipeline solve p -o out.parquet`: the format is sniffed
    (or taken from the name), the pipe opened once and read as a stream, as `-` is."""
    corpus, fifo, out = tmp_path / "corpus.csv", tmp_path / name, tmp_path / "out.parquet"
    corpus.write_bytes(SHAPES["csv"])
    os.mkfifo(fifo)
    producer = subprocess.Popen(["sh", "-c", f'cat "{corpus}" > "{fifo}"'])
    try:
        run = start("solve", fifo, "-o", out, "-q")
        _, stderr = finish_or_stop(run)
    finally:
        producer.kill()
        producer.wait()

    assert run.returncode == 0, stderr
    solved = pq.read_table(out).to_pydict()
    assert (solved["id"], solved["solution"]) == ([1, 2], [S1, S2])


@linux_only
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("writer", ["nobody writes", "the writer stalls"])
def test_a_named_pipe_that_gives_nothing_yields_to_ctrl_c_and_sigterm(tmp_path, writer, how):
    fifo = tmp_path / "puzzles.csv"
    os.mkfifo(fifo)
    producer = None
    if writer == "the writer stalls":  # opens the pipe, writes nothing, keeps it open
        producer = subprocess.Popen(["sh", "-c", f'exec sleep 600 > "{fifo}"'])
    run = start("solve", fifo, "-o", tmp_path / "out.parquet")
    try:
        deadline = time.monotonic() + 60
        while not blocked_in_a_pipe(run.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        if how == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)
        else:
            os.kill(run.pid, signal.SIGTERM)
        _, stderr = finish_or_stop(run, 20)
    finally:
        if producer is not None:
            producer.kill()
            producer.wait()

    assert run.returncode == 130, stderr
    assert_one_line_error(stderr, "interrupted")
    assert sorted(os.listdir(tmp_path)) == ["puzzles.csv"]


@linux_only
@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")
def test_dev_stdin_and_process_substitution_are_read_as_dash_is(tmp_path):
    corpus = tmp_path / "corpus.csv"
    corpus.write_bytes(SHAPES["csv"])
    program = " ".join(COMMAND)
    runs = {
        "piped.csv": f'cat "{corpus}" | {program} solve /dev/stdin -o "{tmp_path}/piped.csv" -q',
        "substituted.csv": f'{program} solve <(cat "{corpus}") -o "{tmp_path}/substituted.csv" -q',
        "stdout": f'cat "{corpus}" | {program} solve /dev/stdin -q --format csv',  # as for -
    }
    for name, line in runs.items():
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{name}: {done.stderr}"
        text = done.stdout if name == "stdout" else (tmp_path / name).read_text()
        assert text.count("solved") == 2, f"{name}: {text}"
    # a file on standard input is a file: its name says no format, so the line says what to do
    redirected = f'{program} solve /dev/stdin -o "{tmp_path}/redirected.csv" < "{corpus}"'
    done = subprocess.run(["bash", "-c", redirected], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert_one_line_error(done.stderr, "/dev/stdin: standard input", "give -")


@linux_only
def test_a_closed_standard_input_is_one_line(tmp_path):
    """`sudoku-pipeline solve - <&-`"""
    done = command("solve", "-", "-o", tmp_path / "out.csv", preexec_fn=lambda: os.close(0))

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, "standard input", "closed")
    assert os.listdir(tmp_path) == []

"""Bad bytes never stop a run and never lose a row (issue 10): the readers under fuzzing.

Random bytes, and good CSV, text and Parquet inputs with random damage, go through what `solve`
does with an input (open, stream the batches, solve each). The promise: either one `InputError`
(exit code 2 at the command line) or every row out, never a traceback. "Every row" is counted
here from the bytes, by the rules of `pipeline/io/lines.py`: a CSV row is a non-empty line
(`\\n`, `\\r\\n` or `\\r` end a line) after the header; a text row is a line that is neither
blank nor a `#` comment; a Parquet row is what its footer counts.
"""

import re
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.io.dataset import open_dataset
from pipeline.io.lines import cells, split_fields
from pipeline.solving.batch import SolveOptions, solve_record_batch

P1 = "004300209005009001070060043006002087190007400050083000600000105003508690042910300"
S1 = "864371259325849761971265843436192587198657432257483916689734125713528694542916378"
P2 = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"

GOOD = {
    "csv": f"id,puzzle,solution,source\n1,{P1},{S1},a\n2,{P2},,b\n3,{P1},{S1},\n".encode(),
    "txt": f"# hard ones\n{P2}\n\n{P1}\n  # indented\n{P2}\n".encode(),
}
_sink = pa.BufferOutputStream()
pq.write_table(pa.table({"puzzle": [P1, P2, P1], "difficulty": [1.0, 9.5, None]}), _sink)
GOOD["parquet"] = _sink.getvalue().to_pybytes()

# Bytes that readers trip over: quotes, separators, line ends, NUL, not UTF-8, comments, BOM.
NASTY = [b'"', b",", b"\t", b"\n", b"\r", b"\r\n", b"\x00", b"\xff", b"\xe9", b"#", b" ",
         b"\x1f", b"\xef\xbb\xbf", b'""', b"PAR1"]  # fmt: skip
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with a few bytes inserted, deleted or overwritten."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(out)))
        piece = draw(st.one_of(st.sampled_from(NASTY), st.binary(min_size=1, max_size=3)))
        action = draw(st.sampled_from(["insert", "delete", "overwrite"]))
        if action == "insert":
            out[at:at] = piece
        elif action == "delete":
            del out[at : at + len(piece)]
        else:
            out[at : at + len(piece)] = piece
    return bytes(out)


def rows_in(data: bytes, fmt: str, has_header: bool) -> int:
    """How many rows the bytes hold, by the documented rules (not by the reader's code)."""
    lines = re.split(rb"\r\n|\r|\n", data.removeprefix(b"\xef\xbb\xbf"))
    if fmt == "txt":
        blank_or_comment = re.compile(rb"[ \t\x0b\x0c]*(#.*)?", re.DOTALL)
        return sum(1 for line in lines if not blank_or_comment.fullmatch(line))
    return sum(1 for line in lines if line) - has_header


def solve_all(path: Path, **options) -> int | None:
    """Rows out of solving `path` as the solve job does, or None after one `InputError`."""
    try:
        ds = open_dataset(path, batch_size=2, **options)
        tables = [solve_record_batch(b, SolveOptions(max_nodes=500)) for b in ds.batches()]
    except InputError as e:
        assert "\n" not in str(e)
        return None
    rows = sum(t.num_rows for t in tables)
    if tables:
        table = pa.concat_tables(tables)
        assert table.column("row").to_pylist() == list(range(rows))
        verdicts = table.column("verdict").to_pylist()
        errors = table.column("error").to_pylist()
        assert None not in verdicts
        assert all(e is not None for v, e in zip(verdicts, errors, strict=True) if v == "malformed")
    if ds.format == "parquet":
        assert rows == ds.num_rows
    else:
        assert rows == rows_in(path.read_bytes(), ds.format, ds.has_header)
    return rows


def check(data: bytes, name: str) -> int | None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        return solve_all(path)


@FUZZ
@given(damaged(GOOD["csv"]))
def test_damaged_csv(data):
    check(data, "x.csv")


@FUZZ
@given(damaged(GOOD["txt"]))
def test_damaged_text(data):
    check(data, "x.txt")


@FUZZ
@given(damaged(GOOD["parquet"]))
def test_damaged_parquet(data):
    check(data, "x.parquet")


@FUZZ
@given(st.binary(max_size=400), st.sampled_from(["x.csv", "x.tsv", "x.txt", "x.parquet"]))
def test_random_bytes(data, name):
    check(data, name)


def test_undamaged_inputs_give_every_row():
    assert [check(GOOD[f], f"x.{f}") for f in ("csv", "txt", "parquet")] == [3, 3, 3]


def no_line_break(line: bytes) -> bytes:
    return line.replace(b"\n", b"").replace(b"\r", b"")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=12).map(no_line_break), max_size=8).filter(all),
    st.sampled_from([",", ";", "\t"]),
)
def test_the_vectorized_split_agrees_with_the_csv_rules_line_by_line(lines, delimiter):
    got = cells(pa.array(lines, pa.binary()), delimiter, [0, 1, 3])
    for k, i in enumerate([0, 1, 3]):
        want = []
        for line in lines:
            fields = split_fields(line, delimiter)
            want.append((fields[i] or None) if i < len(fields) else None)
        assert got[k].to_pylist() == want


# --- end to end, through the command --------------------------------------------------------


def solve_command(path: Path) -> tuple[int, str]:
    out = path.with_name("out.parquet")
    result = CliRunner().invoke(app, ["solve", str(path), "-o", str(out), "-q", "--workers", "1"])
    assert result.exit_code in (0, 2), result.output
    for word in ("Traceback", "Exception ignored", "Error:"):
        assert word not in result.output, result.output
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        return 2, result.stderr
    return 0, str(pq.read_metadata(out).num_rows)


LONG = b"x" * (3 << 20)
BAD_ROWS = {  # the reproductions of issue 10, items 5, 7, 8 and 14
    "not-utf8-extra-field.csv": f"puzzle,solution\n{P1},{S1}\n".encode()
    + f"\xe9{P1},{S1},extra\n".encode("latin-1")
    + f"{P1},{S1}\n".encode(),
    "long-line.csv": f"puzzle\n{P1}\n".encode() * 12_000 + LONG + f"\n{P1}\n".encode(),
    "unbalanced-quote.csv": f'puzzle,solution\n{P1},{S1}\n"{P1},{S1}\n'.encode()
    + f"{P1},{S1}\n".encode() * 20_000,
    "garbage-line.txt": f"{P1}\n".encode() * 20_000 + b'\x1f\xff\xfe,"\x1f\n' + P1.encode(),
}


@pytest.mark.parametrize("name", list(BAD_ROWS))
def test_bad_rows_are_rows_at_the_command_line(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(BAD_ROWS[name])
    fmt = "txt" if name.endswith(".txt") else "csv"
    assert solve_command(path) == (0, str(rows_in(BAD_ROWS[name], fmt, True)))


def test_garbage_named_txt_is_one_line_at_the_command_line(tmp_path):
    path = tmp_path / "garbage.txt"
    path.write_bytes(bytes(range(1, 256)) * 20)  # no NUL byte, not text either
    code, stderr = solve_command(path)
    assert code == 2 and "garbage.txt: not a text file" in stderr


@settings(FUZZ, max_examples=3)
@given(damaged(GOOD["csv"]))
def test_damaged_csv_at_the_command_line(tmp_path, data):
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    code, rows = solve_command(path)
    if code == 0:
        assert rows == str(solve_all(path))

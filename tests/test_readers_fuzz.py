"""Bad bytes never stop a run and never lose a row (issue 10): the readers under fuzzing.

Random bytes, and good CSV, text, gzip and Parquet inputs with random damage, go through what
`solve` does with an input (open, stream the batches, solve each). The promise: either one
`InputError` (exit code 2 at the command line) or every row out, never a traceback. "Every row"
is counted here from the bytes, by the rules of `pipeline/io/lines.py`: a CSV row is a non-empty
line (`\\n`, `\\r\\n` or `\\r` end a line) after the header; a text row is a line that is
neither blank nor a `#` comment; a Parquet row is what its footer counts.

Refusing a file is right only when its damage makes it unreadable as a whole; a damaged row must
come out as a row (`malformed`, with a message), so a refusal of anything else is counted as a
failure: a reader that refused every damaged file would otherwise pass. The oracle, per kind of
damage, decided from the damaged bytes and the undamaged original, never from the reader's code
(`refusal_allowed`):

* text (CSV, `.txt`) whose first bytes are another format's magic (gzip, zstd, Parquet): it is
  that format under a wrong name; refusing is right.
* CSV whose first line no longer names the puzzle column: the header that says how to read
  every row is gone, and the reader is left to guess the column from the content of three rows,
  some of them perhaps damaged too; refusing is fair.
* any other damage to text (a NUL, bytes that are not UTF-8, a stray quote or line break, a row
  cut short or run together with the next): damaged rows; refusing the file is a failure. Rows
  whose line is untouched read as they did before the damage (their verdicts).
* Parquet whose first four bytes or footer (metadata, its length, the closing magic) changed: what
  says where the rows are is gone; refusing is right. Whatever else changed, refusing is right
  exactly when pyarrow itself cannot read the whole table (a page that no longer decodes: inside
  a compressed page there are no row boundaries to recover); when it can, every row comes out.
* gzip that is not gzip members back to back and nothing else (RFC 1952, `gunzip`): a broken
  stream; refusing is right. When it is (damage in the header's time stamp, say), every row of
  the text inside comes out. (`gzip -d` and Python's `gzip` also take zero bytes after the last
  member, as padding; the reader does not, and need not.)
"""

import csv
import gzip
import re
import tempfile
import zlib
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.io.lines import cells, split_fields
from pipeline.io.opening import open_dataset
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch

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
GOOD["csv.gz"] = gzip.compress(GOOD["csv"], mtime=0)

# Bytes that readers trip over: quotes, separators, line ends, NUL, not UTF-8, comments, BOM.
NASTY = [b'"', b",", b"\t", b"\n", b"\r", b"\r\n", b"\x00", b"\xff", b"\xe9", b"#", b" ",
         b"\x1f", b"\xef\xbb\xbf", b'""', b"PAR1"]  # fmt: skip
MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"PAR1")  # gzip, zstd, Parquet
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


def lines_of(data: bytes) -> list[bytes]:
    """The lines of a text by the documented rules (not by the reader's code), empty ones kept."""
    return re.split(rb"\r\n|\r|\n", data.removeprefix(b"\xef\xbb\xbf"))


def row_lines(data: bytes, fmt: str, has_header: bool) -> list[bytes]:
    """The lines of a text that are rows, in order."""
    if fmt == "txt":
        blank_or_comment = re.compile(rb"[ \t\x0b\x0c]*(#.*)?", re.DOTALL)
        return [line for line in lines_of(data) if not blank_or_comment.fullmatch(line)]
    return [line for line in lines_of(data) if line][int(has_header) :]


def rows_in(data: bytes, fmt: str, has_header: bool) -> int:
    """How many rows the bytes hold, by the documented rules (not by the reader's code)."""
    return len(row_lines(data, fmt, has_header))


def names_the_puzzle_column(header: bytes) -> bool:
    fields = next(csv.reader([header.decode("latin-1")]), [])
    return any(f.strip().lower() == "puzzle" for f in fields)


def refusal_allowed(data: bytes, kind: str) -> str | None:
    """Why refusing the damaged `data` as a whole is right (the oracle of the module docstring),
    or None: its damage is to rows, which must come out."""
    if kind == "csv.gz":
        text = gunzip(data)
        return "a broken gzip stream" if text is None else refusal_allowed(text, "csv")
    if kind == "parquet":
        good = GOOD["parquet"]
        footer = good[-(int.from_bytes(good[-8:-4], "little") + 8) :]
        if not (data.startswith(b"PAR1") and data.endswith(footer)):
            return "the leading magic or the footer is damaged"
        if not pyarrow_reads_whole(data):
            return "pyarrow cannot read the whole table"
        return None
    if data.startswith(MAGIC):
        return "another format's magic bytes"
    if kind == "csv":
        first = next((line for line in lines_of(data) if line), b"")
        if not names_the_puzzle_column(first):
            return "the header no longer names the puzzle column"
    return None


def gunzip(data: bytes) -> bytes | None:
    """The text of gzip members back to back (each checked against its CRC and length), or None
    when the bytes are anything else: cut short, damaged, or followed by other bytes."""
    text, rest = [], data
    while rest:
        member = zlib.decompressobj(wbits=31)  # one gzip member
        try:
            text.append(member.decompress(rest))
        except zlib.error:
            return None
        if not member.eof:
            return None
        rest = member.unused_data
    return b"".join(text)


def pyarrow_reads_whole(data: bytes) -> bool:
    """Whether pyarrow reads every row of a Parquet file, as many as its footer counts."""
    try:
        source = pa.BufferReader(data)
        return pq.read_table(source).num_rows == pq.ParquetFile(source).metadata.num_rows
    except Exception:  # noqa: BLE001 - whatever pyarrow raises on damage
        return False


def solve_all(path: Path, **options) -> list[str] | None:
    """The verdicts of solving `path` as the solve job does, row by row, or None after one
    `InputError`."""
    try:
        ds = open_dataset(path, batch_size=2, **options)
        tables = [solve_record_batch(b, SolveOptions(max_nodes=500)) for b in ds.batches()]
    except InputError as e:
        assert "\n" not in str(e)
        return None
    verdicts, rows = [], 0
    if tables:
        table = pa.concat_tables(tables)
        rows = table.num_rows
        assert table.column("row").to_pylist() == list(range(rows))
        verdicts = table.column("verdict").to_pylist()
        errors = table.column("error").to_pylist()
        assert None not in verdicts
        assert all(e is not None for v, e in zip(verdicts, errors, strict=True) if v == "malformed")
    if ds.format == "parquet":
        assert rows == ds.num_rows
    else:
        text = path.read_bytes()
        if ds.compression == "gzip":
            text = gunzip(text)
            assert text is not None, "rows read from a broken gzip stream"
        lines = row_lines(text, ds.format, ds.has_header)
        assert rows == len(lines)
        if ds.format == "txt" or text.startswith(GOOD["csv"].split(b"\n")[0] + b"\n"):
            before = good_verdicts(ds.format)
            for line, verdict in zip(lines, verdicts, strict=True):
                assert before.get(line, verdict) == verdict, (line, verdict)
    return verdicts


@cache
def good_verdicts(fmt: str) -> dict[bytes, str]:
    """The verdict of each row line of the undamaged input of format `fmt`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"x.{fmt}"
        path.write_bytes(GOOD[fmt])
        ds = open_dataset(path, batch_size=2)
        tables = [solve_record_batch(b, SolveOptions(max_nodes=500)) for b in ds.batches()]
        lines = row_lines(GOOD[fmt], fmt, ds.has_header)
    verdicts = pa.concat_tables(tables).column("verdict").to_pylist()
    return dict(zip(lines, verdicts, strict=True))


def check(data: bytes, kind: str) -> int | None:
    """Solve damaged `data` (a file `x.<kind>`): its rows out, or None when it was refused, and
    then only when the oracle allows it (`refusal_allowed`)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"x.{kind}"
        path.write_bytes(data)
        verdicts = solve_all(path)
    if verdicts is None:
        assert refusal_allowed(data, kind), f"a damaged x.{kind} refused: {data!r}"
        return None
    return len(verdicts)


@FUZZ
@given(damaged(GOOD["csv"]))
def test_damaged_csv(data):
    check(data, "csv")


@FUZZ
@given(damaged(GOOD["txt"]))
def test_damaged_text(data):
    check(data, "txt")


@FUZZ
@given(damaged(GOOD["parquet"]))
def test_damaged_parquet(data):
    check(data, "parquet")


@FUZZ
@given(damaged(GOOD["csv.gz"]))
def test_damaged_gzip(data):
    check(data, "csv.gz")


@FUZZ
@given(st.binary(max_size=400), st.sampled_from(["x.csv", "x.tsv", "x.txt", "x.parquet"]))
def test_random_bytes(data, name):
    """Random bytes have no rows to lose: refusing them is fine, reading them must count."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        solve_all(path)


def test_undamaged_inputs_give_every_row():
    assert [check(GOOD[kind], kind) for kind in ("csv", "txt", "parquet", "csv.gz")] == [3] * 4


@pytest.mark.parametrize("kind", ["csv", "txt"])
def test_a_nul_byte_in_a_row_is_a_malformed_row_not_a_binary_file(kind):
    """A NUL byte used to make the whole file "not a text file" when it sat in the first 4 KiB
    (and one malformed row when it sat later): it is one damaged row wherever it is."""
    data = GOOD[kind].replace(P1.encode(), P1[:40].encode() + b"\x00" + P1[41:].encode(), 1)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"x.{kind}"
        path.write_bytes(data)
        verdicts = solve_all(path)
    assert verdicts is not None, "the file was refused"
    assert len(verdicts) == 3 and verdicts.count("malformed") == 1


def test_a_parquet_page_of_an_unknown_type_is_a_read_error_not_rows_lost(tmp_path):
    """pyarrow skips a page whose type it does not know (a damaged page header) and reads the
    column chunk as empty, without a word: the footer's count of rows is the only witness."""
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"puzzle": [P1, P2, P1]}), path, use_dictionary=False,
                   compression="none")  # fmt: skip
    data = bytearray(path.read_bytes())
    page = pq.read_metadata(path).row_group(0).column(0).data_page_offset
    assert data[page : page + 2] == b"\x15\x00"  # the page header's first field: DATA_PAGE
    data[page + 1] = 0x0E  # page type 7: no such type
    path.write_bytes(data)
    lost = r"x\.parquet: read failed \(row group 0: 0 rows read, 3 in its footer"
    with pytest.raises(InputError, match=lost):
        for _ in open_dataset(path).batches():
            pass


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
        verdicts = solve_all(path)
        assert verdicts is not None and rows == str(len(verdicts))
    else:
        assert refusal_allowed(data, "csv"), f"a damaged x.csv refused: {data!r}"


def test_a_header_merged_with_the_first_row_names_the_puzzle_column(tmp_path):
    """A lost line break joins the header and the first row: that line holds a puzzle, so it
    is read as a row, and the puzzles under `puzzle` are too few to be found by content (one of
    the two rows below is damaged as well). The column the first line names is the puzzle
    column: every row comes out, the damaged ones malformed, instead of the file refused (found
    by hypothesis in test_damaged_csv)."""
    from pipeline.io.opening import open_dataset

    path = tmp_path / "merged.csv"
    path.write_text(f"d,puzzle,solution,source1,{P1},{P1},a\n2,{P1[1:]},,b\n3,{P1},,\n")

    batches = list(open_dataset(path).batches())

    puzzles = [p for b in batches for p in b.column("puzzle").to_pylist()]
    assert puzzles == ["puzzle", P1[1:], P1]

"""Reading inputs as batches: formats, compression, headers, columns, errors, streaming."""

import gzip
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from pipeline.errors import InputError, InputWarning
from pipeline.io.columns import PUZZLE_NAMES
from pipeline.io.dataset import Dataset
from pipeline.io.lines import MAX_LINE_BYTES
from pipeline.io.opening import open_dataset

SHARED = Path(__file__).parents[1] / ".." / "shared" / "data"

# Two Kaggle-style rows: leading zeros, `0` blanks, and their solutions.
P1 = "004300209005009001070060043006002087190007400050083000600000105003508690042910300"
S1 = "864371259325849761971265843436192587198657432257483916689734125713528694542916378"
P2 = "040100050107003960520008000000000017000906800803050620090060543600080700250097100"
S2 = "346179258187523964529648371965832417472916835813754629798261543631485792254397186"
DOTS = P1.replace("0", ".")


def write(path: Path, text: str | bytes, compression: str | None = None) -> Path:
    """Write `text` to `path`, gzip- or zstd-compressed if asked."""
    data = text.encode() if isinstance(text, str) else text
    if compression == "gzip":
        data = gzip.compress(data)
    elif compression == "zstd":
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def write_parquet(path: Path, table: pa.Table, compression: str | None = None, **kw) -> Path:
    """Write `table` as Parquet, then compress the whole file if asked."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **kw)
    return write(path, sink.getvalue().to_pybytes(), compression)


def read_all(ds: Dataset, start_row: int = 0) -> dict[str, list]:
    """Every batch of `ds` joined into one dict of lists (checking each batch's schema)."""
    batches = list(ds.batches(start_row))
    for batch in batches:
        assert batch.schema == ds.schema
        assert batch.num_rows <= ds.batch_size
    return pa.Table.from_batches(batches, schema=ds.schema).to_pydict()


SUFFIX = {None: "", "gzip": ".gz", "zstd": ".zst"}


@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
@pytest.mark.parametrize("fmt", ["csv", "tsv", "txt", "parquet"])
def test_every_format_and_compression(tmp_path, fmt, compression):
    name = tmp_path / f"puzzles.{fmt}{SUFFIX[compression]}"
    if fmt == "parquet":
        write_parquet(name, pa.table({"puzzle": [P1, P2], "solution": [S1, S2]}), compression)
    elif fmt == "txt":
        write(name, f"# two puzzles\n{P1}\n{P2}\n", compression)
    else:
        sep = "," if fmt == "csv" else "\t"
        write(name, f"puzzle{sep}solution\n{P1}{sep}{S1}\n{P2}{sep}{S2}\n", compression)

    ds = open_dataset(name)

    assert (ds.format, ds.compression) == (fmt, compression)
    assert ds.size_bytes == name.stat().st_size
    assert ds.num_rows == (2 if fmt == "parquet" else None)
    data = read_all(ds)
    assert data["row"] == [0, 1]
    assert data["puzzle"] == [P1, P2]
    if fmt != "txt":
        assert data["solution"] == [S1, S2]


def test_kaggle_style_csv_without_header(tmp_path):
    ds = open_dataset(write(tmp_path / "k.csv", f"{P1},{S1}\n{P2},{S2}\n"))
    assert ds.columns == ["column_0", "column_1"]
    assert (ds.puzzle_column, ds.solution_column) == ("column_0", "column_1")
    data = read_all(ds)
    assert data["puzzle"] == [P1, P2]  # leading zeros kept: strings, never ints
    assert data["solution"] == [S1, S2]


def test_header_can_be_forced(tmp_path):
    path = write(tmp_path / "k.csv", f"{P1},{S1}\n{P2},{S2}\n")
    ds = open_dataset(path, has_header=True)  # the first row becomes the names
    assert ds.columns == [P1, S1]
    assert read_all(ds)["puzzle"] == [P2]
    path = write(tmp_path / "h.csv", f"puzzle\n{P1}\n")
    ds = open_dataset(path, has_header=False, column="column_0")
    assert read_all(ds)["puzzle"] == ["puzzle", P1]  # the header line is now a (bad) row


def test_header_detected_from_unknown_names_over_puzzles(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", f"label,cells\nfirst,{P1}\nsecond,{P2}\n"))
    assert ds.columns == ["label", "cells"]
    assert ds.puzzle_column == "cells"  # found by content
    assert read_all(ds)["puzzle"] == [P1, P2]


def test_tsv_and_tab_suffix(tmp_path):
    for name in ("x.tsv", "x.tab"):
        ds = open_dataset(write(tmp_path / name, f"id\tquizzes\n7\t{P1}\n"))
        assert ds.format == "tsv"
        assert read_all(ds) == {"row": [0], "id": [7], "puzzle": [P1]}


def test_separator_override(tmp_path):
    path = write(tmp_path / "semi.csv", f"puzzle;solution\n{P1};{S1}\n")
    assert read_all(open_dataset(path, separator=";"))["solution"] == [S1]
    assert open_dataset(write(tmp_path / "t.csv", f"{P1}\t{S1}\n"), separator="\\t").columns == [
        "column_0",
        "column_1",
    ]


@pytest.mark.parametrize("name", [*PUZZLE_NAMES, "Quizzes", "PUZZLE", " Board "])
def test_puzzle_column_found_by_name(tmp_path, name):
    ds = open_dataset(write(tmp_path / "x.csv", f"extra,{name}\nfoo,{P1}\n"))
    assert ds.puzzle_column == name.strip()
    assert read_all(ds)["puzzle"] == [P1]


@pytest.mark.parametrize("name", ["solution", "solutions", "Solution"])
def test_solution_and_id_found_by_name(tmp_path, name):
    ds = open_dataset(write(tmp_path / "x.csv", f"ID,puzzle,{name}\n1,{P1},{S1}\n"))
    assert (ds.puzzle_column, ds.solution_column, ds.id_column) == ("puzzle", name, "ID")
    assert read_all(ds) == {"row": [0], "id": [1], "puzzle": [P1], "solution": [S1]}


def test_columns_found_by_content_without_header(tmp_path):
    rows = [f"{i},{p},{s}" for i, (p, s) in enumerate([(P1, S1), (P2, S2)] * 10)]
    rows[3] = "3,not a puzzle,"  # a few bad rows do not hide the columns
    ds = open_dataset(write(tmp_path / "x.csv", "\n".join(rows) + "\n"))
    assert (ds.puzzle_column, ds.solution_column, ds.id_column) == ("column_1", "column_2", None)
    data = read_all(ds)
    assert data["puzzle"][3] == "not a puzzle"
    assert data["solution"][3] is None


def test_no_puzzle_column(tmp_path):
    with pytest.raises(InputError, match="no puzzle column found.*columns are: a, b"):
        open_dataset(write(tmp_path / "x.csv", "a,b\nx,y\nz,w\n"), has_header=True)


def test_overrides(tmp_path):
    path = write(tmp_path / "x.csv", f"key,a,b,puzzle\nk1,{P1},{S1},junk\n")
    ds = open_dataset(path, column="a", solution_column="B", id_column="key")
    assert (ds.puzzle_column, ds.solution_column, ds.id_column) == ("a", "b", "key")
    assert read_all(ds) == {
        "row": [0], "id": ["k1"], "puzzle": [P1], "solution": [S1], "input_puzzle": ["junk"],
    }  # fmt: skip


def test_missing_column_lists_the_columns(tmp_path):
    path = write(tmp_path / "x.csv", f"puzzle,solution\n{P1},{S1}\n")
    for option in ("column", "solution_column", "id_column"):
        with pytest.raises(InputError) as err:
            open_dataset(path, **{option: "foo"})
        assert str(err.value) == f"{path}: column 'foo' not found; columns are: puzzle, solution"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match=r"nope\.csv: no such file$"):
        open_dataset(tmp_path / "nope.csv")
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(InputError, match="is a folder: pass files"):
        open_dataset(tmp_path / "dir.csv")


def test_unknown_suffix(tmp_path):
    with pytest.raises(InputError, match="unknown format"):
        open_dataset(write(tmp_path / "x.json", "{}"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = write(tmp_path / "x.csv", f"{P1}\n")
    path.chmod(0)
    with pytest.raises(InputError, match="permission denied"):
        open_dataset(path)


def test_content_must_match_the_name(tmp_path):
    with pytest.raises(InputError, match=r"x\.parquet: not a Parquet file"):
        open_dataset(write(tmp_path / "x.parquet", f"{P1}\n"))
    with pytest.raises(InputError, match="not a gzip file"):
        open_dataset(write(tmp_path / "x.csv.gz", f"{P1}\n"))
    with pytest.raises(InputError, match="not a zstd file"):
        open_dataset(write(tmp_path / "x.txt.zst", f"{P1}\n", "gzip"))
    with pytest.raises(InputError, match="gzip-compressed but its name does not end in .gz"):
        open_dataset(write(tmp_path / "y.csv", f"{P1}\n", "gzip"))
    with pytest.raises(InputError, match="is a Parquet file, not text"):
        open_dataset(write_parquet(tmp_path / "p.csv", pa.table({"puzzle": [P1]})))
    with pytest.raises(InputError, match=r"not a Parquet file \(after gzip"):
        open_dataset(write(tmp_path / "x.parquet.gz", f"{P1}\n", "gzip"))


def test_corrupt_gzip(tmp_path):
    data = gzip.compress(("\n".join([P1] * 50_000) + "\n").encode())
    truncated = write(tmp_path / "t.txt.gz", data[: len(data) // 2])
    ds = open_dataset(truncated)  # the start decompresses fine ...
    with pytest.raises(InputError, match=r"t\.txt\.gz: read failed"):  # ... the end does not
        read_all(ds)
    garbled = write(tmp_path / "g.csv.gz", data[:20] + b"\x00" * 64 + data[84:])
    with pytest.raises(InputError, match="g.csv.gz"):
        read_all(open_dataset(garbled))


def test_text_comments_blank_lines_and_malformed_lines(tmp_path):
    text = f"# header comment\n\n{DOTS}\n   \n  # indented comment\nbad line\r\n{P2}\n\n#end"
    ds = open_dataset(write(tmp_path / "x.txt", text))
    assert (ds.columns, ds.puzzle_column, ds.solution_column) == (["puzzle"], "puzzle", None)
    assert read_all(ds) == {"row": [0, 1, 2], "puzzle": [DOTS, "bad line", P2]}


def test_text_comment_lines_need_not_be_utf8(tmp_path):
    path = write(tmp_path / "x.txt", b"# caf\xe9\n" + DOTS.encode() + b"\n")
    assert read_all(open_dataset(path))["puzzle"] == [DOTS]
    # A row that is not UTF-8 stays a row (the bad byte becomes U+FFFD); the run goes on.
    path = write(tmp_path / "y.txt", b"caf\xe9\n" + DOTS.encode() + b"\n")
    assert read_all(open_dataset(path))["puzzle"] == ["caf\ufffd", DOTS]


def test_csv_cells_that_are_not_utf8_stay_rows(tmp_path):
    path = write(
        tmp_path / "x.csv",
        b"id,puzzle\na," + DOTS.encode() + b"\nb,\xe9" + DOTS[1:].encode() + b"\n",
    )
    assert read_all(open_dataset(path)) == {
        "row": [0, 1], "id": ["a", "b"], "puzzle": [DOTS, "\ufffd" + DOTS[1:]],
    }  # fmt: skip


def test_nulls_short_and_long_rows_stay_in_place(tmp_path):
    text = f"puzzle,solution,id\n{P1},{S1},a\n,{S2},b\n{P2}\n\n{P1},,c,extra\n{P2},{S2},\n"
    data = read_all(open_dataset(write(tmp_path / "x.csv", text)))
    assert data == {
        "row": [0, 1, 2, 3, 4],
        "id": ["a", "b", None, "c", None],
        "puzzle": [P1, None, P2, P1, P2],
        "solution": [S1, S2, None, None, S2],
    }


def test_blank_lines_before_the_header(tmp_path):
    text = f"\n\r\n\npuzzle,solution\n\n{P1}\n{P2},{S2}\n\n{P1}\n"
    data = read_all(open_dataset(write(tmp_path / "x.csv", text)))
    assert data == {"row": [0, 1, 2], "puzzle": [P1, P2, P1], "solution": [None, S2, None]}


def test_ids_and_puzzles_are_never_numbers(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", f"id,puzzle\n007,{P1}\n010,{P1[:80]}\n"))
    assert read_all(ds) == {"row": [0, 1], "id": ["007", "010"], "puzzle": [P1, P1[:80]]}


def test_excel_style_bom_and_crlf(tmp_path):
    path = write(tmp_path / "x.csv", f"\ufeffpuzzle,solution\r\n{P1},{S1}\r\n{P2},{S2}\r\n")
    ds = open_dataset(path)
    assert ds.columns == ["puzzle", "solution"]
    assert read_all(ds)["solution"] == [S1, S2]
    path = write(tmp_path / "x.txt", f"\ufeff{DOTS}\r\n{P2}\r\n")
    assert read_all(open_dataset(path))["puzzle"] == [DOTS, P2]


def many_rows(n: int) -> list[tuple[str, str]]:
    """`n` distinct (puzzle, id) pairs: enough rows to span several pyarrow blocks."""
    return [(f"{i:081d}", f"id{i}") for i in range(n)]


def test_batches_are_full_across_block_boundaries_with_bad_rows(tmp_path):
    rows = many_rows(30_000)  # about 2.7 MB: several 1 MiB blocks
    lines = [f"{p},{k}" for p, k in rows]
    for i in range(5, 30_000, 997):  # short rows everywhere, some at block edges
        lines[i] = rows[i][0]
    path = write(tmp_path / "x.csv.gz", "puzzle,id\n" + "\n".join(lines) + "\n", "gzip")
    ds = open_dataset(path, batch_size=777)
    sizes = [b.num_rows for b in ds.batches()]
    assert sizes == [777] * (30_000 // 777) + [30_000 % 777]
    data = read_all(ds)
    assert data["row"] == list(range(30_000))
    assert data["puzzle"] == [p for p, _ in rows]
    assert data["id"][5] is None and data["id"][6] == "id6"


def test_start_row(tmp_path):
    rows = many_rows(25_000)
    csv_path = write(tmp_path / "x.csv", "puzzle\n" + "\n".join(p for p, _ in rows) + "\n")
    txt_path = write(tmp_path / "x.txt.zst", "#c\n" + "\n".join(p for p, _ in rows) + "\n", "zstd")
    table = pa.table({"puzzle": [p for p, _ in rows], "id": list(range(25_000))})
    pq_path = write_parquet(tmp_path / "x.parquet", table, row_group_size=4000)
    for path in (csv_path, txt_path, pq_path):
        ds = open_dataset(path, batch_size=1000)
        data = read_all(ds, start_row=12_345)
        assert data["row"] == list(range(12_345, 25_000)), path
        assert data["puzzle"] == [p for p, _ in rows[12_345:]]
        assert next(ds.batches(24_999)).num_rows == 1
        assert list(ds.batches(25_000)) == []
        assert list(ds.batches(99_999)) == []
    with pytest.raises(InputError, match="start_row"):
        list(ds.batches(-1))


@pytest.mark.parametrize(
    "name, content",
    [
        ("empty.csv", b""),
        ("blank.csv", b"\n\n"),
        ("header.csv", b"puzzle,solution\n"),
        ("header_no_newline.tsv", b"puzzle\tsolution"),
        ("empty.txt", b""),
        ("comments.txt", b"# nothing here\n\n"),
        ("empty.csv.gz", gzip.compress(b"", mtime=0)),
        ("empty.txt.zst", zstandard.ZstdCompressor().compress(b"")),
    ],
)
def test_empty_input_gives_no_batches(tmp_path, name, content):
    ds = open_dataset(write(tmp_path / name, content))
    assert list(ds.batches()) == []
    assert ds.num_rows == 0
    assert ds.schema.names[:2] == ["row", "puzzle"]


def test_empty_parquet(tmp_path):
    table = pa.table({"puzzle": pa.array([], pa.string()), "solution": pa.array([], pa.string())})
    ds = open_dataset(write_parquet(tmp_path / "e.parquet", table))
    assert (ds.num_rows, ds.solution_column) == (0, "solution")
    assert list(ds.batches()) == []


def test_parquet_types(tmp_path):
    table = pa.table(
        {
            "id": pa.array([10, 11], pa.int64()),
            "grid": pa.array([P1, P2]).dictionary_encode(),
            "solution": pa.array([S1.encode(), None], pa.binary()),
        }
    )
    ds = open_dataset(write_parquet(tmp_path / "x.pq", table))
    assert ds.schema == pa.schema(
        [
            ("row", pa.int64()),
            ("id", pa.int64()),
            ("puzzle", pa.string()),
            ("solution", pa.string()),
        ]
    )
    assert read_all(ds) == {
        "row": [0, 1],
        "id": [10, 11],
        "puzzle": [P1, P2],
        "solution": [S1, None],
    }
    with pytest.raises(InputError, match="column 'id' holds int64, not text"):
        open_dataset(tmp_path / "x.pq", column="id")


def test_options_that_do_not_apply(tmp_path):
    with pytest.raises(InputError, match="separator applies to CSV/TSV"):
        open_dataset(write(tmp_path / "x.txt", f"{P1}\n"), separator=";")
    with pytest.raises(InputError, match="separator must be one character"):
        open_dataset(write(tmp_path / "x.csv", f"{P1}\n"), separator="ab")
    with pytest.raises(InputError, match="batch_size"):
        open_dataset(tmp_path / "x.csv", batch_size=0)


def shared(name: str) -> Path:
    """A public set from ../shared/data, or skip the test."""
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path


def test_shared_kaggle_csv():
    ds = open_dataset(shared("kaggle1m_first9999.csv"))
    assert (ds.format, ds.puzzle_column, ds.solution_column) == ("csv", "column_0", "column_1")
    data = read_all(ds)
    assert len(data["row"]) == 9_999
    assert data["puzzle"][0] == P1 and data["solution"][0] == S1


def test_shared_17_clue_txt():
    ds = open_dataset(shared("puzzles2_17_clue.txt"), batch_size=10_000)
    sizes = [b.num_rows for b in ds.batches()]
    assert sum(sizes) == 49_158
    assert sizes[:4] == [10_000] * 4


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_row_estimate_for_a_progress_bar(tmp_path, compression):
    """CSV and text files do not say how many rows they hold; the estimate gives the ETA."""
    text = "puzzle\n" + f"{DOTS}\n{P1}\n" * 20_000
    name = "x.csv.gz" if compression else "x.csv"
    ds = open_dataset(write(tmp_path / name, text, compression), batch_size=5_000)
    assert ds.num_rows is None
    estimates = []
    for _ in ds.batches():
        estimates.append(ds.estimated_rows())
    if compression is None:  # lines are alike: size over bytes per line is all but exact
        assert all(abs(e - 40_000) <= 10 for e in estimates)
    else:  # the share of the compressed bytes read so far
        assert all(e is None or e >= 5_000 for e in estimates)
        assert any(e is not None for e in estimates)


# --- a bad row never stops a run and never loses a row (issue 10) ----------------------------


def test_a_row_not_utf8_with_an_extra_field_stays_a_row(tmp_path):
    bad = b"\xe9" + f"{P2},{S2},extra\n".encode()  # not UTF-8, and one field too many
    text = f"puzzle,solution\n{P1},{S1}\n".encode() + bad + f"{P1},{S1}\n".encode()
    data = read_all(open_dataset(write(tmp_path / "x.csv", text)))
    assert data["puzzle"] == [P1, "\ufffd" + P2, P1]
    assert data["solution"] == [S1, S2, S1]


def test_a_parquet_binary_cell_not_utf8_stays_a_row(tmp_path):
    cells = [P1.encode(), b"\xff" + P2[1:].encode(), P2.encode()]
    path = write_parquet(tmp_path / "x.parquet", pa.table({"puzzle": pa.array(cells, pa.binary())}))
    assert read_all(open_dataset(path))["puzzle"] == [P1, "\ufffd" + P2[1:], P2]


@pytest.mark.parametrize("at", [3, 10_000])  # in the sniffed head, and well after it
def test_a_line_over_a_mib_is_one_row_cut_at_a_mib(tmp_path, at):
    lines = [f"{P1},{S1}"] * at + ["x" * (3 << 20), f"{P2},{S2}"]
    data = read_all(open_dataset(write(tmp_path / "x.csv", "\n".join(lines) + "\n")))
    assert len(data["row"]) == at + 2
    assert data["puzzle"][at] == "x" * MAX_LINE_BYTES
    assert (data["puzzle"][at + 1], data["solution"][at + 1]) == (P2, S2)
    assert data["puzzle"][:at] == [P1] * at


@pytest.mark.parametrize("at", [1, 3, 10_000])
def test_an_unbalanced_quote_runs_to_the_end_of_its_line_only(tmp_path, at):
    lines = ["puzzle,solution", *[f"{P1},{S1}"] * at, f'"{P2},{S2}', *[f"{P1},{S1}"] * 10_000]
    data = read_all(open_dataset(write(tmp_path / "x.csv", "\n".join(lines) + "\n")))
    assert len(data["row"]) == at + 10_001
    assert (data["puzzle"][at], data["solution"][at]) == (f"{P2},{S2}", None)
    assert data["puzzle"][at + 1 :] == [P1] * 10_000


def test_quoted_fields_follow_the_csv_rules_within_a_line(tmp_path):
    text = f'"id","puzzle"\n"a ""1""","{P1}"\n"b,2",{P2}\nc,"{P1}\n'
    data = read_all(open_dataset(write(tmp_path / "x.csv", text)))
    assert data == {"row": [0, 1, 2], "id": ['a "1"', "b,2", "c"], "puzzle": [P1, P2, P1]}


def test_headerless_integer_puzzles_are_still_the_puzzle_column(tmp_path):
    # A spreadsheet stored the puzzles as numbers: leading zeros lost (P1 -> 79 digits).
    text = "".join(f"{int(p)},{s}\n" for p, s in [(P1, S1), (P2, S2)] * 5)
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert (ds.puzzle_column, ds.solution_column) == ("column_0", "column_1")
    assert read_all(ds)["puzzle"][:2] == [str(int(P1)), str(int(P2))]


def test_solutions_first_without_header(tmp_path):
    text = "".join(f"{s},{p}\n" for p, s in [(P1, S1), (P2, S2)])
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert (ds.puzzle_column, ds.solution_column) == ("column_1", "column_0")


def test_binary_garbage_named_txt_is_one_error_without_a_traceback(tmp_path, capfd):
    rnd = random.Random(1)
    garbage = bytes(rnd.randrange(1, 256) for _ in range(5000))  # no NUL byte
    with pytest.raises(InputError, match=r"g\.txt: not a text file"):
        open_dataset(write(tmp_path / "g.txt", garbage))
    assert capfd.readouterr().err == ""


def test_garbage_lines_after_the_head_are_rows(tmp_path, capfd):
    rnd = random.Random(2)
    garbage = (
        bytes(rnd.randrange(1, 256) for _ in range(300)).replace(b"\n", b"").replace(b"\r", b"")
    )
    text = f"{P1}\n".encode() * 20_000 + b"\x1f" + garbage + b"\x1f\n" + f"{P2}\n".encode()
    data = read_all(open_dataset(write(tmp_path / "x.txt", text)))
    assert len(data["row"]) == 20_002
    assert data["puzzle"][-1] == P2
    assert capfd.readouterr().err == ""


# --- ids keep their type; the other columns pass through (issue 12) --------------------------


def test_integer_ids_from_text_are_integers(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", f"id,puzzle\n1,{P1}\n-20,{P2}\n0,{P1}\n"))
    assert ds.schema.field("id").type == pa.int64()
    assert read_all(ds)["id"] == [1, -20, 0]


@pytest.mark.parametrize("value", ["007", "+7", "7.0", "12345678901234567890", " 7"])
def test_ids_that_are_not_plain_integers_stay_text(tmp_path, value):
    ds = open_dataset(write(tmp_path / "x.csv", f'id,puzzle\n1,{P1}\n"{value}",{P2}\n'))
    assert read_all(ds)["id"] == ["1", value]


def test_a_later_id_that_is_no_integer_becomes_null_and_its_row_stays(tmp_path):
    ids = [str(i) for i in range(3000)]
    ids[2000], ids[2500] = "x2000", "02500"  # past the 1,000 sampled rows
    text = "id,puzzle\n" + "".join(f"{i},{P1}\n" for i in ids)
    ds = open_dataset(write(tmp_path / "x.csv", text), batch_size=700)
    with pytest.warns(InputWarning):  # said: the next test
        data = read_all(ds)
    assert len(data["row"]) == 3000
    assert data["id"][1999:2002] == [1999, None, 2001]
    assert data["id"][2500] is None
    assert data["puzzle"][2000] == P1


def test_a_later_id_that_is_no_integer_is_said_once_naming_its_row(tmp_path):
    """Its row stays with a null id, but never silently: an `InputWarning` names the first such
    row and id (the command line prints it as `solve: warning: ...`)."""
    ids = [str(i) for i in range(3000)]
    ids[2000], ids[2500] = "b2000", "b2500"
    text = "id,puzzle\n" + "".join(f"{i},{P1}\n" for i in ids)
    ds = open_dataset(write(tmp_path / "x.csv", text), batch_size=700)
    with pytest.warns(InputWarning) as said:
        assert len(read_all(ds)["row"]) == 3000
    assert len(said) == 1
    message = str(said[0].message)
    assert "row 2000" in message and "'b2000'" in message and "x.csv" in message


def test_other_columns_pass_through_renamed_on_a_clash(tmp_path):
    text = f"id,puzzle,clues,source,solution,difficulty\nk,{P1},24,forum,{S1},0.5\nm,{P2},,,,\n"
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert ds.extra_columns == {
        "clues": "input_clues", "source": "source", "difficulty": "difficulty",
    }  # fmt: skip
    assert ds.renamed == {"clues": "input_clues"}
    assert ds.extra_schema == pa.schema(
        [("input_clues", pa.string()), ("source", pa.string()), ("difficulty", pa.string())]
    )
    assert ds.schema.names == [
        "row", "id", "puzzle", "solution", "input_clues", "source", "difficulty",
    ]  # fmt: skip
    data = read_all(ds)
    assert data["input_clues"] == ["24", None]
    assert data["source"] == ["forum", None]
    assert data["difficulty"] == ["0.5", None]
    assert open_dataset(ds.path, passthrough=False).schema.names == [
        "row", "id", "puzzle", "solution",
    ]  # fmt: skip


def test_renamed_columns_never_clash_with_each_other(tmp_path):
    text = f"puzzle,clues,input_clues,row\n{P1},1,2,3\n"
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert ds.extra_columns == {"clues": "input_clues_2", "input_clues": "input_clues",
                                "row": "input_row"}  # fmt: skip
    assert read_all(ds)["input_clues_2"] == ["1"]


def test_parquet_columns_pass_through_with_their_type(tmp_path):
    table = pa.table(
        {
            "puzzle": [P1, P2],
            "difficulty": pa.array([1.5, None], pa.float64()),
            "source": pa.array(["a", "b"]).dictionary_encode(),
            "verdict": pa.array([True, False]),
        }
    )
    ds = open_dataset(write_parquet(tmp_path / "x.parquet", table))
    assert ds.extra_schema == pa.schema(
        [("difficulty", pa.float64()), ("source", pa.string()), ("input_verdict", pa.bool_())]
    )
    data = read_all(ds)
    assert data["difficulty"] == [1.5, None]
    assert data["source"] == ["a", "b"]
    assert data["input_verdict"] == [True, False]


def test_format_can_be_forced(tmp_path):
    path = write(tmp_path / "puzzles.dat", f"{P1}\n" * 10 + "# not a comment in CSV\n")
    with pytest.raises(InputError, match="unknown format"):
        open_dataset(path)
    assert read_all(open_dataset(path, format="txt"))["puzzle"] == [P1] * 10
    assert read_all(open_dataset(path, format="csv"))["puzzle"][-1] == "# not a comment in CSV"
    gz = write(tmp_path / "puzzles.dat.gz", f"{P1}\n", "gzip")
    assert open_dataset(gz, format="tsv").compression == "gzip"
    with pytest.raises(InputError, match="unknown format 'json'; expected one of csv, tsv"):
        open_dataset(path, format="json")


def test_a_parquet_string_cell_not_utf8_stays_a_row(tmp_path):
    # Parquet does not check that a string column holds UTF-8; the reader does, cell by cell.
    cells = pa.array([P1.encode(), b"\xff" + P2[1:].encode()], pa.binary()).view(pa.string())
    table = pa.table({"puzzle": cells, "note": cells})
    data = read_all(open_dataset(write_parquet(tmp_path / "x.parquet", table)))
    assert data["puzzle"] == data["note"] == [P1, "\ufffd" + P2[1:]]


def test_a_parquet_column_name_not_utf8_is_one_error(tmp_path):
    path = write_parquet(tmp_path / "x.parquet", pa.table({"puzzle": [P1], "difficulty": [1]}))
    path.write_bytes(path.read_bytes().replace(b"difficulty", b"\xffifficulty"))
    with pytest.raises(InputError, match=r"x\.parquet: not a Parquet file"):
        open_dataset(path)


def test_a_jobs_own_columns_can_be_reserved_too(tmp_path):
    # a job reading several inputs adds `source`: an input's own `source` steps aside
    path = write(tmp_path / "x.csv", f"puzzle,source\n{P1},forum\n")
    assert open_dataset(path).extra_columns == {"source": "source"}
    assert open_dataset(path, reserved=["source"]).renamed == {"source": "input_source"}


# --- input faults: the header guess, odd Parquet, odd names, a stray NUL (issue: inputs) ------


@pytest.mark.parametrize("fmt", ["csv", "txt", "parquet", "csv.gz"])
def test_a_file_name_that_is_not_utf8_is_read(tmp_path, fmt):
    name = os.fsdecode(b"caf\xe9." + fmt.encode())  # Latin-1: not UTF-8, a surrogate in str
    path = tmp_path / name
    if fmt == "parquet":
        write_parquet(path, pa.table({"puzzle": [P1]}))
    else:
        compression = "gzip" if fmt.endswith(".gz") else None
        write(path, f"puzzle\n{P1}\n" if fmt != "txt" else f"{P1}\n", compression)
    assert read_all(open_dataset(path))["puzzle"] == [P1]


@pytest.mark.parametrize("fmt", ["csv", "txt"])
def test_a_nul_byte_is_one_malformed_row_wherever_it_is(tmp_path, fmt):
    header = "puzzle\n" if fmt == "csv" else ""
    for at in (1, 5000):  # in the sniffed first 4 KiB, and after it
        rows = [P1] * 5001
        rows[at] = P1[:40] + "\x00" + P1[41:]
        ds = open_dataset(write(tmp_path / f"x.{fmt}", header + "\n".join(rows) + "\n"))
        data = read_all(ds)
        assert len(data["row"]) == 5001
        assert data["puzzle"][at] == rows[at]


def test_a_parquet_file_without_columns_is_an_empty_input(tmp_path):
    # (pyarrow writes no rows for a table of rows but no columns: no such file to refuse)
    empty = open_dataset(write_parquet(tmp_path / "e.parquet", pa.table({})))
    assert (empty.num_rows, empty.columns) == (0, [])
    assert list(empty.batches()) == []


def test_parquet_columns_of_one_name_are_told_apart_as_a_csv_headers_are(tmp_path):
    table = pa.Table.from_arrays(
        [pa.array([P1, P2]), pa.array(["a", "b"]), pa.array([1, 2]), pa.array([S1, S2])],
        names=["puzzle", "note", "note", "puzzle"],
    )
    ds = open_dataset(write_parquet(tmp_path / "x.parquet", table))
    assert ds.columns == ["puzzle", "note", "note_2", "puzzle_2"]
    data = read_all(ds)
    assert data["puzzle"] == [P1, P2]
    assert (data["note"], data["note_2"], data["puzzle_2"]) == (["a", "b"], [1, 2], [S1, S2])
    assert read_all(open_dataset(ds.path, column="puzzle_2"))["puzzle"] == [S1, S2]


def test_repeated_header_names_never_take_a_name_already_there(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", f"puzzle,a,a,a_2\n{P1},1,2,3\n"))
    assert ds.columns == ["puzzle", "a", "a_3", "a_2"]
    assert read_all(ds)["a_3"] == ["2"]


def test_ids_with_no_value_to_type_them_by_take_the_other_inputs_type(tmp_path):
    from pipeline.io.dataset import agree_on_id_type

    header_only = open_dataset(write(tmp_path / "a.csv", "id,puzzle\n"))
    no_ids_yet = open_dataset(write(tmp_path / "b.csv", f"id,puzzle\n,{P1}\n"))
    numbered = open_dataset(write(tmp_path / "c.csv", f"id,puzzle\n7,{P1}\n"))
    named = open_dataset(write(tmp_path / "d.csv", f"id,puzzle\nx,{P1}\n"))
    assert header_only.schema.field("id").type == pa.string()  # alone: nothing says otherwise

    agreed = agree_on_id_type([header_only, no_ids_yet, numbered, named])

    assert [ds.schema.field("id").type for ds in agreed] == [pa.int64()] * 3 + [pa.string()]
    assert read_all(agreed[1]) == {"row": [0], "id": [None], "puzzle": [P1]}


@pytest.mark.parametrize("label", ["sudoku", "id", "puzzle", "solution", "Board"])
def test_a_first_row_with_a_column_name_beside_a_puzzle_is_a_row_not_a_header(tmp_path, label):
    # A header-less file whose first row's label happens to be a column name: the row holds a
    # puzzle, so it is data; read as a header it would lose that row and name the label
    # column the puzzle column (every row malformed).
    text = f"{label},{P1}\n" + "".join(f"x{i},{P2}\n" for i in range(1, 3000))
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert not ds.has_header
    assert ds.puzzle_column == "column_1"
    data = read_all(ds)
    assert len(data["row"]) == 3000
    assert data["puzzle"][:2] == [P1, P2]


def test_a_first_row_of_id_and_puzzle_is_a_row_even_when_the_ids_below_are_numbers(tmp_path):
    text = f"id,{P1},{S1}\n" + "".join(f"{i},{P2},{S2}\n" for i in range(1, 10))
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert (ds.has_header, ds.puzzle_column, ds.solution_column) == (False, "column_1", "column_2")
    data = read_all(ds)
    assert data["row"] == list(range(10))
    assert data["solution"][0] == S1


def test_a_label_over_a_column_of_puzzles_is_a_header_even_beside_a_known_name(tmp_path):
    # The first row's puzzle cell is a label while every row below holds a puzzle: a header,
    # and the puzzle column is the one that holds puzzles, not the one named `sudoku`.
    text = "sudoku,cells\n" + "".join(f"x{i},{P1}\n" for i in range(5))
    ds = open_dataset(write(tmp_path / "x.csv", text))
    assert ds.has_header
    assert ds.puzzle_column == "cells"
    data = read_all(ds)
    assert data["puzzle"] == [P1] * 5
    assert data["sudoku"] == [f"x{i}" for i in range(5)]  # passed through, not lost


def test_a_header_guessed_from_content_alone_says_so(tmp_path):
    # `puzzle,solution` over puzzles is a header beyond doubt; `label,cells` is a guess the
    # user should hear of (`header_note`), with the way to undo it.
    sure = open_dataset(write(tmp_path / "a.csv", f"id,puzzle\n1,{P1}\n"))
    assert sure.has_header and sure.header_note is None
    guessed = open_dataset(write(tmp_path / "b.csv", f"label,cells\nfirst,{P1}\n"))
    assert guessed.has_header
    assert guessed.header_note == (
        f"{tmp_path / 'b.csv'}: its first line is read as column names (label, cells), not "
        "as a row; --no-header reads it as a row"
    )
    forced = open_dataset(tmp_path / "b.csv", has_header=True)
    assert forced.header_note is None  # the user said so
    assert open_dataset(write(tmp_path / "c.csv", f"{P1}\n{P2}\n")).header_note is None

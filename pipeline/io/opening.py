"""Opening a puzzle input (`open_dataset`): its format, compression, header and the columns to
read, found from its name and its first rows; a `Dataset` (`dataset.py`) to stream it.

Formats come from the name: `.csv`, `.tsv`/`.tab`, `.txt` (one puzzle a line), `.parquet`/`.pq`,
each optionally `.gz` or `.zst`; the content must match the name (`format=` forces a format).
`-` is standard input, its format sniffed from its bytes (`stdin.py`); a named pipe,
`/dev/stdin` or `<(...)` is read the same way, once. A URL (`https://...`, `s3://...`) is
read as a file is (`sources.py`, `remote.py`).

Choices worth knowing:
* One row per line in CSV, TSV and text files, whatever the line holds (the rules, quotes and
  long lines included, are in `lines.py`): empty lines are skipped, and in text files so are
  whitespace-only lines and `#` comment lines.
* CSV rows with too few fields get nulls for the missing ones; extra fields are ignored.
* The separator, when not given, is sniffed among `,` `;` `|` and tab (`delimited.py`).
* A CSV/TSV's first line is a header only when it cannot be a row (`looks_like_header`): a
  line holding a puzzle is a row. A header guessed from content alone, no column name like
  `puzzle` confirming it, is said in `Dataset.header_note`, for the job to print.
* `passthrough=False` leaves the other columns out. A name that repeats (in a CSV header or a
  Parquet schema) is told apart by place: `note, note` are read as `note, note_2`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from pipeline.errors import InputError, first_line
from pipeline.grid import ParsedGrids, parse_puzzles
from pipeline.io.columns import PUZZLE_NAMES, SAMPLE_ROWS, id_type_of, passthrough_names
from pipeline.io.columns import pick_columns as _pick_columns
from pipeline.io.dataset import TEXT_COLUMN, Dataset
from pipeline.io.delimited import delimited_layout
from pipeline.io.formats import ByteSource, check_format, head_text_rows
from pipeline.io.readers import DelimitedReader, ParquetReader, TextReader, as_text, is_text
from pipeline.io.sources import open_source


def open_dataset(
    path: str | Path,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    separator: str | None = None,
    has_header: bool | None = None,
    batch_size: int = 100_000,
    format: str | None = None,
    passthrough: bool = True,
    reserved: Iterable[str] = (),
) -> Dataset:
    """Open `path` (`-`: standard input) for streaming: detect format, compression, header and
    the columns to read.

    `column`, `solution_column` and `id_column` name columns (header-less files have columns
    `column_0`, `column_1`, ...; a `.txt` file has the single column `puzzle`). `separator` and
    `has_header` apply to CSV/TSV only. `format` (`csv`, `tsv`, `txt`, `parquet`) overrides
    the one the name (or for `-`, the content) says. `passthrough`: carry the other columns
    into the batches, renamed `input_<name>` when a result column or one of `reserved` (a job's
    own columns) has their name. Raises `InputError` with a one-line message.
    """
    if batch_size < 1:
        raise InputError(f"batch_size must be >= 1, not {batch_size}")
    forced = check_format(format)
    options = dict(overrides=(column, solution_column, id_column), passthrough=passthrough)
    options["reserved"] = tuple(reserved)
    found = open_source(path, forced)
    fmt, name = found.format, found.name
    _check_options(name, fmt, separator, has_header)
    common = found.dataset_fields() | {"batch_size": batch_size}
    if fmt == "parquet":
        return _open_parquet(found.parquet(), common, **options)
    head, at_eof, source = found.text()
    common["_row_bytes"] = len(head) / head.count(b"\n") if b"\n" in head else None
    if fmt == "txt":
        lines = head_text_rows(head, SAMPLE_ROWS)
        cols = _pick_columns(name, [TEXT_COLUMN], {TEXT_COLUMN: lines}, *options["overrides"])
        empty = at_eof and not lines
        return Dataset(
            **common,
            columns=[TEXT_COLUMN],
            num_rows=0 if empty else None,
            _reader=None if empty else TextReader(source),
            **cols,
        )
    return _open_delimited(name, source, common, head, at_eof, separator, has_header, **options)


def _check_options(name: str, fmt: str, separator: str | None, has_header: bool | None) -> None:
    if fmt in ("txt", "parquet"):
        if separator is not None:
            raise InputError(f"{name}: a separator applies to CSV/TSV files only")
        if has_header:
            raise InputError(f"{name}: a header applies to CSV/TSV files only")


def _open_parquet(
    reader: ParquetReader, common: dict, *, overrides: tuple, passthrough: bool, reserved: tuple
) -> Dataset:
    """`open_dataset` for Parquet: the schema names the columns, the footer counts the rows."""
    name, names = reader.name, reader.names
    num_rows = reader.file.metadata.num_rows
    if not names and not num_rows:  # no columns, no rows: empty, as an empty CSV is
        return _empty(common, overrides)
    texts = [n for n in names if is_text(reader.field(n).type)]
    first = None
    if texts:
        head = reader.batches(texts, SAMPLE_ROWS)
        try:
            first = next(head, None)
        except (OSError, pa.ArrowException) as e:  # a damaged file
            raise InputError(f"{name}: read failed ({first_line(e)})") from None
        finally:
            head.close()  # release pyarrow's reader (and its threads) now, not at exit
    sample = {n: as_text(first.column(n)).to_pylist() if first else [] for n in texts}
    cols = _pick_columns(name, names, sample, *overrides, has_rows=num_rows > 0)
    for column in (cols["puzzle_column"], cols["solution_column"]):
        if column is not None and column not in texts:
            raise InputError(
                f"{name}: column '{column}' holds {reader.field(column).type}, not text"
            )
    id_type = reader.field(cols["id_column"]).type if cols["id_column"] else pa.string()
    if pa.types.is_dictionary(id_type):
        id_type = id_type.value_type
    extra = passthrough_names(names, list(cols.values()), reserved) if passthrough else {}
    types = [_plain(reader.field(n).type) for n in extra]
    return Dataset(
        **common,
        columns=names,
        num_rows=num_rows,
        _reader=reader,
        _id_type=id_type,
        extra_columns=extra,
        extra_schema=pa.schema(list(zip(extra.values(), types, strict=True))),
        **cols,
    )


def _empty(common: dict, overrides: tuple) -> Dataset:
    """An input without columns or rows (an empty CSV, a Parquet file of no column): no
    batches; its columns are those named, or `puzzle`."""
    column, solution_column, id_column = overrides
    return Dataset(
        **common,
        columns=[],
        puzzle_column=column or "puzzle",
        solution_column=solution_column,
        id_column=id_column,
        num_rows=0,
        _reader=None,
    )


def _plain(kind: pa.DataType) -> pa.DataType:
    return kind.value_type if pa.types.is_dictionary(kind) else kind


def _open_delimited(
    name: str,
    source: ByteSource,
    common: dict,
    head: bytes,
    at_eof: bool,
    separator: str | None,
    has_header: bool | None,
    *,
    overrides: tuple,
    passthrough: bool,
    reserved: tuple,
) -> Dataset:
    """`open_dataset` for CSV/TSV: the separator, the header and the columns, sniffed from the
    first rows (`delimited.py`)."""
    layout = delimited_layout(name, head, common["format"], separator, has_header, overrides)
    if layout is None:  # nothing at all: no header, no rows, nothing to detect
        return _empty(common, overrides)
    header, names, sample, cols = layout.header, layout.names, layout.sample, layout.columns
    note = None
    if header and has_header is None and not _named_as_puzzles(cols["puzzle_column"], overrides):
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        note = (
            f"{name}: its first line is read as column names ({shown}), not as a row; "
            "--no-header reads it as a row"
        )
    ids = sample[cols["id_column"]] if cols["id_column"] else []
    id_type = id_type_of(ids)
    extra = passthrough_names(names, list(cols.values()), reserved) if passthrough else {}
    empty = at_eof and not any(sample.values())
    reader = DelimitedReader(source, delimiter=layout.separator, names=names, header=header)
    return Dataset(
        **common,
        columns=names,
        num_rows=0 if empty else None,
        _reader=None if empty else reader,
        _id_type=id_type,
        _id_type_seen=any(i is not None for i in ids),
        has_header=header,
        header_note=note,
        separator=layout.separator,
        extra_columns=extra,
        extra_schema=pa.schema([(new, pa.string()) for new in extra.values()]),
        **cols,
    )


def _named_as_puzzles(puzzle_column: str | None, overrides: tuple) -> bool:
    """Whether the user named the puzzle column, or its name says puzzles: a header that
    leaves no doubt."""
    return overrides[0] is not None or (puzzle_column or "").strip().lower() in PUZZLE_NAMES


def read_puzzles(
    path: str | Path, limit: int | None = None, *, pencilmarks: bool = False, **options: object
) -> ParsedGrids:
    """The puzzles of a whole file (its first `limit` rows), parsed, in input order: for
    benchmarks, tests and notebooks that want a set in memory. `pencilmarks`: read
    729-character rows as pencilmark puzzles (`parse_puzzles`). `options` are those of
    `open_dataset`."""
    ds = open_dataset(path, **options)  # type: ignore[arg-type]
    columns: list[pa.Array] = []
    rows = 0
    for batch in ds.batches():
        if limit is not None and rows + batch.num_rows >= limit:
            columns.append(batch.column(ds.schema.get_field_index("puzzle")).slice(0, limit - rows))
            break
        columns.append(batch.column(ds.schema.get_field_index("puzzle")))
        rows += batch.num_rows
    return parse_puzzles(pa.chunked_array(columns, pa.string()), pencilmarks)


def pick_columns(
    names: list[str],
    sample: dict[str, list],
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    *,
    source: str = "input",
    has_rows: bool | None = None,
) -> dict[str, str | None]:
    """The puzzle, solution and id columns of a table with a header (a DataFrame, say), chosen
    as for a file: `puzzle_column`, `solution_column`, `id_column` (None when there is none).

    `sample` holds the first values of the text columns (up to `SAMPLE_ROWS`), for finding the
    puzzle column by content. Raises `InputError`, its message starting with `source`.
    """
    return _pick_columns(
        source, names, sample, column, solution_column, id_column, has_rows=has_rows
    )

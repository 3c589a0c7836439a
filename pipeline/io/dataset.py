"""An opened puzzle input: what it is, which of its columns matter, and its rows as a stream of
bounded Arrow record batches (`open_dataset`, in `opening.py`, opens one).

    ds = open_dataset("data/kaggle.csv.gz")        # format, compression, columns detected
    for batch in ds.batches():                     # <= batch_size rows each, in input order
        batch["row"], batch["puzzle"]              # int64 input position, puzzle strings

What a batch holds:
* `row` counts rows (not lines), from 0; puzzles and solutions are strings, so puzzles with
  leading zeros stay intact; an empty field is null and stays in place.
* Ids keep their type: Parquet's as stored; from text, int64 when every sampled id is a plain
  integer (`7`, not `007`), else strings. A later id that does not fit the sampled type
  becomes null: its row stays, and a run never stops for an id, but the first one is said
  (an `InputWarning` naming its row and id; `solve: warning: ...` on the command line).
  An input without an id to
  sample (header only) takes the type of the other inputs read with it (`agree_on_id_type`).
* The other columns (a Kaggle `difficulty`, a `source`) come along after the puzzle ones, as
  strings from text and typed from Parquet, under their own names, or `input_<name>` when
  that is a result column's (`Dataset.extra_columns`, `Dataset.renamed`).
* An empty input (no rows; a Parquet file without columns too) yields no batches at all;
  `Dataset.schema` still tells their shape.
* Every batch holds exactly `batch_size` rows except the last one.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import InputError, InputWarning, first_line
from pipeline.io.readers import ParquetReader, as_text, rechunk, skip_rows, valid_text
from pipeline.io.remote import RemoteFile
from pipeline.io.stdin import NAME as STDIN_NAME
from pipeline.io.stdin import STDIN

__all__ = ["Dataset", "agree_on_id_type", "optional_column"]

TEXT_COLUMN = "puzzle"  # the single column of a `.txt` file
_INTEGER_TEXT = r"^-?(0|[1-9][0-9]{0,17})$"  # ids that fit an int64 id column (columns.py)


class _Reader(Protocol):
    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]: ...


@dataclass(frozen=True)
class Dataset:
    """An opened input: what it is, which columns matter, and `batches()` to stream it."""

    path: Path  # Path("-") for standard input
    format: str  # "csv" | "tsv" | "parquet" | "txt"
    compression: str | None  # None | "gzip" | "zstd"
    columns: list[str]  # every column as read, repeated names told apart (a, a -> a, a_2); []
    # for an empty CSV without a header or a Parquet file without columns
    puzzle_column: str
    solution_column: str | None
    id_column: str | None
    size_bytes: int  # of the file as stored (compressed size for .gz/.zst); 0 for stdin
    num_rows: int | None  # known without reading for Parquet only
    batch_size: int
    _reader: _Reader | ParquetReader | None = field(repr=False, compare=False)
    _id_type: pa.DataType = field(repr=False, compare=False, default=pa.string())
    _id_type_seen: bool = field(repr=False, compare=False, default=True)  # False: no id to see
    _row_bytes: float | None = field(repr=False, compare=False, default=None)  # in the head
    _rows_read: list[int] = field(repr=False, compare=False, default_factory=lambda: [0])
    _ids_said: list[bool] = field(repr=False, compare=False, default_factory=lambda: [False])
    has_header: bool = False  # CSV/TSV: the first line named the columns
    separator: str | None = None  # CSV/TSV: the field separator, given or sniffed
    header_note: str | None = None  # a header guessed from content alone, said in a sentence
    layout: str | None = None  # the known layout its header names (`layouts.py`)
    extra_columns: dict[str, str] = field(default_factory=dict)  # input name -> result name
    extra_schema: pa.Schema = field(default_factory=lambda: pa.schema([]))  # by result name
    stream: bool = False  # standard input or a named pipe: read once, no second pass
    url: str | None = None  # an input at a URL: the URL, as shown (no password)
    _remote: RemoteFile | None = field(repr=False, compare=False, default=None)

    @property
    def from_stdin(self) -> bool:
        return self.url is None and str(self.path) == STDIN

    @property
    def location(self) -> str:
        """Where the input is, as given: a path, `-`, or a URL (as shown: no password)."""
        return self.url if self.url is not None else str(self.path)

    @property
    def remote_file(self) -> RemoteFile | None:
        """The file at the URL this input is read from (None for a path or standard input)."""
        return self._remote

    def identity(self) -> dict[str, object]:
        """What makes a checkpoint belong to this input: the file as it is now (its size and
        time, or a remote file's size, ETag, ...); a stream has nothing to tell it by."""
        if self.stream:
            return {"input": self.location}
        if self._remote is not None:
            return self._remote.identity()
        stat = self.path.stat()
        return {
            "input": str(self.path.resolve()),
            "input size": stat.st_size,
            "input mtime": stat.st_mtime_ns,
        }

    @property
    def renamed(self) -> dict[str, str]:
        """The passed-through columns whose name clashed with a result column's: input name ->
        name in the results (`clues` -> `input_clues`)."""
        return {old: new for old, new in self.extra_columns.items() if old != new}

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch: row, [id], puzzle, [solution], then the extra columns."""
        fields = [pa.field("row", pa.int64())]
        if self.id_column is not None:
            fields.append(pa.field("id", self._id_type))
        fields.append(pa.field("puzzle", pa.string()))
        if self.solution_column is not None:
            fields.append(pa.field("solution", pa.string()))
        return pa.schema(fields + list(self.extra_schema))

    def batches(self, start_row: int = 0, numbered_from: int = 0) -> Iterator[pa.RecordBatch]:
        """Stream rows `start_row`, `start_row + 1`, ... as batches of `batch_size` rows
        (`numbered_from`: the `row` of the reader's first row, for a slice of the input that
        a worker reads, `io.slices`).

        Columns: `row` (int64, 0-based input position), `id` (when there is one, see the
        module docstring for its type), `puzzle` and `solution` (when there is one) as strings,
        then the extra columns (`extra_schema`). Rows before `start_row` are read and dropped
        (Parquet skips whole row groups unread). Read errors part-way (a truncated .gz, say)
        raise `InputError`; so does a second call for standard input.
        """
        if start_row < 0:
            raise InputError(f"start_row must be >= 0, not {start_row}")
        if self._reader is None:
            return
        wanted = [(self.id_column, "id"), (self.puzzle_column, "puzzle")]
        wanted.append((self.solution_column, "solution"))
        wanted += list(self.extra_columns.items())
        source = [name for name, _ in wanted if name is not None]
        names = [new for name, new in wanted if name is not None]
        try:
            if isinstance(self._reader, ParquetReader):
                raw = self._reader.batches(source, self.batch_size, start_row)
            else:
                raw = skip_rows(self._reader.batches(source), start_row)
            row = start_row + numbered_from
            for batch in rechunk(self._normalized(raw, names, row), self.batch_size):
                rows = pa.array(np.arange(row, row + batch.num_rows, dtype=np.int64))
                row += batch.num_rows
                self._rows_read[0] = row
                yield pa.RecordBatch.from_arrays([rows, *batch.columns], schema=self.schema)
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{self._name}: read failed ({first_line(e)})") from None

    def estimated_rows(self) -> int | None:
        """The number of rows, when known (`num_rows`), else an estimate for a progress bar's
        ETA: the file's size over the bytes per line of its first lines, or for a compressed
        file the rows read so far scaled by the share of its stored bytes read; None when
        nothing can be said yet (or ever: standard input)."""
        rows_read = self._rows_read[0]
        if self.num_rows is not None:
            return self.num_rows
        if not self.size_bytes:
            return None
        if self.compression is None and self._row_bytes:  # rows are much alike in size
            return max(rows_read, round(self.size_bytes / self._row_bytes))
        bytes_read = getattr(self._reader, "bytes_read", lambda: None)()
        if not bytes_read or not rows_read:
            return None
        return max(rows_read, round(rows_read * self.size_bytes / bytes_read))

    @property
    def _name(self) -> str:
        return STDIN_NAME if self.from_stdin else self.location

    def _normalized(
        self, raw: Iterator[pa.RecordBatch], names: list[str], row: int
    ) -> Iterator[pa.RecordBatch]:
        for batch in raw:
            yield self._normalize(batch, names, row)
            row += batch.num_rows

    def _normalize(self, batch: pa.RecordBatch, names: list[str], row: int) -> pa.RecordBatch:
        """Rename to id/puzzle/solution/extras; puzzle and solution plain strings, the id of
        its type, extras with dictionaries decoded; text from Parquet made valid UTF-8. `row`:
        the batch's first row, for the warning of an id that does not fit its column's type."""
        parquet = isinstance(self._reader, ParquetReader)
        arrays = []
        for name, array in zip(names, batch.columns, strict=True):
            if name in ("puzzle", "solution"):
                array = as_text(array)
            else:
                if pa.types.is_dictionary(array.type):
                    array = array.dictionary_decode()
                if parquet:  # Parquet does not check that its strings are UTF-8
                    array = valid_text(array)
                if name == "id":
                    array = self._ids(array, row)
            arrays.append(array)
        return pa.RecordBatch.from_arrays(arrays, names=names)

    def _ids(self, array: pa.Array, row: int) -> pa.Array:
        """`_as_ids`, and the first id that does not fit said once (`InputWarning`): its row
        stays, its id null, but never silently."""
        ids = _as_ids(array, self._id_type)
        if self._ids_said[0] or ids.null_count == array.null_count:
            return ids
        lost = pc.and_(pc.is_null(ids), pc.is_valid(array))
        first = pc.index(lost, True).as_py()
        self._ids_said[0] = True
        warnings.warn(
            f"{self._name}: row {row + first}'s id {str(array[first].as_py())[:40]!r} is not a "
            "whole number, as the ids of the first rows were: the row is kept, its id (and any "
            "later one like it) null",
            InputWarning,
            stacklevel=2,
        )
        return ids


def _as_ids(array: pa.Array, id_type: pa.DataType) -> pa.Array:
    """Ids of the column's type; from text to int64, an id that is no plain integer is null."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if array.type == id_type:
        return array
    if pa.types.is_int64(id_type) and pa.types.is_string(array.type):
        fits = pc.match_substring_regex(array, _INTEGER_TEXT)
        if not pc.all(pc.or_kleene(fits, pc.is_null(array))).as_py():
            array = pc.if_else(fits, array, pa.scalar(None, pa.string()))
    return pc.cast(array, id_type)


def agree_on_id_type(datasets: list[Dataset]) -> list[Dataset]:
    """Inputs read into one output, their ids of one type: an input whose sampled rows held no
    id (a header-only shard, ids left empty) takes the type of the first input whose ids said
    theirs, rather than the string its empty sample gives it alone."""
    seen = next((ds for ds in datasets if ds.id_column and ds._id_type_seen), None)
    if seen is None:
        return datasets
    return [
        ds if ds.id_column is None or ds._id_type_seen else replace(ds, _id_type=seen._id_type)
        for ds in datasets
    ]


def optional_column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    """A batch's column `name` (`id`, `solution`), or None when the input has none."""
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)

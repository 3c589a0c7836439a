"""A table written as a folder of arrays, one `.npy` per column: the shape training code loads
directly (`np.load(folder / "puzzle.npy", mmap_mode="r")`).

    arrays = column_arrays(table)        # each column as the numpy array it becomes
    NpyAppender(path, np.uint8, (81,))   # one .npy, appended to, its header written at the end

What each column becomes (decided here, once, for every job that writes `--format npy`):

* `puzzle` and `solution` (81-character strings; `grid_columns`): `uint8` arrays of shape
  `(n, 81)`, cells in row-major order, 0 for a blank; a null or malformed row is all zeros.
* numbers and booleans: an `(n,)` array of their own dtype; a fixed-size list of numbers
  (a symmetry's `relabel`, say): `(n, k)`. Nulls: NaN in floats, the dtype's zero in other
  columns, and in every column a second file `<name>.valid.npy` (`bool`, False where the value
  is null: a NaN may be a value too), made the first time a null comes (the rows before it
  are all valid).
* dictionary columns (a verdict, a grade): their codes, as integers; the labels are in
  `meta.json` (`labels`), code i naming `labels[i]`.
* every other column (free text such as an `id`, nested values): skipped, and named in
  `meta.json` (`skipped`) and by `skipped_columns` so a job can say so. The Parquet output
  holds them all: numpy's fixed-width text cannot be streamed without a second pass.

One file of rows is written by `NpyAppender` in bounded memory: its header's shape is a
placeholder until the end, padded to a fixed size (room for any row count) so it never grows.
The folder around the files, `meta.json`, the temporary folder renamed into place and the
output checks are `array_folders.py`'s.
"""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import CELLS, parse_puzzles

GRID_COLUMNS = ("puzzle", "solution")
VALID_SUFFIX = ".valid"  # `<name>.valid.npy`: False where a column's value is null
_MAGIC = b"\x93NUMPY\x01\x00"  # format version 1.0: a 2-byte header length
_ALIGN = 64  # numpy aligns the data that follows the header to 64 bytes
_LARGEST = 2**63 - 1  # the longest row count a header must find room for


# --- what a column becomes ---------------------------------------------------------------------


def column_kind(field: pa.Field, grid_columns: Iterable[str] = GRID_COLUMNS) -> str | None:
    """How a column is written: `grid`, `number`, `list` (fixed-size list of numbers),
    `codes` (a dictionary column) or None (skipped)."""
    t = field.type
    if field.name in grid_columns and (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return "grid"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return "number"
    if pa.types.is_fixed_size_list(t) and _is_number(t.value_type):
        return "list"
    if pa.types.is_dictionary(t):
        return "codes"
    return None


def _is_number(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def column_layout(
    schema: pa.Schema, grid_columns: Iterable[str] = GRID_COLUMNS
) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """The files a table of `schema` becomes: column -> (dtype, the shape of one row)."""
    layout = {}
    grids = tuple(grid_columns)
    for field in schema:
        kind = column_kind(field, grids)
        if kind == "grid":
            layout[field.name] = (np.dtype(np.uint8), (CELLS,))
        elif kind == "number":
            layout[field.name] = (np.dtype(field.type.to_pandas_dtype()), ())
        elif kind == "list":
            dtype = np.dtype(field.type.value_type.to_pandas_dtype())
            layout[field.name] = (dtype, (field.type.list_size,))
        elif kind == "codes":
            layout[field.name] = (np.dtype(field.type.index_type.to_pandas_dtype()), ())
    return layout


def skipped_columns(schema: pa.Schema, grid_columns: Iterable[str] = GRID_COLUMNS) -> list[str]:
    """The columns of `schema` that a folder of arrays leaves out (see the module)."""
    grids = tuple(grid_columns)
    return [field.name for field in schema if column_kind(field, grids) is None]


def column_arrays(
    data: pa.Table | pa.RecordBatch, grid_columns: Iterable[str] = GRID_COLUMNS
) -> dict[str, Any]:
    """One batch's columns as numpy arrays, as `NpyFolder.append` takes them: the work that
    grows with rows, done where the batch is (a worker). A column with nulls (other than
    grids and floats) comes as `(values, valid)`; a dictionary column as `(codes, labels)`."""
    table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
    grids = tuple(grid_columns)
    arrays: dict[str, Any] = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        kind = column_kind(field, grids)
        if kind is None:
            continue
        array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if kind == "grid":
            arrays[field.name] = parse_puzzles(array).grids
        elif kind == "codes":
            labels = array.dictionary.to_pylist() if len(array) else []
            arrays[field.name] = _with_valid(array.indices, labels)
        elif kind == "list":
            size = field.type.list_size
            flat = array.values.slice(array.offset * size, len(array) * size)
            flat = pc.fill_null(flat, False if pa.types.is_boolean(flat.type) else 0)
            values = _numbers(flat).reshape(len(array), size)
            arrays[field.name] = _valid_pair(values, array)
        else:
            arrays[field.name] = _with_valid(array, None)
    return arrays


def column_blocks(arrays: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, list[Any]]]:
    """`column_arrays`' columns as plain arrays (`io.array_parts`' blocks): each column by its
    name, a valid mask as `<name>.valid`; and the labels of the dictionary columns."""
    blocks: dict[str, np.ndarray] = {}
    labels: dict[str, list[Any]] = {}
    for name, value in arrays.items():
        if isinstance(value, tuple) and isinstance(value[1], list):  # (codes, labels)
            value, labels[name] = value
        if isinstance(value, tuple):  # (values, valid)
            value, blocks[name + VALID_SUFFIX] = value
        blocks[name] = value
    return blocks, labels


def _numbers(array: pa.Array) -> np.ndarray:
    if pa.types.is_boolean(array.type):
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.bool_)
    return array.to_numpy(zero_copy_only=False)


def _with_valid(array: pa.Array, labels: list[Any] | None) -> Any:
    if array.null_count:
        floats = pa.types.is_floating(array.type)  # NaN where null: numpy's own missing mark
        zero = False if pa.types.is_boolean(array.type) else 0
        filled = array if floats else pc.fill_null(array, zero)
        valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
        values = (_numbers(filled), valid)
    else:
        values = _numbers(array)
    return values if labels is None else (values, labels)


def _valid_pair(values: np.ndarray, array: pa.Array) -> Any:
    if not array.null_count:
        return values
    return values, np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)


# --- one .npy file, appended to ----------------------------------------------------------------


def _header(dtype: np.dtype, rows: int, row_shape: tuple[int, ...], size: int) -> bytes:
    """A version 1.0 `.npy` header of exactly `size` bytes (0: as short as numpy aligns it)."""
    shape = (rows, *row_shape)
    descr = np.lib.format.dtype_to_descr(dtype)
    body = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': {shape!r}, }}".encode()
    if size == 0:
        size = -(-(len(_MAGIC) + 2 + len(body) + 1) // _ALIGN) * _ALIGN
    room = size - len(_MAGIC) - 2 - len(body) - 1
    if room < 0:
        raise ValueError(f"a .npy header of {len(body)} bytes does not fit in {size}")
    padded = body + b" " * room + b"\n"
    return _MAGIC + len(padded).to_bytes(2, "little") + padded


class NpyAppender:
    """One `.npy` file written a block of rows at a time (see the module): the header holds a
    placeholder row count, padded to room for any count, until `close` writes the real one."""

    def __init__(self, path: Path, dtype: np.dtype, row_shape: tuple[int, ...] = ()) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)
        self.row_shape = tuple(row_shape)
        self.rows = 0
        self._size = len(_header(self.dtype, _LARGEST, self.row_shape, 0))
        self._row_bytes = self.dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64))
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._file.write(_header(self.dtype, 0, self.row_shape, self._size))
        self._file.flush()  # rows may be written at their place (`write_at`) from here on

    def _rows_of(self, values: np.ndarray) -> np.ndarray:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        if values.shape[1:] != self.row_shape:
            raise ValueError(
                f"{self.path.name}: rows of shape {values.shape[1:]}, expected {self.row_shape}"
            )
        return values

    def append(self, values: np.ndarray) -> None:
        """Append rows: `values` of shape `(k, *row_shape)`, cast to the file's dtype."""
        values = self._rows_of(values)
        if values.size:
            self._file.write(values.data.cast("B"))
        self.rows += len(values)

    def reserve(self, rows: int) -> int:
        """Room for `rows` more rows, to be written with `write_at` (a file written so is not
        appended to); returns the number of the first."""
        first = self.rows
        self.rows += rows
        return first

    def write_at(self, first: int, values: np.ndarray) -> None:
        """Write rows reserved before (`reserve`) at their place, from any thread: the writes
        of several threads, each copying its rows into the system's page cache, overlap
        (`os.pwrite` releases the GIL)."""
        values = self._rows_of(values)
        if first + len(values) > self.rows:
            raise ValueError(
                f"{self.path.name}: rows {first}..{first + len(values)} were "
                f"not reserved ({self.rows} are)"
            )
        data = values.data.cast("B")
        offset = self._size + first * self._row_bytes
        fd = self._file.fileno()
        while len(data):
            written = os.pwrite(fd, data, offset)
            data, offset = data[written:], offset + written

    def place(self, rows: int) -> int:
        """Room for `rows` more rows, written by others (`io.array_parts.write_placed`, on
        Dask workers) at the byte offset returned, before `close`."""
        return self._size + self.reserve(rows) * self._row_bytes

    def close(self) -> None:
        """Write the header again with the real row count, and flush the file to disk."""
        if self._file.closed:
            return
        self._file.seek(0)
        self._file.write(_header(self.dtype, self.rows, self.row_shape, self._size))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def abandon(self) -> None:
        self._file.close()

"""A folder of arrays (`io.arrays`): its `.npy` files, `meta.json`, written beside the output
and renamed into place, and the checks of an output folder before any work.

    folder = check_array_folder("train", inputs=["x.csv"], force=False)   # or InputError, one line
    with OutputLock(folder), NpyFolder(folder, schema) as out:      # a temporary folder beside
        out.append(column_arrays(table))                            # any number of times
        out.commit(metadata)                                        # renamed into place

The folder also holds `meta.json`: the run's metadata (key `sudoku_pipeline`, as Parquet
outputs hold it), the rows, and each file's column, dtype and shape. It is what marks a
folder as this tool's result, which a rerun may replace.

Streaming in bounded memory: each `.npy` is written with a header whose shape is a
placeholder, rows are appended as they come, and the header is written again at the end with
the real row count; it is padded to a fixed size (room for any count) so it never grows.
Everything is written in a temporary folder beside the output (`.NAME.tmp-PID`, as a file
output's temporary file is named) and renamed into place at the end, so the output is the
old folder or the whole new one. Replacing an existing folder takes two renames (the old one
set aside as `.NAME.old-PID`, then deleted); what a killed run leaves of either is cleared by
the next run.

What `check_array_folder` refuses, before any work: a path that is a device, FIFO or socket, or an
input; a missing parent folder; an existing folder or file that is not a result of this tool,
unless `force` -- and even then a folder holding anything but `.npy` and `.json` files (a
folder of somebody's other work is never deleted).
"""

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.array_parts import PartFooter, Write
from pipeline.io.arrays import (
    GRID_COLUMNS,
    VALID_SUFFIX,
    NpyAppender,
    column_arrays,
    column_kind,
    column_layout,
    skipped_columns,
)
from pipeline.io.runinfo import METADATA_KEY
from pipeline.io.sidecars import (
    TEMPORARY,
    check_name_room,
    fsync_dir,
    output_stat,
    stale_files,
)

META = "meta.json"
OLD = ".{name}.old-{pid}"  # an output folder being replaced, set aside (as long as TEMPORARY)
_WRITE_ROWS = 1 << 16  # valid masks backfilled this many rows at a time


# --- the folder --------------------------------------------------------------------------------


class NpyFolder:
    """A table written as a folder of `.npy` files (see the module): in a temporary folder
    beside `path` until `commit` renames it into place; leaving the block without a commit
    deletes it. `prefix` starts every column's file name (`all__` for HRM's layout); files
    whose rows are not the table's (an index, say) are added with `add_file`."""

    def __init__(
        self,
        path: Path,
        schema: pa.Schema,
        grid_columns: Iterable[str] = GRID_COLUMNS,
        prefix: str = "",
    ) -> None:
        self.path = Path(path)
        self.prefix = prefix
        self.schema = schema
        grids = tuple(grid_columns)
        self.layout = column_layout(schema, grids)
        self.skipped = skipped_columns(schema, grids)
        self.kinds = {field.name: column_kind(field, grids) for field in schema}
        self.labels: dict[str, list[Any]] = {}
        self.rows = 0
        self.temporary = self.path.with_name(TEMPORARY.format(name=self.path.name, pid=os.getpid()))
        self._files: dict[str, NpyAppender] = {}
        self._valid: dict[str, NpyAppender] = {}
        self._own: dict[str, NpyAppender] = {}  # `add_file`'s, appended to by their owner

    def __enter__(self) -> "NpyFolder":
        clear_stale_folders(self.path)
        if self.temporary.exists():
            shutil.rmtree(self.temporary)
        self.temporary.mkdir()
        for name, (dtype, row_shape) in self.layout.items():
            self._files[name] = NpyAppender(
                self.temporary / f"{self.prefix}{name}.npy", dtype, row_shape
            )
        return self

    def add_file(self, name: str, dtype: Any, row_shape: tuple[int, ...] = ()) -> NpyAppender:
        """One more `.npy` in the folder, `name.npy`, that the caller appends to (its rows
        need not be the table's); finished and listed in `meta.json` by `commit`."""
        appender = NpyAppender(self.temporary / f"{name}.npy", np.dtype(dtype), row_shape)
        self._own[name] = appender
        return appender

    def __exit__(self, *exc: object) -> None:
        for appender in (*self._files.values(), *self._valid.values(), *self._own.values()):
            appender.abandon()
        if self.temporary.exists():
            shutil.rmtree(self.temporary, ignore_errors=True)

    def append(self, arrays: dict[str, Any]) -> None:
        """Append one batch, as `column_arrays` gives it (every column of the layout)."""
        rows = None
        for name, appender in self._files.items():
            values = arrays[name]
            valid = None
            if self.kinds[name] == "codes":
                values, labels = values
                values = self._remap(name, values, labels)
            if isinstance(values, tuple):
                values, valid = values
            if rows is None:
                rows = len(values)
            elif len(values) != rows:
                raise ValueError(f"column {name}: {len(values)} rows, expected {rows}")
            appender.append(values)
            if valid is not None or name in self._valid:
                self._append_valid(name, valid, len(values))
        self.rows += rows or 0

    def place(self, parts: list[PartFooter]) -> list[list[Write]]:
        """Lay out the parts that Dask workers kept (`io.array_parts`), in order, in the
        folder's files, as `append` would append them as batches: room made for their rows,
        and, for each part, the writes that fill it (`write_placed`, on the workers: no row
        through this process). Only for a folder with no rows yet."""
        assert self.rows == 0, "parts are placed in a folder of no rows"
        masked = [n for n in self._files if any(n + VALID_SUFFIX in p.blocks for p in parts)]
        for name in masked:  # made now: no rows before to mark valid
            self._mask(name)
        placed = []
        for part in parts:
            writes, rows = [], None
            for name, appender in self._files.items():
                n = part.rows(name)
                if rows is None:
                    rows = n
                elif n != rows:
                    raise ValueError(f"column {name}: {n} rows, expected {rows}")
                at, dtype, labels = appender.place(n), appender.dtype.str, part.labels.get(name)
                file = str(appender.path)
                if labels is not None and not self._same_codes(name, labels):
                    table = self._code_table(name, labels)
                    writes.append(Write("renumber", file, at, dtype, name, n, table))
                else:
                    writes.append(Write("copy", file, at, dtype, name, n))
                if name in self._valid:
                    mask = self._valid[name]
                    at, file, valid = mask.place(n), str(mask.path), name + VALID_SUFFIX
                    if valid in part.blocks:
                        writes.append(Write("copy", file, at, "|b1", valid, n))
                    else:  # no null in this part
                        writes.append(Write("fill", file, at, "|b1", rows=n, value=True))
            self.rows += rows or 0
            placed.append(writes)
        return placed

    def _same_codes(self, name: str, labels: list[Any]) -> bool:
        """Whether codes in `labels` are the folder's codes too (its labels so far start
        them, or they start its labels): any new labels added."""
        known = self.labels.setdefault(name, [])
        common = min(len(known), len(labels))
        if known[:common] != labels[:common]:
            return False
        known.extend(labels[len(known) :])
        return True

    def _remap(self, name: str, codes: Any, labels: list[Any]) -> Any:
        """A dictionary column's codes in the labels of the first batch (new ones added)."""
        if self._same_codes(name, labels):
            return codes
        table = np.array(self._code_table(name, labels))
        if isinstance(codes, tuple):
            return table[codes[0]], codes[1]
        return table[codes]

    def _code_table(self, name: str, labels: list[Any]) -> list[int]:
        """Each of `labels`' codes in the folder's labels (new ones added)."""
        known = self.labels[name]
        for label in labels:
            if label not in known:
                known.append(label)
        return [known.index(label) for label in labels] or [0]

    def _mask(self, name: str) -> NpyAppender:
        """The valid mask of column `name`, made the first time a null comes (the rows
        before were all valid)."""
        mask = self._valid.get(name)
        if mask is None:
            mask = NpyAppender(
                self.temporary / f"{self.prefix}{name}{VALID_SUFFIX}.npy", np.dtype(np.bool_)
            )
            self._valid[name] = mask
            for start in range(0, self.rows, _WRITE_ROWS):
                mask.append(np.ones(min(_WRITE_ROWS, self.rows - start), np.bool_))
        return mask

    def _append_valid(self, name: str, valid: np.ndarray | None, rows: int) -> None:
        self._mask(name).append(np.ones(rows, np.bool_) if valid is None else valid)

    def commit(
        self, metadata: dict[str, Any] | None = None, documents: dict[str, Any] | None = None
    ) -> None:
        """Finish every file, write `meta.json` (and `documents`: more JSON files, by name),
        and rename the folder into place."""
        files = {}
        for name, appender in (*self._files.items(), *self._valid.items(), *self._own.items()):
            appender.close()
            files[appender.path.name] = {
                "column": name,
                "dtype": appender.dtype.str,
                "shape": [appender.rows, *appender.row_shape],
            }
        meta = {
            METADATA_KEY.decode(): metadata or {},
            "rows": self.rows,
            "files": files,
            "labels": self.labels,
            "skipped": self.skipped,
        }
        for name, document in {**(documents or {}), META: meta}.items():
            with open(self.temporary / name, "w") as f:
                if name == META:
                    json.dump(document, f, indent=1, sort_keys=True, default=str)
                else:  # as its reader's own writer writes it (HRM's `dataset.json`)
                    json.dump(document, f)
                f.flush()
                os.fsync(f.fileno())
        _replace_folder(self.temporary, self.path)


def write_npy_folder(
    path: str | Path,
    schema: pa.Schema,
    tables: Iterable[pa.Table | pa.RecordBatch],
    metadata: dict[str, Any] | None = None,
    grid_columns: Iterable[str] = GRID_COLUMNS,
) -> int:
    """Write `tables` (of `schema`) as a folder of arrays at `path` (checked beforehand:
    `check_array_folder`). Returns the rows written."""
    grids = tuple(grid_columns)
    with NpyFolder(Path(path), schema, grids) as out:
        for table in tables:
            out.append(column_arrays(table, grids))
        out.commit(metadata)
        return out.rows


def _replace_folder(new: Path, path: Path) -> None:
    """Rename the folder `new` to `path`: into place when nothing is there, else with the old
    folder (or file) set aside first and deleted after."""
    try:
        os.rename(new, path)
    except OSError:
        if not os.path.lexists(path):
            raise
        aside = path.with_name(OLD.format(name=path.name, pid=os.getpid()))
        os.rename(path, aside)
        os.rename(new, path)
        _remove(aside)
    fsync_dir(path.parent)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def clear_stale_folders(path: Path) -> None:
    """Delete what killed runs left beside the output folder `path`: their temporary folders
    and old folders set aside (of processes that have ended; a running one's are its own)."""
    for form in (TEMPORARY, OLD):
        prefix, suffix = form.format(name=path.name, pid="\0").split("\0")
        for stale in stale_files(path.parent, prefix, suffix):
            _remove(stale)


# --- the output's checks -----------------------------------------------------------------------


def is_own_folder(path: Path) -> bool:
    """Whether `path` is a folder of arrays this tool wrote (its `meta.json` says so)."""
    try:
        with open(path / META) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and METADATA_KEY.decode() in meta


def _only_arrays(path: Path) -> bool:
    """Whether a folder holds nothing but files a folder of arrays holds (`.npy`, `.json`)."""
    with contextlib.suppress(OSError):
        return all(
            entry.is_file(follow_symlinks=False) and entry.name.endswith((".npy", ".json"))
            for entry in os.scandir(path)
        )
    return False


def check_array_folder(
    path: str | Path,
    what: str = "output folder",
    *,
    inputs: Iterable[str | Path] = (),
    force: bool = False,
) -> Path:
    """The output folder `path`, checked before any work (see the module). A symbolic link
    stands for its target. Returns the path to write; raises `InputError` (one line)."""
    if str(path) == "-":
        raise InputError("a folder of arrays (npy) cannot go to stdout: give -o FOLDER")
    out, info = output_stat(path, what)
    if not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such directory for the {what}")
    check_name_room(out, what)
    if info is None:
        return out
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        raise InputError(
            f"{out}: is not a folder or a regular file (a device, pipe or "
            f"socket); will not write the {what} there"
        )
    for source in inputs:
        with contextlib.suppress(OSError):
            source_path = Path(source)
            if os.path.samefile(out, source_path) or out in source_path.resolve().parents:
                raise InputError(
                    f"{out}: is or holds the input {source}; will not write over an input"
                )
    if stat.S_ISDIR(info.st_mode):
        if is_own_folder(out) or not any(out.iterdir()):
            return out
        if not force:
            raise InputError(
                f"{out}: exists and is not a result of sudoku-pipeline; use --force to replace it"
            )
        if not _only_arrays(out):
            raise InputError(
                f"{out}: holds files other than .npy and .json; will not delete "
                "it, even with --force: choose another -o"
            )
        return out
    if info.st_size and not force:
        raise InputError(
            f"{out}: exists and is not a result of sudoku-pipeline; use --force to replace it"
        )
    return out

"""A folder of arrays made from the parts the Dask workers kept (`augment --format npy|hrm`,
`run.sliced`), with no row through the client: the checkpoint's join for a folder, as
`join.py` is for a file.

    data = array_part_of(part.data)                       # on a worker: `parts.keep_part`'s
    laid = lay_out(paths, folder, "npy", schema, mapper)  # the workers fill the folder
    finish(laid, folder, "npy", metadata)                 # here: meta.json, put in place

Each part is one file of a batch's arrays, raw (`io.array_parts`). The client makes the
folder as one machine makes it (`io.array_folders.NpyFolder`, `io.hrm_folders.HrmSet`: the
same files, `meta.json`, `dataset.json`, a temporary folder renamed into place), but leaves
its rows to the workers: it reads each part's footer, makes room for the part's rows in each
file (`place`), and sends each part's writes to a worker (`write_placed`: the blocks copied
in the kernel into their places, a dictionary column's codes renumbered when its labels are
not the folder's, HRM's index files made). The client's own work is a footer a part and the
files' headers, whatever the rows (measured: `dask-client-augment`, docs/BENCHMARKS.md).
Every worker sees the folder being made: it is beside the checkpoint, which each worker was
checked to see before any work. A job that writes a folder of arrays does not resume
(augment): a stopped run leaves neither folder nor parts.
"""

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import CheckpointError
from pipeline.io.array_folders import NpyFolder
from pipeline.io.array_parts import Write, array_part_bytes, read_footer, write_placed
from pipeline.io.arrays import GRID_COLUMNS, column_blocks, skipped_columns
from pipeline.io.hrm_folders import HrmArrays, HrmSet, write_identifiers

ARRAY_FORMATS = ("npy", "hrm")
Mapper = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]  # on the workers
Folder = NpyFolder | HrmSet


def skipped_in(fmt: str, schema: pa.Schema) -> list[str]:
    """The columns of `schema` a folder of arrays in `fmt` leaves out (text), as its writer
    says them (`NpyFolder.skipped`; HRM's: of the columns beside the cells)."""
    return skipped_columns(schema, () if fmt == "hrm" else GRID_COLUMNS)


def array_part_of(data: Any) -> bytes:
    """A batch's arrays (`io.arrays.column_arrays`' for npy, `HrmArrays` for hrm) as the
    bytes of a part file."""
    if isinstance(data, HrmArrays):
        return data.part_bytes()
    return array_part_bytes(*column_blocks(data))


def lay_out(paths: list[Path], output: Path, fmt: str, schema: pa.Schema, mapper: Mapper) -> Folder:
    """The part files `paths` (in order) laid out by the workers (`mapper`) in the folder of
    arrays `output` in `fmt` (`schema`: its columns; for hrm, those beside the cells), being
    made beside it: returned open, for `finish` (or, on any error, to leave, which deletes
    it)."""
    output = Path(os.path.abspath(output))  # the workers' paths: not relative to their cwd
    paths = [Path(os.path.abspath(path)) for path in paths]
    folder: Folder = HrmSet(output, schema) if fmt == "hrm" else NpyFolder(output, schema)
    folder.__enter__()
    try:
        footers = []
        for path in paths:
            try:
                footers.append(read_footer(path))
            except ValueError as e:
                raise CheckpointError(f"{e}; run the command again") from None
        placed = folder.place(footers)
        for _ in mapper(_write_part, [(str(p), w) for p, w in zip(paths, placed, strict=True)]):
            pass
    except BaseException:
        folder.__exit__(None, None, None)
        raise
    return folder


def finish(folder: Folder, output: Path, fmt: str, metadata: dict[str, Any]) -> None:
    """The laid-out folder ended (its files' headers, `meta.json`) with the run's `metadata`
    and put in place; for hrm, `identifiers.json` beside it unless one is there."""
    try:  # entered by `lay_out`: left here, whatever happens
        folder.commit(metadata)
    finally:
        folder.__exit__(None, None, None)
    if fmt == "hrm":
        write_identifiers(output.parent, only_if_absent=True)


def _write_part(item: tuple[str, list[Write]]) -> None:
    write_placed(*item)

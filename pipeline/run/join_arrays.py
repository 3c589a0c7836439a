"""A folder of arrays joined from the parts the workers kept (`--format npy|hrm` on Dask,
`run.sliced`): the checkpoint's join for a folder, as `join.py` is for a file.

    data = array_part_of(part.data)                  # on a worker: `parts.keep_part`'s bytes
    join_array_parts(paths, folder, "npy", schema, metadata)     # on the client, in order

Each part is one file of the batch's arrays, raw (`io.array_parts`). The client makes the
folder as one machine makes it (`io.array_folders.NpyFolder`, `io.hrm_folders.HrmSet`: the
same files, `meta.json`, `dataset.json`, a temporary folder renamed into place), each block
copied in the kernel, never decoded: the client's own work is a footer a part, a dictionary
column's codes renumbered when its labels differ, and HRM's index files (8 bytes an example,
made, not read). Each part is deleted once copied: the join needs room for the folder and one
part, not for the folder twice. A job that writes a folder of arrays does not resume
(augment), so a stopped join keeps nothing.
"""

from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import CheckpointError
from pipeline.io.array_folders import NpyFolder
from pipeline.io.array_parts import ArrayPart, array_part_bytes
from pipeline.io.arrays import GRID_COLUMNS, column_blocks, skipped_columns
from pipeline.io.hrm_folders import HrmArrays, HrmSet, write_identifiers

ARRAY_FORMATS = ("npy", "hrm")


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


def join_array_parts(
    paths: list[Path], output: Path, fmt: str, schema: pa.Schema, metadata: dict[str, Any]
) -> None:
    """The part files `paths` (in order) joined into the folder of arrays `output` in `fmt`
    (`schema`: its columns; for hrm, those beside the cells), with the run's `metadata`, and
    put in place; each part deleted once copied."""
    out: NpyFolder | HrmSet = HrmSet(output, schema) if fmt == "hrm" else NpyFolder(output, schema)
    with out:
        for path in paths:
            try:
                part = ArrayPart(path)
            except ValueError as e:
                raise CheckpointError(f"{e}; run the command again") from None
            with part:
                out.copy_part(part)
            path.unlink()
        out.commit(metadata)
    if fmt == "hrm":
        write_identifiers(output.parent, only_if_absent=True)

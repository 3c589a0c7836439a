"""A part of a folder of arrays, as one file: what a Dask worker keeps of its batch when the
output is a folder of arrays (`npy`, HRM's layout), for the client to join without reading a
row (`run.join_arrays`).

    data = array_part_bytes(blocks, labels)          # on a worker: a batch's arrays, raw
    with ArrayPart(path) as part:                    # on the client
        part.copy("puzzle", appender)                # its rows copied in the kernel
        part.read("source")                          # or read, when they must change

The file holds each block (an array: a column's values, its valid mask, HRM's cells) as its
raw bytes, one after the other, then a JSON footer naming each block (where it starts, its
bytes, dtype and shape) and the labels of the dictionary columns, then the footer's length
(8 bytes, little-endian) and `MAGIC`. A block's bytes are those of the `.npy` file it joins,
so that the client copies them (`copy_file_range`) and never decodes them; only a dictionary
column whose labels are not the folder's so far is read, to renumber its codes (a few bytes a
row).
"""

import json
from typing import Any, BinaryIO

import numpy as np

from pipeline.io.arrays import NpyAppender

MAGIC = b"SPARRAYS"
_TAIL = 8 + len(MAGIC)


def array_part_bytes(blocks: dict[str, np.ndarray], labels: dict[str, list[Any]]) -> bytes:
    """The part file of `blocks` (name -> array, its rows first) and `labels` (a dictionary
    column's name -> its labels, code i naming `labels[i]`)."""
    chunks: list[bytes] = []
    described: dict[str, list[Any]] = {}
    at = 0
    for name, block in blocks.items():
        block = np.ascontiguousarray(block)
        data = block.tobytes()
        described[name] = [at, len(data), block.dtype.str, list(block.shape)]
        chunks.append(data)
        at += len(data)
    footer = json.dumps({"blocks": described, "labels": labels}, default=str).encode()
    return b"".join([*chunks, footer, len(footer).to_bytes(8, "little"), MAGIC])


class ArrayPart:
    """A part file (see the module), open for reading: its blocks by name (`blocks`: name ->
    (offset, bytes, dtype, shape)) and its dictionary columns' `labels`. ValueError when the
    file is not one (its end is not `MAGIC`, its footer does not read)."""

    def __init__(self, path: Any) -> None:
        self.path = path
        self.file: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self.file.seek(0, 2)
            size = self.file.tell()
            if size < _TAIL:
                raise ValueError(f"{path}: too short to be a part of a folder of arrays")
            self.file.seek(size - _TAIL)
            tail = self.file.read(_TAIL)
            length = int.from_bytes(tail[:8], "little")
            if tail[8:] != MAGIC or length > size - _TAIL:
                raise ValueError(f"{path}: not a part of a folder of arrays")
            self.file.seek(size - _TAIL - length)
            footer = json.loads(self.file.read(length))
            self.blocks: dict[str, tuple[int, int, np.dtype, tuple[int, ...]]] = {
                name: (int(at), int(nbytes), np.dtype(dtype), tuple(shape))
                for name, (at, nbytes, dtype, shape) in footer["blocks"].items()
            }
            self.labels: dict[str, list[Any]] = footer["labels"]
        except BaseException:
            self.file.close()
            raise

    def __enter__(self) -> "ArrayPart":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.file.close()

    def rows(self, name: str) -> int:
        """The rows of the block `name`."""
        return self.blocks[name][3][0]

    def read(self, name: str) -> np.ndarray:
        """The block `name`, read."""
        at, nbytes, dtype, shape = self.blocks[name]
        self.file.seek(at)
        data = self.file.read(nbytes)
        if len(data) != nbytes:
            raise OSError(f"{self.path}: shorter than it was")
        return np.frombuffer(data, dtype=dtype).reshape(shape)

    def copy(self, name: str, appender: NpyAppender) -> None:
        """The block `name` appended to the file of `appender`: copied in the kernel when it
        holds the file's dtype and row shape (as a worker's part does), else read and cast."""
        at, _, dtype, shape = self.blocks[name]
        if dtype == appender.dtype and shape[1:] == appender.row_shape:
            appender.copy_from(self.file, at, shape[0])
        else:
            appender.append(self.read(name))

"""A part of a folder of arrays, as one file, and the writes that lay it out in the folder's
files: how Dask workers write a folder of arrays (`npy`, HRM's layout) that no row of passes
through the client (`run.join_arrays`).

    data = array_part_bytes(blocks, labels)     # on a worker: a batch's arrays, raw
    footer = read_footer(path)                  # on the client: what the part holds
    writes = folder.place([footer, ...])        # where each block goes (`NpyFolder.place`)
    write_placed(path, writes[0])               # on a worker: the part laid out in the files

The file holds each block (an array: a column's values, its valid mask, HRM's cells and
group sizes) as its raw bytes, one after the other, then a JSON footer naming each block
(where it starts, its bytes, dtype and shape) and the labels of the dictionary columns, then
the footer's length (8 bytes, little-endian) and `MAGIC`.

A `Write` says what one `.npy` file of the folder gets at one offset: a block copied as it is
(in the kernel, `copy_file_range`) or cast, a dictionary column's codes renumbered into the
folder's labels, a run of one value (a mask's `True`s for a part with no nulls, HRM's
identifiers), HRM's example numbers or its groups' ends. Each write lands at a place of its
own, so the parts are laid out in any order, by any worker, and a write done twice writes the
same bytes again.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from pipeline.io.sidecars import copy_range

MAGIC = b"SPARRAYS"
_TAIL = 8 + len(MAGIC)
Block = tuple[int, int, np.dtype, tuple[int, ...]]  # offset, bytes, dtype, shape


def array_part_bytes(blocks: dict[str, np.ndarray], labels: dict[str, list[Any]]) -> bytes:
    """The part file of `blocks` (name -> array, its rows first) and `labels` (a dictionary
    column's name -> its labels, code i naming `labels[i]`)."""
    chunks: list[bytes] = []
    described: dict[str, list[Any]] = {}
    at = 0
    for name, block in blocks.items():
        data = np.ascontiguousarray(block).tobytes()
        described[name] = [at, len(data), block.dtype.str, list(block.shape)]
        chunks.append(data)
        at += len(data)
    footer = json.dumps({"blocks": described, "labels": labels}, default=str).encode()
    return b"".join([*chunks, footer, len(footer).to_bytes(8, "little"), MAGIC])


@dataclass(frozen=True)
class PartFooter:
    """What a part holds: its blocks by name, its dictionary columns' labels."""

    blocks: dict[str, Block]
    labels: dict[str, list[Any]]

    def rows(self, name: str) -> int:
        """The rows of the block `name`."""
        return self.blocks[name][3][0]


def read_footer(path: str | Path, file: Any = None) -> PartFooter:
    """The footer of the part at `path` (`file`: it, open); ValueError when it is not a part
    (its end is not `MAGIC`, its footer does not read)."""
    if file is None:
        with open(path, "rb") as f:
            return read_footer(path, f)
    file.seek(0, 2)
    size = file.tell()
    if size < _TAIL:
        raise ValueError(f"{path}: too short to be a part of a folder of arrays")
    file.seek(size - _TAIL)
    tail = file.read(_TAIL)
    length = int.from_bytes(tail[:8], "little")
    if tail[8:] != MAGIC or length > size - _TAIL:
        raise ValueError(f"{path}: not a part of a folder of arrays")
    file.seek(size - _TAIL - length)
    footer = json.loads(file.read(length))
    blocks = {
        name: (int(at), int(nbytes), np.dtype(dtype), tuple(shape))
        for name, (at, nbytes, dtype, shape) in footer["blocks"].items()
    }
    return PartFooter(blocks, footer["labels"])


class Write(NamedTuple):
    """One write into a file of the folder (see the module): `kind` is `copy` (the block
    `block`, as the file's `dtype`), `renumber` (the codes of `block` through the table
    `value`), `fill` (`rows` times `value`), `count` (`value`, `value` + 1, ... for `rows`)
    or `ends` (`value` plus the running sum of the group sizes in `block`)."""

    kind: str
    file: str
    offset: int
    dtype: str
    block: str = ""
    rows: int = 0
    value: Any = None


def write_placed(path: str | Path, writes: list[Write]) -> None:
    """On a worker: the part at `path` laid out by `writes` in the folder's files (opened,
    written at their places, fsynced)."""
    with open(path, "rb") as source:
        footer = read_footer(path, source)
        opened: dict[str, int] = {}
        try:
            for write in writes:
                if write.file not in opened:
                    opened[write.file] = os.open(write.file, os.O_WRONLY)
                _write(source, footer, write, opened[write.file], Path(path))
            for fd in opened.values():
                os.fsync(fd)
        finally:
            for fd in opened.values():
                os.close(fd)


def _write(source: Any, footer: PartFooter, write: Write, sink: int, path: Path) -> None:
    dtype = np.dtype(write.dtype)
    if write.kind == "copy":
        at, nbytes, held, _ = footer.blocks[write.block]
        if held == dtype:  # as a worker's part holds it: not a byte through this process
            copy_range(source.fileno(), at, sink, write.offset, nbytes, path)
            return
        values = _block(source, footer, write.block, path).astype(dtype)
    elif write.kind == "renumber":
        codes = _block(source, footer, write.block, path)
        values = np.asarray(write.value, dtype=dtype)[codes]
    elif write.kind == "fill":
        values = np.full(write.rows, write.value, dtype=dtype)
    elif write.kind == "count":
        values = np.arange(write.value, write.value + write.rows, dtype=dtype)
    elif write.kind == "ends":
        sizes = _block(source, footer, write.block, path)
        values = (write.value + np.cumsum(sizes, dtype=np.int64)).astype(dtype)
    else:
        raise ValueError(f"unknown write {write.kind!r}")
    data = memoryview(np.ascontiguousarray(values)).cast("B")
    offset = write.offset
    while len(data):
        done = os.pwrite(sink, data, offset)
        data, offset = data[done:], offset + done


def _block(source: Any, footer: PartFooter, name: str, path: Path) -> np.ndarray:
    at, nbytes, dtype, shape = footer.blocks[name]
    data = os.pread(source.fileno(), nbytes, at)
    if len(data) != nbytes:
        raise OSError(f"{path}: shorter than it was")
    return np.frombuffer(data, dtype=dtype).reshape(shape)

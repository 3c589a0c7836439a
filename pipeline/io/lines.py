"""Text inputs read line by line: one row per physical line, whatever the line holds.

The rules, the same for the sniffed head (`head_lines`) and for the stream (`LineStream`):

* Line breaks are `\\n`, `\\r\\n` and `\\r`; a UTF-8 byte order mark at the start is dropped.
* Every non-empty line is one row; empty lines are no rows. So a quoted CSV field cannot span
  lines: in a corpus of puzzles a field holding a line break is far less likely than a stray
  quote, and with this rule a stray quote costs one row (its own), never the rows after it.
* A line longer than `MAX_LINE_BYTES` is cut there (the rest of it is dropped): its row keeps
  its place and gets its cells from the first MiB, so memory stays bounded whatever the input.
* CSV fields follow RFC 4180 within their line (Python's `csv`, not strict): `"a ""b"" c"`
  is `a "b" c`; a quote opened and never closed runs to the end of its line; a quote inside an
  unquoted field is a plain character. A field is a cell of its column by position; missing
  fields and empty fields are null; fields past the last column are ignored.
* Cells stay bytes until they become strings (`as_text`): a cell that is not UTF-8 gets U+FFFD
  for its bad bytes, and only that cell.

The text is split with pyarrow's compute functions a block at a time (no Python per line);
how fast, against the pyarrow CSV reader it replaced, and what was tried and dropped, is in
docs/BENCHMARKS.md ("Ideas measured").
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_LINE_BYTES = 1 << 20  # longer lines are cut here
READ_BYTES = 1 << 20  # bytes read at a time
BOM = b"\xef\xbb\xbf"
_BREAKS = (b"\n", b"\r")
_WHITESPACE = pa.array([b" ", b"\t", b"\x0b", b"\x0c"], pa.binary())  # blank in a `.txt` line


class ByteStream(Protocol):
    def read(self, size: int, /) -> bytes: ...


Block = bytes | bytearray


class LineStream:
    """The non-empty lines of a byte stream, as binary arrays of about `READ_BYTES` each."""

    def __init__(self, stream: ByteStream, read_bytes: int = READ_BYTES) -> None:
        self.stream, self.read_bytes = stream, read_bytes

    def __iter__(self) -> Iterator[pa.BinaryArray]:
        for block in self.blocks():
            lines = split_lines(block)
            if len(lines):
                yield lines

    def blocks(self) -> Iterator[Block]:
        """Runs of whole lines; a line too long comes alone, cut to `MAX_LINE_BYTES`."""
        carry, cutting, first = b"", False, True
        while data := self._read(carry):
            if first:
                if data.startswith(BOM):
                    del data[: len(BOM)]
                first = False
            end = max(data.rfind(b"\n", len(carry)), data.rfind(b"\r", len(carry)))
            if end < 0:  # no line ends here: the line goes on (and on)
                if cutting:
                    continue
                carry = bytes(data)
                if len(carry) > MAX_LINE_BYTES:
                    carry, cutting = carry[:MAX_LINE_BYTES], True
                continue
            rest = bytes(data[end + 1 :])
            del data[end + 1 :]
            if cutting:  # the long line ends in `data`: the cut line alone, then the others
                yield carry
                del data[: _first_break(data) + 1]
                cutting = False
            if data:
                yield data
            carry = rest
        if carry:
            yield carry

    def _read(self, carry: bytes) -> bytearray:
        """`carry` and then up to `read_bytes` read, in a new buffer (one copy: `readinto`)."""
        data = bytearray(len(carry) + self.read_bytes)
        data[: len(carry)] = carry
        readinto = getattr(self.stream, "readinto", None)
        if readinto is not None:
            got = readinto(memoryview(data)[len(carry) :])
        else:
            more = self.stream.read(self.read_bytes)
            got = len(more)
            data[len(carry) : len(carry) + got] = more
        if not got:
            return bytearray()
        del data[len(carry) + got :]
        return data


def _first_break(data: Block) -> int:
    found = [i for i in (data.find(b) for b in _BREAKS) if i >= 0]
    return min(found)


def split_lines(block: Block) -> pa.BinaryArray:
    """The non-empty lines of `block` (any line breaks), each cut to `MAX_LINE_BYTES`."""
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    size = len(block) - block.endswith(b"\n")
    offsets = pa.py_buffer(np.array([0, size], np.int32))
    whole = pa.BinaryArray.from_buffers(pa.binary(), 1, [None, offsets, pa.py_buffer(block)])
    lines = pc.split_pattern(whole, b"\n").flatten()
    lengths = np.diff(np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, lines.offset * 4))
    if not lengths.all():
        lines = lines.filter(pa.array(lengths > 0))
    if size > MAX_LINE_BYTES and lengths.max() > MAX_LINE_BYTES:
        lines = pc.binary_slice(lines, 0, MAX_LINE_BYTES)
    return lines


def head_lines(head: bytes) -> list[bytes]:
    """The lines of a sniffed head, by the same rules as the stream."""
    return split_lines(head.removeprefix(BOM)).to_pylist()


def split_fields(line: bytes, delimiter: str) -> list[bytes]:
    """The fields of one line, quotes as in RFC 4180 within the line (see the module doc)."""
    text = line.decode("latin-1")  # one char per byte: the quote and delimiter are ASCII
    try:
        fields = next(csv.reader([text], delimiter=delimiter), [""])
    except csv.Error:  # a field over csv's size limit: plain split, quotes kept
        fields = text.split(delimiter)
    return [f.encode("latin-1") for f in fields]


def cells(
    lines: pa.BinaryArray, delimiter: str, indices: list[int], quotes: bool = True
) -> list[pa.BinaryArray]:
    """Fields `indices` of every line, as binary arrays (null when missing or empty).

    One vectorized split at every delimiter; a field quoted whole (`"..."`, no other quote in
    it) loses its quotes there too. Only the lines holding any other quote go through Python's
    `csv`. `quotes=False` says that no line holds a quote at all (skips looking for them).
    """
    parts = pc.split_pattern(lines, delimiter.encode())
    offsets = parts.offsets.to_numpy()
    starts, counts = offsets[:-1], np.diff(offsets)
    values = parts.values
    bounds = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4)
    sizes = np.diff(bounds)
    wrapped, odd = _quoting(values, bounds) if quotes else (None, None)
    out = []
    for i in indices:
        missing = counts <= i
        at = np.where(missing, 0, starts + i) if missing.any() else starts + i
        empty = sizes[at] == 0
        if wrapped is not None:
            strip = wrapped[at] & ~missing
            empty |= strip & (sizes[at] == 2)
        missing |= empty
        column = values.take(pa.array(at, mask=missing if missing.any() else None))
        if wrapped is not None and strip.any():
            column = pc.if_else(pa.array(strip), pc.binary_slice(column, 1, -1), column)
        out.append(column)
    if odd is not None and odd.any():  # lines with other quotes: Python's csv, line by line
        line_of = np.repeat(np.arange(len(lines)), counts)
        slow = np.unique(line_of[odd])
        rows = [split_fields(line, delimiter) for line in lines.take(pa.array(slow)).to_pylist()]
        for k, i in enumerate(indices):
            cells_i = [(r[i] or None) if i < len(r) else None for r in rows]
            out[k] = _scatter(out[k], slow, pa.array(cells_i, pa.binary()))
    return out


def _quoting(values: pa.BinaryArray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each field: whether it is quoted whole with no other quote (`wrapped`), and whether
    it holds quotes otherwise (`odd`: its line needs the full CSV rules)."""
    sizes = np.diff(bounds)
    if not bounds[-1]:  # no bytes at all, so no quotes
        return np.zeros(len(sizes), np.bool_), np.zeros(len(sizes), np.bool_)
    data = np.frombuffer(values.buffers()[2], np.uint8, bounds[-1])
    quote_at = np.flatnonzero(data[bounds[0] :] == ord('"')) + bounds[0]
    field = np.searchsorted(bounds, quote_at, side="right") - 1
    quotes = np.bincount(field, minlength=len(values))
    two = (quotes == 2) & (sizes >= 2)
    first = np.where(two, bounds[:-1], 0)
    last = np.where(two, bounds[1:] - 1, 0)
    wrapped = two & (data[first] == ord('"')) & (data[last] == ord('"'))
    return wrapped, (quotes > 0) & ~wrapped


def _scatter(column: pa.Array, at: np.ndarray, cells: pa.Array) -> pa.Array:
    """`column` with the values at positions `at` (ascending) replaced by `cells`."""
    order = np.arange(len(column))
    order[at] = len(column) + np.arange(len(at))
    return pa.concat_arrays([column, cells]).take(pa.array(order))


def text_lines(lines: pa.BinaryArray) -> pa.BinaryArray:
    """The lines of a `.txt` file that are rows: neither blank nor a `#` comment."""
    first = pc.binary_slice(lines, 0, 1)
    if pc.any(pc.is_in(first, value_set=_WHITESPACE)).as_py():
        drop = pc.match_substring_regex(lines, r"^[ \t\x0b\x0c]*(#|$)")
    else:
        drop = pc.equal(first, b"#")
    return lines.filter(pc.invert(drop))

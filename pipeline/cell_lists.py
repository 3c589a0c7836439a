"""Puzzles held as lists of cell values, the way a model's outputs come (a tensor's rows saved
as lists of 81 ints, 0 for a blank): made puzzle strings, a whole column at a time, so that
every reader of puzzles (`grid.parse_puzzles`) takes them as it takes text.

    cells_as_strings(pa.array([[5, 3, 0, ...], None]))   # ["53.…", None]

A list's values become its characters: 1-9 the digits, 0 a blank (`.`); any other value (or a
null inside a list) becomes `?`, a stray character, so its row is malformed with a message
naming the cell, never lost; a list of another length than 81 gives a row of that length,
malformed as text of that length is ("expected 81 cells, got 80"). A null list is a null.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

STRAY = ord("?")  # what a value outside 0-9 becomes: a character no puzzle holds


def is_cell_lists(kind: pa.DataType) -> bool:
    """Whether `kind` is a list (of any size or offsets) of integers."""
    lists = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    lists = lists or pa.types.is_fixed_size_list(kind) or pa.types.is_list_view(kind)
    return lists and pa.types.is_integer(kind.value_type)


def cells_as_strings(values: pa.Array) -> pa.StringArray:
    """A column of lists of ints (`is_cell_lists`) as puzzle strings (see the module)."""
    if pa.types.is_list_view(values.type):
        values = values.cast(pa.large_list(values.type.value_type))
    lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise ValueError(f"{offsets[-1]:,} cells do not fit one string array")
    cells = pc.list_flatten(values)  # a null list gives nothing, as its length 0 says
    digits = pc.fill_null(cells, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    data = np.full(len(digits), STRAY, np.uint8)
    good = (digits >= 0) & (digits <= 9)
    data[good] = digits[good] + ord("0")
    data[digits == 0] = ord(".")
    validity = None
    if values.null_count:
        validity = pa.py_buffer(
            np.packbits(values.is_valid().to_numpy(zero_copy_only=False), bitorder="little")
        )
    return pa.StringArray.from_buffers(
        len(values),
        pa.py_buffer(offsets.astype(np.int32)),
        pa.py_buffer(data),
        validity,
        values.null_count,
    )

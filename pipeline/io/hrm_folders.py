"""HRM's dataset layout: the folders that sapientinc/HRM's `dataset/build_sudoku_dataset.py`
writes and its `puzzle_dataset.py` (`PuzzleDataset`) loads, and the Tiny Recursive Model's
copies of them, unchanged.

    with HrmSet(out / "train", extras_schema, writers=2) as written:  # `out/train/`
        written.append(puzzles, solutions, group_sizes, extras)   # any number of times
        written.commit(metadata)                 # dataset.json, meta.json; renamed into place
    write_identifiers(out)                       # out/identifiers.json

A split's folder (`OUT/<split>/`) holds, for the one set `all`:

* `all__inputs.npy`, `all__labels.npy`: `(n, 81) uint8`, each cell its digit + 1 (a blank 1;
  0 is the padding HRM's batches add), the puzzles and their solutions, one row an example;
* `all__puzzle_identifiers.npy`: `(n,) int32`, all 0 (one puzzle kind: `<blank>`);
* `all__puzzle_indices.npy`: `(n + 1,) int32`, 0, 1, ..., n (every puzzle one example);
* `all__group_indices.npy`: `(groups + 1,) int32`, where each group's puzzles start, then n
  (a group is a puzzle and its augmented copies);
* `dataset.json`: `PuzzleDatasetMetadata`'s fields, in its order (`DATASET_FIELDS`);

and, beside them, what this tool adds and HRM's loader does not read: `meta.json` (the run's
metadata, as every folder of arrays holds it) and one `all__<column>.npy` per example for the
columns kept (`rating`, `source` as codes named in `meta.json`'s labels, `copy`, ...).
`OUT/identifiers.json` is `["<blank>"]`. The arrays are written as they come, in bounded
memory, by `array_folders.NpyFolder` (a temporary folder renamed into place).

A split folder written by a job of its own (`augment --format hrm -o sx/train`): the folder
rules of every folder of arrays (`array_folders.check_folder`), then
`write_identifiers(folder.parent, only_if_absent=True)`.
"""

import json
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.array_folders import NpyFolder
from pipeline.io.array_parts import PartFooter, Write, array_part_bytes
from pipeline.io.arrays import column_blocks
from pipeline.waiting import result_of

SET = "all"  # the one set of a Sudoku dataset (`metadata.sets`)
PREFIX = f"{SET}__"
DATASET = "dataset.json"
IDENTIFIERS = "identifiers.json"
FIELDS = ("inputs", "labels", "puzzle_identifiers", "puzzle_indices", "group_indices")
MAX_EXAMPLES = 2**31 - 1  # int32 indices: the most examples a set can count
MAX_WRITING = 2  # batches a writer thread may have queued (each holds its cells)
BLANK_IDENTIFIER = "<blank>"
CELL_BLOCKS = ("@inputs", "@labels", "@sizes")  # a part's cells and group sizes (`HrmArrays`)


def dataset_metadata(groups: int) -> dict[str, Any]:
    """`dataset.json` for a Sudoku set of `groups` groups: `PuzzleDatasetMetadata` as
    `build_sudoku_dataset.py` fills it (`model_dump()`'s order, `mean_puzzle_examples` a
    float as pydantic makes it)."""
    return {
        "pad_id": 0,
        "ignore_label_id": 0,
        "blank_identifier_id": 0,
        "vocab_size": 11,  # PAD + "0" ... "9"
        "seq_len": 81,
        "num_puzzle_identifiers": 1,
        "total_groups": groups,
        "mean_puzzle_examples": 1.0,
        "sets": [SET],
    }


def encode_cells(grids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """`(n, 81) uint8` grids (0 a blank) as HRM's tokens: each digit + 1, a blank 1 (`out`:
    in place, say, when it is `grids`)."""
    return np.add(grids, np.uint8(1), out=out, dtype=np.uint8)


def pencilmark_refusal(row: int, why: str = "") -> InputError:
    """The one-line error for a pencilmark puzzle (input row `row`) where HRM's arrays are
    asked for: they hold 81 cells a puzzle; `why`: what else refuses it."""
    return InputError(
        f"row {row} is a pencilmark puzzle: {why}HRM's arrays hold 81 cells "
        "a puzzle, and pencilmark puzzles do not fit them"
    )


@dataclass(frozen=True)
class HrmArrays:
    """A batch in HRM's layout, as `HrmSet.append(..., encoded=True)` takes it: the cells
    (digit + 1), examples per group, the other columns (`io.arrays.column_arrays`)."""

    inputs: np.ndarray
    labels: np.ndarray
    sizes: np.ndarray
    extras: dict[str, Any]

    def part_bytes(self) -> bytes:
        """The batch as a part file (`io.array_parts`), for the client to join
        (`HrmSet.copy_part`): the cells and group sizes as blocks of their own (`CELL_BLOCKS`,
        names no column has), the other columns beside."""
        blocks, labels = column_blocks(self.extras)
        inputs, cells, sizes = CELL_BLOCKS
        return array_part_bytes(
            {inputs: self.inputs, cells: self.labels, sizes: self.sizes, **blocks}, labels
        )


def write_identifiers(folder: Path, only_if_absent: bool = False) -> None:
    """`identifiers.json` at the top of a dataset folder: the one puzzle identifier's name
    (`only_if_absent`: a file of that name already there is left as it is)."""
    try:
        with open(Path(folder) / IDENTIFIERS, "x" if only_if_absent else "w") as f:
            json.dump([BLANK_IDENTIFIER], f)
    except FileExistsError:
        pass


class HrmSet:
    """One split of an HRM dataset (see the module), written a batch of groups at a time
    (`append`). With `writers`, nothing is written in the caller's thread: the cells (nine
    tenths of the bytes: 1.3 GB for 1M rows x 8 copies) by that many threads of its own, each
    batch's at its place (`NpyAppender.write_at`), the other files by one more, in order,
    while the caller makes the next batches. Copying into the system's page cache cost as much
    CPU as making the copies (0.5-0.8 GB/s a core, measured), and a write may wait for the
    disk (the system holds back writers when too much is waiting to go to disk)."""

    def __init__(self, path: Path, extras: pa.Schema, writers: int = 0) -> None:
        self.folder = NpyFolder(Path(path), extras, grid_columns=(), prefix=PREFIX)
        self.examples = 0
        self.groups = 0
        self.writers = writers
        self._pool: ThreadPoolExecutor | None = None
        self._in_order: ThreadPoolExecutor | None = None  # the files written row after row
        self._writing: deque[tuple[Future[None], Callable[[], None] | None]] = deque()

    def __enter__(self) -> "HrmSet":
        self.folder.__enter__()
        self._inputs = self.folder.add_file(PREFIX + "inputs", np.uint8, (81,))
        self._labels = self.folder.add_file(PREFIX + "labels", np.uint8, (81,))
        self._identifiers = self.folder.add_file(PREFIX + "puzzle_identifiers", np.int32)
        self._puzzles = self.folder.add_file(PREFIX + "puzzle_indices", np.int32)
        self._groups = self.folder.add_file(PREFIX + "group_indices", np.int32)
        self._puzzles.append(np.zeros(1, np.int32))
        self._groups.append(np.zeros(1, np.int32))
        if self.writers:
            self._pool = ThreadPoolExecutor(self.writers, thread_name_prefix="hrm-writer-")
            self._in_order = ThreadPoolExecutor(1, thread_name_prefix="hrm-writer-in-order")
        return self

    def __exit__(self, *exc: object) -> None:
        for pool in (self._pool, self._in_order):  # no write may outlive the files (nor
            if pool is not None:  # land in a file opened after them)
                pool.shutdown(wait=True, cancel_futures=True)
        self.folder.__exit__(*exc)

    def append(
        self,
        puzzles: np.ndarray,
        solutions: np.ndarray,
        group_sizes: np.ndarray,
        extras: dict[str, Any],
        *,
        encoded: bool = False,
        then: Callable[[], None] | None = None,
    ) -> None:
        """Append examples: `(n, 81) uint8` puzzles (0 a blank) and their solutions, grouped
        in runs of `group_sizes` (summing to n), and the extra columns per example as
        `io.arrays.column_arrays` gives them; `encoded`: the cells are HRM's already (each
        digit + 1, `encode_cells`). With `writers`, the cells are written later, from
        another thread: they must not change until `then` is called (in this thread, from a
        later `append` or `commit`). InputError past HRM's int32 indices."""
        n = len(puzzles)
        if int(np.sum(group_sizes)) != n or len(solutions) != n:
            raise ValueError(
                f"{n} puzzles, {len(solutions)} solutions, groups of {int(np.sum(group_sizes))}"
            )
        if self.examples + n > MAX_EXAMPLES:
            raise self._too_many()
        first = self._inputs.reserve(n)
        self._labels.reserve(n)
        ends = self.examples + np.cumsum(group_sizes, dtype=np.int64)
        self.examples += n
        self.groups += len(group_sizes)
        if not encoded:
            puzzles, solutions = encode_cells(puzzles), encode_cells(solutions)
        if self._pool is None or self._in_order is None:
            self._append_rows(first, ends, extras)
            self._write_cells(first, puzzles, solutions)
            if then is not None:
                then()
            return
        rows = self._in_order.submit(self._append_rows, first, ends, extras)
        cells = self._pool.submit(self._write_cells, first, puzzles, solutions)
        self._writing += [(rows, None), (cells, then)]
        self._written(wait=len(self._writing) > 2 * MAX_WRITING * self.writers)

    def _too_many(self) -> InputError:
        return InputError(
            f"{self.folder.path.name}: more than {MAX_EXAMPLES:,} examples, past what HRM's "
            "int32 indices count: ask fewer copies or a subsample"
        )

    def _written(self, wait: bool) -> None:
        """Take note of the cells written (all of them, when `wait`): a write's error (a full
        disk) is raised here; each batch's `then` is called."""
        while self._writing and (wait or self._writing[0][0].done()):
            future, then = self._writing.popleft()
            result_of(future)
            if then is not None:
                then()

    def place(self, parts: list[PartFooter]) -> list[list[Write]]:
        """Lay out the parts that Dask workers kept (`HrmArrays.part_bytes`), in order, as
        `append` would append them: room made for their examples, and for each part the
        writes that fill it (`io.array_parts.write_placed`, on the workers: the cells copied,
        HRM's index files made there; no row through this process). For a split of no
        examples yet."""
        inputs, labels, sizes = CELL_BLOCKS
        extras = self.folder.place(parts)
        placed = []
        for part, writes in zip(parts, extras, strict=True):
            n, groups = part.rows(inputs), part.rows(sizes)
            if self.examples + n > MAX_EXAMPLES:
                raise self._too_many()
            first = self.examples
            cells = [
                Write("copy", str(f.path), f.place(n), f.dtype.str, block, n)
                for f, block in ((self._inputs, inputs), (self._labels, labels))
            ]
            ids, numbers, ends = self._identifiers, self._puzzles, self._groups
            index = [
                Write("fill", str(ids.path), ids.place(n), ids.dtype.str, rows=n, value=0),
                Write("count", str(numbers.path), numbers.place(n), numbers.dtype.str,
                      rows=n, value=first + 1),
                Write("ends", str(ends.path), ends.place(groups), ends.dtype.str, sizes, groups,
                      first),
            ]  # fmt: skip
            self.examples += n
            self.groups += groups
            extra = next(iter(self.folder.layout), None)  # `NpyFolder.place`: they agree
            if extra is not None and part.rows(extra) != n:
                raise ValueError(f"{part.rows(extra)} rows of extra columns for {n} examples")
            placed.append([*cells, *index, *writes])
        return placed

    def _append_rows(self, first: int, ends: np.ndarray, extras: dict[str, Any]) -> None:
        """The files of one row an example (or a group), appended in order: examples `first`
        to `ends[-1]`, in groups ending at `ends`, and their extra columns."""
        n = (int(ends[-1]) if len(ends) else first) - first
        self._identifiers.append(np.zeros(n, np.int32))
        self._puzzles.append(np.arange(first + 1, first + n + 1, dtype=np.int32))
        self._groups.append(ends.astype(np.int32))
        self.folder.append(extras)
        if self.folder.layout and self.folder.rows != first + n:
            raise ValueError(f"{self.folder.rows - first} rows of extra columns for {n} examples")

    def _write_cells(self, first: int, inputs: np.ndarray, labels: np.ndarray) -> None:
        self._inputs.write_at(first, inputs)
        self._labels.write_at(first, labels)

    def commit(self, metadata: dict[str, Any] | None = None) -> None:
        """Finish the files, write `dataset.json` and `meta.json`, put the folder in place."""
        self._written(wait=True)
        self.folder.commit(metadata, {DATASET: dataset_metadata(self.groups)})

"""HRM's dataset layout: the folders that sapientinc/HRM's `dataset/build_sudoku_dataset.py`
writes and its `puzzle_dataset.py` (`PuzzleDataset`) loads, and the Tiny Recursive Model's
copies of them, unchanged.

    with HrmSet(out / "train", extras_schema) as written:   # one split: `out/train/`
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
"""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.array_folders import NpyFolder

SET = "all"  # the one set of a Sudoku dataset (`metadata.sets`)
PREFIX = f"{SET}__"
DATASET = "dataset.json"
IDENTIFIERS = "identifiers.json"
FIELDS = ("inputs", "labels", "puzzle_identifiers", "puzzle_indices", "group_indices")
MAX_EXAMPLES = 2**31 - 1  # int32 indices: the most examples a set can count
BLANK_IDENTIFIER = "<blank>"


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


def write_identifiers(folder: Path) -> None:
    """`identifiers.json` at the top of a dataset folder: the one puzzle identifier's name."""
    with open(Path(folder) / IDENTIFIERS, "w") as f:
        json.dump([BLANK_IDENTIFIER], f)


class HrmSet:
    """One split of an HRM dataset (see the module), written a batch of groups at a time."""

    def __init__(self, path: Path, extras: pa.Schema) -> None:
        self.folder = NpyFolder(Path(path), extras, grid_columns=(), prefix=PREFIX)
        self.examples = 0
        self.groups = 0

    def __enter__(self) -> "HrmSet":
        self.folder.__enter__()
        self._inputs = self.folder.add_file(PREFIX + "inputs", np.uint8, (81,))
        self._labels = self.folder.add_file(PREFIX + "labels", np.uint8, (81,))
        self._identifiers = self.folder.add_file(PREFIX + "puzzle_identifiers", np.int32)
        self._puzzles = self.folder.add_file(PREFIX + "puzzle_indices", np.int32)
        self._groups = self.folder.add_file(PREFIX + "group_indices", np.int32)
        self._puzzles.append(np.zeros(1, np.int32))
        self._groups.append(np.zeros(1, np.int32))
        return self

    def __exit__(self, *exc: object) -> None:
        self.folder.__exit__(*exc)

    def append(
        self,
        puzzles: np.ndarray,
        solutions: np.ndarray,
        group_sizes: np.ndarray,
        extras: dict[str, Any],
    ) -> None:
        """Append examples: `(n, 81) uint8` puzzles (0 a blank) and their solutions, grouped
        in runs of `group_sizes` (summing to n), and the extra columns per example as
        `io.arrays.column_arrays` gives them. InputError past HRM's int32 indices."""
        n = len(puzzles)
        if int(np.sum(group_sizes)) != n or len(solutions) != n:
            raise ValueError(
                f"{n} puzzles, {len(solutions)} solutions, groups of {int(np.sum(group_sizes))}"
            )
        if self.examples + n > MAX_EXAMPLES:
            raise InputError(
                f"{self.folder.path.name}: more than {MAX_EXAMPLES:,} examples, "
                "past what HRM's int32 indices count: ask fewer copies or "
                "a subsample"
            )
        self._inputs.append(puzzles + np.uint8(1))
        self._labels.append(solutions + np.uint8(1))
        self._identifiers.append(np.zeros(n, np.int32))
        self._puzzles.append(np.arange(self.examples + 1, self.examples + n + 1, dtype=np.int32))
        ends = self.examples + np.cumsum(group_sizes, dtype=np.int64)
        self._groups.append(ends.astype(np.int32))
        self.folder.append(extras)
        self.examples += n
        self.groups += len(group_sizes)

    def commit(self, metadata: dict[str, Any] | None = None) -> None:
        """Finish the files, write `dataset.json` and `meta.json`, put the folder in place."""
        self.folder.commit(metadata, {DATASET: dataset_metadata(self.groups)})

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

A dataset folder written whole by a job of its own (`augment --format hrm`: `OUT/train/`):

    folder = check_dataset_folder("sx", inputs=["train.csv"], force=False)  # or InputError
    with HrmDataset(folder) as dataset, dataset.split("train", extras_schema) as written:
        written.append(...)
        written.commit(metadata)
        dataset.commit(metadata)    # identifiers.json, meta.json; the folder put in place

Its `OUT/meta.json` (the run's metadata and the splits) marks it as this tool's, so that a
rerun replaces it; anything else follows `io.output_folders`' rules.
"""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.array_folders import META, NpyFolder
from pipeline.io.output_folders import check_output_folder, folder_in_making, put_in_place
from pipeline.io.runinfo import METADATA_KEY

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


def encode_cells(grids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """`(n, 81) uint8` grids (0 a blank) as HRM's tokens: each digit + 1, a blank 1 (`out`:
    in place, say, when it is `grids`)."""
    return np.add(grids, np.uint8(1), out=out, dtype=np.uint8)


def pencilmark_refusal(row: int, why: str = "") -> InputError:
    """The one-line error for a pencilmark puzzle (input row `row`) where HRM's arrays are
    asked for: they hold 81 cells a puzzle; `why`: what else refuses it."""
    return InputError(f"row {row} is a pencilmark puzzle: {why}HRM's arrays hold 81 cells "
                      "a puzzle, and pencilmark puzzles do not fit them")  # fmt: skip


def write_identifiers(folder: Path) -> None:
    """`identifiers.json` at the top of a dataset folder: the one puzzle identifier's name."""
    with open(Path(folder) / IDENTIFIERS, "w") as f:
        json.dump([BLANK_IDENTIFIER], f)


class HrmSet:
    """One split of an HRM dataset (see the module), written a batch of groups at a time:
    `append`; or, to write the cells from several threads, `add_groups` in order, then
    `write_cells` from any thread."""

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
        *,
        encoded: bool = False,
    ) -> None:
        """Append examples: `(n, 81) uint8` puzzles (0 a blank) and their solutions, grouped
        in runs of `group_sizes` (summing to n), and the extra columns per example as
        `io.arrays.column_arrays` gives them; `encoded`: the cells are HRM's already (each
        digit + 1, `encode_cells`). InputError past HRM's int32 indices."""
        n = len(puzzles)
        if int(np.sum(group_sizes)) != n or len(solutions) != n:
            raise ValueError(f"{n} puzzles, {len(solutions)} solutions, groups of "
                             f"{int(np.sum(group_sizes))}")  # fmt: skip
        first = self.add_groups(group_sizes, extras)
        if not encoded:
            puzzles, solutions = encode_cells(puzzles), encode_cells(solutions)
        self.write_cells(first, puzzles, solutions)

    def add_groups(self, group_sizes: np.ndarray, extras: dict[str, Any]) -> int:
        """Append groups of `group_sizes` examples, with their extra columns (as `append`),
        and reserve their cells, written by `write_cells` (from any thread, in any order);
        returns the number of their first example. InputError past HRM's int32 indices."""
        n = int(np.sum(group_sizes))
        if self.examples + n > MAX_EXAMPLES:
            raise InputError(f"{self.folder.path.name}: more than {MAX_EXAMPLES:,} examples, "
                             "past what HRM's int32 indices count: ask fewer copies or "
                             "a subsample")  # fmt: skip
        self._identifiers.append(np.zeros(n, np.int32))
        self._puzzles.append(np.arange(self.examples + 1, self.examples + n + 1, dtype=np.int32))
        ends = self.examples + np.cumsum(group_sizes, dtype=np.int64)
        self._groups.append(ends.astype(np.int32))
        self.folder.append(extras)
        if self.folder.layout and self.folder.rows != self.examples + n:
            raise ValueError(f"{self.folder.rows - self.examples} rows of extra columns for "
                             f"{n} examples")  # fmt: skip
        first = self._inputs.reserve(n)
        self._labels.reserve(n)
        self.examples += n
        self.groups += len(group_sizes)
        return first

    def write_cells(self, first: int, inputs: np.ndarray, labels: np.ndarray) -> None:
        """The cells of examples reserved by `add_groups` (`first`: its answer): HRM's tokens
        (`encode_cells`), puzzles and solutions, written at their place."""
        if len(inputs) != len(labels):
            raise ValueError(f"{len(inputs)} puzzles, {len(labels)} solutions")
        self._inputs.write_at(first, inputs)
        self._labels.write_at(first, labels)

    def commit(self, metadata: dict[str, Any] | None = None) -> None:
        """Finish the files, write `dataset.json` and `meta.json`, put the folder in place."""
        self.folder.commit(metadata, {DATASET: dataset_metadata(self.groups)})


class HrmDataset:
    """A dataset folder in HRM's layout written whole (see the module): its splits (`split`),
    `identifiers.json` and `meta.json`, in a temporary folder beside it until `commit`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.splits: list[str] = []

    def __enter__(self) -> "HrmDataset":
        self._making = folder_in_making(self.path)
        self.temporary = self._making.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._making.__exit__(None, None, None)

    def split(self, name: str, extras: pa.Schema) -> HrmSet:
        """The folder of the split `name` (`OUT/<name>/`), to write (`HrmSet`)."""
        self.splits.append(name)
        return HrmSet(self.temporary / name, extras)

    def commit(self, metadata: dict[str, Any]) -> None:
        """Write `identifiers.json` and `meta.json`, flush it all, put the folder in place."""
        write_identifiers(self.temporary)
        meta = {METADATA_KEY.decode(): metadata, "splits": self.splits}
        with open(self.temporary / META, "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True, default=str)
        put_in_place(self.temporary, self.path)


def is_own_dataset(folder: Path) -> bool:
    """Whether `folder` is a dataset folder this tool wrote whole, holding nothing else."""
    try:
        meta = json.loads((folder / META).read_text())
        splits = meta["splits"]
        ours = isinstance(meta[METADATA_KEY.decode()], dict) and isinstance(splits, list)
        return ours and {p.name for p in folder.iterdir()} <= {META, IDENTIFIERS, *splits}
    except (OSError, ValueError, KeyError, TypeError):
        return False


def check_dataset_folder(
    path: str | Path, *, inputs: Iterable[str | Path] = (), force: bool = False
) -> Path:
    """The dataset folder to write, checked before any work (`io.output_folders`' rules; an
    earlier dataset folder of this tool is replaced). Raises `InputError` (one line)."""
    return check_output_folder(path, "HRM dataset", "augment --format hrm", inputs=inputs,
                               force=force, is_own=is_own_dataset)  # fmt: skip

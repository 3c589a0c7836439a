"""What HRM's loader (github sapientinc/HRM, `puzzle_dataset.py`, `PuzzleDataset`; TRM's copies
of it) does with a dataset folder, written again here with numpy alone (the loader itself needs
torch): read `<split>/dataset.json` into `PuzzleDatasetMetadata`'s fields, load each set's five
arrays (inputs and labels memory-mapped), and batch them as `_iter_train` (a group picked at
random, then one of its puzzles at random, then examples of that puzzle) and `_iter_test`
(examples in order, each with its puzzle's identifier) do. The tests run a dataset through it
and check what a training run would see."""

import json
from pathlib import Path

import numpy as np

FIELDS = ("inputs", "labels", "puzzle_identifiers", "puzzle_indices", "group_indices")
METADATA = ("pad_id", "ignore_label_id", "blank_identifier_id", "vocab_size", "seq_len",
            "num_puzzle_identifiers", "total_groups", "mean_puzzle_examples", "sets")  # fmt: skip
IGNORE_LABEL_ID = -100  # HRM's `models.losses.IGNORE_LABEL_ID`


def load(folder: Path, split: str) -> tuple[dict, dict[str, dict[str, np.ndarray]]]:
    """`PuzzleDataset._load_metadata` and `_lazy_load_dataset`: the metadata (every field the
    pydantic model requires, none it lacks), then each set's fields."""
    metadata = json.loads((Path(folder) / split / "dataset.json").read_text())
    assert list(metadata) == list(METADATA)
    data = {}
    for name in metadata["sets"]:
        data[name] = {f: np.load(Path(folder) / split / f"{name}__{f}.npy",
                                 mmap_mode="r" if f in ("inputs", "labels") else None)
                      for f in FIELDS}  # fmt: skip
    return metadata, data


def check_contract(metadata: dict, arrays: dict[str, np.ndarray]) -> None:
    """The dtypes, shapes and index rules the loader relies on (as `build_sudoku_dataset.py`
    writes them: uint8 cells, int32 indices)."""
    n = len(arrays["inputs"])
    assert arrays["inputs"].dtype == arrays["labels"].dtype == np.uint8
    assert arrays["inputs"].shape == arrays["labels"].shape == (n, metadata["seq_len"])
    for f in ("puzzle_identifiers", "puzzle_indices", "group_indices"):
        assert arrays[f].dtype == np.int32
    assert (arrays["puzzle_identifiers"] == 0).all() and len(arrays["puzzle_identifiers"]) == n
    assert arrays["puzzle_indices"].tolist() == list(range(n + 1))
    groups = arrays["group_indices"]
    assert groups[0] == 0 and groups[-1] == n and (np.diff(groups) > 0).all()
    assert metadata["total_groups"] == len(groups) - 1
    assert arrays["inputs"].min() >= 1 and arrays["inputs"].max() <= 10  # digit + 1, blank 1
    assert arrays["labels"].min() >= 2  # solutions: no blanks (never the ignored 0)


def train_batches(metadata: dict, arrays: dict, batch_size: int, seed: int = 0) -> list[dict]:
    """One epoch of `_iter_train` (one replica): groups in a random order, from each a random
    puzzle, examples of it up to a full batch; the last, short batch dropped. Each batch as
    `_collate_batch` makes it (int32, the ignored label id swapped for IGNORE_LABEL_ID), with
    the example numbers it holds (`rows`)."""
    rng = np.random.Generator(np.random.Philox(seed=seed + 1))
    puzzles, groups = arrays["puzzle_indices"], arrays["group_indices"]
    order = rng.permutation(len(groups) - 1)
    batches, start = [], 0
    while start < len(order):
        rows, owners = [], []
        while start < len(order) and len(rows) < batch_size:
            group = order[start]
            puzzle = rng.integers(groups[group], groups[group + 1])
            start += 1
            first, size = puzzles[puzzle], int(puzzles[puzzle + 1] - puzzles[puzzle])
            take = min(size, batch_size - len(rows))
            rows += (first + rng.choice(size, take, replace=False)).tolist()
            owners += [puzzle] * take
        if len(rows) < batch_size:
            break
        batches.append(_collate(metadata, arrays, np.array(rows), np.array(owners)))
    return batches


def evaluation_batches(metadata: dict, arrays: dict, batch_size: int) -> list[dict]:
    """`_iter_test` (one replica): the examples in order, each with its puzzle's identifier,
    the last batch padded as `_collate_batch` pads it."""
    n = len(arrays["inputs"])
    batches = []
    for start in range(0, n, batch_size):
        rows = np.arange(start, min(n, start + batch_size))
        owners = np.searchsorted(arrays["puzzle_indices"], rows, side="right") - 1
        batches.append(_collate(metadata, arrays, rows, owners, pad_to=batch_size))
    return batches


def _collate(metadata, arrays, rows, owners, pad_to=None):  # noqa: ANN001, ANN202
    batch = {
        "inputs": np.asarray(arrays["inputs"][rows], np.int32),
        "labels": np.asarray(arrays["labels"][rows], np.int32),
        "puzzle_identifiers": np.asarray(arrays["puzzle_identifiers"][owners], np.int32),
        "rows": rows,
    }
    if metadata["ignore_label_id"] is not None:
        batch["labels"][batch["labels"] == metadata["ignore_label_id"]] = IGNORE_LABEL_ID
    if pad_to is not None and len(rows) < pad_to:
        pad = pad_to - len(rows)
        batch["inputs"] = np.pad(batch["inputs"], ((0, pad), (0, 0)),
                                 constant_values=metadata["pad_id"])  # fmt: skip
        batch["labels"] = np.pad(batch["labels"], ((0, pad), (0, 0)),
                                 constant_values=IGNORE_LABEL_ID)  # fmt: skip
    return batch


def grids(encoded: np.ndarray) -> np.ndarray:
    """HRM's tokens back to cells (0 a blank)."""
    return np.asarray(encoded, np.uint8) - 1

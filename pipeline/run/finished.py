"""A run whose output is complete already: `--resume` beside a Parquet output whose metadata
records a run of the same inputs (as they are now) and options leaves the output as it is (a
note says so) instead of doing the work again.

    finished = finished_output(out, "parquet", identity)        # (rows, counts by verdict) or None
    finished = finished_output(folder, "parquet", identity, dataset=True)    # `-o DIR/`

The checkpoint puts what its `run.json` said into the output's metadata (`RUN_KEY`) when it
joins it (`checkpoint.py`): a single file's footer, a dataset folder's `_manifest.json`
(`dataset_output.py`). CSV and JSON Lines outputs hold no metadata, so a `--resume` of one
that is complete runs again.

A single file is looked at here only when no checkpoint is beside it (the run loop's
`Run.open`): a checkpoint is a run to go on with, but for one whose join ended and whose
removal a stop cut short, which its journal tells (`Checkpoint.joined_already`). A dataset
folder is looked at first: its files are the checkpoint's parts, hard-linked, so a
checkpoint beside a complete folder of the same run is one that a stop between the folder's
rename and the checkpoint's removal left (or a rerun of the same command stopped mid-way):
nothing to do but remove it.
"""

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.runinfo import METADATA_KEY
from pipeline.run.dataset_output import MANIFEST, is_dataset

RUN_KEY = "checkpoint"  # the output's metadata: what the run's checkpoint said of it


def finished_output(
    output: Path, fmt: str, identity: dict[str, Any], dataset: bool = False
) -> tuple[int, dict[str, int]] | None:
    """The rows and the rows per verdict of a complete Parquet `output` (a file; with
    `dataset`, a dataset folder: every file its manifest lists, of the rows it says) whose
    metadata records a run of `identity` (the inputs as they are now, the options); None when
    it is not one (another format, another run, damaged, or no metadata to tell)."""
    if fmt != "parquet":
        return None
    try:
        if dataset:
            return _finished_folder(output, {**identity, "format": fmt})
        if not output.is_file():
            return None
        meta = pq.read_metadata(output)
        recorded = json.loads((meta.metadata or {}).get(METADATA_KEY, b"{}")).get(RUN_KEY)
        if recorded != {**identity, "format": fmt}:
            return None
        return meta.num_rows, _counts([output])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, pa.ArrowException):
        return None


def _finished_folder(folder: Path, identity: dict[str, Any]) -> tuple[int, dict[str, int]] | None:
    if not folder.is_dir() or not is_dataset(folder):
        return None
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    if manifest["metadata"].get(RUN_KEY) != identity:
        return None
    files = [folder / entry["file"] for entry in manifest["files"]]
    for path, entry in zip(files, manifest["files"], strict=True):
        if pq.read_metadata(path).num_rows != entry["rows"]:  # a footer read: the file whole
            return None
    return int(manifest["rows"]), _counts(files)


def _counts(files: list[Path]) -> dict[str, int]:
    """The rows per verdict of Parquet `files`."""
    import polars as pl  # off the path of a run that is not resumed

    counts: dict[str, int] = {}
    for path in files:
        verdicts = pq.read_table(path, columns=["verdict"]).column(0)
        counted = pl.Series(verdicts).cast(pl.String).value_counts()
        for value, n in zip(counted[:, 0].to_list(), counted[:, 1].to_list(), strict=True):
            counts[value] = counts.get(value, 0) + n
    return counts


__all__ = ["RUN_KEY", "finished_output"]

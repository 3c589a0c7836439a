"""A run's output as a Parquet dataset folder (`-o DIR/`, with `--executor dask`): the parts the
workers kept become the dataset's files, and no output byte passes through the client.

    DIR/part-00000.parquet      the parts, in input order (a lexical glob reads them in order;
    DIR/part-00001.parquet      the number is as wide as the largest needs, five digits at least)
    ...
    DIR/_manifest.json          the files, their rows and their first row's place in the
                                table (from their footers), and the run's metadata (what a
                                single file carries in its footer)

polars (`scan_parquet("DIR/*.parquet")`), DuckDB (`read_parquet('DIR/*.parquet')`) and
`pyarrow.dataset.dataset("DIR")` (which skips names that start with `_`) read it as one table,
its rows in input order with their `row` and `source`.

At the commit (`Checkpoint.commit`), the checkpoint's parts, checked to cover every row without
a gap, are hard-linked (renamed where a link cannot be made) into a temporary folder beside
the output (`io.output_folders.folder_in_making`), the manifest written, everything flushed,
and the folder renamed into place whole (`put_in_place`): a stopped commit leaves the
checkpoint as it was, for `--resume`. The folder is checked before any work as split's is
(`io.output_folders.check_output_folder`): a folder that is not empty and holds no earlier
dataset of this tool is refused unless `--force`, and even then only when it holds nothing but
Parquet and JSON files.
"""

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import InputError
from pipeline.io.output_folders import check_output_folder, folder_in_making, put_in_place
from pipeline.io.writers import join_parts

MANIFEST = "_manifest.json"
KIND = "sudoku-pipeline Parquet dataset"
WIDTH = 5  # digits of a file's number, at least


def wants_dataset(output: object) -> bool:
    """Whether the output given (`-o`) names a dataset folder: a path ending in `/`."""
    return isinstance(output, str | Path) and str(output).endswith(("/", os.sep)) and output != "/"


def check_dataset_folder(
    output: str | Path, command: str, *, fmt: str | None, inputs: list[str], force: bool
) -> Path:
    """The dataset folder `output` (`DIR/`), checked before any work; `InputError` otherwise."""
    if fmt not in (None, "parquet"):
        raise InputError(f"{output}: a dataset folder holds Parquet files, not {fmt}")
    return check_output_folder(
        str(output).rstrip("/" + os.sep),
        "Parquet dataset",
        command,
        inputs=inputs,
        force=force,
        is_own=is_dataset,
    )


def is_dataset(folder: Path) -> bool:
    """Whether `folder` holds an earlier dataset of this tool and nothing else (a rerun
    replaces it without --force)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        names = {entry.name for entry in folder.iterdir()}
        files = {f["file"] for f in manifest["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return manifest.get("kind") == KIND and names == files | {MANIFEST}


class Held(Protocol):
    """A part the checkpoint holds: its file."""

    @property
    def path(self) -> Path: ...


def write_dataset(
    parts: Sequence[Held], output: Path, empty: pa.Table, metadata: dict[str, Any]
) -> None:
    """The kept `parts` (in order, without a gap) made the dataset folder `output`, with its
    manifest (`metadata`: the run's); with no part, one file of no rows holds the schema."""
    width = max(WIDTH, len(str(len(parts) - 1)))
    with folder_in_making(output) as tmp:
        files = []
        start = 0
        for number, part in enumerate(parts):
            name = f"part-{number:0{width}d}.parquet"
            _link(part.path, tmp / name)
            rows = pq.read_metadata(tmp / name).num_rows  # the output's (enumerate's: more)
            files.append({"file": name, "rows": rows, "start": start})
            start += rows
        if not parts:  # the one writer's output of no rows (its Parquet options, checksums)
            name = f"part-{0:0{width}d}.parquet"
            with open(tmp / name, "wb") as sink:
                join_parts(sink, "parquet", [], empty, metadata)
            files.append({"file": name, "rows": 0, "start": 0})
        manifest = {
            "kind": KIND,
            "format": "parquet",
            "rows": sum(f["rows"] for f in files),
            "files": files,
            "metadata": metadata,
        }
        text = json.dumps(manifest, indent=2, sort_keys=True, default=str)
        (tmp / MANIFEST).write_text(text + "\n", encoding="utf-8")
        put_in_place(tmp, output)


def _link(source: Path, target: Path) -> None:
    """`source` at `target` too, no byte copied: a hard link (the checkpoint keeps its part
    until the folder is in place), else a rename."""
    try:
        os.link(source, target)
    except OSError:
        os.replace(source, target)


__all__ = ["MANIFEST", "check_dataset_folder", "is_dataset", "wants_dataset", "write_dataset"]

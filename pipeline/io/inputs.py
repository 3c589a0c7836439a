"""A job's inputs: one file, stdin, several files, or quoted globs, read one after the other.

    inputs = open_inputs(["part-*.csv", "extra.csv"], batch_size=50_000)   # or, expanded once:
    inputs = open_names(expand(["part-*.csv", "extra.csv"]), batch_size=50_000)
    for source, batch in inputs.batches():      # source: the input's index in inputs.names
        ...

A glob (`*`, `?`, `[...]`, `**` for any depth) that is not itself a file's name is expanded,
in sorted order; one that matches nothing is an error. An input may be a URL (`remote.py`):
`https://...` (its `?` starts a query, no glob), or `s3://`, `gs://`, `hf://`, ... through
fsspec, where a glob is the filesystem's to expand. Every input must have the same columns
(after detection: puzzle, solution, id) so that their rows can share one output; rows are
counted per input (each input's `row` starts at 0) and the job adds a `source` column naming
the input when there are several.
"""

import glob
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import InputError, InputNotFoundError
from pipeline.io.dataset import Dataset, agree_on_id_type
from pipeline.io.opening import open_dataset
from pipeline.io.remote import remote_glob
from pipeline.io.stdin import STDIN
from pipeline.io.urls import has_glob, is_url, shown

_GLOB_CHARS = set("*?[")


def expand(paths: str | Path | list[str | Path] | tuple[str | Path, ...]) -> list[str]:
    """The input names, globs expanded (sorted); `-` (stdin) at most once."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    if not given:
        raise InputError("no input given")
    names: list[str] = []
    for path in given:
        text = str(path)
        if is_url(text):  # a glob in an fsspec URL is the filesystem's to expand
            if not has_glob(text):
                names.append(text)
                continue
            matches = remote_glob(text)
            if not matches:
                raise InputError(f"{shown(text)}: no file matches")
            names += matches
        elif text != STDIN and _GLOB_CHARS & set(text) and not Path(text).exists():
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise InputNotFoundError(f"{text}: no file matches", text)
            names += matches
        else:
            names.append(text)
    if names.count(STDIN) > 1:
        raise InputError("stdin (-) can be read once only")
    return names


@dataclass
class Inputs:
    """The opened inputs of a job, in order."""

    names: list[str]
    datasets: list[Dataset]

    @property
    def several(self) -> bool:
        return len(self.datasets) > 1

    @property
    def first(self) -> Dataset:
        return self.datasets[0]

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch (the same for every input)."""
        return self.first.schema

    @property
    def has_ids(self) -> bool:
        return self.first.id_column is not None

    @property
    def num_rows(self) -> int | None:
        """Rows over every input, when every input knows its own (Parquet)."""
        counts = [ds.num_rows for ds in self.datasets]
        return None if any(n is None for n in counts) else sum(counts)  # type: ignore[misc]

    def estimated_rows(self, done: int = 0) -> int | None:
        """An estimate of the rows over every input for a progress bar, never below `done`."""
        estimates = [ds.estimated_rows() for ds in self.datasets]
        if any(e is None for e in estimates):
            return None
        return max(done, sum(estimates))  # type: ignore[arg-type]

    def batches(self, source: int = 0, start_row: int = 0) -> Iterator[tuple[int, pa.RecordBatch]]:
        """`(input index, batch)` for every batch from input `source`'s row `start_row` on."""
        for index in range(source, len(self.datasets)):
            first = start_row if index == source else 0
            for batch in self.datasets[index].batches(start_row=first):
                yield index, batch

    def identity(self) -> list[dict[str, Any]]:
        """What makes a checkpoint belong to these inputs: each one as it is now."""
        return [ds.identity() for ds in self.datasets]


def open_inputs(
    paths: str | Path | list[str | Path] | tuple[str | Path, ...], **options: Any
) -> Inputs:
    """Open every input (`options`: those of `open_dataset`); raises `InputError` for one that
    cannot be read, or whose columns differ from the first one's."""
    return open_names(expand(paths), **options)


def open_names(names: list[str], **options: Any) -> Inputs:
    """`open_inputs` of the names `expand` gave (globs expanded once, not again)."""
    if len(names) > 1:  # the job adds a `source` column: an input's own one passes renamed
        options = {**options, "reserved": (*options.get("reserved", ()), "source")}
    elif not options.get("reserved"):
        options.pop("reserved", None)
    datasets = agree_on_id_type([open_dataset(name, **options) for name in names])
    names = [shown(name) if is_url(name) else name for name in names]  # no password shown
    first = datasets[0]
    for name, ds in zip(names[1:], datasets[1:], strict=True):
        if ds.schema != first.schema:
            raise InputError(
                f"{name}: its columns ({_columns(ds.schema)}) differ from {names[0]}'s "
                f"({_columns(first.schema)})"
            )
    return Inputs(names, datasets)


def _columns(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)

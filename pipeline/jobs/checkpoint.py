"""Checkpoints beside the output, so that an interrupted run can go on where it stopped.

A run writes each finished batch, in input order, as one Arrow IPC file in `<output>.partial/`
(write to a temporary name, fsync, rename: a part is either whole or absent, even after
`kill -9` or a power cut). `run.json` there records what the run was (input identity and every
option that changes results), so `--resume` refuses a checkpoint of another run. At the end
the parts are merged into the output Parquet file, itself written to a temporary name and
renamed, and the checkpoint is removed.
"""

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import CheckpointError
from pipeline.io.output import write_atomically
from pipeline.io.runinfo import METADATA_KEY

_META = "run.json"
_PART = "part-{start:012d}.arrow"
_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")


class Checkpoint:
    """The `<output>.partial/` folder of one run."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.folder = output.with_name(output.name + ".partial")

    def exists(self) -> bool:
        return (self.folder / _META).exists()

    def start(self, identity: dict[str, Any]) -> None:
        """Begin afresh: drop any older checkpoint and record what this run is."""
        self.remove()
        for stale in self._stale_outputs():
            stale.unlink(missing_ok=True)
        self.folder.mkdir(parents=True)
        text = json.dumps(identity, indent=2, sort_keys=True).encode()
        write_atomically(self.folder / _META, lambda f: f.write(text))

    def resume(self, identity: dict[str, Any]) -> int:
        """Check the checkpoint belongs to this run; returns how many rows are done."""
        if not self.exists():
            raise CheckpointError(f"nothing to resume: no checkpoint at {self.folder}")
        recorded = json.loads((self.folder / _META).read_text())
        changed = sorted(k for k in identity.keys() | recorded.keys()
                         if identity.get(k) != recorded.get(k))  # fmt: skip
        if changed:
            raise CheckpointError(
                f"the checkpoint at {self.folder} is from a run with other "
                f"{', '.join(changed)}; run without --resume to start over"
            )
        # what a kill -9 mid-write leaves: half parts, and a half output from an ended merge
        for stale in [*self.folder.glob(".*.tmp-*"), *self._stale_outputs()]:
            stale.unlink(missing_ok=True)
        return self.rows_kept(drop_the_rest=True)

    def rows_kept(self, drop_the_rest: bool = False) -> int:
        """How many rows, from row 0 on without a gap, the parts hold; parts past a gap are
        useless, and deleted when `drop_the_rest`."""
        done = 0
        for start, path in self._parts():
            if start != done:
                if drop_the_rest:
                    path.unlink()
                continue
            done += _rows(path)
        return done

    def add(self, start: int, table: pa.Table) -> None:
        """Keep one finished batch (rows `start` .. `start + len(table) - 1`)."""

        def write(f: Any) -> None:
            with pa.ipc.new_file(f, table.schema, options=_IPC_OPTIONS) as writer:
                writer.write_table(table)

        write_atomically(self.folder / _PART.format(start=start), write)

    def merge(self, schema: pa.Schema, metadata: dict[str, Any]) -> Counter[str]:
        """Write every part, in order, into the output Parquet file (atomically, zstd, with the
        run's metadata as JSON under `METADATA_KEY`); returns verdict counts."""
        schema = schema.with_metadata({METADATA_KEY: json.dumps(metadata, sort_keys=True)})
        counts: Counter[str] = Counter()

        def write(f: Any) -> None:
            with pq.ParquetWriter(f, schema, compression="zstd") as writer:
                for _, path in self._parts():
                    with pa.memory_map(str(path)) as source:
                        table = pa.ipc.open_file(source).read_all()
                    for verdict, n in zip(*_value_counts(table.column("verdict")), strict=True):
                        counts[verdict] += n
                    writer.write_table(table.cast(schema))
                if not counts:
                    writer.write_table(schema.empty_table())

        write_atomically(self.output, write)
        return counts

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _stale_outputs(self) -> list[Path]:
        return list(self.output.parent.glob(f".{self.output.name}.tmp-*"))

    def _parts(self) -> list[tuple[int, Path]]:
        parts = []
        for path in self.folder.glob("part-*.arrow"):
            parts.append((int(path.stem.split("-")[1]), path))
        return sorted(parts)


def _rows(path: Path) -> int:
    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_file(source)
        return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))


def _value_counts(column: pa.ChunkedArray) -> tuple[list[str], list[int]]:
    counted = column.combine_chunks().dictionary_decode().value_counts()
    return counted.field("values").to_pylist(), counted.field("counts").to_pylist()

"""A checkpoint: where a resumable job's parts wait beside its output file (the run loop's
`checkpoint` sink, `run.loop`).

A run to a file keeps each finished part, as the worker encoded it, in `<output>.partial/`,
named `part-START-ROWS-SOURCE-FIRSTROW-CRC32.EXT` (written to a temporary name, fsynced,
renamed: a part is whole or absent, even after `kill -9` or a power cut). `run.json` there
records what the run is (the inputs' identity and every option that changes results), so
`--resume` refuses a checkpoint of another run, and says which file of a damaged checkpoint
is damaged. At the end the parts, checked to cover every row without a gap, are joined into
the output (Parquet by footers, text by concatenation; nothing is decoded) one at a time,
each deleted once copied (`join.py`: the join needs room for one part more, not for the output
twice, and an interrupted join is continued by `--resume`), and the checkpoint is removed.
Each part's counts (its verdicts) are noted as it is kept (`counts.jsonl`), for the journal of
the join. A job that does not resume (enumerate) keeps its parts here too, so that its output
appears whole or not at all.

`--resume` with no checkpoint, beside a Parquet output that is complete and was made from the
same inputs (as they are now) with the same options (its metadata records what the checkpoint
recorded), leaves that output as it is, with a note: the work is done (`finished.py`; the run
loop's `Run.open`).

On Dask (`run.sliced`), the workers keep the parts of their slices here themselves
(`parts.keep_part`), in any order, and the client notes their counts; a resume keeps the
parts past a gap (`resume(gaps=True)`), and a part kept twice (a task Dask ran twice) is kept
once (`_drop_repeats`, as it resumes or joins).

A run to stdout (`-o -`) writes each part as it comes (`io.writers.PartWriter`): it cannot be
resumed.
"""

import errno
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import CheckpointError, InputError
from pipeline.io.output import free_space, size_text
from pipeline.io.sidecars import CHECKPOINT, clear_stale_temporaries
from pipeline.io.writers import write_atomically
from pipeline.run.dataset_output import write_dataset
from pipeline.run.finished import RUN_KEY
from pipeline.run.join import JOURNAL, Copied, Waiting, join_freeing, joined_path, read_journal
from pipeline.run.join_arrays import Folder, Mapper, finish, lay_out
from pipeline.run.kept_parts import (
    COUNTS,
    META,
    START_OVER,
    StoredPart,
    check_folder_is_ours,
    check_part,
    list_parts,
    noted_counts,
)
from pipeline.run.parts import Part, keep_part, part_counts

_FREE_THEN_RESUME = "make room, then run the same command with --resume"
_NONE_KEPT = "nothing is kept (this command does not resume)"
_AGAIN = "once that is put right, run the command again"
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}  # errors that room (or a larger limit) ends
_FOOTER_ROOM = 1 << 16  # the joined output's footer and metadata, at most about


@dataclass
class Progress:
    """What a checkpoint holds: `rows` from the start without a gap, the input and row to go
    on from, and the rows per verdict."""

    rows: int = 0
    source: int = 0
    next_row: int = 0
    counts: dict[str, int] = field(default_factory=dict)


class Checkpoint:
    """The `<output>.partial/` folder of one run writing the file `output` in `fmt`; its
    parts' rows are counted by their values of the column `counted` (the job's verdicts; None:
    not counted). Made before any work, it refuses a folder of that name that is not a
    checkpoint (`check_ours`)."""

    def __init__(
        self,
        output: Path,
        fmt: str,
        counted: str | None = "verdict",
        record: bool = True,
        resumable: bool = True,
    ) -> None:
        self.output = output
        self.format = fmt
        self.counted = counted
        self.record = record  # run.json into the output's metadata (not augment's, on Dask)
        self.resumable = resumable  # else a failed run keeps nothing: its errors say so
        self.dataset = False  # `-o DIR/`: the parts become the files (`run.dataset_output`)
        self.head = b""  # text the joined output starts with (a CSV header no part carries)
        self.laid_out: Folder | None = None  # a folder of arrays the workers wrote (`lay_out`)
        self.folder = output.with_name(CHECKPOINT.format(name=output.name))
        self.check_ours()

    def exists(self) -> bool:
        return self.folder.exists()

    def check_ours(self) -> None:
        """Refuse (`InputError`, one line) a `<output>.partial` that is not a checkpoint of
        this tool (`kept_parts.check_folder_is_ours`): starting over deletes the folder."""
        check_folder_is_ours(self.folder)

    def start(self, identity: dict[str, Any]) -> None:
        """Begin afresh: drop any older checkpoint (checked to be one as this was made) and
        record what this run is."""
        self.remove()
        clear_stale_temporaries(self.output)
        text = json.dumps({**identity, "format": self.format}, indent=2, sort_keys=True)
        try:
            self.folder.mkdir(parents=True)
            write_atomically(self.folder / META, lambda f: f.write(text.encode()))
        except OSError as e:  # a full disk, say: nothing started, nothing left behind
            self.remove()
            raise InputError(
                f"{self.folder}: cannot keep the checkpoint there ({e.strerror or e})"
            ) from None

    def resume(self, identity: dict[str, Any], columns: list[str], gaps: bool = False) -> Progress:
        """Check the checkpoint belongs to this run and is whole; returns how far it got and
        the kept rows per value of the column `counted` (`columns`: the output's, which text
        parts after the first do not name). Raises
        `CheckpointError` (one line naming the file) otherwise. With no checkpoint at all (the
        run never started, or finished), a fresh run starts, as `start` does, with a note on
        stderr: a script may always pass --resume."""
        if not (self.folder / META).exists():
            print(f"note: no checkpoint at {self.folder}; starting a fresh run", file=sys.stderr)
            self.start(identity)
            return Progress()
        meta = self.folder / META
        try:
            recorded = json.loads(meta.read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            raise CheckpointError(
                f"{meta}: damaged (not the JSON a run writes); {START_OVER}"
            ) from None
        if not isinstance(recorded, dict):
            raise CheckpointError(f"{meta}: damaged (not the JSON a run writes); {START_OVER}")
        identity = {**identity, "format": self.format}
        changed = sorted(
            k for k in identity.keys() | recorded.keys() if identity.get(k) != recorded.get(k)
        )
        if changed:
            raise CheckpointError(
                f"the checkpoint at {self.folder} is from a run with other "
                f"{', '.join(changed)}; {START_OVER}"
            )
        # what a kill -9 mid-write leaves: half parts, and a half output from an ended merge
        for stale in self.folder.glob(".*.tmp-*"):
            stale.unlink(missing_ok=True)
        clear_stale_temporaries(self.output)
        self._drop_repeats()
        copied = read_journal(self.folder)
        kept = self._parts() if gaps else self._contiguous(drop_the_rest=True)
        progress = Progress()
        self._check_joined(copied)
        noted = noted_counts(self.folder)
        for entry in copied:  # joined already (an interrupted join): counted as it was copied
            for verdict, n in entry.counts.items():
                progress.counts[verdict] = progress.counts.get(verdict, 0) + n
        for part in kept:
            check_part(part, self.format)
            counts = noted.get(part.path.name) or self._counts(part, columns)
            for value, n in counts.items():
                progress.counts[value] = progress.counts.get(value, 0) + n
        last = kept[-1] if kept else copied[-1] if copied else None
        if gaps:  # parts past a gap kept (slices done out of order): `run.sliced` sorts it out
            progress.rows = sum(p.rows for p in [*copied, *kept])
        elif last is not None:
            progress.rows = last.start + last.rows
            progress.source, progress.next_row = last.source, last.first_row + last.rows
        return progress

    def joined_already(self, identity: dict[str, Any]) -> tuple[int, dict[str, int]] | None:
        """The rows and the rows per verdict of the output when its join ended but this
        checkpoint was not removed yet (a stop at that moment): the checkpoint is of this run
        (`identity`), its journal names parts, none is left, the joined file is gone and the
        output holds what the journal says (a text file its bytes, a Parquet file its rows).
        None otherwise: the checkpoint is one to go on with (`resume`)."""
        try:
            recorded = json.loads((self.folder / META).read_text())
            copied = read_journal(self.folder)
            if recorded != {**identity, "format": self.format} or not copied:
                return None
            if joined_path(self.folder, self.format).exists() or any(
                list_parts(self.folder, self.format)
            ):
                return None
            rows = copied[-1].start + copied[-1].rows
            if self.format == "parquet":
                import pyarrow.parquet as pq

                if pq.read_metadata(self.output).num_rows != rows:
                    return None
            elif self.output.stat().st_size != copied[-1].end:
                return None
        except (OSError, ValueError, CheckpointError, pa.ArrowException):
            return None
        counts: dict[str, int] = {}
        for entry in copied:
            for verdict, n in entry.counts.items():
                counts[verdict] = counts.get(verdict, 0) + n
        return rows, counts

    def _check_joined(self, copied: list[Copied]) -> None:
        """The output joined so far holds at least what its journal says."""
        if not copied:
            return
        joined = joined_path(self.folder, self.format)
        size = joined.stat().st_size if joined.exists() else -1
        if size < copied[-1].end:
            raise CheckpointError(
                f"{joined}: shorter than {self.folder / JOURNAL} says "
                f"({max(size, 0):,} bytes, not {copied[-1].end:,}); "
                f"{START_OVER}"
            )

    def _counts(self, part: StoredPart, columns: list[str]) -> dict[str, int]:
        """A kept part's rows per value of `counted`, read back (a part kept before its counts
        were noted, or their line cut short by a crash)."""
        if self.counted is None or self.counted not in columns:
            return {}
        return part_counts(part.path, part.start, self.format, columns, self.counted)

    def rows_kept(self) -> int:
        """How many rows, from the first on without a gap, the parts hold (those joined into
        the output already included)."""
        kept = self._contiguous()
        if kept:
            return kept[-1].start + kept[-1].rows
        copied = read_journal(self.folder)
        return copied[-1].start + copied[-1].rows if copied else 0

    def add(self, part: Part) -> None:
        """Keep one finished part. A write that fails (a full disk, a file-size limit) is an
        `InputError` naming the folder and the rows it keeps."""
        try:
            name = keep_part(self.folder, part, self.format)
            self.note_counts({name: part.counts})
        except OSError as e:
            kept = self.rows_kept()
            if not kept or not self.resumable:
                raise InputError(
                    f"{self.folder}: {e.strerror or e} while keeping the "
                    f"{'first ' if not kept else ''}rows; nothing is kept"
                ) from None
            raise InputError(
                f"{self.folder}: {e.strerror or e}; {kept:,} rows done are kept "
                f"there; {_then_resume(e)}"
            ) from None

    def note_counts(self, counts: dict[str, dict[str, int]]) -> None:
        """Note kept parts' counts (by part name): parts a worker kept itself (`keep_part`)."""
        with open(self.folder / COUNTS, "a", encoding="utf-8") as noted:
            for name, of_part in counts.items():
                noted.write(json.dumps({"part": name, "counts": of_part}) + "\n")

    def held(self) -> list[tuple[str, int, int, dict[str, int] | None]]:
        """Every part held, by row: those joined already (an interrupted join) and those kept,
        gaps or not, as `(name, start, rows, counts)` (counts None: not noted)."""
        noted = noted_counts(self.folder)
        copied = [(c.name, c.start, c.rows, c.counts) for c in read_journal(self.folder)]
        joined = {c[0] for c in copied}
        kept = [
            (p.path.name, p.start, p.rows, noted.get(p.path.name))
            for p in self._parts()
            if p.path.name not in joined
        ]
        return copied + kept

    def discard(self, names: set[str]) -> None:
        """Delete kept parts (of a slice that is done again: `run.sliced`)."""
        for name in names:
            (self.folder / name).unlink(missing_ok=True)

    def commit(self, rows: int, empty: pa.Table, metadata: dict[str, Any]) -> None:
        """Join the parts into the output, atomically, with the run's `metadata` (and what
        `run.json` says, for a later `--resume` to know the output by); refuses when they do
        not hold rows 0 .. `rows` - 1 exactly (`empty`: the table of no rows). The join
        copies a part at a time and frees each (`join.py`): it needs room for the largest
        part more, not for the output twice."""
        if self.laid_out is not None:  # a folder of arrays, its rows written already
            laid_out, self.laid_out = self.laid_out, None
            try:
                return finish(laid_out, self.output, self.format, metadata)
            except OSError as e:
                raise InputError(f"{self.output}: {e.strerror or e}; {_NONE_KEPT}") from None
        copied = read_journal(self.folder)
        parts = self._covering(rows, copied)
        try:
            recorded = json.loads((self.folder / META).read_text())
        except (OSError, ValueError):
            recorded = None
        if isinstance(recorded, dict) and self.format == "parquet" and self.record:
            metadata = {**metadata, RUN_KEY: recorded}
        if self.dataset:  # `-o DIR/`: the parts are its files, none joined (`copied` is [])
            return write_dataset(parts, self.output, empty, metadata)
        needed = max((p.path.stat().st_size for p in parts), default=0) + _FOOTER_ROOM
        kept = f"all {rows:,} rows are kept in {self.folder}" if self.resumable else _NONE_KEPT
        free = free_space(self.output.parent)
        if needed > free:
            raise InputError(
                f"{self.output}: joining the parts needs about {size_text(needed)} "
                f"free beside it, and {size_text(free)} are; {kept}; "
                f"{_FREE_THEN_RESUME if self.resumable else 'make room, then run it again'}"
            )
        noted = noted_counts(self.folder)
        waiting = [Waiting(p.path, p.start, p.rows, p.source, p.first_row) for p in parts]
        by_name = {p.path.name: p for p in parts}

        def counts_of(part: Waiting) -> dict[str, int]:
            if part.path.name in noted:
                return noted[part.path.name]
            return self._counts(by_name[part.path.name], empty.column_names)

        try:
            join_freeing(
                self.folder,
                self.format,
                waiting,
                counts_of,
                self.output,
                empty,
                metadata,
                self.head,
            )
        except OSError as e:
            raise InputError(
                f"{self.output}: {e.strerror or e} while joining the parts "
                f"(about {size_text(needed)} more); {kept}; "
                f"{_then_resume(e) if self.resumable else _AGAIN}"
            ) from None

    def lay_out(self, rows: int, schema: pa.Schema, mapper: Mapper) -> None:
        """A folder of arrays' parts (`rows` rows) laid out in its files by the workers
        (`mapper`), before they go: `commit` then ends it (`join_arrays`)."""
        parts = self._covering(rows, [])
        try:
            paths = [p.path for p in parts]
            self.laid_out = lay_out(paths, self.output, self.format, schema, mapper)
        except OSError as e:
            raise InputError(
                f"{self.output}: {e.strerror or e} while writing the parts; {_NONE_KEPT}; {_AGAIN}"
            ) from None

    def _covering(self, rows: int, copied: list[Copied]) -> list[StoredPart]:
        """The parts to join (after those `copied` already), a part kept twice once; a
        `CheckpointError` unless they hold rows 0 .. `rows` - 1 exactly."""
        self._drop_repeats()
        parts = [p for p in self._parts() if p.path.name not in {c.name for c in copied}]
        held = 0
        for part in [*copied, *parts]:
            if part.start != held:
                raise CheckpointError(
                    f"{self.folder}: rows {held:,} to {part.start - 1:,} are missing; "
                    f"refusing to write {self.output} without them"
                )
            held += part.rows
        if held != rows:
            raise CheckpointError(
                f"{self.folder}: holds {held:,} rows where the input has {rows:,}; "
                f"refusing to write {self.output}"
            )
        return parts

    def remove(self) -> None:
        if self.laid_out is not None:  # not committed: the folder being made deleted
            self.laid_out.__exit__(None, None, None)
            self.laid_out = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def _parts(self) -> list[StoredPart]:
        """The parts kept, by row, a part kept twice once (`kept_parts.list_parts`)."""
        return list_parts(self.folder, self.format)[0]

    def _drop_repeats(self) -> None:
        """Delete the second copies of parts kept twice (a task Dask ran twice)."""
        for path in list_parts(self.folder, self.format)[1]:
            path.unlink(missing_ok=True)

    def _contiguous(self, drop_the_rest: bool = False) -> list[StoredPart]:
        """The parts from row 0 on without a gap (from where the parts joined already end,
        when a join was stopped); those past a gap are useless, and deleted when
        `drop_the_rest`, as are those joined already (noted, then a stop before deleting)."""
        copied = read_journal(self.folder)
        joined = {c.name for c in copied}
        kept, done = [], copied[-1].start + copied[-1].rows if copied else 0
        for part in self._parts():
            if part.path.name in joined:
                if drop_the_rest:
                    part.path.unlink()
                continue
            if part.start == done:
                kept.append(part)
                done += part.rows
            elif drop_the_rest:
                part.path.unlink()
        return kept


def _then_resume(error: OSError) -> str:
    """What to do about a failed write before `--resume`."""
    if error.errno in _FULL:
        return _FREE_THEN_RESUME
    return "once that is put right, run the same command with --resume"

"""A run whose workers read their own slices of the input and keep their own parts: the Dask
executor's way for a resumable job writing a file (solve, score), and for augment to a
Parquet file, so that no byte of data passes through the client.

    slicer = SlicedRun(job, checkpoint)    # `run.loop.running` makes it when `slicing.sliced(job)`
    resumed = slicer.prepare(progress)           # workers checked, slices planned and counted
    for kept in slicer.results(solve_part, options, fmt): ...   # as slices finish

The client (this process):

1. checks, on every worker, that it sees the checkpoint folder beside the output (it reads the
   `run.json` the client wrote there and can create, rename and delete a file in it), each
   input file at its path with its size, and each input URL as the client found it (its
   identity): a cluster that cannot is refused in one line (`InputError`, exit 2) before any
   work;
2. plans the slices (`io.slices`: Parquet row groups; byte ranges of text cut at line ends;
   one slice a compressed file; files and URLs alike), has the workers count the rows of text
   slices, and adds them up: each slice knows the place of its first row in the output and in
   its input;
3. on `--resume`, keeps the slices whose parts are all kept and noted, and deletes the parts
   of the others (a slice cut short by a killed worker or client is done again whole);
4. submits one task a slice, at most two a worker thread at a time; a task reads its slice
   in batches, runs the job's batch function (`Task` -> `Part`, as on one machine) and keeps
   each part itself (`parts.keep_part`: a temporary name, then a rename). A task that
   runs twice (Dask reschedules the tasks of a worker it lost) keeps the same rows twice under
   two names: the checkpoint keeps one (`Checkpoint._parts`). The client notes each finished
   slice's parts and verdict counts (`counts.jsonl`);
5. commits as the run loop does for every run: the parts joined by their footers
   (`join.py`), nothing decoded; or, with `-o DIR/`, the parts made the files of a Parquet
   dataset folder, nothing copied (`dataset_output.py`). A job that writes other than one
   row a row read (augment, which does not resume) has its parts kept at their input places
   and renamed to their output places, in order, first (`SlicedRun.place`).
"""

import os
import socket
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.dataset import Dataset
from pipeline.io.inputs import Inputs
from pipeline.io.slices import (
    Slice,
    count_rows,
    kept_at_url,
    plan_slices,
    recipe,
    slice_batches,
)
from pipeline.io.url_slices import URL_PROBLEM, UrlFile
from pipeline.run.checkpoint import Checkpoint, Progress
from pipeline.run.job import Job
from pipeline.run.parts import Part, Task, keep_part
from pipeline.run.scratch import scratch_name

SLICE_ROWS = "SUDOKU_PIPELINE_SLICE_ROWS"  # rows a slice (default: `SLICE_BATCHES` batches,
# fewer towards the end: `io.slices.shrinking_rows`)
SLICE_BATCHES = 4


@dataclass(frozen=True)
class Planned:
    """A slice with its place: `index` in the plan, `start` its first row's place in the
    output, `first_row` in its input, `rows` its rows."""

    index: int
    piece: Slice
    start: int
    first_row: int
    rows: int


@dataclass(frozen=True)
class Kept:
    """What a slice's task kept: its parts (name -> verdict counts), its input rows and the
    output rows its parts hold (`written`); `results`:
    what the job's function returned for each batch when that was more than a `Part` (score's
    figures), each with its part's bytes left out (they are kept, not sent back)."""

    index: int
    rows: int
    parts: dict[str, dict[str, int]] = field(default_factory=dict)
    results: list[Any] = field(default_factory=list)
    written: int = 0  # output rows (augment's: its copies; else `rows`)

    @property
    def counts(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for counts in self.parts.values():
            for value, n in counts.items():
                total[value] = total.get(value, 0) + n
        return total


def check_storage(folder: str, token: int, inputs: list[tuple[str, int] | UrlFile]) -> str | None:
    """On a worker: None when it sees the checkpoint `folder` (its `run.json` the one the
    client wrote: `token`, its CRC-32), can write there and sees each input (a file's path
    and size; a URL's file as the client found it); else what is wrong."""
    try:
        return _storage_problem(folder, token, inputs)
    except Exception as e:  # noqa: BLE001 - whatever it is, the worker cannot do the work
        return f"cannot check {folder} ({type(e).__name__}: {e})"


def _storage_problem(
    folder: str, token: int, inputs: list[tuple[str, int] | UrlFile]
) -> str | None:
    where = Path(folder)
    try:
        if zlib.crc32((where / "run.json").read_bytes()) != token:
            return f"{folder}/run.json is not the client's (not the same storage)"
    except OSError as e:
        return f"cannot read {folder}/run.json ({e.strerror or e})"
    probe = where / f".part-probe-{uuid.uuid4().hex}.tmp-{os.getpid()}"
    try:
        probe.write_bytes(b"probe")
        moved = probe.with_name(probe.name.replace("-probe-", "-probed-"))
        os.replace(probe, moved)
        moved.unlink()
    except OSError as e:
        probe.unlink(missing_ok=True)
        return f"cannot write in {folder} ({e.strerror or e})"
    for given in inputs:
        if isinstance(given, UrlFile):
            if (problem := given.problem()) is not None:
                return problem
            continue
        path, size = given
        try:
            seen = os.stat(path).st_size
        except OSError as e:
            return f"cannot read the input {path} ({e.strerror or e})"
        if seen != size:
            return f"sees the input {path} with {seen:,} bytes, not {size:,}"
    return None


def count_task(index: int, ds: Dataset, piece: Slice, folder: str | None = None) -> tuple[int, int]:
    """On a worker: `(index, rows)` of a text slice. A URL's slice is downloaded once: its
    bytes are kept, compressed, in the checkpoint `folder` for the task that reads it
    (`planned_batches`)."""
    copy = _copy(folder, index) if folder is not None and kept_at_url(piece) else None
    try:
        return index, count_rows(ds, piece, copy)
    except OSError as e:
        raise InputError(f"{ds.location}: read failed ({e.strerror or e})") from None


def _copy(folder: str, index: int) -> Path:
    return Path(folder) / scratch_name("text", index, "zst")


def planned_batches(
    ds: Dataset, planned: Planned, batch_size: int, folder: str
) -> Iterator[pa.RecordBatch]:
    """On a worker: a planned slice's batches (`io.slices.slice_batches`); a URL's text slice
    from the copy its count kept, when it is there (else from the URL again: a task run twice
    after its copy was deleted), the copy deleted once read. A slice whose rows are not the
    ones counted is `InputError` once read (the file changed under the run)."""
    copy = _copy(folder, planned.index) if kept_at_url(planned.piece) else None
    if copy is not None and not copy.exists():
        copy = None
    rows = 0
    for batch in slice_batches(ds, planned.piece, planned.first_row, batch_size, copy):
        rows += batch.num_rows
        yield batch
    if rows != planned.rows:
        raise InputError(
            f"{ds.location}: {rows:,} rows read in a slice counted as {planned.rows:,}; the "
            "file changed while the run read it"
        )
    if copy is not None:
        copy.unlink(missing_ok=True)


def slice_task(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    ds: Dataset,
    planned: Planned,
    name: str | None,
    batch_size: int,
    folder: str,
    fmt: str,
    resumable: bool = True,
) -> Kept:
    """On a worker: read one slice in batches, `fn(task, *args)` on each, keep the parts.
    `fn` returns a `Part`, or a frozen dataclass holding one as `part` beside other figures
    (score's `ScoredPart`)."""
    parts: dict[str, dict[str, int]] = {}
    results: list[Any] = []
    start, written = planned.start, 0
    for batch in planned_batches(ds, planned, batch_size, folder):
        first_row = planned.first_row + start - planned.start
        result = fn(Task(start, planned.piece.source, name, first_row, batch), *args)
        part = result if isinstance(result, Part) else result.part
        if part is not result:
            results.append(replace(result, part=replace(part, data=b"")))
        try:
            parts[keep_part(Path(folder), part, fmt)] = part.counts
        except OSError as e:
            then = (
                "the rows done are kept there: once that is put right, run the same command "
                "with --resume"
                if resumable
                else "nothing is kept (this command does not resume): once that is put "
                "right, run the command again"
            )
            raise InputError(
                f"{folder}: {e.strerror or e} on the worker at {socket.gethostname()}; {then}"
            ) from None
        start += batch.num_rows
        written += part.rows
    return Kept(planned.index, start - planned.start, parts, results, written)


class SlicedRun:
    """The client's side of a sliced run (see the module docstring)."""

    def __init__(self, job: Job, checkpoint: Checkpoint) -> None:
        self.job, self.checkpoint = job, checkpoint
        self.folder = str(checkpoint.folder.resolve())
        self.rows = 0  # every input row (known once planned)
        self.slices = 0  # slices planned (their numbers: 0 ..)
        self.todo: list[Planned] = []
        self._recipes: list[Dataset] = []

    def prepare(self, resumed: Progress | None) -> Progress:
        """Check the workers, plan and count the slices; on a resume (`resumed`: what the
        checkpoint holds), keep the slices done and clear the rest. What is done already."""
        job = self.job
        assert job.inputs is not None
        self._check_workers(job.inputs.datasets)
        self._recipes = [recipe(ds) for ds in job.inputs.datasets]
        planned = self._plan(job.inputs, self._recipes, 0)
        self.slices = len(planned)
        self.rows = sum(p.rows for p in planned)
        done = Progress()
        if resumed is None:
            self.todo = [p for p in planned if p.rows]
            return done
        self.todo = []
        held = sorted(self.checkpoint.held(), key=lambda h: h[1])
        inside: set[str] = set()
        for p in planned:
            parts = [h for h in held if p.start <= h[1] < p.start + p.rows]
            inside.update(h[0] for h in parts)
            at, whole = p.start, all(h[3] is not None for h in parts)
            for _, part_start, part_rows, _ in parts:
                whole = whole and part_start == at
                at += part_rows
            if whole and at == p.start + p.rows:
                done.rows += p.rows
                for *_, counts in parts:
                    for value, n in (counts or {}).items():
                        done.counts[value] = done.counts.get(value, 0) + n
            else:
                self.checkpoint.discard({h[0] for h in parts})
                if p.rows:
                    self.todo.append(p)
        self.checkpoint.discard({h[0] for h in held} - inside)
        return done

    def plan_more(self, inputs: Inputs) -> tuple[list[Planned], list[Dataset]]:
        """Inputs a job reads beside its own (validate's training inputs, `--against`), cut
        and counted as its own are, after the workers are checked to see them: their slices
        (numbered after every slice planned so far; `start`: the place of the first row among
        these inputs' rows, `first_row`: in its input) and the recipes to read them by."""
        self._check_workers(inputs.datasets)
        recipes = [recipe(ds) for ds in inputs.datasets]
        planned = self._plan(inputs, recipes, self.slices)
        self.slices += len(planned)
        return [p for p in planned if p.rows], recipes

    def _plan(self, inputs: Inputs, recipes: list[Dataset], first: int) -> list[Planned]:
        """The slices of `inputs`, numbered from `first`, text slices counted on the workers."""
        job = self.job
        given = os.environ.get(SLICE_ROWS)  # every slice this size: no shrinking at the end
        per_slice = int(given or SLICE_BATCHES * job.batch_size)
        workers = 0 if given else max(1, job.executor.workers)
        plan = plan_slices(inputs, max(1, per_slice), workers=workers)
        uncounted = [
            (first + i, recipes[p.source], p, self.folder)
            for i, p in enumerate(plan)
            if p.rows is None
        ]
        counted = {first + i: p.rows for i, p in enumerate(plan) if p.rows is not None}
        for index, rows in job.executor.map_unordered(_count, uncounted):
            counted[index] = rows
        planned, start, first_rows = [], 0, [0] * len(inputs.datasets)
        for i, piece in enumerate(plan, first):
            rows = counted[i] or 0
            planned.append(Planned(i, piece, start, first_rows[piece.source], rows))
            start += rows
            first_rows[piece.source] += rows
        return planned

    def _check_workers(self, datasets: list[Dataset]) -> None:
        """Every worker sees the checkpoint folder and `datasets`, or `InputError`."""
        job = self.job
        token = zlib.crc32((self.checkpoint.folder / "run.json").read_bytes())
        inputs: list[tuple[str, int] | UrlFile] = []
        for ds in datasets:
            remote = ds.remote_file
            if remote is None:
                inputs.append((str(ds.path.resolve()), ds.path.stat().st_size))
            else:
                inputs.append(UrlFile.of(remote))
        answers = job.executor.run_on_workers(check_storage, self.folder, token, inputs)
        for worker, problem in sorted(answers.items()):
            if problem is None:
                continue
            if problem.startswith(URL_PROBLEM):
                need = "every worker must reach the input URLs, with the same credentials"
            else:
                need = (
                    "every worker must see the inputs and the output's folder at the same "
                    "paths (a shared file system)"
                )
            raise InputError(f"the Dask worker at {worker} {problem}: {need}")

    def results(self, fn: Callable[..., Any], *args: Any) -> Iterator[Kept]:
        """Each slice to do through `fn` on the workers, its parts kept; yielded as they
        finish (in any order), its parts noted in the checkpoint."""
        job = self.job
        assert job.inputs is not None
        several = job.inputs.several
        items = [
            (
                fn,
                args,
                self._recipes[p.piece.source],
                p,
                job.inputs.names[p.piece.source] if several else None,
                job.batch_size,
                self.folder,
                job.format,
                job.spec.resumable,
            )
            for p in self.todo
        ]
        for kept in job.executor.map_unordered(_slice, items):
            self.checkpoint.note_counts(kept.parts)
            yield kept

    def each(self, fn: Callable[[tuple[Any, ...]], Any], *args: Any) -> Iterator[Any]:
        """`fn((dataset, planned, batch_size, folder, *args))` on the workers for each slice to
        do, yielded as each finishes (any order): a job's own work on its slices, which keeps
        what it makes in the checkpoint `folder` itself (validate's, `jobs.validate.sharded`)."""
        job = self.job
        items = [
            (self._recipes[p.piece.source], p, job.batch_size, self.folder, *args)
            for p in self.todo
        ]
        results = job.executor.map_unordered(fn, items)
        try:
            yield from results
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()

    def place(self) -> None:
        """Once every slice is in, for a job that writes other than one row a row read
        (augment: its parts are kept at their input places, as their first input row's place
        is all a worker knows): each part renamed to its output place, in order, so that the
        checkpoint joins them as any. A part of no rows (its batch all left out) is deleted:
        it holds nothing, and two at one place would look like one part kept twice."""
        folder = self.checkpoint.folder
        at = 0
        for name, start, rows, _ in self.checkpoint.held():  # by place, a part kept twice once
            if not rows:
                (folder / name).unlink()
            elif start != at:  # "part-" and 12 digits of place, then the rest of the name
                os.replace(folder / name, folder / f"part-{at:012d}{name[17:]}")
            at += rows


def _count(item: tuple[int, Dataset, Slice, str]) -> tuple[int, int]:
    return count_task(*item)


def _slice(item: tuple[Any, ...]) -> Kept:
    return slice_task(*item)

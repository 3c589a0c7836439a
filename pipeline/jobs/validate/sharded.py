"""validate on Dask with no row through the client: the workers read their own slices, find the
repeats hash-partitioned among themselves and write the findings file's parts.

    rows, tally = validate_sharded(run, checks, id_type)   # in `job._run`, when `run.sliced`

Three rounds of tasks, each writing what it makes into the checkpoint folder beside the output
(`<output>.partial/`, which every worker sees: `run.sliced` checked it before any work):

1. **checks**, one task a slice (as `solve`'s): the slice read in batches, each batch's row
   checks (`batch.validate_record_batch`); the slice's findings so far into
   `shard-checks-NNNNNN.arrow`, and its rows' 128-bit keys (and, with `symmetry`, their
   canonical forms' keys), each with its row and id, cut by the key's top bits into `shards`
   and written as one Arrow record batch a shard (`shard-keys-...`, `shard-forms-...`).
2. **repeats**, one task a shard: that shard's record batch of every slice, in row order (the
   same puzzle always falls in the same shard), and its repeats found as on one machine
   (`duplicates.DuplicateIndex`): each row whose key an earlier row has, with that row and
   both ids, into `shard-repeats-NNNNNN.arrow` (and `shard-symmetric-...`), by row.
3. **findings**, one task a slice: its checks' findings, and the repeats of its rows taken
   from each shard's file (sorted by row: two binary searches a shard), put in place, encoded
   in the output's format and kept as a part at the slice's first row.

With a leak audit (`--against TRAIN`), the training inputs are sliced too, and each round does
the audit's share beside (`leak_shards`): round 1 also cuts the input's form keys and TRAIN's
into the shards, with the packed puzzles and forms; a round per shard after round 2 confirms
the hits word for word; round 3 puts each slice's leaks in place.

The client plans the slices, adds up the slices' tallies (counts, first examples, clues: a few
KB a slice) and, at the end, joins the parts by their footers as `solve`'s are joined (parts
renamed to their places in order first, as `augment`'s: `SlicedRun.place`). It holds no key
and reads no row: its memory does not grow with the corpus. A worker holds one slice's rows
(round 1 and 3) or one shard's keys (round 2: about 40 bytes a row of that shard, and the
shards are as many as make that about `SHARD_ROWS` rows). Every file is written under a
temporary name and renamed whole, and a task's output depends on its inputs only: a task Dask
runs twice writes the same bytes twice.
"""

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.io.dataset import Dataset
from pipeline.io.inputs import Inputs
from pipeline.io.writers import encode
from pipeline.jobs.validate.batch import ValidateOptions, validate_record_batch
from pipeline.jobs.validate.catalogue import findings_schema, sort_findings
from pipeline.jobs.validate.checks import duplicate_findings
from pipeline.jobs.validate.duplicates import DuplicateIndex, Repeats, symmetric_only
from pipeline.jobs.validate.leak_shards import (
    LEAKS,
    PROBES,
    TRAIN,
    leak_items,
    leaks_of_shard,
    plan_audit,
    slice_leaks,
    train_round,
    write_probes,
)
from pipeline.jobs.validate.summary import EXAMPLES, FindingsTally
from pipeline.run.loop import Run
from pipeline.run.parts import Part, keep_part
from pipeline.run.scratch import (
    clear,
    not_kept,
    read_batch,
    read_table,
    scratch_name,
    write_batches,
)
from pipeline.run.sliced import Planned, planned_batches

SHARD_ROWS = 2_000_000  # rows a shard holds at most, about (round 2's memory: ~80 MB)
MAX_SHARDS = 4096
_KINDS = {"keys": "repeats", "forms": "symmetric"}  # keys of a kind -> its repeats' file


def shard_count(rows: int, workers: int) -> int:
    """How many shards the keys of `rows` rows are cut into: a power of two, at least two a
    worker (every worker busy in round 2) and enough that each holds about `SHARD_ROWS`."""
    wanted = max(2 * workers, -(-rows // SHARD_ROWS), 1)
    return min(1 << (wanted - 1).bit_length(), MAX_SHARDS)


class Checked(NamedTuple):
    """What a slice's checks send back: its index, rows, the tally of its findings and its
    pencilmark rows (not audited for leaks)."""

    index: int
    rows: int
    tally: FindingsTally
    pencilmarks: int = 0


class Written(NamedTuple):
    """What a slice's findings task sends back: its part's name and rows, and the tally of
    the repeats among its rows."""

    index: int
    part: str
    findings: int
    tally: FindingsTally
    exact: int = 0  # leaks (`--against`)
    in_disguise: int = 0


def validate_sharded(
    run: Run, checks: ValidateOptions, id_type: pa.DataType | None, train: Inputs | None = None
) -> tuple[int, FindingsTally, dict[str, Any] | None]:
    """The three rounds (see the module) of a sliced validate run, with a leak audit against
    `train` (`leak_shards`) when given; the rows read, the summary's tally and its `against`.
    The parts are kept in the checkpoint; `run.commit` joins them."""
    slicer, executor = run.slicer, run.job.executor
    assert slicer is not None
    folder = slicer.folder
    planned = slicer.todo
    audit = plan_audit(slicer, train) if train is not None else None
    shards = shard_count(slicer.rows + (audit.rows if audit else 0), executor.workers)
    bar = run.show_progress()
    bar.total = slicer.rows
    tallies: dict[int, FindingsTally] = {}
    for checked in slicer.each(_check_slice, checks, shards):
        tallies[checked.index] = checked.tally
        bar.update(checked.rows)
        if audit is not None:
            audit.pencilmarks += checked.pencilmarks
    if audit is not None:  # with no row to audit, TRAIN is counted only
        train_round(slicer, audit, shards if planned else 0)
    fmt, schema = run.job.format, findings_schema(id_type)
    if fmt == "csv":  # no part carries the header (any of them may hold no row)
        run.start_with(encode(schema.empty_table(), "csv", header=True))
    if not planned:  # no row: no shard, and no part (the output: the header or schema alone)
        return 0, FindingsTally(), audit.summary() if audit else None
    indices = [p.index for p in planned]
    starts = [p.start for p in planned]
    kinds = ("keys", "forms") if checks.symmetry else ("keys",)
    items = [(folder, shard, indices, starts, kinds) for shard in range(shards)]
    for _ in executor.map_unordered(_repeats_of_shard, items):
        pass
    against = None
    if audit is not None:
        for _ in executor.map_unordered(
            leaks_of_shard, leak_items(audit, folder, shards, indices, starts)
        ):
            pass
        against = (audit.names, audit.offsets)
    written = executor.map_unordered(
        _write_findings,
        [
            (folder, p, k, shards, checks.symmetry, fmt, schema, against)
            for k, p in enumerate(planned)
        ],
    )
    repeats: dict[int, FindingsTally] = {}
    for done in written:
        repeats[done.index] = done.tally
        run.rows += done.findings
        if audit is not None:
            audit.exact += done.exact
            audit.in_disguise += done.in_disguise
    audited = (PROBES,) if audit is not None else ()
    read = [  # every round's scratch, read by now: deleted on the workers
        [Path(folder) / scratch_name(kind, i) for kind in ("checks", *kinds, *audited)]
        for i in indices
    ] + [
        [Path(folder) / scratch_name(_KINDS[kind], n) for kind in kinds]
        + ([Path(folder) / scratch_name(LEAKS, n)] if audit is not None else [])
        for n in range(shards)
    ]
    if audit is not None:
        read += [[Path(folder) / scratch_name(TRAIN, i)] for i in audit.indices]
    for _ in executor.map_unordered(clear, read):
        pass
    tally = FindingsTally()
    for index in indices:  # in row order: the first examples are the first rows'
        tally.merge(tallies[index])
    for index in indices:
        tally.merge(repeats[index])
    return slicer.rows, tally, audit.summary() if audit else None


# --- on the workers ------------------------------------------------------------------------


def _check_slice(item: tuple[Any, ...]) -> Checked:
    """Round 1 on a worker: a slice's row checks, its findings and its sharded keys kept."""
    ds: Dataset = item[0]
    planned: Planned = item[1]
    batch_size, folder, checks, shards = item[2:]
    tally = FindingsTally()
    findings: list[pa.Table] = []
    keys: list[np.ndarray] = []
    forms: list[np.ndarray] = []
    packed: list[np.ndarray] = []
    ids: list[pa.Array] = []
    rows = pencilmarks = 0
    for batch in planned_batches(ds, planned, batch_size, folder):
        report = validate_record_batch(batch, checks)
        tally.add(report.findings, report.clues)
        findings.append(report.findings)
        keys.append(report.keys)
        if report.forms is not None:
            forms.append(report.forms)
        if report.packed is not None:
            packed.append(report.packed)
        if report.ids is not None:
            ids.append(report.ids)
        rows += report.rows
        pencilmarks += report.pencilmarks
    where = Path(folder)
    numbers = np.arange(planned.start, planned.start + rows, dtype=np.int64)
    own_ids = pa.concat_arrays(ids) if ids else None
    write_batches(
        where / scratch_name("checks", planned.index),
        [pa.concat_tables(findings).unify_dictionaries().combine_chunks()],
    )
    for kind, found in (("keys", keys), ("forms", forms if checks.symmetry else [])):
        if found:
            batches = _by_shard(np.concatenate(found), numbers, own_ids, shards)
            write_batches(where / scratch_name(kind, planned.index), batches)
    if checks.leaks and forms:
        probes = np.concatenate(forms), np.concatenate(packed)
        write_probes(where, planned.index, *probes, numbers, own_ids, shards)
    return Checked(planned.index, rows, tally, pencilmarks)


def _by_shard(
    keys: np.ndarray, rows: np.ndarray, ids: pa.Array | None, shards: int
) -> list[pa.RecordBatch]:
    """The rows' keys (zeros: not a puzzle, left out) with their rows and ids, one record
    batch a shard (the key's top bits), each in row order."""
    puzzles = np.flatnonzero(keys[:, 0] != 0)
    bits = shards.bit_length() - 1  # shards: a power of two
    shard = (keys[puzzles, 0] >> np.uint64(64 - bits)).astype(np.int64) if bits else puzzles * 0
    order = puzzles[np.argsort(shard, kind="stable")]
    bounds = np.searchsorted(np.sort(shard), np.arange(shards + 1))
    columns = {
        "first": pa.array(keys[order, 0]),
        "second": pa.array(keys[order, 1]),
        "row": pa.array(rows[order]),
    }
    if ids is not None:
        columns["id"] = ids.take(pa.array(order))
    table = pa.record_batch(columns)
    return [table.slice(bounds[s], bounds[s + 1] - bounds[s]) for s in range(shards)]


def _repeats_of_shard(item: tuple[Any, ...]) -> int:
    """Round 2 on a worker: the repeats among one shard's keys of every slice, one record
    batch a slice (the slices of their rows, in order); how many."""
    folder, shard, indices, starts, kinds = item
    found = 0
    for kind in kinds:
        batches = [read_batch(Path(folder) / scratch_name(kind, i), shard) for i in indices]
        table = pa.Table.from_batches(batches).combine_chunks()
        keys = np.empty((table.num_rows, 2), dtype=np.uint64)
        keys[:, 0] = table.column("first").to_numpy()
        keys[:, 1] = table.column("second").to_numpy()
        at, first_at = DuplicateIndex().add(0, keys)  # places in the shard, by row
        rows = table.column("row").to_numpy()
        columns = {"row": pa.array(rows[at]), "first_row": pa.array(rows[first_at])}
        if "id" in table.column_names:
            ids = table.column("id")
            columns["id"] = ids.take(pa.array(at)).combine_chunks()
            columns["first_id"] = ids.take(pa.array(first_at)).combine_chunks()
        repeats = pa.record_batch(columns)
        cuts = [*np.searchsorted(rows[at], starts).tolist(), len(at)]
        per_slice = [repeats.slice(cuts[k], cuts[k + 1] - cuts[k]) for k in range(len(starts))]
        write_batches(Path(folder) / scratch_name(_KINDS[kind], shard), per_slice)
        found += len(at)
    return found


def _write_findings(item: tuple[Any, ...]) -> Written:
    """Round 3 on a worker: a slice's findings with its repeats in place, kept as a part."""
    folder, planned, position, shards, symmetry, fmt, schema, against = item
    where = Path(folder)
    checked = read_table(where / scratch_name("checks", planned.index), schema)
    exact = _repeats_of_slice(where, "repeats", shards, position)
    repeats = Repeats(exact["row"], exact["first_row"])
    found = [exact]
    if symmetry:
        symmetric = _repeats_of_slice(where, "symmetric", shards, position)
        keep = symmetric_only(
            exact["row"], exact["first_row"], symmetric["row"], symmetric["first_row"]
        )
        symmetric = {name: column.filter(pa.array(keep)) if isinstance(column, pa.Array)
                     else column[keep] for name, column in symmetric.items()}  # fmt: skip
        repeats = repeats._replace(
            symmetric_rows=symmetric["row"], symmetric_first_rows=symmetric["first_row"]
        )
        found.append(symmetric)
    id_type = schema.field("id").type if "id" in schema.names else None
    tables = [checked]
    for (code, rows, first), of_kind in zip(repeats.kinds(), found, strict=False):
        if not len(rows):
            continue
        own = of = None
        if "id" in of_kind:
            own, of = of_kind["id"], of_kind["first_id"]
        elif id_type is not None:
            own = pa.nulls(len(rows), id_type)
        tables.append(duplicate_findings(rows, first, own, of, code))
    tally = FindingsTally()
    tally.add_repeats(repeats)
    exact = in_disguise = 0
    if against is not None:  # the slice's leaks, put in place as on one machine (`with_leaks`)
        leaks, own = slice_leaks(where, shards, position, *against)
        if leaks.any():
            errors = checked.column("level").combine_chunks().indices.to_numpy() == 0
            earlier = np.unique(checked.column("row").to_numpy()[errors])
            tables.append(leaks.findings(0, len(leaks.rows), own).cast(schema))
            examples = leaks.findings(0, min(EXAMPLES, len(leaks.rows)))
            tally.add_late("leak", leaks.rows, examples, earlier)
            exact, in_disguise = leaks.counts().values()
    table = sort_findings(pa.concat_tables(tables)) if len(tables) > 1 else checked
    table = table.cast(schema)
    data = encode(table, fmt, header=False)
    part = Part(planned.start, table.num_rows, 0, planned.first_row, data)
    try:
        name = keep_part(where, part, fmt)
    except OSError as e:
        raise not_kept(where, e) from None
    return Written(planned.index, name, table.num_rows, tally, exact, in_disguise)


def _repeats_of_slice(folder: Path, kind: str, shards: int, position: int) -> dict[str, Any]:
    """The repeats (of `kind`) of the slice at `position` in the plan, from every shard's
    file, by row: rows and first rows (numpy), and ids and first ids (Arrow) with ids."""
    pieces = [read_batch(folder / scratch_name(kind, shard), position) for shard in range(shards)]
    table = pa.Table.from_batches(pieces).combine_chunks()
    order = np.argsort(table.column("row").to_numpy(), kind="stable")
    table = table.take(pa.array(order))
    found: dict[str, Any] = {
        "row": table.column("row").to_numpy(),
        "first_row": table.column("first_row").to_numpy(),
    }
    if "id" in table.column_names:
        found["id"] = table.column("id").combine_chunks()
        found["first_id"] = table.column("first_id").combine_chunks()
    return found

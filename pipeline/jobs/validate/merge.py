"""The findings file in row order: each batch's findings, kept in a spool as they came,
with the duplicate and leak findings (found over the whole file at the end) put in place, and
the ids of the rows repeated read again from the input, batch by batch, in bounded memory.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.jobs.validate.catalogue import sort_findings
from pipeline.jobs.validate.checks import duplicate_findings
from pipeline.jobs.validate.duplicates import Repeats
from pipeline.jobs.validate.leaks import Leaks


class _FirstIds:
    """The ids of the rows that later rows repeat, gathered as the input is read again, batch by
    batch: memory for those ids only, not for every duplicate."""

    def __init__(self, rows: np.ndarray, id_type: pa.DataType) -> None:
        self.rows = rows  # ascending, distinct
        self._chunks: list[pa.Array] = [pa.array([], id_type)]

    def add(self, start: int, ids: pa.Array) -> None:
        lo, hi = np.searchsorted(self.rows, [start, start + len(ids)])
        if hi > lo:
            self._chunks.append(ids.take(pa.array(self.rows[lo:hi] - start)))

    def of(self, rows: np.ndarray) -> pa.Array:
        taken = pa.chunked_array(self._chunks).take(pa.array(np.searchsorted(self.rows, rows)))
        return taken.combine_chunks()


def merged(
    stream: Path,
    batches: list[tuple[int, int, bool]],
    repeats: Repeats,
    id_batches: Iterator[pa.RecordBatch] | None,
    id_type: pa.DataType | None,
    leaks: Leaks | None = None,
) -> Iterator[pa.Table]:
    """The findings of every batch (`start`, `rows`, whether the stream holds findings for it),
    in order, with the repeats' and `leaks`' findings put in place; `id_batches`: the input
    read again, for their ids (None: no ids, or an input that cannot be read twice, when
    `id_type` is the type of the ids left null)."""
    first_ids: _FirstIds | None = None
    with pa.OSFile(os.fsencode(stream), "rb") as source:
        reader = pa.ipc.open_stream(source)
        for start, rows, stored in batches:
            ids = None
            if id_batches is not None:
                batch = next(id_batches)
                ids = batch.column(batch.schema.get_field_index("id"))
                first_ids = first_ids or _FirstIds(repeats.first_rows_needed(), ids.type)
                first_ids.add(start, ids)
            parts = [pa.Table.from_batches([reader.read_next_batch()])] if stored else []
            for code, repeat, first in repeats.kinds():
                lo, hi = np.searchsorted(repeat, [start, start + rows])
                if hi == lo:
                    continue
                own = of = None
                if ids is not None and first_ids is not None:
                    own = ids.take(pa.array(repeat[lo:hi] - start))
                    of = first_ids.of(first[lo:hi])
                elif id_type is not None:  # ids that cannot be read again: null
                    own = pa.nulls(hi - lo, id_type)
                parts.append(duplicate_findings(repeat[lo:hi], first[lo:hi], own, of, code))
            if leaks is not None:
                lo, hi = leaks.in_rows(start, start + rows)
                if hi > lo:
                    own = None
                    if ids is not None:
                        own = ids.take(pa.array(leaks.rows[lo:hi] - start))
                    elif id_type is not None:
                        own = pa.nulls(hi - lo, id_type)
                    parts.append(leaks.findings(lo, hi, own))
            if parts:
                yield sort_findings(pa.concat_tables(parts)) if len(parts) > 1 else parts[0]

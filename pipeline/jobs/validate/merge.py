"""A batch's findings in row order: the row checks' (made by a worker), with the repeats' (found
by the parent as the batch comes, `duplicates`) and the leaks' (found at the end, `leaks`) put
in place, each naming the ids of the rows it speaks of.

The ids of earlier rows (the first row a repeat repeats) are read back from the spool the
parent keeps them in (`SpooledIds`: each batch's ids, on disk, not in memory).
"""

import numpy as np
import pyarrow as pa

from pipeline.io.writers import Spool
from pipeline.jobs.validate.batch import BatchReport
from pipeline.jobs.validate.catalogue import sort_findings
from pipeline.jobs.validate.checks import duplicate_findings
from pipeline.jobs.validate.duplicates import Repeats
from pipeline.jobs.validate.leaks import Leaks


class SpooledIds:
    """Every batch's ids, kept in a spool as the batches come; `of(rows)` reads back those of
    any rows seen so far (the latest batch's from memory)."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.starts: list[int] = []
        self.numbers: list[int] = []
        self._last: tuple[int, pa.Array] | None = None  # the latest batch: (its number, ids)

    def add(self, start: int, ids: pa.Array) -> None:
        self.starts.append(start)
        self.numbers.append(self.spool.append(pa.table({"id": ids})))
        self._last = (len(self.starts) - 1, ids)

    def _batch(self, b: int) -> pa.Array:
        if self._last is not None and self._last[0] == b:
            return self._last[1]
        return self.spool.read(self.numbers[b]).column(0).combine_chunks()

    def of(self, rows: np.ndarray) -> pa.Array:
        """The ids of `rows` (any order, each one a row added before)."""
        batch = np.searchsorted(np.asarray(self.starts), rows, "right") - 1
        order = np.argsort(batch, kind="stable")
        chunks = []
        for b in np.unique(batch).tolist():
            wanted = rows[batch == b] - self.starts[b]
            chunks.append(self._batch(b).take(pa.array(wanted)))
        if not chunks:
            return pa.array([], self._batch(0).type if self.starts else pa.null())
        taken = pa.concat_arrays(chunks)  # grouped by batch: put back in the rows' order
        return taken.take(pa.array(np.argsort(order, kind="stable")))


def batch_findings(
    report: BatchReport, repeats: Repeats, ids: SpooledIds | None, id_type: pa.DataType | None
) -> pa.Table:
    """The findings of one batch (`report`), its `repeats` among them, sorted by row."""
    parts = [report.findings] if report.findings.num_rows else []
    for code, rows, first in repeats.kinds():
        if not len(rows):
            continue
        own = of = None
        if ids is not None and report.ids is not None:
            own = report.ids.take(pa.array(rows - report.start))
            of = ids.of(first)
        elif id_type is not None:
            own = pa.nulls(len(rows), id_type)
        parts.append(duplicate_findings(rows, first, own, of, code))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return report.findings
    return sort_findings(pa.concat_tables(parts))


def with_leaks(
    findings: pa.Table, start: int, rows: int, leaks: Leaks, ids: SpooledIds | None
) -> pa.Table:
    """A batch's findings (`start`, `rows`: its rows) with its `leak` findings put in place."""
    lo, hi = leaks.in_rows(start, start + rows)
    if hi == lo:
        return findings
    own = ids.of(leaks.rows[lo:hi]) if ids is not None else None
    return sort_findings(pa.concat_tables([findings, leaks.findings(lo, hi, own)]))

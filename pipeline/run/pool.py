"""`workers=` for the in-memory API: `solve_batch(puzzles, workers=2)` and
`validate_puzzles(puzzles, workers=2)` split their puzzles into chunks and map them over worker
threads (the kernels, parsing and table building release the GIL), results in order.

    map_chunks(solve_record_batch, batch, workers=2, options)   # [table, table, ...] in order

Threads start in microseconds and share this process's compiled kernels, so nothing is kept
between calls and a script needs no `if __name__ == "__main__":` guard.
"""

import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from pipeline.run.executors import ThreadExecutor, check_workers

MIN_CHUNK_ROWS = 2_000  # a chunk of fewer rows is not worth a worker's start-up
MAX_CHUNK_ROWS = 50_000  # bounds the memory of the chunks in flight
CHUNKS_PER_WORKER = 4  # several chunks a worker: a slow chunk does not leave the others idle


def chunk_rows(rows: int, workers: int | None) -> int:
    """Rows per chunk for `rows` puzzles on `workers` threads (`rows` itself: one chunk)."""
    if workers is None or workers == 1:
        return max(rows, 1)
    share = math.ceil(rows / (workers * CHUNKS_PER_WORKER))
    return min(MAX_CHUNK_ROWS, max(MIN_CHUNK_ROWS, share))


def map_chunks(
    fn: Callable[..., Any], batch: pa.RecordBatch, workers: int | None, *args: Any
) -> list[Any]:
    """`fn(chunk, *args)` for consecutive chunks of `batch`, in order: one chunk in this
    thread when `workers` is None or 1 or the batch is small (under two chunks), else chunks on
    `workers` threads."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers must be None or at least 1, not {workers!r}")
    check_workers(workers)  # and not past what a run can start
    size = chunk_rows(batch.num_rows, workers)
    if batch.num_rows <= size:
        return [fn(batch, *args)]
    assert workers is not None
    chunks = (batch.slice(start, size) for start in range(0, batch.num_rows, size))
    executor = ThreadExecutor(workers)
    try:
        results = list(executor.map_ordered(fn, chunks, *args))
        executor.close()
        return results
    finally:
        executor.terminate()
